//! File mode (`BinlogStorage::File`): the classic two-log design with two-phase commit.
//!
//! What these tests prove, all on `SimFs` (deterministic, seeded):
//! - the commit path's fsync budget: one log fsync + one binlog fsync per group at level 1
//!   and `sync_binlog = 1`, the binlog synced every N groups at `sync_binlog = N`;
//! - the classic binlog files hold exactly the log's groups, in log order;
//! - recovery at each staged-commit crash point (and at random crash points over many
//!   seeds): every acknowledged commit is in both logs, the log's records are exactly the
//!   binlog's groups, prepared-but-not-binlogged records are rolled back;
//! - the `sync_binlog = 0` divergence the classic design allows (see
//!   `sync_binlog_0_crash_diverges_the_logs_and_loses_an_acknowledged_commit`).

mod common;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use onelog_binlog::event::gtid::{GtidEvent, GTID_EVENT_LEN};
use onelog_binlog::event::xid::XidEvent;
use onelog_binlog::Gtid;
use onelog_log::segment::{RESET_AFTER_NEW_SEGMENT, RESET_AFTER_REMOVE};
use onelog_log::{
    read_classic_file, BinlogStorage, ClassicOptions, Durability, FileModeRecovery, FileSystem,
    GtidAssign, Log, LogOptions, PendingRecord, ReadStart, RecordKind, SimFs,
};

const GTID_TYPE: u8 = 162;

fn classic_dir() -> PathBuf {
    PathBuf::from("/data")
}

fn classic(max_size: u64) -> ClassicOptions {
    ClassicOptions {
        dir: classic_dir(),
        basename: "binlog".to_string(),
        max_size,
        server_id: 1,
        server_version: "10.11.9-MariaDB-onelog".to_string(),
    }
}

/// File-mode options; the background flusher is kept out of the way (1 hour) so that what
/// is synced is exactly what the commit path syncs.
fn fopts(level: Durability, sync_binlog: u32) -> LogOptions {
    LogOptions {
        flush_interval: Duration::from_secs(3600),
        binlog_storage: BinlogStorage::File {
            classic: classic(1 << 20),
            sync_binlog,
        },
        ..opts(1 << 20, level)
    }
}

/// A real event group (GTID event + Xid) the classic writer accepts; `aux` holds the tag and
/// `pad` bytes (engine-log only) to vary record sizes.
fn ftxn(tag: u64, pad: usize) -> PendingRecord {
    let mut events = Vec::new();
    GtidEvent {
        gtid: Gtid::new(0, 0, 0),
        flags2: 0,
        commit_id: Some(0),
        timestamp: 1,
    }
    .encode(&mut events);
    XidEvent { xid: tag }.encode(1, 1, &mut events);
    let mut aux = tag.to_le_bytes().to_vec();
    aux.resize(8 + pad, 0xab);
    PendingRecord {
        kind: RecordKind::Transaction,
        gtid: GtidAssign::Next {
            domain_id: 0,
            server_id: 1,
        },
        events,
        aux,
        streamed: None,
        payload: None,
    }
}

/// The GTIDs of the groups in the classic binlog files (current contents), in file order.
fn binlog_gtids(fs: &SimFs) -> Vec<Gtid> {
    let mut names: Vec<String> = fs
        .list_dir(&classic_dir())
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
        let data = fs.read_file(&classic_dir().join(&n)).unwrap();
        for ev in read_classic_file(&n, &data) {
            let ev = ev.unwrap_or_else(|e| panic!("{n}: {e}"));
            if ev.bytes[4] == GTID_TYPE {
                let g = GtidEvent::decode(&ev.bytes[..GTID_EVENT_LEN.min(ev.bytes.len())]).unwrap();
                out.push(g.gtid);
            }
        }
    }
    out
}

fn log_gtids(log: &Log) -> Vec<Gtid> {
    let start = log.segments()[0].start_lsn;
    read_all(
        &mut log
            .reader(ReadStart::Lsn(start), Default::default())
            .unwrap(),
    )
    .iter()
    .map(|r| r.gtid.unwrap())
    .collect()
}

fn open_file_mode(fs: &Arc<SimFs>, o: LogOptions) -> (Arc<Log>, FileModeRecovery) {
    let (log, rep) = Log::open(fs.clone(), o).unwrap();
    (log, rep.binlog.expect("file mode reports its recovery"))
}

#[test]
fn level1_sync_binlog_1_costs_one_log_fsync_and_one_binlog_fsync_per_commit() {
    let fs = SimFs::new();
    let (log, rep) = open_file_mode(&fs, fopts(Durability::Level1, 1));
    assert_eq!(
        rep,
        FileModeRecovery {
            binlog_files: vec!["binlog.000001".into()],
            ..Default::default()
        }
    );
    let before = log.stats();
    for i in 0..10 {
        log.commit(ftxn(i, 0)).unwrap();
    }
    let s = log.stats();
    assert_eq!(s.commits - before.commits, 10);
    assert_eq!(s.groups - before.groups, 10);
    assert_eq!(s.fsyncs - before.fsyncs, 10, "one log fsync per commit");
    assert_eq!(
        s.binlog_fsyncs - before.binlog_fsyncs,
        10,
        "one binlog fsync per commit"
    );
    assert!(s.binlog_bytes > 0);
    assert_eq!(binlog_gtids(&fs), log_gtids(&log));

    // Engine mode, same load: one fsync, no binlog fsync.
    let fs = SimFs::new();
    let log = open(
        &fs,
        LogOptions {
            flush_interval: Duration::from_secs(3600),
            ..opts(1 << 20, Durability::Level1)
        },
    );
    let before = log.stats();
    for i in 0..10 {
        log.commit(ftxn(i, 0)).unwrap();
    }
    let s = log.stats();
    assert_eq!(s.fsyncs - before.fsyncs, 10);
    assert_eq!((s.binlog_fsyncs, s.binlog_bytes), (0, 0));
    assert!(log.classic_files().is_none());
}

