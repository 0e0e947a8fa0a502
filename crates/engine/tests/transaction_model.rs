//! Seeded random transactions checked against a trivial model: after every operation, point
//! reads and range scans over the primary key, a unique and a non-unique secondary index (base
//! rows overlaid with the transaction's own changes) equal the model; savepoint rollbacks
//! restore the model's state; duplicates are refused exactly when the model has them; and the
//! committed result and a replay of the log equal the model.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;
use std::time::Duration;

use onelog_binlog::Value;
use onelog_engine::apply::apply_record;
use onelog_engine::store::Root;
use onelog_engine::{
    ColumnSpec, Engine, EngineOptions, IndexRef, IndexSpec, KeyRange, SqlType, TableId, TableSpec,
};
use onelog_log::{FileSystem, ReadStart, ReaderOptions, RecordKind, SimFs};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Model row: (id, u: unique nullable, k: non-unique).
type ModelRow = (i64, Option<i64>, i64);

fn to_row(r: &ModelRow) -> Vec<Value> {
    vec![
        Value::Int(r.0),
        r.1.map_or(Value::Null, Value::Int),
        Value::Int(r.2),
    ]
}

fn setup() -> (Arc<Engine>, TableId) {
    let fs: Arc<dyn FileSystem> = SimFs::new();
    let mut o = EngineOptions::new("/m");
    o.background_checkpoints = false;
    o.log.segment_size = 1 << 20;
    o.lock_wait_timeout = Duration::from_secs(5);
    let (e, _) = Engine::open(fs, o).unwrap();
    e.create_database("m", false, "CREATE DATABASE m").unwrap();
    let spec = TableSpec {
        db: "m".into(),
        name: "t".into(),
        columns: vec![
            ColumnSpec::new("id", SqlType::Int { unsigned: false }).not_null(),
            ColumnSpec::new("u", SqlType::Int { unsigned: false }),
            ColumnSpec::new("k", SqlType::TinyInt { unsigned: false }).not_null(),
        ],
        primary_key: vec!["id".into()],
        indexes: vec![
            IndexSpec::new("u", &["u"], true),
            IndexSpec::new("k", &["k"], false),
        ],
    };
    let t = e.create_table(spec, false, "CREATE TABLE t (...)").unwrap();
    (e, t)
}

fn unique_taken(model: &BTreeMap<i64, ModelRow>, u: Option<i64>, except: i64) -> bool {
    u.is_some() && model.values().any(|r| r.1 == u && r.0 != except)
}

fn check_reads(
    tx: &mut onelog_engine::Transaction,
    t: TableId,
    model: &BTreeMap<i64, ModelRow>,
    rng: &mut Rng,
) {
    let all: Vec<Vec<Value>> = model.values().map(to_row).collect();
    assert_eq!(
        tx.scan(t, IndexRef::Primary, KeyRange::all(), None)
            .unwrap(),
        all
    );
    let (lo, hi) = (rng.below(40) as i64, rng.below(40) as i64);
    let expect: Vec<Vec<Value>> = model
        .range(lo..=hi.max(lo))
        .map(|(_, r)| to_row(r))
        .collect();
    let got = tx
        .scan(
            t,
            IndexRef::Primary,
            KeyRange::between(vec![Value::Int(lo)], vec![Value::Int(hi.max(lo))]),
            None,
        )
        .unwrap();
    assert_eq!(got, expect);
    // Non-unique index k: order by (k, id).
    let k = rng.below(5) as i64;
    let mut expect: Vec<&ModelRow> = model.values().filter(|r| r.2 >= k).collect();
    expect.sort_by_key(|r| (r.2, r.0));
    let got = tx
        .scan(
            t,
            IndexRef::Secondary("k".into()),
            KeyRange {
                start: Bound::Included(vec![Value::Int(k)]),
                end: Bound::Unbounded,
            },
            None,
        )
        .unwrap();
    assert_eq!(got, expect.into_iter().map(to_row).collect::<Vec<_>>());
    // Unique index u: NULLs first, then by u.
    let mut expect: Vec<&ModelRow> = model.values().collect();
    expect.sort_by_key(|r| (r.1, r.0));
    let got = tx
        .scan(t, IndexRef::Secondary("u".into()), KeyRange::all(), None)
        .unwrap();
    assert_eq!(got, expect.into_iter().map(to_row).collect::<Vec<_>>());
    let id = rng.below(40) as i64;
    assert_eq!(
        tx.get(t, &[Value::Int(id)]).unwrap(),
        model.get(&id).map(to_row)
    );
}

