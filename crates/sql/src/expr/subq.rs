//! Subqueries in expressions: compiling `(SELECT ...)`, `[NOT] EXISTS`, `x [NOT] IN
//! (SELECT ...)` and `x op ANY|ALL (SELECT ...)` into [`Expr::Subq`] (the SELECT itself is
//! compiled by the compiler's [`SubqueryHook`], `plan::select::subquery`), and evaluating them on the
//! rows the statement's [`Subqueries`](super::env::Subqueries) give, with SQL's NULL rules.
//!
//! Invariants: a compiled subquery used as a value has exactly one column (1241 otherwise);
//! its placeholders are numbered after the enclosing expression's so far (textual order);
//! `IN` looks values up in a hash set when both sides are integers or both strings (equal
//! keys exactly when the values compare equal under the comparison's collation), and compares
//! row by row otherwise.
//!
//! Called by `compile` (the `Compiler::compile` arms) and `eval` (the `Expr::Subq` arm).

use std::cmp::Ordering;
use std::collections::HashSet;

use onelog_binlog::Value;
use onelog_protocol::errors;
use sqlparser::ast;

use onelog_engine::collation::Collation;

use super::collate::{compare_in, compare_op, for_comparison, key_bytes_in, CollRef};
use super::compile::{bin_op, comparison_name, Compiler, SubqInfo};
use super::env::{Env, InSet, SubRows};
use super::ir::{BinOp, Expr, Subq, SubqKind};
use super::numeric::truth;
use super::ops::bool_value;
use super::row::compare_rows;
use super::types::RType;
use crate::error::SqlError;

fn one_column() -> SqlError {
    SqlError::of(
        errors::ER_OPERAND_COLUMNS,
        "Operand should contain 1 column(s)",
    )
}

