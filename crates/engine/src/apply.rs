//! Applying logged event groups to the table store: THE recovery path and the replica path.
//!
//! Owns [`decode_record`] (event group bytes + `aux` -> [`DecodedRecord`]: the GTID event, and
//! either the DDL's [`CatalogChange`] and statement or the [`RowChange`]s) and
//! [`apply_record`] (a decoded log record applied onto a [`Root`]).
//!
//! Rules:
//! - a rows event's table is found by the Table_map's `db` and `table` names in the catalog
//!   the group is applied to (not by table id), so groups from another server apply too;
//!   the column count must match, and each value is coerced to the column type (without the
//!   Table_map's signedness metadata, `binlog_row_metadata=NO_LOG` as onelog and MariaDB
//!   write by default, an UNSIGNED integer decodes as a negative signed one: read back by the
//!   column's width);
//! - Write_rows = insert-or-replace by primary key, Update_rows = find the row by the before
//!   image's primary key and replace it with the after image (an update of a missing row is an
//!   error), Delete_rows = remove by the before image's primary key (missing: error); a table
//!   without primary key: insert a new row, and find the row by the whole before image
//!   (any one of identical rows);
//! - an `aux` starting with [`REPLICATED_AUX`] marks a record a replica applied: it moves the
//!   root's `slave_pos` (`@@gtid_slave_pos`) to its GTID; the rest of `aux` is read as below;
//! - a DDL group (GTID flag FL_DDL, or a non-empty `aux`) applies the `aux` catalog change; a
//!   DDL group without one cannot be applied (onelog does not parse SQL here); the rows events
//!   of a `CREATE TABLE ... SELECT` group (`ctas.rs`) follow, decoded against the catalog with
//!   the change applied;
//! - errors name the GTID and the LSN of the record.
//!
//! Invariants: a record that fails to apply may leave the root half changed, so callers apply
//! onto a root they discard on error (recovery fails to open, a replica stops); after
//! [`apply_record`] the root's LSN is the record's end LSN, which only moves forward, and its GTID
//! state holds the record's GTID (asserted there).

use std::sync::Arc;

use onelog_binlog::event::gtid::FL_DDL;
use onelog_binlog::event::{GtidEvent, QueryEvent, Rows};
use onelog_binlog::{decode_group, GroupItem, Gtid, Value};
use onelog_log::Lsn;

use crate::catalog::{Catalog, CatalogChange, SqlType, TableDef};
use crate::error::EngineError;
use crate::store::{Root, Row, RowChange};

/// A decoded log record.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodedRecord {
    pub gtid_event: GtidEvent,
    pub body: DecodedBody,
    /// A replica applied it (its `aux` starts with [`REPLICATED_AUX`]): it moves
    /// `gtid_slave_pos`.
    pub replicated: bool,
}

/// The first bytes of the `aux` of a record a replica applied from its primary (a
/// transaction's `aux` is otherwise empty; a DDL's catalog change follows the marker). A
/// catalog change starts with its format byte (1 or 2), never with this.
pub const REPLICATED_AUX: &[u8] = &[0xF7, b'R'];

/// Splits `aux` into (replicated, the rest).
pub fn split_aux(aux: &[u8]) -> (bool, &[u8]) {
    match aux.strip_prefix(REPLICATED_AUX) {
        Some(rest) => (true, rest),
        None => (false, aux),
    }
}

/// What a record does.
#[allow(clippy::large_enum_variant)] // one per record; DDL is rare
#[derive(Debug, Clone, PartialEq)]
pub enum DecodedBody {
    /// A transaction's row changes, in log order.
    Rows(Vec<RowChange>),
    /// A DDL statement and its catalog change, and the rows `CREATE TABLE ... SELECT` put
    /// into the table it creates (empty for other DDL).
    Ddl {
        change: CatalogChange,
        query: QueryEvent,
        rows: Vec<RowChange>,
    },
}

