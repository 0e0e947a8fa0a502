//! Views read where a table can be: each reference to a view compiles the view's stored
//! SELECT again, as a derived table (MariaDB's TEMPTABLE algorithm: its rows are computed
//! before the query reads them), named by the view's column list.
//!
//! Invariants: the SELECT's unqualified table names resolve against the database that was
//! current when the view was created (`ViewDef::query_db`), never the reader's; with
//! `SQL SECURITY DEFINER` the names inside are checked against the definer's privileges
//! (`ExecContext::definer`), with INVOKER against the reader's (or the enclosing DEFINER
//! view's); the reader needs SELECT on the view itself; any failure to compile the stored
//! SELECT (a table or column gone, a privilege missing) is MariaDB's 1356, and a definer that
//! no longer exists is 1449; views nest at most [`MAX_VIEW_DEPTH`] deep (1462 beyond, which
//! is also how a view that reaches itself ends).
//!
//! Called by `plan::select::subquery::Hook::derived_table` (FROM), `execute::view` (CREATE
//! VIEW's validation, SHOW CREATE VIEW) and `execute::admin::show` (DESCRIBE of a view).

use std::ops::ControlFlow;
use std::sync::Arc;

use onelog_engine::{ColumnDef, TableDef, ViewDef};
use onelog_protocol::errors;
use sqlparser::ast::{self, Visit, Visitor};

use super::subquery::{compile_derived, derived_table_def, Ctx, Derived};
use crate::context::ExecContext;
use crate::error::SqlError;

/// How deep views may read views.
pub(crate) const MAX_VIEW_DEPTH: u32 = 32;

/// The view `name` names (against the current database), when it is one.
pub(crate) fn view_named(cx: &ExecContext, name: &ast::ObjectName) -> Option<Arc<ViewDef>> {
    let cat = cx.server.engine.catalog();
    if !cat.has_views() {
        // Every SELECT asks about each of its tables: no allocation while there is no view.
        return None;
    }
    let parts = crate::expr::object_name_parts(name);
    let (db, v) = match parts.as_slice() {
        [v] => (cx.current_db.clone()?, v.clone()),
        [d, v] => (d.clone(), v.clone()),
        _ => return None,
    };
    cat.view(&db, &v).cloned()
}

/// A reference to view `v` in FROM, read under the qualifier `qn`: its SELECT privilege
/// checked, its query compiled as a derived table.
/// `outer`: the WHERE of a SELECT that reads the view alone (its terms that can be are
/// pushed into the view's SELECT: `plan::select::merge`).
pub(crate) fn view_ref(
    cx: &ExecContext,
    v: &ViewDef,
    qn: &str,
    outer: Option<&ast::Expr>,
) -> Result<(Arc<TableDef>, Derived), SqlError> {
    cx.check_table_privilege(&v.db, &v.name, crate::privilege::SELECT)?;
    let (plan, defs) = compile_view(cx, v, outer.map(|w| (w, qn)))?;
    Ok((named_columns(v, defs, qn)?, plan))
}

/// The definition of view `v`'s rows (DESCRIBE, SHOW COLUMNS), named after the view.
pub(crate) fn view_table_def(cx: &ExecContext, v: &ViewDef) -> Result<Arc<TableDef>, SqlError> {
    let (_, defs) = compile_view(cx, v, None)?;
    let t = named_columns(v, defs, &v.name)?;
    let mut t = (*t).clone();
    t.db = v.db.clone();
    Ok(Arc::new(t))
}

/// `defs` renamed to the view's columns (1356 when the SELECT no longer gives as many).
fn named_columns(v: &ViewDef, defs: Vec<ColumnDef>, qn: &str) -> Result<Arc<TableDef>, SqlError> {
    if defs.len() != v.columns.len() {
        return Err(invalid(v));
    }
    let renames: Vec<ast::TableAliasColumnDef> = v
        .columns
        .iter()
        .map(|c| ast::TableAliasColumnDef::from_name(c.as_str()))
        .collect();
    derived_table_def(defs, qn, &renames).map_err(|_| invalid(v))
}

/// Compiles view `v`'s SELECT in its security context (module docs), with the terms of
/// `push` (a WHERE reading the view alone, and the view's qualifier there) it can take.
fn compile_view(
    cx: &ExecContext,
    v: &ViewDef,
    push: Option<(&ast::Expr, &str)>,
) -> Result<(Derived, Vec<ColumnDef>), SqlError> {
    let depth = cx.view_depth.get();
    if depth >= MAX_VIEW_DEPTH {
        return Err(SqlError::of(
            errors::ER_VIEW_RECURSIVE,
            format!("`{}`.`{}` contains view recursion", v.db, v.name),
        ));
    }
    let definer = if v.invoker || !cx.privs.enforce {
        None
    } else {
        let (user, host) = &v.definer;
        match cx.server.engine.catalog().account(user, host) {
            Some(a) => Some(a.clone()),
            None => return Err(no_such_definer(user, host)),
        }
    };
    cx.view_depth.set(depth + 1);
    let saved = definer.map(|a| cx.definer.replace(Some(a)));
    let r = parse_body(&v.query, &v.query_db).and_then(|mut q| {
        if let Some((w, qn)) = push {
            super::merge::push_where(cx, &mut q, &v.columns, qn, w);
        }
        compile_derived(cx, &q, Ctx::default())
    });
    if let Some(s) = saved {
        cx.definer.replace(s);
    }
    cx.view_depth.set(depth);
    r.map_err(|e| match e.code {
        // Errors of the view itself stay; the others are MariaDB's "invalid view".
        1449 | 1462 | 1436 | 1317 | 1969 | 1927 => e,
        _ => invalid(v),
    })
}

