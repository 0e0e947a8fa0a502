//! The commit path: what transactions, DDL and replica apply share to get a record logged and
//! applied.
//!
//! Owns [`Committer`] (the store, the row locks, the log, the commit gate, the AUTO_INCREMENT
//! counters, the shutdown flag and the [`Notifier`]) and the log's [`GroupSink`] implementation,
//! which turns committed log records into a new published root. It sits below `txn.rs` (a
//! `Transaction` holds an `Arc<Committer>`) and below `engine.rs`, `ddl.rs`,
//! `replica.rs` and `retention.rs`, and imports none of them.
//!
//! Commit: a transaction's change log, already encoded into its event cache while its
//! statements ran (`event_cache.rs`), is finished into an event group (GTID and Xid added) and
//! handed to `Log::commit` with the change log as payload; a replica's row group is encoded
//! at once (`events.rs`). The group-commit leader calls the sink once
//! per group: the sink applies every record of the group in log order to a clone of the
//! current root, publishes it once, then releases each transaction's row locks — except a big
//! transaction's ([`big_change_log`]), whose own thread releases them once its record is
//! published (`Committer::finish_commit`), so that a million of them do not hold up the
//! leader and every commit queued behind it. The sink runs
//! after the group is written but (unless `LogOptions::strict_visibility`) before it is
//! durable: a commit becomes visible to other transactions before its fsync, like InnoDB, so a
//! crash can lose a commit that a reader saw; the committing client is still acknowledged only
//! once the log says it is durable (level 1). With `strict_visibility` the sink runs after the
//! sync.
//!
//! A big transaction's record ([`big_change_log`]) carries the new
//! versions of its tables, built on a thread of its own while it ran and while its record was
//! written (`prebuild.rs`): the sink installs them instead of applying the change log when
//! those tables are still the versions the prebuild started from, which gives the same root;
//! its change log and the table versions it replaced are freed off the commit path. The old
//! root a publish replaces is always dropped outside the store's lock.
//!
//! Semi-sync (`semisync.rs`, owned here as `Shared::semi`): while it is enabled the sink
//! registers each record's end with it, and while its status is ON with `AFTER_SYNC` the sink
//! HOLDS the group back instead of applying it (`Shared::hold`, log order; every later group is
//! held behind it, so visibility stays in log order) — the log itself keeps writing and syncing
//! later groups. Once `Log::commit` has returned, each committer runs
//! [`Committer::finish_commit`]: `AFTER_SYNC` waits for the replica's ack, then applies the
//! held-back groups up to its own record; `AFTER_COMMIT` makes them visible first, then waits.
//! A held group keeps its row locks until it is applied (a big transaction's, until its own
//! committer has applied it in `finish_commit`). While semi-sync is disabled and nothing
//! is held back, each costs one atomic load in the sink and in the committer.
//!
//! Replicas: a replicated row group is committed without row locks and without waiting for
//! its sync ([`Committer::commit_replicated_record`]); the sink's `admit` checks it against
//! the latest root plus the records queued before it in its batch, under the writer lock, and
//! refuses it (and every later replicated group, until the replica clears the refusal) when it
//! does not apply, so the log never holds a record the data cannot take. The root that check
//! builds for a batch of only replicated groups (`Admitted`) is what their apply publishes,
//! when it starts from the same root. Records marked replicated (the payload's `replicated`,
//! `aux`'s marker) move `gtid_slave_pos` in the root they publish.
//! The origin of a commit (its GTID's domain, server id and fixed seq_no, the replicated mark)
//! comes from the thread's scope (`origin.rs`), else this server's next GTID.
//!
//! Invariants:
//! - DDL and commits are ordered by the commit gate: commits hold it shared
//!   ([`Committer::commit_changes`]), DDL and replica apply exclusively ([`Committer::exclusive`],
//!   whose guard [`Committer::log_exclusive`] requires), so no commit is logged between a DDL's
//!   validation and its record.
//! - A transaction commits only if every table it wrote still has the generation its writes
//!   were based on (checked under the shared gate), so every logged row change applies.
//! - The sink applies records in log order: each record starts at or after the root's LSN, ends
//!   after it starts, and the published root's LSN never goes backwards; a local commit's GTID
//!   has a sequence number above every earlier one of its domain (GTIDs are monotonic per
//!   domain; a replicated group keeps the GTID it came with).
//! - A transaction's row locks are released only after its changes were published (or, on a
//!   failed commit, by the transaction itself, since nothing was applied).
//! - Held-back groups are applied in log order, and only under the `hold` mutex; `held_back`
//!   is true exactly while `hold` is not empty. After `finish_commit(end)` the published root
//!   is at or past `end` (asserted).

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};

