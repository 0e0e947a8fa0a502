//! The names MariaDB gives select-list items without an alias.
//!
//! MariaDB names such an item by its text as written: `SELECT a+1, COUNT( * )` returns columns
//! `a+1` and `COUNT( * )`, `CREATE TABLE t2 AS SELECT a+1 FROM t` makes a column `a+1`, and
//! ORDER BY, GROUP BY and HAVING may name the item: ``ORDER BY `a+1` ``. Items that carry a
//! name of their own keep it: a column is named by the column (`t.a` and `(a)` are `a`), a
//! string literal by its value without leading spaces (`'it''s'`, `N'x'` and `_utf8mb4'x'`),
//! `TRUE`, `FALSE` and `NULL` in capitals, a number as written, and `+x` as `x`. A name is at
//! most 255 bytes, cut at a character.
//!
//! sqlparser keeps no source text and its spans do not cover whole expressions (a unary
//! operator or `IS NULL` is left out of its span), so after a statement is parsed
//! [`name_items`] finds each SELECT's list in the text from the position of its `SELECT`
//! keyword, splits it at the commas outside brackets and quotes, and gives every item that
//! has no name of its own its text as an alias (a backquoted one), as MariaDB's parser does.
//! The items of `RETURNING` are named the same way, from the text after the word.
//! The text is the statement as parsed: comments already stripped (each block comment left
//! as one space, as MariaDB's names show them).
//!
//! Invariants: a SELECT whose list cannot be matched item for item with the text (a
//! different count, a position that is not a `SELECT` keyword) is left as parsed, and its
//! items are then named by [`item_name`]'s fallback, the expression as sqlparser prints it;
//! nothing here fails or panics on any input; the scan of one list is linear in its text.

use std::collections::HashMap;
use std::ops::ControlFlow;

use sqlparser::ast::{self, VisitMut, VisitorMut};

use super::lexer::skip_quoted;

/// MariaDB's longest item name, in bytes.
const MAX_NAME_BYTES: usize = 255;

/// Words that end a select list when they stand outside brackets.
const LIST_ENDS: &[&str] = &[
    "FROM",
    "INTO",
    "WHERE",
    "GROUP",
    "HAVING",
    "ORDER",
    "LIMIT",
    "UNION",
    "EXCEPT",
    "INTERSECT",
    "WINDOW",
    "FOR",
    "LOCK",
    "PROCEDURE",
];

/// Words between `SELECT` and its first item.
const MODIFIERS: &[&str] = &[
    "ALL",
    "DISTINCT",
    "DISTINCTROW",
    "HIGH_PRIORITY",
    "STRAIGHT_JOIN",
    "SQL_SMALL_RESULT",
    "SQL_BIG_RESULT",
    "SQL_BUFFER_RESULT",
    "SQL_CACHE",
    "SQL_NO_CACHE",
    "SQL_CALC_FOUND_ROWS",
];

/// The name an item has of its own, or None when MariaDB names it by its text.
pub(crate) fn own_name(e: &ast::Expr) -> Option<String> {
    match e {
        ast::Expr::Identifier(i) => Some(i.value.clone()),
        // `@@GLOBAL.x` names its column as written; `t.c` is `c`.
        ast::Expr::CompoundIdentifier(p)
            if p.first().is_some_and(|i| i.value.starts_with("@@")) =>
        {
            Some(
                p.iter()
                    .map(|i| i.value.as_str())
                    .collect::<Vec<_>>()
                    .join("."),
            )
        }
        ast::Expr::CompoundIdentifier(p) => p.last().map(|i| i.value.clone()),
        ast::Expr::Value(v) => match &v.value {
            ast::Value::SingleQuotedString(s)
            | ast::Value::DoubleQuotedString(s)
            | ast::Value::NationalStringLiteral(s) => Some(unspaced(s)),
            ast::Value::Boolean(true) => Some("TRUE".into()),
            ast::Value::Boolean(false) => Some("FALSE".into()),
            ast::Value::Null => Some("NULL".into()),
            // Kept as written (`1.50`, `1e3`, `.5`), as MariaDB names them.
            ast::Value::Number(..) | ast::Value::Placeholder(_) => Some(v.value.to_string()),
            _ => None,
        },
        ast::Expr::Prefixed { value, .. } => match &**value {
            ast::Expr::Value(v) => match &v.value {
                ast::Value::SingleQuotedString(s) | ast::Value::DoubleQuotedString(s) => {
                    Some(unspaced(s))
                }
                _ => None,
            },
            _ => None,
        },
        // Brackets around a column or a literal leave the item as it is.
        ast::Expr::Nested(inner) => match &**inner {
            ast::Expr::Identifier(_)
            | ast::Expr::CompoundIdentifier(_)
            | ast::Expr::Nested(_)
            | ast::Expr::Value(_)
            | ast::Expr::Prefixed { .. } => own_name(inner),
            _ => None,
        },
        // MariaDB's parser drops a unary plus: `+1` is the literal 1, named `1`.
        ast::Expr::UnaryOp {
            op: ast::UnaryOperator::Plus,
            expr,
        } => own_name(expr),
        _ => None,
    }
}

