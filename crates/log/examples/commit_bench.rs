//! Commit pipeline benchmark: the log alone, no engine.
//!
//! `cargo run --release -p onelog-log --example commit_bench [-- --fs sim|std|both]
//!  [--secs 2] [--level 1] [--threads 1,8,32,64] [--latency-us 0,1000,5000] [--size 200]
//!  [--gather on|off|both]`
//!
//! `--gather` sets `LogOptions::commit_gather` (the adaptive gather before a group fsync,
//! on by default); `both` runs every cell twice, off then on, for a before/after comparison.
//!
//! Each cell runs N committers, each committing ~`size`-byte transaction records (a GTID
//! event plus filler, like a sysbench write) back to back for `secs` seconds, and prints one
//! markdown row: commits/s, fsyncs per commit, p50/p99 commit latency, log bytes per commit.
//! `sim` is the in-memory SimFs with injected fsync latency; `std` is a real temp directory
//! (its fsync latency is whatever the disk gives; the latency column says "real").

use std::sync::Arc;
use std::time::{Duration, Instant};

use onelog_binlog::event::gtid::GtidEvent;
use onelog_binlog::Gtid;
use onelog_log::{
    Durability, FileSystem, GtidAssign, Log, LogOptions, PendingRecord, RecordKind, SimFs, StdFs,
};

struct Args {
    fs: String,
    secs: f64,
    level: u8,
    threads: Vec<usize>,
    latencies_us: Vec<u64>,
    size: usize,
    gather: Vec<bool>,
}

fn parse_list<T: std::str::FromStr>(s: &str) -> Vec<T> {
    s.split(',').filter_map(|x| x.trim().parse().ok()).collect()
}

fn args() -> Args {
    let mut a = Args {
        fs: "sim".into(),
        secs: 2.0,
        level: 1,
        threads: vec![1, 8, 32, 64],
        latencies_us: vec![0, 1000, 5000],
        size: 200,
        gather: vec![true],
    };
    let v: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i + 1 < v.len() {
        let val = v[i + 1].as_str();
        match v[i].as_str() {
            "--fs" => a.fs = val.to_string(),
            "--secs" => a.secs = val.parse().unwrap_or(a.secs),
            "--level" => a.level = val.parse().unwrap_or(a.level),
            "--threads" => a.threads = parse_list(val),
            "--latency-us" => a.latencies_us = parse_list(val),
            "--size" => a.size = val.parse().unwrap_or(a.size),
            "--gather" => {
                a.gather = match val {
                    "off" => vec![false],
                    "both" => vec![false, true],
                    _ => vec![true],
                }
            }
            other => eprintln!("ignoring unknown argument {other}"),
        }
        i += 2;
    }
    a
}

fn record(size: usize, n: u64) -> PendingRecord {
    let mut events = Vec::with_capacity(size);
    GtidEvent {
        gtid: Gtid::new(0, 0, 0),
        flags2: 0,
        commit_id: Some(0),
        timestamp: 0,
    }
    .encode(&mut events);
    events.resize(size.max(events.len()), (n & 0xff) as u8);
    PendingRecord {
        kind: RecordKind::Transaction,
        gtid: GtidAssign::Next {
            domain_id: 0,
            server_id: 1,
        },
        events,
        aux: Vec::new(),
        streamed: None,
        payload: None,
    }
}

struct Row {
    commits_per_s: f64,
    fsyncs_per_commit: f64,
    p50_us: u64,
    p99_us: u64,
    bytes_per_commit: f64,
}

fn run_cell(
    fs: Arc<dyn FileSystem>,
    dir: std::path::PathBuf,
    level: Durability,
    threads: usize,
    secs: f64,
    size: usize,
    gather: bool,
) -> Row {
    let opts = LogOptions {
        dir,
        segment_size: 64 << 20,
        durability: level,
        flush_interval: Duration::from_secs(1),
        commit_gather: gather,
        ..LogOptions::default()
    };
    let (log, _) = Log::open(fs, opts).expect("open log");
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(secs);
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let log = log.clone();
            std::thread::spawn(move || {
                let mut lat = Vec::with_capacity(1 << 16);
                let mut n = t as u64;
                while Instant::now() < deadline {
                    let rec = record(size, n);
                    let t0 = Instant::now();
                    log.commit(rec).expect("commit");
                    lat.push(t0.elapsed().as_micros() as u64);
                    n += threads as u64;
                }
                lat
            })
        })
        .collect();
    let mut lat: Vec<u64> = handles
        .into_iter()
        .flat_map(|h| h.join().expect("committer"))
        .collect();
    let elapsed = start.elapsed().as_secs_f64();
    let stats = log.stats();
    log.shutdown().expect("shutdown");
    lat.sort_unstable();
    let pct = |p: f64| {
        lat.get(((lat.len() as f64 * p) as usize).min(lat.len().saturating_sub(1)))
            .copied()
            .unwrap_or(0)
    };
    let commits = stats.commits.max(1) as f64;
    Row {
        commits_per_s: stats.commits as f64 / elapsed,
        fsyncs_per_commit: stats.fsyncs as f64 / commits,
        p50_us: pct(0.50),
        p99_us: pct(0.99),
        bytes_per_commit: stats.bytes_written as f64 / commits,
    }
}

fn main() {
    let a = args();
    let level = Durability::from_level(a.level).unwrap_or(Durability::Level1);
    println!(
        "commit_bench: level {}, {}-byte event groups, {} s per cell, {} CPUs",
        a.level,
        a.size,
        a.secs,
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!();
    println!("| fs | fsync latency | gather | threads | commits/s | fsyncs/commit | p50 µs | p99 µs | log bytes/commit |");
    println!("|---|---|---|---:|---:|---:|---:|---:|---:|");
    let print = |fs: &str, lat: &str, gather: bool, threads: usize, r: &Row| {
        println!(
            "| {fs} | {lat} | {} | {threads} | {:.0} | {:.3} | {} | {} | {:.1} |",
            if gather { "on" } else { "off" },
            r.commits_per_s,
            r.fsyncs_per_commit,
            r.p50_us,
            r.p99_us,
            r.bytes_per_commit
        );
    };
    if a.fs == "sim" || a.fs == "both" {
        for &us in &a.latencies_us {
            for &t in &a.threads {
                for &g in &a.gather {
                    let fs = SimFs::new();
                    fs.set_fsync_latency(Duration::from_micros(us));
                    let r = run_cell(fs, "/bench/binlog".into(), level, t, a.secs, a.size, g);
                    print("sim", &format!("{} ms", us as f64 / 1000.0), g, t, &r);
                }
            }
        }
    }
    if a.fs == "std" || a.fs == "both" {
        for &t in &a.threads {
            for &g in &a.gather {
                let dir = std::env::temp_dir()
                    .join(format!("onelog-commit-bench-{}-{t}", std::process::id()));
                let r = run_cell(StdFs::new(), dir.clone(), level, t, a.secs, a.size, g);
                let _ = std::fs::remove_dir_all(&dir);
                print("std", "real", g, t, &r);
            }
        }
    }
}
