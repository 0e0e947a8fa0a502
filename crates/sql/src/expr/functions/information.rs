//! Information and miscellaneous functions: DATABASE, USER, CURRENT_USER, VERSION,
//! CONNECTION_ID, LAST_INSERT_ID, FOUND_ROWS, ROW_COUNT, SLEEP, BINLOG_GTID_POS,
//! MASTER_GTID_WAIT.
//!
//! BINLOG_GTID_POS(file, pos) is MariaDB's: the GTID position at offset `pos` of binlog file
//! `file` (the file's Gtid_list plus every GTID event that starts before `pos`; a `pos` below
//! 4 is 4; an empty name is the first file), NULL for a NULL argument, a `pos` outside
//! 0..2^32, an unknown file or a `pos` that is no event boundary of the file (its end is
//! one). Engine mode reads the log's classic view (`onelog_log::view`), file mode the classic
//! file itself. No privilege is needed (as in MariaDB 10.11).
//!
//! Invariants: each reads the session at evaluation time (a cached compiled statement sees
//! the current database, the last statement's counters); SLEEP waits at most an hour and is
//! interruptible (KILL, max_statement_time, a client disconnect end it).

use onelog_binlog::event::{event_type, GtidEvent, GtidListEvent};
use onelog_binlog::{GtidState, Value};
use onelog_log::read_classic_file;
use onelog_log::view::parse_view_file_name;

use super::{rt_int, rt_name, rt_str, rt_uint, sees_null, str_val, strict, volatile, FunctionDef};
use crate::error::SqlError;
use crate::expr::env::Env;
use crate::expr::numeric::{to_f64, to_i128};
use crate::expr::text::text_of;

type R = Result<Value, SqlError>;

pub(super) const FUNCTIONS: &[FunctionDef] = &[
    // CHARSET(x), COLLATION(x), COERCIBILITY(x): compiled (`Compiler::collation_call`) into
    // a call on x's description, never called by name here (no aliases).
    sees_null("CHARSET", &[], (2, 2), rt_name, |v, env| {
        let (coll, _) = described(&v, env);
        Ok(str_val(charset_of(&coll).as_bytes().to_vec()))
    }),
    sees_null("COLLATION", &[], (2, 2), rt_name, |v, env| {
        Ok(str_val(described(&v, env).0.into_bytes()))
    }),
    sees_null("COERCIBILITY", &[], (2, 2), rt_int, |v, env| {
        Ok(Value::Int(described(&v, env).1))
    }),
    sees_null(
        "DATABASE",
        &["DATABASE", "SCHEMA"],
        (0, 0),
        rt_str,
        |_, env| {
            Ok(match &env.cx.current_db {
                Some(d) => str_val(d.as_bytes().to_vec()),
                None => Value::Null,
            })
        },
    ),
    sees_null(
        "USER",
        &["USER", "SESSION_USER", "SYSTEM_USER"],
        (0, 0),
        rt_str,
        user,
    ),
    sees_null(
        "CURRENT_USER",
        &["CURRENT_USER"],
        (0, 0),
        rt_str,
        current_user,
    ),
    // No role can be set (CREATE ROLE and SET ROLE are refused), so none is ever current.
    sees_null("CURRENT_ROLE", &["CURRENT_ROLE"], (0, 0), rt_str, |_, _| {
        Ok(Value::Null)
    }),
    sees_null("VERSION", &["VERSION"], (0, 0), rt_str, |_, env| {
        Ok(str_val(env.cx.server.config.version.as_bytes().to_vec()))
    }),
    sees_null(
        "CONNECTION_ID",
        &["CONNECTION_ID"],
        (0, 0),
        rt_uint,
        |_, env| Ok(Value::UInt(u64::from(env.cx.connection_id))),
    ),
    // LAST_INSERT_ID(x) returns x (MariaDB also makes it the next LAST_INSERT_ID()).
    sees_null(
        "LAST_INSERT_ID",
        &["LAST_INSERT_ID"],
        (0, 1),
        rt_uint,
        |v, env| {
            Ok(match v.first() {
                Some(x) => x.clone(),
                None => Value::UInt(env.cx.last_insert_id),
            })
        },
    ),
    sees_null("FOUND_ROWS", &["FOUND_ROWS"], (0, 0), rt_uint, |_, env| {
        Ok(Value::UInt(env.cx.found_rows))
    }),
    sees_null("ROW_COUNT", &["ROW_COUNT"], (0, 0), rt_int, |_, env| {
        Ok(Value::Int(env.cx.row_count))
    }),
    volatile(sees_null("SLEEP", &["SLEEP"], (1, 1), rt_int, sleep)),
    sees_null(
        "MASTER_GTID_WAIT",
        &["MASTER_GTID_WAIT"],
        (1, 2),
        rt_int,
        master_gtid_wait,
    ),
    strict(
        "BINLOG_GTID_POS",
        &["BINLOG_GTID_POS"],
        (2, 2),
        rt_str,
        binlog_gtid_pos,
    ),
];

