//! Multi-table UPDATE and DELETE execution (plans from `plan::multi_dml`).
//!
//! The join runs first, with exclusive row locks on every row it reads, and each target
//! table's rows are gathered once each (a row several joined rows match is changed once, from
//! the first of them, as MariaDB does). UPDATE evaluates the SET list in order on the joined
//! row, a later assignment seeing the values earlier ones gave to the same table (the other
//! tables' values stay as read); then every gathered row is
//! written (UPDATE: only when a value changed, with ON UPDATE CURRENT_TIMESTAMP) through the
//! same transaction calls as single-table statements, with the same foreign key and CHECK
//! constraint checks (`execute::fk`, `execute::check`).
//!
//! Limits: every gathered row is charged to the statement's memory budget.
//!
//! Invariants: each target row is written at most once per statement; `Rows matched` counts
//! distinct target rows, `Changed` those written.

use std::collections::HashSet;
use std::ops::ControlFlow;

use onelog_binlog::Value;
use onelog_engine::LockMode;
use onelog_engine::Transaction;

use crate::error::SqlError;
use crate::expr::{sort_cmp_in, Env};
use crate::plan::access::{resolve, Source};
use crate::plan::multi_dml::MultiPlan;

use super::dml::{coerce_col, limit_of, pk_of, touch_on_update, DmlResult};
use super::join::Driver;
use super::{check, fk};

/// The rows gathered for one target table: (primary key, the row as read, the new row).
type Gathered = Vec<(Vec<Value>, Vec<Value>, Vec<Value>)>;

pub(crate) fn execute_multi(
    p: &MultiPlan,
    txn: &mut Transaction,
    env: &Env,
) -> Result<DmlResult, SqlError> {
    if !p.subqueries.is_empty() && env.subq.is_none() {
        return crate::execute::subquery::with_uncorrelated(&p.subqueries, txn, env, |t, e| {
            execute_multi(p, t, e)
        });
    }
    let guard = &env.cx.guard;
    let mut gathered: Vec<Gathered> = vec![Vec::new(); p.targets.len()];
    let mut seen: Vec<HashSet<Vec<u8>>> = vec![HashSet::new(); p.targets.len()];
    let offsets: Vec<usize> = (0..p.tables.len()).map(|k| p.offset(k)).collect();
    let src = match p.join.driver {
        0 => resolve(&p.tables[0], &p.first, env)?.0,
        _ => Source::Full,
    };
    let driver = Driver::Table(&p.join.driver_table, &src);
    let limit = limit_of(&p.limit, env)?;
    let mut g = Gather {
        p,
        offsets,
        gathered: &mut gathered,
        seen: &mut seen,
        work: Vec::new(),
        row_no: 0,
        limit,
    };
    // Without ORDER BY the joined rows are gathered as they come; with it, they are sorted
    // first (charged to the statement's budget).
    let mut sorted: Vec<(Vec<Value>, Vec<Value>)> = Vec::new();
    // Correlated subqueries run in the transaction: the joined rows are read into memory
    // first (charged to the statement's budget), then taken one by one with it lent.
    let subs = match p.subqueries.iter().any(|s| s.correlated) {
        true => Some(crate::execute::subquery::StmtSubqueries::new(
            &p.subqueries,
            env,
        )?),
        false => None,
    };
    let mut joined: Vec<Vec<Value>> = Vec::new();
    super::join::run(
        &p.join,
        driver,
        Some(LockMode::Exclusive),
        txn,
        env,
        &[],
        &[],
        &mut |row| {
            if subs.is_none() {
                return take_row(p, &mut g, &mut sorted, row, env);
            }
            guard.check()?;
            guard.charge(crate::guard::row_bytes(row))?;
            joined.push(row.to_vec());
            Ok(ControlFlow::Continue(()))
        },
    )?;
    if let Some(subs) = &subs {
        for row in &joined {
            let r = subs.with(txn, env, |e| take_row(p, &mut g, &mut sorted, row, e))?;
            if r.is_break() {
                break;
            }
        }
    }
    if !p.order_by.is_empty() {
        sorted.sort_by(|a, b| {
            for (i, (_, desc)) in p.order_by.iter().enumerate() {
                let o = sort_cmp_in(env.coll, &a.0[i], &b.0[i]);
                let o = if *desc { o.reverse() } else { o };
                if o.is_ne() {
                    return o;
                }
            }
            std::cmp::Ordering::Equal
        });
        for (_, row) in &sorted {
            let r = match &subs {
                Some(subs) => subs.with(txn, env, |e| g.row(row, e))?,
                None => g.row(row, env)?,
            };
            if r.is_break() {
                break;
            }
        }
    }
    let (mut matched, mut changed) = (0u64, 0u64);
    for (t, &k) in p.targets.iter().enumerate() {
        let def = &*p.tables[k];
        // Foreign keys and CHECK constraints as a single-table statement checks them.
        let fks = fk::involved(env.cx, txn, def);
        let checks = if p.delete {
            None
        } else {
            check::compile(env.cx, def)?
        };
        for (n, (pk, old, mut new)) in (1u64..).zip(std::mem::take(&mut gathered[t])) {
            guard.check()?;
            matched += 1;
            if p.delete {
                if fks {
                    fk::check_parent_row(env.cx, txn, def, &old, None)?;
                }
                if txn.delete(def.id, &pk)? {
                    changed += 1;
                }
                continue;
            }
            if new != old {
                let set = |c: usize| p.assignments.iter().any(|(kk, a, _)| *kk == k && *a == c);
                touch_on_update(def, set, &mut new, env, n)?;
                if let Some(c) = &checks {
                    check::check_row(c, def, &new, env)?;
                }
                if fks {
                    fk::check_parent_row(env.cx, txn, def, &old, Some(&new))?;
                    fk::check_child_row(env.cx, txn, def, &new, Some(&old))?;
                }
                txn.update(def.id, &pk, new)?;
                changed += 1;
            }
        }
    }
    Ok(DmlResult {
        affected: changed,
        last_insert_id: None,
        info: if p.delete {
            String::new()
        } else {
            format!("Rows matched: {matched}  Changed: {changed}  Warnings: 0")
        },
        warnings: Vec::new(),
        returned: None,
    })
}