#[test]
fn sync_binlog_n_syncs_the_binlog_every_n_groups_and_flush_syncs_the_rest() {
    let fs = SimFs::new();
    let (log, _) = open_file_mode(&fs, fopts(Durability::Level1, 3));
    let base = log.stats();
    for i in 0..10 {
        log.commit(ftxn(i, 0)).unwrap();
    }
    let s = log.stats();
    assert_eq!(s.fsyncs - base.fsyncs, 10);
    assert_eq!(
        s.binlog_fsyncs - base.binlog_fsyncs,
        3,
        "after groups 3, 6 and 9"
    );
    // Only what sync_binlog covered is durable in both.
    assert!(log.durable_lsn() < log.end_lsn());
    log.flush().unwrap();
    assert_eq!(log.stats().binlog_fsyncs - base.binlog_fsyncs, 4);
    assert_eq!(
        log.durable_lsn(),
        log.end_lsn(),
        "flush writes the last CommitMark and syncs both"
    );
    log.flush().unwrap();
    assert_eq!(
        log.stats().binlog_fsyncs - base.binlog_fsyncs,
        4,
        "nothing left to sync"
    );
    log.shutdown().unwrap();

    // sync_binlog = 0: the commit path never syncs the binlog.
    let fs = SimFs::new();
    let (log, _) = open_file_mode(&fs, fopts(Durability::Level1, 0));
    let base = log.stats();
    for i in 0..5 {
        log.commit(ftxn(i, 0)).unwrap();
    }
    assert_eq!(log.stats().binlog_fsyncs, base.binlog_fsyncs);
    assert_eq!(log.stats().fsyncs - base.fsyncs, 5);
}

