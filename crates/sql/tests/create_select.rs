//! CREATE TABLE ... SELECT as MariaDB 10.11 answered the same statements (utf8mb4 connection):
//! the columns it derives (SHOW CREATE TABLE), explicit definitions merged, the rows, IF NOT
//! EXISTS (note 1050, nothing inserted), all or nothing on an error, and the log: one group
//! with the generated CREATE TABLE before the rows.

mod common;
use common::{fail, log_records, ok, text_rows as rows, wire_rows, Db};
use onelog_binlog::{decode_group, GroupItem};
use onelog_sql::Session;

fn show(s: &mut Session, t: &str) -> String {
    rows(s, &format!("SHOW CREATE TABLE {t}"))[0][1].clone()
}

fn setup(tag: &str) -> (Db, Session) {
    let db = Db::open(tag);
    let mut s = Session::new(db.server.clone(), 1, "root", "localhost");
    for sql in [
        "CREATE DATABASE f",
        "USE f",
        "CREATE TABLE s (id INT PRIMARY KEY, name VARCHAR(20) NOT NULL DEFAULT 'q', \
         amt DECIMAL(10,2) DEFAULT 1.5, dt DATETIME, e ENUM('a','b') DEFAULT 'b')",
        "INSERT INTO s VALUES (1,'x',1.5,'2020-01-01 00:00:00','a'),(2,'y',NULL,NULL,NULL)",
    ] {
        ok(&mut s, sql);
    }
    (db, s)
}

#[test]
fn columns_are_derived_as_mariadb_derives_them() {
    let (_db, mut s) = setup("ctas-types");
    ok(&mut s, "CREATE TABLE c1 AS SELECT * FROM s");
    assert_eq!(
        show(&mut s, "c1"),
        "CREATE TABLE `c1` (\n  `id` int(11) NOT NULL,\n  `name` varchar(20) NOT NULL DEFAULT 'q',\n  \
         `amt` decimal(10,2) DEFAULT 1.50,\n  `dt` datetime DEFAULT NULL,\n  \
         `e` enum('a','b') DEFAULT 'b'\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 \
         COLLATE=utf8mb4_general_ci"
    );
    assert_eq!(
        rows(&mut s, "SELECT id, name, amt, e FROM c1 ORDER BY id"),
        vec![vec!["1", "x", "1.50", "a"], vec!["2", "y", "NULL", "NULL"]]
    );
    // Expressions onelog does not size as MariaDB does are refused unless a column
    // definition names their type (MariaDB: cn varchar(21), am2 decimal(11,2), sm
    // decimal(32,0)).
    let q = "SELECT concat(name,'q') AS cn, 1 AS one, 'abc' AS lit, '' AS emp, 1.5 AS dec1, \
             amt*2 AS am2, sum(id) AS sm, count(*) AS c, NULL AS n, 2.5e0 AS d, \
             max(name) AS mx, max(dt) AS mdt FROM s GROUP BY id";
    assert_eq!(fail(&mut s, &format!("CREATE TABLE c2 AS {q}")).code, 1235);
    let sql =
        format!("CREATE TABLE c2 (cn VARCHAR(21), am2 DECIMAL(11,2), sm DECIMAL(32,0)) AS {q}");
    match ok(&mut s, &sql) {
        onelog_sql::Output::Ok {
            affected_rows,
            info,
            ..
        } => assert_eq!(
            (affected_rows, info.as_str()),
            (2, "Records: 2  Duplicates: 0  Warnings: 0")
        ),
        o => panic!("{o:?}"),
    }
    // MariaDB: the same columns.
    assert_eq!(
        show(&mut s, "c2"),
        "CREATE TABLE `c2` (\n  `cn` varchar(21) DEFAULT NULL,\n  \
         `am2` decimal(11,2) DEFAULT NULL,\n  `sm` decimal(32,0) DEFAULT NULL,\n  \
         `one` int(1) NOT NULL,\n  `lit` varchar(3) NOT NULL,\n  `emp` char(0) NOT NULL,\n  \
         `dec1` decimal(2,1) NOT NULL,\n  `c` bigint(21) NOT NULL,\n  \
         `n` binary(0) DEFAULT NULL,\n  `d` double NOT NULL,\n  \
         `mx` varchar(20) DEFAULT NULL,\n  `mdt` datetime DEFAULT NULL\n) ENGINE=InnoDB \
         DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci"
    );
    assert_eq!(
        wire_rows(
            &mut s,
            "SELECT cn, one, lit, dec1, am2, sm, c, n, d, mx FROM c2 ORDER BY cn"
        ),
        vec![
            vec!["xq", "1", "abc", "1.5", "3.00", "1", "1", "NULL", "2.5", "x"],
            vec!["yq", "1", "abc", "1.5", "NULL", "2", "1", "NULL", "2.5", "y"]
        ]
    );
    // IGNORE skips a duplicate (warning 1062), REPLACE keeps the later row.
    ok(
        &mut s,
        "CREATE TABLE c9 (id INT PRIMARY KEY) IGNORE SELECT id FROM s UNION ALL SELECT 1",
    );
    assert_eq!(
        rows(&mut s, "SHOW WARNINGS"),
        vec![vec![
            "Warning",
            "1062",
            "Duplicate entry '1' for key 'PRIMARY'"
        ]]
    );
    assert_eq!(
        rows(&mut s, "SELECT id FROM c9"),
        vec![vec!["1"], vec!["2"]]
    );
    ok(
        &mut s,
        "CREATE TABLE c10 (id INT PRIMARY KEY, v INT) REPLACE SELECT 1 AS id, 1 AS v \
         UNION ALL SELECT 1, 2",
    );
    assert_eq!(rows(&mut s, "SELECT * FROM c10"), vec![vec!["1", "2"]]);
}

