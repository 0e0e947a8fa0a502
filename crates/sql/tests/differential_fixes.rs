//! Differences the differential query test (`crates/onelog/tests/differential_queries.rs`,
//! random schemas, data and statements against a real MariaDB 10.11) found, each pinned here
//! with the answers MariaDB 10.11 gave to the same statements.

mod common;
use common::{done, err, ok, session_in, text_rows as rows, Db};
use onelog_sql::Session;

#[test]
fn infix_mod_is_the_modulo_operator() {
    let db = Db::open("fix-mod");
    let mut s = session_in(&db, "d");
    assert_eq!(
        rows(
            &mut s,
            "SELECT 7 MOD 3, -7 mod 3, 7.5 MOD 2, 1 + 5 MOD 3 * 2, MOD(7, 3)"
        ),
        vec![vec!["1", "-1", "1.5", "5", "1"]]
    );
}

/// XOR takes the truth of its operands as AND / OR / NOT do (any non-zero value is true; a
/// string is read as a number, with 1292 `Truncated incorrect DOUBLE value` when it is not
/// one). MariaDB 10.11.14 read them as integers (a fraction rounded first, so `-0.25 XOR -120`
/// was 1 and `0.001 XOR 0` was 0), and this test pinned that; 10.11.19, Debian 12's
/// `mariadb-server` since, answers as below, and the expression test (`differential.rs`,
/// against the installed MariaDB) found the change. Every value below is 10.11.19's.
#[test]
fn xor_takes_the_truth_of_its_operands() {
    let db = Db::open("fix-xor");
    let mut s = session_in(&db, "d");
    assert_eq!(
        rows(
            &mut s,
            "SELECT 0.4 XOR 0, 0.5 XOR 0, -0.25 XOR 1, 0.001 XOR 0, 0.4e0 XOR 0, 0.6e0 XOR 0, \
             '0.4' XOR 0, '0.6' XOR 0, 0.4 AND 1, 0.4 OR 0, NOT 0.4, 1.5 XOR 1, -0.5 XOR 0, \
             -0.25 XOR (-TRUNCATE(127, -1)), NULL XOR 0.6, 'x1' XOR 0"
        ),
        vec![vec![
            "1", "1", "0", "1", "1", "1", "1", "1", "1", "1", "0", "0", "1", "0", "NULL", "0"
        ]]
    );
    let warnings = rows(&mut s, "SHOW WARNINGS");
    assert_eq!(
        warnings,
        vec![vec![
            "Warning",
            "1292",
            "Truncated incorrect DOUBLE value: 'x1'"
        ]]
    );
}

