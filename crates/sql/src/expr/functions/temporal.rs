//! Date and time functions: NOW, CURDATE, CURTIME, UNIX_TIMESTAMP, FROM_UNIXTIME,
//! DATE_FORMAT, YEAR, MONTH, DAY, HOUR, MINUTE, SECOND, TIME, DATE.
//!
//! The session time zone is always UTC (`time_zone` takes only UTC's forms and
//! `system_time_zone` is UTC), so UTC_TIMESTAMP, UTC_DATE and UTC_TIME are NOW, CURDATE and
//! CURTIME.
//!
//! Invariants: NOW/CURDATE/CURTIME/UNIX_TIMESTAMP() read the statement's time (one value for
//! the whole statement, UTC); NOW(fsp) keeps at most `fsp` <= 6 fraction digits; a string
//! argument that is not a date gives NULL.

use onelog_binlog::Value;

use super::{int, rt_int, rt_str, sees_null, str_val, strict, FunctionDef};
use crate::error::SqlError;
use crate::expr::env::Env;
use crate::expr::ir::Expr;
use crate::expr::numeric::{to_i128, Dec};
use crate::expr::temporal::{
    civil_from_days, date_format, date_parts, datetime_from_unix, parse_datetime, parse_time,
    unix_of,
};
use crate::expr::text::text_of;
use crate::expr::types::{RType, TypeCx};
use crate::expr::warnings::warn;
use crate::wide::Wide;

type R = Result<Value, SqlError>;

/// A part of a date or time (YEAR(d), HOUR(t), ...).
const fn part(
    name: &'static str,
    aliases: &'static [&'static str],
    eval: fn(Vec<Value>, &Env) -> R,
) -> FunctionDef {
    strict(name, aliases, (1, 1), rt_int, eval)
}

pub(super) const FUNCTIONS: &[FunctionDef] = &[
    sees_null(
        "NOW",
        &[
            "NOW",
            "CURRENT_TIMESTAMP",
            "LOCALTIME",
            "LOCALTIMESTAMP",
            "UTC_TIMESTAMP",
        ],
        (0, 1),
        rt_now,
        now,
    ),
    FunctionDef {
        volatile: true,
        ..sees_null("SYSDATE", &["SYSDATE"], (0, 1), rt_now, sysdate)
    },
    sees_null(
        "CURDATE",
        &["CURDATE", "CURRENT_DATE", "UTC_DATE"],
        (0, 0),
        |_, _| RType::Date,
        curdate,
    ),
    sees_null(
        "CURTIME",
        &["CURTIME", "CURRENT_TIME", "UTC_TIME"],
        (0, 1),
        |_, _| RType::Time,
        curtime,
    ),
    sees_null(
        "UNIX_TIMESTAMP",
        &["UNIX_TIMESTAMP"],
        (0, 1),
        |args, _| {
            if args.is_empty() {
                RType::Int
            } else {
                RType::Decimal(17, 6)
            }
        },
        unix_timestamp,
    ),
    strict(
        "FROM_UNIXTIME",
        &["FROM_UNIXTIME"],
        (1, 1),
        |_, _| RType::DateTime(0),
        |v, _| Ok(datetime_from_unix(int(&v[0]) as i64, 0)),
    ),
    strict("DATE_FORMAT", &["DATE_FORMAT"], (2, 2), rt_str, |v, _| {
        Ok(match date_format(&v[0], &text_of(&v[1])) {
            Some(b) => str_val(b),
            None => Value::Null,
        })
    }),
    part("YEAR", &["YEAR"], |v, _| Ok(date_part(&v[0], |p| p.0))),
    part("MONTH", &["MONTH"], |v, _| {
        Ok(date_part(&v[0], |p| i64::from(p.1)))
    }),
    part("DAY", &["DAY", "DAYOFMONTH"], |v, _| {
        Ok(date_part(&v[0], |p| i64::from(p.2)))
    }),
    part("HOUR", &["HOUR"], |v, _| Ok(time_part(&v[0], 0))),
    part("MINUTE", &["MINUTE"], |v, _| Ok(time_part(&v[0], 1))),
    part("SECOND", &["SECOND"], |v, _| Ok(time_part(&v[0], 2))),
    strict(
        "TIME",
        &["TIME"],
        (1, 1),
        |_, _| RType::Time,
        |v, _| Ok(time_of(&v[0]).unwrap_or(Value::Null)),
    ),
    strict(
        "DATE",
        &["DATE"],
        (1, 1),
        |_, _| RType::Date,
        |v, _| {
            Ok(match date_parts(&v[0]) {
                Some((y, m, d, ..)) => Value::Date {
                    year: y as u16,
                    month: m as u8,
                    day: d as u8,
                },
                None => Value::Null,
            })
        },
    ),
];

