//! The catalog: databases, tables, their columns, primary keys and secondary indexes.
//!
//! Owns:
//! - [`SqlType`] (the column types the engine stores), its mapping to the binlog's
//!   [`ColumnMeta`] (the table in `onelog_binlog::value`'s docs) and the coercion of a client
//!   [`Value`] to the canonical value of a column type ([`SqlType::coerce`]);
//! - the DDL input types [`TableSpec`], [`ColumnSpec`], [`IndexSpec`] and their validation into
//!   [`TableDef`] / [`IndexDef`];
//! - [`CatalogChange`], the unit of DDL: it is what a DDL log record carries in its `aux`
//!   bytes ([`CatalogChange::encode`]) and what recovery and replicas apply;
//! - the compact serialization of a whole [`Catalog`] (inside a checkpoint body).
//!
//! Invariants:
//! - a [`Catalog`] is immutable once published (`Arc<Catalog>`); a change builds a new one with
//!   [`Catalog::apply`], which validates it fully, so a catalog is always consistent: table
//!   names unique per database, every table's database exists, column and index names unique
//!   per table (ASCII case-insensitively, like MySQL), index column positions in range;
//! - primary key columns are NOT NULL; a table may have no primary key (InnoDB's hidden row
//!   id: `store.rs` keys its rows by a hidden key and finds them by full-row match, as
//!   MariaDB's row events do);
//! - table ids are assigned from `next_table_id`, stored in the catalog and never reused, so a
//!   `TableId` names one table for the whole life of a database; index ids likewise per table;
//! - database and table names compare exactly (like MySQL on Linux), column and index names
//!   ASCII case-insensitively;
//! - decoding never panics on bad bytes and never trusts a length.
//!
//! Simplifications (later steps): CHAR/BINARY values are stored as given (MySQL strips CHAR's
//! trailing spaces and pads BINARY with zero bytes); text columns are utf8mb4 with binary
//! comparison (`key.rs`); no GEOMETRY types (JSON is LONGTEXT, see [`SqlType::Json`]); DATETIME/TIME fractions beyond
//! the column's fsp are truncated, as MariaDB does by default.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use onelog_binlog::value::{ENUM_REAL_TYPE, SET_REAL_TYPE, STRING_REAL_TYPE};
use onelog_binlog::{ColumnMeta, ColumnType, Value};

use crate::collation::Collation;
use crate::encoding::{
    put_bytes, put_str, put_u32, put_u64, put_u8, put_value, put_var, FormatError, Reader,
};
use crate::error::EngineError;
use crate::view::ViewDef;

/// A table's id: assigned at CREATE TABLE, never reused. It is also the binlog table id.
pub type TableId = u64;

/// Column types the engine stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SqlType {
    TinyInt {
        unsigned: bool,
    },
    SmallInt {
        unsigned: bool,
    },
    MediumInt {
        unsigned: bool,
    },
    Int {
        unsigned: bool,
    },
    BigInt {
        unsigned: bool,
    },
    Float,
    Double,
    /// DECIMAL(precision 1..=65, scale 0..=30, scale <= precision).
    Decimal {
        precision: u8,
        scale: u8,
    },
    /// CHAR(n), n characters (utf8mb4), n <= 255.
    Char(u32),
    /// VARCHAR(n), n characters (utf8mb4), 4n <= 65535 bytes.
    VarChar(u32),
    /// BINARY(n), n bytes, n <= 255.
    Binary(u32),
    /// VARBINARY(n), n bytes <= 65535.
    VarBinary(u32),
    TinyText,
    Text,
    MediumText,
    LongText,
    TinyBlob,
    Blob,
    MediumBlob,
    LongBlob,
    Date,
    /// DATETIME(fsp), fsp 0..=6.
    DateTime(u8),
    /// TIMESTAMP(fsp), fsp 0..=6.
    Timestamp(u8),
    /// TIME(fsp), fsp 0..=6.
    Time(u8),
    Year,
    /// The NULL type (a column that is always NULL).
    Null,
    /// ENUM of this many members (1..=65535, the members in [`ColumnDef::members`]): stored
    /// as the 1-based index of the member (0: the error value `''`), as MariaDB stores it.
    Enum(u16),
    /// SET of this many members (1..=64, in [`ColumnDef::members`]): stored as the bit set
    /// of the members (bit 0: the first).
    Set(u8),
    /// BIT(M), M in 1..=64: stored as the unsigned number (below `2^M`), logged as MariaDB's
    /// BIT (big-endian in `(M + 7) / 8` bytes).
    Bit(u8),
    /// JSON: MariaDB's alias of LONGTEXT with collation `utf8mb4_bin` and an automatic
    /// `CHECK (json_valid(col))`. Stored, compared and logged exactly as LONGTEXT (MariaDB's
    /// Table_map has no JSON type); the SQL layer refuses a value that is not JSON (4025).
    Json,
}

/// Longest utf8mb4 character.
const MAX_CHAR_BYTES: u32 = 4;

impl SqlType {
    /// The SQL name, as `SHOW CREATE TABLE` would print it (lower case).
    pub fn sql_name(&self) -> String {
        use SqlType::*;
        let u = |unsigned: &bool| if *unsigned { " unsigned" } else { "" };
        match self {
            TinyInt { unsigned } => format!("tinyint{}", u(unsigned)),
            SmallInt { unsigned } => format!("smallint{}", u(unsigned)),
            MediumInt { unsigned } => format!("mediumint{}", u(unsigned)),
            Int { unsigned } => format!("int{}", u(unsigned)),
            BigInt { unsigned } => format!("bigint{}", u(unsigned)),
            Float => "float".into(),
            Double => "double".into(),
            Decimal { precision, scale } => format!("decimal({precision},{scale})"),
            Char(n) => format!("char({n})"),
            VarChar(n) => format!("varchar({n})"),
            Binary(n) => format!("binary({n})"),
            VarBinary(n) => format!("varbinary({n})"),
            TinyText => "tinytext".into(),
            Text => "text".into(),
            MediumText => "mediumtext".into(),
            LongText => "longtext".into(),
            TinyBlob => "tinyblob".into(),
            Blob => "blob".into(),
            MediumBlob => "mediumblob".into(),
            LongBlob => "longblob".into(),
            Date => "date".into(),
            DateTime(0) => "datetime".into(),
            DateTime(f) => format!("datetime({f})"),
            Timestamp(0) => "timestamp".into(),
            Timestamp(f) => format!("timestamp({f})"),
            Time(0) => "time".into(),
            Time(f) => format!("time({f})"),
            Year => "year".into(),
            Null => "null".into(),
            Json => "longtext".into(),
            Enum(_) => "enum".into(),
            Bit(m) => format!("bit({m})"),
            Set(_) => "set".into(),
        }
    }

    /// The members an ENUM or SET column must list (0 for other types).
    pub fn member_count(&self) -> usize {
        match *self {
            SqlType::Enum(n) => usize::from(n),
            SqlType::Set(n) => usize::from(n),
            _ => 0,
        }
    }

    /// True for the integer types.
    pub fn is_integer(&self) -> bool {
        use SqlType::*;
        matches!(
            self,
            TinyInt { .. } | SmallInt { .. } | MediumInt { .. } | Int { .. } | BigInt { .. }
        )
    }

    /// `(min, max)` of a signed integer type, `None` for unsigned or non-integers.
    pub fn signed_range(&self) -> Option<(i64, i64)> {
        use SqlType::*;
        Some(match self {
            TinyInt { unsigned: false } => (i8::MIN as i64, i8::MAX as i64),
            SmallInt { unsigned: false } => (i16::MIN as i64, i16::MAX as i64),
            MediumInt { unsigned: false } => (-(1 << 23), (1 << 23) - 1),
            Int { unsigned: false } => (i32::MIN as i64, i32::MAX as i64),
            BigInt { unsigned: false } => (i64::MIN, i64::MAX),
            _ => return None,
        })
    }

    /// Max of an unsigned integer type.
    pub fn unsigned_max(&self) -> Option<u64> {
        use SqlType::*;
        Some(match self {
            TinyInt { unsigned: true } => u8::MAX as u64,
            SmallInt { unsigned: true } => u16::MAX as u64,
            MediumInt { unsigned: true } => (1 << 24) - 1,
            Int { unsigned: true } => u32::MAX as u64,
            BigInt { unsigned: true } => u64::MAX,
            _ => return None,
        })
    }

    /// Text (utf8mb4) rather than binary string types.
    pub fn is_text(&self) -> bool {
        use SqlType::*;
        matches!(
            self,
            Char(_) | VarChar(_) | TinyText | Text | MediumText | LongText | Json
        )
    }

    pub fn is_string(&self) -> bool {
        use SqlType::*;
        self.is_text()
            || matches!(
                self,
                Binary(_) | VarBinary(_) | TinyBlob | Blob | MediumBlob | LongBlob
            )
    }

    /// Checks the type's parameters (lengths, precision, fsp).
    pub fn validate(&self) -> Result<(), String> {
        use SqlType::*;
        match *self {
            Decimal { precision, scale }
                if precision == 0 || precision > 65 || scale > 30 || scale > precision =>
            {
                return Err(format!("bad DECIMAL({precision},{scale})"));
            }
            Char(n) | Binary(n) if n > 255 => return Err(format!("length {n} > 255")),
            VarChar(n) if n.saturating_mul(MAX_CHAR_BYTES) > 65535 => {
                return Err(format!(
                    "VARCHAR({n}) is longer than 65535 bytes in utf8mb4"
                ))
            }
            VarBinary(n) if n > 65535 => return Err(format!("VARBINARY({n}) > 65535 bytes")),
            DateTime(f) | Timestamp(f) | Time(f) if f > 6 => {
                return Err(format!("fractional seconds precision {f} > 6"))
            }
            Enum(0) | Set(0) => return Err("ENUM or SET without members".into()),
            Set(n) if n > 64 => return Err(format!("SET of {n} members > 64")),
            Bit(m) if m == 0 || m > 64 => return Err(format!("BIT({m})")),
            _ => {}
        }
        Ok(())
    }

    /// The column as a Table_map event describes it.
    pub fn column_meta(&self, name: &str, nullable: bool) -> ColumnMeta {
        use SqlType::*;
        let (column_type, meta, unsigned, binary) = match *self {
            TinyInt { unsigned } => (ColumnType::Tiny, 0, unsigned, false),
            SmallInt { unsigned } => (ColumnType::Short, 0, unsigned, false),
            MediumInt { unsigned } => (ColumnType::Int24, 0, unsigned, false),
            Int { unsigned } => (ColumnType::Long, 0, unsigned, false),
            BigInt { unsigned } => (ColumnType::LongLong, 0, unsigned, false),
            Float => (ColumnType::Float, 4, false, false),
            Double => (ColumnType::Double, 8, false, false),
            Decimal { precision, scale } => (
                ColumnType::NewDecimal,
                (u16::from(precision) << 8) | u16::from(scale),
                false,
                false,
            ),
            Char(n) => (
                ColumnType::String,
                ColumnMeta::pack_string_meta(STRING_REAL_TYPE, (n * MAX_CHAR_BYTES) as u16),
                false,
                false,
            ),
            Binary(n) => (
                ColumnType::String,
                ColumnMeta::pack_string_meta(STRING_REAL_TYPE, n as u16),
                false,
                true,
            ),
            VarChar(n) => (
                ColumnType::VarChar,
                (n * MAX_CHAR_BYTES) as u16,
                false,
                false,
            ),
            VarBinary(n) => (ColumnType::VarChar, n as u16, false, true),
            TinyText => (ColumnType::Blob, 1, false, false),
            Text => (ColumnType::Blob, 2, false, false),
            MediumText => (ColumnType::Blob, 3, false, false),
            LongText | Json => (ColumnType::Blob, 4, false, false),
            Bit(m) => (
                ColumnType::Bit,
                u16::from(m % 8) | u16::from(m / 8) << 8,
                false,
                false,
            ),
            Enum(n) => (
                ColumnType::String,
                ColumnMeta::pack_string_meta(ENUM_REAL_TYPE, if n < 256 { 1 } else { 2 }),
                false,
                false,
            ),
            Set(n) => (
                ColumnType::String,
                ColumnMeta::pack_string_meta(SET_REAL_TYPE, set_pack_length(n)),
                false,
                false,
            ),
            TinyBlob => (ColumnType::Blob, 1, false, true),
            Blob => (ColumnType::Blob, 2, false, true),
            MediumBlob => (ColumnType::Blob, 3, false, true),
            LongBlob => (ColumnType::Blob, 4, false, true),
            Date => (ColumnType::Date, 0, false, false),
            DateTime(f) => (ColumnType::DateTime2, u16::from(f), false, false),
            Timestamp(f) => (ColumnType::Timestamp2, u16::from(f), false, false),
            Time(f) => (ColumnType::Time2, u16::from(f), false, false),
            Year => (ColumnType::Year, 0, false, false),
            Null => (ColumnType::Null, 0, false, false),
        };
        ColumnMeta {
            column_type,
            meta,
            unsigned,
            nullable,
            binary,
            name: name.to_string(),
        }
    }

    /// Converts `v` to this type's canonical value (`Int` for signed integers, `UInt` for
    /// unsigned, canonical DECIMAL text, microseconds cut to the fsp like MariaDB, ...), or
    /// the MySQL error a strict-mode INSERT gives. NULL stays NULL (nullability is the
    /// caller's check).
    pub fn coerce(&self, column: &str, v: Value) -> Result<Value, EngineError> {
        use SqlType::*;
        if v == Value::Null {
            return Ok(v);
        }
        let err = CoerceErrors { column };
        match *self {
            TinyInt { .. } | SmallInt { .. } | MediumInt { .. } | Int { .. } | BigInt { .. } => {
                self.coerce_integer(err, v)
            }
            Float | Double => self.coerce_float(err, v),
            Decimal { precision, scale } => coerce_decimal(err, v, precision, scale),
            Char(_) | VarChar(_) | Binary(_) | VarBinary(_) | TinyText | Text | MediumText
            | LongText | TinyBlob | Blob | MediumBlob | LongBlob | Json => {
                self.coerce_bytes(err, v)
            }
            Date | DateTime(_) | Timestamp(_) => self.coerce_date_time(err, v),
            Time(fsp) => coerce_time(err, v, fsp),
            Year => coerce_year(err, v),
            Enum(n) => match v {
                Value::UInt(i) if i <= u64::from(n) => Ok(Value::UInt(i)),
                Value::Int(i) if (0..=i64::from(n)).contains(&i) => Ok(Value::UInt(i as u64)),
                ref other => Err(err.wrong(other)),
            },
            Bit(m) => {
                let fits = |u: u64| m >= 64 || u >> m == 0;
                match v {
                    Value::UInt(u) if fits(u) => Ok(Value::UInt(u)),
                    Value::Int(i) if i >= 0 && fits(i as u64) => Ok(Value::UInt(i as u64)),
                    Value::UInt(_) | Value::Int(_) => Err(err.too_long()),
                    ref other => Err(err.wrong(other)),
                }
            }
            Set(n) => {
                let fits = |m: u64| n >= 64 || m >> n == 0;
                match v {
                    Value::UInt(m) if fits(m) => Ok(Value::UInt(m)),
                    Value::Int(i) if i >= 0 && fits(i as u64) => Ok(Value::UInt(i as u64)),
                    ref other => Err(err.wrong(other)),
                }
            }
            Null => Err(err.wrong(&v)),
        }
    }

    /// [`coerce`](Self::coerce) for the integer types (`Int` signed, `UInt` unsigned).
    fn coerce_integer(&self, err: CoerceErrors<'_>, v: Value) -> Result<Value, EngineError> {
        if let Some((lo, hi)) = self.signed_range() {
            let i = match v {
                Value::Int(i) => i,
                Value::UInt(u) => i64::try_from(u).map_err(|_| err.out_of_range())?,
                ref other => return Err(err.wrong(other)),
            };
            if i < lo || i > hi {
                return Err(err.out_of_range());
            }
            Ok(Value::Int(i))
        } else {
            let max = self.unsigned_max().unwrap_or(u64::MAX);
            let u = match v {
                Value::UInt(u) => u,
                Value::Int(i) => u64::try_from(i).map_err(|_| err.out_of_range())?,
                ref other => return Err(err.wrong(other)),
            };
            if u > max {
                return Err(err.out_of_range());
            }
            Ok(Value::UInt(u))
        }
    }

    /// [`coerce`](Self::coerce) for FLOAT and DOUBLE (finite values only).
    fn coerce_float(&self, err: CoerceErrors<'_>, v: Value) -> Result<Value, EngineError> {
        if *self == SqlType::Float {
            match v {
                Value::Float(f) if f.is_finite() => Ok(Value::Float(f)),
                Value::Double(d) if d.is_finite() && (d as f32).is_finite() => {
                    Ok(Value::Float(d as f32))
                }
                Value::Int(i) => Ok(Value::Float(i as f32)),
                Value::UInt(u) => Ok(Value::Float(u as f32)),
                Value::Double(_) | Value::Float(_) => Err(err.out_of_range()),
                ref other => Err(err.wrong(other)),
            }
        } else {
            match v {
                Value::Double(d) if d.is_finite() => Ok(Value::Double(d)),
                Value::Float(f) if f.is_finite() => Ok(Value::Double(f64::from(f))),
                Value::Int(i) => Ok(Value::Double(i as f64)),
                Value::UInt(u) => Ok(Value::Double(u as f64)),
                Value::Double(_) | Value::Float(_) => Err(err.out_of_range()),
                ref other => Err(err.wrong(other)),
            }
        }
    }