/// A string literal's name: its value without leading white space.
fn unspaced(s: &str) -> String {
    s.trim_start_matches(|c: char| c.is_ascii_whitespace())
        .to_string()
}

/// The column name of an unaliased select-list item whose text [`name_items`] could not find:
/// its own name, else the expression as sqlparser prints it.
pub(crate) fn item_name(e: &ast::Expr) -> String {
    own_name(e).unwrap_or_else(|| e.to_string())
}

/// `name` cut to MariaDB's longest name (at a character boundary).
pub(crate) fn clip_name(name: &mut String) {
    if name.len() > MAX_NAME_BYTES {
        let mut end = MAX_NAME_BYTES;
        while !name.is_char_boundary(end) {
            end -= 1;
        }
        name.truncate(end);
    }
}

/// Gives every unaliased select-list item of `stmt` that has no name of its own its text in
/// `text` (the text `stmt` was parsed from) as its alias (module docs).
pub(crate) fn name_items(stmt: &mut ast::Statement, text: &str) {
    name_returning(stmt, text);
    // Most statements hold no SELECT: not even a walk of their tree for them.
    if !text
        .as_bytes()
        .windows(6)
        .any(|w| w.eq_ignore_ascii_case(b"SELECT"))
    {
        return;
    }
    let mut wanted = Wanted::default();
    let _ = VisitMut::visit(stmt, &mut wanted);
    if wanted.0.is_empty() {
        return;
    }
    let offsets = byte_offsets(text, wanted.0);
    let _ = VisitMut::visit(
        stmt,
        &mut Namer {
            text,
            offsets: &offsets,
        },
    );
}

/// The items of `INSERT / DELETE / UPDATE ... RETURNING`, named as a select list's.
fn name_returning(stmt: &mut ast::Statement, text: &str) {
    let items = match stmt {
        ast::Statement::Insert(i) => i.returning.as_mut(),
        ast::Statement::Delete(d) => d.returning.as_mut(),
        ast::Statement::Update(u) => u.returning.as_mut(),
        _ => None,
    };
    let Some(items) = items.filter(|items| needs_text(items)) else {
        return;
    };
    let Some(at) = super::lexer::top_level_word(text, "RETURNING") else {
        return;
    };
    let texts = split_list(text, at + "RETURNING".len());
    if texts.len() == items.len() {
        name_by_text(items, &texts);
    }
}

/// Line and column (sqlparser's, from 1) of the SELECT keywords whose lists need text.
#[derive(Default)]
struct Wanted(Vec<(u64, u64)>);

// A `VisitorMut` that changes nothing, so that both passes share `for_selects_mut`.
impl VisitorMut for Wanted {
    type Break = ();

    fn pre_visit_query(&mut self, q: &mut ast::Query) -> ControlFlow<()> {
        for_selects_mut(&mut q.body, &mut |sel| {
            if needs_text(&sel.projection) {
                let at = sel.select_token.0.span.start;
                self.0.push((at.line, at.column));
            }
        });
        ControlFlow::Continue(())
    }
}

fn needs_text(items: &[ast::SelectItem]) -> bool {
    items
        .iter()
        .any(|i| matches!(i, ast::SelectItem::UnnamedExpr(e) if own_name(e).is_none()))
}

/// Calls `f` on each SELECT of a query body (the arms of a UNION too; a bracketed query is a
/// query of its own, which the visitor reaches by itself).
fn for_selects_mut(body: &mut ast::SetExpr, f: &mut dyn FnMut(&mut ast::Select)) {
    match body {
        ast::SetExpr::Select(s) => f(s),
        ast::SetExpr::SetOperation { left, right, .. } => {
            for_selects_mut(left, f);
            for_selects_mut(right, f);
        }
        _ => {}
    }
}

