//! Round-trip property tests: every event kind and every column type encodes and decodes back
//! to the same value.

mod common;

use common::{arb_column, arb_row, arb_table_rows};
use onelog_binlog::event::gtid::{FL_GROUP_COMMIT_ID, FL_STANDALONE, FL_TRANSACTIONAL};
use onelog_binlog::event::table_map::RowMetadata;
use onelog_binlog::event::{
    decode_event, AnnotateRowsEvent, BinlogCheckpointEvent, FormatDescriptionEvent, GtidEvent,
    GtidListEvent, QueryEvent, RotateEvent, Rows, RowsEvent, RowsEventWriter, RowsKind, TableMap,
    XidEvent,
};
use onelog_binlog::value::{ENUM_REAL_TYPE, SET_REAL_TYPE};
use onelog_binlog::{
    decode_group, ColumnMeta, ColumnType, Event, GroupItem, Gtid, GtidState, Value,
};
use proptest::prelude::*;

fn table(table_id: u64, columns: Vec<ColumnMeta>) -> TableMap {
    TableMap {
        table_id,
        flags: 1,
        db: "shop".into(),
        table: "orders".into(),
        metadata: if columns.iter().any(enum_or_set) {
            RowMetadata::Minimal
        } else {
            RowMetadata::Full
        },
        columns,
        primary_key: vec![],
    }
}

/// What a decoder gets back from `t`: what `t.metadata` does not carry is lost (names and
/// the key below FULL, signedness and charsets at NO_LOG), and a MINIMAL map with nothing to
/// say is a NO_LOG one.
fn as_decoded(t: &TableMap) -> TableMap {
    let mut d = t.clone();
    if d.metadata != RowMetadata::Full {
        d.primary_key.clear();
        d.columns.iter_mut().for_each(|c| c.name.clear());
    }
    if d.metadata == RowMetadata::NoLog {
        d.columns.iter_mut().for_each(|c| {
            c.unsigned = false;
            c.binary = false;
        });
    }
    let says_something = d.columns.iter().any(|c| c.is_numeric() || c.is_character());
    if d.metadata == RowMetadata::Minimal && !says_something {
        d.metadata = RowMetadata::NoLog;
    }
    d
}