/// A negative integer read for an UNSIGNED column, read back as the unsigned value of the
/// column's width: without the Table_map's SIGNEDNESS metadata (`binlog_row_metadata=NO_LOG`,
/// MariaDB's default) a rows event decodes every integer as signed, as MariaDB's own
/// `mariadb-binlog` prints them; the catalog knows the column is unsigned.
fn as_unsigned(ty: SqlType, v: Value) -> Value {
    let bits = match ty {
        SqlType::TinyInt { unsigned: true } => 8,
        SqlType::SmallInt { unsigned: true } => 16,
        SqlType::MediumInt { unsigned: true } => 24,
        SqlType::Int { unsigned: true } => 32,
        SqlType::BigInt { unsigned: true } => 64,
        _ => return v,
    };
    match v {
        Value::Int(i) if i < 0 && (bits == 64 || i >= -(1i64 << (bits - 1))) => {
            Value::UInt((i as u64) & (u64::MAX >> (64 - bits)))
        }
        v => v,
    }
}

fn coerce_row(def: &TableDef, image: Vec<Value>) -> Result<Row, String> {
    if image.len() != def.columns.len() {
        return Err(format!(
            "row image of {} has {} columns, the table has {}",
            def.qualified_name(),
            image.len(),
            def.columns.len()
        ));
    }
    let mut row = Vec::with_capacity(image.len());
    for (v, col) in image.into_iter().zip(&def.columns) {
        let v = col
            .ty
            .coerce(&col.name, as_unsigned(col.ty, v))
            .map_err(|e| format!("{}: {e}", def.qualified_name()))?;
        if v == Value::Null && !col.nullable {
            return Err(format!(
                "{}: NULL in NOT NULL column {}",
                def.qualified_name(),
                col.name
            ));
        }
        row.push(v);
    }
    Ok(row)
}

/// Decodes an event group (and its `aux`) against `catalog` (the catalog it applies to).
pub fn decode_record(
    catalog: &Catalog,
    events: &[u8],
    aux: &[u8],
) -> Result<DecodedRecord, String> {
    let (replicated, aux) = split_aux(aux);
    let group = decode_group(events).map_err(|e| format!("bad event group: {e}"))?;
    let is_ddl = group.gtid.flags2 & FL_DDL != 0 || !aux.is_empty();
    if is_ddl {
        return Ok(DecodedRecord {
            gtid_event: group.gtid,
            body: decode_ddl(catalog, group.statements, aux)?,
            replicated,
        });
    }
    let mut changes = Vec::new();
    for item in group.statements {
        let (table, event) = match item {
            GroupItem::Rows { table, event } => (table, event),
            GroupItem::Query(q) => {
                let stmt = q.query.trim();
                if stmt.eq_ignore_ascii_case("BEGIN") || stmt.eq_ignore_ascii_case("COMMIT") {
                    continue;
                }
                return Err(format!("statement-based event cannot be applied: {stmt}"));
            }
            _ => continue,
        };
        let full = |p: &Option<Vec<bool>>| p.as_ref().is_none_or(|v| v.iter().all(|b| *b));
        if !event.columns_present.iter().all(|b| *b) || !full(&event.columns_present_after) {
            return Err(format!(
                "rows event for {}.{} without full row images (binlog_row_image=FULL is needed)",
                table.db, table.table
            ));
        }
        let def = catalog
            .table_by_name(&table.db, &table.table)
            .ok_or_else(|| format!("rows for unknown table {}.{}", table.db, table.table))?;
        push_row_changes(def, event.rows, &mut changes)?;
    }
    Ok(DecodedRecord {
        gtid_event: group.gtid,
        body: DecodedBody::Rows(changes),
        replicated,
    })
}

