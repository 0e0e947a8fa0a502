//! System variables: the table of known variables (name, scope, type, settable or not), their
//! global values ([`GlobalVars`], shared by all sessions) and session values ([`SessionVars`],
//! one per session), `@@var` lookup ([`get_var`]) and `SET` ([`set_var`]).
//!
//! Values come from one of three places, in this order:
//! 1. *live* values computed on every read (`gtid_binlog_pos` from the log, `autocommit` and
//!    `last_insert_id` from the session, `innodb_flush_log_at_trx_commit` from the log's
//!    durability, `port`/`datadir`/`server_id` from the server's configuration, ...);
//!    `binlog_storage`, `binlog_file_mirror` and `sync_binlog` from the startup options;
//!    the binlog expiry variables from the engine (`expiry.rs`, which also owns their SET);
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
//!
//! Invariants: a SET checks everything (scope, type, range, honoured values) before it stores
//! anything, so a refused SET changes nothing; a variable and its alias always hold the same
//! value (asserted after every store).

mod expiry;
pub(crate) mod info;
mod meta;
pub mod registry;
pub mod replica;

use onelog_protocol::errors;
use std::time::Duration;

use onelog_binlog::event::table_map::RowMetadata;
use onelog_binlog::Value;
use onelog_engine::WaitPoint;
use onelog_log::Durability;

use crate::context::ExecContext;
use crate::error::SqlError;
use crate::server::{BinlogStorageMode, Server};
use registry::Kind::*;
use registry::Scope::{Global, Session as Sess};
pub use registry::*;

