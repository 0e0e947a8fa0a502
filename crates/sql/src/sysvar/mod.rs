//! System variables: the table of known variables (name, scope, type, settable or not), their
//! global values ([`GlobalVars`], shared by all sessions) and session values ([`SessionVars`],
//! one per session), `@@var` lookup ([`get_var`]) and `SET` ([`set_var`]).
//!
//! Values come from one of three places, in this order:
//! 1. *live* values computed on every read (`gtid_binlog_pos` from the log, `autocommit` and
//!    `last_insert_id` from the session, `innodb_flush_log_at_trx_commit` from the log's
//!    durability, `port`/`datadir`/`server_id` from the server's configuration, ...);
//!    `binlog_storage`, `binlog_file_mirror` and `sync_binlog` from the startup options;
//! 2. values set with `SET` (session overrides in [`SessionVars`], global ones in [`GlobalVars`]);
//! 3. the variable's default.
//!
//! A session copies the global overrides of session-scoped variables when it starts
//! ([`SessionVars::new`]), so `SET GLOBAL` affects new sessions only, as in MariaDB.
//!
//! Accepted means honoured: a variable whose value onelog does not act on accepts only the
//! values that describe what onelog does, or its current value ([`honoured_values`]); any
//! other value is refused with 1235. `sql_mode` accepts only the flags onelog implements.
//!
//! Errors are MariaDB's: 1193 unknown variable, 1238 read-only, 1228 session-only variable
//! set/read as GLOBAL, 1229 global-only variable set as SESSION, 1231 bad value, 1232 wrong
//! argument type.

use onelog_protocol::errors;
use std::collections::HashMap;
use std::sync::RwLock;
use std::time::Duration;

use onelog_binlog::Value;
use onelog_log::Durability;

use crate::error::SqlError;
use crate::server::{BinlogStorageMode, Server};
use crate::session::Session;

/// The scope a variable reference names: `@@global.x`, `@@session.x`, or plain `@@x`
/// (`Default`: the session value when the variable has one, else the global value).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarScope {
    Session,
    Global,
    Default,
}

/// Where a variable lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    Global,
    Session,
    Both,
}

/// A variable's type: how SET parses a value and how SHOW VARIABLES prints it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// ON/OFF in SHOW, 1/0 in SELECT.
    Bool,
    Int {
        min: i64,
        max: i64,
    },
    Str,
    Enum(&'static [&'static str]),
}

/// One variable of the table.
#[derive(Debug, Clone, Copy)]
pub(crate) struct VarDef {
    pub name: &'static str,
    pub scope: Scope,
    pub kind: Kind,
    pub settable: bool,
    /// Default for plain variables (live variables ignore it).
    pub default: &'static str,
}

const fn v(
    name: &'static str,
    scope: Scope,
    kind: Kind,
    settable: bool,
    default: &'static str,
) -> VarDef {
    VarDef {
        name,
        scope,
        kind,
        settable,
        default,
    }
}

const U32: Kind = Kind::Int {
    min: 0,
    max: u32::MAX as i64,
};
const I64: Kind = Kind::Int {
    min: 0,
    max: i64::MAX,
};
const ISOLATION: &[&str] = &[
    "READ-UNCOMMITTED",
    "READ-COMMITTED",
    "REPEATABLE-READ",
    "SERIALIZABLE",
];

use Kind::{Bool, Str};
use Scope::{Both, Global, Session as Sess};

