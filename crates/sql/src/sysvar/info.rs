//! `information_schema.SYSTEM_VARIABLES`: one row per variable of the registry ([`VARS`]), in
//! the registry's order, with MariaDB 10.11's columns (VARIABLE_NAME .. GLOBAL_VALUE_PATH).
//!
//! Values are the ones `@@session.x` / `@@global.x` read ([`get_var`]), printed as SHOW
//! VARIABLES prints them (booleans ON/OFF); SESSION_VALUE is NULL for a global-only variable
//! and GLOBAL_VALUE for a session-only one, as in MariaDB. GLOBAL_VALUE_ORIGIN is `SQL` once a
//! SET GLOBAL set the variable, `COMMAND-LINE` when a server option moved a configured
//! variable off its default, else `COMPILE-TIME`. The type name, comment, value list and
//! command-line kind are MariaDB's (`meta`); the bounds of a settable integer are the ones
//! onelog's SET enforces (the registry's), and its value list the values the registry takes.
//! READ_ONLY says whether onelog's SET may change it. GLOBAL_VALUE_PATH is always NULL.

use onelog_binlog::Value;

use super::meta::{meta, Meta};
use super::*;
use crate::server::ServerConfig;

/// The rows of SYSTEM_VARIABLES for the session `cx`.
pub(crate) fn system_variables_rows(cx: &ExecContext) -> Vec<Vec<Value>> {
    let defaults = ServerConfig::new("");
    VARS.iter()
        .filter(|d| exists_here(&cx.server, d))
        .map(|d| row(cx, &defaults, d))
        .collect()
}

fn opt(s: Option<&str>) -> Value {
    s.map_or(Value::Null, text)
}

fn row(cx: &ExecContext, defaults: &ServerConfig, d: &VarDef) -> Vec<Value> {
    let m = meta(d.name);
    let value = |scope| {
        get_var(cx, d.name, scope)
            .ok()
            .map_or(Value::Null, |v| text(show_text(d, &v)))
    };
    let session = if d.scope == Global {
        Value::Null
    } else {
        value(VarScope::Session)
    };
    let global = if d.scope == Sess {
        Value::Null
    } else {
        value(VarScope::Global)
    };
    let configured = config_default(defaults, d.name);
    let origin = if cx.server.globals.was_set_by_sql(d.name) {
        "SQL"
    } else if matches!((&configured, &global), (Some(c), Value::Bytes(g)) if c.as_bytes() != g.as_slice())
    {
        "COMMAND-LINE"
    } else {
        "COMPILE-TIME"
    };
    let default = match (configured, m) {
        (Some(c), _) => text(c),
        (None, Some(Meta { default: None, .. })) => Value::Null,
        (None, _) => registry_default(d, m),
    };
    let scope = match d.scope {
        Scope::Both => "SESSION",
        Scope::Global => "GLOBAL",
        Scope::Session => "SESSION ONLY",
    };
    let ty = m.map_or_else(|| kind_type(d.kind), |m| m.ty);
    // A DOUBLE (`max_statement_time`) has its own SET (`statement_time`): MariaDB's bounds.
    let integral = m.is_none_or(|m| m.ty != "DOUBLE");
    let (min, max, block) = match (d.settable && integral, d.kind) {
        (true, Kind::Int { min, max }) => (
            text(min.to_string()),
            text(max.to_string()),
            opt(m.and_then(|m| m.block).or(Some("1"))),
        ),
        (true, Kind::Size { min, block }) => (
            text(min.to_string()),
            text(u64::MAX.to_string()),
            text(block.to_string()),
        ),
        _ => (
            opt(m.and_then(|m| m.min)),
            opt(m.and_then(|m| m.max)),
            opt(m.and_then(|m| m.block)),
        ),
    };
    let values = match d.kind {
        Kind::Enum(list) => text(list.join(",")),
        Kind::Bool => text("OFF,ON"),
        _ => opt(m.and_then(|m| m.values)),
    };
    vec![
        text(d.name.to_ascii_uppercase()),
        session,
        global,
        text(origin),
        default,
        text(scope),
        text(ty),
        text(m.map_or("", |m| m.comment)),
        min,
        max,
        block,
        values,
        text(if d.settable { "NO" } else { "YES" }),
        opt(m.and_then(|m| m.command_line)),
        Value::Null,
    ]
}

