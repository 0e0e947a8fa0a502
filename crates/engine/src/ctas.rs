//! `CREATE TABLE ... SELECT`: a new table and its rows as one DDL, as an `impl Engine` method.
//!
//! Owns [`Engine::create_table_select`] and [`Duplicates`]. Called by the SQL layer's CREATE
//! TABLE executor, which ran the SELECT and derived the columns. Uses the commit path
//! (`commit.rs`) like `ddl.rs`; nothing below imports it.
//!
//! As MariaDB logs it (binlog_format=ROW): one event group, GTID (DDL, not standalone) + the
//! Query event with the generated CREATE TABLE + Table_map and Write_rows of every row + Xid,
//! with the catalog change in `aux` (recovery decodes the rows against the catalog with the
//! table created, `apply.rs`). Built on a scratch root under the exclusive gate and published
//! by the sink in one root, so readers see the table full or not at all; an error (a
//! duplicate key, a value the column refuses) leaves no table and logs nothing.
//!
//! Invariants: the logged rows are exactly the rows the scratch table holds after the
//! duplicates were resolved (asserted), so the sink's apply (create, then insert each) gives
//! the same table.

use std::sync::Arc;

use onelog_binlog::Value;

use crate::catalog::{CatalogChange, TableDef, TableOptions, TableSpec};
use crate::engine::Engine;
use crate::error::EngineError;
use crate::events::encode_ddl_rows;
use crate::key::display_values;
use crate::store::{
    hidden_key, index_has_null, index_key, pk_key, prefix_range, Root, Row, RowChange,
};

/// What `CREATE TABLE ... [IGNORE | REPLACE] SELECT` does with a row whose primary or unique
/// key value an earlier row has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Duplicates {
    /// 1062, nothing created.
    Error,
    /// The later row is skipped.
    Ignore,
    /// The later row replaces the earlier ones it conflicts with.
    Replace,
}

/// What [`Engine::create_table_select`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelectOutcome {
    /// Rows the table holds.
    pub rows: u64,
    /// Rows skipped (IGNORE) or replaced (REPLACE).
    pub duplicates: u64,
    /// The 1062 message of each row IGNORE skipped (MariaDB's warnings).
    pub skipped: Vec<String>,
}

impl Engine {
    /// `CREATE TABLE ... SELECT` (module docs): the table of `spec` and `options` holding
    /// `rows` (full rows in column order; values are coerced to the column types, NULL or 0
    /// in the AUTO_INCREMENT column numbered). `sql` is the generated CREATE TABLE the Query
    /// event carries, run in database `db`. `Ok(None)`: the table exists and `if_not_exists`
    /// (nothing done). 1049/1050 as CREATE TABLE, 1062 for a duplicate under
    /// [`Duplicates::Error`].
    pub fn create_table_select(
        &self,
        (spec, options): (TableSpec, TableOptions),
        rows: Vec<Vec<Value>>,
        duplicates: Duplicates,
        if_not_exists: bool,
        sql: &str,
    ) -> Result<Option<SelectOutcome>, EngineError> {
        let core = self.core();
        core.check_open()?;
        let gate = core.exclusive();
        let root = core.store().current();
        if !root.catalog.has_database(&spec.db) {
            return Err(EngineError::NoSuchDatabase {
                db: spec.db.clone(),
            });
        }
        if root.catalog.table_by_name(&spec.db, &spec.name).is_some() {
            if if_not_exists {
                return Ok(None);
            }
            return Err(EngineError::TableExists {
                table: spec.name.clone(),
            });
        }
        let mut def = TableDef::from_spec(root.catalog.next_table_id(), &spec)?;
        def.options = options;
        let change = CatalogChange::CreateTable { table: def };
        let mut scratch = (*root).clone();
        scratch.apply_catalog_change(&change)?;
        let CatalogChange::CreateTable { table } = &change else {
            unreachable!("built above")
        };
        let def = scratch
            .catalog
            .table(table.id)
            .cloned()
            .ok_or_else(|| EngineError::corrupt("CREATE TABLE ... SELECT", "no table"))?;
        let mut outcome = fill(&mut scratch, &def, rows, duplicates)?;
        let changes: Vec<RowChange> = scratch
            .all_rows(def.id)
            .map(|row| row.map(|row| RowChange::Insert { table: def.id, row }))
            .collect::<Result<_, _>>()?;
        outcome.rows = changes.len() as u64;
        let origin = core.origin();
        let events = encode_ddl_rows(
            &scratch.catalog,
            &changes,
            (&spec.db, sql),
            (origin.domain_id, origin.server_id, origin.timestamp),
            core.row_metadata(),
        )?;
        let record = origin.ddl_record(events, &change, changes);
        debug_assert!(Arc::ptr_eq(&root, &core.store().current()));
        let receipt = core.log_exclusive(&gate, record, || format!("logging `{sql}`"))?;
        origin.used(receipt.gtid);
        core.notifier().logged();
        core.forget_auto_inc(&change);
        Ok(Some(outcome))
    }
}

