//! The SHOW statements dump tools send about a database's objects: SHOW TABLE STATUS, SHOW
//! OPEN TABLES, SHOW {PROCEDURE | FUNCTION} STATUS, SHOW TRIGGERS, SHOW EVENTS and SHOW
//! ENGINE, with MariaDB 10.11's columns.
//!
//! SHOW TABLE STATUS is `information_schema.TABLES` seen per database (the same rows,
//! `infoschema`: Name is TABLE_NAME, the other 19 columns are TABLES' ENGINE ..
//! TEMPORARY), with a view as MariaDB shows one (every column NULL but Name and Comment
//! `VIEW`). onelog has no stored routines, triggers or events: those statements answer an
//! empty result with MariaDB's columns after the same checks (the database exists and the
//! session holds some privilege on it). SHOW OPEN TABLES lists every table and view (onelog
//! keeps every table open), never in use or name-locked. SHOW ENGINE answers 1286 for an
//! engine SHOW ENGINES does not list, else an empty result (onelog's engine, and InnoDB as
//! its alias, keep no status text: as MariaDB answers for Aria); it needs PROCESS.
//!
//! Invariants: rows have as many values as their column names; a filter (LIKE / WHERE)
//! applies to the result's own columns (`show::filter_rows`).

use onelog_binlog::Value;
use onelog_protocol::errors;

use super::show::{self, text};
use crate::context::ExecContext;
use crate::error::SqlError;
use crate::infoschema::InfoTable;
use crate::parse::admin::NoObjects;

pub(crate) const TABLE_STATUS_COLUMNS: &[&str] = &[
    "Name",
    "Engine",
    "Version",
    "Row_format",
    "Rows",
    "Avg_row_length",
    "Data_length",
    "Max_data_length",
    "Index_length",
    "Data_free",
    "Auto_increment",
    "Create_time",
    "Update_time",
    "Check_time",
    "Collation",
    "Checksum",
    "Create_options",
    "Comment",
    "Max_index_length",
    "Temporary",
];

/// SHOW TABLE STATUS rows of `db` (the current database when None), by name.
pub(crate) fn table_status(
    cx: &ExecContext,
    db: Option<String>,
) -> Result<Vec<Vec<Value>>, SqlError> {
    let db = show::resolve_db(cx, db)?;
    if crate::mysqlschema::is_database(&db) {
        return Ok(crate::mysqlschema::table_status());
    }
    let mut rows: Vec<Vec<Value>> = InfoTable::Tables
        .rows(cx)?
        .into_iter()
        .filter(|r| matches!(&r[1], Value::Bytes(b) if *b == db.as_bytes()))
        .map(|r| {
            let mut out = vec![r[2].clone()];
            out.extend(r[4..].iter().cloned());
            out
        })
        .collect();
    let cat = cx.server.engine.catalog();
    for v in cat.views_in(&db) {
        if rows.iter().any(|r| name_of(r) == v.name.as_bytes()) {
            continue;
        }
        rows.push(view_status(text(v.name.clone())));
    }
    rows.sort_by(|a, b| name_of(a).cmp(name_of(b)));
    debug_assert!(rows.iter().all(|r| r.len() == TABLE_STATUS_COLUMNS.len()));
    Ok(rows)
}

fn name_of(row: &[Value]) -> &[u8] {
    match row.first() {
        Some(Value::Bytes(b)) => b,
        _ => &[],
    }
}

/// A view's SHOW TABLE STATUS row: NULL but its name and Comment `VIEW` (MariaDB 10.11).
pub(crate) fn view_status(name: Value) -> Vec<Value> {
    let mut r = vec![name];
    r.extend(std::iter::repeat_n(Value::Null, 16));
    r.extend([text("VIEW"), Value::Null, Value::Null]);
    r
}

pub(crate) const OPEN_TABLES_COLUMNS: &[&str] = &["Database", "Table", "In_use", "Name_locked"];

/// SHOW OPEN TABLES rows: the tables and views of `db` (every database the session may see
/// when None), by database and name.
pub(crate) fn open_tables(
    cx: &ExecContext,
    db: Option<String>,
) -> Result<Vec<Vec<Value>>, SqlError> {
    let cat = cx.server.engine.catalog();
    let dbs: Vec<String> = match db {
        Some(d) => vec![show::resolve_db(cx, Some(d))?],
        None => cat
            .databases()
            .filter(|d| cx.require_some_on_db(d).is_ok())
            .map(str::to_string)
            .collect(),
    };
    let mut rows = Vec::new();
    for d in dbs {
        let mut names: Vec<&str> = cat
            .tables_in(&d)
            .iter()
            .map(|t| t.name.as_str())
            .chain(cat.views_in(&d).iter().map(|v| v.name.as_str()))
            .collect();
        names.sort_unstable();
        for n in names {
            rows.push(vec![text(d.clone()), text(n), Value::Int(0), Value::Int(0)]);
        }
    }
    Ok(rows)
}

/// The columns of a SHOW statement listing objects onelog does not have.
pub(crate) fn no_objects_columns(what: NoObjects) -> &'static [&'static str] {
    match what {
        NoObjects::ProcedureStatus | NoObjects::FunctionStatus | NoObjects::PackageStatus => &[
            "Db",
            "Name",
            "Type",
            "Definer",
            "Modified",
            "Created",
            "Security_type",
            "Comment",
            "character_set_client",
            "collation_connection",
            "Database Collation",
        ],
        NoObjects::Triggers => &[
            "Trigger",
            "Event",
            "Table",
            "Statement",
            "Timing",
            "Created",
            "sql_mode",
            "Definer",
            "character_set_client",
            "collation_connection",
            "Database Collation",
        ],
        NoObjects::Events => &[
            "Db",
            "Name",
            "Definer",
            "Time zone",
            "Type",
            "Execute at",
            "Interval value",
            "Interval field",
            "Starts",
            "Ends",
            "Status",
            "Originator",
            "character_set_client",
            "collation_connection",
            "Database Collation",
        ],
    }
}

/// SHOW TRIGGERS / SHOW EVENTS check their database (the current one when None: 1046
/// without one) as SHOW TABLES does; SHOW PROCEDURE / FUNCTION STATUS name none.
pub(crate) fn check_no_objects(
    cx: &ExecContext,
    what: NoObjects,
    db: Option<String>,
) -> Result<(), SqlError> {
    match what {
        NoObjects::Triggers | NoObjects::Events => show::resolve_db(cx, db).map(|_| ()),
        NoObjects::ProcedureStatus | NoObjects::FunctionStatus | NoObjects::PackageStatus => Ok(()),
    }
}

pub(crate) const ENGINE_STATUS_COLUMNS: &[&str] = &["Type", "Name", "Status"];

/// SHOW ENGINE name {STATUS | MUTEX | LOGS}: PROCESS needed (1227), 1286 for an engine
/// SHOW ENGINES does not list; no rows.
pub(crate) fn check_engine(cx: &ExecContext, name: &str) -> Result<(), SqlError> {
    cx.require_global(crate::privilege::PROCESS, "PROCESS")?;
    let known = show::engines()
        .iter()
        .any(|r| matches!(&r[0], Value::Bytes(b) if b.eq_ignore_ascii_case(name.as_bytes())));
    if known {
        Ok(())
    } else {
        Err(SqlError::of(
            errors::ER_UNKNOWN_STORAGE_ENGINE,
            format!("Unknown storage engine '{name}'"),
        ))
    }
}
