//! Depth guard: no statement text can make a recursive walk overflow a thread's stack.
//!
//! Everything that walks a statement (sqlparser's parser, `Display` and `Drop` of its AST, our
//! `Compiler::compile`, evaluation, result-type inference, planning) recurses once per level of
//! nesting. sqlparser bounds its own recursion (nested parentheses, function calls, prefix
//! operators, subqueries) with its recursion counter, but builds chains of infix operators
//! (`1+1+…`, `a OR b OR …`, `x IS NULL IS NULL …`) and of set operations (`… UNION ALL …`) in
//! loops, as left-deep trees of unbounded depth. This module bounds all of them:
//!
//! 1. [`check_lexical`], before parsing: an upper bound of the tree depth the parser could
//!    build from the text (tokens between list separators, summed over open parentheses) must
//!    stay under [`MAX_LEXICAL_DEPTH`], so even the parser's own drop of a half-built tree on
//!    a syntax error fits the stack.
//! 2. [`PARSER_RECURSION_LIMIT`], given to the parser: recursion inside the parser.
//! 3. [`guard`], right after parsing: one bounded walk over the statement that rebalances long
//!    left-deep chains of an associative logical operator (`AND`, `OR`, `XOR`, `||`) into
//!    balanced trees of the same operands in the same order (so ORM-style `id=1 OR id=2 OR …`
//!    lists of any length are fine and evaluate left to right as before), then measures the
//!    nesting depth of expressions and set operations; deeper than [`MAX_EXPR_DEPTH`] is
//!    refused with MariaDB's 1436 "Thread stack overrun", after the too-deep parts were cut
//!    off and dismantled piece by piece, so dropping them recurses at most that deep too.
//!
//! Invariant: every statement handed on from [`crate::parse`] has an expression/set-operation
//! nesting depth of at most [`MAX_EXPR_DEPTH`]; the per-level stack cost of every walk times
//! that depth stays well below [`THREAD_STACK_SIZE`], the stack size of the threads that run
//! statements (the server's connection threads).

use onelog_protocol::errors;
use std::ops::ControlFlow;

use sqlparser::ast::{
    BinaryOperator, Expr, Ident, ObjectNamePart, SetExpr, Statement, Value, Values, VisitMut,
    VisitorMut,
};

use crate::error::SqlError;
use crate::parse::lexer::skip_quoted;

/// Stack size of every thread that runs statements (the server's connection threads; tests
/// that run statements in-process use it too, so an overflow there is one in the server).
pub const THREAD_STACK_SIZE: usize = 16 << 20;

/// Deepest expression / set-operation nesting a statement may have (after rebalancing).
/// MariaDB (292 KiB thread stack) refuses `1+1+…` chains and nested calls from about 1,000
/// levels on; about 3 KiB of stack per level in our deepest walk keeps this within 1/4 of
/// [`THREAD_STACK_SIZE`].
pub(crate) const MAX_EXPR_DEPTH: usize = 1_000;

/// Nesting limit handed to sqlparser's recursive descent (parentheses, calls, prefix ops).
pub(crate) const PARSER_RECURSION_LIMIT: usize = 400;

/// Upper bound of the tokens that can stack up into one tree path (see [`check_lexical`]).
/// Every level of a loop-built chain takes an operator and an operand, at least two tokens,
/// so the parser builds at most half this many levels; dropping a parser-built chain costs
/// under 80 bytes of stack per level (measured: 200,000 levels fit in 16 MiB, 400,000 do
/// not), so this stays at half of [`THREAD_STACK_SIZE`] at most.
pub(crate) const MAX_LEXICAL_DEPTH: usize = 200_000;

/// Most tokens the left operand of one `DIV` may span (see [`check_lexical`]).
const MAX_DIV_OPERAND: usize = 2 * MAX_EXPR_DEPTH;

/// Most tokens all `DIV`s of a statement may clone together (see [`check_lexical`]).
const MAX_DIV_WORK: usize = 2_000_000;

/// Left-deep chains of an associative operator at least this long are rebalanced.
const REBALANCE_MIN: usize = 32;

