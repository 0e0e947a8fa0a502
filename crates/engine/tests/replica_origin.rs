//! The engine's replica side: replicated row groups keep their GTID and move
//! `gtid_slave_pos` (recovered from the log and from checkpoints), the sink refuses a group
//! that does not apply (and every later one until cleared), `gtid_strict_mode` refuses an
//! out-of-order GTID with 1950, a session origin fixes the next GTID, and
//! `gtid_current_pos` follows MariaDB's rule.

use std::sync::Arc;
use std::time::Duration;

use onelog_binlog::{Gtid, GtidPos, Value};
use onelog_engine::{
    ColumnSpec, CommitOrigin, Engine, EngineOptions, IndexRef, KeyRange, SqlType, TableSpec,
};
use onelog_log::{FileSystem, ReadStart, ReaderOptions, RecordKind, SimFs};

fn options(server_id: u32) -> EngineOptions {
    let mut o = EngineOptions::new("/data");
    o.log.segment_size = 256 << 10;
    o.background_checkpoints = false;
    o.server_id = server_id;
    o
}

fn open(fs: &Arc<SimFs>, o: EngineOptions) -> Arc<Engine> {
    let fs: Arc<dyn FileSystem> = fs.clone();
    Engine::open(fs, o).unwrap().0
}

fn spec() -> TableSpec {
    TableSpec {
        db: "d".into(),
        name: "t".into(),
        columns: vec![
            ColumnSpec::new("id", SqlType::Int { unsigned: false }).not_null(),
            ColumnSpec::new("v", SqlType::Int { unsigned: false }),
        ],
        primary_key: vec!["id".into()],
        indexes: vec![],
    }
}

/// The event groups of `e`'s Transaction records, in log order.
fn transactions(e: &Engine) -> Vec<Vec<u8>> {
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
    let mut out = Vec::new();
    while let Some(rec) = r.next().unwrap() {
        if rec.kind == RecordKind::Transaction {
            out.push(rec.events.clone());
        }
    }
    out
}

fn rows(e: &Arc<Engine>) -> Vec<Vec<Value>> {
    let id = e.catalog().table_by_name("d", "t").unwrap().id;
    let mut txn = e.begin();
    let out = txn
        .scan(id, IndexRef::Primary, KeyRange::all(), None)
        .unwrap()
        .into_iter()
        .map(|r| r.to_vec())
        .collect();
    txn.rollback();
    out
}

/// A primary (server id 1) with database `d` and table `t` (GTIDs 1 and 2), and `t`'s id.
fn primary_with_table(fs: &Arc<SimFs>) -> (Arc<Engine>, onelog_engine::TableId) {
    let primary = open(fs, options(1));
    primary
        .create_database("d", false, "CREATE DATABASE d")
        .unwrap();
    primary
        .create_table(spec(), false, "CREATE TABLE t")
        .unwrap();
    let t = primary.catalog().table_by_name("d", "t").unwrap().id;
    (primary, t)
}

/// The replica gets the primary's DDL with the primary's GTIDs (as a replica's statement
/// path does, through an origin).
fn replicate_schema(replica: &Engine) {
    let o = |seq| CommitOrigin {
        domain_id: Some(0),
        server_id: Some(1),
        seq_no: Some(seq),
        replicated: true,
        timestamp: None,
    };
    replica
        .with_origin(o(1), || {
            replica.create_database("d", false, "CREATE DATABASE d")
        })
        .0
        .unwrap();
    replica
        .with_origin(o(2), || {
            replica.create_table(spec(), false, "CREATE TABLE t")
        })
        .0
        .unwrap();
}

