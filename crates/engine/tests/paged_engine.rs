//! The engine on the paged table store (`TableStore::Paged`, docs/PAGED_STORE.md step 3):
//! checkpoints go into the base, a reopen reads the base's root record and replays only the
//! log after it, rows changed, deleted and rewritten by DDL across checkpoints read back the
//! same, a power cut at random points loses no acknowledged commit, CREATE INDEX over rows in
//! the base writes its entries there in sorted chunks (`index_build.rs`: crashes, refusals and
//! leftovers included) while commits go on (`online_index.rs`, with the in-memory store too),
//! and a data directory is never opened with the other store. The engine's log runs on the simulated file system; the
//! base always uses real files, here a scratch directory under the system's temporary one.

mod common;

use std::ops::Bound;
use std::sync::Arc;
use std::time::Duration;

use onelog_binlog::Value;
use onelog_engine::alter::AlterPlan;
use onelog_engine::store::index_key;
use onelog_engine::{
    ColumnSource, ColumnSpec, Engine, EngineError, EngineOptions, FkAction, ForeignKeyDef,
    IndexRef, IndexSpec, KeyRange, SqlType, TableId, TableSpec, TableStore,
};
use onelog_log::{FileSystem, SimFs};

use common::{open_sim, Scratch};

fn options(base: &Scratch) -> EngineOptions {
    options_with_budget(base, 4 << 20)
}

/// [`options`] with a memory budget of `memory_bytes`.
fn options_with_budget(base: &Scratch, memory_bytes: u64) -> EngineOptions {
    let mut o = EngineOptions::new("/data");
    o.log.segment_size = 256 << 10;
    o.background_checkpoints = false;
    o.lock_wait_timeout = Duration::from_secs(30);
    o.table_store = TableStore::Paged {
        dir: Some(base.0.clone()),
        memory_bytes,
    };
    o
}

fn setup(e: &Engine) -> TableId {
    e.create_database("d", false, "CREATE DATABASE d").unwrap();
    let spec = TableSpec {
        db: "d".into(),
        name: "t".into(),
        columns: vec![
            ColumnSpec::new("id", SqlType::BigInt { unsigned: false }).not_null(),
            ColumnSpec::new("k", SqlType::Int { unsigned: false }),
            ColumnSpec::new("payload", SqlType::VarChar(200)),
        ],
        primary_key: vec!["id".into()],
        indexes: vec![IndexSpec::new("by_k", &["k"], false)],
    };
    e.create_table(spec, false, "CREATE TABLE t (...)").unwrap()
}

fn row(e: &Engine, t: TableId, id: i64, k: i64) -> Vec<Value> {
    let columns = e.snapshot().root().table_def(t).unwrap().columns.len();
    let mut r = vec![
        Value::Int(id),
        Value::Int(k),
        Value::Bytes(
            format!("row {id} {}", "x".repeat((id % 90) as usize))
                .into_bytes()
                .into(),
        ),
    ];
    r.resize(columns, Value::Int(5));
    r
}

fn put(e: &Arc<Engine>, t: TableId, id: i64, k: i64) {
    let mut tx = e.begin();
    let r = row(e, t, id, k);
    if !tx.update(t, &[Value::Int(id)], r.clone()).unwrap() {
        tx.insert(t, r).unwrap();
    }
    tx.commit().unwrap();
}

fn delete(e: &Arc<Engine>, t: TableId, id: i64) {
    let mut tx = e.begin();
    tx.delete(t, &[Value::Int(id)]).unwrap();
    tx.commit().unwrap();
}

/// The rows, and every index's entries checked against them: each entry's row is the row
/// its primary key finds, and there is one entry per row.
fn contents(e: &Engine, t: TableId) -> Vec<Vec<Value>> {
    let snap = e.snapshot();
    let root = snap.root();
    let rows = snap.dump()["d.t"].clone();
    let all = (Bound::Unbounded, Bound::Unbounded);
    for ix in &root.table_def(t).unwrap().indexes {
        let mut n = 0;
        let def = root.table_def(t).unwrap();
        let mut prev: Option<Vec<u8>> = None;
        for entry in root.scan_index(t, ix.id, &all) {
            let (key, entry) = entry.unwrap();
            let by_pk = root.get(t, &key[entry.klen as usize..]).unwrap();
            assert_eq!(by_pk.as_deref(), Some(&*entry.row), "index {}", ix.name);
            // Keyed by the row's values, in key order.
            let mut want = Vec::new();
            index_key(def, ix, &entry.row, &mut want);
            assert_eq!(
                &key[..entry.klen as usize],
                want.as_slice(),
                "index {}",
                ix.name
            );
            assert!(
                prev.as_deref() < Some(&key[..]),
                "index {} out of order",
                ix.name
            );
            prev = Some(key.to_vec());
            n += 1;
        }
        assert_eq!(n, rows.len(), "entries of index {}", ix.name);
    }
    assert_eq!(root.row_count(t), rows.len() as u64);
    rows
}

/// A row's `(id, k)`.
fn id_and_k(r: &[Value]) -> (i64, i64) {
    match (&r[0], &r[1]) {
        (Value::Int(a), Value::Int(b)) => (*a, *b),
        other => panic!("{other:?}"),
    }
}

/// [`contents`] as `(id, k)` pairs.
fn ids_and_ks(e: &Engine, t: TableId) -> Vec<(i64, i64)> {
    contents(e, t).iter().map(|r| id_and_k(r)).collect()
}

#[test]
fn ddl_publishes_the_root_it_validated_instead_of_building_it_twice() {
    let base = Scratch::new("paged");
    let fs = SimFs::new();
    let (e, _) = open_sim(&fs, options(&base)).unwrap();
    let t = setup(&e);
    let before = e.validated_ddl();
    for id in 0..50 {
        put(&e, t, id, id % 7);
    }
    e.checkpoint().unwrap();
    // CREATE INDEX over rows in the base: the table is rebuilt once, in the validation.
    let spec = IndexSpec::new("by_k2", &["k"], false);
    e.create_index("d", "t", spec, "CREATE INDEX by_k2 ON t (k)")
        .unwrap();
    assert_eq!(e.validated_ddl(), before + 1);
    let want: Vec<(i64, i64)> = (0..50).map(|id| (id, id % 7)).collect();
    assert_eq!(ids_and_ks(&e, t), want);
    // The published root is the validated one, and the log replays to the same.
    drop(e);
    let (e, _) = open_sim(&fs, options(&base)).unwrap();
    assert_eq!(ids_and_ks(&e, t), want);
}

#[test]
fn checkpoints_go_into_the_base_and_a_reopen_replays_only_what_follows() {
    let base = Scratch::new("paged");
    let fs = SimFs::new();
    let (e, report) = open_sim(&fs, options(&base)).unwrap();
    assert_eq!(report.checkpoint_lsn, None);
    let t = setup(&e);
    for id in 0..300 {
        put(&e, t, id, id % 7);
    }
    let first = e.checkpoint().unwrap();
    // Over the base: updates that move index entries, deletes, inserts, and DDL that
    // rewrites the table (ADD COLUMN) and builds an index over rows in the base.
    for id in (0..300).step_by(6) {
        put(&e, t, id, 100 + id);
    }
    for id in (1..300).step_by(10) {
        delete(&e, t, id);
    }
    e.create_index(
        "d",
        "t",
        IndexSpec::new("by_k_id", &["k", "id"], false),
        "CREATE INDEX",
    )
    .unwrap();
    let second = e.checkpoint().unwrap();
    assert!(second > first);
    e.add_column(
        "d",
        "t",
        ColumnSpec::new("extra", SqlType::Int { unsigned: false }),
        Value::Int(5),
        "ALTER TABLE t ADD extra INT",
    )
    .unwrap();
    for id in 300..320 {
        put(&e, t, id, 3);
    }
    let third = e.checkpoint().unwrap();
    for id in (2..40).step_by(4) {
        put(&e, t, id, -id);
    }
    let expect = contents(&e, t);
    assert_eq!(expect.len(), 300 - 30 + 20);
    // No checkpoint files: the control file names the base.
    let files = fs
        .list_dir(std::path::Path::new("/data/checkpoints"))
        .unwrap();
    assert_eq!(files, vec!["control".to_string()], "{files:?}");
    drop(e);
    fs.crash_now();
    let fs = fs.reboot(7, true);
    let (e, report) = open_sim(&fs, options(&base)).unwrap();
    assert_eq!(report.checkpoint_lsn, Some(third));
    assert_eq!(
        report.records_applied, 10,
        "only the commits after the last checkpoint"
    );
    assert_eq!(contents(&e, t), expect);
    // A clean shutdown checkpoints the rest; the next open replays nothing.
    e.shutdown().unwrap();
    drop(e);
    let (e, report) = open_sim(&fs, options(&base)).unwrap();
    assert_eq!(report.records_applied, 0);
    assert_eq!(contents(&e, t), expect);
}

#[test]
fn a_power_cut_at_random_points_loses_no_acknowledged_commit() {
    let base = Scratch::new("paged");
    let mut fs = SimFs::new();
    let (mut e, _) = open_sim(&fs, options(&base)).unwrap();
    let t = setup(&e);
    let mut model: std::collections::BTreeMap<i64, i64> = Default::default();
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    for round in 0..12 {
        for _ in 0..(20 + next(60)) {
            let id = next(150) as i64;
            match next(10) {
                0..=6 => {
                    let k = next(20) as i64;
                    put(&e, t, id, k);
                    model.insert(id, k);
                }
                7 | 8 => {
                    delete(&e, t, id);
                    model.remove(&id);
                }
                _ => {
                    e.checkpoint().unwrap();
                }
            }
        }
        let want: Vec<(i64, i64)> = model.iter().map(|(a, b)| (*a, *b)).collect();
        drop(e);
        fs.crash_now();
        fs = fs.reboot(round, true);
        e = open_sim(&fs, options(&base)).unwrap().0;
        assert_eq!(ids_and_ks(&e, t), want, "round {round}");
    }
}

#[test]
fn a_paged_data_directory_is_not_opened_by_the_in_memory_store() {
    let base = Scratch::new("paged");
    let fs = SimFs::new();
    let (e, _) = open_sim(&fs, options(&base)).unwrap();
    setup(&e);
    e.shutdown().unwrap();
    drop(e);
    let mut memory = options(&base);
    memory.table_store = TableStore::Memory;
    let err = open_sim(&fs, memory).err().unwrap().to_string();
    assert!(
        err.contains("paged table store") && err.contains("--table-store=paged"),
        "{err}"
    );
}

