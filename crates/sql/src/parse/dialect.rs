//! The dialect every SQL text is parsed with: sqlparser's [`MySqlDialect`], behaving exactly as
//! it does, plus a fast path for literals.
//!
//! Why: sqlparser's `parse_prefix` first tries every expression as a typed string (`DATE
//! '2020-01-01'`), which for a plain literal fails by building a `ParserError` whose message
//! formats the literal's token; only then does it parse the literal. A bulk INSERT's VALUES is
//! thousands of literals per statement, so that failed attempt (the message's formatting and
//! its allocations) was ~6% of a sysbench prepare's server CPU (issue 14 part 4). A number or a
//! quoted string can never start a typed string, so [`OnelogDialect::parse_prefix`] parses it
//! as the value it is at once (`Parser::parse_value`, what `parse_prefix` ends up calling for
//! it, string concatenation included).
//!
//! Second, MySQL's multi-table `UPDATE t1, t2 SET ...` (a comma-separated table list, which
//! sqlparser's UPDATE does not take): [`comma_update`] parses it into an `Update` whose
//! `table` is the first table and whose `from` (`BeforeSet`) holds the others; a statement
//! with one table reference is left to sqlparser untouched.
//!
//! `UPDATE IGNORE ...` (single or multi-table), which sqlparser reads with `IGNORE` as the
//! table's name, is parsed into an `Update` with sqlparser's `or: Some(Ignore)` (its
//! `UPDATE OR IGNORE`), which the planner reads as MariaDB's IGNORE.
//!
//! `DELETE IGNORE ...` (single or multi-table), which sqlparser reads with `IGNORE` as a
//! table, is parsed as the DELETE after `IGNORE`, marked with an optimizer hint of prefix
//! [`DELETE_IGNORE`] (sqlparser's DELETE has no IGNORE), which the planner reads.
//!
//! Third, MariaDB's infix `a MOD b` (the same operator as `%`, at `*`'s precedence), which
//! sqlparser 0.63 knows only as the function `MOD(a, b)`: [`OnelogDialect::parse_infix`] reads
//! it into the `%` operator's tree.
//!
//! Fourth, MariaDB's functions called without brackets: `CURRENT_USER`, `CURRENT_ROLE`,
//! `UTC_DATE`, `UTC_TIME` and `UTC_TIMESTAMP` (reserved words, so never a column), which
//! sqlparser's MySQL dialect reads as column names: [`OnelogDialect::parse_prefix`] reads such
//! an unquoted word, when no `(` follows it, as a call without arguments (as sqlparser
//! already does for `CURRENT_DATE` and the other time functions).
//!
//! Invariant: apart from those, the dialect is `MySqlDialect`: it forwards every method
//! `MySqlDialect` (sqlparser 0.63) overrides and reports `MySqlDialect`'s type to the parser's
//! `dialect_of!` checks; the other methods keep the trait's defaults, as in `MySqlDialect`. A
//! sqlparser upgrade must re-check the list (the test parses a corpus with both dialects and
//! compares the trees).

use std::any::TypeId;

use sqlparser::ast::{BinaryOperator, Expr, Statement};
use sqlparser::dialect::{Dialect, MySqlDialect, Precedence};
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

/// Functions MariaDB also calls without brackets, whose names sqlparser's MySQL dialect reads
/// as columns (module docs).
const BARE_CALLS: &[&str] = &[
    "CURRENT_USER",
    "CURRENT_ROLE",
    "UTC_DATE",
    "UTC_TIME",
    "UTC_TIMESTAMP",
];

/// [`MySqlDialect`] with the literal fast path (module docs).
#[derive(Debug, Default, Clone, Copy)]
pub struct OnelogDialect(MySqlDialect);

impl Dialect for OnelogDialect {
    fn dialect(&self) -> TypeId {
        TypeId::of::<MySqlDialect>()
    }

    fn parse_prefix(&self, parser: &mut Parser) -> Option<Result<Expr, ParserError>> {
        match &parser.peek_token_ref().token {
            Token::Number(..) | Token::SingleQuotedString(_) | Token::DoubleQuotedString(_) => {
                Some(parser.parse_value().map(Expr::Value))
            }
            Token::Word(w)
                if w.quote_style.is_none()
                    && BARE_CALLS.iter().any(|f| w.value.eq_ignore_ascii_case(f))
                    && parser.peek_nth_token_ref(1).token != Token::LParen =>
            {
                let name = w.to_ident(parser.peek_token_ref().span);
                parser.next_token();
                Some(Ok(Expr::Function(sqlparser::ast::Function {
                    name: sqlparser::ast::ObjectName::from(vec![name]),
                    uses_odbc_syntax: false,
                    parameters: sqlparser::ast::FunctionArguments::None,
                    args: sqlparser::ast::FunctionArguments::None,
                    null_treatment: None,
                    filter: None,
                    over: None,
                    within_group: Vec::new(),
                })))
            }
            _ => None,
        }
    }