#[test]
fn binlog_files_hold_exactly_the_logs_groups_in_order_across_rotations_and_reopen() {
    let fs = SimFs::new();
    let mut o = fopts(Durability::Level1, 1);
    o.segment_size = 32 << 10;
    if let BinlogStorage::File { classic: c, .. } = &mut o.binlog_storage {
        c.max_size = 2048;
    }
    let (log, _) = open_file_mode(&fs, o.clone());
    let handles: Vec<_> = (0..4u64)
        .map(|t| {
            let log = log.clone();
            std::thread::spawn(move || {
                for i in 0..40 {
                    log.commit(ftxn(t * 1000 + i, (i as usize * 37) % 600))
                        .unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    log.rotate().unwrap();
    for i in 0..5 {
        log.commit(ftxn(9000 + i, 10)).unwrap();
    }
    let recs = all_records(&log);
    assert!(
        recs.iter().all(|r| r.kind == RecordKind::Transaction),
        "readers never yield CommitMarks"
    );
    assert_eq!(recs.len(), 165);
    assert_contiguous(&recs, "file mode");
    assert!(log.segments().len() > 2, "the log rotated");
    log.shutdown().unwrap();
    let gtids: Vec<Gtid> = recs.iter().map(|r| r.gtid.unwrap()).collect();
    assert_eq!(binlog_gtids(&fs), gtids);
    let files = fs.list_dir(&classic_dir()).unwrap();
    assert!(
        files.iter().filter(|n| n.starts_with("binlog.0")).count() > 3,
        "{files:?}"
    );
    let listed: Vec<String> = log
        .classic_files()
        .unwrap()
        .into_iter()
        .map(|f| f.name)
        .collect();
    let mut on_disk: Vec<String> = files
        .into_iter()
        .filter(|n| n.starts_with("binlog.0"))
        .collect();
    on_disk.sort();
    assert_eq!(listed, on_disk);

    // A clean shutdown leaves nothing in doubt; commits continue in both.
    let fs2 = fs.reboot(1, false);
    let (log, rep) = open_file_mode(&fs2, o);
    assert_eq!(
        (
            rep.committed_in_doubt,
            rep.rolled_back,
            rep.binlog_ahead,
            rep.binlog_behind,
            rep.binlog_torn_bytes
        ),
        (0, 0, 0, 0, 0)
    );
    let r = log.commit(ftxn(1, 0)).unwrap();
    assert_eq!(r.gtid.seq_no, 166);
    assert_eq!(binlog_gtids(&fs2), log_gtids(&log));
}

#[test]
fn reset_master_resets_both_logs() {
    let fs = SimFs::new();
    let (log, _) = open_file_mode(&fs, fopts(Durability::Level1, 1));
    for i in 0..5 {
        log.commit(ftxn(i, 0)).unwrap();
    }
    log.reset().unwrap();
    assert!(binlog_gtids(&fs).is_empty());
    let r = log.commit(ftxn(7, 0)).unwrap();
    assert_eq!(r.gtid.seq_no, 1);
    assert_eq!(binlog_gtids(&fs), vec![r.gtid]);
    assert_eq!(log_gtids(&log), vec![r.gtid]);
}

#[test]
fn crash_during_reset_master_loses_no_commit_and_keeps_two_phase_commit_sound() {
    for point in [RESET_AFTER_NEW_SEGMENT, RESET_AFTER_REMOVE] {
        let fs = SimFs::new();
        let o = fopts(Durability::Level1, 1);
        let (log, _) = open_file_mode(&fs, o.clone());
        let old = commit_n(&log, 5);
        fs.arm_crash_point(point, 1);
        assert!(log.reset().is_err(), "{point}");
        let fs2 = fs.reboot(3, true);
        drop(log);
        let (log, rep) = open_file_mode(&fs2, o);
        // The binlog was reset first; the log is either the old one (whose groups the binlog
        // now lacks: reported) or the reset one. Nothing is in doubt either way.
        assert!(binlog_gtids(&fs2).is_empty(), "{point}");
        let lg = log_gtids(&log);
        assert!(lg.is_empty() || lg == old, "{point}: {lg:?}");
        assert_eq!(rep.binlog_behind, lg.len() as u64, "{point}");
        assert_eq!((rep.rolled_back, rep.committed_in_doubt), (0, 0), "{point}");
        let next = log.commit(ftxn(6, 0)).unwrap().gtid;
        assert_eq!(next.seq_no, lg.len() as u64 + 1, "{point}");
        assert_eq!(binlog_gtids(&fs2), vec![next], "{point}");
    }
}

/// Commits `n` single-record groups, returning their GTIDs.
fn commit_n(log: &Log, n: u64) -> Vec<Gtid> {
    (0..n)
        .map(|i| log.commit(ftxn(i, 0)).unwrap().gtid)
        .collect()
}

/// Crash at the first hit of `point` during the 6th group; returns what recovery reports and
/// the GTIDs in (log, binlog) after reboot.
fn crash_at(
    point: &'static str,
    tear_seed: Option<u64>,
) -> (FileModeRecovery, Vec<Gtid>, Vec<Gtid>, Vec<Gtid>) {
    let fs = SimFs::new();
    let o = fopts(Durability::Level1, 1);
    let (log, _) = open_file_mode(&fs, o.clone());
    let acked = commit_n(&log, 5);
    fs.arm_crash_point(point, 1);
    assert!(
        log.commit(ftxn(6, 0)).is_err(),
        "{point}: the crashed commit is not acknowledged"
    );
    assert!(log.failed().is_some());
    let fs2 = fs.reboot(tear_seed.unwrap_or(0), tear_seed.is_some());
    drop(log);
    let (log, rep) = open_file_mode(&fs2, o);
    let lg = log_gtids(&log);
    let bg = binlog_gtids(&fs2);
    // The log keeps working and both logs stay in step.
    let next = log.commit(ftxn(99, 0)).unwrap();
    assert_eq!(next.gtid.seq_no, lg.len() as u64 + 1);
    let mut lg2 = lg.clone();
    lg2.push(next.gtid);
    assert_eq!(binlog_gtids(&fs2), lg2);
    (rep, acked, lg, bg)
}

#[test]
fn crash_after_prepare_sync_rolls_the_prepared_group_back() {
    let (rep, acked, lg, bg) = crash_at("binlog.after_prepare_sync", None);
    assert_eq!(lg, acked);
    assert_eq!(bg, acked);
    assert_eq!(
        (
            rep.rolled_back,
            rep.committed_in_doubt,
            rep.binlog_ahead,
            rep.binlog_behind
        ),
        (1, 0, 0, 0)
    );
}

#[test]
fn crash_after_binlog_write_rolls_back_what_the_binlog_lost() {
    let (rep, acked, lg, bg) = crash_at("binlog.after_binlog_write", None);
    assert_eq!(lg, acked);
    assert_eq!(bg, acked);
    assert_eq!((rep.rolled_back, rep.committed_in_doubt), (1, 0));
}

#[test]
fn crash_after_binlog_sync_commits_the_binlogged_group() {
    let (rep, acked, lg, bg) = crash_at("binlog.after_binlog_sync", None);
    assert_eq!(
        lg.len(),
        6,
        "the unacknowledged 6th group is in the binlog: committed"
    );
    assert_eq!(&lg[..5], &acked[..]);
    assert_eq!(bg, lg);
    assert_eq!((rep.rolled_back, rep.committed_in_doubt), (0, 1));
}

#[test]
fn torn_reboots_at_each_crash_point_keep_both_logs_identical() {
    for point in [
        "binlog.after_prepare_sync",
        "binlog.after_binlog_write",
        "binlog.after_binlog_sync",
    ] {
        for seed in 0..20 {
            let (rep, acked, lg, bg) = crash_at(point, Some(seed));
            let ctx = format!("{point} seed {seed}");
            assert_eq!(&lg[..5], &acked[..], "{ctx}");
            assert_eq!(bg, lg, "{ctx}");
            assert_eq!(rep.rolled_back + rep.committed_in_doubt, 1, "{ctx}");
            assert_eq!((rep.binlog_ahead, rep.binlog_behind), (0, 0), "{ctx}");
        }
    }
}

/// The classic design's `sync_binlog = 0` hole, step by step (level 1):
///
/// 1. T1 commits: its PREPARE record is written and fsynced in the log, its group is written
///    to the binlog (not synced: `sync_binlog = 0`), it is applied and acknowledged; its
///    CommitMark is queued;
/// 2. T2 commits: the log write carries T1's CommitMark and T2's PREPARE, fsynced together
///    (T1's commit decision rides T2's fsync); T2's group is written to the binlog, not
///    synced; T2 is acknowledged;
/// 3. power fails: the binlog's page cache (T1's and T2's groups) is lost.
///
/// After reboot T1 is committed in the log (its durable CommitMark says so) but missing from
/// the binlog: the two logs diverge (a replica reading the binlog never gets T1). T2 is in
/// doubt (prepared, no CommitMark) and not in the binlog, so recovery rolls it back although
/// it was acknowledged. Engine mode has neither problem: its log is the binlog.
#[test]
fn sync_binlog_0_crash_diverges_the_logs_and_loses_an_acknowledged_commit() {
    let fs = SimFs::new();
    let o = fopts(Durability::Level1, 0);
    let (log, _) = open_file_mode(&fs, o.clone());
    let t1 = log.commit(ftxn(1, 0)).unwrap().gtid;
    let t2 = log.commit(ftxn(2, 0)).unwrap().gtid;
    assert_eq!(
        binlog_gtids(&fs),
        vec![t1, t2],
        "both written to the binlog before the crash"
    );
    let fs2 = fs.reboot(0, false);
    drop(log);
    let (log, rep) = open_file_mode(&fs2, o);
    assert_eq!(log_gtids(&log), vec![t1], "T1 committed in the log");
    assert!(
        binlog_gtids(&fs2).is_empty(),
        "T1 missing from the binlog: divergence"
    );
    assert_eq!(rep.binlog_behind, 1, "recovery reports the divergence");
    assert_eq!(rep.rolled_back, 1, "the acknowledged T2 was rolled back");
    assert_eq!(rep.committed_in_doubt, 0);
}

#[test]
fn level2_crash_leaves_the_binlog_ahead_and_reports_it() {
    let fs = SimFs::new();
    let o = fopts(Durability::Level2, 1);
    let (log, _) = open_file_mode(&fs, o.clone());
    let g = commit_n(&log, 3);
    assert_eq!(
        log.stats().fsyncs,
        0,
        "level 2: the commit does not sync the log"
    );
    assert_eq!(binlog_gtids(&fs), g);
    let fs2 = fs.reboot(0, false);
    drop(log);
    let (log, rep) = open_file_mode(&fs2, o);
    assert!(log_gtids(&log).is_empty());
    assert_eq!(binlog_gtids(&fs2), g);
    assert_eq!(
        (rep.binlog_ahead, rep.binlog_behind, rep.rolled_back),
        (3, 0, 0)
    );
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

const POINTS: [&str; 8] = [
    "binlog.after_prepare_sync",
    "binlog.after_binlog_write",
    "binlog.after_binlog_sync",
    "commit.before_write",
    "commit.after_write",
    "rotate.after_header",
    "rotate.after_rename",
    "classic.rotate.after_old_sync",
];

/// One seeded run; returns (crashed, rolled back, committed in doubt).
fn random_run(seed: u64) -> (bool, u64, u64) {
    let mut rng = Rng(seed);
    let point = POINTS[(rng.next() % POINTS.len() as u64) as usize];
    let rare = point.contains("rotate");
    let nth = 1 + rng.next() % if rare { 3 } else { 60 };
    let threads = 1 + rng.next() % 4;
    let mut o = fopts(Durability::Level1, 1);
    o.segment_size = 32 << 10;
    if let BinlogStorage::File { classic: c, .. } = &mut o.binlog_storage {
        c.max_size = 1024 + rng.next() % 4096;
    }
    let fs = SimFs::new();
    let (log, _) = open_file_mode(&fs, o.clone());
    fs.arm_crash_point(point, nth);
    let acked = Arc::new(Mutex::new(Vec::new()));
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let log = log.clone();
            let acked = acked.clone();
            let mut trng = Rng(seed ^ ((t + 1) * 0x1234_5678));
            std::thread::spawn(move || {
                for i in 0..50 {
                    let tag = t * 1000 + i;
                    match log.commit(ftxn(tag, (trng.next() % 1200) as usize)) {
                        Ok(r) => acked.lock().unwrap().push((r.gtid, tag)),
                        Err(_) => break,
                    }
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let crashed = fs.crashed();
    let fs2 = fs.reboot(seed, true);
    drop(log);
    let ctx = format!("seed {seed} ({point} #{nth}, {threads} threads, crashed={crashed})");
    let (log2, rep) = Log::open(fs2.clone(), o).unwrap_or_else(|e| panic!("{ctx}: reopen: {e}"));
    let rep = rep.binlog.unwrap();
    let recs = all_records(&log2);
    assert_contiguous(&recs, &ctx);
    let lg: Vec<Gtid> = recs.iter().map(|r| r.gtid.unwrap()).collect();
    assert_eq!(
        binlog_gtids(&fs2),
        lg,
        "{ctx}: the log's records are the binlog's groups ({rep:?})"
    );
    assert_eq!(
        (rep.binlog_ahead, rep.binlog_behind),
        (0, 0),
        "{ctx}: {rep:?}"
    );
    for &(g, tag) in acked.lock().unwrap().iter() {
        let r = recs
            .get(g.seq_no as usize - 1)
            .unwrap_or_else(|| panic!("{ctx}: acked {g} lost"));
        assert_eq!(tag_of(r), tag, "{ctx}: {g} holds another transaction");
    }
    let next = log2
        .commit(ftxn(999_999, 0))
        .unwrap_or_else(|e| panic!("{ctx}: commit after recovery: {e}"));
    assert_eq!(next.gtid.seq_no, recs.len() as u64 + 1, "{ctx}");
    if std::env::var("ONELOG_CRASH_VERBOSE").is_ok() {
        eprintln!(
            "{ctx}: acked {} recovered {} {rep:?}",
            acked.lock().unwrap().len(),
            recs.len()
        );
    }
    (crashed, rep.rolled_back, rep.committed_in_doubt)
}

#[test]
fn random_crash_points_keep_acked_commits_in_both_logs_and_the_logs_identical() {
    let base = std::env::var("ONELOG_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0u64);
    let runs = std::env::var("ONELOG_CRASH_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200u64);
    let (mut crashed, mut rolled_back, mut committed) = (0, 0, 0);
    for seed in base..base + runs {
        let (c, r, d) = random_run(seed);
        crashed += c as u64;
        rolled_back += r;
        committed += d;
    }
    // The runs exercise what they claim to: most crash, and recovery both rolls back and
    // commits in-doubt groups.
    if runs >= 100 {
        assert!(crashed > runs / 2, "{crashed} of {runs} runs crashed");
        assert!(
            rolled_back > 0 && committed > 0,
            "{rolled_back} rolled back, {committed} committed in doubt"
        );
    }
}

/// Any durability level and `sync_binlog`: after a random crash the two logs are prefixes of
/// one sequence of groups (same order), and recovery reports exactly how far they differ.
fn random_lax_run(seed: u64) {
    let mut rng = Rng(seed);
    let point = POINTS[(rng.next() % 3) as usize];
    let nth = 1 + rng.next() % 40;
    let level = Durability::from_level((rng.next() % 3) as u8).unwrap();
    let sync_binlog = [0u32, 1, 3][(rng.next() % 3) as usize];
    let threads = 1 + rng.next() % 3;
    let o = fopts(level, sync_binlog);
    let fs = SimFs::new();
    let (log, _) = open_file_mode(&fs, o.clone());
    fs.arm_crash_point(point, nth);
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let log = log.clone();
            std::thread::spawn(move || {
                for i in 0..30 {
                    if log.commit(ftxn(t * 1000 + i, 0)).is_err() {
                        break;
                    }
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let fs2 = fs.reboot(seed, true);
    drop(log);
    let ctx = format!("seed {seed} ({point} #{nth}, {level:?}, sync_binlog={sync_binlog})");
    let (log2, rep) = Log::open(fs2.clone(), o).unwrap_or_else(|e| panic!("{ctx}: reopen: {e}"));
    let rep = rep.binlog.unwrap();
    let lg = log_gtids(&log2);
    let bg = binlog_gtids(&fs2);
    let n = lg.len().min(bg.len());
    assert_eq!(
        lg[..n],
        bg[..n],
        "{ctx}: the logs disagree on their common prefix"
    );
    assert_eq!(
        rep.binlog_ahead,
        bg.len().saturating_sub(lg.len()) as u64,
        "{ctx}"
    );
    assert_eq!(
        rep.binlog_behind,
        lg.len().saturating_sub(bg.len()) as u64,
        "{ctx}"
    );
}

#[test]
fn random_crashes_at_any_level_and_sync_binlog_leave_the_logs_prefixes_of_one_history() {
    for seed in 0..150 {
        random_lax_run(seed);
    }
}

// ---------------------------------------------------------------------------------------
// Switching between engine mode and file mode (`filemode.since`, see `filemode.rs`).
// ---------------------------------------------------------------------------------------

use onelog_log::filemode::{
    CRASH_AFTER_CATCH_UP, CRASH_CATCH_UP_AFTER_GROUP, CRASH_MARKER_AFTER_REMOVE,
    CRASH_MARKER_AFTER_RENAME, CRASH_MARKER_AFTER_TMP_SYNC, MARKER_NAME,
};
use onelog_log::{LogError, Mirror};

/// Engine-mode options on the same log directory (flusher out of the way).
fn eopts() -> LogOptions {
    LogOptions {
        flush_interval: Duration::from_secs(3600),
        ..opts(1 << 20, Durability::Level1)
    }
}

fn marker_path() -> PathBuf {
    dir().join(MARKER_NAME)
}

/// Commits `n` records tagged `base..base + n` (padded by `pad`), returning their GTIDs.
fn commit_tagged(log: &Log, base: u64, n: u64, pad: usize) -> Vec<Gtid> {
    (0..n)
        .map(|i| log.commit(ftxn(base + i, pad)).unwrap().gtid)
        .collect()
}

/// The log's records as (GTID, tag), checked contiguous.
fn log_tags(log: &Log, ctx: &str) -> Vec<(Gtid, u64)> {
    let recs = all_records(log);
    assert_contiguous(&recs, ctx);
    recs.iter().map(|r| (r.gtid.unwrap(), tag_of(r))).collect()
}

/// After a switch to file mode: every acknowledged (GTID, tag) is in the log, nothing was in
/// doubt, the binlog holds exactly the log's groups in its order, and commits continue in
/// both. Returns the log's GTIDs.
fn assert_switched(log: &Log, fs: &SimFs, acked: &[(Gtid, u64)], ctx: &str) -> Vec<Gtid> {
    let got = log_tags(log, ctx);
    assert!(got.len() >= acked.len(), "{ctx}: {got:?}");
    assert_eq!(
        &got[..acked.len()],
        acked,
        "{ctx}: acknowledged commits lost"
    );
    let lg: Vec<Gtid> = got.iter().map(|x| x.0).collect();
    assert_eq!(binlog_gtids(fs), lg, "{ctx}: binlog != log");
    let next = log.commit(ftxn(777_777, 0)).unwrap().gtid;
    assert_eq!(next.seq_no, lg.len() as u64 + 1, "{ctx}");
    let mut lg2 = lg.clone();
    lg2.push(next);
    assert_eq!(binlog_gtids(fs), lg2, "{ctx}: after a commit");
    assert_eq!(log_gtids(log), lg2, "{ctx}");
    lg
}

/// File mode commits `a` (clean shutdown: the classic files hold them), then engine mode
/// commits `b` (level 1, acknowledged) and the machine loses power. Returns the rebooted disk
/// and the acknowledged (GTID, tag) pairs in log order.
fn file_then_engine(a: u64, b: u64, pad: usize) -> (Arc<SimFs>, Vec<(Gtid, u64)>) {
    let fs = SimFs::new();
    let (log, _) = open_file_mode(&fs, fopts(Durability::Level1, 1));
    let mut acked: Vec<(Gtid, u64)> = commit_tagged(&log, 100, a, pad)
        .into_iter()
        .zip(100..)
        .collect();
    log.shutdown().unwrap();
    drop(log);
    assert!(fs.exists(&marker_path()), "file mode leaves its marker");
    let log = open(&fs, eopts());
    assert!(
        !fs.exists(&marker_path()),
        "engine mode removes the marker before committing"
    );
    acked.extend(commit_tagged(&log, 200, b, pad).into_iter().zip(200..));
    let fs2 = fs.reboot(5, true);
    drop(log);
    (fs2, acked)
}

#[test]
fn file_mode_after_engine_mode_keeps_acknowledged_commits_despite_stale_classic_files() {
    let (fs, acked) = file_then_engine(3, 4, 0);
    let stale = binlog_gtids(&fs);
    assert_eq!(
        stale.len(),
        3,
        "the classic files lack the engine-mode commits"
    );
    let (log, rep) = open_file_mode(&fs, fopts(Durability::Level1, 1));
    assert_eq!(
        (
            rep.rolled_back,
            rep.committed_in_doubt,
            rep.binlog_caught_up,
            rep.binlog_behind,
            rep.binlog_ahead,
            rep.file_mode_since
        ),
        (0, 0, 4, 0, 0, None),
        "{rep:?}"
    );
    assert_switched(&log, &fs, &acked, "stale classic files");
    // The next file-mode open knows where this session started.
    let end = log.end_lsn();
    log.shutdown().unwrap();
    drop(log);
    let (log, rep) = open_file_mode(&fs, fopts(Durability::Level1, 1));
    assert!(rep.file_mode_since.is_some_and(|s| s <= end), "{rep:?}");
    assert_eq!((rep.rolled_back, rep.binlog_caught_up), (0, 0));
    assert_eq!(binlog_gtids(&fs), log_gtids(&log));
}

#[test]
fn catch_up_finds_a_binlog_that_ends_at_a_segment_boundary() {
    // The classic files end with the last group of segment 1; engine mode rotated the log
    // before committing, so the missing groups start segment 2.
    let fs = SimFs::new();
    let (log, _) = open_file_mode(&fs, fopts(Durability::Level1, 1));
    let mut acked: Vec<(Gtid, u64)> = commit_tagged(&log, 0, 3, 0).into_iter().zip(0..).collect();
    log.shutdown().unwrap();
    drop(log);
    let log = open(&fs, eopts());
    log.rotate().unwrap();
    log.rotate().unwrap();
    acked.extend(commit_tagged(&log, 10, 4, 0).into_iter().zip(10..));
    assert_eq!(log.segments().len(), 3, "an empty segment between");
    log.shutdown().unwrap();
    drop(log);
    let (log, rep) = open_file_mode(&fs, fopts(Durability::Level1, 1));
    assert_eq!(
        (rep.rolled_back, rep.binlog_caught_up, rep.binlog_behind),
        (0, 4, 0),
        "{rep:?}"
    );
    assert_switched(&log, &fs, &acked, "segment boundary");
}

#[test]
fn file_mode_after_engine_mode_without_classic_files_builds_them_from_the_whole_log() {
    let fs = SimFs::new();
    let mut eo = eopts();
    eo.segment_size = 32 << 10;
    let log = open(&fs, eo.clone());
    let acked: Vec<(Gtid, u64)> = commit_tagged(&log, 10, 90, 900)
        .into_iter()
        .zip(10..)
        .collect();
    assert!(log.segments().len() > 2, "the catch-up crosses segments");
    let fs = fs.reboot(1, true);
    drop(log);
    let mut fo = fopts(Durability::Level1, 1);
    fo.segment_size = 32 << 10;
    if let BinlogStorage::File { classic: c, .. } = &mut fo.binlog_storage {
        c.max_size = 1024;
    }
    let (log, rep) = open_file_mode(&fs, fo);
    assert_eq!(
        (rep.rolled_back, rep.binlog_caught_up, rep.binlog_behind),
        (0, 90, 0),
        "{rep:?}"
    );
    assert!(rep.binlog_files.len() == 1, "created at open: {rep:?}");
    assert!(
        log.classic_files().unwrap().len() > 3,
        "the catch-up rotated"
    );
    assert_switched(&log, &fs, &acked, "no classic files");
}

#[test]
fn file_mode_after_engine_mode_with_a_lagging_mirror_catches_the_files_up() {
    // Deterministic lag: the mirror stopped after 5 groups, engine mode committed 6 more.
    let fs = SimFs::new();
    let log = open(&fs, eopts());
    let mut acked: Vec<(Gtid, u64)> = commit_tagged(&log, 0, 5, 0).into_iter().zip(0..).collect();
    let (m, _) = Mirror::start(log.clone(), fs.clone(), classic(1 << 20)).unwrap();
    assert!(m.wait_caught_up(Duration::from_secs(10)));
    m.shutdown().unwrap();
    drop(m);
    acked.extend(commit_tagged(&log, 50, 6, 0).into_iter().zip(50..));
    let fs2 = fs.reboot(2, false);
    drop(log);
    assert_eq!(binlog_gtids(&fs2).len(), 5);
    let (log, rep) = open_file_mode(&fs2, fopts(Durability::Level1, 1));
    assert_eq!(
        (rep.rolled_back, rep.binlog_caught_up, rep.binlog_behind),
        (0, 6, 0),
        "{rep:?}"
    );
    assert_switched(&log, &fs2, &acked, "stopped mirror");

    // Power loss while the mirror follows the log: whatever prefix its files kept.
    for seed in 0..8u64 {
        let fs = SimFs::new();
        let log = open(&fs, eopts());
        let (m, _) = Mirror::start(log.clone(), fs.clone(), classic(2048)).unwrap();
        let acked: Vec<(Gtid, u64)> = commit_tagged(&log, 0, 20 + seed * 3, 100)
            .into_iter()
            .zip(0..)
            .collect();
        let fs2 = fs.reboot(seed, true);
        drop(m);
        drop(log);
        let ctx = format!("running mirror, seed {seed}");
        let (log, rep) = open_file_mode(&fs2, fopts(Durability::Level1, 1));
        assert_eq!(
            (rep.rolled_back, rep.binlog_behind),
            (0, 0),
            "{ctx}: {rep:?}"
        );
        assert_switched(&log, &fs2, &acked, &ctx);
    }
}

#[test]
fn crash_while_switching_to_file_mode_loses_no_acknowledged_commit() {
    let cases: [(&'static str, u64); 7] = [
        (CRASH_CATCH_UP_AFTER_GROUP, 1),
        (CRASH_CATCH_UP_AFTER_GROUP, 3),
        ("classic.rotate.after_old_sync", 1),
        (CRASH_AFTER_CATCH_UP, 1),
        (CRASH_MARKER_AFTER_TMP_SYNC, 1),
        (CRASH_MARKER_AFTER_RENAME, 1),
        ("commit.before_write", 1),
    ];
    for (point, nth) in cases {
        for seed in 0..6u64 {
            let ctx = format!("{point} #{nth} seed {seed}");
            let (fs, acked) = file_then_engine(4, 5, 300);
            let mut fo = fopts(Durability::Level1, 1);
            if let BinlogStorage::File { classic: c, .. } = &mut fo.binlog_storage {
                c.max_size = 512;
            }
            fs.arm_crash_point(point, nth);
            match Log::open(fs.clone(), fo.clone()) {
                Err(_) => {}
                Ok((log, _)) => {
                    // Crashed in the first commit of the new session, after the switch.
                    assert_eq!(point, "commit.before_write", "{ctx}");
                    assert!(log.commit(ftxn(1, 0)).is_err(), "{ctx}");
                }
            }
            assert!(fs.crashed(), "{ctx}: the crash point was reached");
            let fs2 = fs.reboot(seed, true);
            let (log, rep) = open_file_mode(&fs2, fo.clone());
            assert_eq!(
                (rep.rolled_back, rep.binlog_behind),
                (0, 0),
                "{ctx}: {rep:?}"
            );
            let got = log_tags(&log, &ctx);
            assert_eq!(got.len(), acked.len(), "{ctx}: nothing else was committed");
            assert_switched(&log, &fs2, &acked, &ctx);
        }
    }
}

#[test]
fn crash_while_engine_mode_removes_the_marker_keeps_both_logs_consistent() {
    // File mode leaves a prepared-only group (crash after its prepare sync).
    let setup = || {
        let fs = SimFs::new();
        let fo = fopts(Durability::Level1, 1);
        let (log, _) = open_file_mode(&fs, fo);
        let acked: Vec<(Gtid, u64)> = commit_tagged(&log, 0, 4, 0).into_iter().zip(0..).collect();
        fs.arm_crash_point("binlog.after_prepare_sync", 1);
        assert!(log.commit(ftxn(99, 0)).is_err());
        let fs2 = fs.reboot(0, false);
        drop(log);
        (fs2, acked)
    };
    // Engine mode crashes right after removing the marker, before the directory sync: the
    // marker is back, so file mode still rolls the prepared group back.
    let (fs, acked) = setup();
    fs.arm_crash_point(CRASH_MARKER_AFTER_REMOVE, 1);
    assert!(Log::open(fs.clone(), eopts()).is_err());
    let fs = fs.reboot(0, false);
    assert!(fs.exists(&marker_path()));
    let (log, rep) = open_file_mode(&fs, fopts(Durability::Level1, 1));
    assert_eq!((rep.rolled_back, rep.binlog_caught_up), (1, 0), "{rep:?}");
    assert_switched(
        &log,
        &fs,
        &acked,
        "engine crashed before the removal was durable",
    );

    // Engine mode completes its open: it commits the prepared group (the log is the binlog
    // there), so file mode must keep it and copy it into the classic binlog.
    let (fs, mut acked) = setup();
    let log = open(&fs, eopts());
    assert!(!fs.exists(&marker_path()));
    let recs = all_records(&log);
    assert_eq!(recs.len(), 5, "engine mode committed the prepared record");
    acked.push((recs[4].gtid.unwrap(), 99));
    let fs = fs.reboot(0, false);
    drop(log);
    let (log, rep) = open_file_mode(&fs, fopts(Durability::Level1, 1));
    assert_eq!(
        (rep.rolled_back, rep.binlog_caught_up, rep.file_mode_since),
        (0, 1, None),
        "{rep:?}"
    );
    assert_switched(&log, &fs, &acked, "engine committed the prepared group");
}

#[test]
fn file_engine_file_round_trips_keep_every_commit_in_both_logs() {
    let mut fs = SimFs::new();
    let mut acked: Vec<(Gtid, u64)> = Vec::new();
    let mut tag = 0u64;
    for round in 0..3 {
        for engine in [false, true] {
            let ctx = format!("round {round} engine={engine}");
            let log = if engine {
                open(&fs, eopts())
            } else {
                let (log, rep) = open_file_mode(&fs, fopts(Durability::Level1, 1));
                // Every file-mode open here follows an engine-mode run (or a new log).
                assert_eq!(
                    (rep.rolled_back, rep.file_mode_since, rep.binlog_caught_up),
                    (0, None, if round == 0 { 0 } else { 3 }),
                    "{ctx}: {rep:?}"
                );
                let lg = log_gtids(&log);
                assert_eq!(binlog_gtids(&fs), lg, "{ctx}");
                log
            };
            assert_eq!(log_tags(&log, &ctx), acked, "{ctx}");
            for g in commit_tagged(&log, tag, 3, 0) {
                acked.push((g, tag));
                tag += 1;
            }
            // Alternate clean shutdowns and power losses.
            if round % 2 == 0 {
                log.shutdown().unwrap();
                drop(log);
            } else {
                let next = fs.reboot(round, true);
                drop(log);
                fs = next;
            }
        }
    }
    let (log, rep) = open_file_mode(&fs, fopts(Durability::Level1, 1));
    assert_eq!((rep.rolled_back, rep.binlog_caught_up), (0, 3), "{rep:?}");
    assert_switched(&log, &fs, &acked, "final");
    // File mode after file mode: the marker says where the session started.
    log.shutdown().unwrap();
    drop(log);
    let (log, rep) = open_file_mode(&fs, fopts(Durability::Level1, 1));
    assert!(rep.file_mode_since.is_some(), "{rep:?}");
    assert_eq!((rep.rolled_back, rep.binlog_caught_up), (0, 0), "{rep:?}");
    assert_eq!(binlog_gtids(&fs), log_gtids(&log));
}

#[test]
fn binlog_from_another_history_is_reported_not_caught_up() {
    // File mode writes 3 groups; engine mode resets the log (RESET MASTER) and writes 5: the
    // classic files end at 0-1-3 of the old history, which the log does not hold.
    let fs = SimFs::new();
    let (log, _) = open_file_mode(&fs, fopts(Durability::Level1, 1));
    let old = commit_n(&log, 3);
    log.shutdown().unwrap();
    drop(log);
    let log = open(&fs, eopts());
    log.reset().unwrap();
    commit_n(&log, 5);
    log.shutdown().unwrap();
    drop(log);
    let (log, rep) = open_file_mode(&fs, fopts(Durability::Level1, 1));
    assert_eq!(
        (rep.rolled_back, rep.binlog_caught_up, rep.binlog_behind),
        (0, 0, 2),
        "{rep:?}"
    );
    assert_eq!(log_gtids(&log).len(), 5, "nothing rolled back");
    assert_eq!(binlog_gtids(&fs), old, "nothing appended on a guess");
}

#[test]
fn damaged_or_foreign_marker_refuses_to_start_naming_the_file() {
    let fs = SimFs::new();
    let (log, _) = open_file_mode(&fs, fopts(Durability::Level1, 1));
    commit_n(&log, 2);
    log.shutdown().unwrap();
    drop(log);
    let good = fs.read_file(&marker_path()).unwrap();
    assert!(fs.corrupt(&marker_path(), 14, &[0x5a]));
    let e = Log::open(fs.clone(), fopts(Durability::Level1, 1)).unwrap_err();
    assert!(matches!(e, LogError::Corrupt { .. }), "{e}");
    assert!(e.to_string().contains(MARKER_NAME), "{e}");

    // A marker whose session starts beyond the log's end does not belong to this log.
    let f = fs.open(&marker_path(), false).unwrap();
    f.write_all_at(&good, 0).unwrap();
    let since = u64::from_le_bytes(good[12..20].try_into().unwrap());
    let mut far = good.clone();
    far[12..20].copy_from_slice(&(since + 1_000_000).to_le_bytes());
    let crc = onelog_log::frame::mask_crc(crc32c::crc32c(&far[..20]));
    far[20..].copy_from_slice(&crc.to_le_bytes());
    f.write_all_at(&far, 0).unwrap();
    let e = Log::open(fs.clone(), fopts(Durability::Level1, 1)).unwrap_err();
    assert!(
        matches!(e, LogError::Corrupt { .. }) && e.to_string().contains(MARKER_NAME),
        "{e}"
    );

    // Engine mode does not read it: it removes it.
    f.write_all_at(&good, 0).unwrap();
    open(&fs, eopts()).shutdown().unwrap();
    assert!(!fs.exists(&marker_path()));
}
