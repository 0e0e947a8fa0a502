//! The engine: opening and recovering a database, shutdown, and the accessors.
//!
//! Owns [`Engine`], [`EngineOptions`] and [`RecoveryReport`]. The engine's other mechanisms are
//! `impl Engine` blocks in their own modules, or types below this one: the commit path
//! (`commit.rs`, shared with `txn.rs`), DDL (`ddl.rs`), replica apply (`replica.rs`),
//! checkpoint scheduling (`scheduler.rs`) and log retention, i.e. PURGE, expiry and RESET
//! MASTER (`retention.rs`, with its settings in `expiry.rs`). This module imports the commit
//! path, the scheduler, `expiry.rs`, `semisync.rs` and `txn.rs`, never `ddl.rs`, `replica.rs`
//! or `retention.rs`.
//!
//! Layout of a data directory `dir`: `dir/binlog/` the log (its segments are the binlog),
//! `dir/checkpoints/` checkpoint files and their `control` file (`checkpoint.rs`); with the
//! paged table store ([`TableStore::Paged`]) the control file names the base instead, the
//! directory `dir/checkpoints/base/` (`base.rs`), and there are no checkpoint files. A data
//! directory of the in-memory store opened with the paged one is converted (its checkpoint
//! written into a new base, then the control file switched); a paged one opened with the
//! in-memory store is refused (no downgrade).
//!
//! Open (recovery): load the current checkpoint, or the base's root over the base (or start
//! empty), open the log (which cuts a
//! torn tail), replay every record from the checkpoint's LSN to the end of the log through
//! `apply.rs` — the same code a replica runs — then install the sink and, if asked, start the
//! background checkpoint scheduler. Everything on disk after open counts, durable or not: the
//! log has already decided what survived.
//!
//! Commit: see `commit.rs`. A commit is visible to other transactions before it is durable,
//! like InnoDB, unless the log runs with `LogOptions::strict_visibility`.
//!
//! DDL is an implicit commit, like MySQL: see `ddl.rs`. The engine's DDL methods do not commit
//! a session's open transaction: the SQL layer must commit it first (MySQL's implicit commit).
//!
//! Checkpoints (`scheduler.rs`) take the current root, never blocking commits. A failed
//! background checkpoint is retried with a backoff (`EngineOptions::checkpoint_backoff`) and
//! reported at once through the reporter the server installs ([`Engine::set_reporter`],
//! `report.rs`); so is the first error that shows the log in its failed state (e.g. an fsync
//! that returned EIO: the log never retries it and refuses every later write until a restart).
//!
//! Invariants: recovery replays records in LSN order from the checkpoint's LSN, so the
//! recovered root's LSN is at or after the checkpoint's and at or before the log's end; after
//! [`Engine::shutdown`] every commit and DDL fails with 1053.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use onelog_binlog::event::table_map::RowMetadata;
use onelog_binlog::{GtidPos, GtidState};
use onelog_log::{
    FileSystem, Log, LogOptions, Lsn, OpenReport, ReadStart, ReaderOptions, RecordKind,
};

