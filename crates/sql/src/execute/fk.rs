//! FOREIGN KEY constraints with InnoDB's semantics: the definitions CREATE TABLE declares
//! (named, validated against the parent, given an index on the child's columns; SET NULL
//! needs nullable columns, a CHECK may not name a column an action changes: 1901), their text
//! in SHOW CREATE TABLE and in errors, the DDL checks on a referenced parent (DROP TABLE 1451,
//! TRUNCATE 1701, DROP COLUMN 1829 / DROP INDEX 1553), and the row checks of DML: a child row
//! written needs its parent row (1452); a parent row deleted or whose referenced key changes
//! has its children refused (1451, RESTRICT / NO ACTION) or changed by the constraint's
//! action (ON DELETE/UPDATE CASCADE, SET NULL), which `onelog_engine::cascade` derives (shared
//! with the replica's row apply): the cascaded rows are written, and logged with
//! `NO_FOREIGN_KEY_CHECKS_F`, before the parent row, so the event group replays to the same
//! rows on recovery and on a MariaDB replica (MariaDB itself does not log them).
//!
//! Invariants:
//! - `foreign_key_checks=0` (session) turns every check off, as in MariaDB: a table may then
//!   reference a missing parent, rows are written unchecked, parents dropped;
//! - a child row's parent is read with a shared row lock that the transaction holds until it
//!   ends, and a parent's children with shared locks: a concurrent transaction then cannot
//!   delete the parent (it waits for the exclusive lock), nor add a child of a parent being
//!   deleted (its shared lock on the parent waits), so no committed state breaks a constraint;
//! - a row with NULL in any of its foreign key columns references nothing (passes);
//! - a cascade happens only with `foreign_key_checks` on (InnoDB skips the parent side
//!   entirely when off), so the rows events' flags are 0 around the cascaded ones;
//!
//! Callers: `ddl.rs` (CREATE/DROP/TRUNCATE/ALTER), `dml.rs` (every row write), `show.rs`.

use std::ops::ControlFlow;

use onelog_binlog::Value;
use onelog_engine::cascade;
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

/// The constraint's line of SHOW CREATE TABLE (with its ON DELETE / ON UPDATE clauses).
pub(crate) fn show_line(child_db: &str, fk: &ForeignKeyDef) -> String {
    format!("  {}", cascade::constraint_with_actions(child_db, fk))
}

fn no_parent(child: &TableDef, fk: &ForeignKeyDef) -> SqlError {
    SqlError::of(
        errors::ER_NO_REFERENCED_ROW_2,
        format!(
            "Cannot add or update a child row: a foreign key constraint fails {}",
            cascade::error_detail(child, fk)
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
        Some(ast::ReferentialAction::Cascade) => FkAction::Cascade,
        Some(ast::ReferentialAction::SetNull) => FkAction::SetNull,
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

pub(crate) use cascade::key_starting_with;
use cascade::{key_of, positions, referencing};

/// InnoDB's checks of a new table's foreign keys (`child` is the table as it will be
/// created, with every index): the parent exists (unless `foreign_key_checks=0`; it may be
/// `child` itself), its columns exist and start one of its keys, the column types match, the
/// constraint names are unique in the database. Each failure is 1005 errno 150 (121 for a
/// name another table uses).
pub(crate) fn validate(cat: &Catalog, child: &TableDef, checks: bool) -> Result<(), SqlError> {
    check_free_columns(child)?;
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
        // SET NULL needs nullable columns (InnoDB: errno 150, MariaDB 10.11's answer).
        let set_null = fk.on_delete == FkAction::SetNull || fk.on_update == FkAction::SetNull;
        if set_null && cols.iter().any(|&c| !child.columns[c].nullable) {
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

/// A column a foreign key's action changes (ON DELETE SET NULL, ON UPDATE CASCADE / SET NULL)
/// may not be named by a CHECK constraint of its table (the cascade would change it below the
/// checks): 1901, as MariaDB answers at CREATE TABLE and ALTER TABLE ... ADD.
pub(crate) fn check_free_columns(t: &TableDef) -> Result<(), SqlError> {
    let changes = |fk: &&ForeignKeyDef| {
        fk.on_delete == FkAction::SetNull
            || matches!(fk.on_update, FkAction::Cascade | FkAction::SetNull)
    };
    for fk in t.options.foreign_keys.iter().filter(changes) {
        for col in &fk.columns {
            let quoted = format!("`{}`", col.to_ascii_lowercase());
            let used = t
                .options
                .checks
                .iter()
                .find(|c| c.expr.to_ascii_lowercase().contains(&quoted));
            if let Some(c) = used {
                return Err(SqlError::of(
                    errors::ER_GENERATED_COLUMN_FUNCTION_IS_NOT_ALLOWED,
                    format!(
                        "Function or expression '{col}' cannot be used in the CHECK clause of {}",
                        quote(&c.name)
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// InnoDB's generated name for the `n`th unnamed constraint of `table`.
pub(crate) fn generated_name(table: &str, n: usize) -> String {
    format!("{table}_ibfk_{n}")
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
                cascade::constraint_text(&c.db, fk, true)
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

/// A parent row deleted (`new` None) or updated to `new`, with foreign key checks on: each
/// child row that references its old key is refused (1451, RESTRICT / NO ACTION) or changed by
/// its constraint's action (CASCADE, SET NULL; recursively, the cascaded rows written and
/// logged before the parent row: `onelog_engine::cascade`). Call before the row changes: a
/// row that references itself holds itself back (RESTRICT), as InnoDB finds it.
pub(crate) fn check_parent_row(
    cx: &ExecContext,
    txn: &mut Transaction,
    def: &TableDef,
    row: &[Value],
    new: Option<&[Value]>,
) -> Result<(), SqlError> {
    let cat = cx.server.engine.catalog();
    cascade::on_parent_change(txn, &cat, def, row, new)?;
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
                options: Default::default(),
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
