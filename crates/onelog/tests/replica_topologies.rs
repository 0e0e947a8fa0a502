//! onelog as a replica (issue 12 part 6), with real processes on loopback:
//! - a MariaDB 10.11 primary (binlog_format MIXED, its default, and ROW) → onelog: DDL, DML as
//!   statements (AUTO_INCREMENT, NOW(), user variables, RAND()) and as rows; primary restart; STOP /
//!   START SLAVE; an event onelog cannot apply stops the SQL side with an error naming it;
//! - onelog → onelog → MariaDB → onelog: the original GTIDs survive the chain;
//! - the seed's runbooks verbatim between two onelog servers: resync after lag, split-brain
//!   with gtid_strict_mode's explicit errors, demoting a former primary, switchover and back;
//! - parallel apply (4 workers, optimistic) under a hot-row workload: the replica's binlog has
//!   the primary's GTIDs in the primary's order and equal tables.
//!
//! Every wait is bounded ([`common::replica::SYNC_TIMEOUT`]).

mod common;

use std::time::Duration;

use common::mariadb::MariaDb;
use common::replica::{
    binlog_gtids, dump, mariadb_dump, mariadb_primary, mariadb_start_slave, onelog_rpl_user,
    replicated, slave_status, start_slave, wait_mariadb_pos, wait_onelog_caught_up,
    wait_onelog_pos, wait_sql_error,
};
use common::{sql, sql_err, sql_value, Onelog};

fn onelog(dir: &std::path::Path, server_id: u32, extra: &[&str]) -> Onelog {
    let id = format!("--server-id={server_id}");
    let mut args = vec![id.as_str(), common::TEST_SEGMENT_SIZE];
    args.extend_from_slice(extra);
    Onelog::start(dir, &args)
}

