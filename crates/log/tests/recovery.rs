//! Power loss and reopening: acked commits survive, torn tails are cut, corruption is refused.

mod common;

use common::*;
use onelog_log::{
    Durability, FileSystem, Log, LogError, ReadStart, ReaderOptions, SimFs, MAX_UNSYNCED,
};

#[test]
fn empty_directory_gets_a_first_segment_and_reopens_at_its_end() {
    let fs = SimFs::new();
    let (log, rep) = Log::open(fs.clone(), opts(64 << 10, Durability::Level1)).unwrap();
    assert_eq!(
        (rep.segment, rep.end_lsn, rep.offset, rep.torn_bytes),
        (1, 0, 4096, 0)
    );
    assert!(rep.segment_path.ends_with("binlog-000001.olog"));
    let receipts: Vec<_> = (0..10).map(|i| log.commit(txn(i, 100)).unwrap()).collect();
    let last = receipts[9];
    log.shutdown().unwrap();
    drop(log);
    let (log, rep) = Log::open(fs.clone(), opts(64 << 10, Durability::Level1)).unwrap();
    assert_eq!(rep.end_lsn, last.end_lsn);
    assert_eq!(rep.offset, 4096 + last.end_lsn);
    assert_eq!(rep.gtid_state.pos().to_string(), "0-1-10");
    assert_eq!(log.commit(txn(11, 10)).unwrap().gtid.seq_no, 11);
}

#[test]
fn acked_level1_commits_survive_power_loss() {
    for seed in 0..20u64 {
        let fs = SimFs::new();
        let log = open(&fs, opts(64 << 10, Durability::Level1));
        let n = 100 + seed * 13;
        for i in 0..n {
            log.commit(txn(i, 200)).unwrap();
        }
        let fs2 = fs.reboot(seed, true);
        drop(log);
        let (log2, rep) = Log::open(fs2.clone(), opts(64 << 10, Durability::Level1)).unwrap();
        let recs = all_records(&log2);
        assert_eq!(recs.len() as u64, n, "seed {seed}");
        assert_contiguous(&recs, &format!("seed {seed}"));
        assert_eq!(rep.gtid_state.pos().to_string(), format!("0-1-{n}"));
    }
}

#[test]
fn level0_and_level2_recover_a_prefix_after_power_loss() {
    for seed in 0..20u64 {
        let level = if seed % 2 == 0 {
            Durability::Level0
        } else {
            Durability::Level2
        };
        let fs = SimFs::new();
        let log = open(&fs, opts(64 << 10, level));
        let mut acked = 0;
        for i in 0..300 {
            log.commit(txn(i, 150)).unwrap();
            acked += 1;
            if i == 100 {
                log.flush().unwrap();
            }
        }
        let fs2 = fs.reboot(seed, true);
        drop(log);
        let log2 = open(&fs2, opts(64 << 10, level));
        let recs = all_records(&log2);
        assert!(
            recs.len() >= 101 && recs.len() <= acked,
            "seed {seed}: {} records",
            recs.len()
        );
        assert_contiguous(&recs, &format!("seed {seed} {level:?}"));
        for r in &recs {
            assert_eq!(tag_of(r), r.gtid.unwrap().seq_no - 1, "seed {seed}");
        }
        assert_eq!(
            log2.commit(txn(999, 10)).unwrap().gtid.seq_no,
            recs.len() as u64 + 1
        );
    }
}

#[test]
fn torn_tail_is_truncated_zeroed_and_reported() {
    let fs = SimFs::new();
    let log = open(&fs, opts(64 << 10, Durability::Level1));
    let receipts: Vec<_> = (0..20).map(|i| log.commit(txn(i, 100)).unwrap()).collect();
    let last = receipts[19];
    log.shutdown().unwrap();
    drop(log);
    let seg = common::dir().join("binlog-000001.olog");
    let off = 4096 + last.end_lsn;
    // A torn record: a plausible length word, garbage after it.
    let mut junk = 500u32.to_le_bytes().to_vec();
    junk.extend_from_slice(&[0xab; 60]);
    assert!(fs.corrupt(&seg, off, &junk));
    let (log, rep) = Log::open(fs.clone(), opts(64 << 10, Durability::Level1)).unwrap();
    assert_eq!(rep.torn_bytes, junk.len() as u64);
    assert_eq!(rep.end_lsn, last.end_lsn);
    let img = fs.read_file(&seg).unwrap();
    assert!(
        img[off as usize..].iter().all(|b| *b == 0),
        "torn tail not zeroed"
    );
    let next = log.commit(txn(20, 100)).unwrap();
    assert_eq!((next.lsn, next.gtid.seq_no), (last.end_lsn, 21));
    assert_eq!(all_records(&log).len(), 21);
}