/// `Duplicates:` counts the rows ON DUPLICATE KEY UPDATE changed and the rows REPLACE
/// deleted (it said 0); an identical REPLACE on a table whose only unique key is the primary
/// key (and that no foreign key references) is one affected row: MariaDB updates in place.
#[test]
fn upsert_and_replace_count_duplicates_and_affected_rows_as_mariadb() {
    let db = Db::open("fix-dups");
    let mut s = session_in(&db, "d");
    ok(
        &mut s,
        "CREATE TABLE r (id INT PRIMARY KEY, u INT, v INT, UNIQUE KEY (u))",
    );
    ok(&mut s, "INSERT INTO r VALUES (1,1,1),(2,2,2),(3,3,3)");
    let cases: &[(&str, u64, &str)] = &[
        (
            "REPLACE INTO r VALUES (1,1,1),(4,2,9),(5,5,5)",
            5,
            "Records: 3  Duplicates: 2  Warnings: 0",
        ),
        ("REPLACE INTO r VALUES (3,3,3)", 2, ""),
        (
            "INSERT INTO r VALUES (6,6,6),(7,7,7) ON DUPLICATE KEY UPDATE v = v",
            2,
            "Records: 2  Duplicates: 0  Warnings: 0",
        ),
        (
            "INSERT INTO r VALUES (6,6,6),(3,0,0),(1,0,0) ON DUPLICATE KEY UPDATE v = v + 1",
            6,
            "Records: 3  Duplicates: 3  Warnings: 0",
        ),
        (
            "INSERT INTO r VALUES (6,6,6),(7,7,7) ON DUPLICATE KEY UPDATE v = 7",
            0,
            "Records: 2  Duplicates: 0  Warnings: 0",
        ),
        (
            "INSERT INTO r VALUES (6,6,6),(8,8,8) ON DUPLICATE KEY UPDATE v = 1",
            3,
            "Records: 2  Duplicates: 1  Warnings: 0",
        ),
    ];
    for (sql, affected, info) in cases {
        assert_eq!(done(&mut s, sql), (*affected, info.to_string()), "{sql}");
    }
    ok(
        &mut s,
        "CREATE TABLE r2 (id INT PRIMARY KEY, v INT, KEY (v))",
    );
    ok(&mut s, "INSERT INTO r2 VALUES (1,1),(2,2)");
    let cases: &[(&str, u64, &str)] = &[
        ("REPLACE INTO r2 VALUES (1,1)", 1, ""),
        ("REPLACE INTO r2 VALUES (2,3)", 2, ""),
        (
            "REPLACE INTO r2 VALUES (1,1),(2,5),(3,3)",
            4,
            "Records: 3  Duplicates: 1  Warnings: 0",
        ),
    ];
    for (sql, affected, info) in cases {
        assert_eq!(done(&mut s, sql), (*affected, info.to_string()), "{sql}");
    }
    assert_eq!(
        rows(&mut s, "SELECT * FROM r2 ORDER BY id"),
        vec![vec!["1", "1"], vec!["2", "5"], vec!["3", "3"]]
    );
    // Referenced by a foreign key: delete and insert, two rows.
    ok(
        &mut s,
        "CREATE TABLE c2 (id INT PRIMARY KEY, p INT, FOREIGN KEY (p) REFERENCES r2 (id))",
    );
    assert_eq!(
        done(&mut s, "REPLACE INTO r2 VALUES (3,3)"),
        (2, String::new())
    );
}

/// A row that repeats a key is a duplicate (1062, or its warning under IGNORE) before its
/// foreign keys are checked, as InnoDB checks them after the unique keys; REPLACE and ON
/// DUPLICATE KEY UPDATE then check the row they write (1452).
#[test]
fn a_duplicate_key_is_found_before_the_foreign_key_check() {
    let db = Db::open("fix-dup-fk");
    let mut s = session_in(&db, "d");
    ok(&mut s, "CREATE TABLE p (id INT PRIMARY KEY)");
    ok(&mut s, "INSERT INTO p VALUES (1)");
    ok(
        &mut s,
        "CREATE TABLE c (id INT PRIMARY KEY, p INT, u INT, UNIQUE KEY (u), \
         FOREIGN KEY (p) REFERENCES p (id))",
    );
    ok(&mut s, "INSERT INTO c VALUES (1,1,1)");
    assert_eq!(err(&mut s, "INSERT INTO c VALUES (1, 9, 5)"), 1062);
    assert_eq!(err(&mut s, "INSERT INTO c VALUES (2, 9, 1)"), 1062);
    assert_eq!(done(&mut s, "INSERT IGNORE INTO c VALUES (1, 9, 7)").0, 0);
    assert_eq!(
        rows(&mut s, "SHOW WARNINGS"),
        vec![vec![
            "Warning",
            "1062",
            "Duplicate entry '1' for key 'PRIMARY'"
        ]]
    );
    assert_eq!(
        done(
            &mut s,
            "INSERT INTO c VALUES (1, 9, 2) ON DUPLICATE KEY UPDATE u = 3"
        ),
        (2, String::new())
    );
    assert_eq!(rows(&mut s, "SELECT * FROM c"), vec![vec!["1", "1", "3"]]);
    assert_eq!(err(&mut s, "REPLACE INTO c VALUES (1, 9, 3)"), 1452);
    assert_eq!(
        err(
            &mut s,
            "INSERT INTO c VALUES (1, 9, 2) ON DUPLICATE KEY UPDATE p = 9"
        ),
        1452
    );
    assert_eq!(err(&mut s, "INSERT INTO c VALUES (2, 9, 2)"), 1452);
    assert_eq!(rows(&mut s, "SELECT * FROM c"), vec![vec!["1", "1", "3"]]);
}