    /// [`coerce`](Self::coerce) for the string types: a length limit (characters for CHAR and
    /// VARCHAR, bytes otherwise), valid UTF-8 for the text types, BINARY(n) zero-padded to n.
    fn coerce_bytes(&self, err: CoerceErrors<'_>, v: Value) -> Result<Value, EngineError> {
        use SqlType::*;
        match *self {
            Char(n) | VarChar(n) => match v {
                Value::Bytes(b) => {
                    let s =
                        std::str::from_utf8(&b).map_err(|_| err.wrong(&Value::Bytes(b.clone())))?;
                    if s.chars().count() > n as usize {
                        return Err(err.too_long());
                    }
                    Ok(Value::Bytes(b))
                }
                ref other => Err(err.wrong(other)),
            },
            Binary(n) | VarBinary(n) => match v {
                Value::Bytes(b) if b.len() > n as usize => Err(err.too_long()),
                // BINARY(n) keeps n bytes, a shorter value padded with zero bytes, as MariaDB
                // stores it (and returns, compares, dumps and checksums it).
                Value::Bytes(b) if matches!(self, Binary(_)) && b.len() < n as usize => {
                    Ok(Value::zero_padded(&b, n as usize))
                }
                Value::Bytes(b) => Ok(Value::Bytes(b)),
                ref other => Err(err.wrong(other)),
            },
            _ => {
                let max: u64 = match self {
                    TinyText | TinyBlob => 255,
                    Text | Blob => 65_535,
                    MediumText | MediumBlob => 16_777_215,
                    _ => u32::MAX as u64,
                };
                match v {
                    Value::Bytes(b) if b.len() as u64 > max => Err(err.too_long()),
                    Value::Bytes(b) if self.is_text() && std::str::from_utf8(&b).is_err() => {
                        Err(err.wrong(&Value::Bytes(b)))
                    }
                    Value::Bytes(b) => Ok(Value::Bytes(b)),
                    ref other => Err(err.wrong(other)),
                }
            }
        }
    }

    /// [`coerce`](Self::coerce) for DATE, DATETIME and TIMESTAMP.
    fn coerce_date_time(&self, err: CoerceErrors<'_>, v: Value) -> Result<Value, EngineError> {
        match (*self, v) {
            (SqlType::Date, Value::Date { year, month, day }) if valid_date(year, month, day) => {
                Ok(Value::Date { year, month, day })
            }
            (
                SqlType::DateTime(fsp),
                Value::DateTime {
                    year,
                    month,
                    day,
                    hour,
                    minute,
                    second,
                    micros,
                },
            ) if valid_date(year, month, day)
                && hour < 24
                && minute < 60
                && second < 60
                && micros < 1_000_000 =>
            {
                Ok(Value::DateTime {
                    year,
                    month,
                    day,
                    hour,
                    minute,
                    second,
                    micros: cut_micros(micros, fsp),
                })
            }
            (SqlType::DateTime(_), Value::Date { year, month, day })
                if valid_date(year, month, day) =>
            {
                Ok(Value::DateTime {
                    year,
                    month,
                    day,
                    hour: 0,
                    minute: 0,
                    second: 0,
                    micros: 0,
                })
            }
            (SqlType::Timestamp(fsp), Value::Timestamp { secs, micros }) if micros < 1_000_000 => {
                Ok(Value::Timestamp {
                    secs,
                    micros: cut_micros(micros, fsp),
                })
            }
            (_, ref other) => Err(err.wrong(other)),
        }
    }

    fn encode(&self, out: &mut Vec<u8>) {
        use SqlType::*;
        let (tag, a, b): (u8, u32, u32) = match *self {
            TinyInt { unsigned } => (1, unsigned as u32, 0),
            SmallInt { unsigned } => (2, unsigned as u32, 0),
            MediumInt { unsigned } => (3, unsigned as u32, 0),
            Int { unsigned } => (4, unsigned as u32, 0),
            BigInt { unsigned } => (5, unsigned as u32, 0),
            Float => (6, 0, 0),
            Double => (7, 0, 0),
            Decimal { precision, scale } => (8, u32::from(precision), u32::from(scale)),
            Char(n) => (9, n, 0),
            VarChar(n) => (10, n, 0),
            Binary(n) => (11, n, 0),
            VarBinary(n) => (12, n, 0),
            TinyText => (13, 0, 0),
            Text => (14, 0, 0),
            MediumText => (15, 0, 0),
            LongText => (16, 0, 0),
            TinyBlob => (17, 0, 0),
            Blob => (18, 0, 0),
            MediumBlob => (19, 0, 0),
            LongBlob => (20, 0, 0),
            Date => (21, 0, 0),
            DateTime(f) => (22, u32::from(f), 0),
            Timestamp(f) => (23, u32::from(f), 0),
            Time(f) => (24, u32::from(f), 0),
            Year => (25, 0, 0),
            Null => (26, 0, 0),
            Json => (27, 0, 0),
            Enum(n) => (28, u32::from(n), 0),
            Set(n) => (29, u32::from(n), 0),
            Bit(m) => (30, u32::from(m), 0),
        };
        put_u8(out, tag);
        put_var(out, u64::from(a));
        put_var(out, u64::from(b));
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, FormatError> {
        use SqlType::*;
        let tag = r.u8()?;
        let a = r.var()?;
        let b = r.var()?;
        let small =
            |x: u64| u8::try_from(x).map_err(|_| r.err(format!("type parameter {x} too large")));
        let n = u32::try_from(a).map_err(|_| r.err(format!("type length {a} too large")))?;
        let t = match tag {
            1..=5 => {
                let unsigned = a != 0;
                match tag {
                    1 => TinyInt { unsigned },
                    2 => SmallInt { unsigned },
                    3 => MediumInt { unsigned },
                    4 => Int { unsigned },
                    _ => BigInt { unsigned },
                }
            }
            6 => Float,
            7 => Double,
            8 => Decimal {
                precision: small(a)?,
                scale: small(b)?,
            },
            9 => Char(n),
            10 => VarChar(n),
            11 => Binary(n),
            12 => VarBinary(n),
            13 => TinyText,
            14 => Text,
            15 => MediumText,
            16 => LongText,
            17 => TinyBlob,
            18 => Blob,
            19 => MediumBlob,
            20 => LongBlob,
            21 => Date,
            22 => DateTime(small(a)?),
            23 => Timestamp(small(a)?),
            24 => Time(small(a)?),
            25 => Year,
            26 => Null,
            27 => Json,
            28 => Enum(u16::try_from(a).map_err(|_| r.err(format!("ENUM of {a} members")))?),
            29 => Set(small(a)?),
            30 => Bit(small(a)?),
            t => return Err(r.err(format!("unknown column type tag {t}"))),
        };
        t.validate().map_err(|e| r.err(e))?;
        Ok(t)
    }
}

/// Bytes of a SET's bit set in a row image (MariaDB's `get_set_pack_length`).
fn set_pack_length(members: u8) -> u16 {
    match u16::from(members).div_ceil(8) {
        n if n > 4 => 8,
        n => n,
    }
}

fn cut_micros(micros: u32, fsp: u8) -> u32 {
    let unit = 10u32.pow(6 - u32::from(fsp.min(6)));
    micros - micros % unit
}

fn valid_date(year: u16, month: u8, day: u8) -> bool {
    // MariaDB accepts the zero date and dates with zero parts outside NO_ZERO_DATE modes; the
    // engine accepts those too and otherwise checks the calendar.
    if year > 9999 || month > 12 {
        return false;
    }
    if month == 0 || day == 0 {
        return true;
    }
    let divides = |n: u16| (year / n) * n == year;
    let leap = divides(4) && (!divides(100) || divides(400));
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if leap => 29,
        _ => 28,
    };
    day <= days
}

enum DecimalError {
    Syntax,
    Range,
}

/// Canonical DECIMAL(p, s) text of `text` (`[+-]digits[.digits]`): integer part without
/// leading zeros (`0` when none), exactly `s` fraction digits (extra digits rounded half away
/// from zero, like MySQL), no `-` on zero.
fn canonical_decimal(text: &str, precision: u8, scale: u8) -> Result<String, DecimalError> {
    let (neg, int_part, frac_part) =
        onelog_binlog::decimal::split_text(text.trim()).ok_or(DecimalError::Syntax)?;
    let scale = scale as usize;
    // Digits of integer ++ fraction (exactly `scale` fraction digits), then round.
    let mut digits: Vec<u8> = int_part.bytes().map(|b| b - b'0').collect();
    let mut frac: Vec<u8> = frac_part.bytes().map(|b| b - b'0').collect();
    let round_up = frac.len() > scale && frac[scale] >= 5;
    frac.resize(scale, 0);
    digits.extend_from_slice(&frac);
    if round_up {
        let mut i = digits.len();
        loop {
            if i == 0 {
                digits.insert(0, 1);
                break;
            }
            i -= 1;
            if digits[i] == 9 {
                digits[i] = 0;
            } else {
                digits[i] += 1;
                break;
            }
        }
    }
    let int_len = digits.len() - scale;
    let first_nonzero = digits[..int_len]
        .iter()
        .position(|&d| d != 0)
        .unwrap_or(int_len);
    let int_digits = &digits[first_nonzero..int_len];
    if int_digits.len() > precision as usize - scale {
        return Err(DecimalError::Range);
    }
    let zero = digits.iter().all(|&d| d == 0);
    let mut out = String::with_capacity(digits.len() + 3);
    if neg && !zero {
        out.push('-');
    }
    if int_digits.is_empty() {
        out.push('0');
    } else {
        out.extend(int_digits.iter().map(|&d| (b'0' + d) as char));
    }
    if scale > 0 {
        out.push('.');
        out.extend(digits[int_len..].iter().map(|&d| (b'0' + d) as char));
    }
    Ok(out)
}

/// One column of a CREATE TABLE.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnSpec {
    pub name: String,
    pub ty: SqlType,
    /// False for NOT NULL (primary key columns are NOT NULL whatever this says).
    pub nullable: bool,
    /// DEFAULT value (the SQL layer fills it into rows; the engine stores it canonically).
    pub default: Option<Value>,
    pub auto_increment: bool,
    /// Attributes MariaDB keeps and shows that change no stored value by themselves.
    pub extras: ColumnExtras,
    /// COLLATE of a text column (None: the default, `utf8mb4_general_ci`); ignored for other
    /// types.
    pub collation: Option<Collation>,
    /// The members of an ENUM or SET, in order (empty for other types).
    pub members: Vec<String>,
}

/// Column attributes beyond type, nullability and default value (persisted as the optional
/// trailing extension of a table definition, see [`TableDef`]'s encoding).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ColumnExtras {
    /// `DEFAULT CURRENT_TIMESTAMP(fsp)`: the fsp written (0 for none). DATETIME/TIMESTAMP only.
    pub default_now: Option<u8>,
    /// `ON UPDATE CURRENT_TIMESTAMP(fsp)`: the fsp written. DATETIME/TIMESTAMP only.
    pub on_update_now: Option<u8>,
    /// `COMMENT '...'` (empty: none).
    pub comment: String,
    /// Declared display width of an integer type (`tinyint(1)`); None: the type's default.
    pub display_width: Option<u16>,
    /// `FLOAT(M,D)` / `DOUBLE(M,D)`: M digits in all (1..=255), D of them after the point
    /// (0..=30, D <= M). The SQL layer rounds stored values to D decimals and keeps them
    /// within M digits; None: a plain FLOAT / DOUBLE.
    pub float_digits: Option<(u8, u8)>,
}

impl ColumnExtras {
    fn is_plain(&self) -> bool {
        *self == ColumnExtras::default()
    }
}

/// Table options kept with a table definition (the optional trailing extension).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TableOptions {
    /// `COMMENT='...'` (empty: none).
    pub comment: String,
    /// `AUTO_INCREMENT=N` of CREATE TABLE: the first generated value (0 or 1: none given).
    pub auto_increment: u64,
    /// The table's FOREIGN KEY constraints (it is their child), in the order SHOW CREATE
    /// TABLE prints them (by name, as InnoDB keeps them).
    pub foreign_keys: Vec<ForeignKeyDef>,
    /// The table's CHECK constraints, in declaration order.
    pub checks: Vec<CheckDef>,
    /// The names of the indexes made for a foreign key that no declared key served (InnoDB's
    /// generated keys, `HA_GENERATED_KEY`): such an index is dropped when another key comes to
    /// start with its columns ([`TableDef::drop_covered_generated_keys`]). Only names of
    /// existing indexes.
    pub generated_keys: Vec<String>,
    /// The primary key's [`IndexOptions`] (default when there is no primary key).
    pub primary: IndexOptions,
}

/// What a foreign key does to the child rows when their parent row is deleted or its key
/// updated. `Restrict` is also what InnoDB makes of an absent clause and of `SET DEFAULT`
/// (MariaDB accepts `SET DEFAULT`, shows no clause for it and refuses the parent change).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FkAction {
    Restrict,
    NoAction,
    Cascade,
    SetNull,
}

impl FkAction {
    /// The clause's words as SHOW CREATE TABLE prints them (None: not printed).
    pub fn sql(self) -> Option<&'static str> {
        match self {
            FkAction::Restrict => None,
            FkAction::NoAction => Some("NO ACTION"),
            FkAction::Cascade => Some("CASCADE"),
            FkAction::SetNull => Some("SET NULL"),
        }
    }

    fn code(self) -> u8 {
        match self {
            FkAction::Restrict => 0,
            FkAction::NoAction => 1,
            FkAction::Cascade => 2,
            FkAction::SetNull => 3,
        }
    }

    fn from_code(c: u8) -> Option<FkAction> {
        Some(match c {
            0 => FkAction::Restrict,
            1 => FkAction::NoAction,
            2 => FkAction::Cascade,
            3 => FkAction::SetNull,
            _ => return None,
        })
    }
}

/// RENAME TABLE of a child from `old_name`: InnoDB renames its constraints named
/// `<old_name>_ibfk_<n>` (generated, or so named) to `<new name>_ibfk_<n>`, keeping their order
/// by name.
fn rename_generated_fks(t: &mut TableDef, old_name: &str) {
    let prefix = format!("{old_name}_ibfk_");
    let mut renamed = false;
    for fk in &mut t.options.foreign_keys {
        let n = fk.name.strip_prefix(&prefix);
        if let Some(n) = n.filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())) {
            fk.name = format!("{}_ibfk_{n}", t.name);
            renamed = true;
        }
    }
    if renamed {
        t.options
            .foreign_keys
            .sort_by_key(|f| f.name.to_ascii_lowercase());
    }
}

/// A FOREIGN KEY constraint of a child table. Columns are kept by name: the parent may not
/// exist (created with `foreign_key_checks=0`), and names survive column moves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForeignKeyDef {
    /// The constraint's name (given, or InnoDB's generated `<table>_ibfk_<n>`).
    pub name: String,
    /// The child's columns (non-empty, as many as `parent_columns`).
    pub columns: Vec<String>,
    pub parent_db: String,
    pub parent_table: String,
    pub parent_columns: Vec<String>,
    pub on_delete: FkAction,
    pub on_update: FkAction,
}

/// A CHECK constraint: its name (given, `CONSTRAINT_<n>` for an unnamed table constraint,
/// the column's name for a column constraint) and its expression's SQL text as SHOW CREATE
/// TABLE prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckDef {
    pub name: String,
    /// Set for a column-level constraint (printed after the column's definition).
    pub column: Option<String>,
    pub expr: String,
}

impl ColumnSpec {
    /// A nullable column without default.
    pub fn new(name: &str, ty: SqlType) -> Self {
        ColumnSpec {
            name: name.to_string(),
            ty,
            nullable: true,
            default: None,
            auto_increment: false,
            extras: ColumnExtras::default(),
            collation: None,
            members: Vec::new(),
        }
    }
    /// Sets the members of an ENUM or SET column.
    pub fn members(mut self, members: Vec<String>) -> Self {
        self.members = members;
        self
    }
    /// Sets the column's collation.
    pub fn collation(mut self, c: Collation) -> Self {
        self.collation = Some(c);
        self
    }
    pub fn not_null(mut self) -> Self {
        self.nullable = false;
        self
    }
    pub fn default(mut self, v: Value) -> Self {
        self.default = Some(v);
        self
    }
    pub fn auto_increment(mut self) -> Self {
        self.auto_increment = true;
        self
    }
}

/// A secondary index of a CREATE TABLE / CREATE INDEX.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexSpec {
    pub name: String,
    pub columns: Vec<String>,
    pub unique: bool,
    pub options: IndexOptions,
}

impl IndexSpec {
    pub fn new(name: &str, columns: &[&str], unique: bool) -> Self {
        IndexSpec {
            name: name.into(),
            columns: columns.iter().map(|c| c.to_string()).collect(),
            unique,
            options: IndexOptions::default(),
        }
    }
}

/// The options of a key definition that MariaDB keeps and shows back (SHOW CREATE TABLE,
/// SHOW INDEX, information_schema): its `USING` clause and its `COMMENT`. They change nothing
/// in how the key is stored or used: every key is a B-tree, as InnoDB's (whose SHOW INDEX says
/// BTREE for a `USING HASH` key too).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IndexOptions {
    /// The algorithm the definition named (the last `USING` written); None: none named.
    pub using: Option<IndexUsing>,
    /// `COMMENT '...'` (the last one written; empty: none).
    pub comment: String,
}

/// The key algorithms MariaDB's syntax takes for an InnoDB key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexUsing {
    BTree,
    Hash,
}

impl IndexUsing {
    /// The word SHOW CREATE TABLE prints after `USING`.
    pub fn sql(self) -> &'static str {
        match self {
            IndexUsing::BTree => "BTREE",
            IndexUsing::Hash => "HASH",
        }
    }
}

impl IndexOptions {
    pub fn is_default(&self) -> bool {
        *self == IndexOptions::default()
    }

    /// One byte (0: no USING, 1: BTREE, 2: HASH), then the comment.
    fn encode(&self, out: &mut Vec<u8>) {
        put_u8(
            out,
            match self.using {
                None => 0,
                Some(IndexUsing::BTree) => 1,
                Some(IndexUsing::Hash) => 2,
            },
        );
        put_str(out, &self.comment);
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, FormatError> {
        let using = match r.u8()? {
            0 => None,
            1 => Some(IndexUsing::BTree),
            2 => Some(IndexUsing::Hash),
            b => return Err(r.err(format!("unknown index algorithm {b}"))),
        };
        Ok(IndexOptions {
            using,
            comment: r.string()?,
        })
    }
}

/// Input of CREATE TABLE.
#[derive(Debug, Clone, PartialEq)]
pub struct TableSpec {
    pub db: String,
    pub name: String,
    pub columns: Vec<ColumnSpec>,
    /// Primary key column names (required, non-empty).
    pub primary_key: Vec<String>,
    pub indexes: Vec<IndexSpec>,
}

/// A stored column.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnDef {
    pub name: String,
    pub ty: SqlType,
    pub nullable: bool,
    pub default: Option<Value>,
    pub auto_increment: bool,
    pub extras: ColumnExtras,
    /// The collation of a text column (always `Some` for one, `None` for other types).
    pub collation: Option<Collation>,
    /// The members of an ENUM or SET, as many as its type says (empty for other types).
    pub members: Vec<String>,
}

impl ColumnDef {
    /// How values of this column compare: its collation for a text column, `binary` for a
    /// binary string, None for other types.
    pub fn string_collation(&self) -> Option<Collation> {
        if self.ty.is_text() {
            self.collation
        } else if self.ty.is_string() {
            Some(Collation::Binary)
        } else {
            None
        }
    }