/// Puts `rows` into `def`'s new (empty) table of `scratch`, each prepared ([`prepare`]), a
/// row repeating a primary or unique key value handled as `duplicates` says.
fn fill(
    scratch: &mut Root,
    def: &TableDef,
    rows: Vec<Vec<Value>>,
    duplicates: Duplicates,
) -> Result<SelectOutcome, EngineError> {
    let mut outcome = SelectOutcome {
        rows: 0,
        duplicates: 0,
        skipped: Vec::new(),
    };
    for row in rows {
        let row = prepare(scratch, def, row)?;
        let mut conflicts = conflicts(scratch, def, &row)?;
        if !conflicts.is_empty() {
            match duplicates {
                Duplicates::Error => return Err(conflicts.swap_remove(0).1),
                Duplicates::Ignore => {
                    outcome.duplicates += 1;
                    outcome.skipped.push(conflicts.swap_remove(0).1.to_string());
                    continue;
                }
                Duplicates::Replace => {
                    for (key, _) in &conflicts {
                        if scratch.delete_row(def, key)?.is_some() {
                            outcome.duplicates += 1;
                        }
                    }
                }
            }
        }
        scratch.put_row(def, Arc::new(row))?;
    }
    Ok(outcome)
}

/// `row` coerced to `def`'s columns, the AUTO_INCREMENT column numbered from the table's
/// counter when NULL or 0, NOT NULL checked.
fn prepare(root: &Root, def: &TableDef, row: Vec<Value>) -> Result<Row, EngineError> {
    if row.len() != def.columns.len() {
        return Err(EngineError::WrongValueCount {
            expected: def.columns.len(),
            got: row.len(),
        });
    }
    let mut out = Vec::with_capacity(row.len());
    for (i, (v, col)) in row.into_iter().zip(&def.columns).enumerate() {
        let mut v = col.ty.coerce(&col.name, v)?;
        if def.auto_increment == Some(i)
            && matches!(v, Value::Null | Value::Int(0) | Value::UInt(0))
        {
            let next = root.table(def.id).map_or(1, |t| t.auto_inc_next);
            v = col.ty.coerce(&col.name, Value::UInt(next))?;
        }
        if v == Value::Null && !col.nullable {
            return Err(EngineError::BadNull {
                column: col.name.clone(),
            });
        }
        out.push(v);
    }
    Ok(out)
}

/// The keys of the rows of `root` that `row` conflicts with (primary key, then each unique
/// index; NULLs never conflict), each with the 1062 it makes.
#[allow(clippy::type_complexity)]
fn conflicts(
    root: &Root,
    def: &TableDef,
    row: &Row,
) -> Result<Vec<(Vec<u8>, EngineError)>, EngineError> {
    let mut out: Vec<(Vec<u8>, EngineError)> = Vec::new();
    if !hidden_key(def) {
        let pk = pk_key(def, row);
        if root.get(def.id, &pk)?.is_some() {
            let vals: Vec<&Value> = def.primary_key.iter().map(|&c| &row[c]).collect();
            let e = EngineError::DuplicateKey {
                entry: display_values(&vals),
                key: "PRIMARY".into(),
            };
            out.push((pk, e));
        }
    }
    for ix in def.indexes.iter().filter(|i| i.unique) {
        if index_has_null(ix, row) {
            continue;
        }
        let mut k = Vec::new();
        index_key(def, ix, row, &mut k);
        let range = prefix_range(&k);
        for item in root.scan_index(def.id, ix.id, &range) {
            let (entry, e) = item?;
            let key = entry[e.klen as usize..].to_vec();
            if out.iter().any(|(k, _)| *k == key) {
                continue;
            }
            let vals: Vec<&Value> = ix.columns.iter().map(|&c| &row[c]).collect();
            let err = EngineError::DuplicateKey {
                entry: display_values(&vals),
                key: ix.name.clone(),
            };
            out.push((key, err));
        }
    }
    Ok(out)
}
