//! FOREIGN KEY constraints with InnoDB's semantics: the definitions CREATE TABLE declares
//! (named, validated against the parent, given an index on the child's columns), their text
//! in SHOW CREATE TABLE and in errors, the DDL checks on a referenced parent (DROP TABLE 1451,
//! TRUNCATE 1701, DROP COLUMN 1829 / DROP INDEX 1553), and the row checks of DML: a child row
//! written needs its parent row (1452), a parent row deleted or whose referenced key changes
//! must have no child row (1451, RESTRICT / NO ACTION).
//!
//! Invariants:
//! - `foreign_key_checks=0` (session) turns every check off, as in MariaDB: a table may then
//!   reference a missing parent, rows are written unchecked, parents dropped;
//! - a child row's parent is read with a shared row lock that the transaction holds until it
//!   ends, and a parent's children with shared locks: a concurrent transaction then cannot
//!   delete the parent (it waits for the exclusive lock), nor add a child of a parent being
//!   deleted (its shared lock on the parent waits), so no committed state breaks a constraint;
//! - a row with NULL in any of its foreign key columns references nothing (passes);
//! - ON DELETE/UPDATE CASCADE and SET NULL are refused (1235) at CREATE TABLE: MariaDB does
//!   not binlog the cascaded changes (InnoDB makes them below the binlog, the replica's
//!   InnoDB re-derives them), which onelog's replica apply cannot yet do (docs/SQL.md).
//!
//! Callers: `ddl.rs` (CREATE/DROP/TRUNCATE/ALTER), `dml.rs` (every row write), `show.rs`.

use std::ops::ControlFlow;

use onelog_binlog::Value;
use onelog_engine::{
    Catalog, FkAction, ForeignKeyDef, IndexRef, KeyRange, LockMode, SqlType, TableDef, Transaction,
};
use onelog_protocol::errors;
use sqlparser::ast;

use crate::context::ExecContext;
use crate::error::SqlError;
use crate::sysvar::{get_var, VarScope};

/// Whether the session checks foreign keys (`foreign_key_checks`, default ON).
pub(crate) fn checks_on(cx: &ExecContext) -> bool {
    !matches!(
        get_var(cx, "foreign_key_checks", VarScope::Session),
        Ok(Value::Int(0))
    )
}

/// Runs a DDL's engine call so that its Query event carries the session's
/// `foreign_key_checks=0` (Q_FLAGS2 `OPTION_NO_FOREIGN_KEY_CHECKS`): a replica then runs it
/// unchecked too, as MariaDB's does (a CREATE TABLE naming a parent not created yet).
pub(crate) fn logged_with_checks<R>(cx: &ExecContext, f: impl FnOnce() -> R) -> R {
    if checks_on(cx) {
        f()
    } else {
        let flag = onelog_binlog::event::query::OPTION_NO_FOREIGN_KEY_CHECKS;
        onelog_engine::events::with_query_flags2(flag, f)
    }
}

fn quote(s: &str) -> String {
    format!("`{}`", s.replace('`', "``"))
}

