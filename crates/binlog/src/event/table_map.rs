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
//! onelog writes the optional metadata fields SIGNEDNESS (1: one bit per numeric column, MSB
//! first, set = unsigned; YEAR counts as numeric and is always unsigned), DEFAULT_CHARSET (2: default collation, then (index among character
//! columns, collation) for the others; binary columns have collation 63) and COLUMN_NAME
//! (4: packed length + name per column). The decoder also reads COLUMN_CHARSET (3) and skips
//! every other field.
//!
//! Invariants: decoding what the encoder wrote gives the same event (tests/roundtrip.rs, and
//! the layout is cross-checked against an independent decoder in tests/cross_check_mysql_common.rs);
//! the decoder reads only through the bounds-checked `wire::Reader`, so a short body is a
//! `DecodeError`, never a panic (fuzzed by fuzz/fuzz_targets/decode_event.rs).

use super::query::UTF8MB4_GENERAL_CI;
use super::{event_type, new_header, typed_body};
use crate::error::{DecodeError, EncodeError};
use crate::value::{ColumnMeta, ColumnType};
use crate::wire::{put_packed, Reader};

/// Optional metadata field types (`Table_map_log_event::Optional_metadata_field_type`).
pub const OPT_SIGNEDNESS: u8 = 1;
pub const OPT_DEFAULT_CHARSET: u8 = 2;
pub const OPT_COLUMN_CHARSET: u8 = 3;
pub const OPT_COLUMN_NAME: u8 = 4;
/// The `binary` collation.
pub const BINARY_COLLATION: u16 = 63;

/// Largest table id (6 bytes).
pub const MAX_TABLE_ID: u64 = (1 << 48) - 1;

/// A Table_map event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableMap {
    pub table_id: u64,
    pub flags: u16,
    pub db: String,
    pub table: String,
    pub columns: Vec<ColumnMeta>,
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
        // SIGNEDNESS.
        // YEAR is always unsigned in MariaDB, whatever the caller's flag says.
        let numeric: Vec<bool> = self
            .columns
            .iter()
            .filter(|c| c.is_numeric())
            .map(|c| c.unsigned || c.column_type == ColumnType::Year)
            .collect();
        if !numeric.is_empty() {
            let mut bits = vec![0u8; numeric.len().div_ceil(8)];
            for (i, &u) in numeric.iter().enumerate() {
                if u {
                    bits[i / 8] |= 0x80 >> (i % 8);
                }
            }
            body.push(OPT_SIGNEDNESS);
            put_packed(&mut body, bits.len() as u64);
            body.extend_from_slice(&bits);
        }
        // DEFAULT_CHARSET.
        if self.columns.iter().any(|c| c.is_character()) {
            let mut f = Vec::new();
            put_packed(&mut f, u64::from(UTF8MB4_GENERAL_CI));
            for (i, c) in self.columns.iter().filter(|c| c.is_character()).enumerate() {
                if collation(c) != UTF8MB4_GENERAL_CI {
                    put_packed(&mut f, i as u64);
                    put_packed(&mut f, u64::from(collation(c)));
                }
            }
            body.push(OPT_DEFAULT_CHARSET);
            put_packed(&mut body, f.len() as u64);
            body.extend_from_slice(&f);
        }
        // COLUMN_NAME.
        let mut f = Vec::new();
        for c in &self.columns {
            put_packed(&mut f, c.name.len() as u64);
            f.extend_from_slice(c.name.as_bytes());
        }
        body.push(OPT_COLUMN_NAME);
        put_packed(&mut body, f.len() as u64);
        body.extend_from_slice(&f);
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
                _ => {}
            }
        }
        Ok(TableMap {
            table_id,
            flags,
            db,
            table,
            columns,
        })
    }

    /// Index of the column named `name`, if the event carried names.
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }
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
