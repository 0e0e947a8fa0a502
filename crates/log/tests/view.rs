//! The classic view (`onelog_log::view`): segment N is the virtual file `binlog.NNNNNN` whose
//! offsets are those a classic binlog file would have; the sizes SHOW BINARY LOGS prints, the
//! items a dump reads and a classic parse of the same bytes agree, and only durable records
//! are in it.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use onelog_binlog::event::gtid::{FL_DDL, FL_STANDALONE, FL_TRANSACTIONAL};
use onelog_binlog::event::{GtidEvent, QueryEvent, XidEvent, BINLOG_MAGIC};
use onelog_binlog::{Gtid, GtidPos};
use onelog_log::view::{parse_view_file_name, view_file_name, ViewItem};
use onelog_log::{
    read_classic_file, Durability, GtidAssign, Log, LogOptions, PendingRecord, RecordKind, SimFs,
};

fn log_opts(durability: Durability) -> LogOptions {
    LogOptions {
        dir: PathBuf::from("/data/binlog"),
        segment_size: 64 << 10,
        state_interval: 8 << 10,
        durability,
        flush_interval: Duration::from_secs(3600),
        ..LogOptions::default()
    }
}

fn group(i: u64, ddl: bool) -> PendingRecord {
    let q = if ddl {
        "create table t (a int primary key, b text)".to_string()
    } else {
        format!(
            "insert into t values ({i}, '{}')",
            "x".repeat((i % 5 * 50) as usize)
        )
    };
    group_with(i, ddl, &q)
}

/// A group of one Query event `q` (and an Xid unless `ddl`).
fn group_with(i: u64, ddl: bool, q: &str) -> PendingRecord {
    let mut v = Vec::new();
    let flags2 = if ddl {
        FL_STANDALONE | FL_DDL
    } else {
        FL_TRANSACTIONAL
    };
    GtidEvent {
        gtid: Gtid::new(0, 0, 0),
        flags2,
        commit_id: Some(0),
        timestamp: 1_700_000_000,
    }
    .encode(&mut v);
    QueryEvent::new("test", q)
        .encode(1_700_000_000, 1, &mut v)
        .unwrap();
    if !ddl {
        XidEvent { xid: i }.encode(1_700_000_000, 1, &mut v);
    }
    PendingRecord {
        kind: if ddl {
            RecordKind::Ddl
        } else {
            RecordKind::Transaction
        },
        gtid: GtidAssign::Next {
            domain_id: 0,
            server_id: 1,
        },
        events: v,
        aux: Vec::new(),
        streamed: None,
        payload: None,
    }
}

/// Every item of the view from file 1 to the durable end, grouped by file as classic bytes.
fn files_of(log: &Log) -> Vec<(u64, Vec<u8>, Vec<ViewItem>)> {
    let first = log.segments()[0].number;
    let mut r = log.view_reader(first).unwrap();
    let mut out: Vec<(u64, Vec<u8>, Vec<ViewItem>)> = Vec::new();
    while let Some(item) = r.next_wait(Duration::ZERO).unwrap() {
        if let ViewItem::FileStart { number, .. } = &item {
            out.push((*number, BINLOG_MAGIC.to_vec(), Vec::new()));
        }
        let (_, bytes, items) = out.last_mut().expect("a file starts first");
        let at = match &item {
            ViewItem::FileStart { .. } => 4,
            ViewItem::Group { offset, .. } | ViewItem::Rotate { offset, .. } => *offset,
        };
        assert_eq!(at, bytes.len() as u64, "items are contiguous");
        bytes.extend_from_slice(item.events());
        items.push(item);
    }
    out
}

/// A transaction group whose Query event carries `len` bytes of text.
fn big_group(i: u64, len: usize) -> PendingRecord {
    group_with(
        i,
        false,
        &format!("insert into t values ({i}, '{}')", "y".repeat(len)),
    )
}

#[test]
fn records_larger_than_a_read_ahead_are_sized_without_being_read_whole_but_checked() {
    let fs = SimFs::new();
    let log = Log::open(fs.clone(), log_opts(Durability::Level1))
        .unwrap()
        .0;
    log.commit(group(0, true)).unwrap();
    for i in 1..20 {
        log.commit(group(i, false)).unwrap();
    }
    // Sized once: the view's size cache starts after these.
    log.view_files().unwrap();
    let big = log.commit(big_group(20, 3 << 20)).unwrap();
    log.commit(big_group(21, 300 << 10)).unwrap();
    for i in 22..30 {
        log.commit(group(i, false)).unwrap();
    }
    // One byte in the middle of the 3 MiB record changes: sizing the view reads it (its CRC
    // checked a read-ahead at a time) and says where, as reading it whole does.
    let seg = log
        .segments()
        .into_iter()
        .find(|s| s.start_lsn <= big.lsn && big.lsn < s.end_lsn)
        .unwrap();
    let at = seg.header_len + (big.lsn - seg.start_lsn) + (1 << 20) + 17;
    let was = fs.read_file(&seg.path).unwrap()[at as usize];
    assert!(fs.corrupt(&seg.path, at, &[!was]));
    let err = log.view_files().unwrap_err().to_string();
    assert!(
        err.contains(&format!("record at LSN {}", big.lsn)) && err.contains("bad CRC32C"),
        "{err}"
    );
    assert!(fs.corrupt(&seg.path, at, &[was]));
    // Intact again: the sizes are those of the view read record by record.
    let files = files_of(&log);
    let sizes = log.view_files().unwrap();
    assert_eq!(
        sizes.iter().map(|f| f.size).collect::<Vec<_>>(),
        files
            .iter()
            .map(|(_, b, _)| b.len() as u64)
            .collect::<Vec<_>>()
    );
    let groups: usize = files.iter().map(|(_, _, items)| items.len()).sum();
    assert!(groups >= 30, "{groups} items");
    // A reader may start at the big record (its boundary checked), not inside it.
    let mut r = log
        .reader(onelog_log::ReadStart::Lsn(big.lsn), Default::default())
        .unwrap();
    let rec = r.next().unwrap().unwrap();
    assert_eq!((rec.lsn, rec.end_lsn), (big.lsn, big.end_lsn));
    assert!(log
        .reader(onelog_log::ReadStart::Lsn(big.lsn + 1), Default::default())
        .is_err());
    log.shutdown().unwrap();
}

