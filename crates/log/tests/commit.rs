//! Group commit: GTID assignment, grouping, the sink, durability levels.

mod common;

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use common::*;
use onelog_binlog::event::gtid::GtidEvent;
use onelog_binlog::Gtid;
use onelog_log::{
    CommittedRecord, Durability, GroupSink, GtidAssign, Log, LogError, ReadStart, ReaderOptions,
    RecordKind, SimFs,
};

#[test]
fn commits_round_trip_with_patched_gtid_events() {
    let fs = SimFs::new();
    let log = open(&fs, opts(1 << 20, Durability::Level1));
    let mut receipts = Vec::new();
    for i in 0..50 {
        receipts.push(log.commit(txn(i, 100)).unwrap());
    }
    let recs = all_records(&log);
    assert_eq!(recs.len(), 50);
    assert_contiguous(&recs, "single committer");
    for (r, rc) in recs.iter().zip(&receipts) {
        assert_eq!(
            (r.lsn, r.end_lsn, r.gtid),
            (rc.lsn, rc.end_lsn, Some(rc.gtid))
        );
        let ev =
            GtidEvent::decode(&r.events[..onelog_binlog::event::gtid::GTID_EVENT_LEN]).unwrap();
        assert_eq!(ev.gtid, rc.gtid);
        assert_eq!(ev.commit_id, Some(rc.commit_id));
        assert_eq!(&r.events[ev_len()..], &events(100, tag_of(r))[ev_len()..]);
    }
    assert_eq!(log.durable_lsn(), receipts[49].end_lsn);
    assert_eq!(log.gtid_state().pos().to_string(), "0-1-50");
    assert_eq!(log.stats().commits, 50);
}

fn ev_len() -> usize {
    onelog_binlog::event::gtid::GTID_EVENT_LEN
}

