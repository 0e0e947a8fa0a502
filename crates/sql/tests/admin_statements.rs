//! End-to-end tests of the administration statements through `Session::query` on a real
//! server in a temporary directory: system variables (SET / SELECT @@ round trips, scopes,
//! errors, durability changes reaching the log), status counters, SHOW over the catalog,
//! accounts (durable across restart, never logging a plain password), and the binlog
//! statements (SHOW BINLOG EVENTS with the committed GTIDs, FLUSH / PURGE BINARY LOGS).

use std::path::Path;
use std::sync::Arc;

use onelog_log::{Durability, RecordKind};
use onelog_sql::server::ConnectionInfo;
use onelog_sql::{Output, Server, ServerConfig, Session, Value};

mod common;
use common::{err, ok, text_rows as rows, TempDir};

fn open(dir: &Path) -> Arc<Server> {
    let mut cfg = ServerConfig::new(dir);
    cfg.max_binlog_size = 1 << 20;
    cfg.server_id = 7;
    cfg.port = 3399;
    Server::open(cfg).unwrap().0
}

fn root(server: &Arc<Server>) -> Session {
    Session::new(server.clone(), 1, "root", "localhost")
}

fn one(s: &mut Session, sql: &str) -> String {
    let r = rows(s, sql);
    assert_eq!(r.len(), 1, "{sql}: {r:?}");
    r[0][0].clone()
}

/// The value column of `SHOW ... LIKE 'name'`.
fn show_value(s: &mut Session, what: &str, name: &str) -> String {
    let r = rows(s, &format!("SHOW {what} LIKE '{name}'"));
    assert_eq!(r.len(), 1, "{what} {name}: {r:?}");
    r[0][1].clone()
}