fn quote_list(names: &[String]) -> String {
    names
        .iter()
        .map(|n| quote(n))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `CONSTRAINT `x` FOREIGN KEY (`a`) REFERENCES `p` (`id`)` (the parent qualified by its
/// database when it is not the child's, or when `qualify`), without the actions.
fn constraint_text(child_db: &str, fk: &ForeignKeyDef, qualify: bool) -> String {
    let parent = if qualify || fk.parent_db != child_db {
        format!("{}.{}", quote(&fk.parent_db), quote(&fk.parent_table))
    } else {
        quote(&fk.parent_table)
    };
    format!(
        "CONSTRAINT {} FOREIGN KEY ({}) REFERENCES {} ({})",
        quote(&fk.name),
        quote_list(&fk.columns),
        parent,
        quote_list(&fk.parent_columns)
    )
}

/// The constraint's line of SHOW CREATE TABLE (with its ON DELETE / ON UPDATE clauses).
pub(crate) fn show_line(child_db: &str, fk: &ForeignKeyDef) -> String {
    let mut s = format!("  {}", constraint_text(child_db, fk, false));
    if let Some(a) = fk.on_delete.sql() {
        s.push_str(" ON DELETE ");
        s.push_str(a);
    }
    if let Some(a) = fk.on_update.sql() {
        s.push_str(" ON UPDATE ");
        s.push_str(a);
    }
    s
}

/// `(`db`.`child`, CONSTRAINT ...)`: what 1451/1452 name.
fn error_detail(child: &TableDef, fk: &ForeignKeyDef) -> String {
    format!(
        "({}.{}, {})",
        quote(&child.db),
        quote(&child.name),
        constraint_text(&child.db, fk, false)
    )
}

fn no_parent(child: &TableDef, fk: &ForeignKeyDef) -> SqlError {
    SqlError::of(
        errors::ER_NO_REFERENCED_ROW_2,
        format!(
            "Cannot add or update a child row: a foreign key constraint fails {}",
            error_detail(child, fk)
        ),
    )
}

fn has_children(child: &TableDef, fk: &ForeignKeyDef) -> SqlError {
    SqlError::of(
        errors::ER_ROW_IS_REFERENCED_2,
        format!(
            "Cannot delete or update a parent row: a foreign key constraint fails {}",
            error_detail(child, fk)
        ),
    )
}

/// 1005 errno 150, InnoDB's answer to any malformed foreign key.
fn incorrectly_formed(db: &str, table: &str) -> SqlError {
    SqlError::of(
        errors::ER_CANT_CREATE_TABLE,
        format!(
            "Can't create table {}.{} (errno: 150 \"Foreign key constraint is incorrectly formed\")",
            quote(db),
            quote(table)
        ),
    )
}

/// A foreign key of CREATE TABLE as parsed, before validation.
pub(crate) struct Declared {
    /// `CONSTRAINT x`, else `FOREIGN KEY x (...)` (MariaDB names the constraint and the index
    /// it adds after either); None: generated.
    pub name: Option<String>,
    pub def: ForeignKeyDef,
}

fn action(a: &Option<ast::ReferentialAction>) -> Result<FkAction, SqlError> {
    Ok(match a {
        None | Some(ast::ReferentialAction::Restrict) => FkAction::Restrict,
        // MariaDB accepts SET DEFAULT, shows no clause and refuses the parent change.
        Some(ast::ReferentialAction::SetDefault) => FkAction::Restrict,
        Some(ast::ReferentialAction::NoAction) => FkAction::NoAction,
        Some(ast::ReferentialAction::Cascade) => {
            return Err(SqlError::unsupported("FOREIGN KEY ... CASCADE"))
        }
        Some(ast::ReferentialAction::SetNull) => {
            return Err(SqlError::unsupported("FOREIGN KEY ... SET NULL"))
        }
    })
}

/// A `FOREIGN KEY` table constraint (or a column's `REFERENCES`, `columns` then the column)
/// of a table in database `db`.
pub(crate) fn declared(
    db: &str,
    fk: &ast::ForeignKeyConstraint,
    columns: Option<Vec<String>>,
) -> Result<Declared, SqlError> {
    if fk.match_kind.is_some() || fk.characteristics.is_some() {
        return Err(SqlError::unsupported(
            "FOREIGN KEY with MATCH or DEFERRABLE",
        ));
    }
    let parts = crate::expr::object_name_parts(&fk.foreign_table);
    let (parent_db, parent_table) = match parts.as_slice() {
        [t] => (db.to_string(), t.clone()),
        [d, t] => (d.clone(), t.clone()),
        _ => return Err(SqlError::syntax(&fk.foreign_table.to_string())),
    };
    let columns: Vec<String> =
        columns.unwrap_or_else(|| fk.columns.iter().map(|c| c.value.clone()).collect());
    let parent_columns: Vec<String> = fk
        .referred_columns
        .iter()
        .map(|c| c.value.clone())
        .collect();
    if columns.len() != parent_columns.len() {
        let name = fk
            .name
            .as_ref()
            .map_or("foreign key without name", |n| &n.value);
        return Err(SqlError::of(
            errors::ER_WRONG_FK_DEF,
            format!(
                "Incorrect foreign key definition for '{name}': Key reference and table reference don't match"
            ),
        ));
    }
    Ok(Declared {
        name: fk
            .name
            .as_ref()
            .or(fk.index_name.as_ref())
            .map(|n| n.value.clone()),
        def: ForeignKeyDef {
            name: String::new(),
            columns,
            parent_db,
            parent_table,
            parent_columns,
            on_delete: action(&fk.on_delete)?,
            on_update: action(&fk.on_update)?,
        },
    })
}

/// Whether a child column of type `c` may reference a parent column of type `p` (InnoDB:
/// integers of one type and signedness, CHAR/VARCHAR of one collation whatever their
/// lengths, BINARY/VARBINARY alike; other types equal).
fn compatible(c: &onelog_engine::ColumnDef, p: &onelog_engine::ColumnDef) -> bool {
    use SqlType::*;
    match (c.ty, p.ty) {
        (Char(_) | VarChar(_), Char(_) | VarChar(_)) => c.collation == p.collation,
        (Binary(_) | VarBinary(_), Binary(_) | VarBinary(_)) => true,
        (a, b) => a == b && c.collation == p.collation,
    }
}

/// Whether some key of `t` (its primary key or an index) starts with the columns `cols`.
pub(crate) fn key_starting_with(t: &TableDef, cols: &[usize]) -> Option<IndexRef> {
    let starts = |k: &[usize]| k.len() >= cols.len() && k[..cols.len()] == *cols;
    if starts(&t.primary_key) {
        return Some(IndexRef::Primary);
    }
    t.indexes
        .iter()
        .find(|i| starts(&i.columns))
        .map(|i| IndexRef::Secondary(i.name.clone()))
}

fn positions(t: &TableDef, names: &[String]) -> Option<Vec<usize>> {
    names.iter().map(|n| t.column_index(n)).collect()
}

/// InnoDB's checks of a new table's foreign keys (`child` is the table as it will be
/// created, with every index): the parent exists (unless `foreign_key_checks=0`; it may be
/// `child` itself), its columns exist and start one of its keys, the column types match, the
/// constraint names are unique in the database. Each failure is 1005 errno 150 (121 for a
/// name another table uses).
pub(crate) fn validate(cat: &Catalog, child: &TableDef, checks: bool) -> Result<(), SqlError> {
    let fks = &child.options.foreign_keys;
    let bad = || incorrectly_formed(&child.db, &child.name);
    for (i, fk) in fks.iter().enumerate() {
        if fks[..i]
            .iter()
            .any(|g| g.name.eq_ignore_ascii_case(&fk.name))
        {
            return Err(bad());
        }
        let taken = cat.tables_in(&child.db).into_iter().any(|t| {
            t.name != child.name
                && t.options
                    .foreign_keys
                    .iter()
                    .any(|g| g.name.eq_ignore_ascii_case(&fk.name))
        });
        if taken {
            return Err(SqlError::of(
                errors::ER_CANT_CREATE_TABLE,
                format!(
                    "Can't create table {}.{} (errno: 121 \"Duplicate key on write or update\")",
                    quote(&child.db),
                    quote(&child.name)
                ),
            ));
        }
        let self_ref = fk.parent_db == child.db && fk.parent_table == child.name;
        let parent = if self_ref {
            child
        } else {
            match cat.table_by_name(&fk.parent_db, &fk.parent_table) {
                Some(p) => &**p,
                None if checks => return Err(bad()),
                None => continue,
            }
        };
        let cols = positions(child, &fk.columns).ok_or_else(bad)?;
        let pcols = positions(parent, &fk.parent_columns).ok_or_else(bad)?;
        if cols.len() != pcols.len() || key_starting_with(parent, &pcols).is_none() {
            return Err(bad());
        }
        let types_match = cols
            .iter()
            .zip(&pcols)
            .all(|(&c, &p)| compatible(&child.columns[c], &parent.columns[p]));
        if !types_match {
            return Err(bad());
        }
    }
    Ok(())
}

/// InnoDB's generated name for the `n`th unnamed constraint of `table`.
pub(crate) fn generated_name(table: &str, n: usize) -> String {
    format!("{table}_ibfk_{n}")
}

/// The foreign keys of other tables that reference `t` (`db`.`name`), with their child.
fn referencing<'a>(
    cat: &'a Catalog,
    db: &'a str,
    name: &'a str,
) -> impl Iterator<Item = (&'a TableDef, &'a ForeignKeyDef)> + 'a {
    cat.tables()
        .filter(|c| !c.options.foreign_keys.is_empty())
        .flat_map(move |c| {
            c.options
                .foreign_keys
                .iter()
                .filter(move |fk| fk.parent_db == db && fk.parent_table == name)
                .map(move |fk| (&**c, fk))
        })
}

