//! Table_map event (type 19): binds a table id to a table's name and column types for the rows
//! events that follow it in the same event group.
//!
//! ```text
//! post-header: table_id 6 bytes LE, flags u16 LE
//! body:        db_len u8, db, NUL, table_len u8, table, NUL,
//!              column_count packed int, column_count type codes,
//!              metadata_len packed int, per-column metadata (`meta_len` bytes per type),
//!              null bitmap ((column_count + 7) / 8 bytes, bit i = column i nullable, LSB first),
//!              optional metadata: (type u8, length packed int, value)*
//! ```
//!
//! Per-type metadata as MariaDB writes it (`Field::save_field_metadata`) and how it maps to
//! `ColumnMeta::meta`: Float/Double/Blob kinds/Geometry/DateTime2/Timestamp2/Time2 one byte
//! (the word is that byte); VarChar/VarString/Bit two bytes LE (the word is that u16);
//! NewDecimal two bytes precision, scale (word `precision << 8 | scale`); String/Enum/Set two
//! bytes real type, length (word `byte0 << 8 | byte1`, see `ColumnMeta::pack_string_meta`);
//! other types none.
//!
//! The optional metadata fields written depend on [`RowMetadata`] (MariaDB's
//! `binlog_row_metadata`), in MariaDB 10.11's order (checked against its binlog bytes):
//! - `NO_LOG` (MariaDB's default): none;
//! - `MINIMAL`: SIGNEDNESS (1: one bit per numeric column, MSB first, set = unsigned; YEAR
//!   counts as numeric and is always unsigned) when the table has a numeric column, then the
//!   character sets of its character columns (text and binary strings and blobs, binary ones
//!   with collation 63) when it has one, as DEFAULT_CHARSET (2: the most used collation, then
//!   (index among character columns, collation) for the others) or, when that is longer,
//!   COLUMN_CHARSET (3: one collation per character column);
//! - `FULL`: those, then COLUMN_NAME (4: packed length + name per column) and the primary key
//!   as SIMPLE_PRIMARY_KEY (8: packed column index per key part, in key order) when the table
//!   has one. ENUM/SET value lists (5, 6, 10, 11) cannot be written from a [`ColumnMeta`], so
//!   a FULL map with an ENUM or SET column is an encode error (onelog's catalog has neither).
//!
//! The decoder reads SIGNEDNESS, DEFAULT_CHARSET, COLUMN_CHARSET, COLUMN_NAME,
//! SIMPLE_PRIMARY_KEY and PRIMARY_KEY_WITH_PREFIX (9: (index, prefix length) pairs; the
//! prefixes are dropped) and skips every other field; it reports the level as FULL when names
//! are present, MINIMAL when signedness or charsets are, else NO_LOG.
//!
//! Invariants: decoding what the encoder wrote gives the same event (tests/roundtrip.rs; one
//! exception: a MINIMAL map of a table with neither numeric nor character columns has no
//! optional field, the same bytes as NO_LOG, and decodes as NO_LOG; and
//! the layout is cross-checked against an independent decoder in tests/cross_check_mysql_common.rs);
//! the decoder reads only through the bounds-checked `wire::Reader`, so a short body is a
//! `DecodeError`, never a panic (fuzzed by fuzz/fuzz_targets/decode_event.rs).

use super::query::UTF8MB4_GENERAL_CI;
use super::{event_type, new_header, typed_body};
use crate::error::{DecodeError, EncodeError};
use crate::value::{ColumnMeta, ColumnType, ENUM_REAL_TYPE, SET_REAL_TYPE};
use crate::wire::{put_packed, Reader};

/// Optional metadata field types (`Table_map_log_event::Optional_metadata_field_type`).
pub const OPT_SIGNEDNESS: u8 = 1;
pub const OPT_DEFAULT_CHARSET: u8 = 2;
pub const OPT_COLUMN_CHARSET: u8 = 3;
pub const OPT_COLUMN_NAME: u8 = 4;
pub const OPT_SET_STR_VALUE: u8 = 5;
pub const OPT_ENUM_STR_VALUE: u8 = 6;
pub const OPT_SIMPLE_PRIMARY_KEY: u8 = 8;
pub const OPT_PRIMARY_KEY_WITH_PREFIX: u8 = 9;
pub const OPT_ENUM_AND_SET_DEFAULT_CHARSET: u8 = 10;
/// The `binary` collation.
pub const BINARY_COLLATION: u16 = 63;

