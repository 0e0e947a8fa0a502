//! Roots over lower layers (docs/PAGED_STORE.md, build order step 3): a root whose deltas were
//! frozen and written into a real on-disk base reads and changes exactly as a root that keeps
//! every row in memory. Random row changes and DDL go to both; freezes and checkpoints into the
//! base go to the layered one only, at random points; after every step both must give the
//! same rows, row counts, index entries (with their rows), primary key lookups and
//! AUTO_INCREMENT counters. The base bypasses the simulated `FileSystem`, so each case uses a
//! scratch directory under the system's temporary directory.

mod common;

use std::ops::Bound;
use std::sync::Arc;

use common::Scratch;
use onelog_binlog::Value;
use onelog_engine::base::Base;
use onelog_engine::catalog::{
    CatalogChange, ColumnDef, ColumnSpec, IndexSpec, SqlType, TableDef, TableId, TableSpec,
};
use onelog_engine::store::{pk_key, Root, Row, RowChange};
use proptest::prelude::*;

/// A table with a primary key and an index on `v`, and one without primary key.
const KEYED: TableId = 1;
const HEAP: TableId = 2;

fn int() -> SqlType {
    SqlType::Int { unsigned: false }
}

fn tables() -> Root {
    let mut root = Root::empty();
    root.apply_catalog_change(&CatalogChange::CreateDatabase { name: "d".into() })
        .unwrap();
    let keyed = TableSpec {
        db: "d".into(),
        name: "keyed".into(),
        columns: vec![
            ColumnSpec::new("id", int()).auto_increment(),
            ColumnSpec::new("v", SqlType::VarChar(20)),
        ],
        primary_key: vec!["id".into()],
        indexes: vec![IndexSpec::new("by_v", &["v"], false)],
    };
    let heap = TableSpec {
        db: "d".into(),
        name: "heap".into(),
        columns: vec![
            ColumnSpec::new("a", int()),
            ColumnSpec::new("b", SqlType::VarChar(20)),
        ],
        primary_key: vec![],
        indexes: vec![IndexSpec::new("by_a", &["a"], false)],
    };
    for (id, spec) in [(KEYED, keyed), (HEAP, heap)] {
        let table = TableDef::from_spec(id, &spec).unwrap();
        root.apply_catalog_change(&CatalogChange::CreateTable { table })
            .unwrap();
    }
    root
}

#[derive(Clone, Debug)]
enum Op {
    /// Insert (or replace) the keyed row `id`.
    Put(i64, u8),
    /// Change the keyed row `id` (if any) to `new_id` (when free) and value `v`.
    Update(i64, i64, u8),
    Delete(i64),
    /// Insert a heap row; identical rows are allowed.
    HeapInsert(i64, u8),
    /// Delete the first heap row equal to `(a, b)`, if any; update it to `(a2, b)`.
    HeapDelete(i64, u8),
    HeapUpdate(i64, u8, i64),
    Freeze,
    Checkpoint,
    Truncate(TableId),
    AddColumn(TableId),
    CreateIndex,
    DropIndex,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0i64..30, 0u8..6).prop_map(|(i, v)| Op::Put(i, v)),
        5 => (0i64..30, 0i64..30, 0u8..6).prop_map(|(i, j, v)| Op::Update(i, j, v)),
        4 => (0i64..30).prop_map(Op::Delete),
        3 => (0i64..6, 0u8..3).prop_map(|(a, b)| Op::HeapInsert(a, b)),
        2 => (0i64..6, 0u8..3).prop_map(|(a, b)| Op::HeapDelete(a, b)),
        2 => (0i64..6, 0u8..3, 0i64..6).prop_map(|(a, b, c)| Op::HeapUpdate(a, b, c)),
        3 => Just(Op::Freeze),
        3 => Just(Op::Checkpoint),
        1 => prop_oneof![Just(KEYED), Just(HEAP)].prop_map(Op::Truncate),
        1 => prop_oneof![Just(KEYED), Just(HEAP)].prop_map(Op::AddColumn),
        1 => Just(Op::CreateIndex),
        1 => Just(Op::DropIndex),
    ]
}

fn text(v: u8) -> Value {
    Value::bytes(format!("v{v}").into_bytes())
}

