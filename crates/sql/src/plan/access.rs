//! Index selection: turns a compiled WHERE clause into an access path over one table: a
//! primary-key point lookup, index ranges (equality prefix + one range / IN list / OR of
//! ranges on the next column, on the primary key or a secondary index), or a full scan; and
//! runs it against a transaction.
//!
//! Invariants: an access path never returns fewer rows than the WHERE clause selects (the
//! conjuncts it consumed are exactly represented by its ranges); when a key value cannot be
//! converted to the column's type exactly, execution falls back to a full scan filtered by
//! the whole WHERE clause; rows found by several overlapping ranges are returned once, in
//! index order (the engine merges the ranges); rows are visited borrowed ([`visit`]), so a
//! caller copies only what it keeps; every visit adds the rows it handed over to the slow
//! log's `Rows_examined` (`crate::querylog::count_examined`).

use onelog_protocol::errors;
use std::ops::{Bound, ControlFlow};

use onelog_binlog::Value;
use onelog_engine::{IndexRef, KeyRange, LockMode, TableDef, Transaction};

use crate::error::SqlError;
use crate::expr::{convert_for_column, BinOp, CollRef, Env, Expr};

/// One range over an index: equality prefix values then bounds of the next column.
#[derive(Debug, Clone)]
pub(crate) struct RangeExpr {
    pub lo: Bound<Expr>,
    pub hi: Bound<Expr>,
}

#[derive(Debug, Clone)]
pub(crate) enum Access {
    Full,
    /// Values of every primary key column.
    PkPoint(Vec<Expr>),
    Ranges {
        /// None: the primary key; Some(i): `def.indexes[i]`.
        index: Option<usize>,
        prefix: Vec<Expr>,
        /// Empty: just the prefix.
        ranges: Vec<RangeExpr>,
    },
}

#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub access: Access,
    /// Filter to apply on rows from `access`.
    pub residual: Option<Expr>,
    /// The whole WHERE (for the full-scan fallback).
    pub filter: Option<Expr>,
}

pub(crate) fn conjuncts(e: &Expr, out: &mut Vec<Expr>) {
    match e {
        Expr::Bin(BinOp::And, l, r) => {
            conjuncts(l, out);
            conjuncts(r, out);
        }
        other => out.push(other.clone()),
    }
}

pub(crate) fn and_all(mut v: Vec<Expr>) -> Option<Expr> {
    let mut acc = v.pop()?;
    while let Some(x) = v.pop() {
        acc = Expr::Bin(BinOp::And, Box::new(x), Box::new(acc));
    }
    Some(acc)
}

/// True when `e` does not depend on the row's first `width` columns: those after them are
/// an enclosing query's (a correlated subquery's), fixed while it runs; an uncorrelated
/// scalar subquery is computed once per statement.
pub(crate) fn is_const_in(e: &Expr, width: usize) -> bool {
    let k = |x: &Expr| is_const_in(x, width);
    match e {
        Expr::Lit(_) | Expr::Param(_) | Expr::SysVar(..) | Expr::UserVar(_) => true,
        Expr::Col(i) => *i >= width,
        Expr::Agg(_) | Expr::InsertValue(_) | Expr::Win(_) => false,
        Expr::Neg(x)
        | Expr::Not(x)
        | Expr::BitNot(x)
        | Expr::Cast(x, _)
        | Expr::Collate(x, _)
        | Expr::Introduced(x, _)
        | Expr::Collated(_, x) => k(x),
        Expr::Bin(_, l, r) => k(l) && k(r),
        Expr::Func(f, args) => !f.def().volatile && args.iter().all(k),
        Expr::Subq(s) => !s.correlated && matches!(s.kind, crate::expr::SubqKind::Scalar),
        _ => false,
    }
}

