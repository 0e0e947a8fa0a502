//! The engine: opening and recovering a database, DDL, the commit path, checkpoints, shutdown.
//!
//! Owns [`Engine`], [`EngineOptions`], [`RecoveryReport`] and the log's [`GroupSink`]
//! implementation, which turns committed log records into a new published root.
//!
//! Layout of a data directory `dir`: `dir/binlog/` the log (its segments are the binlog),
//! `dir/checkpoints/` checkpoint files and their `control` file (`checkpoint.rs`).
//!
//! Open (recovery): load the current checkpoint (or start empty), open the log (which cuts a
//! torn tail), replay every record from the checkpoint's LSN to the end of the log through
//! `apply.rs` — the same code a replica runs — then install the sink and, if asked, start the
//! background checkpoint scheduler. Everything on disk after open counts, durable or not: the
//! log has already decided what survived.
//!
//! Commit: [`Transaction::commit`] encodes its change log as an event group (`events.rs`) and
//! calls `Log::commit` with the change log as payload. The group-commit leader calls the sink
//! once per group: the sink applies every record of the group in log order to a clone of the
//! current root, publishes it once, then releases each transaction's row locks. The sink runs
//! after the group is written but (unless `LogOptions::strict_visibility`) before it is
//! durable: a commit becomes visible to other transactions before its fsync, like InnoDB, so a
//! crash can lose a commit that a reader saw; the committing client is still acknowledged only
//! once the log says it is durable (level 1). With `strict_visibility` the sink runs after the
//! sync.
//!
//! DDL is an implicit commit, like MySQL: it is validated against the latest catalog, logged as
//! its own record (Query event + the catalog change in `aux`) and applied by the sink. DDL and
//! commits are ordered by `commit_gate` (commits share it, DDL takes it exclusively), so a
//! transaction's record never reaches the log after a DROP of a table it wrote: a commit that
//! finds a table gone fails with 1146. There are no metadata locks (DDL never waits for open
//! transactions); instead every DDL bumps the generation of the table it touches
//! (`TableData::generation`) and a transaction that wrote the table under an older generation
//! fails at commit with 1412 (`ER_TABLE_DEF_CHANGED`), checked under the shared gate. So a
//! logged row change always applies (no update of a row a TRUNCATE removed, no duplicate in a
//! unique index created meanwhile), which recovery and replicas rely on. The engine's DDL
//! methods do not commit a session's open transaction: the SQL layer must commit it first
//! (MySQL's implicit commit).
//!
//! Checkpoints take the current root (consistent at its LSN, never blocking commits), make
//! sure the log is durable up to that LSN (a checkpoint must never be ahead of the durable
//! log, since visibility precedes durability), serialize it and write it with
//! `checkpoint::write_checkpoint`. A failed background checkpoint is retried with a backoff
//! (`EngineOptions::checkpoint_backoff`) and reported at once through the reporter the server
//! installs ([`Engine::set_reporter`], `report.rs`); so is the first error that shows the log
//! in its failed state (e.g. an fsync that returned EIO: the log never retries it and refuses
//! every later write until a restart).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use onelog_binlog::{GtidPos, GtidState};
use onelog_log::{
    CommitReceipt, CommittedRecord, FileSystem, GroupSink, GtidAssign, Log, LogOptions, Lsn,
    OpenReport, PendingRecord, ReadStart, ReaderOptions, RecordKind,
};

use crate::apply::{apply_body, apply_record, decode_record, DecodedBody};
use crate::catalog::{
    AccountDef, Catalog, CatalogChange, IndexDef, IndexSpec, TableDef, TableId, TableSpec,
};
use crate::checkpoint::{
    load_checkpoint, write_checkpoint, Backoff, CheckpointScheduler, SchedulerTask,
};
use crate::error::EngineError;
use crate::events::{encode_ddl, encode_transaction};
use crate::key::display_values;
use crate::lock::{LockManager, TxnId};
use crate::report::{EngineEvent, Reporter};
use crate::store::{index_has_null, index_key, Root, RowChange, Snapshot, Store};
use crate::txn::Transaction;

/// How to open an engine.
#[derive(Clone, Debug)]
pub struct EngineOptions {
    /// Data directory.
    pub dir: PathBuf,
    /// Log options; an empty or relative `log.dir` is taken relative to `dir`
    /// (`LogOptions::default()`'s `binlog` gives `dir/binlog`).
    pub log: LogOptions,
    pub server_id: u32,
    pub domain_id: u32,
    /// `innodb_lock_wait_timeout`.
    pub lock_wait_timeout: Duration,
    /// Background checkpoint after this many log bytes (0: off).
    pub checkpoint_every_bytes: u64,
    /// Background checkpoint after this much time with log growth (0: off).
    pub checkpoint_every: Duration,
    pub background_checkpoints: bool,
    /// Waits between failed background checkpoints (1 s doubling to 60 s).
    pub checkpoint_backoff: Backoff,
}

