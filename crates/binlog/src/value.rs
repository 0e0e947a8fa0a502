//! Column types and values as the binlog carries them.
//!
//! [`ColumnType`] is MariaDB's `enum_field_types` code as written in a Table_map event;
//! [`ColumnMeta`] is one column of a Table_map (type, metadata word, signedness, nullability);
//! [`Value`] is one field of a row image. The engine stores rows as `Vec<Value>` and the row
//! image codec ([`crate::rows`], used by `event::rows`) turns them into MariaDB's packed binary forms and back.
//!
//! Mapping of SQL types (what the engine's catalog uses):
//!
//! | SQL type | `ColumnType` | metadata word |
//! |---|---|---|
//! | TINYINT/SMALLINT/MEDIUMINT/INT/BIGINT | Tiny/Short/Int24/Long/LongLong | 0 |
//! | FLOAT, DOUBLE | Float (4), Double (8) | byte size |
//! | DECIMAL(p,s) | NewDecimal | `p << 8 \| s` (written as two bytes p, s) |
//! | CHAR(n), BINARY(n) | String | real type 254 and max byte length, MariaDB's packing |
//! | VARCHAR(n), VARBINARY(n) | VarChar | max byte length |
//! | TINYBLOB/BLOB/MEDIUMBLOB/LONGBLOB and TEXT kinds | Blob | length bytes 1, 2, 3, 4 |
//! | DATE | Date | 0 |
//! | DATETIME(fsp) | DateTime2 | fsp |
//! | TIMESTAMP(fsp) | Timestamp2 | fsp |
//! | TIME(fsp) | Time2 | fsp |
//! | YEAR | Year | 0 (always unsigned in the SIGNEDNESS metadata) |
//! | BIT(M) | Bit | `M % 8 \| (M / 8) << 8`; values are `UInt` |
//! | ENUM, SET | String (real type 247/248) | `pack_string_meta(247 or 248, pack length)`; values are `UInt` |
//! | GEOMETRY | Geometry | length bytes (4) |
//! | NULL type | Null | 0 |
//!
//! Values per type (what the row codec accepts and returns): integers `Int` (signed columns) or
//! `UInt` (unsigned; encoders accept either variant when the number fits), FLOAT `Float`, DOUBLE
//! `Double`, DECIMAL `Decimal`, strings and blobs `Bytes`, DATE `Date`, DATETIME `DateTime`,
//! TIMESTAMP `Timestamp`, TIME `Time`, YEAR `Year` (0 or 1901..=2155), NULL type `Null`.
//! Temporal values must not carry more fractional digits than the column's fsp.
//!
//! Invariants: a [`ColumnMeta`]'s metadata word is what MariaDB writes in a Table_map for its
//! type (cross-checked with an independent decoder in tests/); the row codec refuses a
//! [`Value`] of another type family than its column's instead of converting it.

use std::fmt;
use triomphe::Arc;

/// MariaDB `enum_field_types` codes used in Table_map events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum ColumnType {
    Decimal = 0,
    Tiny = 1,
    Short = 2,
    Long = 3,
    Float = 4,
    Double = 5,
    Null = 6,
    Timestamp = 7,
    LongLong = 8,
    Int24 = 9,
    Date = 10,
    Time = 11,
    DateTime = 12,
    Year = 13,
    NewDate = 14,
    VarChar = 15,
    Bit = 16,
    Timestamp2 = 17,
    DateTime2 = 18,
    Time2 = 19,
    NewDecimal = 246,
    Enum = 247,
    Set = 248,
    TinyBlob = 249,
    MediumBlob = 250,
    LongBlob = 251,
    Blob = 252,
    VarString = 253,
    String = 254,
    Geometry = 255,
}

