//! Dates and times: parsing (`YYYY-MM-DD[ HH:MM:SS[.ffffff]]`, `[-]HH:MM:SS`), Unix time
//! conversions (UTC), DATE_FORMAT and the (days, micros) key dates compare by.
//!
//! Invariants: parsed dates have month <= 12 and day <= 31, parsed times minutes and seconds
//! <= 59 and micros < 1,000,000; conversions never panic on out-of-range input (years clamp to
//! 0..=9999).
//!
//! Called by coercion, comparison, the temporal functions and `render`.

use onelog_binlog::Value;

pub(crate) use onelog_binlog::value::{civil_from_days, days_from_civil};

/// DATETIME of a Unix time (UTC).
pub(crate) fn datetime_from_unix(secs: i64, micros: u32) -> Value {
    let days = secs.div_euclid(86400);
    let rem = secs.rem_euclid(86400);
    let (y, m, d) = civil_from_days(days);
    Value::DateTime {
        year: y.clamp(0, 9999) as u16,
        month: m as u8,
        day: d as u8,
        hour: (rem / 3600) as u8,
        minute: (rem / 60 % 60) as u8,
        second: (rem % 60) as u8,
        micros,
    }
}

pub(crate) fn timestamp_to_datetime(v: &Value) -> Value {
    match v {
        Value::Timestamp { secs, micros } => datetime_from_unix(i64::from(*secs), *micros),
        other => other.clone(),
    }
}

/// Unix seconds of a DATE/DATETIME (UTC).
pub(crate) fn unix_of(v: &Value) -> Option<(i64, u32)> {
    match v {
        Value::Timestamp { secs, micros } => Some((i64::from(*secs), *micros)),
        Value::Date { .. } | Value::DateTime { .. } => {
            let (d, t) = temporal_key(v)?;
            Some((d * 86400 + t / 1_000_000, (t % 1_000_000) as u32))
        }
        Value::Bytes(b) => unix_of(&parse_datetime(std::str::from_utf8(b).ok()?)?),
        _ => None,
    }
}

/// Parses `YYYY-MM-DD[ HH:MM:SS[.ffffff]]` (also `T` separator, `YYYYMMDD[HHMMSS]`).
pub(crate) fn parse_datetime(s: &str) -> Option<Value> {
    let s = s.trim();
    let (date, time) = match s.find([' ', 'T']) {
        Some(i) => (&s[..i], Some(s[i + 1..].trim())),
        None => (s, None),
    };
    let (y, m, d) = if date.contains('-') || date.contains('/') {
        let mut it = date.split(['-', '/']);
        let y: u16 = it.next()?.parse().ok()?;
        let m: u8 = it.next()?.parse().ok()?;
        let d: u8 = it.next()?.parse().ok()?;
        if it.next().is_some() {
            return None;
        }
        (y, m, d)
    } else if date.len() == 8 && date.bytes().all(|b| b.is_ascii_digit()) && time.is_none() {
        (
            date[..4].parse().ok()?,
            date[4..6].parse().ok()?,
            date[6..8].parse().ok()?,
        )
    } else if date.len() == 14 && date.bytes().all(|b| b.is_ascii_digit()) && time.is_none() {
        return Some(Value::DateTime {
            year: date[..4].parse().ok()?,
            month: date[4..6].parse().ok()?,
            day: date[6..8].parse().ok()?,
            hour: date[8..10].parse().ok()?,
            minute: date[10..12].parse().ok()?,
            second: date[12..14].parse().ok()?,
            micros: 0,
        });
    } else {
        return None;
    };
    if m > 12 || d > 31 {
        return None;
    }
    debug_assert!(m <= 12 && d <= 31);
    match time {
        None => Some(Value::Date {
            year: y,
            month: m,
            day: d,
        }),
        Some(t) => {
            let Value::Time {
                negative: false,
                hours,
                minutes,
                seconds,
                micros,
            } = parse_time(t)?
            else {
                return None;
            };
            if hours > 23 {
                return None;
            }
            Some(Value::DateTime {
                year: y,
                month: m,
                day: d,
                hour: hours as u8,
                minute: minutes,
                second: seconds,
                micros,
            })
        }
    }
}

/// Parses `[-]HH:MM[:SS[.ffffff]]` or `HHMMSS`.
pub(crate) fn parse_time(s: &str) -> Option<Value> {
    let s = s.trim();
    let (negative, s) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s),
    };
    let (main, frac) = match s.find('.') {
        Some(i) => (&s[..i], &s[i + 1..]),
        None => (s, ""),
    };
    let (h, mi, se): (u16, u8, u8) = if main.contains(':') {
        let mut it = main.split(':');
        let h = it.next()?.parse().ok()?;
        let m = it.next()?.parse().ok()?;
        let s = match it.next() {
            Some(x) => x.parse().ok()?,
            None => 0,
        };
        (h, m, s)
    } else if main.bytes().all(|b| b.is_ascii_digit()) && !main.is_empty() {
        let n: u32 = main.parse().ok()?;
        ((n / 10000) as u16, (n / 100 % 100) as u8, (n % 100) as u8)
    } else {
        return None;
    };
    if mi > 59 || se > 59 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut micros: u32 = 0;
    for (i, b) in frac.bytes().take(6).enumerate() {
        micros += u32::from(b - b'0') * 10u32.pow(5 - i as u32);
    }
    debug_assert!(mi <= 59 && se <= 59 && micros < 1_000_000);
    Some(Value::Time {
        negative,
        hours: h,
        minutes: mi,
        seconds: se,
        micros,
    })
}

