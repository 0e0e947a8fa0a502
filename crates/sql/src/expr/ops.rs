//! Operators on two values: comparison, three-valued logic, bit operations and arithmetic
//! with MariaDB's overflow rules (1690) and division by zero (NULL, warning 1365).
//!
//! Invariants: `+ - * DIV` on integers give BIGINT UNSIGNED when an operand is unsigned,
//! else BIGINT (out of range: 1690); a DOUBLE result is finite (else 1690).
//!
//! Called by evaluation, the built-in functions (MOD) and the executors.

use std::cmp::Ordering;

use onelog_binlog::Value;

use super::coerce::compare;
use super::ir::BinOp;
use super::numeric::{int_value, num_dec, num_f64, num_of, out_of_range, to_i128, truth, Dec, Num};
use super::text::sql_text;
use super::warnings::warn;
use crate::error::SqlError;

pub(super) fn bool_value(b: Option<bool>) -> Value {
    match b {
        None => Value::Null,
        Some(b) => Value::Int(b as i64),
    }
}

/// A comparison operator on `a` and `b`, whose order `order` gives (None: a NULL or a pair
/// that does not compare); None for the other operators. Shared by the comparison of
/// [`binary_values`] and the collated one (`collate::compare_op`).
pub(super) fn comparison(
    op: BinOp,
    a: &Value,
    b: &Value,
    order: impl Fn() -> Option<Ordering>,
) -> Option<Value> {
    let want: fn(Ordering) -> bool = match op {
        BinOp::Eq => |o| o == Ordering::Equal,
        BinOp::Ne => |o| o != Ordering::Equal,
        BinOp::Lt => |o| o == Ordering::Less,
        BinOp::Le => |o| o != Ordering::Greater,
        BinOp::Gt => |o| o == Ordering::Greater,
        BinOp::Ge => |o| o != Ordering::Less,
        BinOp::NullEq => {
            return Some(Value::Int(match (a, b) {
                (Value::Null, Value::Null) => 1,
                (Value::Null, _) | (_, Value::Null) => 0,
                _ => (order() == Some(Ordering::Equal)) as i64,
            }))
        }
        _ => return None,
    };
    Some(bool_value(order().map(want)))
}

/// Arithmetic and comparison on two values.
pub(crate) fn binary_values(op: BinOp, a: &Value, b: &Value) -> Result<Value, SqlError> {
    if let Some(v) = comparison(op, a, b, || compare(a, b)) {
        return Ok(v);
    }
    Ok(match op {
        // The truth of each operand, as AND / OR take it (MariaDB 10.11.19; 10.11.14 read
        // them as integers, rounding fractions).
        BinOp::Xor => match (truth(a), truth(b)) {
            (Some(x), Some(y)) => Value::Int((x != y) as i64),
            _ => Value::Null,
        },
        BinOp::And | BinOp::Or => {
            let (x, y) = (truth(a), truth(b));
            if op == BinOp::And {
                match (x, y) {
                    (Some(false), _) | (_, Some(false)) => Value::Int(0),
                    (Some(true), Some(true)) => Value::Int(1),
                    _ => Value::Null,
                }
            } else {
                match (x, y) {
                    (Some(true), _) | (_, Some(true)) => Value::Int(1),
                    (Some(false), Some(false)) => Value::Int(0),
                    _ => Value::Null,
                }
            }
        }
        BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor | BinOp::Shl | BinOp::Shr => {
            let (Some(x), Some(y)) = (to_i128(a), to_i128(b)) else {
                return Ok(Value::Null);
            };
            let (x, y) = (x as u64, y as u64);
            Value::UInt(match op {
                BinOp::BitAnd => x & y,
                BinOp::BitOr => x | y,
                BinOp::BitXor => x ^ y,
                BinOp::Shl => x.checked_shl(y as u32).unwrap_or(0),
                _ => x.checked_shr(y as u32).unwrap_or(0),
            })
        }
        BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::IntDiv | BinOp::Mod => {
            let (Some(x), Some(y)) = (num_of(a), num_of(b)) else {
                return Ok(Value::Null);
            };
            let r = arith(op, x, y, a, b)?;
            debug_assert!(
                !matches!(r, Value::Double(d) if !d.is_finite()),
                "non-finite DOUBLE"
            );
            debug_assert!(
                !matches!(
                    (x, y, op),
                    (
                        Num::Int(_),
                        Num::Int(_),
                        BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::IntDiv
                    )
                ) || r == Value::Null
                    || matches!(r, Value::UInt(_))
                        == (matches!(a, Value::UInt(_)) || matches!(b, Value::UInt(_))),
                "integer result signedness"
            );
            r
        }
        BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::NullEq => {
            // Answered by `comparison` above.
            Value::Null
        }
    })
}

