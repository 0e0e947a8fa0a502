//! Write_rows_v1 (23), Update_rows_v1 (24) and Delete_rows_v1 (25) events with full row images.
//!
//! ```text
//! post-header: table_id 6 bytes LE, flags u16 LE (STMT_END_F = 1 on the last rows event of
//!              a statement)
//! body:        column_count packed int,
//!              columns-present bitmap ((column_count + 7) / 8 bytes, LSB first),
//!              Update only: columns-present bitmap of the after image,
//!              rows: Write = after image, Delete = before image, Update = before + after
//! ```
//!
//! Each image is a null bitmap over the present columns and the packed values (see
//! [`crate::rows`]). onelog always writes full images (every column present).
//!
//! [`RowsEventWriter`] appends rows into one reusable buffer (no allocation per row);
//! [`RowsEvent::decode`] needs the event's [`TableMap`].
//!
//! Invariants: decoding what the encoder wrote gives the same event (tests/roundtrip.rs, and
//! the layout is cross-checked against an independent decoder in tests/cross_check_mysql_common.rs);
//! the decoder reads only through the bounds-checked `wire::Reader`, so a short body is a
//! `DecodeError`, never a panic (fuzzed by fuzz/fuzz_targets/decode_event.rs).

use super::table_map::{TableMap, MAX_TABLE_ID};
use super::{event_type, new_header, typed_body, EventHeader};
use crate::error::{DecodeError, EncodeError};
use crate::rows::{decode_row, encode_row};
use crate::value::{ColumnMeta, Value};
use crate::wire::put_packed;

/// Rows event flag: last rows event of the statement (the replica may release table maps).
pub const STMT_END_F: u16 = 1;
pub const NO_FOREIGN_KEY_CHECKS_F: u16 = 2;
pub const RELAXED_UNIQUE_CHECKS_F: u16 = 4;
pub const COMPLETE_ROWS_F: u16 = 8;

/// Which rows event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RowsKind {
    Write,
    Update,
    Delete,
}

impl RowsKind {
    pub fn event_type(self) -> u8 {
        match self {
            RowsKind::Write => event_type::WRITE_ROWS_V1,
            RowsKind::Update => event_type::UPDATE_ROWS_V1,
            RowsKind::Delete => event_type::DELETE_ROWS_V1,
        }
    }

    pub fn from_event_type(t: u8) -> Option<Self> {
        match t {
            event_type::WRITE_ROWS_V1 => Some(RowsKind::Write),
            event_type::UPDATE_ROWS_V1 => Some(RowsKind::Update),
            event_type::DELETE_ROWS_V1 => Some(RowsKind::Delete),
            _ => None,
        }
    }
}

/// Builds one rows event: create it, push rows, `finish` it into the output (which resets it
/// for the next event of the same table, keeping its buffer).
#[derive(Debug, Clone)]
pub struct RowsEventWriter {
    kind: RowsKind,
    ncols: usize,
    /// Post-header and column bitmaps, then the row images pushed so far.
    body: Vec<u8>,
    preamble_len: usize,
    rows: usize,
    /// Flags besides STMT_END_F (e.g. [`NO_FOREIGN_KEY_CHECKS_F`]) of every event written.
    flags: u16,
}

impl RowsEventWriter {
    /// A writer for rows of a table with `ncols` columns. A `table_id` above 2^48 - 1 is
    /// truncated to 6 bytes as MariaDB does; onelog's table ids are far below that.
    pub fn new(kind: RowsKind, table_id: u64, ncols: usize) -> Self {
        let mut body = Vec::with_capacity(256);
        body.extend_from_slice(&(table_id & MAX_TABLE_ID).to_le_bytes()[..6]);
        body.extend_from_slice(&0u16.to_le_bytes());
        put_packed(&mut body, ncols as u64);
        let bitmaps = if kind == RowsKind::Update { 2 } else { 1 };
        for _ in 0..bitmaps {
            let start = body.len();
            body.resize(start + ncols.div_ceil(8), 0);
            for i in 0..ncols {
                body[start + i / 8] |= 1 << (i % 8);
            }
        }
        let preamble_len = body.len();
        RowsEventWriter {
            kind,
            ncols,
            body,
            preamble_len,
            rows: 0,
            flags: 0,
        }
    }

