//! ALTER TABLE as one change: the conversion of an existing value into a column of the new
//! definition ([`convert`]) and the test of which type changes onelog performs
//! ([`convertible`]).
//!
//! Owns the value rules of [`CatalogChange::AlterTable`](crate::catalog::CatalogChange): a
//! new column fed from an old one gets the old value converted to its type, as MariaDB's
//! table copy does in strict mode (an error names the column and the 1-based row, in primary
//! key order, which is MariaDB's copy order for InnoDB). Called by `store.rs` (the row
//! rewrite, during validation on a scratch root and again when the sink applies the logged
//! change: the conversion is a pure function of the old value and the new column, so both
//! give the same rows) and by the SQL layer ([`convertible`], to refuse other type changes
//! with 1235 before anything is logged). Imports only the catalog.
//!
//! Invariant: [`convert`] of a value of the old type that [`convertible`] accepted either
//! fails or returns a value that [`SqlType::coerce`] accepts for the new column unchanged.

use onelog_binlog::Value;

use crate::catalog::{ColumnDef, ColumnSource, SqlType, TableDef};
use crate::error::{AlterValueKind, EngineError};

/// The type changes ALTER TABLE converts values for: within a kind (by range, length or
/// fsp), integers and decimals to and from text, binary strings among themselves, exact
/// numbers to FLOAT/DOUBLE and back to integers, DATE to and from DATETIME; any other type
/// change is refused by the SQL layer (1235).
pub fn convertible(from: &SqlType, to: &SqlType) -> bool {
    use SqlType::*;
    let exact = |t: &SqlType| t.is_integer() || matches!(t, Decimal { .. });
    let float = |t: &SqlType| matches!(t, Float | Double);
    if from == to || std::mem::discriminant(from) == std::mem::discriminant(to) {
        // Same kind, other length, range or fsp: `coerce` checks the value.
        return true;
    }
    let binary = |t: &SqlType| t.is_string() && !t.is_text();
    ((exact(from) || from.is_text()) && (exact(to) || to.is_text()))
        || (binary(from) && binary(to))
        || ((exact(from) || float(from)) && float(to))
        || (float(from) && to.is_integer())
        || matches!((from, to), (Date, DateTime(_)) | (DateTime(_), Date))
}

/// How an ALTER TABLE fills its new definition (the rest of
/// [`CatalogChange::AlterTable`](crate::catalog::CatalogChange)).
#[derive(Debug, Clone, PartialEq)]
pub struct AlterPlan {
    /// Where each new column's values come from.
    pub sources: Vec<ColumnSource>,
    /// The session's sql_mode is strict: conversion failures are errors.
    pub strict: bool,
    /// `AUTO_INCREMENT=N` among the operations.
    pub auto_increment: Option<u64>,
}

/// Whether `new` keeps every row of `old` as it is: each column fed from the same position,
/// with the same type and collation and no new NOT NULL, the same primary key, and only old
/// indexes (RENAME COLUMN, SET/DROP DEFAULT, a comment, DROP INDEX, a table rename). Such an
/// ALTER changes no stored value and no key, so the rows are not copied (as MariaDB's
/// instant ALTER).
pub fn keeps_rows(old: &TableDef, new: &TableDef, sources: &[ColumnSource]) -> bool {
    let same_columns = old.columns.len() == new.columns.len()
        && sources.len() == new.columns.len()
        && sources.iter().enumerate().all(|(i, s)| {
            let (o, n) = (&old.columns[i], &new.columns[i]);
            *s == ColumnSource::Old(i)
                && o.ty == n.ty
                && o.collation == n.collation
                && (n.nullable || !o.nullable)
        });
    same_columns
        && old.primary_key == new.primary_key
        && new.indexes.iter().all(|ix| {
            old.index_by_id(ix.id)
                .is_some_and(|o| o.columns == ix.columns && o.unique == ix.unique)
        })
}

