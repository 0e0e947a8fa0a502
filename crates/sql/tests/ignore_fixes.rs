//! What IGNORE does to the rows of INSERT, UPDATE and DELETE that a foreign key refuses, and
//! the small wrong answers left from issue 16, each pinned with the answers a real MariaDB
//! 10.11.14 gave to the same statements (default sql_mode, STRICT_TRANS_TABLES on).

mod common;
use common::{done, err, ok, session_in, text_rows as rows, warning, warnings, wire_rows, Db};
use onelog_sql::Session;

const NO_PARENT: &str = "Cannot add or update a child row: a foreign key constraint fails \
     (`d`.`c`, CONSTRAINT `c_ibfk_1` FOREIGN KEY (`pid`) REFERENCES `p` (`id`))";

fn parent_and_child(s: &mut Session, actions: &str) {
    ok(s, "CREATE TABLE p (id INT PRIMARY KEY)");
    ok(
        s,
        &format!(
            "CREATE TABLE c (id INT PRIMARY KEY, pid INT, \
             FOREIGN KEY (pid) REFERENCES p (id) {actions})"
        ),
    );
}

/// UPDATE IGNORE of a child whose new foreign key value has no parent leaves the row as it
/// was, counted as matched, without a warning; of a parent whose RESTRICT children hold its
/// old key likewise (MariaDB 10.11.14 gives no warning for either).
#[test]
fn update_ignore_leaves_rows_a_foreign_key_refuses() {
    let db = Db::open("ignore-update-fk");
    let mut s = session_in(&db, "d");
    parent_and_child(&mut s, "");
    ok(&mut s, "INSERT INTO p VALUES (1), (2)");
    ok(&mut s, "INSERT INTO c VALUES (10, 1), (11, 2), (12, 1)");
    assert_eq!(err(&mut s, "UPDATE c SET pid = 5 WHERE id = 10"), 1452);
    assert_eq!(
        done(&mut s, "UPDATE IGNORE c SET pid = 5 WHERE id = 10"),
        (0, "Rows matched: 1  Changed: 0  Warnings: 0".to_string())
    );
    assert!(warnings(&mut s).is_empty());
    assert_eq!(
        done(&mut s, "UPDATE IGNORE c SET pid = pid + 1"),
        (2, "Rows matched: 3  Changed: 2  Warnings: 0".to_string())
    );
    assert_eq!(
        rows(&mut s, "SELECT id, pid FROM c ORDER BY id"),
        vec![vec!["10", "2"], vec!["11", "2"], vec!["12", "2"]]
    );
    // The parent side: a parent with RESTRICT children keeps its key, one without changes.
    ok(&mut s, "INSERT INTO p VALUES (3)");
    assert_eq!(err(&mut s, "UPDATE p SET id = id + 10"), 1451);
    assert_eq!(
        done(&mut s, "UPDATE IGNORE p SET id = id + 10"),
        (2, "Rows matched: 3  Changed: 2  Warnings: 0".to_string())
    );
    assert!(warnings(&mut s).is_empty());
    assert_eq!(
        rows(&mut s, "SELECT id FROM p ORDER BY id"),
        vec![vec!["2"], vec!["11"], vec!["13"]]
    );
}

/// A parent update that cascades into a child whose own RESTRICT child holds it: UPDATE
/// IGNORE leaves that parent row and undoes its cascade; the other parent row cascades.
#[test]
fn update_ignore_undoes_the_cascade_of_a_row_it_leaves() {
    let db = Db::open("ignore-update-cascade");
    let mut s = session_in(&db, "d");
    ok(&mut s, "CREATE TABLE p (id INT PRIMARY KEY)");
    ok(
        &mut s,
        "CREATE TABLE c (pid INT PRIMARY KEY, FOREIGN KEY (pid) REFERENCES p (id) \
         ON UPDATE CASCADE)",
    );
    ok(
        &mut s,
        "CREATE TABLE g (id INT PRIMARY KEY, cpid INT, FOREIGN KEY (cpid) REFERENCES c (pid))",
    );
    ok(&mut s, "INSERT INTO p VALUES (1), (2)");
    ok(&mut s, "INSERT INTO c VALUES (1), (2)");
    ok(&mut s, "INSERT INTO g VALUES (100, 1)");
    assert_eq!(
        done(&mut s, "UPDATE IGNORE p SET id = id + 10"),
        (1, "Rows matched: 2  Changed: 1  Warnings: 0".to_string())
    );
    assert!(warnings(&mut s).is_empty());
    assert_eq!(
        rows(&mut s, "SELECT id FROM p ORDER BY id"),
        vec![vec!["1"], vec!["12"]]
    );
    assert_eq!(
        rows(&mut s, "SELECT pid FROM c ORDER BY pid"),
        vec![vec!["1"], vec!["12"]]
    );
}

