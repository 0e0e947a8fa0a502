//! `Log::reset` (RESET MASTER): every segment is replaced by a new `binlog-000001.olog` that
//! starts at the old end LSN with an empty GTID state; it survives a reopen, and a power loss
//! at any step of it leaves either the old log or the reset one.

mod common;

use common::*;
use onelog_log::segment::{RESET_AFTER_NEW_SEGMENT, RESET_AFTER_REMOVE};
use onelog_log::{Durability, LogError, ReadStart, ReaderOptions, SimFs};

fn names(fs: &SimFs) -> Vec<String> {
    use onelog_log::FileSystem;
    let mut v: Vec<String> = fs
        .list_dir(&dir())
        .unwrap()
        .into_iter()
        .filter(|n| n.starts_with("binlog-"))
        .collect();
    v.sort();
    v
}

#[test]
fn reset_empties_the_gtid_state_and_leaves_one_first_segment() {
    let fs = SimFs::new();
    let log = open(&fs, opts(64 << 10, Durability::Level0));
    for i in 0..40 {
        log.commit(txn(i, 3000)).unwrap();
    }
    assert!(log.segments().len() > 1);
    let end = log.end_lsn();
    log.reset().unwrap();
    assert_eq!(log.durable_lsn(), end);
    assert!(log.gtid_state().is_empty());
    let segs = log.segments();
    assert_eq!(segs.len(), 1);
    assert_eq!(segs[0].number, 1);
    assert!(segs[0].path.ends_with("binlog-000001.olog"));
    assert_eq!((segs[0].start_lsn, segs[0].end_lsn), (end, end));
    assert_eq!(names(&fs), vec!["binlog-000001.olog".to_string()]);
    let r = log.commit(txn(100, 100)).unwrap();
    assert_eq!(r.gtid.seq_no, 1);
    assert_eq!(r.lsn, end, "LSNs continue after the reset");
    log.flush().unwrap();
    let recs = read_all(
        &mut log
            .reader(ReadStart::Lsn(end), ReaderOptions::default())
            .unwrap(),
    );
    assert_eq!(recs.iter().map(tag_of).collect::<Vec<_>>(), vec![100]);
    // Readers from the removed LSNs get a clear error.
    let old = log
        .reader(ReadStart::Lsn(0), ReaderOptions::default())
        .and_then(|mut r| r.next().map(|_| ()));
    assert!(
        matches!(old, Err(LogError::InvalidPosition { lsn: 0, .. })),
        "{old:?}"
    );
    // Resetting again right away is fine and keeps numbering at 1.
    log.reset().unwrap();
    log.reset().unwrap();
    assert_eq!(log.segments().len(), 1);
    assert_eq!(log.segments()[0].number, 1);
    assert!(log.gtid_state().is_empty());
    log.shutdown().unwrap();
}

#[test]
fn a_reader_in_a_removed_segment_gets_purged_not_wrong_records() {
    let fs = SimFs::new();
    let log = open(&fs, opts(1 << 20, Durability::Level1));
    log.commit(txn(1, 100)).unwrap();
    let mut r = log
        .reader(ReadStart::Lsn(0), ReaderOptions::default())
        .unwrap();
    assert_eq!(tag_of(&r.next().unwrap().unwrap()), 1);
    log.reset().unwrap();
    log.commit(txn(2, 100)).unwrap();
    assert!(matches!(r.next(), Err(LogError::InvalidPosition { .. })));
    log.shutdown().unwrap();
}

#[test]
fn reset_survives_a_reopen() {
    let fs = SimFs::new();
    let o = opts(64 << 10, Durability::Level1);
    let log = open(&fs, o.clone());
    for i in 0..30 {
        log.commit(txn(i, 3000)).unwrap();
    }
    log.reset().unwrap();
    let end = log.end_lsn();
    log.commit(txn(7, 10)).unwrap();
    log.shutdown().unwrap();
    drop(log);
    let fs2 = fs.reboot(1, true);
    let (log2, rep) = onelog_log::Log::open(fs2.clone(), o).unwrap();
    assert_eq!(rep.gtid_state.pos().to_string(), "0-1-1");
    assert_eq!(rep.segment, 1);
    let segs = log2.segments();
    assert_eq!(segs.len(), 1);
    assert_eq!(segs[0].start_lsn, end);
    assert_eq!(log2.commit(txn(8, 10)).unwrap().gtid.seq_no, 2);
    log2.shutdown().unwrap();
}

#[test]
fn power_loss_at_every_reset_step_leaves_the_old_or_the_reset_log() {
    for point in [RESET_AFTER_NEW_SEGMENT, RESET_AFTER_REMOVE] {
        for seed in 0..6u64 {
            let fs = SimFs::new();
            let o = opts(64 << 10, Durability::Level1);
            let log = open(&fs, o.clone());
            for i in 0..25 {
                log.commit(txn(i, 3000)).unwrap();
            }
            let end = log.end_lsn();
            let before = log.gtid_state();
            fs.arm_crash_point(point, 1);
            let done = log.reset().is_ok();
            let fs2 = fs.reboot(seed, true);
            drop(log);
            let ctx = format!("{point} seed {seed} (reset returned ok: {done})");
            let (log2, rep) = onelog_log::Log::open(fs2.clone(), o)
                .unwrap_or_else(|e| panic!("{ctx}: reopen: {e}"));
            assert_eq!(rep.end_lsn, end, "{ctx}");
            let segs = log2.segments();
            if rep.gtid_state.is_empty() {
                assert_eq!(segs.len(), 1, "{ctx}");
                assert_eq!((segs[0].number, segs[0].start_lsn), (1, end), "{ctx}");
                assert_eq!(names(&fs2), vec!["binlog-000001.olog".to_string()], "{ctx}");
                assert_eq!(log2.commit(txn(99, 10)).unwrap().gtid.seq_no, 1, "{ctx}");
            } else {
                assert!(!done, "{ctx}: an acknowledged reset was lost");
                assert_eq!(rep.gtid_state, before, "{ctx}");
                let recs = all_records(&log2);
                assert_eq!(recs.len(), 25, "{ctx}");
                assert_contiguous(&recs, &ctx);
                assert_eq!(log2.commit(txn(99, 10)).unwrap().gtid.seq_no, 26, "{ctx}");
            }
            log2.shutdown().unwrap();
        }
    }
}
