//! Issue 9, depth: statements that used to overflow a connection thread's stack and abort the
//! whole server (`SELECT 1+1+…` of ~1,270 terms from a user without privileges, OR/AND/=/||
//! chains, ORM-style `WHERE id=1 OR id=2 …`, UNION ALL chains, deep nesting) now get a value
//! or MariaDB's error over the wire, and the server keeps serving.

mod common;

use std::process::Command;
use std::time::Duration;

use common::{mariadb_cmd, run_bounded, sql, sql_value, Onelog};

const CLI_TIMEOUT: Duration = Duration::from_secs(120);

/// Runs `text` through the `mariadb` CLI's stdin (too long for `-e`) as `user`: (ok, stdout,
/// stderr).
fn pipe(port: u16, user: &str, text: &str) -> (bool, String, String) {
    let mut cmd: Command = mariadb_cmd(port);
    cmd.arg(format!("-u{user}")).args(["-N", "-B"]);
    let out = run_bounded(&mut cmd, Some(text), CLI_TIMEOUT);
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn chain(first: &str, op: &str, next: &str, n: usize) -> String {
    let mut s = first.to_string();
    for _ in 1..n {
        s.push_str(&format!(" {op} {next}"));
    }
    s
}

fn assert_alive(server: &Onelog) {
    assert_eq!(sql_value(server.port, "SELECT 40+2"), "42");
}

#[test]
fn unprivileged_long_plus_chains_answer_1436_and_the_server_stays_up() {
    let dir = tempfile::tempdir().unwrap();
    let server = Onelog::start(dir.path(), &[]);
    sql(server.port, "CREATE USER 'nopriv'@'%'");
    for n in [1_270, 5_000, 100_000] {
        let (ok, _, err) = pipe(
            server.port,
            "nopriv",
            &format!("SELECT {};", chain("1", "+", "1", n)),
        );
        assert!(!ok, "{n} terms");
        assert!(
            err.contains("ERROR 1436 (HY000)") && err.contains("Thread stack overrun"),
            "{n}: {err}"
        );
        assert_alive(&server);
    }
    // Below the bound: the value.
    let (ok, out, err) = pipe(
        server.port,
        "nopriv",
        &format!("SELECT {};", chain("1", "+", "1", 900)),
    );
    assert!(ok, "{err}");
    assert_eq!(out.trim(), "900");
}

#[test]
fn chains_of_or_and_eq_and_pipes_of_100000_terms_never_abort_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let server = Onelog::start(dir.path(), &[]);
    for (op, expect) in [
        ("OR", Some("1")),
        ("AND", Some("1")),
        ("||", Some("1")),
        ("=", None),
    ] {
        let (ok, out, err) = pipe(
            server.port,
            "root",
            &format!("SELECT {};", chain("1", op, "1", 99_990)),
        );
        match expect {
            Some(v) => {
                assert!(ok, "{op}: {err}");
                assert_eq!(out.trim(), v, "{op}");
            }
            None => assert!(err.contains("ERROR 1436"), "{op}: {err}"),
        }
        assert_alive(&server);
    }
    // Too long even for the lexical bound: 1436, not an abort.
    let (ok, _, err) = pipe(
        server.port,
        "root",
        &format!("SELECT {};", chain("1=1", "OR", "1=1", 100_000)),
    );
    assert!(!ok && err.contains("ERROR 1436"), "{err}");
    assert_alive(&server);
}

#[test]
fn orm_where_id_or_lists_find_their_rows() {
    let dir = tempfile::tempdir().unwrap();
    let server = Onelog::start(dir.path(), &[]);
    sql(
        server.port,
        "CREATE DATABASE d; CREATE TABLE d.t (id INT PRIMARY KEY, v INT); \
         INSERT INTO d.t VALUES (1, 10), (2, 20), (3, 30), (7000, 70)",
    );
    let terms: Vec<String> = (3..10_003).map(|i| format!("id={i}")).collect();
    let q = format!(
        "SELECT id FROM d.t WHERE {} ORDER BY id;",
        terms.join(" OR ")
    );
    let (ok, out, err) = pipe(server.port, "root", &q);
    assert!(ok, "{err}");
    assert_eq!(out, "3\n7000\n");
    let q = format!("UPDATE d.t SET v = v + 1 WHERE {};", terms.join(" OR "));
    let (ok, _, err) = pipe(server.port, "root", &q);
    assert!(ok, "{err}");
    assert_eq!(sql(server.port, "SELECT SUM(v) FROM d.t"), "132\n");
}

#[test]
fn deep_nesting_and_union_all_chains_get_an_error_and_the_server_stays_up() {
    let dir = tempfile::tempdir().unwrap();
    let server = Onelog::start(dir.path(), &[]);
    let n = 100_000;
    let cases = [
        format!("SELECT {}1{};", "(".repeat(n), ")".repeat(n)),
        format!("SELECT {}1{};", "abs(".repeat(n), ")".repeat(n)),
        format!("SELECT {}1;", "- ".repeat(n)),
        format!("SELECT {}1{};", "(SELECT ".repeat(n), ")".repeat(n)),
        format!("SELECT 1 {};", chain("", "UNION ALL", "SELECT 1", 65_000)),
        format!("SELECT 1 {};", chain("", "UNION ALL", "SELECT 1", 100_000)),
        format!("SELECT {} +;", chain("1", "+", "1", 60_000)),
    ];
    for q in cases {
        let (ok, _, err) = pipe(server.port, "root", &q);
        assert!(!ok, "{}", &q[..40]);
        assert!(
            err.contains("ERROR 1436") || err.contains("ERROR 1064") || err.contains("ERROR 1235"),
            "{}: {err}",
            &q[..40]
        );
        assert_alive(&server);
    }
    // Moderate nesting works as in MariaDB.
    let (ok, out, err) = pipe(
        server.port,
        "root",
        &format!("SELECT {}-5{};", "abs(".repeat(300), ")".repeat(300)),
    );
    assert!(ok, "{err}");
    assert_eq!(out.trim(), "5");
}
