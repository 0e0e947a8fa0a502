//! The target of INSERT / UPDATE / DELETE: one table (no joins, no derived tables), its
//! columns by name, and the scope its expressions are compiled in.

use onelog_engine::TableDef;
use sqlparser::ast;

use crate::context::ExecContext;
use crate::error::SqlError;
use crate::expr::Scope;

pub(crate) fn scope<'a>(t: &'a TableDef, qualifier: &'a str, db: &'a str) -> Scope<'a> {
    Scope {
        table: Some(t),
        qualifier,
        db,
        joined: Vec::new(),
    }
}

/// The position of the column an assignment or an INSERT column list names; 1054 naming the
/// clause `place` (MariaDB 10.11.14: 'INSERT INTO', 'SET', 'UPDATE') when `t` has none.
pub(crate) fn target_column(
    t: &TableDef,
    name: &ast::ObjectName,
    place: &str,
) -> Result<usize, SqlError> {
    let parts = crate::expr::object_name_parts(name);
    let last = parts.last().cloned().unwrap_or_default();
    t.column_index(&last)
        .ok_or_else(|| SqlError::unknown_column(&parts.join("."), place))
}

pub(crate) fn single_table(
    twj: &ast::TableWithJoins,
) -> Result<(&ast::ObjectName, Option<String>), SqlError> {
    if !twj.joins.is_empty() {
        return Err(SqlError::unsupported("multi-table UPDATE/DELETE"));
    }
    match &twj.relation {
        ast::TableFactor::Table { name, alias, .. } => {
            Ok((name, alias.as_ref().map(|a| a.name.value.clone())))
        }
        _ => Err(SqlError::unsupported("derived tables")),
    }
}

/// SELECT on `t`, checked after the statement's own privilege (so a user without any is told
/// about that one first).
pub(crate) fn check_select(cx: &ExecContext, t: &TableDef) -> Result<(), SqlError> {
    cx.check_table_privilege(&t.db, &t.name, crate::privilege::SELECT)
}
