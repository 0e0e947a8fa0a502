//! SHOW STATUS: every status variable with its value, read from the server's counters
//! (`crate::status`), the log's and the mirror's statistics and the connection table.
//!
//! Invariants: the rows are sorted by name, case-insensitively, as MariaDB's SHOW STATUS.

use std::sync::atomic::{AtomicU64, Ordering};

use onelog_binlog::Value;

use crate::server::Server;
use crate::status::{Traffic, COM_NAMES};

/// Every status variable with its value, sorted by name (MariaDB's capitalisation).
/// `session`: the connection's own byte counters (SHOW SESSION STATUS), None for the server's.
pub(crate) fn rows(server: &Server, session: Option<&Traffic>) -> Vec<(String, Value)> {
    let s = &server.status;
    let (received, sent) = session.unwrap_or(&s.traffic).get();
    let ld = |a: &AtomicU64| Value::UInt(a.load(Ordering::Relaxed));
    let log = server.engine.log().stats();
    let mirror = server.mirror().map(|m| m.stats());
    let threads = server.connection_count() as u64;
    let (cache_use, cache_disk_use) = server.engine.binlog_cache_use();
    let snapshot = super::binlog::server_master_status(server).unwrap_or_default();
    let mut out: Vec<(String, Value)> = vec![
        ("Aborted_clients".into(), ld(&s.aborted_clients)),
        ("Aborted_connects".into(), ld(&s.aborted_connects)),
        (
            "Binlog_bytes_written".into(),
            Value::UInt(log.bytes_written),
        ),
        ("Binlog_cache_disk_use".into(), Value::UInt(cache_disk_use)),
        ("Binlog_cache_use".into(), Value::UInt(cache_use)),
        ("Binlog_commits".into(), Value::UInt(log.commits)),
        ("Binlog_group_commits".into(), Value::UInt(log.groups)),
        // Globally the current end (SHOW MASTER STATUS); a session in a transaction begun
        // WITH CONSISTENT SNAPSHOT sees its snapshot's (`ExecContext::binlog_snapshot`).
        (
            "Binlog_snapshot_file".into(),
            Value::bytes(snapshot.0.into_bytes()),
        ),
        ("Binlog_snapshot_position".into(), Value::UInt(snapshot.1)),
        // Only non-transactional changes use the statement cache; onelog has none.
        ("Binlog_stmt_cache_disk_use".into(), Value::UInt(0)),
        ("Binlog_stmt_cache_use".into(), Value::UInt(0)),
        ("Bytes_received".into(), Value::UInt(received)),
        ("Bytes_sent".into(), Value::UInt(sent)),
        ("Connections".into(), ld(&s.connections)),
        (
            "Max_used_connections".into(),
            Value::UInt(s.max_used_connections.load(Ordering::Relaxed).max(threads)),
        ),
        ("Onelog_log_fsyncs".into(), Value::UInt(log.fsyncs)),
        (
            "Onelog_backups_running".into(),
            Value::UInt(server.engine.backups_running() as u64),
        ),
        ("Onelog_engine_log_fsyncs".into(), Value::UInt(log.fsyncs)),
        (
            "Onelog_log_idle_sync_marks".into(),
            Value::UInt(log.idle_marks),
        ),
        (
            "Onelog_binlog_file_fsyncs".into(),
            Value::UInt(log.binlog_fsyncs),
        ),
        (
            "Onelog_binlog_file_bytes_written".into(),
            Value::UInt(log.binlog_bytes),
        ),
        (
            "Onelog_mirror_fsyncs".into(),
            Value::UInt(mirror.as_ref().map_or(0, |m| m.fsyncs)),
        ),
        (
            "Onelog_mirror_groups".into(),
            Value::UInt(mirror.as_ref().map_or(0, |m| m.groups)),
        ),
        (
            "Onelog_mirror_lag_bytes".into(),
            Value::UInt(mirror.as_ref().map_or(0, |m| m.lag_bytes)),
        ),
        (
            "Onelog_checkpoint_lsn".into(),
            Value::UInt(server.engine.checkpoint_lsn().unwrap_or(0)),
        ),
        (
            "Onelog_durable_lsn".into(),
            Value::UInt(server.engine.log().durable_lsn()),
        ),
        (
            "Onelog_end_lsn".into(),
            Value::UInt(server.engine.log().end_lsn()),
        ),
        ("Queries".into(), Value::UInt(server.registry.questions())),
        ("Questions".into(), Value::UInt(server.registry.questions())),
        // No connection uses TLS (have_ssl=DISABLED): MariaDB shows these empty then
        // (Debezium reads Ssl_version).
        ("Slow_queries".into(), ld(&s.slow_queries)),
        ("Ssl_cipher".into(), Value::bytes(Vec::new())),
        ("Ssl_version".into(), Value::bytes(Vec::new())),
        ("Threads_connected".into(), Value::UInt(threads)),
        (
            "Threads_running".into(),
            Value::UInt(s.running.load(Ordering::Relaxed).max(1)),
        ),
        ("Uptime".into(), Value::UInt(server.uptime().as_secs())),
    ];
    for (name, v) in server.engine.semisync().status().rows() {
        let v = match v.parse::<u64>() {
            Ok(n) => Value::UInt(n),
            Err(_) => Value::bytes(v.into_bytes()),
        };
        out.push((name.into(), v));
    }
    // The replica side of semi-sync is not implemented.
    out.push(("Rpl_semi_sync_slave_send_ack".into(), Value::UInt(0)));
    out.push(("Rpl_semi_sync_slave_status".into(), Value::bytes(b"OFF")));
    out.extend(replica_rows(server));
    out.extend(table_store_rows(server));
    out.extend(commit_phase_rows(&log.phases));
    // Big commits whose prebuilt tables were installed / applied from the change log instead.
    let (installed, applied) = server.engine.prebuilt_commits();
    out.push(("Onelog_commit_prebuilt".into(), Value::UInt(installed)));
    out.push((
        "Onelog_commit_prebuilt_not_used".into(),
        Value::UInt(applied),
    ));
    for (i, name) in COM_NAMES.iter().enumerate() {
        out.push((format!("Com_{name}"), ld(&s.com[i])));
    }
    out.sort_by_key(|a| a.0.to_ascii_lowercase());
    out
}