#[test]
fn system_variables_round_trip_through_set_and_select() {
    let d = TempDir::new("admin");
    let server = open(d.path());
    let mut s = root(&server);
    assert_eq!(one(&mut s, "SELECT @@version_comment"), "onelog");
    assert_eq!(one(&mut s, "SELECT @@server_id"), "7");
    assert_eq!(one(&mut s, "SELECT @@global.port"), "3399");
    assert_eq!(show_value(&mut s, "VARIABLES", "log_bin"), "ON");
    assert_eq!(
        show_value(&mut s, "GLOBAL VARIABLES", "binlog_format"),
        "ROW"
    );
    assert_eq!(
        show_value(&mut s, "VARIABLES", "tx_isolation"),
        "REPEATABLE-READ"
    );

    ok(
        &mut s,
        "SET SESSION sql_mode = 'strict_all_tables', @@session.wait_timeout = 100",
    );
    assert_eq!(one(&mut s, "SELECT @@sql_mode"), "STRICT_ALL_TABLES");
    assert_eq!(one(&mut s, "SELECT @@wait_timeout"), "100");
    ok(&mut s, "SET wait_timeout = DEFAULT");
    assert_eq!(one(&mut s, "SELECT @@wait_timeout"), "28800");
    ok(&mut s, "SET GLOBAL max_connections = 500");
    assert_eq!(one(&mut s, "SELECT @@max_connections"), "500");
    assert_eq!(
        onelog_sql::sysvar::global_var(&server, "max_connections").unwrap(),
        Value::Int(500)
    );
    assert_eq!(
        onelog_sql::sysvar::global_var(&server, "wait_timeout").unwrap(),
        Value::Int(28800)
    );
    assert_eq!(
        onelog_sql::sysvar::global_var(&server, "autocommit")
            .unwrap_err()
            .code,
        1238
    );
    // SET GLOBAL reaches new sessions, not this one.
    ok(&mut s, "SET GLOBAL innodb_lock_wait_timeout = 45");
    assert_eq!(one(&mut s, "SELECT @@innodb_lock_wait_timeout"), "50");
    let mut s2 = Session::new(server.clone(), 2, "root", "localhost");
    assert_eq!(one(&mut s2, "SELECT @@innodb_lock_wait_timeout"), "45");
    assert_eq!(
        one(&mut s2, "SELECT @@global.innodb_lock_wait_timeout"),
        "45"
    );
    // A variable onelog stores but does not act on: its current value is accepted (tools
    // re-set it), any other value refused, never stored and ignored.
    ok(&mut s, "SET GLOBAL net_read_timeout = 30");
    assert_eq!(err(&mut s, "SET GLOBAL net_read_timeout = 45"), 1235);
    assert_eq!(one(&mut s, "SELECT @@global.net_read_timeout"), "30");
    assert_eq!(err(&mut s, "SET NAMES latin1"), 1235);
    assert_eq!(err(&mut s, "SET time_zone = '+05:00'"), 1235);
    ok(&mut s, "SET time_zone = '+00:00'");
    assert_eq!(err(&mut s, "SET sql_mode = 'ANSI_QUOTES'"), 1235);
    assert_eq!(err(&mut s, "SET sql_mode = 'NO_SUCH_MODE'"), 1231);

    ok(&mut s, "SET @a = 5, @b := 'x'");
    assert_eq!(one(&mut s, "SELECT @a"), "5");
    assert_eq!(one(&mut s, "SELECT @b"), "x");
    ok(&mut s, "SET @c = 1 + 2");
    assert_eq!(one(&mut s, "SELECT @c"), "3");

    // Booleans: ON/OFF in SHOW, 1/0 in SELECT.
    ok(&mut s, "SET foreign_key_checks = OFF");
    assert_eq!(one(&mut s, "SELECT @@foreign_key_checks"), "0");
    assert_eq!(show_value(&mut s, "VARIABLES", "foreign_key_checks"), "OFF");

    // The binlog is the write-ahead log: it cannot be switched off for a session.
    assert_eq!(err(&mut s, "SET sql_log_bin = 0"), 1235);
    ok(&mut s, "SET sql_log_bin = 1");

    // The session's transaction_read_only is not acted on: READ ONLY is refused (START
    // TRANSACTION READ ONLY works); READ WRITE, the current value, is accepted.
    assert_eq!(err(&mut s, "SET SESSION TRANSACTION READ ONLY"), 1235);
    assert_eq!(one(&mut s, "SELECT @@tx_read_only"), "0");
    ok(&mut s, "SET SESSION TRANSACTION READ WRITE");

    // Errors with MariaDB's codes.
    assert_eq!(err(&mut s, "SELECT @@no_such_variable"), 1193);
    assert_eq!(err(&mut s, "SET no_such_variable = 1"), 1193);
    assert_eq!(err(&mut s, "SET GLOBAL version = 'x'"), 1238);
    assert_eq!(err(&mut s, "SET max_connections = 10"), 1229);
    assert_eq!(err(&mut s, "SET GLOBAL autocommit = 1"), 1228);
    assert_eq!(err(&mut s, "SET binlog_format = 'STATEMENT'"), 1231);
    assert_eq!(err(&mut s, "SET foreign_key_checks = 'maybe'"), 1231);
    assert_eq!(err(&mut s, "SET GLOBAL max_connections = 'many'"), 1232);

    // Isolation: REPEATABLE READ and READ COMMITTED (statement snapshots, see
    // tests/silent_divergences.rs); READ UNCOMMITTED and SERIALIZABLE are refused.
    match ok(
        &mut s,
        "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED",
    ) {
        Output::Ok { warnings, .. } => assert_eq!(warnings, 0),
        other => panic!("{other:?}"),
    }
    assert_eq!(one(&mut s, "SELECT @@tx_isolation"), "READ-COMMITTED");
    assert_eq!(
        err(
            &mut s,
            "SET SESSION TRANSACTION ISOLATION LEVEL READ UNCOMMITTED"
        ),
        1235
    );
    assert_eq!(
        err(
            &mut s,
            "SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE"
        ),
        1235
    );
    // The next-transaction-only form: accepted when it names the session's level.
    ok(&mut s, "SET TRANSACTION ISOLATION LEVEL READ COMMITTED");
    assert_eq!(
        err(&mut s, "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ"),
        1235
    );
    ok(&mut s, "SET transaction_isolation = 'REPEATABLE-READ'");

    ok(&mut s, "SET NAMES utf8mb4 COLLATE utf8mb4_bin");
    assert_eq!(one(&mut s, "SELECT @@character_set_client"), "utf8mb4");
    assert_eq!(one(&mut s, "SELECT @@collation_connection"), "utf8mb4_bin");
    assert_eq!(err(&mut s, "SET NAMES klingon"), 1115);

    // sync_binlog is accepted and ignored with a warning.
    match ok(&mut s, "SET GLOBAL sync_binlog = 1") {
        Output::Ok { warnings, .. } => assert_eq!(warnings, 1),
        other => panic!("{other:?}"),
    }
    let w = rows(&mut s, "SHOW WARNINGS");
    assert_eq!(w.len(), 1);
    assert_eq!(w[0][0], "Warning");
    assert!(w[0][2].contains("sync_binlog is ignored"), "{w:?}");
    assert_eq!(one(&mut s, "SHOW COUNT(*) WARNINGS"), "1");

    // SHOW VARIABLES WHERE as drivers send it.
    let r = rows(
        &mut s,
        "SHOW VARIABLES WHERE Variable_name IN ('max_allowed_packet', 'system_time_zone') OR Variable_name = 'time_zone'",
    );
    let names: Vec<&str> = r.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(
        names,
        ["max_allowed_packet", "system_time_zone", "time_zone"]
    );
    assert_eq!(r[0][1], (16u32 << 20).to_string());
    drop(s);
    drop(s2);
    server.shutdown().unwrap();
}

