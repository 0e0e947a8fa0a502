//! The IO thread (see the module docs of `replica`).

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use onelog_binlog::GtidPos;

use super::config::{MasterConfig, StartPosition};
use super::relay::RelayQueue;
use super::status::ReplicaStatus;
use super::ReplicaHost;

/// What one run of the IO thread works with.
pub struct IoContext {
    pub config: MasterConfig,
    /// Where the first connection starts; reconnects start after the last group queued.
    pub start: StartPosition,
    /// START SLAVE UNTIL master_gtid_pos: sent as `@slave_until_gtid`; the thread ends once
    /// the primary says it was reached.
    pub until: Option<GtidPos>,
    pub host: Arc<dyn ReplicaHost>,
    pub status: Arc<ReplicaStatus>,
    pub queue: Arc<RelayQueue>,
    /// Set by STOP SLAVE: the thread ends within about a second.
    pub stop: Arc<AtomicBool>,
}

/// Runs the IO thread until `ctx.stop`, a fatal error (left in `Last_IO_Errno/Error`) or the
/// UNTIL position; sets `Slave_IO_Running` back to No when it returns.
pub fn run(ctx: IoContext) {
    ctx.status.update(|s| {
        s.io_running = super::IoRunning::No;
        s.last_io_errno = 2003;
        s.last_io_error = "the IO thread is not built yet".into();
    });
}
