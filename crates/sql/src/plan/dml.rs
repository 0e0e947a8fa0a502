//! INSERT / REPLACE / INSERT ... SELECT, UPDATE and DELETE, bound and planned: the target
//! table and its privileges, the column list, value and assignment expressions, WHERE,
//! ORDER BY and LIMIT, into the plans `execute::dml` runs and prepared statements cache.
//!
//! Invariants: an INSERT plan's rows have one expression per target column; placeholders are
//! numbered in textual order.

use crate::bind::tables::resolve_table;
use crate::bind::target::{check_select, scope, single_table, target_column};
use crate::context::ExecContext;
use crate::error::SqlError;
use crate::expr::{Compiler, Expr};
use crate::parse::fast_insert::LiteralInsert;
use crate::plan::access::{plan, Plan};
use crate::plan::select::SelectPlan;
use crate::plan::view_dml::{self, ViewTarget};
use onelog_engine::TableDef;
use onelog_protocol::errors;
use sqlparser::ast;
use std::sync::Arc;

#[derive(Debug, Clone)]
pub(crate) struct InsertPlan {
    pub table: Arc<TableDef>,
    pub columns: Vec<usize>,
    /// Value expressions per row; None: `DEFAULT`.
    pub rows: Vec<Vec<Option<Expr>>>,
    pub select: Option<Box<SelectPlan>>,
    pub ignore: bool,
    pub replace: bool,
    pub on_dup: Vec<(usize, Expr)>,
    /// Subqueries of its VALUES / SET rows (uncorrelated) and ON DUPLICATE KEY UPDATE
    /// (`execute::dml`: each runs when first evaluated, a correlated one per row found).
    pub subqueries: Vec<crate::plan::select::subquery::SubPlan>,
    #[allow(dead_code)]
    pub params: usize,
    /// `RETURNING ...`: the items as a SELECT over the target table, evaluated on each row
    /// stored (or, for DELETE, removed).
    pub returning: Option<Box<SelectPlan>>,
    /// The view written through (`plan::view_dml`), when the statement named one.
    pub view: Option<Box<ViewTarget>>,
}

#[derive(Debug, Clone)]
pub(crate) struct UpdatePlan {
    pub table: Arc<TableDef>,
    /// Uncorrelated subqueries of its expressions (`plan::select::subquery`), run before any row
    /// changes.
    pub subqueries: Vec<crate::plan::select::subquery::SubPlan>,
    pub assignments: Vec<(usize, Expr)>,
    pub plan: Plan,
    pub order_by: Vec<(Expr, bool)>,
    pub limit: Option<Expr>,
    #[allow(dead_code)]
    pub params: usize,
    /// The view written through (`plan::view_dml`), when the statement named one.
    pub view: Option<Box<ViewTarget>>,
    /// `UPDATE IGNORE`: a row whose new key is a duplicate keeps its old values (MariaDB
    /// 10.11 gives no warning for it), conversion errors are warnings.
    pub ignore: bool,
}

#[derive(Debug, Clone)]
pub(crate) struct DeletePlan {
    pub table: Arc<TableDef>,
    /// Uncorrelated subqueries of its expressions (`plan::select::subquery`), run before any row
    /// changes.
    pub subqueries: Vec<crate::plan::select::subquery::SubPlan>,
    pub plan: Plan,
    pub order_by: Vec<(Expr, bool)>,
    pub limit: Option<Expr>,
    #[allow(dead_code)]
    pub params: usize,
    pub returning: Option<Box<SelectPlan>>,
    /// The view deleted through (`plan::view_dml`), when the statement named one.
    pub view: Option<Box<ViewTarget>>,
    /// `DELETE IGNORE`: a row a foreign key holds (1451) stays, its error a warning; so do
    /// the errors IGNORE downgrades in the WHERE (MariaDB).
    pub ignore: bool,
}

