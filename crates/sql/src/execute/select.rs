//! SELECT execution: runs a [`SelectPlan`] (`plan::select`): access path, WHERE filter,
//! GROUP BY / aggregates / HAVING, projections, ORDER BY, DISTINCT, LIMIT/OFFSET.
//!
//! Execution streams: the access path's rows are visited borrowed (`plan::visit`) and only
//! what the query keeps is copied (projected values, a group's first row); joins are nested
//! steps (`execute::join`: index lookups, hash joins or loops) that hand each joined row to the
//! same sink, so the join is never materialised; LIMIT stops the scan (and the loops) when nothing after
//! it reorders or removes rows.
//!
//! Limits (`guard.rs`): every source row, joined row, sort comparison and DISTINCT row passes
//! the session's statement guard check (KILL, max_statement_time, client gone), and every
//! row, key, group or GROUP_CONCAT byte kept is charged to its memory budget (1290).
//!
//! Invariants: result values conform to their column's declared type; every result row has
//! one value per projection (asserted where rows are emitted).

use super::join::Driver;
use crate::error::SqlError;
use crate::expr::{
    binary_values, compare_in, conform, key_bytes_in, sort_cmp_in, AggFunc, AggSpec, BinOp,
    CollRef, Env, Expr, RType,
};
use crate::output::Column;
use crate::plan::access::{resolve_in, visit, Source};
use crate::plan::select::*;
use onelog_binlog::Value;
use onelog_engine::collation::Collation;
use onelog_engine::Transaction;
use std::collections::{HashMap, HashSet};
use std::ops::ControlFlow;

fn limit_value(e: &Option<Expr>, env: &Env) -> Result<Option<u64>, SqlError> {
    match e {
        None => Ok(None),
        Some(x) => {
            let v = x.eval(&[], env)?;
            match crate::expr::to_i128(&v) {
                Some(n) if n >= 0 => Ok(Some(n.min(u64::MAX as i128) as u64)),
                _ => Err(SqlError::wrong_arguments("LIMIT")),
            }
        }
    }
}

/// Per-group aggregate state.
#[derive(Clone)]
struct AggState {
    vals: Vec<Value>,
    counts: Vec<i64>,
    seen: Vec<Option<HashSet<Vec<u8>>>>,
    /// GROUP_CONCAT / JSON_ARRAYAGG / JSON_OBJECTAGG text so far (None: no value yet, NULL),
    /// moved into `vals` by `finish`.
    texts: Vec<Option<Vec<u8>>>,
    /// GROUP_CONCAT values cut at `group_concat_max_len`.
    cut: Vec<bool>,
    /// GROUP_CONCAT with ORDER BY: (sort keys, text) of each value, joined at the end.
    #[allow(clippy::type_complexity)]
    pending: Vec<Vec<(Vec<Value>, Vec<u8>)>>,
    /// STD / VARIANCE: (mean, sum of squared deviations) of the values so far (Welford's
    /// update; `counts` has their number).
    moments: Vec<(f64, f64)>,
}

impl AggState {
    fn new(aggs: &[AggSpec]) -> Self {
        AggState {
            vals: aggs
                .iter()
                .map(|a| match a.func {
                    AggFunc::Count | AggFunc::CountStar => Value::Int(0),
                    _ => Value::Null,
                })
                .collect(),
            counts: vec![0; aggs.len()],
            seen: aggs.iter().map(|a| a.distinct.then(HashSet::new)).collect(),
            texts: vec![None; aggs.len()],
            cut: vec![false; aggs.len()],
            pending: vec![Vec::new(); aggs.len()],
            moments: vec![(0.0, 0.0); aggs.len()],
        }
    }

