//! User-level lock functions: GET_LOCK, RELEASE_LOCK, RELEASE_ALL_LOCKS, IS_FREE_LOCK,
//! IS_USED_LOCK, over the server's table (`crate::user_locks`).
//!
//! Arguments as MariaDB 10.11 checks them: a NULL or empty name gives NULL; a name that is
//! not a string is error 4079; a name over 192 bytes is error 1059 (its first 97 bytes and
//! `...` in the text); GET_LOCK's timeout in seconds (fractions too) is NULL with warning 1411
//! when NULL or negative. GET_LOCK shows the `User lock` state in PROCESSLIST while it waits.
//!
//! Invariants: all are volatile (evaluated at each call, never folded as constants).

use std::time::Duration;

use onelog_binlog::Value;
use onelog_protocol::errors;

use super::{rt_int, sees_null, volatile, FunctionDef};
use crate::error::SqlError;
use crate::expr::env::Env;
use crate::expr::numeric::to_f64;
use crate::expr::text::sql_text;
use crate::expr::warnings::warn;

type R = Result<Value, SqlError>;

pub(super) const FUNCTIONS: &[FunctionDef] = &[
    volatile(sees_null(
        "GET_LOCK",
        &["GET_LOCK"],
        (2, 2),
        rt_int,
        get_lock,
    )),
    volatile(sees_null(
        "RELEASE_LOCK",
        &["RELEASE_LOCK"],
        (1, 1),
        rt_int,
        |v, env| {
            let Some(name) = lock_name(&v[0], "release_lock")? else {
                return Ok(Value::Null);
            };
            let locks = env.cx.user_locks.table();
            Ok(match locks.release(env.cx.connection_id, &name) {
                Some(mine) => Value::Int(i64::from(mine)),
                None => Value::Null,
            })
        },
    )),
    volatile(sees_null(
        "RELEASE_ALL_LOCKS",
        &["RELEASE_ALL_LOCKS"],
        (0, 0),
        rt_int,
        |_, env| {
            let n = env.cx.user_locks.table().release_all(env.cx.connection_id);
            Ok(Value::Int(n as i64))
        },
    )),
    volatile(sees_null(
        "IS_FREE_LOCK",
        &["IS_FREE_LOCK"],
        (1, 1),
        rt_int,
        |v, env| {
            let Some(name) = lock_name(&v[0], "is_free_lock")? else {
                return Ok(Value::Null);
            };
            let free = env.cx.user_locks.table().holder(&name).is_none();
            Ok(Value::Int(i64::from(free)))
        },
    )),
    volatile(sees_null(
        "IS_USED_LOCK",
        &["IS_USED_LOCK"],
        (1, 1),
        rt_int,
        |v, env| {
            let Some(name) = lock_name(&v[0], "is_used_lock")? else {
                return Ok(Value::Null);
            };
            Ok(match env.cx.user_locks.table().holder(&name) {
                Some(id) => Value::Int(i64::from(id)),
                None => Value::Null,
            })
        },
    )),
];

/// Most bytes a lock name may have (MariaDB's NAME_LEN).
const MAX_NAME: usize = 192;

/// The lock name an argument gives: None (the call is NULL) for NULL or empty, 4079 for a
/// value that is not a string, 1059 past [`MAX_NAME`] bytes.
fn lock_name(v: &Value, func: &str) -> Result<Option<Vec<u8>>, SqlError> {
    let b = match v {
        Value::Null => return Ok(None),
        Value::Bytes(b) => b,
        other => {
            return Err(SqlError::of(
                errors::ER_ILLEGAL_PARAMETER_DATA_TYPE_FOR_OPERATION,
                format!(
                    "Illegal parameter data type {} for operation '{func}'",
                    type_name(other)
                ),
            ))
        }
    };
    if b.is_empty() {
        return Ok(None);
    }
    if b.len() > MAX_NAME {
        let text = String::from_utf8_lossy(b);
        let mut cut = 97;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        return Err(SqlError::of(
            errors::ER_TOO_LONG_IDENT,
            format!("Identifier name '{}...' is too long", &text[..cut]),
        ));
    }
    Ok(Some(b.to_vec()))
}

