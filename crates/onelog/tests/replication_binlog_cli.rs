//! `mariadb-binlog --read-from-remote-server` (MariaDB 10.11's client) against onelog's dump
//! (issue 11 part 6), as the `rpl` account with REPLICATION SLAVE:
//! - plain (non-blocking) on the first file: ends on its own with exit 0 and prints only that
//!   file's transactions;
//! - `--to-last-log` from the first file across several files (FLUSH BINARY LOGS between
//!   writes): its output piped into a fresh MariaDB reproduces onelog's tables;
//! - `--start-position=<GTID>`: the first transaction printed is the one after that GTID;
//! - `--stop-never`: prints a row committed after it started (it is then killed; the wait is
//!   bounded).

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::mariadb::{find_program, MariaDb};
use common::{run_bounded, sql, sql_value, Onelog};

const CLIENT_TIMEOUT: Duration = Duration::from_secs(120);

/// `mariadb-binlog --read-from-remote-server` to onelog on `port` as `rpl`.
fn remote_binlog(port: u16) -> Command {
    let mut cmd = Command::new(find_program("mariadb-binlog"));
    cmd.args([
        "--no-defaults",
        "--read-from-remote-server",
        "--protocol=TCP",
        "--host=127.0.0.1",
        &format!("--port={port}"),
        "--user=rpl",
        "--password=rpl",
    ]);
    cmd
}

/// Runs `cmd` to its end (bounded); asserts exit 0; returns stdout.
fn run_ok(cmd: &mut Command) -> String {
    let out = run_bounded(cmd, None, CLIENT_TIMEOUT);
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("mariadb-binlog prints UTF-8 here")
}

/// The GTIDs of the `GTID D-S-N` lines of mariadb-binlog's output, in order.
fn printed_gtids(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| {
            let (_, rest) = l.split_once("\tGTID ")?;
            rest.split_whitespace().next().map(str::to_string)
        })
        .collect()
}

const TABLES: &[&str] = &["cli.a", "cli.b"];

fn dump(run: impl Fn(&str) -> String) -> String {
    TABLES
        .iter()
        .map(|t| format!("{t}:\n{}", run(&format!("SELECT * FROM {t} ORDER BY id"))))
        .collect()
}

/// Writes the workload across three binlog files; returns the GTID position after the
/// first file's last transaction and the names of the files.
fn workload(port: u16) -> (String, Vec<String>) {
    sql(
        port,
        "CREATE USER rpl@'%' IDENTIFIED BY 'rpl'; \
         GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO rpl@'%'; \
         CREATE DATABASE cli; \
         CREATE TABLE cli.a (id INT NOT NULL PRIMARY KEY, v VARCHAR(30), d DECIMAL(8,2)); \
         CREATE TABLE cli.b (id BIGINT NOT NULL PRIMARY KEY, t DATETIME(3), n INT)",
    );
    for i in 0..20 {
        sql(
            port,
            &format!("INSERT INTO cli.a VALUES ({i}, 'first-{i}', {i}.25)"),
        );
    }
    let first_end = sql_value(port, "SELECT @@gtid_binlog_pos");
    sql(port, "FLUSH BINARY LOGS");
    sql(
        port,
        "BEGIN; INSERT INTO cli.b VALUES (1, '2026-11-25 10:00:00.125', NULL), \
         (2, NULL, 2); UPDATE cli.a SET v = 'second' WHERE id < 5; COMMIT; \
         DELETE FROM cli.a WHERE id = 7",
    );
    sql(port, "FLUSH BINARY LOGS");
    sql(
        port,
        "INSERT INTO cli.b VALUES (3, '2000-01-01 00:00:00', 3); \
         UPDATE cli.b SET n = 20 WHERE id = 2",
    );
    let logs = sql(port, "SHOW BINARY LOGS");
    let files: Vec<String> = logs
        .lines()
        .filter_map(|l| l.split('\t').next().map(str::to_string))
        .collect();
    assert!(
        files.len() >= 3,
        "expected 3 binlog files, SHOW BINARY LOGS:\n{logs}"
    );
    (first_end, files)
}