/// Session values computed on every read; None for other variables.
fn live_session(cx: &ExecContext, name: &str, scope: VarScope) -> Option<Value> {
    Some(match name {
        "autocommit" => Value::Int(i64::from(cx.autocommit())),
        "last_insert_id" | "identity" if scope != VarScope::Global => {
            Value::Int(cx.last_insert_id as i64)
        }
        // MariaDB counts notes, warnings and errors in warning_count.
        "warning_count" => Value::Int(cx.warnings.len() as i64),
        "error_count" => Value::Int(cx.warnings.iter().filter(|w| w.0 == "Error").count() as i64),
        // `SET timestamp`'s value, else the clock.
        "timestamp" => {
            let (s, us) = cx.fixed_time().unwrap_or_else(crate::context::now_unix);
            Value::Decimal(format!("{s}.{us:06}"))
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
        "gtid_binlog_pos" => text(engine.log().gtid_state().pos().to_string()),
        "gtid_binlog_state" => text(binlog_state_text(engine)),
        n if replica::owns(n) => replica::value(server, n).unwrap_or_else(|| typed_default(def)),
        "binlog_state_interval" => Value::Int(cfg.binlog_state_interval as i64),
        "binlog_row_metadata" => text(engine.binlog_row_metadata().name()),
        "binlog_cache_size" => Value::UInt(engine.binlog_cache_limits().memory),
        "max_binlog_cache_size" => Value::UInt(engine.binlog_cache_limits().max),
        "binlog_storage" => text(cfg.binlog_storage.name()),
        "binlog_file_mirror" => Value::Int(i64::from(cfg.binlog_file_mirror)),
        "sync_binlog" => Value::Int(i64::from(cfg.sync_binlog)),
        "max_binlog_size" => Value::Int(cfg.max_binlog_size as i64),
        "innodb_flush_log_at_trx_commit" => {
            Value::Int(i64::from(engine.log().durability().level()))
        }
        "innodb_buffer_pool_size" => Value::UInt(match &engine.options().table_store {
            onelog_engine::TableStore::Paged { memory_bytes, .. } => *memory_bytes,
            onelog_engine::TableStore::Memory => 0,
        }),
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
        "tmpdir" => text(cfg.tmpdir().to_string_lossy().into_owned()),
        "socket" => text(
            cfg.socket
                .as_ref()
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_default(),
        ),
        "hostname" => text(hostname()),
        "general_log_file" => text(format!("{}.log", hostname())),
        "slow_query_log_file" => text(format!("{}-slow.log", hostname())),
        "max_connections" => Value::Int(i64::from(cfg.max_connections)),
        "max_allowed_packet" => Value::Int(i64::from(cfg.max_allowed_packet)),
        "max_session_mem_used" => Value::Int(cfg.max_session_mem_used.min(i64::MAX as u64) as i64),
        "wait_timeout" => Value::Int(i64::from(cfg.wait_timeout)),
        "rpl_semi_sync_master_enabled" => Value::Int(i64::from(engine.semisync().is_enabled())),
        "rpl_semi_sync_master_timeout" => Value::Int(
            engine
                .semisync()
                .timeout()
                .as_millis()
                .min(i64::MAX as u128) as i64,
        ),
        "rpl_semi_sync_master_wait_no_slave" => {
            Value::Int(i64::from(engine.semisync().wait_no_slave()))
        }
        "rpl_semi_sync_master_wait_point" => text(engine.semisync().wait_point().name()),
        n if expiry::owns(n) => expiry::value(server, n).unwrap_or_else(|| typed_default(def)),
        _ => typed_default(def),
    }
}

/// `SET GLOBAL binlog_row_metadata`: a live variable, the engine holds the value (`None`:
/// DEFAULT, the startup value).
fn set_row_metadata(cx: &ExecContext, value: Option<&Value>) {
    let m = match value {
        Some(Value::Bytes(b)) => std::str::from_utf8(b).ok().and_then(RowMetadata::from_name),
        _ => Some(cx.server.config.binlog_row_metadata),
    };
    // Coerced to one of the enum's names before, so always Some.
    debug_assert!(m.is_some(), "binlog_row_metadata value {value:?}");
    if let Some(m) = m {
        cx.server.engine.set_binlog_row_metadata(m);
    }
}

/// False for a variable this server's configuration does not have: `innodb_buffer_pool_size`
/// with the in-memory table store (no cache; every row is in memory), which reads as unknown
/// rather than as a size that means nothing.
pub(crate) fn exists_here(server: &Server, def: &VarDef) -> bool {
    def.name != "innodb_buffer_pool_size" || server.engine.paged()
}

/// The definition of variable `name` (any case) on this server, else 1193 (the lookup of
/// every read and SET: [`exists_here`]).
fn def_here(server: &Server, name: &str) -> Result<&'static VarDef, SqlError> {
    lookup_def(&name.to_ascii_lowercase())
        .filter(|d| exists_here(server, d))
        .ok_or_else(|| unknown(name))
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
    let def = def_here(server, name)?;
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
pub fn get_var(cx: &ExecContext, name: &str, scope: VarScope) -> Result<Value, SqlError> {
    let def = def_here(&cx.server, name)?;
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
    if let Some(v) = live_session(cx, def.name, scope) {
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
        return Ok(cx
            .vars
            .get(def.name)
            .cloned()
            .unwrap_or_else(|| base_value(&cx.server, def)));
    }
    Ok(global_value(&cx.server, def))
}

/// The session's `wait_timeout` in seconds: how long the connection may idle between
/// commands (the protocol layer reads it before each wait).
pub fn wait_timeout(cx: &ExecContext) -> u64 {
    match get_var(cx, "wait_timeout", VarScope::Session) {
        Ok(Value::Int(i)) if i > 0 => i as u64,
        _ => 28800,
    }
}

/// An interactive client (`CLIENT_INTERACTIVE`) starts with `wait_timeout` set to the global
/// `interactive_timeout`, as in MariaDB.
pub fn make_interactive(cx: &mut ExecContext) {
    if let Some(def) = lookup_def("interactive_timeout") {
        let v = global_value(&cx.server, def);
        put_session(cx, "wait_timeout", Some(v));
    }
}

/// The collation a client names in its handshake (by id) sets the session's
/// `character_set_client`/`_connection`/`_results` and `collation_connection`, as in MariaDB,
/// when onelog has it (utf8mb4's and utf8mb3's general_ci, bin, unicode_ci); any other id
/// leaves the defaults (utf8mb4, utf8mb4_general_ci).
pub fn set_client_collation(cx: &mut ExecContext, id: u16) {
    let (cs, coll) = match id {
        46 => ("utf8mb4", "utf8mb4_bin"),
        224 => ("utf8mb4", "utf8mb4_unicode_ci"),
        33 => ("utf8mb3", "utf8mb3_general_ci"),
        83 => ("utf8mb3", "utf8mb3_bin"),
        192 => ("utf8mb3", "utf8mb3_unicode_ci"),
        _ => return,
    };
    let text = |s: &str| Some(Value::bytes(s.as_bytes()));
    put_session(cx, "character_set_client", text(cs));
    put_session(cx, "character_set_connection", text(cs));
    put_session(cx, "character_set_results", text(cs));
    put_session(cx, "collation_connection", text(coll));
}

/// As MariaDB: setting the session's `character_set_connection` sets `collation_connection`
/// to the set's default collation, and setting `collation_connection` sets
/// `character_set_connection` to the collation's set (literals follow the collation).
fn link_connection_charset(cx: &mut ExecContext, name: &str, value: Option<&Value>) {
    let Some(Value::Bytes(b)) = value else {
        return;
    };
    let v = String::from_utf8_lossy(b).to_ascii_lowercase();
    let charset_of = |c: &str| -> Option<&'static str> {
        if c == "binary" {
            Some("binary")
        } else if c.starts_with("utf8mb4_") {
            Some("utf8mb4")
        } else if c.starts_with("utf8mb3_") || c.starts_with("utf8_") {
            Some("utf8mb3")
        } else {
            None
        }
    };
    let text = |s: &str| Some(Value::bytes(s.as_bytes()));
    match name {
        "character_set_connection" => {
            let coll = match v.as_str() {
                "binary" => "binary",
                "utf8mb4" => "utf8mb4_general_ci",
                "utf8mb3" | "utf8" => "utf8mb3_general_ci",
                _ => return,
            };
            put_session(cx, "collation_connection", text(coll));
        }
        "collation_connection" => {
            if let Some(cs) = charset_of(&v) {
                put_session(cx, "character_set_connection", text(cs));
            }
        }
        _ => {}
    }
}

/// Result metadata as MariaDB sends it under `character_set_results = binary`: a text
/// column's character set becomes binary (63) and its length counts characters (the length
/// divided by its character set's bytes per character); flags are unchanged. Other values
/// of `character_set_results` (UTF-8 ones) send the metadata as computed.
pub(crate) fn results_charset(cx: &ExecContext, r: &mut Result<crate::Output, SqlError>) {
    let Ok(crate::Output::Rows { columns, .. }) = r else {
        return;
    };
    let binary = matches!(get_var(cx, "character_set_results", VarScope::Session),
        Ok(Value::Bytes(b)) if b.eq_ignore_ascii_case(b"binary"));
    if !binary {
        return;
    }
    for c in columns {
        let per_char = match c.charset {
            63 => continue,
            // utf8mb3 collations (general_ci, bin, unicode_ci).
            33 | 83 | 192 => 3,
            // latin1, ascii.
            8 | 11 | 47 | 65 => 1,
            _ => 4,
        };
        c.charset = 63;
        c.length /= per_char;
    }
}

/// The session's `innodb_lock_wait_timeout` (the SQL layer applies it to each transaction it
/// begins with `Transaction::set_lock_wait_timeout`).
pub fn lock_wait_timeout(cx: &ExecContext) -> Duration {
    match get_var(cx, "innodb_lock_wait_timeout", VarScope::Session) {
        Ok(Value::Int(i)) if i >= 0 => Duration::from_secs(i as u64),
        _ => Duration::from_secs(50),
    }
}

/// Whether the session's sql_mode is strict (STRICT_TRANS_TABLES or STRICT_ALL_TABLES: every
/// onelog table is transactional, so both mean the same): INSERT/UPDATE then fail on values
/// MariaDB would otherwise clip with a warning (`dml::coerce_col`).
pub fn strict_mode(cx: &ExecContext) -> bool {
    match get_var(cx, "sql_mode", VarScope::Session) {
        Ok(Value::Bytes(b)) => {
            let s = String::from_utf8_lossy(&b).to_ascii_uppercase();
            s.split(',')
                .any(|m| matches!(m.trim(), "STRICT_TRANS_TABLES" | "STRICT_ALL_TABLES"))
        }
        _ => true,
    }
}

/// `sql_warnings`: a one-row INSERT that cut a value reports `Records: ...` as a
/// many-row one does (`dml::execute_insert`).
pub fn sql_warnings(cx: &ExecContext) -> bool {
    matches!(
        get_var(cx, "sql_warnings", VarScope::Session),
        Ok(Value::Int(1))
    )
}

/// The session's `div_precision_increment` (0 to 38): the fraction digits `/` and AVG add;
/// the session hands it to the expression evaluator before each statement.
pub fn div_precision_increment(cx: &ExecContext) -> u32 {
    match get_var(cx, "div_precision_increment", VarScope::Session) {
        Ok(Value::Int(i)) => i.clamp(0, 38) as u32,
        _ => 4,
    }
}

/// Whether a statement's notes are kept in the diagnostics area: `sql_notes` is 1 and
/// `note_verbosity` has `basic` (onelog raises no notes of its other flags).
pub fn notes_recorded(cx: &ExecContext) -> bool {
    let notes = !matches!(
        get_var(cx, "sql_notes", VarScope::Session),
        Ok(Value::Int(0))
    );
    let basic = match get_var(cx, "note_verbosity", VarScope::Session) {
        Ok(Value::Bytes(b)) => b.split(|c| *c == b',').any(|f| f == b"basic"),
        _ => true,
    };
    notes && basic
}

/// `check_constraint_checks`: whether INSERT, UPDATE and ALTER TABLE test CHECK constraints
/// (`execute::check`).
pub fn check_constraint_checks(cx: &ExecContext) -> bool {
    !matches!(
        get_var(cx, "check_constraint_checks", VarScope::Session),
        Ok(Value::Int(0))
    )
}

/// Whether the session's sql_mode has `mode` (upper case).
fn sql_mode_has(cx: &ExecContext, mode: &str) -> bool {
    matches!(get_var(cx, "sql_mode", VarScope::Session),
        Ok(Value::Bytes(b)) if String::from_utf8_lossy(&b)
            .to_ascii_uppercase()
            .split(',')
            .any(|m| m.trim() == mode))
}

/// sql_mode `NO_AUTO_VALUE_ON_ZERO`: an inserted 0 in an AUTO_INCREMENT column is stored
/// as 0 (only NULL generates a value).
pub fn no_auto_value_on_zero(cx: &ExecContext) -> bool {
    sql_mode_has(cx, "NO_AUTO_VALUE_ON_ZERO")
}

/// sql_mode `NO_ENGINE_SUBSTITUTION`: CREATE TABLE with an engine the server lacks fails
/// (1286) instead of using the default engine with a warning.
pub fn no_engine_substitution(cx: &ExecContext) -> bool {
    sql_mode_has(cx, "NO_ENGINE_SUBSTITUTION")
}

/// Whether a division by zero in INSERT/UPDATE is an error (1365), as MariaDB does in strict
/// mode with ERROR_FOR_DIVISION_BY_ZERO; otherwise it is a warning and NULL.
pub fn division_by_zero_is_error(cx: &ExecContext) -> bool {
    strict_mode(cx)
        && matches!(get_var(cx, "sql_mode", VarScope::Session),
            Ok(Value::Bytes(b)) if String::from_utf8_lossy(&b).to_ascii_uppercase().contains("ERROR_FOR_DIVISION_BY_ZERO"))
}

/// The rows of SHOW [GLOBAL|SESSION] VARIABLES: (name, printed value), sorted by name.
pub(crate) fn show_all(cx: &ExecContext, global: bool) -> Vec<(&'static str, String)> {
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
            let v = get_var(cx, d.name, scope).ok()?;
            Some((d.name, show_text(d, &v)))
        })
        .collect()
}

