//! Subqueries, derived tables, UNION and CTEs, planned: the [`Hook`] through which the
//! expression compiler compiles `(SELECT ...)` (each into a [`SubPlan`] of the enclosing
//! SELECT), derived tables `FROM (SELECT ...) AS d` and CTE references (each a [`Derived`]
//! read where its FROM position is, with a synthetic table definition), set operations and
//! `WITH [RECURSIVE]` (`compile_query`).
//!
//! Invariants: a subquery that names a column of an enclosing query is correlated, and its
//! row is its own columns followed by the enclosing row (`SelectPlan::width`); derived
//! tables, CTEs and union parts never see an enclosing row; every subquery, derived table
//! and union part is compiled with the statement's placeholders numbered in textual order
//! (a placeholder in a derived table, CTE or union is refused, 1235, as it would be out of
//! order); what cannot be run exactly is refused with 1235 (a subquery in a locking read,
//! a correlated subquery in an ON condition).
//!
//! Called by `plan::select::compile_in` (its hooks); run by `execute::subquery`.

use std::cell::RefCell;
use std::sync::Arc;

use onelog_engine::collation::Collation;
use onelog_engine::{ColumnDef, ColumnExtras, SqlType, TableDef};
use onelog_protocol::errors;
use sqlparser::ast;

use super::{compile_in, concrete, Compiled, SelectPlan};
use crate::bind::tables::FromTable;
use crate::context::ExecContext;
use crate::error::SqlError;
use crate::expr::{CollRef, Compiler, Expr, OuterNames, RType, SubqInfo, SubqueryHook};
use crate::infoschema::InfoTable;
use crate::output::Column;

/// A subquery of a SELECT: its plan and whether it reads the enclosing row.
#[derive(Debug, Clone)]
pub(crate) struct SubPlan {
    pub plan: SelectPlan,
    pub correlated: bool,
}

/// A table read from memory where a FROM position is: materialized before the query runs.
#[derive(Debug, Clone)]
pub(crate) enum Derived {
    /// A derived table or a non-recursive CTE.
    Select(Box<SelectPlan>),
    /// `left UNION|INTERSECT|EXCEPT [ALL] right`.
    SetOp(Box<SetOpPlan>),
    /// WITH RECURSIVE's CTE.
    Recursive(Box<RecursivePlan>),
    /// An `information_schema` table, computed from the catalog when the statement runs.
    Info(InfoTable),
    /// A table of the `mysql` schema, computed from the catalog when the statement runs.
    Mysql(crate::mysqlschema::MysqlTable),
    /// The rows the last round of the recursive CTE computing under this slot added.
    WorkTable(u64),
}

/// A set operation of two parts; values are converted to `rtypes`, rows compared under the
/// collations `colls` (None: the connection's).
#[derive(Debug, Clone)]
pub(crate) struct SetOpPlan {
    pub op: SetOp,
    pub all: bool,
    pub left: Derived,
    pub right: Derived,
    pub rtypes: Vec<RType>,
    pub colls: Vec<Option<Collation>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SetOp {
    Union,
    Intersect,
    Except,
}

/// WITH RECURSIVE's CTE: the anchor, then rounds of the recursive parts, each reading the
/// rows the round before added (`Derived::WorkTable(slot)`), until a round adds none or
/// `max_recursive_iterations` rounds ran. `distinct`: UNION (a row already there is not
/// added again), else UNION ALL.
#[derive(Debug, Clone)]
pub(crate) struct RecursivePlan {
    pub anchor: Derived,
    pub steps: Vec<Derived>,
    pub distinct: bool,
    pub slot: u64,
    pub rtypes: Vec<RType>,
    pub colls: Vec<Option<Collation>>,
}

/// A recursive CTE's definition and the slot its rounds' rows are kept under.
pub(crate) type WorkTable = (Arc<TableDef>, u64);

/// One WITH's CTEs, inside those of the WITHs enclosing it.
pub(crate) struct Ctes<'a> {
    pub list: Vec<(String, &'a ast::Cte)>,
    pub recursive: bool,
    pub parent: Option<&'a Ctes<'a>>,
    /// A CTE being compiled as recursive: its name, and the definition and slot its
    /// self-references read (None while its anchor is being found).
    pub this: Option<(String, Option<WorkTable>)>,
}

impl Ctes<'_> {
    /// The CTE `name` visible here: (its definition, the scope it is compiled in, or the
    /// recursive table being built).
    fn find(&self, name: &str) -> Option<CteRef<'_>> {
        if let Some((n, def)) = &self.this {
            if n.eq_ignore_ascii_case(name) {
                return Some(CteRef::Recursing(def.clone()));
            }
        }
        match self
            .list
            .iter()
            .position(|(n, _)| n.eq_ignore_ascii_case(name))
        {
            Some(i) => Some(CteRef::Cte(self.list[i].1, i, self)),
            None => self.parent.and_then(|p| p.find(name)),
        }
    }
}

