//! End-to-end tests of the replica's SQL surface through `Session::query` on a real server in
//! a temporary directory: CHANGE MASTER TO (its rules, notes and errors, master.info),
//! START / STOP / RESET SLAVE on a replica that was never configured, SHOW SLAVE STATUS's
//! columns and a configured-but-stopped replica's values, the privileges, and the replica's
//! variables. The replica's threads are not started here (their tests are the replication
//! crate's): the `Replica` is opened on the data directory with a host whose values are fixed.

use std::path::Path;
use std::sync::Arc;

use onelog_binlog::GtidPos;
use onelog_replication::replica::{
    schedule::CommitOrder, ApplyError, GroupApplier, ParallelMode, RelayGroup, Replica,
    ReplicaHost, ReplicaSettings,
};
use onelog_sql::{Output, Server, ServerConfig, Session, Value};

mod common;
use common::{err, fail, ok, TempDir};

struct Host;
struct NoApply;

impl GroupApplier for NoApply {
    fn apply(&mut self, _: &RelayGroup, _: &CommitOrder) -> Result<(), ApplyError> {
        Err(ApplyError::fatal(1105, "no applier in this test"))
    }
}

impl ReplicaHost for Host {
    fn server_id(&self) -> u32 {
        7
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
        ReplicaSettings::default()
    }
    fn applier(&self) -> Box<dyn GroupApplier> {
        Box::new(NoApply)
    }
}

fn open(dir: &Path, with_replica: bool) -> Arc<Server> {
    let mut cfg = ServerConfig::new(dir);
    cfg.server_id = 7;
    let server = Server::open(cfg).unwrap().0;
    if with_replica {
        let r = Replica::open(dir, Arc::new(Host)).unwrap();
        assert!(server.set_replica(Arc::new(r)).is_ok());
    }
    server
}

fn root(server: &Arc<Server>) -> Session {
    Session::new(server.clone(), 1, "root", "localhost")
}

fn cell(v: &Value) -> String {
    match v {
        Value::Null => "NULL".into(),
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        Value::Int(i) => i.to_string(),
        Value::UInt(u) => u.to_string(),
        other => format!("{other:?}"),
    }
}

/// Column names and rows as text.
fn table(s: &mut Session, sql: &str) -> (Vec<String>, Vec<Vec<String>>) {
    match ok(s, sql) {
        Output::Rows { columns, rows } => (
            columns.iter().map(|c| c.name.clone()).collect(),
            rows.iter().map(|r| r.iter().map(cell).collect()).collect(),
        ),
        other => panic!("{sql}: not a result set: {other:?}"),
    }
}

/// `(level, code, message)` of SHOW WARNINGS.
fn warnings(s: &mut Session) -> Vec<(String, String, String)> {
    table(s, "SHOW WARNINGS")
        .1
        .into_iter()
        .map(|r| (r[0].clone(), r[1].clone(), r[2].clone()))
        .collect()
}

/// The value of `column` in SHOW SLAVE STATUS's one row.
fn status(s: &mut Session, column: &str) -> String {
    let (cols, rows) = table(s, "SHOW SLAVE STATUS");
    assert_eq!(rows.len(), 1);
    let i = cols.iter().position(|c| c == column).unwrap();
    rows[0][i].clone()
}