#[test]
fn durability_and_autocommit_settings_reach_the_log_and_the_session() {
    let d = TempDir::new("admin");
    let server = open(d.path());
    let mut s = root(&server);
    assert_eq!(server.engine().log().durability(), Durability::Level1);
    ok(&mut s, "SET GLOBAL innodb_flush_log_at_trx_commit = 2");
    assert_eq!(server.engine().log().durability(), Durability::Level2);
    assert_eq!(one(&mut s, "SELECT @@innodb_flush_log_at_trx_commit"), "2");
    assert_eq!(err(&mut s, "SET innodb_flush_log_at_trx_commit = 0"), 1229);
    ok(&mut s, "SET GLOBAL innodb_flush_log_at_trx_commit = 0");
    assert_eq!(server.engine().log().durability(), Durability::Level0);
    ok(&mut s, "SET GLOBAL innodb_flush_log_at_trx_commit = 1");
    assert_eq!(server.engine().log().durability(), Durability::Level1);

    ok(&mut s, "SET autocommit = 0");
    assert!(!s.autocommit());
    assert_eq!(one(&mut s, "SELECT @@autocommit"), "0");
    ok(&mut s, "SET autocommit = ON");
    assert!(s.autocommit());
    ok(&mut s, "SET SESSION innodb_lock_wait_timeout = 3");
    assert_eq!(
        onelog_sql::sysvar::lock_wait_timeout(&s),
        std::time::Duration::from_secs(3)
    );
    drop(s);
    server.shutdown().unwrap();
}