/// The rows-event flags of each row change [`decode_record`] decodes from `events`, in its
/// order (a replica's foreign key handling: `NO_FOREIGN_KEY_CHECKS_F`).
pub fn rows_flags(events: &[u8]) -> Result<Vec<u16>, String> {
    let group = decode_group(events).map_err(|e| format!("bad event group: {e}"))?;
    let mut out = Vec::new();
    for item in group.statements {
        if let GroupItem::Rows { event, .. } = item {
            let n = match &event.rows {
                Rows::Write(r) | Rows::Delete(r) => r.len(),
                Rows::Update(p) => p.len(),
            };
            out.extend(std::iter::repeat_n(event.flags, n));
        }
    }
    Ok(out)
}

/// The body of a DDL group: its Query event, the catalog change in `aux`, and the rows events
/// of a `CREATE TABLE ... SELECT` (decoded against `catalog` with the change applied).
fn decode_ddl(
    catalog: &Catalog,
    statements: Vec<GroupItem>,
    aux: &[u8],
) -> Result<DecodedBody, String> {
    let query = statements
        .iter()
        .find_map(|s| match s {
            GroupItem::Query(q) => Some(q.clone()),
            _ => None,
        })
        .ok_or("DDL group without a Query event")?;
    if aux.is_empty() {
        return Err(format!(
            "DDL group without onelog's catalog change cannot be applied (statement: {})",
            query.query
        ));
    }
    let change = CatalogChange::decode(aux).map_err(|e| format!("bad catalog change: {e}"))?;
    let mut rows = Vec::new();
    let mut after: Option<Catalog> = None;
    for item in statements {
        let GroupItem::Rows { table, event } = item else {
            continue;
        };
        if after.is_none() {
            after = Some(catalog.apply(&change).map_err(|e| e.to_string())?);
        }
        let def = after
            .as_ref()
            .and_then(|c| c.table_by_name(&table.db, &table.table))
            .ok_or_else(|| format!("rows for unknown table {}.{}", table.db, table.table))?;
        push_row_changes(def, event.rows, &mut rows)?;
    }
    Ok(DecodedBody::Ddl {
        change,
        query,
        rows,
    })
}

/// Appends the row changes of one rows event of table `def`, its images coerced to the
/// column types.
fn push_row_changes(
    def: &TableDef,
    rows: Rows,
    changes: &mut Vec<RowChange>,
) -> Result<(), String> {
    let id = def.id;
    match rows {
        Rows::Write(rows) => {
            for r in rows {
                changes.push(RowChange::Insert {
                    table: id,
                    row: Arc::new(coerce_row(def, r)?),
                });
            }
        }
        Rows::Update(pairs) => {
            for (b, a) in pairs {
                changes.push(RowChange::Update {
                    table: id,
                    before: Arc::new(coerce_row(def, b)?),
                    after: Arc::new(coerce_row(def, a)?),
                });
            }
        }
        Rows::Delete(rows) => {
            for r in rows {
                changes.push(RowChange::Delete {
                    table: id,
                    before: Arc::new(coerce_row(def, r)?),
                });
            }
        }
    }
    Ok(())
}

/// Applies a decoded body onto `root` (catalog and rows); the caller sets LSN and GTID state.
pub fn apply_body(root: &mut Root, body: &DecodedBody) -> Result<(), String> {
    apply_body_with(root, body, &mut |_, _| Ok(false))
}

/// Applies a catalog change in place of [`Root::apply_catalog_change`]: true when it did
/// (recovery builds an index over rows in the paged store's base there, `index_build.rs`),
/// false to let the root apply it.
pub(crate) type ApplyDdl<'a> =
    dyn FnMut(&mut Root, &CatalogChange) -> Result<bool, EngineError> + 'a;

/// [`apply_body`], offering each catalog change to `ddl` first.
fn apply_body_with(
    root: &mut Root,
    body: &DecodedBody,
    ddl: &mut ApplyDdl<'_>,
) -> Result<(), String> {
    match body {
        DecodedBody::Rows(changes) => {
            for c in changes {
                root.apply_row_change(c)?;
            }
        }
        DecodedBody::Ddl { change, rows, .. } => {
            if !ddl(root, change).map_err(|e| e.to_string())? {
                root.apply_catalog_change(change)
                    .map_err(|e| e.to_string())?;
            }
            for c in rows {
                root.apply_row_change(c)?;
            }
        }
    }
    Ok(())
}

