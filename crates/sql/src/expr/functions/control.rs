//! Control flow and comparison functions: COALESCE, IFNULL, NULLIF, IF, ISNULL, GREATEST,
//! LEAST (NULLIF, GREATEST and LEAST compare strings under their derived collation).
//!
//! Invariants: COALESCE, IFNULL and IF evaluate only the arguments their result needs, left
//! to right (an argument with a side effect, such as SLEEP, runs only when chosen); the lazy
//! argument reader in `eval.rs` asserts the left-to-right order.

use std::cmp::Ordering;

use onelog_binlog::Value;

use super::{collated, lazy, rt_int, sees_null, strict, FunctionDef, LazyArg, ANY};
use crate::error::SqlError;
use crate::expr::collate::compare_in;
use crate::expr::ir::Expr;
use crate::expr::numeric::truth;
use crate::expr::types::{RType, TypeCx};
use onelog_engine::collation::Collation;

type R = Result<Value, SqlError>;

pub(super) const FUNCTIONS: &[FunctionDef] = &[
    lazy(
        "COALESCE",
        &["COALESCE"],
        (1, ANY),
        rt_first_known,
        coalesce,
    ),
    lazy(
        "IFNULL",
        &["IFNULL", "NVL"],
        (2, 2),
        rt_first_known,
        |_, arg| {
            let v = arg(0)?;
            if v == Value::Null {
                arg(1)
            } else {
                Ok(v)
            }
        },
    ),
    // NVL2(x, a, b): a when x is not NULL, else b (the type as IF's).
    lazy("NVL2", &["NVL2"], (3, 3), rt_if, |_, arg| {
        if arg(0)? != Value::Null {
            arg(1)
        } else {
            arg(2)
        }
    }),
    lazy("IF", &["IF"], (3, 3), rt_if, |_, arg| {
        if truth(&arg(0)?) == Some(true) {
            arg(1)
        } else {
            arg(2)
        }
    }),
    collated(sees_null(
        "NULLIF",
        &["NULLIF"],
        (2, 2),
        rt_first_known,
        |mut v, env| {
            Ok(
                if compare_in(env.coll, &v[0], &v[1]) == Some(Ordering::Equal) {
                    Value::Null
                } else {
                    v.swap_remove(0)
                },
            )
        },
    )),
    sees_null("ISNULL", &["ISNULL"], (1, 1), rt_int, |v, _| {
        Ok(Value::Int((v[0] == Value::Null) as i64))
    }),
    collated(strict(
        "GREATEST",
        &["GREATEST"],
        (2, ANY),
        rt_first_known,
        |v, env| Ok(extreme(&v, Ordering::Greater, env.coll)),
    )),
    collated(strict(
        "LEAST",
        &["LEAST"],
        (2, ANY),
        rt_first_known,
        |v, env| Ok(extreme(&v, Ordering::Less, env.coll)),
    )),
];

/// The type of the first argument whose type is known (not NULL).
fn rt_first_known(args: &[Expr], cx: &TypeCx) -> RType {
    args.iter()
        .map(|a| cx.of(a))
        .find(|r| *r != RType::Null)
        .unwrap_or(RType::Null)
}

/// IF(c, a, b): the type of `a`, else of `b`.
fn rt_if(args: &[Expr], cx: &TypeCx) -> RType {
    let x = args.get(1).map_or(RType::Null, |a| cx.of(a));
    if x == RType::Null {
        args.get(2).map_or(RType::Null, |a| cx.of(a))
    } else {
        x
    }
}

fn coalesce(n: usize, arg: &mut LazyArg) -> R {
    for i in 0..n {
        let v = arg(i)?;
        if v != Value::Null {
            return Ok(v);
        }
    }
    Ok(Value::Null)
}

/// GREATEST / LEAST: the first value no other compares `want` to.
fn extreme(v: &[Value], want: Ordering, coll: Collation) -> Value {
    let mut best = v[0].clone();
    for x in &v[1..] {
        if compare_in(coll, x, &best).unwrap_or(Ordering::Equal) == want {
            best = x.clone();
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::super::check_against_mariadb;

    #[test]
    fn control_functions_match_mariadb() {
        // Expected values: what MariaDB 10.11.19 returned for `SELECT <expr>` (mariadb -N -B).
        check_against_mariadb(&[
            ("CASE 'a' WHEN 'A' THEN 'yes' ELSE 'no' END", "yes"),
            ("NVL2(NULL,1,2)", "2"),
            ("NVL2(0,1,2)", "1"),
            ("NVL2(1,NULL,2)", "NULL"),
            ("COALESCE(NULL, NULL, 3)", "3"),
            ("COALESCE(NULL)", "NULL"),
            ("IFNULL(NULL, 'x')", "x"),
            ("IFNULL(1, 'x')", "1"),
            ("NVL(NULL, 2)", "2"),
            ("NULLIF(1, 1)", "NULL"),
            ("NULLIF(1, 2)", "1"),
            ("IF(1 > 0, 'yes', 'no')", "yes"),
            ("IF(NULL, 'yes', 'no')", "no"),
            ("ISNULL(NULL)", "1"),
            ("ISNULL(0)", "0"),
            ("GREATEST(2, 7, 3)", "7"),
            ("LEAST(2, 7, 3)", "2"),
            ("GREATEST(1, NULL)", "NULL"),
            ("LEAST('b', 'a')", "a"),
        ]);
    }
}