/// DROP TABLE of a parent another table references: 1451 (MariaDB's short text).
pub(crate) fn check_drop(cat: &Catalog, db: &str, name: &str) -> Result<(), SqlError> {
    if referencing(cat, db, name).any(|(c, _)| !(c.db == db && c.name == name)) {
        return Err(SqlError::of(
            errors::ER_ROW_IS_REFERENCED_2,
            "Cannot delete or update a parent row: a foreign key constraint fails",
        ));
    }
    Ok(())
}

/// DROP DATABASE of a database with a parent a table of another database references: 1451
/// (MariaDB's short text), nothing dropped.
pub(crate) fn check_drop_database(cat: &Catalog, db: &str) -> Result<(), SqlError> {
    let outside = cat
        .tables_in(db)
        .into_iter()
        .any(|t| referencing(cat, db, &t.name).any(|(c, _)| c.db != db));
    if outside {
        return Err(SqlError::of(
            errors::ER_ROW_IS_REFERENCED_2,
            "Cannot delete or update a parent row: a foreign key constraint fails",
        ));
    }
    Ok(())
}

/// Whether `db`.`name` has foreign keys or is referenced by one.
pub(crate) fn has_foreign_keys(cat: &Catalog, db: &str, name: &str) -> bool {
    let own = cat
        .table_by_name(db, name)
        .is_some_and(|t| !t.options.foreign_keys.is_empty());
    own || referencing(cat, db, name).next().is_some()
}

