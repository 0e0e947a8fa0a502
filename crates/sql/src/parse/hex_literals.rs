//! Which hexadecimal literals are hex hybrids.
//!
//! MariaDB has two spellings of a hexadecimal literal, and they differ: `0x41` is a *hex
//! hybrid*, a binary string that reads as the number its bytes spell wherever a number is
//! wanted (`0x41 + 0` is 65, `flags & 0x4` tests a bit, `INSERT INTO t(int_col) VALUES
//! (0x10)` stores 16), while `X'41'` is a binary string everywhere (`X'41' + 0` is 0, as
//! `'A' + 0` is). sqlparser reads both as `Value::HexStringLiteral`, so after a statement
//! (or a stored expression) is parsed, [`mark_hybrids`] finds the `0x` spelling by the
//! literal's position in the text and turns it into `Value::Number("0x..")`, the form the
//! expression compiler reads as a hybrid (`expr::hybrid`), with its digits as MariaDB prints
//! a hybrid (lower case, an even count: `0xaB1` is `0x0ab1`), so a stored CHECK constraint
//! shows `0x..` as MariaDB's does.
//!
//! Invariants: only a literal whose text starts with `0x` is changed, and only to a number
//! of the same bytes; a literal whose position cannot be found in the text is left a
//! string (as it was before this pass existed); text without `0x` costs one scan of its
//! bytes and no walk of the tree.

use std::ops::ControlFlow;

use sqlparser::ast::{self, VisitMut, VisitorMut};

use super::item_names::byte_offsets;

/// Turns each `0x..` literal of `node` (parsed from `text`) into `Value::Number("0x..")`.
pub(crate) fn mark_hybrids<N: VisitMut>(node: &mut N, text: &str) {
    if !text.as_bytes().windows(2).any(|w| w == b"0x") {
        return;
    }
    let mut found = Found(Vec::new());
    let _ = node.visit(&mut found);
    if found.0.is_empty() {
        return;
    }
    let offsets = byte_offsets(text, found.0);
    let _ = node.visit(&mut Marker {
        text: text.as_bytes(),
        offsets: &offsets,
    });
}

/// The positions (sqlparser's line and column) of the hexadecimal literals.
struct Found(Vec<(u64, u64)>);

fn hex_at(e: &ast::Expr) -> Option<(u64, u64)> {
    match e {
        ast::Expr::Value(v) if matches!(v.value, ast::Value::HexStringLiteral(_)) => {
            Some((v.span.start.line, v.span.start.column))
        }
        _ => None,
    }
}

impl VisitorMut for Found {
    type Break = ();

    fn pre_visit_expr(&mut self, e: &mut ast::Expr) -> ControlFlow<()> {
        self.0.extend(hex_at(e));
        ControlFlow::Continue(())
    }
}

struct Marker<'a> {
    text: &'a [u8],
    offsets: &'a std::collections::HashMap<(u64, u64), usize>,
}

impl VisitorMut for Marker<'_> {
    type Break = ();

    fn pre_visit_expr(&mut self, e: &mut ast::Expr) -> ControlFlow<()> {
        let Some(at) = hex_at(e).and_then(|p| self.offsets.get(&p).copied()) else {
            return ControlFlow::Continue(());
        };
        if self.text.get(at..at + 2) != Some(b"0x") {
            return ControlFlow::Continue(());
        }
        if let ast::Expr::Value(v) = e {
            if let ast::Value::HexStringLiteral(digits) = &v.value {
                // Printed as MariaDB prints a hybrid (a stored CHECK constraint): its bytes
                // in lower-case hex, `0xaB1` as `0x0ab1`.
                let pad = if digits.len() % 2 == 1 { "0" } else { "" };
                let digits = digits.to_ascii_lowercase();
                v.value = ast::Value::Number(format!("0x{pad}{digits}"), false);
            }
        }
        ControlFlow::Continue(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(sql: &str) -> ast::Statement {
        let mut s =
            sqlparser::parser::Parser::new(&super::super::dialect::OnelogDialect::default())
                .try_with_sql(sql)
                .and_then(|mut p| p.parse_statement())
                .expect("parses");
        mark_hybrids(&mut s, sql);
        s
    }

    #[test]
    fn only_the_0x_spelling_becomes_a_number() {
        let s = parsed("SELECT 0x41, X'41', x'42',\n  0xaB1 + 1, 'a0x1', `0x1`, b'01'");
        assert_eq!(
            s.to_string(),
            "SELECT 0x41, X'41', X'42', 0x0ab1 + 1, 'a0x1', `0x1`, B'01'"
        );
        let ast::Statement::Query(q) = s else {
            panic!("a query")
        };
        let ast::SetExpr::Select(sel) = *q.body else {
            panic!("a select")
        };
        let kinds: Vec<bool> = sel
            .projection
            .iter()
            .take(3)
            .map(|i| {
                matches!(
                    i,
                    ast::SelectItem::UnnamedExpr(ast::Expr::Value(v))
                        if matches!(v.value, ast::Value::Number(..))
                )
            })
            .collect();
        assert_eq!(kinds, [true, false, false]);
    }

    #[test]
    fn text_without_0x_is_not_walked_and_odd_positions_change_nothing() {
        // Multi-byte characters before the literal: positions are counted in characters.
        let s = parsed("SELECT 'ééé', 0xff");
        assert!(s.to_string().ends_with("0xff"), "{s}");
        let s = parsed("SELECT X'ff'");
        assert_eq!(s.to_string(), "SELECT X'ff'");
    }
}
