//! Server-wide state shared by all sessions: the engine, the configuration, global system
//! variables, status counters, accounts, and the [`Registry`] (connection table for
//! PROCESSLIST and KILL, `Threads_connected`, `Questions`, the shutdown request flag), which
//! the protocol layer's listener shares.
//!
//! Invariants: a [`Server`] owns exactly one open [`Engine`] and one [`Registry`]; `shutdown`
//! is idempotent (the engine and the mirror are shut down once).
//!
//! Binlog storage (`ServerConfig::binlog_storage`): in `Engine` mode the log is the binlog; in
//! `File` mode the log writes classic `binlog.NNNNNN` files in the datadir with two-phase
//! commit (`onelog_log::BinlogStorage::File`). With `binlog_file_mirror` (engine mode only),
//! [`Server::start_mirror`] starts a [`Mirror`] that keeps classic files in the datadir behind
//! the commit path; [`Server::shutdown`] stops it after the engine's final checkpoint, and
//! RESET MASTER resets it after the log.

use onelog_binlog::event::table_map::RowMetadata;
use onelog_engine::SemiSync;
use onelog_protocol::errors;
use onelog_replication::source::{AckSink, Source};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use onelog_engine::{Engine, EngineOptions, RecoveryReport, TableStore};
use std::sync::OnceLock;

use onelog_log::{BinlogStorage, ClassicOptions, Durability, Mirror, MirrorReport, StdFs};

use crate::error::SqlError;
use crate::guard::ConnControl;
use crate::privilege::Accounts;
pub use crate::privilege::{Account, RootAuth};
use crate::status::StatusCounters;
use crate::sysvar::registry::GlobalVars;

pub mod registry;
pub use registry::{Closer, ConnectionEntry, ConnectionGuard, ConnectionInfo, Registry, Slot};

/// How long the log must be idle after a sync before the server's log writes and syncs the
/// SyncMark vouching for the last group (`LogOptions::idle_sync_mark`): long enough that a
/// busy server never pays for it, short enough that a crash soon after the last commit
/// rarely falls inside the window.
pub const IDLE_SYNC_MARK: Duration = Duration::from_millis(50);

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
    /// `--binlog-row-metadata`: the startup value of `binlog_row_metadata` (NO_LOG default).
    pub binlog_row_metadata: RowMetadata,
    pub max_connections: u32,
    pub max_allowed_packet: u32,
    /// `--max-session-mem-used`: the global default of `max_session_mem_used` (bytes).
    pub max_session_mem_used: u64,
    pub wait_timeout: u32,
    /// `--checkpoint-interval` in seconds: background checkpoint after this long with log
    /// growth (0: off; the 64 MiB log-growth trigger stays).
    pub checkpoint_interval: u32,
    pub version: String,
    /// `--binlog-storage`: the log is the binlog, or classic files written with 2PC.
    pub binlog_storage: BinlogStorageMode,
    /// `--sync-binlog`: file mode syncs the classic binlog every N groups (0 = never).
    pub sync_binlog: u32,
    /// `--binlog-file-mirror`: engine mode also keeps classic binlog files (background).
    pub binlog_file_mirror: bool,
    /// `--log-recovery`: refuse damage a crash cannot explain (default) or cut it.
    pub log_recovery: onelog_log::LogRecovery,
    /// `--auth-root-authentication-method`: how the `root@localhost` created on a data
    /// directory without accounts logs in (used once, at that first start).
    pub root_auth: RootAuth,
    /// `--binlog-expire-logs-seconds` (or `--expire-logs-days` × 86400): binlog segments
    /// closed longer ago are purged automatically (0: never). SET GLOBAL changes it.
    pub binlog_expire_logs_seconds: u64,
    /// `--max-binlog-total-size` in bytes: the oldest segments are purged while the binlog
    /// is larger (0: unlimited). SET GLOBAL changes it.
    pub max_binlog_total_size: u64,
    /// `--binlog-cache-size`: startup `binlog_cache_size`.
    pub binlog_cache_size: u64,
    /// `--max-binlog-cache-size`: startup `max_binlog_cache_size`.
    pub max_binlog_cache_size: u64,
    /// `--tmpdir`: where spilled binlog caches go (None: `$TMPDIR`, else /tmp).
    pub tmpdir: Option<PathBuf>,
    /// `--table-store`: where the tables are kept (paged converts an existing in-memory data
    /// directory at open; a paged one is refused by the in-memory store).
    pub table_store: TableStore,
}

