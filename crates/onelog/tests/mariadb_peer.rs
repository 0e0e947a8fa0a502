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
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::{capture_stderr, classic_files, onelog_bin, run_bounded, sql, Onelog};

const CLIENT_TIMEOUT: Duration = Duration::from_secs(120);
const MARIADB_START_TIMEOUT: Duration = Duration::from_secs(120);
const TABLES: &[&str] = &["peer.items", "peer.notes"];

/// Finds a program in PATH or the sbin directories (mariadbd lives in /usr/sbin).
fn find_program(name: &str) -> PathBuf {
    let mut dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    dirs.extend(["/usr/sbin", "/usr/local/sbin", "/sbin"].map(PathBuf::from));
    dirs.into_iter()
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!(
                "`{name}` is not installed: this test needs MariaDB 10.11's server and client \
                 (Debian packages mariadb-server and mariadb-client). Run scripts/test.sh, which \
                 installs them, or `apt-get install -y mariadb-server mariadb-client`"
            )
        })
}

/// A MariaDB server on a temporary datadir, reachable only through its unix socket.
struct MariaDb {
    child: Option<Child>,
    socket: PathBuf,
    log: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl MariaDb {
    fn start(dir: &Path) -> MariaDb {
        let install_db = find_program("mariadb-install-db");
        let mariadbd = find_program("mariadbd");
        let datadir = dir.join("data");
        // SAFETY: getuid(2) has no preconditions.
        let root = unsafe { libc::getuid() } == 0;
        let mut install = Command::new(install_db);
        install.args([
            "--no-defaults".to_string(),
            format!("--datadir={}", datadir.display()),
            "--auth-root-authentication-method=normal".to_string(),
            "--skip-test-db".to_string(),
        ]);
        if root {
            install.arg("--user=root");
        }
        let out = run_bounded(&mut install, None, MARIADB_START_TIMEOUT);
        assert!(
            out.status.success(),
            "mariadb-install-db failed ({}):\n{}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let socket = dir.join("mariadb.sock");
        let mut cmd = Command::new(mariadbd);
        cmd.args([
            "--no-defaults".to_string(),
            format!("--datadir={}", datadir.display()),
            format!("--socket={}", socket.display()),
            format!("--pid-file={}", dir.join("mariadb.pid").display()),
            "--skip-networking".to_string(),
            "--skip-log-bin".to_string(),
            "--innodb-buffer-pool-size=32M".to_string(),
            "--innodb-log-file-size=16M".to_string(),
            "--max-allowed-packet=64M".to_string(),
        ]);
        if root {
            cmd.arg("--user=root");
        }
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawning mariadbd");
        let (log, rx) = capture_stderr(&mut child);
        let mut server = MariaDb {
            child: Some(child),
            socket,
            log,
        };
        let deadline = std::time::Instant::now() + MARIADB_START_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match rx.recv_timeout(left) {
                Ok(line) if line.contains("ready for connections") => return server,
                Ok(_) => {}
                Err(_) => {
                    server.kill();
                    panic!(
                        "mariadbd did not become ready within {MARIADB_START_TIMEOUT:?}:\n{}",
                        server.log.lock().unwrap().join("\n")
                    );
                }
            }
        }
    }

    fn client(&self) -> Command {
        let mut cmd = Command::new(find_program("mariadb"));
        cmd.args([
            "--no-defaults".to_string(),
            format!("--socket={}", self.socket.display()),
            "-uroot".to_string(),
        ]);
        cmd
    }

    /// Runs `sql` (or stdin `input` when `sql` is None); returns stdout.
    fn run(&self, sql: Option<&str>, input: Option<&str>) -> String {
        let mut cmd = self.client();
        if let Some(sql) = sql {
            cmd.args(["-N", "-B", "-e", sql]);
        }
        let out = run_bounded(&mut cmd, input, CLIENT_TIMEOUT);
        assert!(
            out.status.success(),
            "mariadb (into MariaDB) failed ({}): {}\nstatement: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr),
            sql.unwrap_or("(stdin: mariadb-binlog output)")
        );
        String::from_utf8(out.stdout).expect("utf-8")
    }

    fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for MariaDb {
    fn drop(&mut self) {
        self.kill();
    }
}

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