/// The comparison `e` is, when its strings compare in the key order of column `col` (its
/// collation); None for a comparison under another collation, which no key order serves.
fn keyed<'e>(e: &'e Expr, def: &TableDef, col: usize) -> Option<&'e Expr> {
    match e {
        Expr::Collated(CollRef::Fixed(c), inner)
            if def.columns.get(col).and_then(|d| d.string_collation()) == Some(*c) =>
        {
            Some(inner)
        }
        Expr::Collated(..) => None,
        other => Some(other),
    }
}

/// `col = const` -> const.
fn eq_on(e: &Expr, col: usize, def: &TableDef, width: usize) -> Option<Expr> {
    let is_const = |x: &Expr| is_const_in(x, width);
    let e = keyed(e, def, col)?;
    if let Expr::Bin(BinOp::Eq, l, r) = e {
        match (&**l, &**r) {
            (Expr::Col(c), x) if *c == col && is_const(x) => return Some(x.clone()),
            (x, Expr::Col(c)) if *c == col && is_const(x) => return Some(x.clone()),
            _ => {}
        }
    }
    None
}

/// Ranges on `col` that exactly represent `e`, if it is a range predicate on it.
fn ranges_on(e: &Expr, col: usize, def: &TableDef, width: usize) -> Option<Vec<RangeExpr>> {
    let is_const = |x: &Expr| is_const_in(x, width);
    let e = keyed(e, def, col)?;
    match e {
        Expr::Bin(op, l, r) => {
            let (op, x) = match (&**l, &**r) {
                (Expr::Col(c), x) if *c == col && is_const(x) => (*op, x.clone()),
                (x, Expr::Col(c)) if *c == col && is_const(x) => (
                    match op {
                        BinOp::Lt => BinOp::Gt,
                        BinOp::Le => BinOp::Ge,
                        BinOp::Gt => BinOp::Lt,
                        BinOp::Ge => BinOp::Le,
                        o => *o,
                    },
                    x.clone(),
                ),
                _ => {
                    if *op == BinOp::Or {
                        let mut a = ranges_on(l, col, def, width)?;
                        a.extend(ranges_on(r, col, def, width)?);
                        return Some(a);
                    }
                    return None;
                }
            };
            let r = match op {
                BinOp::Eq => RangeExpr {
                    lo: Bound::Included(x.clone()),
                    hi: Bound::Included(x),
                },
                BinOp::Lt => RangeExpr {
                    lo: Bound::Excluded(Expr::Lit(Value::Null)),
                    hi: Bound::Excluded(x),
                },
                BinOp::Le => RangeExpr {
                    lo: Bound::Excluded(Expr::Lit(Value::Null)),
                    hi: Bound::Included(x),
                },
                BinOp::Gt => RangeExpr {
                    lo: Bound::Excluded(x),
                    hi: Bound::Unbounded,
                },
                BinOp::Ge => RangeExpr {
                    lo: Bound::Included(x),
                    hi: Bound::Unbounded,
                },
                _ => return None,
            };
            Some(vec![r])
        }
        Expr::Between(x, lo, hi, false) => match &**x {
            Expr::Col(c) if *c == col && is_const(lo) && is_const(hi) => Some(vec![RangeExpr {
                lo: Bound::Included((**lo).clone()),
                hi: Bound::Included((**hi).clone()),
            }]),
            _ => None,
        },
        Expr::In(x, list, false) => match &**x {
            Expr::Col(c) if *c == col && list.iter().all(is_const) => Some(
                list.iter()
                    .map(|v| RangeExpr {
                        lo: Bound::Included(v.clone()),
                        hi: Bound::Included(v.clone()),
                    })
                    .collect(),
            ),
            _ => None,
        },
        _ => None,
    }
}

/// Chooses an access path for `where_` over `def`.
pub(crate) fn plan(def: &TableDef, where_: Option<&Expr>) -> Plan {
    plan_in(def, where_, usize::MAX)
}