/// 1436 `ER_STACK_OVERRUN_NEED_MORE`, in MariaDB's wording; `depth` is the nesting found.
pub(crate) fn stack_overrun(depth: usize) -> SqlError {
    let size = THREAD_STACK_SIZE;
    let used = (depth.saturating_mul(size / 4) / MAX_EXPR_DEPTH.max(1)).min(size);
    SqlError::of(errors::ER_STACK_OVERRUN_NEED_MORE,
        format!(
            "Thread stack overrun:  {used} bytes used of a {size} byte stack, and 32000 bytes needed. Consider increasing the thread_stack system variable."
        ),
    )
}

/// Refuses (1436) a statement text from which the parser could build a tree deeper than
/// [`MAX_LEXICAL_DEPTH`] tokens allow. The bound: every level of a loop-built chain consumes
/// at least one token, lists (`,`) restart the count, and parentheses stack up.
///
/// Also bounds sqlparser's MySQL `DIV`, which clones its whole left operand (recursively, once
/// per `DIV`): the left operand of a `DIV` may span at most [`MAX_DIV_OPERAND`] tokens
/// (`AND`/`OR`/`XOR`, `,` and parentheses end one), and all `DIV`s together may clone at most
/// [`MAX_DIV_WORK`] tokens.
///
/// Also refuses MySQL's JSON operators `->` and `->>` as MariaDB does (1064 near the `>`;
/// sqlparser would parse them).
pub(crate) fn check_lexical(sql: &str) -> Result<(), SqlError> {
    let b = sql.as_bytes();
    let mut levels: Vec<Level> = vec![Level::default()];
    // Tokens on the current path (sum of `seg` over open levels).
    let mut total = 0usize;
    let mut div_work = 0usize;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b' ' | b'\t' | b'\n' | b'\r' => {
                i += 1;
                continue;
            }
            b'(' => {
                bump(&mut levels, &mut total);
                levels.push(Level::default());
                i += 1;
            }
            b')' => {
                if levels.len() > 1 {
                    let inner = levels.pop().unwrap_or_default();
                    total -= inner.seg;
                    if let Some(top) = levels.last_mut() {
                        top.run += inner.all;
                        top.all += inner.all;
                    }
                }
                i += 1;
            }
            b',' => {
                if let Some(top) = levels.last_mut() {
                    total -= top.seg;
                    top.seg = 0;
                    top.run = 0;
                }
                i += 1;
            }
            b'\'' | b'"' | b'`' => {
                i = skip_quoted(b, i);
                bump(&mut levels, &mut total);
            }
            _ if c.is_ascii_alphanumeric() || c == b'_' || c == b'@' || c == b'$' || c >= 0x80 => {
                let start = i;
                while i < b.len()
                    && (b[i].is_ascii_alphanumeric()
                        || matches!(b[i], b'_' | b'@' | b'$' | b'.')
                        || b[i] >= 0x80)
                {
                    i += 1;
                }
                let word = &sql[start..i];
                let top = levels.len() - 1;
                if word.eq_ignore_ascii_case("DIV") {
                    let run = levels[top].run;
                    div_work = div_work.saturating_add(run);
                    if run > MAX_DIV_OPERAND || div_work > MAX_DIV_WORK {
                        return Err(stack_overrun(run.max(MAX_EXPR_DEPTH + 1)));
                    }
                }
                bump(&mut levels, &mut total);
                if ["AND", "OR", "XOR"]
                    .iter()
                    .any(|k| word.eq_ignore_ascii_case(k))
                {
                    levels[top].run = 0;
                }
            }
            _ => {
                // A run of operator characters (`||`, `<=>`, `->>`) is one token.
                let op = |c: u8| b"+-*/%=<>!|&^~:".contains(&c);
                let start = i;
                i += 1;
                while op(c) && i < b.len() && op(b[i]) {
                    i += 1;
                }
                if let Some(at) = b[start..i].windows(2).position(|w| w == b"->") {
                    // MySQL's `->`/`->>`: MariaDB's grammar has no such operator.
                    return Err(SqlError::syntax(&sql[start + at + 1..]));
                }
                bump(&mut levels, &mut total);
            }
        }
        if total > MAX_LEXICAL_DEPTH {
            return Err(stack_overrun(total));
        }
    }
    Ok(())
}