/// NOW(fsp): DATETIME with the literal number of fraction digits asked for.
fn rt_now(args: &[Expr], _: &TypeCx) -> RType {
    RType::DateTime(match args.first() {
        Some(Expr::Lit(v)) => to_i128(v).unwrap_or(0).clamp(0, 6) as u8,
        _ => 0,
    })
}

fn now(v: Vec<Value>, env: &Env) -> R {
    let fsp = v.first().map_or(0, |x| int(x).clamp(0, 6) as u8);
    Ok(statement_now(env, fsp))
}

/// NOW(fsp) of the statement: a DATETIME with at most `fsp` (<= 6) fraction digits (also the
/// value of `DEFAULT` / `ON UPDATE CURRENT_TIMESTAMP(fsp)`).
pub(crate) fn statement_now(env: &Env, fsp: u8) -> Value {
    datetime_at(env.cx.statement_time(), fsp)
}

/// SYSDATE(fsp): the clock when it is evaluated, not the statement's start nor the time `SET
/// timestamp` fixed (MariaDB's SYSDATE without --sysdate-is-now).
fn sysdate(v: Vec<Value>, _: &Env) -> R {
    let fsp = v.first().map_or(0, |x| int(x).clamp(0, 6) as u8);
    Ok(datetime_at(crate::context::now_unix(), fsp))
}

/// The DATETIME of (seconds, microseconds) since the epoch, cut to `fsp` fraction digits.
fn datetime_at((s, us): (i64, u32), fsp: u8) -> Value {
    let unit = 10u32.pow(6 - u32::from(fsp.min(6)));
    let us = us - us % unit;
    debug_assert!(us < 1_000_000);
    datetime_from_unix(s, us)
}

fn curdate(_: Vec<Value>, env: &Env) -> R {
    let (s, _) = env.cx.statement_time();
    let (y, m, d) = civil_from_days(s.div_euclid(86400));
    Ok(Value::Date {
        year: y as u16,
        month: m as u8,
        day: d as u8,
    })
}

fn curtime(_: Vec<Value>, env: &Env) -> R {
    let (s, _) = env.cx.statement_time();
    let r = s.rem_euclid(86400);
    Ok(Value::Time {
        negative: false,
        hours: (r / 3600) as u16,
        minutes: (r / 60 % 60) as u8,
        seconds: (r % 60) as u8,
        micros: 0,
    })
}

/// UNIX_TIMESTAMP([d]): seconds (a DECIMAL with 6 digits when `d` has a fraction); 0 for
/// what is not a date.
fn unix_timestamp(v: Vec<Value>, env: &Env) -> R {
    Ok(match v.first() {
        None => Value::Int(env.cx.statement_time().0),
        Some(Value::Null) => Value::Null,
        Some(x) => match unix_of(x) {
            Some((s, 0)) => Value::Int(s),
            Some((s, us)) => Value::Decimal(
                Dec {
                    m: Wide::from_i128(i128::from(s) * 1_000_000 + i128::from(us)),
                    s: 6,
                }
                .to_string(),
            ),
            None => Value::Int(0),
        },
    })
}

/// (year, month, day) parts of a date-like value.
fn date_part(v: &Value, pick: fn((i64, u32, u32)) -> i64) -> Value {
    match date_parts(v) {
        Some((y, m, d, ..)) => Value::Int(pick((y, m, d))),
        None => Value::Null,
    }
}

/// HOUR (0), MINUTE (1) or SECOND (2) of a TIME or a date-like value; a string is read as a
/// DATETIME or else as a TIME (`[-][D ]HH:MM[:SS[.f]]`, `HHMMSS`), as MariaDB does (HOUR of
/// a time string may exceed 23).
fn time_part(v: &Value, which: usize) -> Value {
    match time_of(v) {
        Some(Value::Time {
            hours,
            minutes,
            seconds,
            ..
        }) => Value::Int(match which {
            0 => i64::from(hours),
            1 => i64::from(minutes),
            _ => i64::from(seconds),
        }),
        _ => Value::Null,
    }
}

