//! `--binlog-storage=file` with the real binary: the server serves a sysbench read/write load,
//! writes classic `binlog.NNNNNN` + `binlog.index` files in the datadir whose GTIDs are exactly
//! the engine's history (`@@gtid_binlog_pos`), and pays two fsyncs per commit group at
//! `--sync-binlog=1` (engine log + binlog file) where engine mode pays one (the binlog file
//! counter stays 0). The counters are checked as exact relations on N serial autocommit
//! inserts from one client (each is its own commit group), never as timings.
//! Also: the options show as `@@binlog_storage`, `@@sync_binlog`, `@@binlog_file_mirror`;
//! `SET GLOBAL sync_binlog` is refused in file mode (1238, read only); and
//! `--binlog-file-mirror=ON` with `--binlog-storage=file` is refused at startup.
//! The mirror (engine mode): the commit path syncs only the engine log, a clean shutdown
//! leaves the mirror's rotated files holding the whole history, and RESET MASTER resets them
//! to one `binlog.000001` holding the log's new history.

mod common;

use std::path::Path;

use common::{
    classic_files, classic_gtids, gtid_history, mariadb_cmd, run_bounded, sql, sql_err, sql_value,
    status, sysbench, Onelog,
};

/// Serial autocommit inserts per measurement.
const SERIAL_COMMITS: u64 = 40;

struct Counters {
    engine_log_fsyncs: u64,
    binlog_file_fsyncs: u64,
    groups: u64,
    commits: u64,
}

fn counters(port: u16) -> Counters {
    let c = Counters {
        engine_log_fsyncs: status(port, "Onelog_engine_log_fsyncs"),
        binlog_file_fsyncs: status(port, "Onelog_binlog_file_fsyncs"),
        groups: status(port, "Binlog_group_commits"),
        commits: status(port, "Binlog_commits"),
    };
    // Both names from one SHOW (one snapshot of the log's counters: an idle SyncMark's fsync
    // may land between two statements).
    let both = sql(port, "SHOW GLOBAL STATUS LIKE 'Onelog_%log_fsyncs'");
    let value = |name: &str| -> u64 {
        both.lines()
            .find_map(|l| l.strip_prefix(&format!("{name}\t")))
            .unwrap_or_else(|| panic!("no {name} in {both}"))
            .trim()
            .parse()
            .unwrap()
    };
    assert_eq!(
        value("Onelog_engine_log_fsyncs"),
        value("Onelog_log_fsyncs"),
        "Onelog_log_fsyncs is the old name of Onelog_engine_log_fsyncs"
    );
    c
}

/// N serial autocommit inserts through one connection: N commit groups of one commit each.
/// Returns the counters' deltas (engine log fsyncs, binlog file fsyncs, groups, commits).
fn serial_inserts(port: u16, n: u64) -> (u64, u64, u64, u64) {
    sql(
        port,
        "CREATE DATABASE IF NOT EXISTS fm; \
         CREATE TABLE IF NOT EXISTS fm.serial (id INT NOT NULL PRIMARY KEY, v VARCHAR(20))",
    );
    let base = sql_value(port, "SELECT COUNT(*) FROM fm.serial")
        .parse::<u64>()
        .unwrap();
    let before = counters(port);
    let stmts: String = (0..n)
        .map(|i| format!("INSERT INTO fm.serial VALUES ({}, 'v{i}');", base + i))
        .collect();
    sql(port, &stmts);
    let after = counters(port);
    (
        after.engine_log_fsyncs - before.engine_log_fsyncs,
        after.binlog_file_fsyncs - before.binlog_file_fsyncs,
        after.groups - before.groups,
        after.commits - before.commits,
    )
}