/// Every variable onelog knows, sorted by name (SHOW VARIABLES prints them in this order).
pub(crate) static VARS: &[VarDef] = &[
    v(
        "auto_increment_increment",
        Both,
        Kind::Int { min: 1, max: 65535 },
        true,
        "1",
    ),
    v(
        "auto_increment_offset",
        Both,
        Kind::Int { min: 1, max: 65535 },
        true,
        "1",
    ),
    v("autocommit", Sess, Bool, true, "1"),
    v(
        "binlog_checksum",
        Global,
        Kind::Enum(&["CRC32"]),
        false,
        "CRC32",
    ),
    v("binlog_file_mirror", Global, Bool, false, ""),
    v("binlog_format", Both, Kind::Enum(&["ROW"]), true, "ROW"),
    v(
        "binlog_row_image",
        Both,
        Kind::Enum(&["FULL"]),
        true,
        "FULL",
    ),
    v("binlog_state_interval", Global, I64, false, ""),
    v(
        "binlog_storage",
        Global,
        Kind::Enum(&["ENGINE", "FILE"]),
        false,
        "",
    ),
    v("character_set_client", Both, Str, true, "utf8mb4"),
    v("character_set_connection", Both, Str, true, "utf8mb4"),
    v("character_set_database", Both, Str, true, "utf8mb4"),
    v("character_set_filesystem", Both, Str, true, "binary"),
    v("character_set_results", Both, Str, true, "utf8mb4"),
    v("character_set_server", Both, Str, true, "utf8mb4"),
    v("character_set_system", Global, Str, false, "utf8mb3"),
    v(
        "collation_connection",
        Both,
        Str,
        true,
        "utf8mb4_general_ci",
    ),
    v("collation_database", Both, Str, true, "utf8mb4_general_ci"),
    v("collation_server", Both, Str, true, "utf8mb4_general_ci"),
    v(
        "connect_timeout",
        Global,
        Kind::Int {
            min: 2,
            max: 31_536_000,
        },
        true,
        "10",
    ),
    v("datadir", Global, Str, false, ""),
    v("default_storage_engine", Both, Str, true, "InnoDB"),
    v("error_count", Sess, U32, false, ""),
    v("foreign_key_checks", Both, Bool, true, "1"),
    v(
        "group_concat_max_len",
        Both,
        Kind::Int {
            min: 4,
            max: u32::MAX as i64,
        },
        true,
        "1048576",
    ),
    v("gtid_binlog_pos", Global, Str, false, ""),
    v("gtid_binlog_state", Global, Str, false, ""),
    v("gtid_current_pos", Global, Str, false, ""),
    v("gtid_domain_id", Both, U32, false, ""),
    v("gtid_slave_pos", Global, Str, false, ""),
    v("gtid_strict_mode", Global, Bool, true, "0"),
    v("have_ssl", Global, Str, false, "DISABLED"),
    v("hostname", Global, Str, false, ""),
    v("identity", Sess, I64, true, ""),
    v("init_connect", Global, Str, true, ""),
    v(
        "innodb_flush_log_at_trx_commit",
        Global,
        Kind::Int { min: 0, max: 2 },
        true,
        "",
    ),
    v(
        "innodb_lock_wait_timeout",
        Both,
        Kind::Int {
            min: 0,
            max: 1_073_741_824,
        },
        true,
        "50",
    ),
    v(
        "interactive_timeout",
        Both,
        Kind::Int {
            min: 1,
            max: 31_536_000,
        },
        true,
        "28800",
    ),
    v("last_insert_id", Sess, I64, true, ""),
    v("license", Global, Str, false, "GPL"),
    v("log_bin", Global, Bool, false, "1"),
    v("log_bin_basename", Global, Str, false, ""),
    v("log_warnings", Both, U32, true, "2"),
    v(
        "lower_case_table_names",
        Global,
        Kind::Int { min: 0, max: 2 },
        false,
        "0",
    ),
    v(
        "max_allowed_packet",
        Both,
        Kind::Int {
            min: 1024,
            max: 1 << 30,
        },
        true,
        "",
    ),
    v("max_binlog_size", Global, I64, false, ""),
    v(
        "max_connections",
        Global,
        Kind::Int {
            min: 10,
            max: 100_000,
        },
        true,
        "",
    ),
    v(
        "max_session_mem_used",
        Both,
        Kind::Int {
            min: 8192,
            max: i64::MAX,
        },
        true,
        "", // `--max-session-mem-used` (base_value)
    ),
    v("max_statement_time", Both, U32, true, "0"),
    v(
        "net_buffer_length",
        Both,
        Kind::Int {
            min: 1024,
            max: 1_048_576,
        },
        true,
        "16384",
    ),
    v(
        "net_read_timeout",
        Both,
        Kind::Int {
            min: 1,
            max: 31_536_000,
        },
        true,
        "30",
    ),
    v(
        "net_write_timeout",
        Both,
        Kind::Int {
            min: 1,
            max: 31_536_000,
        },
        true,
        "60",
    ),
    v("performance_schema", Global, Bool, false, "0"),
    v("port", Global, U32, false, ""),
    v("protocol_version", Global, U32, false, "10"),
    v("query_cache_size", Global, I64, false, "0"),
    v("query_cache_type", Both, Kind::Enum(&["OFF"]), true, "OFF"),
    v("read_only", Global, Bool, true, "0"),
    v("server_id", Both, U32, false, ""),
    v("session_track_schema", Both, Bool, true, "1"),
    v("session_track_state_change", Both, Bool, true, "0"),
    v(
        "session_track_system_variables",
        Both,
        Str,
        true,
        "autocommit,character_set_client,character_set_connection,character_set_results,time_zone",
    ),
    v(
        "session_track_transaction_info",
        Both,
        Kind::Enum(&["OFF", "STATE", "CHARACTERISTICS"]),
        true,
        "OFF",
    ),
    v("skip_name_resolve", Global, Bool, false, "1"),
    v("skip_networking", Global, Bool, false, "0"),
    v("socket", Global, Str, false, ""),
    v("sql_auto_is_null", Both, Bool, true, "0"),
    v("sql_log_bin", Sess, Bool, true, "1"),
    v(
        "sql_mode",
        Both,
        Str,
        true,
        "STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_AUTO_CREATE_USER,NO_ENGINE_SUBSTITUTION",
    ),
    v("sql_select_limit", Both, I64, true, "18446744073709551615"),
    v("storage_engine", Both, Str, true, "InnoDB"),
    v("sync_binlog", Global, U32, true, ""),
    v("system_time_zone", Global, Str, false, "UTC"),
    v("time_zone", Both, Str, true, "SYSTEM"),
    v("timestamp", Sess, Str, false, ""),
    v(
        "transaction_isolation",
        Both,
        Kind::Enum(ISOLATION),
        true,
        "REPEATABLE-READ",
    ),
    v("transaction_read_only", Both, Bool, true, "0"),
    v(
        "tx_isolation",
        Both,
        Kind::Enum(ISOLATION),
        true,
        "REPEATABLE-READ",
    ),
    v("tx_read_only", Both, Bool, true, "0"),
    v("unique_checks", Both, Bool, true, "1"),
    v("version", Global, Str, false, ""),
    v("version_comment", Global, Str, false, "onelog"),
    v(
        "version_compile_machine",
        Global,
        Str,
        false,
        std::env::consts::ARCH,
    ),
    v("version_compile_os", Global, Str, false, "Linux"),
    v(
        "wait_timeout",
        Both,
        Kind::Int {
            min: 1,
            max: 31_536_000,
        },
        true,
        "",
    ),
    v("warning_count", Sess, U32, false, ""),
];

