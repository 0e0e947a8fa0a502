//! Writes through views: an INSERT, UPDATE or DELETE whose target is a view is rewritten into
//! the same statement on the view's base tables (MariaDB's MERGE of an updatable view), which
//! `plan::dml` / `plan::multi_dml` then compile as any statement on tables, so the rows
//! changed, the row events logged and the constraints checked are the base tables'.
//!
//! A view is merged when it is one SELECT over base tables or mergeable views, without
//! DISTINCT, GROUP BY, HAVING, LIMIT, aggregate or window functions, a WITH clause, and not
//! `ALGORITHM=TEMPTABLE`, and its WHERE reads none of its own tables in a subquery (else
//! 1288, 1471 for INSERT, as MariaDB). Its columns map to expressions over the base tables:
//! only a plain column can be written (UPDATE: 1348; INSERT: 1471), all of one table in a
//! join view (1393); DELETE needs a view of one table (1395), INSERT into a join view a
//! column list (1394). Every level's WHERE is added to the statement's.
//!
//! `WITH CHECK OPTION`: the outermost view's own WHERE (LOCAL) or that of every level below
//! it as well (CASCADED) is the [`ViewTarget::check`] a changed or inserted row must meet
//! (1369), as MariaDB 10.11 does (the CHECK OPTION of a view below the outermost one is not
//! looked at, as there).
//!
//! Privileges: the statement's on the view, and (under the view's definer for SQL SECURITY
//! DEFINER) the same on each base table; the rewritten statement is then compiled with those
//! tables' checks done (`ExecContext::view_grants`).
//!
//! Invariants: a merged view's FROM names base tables only, each with an explicit alias, and
//! its column expressions and conditions name columns by those aliases.
//! Called by `plan::dml` (single-table INSERT / UPDATE / DELETE) and `plan::multi_dml`.

use std::ops::ControlFlow;
use std::sync::Arc;

use onelog_engine::{ViewAlgorithm, ViewCheck, ViewDef};
use onelog_protocol::errors;
use sqlparser::ast::{self, VisitMut, VisitorMut};

use super::select::view::{invalid, mergeable, parse_body, view_named, MAX_VIEW_DEPTH};
use crate::context::ExecContext;
use crate::error::SqlError;

/// The statement writing through a view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verb {
    Insert,
    Update,
    Delete,
}

impl Verb {
    fn word(self) -> &'static str {
        match self {
            Verb::Insert => "INSERT",
            Verb::Update => "UPDATE",
            Verb::Delete => "DELETE",
        }
    }
}

/// What a plan written through a view carries: the view's name (its errors name it) and the
/// CHECK OPTION condition compiled over the target's row.
#[derive(Debug, Clone)]
pub(crate) struct ViewTarget {
    pub db: String,
    pub name: String,
    pub check: Option<crate::expr::Expr>,
}

impl ViewTarget {
    /// 1369 for the view.
    pub(crate) fn check_failed(&self) -> SqlError {
        SqlError::of(
            errors::ER_VIEW_CHECK_FAILED,
            format!("CHECK OPTION failed `{}`.`{}`", self.db, self.name),
        )
    }

    /// Whether `row` meets the CHECK OPTION (true without one).
    pub(crate) fn admits(
        &self,
        row: &[onelog_binlog::Value],
        env: &crate::expr::Env,
    ) -> Result<bool, SqlError> {
        match &self.check {
            Some(c) => c.test(row, &[], env),
            None => Ok(true),
        }
    }

    /// An error of the base table's INSERT as MariaDB words it for the view: a NOT NULL
    /// column without default the view does not write is 1423.
    pub(crate) fn map_error(&self, mut e: SqlError) -> SqlError {
        if e.code == errors::ER_NO_DEFAULT_FOR_FIELD.code {
            e = SqlError::of(
                errors::ER_NO_DEFAULT_FOR_VIEW_FIELD,
                format!(
                    "Field of view '{}.{}' underlying table doesn't have a default value",
                    self.db, self.name
                ),
            );
        }
        e
    }
}

/// A view merged down to its base tables.
#[derive(Debug, Clone)]
pub(crate) struct Merged {
    pub view: Arc<ViewDef>,
    /// The FROM over base tables (each with an explicit alias).
    pub from: Vec<ast::TableWithJoins>,
    /// (database, table, alias) of each base table, in FROM order.
    pub tables: Vec<(String, String, String)>,
    /// Each view column's expression over the base tables.
    pub columns: Vec<ast::Expr>,
    /// The WHERE terms of every level.
    pub conds: Vec<ast::Expr>,
    /// The ON conditions of every level (a CASCADED check reads them).
    pub ons: Vec<ast::Expr>,
    /// The CHECK OPTION condition (None without one).
    pub check: Option<ast::Expr>,
}

/// One FROM item of a view's SELECT being merged.
struct Factor {
    /// Its qualifier in the SELECT (alias or table name) and its database.
    qual: String,
    db: String,
    /// Its column names and what each becomes.
    names: Vec<String>,
    exprs: Vec<ast::Expr>,
}

