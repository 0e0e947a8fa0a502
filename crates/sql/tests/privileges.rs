//! Privilege enforcement on ordinary statements (SELECT/INSERT/UPDATE/DELETE/REPLACE, DDL,
//! CREATE/DROP DATABASE, USE) through `Session::query` / `prepare` / `execute` on a real
//! server: MariaDB's error codes and texts (1142 for tables, 1044 for databases), grants at
//! `db.*` and `*.*`, REPLICATION SLAVE giving no table access, prepared statements checked
//! again after REVOKE / DROP USER; and the diagnostics area (`@@warning_count`, SHOW
//! WARNINGS / ERRORS) kept by statements that only read it; `Session::reset` rebuilding the
//! session variables from the globals.

use onelog_sql::{Output, Session, Value};

mod common;
use common::{fail, ok, Db};

fn open() -> Db {
    Db::open("priv")
}

fn root(db: &Db) -> Session {
    Session::new(db.server.clone(), 1, "root", "localhost")
}

fn code(s: &mut Session, sql: &str) -> u16 {
    common::err(s, sql)
}

fn rows(s: &mut Session, sql: &str) -> Vec<Vec<String>> {
    match ok(s, sql) {
        Output::Rows { rows, .. } => rows
            .iter()
            .map(|r| {
                r.iter()
                    .map(|v| match v {
                        Value::Null => "NULL".to_string(),
                        Value::Int(i) => i.to_string(),
                        Value::UInt(u) => u.to_string(),
                        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
                        other => format!("{other:?}"),
                    })
                    .collect()
            })
            .collect(),
        o => panic!("{sql}: expected rows, got {o:?}"),
    }
}

fn one(s: &mut Session, sql: &str) -> String {
    rows(s, sql)[0][0].clone()
}

/// Two databases with a table each, and the user `app`@`%` without any grant.
fn setup(db: &Db) -> Session {
    let mut r = root(db);
    for d in ["shop", "other"] {
        ok(&mut r, &format!("CREATE DATABASE {d}"));
        ok(
            &mut r,
            &format!("CREATE TABLE {d}.t (id INT PRIMARY KEY, v INT)"),
        );
        ok(
            &mut r,
            &format!("INSERT INTO {d}.t VALUES (1, 10), (2, 20)"),
        );
    }
    ok(&mut r, "CREATE USER 'app'@'%' IDENTIFIED BY 'pw'");
    r
}

fn app(db: &Db) -> Session {
    Session::new(db.server.clone(), 2, "app", "10.1.2.3")
}

#[test]
fn user_without_grants_is_refused_every_table_and_database_statement() {
    let db = open();
    let _root = setup(&db);
    let mut s = app(&db);
    let e = fail(&mut s, "SELECT * FROM shop.t");
    assert_eq!(e.code, 1142);
    assert_eq!(e.sqlstate, "42000");
    assert_eq!(
        e.message,
        "SELECT command denied to user 'app'@'10.1.2.3' for table `shop`.`t`"
    );
    // A missing table is refused the same way (no existence leak).
    assert_eq!(code(&mut s, "SELECT * FROM shop.nope"), 1142);
    let e = fail(&mut s, "INSERT INTO shop.t VALUES (3, 30)");
    assert_eq!(
        e.message,
        "INSERT command denied to user 'app'@'10.1.2.3' for table `shop`.`t`"
    );
    assert!(fail(&mut s, "UPDATE shop.t SET v = 1 WHERE id = 1")
        .message
        .starts_with("UPDATE command denied"));
    assert!(fail(&mut s, "DELETE FROM shop.t WHERE id = 1")
        .message
        .starts_with("DELETE command denied"));
    assert!(fail(&mut s, "REPLACE INTO shop.t VALUES (1, 1)")
        .message
        .starts_with("INSERT,DELETE command denied"));
    assert!(fail(&mut s, "CREATE TABLE shop.n (id INT PRIMARY KEY)")
        .message
        .starts_with("CREATE command denied"));
    assert!(fail(&mut s, "DROP TABLE shop.t")
        .message
        .starts_with("DROP command denied"));
    assert!(fail(&mut s, "TRUNCATE TABLE shop.t")
        .message
        .starts_with("DROP command denied"));
    assert!(fail(&mut s, "CREATE INDEX iv ON shop.t (v)")
        .message
        .starts_with("INDEX command denied"));
    assert!(fail(&mut s, "ALTER TABLE shop.t ADD INDEX iv (v)")
        .message
        .starts_with("ALTER command denied"));
    let e = fail(&mut s, "CREATE DATABASE newdb");
    assert_eq!(e.code, 1044);
    assert_eq!(
        e.message,
        "Access denied for user 'app'@'%' to database 'newdb'"
    );
    assert_eq!(code(&mut s, "DROP DATABASE shop"), 1044);
    let e = fail(&mut s, "USE shop");
    assert_eq!(
        (e.code, e.message.as_str()),
        (1044, "Access denied for user 'app'@'%' to database 'shop'")
    );
    assert_eq!(s.use_database("shop").unwrap_err().code, 1044);
    // Unknown databases too (MariaDB checks the privilege first).
    assert_eq!(code(&mut s, "USE nosuchdb"), 1044);
    // Statements without tables still work; nothing was changed.
    assert_eq!(one(&mut s, "SELECT 1 + 1"), "2");
    assert_eq!(
        rows(&mut s, "SHOW DATABASES"),
        vec![vec!["information_schema"]]
    );
    let mut r = root(&db);
    assert_eq!(one(&mut r, "SELECT COUNT(*) FROM shop.t"), "2");
    assert_eq!(one(&mut r, "SELECT v FROM shop.t WHERE id = 1"), "10");
}