#[test]
fn an_unconfigured_server_acts_as_mariadb() {
    let dir = TempDir::new("replica-sql-unconfigured");
    for wired in [false, true] {
        let server = open(dir.path(), wired);
        let mut s = root(&server);
        let (cols, rows) = table(&mut s, "SHOW SLAVE STATUS");
        assert_eq!(cols.len(), 54);
        assert!(rows.is_empty());
        let (cols, rows) = table(&mut s, "SHOW ALL SLAVES STATUS");
        assert_eq!(cols.len(), 62);
        assert_eq!(cols[0], "Connection_name");
        assert_eq!(cols[61], "Gtid_Slave_Pos");
        assert!(rows.is_empty());
        let e = fail(&mut s, "START SLAVE");
        assert_eq!(e.code, 1200);
        assert_eq!(
            e.message,
            "Misconfigured slave: MASTER_HOST was not set; Fix in config file or with CHANGE \
             MASTER TO"
        );
        ok(&mut s, "STOP SLAVE");
        assert_eq!(
            warnings(&mut s),
            vec![(
                "Note".into(),
                "1255".into(),
                "Slave already has been stopped".into()
            )]
        );
        ok(&mut s, "RESET SLAVE");
        assert_eq!(
            err(&mut s, "CHANGE MASTER 'named' TO MASTER_HOST='x'"),
            1235
        );
        assert_eq!(err(&mut s, "CHANGE MASTER TO MASTER_SSL_CERT='c'"), 1235);
        assert_eq!(
            err(
                &mut s,
                "START SLAVE IO_THREAD UNTIL master_gtid_pos='0-1-1'"
            ),
            1277
        );
        assert_eq!(err(&mut s, "START SLAVE UNTIL master_gtid_pos='0-1'"), 1941);
        assert_eq!(
            err(&mut s, "START SLAVE UNTIL master_gtid_pos='0-1-1,0-2-2'"),
            1943
        );
        if !wired {
            assert_eq!(err(&mut s, "CHANGE MASTER TO MASTER_HOST='x'"), 1201);
        }
        server.shutdown().unwrap();
    }
}

#[test]
fn change_master_configures_a_stopped_replica() {
    let dir = TempDir::new("replica-sql-change");
    let server = open(dir.path(), true);
    let mut s = root(&server);
    ok(
        &mut s,
        "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=3310, MASTER_USER='repl', \
         MASTER_PASSWORD='pw', MASTER_CONNECT_RETRY=5",
    );
    let (cols, rows) = table(&mut s, "SHOW SLAVE STATUS");
    assert_eq!(cols.len(), 54);
    assert_eq!(cols[0], "Slave_IO_State");
    assert_eq!(cols[32], "Seconds_Behind_Master");
    assert_eq!(cols[42], "Using_Gtid");
    assert_eq!(cols[53], "Replicate_Rewrite_DB");
    assert_eq!(rows.len(), 1);
    assert_eq!(status(&mut s, "Master_Host"), "127.0.0.1");
    assert_eq!(status(&mut s, "Master_Port"), "3310");
    assert_eq!(status(&mut s, "Master_User"), "repl");
    assert_eq!(status(&mut s, "Connect_Retry"), "5");
    assert_eq!(status(&mut s, "Slave_IO_Running"), "No");
    assert_eq!(status(&mut s, "Slave_SQL_Running"), "No");
    assert_eq!(status(&mut s, "Seconds_Behind_Master"), "NULL");
    assert_eq!(status(&mut s, "Using_Gtid"), "Slave_Pos");
    assert_eq!(status(&mut s, "Parallel_Mode"), "optimistic");
    let (_, all) = table(&mut s, "SHOW ALL REPLICAS STATUS");
    assert_eq!(all[0][59], "0", "Slave_received_heartbeats");
    assert_eq!(all[0][60], "30.000", "Slave_heartbeat_period");

    // The file position switches Using_Gtid to No with MariaDB's note.
    ok(
        &mut s,
        "CHANGE MASTER TO MASTER_LOG_FILE='binlog.000002', MASTER_LOG_POS=120",
    );
    assert_eq!(
        warnings(&mut s),
        vec![(
            "Note".into(),
            "4190".into(),
            "CHANGE MASTER TO is implicitly changing the value of 'Using_Gtid' from \
             'Slave_Pos' to 'No'"
                .into()
        )]
    );
    assert_eq!(status(&mut s, "Using_Gtid"), "No");
    assert_eq!(status(&mut s, "Master_Log_File"), "binlog.000002");
    assert_eq!(status(&mut s, "Read_Master_Log_Pos"), "120");
    // DEMOTE needs Slave_Pos: 4191, and nothing changes.
    let e = fail(&mut s, "CHANGE MASTER TO MASTER_DEMOTE_TO_SLAVE=1");
    assert_eq!(e.code, 4191);
    assert_eq!(status(&mut s, "Using_Gtid"), "No");
    assert_eq!(
        err(&mut s, "CHANGE MASTER TO MASTER_HEARTBEAT_PERIOD=5000000"),
        1624
    );
    ok(&mut s, "CHANGE MASTER TO MASTER_HEARTBEAT_PERIOD=100");
    assert_eq!(warnings(&mut s)[0].1, "1704");
    ok(
        &mut s,
        "CHANGE MASTER TO MASTER_USE_GTID=slave_pos, MASTER_DEMOTE_TO_REPLICA=1",
    );
    assert_eq!(status(&mut s, "Using_Gtid"), "Slave_Pos");
    assert_eq!(status(&mut s, "Master_Log_File"), "binlog.000002");
    // MariaDB 10.11 has no CHANGE REPLICA spelling.
    assert_eq!(
        err(&mut s, "CHANGE REPLICA TO MASTER_CONNECT_RETRY=5"),
        1064
    );
    assert_eq!(
        err(&mut s, "START SLAVE UNTIL master_gtid_pos='1-1-1,1-1-2'"),
        1943
    );
    server.shutdown().unwrap();

    // master.info keeps the configuration across a restart.
    let server = open(dir.path(), true);
    let mut s = root(&server);
    assert_eq!(status(&mut s, "Master_Host"), "127.0.0.1");
    assert_eq!(status(&mut s, "Master_Port"), "3310");
    ok(&mut s, "CHANGE MASTER TO MASTER_USE_GTID=no");
    assert_eq!(
        err(&mut s, "START SLAVE UNTIL master_gtid_pos='0-1-1'"),
        1949
    );
    server.shutdown().unwrap();
}

