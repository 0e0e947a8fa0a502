//! `CHECKSUM TABLE t [, t ...] [QUICK | EXTENDED]`, with the values MariaDB 10.11 computes for
//! an InnoDB table of the same column types and rows, so a dump restored into MariaDB can be
//! compared number to number; and the other table maintenance statements (ANALYZE, CHECK,
//! OPTIMIZE, REPAIR TABLE: [`table_maintenance`]), which have nothing to do in onelog.
//!
//! MariaDB's `handler::calculate_checksum` (sql/handler.cc) hashes each row of its in-memory
//! record format with `my_checksum` (zlib's CRC-32) and adds the rows' values (modulo 2^32):
//! - first the null bytes: one bit per nullable column in column order (set: NULL), after a
//!   reserved first bit that is always set unless the table is "packed" (it has a VARCHAR,
//!   VARBINARY, TEXT, BLOB or JSON column, or ROW_FORMAT=DYNAMIC), the unused high bits of the
//!   last byte set; a table with no null bit has no null bytes;
//! - then each non-NULL column: VARCHAR/VARBINARY/TEXT/BLOB/JSON and BIT by their value bytes
//!   (`val_str`: no length prefix; BIT big-endian in `(M + 7) / 8` bytes), every other type by
//!   its fixed-size record bytes: CHAR padded with spaces to 4 bytes a character (utf8mb4's
//!   pack length), BINARY padded with zero bytes, and for integers, FLOAT/DOUBLE, DECIMAL,
//!   temporals, YEAR, ENUM and SET the same bytes as the binlog's packed form
//!   (`onelog_binlog::rows::encode_value_packed`). A NULL column adds nothing.
//!
//! `QUICK` asks for a live checksum, which InnoDB does not keep: the value is NULL (a table's
//! `CHECKSUM=1` option changes nothing for InnoDB). A missing table or a view gives the row
//! (`db.t`, NULL) and an Error-level note (1146 / 1347), as MariaDB answers; a missing SELECT
//! privilege fails the whole statement (1142), checked before any table is read.
//!
//! Divergence (docs/SQL.md): onelog keeps no ROW_FORMAT, so a table created with
//! ROW_FORMAT=DYNAMIC and no variable-length column hashes as an unpacked one (MariaDB packs
//! it: different values).
//!
//! Invariant: the rows are read through the session's transaction when one is open (its
//! snapshot and own changes), otherwise through a fresh read-only snapshot rolled back after.

use std::ops::ControlFlow;

use onelog_binlog::rows::encode_value_packed;
use onelog_binlog::{ColumnMeta, Value};
use onelog_engine::{IndexRef, KeyRange, SqlType, TableDef};
use onelog_protocol::errors;

use crate::context::ExecContext;
use crate::error::SqlError;
use crate::output::{Column, Output};

/// Longest utf8mb4 character: a CHAR(n) column's record holds `4 * n` bytes.
const CHAR_BYTES: usize = 4;

/// `CHECKSUM TABLE tables [QUICK]` (module docs).
pub(crate) fn checksum_tables(
    cx: &mut ExecContext,
    tables: &[(Option<String>, String)],
    quick: bool,
) -> Result<Output, SqlError> {
    let named = named_tables(cx, tables, crate::privilege::SELECT)?;
    let mut rows = Vec::with_capacity(named.len());
    for (db, table) in named {
        let label = Value::bytes(format!("{db}.{table}").into_bytes());
        let def = match crate::bind::tables::table_named(cx, &db, &table) {
            Ok(d) => d,
            Err(e) => {
                cx.warnings
                    .push(("Error".into(), e.code, e.message.clone()));
                rows.push(vec![label, Value::Null]);
                continue;
            }
        };
        let sum = if quick {
            Value::Null
        } else {
            Value::UInt(u64::from(table_checksum(cx, &def)?))
        };
        rows.push(vec![label, sum]);
    }
    let mut name = Column::new_text("Table");
    name.length = 1152;
    name.charset = 33;
    Ok(Output::rows(vec![name, Column::new_int("Checksum")], rows))
}

/// The tables a maintenance statement names, with the current database where none is named
/// (1046 without one), once the session holds `need` on each of them (1142 otherwise).
fn named_tables(
    cx: &ExecContext,
    tables: &[(Option<String>, String)],
    need: u64,
) -> Result<Vec<(String, String)>, SqlError> {
    let mut named = Vec::with_capacity(tables.len());
    for (db, table) in tables {
        let db = match db {
            Some(d) => d.clone(),
            None => cx.current_db.clone().ok_or_else(SqlError::no_database)?,
        };
        cx.check_table_privilege(&db, table, need)?;
        named.push((db, table.clone()));
    }
    Ok(named)
}