    /// The definition of one column of a CREATE TABLE or an ADD COLUMN (its name, type,
    /// default and collation checked; no duplicate check, which needs the table).
    pub fn from_spec(c: &ColumnSpec) -> Result<ColumnDef, EngineError> {
        check_identifier(&c.name)?;
        c.ty.validate()
            .map_err(|reason| EngineError::WrongColumnSpec {
                column: c.name.clone(),
                reason,
            })?;
        if c.members.len() != c.ty.member_count() {
            return Err(EngineError::WrongColumnSpec {
                column: c.name.clone(),
                reason: format!("{} members for {}", c.members.len(), c.ty.sql_name()),
            });
        }
        if c.auto_increment && !c.ty.is_integer() {
            return Err(EngineError::WrongColumnSpec {
                column: c.name.clone(),
                reason: "AUTO_INCREMENT needs an integer column".into(),
            });
        }
        let default = match &c.default {
            None | Some(Value::Null) => None,
            Some(v) => Some(c.ty.coerce(&c.name, v.clone())?),
        };
        let collation = if c.ty == SqlType::Json {
            // MariaDB's JSON is utf8mb4_bin whatever the table's or a COLLATE says.
            Some(Collation::Utf8mb4Bin)
        } else if c.ty.is_text() || c.ty.member_count() > 0 {
            // ENUM and SET members compare as text, under the column's collation.
            let coll = c.collation.unwrap_or(Collation::DEFAULT);
            if coll.charset() != "utf8mb4" {
                return Err(EngineError::WrongColumnSpec {
                    column: c.name.clone(),
                    reason: format!("collation {} on a text column", coll.name()),
                });
            }
            Some(coll)
        } else {
            None
        };
        Ok(ColumnDef {
            name: c.name.clone(),
            ty: c.ty,
            nullable: c.nullable,
            default,
            auto_increment: c.auto_increment,
            extras: c.extras.clone(),
            collation,
            members: c.members.clone(),
        })
    }
}

/// A stored secondary index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexDef {
    /// Unique within its table, never reused (store key of the index).
    pub id: u32,
    pub name: String,
    /// Column positions.
    pub columns: Vec<usize>,
    pub unique: bool,
    pub options: IndexOptions,
}

impl IndexDef {
    /// The index of a [`CatalogChange::CreateIndex`]: id, name, columns, unique, then its
    /// options only when there are any (changes written before index options end there).
    fn encode_created(&self, out: &mut Vec<u8>) {
        put_u32(out, self.id);
        put_str(out, &self.name);
        put_positions(out, &self.columns);
        put_u8(out, self.unique as u8);
        if !self.options.is_default() {
            self.options.encode(out);
        }
    }

    /// Reads [`encode_created`](Self::encode_created)'s bytes, the last of the change.
    fn decode_created(r: &mut Reader<'_>) -> Result<Self, FormatError> {
        Ok(IndexDef {
            id: r.u32()?,
            name: r.string()?,
            columns: get_positions(r, usize::MAX)?,
            unique: r.u8()? != 0,
            options: match r.is_empty() {
                true => IndexOptions::default(),
                false => IndexOptions::decode(r)?,
            },
        })
    }
}

/// A stored table definition.
#[derive(Debug, Clone, PartialEq)]
pub struct TableDef {
    pub id: TableId,
    pub db: String,
    pub name: String,
    pub columns: Vec<ColumnDef>,
    /// Column positions of the primary key; empty for a table without one (its rows are keyed
    /// by a hidden key, `store.rs`).
    pub primary_key: Vec<usize>,
    pub indexes: Vec<IndexDef>,
    /// Position of the AUTO_INCREMENT column.
    pub auto_increment: Option<usize>,
    /// Next index id to assign.
    pub next_index_id: u32,
    pub options: TableOptions,
}

impl TableDef {
    /// A definition for rows held in memory (no keys, no id): a derived table's or a virtual
    /// table's.
    pub fn in_memory(name: &str, columns: Vec<ColumnDef>) -> TableDef {
        TableDef {
            id: u64::MAX,
            db: String::new(),
            name: name.to_string(),
            columns,
            primary_key: Vec::new(),
            indexes: Vec::new(),
            auto_increment: None,
            next_index_id: 0,
            options: TableOptions::default(),
        }
    }

    /// `db.table`.
    pub fn qualified_name(&self) -> String {
        format!("{}.{}", self.db, self.name)
    }

    /// The table invariants of the module docs (debug assertions): a NOT NULL primary key,
    /// column and index names unique (ASCII case-insensitively), index columns in range,
    /// index ids below `next_index_id`.
    fn check_consistent(&self) -> Result<(), String> {
        let n = self.columns.len();
        for &p in &self.primary_key {
            if p >= n || self.columns[p].nullable {
                return Err(format!("primary key column {p} out of range or nullable"));
            }
        }
        for (i, c) in self.columns.iter().enumerate() {
            if self.columns[..i]
                .iter()
                .any(|d| d.name.eq_ignore_ascii_case(&c.name))
            {
                return Err(format!("duplicate column {}", c.name));
            }
        }
        for fk in &self.options.foreign_keys {
            let known = fk.columns.iter().all(|c| self.column_index(c).is_some());
            if !known || fk.columns.len() != fk.parent_columns.len() {
                return Err(format!("foreign key {} columns", fk.name));
            }
        }
        for (i, ix) in self.indexes.iter().enumerate() {
            if ix.columns.is_empty() || ix.columns.iter().any(|&p| p >= n) {
                return Err(format!("index {} column out of range", ix.name));
            }
            if ix.id >= self.next_index_id {
                return Err(format!("index {} id {} not assigned", ix.name, ix.id));
            }
            if self.indexes[..i]
                .iter()
                .any(|j| j.id == ix.id || j.name.eq_ignore_ascii_case(&ix.name))
            {
                return Err(format!("duplicate index {}", ix.name));
            }
        }
        Ok(())
    }

    /// Checks a definition an ALTER TABLE built: a column at least,
    /// unique column (1060) and index (1061) names, one AUTO_INCREMENT column first in a key
    /// (1075), and the invariants of [`check_consistent`](Self::check_consistent).
    pub fn check_alter(&self) -> Result<(), EngineError> {
        if self.columns.is_empty() {
            return Err(EngineError::WrongColumnSpec {
                column: String::new(),
                reason: "a table needs a column".into(),
            });
        }
        check_identifier(&self.db)?;
        check_identifier(&self.name)?;
        for (i, c) in self.columns.iter().enumerate() {
            check_identifier(&c.name)?;
            if self.columns[..i]
                .iter()
                .any(|d| d.name.eq_ignore_ascii_case(&c.name))
            {
                return Err(EngineError::DuplicateColumn {
                    column: c.name.clone(),
                });
            }
        }
        for (i, ix) in self.indexes.iter().enumerate() {
            check_identifier(&ix.name)?;
            if ix.name.eq_ignore_ascii_case("PRIMARY")
                || self.indexes[..i]
                    .iter()
                    .any(|j| j.name.eq_ignore_ascii_case(&ix.name))
            {
                return Err(EngineError::DuplicateKeyName {
                    index: ix.name.clone(),
                });
            }
        }
        let autos: Vec<usize> = (0..self.columns.len())
            .filter(|&i| self.columns[i].auto_increment)
            .collect();
        let keyed = |a: &usize| {
            self.primary_key.first() == Some(a)
                || self.indexes.iter().any(|i| i.columns.first() == Some(a))
        };
        match autos.as_slice() {
            [] if self.auto_increment.is_none() => {}
            [a] if self.auto_increment == Some(*a) && keyed(a) => {}
            _ => return Err(EngineError::WrongAutoKey),
        }
        self.check_consistent()
            .map_err(|reason| EngineError::WrongColumnSpec {
                column: String::new(),
                reason,
            })
    }

    /// Position of a column (ASCII case-insensitive).
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns
            .iter()
            .position(|c| c.name.eq_ignore_ascii_case(name))
    }

    /// The index called `name` (ASCII case-insensitive).
    pub fn index(&self, name: &str) -> Option<&IndexDef> {
        self.indexes
            .iter()
            .find(|i| i.name.eq_ignore_ascii_case(name))
    }

    /// Drops each generated key ([`TableOptions::generated_keys`]) whose columns a new key
    /// over `columns` starts with; returns their ids.
    pub fn drop_generated_keys_served_by(&mut self, columns: &[usize]) -> Vec<u32> {
        let served: Vec<IndexDef> = self
            .indexes
            .iter()
            .filter(|i| {
                columns.len() >= i.columns.len()
                    && columns[..i.columns.len()] == i.columns[..]
                    && self
                        .options
                        .generated_keys
                        .iter()
                        .any(|n| n.eq_ignore_ascii_case(&i.name))
            })
            .cloned()
            .collect();
        for g in &served {
            self.indexes.retain(|i| i.id != g.id);
        }
        self.options
            .generated_keys
            .retain(|n| !served.iter().any(|g| g.name.eq_ignore_ascii_case(n)));
        served.iter().map(|g| g.id).collect()
    }

    /// Drops each generated key ([`TableOptions::generated_keys`]) that the primary key or
    /// another index starts with (InnoDB's rule: the other key serves the foreign key; of two
    /// generated keys the shorter goes, of two alike the later stays), and forgets the names
    /// of generated keys that no longer exist. Returns the ids of the dropped indexes.
    pub fn drop_covered_generated_keys(&mut self) -> Vec<u32> {
        let (mut dropped, mut kept) = (Vec::new(), Vec::new());
        let names = std::mem::take(&mut self.options.generated_keys);
        for name in &names {
            // The generated key is the oldest of that name (a new key may take the name).
            let Some(g) = self
                .indexes
                .iter()
                .filter(|i| i.name.eq_ignore_ascii_case(name))
                .min_by_key(|i| i.id)
                .cloned()
            else {
                continue;
            };
            let starts =
                |k: &[usize]| k.len() >= g.columns.len() && k[..g.columns.len()] == g.columns[..];
            let covered = starts(&self.primary_key)
                || self
                    .indexes
                    .iter()
                    .any(|i| i.id != g.id && starts(&i.columns));
            if covered {
                self.indexes.retain(|i| i.id != g.id);
                dropped.push(g.id);
            } else {
                kept.push(name.clone());
            }
        }
        self.options.generated_keys = kept;
        dropped
    }

    /// The index with id `id`.
    pub fn index_by_id(&self, id: u32) -> Option<&IndexDef> {
        self.indexes.iter().find(|i| i.id == id)
    }

    /// Every column as a Table_map event describes it.
    pub fn column_metas(&self) -> Vec<ColumnMeta> {
        self.columns
            .iter()
            .map(|c| c.ty.column_meta(&c.name, c.nullable))
            .collect()
    }

    /// Builds a definition from a spec, validating it (ids supplied by the catalog).
    pub fn from_spec(id: TableId, spec: &TableSpec) -> Result<TableDef, EngineError> {
        check_identifier(&spec.db)?;
        check_identifier(&spec.name)?;
        let mut columns: Vec<ColumnDef> = Vec::with_capacity(spec.columns.len());
        for c in &spec.columns {
            if columns.iter().any(|d| d.name.eq_ignore_ascii_case(&c.name)) {
                return Err(EngineError::DuplicateColumn {
                    column: c.name.clone(),
                });
            }
            columns.push(ColumnDef::from_spec(c)?);
        }
        if columns.is_empty() {
            return Err(EngineError::WrongColumnSpec {
                column: String::new(),
                reason: "a table needs a column".into(),
            });
        }
        let mut def = TableDef {
            id,
            db: spec.db.clone(),
            name: spec.name.clone(),
            columns,
            primary_key: Vec::new(),
            indexes: Vec::new(),
            auto_increment: None,
            next_index_id: 1,
            options: TableOptions::default(),
        };
        def.primary_key = def.resolve_columns(&spec.primary_key)?;
        for &p in &def.primary_key {
            def.columns[p].nullable = false;
        }
        for ix in &spec.indexes {
            def.add_index(ix)?;
        }
        let autos: Vec<usize> = (0..def.columns.len())
            .filter(|&i| def.columns[i].auto_increment)
            .collect();
        match autos.as_slice() {
            [] => {}
            [a] => {
                let keyed = def.primary_key.first() == Some(a)
                    || def.indexes.iter().any(|i| i.columns.first() == Some(a));
                if !keyed {
                    return Err(EngineError::WrongAutoKey);
                }
                def.auto_increment = Some(*a);
            }
            _ => return Err(EngineError::WrongAutoKey),
        }
        Ok(def)
    }

    fn resolve_columns(&self, names: &[String]) -> Result<Vec<usize>, EngineError> {
        let mut out = Vec::with_capacity(names.len());
        for n in names {
            let i = self
                .column_index(n)
                .ok_or_else(|| EngineError::NoSuchKeyColumn { column: n.clone() })?;
            if out.contains(&i) {
                return Err(EngineError::DuplicateColumn { column: n.clone() });
            }
            out.push(i);
        }
        Ok(out)
    }

    /// Adds a secondary index (validated), returning its definition.
    pub fn add_index(&mut self, spec: &IndexSpec) -> Result<IndexDef, EngineError> {
        check_identifier(&spec.name)?;
        if let Ok(cols) = self.resolve_columns(&spec.columns) {
            // InnoDB drops the generated keys the new index serves the foreign keys of first
            // (so their names are free again).
            self.drop_generated_keys_served_by(&cols);
        }
        if spec.name.eq_ignore_ascii_case("PRIMARY") || self.index(&spec.name).is_some() {
            return Err(EngineError::DuplicateKeyName {
                index: spec.name.clone(),
            });
        }
        if spec.columns.is_empty() {
            return Err(EngineError::WrongColumnSpec {
                column: spec.name.clone(),
                reason: "an index needs a column".into(),
            });
        }
        let columns = self.resolve_columns(&spec.columns)?;
        let def = IndexDef {
            id: self.next_index_id,
            name: spec.name.clone(),
            columns,
            unique: spec.unique,
            options: spec.options.clone(),
        };
        self.next_index_id += 1;
        self.indexes.push(def.clone());
        Ok(def)
    }

    fn encode(&self, out: &mut Vec<u8>) {
        put_u64(out, self.id);
        put_str(out, &self.db);
        put_str(out, &self.name);
        put_var(out, self.columns.len() as u64);
        for c in &self.columns {
            put_str(out, &c.name);
            c.ty.encode(out);
            // An ENUM's or SET's members follow its type (types written before them have none).
            debug_assert_eq!(
                c.members.len(),
                c.ty.member_count(),
                "members of {}",
                c.name
            );
            for m in &c.members {
                put_str(out, m);
            }
            // Flag 4: the column's collation id follows its default (an extension: bytes
            // written before collations have no flag 4).
            let coll_flag = (c.collation.is_some() as u8) << 2;
            put_u8(
                out,
                c.nullable as u8 | (c.auto_increment as u8) << 1 | coll_flag,
            );
            match &c.default {
                None => put_u8(out, 0),
                Some(v) => {
                    put_u8(out, 1);
                    put_value(out, v);
                }
            }
            if let Some(coll) = c.collation {
                put_u32(out, u32::from(coll.id()));
            }
        }
        put_positions(out, &self.primary_key);
        put_var(out, self.indexes.len() as u64);
        for i in &self.indexes {
            put_u32(out, i.id);
            put_str(out, &i.name);
            put_positions(out, &i.columns);
            put_u8(out, i.unique as u8);
        }
        put_var(out, self.auto_increment.map_or(0, |a| a as u64 + 1));
        put_u32(out, self.next_index_id);
        self.encode_extension(out);
    }

    /// The optional trailing extension: absent when every column's [`ColumnExtras`] and the
    /// [`TableOptions`] are the defaults (so older definitions keep their bytes); otherwise
    /// tag [`EXT_ATTRIBUTES`] with, per column, flags (1: default_now, 2: on_update_now,
    /// 4: display width), the two fsps, the comment and the width; then the table comment and
    /// AUTO_INCREMENT start. Definitions written before the extension existed end after
    /// `next_index_id` and still decode.
    fn encode_extension(&self, out: &mut Vec<u8>) {
        let o = &self.options;
        if !self.columns.iter().all(|c| c.extras.is_plain())
            || !o.comment.is_empty()
            || o.auto_increment != 0
        {
            self.encode_attributes(out);
        }
        if !o.foreign_keys.is_empty() || !o.checks.is_empty() {
            encode_constraints(o, out);
        }
        if !o.generated_keys.is_empty() {
            put_u8(out, EXT_GENERATED_KEYS);
            put_names(out, &o.generated_keys);
        }
        if !o.primary.is_default() || self.indexes.iter().any(|i| !i.options.is_default()) {
            // The primary key's options, then each index's, in `indexes` order.
            put_u8(out, EXT_INDEX_OPTIONS);
            o.primary.encode(out);
            for i in &self.indexes {
                i.options.encode(out);
            }
        }
    }

    fn encode_attributes(&self, out: &mut Vec<u8>) {
        put_u8(out, EXT_ATTRIBUTES);
        for c in &self.columns {
            let e = &c.extras;
            let flags = e.default_now.is_some() as u8
                | (e.on_update_now.is_some() as u8) << 1
                | (e.display_width.is_some() as u8) << 2
                | (e.float_digits.is_some() as u8) << 3;
            put_u8(out, flags);
            put_u8(out, e.default_now.unwrap_or(0));
            put_u8(out, e.on_update_now.unwrap_or(0));
            put_str(out, &e.comment);
            put_var(out, u64::from(e.display_width.unwrap_or(0)));
            // Written only when present: definitions from before FLOAT(M,D) read the same.
            if let Some((m, d)) = e.float_digits {
                put_u8(out, m);
                put_u8(out, d);
            }
        }
        put_str(out, &self.options.comment);
        put_u64(out, self.options.auto_increment);
    }

    /// Reads [`encode_extension`](Self::encode_extension)'s bytes when there are any left.
    /// The extension is a sequence of tagged sections, each at most once and in tag order
    /// ([`EXT_ATTRIBUTES`], [`EXT_CONSTRAINTS`], [`EXT_GENERATED_KEYS`], then
    /// [`EXT_INDEX_OPTIONS`]); bytes written before a section existed lack it.
    fn decode_extension(&mut self, r: &mut Reader<'_>) -> Result<(), FormatError> {
        let mut last = 0;
        while !r.is_empty() {
            let tag = r.u8()?;
            if tag <= last {
                return Err(r.err(format!("table definition extension {tag} out of order")));
            }
            last = tag;
            match tag {
                EXT_ATTRIBUTES => self.decode_attributes(r)?,
                EXT_CONSTRAINTS => decode_constraints(&mut self.options, r)?,
                EXT_GENERATED_KEYS => self.options.generated_keys = get_names(r)?,
                EXT_INDEX_OPTIONS => {
                    self.options.primary = IndexOptions::decode(r)?;
                    for i in &mut self.indexes {
                        i.options = IndexOptions::decode(r)?;
                    }
                }
                t => return Err(r.err(format!("unknown table definition extension {t}"))),
            }
        }
        Ok(())
    }

    fn decode_attributes(&mut self, r: &mut Reader<'_>) -> Result<(), FormatError> {
        for c in &mut self.columns {
            let flags = r.u8()?;
            if flags & !15 != 0 {
                return Err(r.err(format!("bad column attribute flags {flags}")));
            }
            let (dn, un) = (r.u8()?, r.u8()?);
            let comment = r.string()?;
            let width = r.var()?;
            let digits = match flags & 8 != 0 {
                true => Some((r.u8()?, r.u8()?)),
                false => None,
            };
            if dn > 6
                || un > 6
                || width > u64::from(u16::MAX)
                || digits.is_some_and(|(m, d)| m == 0 || d > 30 || d > m)
            {
                return Err(r.err("bad column attribute values"));
            }
            c.extras = ColumnExtras {
                default_now: (flags & 1 != 0).then_some(dn),
                on_update_now: (flags & 2 != 0).then_some(un),
                comment,
                display_width: (flags & 4 != 0).then_some(width as u16),
                float_digits: digits,
            };
        }
        self.options.comment = r.string()?;
        self.options.auto_increment = r.u64()?;
        Ok(())
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, FormatError> {
        let id = r.u64()?;
        let db = r.string()?;
        let name = r.string()?;
        let n = r.count(4)?;
        let mut columns = Vec::with_capacity(n);
        for _ in 0..n {
            let cname = r.string()?;
            let ty = SqlType::decode(r)?;
            let mut members = Vec::new();
            for _ in 0..ty.member_count() {
                members.push(r.string()?);
            }
            let flags = r.u8()?;
            let default = match r.u8()? {
                0 => None,
                1 => Some(r.value()?),
                b => return Err(r.err(format!("bad default flag {b}"))),
            };
            let collation = if flags & 4 != 0 {
                let id = r.u32()?;
                let coll = u16::try_from(id).ok().and_then(Collation::by_id);
                Some(coll.ok_or_else(|| r.err(format!("unknown collation id {id}")))?)
            } else if ty.is_text() {
                // Written before collations: those columns compared as bytes; they keep
                // that order (docs/SQL.md).
                Some(Collation::Utf8mb4Bin)
            } else {
                None
            };
            columns.push(ColumnDef {
                name: cname,
                ty,
                nullable: flags & 1 != 0,
                default,
                auto_increment: flags & 2 != 0,
                extras: ColumnExtras::default(),
                collation,
                members,
            });
        }
        let ncols = columns.len();
        // Empty: a table without primary key (rows keyed by a hidden key, `store.rs`).
        let primary_key = get_positions(r, ncols)?;
        let ni = r.count(6)?;
        let mut indexes = Vec::with_capacity(ni);
        for _ in 0..ni {
            let iid = r.u32()?;
            let iname = r.string()?;
            let icols = get_positions(r, ncols)?;
            let unique = r.u8()? != 0;
            indexes.push(IndexDef {
                id: iid,
                name: iname,
                columns: icols,
                unique,
                options: IndexOptions::default(),
            });
        }
        let auto = r.var()?;
        let auto_increment = match auto {
            0 => None,
            a if a as usize <= ncols => Some(a as usize - 1),
            a => return Err(r.err(format!("auto-increment column {a} out of range"))),
        };
        let next_index_id = r.u32()?;
        let mut def = TableDef {
            id,
            db,
            name,
            columns,
            primary_key,
            indexes,
            auto_increment,
            next_index_id,
            options: TableOptions::default(),
        };
        def.decode_extension(r)?;
        Ok(def)
    }
}

