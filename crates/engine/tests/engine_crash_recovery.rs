//! Crash recovery of the engine on the simulated disk: power loss at the log's and the
//! checkpoint's crash points, with and without torn writes. After every crash the recovered
//! database must hold every acknowledged commit, be a prefix of the commit order (no torn
//! transaction), equal a replay of its own log from empty, and keep accepting commits.

mod common;

use std::sync::Arc;
use std::time::Duration;

use onelog_binlog::Value;
use onelog_engine::{ColumnSpec, Engine, EngineOptions, SqlType, TableId, TableSpec};
use onelog_log::{FileSystem, SimFs};

use common::{commit_step, replay_from_empty, setup};

fn options() -> EngineOptions {
    let mut o = EngineOptions::new("/data");
    o.log.segment_size = 64 << 10;
    o.background_checkpoints = false;
    o.lock_wait_timeout = Duration::from_secs(30);
    o
}

fn open(fs: &Arc<SimFs>) -> Result<Arc<Engine>, onelog_engine::EngineError> {
    let fs: Arc<dyn FileSystem> = fs.clone();
    Engine::open(fs, options()).map(|(e, _)| e)
}

/// Checks the recovered engine: rows 1..=k present for the counter's k, k >= acked.
fn check_recovered(e: &Arc<Engine>, t: TableId, acked: i64) -> i64 {
    let dump = e.snapshot().dump();
    let rows = &dump["d.t"];
    let counter: i64 = match &rows[0][1] {
        Value::Bytes(b) => String::from_utf8(b.to_vec()).unwrap().parse().unwrap(),
        v => panic!("counter {v:?}"),
    };
    assert!(
        counter >= acked,
        "acknowledged commit {acked} lost (recovered {counter})"
    );
    let ids: Vec<Value> = rows.iter().map(|r| r[0].clone()).collect();
    let expect: Vec<Value> = (0..=counter).map(Value::Int).collect();
    assert_eq!(
        ids, expect,
        "recovered rows are not the prefix of {counter} transactions"
    );
    assert_eq!(replay_from_empty(e).0.dump(), dump);
    // And it keeps working.
    commit_step(e, t, counter + 1, 180).unwrap();
    counter
}

#[test]
fn acked_commits_survive_power_loss_at_every_log_crash_point() {
    for point in [
        "commit.before_write",
        "commit.after_write",
        "commit.after_sync",
        "rotate.before_header",
        "rotate.after_header",
        "rotate.after_rename",
    ] {
        let nths = if point.starts_with("rotate") {
            [1u64, 2, 3]
        } else {
            [3, 5, 9]
        };
        for (nth, tear) in nths.into_iter().zip([false, true, true]) {
            let fs = SimFs::new();
            let e = open(&fs).unwrap();
            let t = setup(&e);
            fs.arm_crash_point(point, nth);
            let mut acked = 0;
            for i in 1..=1000 {
                if commit_step(&e, t, i, 180).is_err() {
                    break;
                }
                acked = i;
            }
            // The crash point fired (rotations happen every ~64 KiB of log).
            assert!(fs.crashed(), "{point} #{nth} never fired");
            assert!(acked < 1000);
            let fs2 = fs.reboot(nth * 31 + 7, tear);
            let e2 =
                open(&fs2).unwrap_or_else(|err| panic!("{point} #{nth}: reopen failed: {err}"));
            let recovered = check_recovered(&e2, t, acked);
            // At most the one transaction in flight at the crash is recovered beyond the acked.
            assert!(
                recovered <= acked + 1,
                "{point} #{nth}: {recovered} > {acked} + 1"
            );
        }
    }
}

#[test]
fn crash_during_a_checkpoint_recovers_from_the_previous_one_plus_the_log() {
    for point in [
        "checkpoint.after_write",
        "checkpoint.before_control_switch",
        "checkpoint.after_control_switch",
    ] {
        let fs = SimFs::new();
        let e = open(&fs).unwrap();
        let t = setup(&e);
        for i in 1..=20 {
            commit_step(&e, t, i, 180).unwrap();
        }
        e.checkpoint().unwrap();
        for i in 21..=40 {
            commit_step(&e, t, i, 180).unwrap();
        }
        fs.arm_crash_point(point, 1);
        assert!(e.checkpoint().is_err(), "{point}");
        let fs2 = fs.reboot(11, true);
        let e2 = open(&fs2).unwrap_or_else(|err| panic!("{point}: reopen failed: {err}"));
        assert_eq!(check_recovered(&e2, t, 40), 40);
        // A checkpoint after recovery works and a second recovery from it agrees.
        e2.checkpoint().unwrap();
        let live = e2.snapshot().dump();
        let fs3 = fs2.reboot(12, false);
        let e3 = open(&fs3).unwrap();
        assert_eq!(e3.snapshot().dump(), live);
    }
}