/// The row changes `op` makes against `model` (the in-memory root), or the DDL change.
fn changes(model: &Root, op: &Op) -> (Vec<RowChange>, Option<CatalogChange>) {
    let keyed = model.table_def(KEYED).unwrap().clone();
    let heap = model.table_def(HEAP).unwrap().clone();
    let keyed_row = |id: i64, v: u8| {
        let mut r = vec![Value::Int(id), text(v)];
        r.resize(keyed.columns.len(), Value::Int(7));
        Arc::new(r)
    };
    let heap_row = |a: i64, b: u8| {
        let mut r = vec![Value::Int(a), text(b)];
        r.resize(heap.columns.len(), Value::Int(7));
        Arc::new(r)
    };
    let current = |id: i64| {
        model
            .get(KEYED, &pk_key(&keyed, &keyed_row(id, 0)))
            .unwrap()
    };
    let heap_has = |row: &Row| model.find_identical(&heap, row).unwrap().is_some();
    let row = match *op {
        Op::Put(id, v) => RowChange::Insert {
            table: KEYED,
            row: keyed_row(id, v),
        },
        Op::Update(id, new_id, v) => {
            let Some(before) = current(id) else {
                return (vec![], None);
            };
            if new_id != id && current(new_id).is_some() {
                return (vec![], None);
            }
            RowChange::Update {
                table: KEYED,
                before,
                after: keyed_row(new_id, v),
            }
        }
        Op::Delete(id) => match current(id) {
            Some(before) => RowChange::Delete {
                table: KEYED,
                before,
            },
            None => return (vec![], None),
        },
        Op::HeapInsert(a, b) => RowChange::Insert {
            table: HEAP,
            row: heap_row(a, b),
        },
        Op::HeapDelete(a, b) if heap_has(&heap_row(a, b)) => RowChange::Delete {
            table: HEAP,
            before: heap_row(a, b),
        },
        Op::HeapUpdate(a, b, c) if heap_has(&heap_row(a, b)) => RowChange::Update {
            table: HEAP,
            before: heap_row(a, b),
            after: heap_row(c, b),
        },
        Op::Truncate(id) => return (vec![], Some(CatalogChange::TruncateTable { id })),
        Op::AddColumn(id) => {
            let mut def = (**model.table_def(id).unwrap()).clone();
            let name = format!("c{}", def.columns.len());
            def.columns
                .push(ColumnDef::from_spec(&ColumnSpec::new(&name, int())).unwrap());
            let fill = Value::Int(7);
            return (vec![], Some(CatalogChange::AddColumn { table: def, fill }));
        }
        Op::CreateIndex => {
            let mut def = (*keyed).clone();
            let name = format!("by_v{}", def.indexes.len());
            let Ok(index) = def.add_index(&IndexSpec::new(&name, &["v", "id"], false)) else {
                return (vec![], None);
            };
            let change = CatalogChange::CreateIndex {
                table: KEYED,
                index,
            };
            return (vec![], Some(change));
        }
        Op::DropIndex => {
            let Some(ix) = keyed.indexes.last() else {
                return (vec![], None);
            };
            let change = CatalogChange::DropIndex {
                table: KEYED,
                index_id: ix.id,
            };
            return (vec![], Some(change));
        }
        _ => return (vec![], None),
    };
    (vec![row], None)
}

/// Everything a reader can observe of both tables.
fn observe(root: &Root) -> Vec<String> {
    let mut out = vec![format!("{:?}", root.try_dump().unwrap())];
    let all = (Bound::Unbounded, Bound::Unbounded);
    for id in [KEYED, HEAP] {
        let def = root.table_def(id).unwrap().clone();
        out.push(format!("{} rows {}", def.name, root.row_count(id)));
        out.push(format!(
            "{} auto_inc {}",
            def.name,
            root.table(id).unwrap().auto_inc_next
        ));
        for ix in &def.indexes {
            let entries: Vec<String> = root
                .scan_index(id, ix.id, &all)
                .map(|e| {
                    let (k, e) = e.unwrap();
                    format!("{:02x?}/{} -> {:?}", &k[..], e.klen, e.row)
                })
                .collect();
            out.push(format!("{}.{}: {entries:?}", def.name, ix.name));
        }
        // Primary key lookups and a range read of the middle of the keys.
        let keys: Vec<Vec<u8>> = root
            .scan_pk(id, &all)
            .map(|r| r.unwrap().0.to_vec())
            .collect();
        for k in &keys {
            assert!(root.get(id, k).unwrap().is_some(), "scanned key not found");
        }
        if let (Some(lo), Some(hi)) = (keys.get(keys.len() / 4), keys.get(keys.len() * 3 / 4)) {
            let range = (Bound::Excluded(lo.clone()), Bound::Included(hi.clone()));
            let n = root.scan_pk(id, &range).count();
            out.push(format!("{} middle {n}", def.name));
        }
    }
    out
}