/// BINLOG_GTID_POS(file, pos): see the module docs.
fn binlog_gtid_pos(v: Vec<Value>, env: &Env) -> R {
    let name = String::from_utf8_lossy(&text_of(&v[0])).into_owned();
    let pos = match to_i128(&v[1]) {
        Some(p) if (0..=i128::from(u32::MAX)).contains(&p) => p as u64,
        _ => return Ok(Value::Null),
    };
    let log = env.cx.server.engine.log();
    let state = match log.classic_files() {
        Some(files) => {
            let file = if name.is_empty() {
                files.first()
            } else {
                files.iter().find(|f| f.name == name)
            };
            file.and_then(|f| classic_gtid_pos(&f.path, pos))
        }
        None => {
            let number = if name.is_empty() {
                log.segments().first().map(|s| s.number)
            } else {
                parse_view_file_name(&name)
            };
            number.and_then(|n| log.view_gtid_pos(n, pos).ok().flatten())
        }
    };
    Ok(match state {
        Some(s) => str_val(s.pos().to_string().into_bytes()),
        None => Value::Null,
    })
}

/// File mode's BINLOG_GTID_POS: the state at `pos` of the classic file at `path`, None when
/// `pos` is no event boundary of it (or it cannot be read).
fn classic_gtid_pos(path: &std::path::Path, pos: u64) -> Option<GtidState> {
    let pos = pos.max(4);
    let data = std::fs::read(path).ok()?;
    let name = path.display().to_string();
    let mut state = GtidState::new();
    let (mut cur, mut valid, mut have_list) = (4u64, false, false);
    for ev in read_classic_file(&name, &data) {
        valid |= cur == pos;
        if have_list && cur >= pos {
            break;
        }
        let ev = ev.ok()?;
        match ev.event_type() {
            event_type::GTID_LIST => {
                state = GtidListEvent::decode(ev.bytes).ok()?.to_state();
                have_list = true;
            }
            event_type::GTID => state.record(GtidEvent::decode(ev.bytes).ok()?.gtid),
            _ => {}
        }
        cur = ev.offset + ev.bytes.len() as u64;
    }
    valid |= cur == pos;
    (valid && cur >= pos).then_some(state)
}

/// MASTER_GTID_WAIT(pos [, timeout]) (REPLICATION_FACTS.md §2.8): 0 once `gtid_slave_pos`
/// reached every listed GTID's sequence number in its domain (server ids not compared), -1 at
/// the timeout (seconds, fractional; negative, NULL or omitted: forever; 0: check only), NULL
/// for a NULL position, 0 at once for ''. Waits in slices so that KILL and
/// max_statement_time end it; counts Master_gtid_wait_* as MariaDB.
fn master_gtid_wait(v: Vec<Value>, env: &Env) -> R {
    use std::sync::atomic::Ordering::Relaxed;
    use std::time::{Duration, Instant};
    if v[0] == Value::Null {
        return Ok(Value::Null);
    }
    let counters = &env.cx.server.status;
    let list = String::from_utf8_lossy(&text_of(&v[0])).into_owned();
    if list.trim().is_empty() {
        counters.gtid_wait_count.fetch_add(1, Relaxed);
        return Ok(Value::Int(0));
    }
    // One GTID per item; a domain may repeat (MariaDB waits for each in turn).
    let until = list
        .split(',')
        .map(|g| g.trim().parse::<onelog_binlog::Gtid>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| {
            SqlError::of(
                onelog_protocol::errors::ER_INCORRECT_GTID_STATE,
                "Could not parse GTID list",
            )
        })?;
    counters.gtid_wait_count.fetch_add(1, Relaxed);
    let timeout = match v.get(1).and_then(to_f64) {
        Some(t) if t >= 0.0 => Some(Duration::from_secs_f64(t.min(1e9))),
        _ => None,
    };
    let reached = |pos: &onelog_binlog::GtidPos| {
        until
            .iter()
            .all(|g| pos.get(g.domain_id).is_some_and(|p| p.seq_no >= g.seq_no))
    };
    let engine = &env.cx.server.engine;
    let guard = &env.cx.guard;
    let start = Instant::now();
    let deadline = timeout.map(|t| start + t);
    guard.set_state("Waiting for GTID to be applied");
    let done = loop {
        let now = Instant::now();
        let slice = deadline.map_or(Duration::from_millis(50), |d| {
            d.saturating_duration_since(now)
                .min(Duration::from_millis(50))
        });
        if engine.wait_slave_pos(&reached, slice) {
            break true;
        }
        if let Err(e) = guard.check_now() {
            guard.set_state("Sending data");
            return Err(e);
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            break false;
        }
        if slice.is_zero() {
            // The engine answered at once (its wait cannot block): do not spin.
            std::thread::sleep(Duration::from_millis(10));
        }
    };
    guard.set_state("Sending data");
    let waited = start.elapsed().as_micros().min(u128::from(u64::MAX)) as u64;
    counters.gtid_wait_time.fetch_add(waited, Relaxed);
    if !done {
        counters.gtid_wait_timeouts.fetch_add(1, Relaxed);
    }
    Ok(Value::Int(if done { 0 } else { -1 }))
}