/// INSERT IGNORE of rows without a parent: each is left out with 1452 as a warning and
/// counted as a duplicate; a row its CHECK refuses is counted in neither `Records` nor
/// `Duplicates` (MariaDB 10.11.14: `Records: 3  Duplicates: 2  Warnings: 2`, and
/// `Records: 2  Duplicates: 1  Warnings: 3`).
#[test]
fn insert_ignore_counts_refused_rows_as_mariadb() {
    let db = Db::open("ignore-insert-fk");
    let mut s = session_in(&db, "d");
    parent_and_child(&mut s, "");
    ok(&mut s, "INSERT INTO p VALUES (1)");
    assert_eq!(
        done(
            &mut s,
            "INSERT IGNORE INTO c VALUES (20, 9), (21, 1), (22, 8)"
        ),
        (1, "Records: 3  Duplicates: 2  Warnings: 2".to_string())
    );
    assert_eq!(
        warnings(&mut s),
        vec![warning("1452", NO_PARENT), warning("1452", NO_PARENT)]
    );
    assert_eq!(
        done(&mut s, "INSERT IGNORE INTO c VALUES (23, 9)"),
        (0, String::new())
    );
    assert_eq!(warnings(&mut s), vec![warning("1452", NO_PARENT)]);
    assert_eq!(rows(&mut s, "SELECT id FROM c"), vec![vec!["21"]]);
    ok(
        &mut s,
        "CREATE TABLE ck (a INT PRIMARY KEY, b INT CHECK (b < 5))",
    );
    assert_eq!(
        done(
            &mut s,
            "INSERT IGNORE INTO ck VALUES (1, 9), (2, 1), (2, 2), (3, 7)"
        ),
        (1, "Records: 2  Duplicates: 1  Warnings: 3".to_string())
    );
    assert_eq!(
        done(
            &mut s,
            "INSERT IGNORE INTO ck SELECT 10, 1 UNION ALL SELECT 11, 8"
        ),
        (1, "Records: 1  Duplicates: 0  Warnings: 1".to_string())
    );
}

const HELD: &str = "Cannot delete or update a parent row: a foreign key constraint fails \
     (`d`.`c`, CONSTRAINT `c_ibfk_1` FOREIGN KEY (`pid`) REFERENCES `p` (`id`))";

/// DELETE IGNORE: a parent row its RESTRICT children hold stays, with 1451 as a warning per
/// row; the other rows go (MariaDB 10.11.14: `Query OK, 2 rows affected`, then
/// `0 rows affected, 2 warnings`). ORDER BY / LIMIT and RETURNING work as without IGNORE.
#[test]
fn delete_ignore_leaves_rows_a_foreign_key_holds() {
    let db = Db::open("ignore-delete-fk");
    let mut s = session_in(&db, "d");
    parent_and_child(&mut s, "");
    ok(&mut s, "INSERT INTO p VALUES (1), (2), (3), (4)");
    ok(&mut s, "INSERT INTO c VALUES (10, 1), (11, 2)");
    assert_eq!(err(&mut s, "DELETE FROM p WHERE id = 1"), 1451);
    assert_eq!(
        done(&mut s, "DELETE IGNORE FROM p WHERE id > 2"),
        (2, String::new())
    );
    assert!(warnings(&mut s).is_empty());
    assert_eq!(done(&mut s, "DELETE IGNORE FROM p"), (0, String::new()));
    assert_eq!(
        warnings(&mut s),
        vec![warning("1451", HELD), warning("1451", HELD)]
    );
    assert_eq!(
        done(&mut s, "DELETE IGNORE FROM p ORDER BY id DESC LIMIT 1"),
        (0, String::new())
    );
    assert_eq!(warnings(&mut s), vec![warning("1451", HELD)]);
    ok(&mut s, "CREATE VIEW pv AS SELECT id FROM p WHERE id > 1");
    assert_eq!(done(&mut s, "DELETE IGNORE FROM pv"), (0, String::new()));
    assert_eq!(warnings(&mut s), vec![warning("1451", HELD)]);
    assert_eq!(
        rows(&mut s, "SELECT id FROM p ORDER BY id"),
        vec![vec!["1"], vec!["2"]]
    );
    ok(&mut s, "DELETE FROM c WHERE id = 11");
    assert_eq!(
        rows(&mut s, "DELETE IGNORE FROM p RETURNING id"),
        vec![vec!["2"]]
    );
    // A table without foreign keys: IGNORE changes nothing.
    ok(&mut s, "CREATE TABLE t (a INT)");
    ok(&mut s, "INSERT INTO t VALUES (1), (2), (1)");
    assert_eq!(
        done(&mut s, "DELETE IGNORE FROM t WHERE a = 1"),
        (2, String::new())
    );
    assert_eq!(rows(&mut s, "SELECT a FROM t"), vec![vec!["2"]]);
}

