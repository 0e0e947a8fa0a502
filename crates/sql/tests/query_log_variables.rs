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
    // Values onelog cannot honour.
    assert_eq!(err(&mut s, "SET min_examined_row_limit=10"), 1235);
    assert_eq!(
        err(&mut s, "SET GLOBAL log_queries_not_using_indexes=ON"),
        1235
    );
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
