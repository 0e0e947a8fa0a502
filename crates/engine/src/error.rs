//! The engine's error type, [`EngineError`].
//!
//! Owns the mapping of every engine failure to its MySQL error code and SQLSTATE (what a server
//! puts in an error packet) and a message in MySQL's wording, so the layers above can forward
//! an engine error to a client unchanged.
//!
//! Invariants: every variant has a real MySQL code (`ER_*` of MariaDB 10.11) and its SQLSTATE;
//! errors from the log and from checkpoints keep their source and say what the engine was doing
//! (`context`); replay errors name the GTID and the LSN of the record that failed.

use std::fmt;

use onelog_binlog::Gtid;
use onelog_log::retention::SegmentInUse;
use onelog_log::{LogError, Lsn};
use onelog_protocol::{errors, ErrorCode};

use crate::base::BaseError;
use crate::checkpoint::CheckpointError;

/// What went wrong converting a value in an ALTER TABLE's copy (`alter.rs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AlterValueKind {
    /// 1265 `Data truncated for column 'c' at row N` (NULL into NOT NULL among others).
    Truncated,
    /// 1264 `Out of range value for column 'c' at row N`.
    OutOfRange,
    /// 1406 `Data too long for column 'c' at row N`.
    TooLong,
    /// 1292 `Truncated incorrect INTEGER value: 'text'` (or DECIMAL).
    NotNumber { ty: &'static str, text: String },
}