/// A condition the copy raised and went on after: a note (either mode), or a warning where
/// strict mode would have failed.
#[derive(Debug)]
pub struct Condition {
    pub note: bool,
    /// The condition's code and text (an [`EngineError::AlterValue`]).
    pub error: EngineError,
}

/// The copy of one value: which column and row, and whether a condition is an error.
struct Copy<'a> {
    col: &'a ColumnDef,
    row: u64,
    strict: bool,
    conditions: &'a mut Vec<Condition>,
}

impl Copy<'_> {
    fn error(&self, kind: AlterValueKind) -> EngineError {
        EngineError::AlterValue {
            kind,
            column: self.col.name.clone(),
            row: self.row,
        }
    }

    /// Strict: the error; otherwise a warning, and the copy goes on.
    fn raise(&mut self, kind: AlterValueKind) -> Result<(), EngineError> {
        let e = self.error(kind);
        if self.strict {
            return Err(e);
        }
        self.conditions.push(Condition {
            note: false,
            error: e,
        });
        Ok(())
    }
}

/// How a text reads as a number.
#[derive(Debug, PartialEq)]
enum Reading {
    Exact,
    /// Trailing spaces: a note (MariaDB's 1292 note).
    TrailingSpace,
    /// Anything else after the number (or no number): 1292.
    Garbage,
}

/// The number at the start of `text` (leading spaces skipped): its text (with the fraction
/// digits when `fraction`, else the integer part and the fraction kept for rounding) and how
/// the rest reads.
fn number_prefix(text: &str, fraction: bool) -> (String, Reading) {
    let t = text.trim_start_matches(' ');
    let b = t.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'-' | b'+')));
    let digits_start = i;
    while b.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    let int_end = i;
    if b.get(i) == Some(&b'.') {
        i += 1;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
    }
    let any = int_end > digits_start || i > int_end + 1;
    let end = if fraction { i } else { int_end };
    let rest = &t[end..];
    let reading = if !any {
        Reading::Garbage
    } else if rest.is_empty() {
        Reading::Exact
    } else if rest.bytes().all(|c| c == b' ') {
        Reading::TrailingSpace
    } else {
        Reading::Garbage
    };
    let mut num = if any { t[..i].to_string() } else { "0".into() };
    if num.ends_with('.') {
        num.pop();
    }
    if num.starts_with('.') || num.starts_with("-.") || num.starts_with("+.") {
        num = num.replacen('.', "0.", 1);
    }
    (num, reading)
}

