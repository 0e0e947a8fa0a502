//! Window functions, executed: once a SELECT's output rows are collected (after WHERE,
//! GROUP BY and HAVING), [`compute`] fills each window call's projection slot. Every row
//! carries the window inputs (partition keys, order keys, aggregate argument: see
//! [`push_inputs`]) after its ORDER BY key slots; each window sorts the row indexes by
//! (partition, order) under the keys' collations, walks the partitions and computes
//! ROW_NUMBER, RANK, DENSE_RANK, NTILE, PERCENT_RANK, CUME_DIST, the value functions (LAG,
//! LEAD, FIRST_VALUE, LAST_VALUE, NTH_VALUE) or an aggregate over the frame. The inputs are dropped after.
//!
//! A RANGE frame with an offset bound finds each row's frame by binary search on the sorted
//! key (`range_frames`).
//!
//! Invariants: a row's input values follow its `nkeys` ORDER BY key slots, window by window
//! in projection order (`inputs_of` values each); frames are clamped to the partition.
//! Limits: sort comparisons pass the statement guard; the index vectors are charged to it.
//! Called by `execute::select` (its Sink and `run_with`), which supplies the aggregate state.

use crate::error::SqlError;
use crate::expr::{conform, sort_cmp_in, AggSpec, CollRef, Env, Expr, RType, WinCall, WinFunc};
use onelog_binlog::Value;
use onelog_engine::collation::Collation;
use std::cmp::Ordering;

/// An aggregate's running state over a frame (`execute::select`'s group state).
pub(crate) trait Accumulator: Clone {
    fn fresh(spec: &[AggSpec]) -> Self;
    fn add_row(
        &mut self,
        spec: &[AggSpec],
        colls: &[CollRef],
        row: &[Value],
        env: &Env,
    ) -> Result<(), SqlError>;
    fn value(self, spec: &[AggSpec], env: &Env) -> Result<Value, SqlError>;
}

/// The window calls of a plan's projections: (projection position, call).
pub(crate) fn calls(projections: &[Expr]) -> impl Iterator<Item = (usize, &WinCall)> {
    projections.iter().enumerate().filter_map(|(i, x)| match x {
        Expr::Win(w) => Some((i, &**w)),
        _ => None,
    })
}

/// How many input values a row carries for `w`.
fn inputs_of(w: &WinCall) -> usize {
    let arg = matches!(&w.func, WinFunc::Agg(a) if a.arg.is_some());
    w.partition.len() + w.order.len() + usize::from(arg) + w.args.len()
}

/// Appends a row's window inputs to `keys`, each evaluated by `eval`.
pub(crate) fn push_inputs(
    projections: &[Expr],
    keys: &mut Vec<Value>,
    eval: &mut dyn FnMut(&Expr) -> Result<Value, SqlError>,
) -> Result<(), SqlError> {
    for (_, w) in calls(projections) {
        for x in &w.partition {
            keys.push(eval(x)?);
        }
        for (x, _) in &w.order {
            keys.push(eval(x)?);
        }
        if let WinFunc::Agg(AggSpec { arg: Some(a), .. }) = &w.func {
            keys.push(eval(a)?);
        }
        for x in &w.args {
            keys.push(eval(x)?);
        }
    }
    Ok(())
}

/// Fills the window projections of `out` (rows: (key slots, projected values)); `nkeys`:
/// the ORDER BY key slots before the window inputs, which are removed after. `reorder` (no
/// ORDER BY follows): the rows are left in the last window's (partition, order) order, as
/// MariaDB sends them.
pub(crate) fn compute<A: Accumulator>(
    out: &mut Vec<(Vec<Value>, Vec<Value>)>,
    projections: &[Expr],
    rtypes: &[RType],
    (nkeys, reorder): (usize, bool),
    env: &Env,
) -> Result<(), SqlError> {
    let guard = &env.cx.guard;
    let mut at = nkeys;
    let mut last = Vec::new();
    for (pos, w) in calls(projections) {
        // The sorted indexes, the peer bounds and the values of this window.
        guard.charge(56 * out.len() as u64)?;
        let n = inputs_of(w);
        let colls: Vec<Collation> = w.colls.iter().map(|c| c.resolve(env.coll)).collect();
        let order = sorted(out, w, at, &colls, env)?;
        let values = one_window::<A>(out, w, at, &order, &colls, env)?;
        for (&i, v) in order.iter().zip(values) {
            debug_assert!(pos < out[i].1.len(), "a window call is a projection");
            out[i].1[pos] = conform(v, rtypes[pos]);
        }
        at += n;
        last = order;
    }
    for (keys, _) in out.iter_mut() {
        debug_assert_eq!(keys.len(), at, "every row carries every window's inputs");
        keys.truncate(nkeys);
    }
    if reorder && !last.is_empty() {
        debug_assert_eq!(
            last.len(),
            out.len(),
            "the order is a permutation of the rows"
        );
        let mut rows: Vec<Option<(Vec<Value>, Vec<Value>)>> = out.drain(..).map(Some).collect();
        out.extend(last.iter().filter_map(|&i| rows[i].take()));
    }
    Ok(())
}

