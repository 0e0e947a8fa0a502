//! ALTER TABLE: any number of operations, applied all or nothing as one engine change
//! ([`onelog_engine::CatalogChange::AlterTable`]) and logged as one Query event.
//!
//! Owns the translation of the statement's operations into the new table definition, with
//! MariaDB 10.11's rules for their order (`mysql_prepare_alter_table`): DROP, MODIFY, CHANGE,
//! RENAME COLUMN and ALTER COLUMN name columns of the table as it was (a column added or
//! dropped in the same statement is unknown to them: 1054 / 1091); the old columns keep their
//! order, a MODIFY/CHANGE without position in place; then the added columns and the moved ones,
//! in statement order, go last, FIRST, or AFTER a column of the list built so far (1054 when it
//! is not there). Keys follow their columns: a dropped column leaves every key it was in (a key
//! left without columns is dropped), renamed ones keep theirs.
//!
//! Called by the session for `ALTER TABLE`; a lone `RENAME`, `ADD INDEX` or `DROP INDEX` keeps
//! its cheaper engine change of its own (`ddl.rs`). Invariant: DDL never runs inside a
//! transaction (the session committed it).

use onelog_binlog::Value;
use onelog_engine::alter::{convertible, keeps_rows, AlterPlan};
use onelog_engine::{ColumnDef, ColumnSource, IndexDef, IndexOptions, TableDef};
use onelog_protocol::errors;
use sqlparser::ast;

use crate::context::ExecContext;
use crate::error::SqlError;
use crate::execute::algorithm::Clauses;
use crate::execute::{ddl, keys};
use crate::expr::Env;
use crate::parse::alter_ops::{Guard, TableOps};

/// A column of the new definition and where its values come from (`old`: its position in
/// the old definition).
struct NewColumn {
    def: ColumnDef,
    old: Option<usize>,
    fill: Value,
    /// An added AUTO_INCREMENT column: the rows are numbered.
    numbered: bool,
    /// Keys the column's own definition declared (`UNIQUE`, `PRIMARY KEY`).
    unique: bool,
    primary: bool,
}

/// A column definition an operation carries: ADD, MODIFY or CHANGE.
struct Definition<'a> {
    /// The old column it replaces (MODIFY, CHANGE), by name.
    replaces: Option<&'a str>,
    column: ast::ColumnDef,
    position: Option<&'a ast::MySQLColumnPosition>,
}

/// The operations of one ALTER TABLE, sorted by kind (their order within a kind kept).
struct Operations<'a> {
    definitions: Vec<Definition<'a>>,
    drop_columns: Vec<(&'a str, bool)>,
    renames: Vec<(&'a str, &'a str)>,
    defaults: Vec<(&'a str, Option<&'a ast::Expr>)>,
    drop_indexes: Vec<&'a str>,
    drop_primary: bool,
    /// ADD PRIMARY KEY / UNIQUE / KEY, in their order.
    add_keys: Vec<keys::Declared>,
    /// `RENAME [TO] name` among other operations.
    rename_to: Option<&'a ast::ObjectName>,
    /// `AUTO_INCREMENT [=] n`.
    auto_increment: Option<u64>,
    /// ENGINE=InnoDB / FORCE, the table COMMENT, RENAME INDEX ([`TableOps`]).
    table: &'a TableOps,
}

