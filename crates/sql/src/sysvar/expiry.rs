//! The binlog expiry variables: `binlog_expire_logs_seconds`, its alias in days
//! `expire_logs_days` (kept in step as MariaDB 10.11 does), and `max_binlog_total_size`.
//!
//! Owns their live values (the engine holds them: `Engine::binlog_expire_logs_seconds`,
//! `Engine::max_binlog_total_size`, which its background expiry reads) and their SET, with
//! MariaDB 10.11's answers (checked against mariadbd 10.11.19):
//! - `binlog_expire_logs_seconds`: an integer 0..=8553600 (99 days); out of range is clipped
//!   with warning 1292 `Truncated incorrect binlog_expire_logs_seconds value: '-1'`; a
//!   string, a NULL or a fraction (`1.5`) is 1232; `expire_logs_days` becomes `seconds /
//!   86400` shown with 6 decimals;
//! - `expire_logs_days`: a number 0..=99 (fractions allowed), clipped with 1292 likewise;
//!   `binlog_expire_logs_seconds` becomes `days * 86400`, truncated (0.0001 days = 8 s);
//! - `max_binlog_total_size` (MariaDB 11.4+; 10.11 has no such variable: onelog offers it
//!   because its log otherwise only grows): bytes, 0 = unlimited.
//!
//! All three are GLOBAL only (the parent module's scope checks give 1229/1238). In
//! `--binlog-storage=file` mode the classic files are not purged, so only 0 is accepted there
//! (1235): accepted means honoured.
//!
//! Called by the parent module's `get_var`/`set_var` for these names only.
//!
//! Invariants: `@@expire_logs_days` is the days value last set, or the seconds value in days
//! when the seconds were set last; the engine's seconds are always what a SET of either
//! produced (both stores happen together).

use onelog_binlog::Value;
use onelog_protocol::errors;

use crate::context::ExecContext;
use crate::error::SqlError;
use crate::server::{BinlogStorageMode, Server};
use crate::sysvar::registry::{value_text, wrong_type, SetValue};

const SECONDS: &str = "binlog_expire_logs_seconds";
const DAYS: &str = "expire_logs_days";
const TOTAL: &str = "max_binlog_total_size";
/// 99 days, the maximum of both (MariaDB 10.11).
const MAX_SECONDS: u64 = 99 * 86_400;

/// Whether `name` is one of this module's variables.
pub(crate) fn owns(name: &str) -> bool {
    matches!(name, SECONDS | DAYS | TOTAL)
}

/// `N.NNNNNN`, as MariaDB shows a DOUBLE variable.
fn days_text(days: f64) -> Value {
    Value::Decimal(format!("{days:.6}"))
}

/// The live global value of one of this module's variables.
pub(crate) fn value(server: &Server, name: &str) -> Option<Value> {
    let engine = &server.engine;
    Some(match name {
        SECONDS => Value::Int(engine.binlog_expire_logs_seconds() as i64),
        DAYS => server
            .globals
            .get(DAYS)
            .unwrap_or_else(|| days_text(engine.binlog_expire_logs_seconds() as f64 / 86_400.0)),
        TOTAL => Value::Int(engine.max_binlog_total_size().min(i64::MAX as u64) as i64),
        _ => return None,
    })
}

/// A number given to SET: an integer (`frac` false) or any number (`frac` true); 1232 for
/// anything else.
fn number(name: &str, v: &Value, frac: bool) -> Result<f64, SqlError> {
    match v {
        Value::Int(i) => Ok(*i as f64),
        Value::UInt(u) => Ok(*u as f64),
        Value::Decimal(_) | Value::Double(_) | Value::Float(_) if frac => value_text(v)
            .and_then(|t| t.parse::<f64>().ok())
            .filter(|f| f.is_finite())
            .ok_or_else(|| wrong_type(name)),
        _ => Err(wrong_type(name)),
    }
}

/// Clips `n` to `min..=max`, with MariaDB's 1292 warning naming the value given.
fn clip(cx: &mut ExecContext, name: &str, given: &Value, n: f64, max: f64) -> f64 {
    if (0.0..=max).contains(&n) {
        return n;
    }
    let shown = value_text(given).unwrap_or_default();
    cx.warnings.push((
        "Warning".into(),
        1292,
        format!("Truncated incorrect {name} value: '{shown}'"),
    ));
    n.clamp(0.0, max)
}

/// SET GLOBAL of one of this module's variables (scope already checked; `None` = DEFAULT).
pub(crate) fn set(cx: &mut ExecContext, name: &str, value: SetValue) -> Result<(), SqlError> {
    let given = match value {
        SetValue::Default => None,
        SetValue::Value(v) => Some(v),
    };
    // Everything is checked before anything is stored.
    let (seconds, days, total) = match (name, &given) {
        (TOTAL, None) => (None, None, Some(0)),
        (TOTAL, Some(v)) => {
            let n = number(name, v, false)?;
            (
                None,
                None,
                Some(clip(cx, name, v, n, i64::MAX as f64) as u64),
            )
        }
        (_, None) => (Some(0), Some(0.0), None),
        (DAYS, Some(v)) => {
            let d = clip(cx, name, v, number(name, v, true)?, 99.0);
            (Some((d * 86_400.0) as u64), Some(d), None)
        }
        (_, Some(v)) => {
            let s = clip(cx, name, v, number(name, v, false)?, MAX_SECONDS as f64) as u64;
            (Some(s), Some(s as f64 / 86_400.0), None)
        }
    };
    let turns_on = seconds.is_some_and(|s| s > 0) || total.is_some_and(|t| t > 0);
    if turns_on && cx.server.config.binlog_storage == BinlogStorageMode::File {
        return Err(SqlError::of(
            errors::ER_NOT_SUPPORTED_YET,
            format!(
                "This version of onelog doesn't yet support '{name} with --binlog-storage=file' \
                 (the classic binlog files are not purged; use --binlog-storage=engine)"
            ),
        ));
    }
    let engine = &cx.server.engine;
    if let (Some(s), Some(d)) = (seconds, days) {
        engine.set_binlog_expire_logs_seconds(s);
        cx.server.globals.put(DAYS, Some(days_text(d)));
    }
    if let Some(t) = total {
        engine.set_max_binlog_total_size(t);
    }
    debug_assert!(seconds.is_none_or(|s| engine.binlog_expire_logs_seconds() == s));
    Ok(())
}
