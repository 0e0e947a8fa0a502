//! Values on the wire: text-protocol rendering, binary-protocol row encoding, and decoding of
//! binary-protocol statement parameters (COM_STMT_EXECUTE).
//!
//! Owns the mapping between `onelog_binlog::Value` and the protocol's value forms:
//! - [`wire_type`]: the type code a column definition packet announces (binlog-only codes such
//!   as DATETIME2/TIMESTAMP2/TIME2/VARCHAR/ENUM are replaced by their protocol codes).
//! - [`put_text`]: text protocol. Integers in decimal, DECIMAL as stored, strings raw; FLOAT,
//!   DOUBLE and the temporal types as `onelog_sql::render::text` formats them (one rendering for
//!   the whole server; TIMESTAMP values are UTC seconds shown in UTC, time_zone +00:00).
//! - [`put_binary`]: binary protocol, driven by the column's wire type so a row always matches
//!   the definition the client parsed (a value of another kind is converted to that type).
//! - [`decode_param`]: one parameter value of COM_STMT_EXECUTE, from its type code and flags.
//!
//! Invariants: the encoders write into the caller's buffer and allocate nothing per value except
//! through `scratch`, which the caller reuses; the decoder never trusts a length and never panics.

use std::io::Write as _;

use onelog_binlog::value::civil_from_days;
use onelog_binlog::{ColumnType, Value};
use onelog_sql::Column;

use crate::wire::{put_lenenc_bytes, put_u16, put_u32, put_u64, Malformed, Reader};

/// The protocol type code announced for a column of `t`.
pub fn wire_type(t: ColumnType) -> u8 {
    use ColumnType::*;
    match t {
        Timestamp2 => Timestamp as u8,
        DateTime2 => DateTime as u8,
        Time2 => Time as u8,
        NewDate => Date as u8,
        VarChar => VarString as u8,
        Enum | Set => String as u8,
        TinyBlob | MediumBlob | LongBlob => Blob as u8,
        other => other as u8,
    }
}

/// Column flags as announced: adds ENUM_FLAG/SET_FLAG for ENUM and SET columns.
pub fn wire_flags(col: &Column) -> u16 {
    match col.column_type {
        ColumnType::Enum => col.flags | 0x0100,
        ColumnType::Set => col.flags | 0x0800,
        _ => col.flags,
    }
}

/// Date and time parts of a value: (year, month, day, hour, minute, second, micros).
type DateTimeParts = (u16, u8, u8, u8, u8, u8, u32);

fn datetime_parts(v: &Value) -> Option<DateTimeParts> {
    match *v {
        Value::Date { year, month, day } => Some((year, month, day, 0, 0, 0, 0)),
        Value::DateTime {
            year,
            month,
            day,
            hour,
            minute,
            second,
            micros,
        } => Some((year, month, day, hour, minute, second, micros)),
        Value::Timestamp { secs, micros } => {
            let secs = i64::from(secs);
            let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
            let sod = secs.rem_euclid(86_400);
            Some((
                y as u16,
                m as u8,
                d as u8,
                (sod / 3600) as u8,
                (sod / 60 % 60) as u8,
                (sod % 60) as u8,
                micros,
            ))
        }
        _ => None,
    }
}

/// Renders `v` as the text protocol shows it into `out`; returns false for NULL (nothing
/// written). Integers, strings and DECIMAL (whose text has no formatting choices) are written
/// directly; every other type goes through `onelog_sql::render::text`, the SQL layer's
/// rendering, so CONCAT/CAST and result sets always show the same text.
pub fn render_text(v: &Value, col: &Column, out: &mut Vec<u8>) -> bool {
    match v {
        Value::Null => return false,
        Value::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Value::UInt(u) => {
            let _ = write!(out, "{u}");
        }
        Value::Decimal(s) => out.extend_from_slice(s.as_bytes()),
        Value::Bytes(b) => out.extend_from_slice(b),
        _ => match onelog_sql::render::text(v, col) {
            Some(t) => out.extend_from_slice(&t),
            None => return false,
        },
    }
    true
}

/// Appends one text-protocol field (length-encoded string, or `0xFB` for NULL). `scratch` is a
/// reusable buffer.
pub fn put_text(out: &mut Vec<u8>, v: &Value, col: &Column, scratch: &mut Vec<u8>) {
    match v {
        Value::Bytes(b) => put_lenenc_bytes(out, b),
        Value::Decimal(s) => put_lenenc_bytes(out, s.as_bytes()),
        _ => {
            scratch.clear();
            if render_text(v, col, scratch) {
                put_lenenc_bytes(out, scratch);
            } else {
                out.push(0xFB);
            }
        }
    }
}

