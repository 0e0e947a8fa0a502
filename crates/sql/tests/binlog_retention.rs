//! Binlog retention through SQL on a real server: the expiry variables round-trip through SET
//! GLOBAL and SELECT with MariaDB 10.11's answers to bad values, FLUSH BINARY LOGS expires by
//! size and age as far as the checkpoint allows, and PURGE BINARY LOGS stops silently before
//! a segment a connected reader still needs (as MariaDB does with a dump thread behind).

use std::path::Path;
use std::sync::Arc;

use onelog_sql::{Server, ServerConfig, Session};

mod common;
use common::{err, ok, text_rows as rows, TempDir};

fn open(dir: &Path) -> Arc<Server> {
    let mut cfg = ServerConfig::new(dir);
    cfg.max_binlog_size = 1 << 20;
    Server::open(cfg).unwrap().0
}

fn one(s: &mut Session, sql: &str) -> String {
    rows(s, sql)[0][0].clone()
}

/// `(seconds, days)` as SELECT shows them.
fn expiry(s: &mut Session) -> (String, String) {
    let r = rows(
        s,
        "SELECT @@global.binlog_expire_logs_seconds, @@global.expire_logs_days",
    );
    (r[0][0].clone(), r[0][1].clone())
}

/// A server with `d.t` that inserted a row and ran FLUSH BINARY LOGS `n` times.
fn rotated(name: &str, n: i32) -> (TempDir, Arc<Server>, Session) {
    let d = TempDir::new(name);
    let server = open(d.path());
    let mut s = Session::new(server.clone(), 1, "root", "localhost");
    ok(&mut s, "CREATE DATABASE d");
    ok(&mut s, "CREATE TABLE d.t (a INT PRIMARY KEY)");
    for i in 0..n {
        ok(&mut s, &format!("INSERT INTO d.t VALUES ({i})"));
        ok(&mut s, "FLUSH BINARY LOGS");
    }
    (d, server, s)
}

fn warnings(s: &mut Session) -> Vec<Vec<String>> {
    rows(s, "SHOW WARNINGS")
}

fn pair(a: &str, b: &str) -> (String, String) {
    (a.to_string(), b.to_string())
}

#[test]
fn expiry_variables_round_trip_with_mariadbs_answers() {
    let d = TempDir::new("retention-vars");
    let server = open(d.path());
    let mut s = Session::new(server.clone(), 1, "root", "localhost");
    assert_eq!(expiry(&mut s), pair("0", "0.000000"));
    assert_eq!(one(&mut s, "SELECT @@global.max_binlog_total_size"), "0");
    ok(&mut s, "SET GLOBAL binlog_expire_logs_seconds=3600");
    assert_eq!(expiry(&mut s), pair("3600", "0.041667"));
    assert_eq!(server.engine().binlog_expire_logs_seconds(), 3600);
    // Clipped with MariaDB's warning.
    ok(&mut s, "SET GLOBAL binlog_expire_logs_seconds=-1");
    assert_eq!(
        warnings(&mut s),
        [[
            "Warning",
            "1292",
            "Truncated incorrect binlog_expire_logs_seconds value: '-1'"
        ]]
    );
    assert_eq!(expiry(&mut s), pair("0", "0.000000"));
    ok(&mut s, "SET GLOBAL binlog_expire_logs_seconds=8553601");
    assert_eq!(expiry(&mut s), pair("8553600", "99.000000"));
    // Wrong types and scopes.
    for bad in [
        "SET GLOBAL binlog_expire_logs_seconds='abc'",
        "SET GLOBAL binlog_expire_logs_seconds=1.5",
        "SET GLOBAL binlog_expire_logs_seconds=NULL",
        "SET GLOBAL expire_logs_days='x'",
        "SET GLOBAL max_binlog_total_size='x'",
    ] {
        assert_eq!(err(&mut s, bad), 1232, "{bad}");
    }
    assert_eq!(err(&mut s, "SET binlog_expire_logs_seconds=5"), 1229);
    assert_eq!(err(&mut s, "SET SESSION expire_logs_days=5"), 1229);
    assert_eq!(
        err(&mut s, "SELECT @@session.binlog_expire_logs_seconds"),
        1238
    );
    assert_eq!(
        expiry(&mut s),
        pair("8553600", "99.000000"),
        "refused SETs change nothing"
    );
    // Days set the seconds (truncated), and keep their own value.
    ok(&mut s, "SET GLOBAL expire_logs_days=1.5");
    assert_eq!(expiry(&mut s), pair("129600", "1.500000"));
    ok(&mut s, "SET GLOBAL expire_logs_days=0.0001");
    assert_eq!(expiry(&mut s), pair("8", "0.000100"));
    ok(&mut s, "SET GLOBAL expire_logs_days=100");
    assert_eq!(
        warnings(&mut s),
        [[
            "Warning",
            "1292",
            "Truncated incorrect expire_logs_days value: '100'"
        ]]
    );
    assert_eq!(expiry(&mut s), pair("8553600", "99.000000"));
    ok(&mut s, "SET GLOBAL binlog_expire_logs_seconds=DEFAULT");
    assert_eq!(expiry(&mut s), pair("0", "0.000000"));
    ok(&mut s, "SET GLOBAL max_binlog_total_size=1048576");
    assert_eq!(server.engine().max_binlog_total_size(), 1 << 20);
    let v = rows(&mut s, "SHOW GLOBAL VARIABLES LIKE 'max_binlog_total_size'");
    assert_eq!(v, [["max_binlog_total_size", "1048576"]]);
    let v = rows(&mut s, "SHOW VARIABLES LIKE 'expire_logs_days'");
    assert_eq!(v, [["expire_logs_days", "0.000000"]]);
    ok(&mut s, "SET GLOBAL max_binlog_total_size=DEFAULT");
    assert_eq!(server.engine().max_binlog_total_size(), 0);
}

