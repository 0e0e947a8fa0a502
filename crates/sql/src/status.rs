//! Status counters (`SHOW [GLOBAL] STATUS`): server-wide atomics the SQL and protocol layers
//! bump, plus values read live from the log (`engine.log().stats()`), the connection registry
//! and the clock.
//!
//! API for the other layers (all `&self`, lock-free):
//! - `Questions` (also shown as `Queries`) is the connection registry's counter
//!   ([`crate::server::Registry::question`], once per statement received from a client), read
//!   here with `Threads_connected` and `Uptime`;
//! - [`StatusCounters::com`]`(ComKind)`: once per executed statement of that kind (`Com_*`);
//! - [`StatusCounters::connection`]: once per accepted connection attempt (`Connections`),
//!   [`StatusCounters::aborted_connect`], [`StatusCounters::aborted_client`];
//! - `Bytes_received` / `Bytes_sent`: [`Traffic`] counters the protocol layer adds every byte
//!   it reads from or writes to a client socket to, twice: into the connection's own (its
//!   session's `SHOW SESSION STATUS`, [`crate::Session::set_traffic`]) and into the server's
//!   ([`StatusCounters::traffic`], `SHOW GLOBAL STATUS`), as MariaDB counts them (the
//!   handshake included);
//! - [`StatusCounters::running`] returns a guard counting a statement in `Threads_running`;
//! - [`StatusCounters::slow_query`]: once per statement that ran longer than its session's
//!   `long_query_time` (`Slow_queries`; the protocol layer times statements).
//!
//! `Max_used_connections` is updated by [`StatusCounters::observe_connections`], which the
//! server calls with the number of registered connections after registering one.
//!
//! Durability counters (fsyncs, each one `fdatasync`): `Onelog_engine_log_fsyncs` counts the
//! engine log's (in engine mode the log IS the binlog), `Onelog_binlog_file_fsyncs` the classic
//! binlog files' on the commit path (`--binlog-storage=file`; 0 in engine mode),
//! `Onelog_mirror_fsyncs` the background mirror's (`--binlog-file-mirror`; 0 without it);
//! `Onelog_mirror_groups` / `Onelog_mirror_lag_bytes`: groups the mirror wrote since start,
//! durable log bytes it has not written yet.
//! `Onelog_log_fsyncs` is the old name of `Onelog_engine_log_fsyncs`, kept.
//! `Onelog_log_idle_sync_marks`: SyncMarks the log wrote and synced after going idle (each one
//! fsync, also counted in `Onelog_engine_log_fsyncs`; docs/LOG_FORMAT.md).
//!
//! Replica: `Master_gtid_wait_count` / `_time` (µs) / `_timeouts` (MASTER_GTID_WAIT, as
//! MariaDB counts them), and `Slave_running`, `Slaves_running`, `Slave_received_heartbeats`,
//! `Slave_retried_transactions`, `Slave_open_temp_tables` read from the replica's status.
//!
//! Paged table store (`--table-store=paged`; absent with the in-memory store, which reads
//! nothing from disk): `Innodb_buffer_pool_read_requests` (blocks of the store looked up),
//! `Innodb_buffer_pool_reads` and `Innodb_data_reads` (of those, read from a file: cache
//! misses), `Innodb_data_read` (their bytes), `Innodb_buffer_pool_bytes_data` (bytes in the
//! block cache now), `Innodb_data_written` (bytes of rows and index entries checkpoints wrote
//! into the store; the log's are `Binlog_bytes_written`), `Onelog_table_store_checkpoints` /
//! `_checkpoint_us`, `Onelog_table_store_commit_waits` / `_commit_wait_us` (commits that
//! waited for a checkpoint at the delta's limit), `Onelog_table_store_delta_limit_bytes` /
//! `_delta_log_bytes` (that limit, and the log after the newest checkpoint now),
//! `Onelog_table_store_disk_bytes`, `Onelog_table_store_row_cache_hits` / `_misses` (lookups
//! of the store's decoded-row cache, by point reads and by primary key scans reaching a key,
//! answered by it or not) and `_bytes` / `_capacity` (what that cache counts now, and its
//! limit).
//!
//! Only `Bytes_received` / `Bytes_sent` have session values; for the other counters
//! `SHOW SESSION STATUS` prints the global value (documented).
//!
//! Invariants: every counter only grows, except `Threads_running`, which a [`RunningGuard`]
//! raises and lowers exactly once (asserted never to go below zero).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Bytes read from and written to client sockets: one connection's, or the whole server's.
#[derive(Debug, Default)]
pub struct Traffic {
    pub received: AtomicU64,
    pub sent: AtomicU64,
}

impl Traffic {
    pub fn add_received(&self, n: u64) {
        self.received.fetch_add(n, Ordering::Relaxed);
    }
    pub fn add_sent(&self, n: u64) {
        self.sent.fetch_add(n, Ordering::Relaxed);
    }
    /// Zeroes both (FLUSH STATUS on a session's counters).
    pub fn reset(&self) {
        self.received.store(0, Ordering::Relaxed);
        self.sent.store(0, Ordering::Relaxed);
    }
    /// (received, sent).
    pub fn get(&self) -> (u64, u64) {
        (
            self.received.load(Ordering::Relaxed),
            self.sent.load(Ordering::Relaxed),
        )
    }
}