    /// Appends `t` to GROUP_CONCAT `i`'s value after its separator, cut at
    /// `group_concat_max_len` with warning 1260 as MariaDB (the row number is the value's
    /// position in its group); a cut value stays.
    fn concat(&mut self, aggs: &[AggSpec], i: usize, t: &[u8], env: &Env) -> Result<(), SqlError> {
        if self.cut[i] {
            return Ok(());
        }
        let guard = &env.cx.guard;
        let max = guard.group_concat_max().min(usize::MAX as u64) as usize;
        let sep = &aggs[i].separator;
        guard.charge((t.len() + sep.len()) as u64)?;
        let b = match &mut self.texts[i] {
            Some(b) => {
                b.extend_from_slice(sep);
                b
            }
            none => none.insert(Vec::new()),
        };
        b.extend_from_slice(t);
        // JSON_OBJECTAGG is never cut; JSON_ARRAYAGG keeps a closing quote (MariaDB's
        // `Item_func_json_arrayagg::cut_max_length`).
        let func = aggs[i].func;
        if b.len() > max && func != AggFunc::JsonObjectAgg {
            let quote = func == AggFunc::JsonArrayAgg && max > 0 && b.last() == Some(&b'"');
            // On a character boundary (a UTF-8 sequence is never split).
            let mut m = max - usize::from(quote);
            while m > 0 && b[m] & 0xC0 == 0x80 {
                m -= 1;
            }
            b.truncate(m);
            if quote {
                b.push(b'"');
            }
            self.cut[i] = true;
            let name = if func == AggFunc::JsonArrayAgg {
                "JSON_ARRAYAGG"
            } else {
                "GROUP_CONCAT"
            };
            guard.warn(1260, format!("Row {} was cut by {name}()", self.counts[i]));
        }
        Ok(())
    }

    fn add(
        &mut self,
        aggs: &[AggSpec],
        colls: &[CollRef],
        row: &[Value],
        env: &Env,
    ) -> Result<(), SqlError> {
        for (i, a) in aggs.iter().enumerate() {
            let coll = colls.get(i).map_or(env.coll, |c| c.resolve(env.coll));
            if a.func == AggFunc::CountStar {
                self.counts[i] += 1;
                continue;
            }
            let v = match &a.arg {
                Some(e) => e.eval(row, env)?,
                None => Value::Null,
            };
            if v == Value::Null {
                continue;
            }
            if let Some(seen) = &mut self.seen[i] {
                let mut k = Vec::new();
                key_bytes_in(coll, &v, &mut k);
                if !seen.insert(k) {
                    continue;
                }
            }
            self.counts[i] += 1;
            let cur = &mut self.vals[i];
            match a.func {
                AggFunc::Count | AggFunc::CountStar => {}
                AggFunc::Sum | AggFunc::Avg => {
                    *cur = if *cur == Value::Null {
                        match v {
                            Value::Bytes(_) => {
                                Value::Double(crate::expr::to_f64(&v).unwrap_or(0.0))
                            }
                            other => other,
                        }
                    } else {
                        binary_values(BinOp::Add, cur, &v)?
                    };
                }
                AggFunc::Min | AggFunc::Max => {
                    let replace = *cur == Value::Null
                        || match compare_in(coll, &v, cur) {
                            Some(std::cmp::Ordering::Less) => a.func == AggFunc::Min,
                            Some(std::cmp::Ordering::Greater) => a.func == AggFunc::Max,
                            _ => false,
                        };
                    if replace {
                        *cur = v;
                    }
                }
                AggFunc::GroupConcat | AggFunc::JsonArrayAgg | AggFunc::JsonObjectAgg
                    if a.order_by.is_empty() =>
                {
                    let t = crate::expr::text_of(&v);
                    self.concat(aggs, i, &t, env)?;
                }
                AggFunc::GroupConcat | AggFunc::JsonArrayAgg | AggFunc::JsonObjectAgg => {
                    let mut keys = Vec::with_capacity(a.order_by.len());
                    for (x, _) in &a.order_by {
                        keys.push(x.eval(row, env)?);
                    }
                    let t = crate::expr::text_of(&v);
                    env.cx
                        .guard
                        .charge(crate::guard::row_bytes(&keys) + t.len() as u64)?;
                    self.pending[i].push((keys, t));
                }
                AggFunc::StdPop | AggFunc::StdSamp | AggFunc::VarPop | AggFunc::VarSamp => {
                    let x = crate::expr::to_f64(&v).unwrap_or(0.0);
                    let (mean, m2) = &mut self.moments[i];
                    let delta = x - *mean;
                    *mean += delta / self.counts[i] as f64;
                    *m2 += delta * (x - *mean);
                }
                AggFunc::BitXor => {
                    let x = crate::expr::to_i128(&v).unwrap_or(0) as u64;
                    *cur = match cur {
                        Value::UInt(acc) => Value::UInt(*acc ^ x),
                        _ => Value::UInt(x),
                    };
                }
                AggFunc::BitAnd | AggFunc::BitOr => {
                    *cur = if *cur == Value::Null {
                        Value::UInt(crate::expr::to_i128(&v).unwrap_or(0) as u64)
                    } else {
                        binary_values(
                            if a.func == AggFunc::BitAnd {
                                BinOp::BitAnd
                            } else {
                                BinOp::BitOr
                            },
                            cur,
                            &v,
                        )?
                    };
                }
            }
        }
        Ok(())
    }

