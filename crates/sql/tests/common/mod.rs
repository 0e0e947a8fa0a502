//! The harness the sql crate's integration tests share: a temporary data directory, a server
//! opened on it, and statement helpers that panic naming the SQL when the outcome is not the
//! expected one.

#![allow(dead_code)] // each test file uses its own subset

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use onelog_binlog::Value;
use onelog_log::{ReadStart, ReaderOptions, Record};
use onelog_sql::{Output, Server, ServerConfig, Session, SqlError};

static N: AtomicU32 = AtomicU32::new(0);

/// A fresh directory under the system temp dir, removed on drop.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!(
            "onelog-{tag}-test-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        TempDir(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A server on its own temporary data directory (1 MiB segments, durability 2), shut down and
/// removed on drop.
pub struct Db {
    pub server: Arc<Server>,
    // Dropped after `server` is shut down (see Drop).
    _dir: TempDir,
}

impl Db {
    pub fn open(tag: &str) -> Db {
        let dir = TempDir::new(tag);
        let mut cfg = ServerConfig::new(dir.path());
        cfg.max_binlog_size = 1 << 20;
        cfg.flush_log_at_trx_commit = 2;
        let (server, _) = Server::open(cfg).unwrap();
        Db { server, _dir: dir }
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        let _ = self.server.shutdown();
    }
}

/// A value as the `mariadb` CLI prints it (NULL, text, numbers; other kinds by `Debug`).
pub fn cell(v: &Value) -> String {
    match v {
        Value::Null => "NULL".into(),
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        Value::Int(i) => i.to_string(),
        Value::UInt(u) => u.to_string(),
        Value::Decimal(d) => d.clone(),
        other => format!("{other:?}"),
    }
}

/// The rows of `sql`'s result set as text ([`cell`]); panics on a non-result.
pub fn text_rows(s: &mut Session, sql: &str) -> Vec<Vec<String>> {
    match ok(s, sql) {
        Output::Rows { rows, .. } => rows.iter().map(|r| r.iter().map(cell).collect()).collect(),
        other => panic!("{sql}: not a result set: {other:?}"),
    }
}

/// The rows of `sql`'s result set as the text protocol sends them (the columns' types decide
/// the form of dates and decimals, unlike [`text_rows`]); panics on a non-result.
pub fn wire_rows(s: &mut Session, sql: &str) -> Vec<Vec<String>> {
    match ok(s, sql) {
        Output::Rows { columns, rows } => rows
            .iter()
            .map(|r| {
                r.iter()
                    .zip(&columns)
                    .map(|(v, c)| wire_cell(v, c))
                    .collect()
            })
            .collect(),
        other => panic!("{sql}: not a result set: {other:?}"),
    }
}

/// The result of the last statement of `sql`.
pub fn run(s: &mut Session, sql: &str) -> Result<Output, SqlError> {
    s.query(sql).pop().unwrap()
}

pub fn ok(s: &mut Session, sql: &str) -> Output {
    match run(s, sql) {
        Ok(o) => o,
        Err(e) => panic!("{sql}: {e}"),
    }
}

/// The error `sql` must fail with.
pub fn fail(s: &mut Session, sql: &str) -> SqlError {
    match run(s, sql) {
        Ok(o) => panic!("{sql}: expected an error, got {o:?}"),
        Err(e) => e,
    }
}

/// The MySQL error code `sql` must fail with.
pub fn err(s: &mut Session, sql: &str) -> u16 {
    fail(s, sql).code
}

/// Every transaction and DDL record of `server`'s log, from the start, written or durable.
pub fn log_records(server: &Server) -> Vec<Record> {
    let opts = ReaderOptions {
        include_non_durable: true,
        include_state_records: false,
    };
    let mut reader = server
        .engine()
        .log()
        .reader(ReadStart::Lsn(0), opts)
        .unwrap();
    let mut out = Vec::new();
    while let Some(rec) = reader.next().unwrap() {
        out.push(rec);
    }
    out
}