/// Statement kinds counted as `Com_<name>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(usize)]
pub enum ComKind {
    Select,
    Insert,
    Update,
    Delete,
    Replace,
    /// Multi-table UPDATE / DELETE (`Com_update_multi`, `Com_delete_multi`).
    UpdateMulti,
    DeleteMulti,
    Begin,
    Commit,
    Rollback,
    Savepoint,
    ReleaseSavepoint,
    RollbackToSavepoint,
    CreateDb,
    DropDb,
    CreateTable,
    DropTable,
    AlterTable,
    TruncateTable,
    CreateIndex,
    DropIndex,
    Set,
    Show,
    CreateUser,
    DropUser,
    Grant,
    Revoke,
    Flush,
    Purge,
    Kill,
    ChangeDb,
    StmtPrepare,
    StmtExecute,
    StmtClose,
    StmtReset,
    Shutdown,
    Backup,
    Other,
}

/// `Com_` names, in `ComKind` order.
pub(crate) const COM_NAMES: &[&str] = &[
    "select",
    "insert",
    "update",
    "delete",
    "replace",
    "update_multi",
    "delete_multi",
    "begin",
    "commit",
    "rollback",
    "savepoint",
    "release_savepoint",
    "rollback_to_savepoint",
    "create_db",
    "drop_db",
    "create_table",
    "drop_table",
    "alter_table",
    "truncate",
    "create_index",
    "drop_index",
    "set_option",
    "show_other",
    "create_user",
    "drop_user",
    "grant",
    "revoke",
    "flush",
    "purge",
    "kill",
    "change_db",
    "stmt_prepare",
    "stmt_execute",
    "stmt_close",
    "stmt_reset",
    "shutdown",
    "backup",
    "other",
];

const N_COM: usize = ComKind::Other as usize + 1;

/// Server-wide counters. `Default` is all zeros.
#[derive(Debug)]
pub struct StatusCounters {
    pub(crate) com: [AtomicU64; N_COM],
    pub(crate) connections: AtomicU64,
    pub(crate) aborted_connects: AtomicU64,
    pub(crate) aborted_clients: AtomicU64,
    /// Every connection's bytes, summed (`Bytes_received`, `Bytes_sent`).
    pub(crate) traffic: Arc<Traffic>,
    pub(crate) running: AtomicU64,
    /// Statements that ran longer than their session's `long_query_time` (`Slow_queries`).
    pub(crate) slow_queries: AtomicU64,
    pub(crate) max_used_connections: AtomicU64,
    /// MASTER_GTID_WAIT calls, microseconds waited (calls that returned 0 or -1), timeouts.
    pub(crate) gtid_wait_count: AtomicU64,
    pub(crate) gtid_wait_time: AtomicU64,
    pub(crate) gtid_wait_timeouts: AtomicU64,
}

impl Default for StatusCounters {
    fn default() -> Self {
        StatusCounters {
            com: std::array::from_fn(|_| AtomicU64::new(0)),
            connections: AtomicU64::new(0),
            aborted_connects: AtomicU64::new(0),
            aborted_clients: AtomicU64::new(0),
            traffic: Arc::default(),
            running: AtomicU64::new(0),
            slow_queries: AtomicU64::new(0),
            max_used_connections: AtomicU64::new(0),
            gtid_wait_count: AtomicU64::new(0),
            gtid_wait_time: AtomicU64::new(0),
            gtid_wait_timeouts: AtomicU64::new(0),
        }
    }
}

/// Counts one statement in `Threads_running` while alive.
pub struct RunningGuard<'a>(&'a AtomicU64);

impl Drop for RunningGuard<'_> {
    fn drop(&mut self) {
        let before = self.0.fetch_sub(1, Ordering::Relaxed);
        debug_assert!(before > 0, "Threads_running below zero");
    }
}

impl StatusCounters {
    pub fn com(&self, kind: ComKind) {
        self.com[kind as usize].fetch_add(1, Ordering::Relaxed);
    }
    pub fn connection(&self) {
        self.connections.fetch_add(1, Ordering::Relaxed);
    }
    pub fn aborted_connect(&self) {
        self.aborted_connects.fetch_add(1, Ordering::Relaxed);
    }
    pub fn aborted_client(&self) {
        self.aborted_clients.fetch_add(1, Ordering::Relaxed);
    }
    pub fn slow_query(&self) {
        self.slow_queries.fetch_add(1, Ordering::Relaxed);
    }
    pub fn slow_queries(&self) -> u64 {
        self.slow_queries.load(Ordering::Relaxed)
    }
    /// The server-wide byte counters, which the protocol layer adds to directly.
    pub fn traffic(&self) -> Arc<Traffic> {
        self.traffic.clone()
    }
    pub fn observe_connections(&self, n: usize) {
        self.max_used_connections
            .fetch_max(n as u64, Ordering::Relaxed);
    }
    pub fn running(&self) -> RunningGuard<'_> {
        self.running.fetch_add(1, Ordering::Relaxed);
        RunningGuard(&self.running)
    }
    /// Current value of `Com_<kind>`.
    pub fn com_count(&self, kind: ComKind) -> u64 {
        self.com[kind as usize].load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn com_names_cover_every_kind_and_counters_move() {
        assert_eq!(COM_NAMES.len(), N_COM);
        let s = StatusCounters::default();
        s.com(ComKind::Select);
        s.com(ComKind::Select);
        s.com(ComKind::Other);
        assert_eq!(s.com_count(ComKind::Select), 2);
        assert_eq!(s.com_count(ComKind::Other), 1);
        {
            let _g = s.running();
            assert_eq!(s.running.load(Ordering::Relaxed), 1);
        }
        assert_eq!(s.running.load(Ordering::Relaxed), 0);
    }
}