/// Applies one log record (`events`, `aux`, logged with `gtid` at `lsn..end_lsn`) onto `root`
/// and advances the root's LSN and GTID state. On error `root` may be partly changed: callers
/// apply to a clone they drop on error.
pub fn apply_record(
    root: &mut Root,
    events: &[u8],
    aux: &[u8],
    gtid: Option<Gtid>,
    lsn: Lsn,
    end_lsn: Lsn,
) -> Result<(), EngineError> {
    apply_record_with(root, (events, aux), gtid, (lsn, end_lsn), &mut |_, _| {
        Ok(false)
    })
}

/// [`apply_record`], offering a DDL record's catalog change to `ddl` first.
pub(crate) fn apply_record_with(
    root: &mut Root,
    (events, aux): (&[u8], &[u8]),
    gtid: Option<Gtid>,
    (lsn, end_lsn): (Lsn, Lsn),
    ddl: &mut ApplyDdl<'_>,
) -> Result<(), EngineError> {
    let fail = |reason: String| EngineError::Apply {
        gtid,
        lsn: Some(lsn),
        reason,
    };
    let decoded = decode_record(&root.catalog, events, aux).map_err(fail)?;
    apply_body_with(root, &decoded.body, ddl).map_err(fail)?;
    let recorded = gtid.unwrap_or(decoded.gtid_event.gtid);
    root.gtid_state.record(recorded);
    if decoded.replicated {
        root.slave_pos.set(recorded);
    }
    debug_assert!(root.lsn <= end_lsn, "the root's LSN moves forward");
    root.lsn = end_lsn;
    debug_assert_eq!(root.gtid_state.last(recorded.domain_id), Some(recorded));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{ColumnSpec, IndexSpec, SqlType, TableSpec};
    use crate::events::{encode_ddl, encode_transaction};
    use onelog_binlog::event::table_map::RowMetadata;

    fn root() -> Root {
        let mut root = Root::empty();
        root.apply_catalog_change(&CatalogChange::CreateDatabase { name: "d".into() })
            .unwrap();
        for (id, name) in [(1, "a"), (2, "b")] {
            let spec = TableSpec {
                db: "d".into(),
                name: name.into(),
                columns: vec![
                    ColumnSpec::new("id", SqlType::BigInt { unsigned: true }).not_null(),
                    ColumnSpec::new("v", SqlType::VarChar(300)),
                ],
                primary_key: vec!["id".into()],
                indexes: vec![IndexSpec::new("v", &["v"], false)],
            };
            let table = TableDef::from_spec(id, &spec).unwrap();
            root.apply_catalog_change(&CatalogChange::CreateTable { table })
                .unwrap();
        }
        root
    }

    fn row(id: u64, v: &str) -> Arc<Row> {
        Arc::new(vec![Value::UInt(id), Value::bytes(v.as_bytes())])
    }

    #[test]
    fn unsigned_values_survive_every_binlog_row_metadata_level() {
        let root = root();
        let changes: Vec<RowChange> = [u64::MAX, 1 << 63, 5]
            .into_iter()
            .map(|id| RowChange::Insert {
                table: 1,
                row: row(id, "v"),
            })
            .collect();
        for m in RowMetadata::ALL {
            let events = encode_transaction(&root.catalog, &changes, 0, 1, 0, 7, m).unwrap();
            let decoded = decode_record(&root.catalog, &events, &[]).unwrap();
            assert_eq!(decoded.body, DecodedBody::Rows(changes.clone()), "{m:?}");
        }
    }

    #[test]
    fn negative_reads_of_unsigned_columns_take_the_columns_width() {
        let t = |unsigned| SqlType::TinyInt { unsigned };
        assert_eq!(as_unsigned(t(true), Value::Int(-1)), Value::UInt(255));
        assert_eq!(as_unsigned(t(true), Value::Int(-128)), Value::UInt(128));
        assert_eq!(as_unsigned(t(false), Value::Int(-1)), Value::Int(-1));
        let m = SqlType::MediumInt { unsigned: true };
        assert_eq!(as_unsigned(m, Value::Int(-1)), Value::UInt(16_777_215));
        let i = SqlType::Int { unsigned: true };
        assert_eq!(as_unsigned(i, Value::Int(-2)), Value::UInt(4_294_967_294));
        // Out of the signed width: not a signed read of this column, left to coerce's error.
        assert_eq!(
            as_unsigned(i, Value::Int(-(1 << 40))),
            Value::Int(-(1 << 40))
        );
    }

    #[test]
    fn encoded_transaction_decodes_to_the_same_changes_across_batches_and_tables() {
        let root = root();
        let mut changes = Vec::new();
        for i in 0..200 {
            changes.push(RowChange::Insert {
                table: 1 + i % 2,
                row: row(i, &"x".repeat(100)),
            });
        }
        for i in 0..100 {
            changes.push(RowChange::Insert {
                table: 1,
                row: row(1000 + i, &"y".repeat(250)),
            });
        }
        changes.push(RowChange::Update {
            table: 1,
            before: row(0, &"x".repeat(100)),
            after: row(5000, "moved"),
        });
        changes.push(RowChange::Delete {
            table: 2,
            before: row(1, &"x".repeat(100)),
        });
        let events =
            encode_transaction(&root.catalog, &changes, 0, 1, 0, 7, RowMetadata::Full).unwrap();
        let group = decode_group(&events).unwrap();
        assert!(group.is_committed_transaction());
        let rows_events = group
            .statements
            .iter()
            .filter(|s| matches!(s, GroupItem::Rows { .. }))
            .count();
        // 200 alternating single-row events, 100 rows of ~256 bytes cut at 8 KiB, one update,
        // one delete.
        assert!(rows_events > 200 + 3 + 2, "{rows_events}");
        let decoded = decode_record(&root.catalog, &events, &[]).unwrap();
        assert_eq!(decoded.body, DecodedBody::Rows(changes.clone()));
        let mut live = root.clone();
        for c in &changes {
            live.apply_row_change(c).unwrap();
        }
        let mut replayed = root.clone();
        apply_record(
            &mut replayed,
            &events,
            &[],
            Some(Gtid::new(0, 1, 9)),
            100,
            200,
        )
        .unwrap();
        assert_eq!(replayed.dump(), live.dump());
        assert_eq!(
            (replayed.lsn, replayed.gtid_state.last(0)),
            (200, Some(Gtid::new(0, 1, 9)))
        );
    }

    #[test]
    fn apply_errors_name_the_gtid_and_the_lsn() {
        let mut root = root();
        let events = encode_ddl("d", "DROP TABLE a", false, 0, 1, 0).unwrap();
        let err = apply_record(
            &mut root,
            &events,
            &[1, 99],
            Some(Gtid::new(0, 1, 42)),
            4096,
            4200,
        )
        .unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("0-1-42") && msg.contains("LSN 4096"), "{msg}");
        let err = apply_record(
            &mut root,
            &events,
            &[],
            Some(Gtid::new(0, 1, 42)),
            4096,
            4200,
        )
        .unwrap_err();
        assert!(err.to_string().contains("catalog change"), "{err}");
        // A delete of a missing row.
        let changes = vec![RowChange::Delete {
            table: 1,
            before: row(1, "nope"),
        }];
        let events =
            encode_transaction(&root.catalog, &changes, 0, 1, 0, 1, RowMetadata::NoLog).unwrap();
        let err = apply_record(
            &mut root,
            &events,
            &[],
            Some(Gtid::new(0, 1, 43)),
            5000,
            5100,
        )
        .unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("0-1-43") && msg.contains("missing row"),
            "{msg}"
        );
        // Garbage never panics.
        for n in 0..events.len() {
            let _ = apply_record(&mut root, &events[..n], &[], None, 0, 0);
        }
    }
}