#[test]
fn an_in_memory_store_directory_is_converted_when_opened_with_the_paged_store() {
    let base = Scratch::new("paged");
    let fs = SimFs::new();
    let mut memory = options(&base);
    memory.table_store = TableStore::Memory;
    let (e, _) = open_sim(&fs, memory.clone()).unwrap();
    let t = setup(&e);
    let mut model = std::collections::BTreeMap::new();
    for id in 0..100 {
        put(&e, t, id, id % 9);
        model.insert(id, id % 9);
    }
    let at = e.checkpoint().unwrap();
    // In the log only: replayed after the conversion.
    for id in 100..120 {
        put(&e, t, id, 1);
        model.insert(id, 1);
    }
    delete(&e, t, 5);
    model.remove(&5);
    let want: Vec<(i64, i64)> = model.into_iter().collect();
    drop(e);
    fs.crash_now();
    let fs = fs.reboot(11, true);
    // What a conversion that crashed before its control file switch may leave: a base the
    // next conversion must not trust.
    let stale = onelog_engine::base::Base::open(&base.0, 1 << 20).unwrap();
    let junk_row = (
        vec![1, 0, 0, 0, 0, 0, 0, 0, 1, 0x80],
        Some(b"junk".to_vec()),
    );
    stale.checkpoint(&[("root", b"junk")], &[junk_row]).unwrap();
    drop(stale);
    let (e, report) = open_sim(&fs, options(&base)).unwrap();
    assert!(report.converted_to_paged, "{report}");
    assert!(report.to_string().contains("converted"), "{report}");
    assert_eq!(report.checkpoint_lsn, Some(at));
    assert_eq!(report.records_applied, 21);
    assert_eq!(ids_and_ks(&e, t), want);
    // The checkpoint files are gone; the control file names the base.
    let files = fs
        .list_dir(std::path::Path::new("/data/checkpoints"))
        .unwrap();
    assert_eq!(files, vec!["control".to_string()], "{files:?}");
    e.shutdown().unwrap();
    drop(e);
    let (e, report) = open_sim(&fs, options(&base)).unwrap();
    assert!(!report.converted_to_paged);
    assert_eq!(ids_and_ks(&e, t), want);
    e.shutdown().unwrap();
    drop(e);
    let err = open_sim(&fs, memory).err().unwrap().to_string();
    assert!(err.contains("--table-store=paged"), "{err}");
}

/// A table `name` of `d` with `columns`, primary key `pk` (none: hidden row ids) and indexes.
fn table(
    e: &Engine,
    name: &str,
    columns: Vec<ColumnSpec>,
    pk: &[&str],
    indexes: Vec<IndexSpec>,
) -> TableId {
    let spec = TableSpec {
        db: "d".into(),
        name: name.into(),
        columns,
        primary_key: pk.iter().map(|c| c.to_string()).collect(),
        indexes,
    };
    e.create_table(spec, false, "CREATE TABLE ...").unwrap()
}

fn insert(e: &Arc<Engine>, t: TableId, rows: Vec<Vec<Value>>) -> Result<(), EngineError> {
    let mut tx = e.begin();
    for r in rows {
        tx.insert(t, r)?;
    }
    tx.commit().map(|_| ())
}

#[test]
fn a_conversion_streams_every_table_and_keeps_their_ids_and_counters() {
    let base = Scratch::new("paged");
    let fs = SimFs::new();
    let mut memory = options(&base);
    memory.table_store = TableStore::Memory;
    // Chunks and the body's window of 2 KiB: many ingestions, and rows larger than the window.
    memory.index_build_chunk_bytes = 2 << 10;
    let (e, _) = open_sim(&fs, memory.clone()).unwrap();
    let t = setup(&e);
    for id in 0..300 {
        put(&e, t, id, id % 11);
    }
    let int = || SqlType::Int { unsigned: false };
    // No primary key: hidden row ids, rows that repeat, some larger than the window.
    let n = table(
        &e,
        "n",
        vec![
            ColumnSpec::new("a", int()),
            ColumnSpec::new("b", SqlType::VarChar(6000)),
        ],
        &[],
        vec![IndexSpec::new("by_a", &["a"], false)],
    );
    for i in 0..120i64 {
        let b = "b".repeat(if i % 10 == 0 { 5000 } else { (i % 7) as usize });
        insert(
            &e,
            n,
            vec![vec![Value::Int(i % 40), Value::bytes(b.into_bytes())]],
        )
        .unwrap();
    }
    // AUTO_INCREMENT past its rows (a counter raised by a deleted row) and a unique key.
    let u = table(
        &e,
        "u",
        vec![
            ColumnSpec::new("id", int()).not_null().auto_increment(),
            ColumnSpec::new("code", int()),
        ],
        &["id"],
        vec![IndexSpec::new("code", &["code"], true)],
    );
    for i in 1..=50i64 {
        insert(&e, u, vec![vec![Value::Int(i), Value::Int(1000 + i)]]).unwrap();
    }
    let mut tx = e.begin();
    tx.delete(u, &[Value::Int(50)]).unwrap();
    tx.commit().unwrap();
    let empty = table(
        &e,
        "empty",
        vec![ColumnSpec::new("id", int()).not_null()],
        &["id"],
        vec![],
    );
    let at = e.checkpoint().unwrap();
    let counters = |e: &Engine| -> Vec<(u64, u64)> {
        let snap = e.snapshot();
        [t, n, u, empty]
            .iter()
            .map(|id| {
                let d = snap.root().table(*id).unwrap();
                (d.auto_inc_next, d.next_row_id)
            })
            .collect()
    };
    let want = e.snapshot().dump();
    let want_counters = counters(&e);
    assert_eq!(want_counters[1].1, 120);
    assert_eq!(want_counters[2].0, 51);
    e.shutdown().unwrap();
    drop(e);

    let mut paged = options(&base);
    paged.index_build_chunk_bytes = 2 << 10;
    let (e, report) = open_sim(&fs, paged.clone()).unwrap();
    assert!(report.converted_to_paged, "{report}");
    assert_eq!(report.checkpoint_lsn, Some(at));
    assert_eq!(report.records_applied, 0);
    assert_eq!(e.snapshot().dump(), want);
    assert_eq!(counters(&e), want_counters);
    assert_eq!(contents(&e, t).len(), 300);
    // The counters go on where the in-memory store left them; the unique key holds over the
    // base's entries.
    insert(&e, u, vec![vec![Value::Int(0), Value::Int(7)]]).unwrap();
    let err = insert(&e, u, vec![vec![Value::Int(0), Value::Int(1001)]]).unwrap_err();
    assert!(err.to_string().contains("Duplicate entry '1001'"), "{err}");
    insert(&e, n, vec![vec![Value::Int(1), Value::bytes(b"new")]]).unwrap();
    let snap = e.snapshot();
    assert_eq!(snap.root().table(u).unwrap().auto_inc_next, 52);
    assert_eq!(snap.root().table(n).unwrap().next_row_id, 121);
    let rows = snap.dump();
    assert!(rows["d.u"].contains(&vec![Value::Int(51), Value::Int(7)]));
    assert_eq!(rows["d.n"].len(), 121);
    drop(snap);
    e.shutdown().unwrap();
    drop(e);
    // Rows and entries, each once: t (300 + by_k), n (121 + by_a), u (50 + code).
    assert_eq!(base_records(&base.0), 600 + 242 + 100);
}

#[test]
fn a_damaged_checkpoint_is_refused_by_the_conversion_and_the_directory_kept() {
    let base = Scratch::new("paged");
    let fs = SimFs::new();
    let mut memory = options(&base);
    memory.table_store = TableStore::Memory;
    let (e, _) = open_sim(&fs, memory.clone()).unwrap();
    let t = setup(&e);
    for id in 0..200 {
        put(&e, t, id, id % 5);
    }
    e.checkpoint().unwrap();
    e.shutdown().unwrap();
    drop(e);
    let dir = std::path::Path::new("/data/checkpoints");
    let name = fs
        .list_dir(dir)
        .unwrap()
        .into_iter()
        .find(|n| n.ends_with(".ckpt"))
        .unwrap();
    let file = fs.open(&dir.join(&name), false).unwrap();
    // A byte in the rows, past the part the conversion parses first.
    let at = file.len().unwrap() * 3 / 4;
    let mut b = [0u8; 1];
    file.read_at(&mut b, at).unwrap();
    file.write_all_at(&[b[0] ^ 0x40], at).unwrap();
    drop(file);
    for _ in 0..2 {
        let err = open_sim(&fs, options(&base)).err().unwrap().to_string();
        assert!(
            err.contains("CRC32C mismatch") && err.contains(&name),
            "{err}"
        );
    }
    // Nothing switched: the control file still names the checkpoint, and nothing was written
    // into a base.
    let files = fs.list_dir(dir).unwrap();
    assert!(files.contains(&name), "{files:?}");
    assert_eq!(base_records(&base.0), 0);
}

