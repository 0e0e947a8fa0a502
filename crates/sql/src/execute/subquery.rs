//! Running a SELECT that has subqueries or derived tables (`plan::subquery`): derived
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
//! Called by `execute::select::run`.

use std::cell::RefCell;
use std::ops::ControlFlow;
use std::rc::Rc;

use onelog_binlog::Value;
use onelog_engine::Transaction;

use crate::error::SqlError;
use crate::execute::select::{run as run_select, run_with, scan, Input, RowSink};
use crate::expr::{Env, Expr, SubRows, Subqueries};
use crate::plan::select::{Derived, SelectPlan, SubPlan};

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
        let (rows, _) = run_select(&sp.plan, txn, &plain(env), row)?;
        Ok(Rc::new(SubRows::new(rows)))
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

/// Runs `p` (with subqueries or derived tables), each row followed by `outer`.
pub(crate) fn run(
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
            let (rows, _) = run_select(&sp.plan, txn, &base, &[])?;
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
    scan(p, txn, &derived, &env2, &mut c)?;
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
    match d {
        Derived::Select(p) => {
            let (rows, _) = run_select(p, txn, env, &[])?;
            let guard = &env.cx.guard;
            for r in &rows {
                guard.charge(crate::guard::row_bytes(r))?;
            }
            Ok(rows)
        }
    }
}
