//! The registry of system variables: every variable's definition (name, scope, type,
//! settable or not, default) in one table ([`VARS`]), their aliases, the values a variable
//! onelog does not act on may take ([`honoured_values`]), `sql_mode` flags, value coercion for
//! SET, and the stores of set values: [`GlobalVars`] (shared) and [`SessionVars`] (one per
//! session). Shared ground: it reads no session, server or log; the values computed live
//! (from the session, the log, the configuration) and `SET`'s checks against the running
//! server are in the parent module.
//!
//! Invariants: every name in [`VARS`] is lower case and unique, in sorted order (the binary
//! search of [`lookup_def`] relies on it); an alias names a variable of the table, and the
//! alias of an alias is the name itself. The table is constant, so these are checked once,
//! over every entry, by the parent module's `the_variable_table_is_sorted_unique_and_lower_case`
//! test rather than on each lookup.

use onelog_protocol::errors;
use std::collections::HashMap;
use std::sync::RwLock;

use onelog_binlog::Value;

use crate::error::SqlError;

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
    /// An unsigned 64-bit size from `min` up, rounded down to a multiple of `block` (MariaDB's
    /// `Sys_var_ulonglong` with a block size: `binlog_cache_size`, ...).
    Size {
        min: u64,
        block: u64,
    },
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

