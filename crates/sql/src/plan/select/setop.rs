//! Set operations and recursive CTEs, planned: `a UNION [ALL|DISTINCT] b`, `INTERSECT`,
//! `EXCEPT` (each a [`Derived::SetOp`] over its parts' plans, with the parts' column types
//! unified), a query of them with ORDER BY / LIMIT on the whole (planned as
//! `SELECT * FROM (parts) AS u ORDER BY ... LIMIT ...`), and WITH RECURSIVE's CTEs (anchor
//! parts, then recursive parts that read the previous round: [`Derived::Recursive`]).
//!
//! Invariants: every part has the first part's number of columns (1222 otherwise); result
//! columns are named after the first part's; a placeholder in a part is refused (1235).
//!
//! Called by `plan::select::subquery` (its `compile_query`, derived tables and CTEs).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use onelog_engine::collation::Collation;
use onelog_engine::{ColumnDef, TableDef};
use onelog_protocol::errors;
use sqlparser::ast;

use super::subquery::{
    compile_derived, derived_table_def, recursive_mark, rtype_def, Ctes, Ctx, Derived,
    RecursivePlan, SetOp, SetOpPlan,
};
use super::{compile_in, concrete, Compiled};
use crate::context::ExecContext;
use crate::error::SqlError;
use crate::expr::RType;

/// The name the whole of a set operation with ORDER BY / LIMIT is read under.
pub(crate) const WHOLE: &str = "__union";

/// A query with only `body` (no WITH, ORDER BY, LIMIT).
fn query_of(body: ast::SetExpr) -> ast::Query {
    ast::Query {
        with: None,
        body: Box::new(body),
        order_by: None,
        limit_clause: None,
        fetch: None,
        locks: Vec::new(),
        for_clause: None,
        settings: None,
        format_clause: None,
        pipe_operators: Vec::new(),
    }
}

/// True when `q` is a bare set operation (its parts are compiled by [`compile_set`]).
pub(crate) fn is_bare_set(q: &ast::Query) -> bool {
    q.with.is_none()
        && q.order_by.is_none()
        && q.limit_clause.is_none()
        && matches!(*q.body, ast::SetExpr::SetOperation { .. })
}

/// A set operation (or a parenthesised query) with ORDER BY / LIMIT on the whole:
/// compiled as `SELECT * FROM (body) AS __union ORDER BY ... LIMIT ...`.
pub(crate) fn compile_wrapped(
    cx: &ExecContext,
    q: &ast::Query,
    lock: crate::parse::LockClause,
    ctx: Ctx<'_>,
) -> Result<Compiled, SqlError> {
    let inner = match &*q.body {
        ast::SetExpr::Query(inner) if q.order_by.is_none() && q.limit_clause.is_none() => {
            return compile_in(cx, inner, lock, ctx)
        }
        ast::SetExpr::Query(inner) => (**inner).clone(),
        body => query_of(body.clone()),
    };
    let from = ast::TableWithJoins {
        relation: ast::TableFactor::Derived {
            lateral: false,
            subquery: Box::new(inner),
            alias: Some(ast::TableAlias {
                explicit: true,
                name: ast::Ident::new(WHOLE),
                columns: Vec::new(),
                at: None,
            }),
            sample: None,
        },
        joins: Vec::new(),
    };
    let mut w = template()?;
    if let ast::SetExpr::Select(s) = &mut *w.body {
        s.from = vec![from];
    }
    w.order_by = q.order_by.clone();
    w.limit_clause = q.limit_clause.clone();
    let mut out = compile_in(cx, &w, lock, ctx)?;
    for c in &mut out.plan.columns {
        c.table.clear();
        c.org_table.clear();
        c.db.clear();
    }
    Ok(out)
}

/// `SELECT * FROM DUAL`, parsed (its FROM is replaced).
fn template() -> Result<ast::Query, SqlError> {
    use sqlparser::parser::Parser;
    let dialect = crate::parse::dialect::OnelogDialect::default();
    let q = Parser::new(&dialect)
        .try_with_sql("SELECT * FROM DUAL")
        .and_then(|mut p| p.parse_query())
        .map_err(|_| SqlError::unsupported("this set operation"))?;
    Ok(*q)
}