#[test]
fn concurrent_commits_are_grouped_with_one_fsync_per_group_and_contiguous_gtids() {
    let fs = SimFs::new();
    fs.set_fsync_latency(Duration::from_millis(2));
    let log = open(&fs, opts(4 << 20, Durability::Level1));
    let threads: Vec<_> = (0..8u64)
        .map(|t| {
            let log = log.clone();
            std::thread::spawn(move || {
                for i in 0..40 {
                    log.commit(txn(t * 1000 + i, 200)).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let s = log.stats();
    assert_eq!(s.commits, 320);
    assert!(s.fsyncs <= s.groups, "{s:?}");
    assert!(s.groups < s.commits, "no grouping happened: {s:?}");
    let recs = all_records(&log);
    assert_eq!(recs.len(), 320);
    assert_contiguous(&recs, "8 committers");
    let mut tags: Vec<u64> = recs.iter().map(tag_of).collect();
    tags.sort_unstable();
    tags.dedup();
    assert_eq!(tags.len(), 320);
}

#[derive(Default)]
struct RecordingSink {
    log: OnceLock<Arc<Log>>,
    /// (lsn, end_lsn, commit_id, durable LSN when applied)
    seen: Mutex<Vec<(u64, u64, u64, u64)>>,
}

impl GroupSink for RecordingSink {
    fn apply_group(&self, group: &mut [CommittedRecord]) {
        let durable = self.log.get().map_or(0, |l| l.durable_lsn());
        let mut seen = self.seen.lock().unwrap();
        for r in group.iter_mut() {
            if let Some(p) = r.payload.take() {
                assert_eq!(*p.downcast::<u64>().unwrap(), r.receipt.gtid.seq_no);
            }
            seen.push((
                r.receipt.lsn,
                r.receipt.end_lsn,
                r.receipt.commit_id,
                durable,
            ));
        }
    }
}

fn run_sink(strict: bool) -> (Vec<(u64, u64, u64, u64)>, u64) {
    let fs = SimFs::new();
    fs.set_fsync_latency(Duration::from_millis(1));
    let mut o = opts(4 << 20, Durability::Level2);
    o.strict_visibility = strict;
    o.state_interval = 1 << 30;
    let log = open(&fs, o);
    let sink = Arc::new(RecordingSink::default());
    let _ = sink.log.set(log.clone());
    log.set_sink(sink.clone());
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let log = log.clone();
            std::thread::spawn(move || {
                for i in 0..25 {
                    log.commit(txn(t * 100 + i, 50)).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    // A payload reaches the sink untouched.
    let next = log.gtid_state().next_seq(0);
    let mut rec = txn(0, 50);
    rec.payload = Some(Box::new(next));
    log.commit(rec).unwrap();
    let groups = log.stats().groups;
    log.shutdown().unwrap();
    let v = sink.seen.lock().unwrap().clone();
    (v, groups)
}

#[test]
fn sink_sees_groups_in_log_order_and_strict_visibility_applies_only_durable_groups() {
    for strict in [false, true] {
        let (seen, groups) = run_sink(strict);
        assert_eq!(seen.len(), 101, "strict={strict}");
        let mut ids = Vec::new();
        for w in seen.windows(2) {
            // The log's own records (SyncMarks, GTID-state records) may sit between groups.
            assert!(
                w[0].1 <= w[1].0 && w[1].0 - w[0].1 <= 64,
                "records applied out of log order (strict={strict}): {w:?}"
            );
        }
        for s in &seen {
            if ids.last() != Some(&s.2) {
                assert!(
                    !ids.contains(&s.2),
                    "commit id {} reused by a later group",
                    s.2
                );
                ids.push(s.2);
            }
            if strict {
                assert!(s.3 >= s.1, "applied before durable: {s:?}");
            }
        }
        assert_eq!(ids.len() as u64, groups);
    }
}

#[test]
fn record_without_gtid_event_is_refused_without_consuming_a_gtid() {
    let fs = SimFs::new();
    let log = open(&fs, opts(64 << 10, Durability::Level1));
    let mut bad = txn(2, 10);
    bad.events = vec![1, 2, 3];
    assert!(matches!(log.commit(bad), Err(LogError::InvalidRecord(_))));
    let mut state_kind = txn(3, 10);
    state_kind.kind = RecordKind::GtidState;
    assert!(matches!(
        log.commit(state_kind),
        Err(LogError::InvalidRecord(_))
    ));
    let r = log.commit(txn(4, 10)).unwrap();
    assert_eq!(r.gtid, Gtid::new(0, 1, 1));
}

#[test]
fn fixed_gtids_are_logged_as_given_and_next_continues_after_them() {
    let fs = SimFs::new();
    let log = open(&fs, opts(1 << 20, Durability::Level1));
    let mut rec = txn(1, 10);
    rec.gtid = GtidAssign::Fixed(Gtid::new(5, 9, 100));
    assert_eq!(log.commit(rec).unwrap().gtid, Gtid::new(5, 9, 100));
    let mut rec = txn(2, 10);
    rec.gtid = GtidAssign::Next {
        domain_id: 5,
        server_id: 1,
    };
    assert_eq!(log.commit(rec).unwrap().gtid, Gtid::new(5, 1, 101));
    assert_eq!(log.gtid_state().pos().to_string(), "5-1-101");
}

#[test]
fn level0_and_level2_ack_before_sync_and_flush_makes_durable() {
    for level in [Durability::Level0, Durability::Level2] {
        let fs = SimFs::new();
        let mut o = opts(1 << 20, level);
        o.flush_interval = Duration::from_secs(3600);
        let log = open(&fs, o);
        let r = log.commit(txn(1, 10)).unwrap();
        assert_eq!(log.end_lsn(), r.end_lsn);
        assert_eq!(log.durable_lsn(), 0, "{level:?}");
        assert_eq!(
            log.written_lsn(),
            if level == Durability::Level0 {
                0
            } else {
                r.end_lsn
            }
        );
        let mut nd = log
            .reader(
                ReadStart::Lsn(0),
                ReaderOptions {
                    include_non_durable: true,
                    ..Default::default()
                },
            )
            .unwrap();
        assert_eq!(
            read_all(&mut nd).len(),
            usize::from(level == Durability::Level2)
        );
        assert!(all_records(&log).is_empty());
        log.flush().unwrap();
        assert_eq!(log.durable_lsn(), r.end_lsn);
        assert_eq!(all_records(&log).len(), 1);
        log.set_durability(Durability::Level1);
        let r2 = log.commit(txn(2, 10)).unwrap();
        assert_eq!(log.durable_lsn(), r2.end_lsn);
        log.shutdown().unwrap();
        assert!(matches!(log.commit(txn(3, 10)), Err(LogError::Closed)));
    }
}

#[test]
fn background_flusher_makes_level2_commits_durable() {
    let fs = SimFs::new();
    let log = open(&fs, opts(1 << 20, Durability::Level2));
    let r = log.commit(txn(1, 10)).unwrap();
    let mut reader = log
        .reader(ReadStart::Lsn(0), ReaderOptions::default())
        .unwrap();
    // Waits on the condvar until the flusher's sync makes the record visible.
    let got = reader.next_wait(Duration::from_secs(30)).unwrap().unwrap();
    assert_eq!(got.end_lsn, r.end_lsn);
}

/// `n` committers in a closed loop with 10 ms fsyncs: average commits per fsync between a
/// sample after warm-up and one before the tail, with `LogOptions::commit_gather = gather`.
fn closed_loop_commits_per_fsync(gather: bool, n: u64) -> f64 {
    const EACH: u64 = 60;
    let fs = SimFs::new();
    fs.set_fsync_latency(Duration::from_millis(10));
    let mut o = opts(4 << 20, Durability::Level1);
    o.commit_gather = gather;
    let log = open(&fs, o);
    let threads: Vec<_> = (0..n)
        .map(|t| {
            let log = log.clone();
            std::thread::spawn(move || {
                let mut snaps = Vec::new();
                for i in 0..EACH {
                    log.commit(txn(t * 1000 + i, 200)).unwrap();
                    // Thread 0 samples the counters after warm-up and before the tail.
                    if t == 0 && (i == 10 || i == EACH - 10) {
                        snaps.push(log.stats());
                    }
                }
                snaps
            })
        })
        .collect();
    let snaps: Vec<_> = threads
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    assert_eq!(log.stats().commits, n * EACH);
    let (a, b) = (snaps[0], snaps[1]);
    assert!(b.fsyncs > a.fsyncs, "{a:?} {b:?}");
    // Every sync made at least one commit durable: no fsync without a group.
    assert!(b.fsyncs - a.fsyncs <= b.groups - a.groups, "{a:?} {b:?}");
    (b.commits - a.commits) as f64 / (b.fsyncs - a.fsyncs) as f64
}

#[test]
fn gather_merges_closed_loop_committers_into_one_group_per_fsync() {
    // Without the gather the committers split into two alternating cohorts (~n/2 per fsync:
    // 4.4 measured with gather off); with it each fsync covers ~all of them (8.0 measured).
    let n = 8;
    let per_fsync = closed_loop_commits_per_fsync(true, n);
    assert!(
        per_fsync >= 0.75 * n as f64,
        "only {per_fsync:.2} commits per fsync with {n} committers"
    );
}

#[test]
fn default_server_version_identifies_as_mariadb_in_every_segment_header() {
    use onelog_binlog::event::format_description::FormatDescriptionEvent;
    let fs = SimFs::new();
    let log = open(&fs, opts(64 << 10, Durability::Level1));
    let fde = FormatDescriptionEvent::decode(log.format_description()).unwrap();
    assert_eq!(fde.server_version, "10.11.9-MariaDB-onelog");
    assert!(fde.server_version.contains("MariaDB"));
}

/// The commit path's phase counters (`LogStats::phases`, issue 14 part 1): every group is
/// counted once, in the bucket of its size (one committer: all groups of one; concurrent ones:
/// the buckets still add up to the groups and their lower bounds to at most the records).
#[test]
fn commit_phases_count_groups_by_size() {
    let fs = SimFs::new();
    let log = open(&fs, opts(1 << 20, Durability::Level1));
    for i in 0..20 {
        log.commit(txn(i, 100)).unwrap();
    }
    let st = log.stats();
    assert_eq!(st.phases.group_sizes[0], 20, "one committer: groups of one");
    assert_eq!(st.phases.group_sizes.iter().sum::<u64>(), st.groups);
    std::thread::scope(|s| {
        for t in 0..8u64 {
            let log = &log;
            s.spawn(move || {
                for i in 0..50 {
                    log.commit(txn(1000 + t * 100 + i, 100)).unwrap();
                }
            });
        }
    });
    let st = log.stats();
    assert_eq!(st.commits, 420);
    assert_eq!(st.phases.group_sizes.iter().sum::<u64>(), st.groups);
    let records: u64 = st
        .phases
        .group_sizes
        .iter()
        .enumerate()
        .map(|(b, n)| n * (1 << b))
        .sum();
    assert!(
        records <= 420,
        "each bucket counts groups of at least 2^b records"
    );
}

/// A sink whose first `apply_group` blocks until released, recording what it applied.
#[derive(Default)]
struct BlockingSink {
    /// (blocked in the first apply: end LSN of its last record, released)
    gate: Mutex<(Option<u64>, bool)>,
    cv: std::sync::Condvar,
    applied: Mutex<Vec<u64>>,
}

impl GroupSink for BlockingSink {
    fn apply_group(&self, group: &mut [CommittedRecord]) {
        let mut g = self.gate.lock().unwrap();
        if g.0.is_none() {
            g.0 = group.last().map(|r| r.receipt.end_lsn);
            self.cv.notify_all();
            let deadline = std::time::Instant::now() + Duration::from_secs(20);
            while !g.1 && std::time::Instant::now() < deadline {
                g = self
                    .cv
                    .wait_timeout(g, Duration::from_millis(50))
                    .unwrap()
                    .0;
            }
        }
        drop(g);
        let mut applied = self.applied.lock().unwrap();
        applied.extend(group.iter().map(|r| r.receipt.gtid.seq_no));
    }
}

/// Issue 14 part 2: applying a group does not hold back the next group's write and sync (it
/// used to run under the writer lock before the group's own sync), and still happens, in log
/// order, before any committer of either group is acknowledged.
#[test]
fn a_slow_apply_does_not_stop_the_next_group_from_being_written_and_synced() {
    let fs = SimFs::new();
    let log = open(&fs, opts(4 << 20, Durability::Level1));
    let sink = Arc::new(BlockingSink::default());
    log.set_sink(sink.clone());
    let done = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let spawn = |tag: u64| {
        let (log, done) = (log.clone(), done.clone());
        std::thread::spawn(move || {
            let r = log.commit(txn(tag, 50));
            done.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            r
        })
    };
    let a = spawn(1);
    let a_end = {
        let mut g = sink.gate.lock().unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while g.0.is_none() && std::time::Instant::now() < deadline {
            g = sink
                .cv
                .wait_timeout(g, Duration::from_millis(50))
                .unwrap()
                .0;
        }
        g.0.expect("the first group reached the sink")
    };
    // A's apply blocks (the flusher's, during A's sync, or A's leader's after it).
    let b = spawn(2);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while log.durable_lsn() <= a_end && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(
        log.durable_lsn() > a_end,
        "the next group was written and synced while the first one's apply ran"
    );
    assert_eq!(
        done.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "acked before applied"
    );
    {
        let mut g = sink.gate.lock().unwrap();
        g.1 = true;
        sink.cv.notify_all();
    }
    let (ra, rb) = (a.join().unwrap().unwrap(), b.join().unwrap().unwrap());
    assert!(ra.end_lsn <= rb.lsn);
    assert_eq!(
        *sink.applied.lock().unwrap(),
        vec![ra.gtid.seq_no, rb.gtid.seq_no]
    );
    log.shutdown().unwrap();
}

#[test]
fn unsynced_commits_are_acknowledged_before_their_sync_at_level1() {
    // Every fsync fails: a committer that waits for its sync gets the failure; one committed
    // with `commit_queued_unsynced` was acknowledged once written, before the flusher's sync
    // (which then fails the log: nothing is retried, later commits are refused).
    let fs = SimFs::new();
    let mut o = opts(1 << 20, Durability::Level1);
    o.flush_interval = Duration::from_secs(3600);
    let log = open(&fs, o);
    let queued = std::sync::atomic::AtomicBool::new(false);
    fs.fail_fsyncs(true);
    let r = log
        .commit_queued_unsynced(txn(1, 10), &|| {
            queued.store(true, std::sync::atomic::Ordering::SeqCst)
        })
        .unwrap();
    assert!(queued.load(std::sync::atomic::Ordering::SeqCst));
    assert_eq!(log.written_lsn(), r.end_lsn);
    assert!(log.durable_lsn() < r.end_lsn);
    assert!(log.commit(txn(2, 10)).is_err());
    assert!(log.durable_lsn() < r.end_lsn);
}

#[test]
fn the_flusher_syncs_unsynced_commits_at_once() {
    // The flusher's period is an hour: only the request of the unsynced commit makes it sync.
    let fs = SimFs::new();
    let mut o = opts(1 << 20, Durability::Level1);
    o.flush_interval = Duration::from_secs(3600);
    let log = open(&fs, o);
    let mut reader = log
        .reader(ReadStart::Lsn(0), ReaderOptions::default())
        .unwrap();
    let mut ends = Vec::new();
    for i in 0..20 {
        ends.push(
            log.commit_queued_unsynced(txn(i, 50), &|| {})
                .unwrap()
                .end_lsn,
        );
    }
    // A durable-only reader sees each of them once the flusher synced it.
    for end in ends {
        let got = reader.next_wait(Duration::from_secs(30)).unwrap().unwrap();
        assert_eq!(got.end_lsn, end);
    }
    assert_eq!(log.durable_lsn(), log.written_lsn());
    // A waiting commit after them is durable when it returns, as always at level 1.
    let r = log.commit(txn(99, 10)).unwrap();
    assert!(log.durable_lsn() >= r.end_lsn);
}

/// A level-1 log whose every fsync takes 400 ms, with a [`RecordingSink`] set.
fn slow_sync_log() -> (Arc<SimFs>, Arc<Log>, Arc<RecordingSink>) {
    let fs = SimFs::new();
    fs.set_fsync_latency(Duration::from_millis(400));
    let log = open(&fs, opts(8 << 20, Durability::Level1));
    let sink = Arc::new(RecordingSink::default());
    let _ = sink.log.set(log.clone());
    log.set_sink(sink.clone());
    (fs, log, sink)
}

/// One round of [`groups_are_applied_while_their_sync_runs_and_big_ones_after`]:
/// commits A (`a_len` bytes), and once A's fsync has started, B. Returns A's and B's receipts
/// (lsn, end) and what the sink saw (lsn -> durable LSN when it was applied).
fn a_then_b_during_its_sync(
    a_len: usize,
) -> ((u64, u64), (u64, u64), std::collections::HashMap<u64, u64>) {
    let (fs, log, sink) = slow_sync_log();
    let spawn = |tag: u64, len: usize| {
        let log = log.clone();
        std::thread::spawn(move || {
            let r = log.commit(txn(tag, len)).unwrap();
            // Acknowledged only once durable.
            assert!(log.durable_lsn() >= r.end_lsn);
            (r.lsn, r.end_lsn)
        })
    };
    let fsyncs = fs.counters().fsyncs;
    let a = spawn(1, a_len);
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while fs.counters().fsyncs == fsyncs && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    let b = spawn(2, 50);
    let (a, b) = (a.join().unwrap(), b.join().unwrap());
    log.shutdown().unwrap();
    let seen = sink.seen.lock().unwrap();
    let durable_at = seen.iter().map(|s| (s.0, s.3)).collect();
    (a, b, durable_at)
}

/// Issue 14 part 2: the written groups are applied while an fsync runs, by the flusher a
/// leader wakes as its fsync starts or by the next leader while it waits for the sync lock,
/// so a group is visible before its own sync ends and its committer is acknowledged as soon
/// as it does (its leader used to apply it after the fsync, on every committer's cycle). A
/// record over 1 MiB (a big transaction) is still applied after its sync.
#[test]
fn groups_are_applied_while_their_sync_runs_and_big_ones_after() {
    // A lone committer's group: by the flusher. The wake-up must come within the 400 ms
    // fsync; on a machine too loaded for that, try again.
    let lone = |len: usize| {
        let (_fs, log, sink) = slow_sync_log();
        let r = log.commit(txn(1, len)).unwrap();
        assert!(log.durable_lsn() >= r.end_lsn);
        log.shutdown().unwrap();
        let seen = sink.seen.lock().unwrap()[0];
        assert_eq!(seen.0, r.lsn);
        // Applied before its sync ended.
        seen.3 < r.end_lsn
    };
    assert!(
        (0..4).any(|_| lone(50)),
        "a lone committer's group was never applied during its sync"
    );
    assert!(!lone(2 << 20), "a big record is applied after its sync");

    // A second committer during the first one's sync: both applied before their own syncs
    // ended, whoever applied them (again, a loaded machine may miss the 400 ms).
    let mut early = false;
    for _ in 0..4 {
        let (a, b, durable_at) = a_then_b_during_its_sync(50);
        assert!(a.1 <= b.0, "B follows A in the log");
        if durable_at[&a.0] < a.1 && durable_at[&b.0] < b.1 {
            early = true;
            break;
        }
    }
    assert!(
        early,
        "A and B were never both applied during their own syncs"
    );
    let (a, b, durable_at) = a_then_b_during_its_sync(2 << 20);
    assert!(
        durable_at[&a.0] >= a.1,
        "a big record is applied after its sync"
    );
    assert!(durable_at.contains_key(&b.0));
}