/// ANALYZE / CHECK / OPTIMIZE / REPAIR TABLE: MariaDB's result rows (`Table`, `Op`,
/// `Msg_type`, `Msg_text`) for each table. onelog keeps no statistics to analyze, no pages
/// to defragment or repair and no check of its own, so a table gets MariaDB's answer for an
/// engine without the operation (`note`, `The storage engine for the table doesn't support
/// analyze`, as for a MEMORY table); CHECK of a view and CHECK ... FOR UPGRADE are `status
/// OK`; a view under the others, and a missing table, are an `Error` row and `status
/// Operation failed`, as MariaDB 10.11.14 answers. Nothing is logged (nothing changes).
pub(crate) fn table_maintenance(
    cx: &mut ExecContext,
    op: &'static str,
    tables: &[(Option<String>, String)],
    for_upgrade: bool,
) -> Result<Output, SqlError> {
    use crate::privilege::{INSERT, SELECT};
    let need = if op == "check" {
        SELECT
    } else {
        SELECT | INSERT
    };
    let named = named_tables(cx, tables, need)?;
    cx.commit()?;
    let text = |s: &str| Value::bytes(s.as_bytes());
    let mut rows = Vec::new();
    for (db, table) in named {
        let label = text(&format!("{db}.{table}"));
        let (is_table, is_view) = {
            let cat = cx.server.engine.catalog();
            let mysql = crate::mysqlschema::MysqlTable::named(&table)
                .ok()
                .filter(|_| crate::mysqlschema::is_database(&db));
            (
                mysql.is_some_and(|t| !t.is_view()) || cat.table_by_name(&db, &table).is_some(),
                mysql.is_some_and(|t| t.is_view()) || cat.view(&db, &table).is_some(),
            )
        };
        let mut row = |kind: &str, msg: &str| {
            rows.push(vec![label.clone(), text(op), text(kind), text(msg)]);
        };
        if (is_view && op == "check") || (is_table && for_upgrade) {
            row("status", "OK");
        } else if is_table {
            row(
                "note",
                &format!("The storage engine for the table doesn't support {op}"),
            );
        } else {
            let e = if is_view {
                format!("'{db}.{table}' is not of type 'BASE TABLE'")
            } else {
                format!("Table '{db}.{table}' doesn't exist")
            };
            row("Error", &e);
            row("status", "Operation failed");
        }
    }
    let columns = ["Table", "Op", "Msg_type", "Msg_text"]
        .iter()
        .map(|n| Column::new_text(n))
        .collect();
    Ok(Output::rows(columns, rows))
}

/// The sum of the rows' CRC-32s (module docs), read through the session's transaction or a
/// fresh snapshot.
fn table_checksum(cx: &mut ExecContext, def: &TableDef) -> Result<u32, SqlError> {
    let layout = Layout::of(def);
    let own = cx.txn.is_none();
    let mut txn = match cx.txn.take() {
        Some(t) => t,
        None => cx.server.engine.begin(),
    };
    let mut sum = 0u32;
    let mut err = None;
    let mut buf = Vec::new();
    let r = txn.scan_with(
        def.id,
        &IndexRef::Primary,
        &KeyRange::all(),
        None,
        |row| match cx.guard.check().and_then(|_| layout.row_crc(row, &mut buf)) {
            Ok(crc) => {
                sum = sum.wrapping_add(crc);
                ControlFlow::Continue(())
            }
            Err(e) => {
                err = Some(e);
                ControlFlow::Break(())
            }
        },
    );
    if own {
        txn.rollback();
    } else {
        cx.txn = Some(txn);
    }
    r?;
    match err {
        Some(e) => Err(e),
        None => Ok(sum),
    }
}

/// How a table's rows are laid out in MariaDB's record (module docs).
struct Layout {
    columns: Vec<(SqlType, ColumnMeta)>,
    /// Whether the first null bit is the reserved, always-set one (an unpacked table).
    reserved_bit: bool,
    null_bytes: usize,
    /// Bits above the last null bit in the last null byte (set in every row).
    tail_mask: u8,
}

impl Layout {
    fn of(def: &TableDef) -> Layout {
        let packed = def.columns.iter().any(|c| {
            use SqlType::*;
            matches!(
                c.ty,
                VarChar(_)
                    | VarBinary(_)
                    | TinyText
                    | Text
                    | MediumText
                    | LongText
                    | Json
                    | TinyBlob
                    | Blob
                    | MediumBlob
                    | LongBlob
            )
        });
        let nullable = def.columns.iter().filter(|c| c.nullable).count();
        let bits = nullable + usize::from(!packed);
        let last = bits % 8;
        Layout {
            columns: def
                .columns
                .iter()
                .map(|c| (c.ty, c.ty.column_meta(&c.name, c.nullable)))
                .collect(),
            reserved_bit: !packed,
            null_bytes: bits.div_ceil(8),
            tail_mask: if last == 0 { 0 } else { !((1u8 << last) - 1) },
        }
    }