/// A set expression: its plan, a column definition per result column, and their types.
pub(crate) fn compile_set(
    cx: &ExecContext,
    body: &ast::SetExpr,
    ctx: Ctx<'_>,
) -> Result<(Derived, Vec<ColumnDef>, Vec<RType>), SqlError> {
    let ast::SetExpr::SetOperation {
        left,
        op,
        set_quantifier,
        right,
    } = body
    else {
        return compile_part(cx, body, ctx);
    };
    let (l, ldefs, lr) = compile_set(cx, left, ctx)?;
    let (r, rdefs, rr) = compile_set(cx, right, ctx)?;
    if ldefs.len() != rdefs.len() {
        return Err(SqlError::of(
            errors::ER_WRONG_NUMBER_OF_COLUMNS_IN_SELECT,
            "The used SELECT statements have a different number of columns",
        ));
    }
    let all = match set_quantifier {
        ast::SetQuantifier::All => true,
        ast::SetQuantifier::Distinct | ast::SetQuantifier::None => false,
        _ => return Err(SqlError::unsupported("UNION BY NAME")),
    };
    let op = match op {
        ast::SetOperator::Union => SetOp::Union,
        ast::SetOperator::Intersect => SetOp::Intersect,
        ast::SetOperator::Except | ast::SetOperator::Minus => SetOp::Except,
    };
    let rtypes: Vec<RType> = lr.iter().zip(&rr).map(|(a, b)| unify(*a, *b)).collect();
    let defs = unify_defs(ldefs, &rdefs, &rtypes);
    let colls = defs.iter().map(|d| d.string_collation()).collect();
    let plan = SetOpPlan {
        op,
        all,
        left: l,
        right: r,
        rtypes: rtypes.clone(),
        colls,
    };
    Ok((Derived::SetOp(Box::new(plan)), defs, rtypes))
}

/// One part of a set operation (a SELECT or a parenthesised query).
fn compile_part(
    cx: &ExecContext,
    body: &ast::SetExpr,
    ctx: Ctx<'_>,
) -> Result<(Derived, Vec<ColumnDef>, Vec<RType>), SqlError> {
    let part = Ctx { outer: None, ..ctx };
    let out = match body {
        ast::SetExpr::Query(q) if is_bare_set(q) => return compile_set(cx, &q.body, part),
        ast::SetExpr::Query(q) => compile_in(cx, q, crate::parse::LockClause::None, part)?,
        other => compile_in(
            cx,
            &query_of(other.clone()),
            crate::parse::LockClause::None,
            part,
        )?,
    };
    if out.plan.params > ctx.params {
        return Err(SqlError::unsupported("placeholders in a UNION"));
    }
    let rtypes = part_rtypes(&out);
    Ok((Derived::Select(Box::new(out.plan)), out.defs, rtypes))
}

/// A compiled part's result types, a table column's as its declared type.
fn part_rtypes(out: &Compiled) -> Vec<RType> {
    out.plan
        .rtypes
        .iter()
        .zip(&out.defs)
        .map(|(r, d)| match r {
            RType::Column(_) => concrete(&d.ty),
            r => *r,
        })
        .collect()
}

/// The type two parts' values of one column are given.
fn unify(a: RType, b: RType) -> RType {
    use RType as R;
    match (a, b) {
        (x, y) if x == y => x,
        (R::Null, y) | (y, R::Null) => y,
        (R::Dyn, _) | (_, R::Dyn) | (R::Column(_), _) | (_, R::Column(_)) => R::Dyn,
        (R::Str(m), R::Str(n)) => R::Str(m.max(n)),
        (R::Str(m), _) | (_, R::Str(m)) => R::Str(m.max(30)),
        (R::Double | R::DoubleDec(_), _) | (_, R::Double | R::DoubleDec(_)) => R::Double,
        (R::Decimal(p, s), R::Decimal(q, t)) => {
            let scale = s.max(t);
            R::Decimal(((p - s).max(q - t) + scale).min(65), scale)
        }
        (R::Decimal(p, s), _) | (_, R::Decimal(p, s)) => R::Decimal((p - s).max(20) + s, s),
        (R::Int, R::UInt) | (R::UInt, R::Int) => R::Decimal(20, 0),
        (R::Int | R::UInt, R::Year) | (R::Year, R::Int | R::UInt) => a.max_int(b),
        (R::Date, R::DateTime(f)) | (R::DateTime(f), R::Date) => R::DateTime(f),
        (R::DateTime(f), R::DateTime(g)) => R::DateTime(f.max(g)),
        _ => R::Str(30),
    }
}