    fn is_identifier_start(&self, ch: char) -> bool {
        self.0.is_identifier_start(ch)
    }

    fn is_identifier_part(&self, ch: char) -> bool {
        self.0.is_identifier_part(ch)
    }

    fn is_delimited_identifier_start(&self, ch: char) -> bool {
        self.0.is_delimited_identifier_start(ch)
    }

    fn identifier_quote_style(&self, identifier: &str) -> Option<char> {
        self.0.identifier_quote_style(identifier)
    }

    fn supports_string_literal_backslash_escape(&self) -> bool {
        self.0.supports_string_literal_backslash_escape()
    }

    fn supports_string_literal_concatenation(&self) -> bool {
        self.0.supports_string_literal_concatenation()
    }

    fn ignores_wildcard_escapes(&self) -> bool {
        self.0.ignores_wildcard_escapes()
    }

    fn supports_numeric_prefix(&self) -> bool {
        self.0.supports_numeric_prefix()
    }

    fn supports_bitwise_shift_operators(&self) -> bool {
        self.0.supports_bitwise_shift_operators()
    }

    fn supports_multiline_comment_hints(&self) -> bool {
        self.0.supports_multiline_comment_hints()
    }

    fn parse_infix(
        &self,
        parser: &mut Parser,
        expr: &Expr,
        precedence: u8,
    ) -> Option<Result<Expr, ParserError>> {
        if parser.parse_keyword(Keyword::MOD) {
            let right = match parser.parse_subexpr(precedence) {
                Ok(e) => e,
                Err(e) => return Some(Err(e)),
            };
            return Some(Ok(Expr::BinaryOp {
                left: Box::new(expr.clone()),
                op: BinaryOperator::Modulo,
                right: Box::new(right),
            }));
        }
        self.0.parse_infix(parser, expr, precedence)
    }

    fn get_next_precedence(&self, parser: &Parser) -> Option<Result<u8, ParserError>> {
        match &parser.peek_token_ref().token {
            Token::Word(w) if w.keyword == Keyword::MOD => {
                Some(Ok(self.prec_value(Precedence::MulDivModOp)))
            }
            _ => self.0.get_next_precedence(parser),
        }
    }

    fn parse_statement(&self, parser: &mut Parser) -> Option<Result<Statement, ParserError>> {
        if parser.peek_keyword(Keyword::UPDATE) {
            let ignore = matches!(&parser.peek_nth_token_ref(1).token,
                Token::Word(w) if w.keyword == Keyword::IGNORE);
            if let Some(r) = comma_update(parser, ignore) {
                return Some(r);
            }
            if ignore {
                // `UPDATE IGNORE t ...`: read as sqlparser's `UPDATE OR IGNORE`.
                let token = parser.next_token();
                parser.next_token();
                return Some(parser.parse_update(token).map(|s| match s {
                    Statement::Update(mut u) if u.or.is_none() => {
                        u.or = Some(sqlparser::ast::SqliteOnConflict::Ignore);
                        Statement::Update(u)
                    }
                    other => other,
                }));
            }
        }
        if parser.peek_keyword(Keyword::DELETE)
            && matches!(&parser.peek_nth_token_ref(1).token,
                Token::Word(w) if w.keyword == Keyword::IGNORE)
        {
            // `DELETE IGNORE ...`: sqlparser's DELETE with the [`DELETE_IGNORE`] mark.
            let token = parser.next_token();
            parser.next_token();
            return Some(parser.parse_delete(token).map(|s| match s {
                Statement::Delete(mut d) => {
                    d.optimizer_hints.push(delete_ignore_mark());
                    Statement::Delete(d)
                }
                other => other,
            }));
        }
        self.0.parse_statement(parser)
    }

    fn require_interval_qualifier(&self) -> bool {
        self.0.require_interval_qualifier()
    }

    fn supports_limit_comma(&self) -> bool {
        self.0.supports_limit_comma()
    }

    fn supports_create_table_select(&self) -> bool {
        self.0.supports_create_table_select()
    }

    fn supports_insert_set(&self) -> bool {
        self.0.supports_insert_set()
    }

    fn supports_user_host_grantee(&self) -> bool {
        self.0.supports_user_host_grantee()
    }

    fn is_table_factor_alias(&self, explicit: bool, kw: &Keyword, parser: &mut Parser) -> bool {
        self.0.is_table_factor_alias(explicit, kw, parser)
    }