/// `RETURNING items` of INSERT/REPLACE/DELETE on `t`: compiled as `SELECT items FROM t`
/// (which checks SELECT on it), so the result columns are the SELECT's. Aggregates and
/// placeholders in it are refused (MariaDB: aggregates are 1111).
fn compile_returning(
    cx: &ExecContext,
    items: &Option<Vec<ast::SelectItem>>,
    t: &TableDef,
) -> Result<Option<Box<SelectPlan>>, SqlError> {
    let Some(items) = items else {
        return Ok(None);
    };
    let list: Vec<String> = items.iter().map(|i| i.to_string()).collect();
    let quote = |s: &str| format!("`{}`", s.replace('`', "``"));
    let sql = format!(
        "SELECT {} FROM {}.{}",
        list.join(", "),
        quote(&t.db),
        quote(&t.name)
    );
    let crate::parse::Parsed::Sql(stmt, _) = crate::parse::parse_statement(&sql)? else {
        return Err(SqlError::unsupported("this RETURNING"));
    };
    let ast::Statement::Query(q) = &*stmt else {
        return Err(SqlError::unsupported("this RETURNING"));
    };
    let sp =
        crate::plan::select::compile(cx, q, crate::parse::LockClause::None).map_err(|mut e| {
            // MariaDB names the clause in 1054.
            e.message = e.message.replace("in 'SELECT'", "in 'RETURNING'");
            e
        })?;
    if !sp.aggs.is_empty() {
        return Err(SqlError::of(
            errors::ER_INVALID_GROUP_FUNC_USE,
            "Invalid use of group function",
        ));
    }
    if sp.params > 0 {
        return Err(SqlError::unsupported("placeholders in RETURNING"));
    }
    Ok(Some(Box::new(sp)))
}

/// The table an INSERT / REPLACE writes (its privileges checked: INSERT, and DELETE for
/// REPLACE, UPDATE for ON DUPLICATE KEY UPDATE, as MariaDB) and the positions of the target
/// columns as written (empty: none written).
fn insert_target(
    cx: &ExecContext,
    name: &ast::ObjectName,
    written: &[ast::ObjectName],
    replace: bool,
    on_dup_update: bool,
) -> Result<(Arc<TableDef>, Vec<usize>), SqlError> {
    let mut need = crate::privilege::INSERT;
    if replace {
        need |= crate::privilege::DELETE;
    }
    if on_dup_update {
        need |= crate::privilege::UPDATE;
    }
    let t = resolve_table(cx, name, need)?;
    let columns = written
        .iter()
        .map(|c| target_column(&t, c, "INSERT INTO"))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((t, columns))
}

/// The value expression `e` to be stored in column `col` of `t`: a hex or bit literal there
/// is stored as its number when the column is numeric (`expr::hybrid`).
pub(crate) fn stored(t: &TableDef, col: usize, e: Expr) -> Expr {
    match t.columns.get(col) {
        Some(c) => crate::expr::hybrid_for_column(e, &c.ty),
        None => e,
    }
}

/// 1136 unless the `row_no`th row (from 1) has one value per target column.
fn check_row_width(values: usize, columns: usize, row_no: usize) -> Result<(), SqlError> {
    if values == columns {
        return Ok(());
    }
    Err(SqlError::of(
        errors::ER_WRONG_VALUE_COUNT_ON_ROW,
        format!("Column count doesn't match value count at row {row_no}"),
    ))
}

/// The plan of an INSERT the fast path scanned (`crate::parse::fast_insert`): the plan
/// [`compile_insert`] builds for the same statement, without its AST.
pub(crate) fn compile_literal_insert(
    cx: &ExecContext,
    ins: LiteralInsert,
) -> Result<InsertPlan, SqlError> {
    let (t, mut columns) = insert_target(cx, &ins.table, &ins.columns, ins.replace, false)?;
    // `VALUES ()`: no column named, every row of defaults (as MariaDB).
    if columns.is_empty() && !ins.rows.first().is_some_and(|r| r.is_empty()) {
        columns = (0..t.columns.len()).collect();
    }
    let mut rows = Vec::with_capacity(ins.rows.len());
    for r in ins.rows {
        check_row_width(r.len(), columns.len(), rows.len() + 1)?;
        rows.push(r.into_iter().map(|v| v.map(Expr::Lit)).collect());
    }
    Ok(InsertPlan {
        table: t,
        columns,
        rows,
        select: None,
        ignore: ins.ignore,
        replace: ins.replace,
        on_dup: Vec::new(),
        params: 0,
        // The scanner takes no RETURNING (it falls back to the parser for it).
        returning: None,
        subqueries: Vec::new(),
        view: None,
    })
}