/// (year, month, day, hour, minute, second, micros) of a date-like value (a DATE, DATETIME,
/// TIMESTAMP or a string that parses as one).
pub(super) fn date_parts(v: &Value) -> Option<(i64, u32, u32, u32, u32, u32, u32)> {
    match v {
        Value::Date { year, month, day } => Some((
            i64::from(*year),
            u32::from(*month),
            u32::from(*day),
            0,
            0,
            0,
            0,
        )),
        Value::DateTime {
            year,
            month,
            day,
            hour,
            minute,
            second,
            micros,
        } => Some((
            i64::from(*year),
            u32::from(*month),
            u32::from(*day),
            u32::from(*hour),
            u32::from(*minute),
            u32::from(*second),
            *micros,
        )),
        Value::Timestamp { .. } => date_parts(&timestamp_to_datetime(v)),
        Value::Bytes(b) => date_parts(&parse_datetime(std::str::from_utf8(b).ok()?)?),
        _ => None,
    }
}

pub(super) fn temporal_rank(v: &Value) -> bool {
    matches!(
        v,
        Value::Date { .. } | Value::DateTime { .. } | Value::Timestamp { .. } | Value::Time { .. }
    )
}

/// (days, micros of day) of a date-like value or a TIME (days 0), for comparisons.
pub(super) fn temporal_key(v: &Value) -> Option<(i64, i64)> {
    if let Value::Time { .. } = v {
        return Some((0, v.time_micros()?));
    }
    let (y, m, d, h, mi, s, us) = date_parts(v)?;
    let day_micros =
        ((i64::from(h) * 60 + i64::from(mi)) * 60 + i64::from(s)) * 1_000_000 + i64::from(us);
    Some((days_from_civil(y, m, d), day_micros))
}

pub(super) const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

pub(super) const WEEKDAYS: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];

pub(super) fn date_format(v: &Value, fmt: &[u8]) -> Option<Vec<u8>> {
    let (y, m, d, h, mi, s, us) = date_parts(v)?;
    let mut out = Vec::new();
    let mut it = fmt.iter();
    while let Some(&c) = it.next() {
        if c != b'%' {
            out.push(c);
            continue;
        }
        let Some(&f) = it.next() else { break };
        let wd = (days_from_civil(y, m.max(1), d.max(1)) + 3).rem_euclid(7) as usize;
        let piece = match f {
            b'Y' => format!("{y:04}"),
            b'y' => format!("{:02}", y % 100),
            b'm' => format!("{m:02}"),
            b'c' => format!("{m}"),
            b'd' => format!("{d:02}"),
            b'e' => format!("{d}"),
            b'H' => format!("{h:02}"),
            b'k' => format!("{h}"),
            b'h' | b'I' => format!("{:02}", if h % 12 == 0 { 12 } else { h % 12 }),
            b'l' => format!("{}", if h % 12 == 0 { 12 } else { h % 12 }),
            b'i' => format!("{mi:02}"),
            b's' | b'S' => format!("{s:02}"),
            b'f' => format!("{us:06}"),
            b'p' => (if h < 12 { "AM" } else { "PM" }).to_string(),
            b'T' => format!("{h:02}:{mi:02}:{s:02}"),
            b'r' => format!(
                "{:02}:{mi:02}:{s:02} {}",
                if h % 12 == 0 { 12 } else { h % 12 },
                if h < 12 { "AM" } else { "PM" }
            ),
            b'M' => MONTHS
                .get((m as usize).wrapping_sub(1))
                .unwrap_or(&"")
                .to_string(),
            b'b' => MONTHS
                .get((m as usize).wrapping_sub(1))
                .map_or(String::new(), |s| s[..3].to_string()),
            b'W' => WEEKDAYS[wd].to_string(),
            b'a' => WEEKDAYS[wd][..3].to_string(),
            b'j' => format!(
                "{:03}",
                days_from_civil(y, m.max(1), d.max(1)) - days_from_civil(y, 1, 1) + 1
            ),
            b'%' => "%".to_string(),
            other => (other as char).to_string(),
        };
        out.extend_from_slice(piece.as_bytes());
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_round_trip() {
        for d in [-1000i64, 0, 1, 59, 365, 11016, 20000, 2932896] {
            let (y, m, dd) = civil_from_days(d);
            assert_eq!(days_from_civil(y, m, dd), d);
        }
        assert_eq!(days_from_civil(2000, 3, 1), 11017);
    }
}