/// [`plan`] for a row of `width` columns followed by an enclosing query's (whose values
/// are key values like constants: `resolve_in` reads them).
pub(crate) fn plan_in(def: &TableDef, where_: Option<&Expr>, width: usize) -> Plan {
    let Some(w) = where_ else {
        return Plan {
            access: Access::Full,
            residual: None,
            filter: None,
        };
    };
    let mut conj = Vec::new();
    conjuncts(w, &mut conj);
    let full = Plan {
        access: Access::Full,
        residual: Some(w.clone()),
        filter: Some(w.clone()),
    };
    // Candidate indexes: primary key first.
    let mut candidates: Vec<(Option<usize>, &[usize])> = vec![(None, &def.primary_key)];
    for (i, ix) in def.indexes.iter().enumerate() {
        candidates.push((Some(i), &ix.columns));
    }
    let mut best: Option<(u32, Plan)> = None;
    for (index, cols) in candidates {
        let mut used = vec![false; conj.len()];
        let mut prefix = Vec::new();
        for &c in cols {
            let hit = conj.iter().enumerate().find_map(|(i, e)| {
                if used[i] {
                    None
                } else {
                    eq_on(e, c, def, width).map(|x| (i, x))
                }
            });
            match hit {
                Some((i, x)) => {
                    used[i] = true;
                    prefix.push(x);
                }
                None => break,
            }
        }
        let mut ranges = Vec::new();
        if prefix.len() < cols.len() {
            let c = cols[prefix.len()];
            if let Some((i, r)) = conj.iter().enumerate().find_map(|(i, e)| {
                if used[i] {
                    None
                } else {
                    ranges_on(e, c, def, width).map(|r| (i, r))
                }
            }) {
                used[i] = true;
                ranges = r;
            }
        }
        if prefix.is_empty() && ranges.is_empty() {
            continue;
        }
        let unique_full = prefix.len() == cols.len()
            && (index.is_none() || index.is_some_and(|i| def.indexes[i].unique));
        let score = if index.is_none() && prefix.len() == cols.len() {
            100
        } else if unique_full {
            90
        } else {
            (prefix.len() as u32) * 10
                + if ranges.is_empty() { 0 } else { 5 }
                + u32::from(index.is_none())
        };
        if best.as_ref().is_some_and(|(s, _)| *s >= score) {
            continue;
        }
        let residual = and_all(
            conj.iter()
                .zip(&used)
                .filter(|(_, u)| !**u)
                .map(|(e, _)| e.clone())
                .collect(),
        );
        let access = if index.is_none() && prefix.len() == cols.len() {
            Access::PkPoint(prefix)
        } else {
            Access::Ranges {
                index,
                prefix,
                ranges,
            }
        };
        best = Some((
            score,
            Plan {
                access,
                residual,
                filter: Some(w.clone()),
            },
        ));
    }
    best.map_or(full, |(_, p)| p)
}

/// Evaluates a key value and converts it exactly to the column's type (None: cannot).
fn key_value(
    def: &TableDef,
    col: usize,
    e: &Expr,
    env: &Env,
    row: &[Value],
) -> Result<Option<Value>, SqlError> {
    let v = e.eval(row, env)?;
    if v == Value::Null {
        return Ok(None);
    }
    Ok(exact_key(def, col, v))
}

/// The non-NULL value `v` converted exactly to column `col`'s type, when the column's key
/// order serves a comparison with it (None: it does not, or it cannot be converted exactly).
pub(crate) fn exact_key(def: &TableDef, col: usize, v: Value) -> Option<Value> {
    let c = &def.columns[col];
    if c.ty.is_string() && !matches!(v, Value::Bytes(_)) {
        // A string column compared with a number or a temporal value compares as that type
        // (`'01' = 1` and `'1.0' = 1` hold): many keys match one value, so no key range
        // serves it.
        return None;
    }
    let conv = convert_for_column(v.clone(), &c.ty, &c.name).ok()?;
    let coerced = c.ty.coerce(&c.name, conv).ok()?;
    // Exactness: the converted value must compare equal to the original.
    if crate::expr::compare(&coerced, &v) != Some(std::cmp::Ordering::Equal) {
        return None;
    }
    Some(coerced)
}

