//! Tables without a primary key (InnoDB's hidden row id): identical rows are distinct rows,
//! UPDATE/DELETE name a row by its whole value (the first identical row is taken), secondary
//! and unique indexes follow, savepoints rebuild the own state, and the rows survive power
//! loss (log replay), a checkpoint, and a replay of the log from empty.

mod common;

use std::sync::Arc;
use std::time::Duration;

use onelog_binlog::Value;
use onelog_engine::{
    ColumnSpec, Engine, EngineOptions, IndexRef, IndexSpec, KeyRange, SqlType, TableId, TableSpec,
};
use onelog_log::{FileSystem, SimFs};

use common::replay_from_empty;

fn options() -> EngineOptions {
    let mut o = EngineOptions::new("/data");
    o.log.segment_size = 256 << 10;
    o.background_checkpoints = false;
    o.lock_wait_timeout = Duration::from_secs(30);
    o
}

fn open(fs: &Arc<SimFs>) -> Arc<Engine> {
    let fs: Arc<dyn FileSystem> = fs.clone();
    Engine::open(fs, options()).unwrap().0
}

fn row(a: i64, b: Option<&str>) -> Vec<Value> {
    vec![
        Value::Int(a),
        b.map_or(Value::Null, |s| Value::bytes(s.as_bytes())),
    ]
}

/// `d.t (a INT NOT NULL, b VARCHAR(10), KEY(b))` without a primary key, and
/// `d.u (a INT, UNIQUE(a))` (a nullable unique key: still no clustered key).
fn setup(e: &Arc<Engine>) -> (TableId, TableId) {
    e.create_database("d", false, "CREATE DATABASE d").unwrap();
    let spec = TableSpec {
        db: "d".into(),
        name: "t".into(),
        columns: vec![
            ColumnSpec::new("a", SqlType::Int { unsigned: false }).not_null(),
            ColumnSpec::new("b", SqlType::VarChar(10)),
        ],
        primary_key: vec![],
        indexes: vec![IndexSpec::new("b", &["b"], false)],
    };
    let t = e.create_table(spec, false, "CREATE TABLE t (...)").unwrap();
    let spec = TableSpec {
        db: "d".into(),
        name: "u".into(),
        columns: vec![ColumnSpec::new("a", SqlType::Int { unsigned: false })],
        primary_key: vec![],
        indexes: vec![IndexSpec::new("a", &["a"], true)],
    };
    let u = e.create_table(spec, false, "CREATE TABLE u (...)").unwrap();
    (t, u)
}

fn rows(e: &Engine, name: &str) -> Vec<Vec<Value>> {
    e.snapshot().dump()[name].clone()
}

/// Duplicates, an update and a delete of one of two identical rows, a rollback to a
/// savepoint; the expected rows of `d.t` in key (value) order.
fn workload(e: &Arc<Engine>, t: TableId) -> Vec<Vec<Value>> {
    let mut tx = e.begin();
    for r in [
        row(1, Some("x")),
        row(1, Some("x")),
        row(1, Some("x")),
        row(2, None),
        row(2, None),
    ] {
        tx.insert(t, r).unwrap();
    }
    tx.commit().unwrap();
    let mut tx = e.begin();
    // One of three identical rows changes, one of two NULL rows goes.
    assert!(tx.update(t, &row(1, Some("x")), row(3, Some("y"))).unwrap());
    assert!(tx.delete(t, &row(2, None)).unwrap());
    // No such row.
    assert!(!tx.delete(t, &row(9, None)).unwrap());
    tx.savepoint("s");
    assert!(tx.delete(t, &row(1, Some("x"))).unwrap());
    assert!(tx.delete(t, &row(1, Some("x"))).unwrap());
    assert!(!tx.delete(t, &row(1, Some("x"))).unwrap());
    tx.rollback_to_savepoint("s").unwrap();
    // After the rollback both remaining identical rows are back and visible to the own reads.
    assert_eq!(
        tx.get(t, &row(1, Some("x"))).unwrap(),
        Some(row(1, Some("x")))
    );
    let own = tx
        .scan(t, IndexRef::Primary, KeyRange::all(), None)
        .unwrap();
    assert_eq!(own.len(), 4);
    tx.commit().unwrap();
    vec![
        row(1, Some("x")),
        row(1, Some("x")),
        row(2, None),
        row(3, Some("y")),
    ]
}