enum CteRef<'a> {
    /// A CTE (the `i`th of scope `.2`).
    Cte(&'a ast::Cte, usize, &'a Ctes<'a>),
    /// A self-reference of the recursive CTE being compiled (None: while finding its anchor).
    Recursing(Option<WorkTable>),
}

/// What compiling a SELECT in a scope needs beyond the statement.
#[derive(Clone, Copy, Default)]
pub(crate) struct Ctx<'a> {
    /// The enclosing query's names (a subquery).
    pub outer: Option<&'a dyn OuterNames>,
    /// The next placeholder number.
    pub params: usize,
    /// The CTEs visible.
    pub ctes: Option<&'a Ctes<'a>>,
}

/// The subquery compiler of one SELECT: its subqueries' plans, in id order.
pub(crate) struct Hook<'c> {
    cx: &'c ExecContext,
    ctes: Option<&'c Ctes<'c>>,
    pub plans: RefCell<Vec<SubPlan>>,
    /// The WHERE of a SELECT whose FROM is one table without joins (a view there takes the
    /// terms it can: `plan::select::merge`).
    alone_where: Option<&'c ast::Expr>,
}

impl<'c> Hook<'c> {
    pub fn new(cx: &'c ExecContext, ctx: Ctx<'c>) -> Self {
        Hook {
            cx,
            ctes: ctx.ctes,
            plans: RefCell::new(Vec::new()),
            alone_where: None,
        }
    }

    /// The hook of `sel`: its WHERE kept when its FROM is one table alone.
    pub fn for_select(cx: &'c ExecContext, ctx: Ctx<'c>, sel: &'c ast::Select) -> Self {
        let mut h = Hook::new(cx, ctx);
        if let [only] = sel.from.as_slice() {
            if only.joins.is_empty() {
                h.alone_where = sel.selection.as_ref();
            }
        }
        h
    }

    /// A derived table or CTE reference in FROM: compiled, with its synthetic definition
    /// (kept with its plan in `out`); None for a base table.
    pub fn derived_table(
        &self,
        tf: &ast::TableFactor,
        out: &mut Vec<(Arc<TableDef>, Derived)>,
    ) -> Result<Option<FromTable>, SqlError> {
        let (q, alias, cte_scope, name) = match tf {
            ast::TableFactor::Derived {
                subquery, alias, ..
            } => {
                // MariaDB 10.11's grammar has no derived table without an alias: 1064 (its
                // text names what follows the table; the statement's text is not at hand).
                let Some(a) = alias else {
                    return Err(SqlError::syntax(""));
                };
                (&**subquery, Some(a), self.ctes, a.name.value.clone())
            }
            ast::TableFactor::Table { name, alias, .. } => {
                let parts = crate::expr::object_name_parts(name);
                if let [db, n] = parts.as_slice() {
                    if crate::infoschema::is_database(db) {
                        return info_table(n, alias.as_ref(), out);
                    }
                }
                if let Some(found) = self.mysql_table(&parts, alias.as_ref(), out)? {
                    return Ok(Some(found));
                }
                let ([n], Some(ctes)) = (parts.as_slice(), self.ctes) else {
                    return self.view(name, alias.as_ref(), out);
                };
                let qn = alias.as_ref().map_or(n.clone(), |a| a.name.value.clone());
                match ctes.find(n) {
                    None => return self.view(name, alias.as_ref(), out),
                    Some(CteRef::Recursing(None)) => return Err(recursive_mark()),
                    Some(CteRef::Recursing(Some((def, slot)))) => {
                        let mut d = (*def).clone();
                        d.name = qn.clone();
                        let d = Arc::new(d);
                        out.push((d.clone(), Derived::WorkTable(slot)));
                        return Ok(Some((d, qn)));
                    }
                    Some(CteRef::Cte(cte, i, scope)) => {
                        let (d, plan) = compile_cte(self.cx, cte, i, scope, &qn)?;
                        out.push((d.clone(), plan));
                        return Ok(Some((d, qn)));
                    }
                }
            }
            ast::TableFactor::JsonTable { .. } => {
                return Err(SqlError::unsupported("JSON_TABLE"));
            }
            _ => return Ok(None),
        };
        let ctx = Ctx {
            outer: None,
            params: 0,
            ctes: cte_scope,
        };
        let (plan, defs) = compile_derived(self.cx, q, ctx)?;
        let renames = alias.map(|a| &a.columns[..]).unwrap_or(&[]);
        let def = derived_table_def(defs, &name, renames)?;
        out.push((def.clone(), plan));
        Ok(Some((def, name)))
    }
}

