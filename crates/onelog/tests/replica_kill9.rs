//! Crash-safe replica position for free (issue 12 part 4): an onelog replica (4 parallel
//! workers) killed with SIGKILL at pseudo-random points under sysbench load on its onelog
//! primary, 20 rounds at durability 1 and 20 at durability 2, restarted on the same data
//! directory each time (replication starts again by itself, as MariaDB's does). At the end it
//! must hold exactly the primary's history: the same GTIDs in the same order in its binlog (no
//! gap, no duplicate), `gtid_slave_pos` = the primary's `gtid_binlog_pos`, and equal tables.

mod common;

use std::process::Command;
use std::time::Duration;

use common::replica::{
    binlog_gtids, dump, onelog_rpl_user, replicated, start_slave, wait_onelog_caught_up,
};
use common::{run_bounded, sql, sql_value, Onelog};

const ROUNDS: u32 = 20;

fn sysbench_cmd(port: u16, command: &str, seconds: u64) -> Command {
    common::sysbench_write_only(port, command, seconds, 500)
}

fn kill_rounds(durability: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let a = Onelog::start(
        &tmp.path().join("a"),
        &["--server-id=1", common::TEST_SEGMENT_SIZE],
    );
    onelog_rpl_user(a.port);
    sql(a.port, "CREATE DATABASE sb");
    let out = run_bounded(
        &mut sysbench_cmd(a.port, "prepare", 0),
        None,
        Duration::from_secs(300),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let bdir = tmp.path().join("b");
    let b_args = ["--server-id=2", common::TEST_SEGMENT_SIZE, durability];
    let mut b = Onelog::start(&bdir, &b_args);
    sql(
        b.port,
        "SET GLOBAL slave_parallel_threads = 4; SET GLOBAL slave_parallel_mode = 'optimistic'",
    );
    start_slave(b.port, a.port, "");

    // The load runs through every round (bounded: sysbench's --time).
    let port = a.port;
    let load = std::thread::spawn(move || {
        run_bounded(
            &mut sysbench_cmd(port, "run", 60),
            None,
            Duration::from_secs(240),
        )
    });
    let mut seed = 0x9E37_79B9u64;
    for round in 0..ROUNDS {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        std::thread::sleep(Duration::from_millis(150 + (seed >> 33) % 900));
        b.kill9();
        drop(b);
        b = Onelog::start(&bdir, &b_args);
        // The replica restarted by itself and did not lose its place (it never goes back).
        let st = common::replica::slave_status(b.port);
        assert!(
            st.get("Slave_SQL_Running").is_some_and(|v| v == "Yes"),
            "round {round}: replication did not restart with the server\n{st:#?}"
        );
    }
    let out = load.join().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    wait_onelog_caught_up(b.port, a.port, "after the kill rounds");
    assert_eq!(
        sql_value(b.port, "SELECT @@gtid_slave_pos"),
        sql_value(a.port, "SELECT @@gtid_binlog_pos")
    );
    let (ga, gb) = (binlog_gtids(a.port), replicated(&binlog_gtids(b.port), 2));
    assert_eq!(gb.len(), ga.len(), "no gap and no duplicate");
    assert_eq!(gb, ga, "the replica's history is the primary's");
    for t in ["sb.sbtest1", "sb.sbtest2"] {
        assert_eq!(dump(b.port, t), dump(a.port, t), "{t}");
    }
}

#[test]
fn a_replica_killed_20_times_at_durability_1_resumes_without_gap_or_duplicate() {
    kill_rounds("--innodb-flush-log-at-trx-commit=1");
}

#[test]
fn a_replica_killed_20_times_at_durability_2_resumes_without_gap_or_duplicate() {
    kill_rounds("--innodb-flush-log-at-trx-commit=2");
}