use crate::apply::apply_record_with;
use crate::base::{Base, BaseError, BaseStats};
use crate::budget::{CheckpointHooks, DeltaBudget};
use crate::catalog::{Catalog, CatalogChange};
use crate::checkpoint::{
    load_checkpoint, read_control_any, remove_backup_images, remove_checkpoint_files,
    write_base_control, Control, CONTROL_FILE,
};
use crate::commit::Committer;
use crate::convert;
use crate::error::EngineError;
use crate::expiry::ExpirySettings;
use crate::lock::LockManager;
use crate::report::Reporter;
use crate::scheduler::{Backoff, Checkpointer, SchedulerTask};
use crate::semisync::SemiSync;
use crate::store::{Root, Snapshot, BASE_ROOT_META};
use crate::table_rebuild::{build_below, sweep_unclaimed};
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
    /// `binlog_row_metadata` at startup ([`Engine::set_binlog_row_metadata`] changes it).
    pub binlog_row_metadata: RowMetadata,
    /// Background checkpoint after this many log bytes (0: off).
    pub checkpoint_every_bytes: u64,
    /// Background checkpoint after this much time with log growth (0: off).
    pub checkpoint_every: Duration,
    pub background_checkpoints: bool,
    /// Waits between failed background checkpoints (1 s doubling to 60 s).
    pub checkpoint_backoff: Backoff,
    /// `binlog_expire_logs_seconds` at open (0: segments never expire by age); SET GLOBAL
    /// changes it later (`Engine::set_binlog_expire_logs_seconds`).
    pub binlog_expire_logs_seconds: u64,
    /// `max_binlog_total_size` at open in bytes (0: unlimited).
    pub max_binlog_total_size: u64,
    /// Where the tables are kept: a new data directory gets this store; an existing one of the
    /// in-memory store is converted to the paged one, a paged one is refused by the in-memory
    /// store.
    pub table_store: TableStore,
    /// Bytes of index entries CREATE INDEX over rows in the paged store's base sorts and
    /// writes at a time (`index_build.rs`; the role of InnoDB's `innodb_sort_buffer_size`).
    pub index_build_chunk_bytes: usize,
}

/// Where the engine keeps its tables (docs/PAGED_STORE.md).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TableStore {
    /// Every row in memory; a checkpoint writes them all to one file (the default).
    Memory,
    /// The paged store: each table's changes since the last checkpoint in memory over an
    /// on-disk base that only checkpoints write. The base is `checkpoints/base/` in the data
    /// directory unless `dir` names another (tests whose engine runs on a simulated file
    /// system: the base always uses real files). `memory_bytes` (the server's
    /// `innodb_buffer_pool_size`) is its memory budget: three quarters are the base's caches
    /// (fjall's block cache, and decoded rows in what it leaves: `row_cache.rs`), and a
    /// checkpoint starts after `memory_bytes / 20` of log (at least 4 MiB, at most
    /// `checkpoint_every_bytes`), which bounds the delta: it holds the rows changed by that
    /// much log, and while a checkpoint runs the frozen delta before it.
    Paged {
        dir: Option<PathBuf>,
        memory_bytes: u64,
    },
}

/// The base's block cache for a memory budget (`TableStore::Paged`).
fn paged_cache_bytes(memory_bytes: u64) -> u64 {
    memory_bytes / 4 * 3
}

/// The log bytes between checkpoints for a memory budget (`TableStore::Paged`), at most
/// `every_bytes` (0: none by size), before calibration (`budget.rs`): a row changed costs
/// sysbench's delta about 2.5 times its log bytes (docs/PAGED_STORE.md step 5), and commits
/// wait at twice this distance ([`paged_delta_limit`]), so the delta and the frozen layer
/// together stay near a quarter of the budget ([`paged_delta_memory`]), the quarter the base's
/// caches leave. Checkpoints then calibrate the limit to what the workload's log bytes cost,
/// never above this.
fn paged_checkpoint_bytes(memory_bytes: u64, every_bytes: u64) -> u64 {
    let by_budget = (memory_bytes / 20).max(4 << 20);
    if every_bytes == 0 {
        by_budget
    } else {
        by_budget.min(every_bytes)
    }
}

/// The log bytes after the newest checkpoint at which commits wait for one (the delta
/// budget's hard limit, `budget.rs`): twice the distance between checkpoints, so a commit
/// waits only when a checkpoint is running and the log has grown by another such distance
/// meanwhile.
fn paged_delta_limit(memory_bytes: u64, every_bytes: u64) -> u64 {
    paged_checkpoint_bytes(memory_bytes, every_bytes).saturating_mul(2)
}

/// The memory the delta and the frozen layer may hold at the delta budget's limit: the
/// quarter of the budget the base's caches leave (`budget.rs`, "Calibration").
fn paged_delta_memory(memory_bytes: u64) -> u64 {
    memory_bytes / 4
}