#[test]
fn flush_binary_logs_expires_by_size_and_age_but_never_past_the_checkpoint() {
    let (_d, server, mut s) = rotated("retention-flush", 4);
    assert_eq!(rows(&mut s, "SHOW BINARY LOGS").len(), 5);
    server.engine().checkpoint().unwrap();
    ok(&mut s, "INSERT INTO d.t VALUES (10)");
    // Tiny limit: everything the checkpoint covers goes at the next rotation, but not the
    // segment written after it (nor the new current one).
    ok(&mut s, "SET GLOBAL max_binlog_total_size=1");
    ok(&mut s, "FLUSH BINARY LOGS");
    let names: Vec<String> = rows(&mut s, "SHOW BINARY LOGS")
        .into_iter()
        .map(|r| r[0].clone())
        .collect();
    assert_eq!(names, ["binlog.000005", "binlog.000006"]);
    // By age: a second after a checkpoint and a rotation, the closed segment is more than 1 s
    // old (the engine's clock seam is tested in the engine; here the real one, ~1 s).
    ok(&mut s, "SET GLOBAL max_binlog_total_size=0");
    server.engine().checkpoint().unwrap();
    ok(&mut s, "SET GLOBAL binlog_expire_logs_seconds=1");
    std::thread::sleep(std::time::Duration::from_millis(1100));
    ok(&mut s, "FLUSH BINARY LOGS");
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
    server.engine().expire_logs_at(later).unwrap();
    let names: Vec<String> = rows(&mut s, "SHOW BINARY LOGS")
        .into_iter()
        .map(|r| r[0].clone())
        .collect();
    assert_eq!(names, ["binlog.000007"]);
    assert_eq!(one(&mut s, "SELECT COUNT(*) FROM d.t"), "5");
}

/// A closed segment keeps only its records on disk: FLUSH BINARY LOGS used to leave each one
/// at its preallocated size (`max_binlog_size`), so rotations cost a whole segment each and
/// `max_binlog_total_size` did not bound the disk. The trim keeps the file's modification
/// time, from which a restarted server takes the segment's age for expiry.
#[test]
fn closed_segments_keep_only_their_records_on_disk() {
    let (d, server, mut s) = rotated("retention-trim", 3);
    let log = server.engine().log().clone();
    let on_disk = |p: &Path| std::fs::metadata(p).unwrap();
    let segs = log.segments();
    assert_eq!(segs.len(), 4);
    for seg in &segs[..3] {
        // Header block and framed records: a few KB for one INSERT (SHOW BINARY LOGS'
        // File_size counts the classic file's bytes, without the log's framing).
        let len = on_disk(&seg.path).len();
        assert_eq!(len, seg.binlog_size(), "{seg:?}");
        assert!(len < 16 << 10, "{seg:?}: {len} bytes");
    }
    assert_eq!(
        on_disk(&segs[3].path).len(),
        1 << 20,
        "the current one stays preallocated"
    );
    // A rotation without the statement's expiry look: the next look trims it, keeping its time.
    ok(&mut s, "INSERT INTO d.t VALUES (9)");
    log.rotate().unwrap();
    let sealed = log.segments()[3].clone();
    let before = on_disk(&sealed.path);
    assert_eq!(before.len(), 1 << 20);
    std::thread::sleep(std::time::Duration::from_millis(50));
    server.engine().expire_logs().unwrap();
    let after = on_disk(&sealed.path);
    assert_eq!(after.len(), sealed.binlog_size());
    assert_eq!(after.modified().unwrap(), before.modified().unwrap());
    drop(s);
    drop(server);
    let server = open(d.path());
    let mut s = Session::new(server, 1, "root", "localhost");
    assert_eq!(one(&mut s, "SELECT COUNT(*) FROM d.t"), "4");
    assert_eq!(rows(&mut s, "SHOW BINARY LOGS").len(), 5);
}

