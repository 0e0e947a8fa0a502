//! Multi-table UPDATE and DELETE, bound and planned: `UPDATE t1 JOIN t2 ON ... SET t1.a = ...,
//! t2.b = ... WHERE ...`, `UPDATE t1, t2 SET ...`, `DELETE t1[, t2] FROM <join> WHERE ...`
//! and `DELETE FROM t1[, t2] USING <join> WHERE ...`, as MariaDB 10.11 takes them.
//!
//! The FROM tables join as a SELECT's do (`plan::join`, every table read with exclusive row
//! locks); the SET expressions are compiled over the joined row, each assigning a column of
//! one FROM table (a target). UPDATE takes ORDER BY (the joined rows are sorted) and LIMIT
//! (at most that many target rows), as MariaDB 10.11 does; in a DELETE they are a syntax
//! error (1064), as in MariaDB's grammar.
//!
//! Privileges: SELECT on every FROM table (the join reads them), UPDATE on each table a SET
//! assigns, DELETE on each table deleted from. MariaDB asks SELECT only of the tables whose
//! columns are read, so an account with UPDATE but no SELECT on a target is refused here.
//!
//! Invariants: each assignment's target is a column of a FROM table and every target table is
//! a FROM table; a target of DELETE names a FROM table by its alias or name (1109 otherwise).

use std::sync::Arc;

use onelog_engine::TableDef;
use onelog_protocol::errors;
use sqlparser::ast;

use crate::bind::tables::{from_list, From};
use crate::context::ExecContext;
use crate::error::SqlError;
use crate::expr::{Compiler, Expr, Scope};
use crate::plan::access::{plan, Plan};
use crate::plan::join::{plan_joins, JoinPlan};
use crate::plan::select::{compile_joins, subquery};
use crate::plan::view_dml;

/// A multi-table UPDATE or DELETE.
#[derive(Debug, Clone)]
pub(crate) struct MultiPlan {
    /// The FROM tables, in order.
    pub tables: Vec<Arc<TableDef>>,
    /// The FROM tables' names as the statement gives them (alias, else name), for EXPLAIN.
    pub aliases: Vec<String>,
    pub join: JoinPlan,
    /// The access path of the first FROM table (the join's driver unless a RIGHT JOIN leads).
    pub first: Plan,
    /// UPDATE: (FROM table, its column, value over the joined row), in SET order.
    pub assignments: Vec<(usize, usize, Expr)>,
    /// The FROM tables changed: UPDATE's in order of their first assignment, DELETE's in the
    /// order named.
    pub targets: Vec<usize>,
    /// UPDATE's ORDER BY (over the joined row) and LIMIT (target rows changed at most).
    pub order_by: Vec<(Expr, bool)>,
    pub limit: Option<Expr>,
    pub delete: bool,
    /// Subqueries of its ON, WHERE, SET and ORDER BY (`plan::select::subquery`): the
    /// uncorrelated ones run once before the join, the correlated ones per joined row, all
    /// before any row changes (`execute::multi_dml`).
    pub subqueries: Vec<crate::plan::select::subquery::SubPlan>,
    #[allow(dead_code)]
    pub params: usize,
    /// A view the statement reads or writes (`plan::view_dml`; the one written WITH CHECK
    /// OPTION when there is one), and that CHECK OPTION over the joined row.
    pub view: Option<Box<crate::plan::view_dml::ViewTarget>>,
    pub check: Option<Expr>,
}

impl MultiPlan {
    /// Where FROM table `k`'s columns start in the joined row.
    pub(crate) fn offset(&self, k: usize) -> usize {
        self.tables[..k].iter().map(|t| t.columns.len()).sum()
    }
}

/// Whether `u` is a multi-table UPDATE (a join, or several tables).
pub(crate) fn is_multi_update(u: &ast::Update) -> bool {
    !u.table.joins.is_empty()
        || matches!(&u.from, Some(ast::UpdateTableFromKind::BeforeSet(v)) if !v.is_empty())
}

/// Whether `d` is a multi-table DELETE.
pub(crate) fn is_multi_delete(d: &ast::Delete) -> bool {
    let from = match &d.from {
        ast::FromTable::WithFromKeyword(v) | ast::FromTable::WithoutKeyword(v) => v,
    };
    !d.tables.is_empty() || d.using.is_some() || from.len() != 1 || !from[0].joins.is_empty()
}

/// The join's ON conditions compiled in `c` (before anything else: an unqualified name of
/// a USING column reads the merged one).
fn joins_of(
    c: &mut Compiler,
    from: &From,
    tree: Option<&crate::bind::tables::FromNode<'_>>,
) -> Result<crate::plan::select::from::Joins, SqlError> {
    let joins = compile_joins(c, tree, from)?;
    // An ON condition's bad name (held back for a SELECT's order) is reported here.
    if let Some(e) = c.deferred_on.take() {
        return Err(e);
    }
    joins.ok_or_else(|| SqlError::unsupported("a multi-table statement without tables"))
}

