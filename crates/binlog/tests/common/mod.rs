//! Proptest strategies shared by the integration tests: random columns of every supported
//! type with matching random values, in the canonical forms the decoder returns.

#![allow(dead_code)]

use onelog_binlog::value::{ENUM_REAL_TYPE, SET_REAL_TYPE, STRING_REAL_TYPE};
use onelog_binlog::{ColumnMeta, ColumnType, Value};
use proptest::prelude::*;

fn normalise(mut c: ColumnMeta) -> ColumnMeta {
    if !c.is_numeric() {
        c.unsigned = false;
    }
    if !c.is_character() {
        c.binary = false;
    }
    if c.column_type == ColumnType::Null {
        c.nullable = true;
    }
    if c.column_type == ColumnType::Year {
        c.unsigned = true;
    }
    c
}

/// A random column of a type the row codec supports.
pub fn arb_column() -> impl Strategy<Value = ColumnMeta> {
    use ColumnType::*;
    let ty = prop_oneof![
        Just(Tiny),
        Just(Short),
        Just(Int24),
        Just(Long),
        Just(LongLong),
        Just(Float),
        Just(Double),
        Just(NewDecimal),
        Just(VarChar),
        Just(String),
        Just(Blob),
        Just(Geometry),
        Just(Date),
        Just(DateTime2),
        Just(Timestamp2),
        Just(Time2),
        Just(Year),
        Just(Null),
    ];
    (
        ty,
        any::<u32>(),
        any::<u32>(),
        any::<[bool; 3]>(),
        "[a-z_][a-z0-9_]{0,10}",
    )
        .prop_map(|(t, r1, r2, [unsigned, nullable, binary], name)| {
            let meta = match t {
                Float => 4,
                Double => 8,
                NewDecimal => {
                    let p = 1 + (r1 % 65) as u16;
                    let s = (r2 % (u32::from(p.min(38)) + 1)) as u16;
                    (p << 8) | s
                }
                VarChar => (r1 % 1000) as u16,
                String => match r2 % 4 {
                    0 => ColumnMeta::pack_string_meta(ENUM_REAL_TYPE, 1 + (r1 % 2) as u16),
                    1 => ColumnMeta::pack_string_meta(SET_REAL_TYPE, 1 + (r1 % 8) as u16),
                    _ => ColumnMeta::pack_string_meta(STRING_REAL_TYPE, (r1 % 1021) as u16),
                },
                Blob | Geometry => 1 + (r1 % 4) as u16,
                DateTime2 | Timestamp2 | Time2 => (r1 % 7) as u16,
                _ => 0,
            };
            normalise(ColumnMeta {
                column_type: t,
                meta,
                unsigned,
                nullable,
                binary,
                name,
            })
        })
}

fn micros_for(fsp: u16) -> impl Strategy<Value = u32> {
    (0u32..1_000_000).prop_map(move |m| m - m % 10u32.pow(6 - u32::from(fsp)))
}

fn bytes(max: usize) -> impl Strategy<Value = Value> {
    proptest::collection::vec(any::<u8>(), 0..=max).prop_map(Value::bytes)
}

