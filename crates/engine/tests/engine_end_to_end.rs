//! End-to-end tests of the engine on the simulated file system: DDL, transactions, locking,
//! recovery by replay and from checkpoints, and the replica apply path.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use onelog_binlog::{GtidState, Value};
use onelog_engine::apply::apply_record;
use onelog_engine::store::Root;
use onelog_engine::{
    ColumnSpec, Engine, EngineOptions, IndexRef, IndexSpec, KeyRange, LockMode, SqlType, TableId,
    TableSpec,
};
use onelog_log::{FileSystem, ReadStart, ReaderOptions, RecordKind, SimFs};

fn options() -> EngineOptions {
    let mut o = EngineOptions::new("/data");
    o.log.segment_size = 256 << 10;
    o.background_checkpoints = false;
    o.lock_wait_timeout = Duration::from_secs(30);
    o
}

fn open(fs: &Arc<SimFs>, o: EngineOptions) -> (Arc<Engine>, onelog_engine::RecoveryReport) {
    let fs: Arc<dyn FileSystem> = fs.clone();
    Engine::open(fs, o).unwrap()
}

fn int(i: i64) -> Value {
    Value::Int(i)
}

fn text(s: &str) -> Value {
    Value::bytes(s.as_bytes())
}

/// `d.t (id INT PK, name VARCHAR(20) NOT NULL, email VARCHAR(40) UNIQUE, score INT, KEY(score))`.
fn create_people(e: &Engine) -> TableId {
    e.create_database("d", false, "CREATE DATABASE d").unwrap();
    let spec = TableSpec {
        db: "d".into(),
        name: "people".into(),
        columns: vec![
            ColumnSpec::new("id", SqlType::Int { unsigned: false }).not_null(),
            ColumnSpec::new("name", SqlType::VarChar(20)).not_null(),
            ColumnSpec::new("email", SqlType::VarChar(40)),
            ColumnSpec::new("score", SqlType::Int { unsigned: false }),
        ],
        primary_key: vec!["id".into()],
        indexes: vec![
            IndexSpec::new("email", &["email"], true),
            IndexSpec::new("by_score", &["score"], false),
        ],
    };
    e.create_table(spec, false, "CREATE TABLE people (...)")
        .unwrap()
}

fn person(id: i64, name: &str, email: Option<&str>, score: i64) -> Vec<Value> {
    vec![
        int(id),
        text(name),
        email.map_or(Value::Null, text),
        int(score),
    ]
}

fn count_records(e: &Engine) -> usize {
    let mut r = e
        .log()
        .reader(
            ReadStart::Lsn(0),
            ReaderOptions {
                include_non_durable: true,
                include_state_records: false,
            },
        )
        .unwrap();
    let mut n = 0;
    while r.next().unwrap().is_some() {
        n += 1;
    }
    n
}