use onelog_binlog::event::table_map::RowMetadata;
use std::sync::{Arc, Mutex, OnceLock, RwLock, RwLockWriteGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use onelog_log::{
    CommitReceipt, CommittedRecord, GroupSink, GtidAssign, Log, LogError, Lsn, PendingRecord,
    RecordKind,
};

use crate::budget::DeltaBudget;
use crate::catalog::{Catalog, CatalogChange, TableId};
use crate::error::EngineError;
use crate::event_cache::{CacheStats, EventCache, Stamp};
use crate::events::transaction_gtid;
use crate::lock::{LockManager, TxnId};
use crate::prebuild::{big_change_log, drop_later, Feed, Prebuild};
use crate::report::Notifier;
use crate::semisync::{CommitWaiter, SemiSync, WaitPoint};
use crate::store::{Root, RowChange, Store};

/// What a log record carries to the sink.
// A DDL's change (a whole table definition) is bigger than the rows variant; DDL is rare and
// the payload moves once, so it is not boxed.
#[allow(clippy::large_enum_variant)]
pub(crate) enum CommitPayload {
    /// A transaction's change log (`txn`: whose locks to release; None for replicated groups
    /// applied without row locks, which the sink admits first: [`Sink::admit`]).
    Rows {
        txn: Option<TxnId>,
        changes: Arc<Vec<RowChange>>,
        /// Moves `gtid_slave_pos` (a replica applied it).
        replicated: bool,
        /// The touched tables with `changes` applied, built while the record is written
        /// (big transactions only: `prebuild.rs`).
        prebuilt: Option<Arc<Prebuild>>,
    },
    Ddl {
        change: CatalogChange,
        /// Rows inserted into the table the change creates (`CREATE TABLE ... SELECT`,
        /// `ctas.rs`); empty for other DDL.
        rows: Vec<RowChange>,
        replicated: bool,
        /// The root the DDL validated by applying the change to a copy of the root it was
        /// logged after (`ddl.rs`): the sink publishes it instead of applying the change a
        /// second time, when it applies the record to that very root. A table the change
        /// rebuilds (CREATE INDEX, a copying ALTER) is then built once, not twice.
        validated: Option<Box<Validated>>,
    },
}

/// [`CommitPayload::Ddl::validated`]: the change applied to `based_on`.
pub(crate) struct Validated {
    pub based_on: Arc<Root>,
    pub result: Root,
}

/// Adds to a DDL `record` ([`ResolvedOrigin::ddl_record`]'s) that its change was applied to
/// `based_on` (the current root, under the exclusive gate) giving `result`
/// ([`CommitPayload::Ddl::validated`]).
pub(crate) fn attach_validated(record: &mut PendingRecord, based_on: Arc<Root>, result: Root) {
    let payload = record
        .payload
        .as_mut()
        .and_then(|p| p.downcast_mut::<CommitPayload>());
    if let Some(CommitPayload::Ddl { validated, .. }) = payload {
        *validated = Some(Box::new(Validated { based_on, result }));
    }
}

impl CommitPayload {
    /// A change log big enough to have been prebuilt (`prebuild.rs`).
    fn big(&self) -> bool {
        matches!(self, CommitPayload::Rows { changes, .. } if big_change_log(changes.len()))
    }

    fn replicated(&self) -> bool {
        match self {
            CommitPayload::Rows { replicated, .. } | CommitPayload::Ddl { replicated, .. } => {
                *replicated
            }
        }
    }
}

/// State shared with the log's sink.
struct Shared {
    store: Store,
    locks: LockManager,
    /// First failure to apply a committed record (a bug, or a failed read of the paged
    /// store's base: the log has it, the store does not).
    /// Once set, commits, DDL, checkpoints and backup images are refused
    /// ([`Committer::refuse_after_apply_failure`]).
    apply_failure: OnceLock<String>,
    semi: SemiSync,
    /// Groups logged but not yet visible (semi-sync AFTER_SYNC), in log order.
    hold: Mutex<VecDeque<Vec<CommittedRecord>>>,
    /// True while `hold` is not empty (set and cleared under its mutex).
    held_back: AtomicBool,
    /// Bumped (and `slave_pos_cv` notified) whenever a published root moved
    /// `gtid_slave_pos`: MASTER_GTID_WAIT waits on it.
    slave_pos_version: Mutex<u64>,
    slave_pos_cv: std::sync::Condvar,
    /// Set when the sink refused a replicated row group: every later one is refused too
    /// (they were queued behind it and may depend on it) until the replica, having stopped or
    /// retried it, clears it ([`Committer::clear_replica_refusal`]).
    replica_refused: AtomicBool,
    /// Big commits whose prebuilt tables were installed, and those applied instead
    /// (`prebuild.rs`).
    prebuilt: [AtomicU64; 2],
    /// DDL records whose validated root was published as it was (`CommitPayload::Ddl`).
    validated_ddl: AtomicU64,
    /// The root the sink's admission of the last batch of only replicated row groups left
    /// (taken by the next apply, which publishes it when the group starts with that batch).
    admitted: Mutex<Option<Admitted>>,
    /// Replicated row groups whose admitted root was published without applying them again.
    admitted_applied: AtomicU64,
}

impl Shared {
    fn note_apply_failure(&self, rec: &CommittedRecord, e: String) {
        // The first failure is the one kept.
        let _ = self.apply_failure.set(format!(
            "GTID {} at LSN {}: {e}",
            rec.receipt.gtid, rec.receipt.lsn
        ));
    }
}

struct Sink(Arc<Shared>);

/// What the admission of a batch of only replicated row groups computed (`Sink::admit`): the
/// root they leave when applied in order to `based_on`, and their change lists, by which the
/// apply recognises the batch at the start of its group (`Shared::apply`).
struct Admitted {
    based_on: Arc<Root>,
    root: Root,
    changes: Vec<Arc<Vec<RowChange>>>,
}

impl Admitted {
    /// How many records at the start of `group` are the admitted batch (its whole length), when
    /// the group starts from `start`; else 0.
    fn covers(&self, start: &Arc<Root>, group: &[CommittedRecord]) -> usize {
        let n = self.changes.len();
        let same = Arc::ptr_eq(&self.based_on, start)
            && group.len() >= n
            && group.iter().zip(&self.changes).all(|(rec, admitted)| {
                matches!(
                    rec.payload.as_ref().and_then(|p| p.downcast_ref::<CommitPayload>()),
                    Some(CommitPayload::Rows { changes, txn: None, prebuilt: None, .. })
                        if Arc::ptr_eq(changes, admitted)
                )
            });
        if same {
            n
        } else {
            0
        }
    }
}

/// A replicated row group, committed without row locks (the sink's `admit` checks it).
fn unlocked(r: &PendingRecord) -> bool {
    matches!(
        r.payload
            .as_ref()
            .and_then(|p| p.downcast_ref::<CommitPayload>()),
        Some(CommitPayload::Rows { txn: None, .. })
    )
}

impl GroupSink for Sink {
    /// Replicated row groups applied without row locks are checked against the latest root
    /// plus the records before them in the batch (their changes must apply, or the log would
    /// hold a record the data cannot take); a refused one refuses every later replicated one
    /// of the batch too, so a replica's groups never get logged out of their order.
    fn admit(&self, batch: &[PendingRecord]) -> Vec<(usize, String)> {
        if !self.needs_applied(batch) {
            return Vec::new();
        }
        let based_on = self.0.store.current();
        let mut scratch = (*based_on).clone();
        let mut refused = Vec::new();
        let mut failed = self.0.replica_refused.load(Ordering::Acquire);
        let mut admitted = Vec::with_capacity(batch.len());
        for (i, rec) in batch.iter().enumerate() {
            let payload = rec
                .payload
                .as_ref()
                .and_then(|p| p.downcast_ref::<CommitPayload>());
            let result = match payload {
                Some(CommitPayload::Rows { changes, .. }) => {
                    admitted.push(changes.clone());
                    changes.iter().try_for_each(|c| scratch.apply_row_change(c))
                }
                Some(CommitPayload::Ddl { change, rows, .. }) => scratch
                    .apply_catalog_change(change)
                    .map_err(|e| e.to_string())
                    .and_then(|()| rows.iter().try_for_each(|c| scratch.apply_row_change(c))),
                None => Ok(()),
            };
            if unlocked(rec) && (failed || result.is_err()) {
                let why = match result {
                    Err(e) if !failed => e,
                    _ => "an earlier replicated transaction was refused".to_string(),
                };
                failed = true;
                refused.push((i, why));
            }
        }
        if failed {
            self.0.replica_refused.store(true, Ordering::Release);
        }
        // A batch of only replicated row groups that all applied: its apply publishes this
        // root instead of applying the changes a second time.
        let keep = !failed && admitted.len() == batch.len() && batch.iter().all(unlocked);
        *self.0.admitted.lock().unwrap_or_else(|p| p.into_inner()) = keep.then(|| Admitted {
            based_on,
            root: scratch,
            changes: admitted,
        });
        refused
    }

    /// Only replicated row groups (no row locks) are judged against the applied state.
    fn needs_applied(&self, batch: &[PendingRecord]) -> bool {
        batch.iter().any(unlocked)
    }

    /// A big transaction's record (it may wait for its prebuilt tables, or apply a million
    /// changes) and a DDL's (it may rebuild a table) are applied after their sync by their
    /// leader, never during an fsync where they would delay the next one.
    fn early_apply(&self, record: &CommittedRecord) -> bool {
        match record
            .payload
            .as_ref()
            .and_then(|p| p.downcast_ref::<CommitPayload>())
        {
            Some(CommitPayload::Ddl { .. }) => false,
            Some(rows) => !rows.big(),
            None => true,
        }
    }

    fn apply_group(&self, group: &mut [CommittedRecord]) {
        let shared = &self.0;
        // Semi-sync off and nothing held back: the one atomic load of each (module docs).
        if !shared.semi.is_enabled() && !shared.held_back.load(Ordering::Acquire) {
            shared.apply(group);
            return;
        }
        shared.apply_or_hold_back(group);
    }
}

impl Shared {
    /// Applies `group` (records in log order) to a clone of the current root, publishes it,
    /// then releases the row locks of its transactions.
    fn apply(&self, group: &mut [CommittedRecord]) {
        let start = self.store.current();
        // The admission's root, when the group starts with the batch it was computed for.
        let admitted = self
            .admitted
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
            .map(|a| (a.covers(&start, group), a))
            .filter(|(n, _)| *n > 0);
        let (mut root, admitted_n) = match admitted {
            Some((n, a)) => {
                self.admitted_applied.fetch_add(n as u64, Ordering::Relaxed);
                (a.root, n)
            }
            None => ((*start).clone(), 0),
        };
        let start_lsn = root.lsn;
        let mut release = Vec::with_capacity(group.len());
        let mut moved_slave_pos = false;
        // Big change logs, dropped with the old root (and the old table versions they
        // replaced) on a thread of their own once the locks are released (`Vec::new` does
        // not allocate: small groups cost nothing more).
        let mut big = Vec::new();
        for (i, rec) in group.iter_mut().enumerate() {
            debug_assert!(
                rec.receipt.lsn >= root.lsn && rec.receipt.end_lsn > rec.receipt.lsn,
                "record [{}, {}) applied out of log order (root at {})",
                rec.receipt.lsn,
                rec.receipt.end_lsn,
                root.lsn
            );
            let mut payload = rec
                .payload
                .take()
                .and_then(|p| p.downcast::<CommitPayload>().ok());
            let result = match payload.as_deref_mut() {
                Some(CommitPayload::Rows {
                    txn,
                    changes,
                    prebuilt,
                    ..
                }) => {
                    if let Some(t) = txn.filter(|_| !big_change_log(changes.len())) {
                        release.push(t);
                    }
                    let installed = prebuilt.as_ref().map(|p| p.install(&mut root));
                    if let Some(i) = installed {
                        self.prebuilt[usize::from(!i)].fetch_add(1, Ordering::Relaxed);
                    }
                    if installed == Some(true) || i < admitted_n {
                        // Installed, or already in the admission's root.
                        Ok(())
                    } else {
                        changes.iter().try_for_each(|c| root.apply_row_change(c))
                    }
                }
                Some(CommitPayload::Ddl {
                    change,
                    rows,
                    validated,
                    ..
                }) => {
                    // Validated on exactly the root this group starts from: its result.
                    let validated = validated
                        .take()
                        .filter(|v| i == 0 && Arc::ptr_eq(&v.based_on, &start));
                    if let Some(v) = validated {
                        root = v.result;
                        self.validated_ddl.fetch_add(1, Ordering::Relaxed);
                        Ok(())
                    } else {
                        root.apply_catalog_change(change)
                            .map_err(|e| e.to_string())
                            .and_then(|()| rows.iter().try_for_each(|c| root.apply_row_change(c)))
                    }
                }
                None => Err("record without the engine's payload".to_string()),
            };
            if let Err(e) = result {
                self.note_apply_failure(rec, e);
            }
            if payload.as_deref().is_some_and(CommitPayload::replicated) {
                root.slave_pos.set(rec.receipt.gtid);
                moved_slave_pos = true;
            }
            root.gtid_state.record(rec.receipt.gtid);
            root.lsn = rec.receipt.end_lsn;
            if payload.as_deref().is_some_and(CommitPayload::big) {
                big.push(payload);
            }
        }
        debug_assert!(root.lsn >= start_lsn);
        drop(start);
        let old = self.store.publish(Arc::new(root));
        for t in release {
            self.locks.release_all(t);
        }
        if big.is_empty() {
            drop(old);
        } else {
            drop_later((old, big));
        }
        if moved_slave_pos {
            self.slave_pos_moved();
        }
    }

    /// Wakes the waiters of `gtid_slave_pos` (after a root that moved it was published).
    fn slave_pos_moved(&self) {
        *self
            .slave_pos_version
            .lock()
            .unwrap_or_else(|p| p.into_inner()) += 1;
        self.slave_pos_cv.notify_all();
    }

    /// The sink while semi-sync is enabled or groups are held back: registers the group's
    /// ends with semi-sync, then holds the group back (semi-sync AFTER_SYNC while ON, or an
    /// earlier group is still held back: groups become visible in log order) or applies it.
    fn apply_or_hold_back(&self, group: &mut [CommittedRecord]) {
        let mut q = self.hold.lock().unwrap_or_else(|p| p.into_inner());
        let hold = if self.semi.is_enabled() {
            self.semi
                .note_logged(group.iter().map(|r| r.receipt.end_lsn))
        } else {
            false
        };
        if hold || !q.is_empty() {
            q.push_back(group.iter_mut().map(take_record).collect());
            self.held_back.store(true, Ordering::Release);
        } else {
            self.apply(group);
        }
    }

    /// Makes every held-back group that ends at or before `end` visible (applied and
    /// published in log order, locks released). Cheap when nothing is held back.
    fn publish_to(&self, end: Lsn) {
        if !self.held_back.load(Ordering::Acquire) {
            return;
        }
        let mut q = self.hold.lock().unwrap_or_else(|p| p.into_inner());
        let mut recs = Vec::new();
        while q
            .front()
            .is_some_and(|g| g.last().is_none_or(|r| r.receipt.end_lsn <= end))
        {
            if let Some(mut g) = q.pop_front() {
                recs.append(&mut g);
            }
        }
        if !recs.is_empty() {
            self.apply(&mut recs);
        }
        if q.is_empty() {
            self.held_back.store(false, Ordering::Release);
        }
    }
}

/// Moves a record out of the sink's slice (its payload taken), to be applied later.
fn take_record(r: &mut CommittedRecord) -> CommittedRecord {
    CommittedRecord {
        receipt: r.receipt,
        kind: r.kind,
        payload: r.payload.take(),
    }
}

/// Seconds since the epoch, for the events' timestamps.
pub(crate) fn now_secs() -> u32 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as u32)
}