impl Compiler<'_> {
    /// Compiles a subquery expression (any of the forms in the module docs).
    pub(super) fn subquery(&mut self, e: &ast::Expr) -> Result<Expr, SqlError> {
        use ast::Expr as A;
        let Some(hook) = self.subq else {
            return Err(SqlError::unsupported("subqueries in this statement"));
        };
        if let A::Exists { subquery, negated } = e {
            if let Some(x) = self.exists_as_semi_join(subquery, *negated)? {
                return Ok(x);
            }
        }
        let (left, q, kind): (Option<&ast::Expr>, &ast::Query, _) = match e {
            A::Subquery(q) => (None, q, 0),
            A::Exists { subquery, negated } => (None, subquery, 1 + u8::from(*negated)),
            A::InSubquery {
                expr,
                subquery,
                negated,
            } => (Some(expr), subquery, 3 + u8::from(*negated)),
            A::AnyOp { left, right, .. } | A::AllOp { left, right, .. } => match &**right {
                A::Subquery(q) => (Some(left), q, 5),
                _ => return Err(SqlError::unsupported("ANY/ALL without a subquery")),
            },
            _ => return Err(SqlError::unsupported("this subquery")),
        };
        if left.is_some() && q.limit_clause.is_some() {
            return Err(SqlError::unsupported("LIMIT & IN/ALL/ANY/SOME subquery"));
        }
        if let Some(items) = left.and_then(super::row::row_items) {
            return self.row_subquery_in(&items, e, q);
        }
        let x = match left {
            Some(l) => Some(self.compile_in("IN/ALL/ANY", l)?),
            None => None,
        };
        let info = hook.compile_subquery(q, &*self, self.params)?;
        self.params = info.params;
        if info.correlated {
            self.correlated
                .set(self.correlated.get() || info.correlated);
        }
        if kind != 1 && kind != 2 && info.columns != 1 {
            return Err(one_column());
        }
        let coll = |c: &Compiler, x: &Expr, op: &str| -> Result<_, SqlError> {
            let ds = [c.derive(x), info.deriv];
            if ds[0].is_none() {
                return Ok(super::collate::CollRef::Connection);
            }
            Ok(for_comparison(&ds, op)?.unwrap_or(super::collate::CollRef::Connection))
        };
        let kind = match (kind, x) {
            (0, _) => SubqKind::Scalar,
            (1 | 2, _) => SubqKind::Exists(kind == 2),
            (3 | 4, Some(x)) => {
                let c = coll(self, &x, "IN")?;
                SubqKind::In(Box::new(x), kind == 4, c)
            }
            (_, Some(x)) => {
                let (op, all) = match e {
                    A::AnyOp { compare_op, .. } => (bin_op(compare_op)?, false),
                    A::AllOp { compare_op, .. } => (bin_op(compare_op)?, true),
                    _ => return Err(SqlError::unsupported("this subquery")),
                };
                let name = comparison_name(op);
                if name.is_empty() || op == BinOp::NullEq {
                    return Err(SqlError::syntax(&e.to_string()));
                }
                let c = coll(self, &x, name)?;
                SubqKind::Quantified(Box::new(x), op, all, c)
            }
            _ => return Err(SqlError::unsupported("this subquery")),
        };
        Ok(Expr::Subq(Box::new(Subq {
            id: info.id,
            kind,
            correlated: info.correlated,
            rtype: info.rtype,
            deriv: info.deriv,
        })))
    }

    /// `row [NOT] IN (SELECT ...)`, `row = ANY (...)`, `row <> ALL (...)` (`e`, its
    /// subquery `q`); any other quantified comparison of a row is 1241, as MariaDB.
    fn row_subquery_in(
        &mut self,
        items: &[&ast::Expr],
        e: &ast::Expr,
        q: &ast::Query,
    ) -> Result<Expr, SqlError> {
        use ast::Expr as A;
        let negated = match e {
            A::InSubquery { negated, .. } => *negated,
            A::AnyOp { compare_op, .. } if bin_op(compare_op)? == BinOp::Eq => false,
            A::AllOp { compare_op, .. } if bin_op(compare_op)? == BinOp::Ne => true,
            _ => return Err(one_column()),
        };
        let saved = std::mem::replace(&mut self.place, "IN/ALL/ANY");
        let x = self.row_operand(items);
        self.place = saved;
        let x = x?;
        let (info, colls) = self.row_subquery(q, &x, "=")?;
        Ok(Expr::Subq(Box::new(Subq {
            id: info.id,
            kind: SubqKind::RowIn(x, negated, colls),
            correlated: info.correlated,
            rtype: info.rtype,
            deriv: info.deriv,
        })))
    }

    /// `row op (SELECT ...)` or, `sub_first`, `(SELECT ...) op row` (`sub` the subquery
    /// operand): the row compared with the subquery's one row (`expr::row`).
    pub(super) fn row_subquery_cmp(
        &mut self,
        items: &[&ast::Expr],
        op: BinOp,
        sub: &ast::Expr,
        sub_first: bool,
    ) -> Result<Expr, SqlError> {
        let Some(q) = super::row::subquery_of(sub) else {
            return Err(one_column());
        };
        if self.subq.is_none() {
            return Err(SqlError::unsupported("subqueries in this statement"));
        }
        let name = comparison_name(op);
        // Compiled in textual order: the placeholders keep their numbers.
        let (x, info) = if sub_first {
            let info = self.compile_row_subquery(q)?;
            (self.row_operand(items)?, info)
        } else {
            let x = self.row_operand(items)?;
            (x, self.compile_row_subquery(q)?)
        };
        if info.columns == 1 {
            let (l, r) = ("row", super::row::rtype_name(info.rtype));
            let (l, r) = if sub_first { (r, l) } else { (l, r) };
            return Err(super::row::illegal_types(l, r, name));
        }
        if info.columns != x.len() {
            return Err(super::row::operand_columns(x.len()));
        }
        let colls = self.row_colls(&x, &info, name)?;
        let op = if sub_first {
            super::row::flipped(op)
        } else {
            op
        };
        Ok(Expr::Subq(Box::new(Subq {
            id: info.id,
            kind: SubqKind::RowCmp(x, op, colls),
            correlated: info.correlated,
            rtype: info.rtype,
            deriv: info.deriv,
        })))
    }

    /// The compiled items of a row operand.
    fn row_operand(&mut self, items: &[&ast::Expr]) -> Result<Vec<Expr>, SqlError> {
        let mut x = Vec::with_capacity(items.len());
        for i in items {
            x.push(self.compile_item(i)?);
        }
        Ok(x)
    }

    /// Compiles a subquery compared with a row of `x.len()` items (1241 for another count):
    /// its info and the collation of each pair.
    fn row_subquery(
        &mut self,
        q: &ast::Query,
        x: &[Expr],
        op: &str,
    ) -> Result<(SubqInfo, Vec<CollRef>), SqlError> {
        let info = self.compile_row_subquery(q)?;
        if info.columns != x.len() {
            return Err(super::row::operand_columns(x.len()));
        }
        let colls = self.row_colls(x, &info, op)?;
        Ok((info, colls))
    }

    /// Compiles a subquery operand of a row comparison.
    fn compile_row_subquery(&mut self, q: &ast::Query) -> Result<SubqInfo, SqlError> {
        let Some(hook) = self.subq else {
            return Err(SqlError::unsupported("subqueries in this statement"));
        };
        let info = hook.compile_subquery(q, &*self, self.params)?;
        self.params = info.params;
        if info.correlated {
            self.correlated.set(true);
        }
        Ok(info)
    }

    /// The collation each pair of a row and a subquery's columns compares under.
    fn row_colls(&self, x: &[Expr], info: &SubqInfo, op: &str) -> Result<Vec<CollRef>, SqlError> {
        let mut out = Vec::with_capacity(x.len());
        for (i, item) in x.iter().enumerate() {
            let ds = [self.derive(item), info.derivs.get(i).copied().flatten()];
            out.push(match (ds[0], ds[1]) {
                (Some(_), Some(_)) => for_comparison(&ds, op)?.unwrap_or(CollRef::Connection),
                (Some(d), None) | (None, Some(d)) => d.coll,
                (None, None) => CollRef::Connection,
            });
        }
        Ok(out)
    }

    /// `[NOT] EXISTS (SELECT ... FROM t WHERE t.c = o.x AND rest)` (one table, `o.x` a column
    /// of an enclosing query, `rest` not correlated, no grouping, aggregate or LIMIT) compiled
    /// as [`SubqKind::ExistsIn`] over the uncorrelated `SELECT t.c FROM t WHERE rest`, which
    /// runs once and is probed through a hash set, instead of running the subquery once per
    /// enclosing row (MariaDB converts such an EXISTS to a semi-join too). Only when `t.c` and
    /// `o.x` are both integers or both strings, where the hash set's equality is `=`'s; None
    /// (compile it as written) otherwise.
    fn exists_as_semi_join(
        &mut self,
        q: &ast::Query,
        negated: bool,
    ) -> Result<Option<Expr>, SqlError> {
        let Some((outer, inner)) = semi_join_shape(q) else {
            return Ok(None);
        };
        let Some(hook) = self.subq else {
            return Ok(None);
        };
        let Ok(x) = self.compile(&outer) else {
            return Ok(None);
        };
        let Ok(info) = hook.compile_subquery(&inner, &*self, self.params) else {
            return Ok(None);
        };
        let kinds = |c: &Compiler| match &x {
            Expr::Col(i) => c.column_def(*i).map(|d| {
                if d.ty.is_integer() {
                    Some(true)
                } else {
                    d.string_collation().map(|_| false)
                }
            }),
            _ => None,
        };
        let same = match (kinds(self).flatten(), info.rtype) {
            (Some(true), RType::Int | RType::UInt) => true,
            (Some(false), RType::Str(_)) => info.deriv.is_some(),
            _ => false,
        };
        // A correlated result (the guess of which side is outer was wrong) or other types:
        // the plan compiled last stays unused, the EXISTS is compiled as written.
        if info.correlated || info.columns != 1 || info.params != self.params || !same {
            return Ok(None);
        }
        let c = match for_comparison(&[self.derive(&x), info.deriv], "=") {
            Ok(c) => c.unwrap_or(super::collate::CollRef::Connection),
            Err(_) => return Ok(None),
        };
        Ok(Some(Expr::Subq(Box::new(Subq {
            id: info.id,
            kind: SubqKind::ExistsIn(Box::new(x), negated, c),
            correlated: false,
            rtype: info.rtype,
            deriv: info.deriv,
        }))))
    }
}

