//! Views as MariaDB 10.11 answered the same statements (run against the real server while
//! writing these): CREATE / ALTER / DROP VIEW and their errors, reading views anywhere a
//! table can be (joins, subqueries, views on views), SHOW CREATE VIEW / TABLE, SHOW FULL
//! TABLES, DESCRIBE, the privileges of DEFINER and INVOKER views, the Query events logged,
//! and views surviving restarts (the catalog bytes are tested in `onelog_engine::catalog`).

mod common;
use common::{err, fail, ok, text_rows as rows, Db};
use onelog_sql::{Server, ServerConfig, Session};

fn session(server: &std::sync::Arc<Server>, id: u32) -> Session {
    Session::new(server.clone(), id, "root", "localhost")
}

fn setup(s: &mut Session) {
    for sql in [
        "CREATE DATABASE vd",
        "USE vd",
        "CREATE TABLE t (a INT PRIMARY KEY, b VARCHAR(10), c INT)",
        "INSERT INTO t VALUES (1,'x',10),(2,'y',20),(3,'z',30)",
    ] {
        ok(s, sql);
    }
}

#[test]
fn views_are_read_like_tables() {
    let db = Db::open("views-read");
    let mut s = session(&db.server, 1);
    setup(&mut s);
    ok(&mut s, "CREATE VIEW v AS SELECT a, b FROM t WHERE a > 1");
    ok(&mut s, "CREATE VIEW v2 (x, y) AS SELECT a+1, b FROM t");
    ok(
        &mut s,
        "CREATE VIEW v5 AS SELECT a, count(*) n FROM t GROUP BY a",
    );
    ok(
        &mut s,
        "CREATE VIEW v7 AS SELECT a FROM t UNION SELECT c FROM t",
    );
    assert_eq!(
        rows(&mut s, "SELECT * FROM v"),
        vec![vec!["2", "y"], vec!["3", "z"]]
    );
    assert_eq!(
        rows(&mut s, "SELECT x, y FROM v2 WHERE x > 3"),
        vec![vec!["4", "z"]]
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT t.c, v.b FROM t JOIN v ON t.a = v.a ORDER BY t.c DESC"
        ),
        vec![vec!["30", "z"], vec!["20", "y"]]
    );
    assert_eq!(
        rows(&mut s, "SELECT a FROM t WHERE a NOT IN (SELECT a FROM v)"),
        vec![vec!["1"]]
    );
    assert_eq!(rows(&mut s, "SELECT sum(n) FROM v5"), vec![vec!["3"]]);
    assert_eq!(rows(&mut s, "SELECT count(*) FROM v7"), vec![vec!["6"]]);
    // A view on a view, and the base table's later rows seen through both.
    ok(&mut s, "CREATE VIEW vv AS SELECT * FROM v WHERE a > 2");
    ok(&mut s, "INSERT INTO t VALUES (4, 'w', 40)");
    assert_eq!(
        rows(&mut s, "SELECT a, b FROM vv ORDER BY a"),
        vec![vec!["3", "z"], vec!["4", "w"]]
    );
    // From another database: the view's names resolve where it was created.
    ok(&mut s, "CREATE DATABASE other");
    ok(&mut s, "USE other");
    assert_eq!(rows(&mut s, "SELECT count(*) FROM vd.vv"), vec![vec!["2"]]);
    assert_eq!(err(&mut s, "SELECT * FROM vd.v WHERE zz = 1"), 1054);
    ok(&mut s, "USE vd");
    assert_eq!(
        rows(&mut s, "SHOW FULL TABLES"),
        vec![
            vec!["t", "BASE TABLE"],
            vec!["v", "VIEW"],
            vec!["v2", "VIEW"],
            vec!["v5", "VIEW"],
            vec!["v7", "VIEW"],
            vec!["vv", "VIEW"],
        ]
    );
    let desc = rows(&mut s, "DESCRIBE v2");
    assert_eq!(desc.len(), 2);
    assert_eq!((desc[0][0].as_str(), desc[1][0].as_str()), ("x", "y"));
}