/// One joined row: tested against the WHERE, then gathered (or, with ORDER BY, kept with
/// its sort keys).
fn take_row(
    p: &MultiPlan,
    g: &mut Gather,
    sorted: &mut Vec<(Vec<Value>, Vec<Value>)>,
    row: &[Value],
    env: &Env,
) -> crate::plan::access::Visit {
    let guard = &env.cx.guard;
    guard.check()?;
    if let Some(f) = &p.join.filter {
        if !f.test(row, &[], env)? {
            return Ok(ControlFlow::Continue(()));
        }
    }
    if p.order_by.is_empty() {
        return g.row(row, env);
    }
    let mut keys = Vec::with_capacity(p.order_by.len());
    for (e, _) in &p.order_by {
        keys.push(e.eval(row, env)?);
    }
    guard.charge(crate::guard::row_bytes(row) + crate::guard::row_bytes(&keys))?;
    sorted.push((keys, row.to_vec()));
    Ok(ControlFlow::Continue(()))
}

/// Gathers the target rows of joined rows, each target row once.
struct Gather<'a> {
    p: &'a MultiPlan,
    offsets: Vec<usize>,
    gathered: &'a mut [Gathered],
    seen: &'a mut [HashSet<Vec<u8>>],
    /// The joined row, with the values assigned so far to the table being gathered.
    work: Vec<Value>,
    row_no: u64,
    /// LIMIT: stop once this many target rows are gathered.
    limit: Option<u64>,
}

impl Gather<'_> {
    fn row(&mut self, row: &[Value], env: &Env) -> crate::plan::access::Visit {
        let p = self.p;
        if self.limit.is_some_and(|l| self.row_no >= l) {
            return Ok(ControlFlow::Break(()));
        }
        for (t, &k) in p.targets.iter().enumerate() {
            // Each table's assignments see the values its earlier assignments gave, and the
            // other tables' values as read (as MariaDB: `SET a.x = a.x + 1, b.y = a.x` gives
            // b.y the old a.x).
            self.work.clear();
            self.work.extend_from_slice(row);
            let def = &p.tables[k];
            let (off, w) = (self.offsets[k], def.columns.len());
            let old = &row[off..off + w];
            let extended = match def.primary_key.is_empty() {
                true => old.iter().all(|v| *v == Value::Null),
                false => def.primary_key.iter().any(|&c| old[c] == Value::Null),
            };
            if extended {
                // A NULL-extended row of an outer join: nothing to change.
                continue;
            }
            let key = onelog_engine::store::pk_key(def, old);
            if self.seen[t].contains(&key) {
                continue;
            }
            self.row_no += 1;
            let mut new = old.to_vec();
            for (kk, col, e) in &p.assignments {
                if *kk == k {
                    let v = e.eval(&self.work, env)?;
                    let v = coerce_col(def, *col, v, env, self.row_no)?;
                    self.work[off + col] = v.clone();
                    new[*col] = v;
                }
            }
            if let (Some(c), Some(vt), true) = (&p.check, &p.view, new != old) {
                // The CHECK OPTION of the join view written through, on the joined row
                // with the new values.
                if !c.test(&self.work, &[], env)? {
                    return Err(vt.check_failed());
                }
            }
            env.cx
                .guard
                .charge(crate::guard::row_bytes(old) * 2 + key.len() as u64)?;
            self.seen[t].insert(key);
            self.gathered[t].push((pk_of(def, old), old.to_vec(), new));
        }
        Ok(ControlFlow::Continue(()))
    }
}