/// Plans the compiled `joins` with the WHERE compiled in `c` (over the joined row).
fn join_and_where(
    c: &mut Compiler,
    from: &From,
    joins: crate::plan::select::from::Joins,
    selection: Option<&ast::Expr>,
) -> Result<(JoinPlan, Plan), SqlError> {
    c.place = "WHERE";
    let w = match selection {
        Some(e) => Some(c.compile(e)?),
        None => None,
    };
    let first = plan(&from.tables[0].0, w.as_ref());
    let join = plan_joins(from, joins.specs, w.as_ref(), &[]);
    Ok((join, first))
}

fn scope_of<'a>(from: &'a From, db: &'a str) -> Scope<'a> {
    Scope {
        table: Some(&from.tables[0].0),
        qualifier: &from.tables[0].1,
        db,
        joined: from.joined(),
    }
}

/// `UPDATE <join> SET ... [WHERE ...]`.
pub(crate) fn compile_multi_update(
    cx: &ExecContext,
    u: &ast::Update,
) -> Result<MultiPlan, SqlError> {
    // Views in the FROM list are merged onto their base tables first (`plan::view_dml`).
    let r = view_dml::rewrite_multi_update(cx, u).and_then(|rw| {
        let Some(rw) = rw else {
            return compile_multi_update_checked(cx, u, None);
        };
        let check = rw.check.as_ref().map(|(_, c)| c);
        let mut p = compile_multi_update_checked(cx, &rw.stmt, check)?;
        p.view = Some(Box::new(rw.view));
        Ok(p)
    });
    cx.view_grants.borrow_mut().clear();
    r
}

/// [`compile_multi_update`], with the CHECK OPTION of the join view it writes through
/// (`check`, over the FROM tables) compiled into [`MultiPlan::check`].
pub(crate) fn compile_multi_update_checked(
    cx: &ExecContext,
    u: &ast::Update,
    check: Option<&ast::Expr>,
) -> Result<MultiPlan, SqlError> {
    if u.returning.is_some() {
        return Err(SqlError::unsupported("RETURNING in a multi-table UPDATE"));
    }
    let mut list = vec![u.table.clone()];
    if let Some(ast::UpdateTableFromKind::BeforeSet(more)) = &u.from {
        list.extend(more.iter().cloned());
    } else if u.from.is_some() {
        return Err(SqlError::unsupported("UPDATE ... FROM"));
    }
    let (froms, kinds) = from_list(cx, &list, &mut |_| Ok(None))?;
    let from = From::new(froms);
    let db = cx.current_db.clone().unwrap_or_default();
    let hook = crate::plan::select::subquery::Hook::new(cx, Default::default());
    let mut c = Compiler::new(scope_of(&from, &db), "SET");
    c.subq = Some(&hook);
    let joins = joins_of(&mut c, &from, kinds.as_ref())?;
    c.place = "SET";
    let mut assignments = Vec::with_capacity(u.assignments.len());
    let mut targets: Vec<usize> = Vec::new();
    for a in &u.assignments {
        let ast::AssignmentTarget::ColumnName(n) = &a.target else {
            return Err(SqlError::unsupported("tuple assignment"));
        };
        let name = ast::Expr::CompoundIdentifier(
            n.0.iter().filter_map(|p| p.as_ident().cloned()).collect(),
        );
        // An ENUM/SET/BIT column reads as its text; the target is the column itself.
        let Expr::Col(i) = crate::expr::numeric_view(c.compile(&name)?) else {
            return Err(SqlError::unknown_column(&n.to_string(), "SET"));
        };
        let (k, col) = from.owner(i);
        c.place = "SELECT";
        let value = super::dml::stored(&from.tables[k].0, col, c.compile(&a.value)?);
        c.place = "SET";
        if !targets.contains(&k) {
            let t = &from.tables[k].0;
            cx.check_table_privilege(&t.db, &t.name, crate::privilege::UPDATE)?;
            targets.push(k);
        }
        assignments.push((k, col, value));
    }
    let (join, first) = join_and_where(&mut c, &from, joins, u.selection.as_ref())?;
    c.place = "ORDER BY";
    let mut order_by = Vec::with_capacity(u.order_by.len());
    for o in &u.order_by {
        let desc = matches!(o.options.sort, Some(ast::OrderBySort::Desc));
        order_by.push((c.compile(&o.expr)?, desc));
    }
    let limit = match &u.limit {
        Some(e) => Some(c.compile(e)?),
        None => None,
    };
    c.place = "WHERE";
    let check = match check {
        Some(e) => Some(c.compile(e)?),
        None => None,
    };
    Ok(MultiPlan {
        tables: from.tables.iter().map(|(t, _)| t.clone()).collect(),
        aliases: from.tables.iter().map(|(_, q)| q.clone()).collect(),
        join,
        first,
        assignments,
        targets,
        order_by,
        limit,
        delete: false,
        params: c.params,
        subqueries: {
            drop(c);
            crate::plan::select::subquery::dml_subqueries(hook)
        },
        view: None,
        check,
    })
}

