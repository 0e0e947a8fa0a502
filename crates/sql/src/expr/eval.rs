//! Evaluation of a compiled [`Expr`] on a row: three-valued logic, short-circuit AND/OR and
//! lazy IF/IFNULL/COALESCE, session-dependent values read at evaluation time.
//!
//! Invariants: evaluation never panics on any input (missing columns, parameters and
//! aggregate slots read as NULL); a function call has as many arguments as its definition
//! allows; a lazy function (IF, IFNULL, COALESCE) asks for its arguments in increasing order,
//! each at most once.
//!
//! Called by the executors for every row.

use std::cmp::Ordering;

use onelog_binlog::Value;
use sqlparser::ast;

use onelog_engine::collation::Collation;

use super::coerce::cast;
use super::collate::{compare_in, compare_op};
use super::compile::{Compiler, Scope};
use super::env::Env;
use super::functions::Eval;
use super::ir::{BinOp, Expr, Func};
use super::like::like_match_in;
use super::numeric::{int_value, num_of, to_i128, truth, Num};
use super::ops::{binary_values, bool_value};
use super::text::text_of;
use crate::context::ExecContext;
use crate::error::SqlError;
use crate::sysvar::get_var;

impl Expr {
    pub fn eval(&self, row: &[Value], env: &Env) -> Result<Value, SqlError> {
        self.eval_with(row, &[], env)
    }

    /// True when the expression holds (NULL and false are not).
    pub fn test(&self, row: &[Value], aggs: &[Value], env: &Env) -> Result<bool, SqlError> {
        Ok(truth(&self.eval_with(row, aggs, env)?) == Some(true))
    }

    pub fn eval_with(&self, row: &[Value], aggs: &[Value], env: &Env) -> Result<Value, SqlError> {
        Ok(match self {
            Expr::Lit(v) => v.clone(),
            Expr::Col(i) => row.get(*i).cloned().unwrap_or(Value::Null),
            Expr::Param(i) => env.params.get(*i).cloned().unwrap_or(Value::Null),
            Expr::Agg(i) => aggs.get(*i).cloned().unwrap_or(Value::Null),
            Expr::InsertValue(i) => env
                .insert_row
                .and_then(|r| r.get(*i))
                .cloned()
                .unwrap_or(Value::Null),
            Expr::Neg(x) => {
                let v = x.eval_with(row, aggs, env)?;
                match num_of(&v) {
                    None => Value::Null,
                    Some(Num::Int(i)) => {
                        int_value(-i).unwrap_or_else(|_| Value::Decimal((-i).to_string()))
                    }
                    Some(Num::Dec(d)) => Value::Decimal(d.neg().to_string()),
                    Some(Num::Dbl(d)) => Value::Double(-d),
                }
            }
            Expr::Not(x) => bool_value(truth(&x.eval_with(row, aggs, env)?).map(|b| !b)),
            Expr::BitNot(x) => match to_i128(&x.eval_with(row, aggs, env)?) {
                None => Value::Null,
                Some(i) => Value::UInt(!(i as u64)),
            },
            Expr::Bin(op, l, r) => return self.binary(*op, l, r, env.coll, row, aggs, env),
            Expr::IsNull(x, neg) => {
                let n = x.eval_with(row, aggs, env)? == Value::Null;
                Value::Int((n != *neg) as i64)
            }
            Expr::IsBool(x, want, neg) => {
                let t = truth(&x.eval_with(row, aggs, env)?);
                Value::Int(((t == Some(*want)) != *neg) as i64)
            }
            Expr::In(..) | Expr::Between(..) | Expr::Like(..) | Expr::Case(..) => {
                return self.eval_in(env.coll, row, aggs, env)
            }
            Expr::Collate(x, _) | Expr::Introduced(x, _) => return x.eval_with(row, aggs, env),
            Expr::Collated(c, inner) => return inner.eval_in(c.resolve(env.coll), row, aggs, env),
            Expr::Cast(x, to) => cast(x.eval_with(row, aggs, env)?, *to)?,
            Expr::SysVar(name, scope) => get_var(env.cx, name, *scope)?,
            Expr::UserVar(name) => env.cx.user_vars.get(name).cloned().unwrap_or(Value::Null),
            Expr::Func(f, args) => return self.func(*f, args, env.coll, row, aggs, env),
            Expr::Subq(s) => return s.eval(row, aggs, env),
            // Computed over the collected rows by `execute::window`, never per row.
            Expr::Win(_) => return Err(super::window::misplaced()),
        })
    }