/// Proof that the commit gate is held exclusively (DDL, replica apply, RESET MASTER).
pub(crate) struct Exclusive<'a> {
    _guard: RwLockWriteGuard<'a, ()>,
}

/// What the engine's writers share (see the module docs). Shared as `Arc<Committer>`.
/// The index of `m` in `RowMetadata::ALL` (how `Committer::row_metadata` stores it).
fn row_metadata_index(m: RowMetadata) -> u8 {
    RowMetadata::ALL.iter().position(|&x| x == m).unwrap_or(0) as u8
}

pub(crate) struct Committer {
    shared: Arc<Shared>,
    log: Arc<Log>,
    domain_id: u32,
    server_id: u32,
    /// `innodb_lock_wait_timeout` of new transactions.
    lock_wait_timeout: Duration,
    /// `binlog_row_metadata` (a `RowMetadata` as its index in `RowMetadata::ALL`): the optional
    /// metadata of the Table_map events of the next commits.
    row_metadata: AtomicU8,
    /// Non-transactional AUTO_INCREMENT counters: table -> next value to hand out.
    auto_inc: Mutex<HashMap<TableId, u64>>,
    /// Commits hold it shared, DDL exclusively (see the module docs).
    gate: RwLock<()>,
    shut_down: AtomicBool,
    /// Where events go; shared with the checkpoint thread.
    notifier: Arc<Notifier>,
    /// The transactions' event caches: limits, spill directory, counters (`event_cache.rs`).
    cache: CacheStats,
    /// The paged store's delta budget: commits wait at its limit (`budget.rs`); None for the
    /// in-memory store.
    budget: Option<Arc<DeltaBudget>>,
}