/// Largest table id (6 bytes).
pub const MAX_TABLE_ID: u64 = (1 << 48) - 1;

/// `binlog_row_metadata`: which optional metadata fields a Table_map carries (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RowMetadata {
    /// No optional metadata (MariaDB's default).
    #[default]
    NoLog,
    /// Signedness and character sets.
    Minimal,
    /// Minimal, plus column names and the primary key.
    Full,
}

impl RowMetadata {
    /// Every level, in the order of MariaDB's enum (`NO_LOG`, `MINIMAL`, `FULL`).
    pub const ALL: [RowMetadata; 3] = [RowMetadata::NoLog, RowMetadata::Minimal, RowMetadata::Full];

    /// The variable's value as MariaDB prints it.
    pub fn name(self) -> &'static str {
        match self {
            RowMetadata::NoLog => "NO_LOG",
            RowMetadata::Minimal => "MINIMAL",
            RowMetadata::Full => "FULL",
        }
    }

    /// The level named `name` (case-insensitive).
    pub fn from_name(name: &str) -> Option<RowMetadata> {
        Self::ALL
            .into_iter()
            .find(|m| m.name().eq_ignore_ascii_case(name))
    }
}

/// A Table_map event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableMap {
    pub table_id: u64,
    pub flags: u16,
    pub db: String,
    pub table: String,
    pub columns: Vec<ColumnMeta>,
    /// Which optional metadata the event carries (decoded: inferred, see the module docs).
    pub metadata: RowMetadata,
    /// Column indexes of the primary key in key order (empty: none, or not carried); written
    /// only at [`RowMetadata::Full`].
    pub primary_key: Vec<usize>,
}

/// Bytes of per-column metadata a type has in the metadata block.
fn meta_len(t: ColumnType) -> usize {
    use ColumnType::*;
    match t {
        Float | Double | Blob | TinyBlob | MediumBlob | LongBlob | Geometry | DateTime2
        | Timestamp2 | Time2 => 1,
        VarChar | VarString | Bit | NewDecimal | String | Enum | Set => 2,
        _ => 0,
    }
}

fn put_meta(c: &ColumnMeta, out: &mut Vec<u8>) {
    use ColumnType::*;
    match (c.column_type, meta_len(c.column_type)) {
        (_, 0) => {}
        (_, 1) => out.push(c.meta as u8),
        (VarChar | VarString | Bit, _) => out.extend_from_slice(&c.meta.to_le_bytes()),
        _ => out.extend_from_slice(&c.meta.to_be_bytes()),
    }
}

fn read_meta(t: ColumnType, r: &mut Reader<'_>) -> Result<u16, DecodeError> {
    use ColumnType::*;
    Ok(match (t, meta_len(t)) {
        (_, 0) => 0,
        (_, 1) => u16::from(r.u8()?),
        (VarChar | VarString | Bit, _) => r.u16()?,
        _ => r.uint_be(2)? as u16,
    })
}

fn put_name(out: &mut Vec<u8>, name: &str, what: &'static str) -> Result<(), EncodeError> {
    if name.len() > 255 || name.as_bytes().contains(&0) {
        return Err(EncodeError::new(
            "Table_map event",
            format!("{what} longer than 255 bytes or containing NUL"),
        ));
    }
    out.push(name.len() as u8);
    out.extend_from_slice(name.as_bytes());
    out.push(0);
    Ok(())
}

fn read_name(r: &mut Reader<'_>) -> Result<String, DecodeError> {
    let n = usize::from(r.u8()?);
    let s = r.str(n)?;
    if r.u8()? != 0 {
        return Err(r.err("name is not NUL-terminated"));
    }
    Ok(s)
}

fn collation(c: &ColumnMeta) -> u16 {
    if c.binary {
        BINARY_COLLATION
    } else {
        UTF8MB4_GENERAL_CI
    }
}