/// The row indexes sorted by (partition keys, order keys); stable (ties keep row order).
fn sorted(
    out: &[(Vec<Value>, Vec<Value>)],
    w: &WinCall,
    at: usize,
    colls: &[Collation],
    env: &Env,
) -> Result<Vec<usize>, SqlError> {
    let guard = &env.cx.guard;
    let np = w.partition.len();
    let mut order: Vec<usize> = (0..out.len()).collect();
    let mut stop: Option<SqlError> = None;
    order.sort_by(|&a, &b| {
        if stop.is_some() {
            return Ordering::Equal;
        }
        if let Err(e) = guard.check() {
            stop = Some(e);
            return Ordering::Equal;
        }
        for (k, c) in colls.iter().enumerate() {
            let o = sort_cmp_in(*c, &out[a].0[at + k], &out[b].0[at + k]);
            let o = if k >= np && w.order[k - np].1 {
                o.reverse()
            } else {
                o
            };
            if o != Ordering::Equal {
                return o;
            }
        }
        Ordering::Equal
    });
    match stop {
        Some(e) => Err(e),
        None => Ok(order),
    }
}

/// Whether rows `a` and `b` agree on the input keys `from..to` (relative to `at`).
fn same(
    out: &[(Vec<Value>, Vec<Value>)],
    at: usize,
    colls: &[Collation],
    (from, to): (usize, usize),
    a: usize,
    b: usize,
) -> bool {
    (from..to).all(|k| sort_cmp_in(colls[k], &out[a].0[at + k], &out[b].0[at + k]).is_eq())
}

/// The value of `w` for each row, in `order`.
fn one_window<A: Accumulator>(
    out: &[(Vec<Value>, Vec<Value>)],
    w: &WinCall,
    at: usize,
    order: &[usize],
    colls: &[Collation],
    env: &Env,
) -> Result<Vec<Value>, SqlError> {
    let (np, nk) = (w.partition.len(), colls.len());
    let mut values = Vec::with_capacity(order.len());
    let mut start = 0;
    while start < order.len() {
        env.cx.guard.check()?;
        let mut end = start + 1;
        while end < order.len() && same(out, at, colls, (0, np), order[start], order[end]) {
            end += 1;
        }
        // Peer groups: rows agreeing on the order keys (all rows, without ORDER BY).
        let mut peer_start = vec![start; end - start];
        let mut peer_end = vec![end; end - start];
        let mut g = start;
        for k in start + 1..=end {
            if k == end || !same(out, at, colls, (np, nk), order[k - 1], order[k]) {
                for j in g..k {
                    peer_start[j - start] = g;
                    peer_end[j - start] = k;
                }
                g = k;
            }
        }
        let mut part = Partition {
            start,
            end,
            peer_start: &peer_start,
            peer_end: &peer_end,
            range: None,
        };
        let range;
        if w.range.iter().any(Option::is_some) {
            range = range_frames(out, w, at + np, order, &part)?;
            part.range = Some(&range);
        }
        match &w.func {
            WinFunc::Agg(spec) => {
                aggregate::<A>(out, w, spec, at + nk, order, &part, env, &mut values)?
            }
            WinFunc::NthValue => {
                let input = |k: usize, i: usize| &out[order[k]].0[at + nk + i];
                values.extend((start..end).map(|k| {
                    let (lo, hi) = frame_of(w, &part, k);
                    // MariaDB reads a NULL n as 1 (measured).
                    let n = crate::expr::to_i128(input(k, 1)).unwrap_or(1);
                    match usize::try_from(n - 1) {
                        Ok(off) if off < hi - lo => input(lo + off, 0).clone(),
                        _ => Value::Null,
                    }
                }));
            }
            WinFunc::Lag(_) | WinFunc::Lead(_) | WinFunc::FirstValue | WinFunc::LastValue => {
                let arg = |k: usize| out[order[k]].0[at + nk].clone();
                values.extend((start..end).map(|k| match pick(w, &part, k) {
                    Some(j) => arg(j),
                    None => Value::Null,
                }));
            }
            f => ranks(f, &part, &mut values),
        }
        start = end;
    }
    Ok(values)
}

