//! Backup, restore and check with real processes (issue 13): `onelog backup` of a running
//! server under sysbench load, `onelog restore` (full, incremental chains, --stop-gtid,
//! --stop-datetime), a restored copy made a replica in three commands, `onelog check`, and the
//! faults: a damaged or incomplete backup refused, the server killed during a backup, the
//! backup killed, the target disk full, a PURGE while a backup runs.
//!
//! Backups log in as `bk`, an account holding only RELOAD (what `BACKUP STAGE` needs, as in
//! MariaDB). Every wait is bounded.

mod common;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::replica::{binlog_gtids, dump, onelog_rpl_user, start_slave, wait_onelog_caught_up};
use common::tmpfs::Tmpfs;
use common::{onelog_bin, proc_kb, run_bounded, sql, sql_err, sql_value, status, Onelog};

const TOOL_TIMEOUT: Duration = Duration::from_secs(300);

/// The backup account: RELOAD only.
fn bk_user(port: u16) {
    sql(
        port,
        "CREATE USER bk@'%' IDENTIFIED BY 'bk'; GRANT RELOAD ON *.* TO bk@'%'",
    );
}

fn conn(port: u16) -> Vec<String> {
    vec![
        "--host=127.0.0.1".into(),
        format!("--port={port}"),
        "--user=bk".into(),
        "--password=bk".into(),
    ]
}

/// `onelog SUB ARGS...`, bounded.
fn onelog(sub: &str, args: &[String]) -> Output {
    run_bounded(
        Command::new(onelog_bin()).arg(sub).args(args),
        None,
        TOOL_TIMEOUT,
    )
}