    fn finish(mut self, aggs: &[AggSpec], env: &Env) -> Result<Vec<Value>, SqlError> {
        for (i, a) in aggs.iter().enumerate() {
            let concats = matches!(
                a.func,
                AggFunc::GroupConcat | AggFunc::JsonArrayAgg | AggFunc::JsonObjectAgg
            );
            if concats && !a.order_by.is_empty() {
                let mut items = std::mem::take(&mut self.pending[i]);
                // Strings sort under the connection's collation (MariaDB: the key's own;
                // docs/SQL.md lists the difference).
                let coll = crate::expr::connection_collation(env.cx);
                // Stable: equal keys keep the order the rows were read in.
                items.sort_by(|x, y| {
                    for (k, (_, desc)) in a.order_by.iter().enumerate() {
                        let o = sort_cmp_in(coll, &x.0[k], &y.0[k]);
                        let o = if *desc { o.reverse() } else { o };
                        if o != std::cmp::Ordering::Equal {
                            return o;
                        }
                    }
                    std::cmp::Ordering::Equal
                });
                let n = self.counts[i];
                for (pos, (_, t)) in (1..).zip(items) {
                    // The 1260 row number is the value's position in the ordered group.
                    self.counts[i] = pos;
                    self.concat(aggs, i, &t, env)?;
                }
                self.counts[i] = n;
            }
            match a.func {
                AggFunc::Count | AggFunc::CountStar => self.vals[i] = Value::Int(self.counts[i]),
                AggFunc::GroupConcat => {
                    if let Some(b) = self.texts[i].take() {
                        self.vals[i] = Value::bytes(b);
                    }
                }
                AggFunc::JsonArrayAgg | AggFunc::JsonObjectAgg => {
                    if let Some(t) = self.texts[i].take() {
                        let (open, close) = if a.func == AggFunc::JsonArrayAgg {
                            (b'[', b']')
                        } else {
                            (b'{', b'}')
                        };
                        let mut b = Vec::with_capacity(t.len() + 2);
                        b.push(open);
                        b.extend_from_slice(&t);
                        b.push(close);
                        self.vals[i] = Value::bytes(b);
                    }
                }
                AggFunc::Avg if self.vals[i] != Value::Null => {
                    self.vals[i] =
                        binary_values(BinOp::Div, &self.vals[i], &Value::Int(self.counts[i]))?;
                }
                AggFunc::BitAnd if self.vals[i] == Value::Null => {
                    self.vals[i] = Value::UInt(u64::MAX)
                }
                AggFunc::BitOr if self.vals[i] == Value::Null => self.vals[i] = Value::UInt(0),
                AggFunc::BitXor if self.vals[i] == Value::Null => self.vals[i] = Value::UInt(0),
                AggFunc::StdPop | AggFunc::StdSamp | AggFunc::VarPop | AggFunc::VarSamp => {
                    let n = self.counts[i];
                    let sample = matches!(a.func, AggFunc::StdSamp | AggFunc::VarSamp);
                    let m2 = self.moments[i].1;
                    let var = match (n, sample) {
                        (0, _) | (1, true) => None,
                        (n, true) => Some(m2 / (n - 1) as f64),
                        (n, false) => Some(m2 / n as f64),
                    };
                    let root = matches!(a.func, AggFunc::StdPop | AggFunc::StdSamp);
                    self.vals[i] = match var {
                        Some(v) if root => Value::Double(v.max(0.0).sqrt()),
                        Some(v) => Value::Double(v),
                        None => Value::Null,
                    };
                }
                _ => {}
            }
        }
        Ok(self.vals)
    }
}