/// The value `v` (a value of a column of type `from`) in column `col`, at `row` (1-based) of
/// the copy, as MariaDB's ALTER TABLE copies it. Strict: NULL into NOT NULL is 1265, numbers
/// out of the new range 1264, a number too long for its text 1406 (text cut shorter 1265),
/// text that is not a number 1292. Not strict: the same conditions are warnings in
/// `conditions` and the value is the type's zero, clipped to the range, cut, or the number the
/// text starts with. Text that is a number followed by spaces adds a note in both modes.
pub fn convert(
    col: &ColumnDef,
    from: &SqlType,
    v: &Value,
    row: u64,
    strict: bool,
    conditions: &mut Vec<Condition>,
) -> Result<Value, EngineError> {
    let mut c = Copy {
        col,
        row,
        strict,
        conditions,
    };
    if *v == Value::Null {
        if col.nullable {
            return Ok(Value::Null);
        }
        c.raise(AlterValueKind::Truncated)?;
        return Ok(zero_of(col));
    }
    let to = &col.ty;
    let input = if to.is_string() && !from.is_string() {
        // A number as its text (DECIMAL keeps its scale's digits, as MariaDB prints it).
        match v {
            Value::Int(i) => Value::bytes(i.to_string().into_bytes()),
            Value::UInt(u) => Value::bytes(u.to_string().into_bytes()),
            Value::Decimal(d) => Value::bytes(d.clone().into_bytes()),
            other => other.clone(),
        }
    } else if (to.is_integer() || matches!(to, SqlType::Decimal { .. })) && from.is_string() {
        let text = match v {
            Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
            other => format!("{other:?}"),
        };
        let integer = to.is_integer();
        let (num, reading) = number_prefix(&text, !integer);
        let kind = AlterValueKind::NotNumber {
            ty: if integer { "INTEGER" } else { "DECIMAL" },
            text,
        };
        match reading {
            Reading::Exact => {}
            Reading::TrailingSpace => c.conditions.push(Condition {
                note: true,
                error: c.error(kind),
            }),
            Reading::Garbage => c.raise(kind)?,
        }
        if integer {
            // The integer part, rounded by the fraction that follows it (as MariaDB's
            // strntoull10rnd).
            return integer_in(&mut c, integer_of(&num).unwrap_or(0));
        }
        Value::Decimal(num)
    } else if to.is_integer() && !from.is_integer() {
        // DECIMAL rounds half away from zero, FLOAT/DOUBLE half to even (rint), as MariaDB.
        match v {
            Value::Decimal(d) => {
                let i = integer_of(d).ok_or_else(|| c.error(AlterValueKind::OutOfRange))?;
                return integer_in(&mut c, i);
            }
            Value::Double(_) | Value::Float(_) => {
                let f = match v {
                    Value::Float(f) => f64::from(*f),
                    Value::Double(d) => *d,
                    _ => 0.0,
                };
                // Past i128 both ways clips like any out-of-range value.
                let i = f.round_ties_even().clamp(-1e38, 1e38) as i128;
                return integer_in(&mut c, i);
            }
            other => other.clone(),
        }
    } else if matches!(to, SqlType::Float | SqlType::Double) {
        match v {
            Value::Decimal(d) => Value::Double(d.parse::<f64>().unwrap_or(0.0)),
            other => other.clone(),
        }
    } else if let (SqlType::Date, Value::DateTime { .. }) = (to, v) {
        return Ok(date_of(&mut c, v));
    } else {
        v.clone()
    };
    coerce_or_clip(&mut c, from, input)
}

/// Row `row`'s number in an added AUTO_INCREMENT column (1264 past the type's range, as
/// MariaDB).
pub fn number(col: &ColumnDef, row: u64) -> Result<Value, EngineError> {
    col.ty
        .coerce(&col.name, Value::UInt(row))
        .map_err(|_| EngineError::AlterValue {
            kind: AlterValueKind::OutOfRange,
            column: col.name.clone(),
            row,
        })
}

/// A DATETIME's date (note 1265 when it had a time of day, in both modes, as MariaDB).
fn date_of(c: &mut Copy<'_>, v: &Value) -> Value {
    let Value::DateTime {
        year,
        month,
        day,
        hour,
        minute,
        second,
        micros,
    } = *v
    else {
        return v.clone();
    };
    if (hour, minute, second, micros) != (0, 0, 0, 0) {
        c.conditions.push(Condition {
            note: true,
            error: c.error(AlterValueKind::Truncated),
        });
    }
    Value::Date { year, month, day }
}

/// `i` in the integer column: clipped to its range (1264) when outside.
fn integer_in(c: &mut Copy<'_>, i: i128) -> Result<Value, EngineError> {
    let to = &c.col.ty;
    let (lo, hi): (i128, i128) = match (to.signed_range(), to.unsigned_max()) {
        (Some((lo, hi)), _) => (lo.into(), hi.into()),
        (None, Some(max)) => (0, max.into()),
        (None, None) => (i128::MIN, i128::MAX),
    };
    let clipped = i.clamp(lo, hi);
    if clipped != i {
        c.raise(AlterValueKind::OutOfRange)?;
    }
    let v = match i64::try_from(clipped) {
        Ok(x) => Value::Int(x),
        Err(_) => Value::UInt(u64::try_from(clipped).unwrap_or(u64::MAX)),
    };
    to.coerce(&c.col.name, v)
        .map_err(|_| c.error(AlterValueKind::OutOfRange))
}