/// The target `name` of a statement when it is a view.
pub(crate) fn target_view(cx: &ExecContext, name: &ast::ObjectName) -> Option<Arc<ViewDef>> {
    view_named(cx, name)
}

fn quoted(s: &str) -> ast::Ident {
    let mut i = ast::Ident::new(s);
    i.quote_style = Some('`');
    i
}

fn column_ref(alias: &str, col: &str) -> ast::Expr {
    ast::Expr::CompoundIdentifier(vec![quoted(alias), quoted(col)])
}

/// 1288 / 1471: the view cannot take `verb`.
fn not_updatable(v: &ViewDef, verb: Verb) -> SqlError {
    match verb {
        Verb::Insert => SqlError::of(
            errors::ER_NON_INSERTABLE_TABLE,
            format!(
                "The target table {} of the INSERT is not insertable-into",
                v.name
            ),
        ),
        _ => SqlError::of(
            errors::ER_NON_UPDATABLE_TABLE,
            format!(
                "The target table {} of the {} is not updatable",
                v.name,
                verb.word()
            ),
        ),
    }
}

/// 1393 for view `v`.
fn multi_update(v: &ViewDef) -> SqlError {
    SqlError::of(
        errors::ER_VIEW_MULTIUPDATE,
        format!(
            "Can not modify more than one base table through a join view '{}.{}'",
            v.db, v.name
        ),
    )
}

/// Replaces column references by what the factors make of them: qualified ones at any depth,
/// unqualified ones outside subqueries (inside, they may name the subquery's own columns).
struct Subst<'a> {
    factors: &'a [Factor],
    depth: usize,
}

impl Subst<'_> {
    fn find(&self, db: Option<&str>, qual: Option<&str>, col: &str) -> Option<ast::Expr> {
        let mut hits = self.factors.iter().filter(|f| {
            qual.is_none_or(|q| f.qual.eq_ignore_ascii_case(q))
                && db.is_none_or(|d| f.db == d)
                && f.names.iter().any(|n| n.eq_ignore_ascii_case(col))
        });
        let f = hits.next()?;
        if hits.next().is_some() {
            return None;
        }
        let k = f.names.iter().position(|n| n.eq_ignore_ascii_case(col))?;
        Some(f.exprs[k].clone())
    }
}

impl VisitorMut for Subst<'_> {
    type Break = ();

    fn pre_visit_query(&mut self, _q: &mut ast::Query) -> ControlFlow<()> {
        self.depth += 1;
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _q: &mut ast::Query) -> ControlFlow<()> {
        self.depth -= 1;
        ControlFlow::Continue(())
    }

    fn post_visit_expr(&mut self, e: &mut ast::Expr) -> ControlFlow<()> {
        let found = match e {
            ast::Expr::Identifier(i) if self.depth == 0 => self.find(None, None, &i.value),
            ast::Expr::CompoundIdentifier(p) => match p.as_slice() {
                [q, c] => self.find(None, Some(&q.value), &c.value),
                [d, q, c] => self.find(Some(&d.value), Some(&q.value), &c.value),
                _ => None,
            },
            _ => None,
        };
        if let Some(x) = found {
            *e = match x {
                ast::Expr::CompoundIdentifier(_) => x,
                other => ast::Expr::Nested(Box::new(other)),
            };
        }
        ControlFlow::Continue(())
    }
}

/// `e` with the factors' columns replaced.
fn subst(e: &mut ast::Expr, factors: &[Factor]) {
    let _ = e.visit(&mut Subst { factors, depth: 0 });
}