/// The binlog files' GTIDs are the engine's whole GTID history, in order.
fn assert_files_hold_the_history(datadir: &Path, port: u16) {
    let files = classic_files(datadir);
    assert!(!files.is_empty(), "binlog.index lists no file");
    let pos = sql_value(port, "SELECT @@gtid_binlog_pos");
    let in_files = classic_gtids(&files);
    let want = gtid_history(&pos);
    assert!(!want.is_empty(), "no GTID logged");
    assert_eq!(
        in_files.len(),
        want.len(),
        "binlog files hold {} groups, gtid_binlog_pos {pos} implies {}",
        in_files.len(),
        want.len()
    );
    assert!(
        in_files == want,
        "the binlog files' GTIDs differ from the engine's history ending at {pos}"
    );
}

#[test]
fn file_mode_serves_sysbench_and_writes_classic_files_with_two_fsyncs_per_group() {
    let dir = tempfile::tempdir().unwrap();
    let datadir = dir.path().join("data");
    let mut server = Onelog::start(
        &datadir,
        &[
            "--binlog-storage=file",
            "--sync-binlog=1",
            "--max-binlog-size=256K",
        ],
    );
    let port = server.port;
    assert_eq!(sql_value(port, "SELECT @@binlog_storage"), "FILE");
    assert_eq!(sql_value(port, "SELECT @@global.sync_binlog"), "1");
    assert_eq!(sql_value(port, "SELECT @@binlog_file_mirror"), "0");
    let vars = sql(port, "SHOW GLOBAL VARIABLES LIKE 'binlog_%'");
    assert!(
        vars.contains("binlog_storage\tFILE") && vars.contains("binlog_file_mirror\tOFF"),
        "{vars}"
    );
    // sync_binlog cannot change at run time in file mode: 1238 like MariaDB's read-only ones.
    let out = run_bounded(
        mariadb_cmd(port).args(["-e", "SET GLOBAL sync_binlog = 0"]),
        None,
        std::time::Duration::from_secs(60),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("1238") && err.contains("read only"),
        "{err}"
    );

    // Two fsyncs per group: each serial commit is a group, synced in the engine log
    // (prepare) and in the binlog file (sync_binlog=1).
    let (engine, binlog, groups, commits) = serial_inserts(port, SERIAL_COMMITS);
    assert!(commits >= SERIAL_COMMITS, "{commits} commits");
    assert!(groups >= SERIAL_COMMITS, "{groups} groups");
    assert!(
        engine >= SERIAL_COMMITS,
        "engine log fsyncs {engine} < {SERIAL_COMMITS} serial commits"
    );
    assert!(
        binlog >= SERIAL_COMMITS,
        "binlog file fsyncs {binlog} < {SERIAL_COMMITS} serial commits at sync_binlog=1"
    );
    assert!(
        binlog <= groups + 2,
        "binlog file fsyncs {binlog} > {groups} groups (+2 for rotations)"
    );

    // A sysbench read/write load (4 threads, concurrent groups) is served without errors.
    sql(port, "CREATE DATABASE sbtest");
    sysbench("oltp_read_write", "prepare", port, "sbtest", 1, 0);
    let out = sysbench("oltp_read_write", "run", port, "sbtest", 4, 300);
    // Deadlocks (retried by sysbench as "ignored errors") are legitimate with 4 threads
    // locking rows in random order, as in MariaDB; reconnects are not.
    let stat = |label: &str| {
        out.lines()
            .find_map(|l| l.trim_start().strip_prefix(label))
            .and_then(|r| r.split_whitespace().next())
            .unwrap_or_else(|| panic!("no '{label}' line:\n{out}"))
            .to_string()
    };
    assert_eq!(stat("transactions:"), "300", "{out}");
    assert_eq!(stat("reconnects:"), "0", "{out}");
    let rows = sql_value(port, "SELECT COUNT(*) FROM sbtest.sbtest1");
    assert_eq!(rows, "1000", "oltp_read_write keeps every id");

    // Classic files in the datadir, rotated at 256K, holding exactly the engine's GTIDs.
    assert!(datadir.join("binlog.000001").is_file());
    assert!(datadir.join("binlog.index").is_file());
    let files = classic_files(&datadir);
    assert!(
        files.len() >= 2,
        "the load never rotated the binlog files: {files:?}"
    );
    assert_files_hold_the_history(&datadir, port);

    // The binlog statements show the classic files, as MariaDB's do.
    let names: Vec<String> = files
        .iter()
        .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    let logs = sql(port, "SHOW BINARY LOGS");
    let listed: Vec<&str> = logs.lines().filter_map(|l| l.split('\t').next()).collect();
    assert_eq!(listed, names, "SHOW BINARY LOGS lists the classic files");
    let master = sql(port, "SHOW MASTER STATUS");
    let row: Vec<&str> = master.lines().next().unwrap().split('\t').collect();
    assert_eq!(row[0], names.last().unwrap(), "{master}");
    let size = std::fs::metadata(datadir.join(row[0])).unwrap().len();
    assert_eq!(
        row[1],
        size.to_string(),
        "Position is the end of the file: {master}"
    );
    let events = sql(port, "SHOW BINLOG EVENTS IN 'binlog.000001' LIMIT 4");
    // Log_name, Pos, Event_type, Server_id, End_log_pos, Info
    let rows: Vec<Vec<&str>> = events.lines().map(|l| l.split('\t').collect()).collect();
    let kinds: Vec<&str> = rows.iter().map(|r| r[2]).collect();
    assert_eq!(
        kinds,
        ["Format_desc", "Gtid_list", "Binlog_checkpoint", "Gtid"],
        "{events}"
    );
    assert_eq!(rows[0][1], "4", "{events}");
    for w in rows.windows(2) {
        assert_eq!(
            w[1][1], w[0][4],
            "each event starts at the previous end_log_pos: {events}"
        );
    }
    assert!(rows[0][5].contains("Server ver: 10.11"), "{events}");
    let err = sql_err(port, "PURGE BINARY LOGS TO 'binlog.000002'");
    assert!(err.contains("1235"), "PURGE is refused in file mode: {err}");

    // The history survives a clean restart (files closed and reopened).
    assert_eq!(server.stop().code(), Some(0), "{}", server.log_text());
    let server = Onelog::start(
        &datadir,
        &["--binlog-storage=file", "--max-binlog-size=256K"],
    );
    assert!(
        server.log_text().contains("two-phase commit recovery"),
        "the startup log reports file mode's recovery:\n{}",
        server.log_text()
    );
    assert_eq!(
        sql_value(server.port, "SELECT COUNT(*) FROM fm.serial"),
        SERIAL_COMMITS.to_string()
    );
    assert_files_hold_the_history(&datadir, server.port);
}