#[test]
fn identical_rows_are_kept_changed_and_deleted_one_at_a_time() {
    let fs = SimFs::new();
    let e = open(&fs);
    let (t, _) = setup(&e);
    let expect = workload(&e, t);
    assert_eq!(rows(&e, "d.t"), expect);
    // The secondary index holds one entry per row, duplicates included.
    let mut tx = e.begin();
    let by_b = tx
        .scan(
            t,
            IndexRef::Secondary("b".into()),
            KeyRange::prefix(vec![Value::bytes(b"x")]),
            None,
        )
        .unwrap();
    assert_eq!(by_b, vec![row(1, Some("x")), row(1, Some("x"))]);
    // An own insert of a row identical to committed ones is one more row; deleting "it"
    // deletes one of the three.
    tx.insert(t, row(1, Some("x"))).unwrap();
    assert!(tx.delete(t, &row(1, Some("x"))).unwrap());
    let all = tx
        .scan(t, IndexRef::Primary, KeyRange::all(), None)
        .unwrap();
    assert_eq!(all, expect);
    tx.rollback();
    // Power loss: the log replays the same rows; a replay from empty agrees.
    let fs2 = fs.reboot(1, false);
    let e2 = open(&fs2);
    assert_eq!(rows(&e2, "d.t"), expect);
    assert_eq!(replay_from_empty(&e2).0.dump(), e2.snapshot().dump());
    // A checkpoint, then more changes on the reloaded rows (new ids never collide).
    e2.shutdown().unwrap();
    let e3 = open(&fs2);
    assert_eq!(rows(&e3, "d.t"), expect);
    let mut tx = e3.begin();
    tx.insert(t, row(1, Some("x"))).unwrap();
    assert!(tx.update(t, &row(2, None), row(1, Some("x"))).unwrap());
    tx.commit().unwrap();
    let expect = vec![
        row(1, Some("x")),
        row(1, Some("x")),
        row(1, Some("x")),
        row(1, Some("x")),
        row(3, Some("y")),
    ];
    assert_eq!(rows(&e3, "d.t"), expect);
    let fs3 = fs2.reboot(1, false);
    let e4 = open(&fs3);
    assert_eq!(rows(&e4, "d.t"), expect);
}

#[test]
fn unique_keys_of_a_table_without_primary_key_still_conflict() {
    let fs = SimFs::new();
    let e = open(&fs);
    let (_, u) = setup(&e);
    let mut tx = e.begin();
    tx.insert(u, vec![Value::Int(1)]).unwrap();
    tx.insert(u, vec![Value::Null]).unwrap();
    tx.insert(u, vec![Value::Null]).unwrap();
    assert_eq!(tx.insert(u, vec![Value::Int(1)]).unwrap_err().code(), 1062);
    tx.commit().unwrap();
    let mut tx = e.begin();
    assert_eq!(tx.insert(u, vec![Value::Int(1)]).unwrap_err().code(), 1062);
    assert!(tx.update(u, &[Value::Null], vec![Value::Int(2)]).unwrap());
    assert_eq!(
        tx.update(u, &[Value::Null], vec![Value::Int(2)])
            .unwrap_err()
            .code(),
        1062
    );
    tx.commit().unwrap();
    assert_eq!(
        rows(&e, "d.u"),
        vec![vec![Value::Null], vec![Value::Int(1)], vec![Value::Int(2)]]
    );
}

