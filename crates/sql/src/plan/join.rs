//! Join planning: how each joined table's rows are found for a partial joined row, and where
//! each condition (ON, USING, NATURAL, WHERE) is tested.
//!
//! The tables nest in the order `plan::select::from` flattens the FROM tree into (written
//! order, except that `X RIGHT JOIN Y` runs as `Y LEFT JOIN (X)`); the joined row keeps the
//! written order: every table has a fixed column slot (`From::offsets`). The right operand
//! of a LEFT JOIN is an outer-join **nest** (a run of consecutive steps, possibly holding
//! inner nests): when no combination of its rows passes its conditions for a partial row, all
//! its tables get NULLs once. For each joined table, in nesting order, [`plan_joins`] chooses:
//! - an **index lookup** ([`JoinAccess::Lookup`]) when equalities `t.col = expr` cover a prefix
//!   of one of its keys (primary key first, then unique, then the longest prefix) and `expr`
//!   reads only tables already placed; the key values are computed per partial row;
//! - a **hash join** ([`JoinAccess::Hash`]) when there are such equalities but no key serves
//!   them: the table is read once and hashed on those columns;
//! - otherwise a **nested loop** over its rows, read once.
//!
//! Each condition belongs to a level: the top (WHERE and inner joins outside any nest) or
//! the nest whose ON (or USING) it is. It is tested at the step of the last table it reads
//! when that step belongs to its own level; when that step is inside an inner nest, it is
//! tested once that inner nest is complete (`Nest::after`, on matched and null-extended rows
//! alike); top-level conditions in that case, or reading unknown tables, stay in the WHERE
//! filter of the joined row. Top-level conditions on the driving table alone filter its rows
//! before any join.
//!
//! Invariants: an access never finds fewer rows than its condition selects (the step's whole
//! condition is still tested on every row it yields, and a key value that cannot be converted
//! exactly to its column falls back to every row of the table); each condition is tested
//! exactly once per row that reaches it; a condition is never tested before the tables it
//! reads are final (placed, or null-extended), so no placement changes which rows a nest
//! null-extends.

use std::sync::Arc;

use onelog_engine::TableDef;

use crate::bind::tables::From;
use crate::expr::{BinOp, CollRef, Expr};
use crate::plan::access::{and_all, conjuncts, is_const_in};

/// How the rows of a joined table are found for one partial row.
#[derive(Debug, Clone)]
pub(crate) enum JoinAccess {
    /// Every row (read once per statement), each tested with the step's condition.
    Loop,
    /// `index` (None: the primary key) looked up with `keys` (one per leading key column,
    /// evaluated on the partial row) for each partial row.
    Lookup {
        index: Option<usize>,
        keys: Vec<Expr>,
    },
    /// Rows read once and hashed on `cols` (columns of the table); probed with `keys`
    /// evaluated on the partial row.
    Hash { cols: Vec<usize>, keys: Vec<Expr> },
}

/// One joined table, in nesting order.
#[derive(Debug, Clone)]
pub(crate) struct JoinStep {
    pub table: Arc<TableDef>,
    /// Its FROM position.
    pub position: usize,
    /// Where its columns start in the joined row.
    pub offset: usize,
    /// The conditions tested on the partial row once the table's columns are in place.
    pub on: Option<Expr>,
    /// The outer-join nest (`JoinPlan::nests`) this step is the first table of.
    pub opens: Option<usize>,
    pub access: JoinAccess,
}

/// An outer-join nest: steps `first..=last`, null-extended together when no combination of
/// their rows passes their conditions.
#[derive(Debug, Clone)]
pub(crate) struct Nest {
    pub first: usize,
    pub last: usize,
    /// Conditions of the enclosing nest that read this one's tables: tested once this nest
    /// is complete, on its matched and null-extended rows.
    pub after: Option<Expr>,
}