/// An access path with its key values evaluated and converted to the key columns' types.
pub(crate) enum Source {
    /// Every row, in primary key order.
    Full,
    /// The row with these primary key values (at most one).
    Point(Vec<Value>),
    /// Rows whose `index` key lies in any of the ranges, each once, in index order.
    Ranges(IndexRef, Vec<KeyRange>),
}

/// Evaluates the plan's key values: the rows to read and the filter to apply to them (the
/// residual conjuncts, or the whole WHERE when a key value cannot be converted exactly and
/// the plan falls back to a full scan).
pub(crate) fn resolve<'p>(
    def: &TableDef,
    plan: &'p Plan,
    env: &Env,
) -> Result<(Source, Option<&'p Expr>), SqlError> {
    resolve_in(def, plan, env, &[])
}

/// [`resolve`] with key values read from `row` (a plan of `plan_in`: NULLs, then the
/// enclosing query's row).
pub(crate) fn resolve_in<'p>(
    def: &TableDef,
    plan: &'p Plan,
    env: &Env,
    row: &[Value],
) -> Result<(Source, Option<&'p Expr>), SqlError> {
    Ok(match resolve_access(def, &plan.access, env, row)? {
        Some(src) => (src, plan.residual.as_ref()),
        None => (Source::Full, plan.filter.as_ref()),
    })
}

/// What a row visitor tells the scan: go on or stop.
pub(crate) type Visit = Result<ControlFlow<()>, SqlError>;