trait MaxInt {
    fn max_int(self, other: RType) -> RType;
}

impl MaxInt for RType {
    /// Of an integer and YEAR: the integer type.
    fn max_int(self, other: RType) -> RType {
        if self == RType::Year {
            other
        } else {
            self
        }
    }
}

/// The columns of two parts joined: the left's where both have its type, else one of the
/// unified type (named as the left's).
fn unify_defs(left: Vec<ColumnDef>, right: &[ColumnDef], rtypes: &[RType]) -> Vec<ColumnDef> {
    left.into_iter()
        .zip(right)
        .zip(rtypes)
        .map(|((l, r), t)| {
            if l.ty == r.ty && l.collation == r.collation {
                ColumnDef {
                    nullable: l.nullable || r.nullable,
                    ..l
                }
            } else {
                let mut d = rtype_def(*t, true);
                if d.ty.is_text() {
                    if let Some(c) = unified_collation(l.string_collation(), r.string_collation()) {
                        d.collation = Some(c);
                    }
                }
                d.name = l.name;
                d
            }
        })
        .collect()
}

/// The collation of a text column unified from two parts' columns of different types: the
/// one they share (it was utf8mb4_general_ci whenever the types differed), or `utf8mb4_bin`
/// when one is it and the other another utf8mb4 collation, as MariaDB's aggregation gives
/// it at equal coercibility (two columns) and over a literal; so `SELECT bin_col ... UNION
/// SELECT ci_col ...` keeps `'a'` and `'A'` apart.
fn unified_collation(l: Option<Collation>, r: Option<Collation>) -> Option<Collation> {
    use Collation::{Utf8mb4Bin as Bin, Utf8mb4GeneralCi as Gen, Utf8mb4UnicodeCi as Uni};
    match (l?, r?) {
        (a, b) if a == b => Some(a),
        (Bin, Gen | Uni) | (Gen | Uni, Bin) => Some(Bin),
        _ => None,
    }
}

/// The slots recursive CTEs' work tables are kept under (unique in the process).
static NEXT_SLOT: AtomicU64 = AtomicU64::new(1);

/// A CTE of a WITH RECURSIVE (referenced as `qn`): its UNION parts that do not read it are
/// the anchor, the others run in rounds on the rows the round before added.
pub(crate) fn compile_recursive(
    cx: &ExecContext,
    cte: &ast::Cte,
    scope: &Ctes<'_>,
    qn: &str,
) -> Result<(Arc<TableDef>, Derived), SqlError> {
    let name = cte.alias.name.value.clone();
    let renames = &cte.alias.columns;
    // Compiled inside its own compilation: CTEs that read each other (1235; MariaDB runs
    // mutual recursion).
    let mut up = Some(scope);
    while let Some(s) = up {
        if s.this
            .as_ref()
            .is_some_and(|(n, _)| n.eq_ignore_ascii_case(&name))
        {
            return Err(SqlError::unsupported("mutually recursive CTEs"));
        }
        up = s.parent;
    }
    let mut parts = Vec::new();
    if is_bare_set(&cte.query) {
        flatten(&cte.query.body, true, &mut parts)?;
    }
    let finding = Ctes {
        list: scope.list.clone(),
        recursive: true,
        parent: Some(scope),
        this: Some((name.clone(), None)),
    };
    let ctx = Ctx {
        outer: None,
        params: 0,
        ctes: Some(&finding),
    };
    if parts.is_empty() {
        // Not a UNION: it may not read itself.
        let (plan, defs) = match compile_derived(cx, &cte.query, ctx) {
            Err(e) if e.message == recursive_mark().message => return Err(no_anchors(&name)),
            r => r?,
        };
        return Ok((derived_table_def(defs, qn, renames)?, plan));
    }
    let mut anchors: Vec<(bool, Derived, Vec<ColumnDef>, Vec<RType>)> = Vec::new();
    let mut steps = Vec::new();
    for (distinct, part) in &parts {
        match compile_part(cx, part, ctx) {
            Ok((d, defs, rt)) => anchors.push((*distinct, d, defs, rt)),
            Err(e) if e.message == recursive_mark().message => steps.push((*distinct, *part)),
            Err(e) => return Err(e),
        }
    }
    let Some((anchor, defs, rtypes)) = union_of(anchors)? else {
        return Err(no_anchors(&name));
    };
    let def = derived_table_def(defs, qn, renames)?;
    let slot = NEXT_SLOT.fetch_add(1, Ordering::Relaxed);
    let reading = Ctes {
        list: scope.list.clone(),
        recursive: true,
        parent: Some(scope),
        this: Some((name, Some((def.clone(), slot)))),
    };
    let ctx = Ctx {
        outer: None,
        params: 0,
        ctes: Some(&reading),
    };
    let mut compiled = Vec::with_capacity(steps.len());
    for (_, part) in &steps {
        let (d, more, _) = compile_part(cx, part, ctx)?;
        if more.len() != def.columns.len() {
            return Err(wrong_columns());
        }
        compiled.push(d);
    }
    let colls = def.columns.iter().map(|d| d.string_collation()).collect();
    let plan = RecursivePlan {
        anchor,
        steps: compiled,
        distinct: steps.iter().any(|(d, _)| *d),
        slot,
        rtypes,
        colls,
    };
    Ok((def, Derived::Recursive(Box::new(plan))))
}