#[test]
fn a_check_of_the_base_counts_rows_and_entries_against_the_root_record() {
    use onelog_engine::base::Base;
    use onelog_engine::base_check::{check_base, BaseCheckError};
    use onelog_engine::base_format::{encode_entry, entry_key, parse_key, row_key, BaseKey};
    let base = Scratch::new("paged");
    let fs = SimFs::new();
    // A store the control file names must be there: the check neither passes nor creates it.
    let missing = base.0.join("missing");
    let err = check_base(&missing).unwrap_err().to_string();
    assert!(
        err.contains("named by the control file but missing"),
        "{err}"
    );
    assert!(!missing.exists());
    let (e, _) = open_sim(&fs, options(&base)).unwrap();
    let t = setup(&e);
    for id in 0..50 {
        put(&e, t, id, id % 3);
    }
    e.checkpoint().unwrap();
    // A running server holds the base: not opened.
    assert_eq!(
        check_base(&base.0),
        Err(BaseCheckError::InUse(base.0.clone()))
    );
    // A table dropped: its records stay retired until checkpoints purge them.
    let u = e
        .create_table(
            TableSpec {
                db: "d".into(),
                name: "u".into(),
                columns: vec![ColumnSpec::new("id", SqlType::Int { unsigned: false }).not_null()],
                primary_key: vec!["id".into()],
                indexes: vec![],
            },
            false,
            "CREATE TABLE u (...)",
        )
        .unwrap();
    let mut tx = e.begin();
    for id in 0..10 {
        tx.insert(u, vec![Value::Int(id)]).unwrap();
    }
    tx.commit().unwrap();
    e.checkpoint().unwrap();
    e.drop_table("d", "u", false, "DROP TABLE u").unwrap();
    e.checkpoint().unwrap();
    e.shutdown().unwrap();
    drop(e);
    let report = check_base(&base.0).unwrap();
    assert_eq!(
        (report.tables, report.rows, report.entries, report.unclaimed),
        (1, 50, 50, 0)
    );
    assert!(report.retired <= 10, "{report:?}");
    assert!(report.lsn.is_some());
    // The storage id of t's rows, and one more row than its root record counts.
    let storage = {
        let b = Base::open(&base.0, 1 << 20).unwrap();
        let key = b
            .snapshot()
            .iter(Bound::Unbounded, Bound::Unbounded)
            .next()
            .unwrap()
            .unwrap()
            .0;
        u64::from_be_bytes(key[1..9].try_into().unwrap())
    };
    let write = |change: (Vec<u8>, Option<Vec<u8>>)| {
        let b = Base::open(&base.0, 1 << 20).unwrap();
        b.checkpoint(&[], &[change]).unwrap();
    };
    // A row of t, and its entry in by_k (which ends with the row's key).
    let (row, entry) = {
        let b = Base::open(&base.0, 1 << 20).unwrap();
        let records: Vec<_> = b
            .snapshot()
            .iter(Bound::Unbounded, Bound::Unbounded)
            .map(Result::unwrap)
            .collect();
        let row = records
            .iter()
            .find(|(k, _)| matches!(parse_key(k), Some(BaseKey::Row { .. })))
            .unwrap()
            .clone();
        let Some(BaseKey::Row { pk, .. }) = parse_key(&row.0) else {
            unreachable!()
        };
        let entry = records
            .iter()
            .find(|(k, _)| matches!(parse_key(k), Some(BaseKey::Entry { entry, .. }) if entry.ends_with(pk)))
            .unwrap()
            .clone();
        (row, entry)
    };
    let (
        Some(BaseKey::Row { pk, .. }),
        Some(BaseKey::Entry {
            index, entry: e, ..
        }),
    ) = (parse_key(&row.0), parse_key(&entry.0))
    else {
        unreachable!()
    };
    // A row no root record counts, with the same values under another key.
    let stray = row_key(storage, &[0xff; 4]);
    write((stray.clone(), Some(vec![0])));
    let err = check_base(&base.0).unwrap_err().to_string();
    assert!(err.contains("row has 0 columns, its table 3"), "{err}");
    write((stray.clone(), Some(row.1.to_vec())));
    let err = check_base(&base.0).unwrap_err().to_string();
    assert!(
        err.contains("a row of d.t without its entry in index by_k"),
        "{err}"
    );
    let mut stray_entry = e[..e.len() - pk.len()].to_vec();
    stray_entry.extend_from_slice(&[0xff; 4]);
    let stray_entry = entry_key(storage, index, &stray_entry);
    write((stray_entry.clone(), Some(entry.1.to_vec())));
    let err = check_base(&base.0).unwrap_err().to_string();
    assert!(
        err.contains("has 51 rows, its root record says 50"),
        "{err}"
    );
    write((stray, None));
    write((stray_entry, None));
    check_base(&base.0).unwrap();
    // An entry naming no row in place of a row's own: the counts still agree, the join does
    // not. Restored, the base checks again.
    let mut fake = entry.0.to_vec();
    *fake.last_mut().unwrap() ^= 0x40;
    write((entry.0.to_vec(), None));
    write((fake.clone(), Some(entry.1.to_vec())));
    let err = check_base(&base.0).unwrap_err().to_string();
    assert!(
        err.contains("a row of d.t without its entry in index by_k"),
        "{err}"
    );
    write((fake, None));
    // The row's own entry, saying another index key length.
    write((entry.0.to_vec(), Some(encode_entry(0))));
    let err = check_base(&base.0).unwrap_err().to_string();
    assert!(err.contains("says an index key of 0 bytes"), "{err}");
    write((entry.0.to_vec(), Some(entry.1.to_vec())));
    check_base(&base.0).unwrap();
    // Entries of an index the table does not have: an index build's whose DDL was lost.
    write((entry_key(storage, 77, &[1, 2, 3]), Some(vec![1])));
    assert_eq!(check_base(&base.0).unwrap().unclaimed, 1);
    // Records under a storage id below the next one that nothing names.
    write((row_key(0, &[1]), Some(vec![0])));
    let err = check_base(&base.0).unwrap_err().to_string();
    assert!(
        err.contains("under storage id 0, which no table keeps"),
        "{err}"
    );
}

#[test]
fn the_delta_limit_follows_what_a_log_byte_costs_in_memory() {
    let base = Scratch::new("paged");
    let fs = SimFs::new();
    // A fixed limit of 8 MiB of log; 16 MiB of memory for the delta at the limit.
    let (e, _) = open_sim(&fs, options_with_budget(&base, 64 << 20)).unwrap();
    let limit = |e: &Engine| e.table_store_stats().unwrap().delta_limit;
    // Until a checkpoint has measured, the floor.
    assert_eq!(limit(&e), 2 << 20);
    e.create_database("d", false, "CREATE DATABASE d").unwrap();
    let int = || SqlType::Int { unsigned: false };
    // Wide rows without secondary keys: a log byte costs about one byte of memory, so the
    // fixed limit holds.
    let w = table(
        &e,
        "w",
        vec![
            ColumnSpec::new("id", int()).not_null(),
            ColumnSpec::new("p", SqlType::VarChar(2000)),
        ],
        &["id"],
        vec![],
    );
    for chunk in 0..8i64 {
        let rows = (0..50)
            .map(|i| vec![Value::Int(chunk * 50 + i), Value::bytes(vec![b'p'; 1500])])
            .collect();
        insert(&e, w, rows).unwrap();
    }
    e.checkpoint().unwrap();
    assert_eq!(limit(&e), 8 << 20);
    // Small rows with five secondary keys: about thirty bytes of memory per log byte, so the
    // limit falls to where 16 MiB of delta stands: under the floor, which holds it.
    let columns = ["a", "b", "c", "d", "e"];
    let mut specs = vec![ColumnSpec::new("id", int()).not_null()];
    specs.extend(columns.iter().map(|c| ColumnSpec::new(c, int())));
    let indexes = columns
        .iter()
        .map(|c| IndexSpec::new(&format!("by_{c}"), &[c], false))
        .collect();
    let n = table(&e, "n", specs, &["id"], indexes);
    for chunk in 0..20i64 {
        let rows = (0..1000)
            .map(|i| {
                let id = chunk * 1000 + i;
                let mut r = vec![Value::Int(id)];
                r.extend((1..=5).map(|k| Value::Int(id * k % 9973)));
                r
            })
            .collect();
        insert(&e, n, rows).unwrap();
    }
    e.checkpoint().unwrap();
    assert_eq!(limit(&e), 2 << 20);
    e.shutdown().unwrap();
}

/// Every data record of the base in `dir` (the engine is shut down).
fn base_records(dir: &std::path::Path) -> usize {
    let base = onelog_engine::base::Base::open(dir, 1 << 20).unwrap();
    base.snapshot()
        .iter(Bound::Unbounded, Bound::Unbounded)
        .map(Result::unwrap)
        .count()
}

#[test]
fn dropped_truncated_and_rewritten_tables_leave_no_records_in_the_base() {
    let base = Scratch::new("paged");
    let fs = SimFs::new();
    let (e, _) = open_sim(&fs, options(&base)).unwrap();
    let t = setup(&e);
    let spec = TableSpec {
        db: "d".into(),
        name: "u".into(),
        columns: vec![ColumnSpec::new("id", SqlType::BigInt { unsigned: false }).not_null()],
        primary_key: vec!["id".into()],
        indexes: vec![],
    };
    let u = e.create_table(spec, false, "CREATE TABLE u (...)").unwrap();
    for id in 0..200 {
        put(&e, t, id, id % 5);
        let mut tx = e.begin();
        tx.insert(u, vec![Value::Int(id)]).unwrap();
        tx.commit().unwrap();
    }
    e.checkpoint().unwrap();
    e.shutdown().unwrap();
    drop(e);
    // 200 rows of t with one index entry each, 200 rows of u.
    assert_eq!(base_records(&base.0), 600);
    let (e, _) = open_sim(&fs, options(&base)).unwrap();
    e.drop_table("d", "u", false, "DROP TABLE u").unwrap();
    e.add_column(
        "d",
        "t",
        ColumnSpec::new("extra", SqlType::Int { unsigned: false }),
        Value::Int(1),
        "ALTER TABLE t ADD extra INT",
    )
    .unwrap();
    for id in 200..210 {
        put(&e, t, id, 1);
    }
    e.checkpoint().unwrap();
    e.truncate_table("d", "t", "TRUNCATE t").unwrap();
    for id in 0..7 {
        put(&e, t, id, 2);
    }
    e.shutdown().unwrap();
    drop(e);
    // Only the 7 rows of t and their entries are left.
    assert_eq!(base_records(&base.0), 14);
    let (e, _) = open_sim(&fs, options(&base)).unwrap();
    assert_eq!(contents(&e, t).len(), 7);
}

#[test]
fn a_dropped_index_leaves_no_entries_in_the_base() {
    let base = Scratch::new("paged");
    let fs = SimFs::new();
    let (e, _) = open_sim(&fs, options(&base)).unwrap();
    let t = setup(&e);
    for id in 0..200 {
        put(&e, t, id, id % 5);
    }
    e.checkpoint().unwrap();
    // Dropped while a change of the table waits in the delta: the entries of both layers go.
    put(&e, t, 7, 9);
    e.drop_index("d", "t", "by_k", "DROP INDEX by_k ON t")
        .unwrap();
    put(&e, t, 500, 1);
    e.checkpoint().unwrap();
    e.shutdown().unwrap();
    drop(e);
    // 201 rows, no entries.
    assert_eq!(base_records(&base.0), 201);
    let (e, _) = open_sim(&fs, options(&base)).unwrap();
    assert_eq!(contents(&e, t).len(), 201);
    // The same index id built again reads only its new entries.
    let spec = IndexSpec::new("by_k", &["k"], false);
    e.create_index("d", "t", spec, "CREATE INDEX by_k ON t (k)")
        .unwrap();
    assert_eq!(contents(&e, t).len(), 201);
}

#[test]
fn after_a_recovery_that_replayed_records_a_checkpoint_follows_without_new_commits() {
    let base = Scratch::new("paged");
    let fs = SimFs::new();
    let (e, _) = open_sim(&fs, options(&base)).unwrap();
    let t = setup(&e);
    for id in 0..100 {
        put(&e, t, id, 3);
    }
    drop(e);
    fs.crash_now();
    let fs = fs.reboot(11, true);
    // Only a request can start it: no time trigger, and the log does not grow.
    let mut o = options(&base);
    o.background_checkpoints = true;
    o.checkpoint_every = Duration::ZERO;
    let (e, report) = open_sim(&fs, o).unwrap();
    assert!(report.records_applied >= 100, "{report:?}");
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while e.table_store_stats().unwrap().checkpoints == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "no checkpoint after recovery"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(e.table_store_stats().unwrap().delta_log_bytes, 0);
    assert_eq!(contents(&e, t).len(), 100);
}

