//! The aggregate functions: each one's SQL name and result type. Their accumulation is the
//! grouped executor's (`select.rs`); compiling puts their arguments in [`AggSpec`] slots.
//!
//! Invariants: every [`AggFunc`] has exactly one entry; `COUNT(*)` ([`AggFunc::CountStar`])
//! has no name of its own (the compiler makes it from `COUNT` with a `*`).
//!
//! [`AggSpec`]: crate::expr::ir::AggSpec

use crate::expr::ir::{AggFunc, Expr};
use crate::expr::types::{RType, TypeCx};

/// One aggregate function.
pub(crate) struct AggregateDef {
    /// The SQL name (upper case); empty for COUNT(*).
    pub name: &'static str,
    pub func: AggFunc,
    /// The result type, from the argument (None for COUNT(*)).
    pub return_type: fn(Option<&Expr>, &TypeCx) -> RType,
}

const AGGREGATES: &[AggregateDef] = &[
    agg("COUNT", AggFunc::Count, |_, _| RType::Int),
    agg("", AggFunc::CountStar, |_, _| RType::Int),
    agg("SUM", AggFunc::Sum, |arg, cx| {
        match arg.map(|e| cx.numeric(cx.of(e))) {
            Some(RType::Double) => RType::Double,
            Some(RType::Decimal(p, s)) => RType::Decimal(p.saturating_add(22).min(65), s),
            _ => RType::Decimal(33, 0),
        }
    }),
    agg("AVG", AggFunc::Avg, |arg, cx| {
        match arg.map(|e| cx.numeric(cx.of(e))) {
            Some(RType::Double) => RType::Double,
            Some(RType::Decimal(p, s)) => {
                RType::Decimal(p.saturating_add(4).min(65), s.saturating_add(4).min(30))
            }
            _ => RType::Decimal(14, 4),
        }
    }),
    agg("MIN", AggFunc::Min, arg_type),
    agg("MAX", AggFunc::Max, arg_type),
    agg("GROUP_CONCAT", AggFunc::GroupConcat, |_, _| {
        RType::Str(1024)
    }),
    agg("BIT_AND", AggFunc::BitAnd, |_, _| RType::UInt),
    agg("BIT_OR", AggFunc::BitOr, |_, _| RType::UInt),
];

const fn agg(
    name: &'static str,
    func: AggFunc,
    return_type: fn(Option<&Expr>, &TypeCx) -> RType,
) -> AggregateDef {
    AggregateDef {
        name,
        func,
        return_type,
    }
}

/// MIN / MAX: the argument's type.
fn arg_type(arg: Option<&Expr>, cx: &TypeCx) -> RType {
    arg.map_or(RType::Null, |e| cx.of(e))
}

/// The aggregate SQL calls `name` (upper case), if any.
pub(in crate::expr) fn lookup(name: &str) -> Option<AggFunc> {
    if name.is_empty() {
        return None;
    }
    AGGREGATES.iter().find(|a| a.name == name).map(|a| a.func)
}

/// The result type of aggregate `func` over `arg`.
pub(in crate::expr) fn return_type(func: AggFunc, arg: Option<&Expr>, cx: &TypeCx) -> RType {
    let def = AGGREGATES.iter().find(|a| a.func == func);
    debug_assert!(def.is_some(), "{func:?} has no declaration");
    def.map_or(RType::Null, |d| (d.return_type)(arg, cx))
}
