//! The real peer (issue 4 item 4): MariaDB 10.11's own tools and server read onelog's classic
//! binlog files.
//!
//! For each source of classic files —
//! 1. `--binlog-storage=file` (the commit path's files),
//! 2. `--binlog-file-mirror=ON` (the background mirror's files),
//! 3. `onelog binlog --to-binlog DIR` run on the engine log's segments —
//!
//! `mariadb-binlog --verify-binlog-checksum FILES` must exit 0, and
//! `mariadb-binlog FILES | mariadb` into a fresh MariaDB server (Debian's `mariadbd`, started
//! on a temporary datadir, unix socket only, no networking) must reproduce onelog's tables:
//! the sorted `SELECT *` of tables with INT, BIGINT, VARCHAR, DECIMAL, DATETIME columns,
//! NULLs, updates, deletes, a multi-statement transaction and a rolled-back one, across binlog
//! file rotations (16K files).
//!
//! A missing MariaDB server or client is a failure pointing at `scripts/test.sh`, never a
//! skip. Every wait is bounded; the MariaDB server is killed when the test ends.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::mariadb::{find_program, MariaDb};
use common::{classic_files, onelog_bin, run_bounded, sql, Onelog};

const CLIENT_TIMEOUT: Duration = Duration::from_secs(120);
const TABLES: &[&str] = &["peer.items", "peer.notes"];

/// The workload: every statement autocommit except the explicit transactions. Deterministic.
fn workload() -> Vec<String> {
    let mut s = vec![
        "CREATE DATABASE peer".to_string(),
        "CREATE TABLE peer.items (id INT NOT NULL PRIMARY KEY, name VARCHAR(40), \
         price DECIMAL(10,2), added DATETIME, qty INT, big BIGINT)"
            .to_string(),
        "CREATE TABLE peer.notes (id INT NOT NULL PRIMARY KEY, body VARCHAR(200) NOT NULL, \
         n BIGINT)"
            .to_string(),
    ];
    for i in 0..240i64 {
        let name = if i % 7 == 0 {
            "NULL".to_string()
        } else {
            format!("'item-{i}'")
        };
        let price = if i % 11 == 0 {
            "NULL".to_string()
        } else {
            format!("{}.{:02}", i * 3, (i * 37) % 100)
        };
        let added = if i % 13 == 0 {
            "NULL".to_string()
        } else {
            format!(
                "'2026-{:02}-{:02} {:02}:{:02}:{:02}'",
                1 + i % 12,
                1 + i % 28,
                i % 24,
                (i * 7) % 60,
                (i * 11) % 60
            )
        };
        let qty = if i % 5 == 0 {
            "NULL".to_string()
        } else {
            (i % 17 - 8).to_string()
        };
        let big = (i * 1_000_000_007) - 50_000_000_000;
        s.push(format!(
            "INSERT INTO peer.items VALUES ({i}, {name}, {price}, {added}, {qty}, {big})"
        ));
        s.push(format!(
            "INSERT INTO peer.notes VALUES ({i}, '{}', {})",
            format!("note {i} ").repeat(1 + (i as usize % 9)),
            if i % 4 == 0 {
                "NULL".to_string()
            } else {
                (i * i).to_string()
            }
        ));
    }
    for i in (0..240).step_by(3) {
        s.push(format!(
            "UPDATE peer.items SET name = 'updated-{i}', qty = NULL, price = 0.5 WHERE id = {i}"
        ));
    }
    for i in (0..240).step_by(10) {
        s.push(format!("DELETE FROM peer.items WHERE id = {i}"));
    }
    s.push("UPDATE peer.notes SET n = 7 WHERE id < 30".to_string());
    s.push("DELETE FROM peer.notes WHERE id >= 200 AND id < 220".to_string());
    // A multi-statement transaction, and one rolled back (never in the binlog).
    s.push(
        "BEGIN; INSERT INTO peer.items VALUES (1000, 'txn', 1.25, '2000-01-01 00:00:00', 1, 1); \
         UPDATE peer.notes SET body = 'in a transaction' WHERE id = 5; \
         DELETE FROM peer.items WHERE id = 1; COMMIT"
            .to_string(),
    );
    s.push(
        "BEGIN; INSERT INTO peer.items VALUES (2000, 'rolled back', 1, NULL, 1, 1); ROLLBACK"
            .to_string(),
    );
    s
}

/// `SELECT * ... ORDER BY id` of every table, as the `mariadb` CLI prints it.
fn dump_onelog(port: u16) -> String {
    TABLES
        .iter()
        .map(|t| {
            format!(
                "{t}:\n{}",
                sql(port, &format!("SELECT * FROM {t} ORDER BY id"))
            )
        })
        .collect()
}

fn dump_mariadb(m: &MariaDb) -> String {
    TABLES
        .iter()
        .map(|t| {
            format!(
                "{t}:\n{}",
                m.run(Some(&format!("SELECT * FROM {t} ORDER BY id")), None)
            )
        })
        .collect()
}