/// Section [`EXT_CONSTRAINTS`]: the foreign keys (name, child columns, parent database,
/// table and columns, the ON DELETE and ON UPDATE action codes), then the checks (name,
/// column or empty, expression text).
fn encode_constraints(o: &TableOptions, out: &mut Vec<u8>) {
    put_u8(out, EXT_CONSTRAINTS);
    put_var(out, o.foreign_keys.len() as u64);
    for fk in &o.foreign_keys {
        put_str(out, &fk.name);
        put_names(out, &fk.columns);
        put_str(out, &fk.parent_db);
        put_str(out, &fk.parent_table);
        put_names(out, &fk.parent_columns);
        put_u8(out, fk.on_delete.code());
        put_u8(out, fk.on_update.code());
    }
    put_var(out, o.checks.len() as u64);
    for c in &o.checks {
        put_str(out, &c.name);
        put_str(out, c.column.as_deref().unwrap_or(""));
        put_str(out, &c.expr);
    }
}

fn decode_constraints(o: &mut TableOptions, r: &mut Reader<'_>) -> Result<(), FormatError> {
    let n = r.count(8)?;
    for _ in 0..n {
        let name = r.string()?;
        let columns = get_names(r)?;
        let parent_db = r.string()?;
        let parent_table = r.string()?;
        let parent_columns = get_names(r)?;
        let action = |r: &mut Reader<'_>| {
            let c = r.u8()?;
            FkAction::from_code(c).ok_or_else(|| r.err(format!("bad foreign key action {c}")))
        };
        let on_delete = action(r)?;
        let on_update = action(r)?;
        if columns.is_empty() || columns.len() != parent_columns.len() {
            return Err(r.err("foreign key column counts differ"));
        }
        o.foreign_keys.push(ForeignKeyDef {
            name,
            columns,
            parent_db,
            parent_table,
            parent_columns,
            on_delete,
            on_update,
        });
    }
    let n = r.count(3)?;
    for _ in 0..n {
        let name = r.string()?;
        let column = Some(r.string()?).filter(|c| !c.is_empty());
        let expr = r.string()?;
        o.checks.push(CheckDef { name, column, expr });
    }
    Ok(())
}

fn put_names(out: &mut Vec<u8>, names: &[String]) {
    put_var(out, names.len() as u64);
    for n in names {
        put_str(out, n);
    }
}

fn get_names(r: &mut Reader<'_>) -> Result<Vec<String>, FormatError> {
    let n = r.count(1)?;
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        v.push(r.string()?);
    }
    Ok(v)
}

fn put_positions(out: &mut Vec<u8>, p: &[usize]) {
    put_var(out, p.len() as u64);
    for &i in p {
        put_var(out, i as u64);
    }
}

fn get_positions(r: &mut Reader<'_>, ncols: usize) -> Result<Vec<usize>, FormatError> {
    let n = r.count(1)?;
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        let i = r.var()?;
        if i as usize >= ncols || i > u32::MAX as u64 {
            return Err(r.err(format!(
                "column position {i} out of range ({ncols} columns)"
            )));
        }
        v.push(i as usize);
    }
    Ok(v)
}

/// One privilege grant of an account: a bit set of privileges (their meaning belongs to the
/// SQL layer; the engine only stores them) on a scope: `"*"` for `*.*`, else a database name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrantDef {
    pub scope: String,
    pub privileges: u64,
}

/// A user account (`'user'@'host'`), stored in the catalog so that it is logged as DDL,
/// replayed by recovery and replicas, and saved in checkpoints like tables are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccountDef {
    pub user: String,
    pub host: String,
    /// `mysql_native_password` hash, SHA1(SHA1(password)) (20 bytes); empty: no password.
    pub auth_hash: Vec<u8>,
    /// Which authentication methods the account accepts besides (or instead of) the hash.
    pub auth: AuthMethods,
    /// At most one entry per scope.
    pub grants: Vec<GrantDef>,
}

/// An account's authentication methods: MariaDB's plugin chain reduced to what onelog
/// implements. The default (both false) is a plain `mysql_native_password` account checked
/// against `auth_hash` (an empty hash accepts an empty password), which is what every account
/// of catalog formats before 3 is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AuthMethods {
    /// `IDENTIFIED VIA unix_socket`: a connection over the unix socket whose peer process runs
    /// as the server's OS user (or as OS root) logs in without a password.
    pub unix_socket: bool,
    /// No password login at all (MariaDB's `mysql_native_password USING 'invalid'`); only
    /// meaningful with `unix_socket`.
    pub no_password_login: bool,
}

impl AuthMethods {
    fn to_byte(self) -> u8 {
        u8::from(self.unix_socket) | u8::from(self.no_password_login) << 1
    }

    fn from_byte(b: u8) -> Option<AuthMethods> {
        (b <= 3).then_some(AuthMethods {
            unix_socket: b & 1 != 0,
            no_password_login: b & 2 != 0,
        })
    }
}

impl AccountDef {
    fn encode(&self, out: &mut Vec<u8>) {
        put_str(out, &self.user);
        put_str(out, &self.host);
        put_bytes(out, &self.auth_hash);
        put_u8(out, self.auth.to_byte());
        put_var(out, self.grants.len() as u64);
        for g in &self.grants {
            put_str(out, &g.scope);
            put_u64(out, g.privileges);
        }
    }

    /// `with_auth`: the encoding carries [`AuthMethods`] (change format 2, catalog format 3).
    fn decode(r: &mut Reader<'_>, with_auth: bool) -> Result<Self, FormatError> {
        let user = r.string()?;
        let host = r.string()?;
        let auth_hash = r.bytes()?.to_vec();
        let auth = if with_auth {
            let b = r.u8()?;
            AuthMethods::from_byte(b)
                .ok_or_else(|| r.err(format!("unknown account authentication flags {b}")))?
        } else {
            AuthMethods::default()
        };
        let n = r.count(9)?;
        let mut grants = Vec::with_capacity(n);
        for _ in 0..n {
            let scope = r.string()?;
            let privileges = r.u64()?;
            grants.push(GrantDef { scope, privileges });
        }
        Ok(AccountDef {
            user,
            host,
            auth_hash,
            auth,
            grants,
        })
    }
}

/// A DDL change: what a DDL log record's `aux` carries and what recovery/replicas apply.
#[derive(Debug, Clone, PartialEq)]
pub enum CatalogChange {
    CreateDatabase {
        name: String,
    },
    /// Drops the database and every table in it.
    DropDatabase {
        name: String,
    },
    /// The table with its assigned id (and index ids).
    CreateTable {
        table: TableDef,
    },
    DropTable {
        id: TableId,
    },
    /// Removes every row and resets the AUTO_INCREMENT counter.
    TruncateTable {
        id: TableId,
    },
    /// Adds `index` (its id assigned) and builds it from the rows.
    CreateIndex {
        table: TableId,
        index: IndexDef,
    },
    DropIndex {
        table: TableId,
        index_id: u32,
    },
    /// `RENAME TABLE` / `ALTER TABLE ... RENAME`: each table in turn gets a new database and
    /// name (later pairs see the earlier ones, so `a TO t, b TO a, t TO b` swaps two tables);
    /// the rows stay with the table id.
    RenameTables {
        renames: Vec<(TableId, String, String)>,
    },
    /// `ALTER TABLE ... ADD COLUMN` at the end: `table` is the new definition (the old one with
    /// one more column last); every row gets `fill` in it.
    AddColumn {
        table: TableDef,
        fill: Value,
    },
    /// `ALTER TABLE ... DROP COLUMN`: `table` is the new definition (the old one without the
    /// column at `position`, key positions past it moved down); every row loses that value.
    DropColumn {
        table: TableDef,
        position: u32,
    },
    /// `ALTER TABLE` with any operations, as one change: `table` is the whole new definition
    /// (same id; a new database or name for a RENAME among the operations) and `sources[i]`
    /// says where column `i`'s values come from (an old column's value converted to the new type by `alter::convert`, or one value for
    /// every row). Keys are rebuilt from the new rows.
    /// `strict`: the copy's conversion failures are errors (the session's strict sql_mode);
    /// otherwise values are clipped, cut or zeroed, as MariaDB's non-strict copy.
    /// `auto_increment`: `AUTO_INCREMENT=N` among the operations: the counter becomes N, or
    /// the largest value + 1 when that is higher (as InnoDB).
    AlterTable {
        strict: bool,
        auto_increment: Option<u64>,
        sources: Vec<ColumnSource>,
        table: TableDef,
    },
    /// `ALTER TABLE ... ADD/DROP FOREIGN KEY / CONSTRAINT / CHECK`: `table` is the new
    /// definition, the old one with other foreign keys and checks and, when `index` is set,
    /// that (non-unique) index added, which InnoDB adds for a foreign key no key serves and
    /// which is built from the rows. Nothing else differs; the rows do not change.
    AlterConstraints {
        index: Option<IndexDef>,
        table: TableDef,
    },
    /// `CREATE USER`: the account must not exist.
    CreateAccount {
        account: AccountDef,
    },
    /// `DROP USER`: the account must exist.
    DropAccount {
        user: String,
        host: String,
    },
    /// Replaces an existing account as a whole (`SET PASSWORD`, `GRANT`, `REVOKE`,
    /// `ALTER USER`).
    AlterAccount {
        account: AccountDef,
    },
    /// The accounts become exactly `accounts` (each `(user, host)` at most once): the reload
    /// of the `mysql` account tables from a dump applies as this one change.
    ReplaceAccounts {
        accounts: Vec<AccountDef>,
    },
    /// `CREATE VIEW` (`replace`: `OR REPLACE` / `ALTER VIEW`, an existing view of that name is
    /// replaced). The name must not be a table's.
    CreateView {
        replace: bool,
        view: ViewDef,
    },
    /// `DROP VIEW`: each `(db, name)` must be a view.
    DropViews {
        views: Vec<(String, String)>,
    },
    /// `RENAME TABLE` of views: `(db, name, new db, new name)` applied in order, each new name
    /// free.
    RenameViews {
        renames: Vec<(String, String, String, String)>,
    },
}

/// Where a column of an ALTER TABLE's new definition takes its values from.
#[derive(Debug, Clone, PartialEq)]
pub enum ColumnSource {
    /// The old row's value at this position, converted to the new column.
    Old(usize),
    /// This value in every row (an added column).
    Fill(Value),
    /// The row's number in the copy, 1-based in primary key order: an added AUTO_INCREMENT
    /// column, numbered as MariaDB numbers it.
    Sequence,
}

/// Tag of the table definition's trailing extension (column attributes and table options).
const EXT_ATTRIBUTES: u8 = 1;
/// Tag of the extension's section of FOREIGN KEY and CHECK constraints (after
/// [`EXT_ATTRIBUTES`] when both are present).
const EXT_CONSTRAINTS: u8 = 2;

/// Tag of the extension's section of generated key names ([`TableOptions::generated_keys`];
/// last; a distant number leaves room for other sections before it).
const EXT_GENERATED_KEYS: u8 = 10;

/// Tag of the extension's section of key options ([`IndexOptions`] of the primary key and of
/// each index; after [`EXT_GENERATED_KEYS`]).
const EXT_INDEX_OPTIONS: u8 = 11;

/// Tag of [`CatalogChange::AlterConstraints`] (the fk range of tags is 20..=29).
const TAG_ALTER_CONSTRAINTS: u8 = 20;

/// Tags of the view changes (the views range of tags is 50..=59).
const TAG_CREATE_VIEW: u8 = 50;
const TAG_DROP_VIEWS: u8 = 51;
const TAG_RENAME_VIEWS: u8 = 52;

/// Tag of [`CatalogChange::ReplaceAccounts`] (the accounts range of tags is 40..=49).
const TAG_REPLACE_ACCOUNTS: u8 = 40;

/// Format 2 added the accounts' [`AuthMethods`]; format 1 is still read.
const CHANGE_FORMAT: u8 = 2;
/// Format 2 added accounts after the tables, format 3 their [`AuthMethods`], format 4 the
/// views after the accounts; formats 1 (no accounts), 2 and 3 are still read.
const CATALOG_FORMAT: u8 = 4;

impl CatalogChange {
    /// CREATE/DROP DATABASE: MariaDB logs them with the database as the Query event's db and
    /// `LOG_EVENT_SUPPRESS_USE_F`, since `use db` before them would fail (the database does not
    /// exist yet / any more).
    pub fn suppresses_use(&self) -> bool {
        matches!(
            self,
            CatalogChange::CreateDatabase { .. } | CatalogChange::DropDatabase { .. }
        )
    }

