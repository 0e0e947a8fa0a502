//! Semi-sync replication, primary side, in the engine (no network): the dump thread's part is
//! played by the test, which acknowledges log positions with `SemiSync::ack`.
//!
//! Waits for another thread are bounded polls of `Rpl_semi_sync_master_wait_sessions` (at most
//! `POLL_LIMIT`), never sleeps used as synchronisation; no test asserts a time.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use onelog_binlog::Value;
use onelog_engine::{
    ColumnSpec, CommitWaiter, Engine, EngineEvent, EngineOptions, SemiSyncEvent, SqlType, TableId,
    TableSpec, WaitPoint,
};
use onelog_log::{FileSystem, SimFs};

/// Longest a test waits for another thread to reach a state.
const POLL_LIMIT: Duration = Duration::from_secs(20);
/// Long enough never to expire while a test acts (tests of release paths, not of timeouts).
const LONG_TIMEOUT: Duration = Duration::from_secs(60);

fn open() -> Arc<Engine> {
    let mut o = EngineOptions::new("/data");
    o.log.segment_size = 256 << 10;
    o.background_checkpoints = false;
    let fs: Arc<dyn FileSystem> = SimFs::new();
    Engine::open(fs, o).unwrap().0
}

/// `d.t (id BIGINT PK)`.
fn table(e: &Engine) -> TableId {
    e.create_database("d", false, "CREATE DATABASE d").unwrap();
    let spec = TableSpec {
        db: "d".into(),
        name: "t".into(),
        columns: vec![ColumnSpec::new("id", SqlType::BigInt { unsigned: false }).not_null()],
        primary_key: vec!["id".into()],
        indexes: vec![],
    };
    e.create_table(spec, false, "CREATE TABLE t (id BIGINT PRIMARY KEY)")
        .unwrap()
}