/// The paged store's counters and sizes ([`Engine::table_store_stats`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TableStoreStats {
    /// The base's reads, writes and sizes.
    pub base: BaseStats,
    /// Checkpoints written into the base since open, and the microseconds they took.
    pub checkpoints: u64,
    pub checkpoint_us: u64,
    /// Commits that waited for a checkpoint at the delta's limit, and the microseconds they
    /// waited (`budget.rs`).
    pub commit_waits: u64,
    pub commit_wait_us: u64,
    /// The delta's limit, and what it holds now, both in log bytes after the newest
    /// checkpoint.
    pub delta_limit: u64,
    pub delta_log_bytes: u64,
}

/// The base's directory name beside the control file.
const BASE_NAME: &str = "base";

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
            binlog_row_metadata: RowMetadata::NoLog,
            checkpoint_every_bytes: 64 << 20,
            checkpoint_every: Duration::from_secs(300),
            background_checkpoints: true,
            checkpoint_backoff: Backoff::default(),
            binlog_expire_logs_seconds: 0,
            max_binlog_total_size: 0,
            table_store: TableStore::Memory,
            index_build_chunk_bytes: 32 << 20,
        }
    }
}

/// What [`Engine::open`] found and did.
#[derive(Clone, Debug)]
pub struct RecoveryReport {
    /// LSN of the checkpoint loaded (None: none, started empty).
    pub checkpoint_lsn: Option<Lsn>,
    /// The in-memory store's checkpoint was converted into the paged store at this open
    /// (docs/PAGED_STORE.md, step 4).
    pub converted_to_paged: bool,
    /// Records of table rebuilds that no logged DDL claims, removed from the paged store's base
    /// (`table_rebuild.rs`: what a crash left of an ALTER TABLE that never committed, and of
    /// those replay writes again).
    pub unclaimed_records_removed: u64,
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
        if self.converted_to_paged {
            write!(
                f,
                "converted the in-memory store's checkpoint into the paged store, "
            )?;
        }
        match self.checkpoint_lsn {
            Some(l) => write!(f, "loaded checkpoint at LSN {l}")?,
            None => write!(f, "no checkpoint")?,
        }
        if self.unclaimed_records_removed > 0 {
            write!(
                f,
                ", removed {} records of unfinished table rebuilds",
                self.unclaimed_records_removed
            )?;
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

/// The engine. Shared as `Arc<Engine>`.
pub struct Engine {
    /// First field: dropped first, which stops the scheduler thread.
    checkpoints: Checkpointer,
    opts: EngineOptions,
    core: Arc<Committer>,
    next_txn: AtomicU64,
    expiry: ExpirySettings,
}

/// `EngineError::Io` for a file system operation on `p`.
fn io(what: &str, p: &Path, e: std::io::Error) -> EngineError {
    EngineError::Io {
        context: format!("{what} {}", p.display()),
        source: e,
    }
}

/// Step 1 of open: creates the data and checkpoint directories; returns the latter.
fn create_dirs(fs: &dyn FileSystem, opts: &EngineOptions) -> Result<PathBuf, EngineError> {
    fs.create_dir_all(&opts.dir)
        .map_err(|e| io("creating data directory", &opts.dir, e))?;
    let checkpoint_dir = opts.dir.join("checkpoints");
    fs.create_dir_all(&checkpoint_dir)
        .map_err(|e| io("creating checkpoint directory", &checkpoint_dir, e))?;
    Ok(checkpoint_dir)
}

/// What step 2 of open found: the root, the LSN of the checkpoint it came from, the base.
struct Loaded {
    root: Root,
    checkpoint_lsn: Option<Lsn>,
    base: Option<Arc<Base>>,
    /// The in-memory store's checkpoint was converted into the paged store.
    converted: bool,
}

/// Step 2 of open: the root of the current checkpoint (empty without one), its LSN, and the
/// paged store's base when the directory uses one (module docs).
fn load_root(
    fs: &dyn FileSystem,
    dir: &Path,
    store: &TableStore,
    chunk_bytes: usize,
) -> Result<Loaded, EngineError> {
    let checkpoint_error = |source| EngineError::Checkpoint {
        context: format!("loading the checkpoint in {}", dir.display()),
        source,
    };
    let control_path = dir.join(CONTROL_FILE);
    let control = if fs.exists(&control_path) {
        Some(read_control_any(fs, &control_path).map_err(checkpoint_error)?)
    } else {
        None
    };
    let refuse = |reason: String| EngineError::WrongTableStore {
        dir: dir.parent().unwrap_or(dir).to_path_buf(),
        reason,
    };
    let (base_name, memory_bytes, base_dir) = match (control, store) {
        (None | Some(Control::File { .. }), TableStore::Memory) => {
            let (root, lsn) = load_memory_root(fs, dir)?;
            return Ok(Loaded {
                root,
                checkpoint_lsn: lsn,
                base: None,
                converted: false,
            });
        }
        (
            Some(Control::File { .. }),
            TableStore::Paged {
                dir: d,
                memory_bytes,
            },
        ) => {
            let base_dir = d.clone().unwrap_or_else(|| dir.join(BASE_NAME));
            return convert_to_paged(fs, dir, &base_dir, (*memory_bytes, chunk_bytes));
        }
        (Some(Control::Base { name }), TableStore::Memory) => {
            return Err(refuse(format!(
                "it keeps its tables in the paged table store ({name}); start with \
                 --table-store=paged"
            )));
        }
        (
            Some(Control::Base { name }),
            TableStore::Paged {
                dir: d,
                memory_bytes,
            },
        ) => (name, *memory_bytes, d.clone()),
        (
            None,
            TableStore::Paged {
                dir: d,
                memory_bytes,
            },
        ) => {
            write_base_control(fs, dir, BASE_NAME).map_err(checkpoint_error)?;
            (BASE_NAME.to_string(), *memory_bytes, d.clone())
        }
    };
    let base_dir = base_dir.unwrap_or_else(|| dir.join(&base_name));
    // No backup runs yet: an image here is what a crash during one left.
    remove_backup_images(fs, dir);
    let base = Base::open(&base_dir, paged_cache_bytes(memory_bytes))?;
    let snapshot = base.snapshot();
    let meta = snapshot.meta(BASE_ROOT_META)?;
    let (root, lsn) = match meta {
        Some(m) => {
            let root = Root::over_base(&m, snapshot).map_err(|e| {
                EngineError::Store(BaseError {
                    dir: base_dir.clone(),
                    doing: "reading the root record",
                    detail: e.to_string(),
                })
            })?;
            let lsn = root.lsn;
            (root, Some(lsn))
        }
        None => (Root::empty(), None),
    };
    Ok(Loaded {
        root,
        checkpoint_lsn: lsn,
        base: Some(Arc::new(base)),
        converted: false,
    })
}

/// [`load_root`] of a data directory of the in-memory store opened with the paged one
/// (docs/PAGED_STORE.md, step 4): its checkpoint is written into a new base in `base_dir` a
/// part at a time (`convert.rs`; anything there before is removed: until the control file
/// names it, a base is not authoritative), then the control file switches to naming the base
/// (the commit point: a crash before it leaves the in-memory store's directory as it was,
/// and the next open converts again), and the checkpoint files are removed. The log is not
/// touched.
fn convert_to_paged(
    fs: &dyn FileSystem,
    dir: &Path,
    base_dir: &Path,
    (memory_bytes, chunk_bytes): (u64, usize),
) -> Result<Loaded, EngineError> {
    let ckpt = convert::open_checkpoint(fs, dir)?;
    match std::fs::remove_dir_all(base_dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io("removing the unfinished table store", base_dir, e)),
    }
    let base = Base::open(base_dir, paged_cache_bytes(memory_bytes))?;
    let (root, lsn) = match &ckpt {
        Some(ckpt) => (convert::convert(ckpt, &base, chunk_bytes)?, Some(ckpt.lsn)),
        None => (Root::empty(), None),
    };
    drop(ckpt);
    let checkpoint_error = |source| EngineError::Checkpoint {
        context: format!("switching {} to the paged table store", dir.display()),
        source,
    };
    write_base_control(fs, dir, BASE_NAME).map_err(checkpoint_error)?;
    remove_checkpoint_files(fs, dir);
    Ok(Loaded {
        root,
        checkpoint_lsn: lsn,
        base: Some(Arc::new(base)),
        converted: true,
    })
}

/// [`load_root`] of a data directory whose tables are all in memory.
fn load_memory_root(fs: &dyn FileSystem, dir: &Path) -> Result<(Root, Option<Lsn>), EngineError> {
    let loaded = load_checkpoint(fs, dir).map_err(|source| EngineError::Checkpoint {
        context: format!("loading the checkpoint in {}", dir.display()),
        source,
    })?;
    let checkpoint_lsn = loaded.as_ref().map(|c| c.lsn);
    let root = match loaded {
        Some(c) => Root::decode_checkpoint(&c.body, c.lsn, c.gtid_state).map_err(|e| {
            EngineError::corrupt(
                format!("checkpoint {} (LSN {})", c.path.display(), c.lsn),
                e,
            )
        })?,
        None => Root::empty(),
    };
    debug_assert_eq!(checkpoint_lsn.unwrap_or(root.lsn), root.lsn);
    Ok((root, checkpoint_lsn))
}

/// Step 3 of open: the log options with `log.dir` resolved against the data directory.
fn log_options(opts: &EngineOptions) -> LogOptions {
    let mut log_opts = opts.log.clone();
    if log_opts.dir.as_os_str().is_empty() {
        log_opts.dir = opts.dir.join("binlog");
    } else if log_opts.dir.is_relative() {
        log_opts.dir = opts.dir.join(&log_opts.dir);
    }
    log_opts
}

/// Step 4 of open: applies every record of `log` after `root.lsn` to `root` (through
/// `apply.rs`, as a replica does); returns how many. With the paged store's `base`, an index
/// that a DDL record adds over rows in the base is built there in chunks of `chunk_bytes`
/// (`index_build.rs`: the entries a build before the crash wrote are deleted and written
/// again), and a table a DDL record rewrites (ADD / DROP COLUMN, a copying ALTER TABLE) is
/// written there under a new storage id (`table_rebuild.rs`), not in memory.
fn replay(
    log: &Log,
    root: &mut Root,
    base: Option<&Base>,
    chunk_bytes: usize,
) -> Result<u64, EngineError> {
    let mut ddl = |root: &mut Root, change: &CatalogChange| match base {
        Some(base) => build_below(root, base, None, change, chunk_bytes),
        None => Ok(false),
    };
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
        let rec = reader
            .next()
            .map_err(|e| EngineError::log(format!("replaying the log at LSN {}", root.lsn), e))?;
        let Some(rec) = rec else { break };
        if rec.kind == RecordKind::GtidState {
            continue;
        }
        debug_assert!(rec.lsn >= root.lsn, "replay went backwards");
        apply_record_with(
            root,
            (&rec.events, &rec.aux),
            rec.gtid,
            (rec.lsn, rec.end_lsn),
            &mut ddl,
        )?;
        records_applied += 1;
    }
    // GTID state records and the log's own state are authoritative for what follows.
    root.gtid_state = log.gtid_state();
    Ok(records_applied)
}

