//! Information and miscellaneous functions: DATABASE, USER, CURRENT_USER, VERSION,
//! CONNECTION_ID, LAST_INSERT_ID, FOUND_ROWS, ROW_COUNT, SLEEP.
//!
//! Invariants: each reads the session at evaluation time (a cached compiled statement sees
//! the current database, the last statement's counters); SLEEP waits at most an hour and is
//! interruptible (KILL, max_statement_time, a client disconnect end it).

use onelog_binlog::Value;

use super::{rt_int, rt_str, rt_uint, sees_null, str_val, FunctionDef};
use crate::error::SqlError;
use crate::expr::env::Env;
use crate::expr::numeric::to_f64;

type R = Result<Value, SqlError>;

pub(super) const FUNCTIONS: &[FunctionDef] = &[
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
    sees_null("CURRENT_USER", &["CURRENT_USER"], (0, 0), rt_str, user),
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
    sees_null("SLEEP", &["SLEEP"], (1, 1), rt_int, sleep),
];

fn user(_: Vec<Value>, env: &Env) -> R {
    Ok(str_val(
        format!("{}@{}", env.cx.user, env.cx.host).into_bytes(),
    ))
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
