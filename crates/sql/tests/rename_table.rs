//! RENAME TABLE and ALTER TABLE ... RENAME as MariaDB 10.11 answered the same statements: a
//! swap through a third name, atomic failure, the errors, rows and indexes following the
//! table, a transaction that wrote the old name failing its commit, and the rename surviving
//! restarts (each shutdown writes a checkpoint; the catalog change's log form is tested in
//! `onelog_engine::catalog`).

mod common;
use common::{err, ok, text_rows as rows, Db};
use onelog_sql::{Server, ServerConfig, Session};

fn session(server: &std::sync::Arc<Server>, id: u32) -> Session {
    Session::new(server.clone(), id, "root", "localhost")
}

#[test]
fn rename_table_as_mariadb() {
    let db = Db::open("rename-table");
    let mut s = session(&db.server, 1);
    for sql in [
        "CREATE DATABASE t1",
        "USE t1",
        "CREATE TABLE r1 (id INT PRIMARY KEY, k INT, KEY (k))",
        "CREATE TABLE r2 (id INT PRIMARY KEY)",
        "INSERT INTO r1 VALUES (1, 10)",
        "INSERT INTO r2 VALUES (2)",
    ] {
        ok(&mut s, sql);
    }
    ok(&mut s, "RENAME TABLE r1 TO r3, r2 TO r1, r3 TO r2");
    assert_eq!(rows(&mut s, "SELECT id FROM r1"), vec![vec!["2"]]);
    assert_eq!(
        rows(&mut s, "SELECT id FROM r2 WHERE k = 10"),
        vec![vec!["1"]]
    );
    assert_eq!(err(&mut s, "RENAME TABLE r1 TO r2"), 1050);
    assert_eq!(err(&mut s, "RENAME TABLE r2 TO r2"), 1050);
    assert_eq!(err(&mut s, "RENAME TABLE nope TO r9"), 1146);
    assert_eq!(err(&mut s, "RENAME TABLE r1 TO nodb.r9"), 1025);
    // All or nothing: the first pair is not kept when the second fails.
    assert_eq!(err(&mut s, "RENAME TABLE r1 TO r7, nope TO r8"), 1146);
    assert_eq!(rows(&mut s, "SHOW TABLES"), vec![vec!["r1"], vec!["r2"]]);
    ok(&mut s, "CREATE DATABASE t2");
    ok(&mut s, "RENAME TABLE r1 TO t2.moved");
    assert_eq!(rows(&mut s, "SELECT id FROM t2.moved"), vec![vec!["2"]]);
    ok(&mut s, "ALTER TABLE t2.moved RENAME TO t2.back");
    ok(&mut s, "ALTER TABLE t2.back RENAME AS t1.r1");
    assert_eq!(rows(&mut s, "SELECT id FROM r1"), vec![vec!["2"]]);
    let mut none = session(&db.server, 2);
    assert_eq!(err(&mut none, "RENAME TABLE r1 TO r6"), 1046);

    // A transaction that wrote r2 holds the rename up (1205 once lock_wait_timeout passes);
    // its rows are committed under the old name, then the rename takes them along.
    let mut w = session(&db.server, 3);
    ok(&mut w, "USE t1");
    ok(&mut w, "BEGIN");
    ok(&mut w, "INSERT INTO r2 VALUES (5, 50)");
    ok(&mut s, "SET SESSION lock_wait_timeout = 1");
    assert_eq!(err(&mut s, "RENAME TABLE r2 TO r4"), 1205);
    ok(&mut w, "COMMIT");
    ok(&mut s, "RENAME TABLE r2 TO r4");
    assert_eq!(
        rows(&mut s, "SELECT id FROM r4 ORDER BY id"),
        vec![vec!["1"], vec!["5"]]
    );
}

#[test]
fn a_rename_survives_restarts() {
    let dir = common::TempDir::new("rename-restart");
    let open = || Server::open(ServerConfig::new(dir.path())).unwrap().0;
    let server = open();
    let mut s = session(&server, 1);
    for sql in [
        "CREATE DATABASE d",
        "CREATE TABLE d.a (id INT PRIMARY KEY)",
        "INSERT INTO d.a VALUES (1)",
        "RENAME TABLE d.a TO d.b",
        "INSERT INTO d.b VALUES (2)",
    ] {
        ok(&mut s, sql);
    }
    drop(s);
    server.shutdown().unwrap();
    // From the shutdown's checkpoint.
    let server = open();
    let mut s = session(&server, 1);
    assert_eq!(
        rows(&mut s, "SELECT id FROM d.b ORDER BY id"),
        vec![vec!["1"], vec!["2"]]
    );
    assert_eq!(err(&mut s, "SELECT id FROM d.a"), 1146);
    ok(&mut s, "FLUSH BINARY LOGS");
    drop(s);
    server.shutdown().unwrap();
    let server = open();
    let mut s = session(&server, 1);
    assert_eq!(
        rows(&mut s, "SELECT id FROM d.b ORDER BY id"),
        vec![vec!["1"], vec!["2"]]
    );
    drop(s);
    server.shutdown().unwrap();
}