/// The definition of `name` (lower-case ASCII).
pub(crate) fn lookup_def(name: &str) -> Option<&'static VarDef> {
    VARS.binary_search_by(|d| d.name.cmp(name))
        .ok()
        .map(|i| &VARS[i])
}

/// Aliases kept in step: setting one sets the other.
fn alias_of(name: &str) -> Option<&'static str> {
    match name {
        "tx_isolation" => Some("transaction_isolation"),
        "transaction_isolation" => Some("tx_isolation"),
        "tx_read_only" => Some("transaction_read_only"),
        "transaction_read_only" => Some("tx_read_only"),
        "storage_engine" => Some("default_storage_engine"),
        "default_storage_engine" => Some("storage_engine"),
        _ => None,
    }
}

/// Global values set with `SET GLOBAL` (overrides of the defaults). Shared by all sessions.
#[derive(Debug, Default)]
pub struct GlobalVars {
    values: RwLock<HashMap<&'static str, Value>>,
}

impl GlobalVars {
    fn get(&self, name: &str) -> Option<Value> {
        self.values
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(name)
            .cloned()
    }

    fn put(&self, name: &'static str, v: Option<Value>) {
        let mut m = self.values.write().unwrap_or_else(|p| p.into_inner());
        match v {
            Some(v) => m.insert(name, v),
            None => m.remove(name),
        };
    }
}

/// A session's values set with `SET [SESSION]` (and the global overrides copied at start).
#[derive(Debug, Default, Clone)]
pub struct SessionVars {
    values: HashMap<&'static str, Value>,
}

impl SessionVars {
    /// The values a new session starts with: the current global overrides of every variable
    /// that also has a session value.
    pub fn new(globals: &GlobalVars) -> Self {
        let g = globals.values.read().unwrap_or_else(|p| p.into_inner());
        let values = g
            .iter()
            .filter(|(k, _)| lookup_def(k).is_some_and(|d| d.scope == Both))
            .map(|(k, v)| (*k, v.clone()))
            .collect();
        SessionVars { values }
    }

    /// A session value set in this session (or inherited), if any.
    pub(crate) fn get(&self, name: &str) -> Option<&Value> {
        self.values.get(name)
    }
}

fn unknown(name: &str) -> SqlError {
    SqlError::of(
        errors::ER_UNKNOWN_SYSTEM_VARIABLE,
        format!("Unknown system variable '{name}'"),
    )
}

fn text(s: impl Into<String>) -> Value {
    Value::Bytes(s.into().into_bytes())
}

/// The value of a definition's default text, typed.
fn typed_default(d: &VarDef) -> Value {
    match d.kind {
        Bool | Kind::Int { .. } => match d.default.parse::<i64>() {
            Ok(i) => Value::Int(i),
            Err(_) => match d.default.parse::<u64>() {
                Ok(u) => Value::UInt(u),
                Err(_) => text(d.default),
            },
        },
        Str | Kind::Enum(_) => text(d.default),
    }
}

/// Session values computed on every read; None for other variables.
fn live_session(session: &Session, name: &str, scope: VarScope) -> Option<Value> {
    Some(match name {
        "autocommit" => Value::Int(i64::from(session.autocommit())),
        "last_insert_id" | "identity" if scope != VarScope::Global => {
            Value::Int(session.last_insert_id as i64)
        }
        // MariaDB counts notes, warnings and errors in warning_count.
        "warning_count" => Value::Int(session.warnings.len() as i64),
        "error_count" => {
            Value::Int(session.warnings.iter().filter(|w| w.0 == "Error").count() as i64)
        }
        "timestamp" => {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default();
            Value::Decimal(format!("{}.{:06}", now.as_secs(), now.subsec_micros()))
        }
        _ => return None,
    })
}

