//! `_rowid` as MariaDB 10.11 answered the same statements: it names a table's primary key
//! when that is one integer column (for a table without PRIMARY KEY, its first UNIQUE key over
//! one NOT NULL integer column), in SELECT, WHERE, GROUP BY, joins, UPDATE and DELETE; a real
//! column called `_rowid` wins; other tables have no `_rowid` (1054).

mod common;
use common::Case;

const SETUP: &[&str] = &[
    "CREATE TABLE r1 (id INT PRIMARY KEY, v INT)",
    "CREATE TABLE r2 (a INT NOT NULL, b INT, UNIQUE KEY (a))",
    "CREATE TABLE r3 (a VARCHAR(5) PRIMARY KEY)",
    "CREATE TABLE r4 (a INT, b INT, PRIMARY KEY (a, b))",
    "CREATE TABLE r5 (a INT NOT NULL, b BIGINT NOT NULL, UNIQUE (b), UNIQUE (a))",
    "CREATE TABLE r6 (x INT, a INT NOT NULL, UNIQUE (a))",
    "CREATE TABLE r7 (_rowid INT, id INT PRIMARY KEY)",
    "INSERT INTO r1 VALUES (1,10),(2,20)",
    "INSERT INTO r2 VALUES (5,1),(6,2)",
    "INSERT INTO r5 VALUES (1,2)",
    "INSERT INTO r6 VALUES (9,3)",
    "INSERT INTO r7 VALUES (100, 1)",
];

/// What MariaDB 10.11.19 answered (`mariadb -B -N`), statement by statement.
const CASES: &[Case] = &[
    ("SELECT _rowid, id FROM r1 WHERE _rowid = 2", Ok("2	2")),
    ("SELECT _rowid FROM r2 ORDER BY 1", Ok("5\n6")),
    ("SELECT * FROM r2 WHERE _rowid = 5", Ok("5	1")),
    ("SELECT _rowid, a FROM r5", Ok("2	1")),
    ("SELECT _rowid FROM r6", Ok("3")),
    ("SELECT r1._rowid FROM r1 ORDER BY 1", Ok("1\n2")),
    (
        "SELECT _ROWID FROM r1 ORDER BY _rowid DESC LIMIT 1",
        Ok("2"),
    ),
    ("UPDATE r1 SET v = 11 WHERE _rowid = 1", Ok("")),
    ("SELECT * FROM r1 ORDER BY id", Ok("1	11\n2	20")),
    ("DELETE FROM r2 WHERE _rowid = 6", Ok("")),
    ("SELECT * FROM r2", Ok("5	1")),
    (
        "SELECT _rowid + 1, COUNT(*) FROM r1 GROUP BY _rowid",
        Ok("2	1\n3	1"),
    ),
    (
        "SELECT _rowid FROM r3",
        Err((1054, "Unknown column '_rowid' in 'SELECT'")),
    ),
    (
        "SELECT _rowid FROM r4",
        Err((1054, "Unknown column '_rowid' in 'SELECT'")),
    ),
    ("SELECT _rowid FROM r7", Ok("100")),
    (
        "SELECT x._rowid FROM r1 x JOIN r2 y ON x._rowid = y.a - 4",
        Ok("1"),
    ),
];

#[test]
fn rowid_names_the_integer_primary_key_as_in_mariadb() {
    common::check_cases("rowid", "rw", SETUP, CASES);
}

/// `_rowid` is read only here: as an INSERT column or an UPDATE target it is refused (1054),
/// where MariaDB writes the key column (docs/SQL.md).
#[test]
fn rowid_is_not_written() {
    let db = common::Db::open("rowid-write");
    let mut s = common::session_in(&db, "rw");
    common::ok(&mut s, "CREATE TABLE r1 (id INT PRIMARY KEY, v INT)");
    assert_eq!(
        common::err(&mut s, "INSERT INTO r1 (_rowid, v) VALUES (7, 70)"),
        1054
    );
    common::ok(&mut s, "INSERT INTO r1 VALUES (7, 70)");
    assert_eq!(
        common::err(&mut s, "UPDATE r1 SET _rowid = 8 WHERE id = 7"),
        1054
    );
    assert_eq!(
        common::text_rows(&mut s, "SELECT _rowid, v FROM r1"),
        vec![vec!["7".to_string(), "70".to_string()]]
    );
}
