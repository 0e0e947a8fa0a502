//! Injected faults: fsync errors and a full disk.

mod common;

use common::*;
use onelog_log::{Durability, LogError, SimFs};

#[test]
fn fsync_failure_fails_the_log_without_retrying_and_reads_still_work() {
    let fs = SimFs::new();
    let log = open(&fs, opts(1 << 20, Durability::Level1));
    let acked: Vec<_> = (0..10).map(|i| log.commit(txn(i, 100)).unwrap()).collect();
    let seg = common::dir().join("binlog-000001.olog");
    let before = fs.fsyncs_of(&seg);
    fs.fail_fsyncs(true);
    let e = log.commit(txn(10, 100)).unwrap_err();
    assert!(matches!(e, LogError::Failed(_)), "{e}");
    assert!(e.to_string().contains("fdatasync"), "{e}");
    assert_eq!(fs.fsyncs_of(&seg), before + 1);
    // Every later commit, flush and level change is refused without touching fsync again.
    fs.fail_fsyncs(false);
    for i in 11..15 {
        assert!(matches!(log.commit(txn(i, 100)), Err(LogError::Failed(_))));
    }
    assert!(matches!(log.flush(), Err(LogError::Failed(_))));
    log.set_durability(Durability::Level2);
    assert!(matches!(log.commit(txn(20, 100)), Err(LogError::Failed(_))));
    assert_eq!(
        fs.fsyncs_of(&seg),
        before + 1,
        "the failed fsync was retried"
    );
    assert!(log.failed().unwrap().contains("fdatasync"));
    // Readers still see what was durable.
    let recs = all_records(&log);
    assert_eq!(recs.len(), 10);
    assert_eq!(log.durable_lsn(), acked[9].end_lsn);
    // And the durable prefix survives a reboot.
    let fs2 = fs.reboot(7, true);
    drop(log);
    let log2 = open(&fs2, opts(1 << 20, Durability::Level1));
    let recs = all_records(&log2);
    assert!(recs.len() >= 10);
    assert_contiguous(&recs, "after fsync failure");
}

#[test]
fn full_disk_is_storage_full_keeps_acked_commits_and_allows_retry_after_space_is_freed() {
    let seg = 64u64 << 10;
    let fs = SimFs::new();
    // Room for the first segment and one prepared segment, not for a third.
    fs.set_space_limit(Some(2 * seg + 8192));
    let log = open(&fs, opts(seg, Durability::Level1));
    let mut acked = Vec::new();
    let err = loop {
        match log.commit(txn(acked.len() as u64, 400)) {
            Ok(r) => acked.push(r),
            Err(e) => break e,
        }
        assert!(acked.len() < 10_000, "never ran out of space");
    };
    match &err {
        LogError::StorageFull { path, .. } => assert!(path.ends_with("next.olog.tmp"), "{err}"),
        e => panic!("expected StorageFull, got {e}"),
    }
    assert!(err.to_string().contains("disk full"), "{err}");
    assert!(log.segments().len() == 2, "{:?}", log.segments());
    // Still refused while the disk is full; nothing acked is lost; no GTID consumed.
    assert!(log.commit(txn(0, 400)).unwrap_err().is_storage_full());
    assert_eq!(all_records(&log).len(), acked.len());
    // Space freed: the next group prepares a segment again and commits resume.
    fs.set_space_limit(None);
    let r = log.commit(txn(acked.len() as u64, 400)).unwrap();
    assert_eq!(r.gtid.seq_no, acked.len() as u64 + 1);
    acked.push(r);
    let fs2 = fs.reboot(3, true);
    drop(log);
    let log2 = open(&fs2, opts(seg, Durability::Level1));
    let recs = all_records(&log2);
    assert_eq!(recs.len(), acked.len());
    assert_contiguous(&recs, "after ENOSPC");
}