/// `SET [GLOBAL|SESSION] name = value`: checks scope and type, applies side effects
/// (durability, autocommit, ...), stores the value. Warnings go to the session. A successful
/// SET GLOBAL is recorded for SYSTEM_VARIABLES' GLOBAL_VALUE_ORIGIN.
pub(crate) fn set_var(
    cx: &mut ExecContext,
    name: &str,
    scope: VarScope,
    value: SetValue,
) -> Result<(), SqlError> {
    set_var_checked(cx, name, scope, value)?;
    if scope == VarScope::Global {
        if let Some(def) = lookup_def(&name.to_ascii_lowercase()) {
            cx.server.globals.mark_set_by_sql(def.name);
        }
    }
    Ok(())
}

// Long: MariaDB's checks in its order, then one arm per variable with a side effect, all
// reading the scope and value computed first (to split: the side-effect match into its own
// function, once its early returns are made explicit).
fn set_var_checked(
    cx: &mut ExecContext,
    name: &str,
    scope: VarScope,
    value: SetValue,
) -> Result<(), SqlError> {
    let def = def_here(&cx.server, name)?;
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
    if expiry::owns(def.name) {
        // GLOBAL only (checked above); the engine holds the values.
        return expiry::set(cx, def.name, value);
    }
    if def.name == "timestamp" {
        // SESSION only (checked above); the session's clock holds the value.
        return set_timestamp(cx, value);
    }
    let value = match value {
        SetValue::Default => None,
        SetValue::Value(v) if def.name == "max_statement_time" || def.name == "long_query_time" => {
            Some(statement_time(&v)?)
        }
        SetValue::Value(v) if def.name == "log_output" => Some(log_output(&v)?),
        SetValue::Value(v) if def.name == "note_verbosity" => Some(note_verbosity(&v)?),
        SetValue::Value(Value::Null) if def.name == "optimizer_switch" => {
            return Err(wrong_value(def.name, "NULL"))
        }
        SetValue::Value(v) => Some(coerce(def, &v, &mut cx.warnings)?),
    };
    if let Some(v) = &value {
        check_honoured(cx, def, global, v)?;
    }
    if replica::set(cx, def.name, global, value.as_ref())? {
        return Ok(());
    }
    // Side effects and special cases.
    match def.name {
        "general_log" | "general_log_file" | "slow_query_log" | "slow_query_log_file"
        | "log_output" => return set_query_log(cx, def, value),
        "innodb_flush_log_at_trx_commit" => {
            let level = match &value {
                Some(Value::Int(i)) => *i as u8,
                _ => cx.server.config.flush_log_at_trx_commit,
            };
            let d = Durability::from_level(level).unwrap_or(Durability::Level1);
            cx.server.engine.log().set_durability(d);
            // Live variable: the log holds the value.
            return Ok(());
        }
        "binlog_row_metadata" => {
            set_row_metadata(cx, value.as_ref());
            return Ok(());
        }
        "binlog_cache_size" | "max_binlog_cache_size" => {
            set_cache_size(cx, def, value);
            return Ok(());
        }
        "autocommit" => {
            let on = !matches!(value, Some(Value::Int(0)));
            return cx.set_autocommit(on);
        }
        name if name.starts_with("rpl_semi_sync_master_") => {
            // Live variables: the engine's semi-sync holds the values.
            set_semisync(cx, def, value);
            return Ok(());
        }
        "last_insert_id" | "identity" => {
            if let Some(Value::Int(i)) = value {
                cx.last_insert_id = i as u64;
            }
            return Ok(());
        }
        "sql_log_bin" if matches!(value, Some(Value::Int(0))) => {
            return Err(SqlError::of(errors::ER_NOT_SUPPORTED_YET,
                "onelog cannot skip the binlog: it is the write-ahead log, every change is logged (sql_log_bin=0 is not supported)",
            ))
        }
        // mariadb-dump sets it to 1 (the default); onelog's SHOW CREATE always quotes names.
        "sql_quote_show_create" if matches!(value, Some(Value::Int(0))) => {
            return Err(SqlError::of(
                errors::ER_NOT_SUPPORTED_YET,
                "This version of onelog doesn't yet support 'sql_quote_show_create=0' (SHOW CREATE always quotes names)",
            ))
        }
        // File mode: the classic binlog's sync period is fixed at startup (--sync-binlog).
        "sync_binlog" if cx.server.config.binlog_storage == BinlogStorageMode::File => {
            return Err(read_only(def.name));
        }
        "sync_binlog" => cx.warnings.push((
            "Warning".into(),
            1287,
            "sync_binlog is ignored: in binlog_storage=engine the binlog is the write-ahead log, made durable per innodb_flush_log_at_trx_commit".into(),
        )),
        "tx_isolation" | "transaction_isolation" if !isolation_stored(value.as_ref())? => {
            return Ok(());
        }
        "max_connections" if !global => {}
        "optimizer_switch" => {
            if let Some(Value::Bytes(b)) = &value {
                let scope = if global {
                    VarScope::Global
                } else {
                    VarScope::Session
                };
                let current = get_var(cx, def.name, scope)
                    .ok()
                    .and_then(|v| value_text(&v))
                    .unwrap_or_default();
                let canonical = check_optimizer_switch(&current, &String::from_utf8_lossy(b))?;
                let value = Some(text(canonical));
                if global {
                    cx.server.globals.put(def.name, value);
                } else {
                    put_session(cx, def.name, value);
                }
                return Ok(());
            }
        }
        "sql_mode" => {
            if let Some(Value::Bytes(b)) = &value {
                let canonical = check_sql_mode(&String::from_utf8_lossy(b))?;
                let value = Some(text(canonical));
                if global {
                    cx.server.globals.put(def.name, value);
                } else {
                    put_session(cx, def.name, value);
                }
                return Ok(());
            }
        }
        _ => {}
    }
    if def.name == "div_precision_increment" && !global {
        let n = match &value {
            Some(Value::Int(i)) => *i as u32,
            _ => match cx.server.globals.get(def.name) {
                Some(Value::Int(i)) => i as u32,
                _ => 4,
            },
        };
        crate::expr::set_div_precision_increment(n);
    }
    let alias = alias_of(def.name).and_then(lookup_def);
    if global {
        cx.server.globals.put(def.name, value.clone());
        if let Some(a) = alias {
            cx.server.globals.put(a.name, value);
        }
    } else {
        put_session(cx, def.name, value.clone());
        link_connection_charset(cx, def.name, value.as_ref());
        if let Some(a) = alias {
            put_session(cx, a.name, value);
        }
    }
    debug_assert!(alias.is_none_or(|a| if global {
        cx.server.globals.get(a.name) == cx.server.globals.get(def.name)
    } else {
        cx.vars.get(a.name) == cx.vars.get(def.name)
    }));
    Ok(())
}

