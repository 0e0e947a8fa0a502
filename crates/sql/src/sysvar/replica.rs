//! The replica's system variables whose values live outside the variable stores, and the
//! checks MariaDB makes when they are set: `gtid_slave_pos`, `gtid_current_pos` and
//! `gtid_strict_mode` (the engine holds them), `last_gtid` (the thread's last commit),
//! `read_only` (mirrored in an atomic the write statements read: [`check_read_only`]), and
//! `slave_parallel_threads` / `slave_parallel_mode` (stored as usual, but not while a replica
//! thread runs: 1198).
//!
//! Also owns the GTID list parser with MariaDB's errors ([`parse_gtid_list`]: 1941, 1943),
//! shared with START SLAVE UNTIL.
//!
//! Invariants: `SET GLOBAL gtid_slave_pos` reaches the engine only after every check passed
//! (no replica thread runs; the list parses; under `gtid_strict_mode` no GTID of this server in
//! the binlog is newer than the value: 1947 / 1948, warnings otherwise).

use std::sync::atomic::Ordering;

use onelog_binlog::{Gtid, GtidPos, Value};
use onelog_engine::Engine;
use onelog_protocol::errors;

use crate::context::ExecContext;
use crate::error::SqlError;
use crate::server::Server;

fn text(s: String) -> Value {
    Value::bytes(s.into_bytes())
}

/// True for the variables this module reads live.
pub(super) fn owns(name: &str) -> bool {
    matches!(
        name,
        "gtid_slave_pos" | "gtid_current_pos" | "gtid_strict_mode" | "last_gtid"
    )
}

/// The live value of one of [`owns`]'s variables.
pub(super) fn value(server: &Server, name: &str) -> Option<Value> {
    let engine = &server.engine;
    Some(match name {
        "gtid_slave_pos" => text(engine.gtid_slave_pos().to_string()),
        "gtid_current_pos" => text(engine.gtid_current_pos().to_string()),
        "gtid_strict_mode" => Value::Int(i64::from(engine.gtid_strict_mode())),
        // The GTID of the last commit of this connection's thread (one thread per connection).
        "last_gtid" => text(Engine::thread_last_gtid().map_or(String::new(), |g| g.to_string())),
        _ => return None,
    })
}

/// `read_only`: a statement that changes data fails with 1290 while it is ON, unless the
/// session holds READ_ONLY ADMIN (SUPER alone no longer does in MariaDB 10.11, MDEV-29596) or
/// is not privilege-checked (the replica's applier, embedded use), as MariaDB's `--read-only`.
pub(crate) fn check_read_only(cx: &ExecContext) -> Result<(), SqlError> {
    use crate::privilege::READ_ONLY_ADMIN;
    if !cx.server.read_only.load(Ordering::Relaxed)
        || !cx.privs.enforce
        || cx.privs.global() & READ_ONLY_ADMIN != 0
    {
        return Ok(());
    }
    Err(SqlError::of(
        errors::ER_OPTION_PREVENTS_STATEMENT,
        "The MariaDB server is running with the --read-only option so it cannot execute this \
         statement",
    ))
}

pub use onelog_replication::replica::ReplicaSettings;

/// The privilege `SET GLOBAL name` needs, with its name for 1227 (MariaDB 10.11's for the
/// replica's variables and `read_only`; SUPER for the others).
pub(crate) fn global_set_privilege(name: &str) -> (u64, &'static str) {
    use crate::privilege::SUPER;
    use crate::privilege::{READ_ONLY_ADMIN, REPLICATION_MASTER_ADMIN, REPLICATION_SLAVE_ADMIN};
    match name.to_ascii_lowercase().as_str() {
        "gtid_slave_pos"
        | "gtid_strict_mode"
        | "gtid_ignore_duplicates"
        | "slave_parallel_threads"
        | "slave_parallel_mode"
        | "slave_net_timeout" => (
            SUPER | REPLICATION_SLAVE_ADMIN,
            "SUPER, REPLICATION SLAVE ADMIN",
        ),
        "gtid_domain_id" => (
            SUPER | REPLICATION_MASTER_ADMIN,
            "SUPER, REPLICATION MASTER ADMIN",
        ),
        "read_only" => (READ_ONLY_ADMIN, "READ_ONLY ADMIN"),
        _ => (SUPER, "SUPER"),
    }
}

/// [`ReplicaSettings`] now.
pub fn settings(server: &Server) -> ReplicaSettings {
    use onelog_replication::replica::ParallelMode;
    let int = |name: &str, default: u64| match super::global_var(server, name) {
        Ok(Value::Int(i)) => i.max(0) as u64,
        _ => default,
    };
    let mode = match super::global_var(server, "slave_parallel_mode") {
        Ok(Value::Bytes(b)) => ParallelMode::from_name(&String::from_utf8_lossy(&b)),
        _ => None,
    };
    ReplicaSettings {
        slave_net_timeout: int("slave_net_timeout", 60),
        slave_parallel_threads: int("slave_parallel_threads", 0) as usize,
        slave_parallel_mode: mode.unwrap_or(ParallelMode::Optimistic),
        slave_transaction_retries: int("slave_transaction_retries", 10),
        gtid_ignore_duplicates: int("gtid_ignore_duplicates", 0) != 0,
    }
}