/// A subquery's reference to an enclosing query's column keeps the column's collation
/// (IMPLICIT): it used to compare under the inner column's, as a literal would.
#[test]
fn an_outer_column_keeps_its_collation_inside_a_subquery() {
    let db = Db::open("fix-outer-coll");
    let mut s = session_in(&db, "d");
    ok(
        &mut s,
        "CREATE TABLE a1 (id INT PRIMARY KEY, c VARCHAR(5) COLLATE utf8mb4_bin)",
    );
    ok(&mut s, "CREATE TABLE a3 (id INT PRIMARY KEY, c VARCHAR(5))");
    ok(
        &mut s,
        "CREATE TABLE b1 (id INT PRIMARY KEY, c VARCHAR(5) COLLATE utf8mb4_unicode_ci)",
    );
    ok(&mut s, "INSERT INTO a1 VALUES (1,'b'),(2,'B'),(3,'a')");
    ok(&mut s, "INSERT INTO a3 VALUES (1,'b')");
    ok(&mut s, "INSERT INTO b1 VALUES (1,'b')");
    assert_eq!(
        rows(
            &mut s,
            "SELECT a1.id FROM a1 WHERE EXISTS (SELECT 1 FROM a3 s WHERE s.c = a1.c)"
        ),
        vec![vec!["1"]]
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT COUNT(*) FROM a1 WHERE (SELECT COUNT(*) FROM a3 WHERE a3.c = a1.c) > 0"
        ),
        vec![vec!["1"]]
    );
    assert_eq!(
        err(
            &mut s,
            "SELECT COUNT(*) FROM b1 WHERE EXISTS (SELECT 1 FROM a3 WHERE a3.c = b1.c)"
        ),
        1267
    );
}

/// A subquery may name an ENUM column of the enclosing query (it was 1054: the column's text
/// reading was not taken for a column).
#[test]
fn a_subquery_reads_an_outer_enum_column() {
    let db = Db::open("fix-outer-enum");
    let mut s = session_in(&db, "d");
    ok(
        &mut s,
        "CREATE TABLE e (id INT PRIMARY KEY, e ENUM('a','b','c')) DEFAULT CHARSET=utf8mb4",
    );
    ok(&mut s, "INSERT INTO e VALUES (1,'a'),(2,'b'),(3,'a')");
    assert_eq!(
        rows(
            &mut s,
            "SELECT id FROM e WHERE EXISTS (SELECT 1 FROM e AS s WHERE s.e = e.e AND \
             s.id <> e.id) ORDER BY id"
        ),
        vec![vec!["1"], vec!["3"]]
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT id, (SELECT COUNT(*) FROM e s WHERE s.e = e.e) FROM e ORDER BY id"
        ),
        vec![vec!["1", "2"], vec!["2", "1"], vec!["3", "2"]]
    );
}

/// A derived table's or CTE's text expression column keeps the collation it derives
/// (`SUBSTRING(bin_col, 1, 1)` groups `'a'` and `'A'` apart); it was utf8mb4_general_ci.
#[test]
fn a_derived_expression_column_keeps_its_collation() {
    let db = Db::open("fix-derived-coll");
    let mut s = session_in(&db, "d");
    ok(
        &mut s,
        "CREATE TABLE a1 (id INT PRIMARY KEY, c VARCHAR(5) COLLATE utf8mb4_bin)",
    );
    ok(&mut s, "INSERT INTO a1 VALUES (1,'b'),(2,'B'),(3,'a')");
    assert_eq!(
        rows(
            &mut s,
            "WITH d AS (SELECT SUBSTRING(c, 1, 1) AS x FROM a1) SELECT x, COUNT(*) FROM d \
             GROUP BY x ORDER BY x"
        ),
        vec![vec!["B", "1"], vec!["a", "1"], vec!["b", "1"]]
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT COUNT(*) FROM (SELECT UPPER(c) AS x FROM a1) d WHERE x = 'b'"
        ),
        vec![vec!["0"]]
    );
}