impl EngineOptions {
    /// Defaults for a data directory: server id 1, domain 0, 50 s lock wait timeout (MariaDB's
    /// default), background checkpoints every 64 MiB of log or 5 minutes.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        EngineOptions {
            dir: dir.into(),
            log: LogOptions::default(),
            server_id: 1,
            domain_id: 0,
            lock_wait_timeout: Duration::from_secs(50),
            checkpoint_every_bytes: 64 << 20,
            checkpoint_every: Duration::from_secs(300),
            background_checkpoints: true,
            checkpoint_backoff: Backoff::default(),
        }
    }
}

/// What [`Engine::open`] found and did.
#[derive(Clone, Debug)]
pub struct RecoveryReport {
    /// LSN of the checkpoint loaded (None: none, started empty).
    pub checkpoint_lsn: Option<Lsn>,
    /// Log records replayed after the checkpoint.
    pub records_applied: u64,
    /// The log's own report: segment and offset it continues at, GTID state, torn bytes.
    pub log: OpenReport,
}

impl RecoveryReport {
    /// `@@gtid_binlog_pos` after recovery.
    pub fn gtid_binlog_pos(&self) -> GtidPos {
        self.log.gtid_state.pos()
    }
}

impl std::fmt::Display for RecoveryReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.checkpoint_lsn {
            Some(l) => write!(f, "loaded checkpoint at LSN {l}")?,
            None => write!(f, "no checkpoint")?,
        }
        write!(
            f,
            ", replayed {} records; log continues in segment {} ({}) at offset {}, end LSN {}, gtid_binlog_pos '{}'",
            self.records_applied,
            self.log.segment,
            self.log.segment_path.display(),
            self.log.offset,
            self.log.end_lsn,
            self.log.gtid_state.pos()
        )?;
        if self.log.torn_bytes > 0 {
            write!(f, ", {} torn bytes cut", self.log.torn_bytes)?;
        }
        Ok(())
    }
}

/// What a log record carries to the sink.
enum CommitPayload {
    /// A transaction's change log (`txn`: whose locks to release; None for replicated groups).
    Rows {
        txn: Option<TxnId>,
        changes: Vec<RowChange>,
    },
    Ddl(CatalogChange),
}

/// State shared with the log's sink.
struct Shared {
    store: Store,
    locks: LockManager,
    /// First failure to apply a committed record (a bug: the log has it, the store does not).
    apply_failure: Mutex<Option<String>>,
}

struct Sink(Arc<Shared>);

impl GroupSink for Sink {
    fn apply_group(&self, group: &mut [CommittedRecord]) {
        let shared = &self.0;
        let mut root = (*shared.store.current()).clone();
        let mut release = Vec::with_capacity(group.len());
        for rec in group.iter_mut() {
            let payload = rec
                .payload
                .take()
                .and_then(|p| p.downcast::<CommitPayload>().ok());
            let result = match payload.as_deref() {
                Some(CommitPayload::Rows { txn, changes }) => {
                    if let Some(t) = txn {
                        release.push(*t);
                    }
                    changes.iter().try_for_each(|c| root.apply_row_change(c))
                }
                Some(CommitPayload::Ddl(change)) => {
                    root.apply_catalog_change(change).map_err(|e| e.to_string())
                }
                None => Err("record without the engine's payload".to_string()),
            };
            if let Err(e) = result {
                let mut f = shared
                    .apply_failure
                    .lock()
                    .unwrap_or_else(|p| p.into_inner());
                if f.is_none() {
                    *f = Some(format!(
                        "GTID {} at LSN {}: {e}",
                        rec.receipt.gtid, rec.receipt.lsn
                    ));
                }
            }
            root.gtid_state.record(rec.receipt.gtid);
            root.lsn = rec.receipt.end_lsn;
        }
        shared.store.publish(Arc::new(root));
        for t in release {
            shared.locks.release_all(t);
        }
    }
}