/// The largest `SET timestamp` (MariaDB's TIMESTAMP_MAX_VALUE, 2038-01-19 03:14:07 UTC).
const TIMESTAMP_MAX: i64 = 2_147_483_647;

/// `SET timestamp = t`: fixes the session's clock at `t` seconds since the epoch, to the
/// microsecond (cut, not rounded): NOW(), CURRENT_TIMESTAMP, UNIX_TIMESTAMP(), column defaults
/// and the binlog events' timestamps read it (the events through the session's commit origin,
/// [`replica::refresh_origin`]). 0 and DEFAULT give the session the system clock back. As
/// MariaDB 10.11: a negative value is 0 and one past 2147483647 is 2147483647, each with
/// warning 1292; a string or NULL is 1232.
fn set_timestamp(cx: &mut ExecContext, value: SetValue) -> Result<(), SqlError> {
    let v = match value {
        SetValue::Default => Value::Int(0),
        SetValue::Value(v) => v,
    };
    // (whole seconds, microseconds), or None when out of range.
    let parsed: Option<(i64, u32)> = match &v {
        Value::Int(i) => (*i >= 0 && *i <= TIMESTAMP_MAX).then_some((*i, 0)),
        Value::UInt(u) => (*u <= TIMESTAMP_MAX as u64).then_some((*u as i64, 0)),
        Value::Decimal(d) => decimal_time(d),
        Value::Double(d) if d.is_finite() && *d >= 0.0 && *d <= TIMESTAMP_MAX as f64 => {
            let s = d.trunc();
            Some((s as i64, ((d - s) * 1e6) as u32))
        }
        Value::Double(_) => None,
        _ => return Err(wrong_type("timestamp")),
    };
    let t = parsed.unwrap_or_else(|| {
        cx.warnings.push((
            "Warning".into(),
            errors::ER_TRUNCATED_WRONG_VALUE.code,
            format!(
                "Truncated incorrect timestamp value: '{}'",
                crate::expr::sql_text(&v)
            ),
        ));
        let negative = match &v {
            Value::Int(i) => *i < 0,
            Value::Decimal(d) => d.starts_with('-'),
            Value::Double(d) => *d < 0.0 || d.is_nan(),
            _ => false,
        };
        if negative {
            (0, 0)
        } else {
            (TIMESTAMP_MAX, 0)
        }
    });
    cx.set_fixed_time((t != (0, 0)).then_some(t));
    replica::refresh_origin(cx);
    Ok(())
}