/// The nesting of a join.
#[derive(Debug, Clone)]
pub(crate) struct JoinPlan {
    /// The FROM table that drives the loops and where its columns start.
    pub driver: usize,
    pub driver_table: Arc<TableDef>,
    pub driver_offset: usize,
    /// The joined row's width (every FROM table's columns).
    pub width: usize,
    /// WHERE conjuncts that read the driving table alone: tested on its rows (laid in the
    /// joined row) before they join.
    pub driver_filter: Option<Expr>,
    pub steps: Vec<JoinStep>,
    pub nests: Vec<Nest>,
    /// Per step index (and `steps.len()`, the complete row): the nests whose last step is
    /// just before it, innermost first.
    pub closing: Vec<Vec<usize>>,
    /// What is left of the WHERE, tested on each complete joined row.
    pub filter: Option<Expr>,
}

/// A join step before planning: FROM table `table`, in the innermost nest `nest`.
pub(crate) struct StepSpec {
    pub table: usize,
    pub nest: Option<usize>,
}

/// An outer-join nest before planning: steps `first..=last` inside nest `parent`.
pub(crate) struct NestSpec {
    pub parent: Option<usize>,
    pub first: usize,
    pub last: usize,
}

/// A flattened FROM: the driving table, the steps in nesting order, the nests, and the
/// join conditions with their level (None: the top level, as a WHERE conjunct).
pub(crate) struct JoinSpecs {
    pub driver: usize,
    pub steps: Vec<StepSpec>,
    pub nests: Vec<NestSpec>,
    pub conds: Vec<(Expr, Option<usize>)>,
}

/// The joined row's width: the FROM tables' columns (an enclosing query's values follow them
/// in a correlated subquery, fixed while it runs).
fn from_width(from: &From) -> usize {
    from.tables.iter().map(|(t, _)| t.columns.len()).sum()
}

/// The tables (FROM positions) whose columns `e` reads, or None when `e` holds something
/// whose dependencies are not known here (aggregates, row-independent values are fine).
pub(crate) fn tables_read(e: &Expr, from: &From, out: &mut Vec<usize>) -> bool {
    let all = |xs: &[Expr], out: &mut Vec<usize>| xs.iter().all(|x| tables_read(x, from, out));
    match e {
        Expr::Col(c) if *c >= from_width(from) => true,
        Expr::Col(c) => {
            let (k, _) = from.owner(*c);
            if !out.contains(&k) {
                out.push(k);
            }
            true
        }
        Expr::Lit(_) | Expr::Param(_) | Expr::SysVar(..) | Expr::UserVar(_) => true,
        Expr::Neg(x)
        | Expr::Not(x)
        | Expr::BitNot(x)
        | Expr::IsNull(x, _)
        | Expr::IsBool(x, _, _)
        | Expr::Cast(x, _)
        | Expr::Collate(x, _)
        | Expr::Introduced(x, _)
        | Expr::Collated(_, x) => tables_read(x, from, out),
        Expr::Bin(_, l, r) => tables_read(l, from, out) && tables_read(r, from, out),
        Expr::In(x, list, _) => tables_read(x, from, out) && all(list, out),
        Expr::Between(x, a, b, _) => {
            tables_read(x, from, out) && tables_read(a, from, out) && tables_read(b, from, out)
        }
        Expr::Like(x, p, _, _) => tables_read(x, from, out) && tables_read(p, from, out),
        Expr::Case(op, arms, els) => {
            op.as_deref().is_none_or(|x| tables_read(x, from, out))
                && arms
                    .iter()
                    .all(|(w, t)| tables_read(w, from, out) && tables_read(t, from, out))
                && els.as_deref().is_none_or(|x| tables_read(x, from, out))
        }
        Expr::Func(f, args) => !f.def().volatile && all(args, out),
        // An uncorrelated scalar subquery is one value for the statement.
        Expr::Subq(s) => !s.correlated && matches!(s.kind, crate::expr::SubqKind::Scalar),
        _ => false,
    }
}

