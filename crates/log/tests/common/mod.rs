//! Helpers shared by the log's integration tests.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use onelog_binlog::event::gtid::GtidEvent;
use onelog_binlog::Gtid;
use onelog_log::{
    Durability, GtidAssign, Log, LogOptions, LogReader, PendingRecord, ReadStart, ReaderOptions,
    Record, RecordKind, SimFs,
};

pub fn dir() -> PathBuf {
    PathBuf::from("/data/binlog")
}

pub fn opts(segment_size: u64, durability: Durability) -> LogOptions {
    LogOptions {
        dir: dir(),
        segment_size,
        state_interval: 16 << 10,
        durability,
        flush_interval: Duration::from_millis(5),
        ..LogOptions::default()
    }
}

/// An event group: a GTID event with a commit id, then `body` bytes standing for the rest.
pub fn events(body_len: usize, tag: u64) -> Vec<u8> {
    let mut v = Vec::with_capacity(64 + body_len);
    GtidEvent {
        gtid: Gtid::new(0, 0, 0),
        flags2: 0,
        commit_id: Some(0),
        timestamp: 1,
    }
    .encode(&mut v);
    v.extend((0..body_len).map(|i| (tag as usize + i) as u8));
    v
}

/// A transaction record whose aux holds `tag` (to recognise it after recovery).
pub fn txn(tag: u64, body_len: usize) -> PendingRecord {
    PendingRecord {
        kind: RecordKind::Transaction,
        gtid: GtidAssign::Next {
            domain_id: 0,
            server_id: 1,
        },
        events: events(body_len, tag),
        aux: tag.to_le_bytes().to_vec(),
        streamed: None,
        payload: None,
    }
}

pub fn tag_of(r: &Record) -> u64 {
    u64::from_le_bytes(r.aux[..8].try_into().unwrap())
}

pub fn open(fs: &Arc<SimFs>, o: LogOptions) -> Arc<Log> {
    Log::open(fs.clone(), o).unwrap().0
}

pub fn read_all(r: &mut LogReader) -> Vec<Record> {
    let mut out = Vec::new();
    while let Some(rec) = r.next().unwrap() {
        out.push(rec);
    }
    out
}

pub fn all_records(log: &Log) -> Vec<Record> {
    read_all(
        &mut log
            .reader(ReadStart::Lsn(0), ReaderOptions::default())
            .unwrap(),
    )
}

/// Transaction records must carry seqs 1..=n of domain 0 in log order.
pub fn assert_contiguous(recs: &[Record], ctx: &str) {
    for (i, r) in recs.iter().enumerate() {
        assert_eq!(
            r.gtid.unwrap().seq_no,
            i as u64 + 1,
            "{ctx}: record {i} at LSN {}",
            r.lsn
        );
    }
}