#[test]
fn replica_statements_need_mariadbs_privileges() {
    let dir = TempDir::new("replica-sql-privileges");
    let server = open(dir.path(), true);
    let mut r = root(&server);
    ok(&mut r, "CREATE USER 'mon'@'%'");
    ok(&mut r, "GRANT REPLICA MONITOR ON *.* TO 'mon'@'%'");
    ok(&mut r, "CREATE USER 'adm'@'%'");
    ok(&mut r, "GRANT REPLICATION SLAVE ADMIN ON *.* TO 'adm'@'%'");
    let (_, g) = table(&mut r, "SHOW GRANTS FOR 'mon'@'%'");
    assert_eq!(g[0][0], "GRANT SLAVE MONITOR ON *.* TO `mon`@`%`");
    let mut mon = Session::new(server.clone(), 2, "mon", "10.0.0.1");
    let mut adm = Session::new(server.clone(), 3, "adm", "10.0.0.1");
    table(&mut mon, "SHOW SLAVE STATUS");
    assert_eq!(err(&mut mon, "CHANGE MASTER TO MASTER_HOST='h'"), 1227);
    assert_eq!(err(&mut mon, "STOP SLAVE"), 1227);
    assert_eq!(err(&mut adm, "SHOW REPLICA STATUS"), 1227);
    ok(&mut adm, "CHANGE MASTER TO MASTER_HOST='h'");
    ok(&mut adm, "STOP SLAVE");
    server.shutdown().unwrap();
}