/// `t.col = key` where `col` is a column of the table at `offset..offset + width` and `key`
/// reads only the `placed` tables: (column within the table, key).
fn equality(
    e: &Expr,
    def: &TableDef,
    offset: usize,
    placed: &[usize],
    from: &From,
) -> Option<(usize, Expr)> {
    let inner = |e: &Expr| match e {
        Expr::Col(c) if (offset..offset + def.columns.len()).contains(c) => Some(c - offset),
        _ => None,
    };
    let outer = |e: &Expr| {
        let mut t = Vec::new();
        tables_read(e, from, &mut t) && t.iter().all(|k| placed.contains(k))
    };
    let unwrapped = match e {
        Expr::Collated(_, x) => x,
        other => other,
    };
    let Expr::Bin(BinOp::Eq, l, r) = unwrapped else {
        return None;
    };
    let (col, key) = match (inner(l), inner(r)) {
        (Some(c), None) if outer(r) => (c, (**r).clone()),
        (None, Some(c)) if outer(l) => (c, (**l).clone()),
        _ => return None,
    };
    // Strings compare in the key's order only under the column's own collation.
    match e {
        Expr::Collated(CollRef::Fixed(c), _) if def.columns[col].string_collation() == Some(*c) => {
        }
        Expr::Collated(..) => return None,
        _ => {}
    }
    Some((col, key))
}

/// The access of one step from its equalities.
fn choose(def: &TableDef, eqs: &[(usize, Expr)]) -> JoinAccess {
    if eqs.is_empty() {
        return JoinAccess::Loop;
    }
    let mut candidates: Vec<(Option<usize>, &[usize], bool)> = vec![(None, &def.primary_key, true)];
    for (i, ix) in def.indexes.iter().enumerate() {
        candidates.push((Some(i), &ix.columns, ix.unique));
    }
    let mut best: Option<(u32, Option<usize>, Vec<Expr>)> = None;
    for (index, cols, unique) in candidates {
        let keys: Vec<Expr> = cols
            .iter()
            .map_while(|c| eqs.iter().find(|(col, _)| col == c).map(|(_, k)| k.clone()))
            .collect();
        if keys.is_empty() {
            continue;
        }
        let full = keys.len() == cols.len();
        let score = match (index, full && unique) {
            (None, true) => 1000,
            (_, true) => 900,
            _ => keys.len() as u32 * 10 + u32::from(index.is_none()),
        };
        if best.as_ref().is_none_or(|(s, _, _)| score > *s) {
            best = Some((score, index, keys));
        }
    }
    match best {
        Some((_, index, keys)) => JoinAccess::Lookup { index, keys },
        None => hash_of(eqs),
    }
}

/// A hash join on the equalities' columns (each column once).
fn hash_of(eqs: &[(usize, Expr)]) -> JoinAccess {
    let mut cols = Vec::new();
    let mut keys = Vec::new();
    for (c, k) in eqs {
        if !cols.contains(c) {
            cols.push(*c);
            keys.push(k.clone());
        }
    }
    JoinAccess::Hash { cols, keys }
}

/// Where a condition is tested (see the module docs).
enum Place {
    Driver,
    Step(usize),
    After(usize),
    Filter,
}

/// The place of condition `e` of level `level` in the flattened join `specs`.
fn place_of(e: &Expr, level: Option<usize>, specs: &JoinSpecs, from: &From) -> Place {
    let mut t = Vec::new();
    let known = tables_read(e, from, &mut t);
    let step_of = |k: usize| specs.steps.iter().position(|s| s.table == k);
    let last = t.iter().filter_map(|&k| step_of(k)).max();
    let Some(n) = level else {
        return match (known, last) {
            (true, None) if !is_const_in(e, from_width(from)) => Place::Driver,
            (true, Some(k)) if specs.steps[k].nest.is_none() => Place::Step(k),
            _ => Place::Filter,
        };
    };
    let nest = &specs.nests[n];
    let k = match (known, last) {
        (true, Some(k)) => k.max(nest.first),
        (true, None) => nest.first,
        (false, _) => nest.last,
    };
    debug_assert!(
        k <= nest.last,
        "a nest's condition reads only what is placed by its end"
    );
    let k = k.min(nest.last);
    // The nest holding step k just inside nest n (n itself when k is n's own).
    let mut inner = specs.steps[k].nest;
    while let Some(i) = inner {
        let parent = specs.nests[i].parent;
        if i == n || parent == Some(n) {
            break;
        }
        inner = parent;
    }
    match inner {
        Some(i) if i != n => Place::After(i),
        _ => Place::Step(k),
    }
}