/// One partition of the sorted rows: positions `start..end` of the order, and the peer group
/// bounds of each (indexed from `start`).
struct Partition<'a> {
    start: usize,
    end: usize,
    peer_start: &'a [usize],
    peer_end: &'a [usize],
    /// A RANGE frame with an offset bound: each row's frame (indexed from `start`).
    range: Option<&'a [(usize, usize)]>,
}

/// The frame of each row of partition `p` under a RANGE frame with an offset bound
/// (`WinCall::range`), over the one numeric ORDER BY key at input slot `key_at`: the rows
/// whose key is within the offsets of the row's key (NULL keys never are); a row with a NULL
/// key reads its peers (the NULL rows) for an offset bound, as MariaDB.
fn range_frames(
    out: &[(Vec<Value>, Vec<Value>)],
    w: &WinCall,
    key_at: usize,
    order: &[usize],
    p: &Partition,
) -> Result<Vec<(usize, usize)>, SqlError> {
    use crate::expr::{binary_values, compare, BinOp};
    let key = |j: usize| &out[order[j]].0[key_at];
    let desc = w.order.first().is_some_and(|(_, d)| *d);
    // The rows with a key: contiguous (NULLs sort first ascending, last descending).
    let keyed: Vec<usize> = (p.start..p.end)
        .filter(|&j| !matches!(key(j), Value::Null))
        .collect();
    debug_assert!(
        keyed.windows(2).all(|x| x[1] == x[0] + 1),
        "NULL keys are together"
    );
    // Where the rows whose key is past `target` begin (`inclusive`: the target's own too).
    let past = |target: &Value, inclusive: bool| -> usize {
        let n = keyed.partition_point(|&j| {
            let o = compare(key(j), target).unwrap_or(std::cmp::Ordering::Less);
            let o = if desc { o.reverse() } else { o };
            if inclusive {
                o.is_lt()
            } else {
                o.is_le()
            }
        });
        keyed
            .get(n)
            .copied()
            .unwrap_or_else(|| keyed.last().map_or(p.end, |l| l + 1))
    };
    let mut frames = Vec::with_capacity(p.end - p.start);
    for k in p.start..p.end {
        let i = k - p.start;
        let v = key(k);
        let shifted = |(off, preceding): &(Value, bool)| -> Result<Value, SqlError> {
            // PRECEDING: toward the start of the order (smaller keys ascending).
            let op = if *preceding != desc {
                BinOp::Sub
            } else {
                BinOp::Add
            };
            binary_values(op, v, off)
        };
        let lo = match (&w.range[0], w.frame.start) {
            (Some(_), _) if matches!(v, Value::Null) => p.peer_start[i],
            (Some(b), _) => past(&shifted(b)?, true),
            (None, None) => p.start,
            (None, Some(_)) => p.peer_start[i],
        };
        let hi = match (&w.range[1], w.frame.end) {
            (Some(_), _) if matches!(v, Value::Null) => p.peer_end[i],
            (Some(b), _) => past(&shifted(b)?, false),
            (None, None) => p.end,
            (None, Some(_)) => p.peer_end[i],
        };
        frames.push((lo, hi.max(lo)));
    }
    Ok(frames)
}

/// The sorted position whose value LAG, LEAD, FIRST_VALUE or LAST_VALUE gives at `k`.
fn pick(w: &WinCall, p: &Partition, k: usize) -> Option<usize> {
    let inside = |j: i64| (j >= p.start as i64 && j < p.end as i64).then_some(j as usize);
    match w.func {
        WinFunc::Lag(n) => inside((k as i64).saturating_sub(n)),
        WinFunc::Lead(n) => inside((k as i64).saturating_add(n)),
        WinFunc::FirstValue => {
            let (lo, hi) = frame_of(w, p, k);
            (lo < hi).then_some(lo)
        }
        _ => {
            let (lo, hi) = frame_of(w, p, k);
            (lo < hi).then(|| hi - 1)
        }
    }
}