/// The SQL type MariaDB names for a value in 4079's text.
fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Int(_) => "int",
        Value::UInt(_) => "bigint unsigned",
        Value::Float(_) | Value::Double(_) => "double",
        Value::Decimal(_) => "decimal",
        Value::Date { .. } => "date",
        Value::DateTime { .. } => "datetime",
        _ => "time",
    }
}

fn get_lock(v: Vec<Value>, env: &Env) -> R {
    let Some(name) = lock_name(&v[0], "get_lock")? else {
        return Ok(Value::Null);
    };
    let secs = match &v[1] {
        Value::Null => None,
        t => to_f64(t).filter(|s| *s >= 0.0),
    };
    let Some(secs) = secs else {
        let shown = match &v[1] {
            Value::Null => "NULL".to_string(),
            t => sql_text(t).trim_matches('\'').to_string(),
        };
        warn(
            "Warning",
            1411,
            format!("Incorrect timeout value: '{shown}' for function get_lock"),
        );
        return Ok(Value::Null);
    };
    // At most a year, as MariaDB's LONG_TIMEOUT bounds it.
    let timeout = Duration::from_secs_f64(secs.min(31_536_000.0));
    let guard = &env.cx.guard;
    guard.set_state("User lock");
    let got = env
        .cx
        .user_locks
        .table()
        .acquire(env.cx.connection_id, &name, timeout, guard);
    guard.set_state("Sending data");
    Ok(Value::Int(i64::from(got?)))
}

#[cfg(test)]
mod tests {
    use super::super::check_against_mariadb;

    #[test]
    fn lock_functions_match_mariadb() {
        // Expected values: what MariaDB 10.11.19 returned for `SELECT <expr>` in one session
        // (mariadb -N -B), in this order.
        check_against_mariadb(&[
            ("GET_LOCK('a', 0)", "1"),
            ("GET_LOCK('a', 0)", "1"),
            ("RELEASE_LOCK('a')", "1"),
            ("IS_USED_LOCK('a') = CONNECTION_ID()", "1"),
            ("IS_FREE_LOCK('a')", "0"),
            ("RELEASE_LOCK('a')", "1"),
            ("IS_FREE_LOCK('a')", "1"),
            ("RELEASE_LOCK('a')", "NULL"),
            ("RELEASE_LOCK('zz')", "NULL"),
            ("GET_LOCK('b', 1) + GET_LOCK('c', 1)", "2"),
            ("RELEASE_ALL_LOCKS()", "2"),
            ("IS_USED_LOCK('b')", "NULL"),
            ("GET_LOCK('x', -1)", "NULL"),
            ("GET_LOCK('x', NULL)", "NULL"),
            ("GET_LOCK(NULL, 1)", "NULL"),
            ("GET_LOCK('', 1)", "NULL"),
            ("RELEASE_LOCK(NULL)", "NULL"),
            ("IS_FREE_LOCK(NULL)", "NULL"),
            ("GET_LOCK('A', 0)", "1"),
            ("IS_FREE_LOCK('a')", "1"),
            ("GET_LOCK('y', 'abc')", "1"),
            ("GET_LOCK(repeat('a', 192), 0)", "1"),
            ("GET_LOCK(repeat('a', 193), 0)", "ERROR 1059"),
            ("GET_LOCK(repeat('é', 100), 0)", "ERROR 1059"),
            ("GET_LOCK(5, 0)", "ERROR 4079"),
            ("GET_LOCK(1.5, 0)", "ERROR 4079"),
            ("IS_FREE_LOCK(5)", "ERROR 4079"),
            ("RELEASE_LOCK(5)", "ERROR 4079"),
        ]);
    }
}
