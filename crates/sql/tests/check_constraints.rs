//! CHECK constraints as MariaDB 10.11 answered the same statements: names (`CONSTRAINT_<n>`
//! for unnamed table constraints, `t.col` for a column's), SHOW CREATE TABLE's text, 4025 on
//! INSERT / UPDATE / ON DUPLICATE KEY UPDATE with its exact text, NULL passing, INSERT IGNORE
//! turning the error into a warning, 1054 for an unknown column.

mod common;
use common::{err, fail, ok, text_rows as rows, Db};
use onelog_sql::Session;

const TABLE: &str = "CREATE TABLE t (id INT PRIMARY KEY, a INT, b INT CHECK (b <> 3), \
                     c VARCHAR(10), CHECK (a > 0), CONSTRAINT chk CHECK (a < 100), \
                     CHECK (c <> 'x' OR a = 1))";

#[test]
fn checks_are_shown_and_enforced_as_mariadb() {
    let db = Db::open("checks");
    let mut s = Session::new(db.server.clone(), 1, "root", "localhost");
    ok(&mut s, "CREATE DATABASE d6");
    ok(&mut s, "USE d6");
    ok(&mut s, TABLE);
    let show = rows(&mut s, "SHOW CREATE TABLE t")[0][1].clone();
    let body = show.split("\n) ENGINE").next().unwrap_or("");
    assert_eq!(
        body,
        "CREATE TABLE `t` (\n  `id` int(11) NOT NULL,\n  `a` int(11) DEFAULT NULL,\n  `b` \
         int(11) DEFAULT NULL CHECK (`b` <> 3),\n  `c` varchar(10) DEFAULT NULL,\n  PRIMARY \
         KEY (`id`),\n  CONSTRAINT `CONSTRAINT_1` CHECK (`a` > 0),\n  CONSTRAINT `chk` CHECK \
         (`a` < 100),\n  CONSTRAINT `CONSTRAINT_2` CHECK (`c` <> 'x' or `a` = 1)"
    );
    let failed = |s: &mut Session, sql: &str| {
        let e = fail(s, sql);
        assert_eq!((e.code, e.sqlstate), (4025, "23000"), "{sql}");
        e.message
    };
    // The column's constraint is tested first.
    assert_eq!(
        failed(&mut s, "INSERT INTO t VALUES (1, 0, 3, 'y')"),
        "CONSTRAINT `t.b` failed for `d6`.`t`"
    );
    assert_eq!(
        failed(&mut s, "INSERT INTO t VALUES (1, 200, 1, 'y')"),
        "CONSTRAINT `chk` failed for `d6`.`t`"
    );
    assert_eq!(
        failed(&mut s, "INSERT INTO t VALUES (1, 5, NULL, 'x')"),
        "CONSTRAINT `CONSTRAINT_2` failed for `d6`.`t`"
    );
    // NULL passes.
    ok(&mut s, "INSERT INTO t VALUES (1, NULL, NULL, NULL)");
    ok(
        &mut s,
        "INSERT IGNORE INTO t VALUES (2, 0, 1, 'y'), (3, 4, 1, 'y')",
    );
    assert_eq!(
        rows(&mut s, "SHOW WARNINGS"),
        vec![vec![
            "Warning",
            "4025",
            "CONSTRAINT `CONSTRAINT_1` failed for `d6`.`t`"
        ]]
    );
    assert_eq!(
        failed(&mut s, "UPDATE t SET a = -1 WHERE id = 3"),
        "CONSTRAINT `CONSTRAINT_1` failed for `d6`.`t`"
    );
    assert_eq!(
        failed(
            &mut s,
            "INSERT INTO t VALUES (3, 4, 1, 'y') ON DUPLICATE KEY UPDATE a = 500"
        ),
        "CONSTRAINT `chk` failed for `d6`.`t`"
    );
    ok(&mut s, "UPDATE t SET a = 7 WHERE id = 3");
    assert_eq!(
        rows(&mut s, "SELECT id, a FROM t ORDER BY id"),
        vec![vec!["1", "NULL"], vec!["3", "7"]]
    );
    let e = fail(
        &mut s,
        "CREATE TABLE t2 (id INT PRIMARY KEY, a INT, CHECK (zz > 0))",
    );
    assert_eq!(
        (e.code, e.message.as_str()),
        (1054, "Unknown column 'zz' in 'CHECK'")
    );
    // LIKE copies the checks (MariaDB).
    ok(&mut s, "CREATE TABLE t4 LIKE t");
    assert_eq!(err(&mut s, "INSERT INTO t4 VALUES (1, 0, 1, 'y')"), 4025);
    // Not there yet: refused, never ignored.
    assert_eq!(err(&mut s, "ALTER TABLE t DROP COLUMN c"), 1235);
    assert_eq!(
        err(&mut s, "ALTER TABLE t ADD COLUMN d INT CHECK (d > 0)"),
        1235
    );
}
