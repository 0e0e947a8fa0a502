//! The query log variables through sessions (`crate::querylog`, `sysvar`): their scopes,
//! values and refusals as MariaDB 10.11 answers them, and the general and slow logs' files
//! opened and closed by SET GLOBAL.

mod common;
use common::{err, fail, ok, text_rows as rows, Db};
use onelog_sql::Session;

fn one(s: &mut Session, sql: &str) -> String {
    rows(s, sql)[0][0].clone()
}

#[test]
fn query_log_variables_have_mariadbs_scopes_values_and_errors() {
    let db = Db::open("query-log-vars");
    let mut s = Session::new(db.server.clone(), 1, "root", "localhost");
    assert_eq!(one(&mut s, "SELECT @@general_log"), "0");
    assert_eq!(one(&mut s, "SELECT @@slow_query_log"), "0");
    assert_eq!(one(&mut s, "SELECT @@log_output"), "FILE");
    assert_eq!(one(&mut s, "SELECT @@long_query_time"), "10.000000");
    assert!(one(&mut s, "SELECT @@general_log_file").ends_with(".log"));
    assert!(one(&mut s, "SELECT @@slow_query_log_file").ends_with("-slow.log"));
    // Scopes (MariaDB: 1229 and 1238).
    assert_eq!(err(&mut s, "SET SESSION general_log=1"), 1229);
    assert_eq!(err(&mut s, "SELECT @@session.general_log"), 1238);
    // long_query_time: session and global, fractional.
    ok(&mut s, "SET long_query_time=0.5");
    assert_eq!(one(&mut s, "SELECT @@long_query_time"), "0.500000");
    assert_eq!(
        rows(&mut s, "SHOW VARIABLES LIKE 'long_query_time'"),
        vec![vec!["long_query_time".to_string(), "0.500000".to_string()]]
    );
    assert_eq!(one(&mut s, "SELECT @@global.long_query_time"), "10.000000");
    ok(&mut s, "SET sql_log_off=1");
    assert_eq!(one(&mut s, "SELECT @@sql_log_off"), "1");
    // log_output: MariaDB's SET values; TABLE refused (no mysql.general_log).
    let e = fail(&mut s, "SET GLOBAL log_output='BOGUS'");
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            1231,
            "Variable 'log_output' can't be set to the value of 'BOGUS'"
        )
    );
    assert_eq!(err(&mut s, "SET GLOBAL log_output='TABLE'"), 1235);
    ok(&mut s, "SET GLOBAL log_output='file,none'");
    assert_eq!(one(&mut s, "SELECT @@log_output"), "NONE,FILE");
    ok(&mut s, "SET GLOBAL log_output=DEFAULT");
    // A file that cannot be opened: 1231 as MariaDB, nothing changed.
    let e = fail(
        &mut s,
        "SET GLOBAL general_log_file='/nonexistent/dir/x.log'",
    );
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            1231,
            "Variable 'general_log_file' can't be set to the value of '/nonexistent/dir/x.log'"
        )
    );
    assert_eq!(err(&mut s, "SET GLOBAL slow_query_log_file='/'"), 1231);
    // The slow log's selection settings (honoured: `querylog::SlowPolicy`), MariaDB's
    // defaults; values onelog cannot honour are refused.
    ok(&mut s, "SET min_examined_row_limit=10");
    ok(&mut s, "SET GLOBAL log_queries_not_using_indexes=ON");
    assert_eq!(one(&mut s, "SELECT @@log_slow_admin_statements"), "1");
    ok(&mut s, "SET log_slow_admin_statements=OFF");
    assert_eq!(one(&mut s, "SELECT @@log_slow_rate_limit"), "1");
    assert_eq!(one(&mut s, "SELECT @@log_slow_verbosity"), "");
    ok(&mut s, "SET log_slow_rate_limit=1");
    assert_eq!(err(&mut s, "SET log_slow_rate_limit=2"), 1235);
    assert_eq!(err(&mut s, "SET log_slow_verbosity='query_plan'"), 1235);
}