/// Replays every record of the engine's log onto an empty root.
fn replay_from_empty(e: &Engine) -> Root {
    let mut root = Root::empty();
    let mut r = e
        .log()
        .reader(
            ReadStart::Lsn(0),
            ReaderOptions {
                include_non_durable: true,
                include_state_records: false,
            },
        )
        .unwrap();
    while let Some(rec) = r.next().unwrap() {
        if rec.kind != RecordKind::GtidState {
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
    root
}

fn workload(e: &Arc<Engine>, t: TableId) {
    let mut tx = e.begin();
    for i in 0..50 {
        tx.insert(
            t,
            person(i, &format!("p{i}"), Some(&format!("p{i}@x")), i % 7),
        )
        .unwrap();
    }
    tx.commit().unwrap().unwrap();
    let mut tx = e.begin();
    for i in (0..50).step_by(3) {
        tx.update(t, &[int(i)], person(i, "changed", None, 100 + i))
            .unwrap();
    }
    for i in (1..50).step_by(5) {
        assert!(tx.delete(t, &[int(i)]).unwrap());
    }
    // A primary key change.
    assert!(tx
        .update(t, &[int(2)], person(1002, "moved", Some("moved@x"), 2))
        .unwrap());
    tx.commit().unwrap().unwrap();
}

#[test]
fn ddl_and_row_changes_survive_reopen_by_replay_and_from_a_checkpoint() {
    let fs = SimFs::new();
    let (e, report) = open(&fs, options());
    assert_eq!(report.checkpoint_lsn, None);
    assert_eq!(report.records_applied, 0);
    let t = create_people(&e);
    workload(&e, t);
    let live = e.snapshot().dump();
    assert_eq!(live["d.people"].len(), 50 - 10);

    // Power loss without a checkpoint: everything acknowledged at level 1 is replayed.
    let fs2 = fs.reboot(1, false);
    let (e2, report) = open(&fs2, options());
    assert_eq!(report.checkpoint_lsn, None);
    assert_eq!(report.records_applied, 4);
    assert_eq!(e2.snapshot().dump(), live);
    assert_eq!(report.gtid_binlog_pos().to_string(), "0-1-4");
    assert!(
        report.to_string().contains("gtid_binlog_pos '0-1-4'"),
        "{report}"
    );

    // Clean shutdown writes a checkpoint; reopening loads it and replays nothing.
    e2.shutdown().unwrap();
    let (e3, report) = open(&fs2, options());
    assert!(report.checkpoint_lsn.is_some());
    assert_eq!(report.records_applied, 0);
    assert_eq!(e3.snapshot().dump(), live);
    // Indexes were rebuilt from the checkpoint.
    let mut tx = e3.begin();
    let rows = tx
        .scan(
            t,
            IndexRef::Secondary("email".into()),
            KeyRange::prefix(vec![text("moved@x")]),
            None,
        )
        .unwrap();
    assert_eq!(rows, vec![person(1002, "moved", Some("moved@x"), 2)]);
    // New commits continue the GTID sequence.
    tx.insert(t, person(5000, "new", None, 0)).unwrap();
    let receipt = tx.commit().unwrap().unwrap();
    assert_eq!(receipt.gtid.to_string(), "0-1-5");
}

#[test]
fn checkpoint_then_more_commits_reopen_loads_checkpoint_and_replays_the_tail() {
    let fs = SimFs::new();
    let (e, _) = open(&fs, options());
    let t = create_people(&e);
    workload(&e, t);
    let lsn = e.checkpoint().unwrap();
    assert_eq!(e.checkpoint_lsn(), Some(lsn));
    let mut tx = e.begin();
    tx.insert(t, person(777, "tail", Some("tail@x"), 1))
        .unwrap();
    tx.commit().unwrap();
    e.truncate_table("d", "people", "TRUNCATE TABLE people")
        .unwrap();
    let mut tx = e.begin();
    tx.insert(t, person(1, "after truncate", None, 1)).unwrap();
    tx.commit().unwrap();
    let live = e.snapshot().dump();
    let fs2 = fs.reboot(2, false);
    let (e2, report) = open(&fs2, options());
    assert_eq!(report.checkpoint_lsn, Some(lsn));
    assert_eq!(report.records_applied, 3);
    assert_eq!(e2.snapshot().dump(), live);
}

#[test]
fn snapshot_read_does_not_see_a_later_commit_but_locking_read_does() {
    let fs = SimFs::new();
    let (e, _) = open(&fs, options());
    let t = create_people(&e);
    let mut setup = e.begin();
    setup.insert(t, person(1, "a", None, 1)).unwrap();
    setup.commit().unwrap();

    let mut reader = e.begin();
    assert_eq!(
        reader.get(t, &[int(1)]).unwrap(),
        Some(person(1, "a", None, 1))
    );

    let mut writer = e.begin();
    writer
        .update(t, &[int(1)], person(1, "b", None, 2))
        .unwrap();
    writer.insert(t, person(2, "c", None, 3)).unwrap();
    writer.commit().unwrap();

    assert_eq!(
        reader.get(t, &[int(1)]).unwrap(),
        Some(person(1, "a", None, 1))
    );
    assert_eq!(reader.get(t, &[int(2)]).unwrap(), None);
    assert_eq!(
        reader
            .scan(t, IndexRef::Primary, KeyRange::all(), None)
            .unwrap()
            .len(),
        1
    );
    // Locking reads see the latest committed version.
    assert_eq!(
        reader.get_for_update(t, &[int(1)]).unwrap(),
        Some(person(1, "b", None, 2))
    );
    assert_eq!(
        reader
            .scan(
                t,
                IndexRef::Primary,
                KeyRange::all(),
                Some(LockMode::Shared)
            )
            .unwrap()
            .len(),
        2
    );
    // Own changes are visible to plain reads.
    reader
        .update(t, &[int(1)], person(1, "mine", None, 9))
        .unwrap();
    assert_eq!(
        reader.get(t, &[int(1)]).unwrap(),
        Some(person(1, "mine", None, 9))
    );
    reader.rollback();
    assert_eq!(
        e.begin().get(t, &[int(1)]).unwrap(),
        Some(person(1, "b", None, 2))
    );
}

#[test]
fn duplicate_primary_or_unique_key_gives_1062_with_mysql_message() {
    let fs = SimFs::new();
    let (e, _) = open(&fs, options());
    let t = create_people(&e);
    let mut tx = e.begin();
    tx.insert(t, person(1, "a", Some("a@x"), 1)).unwrap();
    // Duplicates within the transaction.
    let err = tx.insert(t, person(1, "b", None, 1)).unwrap_err();
    assert_eq!((err.code(), err.sqlstate()), (1062, "23000"));
    assert_eq!(err.to_string(), "Duplicate entry '1' for key 'PRIMARY'");
    let err = tx.insert(t, person(2, "b", Some("a@x"), 1)).unwrap_err();
    assert_eq!(err.to_string(), "Duplicate entry 'a@x' for key 'email'");
    // NULLs never conflict in a unique index.
    tx.insert(t, person(3, "c", None, 1)).unwrap();
    tx.insert(t, person(4, "d", None, 1)).unwrap();
    tx.commit().unwrap();

    // Against committed rows.
    let mut tx = e.begin();
    assert_eq!(
        tx.insert(t, person(1, "x", None, 0)).unwrap_err().code(),
        1062
    );
    assert_eq!(
        tx.insert(t, person(9, "x", Some("a@x"), 0))
            .unwrap_err()
            .code(),
        1062
    );
    assert_eq!(
        tx.update(t, &[int(3)], person(3, "c", Some("a@x"), 1))
            .unwrap_err()
            .code(),
        1062
    );
    assert_eq!(
        tx.update(t, &[int(3)], person(4, "c", None, 1))
            .unwrap_err()
            .code(),
        1062
    );
    // A row keeps its unique value under a new primary key.
    tx.insert(t, person(50, "keeper", Some("keep@x"), 0))
        .unwrap();
    assert!(tx
        .update(t, &[int(50)], person(51, "keeper", Some("keep@x"), 0))
        .unwrap());
    assert!(tx.delete(t, &[int(51)]).unwrap());
    // Deleting the holder first frees the value, inside the same transaction.
    assert!(tx.delete(t, &[int(1)]).unwrap());
    tx.insert(t, person(9, "x", Some("a@x"), 0)).unwrap();
    tx.insert(t, person(1, "again", None, 0)).unwrap();
    tx.commit().unwrap();
    let dump = e.snapshot().dump();
    assert_eq!(dump["d.people"][0], person(1, "again", None, 0));
    assert_eq!(dump["d.people"][3], person(9, "x", Some("a@x"), 0));

    // A unique index over duplicate values cannot be created.
    let mut tx = e.begin();
    tx.update(t, &[int(3)], person(3, "c", None, 0)).unwrap();
    tx.commit().unwrap();
    let err = e
        .create_index(
            "d",
            "people",
            IndexSpec::new("u_score", &["score"], true),
            "CREATE UNIQUE INDEX ...",
        )
        .unwrap_err();
    assert_eq!(err.code(), 1062);
    assert!(e.catalog().table(t).unwrap().index("u_score").is_none());
}

#[test]
fn null_in_not_null_column_gives_1048_and_bad_values_their_codes() {
    let fs = SimFs::new();
    let (e, _) = open(&fs, options());
    let t = create_people(&e);
    let mut tx = e.begin();
    let err = tx
        .insert(t, vec![int(1), Value::Null, Value::Null, Value::Null])
        .unwrap_err();
    assert_eq!((err.code(), err.sqlstate()), (1048, "23000"));
    assert_eq!(err.to_string(), "Column 'name' cannot be null");
    assert_eq!(
        tx.insert(t, vec![int(1), text("a")]).unwrap_err().code(),
        1136
    );
    assert_eq!(
        tx.insert(t, person(1, &"x".repeat(21), None, 0))
            .unwrap_err()
            .code(),
        1406
    );
    assert_eq!(
        tx.insert(
            t,
            vec![Value::Int(1 << 40), text("a"), Value::Null, Value::Null]
        )
        .unwrap_err()
        .code(),
        1264
    );
    tx.insert(t, person(1, "ok", None, 0)).unwrap();
    assert_eq!(
        tx.update(
            t,
            &[int(1)],
            vec![int(1), Value::Null, Value::Null, Value::Null]
        )
        .unwrap_err()
        .code(),
        1048
    );
    tx.commit().unwrap();
    assert_eq!(
        e.snapshot().dump()["d.people"],
        vec![person(1, "ok", None, 0)]
    );
}

#[test]
fn deadlock_between_two_transactions_gives_1213_to_one_and_the_other_commits() {
    let fs = SimFs::new();
    let (e, _) = open(&fs, options());
    let t = create_people(&e);
    let mut setup = e.begin();
    setup.insert(t, person(1, "a", None, 0)).unwrap();
    setup.insert(t, person(2, "b", None, 0)).unwrap();
    setup.commit().unwrap();

    let mut t1 = e.begin();
    let mut t2 = e.begin();
    let t1_id = t1.id();
    t1.update(t, &[int(1)], person(1, "t1", None, 1)).unwrap();
    t2.update(t, &[int(2)], person(2, "t2", None, 2)).unwrap();

    let (done_tx, done_rx) = mpsc::channel();
    let handle = std::thread::spawn(move || {
        // Waits for t2's lock on row 2.
        let r = t1.update(t, &[int(2)], person(2, "t1", None, 1));
        done_tx.send(r.map_err(|e| e.code())).unwrap();
        t1.commit().map(|r| r.is_some()).map_err(|e| e.code())
    });
    assert!(e.locks().wait_until_waiting(t1_id, Duration::from_secs(30)));
    // t2 closes the cycle: it is the victim, rolled back, its locks released.
    let err = t2
        .update(t, &[int(1)], person(1, "t2", None, 2))
        .unwrap_err();
    assert_eq!((err.code(), err.sqlstate()), (1213, "40001"));
    assert_eq!(e.locks().held_by(t2.id()), 0);
    assert_eq!(t2.get(t, &[int(1)]).unwrap_err().code(), 1213);
    assert_eq!(t2.commit().unwrap_err().code(), 1213);
    assert_eq!(done_rx.recv().unwrap(), Ok(true));
    assert_eq!(handle.join().unwrap(), Ok(true));
    assert_eq!(
        e.snapshot().dump()["d.people"],
        vec![person(1, "t1", None, 1), person(2, "t1", None, 1)]
    );
}

#[test]
fn lock_wait_timeout_gives_1205_and_the_transaction_goes_on() {
    let fs = SimFs::new();
    let mut o = options();
    o.lock_wait_timeout = Duration::from_millis(50);
    let (e, _) = open(&fs, o);
    let t = create_people(&e);
    let mut setup = e.begin();
    setup.insert(t, person(1, "a", None, 0)).unwrap();
    setup.commit().unwrap();

    let mut holder = e.begin();
    holder
        .update(t, &[int(1)], person(1, "holder", None, 0))
        .unwrap();
    let mut waiter = e.begin();
    waiter.insert(t, person(2, "w", None, 0)).unwrap();
    let err = waiter
        .update(t, &[int(1)], person(1, "w", None, 0))
        .unwrap_err();
    assert_eq!((err.code(), err.sqlstate()), (1205, "HY000"));
    // Also an insert of a key whose holder has not committed waits and times out.
    let err = waiter.get_for_update(t, &[int(1)]).unwrap_err();
    assert_eq!(err.code(), 1205);
    assert!(e.locks().held_by(waiter.id()) >= 1);
    holder.commit().unwrap();
    waiter
        .update(t, &[int(1)], person(1, "w", None, 0))
        .unwrap();
    waiter.commit().unwrap();
    assert_eq!(
        e.snapshot().dump()["d.people"],
        vec![person(1, "w", None, 0), person(2, "w", None, 0)]
    );
}

#[test]
fn rollback_to_savepoint_undoes_only_later_changes() {
    let fs = SimFs::new();
    let (e, _) = open(&fs, options());
    let t = create_people(&e);
    let mut tx = e.begin();
    tx.insert(t, person(1, "a", Some("a@x"), 1)).unwrap();
    tx.savepoint("s1");
    tx.insert(t, person(2, "b", Some("b@x"), 2)).unwrap();
    tx.update(t, &[int(1)], person(1, "a2", Some("a2@x"), 1))
        .unwrap();
    tx.savepoint("s2");
    tx.delete(t, &[int(1)]).unwrap();
    tx.rollback_to_savepoint("s2").unwrap();
    assert_eq!(
        tx.get(t, &[int(1)]).unwrap(),
        Some(person(1, "a2", Some("a2@x"), 1))
    );
    tx.rollback_to_savepoint("s1").unwrap();
    assert_eq!(tx.get(t, &[int(2)]).unwrap(), None);
    assert_eq!(
        tx.get(t, &[int(1)]).unwrap(),
        Some(person(1, "a", Some("a@x"), 1))
    );
    // The unique value b@x is free again inside the transaction.
    tx.insert(t, person(3, "c", Some("b@x"), 3)).unwrap();
    assert_eq!(tx.rollback_to_savepoint("s2").unwrap_err().code(), 1305);
    tx.release_savepoint("s1").unwrap();
    assert_eq!(tx.rollback_to_savepoint("s1").unwrap_err().code(), 1305);
    tx.commit().unwrap();
    assert_eq!(
        e.snapshot().dump()["d.people"],
        vec![
            person(1, "a", Some("a@x"), 1),
            person(3, "c", Some("b@x"), 3)
        ]
    );
    // What was logged replays to the same thing.
    assert_eq!(replay_from_empty(&e).dump(), e.snapshot().dump());
}

#[test]
fn rolled_back_and_read_only_transactions_write_nothing_to_the_log() {
    let fs = SimFs::new();
    let (e, _) = open(&fs, options());
    let t = create_people(&e);
    let before = count_records(&e);
    let end = e.log().end_lsn();
    let mut tx = e.begin();
    tx.insert(t, person(1, "a", None, 0)).unwrap();
    tx.rollback();
    {
        let mut dropped = e.begin();
        dropped.insert(t, person(2, "b", None, 0)).unwrap();
    }
    let mut ro = e.begin();
    assert_eq!(ro.get(t, &[int(1)]).unwrap(), None);
    assert!(ro.commit().unwrap().is_none());
    assert_eq!(count_records(&e), before);
    assert_eq!(e.log().end_lsn(), end);
    assert!(e.snapshot().dump()["d.people"].is_empty());
    // The rolled-back row's lock is gone.
    let mut tx = e.begin();
    tx.insert(t, person(1, "a", None, 0)).unwrap();
    tx.commit().unwrap();
    assert_eq!(count_records(&e), before + 1);
}

#[test]
fn auto_increment_fills_null_and_zero_and_follows_explicit_values() {
    let fs = SimFs::new();
    let (e, _) = open(&fs, options());
    e.create_database("d", false, "CREATE DATABASE d").unwrap();
    let spec = TableSpec {
        db: "d".into(),
        name: "seq".into(),
        columns: vec![
            ColumnSpec::new("id", SqlType::BigInt { unsigned: true })
                .not_null()
                .auto_increment(),
            ColumnSpec::new("v", SqlType::Int { unsigned: false }),
        ],
        primary_key: vec!["id".into()],
        indexes: vec![],
    };
    let t = e
        .create_table(spec, false, "CREATE TABLE seq (...)")
        .unwrap();
    let mut tx = e.begin();
    assert_eq!(
        tx.insert(t, vec![Value::Null, int(1)])
            .unwrap()
            .auto_increment,
        Some(1)
    );
    assert_eq!(
        tx.insert(t, vec![Value::UInt(0), int(2)])
            .unwrap()
            .auto_increment,
        Some(2)
    );
    assert_eq!(
        tx.insert(t, vec![Value::UInt(10), int(3)])
            .unwrap()
            .auto_increment,
        None
    );
    assert_eq!(
        tx.insert(t, vec![Value::Null, int(4)])
            .unwrap()
            .auto_increment,
        Some(11)
    );
    tx.rollback();
    // Not transactional: the rolled-back values are not reused.
    let mut tx = e.begin();
    assert_eq!(
        tx.insert(t, vec![Value::Null, int(5)])
            .unwrap()
            .auto_increment,
        Some(12)
    );
    tx.insert(t, vec![Value::UInt(20), int(6)]).unwrap();
    tx.commit().unwrap();
    // After a restart the counter continues after the largest committed value.
    let fs2 = fs.reboot(3, false);
    let (e2, _) = open(&fs2, options());
    let mut tx = e2.begin();
    assert_eq!(
        tx.insert(t, vec![Value::Null, int(7)])
            .unwrap()
            .auto_increment,
        Some(21)
    );
    tx.commit().unwrap();
    e2.truncate_table("d", "seq", "TRUNCATE TABLE seq").unwrap();
    let mut tx = e2.begin();
    assert_eq!(
        tx.insert(t, vec![Value::Null, int(8)])
            .unwrap()
            .auto_increment,
        Some(1)
    );
    tx.commit().unwrap();
    assert_eq!(
        e2.snapshot().dump()["d.seq"],
        vec![vec![Value::UInt(1), int(8)]]
    );
}

fn all_types_spec() -> TableSpec {
    let c = |n: &str, t: SqlType| ColumnSpec::new(n, t);
    TableSpec {
        db: "d".into(),
        name: "types".into(),
        columns: vec![
            c("id", SqlType::Int { unsigned: false }).not_null(),
            c("ti", SqlType::TinyInt { unsigned: false }),
            c("tu", SqlType::TinyInt { unsigned: true }),
            c("si", SqlType::SmallInt { unsigned: false }),
            c("su", SqlType::SmallInt { unsigned: true }),
            c("mi", SqlType::MediumInt { unsigned: false }),
            c("mu", SqlType::MediumInt { unsigned: true }),
            c("ii", SqlType::Int { unsigned: false }),
            c("iu", SqlType::Int { unsigned: true }),
            c("bi", SqlType::BigInt { unsigned: false }),
            c("bu", SqlType::BigInt { unsigned: true }),
            c("f", SqlType::Float),
            c("dbl", SqlType::Double),
            c(
                "dec",
                SqlType::Decimal {
                    precision: 20,
                    scale: 6,
                },
            ),
            c("ch", SqlType::Char(10)),
            c("vc", SqlType::VarChar(100)),
            c("bn", SqlType::Binary(4)),
            c("vb", SqlType::VarBinary(300)),
            c("tt", SqlType::TinyText),
            c("tx", SqlType::Text),
            c("mt", SqlType::MediumText),
            c("lt", SqlType::LongText),
            c("tb", SqlType::TinyBlob),
            c("bl", SqlType::Blob),
            c("mb", SqlType::MediumBlob),
            c("lb", SqlType::LongBlob),
            c("dt", SqlType::Date),
            c("dtm", SqlType::DateTime(6)),
            c("dt0", SqlType::DateTime(0)),
            c("ts", SqlType::Timestamp(3)),
            c("tm", SqlType::Time(2)),
            c("yr", SqlType::Year),
            c("nl", SqlType::Null),
        ],
        primary_key: vec!["id".into()],
        indexes: vec![
            IndexSpec::new("by_dec", &["dec"], false),
            IndexSpec::new("by_vc_dt", &["vc", "dtm"], false),
        ],
    }
}

fn typed_row(i: i64) -> Vec<Value> {
    let neg = i % 2 == 0;
    let s = |v: i64| if neg { -v } else { v };
    vec![
        int(i),
        int(s(127)),
        Value::UInt(255),
        int(s(32_000)),
        Value::UInt(65_535),
        int(s(8_000_000)),
        Value::UInt(16_777_215),
        int(s(2_000_000_000)),
        Value::UInt(4_000_000_000),
        int(if neg { i64::MIN } else { i64::MAX }),
        Value::UInt(u64::MAX - i as u64),
        Value::Float(1.5 * i as f32),
        Value::Double(-2.25e100 * i as f64),
        Value::Decimal(format!(
            "{}12345678901234.{:06}",
            if neg { "-" } else { "" },
            i
        )),
        text("héllo"),
        text(&"v".repeat(i as usize)),
        Value::bytes(vec![0, 1, 2, i as u8]),
        Value::bytes(vec![0xff; 300]),
        text("tiny"),
        text(&"t".repeat(1000)),
        text("medium"),
        text("long"),
        Value::bytes(vec![0; 3]),
        Value::Bytes((0..=255).collect()),
        Value::bytes(vec![7; 20_000]),
        Value::bytes(vec![]),
        Value::Date {
            year: 2024,
            month: 2,
            day: 29,
        },
        Value::DateTime {
            year: 1999,
            month: 12,
            day: 31,
            hour: 23,
            minute: 59,
            second: 58,
            micros: 123_456,
        },
        Value::DateTime {
            year: 1000,
            month: 1,
            day: 1,
            hour: 0,
            minute: 0,
            second: 0,
            micros: 0,
        },
        Value::Timestamp {
            secs: 1_700_000_000,
            micros: 123_000,
        },
        Value::Time {
            negative: neg,
            hours: 838,
            minutes: 59,
            seconds: 59,
            micros: 990_000,
        },
        Value::Year(2155),
        Value::Null,
    ]
}

#[test]
fn every_column_type_survives_commit_replay_and_checkpoint() {
    let fs = SimFs::new();
    let (e, _) = open(&fs, options());
    e.create_database("d", false, "CREATE DATABASE d").unwrap();
    let t = e
        .create_table(all_types_spec(), false, "CREATE TABLE types (...)")
        .unwrap();
    let mut tx = e.begin();
    for i in 1..=4 {
        tx.insert(t, typed_row(i)).unwrap();
    }
    let mut nulls = vec![Value::Null; typed_row(0).len()];
    nulls[0] = int(100);
    tx.insert(t, nulls).unwrap();
    tx.commit().unwrap();
    let live = e.snapshot().dump();
    assert_eq!(live["d.types"][0], typed_row(1));

    let fs2 = fs.reboot(4, false);
    let (e2, report) = open(&fs2, options());
    assert_eq!(report.records_applied, 3);
    assert_eq!(e2.snapshot().dump(), live);
    e2.shutdown().unwrap();
    let (e3, report) = open(&fs2, options());
    assert_eq!(report.records_applied, 0);
    assert_eq!(e3.snapshot().dump(), live);
    // Index scans over decimal and composite keys still work after the checkpoint.
    let mut tx = e3.begin();
    let below_zero = |start| KeyRange {
        start,
        end: Bound::Excluded(vec![Value::Decimal("0".into())]),
    };
    // NULL sorts first in an index, as in InnoDB: an unbounded start includes it...
    let rows = tx
        .scan(
            t,
            IndexRef::Secondary("by_dec".into()),
            below_zero(Bound::Unbounded),
            None,
        )
        .unwrap();
    assert_eq!(
        rows.iter().map(|r| r[0].clone()).collect::<Vec<_>>(),
        vec![int(100), int(4), int(2)]
    );
    // ...and `dec < 0` starts after NULL.
    let rows = tx
        .scan(
            t,
            IndexRef::Secondary("by_dec".into()),
            below_zero(Bound::Excluded(vec![Value::Null])),
            None,
        )
        .unwrap();
    assert_eq!(
        rows.iter().map(|r| r[0].clone()).collect::<Vec<_>>(),
        vec![int(4), int(2)]
    );
}

#[test]
fn replaying_the_whole_log_from_empty_gives_exactly_the_live_tables() {
    let fs = SimFs::new();
    let (e, _) = open(&fs, options());
    let t = create_people(&e);
    workload(&e, t);
    e.create_index(
        "d",
        "people",
        IndexSpec::new("by_name", &["name"], false),
        "CREATE INDEX by_name ON people(name)",
    )
    .unwrap();
    e.create_database("other", false, "CREATE DATABASE other")
        .unwrap();
    let mut spec = all_types_spec();
    spec.db = "other".into();
    let t2 = e
        .create_table(spec, false, "CREATE TABLE other.types (...)")
        .unwrap();
    let mut tx = e.begin();
    tx.insert(t2, typed_row(3)).unwrap();
    tx.update(t, &[int(0)], person(0, "zero", Some("z@x"), 0))
        .unwrap();
    tx.commit().unwrap();
    e.drop_index("d", "people", "by_score", "DROP INDEX by_score ON people")
        .unwrap();
    e.create_database("gone", false, "CREATE DATABASE gone")
        .unwrap();
    let mut gone_spec = all_types_spec();
    gone_spec.db = "gone".into();
    gone_spec.name = "x".into();
    e.create_table(gone_spec, false, "CREATE TABLE gone.x (...)")
        .unwrap();
    e.drop_database("gone", false, "DROP DATABASE gone")
        .unwrap();
    e.drop_table("d", "nothing", true, "DROP TABLE IF EXISTS nothing")
        .unwrap();
    assert_eq!(
        e.drop_table("d", "nothing", false, "DROP TABLE nothing")
            .unwrap_err()
            .code(),
        1146
    );

    let replayed = replay_from_empty(&e);
    let live = e.snapshot();
    assert_eq!(replayed.dump(), live.dump());
    assert_eq!(*replayed.catalog, **live.catalog());
    assert_eq!(replayed.gtid_state, e.log().gtid_state());
    for (id, data) in replayed.tables.iter() {
        assert!(
            data.same_index_entries(live.root().table(*id).unwrap()),
            "indexes of table {id}"
        );
    }
    let names: BTreeMap<String, usize> =
        live.dump().into_iter().map(|(k, v)| (k, v.len())).collect();
    assert_eq!(
        names,
        BTreeMap::from([("d.people".to_string(), 40), ("other.types".to_string(), 1)])
    );
}

#[test]
fn index_range_scans_on_primary_and_secondary_indexes_see_own_changes() {
    let fs = SimFs::new();
    let (e, _) = open(&fs, options());
    let t = create_people(&e);
    let mut tx = e.begin();
    for i in 0..20 {
        tx.insert(t, person(i, &format!("n{i}"), None, i % 4))
            .unwrap();
    }
    tx.commit().unwrap();
    let ids = |rows: Vec<Vec<Value>>| rows.into_iter().map(|r| r[0].clone()).collect::<Vec<_>>();

    let mut tx = e.begin();
    let r = tx
        .scan(
            t,
            IndexRef::Primary,
            KeyRange::between(vec![int(5)], vec![int(8)]),
            None,
        )
        .unwrap();
    assert_eq!(ids(r), vec![int(5), int(6), int(7), int(8)]);
    let r = tx
        .scan(
            t,
            IndexRef::Primary,
            KeyRange {
                start: Bound::Excluded(vec![int(17)]),
                end: Bound::Unbounded,
            },
            None,
        )
        .unwrap();
    assert_eq!(ids(r), vec![int(18), int(19)]);
    // Secondary: score = 1, ties in primary key order.
    let r = tx
        .scan(
            t,
            IndexRef::Secondary("by_score".into()),
            KeyRange::prefix(vec![int(1)]),
            None,
        )
        .unwrap();
    assert_eq!(ids(r), vec![int(1), int(5), int(9), int(13), int(17)]);
    // Own uncommitted changes: move 5 out of score 1, add 100 with score 1, delete 9.
    tx.update(t, &[int(5)], person(5, "n5", None, 3)).unwrap();
    tx.insert(t, person(100, "new", None, 1)).unwrap();
    tx.delete(t, &[int(9)]).unwrap();
    let r = tx
        .scan(
            t,
            IndexRef::Secondary("by_score".into()),
            KeyRange::prefix(vec![int(1)]),
            None,
        )
        .unwrap();
    assert_eq!(ids(r), vec![int(1), int(13), int(17), int(100)]);
    let r = tx
        .scan(
            t,
            IndexRef::Secondary("by_score".into()),
            KeyRange::between(vec![int(2)], vec![int(3)]),
            Some(LockMode::Exclusive),
        )
        .unwrap();
    assert_eq!(
        ids(r),
        vec![
            int(2),
            int(6),
            int(10),
            int(14),
            int(18),
            int(3),
            int(5),
            int(7),
            int(11),
            int(15),
            int(19)
        ]
    );
    let r = tx
        .scan(
            t,
            IndexRef::Primary,
            KeyRange::between(vec![int(8)], vec![int(10)]),
            None,
        )
        .unwrap();
    assert_eq!(ids(r), vec![int(8), int(10)]);
    assert_eq!(
        tx.scan(t, IndexRef::Secondary("nope".into()), KeyRange::all(), None)
            .unwrap_err()
            .code(),
        1091
    );
    tx.commit().unwrap();
    // The committed secondary index agrees with the committed rows.
    let mut tx = e.begin();
    let r = tx
        .scan(
            t,
            IndexRef::Secondary("by_score".into()),
            KeyRange::prefix(vec![int(1)]),
            None,
        )
        .unwrap();
    assert_eq!(ids(r), vec![int(1), int(13), int(17), int(100)]);
}

#[test]
fn ddl_errors_have_mysql_codes_and_if_exists_variants_are_quiet() {
    let fs = SimFs::new();
    let (e, _) = open(&fs, options());
    let t = create_people(&e);
    assert_eq!(
        e.create_database("d", false, "CREATE DATABASE d")
            .unwrap_err()
            .code(),
        1007
    );
    e.create_database("d", true, "CREATE DATABASE IF NOT EXISTS d")
        .unwrap();
    let long = "x".repeat(65);
    let err = e
        .create_database(&long, false, "CREATE DATABASE x")
        .unwrap_err();
    assert_eq!(err.code(), 1059);
    let mut spec = all_types_spec();
    spec.name = "people".into();
    assert_eq!(
        e.create_table(spec.clone(), false, "CREATE TABLE people")
            .unwrap_err()
            .code(),
        1050
    );
    assert_eq!(
        e.create_table(spec.clone(), true, "CREATE TABLE IF NOT EXISTS people")
            .unwrap(),
        t
    );
    spec.db = "nodb".into();
    assert_eq!(
        e.create_table(spec, false, "CREATE TABLE nodb.people")
            .unwrap_err()
            .code(),
        1049
    );
    assert_eq!(
        e.drop_database("nodb", false, "DROP DATABASE nodb")
            .unwrap_err()
            .code(),
        1049
    );
    assert_eq!(
        e.truncate_table("d", "nope", "TRUNCATE nope")
            .unwrap_err()
            .code(),
        1146
    );
    assert_eq!(
        e.drop_index("d", "people", "nope", "DROP INDEX nope")
            .unwrap_err()
            .code(),
        1091
    );
    assert_eq!(
        e.create_index(
            "d",
            "people",
            IndexSpec::new("email", &["name"], false),
            "CREATE INDEX email"
        )
        .unwrap_err()
        .code(),
        1061
    );
    // A transaction writing a table dropped before its commit fails with 1146.
    let mut tx = e.begin();
    tx.insert(t, person(1, "a", None, 0)).unwrap();
    e.drop_table("d", "people", false, "DROP TABLE people")
        .unwrap();
    assert_eq!(tx.commit().unwrap_err().code(), 1146);
    assert_eq!(replay_from_empty(&e).dump(), e.snapshot().dump());
}

#[test]
fn a_replica_applying_the_primary_log_records_ends_with_the_same_tables_and_gtids() {
    let fs = SimFs::new();
    let (primary, _) = open(&fs, options());
    let t = create_people(&primary);
    workload(&primary, t);
    primary
        .truncate_table("d", "people", "TRUNCATE TABLE people")
        .unwrap();
    let mut tx = primary.begin();
    tx.insert(t, person(1, "after", Some("a@x"), 1)).unwrap();
    tx.commit().unwrap();

    let replica_fs = SimFs::new();
    let mut ro = options();
    ro.server_id = 2;
    let (replica, _) = open(&replica_fs, ro);
    let mut r = primary
        .log()
        .reader(
            ReadStart::Lsn(0),
            ReaderOptions {
                include_non_durable: false,
                include_state_records: false,
            },
        )
        .unwrap();
    let mut n = 0;
    while let Some(rec) = r.next().unwrap() {
        replica.apply_logged_group(&rec.events, &rec.aux).unwrap();
        n += 1;
    }
    assert_eq!(n, 6);
    assert_eq!(replica.snapshot().dump(), primary.snapshot().dump());
    assert_eq!(replica.log().gtid_state(), primary.log().gtid_state());
    // The replica logs DDL as the primary did, header flags included: CREATE DATABASE carries
    // LOG_EVENT_SUPPRESS_USE_F (0x0008), the other DDL does not.
    let ddl_flags = |e: &Engine| -> Vec<u16> {
        let opts = ReaderOptions {
            include_non_durable: false,
            include_state_records: false,
        };
        let mut r = e.log().reader(ReadStart::Lsn(0), opts).unwrap();
        let mut flags = Vec::new();
        while let Some(rec) = r.next().unwrap() {
            if rec.kind == RecordKind::Ddl {
                let gtid_len = u32::from_le_bytes(rec.events[9..13].try_into().unwrap()) as usize;
                let query = &rec.events[gtid_len..];
                flags.push(u16::from_le_bytes([query[17], query[18]]));
            }
        }
        flags
    };
    let primary_flags = ddl_flags(&primary);
    assert_eq!(primary_flags.first().map(|f| f & 0x0008), Some(0x0008));
    assert!(primary_flags[1..].iter().all(|f| f & 0x0008 == 0));
    assert_eq!(ddl_flags(&replica), primary_flags);
    // A group that does not apply (a delete of a missing row) is refused, not logged.
    let end = replica.log().end_lsn();
    let mut r = primary
        .log()
        .reader(
            ReadStart::Lsn(0),
            ReaderOptions {
                include_non_durable: false,
                include_state_records: false,
            },
        )
        .unwrap();
    let mut records = Vec::new();
    while let Some(rec) = r.next().unwrap() {
        records.push(rec);
    }
    // Re-applying the workload's second transaction (updates of rows the truncate removed).
    let err = replica
        .apply_logged_group(&records[3].events, &records[3].aux)
        .unwrap_err();
    assert!(err.to_string().contains("0-1-4"), "{err}");
    assert_eq!(replica.log().end_lsn(), end);
    // Replicas restart from their own log.
    let replica_fs2 = replica_fs.reboot(5, false);
    let mut ro = options();
    ro.server_id = 2;
    let (replica2, report) = open(&replica_fs2, ro);
    assert_eq!(report.gtid_binlog_pos(), primary.log().gtid_state().pos());
    assert_eq!(replica2.snapshot().dump(), primary.snapshot().dump());
    let _ = GtidState::new();
}

#[test]
fn background_checkpoints_and_strict_visibility_keep_the_same_state() {
    let fs = SimFs::new();
    let mut o = options();
    o.background_checkpoints = true;
    o.checkpoint_every_bytes = 2048;
    o.checkpoint_every = Duration::ZERO;
    o.log.strict_visibility = true;
    let (e, _) = open(&fs, o.clone());
    let t = create_people(&e);
    for i in 0..60 {
        let mut tx = e.begin();
        tx.insert(t, person(i, "n", Some(&format!("{i}@x")), i))
            .unwrap();
        tx.commit().unwrap();
        // With strict visibility a commit is visible once acknowledged.
        assert_eq!(e.snapshot().dump()["d.people"].len() as i64, i + 1);
    }
    let live = e.snapshot().dump();
    e.shutdown().unwrap();
    assert_eq!(e.checkpoint_error(), None);
    assert_eq!(e.begin().commit().unwrap(), None);
    let mut tx = e.begin();
    tx.insert(t, person(999, "late", None, 0)).unwrap();
    assert_eq!(tx.commit().unwrap_err().code(), 1053);
    let (e2, report) = open(&fs, o);
    assert_eq!(report.records_applied, 0);
    assert_eq!(e2.snapshot().dump(), live);
    e2.shutdown().unwrap();
}

#[test]
fn ddl_on_a_table_an_open_transaction_wrote_makes_its_commit_fail_with_1412() {
    let fs = SimFs::new();
    let (e, _) = open(&fs, options());
    let t = create_people(&e);
    let mut setup = e.begin();
    setup.insert(t, person(1, "a", None, 0)).unwrap();
    setup.commit().unwrap();

    // TRUNCATE under an open update: the update's row is gone, so it must not be logged.
    let mut tx = e.begin();
    tx.update(t, &[int(1)], person(1, "b", None, 0)).unwrap();
    e.truncate_table("d", "people", "TRUNCATE TABLE people")
        .unwrap();
    let records = count_records(&e);
    let err = tx.commit().unwrap_err();
    assert_eq!((err.code(), err.sqlstate()), (1412, "HY000"));
    assert_eq!(count_records(&e), records);

    // A unique index created under an open insert of a duplicate value.
    let mut setup = e.begin();
    setup.insert(t, person(1, "same", None, 0)).unwrap();
    setup.commit().unwrap();
    let mut tx = e.begin();
    tx.insert(t, person(2, "same", None, 0)).unwrap();
    e.create_index(
        "d",
        "people",
        IndexSpec::new("u_name", &["name"], true),
        "CREATE UNIQUE INDEX u_name ON people(name)",
    )
    .unwrap();
    assert_eq!(tx.commit().unwrap_err().code(), 1412);
    // Transactions that started writing after the DDL commit normally.
    let mut tx = e.begin();
    tx.insert(t, person(3, "other", None, 0)).unwrap();
    tx.commit().unwrap();
    assert_eq!(e.apply_failure(), None);
    assert_eq!(replay_from_empty(&e).dump(), e.snapshot().dump());
}

#[test]
fn an_insert_of_a_unique_value_held_by_an_open_transaction_waits_for_its_outcome() {
    let fs = SimFs::new();
    let (e, _) = open(&fs, options());
    let t = create_people(&e);
    for holder_commits in [true, false] {
        let mut holder = e.begin();
        holder.insert(t, person(1, "h", Some("same@x"), 0)).unwrap();
        let waiter = e.begin();
        let waiter_id = waiter.id();
        let (tx_res, rx_res) = mpsc::channel();
        let handle = std::thread::spawn(move || {
            let mut waiter = waiter;
            let r = waiter
                .insert(t, person(2, "w", Some("same@x"), 0))
                .map(|_| ())
                .map_err(|e| e.code());
            tx_res.send(r).unwrap();
            if r.is_ok() {
                waiter.commit().unwrap();
            }
        });
        assert!(e
            .locks()
            .wait_until_waiting(waiter_id, Duration::from_secs(30)));
        if holder_commits {
            holder.commit().unwrap();
            assert_eq!(rx_res.recv().unwrap(), Err(1062));
        } else {
            holder.rollback();
            assert_eq!(rx_res.recv().unwrap(), Ok(()));
        }
        handle.join().unwrap();
        let dump = e.snapshot().dump();
        let expect = if holder_commits {
            person(1, "h", Some("same@x"), 0)
        } else {
            person(2, "w", Some("same@x"), 0)
        };
        assert_eq!(dump["d.people"], vec![expect]);
        e.truncate_table("d", "people", "TRUNCATE TABLE people")
            .unwrap();
    }
}