#[test]
fn view_ddl_errors_as_mariadb() {
    let db = Db::open("views-ddl");
    let mut s = session(&db.server, 1);
    setup(&mut s);
    ok(&mut s, "CREATE VIEW v AS SELECT 1");
    assert_eq!(err(&mut s, "CREATE VIEW v AS SELECT 1"), 1050);
    assert_eq!(err(&mut s, "CREATE TABLE v (a INT PRIMARY KEY)"), 1050);
    assert_eq!(err(&mut s, "CREATE VIEW t AS SELECT 1"), 1050);
    let e = fail(&mut s, "DROP TABLE v");
    assert_eq!((e.code, e.message.as_str()), (1965, "'vd.v' is a view"));
    let e = fail(&mut s, "DROP VIEW t");
    assert_eq!((e.code, e.message.as_str()), (4092, "Unknown VIEW: 'vd.t'"));
    assert_eq!(err(&mut s, "CREATE VIEW vx AS SELECT nope FROM t"), 1054);
    assert_eq!(err(&mut s, "CREATE VIEW vx AS SELECT * FROM nope"), 1146);
    assert_eq!(err(&mut s, "CREATE VIEW vx AS SELECT a, a FROM t"), 1060);
    assert_eq!(
        err(&mut s, "CREATE VIEW vx (p) AS SELECT a, b FROM t"),
        1353
    );
    assert_eq!(err(&mut s, "CREATE VIEW vx AS SELECT ?"), 1064);
    assert_eq!(
        err(
            &mut s,
            "CREATE OR REPLACE VIEW IF NOT EXISTS vx AS SELECT 1"
        ),
        1221
    );
    let e = fail(&mut s, "CREATE OR REPLACE VIEW t AS SELECT 1");
    assert_eq!(
        (e.code, e.message.as_str()),
        (1347, "'vd.t' is not of type 'VIEW'")
    );
    assert_eq!(err(&mut s, "ALTER VIEW nope AS SELECT 1"), 1146);
    let e = fail(&mut s, "ALTER TABLE v ADD COLUMN z INT");
    assert_eq!(
        (e.code, e.message.as_str()),
        (1347, "'vd.v' is not of type 'BASE TABLE'")
    );
    let e = fail(&mut s, "UPDATE v SET `1` = 2");
    assert_eq!(
        (e.code, e.message.as_str()),
        (1288, "The target table v of the UPDATE is not updatable")
    );
    // A view of no table takes no write (MariaDB's 1288, 1471 for INSERT).
    assert_eq!(err(&mut s, "INSERT INTO v VALUES (1)"), 1471);
    assert_eq!(err(&mut s, "DELETE FROM v"), 1288);
    // DROP TABLE IF EXISTS of a view: a note, the view stays.
    ok(&mut s, "DROP TABLE IF EXISTS v");
    assert_eq!(
        rows(&mut s, "SHOW WARNINGS"),
        vec![vec!["Note", "1965", "'vd.v' is a view"]]
    );
    assert_eq!(rows(&mut s, "SELECT * FROM v"), vec![vec!["1"]]);
    // ALGORITHM=MERGE of a view MariaDB cannot merge: UNDEFINED, with warning 1354.
    ok(
        &mut s,
        "CREATE ALGORITHM=MERGE VIEW mg AS SELECT a, count(*) FROM t GROUP BY a",
    );
    assert_eq!(rows(&mut s, "SHOW WARNINGS")[0][1], "1354");
    assert!(rows(&mut s, "SHOW CREATE VIEW mg")[0][1].starts_with("CREATE ALGORITHM=UNDEFINED"));
    ok(&mut s, "DROP VIEW mg");
    // IF NOT EXISTS: a note; DROP VIEW IF EXISTS: a note per missing view.
    ok(&mut s, "CREATE VIEW IF NOT EXISTS v AS SELECT 2");
    assert_eq!(
        rows(&mut s, "SHOW WARNINGS"),
        vec![vec!["Note", "1050", "Table 'v' already exists"]]
    );
    // DROP VIEW of a missing view drops the others, then fails.
    ok(&mut s, "CREATE VIEW w AS SELECT 2 AS two");
    let e = fail(&mut s, "DROP VIEW w, nope1, nope2");
    assert_eq!(e.message, "Unknown VIEW: 'vd.nope1,vd.nope2'");
    assert_eq!(err(&mut s, "SELECT * FROM w"), 1146);
    ok(&mut s, "DROP VIEW IF EXISTS nope, v RESTRICT");
    assert_eq!(
        rows(&mut s, "SHOW WARNINGS"),
        vec![vec!["Note", "4092", "Unknown VIEW: 'vd.nope'"]]
    );
    assert_eq!(
        rows(&mut s, "SHOW FULL TABLES"),
        vec![vec!["t", "BASE TABLE"]]
    );
    // A view whose table is gone: 1356 on use, SHOW CREATE VIEW still answers with a warning.
    ok(&mut s, "CREATE TABLE tt (a INT PRIMARY KEY)");
    ok(&mut s, "CREATE VIEW vt AS SELECT a FROM tt");
    ok(&mut s, "DROP TABLE tt");
    let e = fail(&mut s, "SELECT * FROM vt");
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            1356,
            "View 'vd.vt' references invalid table(s) or column(s) or function(s) or \
             definer/invoker of view lack rights to use them"
        )
    );
    assert_eq!(rows(&mut s, "SHOW CREATE VIEW vt").len(), 1);
    assert_eq!(rows(&mut s, "SHOW WARNINGS")[0][1], "1356");
    // RENAME TABLE of a view, not into another database.
    ok(&mut s, "CREATE VIEW r1 AS SELECT b FROM t");
    ok(&mut s, "RENAME TABLE r1 TO r2");
    assert_eq!(rows(&mut s, "SELECT count(*) FROM r2"), vec![vec!["3"]]);
    ok(&mut s, "CREATE DATABASE o");
    let e = fail(&mut s, "RENAME TABLE r2 TO o.r3");
    assert_eq!(
        (e.code, e.message.as_str()),
        (1450, "Changing schema from 'vd' to 'o' is not allowed")
    );
}