#[test]
fn replicated_groups_keep_their_gtids_and_move_the_slave_position() {
    let pfs = Arc::new(SimFs::new());
    let (primary, t) = primary_with_table(&pfs);
    for i in 1..=5 {
        let mut txn = primary.begin();
        txn.insert(t, vec![Value::Int(i), Value::Int(i * 10)])
            .unwrap();
        txn.commit().unwrap();
    }
    let mut txn = primary.begin();
    txn.update(t, &[Value::Int(2)], vec![Value::Int(2), Value::Int(99)])
        .unwrap();
    txn.delete(t, &[Value::Int(3)]).unwrap();
    txn.commit().unwrap();

    let rfs = Arc::new(SimFs::new());
    let replica = open(&rfs, options(2));
    replicate_schema(&replica);
    assert_eq!(replica.gtid_slave_pos().to_string(), "0-1-2");
    assert_eq!(Engine::thread_last_gtid(), Some(Gtid::new(0, 1, 2)));
    let queued = std::sync::atomic::AtomicUsize::new(0);
    for g in transactions(&primary) {
        let r = replica
            .apply_replicated_rows(&g, &|| {
                queued.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            })
            .unwrap();
        assert_eq!(r.gtid.server_id, 1);
    }
    assert_eq!(queued.load(std::sync::atomic::Ordering::SeqCst), 6);
    assert_eq!(rows(&replica), rows(&primary));
    assert_eq!(replica.gtid_slave_pos().to_string(), "0-1-8");
    assert_eq!(replica.log().gtid_state().pos().to_string(), "0-1-8");
    // Own-server GTIDs older than the slave position do not enter gtid_current_pos.
    assert_eq!(replica.gtid_current_pos().to_string(), "0-1-8");

    // Recovery rebuilds the position from the log, then from a checkpoint plus the log.
    replica.shutdown().unwrap();
    drop(replica);
    let replica = open(&rfs, options(2));
    assert_eq!(replica.gtid_slave_pos().to_string(), "0-1-8");
    replica.checkpoint().unwrap();
    replica.shutdown().unwrap();
    drop(replica);
    let replica = open(&rfs, options(2));
    assert_eq!(replica.gtid_slave_pos().to_string(), "0-1-8");
    assert_eq!(rows(&replica), rows(&primary));

    // A local commit on the replica moves gtid_binlog_pos and gtid_current_pos, not the
    // slave position.
    let t2 = replica.catalog().table_by_name("d", "t").unwrap().id;
    let mut txn = replica.begin();
    txn.insert(t2, vec![Value::Int(100), Value::Int(1)])
        .unwrap();
    txn.commit().unwrap();
    assert_eq!(replica.gtid_slave_pos().to_string(), "0-1-8");
    assert_eq!(replica.log().gtid_state().pos().to_string(), "0-2-9");
    assert_eq!(replica.gtid_current_pos().to_string(), "0-2-9");
}

#[test]
fn a_group_that_does_not_apply_is_refused_with_everything_after_it_until_cleared() {
    let pfs = Arc::new(SimFs::new());
    let (primary, t) = primary_with_table(&pfs);
    for i in 1..=3 {
        let mut txn = primary.begin();
        txn.insert(t, vec![Value::Int(i), Value::Int(0)]).unwrap();
        txn.commit().unwrap();
    }
    let mut txn = primary.begin();
    txn.update(t, &[Value::Int(1)], vec![Value::Int(1), Value::Int(5)])
        .unwrap();
    txn.commit().unwrap();
    let groups = transactions(&primary);

    let rfs = Arc::new(SimFs::new());
    let replica = open(&rfs, options(2));
    replicate_schema(&replica);
    // The update of row 1 before its insert: refused, nothing logged.
    let before = replica.log().end_lsn();
    let e = replica
        .apply_replicated_rows(&groups[3], &|| {})
        .unwrap_err();
    assert_eq!(e.code(), 1032, "{e}");
    assert!(
        e.to_string().contains("update of a missing row in d.t"),
        "{e}"
    );
    assert_eq!(replica.log().end_lsn(), before);
    // Every later replicated group is refused until the replica clears the refusal.
    let e = replica
        .apply_replicated_rows(&groups[0], &|| {})
        .unwrap_err();
    assert!(
        e.to_string().contains("an earlier replicated transaction"),
        "{e}"
    );
    replica.clear_replica_refusal();
    for g in &groups {
        replica.apply_replicated_rows(g, &|| {}).unwrap();
    }
    assert_eq!(rows(&replica), rows(&primary));
    assert_eq!(replica.gtid_slave_pos().to_string(), "0-1-6");
}