#[test]
fn explicit_columns_merge_and_errors_leave_nothing() {
    let (db, mut s) = setup("ctas-merge");
    ok(
        &mut s,
        "CREATE TABLE c3 (x INT PRIMARY KEY AUTO_INCREMENT, name VARCHAR(50)) \
         SELECT name FROM s ORDER BY id",
    );
    assert_eq!(
        show(&mut s, "c3"),
        "CREATE TABLE `c3` (\n  `x` int(11) NOT NULL AUTO_INCREMENT,\n  \
         `name` varchar(50) DEFAULT NULL,\n  PRIMARY KEY (`x`)\n) ENGINE=InnoDB \
         AUTO_INCREMENT=3 DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci"
    );
    assert_eq!(
        rows(&mut s, "SELECT * FROM c3"),
        vec![vec!["1", "x"], vec!["2", "y"]]
    );
    let records = log_records(&db.server).len();
    // A duplicate key: 1062, no table, nothing logged.
    let e = fail(
        &mut s,
        "CREATE TABLE c4 (id INT PRIMARY KEY) SELECT id FROM s UNION ALL SELECT 1",
    );
    assert_eq!(
        (e.code, e.message.as_str()),
        (1062, "Duplicate entry '1' for key 'PRIMARY'")
    );
    // A value the column refuses (strict mode): 1366 naming the row and the column as
    // MariaDB does (`db`.`table`.`column`).
    let e = fail(&mut s, "CREATE TABLE c5 (name INT) SELECT name FROM s");
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            1366,
            "Incorrect integer value: 'x' for column `f`.`c5`.`name` at row 1"
        )
    );
    assert_eq!(rows(&mut s, "SHOW TABLES"), vec![vec!["c3"], vec!["s"]]);
    assert_eq!(log_records(&db.server).len(), records);
    // IF NOT EXISTS on an existing table: note 1050, nothing inserted.
    ok(&mut s, "CREATE TABLE IF NOT EXISTS c3 SELECT 1 AS x");
    assert_eq!(
        rows(&mut s, "SHOW WARNINGS"),
        vec![vec!["Note", "1050", "Table 'c3' already exists"]]
    );
    assert_eq!(rows(&mut s, "SELECT COUNT(*) FROM c3"), vec![vec!["2"]]);
    assert_eq!(fail(&mut s, "CREATE TABLE c3 SELECT 1 AS x").code, 1050);
    // The group: GTID, Query (the generated CREATE TABLE), Table_map, Write_rows, Xid.
    ok(&mut s, "CREATE TABLE c6 SELECT id, name FROM s");
    let recs = log_records(&db.server);
    let last = recs.last().unwrap();
    let g = decode_group(&last.events).unwrap();
    let mut kinds = Vec::new();
    for item in g.statements {
        match item {
            GroupItem::Query(q) => kinds.push(q.query),
            GroupItem::Rows { table, event } => {
                kinds.push(format!("rows {} {:?}", table.table, event.rows))
            }
            _ => {}
        }
    }
    assert_eq!(kinds.len(), 2, "{kinds:?}");
    assert!(
        kinds[0].starts_with("CREATE TABLE `c6` (\n  `id` int(11) NOT NULL,\n  `name` varchar(20) NOT NULL DEFAULT 'q'\n)"),
        "{kinds:?}"
    );
    assert!(kinds[1].starts_with("rows c6 Write("), "{kinds:?}");
}

