//! Server response packets: OK, EOF, ERR and column definitions (Protocol::ColumnDefinition41).
//!
//! Owns the payload layouts; framing is [`crate::packet`]'s. Invariants:
//! - An OK packet is `0x00` (or `0xFE` when it ends a result set under CLIENT_DEPRECATE_EOF),
//!   affected rows, last insert id, status flags, warnings, then the info text as a
//!   length-encoded string when non-empty (as MariaDB's `net_send_ok` writes it and libmariadb
//!   reads it; CLIENT_SESSION_TRACK is not offered, so no session-state block follows).
//! - An ERR packet always carries the `#` SQLSTATE marker (CLIENT_PROTOCOL_41 is required at
//!   the handshake); a SQLSTATE that is not 5 bytes is padded with `0`/cut to 5.
//! - Column definitions announce the protocol type code ([`crate::value::wire_type`]), never
//!   a binlog-only one.

use onelog_sql::{Column, SqlError};

use crate::value::{wire_flags, wire_type};
use crate::wire::{put_lenenc_bytes, put_lenenc_int, put_u16, put_u32};

pub const OK_HEADER: u8 = 0x00;
pub const EOF_HEADER: u8 = 0xFE;
pub const ERR_HEADER: u8 = 0xFF;

/// Appends an OK packet payload.
pub fn put_ok(
    out: &mut Vec<u8>,
    header: u8,
    affected_rows: u64,
    last_insert_id: u64,
    status: u16,
    warnings: u16,
    info: &str,
) {
    out.push(header);
    put_lenenc_int(out, affected_rows);
    put_lenenc_int(out, last_insert_id);
    put_u16(out, status);
    put_u16(out, warnings);
    if !info.is_empty() {
        put_lenenc_bytes(out, info.as_bytes());
    }
}

/// Appends a (pre-CLIENT_DEPRECATE_EOF) EOF packet payload.
pub fn put_eof(out: &mut Vec<u8>, warnings: u16, status: u16) {
    out.push(EOF_HEADER);
    put_u16(out, warnings);
    put_u16(out, status);
}

/// Appends an ERR packet payload.
pub fn put_err(out: &mut Vec<u8>, code: u16, sqlstate: &str, message: &str) {
    out.push(ERR_HEADER);
    put_u16(out, code);
    out.push(b'#');
    let mut state = [b'0'; 5];
    for (d, s) in state.iter_mut().zip(sqlstate.bytes()) {
        *d = s;
    }
    out.extend_from_slice(&state);
    out.extend_from_slice(message.as_bytes());
}

pub fn put_sql_err(out: &mut Vec<u8>, e: &SqlError) {
    put_err(out, e.code, e.sqlstate, &e.message);
}

/// Appends a column definition. `with_default` adds the (NULL) default value COM_FIELD_LIST
/// responses carry.
pub fn put_column_def(out: &mut Vec<u8>, c: &Column, with_default: bool) {
    put_lenenc_bytes(out, b"def");
    put_lenenc_bytes(out, c.db.as_bytes());
    put_lenenc_bytes(out, c.table.as_bytes());
    put_lenenc_bytes(out, c.org_table.as_bytes());
    put_lenenc_bytes(out, c.name.as_bytes());
    put_lenenc_bytes(out, c.org_name.as_bytes());
    out.push(0x0C);
    put_u16(out, c.charset);
    put_u32(out, c.length);
    out.push(wire_type(c.column_type));
    put_u16(out, wire_flags(c));
    out.push(c.decimals);
    put_u16(out, 0);
    if with_default {
        out.push(0xFB);
    }
}

/// The definition sent for each `?` parameter of a prepared statement.
pub fn param_column() -> Column {
    Column {
        name: "?".into(),
        org_name: String::new(),
        table: String::new(),
        org_table: String::new(),
        db: String::new(),
        column_type: onelog_binlog::ColumnType::VarString,
        flags: 0x0080,
        length: 0,
        decimals: 0,
        charset: 63,
    }
}