/// TRUNCATE of a parent another table references: 1701, naming the constraint.
pub(crate) fn check_truncate(cat: &Catalog, db: &str, name: &str) -> Result<(), SqlError> {
    if let Some((c, fk)) = referencing(cat, db, name).find(|(c, _)| !(c.db == db && c.name == name))
    {
        return Err(SqlError::of(
            errors::ER_TRUNCATE_ILLEGAL_FK,
            format!(
                "Cannot truncate a table referenced in a foreign key constraint ({}.{}, {})",
                quote(&c.db),
                quote(&c.name),
                constraint_text(&c.db, fk, true)
            ),
        ));
    }
    Ok(())
}

/// ALTER TABLE ... DROP COLUMN `col` of `t`: 1829 when another table's foreign key references
/// it, 1553 when one of `t`'s own foreign keys uses it (its index would go).
pub(crate) fn check_drop_column(cat: &Catalog, t: &TableDef, col: &str) -> Result<(), SqlError> {
    let own = t
        .options
        .foreign_keys
        .iter()
        .find(|fk| fk.columns.iter().any(|c| c.eq_ignore_ascii_case(col)));
    if let Some(fk) = own {
        let cols = positions(t, &fk.columns).unwrap_or_default();
        let ix = match key_starting_with(t, &cols) {
            Some(IndexRef::Secondary(n)) => n,
            _ => "PRIMARY".to_string(),
        };
        return Err(drop_index_error(&ix));
    }
    let by = referencing(cat, &t.db, &t.name).find(|(_, fk)| {
        fk.parent_columns
            .iter()
            .any(|c| c.eq_ignore_ascii_case(col))
    });
    if let Some((c, fk)) = by {
        return Err(SqlError::of(
            errors::ER_FK_COLUMN_CANNOT_DROP_CHILD,
            format!(
                "Cannot drop column '{col}': needed in a foreign key constraint '{}' of table {}.{}",
                fk.name,
                quote(&c.db),
                quote(&c.name)
            ),
        ));
    }
    Ok(())
}