/// A UNION / INTERSECT / EXCEPT column unified from a `utf8mb4_bin` column and another
/// utf8mb4 collation (a column or a literal) is `utf8mb4_bin`, so `'b'` and `'B'` stay two
/// rows (they were merged under utf8mb4_general_ci).
#[test]
fn a_set_operation_over_a_bin_column_keeps_case_distinct_rows() {
    let db = Db::open("fix-setop-coll");
    let mut s = session_in(&db, "d");
    ok(
        &mut s,
        "CREATE TABLE a1 (id INT PRIMARY KEY, c VARCHAR(5) COLLATE utf8mb4_bin)",
    );
    ok(&mut s, "CREATE TABLE a2 (id INT PRIMARY KEY, c VARCHAR(5))");
    ok(&mut s, "INSERT INTO a1 VALUES (1,'b'),(2,'B'),(3,'a')");
    ok(&mut s, "INSERT INTO a2 VALUES (1,'b'),(2,'x')");
    let sorted = |mut v: Vec<Vec<String>>| {
        v.sort();
        v
    };
    assert_eq!(
        sorted(rows(&mut s, "SELECT c FROM a1 EXCEPT SELECT 'A' FROM a2")),
        vec![vec!["B"], vec!["a"], vec!["b"]]
    );
    assert_eq!(
        sorted(rows(&mut s, "SELECT c FROM a1 UNION SELECT c FROM a2")),
        vec![vec!["B"], vec!["a"], vec!["b"], vec!["x"]]
    );
    assert_eq!(
        rows(&mut s, "SELECT c FROM a2 INTERSECT SELECT c FROM a1"),
        vec![vec!["b"]]
    );
    // Two utf8mb4_bin columns of different types stay utf8mb4_bin.
    ok(
        &mut s,
        "CREATE TABLE a4 (id INT PRIMARY KEY, c VARCHAR(3) COLLATE utf8mb4_bin)",
    );
    assert_eq!(
        sorted(rows(
            &mut s,
            "SELECT SUBSTRING(c, 1, 1) FROM a1 EXCEPT SELECT c FROM a4"
        )),
        vec![vec!["B"], vec!["a"], vec!["b"]]
    );
}

/// A value with a time of day stored into a DATE column (INSERT, UPDATE, multi-table UPDATE)
/// loses it with note 1265, as MariaDB; midnight is no loss.
#[test]
fn a_time_of_day_stored_into_a_date_column_is_noted() {
    let db = Db::open("fix-date-note");
    let mut s = session_in(&db, "d");
    ok(&mut s, "CREATE TABLE d1 (id INT PRIMARY KEY, d DATE)");
    ok(&mut s, "INSERT INTO d1 VALUES (1, '2024-01-01 00:00:00')");
    assert!(rows(&mut s, "SHOW WARNINGS").is_empty());
    ok(&mut s, "INSERT INTO d1 VALUES (2, '2024-01-01 10:30:00')");
    let note = |row: &str| {
        vec![
            "Note",
            "1265",
            &format!("Data truncated for column 'd' at row {row}"),
        ]
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>()
    };
    assert_eq!(rows(&mut s, "SHOW WARNINGS"), vec![note("1")]);
    ok(&mut s, "UPDATE d1 SET d = '2024-01-05 00:00:01'");
    assert_eq!(rows(&mut s, "SHOW WARNINGS"), vec![note("1"), note("2")]);
    ok(
        &mut s,
        "UPDATE d1 a JOIN d1 b ON a.id = b.id SET a.d = TIMESTAMP'2024-01-02 10:30:00'",
    );
    assert_eq!(rows(&mut s, "SHOW WARNINGS"), vec![note("1"), note("2")]);
    assert_eq!(
        rows(&mut s, "SELECT id, CAST(d AS CHAR) FROM d1"),
        vec![vec!["1", "2024-01-02"], vec!["2", "2024-01-02"]]
    );
}

