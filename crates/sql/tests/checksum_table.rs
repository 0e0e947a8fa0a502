//! CHECKSUM TABLE (issue 16 part 5) gives the values MariaDB 10.11.14 gave for the same tables
//! and rows (each CREATE and INSERT below was run on MariaDB with `time_zone='+00:00'`, the
//! value printed there is the one asserted), the QUICK form's NULL, and MariaDB's answers for a
//! missing table, a view, no database and a bad option list. The comparison with a running
//! MariaDB over every column type is in crates/onelog/tests/dump_restore.rs.

mod common;
use common::{err, ok, session_in, text_rows as rows, Db};

#[test]
fn checksums_equal_mariadbs_for_every_column_type() {
    let db = Db::open("checksum-types");
    let mut s = session_in(&db, "ty");
    ok(&mut s, "SET time_zone = '+00:00'");
    for sql in [
        // No null bit: the reserved bit alone (an unpacked table).
        "CREATE TABLE t1 (a INT NOT NULL)",
        "INSERT INTO t1 VALUES (1),(2)",
        "CREATE TABLE t2 (a INT)",
        "INSERT INTO t2 VALUES (1),(NULL)",
        // A VARCHAR packs the table: no reserved bit.
        "CREATE TABLE t3 (a INT NOT NULL, v VARCHAR(10))",
        "INSERT INTO t3 VALUES (1,'ab'),(2,NULL)",
        // CHAR(3) utf8mb4: 12 bytes, space-padded.
        "CREATE TABLE t4 (a INT NOT NULL, c CHAR(3))",
        "INSERT INTO t4 VALUES (1,'ab')",
        "CREATE TABLE b2 (a BIT(10) NOT NULL, b INT)",
        "INSERT INTO b2 VALUES (b'1000000001', 7)",
        "CREATE TABLE p5 (a INT NOT NULL, b JSON)",
        "INSERT INTO p5 VALUES (1,'[1]')",
        "CREATE TABLE a_dec (v DECIMAL(30,10))",
        "INSERT INTO a_dec VALUES (12345678901234567890.0123456789),(-0.5),(NULL)",
        "CREATE TABLE a_flt (v FLOAT, w DOUBLE NOT NULL)",
        "INSERT INTO a_flt VALUES (3.14159, -2.718281828459045),(NULL, 1e-300)",
        "CREATE TABLE a_dt (v DATE, w TIME(6), x DATETIME(3), y TIMESTAMP(6) NULL, z YEAR)",
        "INSERT INTO a_dt VALUES ('2024-02-29','-838:59:59.000000','9999-12-31 23:59:59.999',\
         '1970-01-01 00:00:01.000001',2155),('1000-01-01','12:34:56.123456','2000-01-01 00:00:00',NULL,0)",
        "CREATE TABLE a_es (e ENUM('a','b','c'), s SET('x','y','z'), j JSON)",
        "INSERT INTO a_es VALUES ('c','x,z','{\"k\": 1}'),('a','',NULL)",
        "CREATE TABLE a_str (c CHAR(10) NOT NULL, b BINARY(4), t TEXT, u BIGINT UNSIGNED)",
        "INSERT INTO a_str VALUES ('héllo 😀','ab','text',18446744073709551615),('',NULL,'',0)",
        // Nine nullable columns: two null bytes, the second's unused bits set.
        "CREATE TABLE a_many (c1 INT, c2 INT, c3 INT, c4 INT, c5 INT, c6 INT, c7 INT, c8 INT, c9 INT)",
        "INSERT INTO a_many VALUES (1,NULL,3,NULL,5,NULL,7,NULL,9),\
         (NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL,NULL)",
        "CREATE TABLE a_tm0 (t TIME, d DATETIME, s TIMESTAMP NULL)",
        "INSERT INTO a_tm0 VALUES ('-01:02:03','2024-12-31 23:59:59','2038-01-19 03:14:07')",
        "CREATE TABLE empty_t (a INT)",
    ] {
        ok(&mut s, sql);
    }
    assert_eq!(
        rows(
            &mut s,
            "CHECKSUM TABLE t1, t2, t3, t4, b2, p5, a_dec, a_flt, a_dt, a_es, a_str, a_many, \
             a_tm0, empty_t"
        ),
        [
            ["ty.t1", "1531596814"],
            ["ty.t2", "3443131540"],
            ["ty.t3", "1669009383"],
            ["ty.t4", "466736132"],
            ["ty.b2", "1975137381"],
            ["ty.p5", "2597992719"],
            ["ty.a_dec", "3625956899"],
            ["ty.a_flt", "1184726157"],
            ["ty.a_dt", "829449724"],
            ["ty.a_es", "549723640"],
            ["ty.a_str", "327379701"],
            ["ty.a_many", "2440493220"],
            ["ty.a_tm0", "3002983264"],
            ["ty.empty_t", "0"],
        ]
    );
    // EXTENDED is the default computation; QUICK asks for InnoDB's live checksum: NULL.
    assert_eq!(
        rows(&mut s, "CHECKSUM TABLES t1 EXTENDED"),
        [["ty.t1", "1531596814"]]
    );
    assert_eq!(
        rows(&mut s, "checksum table ty.t1 quick"),
        [["ty.t1", "NULL"]]
    );
    // Own uncommitted changes count, as InnoDB reads them in the transaction.
    ok(&mut s, "BEGIN");
    ok(&mut s, "DELETE FROM t1 WHERE a = 2");
    assert_eq!(rows(&mut s, "CHECKSUM TABLE t1"), [["ty.t1", "3036305396"]]);
    ok(&mut s, "ROLLBACK");
    assert_eq!(rows(&mut s, "CHECKSUM TABLE t1"), [["ty.t1", "1531596814"]]);
}

#[test]
fn missing_tables_views_and_bad_forms_answer_as_mariadb() {
    let db = Db::open("checksum-errors");
    let mut s = session_in(&db, "ck");
    ok(&mut s, "CREATE TABLE t1 (a INT NOT NULL)");
    ok(&mut s, "INSERT INTO t1 VALUES (1),(2)");
    ok(&mut s, "CREATE VIEW v1 AS SELECT * FROM t1");
    // A missing table or a view: its row with NULL and an Error note, the others computed.
    assert_eq!(
        rows(&mut s, "CHECKSUM TABLE ck.t1, ck.nosuch, v1"),
        [
            ["ck.t1", "1531596814"],
            ["ck.nosuch", "NULL"],
            ["ck.v1", "NULL"]
        ]
    );
    assert_eq!(
        rows(&mut s, "SHOW WARNINGS"),
        [
            ["Error", "1146", "Table 'ck.nosuch' doesn't exist"],
            ["Error", "1347", "'ck.v1' is not of type 'BASE TABLE'"]
        ]
    );
    // MariaDB's grammar: one option word at most, at least one table.
    assert_eq!(err(&mut s, "CHECKSUM TABLE t1 QUICK EXTENDED"), 1064);
    assert_eq!(err(&mut s, "CHECKSUM TABLE"), 1064);
    assert_eq!(err(&mut s, "CHECKSUM t1"), 1064);
    // No database selected and an unqualified name: 1046 for the statement.
    let mut none = onelog_sql::Session::new(db.server.clone(), 2, "root", "localhost");
    assert_eq!(err(&mut none, "CHECKSUM TABLE t1"), 1046);
}