    /// One row's CRC-32 (module docs); `buf` is scratch space.
    fn row_crc(&self, row: &[Value], buf: &mut Vec<u8>) -> Result<u32, SqlError> {
        buf.clear();
        buf.resize(self.null_bytes, 0);
        let mut bit = usize::from(self.reserved_bit);
        if self.reserved_bit {
            buf[0] |= 1;
        }
        for ((_, meta), v) in self.columns.iter().zip(row) {
            if meta.nullable {
                if *v == Value::Null {
                    buf[bit / 8] |= 1 << (bit % 8);
                }
                bit += 1;
            }
        }
        if let Some(last) = buf.last_mut() {
            *last |= self.tail_mask;
        }
        for ((ty, meta), v) in self.columns.iter().zip(row) {
            if *v == Value::Null {
                continue;
            }
            field_bytes(ty, meta, v, buf)?;
        }
        Ok(crc32fast::hash(buf))
    }
}

/// Appends what MariaDB hashes for the non-NULL value `v` of a column (module docs).
fn field_bytes(
    ty: &SqlType,
    meta: &ColumnMeta,
    v: &Value,
    out: &mut Vec<u8>,
) -> Result<(), SqlError> {
    let pad = |out: &mut Vec<u8>, b: &[u8], len: usize, fill: u8| {
        out.extend_from_slice(b);
        out.resize(out.len() + len.saturating_sub(b.len()), fill);
    };
    match (ty, v) {
        (SqlType::Char(n), Value::Bytes(b)) => pad(out, b, *n as usize * CHAR_BYTES, b' '),
        (SqlType::Binary(n), Value::Bytes(b)) => pad(out, b, *n as usize, 0),
        (_, Value::Bytes(b)) => out.extend_from_slice(b),
        _ => encode_value_packed(meta, v, out).map_err(|e| {
            SqlError::of(
                errors::ER_UNKNOWN_ERROR,
                format!(
                    "internal error: CHECKSUM TABLE of column `{}`: {e}",
                    meta.name
                ),
            )
        })?,
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(cols: &[(SqlType, bool)]) -> Layout {
        let columns: Vec<(SqlType, ColumnMeta)> = cols
            .iter()
            .enumerate()
            .map(|(i, (t, n))| (*t, t.column_meta(&format!("c{i}"), *n)))
            .collect();
        let packed = cols
            .iter()
            .any(|(t, _)| matches!(t, SqlType::VarChar(_) | SqlType::Text));
        let bits = cols.iter().filter(|c| c.1).count() + usize::from(!packed);
        let last = bits % 8;
        Layout {
            columns,
            reserved_bit: !packed,
            null_bytes: bits.div_ceil(8),
            tail_mask: if last == 0 { 0 } else { !((1u8 << last) - 1) },
        }
    }

    /// Values MariaDB 10.11.14 printed for the same tables and rows (CHECKSUM TABLE over
    /// single-row tables is the row's CRC-32; two rows add).
    #[test]
    fn row_values_match_mariadb() {
        let int = SqlType::Int { unsigned: false };
        // t1 (a INT NOT NULL): rows 1, 2 -> 1531596814.
        let l = layout(&[(int, false)]);
        let mut b = Vec::new();
        let s = l
            .row_crc(&[Value::Int(1)], &mut b)
            .unwrap()
            .wrapping_add(l.row_crc(&[Value::Int(2)], &mut b).unwrap());
        assert_eq!(s, 1_531_596_814);
        // t2 (a INT): rows 1, NULL -> 3443131540.
        let l = layout(&[(int, true)]);
        let s = l
            .row_crc(&[Value::Int(1)], &mut b)
            .unwrap()
            .wrapping_add(l.row_crc(&[Value::Null], &mut b).unwrap());
        assert_eq!(s, 3_443_131_540);
        // t3 (a INT NOT NULL, v VARCHAR(10)): (1,'ab'), (2,NULL) -> 1669009383.
        let l = layout(&[(int, false), (SqlType::VarChar(10), true)]);
        let s = l
            .row_crc(&[Value::Int(1), Value::bytes(b"ab")], &mut b)
            .unwrap()
            .wrapping_add(l.row_crc(&[Value::Int(2), Value::Null], &mut b).unwrap());
        assert_eq!(s, 1_669_009_383);
        // t4 (a INT NOT NULL, c CHAR(3)): (1,'ab') -> 466736132.
        let l = layout(&[(int, false), (SqlType::Char(3), true)]);
        let s = l
            .row_crc(&[Value::Int(1), Value::bytes(b"ab")], &mut b)
            .unwrap();
        assert_eq!(s, 466_736_132);
        // b2 (a BIT(10) NOT NULL, b INT): (b'1000000001', 7) -> 1975137381.
        let l = layout(&[(SqlType::Bit(10), false), (int, true)]);
        let s = l
            .row_crc(&[Value::UInt(0b10_0000_0001), Value::Int(7)], &mut b)
            .unwrap();
        assert_eq!(s, 1_975_137_381);
    }
}