/// A DECIMAL `SET timestamp` value as (seconds, microseconds); None when negative (but for
/// -0) or past the maximum.
fn decimal_time(d: &str) -> Option<(i64, u32)> {
    let (negative, digits) = match d.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, d),
    };
    if negative {
        return digits
            .chars()
            .all(|c| c == '0' || c == '.')
            .then_some((0, 0));
    }
    let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
    let micros = format!("{:0<6}", &frac[..frac.len().min(6)])
        .parse::<u32>()
        .ok()?;
    let secs = int.parse::<i64>().ok().filter(|s| *s <= TIMESTAMP_MAX)?;
    Some((secs, micros))
}

/// `log_output`'s value: FILE, NONE or both (NONE wins, as in MariaDB); TABLE is refused
/// (onelog logs to files only: its `mysql.general_log` / `mysql.slow_log` stay empty).
fn log_output(v: &Value) -> Result<Value, SqlError> {
    let given = match v {
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        _ => return Err(wrong_type("log_output")),
    };
    let (mut none, mut file) = (false, false);
    for w in given.split(',') {
        match w.trim().to_ascii_uppercase().as_str() {
            "FILE" => file = true,
            "NONE" => none = true,
            "TABLE" => {
                return Err(SqlError::of(
                    errors::ER_NOT_SUPPORTED_YET,
                    "This version of onelog doesn't yet support 'log_output=TABLE' (the logs are written to files only; mysql.general_log and mysql.slow_log stay empty; use FILE)",
                ))
            }
            _ => return Err(wrong_value("log_output", &given)),
        }
    }
    // MariaDB's SET order; NONE wins over FILE.
    let shown = match (none, file) {
        (true, true) => "NONE,FILE",
        (true, false) => "NONE",
        _ => "FILE",
    };
    Ok(text(shown.to_string()))
}