#[test]
fn concurrent_transfers_keep_the_total_and_replay_to_the_live_state() {
    let fs = SimFs::new();
    let e = open(&fs).unwrap();
    e.create_database("bank", false, "CREATE DATABASE bank")
        .unwrap();
    let spec = TableSpec {
        db: "bank".into(),
        name: "acct".into(),
        columns: vec![
            ColumnSpec::new("id", SqlType::Int { unsigned: false }).not_null(),
            ColumnSpec::new("balance", SqlType::BigInt { unsigned: false }).not_null(),
        ],
        primary_key: vec!["id".into()],
        indexes: vec![],
    };
    let t = e
        .create_table(spec, false, "CREATE TABLE acct (...)")
        .unwrap();
    let accounts = 8i64;
    let mut tx = e.begin();
    for i in 0..accounts {
        tx.insert(t, vec![Value::Int(i), Value::Int(1000)]).unwrap();
    }
    tx.commit().unwrap();

    let threads: Vec<_> = (0..4u64)
        .map(|w| {
            let e = e.clone();
            std::thread::spawn(move || {
                let mut seed = w * 7919 + 1;
                let mut next = move || {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    seed
                };
                let mut done = 0;
                let mut deadlocks = 0;
                while done < 50 {
                    let a = (next() % accounts as u64) as i64;
                    let b = (next() % accounts as u64) as i64;
                    if a == b {
                        continue;
                    }
                    let amount = (next() % 10) as i64;
                    let mut tx = e.begin();
                    let r = (|| {
                        let ra = tx.get_for_update(t, &[Value::Int(a)])?.unwrap();
                        let rb = tx.get_for_update(t, &[Value::Int(b)])?.unwrap();
                        let (Value::Int(ba), Value::Int(bb)) = (&ra[1], &rb[1]) else {
                            unreachable!()
                        };
                        tx.update(
                            t,
                            &[Value::Int(a)],
                            vec![Value::Int(a), Value::Int(ba - amount)],
                        )?;
                        tx.update(
                            t,
                            &[Value::Int(b)],
                            vec![Value::Int(b), Value::Int(bb + amount)],
                        )?;
                        Ok::<_, onelog_engine::EngineError>(())
                    })();
                    match r {
                        Ok(()) => {
                            tx.commit().unwrap();
                            done += 1;
                        }
                        Err(err) => {
                            assert_eq!(err.code(), 1213, "{err}");
                            deadlocks += 1;
                        }
                    }
                }
                deadlocks
            })
        })
        .collect();
    for th in threads {
        th.join().unwrap();
    }
    let dump = e.snapshot().dump();
    let total: i64 = dump["bank.acct"]
        .iter()
        .map(|r| match r[1] {
            Value::Int(v) => v,
            _ => 0,
        })
        .sum();
    assert_eq!(total, 1000 * accounts);
    assert_eq!(replay_from_empty(&e).0.dump(), dump);
    assert_eq!(e.apply_failure(), None);
    let fs2 = fs.reboot(99, true);
    let e2 = open(&fs2).unwrap();
    assert_eq!(e2.snapshot().dump(), dump);
}

#[test]
fn power_loss_at_durability_levels_0_and_2_recovers_a_consistent_prefix() {
    for level in [0u8, 2] {
        for (seed, tear) in [(1u64, false), (2, true), (3, true)] {
            let fs = SimFs::new();
            let mut o = options();
            o.log.durability = onelog_log::Durability::from_level(level).unwrap();
            o.log.flush_interval = Duration::from_secs(3600);
            let fsd: Arc<dyn FileSystem> = fs.clone();
            let (e, _) = Engine::open(fsd, o).unwrap();
            let t = setup(&e);
            e.log().flush().unwrap();
            for i in 1..=100 {
                commit_step(&e, t, i, 180).unwrap();
                if i == 40 {
                    e.log().flush().unwrap();
                }
            }
            fs.crash_now();
            let fs2 = fs.reboot(seed, tear);
            let e2 = open(&fs2).unwrap();
            // Everything flushed survives; the rest is an all-or-nothing prefix.
            let recovered = check_recovered(&e2, t, 40);
            assert!(recovered <= 100, "level {level}: {recovered}");
        }
    }
}

