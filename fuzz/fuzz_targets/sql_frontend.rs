//! Fuzz target: arbitrary text as SQL through the whole front end (split, parse, depth guard,
//! compile, plan, execute) against a small database: one server opened once on a temporary
//! data directory, tables `d.t` (keyed, indexed) and `d.u`, a fresh session per input. The
//! property is that no input panics or overflows a stack: every statement gives a result or a
//! MariaDB error. Each input runs on a thread with the server's connection-thread stack size,
//! so a stack overflow here is one in the server.
//!
//! Inputs that only hang or grow memory by design are skipped (`SLEEP`, `SHUTDOWN`, `KILL`,
//! and the string-growing functions, which the memory bounds of issue 9 part 2 cover).

#![no_main]

use std::sync::{Arc, OnceLock};

use libfuzzer_sys::fuzz_target;
use onelog_sql::{Server, ServerConfig, Session, THREAD_STACK_SIZE};

const SETUP: &[&str] = &[
    "CREATE DATABASE IF NOT EXISTS d",
    "USE d",
    "CREATE TABLE IF NOT EXISTS t (id INT PRIMARY KEY, k INT, c VARCHAR(20), d DECIMAL(10,2), KEY kk (k))",
    "CREATE TABLE IF NOT EXISTS u (a BIGINT PRIMARY KEY, b TEXT, f DOUBLE)",
    "REPLACE INTO t VALUES (1, 1, 'a', 1.5), (2, NULL, NULL, NULL), (3, 3, '2024-01-01', -2.25)",
    "REPLACE INTO u VALUES (1, 'x', 0.5), (2, NULL, 1e300)",
];

const SKIP: &[&str] = &["sleep", "shutdown", "kill", "repeat", "lpad", "rpad", "space", "benchmark"];

fn server() -> &'static Arc<Server> {
    static SERVER: OnceLock<Arc<Server>> = OnceLock::new();
    SERVER.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("onelog-fuzz-sql-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut cfg = ServerConfig::new(&dir);
        cfg.max_binlog_size = 1 << 20;
        cfg.flush_log_at_trx_commit = 2;
        Server::open(cfg).expect("open fuzz server").0
    })
}

fuzz_target!(|data: &[u8]| {
    if data.len() > 1 << 16 {
        return;
    }
    let sql = String::from_utf8_lossy(data).into_owned();
    let lower = sql.to_ascii_lowercase();
    if SKIP.iter().any(|w| lower.contains(w)) {
        return;
    }
    let server = server().clone();
    std::thread::Builder::new()
        .stack_size(THREAD_STACK_SIZE)
        .spawn(move || {
            let mut s = Session::new(server, 1, "root", "localhost");
            for q in SETUP {
                let _ = s.query(q);
            }
            let _ = s.query(&sql);
            let _ = s.query("ROLLBACK");
        })
        .expect("spawn statement thread")
        .join()
        .expect("statement panicked");
});