fn drop_index_error(ix: &str) -> SqlError {
    SqlError::of(
        errors::ER_DROP_INDEX_FK,
        format!("Cannot drop index '{ix}': needed in a foreign key constraint"),
    )
}

/// DROP INDEX `ix` of `t`: 1553 when a foreign key of `t` (as child, or as parent of another
/// table) needs it and no other key of `t` would serve.
pub(crate) fn check_drop_index(cat: &Catalog, t: &TableDef, ix: &str) -> Result<(), SqlError> {
    let Some(def) = t.index(ix) else {
        return Ok(());
    };
    let mut rest = t.clone();
    rest.indexes.retain(|i| i.id != def.id);
    let served = |names: &[String]| match positions(t, names) {
        Some(cols) => key_starting_with(&rest, &cols).is_some(),
        None => true,
    };
    let own = t.options.foreign_keys.iter().all(|fk| served(&fk.columns));
    let as_parent = referencing(cat, &t.db, &t.name).all(|(_, fk)| served(&fk.parent_columns));
    if own && as_parent {
        Ok(())
    } else {
        Err(drop_index_error(&def.name))
    }
}

/// The values of `cols` in `row`; None when one is NULL (the row then references nothing).
fn key_of(row: &[Value], cols: &[usize]) -> Option<Vec<Value>> {
    let mut out = Vec::with_capacity(cols.len());
    for &c in cols {
        match row.get(c) {
            None | Some(Value::Null) => return None,
            Some(v) => out.push(v.clone()),
        }
    }
    Some(out)
}

/// Whether `t` has a row whose `cols` equal `key`, read with shared locks on what it finds.
fn exists_locked(
    txn: &mut Transaction,
    t: &TableDef,
    cols: &[usize],
    key: Vec<Value>,
) -> Result<bool, SqlError> {
    let ix = key_starting_with(t, cols)
        .ok_or_else(|| SqlError::unsupported("a foreign key whose table lost the key it needs"))?;
    let mut found = false;
    txn.scan_with(
        t.id,
        &ix,
        &KeyRange::prefix(key),
        Some(LockMode::Shared),
        |_| {
            found = true;
            ControlFlow::Break(())
        },
    )?;
    Ok(found)
}

/// A child row written (inserted, or updated with `old` its previous version): every foreign
/// key of `def` whose columns are not NULL (and, for an update, changed) needs its parent row,
/// which stays share-locked (a row may reference itself). 1452 otherwise. Called before the
/// row is written.
pub(crate) fn check_child_row(
    cx: &ExecContext,
    txn: &mut Transaction,
    def: &TableDef,
    row: &[Value],
    old: Option<&[Value]>,
) -> Result<(), SqlError> {
    let cat = cx.server.engine.catalog();
    for fk in &def.options.foreign_keys {
        let Some(cols) = positions(def, &fk.columns) else {
            continue;
        };
        let Some(key) = key_of(row, &cols) else {
            continue;
        };
        if old.is_some_and(|o| cols.iter().all(|&c| o.get(c) == row.get(c))) {
            continue;
        }
        let parent = cat.table_by_name(&fk.parent_db, &fk.parent_table);
        let ok = match parent {
            None => false,
            Some(p) => match positions(p, &fk.parent_columns) {
                // A row may reference itself (InnoDB checks after writing it).
                Some(pcols) if p.id == def.id && key_of(row, &pcols).as_ref() == Some(&key) => true,
                Some(pcols) => exists_locked(txn, p, &pcols, key)?,
                None => false,
            },
        };
        if !ok {
            return Err(no_parent(def, fk));
        }
    }
    Ok(())
}