/// A variable's value before any SET: server state (GTID positions, durability), the
/// configuration, or the table's default.
fn base_value(server: &Server, def: &VarDef) -> Value {
    let cfg = &server.config;
    let engine = &server.engine;
    match def.name {
        "version" => text(cfg.version.clone()),
        "server_id" => Value::Int(i64::from(cfg.server_id)),
        "gtid_domain_id" => Value::Int(i64::from(cfg.gtid_domain_id)),
        "gtid_binlog_pos" | "gtid_current_pos" => text(engine.log().gtid_state().pos().to_string()),
        "gtid_binlog_state" => text(binlog_state_text(engine)),
        "gtid_slave_pos" => text(""),
        "binlog_state_interval" => Value::Int(cfg.binlog_state_interval as i64),
        "binlog_storage" => text(cfg.binlog_storage.name()),
        "binlog_file_mirror" => Value::Int(i64::from(cfg.binlog_file_mirror)),
        "sync_binlog" => Value::Int(i64::from(cfg.sync_binlog)),
        "max_binlog_size" => Value::Int(cfg.max_binlog_size as i64),
        "innodb_flush_log_at_trx_commit" => {
            Value::Int(i64::from(engine.log().durability().level()))
        }
        // File mode: the classic files `<datadir>/binlog.NNNNNN`; engine mode: the segments.
        "log_bin_basename" => text(
            match cfg.binlog_storage {
                BinlogStorageMode::File => cfg.datadir.join("binlog"),
                BinlogStorageMode::Engine => cfg.datadir.join("binlog").join("binlog"),
            }
            .to_string_lossy()
            .into_owned(),
        ),
        "datadir" => {
            let mut s = cfg.datadir.to_string_lossy().into_owned();
            if !s.ends_with('/') {
                s.push('/');
            }
            text(s)
        }
        "port" => Value::Int(i64::from(cfg.port)),
        "socket" => text(
            cfg.socket
                .as_ref()
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_default(),
        ),
        "hostname" => text(hostname()),
        "max_connections" => Value::Int(i64::from(cfg.max_connections)),
        "max_allowed_packet" => Value::Int(i64::from(cfg.max_allowed_packet)),
        "max_session_mem_used" => Value::Int(cfg.max_session_mem_used.min(i64::MAX as u64) as i64),
        "wait_timeout" => Value::Int(i64::from(cfg.wait_timeout)),
        _ => typed_default(def),
    }
}

/// The global value of a variable (SET GLOBAL, else its base value).
fn global_value(server: &Server, def: &VarDef) -> Value {
    server
        .globals
        .get(def.name)
        .unwrap_or_else(|| base_value(server, def))
}

/// `@@global.name` without a session: what the protocol layer reads (`max_connections`,
/// `max_allowed_packet`, `wait_timeout`, ...). 1238 for session-only variables.
pub fn global_var(server: &Server, name: &str) -> Result<Value, SqlError> {
    let lname = name.to_ascii_lowercase();
    let def = lookup_def(&lname).ok_or_else(|| unknown(name))?;
    if def.scope == Sess {
        return Err(SqlError::of(
            errors::ER_INCORRECT_GLOBAL_LOCAL_VAR,
            format!("Variable '{}' is a SESSION variable", def.name),
        ));
    }
    Ok(global_value(server, def))
}

/// `@@gtid_binlog_state`: the last GTID of every (domain, server) pair, like MariaDB.
fn binlog_state_text(engine: &onelog_engine::Engine) -> String {
    engine
        .log()
        .gtid_state()
        .entries()
        .iter()
        .map(|g| g.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "localhost".to_string())
}

/// `@@[global.|session.]name` as a SELECT sees it (booleans as 0/1, numbers as integers).
pub fn get_var(session: &Session, name: &str, scope: VarScope) -> Result<Value, SqlError> {
    let lname = name.to_ascii_lowercase();
    let def = lookup_def(&lname).ok_or_else(|| unknown(name))?;
    match (scope, def.scope) {
        (VarScope::Global, Sess) => {
            return Err(SqlError::of(
                errors::ER_INCORRECT_GLOBAL_LOCAL_VAR,
                format!("Variable '{}' is a SESSION variable", def.name),
            ))
        }
        (VarScope::Session, Global) => {
            return Err(SqlError::of(
                errors::ER_INCORRECT_GLOBAL_LOCAL_VAR,
                format!("Variable '{}' is a GLOBAL variable", def.name),
            ))
        }
        _ => {}
    }
    if let Some(v) = live_session(session, def.name, scope) {
        return Ok(v);
    }
    let use_session = match scope {
        VarScope::Global => false,
        VarScope::Session => true,
        VarScope::Default => def.scope != Global,
    };
    if use_session {
        // The session's own value (set here, or copied from the global one when the session
        // started): a later SET GLOBAL does not reach a running session.
        return Ok(session
            .vars
            .get(def.name)
            .cloned()
            .unwrap_or_else(|| base_value(&session.server, def)));
    }
    Ok(global_value(&session.server, def))
}

/// The session's `wait_timeout` in seconds: how long the connection may idle between
/// commands (the protocol layer reads it before each wait).
pub fn wait_timeout(session: &Session) -> u64 {
    match get_var(session, "wait_timeout", VarScope::Session) {
        Ok(Value::Int(i)) if i > 0 => i as u64,
        _ => 28800,
    }
}

/// An interactive client (`CLIENT_INTERACTIVE`) starts with `wait_timeout` set to the global
/// `interactive_timeout`, as in MariaDB.
pub fn make_interactive(session: &mut Session) {
    if let Some(def) = lookup_def("interactive_timeout") {
        let v = global_value(&session.server, def);
        put_session(session, "wait_timeout", Some(v));
    }
}

/// The session's `innodb_lock_wait_timeout` (the SQL layer applies it to each transaction it
/// begins with `Transaction::set_lock_wait_timeout`).
pub fn lock_wait_timeout(session: &Session) -> Duration {
    match get_var(session, "innodb_lock_wait_timeout", VarScope::Session) {
        Ok(Value::Int(i)) if i >= 0 => Duration::from_secs(i as u64),
        _ => Duration::from_secs(50),
    }
}