/// [`SqlType::coerce`] of `input`, its failures raised (strict: the error) or, not strict,
/// the value clipped to the range or cut to the length.
fn coerce_or_clip(c: &mut Copy<'_>, from: &SqlType, input: Value) -> Result<Value, EngineError> {
    let to = c.col.ty;
    let negative = match &input {
        Value::Int(i) => *i < 0,
        Value::Decimal(d) => d.starts_with('-'),
        _ => false,
    };
    match to.coerce(&c.col.name, input.clone()) {
        Ok(v) => Ok(v),
        Err(EngineError::OutOfRange { .. }) => {
            c.raise(AlterValueKind::OutOfRange)?;
            Ok(clip(&to, negative))
        }
        Err(EngineError::DataTooLong { .. }) => {
            // Text cut shorter is 1265; a number whose text does not fit is 1406 (a warning
            // 1265 when not strict).
            if from.is_string() || !c.strict {
                c.raise(AlterValueKind::Truncated)?;
            } else {
                c.raise(AlterValueKind::TooLong)?;
            }
            Ok(cut(&to, input))
        }
        Err(EngineError::WrongValue { .. }) => {
            c.raise(AlterValueKind::Truncated)?;
            Ok(zero_of(c.col))
        }
        Err(e) => Err(e),
    }
}

/// The end of `ty`'s range on the value's side.
fn clip(ty: &SqlType, negative: bool) -> Value {
    match *ty {
        SqlType::Decimal { precision, scale } => {
            let int = "9".repeat(usize::from(precision - scale));
            let mut s = String::new();
            if negative {
                s.push('-');
            }
            s.push_str(if int.is_empty() { "0" } else { &int });
            if scale > 0 {
                s.push('.');
                s.push_str(&"9".repeat(usize::from(scale)));
            }
            Value::Decimal(s)
        }
        t => match (t.signed_range(), t.unsigned_max()) {
            (Some((lo, hi)), _) => Value::Int(if negative { lo } else { hi }),
            (None, Some(max)) => Value::UInt(if negative { 0 } else { max }),
            _ => Value::Null,
        },
    }
}

/// `v` cut to `ty`'s length (characters for CHAR/VARCHAR, bytes otherwise, at a character
/// boundary for text).
fn cut(ty: &SqlType, v: Value) -> Value {
    let Value::Bytes(b) = v else {
        return v;
    };
    match *ty {
        SqlType::Char(n) | SqlType::VarChar(n) => {
            let s = String::from_utf8_lossy(&b);
            Value::bytes(s.chars().take(n as usize).collect::<String>())
        }
        SqlType::Binary(n) | SqlType::VarBinary(n) => {
            let n = b.len().min(n as usize);
            Value::bytes(&b[..n])
        }
        t => {
            let max = match t {
                SqlType::TinyText | SqlType::TinyBlob => 255,
                SqlType::Text | SqlType::Blob => 65_535,
                _ => 16_777_215,
            };
            let mut n = b.len().min(max);
            while t.is_text() && n > 0 && std::str::from_utf8(&b[..n]).is_err() {
                n -= 1;
            }
            Value::bytes(&b[..n])
        }
    }
}

/// The value MariaDB gives a NOT NULL column for NULL in a non-strict copy: the type's zero.
fn zero_of(col: &ColumnDef) -> Value {
    let v = match col.ty {
        SqlType::Float | SqlType::Double => Value::Double(0.0),
        SqlType::Decimal { .. } => Value::Decimal("0".into()),
        SqlType::Date => Value::Date {
            year: 0,
            month: 0,
            day: 0,
        },
        SqlType::DateTime(_) | SqlType::Timestamp(_) => Value::DateTime {
            year: 0,
            month: 0,
            day: 0,
            hour: 0,
            minute: 0,
            second: 0,
            micros: 0,
        },
        SqlType::Time(_) => Value::Time {
            negative: false,
            hours: 0,
            minutes: 0,
            seconds: 0,
            micros: 0,
        },
        SqlType::Year => Value::Year(0),
        t if t.is_integer() => Value::Int(0),
        _ => Value::bytes(Vec::new()),
    };
    col.ty.coerce(&col.name, v).unwrap_or(Value::Null)
}