    fn supports_table_hints(&self) -> bool {
        self.0.supports_table_hints()
    }

    fn requires_single_line_comment_whitespace(&self) -> bool {
        self.0.requires_single_line_comment_whitespace()
    }

    fn supports_match_against(&self) -> bool {
        self.0.supports_match_against()
    }

    fn supports_select_modifiers(&self) -> bool {
        self.0.supports_select_modifiers()
    }

    fn supports_set_names(&self) -> bool {
        self.0.supports_set_names()
    }

    fn supports_comma_separated_set_assignments(&self) -> bool {
        self.0.supports_comma_separated_set_assignments()
    }

    fn supports_update_order_by(&self) -> bool {
        self.0.supports_update_order_by()
    }

    fn supports_data_type_signed_suffix(&self) -> bool {
        self.0.supports_data_type_signed_suffix()
    }

    fn supports_cross_join_constraint(&self) -> bool {
        self.0.supports_cross_join_constraint()
    }

    fn supports_double_ampersand_operator(&self) -> bool {
        self.0.supports_double_ampersand_operator()
    }

    fn supports_binary_kw_as_cast(&self) -> bool {
        self.0.supports_binary_kw_as_cast()
    }

    fn supports_comment_optimizer_hint(&self) -> bool {
        self.0.supports_comment_optimizer_hint()
    }

    fn supports_constraint_keyword_without_name(&self) -> bool {
        self.0.supports_constraint_keyword_without_name()
    }

    fn supports_key_column_option(&self) -> bool {
        self.0.supports_key_column_option()
    }

    fn supports_group_by_with_modifier(&self) -> bool {
        self.0.supports_group_by_with_modifier()
    }

    fn supports_left_associative_joins_without_parens(&self) -> bool {
        self.0.supports_left_associative_joins_without_parens()
    }
}

/// The prefix of the optimizer hint that marks a `DELETE IGNORE` (sqlparser's DELETE has no
/// IGNORE; a user's `/*+ ... */` hint never reaches sqlparser, the splitter drops comments).
pub(crate) const DELETE_IGNORE: &str = "onelog_delete_ignore";

fn delete_ignore_mark() -> sqlparser::ast::OptimizerHint {
    sqlparser::ast::OptimizerHint {
        prefix: DELETE_IGNORE.to_string(),
        text: String::new(),
        style: sqlparser::ast::OptimizerHintStyle::MultiLine,
    }
}