/// 1449: the view's definer is not an account (any more).
pub(crate) fn no_such_definer(user: &str, host: &str) -> SqlError {
    SqlError::of(
        errors::ER_NO_SUCH_USER,
        format!("The user specified as a definer ('{user}'@'{host}') does not exist"),
    )
}

/// 1356 for view `v`.
pub(crate) fn invalid(v: &ViewDef) -> SqlError {
    SqlError::of(
        errors::ER_VIEW_INVALID,
        format!(
            "View '{}.{}' references invalid table(s) or column(s) or function(s) or \
             definer/invoker of view lack rights to use them",
            v.db, v.name
        ),
    )
}

/// A view's SELECT text compiled as a derived table, its unqualified table names resolved
/// against `query_db` (CREATE VIEW's validation runs this too).
pub(crate) fn compile_body(
    cx: &ExecContext,
    query: &str,
    query_db: &str,
) -> Result<(Derived, Vec<ColumnDef>), SqlError> {
    let q = parse_body(query, query_db)?;
    compile_derived(cx, &q, Ctx::default())
}

/// A view's SELECT parsed, with its table names qualified by `query_db` (unless empty);
/// 1064 for text that is not one SELECT (a locking clause included).
pub(crate) fn parse_body(query: &str, query_db: &str) -> Result<ast::Query, SqlError> {
    let parsed = crate::parse::parse_statement(query)?;
    let crate::parse::Parsed::Sql(stmt, crate::parse::LockClause::None) = parsed else {
        return Err(SqlError::syntax(query));
    };
    let ast::Statement::Query(mut q) = *stmt else {
        return Err(SqlError::syntax(query));
    };
    if crate::parse::count_placeholders(&ast::Statement::Query(q.clone())) > 0 {
        return Err(SqlError::syntax("?"));
    }
    if !query_db.is_empty() {
        qualify(&mut q, query_db);
    }
    Ok(*q)
}

/// Whether MariaDB can MERGE a view of this SELECT (else `ALGORITHM=MERGE` becomes
/// UNDEFINED with warning 1354): one SELECT reading a table, without DISTINCT, GROUP BY,
/// HAVING, LIMIT, aggregate or window functions.
pub(crate) fn mergeable(q: &ast::Query) -> bool {
    let ast::SetExpr::Select(sel) = &*q.body else {
        return false;
    };
    let grouped = !matches!(&sel.group_by, ast::GroupByExpr::Expressions(e, _) if e.is_empty());
    if q.with.is_some()
        || q.limit_clause.is_some()
        || sel.from.is_empty()
        || sel.distinct.is_some()
        || grouped
        || sel.having.is_some()
    {
        return false;
    }
    const AGGREGATES: &[&str] = &[
        "COUNT",
        "SUM",
        "AVG",
        "MIN",
        "MAX",
        "GROUP_CONCAT",
        "BIT_AND",
        "BIT_OR",
        "BIT_XOR",
        "STD",
        "STDDEV",
        "STDDEV_POP",
        "STDDEV_SAMP",
        "VARIANCE",
        "VAR_POP",
        "VAR_SAMP",
        "JSON_ARRAYAGG",
        "JSON_OBJECTAGG",
    ];
    let aggregate = ast::visit_expressions(&sel.projection, |e: &ast::Expr| match e {
        ast::Expr::Function(f)
            if f.over.is_some()
                || AGGREGATES
                    .iter()
                    .any(|a| f.name.to_string().eq_ignore_ascii_case(a)) =>
        {
            ControlFlow::Break(())
        }
        _ => ControlFlow::Continue(()),
    });
    aggregate.is_continue()
}

/// Qualifies every one-part table name of `q` that is not a CTE name of `q` with `db`.
pub(crate) fn qualify(q: &mut ast::Query, db: &str) {
    let mut ctes = CteNames(Vec::new());
    let _ = q.visit(&mut ctes);
    let names = ctes.0;
    let _ = ast::visit_relations_mut(q, |name: &mut ast::ObjectName| {
        if let [ast::ObjectNamePart::Identifier(id)] = name.0.as_slice() {
            if !names.iter().any(|n| n.eq_ignore_ascii_case(&id.value)) {
                let mut d = ast::Ident::new(db);
                d.quote_style = Some('`');
                name.0.insert(0, ast::ObjectNamePart::Identifier(d));
            }
        }
        ControlFlow::<()>::Continue(())
    });
}

/// Collects the CTE names a query defines (at any depth).
struct CteNames(Vec<String>);

impl Visitor for CteNames {
    type Break = ();

    fn pre_visit_query(&mut self, q: &ast::Query) -> ControlFlow<()> {
        if let Some(w) = &q.with {
            self.0
                .extend(w.cte_tables.iter().map(|c| c.alias.name.value.clone()));
        }
        ControlFlow::Continue(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_names_are_qualified_except_ctes_and_qualified_ones() {
        let mut q = parse_body(
            "with c as (select 1 as x) select t.a from t join c join o.u on 1 \
             where t.a in (select b from s)",
            "",
        )
        .unwrap();
        qualify(&mut q, "d");
        let text = q.to_string();
        assert!(text.contains("FROM `d`.t JOIN (c JOIN o.u"), "{text}");
        assert!(text.contains("FROM `d`.s"), "{text}");
    }

    #[test]
    fn a_view_body_is_one_select_without_placeholders() {
        assert_eq!(parse_body("select ?", "d").unwrap_err().code, 1064);
        assert_eq!(parse_body("delete from t", "d").unwrap_err().code, 1064);
        assert_eq!(
            parse_body("select 1 for update", "d").unwrap_err().code,
            1064
        );
        assert!(parse_body("select 1 union select 2", "d").is_ok());
    }
}