/// Byte offsets in `text` of the given (line, column) positions, found in one pass.
pub(super) fn byte_offsets(text: &str, mut at: Vec<(u64, u64)>) -> HashMap<(u64, u64), usize> {
    at.sort_unstable();
    at.dedup();
    let mut out = HashMap::with_capacity(at.len());
    let mut want = at.into_iter().peekable();
    let (mut line, mut column) = (1u64, 1u64);
    for (i, c) in text.char_indices() {
        while let Some(&w) = want.peek() {
            if w < (line, column) {
                want.next();
            } else {
                break;
            }
        }
        match want.peek() {
            Some(&w) if w == (line, column) => {
                out.insert(w, i);
                want.next();
            }
            None => break,
            _ => {}
        }
        // Counted as sqlparser's tokenizer counts them.
        if c == '\n' {
            line += 1;
            column = 1;
        } else {
            column += 1;
        }
    }
    out
}

struct Namer<'a> {
    text: &'a str,
    offsets: &'a HashMap<(u64, u64), usize>,
}

impl VisitorMut for Namer<'_> {
    type Break = ();

    fn pre_visit_query(&mut self, q: &mut ast::Query) -> ControlFlow<()> {
        for_selects_mut(&mut q.body, &mut |sel| {
            if !needs_text(&sel.projection) {
                return;
            }
            let start = sel.select_token.0.span.start;
            let Some(&at) = self.offsets.get(&(start.line, start.column)) else {
                return;
            };
            if let Some(items) = list_items(self.text, at) {
                if items.len() == sel.projection.len() {
                    name_by_text(&mut sel.projection, &items);
                }
            }
        });
        ControlFlow::Continue(())
    }
}

/// Gives the items without a name of their own their text as alias.
fn name_by_text(items: &mut [ast::SelectItem], texts: &[&str]) {
    for (item, text) in items.iter_mut().zip(texts) {
        let ast::SelectItem::UnnamedExpr(e) = item else {
            continue;
        };
        if own_name(e).is_some() || text.is_empty() {
            continue;
        }
        let mut name = text.to_string();
        clip_name(&mut name);
        let expr = std::mem::replace(e, ast::Expr::Value(ast::Value::Null.into()));
        *item = ast::SelectItem::ExprWithAlias {
            expr,
            alias: ast::Ident::with_quote('`', name),
        };
    }
}

/// The items' texts (trimmed) of the select list whose `SELECT` keyword starts at byte `at`
/// of `text`, or None when no `SELECT` starts there.
fn list_items(text: &str, at: usize) -> Option<Vec<&str>> {
    let b = text.as_bytes();
    let keyword = text.get(at..at + 6)?;
    if !keyword.eq_ignore_ascii_case("SELECT") || b.get(at + 6).is_some_and(|&c| is_name(c)) {
        return None;
    }
    let mut items = split_list(text, at + 6);
    if let Some(first) = items.first_mut() {
        *first = strip_modifiers(first);
    }
    Some(items)
}