/// `SELECT ... INTO @vars`: the one row to assign; more than one is MariaDB's 1172, none
/// leaves the variables as they are with warning 1329 (as MariaDB).
pub(crate) fn into_row(mut rows: Vec<Vec<Value>>) -> Result<Option<Vec<Value>>, SqlError> {
    if rows.len() > 1 {
        return Err(SqlError::of(
            onelog_protocol::errors::ER_TOO_MANY_ROWS,
            "Result consisted of more than one row",
        ));
    }
    if rows.is_empty() {
        crate::expr::warn(
            "Warning",
            1329,
            "No data - zero rows fetched, selected, or processed".into(),
        );
    }
    Ok(rows.pop())
}

/// Result columns of an execution: the compiled ones, with `Dyn` columns typed by their
/// first non-NULL value.
pub(crate) fn result_columns(p: &SelectPlan, rows: &[Vec<Value>]) -> Vec<Column> {
    let mut cols = p.columns.clone();
    for (i, r) in p.rtypes.iter().enumerate() {
        if *r != RType::Dyn {
            continue;
        }
        let v = rows
            .iter()
            .filter_map(|row| row.get(i))
            .find(|v| **v != Value::Null);
        let rt = v.map_or(RType::Null, crate::expr::value_rtype);
        let rt = match rt {
            RType::Str(_) => RType::Str(255),
            other => other,
        };
        cols[i] = expr_column(&cols[i].name, rt, true);
    }
    cols
}

/// Where a SELECT's FROM rows come from.
pub(crate) enum Input<'t, 'p> {
    /// Read through the transaction as they stream; a derived table's rows per FROM
    /// position (empty: none).
    Txn(&'t mut Transaction, &'t [Option<Vec<Vec<Value>>>]),
    /// Joined rows read beforehand, with the filter still to apply.
    Rows(Vec<Vec<Value>>, Option<&'p Expr>),
}

/// Runs `p` on the rows of `input`, each followed by `outer`.
pub(crate) fn run_with<'p>(
    p: &'p SelectPlan,
    input: Input<'_, 'p>,
    env: &Env,
    outer: &[Value],
) -> Result<(Vec<Vec<Value>>, u64), SqlError> {
    let limit = limit_value(&p.limit, env)?;
    let offset = limit_value(&p.offset, env)?.unwrap_or(0);
    let sorted = !p.order_by.is_empty();
    // ORDER BY items that are a projected column are compared on the projected value (not
    // copied again): `Some(projection position)`; the others (`None`) get a key slot of their
    // own, in order.
    let order_src: Vec<Option<usize>> = p
        .order_by
        .iter()
        .map(|(x, _)| match x {
            Expr::Col(c) if !p.grouped => p
                .projections
                .iter()
                .position(|y| matches!(y, Expr::Col(d) if d == c)),
            // A window's value exists only in its projection.
            Expr::Win(w) => Some(w.slot),
            _ => None,
        })
        .collect();
    let stop_at = if !sorted && !p.distinct && !p.grouped && !p.calc_found_rows && !p.windowed {
        limit.map(|l| l.saturating_add(offset))
    } else {
        None
    };
    let mut sink = Sink {
        p,
        env,
        filter: None,
        order_src: &order_src,
        stop_at,
        out: Vec::with_capacity(16),
        groups: Vec::new(),
        group_index: HashMap::new(),
        key: Vec::new(),
        outer,
        scratch: Vec::new(),
        group_cols: group_columns(p),
        last_group: None,
    };
    match input {
        Input::Txn(txn, derived) => scan(p, txn, derived, env, outer, &mut sink)?,
        Input::Rows(rows, filter) => {
            sink.filter = filter;
            for r in &rows {
                if sink.row(r)?.is_break() {
                    break;
                }
            }
        }
    }
    let mut out = sink.finish()?;
    if p.windowed {
        let nkeys = order_src.iter().filter(|s| s.is_none()).count();
        let keys = (nkeys, !sorted);
        super::window::compute::<AggState>(&mut out, &p.projections, &p.rtypes, keys, env)?;
    }
    let guard = &env.cx.guard;
    let order_coll: Vec<Collation> = p.colls.order.iter().map(|c| c.resolve(env.coll)).collect();
    let proj_coll: Vec<Collation> = p.colls.proj.iter().map(|c| c.resolve(env.coll)).collect();
    debug_assert_eq!(order_coll.len(), p.order_by.len());
    debug_assert_eq!(proj_coll.len(), p.projections.len());
    if sorted {
        sort_output(&mut out, p, &order_src, &order_coll, guard)?;
    }
    let mut rows: Vec<Vec<Value>> = out.into_iter().map(|(_, r)| r).collect();
    if p.distinct && sorted && (0..p.projections.len()).all(|j| order_src.contains(&Some(j))) {
        // Every projected column is a sort key (all are table columns, whose values of one
        // type compare equal exactly when their DISTINCT keys are equal): duplicates are
        // adjacent, and the first of each run is the one a set would keep.
        let (mut prev, mut cur) = (Vec::new(), Vec::new());
        let mut first = true;
        rows.retain(|r| {
            cur.clear();
            for (v, c) in r.iter().zip(&proj_coll) {
                key_bytes_in(*c, v, &mut cur);
            }
            let keep = first || cur != prev;
            first = false;
            std::mem::swap(&mut prev, &mut cur);
            keep
        });
    } else if p.distinct {
        let mut seen: HashSet<Vec<u8>> = HashSet::new();
        let mut k = Vec::new();
        let mut stop: Result<(), SqlError> = Ok(());
        rows.retain(|r| {
            if stop.is_err() {
                return false;
            }
            k.clear();
            for (v, c) in r.iter().zip(&proj_coll) {
                key_bytes_in(*c, v, &mut k);
            }
            if seen.contains(&k) {
                false
            } else {
                stop = guard
                    .check()
                    .and_then(|_| guard.charge(k.len() as u64 + 32));
                seen.insert(k.clone());
                true
            }
        });
        stop?;
    }
    let found = page(&mut rows, limit, offset, p.calc_found_rows);
    Ok((rows, found))
}