fn enum_or_set(c: &ColumnMeta) -> bool {
    c.column_type == ColumnType::String
        && matches!(
            ColumnMeta::unpack_string_meta(c.meta).0,
            ENUM_REAL_TYPE | SET_REAL_TYPE
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn table_map_round_trips(table_id in 0u64..(1 << 48), flags in any::<u16>(), db in "[a-z]{0,20}",
                             name in "[a-z]{1,20}", columns in proptest::collection::vec(arb_column(), 0..40)) {
        let metadata = if columns.iter().any(enum_or_set) { RowMetadata::Minimal } else { RowMetadata::Full };
        let primary_key = (0..columns.len()).rev().step_by(2).collect();
        let t = TableMap { table_id, flags, db, table: name, columns, metadata, primary_key };
        let mut buf = Vec::new();
        t.encode(5, 9, &mut buf).unwrap();
        let want = as_decoded(&t);
        prop_assert_eq!(TableMap::decode(&buf).unwrap(), want.clone());
        let (ev, n) = decode_event(&buf).unwrap();
        prop_assert_eq!(n, buf.len());
        prop_assert_eq!(ev, Event::TableMap(want));
    }

    #[test]
    fn table_map_carries_what_each_binlog_row_metadata_level_says(
        level in 0usize..3, columns in proptest::collection::vec(arb_column(), 1..20)) {
        let metadata = RowMetadata::ALL[level];
        prop_assume!(metadata != RowMetadata::Full || !columns.iter().any(enum_or_set));
        let t = TableMap { table_id: 7, flags: 1, db: "d".into(), table: "t".into(), columns, metadata, primary_key: vec![0] };
        let mut buf = Vec::new();
        t.encode(5, 9, &mut buf).unwrap();
        prop_assert_eq!(TableMap::decode(&buf).unwrap(), as_decoded(&t));
    }

    #[test]
    fn write_and_delete_rows_round_trip((cols, rows) in arb_table_rows(12, 0..8), delete in any::<bool>(),
                                         end in any::<bool>()) {
        let kind = if delete { RowsKind::Delete } else { RowsKind::Write };
        let t = table(77, cols);
        let mut w = RowsEventWriter::new(kind, 77, t.columns.len());
        for r in &rows {
            w.push_row(&t.columns, r).unwrap();
        }
        let mut buf = Vec::new();
        w.finish(1, 2, end, &mut buf);
        prop_assert!(w.is_empty());
        let ev = RowsEvent::decode(&buf, &t).unwrap();
        prop_assert_eq!(ev.is_end_of_statement(), end);
        prop_assert_eq!(ev.kind(), kind);
        prop_assert!(ev.columns_present.iter().all(|&p| p));
        let expected = if delete { Rows::Delete(rows) } else { Rows::Write(rows) };
        prop_assert_eq!(ev.rows, expected);
    }

    #[test]
    fn update_rows_round_trip((cols, befores) in arb_table_rows(12, 0..6), seed in any::<u64>()) {
        let t = table(3, cols);
        // After images: the before images rotated by one (same columns, other values).
        let pairs: Vec<(Vec<Value>, Vec<Value>)> = befores
            .iter()
            .enumerate()
            .map(|(i, b)| (b.clone(), befores[(i + 1 + seed as usize % 3) % befores.len()].clone()))
            .collect();
        let mut w = RowsEventWriter::new(RowsKind::Update, 3, t.columns.len());
        for (b, a) in &pairs {
            w.push_update(&t.columns, b, a).unwrap();
        }
        let mut buf = Vec::new();
        w.finish(1, 2, true, &mut buf);
        let ev = RowsEvent::decode(&buf, &t).unwrap();
        prop_assert_eq!(ev.rows, Rows::Update(pairs));
    }

    #[test]
    fn group_round_trips_through_decode_group((cols, rows) in arb_table_rows(8, 1..5), seq in any::<u64>(),
                                              xid in any::<u64>()) {
        let t = table(9, cols);
        let mut buf = Vec::new();
        let gtid = GtidEvent { gtid: Gtid::new(0, 1, seq), flags2: FL_TRANSACTIONAL | FL_GROUP_COMMIT_ID, commit_id: Some(4), timestamp: 8 };
        gtid.encode(&mut buf);
        AnnotateRowsEvent { query: "INSERT INTO orders VALUES (...)".into() }.encode(8, 1, &mut buf);
        t.encode(8, 1, &mut buf).unwrap();
        let mut w = RowsEventWriter::new(RowsKind::Write, 9, t.columns.len());
        for r in &rows {
            w.push_row(&t.columns, r).unwrap();
        }
        w.finish(8, 1, true, &mut buf);
        XidEvent { xid }.encode(8, 1, &mut buf);
        let g = decode_group(&buf).unwrap();
        prop_assert_eq!(g.gtid, gtid);
        prop_assert!(g.is_committed_transaction());
        prop_assert_eq!(g.statements.len(), 3);
        match &g.statements[1] {
            GroupItem::Rows { table: m, event } => {
                prop_assert_eq!(&**m, &as_decoded(&t));
                prop_assert_eq!(&event.rows, &Rows::Write(rows));
            }
            other => prop_assert!(false, "unexpected {:?}", other),
        }
        prop_assert_eq!(&g.statements[2], &GroupItem::Xid(xid));
    }

    #[test]
    fn query_event_round_trips(db in "[a-z_]{0,64}", q in "\\PC{0,200}", thread_id in any::<u32>(),
                               exec_time in any::<u32>(), error_code in any::<u16>(), flags2 in any::<u32>(),
                               sql_mode in any::<u64>(), charset in any::<[u16; 3]>()) {
        let e = QueryEvent { thread_id, exec_time, error_code, db, query: q, flags2, sql_mode, charset };
        let mut buf = Vec::new();
        e.encode(1, 1, &mut buf).unwrap();
        prop_assert_eq!(QueryEvent::decode(&buf).unwrap(), e);
    }

    #[test]
    fn small_events_round_trip(pos in any::<u64>(), name in "[a-z0-9.\\-]{1,60}", text in "\\PC{0,100}",
                               xid in any::<u64>(), version in "[0-9a-z.\\-]{1,49}", ts in any::<u32>(),
                               gtids in proptest::collection::vec((0u32..4, 0u32..4, any::<u64>()), 0..20)) {
        let mut buf = Vec::new();
        let fde = FormatDescriptionEvent::new(&version, ts);
        fde.encode(ts, 1, &mut buf).unwrap();
        let rot = RotateEvent { position: pos, next_file: name.clone() };
        rot.encode(0, 1, &mut buf);
        let mut state = GtidState::new();
        for (d, s, q) in gtids {
            state.record(Gtid::new(d, s, q));
        }
        let gl = GtidListEvent::from_state(&state);
        gl.encode(ts, 1, &mut buf).unwrap();
        let cp = BinlogCheckpointEvent { file: name };
        cp.encode(ts, 1, &mut buf);
        let an = AnnotateRowsEvent { query: text };
        an.encode(ts, 1, &mut buf);
        let x = XidEvent { xid };
        x.encode(ts, 1, &mut buf);
        let g = GtidEvent { gtid: Gtid::new(1, 2, 3), flags2: FL_STANDALONE, commit_id: None, timestamp: ts };
        g.encode(&mut buf);
        let mut decoded = Vec::new();
        let mut rest = &buf[..];
        while !rest.is_empty() {
            let (ev, n) = decode_event(rest).unwrap();
            decoded.push(ev);
            rest = &rest[n..];
        }
        prop_assert_eq!(&decoded[0], &Event::FormatDescription(fde));
        prop_assert_eq!(&decoded[1], &Event::Rotate(rot));
        match &decoded[2] {
            Event::GtidList(l) => prop_assert_eq!(l.to_state().entries(), state.entries()),
            e => prop_assert!(false, "{:?}", e),
        }
        prop_assert_eq!(&decoded[2], &Event::GtidList(gl));
        prop_assert_eq!(&decoded[3], &Event::BinlogCheckpoint(cp));
        prop_assert_eq!(&decoded[4], &Event::AnnotateRows(an));
        prop_assert_eq!(&decoded[5], &Event::Xid(x));
        prop_assert_eq!(&decoded[6], &Event::Gtid(g));
    }

    #[test]
    fn every_column_type_round_trips_alone(col in arb_column(), seed in any::<u64>()) {
        // One column, several rows: exercises each type's codec in isolation.
        let cols = vec![col];
        let mut runner = proptest::test_runner::TestRunner::new_with_rng(
            ProptestConfig::default(),
            proptest::test_runner::TestRng::from_seed(proptest::test_runner::RngAlgorithm::ChaCha, &[seed as u8; 32]),
        );
        let rows: Vec<Vec<Value>> = (0..8).map(|_| arb_row(&cols).new_tree(&mut runner).unwrap().current()).collect();
        let t = table(1, cols);
        let mut w = RowsEventWriter::new(RowsKind::Write, 1, 1);
        for r in &rows {
            w.push_row(&t.columns, r).unwrap();
        }
        let mut buf = Vec::new();
        w.finish(0, 0, true, &mut buf);
        prop_assert_eq!(RowsEvent::decode(&buf, &t).unwrap().rows, Rows::Write(rows));
    }
}

#[test]
fn format_description_has_mariadb_10_11_size_and_crc32_algorithm() {
    let mut buf = Vec::new();
    FormatDescriptionEvent::new("10.11.9-MariaDB-log", 1_700_000_000)
        .encode(1_700_000_000, 1, &mut buf)
        .unwrap();
    // MariaDB 10.11's Format_description is 256 - 4 = 252 bytes: the first event ends at 256.
    assert_eq!(buf.len(), 252);
    assert_eq!(buf[buf.len() - 5], 1, "checksum algorithm CRC32");
    assert_eq!(
        buf[19 + 57 + 14],
        228,
        "post-header length of Format_description itself"
    );
    assert_eq!(
        buf[19 + 57 + 161],
        19,
        "post-header length of the GTID event"
    );
}

#[test]
fn rows_writer_rejects_bad_values_without_changing_the_event() {
    let cols = vec![ColumnMeta {
        column_type: onelog_binlog::ColumnType::Short,
        meta: 0,
        unsigned: false,
        nullable: false,
        binary: false,
        name: "a".into(),
    }];
    let mut w = RowsEventWriter::new(RowsKind::Write, 1, 1);
    w.push_row(&cols, &[Value::Int(1)]).unwrap();
    let len = w.rows_len();
    assert!(w.push_row(&cols, &[Value::Int(70000)]).is_err());
    assert!(w.push_row(&cols, &[Value::bytes(vec![1])]).is_err());
    assert!(w.push_row(&cols, &[Value::Null]).is_err());
    assert!(w.push_row(&cols, &[]).is_err());
    assert!(w
        .push_update(&cols, &[Value::Int(1)], &[Value::Int(2)])
        .is_err());
    assert_eq!(w.rows_len(), len);
    assert_eq!(w.rows(), 1);
    let mut u = RowsEventWriter::new(RowsKind::Update, 1, 1);
    assert!(u
        .push_update(&cols, &[Value::Int(1)], &[Value::Int(1 << 20)])
        .is_err());
    assert_eq!(u.rows_len(), 0);
}

#[test]
fn event_group_decoder_assembles_groups_from_a_stream() {
    use onelog_binlog::event::split_events;
    use onelog_binlog::EventGroupDecoder;
    let cols = vec![ColumnMeta {
        column_type: onelog_binlog::ColumnType::Long,
        meta: 0,
        unsigned: false,
        nullable: false,
        binary: false,
        name: "id".into(),
    }];
    let t = table(5, cols);
    let mut s = Vec::new();
    FormatDescriptionEvent::new("10.11.9-MariaDB-log", 1)
        .encode(1, 1, &mut s)
        .unwrap();
    GtidEvent {
        gtid: Gtid::new(0, 1, 1),
        flags2: FL_TRANSACTIONAL,
        commit_id: None,
        timestamp: 1,
    }
    .encode(&mut s);
    t.encode(1, 1, &mut s).unwrap();
    let mut w = RowsEventWriter::new(RowsKind::Write, 5, 1);
    w.push_row(&t.columns, &[Value::Int(7)]).unwrap();
    w.finish(1, 1, true, &mut s);
    XidEvent { xid: 3 }.encode(1, 1, &mut s);
    GtidEvent {
        gtid: Gtid::new(0, 1, 2),
        flags2: FL_STANDALONE,
        commit_id: None,
        timestamp: 1,
    }
    .encode(&mut s);
    QueryEvent::new("shop", "DROP TABLE x")
        .encode(1, 1, &mut s)
        .unwrap();
    let mut dec = EventGroupDecoder::new();
    let mut groups = Vec::new();
    for ev in split_events(&s) {
        let (_, ev) = ev.unwrap();
        if let Some(g) = dec.push(ev).unwrap() {
            groups.push(g);
        }
    }
    assert_eq!(groups.len(), 2);
    assert_eq!(groups[0].gtid.gtid.seq_no, 1);
    assert!(groups[0].is_committed_transaction());
    match &groups[0].statements[0] {
        GroupItem::Rows { event, .. } => {
            assert_eq!(event.rows, Rows::Write(vec![vec![Value::Int(7)]]))
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(groups[1].gtid.gtid.seq_no, 2);
    match &groups[1].statements[..] {
        [GroupItem::Query(q)] => assert_eq!(q.query, "DROP TABLE x"),
        other => panic!("{other:?}"),
    }
    assert!(!dec.in_group());
}
