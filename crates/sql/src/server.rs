//! Server-wide state shared by all sessions: the engine, the configuration, global system
//! variables, status counters, accounts, the connection registry (PROCESSLIST,
//! Threads_connected) and the shutdown request flag.
//!
//! Invariants: a [`Server`] owns exactly one open [`Engine`]; `shutdown` is idempotent; the
//! connection registry holds one entry per live [`ConnectionGuard`].

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use onelog_engine::{Engine, EngineOptions, RecoveryReport};
use onelog_log::{Durability, StdFs};

use crate::admin;
use crate::admin::accounts::Accounts;
use crate::admin::status::StatusCounters;
use crate::admin::sysvars::GlobalVars;
use crate::error::SqlError;

#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub datadir: PathBuf,
    pub port: u16,
    pub bind_address: String,
    pub socket: Option<PathBuf>,
    pub server_id: u32,
    pub gtid_domain_id: u32,
    pub flush_log_at_trx_commit: u8,
    pub max_binlog_size: u64,
    pub binlog_state_interval: u64,
    pub max_connections: u32,
    pub max_allowed_packet: u32,
    pub wait_timeout: u32,
    pub version: String,
}

impl ServerConfig {
    /// Defaults (MariaDB's where it has one) for a data directory.
    pub fn new(datadir: impl Into<PathBuf>) -> Self {
        ServerConfig {
            datadir: datadir.into(),
            port: 3306,
            bind_address: "127.0.0.1".into(),
            socket: None,
            server_id: 1,
            gtid_domain_id: 0,
            flush_log_at_trx_commit: 1,
            max_binlog_size: 1 << 30,
            binlog_state_interval: 2 << 20,
            max_connections: 151,
            max_allowed_packet: 16 << 20,
            wait_timeout: 28800,
            version: "10.11.9-MariaDB-onelog".into(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    pub user: String,
    pub host: String,
    /// SHA1(SHA1(password)), 20 bytes; empty when the account has no password.
    pub auth_hash: Vec<u8>,
}

/// One connection as PROCESSLIST shows it.
#[derive(Debug, Clone)]
pub struct ConnectionInfo {
    pub id: u32,
    pub user: String,
    pub host: String,
    pub db: Option<String>,
    /// `Query`, `Sleep`, `Binlog Dump`, ...
    pub command: String,
    pub started: Instant,
}

impl ConnectionInfo {
    pub fn new(id: u32, user: &str, host: &str) -> Self {
        ConnectionInfo {
            id,
            user: user.to_string(),
            host: host.to_string(),
            db: None,
            command: "Sleep".into(),
            started: Instant::now(),
        }
    }
}

/// A registry entry: the info and the KILL flag the connection's thread polls.
#[derive(Debug, Clone)]
pub struct ConnectionEntry {
    pub info: ConnectionInfo,
    pub killed: Arc<AtomicBool>,
}

/// Removes its connection from the registry when dropped.
pub struct ConnectionGuard {
    server: Arc<Server>,
    id: u32,
    killed: Arc<AtomicBool>,
}

impl ConnectionGuard {
    pub fn id(&self) -> u32 {
        self.id
    }
    /// True once `KILL <id>` was issued for this connection.
    pub fn killed(&self) -> bool {
        self.killed.load(Ordering::Acquire)
    }
}

impl Drop for ConnectionGuard {
    fn drop(&mut self) {
        self.server
            .connections
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&self.id);
    }
}

/// Server-wide state shared by all sessions.
pub struct Server {
    pub(crate) engine: Arc<Engine>,
    pub(crate) config: ServerConfig,
    pub(crate) globals: GlobalVars,
    pub(crate) status: StatusCounters,
    pub(crate) accounts: Accounts,
    pub(crate) connections: Mutex<BTreeMap<u32, ConnectionEntry>>,
    pub(crate) started: Instant,
    shutdown_requested: Mutex<bool>,
    shutdown_cv: Condvar,
    shut_down: AtomicBool,
}

impl Server {
    /// Opens (or creates) the engine in `config.datadir` and bootstraps the system data.
    pub fn open(config: ServerConfig) -> Result<(Arc<Server>, RecoveryReport), SqlError> {
        let mut opts = EngineOptions::new(&config.datadir);
        opts.server_id = config.server_id;
        opts.domain_id = config.gtid_domain_id;
        opts.log.segment_size = config.max_binlog_size.max(16 << 10);
        if config.binlog_state_interval > 0 {
            opts.log.state_interval = config.binlog_state_interval;
        }
        opts.log.durability =
            Durability::from_level(config.flush_log_at_trx_commit).unwrap_or(Durability::Level1);
        opts.log.server_version = config.version.clone();
        opts.log.server_id = config.server_id;
        let (engine, report) = Engine::open(Arc::new(StdFs), opts)?;
        let server = Arc::new(Server {
            engine,
            globals: GlobalVars::default(),
            status: StatusCounters::default(),
            accounts: Accounts::default(),
            connections: Mutex::new(BTreeMap::new()),
            started: Instant::now(),
            shutdown_requested: Mutex::new(false),
            shutdown_cv: Condvar::new(),
            shut_down: AtomicBool::new(false),
            config,
        });
        admin::accounts::bootstrap(&server)?;
        Ok((server, report))
    }

    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    pub fn config(&self) -> &ServerConfig {
        &self.config
    }

    /// Final checkpoint and log shutdown (idempotent).
    pub fn shutdown(&self) -> Result<(), SqlError> {
        if self.shut_down.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        self.engine.shutdown()?;
        Ok(())
    }

    pub fn lookup_account(&self, user: &str, host: &str) -> Option<Account> {
        self.accounts.lookup(user, host)
    }

    pub fn root_has_no_password(&self) -> bool {
        self.accounts.root_has_no_password()
    }

    pub fn status(&self) -> &StatusCounters {
        &self.status
    }

    pub fn sysvars(&self) -> &GlobalVars {
        &self.globals
    }

    /// Seconds since the server started (`Uptime`).
    pub fn uptime(&self) -> Duration {
        self.started.elapsed()
    }

    pub fn register_connection(self: &Arc<Self>, info: ConnectionInfo) -> ConnectionGuard {
        let killed = Arc::new(AtomicBool::new(false));
        let id = info.id;
        self.connections
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(
                id,
                ConnectionEntry {
                    info,
                    killed: killed.clone(),
                },
            );
        ConnectionGuard {
            server: self.clone(),
            id,
            killed,
        }
    }

    /// Number of registered connections (`Threads_connected`).
    pub fn connection_count(&self) -> usize {
        self.connections
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .len()
    }

    /// A copy of every registered connection (PROCESSLIST).
    pub fn connections(&self) -> Vec<ConnectionEntry> {
        self.connections
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .cloned()
            .collect()
    }

    /// Runs `f` on the registry entry of connection `id`, if registered.
    pub(crate) fn update_connection(&self, id: u32, f: impl FnOnce(&mut ConnectionInfo)) {
        if let Some(e) = self
            .connections
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_mut(&id)
        {
            f(&mut e.info);
        }
    }

    /// Sets the KILL flag of connection `id`; false when there is none.
    pub fn kill_connection(&self, id: u32) -> bool {
        match self
            .connections
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&id)
        {
            Some(e) => {
                e.killed.store(true, Ordering::Release);
                true
            }
            None => false,
        }
    }

    /// Asks the server to stop (the SHUTDOWN statement).
    pub fn request_shutdown(&self) {
        let mut r = self
            .shutdown_requested
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        *r = true;
        self.shutdown_cv.notify_all();
    }

    pub fn shutdown_requested(&self) -> bool {
        *self
            .shutdown_requested
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// Blocks until [`request_shutdown`](Self::request_shutdown) was called.
    pub fn wait_shutdown_request(&self) {
        let mut r = self
            .shutdown_requested
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        while !*r {
            r = self.shutdown_cv.wait(r).unwrap_or_else(|p| p.into_inner());
        }
    }
}