#[test]
fn database_grant_allows_work_in_that_database_only() {
    let db = open();
    let mut r = setup(&db);
    ok(&mut r, "GRANT ALL ON shop.* TO 'app'@'%'");
    let mut s = app(&db);
    ok(&mut s, "USE shop");
    assert_eq!(s.current_database(), Some("shop"));
    ok(&mut s, "INSERT INTO t VALUES (3, 30)");
    ok(&mut s, "UPDATE t SET v = v + 1 WHERE id = 3");
    ok(&mut s, "REPLACE INTO t VALUES (2, 21)");
    ok(
        &mut s,
        "INSERT INTO t VALUES (1, 0) ON DUPLICATE KEY UPDATE v = 11",
    );
    ok(&mut s, "DELETE FROM t WHERE id = 3");
    assert_eq!(
        rows(&mut s, "SELECT id, v FROM t ORDER BY id"),
        vec![vec!["1", "11"], vec!["2", "21"]]
    );
    ok(&mut s, "CREATE TABLE n (id INT PRIMARY KEY, w INT)");
    ok(&mut s, "CREATE INDEX iw ON n (w)");
    ok(&mut s, "INSERT INTO n SELECT id, v FROM t");
    ok(&mut s, "TRUNCATE TABLE n");
    ok(&mut s, "DROP TABLE n");
    // A join across databases needs SELECT on both.
    let e = fail(&mut s, "SELECT * FROM t JOIN other.t o ON o.id = t.id");
    assert_eq!(
        e.message,
        "SELECT command denied to user 'app'@'10.1.2.3' for table `other`.`t`"
    );
    assert_eq!(code(&mut s, "SELECT * FROM other.t"), 1142);
    assert_eq!(code(&mut s, "INSERT INTO other.t VALUES (9, 9)"), 1142);
    assert_eq!(code(&mut s, "INSERT INTO t SELECT * FROM other.t"), 1142);
    assert_eq!(code(&mut s, "USE other"), 1044);
    assert_eq!(s.current_database(), Some("shop"));
    assert_eq!(code(&mut s, "CREATE DATABASE newdb"), 1044);
    assert_eq!(
        rows(&mut s, "SHOW DATABASES"),
        vec![vec!["information_schema"], vec!["shop"]]
    );

    // Only SELECT: reads work, writes are refused with the missing privilege's name.
    ok(&mut r, "CREATE USER 'ro'@'%'");
    ok(&mut r, "GRANT SELECT ON shop.* TO 'ro'@'%'");
    let mut ro = Session::new(db.server.clone(), 3, "ro", "10.0.0.1");
    ok(&mut ro, "USE shop");
    assert_eq!(one(&mut ro, "SELECT COUNT(*) FROM t"), "2");
    assert!(fail(&mut ro, "UPDATE t SET v = 0")
        .message
        .starts_with("UPDATE command denied"));
    // Only UPDATE: an UPDATE with a WHERE clause also needs SELECT.
    ok(&mut r, "CREATE USER 'wo'@'%'");
    ok(&mut r, "GRANT UPDATE ON shop.* TO 'wo'@'%'");
    let mut wo = Session::new(db.server.clone(), 4, "wo", "10.0.0.1");
    ok(&mut wo, "UPDATE shop.t SET v = 5");
    assert!(fail(&mut wo, "UPDATE shop.t SET v = 6 WHERE id = 1")
        .message
        .starts_with("SELECT command denied"));
    // COM_FIELD_LIST needs SELECT too.
    wo.use_database("shop").unwrap();
    assert_eq!(wo.field_list("t", "").unwrap_err().code, 1142);
    assert_eq!(ro.field_list("t", "").unwrap().len(), 2);
}