/// The engine. Shared as `Arc<Engine>`.
pub struct Engine {
    fs: Arc<dyn FileSystem>,
    opts: EngineOptions,
    checkpoint_dir: PathBuf,
    log: Arc<Log>,
    shared: Arc<Shared>,
    next_txn: AtomicU64,
    /// Non-transactional AUTO_INCREMENT counters: table -> next value to hand out.
    auto_inc: Mutex<HashMap<TableId, u64>>,
    /// Commits hold it shared, DDL exclusively (see the module docs).
    commit_gate: RwLock<()>,
    checkpoint_lock: Mutex<Option<Lsn>>,
    scheduler: Mutex<Option<CheckpointScheduler>>,
    shut_down: AtomicBool,
    /// Where events go ([`Engine::set_reporter`]); shared with the scheduler thread.
    reporter: Arc<RwLock<Option<Reporter>>>,
    /// Set once [`EngineEvent::LogFailed`] was reported (the failed state is final).
    log_failure_reported: AtomicBool,
    /// Set from a write failing with 1021 (reported) until the next successful write.
    disk_full: AtomicBool,
}

/// Calls the installed reporter, if any (no engine lock is held by callers).
fn report_to(reporter: &RwLock<Option<Reporter>>, event: &EngineEvent) {
    let r = reporter.read().unwrap_or_else(|p| p.into_inner()).clone();
    if let Some(r) = r {
        r(event);
    }
}

fn now_secs() -> u32 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as u32)
}

impl Engine {
    /// Opens (creating if needed) the database in `opts.dir` and recovers it.
    pub fn open(
        fs: Arc<dyn FileSystem>,
        opts: EngineOptions,
    ) -> Result<(Arc<Engine>, RecoveryReport), EngineError> {
        let io = |what: &str, p: &Path, e: std::io::Error| EngineError::Io {
            context: format!("{what} {}", p.display()),
            source: e,
        };
        fs.create_dir_all(&opts.dir)
            .map_err(|e| io("creating data directory", &opts.dir, e))?;
        let checkpoint_dir = opts.dir.join("checkpoints");
        fs.create_dir_all(&checkpoint_dir)
            .map_err(|e| io("creating checkpoint directory", &checkpoint_dir, e))?;

        let loaded =
            load_checkpoint(&*fs, &checkpoint_dir).map_err(|source| EngineError::Checkpoint {
                context: format!("loading the checkpoint in {}", checkpoint_dir.display()),
                source,
            })?;
        let checkpoint_lsn = loaded.as_ref().map(|c| c.lsn);
        let mut root = match loaded {
            Some(c) => Root::decode_checkpoint(&c.body, c.lsn, c.gtid_state).map_err(|e| {
                EngineError::corrupt(
                    format!("checkpoint {} (LSN {})", c.path.display(), c.lsn),
                    e,
                )
            })?,
            None => Root::empty(),
        };

        let mut log_opts = opts.log.clone();
        if log_opts.dir.as_os_str().is_empty() {
            log_opts.dir = opts.dir.join("binlog");
        } else if log_opts.dir.is_relative() {
            log_opts.dir = opts.dir.join(&log_opts.dir);
        }
        let (log, log_report) =
            Log::open(fs.clone(), log_opts).map_err(|e| EngineError::log("opening the log", e))?;

        let mut reader = log
            .reader(
                ReadStart::Lsn(root.lsn),
                ReaderOptions {
                    include_non_durable: true,
                    include_state_records: false,
                },
            )
            .map_err(|e| EngineError::log(format!("reading the log from LSN {}", root.lsn), e))?;
        let mut records_applied = 0u64;
        loop {
            let rec = reader.next().map_err(|e| {
                EngineError::log(format!("replaying the log at LSN {}", root.lsn), e)
            })?;
            let Some(rec) = rec else { break };
            if rec.kind == RecordKind::GtidState {
                continue;
            }
            apply_record(
                &mut root,
                &rec.events,
                &rec.aux,
                rec.gtid,
                rec.lsn,
                rec.end_lsn,
            )?;
            records_applied += 1;
        }
        // GTID state records and the log's own state are authoritative for what follows.
        root.gtid_state = log.gtid_state();

        let shared = Arc::new(Shared {
            store: Store::new(root),
            locks: LockManager::new(),
            apply_failure: Mutex::new(None),
        });
        log.set_sink(Arc::new(Sink(shared.clone())));
        let engine = Arc::new(Engine {
            fs,
            checkpoint_dir,
            log,
            shared,
            next_txn: AtomicU64::new(1),
            auto_inc: Mutex::new(HashMap::new()),
            commit_gate: RwLock::new(()),
            checkpoint_lock: Mutex::new(checkpoint_lsn),
            scheduler: Mutex::new(None),
            shut_down: AtomicBool::new(false),
            reporter: Arc::new(RwLock::new(None)),
            log_failure_reported: AtomicBool::new(false),
            disk_full: AtomicBool::new(false),
            opts,
        });
        if engine.opts.background_checkpoints {
            let weak: Weak<Engine> = Arc::downgrade(&engine);
            let log = engine.log.clone();
            let reporter = engine.reporter.clone();
            let sched = CheckpointScheduler::start(SchedulerTask {
                end_lsn: Box::new(move || log.end_lsn()),
                every_bytes: engine.opts.checkpoint_every_bytes,
                every: engine.opts.checkpoint_every,
                backoff: engine.opts.checkpoint_backoff,
                run: Box::new(move || match weak.upgrade() {
                    Some(e) => e.checkpoint().map_err(|e| e.to_string()),
                    None => Err("engine closed".to_string()),
                }),
                report: Box::new(move |ev| report_to(&reporter, ev)),
            });
            *engine.scheduler.lock().unwrap_or_else(|p| p.into_inner()) = Some(sched);
        }
        let report = RecoveryReport {
            checkpoint_lsn,
            records_applied,
            log: log_report,
        };
        Ok((engine, report))
    }

