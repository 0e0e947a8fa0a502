//! Streamed records (issue 14 part 3): a record whose event group comes partly from an
//! `EventSource` (a spilled binlog cache) is framed and written exactly as the same record
//! with the whole group in memory, CRC included, also when it is larger than the unsynced
//! bound (written in chunks with syncs between); readers and recovery see the same records.

mod common;

use common::*;
use onelog_log::{Durability, PendingRecord, SimFs, StreamedEvents};

/// Record `i` of the sequence; `big` records have a body of `big_len` bytes.
fn record(i: u64, big_len: usize, streamed: bool) -> PendingRecord {
    let mut r = txn(i, 50);
    if i % 4 != 2 {
        return r;
    }
    let body: Vec<u8> = (0..big_len).map(|j| (j * 7 + i as usize) as u8).collect();
    let tail = vec![0xAB; 31 + i as usize];
    if streamed {
        r.streamed = Some(StreamedEvents {
            source: Box::new(body),
            tail,
        });
    } else {
        r.events.extend_from_slice(&body);
        r.events.extend_from_slice(&tail);
    }
    r
}

fn segment(fs: &SimFs) -> Vec<u8> {
    fs.read_file(&dir().join("binlog-000001.olog"))
        .expect("the first segment")
}

#[test]
fn a_streamed_record_is_framed_and_written_as_the_same_record_in_memory() {
    for (big, level) in [
        (3000usize, Durability::Level1),
        (9 << 20, Durability::Level1),
        (8 << 20, Durability::Level1),
    ] {
        let (fs_a, fs_b) = (SimFs::new(), SimFs::new());
        let o = opts(32 << 20, level);
        let (a, b) = (open(&fs_a, o.clone()), open(&fs_b, o.clone()));
        for i in 0..8 {
            let ra = a.commit(record(i, big, true)).unwrap();
            let rb = b.commit(record(i, big, false)).unwrap();
            assert_eq!((ra.lsn, ra.end_lsn, ra.gtid), (rb.lsn, rb.end_lsn, rb.gtid));
        }
        a.flush().unwrap();
        b.flush().unwrap();
        let recs = all_records(&a);
        assert_eq!(recs.len(), 8);
        assert!(recs[2].events.len() > big, "{}", recs[2].events.len());
        assert_eq!(recs, all_records(&b), "big {big}");
        assert_eq!(segment(&fs_a), segment(&fs_b), "big {big}");
        drop(a);
        // Recovery reads the streamed log back whole.
        let reopened = open(&fs_a, o);
        assert_eq!(all_records(&reopened), recs);
        assert_eq!(reopened.gtid_state().pos().to_string(), "0-1-8");
    }
}

/// A source whose reads fail (a binlog cache file that cannot be read back).
struct Unreadable(u64);

impl onelog_log::EventSource for Unreadable {
    fn len(&self) -> u64 {
        self.0
    }

    fn read_at(&self, _pos: u64, _buf: &mut [u8]) -> std::io::Result<()> {
        Err(std::io::Error::other("cache file unreadable"))
    }
}

#[test]
fn a_streamed_record_whose_source_cannot_be_read_is_refused_alone() {
    let fs = SimFs::new();
    let log = open(&fs, opts(1 << 20, Durability::Level1));
    log.commit(txn(0, 10)).unwrap();
    let mut r = txn(1, 10);
    r.streamed = Some(StreamedEvents {
        source: Box::new(Unreadable(5000)),
        tail: vec![1; 31],
    });
    let e = log.commit(r).unwrap_err();
    assert!(e.to_string().contains("cache file unreadable"), "{e}");
    // Nothing of it was logged, no GTID was used, and the log goes on.
    let next = log.commit(txn(2, 10)).unwrap();
    assert_eq!(next.gtid.seq_no, 2);
    let recs = all_records(&log);
    assert_eq!(recs.len(), 2);
    assert_eq!(tag_of(&recs[1]), 2);
}