/// `ALTER TABLE name ops` (sqlparser's operations and `table`'s).
pub(crate) fn alter_table(
    cx: &ExecContext,
    name: &ast::ObjectName,
    ops: &[ast::AlterTableOperation],
    table_ops: &TableOps,
    sql: &str,
) -> Result<(), SqlError> {
    debug_assert!(cx.txn.is_none(), "DDL inside an open transaction");
    let (db, table) = ddl::split_name(cx, name)?;
    // MariaDB: ALTER, and INSERT and CREATE (ALTER TABLE copies the table).
    cx.check_table_privilege(&db, &table, crate::privilege::ALTER)?;
    cx.check_table_privilege(
        &db,
        &table,
        crate::privilege::INSERT | crate::privilege::CREATE,
    )?;
    let engine = &cx.server.engine;
    let guarded = guards_hold(cx, (&db, &table), ops, &table_ops.guards)?;
    let (clauses, ops) = Clauses::split(&guarded);
    let ops = ops.as_slice();
    // An operation alone takes its own way below, unless `table_ops` changes more.
    let lone = |ops| match table_ops.changes_table() {
        false => ops,
        true => &[][..],
    };
    if let [op] = lone(ops) {
        if constraint_operation(op) && !clauses.is_default() {
            return Err(SqlError::unsupported(
                "ALGORITHM or LOCK with a foreign key or CHECK operation",
            ));
        }
    }
    // The table's exclusive lock for the statement, letting reads outside a transaction go
    // on (but under LOCK=EXCLUSIVE), as MariaDB's copying ALTER (a lone RENAME, DROP INDEX or
    // ADD INDEX takes its own in `ddl.rs`).
    let _lock = match lone(ops) {
        [ast::AlterTableOperation::RenameTable { .. }
        | ast::AlterTableOperation::DropIndex { .. }]
        | [ast::AlterTableOperation::AddConstraint {
            constraint: ast::TableConstraint::Index(_) | ast::TableConstraint::Unique(_),
            ..
        }] => None,
        _ => {
            // With other operations, RENAME TO's new name is locked too.
            let mut keys = vec![(db.clone(), table.clone())];
            for op in ops {
                if let ast::AlterTableOperation::RenameTable { table_name } = op {
                    let (ast::RenameTableNameKind::To(n) | ast::RenameTableNameKind::As(n)) =
                        table_name;
                    keys.push(ddl::split_name(cx, n)?);
                }
            }
            Some(cx.exclusive_lock(&keys, clauses.lets_readers())?)
        }
    };
    if let [op] = lone(ops) {
        match op {
            ast::AlterTableOperation::RenameTable { table_name } => {
                clauses.change(true, false)?;
                let to = match table_name {
                    ast::RenameTableNameKind::To(n) | ast::RenameTableNameKind::As(n) => n,
                };
                return ddl::rename_tables(cx, &[(name, to)], sql);
            }
            ast::AlterTableOperation::DropIndex { name } => {
                clauses.change(true, true)?;
                return ddl::drop_index_checked(cx, (&db, &table), &name.value, sql);
            }
            // Constraints: one operation of their own (crates/sql/src/execute/fk.rs, check.rs).
            ast::AlterTableOperation::AddConstraint {
                constraint: ast::TableConstraint::ForeignKey(f),
                ..
            } => return crate::execute::fk::alter_add(cx, (&db, &table), f, sql),
            ast::AlterTableOperation::AddConstraint {
                constraint: ast::TableConstraint::Check(c),
                ..
            } => return crate::execute::check::alter_add(cx, (&db, &table), c, sql),
            ast::AlterTableOperation::DropForeignKey {
                name,
                drop_behavior: None,
            } => {
                let how = (false, false);
                return crate::execute::fk::alter_drop(cx, (&db, &table), &name.value, how, sql);
            }
            ast::AlterTableOperation::DropConstraint {
                if_exists,
                name,
                drop_behavior: None,
            } => {
                let how = (true, *if_exists);
                return crate::execute::fk::alter_drop(cx, (&db, &table), &name.value, how, sql);
            }
            ast::AlterTableOperation::AddConstraint {
                constraint: c @ (ast::TableConstraint::Index(_) | ast::TableConstraint::Unique(_)),
                ..
            } => {
                let key = keys::declared(cx, c)?.expect("a key constraint");
                let how = clauses.index_build()?;
                return ddl::create_index_as(cx, (&db, &table), key.spec, sql, how);
            }
            _ => {}
        }
    }
    let operations = sort_operations(cx, ops, table_ops)?;
    let old = crate::bind::tables::table_named(cx, &db, &table)?;
    for (column, _) in &operations.drop_columns {
        // A dropped column's foreign keys answer first (1829 / 1553), as MariaDB.
        crate::execute::fk::check_drop_column(&engine.catalog(), &old, column)?;
    }
    let (mut new, sources) = new_definition(cx, &old, &operations)?;
    constraints_hold(cx, &old, &new, &sources)?;
    if let Some(to) = operations.rename_to {
        // As RENAME TABLE: DROP on the old table, CREATE and INSERT on the new name.
        let (to_db, to_name) = ddl::split_name(cx, to)?;
        cx.check_table_privilege(&db, &table, crate::privilege::DROP)?;
        cx.check_table_privilege(
            &to_db,
            &to_name,
            crate::privilege::CREATE | crate::privilege::INSERT,
        )?;
        (new.db, new.name) = (to_db, to_name);
    }
    let drops_index = operations.drop_primary || !operations.drop_indexes.is_empty();
    // ENGINE=InnoDB and FORCE rebuild the table in MariaDB (INPLACE, also with LOCK=NONE;
    // INSTANT is 1845); onelog's rows need nothing, so nothing is copied.
    if table_ops.rebuild {
        clauses.rebuild()?;
    }
    clauses.change(keeps_rows(&old, &new, &sources), drops_index)?;
    let strict = crate::sysvar::strict_mode(cx);
    let plan = AlterPlan {
        sources,
        strict,
        auto_increment: operations.auto_increment,
    };
    for c in engine.alter_table(&old, new, plan, sql)? {
        let level = if c.note { "Note" } else { "Warning" };
        let e = SqlError::from(c.error);
        crate::expr::warn(level, e.code, e.message);
    }
    Ok(())
}

