//! The replica's IO thread (`onelog_replication::replica::io::run`, issue 12 part 2) against
//! real primaries: Debian's MariaDB 10.11 started with `--log-bin --server-id=1` on a loopback
//! port, and the onelog binary.
//!
//! What must hold, checked on the groups the thread queues and on its status:
//! - the groups arrive in the primary's order with the primary's GTIDs (`0-1-1`, `0-1-2`, ...),
//!   DDL as standalone groups ending with their Query, row transactions as GTID, Annotate_rows,
//!   Table_map, Write_rows, Xid, each with its primary's bytes (they decode, CRC32 checked);
//! - after the primary restarts, the thread reconnects from `Gtid_IO_Pos` and delivers the next
//!   group once: no group already queued comes again;
//! - a wrong password is Last_IO_Errno 1045 with MariaDB's retry text, and the thread gives up
//!   after `retry_count` retries; a primary with the replica's server id is 1593 with MariaDB's
//!   text, and the thread stops without retrying.
//!
//! Every wait is bounded; the servers are killed when the test ends.

mod common;

use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use common::mariadb::MariaDb;
use common::{sql, sql_value, Onelog};
use onelog_binlog::{decode_group, GroupItem, Gtid, GtidPos};
use onelog_replication::replica::config::StartPosition;
use onelog_replication::replica::io::{self, IoContext};
use onelog_replication::replica::schedule::CommitOrder;
use onelog_replication::replica::{
    ApplyError, GroupApplier, IoRunning, MasterConfig, RelayGroup, RelayQueue, ReplicaHost,
    ReplicaSettings, ReplicaStatus,
};

/// How long one expected group or state may take to show up.
const WAIT: Duration = Duration::from_secs(60);

/// The replica's side, as the SQL layer would provide it.
struct FakeHost {
    server_id: u32,
    net_timeout: u64,
}

struct NoApply;

impl GroupApplier for NoApply {
    fn apply(&mut self, _: &RelayGroup, _: &CommitOrder) -> Result<(), ApplyError> {
        Ok(())
    }
}

impl ReplicaHost for FakeHost {
    fn server_id(&self) -> u32 {
        self.server_id
    }
    fn gtid_slave_pos(&self) -> GtidPos {
        GtidPos::new()
    }
    fn gtid_current_pos(&self) -> GtidPos {
        GtidPos::new()
    }
    fn gtid_strict_mode(&self) -> bool {
        false
    }
    fn settings(&self) -> ReplicaSettings {
        ReplicaSettings {
            slave_net_timeout: self.net_timeout,
            ..ReplicaSettings::default()
        }
    }
    fn applier(&self) -> Box<dyn GroupApplier> {
        Box::new(NoApply)
    }
}

/// One running IO thread.
struct IoThread {
    status: Arc<ReplicaStatus>,
    queue: Arc<RelayQueue>,
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

/// What a test varies in an IO thread's context.
struct Opts {
    password: &'static str,
    server_id: u32,
    retry_count: u64,
    start: StartPosition,
    until: Option<GtidPos>,
    heartbeat_period: f64,
    net_timeout: u64,
    queue_bytes: usize,
}

impl Default for Opts {
    fn default() -> Opts {
        Opts {
            password: "rpl",
            server_id: 2,
            retry_count: 100,
            start: StartPosition::Gtid(GtidPos::new()),
            until: None,
            heartbeat_period: 1.0,
            net_timeout: 10,
            queue_bytes: 1 << 20,
        }
    }
}

impl IoThread {
    fn start(port: u16, password: &'static str, server_id: u32, retry_count: u64) -> IoThread {
        Self::start_with(
            port,
            Opts {
                password,
                server_id,
                retry_count,
                ..Opts::default()
            },
        )
    }