fn user(_: Vec<Value>, env: &Env) -> R {
    Ok(str_val(
        format!("{}@{}", env.cx.user, env.cx.host).into_bytes(),
    ))
}

/// CURRENT_USER(): the account the privileges are checked against, as MariaDB: the one the
/// session logged in as (its host pattern, `u@%`, where USER() says where the client is), or a
/// `SQL SECURITY DEFINER` view's definer while the view's SELECT runs.
fn current_user(_: Vec<Value>, env: &Env) -> R {
    let account = match env.cx.definer.borrow().as_ref() {
        Some(a) => Some((a.user.clone(), a.host.clone())),
        None => env.cx.current_account(),
    };
    let (u, h) = account.unwrap_or_else(|| (env.cx.user.clone(), env.cx.host.clone()));
    Ok(str_val(format!("{u}@{h}").into_bytes()))
}

/// SLEEP(secs): 0 after the wait (at most an hour).
fn sleep(v: Vec<Value>, env: &Env) -> R {
    let secs = to_f64(&v[0]).unwrap_or(0.0).clamp(0.0, 3600.0);
    debug_assert!((0.0..=3600.0).contains(&secs));
    let guard = &env.cx.guard;
    guard.set_state("User sleep");
    guard.sleep(std::time::Duration::from_secs_f64(secs))?;
    guard.set_state("Sending data");
    Ok(Value::Int(0))
}

/// The collation name and coercibility a compiled CHARSET/COLLATION/COERCIBILITY call
/// describes. Its arguments (`Compiler::collation_call`): `[name, co]` with `co >= 0` for a
/// description made at compilation (`name` NULL: the connection's collation), or `[value,
/// -co]` for a variable or parameter, described here from its value: a string has the
/// connection's collation (a system variable the system charset's, as MariaDB's
/// SYSCONST values) with coercibility `co`, a number `binary` NUMERIC (5), NULL `binary`
/// (IMPLICIT for a user variable, IGNORABLE otherwise).
fn described(v: &[Value], env: &Env) -> (String, i64) {
    let conn = || {
        crate::expr::env::connection_collation(env.cx)
            .name()
            .to_string()
    };
    let co = match v.get(1) {
        Some(Value::Int(c)) => *c,
        _ => 6,
    };
    if co >= 0 {
        return match v.first() {
            Some(Value::Bytes(name)) => (String::from_utf8_lossy(name).into_owned(), co),
            _ => (conn(), co),
        };
    }
    let co = -co;
    match v.first() {
        Some(Value::Bytes(_)) if co == 3 => (SYSTEM_COLLATION.to_string(), co),
        Some(Value::Bytes(_)) => (conn(), co),
        Some(Value::Null) | None if co == 2 => ("binary".to_string(), 2),
        Some(Value::Null) | None => ("binary".to_string(), 6),
        Some(_) => ("binary".to_string(), 5),
    }
}

/// The collation of MariaDB's SYSCONST strings (the system character set, utf8mb3).
pub(crate) const SYSTEM_COLLATION: &str = "utf8mb3_general_ci";

/// The character set of the collation called `name` (its prefix; `binary` is its own).
fn charset_of(name: &str) -> &str {
    name.split('_').next().unwrap_or(name)
}

#[cfg(test)]
mod tests {
    use super::super::check_against_mariadb;

    #[test]
    fn information_functions_match_mariadb() {
        // Expected values: what MariaDB 10.11.19 returned for `SELECT <expr>` (mariadb -N -B).
        check_against_mariadb(&[
            ("DATABASE()", "NULL"),
            ("USER()", "root@localhost"),
            ("CURRENT_USER()", "root@localhost"),
            ("LAST_INSERT_ID()", "0"),
            ("LAST_INSERT_ID(5)", "5"),
            ("SLEEP(0)", "0"),
            ("SCHEMA()", "NULL"),
        ]);
    }
}