/// SET GLOBAL of a query log variable: a file name must be openable (1231 otherwise, as
/// MariaDB); the value is stored and the logs reconfigured, and a log that cannot be opened
/// leaves the variable as it was (1231).
fn set_query_log(cx: &ExecContext, def: &VarDef, value: Option<Value>) -> Result<(), SqlError> {
    let server = &cx.server;
    if let (true, Some(Value::Bytes(b))) = (def.name.ends_with("_file"), &value) {
        let name = String::from_utf8_lossy(b);
        if !server.query_logs.can_open(&name) {
            return Err(wrong_value(def.name, &name));
        }
    }
    let before = server.globals.get(def.name);
    server.globals.put(def.name, value.clone());
    if let Err(e) = apply_query_logs(server) {
        server.globals.put(def.name, before);
        let _ = apply_query_logs(server);
        let shown = value
            .as_ref()
            .map_or_else(String::new, |v| show_text(def, v));
        return Err(SqlError::of(
            errors::ER_WRONG_VALUE_FOR_VAR,
            format!(
                "Variable '{}' can't be set to the value of '{shown}' ({e})",
                def.name
            ),
        ));
    }
    Ok(())
}

/// Opens or closes the query logs to match the global variables.
pub fn apply_query_logs(server: &Server) -> Result<(), String> {
    let get = |n: &str| lookup_def(n).map_or(Value::Null, |d| global_value(server, d));
    let on = |n: &str| matches!(get(n), Value::Int(1));
    let file = |n: &str| match get(n) {
        Value::Bytes(b) => String::from_utf8_lossy(&b).into_owned(),
        _ => String::new(),
    };
    let to_file = matches!(get("log_output"), Value::Bytes(b) if b == b"FILE");
    let logs = &server.query_logs;
    logs.configure_general(to_file && on("general_log"), &file("general_log_file"))?;
    logs.configure_slow(
        to_file && on("slow_query_log"),
        &file("slow_query_log_file"),
    )
}

