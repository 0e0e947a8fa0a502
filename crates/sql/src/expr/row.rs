//! Row constructors `(a, b, ...)` / `ROW(a, b, ...)` compared with each other
//! (`(a, b) < (c, d)`, `(a, b) [NOT] IN ((1, 2), (3, 4))`), compiled into pairwise
//! comparisons, and the comparison of a row with a row a subquery gives (`expr::subq`'s
//! [`SubqKind::RowCmp`](super::ir::SubqKind) and `RowIn`), evaluated by [`compare_rows`].
//!
//! MariaDB's rules (`Arg_comparator::compare_row`), which both forms follow: `=` is false
//! when a pair differs, else NULL when a pair holds a NULL, else true (`<>` its negation);
//! `<=>` is true when every pair is null-safe equal; `<`, `<=`, `>`, `>=` compare pair by
//! pair, the first unequal pair decides and a NULL before it makes the answer NULL.
//!
//! Invariants: both rows have the same number of items (1241 `Operand should contain N
//! column(s)` otherwise, N the left row's); a row compared with a single value is 4078; the
//! items are compiled in textual order (placeholders keep their numbers).
//!
//! Called by `compile` (the BinaryOp and IN-list arms, through [`Compiler::row_comparison`]
//! and [`Compiler::row_in_list`]) and `subq` (compiling and evaluating row subqueries).

use std::cmp::Ordering;

use onelog_binlog::Value;
use onelog_engine::collation::Collation;
use onelog_protocol::errors;
use sqlparser::ast;

use super::collate::compare_in;
use super::compile::Compiler;
use super::ir::{BinOp, Expr};
use super::types::RType;
use crate::error::SqlError;

/// 1241 `Operand should contain n column(s)`.
pub(super) fn operand_columns(n: usize) -> SqlError {
    SqlError::of(
        errors::ER_OPERAND_COLUMNS,
        format!("Operand should contain {n} column(s)"),
    )
}

/// 4078 `Illegal parameter data types l and r for operation 'op'`.
pub(super) fn illegal_types(l: &str, r: &str, op: &str) -> SqlError {
    SqlError::of(
        errors::ER_ILLEGAL_PARAMETER_DATA_TYPES2_FOR_OPERATION,
        format!("Illegal parameter data types {l} and {r} for operation '{op}'"),
    )
}

/// The items of a row constructor (two or more); None for any other expression.
pub(super) fn row_items(e: &ast::Expr) -> Option<Vec<&ast::Expr>> {
    match e {
        ast::Expr::Tuple(v) if v.len() >= 2 => Some(v.iter().collect()),
        ast::Expr::Nested(x) => row_items(x),
        ast::Expr::Function(f) if f.name.to_string().eq_ignore_ascii_case("ROW") => {
            let ast::FunctionArguments::List(l) = &f.args else {
                return None;
            };
            let items: Option<Vec<&ast::Expr>> = l
                .args
                .iter()
                .map(|a| match a {
                    ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x)) => Some(x),
                    _ => None,
                })
                .collect();
            items.filter(|v| v.len() >= 2)
        }
        _ => None,
    }
}

/// A subquery operand (`(SELECT ...)`, parentheses looked through).
pub(super) fn subquery_of(e: &ast::Expr) -> Option<&ast::Query> {
    match e {
        ast::Expr::Subquery(q) => Some(q),
        ast::Expr::Nested(x) => subquery_of(x),
        _ => None,
    }
}

/// The comparison operators a row takes.
pub(super) fn is_row_op(op: BinOp) -> bool {
    matches!(
        op,
        BinOp::Eq | BinOp::NullEq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
    )
}

/// `a op b` read as `b op' a`.
pub(super) fn flipped(op: BinOp) -> BinOp {
    match op {
        BinOp::Lt => BinOp::Gt,
        BinOp::Le => BinOp::Ge,
        BinOp::Gt => BinOp::Lt,
        BinOp::Ge => BinOp::Le,
        other => other,
    }
}