/// `ops` without those whose `IF [NOT] EXISTS` guard fails on the table as it is, each
/// skipped with MariaDB's note (1060, 1061, 1091, 1054). The table is read before the
/// statement's lock: a DDL of another session in between makes the operation fail as it
/// would without its guard.
fn guards_hold(
    cx: &ExecContext,
    (db, table): (&str, &str),
    ops: &[ast::AlterTableOperation],
    guards: &[(usize, Guard)],
) -> Result<Vec<ast::AlterTableOperation>, SqlError> {
    if guards.is_empty() {
        return Ok(ops.to_vec());
    }
    let def = crate::bind::tables::table_named(cx, db, table)?;
    let column = |c: &str| def.column_index(c).is_some();
    let index = |k: &str| k.eq_ignore_ascii_case("PRIMARY") || def.index(k).is_some();
    let mut kept = Vec::with_capacity(ops.len());
    for (i, op) in ops.iter().enumerate() {
        let guard = guards.iter().find(|(at, _)| *at == i).map(|(_, g)| g);
        let (code, msg) = match guard {
            Some(Guard::NoColumn(c)) if column(c) => (
                errors::ER_DUP_FIELDNAME,
                format!("Duplicate column name '{c}'"),
            ),
            Some(Guard::NoIndex(k)) if index(k) => {
                (errors::ER_DUP_KEYNAME, format!("Duplicate key name '{k}'"))
            }
            Some(Guard::Index(k)) if !index(k) => (
                errors::ER_CANT_DROP_FIELD_OR_KEY,
                format!("Can't DROP INDEX `{k}`; check that it exists"),
            ),
            Some(Guard::Column(c)) if !column(c) => (
                errors::ER_BAD_FIELD_ERROR,
                format!("Unknown column '{c}' in '{table}'"),
            ),
            _ => {
                kept.push(op.clone());
                continue;
            }
        };
        crate::expr::warn("Note", code.code, msg);
    }
    Ok(kept)
}

/// Whether `op` is a foreign key or CHECK operation (one of their own: `fk.rs`, `check.rs`).
fn constraint_operation(op: &ast::AlterTableOperation) -> bool {
    matches!(
        op,
        ast::AlterTableOperation::AddConstraint {
            constraint: ast::TableConstraint::ForeignKey(_) | ast::TableConstraint::Check(_),
            ..
        } | ast::AlterTableOperation::DropForeignKey { .. }
            | ast::AlterTableOperation::DropConstraint { .. }
    )
}