impl Hook<'_> {
    /// A table of the `mysql` schema in FROM (`mysql.x`, or `x` while `mysql` is the current
    /// database and no CTE is named `x`): SELECT on `mysql` checked, its definition kept
    /// with its rows' source in `out`; None for another name.
    fn mysql_table(
        &self,
        parts: &[String],
        alias: Option<&ast::TableAlias>,
        out: &mut Vec<(Arc<TableDef>, Derived)>,
    ) -> Result<Option<FromTable>, SqlError> {
        use crate::mysqlschema::{is_database, MysqlTable};
        let n = match parts {
            [db, n] if is_database(db) => n,
            [n] if self.cx.current_db.as_deref().is_some_and(is_database)
                && self.ctes.is_none_or(|c| c.find(n).is_none()) =>
            {
                n
            }
            _ => return Ok(None),
        };
        let t = MysqlTable::named(n)?;
        t.check_select(self.cx)?;
        let qn = alias.map_or(n.clone(), |a| a.name.value.clone());
        let d = Arc::new(synthetic(&qn, t.columns()));
        out.push((d.clone(), Derived::Mysql(t)));
        Ok(Some((d, qn)))
    }

    /// A view in FROM (`plan::select::view`): compiled, its definition kept with its plan in
    /// `out`; None for a name that is not a view's.
    fn view(
        &self,
        name: &ast::ObjectName,
        alias: Option<&ast::TableAlias>,
        out: &mut Vec<(Arc<TableDef>, Derived)>,
    ) -> Result<Option<FromTable>, SqlError> {
        // `x` while the current database is information_schema (a CTE named `x` comes first).
        if let [n] = crate::expr::object_name_parts(name).as_slice() {
            if self
                .cx
                .current_db
                .as_deref()
                .is_some_and(crate::infoschema::is_database)
            {
                return info_table(n, alias, out);
            }
        }
        let Some(v) = super::view::view_named(self.cx, name) else {
            return Ok(None);
        };
        let qn = alias.map_or(v.name.clone(), |a| a.name.value.clone());
        let (def, plan) = super::view::view_ref(self.cx, &v, &qn, self.alone_where)?;
        out.push((def.clone(), plan));
        Ok(Some((def, qn)))
    }
}

impl SubqueryHook for Hook<'_> {
    fn compile_subquery(
        &self,
        q: &ast::Query,
        outer: &dyn OuterNames,
        params: usize,
    ) -> Result<SubqInfo, SqlError> {
        let ctx = Ctx {
            outer: Some(outer),
            params,
            ctes: self.ctes,
        };
        let out = compile_in(self.cx, q, crate::parse::LockClause::None, ctx)?;
        let rtype = match out.plan.rtypes.first() {
            Some(RType::Column(_)) => out.defs.first().map_or(RType::Null, |d| concrete(&d.ty)),
            Some(r) => *r,
            None => RType::Null,
        };
        let mut plans = self.plans.borrow_mut();
        let info = SubqInfo {
            id: plans.len(),
            columns: out.plan.projections.len(),
            rtype,
            deriv: out.deriv,
            derivs: out.derivs,
            correlated: out.correlated,
            params: out.plan.params.max(params),
        };
        plans.push(SubPlan {
            plan: out.plan,
            correlated: out.correlated,
        });
        Ok(info)
    }
}

