//! What the engine tells its operator as it happens.
//!
//! Owns [`EngineEvent`] and [`Reporter`]. The engine is a library and never prints: the
//! embedding server installs a reporter with [`Engine::set_reporter`](crate::Engine::set_reporter)
//! and writes each event to its own log (onelog's server writes MariaDB-style error-log lines).
//! Without a reporter events are dropped; the state they describe stays readable
//! (`Engine::checkpoint_error`, `Log::failed`).
//!
//! Invariants (the "at most once" ones are kept by the atomic swaps in [`Notifier`], which
//! cannot report twice): a reporter is called on the thread where the event happened (the background
//! checkpoint thread, or a committing thread, possibly holding the engine's commit gate), so it
//! may log but must never call back into the engine. [`EngineEvent::LogFailed`] is reported at
//! most once per engine (and once to each newly installed reporter): the log's failed state is
//! final until a restart. [`EngineEvent::DiskFull`] is reported once per episode: again only
//! after a write succeeded ([`EngineEvent::WritesResumed`]). [`Notifier`] keeps the installed
//! reporter and these once-flags; the commit path, DDL, replica apply and the checkpoint thread
//! report through it.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use onelog_log::{Log, LogError, Lsn};

use crate::error::EngineError;

/// Something the operator must learn of without waiting for a shutdown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EngineEvent {
    /// A background checkpoint failed: the previous checkpoint stays current (the log still
    /// holds everything after it, so nothing is lost) and the next attempt comes after
    /// `retry_in`. `error` ends with what the attempt left on disk (`Engine`'s scheduler task:
    /// an in-memory store's temporary file is removed; a paged base's partial table files stay
    /// until its next open, which removes them). `consecutive` counts the failures since the last success (1 for the
    /// first).
    CheckpointFailed {
        error: String,
        consecutive: u32,
        retry_in: Duration,
    },
    /// A background checkpoint at `lsn` succeeded after `after_failures` failed attempts.
    CheckpointRecovered { lsn: Lsn, after_failures: u32 },
    /// A commit or DDL failed with 1021 because the log needs space (a new segment) the disk
    /// does not have; nothing of it was logged. Writes resume by themselves once space is freed.
    DiskFull { error: String },
    /// The first write that succeeded after [`EngineEvent::DiskFull`].
    WritesResumed,
    /// The log entered its failed state (e.g. an fsync returned EIO): it takes no more writes
    /// and never retries the sync; commits, DDL and checkpoints fail until a restart recovers
    /// from what is durable.
    LogFailed { reason: String },
    /// Semi-sync replication (primary side) changed state: MariaDB's error-log texts.
    SemiSync(SemiSyncEvent),
    /// Automatic expiry (`binlog_expire_logs_seconds`, `max_binlog_total_size`) removed
    /// `segments` segments, binlog files `first` to `last`.
    LogsExpired {
        segments: usize,
        first: String,
        last: String,
    },
    /// Automatic expiry failed (reported once per distinct error; retried at every look).
    ExpiryFailed { error: String },
    /// Shortening a sealed segment to its records failed (reported once per distinct error;
    /// retried at every expiry look): it keeps its preallocated size on disk meanwhile.
    TrimFailed { error: String },
}

/// How an error log shows an event (MariaDB's `[Note]`, `[Warning]`, `[ERROR]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    Note,
    Warning,
    Error,
}

impl EngineEvent {
    /// `Error` for what leaves the server unable to write or checkpoint; `Warning` for a full
    /// disk (as mariadbd's "Disk is full writing ..." warning); `Note` for recoveries.
    pub fn severity(&self) -> Severity {
        match self {
            EngineEvent::CheckpointFailed { .. }
            | EngineEvent::LogFailed { .. }
            | EngineEvent::ExpiryFailed { .. } => Severity::Error,
            EngineEvent::LogsExpired { .. } => Severity::Note,
            EngineEvent::DiskFull { .. } | EngineEvent::TrimFailed { .. } => Severity::Warning,
            EngineEvent::CheckpointRecovered { .. } | EngineEvent::WritesResumed => Severity::Note,
            EngineEvent::SemiSync(e) if e.is_warning() => Severity::Warning,
            EngineEvent::SemiSync(_) => Severity::Note,
        }
    }
}

