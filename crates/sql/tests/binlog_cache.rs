//! The binlog cache through SQL: `binlog_cache_size`, `max_binlog_cache_size` and the statement
//! cache variables with MariaDB 10.11's ranges, rounding and answers; a statement whose
//! events would exceed `max_binlog_cache_size` fails with 1197 and is rolled back while the
//! transaction stays open (checked against MariaDB 10.11); `Binlog_cache_use` and
//! `Binlog_cache_disk_use` count as MariaDB's.

mod common;
use common::{err, fail, ok, text_rows as rows, Db, TempDir};
use onelog_sql::{Server, ServerConfig, Session};

fn one(s: &mut Session, sql: &str) -> String {
    rows(s, sql)[0][0].clone()
}

fn status(s: &mut Session, name: &str) -> u64 {
    rows(s, &format!("SHOW GLOBAL STATUS LIKE '{name}'"))[0][1]
        .parse()
        .unwrap()
}

const VARS: [&str; 4] = [
    "binlog_cache_size",
    "max_binlog_cache_size",
    "binlog_stmt_cache_size",
    "max_binlog_stmt_cache_size",
];

#[test]
fn cache_variables_have_mariadbs_ranges_rounding_and_scopes() {
    let db = Db::open("binlog-cache-vars");
    let mut s = Session::new(db.server.clone(), 1, "root", "localhost");
    let defaults = [
        "32768",
        "18446744073709547520",
        "32768",
        "18446744073709547520",
    ];
    for (v, d) in VARS.iter().zip(defaults) {
        assert_eq!(one(&mut s, &format!("SELECT @@global.{v}")), d, "{v}");
        assert_eq!(one(&mut s, &format!("SELECT @@{v}")), d, "{v}");
        for (set, got) in [
            ("5000", "4096"),
            ("1", "4096"),
            ("-1", "4096"),
            ("18446744073709551615", "18446744073709547520"),
        ] {
            ok(&mut s, &format!("SET GLOBAL {v}={set}"));
            assert_eq!(
                rows(&mut s, "SHOW WARNINGS"),
                [[
                    "Warning".to_string(),
                    "1292".into(),
                    format!("Truncated incorrect {v} value: '{set}'")
                ]],
                "{v}={set}"
            );
            assert_eq!(
                one(&mut s, &format!("SELECT @@global.{v}")),
                got,
                "{v}={set}"
            );
        }
        ok(&mut s, &format!("SET GLOBAL {v}=8192"));
        assert!(rows(&mut s, "SHOW WARNINGS").is_empty());
        assert_eq!(one(&mut s, &format!("SELECT @@global.{v}")), "8192");
        assert_eq!(err(&mut s, &format!("SET GLOBAL {v}='abc'")), 1232);
        assert_eq!(err(&mut s, &format!("SET GLOBAL {v}=1.5")), 1232);
        assert_eq!(err(&mut s, &format!("SET SESSION {v}=8192")), 1229);
        assert_eq!(err(&mut s, &format!("SET {v}=8192")), 1229);
        assert_eq!(err(&mut s, &format!("SELECT @@session.{v}")), 1238);
        ok(&mut s, &format!("SET GLOBAL {v}=DEFAULT"));
        assert_eq!(one(&mut s, &format!("SELECT @@global.{v}")), d, "{v}");
    }
    let shown = rows(&mut s, "SHOW GLOBAL VARIABLES LIKE '%binlog%cache_size'");
    assert_eq!(shown.len(), 4, "{shown:?}");
    // Live: the engine holds the values.
    ok(&mut s, "SET GLOBAL binlog_cache_size=65536");
    ok(&mut s, "SET GLOBAL max_binlog_cache_size=1048576");
    let l = db.server.engine().binlog_cache_limits();
    assert_eq!((l.memory, l.max), (65536, 1 << 20));
}

