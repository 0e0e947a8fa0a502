//! Running a SELECT that has subqueries or derived tables (`plan::select::subquery`): derived
//! tables (and CTEs, unions) are materialized first; uncorrelated subqueries run once, before
//! the FROM rows are read, and their rows are kept for the statement (an `IN` builds its hash
//! set once from them); correlated subqueries run per enclosing row, with that row bound.
//!
//! A correlated subquery needs the transaction while the enclosing query evaluates its row,
//! so such a query reads its FROM rows into memory first (charged to the statement's memory
//! budget), then hands the transaction to its [`Runtime`] and runs its rows through the sink.
//!
//! Invariants: an uncorrelated subquery's rows are computed at most once per execution of
//! the plan that holds it; every materialized row is charged to the statement guard, and
//! every round of a recursive CTE checks it (KILL, max_statement_time, memory).
//!
//! Every SELECT runs through [`execute`] / [`run`] here: a plan without subqueries or
//! derived tables goes straight to `execute::select::run_with`.

use std::cell::RefCell;
use std::ops::ControlFlow;
use std::rc::Rc;

use onelog_binlog::Value;
use onelog_engine::Transaction;

use crate::error::SqlError;
use crate::execute::select::{run_with, scan, Input, RowSink};
use crate::expr::{conform, key_bytes_in, Env, Expr, RType, SubRows, Subqueries};
use crate::plan::select::subquery::{RecursivePlan, SetOp};
use crate::plan::select::{Derived, SelectPlan, SubPlan};
use onelog_engine::collation::Collation;
use std::collections::{HashMap, HashSet};

/// The subqueries of one execution of a plan.
struct Runtime<'t> {
    plans: &'t [SubPlan],
    /// Uncorrelated subqueries' rows, computed before the FROM rows are read.
    cache: Vec<Option<Rc<SubRows>>>,
    /// The transaction, once the FROM rows are read (correlated subqueries run in it).
    txn: RefCell<Option<&'t mut Transaction>>,
}

impl Subqueries for Runtime<'_> {
    fn rows(&self, id: usize, row: &[Value], env: &Env) -> Result<Rc<SubRows>, SqlError> {
        if let Some(Some(r)) = self.cache.get(id) {
            return Ok(r.clone());
        }
        let sp = self
            .plans
            .get(id)
            .ok_or_else(|| SqlError::unsupported("this subquery"))?;
        debug_assert!(
            sp.correlated,
            "an uncorrelated subquery is computed beforehand"
        );
        let mut held = self
            .txn
            .try_borrow_mut()
            .map_err(|_| SqlError::unsupported("this correlated subquery"))?;
        let Some(txn) = held.as_deref_mut() else {
            return Err(SqlError::unsupported("this correlated subquery"));
        };
        let (rows, _) = run(&sp.plan, txn, &plain(env), row)?;
        Ok(Rc::new(SubRows::new(rows)))
    }
}

/// The subqueries of a statement that changes rows while they are evaluated (INSERT's
/// VALUES and ON DUPLICATE KEY UPDATE, UPDATE's SET and ORDER BY): the transaction is lent
/// to them for one evaluation at a time ([`StmtSubqueries::with`]). An uncorrelated one runs
/// when first evaluated (or was run before the statement, `with_uncorrelated`) and its rows
/// are kept for the statement, as MariaDB evaluates such a subquery once; a correlated one
/// runs per evaluation, on the enclosing row.
pub(crate) struct StmtSubqueries<'p> {
    plans: &'p [SubPlan],
    cache: RefCell<Vec<Option<Rc<SubRows>>>>,
}

impl<'p> StmtSubqueries<'p> {
    /// The subqueries `plans`, the uncorrelated ones `env` already ran taken from it.
    pub(crate) fn new(plans: &'p [SubPlan], env: &Env) -> Result<Self, SqlError> {
        let mut cache = Vec::with_capacity(plans.len());
        for (i, sp) in plans.iter().enumerate() {
            cache.push(match env.subq {
                Some(rt) if !sp.correlated => Some(rt.rows(i, &[], env)?),
                _ => None,
            });
        }
        Ok(StmtSubqueries {
            plans,
            cache: RefCell::new(cache),
        })
    }

    /// Runs `f` with an environment (`env`'s) whose subqueries are these, `txn` lent to them.
    pub(crate) fn with<R>(
        &self,
        txn: &mut Transaction,
        env: &Env,
        f: impl FnOnce(&Env) -> Result<R, SqlError>,
    ) -> Result<R, SqlError> {
        let rt = Lent {
            subs: self,
            txn: RefCell::new(txn),
        };
        let env2 = Env {
            subq: Some(&rt),
            ..plain(env)
        };
        f(&env2)
    }
}