#[test]
fn torn_writes_from_power_loss_are_cut_at_a_record_boundary() {
    let mut saw_torn = 0;
    for seed in 0..40u64 {
        let fs = SimFs::new();
        let log = open(&fs, opts(64 << 10, Durability::Level1));
        for i in 0..30 {
            log.commit(txn(i, 300)).unwrap();
        }
        log.set_durability(Durability::Level2);
        for i in 30..40 {
            log.commit(txn(i, 300)).unwrap();
        }
        let fs2 = fs.reboot(seed, true);
        drop(log);
        let (log2, rep) = Log::open(fs2.clone(), opts(64 << 10, Durability::Level1)).unwrap();
        saw_torn += (rep.torn_bytes > 0) as u32;
        let recs = all_records(&log2);
        assert!(recs.len() >= 30, "seed {seed}");
        assert_contiguous(&recs, &format!("seed {seed}"));
        assert_eq!(rep.end_lsn, recs.last().unwrap().end_lsn);
    }
    assert!(saw_torn > 0, "no seed tore a record");
}

#[test]
fn corrupted_record_in_an_earlier_segment_is_reported_with_file_and_offset() {
    let fs = SimFs::new();
    let log = open(&fs, opts(64 << 10, Durability::Level1));
    let receipts: Vec<_> = (0..600).map(|i| log.commit(txn(i, 200)).unwrap()).collect();
    log.shutdown().unwrap();
    drop(log);
    let seg2 = log_seg(2);
    let segs_start = {
        let (l, _) = Log::open(fs.clone(), opts(64 << 10, Durability::Level1)).unwrap();
        l.segments()[1].start_lsn
    };
    let victim = receipts.iter().find(|r| r.lsn > segs_start + 1000).unwrap();
    let off = 4096 + (victim.lsn - segs_start) + 20;
    fs.corrupt(&seg2, off, &[0x5a]);
    // Open only scans the last segment; the reader refuses the bad record.
    let (log, _) = Log::open(fs.clone(), opts(64 << 10, Durability::Level1)).unwrap();
    let mut r = log
        .reader(ReadStart::Lsn(0), ReaderOptions::default())
        .unwrap();
    let err = loop {
        match r.next() {
            Ok(Some(_)) => {}
            Ok(None) => panic!("corruption not detected"),
            Err(e) => break e,
        }
    };
    match &err {
        LogError::Corrupt { path, offset, .. } => {
            assert_eq!(path, &seg2);
            assert_eq!(*offset, off - 20);
        }
        e => panic!("expected Corrupt, got {e}"),
    }
    assert!(
        err.to_string().contains("binlog-000002.olog at offset"),
        "{err}"
    );
    drop(log);
    // A damaged header refuses to open.
    fs.corrupt(&seg2, 30, &[0xff]);
    match Log::open(fs.clone(), opts(64 << 10, Durability::Level1)) {
        Err(LogError::Corrupt { path, .. }) => assert_eq!(path, seg2),
        Err(e) => panic!("expected Corrupt, got {e}"),
        Ok(_) => panic!("opened a log with a damaged segment header"),
    }
    // A missing middle segment too.
    fs.remove_file(&seg2).unwrap();
    assert!(matches!(
        Log::open(fs.clone(), opts(64 << 10, Durability::Level1)),
        Err(LogError::Corrupt { .. })
    ));
}

fn log_seg(n: u64) -> std::path::PathBuf {
    common::dir().join(format!("binlog-{n:06}.olog"))
}

