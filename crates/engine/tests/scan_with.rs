//! The borrowed-row scans (`Transaction::scan_with`, `scan_ranges_with`, `get_shared`): they
//! visit exactly the rows `scan`/`get` return, in index order, each once however the ranges
//! overlap, read the transaction's snapshot overlaid with its own changes, lock like `scan`,
//! and stop when the visitor says so.

use std::ops::{Bound, ControlFlow};
use std::sync::Arc;
use std::time::Duration;

use onelog_binlog::Value;
use onelog_engine::{
    ColumnSpec, Engine, EngineError, EngineOptions, IndexRef, IndexSpec, KeyRange, LockMode,
    SqlType, TableId, TableSpec, Transaction,
};
use onelog_log::{FileSystem, SimFs};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, TestRng, TestRunner};

fn open() -> Arc<Engine> {
    let mut o = EngineOptions::new("/data");
    o.log.segment_size = 256 << 10;
    o.background_checkpoints = false;
    o.lock_wait_timeout = Duration::from_millis(50);
    let fs: Arc<dyn FileSystem> = SimFs::new();
    Engine::open(fs, o).unwrap().0
}

/// `d.t (id INT PK, grp INT NOT NULL, name VARCHAR(20), KEY by_grp (grp))`.
fn create(e: &Engine) -> TableId {
    e.create_database("d", false, "CREATE DATABASE d").unwrap();
    let spec = TableSpec {
        db: "d".into(),
        name: "t".into(),
        columns: vec![
            ColumnSpec::new("id", SqlType::Int { unsigned: false }).not_null(),
            ColumnSpec::new("grp", SqlType::Int { unsigned: false }).not_null(),
            ColumnSpec::new("name", SqlType::VarChar(20)),
        ],
        primary_key: vec!["id".into()],
        indexes: vec![IndexSpec::new("by_grp", &["grp"], false)],
    };
    e.create_table(spec, false, "CREATE TABLE t (...)").unwrap()
}

fn row(id: i64, grp: i64) -> Vec<Value> {
    vec![
        Value::Int(id),
        Value::Int(grp),
        Value::bytes(format!("n{id}").into_bytes()),
    ]
}

fn visit_all(
    tx: &mut Transaction,
    t: TableId,
    index: &IndexRef,
    ranges: &[KeyRange],
    lock: Option<LockMode>,
) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    tx.scan_ranges_with(t, index, ranges, lock, |r| {
        out.push(r.to_vec());
        ControlFlow::Continue(())
    })
    .unwrap();
    out
}

/// What the visitor must return: the union of `scan` over each range, each row once, in
/// (index key, primary key) order.
fn model(
    tx: &mut Transaction,
    t: TableId,
    index: &IndexRef,
    ranges: &[KeyRange],
) -> Vec<Vec<Value>> {
    let mut all: Vec<Vec<Value>> = Vec::new();
    for r in ranges {
        for row in tx.scan(t, index.clone(), r.clone(), None).unwrap() {
            if !all.iter().any(|x| x[0] == row[0]) {
                all.push(row);
            }
        }
    }
    let key = |r: &Vec<Value>| -> (i64, i64) {
        let (Value::Int(id), Value::Int(g)) = (&r[0], &r[1]) else {
            panic!("row shape");
        };
        match index {
            IndexRef::Primary => (*id, 0),
            IndexRef::Secondary(_) => (*g, *id),
        }
    };
    all.sort_by_key(key);
    all
}

fn bound(kind: u8, v: i64) -> Bound<Vec<Value>> {
    match kind % 3 {
        0 => Bound::Unbounded,
        1 => Bound::Included(vec![Value::Int(v)]),
        _ => Bound::Excluded(vec![Value::Int(v)]),
    }
}

#[test]
fn visitor_scans_match_scan_with_overlapping_ranges_and_own_changes() {
    let e = open();
    let t = create(&e);
    let mut tx = e.begin();
    for id in 0..60 {
        tx.insert(t, row(id, id % 7)).unwrap();
    }
    tx.commit().unwrap();

    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::deterministic_rng(proptest::test_runner::RngAlgorithm::ChaCha),
    );
    let range = (0u8..3, -5i64..65, 0u8..3, -5i64..65);
    let ranges = proptest::collection::vec(range, 0..5);
    for round in 0..200 {
        let spec = ranges.new_tree(&mut runner).unwrap().current();
        let mut tx = e.begin();
        if round % 2 == 1 {
            // Own changes overlay the snapshot: inserts, updates moving rows between index
            // values, deletes.
            tx.insert(t, row(100 + round, round % 7)).unwrap();
            tx.update(t, &[Value::Int(round % 60)], row(round % 60, 3))
                .unwrap();
            tx.delete(t, &[Value::Int((round + 17) % 60)]).unwrap();
        }
        for index in [IndexRef::Primary, IndexRef::Secondary("by_grp".into())] {
            let krs: Vec<KeyRange> = spec
                .iter()
                .map(|&(a, x, b, y)| {
                    let (x, y) = match index {
                        IndexRef::Primary => (x, y),
                        IndexRef::Secondary(_) => (x / 8, y / 8),
                    };
                    KeyRange {
                        start: bound(a, x),
                        end: bound(b, y),
                    }
                })
                .collect();
            let got = visit_all(&mut tx, t, &index, &krs, None);
            let want = model(&mut tx, t, &index, &krs);
            assert_eq!(got, want, "round {round}, {index:?}, ranges {krs:?}");
            if let [one] = krs.as_slice() {
                let mut single = Vec::new();
                tx.scan_with(t, &index, one, None, |r| {
                    single.push(r.to_vec());
                    ControlFlow::Continue(())
                })
                .unwrap();
                assert_eq!(
                    single,
                    tx.scan(t, index.clone(), one.clone(), None).unwrap()
                );
            }
        }
        for id in [0, 5, 59, 100 + round, 1000] {
            let a = tx.get(t, &[Value::Int(id)]).unwrap();
            let b = tx.get_shared(t, &[Value::Int(id)]).unwrap();
            assert_eq!(a, b.map(|r| (*r).clone()));
        }
        tx.rollback();
    }
}