/// The trimmed texts of the comma-separated list that starts at byte `from` of `text` and
/// ends at a clause's word, a `;` or a `)` outside brackets and quotes, or at the end.
fn split_list(text: &str, from: usize) -> Vec<&str> {
    let b = text.as_bytes();
    let mut items = Vec::new();
    let mut depth = 0usize;
    let mut i = from.min(b.len());
    let mut start = i;
    while i < b.len() {
        let c = b[i];
        match c {
            b'\'' | b'"' | b'`' => {
                i = skip_quoted(b, i);
                continue;
            }
            b'(' | b'{' | b'[' => depth += 1,
            b')' | b'}' | b']' => {
                if depth == 0 {
                    break;
                }
                depth -= 1;
            }
            b',' if depth == 0 => {
                items.push(text.get(start..i).unwrap_or("").trim());
                start = i + 1;
            }
            b';' if depth == 0 => break,
            b'@' => {
                // A variable's name is never a clause's word: `@from`, `@@global.limit`.
                i += 1;
                while i < b.len() && (is_name(b[i]) || b[i] == b'@' || b[i] == b'.') {
                    i += 1;
                }
                continue;
            }
            c if is_name(c) => {
                let end = (i..b.len()).find(|&k| !is_name(b[k])).unwrap_or(b.len());
                let qualified = i > 0 && b[i - 1] == b'.';
                if depth == 0 && !qualified && LIST_ENDS.iter().any(|w| is_word(text, i, end, w)) {
                    break;
                }
                i = end;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    items.push(text.get(start..i.min(b.len())).unwrap_or("").trim());
    items
}

/// `first` without the SELECT modifiers it starts with.
fn strip_modifiers(mut first: &str) -> &str {
    loop {
        let end = first.bytes().take_while(|&c| is_name(c)).count();
        if !MODIFIERS.iter().any(|m| is_word(first, 0, end, m)) {
            return first;
        }
        first = first[end..].trim_start();
    }
}

/// Whether `text[start..end]` is the word `w` (ASCII, any case).
fn is_word(text: &str, start: usize, end: usize, w: &str) -> bool {
    end - start == w.len()
        && text
            .get(start..end)
            .is_some_and(|s| s.eq_ignore_ascii_case(w))
}

/// A byte of an unquoted name or number (non-ASCII bytes are parts of names).
fn is_name(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(sql: &str) -> ast::Statement {
        sqlparser::parser::Parser::new(&super::super::dialect::OnelogDialect::default())
            .try_with_sql(sql)
            .and_then(|mut p| p.parse_statement())
            .expect("parses")
    }

    fn names(sql: &str) -> Vec<String> {
        let mut stmt = parsed(sql);
        name_items(&mut stmt, sql);
        let ast::Statement::Query(q) = stmt else {
            panic!("not a query")
        };
        let ast::SetExpr::Select(sel) = *q.body else {
            panic!("not a select")
        };
        sel.projection
            .iter()
            .map(|i| match i {
                ast::SelectItem::UnnamedExpr(e) => item_name(e),
                ast::SelectItem::ExprWithAlias { alias, .. } => alias.value.clone(),
                other => other.to_string(),
            })
            .map(|mut n| {
                clip_name(&mut n);
                n
            })
            .collect()
    }

    #[test]
    fn items_are_named_by_their_text_as_mariadb_names_them() {
        // Each expected name is what MariaDB 10.11.19 returned for the same statement.
        assert_eq!(
            names("SELECT 1+1, COUNT( * ) , MAX(a)+1, IF(a>0,1,0), a IN (1,2), x'41', b'01', a<=>NULL, a MOD 2, (a)+1, - 1 FROM t"),
            [
                "1+1",
                "COUNT( * )",
                "MAX(a)+1",
                "IF(a>0,1,0)",
                "a IN (1,2)",
                "x'41'",
                "b'01'",
                "a<=>NULL",
                "a MOD 2",
                "(a)+1",
                "- 1"
            ]
        );
        assert_eq!(
            names("select distinct SQL_NO_CACHE\n   1  +\n 2   , t.a, (a), ((t.a)), 'it''s', N'x', _utf8mb4'y', true, False, nuLL, +1, +a, 1.50 from t"),
            ["1  +\n 2", "a", "a", "a", "it's", "x", "y", "TRUE", "FALSE", "NULL", "1", "a", "1.50"]
        );
    }

    #[test]
    fn nested_selects_and_unions_are_named_each_by_its_own_text() {
        let sql = "SELECT (SELECT MAX(b)*2 FROM u WHERE u.x=t.a), a*3 FROM t WHERE a IN (SELECT y+1 FROM v) UNION SELECT 4-1, 5";
        let mut stmt = parsed(sql);
        name_items(&mut stmt, sql);
        let printed = stmt.to_string();
        for alias in [
            "AS `(SELECT MAX(b)*2 FROM u WHERE u.x=t.a)`",
            "AS `MAX(b)*2`",
            "AS `a*3`",
            "AS `y+1`",
            "AS `4-1`",
        ] {
            assert!(printed.contains(alias), "{alias} in {printed}");
        }
        assert!(!printed.contains("AS `5`"), "{printed}");
    }

    #[test]
    fn long_names_are_cut_at_255_bytes_on_a_character() {
        let expr = vec!["'é'"; 100].join("+");
        let got = names(&format!("SELECT {expr}"));
        assert_eq!(got[0].len(), 255);
        assert!(expr.starts_with(&got[0]));
        // A string's name is its value: 127 of 300 two-byte characters, as in MariaDB.
        let got = names(&format!("SELECT '{}'", "é".repeat(300)));
        assert_eq!(got[0], "é".repeat(127), "a cut never splits a character");
    }

    #[test]
    fn a_list_that_does_not_match_the_text_keeps_the_printed_names() {
        // The text given is not the text parsed: the position holds no SELECT.
        let mut stmt = parsed("SELECT a+1 FROM t");
        name_items(&mut stmt, "xxxxxxxxxxxxxxxxx");
        assert_eq!(stmt.to_string(), "SELECT a + 1 FROM t");
        assert_eq!(list_items("SELECT a, b FROM t", 0), Some(vec!["a", "b"]));
        assert_eq!(
            list_items("SELECT a, (b, c) FROM t", 0),
            Some(vec!["a", "(b, c)"])
        );
        assert_eq!(list_items("SELECTa", 0), None);
        assert_eq!(list_items("", 3), None);
        assert_eq!(
            list_items("SELECT @from, t.limit, 'FROM' FOR UPDATE", 0),
            Some(vec!["@from", "t.limit", "'FROM'"])
        );
    }
}