impl ColumnType {
    /// The type for a code read from a Table_map event; `None` for codes MariaDB does not use.
    pub fn from_code(code: u8) -> Option<Self> {
        use ColumnType::*;
        Some(match code {
            0 => Decimal,
            1 => Tiny,
            2 => Short,
            3 => Long,
            4 => Float,
            5 => Double,
            6 => Null,
            7 => Timestamp,
            8 => LongLong,
            9 => Int24,
            10 => Date,
            11 => Time,
            12 => DateTime,
            13 => Year,
            14 => NewDate,
            15 => VarChar,
            16 => Bit,
            17 => Timestamp2,
            18 => DateTime2,
            19 => Time2,
            246 => NewDecimal,
            247 => Enum,
            248 => Set,
            249 => TinyBlob,
            250 => MediumBlob,
            251 => LongBlob,
            252 => Blob,
            253 => VarString,
            254 => String,
            255 => Geometry,
            _ => return None,
        })
    }
}

/// One column as a Table_map event describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnMeta {
    pub column_type: ColumnType,
    /// The type's metadata word (see the module table). For `String` (CHAR/BINARY) it is the
    /// MariaDB packed form: real type and max byte length.
    pub meta: u16,
    /// UNSIGNED integer (carried in the Table_map optional metadata SIGNEDNESS field).
    pub unsigned: bool,
    pub nullable: bool,
    /// Binary (BINARY/VARBINARY/BLOB) rather than text (CHAR/VARCHAR/TEXT); text columns use
    /// utf8mb4.
    pub binary: bool,
    /// Column name (carried in the optional metadata COLUMN_NAME field).
    pub name: String,
}

/// One field of a row image.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    /// Signed integers of every width.
    Int(i64),
    /// Unsigned integers of every width.
    UInt(u64),
    Float(f32),
    Double(f64),
    /// DECIMAL in canonical text form: optional `-`, digits, optional `.` and exactly `scale`
    /// fraction digits (`"-12.50"` for DECIMAL(p,2)).
    Decimal(String),
    /// CHAR, VARCHAR, BINARY, VARBINARY, TEXT and BLOB kinds: the bytes (utf8mb4 for text),
    /// shared between the clones of a value.
    Bytes(SharedBytes),
    Date {
        year: u16,
        month: u8,
        day: u8,
    },
    DateTime {
        year: u16,
        month: u8,
        day: u8,
        hour: u8,
        minute: u8,
        second: u8,
        micros: u32,
    },
    /// TIMESTAMP: seconds since the Unix epoch (UTC) and microseconds.
    Timestamp {
        secs: u32,
        micros: u32,
    },
    /// TIME: sign, hours (up to 838), minutes, seconds, microseconds.
    Time {
        negative: bool,
        hours: u16,
        minutes: u8,
        seconds: u8,
        micros: u32,
    },
    Year(u16),
}

/// The bytes of a string or binary [`Value`], immutable and shared: cloning a value (a row
/// read from the store, a row an UPDATE writes back with one column changed, a row image
/// kept for the binlog) shares its strings instead of copying them. Compares, orders and
/// hashes as its bytes (equal at once when shared); derefs to `[u8]`. Build one from a
/// `Vec<u8>`, a slice or a string with `into()` (one allocation: an 8-byte count, then the
/// bytes); [`SharedBytes::into_vec`] gives the bytes back to change them.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SharedBytes(Arc<[u8]>);

impl SharedBytes {
    /// The bytes as a slice.
    pub fn as_slice(&self) -> &[u8] {
        &self.0
    }

    /// The size of the allocation holding the bytes (their count, then the bytes), before the
    /// allocator rounds it up; a clone shares it.
    pub fn alloc_len(&self) -> usize {
        size_of::<usize>() + self.0.len()
    }

    /// The bytes in a vector of their own (a copy: the bytes may be shared).
    pub fn into_vec(self) -> Vec<u8> {
        self.0.to_vec()
    }
}

impl Default for SharedBytes {
    fn default() -> Self {
        SharedBytes(Arc::from(&[][..]))
    }
}

impl std::ops::Deref for SharedBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.0
    }
}