impl Committer {
    /// The commit path over `log`, starting from the recovered `root`; installs the sink.
    pub(crate) fn new(
        root: Root,
        log: Arc<Log>,
        domain_id: u32,
        server_id: u32,
        lock_wait_timeout: Duration,
        row_metadata: RowMetadata,
        budget: Option<Arc<DeltaBudget>>,
    ) -> Self {
        let notifier = Arc::new(Notifier::default());
        let shared = Arc::new(Shared {
            store: Store::new(root),
            locks: LockManager::new(),
            apply_failure: OnceLock::new(),
            semi: SemiSync::new(notifier.clone()),
            hold: Mutex::new(VecDeque::new()),
            held_back: AtomicBool::new(false),
            slave_pos_version: Mutex::new(0),
            slave_pos_cv: std::sync::Condvar::new(),
            replica_refused: AtomicBool::new(false),
            prebuilt: [AtomicU64::new(0), AtomicU64::new(0)],
            validated_ddl: AtomicU64::new(0),
            admitted: Mutex::new(None),
            admitted_applied: AtomicU64::new(0),
        });
        log.set_sink(Arc::new(Sink(shared.clone())));
        Committer {
            shared,
            log,
            domain_id,
            server_id,
            lock_wait_timeout,
            row_metadata: AtomicU8::new(row_metadata_index(row_metadata)),
            auto_inc: Mutex::new(HashMap::new()),
            gate: RwLock::new(()),
            shut_down: AtomicBool::new(false),
            notifier,
            cache: CacheStats::default(),
            budget,
        }
    }

    /// The paged store's delta budget, if the tables are in the paged store.
    pub(crate) fn budget(&self) -> Option<&Arc<DeltaBudget>> {
        self.budget.as_ref()
    }

    /// Waits, before a commit takes the gate, while the paged store's delta is at its limit
    /// (`budget.rs`), at most `timeout` and until `interrupted`; at once for the in-memory
    /// store. The engine may have closed meanwhile: checked again after a wait. A transaction
    /// calls it before [`Self::commit_changes`] with its session's timeout.
    pub(crate) fn wait_for_room(
        &self,
        timeout: Duration,
        interrupted: &dyn Fn() -> bool,
    ) -> Result<(), EngineError> {
        match &self.budget {
            Some(b) => {
                b.wait(&|| self.log.end_lsn(), timeout, interrupted)?;
                self.check_open()
            }
            None => Ok(()),
        }
    }

