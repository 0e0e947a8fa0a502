//! What an evaluation may read besides the row: the session (time, variables, user,
//! limits), the statement's parameters and, for `VALUES(col)`, the row INSERT wanted to write.
//! Built by each executor per statement; read by `eval` and the built-in functions.
//!
//! Invariants: an `Env` lives for one statement; what it reads from the execution context is
//! fixed for that statement (its start time, its parameters).

use std::cell::OnceCell;
use std::collections::HashSet;
use std::rc::Rc;

use onelog_binlog::Value;
use onelog_engine::collation::Collation;

use crate::context::ExecContext;
use crate::error::SqlError;

/// Per-statement evaluation environment.
pub(crate) struct Env<'a> {
    pub cx: &'a ExecContext,
    pub params: &'a [Value],
    /// The row INSERT wanted to write (for `VALUES(col)`).
    pub insert_row: Option<&'a [Value]>,
    /// The connection's collation (`collation_connection` at the statement's start): how
    /// literals compare.
    pub coll: Collation,
    /// The statement's subqueries (`execute::subquery`); None where none was compiled.
    pub subq: Option<&'a dyn Subqueries>,
}

/// The subqueries of a running SELECT, as evaluation reads them (`execute::subquery`).
pub(crate) trait Subqueries {
    /// The rows of subquery `id` for the enclosing row `row` (computed once when the
    /// subquery is uncorrelated).
    fn rows(&self, id: usize, row: &[Value], env: &Env) -> Result<Rc<SubRows>, SqlError>;
}

/// The rows of one subquery execution, and the hash set `IN` looks values up in (built on
/// first use, kept with the rows: once per statement for an uncorrelated subquery).
pub(crate) struct SubRows {
    pub rows: Vec<Vec<Value>>,
    pub set: OnceCell<Option<InSet>>,
}

/// The first column's values as keys; `ints`: every value is an integer (keyed as i128),
/// else every value is a string (keyed by its sort key). NULLs are only counted.
pub(crate) struct InSet {
    pub ints: bool,
    pub keys: HashSet<Vec<u8>>,
    pub has_null: bool,
}

impl SubRows {
    pub fn new(rows: Vec<Vec<Value>>) -> Self {
        SubRows {
            rows,
            set: OnceCell::new(),
        }
    }
}

/// The session's `collation_connection` (a utf8mb3 one as its utf8mb4 namesake; the default
/// if it names none onelog has).
pub(crate) fn connection_collation(cx: &ExecContext) -> Collation {
    match crate::sysvar::get_var(cx, "collation_connection", crate::sysvar::VarScope::Session) {
        Ok(Value::Bytes(b)) => std::str::from_utf8(&b)
            .ok()
            .and_then(|n| {
                let n = n.to_ascii_lowercase();
                let rest = n
                    .strip_prefix("utf8mb3_")
                    .or_else(|| n.strip_prefix("utf8_"));
                let n = match rest {
                    Some(rest) => format!("utf8mb4_{rest}"),
                    None => n,
                };
                Collation::by_name(&n)
            })
            .unwrap_or(Collation::DEFAULT),
        _ => Collation::DEFAULT,
    }
}