    fn start_with(port: u16, o: Opts) -> IoThread {
        let config = MasterConfig {
            host: "127.0.0.1".into(),
            port,
            user: "rpl".into(),
            password: o.password.into(),
            connect_retry: 1,
            heartbeat_period: o.heartbeat_period,
            retry_count: o.retry_count,
            ..MasterConfig::default()
        };
        let status = Arc::new(ReplicaStatus::new());
        let queue = Arc::new(RelayQueue::new(o.queue_bytes));
        let stop = Arc::new(AtomicBool::new(false));
        let ctx = IoContext {
            config,
            start: o.start,
            until: o.until,
            host: Arc::new(FakeHost {
                server_id: o.server_id,
                net_timeout: o.net_timeout,
            }),
            status: Arc::clone(&status),
            queue: Arc::clone(&queue),
            stop: Arc::clone(&stop),
        };
        let handle = std::thread::spawn(move || io::run(ctx));
        IoThread {
            status,
            queue,
            stop,
            handle: Some(handle),
        }
    }

    fn next_group(&self) -> RelayGroup {
        let deadline = Instant::now() + WAIT;
        while Instant::now() < deadline {
            if let Some(g) = self.queue.pop(Duration::from_millis(200)) {
                return g;
            }
        }
        panic!(
            "no group within {WAIT:?}; status {:?}",
            self.status.snapshot()
        );
    }