/// Sets a global variable from a server option (`--general-log`, `--long-query-time=0.5`,
/// ...) as `SET GLOBAL` would, side effects included.
pub fn set_global_option(
    server: &std::sync::Arc<Server>,
    name: &str,
    value: &str,
) -> Result<(), SqlError> {
    let mut cx = ExecContext::new(server.clone(), 0, "root", "localhost");
    let numeric = lookup_def(name).is_some_and(|d| d.kind != Str || d.name == "long_query_time");
    let v = if let (true, Ok(i)) = (numeric, value.parse::<i64>()) {
        Value::Int(i)
    } else if let (true, Ok(_)) = (numeric, value.parse::<f64>()) {
        Value::Decimal(value.to_string())
    } else {
        text(value.to_string())
    };
    set_var(&mut cx, name, VarScope::Global, SetValue::Value(v))
}

/// The session's `long_query_time` in seconds.
pub fn long_query_time(cx: &ExecContext) -> f64 {
    match get_var(cx, "long_query_time", VarScope::Session) {
        Ok(Value::Decimal(d)) => d.parse().unwrap_or(10.0),
        Ok(Value::Bytes(b)) => String::from_utf8_lossy(&b).parse().unwrap_or(10.0),
        _ => 10.0,
    }
}

/// Whether `run`, which just ended, is a slow statement under the session's settings
/// ([`slow_policy`]); reads only `long_query_time` (and `log_queries_not_using_indexes` after
/// a full scan) for a statement that is not.
pub fn is_slow(cx: &ExecContext, run: &crate::querylog::StatementRun) -> bool {
    let candidate = run.took > long_query_time(cx)
        || (run.no_index
            && matches!(
                get_var(cx, "log_queries_not_using_indexes", VarScope::Session),
                Ok(Value::Int(1))
            ));
    candidate && slow_policy(cx).logs(run)
}

/// The session's slow log settings (`crate::querylog::SlowPolicy`).
pub fn slow_policy(cx: &ExecContext) -> crate::querylog::SlowPolicy {
    let int = |name: &str| match get_var(cx, name, VarScope::Session) {
        Ok(Value::Int(i)) => i.max(0) as u64,
        Ok(Value::UInt(u)) => u,
        _ => 0,
    };
    crate::querylog::SlowPolicy {
        long_query_time: long_query_time(cx),
        not_using_indexes: int("log_queries_not_using_indexes") == 1,
        min_examined_row_limit: int("min_examined_row_limit"),
        admin_statements: int("log_slow_admin_statements") == 1,
    }
}

/// The session's `sql_log_off`: its statements are not written to the general log.
pub fn sql_log_off(cx: &ExecContext) -> bool {
    matches!(
        get_var(cx, "sql_log_off", VarScope::Session),
        Ok(Value::Int(1))
    )
}

/// `SET GLOBAL binlog_cache_size` / `max_binlog_cache_size` (already coerced; `None`:
/// DEFAULT): live variables, the engine holds the values (transactions started from now on).
fn set_cache_size(cx: &ExecContext, def: &VarDef, value: Option<Value>) {
    let bytes = match value.unwrap_or_else(|| typed_default(def)) {
        Value::UInt(u) => u,
        _ => return,
    };
    let engine = &cx.server.engine;
    if def.name == "binlog_cache_size" {
        engine.set_binlog_cache_size(bytes);
    } else {
        engine.set_max_binlog_cache_size(bytes);
    }
}