#[test]
fn random_transactions_read_their_own_writes_like_the_model() {
    for seed in 1..=40u64 {
        let (e, t) = setup();
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let mut committed: BTreeMap<i64, ModelRow> = BTreeMap::new();
        for _round in 0..4 {
            let mut tx = e.begin();
            let mut model = committed.clone();
            let mut savepoints: Vec<(String, BTreeMap<i64, ModelRow>)> = Vec::new();
            for _ in 0..60 {
                let id = rng.below(40) as i64;
                let u = if rng.below(3) == 0 {
                    None
                } else {
                    Some(rng.below(30) as i64)
                };
                let k = rng.below(5) as i64;
                match rng.below(10) {
                    0..=3 => {
                        let r = tx.insert(t, to_row(&(id, u, k)));
                        let dup = model.contains_key(&id) || unique_taken(&model, u, id);
                        assert_eq!(r.is_err(), dup, "seed {seed}: insert {id} {u:?}: {r:?}");
                        if let Err(err) = r {
                            assert_eq!(err.code(), 1062);
                        } else {
                            model.insert(id, (id, u, k));
                        }
                    }
                    4..=5 => {
                        let new_id = if rng.below(4) == 0 {
                            rng.below(40) as i64
                        } else {
                            id
                        };
                        let r = tx.update(t, &[Value::Int(id)], to_row(&(new_id, u, k)));
                        match model.get(&id).cloned() {
                            None => assert!(!r.unwrap(), "seed {seed}"),
                            Some(_) => {
                                let dup = (new_id != id && model.contains_key(&new_id))
                                    || model
                                        .values()
                                        .any(|r| r.1.is_some() && r.1 == u && r.0 != id);
                                assert_eq!(
                                    r.is_err(),
                                    dup,
                                    "seed {seed}: update {id}->{new_id} {u:?}: {r:?}"
                                );
                                if r.is_ok() {
                                    model.remove(&id);
                                    model.insert(new_id, (new_id, u, k));
                                }
                            }
                        }
                    }
                    6 => {
                        let found = tx.delete(t, &[Value::Int(id)]).unwrap();
                        assert_eq!(found, model.remove(&id).is_some());
                    }
                    7 => {
                        let name = format!("s{}", rng.below(3));
                        savepoints.retain(|(n, _)| *n != name);
                        savepoints.push((name.clone(), model.clone()));
                        tx.savepoint(&name);
                    }
                    8 => {
                        if let Some(i) = (!savepoints.is_empty())
                            .then(|| rng.below(savepoints.len() as u64) as usize)
                        {
                            let name = savepoints[i].0.clone();
                            tx.rollback_to_savepoint(&name).unwrap();
                            model = savepoints[i].1.clone();
                            savepoints.truncate(i + 1);
                        }
                    }
                    _ => check_reads(&mut tx, t, &model, &mut rng),
                }
            }
            check_reads(&mut tx, t, &model, &mut rng);
            if rng.below(4) == 0 {
                tx.rollback();
            } else {
                tx.commit().unwrap();
                committed = model;
            }
            let dump = e.snapshot().dump();
            assert_eq!(
                dump["m.t"],
                committed.values().map(to_row).collect::<Vec<_>>(),
                "seed {seed}"
            );
        }
        let mut root = Root::empty();
        let opts = ReaderOptions {
            include_non_durable: true,
            include_state_records: false,
        };
        let mut r = e.log().reader(ReadStart::Lsn(0), opts).unwrap();
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
        assert_eq!(root.dump(), e.snapshot().dump(), "seed {seed}");
        assert_eq!(e.apply_failure(), None);
    }
}