/// The parts of an EXISTS subquery [`Compiler::exists_as_semi_join`] can run as a semi-join:
/// (the enclosing query's column `o.x`, `SELECT t.c FROM t WHERE rest`). The inner column
/// must be qualified with the table's name or alias and the outer one with another name;
/// the statement must hold no placeholder (their numbering would move).
fn semi_join_shape(q: &ast::Query) -> Option<(ast::Expr, ast::Query)> {
    use ast::Expr as A;
    if q.with.is_some() || q.limit_clause.is_some() || q.fetch.is_some() || !q.locks.is_empty() {
        return None;
    }
    let ast::SetExpr::Select(sel) = &*q.body else {
        return None;
    };
    let plain_items = sel.projection.iter().all(|i| match i {
        ast::SelectItem::Wildcard(_) => true,
        ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => {
            matches!(e, A::Value(_) | A::Identifier(_) | A::CompoundIdentifier(_))
        }
        _ => false,
    });
    let grouped = !matches!(&sel.group_by, ast::GroupByExpr::Expressions(v, m) if v.is_empty() && m.is_empty());
    if !plain_items
        || grouped
        || sel.having.is_some()
        || !sel.named_window.is_empty()
        || sel.into.is_some()
        || sel.from.len() != 1
        || !sel.from[0].joins.is_empty()
        || q.to_string().contains('?')
    {
        return None;
    }
    let ast::TableFactor::Table { name, alias, .. } = &sel.from[0].relation else {
        return None;
    };
    let inner_name = match alias {
        Some(a) => a.name.value.clone(),
        None => super::compile::object_name_parts(name).pop()?,
    };
    let qualifier = |e: &A| match e {
        A::CompoundIdentifier(p) if p.len() == 2 => Some(p[0].value.clone()),
        _ => None,
    };
    let mut conjuncts = Vec::new();
    split_and(sel.selection.as_ref()?, &mut conjuncts);
    let mut found = None;
    for (i, c) in conjuncts.iter().enumerate() {
        let A::BinaryOp {
            left,
            op: ast::BinaryOperator::Eq,
            right,
        } = c
        else {
            continue;
        };
        let (lq, rq) = (qualifier(left), qualifier(right));
        let is_inner = |q: &Option<String>| {
            q.as_ref()
                .is_some_and(|q| q.eq_ignore_ascii_case(&inner_name))
        };
        let is_outer = |q: &Option<String>| {
            q.as_ref()
                .is_some_and(|q| !q.eq_ignore_ascii_case(&inner_name))
        };
        if is_inner(&lq) && is_outer(&rq) {
            found = Some((i, (**right).clone(), (**left).clone()));
        } else if is_inner(&rq) && is_outer(&lq) {
            found = Some((i, (**left).clone(), (**right).clone()));
        } else {
            continue;
        }
        break;
    }
    let (at, outer, inner_col) = found?;
    let rest = conjuncts
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != at)
        .map(|(_, c)| (*c).clone())
        .reduce(|a, b| A::BinaryOp {
            left: Box::new(a),
            op: ast::BinaryOperator::And,
            right: Box::new(b),
        });
    let mut sel = (**sel).clone();
    sel.projection = vec![ast::SelectItem::UnnamedExpr(inner_col)];
    sel.selection = rest;
    sel.distinct = None;
    let mut inner = q.clone();
    inner.order_by = None;
    inner.body = Box::new(ast::SetExpr::Select(Box::new(sel)));
    Some((outer, inner))
}

