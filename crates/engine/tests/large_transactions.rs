//! Large transactions (issue 14 part 3): a transaction whose binlog event cache spills to a
//! temporary file commits by streaming the cache, and its record holds exactly the events of
//! the same transaction kept in memory; recovery replays it; 1197 past the maximum leaves the
//! transaction usable; the cache counters move.

use std::sync::Arc;

use onelog_binlog::Value;
use onelog_engine::apply::{decode_record, DecodedBody};
use onelog_engine::{ColumnSpec, CommitOrigin, Engine, EngineOptions, SqlType, TableId, TableSpec};
use onelog_log::{FileSystem, ReadStart, ReaderOptions, Record, SimFs};

fn options() -> EngineOptions {
    let mut o = EngineOptions::new("/data");
    o.log.segment_size = 4 << 20;
    o.background_checkpoints = false;
    o
}

fn open(fs: &Arc<SimFs>) -> Arc<Engine> {
    let fs: Arc<dyn FileSystem> = fs.clone();
    Engine::open(fs, options()).unwrap().0
}

fn tables(e: &Engine) -> (TableId, TableId) {
    e.create_database("d", false, "CREATE DATABASE d").unwrap();
    let spec = |name: &str| TableSpec {
        db: "d".into(),
        name: name.into(),
        columns: vec![
            ColumnSpec::new("id", SqlType::Int { unsigned: false }).not_null(),
            ColumnSpec::new("v", SqlType::VarChar(2000)),
        ],
        primary_key: vec!["id".into()],
        indexes: Vec::new(),
    };
    let a = e.create_table(spec("a"), false, "CREATE TABLE a").unwrap();
    let b = e.create_table(spec("b"), false, "CREATE TABLE b").unwrap();
    (a, b)
}

fn row(i: i64, len: usize) -> Vec<Value> {
    vec![
        Value::Int(i),
        Value::bytes(vec![b'a' + (i % 26) as u8; len]),
    ]
}

/// Inserts, updates, deletes on two tables with a savepoint rolled back in the middle.
fn big_transaction(e: &Arc<Engine>, a: TableId, b: TableId) {
    let origin = CommitOrigin {
        timestamp: Some(1_700_000_000),
        ..CommitOrigin::default()
    };
    let (r, _) = e.with_origin(origin, || {
        let mut t = e.begin();
        for i in 0..400 {
            t.insert(if i % 3 == 0 { b } else { a }, row(i, 600))?;
        }
        t.savepoint("s");
        for i in 1000..1100 {
            t.insert(a, row(i, 900))?;
        }
        t.update(a, &[Value::Int(1)], row(1, 10))?;
        t.rollback_to_savepoint("s")?;
        for i in (1..400).filter(|i| i % 3 != 0) {
            t.update(a, &[Value::Int(i)], row(i, 700))?;
        }
        for i in (0..400).step_by(3) {
            t.delete(b, &[Value::Int(i)])?;
        }
        t.commit()
    });
    r.unwrap().unwrap();
}

fn last_record(e: &Engine) -> Record {
    let mut r = e
        .log()
        .reader(ReadStart::Lsn(0), ReaderOptions::default())
        .unwrap();
    let mut last = None;
    while let Some(rec) = r.next().unwrap() {
        last = Some(rec);
    }
    last.unwrap()
}

#[test]
fn a_spilled_transaction_is_streamed_and_logs_the_events_of_the_same_one_in_memory() {
    let (fs_spill, fs_mem) = (SimFs::new(), SimFs::new());
    let (spill, mem) = (open(&fs_spill), open(&fs_mem));
    spill.set_binlog_cache_size(4096);
    mem.set_binlog_cache_size(64 << 20);
    let (a, b) = tables(&spill);
    assert_eq!(tables(&mem), (a, b));
    big_transaction(&spill, a, b);
    big_transaction(&mem, a, b);
    assert_eq!(spill.binlog_cache_use(), (1, 1));
    assert_eq!(mem.binlog_cache_use(), (1, 0));
    let (rs, rm) = (last_record(&spill), last_record(&mem));
    assert!(rs.events.len() > 400 * 600, "{}", rs.events.len());
    assert_eq!(rs.events, rm.events);
    assert_eq!((rs.lsn, rs.end_lsn), (rm.lsn, rm.end_lsn));
    let catalog = spill.snapshot().root().catalog.clone();
    let decoded = decode_record(&catalog, &rs.events, &rs.aux).unwrap();
    let DecodedBody::Rows(changes) = decoded.body else {
        panic!("not a row group");
    };
    // 400 inserts, 266 updates, 134 deletes: the rolled-back ones are gone.
    assert_eq!(changes.len(), 400 + 266 + 134);
    // Recovery replays the streamed record.
    let before = spill.snapshot().root().clone();
    drop(spill);
    let reopened = open(&fs_spill);
    let after = reopened.snapshot().root().clone();
    assert_eq!(
        after.view(a).map(|t| t.row_count()),
        before.view(a).map(|t| t.row_count())
    );
    assert_eq!(after.view(b).map(|t| t.row_count()), Some(0));
    assert_eq!(
        reopened.snapshot().root().lsn,
        before.lsn,
        "replayed to the same end"
    );
}

#[test]
fn past_max_binlog_cache_size_the_change_fails_with_1197_and_the_transaction_can_commit() {
    let fs = SimFs::new();
    let e = open(&fs);
    let (a, _) = tables(&e);
    e.set_binlog_cache_size(4096);
    e.set_max_binlog_cache_size(16384);
    let mut t = e.begin();
    let mut refused = None;
    for i in 0..100 {
        match t.insert(a, row(i, 1000)) {
            Ok(_) => {}
            Err(err) => {
                assert_eq!(err.error_code().code, 1197);
                refused = Some(i);
                break;
            }
        }
    }
    let n = refused.expect("the cache filled up");
    assert!(n > 5 && n < 17, "{n}");
    // The refused row is not in the transaction; the others commit.
    assert_eq!(t.get(a, &[Value::Int(n)]).unwrap(), None);
    t.commit().unwrap();
    let rows = e.snapshot().root().row_count(a);
    assert_eq!(rows as i64, n);
}