#[test]
fn a_failed_checkpoint_into_the_base_is_written_again_and_loses_nothing() {
    let base = Scratch::new("paged");
    let fs = SimFs::new();
    let (e, _) = open_sim(&fs, options(&base)).unwrap();
    let t = setup(&e);
    let mut model = std::collections::BTreeMap::new();
    let mut put_m = |e: &Arc<Engine>, id: i64, k: i64| {
        put(e, t, id, k);
        model.insert(id, k);
    };
    for id in 0..100 {
        put_m(&e, id, 1);
    }
    e.checkpoint().unwrap();
    for id in 50..150 {
        put_m(&e, id, 2);
    }
    // The base's files move away: the next checkpoint cannot write its table file.
    let keyspaces = base.0.join("keyspaces");
    let away = base.0.join("keyspaces.away");
    std::fs::rename(&keyspaces, &away).unwrap();
    let failed = e.checkpoint();
    assert!(failed.is_err(), "{failed:?}");
    // Commits go on over the frozen layer the failed checkpoint left, and read right.
    for id in 120..200 {
        put_m(&e, id, 3);
    }
    delete(&e, t, 10);
    model.remove(&10);
    let want: Vec<(i64, i64)> = model.iter().map(|(a, b)| (*a, *b)).collect();
    assert_eq!(ids_and_ks(&e, t), want);
    // A DDL that fails over the frozen layer hands out storage ids (it copies in memory: no
    // build runs over a frozen layer); the checkpoint below still finds its frozen layer.
    let err = alter(
        &e,
        t,
        "ALTER TABLE t MODIFY k BIGINT NOT NULL, ADD UNIQUE",
        |d| {
            k_to_bigint(d);
            d.add_index(&IndexSpec::new("u_k", &["k"], true)).unwrap();
        },
    );
    assert!(
        matches!(err, Err(EngineError::DuplicateKey { .. })),
        "{err:?}"
    );
    std::fs::rename(&away, &keyspaces).unwrap();
    let at = e.checkpoint().unwrap();
    for id in 300..310 {
        put(&e, t, id, 4);
    }
    let mut want = want;
    want.extend((300..310).map(|id| (id, 4)));
    drop(e);
    fs.crash_now();
    let fs = fs.reboot(3, true);
    let (e, report) = open_sim(&fs, options(&base)).unwrap();
    assert_eq!(report.checkpoint_lsn, Some(at));
    assert_eq!(report.records_applied, 10);
    assert_eq!(ids_and_ks(&e, t), want);
}

/// Puts rows (ids from `first`) until the log after the newest checkpoint reaches the delta's
/// limit; returns the next id.
fn fill_the_delta(e: &Arc<Engine>, t: TableId, first: i64) -> i64 {
    let mut id = first;
    loop {
        let s = e.table_store_stats().unwrap();
        if s.delta_log_bytes >= s.delta_limit {
            return id;
        }
        assert!(id < first + 20_000, "the delta never filled: {s:?}");
        put(e, t, id, 1);
        id += 1;
    }
}

#[test]
fn at_the_delta_limit_a_commit_waits_for_a_checkpoint_and_fails_when_none_comes() {
    let base = Scratch::new("paged");
    let fs = SimFs::new();
    let mut o = options(&base);
    // Checkpoints every 64 KiB of log: the limit is twice that.
    o.checkpoint_every_bytes = 64 << 10;
    o.lock_wait_timeout = Duration::from_secs(1);
    let (e, _) = open_sim(&fs, o.clone()).unwrap();
    let t = setup(&e);
    assert_eq!(e.table_store_stats().unwrap().delta_limit, 128 << 10);
    let next = fill_the_delta(&e, t, 0);
    // No scheduler runs: nothing brings the delta under the limit, and the commit fails
    // after the lock wait timeout; its row is not there.
    let mut tx = e.begin();
    tx.insert(t, row(&e, t, next, 7)).unwrap();
    let err = tx.commit().unwrap_err();
    // No checkpoint failed (none ran): 1205, which clients retry. A failed checkpoint makes
    // it 1030 naming the base (`budget.rs` tests).
    assert_eq!(err.code(), 1205, "{err}");
    assert_eq!(ids_and_ks(&e, t).len(), next as usize);
    let s = e.table_store_stats().unwrap();
    assert_eq!((s.commit_waits, s.checkpoints), (1, 0));
    // A checkpoint makes room, and the same commit goes through.
    e.checkpoint().unwrap();
    put(&e, t, next, 7);
    let s = e.table_store_stats().unwrap();
    assert_eq!((s.commit_waits, s.checkpoints), (1, 1));
    assert!(s.base.bytes_written > 0, "{s:?}");
    let want: Vec<(i64, i64)> = (0..=next)
        .map(|id| (id, if id == next { 7 } else { 1 }))
        .collect();
    assert_eq!(ids_and_ks(&e, t), want);
}