#[test]
fn replica_variables_check_their_values() {
    let dir = TempDir::new("replica-sql-variables");
    let server = open(dir.path(), true);
    let mut s = root(&server);
    let one = |s: &mut Session, sql: &str| table(s, sql).1[0][0].clone();
    assert_eq!(
        one(&mut s, "SELECT @@global.slave_parallel_mode"),
        "optimistic"
    );
    assert_eq!(one(&mut s, "SELECT @@slave_net_timeout"), "60");
    assert_eq!(one(&mut s, "SELECT @@slave_transaction_retries"), "10");
    assert_eq!(one(&mut s, "SELECT @@gtid_ignore_duplicates"), "0");
    ok(&mut s, "SET GLOBAL slave_parallel_mode = 'CONSERVATIVE'");
    assert_eq!(one(&mut s, "SELECT @@slave_parallel_mode"), "conservative");
    assert_eq!(err(&mut s, "SET GLOBAL slave_parallel_mode = 'fast'"), 1231);
    ok(&mut s, "SET GLOBAL slave_parallel_threads = 4");
    assert_eq!(one(&mut s, "SELECT @@slave_parallel_threads"), "4");
    ok(
        &mut s,
        "SET GLOBAL gtid_ignore_duplicates = ON, slave_net_timeout = 20",
    );
    let set = onelog_sql::sysvar::replica::settings(&server);
    assert_eq!(set.slave_parallel_threads, 4);
    assert_eq!(set.slave_parallel_mode, ParallelMode::Conservative);
    assert_eq!(set.slave_net_timeout, 20);
    assert_eq!(set.slave_transaction_retries, 10);
    assert!(set.gtid_ignore_duplicates);
    assert_eq!(err(&mut s, "SET GLOBAL gtid_slave_pos = 'x-1'"), 1941);
    assert_eq!(
        err(&mut s, "SET GLOBAL gtid_slave_pos = '0-1-1,0-1-2'"),
        1943
    );
    assert_eq!(err(&mut s, "SET gtid_slave_pos = '0-1-1'"), 1229);
    assert_eq!(err(&mut s, "SET last_gtid = '0-1-1'"), 1238);
    // A commit of this server puts its own GTID in the binlog: a lower gtid_slave_pos warns.
    ok(&mut s, "CREATE DATABASE d");
    let binlog = one(&mut s, "SELECT @@gtid_binlog_pos");
    assert!(binlog.starts_with("0-7-"), "{binlog}");
    ok(&mut s, "SET GLOBAL gtid_slave_pos = '0-7-0'");
    let w = warnings(&mut s);
    assert_eq!(w[0].1, "1947", "{w:?}");
    ok(&mut s, "SET GLOBAL gtid_slave_pos = '5-1-1'");
    assert_eq!(warnings(&mut s)[0].1, "1948");
    server.shutdown().unwrap();
}

#[test]
fn master_gtid_wait_answers_as_mariadb() {
    let dir = TempDir::new("replica-sql-gtid-wait");
    let server = open(dir.path(), false);
    let mut s = root(&server);
    let one = |s: &mut Session, sql: &str| table(s, sql).1[0][0].clone();
    let status = |s: &mut Session, name: &str| {
        table(s, &format!("SHOW GLOBAL STATUS LIKE '{name}'")).1[0][1].clone()
    };
    assert_eq!(one(&mut s, "SELECT MASTER_GTID_WAIT('')"), "0");
    assert_eq!(one(&mut s, "SELECT MASTER_GTID_WAIT(NULL)"), "NULL");
    assert_eq!(one(&mut s, "SELECT MASTER_GTID_WAIT(NULL, 1)"), "NULL");
    // A domain the replica never saw: the timeout (0: check only).
    assert_eq!(one(&mut s, "SELECT MASTER_GTID_WAIT('55-1-1', 0)"), "-1");
    assert_eq!(one(&mut s, "SELECT MASTER_GTID_WAIT('55-1-1', 0.05)"), "-1");
    assert_eq!(err(&mut s, "SELECT MASTER_GTID_WAIT('0-1')"), 1941);
    // A repeated domain is no error here (MariaDB waits for each).
    assert_eq!(
        one(&mut s, "SELECT MASTER_GTID_WAIT('0-1-1,0-2-2', 0)"),
        "-1"
    );
    assert_eq!(status(&mut s, "Master_gtid_wait_count"), "4");
    assert_eq!(status(&mut s, "Master_gtid_wait_timeouts"), "3");
    // No timeout: waits until max_statement_time stops it.
    ok(&mut s, "SET max_statement_time = 0.2");
    assert_eq!(err(&mut s, "SELECT MASTER_GTID_WAIT('55-1-1')"), 1969);
    ok(&mut s, "SET max_statement_time = 0");
    assert_eq!(status(&mut s, "Slave_running"), "OFF");
    assert_eq!(status(&mut s, "Slaves_running"), "0");
    assert_eq!(status(&mut s, "Slave_open_temp_tables"), "0");
    server.shutdown().unwrap();
}