/// Visits the rows of `src` (borrowed; unfiltered). `lock`: a locking read (see
/// `Transaction::scan`). Fails with 1412 when a row does not have the shape of `def` (a DDL
/// ran between compiling and reading).
pub(crate) fn visit(
    txn: &mut Transaction,
    def: &TableDef,
    src: &Source,
    lock: Option<LockMode>,
    f: &mut dyn FnMut(&[Value]) -> Visit,
) -> Result<(), SqlError> {
    let width = def.columns.len();
    let mut err: Option<SqlError> = None;
    // Primary-key order (scans and primary ranges): each row once, keys strictly increasing.
    let pk_ordered = match src {
        Source::Full => true,
        Source::Ranges(index, _) => matches!(index, IndexRef::Primary),
        Source::Point(_) => false,
    };
    let mut last_pk: Option<Vec<u8>> = None;
    // Rows handed over, for the slow log's `Rows_examined` (`crate::querylog`).
    let mut read: u64 = 0;
    let mut each = |row: &[Value]| -> ControlFlow<()> {
        read += 1;
        if row.len() != width {
            err = Some(stale_plan(def));
            return ControlFlow::Break(());
        }
        if cfg!(debug_assertions) && pk_ordered {
            // Identical rows of a table without primary key have one key prefix.
            let hidden = def.primary_key.is_empty();
            let pk = onelog_engine::store::pk_key(def, row);
            debug_assert!(
                last_pk
                    .as_ref()
                    .is_none_or(|p| *p < pk || hidden && *p == pk),
                "rows visited out of primary-key order or twice"
            );
            last_pk = Some(pk);
        }
        match f(row) {
            Ok(c) => c,
            Err(e) => {
                err = Some(e);
                ControlFlow::Break(())
            }
        }
    };
    match src {
        Source::Full => {
            txn.scan_with(
                def.id,
                &IndexRef::Primary,
                &KeyRange::all(),
                lock,
                &mut each,
            )?;
        }
        Source::Point(pk) => match lock {
            None => {
                if let Some(row) = txn.get_shared(def.id, pk)? {
                    let _ = each(&row);
                }
            }
            Some(LockMode::Exclusive) => {
                if let Some(row) = txn.get_for_update(def.id, pk)? {
                    let _ = each(&row);
                }
            }
            Some(LockMode::Shared) => {
                txn.scan_with(
                    def.id,
                    &IndexRef::Primary,
                    &KeyRange::prefix(pk.clone()),
                    lock,
                    &mut each,
                )?;
            }
        },
        Source::Ranges(index, ranges) => {
            txn.scan_ranges_with(def.id, index, ranges, lock, &mut each)?;
        }
    }
    crate::querylog::count_examined(read, matches!(src, Source::Full));
    match err {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

fn stale_plan(def: &TableDef) -> SqlError {
    SqlError::of(
        errors::ER_TABLE_DEF_CHANGED,
        format!(
            "Table definition has changed, please retry transaction ({})",
            def.qualified_name()
        ),
    )
}

/// Rows selected by the plan's access path (copied) and the filter to apply to them.
pub(crate) fn fetch<'p>(
    txn: &mut Transaction,
    def: &TableDef,
    plan: &'p Plan,
    env: &Env,
    lock: Option<LockMode>,
) -> Result<(Vec<Vec<Value>>, Option<&'p Expr>), SqlError> {
    let (src, filter) = resolve(def, plan, env)?;
    let mut rows = Vec::new();
    let guard = &env.cx.guard;
    visit(txn, def, &src, lock, &mut |row| {
        guard.check()?;
        guard.charge(crate::guard::row_bytes(row))?;
        rows.push(row.to_vec());
        Ok(ControlFlow::Continue(()))
    })?;
    Ok((rows, filter))
}

/// The access path's key values, or None when one cannot be converted exactly.
fn resolve_access(
    def: &TableDef,
    access: &Access,
    env: &Env,
    row: &[Value],
) -> Result<Option<Source>, SqlError> {
    match access {
        Access::Full => Ok(Some(Source::Full)),
        Access::PkPoint(exprs) => {
            let mut pk = Vec::with_capacity(exprs.len());
            for (e, &c) in exprs.iter().zip(&def.primary_key) {
                match key_value(def, c, e, env, row)? {
                    Some(v) => pk.push(v),
                    None => return Ok(None),
                }
            }
            Ok(Some(Source::Point(pk)))
        }
        Access::Ranges {
            index,
            prefix,
            ranges,
        } => {
            let cols: &[usize] = match index {
                None => &def.primary_key,
                Some(i) => &def.indexes[*i].columns,
            };
            let iref = match index {
                None => IndexRef::Primary,
                Some(i) => IndexRef::Secondary(def.indexes[*i].name.clone()),
            };
            let mut pre = Vec::with_capacity(prefix.len() + 1);
            for (e, &c) in prefix.iter().zip(cols) {
                match key_value(def, c, e, env, row)? {
                    Some(v) => pre.push(v),
                    None => return Ok(None),
                }
            }
            if ranges.is_empty() {
                return Ok(Some(Source::Ranges(iref, vec![KeyRange::prefix(pre)])));
            }
            let next = cols[prefix.len()];
            let mut krs = Vec::with_capacity(ranges.len());
            for r in ranges {
                let bound = |b: &Bound<Expr>| -> Result<Option<Bound<Vec<Value>>>, SqlError> {
                    Ok(match b {
                        Bound::Unbounded => {
                            if pre.is_empty() {
                                Some(Bound::Unbounded)
                            } else {
                                Some(Bound::Included(pre.clone()))
                            }
                        }
                        Bound::Included(e) | Bound::Excluded(e) => {
                            let v = if matches!(e, Expr::Lit(Value::Null)) {
                                Some(Value::Null)
                            } else {
                                key_value(def, next, e, env, row)?
                            };
                            match v {
                                None => None,
                                Some(v) => {
                                    let mut k = pre.clone();
                                    k.push(v);
                                    Some(match b {
                                        Bound::Included(_) => Bound::Included(k),
                                        _ => Bound::Excluded(k),
                                    })
                                }
                            }
                        }
                    })
                };
                let (Some(lo), Some(hi)) = (bound(&r.lo)?, bound(&r.hi)?) else {
                    return Ok(None);
                };
                krs.push(KeyRange { start: lo, end: hi });
            }
            Ok(Some(Source::Ranges(iref, krs)))
        }
    }
}