/// Rows examined, index use and the slow verdict of each statement a session runs, against
/// MariaDB 10.11's `Rows_examined` for the same statements on the same 5-row table
/// (measured with its slow log).
#[test]
fn statement_runs_count_rows_examined_as_mariadb() {
    let db = Db::open("query-log-runs");
    let mut s = Session::new(db.server.clone(), 1, "root", "localhost");
    ok(&mut s, "CREATE DATABASE lg");
    ok(&mut s, "USE lg");
    ok(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, k INT, v VARCHAR(10), KEY(k))",
    );
    ok(
        &mut s,
        "INSERT INTO t VALUES (1,10,'a'),(2,20,'b'),(3,30,'c'),(4,40,'d'),(5,50,'e')",
    );
    // (statement, MariaDB's Rows_examined, full scan)
    for (sql, examined, full) in [
        ("SELECT * FROM t", 5, true),
        ("SELECT * FROM t WHERE id=3", 1, false),
        ("SELECT * FROM t WHERE k=20", 1, false),
        ("SELECT * FROM t WHERE v='c'", 5, true),
        ("SELECT * FROM t WHERE id>2", 3, false),
        ("SELECT * FROM t WHERE id=99", 0, false),
        ("SELECT * FROM t LIMIT 1", 1, true),
        ("SELECT COUNT(*) FROM t", 5, true),
        ("SELECT a.id FROM t a JOIN t b ON a.k=b.k", 10, true),
        ("UPDATE t SET v='z' WHERE id=2", 1, false),
        ("UPDATE t SET v='y' WHERE v='c'", 5, true),
        ("DELETE FROM t WHERE id=5", 1, false),
        ("SELECT 1", 0, false),
    ] {
        let r = s.query(sql);
        assert!(r.iter().all(|r| r.is_ok()), "{sql}: {r:?}");
        let runs = s.statement_runs();
        assert_eq!(runs.len(), 1, "{sql}");
        assert_eq!(
            (runs[0].rows_examined, runs[0].no_index),
            (examined, full),
            "{sql}"
        );
    }
    // One run per statement of a multi-statement query, each judged by the settings just
    // after it ran (`SET long_query_time=0` is itself slow, as in MariaDB), with its text as
    // MariaDB's slow log writes it.
    let sql = "SET long_query_time=10; SELECT 1;  SELECT 2 ; SET long_query_time=0; SELECT 3";
    s.query(sql);
    let runs = s.statement_runs();
    let seen: Vec<(&str, bool)> = runs
        .iter()
        .map(|r| (&sql[r.text.clone()], r.slow))
        .collect();
    assert_eq!(
        seen,
        [
            ("SET long_query_time=10", false),
            ("SELECT 1", false),
            ("SELECT 2 ", false),
            ("SET long_query_time=0", true),
            ("SELECT 3", true),
        ]
    );
    // Each statement's schema, a USE among them (MariaDB's `Schema:` is the database after
    // the statement).
    ok(&mut s, "CREATE DATABASE lg2");
    s.query("SELECT 1; USE lg2; SELECT 2; USE lg");
    let dbs: Vec<Option<&str>> = s.statement_runs().iter().map(|r| r.db.as_deref()).collect();
    assert_eq!(dbs, [Some("lg"), Some("lg2"), Some("lg2"), Some("lg")]);
    // min_examined_row_limit and log_queries_not_using_indexes.
    ok(&mut s, "SET long_query_time=10");
    ok(&mut s, "SET log_queries_not_using_indexes=ON");
    let slow = |s: &mut Session, sql: &str| {
        s.query(sql);
        s.statement_runs()[0].slow
    };
    assert!(slow(&mut s, "SELECT * FROM t WHERE v='a'"));
    assert!(!slow(&mut s, "SELECT * FROM t WHERE id=1"));
    // 4 rows left after the DELETE.
    ok(&mut s, "SET min_examined_row_limit=4");
    assert!(!slow(&mut s, "SELECT * FROM t LIMIT 1"));
    assert!(slow(&mut s, "SELECT * FROM t"));
    // Administrative statements only under log_slow_admin_statements.
    ok(&mut s, "SET long_query_time=0, min_examined_row_limit=0");
    ok(&mut s, "SET log_slow_admin_statements=OFF");
    assert!(!slow(&mut s, "CREATE INDEX iv ON t(v)"));
    assert!(slow(&mut s, "SELECT 1"));
    ok(&mut s, "SET log_slow_admin_statements=ON");
    assert!(slow(&mut s, "DROP INDEX iv ON t"));
}

#[test]
fn set_global_general_log_opens_the_file_with_mariadbs_header() {
    let db = Db::open("query-log-file");
    let mut s = Session::new(db.server.clone(), 1, "root", "localhost");
    let dir = common::TempDir::new("query-log-out");
    std::fs::create_dir_all(dir.path()).unwrap();
    let path = dir.path().join("general.log");
    ok(
        &mut s,
        &format!("SET GLOBAL general_log_file='{}'", path.display()),
    );
    assert!(!path.exists());
    ok(&mut s, "SET GLOBAL general_log=ON");
    assert_eq!(one(&mut s, "SELECT @@general_log"), "1");
    db.server.query_logs().general(1, "Query", "select 1");
    ok(&mut s, "SET GLOBAL log_output='NONE'");
    db.server.query_logs().general(1, "Query", "not logged");
    ok(&mut s, "SET GLOBAL general_log=OFF");
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].contains(", Version: "), "{text}");
    assert!(lines[1].starts_with("Tcp port: "), "{text}");
    assert_eq!(lines[2], "Time\t\t    Id Command\tArgument");
    assert!(lines[3].ends_with("     1 Query\tselect 1"), "{text}");
    assert_eq!(lines.len(), 4, "{text}");
}

#[test]
fn mariadb_admin_password_statements_work() {
    // What `mariadb-admin password new` sends (MariaDB 10.11's mysqladmin.cc): it hashes
    // with the old 16-digit scheme unless `old_passwords` shows OFF.
    let db = Db::open("admin-password");
    let mut s = Session::new(db.server.clone(), 1, "root", "localhost");
    ok(&mut s, "CREATE USER pw@'%' IDENTIFIED BY 'old'");
    let mut u = Session::new(db.server.clone(), 2, "pw", "localhost");
    assert_eq!(
        rows(&mut u, "SHOW VARIABLES LIKE 'old_passwords'"),
        vec![vec!["old_passwords".to_string(), "OFF".to_string()]]
    );
    ok(&mut u, "set sql_log_off=1");
    ok(
        &mut u,
        "set password='*D7B2F5B2D7D3C8F7BAB0BD0D1F1E8F7E1B9B3A2C',sql_log_off=0",
    );
    assert_eq!(one(&mut u, "SELECT @@sql_log_off"), "0");
    let grants = one(&mut s, "SHOW GRANTS FOR pw@'%'");
    assert!(
        grants.ends_with("IDENTIFIED BY PASSWORD '*D7B2F5B2D7D3C8F7BAB0BD0D1F1E8F7E1B9B3A2C'"),
        "{grants}"
    );
}