/// What the FROM rows are handed to: the filter the scan leaves to it, then each row.
pub(crate) trait RowSink<'p> {
    fn set_filter(&mut self, f: Option<&'p Expr>);
    fn row(&mut self, row: &[Value]) -> crate::plan::access::Visit;
}

impl<'p> RowSink<'p> for Sink<'p> {
    fn set_filter(&mut self, f: Option<&'p Expr>) {
        self.filter = f;
    }
    fn row(&mut self, row: &[Value]) -> crate::plan::access::Visit {
        Sink::row(self, row)
    }
}

/// Reads the FROM rows of `p` through `txn` (a derived table's from `derived`) into `sink`,
/// after telling it the filter the access path leaves.
pub(crate) fn scan<'p>(
    p: &'p SelectPlan,
    txn: &mut Transaction,
    derived: &[Option<Vec<Vec<Value>>>],
    env: &Env,
    outer: &[Value],
    sink: &mut dyn RowSink<'p>,
) -> Result<(), SqlError> {
    let mem = |k: usize| derived.get(k).and_then(|d| d.as_ref());
    // Key values may read the enclosing row (`plan_in`): NULLs for the FROM columns, then it.
    let key_row: Vec<Value> = if outer.is_empty() {
        Vec::new()
    } else {
        let mut r = vec![Value::Null; from_width(p)];
        r.extend_from_slice(outer);
        r
    };
    match (&p.table, &p.plan) {
        (Some(_), Some(pl)) if p.join.is_none() && mem(0).is_some() => {
            sink.set_filter(pl.filter.as_ref());
            for r in mem(0).into_iter().flatten() {
                if sink.row(r)?.is_break() {
                    break;
                }
            }
        }
        (Some(t), Some(pl)) if p.join.is_none() => {
            let (src, filter) = resolve_in(t, pl, env, &key_row)?;
            sink.set_filter(filter);
            visit(txn, t, &src, p.lock, &mut |row| sink.row(row))?;
        }
        (Some(t), Some(pl)) => {
            // The access path narrows the driving table (the first one; a leading RIGHT
            // JOIN's right table is scanned); the join's own filter runs on joined rows.
            let Some(jp) = &p.join else {
                return Err(SqlError::unsupported("this join"));
            };
            sink.set_filter(jp.filter.as_ref());
            let src;
            let driver = match (mem(jp.driver), jp.driver) {
                (Some(rows), _) => Driver::Rows(rows),
                (None, 0) => {
                    src = resolve_in(t, pl, env, &key_row)?.0;
                    Driver::Table(t, &src)
                }
                (None, _) => Driver::Table(&jp.driver_table, &Source::Full),
            };
            super::join::run(jp, driver, p.lock, txn, env, derived, outer, &mut |row| {
                sink.row(row)
            })?;
        }
        (_, pl) => {
            sink.set_filter(pl.as_ref().and_then(|x| x.residual.as_ref()));
            let _ = sink.row(&[])?;
        }
    }
    Ok(())
}