#[test]
fn session_gtid_variables_are_checked() {
    let dir = TempDir::new("replica-sql-origin-vars");
    let server = open(dir.path(), false);
    let mut s = root(&server);
    let one = |s: &mut Session, sql: &str| table(s, sql).1[0][0].clone();
    assert_eq!(one(&mut s, "SELECT @@session.gtid_seq_no"), "0");
    ok(
        &mut s,
        "SET gtid_domain_id = 3, server_id = 77, gtid_seq_no = 50",
    );
    assert_eq!(one(&mut s, "SELECT @@session.gtid_seq_no"), "50");
    assert_eq!(one(&mut s, "SELECT @@session.server_id"), "77");
    assert_eq!(one(&mut s, "SELECT @@global.server_id"), "7");
    assert_eq!(one(&mut s, "SELECT @@gtid_domain_id"), "3");
    assert_eq!(err(&mut s, "SELECT @@global.gtid_seq_no"), 1238);
    ok(&mut s, "BEGIN");
    assert_eq!(err(&mut s, "SET gtid_domain_id = 4"), 1953);
    assert_eq!(err(&mut s, "SET gtid_seq_no = 9"), 1953);
    ok(&mut s, "ROLLBACK");
    assert_eq!(err(&mut s, "SET GLOBAL server_id = 9"), 1235);
    ok(&mut s, "CREATE USER 'app'@'%'");
    let mut app = Session::new(server.clone(), 2, "app", "10.0.0.1");
    let e = fail(&mut app, "SET server_id = 5");
    assert_eq!(e.code, 1227);
    assert!(e.message.contains("SUPER, BINLOG REPLAY"), "{}", e.message);
    assert_eq!(err(&mut app, "SET gtid_domain_id = 2"), 1227);
    assert_eq!(err(&mut app, "SET gtid_seq_no = 2"), 1227);
    // SET GLOBAL of the replica's variables: REPLICATION SLAVE ADMIN is enough; read_only
    // needs READ_ONLY ADMIN (SUPER is not enough in MariaDB 10.11).
    ok(&mut s, "CREATE USER 'radm'@'%'");
    ok(&mut s, "GRANT REPLICATION SLAVE ADMIN ON *.* TO 'radm'@'%'");
    ok(&mut s, "CREATE USER 'sup'@'%'");
    ok(&mut s, "GRANT SUPER ON *.* TO 'sup'@'%'");
    let mut radm = Session::new(server.clone(), 3, "radm", "10.0.0.1");
    let mut sup = Session::new(server.clone(), 4, "sup", "10.0.0.1");
    ok(
        &mut radm,
        "SET GLOBAL slave_parallel_threads = 2, gtid_ignore_duplicates = 0",
    );
    let e = fail(&mut radm, "SET GLOBAL slave_transaction_retries = 3");
    assert_eq!(e.code, 1227);
    assert!(e.message.contains("the SUPER privilege"), "{}", e.message);
    let e = fail(&mut sup, "SET GLOBAL read_only = 1");
    assert!(e.message.contains("READ_ONLY ADMIN"), "{}", e.message);
    server.shutdown().unwrap();
}