    /// The change's bytes (a DDL record's `aux`).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(64);
        put_u8(&mut out, CHANGE_FORMAT);
        match self {
            CatalogChange::CreateDatabase { name } => {
                put_u8(&mut out, 1);
                put_str(&mut out, name);
            }
            CatalogChange::DropDatabase { name } => {
                put_u8(&mut out, 2);
                put_str(&mut out, name);
            }
            CatalogChange::CreateTable { table } => {
                put_u8(&mut out, 3);
                table.encode(&mut out);
            }
            CatalogChange::AlterConstraints { index, table } => {
                put_u8(&mut out, TAG_ALTER_CONSTRAINTS);
                match index {
                    None => put_u8(&mut out, 0),
                    Some(i) => {
                        put_u8(&mut out, 1);
                        put_u32(&mut out, i.id);
                        put_str(&mut out, &i.name);
                        put_positions(&mut out, &i.columns);
                    }
                }
                // The definition last: its optional trailing extension runs to the end.
                table.encode(&mut out);
            }
            CatalogChange::DropTable { id } => {
                put_u8(&mut out, 4);
                put_u64(&mut out, *id);
            }
            CatalogChange::TruncateTable { id } => {
                put_u8(&mut out, 5);
                put_u64(&mut out, *id);
            }
            CatalogChange::CreateIndex { table, index } => {
                put_u8(&mut out, 6);
                put_u64(&mut out, *table);
                index.encode_created(&mut out);
            }
            CatalogChange::DropIndex { table, index_id } => {
                put_u8(&mut out, 7);
                put_u64(&mut out, *table);
                put_u32(&mut out, *index_id);
            }
            CatalogChange::CreateAccount { account } => {
                put_u8(&mut out, 8);
                account.encode(&mut out);
            }
            CatalogChange::DropAccount { user, host } => {
                put_u8(&mut out, 9);
                put_str(&mut out, user);
                put_str(&mut out, host);
            }
            CatalogChange::AlterAccount { account } => {
                put_u8(&mut out, 10);
                account.encode(&mut out);
            }
            CatalogChange::ReplaceAccounts { accounts } => {
                put_u8(&mut out, TAG_REPLACE_ACCOUNTS);
                put_u32(&mut out, accounts.len() as u32);
                for a in accounts {
                    a.encode(&mut out);
                }
            }
            CatalogChange::DropColumn { table, position } => {
                put_u8(&mut out, 13);
                put_u32(&mut out, *position);
                table.encode(&mut out);
            }
            CatalogChange::AddColumn { table, fill } => {
                put_u8(&mut out, 12);
                // The definition last: its optional trailing extension runs to the end.
                put_value(&mut out, fill);
                table.encode(&mut out);
            }
            CatalogChange::AlterTable {
                strict,
                auto_increment,
                sources,
                table,
            } => {
                put_u8(&mut out, 30);
                // Flags: 1 strict, 2 an AUTO_INCREMENT value follows.
                put_u8(
                    &mut out,
                    *strict as u8 | (auto_increment.is_some() as u8) << 1,
                );
                if let Some(n) = auto_increment {
                    put_u64(&mut out, *n);
                }
                put_u32(&mut out, sources.len() as u32);
                for s in sources {
                    match s {
                        ColumnSource::Old(p) => {
                            put_u8(&mut out, 0);
                            put_u32(&mut out, *p as u32);
                        }
                        ColumnSource::Fill(v) => {
                            put_u8(&mut out, 1);
                            put_value(&mut out, v);
                        }
                        ColumnSource::Sequence => put_u8(&mut out, 2),
                    }
                }
                // The definition last: its optional trailing extension runs to the end.
                table.encode(&mut out);
            }
            CatalogChange::RenameTables { renames } => {
                put_u8(&mut out, 11);
                put_u32(&mut out, renames.len() as u32);
                for (id, db, name) in renames {
                    put_u64(&mut out, *id);
                    put_str(&mut out, db);
                    put_str(&mut out, name);
                }
            }
            CatalogChange::CreateView { replace, view } => {
                put_u8(&mut out, TAG_CREATE_VIEW);
                put_u8(&mut out, u8::from(*replace));
                view.encode(&mut out);
            }
            CatalogChange::DropViews { views } => {
                put_u8(&mut out, TAG_DROP_VIEWS);
                put_u32(&mut out, views.len() as u32);
                for (db, name) in views {
                    put_str(&mut out, db);
                    put_str(&mut out, name);
                }
            }
            CatalogChange::RenameViews { renames } => {
                put_u8(&mut out, TAG_RENAME_VIEWS);
                put_u32(&mut out, renames.len() as u32);
                for (db, name, new_db, new_name) in renames {
                    for s in [db, name, new_db, new_name] {
                        put_str(&mut out, s);
                    }
                }
            }
        }
        out
    }

    /// Decodes [`encode`](Self::encode)'s bytes; every byte must be used.
    pub fn decode(buf: &[u8]) -> Result<Self, FormatError> {
        let mut r = Reader::new(buf, "catalog change");
        let version = r.u8()?;
        if version != 1 && version != CHANGE_FORMAT {
            return Err(r.err(format!("unknown catalog change format {version}")));
        }
        let with_auth = version >= 2;
        let c = match r.u8()? {
            1 => CatalogChange::CreateDatabase { name: r.string()? },
            2 => CatalogChange::DropDatabase { name: r.string()? },
            3 => CatalogChange::CreateTable {
                table: TableDef::decode(&mut r)?,
            },
            4 => CatalogChange::DropTable { id: r.u64()? },
            5 => CatalogChange::TruncateTable { id: r.u64()? },
            6 => CatalogChange::CreateIndex {
                table: r.u64()?,
                index: IndexDef::decode_created(&mut r)?,
            },
            TAG_ALTER_CONSTRAINTS => {
                let index = match r.u8()? {
                    0 => None,
                    1 => Some(IndexDef {
                        id: r.u32()?,
                        name: r.string()?,
                        columns: get_positions(&mut r, usize::MAX)?,
                        unique: false,
                        options: IndexOptions::default(),
                    }),
                    b => return Err(r.err(format!("bad index flag {b}"))),
                };
                CatalogChange::AlterConstraints {
                    index,
                    table: TableDef::decode(&mut r)?,
                }
            }
            7 => CatalogChange::DropIndex {
                table: r.u64()?,
                index_id: r.u32()?,
            },
            13 => {
                let position = r.u32()?;
                CatalogChange::DropColumn {
                    table: TableDef::decode(&mut r)?,
                    position,
                }
            }
            12 => {
                let fill = r.value()?;
                CatalogChange::AddColumn {
                    table: TableDef::decode(&mut r)?,
                    fill,
                }
            }
            30 => {
                let flags = r.u8()?;
                if flags > 3 {
                    return Err(r.err(format!("unknown ALTER TABLE flags {flags}")));
                }
                let strict = flags & 1 != 0;
                let auto_increment = if flags & 2 != 0 { Some(r.u64()?) } else { None };
                let n = r.u32()?;
                let mut sources = Vec::new();
                for _ in 0..n {
                    sources.push(match r.u8()? {
                        0 => ColumnSource::Old(r.u32()? as usize),
                        1 => ColumnSource::Fill(r.value()?),
                        2 => ColumnSource::Sequence,
                        k => return Err(r.err(format!("unknown column source {k}"))),
                    });
                }
                CatalogChange::AlterTable {
                    strict,
                    auto_increment,
                    sources,
                    table: TableDef::decode(&mut r)?,
                }
            }
            11 => {
                let n = r.u32()?;
                let mut renames = Vec::new();
                for _ in 0..n {
                    renames.push((r.u64()?, r.string()?, r.string()?));
                }
                CatalogChange::RenameTables { renames }
            }
            8 => CatalogChange::CreateAccount {
                account: AccountDef::decode(&mut r, with_auth)?,
            },
            9 => CatalogChange::DropAccount {
                user: r.string()?,
                host: r.string()?,
            },
            10 => CatalogChange::AlterAccount {
                account: AccountDef::decode(&mut r, with_auth)?,
            },
            TAG_REPLACE_ACCOUNTS => {
                let n = r.u32()?;
                let mut accounts = Vec::new();
                for _ in 0..n {
                    accounts.push(AccountDef::decode(&mut r, with_auth)?);
                }
                CatalogChange::ReplaceAccounts { accounts }
            }
            TAG_CREATE_VIEW => CatalogChange::CreateView {
                replace: match r.u8()? {
                    0 => false,
                    1 => true,
                    b => return Err(r.err(format!("bad OR REPLACE flag {b}"))),
                },
                view: ViewDef::decode(&mut r)?,
            },
            TAG_DROP_VIEWS => {
                let n = r.u32()?;
                let mut views = Vec::new();
                for _ in 0..n {
                    views.push((r.string()?, r.string()?));
                }
                CatalogChange::DropViews { views }
            }
            TAG_RENAME_VIEWS => {
                let n = r.u32()?;
                let mut renames = Vec::new();
                for _ in 0..n {
                    renames.push((r.string()?, r.string()?, r.string()?, r.string()?));
                }
                CatalogChange::RenameViews { renames }
            }
            k => return Err(r.err(format!("unknown catalog change kind {k}"))),
        };
        if !r.is_empty() {
            return Err(r.err("trailing bytes after catalog change"));
        }
        Ok(c)
    }
}

/// The set of databases and tables. Immutable once published.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Catalog {
    databases: BTreeSet<String>,
    tables: BTreeMap<TableId, Arc<TableDef>>,
    names: BTreeMap<(String, String), TableId>,
    next_table_id: TableId,
    /// Accounts keyed by (user, host), both compared exactly.
    accounts: BTreeMap<(String, String), Arc<AccountDef>>,
    /// Views keyed by (database, name); no name is both a table's and a view's.
    views: BTreeMap<(String, String), Arc<ViewDef>>,
}

impl Catalog {
    /// An empty catalog (table ids start at 1).
    pub fn new() -> Self {
        Catalog {
            next_table_id: 1,
            ..Default::default()
        }
    }

    pub fn has_database(&self, name: &str) -> bool {
        self.databases.contains(name)
    }

    pub fn databases(&self) -> impl Iterator<Item = &str> {
        self.databases.iter().map(|s| s.as_str())
    }

    pub fn table(&self, id: TableId) -> Option<&Arc<TableDef>> {
        self.tables.get(&id)
    }

    pub fn table_by_name(&self, db: &str, name: &str) -> Option<&Arc<TableDef>> {
        self.names
            .get(&(db.to_string(), name.to_string()))
            .and_then(|id| self.tables.get(id))
    }

    /// Tables in id order.
    pub fn tables(&self) -> impl Iterator<Item = &Arc<TableDef>> {
        self.tables.values()
    }

    /// Tables of one database, by name.
    pub fn tables_in(&self, db: &str) -> Vec<&Arc<TableDef>> {
        self.names
            .range((db.to_string(), String::new())..)
            .take_while(|((d, _), _)| d == db)
            .filter_map(|(_, id)| self.tables.get(id))
            .collect()
    }

    /// The view `db.name`.
    pub fn view(&self, db: &str, name: &str) -> Option<&Arc<ViewDef>> {
        self.views.get(&(db.to_string(), name.to_string()))
    }

    /// Views of one database, by name.
    pub fn views_in(&self, db: &str) -> Vec<&Arc<ViewDef>> {
        self.views
            .range((db.to_string(), String::new())..)
            .take_while(|((d, _), _)| d == db)
            .map(|(_, v)| v)
            .collect()
    }

    /// Whether there is any view (the readers' fast path: no view lookup without one).
    pub fn has_views(&self) -> bool {
        !self.views.is_empty()
    }

    /// Every view, ordered by (database, name).
    pub fn views(&self) -> impl Iterator<Item = &Arc<ViewDef>> {
        self.views.values()
    }

    /// Whether `db.name` names a table or a view.
    fn name_taken(&self, db: &str, name: &str) -> bool {
        let key = (db.to_string(), name.to_string());
        self.names.contains_key(&key) || self.views.contains_key(&key)
    }

    /// Every account, ordered by (user, host).
    pub fn accounts(&self) -> impl Iterator<Item = &Arc<AccountDef>> {
        self.accounts.values()
    }

    /// The account `'user'@'host'` (exact match; host patterns are the SQL layer's job).
    pub fn account(&self, user: &str, host: &str) -> Option<&Arc<AccountDef>> {
        self.accounts.get(&(user.to_string(), host.to_string()))
    }

    /// The id the next CREATE TABLE gets.
    pub fn next_table_id(&self) -> TableId {
        self.next_table_id
    }

    /// Validates `change` against this catalog and returns the catalog after it.
    // Long: one arm per kind of catalog change.
    pub fn apply(&self, change: &CatalogChange) -> Result<Catalog, EngineError> {
        let mut c = self.clone();
        match change {
            CatalogChange::CreateDatabase { name } => {
                if !c.databases.insert(name.clone()) {
                    return Err(EngineError::DatabaseExists { db: name.clone() });
                }
            }
            CatalogChange::DropDatabase { name } => {
                if !c.databases.remove(name) {
                    return Err(EngineError::NoSuchDatabase { db: name.clone() });
                }
                let ids: Vec<TableId> = c.tables_in(name).iter().map(|t| t.id).collect();
                for id in ids {
                    c.remove_table(id);
                }
                c.views.retain(|(d, _), _| d != name);
            }
            CatalogChange::CreateTable { table } => c.add_table(table)?,
            CatalogChange::DropTable { id } | CatalogChange::TruncateTable { id } => {
                if !c.tables.contains_key(id) {
                    return Err(EngineError::NoSuchTable {
                        db: String::new(),
                        table: format!("#{id}"),
                    });
                }
                if matches!(change, CatalogChange::DropTable { .. }) {
                    c.remove_table(*id);
                }
            }
            CatalogChange::CreateIndex { table, index } => {
                let t = with_index(c.table_for_change(*table)?, index)?;
                c.tables.insert(*table, Arc::new(t));
            }
            CatalogChange::DropIndex { table, index_id } => {
                let t = without_index(c.table_for_change(*table)?, *index_id)?;
                c.tables.insert(*table, Arc::new(t));
            }
            CatalogChange::DropColumn { table, position } => {
                let old = c.table_for_change(table.id)?;
                let p = *position as usize;
                let mut rest = old.columns.clone();
                let same = p < rest.len() && {
                    rest.remove(p);
                    rest == table.columns && old.db == table.db && old.name == table.name
                };
                if !same {
                    return Err(EngineError::corrupt(
                        "DROP COLUMN",
                        "the new definition is not the old one without that column",
                    ));
                }
                c.tables.insert(table.id, Arc::new(table.clone()));
            }
            CatalogChange::AlterConstraints { index, table } => {
                let mut old = c.table_for_change(table.id)?;
                if let Some(i) = index {
                    if i.unique {
                        return Err(EngineError::corrupt(
                            "ALTER TABLE constraints",
                            "a unique index",
                        ));
                    }
                    old = with_index(old, i)?;
                }
                old.options.foreign_keys = table.options.foreign_keys.clone();
                old.options.checks = table.options.checks.clone();
                old.options.generated_keys = table.options.generated_keys.clone(); // + the new index
                if old != *table {
                    return Err(EngineError::corrupt(
                        "ALTER TABLE constraints",
                        "the new definition differs from the old one beyond its constraints",
                    ));
                }
                c.tables.insert(table.id, Arc::new(table.clone()));
            }
            CatalogChange::AddColumn { table, .. } => {
                let old = c.table_for_change(table.id)?;
                let same = old.db == table.db
                    && old.name == table.name
                    && table.columns.len() == old.columns.len() + 1
                    && table.columns[..old.columns.len()] == old.columns[..];
                if !same {
                    return Err(EngineError::corrupt(
                        "ADD COLUMN",
                        "the new definition is not the old one with a column added last",
                    ));
                }
                c.tables.insert(table.id, Arc::new(table.clone()));
            }
            CatalogChange::AlterTable { sources, table, .. } => {
                let old = c.table_for_change(table.id)?;
                let same = sources.len() == table.columns.len()
                    && table.next_index_id >= old.next_index_id
                    && sources.iter().all(|s| match s {
                        ColumnSource::Old(p) => *p < old.columns.len(),
                        ColumnSource::Fill(_) | ColumnSource::Sequence => true,
                    });
                if !same {
                    return Err(EngineError::corrupt(
                        "ALTER TABLE",
                        "the new definition does not fit the old one",
                    ));
                }
                table.check_consistent().map_err(|reason| {
                    EngineError::corrupt("ALTER TABLE", format!("new definition: {reason}"))
                })?;
                if (&old.db, &old.name) != (&table.db, &table.name) {
                    // `ALTER TABLE ... RENAME` with other operations.
                    if !c.databases.contains(&table.db) {
                        return Err(EngineError::NoSuchDatabase {
                            db: table.db.clone(),
                        });
                    }
                    let key = (table.db.clone(), table.name.clone());
                    if c.name_taken(&table.db, &table.name) {
                        return Err(EngineError::TableExists {
                            table: table.name.clone(),
                        });
                    }
                    c.names.remove(&(old.db.clone(), old.name.clone()));
                    c.names.insert(key, table.id);
                    // Foreign keys follow, as with RENAME TABLE.
                    let mut t = table.clone();
                    rename_generated_fks(&mut t, &old.name);
                    c.tables.insert(table.id, Arc::new(t));
                    c.follow_renamed_parent([&old.db, &old.name], [&table.db, &table.name]);
                } else {
                    c.tables.insert(table.id, Arc::new(table.clone()));
                }
            }
            CatalogChange::RenameTables { renames } => c.rename_tables(renames)?,
            CatalogChange::CreateAccount { .. }
            | CatalogChange::DropAccount { .. }
            | CatalogChange::AlterAccount { .. }
            | CatalogChange::ReplaceAccounts { .. } => c.apply_account_change(change)?,
            CatalogChange::CreateView { .. }
            | CatalogChange::DropViews { .. }
            | CatalogChange::RenameViews { .. } => c.apply_view_change(change)?,
        }
        debug_assert_eq!(c.check_consistent(), Ok(()), "after {change:?}");
        Ok(c)
    }

    /// `RENAME TABLE` of [`apply`](Self::apply): each pair in order (a swap goes through a
    /// temporary name), foreign keys carried along as InnoDB does.
    fn rename_tables(&mut self, renames: &[(TableId, String, String)]) -> Result<(), EngineError> {
        for (id, db, name) in renames {
            let mut t = self.table_for_change(*id)?;
            if !self.databases.contains(db) {
                return Err(EngineError::NoSuchDatabase { db: db.clone() });
            }
            if self.name_taken(db, name) {
                return Err(EngineError::TableExists {
                    table: name.clone(),
                });
            }
            self.names.remove(&(t.db.clone(), t.name.clone()));
            let old = (std::mem::take(&mut t.db), std::mem::take(&mut t.name));
            t.db = db.clone();
            t.name = name.clone();
            rename_generated_fks(&mut t, &old.1);
            self.names.insert((db.clone(), name.clone()), *id);
            self.tables.insert(*id, Arc::new(t));
            self.follow_renamed_parent([&old.0, &old.1], [db, name]);
        }
        Ok(())
    }

    /// RENAME TABLE of a parent: every foreign key that referenced `old` (db, name) references
    /// `new`, as InnoDB renames them.
    fn follow_renamed_parent(&mut self, old: [&str; 2], new: [&str; 2]) {
        let refers = |fk: &ForeignKeyDef| fk.parent_db == old[0] && fk.parent_table == old[1];
        let children: Vec<TableId> = self
            .tables
            .values()
            .filter(|t| t.options.foreign_keys.iter().any(refers))
            .map(|t| t.id)
            .collect();
        for id in children {
            let Some(t) = self.tables.get(&id) else {
                continue;
            };
            let mut t = (**t).clone();
            for fk in t.options.foreign_keys.iter_mut().filter(|f| refers(f)) {
                fk.parent_db = new[0].to_string();
                fk.parent_table = new[1].to_string();
            }
            self.tables.insert(id, Arc::new(t));
        }
    }

