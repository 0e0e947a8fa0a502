//! Readers: from LSNs and GTID positions, across segments, waking on commits, after purges.

mod common;

use std::sync::mpsc;
use std::time::Duration;

use common::*;
use onelog_binlog::{GtidPos, GtidState};
use onelog_log::{Durability, FileSystem, LogError, ReadStart, ReaderOptions, RecordKind, SimFs};

#[test]
fn rotation_keeps_lsns_contiguous_and_readers_cross_segments() {
    let fs = SimFs::new();
    let log = open(&fs, opts(64 << 10, Durability::Level1));
    let mut receipts = Vec::new();
    for i in 0..1200 {
        receipts.push(log.commit(txn(i, 150 + (i as usize % 7) * 40)).unwrap());
    }
    let segs = log.segments();
    assert!(
        segs.len() >= 4,
        "expected several segments, got {}",
        segs.len()
    );
    assert_eq!(segs[0].start_lsn, 0);
    for w in segs.windows(2) {
        assert_eq!(w[0].end_lsn, w[1].start_lsn);
        assert_eq!(w[0].number + 1, w[1].number);
    }
    assert_eq!(segs.last().unwrap().end_lsn, log.written_lsn());
    let mut r = log
        .reader(
            ReadStart::Lsn(0),
            ReaderOptions {
                include_state_records: true,
                ..Default::default()
            },
        )
        .unwrap();
    let recs = read_all(&mut r);
    let mut lsn = 0;
    let mut states = 0;
    for rec in &recs {
        // Readers skip only the log's SyncMarks (they never yield them).
        assert!(
            rec.lsn == lsn || rec.lsn == lsn + onelog_log::frame::SYNC_MARK_LEN as u64,
            "record at {} after {lsn}",
            rec.lsn
        );
        lsn = rec.end_lsn;
        if rec.kind == RecordKind::GtidState {
            states += 1;
            let (st, _) = GtidState::decode(&rec.aux).unwrap();
            assert!(st.last(0).is_some());
        }
    }
    assert_eq!(lsn, log.durable_lsn());
    assert!(
        states > 0,
        "state_interval 16 KiB must have produced GtidState records"
    );
    let txns: Vec<_> = recs
        .into_iter()
        .filter(|r| r.kind == RecordKind::Transaction)
        .collect();
    assert_eq!(txns.len(), 1200);
    assert_contiguous(&txns, "across segments");
    for (t, rc) in txns.iter().zip(&receipts) {
        assert_eq!(t.lsn, rc.lsn);
    }
}

#[test]
fn readers_start_at_lsns_and_gtid_positions() {
    let fs = SimFs::new();
    let log = open(&fs, opts(64 << 10, Durability::Level1));
    let receipts: Vec<_> = (0..600).map(|i| log.commit(txn(i, 200)).unwrap()).collect();
    // From an LSN in a later segment.
    let k = 450;
    let mut r = log
        .reader(ReadStart::Lsn(receipts[k].lsn), ReaderOptions::default())
        .unwrap();
    let recs = read_all(&mut r);
    assert_eq!(recs.len(), 600 - k);
    assert_eq!(recs[0].gtid, Some(receipts[k].gtid));
    // Not a boundary / beyond the end.
    assert!(matches!(
        log.reader(
            ReadStart::Lsn(receipts[k].lsn + 3),
            ReaderOptions::default()
        ),
        Err(LogError::InvalidPosition { .. })
    ));
    assert!(matches!(
        log.reader(
            ReadStart::Lsn(log.written_lsn() + 1),
            ReaderOptions::default()
        ),
        Err(LogError::InvalidPosition { .. })
    ));
    // From GTID positions: every position k gives records k+1.. .
    for k in [0usize, 1, 77, 299, 450, 599] {
        let pos: GtidPos = format!("0-1-{k}").parse().unwrap();
        let mut r = log
            .reader(ReadStart::Gtid(pos), ReaderOptions::default())
            .unwrap();
        let recs = read_all(&mut r);
        assert_eq!(recs.len(), 600 - k, "position 0-1-{k}");
        if let Some(first) = recs.first() {
            assert_eq!(first.gtid.unwrap().seq_no, k as u64 + 1);
        }
    }
    let empty = log
        .reader(ReadStart::Gtid(GtidPos::new()), ReaderOptions::default())
        .unwrap();
    assert_eq!(empty.position(), 0);
    // Ahead of the log.
    let ahead: GtidPos = "0-1-601".parse().unwrap();
    assert!(matches!(
        log.reader(ReadStart::Gtid(ahead), ReaderOptions::default()),
        Err(LogError::GtidNotFound(_))
    ));
    // After purging the first segments, old positions are gone but newer ones still work.
    let segs = log.segments();
    let purged = log.purge_before(segs[2].start_lsn).unwrap();
    assert_eq!(purged, 2);
    assert_eq!(log.segments()[0].number, segs[2].number);
    assert!(!fs.exists(&segs[0].path));
    let old: GtidPos = "0-1-3".parse().unwrap();
    let e = log
        .reader(ReadStart::Gtid(old), ReaderOptions::default())
        .unwrap_err();
    assert!(matches!(e, LogError::GtidNotFound(_)), "{e}");
    let e = log
        .reader(ReadStart::Lsn(0), ReaderOptions::default())
        .unwrap_err();
    assert!(matches!(e, LogError::InvalidPosition { .. }), "{e}");
    let recent: GtidPos = "0-1-590".parse().unwrap();
    assert_eq!(
        read_all(
            &mut log
                .reader(ReadStart::Gtid(recent), ReaderOptions::default())
                .unwrap()
        )
        .len(),
        10
    );
    // The current segment is never purged.
    log.purge_before(u64::MAX).unwrap();
    assert_eq!(log.segments().len(), 1);
}