/// The top-level AND operands of `e` (parentheses looked through), in order.
pub(crate) fn split_and<'e>(e: &'e ast::Expr, out: &mut Vec<&'e ast::Expr>) {
    match e {
        ast::Expr::BinaryOp {
            left,
            op: ast::BinaryOperator::And,
            right,
        } => {
            split_and(left, out);
            split_and(right, out);
        }
        ast::Expr::Nested(x) => split_and(x, out),
        _ => out.push(e),
    }
}

impl Subq {
    /// Evaluates the subquery expression on the enclosing row `row`.
    pub(super) fn eval(&self, row: &[Value], aggs: &[Value], env: &Env) -> Result<Value, SqlError> {
        let Some(rt) = env.subq else {
            return Err(SqlError::unsupported("subqueries here"));
        };
        // The left operand first (textual order), then the subquery's rows.
        let x = match &self.kind {
            SubqKind::In(x, ..) | SubqKind::Quantified(x, ..) | SubqKind::ExistsIn(x, ..) => {
                Some(x.eval_with(row, aggs, env)?)
            }
            _ => None,
        };
        let row_values = match &self.kind {
            SubqKind::RowIn(items, ..) | SubqKind::RowCmp(items, ..) => Some(
                items
                    .iter()
                    .map(|i| i.eval_with(row, aggs, env))
                    .collect::<Result<Vec<_>, _>>()?,
            ),
            _ => None,
        };
        let sub = rt.rows(self.id, row, env)?;
        Ok(match &self.kind {
            SubqKind::Scalar => match sub.rows.as_slice() {
                [] => Value::Null,
                [one] => one.first().cloned().unwrap_or(Value::Null),
                _ => return Err(more_than_one_row()),
            },
            SubqKind::Exists(neg) => Value::Int(i64::from(sub.rows.is_empty() == *neg)),
            SubqKind::In(_, neg, c) => {
                let v = x.unwrap_or(Value::Null);
                let r = in_rows(&v, &sub, c.resolve(env.coll));
                bool_value(r.map(|b| b != *neg))
            }
            SubqKind::ExistsIn(_, neg, c) => {
                let v = x.unwrap_or(Value::Null);
                let found = in_rows(&v, &sub, c.resolve(env.coll)) == Some(true);
                Value::Int(i64::from(found != *neg))
            }
            SubqKind::Quantified(_, op, all, c) => {
                let v = x.unwrap_or(Value::Null);
                bool_value(quantified(&v, *op, *all, &sub.rows, c.resolve(env.coll)))
            }
            SubqKind::RowIn(_, neg, cs) => {
                let colls: Vec<Collation> = cs.iter().map(|c| c.resolve(env.coll)).collect();
                let l = row_values.unwrap_or_default();
                bool_value(row_in(&l, &sub.rows, &colls).map(|b| b != *neg))
            }
            SubqKind::RowCmp(_, op, cs) => match sub.rows.as_slice() {
                [] => Value::Null,
                [one] => {
                    let colls: Vec<Collation> = cs.iter().map(|c| c.resolve(env.coll)).collect();
                    let l = row_values.unwrap_or_default();
                    if one.len() < l.len() {
                        return Err(super::row::operand_columns(l.len()));
                    }
                    bool_value(compare_rows(*op, &l, &one[..l.len()], &colls))
                }
                _ => return Err(more_than_one_row()),
            },
        })
    }
}

