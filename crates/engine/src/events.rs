//! Write sets and DDL as MariaDB binlog event groups: what the engine hands the log.
//!
//! Owns [`encode_transaction`] and [`encode_ddl`]. A transaction's group is, as MariaDB 10.11
//! writes it with `binlog_format=ROW`, `binlog_row_image=FULL`:
//!
//! ```text
//! GTID (flags2 FL_TRANSACTIONAL | FL_ALLOW_PARALLEL, commit id placeholder 0)
//! Table_map for every table the transaction touched (order of first change)
//! Write/Update/Delete_rows v1: consecutive changes of one kind to one table batched into one
//!   event of up to ~8 KiB of row images; STMT_END_F on the last one
//! Xid
//! ```
//!
//! and a DDL group is `GTID (FL_STANDALONE | FL_DDL) + Query(statement, default db)`.
//!
//! Invariants: the GTID event is the first event and has a commit id (fixed size), so the log's
//! group-commit leader can patch the GTID and commit id in place (`gtid::patch`); the table id
//! of a Table_map is the engine's `TableId`; the row images are the full canonical rows, so
//! `apply.rs` decoding this group reproduces exactly the [`RowChange`]s it was built from.
//! Every byte format is the binlog crate's (no encoder here).

use onelog_binlog::event::gtid::{FL_ALLOW_PARALLEL, FL_DDL, FL_STANDALONE, FL_TRANSACTIONAL};
use onelog_binlog::event::query::{DEFAULT_SQL_MODE, LOG_EVENT_SUPPRESS_USE_F};
use onelog_binlog::event::table_map::RowMetadata;
use onelog_binlog::event::{GtidEvent, QueryEvent, RowsEventWriter, RowsKind, TableMap, XidEvent};
use onelog_binlog::{ColumnMeta, Gtid};

use crate::catalog::{Catalog, TableId};
use crate::error::EngineError;
use crate::store::RowChange;

