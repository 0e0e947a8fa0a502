//! Shared by the engine's crash tests (`engine_crash_recovery.rs`, `file_mode_crash.rs`) and
//! `engine_purge.rs`: the counter table they use, the transaction step they commit, and the
//! replay of a log from LSN 0 into an empty root that recovered engines are compared with;
//! by the tests on the simulated file system: [`open_sim`]; and by the paged store's tests
//! (`base_store.rs`, `layered_root.rs`, `paged_engine.rs`): [`Scratch`], the real directory
//! its base needs.

#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use onelog_binlog::{Gtid, Value};
use onelog_engine::apply::apply_record;
use onelog_engine::store::Root;
use onelog_engine::{
    ColumnSpec, Engine, EngineError, EngineOptions, RecoveryReport, SqlType, TableId, TableSpec,
};
use onelog_log::{FileSystem, ReadStart, ReaderOptions, RecordKind, SimFs};

/// `d.t (id BIGINT PK, payload VARCHAR(200))` plus a counter row id 0 holding the number of
/// committed transactions in `payload`.
pub fn setup(e: &Arc<Engine>) -> TableId {
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
    let t = e.create_table(spec, false, "CREATE TABLE t (...)").unwrap();
    let mut tx = e.begin();
    tx.insert(t, vec![Value::Int(0), Value::bytes(b"0")])
        .unwrap();
    tx.commit().unwrap();
    t
}

/// Transaction `i`: inserts row `i` (payload `row i` and `filler` bytes of `x`) and sets the
/// counter to `i`.
pub fn commit_step(e: &Arc<Engine>, t: TableId, i: i64, filler: usize) -> Result<(), EngineError> {
    let mut tx = e.begin();
    tx.insert(
        t,
        vec![
            Value::Int(i),
            Value::Bytes(
                format!("row {i} {}", "x".repeat(filler))
                    .into_bytes()
                    .into(),
            ),
        ],
    )?;
    tx.update(
        t,
        &[Value::Int(0)],
        vec![Value::Int(0), Value::bytes(i.to_string().into_bytes())],
    )?;
    tx.commit().map(|_| ())
}

/// The log's Transaction/DDL records from LSN 0, replayed into an empty root, and their GTIDs.
pub fn replay_from_empty(e: &Engine) -> (Root, Vec<Gtid>) {
    let mut root = Root::empty();
    let mut gtids = Vec::new();
    let opts = ReaderOptions {
        include_non_durable: true,
        include_state_records: false,
    };
    let mut r = e.log().reader(ReadStart::Lsn(0), opts).unwrap();
    while let Some(rec) = r.next().unwrap() {
        assert_ne!(
            rec.kind,
            RecordKind::CommitMark,
            "readers never yield CommitMarks"
        );
        if rec.kind != RecordKind::GtidState {
            gtids.extend(rec.gtid);
            apply_record(
                &mut root,
                &rec.events,
                &rec.aux,
                rec.gtid,
                rec.lsn,
                rec.end_lsn,
            )
            .unwrap();
        }
    }
    (root, gtids)
}

/// Opens an engine on the simulated file system `fs`.
pub fn open_sim(
    fs: &Arc<SimFs>,
    o: EngineOptions,
) -> Result<(Arc<Engine>, RecoveryReport), EngineError> {
    let fs: Arc<dyn FileSystem> = fs.clone();
    Engine::open(fs, o)
}

/// A fresh directory under the system's temporary one, removed when dropped (the paged
/// store's base uses real files, also under the simulated file system).
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(what: &str) -> Scratch {
        static N: AtomicU64 = AtomicU64::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("onelog-{what}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