/// DEFAULT_VALUE from the registry's default, in MariaDB's spelling where it means the same
/// (`0.000000` for a DOUBLE's 0); MariaDB's own default where the registry has none.
fn registry_default(d: &VarDef, m: Option<&Meta>) -> Value {
    if d.default.is_empty() {
        return opt(m.and_then(|m| m.default));
    }
    let ours = show_text(d, &typed_default(d));
    match m.and_then(|m| m.default) {
        Some(theirs)
            if theirs.parse::<f64>().ok().is_some()
                && theirs.parse::<f64>().ok() == ours.parse::<f64>().ok() =>
        {
            text(theirs)
        }
        _ => text(ours),
    }
}

/// The default of a variable that a server option configures (`c`: `ServerConfig::new`'s
/// values), as SHOW VARIABLES prints it; None for the others.
fn config_default(c: &ServerConfig, name: &str) -> Option<String> {
    let on_off = |b: bool| if b { "ON" } else { "OFF" }.to_string();
    Some(match name {
        "port" => c.port.to_string(),
        "server_id" => c.server_id.to_string(),
        "gtid_domain_id" => c.gtid_domain_id.to_string(),
        "innodb_flush_log_at_trx_commit" => c.flush_log_at_trx_commit.to_string(),
        "max_binlog_size" => c.max_binlog_size.to_string(),
        "binlog_state_interval" => c.binlog_state_interval.to_string(),
        "binlog_row_metadata" => c.binlog_row_metadata.name().to_string(),
        "max_connections" => c.max_connections.to_string(),
        "max_allowed_packet" => c.max_allowed_packet.to_string(),
        "max_session_mem_used" => c.max_session_mem_used.min(i64::MAX as u64).to_string(),
        "wait_timeout" => c.wait_timeout.to_string(),
        "binlog_storage" => c.binlog_storage.name().to_string(),
        "sync_binlog" => c.sync_binlog.to_string(),
        "binlog_file_mirror" => on_off(c.binlog_file_mirror),
        "binlog_expire_logs_seconds" => c.binlog_expire_logs_seconds.to_string(),
        "max_binlog_total_size" => c.max_binlog_total_size.to_string(),
        "binlog_cache_size" => c.binlog_cache_size.to_string(),
        "max_binlog_cache_size" => c.max_binlog_cache_size.to_string(),
        _ => return None,
    })
}

/// MariaDB's type name for a variable it does not have.
fn kind_type(k: Kind) -> &'static str {
    match k {
        Kind::Bool => "BOOLEAN",
        Kind::Int { .. } | Kind::Size { .. } => "BIGINT UNSIGNED",
        Kind::Str => "VARCHAR",
        Kind::Enum(_) => "ENUM",
    }
}

#[cfg(test)]
mod tests {
    use super::super::meta::META;
    use super::*;

    #[test]
    fn every_variable_has_metadata_and_the_table_is_sorted() {
        for w in META.windows(2) {
            assert!(w[0].name < w[1].name, "{} / {}", w[0].name, w[1].name);
        }
        for d in VARS {
            assert!(
                meta(d.name).is_some(),
                "no SYSTEM_VARIABLES metadata for {}",
                d.name
            );
        }
        assert_eq!(META.len(), VARS.len());
    }

    #[test]
    fn optimizer_switch_takes_mariadb_syntax_and_only_the_defaults() {
        let d = OPTIMIZER_SWITCH_DEFAULT;
        assert_eq!(check_optimizer_switch(d, "").unwrap(), d);
        assert_eq!(check_optimizer_switch(d, "default").unwrap(), d);
        assert_eq!(
            check_optimizer_switch(d, "MRR=OFF ,mrr=default").unwrap(),
            d
        );
        let e = check_optimizer_switch(d, "mrr=on").unwrap_err();
        assert_eq!(e.code, 1235);
        assert!(
            e.message.contains("optimizer_switch mrr=on"),
            "{}",
            e.message
        );
        let e = check_optimizer_switch(d, "mrr=off,foo").unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (
                1231,
                "Variable 'optimizer_switch' can't be set to the value of 'foo'"
            )
        );
        assert_eq!(
            check_optimizer_switch(d, " mrr=off").unwrap_err().code,
            1231
        );
        assert_eq!(
            check_optimizer_switch(d, "mrr=maybe").unwrap_err().code,
            1231
        );
        assert_eq!(
            check_optimizer_switch(d, "default=on").unwrap_err().code,
            1231
        );
    }
}