thread_local! {
    /// Q_FLAGS2 bits of the session whose DDL this thread logs ([`with_query_flags2`]).
    static QUERY_FLAGS2: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Runs `f` with `flags2` (MariaDB's session option bits, e.g.
/// `query::OPTION_NO_FOREIGN_KEY_CHECKS`) in the Query event of every DDL it logs on this
/// thread, as MariaDB writes the session's options into Q_FLAGS2.
pub fn with_query_flags2<R>(flags2: u32, f: impl FnOnce() -> R) -> R {
    let before = QUERY_FLAGS2.with(|c| c.replace(flags2));
    let r = f();
    QUERY_FLAGS2.with(|c| c.set(before));
    r
}

/// Row image bytes after which a rows event is cut (MariaDB's `binlog_row_event_max_size`
/// default is 8 KiB).
pub const ROWS_EVENT_TARGET: usize = 8 * 1024;

/// The Table_map event of `def`'s table (`columns`: its column metas; `metadata`:
/// `binlog_row_metadata`, which also decides whether the primary key is named).
pub(crate) fn table_map(
    def: &crate::catalog::TableDef,
    columns: Vec<ColumnMeta>,
    metadata: RowMetadata,
) -> TableMap {
    TableMap {
        table_id: def.id,
        flags: 1,
        db: def.db.clone(),
        table: def.name.clone(),
        columns,
        metadata,
        primary_key: if metadata == RowMetadata::Full {
            def.primary_key.clone()
        } else {
            Vec::new()
        },
    }
}

fn encode_err(what: &str, e: impl std::fmt::Display) -> EngineError {
    EngineError::corrupt(format!("encoding the {what}"), e)
}

/// The placeholder GTID event (the log patches the GTID and the commit id).
/// It is the group's first event and has the fixed size the log's `gtid::patch` expects.
fn gtid_event(out: &mut Vec<u8>, domain_id: u32, server_id: u32, flags2: u8, timestamp: u32) {
    debug_assert!(out.is_empty(), "the GTID event comes first");
    GtidEvent {
        gtid: Gtid::new(domain_id, server_id, 0),
        flags2,
        commit_id: Some(0),
        timestamp,
    }
    .encode(out);
    debug_assert_eq!(out.len(), onelog_binlog::event::gtid::GTID_EVENT_LEN);
}

/// Writes the placeholder GTID event of a transaction's group into the empty `out`
/// (the event cache's commit, `event_cache.rs`).
pub(crate) fn transaction_gtid(out: &mut Vec<u8>, domain_id: u32, server_id: u32, timestamp: u32) {
    gtid_event(
        out,
        domain_id,
        server_id,
        FL_TRANSACTIONAL | FL_ALLOW_PARALLEL,
        timestamp,
    );
}

/// The event group of a transaction's change log. `xid` goes into the Xid event; `metadata`
/// (`binlog_row_metadata`) says which optional metadata the Table_map events carry, filled
/// from the catalog: signedness and charsets of the columns, their names and the primary key.
pub fn encode_transaction(
    catalog: &Catalog,
    changes: &[RowChange],
    domain_id: u32,
    server_id: u32,
    timestamp: u32,
    xid: u64,
    metadata: RowMetadata,
) -> Result<Vec<u8>, EngineError> {
    let ids = (domain_id, server_id, timestamp, xid);
    encode_transaction_flagged(catalog, changes, ids, metadata, &|_| 0)
}

/// [`encode_transaction`] with the flags of each change's rows event given (`flags(i)` of
/// `changes[i]`, e.g. `NO_FOREIGN_KEY_CHECKS_F` on the cascaded changes a replica derived): a
/// change of flags starts a new rows event. `ids`: (domain id, server id, timestamp, xid).
pub fn encode_transaction_flagged(
    catalog: &Catalog,
    changes: &[RowChange],
    (domain_id, server_id, timestamp, xid): (u32, u32, u32, u64),
    metadata: RowMetadata,
    flags: &dyn Fn(usize) -> u16,
) -> Result<Vec<u8>, EngineError> {
    let mut out = Vec::with_capacity(128 + changes.len() * 64);
    gtid_event(
        &mut out,
        domain_id,
        server_id,
        FL_TRANSACTIONAL | FL_ALLOW_PARALLEL,
        timestamp,
    );

    // Table maps, in order of first change.
    let mut tables: Vec<(TableId, Vec<ColumnMeta>)> = Vec::new();
    for c in changes {
        let id = c.table();
        if tables.iter().any(|(t, _)| *t == id) {
            continue;
        }
        let def = catalog.table(id).ok_or_else(|| EngineError::NoSuchTable {
            db: String::new(),
            table: format!("#{id}"),
        })?;
        let columns = def.column_metas();
        let map = table_map(def, columns.clone(), metadata);
        map.encode(timestamp, server_id, &mut out)
            .map_err(|e| encode_err("Table_map event", e))?;
        tables.push((id, columns));
    }

    let mut writer: Option<(TableId, RowsEventWriter)> = None;
    for (i, c) in changes.iter().enumerate() {
        let id = c.table();
        let f = flags(i);
        let kind = match c {
            RowChange::Insert { .. } => RowsKind::Write,
            RowChange::Update { .. } => RowsKind::Update,
            RowChange::Delete { .. } => RowsKind::Delete,
        };
        let columns = &tables
            .iter()
            .find(|(t, _)| *t == id)
            .map(|(_, c)| c)
            .ok_or_else(|| encode_err("rows", "no map"))?;
        let reuse = matches!(&writer, Some((t, w)) if *t == id && w.kind() == kind && w.flags() == f && w.rows_len() < ROWS_EVENT_TARGET);
        if !reuse {
            if let Some((_, mut w)) = writer.take() {
                w.finish(timestamp, server_id, false, &mut out);
            }
            let mut w = RowsEventWriter::new(kind, id, columns.len());
            w.set_flags(f);
            writer = Some((id, w));
        }
        let Some((_, w)) = writer.as_mut() else {
            continue;
        };
        let r = match c {
            RowChange::Insert { row, .. } => w.push_row(columns, row),
            RowChange::Update { before, after, .. } => w.push_update(columns, before, after),
            RowChange::Delete { before, .. } => w.push_row(columns, before),
        };
        r.map_err(|e| encode_err("rows event", e))?;
    }
    if let Some((_, mut w)) = writer.take() {
        w.finish(timestamp, server_id, true, &mut out);
    }
    XidEvent { xid }.encode(timestamp, server_id, &mut out);
    Ok(out)
}

/// The event group of `CREATE TABLE ... SELECT` as MariaDB logs it: GTID (DDL, transactional,
/// not standalone) + the Query event `sql` (run in `db`) + the Table_maps and rows events of
/// `changes` (against `catalog`, which has the new table) + Xid; `ids` is (domain id, server
/// id, timestamp).
pub fn encode_ddl_rows(
    catalog: &Catalog,
    changes: &[RowChange],
    (db, sql): (&str, &str),
    (domain_id, server_id, timestamp): (u32, u32, u32),
    metadata: RowMetadata,
) -> Result<Vec<u8>, EngineError> {
    let rows = encode_transaction(
        catalog, changes, domain_id, server_id, timestamp, 0, metadata,
    )?;
    let mut out = Vec::with_capacity(rows.len() + sql.len() + 128);
    gtid_event(
        &mut out,
        domain_id,
        server_id,
        FL_TRANSACTIONAL | FL_DDL,
        timestamp,
    );
    let mut q = QueryEvent::new(db, sql);
    q.sql_mode = DEFAULT_SQL_MODE;
    q.flags2 = QUERY_FLAGS2.with(|c| c.get());
    q.encode_with_flags(timestamp, server_id, 0, &mut out)
        .map_err(|e| encode_err("Query event", e))?;
    let gtid_len = onelog_binlog::event::gtid::GTID_EVENT_LEN;
    out.extend_from_slice(rows.get(gtid_len..).unwrap_or_default());
    Ok(out)
}

/// The event group of a DDL statement: GTID (standalone, DDL) + Query with the default db.
/// `suppress_use` (CREATE/DROP DATABASE, see `CatalogChange::suppresses_use`) sets MariaDB's
/// `LOG_EVENT_SUPPRESS_USE_F`, so `mariadb-binlog` prints no `use db` before the statement.
pub fn encode_ddl(
    db: &str,
    sql: &str,
    suppress_use: bool,
    domain_id: u32,
    server_id: u32,
    timestamp: u32,
) -> Result<Vec<u8>, EngineError> {
    let ids = (domain_id, server_id, timestamp);
    encode_ddl_with_mode(db, sql, suppress_use, DEFAULT_SQL_MODE, ids)
}

/// [`encode_ddl`] with the Query event's `sql_mode` given (an ALTER TABLE that converted
/// values without strict mode logs a mode without STRICT_TRANS_TABLES, so a replica converts
/// them the same way); `ids` is (domain id, server id, timestamp).
pub fn encode_ddl_with_mode(
    db: &str,
    sql: &str,
    suppress_use: bool,
    sql_mode: u64,
    (domain_id, server_id, timestamp): (u32, u32, u32),
) -> Result<Vec<u8>, EngineError> {
    let mut out = Vec::with_capacity(128 + sql.len());
    gtid_event(
        &mut out,
        domain_id,
        server_id,
        FL_STANDALONE | FL_DDL,
        timestamp,
    );
    let flags = if suppress_use {
        LOG_EVENT_SUPPRESS_USE_F
    } else {
        0
    };
    let mut q = QueryEvent::new(db, sql);
    q.sql_mode = sql_mode;
    q.flags2 = QUERY_FLAGS2.with(|c| c.get());
    q.encode_with_flags(timestamp, server_id, flags, &mut out)
        .map_err(|e| encode_err("Query event", e))?;
    Ok(out)
}
