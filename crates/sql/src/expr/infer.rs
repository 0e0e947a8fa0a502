//! Result types: the [`RType`] of a compiled expression, for column metadata.

use onelog_engine::{SqlType, TableDef};

use super::ir::{AggFunc, AggSpec, BinOp, CastTo, Expr, Func};
use super::numeric::to_i128;
use super::types::{value_rtype, RType};

impl Expr {
    /// Result type; `cols` gives table columns' types.
    pub fn rtype(&self, t: Option<&TableDef>, aggs: &[AggSpec]) -> RType {
        let sub = |e: &Expr| e.rtype(t, aggs);
        let numeric = |r: RType| -> RType {
            match r {
                RType::Column(c) => match t.map(|t| t.columns[c].ty) {
                    Some(ty) if ty.is_integer() => {
                        if matches!(
                            ty,
                            SqlType::BigInt { unsigned: true }
                                | SqlType::Int { unsigned: true }
                                | SqlType::SmallInt { unsigned: true }
                                | SqlType::TinyInt { unsigned: true }
                                | SqlType::MediumInt { unsigned: true }
                        ) {
                            RType::UInt
                        } else {
                            RType::Int
                        }
                    }
                    Some(SqlType::Decimal { precision, scale }) => RType::Decimal(precision, scale),
                    Some(SqlType::Year) => RType::Int,
                    Some(SqlType::Float | SqlType::Double) => RType::Double,
                    _ => RType::Double,
                },
                RType::Str(_) => RType::Double,
                RType::Dyn => RType::Dyn,
                RType::Year => RType::Int,
                other => other,
            }
        };
        match self {
            Expr::Lit(v) => value_rtype(v),
            Expr::Col(c) => RType::Column(*c),
            Expr::Param(_) => RType::Dyn,
            Expr::Neg(x) => numeric(sub(x)),
            Expr::Not(_)
            | Expr::IsNull(..)
            | Expr::IsBool(..)
            | Expr::In(..)
            | Expr::Between(..)
            | Expr::Like(..) => RType::Int,
            Expr::BitNot(_) => RType::UInt,
            Expr::Bin(op, l, r) => match op {
                BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Mod => {
                    let (a, b) = (numeric(sub(l)), numeric(sub(r)));
                    match (a, b) {
                        (RType::Double, _) | (_, RType::Double) => RType::Double,
                        (RType::Dyn, _) | (_, RType::Dyn) => RType::Dyn,
                        (RType::Decimal(p, s), RType::Decimal(q, u)) => {
                            if *op == BinOp::Mul {
                                RType::Decimal(
                                    p.saturating_add(q).min(65),
                                    s.saturating_add(u).min(30),
                                )
                            } else {
                                RType::Decimal(p.max(q).saturating_add(1).min(65), s.max(u))
                            }
                        }
                        (RType::Decimal(p, s), _) | (_, RType::Decimal(p, s)) => {
                            RType::Decimal(p.saturating_add(20).min(65), s)
                        }
                        (RType::UInt, RType::UInt) => RType::UInt,
                        _ => RType::Int,
                    }
                }
                BinOp::Div => match (numeric(sub(l)), numeric(sub(r))) {
                    (RType::Double, _) | (_, RType::Double) => RType::Double,
                    (RType::Dyn, _) | (_, RType::Dyn) => RType::Dyn,
                    (RType::Decimal(p, s), _) => {
                        RType::Decimal(p.saturating_add(4).min(65), s.saturating_add(4).min(30))
                    }
                    _ => RType::Decimal(24, 4),
                },
                BinOp::IntDiv => RType::Int,
                BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor | BinOp::Shl | BinOp::Shr => {
                    RType::UInt
                }
                _ => RType::Int,
            },
            Expr::Case(_, whens, el) => {
                let mut r = whens.first().map_or(RType::Null, |(_, r)| sub(r));
                if r == RType::Null {
                    if let Some(e) = el {
                        r = sub(e);
                    }
                }
                r
            }
            Expr::Cast(_, to) => match to {
                CastTo::Signed => RType::Int,
                CastTo::Unsigned => RType::UInt,
                CastTo::Char | CastTo::Binary => RType::Str(255),
                CastTo::Decimal(p, s) => RType::Decimal(*p, *s),
                CastTo::Double => RType::Double,
                CastTo::Date => RType::Date,
                CastTo::DateTime => RType::DateTime(0),
                CastTo::Time => RType::Time,
            },
            Expr::Agg(i) => match aggs.get(*i) {
                Some(a) => match a.func {
                    AggFunc::CountStar | AggFunc::Count => RType::Int,
                    AggFunc::BitAnd | AggFunc::BitOr => RType::UInt,
                    AggFunc::Sum => match a.arg.as_ref().map(|e| numeric(e.rtype(t, aggs))) {
                        Some(RType::Double) => RType::Double,
                        Some(RType::Decimal(p, s)) => {
                            RType::Decimal(p.saturating_add(22).min(65), s)
                        }
                        _ => RType::Decimal(33, 0),
                    },
                    AggFunc::Avg => match a.arg.as_ref().map(|e| numeric(e.rtype(t, aggs))) {
                        Some(RType::Double) => RType::Double,
                        Some(RType::Decimal(p, s)) => {
                            RType::Decimal(p.saturating_add(4).min(65), s.saturating_add(4).min(30))
                        }
                        _ => RType::Decimal(14, 4),
                    },
                    AggFunc::Min | AggFunc::Max => {
                        a.arg.as_ref().map_or(RType::Null, |e| e.rtype(t, aggs))
                    }
                    AggFunc::GroupConcat => RType::Str(1024),
                },
                None => RType::Null,
            },
            Expr::SysVar(..) | Expr::UserVar(_) => RType::Dyn,
            Expr::InsertValue(c) => RType::Column(*c),
            Expr::Func(f, args) => match f {
                Func::Length
                | Func::CharLength
                | Func::Sign
                | Func::Ascii
                | Func::Locate
                | Func::Instr
                | Func::IsNull
                | Func::Year
                | Func::Month
                | Func::Day
                | Func::Hour
                | Func::Minute
                | Func::Second
                | Func::Sleep
                | Func::RowCount => RType::Int,
                Func::ConnectionId | Func::LastInsertId | Func::FoundRows => RType::UInt,
                Func::UnixTimestamp => {
                    if args.is_empty() {
                        RType::Int
                    } else {
                        RType::Decimal(17, 6)
                    }
                }
                Func::Abs | Func::Mod => numeric(args.first().map_or(RType::Int, sub)),
                Func::Floor | Func::Ceil => match numeric(args.first().map_or(RType::Int, sub)) {
                    RType::Double => RType::Double,
                    _ => RType::Int,
                },
                Func::Round | Func::Truncate => match numeric(args.first().map_or(RType::Int, sub))
                {
                    RType::Decimal(p, _) => {
                        let s = match args.get(1) {
                            Some(Expr::Lit(v)) => to_i128(v).unwrap_or(0).clamp(0, 30) as u8,
                            _ => 0,
                        };
                        if s == 0 {
                            RType::Int
                        } else {
                            RType::Decimal(p, s)
                        }
                    }
                    other => other,
                },
                Func::Pow | Func::Sqrt | Func::Pi | Func::Rand => RType::Double,
                Func::Now => RType::DateTime(match args.first() {
                    Some(Expr::Lit(v)) => to_i128(v).unwrap_or(0).clamp(0, 6) as u8,
                    _ => 0,
                }),
                Func::FromUnixtime => RType::DateTime(0),
                Func::CurDate | Func::Date => RType::Date,
                Func::CurTime => RType::Time,
                Func::Coalesce | Func::IfNull | Func::Greatest | Func::Least | Func::NullIf => {
                    let mut r = RType::Null;
                    for a in args {
                        let x = sub(a);
                        if x != RType::Null {
                            r = x;
                            break;
                        }
                    }
                    r
                }
                Func::If => {
                    let x = args.get(1).map_or(RType::Null, sub);
                    if x == RType::Null {
                        args.get(2).map_or(RType::Null, sub)
                    } else {
                        x
                    }
                }
                _ => RType::Str(255),
            },
        }
    }
}
