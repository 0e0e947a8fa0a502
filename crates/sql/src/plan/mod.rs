//! Planning: a parsed statement, its tables bound (`bind/`), becomes a plan the executors run:
//! expressions compiled in the bound scope, result columns typed (`select`, `dml`); `access`
//! chooses how a table is read (primary key point or range, secondary index, scan) and
//! resolves that choice at run time.
//!
//! Invariants: a plan refers to the catalog it was compiled against; the session compiles it
//! again when the account's privileges or the statement's database changed.
pub(crate) mod access;
pub(crate) mod dml;
pub(crate) mod join;
pub(crate) mod multi_dml;
pub(crate) mod select;
pub(crate) mod view_dml;

use sqlparser::ast;

use crate::error::SqlError;
use crate::expr::{Compiler, Expr};

/// A LIMIT or OFFSET operand, compiled: MariaDB's grammar takes an unsigned integer literal or
/// a `?` placeholder there, nothing else (an expression, a decimal, a string, a hex or bit
/// literal, a variable, a sign: 1064 near it).
pub(crate) fn limit_operand(c: &mut Compiler, e: &ast::Expr) -> Result<Expr, SqlError> {
    let literal = match e {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::Placeholder(_) => true,
            ast::Value::Number(n, _) => {
                !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) && n.parse::<u64>().is_ok()
            }
            _ => false,
        },
        _ => false,
    };
    if !literal {
        return Err(SqlError::syntax(&e.to_string()));
    }
    c.compile(e)
}
