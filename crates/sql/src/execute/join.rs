//! Join execution: runs a [`JoinPlan`] (`plan::join`), handing every joined row that passes
//! the join's conditions to a sink.
//!
//! Each joined table is found per partial row by its step's access: an index lookup (keys
//! computed from the partial row), a probe of a hash table built once from its rows, or a
//! loop over its rows (read once). The joined row has every FROM table at its fixed slot;
//! a step writes its table's slot, tests the step's condition, and recurses. Reaching the
//! step after an outer-join nest marks the nest matched (then tests the conditions waiting
//! for it, `Nest::after`); a nest left unmatched once its first step has tried every
//! candidate gets NULLs in all its tables and the join goes on after it.
//!
//! When no step looks rows up, the driving table streams (its scan stops when the sink says
//! so); otherwise its rows (those passing the driver's filter) are read first, since a lookup
//! needs the transaction the scan holds.
//!
//! Limits: every candidate row passes the statement guard's check, and every row kept (the
//! loaded tables, the driver's rows, a lookup's matches) is charged to its memory budget.
//!
//! Invariants: a step yields a superset of its matching rows and its whole condition is
//! tested on each (so no access changes the answer); a key that cannot be converted exactly
//! to its column's type falls back to every row of the table; NULL keys match nothing.

use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::ControlFlow;

use onelog_binlog::Value;
use onelog_engine::{IndexRef, KeyRange, LockMode, TableDef, Transaction};

use crate::error::SqlError;
use crate::expr::{key_bytes_in, Env, Expr};
use crate::plan::access::{exact_key, visit, Source, Visit};
use crate::plan::join::{hash_collation, JoinAccess, JoinPlan, JoinStep};