#[test]
fn a_mariadb_primary_replicates_into_onelog_in_mixed_and_row_format() {
    let tmp = tempfile::tempdir().unwrap();
    let (mut primary, pport) = mariadb_primary(&tmp.path().join("m"), 1, &[]);
    let replica = onelog(&tmp.path().join("o"), 2, &[]);
    let rport = replica.port;

    primary.run(
        Some(
            "CREATE DATABASE d; \
             CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(20), n INT); \
             CREATE TABLE d.a (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(20), at DATETIME); \
             INSERT INTO d.t VALUES (1,'one',10),(2,'two',20),(3,'three',30); \
             UPDATE d.t SET n = n + 1 WHERE id >= 2; \
             DELETE FROM d.t WHERE id = 1; \
             INSERT INTO d.a (v, at) VALUES ('x', NOW()), ('y', NOW()); \
             SET @who = 'user var'; INSERT INTO d.t VALUES (4, @who, 40); \
             BEGIN; INSERT INTO d.t VALUES (5,'five',50); UPDATE d.t SET v='TWO' WHERE id=2; \
             COMMIT; \
             SET SESSION binlog_format=ROW; \
             INSERT INTO d.t VALUES (6,'six',60); UPDATE d.t SET n = 0 WHERE id = 3; \
             DELETE FROM d.t WHERE id = 4; \
             CREATE INDEX by_n ON d.t (n);",
        ),
        None,
    );
    start_slave(rport, pport, ", MASTER_USE_GTID=slave_pos");
    let want = primary.value("SELECT @@gtid_binlog_pos");
    wait_onelog_pos(rport, &want, "first catch-up");
    for t in ["d.t", "d.a"] {
        assert_eq!(dump(rport, t), mariadb_dump(&primary, t), "{t}");
    }
    let st = slave_status(rport);
    assert_eq!(st["Slave_IO_Running"], "Yes", "{st:#?}");
    assert_eq!(st["Slave_SQL_Running"], "Yes", "{st:#?}");
    assert_eq!(st["Using_Gtid"], "Slave_Pos");
    assert_eq!(st["Master_Server_Id"], "1");
    assert_eq!(st["Last_IO_Errno"], "0");
    // The replica logged every transaction with the primary's GTID.
    assert_eq!(sql_value(rport, "SELECT @@gtid_binlog_pos"), want);

    // The primary restarts; the replica reconnects and goes on from where it was.
    primary.stop();
    primary.restart();
    primary.run(Some("INSERT INTO d.t VALUES (7,'seven',70)"), None);
    let want = primary.value("SELECT @@gtid_binlog_pos");
    wait_onelog_pos(rport, &want, "after the primary restarted");
    // STOP / START SLAVE.
    sql(rport, "STOP SLAVE");
    assert_eq!(slave_status(rport)["Slave_IO_Running"], "No");
    primary.run(Some("UPDATE d.t SET n = n * 2"), None);
    sql(rport, "START SLAVE");
    let want = primary.value("SELECT @@gtid_binlog_pos");
    wait_onelog_pos(rport, &want, "after STOP/START SLAVE");
    assert_eq!(dump(rport, "d.t"), mariadb_dump(&primary, "d.t"));

    // RAND() in statement format: the primary's seeds travel in a Rand event and the replica's
    // RAND() (MariaDB's generator) gives the same values.
    primary.run(
        Some(
            "SET SESSION binlog_format=STATEMENT; \
             INSERT INTO d.t VALUES (100, 'r', FLOOR(RAND() * 1000000)), \
             (101, 's', FLOOR(RAND() * 1000000))",
        ),
        None,
    );
    let want = primary.value("SELECT @@gtid_binlog_pos");
    wait_onelog_pos(rport, &want, "RAND() in statement format");
    assert_eq!(dump(rport, "d.t"), mariadb_dump(&primary, "d.t"));

    // MIXED switches to rows inside a transaction for UUID(): statement and rows apply
    // together, in order.
    primary.run(
        Some(
            "BEGIN; INSERT INTO d.t VALUES (102, 'stmt', 1); \
             INSERT INTO d.t VALUES (103, LEFT(UUID(), 8), 2); \
             UPDATE d.t SET n = n + 5 WHERE id IN (102, 103); COMMIT",
        ),
        None,
    );
    let want = primary.value("SELECT @@gtid_binlog_pos");
    wait_onelog_pos(rport, &want, "a transaction mixing statements and rows");
    assert_eq!(dump(rport, "d.t"), mariadb_dump(&primary, "d.t"));

    // DDL onelog cannot run (a spatial column) stops the SQL side with an error that names
    // the GTID: never a silent skip.
    primary.run(Some("CREATE TABLE d.s (id INT PRIMARY KEY, g POINT)"), None);
    let bad = primary.value("SELECT @@gtid_binlog_pos");
    let (errno, text) = wait_sql_error(rport, "DDL onelog cannot run");
    assert_ne!(errno, "0", "{text}");
    assert!(text.contains(&format!("GTID {bad}")), "{text}");
    assert!(text.contains("CREATE TABLE d.s"), "{text}");
    assert_ne!(sql_value(rport, "SELECT @@gtid_slave_pos"), bad);
}

#[test]
fn original_gtids_survive_onelog_to_onelog_to_mariadb_to_onelog() {
    let tmp = tempfile::tempdir().unwrap();
    let a = onelog(&tmp.path().join("a"), 1, &[]);
    onelog_rpl_user(a.port);
    // B, C and D get the `rpl` account from A, through the chain.
    let b = onelog(&tmp.path().join("b"), 2, &[]);
    start_slave(b.port, a.port, "");
    // MariaDB in the middle logs what it applies (log_slave_updates) so it can be a primary.
    let c_dir = tmp.path().join("c");
    let c_port = common::replica::free_port();
    let c_port_arg = format!("--port={c_port}");
    let c_bin = format!("--log-bin={}", c_dir.join("mb").display());
    let c = MariaDb::start_with(
        &c_dir,
        &[
            "--server-id=3",
            "--skip-networking=0",
            "--bind-address=127.0.0.1",
            &c_port_arg,
            &c_bin,
            "--log-slave-updates",
            "--character-set-server=utf8mb4",
            "--collation-server=utf8mb4_general_ci",
        ],
    );
    mariadb_start_slave(&c, b.port);
    let d = onelog(&tmp.path().join("d"), 4, &[]);
    start_slave(d.port, c_port, "");

    sql(
        a.port,
        "CREATE DATABASE s; CREATE TABLE s.t (id INT PRIMARY KEY, v VARCHAR(30), n BIGINT); \
         INSERT INTO s.t VALUES (1,'a',1),(2,'b',2),(3,'c',3); UPDATE s.t SET n=n+100; \
         DELETE FROM s.t WHERE id=2; INSERT INTO s.t VALUES (9, NULL, -5)",
    );
    let want = sql_value(a.port, "SELECT @@gtid_binlog_pos");
    wait_onelog_pos(b.port, &want, "B");
    wait_mariadb_pos(&c, &want, "C (MariaDB)");
    wait_onelog_pos(d.port, &want, "D");
    // D logged the chain's transactions with A's GTIDs, in A's order.
    assert_eq!(sql_value(d.port, "SELECT @@gtid_binlog_pos"), want);
    // Every transaction of A after its bootstrap account (0-1-1, which collides in domain 0
    // with B's own bootstrap GTID 0-2-1 and so is not relayed by MariaDB in the middle)
    // reached D with A's GTID, in A's order.
    let from_a: Vec<String> = replicated(&binlog_gtids(d.port), 4)
        .into_iter()
        .filter(|g| g.contains("-1-"))
        .collect();
    assert_eq!(from_a, binlog_gtids(a.port)[1..].to_vec());
    assert_eq!(dump(d.port, "s.t"), dump(a.port, "s.t"));
    assert_eq!(mariadb_dump(&c, "s.t"), dump(a.port, "s.t"));
}

