//! The tables a SELECT reads: FROM and JOIN resolved against the catalog with their SELECT
//! privilege, and their layout side by side in the joined row.

use std::sync::Arc;

use onelog_engine::TableDef;
use onelog_protocol::errors;
use sqlparser::ast;

use crate::context::ExecContext;
use crate::error::SqlError;

/// Resolves `db.table` against the session's current database, after checking that the
/// session holds the privileges `need` on it (1142 before 1146, as in MariaDB).
pub(crate) fn resolve_table(
    cx: &ExecContext,
    name: &ast::ObjectName,
    need: u64,
) -> Result<Arc<TableDef>, SqlError> {
    let parts = crate::expr::object_name_parts(name);
    let (db, table) = match parts.as_slice() {
        [t] => (
            cx.current_db.clone().ok_or_else(SqlError::no_database)?,
            t.clone(),
        ),
        [d, t] => (d.clone(), t.clone()),
        _ => return Err(SqlError::syntax(&name.to_string())),
    };
    cx.check_table_privilege(&db, &table, need)?;
    table_named(cx, &db, &table).map_err(|e| match e.code {
        1347 => view_target_error(&table, need),
        _ => e,
    })
}

/// A view where a statement needs a base table: an INSERT, UPDATE or DELETE target is
/// refused as MariaDB refuses a view it cannot change (1288: onelog writes through no view);
/// a view read by a multi-table UPDATE or DELETE is refused (1235).
fn view_target_error(view: &str, need: u64) -> SqlError {
    use crate::privilege::{DELETE, INSERT, UPDATE};
    let verb = if need & INSERT != 0 {
        "INSERT"
    } else if need & UPDATE != 0 {
        "UPDATE"
    } else if need & DELETE != 0 {
        "DELETE"
    } else {
        return SqlError::unsupported("a view in a multi-table UPDATE or DELETE");
    };
    SqlError::of(
        errors::ER_NON_UPDATABLE_TABLE,
        format!("The target table {view} of the {verb} is not updatable"),
    )
}

/// The table `db.table` of the current catalog (no privilege check); 1347 when it is a view
/// (MariaDB's answer where a base table is needed), 1146 when there is neither.
pub(crate) fn table_named(
    cx: &ExecContext,
    db: &str,
    table: &str,
) -> Result<Arc<TableDef>, SqlError> {
    let cat = cx.server.engine.catalog();
    match cat.table_by_name(db, table) {
        Some(t) => Ok(t.clone()),
        None if cat.view(db, table).is_some() => Err(SqlError::of(
            errors::ER_WRONG_OBJECT,
            format!("'{db}.{table}' is not of type 'BASE TABLE'"),
        )),
        None => Err(SqlError::no_such_table(db, table)),
    }
}

pub(crate) fn is_dual(name: &ast::ObjectName) -> bool {
    let p = crate::expr::object_name_parts(name);
    p.len() == 1 && p[0].eq_ignore_ascii_case("dual")
}

/// A FROM table with its qualifier (alias or name).
pub(crate) type FromTable = (Arc<TableDef>, String);

/// How a table after the first joins what is before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JoinSide {
    Inner,
    /// LEFT [OUTER] JOIN: the rows before it are kept, with NULLs when nothing matches.
    Left,
    /// RIGHT [OUTER] JOIN: this table's rows are kept, with NULLs for the tables before it.
    Right,
}

/// For each table after the first: its ON condition and how it joins.
pub(crate) type JoinKind<'q> = (Option<&'q ast::Expr>, JoinSide);

/// FROM: the tables in order (comma joins and JOIN ... ON), each resolved with its SELECT
/// privilege; no table for `FROM DUAL` alone. `other` is asked first about each table
/// factor: a derived table or a CTE reference it compiles (`plan::select::subquery`).
pub(crate) fn from_tables<'q>(
    cx: &ExecContext,
    sel: &'q ast::Select,
    other: &mut dyn FnMut(&ast::TableFactor) -> Result<Option<FromTable>, SqlError>,
) -> Result<(Vec<FromTable>, Vec<JoinKind<'q>>), SqlError> {
    from_list(cx, &sel.from, other)
}