/// SUM and AVG of an integer or DECIMAL column are DECIMAL sized from the column's digits, as
/// MariaDB 10.11 showed for the same statements.
#[test]
fn sums_and_averages_of_columns_are_mariadbs_decimals() {
    let (_db, mut s) = setup("ctas-sums");
    ok(
        &mut s,
        "CREATE TABLE n (a TINYINT, b SMALLINT UNSIGNED, e MEDIUMINT, g INT, k BIGINT, \
         l BIGINT UNSIGNED, m DECIMAL(10,2) NOT NULL, n DECIMAL(60,0), f DOUBLE)",
    );
    ok(
        &mut s,
        "INSERT INTO n VALUES (1,2,3,4,5,6,7.25,8,9.5),(1,2,3,4,5,6,1.5,8,0.5)",
    );
    ok(
        &mut s,
        "CREATE TABLE c AS SELECT sum(a),sum(b),sum(e),sum(g),avg(k),sum(l),sum(m),avg(m),\
         sum(n),avg(n),sum(f) FROM n",
    );
    assert_eq!(
        show(&mut s, "c"),
        "CREATE TABLE `c` (\n  `sum(a)` decimal(25,0) DEFAULT NULL,\n  \
         `sum(b)` decimal(27,0) DEFAULT NULL,\n  `sum(e)` decimal(30,0) DEFAULT NULL,\n  \
         `sum(g)` decimal(32,0) DEFAULT NULL,\n  `avg(k)` decimal(23,4) DEFAULT NULL,\n  \
         `sum(l)` decimal(42,0) DEFAULT NULL,\n  `sum(m)` decimal(32,2) DEFAULT NULL,\n  \
         `avg(m)` decimal(14,6) DEFAULT NULL,\n  `sum(n)` decimal(65,0) DEFAULT NULL,\n  \
         `avg(n)` decimal(64,4) DEFAULT NULL,\n  `sum(f)` double DEFAULT NULL\n) \
         ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci"
    );
    assert_eq!(
        wire_rows(&mut s, "SELECT * FROM c"),
        vec![vec![
            "2", "4", "6", "8", "5.0000", "12", "8.75", "4.375000", "16", "8.0000", "10"
        ]]
    );
    ok(
        &mut s,
        "CREATE TABLE c2 AS SELECT avg(DISTINCT g) x, sum(g) y FROM n GROUP BY a",
    );
    assert_eq!(
        show(&mut s, "c2"),
        "CREATE TABLE `c2` (\n  `x` decimal(14,4) DEFAULT NULL,\n  \
         `y` decimal(32,0) DEFAULT NULL\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 \
         COLLATE=utf8mb4_general_ci"
    );
}

/// CONCAT, UPPER and LOWER of string and integer literals and columns are VARCHAR sized as
/// MariaDB 10.11 sized them for the same statements (nullable, the arguments' collation).
#[test]
fn concatenations_are_mariadbs_varchars() {
    let (_db, mut s) = setup("ctas-concat");
    ok(
        &mut s,
        "CREATE TABLE s3 (id INT PRIMARY KEY, s VARCHAR(20) NOT NULL, c CHAR(3), \
         b VARCHAR(5) COLLATE utf8mb4_bin NOT NULL, i INT NOT NULL, u INT UNSIGNED, \
         t TINYINT, w INT(3))",
    );
    ok(&mut s, "INSERT INTO s3 VALUES (1,'ab','c','Bx',5,6,-7,8)");
    ok(
        &mut s,
        "CREATE TABLE c4 AS SELECT concat('') a, concat(s, 'xy') b, concat(s, c) c, \
         concat(i, u, t) d, upper(b) e, concat(b, 'x') f, lower(concat(s,s)) g, concat(w) h, \
         upper('abc') m, concat(12, 'a') n FROM s3",
    );
    assert_eq!(
        show(&mut s, "c4"),
        "CREATE TABLE `c4` (\n  `a` char(0) DEFAULT NULL,\n  `b` varchar(22) DEFAULT NULL,\n  \
         `c` varchar(23) DEFAULT NULL,\n  `d` varchar(25) DEFAULT NULL,\n  \
         `e` varchar(5) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin DEFAULT NULL,\n  \
         `f` varchar(6) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin DEFAULT NULL,\n  \
         `g` varchar(40) DEFAULT NULL,\n  `h` varchar(11) DEFAULT NULL,\n  \
         `m` varchar(3) DEFAULT NULL,\n  `n` varchar(3) DEFAULT NULL\n) ENGINE=InnoDB \
         DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci"
    );
    assert_eq!(
        wire_rows(&mut s, "SELECT * FROM c4"),
        vec![vec![
            "", "abxy", "abc", "56-7", "BX", "Bxx", "abab", "8", "ABC", "12a"
        ]]
    );
}