#[test]
fn names_round_trip() {
    assert_eq!(view_file_name(7), "binlog.000007");
    assert_eq!(parse_view_file_name("binlog.000007"), Some(7));
    assert_eq!(parse_view_file_name("binlog.1234567"), Some(1234567));
    assert_eq!(parse_view_file_name("binlog.07"), None);
    assert_eq!(parse_view_file_name("binlog-000007.olog"), None);
    assert_eq!(parse_view_file_name("binlog.00000x"), None);
}

#[test]
fn the_view_is_a_classic_binlog_whose_sizes_and_offsets_agree_everywhere() {
    let fs = SimFs::new();
    let log = Log::open(fs.clone(), log_opts(Durability::Level1))
        .unwrap()
        .0;
    log.commit(group(0, true)).unwrap();
    for i in 1..400 {
        log.commit(group(i, false)).unwrap();
        if i % 150 == 0 {
            log.rotate().unwrap();
        }
    }
    let files = files_of(&log);
    assert!(files.len() >= 3, "several files: {}", files.len());
    let sizes = log.view_files().unwrap();
    assert_eq!(sizes.len(), files.len());
    let mut gtids = Vec::new();
    for ((number, bytes, items), f) in files.iter().zip(&sizes) {
        assert_eq!(f.number, *number);
        assert_eq!(f.name, view_file_name(*number));
        assert_eq!(
            f.size,
            bytes.len() as u64,
            "SHOW BINARY LOGS size of {}",
            f.name
        );
        // A classic parse of the bytes finds every event where the view put it, with
        // end_log_pos its true end and a valid CRC.
        let mut at = 4u64;
        for ev in read_classic_file(&f.name, bytes) {
            let ev = ev.unwrap();
            assert_eq!(ev.offset, at);
            at += ev.bytes.len() as u64;
            assert_eq!(u64::from(ev.end_log_pos()), at);
        }
        assert_eq!(at, bytes.len() as u64);
        for item in items {
            if let ViewItem::Group { gtid, .. } = item {
                gtids.push(gtid.seq_no);
            }
        }
        // Every sealed file ends with a Rotate naming the next one.
        if f.number != sizes.last().unwrap().number {
            match items.last() {
                Some(ViewItem::Rotate { next, .. }) => {
                    assert_eq!(next, &view_file_name(number + 1))
                }
                other => panic!("{} does not end with a Rotate: {other:?}", f.name),
            }
        }
    }
    assert_eq!(
        gtids,
        (1..=400).collect::<Vec<_>>(),
        "every group once, in order"
    );
    let end = log.view_end().unwrap();
    assert_eq!(&end, sizes.last().unwrap());
    // The file a GTID start begins in: the newest whose starting state the position holds.
    let states = log.view_file_states();
    let second = &states[1];
    let at_second: GtidPos = second.1.pos();
    assert_eq!(log.view_file_for_gtid(&at_second), Some(second.0));
    assert_eq!(log.view_file_for_gtid(&GtidPos::new()), Some(states[0].0));
    let newest: GtidPos = "0-1-400".parse().unwrap();
    assert_eq!(
        log.view_file_for_gtid(&newest),
        Some(states.last().unwrap().0)
    );
    log.shutdown().unwrap();
}

#[test]
fn only_durable_records_are_in_the_view() {
    let fs = SimFs::new();
    let log: Arc<Log> = Log::open(fs.clone(), log_opts(Durability::Level0))
        .unwrap()
        .0;
    log.commit(group(0, true)).unwrap();
    log.flush().unwrap();
    let before = log.view_end().unwrap().size;
    // Level 0: appended, not synced (the flush interval is an hour).
    for i in 1..5 {
        log.commit(group(i, false)).unwrap();
    }
    assert!(log.durable_lsn() < log.end_lsn());
    assert_eq!(
        log.view_end().unwrap().size,
        before,
        "the tail is not durable yet"
    );
    let seen: usize = files_of(&log)
        .iter()
        .flat_map(|f| &f.2)
        .filter(|i| matches!(i, ViewItem::Group { .. }))
        .count();
    assert_eq!(seen, 1);
    log.flush().unwrap();
    assert!(log.view_end().unwrap().size > before);
    log.shutdown().unwrap();
}