/// Where the binlog lives (`@@binlog_storage`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BinlogStorageMode {
    /// The engine's log is the binlog (default).
    #[default]
    Engine,
    /// Classic `binlog.NNNNNN` files in the datadir, written after the engine log (2PC).
    File,
}

impl BinlogStorageMode {
    /// `ENGINE` or `FILE`, as `@@binlog_storage` shows it.
    pub fn name(self) -> &'static str {
        match self {
            BinlogStorageMode::Engine => "ENGINE",
            BinlogStorageMode::File => "FILE",
        }
    }
}

impl ServerConfig {
    /// Where transactions' binlog caches spill (`@@tmpdir`): `tmpdir`, else the process's
    /// temporary directory (`$TMPDIR`, else /tmp), as MariaDB's default.
    pub fn tmpdir(&self) -> PathBuf {
        self.tmpdir.clone().unwrap_or_else(std::env::temp_dir)
    }

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
            binlog_row_metadata: RowMetadata::NoLog,
            max_connections: 151,
            max_allowed_packet: 16 << 20,
            max_session_mem_used: crate::guard::DEFAULT_MAX_SESSION_MEM_USED,
            wait_timeout: 28800,
            checkpoint_interval: 300,
            version: "10.11.9-MariaDB-onelog".into(),
            binlog_storage: BinlogStorageMode::Engine,
            sync_binlog: 1,
            binlog_file_mirror: false,
            log_recovery: onelog_log::LogRecovery::Strict,
            root_auth: RootAuth::Socket,
            binlog_expire_logs_seconds: 0,
            max_binlog_total_size: 0,
            binlog_cache_size: onelog_engine::event_cache::DEFAULT_BINLOG_CACHE_SIZE,
            max_binlog_cache_size: onelog_engine::event_cache::DEFAULT_MAX_BINLOG_CACHE_SIZE,
            tmpdir: None,
            table_store: TableStore::Memory,
        }
    }

    /// The classic binlog files' options (file mode and mirror): `binlog.NNNNNN` and
    /// `binlog.index` in the datadir, rotated at `max_binlog_size`.
    pub fn classic_options(&self) -> ClassicOptions {
        ClassicOptions {
            dir: self.datadir.clone(),
            basename: "binlog".to_string(),
            max_size: self.max_binlog_size,
            server_id: self.server_id,
            server_version: self.version.clone(),
        }
    }
}

/// The engine's semi-sync state as a dump sees it.
struct EngineAcks(SemiSync);

impl AckSink for EngineAcks {
    fn client_added(&self) -> Box<dyn Send> {
        Box::new(self.0.add_client())
    }
    fn wants_ack(&self, end_lsn: u64) -> bool {
        self.0.wants_ack(end_lsn)
    }
    fn ack(&self, end_lsn: u64, server_id: u32) {
        self.0.ack(end_lsn, server_id)
    }
}

/// Server-wide state shared by all sessions.
pub struct Server {
    pub(crate) engine: Arc<Engine>,
    pub(crate) config: ServerConfig,
    pub(crate) globals: GlobalVars,
    pub(crate) status: StatusCounters,
    pub(crate) accounts: Accounts,
    /// Connections, shutdown flag, `Questions`: shared with the protocol layer's listener.
    pub(crate) registry: Arc<Registry>,
    /// The classic-file mirror, once [`Server::start_mirror`] started it.
    mirror: OnceLock<Mirror>,
    /// The primary side of replication: registered replicas and running dumps.
    source: Arc<Source>,
    /// The replica side of replication, once the server wired it ([`Server::set_replica`]);
    /// absent, the replica statements act as on a MariaDB never configured as a replica.
    replica: OnceLock<Arc<onelog_replication::replica::Replica>>,
    /// `@@global.read_only` (read on every write statement, so an atomic).
    pub(crate) read_only: AtomicBool,
    shut_down: AtomicBool,
    /// GET_LOCK's names (`crate::user_locks`).
    pub(crate) user_locks: Arc<crate::user_locks::UserLocks>,
    /// The general and slow query logs (`crate::querylog`).
    pub(crate) query_logs: crate::querylog::QueryLogs,
    /// LOCK TABLES and FLUSH TABLES WITH READ LOCK (`crate::table_locks`).
    pub(crate) table_locks: Arc<crate::table_locks::TableLocks>,
}

fn mirror_with_file_mode() -> SqlError {
    SqlError::of(
        errors::ER_UNKNOWN_ERROR,
        "--binlog-file-mirror=ON needs --binlog-storage=engine: with --binlog-storage=file the \
         binlog files already are classic files",
    )
}