fn ok(out: &Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what} failed ({}):\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn failed(out: &Output, what: &str) -> String {
    assert!(!out.status.success(), "{what} succeeded:\n{out:?}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn backup_to(port: u16, dir: &Path, extra: &[&str]) -> Output {
    let mut args = conn(port);
    args.push(format!("--target-dir={}", dir.display()));
    args.extend(extra.iter().map(|s| s.to_string()));
    onelog("backup", &args)
}

fn restore(target: &Path, extra: &[&str], backups: &[&Path]) -> Output {
    let mut args = vec![format!("--target-dir={}", target.display())];
    args.extend(extra.iter().map(|s| s.to_string()));
    args.extend(backups.iter().map(|b| b.display().to_string()));
    onelog("restore", &args)
}

fn check(dir: &Path) -> Output {
    onelog("check", &[dir.display().to_string()])
}

/// The `GTID position:` line `onelog check` prints.
fn checked_pos(out: &str) -> String {
    out.lines()
        .find_map(|l| l.strip_prefix("GTID position: "))
        .unwrap_or_else(|| panic!("no GTID position in {out}"))
        .to_string()
}

fn sysbench(port: u16, command: &str, seconds: u64) -> Command {
    common::sysbench_write_only(port, command, seconds, 2000)
}

/// Parts 1, 4: a backup under sysbench load, restored, started, made a replica with the
/// seed's three commands, catches up with no gap and no duplicate; tables equal.
#[test]
fn backup_under_load_becomes_a_replica_in_three_commands() {
    let tmp = tempfile::tempdir().unwrap();
    let adir = tmp.path().join("a");
    // A restart leaves a checkpoint, so the backup copies one plus the log after it.
    let (a, load) = primary_under_load(&adir, &["--server-id=1"], 12);
    let bdir = tmp.path().join("backup");
    let text = ok(&backup_to(a.port, &bdir, &[]), "backup under load");
    assert!(text.contains("completed OK: full backup"), "{text}");
    assert!(bdir.join("checkpoints").read_dir().unwrap().count() == 1);
    let text = ok(&check(&bdir), "check of the backup");
    let backup_pos = checked_pos(&text);

    // 1. restore
    let rdir = tmp.path().join("r");
    let text = ok(&restore(&rdir, &[], &[&bdir]), "restore");
    assert!(text.contains(&backup_pos), "{text}");
    // 2. start
    let r = Onelog::start(&rdir, &["--server-id=2"]);
    assert_eq!(sql_value(r.port, "SELECT @@gtid_binlog_pos"), backup_pos);
    assert_eq!(sql_value(r.port, "SELECT @@gtid_slave_pos"), backup_pos);
    // 3. CHANGE MASTER ... MASTER_USE_GTID=slave_pos, MASTER_DEMOTE_TO_SLAVE=1; START SLAVE
    follow_to_equal_tables(r.port, a.port, load);
    // The restored log is the primary's from the backup's checkpoint on, then what the
    // replica applied: a contiguous suffix of the primary's history.
    let ag = binlog_gtids(a.port);
    let rg = binlog_gtids(r.port);
    let at = ag
        .iter()
        .position(|g| Some(g) == rg.first())
        .expect("the restored log's first GTID is the primary's");
    assert_eq!(ag[at..], rg[..], "a gap or a duplicate");
    assert!(
        rg.len() > 100,
        "the load ran during the backup: {}",
        rg.len()
    );
}

/// A primary on `dir` started with `args`, with the replication and backup accounts and
/// sysbench's tables, restarted (so its tables are in a checkpoint), and sysbench `run` for
/// `seconds` in the background, 3 s under way.
fn primary_under_load(
    dir: &Path,
    args: &[&str],
    seconds: u64,
) -> (Onelog, std::thread::JoinHandle<Output>) {
    let mut a = Onelog::start(dir, args);
    onelog_rpl_user(a.port);
    bk_user(a.port);
    sql(a.port, "CREATE DATABASE sb");
    ok(
        &run_bounded(&mut sysbench(a.port, "prepare", 0), None, TOOL_TIMEOUT),
        "sysbench prepare",
    );
    a.stop();
    let a = Onelog::start(dir, args);
    let port = a.port;
    let load = std::thread::spawn(move || {
        run_bounded(&mut sysbench(port, "run", seconds), None, TOOL_TIMEOUT)
    });
    std::thread::sleep(Duration::from_secs(3));
    (a, load)
}

/// Makes the restored server on `r_port` a replica of `a_port` by GTID (the seed's three
/// commands' last), lets the sysbench `load` on the primary finish, and checks that the
/// replica catches up to equal tables.
fn follow_to_equal_tables(r_port: u16, a_port: u16, load: std::thread::JoinHandle<Output>) {
    start_slave(
        r_port,
        a_port,
        ", MASTER_USE_GTID=slave_pos, MASTER_DEMOTE_TO_SLAVE=1",
    );
    ok(&load.join().unwrap(), "sysbench run");
    wait_onelog_caught_up(r_port, a_port, "restored replica");
    for t in ["sb.sbtest1", "sb.sbtest2"] {
        assert_eq!(dump(r_port, t), dump(a_port, t), "{t} differs");
    }
}

/// Inserts rows `from..=to` into `t.r`, one transaction each.
fn insert(port: u16, from: u32, to: u32) {
    let stmts: Vec<String> = (from..=to)
        .map(|i| format!("INSERT INTO t.r VALUES ({i}, REPEAT('x', 200))"))
        .collect();
    sql(port, &stmts.join(";"));
}

/// A server with the backup account and the table `t.r` of [`insert`], started with
/// `--server-id=1` and `extra`.
fn table_server(dir: &Path, extra: &[&str]) -> Onelog {
    let mut args = vec!["--server-id=1"];
    args.extend_from_slice(extra);
    let a = Onelog::start(dir, &args);
    bk_user(a.port);
    sql(
        a.port,
        "CREATE DATABASE t; CREATE TABLE t.r (id INT PRIMARY KEY, v TEXT)",
    );
    a
}

fn count(port: u16) -> u64 {
    sql_value(port, "SELECT COUNT(*) FROM t.r").parse().unwrap()
}

/// Parts 2, 3: full + two incrementals restore to the newest point; --stop-gtid and
/// --stop-datetime stop where asked; a broken chain is refused.
#[test]
fn incremental_chain_and_point_in_time() {
    let tmp = tempfile::tempdir().unwrap();
    let a = table_server(&tmp.path().join("a"), &[]);
    insert(a.port, 1, 50);
    let full = tmp.path().join("full");
    ok(&backup_to(a.port, &full, &[]), "full backup");
    insert(a.port, 51, 100);
    let gtid_at_80 = {
        // The GTID of row 80's transaction: the 30th after the full backup's end.
        let pos = sql_value(a.port, "SELECT @@gtid_binlog_pos");
        let seq: u64 = pos.rsplit('-').next().unwrap().parse().unwrap();
        format!("0-1-{}", seq - 20)
    };
    let inc1 = tmp.path().join("inc1");
    let basedir = format!("--incremental-basedir={}", full.display());
    let text = ok(&backup_to(a.port, &inc1, &[&basedir]), "incremental 1");
    assert!(text.contains("incremental backup"), "{text}");
    let full_bytes = dir_bytes(&full);
    let inc_bytes = dir_bytes(&inc1);
    assert!(
        inc_bytes < full_bytes,
        "an incremental copies only the new log ({inc_bytes} vs {full_bytes})"
    );
    sql(a.port, "SELECT SLEEP(1.2)");
    let stop_time = sql_value(a.port, "SELECT NOW()");
    sql(a.port, "SELECT SLEEP(1.2)");
    insert(a.port, 101, 150);
    let inc2 = tmp.path().join("inc2");
    let basedir = format!("--incremental-basedir={}", inc1.display());
    ok(&backup_to(a.port, &inc2, &[&basedir]), "incremental 2");
    let newest = sql_value(a.port, "SELECT @@gtid_binlog_pos");

    // The whole chain: the newest point.
    let r1 = tmp.path().join("r1");
    ok(
        &restore(&r1, &[], &[&full, &inc1, &inc2]),
        "restore of the chain",
    );
    let text = ok(&check(&r1), "check of the restored directory");
    assert_eq!(checked_pos(&text), newest);
    let s = Onelog::start(&r1, &["--server-id=3"]);
    assert_eq!(count(s.port), 150);
    assert_eq!(sql_value(s.port, "SELECT @@gtid_binlog_pos"), newest);
    assert_eq!(sql_value(s.port, "SELECT @@gtid_slave_pos"), newest);
    drop(s);

    // --stop-gtid: row 80's transaction is the last one.
    let r2 = tmp.path().join("r2");
    let stop = format!("--stop-gtid={gtid_at_80}");
    ok(
        &restore(&r2, &[&stop], &[&full, &inc1, &inc2]),
        "restore --stop-gtid",
    );
    let s = Onelog::start(&r2, &["--server-id=3"]);
    assert_eq!(count(s.port), 80);
    assert_eq!(sql_value(s.port, "SELECT MAX(id) FROM t.r"), "80");
    assert_eq!(sql_value(s.port, "SELECT @@gtid_binlog_pos"), gtid_at_80);
    assert_eq!(sql_value(s.port, "SELECT @@gtid_slave_pos"), gtid_at_80);
    // It continues as a new primary from there.
    insert(s.port, 81, 81);
    assert_eq!(count(s.port), 81);
    drop(s);

    // --stop-datetime: everything committed before that time, nothing after.
    let r3 = tmp.path().join("r3");
    let stop = format!("--stop-datetime={stop_time}");
    ok(
        &restore(&r3, &[&stop], &[&full, &inc1, &inc2]),
        "restore --stop-datetime",
    );
    let s = Onelog::start(&r3, &["--server-id=3"]);
    assert_eq!(count(s.port), 100);
    drop(s);

    // Broken chains and bad stop points are refused, and leave no directory to start.
    let e = failed(
        &restore(&tmp.path().join("x1"), &[], &[&inc1]),
        "incremental alone",
    );
    assert!(e.contains("restore starts from a full backup"), "{e}");
    let e = failed(
        &restore(&tmp.path().join("x2"), &[], &[&full, &inc2]),
        "a gap",
    );
    assert!(e.contains("does not continue the previous backup"), "{e}");
    let e = failed(
        &restore(&tmp.path().join("x3"), &["--stop-gtid=0-1-99999"], &[&full]),
        "unknown stop GTID",
    );
    assert!(e.contains("is not in the backup's log"), "{e}");

    // After RESET MASTER the log is another one: an incremental on the old chain is refused.
    sql(a.port, "RESET MASTER");
    insert(a.port, 151, 160);
    let basedir = format!("--incremental-basedir={}", inc2.display());
    let e = failed(
        &backup_to(a.port, &tmp.path().join("inc3"), &[&basedir]),
        "incremental after RESET MASTER",
    );
    assert!(
        e.contains("not the one the base backup was taken from"),
        "{e}"
    );
}

fn dir_bytes(dir: &Path) -> u64 {
    let mut n = 0;
    for sub in ["checkpoints", "binlog"] {
        for e in std::fs::read_dir(dir.join(sub)).unwrap() {
            n += e.unwrap().metadata().unwrap().len();
        }
    }
    n
}

/// Flips one byte of `path` at `offset`.
fn flip(path: &Path, offset: u64) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .unwrap();
    let mut b = [0u8];
    f.read_exact_at(&mut b, offset).unwrap();
    f.write_all_at(&[b[0] ^ 0x10], offset).unwrap();
}