/// [`StmtSubqueries`] with the transaction lent for one evaluation.
struct Lent<'a, 'p> {
    subs: &'a StmtSubqueries<'p>,
    txn: RefCell<&'a mut Transaction>,
}

impl Subqueries for Lent<'_, '_> {
    fn rows(&self, id: usize, row: &[Value], env: &Env) -> Result<Rc<SubRows>, SqlError> {
        if let Some(Some(r)) = self.subs.cache.borrow().get(id) {
            return Ok(r.clone());
        }
        let sp = self
            .subs
            .plans
            .get(id)
            .ok_or_else(|| SqlError::unsupported("this subquery"))?;
        let mut txn = self
            .txn
            .try_borrow_mut()
            .map_err(|_| SqlError::unsupported("this correlated subquery"))?;
        let outer = if sp.correlated { row } else { &[] };
        let (rows, _) = run(&sp.plan, &mut txn, &plain(env), outer)?;
        let rows = Rc::new(SubRows::new(rows));
        if !sp.correlated {
            if let Some(slot) = self.subs.cache.borrow_mut().get_mut(id) {
                *slot = Some(rows.clone());
            }
        }
        Ok(rows)
    }
}

/// `env` without the enclosing plan's subqueries (a plan runs with its own).
fn plain<'a>(env: &Env<'a>) -> Env<'a> {
    Env {
        cx: env.cx,
        params: env.params,
        insert_row: env.insert_row,
        coll: env.coll,
        subq: None,
    }
}

/// The rows `filter` keeps, its correlated subqueries (of `subs`) run in `txn` per row and
/// the uncorrelated ones read from `env` (`with_uncorrelated` ran them); charged to the
/// statement's memory budget.
pub(crate) fn filter_rows(
    subs: &[SubPlan],
    rows: Vec<Vec<Value>>,
    filter: Option<&Expr>,
    txn: &mut Transaction,
    env: &Env,
) -> Result<Vec<Vec<Value>>, SqlError> {
    let Some(f) = filter else {
        return Ok(rows);
    };
    let cache = subs
        .iter()
        .enumerate()
        .map(|(i, s)| {
            if s.correlated {
                Ok(None)
            } else {
                env.subq
                    .ok_or_else(|| SqlError::unsupported("this subquery"))
                    .and_then(|rt| rt.rows(i, &[], env))
                    .map(Some)
            }
        })
        .collect::<Result<Vec<_>, SqlError>>()?;
    let rt = Runtime {
        plans: subs,
        cache,
        txn: RefCell::new(Some(txn)),
    };
    let env2 = Env {
        subq: Some(&rt),
        ..plain(env)
    };
    let mut kept = Vec::new();
    for r in rows {
        env.cx.guard.check()?;
        if f.test(&r, &[], &env2)? {
            kept.push(r);
        }
    }
    Ok(kept)
}

/// Runs `f` with an environment whose uncorrelated subqueries (of `subs`) were run first
/// (a correlated one there is run by [`filter_rows`]).
pub(crate) fn with_uncorrelated<R>(
    subs: &[SubPlan],
    txn: &mut Transaction,
    env: &Env,
    f: impl FnOnce(&mut Transaction, &Env) -> Result<R, SqlError>,
) -> Result<R, SqlError> {
    let base = plain(env);
    let mut cache = Vec::with_capacity(subs.len());
    for sp in subs {
        cache.push(if sp.correlated {
            None
        } else {
            let (rows, _) = run(&sp.plan, txn, &base, &[])?;
            Some(Rc::new(SubRows::new(rows)))
        });
    }
    let rt = Runtime {
        plans: subs,
        cache,
        txn: RefCell::new(None),
    };
    let env2 = Env {
        subq: Some(&rt),
        ..plain(env)
    };
    f(txn, &env2)
}

/// Runs a compiled SELECT; returns (rows, FOUND_ROWS()).
///
/// Single-table queries stream: each row the access path yields is filtered, projected (only
/// the projected values are copied) or folded into its group without being materialised;
/// without ORDER BY / DISTINCT / grouping the scan stops once LIMIT + OFFSET rows are out.
/// A plan with subqueries or derived tables runs here; a plain one goes straight to
/// `execute::select::run_with`.
pub(crate) fn execute(
    p: &SelectPlan,
    txn: &mut Transaction,
    env: &Env,
) -> Result<(Vec<Vec<Value>>, u64), SqlError> {
    run(p, txn, env, &[])
}

/// [`execute`] with `outer` (the enclosing row of a correlated subquery) after each row.
pub(crate) fn run(
    p: &SelectPlan,
    txn: &mut Transaction,
    env: &Env,
    outer: &[Value],
) -> Result<(Vec<Vec<Value>>, u64), SqlError> {
    if p.subqueries.is_empty() && p.derived.is_empty() {
        return run_with(p, Input::Txn(txn, &[]), env, outer);
    }
    run_nested(p, txn, env, outer)
}