#[test]
fn visitor_scan_reads_the_snapshot_and_a_locking_one_the_latest() {
    let e = open();
    let t = create(&e);
    let mut tx = e.begin();
    for id in 0..10 {
        tx.insert(t, row(id, 1)).unwrap();
    }
    tx.commit().unwrap();

    let mut reader = e.begin();
    let all = KeyRange::all();
    let before = visit_all(
        &mut reader,
        t,
        &IndexRef::Primary,
        std::slice::from_ref(&all),
        None,
    );
    assert_eq!(before.len(), 10);

    let mut w = e.begin();
    w.update(t, &[Value::Int(3)], row(3, 9)).unwrap();
    w.delete(t, &[Value::Int(4)]).unwrap();
    w.insert(t, row(50, 1)).unwrap();
    w.commit().unwrap();

    let ix = IndexRef::Secondary("by_grp".into());
    let grp1 = KeyRange::prefix(vec![Value::Int(1)]);
    assert_eq!(
        visit_all(
            &mut reader,
            t,
            &IndexRef::Primary,
            std::slice::from_ref(&all),
            None
        ),
        before
    );
    assert_eq!(
        visit_all(&mut reader, t, &ix, std::slice::from_ref(&grp1), None).len(),
        10
    );
    let latest = visit_all(&mut reader, t, &ix, &[grp1], Some(LockMode::Shared));
    let ids: Vec<Value> = latest.iter().map(|r| r[0].clone()).collect();
    let want: Vec<Value> = [0, 1, 2, 5, 6, 7, 8, 9, 50].map(Value::Int).to_vec();
    assert_eq!(ids, want);
    // The snapshot stays as it was for plain reads.
    assert_eq!(
        visit_all(&mut reader, t, &IndexRef::Primary, &[all], None),
        before
    );
}

#[test]
fn locking_visitor_scan_locks_every_row_in_range_even_when_stopped_early() {
    let e = open();
    let t = create(&e);
    let mut tx = e.begin();
    for id in 0..10 {
        tx.insert(t, row(id, 1)).unwrap();
    }
    tx.commit().unwrap();

    let mut a = e.begin();
    let mut seen = 0;
    a.scan_ranges_with(
        t,
        &IndexRef::Primary,
        &[KeyRange::between(vec![Value::Int(2)], vec![Value::Int(6)])],
        Some(LockMode::Exclusive),
        |_| {
            seen += 1;
            ControlFlow::Break(())
        },
    )
    .unwrap();
    assert_eq!(seen, 1, "the visitor stopped the scan");

    let mut b = e.begin();
    // Row 6 was never visited but lies in the range: it is locked.
    assert!(matches!(
        b.update(t, &[Value::Int(6)], row(6, 2)),
        Err(EngineError::LockWaitTimeout)
    ));
    // Outside the range: free.
    assert!(b.update(t, &[Value::Int(7)], row(7, 2)).unwrap());
    b.rollback();
    a.rollback();
}

#[test]
fn visitor_stops_when_told() {
    let e = open();
    let t = create(&e);
    let mut tx = e.begin();
    for id in 0..20 {
        tx.insert(t, row(id, id % 3)).unwrap();
    }
    tx.commit().unwrap();
    let mut r = e.begin();
    let ix = IndexRef::Secondary("by_grp".into());
    let mut ids = Vec::new();
    r.scan_ranges_with(
        t,
        &ix,
        &[
            KeyRange::prefix(vec![Value::Int(2)]),
            KeyRange::prefix(vec![Value::Int(0)]),
        ],
        None,
        |row| {
            ids.push(row[0].clone());
            if ids.len() == 8 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        },
    )
    .unwrap();
    // Index order: all of grp 0 (7 rows) first, then the first row of grp 2.
    let want: Vec<Value> = [0, 3, 6, 9, 12, 15, 18, 2].map(Value::Int).to_vec();
    assert_eq!(ids, want);
}
