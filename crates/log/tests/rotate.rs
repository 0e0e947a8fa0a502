//! `Log::rotate` (FLUSH BINARY LOGS): seals the current segment and continues in the next,
//! without losing or reordering records, and survives a reopen.

mod common;

use std::time::Duration;

use common::*;
use onelog_log::{Durability, SimFs};

#[test]
fn rotate_seals_the_segment_and_records_continue_in_the_next_one() {
    let fs = SimFs::new();
    let log = open(&fs, opts(1 << 20, Durability::Level0));
    for i in 0..3 {
        log.commit(txn(i, 100)).unwrap();
    }
    let before = log.segments();
    assert_eq!(before.len(), 1);
    log.rotate().unwrap();
    // Rotation writes and syncs what level 0 buffered.
    assert_eq!(log.durable_lsn(), log.end_lsn());
    // Rotating an empty segment is allowed too (MariaDB creates an empty binlog file).
    log.rotate().unwrap();
    log.commit(txn(3, 100)).unwrap();
    log.flush().unwrap();
    let segs = log.segments();
    assert_eq!(segs.len(), 3);
    assert_eq!(segs[0].number + 1, segs[1].number);
    assert_eq!(segs[1].number + 1, segs[2].number);
    assert_eq!(segs[0].end_lsn, segs[1].start_lsn);
    assert_eq!(segs[1].start_lsn, segs[1].end_lsn);
    assert_eq!(segs[1].end_lsn, segs[2].start_lsn);
    let recs = all_records(&log);
    assert_eq!(
        recs.iter().map(tag_of).collect::<Vec<_>>(),
        vec![0, 1, 2, 3]
    );
    assert_contiguous(&recs, "across rotations");
    assert!(recs[3].lsn >= segs[2].start_lsn);
    assert_eq!(log.gtid_state().pos().to_string(), "0-1-4");
    log.shutdown().unwrap();
    drop(log);
    let log = open(&fs, opts(1 << 20, Durability::Level1));
    assert_eq!(log.segments().len(), 3);
    let recs = all_records(&log);
    assert_eq!(
        recs.iter().map(tag_of).collect::<Vec<_>>(),
        vec![0, 1, 2, 3]
    );
    // The sealed segments can now be purged up to the start of the current one.
    assert_eq!(log.purge_before(segs[2].start_lsn).unwrap(), 2);
    assert_eq!(log.segments().len(), 1);
}

#[test]
fn checked_purges_keep_what_recovery_and_readers_need() {
    use onelog_log::retention::{NeededBy, PurgeError, Retention};
    let fs = SimFs::new();
    let log = open(&fs, opts(1 << 20, Durability::Level1));
    for i in 0..3 {
        log.commit(txn(i, 100)).unwrap();
        log.rotate().unwrap();
    }
    let segs = log.segments();
    assert_eq!(segs.len(), 4);
    let name = |i: usize| onelog_log::retention::segment_name(&segs[i]);
    // No checkpoint: nothing may go, and the refusal names the oldest segment.
    let Err(PurgeError::InUse(e)) = log.purge_to_checked(&name(2), &Retention::default()) else {
        panic!("purge without a checkpoint was not refused")
    };
    assert_eq!(e.number, segs[0].number);
    assert_eq!(log.segments().len(), 4);
    let Err(PurgeError::UnknownTarget(_)) = log.purge_to_checked("nope", &Retention::default())
    else {
        panic!("unknown target was not refused")
    };
    // A checkpoint covering the first segment only, and a reader in the third.
    let r = Retention {
        checkpoint_lsn: Some(segs[0].end_lsn),
        oldest_reader_lsn: None,
    };
    let Err(PurgeError::InUse(e)) = log.purge_to_checked(&name(2), &r) else {
        panic!("purge past the checkpoint was not refused")
    };
    assert_eq!(e.number, segs[1].number);
    assert_eq!(log.purge_to_checked(&name(1), &r).unwrap().removed.len(), 1);
    let r = Retention {
        checkpoint_lsn: Some(log.end_lsn()),
        oldest_reader_lsn: Some(segs[2].start_lsn),
    };
    let out = log.purge_while_checked(&r, |_| true).unwrap();
    assert_eq!(out.removed.len(), 1);
    assert_eq!(out.removed[0].number, segs[1].number);
    let kept = out.stopped_at.expect("the reader's segment is kept");
    assert_eq!(kept.number, segs[2].number);
    assert_eq!(
        kept.needed_by,
        NeededBy::Reader {
            lsn: segs[2].start_lsn
        }
    );
    assert_eq!(log.segments()[0].number, segs[2].number);
}

/// Issue 14 part 4: the next segment is zero-filled once the current one is half full, not at
/// startup (where it competed with the first load for the disk and the CPU), and rotation
/// still finds it or prepares it on demand.
#[test]
fn the_next_segment_is_prepared_once_the_current_one_is_half_full() {
    let seg = 256u64 << 10;
    let fs = SimFs::new();
    let log = open(&fs, opts(seg, Durability::Level1));
    let tmp = common::dir().join("next.olog.tmp");
    // Three polls of the preparer: a fresh log has nothing to prepare yet.
    std::thread::sleep(PREPARER_POLL * 3);
    assert!(fs.read_file(&tmp).is_none(), "prepared at startup");
    let mut n = 0u64;
    while log.durable_lsn() < seg / 2 + 1024 {
        log.commit(txn(n, 1000)).unwrap();
        n += 1;
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while fs.read_file(&tmp).is_none_or(|b| b.len() as u64 != seg)
        && std::time::Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(fs.read_file(&tmp).map(|b| b.len() as u64), Some(seg));
    // Rotation takes it; the records go on in the next segment.
    while log.segments().len() < 3 {
        log.commit(txn(n, 1000)).unwrap();
        n += 1;
    }
    log.shutdown().unwrap();
    let log = open(&fs.reboot(1, false), opts(seg, Durability::Level1));
    assert_eq!(all_records(&log).len() as u64, n);
}

/// How often a waiting preparation asks whether the segment is half full (`prealloc::POLL`).
const PREPARER_POLL: Duration = Duration::from_millis(100);
