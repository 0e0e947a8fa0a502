//! What an evaluation may read besides the row: the session (time, variables, user,
//! limits), the statement's parameters and, for `VALUES(col)`, the row INSERT wanted to write.
//! Built by each executor per statement; read by `eval` and the built-in functions.
//!
//! Invariants: an `Env` lives for one statement; what it reads from the execution context is
//! fixed for that statement (its start time, its parameters).

use onelog_binlog::Value;

use crate::context::ExecContext;

/// Per-statement evaluation environment.
pub(crate) struct Env<'a> {
    pub cx: &'a ExecContext,
    pub params: &'a [Value],
    /// The row INSERT wanted to write (for `VALUES(col)`).
    pub insert_row: Option<&'a [Value]>,
}