#[test]
fn the_seed_runbooks_run_verbatim_between_two_onelog_servers() {
    let tmp = tempfile::tempdir().unwrap();
    let a = onelog(&tmp.path().join("a"), 1, &[]);
    let b = onelog(&tmp.path().join("b"), 2, &[]);
    onelog_rpl_user(a.port);
    sql(
        a.port,
        "CREATE DATABASE r; CREATE TABLE r.t (id INT PRIMARY KEY, v INT); \
         INSERT INTO r.t VALUES (1,1),(2,2),(3,3)",
    );
    start_slave(b.port, a.port, ", MASTER_USE_GTID=slave_pos");
    wait_onelog_caught_up(b.port, a.port, "initial");

    // Resync after lag: the replica stops, the primary moves on, START SLAVE catches up.
    sql(b.port, "STOP SLAVE");
    for i in 10..30 {
        sql(a.port, &format!("INSERT INTO r.t VALUES ({i}, {i})"));
    }
    sql(b.port, "START SLAVE");
    wait_onelog_caught_up(b.port, a.port, "resync after lag");
    assert_eq!(dump(b.port, "r.t"), dump(a.port, "r.t"));
    let last_good = sql_value(b.port, "SELECT @@gtid_slave_pos");

    // Split-brain: B is cut off and takes rogue writes while A goes on.
    sql(b.port, "STOP SLAVE");
    sql(
        b.port,
        "INSERT INTO r.t VALUES (1000, 1); UPDATE r.t SET v = -1 WHERE id = 1",
    );
    sql(
        a.port,
        "INSERT INTO r.t VALUES (31, 31); INSERT INTO r.t VALUES (32, 32)",
    );
    // With gtid_strict_mode the runbook's SET GLOBAL gtid_slave_pos is refused: B's binlog
    // holds newer GTIDs of its own (MariaDB's 1947).
    sql(b.port, "SET GLOBAL gtid_strict_mode = ON; RESET SLAVE");
    let err = sql_err(
        b.port,
        &format!("SET GLOBAL gtid_slave_pos = '{last_good}'"),
    );
    assert!(err.contains("1947"), "{err}");
    assert!(err.contains("conflicts with the binary log"), "{err}");
    // Without strict mode it is a warning; then, strict again, START SLAVE meets the rogue
    // GTIDs: the explicit error the runbook promises (1950), nothing applied silently.
    sql(
        b.port,
        &format!(
            "SET GLOBAL gtid_strict_mode = OFF; SET GLOBAL gtid_slave_pos = '{last_good}'; \
             SET GLOBAL gtid_strict_mode = ON"
        ),
    );
    sql(b.port, "START SLAVE");
    let (errno, text) = wait_sql_error(b.port, "split-brain under gtid_strict_mode");
    assert_eq!(errno, "1950", "{text}");
    assert!(text.contains("out-of-order sequence number"), "{text}");
    // What B refused is A's history, not lost: its position is still the last good one.
    assert_eq!(sql_value(b.port, "SELECT @@gtid_slave_pos"), last_good);
    sql(b.port, "STOP SLAVE");

    // Switchover: A is demoted and follows B; B becomes the primary; then back.
    let c = onelog(&tmp.path().join("c"), 3, &[]);
    start_slave(c.port, a.port, "");
    wait_onelog_caught_up(c.port, a.port, "c follows a");
    sql(c.port, "STOP SLAVE");
    sql(a.port, "SET GLOBAL read_only = ON");
    sql(c.port, "INSERT INTO r.t VALUES (2000, 1)");
    start_slave(
        a.port,
        c.port,
        ", MASTER_USE_GTID=slave_pos, MASTER_DEMOTE_TO_SLAVE=1",
    );
    wait_onelog_caught_up(a.port, c.port, "a follows c");
    assert_eq!(dump(a.port, "r.t"), dump(c.port, "r.t"));
    // And back: C is demoted and follows A again.
    sql(
        a.port,
        "STOP SLAVE; RESET SLAVE ALL; SET GLOBAL read_only = OFF",
    );
    sql(a.port, "INSERT INTO r.t VALUES (3000, 1)");
    start_slave(
        c.port,
        a.port,
        ", MASTER_USE_GTID=slave_pos, MASTER_DEMOTE_TO_SLAVE=1",
    );
    wait_onelog_caught_up(c.port, a.port, "c follows a again");
    assert_eq!(dump(a.port, "r.t"), dump(c.port, "r.t"));
    // C's log has its own bootstrap GTID first, then exactly A's history.
    let mut gc = binlog_gtids(c.port);
    gc.retain(|g| g != "0-3-1");
    assert_eq!(binlog_gtids(a.port), gc);
}

