//! Calendar functions: DATEDIFF, TO_DAYS, FROM_DAYS, TO_SECONDS, DAYOFWEEK, WEEKDAY,
//! DAYOFYEAR, DAYNAME, MONTHNAME, QUARTER, LAST_DAY, MAKEDATE, MICROSECOND, TIME_TO_SEC.
//! (`temporal` has the clock and the parts of a value; this family counts days.)
//!
//! Day numbers are MariaDB's `calc_daynr`: day 1 is 0000-01-01, and from 0001-01-01 (day 366)
//! on they follow the proleptic Gregorian calendar, which is what [`days_from_civil`] counts
//! (from 1970-01-01, day 719528). FROM_DAYS of a day before 366 or after 9999-12-31 is
//! `0000-00-00`, as MariaDB answers. An argument that is not a valid date is NULL (MariaDB
//! adds warning 1292, which these do not yet: the value is the same).

use onelog_binlog::Value;

use super::{int, rt_int, rt_str, str_val, strict, FunctionDef};
use crate::expr::ir::Expr;
use crate::expr::temporal::{civil_from_days, date_parts, days_from_civil, MONTHS, WEEKDAYS};
use crate::expr::types::{RType, TypeCx};

/// `calc_daynr` of 1970-01-01.
const UNIX_DAYNR: i64 = 719_528;
/// `calc_daynr` of 9999-12-31.
const MAX_DAYNR: i64 = 3_652_424;

fn rt_date(_: &[Expr], _: &TypeCx) -> RType {
    RType::Date
}

/// (year, month) and MariaDB's day number of a valid date.
#[derive(Clone, Copy)]
struct Ymd {
    y: i64,
    m: u32,
    daynr: i64,
}

fn ymd(v: &Value) -> Option<Ymd> {
    let (y, m, d, ..) = date_parts(v)?;
    if m == 0 || m > 12 || d == 0 || d > days_in_month(y, m) {
        return None;
    }
    Some(Ymd {
        y,
        m,
        daynr: days_from_civil(y, m, d) + UNIX_DAYNR,
    })
}

/// 0 = Monday .. 6 = Sunday.
fn weekday(daynr: i64) -> i64 {
    (daynr + 5).rem_euclid(7)
}

fn date_value(daynr: i64) -> Value {
    if !(366..=MAX_DAYNR).contains(&daynr) {
        return Value::Date {
            year: 0,
            month: 0,
            day: 0,
        };
    }
    let (y, m, d) = civil_from_days(daynr - UNIX_DAYNR);
    Value::Date {
        year: y as u16,
        month: m as u8,
        day: d as u8,
    }
}

fn days_in_month(y: i64, m: u32) -> u32 {
    let next = if m == 12 { (y + 1, 1) } else { (y, m + 1) };
    (days_from_civil(next.0, next.1, 1) - days_from_civil(y, m, 1)) as u32
}

macro_rules! date_fn {
    ($name:literal, $rt:expr, |$x:ident| $body:expr) => {
        strict($name, &[$name], (1, 1), $rt, |v, _| {
            Ok(match ymd(&v[0]) {
                Some($x) => $body,
                None => Value::Null,
            })
        })
    };
}

pub(super) const FUNCTIONS: &[FunctionDef] = &[
    strict("DATEDIFF", &["DATEDIFF"], (2, 2), rt_int, |v, _| {
        Ok(match (ymd(&v[0]), ymd(&v[1])) {
            (Some(a), Some(b)) => Value::Int(a.daynr - b.daynr),
            _ => Value::Null,
        })
    }),
    date_fn!("TO_DAYS", rt_int, |x| Value::Int(x.daynr)),
    strict("TO_SECONDS", &["TO_SECONDS"], (1, 1), rt_int, |v, _| {
        Ok(match (ymd(&v[0]), date_parts(&v[0])) {
            (Some(x), Some((_, _, _, h, mi, s, _))) => Value::Int(
                x.daynr * 86_400 + i64::from(h) * 3600 + i64::from(mi) * 60 + i64::from(s),
            ),
            _ => Value::Null,
        })
    }),
    strict("FROM_DAYS", &["FROM_DAYS"], (1, 1), rt_date, |v, _| {
        Ok(date_value(
            int(&v[0]).clamp(-1, MAX_DAYNR as i128 + 1) as i64
        ))
    }),
    date_fn!("DAYOFWEEK", rt_int, |x| Value::Int(
        (weekday(x.daynr) + 1) % 7 + 1
    )),
    date_fn!("WEEKDAY", rt_int, |x| Value::Int(weekday(x.daynr))),
    date_fn!("DAYOFYEAR", rt_int, |x| Value::Int(
        x.daynr - (days_from_civil(x.y, 1, 1) + UNIX_DAYNR) + 1
    )),
    date_fn!("DAYNAME", rt_str, |x| str_val(
        WEEKDAYS[weekday(x.daynr) as usize].as_bytes().to_vec()
    )),
    date_fn!("MONTHNAME", rt_str, |x| str_val(
        MONTHS[(x.m - 1) as usize].as_bytes().to_vec()
    )),
    date_fn!("QUARTER", rt_int, |x| Value::Int(i64::from(
        x.m.div_ceil(3)
    ))),
    date_fn!("LAST_DAY", rt_date, |x| Value::Date {
        year: x.y as u16,
        month: x.m as u8,
        day: days_in_month(x.y, x.m) as u8,
    }),
    strict("MAKEDATE", &["MAKEDATE"], (2, 2), rt_date, |v, _| {
        let (y, doy) = (int(&v[0]), int(&v[1]));
        // Two-digit years as MariaDB reads them: 0-69 are 2000-2069, 70-99 are 1970-1999.
        let y = match y {
            0..=69 => y + 2000,
            70..=99 => y + 1900,
            _ => y,
        };
        if doy <= 0 || !(0..=9999).contains(&y) {
            return Ok(Value::Null);
        }
        let daynr = days_from_civil(y as i64, 1, 1) + UNIX_DAYNR + (doy as i64 - 1);
        Ok(if daynr > MAX_DAYNR {
            Value::Null
        } else {
            date_value(daynr)
        })
    }),
    strict("MICROSECOND", &["MICROSECOND"], (1, 1), rt_int, |v, _| {
        Ok(match &v[0] {
            Value::Time { micros, .. } => Value::Int(i64::from(*micros)),
            x => match time_or_date(x) {
                Some((.., us)) => Value::Int(i64::from(us)),
                None => Value::Null,
            },
        })
    }),
    // An integer, or a DECIMAL when the value has a fraction (typed by the value).
    strict(
        "TIME_TO_SEC",
        &["TIME_TO_SEC"],
        (1, 1),
        |_, _| RType::Dyn,
        |v, _| {
            Ok(match time_or_date(&v[0]) {
                Some((neg, h, m, s, us)) => {
                    let secs = i64::from(h) * 3600 + i64::from(m) * 60 + i64::from(s);
                    let sign = if neg { "-" } else { "" };
                    if us == 0 {
                        Value::Int(if neg { -secs } else { secs })
                    } else {
                        let frac = format!("{us:06}");
                        Value::Decimal(format!("{sign}{secs}.{}", frac.trim_end_matches('0')))
                    }
                }
                None => Value::Null,
            })
        },
    ),
];