#[test]
fn global_grant_gives_everything_and_replication_slave_gives_no_table_access() {
    let db = open();
    let mut r = setup(&db);
    ok(&mut r, "CREATE USER 'repl'@'%'");
    ok(&mut r, "GRANT REPLICATION SLAVE ON *.* TO 'repl'@'%'");
    let mut repl = Session::new(db.server.clone(), 5, "repl", "10.0.0.2");
    assert_eq!(code(&mut repl, "SELECT * FROM shop.t"), 1142);
    assert_eq!(code(&mut repl, "INSERT INTO other.t VALUES (5, 5)"), 1142);
    assert_eq!(code(&mut repl, "USE shop"), 1044);
    assert_eq!(code(&mut repl, "CREATE DATABASE x"), 1044);

    ok(&mut r, "GRANT ALL ON *.* TO 'app'@'%'");
    let mut s = app(&db);
    ok(&mut s, "USE other");
    ok(&mut s, "INSERT INTO t VALUES (3, 30)");
    assert_eq!(one(&mut s, "SELECT COUNT(*) FROM shop.t"), "2");
    ok(&mut s, "CREATE DATABASE third");
    ok(&mut s, "CREATE TABLE third.t (id INT PRIMARY KEY)");
    ok(&mut s, "ALTER TABLE third.t ADD UNIQUE INDEX u (id)");
    ok(&mut s, "DROP TABLE third.t");
    ok(&mut s, "DROP DATABASE third");
    assert_eq!(
        rows(&mut s, "SHOW DATABASES")
            .iter()
            .filter(|r| r[0] == "shop" || r[0] == "other")
            .count(),
        2
    );
    // root keeps working.
    ok(&mut r, "USE shop");
    ok(&mut r, "INSERT INTO t VALUES (7, 70)");
    assert_eq!(one(&mut r, "SELECT COUNT(*) FROM t"), "3");
}

#[test]
fn grants_take_effect_on_open_sessions_and_prepared_statements_are_checked_again() {
    let db = open();
    let mut r = setup(&db);
    let mut s = app(&db);
    // A grant reaches an open session at its next statement.
    assert_eq!(code(&mut s, "SELECT v FROM shop.t WHERE id = 1"), 1142);
    assert_eq!(
        s.prepare("SELECT v FROM shop.t WHERE id = ?")
            .unwrap_err()
            .code,
        1142
    );
    ok(&mut r, "GRANT SELECT, INSERT ON shop.* TO 'app'@'%'");
    assert_eq!(one(&mut s, "SELECT v FROM shop.t WHERE id = 1"), "10");
    let sel = s.prepare("SELECT v FROM shop.t WHERE id = ?").unwrap();
    let ins = s.prepare("INSERT INTO shop.t VALUES (?, ?)").unwrap();
    let out = s.execute(sel.stmt_id, &[Value::Int(2)]).unwrap();
    assert!(matches!(out, Output::Rows { ref rows, .. } if rows.len() == 1));
    s.execute(ins.stmt_id, &[Value::Int(5), Value::Int(50)])
        .unwrap();

    // REVOKE: the cached plans are refused at their next execution.
    ok(&mut r, "REVOKE INSERT ON shop.* FROM 'app'@'%'");
    let e = s
        .execute(ins.stmt_id, &[Value::Int(6), Value::Int(60)])
        .unwrap_err();
    assert_eq!(e.code, 1142);
    assert!(e.message.starts_with("INSERT command denied"));
    s.execute(sel.stmt_id, &[Value::Int(2)]).unwrap();

    // DROP USER: the open session keeps no privilege.
    ok(&mut r, "DROP USER 'app'@'%'");
    assert_eq!(
        s.execute(sel.stmt_id, &[Value::Int(2)]).unwrap_err().code,
        1142
    );
    assert_eq!(code(&mut s, "SELECT * FROM shop.t"), 1142);
    assert_eq!(code(&mut s, "USE shop"), 1044);
    assert_eq!(one(&mut r, "SELECT COUNT(*) FROM shop.t"), "3");
}

