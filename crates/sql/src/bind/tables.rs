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
    if crate::mysqlschema::is_database(db) {
        return Err(crate::mysqlschema::refuse_change(cx, table));
    }
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

/// How the right operand of a join joins its left one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JoinSide {
    Inner,
    /// LEFT [OUTER] JOIN: the rows before it are kept, with NULLs when nothing matches.
    Left,
    /// RIGHT [OUTER] JOIN: this operand's rows are kept, with NULLs for the left one.
    Right,
}

/// A join's condition as written.
#[derive(Debug, Clone)]
pub(crate) enum JoinCond<'q> {
    /// A comma, `CROSS JOIN` or `JOIN` without a condition.
    None,
    On(&'q ast::Expr),
    /// `USING (a, b)`: the names as written.
    Using(Vec<String>),
    Natural,
}

/// A FROM clause as MariaDB nests it: FROM positions at the leaves, joins binding tighter
/// than commas, a parenthesised join one operand.
#[derive(Debug, Clone)]
pub(crate) enum FromNode<'q> {
    Table(usize),
    Join(Box<JoinNode<'q>>),
}

/// `left <side> JOIN right <cond>`, as written (a RIGHT JOIN is not swapped here).
#[derive(Debug, Clone)]
pub(crate) struct JoinNode<'q> {
    pub left: FromNode<'q>,
    pub right: FromNode<'q>,
    pub side: JoinSide,
    pub cond: JoinCond<'q>,
}

fn join_of<'q>(
    left: FromNode<'q>,
    right: FromNode<'q>,
    side: JoinSide,
    cond: JoinCond<'q>,
) -> FromNode<'q> {
    FromNode::Join(Box::new(JoinNode {
        left,
        right,
        side,
        cond,
    }))
}

/// FROM: the tables in written order, each resolved with its SELECT privilege, and how they
/// join (None for `FROM DUAL` alone). `other` is asked first about each table factor: a
/// derived table or a CTE reference it compiles (`plan::select::subquery`).
pub(crate) fn from_tables<'q>(
    cx: &ExecContext,
    sel: &'q ast::Select,
    other: &mut dyn FnMut(&ast::TableFactor) -> Result<Option<FromTable>, SqlError>,
) -> Result<(Vec<FromTable>, Option<FromNode<'q>>), SqlError> {
    from_list(cx, &sel.from, other)
}

/// [`from_tables`] of a FROM list (a SELECT's, or a multi-table UPDATE's or DELETE's).
pub(crate) fn from_list<'q>(
    cx: &ExecContext,
    list: &'q [ast::TableWithJoins],
    other: &mut dyn FnMut(&ast::TableFactor) -> Result<Option<FromTable>, SqlError>,
) -> Result<(Vec<FromTable>, Option<FromNode<'q>>), SqlError> {
    if let [twj] = list {
        if twj.joins.is_empty() {
            if let ast::TableFactor::Table {
                name, alias: None, ..
            } = &twj.relation
            {
                if is_dual(name) {
                    return Ok((Vec::new(), None));
                }
            }
        }
    }
    let mut b = Binder {
        cx,
        other,
        froms: Vec::new(),
    };
    let mut tree: Option<FromNode<'q>> = None;
    for twj in list {
        let item = b.with_joins(twj)?;
        tree = Some(match tree {
            None => item,
            Some(t) => join_of(t, item, JoinSide::Inner, JoinCond::None),
        });
    }
    Ok((b.froms, tree))
}

/// Resolves the table factors of a FROM clause in written order.
struct Binder<'c, 'o> {
    cx: &'c ExecContext,
    other: &'o mut dyn FnMut(&ast::TableFactor) -> Result<Option<FromTable>, SqlError>,
    froms: Vec<FromTable>,
}

impl Binder<'_, '_> {
    fn with_joins<'q>(&mut self, twj: &'q ast::TableWithJoins) -> Result<FromNode<'q>, SqlError> {
        let mut node = self.factor(&twj.relation)?;
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
            let cond = match constraint {
                ast::JoinConstraint::On(e) => JoinCond::On(e),
                ast::JoinConstraint::None => JoinCond::None,
                ast::JoinConstraint::Natural => JoinCond::Natural,
                ast::JoinConstraint::Using(names) => JoinCond::Using(
                    names
                        .iter()
                        .map(|n| crate::expr::object_name_parts(n).pop().unwrap_or_default())
                        .collect(),
                ),
            };
            if side != JoinSide::Inner && matches!(cond, JoinCond::None) {
                // MariaDB's grammar wants a condition for an outer join.
                return Err(SqlError::syntax(""));
            }
            let right = self.factor(&j.relation)?;
            node = join_of(node, right, side, cond);
        }
        Ok(node)
    }

    fn factor<'q>(&mut self, tf: &'q ast::TableFactor) -> Result<FromNode<'q>, SqlError> {
        if let Some(t) = (self.other)(tf)? {
            self.froms.push(t);
            return Ok(FromNode::Table(self.froms.len() - 1));
        }
        match tf {
            ast::TableFactor::Table { name, .. } if is_dual(name) => {
                Err(SqlError::unsupported("DUAL in a join"))
            }
            ast::TableFactor::Table { name, alias, .. } => {
                let t = resolve_table(self.cx, name, crate::privilege::SELECT)?;
                let qn = match alias {
                    Some(a) => a.name.value.clone(),
                    None => t.name.clone(),
                };
                self.froms.push((t, qn));
                Ok(FromNode::Table(self.froms.len() - 1))
            }
            ast::TableFactor::NestedJoin {
                table_with_joins,
                alias: None,
            } => self.with_joins(table_with_joins),
            ast::TableFactor::NestedJoin { .. } => Err(SqlError::syntax("")),
            _ => Err(SqlError::unsupported("derived tables")),
        }
    }
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