    /// `binlog_row_metadata` of the next commits.
    pub(crate) fn row_metadata(&self) -> RowMetadata {
        let i = usize::from(self.row_metadata.load(Ordering::Relaxed));
        RowMetadata::ALL.get(i).copied().unwrap_or_default()
    }

    pub(crate) fn set_row_metadata(&self, m: RowMetadata) {
        self.row_metadata
            .store(row_metadata_index(m), Ordering::Relaxed);
    }

    /// The event caches' settings and counters.
    pub(crate) fn cache_stats(&self) -> &CacheStats {
        &self.cache
    }

    /// The timestamp and server id of events written now on this thread (its origin's).
    pub(crate) fn stamp(&self) -> Stamp {
        let o = crate::origin::current_origin();
        Stamp {
            timestamp: o.and_then(|o| o.timestamp).unwrap_or_else(now_secs),
            server_id: o.and_then(|o| o.server_id).unwrap_or(self.server_id),
        }
    }

    pub(crate) fn store(&self) -> &Store {
        &self.shared.store
    }

    pub(crate) fn locks(&self) -> &LockManager {
        &self.shared.locks
    }

    pub(crate) fn log(&self) -> &Arc<Log> {
        &self.log
    }

    pub(crate) fn notifier(&self) -> &Arc<Notifier> {
        &self.notifier
    }

    pub(crate) fn semisync(&self) -> &SemiSync {
        &self.shared.semi
    }

    /// Logs an empty replicated transaction with `gtid_event`'s GTID, marked replicated (a
    /// group that changed nothing here). `on_queued` runs once it has its place in the log's
    /// queue.
    pub(crate) fn commit_replicated_empty(
        &self,
        gtid_event: &onelog_binlog::event::GtidEvent,
        on_queued: &dyn Fn(),
    ) -> Result<CommitReceipt, EngineError> {
        self.check_open()?;
        if !self.log.admits_before_framing() {
            return self.commit_replicated_checked(gtid_event, Vec::new(), on_queued);
        }
        loop {
            let catalog = self.shared.store.current().catalog.clone();
            let record = self.replicated_record(&catalog, gtid_event, Vec::new(), &|_| 0)?;
            // None: a DDL moved the catalog meanwhile; encode again.
            if let Some(r) = self.commit_replicated_record(&catalog, gtid_event, record, on_queued)
            {
                return r;
            }
        }
    }

    /// Logs a replica's row group (no row locks taken) with its original GTID, marked
    /// replicated, already decoded and encoded against `catalog` (its changes the payload, no
    /// cascade to derive; the log must admit before framing): the sink admits it against the
    /// latest data first ([`Sink::admit`]), and it does not wait for its sync
    /// (`Log::commit_queued_unsynced`). `on_queued` runs once it has its place in the log's
    /// queue. None, nothing logged, when `catalog` is no longer the latest one: the caller
    /// decodes the group again.
    pub(crate) fn commit_replicated_record(
        &self,
        catalog: &Arc<Catalog>,
        gtid_event: &onelog_binlog::event::GtidEvent,
        record: PendingRecord,
        on_queued: &dyn Fn(),
    ) -> Option<Result<CommitReceipt, EngineError>> {
        if let Err(e) = self
            .check_open()
            .and_then(|()| self.wait_for_room(self.lock_wait_timeout, &|| false))
        {
            return Some(Err(e));
        }
        let _gate = self.gate.read().unwrap_or_else(|p| p.into_inner());
        if !Arc::ptr_eq(&self.shared.store.current().catalog, catalog) {
            return None;
        }
        let g = gtid_event.gtid;
        // Nobody is acknowledged by a replicated group: it does not wait for its sync (the
        // flusher syncs it right after; a crash loses only groups the primary still has, and
        // `gtid_slave_pos` is recovered from the log with them), so the replica applies the
        // next group while the log syncs (`Log::commit_queued_unsynced`).
        Some(
            self.log
                .commit_queued_unsynced(record, on_queued)
                .map_err(|e| self.log_error(format!("logging replicated GTID {g}"), e))
                .inspect(|r| {
                    crate::origin::note_committed(r.gtid);
                    self.notifier.logged();
                    self.finish_commit(r.end_lsn, &|| false, None);
                }),
        )
    }

    /// The log record of a replicated row group: its events encoded against `catalog` with
    /// the group's GTID and timestamp, marked replicated, the changes as the payload.
    pub(crate) fn replicated_record(
        &self,
        catalog: &Catalog,
        gtid_event: &onelog_binlog::event::GtidEvent,
        changes: Vec<RowChange>,
        flags: &dyn Fn(usize) -> u16,
    ) -> Result<PendingRecord, EngineError> {
        let g = gtid_event.gtid;
        let events = crate::events::encode_transaction_flagged(
            catalog,
            &changes,
            (g.domain_id, g.server_id, gtid_event.timestamp, g.seq_no),
            self.row_metadata(),
            flags,
        )?;
        Ok(PendingRecord {
            kind: RecordKind::Transaction,
            gtid: GtidAssign::Fixed(g),
            events,
            aux: crate::apply::REPLICATED_AUX.to_vec(),
            streamed: None,
            payload: Some(Box::new(CommitPayload::Rows {
                txn: None,
                changes: Arc::new(changes),
                replicated: true,
                prebuilt: None,
            })),
        })
    }

    /// [`Committer::commit_replicated_record`] where the log does not admit before framing
    /// (file mode, strict visibility): under the exclusive gate, so every earlier commit is
    /// applied, the group is checked against the latest root, then logged. One group at a
    /// time.
    pub(crate) fn commit_replicated_checked(
        &self,
        gtid_event: &onelog_binlog::event::GtidEvent,
        changes: Vec<RowChange>,
        on_queued: &dyn Fn(),
    ) -> Result<CommitReceipt, EngineError> {
        let derive = |_: &Root, c: Vec<RowChange>| Ok(c);
        let flags = |_: usize| 0;
        self.commit_replicated_derived(gtid_event, changes, &derive, &flags, on_queued)
    }