/// The width of `p`'s FROM row (a correlated subquery's enclosing row follows it).
fn from_width(p: &SelectPlan) -> usize {
    match &p.join {
        Some(jp) => jp.width,
        None => p.table.as_ref().map_or(0, |t| t.columns.len()),
    }
}

/// Applies OFFSET and LIMIT to `rows`; returns FOUND_ROWS(): every row with
/// SQL_CALC_FOUND_ROWS (`calc`), else the rows up to OFFSET + LIMIT, as MariaDB.
fn page(rows: &mut Vec<Vec<Value>>, limit: Option<u64>, offset: u64, calc: bool) -> u64 {
    let found = match limit {
        Some(l) if !calc => (rows.len() as u64).min(l.saturating_add(offset)),
        _ => rows.len() as u64,
    };
    if offset > 0 {
        let n = (offset as usize).min(rows.len());
        rows.drain(..n);
    }
    if let Some(l) = limit {
        rows.truncate(l.min(usize::MAX as u64) as usize);
    }
    found
}

/// Sorts output rows by the ORDER BY items (`order_src`: a projection or the next key slot)
/// under their collations.
fn sort_output(
    out: &mut [(Vec<Value>, Vec<Value>)],
    p: &SelectPlan,
    order_src: &[Option<usize>],
    order_coll: &[Collation],
    guard: &crate::guard::StatementGuard,
) -> Result<(), SqlError> {
    // The comparator cannot fail: once the guard stops the statement every comparison
    // answers Equal (the sort ends quickly) and the error is returned after it.
    let mut stop: Option<SqlError> = None;
    out.sort_by(|a, b| {
        if stop.is_some() {
            return std::cmp::Ordering::Equal;
        }
        if let Err(e) = guard.check() {
            stop = Some(e);
            return std::cmp::Ordering::Equal;
        }
        let mut slot = 0;
        for (((_, desc), src), coll) in p.order_by.iter().zip(order_src).zip(order_coll) {
            let o = match src {
                Some(j) => sort_cmp_in(*coll, &a.1[*j], &b.1[*j]),
                None => {
                    slot += 1;
                    sort_cmp_in(*coll, &a.0[slot - 1], &b.0[slot - 1])
                }
            };
            let o = if *desc { o.reverse() } else { o };
            if o != std::cmp::Ordering::Equal {
                return o;
            }
        }
        std::cmp::Ordering::Equal
    });
    if let Some(e) = stop {
        return Err(e);
    }
    Ok(())
}

impl super::window::Accumulator for AggState {
    fn fresh(spec: &[AggSpec]) -> Self {
        AggState::new(spec)
    }

    fn add_row(
        &mut self,
        spec: &[AggSpec],
        colls: &[CollRef],
        row: &[Value],
        env: &Env,
    ) -> Result<(), SqlError> {
        self.add(spec, colls, row, env)
    }

    fn value(self, spec: &[AggSpec], env: &Env) -> Result<Value, SqlError> {
        Ok(self.finish(spec, env)?.pop().unwrap_or(Value::Null))
    }
}