/// The ids a new reader sees in `d.t`.
fn visible(e: &Engine) -> Vec<i64> {
    e.snapshot()
        .dump()
        .get("d.t")
        .map(|rows| {
            rows.iter()
                .map(|r| match r[0] {
                    Value::Int(i) => i,
                    ref v => panic!("unexpected {v:?}"),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Commits row `id` in a thread of its own; joins to the commit's end LSN.
fn commit_in_thread(e: &Arc<Engine>, t: TableId, id: i64) -> thread::JoinHandle<u64> {
    let e = e.clone();
    thread::spawn(move || {
        let mut tx = e.begin();
        tx.insert(t, vec![Value::Int(id)]).unwrap();
        tx.commit().unwrap().unwrap().end_lsn
    })
}

/// Polls until `n` committers wait for an ack; panics after `POLL_LIMIT`.
fn until_waiting(e: &Engine, n: u64) {
    let start = Instant::now();
    while e.semisync().status().wait_sessions < n {
        assert!(
            start.elapsed() < POLL_LIMIT,
            "never {n} waiters: {:?}",
            e.semisync().status()
        );
        thread::yield_now();
        thread::sleep(Duration::from_millis(1));
    }
}

/// Collects the semi-sync events the engine reports.
fn record_events(e: &Engine) -> Arc<Mutex<Vec<SemiSyncEvent>>> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    e.set_reporter(Arc::new(move |ev: &EngineEvent| {
        if let EngineEvent::SemiSync(x) = ev {
            s.lock().unwrap().push(x.clone());
        }
    }));
    seen
}

fn enable(e: &Engine, wp: WaitPoint, timeout: Duration) {
    let s = e.semisync();
    s.set_wait_point(wp);
    s.set_timeout(timeout);
    s.set_enabled(true);
    assert!(s.status().status, "enabling turns the status ON");
}

#[test]
fn after_sync_hides_a_commit_from_other_sessions_until_a_replica_acks_it() {
    let e = open();
    let t = table(&e);
    let _replica = e.semisync().add_client();
    enable(&e, WaitPoint::AfterSync, LONG_TIMEOUT);

    let a = commit_in_thread(&e, t, 1);
    until_waiting(&e, 1);
    // Durable, waiting for its ack: no other session sees it yet, and its row lock is held.
    assert_eq!(visible(&e), Vec::<i64>::new());
    // The log keeps working: a second commit is written and synced behind the first.
    let b = commit_in_thread(&e, t, 2);
    until_waiting(&e, 2);
    assert_eq!(visible(&e), Vec::<i64>::new());
    let end = e.log().end_lsn();
    assert!(e.log().durable_lsn() >= end, "both groups are durable");
    assert!(
        e.semisync().wants_ack(end),
        "the newest end asks for an ack"
    );

    e.semisync().ack(end, 2);
    let (ea, eb) = (a.join().unwrap(), b.join().unwrap());
    assert!(ea < eb && eb == end);
    assert_eq!(visible(&e), vec![1, 2]);
    let st = e.semisync().status();
    assert_eq!((st.yes_tx, st.no_tx, st.wait_sessions), (2, 0, 0));
    assert_eq!((st.request_ack, st.get_ack, st.tx_waits), (2, 1, 2));
    assert!(
        !e.semisync().wants_ack(end),
        "acknowledged: no second request"
    );
}

#[test]
fn after_sync_ack_below_a_commit_releases_only_the_commits_up_to_it() {
    let e = open();
    let t = table(&e);
    let _replica = e.semisync().add_client();
    enable(&e, WaitPoint::AfterSync, LONG_TIMEOUT);
    let a = commit_in_thread(&e, t, 1);
    until_waiting(&e, 1);
    let first_end = e.log().end_lsn();
    let b = commit_in_thread(&e, t, 2);
    until_waiting(&e, 2);

    e.semisync().ack(first_end, 2);
    assert_eq!(a.join().unwrap(), first_end);
    assert_eq!(
        visible(&e),
        vec![1],
        "the second commit is not acknowledged yet"
    );
    let end = e.log().end_lsn();
    e.semisync().ack(end, 2);
    assert_eq!(b.join().unwrap(), end);
    assert_eq!(visible(&e), vec![1, 2]);
}

#[test]
fn after_commit_shows_the_commit_while_its_client_still_waits() {
    let e = open();
    let t = table(&e);
    let _replica = e.semisync().add_client();
    enable(&e, WaitPoint::AfterCommit, LONG_TIMEOUT);

    let a = commit_in_thread(&e, t, 1);
    until_waiting(&e, 1);
    assert_eq!(visible(&e), vec![1], "visible before the ack");
    assert!(
        !a.is_finished(),
        "the committing client is not answered yet"
    );
    let end = e.log().end_lsn();
    e.semisync().ack(end, 7);
    assert_eq!(a.join().unwrap(), end);
    let st = e.semisync().status();
    assert_eq!((st.yes_tx, st.no_tx), (1, 0));
}

/// AFTER_COMMIT releases a transaction's row locks when it becomes visible, before its client
/// waits, as for a small one: a big transaction's locks (which its own thread releases, not the
/// group's leader: `commit.rs`) are free while it waits for the ack.
#[test]
fn after_commit_frees_a_big_transactions_rows_while_its_client_waits() {
    const BIG: i64 = 20_000; // above the prebuild threshold (16,384 changes)
    let e = open();
    let t = table(&e);
    let _replica = e.semisync().add_client();
    enable(&e, WaitPoint::AfterCommit, LONG_TIMEOUT);
    let big = {
        let e = e.clone();
        thread::spawn(move || {
            let mut tx = e.begin();
            for id in 1..=BIG {
                tx.insert(t, vec![Value::Int(id)]).unwrap();
            }
            tx.commit().unwrap().unwrap().end_lsn
        })
    };
    until_waiting(&e, 1);
    assert!(
        !big.is_finished(),
        "the big commit's client is not answered yet"
    );
    // No lock wait: a row the big transaction still held would refuse at once.
    let mut other = e.begin();
    other.set_lock_wait_timeout(Duration::ZERO);
    let row = other.get_for_update(t, &[Value::Int(BIG / 2)]).unwrap();
    assert_eq!(row.as_deref(), Some(&[Value::Int(BIG / 2)][..]));
    other.rollback();
    let end = e.log().end_lsn();
    e.semisync().ack(end, 7);
    assert_eq!(big.join().unwrap(), end);
}

#[test]
fn a_timeout_switches_semi_sync_off_and_a_caught_up_replica_switches_it_on() {
    let e = open();
    let t = table(&e);
    let events = record_events(&e);
    let _replica = e.semisync().add_client();
    enable(&e, WaitPoint::AfterSync, Duration::from_millis(100));

    // Nobody acks: the commit waits its timeout, then becomes visible and returns.
    let end1 = commit_in_thread(&e, t, 1).join().unwrap();
    assert_eq!(visible(&e), vec![1]);
    let st = e.semisync().status();
    assert!(!st.status, "the timeout switched semi-sync OFF");
    assert_eq!((st.no_tx, st.yes_tx, st.no_times), (1, 0, 1));
    // While OFF nobody waits, and the newest commit asks for an ack.
    let end2 = commit_in_thread(&e, t, 2).join().unwrap();
    assert_eq!(e.semisync().status().no_tx, 2);
    assert!(!e.semisync().wants_ack(end1), "behind the newest commit");
    assert!(e.semisync().wants_ack(end2));

    e.semisync().ack(end1, 5);
    assert!(!e.semisync().status().status, "not caught up yet");
    e.semisync().ack(end2, 5);
    assert!(e.semisync().status().status, "caught up: ON again");
    let ev = events.lock().unwrap().clone();
    let texts: Vec<String> = ev.iter().map(|x| x.to_string()).collect();
    assert_eq!(
        texts,
        vec![
            "Semi-sync replication enabled on the master.".to_string(),
            format!(
                "Timeout waiting for reply of binlog (file: , pos: {end1}), semi-sync up to \
                 file , position 0."
            ),
            "Semi-sync replication switched OFF.".to_string(),
            format!("Semi-sync replication switched ON with slave (server_id: 5) at (, {end2})"),
        ]
    );
    assert!(ev[1].is_warning() && !ev[2].is_warning());

    // ON again: the next commit waits for its ack once more.
    let c = commit_in_thread(&e, t, 3);
    until_waiting(&e, 1);
    assert_eq!(visible(&e), vec![1, 2]);
    e.semisync().ack(e.log().end_lsn(), 5);
    c.join().unwrap();
    assert_eq!(visible(&e), vec![1, 2, 3]);
    assert_eq!(e.semisync().status().yes_tx, 1);
}

#[test]
fn without_wait_no_slave_a_commit_with_no_replica_does_not_wait() {
    let e = open();
    let t = table(&e);
    e.semisync().set_wait_no_slave(false);
    enable(&e, WaitPoint::AfterSync, Duration::from_millis(300));
    commit_in_thread(&e, t, 1).join().unwrap();
    assert_eq!(visible(&e), vec![1]);
    let st = e.semisync().status();
    // Had it waited, its timeout would have switched the status OFF.
    assert!(st.status);
    assert_eq!((st.no_tx, st.no_times, st.yes_tx, st.clients), (1, 0, 0, 0));
}

#[test]
fn the_last_replica_leaving_releases_the_waiters_without_wait_no_slave() {
    let e = open();
    let t = table(&e);
    e.semisync().set_wait_no_slave(false);
    let replica = e.semisync().add_client();
    assert_eq!(e.semisync().status().clients, 1);
    enable(&e, WaitPoint::AfterSync, LONG_TIMEOUT);
    let a = commit_in_thread(&e, t, 1);
    until_waiting(&e, 1);
    assert_eq!(visible(&e), Vec::<i64>::new());
    drop(replica);
    a.join().unwrap();
    assert_eq!(visible(&e), vec![1]);
    let st = e.semisync().status();
    assert_eq!((st.clients, st.no_tx, st.yes_tx, st.no_times), (0, 1, 0, 0));
    assert!(st.status, "released, not timed out");
}

#[test]
fn a_killed_waiter_stops_waiting_without_an_error() {
    let e = open();
    let t = table(&e);
    let _replica = e.semisync().add_client();
    enable(&e, WaitPoint::AfterSync, LONG_TIMEOUT);
    let killed = Arc::new(AtomicBool::new(false));
    let a = {
        let (e, killed) = (e.clone(), killed.clone());
        thread::spawn(move || {
            let mut tx = e.begin();
            tx.insert(t, vec![Value::Int(1)]).unwrap();
            tx.commit_interruptible(&|| killed.load(Ordering::Relaxed))
        })
    };
    until_waiting(&e, 1);
    killed.store(true, Ordering::Relaxed);
    assert!(a.join().unwrap().unwrap().is_some(), "committed, no error");
    assert_eq!(visible(&e), vec![1]);
    let st = e.semisync().status();
    assert!(st.status, "a kill does not switch semi-sync off");
    assert_eq!((st.no_tx, st.yes_tx, st.wait_sessions), (1, 0, 0));
}

#[test]
fn disabling_releases_waiters_and_costs_commits_nothing_afterwards() {
    let e = open();
    let t = table(&e);
    let _replica = e.semisync().add_client();
    enable(&e, WaitPoint::AfterSync, LONG_TIMEOUT);
    let a = commit_in_thread(&e, t, 1);
    until_waiting(&e, 1);
    e.semisync().set_enabled(false);
    a.join().unwrap();
    assert_eq!(visible(&e), vec![1]);
    let st = e.semisync().status();
    assert!(!st.status);
    assert_eq!((st.no_tx, st.no_times), (1, 1));
    // Disabled: commits neither wait nor count, and nothing asks for acks.
    let end = commit_in_thread(&e, t, 2).join().unwrap();
    assert_eq!(e.semisync().status().no_tx, 1);
    assert!(!e.semisync().wants_ack(end));
    assert_eq!(visible(&e), vec![1, 2]);
}

#[test]
fn ddl_waits_for_its_ack_too_and_reset_master_zeroes_the_counters() {
    let e = open();
    let t = table(&e);
    let _replica = e.semisync().add_client();
    enable(&e, WaitPoint::AfterSync, LONG_TIMEOUT);
    let ddl = {
        let e = e.clone();
        thread::spawn(move || e.create_database("d2", false, "CREATE DATABASE d2"))
    };
    until_waiting(&e, 1);
    assert!(
        !e.catalog().has_database("d2"),
        "not visible before its ack"
    );
    e.semisync().ack(e.log().end_lsn(), 2);
    ddl.join().unwrap().unwrap();
    assert!(e.catalog().has_database("d2"));
    assert_eq!(e.semisync().status().yes_tx, 1);

    e.reset_log().unwrap();
    let st = e.semisync().status();
    assert!(st.status, "enabled: ON after RESET MASTER");
    assert_eq!((st.yes_tx, st.no_tx, st.clients, st.get_ack), (0, 0, 1, 1));
    let a = commit_in_thread(&e, t, 1);
    until_waiting(&e, 1);
    e.semisync().ack(e.log().end_lsn(), 2);
    a.join().unwrap();
    assert_eq!(visible(&e), vec![1]);
}

/// Records the waiter's calls (what PROCESSLIST's state follows).
#[derive(Default)]
struct Watch {
    states: Mutex<Vec<bool>>,
    killed: AtomicBool,
}

impl CommitWaiter for Watch {
    fn interrupted(&self) -> bool {
        self.killed.load(Ordering::Relaxed)
    }
    fn waiting_for_ack(&self, waiting: bool) {
        self.states.lock().unwrap().push(waiting);
    }
}

#[test]
fn a_waiting_session_is_told_when_its_ack_wait_starts_and_ends() {
    let e = open();
    let t = table(&e);
    let _replica = e.semisync().add_client();
    enable(&e, WaitPoint::AfterCommit, LONG_TIMEOUT);
    let watch = Arc::new(Watch::default());
    let a = {
        let (e, w) = (e.clone(), watch.clone());
        thread::spawn(move || {
            let mut tx = e.begin();
            tx.insert(t, vec![Value::Int(1)]).unwrap();
            tx.commit_interruptible(&*w).unwrap().unwrap().end_lsn
        })
    };
    until_waiting(&e, 1);
    assert_eq!(*watch.states.lock().unwrap(), vec![true]);
    e.semisync().ack(e.log().end_lsn(), 2);
    a.join().unwrap();
    assert_eq!(*watch.states.lock().unwrap(), vec![true, false]);
    // Not enabled: no wait, no call.
    e.semisync().set_enabled(false);
    let mut tx = e.begin();
    tx.insert(t, vec![Value::Int(2)]).unwrap();
    tx.commit_interruptible(&*watch).unwrap();
    assert_eq!(watch.states.lock().unwrap().len(), 2);
}