#[test]
fn real_file_system_log_round_trips_through_reopen() {
    let dir = std::env::temp_dir().join(format!("onelog-log-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut o = opts(64 << 10, Durability::Level1);
    o.dir = dir.clone();
    let fs = onelog_log::StdFs::new();
    let (log, _) = Log::open(fs.clone(), o.clone()).unwrap();
    let receipts: Vec<_> = (0..300).map(|i| log.commit(txn(i, 300)).unwrap()).collect();
    assert!(log.segments().len() > 1);
    log.shutdown().unwrap();
    drop(log);
    let (log, rep) = Log::open(fs, o).unwrap();
    assert_eq!(rep.end_lsn, receipts[299].end_lsn);
    assert_eq!(rep.torn_bytes, 0);
    let recs = all_records(&log);
    assert_eq!(recs.len(), 300);
    assert_contiguous(&recs, "StdFs");
    log.shutdown().unwrap();
    drop(log);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A log with a few records in a `seg_size` segment, shut down; returns the segment path and
/// the file offset of the end of the log.
fn closed_log(fs: &std::sync::Arc<SimFs>, seg_size: u64) -> (std::path::PathBuf, u64) {
    let log = open(fs, opts(seg_size, Durability::Level1));
    let receipts: Vec<_> = (0..5).map(|i| log.commit(txn(i, 100)).unwrap()).collect();
    log.shutdown().unwrap();
    drop(log);
    (log_seg(1), 4096 + receipts[4].end_lsn)
}

#[test]
fn tail_scan_zeroes_garbage_after_a_short_zero_run_within_the_bound() {
    let fs = SimFs::new();
    let seg_size = 24 << 20;
    let (seg, end) = closed_log(&fs, seg_size);
    // A torn write can keep pieces of its extent with zeros between them.
    let near = end + 100_000;
    let far = end + MAX_UNSYNCED - 64;
    assert!(fs.corrupt(&seg, near, &[0xab; 10]));
    assert!(fs.corrupt(&seg, far, &[0xcd; 10]));
    let (log, rep) = Log::open(fs.clone(), opts(seg_size, Durability::Level1)).unwrap();
    assert_eq!(rep.torn_bytes, far + 10 - end);
    let img = fs.read_file(&seg).unwrap();
    assert!(img[end as usize..].iter().all(|b| *b == 0), "garbage left");
    assert_eq!(all_records(&log).len(), 5);
}

#[test]
fn tail_scan_stops_after_max_unsynced_zero_bytes_past_the_bound() {
    let fs = SimFs::new();
    let seg_size = 24 << 20;
    let (seg, end) = closed_log(&fs, seg_size);
    // Beyond any extent a crash can leave unsynced: never read (the scan is bounded).
    let beyond = end + 2 * MAX_UNSYNCED + (1 << 20);
    assert!(beyond + 10 < seg_size);
    assert!(fs.corrupt(&seg, beyond, &[0xef; 10]));
    let (_log, rep) = Log::open(fs.clone(), opts(seg_size, Durability::Level1)).unwrap();
    assert_eq!(rep.torn_bytes, 0);
    assert_eq!(fs.read_file(&seg).unwrap()[beyond as usize], 0xef);
}

#[test]
fn writes_keep_at_most_max_unsynced_bytes_unsynced_and_huge_records_recover() {
    let seg_size = 48 << 20;
    let mut saw_torn = false;
    for seed in 0..4u64 {
        let fs = SimFs::new();
        let mut o = opts(seg_size, Durability::Level2);
        o.flush_interval = std::time::Duration::from_secs(3600);
        let log = open(&fs, o);
        for i in 0..12 {
            log.commit(txn(i, 1 << 20)).unwrap();
            assert!(
                log.written_lsn() - log.durable_lsn() <= MAX_UNSYNCED,
                "record {i}: written {} durable {}",
                log.written_lsn(),
                log.durable_lsn()
            );
        }
        assert!(log.stats().fsyncs > 0);
        // Larger than the bound: written in chunks with a sync between them.
        let big = log.commit(txn(12, 3 * MAX_UNSYNCED as usize / 2)).unwrap();
        assert!(log.durable_lsn() > big.lsn - MAX_UNSYNCED);
        let fs2 = fs.reboot(seed, true);
        drop(log);
        let (log2, rep) = Log::open(fs2.clone(), opts(seg_size, Durability::Level1)).unwrap();
        saw_torn |= rep.torn_bytes > 0;
        let recs = all_records(&log2);
        assert!(recs.len() >= 12, "seed {seed}: {} records", recs.len());
        assert_contiguous(&recs, &format!("seed {seed}"));
        let img = fs2.read_file(&log_seg(1)).unwrap();
        assert!(
            img[(4096 + rep.end_lsn) as usize..].iter().all(|b| *b == 0),
            "seed {seed}: stale bytes after the end"
        );
    }
    assert!(saw_torn, "no seed tore the large record");
}

#[test]
fn bad_record_followed_by_more_data_than_a_crash_leaves_is_corruption() {
    let fs = SimFs::new();
    let seg_size = 24 << 20;
    let log = open(&fs, opts(seg_size, Durability::Level1));
    for i in 0..10 {
        log.commit(txn(i, 1 << 20)).unwrap();
    }
    log.shutdown().unwrap();
    drop(log);
    // Bit rot in the first record of the (last) segment: ~9 MiB of good records follow.
    assert!(fs.corrupt(&log_seg(1), 4096 + 200, &[0x5a]));
    let e = Log::open(fs.clone(), opts(seg_size, Durability::Level1)).unwrap_err();
    match &e {
        LogError::Corrupt { offset, .. } => assert_eq!(*offset, 4096),
        other => panic!("expected Corrupt, got {other}"),
    }
    let msg = e.to_string();
    assert!(
        msg.contains("binlog-000001.olog") && msg.contains("corruption"),
        "{msg}"
    );
    // Nothing was zeroed: the records after the damage are still there for an operator.
    let img = fs.read_file(&log_seg(1)).unwrap();
    assert!(
        img[(4096 + (2 << 20)) as usize..(4096 + (3 << 20)) as usize]
            .iter()
            .any(|b| *b != 0)
    );
}