/// A parent delete that cascades into a child held by its own RESTRICT child: DELETE IGNORE
/// keeps that parent row and undoes its cascade, with the grandchild's 1451 as the warning.
#[test]
fn delete_ignore_undoes_the_cascade_of_a_row_it_keeps() {
    let db = Db::open("ignore-delete-cascade");
    let mut s = session_in(&db, "d");
    parent_and_child(&mut s, "ON DELETE CASCADE");
    ok(
        &mut s,
        "CREATE TABLE c3 (id INT PRIMARY KEY, cid INT, FOREIGN KEY (cid) REFERENCES c (id))",
    );
    ok(&mut s, "INSERT INTO p VALUES (1), (2)");
    ok(&mut s, "INSERT INTO c VALUES (10, 1), (11, 2)");
    ok(&mut s, "INSERT INTO c3 VALUES (100, 10)");
    assert_eq!(done(&mut s, "DELETE IGNORE FROM p"), (1, String::new()));
    assert_eq!(
        warnings(&mut s),
        vec![warning(
            "1451",
            "Cannot delete or update a parent row: a foreign key constraint fails \
             (`d`.`c3`, CONSTRAINT `c3_ibfk_1` FOREIGN KEY (`cid`) REFERENCES `c` (`id`))"
        )]
    );
    assert_eq!(rows(&mut s, "SELECT id FROM p"), vec![vec!["1"]]);
    assert_eq!(rows(&mut s, "SELECT id, pid FROM c"), vec![vec!["10", "1"]]);
}

/// Multi-table DELETE IGNORE is refused (1235), not read as a table named `ignore`: MariaDB
/// 10.11.14 skips the rows a foreign key holds there without a warning, unlike the
/// single-table form (docs/SQL.md).
#[test]
fn multi_table_delete_ignore_is_refused() {
    let db = Db::open("ignore-delete-multi");
    let mut s = session_in(&db, "d");
    parent_and_child(&mut s, "");
    assert_eq!(
        err(
            &mut s,
            "DELETE IGNORE p, c FROM p JOIN c ON c.pid = p.id WHERE c.id = 10"
        ),
        1235
    );
    assert_eq!(
        err(
            &mut s,
            "DELETE IGNORE FROM p USING p JOIN c ON c.pid = p.id"
        ),
        1235
    );
}

/// SHOW GRANTS writes the account as MariaDB 10.11 does, `` `u`@`h` `` with a backtick
/// doubled (`` GRANT USAGE ON *.* TO `it's`@`h``x` ``), as SHOW CREATE USER does.
#[test]
fn show_grants_quotes_the_account_with_backticks() {
    let db = Db::open("misc-show-grants");
    let mut s = session_in(&db, "d");
    ok(&mut s, "CREATE USER 'u'@'%' IDENTIFIED BY 'pw'");
    ok(&mut s, "GRANT SELECT ON d.* TO 'u'@'%'");
    ok(&mut s, "CREATE USER 'it''s'@'h`x'");
    assert_eq!(
        rows(&mut s, "SHOW GRANTS FOR 'u'@'%'"),
        vec![
            vec![
                "GRANT USAGE ON *.* TO `u`@`%` IDENTIFIED BY PASSWORD \
                 '*D821809F681A40A6E379B50D0463EFAE20BDD122'"
            ],
            vec!["GRANT SELECT ON `d`.* TO `u`@`%`"],
        ]
    );
    assert_eq!(
        rows(&mut s, "SHOW GRANTS FOR 'it''s'@'h`x'"),
        vec![vec!["GRANT USAGE ON *.* TO `it's`@`h``x`"]]
    );
    assert_eq!(
        rows(&mut s, "SHOW CREATE USER 'it''s'@'h`x'"),
        vec![vec!["CREATE USER `it's`@`h``x`"]]
    );
}

