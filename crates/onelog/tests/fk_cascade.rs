//! Foreign key cascades across processes (issue 15 part 2), with real servers on loopback:
//! - a MariaDB 10.11 replica follows onelog through ON DELETE CASCADE, SET NULL and ON
//!   UPDATE CASCADE: onelog logs the cascaded rows before their parent with
//!   `NO_FOREIGN_KEY_CHECKS_F`, the replica applies them unchecked, then the parent's change
//!   finds no child left to cascade; both end with the same rows and the replica's SQL thread
//!   never stops; onelog killed with SIGKILL and restarted recovers the cascades from its log;
//! - onelog replicating a MariaDB primary in ROW format (which logs the parent's change only)
//!   derives the cascade itself and ends with the primary's rows.
//!
//! Both with children that have a primary key and children that have none (rows found by
//! their whole value, identical rows among them).
//!
//! Every wait is bounded ([`common::replica::SYNC_TIMEOUT`]).

mod common;

use common::mariadb::MariaDb;
use common::replica::{
    dump, mariadb_dump, mariadb_primary, mariadb_slave_status, mariadb_start_slave,
    onelog_rpl_user, start_slave, wait_mariadb_pos, wait_onelog_pos,
};
use common::{sql, sql_value, Onelog};

/// p <- c (ON DELETE CASCADE ON UPDATE CASCADE) <- g (ON DELETE SET NULL ON UPDATE SET NULL).
const SCHEMA: &str = "CREATE DATABASE d; \
    CREATE TABLE d.p (id INT PRIMARY KEY, v INT); \
    CREATE TABLE d.c (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES d.p(id) \
    ON DELETE CASCADE ON UPDATE CASCADE); \
    CREATE TABLE d.g (id INT PRIMARY KEY, cid INT, FOREIGN KEY (cid) REFERENCES d.c(id) \
    ON DELETE SET NULL ON UPDATE SET NULL); \
    INSERT INTO d.p VALUES (1, 1), (2, 2), (5, 5); \
    INSERT INTO d.c VALUES (10, 1), (11, 1), (20, 2), (50, 5); \
    INSERT INTO d.g VALUES (100, 10), (101, 11), (200, 20), (500, 50); \
    CREATE TABLE d.nc (a INT, pid INT, FOREIGN KEY (pid) REFERENCES d.p(id) \
    ON DELETE CASCADE ON UPDATE CASCADE); \
    CREATE TABLE d.nn (a INT, pid INT, FOREIGN KEY (pid) REFERENCES d.p(id) \
    ON DELETE SET NULL ON UPDATE SET NULL); \
    INSERT INTO d.nc VALUES (1, 1), (1, 1), (2, 2), (2, 2), (5, 5); \
    INSERT INTO d.nn VALUES (1, 1), (1, 1), (2, 2), (5, 5)";

/// The cascading statements, one transaction each.
const CASCADES: &str = "DELETE FROM d.p WHERE id = 1; \
    UPDATE d.p SET id = 3 WHERE id = 2; \
    UPDATE d.c SET id = 21 WHERE id = 20; \
    BEGIN; DELETE FROM d.p WHERE id = 5; INSERT INTO d.p VALUES (6, 6); COMMIT";

/// What the tables hold after [`CASCADES`] (`SELECT * ... ORDER BY 1`, tab-separated); `nc`
/// and `nn` have no primary key and identical rows (MariaDB 10.11.14 left the same rows).
const WANT: [(&str, &str); 5] = [
    ("d.p", "3\t2\n6\t6\n"),
    ("d.c", "21\t3\n"),
    ("d.g", "100\tNULL\n101\tNULL\n200\tNULL\n500\tNULL\n"),
    ("d.nc", "2\t3\n2\t3\n"),
    ("d.nn", "1\tNULL\n1\tNULL\n2\tNULL\n5\tNULL\n"),
];

fn assert_rows(what: &str, got: impl Fn(&str) -> String) {
    for (t, want) in WANT {
        assert_eq!(got(t), want, "{what}: {t}");
    }
}

#[test]
fn a_mariadb_replica_and_a_restart_after_kill9_keep_onelogs_cascades() {
    let tmp = tempfile::tempdir().unwrap();
    let datadir = tmp.path().join("o");
    let mut primary = Onelog::start(&datadir, &["--server-id=1"]);
    let port = primary.port;
    onelog_rpl_user(port);
    let replica = MariaDb::start_with(
        &tmp.path().join("m"),
        &[
            "--server-id=2",
            "--character-set-server=utf8mb4",
            "--collation-server=utf8mb4_general_ci",
        ],
    );
    mariadb_start_slave(&replica, port);
    sql(port, SCHEMA);
    sql(port, CASCADES);
    assert_rows("onelog", |t| dump(port, t));
    let want = sql_value(port, "SELECT @@gtid_binlog_pos");
    wait_mariadb_pos(&replica, &want, "the cascades");
    assert_rows("the MariaDB replica", |t| mariadb_dump(&replica, t));
    let st = mariadb_slave_status(&replica);
    assert_eq!(st["Last_SQL_Errno"], "0", "{st:#?}");
    assert_eq!(st["Slave_SQL_Running"], "Yes", "{st:#?}");

    // Killed without a checkpoint after the cascades: recovery replays them from the log.
    primary.kill9();
    let restarted = Onelog::start(&datadir, &["--server-id=1"]);
    assert_rows("onelog after kill -9", |t| dump(restarted.port, t));
}

#[test]
fn onelog_replica_derives_the_cascades_a_mariadb_primary_does_not_log() {
    let tmp = tempfile::tempdir().unwrap();
    let (primary, pport) = mariadb_primary(&tmp.path().join("m"), 1, &["--binlog-format=ROW"]);
    let replica = Onelog::start(&tmp.path().join("o"), &["--server-id=2"]);
    let rport = replica.port;
    primary.run(Some(SCHEMA), None);
    start_slave(rport, pport, ", MASTER_USE_GTID=slave_pos");
    primary.run(Some(CASCADES), None);
    assert_rows("the MariaDB primary", |t| mariadb_dump(&primary, t));
    let want = primary.value("SELECT @@gtid_binlog_pos");
    wait_onelog_pos(rport, &want, "the cascades");
    assert_rows("the onelog replica", |t| dump(rport, t));
}