fn as_i64(v: &Value) -> i64 {
    match v {
        Value::Int(i) => *i,
        Value::UInt(u) => *u as i64,
        Value::Float(f) => *f as i64,
        Value::Double(d) => *d as i64,
        Value::Year(y) => i64::from(*y),
        Value::Decimal(s) => parse_int_prefix(s.as_bytes()),
        Value::Bytes(b) => parse_int_prefix(b),
        _ => 0,
    }
}

fn parse_int_prefix(b: &[u8]) -> i64 {
    let s = std::str::from_utf8(b).unwrap_or("").trim();
    let s = s.split('.').next().unwrap_or("");
    s.parse::<i64>()
        .or_else(|_| s.parse::<u64>().map(|u| u as i64))
        .unwrap_or(0)
}

fn as_f64(v: &Value) -> f64 {
    match v {
        Value::Int(i) => *i as f64,
        Value::UInt(u) => *u as f64,
        Value::Float(f) => f64::from(*f),
        Value::Double(d) => *d,
        Value::Year(y) => f64::from(*y),
        Value::Decimal(s) => s.trim().parse().unwrap_or(0.0),
        Value::Bytes(b) => std::str::from_utf8(b)
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0.0),
        _ => 0.0,
    }
}

/// True when a value must be sent as NULL in a column of wire type `t` (the NULL type carries
/// no bytes in the binary protocol).
pub fn binary_is_null(v: &Value, t: u8) -> bool {
    matches!(v, Value::Null) || t == ColumnType::Null as u8
}

/// Appends the binary-protocol form of a non-NULL value for a column of wire type `t`.
pub fn put_binary(out: &mut Vec<u8>, v: &Value, col: &Column, t: u8, scratch: &mut Vec<u8>) {
    const TINY: u8 = ColumnType::Tiny as u8;
    const SHORT: u8 = ColumnType::Short as u8;
    const YEAR: u8 = ColumnType::Year as u8;
    const LONG: u8 = ColumnType::Long as u8;
    const INT24: u8 = ColumnType::Int24 as u8;
    const LONGLONG: u8 = ColumnType::LongLong as u8;
    const FLOAT: u8 = ColumnType::Float as u8;
    const DOUBLE: u8 = ColumnType::Double as u8;
    const DATE: u8 = ColumnType::Date as u8;
    const DATETIME: u8 = ColumnType::DateTime as u8;
    const TIMESTAMP: u8 = ColumnType::Timestamp as u8;
    const TIME: u8 = ColumnType::Time as u8;
    let start = out.len();
    match t {
        TINY => out.push(as_i64(v) as u8),
        SHORT | YEAR => put_u16(out, as_i64(v) as u16),
        LONG | INT24 => put_u32(out, as_i64(v) as u32),
        LONGLONG => put_u64(out, as_i64(v) as u64),
        FLOAT => out.extend_from_slice(&(as_f64(v) as f32).to_le_bytes()),
        DOUBLE => out.extend_from_slice(&as_f64(v).to_le_bytes()),
        DATE | DATETIME | TIMESTAMP => {
            let (y, mo, d, h, mi, s, us) = datetime_parts(v).unwrap_or((0, 0, 0, 0, 0, 0, 0));
            if t == DATE {
                if (y, mo, d) == (0, 0, 0) {
                    out.push(0);
                } else {
                    out.push(4);
                    put_u16(out, y);
                    out.extend_from_slice(&[mo, d]);
                }
            } else if (y, mo, d, h, mi, s, us) == (0, 0, 0, 0, 0, 0, 0) {
                out.push(0);
            } else if us == 0 {
                out.push(7);
                put_u16(out, y);
                out.extend_from_slice(&[mo, d, h, mi, s]);
            } else {
                out.push(11);
                put_u16(out, y);
                out.extend_from_slice(&[mo, d, h, mi, s]);
                put_u32(out, us);
            }
        }
        TIME => {
            let (neg, hours, m, s, us) = match *v {
                Value::Time {
                    negative,
                    hours,
                    minutes,
                    seconds,
                    micros,
                } => (negative, u32::from(hours), minutes, seconds, micros),
                _ => (false, 0, 0, 0, 0),
            };
            if (hours, m, s, us) == (0, 0, 0, 0) {
                out.push(0);
            } else {
                out.push(if us == 0 { 8 } else { 12 });
                out.push(u8::from(neg));
                put_u32(out, hours / 24);
                out.extend_from_slice(&[(hours % 24) as u8, m, s]);
                if us != 0 {
                    put_u32(out, us);
                }
            }
        }
        _ => {
            // The one buffer a value's text goes through is the caller's `scratch`.
            scratch.clear();
            render_text(v, col, scratch);
            put_lenenc_bytes(out, scratch);
            return;
        }
    }
    // Temporal values: a length byte, then exactly that many bytes.
    debug_assert!(
        !matches!(t, DATE | DATETIME | TIMESTAMP | TIME)
            || usize::from(out[start]) == out.len() - start - 1,
        "binary temporal value's length byte"
    );
}