#[test]
fn a_statement_past_max_binlog_cache_size_fails_with_1197_and_the_transaction_goes_on() {
    let db = Db::open("binlog-cache-full");
    let mut s = Session::new(db.server.clone(), 1, "root", "localhost");
    ok(&mut s, "CREATE DATABASE d");
    ok(&mut s, "USE d");
    ok(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(2000))",
    );
    ok(&mut s, "CREATE TABLE u (id INT PRIMARY KEY)");
    ok(&mut s, "SET GLOBAL binlog_cache_size=4096");
    ok(&mut s, "SET GLOBAL max_binlog_cache_size=8192");
    let use0 = status(&mut s, "Binlog_cache_use");
    // The limits are taken when a transaction starts.
    ok(&mut s, "BEGIN");
    ok(&mut s, "INSERT INTO u VALUES (1)");
    ok(&mut s, "INSERT INTO t VALUES (1, REPEAT('a', 1500))");
    let many = (2..30)
        .map(|i| format!("({i}, REPEAT('b', 1500))"))
        .collect::<Vec<_>>()
        .join(",");
    let e = fail(&mut s, &format!("INSERT INTO t VALUES {many}"));
    assert_eq!(e.code, 1197);
    assert_eq!(
        e.message,
        "Multi-statement transaction required more than 'max_binlog_cache_size' bytes of storage; increase this mariadbd variable and try again"
    );
    assert_eq!(
        rows(&mut s, "SHOW WARNINGS"),
        [
            ["Error", "1197", e.message.as_str()],
            [
                "Error",
                "1534",
                "Writing one row to the row-based binary log failed"
            ]
        ]
    );
    // The statement is rolled back, the transaction and its earlier statements stay.
    assert_eq!(one(&mut s, "SELECT COUNT(*) FROM t"), "1");
    assert_eq!(one(&mut s, "SELECT COUNT(*) FROM u"), "1");
    ok(&mut s, "INSERT INTO u VALUES (2)");
    ok(&mut s, "COMMIT");
    assert_eq!(one(&mut s, "SELECT COUNT(*) FROM t"), "1");
    assert_eq!(one(&mut s, "SELECT COUNT(*) FROM u"), "2");
    assert_eq!(status(&mut s, "Binlog_cache_use"), use0 + 1);
    // Autocommit: the statement's transaction is rolled back.
    assert_eq!(err(&mut s, &format!("INSERT INTO t VALUES {many}")), 1197);
    assert_eq!(one(&mut s, "SELECT COUNT(*) FROM t"), "1");
    // Within binlog_cache_size the maximum is not checked (MariaDB checks at its spills).
    ok(&mut s, "SET GLOBAL binlog_cache_size=1048576");
    ok(&mut s, &format!("INSERT INTO t VALUES {many}"));
    assert_eq!(one(&mut s, "SELECT COUNT(*) FROM t"), "29");
}

#[test]
fn cache_use_counts_transactions_with_events_and_disk_use_those_that_spilled() {
    let db = Db::open("binlog-cache-use");
    let mut s = Session::new(db.server.clone(), 1, "root", "localhost");
    ok(&mut s, "CREATE DATABASE d");
    ok(&mut s, "USE d");
    ok(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(2000))",
    );
    let stats = |s: &mut Session| {
        (
            status(s, "Binlog_cache_use"),
            status(s, "Binlog_cache_disk_use"),
            status(s, "Binlog_stmt_cache_use"),
            status(s, "Binlog_stmt_cache_disk_use"),
        )
    };
    assert_eq!(stats(&mut s), (0, 0, 0, 0));
    ok(&mut s, "INSERT INTO t VALUES (1, 'a')");
    assert_eq!(stats(&mut s), (1, 0, 0, 0));
    ok(&mut s, "BEGIN");
    ok(&mut s, "INSERT INTO t VALUES (2, 'a')");
    ok(&mut s, "ROLLBACK");
    assert_eq!(stats(&mut s), (2, 0, 0, 0));
    // Nothing written: not counted.
    ok(&mut s, "BEGIN");
    ok(&mut s, "SELECT * FROM t");
    ok(&mut s, "COMMIT");
    ok(&mut s, "CREATE TABLE x (a INT PRIMARY KEY)");
    assert_eq!(stats(&mut s), (2, 0, 0, 0));
    ok(&mut s, "SET GLOBAL binlog_cache_size=4096");
    let many = (10..40)
        .map(|i| format!("({i}, REPEAT('b', 1500))"))
        .collect::<Vec<_>>()
        .join(",");
    ok(&mut s, &format!("INSERT INTO t VALUES {many}"));
    ok(&mut s, "UPDATE t SET v = REPEAT('c', 1400) WHERE id >= 10");
    assert_eq!(stats(&mut s), (4, 2, 0, 0));
    assert_eq!(
        one(&mut s, "SELECT COUNT(*) FROM t WHERE v LIKE 'c%'"),
        "30"
    );
}

#[test]
fn startup_sizes_and_tmpdir_are_the_servers() {
    let d = TempDir::new("binlog-cache-startup");
    let tmp = d.path().join("spill");
    std::fs::create_dir_all(&tmp).unwrap();
    let mut cfg = ServerConfig::new(d.path().join("data"));
    cfg.binlog_cache_size = 8192;
    cfg.max_binlog_cache_size = 1 << 20;
    cfg.tmpdir = Some(tmp.clone());
    let server = Server::open(cfg).unwrap().0;
    let mut s = Session::new(server.clone(), 1, "root", "localhost");
    assert_eq!(one(&mut s, "SELECT @@binlog_cache_size"), "8192");
    assert_eq!(one(&mut s, "SELECT @@max_binlog_cache_size"), "1048576");
    assert_eq!(one(&mut s, "SELECT @@tmpdir"), tmp.to_string_lossy());
    assert_eq!(err(&mut s, "SET GLOBAL tmpdir='/x'"), 1238);
    ok(&mut s, "CREATE DATABASE d");
    ok(
        &mut s,
        "CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(2000))",
    );
    let many = (0..20)
        .map(|i| format!("({i}, REPEAT('b', 1500))"))
        .collect::<Vec<_>>()
        .join(",");
    ok(&mut s, &format!("INSERT INTO d.t VALUES {many}"));
    assert_eq!(status(&mut s, "Binlog_cache_disk_use"), 1);
    // The spill file was unlinked at once: nothing is left in tmpdir.
    assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 0);
    let _ = server.shutdown();
}