#[test]
fn strict_mode_refuses_an_out_of_order_gtid_with_1950() {
    let fs = Arc::new(SimFs::new());
    let e = open(&fs, options(1));
    e.create_database("a", false, "CREATE DATABASE a").unwrap();
    e.create_database("b", false, "CREATE DATABASE b").unwrap();
    let fixed = |seq| CommitOrigin {
        seq_no: Some(seq),
        ..CommitOrigin::default()
    };
    // Without strict mode an out-of-order GTID is logged (MariaDB does the same).
    let (r, after) = e.with_origin(fixed(1), || {
        e.create_database("c", false, "CREATE DATABASE c")
    });
    r.unwrap();
    assert_eq!(after.seq_no, None, "a fixed seq_no is used once");
    assert_eq!(e.log().gtid_state().pos().to_string(), "0-1-1");
    e.set_gtid_strict_mode(true);
    assert!(e.gtid_strict_mode());
    let (r, _) = e.with_origin(fixed(2), || {
        e.create_database("x", false, "CREATE DATABASE x")
    });
    let err = r.unwrap_err();
    assert_eq!(err.code(), 1950);
    assert_eq!(
        err.to_string(),
        "An attempt was made to binlog GTID 0-1-2 which would create an out-of-order sequence \
         number with existing GTID 0-1-1, and gtid strict mode is enabled"
    );
    assert!(!e.catalog().has_database("x"));
    // The next GTID of the domain is still assigned above the highest one.
    e.create_database("y", false, "CREATE DATABASE y").unwrap();
    assert_eq!(e.log().gtid_state().pos().to_string(), "0-1-3");
}

#[test]
fn set_gtid_slave_pos_is_durable_and_wakes_waiters() {
    let fs = Arc::new(SimFs::new());
    let e = open(&fs, options(2));
    let pos: GtidPos = "0-1-102,3-1-50".parse().unwrap();
    let waiter = {
        let e = e.clone();
        std::thread::spawn(move || {
            e.wait_slave_pos(
                &|p| p.get(3).is_some_and(|g| g.seq_no >= 50),
                Duration::from_secs(20),
            )
        })
    };
    std::thread::sleep(Duration::from_millis(50));
    e.set_gtid_slave_pos(pos.clone()).unwrap();
    assert!(waiter.join().unwrap());
    assert!(!e.wait_slave_pos(&|p| p.get(9).is_some(), Duration::from_millis(10)));
    // Own-server binlog GTIDs newer than the slave position win in gtid_current_pos;
    // foreign-server-only domains stay out (REPLICATION_FACTS.md §2.1, captured).
    let fixed = |d, s, q| CommitOrigin {
        domain_id: Some(d),
        server_id: Some(s),
        seq_no: Some(q),
        ..CommitOrigin::default()
    };
    let mut n = 0;
    for (d, s, q) in [(0, 2, 103), (3, 2, 10), (7, 2, 1), (8, 77, 1)] {
        n += 1;
        let name = format!("db{n}");
        e.with_origin(fixed(d, s, q), || {
            e.create_database(&name, false, "CREATE DATABASE")
        })
        .0
        .unwrap();
    }
    assert_eq!(e.gtid_current_pos().to_string(), "0-2-103,3-1-50,7-2-1");
    e.shutdown().unwrap();
    drop(e);
    let e = open(&fs, options(2));
    assert_eq!(e.gtid_slave_pos(), pos);
}