/// A CTE referenced as `qn`: compiled in the scope of the CTEs before it (all of its WITH's
/// when RECURSIVE).
fn compile_cte(
    cx: &ExecContext,
    cte: &ast::Cte,
    i: usize,
    scope: &Ctes<'_>,
    qn: &str,
) -> Result<(Arc<TableDef>, Derived), SqlError> {
    if scope.recursive {
        return super::setop::compile_recursive(cx, cte, scope, qn);
    }
    let before = Ctes {
        list: scope.list[..i].to_vec(),
        recursive: scope.recursive,
        parent: scope.parent,
        this: None,
    };
    let ctx = Ctx {
        outer: None,
        params: 0,
        ctes: Some(&before),
    };
    let (plan, defs) = compile_derived(cx, &cte.query, ctx)?;
    Ok((derived_table_def(defs, qn, &cte.alias.columns)?, plan))
}

/// A query compiled as a derived table or CTE: its plan and column definitions (a bare set
/// operation through `plan::select::setop`); a placeholder in it is refused (1235), as it would be
/// numbered out of textual order.
pub(crate) fn compile_derived(
    cx: &ExecContext,
    q: &ast::Query,
    ctx: Ctx<'_>,
) -> Result<(Derived, Vec<ColumnDef>), SqlError> {
    if super::setop::is_bare_set(q) {
        let (d, defs, _) = super::setop::compile_set(cx, &q.body, ctx)?;
        return Ok((d, defs));
    }
    let out = compile_in(cx, q, crate::parse::LockClause::None, ctx)?;
    if out.plan.params > ctx.params {
        return Err(SqlError::unsupported("placeholders in a derived table"));
    }
    Ok((Derived::Select(Box::new(out.plan)), out.defs))
}

/// The synthetic table definition of a derived table named `name` (its columns renamed by
/// `renames` when given; 1060 for a duplicate name, 4002 for a wrong count).
pub(crate) fn derived_table_def(
    mut columns: Vec<ColumnDef>,
    name: &str,
    renames: &[ast::TableAliasColumnDef],
) -> Result<Arc<TableDef>, SqlError> {
    if !renames.is_empty() {
        if renames.len() != columns.len() {
            return Err(SqlError::of(
                errors::ER_WITH_COL_WRONG_LIST,
                "WITH column list and SELECT field list have different column counts",
            ));
        }
        for (c, r) in columns.iter_mut().zip(renames) {
            c.name = r.name.value.clone();
        }
    }
    for (i, c) in columns.iter().enumerate() {
        if columns[..i]
            .iter()
            .any(|d| d.name.eq_ignore_ascii_case(&c.name))
        {
            return Err(SqlError::of(
                errors::ER_DUP_FIELDNAME,
                format!("Duplicate column name '{}'", c.name),
            ));
        }
    }
    Ok(Arc::new(synthetic(name, columns)))
}

/// A table definition for rows held in memory (no keys).
pub(crate) fn synthetic(name: &str, columns: Vec<ColumnDef>) -> TableDef {
    TableDef::in_memory(name, columns)
}

/// The `information_schema` table `n` in FROM (1109 for one onelog does not serve).
fn info_table(
    n: &str,
    alias: Option<&ast::TableAlias>,
    out: &mut Vec<(Arc<TableDef>, Derived)>,
) -> Result<Option<FromTable>, SqlError> {
    let t = InfoTable::named(n)?;
    let qn = alias.map_or(n.to_string(), |a| a.name.value.clone());
    // Named as MariaDB names it (the result's org_table and database), read as `qn`.
    let d = Arc::new(t.table_def());
    out.push((d.clone(), Derived::Info(t)));
    Ok(Some((d, qn)))
}