/// A random non-NULL value that fits `c`.
pub fn arb_non_null(c: &ColumnMeta) -> BoxedStrategy<Value> {
    use ColumnType::*;
    let width = match c.column_type {
        Tiny => 8,
        Short => 16,
        Int24 => 24,
        Long => 32,
        _ => 64,
    };
    match c.column_type {
        Tiny | Short | Int24 | Long | LongLong if c.unsigned => {
            let max = if width == 64 {
                u64::MAX
            } else {
                (1u64 << width) - 1
            };
            (0..=max).prop_map(Value::UInt).boxed()
        }
        Tiny | Short | Int24 | Long | LongLong => {
            let (min, max) = if width == 64 {
                (i64::MIN, i64::MAX)
            } else {
                (-(1i64 << (width - 1)), (1i64 << (width - 1)) - 1)
            };
            (min..=max).prop_map(Value::Int).boxed()
        }
        Float => any::<f32>()
            .prop_filter("not NaN", |f| !f.is_nan())
            .prop_map(Value::Float)
            .boxed(),
        Double => any::<f64>()
            .prop_filter("not NaN", |f| !f.is_nan())
            .prop_map(Value::Double)
            .boxed(),
        NewDecimal => {
            let p = usize::from(c.meta >> 8);
            let s = usize::from(c.meta & 0xff);
            (
                any::<bool>(),
                proptest::collection::vec(0u8..10, p - s),
                proptest::collection::vec(0u8..10, s),
            )
                .prop_map(move |(neg, int, frac)| {
                    let int: std::string::String =
                        int.iter().map(|d| char::from(b'0' + d)).collect();
                    let int = int.trim_start_matches('0');
                    let frac: std::string::String =
                        frac.iter().map(|d| char::from(b'0' + d)).collect();
                    let zero = int.is_empty() && frac.bytes().all(|b| b == b'0');
                    let mut t = std::string::String::new();
                    if neg && !zero {
                        t.push('-');
                    }
                    t.push_str(if int.is_empty() { "0" } else { int });
                    if s > 0 {
                        t.push('.');
                        t.push_str(&frac);
                    }
                    Value::Decimal(t)
                })
                .boxed()
        }
        VarChar => bytes(usize::from(c.meta).min(300)).boxed(),
        String => {
            let (real, len) = ColumnMeta::unpack_string_meta(c.meta);
            if real == ENUM_REAL_TYPE || real == SET_REAL_TYPE {
                let max = if len >= 8 {
                    u64::MAX
                } else {
                    (1u64 << (8 * len)) - 1
                };
                (0..=max).prop_map(Value::UInt).boxed()
            } else if c.binary {
                // BINARY(len): always len bytes (a shorter value is stored zero-padded).
                let len = usize::from(len);
                bytes(len.min(300))
                    .prop_map(move |v| match v {
                        Value::Bytes(b) => {
                            let mut b = b.into_vec();
                            b.resize(len, 0);
                            Value::bytes(b)
                        }
                        other => other,
                    })
                    .boxed()
            } else {
                bytes(usize::from(len).min(300)).boxed()
            }
        }
        Blob | Geometry => bytes(if c.meta == 1 { 255 } else { 300 }).boxed(),
        Date => (0u16..=9999, 0u8..=12, 0u8..=31)
            .prop_map(|(year, month, day)| Value::Date { year, month, day })
            .boxed(),
        DateTime2 => (
            0u16..=9999,
            0u8..=12,
            0u8..=31,
            0u8..=23,
            0u8..=59,
            0u8..=59,
            micros_for(c.meta),
        )
            .prop_map(
                |(year, month, day, hour, minute, second, micros)| Value::DateTime {
                    year,
                    month,
                    day,
                    hour,
                    minute,
                    second,
                    micros,
                },
            )
            .boxed(),
        Timestamp2 => (any::<u32>(), micros_for(c.meta))
            .prop_map(|(secs, micros)| Value::Timestamp { secs, micros })
            .boxed(),
        Time2 => (
            any::<bool>(),
            0u16..=838,
            0u8..=59,
            0u8..=59,
            micros_for(c.meta),
        )
            .prop_map(|(negative, hours, minutes, seconds, micros)| {
                let zero = hours == 0 && minutes == 0 && seconds == 0 && micros == 0;
                Value::Time {
                    negative: negative && !zero,
                    hours,
                    minutes,
                    seconds,
                    micros,
                }
            })
            .boxed(),
        Year => prop_oneof![Just(0u16), 1901u16..=2155]
            .prop_map(Value::Year)
            .boxed(),
        _ => Just(Value::Null).boxed(),
    }
}

/// A random value for `c`, NULL now and then when the column is nullable.
pub fn arb_value(c: &ColumnMeta) -> BoxedStrategy<Value> {
    if c.column_type == ColumnType::Null {
        return Just(Value::Null).boxed();
    }
    if c.nullable {
        prop_oneof![1 => Just(Value::Null), 4 => arb_non_null(c)].boxed()
    } else {
        arb_non_null(c)
    }
}

/// A random row for `columns`.
pub fn arb_row(columns: &[ColumnMeta]) -> BoxedStrategy<Vec<Value>> {
    columns.iter().map(arb_value).collect::<Vec<_>>().boxed()
}

/// Random columns (1..=max) and `rows` random rows for them.
pub fn arb_table_rows(
    max_cols: usize,
    rows: std::ops::Range<usize>,
) -> impl Strategy<Value = (Vec<ColumnMeta>, Vec<Vec<Value>>)> {
    proptest::collection::vec(arb_column(), 1..=max_cols).prop_flat_map(move |cols| {
        let rows = proptest::collection::vec(arb_row(&cols), rows.clone());
        (Just(cols), rows)
    })
}