impl Engine {
    /// Opens (creating if needed) the database in `opts.dir` and recovers it.
    pub fn open(
        fs: Arc<dyn FileSystem>,
        opts: EngineOptions,
    ) -> Result<(Arc<Engine>, RecoveryReport), EngineError> {
        let checkpoint_dir = create_dirs(&*fs, &opts)?;
        let Loaded {
            mut root,
            checkpoint_lsn,
            base,
            converted,
        } = load_root(
            &*fs,
            &checkpoint_dir,
            &opts.table_store,
            opts.index_build_chunk_bytes,
        )?;
        // Before replay: what a rebuild wrote before a crash, replay writes again (or the DDL
        // was never logged).
        let unclaimed_records_removed = match &base {
            Some(base) => sweep_unclaimed(&root, base, opts.index_build_chunk_bytes)?,
            None => 0,
        };
        let (log, log_report) = Log::open(fs.clone(), log_options(&opts))
            .map_err(|e| EngineError::log("opening the log", e))?;
        let records_applied = replay(
            &log,
            &mut root,
            base.as_deref(),
            opts.index_build_chunk_bytes,
        )?;
        let budget = match (&opts.table_store, &base) {
            (TableStore::Paged { memory_bytes, .. }, Some(base)) => {
                Some(Arc::new(DeltaBudget::new(
                    paged_delta_limit(*memory_bytes, opts.checkpoint_every_bytes),
                    paged_delta_memory(*memory_bytes),
                    base.dir().to_path_buf(),
                    checkpoint_lsn.unwrap_or(0),
                )))
            }
            _ => None,
        };
        let core = Arc::new(Committer::new(
            root,
            log,
            opts.domain_id,
            opts.server_id,
            opts.lock_wait_timeout,
            opts.binlog_row_metadata,
            budget,
        ));
        let engine = Arc::new(Engine {
            core,
            checkpoints: Checkpointer::new(fs, checkpoint_dir, checkpoint_lsn, base),
            next_txn: AtomicU64::new(1),
            expiry: ExpirySettings::new(
                opts.binlog_expire_logs_seconds,
                opts.max_binlog_total_size,
            ),
            opts,
        });
        if let Some(b) = engine.core.budget() {
            let (w1, w2) = (Arc::downgrade(&engine), Arc::downgrade(&engine));
            b.set_checkpoints(CheckpointHooks {
                request: Box::new(move || {
                    if let Some(e) = w1.upgrade() {
                        e.checkpoints.request();
                    }
                }),
                last_error: Box::new(move || w2.upgrade().and_then(|e| e.checkpoints.last_error())),
            });
        }
        if engine.opts.background_checkpoints {
            engine.start_scheduler();
            // The paged store's delta holds every record recovery replayed: a checkpoint
            // soon takes them to the base, where waiting for the log to grow again would not.
            if engine.paged() && records_applied > 0 {
                engine.checkpoints.request();
            }
        }
        let report = RecoveryReport {
            checkpoint_lsn,
            converted_to_paged: converted,
            unclaimed_records_removed,
            records_applied,
            log: log_report,
        };
        Ok((engine, report))
    }