/// Where the source rows of one execution go: filter, then groups or projected output rows.
pub(crate) struct Sink<'a> {
    p: &'a SelectPlan,
    env: &'a Env<'a>,
    filter: Option<&'a Expr>,
    order_src: &'a [Option<usize>],
    /// Stop the scan once this many output rows exist (LIMIT + OFFSET, when nothing later
    /// reorders or removes rows).
    stop_at: Option<u64>,
    /// Output rows: (values of the ORDER BY items without a projection source, projected row).
    out: Vec<(Vec<Value>, Vec<Value>)>,
    /// Grouped queries: (first row of the group, aggregate state).
    groups: Vec<(Vec<Value>, AggState)>,
    group_index: HashMap<Vec<u8>, usize>,
    key: Vec<u8>,
    /// The enclosing row a correlated subquery's rows continue with (empty: none).
    outer: &'a [Value],
    /// The row followed by `outer`, reused.
    scratch: Vec<Value>,
    /// GROUP BY items that are all plain columns: their positions in the row.
    group_cols: Option<Vec<usize>>,
    /// Those columns' values on the last row grouped, and its group: a row with the same
    /// values is in the same group (rows of a join come in runs of one outer row).
    last_group: Option<(Vec<Value>, usize)>,
}

/// The row positions of the GROUP BY items when every one is a plain column.
fn group_columns(p: &SelectPlan) -> Option<Vec<usize>> {
    p.group_by
        .iter()
        .map(|g| match g {
            Expr::Col(i) => Some(*i),
            _ => None,
        })
        .collect::<Option<Vec<usize>>>()
        .filter(|c| !c.is_empty())
}

/// `a` and `b` are the same value, so the same group key under any collation (floats by
/// their bits: -0.0 and 0.0 are not taken as the same here).
fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Double(x), Value::Double(y)) => x.to_bits() == y.to_bits(),
        (Value::Float(x), Value::Float(y)) => x.to_bits() == y.to_bits(),
        _ => a == b,
    }
}