impl TableMap {
    /// Appends the event.
    pub fn encode(
        &self,
        timestamp: u32,
        server_id: u32,
        out: &mut Vec<u8>,
    ) -> Result<(), EncodeError> {
        const WHAT: &str = "Table_map event";
        if self.table_id > MAX_TABLE_ID {
            return Err(EncodeError::new(
                WHAT,
                format!("table id {} does not fit 6 bytes", self.table_id),
            ));
        }
        for (i, c) in self.columns.iter().enumerate() {
            if matches!(c.column_type, ColumnType::Null) && !c.nullable {
                return Err(EncodeError::column(
                    WHAT,
                    i,
                    "a NULL-type column must be nullable",
                ));
            }
        }
        let n = self.columns.len();
        let mut body = Vec::with_capacity(32 + self.db.len() + self.table.len() + 8 * n);
        body.extend_from_slice(&self.table_id.to_le_bytes()[..6]);
        body.extend_from_slice(&self.flags.to_le_bytes());
        put_name(&mut body, &self.db, "db name")?;
        put_name(&mut body, &self.table, "table name")?;
        put_packed(&mut body, n as u64);
        body.extend(self.columns.iter().map(|c| c.column_type as u8));
        let mut meta = Vec::with_capacity(2 * n);
        for c in &self.columns {
            put_meta(c, &mut meta);
        }
        put_packed(&mut body, meta.len() as u64);
        body.extend_from_slice(&meta);
        let start = body.len();
        body.resize(start + n.div_ceil(8), 0);
        for (i, c) in self.columns.iter().enumerate() {
            if c.nullable {
                body[start + i / 8] |= 1 << (i % 8);
            }
        }
        self.put_optional_metadata(&mut body)?;
        super::write_event(
            out,
            new_header(event_type::TABLE_MAP, timestamp, server_id),
            &body,
        );
        Ok(())
    }

    pub fn decode(ev: &[u8]) -> Result<Self, DecodeError> {
        let (_, mut r) = typed_body(ev, event_type::TABLE_MAP, "Table_map event")?;
        let table_id = r.uint_le(6)?;
        let flags = r.u16()?;
        let db = read_name(&mut r)?;
        let table = read_name(&mut r)?;
        let n = r.packed_len()?;
        let mut columns = Vec::with_capacity(n);
        for _ in 0..n {
            let at = r.offset();
            let code = r.u8()?;
            let column_type = ColumnType::from_code(code).ok_or_else(|| {
                DecodeError::new("Table_map event", at, format!("unknown column type {code}"))
            })?;
            columns.push(ColumnMeta {
                column_type,
                meta: 0,
                unsigned: false,
                nullable: false,
                binary: false,
                name: String::new(),
            });
        }
        let meta_block_len = r.packed_len()?;
        let mut m = Reader::new(
            r.bytes(meta_block_len)?,
            r.offset() - meta_block_len,
            "Table_map event",
        );
        for c in &mut columns {
            c.meta = read_meta(c.column_type, &mut m)?;
        }
        if !m.is_empty() {
            return Err(m.err("metadata block longer than its columns need"));
        }
        let nulls = r.bytes(n.div_ceil(8))?;
        for (i, c) in columns.iter_mut().enumerate() {
            c.nullable = nulls[i / 8] & (1 << (i % 8)) != 0;
        }
        let mut primary_key = Vec::new();
        let mut metadata = RowMetadata::NoLog;
        while !r.is_empty() {
            let kind = r.u8()?;
            let len = r.packed_len()?;
            let base = r.offset();
            let f = Reader::new(r.bytes(len)?, base, "Table_map optional metadata");
            match kind {
                OPT_SIGNEDNESS => read_signedness(f, &mut columns)?,
                OPT_DEFAULT_CHARSET => read_default_charset(f, &mut columns)?,
                OPT_COLUMN_CHARSET => read_column_charset(f, &mut columns)?,
                OPT_COLUMN_NAME => read_column_names(f, &mut columns)?,
                OPT_SIMPLE_PRIMARY_KEY => primary_key = read_primary_key(f, n, false)?,
                OPT_PRIMARY_KEY_WITH_PREFIX => primary_key = read_primary_key(f, n, true)?,
                _ => {}
            }
            metadata = match kind {
                OPT_COLUMN_NAME => RowMetadata::Full,
                OPT_SIGNEDNESS | OPT_DEFAULT_CHARSET | OPT_COLUMN_CHARSET
                    if metadata == RowMetadata::NoLog =>
                {
                    RowMetadata::Minimal
                }
                _ => metadata,
            };
        }
        Ok(TableMap {
            table_id,
            flags,
            db,
            table,
            columns,
            metadata,
            primary_key,
        })
    }