/// The foreign keys and CHECK constraints on `old`'s columns survive the change: a dropped
/// column answers as DROP COLUMN does (1829 / 1553, 1235 for a CHECK's column); a column a
/// constraint names that is renamed or changes type is refused (1235: InnoDB would rename the
/// references or re-check the rows, which onelog does not yet).
fn constraints_hold(
    cx: &ExecContext,
    old: &TableDef,
    new: &TableDef,
    sources: &[ColumnSource],
) -> Result<(), SqlError> {
    let cat = cx.server.engine.catalog();
    let referenced = |name: &str| {
        cat.tables().any(|t| {
            t.options.foreign_keys.iter().any(|fk| {
                fk.parent_db == old.db
                    && fk.parent_table == old.name
                    && fk
                        .parent_columns
                        .iter()
                        .any(|c| c.eq_ignore_ascii_case(name))
            })
        })
    };
    for (p, c) in old.columns.iter().enumerate() {
        let own = old
            .options
            .foreign_keys
            .iter()
            .any(|fk| fk.columns.iter().any(|n| n.eq_ignore_ascii_case(&c.name)));
        let checked = crate::execute::check::uses_column(old, &c.name);
        if !own && !checked && !referenced(&c.name) {
            continue;
        }
        let kept = sources
            .iter()
            .position(|s| matches!(s, ColumnSource::Old(q) if *q == p));
        match kept {
            None => {
                crate::execute::fk::check_drop_column(&cat, old, &c.name)?;
                return Err(SqlError::unsupported(
                    "DROP COLUMN of a column a CHECK constraint uses",
                ));
            }
            Some(n) if new.columns[n].name != c.name || new.columns[n].ty != c.ty => {
                return Err(SqlError::unsupported(
                    "ALTER TABLE that renames or retypes a column a FOREIGN KEY or CHECK uses",
                ));
            }
            Some(_) => {}
        }
    }
    Ok(())
}

fn unknown_column(column: &str, table: &str) -> SqlError {
    SqlError::of(
        errors::ER_BAD_FIELD_ERROR,
        format!("Unknown column '{column}' in '{table}'"),
    )
}

/// The operations by kind; 1235 for the ones onelog does not perform.
fn sort_operations<'a>(
    cx: &ExecContext,
    ops: &'a [ast::AlterTableOperation],
    table: &'a TableOps,
) -> Result<Operations<'a>, SqlError> {
    use ast::AlterTableOperation as Op;
    let mut o = Operations {
        definitions: Vec::new(),
        drop_columns: Vec::new(),
        renames: Vec::new(),
        defaults: Vec::new(),
        drop_indexes: Vec::new(),
        drop_primary: false,
        add_keys: Vec::new(),
        rename_to: None,
        auto_increment: None,
        table,
    };
    let with = |name: &ast::Ident, data_type: &ast::DataType, options: &[ast::ColumnOption]| {
        ast::ColumnDef {
            name: name.clone(),
            data_type: data_type.clone(),
            options: options
                .iter()
                .map(|option| ast::ColumnOptionDef {
                    name: None,
                    option: option.clone(),
                })
                .collect(),
        }
    };
    for op in ops {
        match op {
            Op::AddColumn {
                column_def,
                column_position,
                if_not_exists: false,
                ..
            } => o.definitions.push(Definition {
                replaces: None,
                column: column_def.clone(),
                position: column_position.as_ref(),
            }),
            Op::ModifyColumn {
                col_name,
                data_type,
                options,
                column_position,
            } => o.definitions.push(Definition {
                replaces: Some(&col_name.value),
                column: with(col_name, data_type, options),
                position: column_position.as_ref(),
            }),
            Op::ChangeColumn {
                old_name,
                new_name,
                data_type,
                options,
                column_position,
            } => o.definitions.push(Definition {
                replaces: Some(&old_name.value),
                column: with(new_name, data_type, options),
                position: column_position.as_ref(),
            }),
            Op::DropColumn {
                column_names,
                if_exists,
                drop_behavior: None,
                ..
            } => o
                .drop_columns
                .extend(column_names.iter().map(|c| (c.value.as_str(), *if_exists))),
            Op::RenameColumn {
                old_column_name,
                new_column_name,
            } => o
                .renames
                .push((&old_column_name.value, &new_column_name.value)),
            Op::AlterColumn { column_name, op } => match op {
                ast::AlterColumnOperation::SetDefault { value } => {
                    o.defaults.push((&column_name.value, Some(value)))
                }
                ast::AlterColumnOperation::DropDefault => {
                    o.defaults.push((&column_name.value, None))
                }
                _ => return Err(SqlError::unsupported("this ALTER COLUMN")),
            },
            Op::DropIndex { name } => o.drop_indexes.push(&name.value),
            Op::DropPrimaryKey {
                drop_behavior: None,
            } => o.drop_primary = true,
            Op::AddConstraint { constraint, .. } => match keys::declared(cx, constraint)? {
                Some(key) => o.add_keys.push(key),
                None => return Err(SqlError::unsupported("this ALTER TABLE")),
            },
            Op::AutoIncrement { value, .. } => {
                let n = match &value.value {
                    ast::Value::Number(n, _) => n.parse::<u64>().ok(),
                    _ => None,
                };
                o.auto_increment = Some(n.ok_or_else(|| SqlError::syntax(&value.to_string()))?);
            }
            Op::RenameTable { table_name } => {
                let (ast::RenameTableNameKind::To(n) | ast::RenameTableNameKind::As(n)) =
                    table_name;
                o.rename_to = Some(n);
            }
            Op::AddColumn { .. } => {
                // `parse/alter_ops.rs` hands MariaDB's IF NOT EXISTS over as a guard, without
                // the words; sqlparser's own flag is not expected here.
                return Err(SqlError::syntax("IF NOT EXISTS"));
            }
            _ => return Err(SqlError::unsupported("this ALTER TABLE")),
        }
    }
    Ok(o)
}