#[test]
fn sync_binlog_0_never_syncs_the_binlog_file_on_commit() {
    let dir = tempfile::tempdir().unwrap();
    let server = Onelog::start(dir.path(), &["--binlog-storage=file", "--sync-binlog=0"]);
    assert_eq!(sql_value(server.port, "SELECT @@sync_binlog"), "0");
    let (engine, binlog, _, commits) = serial_inserts(server.port, SERIAL_COMMITS);
    assert!(commits >= SERIAL_COMMITS);
    assert!(engine >= SERIAL_COMMITS, "engine log fsyncs {engine}");
    assert_eq!(binlog, 0, "sync_binlog=0 synced the binlog file");
    assert_files_hold_the_history(dir.path(), server.port);
}

#[test]
fn engine_mode_syncs_once_per_group_and_writes_no_binlog_file() {
    let dir = tempfile::tempdir().unwrap();
    let server = Onelog::start(dir.path(), &[]);
    let port = server.port;
    assert_eq!(sql_value(port, "SELECT @@binlog_storage"), "ENGINE");
    let (engine, binlog, groups, _) = serial_inserts(port, SERIAL_COMMITS);
    assert!(engine >= SERIAL_COMMITS, "engine log fsyncs {engine}");
    assert!(groups >= SERIAL_COMMITS, "{groups} groups");
    assert_eq!(binlog, 0, "engine mode has no binlog file to sync");
    assert_eq!(status(port, "Onelog_binlog_file_fsyncs"), 0);
    assert_eq!(status(port, "Onelog_mirror_fsyncs"), 0);
    assert!(!dir.path().join("binlog.000001").exists());
    assert!(!dir.path().join("binlog.index").exists());
}