/// 1242.
fn more_than_one_row() -> SqlError {
    SqlError::of(
        errors::ER_SUBQUERY_NO_1_ROW,
        "Subquery returns more than 1 row",
    )
}

/// `l IN (rows)` for a row: true when a row is equal, else NULL when a comparison is NULL
/// (a row with a NULL pair and no differing one), else false (no rows: false).
fn row_in(l: &[Value], rows: &[Vec<Value>], colls: &[Collation]) -> Option<bool> {
    let mut saw_null = false;
    for r in rows {
        if r.len() < l.len() {
            continue;
        }
        match compare_rows(BinOp::Eq, l, &r[..l.len()], colls) {
            Some(true) => return Some(true),
            None => saw_null = true,
            Some(false) => {}
        }
    }
    if saw_null {
        None
    } else {
        Some(false)
    }
}

/// `v IN (rows)`: true when a value equals it, else NULL when `v` or some value is NULL
/// (and there are rows), else false.
fn in_rows(v: &Value, sub: &SubRows, coll: onelog_engine::collation::Collation) -> Option<bool> {
    if sub.rows.is_empty() {
        return Some(false);
    }
    if *v == Value::Null {
        return None;
    }
    let set = sub.set.get_or_init(|| in_set(&sub.rows, coll));
    if let Some(set) = set {
        if let Some(k) = set_key(v, set.ints, coll) {
            return if set.keys.contains(&k) {
                Some(true)
            } else if set.has_null {
                None
            } else {
                Some(false)
            };
        }
    }
    let mut saw_null = false;
    for r in &sub.rows {
        let w = r.first().unwrap_or(&Value::Null);
        match compare_in(coll, v, w) {
            Some(Ordering::Equal) => return Some(true),
            None => saw_null = true,
            _ => {}
        }
    }
    if saw_null {
        None
    } else {
        Some(false)
    }
}

/// The key of `v` in a set of integers (`ints`) or strings; None when `v` is of another
/// kind (then it is compared row by row).
fn set_key(v: &Value, ints: bool, coll: onelog_engine::collation::Collation) -> Option<Vec<u8>> {
    match (v, ints) {
        (Value::Int(i), true) => Some(i128::from(*i).to_le_bytes().to_vec()),
        (Value::UInt(u), true) => Some(i128::from(*u).to_le_bytes().to_vec()),
        (Value::Bytes(_), false) => {
            let mut k = Vec::new();
            key_bytes_in(coll, v, &mut k);
            Some(k)
        }
        _ => None,
    }
}