#[test]
fn show_create_view_runs_back_to_the_same_view() {
    let db = Db::open("views-show");
    let mut s = session(&db.server, 1);
    setup(&mut s);
    ok(
        &mut s,
        "CREATE ALGORITHM=MERGE SQL SECURITY INVOKER VIEW v3 (p, q) AS \
         SELECT a, b FROM t WHERE a < 3 WITH CHECK OPTION",
    );
    let r = rows(&mut s, "SHOW CREATE VIEW v3");
    let text = r[0][1].clone();
    assert_eq!(
        text,
        "CREATE ALGORITHM=MERGE DEFINER=`root`@`localhost` SQL SECURITY INVOKER VIEW \
         `v3`(`p`,`q`) AS SELECT a, b FROM t WHERE a < 3 WITH CASCADED CHECK OPTION"
    );
    assert_eq!(rows(&mut s, "SHOW CREATE TABLE v3")[0][1], text);
    // ALTER VIEW keeps what it does not name (MariaDB's inheritance).
    ok(&mut s, "ALTER VIEW v3 AS SELECT c FROM t");
    let r = rows(&mut s, "SHOW CREATE VIEW v3");
    assert!(
        r[0][1].starts_with(
            "CREATE ALGORITHM=MERGE DEFINER=`root`@`localhost` SQL SECURITY INVOKER VIEW `v3`(`c`)"
        ),
        "{}",
        r[0][1]
    );
    // The printed statement, run again after a DROP, makes the same view.
    ok(&mut s, "DROP VIEW v3");
    ok(&mut s, &r[0][1]);
    assert_eq!(rows(&mut s, "SHOW CREATE VIEW v3"), r);
    // Shown from another database: qualified, and still runnable there.
    ok(&mut s, "CREATE DATABASE o");
    ok(&mut s, "USE o");
    let q = rows(&mut s, "SHOW CREATE VIEW vd.v3")[0][1].clone();
    assert!(
        q.contains("VIEW `vd`.`v3`(`c`) AS SELECT c FROM `vd`.t"),
        "{q}"
    );
    ok(&mut s, "DROP VIEW vd.v3");
    ok(&mut s, &q);
    assert_eq!(rows(&mut s, "SELECT count(*) FROM vd.v3"), vec![vec!["3"]]);
    // mysqldump's form: versioned comments around the clauses.
    ok(
        &mut s,
        "/*!50001 CREATE ALGORITHM=UNDEFINED */ /*!50013 DEFINER=`root`@`localhost` SQL \
         SECURITY DEFINER */ /*!50001 VIEW `vd`.`vm` AS select `vd`.`t`.`a` AS `a` from `vd`.`t` */",
    );
    assert_eq!(rows(&mut s, "SELECT count(*) FROM vd.vm"), vec![vec!["3"]]);
}