    /// Index of the column named `name`, if the event carried names.
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }
}

impl TableMap {
    /// The optional metadata fields of `self.metadata`, in MariaDB's order (module docs).
    fn put_optional_metadata(&self, body: &mut Vec<u8>) -> Result<(), EncodeError> {
        if self.metadata == RowMetadata::NoLog {
            return Ok(());
        }
        put_signedness(&self.columns, body);
        put_charsets(&self.columns, body);
        if self.metadata == RowMetadata::Full {
            self.put_full_fields(body)?;
        }
        Ok(())
    }

    /// COLUMN_NAME and SIMPLE_PRIMARY_KEY.
    fn put_full_fields(&self, body: &mut Vec<u8>) -> Result<(), EncodeError> {
        const WHAT: &str = "Table_map event";
        for (i, c) in self.columns.iter().enumerate() {
            let enum_or_set = match c.column_type {
                ColumnType::Enum | ColumnType::Set => true,
                ColumnType::String => matches!(
                    ColumnMeta::unpack_string_meta(c.meta).0,
                    ENUM_REAL_TYPE | SET_REAL_TYPE
                ),
                _ => false,
            };
            if enum_or_set {
                return Err(EncodeError::column(
                    WHAT,
                    i,
                    "binlog_row_metadata=FULL needs the value list of an ENUM or SET column",
                ));
            }
        }
        let mut f = Vec::new();
        for c in &self.columns {
            put_packed(&mut f, c.name.len() as u64);
            f.extend_from_slice(c.name.as_bytes());
        }
        put_field(body, OPT_COLUMN_NAME, &f);
        if !self.primary_key.is_empty() {
            f.clear();
            for &i in &self.primary_key {
                if i >= self.columns.len() {
                    return Err(EncodeError::new(
                        WHAT,
                        format!("primary key column {i} of {} columns", self.columns.len()),
                    ));
                }
                put_packed(&mut f, i as u64);
            }
            put_field(body, OPT_SIMPLE_PRIMARY_KEY, &f);
        }
        Ok(())
    }
}

/// One optional metadata field: type, packed length, value.
fn put_field(body: &mut Vec<u8>, kind: u8, value: &[u8]) {
    body.push(kind);
    put_packed(body, value.len() as u64);
    body.extend_from_slice(value);
}

/// SIGNEDNESS, when the table has a numeric column. YEAR is always unsigned in MariaDB,
/// whatever the caller's flag says.
fn put_signedness(columns: &[ColumnMeta], body: &mut Vec<u8>) {
    let numeric = columns.iter().filter(|c| c.is_numeric());
    let mut bits = Vec::new();
    for (i, c) in numeric.enumerate() {
        if i % 8 == 0 {
            bits.push(0u8);
        }
        if c.unsigned || c.column_type == ColumnType::Year {
            bits[i / 8] |= 0x80 >> (i % 8);
        }
    }
    if !bits.is_empty() {
        put_field(body, OPT_SIGNEDNESS, &bits);
    }
}

/// DEFAULT_CHARSET or COLUMN_CHARSET, whichever is shorter (DEFAULT_CHARSET on a tie, as
/// MariaDB), when the table has a character column. The default is the most used collation
/// (the lower id on a tie).
fn put_charsets(columns: &[ColumnMeta], body: &mut Vec<u8>) {
    let colls: Vec<u16> = columns
        .iter()
        .filter(|c| c.is_character())
        .map(collation)
        .collect();
    if colls.is_empty() {
        return;
    }
    let binary = colls.iter().filter(|&&c| c == BINARY_COLLATION).count();
    let default = if binary > colls.len() - binary {
        BINARY_COLLATION
    } else {
        UTF8MB4_GENERAL_CI
    };
    let mut by_default = Vec::new();
    put_packed(&mut by_default, u64::from(default));
    for (i, &c) in colls.iter().enumerate() {
        if c != default {
            put_packed(&mut by_default, i as u64);
            put_packed(&mut by_default, u64::from(c));
        }
    }
    let mut by_column = Vec::new();
    for &c in &colls {
        put_packed(&mut by_column, u64::from(c));
    }
    if by_default.len() <= by_column.len() {
        put_field(body, OPT_DEFAULT_CHARSET, &by_default);
    } else {
        put_field(body, OPT_COLUMN_CHARSET, &by_column);
    }
}