/// The new definition and each new column's source.
fn new_definition(
    cx: &ExecContext,
    old: &TableDef,
    o: &Operations<'_>,
) -> Result<(TableDef, Vec<ColumnSource>), SqlError> {
    let mut columns = old_columns(cx, old, o)?;
    place_definitions(cx, old, o, &mut columns)?;
    for (name, default) in &o.defaults {
        let c = columns
            .iter_mut()
            .find(|c| c.old.is_some() && c.def.name.eq_ignore_ascii_case(name))
            .ok_or_else(|| unknown_column(name, &old.name))?;
        c.def.extras.default_now = None;
        c.def.default = match default {
            None => None,
            Some(e) => match ddl::default_value(cx, e, &c.def.ty)? {
                None | Some(Value::Null) => None,
                Some(v) => Some(crate::expr::convert_for_column(v, &c.def.ty, &c.def.name)?),
            },
        };
    }
    if columns.is_empty() {
        return Err(SqlError::of(
            errors::ER_CANT_REMOVE_ALL_FIELDS,
            "You can't delete all columns with ALTER TABLE; use DROP TABLE instead",
        ));
    }
    let keys = new_keys(old, o, &mut columns)?;
    let mut def = old.clone();
    def.auto_increment = columns.iter().position(|c| c.def.auto_increment);
    let sources = columns
        .iter()
        .map(|c| match c.old {
            Some(p) => ColumnSource::Old(p),
            None if c.numbered => ColumnSource::Sequence,
            None => ColumnSource::Fill(c.fill.clone()),
        })
        .collect();
    def.columns = columns.into_iter().map(|c| c.def).collect();
    def.primary_key = keys.primary;
    def.options.primary = keys.primary_options;
    def.indexes = keys.indexes;
    def.next_index_id = keys.next_index_id;
    rename_indexes(&mut def, &o.table.rename_indexes)?;
    if let Some(c) = &o.table.comment {
        def.options.comment = keys::comment(cx, c, keys::Commented::Table(&old.name))?;
    }
    for &p in &def.primary_key {
        def.columns[p].nullable = false;
    }
    // InnoDB drops the key it generated for a foreign key when another key now serves it.
    def.drop_covered_generated_keys();
    Ok((def, sources))
}