/// The FROM table a DELETE target names: by alias or name (and database when given); 1109
/// when none.
fn delete_target(from: &From, name: &ast::ObjectName) -> Result<usize, SqlError> {
    let parts = crate::expr::object_name_parts(name);
    let (db, t) = match parts.as_slice() {
        [t] => (None, t.as_str()),
        [d, t] => (Some(d.as_str()), t.as_str()),
        _ => return Err(SqlError::syntax(&name.to_string())),
    };
    let hit = from.tables.iter().position(|(def, q)| {
        let named = q.eq_ignore_ascii_case(t) || def.name == t;
        named && db.is_none_or(|d| def.db == d)
    });
    hit.ok_or_else(|| {
        SqlError::of(
            errors::ER_UNKNOWN_TABLE,
            format!("Unknown table '{t}' in MULTI DELETE"),
        )
    })
}

/// `DELETE t1[, t2] FROM <join> [WHERE ...]` / `DELETE FROM t1[, t2] USING <join> [WHERE ...]`.
pub(crate) fn compile_multi_delete(
    cx: &ExecContext,
    d: &ast::Delete,
) -> Result<MultiPlan, SqlError> {
    // MariaDB's grammar has no ORDER BY or LIMIT for a multi-table DELETE: 1064 at them.
    if let Some(o) = d.order_by.first() {
        return Err(SqlError::syntax(&format!("ORDER BY {o}")));
    }
    if let Some(l) = &d.limit {
        return Err(SqlError::syntax(&format!("LIMIT {l}")));
    }
    if d.returning.is_some() {
        return Err(SqlError::unsupported("RETURNING in a multi-table DELETE"));
    }
    // Views in the FROM list are merged onto their base tables first (`plan::view_dml`).
    let rw = view_dml::rewrite_multi_delete(cx, d);
    if !matches!(rw, Ok(None)) {
        let r = rw.and_then(|rw| match rw {
            Some(rw) => {
                let mut p = compile_multi_delete(cx, &rw.stmt)?;
                p.view = Some(Box::new(rw.view));
                Ok(p)
            }
            None => Err(SqlError::unsupported("multi-table DELETE")),
        });
        cx.view_grants.borrow_mut().clear();
        return r;
    }
    let from_kw = match &d.from {
        ast::FromTable::WithFromKeyword(v) | ast::FromTable::WithoutKeyword(v) => v,
    };
    // DELETE a, b FROM <join>: the targets are listed before FROM. DELETE FROM a, b USING
    // <join>: after it.
    let (names, list): (Vec<ast::ObjectName>, &[ast::TableWithJoins]) = match &d.using {
        Some(using) => {
            let mut names = Vec::with_capacity(from_kw.len());
            for t in from_kw {
                match (&t.relation, t.joins.is_empty()) {
                    (ast::TableFactor::Table { name, .. }, true) => names.push(name.clone()),
                    _ => return Err(SqlError::syntax("USING")),
                }
            }
            (names, using)
        }
        None if !d.tables.is_empty() => (d.tables.clone(), from_kw),
        None => {
            // DELETE FROM t1 JOIN t2: MariaDB needs the targets named.
            return Err(SqlError::syntax("JOIN"));
        }
    };
    let (froms, kinds) = from_list(cx, list, &mut |_| Ok(None))?;
    let from = From::new(froms);
    let mut targets = Vec::with_capacity(names.len());
    for n in &names {
        let k = delete_target(&from, n)?;
        if !targets.contains(&k) {
            let t = &from.tables[k].0;
            cx.check_table_privilege(&t.db, &t.name, crate::privilege::DELETE)?;
            targets.push(k);
        }
    }
    let db = cx.current_db.clone().unwrap_or_default();
    let hook = crate::plan::select::subquery::Hook::new(cx, Default::default());
    let mut c = Compiler::new(scope_of(&from, &db), "WHERE");
    c.subq = Some(&hook);
    let joins = joins_of(&mut c, &from, kinds.as_ref())?;
    let (join, first) = join_and_where(&mut c, &from, joins, d.selection.as_ref())?;
    let params = c.params;
    drop(c);
    let subqueries = crate::plan::select::subquery::dml_subqueries(hook);
    // MariaDB 10.11 refuses a subquery reading a table the statement deletes from.
    for &k in &targets {
        let (t, q) = &from.tables[k];
        if subqueries
            .iter()
            .any(|s| subquery::plan_reads(&s.plan, t.id))
        {
            return Err(SqlError::of(
                errors::ER_UPDATE_TABLE_USED,
                format!("Table '{q}' is specified twice, both as a target for 'DELETE' and as a separate source for data"),
            ));
        }
    }
    Ok(MultiPlan {
        tables: from.tables.iter().map(|(t, _)| t.clone()).collect(),
        aliases: from.tables.iter().map(|(_, q)| q.clone()).collect(),
        join,
        first,
        assignments: Vec::new(),
        targets,
        order_by: Vec::new(),
        limit: None,
        delete: true,
        params,
        subqueries,
        view: None,
        check: None,
    })
}
