//! Expressions: the compiled form ([`Expr`]) of sqlparser expressions, their evaluation with
//! MySQL semantics (three-valued logic, numeric promotion, string/number comparison), the
//! built-in functions, aggregates' slots, result type inference ([`RType`]) and the value
//! conversions shared by INSERT/UPDATE (string -> number, text -> date, ...).
//!
//! One module per mechanism, lower ones first (none imports a module listed after it):
//! - `warnings`: conditions raised during evaluation, per thread;
//! - `text`, `temporal`, `numeric`, `like`, `json`, `json_forms`, `members`: the text, date/time
//!   and number views of a value, decimal arithmetic, LIKE, JSON documents and paths (and their
//!   detailed, normalized and overlap views), ENUM/SET values;
//! - `ir`: the compiled expression tree; `env`: what evaluation reads besides the row;
//! - `coerce`, `ops`: comparison, CAST, column conversion; operators on two values;
//! - `collate`: collation derivation of expressions and comparison under a collation;
//! - `types`: result types;
//! - `functions`: the built-in functions, one file per family, each function declared once;
//! - `infer`, `compile`, `eval`: typing, compilation and evaluation of a whole tree;
//! - `row`: row constructors compared with each other (and with a subquery's row);
//! - `subq`: subqueries in expressions (compiled through a hook, evaluated on the rows the
//!   statement's `Subqueries` give).
//!
//! Invariants: a compiled [`Expr`] refers to columns by position in the row it is evaluated
//! on and to `?` placeholders by their order of appearance in the statement text (compile in
//! textual order); evaluation never panics on any input; session-dependent values (`NOW()`,
//! `@@var`, `DATABASE()`) are read at evaluation time, so a cached compiled statement stays
//! valid across executions. Numeric results follow MariaDB's overflow rules (1690 with the
//! expression written from its operand values; DECIMAL up to [`numeric::DEC_MAX_DIGITS`]
//! digits); conditions raised during evaluation (CAST truncation, division by zero, strings
//! that are not numbers) go to a per-thread list ([`warn`]) that the session drains after each
//! statement ([`take_warnings`]), at most [`warnings::MAX_EVAL_WARNINGS`] of them. Each
//! module below asserts its part of these.
//!
//! Callers: the executors (`select`, `dml`, `ddl`), the planner, the session and `admin`
//! (`SET`), all through the re-exports below.

mod coerce;
mod collate;
mod compile;
mod env;
mod eval;
mod functions;
mod hybrid;
pub(crate) use hybrid::for_column as hybrid_for_column;
mod infer;
mod interval;
mod ir;
pub(crate) mod json;
mod json_forms;
mod like;
mod members;
mod numeric;
mod ops;
mod row;
mod subq;
pub(crate) use subq::split_and;
pub(crate) mod temporal;
mod text;
mod types;
mod warnings;
mod window;

pub(crate) use coerce::{compare, convert_for_column};
pub(crate) use collate::{
    charset_named, check_charset, collation_named, compare_in, key_bytes_in, order_collation,
    sort_cmp_in, table_collation, CollRef,
};
pub(crate) use compile::{
    negate_literal, number_literal, numeric_view, object_name_parts, Compiler, Deriv, OuterNames,
    Scope, SubqInfo, SubqueryHook,
};
pub(crate) use env::{connection_collation, Env, SubRows, Subqueries};
pub(crate) use eval::eval_scalar;
pub(crate) use functions::statement_now;
pub(crate) use ir::{AggFunc, AggSpec, BinOp, Expr, Subq, SubqKind};
pub(crate) use json::valid as json_valid;
pub(crate) use members::store_value as member_value;
pub(crate) use numeric::{
    float_digits, number_prefix, parse_num_prefix, quotient_digits, set_div_precision_increment,
    to_f64, to_f64_quiet, to_i128, truth, Num2,
};
pub(crate) use ops::binary_values;
pub(crate) use window::{misplaced as misplaced_window, named_windows, WinCall, WinFunc};

pub(crate) use text::{sql_text, text_of};
pub(crate) use types::{conform, rtype_column, value_rtype, RType};
pub(crate) use warnings::{
    has_code_since, has_warning, renumber_row_warnings, take_warnings, warn, warning_count,
};