/// 1198 `ER_SLAVE_MUST_STOP`.
pub(crate) fn slave_must_stop() -> SqlError {
    SqlError::of(
        errors::ER_SLAVE_MUST_STOP,
        "This operation cannot be performed as you have a running slave ''; run STOP SLAVE '' \
         first",
    )
}

/// True while a replica thread runs.
pub(crate) fn replica_running(server: &Server) -> bool {
    server.replica().is_some_and(|r| r.any_running())
}

/// A GTID list as MariaDB parses it: 1941 when it does not parse, 1943 for two GTIDs of one
/// domain.
pub(crate) fn parse_gtid_list(s: &str) -> Result<GtidPos, SqlError> {
    let bad = || SqlError::of(errors::ER_INCORRECT_GTID_STATE, "Could not parse GTID list");
    let mut pos = GtidPos::new();
    for part in s.split(',').map(str::trim) {
        if part.is_empty() && s.trim().is_empty() {
            continue;
        }
        let g: Gtid = part.parse().map_err(|_| bad())?;
        if let Some(old) = pos.get(g.domain_id) {
            return Err(SqlError::of(
                errors::ER_DUPLICATE_GTID_DOMAIN,
                format!(
                    "GTID {g} and {old} conflict (duplicate domain id {})",
                    g.domain_id
                ),
            ));
        }
        pos.set(g);
    }
    Ok(pos)
}

/// Recomputes `cx.origin` from the session's `gtid_domain_id`, `server_id`, `gtid_seq_no` and
/// `timestamp` (after a SET of one of them, and when the session starts or a SET STATEMENT
/// ends).
pub(crate) fn refresh_origin(cx: &mut ExecContext) {
    let int = |name: &str| match cx.vars.get(name) {
        Some(Value::Int(i)) => Some(*i as u64),
        Some(Value::UInt(u)) => Some(*u),
        _ => None,
    };
    let cfg = &cx.server.config;
    let domain_id = int("gtid_domain_id")
        .map(|d| d as u32)
        .filter(|d| *d != cfg.gtid_domain_id);
    let server_id = int("server_id")
        .map(|d| d as u32)
        .filter(|d| *d != cfg.server_id);
    let seq_no = int("gtid_seq_no").filter(|s| *s != 0);
    // `SET timestamp`: the events carry the session's clock, as MariaDB's do.
    let timestamp = cx
        .fixed_time()
        .map(|(s, _)| s.clamp(0, i64::from(u32::MAX)) as u32);
    cx.origin =
        (domain_id.is_some() || server_id.is_some() || seq_no.is_some() || timestamp.is_some())
            .then_some(onelog_engine::CommitOrigin {
                domain_id,
                server_id,
                seq_no,
                timestamp,
                ..Default::default()
            });
}

/// After a statement ran in the session's origin scope: a fixed `gtid_seq_no` the commit used
/// goes back to 0 (MariaDB uses it for one transaction).
pub(crate) fn origin_used(cx: &mut ExecContext, after: onelog_engine::CommitOrigin) {
    if cx.origin.is_some_and(|o| o.seq_no.is_some()) && after.seq_no.is_none() {
        cx.vars.values.remove("gtid_seq_no");
        refresh_origin(cx);
    }
}

/// Checks of SET for the session GTID variables (before anything is stored): 1953 inside a
/// transaction for `gtid_domain_id` / `gtid_seq_no`; `server_id` of a session needs SUPER,
/// and the server's own (GLOBAL) is fixed at startup here.
/// A session's `gtid_domain_id`, `gtid_seq_no` and `server_id` need SUPER (MariaDB: SUPER or
/// BINLOG REPLAY).
fn check_session_set(cx: &ExecContext, name: &str, global: bool) -> Result<(), SqlError> {
    if !global && matches!(name, "gtid_domain_id" | "gtid_seq_no" | "server_id") {
        // MariaDB 10.11: SUPER or BINLOG REPLAY (onelog has no BINLOG REPLAY to grant).
        cx.require_any_global(crate::privilege::SUPER, "SUPER, BINLOG REPLAY")?;
    }
    match name {
        "gtid_domain_id" | "gtid_seq_no" if !global && cx.explicit => Err(SqlError::of(
            errors::ER_INSIDE_TRANSACTION_PREVENTS_SWITCH_GTID_DOMAIN_ID_SEQ_NO,
            "Cannot modify @@session.gtid_domain_id or @@session.gtid_seq_no inside a \
             transaction",
        )),
        "server_id" if global => Err(SqlError::of(
            errors::ER_NOT_SUPPORTED_YET,
            "This version of onelog doesn't yet support 'SET GLOBAL server_id' (set \
             --server-id at startup)",
        )),
        _ => Ok(()),
    }
}

