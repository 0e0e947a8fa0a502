//! Decoders never panic and never accept damaged input: every truncation and every bit flip of
//! a valid event is an error, and random or mutated bytes (with a recomputed checksum, so they
//! reach the body parsers) produce `Ok` or `Err`, never a panic. The fuzz target in
//! `fuzz/fuzz_targets/decode_event.rs` explores the same property without bounds.

mod common;

use common::{arb_column, arb_row};
use onelog_binlog::event::gtid::{FL_GROUP_COMMIT_ID, FL_TRANSACTIONAL};
use onelog_binlog::event::table_map::RowMetadata;
use onelog_binlog::event::{
    decode_event, event_type, reseal, split_events, write_event, AnnotateRowsEvent,
    BinlogCheckpointEvent, EventHeader, FormatDescriptionEvent, GtidEvent, GtidListEvent,
    QueryEvent, RotateEvent, RowsEvent, RowsEventWriter, RowsKind, TableMap, XidEvent,
    CHECKSUM_LEN, HEADER_LEN,
};
use onelog_binlog::{decode_group, ColumnMeta, ColumnType, Gtid, GtidState, Value};
use proptest::prelude::*;

fn col(t: ColumnType, meta: u16, name: &str) -> ColumnMeta {
    ColumnMeta {
        column_type: t,
        meta,
        unsigned: false,
        nullable: true,
        binary: false,
        name: name.into(),
    }
}

fn sample_table() -> TableMap {
    use ColumnType::*;
    TableMap {
        table_id: 42,
        flags: 1,
        db: "db".into(),
        table: "t".into(),
        columns: vec![
            col(Long, 0, "id"),
            col(NewDecimal, (10 << 8) | 2, "price"),
            col(VarChar, 400, "name"),
            col(String, ColumnMeta::pack_string_meta(254, 40), "code"),
            col(Blob, 2, "body"),
            col(DateTime2, 3, "at"),
            col(Time2, 6, "dur"),
            col(Timestamp2, 0, "ts"),
            col(Date, 0, "d"),
            col(Double, 8, "x"),
        ],
        metadata: RowMetadata::Full,
        primary_key: vec![0],
    }
}

fn sample_row(i: i64) -> Vec<Value> {
    vec![
        Value::Int(i),
        Value::Decimal(format!("-{i}.25")),
        Value::bytes(b"alice"),
        Value::bytes(b"c1"),
        Value::Null,
        Value::DateTime {
            year: 2024,
            month: 5,
            day: 6,
            hour: 7,
            minute: 8,
            second: 9,
            micros: 123_000,
        },
        Value::Time {
            negative: true,
            hours: 838,
            minutes: 59,
            seconds: 59,
            micros: 999_999,
        },
        Value::Timestamp {
            secs: 1_700_000_000,
            micros: 0,
        },
        Value::Date {
            year: 1999,
            month: 12,
            day: 31,
        },
        Value::Double(0.5),
    ]
}

/// A group (GTID, Annotate, Table_map, Write, Update, Delete, Xid) and its event boundaries.
fn sample_group() -> (Vec<u8>, Vec<usize>) {
    let t = sample_table();
    let mut buf = Vec::new();
    let mut ends = Vec::new();
    GtidEvent {
        gtid: Gtid::new(0, 1, 5),
        flags2: FL_TRANSACTIONAL | FL_GROUP_COMMIT_ID,
        commit_id: Some(1),
        timestamp: 1,
    }
    .encode(&mut buf);
    ends.push(buf.len());
    AnnotateRowsEvent {
        query: "UPDATE t SET ...".into(),
    }
    .encode(1, 1, &mut buf);
    ends.push(buf.len());
    t.encode(1, 1, &mut buf).unwrap();
    ends.push(buf.len());
    let mut w = RowsEventWriter::new(RowsKind::Write, 42, t.columns.len());
    w.push_row(&t.columns, &sample_row(1)).unwrap();
    w.push_row(&t.columns, &sample_row(2)).unwrap();
    w.finish(1, 1, false, &mut buf);
    ends.push(buf.len());
    let mut u = RowsEventWriter::new(RowsKind::Update, 42, t.columns.len());
    u.push_update(&t.columns, &sample_row(1), &sample_row(3))
        .unwrap();
    u.finish(1, 1, false, &mut buf);
    ends.push(buf.len());
    let mut d = RowsEventWriter::new(RowsKind::Delete, 42, t.columns.len());
    d.push_row(&t.columns, &sample_row(2)).unwrap();
    d.finish(1, 1, true, &mut buf);
    ends.push(buf.len());
    XidEvent { xid: 9 }.encode(1, 1, &mut buf);
    ends.push(buf.len());
    (buf, ends)
}

/// One event of every kind onelog writes, each a separate buffer.
fn sample_events() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut b = Vec::new();
    FormatDescriptionEvent::new("10.11.9-MariaDB-onelog-log", 7)
        .encode(7, 1, &mut b)
        .unwrap();
    out.push(std::mem::take(&mut b));
    RotateEvent {
        position: 4,
        next_file: "binlog.000002".into(),
    }
    .encode(0, 1, &mut b);
    out.push(std::mem::take(&mut b));
    GtidListEvent::from_state(&GtidState::from_entries([
        Gtid::new(0, 1, 5),
        Gtid::new(1, 2, 7),
    ]))
    .encode(1, 1, &mut b)
    .unwrap();
    out.push(std::mem::take(&mut b));
    BinlogCheckpointEvent {
        file: "binlog.000001".into(),
    }
    .encode(1, 1, &mut b);
    out.push(std::mem::take(&mut b));
    QueryEvent::new("db", "CREATE TABLE t (id INT)")
        .encode(1, 1, &mut b)
        .unwrap();
    out.push(std::mem::take(&mut b));
    let (group, ends) = sample_group();
    let mut start = 0;
    for end in ends {
        out.push(group[start..end].to_vec());
        start = end;
    }
    out
}