    /// Starts a transaction.
    pub fn begin(self: &Arc<Self>) -> Transaction {
        Transaction::new(self.clone(), self.next_txn.fetch_add(1, Ordering::Relaxed))
    }

    /// The latest catalog.
    pub fn catalog(&self) -> Arc<Catalog> {
        self.shared.store.current().catalog.clone()
    }

    /// The latest visible state.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot::new(self.shared.store.current())
    }

    pub fn log(&self) -> &Arc<Log> {
        &self.log
    }

    pub fn options(&self) -> &EngineOptions {
        &self.opts
    }

    /// The row lock manager (tests, `SHOW ENGINE STATUS`).
    pub fn locks(&self) -> &LockManager {
        &self.shared.locks
    }

    /// Why a committed record could not be applied to the store, if that ever happened (a bug).
    pub fn apply_failure(&self) -> Option<String> {
        self.shared
            .apply_failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Installs the reporter that receives [`EngineEvent`]s from now on (replacing any
    /// previous one). A log that already failed is reported to it at once.
    pub fn set_reporter(&self, reporter: Reporter) {
        *self.reporter.write().unwrap_or_else(|p| p.into_inner()) = Some(reporter);
        if let Some(reason) = self.log.failed() {
            self.log_failure_reported.store(true, Ordering::Release);
            report_to(&self.reporter, &EngineEvent::LogFailed { reason });
        }
    }

    /// Reports [`EngineEvent::LogFailed`] the first time the log is seen failed (once per
    /// reporter: [`Engine::set_reporter`] tells a new one).
    fn report_log_failure(&self) {
        let Some(reason) = self.log.failed() else {
            return;
        };
        if !self.log_failure_reported.swap(true, Ordering::AcqRel) {
            report_to(&self.reporter, &EngineEvent::LogFailed { reason });
        }
    }

    /// `EngineError::log`, reporting the log's failed state if this error is the first to
    /// show it (a commit whose fsync returned EIO, a level-2 background flush that failed).
    fn log_error(&self, context: impl Into<String>, e: onelog_log::LogError) -> EngineError {
        self.report_log_failure();
        let e = EngineError::log(context, e);
        if e.code() == 1021 && !self.disk_full.swap(true, Ordering::AcqRel) {
            report_to(
                &self.reporter,
                &EngineEvent::DiskFull {
                    error: e.to_string(),
                },
            );
        }
        e
    }

    /// A write was logged: ends a disk-full episode, if one was reported.
    fn logged(&self) {
        if self.disk_full.load(Ordering::Relaxed) && self.disk_full.swap(false, Ordering::AcqRel) {
            report_to(&self.reporter, &EngineEvent::WritesResumed);
        }
    }

    /// The background checkpointer's last error.
    pub fn checkpoint_error(&self) -> Option<String> {
        self.scheduler
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .and_then(|s| s.last_error())
    }

    pub(crate) fn store(&self) -> &Store {
        &self.shared.store
    }

    pub(crate) fn lock_wait_timeout(&self) -> Duration {
        self.opts.lock_wait_timeout
    }

    /// Next AUTO_INCREMENT value of `table` (not transactional).
    pub(crate) fn next_auto_inc(&self, table: TableId) -> u64 {
        let committed = self
            .shared
            .store
            .current()
            .table(table)
            .map_or(1, |t| t.auto_inc_next);
        let mut m = self.auto_inc.lock().unwrap_or_else(|p| p.into_inner());
        let e = m.entry(table).or_insert(1);
        let v = (*e).max(committed).max(1);
        *e = v.saturating_add(1);
        v
    }

    /// An explicit AUTO_INCREMENT value `v` was used: later generated values are above it.
    pub(crate) fn observe_auto_inc(&self, table: TableId, v: u64) {
        let mut m = self.auto_inc.lock().unwrap_or_else(|p| p.into_inner());
        let e = m.entry(table).or_insert(1);
        if v >= *e {
            *e = v.saturating_add(1);
        }
    }

    fn check_open(&self) -> Result<(), EngineError> {
        if self.shut_down.load(Ordering::Acquire) {
            return Err(EngineError::ShutDown);
        }
        Ok(())
    }

    /// Logs a transaction's change log (the commit path of [`Transaction::commit`]).
    pub(crate) fn commit_changes(
        &self,
        txn: TxnId,
        changes: Vec<RowChange>,
        generations: &HashMap<TableId, u64>,
    ) -> Result<CommitReceipt, EngineError> {
        self.check_open()?;
        let _gate = self.commit_gate.read().unwrap_or_else(|p| p.into_inner());
        let root = self.shared.store.current();
        // DDL is excluded while the gate is held: if every written table still has the
        // generation the writes were based on (and the row locks are held), the changes apply.
        for (&table, &generation) in generations {
            let Some(def) = root.catalog.table(table) else {
                return Err(EngineError::NoSuchTable {
                    db: String::new(),
                    table: format!("#{table}"),
                });
            };
            if root.table(table).map(|t| t.generation) != Some(generation) {
                return Err(EngineError::TableDefChanged {
                    table: def.qualified_name(),
                });
            }
        }
        let events = encode_transaction(
            &root.catalog,
            &changes,
            self.opts.domain_id,
            self.opts.server_id,
            now_secs(),
            txn,
        )?;
        self.log
            .commit(PendingRecord {
                kind: RecordKind::Transaction,
                gtid: GtidAssign::Next {
                    domain_id: self.opts.domain_id,
                    server_id: self.opts.server_id,
                },
                events,
                aux: Vec::new(),
                payload: Some(Box::new(CommitPayload::Rows {
                    txn: Some(txn),
                    changes,
                })),
            })
            .map_err(|e| self.log_error("committing a transaction", e))
            .inspect(|_| self.logged())
    }

    /// Runs one DDL statement: `build` validates against the latest root and returns the
    /// change (None: nothing to do, e.g. IF NOT EXISTS on an existing object).
    fn run_ddl(
        &self,
        db: &str,
        sql: &str,
        build: impl FnOnce(&Root) -> Result<Option<CatalogChange>, EngineError>,
    ) -> Result<Option<CatalogChange>, EngineError> {
        self.check_open()?;
        let _gate = self.commit_gate.write().unwrap_or_else(|p| p.into_inner());
        let root = self.shared.store.current();
        let Some(change) = build(&root)? else {
            return Ok(None);
        };
        // Full validation (and, for a unique index, the duplicate check) before logging.
        let mut scratch = (*root).clone();
        scratch.apply_catalog_change(&change)?;
        if let CatalogChange::CreateIndex { table, index } = &change {
            if index.unique {
                check_unique_index(&scratch, *table, index)?;
            }
        }
        let events = encode_ddl(
            db,
            sql,
            change.suppresses_use(),
            self.opts.domain_id,
            self.opts.server_id,
            now_secs(),
        )?;
        self.log
            .commit(PendingRecord {
                kind: RecordKind::Ddl,
                gtid: GtidAssign::Next {
                    domain_id: self.opts.domain_id,
                    server_id: self.opts.server_id,
                },
                events,
                aux: change.encode(),
                payload: Some(Box::new(CommitPayload::Ddl(change.clone()))),
            })
            .map_err(|e| self.log_error(format!("logging DDL `{sql}`"), e))?;
        self.logged();
        match &change {
            CatalogChange::DropTable { id } | CatalogChange::TruncateTable { id } => {
                self.auto_inc
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .remove(id);
            }
            CatalogChange::DropDatabase { .. } => {
                let cat = self.catalog();
                self.auto_inc
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .retain(|id, _| cat.table(*id).is_some());
            }
            _ => {}
        }
        Ok(Some(change))
    }

    fn find_table(root: &Root, db: &str, table: &str) -> Result<Arc<TableDef>, EngineError> {
        if !root.catalog.has_database(db) {
            return Err(EngineError::NoSuchDatabase { db: db.to_string() });
        }
        root.catalog
            .table_by_name(db, table)
            .cloned()
            .ok_or_else(|| EngineError::NoSuchTable {
                db: db.to_string(),
                table: table.to_string(),
            })
    }

    /// `CREATE DATABASE`.
    pub fn create_database(
        &self,
        name: &str,
        if_not_exists: bool,
        sql: &str,
    ) -> Result<(), EngineError> {
        check_identifier(name)?;
        self.run_ddl(name, sql, |root| {
            if root.catalog.has_database(name) {
                return if if_not_exists {
                    Ok(None)
                } else {
                    Err(EngineError::DatabaseExists {
                        db: name.to_string(),
                    })
                };
            }
            Ok(Some(CatalogChange::CreateDatabase {
                name: name.to_string(),
            }))
        })?;
        Ok(())
    }

    /// `DROP DATABASE` (drops its tables).
    pub fn drop_database(&self, name: &str, if_exists: bool, sql: &str) -> Result<(), EngineError> {
        self.run_ddl(name, sql, |root| {
            if !root.catalog.has_database(name) {
                return if if_exists {
                    Ok(None)
                } else {
                    Err(EngineError::NoSuchDatabase {
                        db: name.to_string(),
                    })
                };
            }
            Ok(Some(CatalogChange::DropDatabase {
                name: name.to_string(),
            }))
        })?;
        Ok(())
    }

    /// `CREATE TABLE`; returns the table's id (the existing one with IF NOT EXISTS).
    pub fn create_table(
        &self,
        spec: TableSpec,
        if_not_exists: bool,
        sql: &str,
    ) -> Result<TableId, EngineError> {
        let mut existing = None;
        let change = self.run_ddl(&spec.db, sql, |root| {
            if !root.catalog.has_database(&spec.db) {
                return Err(EngineError::NoSuchDatabase {
                    db: spec.db.clone(),
                });
            }
            if let Some(t) = root.catalog.table_by_name(&spec.db, &spec.name) {
                if if_not_exists {
                    existing = Some(t.id);
                    return Ok(None);
                }
                return Err(EngineError::TableExists {
                    table: spec.name.clone(),
                });
            }
            let def = TableDef::from_spec(root.catalog.next_table_id(), &spec)?;
            Ok(Some(CatalogChange::CreateTable { table: def }))
        })?;
        match (change, existing) {
            (Some(CatalogChange::CreateTable { table }), _) => Ok(table.id),
            (_, Some(id)) => Ok(id),
            _ => Err(EngineError::corrupt("CREATE TABLE", "no table created")),
        }
    }

    /// `DROP TABLE`.
    pub fn drop_table(
        &self,
        db: &str,
        table: &str,
        if_exists: bool,
        sql: &str,
    ) -> Result<(), EngineError> {
        self.run_ddl(db, sql, |root| match Self::find_table(root, db, table) {
            Ok(t) => Ok(Some(CatalogChange::DropTable { id: t.id })),
            Err(_) if if_exists => Ok(None),
            Err(e) => Err(e),
        })?;
        Ok(())
    }

    /// `TRUNCATE TABLE`: removes every row, resets AUTO_INCREMENT.
    pub fn truncate_table(&self, db: &str, table: &str, sql: &str) -> Result<(), EngineError> {
        self.run_ddl(db, sql, |root| {
            let t = Self::find_table(root, db, table)?;
            Ok(Some(CatalogChange::TruncateTable { id: t.id }))
        })?;
        Ok(())
    }

    /// `CREATE [UNIQUE] INDEX` (a unique index over duplicate values fails with 1062).
    pub fn create_index(
        &self,
        db: &str,
        table: &str,
        index: IndexSpec,
        sql: &str,
    ) -> Result<(), EngineError> {
        self.run_ddl(db, sql, |root| {
            let t = Self::find_table(root, db, table)?;
            let mut def = (*t).clone();
            let ix = def.add_index(&index)?;
            Ok(Some(CatalogChange::CreateIndex {
                table: t.id,
                index: ix,
            }))
        })?;
        Ok(())
    }

    /// `DROP INDEX`.
    pub fn drop_index(
        &self,
        db: &str,
        table: &str,
        index: &str,
        sql: &str,
    ) -> Result<(), EngineError> {
        self.run_ddl(db, sql, |root| {
            let t = Self::find_table(root, db, table)?;
            let ix = t.index(index).ok_or_else(|| EngineError::NoSuchIndex {
                index: index.to_string(),
            })?;
            Ok(Some(CatalogChange::DropIndex {
                table: t.id,
                index_id: ix.id,
            }))
        })?;
        Ok(())
    }

    /// `CREATE USER`: logs `sql` (which must not contain a plain-text password: the SQL layer
    /// logs `IDENTIFIED BY PASSWORD '*hash'`) with the account as its catalog change. Returns
    /// false when the account exists and `if_not_exists` (nothing logged); else 1396.
    pub fn create_account(
        &self,
        account: AccountDef,
        if_not_exists: bool,
        sql: &str,
    ) -> Result<bool, EngineError> {
        let done = self.run_ddl("", sql, |root| {
            if if_not_exists && root.catalog.account(&account.user, &account.host).is_some() {
                return Ok(None);
            }
            Ok(Some(CatalogChange::CreateAccount { account }))
        })?;
        Ok(done.is_some())
    }

    /// `DROP USER`: false when the account is missing and `if_exists`; else 1396.
    pub fn drop_account(
        &self,
        user: &str,
        host: &str,
        if_exists: bool,
        sql: &str,
    ) -> Result<bool, EngineError> {
        let done = self.run_ddl("", sql, |root| {
            if if_exists && root.catalog.account(user, host).is_none() {
                return Ok(None);
            }
            Ok(Some(CatalogChange::DropAccount {
                user: user.to_string(),
                host: host.to_string(),
            }))
        })?;
        Ok(done.is_some())
    }

    /// Changes an existing account (`SET PASSWORD`, `GRANT`, `REVOKE`, `ALTER USER`): `update`
    /// gets the current definition, under the DDL gate (so concurrent changes never lose each
    /// other's effect), and returns the new one. 1396 when the account does not exist.
    pub fn alter_account(
        &self,
        user: &str,
        host: &str,
        sql: &str,
        update: impl FnOnce(&AccountDef) -> Result<AccountDef, EngineError>,
    ) -> Result<(), EngineError> {
        self.run_ddl("", sql, |root| {
            let Some(cur) = root.catalog.account(user, host) else {
                return Err(EngineError::AccountOperation {
                    op: "ALTER USER",
                    user: user.to_string(),
                    host: host.to_string(),
                });
            };
            let mut account = update(cur)?;
            account.user = user.to_string();
            account.host = host.to_string();
            Ok(Some(CatalogChange::AlterAccount { account }))
        })?;
        Ok(())
    }

    /// Replica path: applies an event group logged elsewhere (another onelog's log record:
    /// `events` and `aux`) and logs it here with its original GTID. The group is decoded and
    /// applied to a scratch root first, so a group that does not apply is refused without being
    /// logged. Replicated row changes take no row locks (a replica has no local writers).
    pub fn apply_logged_group(&self, events: &[u8], aux: &[u8]) -> Result<(), EngineError> {
        self.check_open()?;
        let _gate = self.commit_gate.write().unwrap_or_else(|p| p.into_inner());
        let root = self.shared.store.current();
        let decoded =
            decode_record(&root.catalog, events, aux).map_err(|reason| EngineError::Apply {
                gtid: None,
                lsn: None,
                reason,
            })?;
        let gtid = decoded.gtid_event.gtid;
        let mut scratch = (*root).clone();
        apply_body(&mut scratch, &decoded.body).map_err(|reason| EngineError::Apply {
            gtid: Some(gtid),
            lsn: None,
            reason,
        })?;
        if let DecodedBody::Ddl {
            change: CatalogChange::CreateIndex { table, index },
            ..
        } = &decoded.body
        {
            if index.unique {
                check_unique_index(&scratch, *table, index)?;
            }
        }
        let ts = decoded.gtid_event.timestamp;
        let (kind, events, aux, payload) = match decoded.body {
            DecodedBody::Rows(changes) => {
                let ev = encode_transaction(
                    &root.catalog,
                    &changes,
                    gtid.domain_id,
                    gtid.server_id,
                    ts,
                    gtid.seq_no,
                )?;
                (
                    RecordKind::Transaction,
                    ev,
                    Vec::new(),
                    CommitPayload::Rows { txn: None, changes },
                )
            }
            DecodedBody::Ddl { change, query } => {
                let ev = encode_ddl(
                    &query.db,
                    &query.query,
                    change.suppresses_use(),
                    gtid.domain_id,
                    gtid.server_id,
                    ts,
                )?;
                (
                    RecordKind::Ddl,
                    ev,
                    change.encode(),
                    CommitPayload::Ddl(change),
                )
            }
        };
        self.log
            .commit(PendingRecord {
                kind,
                gtid: GtidAssign::Fixed(gtid),
                events,
                aux,
                payload: Some(Box::new(payload)),
            })
            .map_err(|e| self.log_error(format!("logging replicated GTID {gtid}"), e))?;
        Ok(())
    }

    /// `RESET MASTER`: empties the binlog (every segment replaced by a new
    /// `binlog-000001.olog`, `@@gtid_binlog_pos` empty, the next GTID of a domain has sequence
    /// number 1) and keeps every table. Under the exclusive commit gate (no commit or DDL runs
    /// meanwhile) it flushes the log and checkpoints at the log's end LSN, so recovery never
    /// needs the removed segments; then resets the log and checkpoints again so the stored
    /// GTID state is empty too (recovery takes the log's state anyway, see [`Engine::open`]).
    pub fn reset_log(&self) -> Result<(), EngineError> {
        self.check_open()?;
        let _gate = self.commit_gate.write().unwrap_or_else(|p| p.into_inner());
        self.log
            .flush()
            .map_err(|e| EngineError::log("syncing the log before RESET MASTER", e))?;
        // Every record is applied (commits and DDL hold the gate across `Log::commit`); only
        // GTID state records can follow the root's LSN, so the root is the state at the end.
        let end = self.log.end_lsn();
        let mut root = (*self.shared.store.current()).clone();
        root.lsn = root.lsn.max(end);
        self.shared.store.publish(Arc::new(root));
        self.write_checkpoint(false)?;
        self.log
            .reset()
            .map_err(|e| EngineError::log("resetting the log (RESET MASTER)", e))?;
        let mut root = (*self.shared.store.current()).clone();
        root.gtid_state = GtidState::new();
        self.shared.store.publish(Arc::new(root));
        self.write_checkpoint(true)?;
        Ok(())
    }

    /// Writes a checkpoint of the current root; returns its LSN. Never blocks commits.
    pub fn checkpoint(&self) -> Result<Lsn, EngineError> {
        self.write_checkpoint(false)
    }

    /// A checkpoint of the current root; unless `force`, none when the last one is at its LSN.
    fn write_checkpoint(&self, force: bool) -> Result<Lsn, EngineError> {
        let mut last = self
            .checkpoint_lock
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let root = self.shared.store.current();
        if !force && *last == Some(root.lsn) {
            return Ok(root.lsn);
        }
        if self.log.durable_lsn() < root.lsn {
            self.log
                .flush()
                .map_err(|e| self.log_error("syncing the log before a checkpoint", e))?;
        }
        let body = root.encode_checkpoint();
        write_checkpoint(
            &*self.fs,
            &self.checkpoint_dir,
            root.lsn,
            &root.gtid_state,
            &body,
        )
        .map_err(|source| EngineError::Checkpoint {
            context: format!("writing the checkpoint at LSN {}", root.lsn),
            source,
        })?;
        *last = Some(root.lsn);
        Ok(root.lsn)
    }

    /// LSN of the current checkpoint (None before the first).
    pub fn checkpoint_lsn(&self) -> Option<Lsn> {
        *self
            .checkpoint_lock
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// GTID state of the visible root (`@@gtid_binlog_pos` is the log's, see `Log::gtid_state`).
    pub fn gtid_state(&self) -> GtidState {
        self.shared.store.current().gtid_state.clone()
    }

    /// Stops the checkpoint scheduler, writes a final checkpoint and shuts the log down.
    /// Later commits and DDL fail with 1053.
    pub fn shutdown(&self) -> Result<(), EngineError> {
        if let Some(s) = self
            .scheduler
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
        {
            s.stop();
        }
        let r = self.checkpoint();
        self.shut_down.store(true, Ordering::Release);
        let _gate = self.commit_gate.write().unwrap_or_else(|p| p.into_inner());
        self.log
            .shutdown()
            .map_err(|e| EngineError::log("shutting the log down", e))?;
        r.map(|_| ())
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        if let Some(s) = self
            .scheduler
            .get_mut()
            .unwrap_or_else(|p| p.into_inner())
            .take()
        {
            s.stop();
        }
    }
}

/// MySQL identifiers: 1..=64 characters, no NUL, no trailing space.
pub(crate) fn check_identifier(name: &str) -> Result<(), EngineError> {
    if name.is_empty() || name.chars().count() > 64 || name.contains('\0') || name.ends_with(' ') {
        return Err(EngineError::BadIdentifier {
            name: name.to_string(),
        });
    }
    Ok(())
}

/// 1062 when `index` (already built in `root`) holds two entries with one non-NULL key.
fn check_unique_index(root: &Root, table: TableId, index: &IndexDef) -> Result<(), EngineError> {
    let Some(def) = root.catalog.table(table) else {
        return Ok(());
    };
    let Some(t) = root.table(table) else {
        return Ok(());
    };
    let mut prev: Option<Vec<u8>> = None;
    let mut keys: Vec<(Vec<u8>, &Arc<crate::store::Row>)> = Vec::new();
    for row in t.rows.values() {
        if index_has_null(index, row) {
            continue;
        }
        let mut k = Vec::new();
        index_key(def, index, row, &mut k);
        keys.push((k, row));
    }
    keys.sort_by(|a, b| a.0.cmp(&b.0));
    for (k, row) in &keys {
        if prev.as_ref() == Some(k) {
            let vals: Vec<&onelog_binlog::Value> = index.columns.iter().map(|&c| &row[c]).collect();
            return Err(EngineError::DuplicateKey {
                entry: display_values(&vals),
                key: index.name.clone(),
            });
        }
        prev = Some(k.clone());
    }
    Ok(())
}