/// Whether `e` reads one of `tables` in a subquery.
fn reads_tables(e: &ast::Expr, tables: &[(String, String, String)]) -> bool {
    let hit = ast::visit_relations(e, |name: &ast::ObjectName| {
        let parts = crate::expr::object_name_parts(name);
        let found = match parts.as_slice() {
            [d, t] => tables.iter().any(|(td, tn, _)| td == d && tn == t),
            _ => false,
        };
        if found {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    });
    hit.is_break()
}

fn and_all(terms: impl IntoIterator<Item = ast::Expr>) -> Option<ast::Expr> {
    terms.into_iter().reduce(|a, b| ast::Expr::BinaryOp {
        left: Box::new(a),
        op: ast::BinaryOperator::And,
        right: Box::new(b),
    })
}

fn nested(e: ast::Expr) -> ast::Expr {
    ast::Expr::Nested(Box::new(e))
}

/// Merges view `v` (read under `alias`; None: a view of one table keeps that table's name)
/// down to its base tables, checking `verb`'s privilege on what it reads.
pub(crate) fn merge(
    cx: &ExecContext,
    v: &Arc<ViewDef>,
    alias: Option<&str>,
    verb: Verb,
) -> Result<Merged, SqlError> {
    let depth = cx.view_depth.get();
    if depth >= MAX_VIEW_DEPTH {
        return Err(SqlError::of(
            errors::ER_VIEW_RECURSIVE,
            format!("`{}`.`{}` contains view recursion", v.db, v.name),
        ));
    }
    cx.view_depth.set(depth + 1);
    let r = merge_body(cx, v, alias, verb);
    cx.view_depth.set(depth);
    r
}

/// The SELECT of an updatable view (1288 / 1471 otherwise).
fn updatable_select(v: &ViewDef, verb: Verb) -> Result<ast::Select, SqlError> {
    let q = parse_body(&v.query, &v.query_db).map_err(|_| invalid(v))?;
    if v.algorithm == ViewAlgorithm::TempTable || !mergeable(&q) {
        return Err(not_updatable(v, verb));
    }
    match *q.body {
        ast::SetExpr::Select(s) => Ok(*s),
        _ => Err(not_updatable(v, verb)),
    }
}

// Long: one pass over the view's FROM, select list, WHERE and CHECK OPTION; split further it
// would pass the half-merged state around.
fn merge_body(
    cx: &ExecContext,
    v: &Arc<ViewDef>,
    alias: Option<&str>,
    verb: Verb,
) -> Result<Merged, SqlError> {
    let mut sel = updatable_select(v, verb)?;
    let single = sel.from.len() == 1 && sel.from[0].joins.is_empty();
    let mut factors = Vec::new();
    let mut tables = Vec::new();
    let mut conds = Vec::new();
    let mut ons = Vec::new();
    let mut own_ons = Vec::new();
    let mut inner_from: Option<Vec<ast::TableWithJoins>> = None;
    let mut relations: Vec<&mut ast::TableFactor> = Vec::new();
    for twj in sel.from.iter_mut() {
        relations.push(&mut twj.relation);
        for j in twj.joins.iter_mut() {
            relations.push(&mut j.relation);
        }
    }
    for rel in relations {
        let ast::TableFactor::Table {
            name,
            alias: a,
            args: None,
            ..
        } = &*rel
        else {
            return Err(not_updatable(v, verb));
        };
        let parts = crate::expr::object_name_parts(name);
        let [db, t] = parts.as_slice() else {
            return Err(invalid(v));
        };
        let (db, t) = (db.clone(), t.clone());
        let qual = a.as_ref().map_or(t.clone(), |a| a.name.value.clone());
        let new_alias = match (single, alias) {
            (true, Some(x)) => x.to_string(),
            _ => qual.clone(),
        };
        if let Some(inner) = view_named(cx, name) {
            let m = merge(cx, &inner, Some(&new_alias), verb)?;
            if m.tables.len() > 1 && !single {
                return Err(SqlError::unsupported(
                    "a join view joined in a view written to",
                ));
            }
            factors.push(Factor {
                qual,
                db,
                names: inner.columns.clone(),
                exprs: m.columns,
            });
            conds.extend(m.conds);
            ons.extend(m.ons);
            tables.extend(m.tables);
            if single {
                inner_from = Some(m.from);
            } else if let [twj] = m.from.as_slice() {
                *rel = twj.relation.clone();
            }
            continue;
        }
        let def = cx
            .server
            .engine
            .catalog()
            .table_by_name(&db, &t)
            .cloned()
            .ok_or_else(|| invalid(v))?;
        let names: Vec<String> = def.columns.iter().map(|c| c.name.clone()).collect();
        let exprs = names.iter().map(|c| column_ref(&new_alias, c)).collect();
        factors.push(Factor {
            qual,
            db: db.clone(),
            names,
            exprs,
        });
        tables.push((db.clone(), t.clone(), new_alias.clone()));
        if let ast::TableFactor::Table { name, alias, .. } = rel {
            *name = ast::ObjectName::from(vec![quoted(&db), quoted(&t)]);
            *alias = Some(ast::TableAlias {
                explicit: true,
                name: quoted(&new_alias),
                columns: Vec::new(),
                at: None,
            });
        }
    }
    for twj in sel.from.iter_mut() {
        for j in twj.joins.iter_mut() {
            let c = match &mut j.join_operator {
                ast::JoinOperator::Join(c)
                | ast::JoinOperator::Inner(c)
                | ast::JoinOperator::Left(c)
                | ast::JoinOperator::LeftOuter(c)
                | ast::JoinOperator::Right(c)
                | ast::JoinOperator::RightOuter(c)
                | ast::JoinOperator::CrossJoin(c) => c,
                _ => return Err(not_updatable(v, verb)),
            };
            if let ast::JoinConstraint::On(e) = c {
                subst(e, &factors);
                own_ons.push(e.clone());
            }
        }
    }
    let mut columns = Vec::with_capacity(v.columns.len());
    for item in &sel.projection {
        match item {
            ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => {
                let mut e = e.clone();
                subst(&mut e, &factors);
                columns.push(e);
            }
            ast::SelectItem::Wildcard(_) => {
                for f in &factors {
                    columns.extend(f.exprs.iter().cloned());
                }
            }
            ast::SelectItem::QualifiedWildcard(
                ast::SelectItemQualifiedWildcardKind::ObjectName(n),
                _,
            ) => {
                let q = crate::expr::object_name_parts(n).pop().unwrap_or_default();
                let f = factors
                    .iter()
                    .find(|f| f.qual.eq_ignore_ascii_case(&q))
                    .ok_or_else(|| invalid(v))?;
                columns.extend(f.exprs.iter().cloned());
            }
            _ => return Err(not_updatable(v, verb)),
        }
    }
    if columns.len() != v.columns.len() {
        return Err(invalid(v));
    }
    let own_where = match sel.selection.take() {
        Some(mut w) => {
            if reads_tables(&w, &tables) {
                return Err(not_updatable(v, verb));
            }
            subst(&mut w, &factors);
            Some(w)
        }
        None => None,
    };
    let check = match v.check {
        ViewCheck::None => None,
        ViewCheck::Local => and_all(own_where.iter().chain(&own_ons).cloned().map(nested)),
        ViewCheck::Cascaded => and_all(
            conds
                .iter()
                .chain(&ons)
                .chain(own_where.iter())
                .chain(&own_ons)
                .cloned()
                .map(nested),
        ),
    };
    conds.extend(own_where.map(nested));
    ons.extend(own_ons.into_iter().map(nested));
    Ok(Merged {
        view: v.clone(),
        from: inner_from.unwrap_or(sel.from),
        tables,
        columns,
        conds,
        ons,
        check,
    })
}

/// The alias and column of `e` when it is a plain column of a base table.
fn plain_column(e: &ast::Expr) -> Option<(String, String)> {
    match e {
        ast::Expr::CompoundIdentifier(p) if p.len() == 2 => {
            Some((p[0].value.clone(), p[1].value.clone()))
        }
        _ => None,
    }
}

/// The statement's qualifier for the view (its alias, else its name) as a factor.
fn view_factor(m: &Merged, qual: &str) -> Factor {
    Factor {
        qual: qual.to_string(),
        db: m.view.db.clone(),
        names: m.view.columns.clone(),
        exprs: m.columns.clone(),
    }
}

/// An assignment target (`col`, `v.col`) of the view: its column index (1054 otherwise, in
/// `place`).
fn view_column(
    m: &Merged,
    qual: &str,
    n: &ast::ObjectName,
    place: &str,
) -> Result<usize, SqlError> {
    let parts = crate::expr::object_name_parts(n);
    let unknown = || SqlError::unknown_column(&parts.join("."), place);
    let (q, col) = match parts.as_slice() {
        [c] => (None, c),
        [q, c] => (Some(q), c),
        [d, q, c] if *d == m.view.db => (Some(q), c),
        _ => return Err(unknown()),
    };
    if q.is_some_and(|q| !q.eq_ignore_ascii_case(qual)) {
        return Err(unknown());
    }
    m.view
        .columns
        .iter()
        .position(|c| c.eq_ignore_ascii_case(col))
        .ok_or_else(unknown)
}

/// Assignments to view columns as assignments to base columns (1348 for a column that is not
/// a plain one; 1393 when they change two tables), their values rewritten; the alias of the
/// table changed.
fn map_assignments(
    m: &Merged,
    qual: &str,
    assignments: &[ast::Assignment],
    place: &str,
) -> Result<(Vec<ast::Assignment>, Option<String>), SqlError> {
    let factor = [view_factor(m, qual)];
    let mut out = Vec::with_capacity(assignments.len());
    let mut target: Option<String> = None;
    for a in assignments {
        let ast::AssignmentTarget::ColumnName(n) = &a.target else {
            return Err(SqlError::unsupported("tuple assignment"));
        };
        let k = view_column(m, qual, n, place)?;
        let Some((alias, col)) = plain_column(&m.columns[k]) else {
            return Err(SqlError::of(
                errors::ER_NONUPDATEABLE_COLUMN,
                format!("Column '{}' is not updatable", m.view.columns[k]),
            ));
        };
        match &target {
            Some(t) if *t != alias => return Err(multi_update(&m.view)),
            _ => target = Some(alias.clone()),
        }
        let mut value = a.value.clone();
        subst(&mut value, &factor);
        out.push(ast::Assignment {
            target: ast::AssignmentTarget::ColumnName(ast::ObjectName::from(vec![
                quoted(&alias),
                quoted(&col),
            ])),
            value,
        });
    }
    Ok((out, target))
}

/// The statement's WHERE rewritten and ANDed with the view's conditions.
fn merged_where(m: &Merged, qual: &str, w: &Option<ast::Expr>) -> Option<ast::Expr> {
    let factor = [view_factor(m, qual)];
    let mine = w.clone().map(|mut w| {
        subst(&mut w, &factor);
        nested(w)
    });
    and_all(m.conds.iter().cloned().chain(mine))
}

fn merged_order(
    m: &Merged,
    qual: &str,
    order_by: &mut [ast::OrderByExpr],
    limit: &mut Option<ast::Expr>,
) {
    let factor = [view_factor(m, qual)];
    for o in order_by {
        subst(&mut o.expr, &factor);
    }
    if let Some(l) = limit {
        subst(l, &factor);
    }
}

/// The privileges `verb` needs on view `v` (the statement's) and on its base tables (under
/// the view's security context); the base tables are then taken as checked while the
/// rewritten statement compiles (`ExecContext::view_grants`).
fn check_privileges(
    cx: &ExecContext,
    m: &Merged,
    need: u64,
    tables: &[(String, String, String)],
) -> Result<(), SqlError> {
    let v = &m.view;
    cx.check_table_privilege(&v.db, &v.name, need)?;
    if !cx.privs.enforce {
        return Ok(());
    }
    let definer = if v.invoker {
        None
    } else {
        let (user, host) = &v.definer;
        match cx.server.engine.catalog().account(user, host) {
            Some(a) => Some(a.clone()),
            None => return Err(super::select::view::no_such_definer(user, host)),
        }
    };
    let saved = definer.map(|a| cx.definer.replace(Some(a)));
    let mut r = Ok(());
    for (db, t, _) in tables {
        r = cx.check_table_privilege(db, t, need);
        if r.is_err() {
            break;
        }
    }
    if let Some(s) = saved {
        cx.definer.replace(s);
    }
    r.map_err(|_| invalid(v))?;
    let mut g = cx.view_grants.borrow_mut();
    for (db, t, _) in &m.tables {
        g.push((db.clone(), t.clone()));
    }
    Ok(())
}

/// An error of an UPDATE or DELETE through a view: when the view has a WHERE of its own
/// (`has_where`), MariaDB 10.11.14 names the clause of an unknown column of the statement's
/// WHERE 'FROM' (the view's merged condition); through a view without one, 'WHERE'.
pub(crate) fn where_error(mut e: SqlError, has_where: bool) -> SqlError {
    if has_where && e.code == errors::ER_BAD_FIELD_ERROR.code {
        e.message = e.message.replace("in 'WHERE'", "in 'FROM'");
    }
    e
}

/// A statement rewritten onto base tables, with what its plan keeps of the view.
pub(crate) struct Rewritten<S> {
    pub stmt: S,
    pub merged: Merged,
    /// The alias of the table written (the CHECK OPTION is compiled over it).
    pub target: Option<String>,
}

/// `UPDATE v [AS q] SET ... [WHERE ...] [ORDER BY ...] [LIMIT ...]` on the base tables.
pub(crate) fn rewrite_update(
    cx: &ExecContext,
    u: &ast::Update,
    v: &Arc<ViewDef>,
    alias: Option<String>,
) -> Result<Rewritten<ast::Update>, SqlError> {
    if u.returning.is_some() {
        return Err(SqlError::unsupported("RETURNING through a view"));
    }
    let qual = alias.unwrap_or_else(|| v.name.clone());
    let m = merge(cx, v, Some(&qual), Verb::Update)?;
    let (assignments, target) = map_assignments(&m, &qual, &u.assignments, "SET")?;
    let written: Vec<_> = m
        .tables
        .iter()
        .filter(|t| Some(&t.2) == target.as_ref())
        .cloned()
        .collect();
    check_privileges(cx, &m, crate::privilege::UPDATE, &written)?;
    if u.selection.is_some() {
        cx.check_table_privilege(&v.db, &v.name, crate::privilege::SELECT)?;
    }
    let mut out = u.clone();
    out.assignments = assignments;
    out.selection = merged_where(&m, &qual, &u.selection);
    merged_order(&m, &qual, &mut out.order_by, &mut out.limit);
    let mut from = m.from.clone();
    out.table = from.remove(0);
    out.from = (!from.is_empty()).then_some(ast::UpdateTableFromKind::BeforeSet(from));
    Ok(Rewritten {
        stmt: out,
        merged: m,
        target,
    })
}

/// `DELETE FROM v [AS q] [WHERE ...] [ORDER BY ...] [LIMIT ...]` on the base table (1395 for
/// a join view).
pub(crate) fn rewrite_delete(
    cx: &ExecContext,
    d: &ast::Delete,
    v: &Arc<ViewDef>,
    alias: Option<String>,
) -> Result<Rewritten<ast::Delete>, SqlError> {
    if d.returning.is_some() {
        return Err(SqlError::unsupported("RETURNING through a view"));
    }
    let qual = alias.unwrap_or_else(|| v.name.clone());
    let m = merge(cx, v, Some(&qual), Verb::Delete)?;
    if m.tables.len() != 1 {
        return Err(SqlError::of(
            errors::ER_VIEW_DELETE_MERGE_VIEW,
            format!("Can not delete from join view '{}.{}'", v.db, v.name),
        ));
    }
    check_privileges(cx, &m, crate::privilege::DELETE, &m.tables)?;
    if d.selection.is_some() {
        cx.check_table_privilege(&v.db, &v.name, crate::privilege::SELECT)?;
    }
    let mut out = d.clone();
    out.selection = merged_where(&m, &qual, &d.selection);
    merged_order(&m, &qual, &mut out.order_by, &mut out.limit);
    out.from = match &d.from {
        ast::FromTable::WithFromKeyword(_) => ast::FromTable::WithFromKeyword(m.from.clone()),
        ast::FromTable::WithoutKeyword(_) => ast::FromTable::WithoutKeyword(m.from.clone()),
    };
    let target = Some(m.tables[0].2.clone());
    Ok(Rewritten {
        stmt: out,
        merged: m,
        target,
    })
}

/// `INSERT INTO v [(columns)] ...` as an INSERT into the one base table its columns belong
/// to: 1471 for a column that is not a plain one (or one written twice), 1394 for a join view
/// without a column list, 1393 for columns of two tables.
pub(crate) fn rewrite_insert(
    cx: &ExecContext,
    ins: &ast::Insert,
    v: &Arc<ViewDef>,
) -> Result<Rewritten<ast::Insert>, SqlError> {
    if ins.returning.is_some() {
        return Err(SqlError::unsupported("RETURNING through a view"));
    }
    let mut m = merge(cx, v, None, Verb::Insert)?;
    if let [(_, t, a)] = m.tables.as_slice() {
        if a != t {
            // The INSERT's expressions name the table by its name.
            let t = t.clone();
            m = merge(cx, v, Some(&t), Verb::Insert)?;
        }
    }
    let join = m.tables.len() > 1;
    if join && ins.on.is_some() {
        return Err(SqlError::unsupported(
            "ON DUPLICATE KEY UPDATE through a join view",
        ));
    }
    let mut out = ins.clone();
    let listed: Vec<usize> = if !ins.assignments.is_empty() {
        Vec::new()
    } else if ins.columns.is_empty() {
        if join {
            return Err(SqlError::of(
                errors::ER_VIEW_NO_INSERT_FIELD_LIST,
                format!(
                    "Can not insert into join view '{}.{}' without fields list",
                    v.db, v.name
                ),
            ));
        }
        (0..m.columns.len()).collect()
    } else {
        ins.columns
            .iter()
            .map(|n| view_column(&m, &v.name, n, "INSERT INTO"))
            .collect::<Result<_, _>>()?
    };
    let mut target: Option<String> = None;
    let mut seen: Vec<String> = Vec::new();
    let mut columns = Vec::with_capacity(listed.len());
    for &k in &listed {
        let Some((alias, col)) = plain_column(&m.columns[k]) else {
            return Err(not_updatable(v, Verb::Insert));
        };
        if seen
            .iter()
            .any(|s| s.eq_ignore_ascii_case(&format!("{alias}.{col}")))
        {
            return Err(not_updatable(v, Verb::Insert));
        }
        seen.push(format!("{alias}.{col}"));
        match &target {
            Some(t) if *t != alias => return Err(multi_update(v)),
            _ => target = Some(alias.clone()),
        }
        columns.push(ast::ObjectName::from(vec![quoted(&col)]));
    }
    if !ins.assignments.is_empty() {
        let (a, t) = map_assignments(&m, &v.name, &ins.assignments, "INSERT INTO")?;
        out.assignments = a;
        target = t;
    } else {
        out.columns = columns;
    }
    if let Some(ast::OnInsert::DuplicateKeyUpdate(assigns)) = &ins.on {
        let (a, t) = map_assignments(&m, &v.name, assigns, "UPDATE")?;
        if t.is_some() && target.is_some() && t != target {
            return Err(multi_update(v));
        }
        out.on = Some(ast::OnInsert::DuplicateKeyUpdate(a));
    }
    let Some(alias) = target
        .clone()
        .or_else(|| m.tables.first().map(|t| t.2.clone()))
    else {
        return Err(not_updatable(v, Verb::Insert));
    };
    let Some((db, t, _)) = m.tables.iter().find(|t| t.2 == alias).cloned() else {
        return Err(not_updatable(v, Verb::Insert));
    };
    let mut need = crate::privilege::INSERT;
    if ins.replace_into {
        need |= crate::privilege::DELETE;
    }
    if ins.on.is_some() {
        need |= crate::privilege::UPDATE;
    }
    check_privileges(cx, &m, need, &[(db.clone(), t.clone(), alias.clone())])?;
    out.table = ast::TableObject::TableName(ast::ObjectName::from(vec![quoted(&db), quoted(&t)]));
    Ok(Rewritten {
        stmt: out,
        merged: m,
        target: Some(alias),
    })
}

/// A multi-table UPDATE or DELETE with its views merged into its FROM list.
pub(crate) struct MultiRewritten<S> {
    pub stmt: S,
    /// The view written through that has a CHECK OPTION, and that condition.
    pub check: Option<(Arc<ViewDef>, ast::Expr)>,
    /// The plan's view: the one with the CHECK OPTION, else the first merged.
    pub view: ViewTarget,
}

/// The [`ViewTarget`] of a multi-table plan (its check compiled by `plan::multi_dml`).
fn multi_target(first: &Merged, check: &Option<(Arc<ViewDef>, ast::Expr)>) -> ViewTarget {
    let v = check.as_ref().map_or(&first.view, |(v, _)| v);
    ViewTarget {
        db: v.db.clone(),
        name: v.name.clone(),
        check: None,
    }
}

/// What [`merge_from_list`] gives: the merged views as factors (their qualifiers and columns),
/// the conditions the statement's WHERE takes, the merged views.
type MergedList = (Vec<Factor>, Vec<ast::Expr>, Vec<Merged>);

/// The views of a FROM list merged in place: each view of one base table becomes that table
/// (under the view's qualifier), its conditions going to the WHERE (returned), or to the ON of
/// the join where it is the side a LEFT (or RIGHT) JOIN extends with NULLs. `written(q)`: the
/// statement changes the view read under `q` (its privilege and updatability are needed,
/// SELECT otherwise). Views of joins, and views that cannot be merged, are 1235.
fn merge_from_list(
    cx: &ExecContext,
    list: &mut [ast::TableWithJoins],
    verb: Verb,
    written: &dyn Fn(&str) -> bool,
) -> Result<MergedList, SqlError> {
    let mut factors = Vec::new();
    let mut wheres = Vec::new();
    let mut merged = Vec::new();
    for twj in list.iter_mut() {
        let n = twj.joins.len();
        for k in 0..=n {
            let rel = if k == 0 {
                &mut twj.relation
            } else {
                &mut twj.joins[k - 1].relation
            };
            let ast::TableFactor::Table { name, alias, .. } = &*rel else {
                continue;
            };
            let Some(v) = view_named(cx, name) else {
                continue;
            };
            let q = alias
                .as_ref()
                .map_or(v.name.clone(), |a| a.name.value.clone());
            let w = written(&q);
            let m = match merge(cx, &v, Some(&q), if w { verb } else { Verb::Update }) {
                Ok(m) if m.tables.len() == 1 => m,
                Ok(_) => {
                    return Err(SqlError::unsupported(
                        "a join view in a multi-table UPDATE or DELETE",
                    ))
                }
                Err(e) if !w && matches!(e.code, 1288 | 1471) => {
                    return Err(SqlError::unsupported(
                        "a view that is not mergeable in a multi-table UPDATE or DELETE",
                    ));
                }
                Err(e) => return Err(e),
            };
            let need = if w {
                verb_privilege(verb)
            } else {
                crate::privilege::SELECT
            };
            check_privileges(cx, &m, need, &m.tables)?;
            *rel = m.from[0].relation.clone();
            let conds = m.conds.clone();
            // Where the view's rows are filtered: the ON of the join that NULL-extends it.
            let on_target = if k == 0 {
                match twj.joins.first_mut().map(|j| &mut j.join_operator) {
                    Some(ast::JoinOperator::Right(c) | ast::JoinOperator::RightOuter(c)) => Some(c),
                    _ => None,
                }
            } else {
                match &mut twj.joins[k - 1].join_operator {
                    ast::JoinOperator::Left(c) | ast::JoinOperator::LeftOuter(c) => Some(c),
                    _ => None,
                }
            };
            match on_target {
                Some(ast::JoinConstraint::On(e)) if !conds.is_empty() => {
                    let all = and_all(std::iter::once(nested(e.clone())).chain(conds));
                    if let Some(all) = all {
                        *e = all;
                    }
                }
                Some(_) if !conds.is_empty() => {
                    return Err(SqlError::unsupported(
                        "this join of a view in a multi-table UPDATE or DELETE",
                    ));
                }
                _ => wheres.extend(conds),
            }
            factors.push(view_factor(&m, &q));
            merged.push(m);
        }
    }
    Ok((factors, wheres, merged))
}

fn verb_privilege(verb: Verb) -> u64 {
    match verb {
        Verb::Insert => crate::privilege::INSERT,
        Verb::Update => crate::privilege::UPDATE,
        Verb::Delete => crate::privilege::DELETE,
    }
}

/// The ON conditions of a FROM list, rewritten by `factors`.
fn subst_ons(list: &mut [ast::TableWithJoins], factors: &[Factor]) {
    for twj in list {
        for j in &mut twj.joins {
            if let ast::JoinOperator::Join(ast::JoinConstraint::On(e))
            | ast::JoinOperator::Inner(ast::JoinConstraint::On(e))
            | ast::JoinOperator::Left(ast::JoinConstraint::On(e))
            | ast::JoinOperator::LeftOuter(ast::JoinConstraint::On(e))
            | ast::JoinOperator::Right(ast::JoinConstraint::On(e))
            | ast::JoinOperator::RightOuter(ast::JoinConstraint::On(e)) = &mut j.join_operator
            {
                subst(e, factors);
            }
        }
    }
}

/// The qualifier an assignment target names (None: unqualified).
fn target_qualifier(a: &ast::Assignment) -> Option<String> {
    match &a.target {
        ast::AssignmentTarget::ColumnName(n) => {
            let mut p = crate::expr::object_name_parts(n);
            p.pop();
            p.pop()
        }
        _ => None,
    }
}

/// A multi-table UPDATE reading or writing views, merged onto base tables (None when it names
/// no view): a SET target of a view is its base column (1348 when it is not a plain one).
pub(crate) fn rewrite_multi_update(
    cx: &ExecContext,
    u: &ast::Update,
) -> Result<Option<MultiRewritten<ast::Update>>, SqlError> {
    if !cx.server.engine.catalog().has_views() {
        return Ok(None);
    }
    let mut list = vec![u.table.clone()];
    if let Some(ast::UpdateTableFromKind::BeforeSet(more)) = &u.from {
        list.extend(more.iter().cloned());
    }
    let quals: Vec<Option<String>> = u.assignments.iter().map(target_qualifier).collect();
    let written = |q: &str| quals.iter().flatten().any(|t| t.eq_ignore_ascii_case(q));
    let (factors, wheres, merged) = merge_from_list(cx, &mut list, Verb::Update, &written)?;
    if merged.is_empty() {
        return Ok(None);
    }
    let mut out = u.clone();
    let mut assignments = Vec::with_capacity(u.assignments.len());
    for (a, q) in u.assignments.iter().zip(&quals) {
        let m = q.as_ref().and_then(|q| {
            merged
                .iter()
                .zip(&factors)
                .find(|(_, f)| f.qual.eq_ignore_ascii_case(q))
                .map(|(m, f)| (m, f.qual.clone()))
        });
        match m {
            Some((m, qual)) => {
                let (mut one, _) = map_assignments(m, &qual, std::slice::from_ref(a), "SET")?;
                subst(&mut one[0].value, &factors);
                assignments.append(&mut one);
            }
            None => {
                let mut a = a.clone();
                subst(&mut a.value, &factors);
                assignments.push(a);
            }
        }
    }
    out.assignments = assignments;
    subst_ons(&mut list, &factors);
    let mine = u.selection.clone().map(|mut w| {
        subst(&mut w, &factors);
        nested(w)
    });
    out.selection = and_all(wheres.into_iter().chain(mine));
    for o in &mut out.order_by {
        subst(&mut o.expr, &factors);
    }
    out.table = list.remove(0);
    out.from = (!list.is_empty()).then_some(ast::UpdateTableFromKind::BeforeSet(list));
    let mut checks = merged
        .iter()
        .zip(&factors)
        .filter(|(m, f)| m.check.is_some() && written(&f.qual));
    let check = checks
        .next()
        .and_then(|(m, _)| m.check.clone().map(|c| (m.view.clone(), c)));
    if checks.next().is_some() {
        return Err(SqlError::unsupported(
            "two views WITH CHECK OPTION written by one UPDATE",
        ));
    }
    let view = multi_target(&merged[0], &check);
    Ok(Some(MultiRewritten {
        stmt: out,
        check,
        view,
    }))
}

/// A multi-table DELETE reading or deleting from views, merged onto base tables (None when
/// it names no view).
pub(crate) fn rewrite_multi_delete(
    cx: &ExecContext,
    d: &ast::Delete,
) -> Result<Option<MultiRewritten<ast::Delete>>, SqlError> {
    if !cx.server.engine.catalog().has_views() {
        return Ok(None);
    }
    let mut out = d.clone();
    let from_kw = match &mut out.from {
        ast::FromTable::WithFromKeyword(v) | ast::FromTable::WithoutKeyword(v) => v,
    };
    let targets: Vec<String> = match &d.using {
        Some(_) => from_kw
            .iter()
            .filter_map(|t| match &t.relation {
                ast::TableFactor::Table { name, .. } => crate::expr::object_name_parts(name).pop(),
                _ => None,
            })
            .collect(),
        None => d
            .tables
            .iter()
            .filter_map(|n| crate::expr::object_name_parts(n).pop())
            .collect(),
    };
    let written = |q: &str| targets.iter().any(|t| t.eq_ignore_ascii_case(q));
    let list = match &mut out.using {
        Some(u) => u,
        None => from_kw,
    };
    let (factors, wheres, merged) = merge_from_list(cx, list, Verb::Delete, &written)?;
    if merged.is_empty() {
        return Ok(None);
    }
    subst_ons(list, &factors);
    let mine = d.selection.clone().map(|mut w| {
        subst(&mut w, &factors);
        nested(w)
    });
    out.selection = and_all(wheres.into_iter().chain(mine));
    let view = multi_target(&merged[0], &None);
    Ok(Some(MultiRewritten {
        stmt: out,
        check: None,
        view,
    }))
}