/// Token counts of one open parenthesis level in [`check_lexical`].
#[derive(Default)]
struct Level {
    /// Since the last `,` (what stacks up into one tree path).
    seg: usize,
    /// Since the last `,`/`AND`/`OR`/`XOR` (an upper bound of a `DIV`'s left operand).
    run: usize,
    /// All tokens of the level.
    all: usize,
}

fn bump(levels: &mut [Level], total: &mut usize) {
    if let Some(top) = levels.last_mut() {
        top.seg += 1;
        top.run += 1;
        top.all += 1;
    }
    *total += 1;
}

/// Rebalances long associative chains and bounds the nesting depth of `stmt` (see the module
/// docs). On error the over-deep parts have been cut out and dropped; what is left of `stmt`
/// is shallow and safe to drop.
pub(crate) fn guard(stmt: &mut Statement) -> Result<(), SqlError> {
    guard_node(stmt)
}

/// [`guard`] for a lone expression (e.g. the value of a `SET`).
pub(crate) fn guard_expr(expr: &mut Expr) -> Result<(), SqlError> {
    guard_node(expr)
}

fn guard_node<T: VisitMut>(node: &mut T) -> Result<(), SqlError> {
    let mut g = Guard::default();
    let _ = node.visit(&mut g);
    debug_assert_eq!(g.depth, 0, "pre/post visits pair up");
    if g.cut.is_empty() {
        return match g.reserved {
            Some(word) => Err(SqlError::syntax(&word)),
            None => Ok(()),
        };
    }
    let deepest = g.deepest;
    dismantle(g.cut);
    Err(stack_overrun(deepest))
}

/// A subtree cut out of a statement because it was nested too deep.
// The size difference does not matter: pieces exist only on the refusal path, a few at a time.
#[allow(clippy::large_enum_variant)]
enum Piece {
    Expr(Expr),
    Set(SetExpr),
}

/// Drops cut-out pieces without deep recursion: each piece is walked by a fresh guard, which
/// cuts its own too-deep parts out again, so every drop recurses at most [`MAX_EXPR_DEPTH`].
fn dismantle(mut pieces: Vec<Piece>) {
    while let Some(mut p) = pieces.pop() {
        let mut g = Guard::default();
        let _ = match &mut p {
            Piece::Expr(e) => e.visit(&mut g),
            Piece::Set(s) => s.visit(&mut g),
        };
        pieces.append(&mut g.cut);
        drop(p);
    }
}

#[derive(Default)]
struct Guard {
    /// Nesting of expressions around the node being visited.
    depth: usize,
    /// Deepest nesting seen (for the error message).
    deepest: usize,
    cut: Vec<Piece>,
    /// A bare identifier spelled like a reserved word that starts an expression (see
    /// [`RESERVED_EXPR_WORDS`]).
    reserved: Option<String>,
}

/// MariaDB reserved words that begin an expression. sqlparser, when parsing one as that
/// expression fails (notably when the parse reaches its recursion limit), falls back to taking
/// the word as a column name; MariaDB never accepts them unquoted as names. Found as a bare
/// identifier, the statement is a syntax error (1064), never run with a column `SELECT`.
const RESERVED_EXPR_WORDS: &[&str] = &["SELECT", "NOT", "CASE", "EXISTS", "INTERVAL", "WITH"];

/// Of [`RESERVED_EXPR_WORDS`], those sqlparser's same fallback can take for a function's
/// name when a `(` follows (`(SELECT (SELECT ...` at the limit became a call of `SELECT`,
/// answering 1305 "FUNCTION SELECT does not exist"). `INTERVAL(N, N1, ...)` is a function.
const RESERVED_CALL_WORDS: &[&str] = &["SELECT", "NOT", "CASE", "EXISTS", "WITH"];

/// Whether `id` is one of `words`, unquoted.
fn is_bare_word(id: &Ident, words: &[&str]) -> bool {
    id.quote_style.is_none() && words.iter().any(|w| id.value.eq_ignore_ascii_case(w))
}

fn null_expr() -> Expr {
    Expr::value(Value::Null)
}