impl fmt::Display for EngineEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EngineEvent::CheckpointFailed {
                error,
                consecutive,
                retry_in,
            } => write!(
                f,
                "background checkpoint failed ({consecutive} in a row): {error}; the previous \
                 checkpoint stays current and the log keeps every commit; next attempt in {} s",
                retry_in.as_secs_f64()
            ),
            EngineEvent::CheckpointRecovered {
                lsn,
                after_failures,
            } => write!(
                f,
                "background checkpoint at LSN {lsn} written after {after_failures} failed \
                 attempt(s)"
            ),
            EngineEvent::DiskFull { error } => write!(
                f,
                "disk full: {error}; commits and DDL fail with error 1021 until space is freed, \
                 then resume by themselves (nothing acknowledged is lost)"
            ),
            EngineEvent::WritesResumed => write!(f, "disk space available again: writes resumed"),
            EngineEvent::LogFailed { reason } => write!(
                f,
                "the log refuses all writes until a restart: {reason}; commits, DDL and \
                 checkpoints fail, reads continue"
            ),
            EngineEvent::SemiSync(e) => e.fmt(f),
            EngineEvent::LogsExpired {
                segments,
                first,
                last,
            } => write!(
                f,
                "binlog expiry purged {segments} file(s), {first} to {last} \
                 (binlog_expire_logs_seconds / max_binlog_total_size)"
            ),
            EngineEvent::ExpiryFailed { error } => {
                write!(f, "binlog expiry failed: {error}; retried every second")
            }
            EngineEvent::TrimFailed { error } => write!(
                f,
                "could not release the unused preallocated space of a closed binlog segment: \
                 {error}; it keeps its full size on disk, retried every second"
            ),
        }
    }
}

/// One semi-sync operator message, reported through the engine's reporter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SemiSyncEvent {
    Enabled,
    Disabled,
    /// A committer's wait timed out: its position and the acknowledged one.
    Timeout {
        file: String,
        pos: u64,
        acked_file: String,
        acked_pos: u64,
    },
    SwitchedOff,
    SwitchedOn {
        server_id: u32,
        file: String,
        pos: u64,
    },
}

impl SemiSyncEvent {
    /// MariaDB logs the timeout as a warning, the rest as notes.
    pub fn is_warning(&self) -> bool {
        matches!(self, SemiSyncEvent::Timeout { .. })
    }
}

impl fmt::Display for SemiSyncEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SemiSyncEvent::Enabled => write!(f, "Semi-sync replication enabled on the master."),
            SemiSyncEvent::Disabled => write!(f, "Semi-sync replication disabled on the master."),
            SemiSyncEvent::Timeout {
                file,
                pos,
                acked_file,
                acked_pos,
            } => write!(
                f,
                "Timeout waiting for reply of binlog (file: {file}, pos: {pos}), semi-sync up to \
                 file {acked_file}, position {acked_pos}."
            ),
            SemiSyncEvent::SwitchedOff => write!(f, "Semi-sync replication switched OFF."),
            SemiSyncEvent::SwitchedOn {
                server_id,
                file,
                pos,
            } => write!(
                f,
                "Semi-sync replication switched ON with slave (server_id: {server_id}) at \
                 ({file}, {pos})"
            ),
        }
    }
}

/// Receives [`EngineEvent`]s (see the module docs for what it may do).
pub type Reporter = Arc<dyn Fn(&EngineEvent) + Send + Sync>;

/// The installed reporter and the once-per-episode flags (see the module docs). Shared as
/// `Arc<Notifier>` by the commit path and the checkpoint thread.
#[derive(Default)]
pub(crate) struct Notifier {
    reporter: RwLock<Option<Reporter>>,
    /// Set once [`EngineEvent::LogFailed`] was reported (the failed state is final).
    log_failure_reported: AtomicBool,
    /// Set from a write failing with 1021 (reported) until the next successful write.
    disk_full: AtomicBool,
}

impl Notifier {
    /// Calls the installed reporter, if any (callers hold no engine lock but the commit gate).
    pub(crate) fn report(&self, event: &EngineEvent) {
        let r = self
            .reporter
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        if let Some(r) = r {
            r(event);
        }
    }

    /// Installs `reporter`; a log that already failed is reported to it at once.
    pub(crate) fn install(&self, reporter: Reporter, log: &Log) {
        *self.reporter.write().unwrap_or_else(|p| p.into_inner()) = Some(reporter);
        if let Some(reason) = log.failed() {
            self.log_failure_reported.store(true, Ordering::Release);
            self.report(&EngineEvent::LogFailed { reason });
        }
    }

    /// Reports [`EngineEvent::LogFailed`] the first time the log is seen failed (once per
    /// reporter: [`Notifier::install`] tells a new one).
    fn report_log_failure(&self, log: &Log) {
        let Some(reason) = log.failed() else {
            return;
        };
        if !self.log_failure_reported.swap(true, Ordering::AcqRel) {
            self.report(&EngineEvent::LogFailed { reason });
        }
    }

    /// `EngineError::log`, reporting the log's failed state if this error is the first to
    /// show it (a commit whose fsync returned EIO, a level-2 background flush that failed), and
    /// the start of a disk-full episode.
    pub(crate) fn log_error(
        &self,
        log: &Log,
        context: impl Into<String>,
        e: LogError,
    ) -> EngineError {
        self.report_log_failure(log);
        let e = EngineError::log(context, e);
        if e.code() == 1021 && !self.disk_full.swap(true, Ordering::AcqRel) {
            self.report(&EngineEvent::DiskFull {
                error: e.to_string(),
            });
        }
        e
    }

    /// A write was logged: ends a disk-full episode, if one was reported.
    pub(crate) fn logged(&self) {
        if self.disk_full.load(Ordering::Relaxed) && self.disk_full.swap(false, Ordering::AcqRel) {
            self.report(&EngineEvent::WritesResumed);
        }
    }
}