/// UPDATE checks a row's foreign keys after its unique keys, as InnoDB: a duplicate key is
/// 1062 before a missing parent is 1452 (onelog said 1452).
#[test]
fn an_update_finds_a_duplicate_key_before_a_missing_parent() {
    let db = Db::open("fix-upd-dup-fk");
    let mut s = session_in(&db, "d");
    ok(&mut s, "CREATE TABLE up (id INT PRIMARY KEY)");
    ok(&mut s, "INSERT INTO up VALUES (1)");
    ok(
        &mut s,
        "CREATE TABLE uc (id INT PRIMARY KEY, p INT, u INT, UNIQUE KEY (u), \
         FOREIGN KEY (p) REFERENCES up (id))",
    );
    ok(&mut s, "INSERT INTO uc VALUES (1,1,1),(2,1,2)");
    for (sql, code) in [
        ("UPDATE uc SET p = 9, id = id + 1 WHERE id = 1", 1062),
        ("UPDATE uc SET p = 9, u = 2 WHERE id = 1", 1062),
        ("UPDATE uc SET p = 9 WHERE id = 1", 1452),
        ("UPDATE uc SET p = 9, id = id + 5 WHERE id = 1", 1452),
    ] {
        assert_eq!(err(&mut s, sql), code, "{sql}");
    }
    assert_eq!(
        rows(&mut s, "SELECT * FROM uc ORDER BY id"),
        vec![vec!["1", "1", "1"], vec!["2", "1", "2"]]
    );
}

/// Seeds 214, 339, 377, 379, 407, 410 and 422 of a 300-seed run: a DATE and a DATETIME in one
/// set-operation column, and an ENUM's collation in a mix (MariaDB 10.11.19's answers).
#[test]
fn dates_in_a_datetime_union_column_and_enum_collations() {
    let db = Db::open("fix-enum-coll");
    let mut s = session_in(&db, "d");
    ok(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, d DATE, dt DATETIME, \
         a VARCHAR(5) COLLATE utf8mb4_general_ci, b VARCHAR(5) COLLATE utf8mb4_unicode_ci, \
         e ENUM('x','y'), eb ENUM('x','y') COLLATE utf8mb4_bin)",
    );
    ok(
        &mut s,
        "INSERT INTO t VALUES (1,'2024-01-01','2024-02-29 10:00:00','a','b','x','y')",
    );
    assert_eq!(
        common::wire_rows(&mut s, "SELECT d FROM t UNION ALL SELECT dt FROM t"),
        [["2024-01-01 00:00:00"], ["2024-02-29 10:00:00"]]
    );
    // A failed mix (NONE) is refused where values are compared: MIN/MAX too.
    for (sql, op) in [
        ("SELECT MAX(CONCAT(a, b)) FROM t", "max("),
        ("SELECT MIN(CONCAT(a, b)) FROM t", "min("),
    ] {
        let e = common::fail(&mut s, sql);
        assert_eq!(
            (e.code, e.message.as_str()),
            (
                1267,
                format!(
                    "Illegal mix of collations (utf8mb4_bin,NONE) and (utf8mb4_bin,NONE) for \
                     operation '{op}'"
                )
                .as_str()
            ),
            "{sql}"
        );
    }
    // An ENUM's text has its column's collation, IMPLICIT.
    let e = common::fail(&mut s, "SELECT b = e FROM t");
    assert_eq!(
        e.message,
        "Illegal mix of collations (utf8mb4_unicode_ci,IMPLICIT) and \
         (utf8mb4_general_ci,IMPLICIT) for operation '='"
    );
    assert_eq!(err(&mut s, "SELECT CONCAT(b, e) = 'bx' FROM t"), 1267);
    assert_eq!(
        rows(
            &mut s,
            "SELECT a = e, e = 'X', eb = 'Y', eb = 'y', b = eb FROM t"
        ),
        [["0", "1", "0", "1", "0"]]
    );
    let show = rows(&mut s, "SHOW CREATE TABLE t")[0][1].clone();
    assert!(
        show.contains("`eb` enum('x','y') CHARACTER SET utf8mb4 COLLATE utf8mb4_bin DEFAULT NULL"),
        "{show}"
    );
    assert!(show.contains("`e` enum('x','y') DEFAULT NULL"), "{show}");
}