#[test]
fn show_statements_describe_the_catalog_like_mariadb() {
    let d = TempDir::new("admin");
    let server = open(d.path());
    let mut s = root(&server);
    ok(&mut s, "CREATE DATABASE shop");
    ok(&mut s, "USE shop");
    ok(
        &mut s,
        "CREATE TABLE items (id INT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, name VARCHAR(30) NOT NULL, price DECIMAL(10,2) DEFAULT 0.00, UNIQUE KEY by_name (name), KEY by_price (price))",
    );
    let dbs: Vec<String> = rows(&mut s, "SHOW DATABASES")
        .into_iter()
        .map(|r| r[0].clone())
        .collect();
    // information_schema and the read-only `mysql` schema are listed too, as MariaDB lists them.
    assert_eq!(dbs, ["information_schema", "mysql", "shop"]);
    assert_eq!(
        rows(&mut s, "SHOW DATABASES LIKE 'sh%'"),
        vec![vec!["shop".to_string()]]
    );
    assert_eq!(rows(&mut s, "SHOW TABLES"), vec![vec!["items".to_string()]]);
    assert_eq!(
        rows(&mut s, "SHOW FULL TABLES FROM shop"),
        vec![vec!["items".to_string(), "BASE TABLE".to_string()]]
    );
    assert!(rows(&mut s, "SHOW TABLES LIKE 'x%'").is_empty());
    assert_eq!(err(&mut s, "SHOW TABLES FROM nope"), 1049);

    let ct = rows(&mut s, "SHOW CREATE TABLE items");
    assert_eq!(ct[0][0], "items");
    assert_eq!(
        ct[0][1],
        "CREATE TABLE `items` (\n  `id` int(10) unsigned NOT NULL AUTO_INCREMENT,\n  `name` varchar(30) NOT NULL,\n  `price` decimal(10,2) DEFAULT 0.00,\n  PRIMARY KEY (`id`),\n  UNIQUE KEY `by_name` (`name`),\n  KEY `by_price` (`price`)\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci"
    );
    assert_eq!(err(&mut s, "SHOW CREATE TABLE nope"), 1146);

    let cols = rows(&mut s, "DESCRIBE items");
    assert_eq!(
        cols,
        vec![
            vec![
                "id",
                "int(10) unsigned",
                "NO",
                "PRI",
                "NULL",
                "auto_increment"
            ],
            vec!["name", "varchar(30)", "NO", "UNI", "NULL", ""],
            vec!["price", "decimal(10,2)", "YES", "MUL", "0.00", ""],
        ]
        .into_iter()
        .map(|r| r.into_iter().map(String::from).collect::<Vec<_>>())
        .collect::<Vec<_>>()
    );
    assert_eq!(
        rows(&mut s, "SHOW COLUMNS FROM items FROM shop LIKE 'p%'").len(),
        1
    );
    assert_eq!(
        rows(&mut s, "SHOW FULL COLUMNS FROM shop.items")[1][2],
        "utf8mb4_general_ci"
    );

    let idx = rows(&mut s, "SHOW INDEX FROM items");
    let keys: Vec<(&str, &str, &str)> = idx
        .iter()
        .map(|r| (r[2].as_str(), r[1].as_str(), r[4].as_str()))
        .collect();
    assert_eq!(
        keys,
        [
            ("PRIMARY", "0", "id"),
            ("by_name", "0", "name"),
            ("by_price", "1", "price")
        ]
    );

    let eng = rows(&mut s, "SHOW ENGINES");
    assert_eq!(eng[0][0..2], ["onelog".to_string(), "DEFAULT".to_string()]);
    assert_eq!(eng[1][0], "InnoDB");
    assert_eq!(
        rows(&mut s, "SHOW COLLATION LIKE 'utf8mb4_general_ci'")[0][2],
        "45"
    );
    assert_eq!(
        rows(&mut s, "SHOW CHARACTER SET LIKE 'utf8mb4'")[0][2],
        "utf8mb4_general_ci"
    );
    assert_eq!(one(&mut s, "SHOW CREATE DATABASE shop").as_str(), "shop");

    // PROCESSLIST shows registered connections; KILL flags one.
    let guard = server.register_connection(ConnectionInfo::new(1, "root", "localhost"));
    let other = server.register_connection(ConnectionInfo::new(9, "app", "10.0.0.2"));
    let pl = rows(&mut s, "SHOW PROCESSLIST");
    assert_eq!(pl.len(), 2);
    assert_eq!(
        pl[0][0..5],
        ["1", "root", "localhost", "shop", "Query"].map(String::from)
    );
    assert_eq!(pl[0][7], "SHOW PROCESSLIST");
    assert_eq!(pl[1][0..3], ["9", "app", "10.0.0.2"].map(String::from));
    assert_eq!(err(&mut s, "KILL 12345"), 1094);
    // KILL QUERY stops only a running statement: the connection stays.
    ok(&mut s, "KILL QUERY 9");
    assert!(!other.killed());
    ok(&mut s, "KILL 9");
    assert!(other.killed());
    assert!(!guard.killed());
    drop((guard, other));
    drop(s);
    server.shutdown().unwrap();
}

#[test]
fn status_counters_move_with_statements_and_commits() {
    let d = TempDir::new("admin");
    let server = open(d.path());
    let mut s = root(&server);
    let status =
        |s: &mut Session, n: &str| -> u64 { show_value(s, "GLOBAL STATUS", n).parse().unwrap() };
    let shows = status(&mut s, "Com_show_other");
    let commits = status(&mut s, "Binlog_commits");
    ok(&mut s, "CREATE DATABASE d");
    ok(&mut s, "CREATE TABLE d.t (id INT PRIMARY KEY)");
    ok(&mut s, "INSERT INTO d.t VALUES (1)");
    ok(&mut s, "SET @x = 1");
    assert_eq!(status(&mut s, "Com_show_other"), shows + 2);
    assert_eq!(status(&mut s, "Binlog_commits"), commits + 3);
    assert!(status(&mut s, "Binlog_group_commits") >= 3);
    assert!(status(&mut s, "Binlog_bytes_written") > 0);
    assert!(status(&mut s, "Onelog_log_fsyncs") >= 3);
    assert!(status(&mut s, "Com_set_option") >= 1);
    // The commit path's group sizes (issue 14): one session commits groups of one, and every
    // group is counted in exactly one bucket.
    let groups = status(&mut s, "Binlog_group_commits");
    let buckets: u64 = ["1", "2_3", "4_7", "8_15", "16_31", "32_63", "64_plus"]
        .iter()
        .map(|b| status(&mut s, &format!("Onelog_commit_groups_{b}")))
        .sum();
    assert_eq!(buckets, groups);
    assert_eq!(status(&mut s, "Onelog_commit_groups_1"), groups);
    for phase in ["queue_wait", "encode", "write", "apply", "sync", "ack"] {
        status(&mut s, &format!("Onelog_commit_{phase}_us"));
    }
    status(&mut s, "Onelog_log_fsync_busy_us");
    status(&mut s, "Onelog_log_rotation_wait_us");
    // A part of the apply time, never more than it.
    let apply = status(&mut s, "Onelog_commit_apply_us");
    assert!(status(&mut s, "Onelog_commit_apply_during_sync_us") <= apply);
    let all = rows(&mut s, "SHOW STATUS");
    for name in [
        "Uptime",
        "Threads_connected",
        "Questions",
        "Com_select",
        "Com_commit",
    ] {
        assert!(all.iter().any(|r| r[0] == name), "{name} missing");
    }
    drop(s);
    server.shutdown().unwrap();
}

