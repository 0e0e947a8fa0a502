//! Text-protocol rendering of values: the exact bytes MySQL sends for each type (DECIMAL
//! text, `YYYY-MM-DD HH:MM:SS[.ffffff]` with the column's decimals, TIME, YEAR, shortest
//! round-trip FLOAT/DOUBLE). Shared by the server (result rows) and the SQL layer (CONCAT).
//!
//! Invariants: the text of a value is the same as the protocol layer's own renderer writes for
//! it (the server's render_agreement property test), in MariaDB's text formats.

use onelog_binlog::{ColumnType, Value};

use crate::expr::temporal::datetime_from_unix;
use crate::output::Column;

/// The text form of `v` in a result column `col`; None for NULL.
pub fn text(v: &Value, col: &Column) -> Option<Vec<u8>> {
    if *v == Value::Null {
        return None;
    }
    let fsp = match col.column_type {
        ColumnType::DateTime
        | ColumnType::DateTime2
        | ColumnType::Timestamp
        | ColumnType::Timestamp2
        | ColumnType::Time
        | ColumnType::Time2 => Some(col.decimals.min(6)),
        _ => None,
    };
    Some(match (v, fsp) {
        // A FLOAT(M,D) column: D decimals, of the value as a FLOAT holds it.
        (Value::Float(f), _) if col.column_type == ColumnType::Float && col.decimals < 31 => {
            format!("{:.*}", usize::from(col.decimals), f64::from(*f)).into_bytes()
        }
        (Value::Float(f), _) if col.column_type == ColumnType::Float => {
            float_text(f64::from(*f), true)
        }
        (Value::Year(y), _) => format!("{y:04}").into_bytes(),
        // A DOUBLE column with fixed decimals (STD, VARIANCE): MariaDB writes that many.
        (Value::Double(x), _) if col.column_type == ColumnType::Double && col.decimals < 31 => {
            format!("{x:.*}", usize::from(col.decimals)).into_bytes()
        }
        (Value::DateTime { .. } | Value::Timestamp { .. } | Value::Time { .. }, Some(f)) => {
            temporal_text(v, Some(f))
        }
        _ => text_plain(v),
    })
}

/// The text form of a value without column information (fractions shown when non-zero).
pub fn text_plain(v: &Value) -> Vec<u8> {
    match v {
        Value::Null => b"NULL".to_vec(),
        Value::Int(i) => i.to_string().into_bytes(),
        Value::UInt(u) => u.to_string().into_bytes(),
        Value::Float(f) => float_text(f64::from(*f), true),
        Value::Double(d) => float_text(*d, false),
        Value::Decimal(s) => s.as_bytes().to_vec(),
        Value::Bytes(b) => b.clone(),
        Value::Year(y) => format!("{y:04}").into_bytes(),
        Value::Date { year, month, day } => format!("{year:04}-{month:02}-{day:02}").into_bytes(),
        other => temporal_text(other, None),
    }
}

fn frac(micros: u32, fsp: Option<u8>) -> String {
    match fsp {
        Some(0) => String::new(),
        Some(f) => {
            let s = format!("{micros:06}");
            format!(".{}", &s[..usize::from(f)])
        }
        None if micros == 0 => String::new(),
        None => format!(".{micros:06}"),
    }
}

fn temporal_text(v: &Value, fsp: Option<u8>) -> Vec<u8> {
    match v {
        Value::Timestamp { secs, micros } => {
            temporal_text(&datetime_from_unix(i64::from(*secs), *micros), fsp)
        }
        Value::DateTime {
            year,
            month,
            day,
            hour,
            minute,
            second,
            micros,
        } => format!(
            "{year:04}-{month:02}-{day:02} {hour:02}:{minute:02}:{second:02}{}",
            frac(*micros, fsp)
        )
        .into_bytes(),
        Value::Time {
            negative,
            hours,
            minutes,
            seconds,
            micros,
        } => format!(
            "{}{hours:02}:{minutes:02}:{seconds:02}{}",
            if *negative { "-" } else { "" },
            frac(*micros, fsp)
        )
        .into_bytes(),
        other => text_plain(other),
    }
}

/// Shortest round-trip text, switching to exponent form like MySQL for large/small values.
fn float_text(d: f64, single: bool) -> Vec<u8> {
    if d == 0.0 {
        return b"0".to_vec();
    }
    let abs = d.abs();
    let s = if !(1e-4..1e15).contains(&abs) {
        let e = if single {
            format!("{:e}", d as f32)
        } else {
            format!("{d:e}")
        };
        // Rust prints `1e20`, `1.5e-7`: MySQL prints `1e20`, `1.5e-7` too.
        e
    } else if single {
        format!("{}", d as f32)
    } else {
        format!("{d}")
    };
    s.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(t: ColumnType, decimals: u8) -> Column {
        Column {
            name: "x".into(),
            org_name: String::new(),
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

    #[test]
    fn renders_mysql_text_forms() {
        let dt = Value::DateTime {
            year: 2024,
            month: 2,
            day: 29,
            hour: 1,
            minute: 2,
            second: 3,
            micros: 450000,
        };
        assert_eq!(
            text(&dt, &col(ColumnType::DateTime2, 0)).unwrap(),
            b"2024-02-29 01:02:03"
        );
        assert_eq!(
            text(&dt, &col(ColumnType::DateTime2, 2)).unwrap(),
            b"2024-02-29 01:02:03.45"
        );
        assert_eq!(
            text(&Value::Double(0.1), &col(ColumnType::Double, 31)).unwrap(),
            b"0.1"
        );
        assert_eq!(
            text(&Value::Double(1e20), &col(ColumnType::Double, 31)).unwrap(),
            b"1e20"
        );
        assert_eq!(
            text(&Value::Year(2001), &col(ColumnType::Year, 0)).unwrap(),
            b"2001"
        );
        assert_eq!(
            text(
                &Value::Time {
                    negative: true,
                    hours: 100,
                    minutes: 0,
                    seconds: 5,
                    micros: 0
                },
                &col(ColumnType::Time2, 0)
            )
            .unwrap(),
            b"-100:00:05"
        );
        assert!(text(&Value::Null, &col(ColumnType::Long, 0)).is_none());
    }
}