/// A number's text (`[-+]digits[.digits]`) as an integer rounded half away from zero. None
/// when it is not one (or past i128, which no column holds).
fn integer_of(text: &str) -> Option<i128> {
    let (neg, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let (int_part, frac) = digits.split_once('.').unwrap_or((digits, ""));
    if int_part.is_empty() || !int_part.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if !frac.bytes().all(|b| b.is_ascii_digit()) || int_part.len() > 30 {
        return None;
    }
    let mut n: i128 = int_part.parse().ok()?;
    if frac.as_bytes().first().is_some_and(|&d| d >= b'5') {
        n += 1;
    }
    Some(if neg { -n } else { n })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::ColumnSpec;

    fn col(ty: SqlType, nullable: bool) -> ColumnDef {
        let mut s = ColumnSpec::new("c", ty);
        s.nullable = nullable;
        ColumnDef::from_spec(&s).unwrap()
    }

    fn strict(to: ColumnDef, from: SqlType, v: Value, row: u64) -> Result<Value, EngineError> {
        let mut conds = Vec::new();
        let r = convert(&to, &from, &v, row, true, &mut conds);
        assert!(conds.iter().all(|c| c.note));
        r
    }

    /// The value and the conditions (note?, code, text) of a non-strict copy.
    fn loose(
        to: ColumnDef,
        from: SqlType,
        v: Value,
        row: u64,
    ) -> (Value, Vec<(bool, u16, String)>) {
        let mut conds = Vec::new();
        let v = convert(&to, &from, &v, row, false, &mut conds).unwrap();
        let conds = conds
            .into_iter()
            .map(|c| (c.note, c.error.error_code().code, c.error.to_string()))
            .collect();
        (v, conds)
    }

    fn kind(r: Result<Value, EngineError>) -> (AlterValueKind, u64) {
        match r {
            Err(EngineError::AlterValue { kind, row, .. }) => (kind, row),
            other => panic!("{other:?}"),
        }
    }

    const INT: SqlType = SqlType::Int { unsigned: false };
    const TINY: SqlType = SqlType::TinyInt { unsigned: false };

    fn s(t: &str) -> Value {
        Value::bytes(t.as_bytes())
    }

    // Each case checked on MariaDB 10.11 (ALTER TABLE t MODIFY c ... over such a row).
    #[test]
    fn strict_conversions_as_mariadb_copies() {
        assert_eq!(
            strict(col(INT, true), SqlType::VarChar(10), s("12"), 1).unwrap(),
            Value::Int(12)
        );
        let dec = SqlType::Decimal {
            precision: 5,
            scale: 2,
        };
        assert_eq!(
            strict(col(INT, true), dec, Value::Decimal("-3.50".into()), 1).unwrap(),
            Value::Int(-4)
        );
        assert_eq!(
            strict(col(SqlType::VarChar(5), true), INT, Value::Int(-7), 1).unwrap(),
            s("-7")
        );
        let (k, _) = kind(strict(col(INT, true), SqlType::VarChar(10), s("abcdef"), 1));
        assert_eq!(
            k,
            AlterValueKind::NotNumber {
                ty: "INTEGER",
                text: "abcdef".into()
            }
        );
        let (k, _) = kind(strict(col(INT, true), SqlType::VarChar(10), s("1.5"), 1));
        assert!(matches!(k, AlterValueKind::NotNumber { .. }));
        assert_eq!(
            kind(strict(col(TINY, true), INT, Value::Int(300), 2)),
            (AlterValueKind::OutOfRange, 2)
        );
        assert_eq!(
            kind(strict(
                col(SqlType::VarChar(2), true),
                INT,
                Value::Int(300),
                2
            )),
            (AlterValueKind::TooLong, 2)
        );
        assert_eq!(
            kind(strict(col(INT, false), INT, Value::Null, 1)),
            (AlterValueKind::Truncated, 1)
        );
        assert_eq!(
            kind(strict(
                col(SqlType::VarChar(3), true),
                SqlType::VarChar(10),
                s("abcdef"),
                1
            )),
            (AlterValueKind::Truncated, 1)
        );
    }

    // MariaDB 10.11 with sql_mode='' over the same values: the value and its conditions.
    #[test]
    fn non_strict_conversions_clip_cut_and_warn_as_mariadb() {
        let w = |code: u16, text: &str| vec![(false, code, text.to_string())];
        let vc = SqlType::VarChar(10);
        assert_eq!(
            loose(col(SqlType::VarChar(3), true), vc, s("abcdef"), 1),
            (s("abc"), w(1265, "Data truncated for column 'c' at row 1"))
        );
        assert_eq!(
            loose(col(TINY, true), INT, Value::Int(300), 1),
            (
                Value::Int(127),
                w(1264, "Out of range value for column 'c' at row 1")
            )
        );
        assert_eq!(
            loose(col(TINY, true), INT, Value::Int(-300), 2),
            (
                Value::Int(-128),
                w(1264, "Out of range value for column 'c' at row 2")
            )
        );
        assert_eq!(
            loose(col(INT, false), INT, Value::Null, 1),
            (
                Value::Int(0),
                w(1265, "Data truncated for column 'c' at row 1")
            )
        );
        assert_eq!(
            loose(col(INT, true), vc, s("12abc"), 1),
            (
                Value::Int(12),
                w(1292, "Truncated incorrect INTEGER value: '12abc'")
            )
        );
        assert_eq!(
            loose(col(INT, true), vc, s("abc"), 2),
            (
                Value::Int(0),
                w(1292, "Truncated incorrect INTEGER value: 'abc'")
            )
        );
        // A number followed by spaces: a note, in strict mode too.
        let note = vec![(
            true,
            1292,
            "Truncated incorrect INTEGER value: ' 13 '".to_string(),
        )];
        assert_eq!(
            loose(col(INT, true), vc, s(" 13 "), 3),
            (Value::Int(13), note)
        );
        assert_eq!(
            strict(col(INT, true), vc, s(" 13 "), 3).unwrap(),
            Value::Int(13)
        );
        let d41 = SqlType::Decimal {
            precision: 4,
            scale: 1,
        };
        let d62 = SqlType::Decimal {
            precision: 6,
            scale: 2,
        };
        assert_eq!(
            loose(col(d41, true), d62, Value::Decimal("1234.50".into()), 1),
            (
                Value::Decimal("999.9".into()),
                w(1264, "Out of range value for column 'c' at row 1")
            )
        );
        assert_eq!(
            loose(col(d41, true), d62, Value::Decimal("-9999.99".into()), 2).0,
            Value::Decimal("-999.9".into())
        );
        // TINYINT to VARCHAR(2): 127 is '12', -128 '-1', each with 1265.
        assert_eq!(
            loose(col(SqlType::VarChar(2), true), TINY, Value::Int(-128), 2),
            (s("-1"), w(1265, "Data truncated for column 'c' at row 2"))
        );
        assert_eq!(
            loose(
                col(SqlType::Char(2), true),
                SqlType::VarChar(3),
                s("abc"),
                1
            )
            .0,
            s("ab")
        );
        // '-1' into TINYINT UNSIGNED: 0 with 1264.
        let ut = SqlType::TinyInt { unsigned: true };
        assert_eq!(
            loose(col(ut, true), SqlType::VarChar(2), s("-1"), 2),
            (
                Value::UInt(0),
                w(1264, "Out of range value for column 'c' at row 2")
            )
        );
    }

    // MariaDB 10.11: MODIFY i DOUBLE, d INT, dt DATE; then da DATETIME, f DOUBLE.
    #[test]
    fn floats_and_dates_convert_as_mariadb() {
        let dbl = SqlType::Double;
        assert_eq!(
            strict(col(dbl, true), INT, Value::Int(-3), 2).unwrap(),
            Value::Double(-3.0)
        );
        assert_eq!(
            strict(col(INT, true), dbl, Value::Double(2.5), 1).unwrap(),
            Value::Int(2)
        );
        assert_eq!(
            strict(col(INT, true), dbl, Value::Double(-2.5), 2).unwrap(),
            Value::Int(-2)
        );
        assert_eq!(
            strict(col(dbl, true), SqlType::Float, Value::Float(0.1), 2).unwrap(),
            Value::Double(0.10000000149011612)
        );
        let dt = |h: u8| Value::DateTime {
            year: 2020,
            month: 1,
            day: 2,
            hour: h,
            minute: 4,
            second: 5,
            micros: 0,
        };
        let date = Value::Date {
            year: 2020,
            month: 1,
            day: 2,
        };
        let (v, conds) = loose(col(SqlType::Date, true), SqlType::DateTime(0), dt(3), 1);
        assert_eq!(v, date);
        assert_eq!(
            conds,
            vec![(
                true,
                1265,
                "Data truncated for column 'c' at row 1".to_string()
            )]
        );
        // A note, not an error, in strict mode too.
        assert_eq!(
            strict(col(SqlType::Date, true), SqlType::DateTime(0), dt(3), 1).unwrap(),
            date
        );
        assert_eq!(
            strict(
                col(SqlType::DateTime(0), true),
                SqlType::Date,
                date.clone(),
                1
            )
            .unwrap(),
            Value::DateTime {
                year: 2020,
                month: 1,
                day: 2,
                hour: 0,
                minute: 0,
                second: 0,
                micros: 0
            }
        );
    }

    #[test]
    fn metadata_only_changes_keep_the_rows() {
        use crate::catalog::{IndexSpec, TableSpec};
        let spec = TableSpec {
            db: "d".into(),
            name: "t".into(),
            columns: vec![
                ColumnSpec::new("id", INT).not_null(),
                ColumnSpec::new("a", SqlType::VarChar(5)),
            ],
            primary_key: vec!["id".into()],
            indexes: vec![IndexSpec::new("ka", &["a"], false)],
        };
        let old = TableDef::from_spec(1, &spec).unwrap();
        let same = vec![ColumnSource::Old(0), ColumnSource::Old(1)];
        let mut renamed = old.clone();
        renamed.columns[1].name = "b".into();
        renamed.columns[1].default = Some(Value::bytes(b"x"));
        assert!(keeps_rows(&old, &renamed, &same));
        let mut no_index = old.clone();
        no_index.indexes.clear();
        assert!(keeps_rows(&old, &no_index, &same));
        // A type change, a new NOT NULL, a moved column or a new key copies the rows.
        let mut wider = old.clone();
        wider.columns[1].ty = SqlType::VarChar(9);
        assert!(!keeps_rows(&old, &wider, &same));
        let mut not_null = old.clone();
        not_null.columns[1].nullable = false;
        assert!(!keeps_rows(&old, &not_null, &same));
        let swapped = vec![ColumnSource::Old(1), ColumnSource::Old(0)];
        assert!(!keeps_rows(&old, &old, &swapped));
        let mut new_key = old.clone();
        new_key
            .add_index(&IndexSpec::new("kb", &["id", "a"], true))
            .unwrap();
        assert!(!keeps_rows(&old, &new_key, &same));
    }

    #[test]
    fn convertible_families() {
        assert!(convertible(&INT, &SqlType::VarChar(3)));
        assert!(convertible(&SqlType::Text, &INT));
        assert!(!convertible(&SqlType::Date, &INT));
        assert!(!convertible(&SqlType::VarBinary(3), &SqlType::VarChar(3)));
        assert!(convertible(&SqlType::DateTime(0), &SqlType::DateTime(3)));
        assert!(convertible(&SqlType::Date, &SqlType::DateTime(3)));
        assert!(!convertible(&SqlType::Date, &SqlType::Timestamp(0)));
        assert!(convertible(&INT, &SqlType::Double));
        assert!(!convertible(&SqlType::Double, &SqlType::VarChar(3)));
        assert!(!convertible(&SqlType::VarChar(3), &SqlType::Double));
        assert!(convertible(&SqlType::Char(3), &SqlType::VarChar(3)));
    }
}