/// Whether the session's sql_mode is strict (STRICT_TRANS_TABLES or STRICT_ALL_TABLES: every
/// onelog table is transactional, so both mean the same): INSERT/UPDATE then fail on values
/// MariaDB would otherwise clip with a warning (`dml::coerce_col`).
pub fn strict_mode(session: &Session) -> bool {
    match get_var(session, "sql_mode", VarScope::Session) {
        Ok(Value::Bytes(b)) => {
            let s = String::from_utf8_lossy(&b).to_ascii_uppercase();
            s.split(',')
                .any(|m| matches!(m.trim(), "STRICT_TRANS_TABLES" | "STRICT_ALL_TABLES"))
        }
        _ => true,
    }
}

/// Every sql_mode flag MariaDB 10.11 knows (combination modes expanded by MariaDB are not
/// listed: onelog refuses them as unsupported).
const SQL_MODE_FLAGS: &[&str] = &[
    "REAL_AS_FLOAT",
    "PIPES_AS_CONCAT",
    "ANSI_QUOTES",
    "IGNORE_SPACE",
    "IGNORE_BAD_TABLE_OPTIONS",
    "ONLY_FULL_GROUP_BY",
    "NO_UNSIGNED_SUBTRACTION",
    "NO_DIR_IN_CREATE",
    "POSTGRESQL",
    "ORACLE",
    "MSSQL",
    "DB2",
    "MAXDB",
    "NO_KEY_OPTIONS",
    "NO_TABLE_OPTIONS",
    "NO_FIELD_OPTIONS",
    "MYSQL323",
    "MYSQL40",
    "ANSI",
    "NO_AUTO_VALUE_ON_ZERO",
    "NO_BACKSLASH_ESCAPES",
    "STRICT_TRANS_TABLES",
    "STRICT_ALL_TABLES",
    "NO_ZERO_IN_DATE",
    "NO_ZERO_DATE",
    "ALLOW_INVALID_DATES",
    "ERROR_FOR_DIVISION_BY_ZERO",
    "TRADITIONAL",
    "NO_AUTO_CREATE_USER",
    "HIGH_NOT_PRECEDENCE",
    "NO_ENGINE_SUBSTITUTION",
    "PAD_CHAR_TO_FULL_LENGTH",
    "EMPTY_STRING_IS_NULL",
    "SIMULTANEOUS_ASSIGNMENT",
    "TIME_ROUND_FRACTIONAL",
];

/// The sql_mode flags onelog honours: strictness (`strict_mode`), division by zero in
/// INSERT/UPDATE (`division_by_zero_is_error`), and two that describe what onelog always
/// does (GRANT never creates an account; no storage engine is ever substituted).
const SQL_MODE_HONOURED: &[&str] = &[
    "STRICT_TRANS_TABLES",
    "STRICT_ALL_TABLES",
    "ERROR_FOR_DIVISION_BY_ZERO",
    "NO_AUTO_CREATE_USER",
    "NO_ENGINE_SUBSTITUTION",
];

/// Checks a sql_mode value: 1231 for a flag MariaDB does not know, 1235 for one onelog does
/// not implement. Returns the value in MariaDB's canonical form (upper case, its order).
fn check_sql_mode(v: &str) -> Result<String, SqlError> {
    let mut flags = Vec::new();
    for f in v
        .split(',')
        .map(|f| f.trim().to_ascii_uppercase())
        .filter(|f| !f.is_empty())
    {
        if !SQL_MODE_FLAGS.contains(&f.as_str()) {
            return Err(wrong_value("sql_mode", &f));
        }
        if !SQL_MODE_HONOURED.contains(&f.as_str()) {
            return Err(SqlError::of(
                errors::ER_NOT_SUPPORTED_YET,
                format!("This version of onelog doesn't yet support 'sql_mode {f}'"),
            ));
        }
        flags.push(f);
    }
    Ok(SQL_MODE_FLAGS
        .iter()
        .filter(|f| flags.iter().any(|g| g == *f))
        .copied()
        .collect::<Vec<_>>()
        .join(","))
}

/// Whether a division by zero in INSERT/UPDATE is an error (1365), as MariaDB does in strict
/// mode with ERROR_FOR_DIVISION_BY_ZERO; otherwise it is a warning and NULL.
pub fn division_by_zero_is_error(session: &Session) -> bool {
    strict_mode(session)
        && matches!(get_var(session, "sql_mode", VarScope::Session),
            Ok(Value::Bytes(b)) if String::from_utf8_lossy(&b).to_ascii_uppercase().contains("ERROR_FOR_DIVISION_BY_ZERO"))
}

/// How a value is printed by SHOW VARIABLES (ON/OFF for booleans).
pub(crate) fn show_text(def: &VarDef, v: &Value) -> String {
    match (def.kind, v) {
        (Bool, Value::Int(i)) => if *i != 0 { "ON" } else { "OFF" }.to_string(),
        (_, Value::Bytes(b)) => String::from_utf8_lossy(b).into_owned(),
        (_, Value::Int(i)) => i.to_string(),
        (_, Value::UInt(u)) => u.to_string(),
        (_, Value::Decimal(d)) => d.clone(),
        (_, Value::Null) => String::new(),
        (_, other) => format!("{other:?}"),
    }
}