/// RENAME INDEX / KEY, in order, after the other key operations (an index dropped by the same
/// statement is gone: 1176, as MariaDB): 1061 when the new name is taken. A generated key
/// renamed stays generated.
fn rename_indexes(def: &mut TableDef, renames: &[(String, String)]) -> Result<(), SqlError> {
    for (from, to) in renames {
        let Some(i) = def
            .indexes
            .iter()
            .position(|i| i.name.eq_ignore_ascii_case(from))
        else {
            return Err(SqlError::of(
                errors::ER_KEY_DOES_NOT_EXITS,
                format!("Key '{from}' doesn't exist in table '{}'", def.name),
            ));
        };
        let taken = def
            .indexes
            .iter()
            .enumerate()
            .any(|(k, ix)| k != i && ix.name.eq_ignore_ascii_case(to));
        if taken {
            return Err(SqlError::of(
                errors::ER_DUP_KEYNAME,
                format!("Duplicate key name '{to}'"),
            ));
        }
        for g in &mut def.options.generated_keys {
            if g.eq_ignore_ascii_case(&def.indexes[i].name) {
                g.clone_from(to);
            }
        }
        def.indexes[i].name.clone_from(to);
    }
    Ok(())
}

/// The old columns that stay, in their order, renamed, with their MODIFY/CHANGE definitions
/// when those have no position. 1091 for a DROP of a column that is not there (unless IF
/// EXISTS), 1054 for a MODIFY/CHANGE/RENAME of one, 1090 when none would be left.
fn old_columns(
    cx: &ExecContext,
    old: &TableDef,
    o: &Operations<'_>,
) -> Result<Vec<NewColumn>, SqlError> {
    for (name, if_exists) in &o.drop_columns {
        if old.column_index(name).is_none() && !if_exists {
            return Err(SqlError::of(
                errors::ER_CANT_DROP_FIELD_OR_KEY,
                format!("Can't DROP COLUMN `{name}`; check that it exists"),
            ));
        }
    }
    for name in o
        .definitions
        .iter()
        .filter_map(|d| d.replaces)
        .chain(o.renames.iter().map(|r| r.0))
    {
        let dropped = o
            .drop_columns
            .iter()
            .any(|d| d.0.eq_ignore_ascii_case(name));
        if old.column_index(name).is_none() || dropped {
            return Err(unknown_column(name, &old.name));
        }
    }
    let mut out = Vec::with_capacity(old.columns.len());
    for (p, c) in old.columns.iter().enumerate() {
        let is = |n: &str| n.eq_ignore_ascii_case(&c.name);
        if o.drop_columns.iter().any(|d| is(d.0)) {
            continue;
        }
        let mut col = NewColumn {
            def: c.clone(),
            old: Some(p),
            fill: Value::Null,
            numbered: false,
            unique: false,
            primary: false,
        };
        if let Some(d) = o.definitions.iter().find(|d| d.replaces.is_some_and(is)) {
            if d.position.is_some() {
                continue; // placed with the added columns
            }
            col = redefined(cx, old, c, p, &d.column)?;
        }
        if let Some((_, to)) = o.renames.iter().find(|r| is(r.0)) {
            col.def.name = to.to_string();
        }
        out.push(col);
    }
    Ok(out)
}

/// A MODIFY/CHANGE of old column `c` (at `p`) to `cd`: 1235 for a type change onelog does not
/// convert and for a column that becomes AUTO_INCREMENT.
fn redefined(
    cx: &ExecContext,
    old: &TableDef,
    c: &ColumnDef,
    p: usize,
    cd: &ast::ColumnDef,
) -> Result<NewColumn, SqlError> {
    let mut col = defined(cx, old, cd)?;
    if !convertible(&c.ty, &col.def.ty) {
        return Err(SqlError::unsupported(&format!(
            "ALTER TABLE changing a {:?} column to {:?}",
            c.ty, col.def.ty
        )));
    }
    if col.def.auto_increment && !c.auto_increment {
        return Err(SqlError::unsupported(
            "ALTER TABLE making a column AUTO_INCREMENT",
        ));
    }
    col.old = Some(p);
    Ok(col)
}

