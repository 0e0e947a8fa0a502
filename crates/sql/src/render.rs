//! Text-protocol rendering of values: the exact bytes MySQL sends for each type (DECIMAL
//! text, `YYYY-MM-DD HH:MM:SS[.ffffff]` with the column's decimals, TIME, YEAR, shortest
//! round-trip DOUBLE, FLOAT to 6 digits, as MariaDB's `my_gcvt`). Shared by the server (result rows) and the SQL layer (CONCAT).
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
        Value::Bytes(b) => b.to_vec(),
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

/// A DOUBLE's (`single`: a FLOAT's) text as MariaDB's `my_gcvt` writes it: a DOUBLE's shortest
/// round-trip digits, a FLOAT's rounded to 6 significant digits (FLT_DIG), trailing zeros
/// dropped; plain notation (`0.000000000000001`, `123457000`, `123456789012345.6`) unless
/// the value is below 1e-15 or is a whole number of more than 15 digits (`1e-16`, `1e15`,
/// `1.5e15`, `3.4e38`), which are written `D.DDDeN` (no `+`, no padding).
fn float_text(d: f64, single: bool) -> Vec<u8> {
    if d == 0.0 {
        return b"0".to_vec();
    }
    if !d.is_finite() {
        return format!("{d}").into_bytes();
    }
    // `D.DDDDe±N`: the digits and the exponent of the first one.
    let sci = if single {
        format!("{:.5e}", f64::from(d as f32))
    } else {
        format!("{d:e}")
    };
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let digits = digits.trim_end_matches('0');
    let digits = if digits.is_empty() { "0" } else { digits };
    let len = digits.len() as i32;
    // MariaDB's `decpt`: the value is 0.DIGITS x 10^decpt.
    let decpt = exp + 1;
    let mut out = String::with_capacity(digits.len() + 24);
    if negative {
        out.push('-');
    }
    if decpt >= -14 && (decpt <= 15 || len > decpt) {
        if decpt <= 0 {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (-decpt) as usize));
            out.push_str(digits);
        } else if decpt < len {
            out.push_str(&digits[..decpt as usize]);
            out.push('.');
            out.push_str(&digits[decpt as usize..]);
        } else {
            out.push_str(digits);
            out.extend(std::iter::repeat_n('0', (decpt - len) as usize));
        }
    } else {
        out.push_str(&digits[..1]);
        if len > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push_str(&format!("e{}", decpt - 1));
    }
    out.into_bytes()
}

/// A DOUBLE's text (see [`float_text`]), for the expression layer's string conversions.
pub(crate) fn double_text(d: f64) -> String {
    String::from_utf8(float_text(d, false)).unwrap_or_default()
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

    #[test]
    fn floats_and_doubles_read_as_mariadb_writes_them() {
        // Measured on MariaDB 10.11.14: `SELECT d` of DOUBLE literals and columns, and a
        // FLOAT column holding each value.
        for (d, want) in [
            (0.000012345, "0.000012345"),
            (1e-5, "0.00001"),
            (1.5e-7, "0.00000015"),
            (1e-14, "0.00000000000001"),
            (1.5e-14, "0.000000000000015"),
            (1e-15, "0.000000000000001"),
            (1e-16, "1e-16"),
            (1e15, "1e15"),
            (1.5e15, "1.5e15"),
            (123456789012345678.0, "1.2345678901234568e17"),
            (1234567890123456.0, "1.234567890123456e15"),
            (123456789012345.6, "123456789012345.6"),
            (1e16, "1e16"),
            (0.0001, "0.0001"),
            (-2.5, "-2.5"),
            (0.1, "0.1"),
        ] {
            assert_eq!(double_text(d), want, "{d}");
        }
        for (f, want) in [
            (1.2345678f32, "1.23457"),
            (123456789.0, "123457000"),
            (0.000012345, "0.000012345"),
            (1e-5, "0.00001"),
            (3.4e38, "3.4e38"),
            (100000.0, "100000"),
            (1234567.0, "1234570"),
            (0.1, "0.1"),
            (-2.5, "-2.5"),
            (999999.5, "1000000"),
            (12345.678, "12345.7"),
            (1e15, "1e15"),
            (0.0001, "0.0001"),
            (16777217.0, "16777200"),
        ] {
            assert_eq!(text_plain(&Value::Float(f)), want.as_bytes(), "{f}");
        }
    }
}