/// Every error the engine returns.
#[derive(Debug)]
pub enum EngineError {
    /// 1412 `ER_TABLE_DEF_CHANGED`: DDL changed (or truncated) a table this transaction wrote;
    /// the transaction cannot commit and was rolled back.
    TableDefChanged { table: String },
    /// 1062 `ER_DUP_ENTRY`: `entry` is the key value as MySQL prints it (`1-abc`), `key` the
    /// index name (`PRIMARY` for the primary key; MariaDB 10.11 prints the bare index name).
    DuplicateKey { entry: String, key: String },
    /// 1213 `ER_LOCK_DEADLOCK`: this transaction was chosen as the victim and rolled back.
    Deadlock,
    /// 1205 `ER_LOCK_WAIT_TIMEOUT`: only the statement failed; the transaction keeps its locks.
    LockWaitTimeout,
    /// 1197 `ER_TRANS_CACHE_FULL`: the transaction's binlog events would exceed
    /// `max_binlog_cache_size` (`event_cache.rs`); the change was not made, the transaction
    /// stays open.
    TransCacheFull,
    /// 1146 `ER_NO_SUCH_TABLE`.
    NoSuchTable { db: String, table: String },
    /// 1049 `ER_BAD_DB_ERROR`.
    NoSuchDatabase { db: String },
    /// 1007 `ER_DB_CREATE_EXISTS`.
    DatabaseExists { db: String },
    /// 1050 `ER_TABLE_EXISTS_ERROR`.
    TableExists { table: String },
    /// 1048 `ER_BAD_NULL_ERROR`.
    BadNull { column: String },
    /// 1061 `ER_DUP_KEYNAME`.
    DuplicateKeyName { index: String },
    /// 1091 `ER_CANT_DROP_FIELD_OR_KEY`.
    NoSuchIndex { index: String },
    /// 1072 `ER_KEY_COLUMN_DOES_NOT_EXITS`.
    NoSuchKeyColumn { column: String },
    /// 1060 `ER_DUP_FIELDNAME`.
    DuplicateColumn { column: String },
    /// 1173 `ER_REQUIRES_PRIMARY_KEY`: onelog tables must have a primary key.
    RequiresPrimaryKey,
    /// 1075 `ER_WRONG_AUTO_KEY`.
    WrongAutoKey,
    /// 1136 `ER_WRONG_VALUE_COUNT_ON_ROW`.
    WrongValueCount { expected: usize, got: usize },
    /// 1264 `ER_WARN_DATA_OUT_OF_RANGE` (strict mode: an error).
    OutOfRange { column: String },
    /// 1406 `ER_DATA_TOO_LONG`.
    DataTooLong { column: String },
    /// 1366 `ER_TRUNCATED_WRONG_VALUE_FOR_FIELD`: a value of the wrong kind for the column.
    WrongValue { column: String, value: String },
    /// An ALTER TABLE's copy could not convert an existing value (`alter.rs`): 1265, 1264,
    /// 1406 or 1292 with MariaDB's texts, naming the 1-based row.
    AlterValue {
        kind: AlterValueKind,
        column: String,
        row: u64,
    },
    /// 1305 `ER_SP_DOES_NOT_EXIST` as MySQL uses it for `SAVEPOINT x does not exist`.
    NoSuchSavepoint { name: String },
    /// 1063 `ER_WRONG_FIELD_SPEC`: a column definition the engine cannot store.
    WrongColumnSpec { column: String, reason: String },
    /// The log failed (1030 `ER_GET_ERRNO`, or 1021 `ER_DISK_FULL` when it is full).
    Log { context: String, source: LogError },
    /// A checkpoint could not be written or read (1030).
    Checkpoint {
        context: String,
        source: CheckpointError,
    },
    /// Bytes the engine wrote itself (catalog change, checkpoint body) do not decode (1030).
    Corrupt { context: String, reason: String },
    /// A logged event group could not be applied (recovery or replica apply) (1030).
    Apply {
        gtid: Option<Gtid>,
        lsn: Option<Lsn>,
        reason: String,
    },
    /// The engine was shut down (1053 `ER_SERVER_SHUTDOWN`).
    ShutDown,
    /// The session was KILLed while it waited (1317 `ER_QUERY_INTERRUPTED`).
    Interrupted,
    /// 1396 `ER_CANNOT_USER`: CREATE USER of an existing account, DROP/ALTER of a missing one.
    AccountOperation {
        op: &'static str,
        user: String,
        host: String,
    },
    /// 1059 `ER_TOO_LONG_IDENT` (longer than 64 characters) or an empty/invalid name (1103
    /// `ER_WRONG_TABLE_NAME` semantics, reported with the same code for simplicity).
    BadIdentifier { name: String },
    /// The data directory keeps its tables in the other table store than the one asked for
    /// (`EngineOptions::table_store`); a refusal to open (1030).
    WrongTableStore {
        dir: std::path::PathBuf,
        reason: String,
    },
    /// A read of the table store's on-disk base failed, or what it read does not decode
    /// (1030); the error names the base's directory.
    Store(BaseError),
    /// A file system operation of the engine itself failed (1030).
    Io {
        context: String,
        source: std::io::Error,
    },
    /// 1378 `ER_LOG_IN_USE`: PURGE would remove `segment`, which recovery (or a reader) still
    /// needs; the log's retention rules decided it (`onelog_log::retention`).
    LogInUse { segment: SegmentInUse },
    /// 1373 `ER_UNKNOWN_TARGET_BINLOG`: `PURGE BINARY LOGS TO` a file the log does not have.
    UnknownTargetLog,
    /// 1377 `ER_BINLOG_PURGE_FATAL_ERR`: removing purged segments failed.
    PurgeFailed { source: LogError },
    /// 1235 `ER_NOT_SUPPORTED_YET`: PURGE BINARY LOGS with `--binlog-storage=file`.
    PurgeInFileMode,
    /// 1451 `ER_ROW_IS_REFERENCED_2`: a parent row's change meets a child row its foreign key
    /// (`detail`: `(`db`.`child`, CONSTRAINT ...)`) does not let go (`cascade.rs`).
    RowIsReferenced { detail: String },
    /// 1296 `ER_GET_ERRMSG` with InnoDB's error 193: a cascade deeper than 15 levels
    /// (`detail`: the constraint, as in 1451 without the parentheses).
    CascadeTooDeep { detail: String },
}

impl EngineError {
    /// The MariaDB error this is answered with (code and SQLSTATE, `onelog_protocol`).
    pub fn error_code(&self) -> ErrorCode {
        let e = self.error_code_unchecked();
        debug_assert!(
            (1000..2000).contains(&e.code) && e.sqlstate.len() == 5,
            "{self:?} has no MariaDB code: {e:?}"
        );
        e
    }