    /// [`Committer::commit_replicated_record`] of a group whose changes `derive` completes
    /// against the latest data (the cascades a MariaDB primary did not log: `cascade.rs`);
    /// `flags(i)`: the rows-event flags of the `i`th change it returns. Under the exclusive
    /// gate, so every earlier commit is applied, then checked and logged as
    /// `commit_replicated_checked`. One group at a time.
    pub(crate) fn commit_replicated_derived<D>(
        &self,
        gtid_event: &onelog_binlog::event::GtidEvent,
        changes: Vec<RowChange>,
        derive: &D,
        flags: &dyn Fn(usize) -> u16,
        on_queued: &dyn Fn(),
    ) -> Result<CommitReceipt, EngineError>
    where
        D: Fn(&Root, Vec<RowChange>) -> Result<Vec<RowChange>, EngineError> + ?Sized,
    {
        self.check_open()?;
        self.wait_for_room(self.lock_wait_timeout, &|| false)?;
        let gate = self.exclusive();
        let root = self.shared.store.current();
        let changes = derive(&root, changes)?;
        let mut scratch = (*root).clone();
        if let Err(why) = changes.iter().try_for_each(|c| scratch.apply_row_change(c)) {
            return Err(self.log_error(
                format!("logging replicated GTID {}", gtid_event.gtid),
                LogError::Refused(why),
            ));
        }
        let g = gtid_event.gtid;
        let record = self.replicated_record(&root.catalog, gtid_event, changes, flags)?;
        on_queued();
        let r = self.log_exclusive(&gate, record, || format!("logging replicated GTID {g}"))?;
        crate::origin::note_committed(r.gtid);
        self.notifier.logged();
        Ok(r)
    }

    /// Lets replicated row groups in again after a refusal (see `Shared::replica_refused`).
    pub(crate) fn clear_replica_refusal(&self) {
        self.shared.replica_refused.store(false, Ordering::Release);
    }

    /// After `Log::commit` returned the record ending at `end` (durable at level 1, unless a
    /// replicated group: `commit_replicated_record`): semi-sync's wait and the record's
    /// visibility, in the wait point's order. AFTER_SYNC: wait for the ack, then make the
    /// record (and the held-back groups before it) visible; AFTER_COMMIT: visible first, then
    /// wait. Disabled: one atomic load (and one more for held-back groups). `own_locks`: the
    /// transaction whose locks the sink left to its committer ([`big_change_log`]), released
    /// as soon as the record is visible (before an AFTER_COMMIT wait, as the sink would have).
    fn finish_commit(&self, end: Lsn, waiter: &dyn CommitWaiter, own_locks: Option<TxnId>) {
        let semi = &self.shared.semi;
        let publish = || {
            self.shared.publish_to(end);
            if let Some(t) = own_locks {
                self.shared.locks.release_all(t);
            }
        };
        if !semi.is_enabled() {
            publish();
            return;
        }
        match semi.wait_point() {
            WaitPoint::AfterSync => {
                semi.wait_for_ack(end, waiter);
                publish();
            }
            WaitPoint::AfterCommit => {
                publish();
                semi.wait_for_ack(end, waiter);
            }
        }
        debug_assert!(self.shared.store.current().lsn >= end);
    }

    /// Big commits whose prebuilt tables were installed, and those whose tables had changed
    /// meanwhile and were applied from the change log instead (`prebuild.rs`).
    pub(crate) fn prebuilt_commits(&self) -> (u64, u64) {
        let [a, b] = &self.shared.prebuilt;
        (a.load(Ordering::Relaxed), b.load(Ordering::Relaxed))
    }

    /// DDL records whose validated root was published instead of applying them again.
    pub(crate) fn validated_ddl(&self) -> u64 {
        self.shared.validated_ddl.load(Ordering::Relaxed)
    }

    /// Replicated row groups applied by publishing their admission's root.
    pub(crate) fn admitted_applied(&self) -> u64 {
        self.shared.admitted_applied.load(Ordering::Relaxed)
    }

    pub(crate) fn lock_wait_timeout(&self) -> Duration {
        self.lock_wait_timeout
    }

    /// Why a committed record could not be applied to the store, if that ever happened.
    pub(crate) fn apply_failure(&self) -> Option<String> {
        self.shared.apply_failure.get().cloned()
    }

    /// 1030 for `what` (a commit, a checkpoint, a backup image) once a committed record could
    /// not be applied to the tables ([`Self::apply_failure`]): the published tables miss part
    /// of it, so a later commit could build on a state the log does not describe, and a
    /// checkpoint or an image would make that permanent. The log still holds the record: a
    /// restart applies it again (or refuses to start, naming why).
    pub(crate) fn refuse_after_apply_failure(&self, what: &str) -> Result<(), EngineError> {
        match self.shared.apply_failure.get() {
            None => Ok(()),
            Some(why) => Err(EngineError::corrupt(
                format!("{what} refused"),
                format!(
                    "a committed record could not be applied to the tables ({why}); restart \
                     the server: recovery applies it again from the log"
                ),
            )),
        }
    }

    /// `EngineError::log` through the notifier (see [`Notifier::log_error`]).
    pub(crate) fn log_error(&self, context: impl Into<String>, e: LogError) -> EngineError {
        self.notifier.log_error(&self.log, context, e)
    }

    /// 1053 once [`shut_down`](Self::shut_down) was called; 1030 once a committed record
    /// could not be applied to the tables ([`Self::refuse_after_apply_failure`]).
    pub(crate) fn check_open(&self) -> Result<(), EngineError> {
        if self.shut_down.load(Ordering::Acquire) {
            return Err(EngineError::ShutDown);
        }
        self.refuse_after_apply_failure("commit")
    }

    /// Later commits and DDL fail with 1053.
    pub(crate) fn shut_down(&self) {
        self.shut_down.store(true, Ordering::Release);
    }

