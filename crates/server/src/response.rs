//! Server response packets that need onelog's types: column definitions
//! (Protocol::ColumnDefinition41) and ERR from a [`SqlError`]. OK, EOF, ERR and the handshake
//! are `onelog_protocol::response`'s, re-exported here.
//!
//! Owns the column definition layout; framing is [`crate::packet`]'s. Invariants:
//! - Column definitions announce the protocol type code ([`crate::value::wire_type`]), never
//!   a binlog-only one.

use onelog_sql::{Column, SqlError};

pub use onelog_protocol::response::{
    put_eof, put_err, put_handshake, put_ok, Handshake, EOF_HEADER, ERR_HEADER, OK_HEADER,
};

use crate::value::{wire_flags, wire_type};
use crate::wire::{put_lenenc_bytes, put_u16, put_u32};

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
    let ty = wire_type(c.column_type);
    debug_assert!(
        ![17u8, 18, 19, 14, 15].contains(&ty),
        "column type {ty} is binlog-only, not a protocol type"
    );
    out.push(ty);
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
