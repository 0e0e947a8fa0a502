//! Issue 17 prototype benchmark: candidate base stores for data larger than memory, measured
//! side by side on sysbench-shaped rows (docs/PAGED_STORE.md quotes its table).
//!
//! The design under test: commits go to an in-memory MVCC delta (today's maps); a checkpoint
//! freezes the delta and writes it into the base store in one durable batch with its LSN, while
//! new commits go on into a fresh delta; reads look in the delta, then the frozen delta, then a
//! snapshot of the base. `memory` is today's store for comparison: everything in memory, and a
//! checkpoint rewrites all the data.
//!
//! ```text
//! store-proto table [--rows N] [--cache-mb A,B] [--stores redb,fjall,memory[,rocksdb]] [--dir D]
//! store-proto run STORE [--rows N] [--cache-mb C] [--dir D]     (one store, one process)
//! store-proto torn STORE [--rows N] [--dir D]         (damaged-file cases on real files)
//! store-proto direct-redb [--rows N]                   (the rejected per-commit-group shape)
//! store-proto consistency STORE                      (snapshots across checkpoints)
//! store-proto crash STORE [--rows N] [--cache-mb C] [--rounds R] [--dir D]   (kill -9 rounds)
//! ```
//! The official run (docs/PAGED_STORE.md): `store-proto table --rows 2000000 --cache-mb 100,1024`
//! (build with `cargo build --release`, add `--features rocks` and `rocksdb` to `--stores` for
//! RocksDB). Each store runs in its own process (RSS and caches are its own); the OS page cache
//! is dropped before the cold reads when the process may write /proc/sys/vm/drop_caches.

mod base;
mod consistency;
mod crash;
mod direct;
mod fjall_store;
mod memory;
mod redb_store;
#[cfg(feature = "rocks")]
mod rocks_store;
mod torn;
mod workload;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rest = args.get(1..).unwrap_or_default();
    let code = match args.first().map(String::as_str) {
        Some("run") => run_one(rest),
        Some("table") => table(rest),
        Some("crash") => crash(rest),
        Some("crash-child") => {
            let dir = PathBuf::from(opt(rest, "--dir", "/tmp/store-proto"));
            let cache_mb: usize = num(rest, "--cache-mb", 100);
            let result = crash::child(
                store_of(rest),
                &dir,
                num(rest, "--rows", 1_000_000),
                cache_mb << 20,
            );
            report("crash child", result.map(|()| String::new()))
        }
        Some("torn") => {
            let dir = PathBuf::from(opt(rest, "--dir", "/tmp/store-proto"));
            let result = torn::cases(store_of(rest), &dir, num(rest, "--rows", 200_000));
            report("TORN", result.map(|lines| lines.join("\n")))
        }
        Some("direct-redb") => {
            let dir = PathBuf::from(opt(rest, "--dir", "/tmp/store-proto")).join("direct");
            let _ = std::fs::remove_dir_all(&dir);
            let result = direct::run(&dir, num(rest, "--rows", 1_000_000), 64 << 20);
            let _ = std::fs::remove_dir_all(&dir);
            report("DIRECT", result)
        }
        Some("consistency") => {
            let store = store_of(rest);
            let dir = PathBuf::from(opt(rest, "--dir", "/tmp/store-proto"))
                .join(format!("{store}-consistency"));
            let result = consistency::run(store, &dir, 40);
            let _ = std::fs::remove_dir_all(&dir);
            report("CONSISTENT", result)
        }
        _ => {
            eprintln!("usage: store-proto table|run ... (see the module doc in src/main.rs)");
            2
        }
    };
    std::process::exit(code);
}

/// The value of `--name` in `args`, or `default`.
fn opt(args: &[String], name: &str, default: &str) -> String {
    args.windows(2)
        .find(|w| w[0] == name)
        .map_or(default.to_string(), |w| w[1].clone())
}

/// The number `--name` gives in `args`, or `default` (also when it does not parse).
fn num<T: std::str::FromStr>(args: &[String], name: &str, default: T) -> T {
    opt(args, name, "").parse().unwrap_or(default)
}

/// The store a subcommand names first ("" when none: `base::open` refuses it).
fn store_of(args: &[String]) -> &str {
    args.first().map_or("", String::as_str)
}