/// Runs onelog with `args` on a new datadir, applies the workload, returns (server, dump).
fn run_onelog(datadir: &Path, args: &[&str]) -> (Onelog, String) {
    let server = Onelog::start(datadir, args);
    // Batches keep the number of client processes small; each statement is its own commit.
    for chunk in workload().chunks(60) {
        sql(server.port, &(chunk.join(";\n") + ";"));
    }
    let dump = dump_onelog(server.port);
    assert!(
        dump.contains("item-2\t"),
        "the workload left no rows:\n{dump}"
    );
    (server, dump)
}

fn paths_text(files: &[PathBuf]) -> Vec<String> {
    files.iter().map(|p| p.display().to_string()).collect()
}

/// Step 1 and 2 of the module docs for one set of classic files.
fn check_with_mariadb(what: &str, files: &[PathBuf], mariadb: &MariaDb, want: &str) {
    assert!(!files.is_empty(), "{what}: no classic binlog file");
    let mariadb_binlog = find_program("mariadb-binlog");
    let out = run_bounded(
        Command::new(&mariadb_binlog)
            .arg("--verify-binlog-checksum")
            .args(paths_text(files)),
        None,
        CLIENT_TIMEOUT,
    );
    assert!(
        out.status.success(),
        "{what}: mariadb-binlog --verify-binlog-checksum {files:?} failed ({}):\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run_bounded(
        Command::new(&mariadb_binlog).args(paths_text(files)),
        None,
        CLIENT_TIMEOUT,
    );
    assert!(
        out.status.success(),
        "{what}: mariadb-binlog {files:?} failed ({}):\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let script = String::from_utf8(out.stdout).expect("mariadb-binlog prints UTF-8 here");
    mariadb.run(Some("DROP DATABASE IF EXISTS peer"), None);
    mariadb.run(None, Some(&script));
    let got = dump_mariadb(mariadb);
    assert!(
        got == want,
        "{what}: MariaDB's tables after applying mariadb-binlog's output differ from onelog's\n\
         onelog:\n{want}\nMariaDB:\n{got}"
    );
}

/// The classic files `onelog binlog --to-binlog` wrote in `dir`: `NAME.NNNNNN`, in order.
fn numbered_files(dir: &Path) -> Vec<PathBuf> {
    if dir.join("binlog.index").is_file() {
        return classic_files(dir);
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| e.len() == 6 && e.bytes().all(|b| b.is_ascii_digit()))
        })
        .collect();
    files.sort();
    files
}

#[test]
fn mariadb_reads_and_replays_file_mode_mirror_and_converted_binlogs() {
    let dir = tempfile::tempdir().unwrap();
    let mariadb = MariaDb::start(&dir.path().join("mariadb"));
    assert!(
        mariadb
            .run(Some("SELECT VERSION()"), None)
            .starts_with("10.11"),
        "the peer must be MariaDB 10.11"
    );

    // 1. --binlog-storage=file.
    let file_dir = dir.path().join("file-mode");
    let (mut server, file_dump) = run_onelog(
        &file_dir,
        &["--binlog-storage=file", "--max-binlog-size=16K"],
    );
    assert_eq!(server.stop().code(), Some(0), "{}", server.log_text());
    let files = classic_files(&file_dir);
    assert!(
        files.len() >= 2,
        "file mode never rotated its binlog files: {files:?}"
    );
    check_with_mariadb("file mode", &files, &mariadb, &file_dump);

    // 2. The mirror (engine mode).
    let mirror_dir = dir.path().join("mirror");
    let (mut server, mirror_dump) = run_onelog(
        &mirror_dir,
        &["--binlog-file-mirror=ON", "--max-binlog-size=16K"],
    );
    assert_eq!(
        mirror_dump, file_dump,
        "the same workload gave different tables in the two modes"
    );
    assert_eq!(server.stop().code(), Some(0), "{}", server.log_text());
    let files = classic_files(&mirror_dir);
    assert!(files.len() >= 2, "the mirror never rotated: {files:?}");
    check_with_mariadb("mirror", &files, &mariadb, &mirror_dump);

    // 3. onelog binlog --to-binlog on the engine log's segments.
    let mut segments: Vec<PathBuf> = std::fs::read_dir(mirror_dir.join("binlog"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "olog"))
        .collect();
    segments.sort();
    assert!(
        !segments.is_empty(),
        "no log segment in {}",
        mirror_dir.display()
    );
    let converted = dir.path().join("converted");
    std::fs::create_dir_all(&converted).unwrap();
    let out = run_bounded(
        Command::new(onelog_bin())
            .arg("binlog")
            .arg("--to-binlog")
            .arg(&converted)
            .args(paths_text(&segments)),
        None,
        CLIENT_TIMEOUT,
    );
    assert!(
        out.status.success(),
        "onelog binlog --to-binlog failed ({}):\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let files = numbered_files(&converted);
    check_with_mariadb("onelog binlog --to-binlog", &files, &mariadb, &mirror_dump);
}