#[test]
fn concurrent_deletes_of_identical_rows_each_take_one() {
    let fs = SimFs::new();
    let e = open(&fs);
    let (t, _) = setup(&e);
    let mut tx = e.begin();
    tx.insert(t, row(5, None)).unwrap();
    tx.insert(t, row(5, None)).unwrap();
    tx.commit().unwrap();
    let mut a = e.begin();
    assert!(a.delete(t, &row(5, None)).unwrap());
    let e2 = e.clone();
    let b = std::thread::spawn(move || {
        let mut b = e2.begin();
        // Waits for `a`'s lock on the first row, then takes the other one.
        let deleted = b.delete(t, &row(5, None)).unwrap();
        b.commit().unwrap();
        deleted
    });
    std::thread::sleep(Duration::from_millis(50));
    a.commit().unwrap();
    assert!(b.join().unwrap());
    assert_eq!(rows(&e, "d.t"), Vec::<Vec<Value>>::new());
}

#[test]
fn create_table_select_is_one_group_that_survives_recovery() {
    use onelog_engine::{Duplicates, SelectOutcome, TableOptions};
    let fs = SimFs::new();
    let e = open(&fs);
    setup(&e);
    let spec = |name: &str, pk: bool| TableSpec {
        db: "d".into(),
        name: name.into(),
        columns: vec![
            ColumnSpec::new("a", SqlType::Int { unsigned: false }).not_null(),
            ColumnSpec::new("b", SqlType::VarChar(10)),
        ],
        primary_key: if pk { vec!["a".into()] } else { vec![] },
        indexes: vec![],
    };
    let input = vec![row(2, Some("x")), row(1, None), row(2, Some("y"))];
    let records = |e: &Engine| replay_from_empty(e).1.len();
    let before = records(&e);
    // A duplicate primary key: nothing created, nothing logged.
    let err = e
        .create_table_select(
            (spec("c", true), TableOptions::default()),
            input.clone(),
            Duplicates::Error,
            false,
            "CREATE TABLE `c` (...)",
        )
        .unwrap_err();
    assert_eq!(err.code(), 1062);
    assert!(e.catalog().table_by_name("d", "c").is_none());
    assert_eq!(records(&e), before);
    // IGNORE keeps the first, REPLACE the last of the duplicates.
    let got = e
        .create_table_select(
            (spec("ci", true), TableOptions::default()),
            input.clone(),
            Duplicates::Ignore,
            false,
            "CREATE TABLE `ci` (...)",
        )
        .unwrap();
    assert_eq!(
        got,
        Some(SelectOutcome {
            rows: 2,
            duplicates: 1,
            skipped: vec!["Duplicate entry '2' for key 'PRIMARY'".into()],
        })
    );
    e.create_table_select(
        (spec("cr", true), TableOptions::default()),
        input.clone(),
        Duplicates::Replace,
        false,
        "CREATE TABLE `cr` (...)",
    )
    .unwrap();
    // Without a primary key every row stays; IF NOT EXISTS on it does nothing.
    e.create_table_select(
        (spec("cn", false), TableOptions::default()),
        input.clone(),
        Duplicates::Error,
        false,
        "CREATE TABLE `cn` (...)",
    )
    .unwrap();
    let again = e.create_table_select(
        (spec("cn", false), TableOptions::default()),
        input.clone(),
        Duplicates::Error,
        true,
        "CREATE TABLE `cn` (...)",
    );
    assert_eq!(again.unwrap(), None);
    assert_eq!(records(&e), before + 3);
    let check = |e: &Engine| {
        assert_eq!(rows(e, "d.ci"), vec![row(1, None), row(2, Some("x"))]);
        assert_eq!(rows(e, "d.cr"), vec![row(1, None), row(2, Some("y"))]);
        assert_eq!(
            rows(e, "d.cn"),
            vec![row(1, None), row(2, Some("x")), row(2, Some("y"))]
        );
    };
    check(&e);
    // Each is one DDL group: GTID, Query, Table_map, Write_rows, Xid.
    let fs2 = fs.reboot(1, false);
    let e2 = open(&fs2);
    check(&e2);
    assert_eq!(replay_from_empty(&e2).0.dump(), e2.snapshot().dump());
    e2.shutdown().unwrap();
    let e3 = open(&fs2);
    check(&e3);
}
