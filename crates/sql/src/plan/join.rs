//! Join planning: how each joined table's rows are found for a partial joined row, and where
//! each WHERE conjunct is tested.
//!
//! The tables nest in FROM order, except that a leading `A RIGHT JOIN B` is run as B driving
//! and A left-joined (the joined row keeps FROM order: every table has a fixed column slot,
//! `From::offsets`). For each joined table, in nesting order, [`plan_joins`] chooses:
//! - an **index lookup** ([`JoinAccess::Lookup`]) when equalities `t.col = expr` cover a prefix
//!   of one of its keys (primary key first, then unique, then the longest prefix) and `expr`
//!   reads only tables already placed; the key values are computed per partial row;
//! - a **hash join** ([`JoinAccess::Hash`]) when there are such equalities but no key serves
//!   them: the table is read once and hashed on those columns;
//! - otherwise a **nested loop** over its rows, read once.
//!
//! The equalities come from the step's ON and, for an inner join, from the WHERE conjuncts
//! too. A WHERE conjunct is tested as early as the rows it reads are final: conjuncts on the
//! driving table alone filter its rows before any join; a conjunct whose last table is an
//! inner join step joins that step's condition; the others stay for the joined row.
//!
//! Invariants: an access never finds fewer rows than its condition selects (the step's whole
//! condition is still tested on every row it yields, and a key value that cannot be converted
//! exactly to its column falls back to every row of the table); a conjunct moved out of the
//! WHERE is tested exactly once per row that reaches it; moving it never changes which rows a
//! LEFT JOIN null-extends (conjuncts reading a left-joined table stay in the WHERE).

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
    /// Its ON condition with the WHERE conjuncts moved to it (inner joins), tested on the
    /// partial row once the table's columns are in place.
    pub on: Option<Expr>,
    /// LEFT JOIN: a partial row without a match gets NULLs for this table.
    pub left: bool,
    pub access: JoinAccess,
}

/// The nesting of a join.
#[derive(Debug, Clone)]
pub(crate) struct JoinPlan {
    /// The FROM table that drives the loops (0, or 1 for a leading RIGHT JOIN) and where its
    /// columns start.
    pub driver: usize,
    pub driver_table: Arc<TableDef>,
    pub driver_offset: usize,
    /// The joined row's width (every FROM table's columns).
    pub width: usize,
    /// WHERE conjuncts that read the driving table alone: tested on its rows (laid in the
    /// joined row) before they join.
    pub driver_filter: Option<Expr>,
    pub steps: Vec<JoinStep>,
    /// What is left of the WHERE, tested on each complete joined row.
    pub filter: Option<Expr>,
}

/// A join step before planning: FROM table `table` joined with `on`.
pub(crate) struct StepSpec {
    pub table: usize,
    pub on: Option<Expr>,
    pub left: bool,
}

/// The joined row's width: the FROM tables' columns (an enclosing query's values follow them
/// in a correlated subquery, fixed while it runs).
fn from_width(from: &From) -> usize {
    from.tables.iter().map(|(t, _)| t.columns.len()).sum()
}

/// The tables (FROM positions) whose columns `e` reads, or None when `e` holds something
/// whose dependencies are not known here (aggregates, row-independent values are fine).
fn tables_read(e: &Expr, from: &From, out: &mut Vec<usize>) -> bool {
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

/// Plans the join of `from`'s tables: `driver` first, then `specs` in nesting order (see the
/// module docs), with the compiled WHERE. `in_memory[k]`: FROM table `k` is a derived table
/// (its rows computed by the statement, no key to look up).
pub(crate) fn plan_joins(
    from: &From,
    driver: usize,
    specs: Vec<StepSpec>,
    where_: Option<&Expr>,
    in_memory: &[bool],
) -> JoinPlan {
    let mut conj = Vec::new();
    if let Some(w) = where_ {
        conjuncts(w, &mut conj);
    }
    // Each conjunct's tables (None: unknown, stays in the WHERE).
    let reads: Vec<Option<Vec<usize>>> = conj
        .iter()
        .map(|e| {
            let mut t = Vec::new();
            tables_read(e, from, &mut t).then_some(t)
        })
        .collect();
    let mut taken = vec![false; conj.len()];
    let mut driver_filter = Vec::new();
    for (i, r) in reads.iter().enumerate() {
        if let Some(t) = r {
            if t.iter().all(|&k| k == driver) && !is_const_in(&conj[i], from_width(from)) {
                taken[i] = true;
                driver_filter.push(conj[i].clone());
            }
        }
    }
    let mut placed = vec![driver];
    let mut steps = Vec::with_capacity(specs.len());
    for spec in specs {
        let def = from.tables[spec.table].0.clone();
        let offset = from.offsets[spec.table];
        let mut conds = Vec::new();
        if let Some(on) = &spec.on {
            conjuncts(on, &mut conds);
        }
        placed.push(spec.table);
        if !spec.left {
            for (i, r) in reads.iter().enumerate() {
                let Some(t) = r else { continue };
                if !taken[i] && t.contains(&spec.table) && t.iter().all(|k| placed.contains(k)) {
                    taken[i] = true;
                    conds.push(conj[i].clone());
                }
            }
        }
        let before = &placed[..placed.len() - 1];
        let eqs: Vec<(usize, Expr)> = conds
            .iter()
            .filter_map(|e| equality(e, &def, offset, before, from))
            .collect();
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
            left: spec.left,
            access,
        });
    }
    let rest = conj
        .into_iter()
        .zip(&taken)
        .filter(|(_, t)| !**t)
        .map(|(e, _)| e)
        .collect();
    JoinPlan {
        driver,
        driver_table: from.tables[driver].0.clone(),
        driver_offset: from.offsets[driver],
        width: from_width(from),
        driver_filter: and_all(driver_filter),
        steps,
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