/// SET of the isolation level: REPEATABLE READ and READ COMMITTED are stored (true);
/// SERIALIZABLE and READ UNCOMMITTED, which onelog cannot honour, are refused (1235).
fn isolation_stored(value: Option<&Value>) -> Result<bool, SqlError> {
    let Some(Value::Bytes(b)) = value else {
        return Ok(true);
    };
    match b.as_slice() {
        // READ COMMITTED: each statement reads the latest committed state (`read_committed`).
        b"REPEATABLE-READ" | b"READ-COMMITTED" => Ok(true),
        b"SERIALIZABLE" => Err(SqlError::of(
            errors::ER_NOT_SUPPORTED_YET,
            "onelog runs transactions at REPEATABLE READ or READ COMMITTED; SERIALIZABLE is not supported",
        )),
        _ => Err(SqlError::of(
            errors::ER_NOT_SUPPORTED_YET,
            "onelog cannot read uncommitted changes; READ UNCOMMITTED is not supported",
        )),
    }
}

/// Whether the session runs at READ COMMITTED (each statement of a transaction takes a new
/// read view).
pub fn read_committed(cx: &ExecContext) -> bool {
    matches!(get_var(cx, "transaction_isolation", VarScope::Session),
        Ok(Value::Bytes(b)) if b == b"READ-COMMITTED")
}

/// `SET GLOBAL rpl_semi_sync_master_*` (already coerced; `None`: DEFAULT).
fn set_semisync(cx: &ExecContext, def: &VarDef, value: Option<Value>) {
    let v = value.unwrap_or_else(|| typed_default(def));
    let semi = cx.server.engine.semisync();
    let int = match &v {
        Value::Int(i) => *i,
        _ => 0,
    };
    match def.name {
        "rpl_semi_sync_master_enabled" => semi.set_enabled(int != 0),
        "rpl_semi_sync_master_timeout" => {
            semi.set_timeout(Duration::from_millis(int.max(0) as u64))
        }
        "rpl_semi_sync_master_wait_no_slave" => semi.set_wait_no_slave(int != 0),
        "rpl_semi_sync_master_wait_point" => semi.set_wait_point(
            if matches!(&v, Value::Bytes(b) if b.as_slice() == b"AFTER_SYNC") {
                WaitPoint::AfterSync
            } else {
                WaitPoint::AfterCommit
            },
        ),
        other => debug_assert!(false, "no semi-sync variable {other}"),
    }
}

/// Refuses (1235) a value of a variable that onelog would store without honouring it.
fn check_honoured(cx: &ExecContext, def: &VarDef, global: bool, v: &Value) -> Result<(), SqlError> {
    let given = show_text(def, v);
    // Collations: literals compare under collation_connection (`expr::collate`), which takes
    // the utf8 collations onelog has (a utf8mb3 name weighs as its utf8mb4 namesake, the same
    // on the BMP); new tables always default to utf8mb4_general_ci, so collation_server and
    // collation_database keep that one.
    if def.name.starts_with("collation_") {
        let l = given.to_ascii_lowercase();
        let rest = ["utf8mb4_", "utf8mb3_", "utf8_"]
            .iter()
            .find_map(|p| l.strip_prefix(p));
        let ok = match rest {
            Some("general_ci") => true,
            Some("bin" | "unicode_ci") => def.name == "collation_connection",
            // `SET NAMES binary`: literals are binary strings compared byte by byte.
            None => def.name == "collation_connection" && l == "binary",
            _ => false,
        };
        if ok {
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
    if let Ok(current) = get_var(cx, def.name, scope) {
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

fn put_session(cx: &mut ExecContext, name: &'static str, v: Option<Value>) {
    match v {
        Some(v) => {
            cx.vars.values.insert(name, v);
        }
        None => {
            // DEFAULT for a session value: the global value.
            match cx.server.globals.get(name) {
                Some(g) => cx.vars.values.insert(name, g),
                None => cx.vars.values.remove(name),
            };
        }
    }
    if matches!(name, "gtid_domain_id" | "server_id" | "gtid_seq_no") {
        replica::refresh_origin(cx);
    }
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
            if let Some(a) = alias_of(d.name) {
                assert!(lookup_def(a).is_some(), "{} aliases unknown {a}", d.name);
                assert_eq!(
                    alias_of(a),
                    Some(d.name),
                    "{a} does not alias {} back",
                    d.name
                );
            }
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