    /// Takes the commit gate exclusively: no commit or DDL runs until the guard is dropped.
    pub(crate) fn exclusive(&self) -> Exclusive<'_> {
        Exclusive {
            _guard: self.gate.write().unwrap_or_else(|p| p.into_inner()),
        }
    }

    /// The AUTO_INCREMENT value the committed rows of `table` call for.
    fn committed_auto_inc(&self, table: TableId) -> u64 {
        self.shared
            .store
            .current()
            .table(table)
            .map_or(1, |t| t.auto_inc_next)
    }

    /// Next AUTO_INCREMENT value of `table` (not transactional).
    pub(crate) fn next_auto_inc(&self, table: TableId) -> u64 {
        let committed = self.committed_auto_inc(table);
        let mut m = self.auto_inc.lock().unwrap_or_else(|p| p.into_inner());
        let e = m.entry(table).or_insert(1);
        let v = (*e).max(committed).max(1);
        *e = v.saturating_add(1);
        debug_assert!(*e > v || v == u64::MAX);
        v
    }

    /// The value [`next_auto_inc`](Self::next_auto_inc) would give now, without taking it.
    pub(crate) fn peek_auto_inc(&self, table: TableId) -> u64 {
        let committed = self.committed_auto_inc(table);
        let m = self.auto_inc.lock().unwrap_or_else(|p| p.into_inner());
        m.get(&table).copied().unwrap_or(1).max(committed).max(1)
    }

    /// An explicit AUTO_INCREMENT value `v` was used: later generated values are above it.
    pub(crate) fn observe_auto_inc(&self, table: TableId, v: u64) {
        let mut m = self.auto_inc.lock().unwrap_or_else(|p| p.into_inner());
        let e = m.entry(table).or_insert(1);
        if v >= *e {
            *e = v.saturating_add(1);
        }
    }

    /// After a logged DDL `change`: forgets the counters of tables it removed or emptied.
    pub(crate) fn forget_auto_inc(&self, change: &CatalogChange) {
        match change {
            CatalogChange::DropTable { id }
            | CatalogChange::TruncateTable { id }
            | CatalogChange::AlterTable {
                table: crate::catalog::TableDef { id, .. },
                ..
            } => {
                self.auto_inc
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .remove(id);
            }
            CatalogChange::DropDatabase { .. } => {
                let cat = self.shared.store.current().catalog.clone();
                self.auto_inc
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .retain(|id, _| cat.table(*id).is_some());
            }
            _ => {}
        }
    }

    /// Logs a transaction's change log (the commit path of `Transaction::commit`), whose
    /// events are in `cache` (encoded as the changes were made; finished here), and `feed`
    /// the prebuild of its tables if it started one (`prebuild.rs`).
    /// Semi-sync may make it wait for a replica's ack (see [`Committer::finish_commit`]);
    /// `waiter` can end that wait early (KILL), without an error. The caller has waited for
    /// room in the paged store's delta ([`Self::wait_for_room`]).
    pub(crate) fn commit_changes(
        &self,
        txn: TxnId,
        changes: Vec<RowChange>,
        cache: &mut EventCache,
        generations: &HashMap<TableId, u64>,
        feed: Option<Feed>,
        waiter: &dyn CommitWaiter,
    ) -> Result<CommitReceipt, EngineError> {
        self.check_open()?;
        let _gate = self.gate.read().unwrap_or_else(|p| p.into_inner());
        let root = self.shared.store.current();
        // DDL is excluded while the gate is held: if every written table still has the
        // generation the writes were based on (and the row locks are held), the changes apply.
        check_generations(&root, generations)?;
        // A big change log is applied to its tables while the statements run and the record is
        // written (`prebuild.rs`); started here if the transaction has no feed running.
        let prebuilt = match feed {
            Some(f) => Some(f.finish(&changes)),
            None if big_change_log(changes.len()) => Feed::start(root).map(|f| f.finish(&changes)),
            None => None,
        };
        let own_locks = big_change_log(changes.len()).then_some(txn);
        let changes = Arc::new(changes);
        let origin = self.origin();
        debug_assert!(!cache.is_empty(), "a transaction with changes has events");
        let stamp = Stamp {
            timestamp: origin.timestamp,
            server_id: origin.server_id,
        };
        let gtid = |out: &mut Vec<u8>| {
            transaction_gtid(out, origin.domain_id, origin.server_id, origin.timestamp)
        };
        // A spilled cache is streamed by the log from its file; a cache in memory is one
        // buffer, as before.
        let (events, streamed) = if cache.on_disk() {
            let (head, streamed) = cache.finish_streamed(gtid, txn, stamp);
            (head, Some(streamed))
        } else {
            (cache.finish(gtid, txn, stamp)?, None)
        };
        let record = PendingRecord {
            kind: RecordKind::Transaction,
            gtid: origin.assign,
            events,
            aux: origin.aux(),
            streamed,
            payload: Some(Box::new(CommitPayload::Rows {
                txn: Some(txn),
                changes,
                replicated: origin.replicated,
                prebuilt,
            })),
        };
        // A replica's statement group (its session commits under a replicated origin) does not
        // wait for its sync either (`commit_replicated_record`).
        let logged = if origin.replicated {
            self.log.commit_queued_unsynced(record, &|| {})
        } else {
            self.log.commit(record)
        };
        logged
            .map_err(|e| self.log_error("committing a transaction", e))
            .inspect(|r| {
                origin.used(r.gtid);
                self.notifier.logged();
                self.finish_commit(r.end_lsn, waiter, own_locks);
            })
    }

    /// What the next record of this thread is logged as: the origin in scope
    /// (`origin.rs`), else this server's next GTID.
    pub(crate) fn origin(&self) -> ResolvedOrigin {
        let o = crate::origin::current_origin().unwrap_or_default();
        let domain_id = o.domain_id.unwrap_or(self.domain_id);
        let server_id = o.server_id.unwrap_or(self.server_id);
        ResolvedOrigin {
            domain_id,
            server_id,
            timestamp: o.timestamp.unwrap_or_else(now_secs),
            assign: match o.seq_no {
                Some(seq_no) => {
                    GtidAssign::Fixed(onelog_binlog::Gtid::new(domain_id, server_id, seq_no))
                }
                None => GtidAssign::Next {
                    domain_id,
                    server_id,
                },
            },
            replicated: o.replicated,
        }
    }

    /// Waits up to `timeout` for a root that moved `gtid_slave_pos` after `seen` (a version
    /// from an earlier call; 0 the first time); returns the version now.
    pub(crate) fn wait_slave_pos_moved(&self, seen: u64, timeout: Duration) -> u64 {
        let v = self
            .shared
            .slave_pos_version
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if *v != seen {
            return *v;
        }
        let (v, _) = self
            .shared
            .slave_pos_cv
            .wait_timeout(v, timeout)
            .unwrap_or_else(|p| p.into_inner());
        *v
    }

    /// Publishes `root` with `gtid_slave_pos` = `pos` (under the exclusive gate: SET GLOBAL
    /// gtid_slave_pos with the replica stopped) and wakes the waiters.
    pub(crate) fn publish_slave_pos(&self, _gate: &Exclusive<'_>, pos: onelog_binlog::GtidPos) {
        let mut root = (*self.shared.store.current()).clone();
        root.slave_pos = pos;
        drop(self.shared.store.publish(Arc::new(root)));
        self.shared.slave_pos_moved();
    }

    /// Logs a DDL or replicated `record` (its payload a [`CommitPayload`]) under the exclusive
    /// gate; `context` names it in an error.
    pub(crate) fn log_exclusive(
        &self,
        _gate: &Exclusive<'_>,
        record: PendingRecord,
        context: impl FnOnce() -> String,
    ) -> Result<CommitReceipt, EngineError> {
        debug_assert!(record
            .payload
            .as_ref()
            .is_some_and(|p| (**p).is::<CommitPayload>()));
        self.log
            .commit(record)
            .map_err(|e| self.log_error(context(), e))
            .inspect(|r| self.finish_commit(r.end_lsn, &|| false, None))
    }
}