fn copy_dir(from: &Path, to: &Path) {
    let out = Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status()
        .unwrap();
    assert!(out.success());
}

/// Part 5: check verifies data directories and backups; damage is refused by check and by
/// restore with the file and offset; a backup without its manifest is not a backup.
#[test]
fn check_and_restore_refuse_damage() {
    let tmp = tempfile::tempdir().unwrap();
    // The in-memory store: a live paged one is not checked
    // (`check_of_the_paged_store_reads_its_base_when_stopped`).
    let a = table_server(&tmp.path().join("a"), &["--table-store=memory"]);
    insert(a.port, 1, 40);
    let good = tmp.path().join("good");
    ok(&backup_to(a.port, &good, &[]), "backup");
    // A running server's data directory checks too (read-only), with its position; its
    // closed segments are shortened to their records (the rotation's expiry look trims them).
    sql(a.port, "FLUSH BINARY LOGS");
    insert(a.port, 41, 42);
    let first = a.datadir.join("binlog").join("binlog-000001.olog");
    let len = std::fs::metadata(&first).unwrap().len();
    assert!(len < 1 << 20, "the closed segment is {len} bytes");
    let text = ok(&check(&a.datadir), "check of a live data directory");
    assert_eq!(
        checked_pos(&text),
        sql_value(a.port, "SELECT @@gtid_binlog_pos")
    );
    assert!(text.contains("data directory OK"), "{text}");

    // A backup cut after its directories but before any file: no manifest and no segment.
    let cut = tmp.path().join("cut");
    std::fs::create_dir_all(cut.join("binlog")).unwrap();
    std::fs::create_dir_all(cut.join("checkpoints")).unwrap();
    let e = failed(&check(&cut), "check of a directory without a log");
    assert!(e.contains("no log segment"), "{e}");

    let seg = |dir: &Path| dir.join("binlog").join("binlog-000001.olog");
    // A flipped byte inside a record.
    let bad = tmp.path().join("bad");
    copy_dir(&good, &bad);
    let len = std::fs::metadata(seg(&bad)).unwrap().len();
    flip(&seg(&bad), len - 100);
    let e = failed(&check(&bad), "check of a damaged backup");
    assert!(
        e.contains("binlog-000001.olog") && e.contains("CRC32C"),
        "{e}"
    );
    let e = failed(
        &restore(&tmp.path().join("r1"), &[], &[&bad]),
        "restore of it",
    );
    assert!(
        e.contains("binlog-000001.olog") && e.contains("CRC32C"),
        "{e}"
    );
    assert!(
        !tmp.path().join("r1").join("binlog").exists()
            || dir_is_empty(&tmp.path().join("r1").join("binlog"))
    );

    // A flipped byte in the segment header, where the manifest's CRC and the header's catch it.
    let bad2 = tmp.path().join("bad2");
    copy_dir(&good, &bad2);
    flip(&seg(&bad2), 30);
    let e = failed(&check(&bad2), "check of a damaged header");
    assert!(e.contains("binlog-000001.olog"), "{e}");

    // A truncated piece.
    let bad3 = tmp.path().join("bad3");
    copy_dir(&good, &bad3);
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(seg(&bad3))
        .unwrap();
    f.set_len(len - 1).unwrap();
    let e = failed(&check(&bad3), "check of a truncated backup");
    assert!(e.contains("truncated or replaced"), "{e}");

    // No manifest: an interrupted backup. Neither check nor restore takes it.
    let bad4 = tmp.path().join("bad4");
    copy_dir(&good, &bad4);
    std::fs::remove_file(bad4.join("backup.info")).unwrap();
    let e = failed(&check(&bad4), "check without backup.info");
    assert!(e.contains("backup.info"), "{e}");
    let e = failed(
        &restore(&tmp.path().join("r4"), &[], &[&bad4]),
        "restore without it",
    );
    assert!(e.contains("not a complete backup"), "{e}");

    // The good one still restores and checks.
    ok(&check(&good), "check of the good backup");
    ok(
        &restore(&tmp.path().join("r5"), &[], &[&good]),
        "restore of the good backup",
    );
    ok(
        &check(&tmp.path().join("r5")),
        "check of the restored directory",
    );
}