#[test]
fn session_gtid_variables_reach_commits() {
    let dir = TempDir::new("replica-sql-origin");
    let server = open(dir.path(), false);
    let mut s = root(&server);
    let one = |s: &mut Session, sql: &str| table(s, sql).1[0][0].clone();
    ok(&mut s, "CREATE DATABASE d");
    ok(&mut s, "CREATE TABLE d.t (id INT PRIMARY KEY)");
    ok(
        &mut s,
        "SET gtid_domain_id = 3, server_id = 77, gtid_seq_no = 50",
    );
    assert_eq!(one(&mut s, "SELECT @@session.gtid_seq_no"), "50");
    ok(&mut s, "INSERT INTO d.t VALUES (1)");
    let binlog = one(&mut s, "SELECT @@gtid_binlog_state");
    assert!(binlog.split(',').any(|g| g == "3-77-50"), "{binlog}");
    // The fixed sequence number is used once.
    assert_eq!(one(&mut s, "SELECT @@session.gtid_seq_no"), "0");
    ok(&mut s, "INSERT INTO d.t VALUES (2)");
    let binlog = one(&mut s, "SELECT @@gtid_binlog_state");
    assert!(binlog.split(',').any(|g| g == "3-77-51"), "{binlog}");
    ok(&mut s, "BEGIN");
    assert_eq!(err(&mut s, "SET gtid_domain_id = 4"), 1953);
    assert_eq!(err(&mut s, "SET gtid_seq_no = 9"), 1953);
    ok(&mut s, "ROLLBACK");
    // Back to the defaults: commits are the server's again.
    ok(&mut s, "SET gtid_domain_id = DEFAULT, server_id = 7");
    ok(&mut s, "INSERT INTO d.t VALUES (3)");
    let pos = one(&mut s, "SELECT @@gtid_binlog_pos");
    assert!(pos.split(',').any(|g| g.starts_with("0-7-")), "{pos}");
    server.shutdown().unwrap();
}

#[test]
fn read_only_refuses_writes_of_users_without_read_only_admin() {
    let dir = TempDir::new("replica-sql-read-only");
    let server = open(dir.path(), false);
    let mut r = root(&server);
    ok(&mut r, "CREATE DATABASE d");
    ok(&mut r, "CREATE TABLE d.t (id INT PRIMARY KEY)");
    ok(&mut r, "CREATE USER 'app'@'%'");
    ok(&mut r, "GRANT ALL ON d.* TO 'app'@'%'");
    ok(&mut r, "CREATE USER 'ops'@'%'");
    ok(&mut r, "GRANT ALL ON d.* TO 'ops'@'%'");
    ok(&mut r, "GRANT READ_ONLY ADMIN ON *.* TO 'ops'@'%'");
    ok(&mut r, "CREATE USER 'sup'@'%'");
    ok(&mut r, "GRANT SUPER, INSERT ON *.* TO 'sup'@'%'");
    let mut sup = Session::new(server.clone(), 4, "sup", "10.0.0.1");
    let mut app = Session::new(server.clone(), 2, "app", "10.0.0.1");
    let mut ops = Session::new(server.clone(), 3, "ops", "10.0.0.1");
    ok(&mut app, "INSERT INTO d.t VALUES (1)");
    ok(&mut r, "SET GLOBAL read_only = ON");
    assert_eq!(table(&mut r, "SELECT @@global.read_only").1[0][0], "1");
    let e = fail(&mut app, "INSERT INTO d.t VALUES (2)");
    assert_eq!(e.code, 1290);
    assert_eq!(
        e.message,
        "The MariaDB server is running with the --read-only option so it cannot execute this \
         statement"
    );
    assert_eq!(err(&mut app, "DELETE FROM d.t"), 1290);
    assert_eq!(err(&mut app, "CREATE TABLE d.u (id INT PRIMARY KEY)"), 1290);
    assert_eq!(table(&mut app, "SELECT COUNT(*) FROM d.t").1[0][0], "1");
    ok(&mut ops, "INSERT INTO d.t VALUES (3)");
    // MariaDB 10.11: SUPER alone does not pass read_only (MDEV-29596).
    assert_eq!(err(&mut sup, "INSERT INTO d.t VALUES (6)"), 1290);
    ok(&mut r, "INSERT INTO d.t VALUES (4)");
    ok(&mut r, "SET GLOBAL read_only = 0");
    ok(&mut app, "INSERT INTO d.t VALUES (5)");
    server.shutdown().unwrap();
}