/// ALTER TABLE's one change (`CatalogChange::AlterTable`) replays from the log alone: after a
/// power loss with no checkpoint since, the recovered table has the new definition and the
/// copied rows (values converted, clipped and moved as at the ALTER), equal to a replay from
/// empty, and takes new rows under its new primary key.
#[test]
fn an_alter_table_replays_from_the_log_after_power_loss() {
    use onelog_engine::ColumnSource;
    let fs = SimFs::new();
    let e = open(&fs).unwrap();
    let t = setup(&e);
    for i in 1..=3 {
        commit_step(&e, t, i, 0).unwrap();
    }
    let old = e.snapshot().catalog().table(t).unwrap().clone();
    // New: `n TINYINT` first, filled from id (clipped to 127 when not strict), then id, then
    // payload as VARCHAR(3) (cut); the primary key stays on id.
    let mut new = (*old).clone();
    let mut n = ColumnSpec::new("n", SqlType::TinyInt { unsigned: false });
    n.nullable = true;
    new.columns
        .insert(0, onelog_engine::ColumnDef::from_spec(&n).unwrap());
    new.columns[2].ty = SqlType::VarChar(3);
    new.primary_key = vec![1];
    let sources = vec![
        ColumnSource::Old(0),
        ColumnSource::Old(0),
        ColumnSource::Old(1),
    ];
    let conds = e
        .alter_table(
            &old,
            new,
            onelog_engine::alter::AlterPlan {
                sources,
                strict: false,
                auto_increment: None,
            },
            "ALTER TABLE t ...",
        )
        .unwrap();
    // 'row 1 ' etc. cut to 3 characters: one 1265 warning per such row (row 0, the counter,
    // holds '3', which fits).
    assert_eq!(conds.len(), 3);
    assert!(conds.iter().all(|c| c.error.error_code().code == 1265));
    let want: Vec<Vec<Value>> = (0..=3)
        .map(|i| {
            let p = if i == 0 { "3" } else { "row" };
            vec![Value::Int(i), Value::Int(i), Value::bytes(p.as_bytes())]
        })
        .collect();
    assert_eq!(e.snapshot().dump()["d.t"], want);
    let fs2 = fs.reboot(11, false);
    let e2 = open(&fs2).unwrap();
    let dump = e2.snapshot().dump();
    assert_eq!(dump["d.t"], want);
    assert_eq!(replay_from_empty(&e2).0.dump(), dump);
    let mut tx = e2.begin();
    tx.insert(t, vec![Value::Int(5), Value::Int(4), Value::bytes(b"x")])
        .unwrap();
    tx.commit().unwrap();
    assert_eq!(e2.snapshot().dump()["d.t"].len(), 5);
}

/// Views (`CatalogChange::CreateView` / `RenameViews` / `DropViews`) replay from the log alone:
/// after a power loss with no checkpoint since, the recovered catalog has the views as they
/// were last changed, equal to a replay from empty.
#[test]
fn views_replay_from_the_log_after_power_loss() {
    use onelog_engine::{ViewAlgorithm, ViewCheck, ViewDef};
    let fs = SimFs::new();
    let e = open(&fs).unwrap();
    setup(&e);
    let view = |name: &str, query: &str| ViewDef {
        db: "d".into(),
        name: name.into(),
        columns: vec!["id".into()],
        query: query.into(),
        query_db: "d".into(),
        algorithm: ViewAlgorithm::Undefined,
        definer: ("root".into(), "localhost".into()),
        invoker: false,
        check: ViewCheck::None,
    };
    e.create_view(
        "d",
        view("v", "select id from t"),
        false,
        false,
        "CREATE VIEW v ...",
    )
    .unwrap();
    e.create_view(
        "d",
        view("w", "select 1 as id"),
        false,
        false,
        "CREATE VIEW w ...",
    )
    .unwrap();
    e.create_view(
        "d",
        view("v", "select id from t where id > 1"),
        true,
        false,
        "ALTER VIEW v",
    )
    .unwrap();
    e.rename_views(
        "d",
        vec![("d".into(), "v".into(), "d".into(), "v2".into())],
        "RENAME TABLE v TO v2",
    )
    .unwrap();
    e.drop_views("d", vec![("d".into(), "w".into())], "DROP VIEW w")
        .unwrap();
    let fs2 = fs.reboot(7, false);
    let e2 = open(&fs2).unwrap();
    let snap = e2.snapshot();
    let cat = snap.catalog();
    let names: Vec<&str> = cat.views().map(|v| v.name.as_str()).collect();
    assert_eq!(names, vec!["v2"]);
    assert_eq!(
        cat.view("d", "v2").unwrap().query,
        "select id from t where id > 1"
    );
    let (replayed, _) = replay_from_empty(&e2);
    assert_eq!(*replayed.catalog, **cat);
}