#[test]
fn every_truncation_of_every_event_is_an_error() {
    for ev in sample_events() {
        assert!(decode_event(&ev).is_ok());
        for cut in 0..ev.len() {
            assert!(
                decode_event(&ev[..cut]).is_err(),
                "cut at {cut} of type {} accepted",
                ev[4]
            );
        }
    }
}

#[test]
fn every_bit_flip_of_every_event_is_an_error() {
    for ev in sample_events() {
        for i in 0..ev.len() {
            for bit in 0..8 {
                let mut bad = ev.clone();
                bad[i] ^= 1 << bit;
                assert!(
                    decode_event(&bad).is_err(),
                    "flip of bit {bit} of byte {i} of type {} accepted",
                    ev[4]
                );
            }
        }
    }
}

#[test]
fn group_truncated_inside_an_event_is_an_error() {
    let (group, ends) = sample_group();
    let g = decode_group(&group).unwrap();
    assert_eq!(g.statements.len(), 5);
    for cut in 0..group.len() {
        let r = decode_group(&group[..cut]);
        if ends.contains(&cut) {
            assert!(r.is_ok(), "prefix of whole events at {cut} rejected: {r:?}");
        } else {
            let e = r.unwrap_err();
            assert!(
                e.offset <= cut,
                "error offset {} beyond the cut {cut}",
                e.offset
            );
        }
    }
}

#[test]
fn group_without_table_map_or_gtid_is_an_error() {
    let (group, ends) = sample_group();
    // Drop the Table_map event: the rows events have no map.
    let mut no_map = group[..ends[1]].to_vec();
    no_map.extend_from_slice(&group[ends[2]..]);
    assert!(decode_group(&no_map).is_err());
    // Drop the GTID event.
    assert!(decode_group(&group[ends[0]..]).is_err());
    // Two GTID events.
    let mut two = group[..ends[0]].to_vec();
    two.extend_from_slice(&group);
    assert!(decode_group(&two).is_err());
    assert!(decode_group(&[]).is_err());
}

/// Overwrites `bytes` of the body of the event `ev` at `positions`, recomputes the checksum.
fn mutate(ev: &[u8], edits: &[(usize, u8)]) -> Vec<u8> {
    let mut m = ev.to_vec();
    let body = m.len() - HEADER_LEN - CHECKSUM_LEN;
    if body > 0 {
        for &(pos, val) in edits {
            m[HEADER_LEN + pos % body] = val;
        }
    }
    reseal(&mut m);
    m
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let _ = decode_event(&bytes);
        let _ = decode_group(&bytes);
        for e in split_events(&bytes) {
            let _ = e;
        }
    }

    #[test]
    fn random_bodies_with_valid_checksums_never_panic(
        t in prop_oneof![
            Just(event_type::FORMAT_DESCRIPTION), Just(event_type::ROTATE), Just(event_type::GTID_LIST),
            Just(event_type::BINLOG_CHECKPOINT), Just(event_type::ANNOTATE_ROWS), Just(event_type::QUERY),
            Just(event_type::XID), Just(event_type::GTID), Just(event_type::TABLE_MAP),
            Just(event_type::WRITE_ROWS_V1), Just(event_type::UPDATE_ROWS_V1), Just(event_type::DELETE_ROWS_V1),
            any::<u8>()],
        body in proptest::collection::vec(any::<u8>(), 0..200),
    ) {
        let mut ev = Vec::new();
        write_event(&mut ev, EventHeader { timestamp: 0, event_type: t, server_id: 1, event_size: 0, log_pos: 0, flags: 0 }, &body);
        let _ = decode_event(&ev);
        // Also as rows of the sample table, after its map in a group.
        let (group, ends) = sample_group();
        let mut g = group[..ends[2]].to_vec();
        g.extend_from_slice(&ev);
        let _ = decode_group(&g);
        let _ = RowsEvent::decode(&ev, &sample_table());
    }

    #[test]
    fn mutated_valid_events_never_panic(which in any::<prop::sample::Index>(),
                                        edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..6)) {
        let events = sample_events();
        let ev = &events[which.index(events.len())];
        let m = mutate(ev, &edits);
        let _ = decode_event(&m);
        let _ = RowsEvent::decode(&m, &sample_table());
        let (group, ends) = sample_group();
        let mut g = group[..ends[2]].to_vec();
        g.extend_from_slice(&m);
        let _ = decode_group(&g);
    }

    #[test]
    fn mutated_random_tables_never_panic(cols in proptest::collection::vec(arb_column(), 1..10),
                                         edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..4),
                                         seed in any::<[u8; 32]>()) {
        let t = TableMap { table_id: 1, flags: 0, db: "d".into(), table: "t".into(), columns: cols, metadata: RowMetadata::Minimal, primary_key: vec![] };
        let mut runner = proptest::test_runner::TestRunner::new_with_rng(
            ProptestConfig::default(),
            proptest::test_runner::TestRng::from_seed(proptest::test_runner::RngAlgorithm::ChaCha, &seed),
        );
        let row = arb_row(&t.columns).new_tree(&mut runner).unwrap().current();
        let mut w = RowsEventWriter::new(RowsKind::Write, 1, t.columns.len());
        w.push_row(&t.columns, &row).unwrap();
        let mut rows = Vec::new();
        w.finish(0, 0, true, &mut rows);
        let _ = RowsEvent::decode(&mutate(&rows, &edits), &t);
        let mut map = Vec::new();
        t.encode(0, 0, &mut map).unwrap();
        let _ = TableMap::decode(&mutate(&map, &edits));
    }
}
