//! A real MariaDB 10.11 replica follows onelog (issue 11 part 6): `CHANGE MASTER TO ...
//! MASTER_USE_GTID=slave_pos; START SLAVE` on Debian's `mariadbd` (server id 2, no binlog, on a
//! temporary datadir) pointed at onelog's loopback port, account `rpl` with REPLICATION SLAVE.
//!
//! What must hold, each checked against the replica's own state (never a mock):
//! - DDL (CREATE/DROP DATABASE, CREATE/DROP TABLE, CREATE/DROP INDEX, ALTER TABLE ADD/DROP
//!   INDEX, TRUNCATE), a table with one column of every type onelog supports (extremes, NULLs,
//!   ENUM/SET/JSON included,
//!   an update and a delete) and sysbench oltp_read_write at 4 threads replicate: the sorted
//!   dumps of every table are equal on both sides and the replica's `@@gtid_slave_pos` equals
//!   onelog's `@@gtid_binlog_pos`; the replica never reports an SQL or IO error;
//! - the replica restarts (SIGTERM, start) and resumes;
//! - onelog killed with SIGKILL under load, three times, restarted on the same port: right
//!   after each restart the replica is not ahead of the recovered primary (per domain), then it
//!   catches up with no gap (tables equal) and no duplicate (a duplicate insert would stop the
//!   replica's SQL thread with error 1062, which the wait reports);
//! - the replica killed with SIGKILL under load resumes the same way.
//!
//! Every wait is bounded ([`SYNC_TIMEOUT`]); servers are killed when the test ends.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use common::mariadb::MariaDb;
use common::{mariadb_cmd, run_bounded, sql, sql_value, status, sysbench, Onelog};

/// How long the replica may take to catch up with the primary.
const SYNC_TIMEOUT: Duration = Duration::from_secs(180);

/// Starts onelog on `datadir` (on `port`, or a free one).
fn start_primary(datadir: &Path, port: Option<u16>) -> Onelog {
    let port_arg = port.map(|p| format!("--port={p}"));
    let args: Vec<&str> = port_arg.iter().map(String::as_str).collect();
    Onelog::start(datadir, &args)
}

/// The replication account of the module docs.
fn create_rpl_user(port: u16) {
    sql(
        port,
        "CREATE USER rpl@'%' IDENTIFIED BY 'rpl'; \
         GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO rpl@'%'",
    );
}

/// A MariaDB replica of the onelog on `primary_port`, replicating.
fn start_replica(dir: &Path, primary_port: u16) -> MariaDb {
    start_replica_with(dir, primary_port, &[])
}

/// [`start_replica`] with more server options.
fn start_replica_with(dir: &Path, primary_port: u16, extra: &[&str]) -> MariaDb {
    // utf8mb4: a replica reconnecting after losing its primary (mysql_reconnect) sends
    // `SET NAMES <its character_set_server>`, latin1 by default, which onelog refuses with
    // 1235 (it acts only on utf8mb4): the replica would retry forever with an empty error.
    let mut args = vec![
        "--server-id=2",
        "--slave-net-timeout=20",
        "--character-set-server=utf8mb4",
        "--collation-server=utf8mb4_general_ci",
    ];
    args.extend_from_slice(extra);
    let replica = MariaDb::start_with(dir, &args);
    replica.run(
        Some(&format!(
            "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={primary_port}, \
             MASTER_USER='rpl', MASTER_PASSWORD='rpl', MASTER_USE_GTID=slave_pos, \
             MASTER_HEARTBEAT_PERIOD=2, MASTER_CONNECT_RETRY=1; START SLAVE"
        )),
        None,
    );
    replica
}

/// SHOW SLAVE STATUS as column name → value.
fn slave_status(replica: &MariaDb) -> BTreeMap<String, String> {
    let out = run_bounded(
        replica.client().args(["-B", "-e", "SHOW SLAVE STATUS"]),
        None,
        Duration::from_secs(60),
    );
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut lines = text.lines();
    let (Some(names), Some(values)) = (lines.next(), lines.next()) else {
        return BTreeMap::new();
    };
    names
        .split('\t')
        .zip(values.split('\t'))
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect()
}

