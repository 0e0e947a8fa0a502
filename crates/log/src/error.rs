//! The log's error type.
//!
//! Owns `LogError`. Invariant: every variant that comes from the disk names the file and the
//! byte offset, so an operator can find the problem; `Display` is a complete sentence an
//! operator can act on.

use std::fmt;
use std::io;
use std::path::PathBuf;

use onelog_binlog::Gtid;

use crate::Lsn;

/// Everything the log can fail with.
#[derive(Debug)]
pub enum LogError {
    /// An I/O call failed.
    Io {
        path: PathBuf,
        offset: u64,
        op: &'static str,
        source: io::Error,
    },
    /// Bytes on disk that cannot be what the log wrote (bad header, bad CRC before the tail,
    /// a gap between segments). Never skipped.
    Corrupt {
        path: PathBuf,
        offset: u64,
        reason: String,
    },
    /// The log stopped accepting writes (after an fsync or write error, a full disk, or a
    /// simulated crash); reads of what was written keep working.
    Failed(String),
    /// The disk is full: `needed` more bytes could not be allocated for `path`.
    StorageFull { path: PathBuf, needed: u64 },
    /// A GTID position older than the oldest segment, or ahead of the log.
    GtidNotFound(String),
    /// The log was shut down.
    Closed,
    /// A record the log refuses (too large for a segment, first event not a patchable GTID
    /// event, wrong kind). Nothing was logged; other records of the group are unaffected.
    InvalidRecord(String),
    /// `gtid_strict_mode`: a record with a fixed GTID whose sequence number is not above the
    /// last one of its domain (MariaDB's 1950). Nothing was logged.
    GtidOutOfOrder { gtid: Gtid, last: Gtid },
    /// The log's sink refused the record before it was framed (a replicated group that does
    /// not apply to the data: `GroupSink::admit`). Nothing was logged.
    Refused(String),
    /// A read position that is not a record boundary, is beyond the end of the log, or lies in a
    /// purged segment.
    InvalidPosition { lsn: Lsn, reason: String },
}

impl LogError {
    pub(crate) fn io(
        path: impl Into<PathBuf>,
        offset: u64,
        op: &'static str,
        source: io::Error,
    ) -> Self {
        let path = path.into();
        debug_assert!(!path.as_os_str().is_empty(), "an I/O error names its file");
        LogError::Io {
            path,
            offset,
            op,
            source,
        }
    }

    pub(crate) fn corrupt(
        path: impl Into<PathBuf>,
        offset: u64,
        reason: impl Into<String>,
    ) -> Self {
        let path = path.into();
        debug_assert!(!path.as_os_str().is_empty(), "corruption names its file");
        LogError::Corrupt {
            path,
            offset,
            reason: reason.into(),
        }
    }

    /// True for errors that mean "the disk is full".
    pub fn is_storage_full(&self) -> bool {
        matches!(self, LogError::StorageFull { .. })
    }
}

/// True when an io error is ENOSPC / EDQUOT.
pub(crate) fn is_enospc(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::StorageFull || e.kind() == io::ErrorKind::QuotaExceeded
}

impl fmt::Display for LogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LogError::Io {
                path,
                offset,
                op,
                source,
            } => {
                write!(
                    f,
                    "binlog I/O error: {op} of {} at offset {offset} failed: {source}",
                    path.display()
                )
            }
            LogError::Corrupt {
                path,
                offset,
                reason,
            } => write!(
                f,
                "refusing to start: bad record in {} at offset {offset}: {reason}",
                path.file_name().map_or_else(
                    || path.display().to_string(),
                    |n| n.to_string_lossy().into_owned()
                )
            ),
            LogError::Failed(why) => write!(f, "the binlog stopped accepting writes: {why}"),
            LogError::StorageFull { path, needed } => write!(
                f,
                "disk full: could not allocate {needed} bytes for {}; free space and restart",
                path.display()
            ),
            LogError::GtidNotFound(why) => {
                write!(f, "GTID position not found in the binlog: {why}")
            }
            LogError::Closed => f.write_str("the binlog is shut down"),
            LogError::InvalidRecord(why) => write!(f, "record refused by the binlog: {why}"),
            LogError::GtidOutOfOrder { gtid, last } => write!(
                f,
                "An attempt was made to binlog GTID {gtid} which would create an out-of-order \
                 sequence number with existing GTID {last}, and gtid strict mode is enabled"
            ),
            LogError::Refused(why) => f.write_str(why),
            LogError::InvalidPosition { lsn, reason } => {
                write!(f, "invalid binlog position {lsn}: {reason}")
            }
        }
    }
}

impl std::error::Error for LogError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LogError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}