/// SIMPLE_PRIMARY_KEY (column indexes) or PRIMARY_KEY_WITH_PREFIX ((index, prefix) pairs).
fn read_primary_key(
    mut f: Reader<'_>,
    ncols: usize,
    with_prefix: bool,
) -> Result<Vec<usize>, DecodeError> {
    let mut key = Vec::new();
    while !f.is_empty() {
        let i = usize::try_from(f.packed()?).unwrap_or(usize::MAX);
        if i >= ncols {
            return Err(f.err(format!("primary key column {i} of {ncols} columns")));
        }
        if with_prefix {
            f.packed()?;
        }
        key.push(i);
    }
    Ok(key)
}

fn read_signedness(mut f: Reader<'_>, columns: &mut [ColumnMeta]) -> Result<(), DecodeError> {
    let bits = f.rest();
    for (i, c) in columns.iter_mut().filter(|c| c.is_numeric()).enumerate() {
        let byte = bits.get(i / 8).copied().unwrap_or(0);
        c.unsigned = byte & (0x80 >> (i % 8)) != 0;
    }
    Ok(())
}

fn set_collation(
    columns: &mut [ColumnMeta],
    char_index: u64,
    coll: u64,
    f: &Reader<'_>,
) -> Result<(), DecodeError> {
    let c = columns
        .iter_mut()
        .filter(|c| c.is_character())
        .nth(usize::try_from(char_index).unwrap_or(usize::MAX))
        .ok_or_else(|| {
            f.err(format!(
                "charset for character column {char_index}, which does not exist"
            ))
        })?;
    c.binary = coll == u64::from(BINARY_COLLATION);
    Ok(())
}

fn read_default_charset(mut f: Reader<'_>, columns: &mut [ColumnMeta]) -> Result<(), DecodeError> {
    let default = f.packed()?;
    let nchar = columns.iter().filter(|c| c.is_character()).count();
    for i in 0..nchar {
        set_collation(columns, i as u64, default, &f)?;
    }
    while !f.is_empty() {
        let idx = f.packed()?;
        let coll = f.packed()?;
        set_collation(columns, idx, coll, &f)?;
    }
    Ok(())
}

fn read_column_charset(mut f: Reader<'_>, columns: &mut [ColumnMeta]) -> Result<(), DecodeError> {
    let mut i = 0u64;
    while !f.is_empty() {
        let coll = f.packed()?;
        set_collation(columns, i, coll, &f)?;
        i += 1;
    }
    Ok(())
}