pub(crate) fn compile_insert(cx: &ExecContext, ins: &ast::Insert) -> Result<InsertPlan, SqlError> {
    let name = match &ins.table {
        ast::TableObject::TableName(n) => n,
        _ => return Err(SqlError::unsupported("INSERT into a table function")),
    };
    if let Some(v) = view_dml::target_view(cx, name) {
        let rw = view_dml::rewrite_insert(cx, ins, &v);
        let r = rw.and_then(|rw| {
            let mut p = compile_insert(cx, &rw.stmt)?;
            p.view = Some(view_target(cx, &rw.merged, &p.table, rw.target.as_deref())?);
            Ok(p)
        });
        cx.view_grants.borrow_mut().clear();
        return r;
    }
    let on_dup_update = matches!(ins.on, Some(ast::OnInsert::DuplicateKeyUpdate(_)));
    let (t, mut columns) = insert_target(cx, name, &ins.columns, ins.replace_into, on_dup_update)?;
    let db = cx.current_db.clone().unwrap_or_default();
    let qualifier = t.name.clone();
    let hook = crate::plan::select::subquery::Hook::new(cx, Default::default());
    // MariaDB 10.11.14 names the clause of an unknown column in a value 'VALUES'.
    let mut c = Compiler::new(scope(&t, &qualifier, &db), "VALUES");
    c.subq = Some(&hook);
    let mut rows = Vec::new();
    let mut select = None;
    if !ins.assignments.is_empty() {
        // INSERT ... SET a=1, b=2
        let mut row = Vec::new();
        for a in &ins.assignments {
            let ast::AssignmentTarget::ColumnName(n) = &a.target else {
                return Err(SqlError::unsupported("tuple assignment"));
            };
            let col = target_column(&t, n, "INSERT INTO")?;
            columns.push(col);
            row.push(Some(stored(&t, col, c.compile(&a.value)?)));
        }
        rows.push(row);
    } else {
        let Some(src) = &ins.source else {
            return Err(SqlError::syntax(&ins.to_string()));
        };
        match &*src.body {
            ast::SetExpr::Values(v) => {
                // `INSERT INTO t VALUES ()` / `INSERT INTO t () VALUES ()`: no column named,
                // every row all defaults (MariaDB: each row then has to be `()`, 1136).
                let all_defaults = v.rows.first().is_some_and(|r| r.content.is_empty());
                if columns.is_empty() && !all_defaults {
                    columns = (0..t.columns.len()).collect();
                }
                for r in &v.rows {
                    let mut row = Vec::with_capacity(r.content.len());
                    for (j, e) in r.content.iter().enumerate() {
                        row.push(match e {
                            ast::Expr::Identifier(i)
                                if i.quote_style.is_none()
                                    && i.value.eq_ignore_ascii_case("DEFAULT") =>
                            {
                                None
                            }
                            other => {
                                let e = c.compile(other)?;
                                Some(match columns.get(j) {
                                    Some(&col) => stored(&t, col, e),
                                    None => e,
                                })
                            }
                        });
                    }
                    check_row_width(row.len(), columns.len(), rows.len() + 1)?;
                    rows.push(row);
                }
            }
            _ => {
                if columns.is_empty() {
                    columns = (0..t.columns.len()).collect();
                }
                let mut sp = crate::plan::select::compile(cx, src, crate::parse::LockClause::None)?;
                for (p, &col) in sp.projections.iter_mut().zip(&columns) {
                    *p = stored(
                        &t,
                        col,
                        std::mem::replace(p, Expr::Lit(onelog_binlog::Value::Null)),
                    );
                }
                if sp.projections.len() != columns.len() {
                    return Err(SqlError::of(
                        errors::ER_WRONG_VALUE_COUNT_ON_ROW,
                        "Column count doesn't match value count at row 1",
                    ));
                }
                c.params += sp.params;
                select = Some(Box::new(sp));
            }
        }
    }
    // A VALUES row is not a row of the table: a subquery there naming the table's columns
    // is refused rather than given some other value.
    if hook.plans.borrow().iter().any(|sp| sp.correlated) {
        return Err(SqlError::unsupported(
            "subqueries naming the inserted table's columns in VALUES",
        ));
    }
    let mut on_dup = Vec::new();
    if let Some(ast::OnInsert::DuplicateKeyUpdate(assigns)) = &ins.on {
        c.insert_values = true;
        // MariaDB 10.11.14 names a value's unknown column 'SELECT' after VALUES or SET (sic),
        // 'UPDATE' after a SELECT; an unknown target column 'UPDATE'.
        c.place = if select.is_some() { "UPDATE" } else { "SELECT" };
        for a in assigns {
            let ast::AssignmentTarget::ColumnName(n) = &a.target else {
                return Err(SqlError::unsupported("tuple assignment"));
            };
            let col = target_column(&t, n, "UPDATE")?;
            on_dup.push((col, stored(&t, col, c.compile(&a.value)?)));
        }
    } else if ins.on.is_some() {
        return Err(SqlError::unsupported("ON CONFLICT"));
    }
    debug_assert!(
        rows.iter().all(|r| r.len() == columns.len()),
        "an INSERT row has one expression per target column"
    );
    Ok(InsertPlan {
        table: t.clone(),
        columns,
        rows,
        select,
        ignore: ins.ignore,
        replace: ins.replace_into,
        on_dup,
        params: c.params,
        returning: compile_returning(cx, &ins.returning, &t)?,
        subqueries: {
            drop(c);
            crate::plan::select::subquery::dml_subqueries(hook)
        },
        view: None,
    })
}