    /// `CREATE TABLE` of [`apply`](Self::apply): the database exists, the name and id are new.
    fn add_table(&mut self, table: &TableDef) -> Result<(), EngineError> {
        if !self.databases.contains(&table.db) {
            return Err(EngineError::NoSuchDatabase {
                db: table.db.clone(),
            });
        }
        if self.name_taken(&table.db, &table.name) {
            return Err(EngineError::TableExists {
                table: table.name.clone(),
            });
        }
        if table.id < self.next_table_id || self.tables.contains_key(&table.id) {
            return Err(EngineError::corrupt(
                "CREATE TABLE",
                format!("table id {} reused", table.id),
            ));
        }
        self.next_table_id = table.id + 1;
        self.names
            .insert((table.db.clone(), table.name.clone()), table.id);
        self.tables.insert(table.id, Arc::new(table.clone()));
        Ok(())
    }

    /// The definition a change of `table` starts from (1146 when there is none).
    fn table_for_change(&self, table: TableId) -> Result<TableDef, EngineError> {
        self.tables
            .get(&table)
            .map(|t| (**t).clone())
            .ok_or_else(|| EngineError::NoSuchTable {
                db: String::new(),
                table: format!("#{table}"),
            })
    }

    /// The account changes of [`apply`](Self::apply) (1396 when the account is where it must
    /// not be, or missing).
    fn apply_account_change(&mut self, change: &CatalogChange) -> Result<(), EngineError> {
        let refused = |op: &'static str, user: &str, host: &str| EngineError::AccountOperation {
            op,
            user: user.to_string(),
            host: host.to_string(),
        };
        match change {
            CatalogChange::CreateAccount { account } => {
                let key = (account.user.clone(), account.host.clone());
                if self.accounts.contains_key(&key) {
                    return Err(refused("CREATE USER", &account.user, &account.host));
                }
                self.accounts.insert(key, Arc::new(account.clone()));
            }
            CatalogChange::DropAccount { user, host } => {
                self.accounts
                    .remove(&(user.clone(), host.clone()))
                    .ok_or_else(|| refused("DROP USER", user, host))?;
            }
            CatalogChange::AlterAccount { account } => {
                let key = (account.user.clone(), account.host.clone());
                if !self.accounts.contains_key(&key) {
                    return Err(refused("ALTER USER", &account.user, &account.host));
                }
                self.accounts.insert(key, Arc::new(account.clone()));
            }
            CatalogChange::ReplaceAccounts { accounts } => {
                let mut next = BTreeMap::new();
                for a in accounts {
                    let key = (a.user.clone(), a.host.clone());
                    if next.insert(key, Arc::new(a.clone())).is_some() {
                        return Err(refused("CREATE USER", &a.user, &a.host));
                    }
                }
                self.accounts = next;
            }
            _ => {}
        }
        Ok(())
    }

    /// The view changes of [`apply`](Self::apply): 1049 for a missing database, 1050 for a
    /// name in use, 1146 for a view that is not there.
    fn apply_view_change(&mut self, change: &CatalogChange) -> Result<(), EngineError> {
        let missing = |db: &str, name: &str| EngineError::NoSuchTable {
            db: db.to_string(),
            table: name.to_string(),
        };
        match change {
            CatalogChange::CreateView { replace, view } => {
                if !self.databases.contains(&view.db) {
                    return Err(EngineError::NoSuchDatabase {
                        db: view.db.clone(),
                    });
                }
                let key = (view.db.clone(), view.name.clone());
                if self.names.contains_key(&key) || (!replace && self.views.contains_key(&key)) {
                    return Err(EngineError::TableExists {
                        table: view.name.clone(),
                    });
                }
                view.check_consistent()
                    .map_err(|e| EngineError::corrupt("CREATE VIEW", e))?;
                self.views.insert(key, Arc::new(view.clone()));
            }
            CatalogChange::DropViews { views } => {
                for (db, name) in views {
                    self.views
                        .remove(&(db.clone(), name.clone()))
                        .ok_or_else(|| missing(db, name))?;
                }
            }
            CatalogChange::RenameViews { renames } => {
                for (db, name, new_db, new_name) in renames {
                    let v = self
                        .views
                        .get(&(db.clone(), name.clone()))
                        .cloned()
                        .ok_or_else(|| missing(db, name))?;
                    if !self.databases.contains(new_db) {
                        return Err(EngineError::NoSuchDatabase { db: new_db.clone() });
                    }
                    if self.name_taken(new_db, new_name) {
                        return Err(EngineError::TableExists {
                            table: new_name.clone(),
                        });
                    }
                    self.views.remove(&(db.clone(), name.clone()));
                    let mut v = (*v).clone();
                    v.db = new_db.clone();
                    v.name = new_name.clone();
                    self.views
                        .insert((new_db.clone(), new_name.clone()), Arc::new(v));
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// The invariants of the module docs that one catalog can break (debug assertions).
    fn check_consistent(&self) -> Result<(), String> {
        for ((db, name), v) in &self.views {
            if (db, name) != (&v.db, &v.name) || !self.databases.contains(db) {
                return Err(format!("view {db}.{name} misplaced"));
            }
            if self.names.contains_key(&(db.clone(), name.clone())) {
                return Err(format!("{db}.{name} is both a table and a view"));
            }
            v.check_consistent()?;
        }
        if self.names.len() != self.tables.len() {
            return Err("name map and table map differ".into());
        }
        for (id, t) in &self.tables {
            if *id != t.id || *id >= self.next_table_id {
                return Err(format!(
                    "table id {id} ({}) out of order",
                    t.qualified_name()
                ));
            }
            if !self.databases.contains(&t.db) {
                return Err(format!("table {} without its database", t.qualified_name()));
            }
            if self.names.get(&(t.db.clone(), t.name.clone())) != Some(id) {
                return Err(format!("table {} not named", t.qualified_name()));
            }
            t.check_consistent()
                .map_err(|e| format!("{}: {e}", t.qualified_name()))?;
        }
        Ok(())
    }

    fn remove_table(&mut self, id: TableId) {
        if let Some(t) = self.tables.remove(&id) {
            self.names.remove(&(t.db.clone(), t.name.clone()));
        }
    }

    /// The whole catalog's bytes (inside a checkpoint body).
    pub fn encode(&self, out: &mut Vec<u8>) {
        put_u8(out, CATALOG_FORMAT);
        put_u64(out, self.next_table_id);
        put_var(out, self.databases.len() as u64);
        for d in &self.databases {
            put_str(out, d);
        }
        put_var(out, self.tables.len() as u64);
        for t in self.tables.values() {
            let mut tb = Vec::new();
            t.encode(&mut tb);
            put_bytes(out, &tb);
        }
        put_var(out, self.accounts.len() as u64);
        for a in self.accounts.values() {
            a.encode(out);
        }
        put_var(out, self.views.len() as u64);
        for v in self.views.values() {
            v.encode(out);
        }
    }

    /// Decodes [`encode`](Self::encode)'s bytes and checks their consistency.
    pub fn decode(r: &mut Reader<'_>) -> Result<Catalog, FormatError> {
        let version = r.u8()?;
        if !(1..=CATALOG_FORMAT).contains(&version) {
            return Err(r.err(format!("unknown catalog format {version}")));
        }
        let next_table_id = r.u64()?;
        let nd = r.count(1)?;
        let mut databases = BTreeSet::new();
        for _ in 0..nd {
            databases.insert(r.string()?);
        }
        let nt = r.count(1)?;
        let mut c = Catalog {
            databases,
            tables: BTreeMap::new(),
            names: BTreeMap::new(),
            next_table_id,
            accounts: BTreeMap::new(),
            views: BTreeMap::new(),
        };
        for _ in 0..nt {
            let tb = r.bytes()?;
            let mut tr = Reader::new(tb, "table definition");
            let t = TableDef::decode(&mut tr)?;
            if !tr.is_empty() {
                return Err(r.err("trailing bytes in table definition"));
            }
            if t.id >= next_table_id || !c.databases.contains(&t.db) || c.tables.contains_key(&t.id)
            {
                return Err(r.err(format!(
                    "inconsistent table {}.{} (id {})",
                    t.db, t.name, t.id
                )));
            }
            if c.names
                .insert((t.db.clone(), t.name.clone()), t.id)
                .is_some()
            {
                return Err(r.err(format!("duplicate table name {}.{}", t.db, t.name)));
            }
            c.tables.insert(t.id, Arc::new(t));
        }
        if version >= 2 {
            let na = r.count(3)?;
            for _ in 0..na {
                let a = AccountDef::decode(r, version >= 3)?;
                let key = (a.user.clone(), a.host.clone());
                if c.accounts.insert(key, Arc::new(a)).is_some() {
                    return Err(r.err("duplicate account"));
                }
            }
        }
        if version >= 4 {
            let nv = r.count(8)?;
            for _ in 0..nv {
                let v = ViewDef::decode(r)?;
                let key = (v.db.clone(), v.name.clone());
                if !c.databases.contains(&v.db) || c.names.contains_key(&key) {
                    return Err(r.err(format!("inconsistent view {}.{}", v.db, v.name)));
                }
                if c.views.insert(key, Arc::new(v)).is_some() {
                    return Err(r.err("duplicate view"));
                }
            }
        }
        Ok(c)
    }
}

/// `CREATE INDEX` of [`Catalog::apply`]: `t` with `index` added.
fn with_index(mut t: TableDef, index: &IndexDef) -> Result<TableDef, EngineError> {
    if index.columns.iter().all(|&p| p < t.columns.len()) {
        // As TableDef::add_index: the generated keys the new index serves go first.
        t.drop_generated_keys_served_by(&index.columns);
    }
    if t.index(&index.name).is_some() || index.name.eq_ignore_ascii_case("PRIMARY") {
        return Err(EngineError::DuplicateKeyName {
            index: index.name.clone(),
        });
    }
    if index.columns.is_empty() || index.columns.iter().any(|&p| p >= t.columns.len()) {
        return Err(EngineError::corrupt(
            "CREATE INDEX",
            "index column out of range",
        ));
    }
    if index.id < t.next_index_id {
        return Err(EngineError::corrupt(
            "CREATE INDEX",
            format!("index id {} reused", index.id),
        ));
    }
    t.next_index_id = index.id + 1;
    t.indexes.push(index.clone());
    Ok(t)
}

/// `DROP INDEX` of [`Catalog::apply`]: `t` without index `index_id` (1075 when the
/// AUTO_INCREMENT column would be left without a key).
fn without_index(mut t: TableDef, index_id: u32) -> Result<TableDef, EngineError> {
    let before = t.indexes.len();
    t.indexes.retain(|i| i.id != index_id);
    let kept = |n: &String| t.indexes.iter().any(|i| i.name.eq_ignore_ascii_case(n));
    let generated = t
        .options
        .generated_keys
        .iter()
        .filter(|n| kept(n))
        .cloned()
        .collect();
    t.options.generated_keys = generated;
    if t.indexes.len() == before {
        return Err(EngineError::NoSuchIndex {
            index: format!("#{index_id}"),
        });
    }
    if let Some(a) = t.auto_increment {
        let keyed = t.primary_key.first() == Some(&a)
            || t.indexes.iter().any(|i| i.columns.first() == Some(&a));
        if !keyed {
            return Err(EngineError::WrongAutoKey);
        }
    }
    Ok(t)
}

/// The errors [`SqlType::coerce`] gives for one column.
#[derive(Clone, Copy)]
struct CoerceErrors<'a> {
    column: &'a str,
}

impl CoerceErrors<'_> {
    /// 1366: a value of the wrong kind.
    fn wrong(self, v: &Value) -> EngineError {
        EngineError::WrongValue {
            column: self.column.to_string(),
            value: crate::key::display_values(&[v]),
        }
    }

    /// 1264.
    fn out_of_range(self) -> EngineError {
        EngineError::OutOfRange {
            column: self.column.to_string(),
        }
    }

    /// 1406.
    fn too_long(self) -> EngineError {
        EngineError::DataTooLong {
            column: self.column.to_string(),
        }
    }
}

/// [`SqlType::coerce`] for DECIMAL(precision, scale): canonical text.
fn coerce_decimal(
    err: CoerceErrors<'_>,
    v: Value,
    precision: u8,
    scale: u8,
) -> Result<Value, EngineError> {
    let text = match &v {
        Value::Decimal(s) => s.clone(),
        Value::Int(i) => i.to_string(),
        Value::UInt(u) => u.to_string(),
        Value::Bytes(b) => String::from_utf8(b.to_vec()).map_err(|_| err.wrong(&v))?,
        other => return Err(err.wrong(other)),
    };
    match canonical_decimal(&text, precision, scale) {
        Ok(s) => Ok(Value::Decimal(s)),
        Err(DecimalError::Syntax) => Err(err.wrong(&v)),
        Err(DecimalError::Range) => Err(err.out_of_range()),
    }
}

/// [`SqlType::coerce`] for TIME(fsp): -838:59:59 to 838:59:59, no negative zero.
fn coerce_time(err: CoerceErrors<'_>, v: Value, fsp: u8) -> Result<Value, EngineError> {
    match v {
        Value::Time {
            negative,
            hours,
            minutes,
            seconds,
            micros,
        } if minutes < 60 && seconds < 60 && micros < 1_000_000 => {
            if hours > 838 || (hours == 838 && (minutes, seconds) > (59, 59)) {
                return Err(err.out_of_range());
            }
            let micros = cut_micros(micros, fsp);
            let zero = hours == 0 && minutes == 0 && seconds == 0 && micros == 0;
            Ok(Value::Time {
                negative: negative && !zero,
                hours,
                minutes,
                seconds,
                micros,
            })
        }
        ref other => Err(err.wrong(other)),
    }
}

/// [`SqlType::coerce`] for YEAR: 0 or 1901..=2155.
fn coerce_year(err: CoerceErrors<'_>, v: Value) -> Result<Value, EngineError> {
    let y = match v {
        Value::Year(y) => u64::from(y),
        Value::Int(i) if i >= 0 => i as u64,
        Value::UInt(u) => u,
        ref other => return Err(err.wrong(other)),
    };
    if y == 0 || (1901..=2155).contains(&y) {
        Ok(Value::Year(y as u16))
    } else {
        Err(err.out_of_range())
    }
}

/// MySQL identifiers: 1..=64 characters, no NUL, no trailing space.
pub(crate) fn check_identifier(name: &str) -> Result<(), EngineError> {
    if name.is_empty() || name.chars().count() > 64 || name.contains('\0') || name.ends_with(' ') {
        return Err(EngineError::BadIdentifier {
            name: name.to_string(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn binary_values_are_zero_padded_to_the_column_length() {
        let pad = |t: SqlType, b: &[u8]| t.coerce("c", Value::bytes(b)).unwrap();
        assert_eq!(pad(SqlType::Binary(4), b"ab"), Value::bytes(b"ab\0\0"));
        assert_eq!(pad(SqlType::Binary(2), b""), Value::bytes(vec![0, 0]));
        assert_eq!(pad(SqlType::VarBinary(4), b"ab"), Value::bytes(b"ab"));
        assert!(SqlType::Binary(1).coerce("c", Value::bytes(b"ab")).is_err());
    }

    use super::*;

    #[test]
    fn a_value_of_the_wrong_kind_is_named_as_its_text() {
        let wrong = |t: SqlType, v: Value| t.coerce("c", v).unwrap_err().to_string();
        assert_eq!(
            wrong(SqlType::Date, Value::Double(2.5)),
            "Incorrect value: '2.5' for column 'c' at row 1"
        );
        assert_eq!(
            wrong(SqlType::Int { unsigned: false }, Value::bytes(b"ab")),
            "Incorrect value: 'ab' for column 'c' at row 1"
        );
    }

    fn spec() -> TableSpec {
        TableSpec {
            db: "d".into(),
            name: "t".into(),
            columns: vec![
                ColumnSpec::new("id", SqlType::BigInt { unsigned: true })
                    .not_null()
                    .auto_increment(),
                ColumnSpec::new("name", SqlType::VarChar(20)).default(Value::bytes(b"x")),
                ColumnSpec::new(
                    "amount",
                    SqlType::Decimal {
                        precision: 10,
                        scale: 2,
                    },
                ),
            ],
            primary_key: vec!["id".into()],
            indexes: vec![IndexSpec::new("by_name", &["name"], true)],
        }
    }

    #[test]
    fn decimal_values_are_made_canonical_and_range_checked() {
        let t = SqlType::Decimal {
            precision: 5,
            scale: 2,
        };
        let c = |s: &str| t.coerce("c", Value::Decimal(s.into()));
        assert_eq!(c("1.5").unwrap(), Value::Decimal("1.50".into()));
        assert_eq!(c("-0.004").unwrap(), Value::Decimal("0.00".into()));
        assert_eq!(c("007.005").unwrap(), Value::Decimal("7.01".into()));
        assert_eq!(c("999.994").unwrap(), Value::Decimal("999.99".into()));
        assert_eq!(c("-.5").unwrap(), Value::Decimal("-0.50".into()));
        assert_eq!(c("999.995").unwrap_err().code(), 1264);
        assert_eq!(c("1e3").unwrap_err().code(), 1366);
        assert_eq!(
            SqlType::Decimal {
                precision: 3,
                scale: 0
            }
            .coerce("c", Value::Int(-999))
            .unwrap(),
            Value::Decimal("-999".into())
        );
    }

    #[test]
    fn integers_are_range_checked_per_width_and_signedness() {
        let ti = SqlType::TinyInt { unsigned: false };
        assert_eq!(ti.coerce("c", Value::UInt(127)).unwrap(), Value::Int(127));
        assert_eq!(ti.coerce("c", Value::Int(-129)).unwrap_err().code(), 1264);
        let tu = SqlType::TinyInt { unsigned: true };
        assert_eq!(tu.coerce("c", Value::Int(255)).unwrap(), Value::UInt(255));
        assert_eq!(tu.coerce("c", Value::Int(-1)).unwrap_err().code(), 1264);
        assert_eq!(
            SqlType::VarChar(2)
                .coerce("c", Value::bytes("héé".as_bytes()))
                .unwrap_err()
                .code(),
            1406
        );
        assert!(SqlType::VarChar(3)
            .coerce("c", Value::bytes("héé".as_bytes()))
            .is_ok());
    }

    #[test]
    fn catalog_and_changes_round_trip_through_bytes() {
        let mut cat = Catalog::new();
        cat = cat
            .apply(&CatalogChange::CreateDatabase { name: "d".into() })
            .unwrap();
        let t = TableDef::from_spec(cat.next_table_id(), &spec()).unwrap();
        assert_eq!(t.auto_increment, Some(0));
        let ch = CatalogChange::CreateTable { table: t };
        assert_eq!(CatalogChange::decode(&ch.encode()).unwrap(), ch);
        cat = cat.apply(&ch).unwrap();
        let mut ix = IndexDef {
            id: 2,
            name: "by_amount".into(),
            columns: vec![2],
            unique: false,
            options: IndexOptions::default(),
        };
        // Without options the change keeps the bytes it had before they existed.
        let plain = CatalogChange::CreateIndex {
            table: 1,
            index: ix.clone(),
        };
        let plain_bytes = plain.encode();
        assert_eq!(CatalogChange::decode(&plain_bytes).unwrap(), plain);
        ix.options = IndexOptions {
            using: Some(IndexUsing::Hash),
            comment: "by 'amount'".into(),
        };
        let ch2 = CatalogChange::CreateIndex {
            table: 1,
            index: ix,
        };
        let bytes2 = ch2.encode();
        assert_eq!(bytes2[..plain_bytes.len()], plain_bytes[..]);
        assert_eq!(CatalogChange::decode(&bytes2).unwrap(), ch2);
        cat = cat.apply(&ch2).unwrap();
        let mut bytes = Vec::new();
        cat.encode(&mut bytes);
        let back = Catalog::decode(&mut Reader::new(&bytes, "catalog")).unwrap();
        assert_eq!(back, cat);
        // Every truncation and every single-byte corruption decodes to an error or a value,
        // never a panic.
        for n in 0..bytes.len() {
            assert!(Catalog::decode(&mut Reader::new(&bytes[..n], "catalog")).is_err());
            let mut b = bytes.clone();
            b[n] ^= 0xa5;
            let _ = Catalog::decode(&mut Reader::new(&b, "catalog"));
        }
        let enc = ch.encode();
        for n in 0..enc.len() {
            assert!(CatalogChange::decode(&enc[..n]).is_err());
        }
    }

    #[test]
    fn enum_and_set_are_new_type_tags_with_their_members() {
        let mut sp = spec();
        sp.columns
            .push(ColumnSpec::new("e", SqlType::Enum(3)).members(vec![
                "b".into(),
                "a".into(),
                "c".into(),
            ]));
        sp.columns
            .push(ColumnSpec::new("s", SqlType::Set(2)).members(vec!["x".into(), "y".into()]));
        let t = TableDef::from_spec(1, &sp).unwrap();
        let mut b = Vec::new();
        t.encode(&mut b);
        let mut r = Reader::new(&b, "t");
        assert_eq!(TableDef::decode(&mut r).unwrap(), t);
        assert!(r.is_empty());
        for n in 0..b.len() {
            assert!(TableDef::decode(&mut Reader::new(&b[..n], "t")).is_err());
        }
        // The binlog sees MariaDB's String columns with real types ENUM/SET and pack lengths.
        let metas = t.column_metas();
        let e = &metas[t.column_index("e").unwrap()];
        assert_eq!(e.column_type, ColumnType::String);
        assert_eq!(ColumnMeta::unpack_string_meta(e.meta), (ENUM_REAL_TYPE, 1));
        let s = &metas[t.column_index("s").unwrap()];
        assert_eq!(ColumnMeta::unpack_string_meta(s.meta), (SET_REAL_TYPE, 1));
        assert_eq!(
            ColumnMeta::unpack_string_meta(SqlType::Enum(300).column_meta("e", true).meta),
            (ENUM_REAL_TYPE, 2)
        );
        assert_eq!(set_pack_length(33), 8);
        assert_eq!(set_pack_length(17), 3);
        // Stored values: the index (0..=count) and the bit set.
        assert_eq!(
            SqlType::Enum(3).coerce("e", Value::Int(3)).unwrap(),
            Value::UInt(3)
        );
        assert!(SqlType::Enum(3).coerce("e", Value::UInt(4)).is_err());
        assert!(SqlType::Set(2).coerce("s", Value::UInt(4)).is_err());
        assert_eq!(
            SqlType::Set(64).coerce("s", Value::UInt(u64::MAX)).unwrap(),
            Value::UInt(u64::MAX)
        );
        // Members must match the type's count.
        let bad = ColumnSpec::new("e", SqlType::Enum(2)).members(vec!["a".into()]);
        assert!(ColumnDef::from_spec(&bad).is_err());
    }

    #[test]
    fn bit_is_a_new_type_tag_logged_as_mariadbs_bit() {
        let mut b = Vec::new();
        SqlType::Bit(10).encode(&mut b);
        assert_eq!(b, [30, 10, 0]);
        assert_eq!(
            SqlType::decode(&mut Reader::new(&b, "t")).unwrap(),
            SqlType::Bit(10)
        );
        assert!(SqlType::decode(&mut Reader::new(&[30, 65, 0], "t")).is_err());
        // MariaDB's Table_map metadata: BIT(3) 3, BIT(10) 258, BIT(64) 2048.
        for (m, meta) in [(3, 3), (10, 258), (64, 2048)] {
            let c = SqlType::Bit(m).column_meta("b", true);
            assert_eq!((c.column_type, c.meta), (ColumnType::Bit, meta));
        }
        assert_eq!(
            SqlType::Bit(3).coerce("b", Value::Int(7)).unwrap(),
            Value::UInt(7)
        );
        assert_eq!(
            SqlType::Bit(3)
                .coerce("b", Value::UInt(8))
                .unwrap_err()
                .code(),
            1406
        );
        assert_eq!(
            SqlType::Bit(64).coerce("b", Value::UInt(u64::MAX)).unwrap(),
            Value::UInt(u64::MAX)
        );
    }

    #[test]
    fn json_is_a_new_type_tag_logged_as_longtext() {
        // A new tag: definitions written before it never hold tag 27, so they decode as before.
        let mut b = Vec::new();
        SqlType::Json.encode(&mut b);
        assert_eq!(b, [27, 0, 0]);
        assert_eq!(
            SqlType::decode(&mut Reader::new(&b, "t")).unwrap(),
            SqlType::Json
        );
        let mut old = Vec::new();
        SqlType::LongText.encode(&mut old);
        assert_eq!(old, [16, 0, 0]);
        assert_eq!(
            SqlType::Json.column_meta("j", true),
            SqlType::LongText.column_meta("j", true)
        );
        let mut sp = spec();
        sp.columns
            .push(ColumnSpec::new("j", SqlType::Json).collation(Collation::DEFAULT));
        let t = TableDef::from_spec(1, &sp).unwrap();
        let j = &t.columns[t.column_index("j").unwrap()];
        assert_eq!(j.collation, Some(Collation::Utf8mb4Bin));
        let ch = CatalogChange::CreateTable { table: t };
        assert_eq!(CatalogChange::decode(&ch.encode()).unwrap(), ch);
    }

    #[test]
    fn table_attributes_extension_round_trips_and_old_definitions_still_decode() {
        let plain = TableDef::from_spec(1, &spec()).unwrap();
        let mut old = Vec::new();
        plain.encode(&mut old);
        // A definition without attributes has the bytes of the format before the extension.
        let back = TableDef::decode(&mut Reader::new(&old, "t")).unwrap();
        assert_eq!(back, plain);
        assert!(back.columns.iter().all(|c| c.extras.is_plain()));
        let mut t = plain.clone();
        t.columns[1].extras = ColumnExtras {
            default_now: Some(3),
            on_update_now: Some(0),
            comment: "the name".into(),
            display_width: Some(1),
            float_digits: None,
        };
        t.columns[0].extras.float_digits = Some((7, 3));
        t.options = TableOptions {
            comment: "tc".into(),
            auto_increment: 42,
            ..Default::default()
        };
        let mut new = Vec::new();
        t.encode(&mut new);
        assert!(new.starts_with(&old) && new.len() > old.len());
        let mut r = Reader::new(&new, "t");
        assert_eq!(TableDef::decode(&mut r).unwrap(), t);
        assert!(r.is_empty());
        let ch = CatalogChange::CreateTable { table: t };
        assert_eq!(CatalogChange::decode(&ch.encode()).unwrap(), ch);
        let mut bad = new.clone();
        bad[old.len()] = 9;
        assert!(TableDef::decode(&mut Reader::new(&bad, "t")).is_err());
        for n in old.len() + 1..new.len() {
            assert!(TableDef::decode(&mut Reader::new(&new[..n], "t")).is_err());
        }
    }

    #[test]
    fn generated_keys_round_trip_and_go_when_another_key_serves_them() {
        let mut sp = spec();
        sp.indexes
            .push(IndexSpec::new("amount", &["amount"], false));
        let mut t = TableDef::from_spec(1, &sp).unwrap();
        let mut old = Vec::new();
        t.encode(&mut old);
        // Definitions written before the section existed decode without generated keys.
        let back = TableDef::decode(&mut Reader::new(&old, "t")).unwrap();
        assert!(back.options.generated_keys.is_empty());
        t.options.generated_keys = vec!["amount".into()];
        let mut new = Vec::new();
        t.encode(&mut new);
        assert!(new.starts_with(&old) && new.len() > old.len());
        let mut r = Reader::new(&new, "t");
        assert_eq!(TableDef::decode(&mut r).unwrap(), t);
        assert!(r.is_empty());
        // Nothing starts with the generated key's columns but itself: it stays.
        let mut same = t.clone();
        assert!(same.drop_covered_generated_keys().is_empty());
        assert_eq!(same, t);
        // CREATE INDEX over (amount, name): the generated `amount` goes with the change.
        let ix = IndexDef {
            id: t.next_index_id,
            name: "ix".into(),
            columns: vec![2, 1],
            unique: false,
            options: IndexOptions::default(),
        };
        let after = with_index(t.clone(), &ix).unwrap();
        let names: Vec<&str> = after.indexes.iter().map(|i| i.name.as_str()).collect();
        assert_eq!(names, ["by_name", "ix"]);
        assert!(after.options.generated_keys.is_empty());
        // A key of the user's own over the same columns is never dropped.
        let mut user = t.clone();
        user.options.generated_keys.clear();
        let kept = with_index(user, &ix).unwrap();
        assert_eq!(kept.indexes.len(), 3);
        // A key named as the generated one it serves takes its name (TableDef::add_index).
        let mut named = t.clone();
        let ix = named
            .add_index(&IndexSpec::new("amount", &["amount", "id"], false))
            .unwrap();
        assert_eq!(named.indexes.last(), Some(&ix));
        assert_eq!(named.indexes.len(), 2);
        assert!(named.options.generated_keys.is_empty());
        // The primary key or another index covering it drops it in a rebuilt definition.
        let mut rebuilt = t.clone();
        rebuilt.primary_key = vec![2, 0];
        assert_eq!(
            rebuilt.drop_covered_generated_keys(),
            [t.index("amount").unwrap().id]
        );
        // DROP INDEX of the generated key forgets its name.
        let gone = without_index(t.clone(), t.index("amount").unwrap().id).unwrap();
        assert!(gone.options.generated_keys.is_empty());
    }

    fn constraints() -> (Vec<ForeignKeyDef>, Vec<CheckDef>) {
        let fk = ForeignKeyDef {
            name: "t_ibfk_1".into(),
            columns: vec!["name".into()],
            parent_db: "other".into(),
            parent_table: "p".into(),
            parent_columns: vec!["k".into()],
            on_delete: FkAction::Cascade,
            on_update: FkAction::NoAction,
        };
        let ck = CheckDef {
            name: "CONSTRAINT_1".into(),
            column: None,
            expr: "`id` > 0".into(),
        };
        let col = CheckDef {
            name: "name".into(),
            column: Some("name".into()),
            expr: "`name` <> ''".into(),
        };
        (vec![fk], vec![ck, col])
    }

    #[test]
    fn constraints_section_round_trips_after_old_bytes() {
        let plain = TableDef::from_spec(1, &spec()).unwrap();
        let mut old = Vec::new();
        plain.encode(&mut old);
        // Constraints alone: the section follows the old bytes directly.
        let mut t = plain.clone();
        (t.options.foreign_keys, t.options.checks) = constraints();
        let mut new = Vec::new();
        t.encode(&mut new);
        assert!(new.starts_with(&old));
        assert_eq!(new[old.len()], EXT_CONSTRAINTS);
        let mut r = Reader::new(&new, "t");
        assert_eq!(TableDef::decode(&mut r).unwrap(), t);
        assert!(r.is_empty());
        for n in old.len() + 1..new.len() {
            assert!(TableDef::decode(&mut Reader::new(&new[..n], "t")).is_err());
        }
        // Attributes then constraints; the attributes' bytes (an older definition) still
        // decode alone, without constraints.
        let mut a = plain.clone();
        a.options.comment = "tc".into();
        let mut attrs = Vec::new();
        a.encode(&mut attrs);
        let back = TableDef::decode(&mut Reader::new(&attrs, "t")).unwrap();
        assert_eq!(back, a);
        assert!(back.options.foreign_keys.is_empty() && back.options.checks.is_empty());
        (a.options.foreign_keys, a.options.checks) = constraints();
        let mut both = Vec::new();
        a.encode(&mut both);
        assert!(both.starts_with(&attrs));
        assert_eq!(TableDef::decode(&mut Reader::new(&both, "t")).unwrap(), a);
        let ch = CatalogChange::CreateTable { table: a.clone() };
        assert_eq!(CatalogChange::decode(&ch.encode()).unwrap(), ch);
        // Sections out of order or repeated are refused.
        let mut twice = new.clone();
        twice.extend_from_slice(&new[old.len()..]);
        assert!(TableDef::decode(&mut Reader::new(&twice, "t")).is_err());
        let mut bad = new.clone();
        bad[old.len() + 2] = 0xff; // a name's length past the end
        assert!(TableDef::decode(&mut Reader::new(&bad, "t")).is_err());
    }

    #[test]
    fn alter_constraints_round_trips_and_changes_only_constraints() {
        let c = Catalog::new()
            .apply(&CatalogChange::CreateDatabase { name: "d".into() })
            .unwrap();
        let t = TableDef::from_spec(c.next_table_id(), &spec()).unwrap();
        let c = c
            .apply(&CatalogChange::CreateTable { table: t.clone() })
            .unwrap();
        let mut with = t.clone();
        (with.options.foreign_keys, with.options.checks) = constraints();
        let ch = CatalogChange::AlterConstraints {
            index: None,
            table: with.clone(),
        };
        let enc = ch.encode();
        assert_eq!(enc[1], TAG_ALTER_CONSTRAINTS);
        assert_eq!(CatalogChange::decode(&enc).unwrap(), ch);
        let c2 = c.apply(&ch).unwrap();
        assert_eq!(**c2.table(t.id).unwrap(), with);
        // Back without them.
        let c3 = c2
            .apply(&CatalogChange::AlterConstraints {
                index: None,
                table: t.clone(),
            })
            .unwrap();
        assert_eq!(**c3.table(t.id).unwrap(), t);
        // With the index the foreign key needs.
        let mut indexed = with.clone();
        let ix = indexed
            .add_index(&IndexSpec::new("name_fk", &["name"], false))
            .unwrap();
        let ch = CatalogChange::AlterConstraints {
            index: Some(ix),
            table: indexed.clone(),
        };
        assert_eq!(CatalogChange::decode(&ch.encode()).unwrap(), ch);
        assert_eq!(**c.apply(&ch).unwrap().table(t.id).unwrap(), indexed);
        // Anything else changed is refused.
        let mut other = with.clone();
        other.options.comment = "x".into();
        let bad = CatalogChange::AlterConstraints {
            index: None,
            table: other,
        };
        assert!(c.apply(&bad).is_err());
        let no_index = CatalogChange::AlterConstraints {
            index: None,
            table: indexed,
        };
        assert!(c.apply(&no_index).is_err());
    }

    #[test]
    fn add_column_round_trips_and_only_appends() {
        let c = Catalog::new()
            .apply(&CatalogChange::CreateDatabase { name: "d".into() })
            .unwrap();
        let mut sp = spec();
        sp.name = "a".into();
        let t = TableDef::from_spec(1, &sp).unwrap();
        let c = c
            .apply(&CatalogChange::CreateTable { table: t.clone() })
            .unwrap();
        let mut wider = t.clone();
        let mut col = ColumnSpec::new("extra", SqlType::Int { unsigned: false });
        col.default = Some(Value::Int(7));
        wider.columns.push(ColumnDef::from_spec(&col).unwrap());
        let add = CatalogChange::AddColumn {
            table: wider.clone(),
            fill: Value::Int(7),
        };
        assert_eq!(CatalogChange::decode(&add.encode()).unwrap(), add);
        let drop = CatalogChange::DropColumn {
            table: t.clone(),
            position: t.columns.len() as u32,
        };
        assert_eq!(CatalogChange::decode(&drop.encode()).unwrap(), drop);
        let c2 = c.apply(&add).unwrap();
        assert_eq!(
            c2.table(1).map(|t| t.columns.len()),
            Some(t.columns.len() + 1)
        );
        // A definition that is not the old one plus a last column is refused.
        let mut other = wider;
        other.columns.swap(0, 1);
        let bad = CatalogChange::AddColumn {
            table: other,
            fill: Value::Null,
        };
        assert!(c.apply(&bad).is_err());
    }

    #[test]
    fn alter_table_round_trips_and_checks_its_sources() {
        let c = Catalog::new()
            .apply(&CatalogChange::CreateDatabase { name: "d".into() })
            .unwrap();
        let mut sp = spec();
        sp.name = "a".into();
        let t = TableDef::from_spec(1, &sp).unwrap();
        let c = c
            .apply(&CatalogChange::CreateTable { table: t.clone() })
            .unwrap();
        // A column first, the old ones after it.
        let mut new = t.clone();
        let col = ColumnSpec::new("first", SqlType::Int { unsigned: false });
        new.columns.insert(0, ColumnDef::from_spec(&col).unwrap());
        new.primary_key = new.primary_key.iter().map(|p| p + 1).collect();
        for ix in &mut new.indexes {
            ix.columns = ix.columns.iter().map(|p| p + 1).collect();
        }
        new.auto_increment = new.auto_increment.map(|p| p + 1);
        let mut sources = vec![ColumnSource::Fill(Value::Int(3))];
        sources.extend((0..t.columns.len()).map(ColumnSource::Old));
        let ch = CatalogChange::AlterTable {
            strict: true,
            auto_increment: None,
            sources: sources.clone(),
            table: new.clone(),
        };
        let bytes = ch.encode();
        assert_eq!(bytes[1], 30);
        let loose = CatalogChange::AlterTable {
            strict: false,
            auto_increment: Some(100),
            sources: sources.clone(),
            table: new.clone(),
        };
        assert_eq!(CatalogChange::decode(&loose.encode()).unwrap(), loose);
        let mut numbered = sources.clone();
        numbered[0] = ColumnSource::Sequence;
        let seq = CatalogChange::AlterTable {
            strict: true,
            auto_increment: None,
            sources: numbered,
            table: new.clone(),
        };
        assert_eq!(CatalogChange::decode(&seq.encode()).unwrap(), seq);
        assert_eq!(CatalogChange::decode(&bytes).unwrap(), ch);
        let c2 = c.apply(&ch).unwrap();
        assert_eq!(c2.table(1).unwrap().columns[0].name, "first");
        // A source past the old columns, or one source too few, is refused.
        let mut past = sources.clone();
        past[1] = ColumnSource::Old(t.columns.len());
        let bad = CatalogChange::AlterTable {
            strict: true,
            auto_increment: None,
            sources: past,
            table: new.clone(),
        };
        assert!(c.apply(&bad).is_err());
        let bad = CatalogChange::AlterTable {
            strict: true,
            auto_increment: None,
            sources: sources[1..].to_vec(),
            table: new,
        };
        assert!(c.apply(&bad).is_err());
        // An unknown source kind does not decode.
        let mut odd = bytes.clone();
        odd[7] = 7;
        assert!(CatalogChange::decode(&odd).is_err());
        let mut odd = bytes.clone();
        odd[2] = 4;
        assert!(CatalogChange::decode(&odd).is_err());
    }

    #[test]
    fn renames_round_trip_and_apply_in_order_all_or_none() {
        let mut c = Catalog::new()
            .apply(&CatalogChange::CreateDatabase { name: "d".into() })
            .unwrap();
        for (id, name) in [(1, "a"), (2, "b")] {
            let mut sp = spec();
            sp.name = name.into();
            let table = TableDef::from_spec(id, &sp).unwrap();
            c = c.apply(&CatalogChange::CreateTable { table }).unwrap();
        }
        let swap = CatalogChange::RenameTables {
            renames: vec![
                (1, "d".into(), "t".into()),
                (2, "d".into(), "a".into()),
                (1, "d".into(), "b".into()),
            ],
        };
        assert_eq!(CatalogChange::decode(&swap.encode()).unwrap(), swap);
        let c2 = c.apply(&swap).unwrap();
        assert_eq!(c2.table_by_name("d", "a").map(|t| t.id), Some(2));
        assert_eq!(c2.table_by_name("d", "b").map(|t| t.id), Some(1));
        assert!(c2.table_by_name("d", "t").is_none());
        // A pair onto a name in use fails the whole change.
        let clash = CatalogChange::RenameTables {
            renames: vec![(1, "d".into(), "x".into()), (2, "d".into(), "x".into())],
        };
        assert!(c.apply(&clash).is_err());
        assert_eq!(c.table_by_name("d", "a").map(|t| t.id), Some(1));
    }

    /// RENAME TABLE of a parent and of a child, swaps included: the references follow the
    /// parent, the child's `<old>_ibfk_<n>` constraints take its new name, others keep theirs.
    #[test]
    fn renames_carry_foreign_keys_along_as_innodb() {
        let mut c = Catalog::new()
            .apply(&CatalogChange::CreateDatabase { name: "d".into() })
            .unwrap();
        let fk = |name: &str, parent: &str| ForeignKeyDef {
            name: name.into(),
            columns: vec!["name".into()],
            parent_db: "d".into(),
            parent_table: parent.into(),
            parent_columns: vec!["name".into()],
            on_delete: FkAction::Cascade,
            on_update: FkAction::Restrict,
        };
        for (id, name) in [(1, "p"), (2, "c")] {
            let mut sp = spec();
            sp.name = name.into();
            let mut table = TableDef::from_spec(id, &sp).unwrap();
            if id == 2 {
                table.options.foreign_keys = vec![fk("c_ibfk_1", "p"), fk("mine", "p")];
            }
            c = c.apply(&CatalogChange::CreateTable { table }).unwrap();
        }
        let rename = |c: &Catalog, renames: Vec<(TableId, &str)>| {
            let renames = renames
                .into_iter()
                .map(|(id, n)| (id, "d".to_string(), n.to_string()))
                .collect();
            c.apply(&CatalogChange::RenameTables { renames }).unwrap()
        };
        let names = |c: &Catalog| -> Vec<(String, String)> {
            let t = c.table(2).unwrap();
            let fks = t.options.foreign_keys.iter();
            fks.map(|f| (f.name.clone(), f.parent_table.clone()))
                .collect()
        };
        let c2 = rename(&c, vec![(1, "p2"), (2, "c2")]);
        let want =
            |a: &str, p: &str| vec![(a.to_string(), p.to_string()), ("mine".into(), p.into())];
        assert_eq!(names(&c2), want("c2_ibfk_1", "p2"));
        // A swap through a temporary name ends where it began.
        let c3 = rename(&c2, vec![(1, "tmp"), (2, "p2"), (1, "c2")]);
        assert_eq!(c3.table_by_name("d", "p2").map(|t| t.id), Some(2));
        // Kept in order by name, as SHOW CREATE TABLE lists them.
        let got = names(&c3);
        assert_eq!(got[0], ("mine".to_string(), "c2".to_string()));
        assert_eq!(got[1], ("p2_ibfk_1".to_string(), "c2".to_string()));
    }

    #[test]
    fn column_collations_round_trip_and_old_bytes_read_as_utf8mb4_bin() {
        let mut sp = spec();
        sp.columns[1] =
            ColumnSpec::new("name", SqlType::VarChar(20)).collation(Collation::Utf8mb4UnicodeCi);
        sp.columns.push(ColumnSpec::new("t", SqlType::Text));
        let t = TableDef::from_spec(1, &sp).unwrap();
        assert_eq!(t.columns[1].collation, Some(Collation::Utf8mb4UnicodeCi));
        assert_eq!(t.columns[3].collation, Some(Collation::Utf8mb4GeneralCi));
        assert_eq!(t.columns[2].collation, None);
        let ch = CatalogChange::CreateTable { table: t.clone() };
        assert_eq!(CatalogChange::decode(&ch.encode()).unwrap(), ch);
        // Bytes written before collations (no flag 4 on any column) still decode; their text
        // columns keep the byte order they were built with.
        let mut old = t;
        for c in &mut old.columns {
            c.collation = None;
        }
        let bytes = CatalogChange::CreateTable { table: old }.encode();
        let CatalogChange::CreateTable { table: back } = CatalogChange::decode(&bytes).unwrap()
        else {
            panic!("not a CREATE TABLE");
        };
        assert_eq!(back.columns[1].collation, Some(Collation::Utf8mb4Bin));
        assert_eq!(back.columns[3].collation, Some(Collation::Utf8mb4Bin));
        assert_eq!(back.columns[0].collation, None);
        // A binary collation on a text column is refused.
        let mut bad = spec();
        bad.columns[1] = ColumnSpec::new("name", SqlType::VarChar(20)).collation(Collation::Binary);
        assert!(TableDef::from_spec(1, &bad).is_err());
    }

    fn view(db: &str, name: &str) -> ViewDef {
        ViewDef {
            db: db.into(),
            name: name.into(),
            columns: vec!["id".into(), "n".into()],
            query: "select id, name as n from t where id > 1".into(),
            query_db: "d".into(),
            algorithm: crate::view::ViewAlgorithm::Undefined,
            definer: ("root".into(), "localhost".into()),
            invoker: false,
            check: crate::view::ViewCheck::None,
        }
    }

    #[test]
    fn views_share_the_table_namespace_and_survive_the_catalog_bytes() {
        let mut cat = Catalog::new()
            .apply(&CatalogChange::CreateDatabase { name: "d".into() })
            .unwrap();
        let t = TableDef::from_spec(cat.next_table_id(), &spec()).unwrap();
        cat = cat.apply(&CatalogChange::CreateTable { table: t }).unwrap();
        let create = |replace, v| CatalogChange::CreateView { replace, view: v };
        // A view named like a table, or like another view without OR REPLACE: 1050.
        let err = cat.apply(&create(true, view("d", "t"))).unwrap_err();
        assert_eq!(err.code(), 1050);
        cat = cat.apply(&create(false, view("d", "v"))).unwrap();
        assert_eq!(
            cat.apply(&create(false, view("d", "v")))
                .unwrap_err()
                .code(),
            1050
        );
        let mut v2 = view("d", "v");
        v2.query = "select 1 as id, 2 as n".into();
        cat = cat.apply(&create(true, v2.clone())).unwrap();
        assert_eq!(cat.view("d", "v").unwrap().query, v2.query);
        // A table cannot take a view's name, by CREATE or RENAME.
        let mut sp = spec();
        sp.name = "v".into();
        let t2 = TableDef::from_spec(cat.next_table_id(), &sp).unwrap();
        let err = cat
            .apply(&CatalogChange::CreateTable { table: t2 })
            .unwrap_err();
        assert_eq!(err.code(), 1050);
        let ren = CatalogChange::RenameTables {
            renames: vec![(1, "d".into(), "v".into())],
        };
        assert_eq!(cat.apply(&ren).unwrap_err().code(), 1050);
        // Changes and the whole catalog round trip.
        let rv = CatalogChange::RenameViews {
            renames: vec![("d".into(), "v".into(), "d".into(), "w".into())],
        };
        let dv = CatalogChange::DropViews {
            views: vec![("d".into(), "w".into())],
        };
        for ch in [create(true, v2.clone()), rv.clone(), dv.clone()] {
            let enc = ch.encode();
            assert_eq!(
                enc[1],
                match ch {
                    CatalogChange::CreateView { .. } => 50,
                    CatalogChange::DropViews { .. } => 51,
                    _ => 52,
                }
            );
            assert_eq!(CatalogChange::decode(&enc).unwrap(), ch);
            for n in 0..enc.len() {
                assert!(CatalogChange::decode(&enc[..n]).is_err());
            }
        }
        let mut bytes = Vec::new();
        cat.encode(&mut bytes);
        let back = Catalog::decode(&mut Reader::new(&bytes, "catalog")).unwrap();
        assert_eq!(back, cat);
        assert_eq!(back.views_in("d").len(), 1);
        cat = cat.apply(&rv).unwrap();
        assert!(cat.view("d", "v").is_none());
        assert_eq!(cat.view("d", "w").unwrap().name, "w");
        cat = cat.apply(&dv).unwrap();
        assert_eq!(cat.views().count(), 0);
        assert_eq!(cat.apply(&dv).unwrap_err().code(), 1146);
        // DROP DATABASE takes its views with it.
        cat = cat.apply(&create(false, view("d", "x"))).unwrap();
        cat = cat
            .apply(&CatalogChange::DropDatabase { name: "d".into() })
            .unwrap();
        assert_eq!(cat.views().count(), 0);
    }

    #[test]
    fn format_3_catalog_bytes_decode_without_views() {
        // Format 3, as written before views: version, next table id, databases, tables,
        // accounts, and nothing after them.
        let mut old = Vec::new();
        put_u8(&mut old, 3);
        put_u64(&mut old, 7);
        put_var(&mut old, 1);
        put_str(&mut old, "d");
        put_var(&mut old, 0);
        put_var(&mut old, 0);
        let mut r = Reader::new(&old, "catalog");
        let cat = Catalog::decode(&mut r).unwrap();
        assert!(r.is_empty());
        assert!(cat.has_database("d"));
        assert_eq!(cat.next_table_id(), 7);
        assert_eq!(cat.views().count(), 0);
        // Today's bytes of the same catalog: format 4, with an empty view list.
        let mut now = Vec::new();
        cat.encode(&mut now);
        assert_eq!(now[0], 4);
        assert_eq!(&now[1..], &[&old[1..], &[0u8][..]].concat()[..]);
    }

    #[test]
    fn format_1_account_changes_decode_as_plain_native_password_accounts() {
        let acc = AccountDef {
            user: "root".into(),
            host: "localhost".into(),
            auth_hash: Vec::new(),
            auth: AuthMethods {
                unix_socket: true,
                no_password_login: true,
            },
            grants: Vec::new(),
        };
        let enc = CatalogChange::CreateAccount {
            account: acc.clone(),
        }
        .encode();
        // Format 2: version, kind, user, host, hash (empty), flags byte 3, no grants.
        let flags_at = enc.len() - 2;
        assert_eq!((enc[0], enc[flags_at]), (2, 3));
        let mut old = enc.clone();
        old[0] = 1;
        old.remove(flags_at);
        let CatalogChange::CreateAccount { account } = CatalogChange::decode(&old).unwrap() else {
            panic!("not a CreateAccount");
        };
        assert_eq!(account.auth, AuthMethods::default());
        assert_eq!(account.user, acc.user);
        // Unknown flags are refused, not ignored.
        let mut bad = enc.clone();
        bad[flags_at] = 4;
        assert!(CatalogChange::decode(&bad).is_err());
    }

    #[test]
    fn replace_accounts_makes_the_accounts_exactly_the_given_ones() {
        let acc = |user: &str, host: &str, hash: u8| AccountDef {
            user: user.into(),
            host: host.into(),
            auth_hash: vec![hash; 20],
            auth: AuthMethods::default(),
            grants: vec![GrantDef {
                scope: "app".into(),
                privileges: 3,
            }],
        };
        let cat = Catalog::new()
            .apply(&CatalogChange::CreateAccount {
                account: acc("old", "%", 1),
            })
            .unwrap()
            .apply(&CatalogChange::CreateAccount {
                account: acc("root", "localhost", 2),
            })
            .unwrap();
        let change = CatalogChange::ReplaceAccounts {
            accounts: vec![acc("root", "localhost", 5), acc("u1", "%", 6)],
        };
        let enc = change.encode();
        assert_eq!(CatalogChange::decode(&enc).unwrap(), change);
        for n in 0..enc.len() {
            assert!(CatalogChange::decode(&enc[..n]).is_err());
        }
        let next = cat.apply(&change).unwrap();
        assert!(next.account("old", "%").is_none());
        assert_eq!(
            next.account("root", "localhost").unwrap().auth_hash,
            vec![5; 20]
        );
        assert_eq!(**next.account("u1", "%").unwrap(), acc("u1", "%", 6));
        // The same (user, host) twice is refused (1396) and changes nothing.
        let twice = CatalogChange::ReplaceAccounts {
            accounts: vec![acc("u1", "%", 1), acc("u1", "%", 2)],
        };
        assert_eq!(cat.apply(&twice).unwrap_err().code(), 1396);
        // An empty list leaves no account.
        let none = cat
            .apply(&CatalogChange::ReplaceAccounts { accounts: vec![] })
            .unwrap();
        assert!(none.account("root", "localhost").is_none());
    }

    #[test]
    fn account_changes_round_trip_and_validate_like_mysql() {
        let acc = AccountDef {
            user: "app".into(),
            host: "%".into(),
            auth_hash: vec![3; 20],
            auth: AuthMethods {
                unix_socket: true,
                no_password_login: false,
            },
            grants: vec![GrantDef {
                scope: "*".into(),
                privileges: 1 << 18,
            }],
        };
        let changes = [
            CatalogChange::CreateAccount {
                account: acc.clone(),
            },
            CatalogChange::AlterAccount {
                account: acc.clone(),
            },
            CatalogChange::DropAccount {
                user: "app".into(),
                host: "%".into(),
            },
        ];
        for ch in &changes {
            let enc = ch.encode();
            assert_eq!(&CatalogChange::decode(&enc).unwrap(), ch);
            for n in 0..enc.len() {
                assert!(CatalogChange::decode(&enc[..n]).is_err());
            }
        }
        let cat = Catalog::new().apply(&changes[0]).unwrap();
        assert_eq!(cat.apply(&changes[0]).unwrap_err().code(), 1396);
        assert_eq!(cat.account("app", "%").map(|a| (**a).clone()), Some(acc));
        let mut bytes = Vec::new();
        cat.encode(&mut bytes);
        assert_eq!(
            Catalog::decode(&mut Reader::new(&bytes, "catalog")).unwrap(),
            cat
        );
        let cat = cat.apply(&changes[2]).unwrap();
        assert!(cat.account("app", "%").is_none());
        assert_eq!(cat.apply(&changes[2]).unwrap_err().code(), 1396);
        assert_eq!(cat.apply(&changes[1]).unwrap_err().code(), 1396);
        // A format-1 catalog (written before accounts existed) still decodes.
        let mut old = Vec::new();
        put_u8(&mut old, 1);
        put_u64(&mut old, 1);
        put_var(&mut old, 0);
        put_var(&mut old, 0);
        let c = Catalog::decode(&mut Reader::new(&old, "catalog")).unwrap();
        assert_eq!(c.accounts().count(), 0);
    }

    #[test]
    fn ddl_validation_matches_mysql_errors() {
        let cat = Catalog::new();
        let t = TableDef::from_spec(1, &spec()).unwrap();
        assert_eq!(
            cat.apply(&CatalogChange::CreateTable { table: t.clone() })
                .unwrap_err()
                .code(),
            1049
        );
        let cat = cat
            .apply(&CatalogChange::CreateDatabase { name: "d".into() })
            .unwrap();
        assert_eq!(
            cat.apply(&CatalogChange::CreateDatabase { name: "d".into() })
                .unwrap_err()
                .code(),
            1007
        );
        let cat = cat
            .apply(&CatalogChange::CreateTable { table: t.clone() })
            .unwrap();
        let mut t2 = t.clone();
        t2.id = 2;
        assert_eq!(
            cat.apply(&CatalogChange::CreateTable { table: t2 })
                .unwrap_err()
                .code(),
            1050
        );
        let mut s = spec();
        s.primary_key.clear();
        // Without a key the AUTO_INCREMENT column is refused; without it the table is fine
        // (no primary key) and its definition survives encoding.
        assert_eq!(TableDef::from_spec(3, &s).unwrap_err().code(), 1075);
        s.columns[0] = ColumnSpec::new("id", SqlType::BigInt { unsigned: true });
        let nopk = TableDef::from_spec(3, &s).unwrap();
        assert!(nopk.primary_key.is_empty() && nopk.columns[0].nullable);
        let change = CatalogChange::CreateTable {
            table: nopk.clone(),
        };
        let back = CatalogChange::decode(&change.encode()).unwrap();
        assert_eq!(back, change);
        let mut s = spec();
        s.primary_key = vec!["name".into()];
        assert_eq!(TableDef::from_spec(3, &s).unwrap_err().code(), 1075);
        let cat = cat
            .apply(&CatalogChange::DropDatabase { name: "d".into() })
            .unwrap();
        assert!(cat.table(1).is_none());
        assert_eq!(cat.tables().count(), 0);
    }
}