/// A statement and MariaDB 10.11's answer: its rows as `mariadb -B -N` prints them, or its
/// error (the `mariadb_expected/*.rs` files list them).
pub type Case = (&'static str, Result<&'static str, (u16, &'static str)>);

/// A root session in database `name` (created when missing).
pub fn session_in(db: &Db, name: &str) -> Session {
    root_in(&db.server, 1, name)
}

/// Session `id` of root on `server` in database `name` (created when missing).
pub fn root_in(server: &Arc<Server>, id: u32, name: &str) -> Session {
    let mut s = Session::new(server.clone(), id, "root", "localhost");
    ok(&mut s, &format!("CREATE DATABASE IF NOT EXISTS {name}"));
    ok(&mut s, &format!("USE {name}"));
    s
}

/// A server on `dir` (1 MiB segments) that a test shuts down and opens again on the same
/// directory (a restart).
pub fn open_in(dir: &TempDir) -> Arc<Server> {
    let mut cfg = ServerConfig::new(dir.path());
    cfg.max_binlog_size = 1 << 20;
    Server::open(cfg).unwrap().0
}

/// The key lines (PRIMARY, UNIQUE, KEY) of SHOW CREATE TABLE `t`, without their commas.
pub fn key_lines(s: &mut Session, t: &str) -> Vec<String> {
    let text = text_rows(s, &format!("SHOW CREATE TABLE {t}"))[0][1].clone();
    text.lines()
        .map(str::trim)
        .filter(|l| {
            ["PRIMARY KEY", "UNIQUE KEY", "KEY"]
                .iter()
                .any(|k| l.starts_with(k))
        })
        .map(|l| l.trim_end_matches(',').to_string())
        .collect()
}

/// (affected rows, info text) of the OK `sql` answers; panics naming `sql` otherwise.
pub fn done(s: &mut Session, sql: &str) -> (u64, String) {
    match ok(s, sql) {
        Output::Ok {
            affected_rows,
            info,
            ..
        } => (affected_rows, info),
        other => panic!("{sql}: not an OK: {other:?}"),
    }
}

/// SHOW WARNINGS' rows (level, code, message).
pub fn warnings(s: &mut Session) -> Vec<Vec<String>> {
    text_rows(s, "SHOW WARNINGS")
}

/// A `Warning` row of SHOW WARNINGS.
pub fn warning(code: &str, msg: &str) -> Vec<String> {
    vec!["Warning".to_string(), code.to_string(), msg.to_string()]
}

/// A value as the text protocol sends it (`NULL` for NULL).
fn wire_cell(v: &Value, c: &onelog_sql::Column) -> String {
    onelog_sql::render::text(v, c)
        .map_or("NULL".to_string(), |b| String::from_utf8_lossy(&b).into())
}

/// A result as `mariadb -B -N` prints it (values as the text protocol sends them, tab
/// separated, a line per row); nothing for a statement without a result set.
pub fn text_of(out: &Output) -> String {
    let Output::Rows { columns, rows } = out else {
        return String::new();
    };
    let line = |r: &Vec<Value>| -> String {
        r.iter()
            .zip(columns)
            .map(|(v, c)| wire_cell(v, c))
            .collect::<Vec<_>>()
            .join("\t")
    };
    rows.iter().map(line).collect::<Vec<_>>().join("\n")
}

/// Runs `cases` in database `name` after `setup`; every difference from MariaDB's answer is
/// reported at once.
pub fn check_cases(tag: &str, name: &str, setup: &[&str], cases: &[Case]) {
    let db = Db::open(tag);
    let mut s = session_in(&db, name);
    for q in setup {
        ok(&mut s, q);
    }
    let mut bad = Vec::new();
    for (sql, want) in cases {
        match (run(&mut s, sql), want) {
            (Ok(out), Ok(rows)) => {
                let got = text_of(&out);
                if got != *rows {
                    bad.push(format!("{sql}\n  got  {got:?}\n  want {rows:?}"));
                }
            }
            (Err(e), Err((code, msg))) => {
                if e.code != *code || e.message != *msg {
                    bad.push(format!(
                        "{sql}\n  got  {} {}\n  want {code} {msg}",
                        e.code, e.message
                    ));
                }
            }
            (Ok(_), Err((code, msg))) => bad.push(format!("{sql}\n  ran, want {code} {msg}")),
            (Err(e), Ok(_)) => bad.push(format!("{sql}\n  failed: {} {}", e.code, e.message)),
        }
    }
    assert!(
        bad.is_empty(),
        "{} differences:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

// ---- Several sessions: a statement run in the background and PROCESSLIST states
// (`table_locks.rs`).

/// Runs `sql` in a root session of its own (connection `id`, registered so SHOW PROCESSLIST
/// and KILL see it) on another thread, after running `setup` there; the statement's error
/// code (0 for success).
pub fn in_background(
    server: &Arc<Server>,
    id: u32,
    setup: &'static str,
    sql: &'static str,
) -> std::thread::JoinHandle<u16> {
    let server = server.clone();
    let ready = Arc::new(std::sync::Barrier::new(2));
    let r2 = ready.clone();
    let h = std::thread::spawn(move || {
        let _reg =
            server.register_connection(onelog_sql::ConnectionInfo::new(id, "root", "localhost"));
        let mut s = Session::new(server.clone(), id, "root", "localhost");
        if !setup.is_empty() {
            ok(&mut s, setup);
        }
        r2.wait();
        match s.query(sql).pop().unwrap() {
            Ok(_) => 0,
            Err(e) => e.code,
        }
    });
    ready.wait();
    h
}

/// Waits (at most 30 s) until connection `id` shows `state` in SHOW PROCESSLIST.
pub fn wait_for_state(s: &mut Session, id: u32, state: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let pl = text_rows(s, "SHOW PROCESSLIST");
        if pl.iter().any(|r| r[0] == id.to_string() && r[6] == state) {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{id} never showed {state}: {pl:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}