/// Prints each line of a subcommand's result after `tag` (exit status 0), or its error (1).
fn report(tag: &str, result: std::io::Result<String>) -> i32 {
    match result {
        Ok(text) => {
            for line in text.lines() {
                println!("{tag} {line}");
            }
            0
        }
        Err(e) => {
            eprintln!("{tag}: {e}");
            1
        }
    }
}

fn run_one(args: &[String]) -> i32 {
    let store = store_of(args);
    let dir = PathBuf::from(opt(args, "--dir", "/tmp/store-proto")).join(store);
    let _ = std::fs::remove_dir_all(&dir);
    let cache_mb: usize = num(args, "--cache-mb", 100);
    let result = workload::run(store, &dir, num(args, "--rows", 2_000_000), cache_mb << 20);
    if result.is_ok() && std::env::var_os("STORE_PROTO_KEEP").is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    report("RESULT", result.map(|r| r.line()))
}

fn crash(args: &[String]) -> i32 {
    let store = store_of(args);
    let dir = PathBuf::from(opt(args, "--dir", "/tmp/store-proto")).join(format!("{store}-crash"));
    let _ = std::fs::remove_dir_all(&dir);
    let (rows, cache_mb, rounds) = (
        num(args, "--rows", 1_000_000),
        num(args, "--cache-mb", 100),
        num(args, "--rounds", 10),
    );
    let result = crash::rounds(store, &dir, rows, cache_mb, rounds);
    let _ = std::fs::remove_dir_all(&dir);
    report("CRASH", result.map(|line| format!("{store} {line}")))
}

fn table(args: &[String]) -> i32 {
    let rows = opt(args, "--rows", "2000000");
    let caches = opt(args, "--cache-mb", "100,1024");
    let stores = opt(args, "--stores", "memory,redb,fjall");
    let dir = opt(args, "--dir", "/tmp/store-proto");
    let exe = std::env::current_exe().expect("own path");
    let mut results = Vec::new();
    for cache in caches.split(',') {
        for store in stores.split(',') {
            if store == "memory"
                && results
                    .iter()
                    .any(|(s, _, _): &(String, String, _)| s == "memory")
            {
                continue; // the in-memory store has no cache: once is enough
            }
            eprintln!("== {store}, cache {cache} MB, {rows} rows");
            let line = run_child(&exe, store, &rows, cache, &dir);
            results.push((store.to_string(), cache.to_string(), line));
        }
    }
    print_table(&rows, &results);
    0
}

/// Runs one store in a child process, bounded to 30 minutes; its RESULT line or the failure.
fn run_child(
    exe: &Path,
    store: &str,
    rows: &str,
    cache: &str,
    dir: &str,
) -> Result<String, String> {
    let mut child = Command::new(exe)
        .args([
            "run",
            store,
            "--rows",
            rows,
            "--cache-mb",
            cache,
            "--dir",
            dir,
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if start.elapsed() > Duration::from_secs(1800) => {
                let _ = child.kill();
                return Err("over 30 minutes".into());
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(200)),
            Err(e) => return Err(e.to_string()),
        }
    }
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .find_map(|l| l.strip_prefix("RESULT ").map(str::to_string))
        .ok_or_else(|| format!("no result ({})", out.status))
}

fn print_table(rows: &str, results: &[(String, String, Result<String, String>)]) {
    let cols = workload::Report::columns();
    println!("\n{rows} sysbench-shaped rows (+ secondary index on k); one process per store\n");
    println!(
        "| store | cache MB | {} |",
        cols.iter().map(|(_, h)| *h).collect::<Vec<_>>().join(" | ")
    );
    println!("|---|---|{}", "---|".repeat(cols.len()));
    for (store, cache, r) in results {
        let cells = match r {
            Ok(line) => cols
                .iter()
                .map(|(k, _)| {
                    line.split_whitespace()
                        .find_map(|kv| kv.strip_prefix(&format!("{k}=")))
                        .unwrap_or("?")
                        .to_string()
                })
                .collect::<Vec<_>>(),
            Err(e) => vec![format!("failed: {e}")],
        };
        let cache = if store == "memory" { "all data" } else { cache };
        println!("| {store} | {cache} | {} |", cells.join(" | "));
    }
}

/// Sum of the sizes of the files under `dir`.
pub fn dir_bytes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => dir_bytes(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}