fn run(ops: &[Op]) -> Result<(), TestCaseError> {
    let scratch = Scratch::new("layered");
    let base = Base::open(&scratch.0, 4 << 20).unwrap();
    let mut model = tables();
    let mut layered = model.clone();
    let mut frozen: Option<Root> = None;
    let mut checkpoints = 0;
    for (step, op) in ops.iter().enumerate() {
        match op {
            Op::Freeze => {
                if let Some(f) = layered.freeze() {
                    layered = f.clone();
                    frozen = Some(f);
                }
            }
            Op::Checkpoint => {
                if let Some(f) = frozen.take() {
                    base.checkpoint(&[], &f.frozen_changes()).unwrap();
                    layered = layered.with_base(&f, base.snapshot(), &[]).unwrap();
                    checkpoints += 1;
                }
            }
            _ => {
                let (rows, ddl) = changes(&model, op);
                if let Some(c) = &ddl {
                    model.apply_catalog_change(c).unwrap();
                    layered.apply_catalog_change(c).unwrap();
                }
                for c in &rows {
                    model.apply_row_change(c).unwrap();
                    layered.apply_row_change(c).unwrap();
                }
            }
        }
        prop_assert_eq!(
            observe(&layered),
            observe(&model),
            "after step {}: {:?}",
            step,
            op
        );
    }
    // Reading a base the whole way: freeze and write what is left, then compare again.
    if let Some(f) = frozen.take() {
        base.checkpoint(&[], &f.frozen_changes()).unwrap();
        layered = layered.with_base(&f, base.snapshot(), &[]).unwrap();
    }
    let f = layered.freeze().unwrap();
    base.checkpoint(&[], &f.frozen_changes()).unwrap();
    let last = f.with_base(&f, base.snapshot(), &[]).unwrap();
    prop_assert_eq!(
        observe(&last),
        observe(&model),
        "after {} checkpoints",
        checkpoints + 1
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn a_layered_root_reads_and_changes_as_a_root_in_memory(
        ops in proptest::collection::vec(op(), 1..80)
    ) {
        run(&ops)?;
    }
}

#[test]
fn a_delete_over_the_base_hides_the_row_and_its_entries_and_counts() {
    let scratch = Scratch::new("layered");
    let base = Base::open(&scratch.0, 4 << 20).unwrap();
    let mut root = tables();
    let def = root.table_def(KEYED).unwrap().clone();
    for id in 0..10 {
        let row = Arc::new(vec![Value::Int(id), text((id % 3) as u8)]);
        root.apply_row_change(&RowChange::Insert { table: KEYED, row })
            .unwrap();
    }
    let f = root.freeze().unwrap();
    assert!(f.freeze().is_none(), "one frozen layer at a time");
    base.checkpoint(&[], &f.frozen_changes()).unwrap();
    let mut root = f.with_base(&f, base.snapshot(), &[]).unwrap();
    assert!(root.with_base(&tables(), base.snapshot(), &[]).is_none());
    // Nothing in memory any more: every read below goes to the base.
    assert_eq!(root.row_count(KEYED), 10);
    let before = root
        .get(KEYED, &pk_key(&def, &[Value::Int(4)]))
        .unwrap()
        .unwrap();
    assert_eq!(*before, vec![Value::Int(4), text(1)]);
    root.apply_row_change(&RowChange::Delete {
        table: KEYED,
        before,
    })
    .unwrap();
    assert_eq!(root.row_count(KEYED), 9);
    assert!(root
        .get(KEYED, &pk_key(&def, &[Value::Int(4)]))
        .unwrap()
        .is_none());
    let ix = def.indexes[0].id;
    let all = (Bound::Unbounded, Bound::Unbounded);
    let ids: Vec<Value> = root
        .scan_index(KEYED, ix, &all)
        .map(|e| e.unwrap().1.row[0].clone())
        .collect();
    // v0: 0 3 6 9, v1: 1 7 (4 deleted), v2: 2 5 8.
    let expect: Vec<Value> = [0, 3, 6, 9, 1, 7, 2, 5, 8].map(Value::Int).to_vec();
    assert_eq!(ids, expect);
    // A second delete of the same row finds nothing.
    let again = RowChange::Delete {
        table: KEYED,
        before: Arc::new(vec![Value::Int(4), text(1)]),
    };
    assert!(root.apply_row_change(&again).is_err());
}

#[test]
fn a_truncated_tables_base_records_are_deleted_a_budget_at_a_time() {
    let scratch = Scratch::new("layered");
    let base = Base::open(&scratch.0, 4 << 20).unwrap();
    let mut root = tables();
    for id in 0..10 {
        let row = Arc::new(vec![Value::Int(id), text(1)]);
        root.apply_row_change(&RowChange::Insert { table: KEYED, row })
            .unwrap();
    }
    let f = root.freeze().unwrap();
    base.checkpoint(&[], &f.frozen_changes()).unwrap();
    let mut root = f.with_base(&f, base.snapshot(), &[]).unwrap();
    // 10 rows and 10 index entries in the base; TRUNCATE retires them.
    root.apply_catalog_change(&CatalogChange::TruncateTable { id: KEYED })
        .unwrap();
    let mut checkpoints = 0;
    loop {
        let f = root.freeze().unwrap();
        let (deletes, done) = f.purge_changes(6).unwrap();
        assert!(deletes.len() <= 6);
        base.checkpoint(&[], &deletes).unwrap();
        root = f.with_base(&f, base.snapshot(), &done).unwrap();
        checkpoints += 1;
        if !done.is_empty() {
            break;
        }
        assert!(checkpoints < 10, "the purge makes no progress");
    }
    // 20 records, 6 a time: the fourth checkpoint deletes the last two.
    assert_eq!(checkpoints, 4);
    let left = base
        .snapshot()
        .iter(Bound::Unbounded, Bound::Unbounded)
        .count();
    assert_eq!(left, 0);
    assert_eq!(root.row_count(KEYED), 0);
}