    /// Step 5 of open: the background checkpoint scheduler, holding the engine weakly (a
    /// dropped engine stops it). Its housekeeping is log expiry (`retention.rs`; a failure is
    /// reported there).
    fn start_scheduler(self: &Arc<Self>) {
        let weak: Weak<Engine> = Arc::downgrade(self);
        let weak2 = weak.clone();
        let log = self.core.log().clone();
        let notifier = self.core.notifier().clone();
        self.checkpoints.start_scheduler(SchedulerTask {
            end_lsn: Box::new(move || log.end_lsn()),
            every_bytes: match self.core.budget() {
                None => {
                    let every = self.opts.checkpoint_every_bytes;
                    Box::new(move || every)
                }
                Some(budget) => {
                    let budget = budget.clone();
                    Box::new(move || budget.checkpoint_bytes())
                }
            },
            every: self.opts.checkpoint_every,
            backoff: self.opts.checkpoint_backoff,
            run: Box::new(move || match weak.upgrade() {
                Some(e) => e.checkpoint().map_err(|err| {
                    // What the failed attempt left behind (`EngineEvent::CheckpointFailed`):
                    // fjall keeps a failed ingestion's table files until it next opens.
                    let left = match e.checkpoints.base() {
                        None => "its temporary file was removed",
                        Some(_) => {
                            "table files of a failed write stay unused until the server next \
                             starts"
                        }
                    };
                    format!("{err}; {left}")
                }),
                None => Err("engine closed".to_string()),
            }),
            report: Box::new(move |ev| notifier.report(ev)),
            housekeeping: Box::new(move || {
                if let Some(e) = weak2.upgrade() {
                    let _ = e.expire_logs();
                }
            }),
            // Only the paged store's commits wait for checkpoints (its delta budget), so only
            // its base's disk is watched for freed space.
            free_bytes: match self.checkpoints.base() {
                Some(base) => {
                    let base = base.clone();
                    Box::new(move || base.free_bytes())
                }
                None => Box::new(|| None),
            },
        });
    }