/// The hash set of the rows' first values, when all are integers or all strings.
fn in_set(rows: &[Vec<Value>], coll: onelog_engine::collation::Collation) -> Option<InSet> {
    let first = rows
        .iter()
        .filter_map(|r| r.first())
        .find(|v| **v != Value::Null)?;
    let ints = matches!(first, Value::Int(_) | Value::UInt(_));
    let mut set = InSet {
        ints,
        keys: HashSet::with_capacity(rows.len()),
        has_null: false,
    };
    for r in rows {
        let v = r.first().unwrap_or(&Value::Null);
        if *v == Value::Null {
            set.has_null = true;
            continue;
        }
        set.keys.insert(set_key(v, ints, coll)?);
    }
    Some(set)
}

/// `v op ANY|ALL (rows)`: ANY is true when one comparison is, ALL when none is false (true
/// on no rows); otherwise NULL when a comparison is NULL, else the other answer.
fn quantified(
    v: &Value,
    op: BinOp,
    all: bool,
    rows: &[Vec<Value>],
    coll: onelog_engine::collation::Collation,
) -> Option<bool> {
    let mut saw_null = false;
    for r in rows {
        let w = r.first().unwrap_or(&Value::Null);
        let c = compare_op(op, coll, v, w).and_then(|x| truth(&x));
        match c {
            Some(b) if b != all => return Some(b),
            None => saw_null = true,
            _ => {}
        }
    }
    if saw_null {
        None
    } else {
        Some(all)
    }
}

#[cfg(test)]
mod tests {
    use super::semi_join_shape;
    use sqlparser::ast;

    fn exists_query(sql: &str) -> ast::Query {
        let stmts = sqlparser::parser::Parser::parse_sql(&sqlparser::dialect::MySqlDialect {}, sql)
            .expect("parses");
        let ast::Statement::Query(q) = &stmts[0] else {
            panic!("a query")
        };
        let ast::SetExpr::Select(sel) = &*q.body else {
            panic!("a select")
        };
        match sel.selection.as_ref() {
            Some(ast::Expr::Exists { subquery, .. }) => (**subquery).clone(),
            other => panic!("an EXISTS: {other:?}"),
        }
    }

    fn shape(sql: &str) -> Option<(String, String)> {
        semi_join_shape(&exists_query(sql)).map(|(o, q)| (o.to_string(), q.to_string()))
    }

    #[test]
    fn exists_with_one_outer_equality_becomes_a_semi_join() {
        assert_eq!(
            shape(
                "SELECT 1 FROM p WHERE EXISTS (SELECT 1 FROM ch WHERE ch.pid = p.id AND ch.v > 9)"
            ),
            Some(("p.id".into(), "SELECT ch.pid FROM ch WHERE ch.v > 9".into()))
        );
        assert_eq!(
            shape("SELECT 1 FROM p WHERE EXISTS (SELECT * FROM ch AS c WHERE (p.id = c.pid))"),
            Some(("p.id".into(), "SELECT c.pid FROM ch AS c".into()))
        );
        // Aggregates, grouping, LIMIT, joins, placeholders, unqualified columns: as written.
        for sql in [
            "SELECT 1 FROM p WHERE EXISTS (SELECT COUNT(*) FROM ch WHERE ch.pid = p.id)",
            "SELECT 1 FROM p WHERE EXISTS (SELECT 1 FROM ch WHERE ch.pid = p.id GROUP BY ch.v)",
            "SELECT 1 FROM p WHERE EXISTS (SELECT 1 FROM ch WHERE ch.pid = p.id LIMIT 0)",
            "SELECT 1 FROM p WHERE EXISTS (SELECT 1 FROM ch JOIN q ON q.a = ch.a WHERE ch.pid = p.id)",
            "SELECT 1 FROM p WHERE EXISTS (SELECT 1 FROM ch WHERE ch.pid = p.id AND ch.v = ?)",
            "SELECT 1 FROM p WHERE EXISTS (SELECT 1 FROM ch WHERE pid = id)",
            "SELECT 1 FROM p WHERE EXISTS (SELECT 1 FROM ch WHERE ch.pid = p.id OR ch.v = 1)",
        ] {
            assert_eq!(shape(sql), None, "{sql}");
        }
    }
}
