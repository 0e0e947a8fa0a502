//! Big commits whose tables are prebuilt while their record is written (issue 14 part 3,
//! `prebuild.rs`): with small commits to the same and other tables running meanwhile, the
//! published root is exactly the one a sequential apply of the log gives (rows, the secondary
//! and unique indexes, `auto_inc_next`), whether the prebuilt tables were installed or the
//! change log was applied because a table had changed in between.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::replay_from_empty;
use onelog_binlog::Value;
use onelog_engine::{ColumnSpec, Engine, EngineOptions, IndexSpec, SqlType, TableId, TableSpec};
use onelog_log::{FileSystem, SimFs};

/// Rows of the big transactions: above the prebuild threshold (16,384 changes).
const BIG: u64 = 20_000;

fn open() -> Arc<Engine> {
    let mut o = EngineOptions::new("/data");
    o.background_checkpoints = false;
    let fs: Arc<dyn FileSystem> = SimFs::new();
    Engine::open(fs, o).unwrap().0
}

/// `d.<name> (id BIGINT UNSIGNED AUTO_INCREMENT PK, k INT, v VARCHAR(40))`, index on `k`,
/// unique index on `v`.
fn table(e: &Engine, name: &str) -> TableId {
    let spec = TableSpec {
        db: "d".into(),
        name: name.into(),
        columns: vec![
            ColumnSpec::new("id", SqlType::BigInt { unsigned: true })
                .not_null()
                .auto_increment(),
            ColumnSpec::new("k", SqlType::Int { unsigned: false }),
            ColumnSpec::new("v", SqlType::VarChar(40)),
        ],
        primary_key: vec!["id".into()],
        indexes: vec![
            IndexSpec::new("by_k", &["k"], false),
            IndexSpec::new("u_v", &["v"], true),
        ],
    };
    e.create_table(spec, false, "CREATE TABLE ...").unwrap()
}

fn row(id: Option<u64>, k: i64, v: &str) -> Vec<Value> {
    vec![
        id.map_or(Value::Null, Value::UInt),
        Value::Int(k),
        Value::bytes(v.as_bytes()),
    ]
}

fn setup() -> (Arc<Engine>, TableId, TableId) {
    let e = open();
    e.create_database("d", false, "CREATE DATABASE d").unwrap();
    let (a, b) = (table(&e, "a"), table(&e, "b"));
    let mut t = e.begin();
    for i in 1..=BIG {
        t.insert(a, row(None, (i % 100) as i64, &format!("a{i}")))
            .unwrap();
    }
    t.commit().unwrap();
    (e, a, b)
}

/// One big transaction on `a`: every row of ids 1..=BIG that exists gets `k = k + 1`, 100
/// are deleted, 10 inserted with generated ids.
fn big_commit(e: &Arc<Engine>, a: TableId, round: u64) {
    let mut t = e.begin();
    for i in 1..=BIG {
        let Some(r) = t.get_for_update(a, &[Value::UInt(i)]).unwrap() else {
            continue;
        };
        let Value::Int(k) = r[1] else {
            panic!("k of row {i}: {:?}", r[1]);
        };
        if i % 200 == round {
            assert!(t.delete(a, &[Value::UInt(i)]).unwrap());
        } else {
            let new = vec![r[0].clone(), Value::Int(k + 1), r[2].clone()];
            assert!(t.update(a, &[Value::UInt(i)], new).unwrap());
        }
    }
    for j in 0..10 {
        t.insert(a, row(None, -1, &format!("big{round}-{j}")))
            .unwrap();
    }
    t.commit().unwrap();
}

fn assert_same_as_sequential_apply(e: &Engine) {
    let (replayed, _) = replay_from_empty(e);
    let live = e.snapshot();
    assert_eq!(replayed.dump(), live.dump());
    for (id, data) in replayed.tables.iter() {
        let now = live.root().table(*id).unwrap();
        assert!(data.same_index_entries(now), "indexes of table {id}");
        assert_eq!(
            data.auto_inc_next, now.auto_inc_next,
            "auto_inc_next of {id}"
        );
    }
}

#[test]
fn a_big_commit_alone_installs_its_prebuilt_tables() {
    let (e, a, _) = setup();
    // The load itself was one big commit, with nothing in between.
    assert_eq!(e.prebuilt_commits(), (1, 0));
    big_commit(&e, a, 1);
    assert_eq!(e.prebuilt_commits(), (2, 0));
    let live = e.snapshot();
    let t = live.root().table(a).unwrap();
    assert_eq!(live.root().row_count(a), BIG - BIG / 200 + 10);
    assert_eq!(t.auto_inc_next, BIG + 11);
    assert_same_as_sequential_apply(&e);
}

#[test]
fn small_commits_meanwhile_keep_the_root_of_a_sequential_apply() {
    let (e, a, b) = setup();
    for round in 0..3u64 {
        let stop = Arc::new(AtomicBool::new(false));
        let small = {
            let (e, stop) = (e.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) && n < 3_000 {
                    let mut t = e.begin();
                    // New rows of the big transaction's own table (generated ids: no
                    // conflict with its row locks) and of another table.
                    let table = if n.is_multiple_of(2) { a } else { b };
                    t.insert(table, row(None, 7, &format!("s{round}-{n}")))
                        .unwrap();
                    t.commit().unwrap();
                    n += 1;
                }
                n
            })
        };
        big_commit(&e, a, round + 2);
        stop.store(true, Ordering::Relaxed);
        assert!(small.join().unwrap() > 0);
    }
    let (installed, applied) = e.prebuilt_commits();
    assert_eq!(installed + applied, 4, "the load and three big commits");
    assert_same_as_sequential_apply(&e);
}

/// A big transaction's row locks are released by its own commit once its record is published
/// (the group's leader releases only those of small ones, `commit.rs`): a writer blocked on one
/// of its rows gets it and reads the big commit's value, and none of its locks is left once
/// its commit returns.
#[test]
fn a_big_commits_own_thread_releases_its_locks() {
    let (e, a, _) = setup();
    let mut big = e.begin();
    let id = big.id();
    for i in 1..=BIG {
        let r = big.get_for_update(a, &[Value::UInt(i)]).unwrap().unwrap();
        let new = vec![r[0].clone(), Value::Int(1_000), r[2].clone()];
        assert!(big.update(a, &[Value::UInt(i)], new).unwrap());
    }
    // Each row's key, and its value of the unique index `u_v`.
    assert_eq!(e.locks().held_by(id), 2 * BIG as usize);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::scope(|s| {
        let writer = s.spawn(|| {
            let mut t = e.begin();
            t.set_lock_wait_timeout(Duration::from_secs(60));
            tx.send(t.id()).unwrap();
            let r = t
                .get_for_update(a, &[Value::UInt(BIG / 2)])
                .unwrap()
                .unwrap();
            t.rollback();
            r[1].clone()
        });
        // Commit only once the writer is blocked on the big transaction's row.
        let writer_id = rx.recv().unwrap();
        assert!(e
            .locks()
            .wait_until_waiting(writer_id, Duration::from_secs(60)));
        big.commit().unwrap();
        assert_eq!(
            e.locks().held_by(id),
            0,
            "locks left after the commit returned"
        );
        assert_eq!(writer.join().unwrap(), Value::Int(1_000));
    });
    assert_eq!(e.prebuilt_commits(), (2, 0));
}
