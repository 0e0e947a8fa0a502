//! FROM, compiled: the join tree (`bind::tables::FromNode`) becomes the flattened join the
//! planner takes (`plan::join::JoinSpecs`), with its ON conditions compiled, `USING` and
//! `NATURAL` turned into equalities, and the names they merge.
//!
//! MariaDB's rules, which this follows:
//! - `X RIGHT JOIN Y ON c` runs as `Y LEFT JOIN (X) ON c`: the whole left side becomes an
//!   outer-join nest (`plan::join`), while the joined row and `SELECT *` keep the written
//!   order.
//! - `X JOIN Y USING (a, b)` joins on `X.a = Y.a AND X.b = Y.b`; the common columns show
//!   once: `SELECT *` lists them first (in X's column order), then X's other columns, then
//!   Y's; an unqualified `a` reads X's `a` (Y's for a RIGHT JOIN, the side whose rows are
//!   kept), `X.a` and `Y.a` still read each table's own. `NATURAL` is `USING` of every
//!   name both sides show. A USING name one side lacks is 1054 (`FROM`), one a side
//!   shows twice 1052.
//! - An ON condition reads only the tables of its two operands (1054 otherwise).
//!
//! Invariants: every FROM table is flattened exactly once, the first in written order's
//! leftmost leaf drives; a merged name maps to a column one of its operands shows
//! (`Compiler::merged`); the conditions of a nest read only tables placed by its end.
//! Called by `plan::select::compile_in` and `plan::multi_dml`.

use onelog_protocol::errors;
use sqlparser::ast;

use crate::bind::tables::{From, FromNode, JoinCond, JoinSide};
use crate::error::SqlError;
use crate::expr::{Compiler, Expr};
use crate::plan::join::{tables_read, JoinSpecs, NestSpec, StepSpec};

/// A FROM clause compiled for the planner and for the select list.
pub(crate) struct Joins {
    pub specs: JoinSpecs,
    /// The joined-row columns `SELECT *` lists, in MariaDB's order.
    pub star: Vec<usize>,
    /// The FROM positions an outer join may null-extend.
    pub nullable: Vec<usize>,
}

/// A column an operand shows: its name and the joined-row column it reads.
type Shown = Vec<(String, usize)>;

struct Flattener<'c, 'a> {
    c: &'c mut Compiler<'a>,
    from: &'c From,
    order: Vec<usize>,
    level: Vec<Option<usize>>,
    nests: Vec<NestSpec>,
    conds: Vec<(Expr, Option<usize>)>,
}

/// Compiles `tree` over `from`'s tables (see the module docs); the names USING and NATURAL
/// merge are left in `c.merged` for the rest of the statement.
pub(crate) fn compile_from(
    c: &mut Compiler<'_>,
    tree: &FromNode<'_>,
    from: &From,
) -> Result<Joins, SqlError> {
    let mut f = Flattener {
        c,
        from,
        order: Vec::with_capacity(from.tables.len()),
        level: Vec::with_capacity(from.tables.len()),
        nests: Vec::new(),
        conds: Vec::new(),
    };
    let shown = f.node(tree, None)?;
    debug_assert_eq!(f.order.len(), from.tables.len(), "each FROM table once");
    debug_assert!(
        f.level.first().is_none_or(|l| l.is_none()),
        "the driver is outermost"
    );
    let nullable = f
        .order
        .iter()
        .zip(&f.level)
        .filter(|(_, l)| l.is_some())
        .map(|(k, _)| *k)
        .collect();
    let driver = f.order.first().copied().unwrap_or(0);
    // Steps are numbered after the driver.
    let steps = f.order[1..]
        .iter()
        .zip(&f.level[1..])
        .map(|(&table, &nest)| StepSpec { table, nest })
        .collect();
    for n in &mut f.nests {
        n.first -= 1;
        n.last -= 1;
    }
    Ok(Joins {
        specs: JoinSpecs {
            driver,
            steps,
            nests: f.nests,
            conds: f.conds,
        },
        star: shown.into_iter().map(|(_, i)| i).collect(),
        nullable,
    })
}