#[test]
fn parallel_workers_keep_the_primary_order_under_hot_rows() {
    let tmp = tempfile::tempdir().unwrap();
    let a = onelog(&tmp.path().join("a"), 1, &[]);
    onelog_rpl_user(a.port);
    let b = onelog(&tmp.path().join("b"), 2, &[]);
    sql(
        b.port,
        "SET GLOBAL slave_parallel_threads = 4; SET GLOBAL slave_parallel_mode = 'optimistic'",
    );
    sql(
        a.port,
        "CREATE DATABASE h; CREATE TABLE h.hot (id INT PRIMARY KEY, v BIGINT); \
         CREATE TABLE h.log (id INT PRIMARY KEY, who INT, v BIGINT); \
         INSERT INTO h.hot VALUES (1,0),(2,0),(3,0)",
    );
    // Eight clients hammer three rows and append to a log table, concurrently.
    let port = a.port;
    let clients: Vec<_> = (0..8)
        .map(|c| {
            std::thread::spawn(move || {
                let mut script = String::new();
                for i in 0..60 {
                    let id = c * 1000 + i;
                    let hot = i % 3 + 1;
                    script.push_str(&format!(
                        "BEGIN; UPDATE h.hot SET v = v + {c} + 1 WHERE id = {hot}; \
                         INSERT INTO h.log VALUES ({id}, {c}, {i}); COMMIT;\n"
                    ));
                }
                let out = common::run_bounded(
                    common::mariadb_cmd(port).arg("-N"),
                    Some(&script),
                    Duration::from_secs(300),
                );
                assert!(
                    out.status.success(),
                    "{}",
                    String::from_utf8_lossy(&out.stderr)
                );
            })
        })
        .collect();
    start_slave(b.port, a.port, "");
    for c in clients {
        c.join().unwrap();
    }
    wait_onelog_caught_up(b.port, a.port, "parallel replica");
    assert_eq!(dump(b.port, "h.hot"), dump(a.port, "h.hot"));
    assert_eq!(dump(b.port, "h.log"), dump(a.port, "h.log"));
    let (ga, gb) = (binlog_gtids(a.port), binlog_gtids(b.port));
    assert!(ga.len() >= 8 * 60 + 4, "{}", ga.len());
    assert_eq!(
        replicated(&gb, 2),
        ga,
        "the replica's log order is the primary's"
    );
}