/// A parent row deleted (`new` None) or updated to `new`: for every foreign key referencing
/// `def` whose referenced values change, no child row may hold the old values (1451). The
/// children found are share-locked. Call before the row changes: a row that references itself
/// holds itself back, as InnoDB finds it.
pub(crate) fn check_parent_row(
    cx: &ExecContext,
    txn: &mut Transaction,
    def: &TableDef,
    row: &[Value],
    new: Option<&[Value]>,
) -> Result<(), SqlError> {
    let cat = cx.server.engine.catalog();
    for (child, fk) in referencing(&cat, &def.db, &def.name) {
        let Some(pcols) = positions(def, &fk.parent_columns) else {
            continue;
        };
        if new.is_some_and(|n| pcols.iter().all(|&c| n.get(c) == row.get(c))) {
            continue;
        }
        let Some(key) = key_of(row, &pcols) else {
            continue;
        };
        let Some(cols) = positions(child, &fk.columns) else {
            continue;
        };
        if exists_locked(txn, child, &cols, key)? {
            return Err(has_children(child, fk));
        }
    }
    Ok(())
}

/// Whether DML on `def` has foreign key checks to make: it has foreign keys, or another
/// table references it, and the session's `foreign_key_checks` is on. For such a table the
/// transaction's rows events get `NO_FOREIGN_KEY_CHECKS_F` when it is off (as MariaDB
/// logs them: its replica then skips the checks too); other tables cost no variable lookup.
pub(crate) fn involved(cx: &ExecContext, txn: &mut Transaction, def: &TableDef) -> bool {
    let cat = cx.server.engine.catalog();
    let any = !def.options.foreign_keys.is_empty()
        || referencing(&cat, &def.db, &def.name).next().is_some();
    if !any {
        return false;
    }
    let on = checks_on(cx);
    txn.set_no_foreign_key_checks(!on);
    on
}

/// Whether a foreign key of any table references `def` (whatever `foreign_key_checks` says:
/// MariaDB's `referenced_by_foreign_key`).
pub(crate) fn is_referenced(cx: &ExecContext, def: &TableDef) -> bool {
    let cat = cx.server.engine.catalog();
    let found = referencing(&cat, &def.db, &def.name).next().is_some();
    found
}

/// The table `db`.`table` (1146 when missing).
fn table_of(cat: &Catalog, db: &str, table: &str) -> Result<std::sync::Arc<TableDef>, SqlError> {
    cat.table_by_name(db, table).cloned().ok_or_else(|| {
        SqlError::of(
            errors::ER_NO_SUCH_TABLE,
            format!("Table '{db}.{table}' doesn't exist"),
        )
    })
}

/// InnoDB's next generated name for `t`: `<table>_ibfk_<n>` past the highest such n.
fn next_generated_name(t: &TableDef) -> String {
    let prefix = format!("{}_ibfk_", t.name);
    let top = t
        .options
        .foreign_keys
        .iter()
        .filter_map(|f| f.name.strip_prefix(&prefix)?.parse::<usize>().ok())
        .max()
        .unwrap_or(0);
    generated_name(&t.name, top + 1)
}