    /// Sets the flags (besides STMT_END_F) of the events this writer finishes.
    pub fn set_flags(&mut self, flags: u16) {
        self.flags = flags & !STMT_END_F;
    }

    /// The flags [`set_flags`](Self::set_flags) gave.
    pub fn flags(&self) -> u16 {
        self.flags
    }

    pub fn kind(&self) -> RowsKind {
        self.kind
    }

    /// Rows (or update pairs) pushed since the last `finish`.
    pub fn rows(&self) -> usize {
        self.rows
    }

    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// Bytes of row images pushed so far (to cut events at a size limit).
    pub fn rows_len(&self) -> usize {
        self.body.len() - self.preamble_len
    }

    /// The row images pushed so far (what [`rows_len`](Self::rows_len) counts).
    pub fn rows_bytes(&self) -> &[u8] {
        &self.body[self.preamble_len..]
    }

    /// Bytes of the event's body before the row images (post-header and bitmaps): the row
    /// images of a finished event start `HEADER_LEN + preamble_len()` bytes into it.
    pub fn preamble_len(&self) -> usize {
        self.preamble_len
    }

    /// Forgets the row images pushed after the first `rows_len` bytes, which held `rows` rows
    /// (a position taken earlier with [`rows_len`](Self::rows_len) and [`rows`](Self::rows)):
    /// an event cache rolled back to a savepoint.
    pub fn truncate_rows(&mut self, rows_len: usize, rows: usize) {
        debug_assert!(rows_len <= self.rows_len() && rows <= self.rows);
        self.body.truncate(self.preamble_len + rows_len);
        self.rows = rows;
    }

    /// Appends `count` row images encoded earlier by a writer of the same kind and table
    /// (the [`rows_bytes`](Self::rows_bytes) of one, or the rows of an event it finished).
    pub fn extend_encoded(&mut self, images: &[u8], count: usize) {
        self.body.extend_from_slice(images);
        self.rows += count;
    }

    fn check_cols(&self, columns: &[ColumnMeta]) -> Result<(), EncodeError> {
        if columns.len() != self.ncols {
            return Err(EncodeError::new(
                "rows event",
                format!(
                    "{} columns given to a writer for {}",
                    columns.len(),
                    self.ncols
                ),
            ));
        }
        Ok(())
    }

    /// Appends one row (the after image of a Write, the before image of a Delete). On error
    /// nothing is appended.
    pub fn push_row(&mut self, columns: &[ColumnMeta], row: &[Value]) -> Result<(), EncodeError> {
        self.check_cols(columns)?;
        if self.kind == RowsKind::Update {
            return Err(EncodeError::new(
                "rows event",
                "push_row on an Update_rows writer; use push_update",
            ));
        }
        encode_row(columns, row, &mut self.body)?;
        self.rows += 1;
        Ok(())
    }

    /// Appends one before/after pair of an Update. On error nothing is appended.
    pub fn push_update(
        &mut self,
        columns: &[ColumnMeta],
        before: &[Value],
        after: &[Value],
    ) -> Result<(), EncodeError> {
        self.check_cols(columns)?;
        if self.kind != RowsKind::Update {
            return Err(EncodeError::new(
                "rows event",
                "push_update on a Write/Delete_rows writer",
            ));
        }
        let start = self.body.len();
        encode_row(columns, before, &mut self.body)?;
        if let Err(e) = encode_row(columns, after, &mut self.body) {
            self.body.truncate(start);
            return Err(e);
        }
        self.rows += 1;
        Ok(())
    }

    /// Appends the event to `out` (STMT_END_F set when `end_of_statement`) and resets the
    /// writer to no rows.
    pub fn finish(
        &mut self,
        timestamp: u32,
        server_id: u32,
        end_of_statement: bool,
        out: &mut Vec<u8>,
    ) {
        let flags = if end_of_statement { STMT_END_F } else { 0 } | self.flags;
        self.body[6..8].copy_from_slice(&flags.to_le_bytes());
        super::write_event(
            out,
            new_header(self.kind.event_type(), timestamp, server_id),
            &self.body,
        );
        self.body.truncate(self.preamble_len);
        self.rows = 0;
    }
}