/// [`from_tables`] of a FROM list (a SELECT's, or a multi-table UPDATE's or DELETE's).
pub(crate) fn from_list<'q>(
    cx: &ExecContext,
    list: &'q [ast::TableWithJoins],
    other: &mut dyn FnMut(&ast::TableFactor) -> Result<Option<FromTable>, SqlError>,
) -> Result<(Vec<FromTable>, Vec<JoinKind<'q>>), SqlError> {
    let mut froms: Vec<FromTable> = Vec::new();
    let mut join_kinds: Vec<JoinKind<'q>> = Vec::new();
    let mut table_of =
        |tf: &ast::TableFactor| -> Result<Option<(Arc<TableDef>, String)>, SqlError> {
            if let Some(t) = other(tf)? {
                return Ok(Some(t));
            }
            match tf {
                ast::TableFactor::Table { name, alias, .. } if is_dual(name) && alias.is_none() => {
                    Ok(None)
                }
                ast::TableFactor::Table { name, alias, .. } => {
                    let t = resolve_table(cx, name, crate::privilege::SELECT)?;
                    let qn = match alias {
                        Some(a) => a.name.value.clone(),
                        None => t.name.clone(),
                    };
                    Ok(Some((t, qn)))
                }
                _ => Err(SqlError::unsupported("derived tables")),
            }
        };
    for (n, twj) in list.iter().enumerate() {
        match table_of(&twj.relation)? {
            Some(t) => {
                if n > 0 {
                    join_kinds.push((None, JoinSide::Inner));
                }
                froms.push(t);
            }
            None if list.len() == 1 && twj.joins.is_empty() => {}
            None => return Err(SqlError::unsupported("DUAL in a join")),
        }
        for j in &twj.joins {
            let (constraint, side) = match &j.join_operator {
                ast::JoinOperator::Join(c) | ast::JoinOperator::Inner(c) => (c, JoinSide::Inner),
                ast::JoinOperator::CrossJoin(c) => (c, JoinSide::Inner),
                ast::JoinOperator::Left(c) | ast::JoinOperator::LeftOuter(c) => (c, JoinSide::Left),
                ast::JoinOperator::Right(c) | ast::JoinOperator::RightOuter(c) => {
                    (c, JoinSide::Right)
                }
                _ => return Err(SqlError::unsupported("this kind of JOIN")),
            };
            let on = match constraint {
                ast::JoinConstraint::On(e) => Some(e),
                ast::JoinConstraint::None => None,
                _ => return Err(SqlError::unsupported("JOIN ... USING/NATURAL")),
            };
            match table_of(&j.relation)? {
                Some(t) => froms.push(t),
                None => return Err(SqlError::unsupported("DUAL in a join")),
            }
            join_kinds.push((on, side));
        }
    }
    Ok((froms, join_kinds))
}

/// The FROM tables laid out side by side in the joined row: table `k`'s columns start at
/// `offsets[k]`.
pub(crate) struct From {
    pub(crate) tables: Vec<FromTable>,
    pub(crate) offsets: Vec<usize>,
    /// A synthetic definition of the joined row (for result types), when there is a join.
    pub(crate) combined: Option<Arc<TableDef>>,
}

impl From {
    pub(crate) fn new(tables: Vec<FromTable>) -> From {
        let mut offsets = Vec::with_capacity(tables.len());
        let mut off = 0;
        for (t, _) in &tables {
            offsets.push(off);
            off += t.columns.len();
        }
        let combined = (tables.len() > 1).then(|| {
            let mut d = (*tables[0].0).clone();
            d.indexes.clear();
            for (t, _) in &tables[1..] {
                d.columns.extend(t.columns.iter().cloned());
            }
            Arc::new(d)
        });
        debug_assert!(
            combined.as_ref().is_none_or(|d| d.columns.len() == off),
            "the joined row holds every FROM table's columns, in order"
        );
        From {
            tables,
            offsets,
            combined,
        }
    }

    /// The tables after the first, with their qualifiers and offsets (the compiler's scope).
    pub(crate) fn joined(&self) -> Vec<(&TableDef, &str, usize)> {
        self.tables
            .iter()
            .zip(&self.offsets)
            .skip(1)
            .map(|((t, q), o)| (&**t, q.as_str(), *o))
            .collect()
    }

    /// Owner of a joined-row column position: (table index, column within it).
    pub(crate) fn owner(&self, i: usize) -> (usize, usize) {
        let k = self.offsets.iter().rposition(|&o| o <= i).unwrap_or(0);
        (k, i - self.offsets[k])
    }
}