impl Compiler<'_> {
    /// `row op row` (None when neither operand is a row constructor): the pairwise
    /// comparisons combined by the module docs' rules; a row with a subquery operand is a
    /// row subquery (`subq`).
    pub(super) fn row_comparison(
        &mut self,
        left: &ast::Expr,
        op: BinOp,
        right: &ast::Expr,
    ) -> Result<Option<Expr>, SqlError> {
        let (lrow, rrow) = (row_items(left), row_items(right));
        if lrow.is_none() && rrow.is_none() {
            return Ok(None);
        }
        let name = super::compile::comparison_name(op);
        if !is_row_op(op) {
            let sign = match op {
                BinOp::Add => "+",
                BinOp::Sub => "-",
                BinOp::Mul => "*",
                BinOp::Div => "/",
                BinOp::Mod => "%",
                _ => return Err(operand_columns(1)),
            };
            let (l, r) = match (lrow.is_some(), rrow.is_some()) {
                (true, true) => ("row".to_string(), "row".to_string()),
                (true, false) => ("row".to_string(), self.operand_type(right)?),
                _ => (self.operand_type(left)?, "row".to_string()),
            };
            return Err(illegal_types(&l, &r, sign));
        }
        let (l, r) = match (lrow, rrow) {
            (Some(l), Some(r)) => (l, r),
            (Some(l), None) if subquery_of(right).is_some() => {
                return self.row_subquery_cmp(&l, op, right, false).map(Some)
            }
            (None, Some(r)) if subquery_of(left).is_some() => {
                return self.row_subquery_cmp(&r, op, left, true).map(Some)
            }
            (Some(_), None) => {
                let x = self.compile(right)?;
                return Err(illegal_types("row", &self.type_name(&x), name));
            }
            (None, Some(_)) => {
                let x = self.compile(left)?;
                return Err(illegal_types(&self.type_name(&x), "row", name));
            }
            (None, None) => return Ok(None),
        };
        if l.len() != r.len() {
            return Err(operand_columns(l.len()));
        }
        let mut li = Vec::with_capacity(l.len());
        for x in &l {
            li.push(self.compile_item(x)?);
        }
        let mut ri = Vec::with_capacity(r.len());
        for x in &r {
            ri.push(self.compile_item(x)?);
        }
        self.pairwise(op, li, ri).map(Some)
    }

    /// `row [NOT] IN (row, row, ...)` (None when `expr` is not a row constructor): true when
    /// a row is equal, else NULL when a comparison is NULL, else false.
    pub(super) fn row_in_list(
        &mut self,
        expr: &ast::Expr,
        list: &[ast::Expr],
        negated: bool,
    ) -> Result<Option<Expr>, SqlError> {
        let Some(l) = row_items(expr) else {
            return Ok(None);
        };
        let mut li = Vec::with_capacity(l.len());
        for x in &l {
            li.push(self.compile_item(x)?);
        }
        let mut any: Option<Expr> = None;
        for item in list {
            let Some(r) = row_items(item) else {
                let x = self.compile(item)?;
                return Err(illegal_types("row", &self.type_name(&x), "in"));
            };
            if r.len() != l.len() {
                return Err(operand_columns(l.len()));
            }
            let mut ri = Vec::with_capacity(r.len());
            for x in &r {
                ri.push(self.compile_item(x)?);
            }
            let eq = self.pairwise(BinOp::Eq, li.clone(), ri)?;
            any = Some(match any {
                None => eq,
                Some(a) => Expr::Bin(BinOp::Or, Box::new(a), Box::new(eq)),
            });
        }
        let Some(any) = any else {
            return Err(SqlError::syntax(&expr.to_string()));
        };
        Ok(Some(if negated {
            Expr::Not(Box::new(any))
        } else {
            any
        }))
    }

    /// One item of a row: a nested row is refused (1235), never compared differently.
    pub(super) fn compile_item(&mut self, x: &ast::Expr) -> Result<Expr, SqlError> {
        if row_items(x).is_some() {
            return Err(SqlError::unsupported("nested row constructors"));
        }
        self.compile(x)
    }

    /// The pairwise comparisons of two rows of equal length, combined (module docs).
    fn pairwise(&self, op: BinOp, l: Vec<Expr>, r: Vec<Expr>) -> Result<Expr, SqlError> {
        debug_assert_eq!(l.len(), r.len());
        debug_assert!(l.len() >= 2);
        let pairs: Vec<(Expr, Expr)> = l.into_iter().zip(r).collect();
        match op {
            BinOp::Eq | BinOp::Ne | BinOp::NullEq => {
                let each = if op == BinOp::NullEq {
                    BinOp::NullEq
                } else {
                    BinOp::Eq
                };
                let mut all: Option<Expr> = None;
                for (a, b) in pairs {
                    let c = self.comparison(each, a, b)?;
                    all = Some(match all {
                        None => c,
                        Some(x) => Expr::Bin(BinOp::And, Box::new(x), Box::new(c)),
                    });
                }
                let all = all.ok_or_else(|| operand_columns(2))?;
                Ok(if op == BinOp::Ne {
                    Expr::Not(Box::new(all))
                } else {
                    all
                })
            }
            _ => {
                // From the last pair back: WHEN a = b THEN <the rest> ELSE a op b.
                let mut rest: Option<Expr> = None;
                for (a, b) in pairs.into_iter().rev() {
                    rest = Some(match rest {
                        None => self.comparison(op, a, b)?,
                        Some(tail) => {
                            let eq = self.comparison(BinOp::Eq, a.clone(), b.clone())?;
                            let cmp = self.comparison(op, a, b)?;
                            Expr::Case(None, vec![(eq, tail)], Some(Box::new(cmp)))
                        }
                    });
                }
                rest.ok_or_else(|| operand_columns(2))
            }
        }
    }

    /// The type name (4078) of a single-value operand.
    fn operand_type(&mut self, e: &ast::Expr) -> Result<String, SqlError> {
        let x = self.compile(e)?;
        Ok(self.type_name(&x))
    }

    /// MariaDB's name of a value's type in 4078 (the common ones).
    pub(super) fn type_name(&self, x: &Expr) -> String {
        let r = x.rtype(self.scope.table, self.aggs.as_deref().unwrap_or(&[]));
        let r = match r {
            RType::Column(c) => match self.column_def(c) {
                Some(d) => {
                    let n = d.ty.sql_name();
                    return n.split('(').next().unwrap_or("varchar").to_string();
                }
                None => RType::Dyn,
            },
            r => r,
        };
        rtype_name(r).to_string()
    }
}