/// The rows of SHOW [GLOBAL|SESSION] VARIABLES: (name, printed value), sorted by name.
pub(crate) fn show_all(session: &Session, global: bool) -> Vec<(&'static str, String)> {
    let scope = if global {
        VarScope::Global
    } else {
        VarScope::Default
    };
    VARS.iter()
        .filter(|d| !(global && d.scope == Sess))
        .filter_map(|d| {
            // SHOW GLOBAL VARIABLES skips session-only variables; SHOW VARIABLES shows every
            // variable (session value where there is one).
            let v = get_var(session, d.name, scope).ok()?;
            Some((d.name, show_text(d, &v)))
        })
        .collect()
}

/// A value given to SET, before it is checked against the variable's type.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum SetValue {
    Default,
    Value(Value),
}

fn wrong_value(name: &str, v: &str) -> SqlError {
    SqlError::of(
        errors::ER_WRONG_VALUE_FOR_VAR,
        format!("Variable '{name}' can't be set to the value of '{v}'"),
    )
}

fn wrong_type(name: &str) -> SqlError {
    SqlError::of(
        errors::ER_WRONG_TYPE_FOR_VAR,
        format!("Incorrect argument type to variable '{name}'"),
    )
}

fn value_text(v: &Value) -> Option<String> {
    match v {
        Value::Bytes(b) => Some(String::from_utf8_lossy(b).into_owned()),
        Value::Int(i) => Some(i.to_string()),
        Value::UInt(u) => Some(u.to_string()),
        Value::Decimal(d) => Some(d.clone()),
        Value::Double(d) => Some(d.to_string()),
        Value::Float(f) => Some(f.to_string()),
        _ => None,
    }
}

/// Checks and normalises `value` for `def`; warnings (truncation) are pushed to `warnings`.
/// `max_statement_time` takes fractional seconds (MariaDB's is a DOUBLE): kept as a
/// DECIMAL text with 6 digits, as MariaDB shows it; negative values become 0.
fn statement_time(v: &Value) -> Result<Value, SqlError> {
    let secs = match v {
        Value::Int(i) => *i as f64,
        Value::UInt(u) => *u as f64,
        Value::Double(d) => *d,
        Value::Decimal(d) => d.parse().map_err(|_| wrong_type("max_statement_time"))?,
        _ => return Err(wrong_type("max_statement_time")),
    };
    let secs = if secs.is_finite() {
        secs.clamp(0.0, 31_536_000.0)
    } else {
        0.0
    };
    Ok(Value::Decimal(format!("{secs:.6}")))
}

fn coerce(
    def: &VarDef,
    value: &Value,
    warnings: &mut Vec<(String, u16, String)>,
) -> Result<Value, SqlError> {
    let name = def.name;
    match def.kind {
        Bool => {
            let on = match value {
                Value::Int(i) if *i == 0 || *i == 1 => *i == 1,
                Value::UInt(u) if *u <= 1 => *u == 1,
                Value::Bytes(b) => {
                    let s = String::from_utf8_lossy(b).to_ascii_uppercase();
                    match s.as_str() {
                        "ON" | "TRUE" | "1" | "YES" => true,
                        "OFF" | "FALSE" | "0" | "NO" => false,
                        _ => return Err(wrong_value(name, &String::from_utf8_lossy(b))),
                    }
                }
                Value::Null => return Err(wrong_value(name, "NULL")),
                other => return Err(wrong_value(name, &value_text(other).unwrap_or_default())),
            };
            Ok(Value::Int(i64::from(on)))
        }
        Kind::Int { min, max } => {
            let i: i128 = match value {
                Value::Int(i) => i128::from(*i),
                Value::UInt(u) => i128::from(*u),
                Value::Decimal(d) => d
                    .split('.')
                    .next()
                    .and_then(|s| s.parse().ok())
                    .ok_or_else(|| wrong_type(name))?,
                _ => return Err(wrong_type(name)),
            };
            let clamped = i.clamp(i128::from(min), i128::from(max));
            if clamped != i {
                warnings.push((
                    "Warning".into(),
                    1292,
                    format!("Truncated incorrect {name} value: '{i}'"),
                ));
            }
            Ok(Value::Int(clamped as i64))
        }
        Str => match value {
            Value::Null => Ok(text("")),
            other => value_text(other).map(text).ok_or_else(|| wrong_type(name)),
        },
        Kind::Enum(allowed) => {
            let s = match value {
                Value::Null => return Err(wrong_value(name, "NULL")),
                other => value_text(other).ok_or_else(|| wrong_type(name))?,
            };
            let up = s.to_ascii_uppercase();
            // Numeric index (as MariaDB accepts for enum variables).
            let by_index = up.parse::<usize>().ok().and_then(|i| allowed.get(i));
            match allowed.iter().find(|a| **a == up).or(by_index) {
                Some(a) => Ok(text(*a)),
                None => Err(wrong_value(name, &s)),
            }
        }
    }
}