pub(crate) const fn v(
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

pub(crate) const U32: Kind = Kind::Int {
    min: 0,
    max: u32::MAX as i64,
};

pub(crate) const I64: Kind = Kind::Int {
    min: 0,
    max: i64::MAX,
};

/// The binlog cache sizes: 4096 up, in blocks of 4096 (MariaDB 10.11).
pub(crate) const CACHE_SIZE: Kind = Kind::Size {
    min: 4096,
    block: 4096,
};

pub(crate) const ISOLATION: &[&str] = &[
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
    // The binlog caches (`onelog_engine::event_cache`): live, the engine holds the values.
    v("binlog_cache_size", Global, CACHE_SIZE, true, "32768"),
    v(
        "binlog_checksum",
        Global,
        Kind::Enum(&["CRC32"]),
        false,
        "CRC32",
    ),
    v(
        "binlog_expire_logs_seconds",
        Global,
        Kind::Int {
            min: 0,
            max: 8_553_600,
        },
        true,
        "",
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
    v(
        "binlog_row_metadata",
        Global,
        Kind::Enum(&["NO_LOG", "MINIMAL", "FULL"]),
        true,
        "",
    ),
    v("binlog_state_interval", Global, I64, false, ""),
    // The statement cache holds non-transactional changes only; onelog has none (every table
    // is transactional), so it is never used whatever its size.
    v("binlog_stmt_cache_size", Global, CACHE_SIZE, true, "32768"),
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
    // 0: INSERT, UPDATE and ALTER TABLE do not test CHECK constraints (`execute::check`).
    v("check_constraint_checks", Both, Bool, true, "1"),
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
    // The unnamed replication connection only (no multi-source: other names are refused).
    v("default_master_connection", Sess, Str, true, ""),
    v("default_storage_engine", Both, Str, true, "InnoDB"),
    // Fraction digits a `/` and AVG add (`expr::numeric`'s division reads it per statement).
    v(
        "div_precision_increment",
        Both,
        Kind::Int { min: 0, max: 38 },
        true,
        "4",
    ),
    v("error_count", Sess, U32, false, ""),
    // onelog has no event scheduler: OFF only (`honoured_values`); DISABLED is a startup
    // value in MariaDB too (1231 at run time).
    v(
        "event_scheduler",
        Global,
        Kind::Enum(&["OFF", "ON"]),
        true,
        "OFF",
    ),
    // A DOUBLE in MariaDB: its SET is `sysvar/expiry.rs`'.
    v("expire_logs_days", Global, Str, true, ""),
    v("foreign_key_checks", Both, Bool, true, "1"),
    // The query logs (`crate::querylog`); the file names' defaults are live (the host name).
    v("general_log", Global, Bool, true, "0"),
    v("general_log_file", Global, Str, true, ""),
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
    v("gtid_domain_id", Both, U32, true, ""),
    v("gtid_ignore_duplicates", Global, Bool, true, "0"),
    v(
        "gtid_seq_no",
        Sess,
        Kind::Int {
            min: 0,
            max: i64::MAX,
        },
        true,
        "0",
    ),
    v("gtid_slave_pos", Global, Str, true, ""),
    v("gtid_strict_mode", Global, Bool, true, "0"),
    v("have_ssl", Global, Str, false, "DISABLED"),
    v("hostname", Global, Str, false, ""),
    v("identity", Sess, I64, true, ""),
    v("init_connect", Global, Str, true, ""),
    // The paged store's memory budget (`--innodb-buffer-pool-size`): read-only (fjall's
    // block cache has a fixed size); unknown with the in-memory store (`super::exists_here`).
    v(
        "innodb_buffer_pool_size",
        Global,
        Kind::Size {
            min: 2 << 20,
            block: 1 << 20,
        },
        false,
        "",
    ),
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
    // No statistics are kept: both values describe onelog (see `honoured_values`).
    v("innodb_stats_persistent", Global, Bool, true, "1"),
    v(
        "innodb_stats_persistent_sample_pages",
        Global,
        Kind::Int {
            min: 1,
            max: u32::MAX as i64,
        },
        true,
        "20",
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
    // The optimizer's knobs (`optimizer_switch` below): onelog has no join cache, so they
    // read as MariaDB's defaults and are set only to them ([`honoured_values`]).
    v(
        "join_buffer_size",
        Both,
        Kind::Size {
            min: 128,
            block: 128,
        },
        true,
        "262144",
    ),
    v(
        "join_buffer_space_limit",
        Both,
        Kind::Size {
            min: 2048,
            block: 2048,
        },
        true,
        "2097152",
    ),
    v(
        "join_cache_level",
        Both,
        Kind::Int { min: 0, max: 8 },
        true,
        "2",
    ),
    v("last_gtid", Sess, Str, false, ""),
    v("last_insert_id", Sess, I64, true, ""),
    v("license", Global, Str, false, "GPL"),
    // Bounds metadata-lock waits: statements waiting for other sessions' LOCK TABLES and
    // global read lock (`crate::table_locks`), PURGE BINARY LOGS and RESET MASTER waiting
    // while a BACKUP STAGE runs (`execute::admin::backup`); then 1205. DDL does not wait for
    // the transactions that used a table (they fail at commit).
    v(
        "lock_wait_timeout",
        Both,
        Kind::Int {
            min: 0,
            max: 31_536_000,
        },
        true,
        "86400",
    ),
    v("log_bin", Global, Bool, false, "1"),
    v("log_bin_basename", Global, Str, false, ""),
    v("log_output", Global, Str, true, "FILE"),
    v("log_queries_not_using_indexes", Both, Bool, true, "0"),
    v("log_slow_admin_statements", Both, Bool, true, "1"),
    v(
        "log_slow_rate_limit",
        Both,
        Kind::Int {
            min: 1,
            max: 4_294_967_295,
        },
        true,
        "1",
    ),
    v("log_slow_verbosity", Both, Str, true, ""),
    v("log_warnings", Both, U32, true, "2"),
    // Fractional seconds, kept as MariaDB shows them (`statement_time`).
    v("long_query_time", Both, Str, true, "10.000000"),
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
    v(
        "max_binlog_cache_size",
        Global,
        CACHE_SIZE,
        true,
        "18446744073709547520",
    ),
    v("max_binlog_size", Global, I64, false, ""),
    v(
        "max_binlog_stmt_cache_size",
        Global,
        CACHE_SIZE,
        true,
        "18446744073709547520",
    ),
    // MariaDB 11.4+ (not in 10.11); its SET is `sysvar/expiry.rs`'.
    v("max_binlog_total_size", Global, I64, true, ""),
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
    // WITH RECURSIVE's bound on rounds (`plan::select::subquery`, `execute::subquery`).
    v(
        "max_recursive_iterations",
        Both,
        Kind::Int {
            min: 0,
            max: u32::MAX as i64,
        },
        true,
        "1000",
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
    v("min_examined_row_limit", Both, U32, true, "0"),
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
    // Notes other than `basic` (unusable keys) are never raised by onelog; without `basic`
    // a statement's notes are dropped, as sql_notes=0 does (`Session::end_guard`).
    v("note_verbosity", Both, Str, true, "basic,explain"),
    // Only mysql_native_password hashes are made (`mariadb-admin password` reads it).
    v("old_passwords", Both, Bool, true, "0"),
    // onelog has no cost-based optimizer to tune: these read as MariaDB 10.11's defaults and
    // are set only to them ([`honoured_values`], `sysvar::optimizer_switch`).
    v(
        "optimizer_prune_level",
        Both,
        Kind::Int { min: 0, max: 2 },
        true,
        "2",
    ),
    v(
        "optimizer_search_depth",
        Both,
        Kind::Int { min: 0, max: 62 },
        true,
        "62",
    ),
    v(
        "optimizer_switch",
        Both,
        Str,
        true,
        OPTIMIZER_SWITCH_DEFAULT,
    ),
    v(
        "optimizer_use_condition_selectivity",
        Both,
        Kind::Int { min: 1, max: 5 },
        true,
        "4",
    ),
    v("performance_schema", Global, Bool, false, "0"),
    v("port", Global, U32, false, ""),
    v("protocol_version", Global, U32, false, "10"),
    v("query_cache_size", Global, I64, false, "0"),
    v("query_cache_type", Both, Kind::Enum(&["OFF"]), true, "OFF"),
    v("read_only", Global, Bool, true, "0"),
    v("rpl_semi_sync_master_enabled", Global, Bool, true, "0"),
    v("rpl_semi_sync_master_timeout", Global, I64, true, "10000"),
    v(
        "rpl_semi_sync_master_wait_no_slave",
        Global,
        Bool,
        true,
        "1",
    ),
    v(
        "rpl_semi_sync_master_wait_point",
        Global,
        Kind::Enum(&["AFTER_SYNC", "AFTER_COMMIT"]),
        true,
        "AFTER_COMMIT",
    ),
    // The replica side of semi-sync is not implemented: read-only, at MariaDB's defaults.
    v("rpl_semi_sync_slave_delay_master", Global, Bool, false, "0"),
    v("rpl_semi_sync_slave_enabled", Global, Bool, false, "0"),
    v(
        "rpl_semi_sync_slave_kill_conn_timeout",
        Global,
        U32,
        false,
        "5",
    ),
    v("rpl_semi_sync_slave_trace_level", Global, U32, false, "32"),
    v("server_id", Both, U32, true, ""),
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
    v("skip_replication", Sess, Bool, true, "0"),
    v(
        "slave_net_timeout",
        Global,
        Kind::Int {
            min: 1,
            max: 31_536_000,
        },
        true,
        "60",
    ),
    v(
        "slave_parallel_mode",
        Global,
        Kind::Enum(&[
            "none",
            "minimal",
            "conservative",
            "optimistic",
            "aggressive",
        ]),
        true,
        "optimistic",
    ),
    v(
        "slave_parallel_threads",
        Global,
        Kind::Int { min: 0, max: 16383 },
        true,
        "0",
    ),
    v(
        "slave_transaction_retries",
        Global,
        Kind::Int {
            min: 0,
            max: u32::MAX as i64,
        },
        true,
        "10",
    ),
    v("slow_query_log", Global, Bool, true, "0"),
    v("slow_query_log_file", Global, Str, true, ""),
    v("socket", Global, Str, false, ""),
    v("sql_auto_is_null", Both, Bool, true, "0"),
    v("sql_log_bin", Sess, Bool, true, "1"),
    v("sql_log_off", Both, Bool, true, "0"),
    v(
        "sql_mode",
        Both,
        Str,
        true,
        "STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_AUTO_CREATE_USER,NO_ENGINE_SUBSTITUTION",
    ),
    v("sql_notes", Both, Bool, true, "1"),
    // Only ON: SHOW CREATE always quotes names (OFF is refused, sysvar::set).
    v("sql_quote_show_create", Both, Bool, true, "1"),
    v("sql_select_limit", Both, I64, true, "18446744073709551615"),
    // 1: a one-row INSERT whose values were cut says so in its OK's info (`execute::dml`).
    v("sql_warnings", Both, Bool, true, "0"),
    v("storage_engine", Both, Str, true, "InnoDB"),
    v("sync_binlog", Global, U32, true, ""),
    v("system_time_zone", Global, Str, false, "UTC"),
    v("time_zone", Both, Str, true, "SYSTEM"),
    // SET timestamp fixes the session's clock (`sysvar::set_timestamp`).
    v("timestamp", Sess, Str, true, ""),
    v("tmpdir", Global, Str, false, ""),
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

/// `@@optimizer_switch`'s default in MariaDB 10.11 (`SELECT @@optimizer_switch` on 10.11.14):
/// every flag, in MariaDB's order.
pub(crate) const OPTIMIZER_SWITCH_DEFAULT: &str = "index_merge=on,index_merge_union=on,index_merge_sort_union=on,index_merge_intersection=on,index_merge_sort_intersection=off,engine_condition_pushdown=off,index_condition_pushdown=on,derived_merge=on,derived_with_keys=on,firstmatch=on,loosescan=on,materialization=on,in_to_exists=on,semijoin=on,partial_match_rowid_merge=on,partial_match_table_scan=on,subquery_cache=on,mrr=off,mrr_cost_based=off,mrr_sort_keys=off,outer_join_with_cache=on,semijoin_with_cache=on,join_cache_incremental=on,join_cache_hashed=on,join_cache_bka=on,optimize_join_buffer_size=on,table_elimination=on,extended_keys=on,exists_to_in=on,orderby_uses_equalities=on,condition_pushdown_for_derived=on,split_materialized=on,condition_pushdown_for_subquery=on,rowid_filter=on,condition_pushdown_from_having=on,not_null_range_scan=off,hash_join_cardinality=off,cset_narrowing=off";

/// Checks a value for `optimizer_switch` as MariaDB parses it: comma-separated items, each
/// `default` (every flag to its default) or `flag=on|off|default` (flag names and values
/// ASCII case-insensitive, trailing spaces ignored), applied in order to `current`; flags not
/// named keep their value. 1231 naming the first item MariaDB would refuse (an unknown flag, a
/// bad value). onelog has none of these optimizations, so only a result that leaves every
/// flag at MariaDB's default is accepted; one that changes a flag is refused with 1235 naming
/// it. Returns the canonical text (every flag, MariaDB's order).
pub(crate) fn check_optimizer_switch(current: &str, v: &str) -> Result<String, SqlError> {
    let parse = |s: &'static str| -> Vec<(&'static str, bool)> {
        s.split(',')
            .filter_map(|f| f.split_once('='))
            .map(|(n, v)| (n, v == "on"))
            .collect()
    };
    let defaults = parse(OPTIMIZER_SWITCH_DEFAULT);
    let mut flags: Vec<(&'static str, bool)> = defaults
        .iter()
        .map(|&(n, d)| {
            let on = current
                .split(',')
                .filter_map(|f| f.split_once('='))
                .find(|(c, _)| c.eq_ignore_ascii_case(n))
                .map_or(d, |(_, v)| v.eq_ignore_ascii_case("on"));
            (n, on)
        })
        .collect();
    for item in v.split(',') {
        let trimmed = item.trim_end();
        if trimmed.is_empty() {
            continue;
        }
        if trimmed.eq_ignore_ascii_case("default") {
            flags.clone_from(&defaults);
            continue;
        }
        let bad = || wrong_value("optimizer_switch", item);
        let (name, value) = trimmed.split_once('=').ok_or_else(bad)?;
        let i = defaults
            .iter()
            .position(|(n, _)| n.eq_ignore_ascii_case(name))
            .ok_or_else(bad)?;
        flags[i].1 = match value.to_ascii_lowercase().as_str() {
            "on" => true,
            "off" => false,
            "default" => defaults[i].1,
            _ => return Err(bad()),
        };
    }
    if let Some(((name, on), _)) = flags.iter().zip(&defaults).find(|(f, d)| f.1 != d.1) {
        return Err(SqlError::of(
            errors::ER_NOT_SUPPORTED_YET,
            format!(
                "This version of onelog doesn't yet support 'optimizer_switch {name}={}' (onelog has no such optimization: every flag stays at its default)",
                if *on { "on" } else { "off" }
            ),
        ));
    }
    Ok(flags
        .iter()
        .map(|(n, on)| format!("{n}={}", if *on { "on" } else { "off" }))
        .collect::<Vec<_>>()
        .join(","))
}

/// The definition of `name` (lower-case ASCII).
pub(crate) fn lookup_def(name: &str) -> Option<&'static VarDef> {
    VARS.binary_search_by(|d| d.name.cmp(name))
        .ok()
        .map(|i| &VARS[i])
}

/// Aliases kept in step: setting one sets the other.
pub(crate) fn alias_of(name: &str) -> Option<&'static str> {
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
    pub(crate) values: RwLock<HashMap<&'static str, Value>>,
    /// The variables a `SET GLOBAL` has set since the server started (SYSTEM_VARIABLES'
    /// GLOBAL_VALUE_ORIGIN `SQL`), live ones included.
    pub(crate) set_by_sql: RwLock<std::collections::HashSet<&'static str>>,
}

impl GlobalVars {
    pub(crate) fn get(&self, name: &str) -> Option<Value> {
        self.values
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(name)
            .cloned()
    }

    pub(crate) fn put(&self, name: &'static str, v: Option<Value>) {
        let mut m = self.values.write().unwrap_or_else(|p| p.into_inner());
        match v {
            Some(v) => m.insert(name, v),
            None => m.remove(name),
        };
    }

    /// Records that `SET GLOBAL name` succeeded.
    pub(crate) fn mark_set_by_sql(&self, name: &'static str) {
        self.set_by_sql
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(name);
    }

    /// Whether a `SET GLOBAL` has set `name`.
    pub(crate) fn was_set_by_sql(&self, name: &str) -> bool {
        self.set_by_sql
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .contains(name)
    }
}

/// A session's values set with `SET [SESSION]` (and the global overrides copied at start).
#[derive(Debug, Default, Clone)]
pub struct SessionVars {
    pub(crate) values: HashMap<&'static str, Value>,
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
    /// The session's `lock_wait_timeout` (seconds; MariaDB's default, a day, when unreadable):
    /// how long a statement waits for a metadata lock: other sessions' table locks and global
    /// read lock (`crate::table_locks`), and the backup lock PURGE BINARY LOGS and RESET MASTER
    /// wait for while a backup runs (`execute::admin::backup`).
    pub(crate) fn lock_wait_timeout(&self) -> std::time::Duration {
        let secs = match self.get("lock_wait_timeout") {
            Some(Value::Int(i)) if *i >= 0 => *i as u64,
            Some(Value::UInt(u)) => *u,
            _ => 86_400,
        };
        std::time::Duration::from_secs(secs)
    }

    pub(crate) fn get(&self, name: &str) -> Option<&Value> {
        self.values.get(name)
    }
}

pub(crate) fn unknown(name: &str) -> SqlError {
    SqlError::of(
        errors::ER_UNKNOWN_SYSTEM_VARIABLE,
        format!("Unknown system variable '{name}'"),
    )
}

pub(crate) fn text(s: impl Into<String>) -> Value {
    Value::bytes(s.into().into_bytes())
}

/// The value of a definition's default text, typed.
pub(crate) fn typed_default(d: &VarDef) -> Value {
    match d.kind {
        Kind::Size { .. } => match d.default.parse::<u64>() {
            Ok(u) => Value::UInt(u),
            Err(_) => text(d.default),
        },
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

/// Every sql_mode flag MariaDB 10.11 knows (combination modes expanded by MariaDB are not
/// listed: onelog refuses them as unsupported).
pub(crate) const SQL_MODE_FLAGS: &[&str] = &[
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
/// INSERT/UPDATE (`division_by_zero_is_error`), a 0 kept in AUTO_INCREMENT columns
/// (`no_auto_value_on_zero`), and two that describe what onelog always
/// does (GRANT never creates an account; no storage engine is ever substituted).
pub(crate) const SQL_MODE_HONOURED: &[&str] = &[
    "STRICT_TRANS_TABLES",
    "STRICT_ALL_TABLES",
    "ERROR_FOR_DIVISION_BY_ZERO",
    "NO_AUTO_VALUE_ON_ZERO",
    "NO_AUTO_CREATE_USER",
    "NO_ENGINE_SUBSTITUTION",
];

/// Checks a sql_mode value: 1231 for a flag MariaDB does not know, 1235 for one onelog does
/// not implement. Returns the value in MariaDB's canonical form (upper case, its order).
pub(crate) fn check_sql_mode(v: &str) -> Result<String, SqlError> {
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

/// A value given to SET, before it is checked against the variable's type.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum SetValue {
    Default,
    Value(Value),
}

/// `note_verbosity`'s flags, in MariaDB's order (bit 0 first).
const NOTE_VERBOSITY: &[&str] = &["basic", "unusable_keys", "explain"];

/// A `note_verbosity` value (a SET: a comma list of [`NOTE_VERBOSITY`], any case, or its bit
/// mask 0-7) in canonical form; 1231 for anything else, 1232 for a non-integer number.
pub(crate) fn note_verbosity(v: &Value) -> Result<Value, SqlError> {
    let name = "note_verbosity";
    let bits: u32 = match v {
        Value::Int(i) if (0..8).contains(i) => *i as u32,
        Value::UInt(u) if *u < 8 => *u as u32,
        Value::Int(_) | Value::UInt(_) => {
            return Err(wrong_value(name, &value_text(v).unwrap_or_default()))
        }
        Value::Bytes(b) => {
            let s = String::from_utf8_lossy(b);
            let mut bits = 0;
            // Empty elements are skipped; 1231 names the first unknown one.
            for part in s.split(',').filter(|p| !p.is_empty()) {
                let i = NOTE_VERBOSITY
                    .iter()
                    .position(|n| n.eq_ignore_ascii_case(part))
                    .ok_or_else(|| wrong_value(name, part))?;
                bits |= 1 << i;
            }
            bits
        }
        Value::Null => return Err(wrong_value(name, "NULL")),
        _ => return Err(wrong_type(name)),
    };
    let names: Vec<&str> = NOTE_VERBOSITY
        .iter()
        .enumerate()
        .filter(|(i, _)| bits >> i & 1 == 1)
        .map(|(_, n)| *n)
        .collect();
    Ok(text(names.join(",")))
}

pub(crate) fn wrong_value(name: &str, v: &str) -> SqlError {
    SqlError::of(
        errors::ER_WRONG_VALUE_FOR_VAR,
        format!("Variable '{name}' can't be set to the value of '{v}'"),
    )
}

pub(crate) fn wrong_type(name: &str) -> SqlError {
    SqlError::of(
        errors::ER_WRONG_TYPE_FOR_VAR,
        format!("Incorrect argument type to variable '{name}'"),
    )
}

pub(crate) fn value_text(v: &Value) -> Option<String> {
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
pub(crate) fn statement_time(v: &Value) -> Result<Value, SqlError> {
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

pub(crate) fn coerce(
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
        Kind::Size { min, block } => coerce_size(name, value, min, block, warnings),
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
            match allowed
                .iter()
                .find(|a| a.eq_ignore_ascii_case(&s))
                .or(by_index)
            {
                Some(a) => Ok(text(*a)),
                None => Err(wrong_value(name, &s)),
            }
        }
    }
}

/// A [`Kind::Size`] value: clamped to `min..=u64::MAX` and rounded down to a multiple of
/// `block`, with MariaDB's warning 1292 when that changed it; 1232 for a non-integer.
fn coerce_size(
    name: &str,
    value: &Value,
    min: u64,
    block: u64,
    warnings: &mut Vec<(String, u16, String)>,
) -> Result<Value, SqlError> {
    let i: i128 = match value {
        Value::Int(i) => i128::from(*i),
        Value::UInt(u) => i128::from(*u),
        Value::Decimal(d) if !d.contains(['.', 'e', 'E']) => {
            d.parse().map_err(|_| wrong_type(name))?
        }
        _ => return Err(wrong_type(name)),
    };
    let clamped = i.clamp(i128::from(min), i128::from(u64::MAX)) as u64;
    let v = clamped - clamped % block.max(1);
    debug_assert!(v >= min && v.is_multiple_of(block.max(1)));
    if i128::from(v) != i {
        warnings.push((
            "Warning".into(),
            1292,
            format!("Truncated incorrect {name} value: '{i}'"),
        ));
    }
    Ok(Value::UInt(v))
}

/// The values onelog honours for a variable whose other values it does not implement; `None`
/// for variables that are honoured whatever their value (or owned elsewhere: the connection
/// limits, statement limits, sql_mode, isolation, durability). A value in the list, or equal
/// to the variable's current value (what mysqldump and connectors re-set), is accepted;
/// anything else is refused (1235), never stored and ignored.
pub(crate) fn honoured_values(name: &str) -> Option<&'static [&'static str]> {
    const UTF8: &[&str] = &["utf8mb4", "utf8mb3", "utf8"];
    Some(match name {
        // onelog receives and sends UTF-8 bytes without conversion; `binary` for the client
        // and the connection (`SET NAMES binary`) makes literals binary strings, which is
        // also no conversion (a binary string stored in a utf8mb4 column is checked).
        "character_set_client" | "character_set_connection" => {
            &["utf8mb4", "utf8mb3", "utf8", "binary"]
        }
        "character_set_database" | "character_set_server" => UTF8,
        "character_set_results" => &["utf8mb4", "utf8mb3", "utf8", "binary", ""],
        "character_set_filesystem" => &["binary"],
        // Values are stored, not acted on: only the defaults describe what onelog does.
        "auto_increment_increment" | "auto_increment_offset" => &["1"],
        "default_storage_engine" | "storage_engine" => &["InnoDB"],
        "event_scheduler" => &["OFF"],
        "default_master_connection" => &[""],
        "init_connect" => &[""],
        // The slow log writes every slow statement (`crate::querylog`), with no extra detail.
        "log_slow_rate_limit" => &["1"],
        "log_slow_verbosity" => &[""],
        "join_buffer_size" => &["262144"],
        "join_buffer_space_limit" => &["2097152"],
        "join_cache_level" => &["2"],
        "optimizer_prune_level" => &["2"],
        "optimizer_search_depth" => &["62"],
        "optimizer_use_condition_selectivity" => &["4"],
        "net_buffer_length" => &["16384"],
        "net_read_timeout" => &["30"],
        "net_write_timeout" => &["60"],
        "old_passwords" => &["0"],
        "session_track_schema" => &["1"],
        // Events are never marked LOG_EVENT_SKIP_REPLICATION_F, nor filtered by it.
        "skip_replication" => &["0"],
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

pub(crate) fn read_only(name: &str) -> SqlError {
    SqlError::of(
        errors::ER_INCORRECT_GLOBAL_LOCAL_VAR,
        format!("Variable '{name}' is a read only variable"),
    )
}