#[test]
fn definer_and_invoker_views_check_their_own_privileges() {
    let db = Db::open("views-priv");
    let mut r = session(&db.server, 1);
    setup(&mut r);
    ok(&mut r, "CREATE DATABASE vd2");
    ok(&mut r, "CREATE TABLE vd2.s (a INT PRIMARY KEY)");
    ok(&mut r, "INSERT INTO vd2.s VALUES (7)");
    ok(&mut r, "CREATE VIEW vd.vs_def AS SELECT a FROM vd2.s");
    ok(
        &mut r,
        "CREATE SQL SECURITY INVOKER VIEW vd.vs_inv AS SELECT a FROM vd2.s",
    );
    ok(&mut r, "CREATE USER 'u1'@'%' IDENTIFIED BY 'p'");
    ok(&mut r, "GRANT SELECT ON vd.* TO 'u1'@'%'");
    let mut u = Session::new(db.server.clone(), 2, "u1", "10.0.0.1");
    assert_eq!(rows(&mut u, "SELECT * FROM vd.vs_def"), vec![vec!["7"]]);
    assert_eq!(err(&mut u, "SELECT * FROM vd.vs_inv"), 1356);
    assert_eq!(err(&mut u, "SELECT * FROM vd2.s"), 1142);
    let e = fail(&mut u, "CREATE VIEW vd.x AS SELECT 1");
    assert_eq!(e.code, 1142);
    assert!(
        e.message.starts_with("CREATE VIEW command denied"),
        "{}",
        e.message
    );
    assert_eq!(err(&mut u, "SHOW CREATE VIEW vd.vs_def"), 1142);
    ok(&mut r, "GRANT CREATE VIEW ON vd.* TO 'u1'@'%'");
    ok(&mut u, "CREATE VIEW vd.x AS SELECT 1");
    assert_eq!(
        err(
            &mut u,
            "CREATE DEFINER=root@localhost VIEW vd.y AS SELECT 1"
        ),
        1227
    );
    assert_eq!(
        err(&mut u, "CREATE VIEW vd.x2 AS SELECT * FROM vd2.s"),
        1142
    );
    assert_eq!(err(&mut u, "CREATE OR REPLACE VIEW vd.x AS SELECT 2"), 1142);
    // A definer that does not exist: a note at CREATE, 1449 on use.
    ok(
        &mut r,
        "CREATE DEFINER=nobody@nowhere VIEW vd.nob AS SELECT 1",
    );
    assert_eq!(rows(&mut r, "SHOW WARNINGS")[0][1], "1449");
    let e = fail(&mut r, "SELECT * FROM vd.nob");
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            1449,
            "The user specified as a definer ('nobody'@'nowhere') does not exist"
        )
    );
}

#[test]
fn view_ddl_is_logged_as_mariadb_writes_it() {
    let db = Db::open("views-log");
    let mut s = session(&db.server, 1);
    setup(&mut s);
    ok(&mut s, "create view vd.v2 (x, y) as select a+1, b from t");
    ok(
        &mut s,
        "create or replace algorithm=merge view v3 as select * from t with local check option",
    );
    assert_eq!(err(&mut s, "drop view v3, nope"), 4092);
    let ddl: Vec<String> = common::log_records(&db.server)
        .into_iter()
        .filter(|r| r.kind == onelog_log::RecordKind::Ddl)
        .map(|r| String::from_utf8_lossy(&r.events).into_owned())
        .filter(|q| q.contains("VIEW"))
        .collect();
    let expected = [
        "CREATE ALGORITHM=UNDEFINED DEFINER=`root`@`localhost` SQL SECURITY DEFINER VIEW \
         `v2`(`x`, `y`) AS select a+1, b from t",
        "CREATE OR REPLACE ALGORITHM=MERGE DEFINER=`root`@`localhost` SQL SECURITY DEFINER \
         VIEW `v3` AS select * from t WITH LOCAL CHECK OPTION",
        "DROP VIEW IF EXISTS `vd`.`v3`",
    ];
    assert_eq!(ddl.len(), expected.len(), "{ddl:?}");
    for (got, want) in ddl.iter().zip(expected) {
        assert!(got.contains(want), "{got:?} does not hold {want:?}");
    }
}

#[test]
fn views_survive_restarts() {
    let dir = common::TempDir::new("views-restart");
    let open = || Server::open(ServerConfig::new(dir.path())).unwrap().0;
    let server = open();
    let mut s = session(&server, 1);
    setup(&mut s);
    ok(
        &mut s,
        "CREATE SQL SECURITY INVOKER VIEW v (k) AS SELECT a FROM t WHERE a > 1",
    );
    drop(s);
    server.shutdown().unwrap();
    // From the shutdown's checkpoint.
    let server = open();
    let mut s = session(&server, 1);
    ok(&mut s, "USE vd");
    assert_eq!(rows(&mut s, "SELECT k FROM v"), vec![vec!["2"], vec!["3"]]);
    ok(&mut s, "CREATE VIEW w AS SELECT k FROM v");
    ok(&mut s, "RENAME TABLE v TO v9");
    drop(s);
    server.shutdown().unwrap();
    let server = open();
    let mut s = session(&server, 1);
    ok(&mut s, "USE vd");
    assert!(rows(&mut s, "SHOW CREATE VIEW v9")[0][1].contains("SQL SECURITY INVOKER"));
    assert_eq!(err(&mut s, "SELECT * FROM w"), 1356);
    drop(s);
    server.shutdown().unwrap();
}