/// (negative, hours, minutes, seconds, micros) of a TIME, or of the time of day of a
/// date-like value; a string is read as a DATETIME, else as a TIME.
fn time_or_date(v: &Value) -> Option<(bool, u32, u32, u32, u32)> {
    use crate::expr::temporal::parse_time;
    let t = match v {
        Value::Time { .. } => v.clone(),
        Value::Bytes(b) => {
            let s = std::str::from_utf8(b).ok()?;
            match date_parts(v) {
                Some((_, _, _, h, m, sec, us)) if s.contains('-') => {
                    return Some((false, h, m, sec, us))
                }
                _ => parse_time(s)?,
            }
        }
        other => {
            let (_, _, _, h, m, s, us) = date_parts(other)?;
            return Some((false, h, m, s, us));
        }
    };
    match t {
        Value::Time {
            negative,
            hours,
            minutes,
            seconds,
            micros,
            ..
        } => Some((
            negative,
            u32::from(hours),
            u32::from(minutes),
            u32::from(seconds),
            micros,
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::check_against_mariadb;

    #[test]
    fn calendar_functions_match_mariadb() {
        // Expected values: what MariaDB 10.11.19 returned for `SELECT <expr>` (mariadb -N -B).
        check_against_mariadb(&[
            ("DATEDIFF('2007-12-31 23:59:59','2007-12-30')", "1"),
            ("DATEDIFF('2010-11-30 23:59:59','2010-12-31')", "-31"),
            ("DATEDIFF('2010-13-30','2010-12-31')", "NULL"),
            ("TO_DAYS('2007-10-07')", "733321"),
            ("TO_DAYS('0001-01-01')", "366"),
            ("FROM_DAYS(730669)", "2000-07-03"),
            ("FROM_DAYS(365)", "0000-00-00"),
            ("FROM_DAYS(366)", "0001-01-01"),
            ("FROM_DAYS(3652424)", "9999-12-31"),
            ("FROM_DAYS(3652425)", "0000-00-00"),
            ("FROM_DAYS(-5)", "0000-00-00"),
            ("DAYOFWEEK('2007-02-03')", "7"),
            ("WEEKDAY('2008-02-03 22:23:00')", "6"),
            ("DAYOFYEAR('2007-02-03')", "34"),
            ("DAYNAME('2007-02-03')", "Saturday"),
            ("MONTHNAME('2007-02-03')", "February"),
            ("QUARTER('2008-04-01')", "2"),
            ("LAST_DAY('2003-02-05')", "2003-02-28"),
            ("LAST_DAY('2004-02-05')", "2004-02-29"),
            ("LAST_DAY('2004-01-01 01:01:01')", "2004-01-31"),
            ("LAST_DAY('2003-03-32')", "NULL"),
            ("MAKEDATE(2011,31)", "2011-01-31"),
            ("MAKEDATE(2011,32)", "2011-02-01"),
            ("MAKEDATE(2011,365)", "2011-12-31"),
            ("MAKEDATE(2011,0)", "NULL"),
            ("MAKEDATE(11,1)", "2011-01-01"),
            ("MAKEDATE(70,1)", "1970-01-01"),
            ("MAKEDATE(9999,366)", "NULL"),
            ("TIME_TO_SEC('22:23:00')", "80580"),
            ("TIME_TO_SEC('00:39:38')", "2378"),
            ("TIME_TO_SEC('-01:00:00')", "-3600"),
            ("TIME_TO_SEC('2008-01-01 01:00:01')", "3601"),
            ("TIME_TO_SEC('10:00:00.5')", "36000.5"),
            ("TO_SECONDS('2009-11-29')", "63426672000"),
            ("TO_SECONDS('2009-11-29 13:43:32')", "63426721412"),
            ("MICROSECOND('12:00:00.123456')", "123456"),
            ("MICROSECOND('2009-12-31 23:59:59.000010')", "10"),
            ("MICROSECOND('2009-12-31')", "0"),
            ("DAYOFWEEK(NULL)", "NULL"),
            ("DAYNAME('2007-02-30')", "NULL"),
        ]);
    }
}