#[test]
fn the_mirror_is_refused_with_file_mode_at_startup() {
    let dir = tempfile::tempdir().unwrap();
    let args: Vec<String> = [
        "--port=0",
        "--binlog-storage=file",
        "--binlog-file-mirror=ON",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let failure = match Onelog::try_start_args(dir.path(), &args) {
        Ok(_) => panic!("the server started with the mirror in file mode"),
        Err(f) => f,
    };
    assert_eq!(failure.status.and_then(|s| s.code()), Some(1));
    assert!(
        failure
            .log
            .contains("--binlog-file-mirror=ON cannot be used with --binlog-storage=file"),
        "{}",
        failure.log
    );
    assert!(
        !dir.path().join("binlog.000001").exists(),
        "nothing may be written before the refusal"
    );
}

#[test]
fn the_mirror_keeps_classic_files_of_the_log_and_reset_master_resets_them() {
    let dir = tempfile::tempdir().unwrap();
    let datadir = dir.path().join("data");
    let args = ["--binlog-file-mirror=ON", "--max-binlog-size=16K"];
    let mut server = Onelog::start(&datadir, &args);
    let port = server.port;
    assert_eq!(sql_value(port, "SELECT @@binlog_storage"), "ENGINE");
    assert_eq!(sql_value(port, "SELECT @@binlog_file_mirror"), "1");
    assert!(
        server
            .log_text()
            .contains("binlog file mirror: binlog.000001"),
        "the startup log reports the mirror:\n{}",
        server.log_text()
    );
    // The commit path pays the engine log's fsync only; the mirror syncs in the background.
    // 200 commits of ~100 bytes: past one 16K file.
    let (engine, binlog, _, _) = serial_inserts(port, 200);
    assert!(engine >= 200, "engine log fsyncs {engine}");
    assert_eq!(binlog, 0, "the mirror is not the commit path's binlog file");
    status(port, "Onelog_mirror_fsyncs");
    status(port, "Onelog_mirror_lag_bytes");
    assert!(status(port, "Onelog_mirror_groups") >= 1);

    // A clean shutdown lets the mirror catch up: its files hold the whole history, rotated.
    let pos = sql_value(port, "SELECT @@gtid_binlog_pos");
    assert_eq!(server.stop().code(), Some(0), "{}", server.log_text());
    assert!(
        server
            .log_text()
            .contains("binlog file mirror caught up and closed"),
        "{}",
        server.log_text()
    );
    let files = classic_files(&datadir);
    assert!(files.len() >= 2, "the mirror never rotated: {files:?}");
    assert!(
        classic_gtids(&files) == gtid_history(&pos),
        "the mirror's files differ from the log's history ending at {pos}"
    );

    // RESET MASTER: the mirror starts again at binlog.000001 with the log's new history.
    let mut server = Onelog::start(&datadir, &args);
    let port = server.port;
    sql(
        port,
        "RESET MASTER; INSERT INTO fm.serial VALUES (100000, 'after reset')",
    );
    let pos = sql_value(port, "SELECT @@gtid_binlog_pos");
    assert_eq!(pos, "0-1-1", "RESET MASTER restarts the GTID sequence");
    assert_eq!(server.stop().code(), Some(0), "{}", server.log_text());
    let files = classic_files(&datadir);
    assert_eq!(
        files,
        vec![datadir.join("binlog.000001")],
        "RESET MASTER leaves one mirror file"
    );
    assert!(!datadir.join("binlog.000002").exists());
    assert_eq!(classic_gtids(&files), gtid_history(&pos));
}