    fn error_code_unchecked(&self) -> ErrorCode {
        use errors::*;
        use EngineError::*;
        match self {
            DuplicateKey { .. } => ER_DUP_ENTRY,
            Deadlock => ER_LOCK_DEADLOCK,
            TableDefChanged { .. } => ER_TABLE_DEF_CHANGED,
            LockWaitTimeout => ER_LOCK_WAIT_TIMEOUT,
            TransCacheFull => ER_TRANS_CACHE_FULL,
            NoSuchTable { .. } => ER_NO_SUCH_TABLE,
            NoSuchDatabase { .. } => ER_BAD_DB_ERROR,
            DatabaseExists { .. } => ER_DB_CREATE_EXISTS,
            TableExists { .. } => ER_TABLE_EXISTS_ERROR,
            BadNull { .. } => ER_BAD_NULL_ERROR,
            DuplicateKeyName { .. } => ER_DUP_KEYNAME,
            NoSuchIndex { .. } => ER_CANT_DROP_FIELD_OR_KEY,
            NoSuchKeyColumn { .. } => ER_KEY_COLUMN_DOES_NOT_EXIST,
            DuplicateColumn { .. } => ER_DUP_FIELDNAME,
            RequiresPrimaryKey => ER_REQUIRES_PRIMARY_KEY,
            WrongAutoKey => ER_WRONG_AUTO_KEY,
            WrongValueCount { .. } => ER_WRONG_VALUE_COUNT_ON_ROW,
            OutOfRange { .. } => ER_WARN_DATA_OUT_OF_RANGE,
            DataTooLong { .. } => ER_DATA_TOO_LONG,
            WrongValue { .. } => ER_TRUNCATED_WRONG_VALUE_FOR_FIELD,
            AlterValue { kind, .. } => match kind {
                AlterValueKind::Truncated => WARN_DATA_TRUNCATED,
                AlterValueKind::OutOfRange => ER_WARN_DATA_OUT_OF_RANGE,
                AlterValueKind::TooLong => ER_DATA_TOO_LONG,
                AlterValueKind::NotNumber { .. } => ER_TRUNCATED_WRONG_VALUE,
            },
            NoSuchSavepoint { .. } => ER_SP_DOES_NOT_EXIST,
            WrongColumnSpec { .. } => ER_WRONG_FIELD_SPEC,
            Log {
                source: LogError::StorageFull { .. },
                ..
            } => ER_DISK_FULL,
            Log {
                source: LogError::GtidOutOfOrder { .. },
                ..
            } => ER_GTID_STRICT_OUT_OF_ORDER,
            Log {
                source: LogError::Refused(_),
                ..
            } => ER_KEY_NOT_FOUND,
            Log { .. }
            | Checkpoint { .. }
            | Corrupt { .. }
            | Apply { .. }
            | Io { .. }
            | Store(_)
            | WrongTableStore { .. } => ER_GET_ERRNO,
            ShutDown => ER_SERVER_SHUTDOWN,
            Interrupted => ER_QUERY_INTERRUPTED,
            AccountOperation { .. } => ER_CANNOT_USER,
            BadIdentifier { .. } => ER_TOO_LONG_IDENT,
            LogInUse { .. } => ER_LOG_IN_USE,
            UnknownTargetLog => ER_UNKNOWN_TARGET_BINLOG,
            PurgeFailed { .. } => ER_BINLOG_PURGE_FATAL_ERR,
            PurgeInFileMode => ER_NOT_SUPPORTED_YET,
            RowIsReferenced { .. } => ER_ROW_IS_REFERENCED_2,
            CascadeTooDeep { .. } => ER_GET_ERRMSG,
        }
    }

    /// The MySQL error code.
    pub fn code(&self) -> u16 {
        self.error_code().code
    }

    /// The SQLSTATE MySQL sends with [`code`](Self::code).
    pub fn sqlstate(&self) -> &'static str {
        self.error_code().sqlstate
    }

    pub(crate) fn log(context: impl Into<String>, source: LogError) -> Self {
        EngineError::Log {
            context: context.into(),
            source,
        }
    }

    pub(crate) fn corrupt(context: impl Into<String>, reason: impl fmt::Display) -> Self {
        EngineError::Corrupt {
            context: context.into(),
            reason: reason.to_string(),
        }
    }
}

impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use EngineError::*;
        match self {
            DuplicateKey { entry, key } => write!(f, "Duplicate entry '{entry}' for key '{key}'"),
            TableDefChanged { table } => write!(
                f,
                "Table definition has changed, please retry transaction ({table})"
            ),
            Deadlock => write!(f, "Deadlock found when trying to get lock; try restarting transaction"),
            LockWaitTimeout => write!(f, "Lock wait timeout exceeded; try restarting transaction"),
            TransCacheFull => write!(f, "Multi-statement transaction required more than 'max_binlog_cache_size' bytes of storage; increase this mariadbd variable and try again"),
            NoSuchTable { db, table } => write!(f, "Table '{db}.{table}' doesn't exist"),
            NoSuchDatabase { db } => write!(f, "Unknown database '{db}'"),
            DatabaseExists { db } => {
                write!(f, "Can't create database '{db}'; database exists")
            }
            TableExists { table } => write!(f, "Table '{table}' already exists"),
            BadNull { column } => write!(f, "Column '{column}' cannot be null"),
            DuplicateKeyName { index } => write!(f, "Duplicate key name '{index}'"),
            NoSuchIndex { index } => {
                write!(f, "Can't DROP INDEX `{index}`; check that it exists")
            }
            NoSuchKeyColumn { column } => {
                write!(f, "Key column '{column}' doesn't exist in table")
            }
            DuplicateColumn { column } => write!(f, "Duplicate column name '{column}'"),
            RequiresPrimaryKey => write!(f, "This table type requires a primary key"),
            WrongAutoKey => write!(
                f,
                "Incorrect table definition; there can be only one auto column and it must be defined as a key"
            ),
            WrongValueCount { expected, got } => write!(
                f,
                "Column count doesn't match value count at row 1 (expected {expected}, got {got})"
            ),
            OutOfRange { column } => {
                write!(f, "Out of range value for column '{column}' at row 1")
            }
            DataTooLong { column } => write!(f, "Data too long for column '{column}' at row 1"),
            WrongValue { column, value } => {
                write!(f, "Incorrect value: '{value}' for column '{column}' at row 1")
            }
            AlterValue { kind, column, row } => match kind {
                AlterValueKind::Truncated => {
                    write!(f, "Data truncated for column '{column}' at row {row}")
                }
                AlterValueKind::OutOfRange => {
                    write!(f, "Out of range value for column '{column}' at row {row}")
                }
                AlterValueKind::TooLong => {
                    write!(f, "Data too long for column '{column}' at row {row}")
                }
                AlterValueKind::NotNumber { ty, text } => {
                    write!(f, "Truncated incorrect {ty} value: '{text}'")
                }
            },
            NoSuchSavepoint { name } => write!(f, "SAVEPOINT {name} does not exist"),
            WrongColumnSpec { column, reason } => {
                write!(f, "Incorrect column specifier for column '{column}': {reason}")
            }
            Log {
                source: source @ (LogError::GtidOutOfOrder { .. } | LogError::Refused(_)),
                ..
            } => write!(f, "{source}"),
            Log { context, source } => write!(f, "{context}: {source}"),
            Checkpoint { context, source } => write!(f, "{context}: {source}"),
            Corrupt { context, reason } => write!(f, "{context}: corrupt data: {reason}"),
            Apply { gtid, lsn, reason } => {
                write!(f, "cannot apply event group")?;
                if let Some(g) = gtid {
                    write!(f, " GTID {g}")?;
                }
                if let Some(l) = lsn {
                    write!(f, " at LSN {l}")?;
                }
                write!(f, ": {reason}")
            }
            ShutDown => write!(f, "Server shutdown in progress"),
            Interrupted => write!(f, "Query execution was interrupted"),
            AccountOperation { op, user, host } => {
                write!(f, "Operation {op} failed for '{user}'@'{host}'")
            }
            BadIdentifier { name } => write!(f, "Incorrect or too long identifier '{name}'"),
            Io { context, source } => write!(f, "{context}: {source}"),
            Store(source) => write!(f, "Got error from storage engine: {source}"),
            WrongTableStore { dir, reason } => {
                write!(f, "data directory {}: {reason}", dir.display())
            }
            LogInUse { segment } => write!(f, "{segment}"),
            UnknownTargetLog => write!(f, "Target log not found in binlog index"),
            PurgeFailed { source } => write!(f, "Fatal error during log purge: {source}"),
            PurgeInFileMode => write!(
                f,
                "This version of MariaDB doesn't yet support 'PURGE BINARY LOGS with --binlog-storage=file' (RESET MASTER removes the classic binlog files)"
            ),
            RowIsReferenced { detail } => write!(
                f,
                "Cannot delete or update a parent row: a foreign key constraint fails {detail}"
            ),
            // MariaDB's "Got error %d '%-.200s' from %s".
            CascadeTooDeep { detail } => {
                let cut: String = detail.chars().take(200).collect();
                write!(f, "Got error 193 '{cut}' from InnoDB")
            }
        }
    }
}

impl From<BaseError> for EngineError {
    fn from(e: BaseError) -> Self {
        EngineError::Store(e)
    }
}

impl std::error::Error for EngineError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            EngineError::Log { source, .. } => Some(source),
            EngineError::Checkpoint { source, .. } => Some(source),
            EngineError::Io { source, .. } => Some(source),
            EngineError::PurgeFailed { source } => Some(source),
            _ => None,
        }
    }
}