    /// Starts a transaction.
    pub fn begin(self: &Arc<Self>) -> Transaction {
        Transaction::new(
            self.core.clone(),
            self.next_txn.fetch_add(1, Ordering::Relaxed),
        )
    }

    /// The latest catalog.
    pub fn catalog(&self) -> Arc<Catalog> {
        self.core.store().current().catalog.clone()
    }

    /// Big commits (issue 14 part 3) whose tables were prebuilt while their record was written
    /// and installed at its turn, and those applied from their change log instead because a
    /// commit in between had changed one of their tables.
    pub fn prebuilt_commits(&self) -> (u64, u64) {
        self.core.prebuilt_commits()
    }

    /// DDL statements whose root, built once to validate them, was published as it was
    /// (the sink did not apply them a second time: `commit.rs`, `CommitPayload::Ddl`).
    pub fn validated_ddl(&self) -> u64 {
        self.core.validated_ddl()
    }

    /// Replicated row groups applied by publishing the root the sink's admission built for
    /// them (not applied a second time: `commit.rs`, `Admitted`).
    pub fn admitted_applied(&self) -> u64 {
        self.core.admitted_applied()
    }

    /// The latest visible state.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot::new(self.core.store().current())
    }

    pub fn log(&self) -> &Arc<Log> {
        self.core.log()
    }

    /// Semi-sync replication, primary side (`semisync.rs`): settings, status, and the API the
    /// binlog dump threads call (`add_client`, `wants_ack`, `ack`).
    pub fn semisync(&self) -> &SemiSync {
        self.core.semisync()
    }

    pub fn options(&self) -> &EngineOptions {
        &self.opts
    }

    /// Whether the tables are in the paged store (`TableStore::Paged`) rather than all in
    /// memory.
    pub fn paged(&self) -> bool {
        matches!(self.opts.table_store, TableStore::Paged { .. })
    }

    /// The row lock manager (tests, `SHOW ENGINE STATUS`).
    pub fn locks(&self) -> &LockManager {
        self.core.locks()
    }

    /// Why a committed record could not be applied to the store, if that ever happened (a bug).
    pub fn apply_failure(&self) -> Option<String> {
        self.core.apply_failure()
    }

    /// Installs the reporter that receives [`EngineEvent`](crate::EngineEvent)s from now on (replacing any
    /// previous one). A log that already failed is reported to it at once.
    /// `binlog_row_metadata`: the optional metadata the Table_map events of the transactions
    /// committed from now on carry (MariaDB's `SET GLOBAL binlog_row_metadata`).
    pub fn binlog_row_metadata(&self) -> RowMetadata {
        self.core.row_metadata()
    }

    /// Sets `binlog_row_metadata` for the transactions committed from now on.
    pub fn set_binlog_row_metadata(&self, m: RowMetadata) {
        self.core.set_row_metadata(m);
    }

    /// `binlog_cache_size` and `max_binlog_cache_size` (bytes) of the transactions started
    /// from now on (`event_cache.rs`).
    pub fn binlog_cache_limits(&self) -> crate::event_cache::CacheLimits {
        self.core.cache_stats().limits()
    }

    /// Sets `binlog_cache_size`: the bytes of a transaction's events kept in memory before
    /// they spill to a temporary file (transactions started from now on).
    pub fn set_binlog_cache_size(&self, bytes: u64) {
        self.core.cache_stats().set_memory(bytes);
    }

    /// Sets `max_binlog_cache_size`: the most bytes of events a transaction may make (1197
    /// past it; transactions started from now on).
    pub fn set_max_binlog_cache_size(&self, bytes: u64) {
        self.core.cache_stats().set_max(bytes);
    }

    /// `(Binlog_cache_use, Binlog_cache_disk_use)`: transactions whose event cache held
    /// events when they committed or rolled back, and those of them whose cache spilled to
    /// a temporary file.
    pub fn binlog_cache_use(&self) -> (u64, u64) {
        let c = self.core.cache_stats();
        (
            c.uses.load(std::sync::atomic::Ordering::Relaxed),
            c.disk_uses.load(std::sync::atomic::Ordering::Relaxed),
        )
    }

    /// The directory spilled event caches go to (`tmpdir`; the process's temporary
    /// directory until set).
    pub fn set_binlog_cache_dir(&self, dir: &std::path::Path) {
        self.core.cache_stats().set_dir(dir);
    }

    pub fn set_reporter(&self, reporter: Reporter) {
        self.core.notifier().install(reporter, self.core.log());
    }

    /// The background checkpointer's last error.
    pub fn checkpoint_error(&self) -> Option<String> {
        self.checkpoints.last_error()
    }

    /// The commit path (for the `impl Engine` blocks of `ddl.rs`, `replica.rs`, `retention.rs`).
    pub(crate) fn core(&self) -> &Committer {
        &self.core
    }

    /// The live expiry settings (`expiry.rs`).
    pub(crate) fn expiry(&self) -> &ExpirySettings {
        &self.expiry
    }

    /// The engine's backup holds (`backup.rs`; kept by the checkpoint writer).
    pub(crate) fn backup_holds(&self) -> &std::sync::Arc<crate::backup_hold::BackupHolds> {
        self.checkpoints.backups()
    }

    /// The checkpoint writer (for `origin.rs`).
    pub(crate) fn checkpoints(&self) -> &Checkpointer {
        &self.checkpoints
    }

    /// Writes a checkpoint of the current root; returns its LSN. Never blocks commits.
    pub fn checkpoint(&self) -> Result<Lsn, EngineError> {
        self.checkpoints.write(&self.core, false)
    }

    /// The paged store's counters and sizes (SHOW GLOBAL STATUS); None for the in-memory
    /// store.
    pub fn table_store_stats(&self) -> Option<TableStoreStats> {
        let base = self.checkpoints.base()?;
        let (checkpoints, checkpoint_us) = self.checkpoints.base_writes();
        let (commit_waits, commit_wait_us, delta_limit) =
            self.core.budget().map_or((0, 0, 0), |b| {
                let (n, us) = b.waits();
                (n, us, b.hard_bytes())
            });
        let delta_log_bytes = self
            .core
            .log()
            .end_lsn()
            .saturating_sub(self.checkpoints.lsn().unwrap_or(0));
        Some(TableStoreStats {
            base: base.stats(),
            checkpoints,
            checkpoint_us,
            commit_waits,
            commit_wait_us,
            delta_limit,
            delta_log_bytes,
        })
    }

    /// LSN of the current checkpoint (None before the first).
    pub fn checkpoint_lsn(&self) -> Option<Lsn> {
        self.checkpoints.lsn()
    }

    /// GTID state of the visible root (`@@gtid_binlog_pos` is the log's, see `Log::gtid_state`).
    pub fn gtid_state(&self) -> GtidState {
        self.core.store().current().gtid_state.clone()
    }

    /// Stops the checkpoint scheduler, writes a final checkpoint and shuts the log down.
    /// Later commits and DDL fail with 1053.
    pub fn shutdown(&self) -> Result<(), EngineError> {
        self.checkpoints.stop_scheduler();
        let r = self.checkpoint();
        self.core.shut_down();
        let _gate = self.core.exclusive();
        self.core
            .log()
            .shutdown()
            .map_err(|e| EngineError::log("shutting the log down", e))?;
        r.map(|_| ())
    }
}