/// SET of one of the replica's variables (already coerced; `None`: DEFAULT). Returns true
/// when the value went where it lives (nothing more to store), false when the caller stores
/// it as usual.
pub(super) fn set(
    cx: &mut ExecContext,
    name: &str,
    global: bool,
    value: Option<&Value>,
) -> Result<bool, SqlError> {
    check_session_set(cx, name, global)?;
    match name {
        "slave_parallel_threads" | "slave_parallel_mode" => {
            if replica_running(&cx.server) {
                return Err(slave_must_stop());
            }
            Ok(false)
        }
        "read_only" => {
            let on = matches!(value, Some(Value::Int(i)) if *i != 0);
            cx.server.read_only.store(on, Ordering::Relaxed);
            Ok(false)
        }
        "gtid_strict_mode" => {
            let on = matches!(value, Some(Value::Int(i)) if *i != 0);
            cx.server.engine.set_gtid_strict_mode(on);
            Ok(true)
        }
        "gtid_slave_pos" => {
            let s = match value {
                Some(Value::Bytes(b)) => String::from_utf8_lossy(b).into_owned(),
                _ => String::new(),
            };
            set_slave_pos(cx, &s)?;
            Ok(true)
        }
        _ => Ok(false),
    }
}

/// `SET GLOBAL gtid_slave_pos = s` (MariaDB's `rpl_gtid_pos_check`).
fn set_slave_pos(cx: &mut ExecContext, s: &str) -> Result<(), SqlError> {
    if replica_running(&cx.server) {
        return Err(slave_must_stop());
    }
    let pos = parse_gtid_list(s)?;
    let engine = cx.server.engine.clone();
    let strict = engine.gtid_strict_mode();
    let own = cx.server.config.server_id;
    for (code, message) in conflicts(&pos, &engine.log().gtid_state().pos(), own) {
        if strict {
            return Err(SqlError::new(code, "HY000", message));
        }
        cx.warnings.push(("Warning".into(), code, message));
    }
    engine.set_gtid_slave_pos(pos)?;
    Ok(())
}

/// MariaDB's 1947 / 1948 for a new `gtid_slave_pos` against the binlog's last GTIDs
/// (`binlog_pos`): only GTIDs of this server (`own`) count; at most one 1948.
pub(crate) fn conflicts(pos: &GtidPos, binlog_pos: &GtidPos, own: u32) -> Vec<(u16, String)> {
    const TAIL: &str = "If MASTER_GTID_POS=CURRENT_POS is used, the binlog position will \
                        override the new value of @@gtid_slave_pos";
    let mut out = Vec::new();
    let mut missing_given = false;
    for b in binlog_pos.iter().filter(|b| b.server_id == own) {
        match pos.get(b.domain_id) {
            None if !missing_given => {
                missing_given = true;
                out.push((
                    errors::ER_MASTER_GTID_POS_MISSING_DOMAIN.code,
                    format!(
                        "Specified value for @@gtid_slave_pos contains no value for replication \
                         domain {}. This conflicts with the binary log which contains GTID {b}. \
                         {TAIL}",
                        b.domain_id
                    ),
                ));
            }
            Some(g) if g.seq_no < b.seq_no => out.push((
                errors::ER_MASTER_GTID_POS_CONFLICTS_WITH_BINLOG.code,
                format!(
                    "Specified GTID {g} conflicts with the binary log which contains a more \
                     recent GTID {b}. {TAIL}"
                ),
            )),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gtid_lists_parse_with_mariadb_errors() {
        assert_eq!(parse_gtid_list("").unwrap(), GtidPos::new());
        assert_eq!(
            parse_gtid_list(" 0-1-5, 2-1-3").unwrap().to_string(),
            "0-1-5,2-1-3"
        );
        assert_eq!(parse_gtid_list("0-1").unwrap_err().code, 1941);
        assert_eq!(parse_gtid_list("0-1-1,").unwrap_err().code, 1941);
        let e = parse_gtid_list("0-1-1,0-1-2").unwrap_err();
        assert_eq!(e.code, 1943);
        assert_eq!(
            e.message,
            "GTID 0-1-2 and 0-1-1 conflict (duplicate domain id 0)"
        );
    }

    #[test]
    fn slave_pos_conflicts_only_with_own_gtids() {
        let binlog: GtidPos = "0-2-103,3-2-10,8-77-1,9-2-4".parse().unwrap();
        let set: GtidPos = "0-1-102,3-1-50".parse().unwrap();
        let c = conflicts(&set, &binlog, 2);
        let codes: Vec<u16> = c.iter().map(|c| c.0).collect();
        assert_eq!(codes, vec![1947, 1948]);
        assert!(c[0].1.starts_with(
            "Specified GTID 0-1-102 conflicts with the binary log which contains a more recent \
             GTID 0-2-103."
        ));
        assert!(c[1].1.starts_with(
            "Specified value for @@gtid_slave_pos contains no value for replication domain 9. \
             This conflicts with the binary log which contains GTID 9-2-4."
        ));
        let fine: GtidPos = "0-1-200,3-1-10,9-9-4".parse().unwrap();
        assert!(conflicts(&fine, &binlog, 2).is_empty());
    }
}