/// The rows of a step read before the join (a derived table's are borrowed, not copied).
enum Loaded<'d> {
    /// Looked up per partial row.
    Lookup,
    Rows(Cow<'d, [Vec<Value>]>),
    /// The rows and, per key, the positions of the rows with it.
    Hash(Cow<'d, [Vec<Value>]>, HashMap<Vec<u8>, Vec<u32>>),
}

/// A key computed from a partial row.
enum Key {
    /// A NULL part: nothing is equal to it.
    Null,
    /// Not exactly a value of its column: every row is a candidate.
    Inexact,
    Values(Vec<Value>),
}

/// Where the driving table's rows come from.
pub(crate) enum Driver<'a> {
    /// A table, read through an access path.
    Table(&'a TableDef, &'a Source),
    /// Rows the statement computed (a derived table).
    Rows(&'a [Vec<Value>]),
}

/// Runs the join of `jp` from `driver`; each joined row goes to `sink`. `derived[k]`: the rows
/// of FROM position `k` when the statement computed them; `outer`: an enclosing query's
/// values (a correlated subquery's), which follow the FROM columns while conditions and keys
/// are evaluated (the sink gets the FROM columns only).
#[allow(clippy::too_many_arguments)]
pub(crate) fn run(
    jp: &JoinPlan,
    driver: Driver<'_>,
    lock: Option<LockMode>,
    txn: &mut Transaction,
    env: &Env,
    derived: &[Option<Vec<Vec<Value>>>],
    outer: &[Value],
    sink: &mut dyn FnMut(&[Value]) -> Visit,
) -> Result<(), SqlError> {
    let guard = &env.cx.guard;
    let mut loaded = Vec::with_capacity(jp.steps.len());
    for s in &jp.steps {
        let mem = derived.get(s.position).and_then(|d| d.as_deref());
        loaded.push(load(s, mem, lock, txn, env)?);
    }
    let lookups = loaded.iter().any(|l| matches!(l, Loaded::Lookup));
    let width = jp.width;
    let mut row = vec![Value::Null; width];
    row.extend_from_slice(outer);
    let off = jp.driver_offset;
    let j = Joiner {
        jp,
        loaded: &loaded,
        lock,
        env,
        width,
        matched: vec![std::cell::Cell::new(false); jp.nests.len()],
    };
    let mut each =
        |j: &Joiner, t: &mut Option<&mut Transaction>, row: &mut [Value], r: &[Value]| {
            guard.check()?;
            row[off..off + r.len()].clone_from_slice(r);
            if !j.driver_passes(row)? {
                return Ok(ControlFlow::Continue(()));
            }
            j.step(t, row, 0, sink)
        };
    let (def, src) = match driver {
        Driver::Rows(rows) => {
            let mut t = Some(txn);
            for r in rows {
                if each(&j, &mut t, &mut row, r)?.is_break() {
                    break;
                }
            }
            return Ok(());
        }
        Driver::Table(def, src) => (def, src),
    };
    if !lookups {
        // Nothing needs the transaction inside the loops: the driver streams.
        let mut none: Option<&mut Transaction> = None;
        return visit(txn, def, src, lock, &mut |r| {
            each(&j, &mut none, &mut row, r)
        });
    }
    let w = def.columns.len();
    let mut rows = Vec::new();
    visit(txn, def, src, lock, &mut |r| {
        guard.check()?;
        row[off..off + w].clone_from_slice(r);
        if j.driver_passes(&row)? {
            guard.charge(crate::guard::row_bytes(r))?;
            rows.push(r.to_vec());
        }
        Ok(ControlFlow::Continue(()))
    })?;
    let mut t = Some(txn);
    for r in rows {
        row[off..off + w].clone_from_slice(&r);
        if j.step(&mut t, &mut row, 0, sink)?.is_break() {
            break;
        }
    }
    Ok(())
}

/// Reads a Loop or Hash step's rows (charged to the statement's memory budget).
fn load<'d>(
    s: &JoinStep,
    mem: Option<&'d [Vec<Value>]>,
    lock: Option<LockMode>,
    txn: &mut Transaction,
    env: &Env,
) -> Result<Loaded<'d>, SqlError> {
    if matches!(s.access, JoinAccess::Lookup { .. }) {
        debug_assert!(mem.is_none(), "no lookups in computed rows");
        return Ok(Loaded::Lookup);
    }
    let guard = &env.cx.guard;
    let rows: Cow<'d, [Vec<Value>]> = match mem {
        // Already charged when the statement computed them.
        Some(m) => Cow::Borrowed(m),
        None => {
            let mut rows = Vec::new();
            visit(txn, &s.table, &Source::Full, lock, &mut |row| {
                guard.check()?;
                guard.charge(crate::guard::row_bytes(row))?;
                rows.push(row.to_vec());
                Ok(ControlFlow::Continue(()))
            })?;
            Cow::Owned(rows)
        }
    };
    let JoinAccess::Hash { cols, .. } = &s.access else {
        return Ok(Loaded::Rows(rows));
    };
    let mut index: HashMap<Vec<u8>, Vec<u32>> = HashMap::new();
    let mut key = Vec::new();
    'rows: for (i, r) in rows.iter().enumerate() {
        key.clear();
        for &c in cols {
            if r[c] == Value::Null {
                continue 'rows;
            }
            key_bytes_in(hash_collation(&s.table, c), &r[c], &mut key);
        }
        guard.charge(key.len() as u64 + 16)?;
        index.entry(key.clone()).or_default().push(i as u32);
    }
    Ok(Loaded::Hash(rows, index))
}

struct Joiner<'a> {
    jp: &'a JoinPlan,
    loaded: &'a [Loaded<'a>],
    lock: Option<LockMode>,
    env: &'a Env<'a>,
    /// The FROM columns' width: what the sink gets of the row.
    width: usize,
    /// Per nest: a row of it reached the step after it (for the partial row being joined).
    matched: Vec<std::cell::Cell<bool>>,
}