/// ORDER BY items (expression, descending) and LIMIT.
type OrderLimit = (Vec<(Expr, bool)>, Option<Expr>);

fn compile_order_limit(
    c: &mut Compiler,
    order_by: &[ast::OrderByExpr],
    limit: &Option<ast::Expr>,
) -> Result<OrderLimit, SqlError> {
    let mut ob = Vec::new();
    for o in order_by {
        ob.push((
            // ENUM, SET and BIT sort by their number, as in SELECT.
            crate::expr::numeric_view(c.compile(&o.expr)?),
            matches!(o.options.sort, Some(ast::OrderBySort::Desc)),
        ));
    }
    let l = match limit {
        Some(e) => Some(crate::plan::limit_operand(c, e)?),
        None => None,
    };
    Ok((ob, l))
}

pub(crate) fn compile_update(cx: &ExecContext, u: &ast::Update) -> Result<UpdatePlan, SqlError> {
    if u.from.is_some() {
        return Err(SqlError::unsupported("UPDATE ... FROM"));
    }
    let (name, alias) = single_table(&u.table)?;
    let t = resolve_table(cx, name, crate::privilege::UPDATE)?;
    if u.selection.is_some() {
        // The WHERE clause reads the table (MariaDB checks SELECT on the columns it reads).
        check_select(cx, &t)?;
    }
    let qualifier = alias.unwrap_or_else(|| t.name.clone());
    let db = cx.current_db.clone().unwrap_or_default();
    // MariaDB names the SET clause in 1054, for the target and the value alike.
    let hook = crate::plan::select::subquery::Hook::new(cx, Default::default());
    let mut c = Compiler::new(scope(&t, &qualifier, &db), "SET");
    c.subq = Some(&hook);
    let set = u
        .assignments
        .iter()
        .map(|a| {
            let ast::AssignmentTarget::ColumnName(n) = &a.target else {
                return Err(SqlError::unsupported("tuple assignment"));
            };
            let col = target_column(&t, n, "SET")?;
            Ok((col, stored(&t, col, c.compile(&a.value)?)))
        })
        .collect::<Result<Vec<_>, _>>();
    c.place = "WHERE";
    let w = u.selection.as_ref().map(|w| c.compile(w)).transpose();
    // MariaDB 10.11.14 resolves the WHERE before the SET: a bad name there is reported first.
    let (assignments, w) = match (set, w) {
        (Err(_), Err(e)) if e.is_name_error() => return Err(e),
        (set, w) => (set?, w?),
    };
    c.place = "ORDER BY";
    let (order_by, limit) = compile_order_limit(&mut c, &u.order_by, &u.limit)?;
    let plan = plan(&t, w.as_ref());
    let params = c.params;
    drop(c);
    Ok(UpdatePlan {
        subqueries: crate::plan::select::subquery::dml_subqueries(hook),
        table: t.clone(),
        assignments,
        plan,
        order_by,
        limit,
        params,
        view: None,
        ignore: update_ignore(u)?,
    })
}

/// Whether an UPDATE is `UPDATE IGNORE` (the dialect reads it into sqlparser's `or` as
/// `OR IGNORE`); sqlparser's other SQLite conflict clauses are no MariaDB syntax (1064).
pub(crate) fn update_ignore(u: &ast::Update) -> Result<bool, SqlError> {
    match &u.or {
        None => Ok(false),
        Some(ast::SqliteOnConflict::Ignore) => Ok(true),
        Some(_) => Err(SqlError::syntax(&u.to_string())),
    }
}

/// Whether a DELETE is `DELETE IGNORE` (the dialect marks it: `parse::dialect`).
pub(crate) fn delete_ignore(d: &ast::Delete) -> bool {
    d.optimizer_hints
        .iter()
        .any(|h| h.prefix == crate::parse::dialect::DELETE_IGNORE)
}

/// What an UPDATE compiles to: a single-table plan, or a multi-table one (an UPDATE of a join
/// view).
pub(crate) enum UpdateKind {
    Single(Box<UpdatePlan>),
    Multi(Box<crate::plan::multi_dml::MultiPlan>),
}