/// `SET [GLOBAL|SESSION] name = value`: checks scope and type, applies side effects
/// (durability, autocommit, ...), stores the value. Warnings go to the session.
pub(crate) fn set_var(
    session: &mut Session,
    name: &str,
    scope: VarScope,
    value: SetValue,
) -> Result<(), SqlError> {
    let lname = name.to_ascii_lowercase();
    let def = lookup_def(&lname).ok_or_else(|| unknown(name))?;
    let global = match (scope, def.scope) {
        (VarScope::Global, Sess) => {
            return Err(SqlError::of(
                errors::ER_LOCAL_VARIABLE,
                format!(
                    "Variable '{}' is a SESSION variable and can't be used with SET GLOBAL",
                    def.name
                ),
            ))
        }
        (VarScope::Session, Global) | (VarScope::Default, Global) => {
            if !def.settable {
                return Err(read_only(def.name));
            }
            return Err(SqlError::of(
                errors::ER_GLOBAL_VARIABLE,
                format!(
                    "Variable '{}' is a GLOBAL variable and should be set with SET GLOBAL",
                    def.name
                ),
            ));
        }
        (VarScope::Global, _) => true,
        _ => false,
    };
    if !def.settable {
        return Err(read_only(def.name));
    }
    if def.name == "max_allowed_packet" && !global {
        // The protocol layer sizes the connection's packets once, at connect.
        return Err(SqlError::of(errors::ER_VARIABLE_IS_READONLY,
            "SESSION variable 'max_allowed_packet' is read-only. Use SET GLOBAL to assign the value",
        ));
    }
    let value = match value {
        SetValue::Default => None,
        SetValue::Value(v) if def.name == "max_statement_time" => Some(statement_time(&v)?),
        SetValue::Value(v) => Some(coerce(def, &v, &mut session.warnings)?),
    };
    if let Some(v) = &value {
        check_honoured(session, def, global, v)?;
    }
    // Side effects and special cases.
    match def.name {
        "innodb_flush_log_at_trx_commit" => {
            let level = match &value {
                Some(Value::Int(i)) => *i as u8,
                _ => session.server.config.flush_log_at_trx_commit,
            };
            let d = Durability::from_level(level).unwrap_or(Durability::Level1);
            session.server.engine.log().set_durability(d);
            // Live variable: the log holds the value.
            return Ok(());
        }
        "autocommit" => {
            let on = !matches!(value, Some(Value::Int(0)));
            return session.set_autocommit(on);
        }
        "last_insert_id" | "identity" => {
            if let Some(Value::Int(i)) = value {
                session.last_insert_id = i as u64;
            }
            return Ok(());
        }
        "sql_log_bin" if matches!(value, Some(Value::Int(0))) => {
            return Err(SqlError::of(errors::ER_NOT_SUPPORTED_YET,
                "onelog cannot skip the binlog: it is the write-ahead log, every change is logged (sql_log_bin=0 is not supported)",
            ))
        }
        // File mode: the classic binlog's sync period is fixed at startup (--sync-binlog).
        "sync_binlog" if session.server.config.binlog_storage == BinlogStorageMode::File => {
            return Err(read_only(def.name));
        }
        "sync_binlog" => session.warnings.push((
            "Warning".into(),
            1287,
            "sync_binlog is ignored: in binlog_storage=engine the binlog is the write-ahead log, made durable per innodb_flush_log_at_trx_commit".into(),
        )),
        "tx_isolation" | "transaction_isolation" => {
            if let Some(Value::Bytes(b)) = &value {
                match b.as_slice() {
                    b"REPEATABLE-READ" => {}
                    b"SERIALIZABLE" => {
                        return Err(SqlError::of(errors::ER_NOT_SUPPORTED_YET,
                            "onelog runs every transaction at REPEATABLE READ; SERIALIZABLE is not supported",
                        ))
                    }
                    _ => {
                        isolation_warning(session);
                        // The level stays REPEATABLE READ (stronger than the one asked for).
                        return Ok(());
                    }
                }
            }
        }
        "max_connections" if !global => {}
        "sql_mode" => {
            if let Some(Value::Bytes(b)) = &value {
                let canonical = check_sql_mode(&String::from_utf8_lossy(b))?;
                let value = Some(text(canonical));
                if global {
                    session.server.globals.put(def.name, value);
                } else {
                    put_session(session, def.name, value);
                }
                return Ok(());
            }
        }
        _ => {}
    }
    let alias = alias_of(def.name).and_then(lookup_def);
    if global {
        session.server.globals.put(def.name, value.clone());
        if let Some(a) = alias {
            session.server.globals.put(a.name, value);
        }
    } else {
        put_session(session, def.name, value.clone());
        if let Some(a) = alias {
            put_session(session, a.name, value);
        }
    }
    Ok(())
}