#[test]
fn mariadb_binlog_reads_onelog_remotely() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Onelog::start(&dir.path().join("onelog"), &[]);
    let port = server.port;
    let (first_end, files) = workload(port);
    let last = sql_value(port, "SELECT @@gtid_binlog_pos");
    let want = dump(|q| sql(port, q));

    // Plain: the first file only, then EOF.
    let t = Instant::now();
    let first = run_ok(remote_binlog(port).arg(&files[0]));
    eprintln!("plain: {:?}", t.elapsed());
    let first_gtids = printed_gtids(&first);
    assert_eq!(
        first_gtids.last().map(String::as_str),
        Some(first_end.as_str()),
        "the first file's transactions: {first_gtids:?}"
    );

    // --to-last-log across every file, replayed into a fresh MariaDB.
    let t = Instant::now();
    let all = run_ok(remote_binlog(port).args(["--to-last-log", &files[0]]));
    eprintln!("--to-last-log: {:?}", t.elapsed());
    let all_gtids = printed_gtids(&all);
    assert_eq!(all_gtids.last(), Some(&last), "{all_gtids:?}");
    assert_eq!(all_gtids[..first_gtids.len()], first_gtids[..]);
    let mariadb = MariaDb::start(&dir.path().join("mariadb"));
    mariadb.run(None, Some(&all));
    let got = dump(|q| mariadb.run(Some(q), None));
    assert_eq!(got, want, "MariaDB after applying the remote binlog");

    // --start-position=<GTID>: starts after that GTID.
    let from = run_ok(remote_binlog(port).args([
        &format!("--start-position={first_end}"),
        "--to-last-log",
        &files[0],
    ]));
    let from_gtids = printed_gtids(&from);
    assert_eq!(
        from_gtids,
        all_gtids[first_gtids.len()..].to_vec(),
        "--start-position={first_end}"
    );
}

#[test]
fn mariadb_binlog_stop_never_sees_a_later_commit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Onelog::start(&dir.path().join("onelog"), &[]);
    let port = server.port;
    let (_, files) = workload(port);
    let mut child = remote_binlog(port)
        .args(["--stop-never", "-v", &files[0]])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawning mariadb-binlog");
    let stdout = child.stdout.take().expect("piped stdout");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + CLIENT_TIMEOUT;
    let mut wait_for = |needle: &str| loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) if line.contains(needle) => return,
            Ok(_) => {}
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("mariadb-binlog --stop-never never printed {needle:?}: {e}");
            }
        }
    };
    // Everything up to now, then a row committed after it started.
    wait_for("UPDATE `cli`.`b`");
    sql(port, "INSERT INTO cli.a VALUES (1000, 'late-marker', 1)");
    wait_for("'late-marker'");
    let _ = child.kill();
    let _ = child.wait();
}

/// Large transactions (issue 14 part 3): with 64K segments and a 4K binlog cache, a
/// transaction larger than a segment is committed from its spilled cache into a segment of
/// its own; the dump stream serves it to `mariadb-binlog`, and MariaDB applying the output
/// ends with onelog's tables.
#[test]
fn transactions_larger_than_a_segment_stream_to_mariadb_binlog() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Onelog::start(
        &dir.path().join("onelog"),
        &["--max-binlog-size=64K", "--binlog-cache-size=4K"],
    );
    let port = server.port;
    sql(
        port,
        "CREATE USER rpl@'%' IDENTIFIED BY 'rpl'; \
         GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO rpl@'%'; \
         CREATE DATABASE cli; \
         CREATE TABLE cli.a (id INT NOT NULL PRIMARY KEY, v VARCHAR(1200), d DECIMAL(8,2)); \
         CREATE TABLE cli.b (id BIGINT NOT NULL PRIMARY KEY, t DATETIME(3), n INT)",
    );
    let seed = (0..50)
        .map(|i| format!("({i}, REPEAT('x', 1000), {i}.5)"))
        .collect::<Vec<_>>()
        .join(",");
    sql(port, &format!("INSERT INTO cli.a VALUES {seed}"));
    for k in [50, 100, 200] {
        sql(
            port,
            &format!("INSERT INTO cli.a SELECT id+{k}, v, d FROM cli.a"),
        );
    }
    sql(
        port,
        "BEGIN; UPDATE cli.a SET v = REPEAT('y', 1100), d = d + 1; \
         INSERT INTO cli.b VALUES (1, '2024-01-02 03:04:05.678', 7); COMMIT",
    );
    assert_eq!(sql_value(port, "SELECT COUNT(*) FROM cli.a"), "400");
    let disk = common::status(port, "Binlog_cache_disk_use");
    assert!(disk >= 4, "Binlog_cache_disk_use {disk}");
    let logs = sql(port, "SHOW BINARY LOGS");
    let sizes: Vec<(String, u64)> = logs
        .lines()
        .filter_map(|l| {
            let mut f = l.split('\t');
            Some((f.next()?.to_string(), f.next()?.parse().ok()?))
        })
        .collect();
    // 64K segments: the three larger transactions each got a segment of their own.
    assert!(sizes.len() >= 5, "{logs}");
    assert!(
        sizes.iter().filter(|(_, s)| *s > 65536).count() >= 3,
        "{logs}"
    );
    assert!(
        sizes.iter().any(|(_, s)| *s > 400_000),
        "a segment made for the large update: {logs}"
    );
    let want = dump(|q| sql(port, q));
    let all = run_ok(remote_binlog(port).args(["--to-last-log", &sizes[0].0]));
    assert_eq!(
        printed_gtids(&all).last().map(String::as_str),
        Some(sql_value(port, "SELECT @@gtid_binlog_pos").as_str())
    );
    let mariadb = MariaDb::start(&dir.path().join("mariadb"));
    mariadb.run(None, Some(&all));
    assert_eq!(dump(|q| mariadb.run(Some(q), None)), want);
}
