//! The replica side of replication (REPLICATION_FACTS.md §2, DESIGN.md §7): onelog following
//! a MariaDB 10.11 or onelog primary by GTID.
//!
//! - [`config`]: what CHANGE MASTER sets (`MasterConfig`), its rules (4191, 1198, implied
//!   file/offset resets) and its persistence in `master.info` in the data directory.
//! - [`client`]: the blocking client connection to the primary (handshake,
//!   mysql_native_password, queries, COM_REGISTER_SLAVE, COM_BINLOG_DUMP, reading events).
//! - [`io`]: the IO thread: MariaDB's connect sequence, the event stream, heartbeats,
//!   reconnect with retry; it cuts the stream into [`relay::RelayGroup`]s and hands them to the
//!   SQL side through the bounded [`relay::RelayQueue`].
//! - [`status`]: what SHOW SLAVE STATUS and the replica status counters read, shared by the
//!   threads and the statements.
//! - [`schedule`]: the SQL thread: takes groups from the queue and runs them on
//!   `slave_parallel_threads` workers through the [`GroupApplier`] the SQL layer provides,
//!   committing in the primary's order.
//! - [`control`]: [`control::Replica`], the one replica connection's threads and
//!   configuration: START / STOP / RESET SLAVE and CHANGE MASTER.
//!
//! There is no relay log: an applied transaction is logged in onelog's own log with its
//! original GTID and `gtid_slave_pos` is derived from that log (the engine owns it), so the
//! position is crash-safe without a second file, and a restarted IO thread refetches from
//! `gtid_slave_pos` (what a MariaDB GTID replica does too, MDEV-4698).

pub mod client;
pub mod config;
pub mod control;
pub mod io;
pub mod relay;
pub mod schedule;
pub mod status;

use onelog_binlog::GtidPos;

pub use config::{ChangeMaster, MasterConfig, UseGtid};
pub use control::Replica;
pub use relay::{RelayGroup, RelayQueue};
pub use status::{IoRunning, ReplicaStatus, StatusSnapshot};

/// What the replica needs from the server it runs in (implemented by the SQL layer, which
/// owns the engine): positions, identity, and appliers for the workers.
pub trait ReplicaHost: Send + Sync + 'static {
    /// `@@server_id` of this server.
    fn server_id(&self) -> u32;
    /// `@@gtid_slave_pos`.
    fn gtid_slave_pos(&self) -> GtidPos;
    /// `@@gtid_current_pos` (REPLICATION_FACTS.md §2.1).
    fn gtid_current_pos(&self) -> GtidPos;
    /// `@@gtid_strict_mode`: sent to the primary as `@slave_gtid_strict_mode`.
    fn gtid_strict_mode(&self) -> bool;
    /// The replica's variables now.
    fn settings(&self) -> ReplicaSettings;
    /// A new applier for one worker (or the SQL thread).
    fn applier(&self) -> Box<dyn GroupApplier>;
}

/// The replica's system variables its threads read, as they are now (MariaDB 10.11's defaults
/// by `Default`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReplicaSettings {
    /// `@@slave_net_timeout` in seconds.
    pub slave_net_timeout: u64,
    /// `@@slave_parallel_threads` (0: apply in the SQL thread itself).
    pub slave_parallel_threads: usize,
    /// `@@slave_parallel_mode`.
    pub slave_parallel_mode: ParallelMode,
    /// `@@slave_transaction_retries`.
    pub slave_transaction_retries: u64,
    /// `@@gtid_ignore_duplicates`: sent as `@slave_gtid_ignore_duplicates`.
    pub gtid_ignore_duplicates: bool,
}

impl Default for ReplicaSettings {
    fn default() -> Self {
        ReplicaSettings {
            slave_net_timeout: 60,
            slave_parallel_threads: 0,
            slave_parallel_mode: ParallelMode::Optimistic,
            slave_transaction_retries: 10,
            gtid_ignore_duplicates: false,
        }
    }
}

/// `slave_parallel_mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParallelMode {
    None,
    Minimal,
    Conservative,
    Optimistic,
    Aggressive,
}

impl ParallelMode {
    pub fn name(self) -> &'static str {
        match self {
            ParallelMode::None => "none",
            ParallelMode::Minimal => "minimal",
            ParallelMode::Conservative => "conservative",
            ParallelMode::Optimistic => "optimistic",
            ParallelMode::Aggressive => "aggressive",
        }
    }

    pub fn from_name(s: &str) -> Option<ParallelMode> {
        Some(match s.to_ascii_lowercase().as_str() {
            "none" => ParallelMode::None,
            "minimal" => ParallelMode::Minimal,
            "conservative" => ParallelMode::Conservative,
            "optimistic" => ParallelMode::Optimistic,
            "aggressive" => ParallelMode::Aggressive,
            _ => return None,
        })
    }
}

/// An error that stops the SQL side: MariaDB's Last_SQL_Errno / Last_SQL_Error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApplyError {
    pub code: u16,
    pub message: String,
    /// True when the error may go away by retrying after every earlier group committed (a
    /// speculative apply met a state an earlier group changes): the scheduler retries it
    /// instead of stopping.
    pub retryable: bool,
}

impl ApplyError {
    pub fn fatal(code: u16, message: impl Into<String>) -> ApplyError {
        ApplyError {
            code,
            message: message.into(),
            retryable: false,
        }
    }
}

/// Applies event groups for one worker. Implemented by the SQL layer: row events go to the
/// engine, Query events run through a session, and every commit carries the group's original
/// GTID and marks it replicated (so it moves `gtid_slave_pos`).
pub trait GroupApplier: Send {
    /// Applies and commits `group`. `order` tells the applier when it may commit: it must call
    /// [`schedule::CommitOrder::wait_prior_queued`] (or `wait_prior_committed` for a group that
    /// must see every earlier one, e.g. statement-based DML or DDL) before it hands its commit
    /// to the log, and [`schedule::CommitOrder::queued`] the moment the log has it in its queue
    /// (so that the next group may queue behind it).
    fn apply(
        &mut self,
        group: &RelayGroup,
        order: &schedule::CommitOrder,
    ) -> Result<(), ApplyError>;
}