/// The values onelog honours for a variable whose other values it does not implement; `None`
/// for variables that are honoured whatever their value (or owned elsewhere: the connection
/// limits, statement limits, sql_mode, isolation, durability). A value in the list, or equal
/// to the variable's current value (what mysqldump and connectors re-set), is accepted;
/// anything else is refused (1235), never stored and ignored.
fn honoured_values(name: &str) -> Option<&'static [&'static str]> {
    const UTF8: &[&str] = &["utf8mb4", "utf8mb3", "utf8"];
    Some(match name {
        // onelog receives and sends UTF-8 bytes without conversion.
        "character_set_client"
        | "character_set_connection"
        | "character_set_database"
        | "character_set_server" => UTF8,
        "character_set_results" => &["utf8mb4", "utf8mb3", "utf8", "binary", ""],
        "character_set_filesystem" => &["binary"],
        // Values are stored, not acted on: only the defaults describe what onelog does.
        "auto_increment_increment" | "auto_increment_offset" => &["1"],
        "default_storage_engine" | "storage_engine" => &["InnoDB"],
        "gtid_strict_mode" => &["0"],
        "init_connect" => &[""],
        "net_buffer_length" => &["16384"],
        "net_read_timeout" => &["30"],
        "net_write_timeout" => &["60"],
        "read_only" => &["0"],
        "session_track_schema" => &["1"],
        "session_track_state_change" => &["0"],
        "session_track_transaction_info" => &["OFF"],
        "sql_auto_is_null" => &["0"],
        "sql_select_limit" => &["18446744073709551615"],
        // The server runs in UTC: SYSTEM and a zero offset are the same zone.
        "time_zone" => &["SYSTEM", "+00:00", "+0:00", "-00:00"],
        "transaction_read_only" | "tx_read_only" => &["0"],
        _ => return None,
    })
}

/// Refuses (1235) a value of a variable that onelog would store without honouring it.
fn check_honoured(
    session: &Session,
    def: &VarDef,
    global: bool,
    v: &Value,
) -> Result<(), SqlError> {
    let given = show_text(def, v);
    // Collations: onelog compares strings as bytes whatever the utf8 collation named (a
    // known divergence, docs/SQL.md); other character sets' collations are refused.
    if def.name.starts_with("collation_") {
        let l = given.to_ascii_lowercase();
        if l.starts_with("utf8mb4_") || l.starts_with("utf8mb3_") || l.starts_with("utf8_") {
            return Ok(());
        }
    } else {
        let Some(allowed) = honoured_values(def.name) else {
            return Ok(());
        };
        let norm = |s: &str| match def.kind {
            Bool => match s.to_ascii_uppercase().as_str() {
                "ON" | "1" => "1".to_string(),
                "OFF" | "0" => "0".to_string(),
                o => o.to_string(),
            },
            _ => s.to_ascii_lowercase(),
        };
        if allowed.iter().any(|a| norm(a) == norm(&given)) {
            return Ok(());
        }
    }
    let scope = if global {
        VarScope::Global
    } else {
        VarScope::Session
    };
    if let Ok(current) = get_var(session, def.name, scope) {
        if show_text(def, &current).eq_ignore_ascii_case(&given) {
            return Ok(());
        }
    }
    Err(SqlError::of(errors::ER_NOT_SUPPORTED_YET,
        format!(
            "This version of onelog doesn't yet support '{} = {given}' (the variable is stored but onelog does not act on other values)",
            def.name
        ),
    ))
}

fn put_session(session: &mut Session, name: &'static str, v: Option<Value>) {
    match v {
        Some(v) => {
            session.vars.values.insert(name, v);
        }
        None => {
            // DEFAULT for a session value: the global value.
            match session.server.globals.get(name) {
                Some(g) => session.vars.values.insert(name, g),
                None => session.vars.values.remove(name),
            };
        }
    }
}

/// The warning for an isolation level onelog runs as REPEATABLE READ.
pub(crate) fn isolation_warning(session: &mut Session) {
    session.warnings.push((
        "Warning".into(),
        1235,
        "onelog runs every transaction at REPEATABLE READ (stronger than the level requested); the isolation level is unchanged".into(),
    ));
}

fn read_only(name: &str) -> SqlError {
    SqlError::of(
        errors::ER_INCORRECT_GLOBAL_LOCAL_VAR,
        format!("Variable '{name}' is a read only variable"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_variable_table_is_sorted_unique_and_lower_case() {
        for w in VARS.windows(2) {
            assert!(w[0].name < w[1].name, "{} / {}", w[0].name, w[1].name);
        }
        for d in VARS {
            assert_eq!(d.name, d.name.to_ascii_lowercase());
        }
        assert!(lookup_def("gtid_binlog_pos").is_some());
        assert!(lookup_def("no_such_var").is_none());
    }

    #[test]
    fn values_are_coerced_per_type_with_mysql_errors() {
        let mut w = Vec::new();
        let b = lookup_def("foreign_key_checks").unwrap();
        assert_eq!(coerce(b, &text("off"), &mut w).unwrap(), Value::Int(0));
        assert_eq!(coerce(b, &Value::Int(1), &mut w).unwrap(), Value::Int(1));
        assert_eq!(coerce(b, &Value::Int(2), &mut w).unwrap_err().code, 1231);
        let i = lookup_def("innodb_flush_log_at_trx_commit").unwrap();
        assert_eq!(coerce(i, &Value::Int(7), &mut w).unwrap(), Value::Int(2));
        assert_eq!(w.len(), 1);
        assert_eq!(coerce(i, &text("x"), &mut w).unwrap_err().code, 1232);
        let e = lookup_def("binlog_format").unwrap();
        assert_eq!(coerce(e, &text("row"), &mut w).unwrap(), text("ROW"));
        assert_eq!(
            coerce(e, &text("STATEMENT"), &mut w).unwrap_err().code,
            1231
        );
        assert_eq!(show_text(b, &Value::Int(1)), "ON");
    }
}