fn dir_is_empty(p: &Path) -> bool {
    std::fs::read_dir(p)
        .map(|mut d| d.next().is_none())
        .unwrap_or(true)
}

/// Part 1: the backup privilege is MariaDB's: RELOAD.
#[test]
fn backup_needs_the_reload_privilege() {
    let tmp = tempfile::tempdir().unwrap();
    let a = Onelog::start(&tmp.path().join("a"), &["--server-id=1"]);
    sql(a.port, "CREATE USER bk@'%' IDENTIFIED BY 'bk'");
    let e = failed(
        &backup_to(a.port, &tmp.path().join("b"), &[]),
        "backup without RELOAD",
    );
    assert!(e.contains("1227"), "{e}");
    assert!(!tmp.path().join("b").exists(), "nothing left behind");
}

/// A `onelog backup --stream` whose output nobody reads yet: it blocks once the pipe is full,
/// holding `BACKUP STAGE START`.
struct StalledBackup {
    child: Child,
}

impl StalledBackup {
    fn start(port: u16) -> StalledBackup {
        let mut args = conn(port);
        args.push("--stream".into());
        let child = Command::new(onelog_bin())
            .arg("backup")
            .args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        while status(port, "Onelog_backups_running") == 0 {
            assert!(Instant::now() < deadline, "the backup never started");
            std::thread::sleep(Duration::from_millis(20));
        }
        StalledBackup { child }
    }

    /// Reads the archive to `archive` and waits for the process; returns it and its stderr.
    fn finish(mut self, archive: &Path) -> (std::process::ExitStatus, String) {
        let mut out = self.child.stdout.take().unwrap();
        let mut err = self.child.stderr.take().unwrap();
        let errs = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = err.read_to_string(&mut s);
            s
        });
        let mut f = std::fs::File::create(archive).unwrap();
        std::io::copy(&mut out, &mut f).unwrap();
        let st = self.child.wait().unwrap();
        (st, errs.join().unwrap())
    }
}

/// A server with about 3 MiB of log (more than a pipe holds).
fn loaded_server(dir: &Path) -> Onelog {
    let a = table_server(dir, &[]);
    for k in 0..10 {
        let stmts: Vec<String> = (0..30)
            .map(|i| {
                format!(
                    "INSERT INTO t.r VALUES ({}, REPEAT('y', 10000))",
                    k * 30 + i + 1
                )
            })
            .collect();
        sql(a.port, &stmts.join(";"));
    }
    a
}

fn extract(archive: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    // A cut archive extracts what it holds (tar then fails: that is expected).
    let _ = Command::new("tar")
        .arg("-xf")
        .arg(archive)
        .arg("-C")
        .arg(to)
        .output()
        .unwrap();
}