impl Server {
    /// Opens (or creates) the engine in `config.datadir` and bootstraps the system data.
    pub fn open(config: ServerConfig) -> Result<(Arc<Server>, RecoveryReport), SqlError> {
        let mut opts = EngineOptions::new(&config.datadir);
        opts.server_id = config.server_id;
        opts.domain_id = config.gtid_domain_id;
        opts.binlog_row_metadata = config.binlog_row_metadata;
        opts.log.segment_size = config.max_binlog_size.max(16 << 10);
        opts.checkpoint_every = std::time::Duration::from_secs(config.checkpoint_interval.into());
        opts.binlog_expire_logs_seconds = config.binlog_expire_logs_seconds;
        opts.max_binlog_total_size = config.max_binlog_total_size;
        opts.table_store = config.table_store.clone();
        if config.binlog_state_interval > 0 {
            opts.log.state_interval = config.binlog_state_interval;
        }
        opts.log.durability =
            Durability::from_level(config.flush_log_at_trx_commit).unwrap_or(Durability::Level1);
        opts.log.server_version = config.version.clone();
        opts.log.server_id = config.server_id;
        opts.log.recovery = config.log_recovery;
        // The last group before an idle period is vouched for by a synced SyncMark too, so
        // damage there is refused rather than cut as a torn tail (docs/LOG_FORMAT.md).
        opts.log.idle_sync_mark = Some(IDLE_SYNC_MARK);
        if config.binlog_storage == BinlogStorageMode::File {
            if config.binlog_file_mirror {
                return Err(mirror_with_file_mode());
            }
            opts.log.binlog_storage = BinlogStorage::File {
                classic: config.classic_options(),
                sync_binlog: config.sync_binlog,
            };
        }
        let (engine, report) = Engine::open(Arc::new(StdFs), opts)?;
        engine.set_binlog_cache_size(config.binlog_cache_size);
        engine.set_max_binlog_cache_size(config.max_binlog_cache_size);
        engine.set_binlog_cache_dir(&config.tmpdir());
        let server = Arc::new(Server {
            engine,
            globals: GlobalVars::default(),
            status: StatusCounters::default(),
            accounts: Accounts::default(),
            registry: Arc::new(Registry::new()),
            mirror: OnceLock::new(),
            source: Arc::new(Source::new()),
            replica: OnceLock::new(),
            read_only: AtomicBool::new(false),
            shut_down: AtomicBool::new(false),
            user_locks: Arc::default(),
            query_logs: crate::querylog::QueryLogs::new(
                &config.version,
                config.port,
                config.socket.as_deref(),
                &config.datadir,
            ),
            table_locks: Arc::default(),
            config,
        });
        crate::privilege::bootstrap(&server.accounts, &server.engine, server.config.root_auth)?;
        // Semi-sync's log lines name binlog positions as readers see them (the classic view).
        let log = Arc::downgrade(server.engine.log());
        server
            .engine
            .semisync()
            .set_position_namer(Arc::new(move |lsn| {
                log.upgrade()
                    .and_then(|l| l.view_position(lsn).ok())
                    .unwrap_or((String::new(), lsn))
            }));
        Ok((server, report))
    }

    /// The primary side of replication (SHOW SLAVE HOSTS, dumps).
    pub fn source(&self) -> &Arc<Source> {
        &self.source
    }

    /// The replica connection (CHANGE MASTER, START / STOP SLAVE, SHOW SLAVE STATUS), if wired.
    pub fn replica(&self) -> Option<&Arc<onelog_replication::replica::Replica>> {
        self.replica.get()
    }

    /// Wires the replica connection (once; a second call gives its argument back).
    pub fn set_replica(
        &self,
        replica: Arc<onelog_replication::replica::Replica>,
    ) -> Result<(), Arc<onelog_replication::replica::Replica>> {
        self.replica.set(replica)
    }

    /// Where dumps report semi-sync acknowledgements: the engine's semi-sync state.
    pub fn ack_sink(&self) -> Option<Arc<dyn AckSink>> {
        Some(Arc::new(EngineAcks(self.engine.semisync().clone())))
    }

    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    pub fn config(&self) -> &ServerConfig {
        &self.config
    }

