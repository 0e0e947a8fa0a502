//! Result type inference: the [`RType`] of a compiled expression, for column metadata. Each
//! built-in function's type rule is declared with the function (`functions`), each
//! aggregate's in `functions::aggregate`; operators, casts and predicates are typed here.
//!
//! Invariants: typing never evaluates anything and never fails (an unknown type is
//! [`RType::Dyn`], decided from the first value); DECIMAL precision stays <= 65.
//!
//! Called by the SELECT executor when it builds result columns.

use onelog_engine::TableDef;

use super::functions::aggregate;
use super::ir::{AggSpec, BinOp, CastTo, Expr};
use super::types::{value_rtype, RType, TypeCx};

impl Expr {
    /// Result type; `t` gives table columns' types, `aggs` the aggregate slots.
    pub fn rtype(&self, t: Option<&TableDef>, aggs: &[AggSpec]) -> RType {
        let sub = |e: &Expr| e.rtype(t, aggs);
        let cx = TypeCx {
            table: t,
            sub: &sub,
        };
        let r = match self {
            Expr::Lit(v) => value_rtype(v),
            Expr::Col(c) | Expr::InsertValue(c) => RType::Column(*c),
            Expr::Param(_) | Expr::SysVar(..) | Expr::UserVar(_) => RType::Dyn,
            Expr::Neg(x) => cx.numeric(sub(x)),
            Expr::Not(_)
            | Expr::IsNull(..)
            | Expr::IsBool(..)
            | Expr::In(..)
            | Expr::Between(..)
            | Expr::Like(..) => RType::Int,
            // The node it wraps: a comparison (an integer), a simple CASE or a function.
            Expr::Collate(x, _) | Expr::Introduced(x, _) | Expr::Collated(_, x) => sub(x),
            Expr::BitNot(_) => RType::UInt,
            Expr::Bin(op, l, r) => binary_type(*op, l, r, &cx),
            Expr::Case(_, whens, el) => {
                let mut r = whens.first().map_or(RType::Null, |(_, r)| sub(r));
                if r == RType::Null {
                    if let Some(e) = el {
                        r = sub(e);
                    }
                }
                r
            }
            Expr::Cast(_, to) => cast_type(*to),
            Expr::Agg(i) => match aggs.get(*i) {
                Some(a) => aggregate::return_type(a.func, a.arg.as_ref(), &cx),
                None => RType::Null,
            },
            Expr::Func(f, args) => (f.def().return_type)(args, &cx),
            Expr::Subq(s) => match s.kind {
                super::ir::SubqKind::Scalar => s.rtype,
                _ => RType::Int,
            },
            Expr::Win(w) => match &w.func {
                super::window::WinFunc::Agg(a) => {
                    aggregate::return_type(a.func, a.arg.as_ref(), &cx)
                }
                // MariaDB: DOUBLE shown with 10 decimals.
                super::window::WinFunc::PercentRank | super::window::WinFunc::CumeDist => {
                    RType::DoubleDec(10)
                }
                _ => match w.args.first() {
                    Some(x) => sub(x),
                    None => RType::Int,
                },
            },
        };
        debug_assert!(
            !matches!(r, RType::Decimal(p, _) if p > 65),
            "{r:?}: DECIMAL precision past 65"
        );
        r
    }
}

/// Type of `l op r`: MariaDB's precision rules for DECIMAL arithmetic.
fn binary_type(op: BinOp, l: &Expr, r: &Expr, cx: &TypeCx) -> RType {
    // Operands are typed only for arithmetic (comparisons of deep trees stay O(1) here).
    let operands = || (cx.numeric(cx.of(l)), cx.numeric(cx.of(r)));
    match op {
        BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Mod => match operands() {
            (RType::Double, _) | (_, RType::Double) => RType::Double,
            (RType::Dyn, _) | (_, RType::Dyn) => RType::Dyn,
            (RType::Decimal(p, s), RType::Decimal(q, u)) => {
                if op == BinOp::Mul {
                    RType::Decimal(p.saturating_add(q).min(65), s.saturating_add(u).min(30))
                } else {
                    RType::Decimal(p.max(q).saturating_add(1).min(65), s.max(u))
                }
            }
            (RType::Decimal(p, s), _) | (_, RType::Decimal(p, s)) => {
                RType::Decimal(p.saturating_add(20).min(65), s)
            }
            (RType::UInt, RType::UInt) => RType::UInt,
            _ => RType::Int,
        },
        BinOp::Div => match operands() {
            (RType::Double, _) | (_, RType::Double) => RType::Double,
            (RType::Dyn, _) | (_, RType::Dyn) => RType::Dyn,
            (RType::Decimal(p, s), _) => {
                let (p, s) = super::numeric::quotient_digits(p, s);
                RType::Decimal(p, s)
            }
            _ => {
                let (p, s) = super::numeric::quotient_digits(20, 0);
                RType::Decimal(p, s)
            }
        },
        BinOp::IntDiv => RType::Int,
        BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor | BinOp::Shl | BinOp::Shr => RType::UInt,
        _ => RType::Int,
    }
}

fn cast_type(to: CastTo) -> RType {
    match to {
        CastTo::Signed => RType::Int,
        CastTo::Unsigned => RType::UInt,
        CastTo::Char | CastTo::Binary => RType::Str(255),
        CastTo::Decimal(p, s) => RType::Decimal(p, s),
        CastTo::Double => RType::Double,
        CastTo::Date => RType::Date,
        CastTo::DateTime => RType::DateTime(0),
        CastTo::Time => RType::Time,
    }
}
