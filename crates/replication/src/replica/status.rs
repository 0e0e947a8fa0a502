//! What SHOW SLAVE STATUS, SHOW ALL SLAVES STATUS and the replica status counters read.
//!
//! Owns [`ReplicaStatus`], one mutex around a [`StatusSnapshot`] that the IO thread, the SQL
//! side and the statements share. Writers hold the lock only to copy a few fields in; readers
//! take a copy. The texts (`Slave_IO_State`, `Slave_SQL_Running_State`) are MariaDB's stage
//! names (REPLICATION_FACTS.md §2.10).
//!
//! Invariants: an error field is cleared only by a successful (re)start of its thread, by
//! RESET SLAVE or by CHANGE MASTER, as in MariaDB; counters only grow until RESET SLAVE.

use std::sync::{Mutex, MutexGuard};

use onelog_binlog::GtidPos;

/// `Slave_IO_Running`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum IoRunning {
    #[default]
    No,
    Connecting,
    Preparing,
    Yes,
}

impl IoRunning {
    pub fn name(self) -> &'static str {
        match self {
            IoRunning::No => "No",
            IoRunning::Connecting => "Connecting",
            IoRunning::Preparing => "Preparing",
            IoRunning::Yes => "Yes",
        }
    }
}

/// The replica's state as SHOW SLAVE STATUS reports it (the configuration columns come from
/// `MasterConfig`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StatusSnapshot {
    /// `Slave_IO_State` ("" when stopped).
    pub io_state: String,
    pub io_running: IoRunning,
    pub sql_running: bool,
    /// `Slave_SQL_Running_State` ("" when stopped).
    pub sql_state: String,
    /// `Master_Log_File` / `Read_Master_Log_Pos`: the primary's file and position of the last
    /// event the IO thread read.
    pub master_log_file: String,
    pub read_master_log_pos: u64,
    /// `Relay_Master_Log_File` / `Exec_Master_Log_Pos`: where the last applied group ended.
    pub exec_master_log_file: String,
    pub exec_master_log_pos: u64,
    pub last_io_errno: u16,
    pub last_io_error: String,
    pub last_sql_errno: u16,
    pub last_sql_error: String,
    /// `Master_Server_Id` (0 until connected).
    pub master_server_id: u32,
    /// `Gtid_IO_Pos`: the position after the last group the IO thread queued.
    pub gtid_io_pos: GtidPos,
    /// START SLAVE UNTIL master_gtid_pos (`Until_Condition: Gtid`).
    pub until_gtid: Option<GtidPos>,
    /// Header timestamp of the group being applied (0: none); for Seconds_Behind_Master.
    pub last_master_timestamp: u32,
    /// True while a group is being applied or waits in the queue.
    pub sql_busy: bool,
    /// Our clock minus the primary's in seconds (MariaDB's `clock_diff_with_master`, from
    /// `SELECT UNIX_TIMESTAMP()` at connect).
    pub clock_diff_with_master: i64,
    /// `Slave_received_heartbeats`.
    pub received_heartbeats: u64,
    /// `Retried_transactions` / `Slave_retried_transactions`.
    pub retried_transactions: u64,
    /// `Executed_log_entries`: events applied.
    pub executed_log_entries: u64,
    pub ddl_groups: u64,
    pub non_transactional_groups: u64,
    pub transactional_groups: u64,
    /// Connections made to the primary (`Slave_connections` in the error log).
    pub connects: u64,
}

/// The shared status (module docs).
#[derive(Default)]
pub struct ReplicaStatus {
    inner: Mutex<StatusSnapshot>,
}

impl ReplicaStatus {
    pub fn new() -> ReplicaStatus {
        ReplicaStatus::default()
    }

    fn locked(&self) -> MutexGuard<'_, StatusSnapshot> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Changes the status under the lock.
    pub fn update<R>(&self, f: impl FnOnce(&mut StatusSnapshot) -> R) -> R {
        f(&mut self.locked())
    }

    /// A copy.
    pub fn snapshot(&self) -> StatusSnapshot {
        self.locked().clone()
    }

    /// `Seconds_Behind_Master` at `now` (unix seconds): NULL unless the IO thread is connected
    /// and the SQL side runs; 0 when the SQL side is idle; otherwise how far the group being
    /// applied is behind, corrected by the clock difference, floored at 0.
    pub fn seconds_behind_master(&self, now: u64) -> Option<u64> {
        let s = self.locked();
        if s.io_running != IoRunning::Yes || !s.sql_running {
            return None;
        }
        if !s.sql_busy || s.last_master_timestamp == 0 {
            return Some(0);
        }
        let lag = now as i64 - i64::from(s.last_master_timestamp) - s.clock_diff_with_master;
        Some(lag.max(0) as u64)
    }
}