fn empty_set() -> SetExpr {
    SetExpr::Values(Values {
        explicit_row: false,
        value_keyword: false,
        rows: Vec::new(),
    })
}

impl VisitorMut for Guard {
    type Break = ();

    fn pre_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<()> {
        let bare = match &*e {
            Expr::Identifier(id) if is_bare_word(id, RESERVED_EXPR_WORDS) => Some(id),
            Expr::Function(f) => match f.name.0.as_slice() {
                [ObjectNamePart::Identifier(id)] if is_bare_word(id, RESERVED_CALL_WORDS) => {
                    Some(id)
                }
                _ => None,
            },
            _ => None,
        };
        if let Some(id) = bare {
            self.reserved.get_or_insert_with(|| id.value.clone());
        }
        rebalance(e);
        self.depth += 1;
        self.deepest = self.deepest.max(self.depth);
        if self.depth > MAX_EXPR_DEPTH {
            // Replaced by a leaf: the visitor goes no deeper here.
            self.cut
                .push(Piece::Expr(std::mem::replace(e, null_expr())));
        }
        ControlFlow::Continue(())
    }

    fn post_visit_expr(&mut self, _e: &mut Expr) -> ControlFlow<()> {
        self.depth -= 1;
        ControlFlow::Continue(())
    }

    fn pre_visit_query(&mut self, q: &mut sqlparser::ast::Query) -> ControlFlow<()> {
        // Set operations nest without passing through an expression: walk their tree here,
        // iteratively, and cut it where it gets too deep.
        let mut stack: Vec<(&mut SetExpr, usize)> = vec![(&mut *q.body, self.depth + 1)];
        while let Some((node, d)) = stack.pop() {
            self.deepest = self.deepest.max(d);
            if d > MAX_EXPR_DEPTH {
                self.cut
                    .push(Piece::Set(std::mem::replace(node, empty_set())));
                continue;
            }
            if let SetExpr::SetOperation { left, right, .. } = node {
                stack.push((&mut **left, d + 1));
                stack.push((&mut **right, d + 1));
            }
        }
        ControlFlow::Continue(())
    }
}

/// The operators whose left-deep chains are rebalanced: associative, and evaluated left to
/// right with the same short-circuit result whatever the grouping.
fn associative(op: &BinaryOperator) -> bool {
    matches!(
        op,
        BinaryOperator::And
            | BinaryOperator::Or
            | BinaryOperator::Xor
            | BinaryOperator::StringConcat
    )
}

/// Length of the left spine of `e` made of `op` nodes.
fn spine_len(mut e: &Expr, op: &BinaryOperator) -> usize {
    let mut n = 0;
    while let Expr::BinaryOp { left, op: o, .. } = e {
        if o != op {
            break;
        }
        n += 1;
        e = left;
    }
    n
}

/// Turns a long left-deep chain `((a op b) op c) op …` at `e` into a balanced tree of the
/// same operands in the same order (depth log2 of their number). Iterative throughout.
fn rebalance(e: &mut Expr) {
    let op = match e {
        Expr::BinaryOp { op, .. } if associative(op) => op.clone(),
        _ => return,
    };
    if spine_len(e, &op) < REBALANCE_MIN {
        return;
    }
    // Unlink the spine: operands collected right to left.
    let mut operands = Vec::new();
    let mut cur = std::mem::replace(e, null_expr());
    loop {
        match cur {
            Expr::BinaryOp { left, op: o, right } if o == op => {
                operands.push(*right);
                cur = *left;
            }
            other => {
                operands.push(other);
                break;
            }
        }
    }
    operands.reverse();
    // Pairwise reduction keeps the order and gives a balanced tree.
    while operands.len() > 1 {
        let mut next = Vec::with_capacity(operands.len().div_ceil(2));
        let mut it = operands.into_iter();
        while let Some(a) = it.next() {
            match it.next() {
                Some(b) => next.push(Expr::BinaryOp {
                    left: Box::new(a),
                    op: op.clone(),
                    right: Box::new(b),
                }),
                None => next.push(a),
            }
        }
        operands = next;
    }
    if let Some(balanced) = operands.pop() {
        *e = balanced;
    }
    debug_assert!(spine_len(e, &op) < REBALANCE_MIN);
}