/// A column definition of the statement as a new column (its fill for existing rows as
/// MariaDB's ADD COLUMN gives them).
fn defined(cx: &ExecContext, old: &TableDef, cd: &ast::ColumnDef) -> Result<NewColumn, SqlError> {
    // The table's collation, as SHOW CREATE TABLE derives it: the one its text columns share.
    let mut colls = old.columns.iter().filter_map(|c| c.collation);
    let table_coll = colls.next().filter(|first| colls.all(|c| c == *first));
    let (spec, keys) = ddl::column_spec(cx, cd, table_coll)?;
    if keys.references.is_some() || keys.check.is_some() {
        return Err(SqlError::unsupported(
            "ALTER TABLE with a column REFERENCES or CHECK constraint",
        ));
    }
    let env = Env {
        cx,
        params: &[],
        insert_row: None,
        coll: crate::expr::connection_collation(cx),
        subq: None,
    };
    let fill = match (&spec.default, spec.extras.default_now) {
        (_, Some(fsp)) => crate::expr::statement_now(&env, fsp),
        (Some(v), None) => v.clone(),
        (None, None) if spec.nullable => Value::Null,
        (None, None) => ddl::zero_value(&spec.ty),
    };
    let def = ColumnDef::from_spec(&spec).map_err(SqlError::from)?;
    let fill = match fill {
        Value::Null => Value::Null,
        v => def.ty.coerce(&def.name, v).map_err(SqlError::from)?,
    };
    Ok(NewColumn {
        def,
        old: None,
        fill,
        numbered: false,
        unique: keys.unique,
        primary: keys.primary,
    })
}

/// Adds the ADD COLUMN definitions and the positioned MODIFY/CHANGE ones, in statement order:
/// last, FIRST, or AFTER a column already in `columns` (1054 otherwise). An added
/// AUTO_INCREMENT column numbers the rows.
fn place_definitions(
    cx: &ExecContext,
    old: &TableDef,
    o: &Operations<'_>,
    columns: &mut Vec<NewColumn>,
) -> Result<(), SqlError> {
    for d in &o.definitions {
        let col = match d.replaces {
            None => {
                let mut col = defined(cx, old, &d.column)?;
                if col.def.auto_increment {
                    // MariaDB numbers the rows (1, 2, ... in primary key order).
                    col.numbered = true;
                    col.def.nullable = false;
                }
                col
            }
            Some(_) if d.position.is_none() => continue,
            Some(name) => {
                let p = old
                    .column_index(name)
                    .ok_or_else(|| unknown_column(name, &old.name))?;
                redefined(cx, old, &old.columns[p], p, &d.column)?
            }
        };
        if columns
            .iter()
            .any(|c| c.def.name.eq_ignore_ascii_case(&col.def.name))
        {
            return Err(SqlError::of(
                errors::ER_DUP_FIELDNAME,
                format!("Duplicate column name '{}'", col.def.name),
            ));
        }
        match d.position {
            None => columns.push(col),
            Some(ast::MySQLColumnPosition::First) => columns.insert(0, col),
            Some(ast::MySQLColumnPosition::After(a)) => {
                let i = columns
                    .iter()
                    .position(|c| c.def.name.eq_ignore_ascii_case(&a.value))
                    .ok_or_else(|| unknown_column(&a.value, &old.name))?;
                columns.insert(i + 1, col);
            }
        }
    }
    Ok(())
}

/// The keys of a new definition.
struct NewKeys {
    primary: Vec<usize>,
    primary_options: IndexOptions,
    indexes: Vec<IndexDef>,
    next_index_id: u32,
}