fn logged_statements(server: &Server) -> Vec<String> {
    common::log_records(server)
        .into_iter()
        .filter(|rec| rec.kind == RecordKind::Ddl)
        .map(|rec| String::from_utf8_lossy(&rec.events).into_owned())
        .collect()
}

#[test]
fn accounts_are_durable_hashed_and_never_logged_in_plain_text() {
    let d = TempDir::new("admin");
    let server = open(d.path());
    // The bootstrap root logs in through the unix socket only (MariaDB 10.4+'s default).
    assert!(!server.root_has_no_password());
    let root_acc = server.lookup_account("root", "127.0.0.1").unwrap();
    assert!(root_acc.auth_hash.is_empty());
    assert!(root_acc.unix_socket && !root_acc.password_login);
    assert!(server.lookup_account("root", "10.1.1.1").is_none());
    let mut s = root(&server);
    ok(&mut s, "CREATE USER 'app'@'%' IDENTIFIED BY 's3cret-pw'");
    ok(&mut s, "CREATE USER 'app'@'localhost' IDENTIFIED BY PASSWORD '*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19'");
    assert_eq!(err(&mut s, "CREATE USER 'app'@'%'"), 1396);
    match ok(&mut s, "CREATE USER IF NOT EXISTS 'app'@'%'") {
        Output::Ok { warnings, .. } => assert_eq!(warnings, 1),
        other => panic!("{other:?}"),
    }
    ok(&mut s, "CREATE USER repl@'10.0.0.%'");
    ok(
        &mut s,
        "GRANT REPLICATION SLAVE ON *.* TO 'repl'@'10.0.0.%'",
    );
    ok(&mut s, "CREATE DATABASE shop");
    ok(
        &mut s,
        "GRANT ALL PRIVILEGES ON shop.* TO 'app'@'%' WITH GRANT OPTION",
    );
    ok(&mut s, "CREATE USER gone");
    ok(&mut s, "DROP USER gone");
    assert_eq!(err(&mut s, "DROP USER gone"), 1396);
    ok(&mut s, "DROP USER IF EXISTS gone");

    // The most specific host wins; hashes are SHA1(SHA1(pw)).
    let a = server.lookup_account("app", "10.9.9.9").unwrap();
    assert_eq!(a.host, "%");
    assert_eq!(a.auth_hash, onelog_sql::privilege::native_hash("s3cret-pw"));
    let l = server.lookup_account("app", "127.0.0.1").unwrap();
    assert_eq!(l.host, "localhost");
    assert_eq!(
        onelog_sql::privilege::hash_text(&l.auth_hash),
        "*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19"
    );
    assert_eq!(
        server.lookup_account("repl", "10.0.0.5").unwrap().host,
        "10.0.0.%"
    );
    assert!(server.lookup_account("repl", "10.0.1.5").is_none());

    let g = rows(&mut s, "SHOW GRANTS FOR 'app'@'%'");
    let hash = onelog_sql::privilege::hash_text(&a.auth_hash);
    assert_eq!(
        g,
        vec![
            vec![format!(
                "GRANT USAGE ON *.* TO `app`@`%` IDENTIFIED BY PASSWORD '{hash}'"
            )],
            vec!["GRANT ALL PRIVILEGES ON `shop`.* TO `app`@`%` WITH GRANT OPTION".to_string()],
        ]
    );
    assert_eq!(
        rows(&mut s, "SHOW GRANTS FOR 'repl'@'10.0.0.%'"),
        vec![vec![
            "GRANT REPLICATION SLAVE ON *.* TO `repl`@`10.0.0.%`".to_string()
        ]]
    );
    assert_eq!(
        rows(&mut s, "SHOW GRANTS"),
        vec![vec![
            "GRANT ALL PRIVILEGES ON *.* TO `root`@`localhost` IDENTIFIED VIA \
             mysql_native_password USING 'invalid' OR unix_socket WITH GRANT OPTION"
                .to_string()
        ]]
    );
    ok(&mut s, "REVOKE ALL PRIVILEGES ON shop.* FROM 'app'@'%'");
    assert_eq!(rows(&mut s, "SHOW GRANTS FOR 'app'@'%'").len(), 1);
    ok(&mut s, "SET PASSWORD FOR 'app'@'%' = PASSWORD('new-pw')");
    ok(
        &mut s,
        "ALTER USER 'repl'@'10.0.0.%' IDENTIFIED BY 'repl-pw'",
    );

    // Statement text in the log: hashes only.
    let logged = logged_statements(&server);
    assert!(logged
        .iter()
        .any(|q| q.contains("CREATE USER 'app'@'%' IDENTIFIED BY PASSWORD '*")));
    for secret in ["s3cret-pw", "new-pw", "repl-pw"] {
        assert!(
            !logged.iter().any(|q| q.contains(secret)),
            "{secret} logged"
        );
    }

    // A user without privileges on a database is refused there; with them, allowed.
    let mut app = Session::new(server.clone(), 5, "app", "10.9.9.9");
    assert_eq!(
        app.check_privilege("shop", Some("t"), onelog_sql::privilege::SELECT)
            .unwrap_err()
            .code,
        1142
    );
    assert_eq!(err(&mut app, "CREATE USER x"), 1227);
    assert_eq!(
        err(
            &mut app,
            "SET PASSWORD FOR 'repl'@'10.0.0.%' = PASSWORD('x')"
        ),
        1227
    );
    ok(&mut app, "SET PASSWORD = PASSWORD('mine')");
    // Administration statements check MariaDB's privileges too.
    assert_eq!(err(&mut app, "SHOW BINARY LOGS"), 1227);
    assert_eq!(err(&mut app, "FLUSH BINARY LOGS"), 1227);
    assert_eq!(err(&mut app, "RESET MASTER"), 1227);
    assert_eq!(err(&mut app, "SET GLOBAL max_connections = 10"), 1227);
    assert_eq!(err(&mut app, "SHOW TABLES FROM shop"), 1044);
    assert_eq!(err(&mut app, "SHUTDOWN"), 1227);
    // information_schema is listed for every account, as MariaDB lists it.
    assert_eq!(
        rows(&mut app, "SHOW DATABASES"),
        vec![vec!["information_schema".to_string()]]
    );
    ok(&mut s, "GRANT SELECT ON shop.* TO 'app'@'%'");
    assert_eq!(
        rows(&mut app, "SHOW DATABASES"),
        vec![
            vec!["information_schema".to_string()],
            vec!["shop".to_string()]
        ]
    );
    assert!(rows(&mut app, "SHOW TABLES FROM shop").is_empty());
    // REPLICATION SLAVE alone may dump but not SHOW MASTER STATUS (MariaDB 10.5.2+: BINLOG
    // MONITOR or SUPER), nor SHOW SLAVE HOSTS (REPLICATION MASTER ADMIN).
    let mut repl = Session::new(server.clone(), 6, "repl", "10.0.0.9");
    assert_eq!(err(&mut repl, "SHOW MASTER STATUS"), 1227);
    assert_eq!(err(&mut repl, "SHOW SLAVE HOSTS"), 1227);
    ok(&mut s, "GRANT BINLOG MONITOR ON *.* TO 'repl'@'10.0.0.%'");
    assert_eq!(rows(&mut repl, "SHOW MASTER STATUS").len(), 1);
    assert!(!rows(&mut repl, "SHOW BINLOG EVENTS").is_empty());
    drop(repl);
    drop(app);
    drop(s);
    server.shutdown().unwrap();
    drop(server);

    // After a restart (replay of the log and the shutdown checkpoint) the accounts are back.
    let server = open(d.path());
    let a = server.lookup_account("app", "10.9.9.9").unwrap();
    assert_eq!(a.auth_hash, onelog_sql::privilege::native_hash("mine"));
    let r = server.lookup_account("repl", "10.0.0.5").unwrap();
    assert_eq!(r.auth_hash, onelog_sql::privilege::native_hash("repl-pw"));
    assert!(server.lookup_account("gone", "1.2.3.4").is_none());
    let root_acc = server.lookup_account("root", "localhost").unwrap();
    assert!(root_acc.unix_socket && !root_acc.password_login);
    let mut s = root(&server);
    assert_eq!(
        rows(&mut s, "SHOW GRANTS FOR 'repl'@'10.0.0.%'")[0][0],
        format!(
            "GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO `repl`@`10.0.0.%` IDENTIFIED BY PASSWORD '{}'",
            onelog_sql::privilege::hash_text(&r.auth_hash)
        )
    );
    drop(s);
    server.shutdown().unwrap();
}