impl Sink<'_> {
    /// The group of the last row grouped when `row` has the same GROUP BY column values.
    fn same_group(&self, row: &[Value]) -> Option<usize> {
        let cols = self.group_cols.as_ref()?;
        let (vals, gi) = self.last_group.as_ref()?;
        cols.iter()
            .zip(vals)
            .all(|(&c, v)| row.get(c).is_some_and(|x| same_value(x, v)))
            .then_some(*gi)
    }

    fn remember_group(&mut self, row: &[Value], gi: usize) {
        let Some(cols) = &self.group_cols else {
            return;
        };
        let (vals, at) = self.last_group.get_or_insert_with(|| (Vec::new(), gi));
        vals.clear();
        vals.extend(
            cols.iter()
                .map(|&c| row.get(c).cloned().unwrap_or(Value::Null)),
        );
        *at = gi;
    }

    fn row(&mut self, row: &[Value]) -> crate::plan::access::Visit {
        if self.outer.is_empty() {
            return self.row_full(row);
        }
        // A correlated subquery counting rows (`SELECT COUNT(*) ... WHERE <key>`): after the
        // first row (the group's representative) no row is read again, so none is copied.
        let p = self.p;
        if self.filter.is_none()
            && p.grouped
            && p.group_by.is_empty()
            && !self.groups.is_empty()
            && p.aggs.iter().all(|a| a.func == AggFunc::CountStar)
        {
            self.env.cx.guard.check()?;
            self.groups[0]
                .1
                .add(&p.aggs, &p.colls.aggs, &[], self.env)?;
            return Ok(ControlFlow::Continue(()));
        }
        let mut full = std::mem::take(&mut self.scratch);
        full.clear();
        full.extend_from_slice(row);
        full.extend_from_slice(self.outer);
        let r = self.row_full(&full);
        self.scratch = full;
        r
    }

    fn row_full(&mut self, row: &[Value]) -> crate::plan::access::Visit {
        let p = self.p;
        let env = self.env;
        let guard = &env.cx.guard;
        guard.check()?;
        if let Some(f) = self.filter {
            if !f.test(row, &[], env)? {
                return Ok(ControlFlow::Continue(()));
            }
        }
        if p.grouped {
            let gi = if p.group_by.is_empty() {
                if self.groups.is_empty() {
                    self.groups.push((row.to_vec(), AggState::new(&p.aggs)));
                }
                0
            } else if let Some(i) = self.same_group(row) {
                i
            } else {
                self.key.clear();
                for (g, c) in p.group_by.iter().zip(&p.colls.group) {
                    let coll = c.resolve(env.coll);
                    match g {
                        Expr::Col(i) if *i < row.len() => {
                            key_bytes_in(coll, &row[*i], &mut self.key)
                        }
                        g => key_bytes_in(coll, &g.eval(row, env)?, &mut self.key),
                    }
                }
                let gi = match self.group_index.get(&self.key) {
                    Some(&i) => i,
                    None => {
                        guard.charge(
                            crate::guard::row_bytes(row)
                                + 2 * self.key.len() as u64
                                + 64 * p.aggs.len() as u64,
                        )?;
                        self.group_index.insert(self.key.clone(), self.groups.len());
                        self.groups.push((row.to_vec(), AggState::new(&p.aggs)));
                        self.groups.len() - 1
                    }
                };
                self.remember_group(row, gi);
                gi
            };
            self.groups[gi].1.add(&p.aggs, &p.colls.aggs, row, env)?;
            return Ok(ControlFlow::Continue(()));
        }
        if let Some(h) = &p.having {
            if !h.test(row, &[], env)? {
                return Ok(ControlFlow::Continue(()));
            }
        }
        let mut proj = Vec::with_capacity(p.projections.len());
        for (x, r) in p.projections.iter().zip(&p.rtypes) {
            let v = match x {
                Expr::Col(i) => row.get(*i).cloned().unwrap_or(Value::Null),
                Expr::Win(_) => Value::Null,
                other => conform(other.eval(row, env)?, *r),
            };
            proj.push(v);
        }
        let mut keys = Vec::new();
        for ((x, _), src) in p.order_by.iter().zip(self.order_src) {
            if src.is_none() {
                keys.push(x.eval(row, env)?);
            }
        }
        if p.windowed {
            super::window::push_inputs(&p.projections, &mut keys, &mut |x| x.eval(row, env))?;
        }
        guard.charge(crate::guard::row_bytes(&keys) + crate::guard::row_bytes(&proj))?;
        debug_assert_eq!(proj.len(), p.projections.len(), "one value per projection");
        self.out.push((keys, proj));
        if let Some(s) = self.stop_at {
            if self.out.len() as u64 >= s {
                return Ok(ControlFlow::Break(()));
            }
        }
        Ok(ControlFlow::Continue(()))
    }

    /// The output rows (unsorted); grouped queries get their groups finished and HAVING
    /// applied here.
    #[allow(clippy::type_complexity)]
    fn finish(self) -> Result<Vec<(Vec<Value>, Vec<Value>)>, SqlError> {
        let p = self.p;
        let env = self.env;
        if !p.grouped {
            return Ok(self.out);
        }
        let mut groups = self.groups;
        if groups.is_empty() && p.group_by.is_empty() {
            // No row: the FROM columns are NULL, a correlated subquery's enclosing row is
            // still there (`(SELECT COUNT(*) + o.x ...)` on no row is `o.x`).
            let mut rep = Vec::new();
            if !self.outer.is_empty() {
                rep = vec![Value::Null; from_width(p)];
                rep.extend_from_slice(self.outer);
            }
            groups.push((rep, AggState::new(&p.aggs)));
        }
        let mut out = Vec::with_capacity(groups.len());
        for (rep, st) in groups {
            let aggs = st.finish(&p.aggs, env)?;
            if let Some(h) = &p.having {
                if !h.test(&rep, &aggs, env)? {
                    continue;
                }
            }
            let mut proj = Vec::with_capacity(p.projections.len());
            for (x, r) in p.projections.iter().zip(&p.rtypes) {
                proj.push(match x {
                    Expr::Win(_) => Value::Null,
                    x => conform(x.eval_with(&rep, &aggs, env)?, *r),
                });
            }
            let mut keys = Vec::with_capacity(p.order_by.len());
            for ((x, _), src) in p.order_by.iter().zip(self.order_src) {
                if src.is_none() {
                    keys.push(x.eval_with(&rep, &aggs, env)?);
                }
            }
            if p.windowed {
                let mut eval = |x: &Expr| x.eval_with(&rep, &aggs, env);
                super::window::push_inputs(&p.projections, &mut keys, &mut eval)?;
            }
            debug_assert_eq!(proj.len(), p.projections.len(), "one value per projection");
            out.push((keys, proj));
        }
        Ok(out)
    }
}