/// The rows of a decoded rows event.
#[derive(Debug, Clone, PartialEq)]
pub enum Rows {
    /// After images.
    Write(Vec<Vec<Value>>),
    /// (before, after) images.
    Update(Vec<(Vec<Value>, Vec<Value>)>),
    /// Before images.
    Delete(Vec<Vec<Value>>),
}

impl Rows {
    pub fn len(&self) -> usize {
        match self {
            Rows::Write(r) | Rows::Delete(r) => r.len(),
            Rows::Update(r) => r.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A decoded rows event. Columns not present in an image (MariaDB with
/// `binlog_row_image=MINIMAL`; never onelog) come back as `Value::Null`; see the present maps.
#[derive(Debug, Clone, PartialEq)]
pub struct RowsEvent {
    pub table_id: u64,
    pub flags: u16,
    /// Columns present in the before image (Update/Delete) or the after image (Write).
    pub columns_present: Vec<bool>,
    /// Update only: columns present in the after image.
    pub columns_present_after: Option<Vec<bool>>,
    pub rows: Rows,
}

impl RowsEvent {
    pub fn kind(&self) -> RowsKind {
        match self.rows {
            Rows::Write(_) => RowsKind::Write,
            Rows::Update(_) => RowsKind::Update,
            Rows::Delete(_) => RowsKind::Delete,
        }
    }

    pub fn is_end_of_statement(&self) -> bool {
        self.flags & STMT_END_F != 0
    }

    /// The kind and table id of a rows event without decoding its rows (to find its table map).
    pub fn peek(ev: &[u8]) -> Result<(EventHeader, RowsKind, u64), DecodeError> {
        let (h, ev) = super::check_event(ev)?;
        let kind = RowsKind::from_event_type(h.event_type).ok_or_else(|| {
            DecodeError::new(
                "rows event",
                4,
                format!("type {} is not a v1 rows event", h.event_type),
            )
        })?;
        let (_, mut r) = typed_body(ev, h.event_type, "rows event")?;
        Ok((h, kind, r.uint_le(6)?))
    }

    /// Decodes a whole rows event against the table map its table id refers to.
    pub fn decode(ev: &[u8], table: &TableMap) -> Result<Self, DecodeError> {
        let (h, ev) = super::check_event(ev)?;
        let kind = RowsKind::from_event_type(h.event_type).ok_or_else(|| {
            DecodeError::new(
                "rows event",
                4,
                format!("type {} is not a v1 rows event", h.event_type),
            )
        })?;
        let (_, mut r) = typed_body(ev, h.event_type, "rows event")?;
        let table_id = r.uint_le(6)?;
        if table_id != table.table_id {
            return Err(r.err(format!(
                "table id {table_id} but the table map is for {}",
                table.table_id
            )));
        }
        let flags = r.u16()?;
        let at = r.offset();
        let n = r.packed()?;
        if n != table.columns.len() as u64 {
            return Err(DecodeError::new(
                "rows event",
                at,
                format!("{n} columns but the table map has {}", table.columns.len()),
            ));
        }
        let n = n as usize;
        let read_bitmap = |r: &mut crate::wire::Reader<'_>| -> Result<Vec<bool>, DecodeError> {
            let b = r.bytes(n.div_ceil(8))?;
            Ok((0..n).map(|i| b[i / 8] & (1 << (i % 8)) != 0).collect())
        };
        let present = read_bitmap(&mut r)?;
        let present_after = if kind == RowsKind::Update {
            Some(read_bitmap(&mut r)?)
        } else {
            None
        };
        let cols = &table.columns;
        let mut rows = match kind {
            RowsKind::Write => Rows::Write(Vec::new()),
            RowsKind::Update => Rows::Update(Vec::new()),
            RowsKind::Delete => Rows::Delete(Vec::new()),
        };
        while !r.is_empty() {
            let before = r.remaining();
            match &mut rows {
                Rows::Write(v) | Rows::Delete(v) => v.push(decode_row(cols, &present, &mut r)?),
                Rows::Update(v) => {
                    let b = decode_row(cols, &present, &mut r)?;
                    let a = decode_row(cols, present_after.as_deref().unwrap_or(&present), &mut r)?;
                    v.push((b, a));
                }
            }
            if r.remaining() == before {
                return Err(r.err("row image of zero bytes"));
            }
        }
        Ok(RowsEvent {
            table_id,
            flags,
            columns_present: present,
            columns_present_after: present_after,
            rows,
        })
    }
}