/// Runs `p` (with subqueries or derived tables), each row followed by `outer`.
fn run_nested(
    p: &SelectPlan,
    txn: &mut Transaction,
    env: &Env,
    outer: &[Value],
) -> Result<(Vec<Vec<Value>>, u64), SqlError> {
    let base = plain(env);
    let mut derived = Vec::with_capacity(p.derived.len());
    for d in &p.derived {
        derived.push(match d {
            Some(d) => Some(materialize(d, txn, &base)?),
            None => None,
        });
    }
    let mut cache = Vec::with_capacity(p.subqueries.len());
    for sp in &p.subqueries {
        cache.push(if sp.correlated {
            None
        } else {
            let (rows, _) = run(&sp.plan, txn, &base, &[])?;
            Some(Rc::new(SubRows::new(rows)))
        });
    }
    let correlated = p.subqueries.iter().any(|s| s.correlated);
    let rt = Runtime {
        plans: &p.subqueries,
        cache,
        txn: RefCell::new(None),
    };
    let env2 = Env {
        subq: Some(&rt),
        ..plain(env)
    };
    if !correlated {
        return run_with(p, Input::Txn(txn, &derived), &env2, outer);
    }
    let mut c = Collect {
        filter: None,
        rows: Vec::new(),
        env: &base,
    };
    scan(p, txn, &derived, &env2, outer, &mut c)?;
    let Collect { filter, rows, .. } = c;
    *rt.txn.borrow_mut() = Some(txn);
    run_with(p, Input::Rows(rows, filter), &env2, outer)
}

/// Collects the FROM rows (charged to the statement's memory budget).
struct Collect<'p, 'e> {
    filter: Option<&'p Expr>,
    rows: Vec<Vec<Value>>,
    env: &'e Env<'e>,
}

impl<'p> RowSink<'p> for Collect<'p, '_> {
    fn set_filter(&mut self, f: Option<&'p Expr>) {
        self.filter = f;
    }
    fn row(&mut self, row: &[Value]) -> crate::plan::access::Visit {
        let guard = &self.env.cx.guard;
        guard.check()?;
        guard.charge(crate::guard::row_bytes(row))?;
        self.rows.push(row.to_vec());
        Ok(ControlFlow::Continue(()))
    }
}

/// The rows of a derived table (charged to the statement's memory budget).
fn materialize(d: &Derived, txn: &mut Transaction, env: &Env) -> Result<Vec<Vec<Value>>, SqlError> {
    let guard = &env.cx.guard;
    match d {
        Derived::Select(p) => {
            let (rows, _) = run(p, txn, env, &[])?;
            for r in &rows {
                guard.charge(crate::guard::row_bytes(r))?;
            }
            Ok(rows)
        }
        Derived::SetOp(s) => {
            let left = materialize(&s.left, txn, env)?;
            let right = materialize(&s.right, txn, env)?;
            let colls: Vec<Collation> = s.colls.iter().map(|c| c.unwrap_or(env.coll)).collect();
            set_op(s.op, s.all, left, right, &s.rtypes, &colls, env)
        }
        Derived::Recursive(r) => recursive(r, txn, env),
        Derived::Mysql(t) => {
            let rows = t.rows(env.cx);
            for r in &rows {
                guard.charge(crate::guard::row_bytes(r))?;
            }
            Ok(rows)
        }
        Derived::Info(t) => {
            let rows = t.rows(env.cx)?;
            for r in &rows {
                guard.charge(crate::guard::row_bytes(r))?;
            }
            Ok(rows)
        }
        Derived::WorkTable(slot) => WORK.with(|w| {
            w.borrow()
                .iter()
                .rev()
                .find(|(s, _)| s == slot)
                .map(|(_, rows)| rows.as_ref().clone())
                .ok_or_else(|| SqlError::unsupported("this recursive reference"))
        }),
    }
}

/// Rows shared between a recursion's rounds.
type Rows = Rc<Vec<Vec<Value>>>;

thread_local! {
    /// The rows the last round of each recursive CTE being computed added, by slot (a
    /// stack: nested computations push and pop their own).
    static WORK: RefCell<Vec<(u64, Rows)>> = const { RefCell::new(Vec::new()) };
}

/// Pops its work table when the recursion ends (an error included).
struct WorkSlot;

impl Drop for WorkSlot {
    fn drop(&mut self) {
        WORK.with(|w| {
            w.borrow_mut().pop();
        });
    }
}

/// The key of a row (its values under the columns' collations).
fn row_key(row: &[Value], colls: &[Collation], out: &mut Vec<u8>) {
    out.clear();
    for (i, v) in row.iter().enumerate() {
        let c = colls.get(i).copied().unwrap_or(Collation::DEFAULT);
        key_bytes_in(c, v, out);
    }
}