impl AsRef<[u8]> for SharedBytes {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl std::borrow::Borrow<[u8]> for SharedBytes {
    fn borrow(&self) -> &[u8] {
        &self.0
    }
}

impl fmt::Debug for SharedBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl<'a> IntoIterator for &'a SharedBytes {
    type Item = &'a u8;
    type IntoIter = std::slice::Iter<'a, u8>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl FromIterator<u8> for SharedBytes {
    fn from_iter<I: IntoIterator<Item = u8>>(iter: I) -> Self {
        SharedBytes::from(iter.into_iter().collect::<Vec<u8>>())
    }
}

impl From<Vec<u8>> for SharedBytes {
    fn from(v: Vec<u8>) -> Self {
        SharedBytes(Arc::from(&v[..]))
    }
}

impl From<&[u8]> for SharedBytes {
    fn from(v: &[u8]) -> Self {
        SharedBytes(Arc::from(v))
    }
}

impl<const N: usize> From<&[u8; N]> for SharedBytes {
    fn from(v: &[u8; N]) -> Self {
        SharedBytes(Arc::from(&v[..]))
    }
}

impl From<&str> for SharedBytes {
    fn from(v: &str) -> Self {
        SharedBytes(Arc::from(v.as_bytes()))
    }
}

impl From<String> for SharedBytes {
    fn from(v: String) -> Self {
        SharedBytes(Arc::from(v.as_bytes()))
    }
}

impl From<SharedBytes> for Vec<u8> {
    fn from(v: SharedBytes) -> Self {
        v.into_vec()
    }
}

impl PartialEq<[u8]> for SharedBytes {
    fn eq(&self, other: &[u8]) -> bool {
        *self.0 == *other
    }
}

impl PartialEq<&[u8]> for SharedBytes {
    fn eq(&self, other: &&[u8]) -> bool {
        *self.0 == **other
    }
}

impl PartialEq<Vec<u8>> for SharedBytes {
    fn eq(&self, other: &Vec<u8>) -> bool {
        *self.0 == other[..]
    }
}

impl<const N: usize> PartialEq<[u8; N]> for SharedBytes {
    fn eq(&self, other: &[u8; N]) -> bool {
        *self.0 == other[..]
    }
}

impl<const N: usize> PartialEq<&[u8; N]> for SharedBytes {
    fn eq(&self, other: &&[u8; N]) -> bool {
        *self.0 == other[..]
    }
}

impl Value {
    /// A string or binary value of `bytes`.
    pub fn bytes(bytes: impl Into<SharedBytes>) -> Value {
        Value::Bytes(bytes.into())
    }

    /// A BINARY(`len`) value: `bytes` padded with 0x00 bytes to `len` (as MariaDB stores
    /// it, and as a row event carries it without its trailing zeros); longer bytes are kept.
    pub fn zero_padded(bytes: &[u8], len: usize) -> Value {
        if bytes.len() >= len {
            return Value::bytes(bytes);
        }
        let mut v = bytes.to_vec();
        v.resize(len, 0);
        Value::bytes(v)
    }

    /// A TIME as signed microseconds (`-838:59:59` .. `838:59:59`); None for other values.
    pub fn time_micros(&self) -> Option<i64> {
        let Value::Time {
            negative,
            hours,
            minutes,
            seconds,
            micros,
        } = *self
        else {
            return None;
        };
        let t = ((i64::from(hours) * 60 + i64::from(minutes)) * 60 + i64::from(seconds))
            * 1_000_000
            + i64::from(micros);
        Some(if negative { -t } else { t })
    }
}

/// `real_type` of a CHAR/BINARY column (`MYSQL_TYPE_STRING`) in its packed metadata word.
pub const STRING_REAL_TYPE: u8 = 254;
/// `real_type` of an ENUM column carried as `ColumnType::String`.
pub const ENUM_REAL_TYPE: u8 = 247;
/// `real_type` of a SET column carried as `ColumnType::String`.
pub const SET_REAL_TYPE: u8 = 248;

impl ColumnMeta {
    /// The metadata word of a `String` column as MariaDB packs it (`Field_string::
    /// save_field_metadata`): first byte `real_type` with bits 4-5 flipped by bits 8-9 of the
    /// max byte length, second byte the low 8 bits of the length. `max_len` must be < 1024.
    pub fn pack_string_meta(real_type: u8, max_len: u16) -> u16 {
        let b0 = real_type ^ (((max_len & 0x300) >> 4) as u8);
        (u16::from(b0) << 8) | (max_len & 0xff)
    }