/// Per FROM position: the derived table compiled for it (matched by definition identity).
pub(crate) fn derived_at(
    froms: &[FromTable],
    list: Vec<(Arc<TableDef>, Derived)>,
) -> Vec<Option<Derived>> {
    if list.is_empty() {
        return Vec::new();
    }
    let mut out: Vec<Option<Derived>> = vec![None; froms.len()];
    for (d, p) in list {
        if let Some(k) = froms.iter().position(|(t, _)| Arc::ptr_eq(t, &d)) {
            out[k] = Some(p);
        }
    }
    out
}

/// A column definition per result column: a table column's own (named as the result
/// column), else one of the expression's type.
pub(crate) fn result_defs(
    columns: &[Column],
    rtypes: &[RType],
    (projections, colls): (&[Expr], &[CollRef]),
    from: &crate::bind::tables::From,
) -> Vec<ColumnDef> {
    debug_assert_eq!(projections.len(), colls.len());
    let mut out = Vec::with_capacity(columns.len());
    for (((col, r), x), coll) in columns.iter().zip(rtypes).zip(projections).zip(colls) {
        let src = match (x, r) {
            (Expr::Col(i), _) | (_, RType::Column(i)) if !from.tables.is_empty() => {
                let (k, j) = from.owner(*i);
                from.tables.get(k).and_then(|(t, _)| t.columns.get(j))
            }
            _ => None,
        };
        // An ENUM, SET or BIT column's value in a result is its text (its bytes): the rows
        // hold that, so the column is a string one, not the stored number again.
        let src = src.filter(|d| d.ty.member_count() == 0 && !matches!(d.ty, SqlType::Bit(_)));
        let mut d = match src {
            Some(d) => {
                let mut d = d.clone();
                d.auto_increment = false;
                d.default = None;
                d.extras = ColumnExtras::default();
                if !matches!(x, Expr::Col(_)) {
                    d.nullable = true;
                }
                d
            }
            None => {
                // A text expression keeps the collation it derives (`SUBSTRING(bin_col, 1, 1)`
                // is utf8mb4_bin in a derived table, a CTE or a UNION part, as in MariaDB).
                let mut d = rtype_def(*r, col.flags & 1 == 0);
                if let (true, CollRef::Fixed(c)) = (d.ty.is_text(), coll) {
                    d.collation = Some(*c);
                }
                d
            }
        };
        d.name = col.name.clone();
        out.push(d);
    }
    out
}

/// Per projection, the definition of the table column it names when it is a plain column
/// reference (an ENUM, SET or BIT column's read as its text included; None for any other
/// expression).
pub(crate) fn direct_sources(
    projections: &[Expr],
    from: &crate::bind::tables::From,
) -> Vec<Option<ColumnDef>> {
    let column = |x: &Expr| match x {
        Expr::Col(i) => Some(*i),
        Expr::Func(f, args) if matches!(f.def().name, "ENUM_TEXT" | "SET_TEXT" | "BIT_TEXT") => {
            match args.first() {
                Some(Expr::Col(i)) => Some(*i),
                _ => None,
            }
        }
        _ => None,
    };
    projections
        .iter()
        .map(|x| match column(x) {
            Some(i) if !from.tables.is_empty() => {
                let (k, j) = from.owner(i);
                from.tables
                    .get(k)
                    .and_then(|(t, _)| t.columns.get(j))
                    .cloned()
            }
            _ => None,
        })
        .collect()
}

/// A column definition holding values of result type `r`.
pub(crate) fn rtype_def(r: RType, nullable: bool) -> ColumnDef {
    let ty = match r {
        RType::Int => SqlType::BigInt { unsigned: false },
        RType::UInt => SqlType::BigInt { unsigned: true },
        RType::Decimal(p, s) => SqlType::Decimal {
            precision: p.clamp(1, 65),
            scale: s.min(30).min(p.clamp(1, 65)),
        },
        RType::Double | RType::DoubleDec(_) => SqlType::Double,
        RType::Str(n) if n <= 16383 => SqlType::VarChar(n.max(1)),
        RType::Str(_) | RType::Dyn | RType::Column(_) => SqlType::LongText,
        RType::Date => SqlType::Date,
        RType::DateTime(f) => SqlType::DateTime(f),
        RType::Time => SqlType::Time(0),
        RType::Year => SqlType::Year,
        RType::Null => SqlType::Binary(0),
    };
    let collation = ty.is_text().then_some(Collation::DEFAULT);
    ColumnDef {
        name: String::new(),
        ty,
        nullable,
        default: None,
        auto_increment: false,
        extras: ColumnExtras::default(),
        collation,
        members: Vec::new(),
    }
}