#[test]
fn prepared_groups_commit_in_order_once_each_and_are_decoded_again_after_a_ddl() {
    let pfs = Arc::new(SimFs::new());
    let (primary, t) = primary_with_table(&pfs);
    for i in 1..=40 {
        let mut txn = primary.begin();
        txn.insert(t, vec![Value::Int(i), Value::Int(i)]).unwrap();
        if i > 1 {
            txn.update(
                t,
                &[Value::Int(i - 1)],
                vec![Value::Int(i - 1), Value::Int(-i)],
            )
            .unwrap();
        }
        txn.commit().unwrap();
    }
    let groups = transactions(&primary);
    assert_eq!(groups.len(), 40);

    let rfs = Arc::new(SimFs::new());
    let replica = open(&rfs, options(2));
    replicate_schema(&replica);
    // Every group prepared (decoded, its record encoded) before any is committed, as the
    // replica's workers do before their turn.
    let mut prepared: Vec<_> = groups[..30]
        .iter()
        .map(|g| (g, replica.prepare_replicated_rows(g).unwrap()))
        .collect();
    let before = replica.admitted_applied();
    for (g, p) in prepared.drain(..20) {
        replica.commit_prepared_rows(g, p, &|| {}).unwrap();
    }
    // Each applied once: the root the admission built was published as it was.
    assert_eq!(replica.admitted_applied() - before, 20);
    assert_eq!(replica.gtid_slave_pos().to_string(), "0-1-22");
    // A DDL moves the catalog after the last ten were prepared: they are decoded again.
    let mut other = spec();
    other.name = "u".into();
    replica
        .create_table(other, false, "CREATE TABLE u")
        .unwrap();
    for (g, p) in prepared {
        replica.commit_prepared_rows(g, p, &|| {}).unwrap();
    }
    for g in &groups[30..] {
        replica.apply_replicated_rows(g, &|| {}).unwrap();
    }
    assert_eq!(rows(&replica), rows(&primary));
    assert_eq!(replica.gtid_slave_pos().to_string(), "0-1-42");
    // The log holds each row group once, in the primary's order (1 and 2 are the schema's
    // DDL records), and recovery agrees.
    let logged: Vec<_> = transactions(&replica)
        .iter()
        .filter_map(|g| onelog_binlog::event::GtidEvent::decode(g).ok())
        .filter(|g| g.gtid.server_id == 1)
        .map(|g| g.gtid.seq_no)
        .collect();
    assert_eq!(logged, (3..=42).collect::<Vec<u64>>());
    replica.shutdown().unwrap();
    drop(replica);
    let replica = open(&rfs, options(2));
    assert_eq!(rows(&replica), rows(&primary));
    assert_eq!(replica.gtid_slave_pos().to_string(), "0-1-42");
}

#[test]
fn replicated_commits_do_not_wait_for_their_sync_and_local_ones_do() {
    // Every fsync fails from here on: a commit acknowledged before its sync returns Ok, one
    // that waits for its sync gets the failure (and the log refuses everything after it).
    let fs = Arc::new(SimFs::new());
    let mut o = options(2);
    o.log.flush_interval = Duration::from_secs(3600);
    let replica = open(&fs, o);
    replicate_schema(&replica);
    let t = replica.catalog().table_by_name("d", "t").unwrap().id;
    fs.fail_fsyncs(true);
    // A statement group of the replica: a session transaction under a replicated origin.
    let origin = CommitOrigin {
        domain_id: Some(0),
        server_id: Some(1),
        seq_no: Some(3),
        replicated: true,
        timestamp: None,
    };
    let (r, _) = replica.with_origin(origin, || {
        let mut txn = replica.begin();
        txn.insert(t, vec![Value::Int(1), Value::Int(1)]).unwrap();
        txn.commit()
    });
    let end = r.unwrap().expect("the transaction changed rows").end_lsn;
    assert!(replica.log().durable_lsn() < end);
    assert_eq!(replica.gtid_slave_pos().to_string(), "0-1-3");
    // A local commit waits for its sync, which fails.
    let mut txn = replica.begin();
    txn.insert(t, vec![Value::Int(2), Value::Int(2)]).unwrap();
    assert!(txn.commit().is_err());
    assert!(replica.log().durable_lsn() < end);
}