    /// `(real_type, max byte length)` of a `String` column's metadata word (the inverse of
    /// [`ColumnMeta::pack_string_meta`]). For ENUM and SET the "length" is the pack length.
    pub fn unpack_string_meta(meta: u16) -> (u8, u16) {
        let b0 = (meta >> 8) as u8;
        let b1 = meta & 0xff;
        if b0 & 0x30 != 0x30 {
            (b0 | 0x30, ((u16::from(b0 & 0x30) ^ 0x30) << 4) | b1)
        } else {
            (b0, b1)
        }
    }

    /// True for the types the Table_map SIGNEDNESS field has a bit for: the integer, float,
    /// double and decimal types, and YEAR (a `Field_tiny` in MariaDB, always unsigned; MySQL
    /// and mysql_common count it too).
    pub fn is_numeric(&self) -> bool {
        use ColumnType::*;
        matches!(
            self.column_type,
            Tiny | Short | Int24 | Long | LongLong | Float | Double | NewDecimal | Decimal | Year
        )
    }

    /// True for the types the Table_map DEFAULT_CHARSET/COLUMN_CHARSET fields cover (text and
    /// binary strings and blobs; not ENUM/SET, which have their own fields).
    pub fn is_character(&self) -> bool {
        use ColumnType::*;
        match self.column_type {
            VarChar | VarString | Blob | TinyBlob | MediumBlob | LongBlob => true,
            String => Self::unpack_string_meta(self.meta).0 == STRING_REAL_TYPE,
            _ => false,
        }
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
/// DATE/DATETIME/TIMESTAMP conversions everywhere in onelog go through this and
/// [`civil_from_days`].
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// (year, month, day) of a day count since 1970-01-01, proleptic Gregorian.
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod calendar_tests {
    use super::{civil_from_days, days_from_civil};

    #[test]
    fn civil_from_days_agrees_with_known_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(days_from_civil(0, 1, 1), -719_528);
    }

    #[test]
    fn the_two_are_inverse_from_year_0_to_9999() {
        for d in (-719_528..2_932_897).step_by(37) {
            let (y, m, dd) = civil_from_days(d);
            assert_eq!(days_from_civil(y, m, dd), d, "{y}-{m}-{dd}");
        }
    }
}

#[cfg(test)]
mod shared_bytes_tests {
    use super::{SharedBytes, Value};

    #[test]
    fn a_clone_shares_the_bytes_and_compares_equal() {
        let a = SharedBytes::from(vec![b'x'; 119]);
        let b = a.clone();
        assert_eq!(a.as_ptr(), b.as_ptr(), "a clone shares its allocation");
        assert_eq!(a, b);
        // A copy with equal bytes is equal too, and bytes order as slices do.
        assert_eq!(a, SharedBytes::from(&[b'x'; 119]));
        assert!(SharedBytes::from("ab") < SharedBytes::from("b"));
        assert!(SharedBytes::from("") < SharedBytes::from("\0"));
        assert_eq!(SharedBytes::default(), SharedBytes::from(Vec::new()));
        // One 8-byte count before the bytes: 119 bytes fit an allocator's 128-byte class.
        assert_eq!(a.alloc_len(), 127);
    }

    #[test]
    fn values_of_any_origin_agree() {
        let v = Value::bytes("héllo");
        assert_eq!(v, Value::bytes("héllo".as_bytes().to_vec()));
        assert_eq!(v, Value::bytes(String::from("héllo")));
        assert_ne!(v, Value::bytes("hello"));
        let Value::Bytes(b) = &v else { unreachable!() };
        assert_eq!(*b, "héllo".as_bytes());
        assert_eq!(format!("{b:?}"), format!("{:?}", "héllo".as_bytes()));
        assert_eq!(b.clone().into_vec(), "héllo".as_bytes().to_vec());
        assert_eq!(b.iter().copied().collect::<SharedBytes>(), *b);
    }
}