/// Part 6: PURGE and RESET MASTER wait for a running backup (segments cannot be purged
/// under it); the streamed archive restores.
#[test]
fn purge_waits_for_a_running_backup() {
    let tmp = tempfile::tempdir().unwrap();
    let adir = tmp.path().join("a");
    let mut a = loaded_server(&adir);
    for _ in 0..3 {
        sql(a.port, "FLUSH BINARY LOGS");
    }
    // A restart checkpoints at the end: only the backup keeps the old segments now.
    a.stop();
    let a = Onelog::start(&adir, &["--server-id=1"]);
    let backup = StalledBackup::start(a.port);
    let port = a.port;
    let purge = std::thread::spawn(move || {
        let last = sql(port, "SHOW BINARY LOGS")
            .lines()
            .last()
            .and_then(|l| l.split('\t').next())
            .unwrap()
            .to_string();
        sql(port, &format!("PURGE BINARY LOGS TO '{last}'"));
    });
    // PURGE is waiting for the backup, visibly; a bounded one gives up with 1205.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let pl = sql(a.port, "SHOW PROCESSLIST");
        if pl.contains("Waiting for backup lock") {
            break;
        }
        assert!(Instant::now() < deadline, "PURGE is not waiting:\n{pl}");
        std::thread::sleep(Duration::from_millis(50));
    }
    let e = sql_err(
        a.port,
        "SET SESSION lock_wait_timeout = 1; PURGE BINARY LOGS TO 'binlog.000002'",
    );
    assert!(e.contains("1205"), "{e}");
    assert_eq!(sql(a.port, "SHOW BINARY LOGS").lines().count(), 4);
    std::thread::sleep(Duration::from_millis(500));
    assert!(!purge.is_finished(), "PURGE ran under the backup");

    let archive = tmp.path().join("b.tar");
    let (st, err) = backup.finish(&archive);
    assert!(st.success(), "{err}");
    purge.join().unwrap();
    assert_eq!(sql(a.port, "SHOW BINARY LOGS").lines().count(), 1);
    assert_eq!(status(a.port, "Onelog_backups_running"), 0);

    let bdir = tmp.path().join("b");
    extract(&archive, &bdir);
    ok(&check(&bdir), "check of the streamed backup");
    let r = tmp.path().join("r");
    ok(
        &restore(&r, &[], &[&bdir]),
        "restore of the streamed backup",
    );
    let s = Onelog::start(&r, &["--server-id=2"]);
    assert_eq!(sql_value(s.port, "SELECT COUNT(*) FROM t.r"), "300");
}

/// Part 6: the server killed during a backup: the backup fails clearly, leaves nothing restore
/// accepts, and the server recovers.
#[test]
fn server_killed_during_a_backup() {
    let tmp = tempfile::tempdir().unwrap();
    let adir = tmp.path().join("a");
    let mut a = loaded_server(&adir);
    let backup = StalledBackup::start(a.port);
    a.kill9();
    let archive = tmp.path().join("b.tar");
    let (st, err) = backup.finish(&archive);
    assert!(!st.success(), "the backup succeeded without its server");
    assert!(err.contains("the server went away"), "{err}");
    let bdir = tmp.path().join("b");
    extract(&archive, &bdir);
    assert!(!bdir.join("backup.info").exists());
    let e = failed(&restore(&tmp.path().join("r"), &[], &[&bdir]), "restore");
    assert!(e.contains("not a complete backup"), "{e}");
    failed(&check(&bdir), "check of the cut backup");
    let a = Onelog::start(&adir, &["--server-id=1"]);
    assert_eq!(sql_value(a.port, "SELECT COUNT(*) FROM t.r"), "300");
}