/// How MariaDB prints an arithmetic operator in an error message.
pub(super) fn op_text(op: BinOp) -> &'static str {
    match op {
        BinOp::Add => "+",
        BinOp::Sub => "-",
        BinOp::Mul => "*",
        BinOp::Div => "/",
        BinOp::IntDiv => "DIV",
        _ => "%",
    }
}

/// Division by zero: NULL and warning 1365, as MariaDB answers in a SELECT.
pub(super) fn div_by_zero() -> Result<Value, SqlError> {
    warn("Warning", 1365, "Division by 0".to_string());
    Ok(Value::Null)
}

/// Arithmetic with MariaDB's overflow rules: an integer result is BIGINT UNSIGNED when an
/// operand is unsigned, else BIGINT, and out of that range is error 1690; a DECIMAL result
/// past [`DEC_MAX_DIGITS`] and a DOUBLE result that is not finite are 1690 too.
pub(super) fn arith(op: BinOp, x: Num, y: Num, a: &Value, b: &Value) -> Result<Value, SqlError> {
    let text = || format!("{} {} {}", sql_text(a), op_text(op), sql_text(b));
    let unsigned = matches!(a, Value::UInt(_)) || matches!(b, Value::UInt(_));
    let int_result = |r: Option<i128>| -> Result<Value, SqlError> {
        match r {
            Some(r) if unsigned && (0..=i128::from(u64::MAX)).contains(&r) => {
                Ok(Value::UInt(r as u64))
            }
            Some(r) if !unsigned && i64::try_from(r).is_ok() => Ok(Value::Int(r as i64)),
            _ if unsigned => Err(out_of_range("BIGINT UNSIGNED", &text())),
            _ => Err(out_of_range("BIGINT", &text())),
        }
    };
    if let (Num::Int(i), Num::Int(j)) = (x, y) {
        return match op {
            BinOp::Add => int_result(i.checked_add(j)),
            BinOp::Sub => int_result(i.checked_sub(j)),
            BinOp::Mul => int_result(i.checked_mul(j)),
            BinOp::IntDiv if j == 0 => div_by_zero(),
            BinOp::IntDiv => int_result(Some(i / j)),
            BinOp::Mod if j == 0 => div_by_zero(),
            BinOp::Mod => int_value(i % j),
            _ if j == 0 => div_by_zero(),
            _ => match Dec::from_int(i).div(Dec::from_int(j)) {
                Some(d) => Ok(Value::Decimal(d.to_string())),
                None => Err(out_of_range("DECIMAL", &text())),
            },
        };
    }
    if let (Some(p), Some(q)) = (num_dec(x), num_dec(y)) {
        if matches!(op, BinOp::Div | BinOp::IntDiv | BinOp::Mod) && q.m.is_zero() {
            return div_by_zero();
        }
        let s = p.s.max(q.s);
        let r = match op {
            BinOp::Add => p.add(q),
            BinOp::Sub => p.add(q.neg()),
            BinOp::Mul => p.mul(q),
            BinOp::Div => p.div(q),
            BinOp::IntDiv => {
                let quot = p
                    .rescale(s)
                    .zip(q.rescale(s))
                    .and_then(|(a, b)| a.m.div_rem(b.m));
                return int_result(quot.and_then(|(q, _)| q.to_i128()));
            }
            _ => p
                .rescale(s)
                .zip(q.rescale(s))
                .and_then(|(a, b)| a.m.div_rem(b.m))
                .map(|(_, r)| Dec { m: r, s }),
        };
        return match r {
            Some(d) => Ok(Value::Decimal(d.to_string())),
            None => Err(out_of_range("DECIMAL", &text())),
        };
    }
    let (fa, fb) = (num_f64(x), num_f64(y));
    if matches!(op, BinOp::Div | BinOp::Mod | BinOp::IntDiv) && fb == 0.0 {
        return div_by_zero();
    }
    if op == BinOp::IntDiv {
        let q = (fa / fb).trunc();
        return int_result((q.abs() < 1.8e19).then_some(q as i128));
    }
    let r = arith_f(op, fa, fb);
    if !r.is_finite() {
        return Err(out_of_range("DOUBLE", &text()));
    }
    Ok(Value::Double(r))
}

pub(super) fn arith_f(op: BinOp, a: f64, b: f64) -> f64 {
    match op {
        BinOp::Add => a + b,
        BinOp::Sub => a - b,
        BinOp::Mul => a * b,
        BinOp::Div => a / b,
        _ => a % b,
    }
}