/// `UPDATE t1[, t2 ...] SET ... [WHERE ...] [ORDER BY ...] [LIMIT n]` with at least two
/// comma-separated table references (module docs); None (the parser rewound) otherwise.
fn comma_update(parser: &mut Parser, ignore: bool) -> Option<Result<Statement, ParserError>> {
    use sqlparser::ast::helpers::attached_token::AttachedToken;
    use sqlparser::ast::{SqliteOnConflict, Update, UpdateTableFromKind};
    let token = parser.next_token();
    // The UPDATE keyword's own index (whitespace before it is skipped): rewinding to the
    // index before it would step back over the previous word too (EXPLAIN UPDATE looped).
    let start = parser.index() - 1;
    if ignore {
        parser.next_token();
    }
    let rewind = |parser: &mut Parser| {
        while parser.index() > start {
            parser.prev_token();
        }
    };
    let Ok(first) = parser.parse_table_and_joins() else {
        rewind(parser);
        return None;
    };
    if !parser.consume_token(&Token::Comma) {
        rewind(parser);
        return None;
    }
    let rest = (|| {
        let more = parser.parse_comma_separated(Parser::parse_table_and_joins)?;
        parser.expect_keyword(Keyword::SET)?;
        let assignments = parser.parse_comma_separated(Parser::parse_assignment)?;
        let selection = if parser.parse_keyword(Keyword::WHERE) {
            Some(parser.parse_expr()?)
        } else {
            None
        };
        let order_by = if parser.parse_keywords(&[Keyword::ORDER, Keyword::BY]) {
            parser.parse_comma_separated(Parser::parse_order_by_expr)?
        } else {
            Vec::new()
        };
        let limit = if parser.parse_keyword(Keyword::LIMIT) {
            Some(parser.parse_expr()?)
        } else {
            None
        };
        Ok(Statement::Update(Update {
            update_token: AttachedToken(token),
            optimizer_hints: Vec::new(),
            table: first,
            assignments,
            from: Some(UpdateTableFromKind::BeforeSet(more)),
            selection,
            returning: None,
            output: None,
            or: ignore.then_some(SqliteOnConflict::Ignore),
            order_by,
            limit,
        }))
    })();
    Some(rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Statements whose trees must not depend on the fast path: literals in every position
    /// the parser treats specially, and what the MySQL dialect adds.
    const CORPUS: &[&str] = &[
        "INSERT INTO sbtest1(k, c, pad) VALUES(50, '83868641912-28773972837', '67847967377'),(1,'a','b')",
        "INSERT INTO t VALUES (-1, +2, 1.5, .5, 1e3, 1.5E-3, 0x1F, x'ff', b'0101', X'AB')",
        "INSERT INTO t VALUES ('a' 'b' 'c', \"dq\", 'it''s', 'back\\\\slash\\n', N'nat', _utf8mb4'intro')",
        "SELECT DATE '2020-05-20', TIMESTAMP '2020-05-20 07:43:54', TIME '10:11:12'",
        "SELECT NOW() + INTERVAL 1 DAY, DATE_ADD('2020-01-01', INTERVAL '1' DAY)",
        "SELECT 1 DIV 2, 5 % 3, 1 << 2, 3 & 1, 'a' COLLATE utf8mb4_bin, 1 XOR 0",
        "SELECT CAST('1' AS SIGNED), CONVERT('x', CHAR(3)), BINARY 'a', 'x' LIKE 'y%' ESCAPE '!'",
        "SELECT CASE WHEN 1 = 1 THEN 'a' ELSE \"b\" END, IF(1, 2, 3), COALESCE(NULL, 1)",
        "SELECT c FROM sbtest1 WHERE id BETWEEN 5 AND 104 ORDER BY c LIMIT 5, 10",
        "SELECT DISTINCT c FROM sbtest1 WHERE id IN (1, 2, '3') GROUP BY c WITH ROLLUP",
        "UPDATE sbtest1 SET k=k+1 WHERE id=42",
        "UPDATE sbtest1 SET c='12-34' WHERE id=7 ORDER BY id LIMIT 1",
        "DELETE FROM sbtest1 WHERE id=9",
        "SET @a = 1, @b = 'x', sql_mode = 'STRICT_TRANS_TABLES'",
        "CREATE TABLE t (id INT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, c CHAR(120) DEFAULT '' NOT NULL, KEY k_1 (c)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4",
        "LOCK TABLES t READ, u WRITE",
        "SELECT 'a' = 'A', \"x\" <> 'y', 1 <=> NULL, - 5, NOT 1, ~1",
        "SELECT a.b, `quoted id`, t.* FROM t AS a JOIN u b ON a.id = b.id",
        "SELECT 1 FROM t WHERE MATCH (c) AGAINST ('word' IN BOOLEAN MODE)",
        "SELECT '1' + 1, 2 * '3', ('a'), ((1))",
    ];

    #[test]
    fn the_fast_path_parses_every_statement_as_mysql_dialect_does() {
        for sql in CORPUS {
            let ours = Parser::new(&OnelogDialect::default())
                .try_with_sql(sql)
                .and_then(|mut p| p.parse_statements());
            let theirs = Parser::new(&MySqlDialect {})
                .try_with_sql(sql)
                .and_then(|mut p| p.parse_statements());
            assert_eq!(format!("{ours:?}"), format!("{theirs:?}"), "{sql}");
            assert!(
                theirs.is_ok() || sql.contains("AGAINST"),
                "{sql}: {theirs:?}"
            );
        }
    }

    /// `a MOD b` is `a % b` (MariaDB: same operator and precedence), `MOD(a, b)` still the
    /// function; found by the differential query test (tests/differential_queries.rs).
    #[test]
    fn infix_mod_parses_as_the_modulo_operator() {
        let parse = |sql: &str| {
            Parser::new(&OnelogDialect::default())
                .try_with_sql(sql)
                .and_then(|mut p| p.parse_statements())
                .map(|s| s.iter().map(|x| x.to_string()).collect::<Vec<_>>())
        };
        assert_eq!(
            parse("SELECT 1 + a MOD 3 * 2 FROM t"),
            parse("SELECT 1 + a % 3 * 2 FROM t")
        );
        assert_eq!(parse("SELECT -a mod 3"), parse("SELECT -a % 3"));
        assert_eq!(
            parse("SELECT 1 + a MOD 3 * 2 FROM t").unwrap(),
            ["SELECT 1 + a % 3 * 2 FROM t"]
        );
        assert_eq!(parse("SELECT MOD(7, 3)").unwrap(), ["SELECT MOD(7, 3)"]);
        assert!(parse("SELECT 7 MOD").is_err());
    }

    #[test]
    fn the_parser_still_sees_the_mysql_dialect() {
        let d: &dyn Dialect = &OnelogDialect::default();
        assert!(d.is::<MySqlDialect>());
    }
}