/// FLUSH PRIVILEGES in locked-tables mode is 1100 for `db` (the grant table MariaDB 10.11.14
/// cannot open), alone or with other forms, whatever the lock mode; FLUSH LOGS / STATUS /
/// HOSTS pass; FLUSH TABLES t FOR EXPORT is 1192 there. Without table locks, and under the
/// global read lock, FLUSH PRIVILEGES is fine.
#[test]
fn flush_privileges_under_lock_tables_is_refused() {
    let db = Db::open("misc-flush-privileges");
    let mut s = session_in(&db, "d");
    ok(&mut s, "CREATE TABLE t (a INT)");
    ok(&mut s, "FLUSH PRIVILEGES");
    for mode in ["READ", "WRITE"] {
        ok(&mut s, &format!("LOCK TABLES t {mode}"));
        for sql in [
            "FLUSH PRIVILEGES",
            "FLUSH LOCAL PRIVILEGES",
            "FLUSH NO_WRITE_TO_BINLOG PRIVILEGES",
            "FLUSH PRIVILEGES, STATUS",
            "FLUSH STATUS, PRIVILEGES",
        ] {
            let e = common::fail(&mut s, sql);
            assert_eq!(
                (e.code, e.message.as_str()),
                (1100, "Table 'db' was not locked with LOCK TABLES"),
                "{sql}"
            );
        }
        for sql in [
            "FLUSH LOGS",
            "FLUSH STATUS",
            "FLUSH HOSTS",
            "FLUSH USER_RESOURCES",
        ] {
            ok(&mut s, sql);
        }
        assert_eq!(err(&mut s, "FLUSH TABLES t FOR EXPORT"), 1192);
        ok(&mut s, "UNLOCK TABLES");
    }
    ok(&mut s, "FLUSH TABLES t WITH READ LOCK");
    assert_eq!(err(&mut s, "FLUSH PRIVILEGES"), 1100);
    ok(&mut s, "UNLOCK TABLES");
    ok(&mut s, "FLUSH TABLES WITH READ LOCK");
    ok(&mut s, "FLUSH PRIVILEGES");
    ok(&mut s, "UNLOCK TABLES");
    ok(&mut s, "FLUSH PRIVILEGES, STATUS");
}

