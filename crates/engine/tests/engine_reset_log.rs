//! `Engine::reset_log` (RESET MASTER): the binlog restarts at `binlog-000001.olog` with an
//! empty GTID state while every table keeps its rows, after a clean reopen, after a power
//! loss, and at every reset crash point.

use std::sync::Arc;
use std::time::Duration;

use onelog_binlog::Value;
use onelog_engine::{ColumnSpec, Engine, EngineOptions, SqlType, TableId, TableSpec};
use onelog_log::segment::{RESET_AFTER_NEW_SEGMENT, RESET_AFTER_REMOVE};
use onelog_log::{FileSystem, SimFs};

fn options() -> EngineOptions {
    let mut o = EngineOptions::new("/data");
    o.log.segment_size = 64 << 10;
    o.background_checkpoints = false;
    o.lock_wait_timeout = Duration::from_secs(30);
    o
}

fn open(fs: &Arc<SimFs>) -> Arc<Engine> {
    let fs: Arc<dyn FileSystem> = fs.clone();
    Engine::open(fs, options()).unwrap().0
}

fn setup(e: &Arc<Engine>) -> TableId {
    e.create_database("d", false, "CREATE DATABASE d").unwrap();
    let spec = TableSpec {
        db: "d".into(),
        name: "t".into(),
        columns: vec![
            ColumnSpec::new("id", SqlType::BigInt { unsigned: false }).not_null(),
            ColumnSpec::new("payload", SqlType::VarChar(200)),
        ],
        primary_key: vec!["id".into()],
        indexes: vec![],
    };
    e.create_table(spec, false, "CREATE TABLE t (...)").unwrap()
}

/// Inserts row `i`; returns the GTID sequence number it got.
fn insert(e: &Arc<Engine>, t: TableId, i: i64) -> u64 {
    let mut tx = e.begin();
    tx.insert(
        t,
        vec![
            Value::Int(i),
            Value::bytes(format!("row {i} {}", "x".repeat(150)).into_bytes()),
        ],
    )
    .unwrap();
    tx.commit().unwrap().unwrap().gtid.seq_no
}

fn ids(e: &Engine) -> Vec<Value> {
    e.snapshot().dump()["d.t"]
        .iter()
        .map(|r| r[0].clone())
        .collect()
}

fn filled(fs: &Arc<SimFs>) -> (Arc<Engine>, TableId) {
    let e = open(fs);
    let t = setup(&e);
    for i in 1..=500 {
        insert(&e, t, i);
    }
    assert!(e.log().segments().len() > 1);
    (e, t)
}

fn expect_ids(n: i64) -> Vec<Value> {
    (1..=n).map(Value::Int).collect()
}

#[test]
fn reset_log_keeps_the_tables_and_restarts_the_gtids() {
    let fs = SimFs::new();
    let (e, t) = filled(&fs);
    e.reset_log().unwrap();
    assert_eq!(e.log().gtid_state().pos().to_string(), "");
    assert!(e.gtid_state().is_empty());
    let segs = e.log().segments();
    assert_eq!(segs.len(), 1);
    assert!(segs[0].path.ends_with("binlog-000001.olog"));
    assert_eq!(ids(&e), expect_ids(500));
    assert_eq!(insert(&e, t, 501), 1);
    e.shutdown().unwrap();
    drop(e);
    // Clean reopen.
    let e2 = open(&fs);
    assert_eq!(e2.log().gtid_state().pos().to_string(), "0-1-1");
    assert_eq!(ids(&e2), expect_ids(501));
    assert_eq!(insert(&e2, t, 502), 2);
}

#[test]
fn reset_log_survives_power_loss() {
    for (seed, tear) in [(1u64, false), (2, true), (3, true)] {
        let fs = SimFs::new();
        let (e, t) = filled(&fs);
        e.reset_log().unwrap();
        let fs2 = fs.reboot(seed, tear);
        drop(e);
        let e2 = open(&fs2);
        assert_eq!(e2.log().gtid_state().pos().to_string(), "", "seed {seed}");
        assert_eq!(ids(&e2), expect_ids(500), "seed {seed}");
        assert_eq!(insert(&e2, t, 501), 1, "seed {seed}");
    }
}

#[test]
fn power_loss_at_a_reset_crash_point_keeps_the_tables() {
    for point in [RESET_AFTER_NEW_SEGMENT, RESET_AFTER_REMOVE] {
        for (seed, tear) in [(5u64, false), (6, true)] {
            let fs = SimFs::new();
            let (e, t) = filled(&fs);
            let before = e.log().gtid_state().pos().to_string();
            fs.arm_crash_point(point, 1);
            assert!(e.reset_log().is_err());
            let fs2 = fs.reboot(seed, tear);
            drop(e);
            let e2 = open(&fs2);
            let ctx = format!("{point} seed {seed}");
            let pos = e2.log().gtid_state().pos().to_string();
            assert!(pos.is_empty() || pos == before, "{ctx}: {pos}");
            assert_eq!(ids(&e2), expect_ids(500), "{ctx}");
            let next = insert(&e2, t, 501);
            assert_eq!(next, if pos.is_empty() { 1 } else { 503 }, "{ctx}");
        }
    }
}