/// A recursive CTE's anchor parts (each with whether the UNION before it is DISTINCT) as
/// one plan, with their columns and types unified; None when there is none.
#[allow(clippy::type_complexity)]
fn union_of(
    parts: Vec<(bool, Derived, Vec<ColumnDef>, Vec<RType>)>,
) -> Result<Option<(Derived, Vec<ColumnDef>, Vec<RType>)>, SqlError> {
    let mut parts = parts.into_iter();
    let Some((_, mut anchor, mut defs, mut rtypes)) = parts.next() else {
        return Ok(None);
    };
    for (distinct, d, more, rt) in parts {
        if more.len() != defs.len() {
            return Err(wrong_columns());
        }
        rtypes = rtypes.iter().zip(&rt).map(|(a, b)| unify(*a, *b)).collect();
        defs = unify_defs(defs, &more, &rtypes);
        let colls = defs.iter().map(|d| d.string_collation()).collect();
        anchor = Derived::SetOp(Box::new(SetOpPlan {
            op: SetOp::Union,
            all: !distinct,
            left: anchor,
            right: d,
            rtypes: rtypes.clone(),
            colls,
        }));
    }
    Ok(Some((anchor, defs, rtypes)))
}

fn no_anchors(name: &str) -> SqlError {
    SqlError::of(
        errors::ER_RECURSIVE_WITHOUT_ANCHORS,
        format!("No anchors for recursive WITH element '{name}'"),
    )
}

fn wrong_columns() -> SqlError {
    SqlError::of(
        errors::ER_WRONG_NUMBER_OF_COLUMNS_IN_SELECT,
        "The used SELECT statements have a different number of columns",
    )
}

/// The parts of a chain of UNIONs, each with whether the UNION before it is DISTINCT (the
/// first: `first`); another set operator in a recursive CTE is refused (1235).
fn flatten<'q>(
    body: &'q ast::SetExpr,
    first: bool,
    out: &mut Vec<(bool, &'q ast::SetExpr)>,
) -> Result<(), SqlError> {
    match body {
        ast::SetExpr::SetOperation {
            left,
            op: ast::SetOperator::Union,
            set_quantifier,
            right,
        } => {
            flatten(left, first, out)?;
            let distinct = !matches!(set_quantifier, ast::SetQuantifier::All);
            flatten(right, distinct, out)
        }
        ast::SetExpr::SetOperation { .. } => Err(SqlError::unsupported(
            "INTERSECT or EXCEPT in a recursive CTE",
        )),
        other => {
            out.push((first, other));
            Ok(())
        }
    }
}
