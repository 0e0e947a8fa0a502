//! Result types ([`RType`]): what a value or expression's column looks like in result
//! metadata, and [`conform`], which makes a value agree with its declared type.
//!
//! Invariants: [`conform`] never turns a non-NULL value into NULL.

use onelog_binlog::{ColumnType, Value};
use onelog_engine::{SqlType, TableDef};

use super::ir::Expr;
use super::numeric::{int_value, num_dec, num_i128, num_of_quiet, to_f64_quiet, Dec};
use super::text::text_of;

/// The SQL type of an expression's result, for column metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RType {
    Int,
    UInt,
    Decimal(u8, u8),
    Double,
    /// A DOUBLE shown with this many decimals (MariaDB's STD/VARIANCE of an exact number:
    /// its scale + 4); arithmetic treats it as a DOUBLE.
    DoubleDec(u8),
    Str(u32),
    Date,
    DateTime(u8),
    Time,
    Year,
    Null,
    /// A table column (its type drives the metadata).
    Column(usize),
    /// Known only at execution (placeholders, variables): metadata from the first value.
    Dyn,
}

/// What result typing reads: the table's column types and the type of a sub-expression
/// (the recursion of `Expr::rtype`, handed to the functions' return-type rules).
pub(crate) struct TypeCx<'a> {
    pub table: Option<&'a TableDef>,
    pub sub: &'a dyn Fn(&Expr) -> RType,
}

impl TypeCx<'_> {
    /// The type of a sub-expression.
    pub fn of(&self, e: &Expr) -> RType {
        (self.sub)(e)
    }

    /// The type a value of type `r` has in arithmetic (strings are DOUBLE, YEAR an integer,
    /// a column its declared numeric type).
    pub fn numeric(&self, r: RType) -> RType {
        match r {
            RType::Column(c) => match self.table.and_then(|t| t.columns.get(c)).map(|c| c.ty) {
                Some(ty) if ty.is_integer() => {
                    if matches!(
                        ty,
                        SqlType::BigInt { unsigned: true }
                            | SqlType::Int { unsigned: true }
                            | SqlType::SmallInt { unsigned: true }
                            | SqlType::TinyInt { unsigned: true }
                            | SqlType::MediumInt { unsigned: true }
                    ) {
                        RType::UInt
                    } else {
                        RType::Int
                    }
                }
                Some(SqlType::Decimal { precision, scale }) => RType::Decimal(precision, scale),
                Some(SqlType::Year) => RType::Int,
                // The index / bit set of an ENUM or SET, the number of a BIT.
                Some(SqlType::Enum(_) | SqlType::Set(_) | SqlType::Bit(_)) => RType::UInt,
                Some(SqlType::Float | SqlType::Double) => RType::Double,
                _ => RType::Double,
            },
            RType::Str(_) | RType::DoubleDec(_) => RType::Double,
            RType::Dyn => RType::Dyn,
            RType::Year => RType::Int,
            other => other,
        }
    }
}

/// Type of a literal value.
pub(crate) fn value_rtype(v: &Value) -> RType {
    match v {
        Value::Null => RType::Null,
        Value::Int(_) => RType::Int,
        Value::UInt(_) => RType::UInt,
        Value::Float(_) | Value::Double(_) => RType::Double,
        Value::Decimal(s) => {
            let d = Dec::parse(s).unwrap_or(Dec::from_int(0));
            let digits = d.m.num_digits() as u8;
            RType::Decimal(digits.max(d.s as u8 + 1).min(65), (d.s as u8).min(30))
        }
        Value::Bytes(b) => RType::Str(b.len() as u32),
        Value::Date { .. } => RType::Date,
        Value::DateTime { .. } | Value::Timestamp { .. } => RType::DateTime(0),
        Value::Time { .. } => RType::Time,
        Value::Year(_) => RType::Year,
    }
}

/// Column-definition type code and flags of an [`RType`] that is not a table column.
pub(crate) fn rtype_column(r: RType) -> (ColumnType, u16, u32, u8, u16) {
    // (type, flags, length, decimals, charset)
    const BIN: u16 = 128;
    const NUM: u16 = 32768;
    match r {
        RType::Int => (ColumnType::LongLong, BIN | NUM, 21, 0, 63),
        RType::UInt => (ColumnType::LongLong, BIN | NUM | 32, 21, 0, 63),
        RType::Decimal(p, s) => (
            ColumnType::NewDecimal,
            BIN | NUM,
            u32::from(p) + 1 + u32::from(s > 0),
            s,
            63,
        ),
        RType::Double => (ColumnType::Double, BIN | NUM, 22, 31, 63),
        RType::DoubleDec(d) => (ColumnType::Double, BIN | NUM, 22, d, 63),
        RType::Str(n) => (ColumnType::VarString, 0, n.max(1).saturating_mul(4), 39, 45),
        RType::Date => (ColumnType::Date, BIN, 10, 0, 63),
        RType::DateTime(f) => (
            ColumnType::DateTime,
            BIN,
            19 + if f > 0 { u32::from(f) + 1 } else { 0 },
            f,
            63,
        ),
        RType::Time => (ColumnType::Time, BIN, 10, 0, 63),
        RType::Year => (ColumnType::Year, BIN | NUM | 32, 4, 0, 63),
        RType::Null | RType::Column(_) => (ColumnType::Null, BIN, 0, 0, 63),
        RType::Dyn => (ColumnType::VarString, 0, 1024, 39, 45),
    }
}

/// Converts an evaluated value to the variant its declared [`RType`] calls for, so result
/// rows agree with their column metadata (binary protocol).
pub(crate) fn conform(v: Value, r: RType) -> Value {
    let was_null = v == Value::Null;
    let out = conform_value(v, r);
    debug_assert!(was_null || out != Value::Null, "conform made NULL");
    out
}

fn conform_value(v: Value, r: RType) -> Value {
    match (r, &v) {
        (_, Value::Null) => v,
        (RType::Int, Value::Int(_)) | (RType::UInt, Value::UInt(_)) => v,
        (RType::Int, _) => match num_of_quiet(&v).map(num_i128) {
            Some(i) => int_value(i).unwrap_or(v),
            None => v,
        },
        (RType::UInt, _) => match num_of_quiet(&v).map(num_i128) {
            Some(i) if (0..=i128::from(u64::MAX)).contains(&i) => Value::UInt(i as u64),
            Some(i) if i64::try_from(i).is_ok() => Value::Int(i as i64),
            _ => v,
        },
        (RType::Decimal(_, s), Value::Decimal(_))
        | (RType::Decimal(_, s), Value::Int(_) | Value::UInt(_)) => {
            match num_of_quiet(&v)
                .and_then(num_dec)
                .and_then(|d| d.rescale(u32::from(s)))
            {
                Some(d) => Value::Decimal(d.to_string()),
                None => v,
            }
        }
        (RType::Decimal(..), _) => match to_f64_quiet(&v) {
            Some(d) => Value::Double(d),
            None => v,
        },
        (RType::Double | RType::DoubleDec(_), Value::Double(_)) => v,
        (RType::Double | RType::DoubleDec(_), _) => match to_f64_quiet(&v) {
            Some(d) => Value::Double(d),
            None => v,
        },
        (RType::Str(_), Value::Bytes(_)) => v,
        (RType::Str(_), _) => Value::bytes(text_of(&v)),
        // A DATE among DATETIMEs (a set operation's column): midnight of that day.
        (RType::DateTime(_), &Value::Date { year, month, day }) => Value::DateTime {
            year,
            month,
            day,
            hour: 0,
            minute: 0,
            second: 0,
            micros: 0,
        },
        _ => v,
    }
}