/// A commit's origin resolved against this server's identity ([`Committer::origin`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ResolvedOrigin {
    pub domain_id: u32,
    pub server_id: u32,
    pub timestamp: u32,
    pub assign: GtidAssign,
    pub replicated: bool,
}

impl ResolvedOrigin {
    /// The record's `aux` prefix: the replicated marker or nothing.
    pub fn aux(&self) -> Vec<u8> {
        if self.replicated {
            crate::apply::REPLICATED_AUX.to_vec()
        } else {
            Vec::new()
        }
    }

    /// The record of a DDL group: its `events`, the catalog `change` in `aux`, and the rows a
    /// `CREATE TABLE ... SELECT` writes with it (none for other DDL).
    pub fn ddl_record(
        &self,
        events: Vec<u8>,
        change: &CatalogChange,
        rows: Vec<RowChange>,
    ) -> PendingRecord {
        let mut aux = self.aux();
        aux.extend_from_slice(&change.encode());
        PendingRecord {
            kind: RecordKind::Ddl,
            gtid: self.assign,
            events,
            aux,
            streamed: None,
            payload: Some(Box::new(CommitPayload::Ddl {
                change: change.clone(),
                rows,
                replicated: self.replicated,
                validated: None,
            })),
        }
    }

    /// The record was logged as `gtid`: `@@last_gtid`, and a fixed seq_no is used up.
    pub fn used(&self, gtid: onelog_binlog::Gtid) {
        crate::origin::note_committed(gtid);
        if matches!(self.assign, GtidAssign::Fixed(_)) {
            crate::origin::consume_seq_no();
        }
    }
}

/// 1146 when a written table is gone, 1412 when its generation changed since the writes.
fn check_generations(root: &Root, generations: &HashMap<TableId, u64>) -> Result<(), EngineError> {
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
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prebuild::PREBUILD_MIN_CHANGES;
    use onelog_binlog::Gtid;
    use onelog_log::{CommitReceipt, LogOptions, SimFs};

    /// A committer over an empty root and a fresh log on a simulated file system.
    fn committer() -> Committer {
        let (log, _) = Log::open(
            SimFs::new(),
            LogOptions {
                dir: "/log".into(),
                ..LogOptions::default()
            },
        )
        .unwrap();
        Committer::new(
            Root::empty(),
            log,
            0,
            1,
            Duration::from_secs(1),
            RowMetadata::NoLog,
            None,
        )
    }

    /// GTID 0-1-5's transaction record at LSN 100, carrying `payload`.
    fn record(payload: Option<CommitPayload>) -> CommittedRecord {
        CommittedRecord {
            receipt: CommitReceipt {
                gtid: Gtid::new(0, 1, 5),
                lsn: 100,
                end_lsn: 200,
                commit_id: 101,
            },
            kind: RecordKind::Transaction,
            payload: payload.map(|p| Box::new(p) as Box<dyn std::any::Any + Send>),
        }
    }

    /// Issue 14 part 2: what the sink lets the log apply while an fsync runs. A big
    /// transaction's record (which may wait for its prebuilt tables) and a DDL's wait for
    /// their sync, whatever their size in bytes.
    #[test]
    fn big_change_logs_and_ddl_are_applied_after_their_sync() {
        let c = committer();
        let sink = Sink(c.shared.clone());
        let rows = |n: usize| CommitPayload::Rows {
            txn: None,
            changes: Arc::new(
                (0..n)
                    .map(|i| RowChange::Insert {
                        table: 1,
                        row: Arc::new(vec![onelog_binlog::Value::Int(i as i64)]),
                    })
                    .collect(),
            ),
            replicated: false,
            prebuilt: None,
        };
        assert!(sink.early_apply(&record(None)));
        assert!(sink.early_apply(&record(Some(rows(10)))));
        assert!(sink.early_apply(&record(Some(rows(PREBUILD_MIN_CHANGES - 1)))));
        assert!(!sink.early_apply(&record(Some(rows(PREBUILD_MIN_CHANGES)))));
        let ddl = CommitPayload::Ddl {
            change: CatalogChange::CreateDatabase { name: "d".into() },
            rows: Vec::new(),
            replicated: false,
            validated: None,
        };
        assert!(!sink.early_apply(&record(Some(ddl))));
    }

    #[test]
    fn a_record_the_tables_could_not_take_refuses_every_later_commit() {
        let c = committer();
        assert!(c.check_open().is_ok());
        c.shared
            .note_apply_failure(&record(None), "reading the base failed".into());
        let e = c.check_open().unwrap_err();
        assert_eq!(e.code(), 1030);
        let text = e.to_string();
        assert!(
            text.contains("GTID 0-1-5 at LSN 100: reading the base failed"),
            "{text}"
        );
        assert!(text.contains("restart"), "{text}");
    }
}