/// The TIME part of a value (TIME(v)): a TIME as is, the time of day of a date-like value, a
/// string read as a DATETIME or else as a TIME; None (with MariaDB's warning 1292 for a
/// string) when it is neither.
pub(super) fn time_of(v: &Value) -> Option<Value> {
    match v {
        Value::Time { .. } => return Some(v.clone()),
        Value::Null => return None,
        Value::Bytes(b) => {
            let s = String::from_utf8_lossy(b);
            if let Some(t) = parse_datetime(&s).as_ref().and_then(time_of) {
                return Some(t);
            }
            let t = time_of_text(&s);
            if t.is_none() {
                warn("Warning", 1292, format!("Incorrect time value: '{s}'"));
            }
            return t;
        }
        _ => {}
    }
    let (_, _, _, h, mi, s, us) = date_parts(v)?;
    Some(Value::Time {
        negative: false,
        hours: h as u16,
        minutes: mi as u8,
        seconds: s as u8,
        micros: us,
    })
}

/// `[-][D ]HH:MM[:SS[.f]]` or `HHMMSS`: a day count before a space adds 24 hours a day.
fn time_of_text(s: &str) -> Option<Value> {
    let s = s.trim();
    let (negative, body) = match s.strip_prefix('-') {
        Some(r) => (true, r.trim_start()),
        None => (false, s),
    };
    let (days, rest) = match body.split_once(' ') {
        Some((d, r)) if !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()) => {
            (d.parse::<u16>().ok()?, r.trim())
        }
        _ => (0, body),
    };
    let Value::Time {
        hours,
        minutes,
        seconds,
        micros,
        ..
    } = parse_time(rest)?
    else {
        return None;
    };
    Some(Value::Time {
        negative,
        hours: hours.checked_add(days.checked_mul(24)?)?,
        minutes,
        seconds,
        micros,
    })
}

#[cfg(test)]
mod tests {
    use super::super::check_against_mariadb;

    #[test]
    fn temporal_functions_match_mariadb() {
        // Expected values: what MariaDB 10.11.19 returned for `SELECT <expr>` (mariadb -N -B).
        // Not asserted, a known difference: MariaDB gives UNIX_TIMESTAMP('1970-01-02 00:00:00')
        // as 86400 (an integer for a string without fraction), onelog as 86400.000000 (the
        // result type is DECIMAL(17,6) whenever there is an argument).
        check_against_mariadb(&[
            ("YEAR('2024-02-29')", "2024"),
            ("MONTH('2024-02-29 13:14:15')", "2"),
            ("DAY('2024-02-29')", "29"),
            ("DAYOFMONTH(NULL)", "NULL"),
            ("HOUR(TIME '13:14:15')", "13"),
            ("HOUR('2024-02-29 13:14:15')", "13"),
            ("MINUTE('2024-02-29 13:14:15')", "14"),
            ("SECOND('2024-02-29 13:14:15')", "15"),
            ("HOUR('10:11:12')", "10"),
            ("MINUTE('10:11:12')", "11"),
            ("SECOND('10:11:12.5')", "12"),
            ("HOUR('100:11:12')", "100"),
            ("HOUR('-10:11:12')", "10"),
            ("MINUTE('10:11')", "11"),
            ("SECOND('101112')", "12"),
            ("HOUR('1112')", "0"),
            ("HOUR('1 10:11:12')", "34"),
            ("MINUTE('1 10:11:12')", "11"),
            ("HOUR('abc')", "NULL"),
            ("TIME('10:11:12')", "10:11:12"),
            ("TIME('100:11:12')", "100:11:12"),
            ("TIME('2024-02-29 13:14:15')", "13:14:15"),
            ("TIME('abc')", "NULL"),
            ("TIME(NULL)", "NULL"),
            ("DATE('2024-02-29 13:14:15')", "2024-02-29"),
            ("DATE('not a date')", "NULL"),
            (
                "DATE_FORMAT('2024-02-29 13:04:05', '%Y/%m/%d %H:%i:%s %W %M %j %p %a %b %e %c %y')",
                "2024/02/29 13:04:05 Thursday February 060 PM Thu Feb 29 2 24",
            ),
            (
                "DATE_FORMAT('2024-02-29 00:04:05', '%h %l %r %T %f %%')",
                "12 12 12:04:05 AM 00:04:05 000000 %",
            ),
            (
                "DATE_FORMAT(NULL, '%Y')",
                "NULL",
            ),
            ("FROM_UNIXTIME(0)", "1970-01-01 00:00:00"),
            ("FROM_UNIXTIME(86400 * 365)", "1971-01-01 00:00:00"),
            ("UNIX_TIMESTAMP(NULL)", "NULL"),
        ]);
    }
}