fn ranks(f: &WinFunc, p: &Partition, values: &mut Vec<Value>) {
    let rows = (p.end - p.start) as i64;
    if let WinFunc::Ntile(n) = *f {
        // MariaDB's split: `rows / n` rows a bucket, the first `rows % n` one more.
        let (q, r) = (rows / n, rows % n);
        for i in 0..rows {
            let big = r * (q + 1);
            let b = if i < big {
                i / (q + 1)
            } else {
                r + (i - big) / q.max(1)
            };
            values.push(Value::Int(b + 1));
        }
        return;
    }
    if matches!(f, WinFunc::PercentRank | WinFunc::CumeDist) {
        for k in p.start..p.end {
            let v = if matches!(f, WinFunc::CumeDist) {
                (p.peer_end[k - p.start] - p.start) as f64 / rows as f64
            } else if rows > 1 {
                (p.peer_start[k - p.start] - p.start) as f64 / (rows - 1) as f64
            } else {
                0.0
            };
            values.push(Value::Double(v));
        }
        return;
    }
    let mut dense = 0i64;
    for k in p.start..p.end {
        let ps = p.peer_start[k - p.start];
        if ps == k {
            dense += 1;
        }
        let v = match f {
            WinFunc::RowNumber => k - p.start + 1,
            WinFunc::Rank => ps - p.start + 1,
            _ => dense as usize,
        };
        values.push(Value::Int(v as i64));
    }
}

/// An aggregate over each row's frame: grown incrementally while the frame's start stays and
/// its end does not move back, recomputed otherwise.
#[allow(clippy::too_many_arguments)]
fn aggregate<A: Accumulator>(
    out: &[(Vec<Value>, Vec<Value>)],
    w: &WinCall,
    spec: &AggSpec,
    arg_at: usize,
    order: &[usize],
    p: &Partition,
    env: &Env,
    values: &mut Vec<Value>,
) -> Result<(), SqlError> {
    // The argument is read from the row's input slot.
    let mut run = spec.clone();
    if run.arg.is_some() {
        run.arg = Some(Expr::Col(0));
    }
    let specs = std::slice::from_ref(&run);
    let colls = [w.arg_coll];
    let (mut lo_c, mut hi_c) = (usize::MAX, 0);
    let mut state = A::fresh(specs);
    let mut last: Option<Value> = None;
    for k in p.start..p.end {
        let (lo, hi) = frame_of(w, p, k);
        if lo == lo_c && hi == hi_c {
            if let Some(v) = &last {
                values.push(v.clone());
                continue;
            }
        }
        if lo != lo_c || hi < hi_c {
            state = A::fresh(specs);
            lo_c = lo;
            hi_c = lo;
        }
        for j in hi_c.max(lo)..hi {
            env.cx.guard.check()?;
            let row = &out[order[j]].0;
            let arg = if run.arg.is_some() {
                std::slice::from_ref(&row[arg_at])
            } else {
                &[]
            };
            state.add_row(specs, &colls, arg, env)?;
        }
        hi_c = hi.max(hi_c);
        let v = state.clone().value(specs, env)?;
        last = Some(v.clone());
        values.push(v);
    }
    Ok(())
}

/// The frame of the row at sorted position `k`: positions `lo..hi` (empty when lo >= hi).
fn frame_of(w: &WinCall, p: &Partition, k: usize) -> (usize, usize) {
    if let Some(r) = p.range {
        return r[k - p.start];
    }
    let f = w.frame;
    let at = |off: i64| -> usize {
        let x = (k as i64).saturating_add(off);
        x.clamp(p.start as i64, p.end as i64) as usize
    };
    let lo = match f.start {
        None => p.start,
        Some(s) if f.rows => at(s),
        Some(_) => p.peer_start[k - p.start],
    };
    let hi = match f.end {
        None => p.end,
        Some(e) if f.rows => at(e.saturating_add(1)),
        Some(_) => p.peer_end[k - p.start],
    };
    (lo, hi.max(lo))
}