/// A single-table UPDATE, its target a table or a view (`plan::view_dml`).
pub(crate) fn compile_update_any(
    cx: &ExecContext,
    u: &ast::Update,
) -> Result<UpdateKind, SqlError> {
    let view = match (&u.from, single_table(&u.table)) {
        (None, Ok((name, alias))) => view_dml::target_view(cx, name).map(|v| (v, alias)),
        _ => None,
    };
    let Some((v, alias)) = view else {
        return Ok(UpdateKind::Single(Box::new(compile_update(cx, u)?)));
    };
    let mut has_where = false;
    let r = view_dml::rewrite_update(cx, u, &v, alias).and_then(|rw| {
        has_where = !rw.merged.conds.is_empty();
        if crate::plan::multi_dml::is_multi_update(&rw.stmt) {
            if update_ignore(u)? {
                return Err(SqlError::unsupported(
                    "UPDATE IGNORE of a view over several tables",
                ));
            }
            let check = rw.merged.check.as_ref();
            let mut p = crate::plan::multi_dml::compile_multi_update_checked(cx, &rw.stmt, check)?;
            p.view = Some(Box::new(ViewTarget {
                db: v.db.clone(),
                name: v.name.clone(),
                check: None,
            }));
            return Ok(UpdateKind::Multi(Box::new(p)));
        }
        let mut p = compile_update(cx, &rw.stmt)?;
        p.view = Some(view_target(cx, &rw.merged, &p.table, rw.target.as_deref())?);
        Ok(UpdateKind::Single(Box::new(p)))
    });
    cx.view_grants.borrow_mut().clear();
    r.map_err(|e| view_dml::where_error(e, has_where))
}

/// The view a plan writes through, its CHECK OPTION compiled over the row of `t` (read under
/// the qualifier `alias`).
fn view_target(
    cx: &ExecContext,
    m: &view_dml::Merged,
    t: &TableDef,
    alias: Option<&str>,
) -> Result<Box<ViewTarget>, SqlError> {
    let check = match &m.check {
        Some(e) => {
            let db = cx.current_db.clone().unwrap_or_default();
            let qualifier = alias.unwrap_or(&t.name);
            let mut c = Compiler::new(scope(t, qualifier, &db), "WHERE");
            let x = c
                .compile(e)
                .map_err(|_| SqlError::unsupported("this CHECK OPTION through a join view"))?;
            Some(x)
        }
        None => None,
    };
    Ok(Box::new(ViewTarget {
        db: m.view.db.clone(),
        name: m.view.name.clone(),
        check,
    }))
}

pub(crate) fn compile_delete(cx: &ExecContext, d: &ast::Delete) -> Result<DeletePlan, SqlError> {
    let from = match &d.from {
        ast::FromTable::WithFromKeyword(v) | ast::FromTable::WithoutKeyword(v) => v,
    };
    if from.len() != 1 || !d.tables.is_empty() || d.using.is_some() {
        return Err(SqlError::unsupported("multi-table DELETE"));
    }
    let (name, alias) = single_table(&from[0])?;
    if let Some(v) = view_dml::target_view(cx, name) {
        let mut has_where = false;
        let r = view_dml::rewrite_delete(cx, d, &v, alias).and_then(|rw| {
            has_where = !rw.merged.conds.is_empty();
            let mut p = compile_delete(cx, &rw.stmt)?;
            p.view = Some(view_target(cx, &rw.merged, &p.table, rw.target.as_deref())?);
            Ok(p)
        });
        cx.view_grants.borrow_mut().clear();
        return r.map_err(|e| view_dml::where_error(e, has_where));
    }
    let t = resolve_table(cx, name, crate::privilege::DELETE)?;
    if d.selection.is_some() {
        check_select(cx, &t)?;
    }
    let qualifier = alias.unwrap_or_else(|| t.name.clone());
    let db = cx.current_db.clone().unwrap_or_default();
    let hook = crate::plan::select::subquery::Hook::new(cx, Default::default());
    let mut c = Compiler::new(scope(&t, &qualifier, &db), "WHERE");
    c.subq = Some(&hook);
    let w = match &d.selection {
        Some(w) => Some(c.compile(w)?),
        None => None,
    };
    c.place = "ORDER BY";
    let (order_by, limit) = compile_order_limit(&mut c, &d.order_by, &d.limit)?;
    let plan = plan(&t, w.as_ref());
    let returning = compile_returning(cx, &d.returning, &t)?;
    let params = c.params;
    drop(c);
    Ok(DeletePlan {
        subqueries: crate::plan::select::subquery::dml_subqueries(hook),
        table: t.clone(),
        plan,
        order_by,
        limit,
        params,
        returning,
        view: None,
        ignore: delete_ignore(d),
    })
}