/// Seeds 328 and 400 of a 400-seed run: a value rounded to a DECIMAL column's scale is noted
/// (1265) as MariaDB 10.11.19 notes it, in every sql_mode; an exact one is not.
#[test]
fn a_decimal_rounded_to_its_column_is_noted() {
    let db = Db::open("fix-dec-note");
    let mut s = session_in(&db, "d");
    ok(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, i INT, d DECIMAL(8,2))",
    );
    let notes = |s: &mut Session| -> Vec<String> {
        rows(s, "SHOW WARNINGS")
            .into_iter()
            .map(|r| r.join(" "))
            .collect()
    };
    let note = |row: u64| format!("Note 1265 Data truncated for column 'd' at row {row}");
    // (value, noted) as MariaDB answered each INSERT.
    for (id, value, noted) in [
        (3, "1.255e0", true),
        (4, "'1.255'", true),
        (5, "0.1e0", false),
        (6, "'01.50'", false),
        (7, "1.2500", false),
        (8, "-0.001", true),
        (9, "'1e-3'", true),
        (10, "1.25e0", false),
        (11, "7", false),
    ] {
        ok(
            &mut s,
            &format!("INSERT INTO t VALUES ({id}, 2.5, {value})"),
        );
        let want: Vec<String> = if noted { vec![note(1)] } else { Vec::new() };
        assert_eq!(notes(&mut s), want, "{value}");
    }
    ok(&mut s, "UPDATE t SET d = 3.333 WHERE id IN (3, 4)");
    assert_eq!(notes(&mut s), [note(1), note(2)]);
    ok(
        &mut s,
        "INSERT INTO t VALUES (12, 1, 1.255), (13, 1, 2.255)",
    );
    assert_eq!(notes(&mut s), [note(1), note(2)]);
    assert_eq!(
        rows(
            &mut s,
            "SELECT d FROM t WHERE id IN (3, 5, 8, 9, 12, 13) ORDER BY id"
        ),
        [["3.33"], ["0.10"], ["0.00"], ["0.00"], ["1.26"], ["2.26"]]
    );
    // An INT column rounds 2.5 to 3 without a note, as MariaDB.
    assert_eq!(rows(&mut s, "SELECT i FROM t WHERE id = 3"), [["3"]]);
}

/// A row compared with a one-column subquery names the subquery's type in 4078 as MariaDB
/// 10.11.19 does, YEAR included (the subquery's side named it `varchar`).
#[test]
fn a_row_against_a_year_subquery_names_year() {
    let db = Db::open("fix-4078-year");
    let mut s = session_in(&db, "d");
    ok(&mut s, "CREATE TABLE t (id INT PRIMARY KEY, y YEAR)");
    ok(&mut s, "INSERT INTO t VALUES (1, 2024)");
    for (sql, want) in [
        (
            "SELECT (1,2) = (SELECT y FROM t)",
            "Illegal parameter data types row and year for operation '='",
        ),
        (
            "SELECT (SELECT y FROM t) = (1,2)",
            "Illegal parameter data types year and row for operation '='",
        ),
    ] {
        let e = common::fail(&mut s, sql);
        assert_eq!((e.code, e.message.as_str()), (4078, want), "{sql}");
    }
}