/// The commit path's phases (`onelog_log::CommitPhases`): microseconds summed per phase, the
/// time an fsync of the log was in flight, and the commit groups by size.
fn commit_phase_rows(p: &onelog_log::CommitPhases) -> Vec<(String, Value)> {
    const BUCKETS: [&str; onelog_log::GROUP_SIZE_BUCKETS] =
        ["1", "2_3", "4_7", "8_15", "16_31", "32_63", "64_plus"];
    let mut v: Vec<(String, Value)> = [
        ("Onelog_commit_queue_wait_us", p.queue_wait_us),
        ("Onelog_commit_encode_us", p.encode_us),
        ("Onelog_commit_write_us", p.write_us),
        ("Onelog_commit_apply_us", p.apply_us),
        ("Onelog_commit_apply_during_sync_us", p.apply_in_sync_us),
        ("Onelog_commit_sync_us", p.sync_us),
        ("Onelog_commit_ack_us", p.ack_us),
        ("Onelog_log_fsync_busy_us", p.fsync_busy_us),
        ("Onelog_log_rotation_wait_us", p.rotation_wait_us),
    ]
    .into_iter()
    .map(|(n, x)| (n.to_string(), Value::UInt(x)))
    .collect();
    for (b, n) in BUCKETS.iter().zip(p.group_sizes) {
        v.push((format!("Onelog_commit_groups_{b}"), Value::UInt(n)));
    }
    v
}

/// The paged table store's counters (module docs of `crate::status`); none for the in-memory
/// store, which has no cache and reads nothing from disk.
fn table_store_rows(server: &Server) -> Vec<(String, Value)> {
    let Some(t) = server.engine.table_store_stats() else {
        return Vec::new();
    };
    [
        ("Innodb_buffer_pool_bytes_data", t.base.cache_bytes),
        ("Innodb_buffer_pool_read_requests", t.base.block_requests),
        ("Innodb_buffer_pool_reads", t.base.block_reads),
        ("Innodb_data_read", t.base.bytes_read),
        ("Innodb_data_reads", t.base.block_reads),
        ("Innodb_data_written", t.base.bytes_written),
        ("Onelog_table_store_checkpoints", t.checkpoints),
        ("Onelog_table_store_checkpoint_us", t.checkpoint_us),
        ("Onelog_table_store_commit_waits", t.commit_waits),
        ("Onelog_table_store_commit_wait_us", t.commit_wait_us),
        ("Onelog_table_store_delta_limit_bytes", t.delta_limit),
        ("Onelog_table_store_delta_log_bytes", t.delta_log_bytes),
        ("Onelog_table_store_disk_bytes", t.base.disk_bytes),
        ("Onelog_table_store_row_cache_bytes", t.base.rows.bytes),
        (
            "Onelog_table_store_row_cache_capacity",
            t.base.rows.capacity,
        ),
        ("Onelog_table_store_row_cache_hits", t.base.rows.hits),
        ("Onelog_table_store_row_cache_misses", t.base.rows.misses),
    ]
    .into_iter()
    .map(|(n, v)| (n.to_string(), Value::UInt(v)))
    .collect()
}

/// The replica's status variables (module docs of `crate::status`).
fn replica_rows(server: &Server) -> Vec<(String, Value)> {
    use onelog_replication::replica::IoRunning;
    let s = &server.status;
    let ld = |a: &AtomicU64| Value::UInt(a.load(Ordering::Relaxed));
    let st = server
        .replica()
        .filter(|r| r.is_configured())
        .map(|r| r.status());
    let both = st
        .as_ref()
        .is_some_and(|st| st.sql_running && st.io_running == IoRunning::Yes);
    // MariaDB's Slaves_running counts connections whose SQL thread runs.
    let running = st.as_ref().is_some_and(|st| st.sql_running);
    let on_off = |b: bool| {
        Value::Bytes(if b {
            (b"ON".to_vec()).into()
        } else {
            (b"OFF".to_vec()).into()
        })
    };
    vec![
        ("Master_gtid_wait_count".into(), ld(&s.gtid_wait_count)),
        ("Master_gtid_wait_time".into(), ld(&s.gtid_wait_time)),
        (
            "Master_gtid_wait_timeouts".into(),
            ld(&s.gtid_wait_timeouts),
        ),
        ("Slave_open_temp_tables".into(), Value::UInt(0)),
        (
            "Slave_received_heartbeats".into(),
            Value::UInt(st.as_ref().map_or(0, |st| st.received_heartbeats)),
        ),
        (
            "Slave_retried_transactions".into(),
            Value::UInt(st.as_ref().map_or(0, |st| st.retried_transactions)),
        ),
        ("Slave_running".into(), on_off(both)),
        ("Slaves_running".into(), Value::UInt(u64::from(running))),
    ]
}