/// FLOAT(M,D) / DOUBLE(M,D) keep their (M,D): SHOW CREATE TABLE,
/// information_schema.COLUMNS, values rounded to D decimals half to even and shown with D
/// decimals, 1264 past M digits in strict mode, clipped with a warning by IGNORE or
/// non-strict mode, defaults rounded (1067 past M digits); MariaDB 10.11.14's answers.
#[test]
fn float_m_d_keeps_its_digits() {
    let db = Db::open("misc-float-m-d");
    let mut s = session_in(&db, "d");
    ok(
        &mut s,
        "CREATE TABLE f (a FLOAT(7,3), b DOUBLE(10,2), c DOUBLE(5,1), d FLOAT(5), \
         e DOUBLE(6,2), h FLOAT)",
    );
    let create = &rows(&mut s, "SHOW CREATE TABLE f")[0][1];
    assert!(
        create.contains(
            "  `a` float(7,3) DEFAULT NULL,\n  `b` double(10,2) DEFAULT NULL,\n  \
             `c` double(5,1) DEFAULT NULL,\n  `d` float DEFAULT NULL,\n  \
             `e` double(6,2) DEFAULT NULL,\n  `h` float DEFAULT NULL\n"
        ),
        "{create}"
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT column_name, data_type, column_type, numeric_precision, numeric_scale \
             FROM information_schema.COLUMNS WHERE table_schema = 'd' AND table_name = 'f' \
             ORDER BY ordinal_position"
        ),
        vec![
            vec!["a", "float", "float(7,3)", "7", "3"],
            vec!["b", "double", "double(10,2)", "10", "2"],
            vec!["c", "double", "double(5,1)", "5", "1"],
            vec!["d", "float", "float", "12", "NULL"],
            vec!["e", "double", "double(6,2)", "6", "2"],
            vec!["h", "float", "float", "12", "NULL"],
        ]
    );
    ok(
        &mut s,
        "INSERT INTO f (a, b, c, d, e) VALUES (1.23456, 12345.678, 1234.56, 1.23456789, 1.005)",
    );
    assert_eq!(
        wire_rows(&mut s, "SELECT a, b, c, e FROM f"),
        vec![vec!["1.235", "12345.68", "1234.6", "1.00"]]
    );
    assert_eq!(err(&mut s, "INSERT INTO f (a) VALUES (12345.6)"), 1264);
    assert_eq!(err(&mut s, "INSERT INTO f (b) VALUES (123456789.0)"), 1264);
    assert_eq!(err(&mut s, "INSERT INTO f (c) VALUES (-10000)"), 1264);
    assert_eq!(err(&mut s, "INSERT INTO f (a) VALUES (9999.9999)"), 1264);
    ok(&mut s, "DELETE FROM f");
    assert_eq!(
        done(
            &mut s,
            "INSERT IGNORE INTO f (a, b, c) VALUES (12345.6, 123456789.0, -10000)"
        ),
        (1, String::new())
    );
    let range = |c: &str| {
        warning(
            "1264",
            &format!("Out of range value for column '{c}' at row 1"),
        )
    };
    assert_eq!(warnings(&mut s), vec![range("a"), range("b"), range("c")]);
    ok(&mut s, "INSERT INTO f (a) VALUES (9999.9994)");
    assert_eq!(
        wire_rows(&mut s, "SELECT a, b, c FROM f ORDER BY b DESC"),
        vec![
            vec!["9999.999", "99999999.99", "-9999.9"],
            vec!["9999.999", "NULL", "NULL"]
        ]
    );
    // Half to even, as MariaDB's rint (0.135 is 0.13500000000000000888 as a double).
    ok(&mut s, "CREATE TABLE f8 (a DOUBLE(5,2))");
    ok(
        &mut s,
        "INSERT INTO f8 VALUES (0.125), (0.135), (1.125), (-0.125)",
    );
    assert_eq!(
        wire_rows(&mut s, "SELECT a FROM f8 ORDER BY a"),
        vec![vec!["-0.12"], vec!["0.12"], vec!["0.14"], vec!["1.12"]]
    );
    // Defaults rounded (shown with D decimals); non-strict mode clips with 1264.
    ok(
        &mut s,
        "CREATE TABLE f2 (a FLOAT(7,3) DEFAULT 1.23456, b DOUBLE(6,2) DEFAULT 3)",
    );
    let create = &rows(&mut s, "SHOW CREATE TABLE f2")[0][1];
    assert!(
        create.contains("  `a` float(7,3) DEFAULT 1.235,\n  `b` double(6,2) DEFAULT 3.00\n"),
        "{create}"
    );
    ok(&mut s, "INSERT INTO f2 () VALUES ()");
    assert_eq!(
        wire_rows(&mut s, "SELECT a, b FROM f2"),
        vec![vec!["1.235", "3.00"]]
    );
    ok(&mut s, "SET sql_mode = ''");
    assert_eq!(
        done(&mut s, "UPDATE f2 SET a = 99999, b = -1e9"),
        (1, "Rows matched: 1  Changed: 1  Warnings: 2".to_string())
    );
    assert_eq!(
        wire_rows(&mut s, "SELECT a, b FROM f2"),
        vec![vec!["9999.999", "-9999.99"]]
    );
    assert_eq!(
        err(&mut s, "CREATE TABLE f3 (b DOUBLE(4,2) DEFAULT 99.999)"),
        1067
    );
    assert_eq!(err(&mut s, "CREATE TABLE f4 (a FLOAT(3,4))"), 1427);
    assert_eq!(err(&mut s, "CREATE TABLE f5 (a FLOAT(256,2))"), 1439);
    assert_eq!(err(&mut s, "CREATE TABLE f6 (a DOUBLE(255,31))"), 1425);
    ok(&mut s, "CREATE TABLE f7 (a FLOAT(60,30))");
    assert!(rows(&mut s, "SHOW CREATE TABLE f7")[0][1].contains("`a` float(60,30)"));
    // sqlparser reads no (M,D) after REAL or DOUBLE PRECISION: a syntax error, never a
    // column of another type (MariaDB takes both as DOUBLE(M,D)).
    assert_eq!(err(&mut s, "CREATE TABLE f9 (c REAL(5,1))"), 1064);
    assert_eq!(
        err(&mut s, "CREATE TABLE f9 (e DOUBLE PRECISION(6,2))"),
        1064
    );
}