#[test]
fn purge_to_stops_silently_before_a_connected_readers_segment() {
    let d = TempDir::new("retention-pin");
    let server = open(d.path());
    let mut s = Session::new(server.clone(), 1, "root", "localhost");
    ok(&mut s, "CREATE DATABASE d");
    ok(&mut s, "CREATE TABLE d.t (a INT PRIMARY KEY)");
    for i in 0..3 {
        ok(&mut s, "FLUSH BINARY LOGS");
        ok(&mut s, &format!("INSERT INTO d.t VALUES ({i})"));
    }
    server.engine().checkpoint().unwrap();
    let log = server.engine().log().clone();
    let pin = log.pin_reader(log.segments()[1].start_lsn);
    ok(&mut s, "PURGE BINARY LOGS TO 'binlog.000004'");
    assert!(
        warnings(&mut s).is_empty(),
        "MariaDB answers OK without a warning"
    );
    let first = |s: &mut Session| rows(s, "SHOW BINARY LOGS")[0][0].clone();
    assert_eq!(first(&mut s), "binlog.000002");
    ok(&mut s, "PURGE BINARY LOGS BEFORE '2999-01-01'");
    assert!(warnings(&mut s).is_empty());
    assert_eq!(first(&mut s), "binlog.000002");
    drop(pin);
    ok(&mut s, "PURGE BINARY LOGS TO 'binlog.000004'");
    assert_eq!(first(&mut s), "binlog.000004");
}

#[test]
fn expiry_is_refused_in_file_mode_where_the_classic_files_are_not_purged() {
    let d = TempDir::new("retention-file-mode");
    let mut cfg = ServerConfig::new(d.path());
    cfg.max_binlog_size = 1 << 20;
    cfg.binlog_storage = onelog_sql::BinlogStorageMode::File;
    let server = Server::open(cfg).unwrap().0;
    let mut s = Session::new(server.clone(), 1, "root", "localhost");
    assert_eq!(
        err(&mut s, "SET GLOBAL binlog_expire_logs_seconds=60"),
        1235
    );
    assert_eq!(err(&mut s, "SET GLOBAL expire_logs_days=1"), 1235);
    assert_eq!(
        err(&mut s, "SET GLOBAL max_binlog_total_size=1048576"),
        1235
    );
    ok(&mut s, "SET GLOBAL binlog_expire_logs_seconds=0");
    assert_eq!(expiry(&mut s), pair("0", "0.000000"));
    server.shutdown().unwrap();
}

#[test]
fn purge_before_takes_a_datetime_expression() {
    let d = TempDir::new("retention-before-expr");
    let server = open(d.path());
    let mut s = Session::new(server.clone(), 1, "root", "localhost");
    ok(&mut s, "CREATE DATABASE d");
    ok(&mut s, "CREATE TABLE d.t (a INT PRIMARY KEY)");
    for i in 0..3 {
        ok(&mut s, &format!("INSERT INTO d.t VALUES ({i})"));
        ok(&mut s, "FLUSH BINARY LOGS");
    }
    server.engine().checkpoint().unwrap();
    let count = |s: &mut Session| rows(s, "SHOW BINARY LOGS").len();
    assert_eq!(count(&mut s), 4);
    // Nothing was closed a day ago; everything closed before tomorrow goes (as MariaDB's
    // grammar, BEFORE takes any expression).
    ok(
        &mut s,
        "PURGE BINARY LOGS BEFORE FROM_UNIXTIME(UNIX_TIMESTAMP() - 86400)",
    );
    assert_eq!(count(&mut s), 4);
    ok(
        &mut s,
        "PURGE MASTER LOGS BEFORE FROM_UNIXTIME(UNIX_TIMESTAMP(NOW()) + 86400)",
    );
    assert_eq!(rows(&mut s, "SHOW BINARY LOGS")[0][0], "binlog.000004");
}