/// The subqueries an UPDATE, DELETE or INSERT compiled: uncorrelated ones run once (an
/// UPDATE's and DELETE's before any row changes), correlated ones per row: in WHERE while
/// the rows to change are chosen, in SET and ORDER BY before any row changes (MariaDB reads
/// the table as it was), in ON DUPLICATE KEY UPDATE on the row found (`execute::dml`).
pub(crate) fn dml_subqueries(hook: Hook<'_>) -> Vec<SubPlan> {
    hook.plans.into_inner()
}

/// Whether `p` reads the base table `id`: from its FROM tables, its subqueries or its
/// derived tables (views included), at any depth.
pub(crate) fn plan_reads(p: &SelectPlan, id: u64) -> bool {
    let own = p.table.as_ref().is_some_and(|t| t.id == id)
        || p.join
            .as_ref()
            .is_some_and(|j| j.driver_table.id == id || j.steps.iter().any(|s| s.table.id == id));
    own || p.subqueries.iter().any(|s| plan_reads(&s.plan, id))
        || p.derived.iter().flatten().any(|d| derived_reads(d, id))
}

fn derived_reads(d: &Derived, id: u64) -> bool {
    match d {
        Derived::Select(p) => plan_reads(p, id),
        Derived::SetOp(s) => derived_reads(&s.left, id) || derived_reads(&s.right, id),
        Derived::Recursive(r) => {
            derived_reads(&r.anchor, id) || r.steps.iter().any(|s| derived_reads(s, id))
        }
        Derived::Info(_) | Derived::Mysql(_) | Derived::WorkTable(_) => false,
    }
}

/// What a SELECT with subqueries cannot run exactly: refused (1235).
pub(crate) fn check_plan(p: &SelectPlan) -> Result<(), SqlError> {
    if p.lock.is_some() && (!p.subqueries.is_empty() || p.derived.iter().any(Option::is_some)) {
        return Err(SqlError::unsupported(
            "subqueries or derived tables in a locking read",
        ));
    }
    Ok(())
}

/// `sel` with the ON conjuncts of its inner joins that hold a subquery moved into its
/// WHERE (for an inner join the same rows, wherever it stands among inner and left joins;
/// nothing moves when a RIGHT JOIN is there): a correlated
/// subquery there then runs per joined row, as WHERE's do, where in the ON it would be
/// refused ([`compile_on`]). None when there is none to move, or when the statement has
/// placeholders (their textual order would change).
pub(crate) fn on_subqueries_to_where(sel: &ast::Select) -> Option<ast::Select> {
    let has_subquery = |e: &ast::Expr| e.to_string().to_ascii_uppercase().contains("SELECT");
    let inner_on = |j: &ast::Join| match &j.join_operator {
        ast::JoinOperator::Join(ast::JoinConstraint::On(e))
        | ast::JoinOperator::Inner(ast::JoinConstraint::On(e)) => Some(e.clone()),
        _ => None,
    };
    let any = sel
        .from
        .iter()
        .flat_map(|t| &t.joins)
        .filter_map(inner_on)
        .any(|e| has_subquery(&e));
    // A RIGHT (or FULL) JOIN keeps rows the inner join's ON would not: nothing moves then.
    let preserving = sel.from.iter().flat_map(|t| &t.joins).any(|j| {
        matches!(
            j.join_operator,
            ast::JoinOperator::Right(_)
                | ast::JoinOperator::RightOuter(_)
                | ast::JoinOperator::FullOuter(_)
        )
    });
    if !any || preserving || sel.to_string().contains('?') {
        return None;
    }
    let mut out = sel.clone();
    let mut moved: Vec<ast::Expr> = Vec::new();
    for twj in &mut out.from {
        for j in &mut twj.joins {
            let Some(on) = inner_on(j) else {
                continue;
            };
            let mut parts = Vec::new();
            crate::expr::split_and(&on, &mut parts);
            let (subq, kept): (Vec<&ast::Expr>, Vec<&ast::Expr>) =
                parts.into_iter().partition(|e| has_subquery(e));
            moved.extend(subq.into_iter().cloned());
            let kept = and_all(kept.into_iter().cloned().collect()).unwrap_or_else(|| {
                ast::Expr::Value(ast::Value::Number("1".into(), false).with_empty_span())
            });
            match &mut j.join_operator {
                ast::JoinOperator::Join(c) | ast::JoinOperator::Inner(c) => {
                    *c = ast::JoinConstraint::On(kept)
                }
                _ => {}
            }
        }
    }
    let mut all: Vec<ast::Expr> = out.selection.take().into_iter().collect();
    all.extend(moved);
    out.selection = and_all(all);
    Some(out)
}