fn read_column_names(mut f: Reader<'_>, columns: &mut [ColumnMeta]) -> Result<(), DecodeError> {
    for c in columns.iter_mut() {
        if f.is_empty() {
            break;
        }
        let n = f.packed_len()?;
        c.name = f.str(n)?;
    }
    if !f.is_empty() {
        return Err(f.err("more column names than columns"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(
        t: ColumnType,
        meta: u16,
        unsigned: bool,
        nullable: bool,
        binary: bool,
        name: &str,
    ) -> ColumnMeta {
        ColumnMeta {
            column_type: t,
            meta,
            unsigned,
            nullable,
            binary,
            name: name.into(),
        }
    }

    /// The event's bytes from the column count to the end, CRC excluded.
    fn tail(t: &TableMap) -> Vec<u8> {
        let mut buf = Vec::new();
        t.encode(1, 1, &mut buf).unwrap();
        let from = 19 + 8 + 2 + t.db.len() + 2 + t.table.len();
        buf[from..buf.len() - 4].to_vec()
    }

    fn hex(s: impl AsRef<str>) -> Vec<u8> {
        let s = s.as_ref();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    /// `CREATE TABLE b (id INT, b1 VARBINARY(5), c VARCHAR(5), c2 CHAR(2), c3 TEXT,
    /// PRIMARY KEY (c, id))` in a utf8mb4 database, as MariaDB 10.11.19 logs it.
    fn mariadb_table_b(metadata: RowMetadata) -> TableMap {
        use ColumnType::*;
        TableMap {
            table_id: 1,
            flags: 1,
            db: "m2".into(),
            table: "b".into(),
            columns: vec![
                col(Long, 0, false, false, false, "id"),
                col(VarChar, 5, false, true, true, "b1"),
                col(VarChar, 20, false, false, false, "c"),
                col(
                    String,
                    ColumnMeta::pack_string_meta(254, 8),
                    false,
                    true,
                    false,
                    "c2",
                ),
                col(Blob, 2, false, true, false, "c3"),
            ],
            metadata,
            primary_key: vec![2, 0],
        }
    }

    #[test]
    fn each_binlog_row_metadata_level_writes_mariadbs_bytes() {
        // Column count, types, metadata block, null bitmap: the same at every level.
        let base =
            "05030f0ffefc" /* types */.to_string() + "07050014" + "00fe0802" /* metadata */ + "1a";
        let minimal = "010100" /* SIGNEDNESS */.to_string() + "02032d003f" /* DEFAULT_CHARSET */;
        let full = minimal.clone()
            + "040e" + "026964" + "026231" + "0163" + "026332" + "026333" /* COLUMN_NAME */
            + "08020200" /* SIMPLE_PRIMARY_KEY (c, id) */;
        assert_eq!(tail(&mariadb_table_b(RowMetadata::NoLog)), hex(&base));
        assert_eq!(
            tail(&mariadb_table_b(RowMetadata::Minimal)),
            hex(&(base.clone() + &minimal))
        );
        assert_eq!(
            tail(&mariadb_table_b(RowMetadata::Full)),
            hex(&(base + &full))
        );
    }

    #[test]
    fn charsets_use_the_shorter_field_and_signedness_counts_year() {
        use ColumnType::*;
        // (id INT PRIMARY KEY, b1 VARBINARY(5), c VARCHAR(5)): COLUMN_CHARSET is shorter.
        let t = TableMap {
            table_id: 1,
            flags: 1,
            db: "m3".into(),
            table: "a".into(),
            columns: vec![
                col(Long, 0, false, false, false, "id"),
                col(VarChar, 5, false, true, true, "b1"),
                col(VarChar, 20, false, true, false, "c"),
            ],
            metadata: RowMetadata::Minimal,
            primary_key: vec![0],
        };
        assert!(tail(&t).ends_with(&hex("010100" /* SIGNEDNESS */
            .to_string()
            + "03023f2d")));
        // (BIGINT UNSIGNED, FLOAT, DOUBLE, TINYINT UNSIGNED, SMALLINT, MEDIUMINT UNSIGNED,
        // DECIMAL(3,1), YEAR, BIT(3)): MariaDB's signedness byte is 0x95.
        let n = |t, u| col(t, 0, u, true, false, "x");
        let t = TableMap {
            columns: vec![
                n(LongLong, true),
                n(Float, false),
                n(Double, false),
                n(Tiny, true),
                n(Short, false),
                n(Int24, true),
                col(NewDecimal, (3 << 8) | 1, false, true, false, "x"),
                n(Year, false),
                col(Bit, 3, false, true, false, "x"),
            ],
            ..t
        };
        assert!(tail(&t).ends_with(&[OPT_SIGNEDNESS, 1, 0x95]));
    }

    #[test]
    fn full_metadata_decodes_names_and_primary_key() {
        let t = mariadb_table_b(RowMetadata::Full);
        let mut buf = Vec::new();
        t.encode(1, 1, &mut buf).unwrap();
        let d = TableMap::decode(&buf).unwrap();
        assert_eq!(d, t);
        assert_eq!(d.column_index("c2"), Some(3));
        let mut buf = Vec::new();
        mariadb_table_b(RowMetadata::NoLog)
            .encode(1, 1, &mut buf)
            .unwrap();
        let d = TableMap::decode(&buf).unwrap();
        assert_eq!(d.metadata, RowMetadata::NoLog);
        assert!(d.primary_key.is_empty() && d.columns.iter().all(|c| c.name.is_empty()));
    }

    #[test]
    fn full_metadata_refuses_enum_without_its_values() {
        let mut t = mariadb_table_b(RowMetadata::Full);
        t.columns[3].meta = ColumnMeta::pack_string_meta(ENUM_REAL_TYPE, 1);
        assert!(t.encode(1, 1, &mut Vec::new()).is_err());
        t.metadata = RowMetadata::Minimal;
        assert!(t.encode(1, 1, &mut Vec::new()).is_ok());
    }
}