/// The keys of the new definition. Old keys follow
/// their columns (a dropped column leaves them; an emptied key is dropped); DROP INDEX / DROP
/// PRIMARY KEY remove theirs (1091 when there is none); ADD ... KEY and the keys the new
/// column definitions declare are added (1068 for a second primary key, 1072 for an unknown
/// column, names as CREATE TABLE gives them). Each key keeps its options.
fn new_keys(
    old: &TableDef,
    o: &Operations<'_>,
    columns: &mut [NewColumn],
) -> Result<NewKeys, SqlError> {
    let new_pos = |p: usize| columns.iter().position(|c| c.old == Some(p));
    let mut primary: Vec<usize> = old.primary_key.iter().filter_map(|&p| new_pos(p)).collect();
    let mut primary_options = old.options.primary.clone();
    if o.drop_primary {
        if old.primary_key.is_empty() {
            return Err(SqlError::of(
                errors::ER_CANT_DROP_FIELD_OR_KEY,
                "Can't DROP INDEX `PRIMARY`; check that it exists",
            ));
        }
        primary.clear();
    }
    for name in &o.drop_indexes {
        if old.index(name).is_none() {
            return Err(SqlError::of(
                errors::ER_CANT_DROP_FIELD_OR_KEY,
                format!("Can't DROP INDEX `{name}`; check that it exists"),
            ));
        }
    }
    let mut indexes: Vec<IndexDef> = Vec::new();
    for ix in &old.indexes {
        if o.drop_indexes
            .iter()
            .any(|n| n.eq_ignore_ascii_case(&ix.name))
        {
            continue;
        }
        let cols: Vec<usize> = ix.columns.iter().filter_map(|&p| new_pos(p)).collect();
        if !cols.is_empty() {
            indexes.push(IndexDef {
                columns: cols,
                ..ix.clone()
            });
        }
    }
    let mut next_id = old.next_index_id;
    // The keys the new column definitions declare (`c INT UNIQUE`) come after ADD's.
    let column_keys: Vec<keys::Declared> = columns
        .iter()
        .filter(|c| c.primary || c.unique)
        .map(|c| keys::Declared {
            given: None,
            spec: onelog_engine::IndexSpec::new(&c.def.name, &[&c.def.name], true),
            primary: c.primary,
        })
        .collect();
    for key in o.add_keys.iter().chain(&column_keys) {
        let (given, unique) = (key.given.clone(), key.spec.unique);
        let mut cols = Vec::with_capacity(key.spec.columns.len());
        for n in &key.spec.columns {
            let p = columns
                .iter()
                .position(|c| c.def.name.eq_ignore_ascii_case(n))
                .ok_or_else(|| {
                    SqlError::of(
                        errors::ER_KEY_COLUMN_DOES_NOT_EXIST,
                        format!("Key column '{n}' doesn't exist in table"),
                    )
                })?;
            cols.push(p);
        }
        if key.primary {
            if !primary.is_empty() {
                return Err(SqlError::of(
                    errors::ER_MULTIPLE_PRI_KEY,
                    "Multiple primary key defined",
                ));
            }
            primary = cols;
            primary_options = key.spec.options.clone();
            continue;
        }
        // A generated key this one serves is dropped (`drop_covered_generated_keys`): its
        // name is free for this key, as in MariaDB.
        let served = |i: &IndexDef| {
            cols.len() >= i.columns.len()
                && cols[..i.columns.len()] == i.columns[..]
                && old
                    .options
                    .generated_keys
                    .iter()
                    .any(|g| g.eq_ignore_ascii_case(&i.name))
        };
        let name = given.unwrap_or_else(|| {
            let base = key.spec.columns.first().cloned().unwrap_or_default();
            let mut n = base.clone();
            let mut k = 1;
            while indexes
                .iter()
                .any(|i| i.name.eq_ignore_ascii_case(&n) && !served(i))
                || n.eq_ignore_ascii_case("PRIMARY")
            {
                k += 1;
                n = format!("{base}_{k}");
            }
            n
        });
        indexes.push(IndexDef {
            id: next_id,
            name,
            columns: cols,
            unique,
            options: key.spec.options.clone(),
        });
        next_id += 1;
    }
    // MariaDB keeps keys sorted (`sort_keys`): unique ones first, those over NOT NULL columns
    // only before the others, then the rest, each in its original order (a non-unique key's
    // nullability does not move it).
    indexes.sort_by_key(|ix| {
        let nullable = ix.columns.iter().any(|&p| columns[p].def.nullable);
        (!ix.unique, ix.unique && nullable)
    });
    if primary.is_empty() {
        primary_options = IndexOptions::default();
    }
    Ok(NewKeys {
        primary,
        primary_options,
        indexes,
        next_index_id: next_id,
    })
}
