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

/// The sizes of the segment files, in order.
fn file_sizes(fs: &SimFs, log: &onelog_log::Log) -> Vec<u64> {
    log.segments()
        .iter()
        .map(|s| fs.read_file(&s.path).map_or(0, |b| b.len() as u64))
        .collect()
}

/// Issue 11 part 4: a rotation used to keep a whole preallocated segment on disk (three FLUSH
/// LOGS held 4.1 GB). Sealed segments are trimmed to their records, a crash may leave either
/// size, and recovery accepts both and queues what is still long.
#[test]
fn sealed_segments_are_trimmed_to_their_records_and_either_size_recovers() {
    const SEG: u64 = 1 << 20;
    let fs = SimFs::new();
    let log = open(&fs, opts(SEG, Durability::Level1));
    let mut n = 0;
    for _ in 0..3 {
        for _ in 0..5 {
            log.commit(txn(n, 300)).unwrap();
            n += 1;
        }
        log.rotate().unwrap();
    }
    let segs = log.segments();
    assert_eq!(file_sizes(&fs, &log), vec![SEG; 4]);
    let data: Vec<u64> = segs.iter().map(|s| s.binlog_size()).collect();
    let freed = log.trim_sealed().unwrap();
    assert_eq!(freed, 3 * SEG - data[..3].iter().sum::<u64>());
    assert_eq!(file_sizes(&fs, &log), vec![data[0], data[1], data[2], SEG]);
    assert_eq!(log.trim_sealed().unwrap(), 0, "nothing left to trim");
    assert_eq!(all_records(&log).len() as u64, n);
    // One more rotation, then a power cut before the trim: segment 4 keeps its size.
    log.commit(txn(n, 300)).unwrap();
    n += 1;
    log.rotate().unwrap();
    // The trims were not synced: a reboot may keep or lose each of them.
    let seg4 = log.segments()[3].path.clone();
    for (seed, tear) in [(1, false), (2, true), (3, true)] {
        let fs2 = fs.reboot(seed, tear);
        let before = fs2.read_file(&seg4).map(|b| b.len() as u64);
        assert_eq!(before, Some(SEG), "segment 4 was never trimmed");
        let log2 = open(&fs2, opts(SEG, Durability::Level1));
        let recs = all_records(&log2);
        assert_eq!(recs.len() as u64, n, "seed {seed}");
        assert_contiguous(&recs, "after a reboot with trimmed segments");
        // Whatever survived, the open trimmed every sealed segment still long.
        assert_eq!(
            log2.trim_sealed().unwrap(),
            0,
            "nothing left for the engine"
        );
        let data2: Vec<u64> = log2.segments().iter().map(|s| s.binlog_size()).collect();
        assert_eq!(
            file_sizes(&fs2, &log2),
            vec![data2[0], data2[1], data2[2], data2[3], SEG]
        );
        drop(log2);
        let log3 = open(&fs2.reboot(seed, false), opts(SEG, Durability::Level1));
        assert_eq!(all_records(&log3).len() as u64, n);
    }
}

/// A sealed segment cut below the end of its records is refused, naming it: the next
/// segment's start LSN says how far its records reach. One longer than its preallocated size
/// is refused too (a file replaced by another).
#[test]
fn a_sealed_segment_cut_into_its_records_or_grown_is_refused() {
    const SEG: u64 = 1 << 20;
    let fs = SimFs::new();
    let log = open(&fs, opts(SEG, Durability::Level1));
    for i in 0..5 {
        log.commit(txn(i, 300)).unwrap();
    }
    log.rotate().unwrap();
    log.commit(txn(5, 300)).unwrap();
    let first = log.segments()[0].clone();
    let data_end = first.binlog_size();
    log.shutdown().unwrap();
    drop(log);
    for (len, says) in [
        (data_end - 1, "its records end at offset"),
        (SEG + 1, &format!("preallocated to {SEG} bytes") as &str),
    ] {
        let fs2 = fs.reboot(0, false);
        let f = onelog_log::FileSystem::open(&*fs2, &first.path, false).unwrap();
        f.set_len(len).unwrap();
        f.sync_data().unwrap();
        drop(f);
        let e = match onelog_log::Log::open(fs2.clone(), opts(SEG, Durability::Level1)) {
            Ok(_) => panic!("opened a log whose sealed segment is {len} bytes"),
            Err(e) => e,
        };
        assert!(
            matches!(&e, onelog_log::LogError::Corrupt { path, offset, .. }
                if *path == first.path && *offset == len),
            "{len}: {e}"
        );
        assert!(e.to_string().contains(says), "{len}: {e}");
    }
}