/// `ALTER TABLE t ADD [CONSTRAINT x] FOREIGN KEY [name] (...) REFERENCES ...`: validated as
/// at CREATE TABLE; with `foreign_key_checks` on, every existing row must have its parent
/// (1452); the index InnoDB adds when no key starts with the columns is added with it.
pub(crate) fn alter_add(
    cx: &ExecContext,
    (db, table): (&str, &str),
    f: &ast::ForeignKeyConstraint,
    sql: &str,
) -> Result<(), SqlError> {
    let engine = &cx.server.engine;
    let cat = engine.catalog();
    let t = table_of(&cat, db, table)?;
    let d = declared(db, f, None)?;
    let mut fk = d.def;
    fk.name = d.name.clone().unwrap_or_else(|| next_generated_name(&t));
    let mut child = (*t).clone();
    let cols = match positions(&child, &fk.columns) {
        Some(c) => c,
        None => {
            let missing = fk.columns.iter().find(|c| child.column_index(c).is_none());
            return Err(onelog_engine::EngineError::NoSuchKeyColumn {
                column: missing.cloned().unwrap_or_default(),
            }
            .into());
        }
    };
    let index = match key_starting_with(&child, &cols) {
        Some(_) => None,
        None => {
            let base = d.name.unwrap_or_else(|| fk.columns[0].clone());
            let mut name = base.clone();
            let mut n = 1;
            while child.index(&name).is_some() || name.eq_ignore_ascii_case("PRIMARY") {
                n += 1;
                name = format!("{base}_{n}");
            }
            let spec = onelog_engine::IndexSpec {
                name,
                columns: fk.columns.clone(),
                unique: false,
            };
            child.add_index(&spec)?;
            Some(spec)
        }
    };
    child.options.foreign_keys.push(fk.clone());
    child
        .options
        .foreign_keys
        .sort_by_key(|f| f.name.to_ascii_lowercase());
    let checks = checks_on(cx);
    validate(&cat, &child, checks)?;
    if checks {
        check_existing_rows(cx, &child, &fk, &cols)?;
    }
    let constraints = (child.options.foreign_keys, t.options.checks.clone());
    logged_with_checks(cx, || {
        engine.alter_constraints((db, table), constraints, index, sql)
    })?;
    Ok(())
}

/// Every row of `child` must have its parent under `fk` (1452, naming the child table;
/// MariaDB names its temporary copy `#sql-alter-...` there).
fn check_existing_rows(
    cx: &ExecContext,
    child: &TableDef,
    fk: &ForeignKeyDef,
    cols: &[usize],
) -> Result<(), SqlError> {
    let cat = cx.server.engine.catalog();
    let mut txn = cx.server.engine.begin();
    let rows = txn.scan(child.id, IndexRef::Primary, KeyRange::all(), None)?;
    let parent = cat.table_by_name(&fk.parent_db, &fk.parent_table);
    let pcols = parent.and_then(|p| positions(p, &fk.parent_columns));
    for row in rows {
        cx.guard.check()?;
        let Some(key) = key_of(&row, cols) else {
            continue;
        };
        let self_ref = pcols.as_ref().is_some_and(|pc| {
            parent.is_some_and(|p| p.id == child.id) && key_of(&row, pc).as_ref() == Some(&key)
        });
        let found = match (parent, &pcols) {
            _ if self_ref => true,
            (Some(p), Some(pc)) => exists_locked(&mut txn, p, pc, key)?,
            _ => false,
        };
        if !found {
            txn.rollback();
            return Err(no_parent(child, fk));
        }
    }
    txn.rollback();
    Ok(())
}

/// `ALTER TABLE t DROP FOREIGN KEY x` (`any`: false) or `DROP CONSTRAINT x` (`any`: a foreign
/// key or a check): 1091 when there is none (`if_exists`: nothing happens).
pub(crate) fn alter_drop(
    cx: &ExecContext,
    (db, table): (&str, &str),
    name: &str,
    (any, if_exists): (bool, bool),
    sql: &str,
) -> Result<(), SqlError> {
    let engine = &cx.server.engine;
    let t = table_of(&engine.catalog(), db, table)?;
    let mut fks = t.options.foreign_keys.clone();
    let mut checks = t.options.checks.clone();
    let before = fks.len() + checks.len();
    fks.retain(|f| !f.name.eq_ignore_ascii_case(name));
    if any && fks.len() == t.options.foreign_keys.len() {
        checks.retain(|c| c.column.is_some() || !c.name.eq_ignore_ascii_case(name));
    }
    if fks.len() + checks.len() == before {
        if if_exists {
            return Ok(());
        }
        let what = if any { "CONSTRAINT" } else { "FOREIGN KEY" };
        return Err(SqlError::of(
            errors::ER_CANT_DROP_FIELD_OR_KEY,
            format!("Can't DROP {what} `{name}`; check that it exists"),
        ));
    }
    logged_with_checks(cx, || {
        engine.alter_constraints((db, table), (fks, checks), None, sql)
    })?;
    Ok(())
}