/// Decodes one COM_STMT_EXECUTE parameter of type code `t` (with the UNSIGNED flag) from `r`.
/// Unknown type codes are malformed.
pub fn decode_param(r: &mut Reader<'_>, t: u8, unsigned: bool) -> Result<Value, Malformed> {
    let p = "parameter value";
    let signed = |i: i64, u: u64| {
        if unsigned {
            Value::UInt(u)
        } else {
            Value::Int(i)
        }
    };
    Ok(match ColumnType::from_code(t) {
        Some(ColumnType::Null) => Value::Null,
        Some(ColumnType::Tiny) => {
            let b = r.u8(p)?;
            signed(i64::from(b as i8), u64::from(b))
        }
        Some(ColumnType::Short) => {
            let b = r.u16(p)?;
            signed(i64::from(b as i16), u64::from(b))
        }
        Some(ColumnType::Year) => Value::Year(r.u16(p)?),
        Some(ColumnType::Long) | Some(ColumnType::Int24) => {
            let b = r.u32(p)?;
            signed(i64::from(b as i32), u64::from(b))
        }
        Some(ColumnType::LongLong) => {
            let b = r.u64(p)?;
            signed(b as i64, b)
        }
        Some(ColumnType::Float) => {
            let b = r.bytes(4, p)?;
            Value::Float(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        }
        Some(ColumnType::Double) => Value::Double(f64::from_bits(r.u64(p)?)),
        Some(
            ColumnType::Date
            | ColumnType::NewDate
            | ColumnType::DateTime
            | ColumnType::Timestamp
            | ColumnType::DateTime2
            | ColumnType::Timestamp2,
        ) => {
            let len = r.u8(p)?;
            let (mut year, mut month, mut day, mut hour, mut minute, mut second, mut micros) =
                (0, 0, 0, 0, 0, 0, 0);
            if !matches!(len, 0 | 4 | 7 | 11) {
                return Err(Malformed {
                    what: "date parameter length",
                    offset: r.position(),
                });
            }
            if len >= 4 {
                year = r.u16(p)?;
                month = r.u8(p)?;
                day = r.u8(p)?;
            }
            if len >= 7 {
                hour = r.u8(p)?;
                minute = r.u8(p)?;
                second = r.u8(p)?;
            }
            if len == 11 {
                micros = r.u32(p)?;
            }
            let is_date = matches!(
                ColumnType::from_code(t),
                Some(ColumnType::Date | ColumnType::NewDate)
            );
            if is_date {
                Value::Date { year, month, day }
            } else {
                Value::DateTime {
                    year,
                    month,
                    day,
                    hour,
                    minute,
                    second,
                    micros,
                }
            }
        }
        Some(ColumnType::Time | ColumnType::Time2) => {
            let len = r.u8(p)?;
            if !matches!(len, 0 | 8 | 12) {
                return Err(Malformed {
                    what: "time parameter length",
                    offset: r.position(),
                });
            }
            let (mut negative, mut hours, mut minutes, mut seconds, mut micros) =
                (false, 0u32, 0, 0, 0);
            if len >= 8 {
                negative = r.u8(p)? != 0;
                let days = r.u32(p)?;
                let h = r.u8(p)?;
                minutes = r.u8(p)?;
                seconds = r.u8(p)?;
                hours = days.saturating_mul(24).saturating_add(u32::from(h));
            }
            if len == 12 {
                micros = r.u32(p)?;
            }
            Value::Time {
                negative,
                hours: hours.min(u32::from(u16::MAX)) as u16,
                minutes,
                seconds,
                micros,
            }
        }
        Some(ColumnType::NewDecimal | ColumnType::Decimal) => {
            let b = r.lenenc_bytes(p)?;
            match std::str::from_utf8(b) {
                Ok(s) if is_decimal_text(s) => Value::Decimal(s.to_owned()),
                _ => Value::bytes(b),
            }
        }
        Some(_) => Value::bytes(r.lenenc_bytes(p)?),
        // JSON (245) is not a binlog column type but clients send it as a string.
        None if t == 245 => Value::bytes(r.lenenc_bytes(p)?),
        None => {
            return Err(Malformed {
                what: "parameter type",
                offset: r.position(),
            })
        }
    })
}

/// `-?digits[.digits]`
fn is_decimal_text(s: &str) -> bool {
    let s = s.strip_prefix('-').unwrap_or(s);
    let (int, frac) = match s.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (s, None),
    };
    !int.is_empty()
        && int.bytes().all(|b| b.is_ascii_digit())
        && frac.is_none_or(|f| !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(t: ColumnType, decimals: u8) -> Column {
        Column {
            name: "c".into(),
            org_name: "c".into(),
            table: String::new(),
            org_table: String::new(),
            db: String::new(),
            column_type: t,
            flags: 0,
            length: 0,
            decimals,
            charset: 63,
        }
    }

    fn text(v: Value, c: &Column) -> Option<String> {
        let mut out = Vec::new();
        render_text(&v, c, &mut out).then(|| String::from_utf8(out).unwrap())
    }

    #[test]
    fn text_rendering_matches_mysql_forms() {
        let c = col(ColumnType::LongLong, 0);
        assert_eq!(text(Value::Null, &c), None);
        assert_eq!(text(Value::Int(-42), &c).unwrap(), "-42");
        assert_eq!(
            text(Value::UInt(u64::MAX), &c).unwrap(),
            "18446744073709551615"
        );
        assert_eq!(text(Value::Double(1.5), &c).unwrap(), "1.5");
        assert_eq!(text(Value::Double(0.1), &c).unwrap(), "0.1");
        assert_eq!(text(Value::Double(1e20), &c).unwrap(), "1e20");
        // MariaDB 10.11.14 writes plain notation down to 1e-15 (`render::float_text`).
        assert_eq!(text(Value::Double(-1.25e-7), &c).unwrap(), "-0.000000125");
        assert_eq!(text(Value::Double(-1.25e-16), &c).unwrap(), "-1.25e-16");
        assert_eq!(text(Value::Float(1.1), &c).unwrap(), "1.1");
        assert_eq!(text(Value::Decimal("-12.50".into()), &c).unwrap(), "-12.50");
        assert_eq!(
            text(
                Value::Date {
                    year: 2024,
                    month: 2,
                    day: 9
                },
                &c
            )
            .unwrap(),
            "2024-02-09"
        );
        assert_eq!(text(Value::Year(2155), &c).unwrap(), "2155");
        assert_eq!(text(Value::Year(0), &c).unwrap(), "0000");
        let dt = Value::DateTime {
            year: 2001,
            month: 12,
            day: 31,
            hour: 23,
            minute: 5,
            second: 9,
            micros: 123_456,
        };
        assert_eq!(
            text(dt.clone(), &col(ColumnType::DateTime2, 0)).unwrap(),
            "2001-12-31 23:05:09"
        );
        assert_eq!(
            text(dt.clone(), &col(ColumnType::DateTime2, 3)).unwrap(),
            "2001-12-31 23:05:09.123"
        );
        assert_eq!(
            text(dt, &col(ColumnType::DateTime2, 6)).unwrap(),
            "2001-12-31 23:05:09.123456"
        );
        let t = Value::Time {
            negative: true,
            hours: 838,
            minutes: 59,
            seconds: 59,
            micros: 0,
        };
        assert_eq!(text(t, &col(ColumnType::Time2, 0)).unwrap(), "-838:59:59");
        let t = Value::Time {
            negative: false,
            hours: 1,
            minutes: 2,
            seconds: 3,
            micros: 500_000,
        };
        assert_eq!(text(t, &col(ColumnType::Time2, 1)).unwrap(), "01:02:03.5");
    }

    #[test]
    fn timestamps_render_in_utc() {
        let c = col(ColumnType::Timestamp2, 0);
        assert_eq!(
            text(Value::Timestamp { secs: 0, micros: 0 }, &c).unwrap(),
            "1970-01-01 00:00:00"
        );
        assert_eq!(
            text(
                Value::Timestamp {
                    secs: 1_709_251_199,
                    micros: 0
                },
                &c
            )
            .unwrap(),
            "2024-02-29 23:59:59"
        );
        assert_eq!(
            text(
                Value::Timestamp {
                    secs: u32::MAX,
                    micros: 0
                },
                &c
            )
            .unwrap(),
            "2106-02-07 06:28:15"
        );
    }

    #[test]
    fn wire_types_replace_binlog_only_codes() {
        assert_eq!(wire_type(ColumnType::DateTime2), 12);
        assert_eq!(wire_type(ColumnType::Timestamp2), 7);
        assert_eq!(wire_type(ColumnType::Time2), 11);
        assert_eq!(wire_type(ColumnType::VarChar), 253);
        assert_eq!(wire_type(ColumnType::LongBlob), 252);
        assert_eq!(wire_type(ColumnType::Long), 3);
    }

    #[test]
    fn decimal_text_check() {
        assert!(is_decimal_text("-12.50"));
        assert!(is_decimal_text("7"));
        assert!(!is_decimal_text("1e5"));
        assert!(!is_decimal_text("1."));
        assert!(!is_decimal_text("-"));
    }
}