    /// Starts the classic-file mirror when `binlog_file_mirror` is on (None when off): it
    /// first catches up synchronously with the durable log (the report says what it found and
    /// repaired), then follows the log in a background thread. Call before serving clients.
    pub fn start_mirror(&self) -> Result<Option<MirrorReport>, SqlError> {
        if !self.config.binlog_file_mirror {
            return Ok(None);
        }
        if self.config.binlog_storage == BinlogStorageMode::File {
            return Err(mirror_with_file_mode());
        }
        if self.mirror.get().is_some() {
            return Err(SqlError::of(
                errors::ER_UNKNOWN_ERROR,
                "the binlog file mirror is already running",
            ));
        }
        let (mirror, report) = Mirror::start(
            self.engine.log().clone(),
            Arc::new(StdFs),
            self.config.classic_options(),
        )
        .map_err(|e| {
            SqlError::of(
                errors::ER_UNKNOWN_ERROR,
                format!(
                    "cannot start the binlog file mirror in {}: {e}",
                    self.config.datadir.display()
                ),
            )
        })?;
        // Only this function sets the cell, and it is called once at startup.
        let _ = self.mirror.set(mirror);
        Ok(Some(report))
    }

    /// The classic-file mirror, when running.
    pub fn mirror(&self) -> Option<&Mirror> {
        self.mirror.get()
    }

    /// Final checkpoint and log shutdown, then the mirror's (idempotent).
    pub fn shutdown(&self) -> Result<(), SqlError> {
        if self.shut_down.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        // The replica's threads end first: a group being committed finishes, none starts.
        if let Some(r) = self.replica.get() {
            r.shutdown();
        }
        let engine = self.engine.shutdown();
        let mirror = match self.mirror.get() {
            Some(m) => m.shutdown().map_err(|e| {
                SqlError::of(
                    errors::ER_UNKNOWN_ERROR,
                    format!("shutting the binlog file mirror down: {e}"),
                )
            }),
            None => Ok(()),
        };
        engine?;
        mirror
    }

    pub fn lookup_account(&self, user: &str, host: &str) -> Option<Account> {
        self.accounts.lookup(user, host)
    }

    /// Whether `user`@`host`'s account holds CONNECTION ADMIN or SUPER: it may use
    /// the connection reserved above `max_connections`.
    pub fn is_connection_admin(&self, user: &str, host: &str) -> bool {
        self.accounts.is_connection_admin(user, host)
    }

    /// True when `root@localhost` logs in with an empty password (over TCP too).
    pub fn root_has_no_password(&self) -> bool {
        self.accounts.root_has_no_password()
    }

    /// The general and slow query logs.
    pub fn query_logs(&self) -> &crate::querylog::QueryLogs {
        &self.query_logs
    }

    pub fn status(&self) -> &StatusCounters {
        &self.status
    }

    pub fn sysvars(&self) -> &GlobalVars {
        &self.globals
    }

    /// Seconds since the server started (`Uptime`).
    pub fn uptime(&self) -> Duration {
        self.registry.uptime()
    }

    /// The connection registry (shared with the protocol layer's listener).
    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// Registers an authenticated connection; dropping the guard unregisters it.
    pub fn register_connection(&self, info: ConnectionInfo) -> ConnectionGuard {
        self.registry.register(info)
    }

    /// Number of registered connections (`Threads_connected`).
    pub fn connection_count(&self) -> usize {
        self.registry.connection_count()
    }

    /// A copy of every registered connection (PROCESSLIST).
    pub fn connections(&self) -> Vec<ConnectionEntry> {
        self.registry.connections()
    }

    /// Runs `f` on the registry entry of connection `id`, if registered.
    pub(crate) fn update_connection(&self, id: u32, f: impl FnOnce(&mut ConnectionInfo)) {
        self.registry.update_connection(id, f)
    }

    /// Sets the KILL flag of connection `id` (`how`: [`crate::guard::KILL_QUERY`] or
    /// [`crate::guard::KILL_CONNECTION`]); false when there is none.
    pub fn kill_connection(&self, id: u32, how: u8) -> bool {
        match self.connection_control(id) {
            Some(c) => {
                c.kill(how);
                true
            }
            None => false,
        }
    }

    /// The control of registered connection `id` (its session's statement guard watches it).
    pub fn connection_control(&self, id: u32) -> Option<Arc<ConnControl>> {
        self.registry.connection_control(id)
    }

    /// Asks the server to stop (the SHUTDOWN statement).
    pub fn request_shutdown(&self) {
        self.registry.request_shutdown()
    }

    pub fn shutdown_requested(&self) -> bool {
        self.registry.shutdown_requested()
    }

    /// Blocks until [`request_shutdown`](Self::request_shutdown) was called.
    pub fn wait_shutdown_request(&self) {
        self.registry.wait_shutdown_request()
    }
}