impl Flattener<'_, '_> {
    /// Flattens `node` inside nest `level`; what it shows to `SELECT *` and to a USING.
    fn node(&mut self, node: &FromNode<'_>, level: Option<usize>) -> Result<Shown, SqlError> {
        let j = match node {
            FromNode::Table(k) => {
                self.order.push(*k);
                self.level.push(level);
                let off = self.from.offsets[*k];
                let t = &self.from.tables[*k].0;
                return Ok(t
                    .columns
                    .iter()
                    .enumerate()
                    .map(|(i, c)| (c.name.clone(), off + i))
                    .collect());
            }
            FromNode::Join(j) => j,
        };
        let start = self.order.len();
        // The side whose rows are kept runs first.
        let (kept, other) = match j.side {
            JoinSide::Right => (&j.right, &j.left),
            _ => (&j.left, &j.right),
        };
        let first = self.node(kept, level)?;
        let inner = match j.side {
            JoinSide::Inner => level,
            _ => {
                self.nests.push(NestSpec {
                    parent: level,
                    first: self.order.len(),
                    last: 0,
                });
                Some(self.nests.len() - 1)
            }
        };
        let second = self.node(other, inner)?;
        if let (Some(n), JoinSide::Left | JoinSide::Right) = (inner, j.side) {
            self.nests[n].last = self.order.len() - 1;
        }
        let common = match &j.cond {
            JoinCond::None => None,
            JoinCond::On(e) => {
                self.c.place = "ON";
                let x = super::subquery::compile_on(self.c, e);
                match x.and_then(|x| self.check_on(e, &x, start).map(|()| x)) {
                    Ok(x) => self.conds.push((x, inner)),
                    // A bad name waits for the select list and the WHERE (MariaDB's order).
                    Err(err) if err.is_name_error() => {
                        self.c.deferred_on.get_or_insert(err);
                    }
                    Err(err) => return Err(err),
                }
                None
            }
            JoinCond::Using(names) => Some(using(names, &first, &second)?),
            JoinCond::Natural => Some(natural(&first, &second)?),
        };
        let Some(common) = common else {
            return Ok(match j.side {
                JoinSide::Right => second.into_iter().chain(first).collect(),
                _ => first.into_iter().chain(second).collect(),
            });
        };
        let mut shown = Vec::with_capacity(first.len() + second.len());
        for &(a, b) in &common {
            let eq = self.c.column_equality(first[a].1, second[b].1)?;
            self.conds.push((eq, inner));
            self.c.merge(second[b].1, first[a].1);
            shown.push(first[a].clone());
        }
        let used_first: Vec<usize> = common.iter().map(|p| p.0).collect();
        let used_second: Vec<usize> = common.iter().map(|p| p.1).collect();
        let rest = |v: Shown, used: &[usize]| -> Shown {
            v.into_iter()
                .enumerate()
                .filter(|(i, _)| !used.contains(i))
                .map(|(_, x)| x)
                .collect()
        };
        shown.extend(rest(first, &used_first));
        shown.extend(rest(second, &used_second));
        Ok(shown)
    }

    /// 1054 when an ON condition (`e`, compiled `x`) reads a table outside its operands
    /// (flattened from `start`), naming the first such column as written (MariaDB 10.11.14).
    fn check_on(&self, e: &ast::Expr, x: &Expr, start: usize) -> Result<(), SqlError> {
        let mut t = Vec::new();
        if !tables_read(x, self.from, &mut t) {
            return Ok(());
        }
        let ours = &self.order[start..];
        let Some(&k) = t.iter().find(|k| !ours.contains(k)) else {
            return Ok(());
        };
        let (table, qualifier) = (&self.from.tables[k].0, &self.from.tables[k].1);
        let mut name = None;
        let _ = ast::visit_expressions(e, |n: &ast::Expr| {
            let parts: Vec<&str> = match n {
                ast::Expr::Identifier(i) => vec![&i.value],
                ast::Expr::CompoundIdentifier(p) => p.iter().map(|i| i.value.as_str()).collect(),
                _ => return std::ops::ControlFlow::Continue(()),
            };
            let hit = match parts.as_slice() {
                [c] => table.column_index(c).is_some(),
                [.., q, c] => q.eq_ignore_ascii_case(qualifier) && table.column_index(c).is_some(),
                [] => false,
            };
            if hit {
                name = Some(parts.join("."));
                return std::ops::ControlFlow::Break(());
            }
            std::ops::ControlFlow::Continue(())
        });
        let name = name.unwrap_or_else(|| format!("{qualifier}.*"));
        Err(SqlError::unknown_column(&name, "ON"))
    }
}

/// The positions in `side` of `name` (case-insensitively).
fn positions(side: &Shown, name: &str) -> Vec<usize> {
    side.iter()
        .enumerate()
        .filter(|(_, (n, _))| n.eq_ignore_ascii_case(name))
        .map(|(i, _)| i)
        .collect()
}

/// The one position of `name` in `side`: 1054 when it has none, 1052 when several.
fn one(side: &Shown, name: &str) -> Result<usize, SqlError> {
    match positions(side, name).as_slice() {
        [i] => Ok(*i),
        [] => Err(SqlError::unknown_column(name, "FROM")),
        _ => Err(ambiguous(name)),
    }
}

fn ambiguous(name: &str) -> SqlError {
    SqlError::of(
        errors::ER_NON_UNIQ_ERROR,
        format!("Column '{name}' in FROM is ambiguous"),
    )
}

/// `USING (names)`: the pairs (position in `first`, position in `second`) in `first`'s order.
fn using(names: &[String], first: &Shown, second: &Shown) -> Result<Vec<(usize, usize)>, SqlError> {
    let mut pairs = Vec::with_capacity(names.len());
    // A name either side lacks is reported before one a side shows twice.
    if let Some(n) = names
        .iter()
        .find(|n| positions(first, n).is_empty() || positions(second, n).is_empty())
    {
        return Err(SqlError::unknown_column(n, "FROM"));
    }
    for name in names {
        let a = one(first, name)?;
        let b = one(second, name)?;
        if !pairs.iter().any(|&(x, _)| x == a) {
            pairs.push((a, b));
        }
    }
    pairs.sort_unstable();
    Ok(pairs)
}

/// `NATURAL`: every name both sides show, paired as [`using`] pairs them.
fn natural(first: &Shown, second: &Shown) -> Result<Vec<(usize, usize)>, SqlError> {
    let mut pairs = Vec::new();
    for (a, (name, _)) in first.iter().enumerate() {
        if positions(second, name).is_empty() {
            continue;
        }
        if positions(first, name).len() > 1 {
            return Err(ambiguous(name));
        }
        pairs.push((a, one(second, name)?));
    }
    Ok(pairs)
}