#[test]
fn writers_faster_than_checkpoints_wait_for_them_and_lose_nothing() {
    let base = Scratch::new("paged");
    let fs = SimFs::new();
    let mut o = options(&base);
    o.checkpoint_every_bytes = 64 << 10;
    o.background_checkpoints = true;
    let (e, _) = open_sim(&fs, o.clone()).unwrap();
    let t = setup(&e);
    // Two writers, each many times the limit: the scheduler's checkpoints (asked for by the
    // waiting commits) keep the delta bounded and every commit goes through.
    let writers: Vec<_> = (0..2i64)
        .map(|w| {
            let e = e.clone();
            std::thread::spawn(move || {
                for i in 0..2_000 {
                    put(&e, t, w * 100_000 + i, w);
                }
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    let s = e.table_store_stats().unwrap();
    assert!(s.checkpoints >= 2, "{s:?}");
    // Every commit started under the limit, and at most two ran past it at once.
    assert!(s.delta_log_bytes < s.delta_limit + 4096, "{s:?}");
    let mut want: Vec<(i64, i64)> = (0..2i64)
        .flat_map(|w| (0..2_000).map(move |i| (w * 100_000 + i, w)))
        .collect();
    want.sort();
    assert_eq!(ids_and_ks(&e, t), want);
    // Reopened, the base and the log after it give the same rows.
    drop(e);
    let (e, _) = open_sim(&fs, o).unwrap();
    assert_eq!(ids_and_ks(&e, t), want);
}

#[test]
fn a_backup_hold_writes_an_image_of_the_tables_and_removes_it_when_released() {
    use onelog_engine::checkpoint::{parse_backup_image_name, read_checkpoint_file};
    use onelog_engine::store::Root;
    let base = Scratch::new("paged");
    let fs = SimFs::new();
    let (e, _) = open_sim(&fs, options(&base)).unwrap();
    let t = setup(&e);
    for id in 0..300 {
        put(&e, t, id, 1);
    }
    e.checkpoint().unwrap();
    // Rows in the base, changed and deleted in the delta above it.
    for id in 250..320 {
        put(&e, t, id, 2);
    }
    delete(&e, t, 3);
    let want = contents(&e, t);
    let ckdir = std::path::Path::new("/data/checkpoints");
    let hold = e.hold_for_backup_as(42).unwrap();
    let path = hold.image().expect("an image").to_path_buf();
    let name = path.file_name().unwrap().to_str().unwrap().to_string();
    let lsn = parse_backup_image_name(&name, 42).expect(&name);
    assert_eq!(parse_backup_image_name(&name, 4), None);
    // Commits go on while the hold lives; the image keeps its own point.
    put(&e, t, 1000, 9);
    let image = read_checkpoint_file(&*fs, &path, lsn).unwrap();
    let root = Root::decode_checkpoint(&image.body, image.lsn, image.gtid_state).unwrap();
    assert_eq!(root.dump()["d.t"], want);
    assert!(e.log().durable_lsn() >= lsn);
    drop(hold);
    assert!(!fs.exists(&path), "the image outlived its hold");
    // An image a crash left behind is removed at the next open.
    let hold = e.hold_for_backup_as(43).unwrap();
    let path = hold.image().unwrap().to_path_buf();
    fs.crash_now();
    drop(hold);
    drop(e);
    let fs = fs.reboot(5, true);
    assert!(fs.exists(&path), "the image was synced with its directory");
    let (e, _) = open_sim(&fs, options(&base)).unwrap();
    assert!(fs
        .list_dir(ckdir)
        .unwrap()
        .iter()
        .all(|n| !n.starts_with("backup-")));
    assert_eq!(contents(&e, t).len(), want.len() + 1);
}

/// [`options`] whose index builds into the base sort and write 2 KiB of entries at a time.
fn small_chunks(base: &Scratch) -> EngineOptions {
    let mut o = options(base);
    o.index_build_chunk_bytes = 2 << 10;
    o
}

/// An engine on [`small_chunks`] whose table `d.t` holds `rows` rows (`k` = id % 5), all
/// checkpointed into the base.
fn in_the_base(fs: &Arc<SimFs>, base: &Scratch, rows: i64) -> (Arc<Engine>, TableId) {
    let (e, _) = open_sim(fs, small_chunks(base)).unwrap();
    let t = setup(&e);
    for id in 0..rows {
        put(&e, t, id, id % 5);
    }
    e.checkpoint().unwrap();
    (e, t)
}

/// Shuts `e` down (a last checkpoint), checks that the base holds `records` data records (rows
/// and index entries: nothing left twice), and that a reopen reads `expect` from `t`.
fn shut_down_and_reopen(
    e: Arc<Engine>,
    fs: &Arc<SimFs>,
    base: &Scratch,
    t: TableId,
    records: usize,
    expect: &[Vec<Value>],
) {
    e.shutdown().unwrap();
    drop(e);
    assert_eq!(base_records(&base.0), records);
    let (e, _) = open_sim(fs, small_chunks(base)).unwrap();
    assert_eq!(contents(&e, t), expect);
}

/// Commits a row with explicit `k` and `payload` (`k` None: NULL).
fn put_raw(
    e: &Arc<Engine>,
    t: TableId,
    id: i64,
    k: Option<i64>,
    payload: &str,
) -> Result<(), EngineError> {
    let mut tx = e.begin();
    let mut r = row(e, t, id, 0);
    r[1] = k.map_or(Value::Null, Value::Int);
    r[2] = Value::bytes(payload.as_bytes());
    if !tx.update(t, &[Value::Int(id)], r.clone())? {
        tx.insert(t, r)?;
    }
    tx.commit().map(drop)
}

fn bytes_written(e: &Engine) -> u64 {
    e.table_store_stats().unwrap().base.bytes_written
}

/// Runs a checkpoint; returns the bytes it wrote into the base.
fn checkpoint_bytes(e: &Engine) -> u64 {
    let before = bytes_written(e);
    e.checkpoint().unwrap();
    bytes_written(e) - before
}

/// An engine on [`small_chunks`] whose table `d.t` has 2,000 rows checkpointed into the base,
/// then changes over them waiting in the delta (20 updates, 14 deletes, 10 inserts); with the
/// bytes the checkpoint of the table wrote.
fn in_the_base_with_changes(fs: &Arc<SimFs>, base: &Scratch) -> (Arc<Engine>, TableId, u64) {
    let (e, _) = open_sim(fs, small_chunks(base)).unwrap();
    let t = setup(&e);
    for id in 0..2000 {
        put(&e, t, id, (id * 7919) % 101);
    }
    let table_bytes = checkpoint_bytes(&e);
    for id in (0..2000).step_by(100) {
        put(&e, t, id, 1000 - id);
    }
    for id in (3..2000).step_by(150) {
        delete(&e, t, id);
    }
    for id in 2000..2010 {
        put(&e, t, id, id % 3);
    }
    (e, t, table_bytes)
}

#[test]
fn create_index_over_rows_in_the_base_writes_its_entries_there_in_sorted_chunks() {
    let base = Scratch::new("paged");
    let fs = SimFs::new();
    // The new entries are built from the changes waiting in the delta too.
    let (e, t, table_bytes) = in_the_base_with_changes(&fs, &base);
    let checkpoints = e.table_store_stats().unwrap().checkpoints;
    let before = bytes_written(&e);
    let spec = IndexSpec::new("by_k_payload", &["k", "payload"], false);
    e.create_index(
        "d",
        "t",
        spec,
        "CREATE INDEX by_k_payload ON t (k, payload)",
    )
    .unwrap();
    // The entries went into the base at once (no checkpoint wrote them), in many ingestions
    // of 2 KiB, and every row has its entry, keyed by its values, in key order.
    assert_eq!(e.table_store_stats().unwrap().checkpoints, checkpoints);
    assert!(
        bytes_written(&e) - before > 40 << 10,
        "{}",
        bytes_written(&e) - before
    );
    let rows = contents(&e, t);
    assert_eq!(rows.len(), 2000 - 14 + 10);
    // The next checkpoint writes the delta's changes, not the table again (make_whole would
    // have copied the table into the delta under a new storage id).
    let after_build = checkpoint_bytes(&e);
    assert!(
        after_build * 10 < table_bytes,
        "checkpoint after CREATE INDEX wrote {after_build} bytes, the table {table_bytes}"
    );
    // Later changes move entries that lie in the base (tombstones in the delta).
    for id in (0..2000).step_by(7) {
        put(&e, t, id, -id);
    }
    let expect = contents(&e, t);
    drop(e);
    fs.crash_now();
    let fs = fs.reboot(5, true);
    let (e, _) = open_sim(&fs, small_chunks(&base)).unwrap();
    assert_eq!(contents(&e, t), expect);
    // Once checkpointed, the base holds each row and one entry per row per index.
    e.shutdown().unwrap();
    drop(e);
    assert_eq!(base_records(&base.0), expect.len() * 3);
}

#[test]
fn a_crash_after_create_index_and_before_a_checkpoint_rebuilds_it_in_the_base() {
    let base = Scratch::new("paged");
    let fs = SimFs::new();
    let (e, _) = open_sim(&fs, small_chunks(&base)).unwrap();
    let t = setup(&e);
    for id in 0..500 {
        put(&e, t, id, id % 13);
    }
    let table_bytes = checkpoint_bytes(&e);
    put(&e, t, 4, 99);
    let spec = IndexSpec::new("by_payload", &["payload"], false);
    e.create_index("d", "t", spec, "CREATE INDEX by_payload ON t (payload)")
        .unwrap();
    put(&e, t, 5, 98);
    let expect = contents(&e, t);
    // The DDL record is durable; no checkpoint came after it.
    drop(e);
    fs.crash_now();
    let fs = fs.reboot(11, true);
    let (e, report) = open_sim(&fs, small_chunks(&base)).unwrap();
    assert_eq!(report.records_applied, 3);
    assert_eq!(contents(&e, t), expect);
    // The replay wrote the entries into the base again (the build's from before the crash
    // deleted first), not the table into memory: the next checkpoint writes the two replayed
    // row changes, not the table.
    assert!(bytes_written(&e) > 10 << 10, "{}", bytes_written(&e));
    let after = checkpoint_bytes(&e);
    assert!(
        after * 10 < table_bytes,
        "{after} bytes, the table {table_bytes}"
    );
    shut_down_and_reopen(e, &fs, &base, t, 500 * 3, &expect);
}

#[test]
fn a_unique_index_built_into_the_base_checks_duplicates_and_leaves_nothing_when_refused() {
    let base = Scratch::new("paged");
    let fs = SimFs::new();
    let (e, _) = open_sim(&fs, small_chunks(&base)).unwrap();
    let t = setup(&e);
    for id in 0..300 {
        // k is unique except for NULLs (a unique index allows those twice).
        let k = (id % 50 != 0).then_some(id);
        put_raw(&e, t, id, k, &format!("p{id}")).unwrap();
    }
    e.checkpoint().unwrap();
    // A duplicate: one row in the delta has another's payload.
    put_raw(&e, t, 7, Some(7), "p200").unwrap();
    let unique = |name: &str, col: &str| {
        e.create_index(
            "d",
            "t",
            IndexSpec::new(name, &[col], true),
            &format!("CREATE UNIQUE INDEX {name} ON t ({col})"),
        )
    };
    let err = unique("u_payload", "payload").err().unwrap();
    assert!(
        matches!(&err, EngineError::DuplicateKey { entry, key } if entry == "p200" && key == "u_payload"),
        "{err:?}"
    );
    assert_eq!(e.catalog().table(t).unwrap().indexes.len(), 1);
    // NULLs repeat, values do not: this one is built.
    unique("u_k", "k").unwrap();
    let rows = contents(&e, t);
    assert_eq!(rows.len(), 300);
    // It is enforced over entries that lie in the base.
    let err = put_raw(&e, t, 1000, Some(123), "new").err().unwrap();
    assert!(matches!(err, EngineError::DuplicateKey { .. }), "{err:?}");
    put_raw(&e, t, 1000, None, "new").unwrap();
    // The refused build left no entry behind: rows, by_k and u_k entries only.
    e.checkpoint().unwrap();
    e.shutdown().unwrap();
    drop(e);
    assert_eq!(base_records(&base.0), 301 * 3);
}

#[test]
fn an_index_built_right_after_a_drop_reads_only_its_own_entries() {
    let base = Scratch::new("paged");
    let fs = SimFs::new();
    let (e, t) = in_the_base(&fs, &base, 300);
    // Dropped and built again (a new index id) with other columns before any checkpoint
    // purged the old entries: the purge deletes only the old ones.
    e.drop_index("d", "t", "by_k", "DROP INDEX by_k ON t")
        .unwrap();
    let spec = IndexSpec::new("by_k", &["payload"], false);
    e.create_index("d", "t", spec, "CREATE INDEX by_k ON t (payload)")
        .unwrap();
    let expect = contents(&e, t);
    e.checkpoint().unwrap();
    e.checkpoint().unwrap();
    assert_eq!(contents(&e, t), expect);
    shut_down_and_reopen(e, &fs, &base, t, 300 * 2, &expect);
}

#[test]
fn a_failed_write_of_an_index_into_the_base_logs_nothing_and_the_next_try_builds_it() {
    let base = Scratch::new("paged");
    let fs = SimFs::new();
    let (e, t) = in_the_base(&fs, &base, 300);
    let end = e.log().end_lsn();
    // The base's files move away: the build cannot write its table files.
    let keyspaces = base.0.join("keyspaces");
    let away = base.0.join("keyspaces.away");
    std::fs::rename(&keyspaces, &away).unwrap();
    let create = || {
        let spec = IndexSpec::new("by_payload", &["payload"], false);
        e.create_index("d", "t", spec, "CREATE INDEX by_payload ON t (payload)")
    };
    let err = create().err().unwrap();
    assert!(
        err.to_string().contains(&base.0.display().to_string()),
        "{err}"
    );
    assert_eq!(e.log().end_lsn(), end, "nothing logged");
    assert_eq!(e.catalog().table(t).unwrap().indexes.len(), 1);
    std::fs::rename(&away, &keyspaces).unwrap();
    put(&e, t, 1, 42);
    create().unwrap();
    let expect = contents(&e, t);
    drop(e);
    fs.crash_now();
    let fs = fs.reboot(2, true);
    let (e, _) = open_sim(&fs, small_chunks(&base)).unwrap();
    assert_eq!(contents(&e, t), expect);
}

#[test]
fn entries_of_a_build_whose_ddl_was_lost_are_deleted_by_the_next_build() {
    let base = Scratch::new("paged");
    let fs = SimFs::new();
    let (e, t) = in_the_base(&fs, &base, 300);
    let create = |e: &Engine| {
        let spec = IndexSpec::new("by_k_payload", &["k", "payload"], false);
        e.create_index(
            "d",
            "t",
            spec,
            "CREATE INDEX by_k_payload ON t (k, payload)",
        )
    };
    // The entries are written, then the DDL record's sync fails: not acknowledged, and lost
    // with the power.
    fs.fail_fsyncs(true);
    assert!(create(&e).is_err());
    drop(e);
    let fs = fs.reboot(1, false);
    let (e, _) = open_sim(&fs, small_chunks(&base)).unwrap();
    assert_eq!(e.catalog().table(t).unwrap().indexes.len(), 1);
    // The rows change, so the lost build's entries (same index id) no longer match them.
    for id in (0..300).step_by(3) {
        put(&e, t, id, 77);
    }
    create(&e).unwrap();
    let expect = contents(&e, t);
    e.checkpoint().unwrap();
    shut_down_and_reopen(e, &fs, &base, t, 300 * 3, &expect);
}

#[test]
fn a_foreign_keys_generated_key_is_built_into_the_base_and_retired_with_it() {
    let base = Scratch::new("paged");
    let fs = SimFs::new();
    let (e, _) = open_sim(&fs, small_chunks(&base)).unwrap();
    e.create_database("d", false, "CREATE DATABASE d").unwrap();
    let table = |name: &str, columns: Vec<ColumnSpec>| TableSpec {
        db: "d".into(),
        name: name.into(),
        columns,
        primary_key: vec!["id".into()],
        indexes: vec![],
    };
    let int = |n: &str| ColumnSpec::new(n, SqlType::Int { unsigned: false }).not_null();
    let p = e
        .create_table(table("p", vec![int("id")]), false, "CREATE TABLE p")
        .unwrap();
    let c = e
        .create_table(
            table("c", vec![int("id"), int("pid")]),
            false,
            "CREATE TABLE c",
        )
        .unwrap();
    let mut tx = e.begin();
    for id in 0..10 {
        tx.insert(p, vec![Value::Int(id)]).unwrap();
    }
    for id in 0..2000 {
        tx.insert(c, vec![Value::Int(id), Value::Int((id * 7) % 10)])
            .unwrap();
    }
    tx.commit().unwrap();
    let table_bytes = checkpoint_bytes(&e);
    let mut tx = e.begin();
    tx.delete(c, &[Value::Int(5)]).unwrap();
    tx.commit().unwrap();
    // ALTER TABLE c ADD FOREIGN KEY (pid) REFERENCES p (id): InnoDB's generated key
    // c_ibfk_1 on (pid), built into the base at once (no checkpoint wrote it).
    let fk = ForeignKeyDef {
        name: "c_ibfk_1".into(),
        columns: vec!["pid".into()],
        parent_db: "d".into(),
        parent_table: "p".into(),
        parent_columns: vec!["id".into()],
        on_delete: FkAction::Restrict,
        on_update: FkAction::Restrict,
    };
    let checkpoints = e.table_store_stats().unwrap().checkpoints;
    let before = bytes_written(&e);
    let generated = IndexSpec::new("c_ibfk_1", &["pid"], false);
    let sql = "ALTER TABLE c ADD FOREIGN KEY (pid) REFERENCES p (id)";
    e.alter_constraints(("d", "c"), (vec![fk], vec![]), Some(generated), sql)
        .unwrap();
    assert_eq!(e.table_store_stats().unwrap().checkpoints, checkpoints);
    assert!(
        bytes_written(&e) - before > 20 << 10,
        "{}",
        bytes_written(&e) - before
    );
    let entries = |e: &Engine| -> Vec<(i64, i64)> {
        let snap = e.snapshot();
        let root = snap.root();
        let def = root.table_def(c).unwrap();
        let ix = def.index("c_ibfk_1").unwrap();
        root.scan_index(c, ix.id, &(Bound::Unbounded, Bound::Unbounded))
            .map(|item| match &item.unwrap().1.row[..] {
                [Value::Int(id), Value::Int(pid)] => (*pid, *id),
                other => panic!("{other:?}"),
            })
            .collect()
    };
    let mut want: Vec<(i64, i64)> = (0..2000)
        .filter(|&id| id != 5)
        .map(|id| (id * 7 % 10, id))
        .collect();
    want.sort();
    assert_eq!(entries(&e), want);
    // The next checkpoint writes the delete, not the table again.
    let before = bytes_written(&e);
    e.checkpoint().unwrap();
    assert!((bytes_written(&e) - before) * 10 < table_bytes);
    assert_eq!(entries(&e), want);
    // An index that serves the foreign key replaces the generated one: its entries are
    // retired and purged.
    let spec = IndexSpec::new("by_pid_id", &["pid", "id"], false);
    e.create_index("d", "c", spec, "CREATE INDEX by_pid_id ON c (pid, id)")
        .unwrap();
    let names: Vec<String> = e
        .catalog()
        .table(c)
        .unwrap()
        .indexes
        .iter()
        .map(|i| i.name.clone())
        .collect();
    assert_eq!(names, vec!["by_pid_id".to_string()]);
    e.checkpoint().unwrap();
    e.shutdown().unwrap();
    drop(e);
    // p's rows, c's rows and one entry each.
    assert_eq!(base_records(&base.0), 10 + 1999 * 2);
}

#[test]
fn an_alter_table_that_keeps_the_rows_and_drops_an_index_leaves_no_entries_in_the_base() {
    let base = Scratch::new("paged");
    let fs = SimFs::new();
    let (e, t) = in_the_base(&fs, &base, 300);
    // ALTER TABLE t DROP INDEX by_k, MODIFY ... that changes no column: the rows stay where
    // they are, the index's entries in the base are deleted by the next checkpoints.
    let old = e.catalog().table(t).unwrap().clone();
    let mut new = (*old).clone();
    new.indexes.clear();
    let sources = (0..old.columns.len()).map(ColumnSource::Old).collect();
    let plan = AlterPlan {
        sources,
        strict: true,
        auto_increment: None,
    };
    e.alter_table(&old, new, plan, "ALTER TABLE t DROP INDEX by_k")
        .unwrap();
    assert!(e.catalog().table(t).unwrap().indexes.is_empty());
    let expect = contents(&e, t);
    e.checkpoint().unwrap();
    shut_down_and_reopen(e, &fs, &base, t, 300, &expect);
}

/// `k` of row `id` as `tx` reads it.
fn k_of(tx: &mut onelog_engine::Transaction, t: TableId, id: i64) -> i64 {
    match tx.get(t, &[Value::Int(id)]).unwrap().unwrap()[1] {
        Value::Int(k) => k,
        ref v => panic!("{v:?}"),
    }
}

/// `(id, k)` of the rows `tx` reads by a primary key scan of `t` from `lo` to `hi`.
fn scan_ids(
    tx: &mut onelog_engine::Transaction,
    t: TableId,
    (lo, hi): (Bound<i64>, Bound<i64>),
) -> Vec<(i64, i64)> {
    let value = |b: Bound<i64>| b.map(|v| vec![Value::Int(v)]);
    let range = KeyRange {
        start: value(lo),
        end: value(hi),
    };
    tx.scan(t, IndexRef::Primary, range, None)
        .unwrap()
        .iter()
        .map(|r| id_and_k(r))
        .collect()
}

#[test]
fn primary_key_scans_of_rows_in_the_base_use_cached_runs_and_see_exactly_their_snapshot() {
    use std::collections::BTreeMap;
    use Bound::{Excluded, Included, Unbounded};
    let base = Scratch::new("paged");
    let fs = SimFs::new();
    let (e, t) = in_the_base(&fs, &base, 300);
    let cache = || e.table_store_stats().unwrap().base.rows;
    let mut model: BTreeMap<i64, i64> = (0..300).map(|id| (id, id % 5)).collect();
    let want = |m: &BTreeMap<i64, i64>, r: (Bound<i64>, Bound<i64>)| -> Vec<(i64, i64)> {
        m.range(r).map(|(id, k)| (*id, *k)).collect()
    };
    // Longer than a run (64 rows), bounds of every kind, one row, none.
    let ranges = [
        (Included(10), Included(150)),
        (Excluded(100), Excluded(121)),
        (Unbounded, Included(5)),
        (Included(290), Unbounded),
        (Included(140), Excluded(141)),
        (Included(400), Unbounded),
        (Unbounded, Unbounded),
    ];
    let check = |e: &Arc<Engine>, m: &BTreeMap<i64, i64>| {
        for r in ranges {
            assert_eq!(scan_ids(&mut e.begin(), t, r), want(m, r), "{r:?}");
        }
    };
    // The first scans read the base and keep runs; the same scans again are answered by the
    // runs alone.
    check(&e, &model);
    let before = cache();
    check(&e, &model);
    assert_eq!(cache().misses, before.misses);
    assert!(cache().hits > before.hits);
    assert!(cache().bytes > 0 && cache().bytes <= cache().capacity);
    // A reader whose snapshot predates the next checkpoint.
    let mut old = e.begin();
    let old_model = model.clone();
    assert_eq!(
        scan_ids(&mut old, t, ranges[0]),
        want(&old_model, ranges[0])
    );
    // The checkpoint writes keys inside cached runs: an update and a delete.
    put(&e, t, 50, 99);
    model.insert(50, 99);
    delete(&e, t, 120);
    model.remove(&120);
    e.checkpoint().unwrap();
    check(&e, &model);
    for r in ranges {
        assert_eq!(scan_ids(&mut old, t, r), want(&old_model, r), "old {r:?}");
    }
    drop(old);
    // A row put back where cached runs (built just now, without it) say there is none.
    check(&e, &model);
    put(&e, t, 120, 7);
    model.insert(120, 7);
    e.checkpoint().unwrap();
    check(&e, &model);
    assert_eq!(k_of(&mut e.begin(), t, 120), 7);
    assert_eq!(contents(&e, t).len(), model.len());
}

#[test]
fn point_reads_of_rows_in_the_base_are_cached_and_never_older_or_newer_than_the_snapshot() {
    let base = Scratch::new("paged");
    let fs = SimFs::new();
    let (e, t) = in_the_base(&fs, &base, 40);
    let cache = || e.table_store_stats().unwrap().base.rows;
    let read = |id| k_of(&mut e.begin(), t, id);
    // Row 7 is in the base only: the first read misses and, the cache being empty, reads and
    // keeps the run from row 7 on, so the second read of 7 and a read of 8 are hits.
    let before = cache();
    assert_eq!(read(7), 2);
    assert_eq!(cache().hits, before.hits);
    assert_eq!(read(7), 2);
    assert_eq!(read(8), 3);
    assert_eq!(cache().hits, before.hits + 2);
    assert_eq!(read(6), 1);
    assert_eq!(cache().hits, before.hits + 2);
    assert!(cache().bytes > 0 && cache().bytes <= cache().capacity);
    // A reader whose snapshot predates the next checkpoint.
    let mut old = e.begin();
    assert_eq!(k_of(&mut old, t, 7), 2);
    // The checkpoint writes row 7 into the base (the delta no longer has it): the cached copy
    // is dropped, so a new reader reads the new value, and keeps it.
    put(&e, t, 7, 70);
    e.checkpoint().unwrap();
    assert_eq!(read(7), 70);
    let hits = cache().hits;
    assert_eq!(read(7), 70);
    assert_eq!(cache().hits, hits + 1);
    // Row 8 was not written: its copy from before the checkpoint still serves new readers.
    assert_eq!(read(8), 3);
    assert_eq!(cache().hits, hits + 2);
    // The old reader does not take the newer copy, and reads its snapshot's row.
    assert_eq!(k_of(&mut old, t, 7), 2);
    assert_eq!(k_of(&mut old, t, 8), 3);
    drop(old);
    // Deleted and checkpointed: gone for new readers, not served from the cache.
    delete(&e, t, 8);
    e.checkpoint().unwrap();
    assert!(e.begin().get(t, &[Value::Int(8)]).unwrap().is_none());
    assert_eq!(contents(&e, t).len(), 39);
}

#[test]
fn a_point_read_that_misses_reads_a_run_only_while_the_cache_could_hold_every_row() {
    let base = Scratch::new("paged");
    let fs = SimFs::new();
    // 12,000 rows, some 2.4 MB decoded: more than the 768 KiB a 1 MiB budget gives the
    // base's caches.
    let (e, _) = open_sim(&fs, options_with_budget(&base, 1 << 20)).unwrap();
    let t = setup(&e);
    for id in 0..12_000 {
        put(&e, t, id, id % 5);
        // No scheduler runs here: checkpoints keep the delta under its limit.
        if id % 2_000 == 1_999 {
            e.checkpoint().unwrap();
        }
    }
    e.checkpoint().unwrap();
    let cache = || e.table_store_stats().unwrap().base.rows;
    let read = |id| k_of(&mut e.begin(), t, id);
    // A first miss tells the cache what a row costs.
    assert_eq!(read(100), 0);
    let before = cache();
    assert!(before.capacity > 0 && before.capacity <= 768 << 10);
    // Row 5000 misses and is kept alone: row 5001, next to it, misses too (a run read from
    // 5000 on would have answered it). Row 5000 is then a hit.
    assert_eq!(read(5000), 0);
    assert_eq!(read(5001), 1);
    assert_eq!(cache().misses, before.misses + 2);
    assert_eq!(read(5000), 0);
    assert_eq!(cache().hits, before.hits + 1);
    assert_eq!(cache().misses, before.misses + 2);
}

/// ALTER TABLE `t` of [`setup`] into `new` (built from the current definition by `edit`), each
/// column from the same position unless `sources` says otherwise.
fn alter(
    e: &Engine,
    t: TableId,
    sql: &str,
    edit: impl FnOnce(&mut onelog_engine::catalog::TableDef),
) -> Result<(), EngineError> {
    let old = e.catalog().table(t).unwrap().clone();
    let mut new = (*old).clone();
    edit(&mut new);
    let sources = (0..new.columns.len()).map(ColumnSource::Old).collect();
    let plan = AlterPlan {
        sources,
        strict: true,
        auto_increment: None,
    };
    e.alter_table(&old, new, plan, sql).map(drop)
}

/// `k` becomes BIGINT NOT NULL (a copying ALTER: the stored values change type).
fn k_to_bigint(def: &mut onelog_engine::catalog::TableDef) {
    def.columns[1].ty = SqlType::BigInt { unsigned: false };
    def.columns[1].nullable = false;
}

/// Commits a table `d.u` with rows `0..n` and returns it.
fn other_table(e: &Arc<Engine>, n: i64) -> TableId {
    let spec = TableSpec {
        db: "d".into(),
        name: "u".into(),
        columns: vec![ColumnSpec::new("id", SqlType::BigInt { unsigned: false }).not_null()],
        primary_key: vec!["id".into()],
        indexes: vec![],
    };
    let u = e.create_table(spec, false, "CREATE TABLE u (...)").unwrap();
    for id in 0..n {
        let mut tx = e.begin();
        tx.insert(u, vec![Value::Int(id)]).unwrap();
        tx.commit().unwrap();
    }
    u
}

/// The ids in `d.u`.
fn ids_of_u(e: &Engine) -> Vec<i64> {
    let snap = e.snapshot();
    snap.dump()["d.u"]
        .iter()
        .map(|r| match r[0] {
            Value::Int(id) => id,
            ref v => panic!("{v:?}"),
        })
        .collect()
}

#[test]
fn add_and_drop_column_over_rows_in_the_base_rewrite_the_table_there_in_chunks() {
    let base = Scratch::new("paged");
    let fs = SimFs::new();
    // The new rows are built from the changes waiting in the delta too.
    let (e, t, table_bytes) = in_the_base_with_changes(&fs, &base);
    let mut expect = contents(&e, t);
    let checkpoints = e.table_store_stats().unwrap().checkpoints;
    let before = bytes_written(&e);
    e.add_column(
        "d",
        "t",
        ColumnSpec::new("extra", SqlType::Int { unsigned: false }),
        Value::Int(7),
        "ALTER TABLE t ADD extra INT DEFAULT 7",
    )
    .unwrap();
    // The new table went into the base at once (no checkpoint wrote it), in many 2 KiB
    // ingestions, and reads back as the old rows with the new column, every entry in place.
    assert_eq!(e.table_store_stats().unwrap().checkpoints, checkpoints);
    let rewrite_bytes = bytes_written(&e) - before;
    assert!(
        rewrite_bytes * 2 > table_bytes,
        "{rewrite_bytes} {table_bytes}"
    );
    for r in &mut expect {
        r.push(Value::Int(7));
    }
    assert_eq!(contents(&e, t), expect);
    // The next checkpoint writes no table (a rewrite into the delta would write it whole).
    let after = checkpoint_bytes(&e);
    // (It deletes the old storage id's records: keys only, less than half the table.)
    assert!(
        after * 2 < table_bytes,
        "{after} bytes, the table {table_bytes}"
    );
    // Later changes land over the rewritten rows; then the payload column goes.
    for id in (0..2000).step_by(7) {
        put(&e, t, id, -id);
    }
    let mut expect = contents(&e, t);
    e.drop_column("d", "t", "payload", "ALTER TABLE t DROP payload")
        .unwrap();
    let after = checkpoint_bytes(&e);
    assert!(
        after * 2 < table_bytes,
        "{after} bytes, the table {table_bytes}"
    );
    for r in &mut expect {
        r.remove(2);
    }
    assert_eq!(contents(&e, t), expect);
    drop(e);
    fs.crash_now();
    let fs = fs.reboot(5, true);
    let (e, report) = open_sim(&fs, small_chunks(&base)).unwrap();
    assert_eq!(report.unclaimed_records_removed, 0);
    assert_eq!(contents(&e, t), expect);
    // Checkpoints purged the old storage ids: each row and its one entry, once.
    e.checkpoint().unwrap();
    shut_down_and_reopen(e, &fs, &base, t, expect.len() * 2, &expect);
}

#[test]
fn a_crash_after_a_copying_alter_and_before_a_checkpoint_rewrites_it_again_at_open() {
    let base = Scratch::new("paged");
    let fs = SimFs::new();
    let (e, t) = in_the_base(&fs, &base, 500);
    put(&e, t, 4, 99);
    // The new primary key (k, id) does not ascend with the old one: the rows written are
    // counted for a collapsed key.
    alter(&e, t, "ALTER TABLE t MODIFY k BIGINT NOT NULL, ...", |d| {
        k_to_bigint(d);
        d.primary_key = vec![1, 0];
    })
    .unwrap();
    let mut tx = e.begin();
    let mut r = row(&e, t, 5000, 98);
    r[1] = Value::Int(98);
    tx.insert(t, r).unwrap();
    tx.commit().unwrap();
    let expect = contents(&e, t);
    assert_eq!(expect.len(), 501);
    assert!(
        expect
            .windows(2)
            .all(|w| id_and_k(&w[0]).1 <= id_and_k(&w[1]).1),
        "rows in the new key's order"
    );
    // The DDL record is durable; no checkpoint came after it.
    drop(e);
    fs.crash_now();
    let fs = fs.reboot(11, true);
    let (e, report) = open_sim(&fs, small_chunks(&base)).unwrap();
    // The rebuild from before the crash was removed and written again by the replay.
    assert_eq!(report.unclaimed_records_removed, 500 * 2);
    assert_eq!(report.records_applied, 3);
    assert_eq!(contents(&e, t), expect);
    e.checkpoint().unwrap();
    shut_down_and_reopen(e, &fs, &base, t, 501 * 2, &expect);
}

#[test]
fn a_rewrite_whose_ddl_was_lost_leaves_nothing_a_later_table_reads() {
    let base = Scratch::new("paged");
    let fs = SimFs::new();
    let (e, t) = in_the_base(&fs, &base, 300);
    // The rows are written into the base, then the DDL record's sync fails: not
    // acknowledged, and lost with the power.
    fs.fail_fsyncs(true);
    let err = e.add_column(
        "d",
        "t",
        ColumnSpec::new("extra", SqlType::Int { unsigned: false }),
        Value::Null,
        "ALTER TABLE t ADD extra INT",
    );
    assert!(err.is_err());
    drop(e);
    let fs = fs.reboot(1, false);
    let (e, report) = open_sim(&fs, small_chunks(&base)).unwrap();
    assert_eq!(report.unclaimed_records_removed, 300 * 2);
    assert_eq!(e.catalog().table(t).unwrap().columns.len(), 3);
    // The next table gets the storage id the lost rewrite wrote under: it reads its own rows.
    let u = other_table(&e, 4);
    e.checkpoint().unwrap();
    assert_eq!(ids_of_u(&e), [0, 1, 2, 3]);
    assert_eq!(e.snapshot().root().row_count(u), 4);
    let expect = contents(&e, t);
    e.shutdown().unwrap();
    drop(e);
    assert_eq!(base_records(&base.0), 300 * 2 + 4);
    let (e, _) = open_sim(&fs, small_chunks(&base)).unwrap();
    assert_eq!(contents(&e, t), expect);
}

#[test]
fn a_copying_alter_refused_in_the_base_leaves_nothing_a_later_table_reads() {
    let base = Scratch::new("paged");
    let fs = SimFs::new();
    let (e, t) = in_the_base(&fs, &base, 300);
    put_raw(&e, t, 7, Some(7), "p200").unwrap();
    put_raw(&e, t, 200, Some(200), "p200").unwrap();
    let end = e.log().end_lsn();
    // A unique key over a repeated payload: found over the entries written into the base.
    let err = alter(
        &e,
        t,
        "ALTER TABLE t MODIFY k BIGINT NOT NULL, ADD UNIQUE",
        |d| {
            k_to_bigint(d);
            d.add_index(&IndexSpec::new("u_payload", &["payload"], true))
                .unwrap();
        },
    )
    .err()
    .unwrap();
    assert!(
        matches!(&err, EngineError::DuplicateKey { entry, key } if entry == "p200" && key == "u_payload"),
        "{err:?}"
    );
    // A primary key over k alone collapses rows: the in-memory copy names the duplicate.
    let err = alter(&e, t, "ALTER TABLE t ..., PRIMARY KEY (k)", |d| {
        k_to_bigint(d);
        d.primary_key = vec![1];
    })
    .err()
    .unwrap();
    assert!(
        matches!(&err, EngineError::DuplicateKey { key, .. } if key == "PRIMARY"),
        "{err:?}"
    );
    assert_eq!(e.log().end_lsn(), end, "nothing logged");
    assert_eq!(e.catalog().table(t).unwrap().indexes.len(), 1);
    // Tables created next get storage ids past the ones the refused rewrites wrote under.
    let u = other_table(&e, 3);
    e.checkpoint().unwrap();
    assert_eq!(ids_of_u(&e), [0, 1, 2]);
    assert_eq!(e.snapshot().root().row_count(u), 3);
    // Checkpoints purged what the refused rewrites wrote.
    e.checkpoint().unwrap();
    let expect = contents(&e, t);
    shut_down_and_reopen(e, &fs, &base, t, 300 * 2 + 3, &expect);
}

#[test]
fn a_table_without_primary_key_is_rewritten_in_the_base_with_its_hidden_ids() {
    let base = Scratch::new("paged");
    let fs = SimFs::new();
    let (e, t) = in_the_base(&fs, &base, 400);
    // DROP PRIMARY KEY: rows are keyed by hidden ids from now on.
    alter(&e, t, "ALTER TABLE t DROP PRIMARY KEY", |d| {
        d.primary_key.clear()
    })
    .unwrap();
    let mut expect = contents(&e, t);
    e.add_column(
        "d",
        "t",
        ColumnSpec::new("extra", SqlType::Int { unsigned: false }),
        Value::Int(3),
        "ALTER TABLE t ADD extra INT DEFAULT 3",
    )
    .unwrap();
    // New rows get hidden ids after the rewritten ones.
    let mut tx = e.begin();
    let mut r = row(&e, t, 9999, 1);
    r[3] = Value::Int(3);
    tx.insert(t, r.clone()).unwrap();
    tx.commit().unwrap();
    for x in &mut expect {
        x.push(Value::Int(3));
    }
    let mut got = contents(&e, t);
    assert_eq!(got.len(), 401);
    assert!(got.contains(&r));
    got.retain(|x| *x != r);
    let sorted = |mut v: Vec<Vec<Value>>| {
        v.sort_by_key(|x| id_and_k(x));
        v
    };
    assert_eq!(sorted(got), sorted(expect));
    let expect = contents(&e, t);
    e.checkpoint().unwrap();
    shut_down_and_reopen(e, &fs, &base, t, 401 * 2, &expect);
}

#[test]
fn a_copying_alter_in_the_base_sets_auto_increment_as_the_in_memory_copy_does() {
    let base = Scratch::new("paged");
    let fs = SimFs::new();
    let (e, t) = in_the_base(&fs, &base, 300);
    let counter = |e: &Engine| e.snapshot().root().table(t).unwrap().auto_inc_next;
    let alter_to = |e: &Engine, bigint: bool, auto_increment: Option<u64>| {
        let old = e.catalog().table(t).unwrap().clone();
        let mut new = (*old).clone();
        new.columns[0].auto_increment = true;
        new.auto_increment = Some(0);
        if bigint {
            k_to_bigint(&mut new);
        } else {
            new.columns[1].ty = SqlType::Int { unsigned: false };
        }
        let plan = AlterPlan {
            sources: (0..new.columns.len()).map(ColumnSource::Old).collect(),
            strict: true,
            auto_increment,
        };
        e.alter_table(
            &old,
            new,
            plan,
            "ALTER TABLE t MODIFY ..., AUTO_INCREMENT=n",
        )
        .unwrap();
    };
    // MariaDB's rule: N, or past the largest value when N is not above it.
    alter_to(&e, true, Some(1000));
    assert_eq!(counter(&e), 1000);
    alter_to(&e, false, None);
    assert_eq!(counter(&e), 1000);
    alter_to(&e, true, Some(5));
    assert_eq!(counter(&e), 300);
    let expect = contents(&e, t);
    assert_eq!(expect.len(), 300);
    e.checkpoint().unwrap();
    shut_down_and_reopen(e, &fs, &base, t, 300 * 2, &expect);
}

/// Each store's engine with `d.t` of 600 rows (`k` = id % 7), for the online CREATE INDEX
/// tests: the paged one's rows checkpointed into the base, then 12 updates and 6 deletes in
/// its delta; the in-memory one's all in memory.
fn online_index_engine(fs: &Arc<SimFs>, base: &Scratch, paged: bool) -> (Arc<Engine>, TableId) {
    let (e, _) = open_sim(fs, online_index_options(base, paged)).unwrap();
    let t = setup(&e);
    for id in 0..600 {
        put_raw(&e, t, id, Some(id % 7), &format!("p{id}")).unwrap();
    }
    if paged {
        e.checkpoint().unwrap();
        for id in (0..600).step_by(50) {
            put_raw(&e, t, id, Some(100 + id), &format!("q{id}")).unwrap();
        }
        for id in (25..600).step_by(100) {
            delete(&e, t, id);
        }
    }
    (e, t)
}

/// The data records (rows and index entries) in the base once `e` has shut down (its last
/// checkpoint written).
fn records_at_shutdown(e: Arc<Engine>, base: &Scratch) -> usize {
    e.shutdown().unwrap();
    drop(e);
    base_records(&base.0)
}

/// [`small_chunks`], or the same log settings with the in-memory store.
fn online_index_options(base: &Scratch, paged: bool) -> EngineOptions {
    let mut o = small_chunks(base);
    if !paged {
        o.table_store = TableStore::Memory;
    }
    o
}

/// The commits [`online_index_engine`]'s tests make while an index is built: a row's
/// payload changed, a row's `k` changed (its payload entry stays and must point at the new
/// row), rows deleted (one of them changed in the delta before), rows inserted (one deleted
/// again), a row deleted and inserted again with another payload.
fn commit_during_build(e: &Arc<Engine>, t: TableId) {
    put_raw(e, t, 3, Some(3), "changed 3").unwrap();
    put_raw(e, t, 4, Some(-4), "p4").unwrap();
    delete(e, t, 11);
    delete(e, t, 50);
    for id in 1000..1005 {
        put_raw(e, t, id, Some(id % 7), &format!("new {id}")).unwrap();
    }
    delete(e, t, 1002);
    delete(e, t, 12);
    put_raw(e, t, 12, None, "again 12").unwrap();
}

#[test]
fn create_index_builds_while_commits_go_on_and_brings_them_into_the_index() {
    for paged in [false, true] {
        let base = Scratch::new("paged");
        let fs = SimFs::new();
        let (e, t) = online_index_engine(&fs, &base, paged);
        let mut during = 0;
        let spec = IndexSpec::new("by_payload", &["payload"], false);
        let sql = "CREATE INDEX by_payload ON t (payload)";
        e.create_index_with("d", "t", spec, sql, || {
            commit_during_build(&e, t);
            during = 1;
            Ok(())
        })
        .unwrap();
        assert_eq!(during, 1);
        // Every row has its entry in both indexes, keyed by its values (the new index's
        // entries of the rows committed during the build included), and nothing more.
        let expect = contents(&e, t);
        let rows = if paged { 600 - 6 } else { 600 };
        // Two deleted, five inserted and one of them deleted again.
        assert_eq!(expect.len(), rows + 2, "paged: {paged}");
        let def = e.catalog().table(t).unwrap().clone();
        let ix = def.index("by_payload").unwrap();
        let root = e.snapshot().root().clone();
        let payloads: Vec<Vec<u8>> = root
            .scan_index(t, ix.id, &(Bound::Unbounded, Bound::Unbounded))
            .map(|r| r.unwrap().0[..].to_vec())
            .collect();
        let has = |p: &str| {
            let mut k = Vec::new();
            index_key(
                &def,
                ix,
                &[Value::Null, Value::Null, Value::bytes(p.as_bytes())],
                &mut k,
            );
            payloads.iter().any(|e| e.starts_with(&k))
        };
        assert!(has("changed 3") && has("new 1004") && has("again 12"));
        assert!(!has("p3") && !has("new 1002") && !has("p12") && !has("p11"));
        // The DDL was logged after those commits: a crash and a replay of it builds the same
        // entries from the rows replayed before it.
        drop((root, def));
        drop(e);
        fs.crash_now();
        let fs = fs.reboot(3, true);
        let (e, _) = open_sim(&fs, online_index_options(&base, paged)).unwrap();
        assert_eq!(contents(&e, t), expect, "paged: {paged}");
        if paged {
            // Once checkpointed, the base holds each row and one entry per row per index.
            assert_eq!(records_at_shutdown(e, &base), expect.len() * 3);
        }
    }
}

#[test]
fn a_value_committed_during_a_unique_build_that_repeats_another_refuses_it() {
    for paged in [false, true] {
        let base = Scratch::new("paged");
        let fs = SimFs::new();
        let (e, t) = online_index_engine(&fs, &base, paged);
        let unique = |during: &dyn Fn()| {
            let spec = IndexSpec::new("u_payload", &["payload"], true);
            let sql = "CREATE UNIQUE INDEX u_payload ON t (payload)";
            e.create_index_with("d", "t", spec, sql, || {
                during();
                Ok(())
            })
        };
        // A row changed to another's value, and two new rows with one value.
        let err = unique(&|| put_raw(&e, t, 5, Some(5), "p6").unwrap()).unwrap_err();
        assert!(
            matches!(&err, EngineError::DuplicateKey { entry, key } if entry == "p6" && key == "u_payload"),
            "{err:?}"
        );
        // The repeated value stays (its commit stands), so the next build fails before the
        // gate, over the rows it builds from.
        let err = unique(&|| panic!("built over a repeated value")).unwrap_err();
        assert!(matches!(&err, EngineError::DuplicateKey { entry, .. } if entry == "p6"));
        put_raw(&e, t, 5, Some(5), "p5").unwrap();
        let err = unique(&|| {
            put_raw(&e, t, 2000, None, "twice").unwrap();
            put_raw(&e, t, 2001, None, "twice").unwrap();
        })
        .unwrap_err();
        assert!(
            matches!(&err, EngineError::DuplicateKey { entry, .. } if entry == "twice"),
            "{err:?}"
        );
        assert_eq!(e.catalog().table(t).unwrap().indexes.len(), 1);
        // Values that move from one row to another during the build are no duplicates.
        delete(&e, t, 2000);
        unique(&|| {
            put_raw(&e, t, 2001, None, "once").unwrap();
            put_raw(&e, t, 2002, None, "twice").unwrap();
            put_raw(&e, t, 7, Some(7), "p7 moved").unwrap();
            put_raw(&e, t, 8, Some(8), "p7").unwrap();
        })
        .unwrap();
        let rows = contents(&e, t);
        assert!(rows.iter().any(|r| r[2] == Value::bytes(b"p7")));
        // It is enforced from then on.
        let err = put_raw(&e, t, 3000, None, "p7").unwrap_err();
        assert!(matches!(err, EngineError::DuplicateKey { .. }), "{err:?}");
        if paged {
            // The refused builds left no entry behind: rows, by_k and u_payload entries only.
            assert_eq!(records_at_shutdown(e, &base), rows.len() * 3);
        }
    }
}

#[test]
fn a_ddl_on_the_table_during_the_build_makes_create_index_build_again_under_the_gate() {
    for paged in [false, true] {
        let base = Scratch::new("paged");
        let fs = SimFs::new();
        let (e, t) = online_index_engine(&fs, &base, paged);
        let spec = IndexSpec::new("by_payload", &["payload"], false);
        let sql = "CREATE INDEX by_payload ON t (payload)";
        e.create_index_with("d", "t", spec, sql, || {
            commit_during_build(&e, t);
            e.drop_index("d", "t", "by_k", "DROP INDEX by_k ON t")
                .unwrap();
            put_raw(&e, t, 1, Some(1), "after the drop").unwrap();
            Ok(())
        })
        .unwrap();
        let def = e.catalog().table(t).unwrap().clone();
        let names: Vec<&str> = def.indexes.iter().map(|i| i.name.as_str()).collect();
        assert_eq!(names, ["by_payload"]);
        let expect = contents(&e, t);
        assert!(expect
            .iter()
            .any(|r| r[2] == Value::bytes(b"after the drop")));
        if paged {
            // The entries built before the drop were deleted: rows and by_payload only.
            assert_eq!(records_at_shutdown(e, &base), expect.len() * 2);
        }
    }
}