/// Fails the test when the replica's SQL thread stopped on an error.
fn assert_no_sql_error(replica: &MariaDb, what: &str) {
    let st = slave_status(replica);
    let errno = st.get("Last_SQL_Errno").map(String::as_str).unwrap_or("0");
    assert!(
        errno == "0",
        "{what}: the replica's SQL thread failed: {errno} {}\n{st:#?}",
        st.get("Last_SQL_Error").cloned().unwrap_or_default()
    );
}

/// `D-S-N,...` → domain → (server, seq_no).
fn gtid_pos(text: &str) -> BTreeMap<u32, (u32, u64)> {
    text.trim()
        .split(',')
        .filter(|g| !g.trim().is_empty())
        .map(|g| {
            let parts: Vec<&str> = g.trim().split('-').collect();
            assert_eq!(parts.len(), 3, "bad GTID {g:?} in {text:?}");
            let n = |s: &str| {
                s.parse::<u64>()
                    .unwrap_or_else(|_| panic!("bad GTID {g:?}"))
            };
            (n(parts[0]) as u32, (n(parts[1]) as u32, n(parts[2])))
        })
        .collect()
}

/// Waits until the replica's `@@gtid_slave_pos` equals the primary's `@@gtid_binlog_pos`.
fn wait_caught_up(primary_port: u16, replica: &MariaDb, what: &str) -> Duration {
    let started = Instant::now();
    let want = sql_value(primary_port, "SELECT @@gtid_binlog_pos");
    loop {
        let got = replica.value("SELECT @@gtid_slave_pos");
        if gtid_pos(&got) == gtid_pos(&want) {
            return started.elapsed();
        }
        assert_no_sql_error(replica, what);
        assert!(
            started.elapsed() < SYNC_TIMEOUT,
            "{what}: the replica did not reach {want:?} within {SYNC_TIMEOUT:?} (at {got:?})\n\
             {:#?}",
            slave_status(replica)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The sorted contents of `table` (`select` is the column list) on both sides; asserts equal.
fn assert_same_table(primary_port: u16, replica: &MariaDb, table: &str, select: &str) {
    let q = format!("SELECT {select} FROM {table} ORDER BY 1");
    let want = sql(primary_port, &q);
    let got = replica.run(Some(&q), None);
    assert!(
        want == got,
        "{table} differs\nonelog:\n{want}\nreplica:\n{got}"
    );
}

/// `SHOW TABLES FROM db` on both sides; asserts equal, returns the list.
fn assert_same_tables_list(primary_port: u16, replica: &MariaDb, db: &str) -> String {
    let q = format!("SHOW TABLES FROM {db}");
    let want = sql(primary_port, &q);
    let got = replica.run(Some(&q), None);
    assert_eq!(want, got, "SHOW TABLES FROM {db}");
    want
}

type Col = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
);

/// Columns of `types.t`: (name, type, value at the low end, value at the high end, a middle
/// value). Every column type onelog's CREATE TABLE accepts.
const TYPES: &[Col] = &[
    ("c_ti", "TINYINT", "-128", "127", "7"),
    ("c_uti", "TINYINT UNSIGNED", "0", "255", "8"),
    ("c_si", "SMALLINT", "-32768", "32767", "-9"),
    ("c_usi", "SMALLINT UNSIGNED", "0", "65535", "10"),
    ("c_mi", "MEDIUMINT", "-8388608", "8388607", "-11"),
    ("c_umi", "MEDIUMINT UNSIGNED", "0", "16777215", "12"),
    ("c_i", "INT", "-2147483648", "2147483647", "-13"),
    ("c_ui", "INT UNSIGNED", "0", "4294967295", "14"),
    (
        "c_bi",
        "BIGINT",
        "-9223372036854775808",
        "9223372036854775807",
        "-15",
    ),
    (
        "c_ubi",
        "BIGINT UNSIGNED",
        "0",
        "18446744073709551615",
        "16",
    ),
    ("c_f", "FLOAT", "-1.5e38", "1.5e38", "0.25"),
    ("c_d", "DOUBLE", "-1.7e308", "1.7e308", "-0.125"),
    (
        "c_dec",
        "DECIMAL(10,2)",
        "-99999999.99",
        "99999999.99",
        "12.34",
    ),
    (
        "c_dec65",
        "DECIMAL(65,30)",
        "-99999999999999999999999999999999999.999999999999999999999999999999",
        "99999999999999999999999999999999999.999999999999999999999999999999",
        "0.000000000000000000000000000001",
    ),
    ("c_ch", "CHAR(10)", "''", "'zzzzzzzzzz'", "'héllo'"),
    (
        "c_vc",
        "VARCHAR(300)",
        "''",
        "REPEAT('y', 300)",
        "'naïve ☃'",
    ),
    (
        "c_bin",
        "BINARY(4)",
        "X'00000000'",
        "X'FFFFFFFF'",
        "X'01020304'",
    ),
    (
        "c_vbin",
        "VARBINARY(20)",
        "X''",
        "X'FF00FF00'",
        "X'DEADBEEF'",
    ),
    ("c_tt", "TINYTEXT", "''", "REPEAT('t', 255)", "'tiny'"),
    ("c_t", "TEXT", "''", "REPEAT('u', 3000)", "'text'"),
    ("c_mt", "MEDIUMTEXT", "''", "REPEAT('m', 70000)", "'medium'"),
    ("c_lt", "LONGTEXT", "''", "REPEAT('l', 100000)", "'long'"),
    ("c_tb", "TINYBLOB", "X''", "REPEAT(X'FF', 255)", "X'00'"),
    ("c_b", "BLOB", "X''", "REPEAT(X'AB', 3000)", "X'0001'"),
    (
        "c_mb",
        "MEDIUMBLOB",
        "X''",
        "REPEAT(X'CD', 70000)",
        "X'000102'",
    ),
    (
        "c_lb",
        "LONGBLOB",
        "X''",
        "REPEAT(X'EF', 100000)",
        "X'00010203'",
    ),
    (
        "c_date",
        "DATE",
        "'1000-01-01'",
        "'9999-12-31'",
        "'2026-11-25'",
    ),
    (
        "c_dt",
        "DATETIME",
        "'1000-01-01 00:00:00'",
        "'9999-12-31 23:59:59'",
        "'2026-11-25 17:30:00'",
    ),
    (
        "c_dt6",
        "DATETIME(6)",
        "'1000-01-01 00:00:00.000000'",
        "'9999-12-31 23:59:59.999999'",
        "'2026-11-25 17:30:00.123456'",
    ),
    (
        "c_ts",
        "TIMESTAMP(3) NULL",
        "'1970-01-01 00:00:01.000'",
        "'2038-01-19 03:14:07.999'",
        "'2026-11-25 17:30:00.5'",
    ),
    ("c_tm", "TIME", "'-838:59:59'", "'838:59:59'", "'-01:02:03'"),
    (
        "c_tm6",
        "TIME(6)",
        "'-838:59:58.999999'",
        "'838:59:58.999999'",
        "'12:34:56.654321'",
    ),
    ("c_y", "YEAR", "1901", "2155", "2026"),
    // Issue 15 part 4: ENUM/SET row images (index / bit set) and JSON (LONGTEXT).
    ("c_enum", "ENUM('b','a','c')", "'b'", "'c'", "'A'"),
    ("c_bigenum", "ENUM('x','y')", "1", "'y'", "'x'"),
    ("c_set", "SET('x','y','z')", "''", "'z,y,x'", "'y'"),
    (
        "c_set64",
        "SET('a0','a1','a2','a3','a4','a5','a6','a7','a8','a9','b0','b1','b2','b3','b4','b5','b6','b7','b8','b9','c0','c1','c2','c3','c4','c5','c6','c7','c8','c9','d0','d1','d2','d3','d4','d5','d6','d7','d8','d9')",
        "'a0'",
        "'d9,a0'",
        "'b5,c5'",
    ),
    ("c_bit3", "BIT(3)", "0", "b'111'", "5"),
    ("c_bit64", "BIT(64)", "0", "18446744073709551615", "b'1010'"),
    ("c_json", "JSON", "'[]'", "'{\"a\": [1, 2.50, \"x\"]}'", "'\"s\"'"),
];

/// The column list that dumps `types.t` comparably (binary strings as hex).
fn types_select() -> String {
    let mut cols = vec!["id".to_string()];
    for (name, ty, ..) in TYPES {
        if ty.contains("BIN") || ty.contains("BLOB") {
            cols.push(format!("HEX({name})"));
        } else if ty.starts_with("BIT") {
            cols.push(format!("{name} + 0"));
        } else {
            cols.push(name.to_string());
        }
    }
    cols.join(", ")
}

/// Creates `types.t` and writes rows with extremes, NULLs, an update and a delete.
fn write_types(port: u16) {
    let ddl: Vec<String> = TYPES.iter().map(|(n, t, ..)| format!("{n} {t}")).collect();
    sql(
        port,
        &format!(
            "CREATE DATABASE types; CREATE TABLE types.t (id INT NOT NULL PRIMARY KEY, {})",
            ddl.join(", ")
        ),
    );
    let names: Vec<&str> = TYPES.iter().map(|c| c.0).collect();
    let names = names.join(", ");
    let row = |id: u32, pick: fn(&Col) -> &'static str| {
        let vals: Vec<&str> = TYPES.iter().map(pick).collect();
        format!(
            "INSERT INTO types.t (id, {names}) VALUES ({id}, {})",
            vals.join(", ")
        )
    };
    sql(port, &row(1, |c| c.2));
    sql(port, &row(2, |c| c.3));
    sql(port, &row(3, |c| c.4));
    sql(port, "INSERT INTO types.t (id) VALUES (4)");
    sql(port, &row(5, |c| c.4));
    // An update of every column (before and after images), and a delete.
    let sets: Vec<String> = TYPES.iter().map(|c| format!("{} = {}", c.0, c.3)).collect();
    sql(
        port,
        &format!("UPDATE types.t SET {} WHERE id = 3", sets.join(", ")),
    );
    let nulls: Vec<String> = TYPES.iter().map(|c| format!("{} = NULL", c.0)).collect();
    sql(
        port,
        &format!("UPDATE types.t SET {} WHERE id = 2", nulls.join(", ")),
    );
    sql(port, "DELETE FROM types.t WHERE id = 5");
}

/// DDL the replica must follow; returns the tables left in `ddl`.
fn write_ddl(port: u16) {
    sql(
        port,
        "CREATE DATABASE ddl; \
         CREATE TABLE ddl.a (id INT NOT NULL PRIMARY KEY, v VARCHAR(20), n INT); \
         CREATE TABLE ddl.b (id BIGINT NOT NULL PRIMARY KEY, w INT); \
         CREATE TABLE ddl.gone (id INT PRIMARY KEY); \
         INSERT INTO ddl.a VALUES (1, 'one', 10), (2, 'two', 20), (3, NULL, NULL); \
         INSERT INTO ddl.b VALUES (1, 1), (2, 2); \
         INSERT INTO ddl.gone VALUES (1); \
         CREATE INDEX by_n ON ddl.a (n); \
         ALTER TABLE ddl.b ADD INDEX by_w (w); \
         ALTER TABLE ddl.b DROP INDEX by_w; \
         DROP INDEX by_n ON ddl.a; \
         CREATE UNIQUE INDEX by_v ON ddl.a (v); \
         TRUNCATE TABLE ddl.b; \
         INSERT INTO ddl.b VALUES (3, 3); \
         DROP TABLE ddl.gone; \
         CREATE DATABASE scratch; CREATE TABLE scratch.x (id INT PRIMARY KEY); \
         DROP DATABASE scratch; \
         CREATE DEFINER=root@localhost VIEW ddl.va AS SELECT id, v FROM ddl.a WHERE n > 10; \
         USE ddl; \
         CREATE SQL SECURITY INVOKER VIEW vb (k, w2) AS SELECT id, w + 1 FROM b; \
         CREATE VIEW gonev AS SELECT 1 AS one; \
         DROP VIEW IF EXISTS gonev, nope; \
         RENAME TABLE vb TO vb2; \
         ALTER VIEW va AS SELECT id, v, n FROM a WHERE n >= 10; \
         INSERT INTO va (id, v, n) VALUES (9, 'nine', 90); \
         UPDATE va SET v = 'twenty' WHERE id = 2; \
         DELETE FROM va WHERE id = 1 OR n IS NULL",
    );
}

/// A client inserting rows `base+1 ..= base+count` into `ld.t`, one commit each, until done
/// or until its server dies. Returns the thread (joined: the client's output).
fn start_load(port: u16, base: u64, count: u64) -> std::thread::JoinHandle<std::process::Output> {
    let script: String = (base + 1..=base + count)
        .map(|i| format!("INSERT INTO ld.t VALUES ({i}, 'row-{i}');\n"))
        .collect();
    std::thread::spawn(move || {
        run_bounded(
            &mut mariadb_cmd(port),
            Some(&script),
            Duration::from_secs(300),
        )
    })
}

/// Number of rows in `ld.t` on the primary.
fn load_rows(port: u16) -> u64 {
    sql_value(port, "SELECT COUNT(*) FROM ld.t")
        .parse()
        .expect("a count")
}

/// Waits until the primary has more than `rows` rows in `ld.t` (bounded).
fn wait_load_passes(port: u16, rows: u64) {
    let deadline = Instant::now() + SYNC_TIMEOUT;
    while load_rows(port) <= rows {
        assert!(Instant::now() < deadline, "the load made no progress");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn mariadb_replica_follows_ddl_types_and_sysbench() {
    let dir = tempfile::tempdir().expect("tempdir");
    let primary = start_primary(&dir.path().join("onelog"), None);
    let port = primary.port;
    create_rpl_user(port);
    let replica = start_replica(&dir.path().join("replica"), port);

    write_ddl(port);
    write_types(port);
    sql(port, "CREATE DATABASE sb");
    sysbench("oltp_read_write", "prepare", port, "sb", 1, 0);
    let t = Instant::now();
    sysbench("oltp_read_write", "run", port, "sb", 4, 6000);
    eprintln!("sysbench run: {:?}", t.elapsed());
    let lag = wait_caught_up(port, &replica, "after the load");
    eprintln!("caught up {lag:?} after the load");

    assert_eq!(
        assert_same_tables_list(port, &replica, "ddl"),
        "a\nb\nva\nvb2\n",
        "ddl's tables and views"
    );
    assert_same_table(port, &replica, "ddl.a", "*");
    assert_same_table(port, &replica, "ddl.b", "*");
    // The views arrived as views (ALTER VIEW's definition, RENAME's name) and read the same.
    assert_eq!(
        replica.value("SELECT GROUP_CONCAT(TABLE_NAME ORDER BY 1) FROM information_schema.views WHERE TABLE_SCHEMA = 'ddl'"),
        "va,vb2"
    );
    assert_same_table(port, &replica, "ddl.va", "*");
    assert_same_table(port, &replica, "ddl.vb2", "*");
    assert_eq!(replica.value("SELECT COUNT(*) FROM ddl.va"), "2");
    // The writes through va reached the replica as ddl.a's rows.
    assert_eq!(
        replica.value("SELECT GROUP_CONCAT(id, ':', IFNULL(v, '-') ORDER BY id) FROM ddl.a"),
        "2:twenty,3:-,9:nine"
    );
    assert_same_tables_list(port, &replica, "types");
    assert_same_table(port, &replica, "types.t", &types_select());
    assert_same_table(port, &replica, "sb.sbtest1", "*");
    let dbs = replica.run(Some("SHOW DATABASES LIKE 'scratch'"), None);
    assert_eq!(dbs, "", "DROP DATABASE scratch did not replicate");
    // The types table really holds the extremes (not an empty table on both sides).
    assert_eq!(
        sql_value(port, "SELECT c_ubi FROM types.t WHERE id = 1"),
        "0"
    );
    assert_eq!(
        replica.value("SELECT c_ubi, c_bi FROM types.t WHERE id = 3"),
        "18446744073709551615\t9223372036854775807"
    );
    assert_eq!(replica.value("SELECT COUNT(*) FROM types.t"), "4");
    // ENUM/SET arrive as the members they name, JSON as its text (row 3 was updated to the
    // maxima, row 1 holds the minima).
    assert_eq!(
        replica.value("SELECT c_enum, c_enum + 0, c_set, c_set + 0, c_set64, c_json, c_bit3 + 0, c_bit64 + 0 FROM types.t WHERE id = 3"),
        "c\t3\tx,y,z\t7\ta0,d9\t{\"a\": [1, 2.50, \"x\"]}\t7\t18446744073709551615"
    );
    assert_eq!(
        replica.value("SELECT c_enum, c_bigenum, c_set, c_json FROM types.t WHERE id = 1"),
        "b\tx\t\t[]"
    );
    assert_eq!(
        replica.value("SELECT c_dec65 IS NULL FROM types.t WHERE id = 2"),
        "1"
    );
    assert_eq!(
        replica.value("SELECT @@gtid_slave_pos"),
        sql_value(port, "SELECT @@gtid_binlog_pos")
    );

    // The replica restarts and resumes.
    let mut replica = replica;
    replica.stop();
    sql(port, "INSERT INTO ddl.a VALUES (4, 'while-down', 40)");
    replica.restart();
    sql(port, "INSERT INTO ddl.a VALUES (5, 'after', 50)");
    wait_caught_up(port, &replica, "after the replica's restart");
    assert_same_table(port, &replica, "ddl.a", "*");
    assert_eq!(replica.value("SELECT COUNT(*) FROM ddl.a"), "5");
    assert_no_sql_error(&replica, "the end");
}

#[test]
fn mariadb_replica_survives_kill9_of_the_primary_and_of_itself() {
    let dir = tempfile::tempdir().expect("tempdir");
    let datadir = dir.path().join("onelog");
    let mut primary = start_primary(&datadir, None);
    let port = primary.port;
    create_rpl_user(port);
    sql(
        port,
        "CREATE DATABASE ld; CREATE TABLE ld.t (id BIGINT NOT NULL PRIMARY KEY, v VARCHAR(20))",
    );
    let mut replica = start_replica(&dir.path().join("replica"), port);
    wait_caught_up(port, &replica, "before the load");

    for round in 0..3u64 {
        let before = load_rows(port);
        let load = start_load(port, round * 1_000_000, 100_000);
        wait_load_passes(port, before + 200);
        primary.kill9();
        let out = load.join().expect("the load thread");
        assert!(
            !out.status.success(),
            "round {round}: the load outlived its server"
        );
        primary = start_primary(&datadir, Some(port));
        let primary_pos = gtid_pos(&sql_value(port, "SELECT @@gtid_binlog_pos"));
        let replica_pos = gtid_pos(&replica.value("SELECT @@gtid_slave_pos"));
        for (domain, (_, seq)) in &replica_pos {
            let theirs = primary_pos.get(domain).map_or(0, |g| g.1);
            assert!(
                *seq <= theirs,
                "round {round}: the replica ({replica_pos:?}) is ahead of the recovered primary \
                 ({primary_pos:?}) in domain {domain}"
            );
        }
        // New writes after the restart, then the replica must hold exactly the primary's rows.
        sql(
            port,
            &format!(
                "INSERT INTO ld.t VALUES ({}, 'after-restart')",
                900_000_000 + round
            ),
        );
        let lag = wait_caught_up(port, &replica, &format!("round {round}"));
        eprintln!("round {round}: caught up {lag:?} after the primary's restart");
        assert_same_table(port, &replica, "ld.t", "*");
    }

    // SIGKILL of the replica under load.
    let before = load_rows(port);
    let load = start_load(port, 5_000_000, 3_000);
    wait_load_passes(port, before + 200);
    replica.kill9();
    let out = load.join().expect("the load thread");
    assert!(
        out.status.success(),
        "the load failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    replica.restart();
    let lag = wait_caught_up(port, &replica, "after the replica's SIGKILL");
    eprintln!("caught up {lag:?} after the replica's SIGKILL");
    assert_same_table(port, &replica, "ld.t", "*");
    assert_eq!(
        replica.value("SELECT COUNT(*) FROM ld.t"),
        sql_value(port, "SELECT COUNT(*) FROM ld.t")
    );
    assert_no_sql_error(&replica, "the end");
}

#[test]
fn a_replica_with_the_primarys_server_id_stops_with_mariadbs_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let primary = start_primary(&dir.path().join("onelog"), None);
    let port = primary.port;
    create_rpl_user(port);
    assert_eq!(sql_value(port, "SELECT @@server_id"), "1");
    let replica = MariaDb::start_with(&dir.path().join("replica"), &["--server-id=1"]);
    replica.run(
        Some(&format!(
            "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={port}, \
             MASTER_USER='rpl', MASTER_PASSWORD='rpl', MASTER_USE_GTID=slave_pos, \
             MASTER_CONNECT_RETRY=1; START SLAVE"
        )),
        None,
    );
    let deadline = Instant::now() + SYNC_TIMEOUT;
    loop {
        let st = slave_status(&replica);
        if st.get("Last_IO_Errno").is_some_and(|e| e != "0") {
            assert_eq!(st["Last_IO_Errno"], "1593", "{st:#?}");
            assert!(
                st["Last_IO_Error"].contains(
                    "master and slave have equal MariaDB server ids; these ids must be \
                     different for replication to work"
                ),
                "{st:#?}"
            );
            assert_eq!(st["Slave_IO_Running"], "No", "{st:#?}");
            return;
        }
        assert!(
            Instant::now() < deadline,
            "no IO error within {SYNC_TIMEOUT:?}: {st:#?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The semi-sync status text (`ON`/`OFF`) of the primary.
fn semi_sync_status(port: u16) -> String {
    sql(
        port,
        "SHOW GLOBAL STATUS LIKE 'Rpl_semi_sync_master_status'",
    )
    .trim()
    .rsplit('\t')
    .next()
    .unwrap_or_default()
    .to_string()
}

/// Waits (bounded) until `cond` holds.
fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + SYNC_TIMEOUT;
    while !cond() {
        assert!(
            Instant::now() < deadline,
            "{what}: not within {SYNC_TIMEOUT:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Semi-sync with a real MariaDB 10.11 replica (`rpl_semi_sync_slave_enabled=ON`), issue 11
/// part 5: with AFTER_SYNC every commit is acknowledged by the replica (`yes_tx` counts each
/// one, `no_tx` none, the status stays ON); with the replica's IO thread stopped a commit
/// waits out `rpl_semi_sync_master_timeout`, the primary switches to async (`OFF`, `no_tx`)
/// and, once the replica is back and has caught up, switches ON again at the next commit.
#[test]
fn semi_sync_after_sync_with_a_mariadb_replica_and_fallback_to_async() {
    let dir = tempfile::tempdir().expect("tempdir");
    let primary = start_primary(&dir.path().join("onelog"), None);
    let port = primary.port;
    create_rpl_user(port);
    sql(
        port,
        "CREATE DATABASE ss; CREATE TABLE ss.t (id INT PRIMARY KEY, v INT); \
         SET GLOBAL rpl_semi_sync_master_enabled = ON; \
         SET GLOBAL rpl_semi_sync_master_wait_point = 'AFTER_SYNC'; \
         SET GLOBAL rpl_semi_sync_master_timeout = 60000",
    );
    let replica = start_replica_with(
        &dir.path().join("replica"),
        port,
        &["--rpl-semi-sync-slave-enabled=ON"],
    );
    wait_for("the semi-sync replica connects", || {
        status(port, "Rpl_semi_sync_master_clients") == 1
    });
    wait_caught_up(port, &replica, "before the semi-sync commits");
    let yes_before = status(port, "Rpl_semi_sync_master_yes_tx");
    for i in 0..20 {
        sql(port, &format!("INSERT INTO ss.t VALUES ({i}, {i})"));
    }
    assert_eq!(
        status(port, "Rpl_semi_sync_master_yes_tx") - yes_before,
        20,
        "every commit was acknowledged by the replica"
    );
    assert_eq!(status(port, "Rpl_semi_sync_master_no_tx"), 0);
    assert_eq!(semi_sync_status(port), "ON");
    assert_eq!(replica.value("SELECT COUNT(*) FROM ss.t"), "20");

    // No replica acknowledging: the commit waits out the timeout and falls back to async.
    sql(port, "SET GLOBAL rpl_semi_sync_master_timeout = 500");
    replica.run(Some("STOP SLAVE IO_THREAD"), None);
    wait_for("the dump ends", || {
        status(port, "Rpl_semi_sync_master_clients") == 0
    });
    sql(port, "INSERT INTO ss.t VALUES (100, 100)");
    assert_eq!(semi_sync_status(port), "OFF");
    assert_eq!(status(port, "Rpl_semi_sync_master_no_tx"), 1);
    assert_eq!(status(port, "Rpl_semi_sync_master_no_times"), 1);

    // The replica comes back, catches up, and the next commit's ACK switches semi-sync ON.
    replica.run(Some("START SLAVE IO_THREAD"), None);
    wait_caught_up(port, &replica, "after the replica came back");
    let mut n = 200;
    wait_for("semi-sync switches back ON", || {
        n += 1;
        sql(port, &format!("INSERT INTO ss.t VALUES ({n}, {n})"));
        semi_sync_status(port) == "ON"
    });
    wait_caught_up(port, &replica, "at the end");
    assert_same_table(port, &replica, "ss.t", "id, v");
    assert_no_sql_error(&replica, "semi-sync");
}

/// Issue 15 part 4: a table without a primary key (identical rows, an UPDATE and a DELETE of
/// one of two identical rows, a whole-table UPDATE) and `CREATE TABLE ... SELECT` (into a
/// table without and one with a primary key) reach a MariaDB replica identically: it finds
/// each row by its whole before image, and runs the generated CREATE TABLE before the rows
/// of the same group.
#[test]
fn mariadb_replica_applies_tables_without_primary_key_and_create_select() {
    let dir = tempfile::tempdir().expect("tempdir");
    let primary = start_primary(&dir.path().join("onelog"), None);
    let port = primary.port;
    create_rpl_user(port);
    let replica = start_replica(&dir.path().join("replica"), port);
    sql(
        port,
        "CREATE DATABASE np; \
         CREATE TABLE np.t (a INT, b VARCHAR(10), c DECIMAL(6,2), KEY (b)); \
         INSERT INTO np.t VALUES (1, 'x', 1.5), (1, 'x', 1.5), (2, NULL, NULL), (3, 'y', 0); \
         UPDATE np.t SET c = 9 WHERE a = 1 LIMIT 1; \
         DELETE FROM np.t WHERE a = 1 AND c = 1.5 LIMIT 1; \
         INSERT INTO np.t VALUES (2, NULL, NULL); \
         UPDATE np.t SET a = a + 10; \
         DELETE FROM np.t WHERE b IS NULL LIMIT 1; \
         CREATE TABLE np.s AS SELECT a, b, c, a * 2 AS d, 'lit' AS e FROM np.t; \
         CREATE TABLE np.k (id INT AUTO_INCREMENT PRIMARY KEY) SELECT b, c FROM np.t ORDER BY a",
    );
    wait_caught_up(port, &replica, "no primary key and CREATE TABLE ... SELECT");
    for t in ["np.t", "np.s", "np.k"] {
        assert_same_table(port, &replica, t, "*");
    }
    assert_eq!(sql(port, "SELECT COUNT(*) FROM np.t"), "3\n", "np.t's rows");
    assert_eq!(replica.value("SELECT COUNT(*) FROM np.s"), "3");
    assert_eq!(replica.value("SELECT COUNT(*) FROM np.k"), "3");
    let shape = |t: &str| {
        sql(port, &format!("SHOW CREATE TABLE {t}"))
            .replace("\\n", "\n")
            .lines()
            .filter(|l| l.trim_start().starts_with('`'))
            .map(|l| l.split_whitespace().take(2).collect::<Vec<_>>().join(" "))
            .collect::<Vec<_>>()
    };
    let on_replica = |t: &str| {
        replica
            .run(Some(&format!("SHOW CREATE TABLE {t}")), None)
            .replace("\\n", "\n")
            .lines()
            .filter(|l| l.trim_start().starts_with('`'))
            .map(|l| l.split_whitespace().take(2).collect::<Vec<_>>().join(" "))
            .collect::<Vec<_>>()
    };
    assert_eq!(shape("np.s"), on_replica("np.s"), "np.s's columns");
    assert_eq!(shape("np.k"), on_replica("np.k"), "np.k's columns");
    assert_no_sql_error(&replica, "the end");
}