/// Part 6: the backup killed at many points: whatever it left is either a complete backup
/// that checks and restores, or refused; the server releases its hold each time.
#[test]
fn killed_backups_leave_nothing_restore_accepts() {
    let tmp = tempfile::tempdir().unwrap();
    let a = loaded_server(&tmp.path().join("a"));
    let mut complete = 0;
    for round in 0..8u64 {
        let dir = tmp.path().join(format!("b{round}"));
        let mut args = conn(a.port);
        args.push(format!("--target-dir={}", dir.display()));
        let mut child = Command::new(onelog_bin())
            .arg("backup")
            .args(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(round * 15));
        let _ = child.kill();
        let _ = child.wait();
        let r = tmp.path().join(format!("r{round}"));
        if dir.join("backup.info").exists() {
            complete += 1;
            ok(&check(&dir), "check of a completed backup");
            ok(&restore(&r, &[], &[&dir]), "restore of a completed backup");
        } else if dir.exists() {
            failed(&restore(&r, &[], &[&dir]), "restore of a killed backup");
            failed(&check(&dir), "check of a killed backup");
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        while status(a.port, "Onelog_backups_running") != 0 {
            assert!(Instant::now() < deadline, "the hold outlived its session");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    assert!(complete < 8, "no backup was ever interrupted");
    sql(a.port, "FLUSH BINARY LOGS");
    sql(a.port, "PURGE BINARY LOGS BEFORE '2099-01-01'");
}

/// Part 6: a full target disk fails the backup with the reason, removes what it wrote, and
/// releases the server's hold; the same for a stream into a full device.
#[test]
fn disk_full_on_the_target() {
    let tmp = tempfile::tempdir().unwrap();
    let a = loaded_server(&tmp.path().join("a"));
    let fs = Tmpfs::mount("1M");
    let target: PathBuf = fs.path().join("b");
    let e = failed(&backup_to(a.port, &target, &[]), "backup onto a full disk");
    assert!(e.contains("No space left on device"), "{e}");
    assert!(!target.exists(), "the failed backup left files behind");
    assert_eq!(status(a.port, "Onelog_backups_running"), 0);

    let script = format!(
        "exec \"$0\" backup --stream {} > /dev/full",
        conn(a.port).join(" ")
    );
    let out = run_bounded(
        Command::new("sh").args(["-c", &script, onelog_bin()]),
        None,
        TOOL_TIMEOUT,
    );
    let e = failed(&out, "stream into /dev/full");
    assert!(e.contains("No space left on device"), "{e}");
    assert_eq!(status(a.port, "Onelog_backups_running"), 0);
}

/// `BACKUP STAGE` as MariaDB's: RELOAD, stages only forward (4146 / 4147), the blocking
/// stages refused (1235), and a session that ends releases its hold.
#[test]
fn backup_stage_statements() {
    let tmp = tempfile::tempdir().unwrap();
    let a = Onelog::start(&tmp.path().join("a"), &["--server-id=1"]);
    let e = sql_err(a.port, "BACKUP STAGE FLUSH");
    assert!(
        e.contains("ERROR 4146") && e.contains("You must start backup with \"BACKUP STAGE START\""),
        "{e}"
    );
    let e = sql_err(a.port, "BACKUP STAGE START; BACKUP STAGE START");
    assert!(
        e.contains("ERROR 4147")
            && e.contains("Backup stage 'START' is same or before current backup stage 'START'"),
        "{e}"
    );
    let e = sql_err(
        a.port,
        "BACKUP STAGE START; BACKUP STAGE FLUSH; BACKUP STAGE BLOCK_COMMIT",
    );
    assert!(
        e.contains("ERROR 1235") && e.contains("BLOCK_COMMIT"),
        "{e}"
    );
    let e = sql_err(
        a.port,
        "BACKUP STAGE START; BACKUP STAGE END; BACKUP STAGE END",
    );
    assert!(e.contains("ERROR 4146"), "{e}");
    let out = sql(
        a.port,
        "BACKUP STAGE START; SHOW GLOBAL STATUS LIKE 'Onelog_backups_running'; BACKUP STAGE END; \
         SHOW GLOBAL STATUS LIKE 'Onelog_backups_running'",
    );
    assert_eq!(
        out,
        "Onelog_backups_running\t1\nOnelog_backups_running\t0\n"
    );
    // Sessions that ended inside a stage (the errors above) left nothing held.
    let deadline = Instant::now() + Duration::from_secs(30);
    while status(a.port, "Onelog_backups_running") != 0 {
        assert!(Instant::now() < deadline, "a hold outlived its session");
        std::thread::sleep(Duration::from_millis(20));
    }
    sql(a.port, "CREATE USER nobk@'%'");
    let out = run_bounded(
        common::mariadb_cmd(a.port).args(["-unobk", "-N", "-B", "-e", "BACKUP STAGE START"]),
        None,
        TOOL_TIMEOUT,
    );
    let e = failed(&out, "BACKUP STAGE without RELOAD");
    assert!(e.contains("ERROR 1227") && e.contains("RELOAD"), "{e}");
}

/// A primary (server id 1) in `tmp`/a with a replication user and the table t.r.
fn primary_of_t_r(tmp: &Path) -> Onelog {
    let a = Onelog::start(&tmp.join("a"), &["--server-id=1"]);
    onelog_rpl_user(a.port);
    sql(
        a.port,
        "CREATE DATABASE t; CREATE TABLE t.r (id INT PRIMARY KEY, v TEXT)",
    );
    a
}

/// A backup of a replica: restored, `gtid_slave_pos` = `gtid_binlog_pos` = the backup's end,
/// both when the replica only applied its primary's transactions after its checkpoint (the
/// position goes into the checkpoint) and when a local transaction came last in the domain
/// (restore then runs recovery to set it).
#[test]
fn backup_of_a_replica_restores_its_position() {
    let tmp = tempfile::tempdir().unwrap();
    let a = primary_of_t_r(tmp.path());
    let bdir = tmp.path().join("b");
    let mut b = Onelog::start(&bdir, &["--server-id=2"]);
    bk_user(b.port);
    start_slave(b.port, a.port, ", MASTER_USE_GTID=slave_pos");
    insert(a.port, 1, 20);
    wait_onelog_caught_up(b.port, a.port, "replica");
    // A restart checkpoints; replicated transactions follow.
    b.stop();
    let b = Onelog::start(&bdir, &["--server-id=2"]);
    insert(a.port, 21, 40);
    wait_onelog_caught_up(b.port, a.port, "replica after restart");

    for (name, local) in [("only-replicated", false), ("local-last", true)] {
        if local {
            sql(b.port, "INSERT INTO t.r VALUES (1000, 'local')");
        }
        let want = sql_value(b.port, "SELECT @@gtid_binlog_pos");
        let backup = tmp.path().join(format!("bk-{name}"));
        ok(&backup_to(b.port, &backup, &[]), "backup of the replica");
        let r = tmp.path().join(format!("r-{name}"));
        ok(&restore(&r, &[], &[&backup]), "restore");
        let s = Onelog::start(&r, &["--server-id=3"]);
        assert_eq!(
            sql_value(s.port, "SELECT @@gtid_binlog_pos"),
            want,
            "{name}"
        );
        assert_eq!(sql_value(s.port, "SELECT @@gtid_slave_pos"), want, "{name}");
        assert_eq!(
            sql_value(s.port, "SELECT COUNT(*) FROM t.r"),
            if local { "41" } else { "40" },
            "{name}"
        );
    }
}

/// A chain of backups of a replica on the paged table store whose log after the full
/// backup's image holds replicated transactions, then a local write, is restored by recovery
/// (restore's slow path). With `--table-store=paged` that recovery opens the directory with
/// the paged store within the given budget, converting the image into its base a part at a
/// time instead of loading the tables into memory: the restored directory is paged (a base,
/// no checkpoint file), and it starts with the chain's position and rows.
#[test]
fn a_paged_replicas_backup_chain_recovers_with_the_paged_store() {
    let tmp = tempfile::tempdir().unwrap();
    let a = primary_of_t_r(tmp.path());
    let paged = ["--table-store=paged", "--innodb-buffer-pool-size=32M"];
    let b = Onelog::start(
        &tmp.path().join("b"),
        &[&["--server-id=2"][..], &paged].concat(),
    );
    bk_user(b.port);
    start_slave(b.port, a.port, ", MASTER_USE_GTID=slave_pos");
    insert(a.port, 1, 20);
    wait_onelog_caught_up(b.port, a.port, "replica");
    let full = tmp.path().join("full");
    ok(&backup_to(b.port, &full, &[]), "full backup of the replica");
    insert(a.port, 21, 40);
    wait_onelog_caught_up(b.port, a.port, "replica after the full backup");
    sql(b.port, "INSERT INTO t.r VALUES (1000, 'local')");
    let want = sql_value(b.port, "SELECT @@gtid_binlog_pos");
    let inc = tmp.path().join("inc");
    let basedir = format!("--incremental-basedir={}", full.display());
    ok(&backup_to(b.port, &inc, &[&basedir]), "incremental backup");
    let checkpoints = |dir: &Path| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir.join("checkpoints"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != "control")
            .collect();
        v.sort();
        v
    };
    // Without the option, recovery opens it in memory and leaves a checkpoint file.
    let m = tmp.path().join("r-memory");
    ok(&restore(&m, &[], &[&full, &inc]), "restore");
    let files = checkpoints(&m);
    assert!(
        files.len() == 1 && files[0].starts_with("checkpoint-"),
        "{files:?}"
    );
    let r = tmp.path().join("r-paged");
    ok(
        &restore(&r, &paged, &[&full, &inc]),
        "restore --table-store=paged",
    );
    assert_eq!(checkpoints(&r), ["base"]);
    let s = Onelog::start(&r, &[&["--server-id=3"][..], &paged].concat());
    assert_eq!(sql_value(s.port, "SELECT @@gtid_binlog_pos"), want);
    assert_eq!(sql_value(s.port, "SELECT @@gtid_slave_pos"), want);
    assert_eq!(sql_value(s.port, "SELECT COUNT(*) FROM t.r"), "41");
    assert!(!s.log_text().contains("converted"), "{}", s.log_text());
}

/// Issue 17 step 6: a backup of a server on the paged table store, under load, copies the
/// backup image the server writes for it (a checkpoint file of its tables) plus the log; the
/// image is gone from the server's directory afterwards; an incremental backup on top copies
/// the log since; the restored copy of both, started on the paged store (which converts it),
/// has the incremental's position and follows the primary to equal tables.
#[test]
fn backup_of_the_paged_store_restores_and_follows_the_primary() {
    let tmp = tempfile::tempdir().unwrap();
    let adir = tmp.path().join("a");
    let paged = [
        "--server-id=1",
        "--table-store=paged",
        "--checkpoint-interval=1",
    ];
    // After the restart the rows are in the base, below an empty delta.
    let (a, load) = primary_under_load(&adir, &paged, 10);
    let bdir = tmp.path().join("backup");
    let text = ok(&backup_to(a.port, &bdir, &[]), "backup of the paged store");
    assert!(text.contains("completed OK: full backup"), "{text}");
    let images: Vec<String> = std::fs::read_dir(adir.join("checkpoints"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("backup-"))
        .collect();
    assert_eq!(
        images,
        Vec::<String>::new(),
        "the image outlived the backup"
    );
    let copied: Vec<String> = std::fs::read_dir(bdir.join("checkpoints"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        copied.len() == 1 && copied[0].starts_with("checkpoint-"),
        "{copied:?}"
    );
    checked_pos(&ok(&check(&bdir), "check of the backup"));
    // An incremental backup on top, still under the load: only the log since the full one.
    std::thread::sleep(Duration::from_secs(1));
    let idir = tmp.path().join("inc");
    let basedir = format!("--incremental-basedir={}", bdir.display());
    let text = ok(&backup_to(a.port, &idir, &[&basedir]), "incremental backup");
    assert!(text.contains("completed OK: incremental backup"), "{text}");
    assert!(
        std::fs::read_dir(idir.join("checkpoints")).map_or(true, |mut d| d.next().is_none()),
        "an incremental backup copied a checkpoint"
    );
    let backup_pos = checked_pos(&ok(&check(&idir), "check of the incremental backup"));
    let rdir = tmp.path().join("r");
    ok(&restore(&rdir, &[], &[&bdir, &idir]), "restore");
    let r = Onelog::start(
        &rdir,
        &[
            "--server-id=2",
            "--table-store=paged",
            "--checkpoint-interval=1",
        ],
    );
    assert_eq!(sql_value(r.port, "SELECT @@gtid_binlog_pos"), backup_pos);
    follow_to_equal_tables(r.port, a.port, load);
}

/// The peak resident size (kB) the restored paged server below must start within: its 32 MiB
/// budget plus the server's own memory, an index build's 32 MiB sort chunk and headroom
/// (measured: 83 MiB for 200k rows; loading the backup's checkpoint whole, as the conversion
/// did before, took 171 MiB for 200k rows and more than this for the 400k here).
const RESTORED_PEAK_LIMIT_KB: u64 = 160 << 10;

/// A backup of paged data larger than the memory budget restores, and the restored
/// directory's first start (which converts the backup's checkpoint into the paged store)
/// stays within the budget and a bounded overhead: the conversion streams the checkpoint a
/// window and a chunk at a time (`convert.rs`) instead of loading its tables into memory.
#[test]
fn a_paged_backup_larger_than_the_budget_restores_and_starts_within_it() {
    let tmp = tempfile::tempdir().unwrap();
    let paged = [
        "--server-id=1",
        "--table-store=paged",
        "--innodb-buffer-pool-size=32M",
    ];
    let adir = tmp.path().join("a");
    let mut a = Onelog::start(&adir, &paged);
    bk_user(a.port);
    sql(a.port, "CREATE DATABASE sb");
    ok(
        &run_bounded(
            &mut common::sysbench_write_only(a.port, "prepare", 0, 200_000),
            None,
            TOOL_TIMEOUT,
        ),
        "sysbench prepare",
    );
    let checksum = |port| sql(port, "CHECKSUM TABLE sb.sbtest1, sb.sbtest2");
    let want = checksum(a.port);
    let bdir = tmp.path().join("backup");
    ok(&backup_to(a.port, &bdir, &[]), "backup of the paged store");
    a.stop();
    // The image (~76 MB) and its tables decoded (about three times it) are well over the limit.
    let image: u64 = std::fs::read_dir(bdir.join("checkpoints"))
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum();
    assert!(image > 64 << 20, "a checkpoint of {image} bytes");
    let rdir = tmp.path().join("r");
    ok(&restore(&rdir, &[], &[&bdir]), "restore");
    let mut args = paged;
    args[0] = "--server-id=2";
    let r = Onelog::start(&rdir, &args);
    let hwm = proc_kb(r.pid(), "VmHWM:");
    assert!(
        hwm < RESTORED_PEAK_LIMIT_KB,
        "the restored server's peak RSS: {hwm} kB"
    );
    assert_eq!(checksum(r.port), want);
    let log = r.log_text();
    assert!(log.contains("converted"), "{log}");
}

/// `onelog check` of a paged data directory: a running server's base is not opened (the check
/// fails saying so, after verifying the log); stopped, every record of the base is read and
/// counted against its root record; a damaged table file of the base is refused, naming the
/// table store.
#[test]
fn check_of_the_paged_store_reads_its_base_when_stopped() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("a");
    let mut a = table_server(&dir, &["--table-store=paged", "--checkpoint-interval=1"]);
    // Rows that LZ4 does not shrink to nothing, so data blocks are most of the base's files.
    let rows: Vec<String> = (1..=400)
        .map(|i| format!("({i}, CONCAT(MD5({i}), MD5(-{i}), MD5({i} * 7)))"))
        .collect();
    sql(
        a.port,
        &format!("INSERT INTO t.r VALUES {}", rows.join(",")),
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    while status(a.port, "Onelog_table_store_checkpoints") == 0 {
        assert!(Instant::now() < deadline, "no checkpoint in 60 s");
        std::thread::sleep(Duration::from_millis(100));
    }
    let pos = sql_value(a.port, "SELECT @@gtid_binlog_pos");
    let e = failed(&check(&dir), "check of a live paged directory");
    assert!(
        e.contains("the table store was not checked")
            && e.contains("in use by a running server")
            && e.contains(&format!("GTID position: {pos}")),
        "{e}"
    );
    a.stop();
    let text = ok(&check(&dir), "check of a stopped paged directory");
    assert!(
        text.contains("data directory OK: table store at LSN") && text.contains("1 tables"),
        "{text}"
    );
    // Bytes flipped a quarter, a third and half into the largest file of the base (data
    // blocks, which a full read of the store reads all of, are most of it).
    let mut files = Vec::new();
    let mut dirs = vec![dir.join("checkpoints").join("base")];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let entry = entry.unwrap();
            let meta = entry.metadata().unwrap();
            if meta.is_dir() {
                dirs.push(entry.path());
            } else {
                files.push((meta.len(), entry.path()));
            }
        }
    }
    let (len, largest) = files.into_iter().max().unwrap();
    assert!(len > 20_000, "{} is {len} bytes", largest.display());
    for at in [len / 4, len / 3, len / 2] {
        flip(&largest, at);
    }
    let e = failed(&check(&dir), "check of a damaged paged directory");
    assert!(e.contains("table store"), "{e}");
}