#[test]
fn binlog_statements_show_rotate_and_purge_segments() {
    let d = TempDir::new("admin");
    let server = open(d.path());
    let mut s = root(&server);
    ok(&mut s, "CREATE DATABASE d");
    ok(
        &mut s,
        "CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(10))",
    );
    ok(&mut s, "INSERT INTO d.t VALUES (1, 'a')");
    ok(&mut s, "BEGIN");
    ok(&mut s, "UPDATE d.t SET v = 'b' WHERE id = 1");
    ok(&mut s, "INSERT INTO d.t VALUES (2, 'c')");
    ok(&mut s, "COMMIT");

    let ms = rows(&mut s, "SHOW MASTER STATUS");
    assert_eq!(ms[0][0], "binlog.000001");
    let pos: u64 = ms[0][1].parse().unwrap();
    assert_eq!(rows(&mut s, "SHOW BINLOG STATUS"), ms);
    let logs = rows(&mut s, "SHOW BINARY LOGS");
    assert_eq!(
        logs,
        vec![vec!["binlog.000001".to_string(), pos.to_string()]]
    );

    // GTIDs: 0-7-1 is root's bootstrap, then the two DDLs and the two transactions.
    let ev = rows(&mut s, "SHOW BINLOG EVENTS");
    assert_eq!(ev[0][2], "Format_desc");
    assert!(
        ev[0][5].starts_with("Server ver: 10.11.9-MariaDB-onelog"),
        "{:?}",
        ev[0]
    );
    let gtids: Vec<&str> = ev
        .iter()
        .filter(|r| r[2] == "Gtid")
        .map(|r| r[5].as_str())
        .collect();
    assert_eq!(gtids.len(), 5, "{ev:?}");
    assert!(gtids[0].starts_with("GTID 0-7-1"));
    assert!(gtids[1].starts_with("GTID 0-7-2"));
    assert!(gtids[3].starts_with("BEGIN GTID 0-7-4"), "{gtids:?}");
    assert!(gtids[4].starts_with("BEGIN GTID 0-7-5"));
    assert!(
        ev.iter().any(|r| r[2] == "Query"
            && r[5] == "use `d`; CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(10))"),
        "{ev:?}"
    );
    let types: Vec<&str> = ev.iter().map(|r| r[2].as_str()).collect();
    assert!(types.contains(&"Table_map"));
    assert!(types.contains(&"Write_rows_v1"));
    assert!(types.contains(&"Update_rows_v1"));
    assert!(types.contains(&"Xid"));
    assert!(ev
        .iter()
        .any(|r| r[2] == "Table_map" && r[5].ends_with("(d.t)")));
    assert!(ev
        .iter()
        .any(|r| r[2] == "Xid" && r[5].starts_with("COMMIT /* xid=")));
    // Positions chain as in a classic file: the first event at 4, each one ends where the
    // next starts, and the last one ends at the master position.
    let last = ev.last().unwrap();
    assert_eq!(last[4].parse::<u64>().unwrap(), pos);
    assert_eq!(ev[0][1], "4");
    for w in ev.windows(2) {
        let end: u64 = w[0][4].parse().unwrap();
        let next: u64 = w[1][1].parse().unwrap();
        assert_eq!(next, end, "{w:?}");
    }
    let limited = rows(&mut s, "SHOW BINLOG EVENTS LIMIT 1, 2");
    assert_eq!(limited, ev[1..3].to_vec());
    let from: u64 = ev[3][1].parse().unwrap();
    assert_eq!(
        rows(&mut s, &format!("SHOW BINLOG EVENTS FROM {from}"))[0],
        ev[3]
    );
    assert_eq!(err(&mut s, "SHOW BINLOG EVENTS IN 'nope'"), 1220);

    // FLUSH BINARY LOGS starts a new segment.
    ok(&mut s, "FLUSH BINARY LOGS");
    ok(&mut s, "INSERT INTO d.t VALUES (3, 'd')");
    let logs = rows(&mut s, "SHOW BINARY LOGS");
    assert_eq!(logs.len(), 2);
    assert_eq!(logs[1][0], "binlog.000002");
    assert_eq!(rows(&mut s, "SHOW MASTER STATUS")[0][0], "binlog.000002");
    let ev2 = rows(&mut s, "SHOW BINLOG EVENTS IN 'binlog.000002'");
    assert!(
        ev2.iter()
            .any(|r| r[2] == "Gtid" && r[5].starts_with("BEGIN GTID 0-7-6")),
        "{ev2:?}"
    );
    assert_eq!(one(&mut s, "SELECT @@gtid_binlog_pos"), "0-7-6");
    assert_eq!(one(&mut s, "SELECT @@gtid_current_pos"), "0-7-6");
    assert_eq!(one(&mut s, "SELECT @@global.gtid_binlog_state"), "0-7-6");
    assert_eq!(one(&mut s, "SELECT @@gtid_slave_pos"), "");

    // PURGE is refused while segment 1 is newer than the last checkpoint.
    let had = server.engine().checkpoint_lsn();
    if had.is_none_or(|c| c < server.engine().log().segments()[0].end_lsn) {
        assert_eq!(err(&mut s, "PURGE BINARY LOGS TO 'binlog.000002'"), 1378);
        assert_eq!(rows(&mut s, "SHOW BINARY LOGS").len(), 2);
    }
    assert_eq!(err(&mut s, "PURGE BINARY LOGS TO 'binlog.000009'"), 1373);
    server.engine().checkpoint().unwrap();
    ok(&mut s, "PURGE BINARY LOGS TO 'binlog.000002'");
    assert_eq!(
        rows(&mut s, "SHOW BINARY LOGS")
            .into_iter()
            .map(|r| r[0].clone())
            .collect::<Vec<_>>(),
        ["binlog.000002"]
    );
    // BEFORE a date in the past purges nothing; the current segment is never purged.
    ok(&mut s, "PURGE BINARY LOGS BEFORE '2001-01-01 00:00:00'");
    ok(&mut s, "PURGE BINARY LOGS BEFORE '2999-01-01'");
    assert_eq!(rows(&mut s, "SHOW BINARY LOGS").len(), 1);
    // RESET MASTER: the binlog restarts at binlog.000001 with an empty GTID state; the
    // data stays.
    ok(&mut s, "RESET MASTER");
    assert_eq!(one(&mut s, "SELECT @@gtid_binlog_pos"), "");
    assert_eq!(one(&mut s, "SELECT @@global.gtid_binlog_state"), "");
    assert_eq!(
        rows(&mut s, "SHOW BINARY LOGS")
            .into_iter()
            .map(|r| r[0].clone())
            .collect::<Vec<_>>(),
        ["binlog.000001"]
    );
    assert_eq!(rows(&mut s, "SHOW MASTER STATUS")[0][0], "binlog.000001");
    assert_eq!(one(&mut s, "SELECT COUNT(*) FROM d.t"), "3");
    ok(&mut s, "INSERT INTO d.t VALUES (4, 'e')");
    assert_eq!(one(&mut s, "SELECT @@gtid_binlog_pos"), "0-7-1");
    let gtids: Vec<String> = rows(&mut s, "SHOW BINLOG EVENTS")
        .into_iter()
        .filter(|r| r[2] == "Gtid")
        .map(|r| r[5].clone())
        .collect();
    assert_eq!(gtids.len(), 1, "{gtids:?}");
    assert!(gtids[0].starts_with("BEGIN GTID 0-7-1"), "{gtids:?}");
    ok(&mut s, "FLUSH LOGS");
    ok(&mut s, "FLUSH PRIVILEGES");
    ok(&mut s, "FLUSH TABLES");
    drop(s);
    server.shutdown().unwrap();
    drop(server);
    // The data survives the purge, the reset and a restart.
    let server = open(d.path());
    let mut s = root(&server);
    assert_eq!(one(&mut s, "SELECT COUNT(*) FROM d.t"), "4");
    assert_eq!(one(&mut s, "SELECT @@gtid_binlog_pos"), "0-7-1");
    drop(s);
    server.shutdown().unwrap();
}

#[test]
fn shutdown_statement_requests_a_server_stop() {
    let d = TempDir::new("admin");
    let server = open(d.path());
    let mut s = root(&server);
    assert!(!server.shutdown_requested());
    assert_eq!(ok(&mut s, "SHUTDOWN"), Output::Shutdown);
    assert!(server.shutdown_requested());
    drop(s);
    server.shutdown().unwrap();
}
