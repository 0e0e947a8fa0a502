//! Records larger than a segment (issue 14 part 3, step 4): such a record gets a segment of
//! its own, as large as the record, and every reader of segments handles it: the log's
//! readers from any position, recovery (also of a log whose last record is a large one torn
//! at random points by a crash: MariaDB's MDEV-38462, a large transaction that recovery
//! cannot take, must not happen here), retention's purge, the verifier.
//!
//! The large record's size is `ONELOG_LARGE_RECORD_MB` (default 20 MiB, what CI runs; the
//! issue's 500 MB case is run by hand with `ONELOG_LARGE_RECORD_MB=500 cargo test --release
//! -p onelog-log --test large_records`).

mod common;

use common::*;
use onelog_log::{Durability, LogError, PendingRecord, SimFs, StreamedEvents};

fn large_len() -> usize {
    std::env::var("ONELOG_LARGE_RECORD_MB")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(20)
        << 20
}

const SEGMENT: u64 = 1 << 20;

/// A record of `len` event bytes (tagged `tag`), its bulk streamed when `streamed`.
fn large(tag: u64, len: usize, streamed: bool) -> PendingRecord {
    let mut r = txn(tag, 100);
    let body: Vec<u8> = (0..len).map(|j| (j as u64 * 31 + tag) as u8).collect();
    if streamed {
        r.streamed = Some(StreamedEvents {
            source: Box::new(body),
            tail: vec![7; 40],
        });
    } else {
        r.events.extend_from_slice(&body);
        r.events.extend_from_slice(&[7; 40]);
    }
    r
}

fn segment_len(fs: &SimFs, n: u64) -> Option<usize> {
    fs.read_file(&dir().join(format!("binlog-{n:06}.olog")))
        .map(|b| b.len())
}

#[test]
fn a_record_larger_than_a_segment_gets_a_segment_of_its_size_and_reads_back_everywhere() {
    let big = large_len();
    for streamed in [true, false] {
        let fs = SimFs::new();
        let o = opts(SEGMENT, Durability::Level1);
        let log = open(&fs, o.clone());
        for i in 0..5 {
            log.commit(txn(i, 3000)).unwrap();
        }
        let r = log.commit(large(5, big, streamed)).unwrap();
        assert!(r.end_lsn - r.lsn > big as u64);
        for i in 6..400 {
            log.commit(txn(i, 3000)).unwrap();
        }
        let recs = all_records(&log);
        assert_eq!(recs.len(), 400);
        assert_contiguous(&recs, "large");
        assert_eq!(recs[5].events.len(), ev_len() + 100 + big + 40);
        assert_eq!(recs[5].events, {
            let mut e = large(5, big, false).events;
            e[..ev_len()].copy_from_slice(&recs[5].events[..ev_len()]);
            e
        });
        // The record's segment is as large as it needs; the others are segment_size.
        assert_eq!(segment_len(&fs, 1), Some(SEGMENT as usize));
        assert!(
            segment_len(&fs, 2).unwrap() > big,
            "{:?}",
            segment_len(&fs, 2)
        );
        assert_eq!(segment_len(&fs, 3), Some(SEGMENT as usize));
        // A reader starting inside the big segment, at the record and after it.
        for start in [r.lsn, r.end_lsn] {
            let from = read_all(
                &mut log
                    .reader(onelog_log::ReadStart::Lsn(start), Default::default())
                    .unwrap(),
            );
            // At the end LSN a SyncMark or GtidState record (not returned) may come first.
            assert!(
                from[0].lsn >= start && from[0].lsn < start + 4096,
                "{start}"
            );
            assert_eq!(from.len(), if start == r.lsn { 395 } else { 394 });
        }
        drop(log);
        let log = open(&fs, o);
        assert_eq!(all_records(&log), recs);
        log.commit(txn(400, 10)).unwrap();
        // Retention purges through the big segment.
        let purged = log.purge_before(recs[399].lsn).unwrap();
        assert!(purged >= 2, "{purged}");
        assert_eq!(segment_len(&fs, 2), None);
        let oldest = log.segments()[0].start_lsn;
        assert!(oldest > r.end_lsn, "{oldest}");
        let left = read_all(
            &mut log
                .reader(onelog_log::ReadStart::Lsn(oldest), Default::default())
                .unwrap(),
        );
        assert_eq!(
            left.last().map(|l| l.gtid),
            Some(Some(onelog_binlog::Gtid::new(0, 1, 401)))
        );
    }
}

fn ev_len() -> usize {
    onelog_binlog::event::gtid::GTID_EVENT_LEN
}

/// Crashes while the large record is written (at `point`), tears the unsynced writes with
/// `seed`, and reopens: the log keeps every record before it and the record either whole or
/// not at all, and takes commits again.
fn torn_large_last_record(len: usize, point: &'static str, seed: u64) {
    let fs = SimFs::new();
    let o = opts(SEGMENT, Durability::Level1);
    let log = open(&fs, o.clone());
    for i in 0..20 {
        log.commit(txn(i, 2000)).unwrap();
    }
    let before = all_records(&log);
    fs.arm_crash_point(point, 1);
    let r = log.commit(large(20, len, seed.is_multiple_of(2)));
    assert!(r.is_err(), "the crash fails the commit");
    drop(log);
    let fs = fs.reboot(seed, true);
    let log = open(&fs, o);
    let after = all_records(&log);
    assert!(
        after.len() == 20 || after.len() == 21,
        "{point} seed {seed}: {} records",
        after.len()
    );
    assert_eq!(after[..20], before[..], "{point} seed {seed}");
    if let Some(last) = after.get(20) {
        assert_eq!(last.events.len(), ev_len() + 100 + len + 40);
    }
    let next = log.commit(txn(99, 10)).unwrap();
    assert_eq!(all_records(&log).last().map(|r| r.lsn), Some(next.lsn));
}

#[test]
fn recovery_takes_a_log_whose_last_record_is_a_large_one_torn_at_random_points() {
    let big = large_len();
    // The appender syncs every MAX_UNSYNCED (8 MiB) bytes, so a crash can only tear the
    // record past its last sync: sizes below, at and past the bound put the cut points all
    // over the record.
    let sizes = [big.min(3 << 20), big.min(12 << 20), big];
    for (k, &len) in sizes.iter().enumerate() {
        for seed in 0..6u64 {
            torn_large_last_record(len, "commit.after_write", seed * 7 + k as u64);
        }
        torn_large_last_record(len, "commit.before_write", k as u64);
        torn_large_last_record(len, "rotate.after_rename", k as u64 + 1);
    }
}

#[test]
fn a_record_past_the_largest_frame_is_refused_and_the_log_goes_on() {
    let fs = SimFs::new();
    let log = open(&fs, opts(SEGMENT, Durability::Level1));
    // A full disk while making the large segment refuses the record, nothing else.
    fs.set_space_limit(Some(4 << 20));
    let e = log.commit(large(1, 8 << 20, true)).unwrap_err();
    assert!(matches!(e, LogError::StorageFull { .. }), "{e}");
    fs.set_space_limit(None);
    let r = log.commit(txn(2, 10)).unwrap();
    assert_eq!(r.gtid.seq_no, 1);
}