    /// Evaluates a comparison node with its strings compared under `coll` (any other node
    /// as [`Expr::eval_with`]).
    fn eval_in(
        &self,
        coll: Collation,
        row: &[Value],
        aggs: &[Value],
        env: &Env,
    ) -> Result<Value, SqlError> {
        Ok(match self {
            Expr::Bin(op, l, r) => return self.binary(*op, l, r, coll, row, aggs, env),
            Expr::In(x, list, neg) => return in_list(x, list, *neg, coll, row, aggs, env),
            Expr::Between(x, lo, hi, neg) => {
                let v = x.eval_with(row, aggs, env)?;
                let a = lo.eval_with(row, aggs, env)?;
                let b = hi.eval_with(row, aggs, env)?;
                let ge = compare_in(coll, &v, &a).map(|o| o != Ordering::Less);
                let le = compare_in(coll, &v, &b).map(|o| o != Ordering::Greater);
                let r = match (ge, le) {
                    (Some(false), _) | (_, Some(false)) => Some(false),
                    (Some(true), Some(true)) => Some(true),
                    _ => None,
                };
                bool_value(r.map(|b| b != *neg))
            }
            Expr::Like(x, p, esc, neg) => {
                let v = x.eval_with(row, aggs, env)?;
                let pv = p.eval_with(row, aggs, env)?;
                if v == Value::Null || pv == Value::Null {
                    return Ok(Value::Null);
                }
                let m = like_match_in(coll, &text_of(&v), &text_of(&pv), *esc);
                Value::Int((m != *neg) as i64)
            }
            Expr::Case(op, whens, el) => {
                return case(op.as_deref(), whens, el.as_deref(), coll, row, aggs, env)
            }
            // A collated function reads the collation as `Env::coll` (its arguments are
            // evaluated as anywhere else).
            Expr::Func(f, args) => return self.func(*f, args, coll, row, aggs, env),
            other => return other.eval_with(row, aggs, env),
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn binary(
        &self,
        op: BinOp,
        l: &Expr,
        r: &Expr,
        coll: Collation,
        row: &[Value],
        aggs: &[Value],
        env: &Env,
    ) -> Result<Value, SqlError> {
        match op {
            BinOp::And => {
                let a = truth(&l.eval_with(row, aggs, env)?);
                if a == Some(false) {
                    return Ok(Value::Int(0));
                }
                let b = truth(&r.eval_with(row, aggs, env)?);
                return Ok(match (a, b) {
                    (_, Some(false)) => Value::Int(0),
                    (Some(true), Some(true)) => Value::Int(1),
                    _ => Value::Null,
                });
            }
            BinOp::Or => {
                let a = truth(&l.eval_with(row, aggs, env)?);
                if a == Some(true) {
                    return Ok(Value::Int(1));
                }
                let b = truth(&r.eval_with(row, aggs, env)?);
                return Ok(match (a, b) {
                    (_, Some(true)) => Value::Int(1),
                    (Some(false), Some(false)) => Value::Int(0),
                    _ => Value::Null,
                });
            }
            _ => {}
        }
        let a = l.eval_with(row, aggs, env)?;
        let b = r.eval_with(row, aggs, env)?;
        match compare_op(op, coll, &a, &b) {
            Some(v) => Ok(v),
            None => binary_values(op, &a, &b),
        }
    }

    /// A function call; `coll` is the collation it runs under (`Env::coll` for it): its
    /// string arguments' (`Compiler::function`), else the connection's. Under `binary` the
    /// character functions work on bytes ([`on_bytes`]).
    #[allow(clippy::too_many_arguments)]
    fn func(
        &self,
        f: Func,
        args: &[Expr],
        coll: Collation,
        row: &[Value],
        aggs: &[Value],
        env: &Env,
    ) -> Result<Value, SqlError> {
        let def = f.def();
        debug_assert!(
            (def.min_args..=def.max_args).contains(&args.len()),
            "{}: {} arguments compiled",
            def.name,
            args.len()
        );
        match def.eval {
            Eval::Lazy(run) => {
                let mut next = 0;
                run(args.len(), &mut |i| {
                    debug_assert!(i >= next, "{}: argument {i} after {next}", def.name);
                    next = i + 1;
                    match args.get(i) {
                        Some(a) => a.eval_with(row, aggs, env),
                        None => Ok(Value::Null),
                    }
                })
            }
            Eval::Values(run) => {
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    vals.push(a.eval_with(row, aggs, env)?);
                }
                if def.null_in_null_out && vals.contains(&Value::Null) {
                    return Ok(Value::Null);
                }
                let env = Env {
                    cx: env.cx,
                    params: env.params,
                    insert_row: env.insert_row,
                    coll,
                    subq: env.subq,
                };
                if coll == Collation::Binary && super::functions::counts_characters(def.name) {
                    return on_bytes(def.name, vals, &env, run);
                }
                run(vals, &env)
            }
        }
    }
}

/// A character function (`functions::counts_characters`) on binary strings, as MariaDB:
/// UPPER and LOWER leave the bytes as they are; the others count, cut and pad bytes. Each
/// string argument's bytes are read as characters U+0000..U+00FF (one per byte), the
/// function runs on that text, and a string result turns back into one byte per character.
fn on_bytes(
    name: &str,
    vals: Vec<Value>,
    env: &Env,
    run: super::functions::ValuesFn,
) -> Result<Value, SqlError> {
    match name {
        "UPPER" | "LOWER" => {
            return Ok(match &vals[0] {
                b @ Value::Bytes(_) => b.clone(),
                v => Value::bytes(text_of(v)),
            })
        }
        "ORD" => {
            return Ok(Value::Int(
                text_of(&vals[0]).first().map_or(0, |&b| i64::from(b)),
            ))
        }
        _ => {}
    }
    let widened = vals
        .into_iter()
        .map(|v| match v {
            Value::Bytes(b) => Value::Bytes(
                b.iter()
                    .map(|&c| char::from(c))
                    .collect::<String>()
                    .into_bytes()
                    .into(),
            ),
            other => other,
        })
        .collect();
    Ok(match run(widened, env)? {
        Value::Bytes(b) => Value::Bytes(
            String::from_utf8_lossy(&b)
                .chars()
                .map(|c| u8::try_from(u32::from(c)).unwrap_or(b'?'))
                .collect(),
        ),
        other => other,
    })
}

#[allow(clippy::too_many_arguments)]
/// `x [NOT] IN (list)`: NULL when `x` is NULL, or when no item matches and one is NULL.
fn in_list(
    x: &Expr,
    list: &[Expr],
    neg: bool,
    coll: Collation,
    row: &[Value],
    aggs: &[Value],
    env: &Env,
) -> Result<Value, SqlError> {
    let v = x.eval_with(row, aggs, env)?;
    if v == Value::Null {
        return Ok(Value::Null);
    }
    let mut saw_null = false;
    for item in list {
        let w = item.eval_with(row, aggs, env)?;
        match compare_in(coll, &v, &w) {
            Some(Ordering::Equal) => return Ok(Value::Int(!neg as i64)),
            None => saw_null = true,
            _ => {}
        }
    }
    Ok(if saw_null {
        Value::Null
    } else {
        Value::Int(neg as i64)
    })
}

/// `CASE [base] WHEN .. THEN .. [ELSE ..] END`: the first matching branch only is evaluated.
#[allow(clippy::too_many_arguments)]
fn case(
    op: Option<&Expr>,
    whens: &[(Expr, Expr)],
    el: Option<&Expr>,
    coll: Collation,
    row: &[Value],
    aggs: &[Value],
    env: &Env,
) -> Result<Value, SqlError> {
    let base = match op {
        Some(o) => Some(o.eval_with(row, aggs, env)?),
        None => None,
    };
    for (c, r) in whens {
        let cv = c.eval_with(row, aggs, env)?;
        let hit = match &base {
            Some(b) => compare_in(coll, b, &cv) == Some(Ordering::Equal),
            None => truth(&cv) == Some(true),
        };
        if hit {
            return r.eval_with(row, aggs, env);
        }
    }
    Ok(match el {
        Some(e) => e.eval_with(row, aggs, env)?,
        None => Value::Null,
    })
}

#[allow(dead_code)]
/// `SET @x = expr` and other constant contexts: evaluates an expression with no table (an
/// unknown column is 1054 `in 'SET'`, as MariaDB 10.11.14).
pub(crate) fn eval_scalar(cx: &mut ExecContext, expr: &ast::Expr) -> Result<Value, SqlError> {
    cx.begin_statement_time();
    let db = cx.current_db.clone().unwrap_or_default();
    let mut c = Compiler::new(
        Scope {
            table: None,
            qualifier: "",
            db: &db,
            joined: Vec::new(),
        },
        "SET",
    );
    let e = c.compile(expr)?;
    let env = Env {
        cx,
        params: &[],
        insert_row: None,
        coll: super::env::connection_collation(cx),
        subq: None,
    };
    e.eval(&[], &env)
}