#[test]
fn reader_blocked_in_next_wait_wakes_on_commit() {
    let fs = SimFs::new();
    let log = open(&fs, opts(1 << 20, Durability::Level1));
    let mut r = log
        .reader(ReadStart::Lsn(0), ReaderOptions::default())
        .unwrap();
    let (ready_tx, ready_rx) = mpsc::channel();
    let (tx, rx) = mpsc::channel();
    let t = std::thread::spawn(move || {
        assert!(r.next().unwrap().is_none());
        ready_tx.send(()).unwrap();
        for _ in 0..3 {
            tx.send(r.next_wait(Duration::from_secs(60)).unwrap())
                .unwrap();
        }
    });
    ready_rx.recv().unwrap();
    for i in 0..3 {
        let rc = log.commit(txn(i, 20)).unwrap();
        let got = rx.recv().unwrap().unwrap();
        assert_eq!(got.gtid, Some(rc.gtid));
    }
    t.join().unwrap();
}

#[test]
fn next_wait_times_out_and_reports_shutdown() {
    let fs = SimFs::new();
    let log = open(&fs, opts(1 << 20, Durability::Level1));
    let mut r = log
        .reader(ReadStart::Lsn(0), ReaderOptions::default())
        .unwrap();
    assert!(r.next_wait(Duration::from_millis(1)).unwrap().is_none());
    log.shutdown().unwrap();
    assert!(matches!(
        r.next_wait(Duration::from_secs(60)),
        Err(LogError::Closed)
    ));
}

#[test]
fn many_readers_run_alongside_committers() {
    let fs = SimFs::new();
    let log = open(&fs, opts(64 << 10, Durability::Level1));
    let readers: Vec<_> = (0..3)
        .map(|_| {
            let mut r = log
                .reader(ReadStart::Lsn(0), ReaderOptions::default())
                .unwrap();
            std::thread::spawn(move || {
                let mut n = 0u64;
                while n < 400 {
                    let rec = r.next_wait(Duration::from_secs(60)).unwrap().unwrap();
                    n += 1;
                    assert_eq!(rec.gtid.unwrap().seq_no, n);
                }
            })
        })
        .collect();
    let writers: Vec<_> = (0..4)
        .map(|t| {
            let log = log.clone();
            std::thread::spawn(move || {
                for i in 0..100 {
                    log.commit(txn(t * 1000 + i, 300)).unwrap();
                }
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    for r in readers {
        r.join().unwrap();
    }
}

#[test]
fn reader_inside_a_purged_segment_finishes_it_but_a_new_position_there_is_refused() {
    let fs = SimFs::new();
    let log = open(&fs, opts(64 << 10, Durability::Level1));
    for i in 0..600 {
        log.commit(txn(i, 200)).unwrap();
    }
    let mut inside = log
        .reader(ReadStart::Lsn(0), ReaderOptions::default())
        .unwrap();
    assert!(inside.next().unwrap().is_some());
    // A GTID reader opens its first segment lazily, at its first `next`.
    let mut not_started = log
        .reader(ReadStart::Gtid(GtidPos::new()), ReaderOptions::default())
        .unwrap();
    let segs = log.segments();
    assert_eq!(log.purge_before(segs[1].start_lsn).unwrap(), 1);
    // The reader that had the file open reads on (like an open file on Unix) into segment 2.
    assert_eq!(read_all(&mut inside).len(), 599);
    let e = not_started.next().unwrap_err();
    assert!(e.to_string().contains("purged"), "{e}");
}

#[test]
fn gtid_positions_with_several_domains_skip_per_domain() {
    use onelog_binlog::Gtid;
    use onelog_log::GtidAssign;
    let fs = SimFs::new();
    let log = open(&fs, opts(64 << 10, Durability::Level1));
    for i in 0..300u64 {
        let mut rec = txn(i, 200);
        rec.gtid = GtidAssign::Next {
            domain_id: (i % 3) as u32,
            server_id: 1,
        };
        log.commit(rec).unwrap();
    }
    // Domain 0 up to seq 50, domain 1 up to 90, domain 2 unknown to the position.
    let pos: GtidPos = "0-1-50,1-1-90".parse().unwrap();
    let recs = read_all(
        &mut log
            .reader(ReadStart::Gtid(pos.clone()), ReaderOptions::default())
            .unwrap(),
    );
    let (d0, d1, d2) = (
        recs.iter()
            .filter(|r| r.gtid.unwrap().domain_id == 0)
            .count(),
        recs.iter()
            .filter(|r| r.gtid.unwrap().domain_id == 1)
            .count(),
        recs.iter()
            .filter(|r| r.gtid.unwrap().domain_id == 2)
            .count(),
    );
    assert_eq!((d0, d1, d2 > 0), (50, 10, true));
    for r in &recs {
        let g: Gtid = r.gtid.unwrap();
        assert!(!pos.contains(g), "{g} is in the position");
    }
    // The whole log's state survives a reopen, including through GtidState records.
    let before = log.gtid_state();
    log.shutdown().unwrap();
    drop(log);
    let (_, rep) = onelog_log::Log::open(fs.clone(), opts(64 << 10, Durability::Level1)).unwrap();
    assert_eq!(rep.gtid_state, before);
    assert_eq!(rep.gtid_state.pos().to_string(), "0-1-100,1-1-100,2-1-100");
}