impl Joiner<'_> {
    fn driver_passes(&self, row: &[Value]) -> Result<bool, SqlError> {
        match &self.jp.driver_filter {
            Some(f) => f.test(row, &[], self.env),
            None => Ok(true),
        }
    }

    /// The key of `keys` (for `cols` of `def`) on the partial row.
    fn key(
        &self,
        def: &TableDef,
        cols: &[usize],
        keys: &[Expr],
        row: &[Value],
    ) -> Result<Key, SqlError> {
        let mut out = Vec::with_capacity(keys.len());
        for (e, &c) in keys.iter().zip(cols) {
            let v = e.eval(row, self.env)?;
            if v == Value::Null {
                return Ok(Key::Null);
            }
            match exact_key(def, c, v) {
                Some(k) => out.push(k),
                None => return Ok(Key::Inexact),
            }
        }
        Ok(Key::Values(out))
    }

    /// Joins step `k` onwards to the partial row `row`.
    fn step(
        &self,
        txn: &mut Option<&mut Transaction>,
        row: &mut [Value],
        k: usize,
        sink: &mut dyn FnMut(&[Value]) -> Visit,
    ) -> Visit {
        let Some(s) = self.jp.steps.get(k) else {
            return sink(&row[..self.width]);
        };
        let guard = &self.env.cx.guard;
        let (off, w) = (s.offset, s.table.columns.len());
        if let Some(n) = s.opens {
            self.matched[n].set(false);
        }
        let mut each = |this: &Self,
                        txn: &mut Option<&mut Transaction>,
                        row: &mut [Value],
                        r: &[Value]|
         -> Visit {
            guard.check()?;
            row[off..off + w].clone_from_slice(r);
            if let Some(on) = &s.on {
                if !on.test(row, &[], this.env)? {
                    return Ok(ControlFlow::Continue(()));
                }
            }
            this.arrive(txn, row, k + 1, 0, sink)
        };
        let flow = match (&self.loaded[k], &s.access) {
            (Loaded::Rows(rows), _) => {
                each_of(rows.iter().map(|r| &r[..]), |r| each(self, txn, row, r))?
            }
            (Loaded::Hash(rows, index), JoinAccess::Hash { cols, keys }) => {
                match self.key(&s.table, cols, keys, row)? {
                    Key::Null => ControlFlow::Continue(()),
                    Key::Inexact => {
                        each_of(rows.iter().map(|r| &r[..]), |r| each(self, txn, row, r))?
                    }
                    Key::Values(vals) => {
                        let mut kb = Vec::new();
                        for (v, &c) in vals.iter().zip(cols) {
                            key_bytes_in(hash_collation(&s.table, c), v, &mut kb);
                        }
                        let hits = index.get(&kb).map_or(&[][..], |v| &v[..]);
                        each_of(hits.iter().map(|&i| &rows[i as usize][..]), |r| {
                            each(self, txn, row, r)
                        })?
                    }
                }
            }
            (Loaded::Lookup, JoinAccess::Lookup { index, keys }) => {
                let Some(src) = self.lookup_source(s, *index, keys, row)? else {
                    return self.unmatched(s, txn, row, sink);
                };
                let Some(t) = txn.as_deref_mut() else {
                    debug_assert!(false, "lookups run with the transaction");
                    return Err(SqlError::unsupported("this join"));
                };
                if self.lookups_after(k) {
                    // A later step needs the transaction: the matches are copied first.
                    let mut found = Vec::new();
                    let mut bytes = 0;
                    let read = visit(t, &s.table, &src, self.lock, &mut |r| {
                        guard.check()?;
                        let b = crate::guard::row_bytes(r);
                        guard.charge(b)?;
                        bytes += b;
                        found.push(r.to_vec());
                        Ok(ControlFlow::Continue(()))
                    });
                    let flow = read.and_then(|_| {
                        each_of(found.iter().map(|r| &r[..]), |r| each(self, txn, row, r))
                    });
                    guard.release(bytes);
                    flow?
                } else {
                    // The last lookup: its matches join as the index yields them.
                    let mut none = None;
                    let mut flow = ControlFlow::Continue(());
                    visit(t, &s.table, &src, self.lock, &mut |r| {
                        flow = each(self, &mut none, row, r)?;
                        Ok(flow)
                    })?;
                    flow
                }
            }
            _ => {
                debug_assert!(false, "a step's loaded rows match its access");
                return Err(SqlError::unsupported("this join"));
            }
        };
        if flow.is_break() {
            return Ok(ControlFlow::Break(()));
        }
        self.unmatched(s, txn, row, sink)
    }

    /// Arrives at step `k` (or the complete row): the nests closing before it, from the
    /// `skip`-th innermost on, are matched and their waiting conditions tested.
    fn arrive(
        &self,
        txn: &mut Option<&mut Transaction>,
        row: &mut [Value],
        k: usize,
        skip: usize,
        sink: &mut dyn FnMut(&[Value]) -> Visit,
    ) -> Visit {
        for &n in self.jp.closing[k].iter().skip(skip) {
            self.matched[n].set(true);
            if let Some(c) = &self.jp.nests[n].after {
                if !c.test(row, &[], self.env)? {
                    return Ok(ControlFlow::Continue(()));
                }
            }
        }
        self.step(txn, row, k, sink)
    }

    /// After the candidates of step `s`: a nest it opens that matched nothing gets NULLs in
    /// all its tables, and the join goes on after it.
    fn unmatched(
        &self,
        s: &JoinStep,
        txn: &mut Option<&mut Transaction>,
        row: &mut [Value],
        sink: &mut dyn FnMut(&[Value]) -> Visit,
    ) -> Visit {
        let Some(n) = s.opens else {
            return Ok(ControlFlow::Continue(()));
        };
        if self.matched[n].get() {
            return Ok(ControlFlow::Continue(()));
        }
        let nest = &self.jp.nests[n];
        for t in &self.jp.steps[nest.first..=nest.last] {
            row[t.offset..t.offset + t.table.columns.len()].fill(Value::Null);
        }
        let next = nest.last + 1;
        // The nests closing with it inside it are skipped: their conditions are its own.
        let skip = self.jp.closing[next]
            .iter()
            .position(|&x| x == n)
            .unwrap_or(0);
        self.arrive(txn, row, next, skip, sink)
    }

    /// Whether a step after `k` looks rows up (and so needs the transaction).
    fn lookups_after(&self, k: usize) -> bool {
        self.loaded[k + 1..]
            .iter()
            .any(|l| matches!(l, Loaded::Lookup))
    }

    /// Where step `s`'s rows whose `index` key starts with `keys` on the partial row are
    /// (every row when a key is not exactly a value of its column); None: no row (a NULL key).
    fn lookup_source(
        &self,
        s: &JoinStep,
        index: Option<usize>,
        keys: &[Expr],
        row: &[Value],
    ) -> Result<Option<Source>, SqlError> {
        let def = &s.table;
        let cols: &[usize] = match index {
            None => &def.primary_key,
            Some(i) => &def.indexes[i].columns,
        };
        Ok(match self.key(def, cols, keys, row)? {
            Key::Null => None,
            Key::Inexact => Some(Source::Full),
            Key::Values(vals) if index.is_none() && vals.len() == cols.len() => {
                Some(Source::Point(vals))
            }
            Key::Values(vals) => {
                let iref = match index {
                    None => IndexRef::Primary,
                    Some(i) => IndexRef::Secondary(def.indexes[i].name.clone()),
                };
                Some(Source::Ranges(iref, vec![KeyRange::prefix(vals)]))
            }
        })
    }
}

/// Calls `f` on each row until it answers Break.
fn each_of<'r>(
    rows: impl Iterator<Item = &'r [Value]>,
    mut f: impl FnMut(&'r [Value]) -> Visit,
) -> Visit {
    for r in rows {
        if f(r)?.is_break() {
            return Ok(ControlFlow::Break(()));
        }
    }
    Ok(ControlFlow::Continue(()))
}