/// MariaDB's name of a result type in 4078 (the common ones; a table column's own type is
/// named by its declaration, `Compiler::type_name`).
pub(super) fn rtype_name(r: RType) -> &'static str {
    match r {
        RType::Int | RType::UInt => "int",
        RType::Decimal(..) => "decimal",
        RType::Double | RType::DoubleDec(_) => "double",
        RType::Date => "date",
        RType::DateTime(_) => "datetime",
        RType::Time => "time",
        RType::Year => "year",
        RType::Null => "null",
        _ => "varchar",
    }
}

/// `l op r` for two rows of values (the module docs' rules), strings compared under
/// `colls` (one per pair); None is NULL.
pub(super) fn compare_rows(
    op: BinOp,
    l: &[Value],
    r: &[Value],
    colls: &[Collation],
) -> Option<bool> {
    debug_assert_eq!(l.len(), r.len());
    let coll = |i: usize| colls.get(i).copied().unwrap_or(Collation::DEFAULT);
    let mut was_null = false;
    for (i, (a, b)) in l.iter().zip(r).enumerate() {
        if op == BinOp::NullEq {
            let same = match (a, b) {
                (Value::Null, Value::Null) => true,
                (Value::Null, _) | (_, Value::Null) => false,
                _ => compare_in(coll(i), a, b) == Some(Ordering::Equal),
            };
            if !same {
                return Some(false);
            }
            continue;
        }
        match compare_in(coll(i), a, b) {
            Some(Ordering::Equal) => {}
            None if matches!(op, BinOp::Eq | BinOp::Ne) => was_null = true,
            None => return None,
            Some(o) => {
                return Some(match op {
                    BinOp::Eq => false,
                    BinOp::Ne => true,
                    BinOp::Lt | BinOp::Le => o == Ordering::Less,
                    _ => o == Ordering::Greater,
                })
            }
        }
    }
    if was_null {
        return None;
    }
    Some(matches!(
        op,
        BinOp::Eq | BinOp::NullEq | BinOp::Le | BinOp::Ge
    ))
}