    /// Waits (bounded) for the thread to end by itself.
    fn join_ended(&mut self) {
        let deadline = Instant::now() + WAIT;
        let h = self.handle.take().expect("joined twice");
        while !h.is_finished() {
            assert!(
                Instant::now() < deadline,
                "the IO thread did not end; status {:?}",
                self.status.snapshot()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        h.join().expect("the IO thread panicked");
    }

    /// STOP SLAVE: the thread must end within a few ticks.
    fn stop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        self.join_ended();
        assert_eq!(self.status.snapshot().io_running, IoRunning::No);
    }
}

impl Drop for IoThread {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .expect("binding a free port")
        .local_addr()
        .expect("local addr")
        .port()
}

/// The (type) of each event of `g`.
fn event_types(g: &RelayGroup) -> Vec<u8> {
    g.events.iter().map(|e| e[4]).collect()
}

/// Checks a row-insert group: Annotate_rows with `stmt`, one Write_rows into d.t, an Xid.
fn assert_insert(g: &RelayGroup, gtid: Gtid, stmt: &str, key: i64) {
    assert_eq!(g.gtid, gtid);
    let decoded = decode_group(&g.events.concat()).expect("the group decodes, CRC32 checked");
    assert_eq!(decoded.gtid.gtid, gtid);
    assert!(decoded.is_committed_transaction(), "{decoded:?}");
    let mut saw_rows = false;
    for item in &decoded.statements {
        match item {
            GroupItem::AnnotateRows(a) => assert_eq!(a.query, stmt),
            GroupItem::Rows { table, event } => {
                assert_eq!((table.db.as_str(), table.table.as_str()), ("d", "t"));
                let want = format!("{:?}", onelog_binlog::Value::Int(key));
                assert!(format!("{:?}", event.rows).contains(&want), "{event:?}");
                saw_rows = true;
            }
            _ => {}
        }
    }
    assert!(saw_rows, "{decoded:?}");
    assert!(g.end_log_pos > 0);
    assert!(!g.master_log_file.is_empty());
}

/// Waits for a condition on the status.
fn wait_status(
    t: &IoThread,
    what: &str,
    cond: impl Fn(&onelog_replication::replica::StatusSnapshot) -> bool,
) {
    let deadline = Instant::now() + WAIT;
    loop {
        let s = t.status.snapshot();
        if cond(&s) {
            return;
        }
        assert!(Instant::now() < deadline, "{what}: status {s:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn start_mariadb_primary(dir: &std::path::Path, port: u16) -> MariaDb {
    let port_arg = format!("--port={port}");
    MariaDb::start_with(
        dir,
        &[
            "--skip-networking=0",
            &port_arg,
            "--bind-address=127.0.0.1",
            "--log-bin=mb",
            "--server-id=1",
            "--binlog-format=ROW",
        ],
    )
}

#[test]
fn io_thread_follows_a_mariadb_primary_across_a_restart() {
    let dir = tempfile::tempdir().expect("tempdir");
    let port = free_port();
    let mut primary = start_mariadb_primary(dir.path(), port);
    primary.run(
        Some(
            "CREATE USER rpl@'%' IDENTIFIED BY 'rpl'; \
             GRANT REPLICATION SLAVE ON *.* TO rpl@'%'; \
             CREATE DATABASE d; CREATE TABLE d.t (a INT PRIMARY KEY, b VARCHAR(10)); \
             INSERT INTO d.t VALUES (1,'a'); INSERT INTO d.t VALUES (2,'b'); \
             INSERT INTO d.t VALUES (3,'c')",
        ),
        None,
    );
    let mut t = IoThread::start(port, "rpl", 2, 100);
    // CREATE USER, GRANT, CREATE DATABASE, CREATE TABLE: standalone groups ending with a Query.
    for seq in 1..=4 {
        let g = t.next_group();
        assert_eq!(g.gtid, Gtid::new(0, 1, seq));
        assert_ne!(g.flags2 & 1, 0, "FL_STANDALONE on {g:?}");
        assert_eq!(event_types(&g), vec![162, 2]);
    }
    for (seq, key, b) in [(5, 1, 'a'), (6, 2, 'b'), (7, 3, 'c')] {
        let g = t.next_group();
        assert_eq!(event_types(&g), vec![162, 160, 19, 23, 16]);
        assert_insert(
            &g,
            Gtid::new(0, 1, seq),
            &format!("INSERT INTO d.t VALUES ({key},'{b}')"),
            key,
        );
    }
    // The IO thread records a group's position just after it queues the group, so the test
    // can see the group before the status says so.
    wait_status(&t, "the position of the last group", |s| {
        s.gtid_io_pos.to_string() == "0-1-7"
    });
    let s = t.status.snapshot();
    assert_eq!(s.io_running, IoRunning::Yes);
    assert_eq!(s.io_state, "Waiting for master to send event");
    assert_eq!(s.master_server_id, 1);
    assert_eq!(s.master_log_file, "mb.000001");
    assert_eq!(s.gtid_io_pos.to_string(), "0-1-7");
    assert_eq!(s.last_io_errno, 0);
    assert_eq!(s.connects, 1);
    let pos = primary.value("SELECT @@global.gtid_binlog_pos");
    assert_eq!(pos, "0-1-7");
    // Heartbeats every second while idle.
    wait_status(&t, "a heartbeat", |s| s.received_heartbeats >= 1);

    primary.stop();
    wait_status(&t, "reconnecting", |s| {
        s.io_running == IoRunning::Connecting
    });
    primary.restart();
    primary.run(Some("INSERT INTO d.t VALUES (4,'d')"), None);
    let g = t.next_group();
    // The restarted primary logs into mb.000002; GTIDs go on.
    assert_insert(&g, Gtid::new(0, 1, 8), "INSERT INTO d.t VALUES (4,'d')", 4);
    assert_eq!(g.master_log_file, "mb.000002");
    // Nothing already queued comes again.
    assert!(t.queue.pop(Duration::from_secs(2)).is_none());
    let s = t.status.snapshot();
    assert_eq!(s.gtid_io_pos.to_string(), "0-1-8");
    assert!(s.connects >= 2, "{s:?}");
    assert_eq!(s.io_running, IoRunning::Yes);
    t.stop();
    assert_eq!(t.status.snapshot().io_state, "");

    // A wrong password: 1045 with MariaDB's retry text; gives up after retry_count retries.
    let mut bad = IoThread::start(port, "wrong", 2, 1);
    bad.join_ended();
    let s = bad.status.snapshot();
    assert_eq!(s.last_io_errno, 1045);
    let prefix = format!(
        "error connecting to master 'rpl@127.0.0.1:{port}' - retry-time: 1  maximum-retries: 1  \
         message: Access denied for user 'rpl'@'"
    );
    assert!(s.last_io_error.starts_with(&prefix), "{}", s.last_io_error);
    assert!(
        s.last_io_error.ends_with("(using password: YES)"),
        "{}",
        s.last_io_error
    );
    assert_eq!(s.io_running, IoRunning::No);

    // The primary's server id: 1593, no retry.
    let mut same = IoThread::start(port, "rpl", 1, 100);
    same.join_ended();
    let s = same.status.snapshot();
    assert_eq!(s.last_io_errno, 1593);
    assert_eq!(
        s.last_io_error,
        "Fatal error: The slave I/O thread stops because master and slave have equal MariaDB \
         server ids; these ids must be different for replication to work (or the \
         --replicate-same-server-id option must be used on slave but this does not always make \
         sense; please check the manual before using it)."
    );
    assert_eq!(s.connects, 0);

    more_mariadb_cases(&primary, port);
}

/// UNTIL, a position the primary cannot serve (1236), file/offset mode and the
/// slave_net_timeout reconnect, against the primary of the test above (GTIDs 0-1-1..0-1-8 in
/// mb.000001 and mb.000002).
fn more_mariadb_cases(primary: &MariaDb, port: u16) {
    // START SLAVE UNTIL master_gtid_pos='0-1-6': groups up to 0-1-6, then the thread ends.
    let mut t = IoThread::start_with(
        port,
        Opts {
            until: Some("0-1-6".parse().unwrap()),
            ..Opts::default()
        },
    );
    t.join_ended();
    let mut seqs = Vec::new();
    while let Some(g) = t.queue.pop(Duration::from_millis(10)) {
        seqs.push(g.gtid.seq_no);
    }
    assert_eq!(seqs, (1..=6).collect::<Vec<_>>());
    let s = t.status.snapshot();
    assert_eq!((s.last_io_errno, s.io_running), (0, IoRunning::No));

    // A GTID the primary never logged: 1236 with the primary's text, no retry.
    let mut t = IoThread::start_with(
        port,
        Opts {
            start: StartPosition::Gtid("0-1-100".parse().unwrap()),
            ..Opts::default()
        },
    );
    t.join_ended();
    let s = t.status.snapshot();
    assert_eq!(s.last_io_errno, 1236);
    assert!(
        s.last_io_error
            .starts_with("Got fatal error 1236 from master when reading data from binary log: '")
            && s.last_io_error.contains("0-1-100"),
        "{}",
        s.last_io_error
    );
    assert_eq!(s.connects, 1);
    assert!(t.queue.is_empty());

    // File/offset mode from the start of mb.000002: only the group logged there, then the
    // position follows the file; no heartbeats and a 2 s slave_net_timeout force reconnects
    // from that position, which bring nothing again.
    let mut t = IoThread::start_with(
        port,
        Opts {
            start: StartPosition::File {
                name: "mb.000002".into(),
                pos: 4,
            },
            heartbeat_period: 0.0,
            net_timeout: 2,
            ..Opts::default()
        },
    );
    let g = t.next_group();
    assert_eq!(g.gtid, Gtid::new(0, 1, 8));
    assert_eq!(g.master_log_file, "mb.000002");
    wait_status(&t, "a reconnect after slave_net_timeout", |s| {
        s.connects >= 3
    });
    assert!(t.queue.pop(Duration::from_millis(500)).is_none());
    let s = t.status.snapshot();
    assert_eq!(s.received_heartbeats, 0);
    assert_eq!(s.master_log_file, "mb.000002");
    assert_eq!(s.read_master_log_pos, g.end_log_pos);
    assert_eq!(s.last_io_errno, 0);
    t.stop();

    // A full queue holds the thread back (one group fits a 1-byte bound); STOP still ends it.
    let mut t = IoThread::start_with(
        port,
        Opts {
            queue_bytes: 1,
            ..Opts::default()
        },
    );
    wait_status(&t, "waiting for queue space", |s| {
        s.io_state == "Waiting for the slave SQL thread to free enough relay log space"
    });
    assert_eq!(t.queue.len(), 1);
    assert_eq!(t.status.snapshot().gtid_io_pos.to_string(), "0-1-1");
    t.stop();
    assert_eq!(t.status.snapshot().last_io_errno, 0);

    // A group logged with the replica's own server id (a ring's own transaction) is skipped,
    // the position moves past it, and the next group comes.
    primary.run(
        Some(
            "SET SESSION server_id=2; INSERT INTO d.t VALUES (5,'e'); \
             SET SESSION server_id=1; INSERT INTO d.t VALUES (6,'f')",
        ),
        None,
    );
    let mut t = IoThread::start_with(
        port,
        Opts {
            start: StartPosition::Gtid("0-1-8".parse().unwrap()),
            ..Opts::default()
        },
    );
    let g = t.next_group();
    assert_insert(&g, Gtid::new(0, 1, 10), "INSERT INTO d.t VALUES (6,'f')", 6);
    assert!(t.queue.pop(Duration::from_millis(500)).is_none());
    assert_eq!(t.status.snapshot().gtid_io_pos.to_string(), "0-1-10");
    t.stop();

    // A primary logging without checksums: refused before the dump, no retry.
    primary.run(Some("SET GLOBAL binlog_checksum=NONE"), None);
    let mut t = IoThread::start(port, "rpl", 2, 100);
    t.join_ended();
    let s = t.status.snapshot();
    assert_eq!(s.last_io_errno, 1593);
    assert_eq!(
        s.last_io_error,
        "Fatal error: The slave I/O thread stops because the master's binlog_checksum is NONE: \
         onelog replicates only from a primary with binlog_checksum=CRC32"
    );
    assert_eq!(s.connects, 0);
}

#[test]
fn io_thread_follows_an_onelog_primary_across_a_restart() {
    let dir = tempfile::tempdir().expect("tempdir");
    let datadir = dir.path().join("primary");
    std::fs::create_dir_all(&datadir).expect("datadir");
    let mut primary = Onelog::start(&datadir, &[]);
    let port = primary.port;
    sql(
        port,
        "CREATE USER rpl@'%' IDENTIFIED BY 'rpl'; \
         GRANT REPLICATION SLAVE ON *.* TO rpl@'%'; \
         CREATE DATABASE d; CREATE TABLE d.t (a INT PRIMARY KEY, b VARCHAR(10))",
    );
    let before = sql_value(port, "SELECT @@gtid_binlog_pos");
    sql(
        port,
        "INSERT INTO d.t VALUES (1,'a'); INSERT INTO d.t VALUES (2,'b'); \
         INSERT INTO d.t VALUES (3,'c')",
    );
    let after = sql_value(port, "SELECT @@gtid_binlog_pos");
    let before: GtidPos = before.parse().expect("a GTID position");
    let after: GtidPos = after.parse().expect("a GTID position");
    let last = after.get(0).expect("domain 0");
    let first_insert = before.get(0).map_or(1, |g| g.seq_no + 1);
    assert_eq!(last.seq_no, first_insert + 2);

    let mut t = IoThread::start(port, "rpl", 2, 100);
    // Everything before the inserts, then the three inserts with consecutive GTIDs.
    let mut g = t.next_group();
    while g.gtid.seq_no < first_insert {
        g = t.next_group();
    }
    for key in 1..=3i64 {
        let gtid = Gtid::new(0, last.server_id, first_insert + key as u64 - 1);
        let decoded = decode_group(&g.events.concat()).expect("the group decodes");
        assert_eq!(g.gtid, gtid);
        assert!(decoded.is_committed_transaction(), "{decoded:?}");
        let rows: Vec<_> = decoded
            .statements
            .iter()
            .filter_map(|i| match i {
                GroupItem::Rows { table, event } => {
                    Some((table.table.clone(), format!("{:?}", event.rows)))
                }
                _ => None,
            })
            .collect();
        assert_eq!(rows.len(), 1, "{decoded:?}");
        assert_eq!(rows[0].0, "t");
        assert!(rows[0].1.contains(&format!("Int({key})")), "{rows:?}");
        if key < 3 {
            g = t.next_group();
        }
    }
    wait_status(&t, "Gtid_IO_Pos at the last insert", |s| {
        s.gtid_io_pos == after
    });
    assert_eq!(t.status.snapshot().master_server_id, last.server_id);

    primary.stop();
    wait_status(&t, "reconnecting", |s| {
        s.io_running == IoRunning::Connecting
    });
    let port_arg = format!("--port={port}");
    primary = Onelog::start(&datadir, &[&port_arg]);
    sql(port, "INSERT INTO d.t VALUES (4,'d')");
    let g = t.next_group();
    assert_eq!(g.gtid, Gtid::new(0, last.server_id, last.seq_no + 1));
    assert!(t.queue.pop(Duration::from_secs(2)).is_none());
    wait_status(&t, "Yes after the reconnect", |s| {
        s.io_running == IoRunning::Yes
    });
    t.stop();
    drop(primary);
}
