//! The SQL that binlog readers send when they connect, answered as MariaDB 10.11 answers it
//! (values and column names checked side by side with a real MariaDB 10.11.19): a MariaDB
//! replica's IO thread, `mariadb-binlog --read-from-remote-server`, python-mysql-replication,
//! go-mysql's BinlogSyncer and canal, and Debezium's snapshot and BinaryLogClient; and
//! `binlog_row_metadata`, whose level decides the Table_map metadata the log carries.

use onelog_binlog::event::table_map::RowMetadata;
use onelog_binlog::{decode_group, GroupItem};
use onelog_log::RecordKind;
use onelog_sql::{Output, Session, Value};

mod common;
use common::{err, log_records, ok, Db};

fn root(db: &Db) -> Session {
    Session::new(db.server.clone(), 1, "root", "localhost")
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
fn result(s: &mut Session, sql: &str) -> (Vec<String>, Vec<Vec<String>>) {
    match ok(s, sql) {
        Output::Rows { columns, rows } => (
            columns.into_iter().map(|c| c.name).collect(),
            rows.iter().map(|r| r.iter().map(cell).collect()).collect(),
        ),
        other => panic!("{sql}: not a result set: {other:?}"),
    }
}

/// The one row of `sql`, with its column names.
fn row(s: &mut Session, sql: &str) -> (Vec<String>, Vec<String>) {
    let (names, mut rows) = result(s, sql);
    assert_eq!(rows.len(), 1, "{sql}: {rows:?}");
    (names, rows.remove(0))
}

fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// `SHOW ... VARIABLES ...` as (name, value) pairs, checking MariaDB's column names.
fn variables(s: &mut Session, sql: &str) -> Vec<(String, String)> {
    let (names, rows) = result(s, sql);
    assert_eq!(names, strs(&["Variable_name", "Value"]), "{sql}");
    rows.into_iter()
        .map(|r| (r[0].clone(), r[1].clone()))
        .collect()
}

fn pair(name: &str, value: &str) -> (String, String) {
    (name.to_string(), value.to_string())
}

#[test]
fn replica_io_thread_connect_sequence_gets_mariadbs_answers() {
    let db = Db::open("repl-io");
    let mut s = root(&db);
    let (names, r) = row(&mut s, "SELECT UNIX_TIMESTAMP()");
    assert_eq!(names, strs(&["UNIX_TIMESTAMP()"]));
    assert!(r[0].parse::<u64>().unwrap() > 1_700_000_000, "{r:?}");
    assert_eq!(
        variables(&mut s, "SHOW VARIABLES LIKE 'SERVER_ID'"),
        vec![pair("server_id", "1")]
    );
    ok(&mut s, "SET @master_heartbeat_period= 2000000000");
    ok(
        &mut s,
        "SET @master_binlog_checksum= @@global.binlog_checksum",
    );
    assert_eq!(
        row(&mut s, "SELECT @master_binlog_checksum"),
        (strs(&["@master_binlog_checksum"]), strs(&["CRC32"]))
    );
    ok(&mut s, "SET @mariadb_slave_capability=4");
    assert_eq!(
        row(&mut s, "SELECT @@GLOBAL.gtid_domain_id"),
        (strs(&["@@GLOBAL.gtid_domain_id"]), strs(&["0"]))
    );
    ok(&mut s, "SET @slave_connect_state='0-1-8'");
    ok(&mut s, "SET @slave_gtid_strict_mode=1");
    ok(&mut s, "SET @slave_gtid_ignore_duplicates=0");
    ok(&mut s, "SET @slave_until_gtid='0-1-9'");
    assert_eq!(
        row(
            &mut s,
            "SELECT @slave_connect_state, @slave_gtid_strict_mode"
        ),
        (
            strs(&["@slave_connect_state", "@slave_gtid_strict_mode"]),
            strs(&["0-1-8", "1"])
        )
    );
}

#[test]
fn cdc_client_statements_get_mariadbs_answers() {
    let db = Db::open("repl-cdc");
    let mut s = root(&db);
    // mariadb-binlog, go-mysql (multi-assignments), python-mysql-replication (trailing `;`).
    let (_, v) = row(&mut s, "SELECT VERSION()");
    assert!(
        v[0].starts_with("10.11.") && v[0].contains("MariaDB"),
        "{v:?}"
    );
    ok(
        &mut s,
        "SET @master_binlog_checksum='NONE', @source_binlog_checksum='NONE'",
    );
    assert_eq!(
        row(
            &mut s,
            "SELECT @master_binlog_checksum, @source_binlog_checksum"
        )
        .1,
        strs(&["NONE", "NONE"])
    );
    ok(&mut s, "SET @slave_uuid = 'u', @replica_uuid = 'u'");
    ok(
        &mut s,
        "SET @master_heartbeat_period = 30000000000, @source_heartbeat_period = 30000000000",
    );
    ok(
        &mut s,
        "SET @rpl_semi_sync_slave = 1, @rpl_semi_sync_replica = 1;",
    );
    for (sql, name, value) in [
        (
            "SHOW GLOBAL VARIABLES LIKE 'BINLOG_CHECKSUM'",
            "binlog_checksum",
            "CRC32",
        ),
        (
            "show global variables like 'binlog_checksum'",
            "binlog_checksum",
            "CRC32",
        ),
        (
            "SHOW GLOBAL VARIABLES LIKE 'binlog_format'",
            "binlog_format",
            "ROW",
        ),
        (
            "SHOW GLOBAL VARIABLES LIKE 'binlog_row_image'",
            "binlog_row_image",
            "FULL",
        ),
        (
            "SHOW VARIABLES LIKE 'BINLOG_ROW_METADATA';",
            "binlog_row_metadata",
            "NO_LOG",
        ),
    ] {
        assert_eq!(variables(&mut s, sql), vec![pair(name, value)], "{sql}");
    }
    assert_eq!(
        variables(
            &mut s,
            "SHOW VARIABLES WHERE Variable_name IN ('character_set_server','collation_server')"
        ),
        vec![
            pair("character_set_server", "utf8mb4"),
            pair("collation_server", "utf8mb4_general_ci")
        ]
    );
    assert_eq!(
        row(&mut s, "SELECT @@server_id"),
        (strs(&["@@server_id"]), strs(&["1"]))
    );
    ok(&mut s, "CREATE DATABASE d");
    ok(
        &mut s,
        "CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(10))",
    );
    ok(&mut s, "INSERT INTO d.t VALUES (1, 'a')");
    let (names, r) = row(
        &mut s,
        "SELECT @@GLOBAL.gtid_binlog_pos, @@GLOBAL.gtid_current_pos, @@GLOBAL.gtid_slave_pos, @@GLOBAL.gtid_binlog_state",
    );
    assert_eq!(
        names,
        strs(&[
            "@@GLOBAL.gtid_binlog_pos",
            "@@GLOBAL.gtid_current_pos",
            "@@GLOBAL.gtid_slave_pos",
            "@@GLOBAL.gtid_binlog_state"
        ])
    );
    let pos = r[0].clone();
    assert!(pos.starts_with("0-1-"), "{pos}");
    assert_eq!(
        r,
        vec![pos.clone(), pos.clone(), String::new(), pos.clone()]
    );
    assert_eq!(
        variables(&mut s, "SHOW GLOBAL VARIABLES LIKE 'GTID_BINLOG_POS'"),
        vec![pair("gtid_binlog_pos", &pos)]
    );
    // canal: SHOW BINLOG STATUS is SHOW MASTER STATUS (MariaDB >= 10.5.2).
    let (names, _) = result(&mut s, "SHOW BINLOG STATUS");
    assert_eq!(
        names,
        strs(&["File", "Position", "Binlog_Do_DB", "Binlog_Ignore_DB"])
    );
}

/// The Table_map events of the log's transactions, decoded, in log order.
fn table_maps(db: &Db) -> Vec<onelog_binlog::event::TableMap> {
    let mut maps = Vec::new();
    for rec in log_records(&db.server) {
        if rec.kind != RecordKind::Transaction {
            continue;
        }
        for item in decode_group(&rec.events).unwrap().statements {
            if let GroupItem::Rows { table, .. } = item {
                if maps.last() != Some(&*table) {
                    maps.push((*table).clone());
                }
            }
        }
    }
    maps
}

#[test]
fn binlog_row_metadata_decides_what_table_maps_carry() {
    let db = Db::open("repl-rowmeta");
    let mut s = root(&db);
    ok(&mut s, "CREATE DATABASE d");
    ok(
        &mut s,
        "CREATE TABLE d.t (a INT UNSIGNED NOT NULL, b VARBINARY(4), c VARCHAR(16), PRIMARY KEY (c, a))",
    );
    let insert = |s: &mut Session, a: u32| {
        ok(s, &format!("INSERT INTO d.t VALUES ({a}, 'x', 'k{a}')"));
    };
    insert(&mut s, 4_000_000_000);
    ok(&mut s, "SET GLOBAL binlog_row_metadata = MINIMAL");
    insert(&mut s, 2);
    ok(&mut s, "SET GLOBAL binlog_row_metadata = 'full'");
    assert_eq!(
        row(&mut s, "SELECT @@global.binlog_row_metadata").1,
        strs(&["FULL"])
    );
    assert_eq!(
        variables(&mut s, "SHOW GLOBAL VARIABLES LIKE 'binlog_row_metadata'"),
        vec![pair("binlog_row_metadata", "FULL")]
    );
    insert(&mut s, 3);
    // MariaDB's errors: a global-only variable, an unknown level.
    assert_eq!(err(&mut s, "SET SESSION binlog_row_metadata = FULL"), 1229);
    assert_eq!(err(&mut s, "SET GLOBAL binlog_row_metadata = 'ALL'"), 1231);
    ok(&mut s, "SET GLOBAL binlog_row_metadata = DEFAULT");
    insert(&mut s, 5);

    let maps = table_maps(&db);
    let levels: Vec<RowMetadata> = maps.iter().map(|m| m.metadata).collect();
    use RowMetadata::*;
    assert_eq!(levels, vec![NoLog, Minimal, Full, NoLog]);
    let names = |m: &onelog_binlog::event::TableMap| -> Vec<String> {
        m.columns.iter().map(|c| c.name.clone()).collect()
    };
    assert_eq!(names(&maps[2]), strs(&["a", "b", "c"]));
    assert_eq!(maps[2].primary_key, vec![2, 0]);
    assert!(maps[2].columns[0].unsigned && maps[2].columns[1].binary);
    assert!(!maps[2].columns[2].binary);
    assert_eq!(names(&maps[1]), strs(&["", "", ""]));
    assert!(maps[1].columns[0].unsigned && maps[1].primary_key.is_empty());
    assert!(!maps[0].columns[0].unsigned && names(&maps[3]) == strs(&["", "", ""]));
    // Whatever the level, the unsigned value above 2^31 is the one stored and replayed.
    assert_eq!(
        row(&mut s, "SELECT a FROM d.t WHERE c = 'k4000000000'").1,
        strs(&["4000000000"])
    );
}

#[test]
fn debezium_snapshot_and_session_statements_are_answered_or_refused_like_mariadb() {
    let db = Db::open("repl-debezium");
    let mut s = root(&db);
    ok(&mut s, "CREATE DATABASE d");
    ok(&mut s, "CREATE TABLE d.t (id INT PRIMARY KEY)");
    // Debezium fails the snapshot when this SET fails (innodb_lock_wait_timeout is only
    // warned about). MariaDB's range 0..31536000, default 86400.
    ok(&mut s, "SET SESSION lock_wait_timeout=10");
    assert_eq!(row(&mut s, "SELECT @@lock_wait_timeout").1, strs(&["10"]));
    assert_eq!(
        row(&mut s, "SELECT @@global.lock_wait_timeout").1,
        strs(&["86400"])
    );
    ok(&mut s, "SET SESSION innodb_lock_wait_timeout=10");
    ok(&mut s, "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
    // The global read lock and the table form (tests/table_locks.rs has their rules).
    ok(&mut s, "FLUSH TABLES WITH READ LOCK");
    ok(&mut s, "UNLOCK TABLES");
    ok(&mut s, "FLUSH TABLES d.t WITH READ LOCK");
    ok(&mut s, "UNLOCK TABLES");
    ok(&mut s, "START TRANSACTION WITH CONSISTENT SNAPSHOT");
    // UNLOCK TABLES with nothing locked is an OK that commits nothing.
    ok(&mut s, "INSERT INTO d.t VALUES (1)");
    ok(&mut s, "UNLOCK TABLES");
    ok(&mut s, "ROLLBACK");
    assert_eq!(result(&mut s, "SELECT * FROM d.t").1.len(), 0);
    let (names, rows) = result(
        &mut s,
        "SHOW FULL TABLES IN `d` where Table_Type = 'BASE TABLE'",
    );
    assert_eq!(names, strs(&["Tables_in_d", "Table_type"]));
    assert_eq!(rows, vec![strs(&["t", "BASE TABLE"])]);
    assert_eq!(
        variables(&mut s, "SHOW SESSION STATUS LIKE 'Ssl_version'"),
        vec![pair("Ssl_version", "")]
    );
    // skip_replication: events are never marked or filtered, so only 0 is accepted.
    ok(&mut s, "SET skip_replication=0");
    assert_eq!(err(&mut s, "SET skip_replication=1"), 1235);
    assert_eq!(err(&mut s, "SET GLOBAL skip_replication=0"), 1228);
    assert_eq!(row(&mut s, "SELECT @@skip_replication").1, strs(&["0"]));
}