/// Plans the join `specs` of `from`'s tables (see the module docs) with the compiled WHERE.
/// `in_memory[k]`: FROM table `k` is a derived table (its rows computed by the statement, no
/// key to look up).
pub(crate) fn plan_joins(
    from: &From,
    specs: JoinSpecs,
    where_: Option<&Expr>,
    in_memory: &[bool],
) -> JoinPlan {
    let mut pool: Vec<(Expr, Option<usize>)> = Vec::new();
    let mut conj = Vec::new();
    if let Some(w) = where_ {
        conjuncts(w, &mut conj);
    }
    let wheres: Vec<Expr> = std::mem::take(&mut conj);
    for (e, level) in &specs.conds {
        conjuncts(e, &mut conj);
        pool.extend(conj.drain(..).map(|e| (e, *level)));
    }
    pool.extend(wheres.into_iter().map(|e| (e, None)));
    let mut on: Vec<Vec<Expr>> = vec![Vec::new(); specs.steps.len()];
    let mut after: Vec<Vec<Expr>> = vec![Vec::new(); specs.nests.len()];
    let (mut driver_filter, mut rest) = (Vec::new(), Vec::new());
    for (e, level) in pool {
        match place_of(&e, level, &specs, from) {
            Place::Driver => driver_filter.push(e),
            Place::Step(k) => on[k].push(e),
            Place::After(n) => after[n].push(e),
            Place::Filter => rest.push(e),
        }
    }
    let mut placed = vec![specs.driver];
    let mut steps = Vec::with_capacity(specs.steps.len());
    for (k, (spec, conds)) in specs.steps.iter().zip(on).enumerate() {
        let def = from.tables[spec.table].0.clone();
        let offset = from.offsets[spec.table];
        let eqs: Vec<(usize, Expr)> = conds
            .iter()
            .filter_map(|e| equality(e, &def, offset, &placed, from))
            .collect();
        placed.push(spec.table);
        let access = match in_memory.get(spec.table) {
            Some(true) if !eqs.is_empty() => hash_of(&eqs),
            Some(true) => JoinAccess::Loop,
            _ => choose(&def, &eqs),
        };
        steps.push(JoinStep {
            table: def,
            position: spec.table,
            offset,
            on: and_all(conds),
            opens: specs.nests.iter().position(|n| n.first == k),
            access,
        });
    }
    let mut closing: Vec<Vec<usize>> = vec![Vec::new(); steps.len() + 1];
    let mut by_inner: Vec<usize> = (0..specs.nests.len()).collect();
    by_inner.sort_by_key(|&n| std::cmp::Reverse(specs.nests[n].first));
    for n in by_inner {
        closing[specs.nests[n].last + 1].push(n);
    }
    let nests = specs
        .nests
        .iter()
        .zip(after)
        .map(|(n, a)| Nest {
            first: n.first,
            last: n.last,
            after: and_all(a),
        })
        .collect();
    JoinPlan {
        driver: specs.driver,
        driver_table: from.tables[specs.driver].0.clone(),
        driver_offset: from.offsets[specs.driver],
        width: from_width(from),
        driver_filter: and_all(driver_filter),
        steps,
        nests,
        closing,
        filter: and_all(rest),
    }
}

/// The collation a hashed string column's keys are made under: its own (the equality's
/// comparison was checked to use it).
pub(crate) fn hash_collation(def: &TableDef, col: usize) -> onelog_engine::collation::Collation {
    def.columns[col]
        .string_collation()
        .unwrap_or(onelog_engine::collation::Collation::Binary)
}