#[test]
fn warning_count_and_show_warnings_report_the_previous_statement() {
    let db = open();
    let mut s = root(&db);
    ok(&mut s, "CREATE DATABASE d");
    ok(&mut s, "USE d");
    ok(&mut s, "CREATE TABLE t (id INT PRIMARY KEY, v INT)");
    ok(&mut s, "INSERT INTO t VALUES (1, 1)");
    // INSERT IGNORE of a duplicate: one warning.
    match ok(&mut s, "INSERT IGNORE INTO t VALUES (1, 2)") {
        Output::Ok { warnings, .. } => assert_eq!(warnings, 1),
        o => panic!("{o:?}"),
    }
    assert_eq!(one(&mut s, "SELECT @@warning_count"), "1");
    assert_eq!(one(&mut s, "SELECT @@session.warning_count"), "1");
    assert_eq!(one(&mut s, "SELECT @@error_count"), "0");
    assert_eq!(rows(&mut s, "SHOW WARNINGS").len(), 1);
    assert_eq!(one(&mut s, "SHOW COUNT(*) WARNINGS"), "1");
    assert_eq!(s.warning_count(), 1);
    // A statement that uses a table clears them.
    assert_eq!(one(&mut s, "SELECT COUNT(*) FROM t"), "1");
    assert_eq!(one(&mut s, "SELECT @@warning_count"), "0");
    // So does one that reads anything else.
    ok(&mut s, "INSERT IGNORE INTO t VALUES (1, 2)");
    assert_eq!(one(&mut s, "SELECT 1"), "1");
    assert_eq!(s.warning_count(), 0);

    // An error is the condition of the failed statement (SHOW ERRORS, @@error_count).
    assert_eq!(code(&mut s, "SELECT * FROM nope"), 1146);
    assert_eq!(one(&mut s, "SELECT @@error_count"), "1");
    assert_eq!(one(&mut s, "SELECT @@warning_count"), "1");
    let e = rows(&mut s, "SHOW ERRORS");
    assert_eq!(e.len(), 1);
    assert_eq!(e[0][0], "Error");
    assert_eq!(e[0][1], "1146");
    assert_eq!(rows(&mut s, "SHOW WARNINGS").len(), 1);
    // Prepared: the same rules.
    ok(&mut s, "INSERT IGNORE INTO t VALUES (1, 2)");
    let p = s.prepare("SELECT @@warning_count").unwrap();
    let out = s.execute(p.stmt_id, &[]).unwrap();
    match out {
        Output::Rows { rows, .. } => assert_eq!(rows[0][0], Value::Int(1)),
        o => panic!("{o:?}"),
    }
}

#[test]
fn reset_rebuilds_session_variables_from_the_globals() {
    let db = open();
    let mut s = root(&db);
    ok(&mut s, "SET SESSION wait_timeout = 77");
    ok(&mut s, "SET @u = 5");
    assert_eq!(one(&mut s, "SELECT @@session.wait_timeout"), "77");
    let mut other = root(&db);
    ok(&mut other, "SET GLOBAL wait_timeout = 1234");
    // The session keeps its own value until COM_RESET_CONNECTION.
    assert_eq!(one(&mut s, "SELECT @@session.wait_timeout"), "77");
    s.reset();
    assert_eq!(one(&mut s, "SELECT @@session.wait_timeout"), "1234");
    assert_eq!(one(&mut s, "SELECT @u"), "NULL");
    assert!(s.autocommit());
    assert!(!s.in_transaction());
    ok(&mut other, "SET GLOBAL wait_timeout = 28800");
}

/// CURRENT_USER() is the account (its host pattern), USER() the client, as MariaDB 10.11.14
/// answers for an account `u1@'%'` logged in from localhost.
#[test]
fn current_user_names_the_account_and_user_the_client() {
    let db = open();
    let mut r = root(&db);
    ok(&mut r, "create user u1@'%'");
    let mut s = Session::new(db.server.clone(), 2, "u1", "localhost");
    assert_eq!(one(&mut s, "select current_user()"), "u1@%");
    assert_eq!(one(&mut s, "select user()"), "u1@localhost");
    assert_eq!(one(&mut r, "select current_user()"), "root@localhost");
}
