//! Seeded power cuts of the whole engine in file mode (`BinlogStorage::File`: PREPARE records
//! in the log, the binlog in classic files, two-phase commit), at level 1 and
//! `sync_binlog = 1`.
//!
//! Each seed commits transactions (insert row `i`, set a counter row to `i`) with explicit
//! checkpoints now and then, and crashes at a random hit of a random crash point: the staged
//! commit's three (`binlog.after_prepare_sync`, `binlog.after_binlog_write`,
//! `binlog.after_binlog_sync`), the log's write points, the classic binlog's rotation or a
//! checkpoint's. After a (possibly tearing) reboot the engine must open and:
//! - hold every acknowledged commit, and be a prefix of the commit order (rows `0..=k` for the
//!   counter's `k`), at most the one transaction in flight beyond the acknowledged ones;
//! - equal a replay of its own log from empty (so no checkpoint captured a transaction that
//!   recovery rolled back);
//! - have exactly the log's Transaction/DDL records, in order, as the binlog's groups;
//! - keep committing, into both logs.
//!
//! `ONELOG_CRASH_SEEDS=<count>` changes how many seeds run (default 60); the failing seed is
//! named in the message.

mod common;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use onelog_binlog::event::gtid::{GtidEvent, GTID_EVENT_LEN};
use onelog_binlog::{Gtid, Value};
use onelog_engine::{Engine, EngineOptions};

use common::{commit_step, replay_from_empty, setup};
use onelog_log::{read_classic_file, BinlogStorage, ClassicOptions, FileSystem, SimFs};

/// Every crash point a file-mode engine hits, with the largest hit number to arm.
const POINTS: [(&str, u64); 10] = [
    ("binlog.after_prepare_sync", 40),
    ("binlog.after_binlog_write", 40),
    ("binlog.after_binlog_sync", 40),
    ("commit.before_write", 40),
    ("commit.after_write", 40),
    ("rotate.after_header", 2),
    ("classic.rotate.after_old_sync", 3),
    ("checkpoint.after_write", 3),
    ("checkpoint.before_control_switch", 3),
    ("checkpoint.after_control_switch", 3),
];

fn options(max_binlog_size: u64) -> EngineOptions {
    let mut o = EngineOptions::new("/data");
    o.log.segment_size = 32 << 10;
    o.log.flush_interval = Duration::from_secs(3600);
    o.log.binlog_storage = BinlogStorage::File {
        classic: ClassicOptions {
            dir: PathBuf::from("/data"),
            basename: "binlog".into(),
            max_size: max_binlog_size,
            server_id: 1,
            server_version: "10.11.9-MariaDB-onelog".into(),
        },
        sync_binlog: 1,
    };
    o.background_checkpoints = false;
    o.lock_wait_timeout = Duration::from_secs(30);
    o
}

fn open(fs: &Arc<SimFs>, max_binlog_size: u64) -> Result<Arc<Engine>, onelog_engine::EngineError> {
    let fs: Arc<dyn FileSystem> = fs.clone();
    Engine::open(fs, options(max_binlog_size)).map(|(e, _)| e)
}

/// GTIDs of the groups in the classic binlog files, in order.
fn binlog_gtids(fs: &SimFs) -> Vec<Gtid> {
    let dir = PathBuf::from("/data");
    let mut names: Vec<String> = fs
        .list_dir(&dir)
        .unwrap()
        .into_iter()
        .filter(|n| {
            n.strip_prefix("binlog.")
                .is_some_and(|d| d.len() >= 6 && d.bytes().all(|b| b.is_ascii_digit()))
        })
        .collect();
    names.sort();
    let mut out = Vec::new();
    for n in names {
        let data = fs.read_file(&dir.join(&n)).unwrap();
        for ev in read_classic_file(&n, &data) {
            let ev = ev.unwrap_or_else(|e| panic!("{n}: {e}"));
            if ev.bytes[4] == 162 {
                let end = GTID_EVENT_LEN.min(ev.bytes.len());
                out.push(GtidEvent::decode(&ev.bytes[..end]).unwrap().gtid);
            }
        }
    }
    out
}

/// The counter of the recovered engine, after checking rows, replay and the binlog.
fn check_recovered(e: &Arc<Engine>, fs: &SimFs, ctx: &str) -> i64 {
    let dump = e.snapshot().dump();
    let rows = &dump["d.t"];
    let counter: i64 = match &rows[0][1] {
        Value::Bytes(b) => String::from_utf8(b.to_vec()).unwrap().parse().unwrap(),
        v => panic!("{ctx}: counter {v:?}"),
    };
    let ids: Vec<Value> = rows.iter().map(|r| r[0].clone()).collect();
    let expect: Vec<Value> = (0..=counter).map(Value::Int).collect();
    assert_eq!(
        ids, expect,
        "{ctx}: not the prefix of {counter} transactions"
    );
    let (replayed, gtids) = replay_from_empty(e);
    assert_eq!(
        replayed.dump(),
        dump,
        "{ctx}: tables differ from a replay of the log"
    );
    assert_eq!(
        binlog_gtids(fs),
        gtids,
        "{ctx}: the binlog's groups are not the log's records"
    );
    counter
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// One seed; true when the crash point fired.
fn one_seed(seed: u64) -> bool {
    let mut rng = Rng(seed);
    let (point, max) = POINTS[(rng.next() % POINTS.len() as u64) as usize];
    let nth = 1 + rng.next() % max;
    let tear = rng.next().is_multiple_of(2);
    let every = 3 + rng.next() % 10;
    let binlog_size = 1024 + rng.next() % 8192;
    let ctx = format!("seed {seed} ({point} #{nth}, tear={tear}, checkpoint every {every})");
    let fs = SimFs::new();
    let e = open(&fs, binlog_size).unwrap();
    let t = setup(&e);
    fs.arm_crash_point(point, nth);
    let mut acked = 0;
    for i in 1..=150 {
        if commit_step(&e, t, i, (i as usize * 7) % 150).is_err() {
            break;
        }
        acked = i;
        if (i as u64).is_multiple_of(every) && e.checkpoint().is_err() {
            break;
        }
    }
    let crashed = fs.crashed();
    let fs2 = fs.reboot(seed, tear);
    drop(e);
    let e2 = open(&fs2, binlog_size).unwrap_or_else(|err| panic!("{ctx}: reopen failed: {err}"));
    let recovered = check_recovered(&e2, &fs2, &ctx);
    assert!(
        recovered >= acked,
        "{ctx}: acknowledged commit {acked} lost (recovered {recovered})"
    );
    assert!(recovered <= acked + 1, "{ctx}: {recovered} > {acked} + 1");
    commit_step(&e2, t, recovered + 1, (recovered as usize + 1) * 7 % 150)
        .unwrap_or_else(|err| panic!("{ctx}: commit after recovery: {err}"));
    assert_eq!(check_recovered(&e2, &fs2, &ctx), recovered + 1);
    e2.shutdown().unwrap();
    crashed
}

#[test]
fn file_mode_engine_survives_power_cuts_with_both_logs_identical() {
    let seeds = std::env::var("ONELOG_CRASH_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60u64);
    let crashed = (0..seeds).filter(|&s| one_seed(s)).count() as u64;
    assert!(
        crashed * 2 > seeds,
        "only {crashed} of {seeds} seeds crashed"
    );
}