/// `a AND b AND ...` (each operand parenthesised); None for no operand.
fn and_all(v: Vec<ast::Expr>) -> Option<ast::Expr> {
    v.into_iter()
        .map(|e| ast::Expr::Nested(Box::new(e)))
        .reduce(|a, b| ast::Expr::BinaryOp {
            left: Box::new(a),
            op: ast::BinaryOperator::And,
            right: Box::new(b),
        })
}

/// An ON condition: no name of an enclosing query nor a correlated subquery in it (its
/// joined row is not complete when it is tested: 1235).
pub(crate) fn compile_on(c: &mut Compiler<'_>, e: &ast::Expr) -> Result<Expr, SqlError> {
    let was = c.correlated.replace(false);
    let x = c.compile(e)?;
    let outer = c.correlated.replace(was);
    if outer || subq_correlated(&x) {
        return Err(SqlError::unsupported(
            "correlated subqueries in an ON condition",
        ));
    }
    Ok(x)
}

/// True when `e` holds a correlated subquery anywhere.
pub(crate) fn subq_correlated(e: &Expr) -> bool {
    if matches!(e, Expr::Subq(s) if s.correlated) {
        return true;
    }
    let mut found = false;
    e.for_each_child(&mut |c| found = found || subq_correlated(c));
    found
}

/// The error a self-reference of a recursive CTE raises while its anchor is looked for.
pub(crate) fn recursive_mark() -> SqlError {
    SqlError::unsupported("a recursive reference here")
}

/// WITH and set operations: compiled here (None: a plain SELECT, compiled by the caller).
pub(crate) fn compile_query(
    cx: &ExecContext,
    q: &ast::Query,
    lock: crate::parse::LockClause,
    ctx: Ctx<'_>,
) -> Result<Option<Compiled>, SqlError> {
    if let Some(w) = &q.with {
        let scope = Ctes {
            list: w
                .cte_tables
                .iter()
                .map(|c| (c.alias.name.value.clone(), c))
                .collect(),
            recursive: w.recursive,
            parent: ctx.ctes,
            this: None,
        };
        for (i, (n, _)) in scope.list.iter().enumerate() {
            if scope.list[..i]
                .iter()
                .any(|(m, _)| m.eq_ignore_ascii_case(n))
            {
                return Err(SqlError::of(
                    errors::ER_DUP_QUERY_NAME,
                    format!("Duplicate query name `{n}` in WITH clause"),
                ));
            }
        }
        let mut body = q.clone();
        body.with = None;
        let inner = Ctx {
            ctes: Some(&scope),
            ..ctx
        };
        return compile_in(cx, &body, lock, inner).map(Some);
    }
    let set_op = match &*q.body {
        ast::SetExpr::SetOperation { .. } => true,
        ast::SetExpr::Query(_) => q.order_by.is_some() || q.limit_clause.is_some(),
        _ => false,
    };
    if !set_op {
        return Ok(None);
    }
    super::setop::compile_wrapped(cx, q, lock, ctx).map(Some)
}