/// Values converted to the result types.
fn conform_rows(rows: &mut [Vec<Value>], rtypes: &[RType]) {
    for r in rows {
        for (v, t) in r.iter_mut().zip(rtypes) {
            *v = conform(std::mem::replace(v, Value::Null), *t);
        }
    }
}

/// `left op [ALL] right`, in the order MariaDB returns them (left's rows first, each
/// DISTINCT result's first occurrence kept).
fn set_op(
    op: SetOp,
    all: bool,
    mut left: Vec<Vec<Value>>,
    mut right: Vec<Vec<Value>>,
    rtypes: &[RType],
    colls: &[Collation],
    env: &Env,
) -> Result<Vec<Vec<Value>>, SqlError> {
    let guard = &env.cx.guard;
    conform_rows(&mut left, rtypes);
    conform_rows(&mut right, rtypes);
    let mut key = Vec::new();
    if op == SetOp::Union {
        left.append(&mut right);
        if all {
            return Ok(left);
        }
        let mut seen = HashSet::with_capacity(left.len());
        let mut stop = Ok(());
        left.retain(|r| {
            row_key(r, colls, &mut key);
            if stop.is_err() || seen.contains(&key) {
                return false;
            }
            stop = guard.charge(key.len() as u64 + 32);
            seen.insert(key.clone());
            true
        });
        stop?;
        return Ok(left);
    }
    // INTERSECT / EXCEPT: how many times each right row occurs.
    let mut counts: HashMap<Vec<u8>, usize> = HashMap::with_capacity(right.len());
    for r in &right {
        guard.check()?;
        row_key(r, colls, &mut key);
        guard.charge(key.len() as u64 + 32)?;
        *counts.entry(key.clone()).or_insert(0) += 1;
    }
    let mut emitted: HashSet<Vec<u8>> = HashSet::new();
    left.retain(|r| {
        row_key(r, colls, &mut key);
        let n = counts.get_mut(&key);
        match (op, all, n) {
            (SetOp::Intersect, true, Some(n)) if *n > 0 => {
                *n -= 1;
                true
            }
            (SetOp::Intersect, false, Some(_)) => emitted.insert(key.clone()),
            (SetOp::Intersect, ..) => false,
            (_, true, Some(n)) if *n > 0 => {
                *n -= 1;
                false
            }
            (_, true, _) => true,
            (_, false, Some(_)) => false,
            (_, false, None) => emitted.insert(key.clone()),
        }
    });
    Ok(left)
}

/// WITH RECURSIVE: the anchor's rows, then rounds of the recursive parts on the rows the
/// round before added, until one adds none or `max_recursive_iterations` rounds ran (then
/// warning 1931, as MariaDB); every round checks the statement guard.
fn recursive(
    r: &RecursivePlan,
    txn: &mut Transaction,
    env: &Env,
) -> Result<Vec<Vec<Value>>, SqlError> {
    let guard = &env.cx.guard;
    let colls: Vec<Collation> = r.colls.iter().map(|c| c.unwrap_or(env.coll)).collect();
    let max = match crate::sysvar::get_var(
        env.cx,
        "max_recursive_iterations",
        crate::sysvar::VarScope::Session,
    )? {
        Value::Int(n) => n.max(0) as u64,
        Value::UInt(n) => n,
        _ => 1000,
    };
    let mut all = materialize(&r.anchor, txn, env)?;
    conform_rows(&mut all, &r.rtypes);
    let mut seen: HashSet<Vec<u8>> = HashSet::new();
    let mut key = Vec::new();
    if r.distinct {
        all.retain(|row| {
            row_key(row, &colls, &mut key);
            seen.insert(key.clone())
        });
    }
    let mut work = Rc::new(all.clone());
    let mut rounds = 0u64;
    while !work.is_empty() {
        guard.check()?;
        if rounds >= max {
            guard.warn(
                1931,
                format!("Query execution was interrupted. The query exceeded max_recursive_iterations = {max}. The query result may be incomplete"),
            );
            break;
        }
        rounds += 1;
        WORK.with(|w| w.borrow_mut().push((r.slot, work.clone())));
        let _slot = WorkSlot;
        let mut added = Vec::new();
        for step in &r.steps {
            let mut rows = materialize(step, txn, env)?;
            conform_rows(&mut rows, &r.rtypes);
            for row in rows {
                if r.distinct {
                    row_key(&row, &colls, &mut key);
                    if !seen.insert(key.clone()) {
                        continue;
                    }
                    guard.charge(key.len() as u64 + 32)?;
                }
                guard.charge(crate::guard::row_bytes(&row))?;
                added.push(row);
            }
        }
        all.extend(added.iter().cloned());
        work = Rc::new(added);
    }
    Ok(all)
}
