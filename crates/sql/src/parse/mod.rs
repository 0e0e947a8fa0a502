//! Parsing glue: splits multi-statement strings, unwraps MySQL versioned comments, hand-parses
//! the transaction statements (hot in sysbench, and partly unknown to sqlparser), strips
//! trailing locking clauses and hands the rest to sqlparser's MySQL dialect.
//!
//! Invariants: splitting respects quotes, backticks and comments; `/*!NNNNN ... */` and
//! `/*M!NNNNN ... */` content is kept (executed, as MariaDB does for versions it has), other
//! comments are dropped; a parse failure is always a 1064 in MariaDB's wording.

use std::borrow::Cow;

use sqlparser::ast::Statement;
use sqlparser::parser::{Parser, ParserError};

pub(crate) mod admin;
pub(crate) mod alter_ops;
pub(crate) mod depth;
pub(crate) mod dialect;
pub(crate) mod fast_insert;
pub(crate) mod hex_literals;
pub(crate) mod item_names;
pub(crate) mod lexer;
pub(crate) mod view;

use lexer::Tok;

use crate::error::SqlError;

/// Transaction control statements, parsed by hand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TxnStmt {
    /// START TRANSACTION / BEGIN; `consistent`: WITH CONSISTENT SNAPSHOT (the read view is
    /// taken at once, and the binlog position matching it kept for `Binlog_snapshot_*`).
    Begin {
        read_only: bool,
        consistent: bool,
    },
    /// COMMIT / ROLLBACK; `chain`: `AND CHAIN`, a new transaction starts at once with the
    /// same access mode.
    Commit {
        chain: bool,
    },
    Rollback {
        chain: bool,
    },
    Savepoint(String),
    RollbackTo(String),
    Release(String),
}

/// Row lock requested by a SELECT.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LockClause {
    None,
    Shared(LockWait),
    Exclusive(LockWait),
}

/// How long a locking read waits for a row lock another transaction holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LockWait {
    /// The session's `innodb_lock_wait_timeout`.
    Default,
    /// `NOWAIT`: 1205 at once.
    NoWait,
    /// `WAIT n` seconds.
    Seconds(u64),
    /// `SKIP LOCKED`: rows locked by another transaction are left out.
    SkipLocked,
}

/// One parsed statement.
#[derive(Debug)]
pub(crate) enum Parsed {
    /// Nothing but comments / whitespace.
    Empty,
    Txn(TxnStmt),
    Sql(Box<Statement>, LockClause),
    /// An ALTER TABLE with operations sqlparser does not parse ([`alter_ops`]).
    Alter(Box<Alter>),
}

/// An ALTER TABLE whose operations are partly [`alter_ops`]'s.
#[derive(Debug, Clone)]
pub(crate) struct Alter {
    pub name: sqlparser::ast::ObjectName,
    /// The operations sqlparser parsed (ALGORITHM and LOCK among them).
    pub operations: Vec<sqlparser::ast::AlterTableOperation>,
    pub table: alter_ops::TableOps,
}

/// The text of a statement received as bytes (COM_QUERY, COM_STMT_PREPARE). Valid UTF-8 is
/// used as is. Otherwise each quoted string literal holding bytes that are not UTF-8 is
/// rewritten as the hex literal of its (unescaped) bytes, `X'..'`, so binary data reaches
/// VARBINARY/BLOB columns and functions unchanged instead of as U+FFFD; a text column then
/// refuses it as MariaDB does (1366 "Incorrect string value"). Bytes that are not UTF-8
/// outside literals (identifiers, comments) are replaced with U+FFFD.
pub fn statement_text_of_bytes(b: &[u8]) -> Cow<'_, str> {
    if let Ok(s) = std::str::from_utf8(b) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(b.len() * 2);
    let mut plain = 0;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            q @ (b'\'' | b'"') => {
                let start = i;
                let (value, end) = unescape_literal(b, i + 1, q);
                i = end;
                if std::str::from_utf8(&b[start..end]).is_err() {
                    out.push_str(&String::from_utf8_lossy(&b[plain..start]));
                    out.push_str(" X'");
                    for byte in &value {
                        out.push_str(&format!("{byte:02X}"));
                    }
                    out.push('\'');
                    plain = end;
                }
            }
            b'`' => i = lexer::skip_quoted(b, i),
            b'#' | b'-' if lexer::line_comment_at(b, i) => i = lexer::skip_line(b, i),
            b'/' if b.get(i + 1) == Some(&b'*') && b.get(i + 2) != Some(&b'!') => {
                i = lexer::block_comment_close(b, i + 2).map_or(b.len(), |k| k + 2);
            }
            _ => i += 1,
        }
    }
    out.push_str(&String::from_utf8_lossy(&b[plain.min(b.len())..]));
    Cow::Owned(out)
}

/// The bytes of a quoted literal whose body starts at `i` (MySQL escapes, doubled quotes),
/// and the position after its closing quote (the end of input if unterminated).
fn unescape_literal(b: &[u8], mut i: usize, q: u8) -> (Vec<u8>, usize) {
    let mut v = Vec::new();
    while i < b.len() {
        let c = b[i];
        if c == b'\\' && i + 1 < b.len() {
            let e = b[i + 1];
            match e {
                b'0' => v.push(0),
                b'b' => v.push(8),
                b'n' => v.push(b'\n'),
                b'r' => v.push(b'\r'),
                b't' => v.push(b'\t'),
                b'Z' => v.push(26),
                // LIKE wildcards keep their backslash.
                b'%' | b'_' => v.extend_from_slice(&[b'\\', e]),
                other => v.push(other),
            }
            i += 2;
            continue;
        }
        if c == q {
            if b.get(i + 1) == Some(&q) {
                v.push(q);
                i += 2;
                continue;
            }
            return (v, i + 1);
        }
        v.push(c);
        i += 1;
    }
    (v, b.len())
}

/// Splits `sql` at top-level semicolons; pieces are trimmed and never empty.
pub(crate) fn split_statements(sql: &str) -> Vec<&str> {
    let b = sql.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\'' | b'"' | b'`' => i = lexer::skip_quoted(b, i),
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i = lexer::block_comment_close(b, i + 2).map_or(b.len(), |k| k + 2);
            }
            b'#' | b'-' if lexer::line_comment_at(b, i) => i = lexer::skip_line(b, i),
            b';' => {
                let piece = sql[start..i].trim();
                if !piece.is_empty() {
                    out.push(piece);
                }
                i += 1;
                start = i;
            }
            _ => i += 1,
        }
    }
    let end = start.min(sql.len());
    let piece = sql[end..].trim();
    if !piece.is_empty() {
        out.push(piece);
    }
    debug_assert!(out.iter().all(|p| !p.is_empty() && p.trim() == *p));
    out
}

/// Unwraps versioned comments and drops the others (quotes respected). Borrowed when the
/// statement holds no comment.
pub(crate) fn strip_comments(sql: &str) -> Cow<'_, str> {
    let b = sql.as_bytes();
    if !b.iter().any(|&c| c == b'/' || c == b'#' || c == b'-') {
        return Cow::Borrowed(sql);
    }
    let mut out = String::with_capacity(sql.len());
    let mut i = 0;
    let mut changed = false;
    while i < b.len() {
        match b[i] {
            b'\'' | b'"' | b'`' => {
                let s = i;
                i = lexer::skip_quoted(b, i);
                out.push_str(&sql[s..i]);
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                changed = true;
                i = block_comment(sql, i, &mut out);
            }
            b'#' | b'-' if lexer::line_comment_at(b, i) => {
                changed = true;
                i = lexer::skip_line(b, i);
            }
            _ => {
                let s = i;
                i += 1;
                while i < b.len() && !matches!(b[i], b'\'' | b'"' | b'`' | b'/' | b'#' | b'-') {
                    i += 1;
                }
                out.push_str(&sql[s..i]);
            }
        }
    }
    if changed {
        Cow::Owned(out.trim().to_string())
    } else {
        Cow::Borrowed(sql)
    }
}

/// MariaDB's 1064 for a statement with a block comment that is never closed (`select 1 /*
/// abc`: near the comment; an executable `/*!` one: near ''), or None. MariaDB's lexer
/// refuses it; reading the comment to the end of the text would run `select 1`.
pub(crate) fn unclosed_comment(sql: &str) -> Option<SqlError> {
    let b = sql.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\'' | b'"' | b'`' => i = lexer::skip_quoted(b, i),
            b'/' if b.get(i + 1) == Some(&b'*') => match lexer::block_comment_close(b, i + 2) {
                Some(k) => i = k + 2,
                None => {
                    let rest = &sql[i + 2..];
                    let rest = rest.strip_prefix('M').unwrap_or(rest);
                    let near = match rest.strip_prefix('!') {
                        Some(v) if !v.starts_with(|c: char| c.is_ascii_digit()) => "",
                        Some(v) if version_runs(v) => "",
                        _ => sql[i..].trim_end().trim_end_matches(';'),
                    };
                    return Some(SqlError::syntax(near));
                }
            },
            b'#' | b'-' if lexer::line_comment_at(b, i) => i = lexer::skip_line(b, i),
            _ => i += 1,
        }
    }
    None
}

/// Whether the version digits starting `v` (after `/*!`) are at most onelog's.
fn version_runs(v: &str) -> bool {
    let digits: String = v.chars().take_while(char::is_ascii_digit).take(6).collect();
    digits.len() >= 5 && digits.parse::<u64>().is_ok_and(|n| n <= VERSION_ID)
}

/// The version MariaDB's versioned comments are compared with: `MYSQL_VERSION_ID` of the server
/// version onelog reports (10.11.9).
pub(crate) const VERSION_ID: u64 = 101_109;

/// One block comment starting at `start` (its `/*`): appends what of it runs to `out` (only a
/// space for a plain comment or a versioned one not meant for this version) and returns the
/// index after it. MariaDB's rule (its lexer): `/*!` or `/*M!` followed by no digit runs the
/// content; followed by 5 digits (6 when a sixth follows) it runs when that version is at most
/// ours and the comment is `/*M!` or the version is not MySQL 5.7's or later (50700 to 99999);
/// otherwise the comment is skipped, one nested comment allowed inside. Fewer than 5 digits stay
/// in the text, where they are a syntax error, as in MariaDB.
fn block_comment(sql: &str, start: usize, out: &mut String) -> usize {
    let b = sql.as_bytes();
    let mut j = start + 2;
    let maria = match (b.get(j), b.get(j + 1)) {
        (Some(b'!'), _) => false,
        (Some(b'M'), Some(b'!')) => true,
        _ => {
            out.push(' ');
            return lexer::block_comment_close(b, j).map_or(b.len(), |end| end + 2);
        }
    };
    j += if maria { 2 } else { 1 };
    let digits = b[j..].iter().take_while(|c| c.is_ascii_digit()).count();
    if digits >= 5 {
        let len = digits.min(6);
        let version: u64 = sql[j..j + len].parse().unwrap_or(u64::MAX);
        j += len;
        if version > VERSION_ID || (!maria && (50_700..=99_999).contains(&version)) {
            out.push(' ');
            return skip_versioned(b, j);
        }
    }
    let end = lexer::block_comment_close(b, j).unwrap_or(b.len());
    out.push(' ');
    // Nested content may itself hold comments.
    out.push_str(&strip_comments(&sql[j..end]));
    out.push(' ');
    (end + 2).min(b.len())
}

/// Index after the `*/` that closes a skipped versioned comment whose body starts at `from`;
/// one nested `/* ... */` inside it is allowed, as in MariaDB's lexer.
fn skip_versioned(b: &[u8], from: usize) -> usize {
    let mut k = from;
    let mut nested = false;
    while k + 1 < b.len() {
        match (b[k], b[k + 1]) {
            (b'/', b'*') if !nested => {
                nested = true;
                k += 2;
            }
            (b'*', b'/') if nested => {
                nested = false;
                k += 2;
            }
            (b'*', b'/') => return k + 2,
            _ => k += 1,
        }
    }
    b.len()
}

/// The words of a short statement by the shared lexer: keywords and names as written
/// (backquotes removed), numbers, and `,` kept as a word of its own; a trailing `;` dropped.
/// None when it holds anything else (it is then malformed).
fn words(sql: &str) -> Option<Vec<String>> {
    let mut toks = lexer::lex(sql)?;
    if matches!(toks.last().map(|t| &t.tok), Some(Tok::Sym(";"))) {
        toks.pop();
    }
    toks.into_iter()
        .map(|t| match t.tok {
            Tok::Word(w) | Tok::QIdent(w) | Tok::Num(w) => Some(w),
            Tok::Sym(",") => Some(",".to_string()),
            _ => None,
        })
        .collect()
}

/// Hand parser for transaction control; None when `sql` is not one.
pub(crate) fn parse_txn(sql: &str) -> Option<Result<TxnStmt, SqlError>> {
    let first = sql.split_whitespace().next()?;
    let kw = first.trim_end_matches(';');
    let known = [
        "BEGIN",
        "START",
        "COMMIT",
        "ROLLBACK",
        "SAVEPOINT",
        "RELEASE",
    ];
    if !known.iter().any(|k| kw.eq_ignore_ascii_case(k)) {
        return None;
    }
    let bad = || Some(Err(SqlError::syntax(sql)));
    let Some(w) = words(sql) else {
        // START and RELEASE begin other statements too (START SLAVE ...): not ours then.
        let other = kw.eq_ignore_ascii_case("START") || kw.eq_ignore_ascii_case("RELEASE");
        return if other { None } else { bad() };
    };
    let up: Vec<String> = w.iter().map(|s| s.to_ascii_uppercase()).collect();
    let u: Vec<&str> = up.iter().map(|s| s.as_str()).collect();
    match u.as_slice() {
        ["BEGIN"] | ["BEGIN", "WORK"] => Some(Ok(TxnStmt::Begin {
            read_only: false,
            consistent: false,
        })),
        ["START", "TRANSACTION", rest @ ..] => {
            let text = rest.join(" ").replace(" ,", ",");
            let mut read_only = false;
            let mut consistent = false;
            for part in text.split(',') {
                match part.trim() {
                    "" if rest.is_empty() => {}
                    "READ ONLY" => read_only = true,
                    "READ WRITE" => {}
                    "WITH CONSISTENT SNAPSHOT" => consistent = true,
                    _ => return bad(),
                }
            }
            Some(Ok(TxnStmt::Begin {
                read_only,
                consistent,
            }))
        }
        ["START", ..] => None,
        ["COMMIT", rest @ ..] => match completion(rest)? {
            Ok(chain) => Some(Ok(TxnStmt::Commit { chain })),
            Err(e) => Some(Err(e)),
        },
        ["ROLLBACK", rest @ ..] if !rest.contains(&"TO") => match completion(rest)? {
            Ok(chain) => Some(Ok(TxnStmt::Rollback { chain })),
            Err(e) => Some(Err(e)),
        },
        ["ROLLBACK", rest @ ..] => {
            let rest = if rest.first() == Some(&"WORK") {
                &rest[1..]
            } else {
                rest
            };
            let n = w.len() - 1;
            match rest {
                ["TO", "SAVEPOINT", _] | ["TO", _] => Some(Ok(TxnStmt::RollbackTo(w[n].clone()))),
                _ => bad(),
            }
        }
        ["SAVEPOINT", _] => Some(Ok(TxnStmt::Savepoint(w[1].clone()))),
        ["RELEASE", "SAVEPOINT", _] => Some(Ok(TxnStmt::Release(w[2].clone()))),
        ["RELEASE", ..] => None,
        _ => bad(),
    }
}

/// The tail of COMMIT / ROLLBACK, MariaDB's `[WORK] [AND [NO] CHAIN] [[NO] RELEASE]`:
/// Some(Ok(chain)); RELEASE (closing the connection after the reply) is refused with 1235;
/// `AND CHAIN RELEASE`, and anything else, is a syntax error (1064), as in MariaDB.
fn completion(rest: &[&str]) -> Option<Result<bool, SqlError>> {
    let rest = rest.strip_prefix(&["WORK"]).unwrap_or(rest);
    let (chain, rest) = match rest {
        ["AND", "CHAIN", tail @ ..] => (true, tail),
        ["AND", "NO", "CHAIN", tail @ ..] => (false, tail),
        _ => (false, rest),
    };
    match rest {
        [] | ["NO", "RELEASE"] => Some(Ok(chain)),
        ["RELEASE"] if !chain => Some(Err(SqlError::unsupported(
            "COMMIT / ROLLBACK ... RELEASE (closing the connection)",
        ))),
        _ => Some(Err(SqlError::syntax(&rest.join(" ")))),
    }
}

/// `t` without its trailing keyword(s) `suffix` (case-insensitive), when they follow a space
/// or a `)`.
fn strip_tail<'t>(t: &'t str, suffix: &str) -> Option<&'t str> {
    let n = suffix.len();
    if t.len() <= n
        || !t.is_char_boundary(t.len() - n)
        || !t[t.len() - n..].eq_ignore_ascii_case(suffix)
    {
        return None;
    }
    let before = &t[..t.len() - n];
    before
        .ends_with(|c: char| c.is_whitespace() || c == ')')
        .then(|| before.trim_end())
}

/// Cuts a trailing `FOR UPDATE` / `LOCK IN SHARE MODE` / `FOR SHARE` off a SELECT, with its
/// `NOWAIT` / `WAIT n` / `SKIP LOCKED`.
fn strip_lock_clause(sql: &str) -> Result<(&str, LockClause), SqlError> {
    let mut t = sql.trim_end().trim_end_matches(';').trim_end();
    let mut wait = LockWait::Default;
    if let Some(b) = strip_tail(t, "NOWAIT") {
        t = b;
        wait = LockWait::NoWait;
    } else if let Some(b) = strip_tail(t, "SKIP LOCKED") {
        t = b;
        wait = LockWait::SkipLocked;
    } else if let Some((b, n)) = t.rsplit_once(char::is_whitespace) {
        if let (Ok(n), Some(b)) = (n.parse::<u64>(), strip_tail(b.trim_end(), "WAIT")) {
            t = b;
            wait = LockWait::Seconds(n);
        }
    }
    for (tail, lock) in [
        ("FOR UPDATE", LockClause::Exclusive(wait)),
        ("LOCK IN SHARE MODE", LockClause::Shared(wait)),
        ("FOR SHARE", LockClause::Shared(wait)),
    ] {
        if let Some(b) = strip_tail(t, tail) {
            return Ok((b, lock));
        }
    }
    Ok((sql, LockClause::None))
}

/// The `IGNORE` or `REPLACE` of `CREATE TABLE ... {IGNORE | REPLACE} [AS] SELECT` (which
/// sqlparser does not parse): its byte range in `sql` and whether it is REPLACE. None for any
/// other statement (`CREATE OR REPLACE TABLE` included: REPLACE must come before the query).
pub(crate) fn ctas_duplicates(sql: &str) -> Option<(std::ops::Range<usize>, bool)> {
    let toks = lexer::lex(sql)?;
    let word = |i: usize, w: &str| matches!(toks.get(i).map(|t| &t.tok), Some(lexer::Tok::Word(x)) if x.eq_ignore_ascii_case(w));
    if !word(0, "CREATE") {
        return None;
    }
    let mut depth = 0i32;
    for (i, t) in toks.iter().enumerate() {
        match &t.tok {
            lexer::Tok::Sym("(") => depth += 1,
            lexer::Tok::Sym(")") => depth -= 1,
            lexer::Tok::Word(w)
                if depth == 0
                    && (w.eq_ignore_ascii_case("IGNORE") || w.eq_ignore_ascii_case("REPLACE"))
                    && (word(i + 1, "SELECT")
                        || word(i + 1, "AS")
                        || matches!(
                            toks.get(i + 1).map(|t| &t.tok),
                            Some(lexer::Tok::Sym("("))
                        )) =>
            {
                return Some((t.start..t.end, w.eq_ignore_ascii_case("REPLACE")));
            }
            lexer::Tok::Word(w) if depth == 0 && w.eq_ignore_ascii_case("SELECT") => return None,
            _ => {}
        }
    }
    None
}

/// Parses one statement (already split; comments allowed).
pub(crate) fn parse_statement(sql: &str) -> Result<Parsed, SqlError> {
    if sql.contains("/*") {
        if let Some(e) = unclosed_comment(sql) {
            return Err(e);
        }
    }
    let text = strip_comments(sql);
    let text = text.trim();
    if text.is_empty() || text == ";" {
        return Ok(Parsed::Empty);
    }
    if let Some(t) = parse_txn(text) {
        return t.map(Parsed::Txn);
    }
    let first = text.split_whitespace().next().unwrap_or("");
    let (body, lock) = if first.eq_ignore_ascii_case("SELECT") || first.starts_with('(') {
        strip_lock_clause(text)?
    } else {
        (text, LockClause::None)
    };
    // CREATE TABLE ... IGNORE/REPLACE SELECT: parsed without the word (the executor reads it
    // from the statement's text, `execute::ctas`).
    let blanked;
    let body = match first
        .eq_ignore_ascii_case("CREATE")
        .then(|| ctas_duplicates(body))
    {
        Some(Some((r, _))) => {
            blanked = format!(
                "{}{}{}",
                &body[..r.start],
                " ".repeat(r.len()),
                &body[r.end..]
            );
            blanked.as_str()
        }
        _ => body,
    };
    depth::check_lexical(body)?;
    let parsed = Parser::new(&dialect::OnelogDialect::default())
        .with_recursion_limit(depth::PARSER_RECURSION_LIMIT)
        .try_with_sql(body)
        .and_then(|mut p| p.parse_statements());
    let mut stmts = match parsed {
        Ok(s) => s,
        Err(e) => {
            // MariaDB's ALTER TABLE operations sqlparser lacks (only now: a statement
            // sqlparser parses pays nothing for the check).
            if first.eq_ignore_ascii_case("ALTER") {
                if let Some(split) = alter_ops::split(body) {
                    return alter(split?);
                }
            }
            return Err(match e {
                ParserError::RecursionLimitExceeded => {
                    depth::stack_overrun(depth::PARSER_RECURSION_LIMIT)
                }
                e => parse_error(body, &e.to_string()),
            });
        }
    };
    match stmts.len() {
        0 => Ok(Parsed::Empty),
        1 => {
            let mut s = stmts.pop().ok_or_else(|| SqlError::syntax(""))?;
            depth::guard(&mut s)?;
            item_names::name_items(&mut s, body);
            hex_literals::mark_hybrids(&mut s, body);
            Ok(Parsed::Sql(Box::new(s), lock))
        }
        _ => Err(SqlError::syntax(body)),
    }
}

/// The ALTER TABLE of `split`: sqlparser's operations of what it left (an ALTER TABLE).
fn alter(split: alter_ops::Split) -> Result<Parsed, SqlError> {
    use sqlparser::ast;
    let operations = match &split.rest {
        None => Vec::new(),
        Some(rest) => match parse_statement(rest)? {
            Parsed::Sql(s, _) => match *s {
                Statement::AlterTable(at) => at.operations,
                _ => return Err(SqlError::syntax(rest)),
            },
            _ => return Err(SqlError::syntax(rest)),
        },
    };
    // The guards name sqlparser's operations by position: it must give one per operation.
    if !split.ops.guards.is_empty() && operations.len() != split.operations {
        return Err(SqlError::syntax(split.rest.as_deref().unwrap_or("")));
    }
    let (db, table) = split.name;
    let part = |n: String| ast::ObjectNamePart::Identifier(ast::Ident::with_quote('`', n));
    let name = ast::ObjectName(db.into_iter().chain([table]).map(part).collect());
    Ok(Parsed::Alter(Box::new(Alter {
        name,
        operations,
        table: split.ops,
    })))
}

/// 1064 from a sqlparser message (`... at Line: L, Column: C`): `near` is the text there.
pub(crate) fn parse_error(sql: &str, msg: &str) -> SqlError {
    let pos = msg.rfind("Line: ").and_then(|i| {
        let rest = &msg[i + 6..];
        let mut it = rest.split(", Column: ");
        let line: usize = it.next()?.trim().parse().ok()?;
        let col: usize = it
            .next()?
            .chars()
            .take_while(|c| c.is_ascii_digit())
            .collect::<String>()
            .parse()
            .ok()?;
        Some((line, col))
    });
    let near = match pos {
        Some((line, col)) => {
            let l = sql.lines().nth(line.saturating_sub(1)).unwrap_or("");
            let start: usize = sql
                .lines()
                .take(line.saturating_sub(1))
                .map(|x| x.len() + 1)
                .sum();
            let within: usize = l
                .char_indices()
                .nth(col.saturating_sub(1))
                .map_or(l.len(), |(i, _)| i);
            sql.get(start + within..).unwrap_or("")
        }
        None => sql,
    };
    let mut e = SqlError::syntax(near);
    debug_assert_eq!(e.code, 1064, "a parse failure is a 1064");
    let line = pos.map_or(1, |p| p.0);
    if line != 1 {
        e.message = e.message.replace("at line 1", &format!("at line {line}"));
    }
    e
}

/// Number of `?` placeholders in a parsed statement.
pub(crate) fn count_placeholders(stmt: &Statement) -> usize {
    let text = stmt.to_string();
    // Placeholders print as `?`; count them outside quotes.
    let b = text.as_bytes();
    let mut n = 0;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\'' | b'"' | b'`' => {
                i = lexer::skip_quoted(b, i);
                continue;
            }
            b'?' => n += 1,
            _ => {}
        }
        i += 1;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_respects_quotes_and_comments() {
        let v = split_statements("select 'a;b'; select \"x;\" ;/* ; */ select `a;` -- ;\n; ");
        assert_eq!(v.len(), 3);
        assert_eq!(v[0], "select 'a;b'");
    }

    #[test]
    fn versioned_comments_unwrap() {
        assert_eq!(
            strip_comments("/*!40101 SET NAMES utf8 */").trim(),
            "SET NAMES utf8"
        );
        assert_eq!(strip_comments("select 1 /* x */").trim(), "select 1");
        let s = strip_comments("create table t(a int) /*! ENGINE = innodb */");
        assert_eq!(
            s.split_whitespace().collect::<Vec<_>>().join(" "),
            "create table t(a int) ENGINE = innodb"
        );
    }

    /// Each case was run on MariaDB 10.11.19 (`SELECT 3 <comment>`): 4 where the comment ran,
    /// 3 where it was skipped, 1064 where its digits stayed in the text (versions between
    /// 10.11.9 and 10.11.19 differ by design: onelog compares with its own 10.11.9).
    #[test]
    fn versioned_comments_run_by_version_as_mariadb() {
        let words = |s: &str| {
            strip_comments(s)
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        };
        for (comment, runs) in [
            ("/*!40101 +1 */", true),
            ("/*!100119 +1 */", true), // 10.1.19: six digits read as one version
            ("/*!99999 +1 */", false), // MySQL 5.7+ versions: only in /*M!
            ("/*!50700 +1 */", false),
            ("/*!50699 +1 */", true),
            ("/*M!99999 +1 */", true),
            ("/*M!101109 +1 */", true),
            ("/*M!101110 +1 */", false),
            ("/*M!999999\\- enable the sandbox mode */", false),
            ("/*! +1 */", true),
            ("/*M! +1 */", true),
        ] {
            let got = words(&format!("SELECT 3 {comment}"));
            let want = if runs { "SELECT 3 +1" } else { "SELECT 3" };
            assert_eq!(got, want, "{comment}");
        }
        // Seven digits: six are the version, the seventh is text (MariaDB: 1064 near '9 +1').
        assert_eq!(words("SELECT 3 /*M!1011099 +1 */"), "SELECT 3 9 +1");
        // Fewer than five digits stay (MariaDB: 1064 near '1001 +1 */').
        assert_eq!(words("SELECT 3 /*!1001 +1 */"), "SELECT 3 1001 +1");
        // A skipped one may hold one nested comment.
        assert_eq!(
            words("SELECT 3 /*!99999 a /* b */ c */ + 2"),
            "SELECT 3 + 2"
        );
        assert_eq!(words("/*!40101 SET @x=1 */"), "SET @x=1");
    }

    #[test]
    fn txn_statements_parse() {
        assert_eq!(
            parse_txn("START TRANSACTION WITH CONSISTENT SNAPSHOT")
                .unwrap()
                .unwrap(),
            TxnStmt::Begin {
                read_only: false,
                consistent: true
            }
        );
        assert_eq!(
            parse_txn("rollback to savepoint `s1`").unwrap().unwrap(),
            TxnStmt::RollbackTo("s1".into())
        );
        assert!(parse_txn("SELECT 1").is_none());
    }

    #[test]
    fn lock_clauses_strip() {
        let d = LockWait::Default;
        assert_eq!(
            strip_lock_clause("SELECT 1 FROM t LOCK IN SHARE MODE").unwrap(),
            ("SELECT 1 FROM t", LockClause::Shared(d))
        );
        assert_eq!(
            strip_lock_clause("select 1 from t for update").unwrap(),
            ("select 1 from t", LockClause::Exclusive(d))
        );
        assert_eq!(
            strip_lock_clause("select 1 from t for update nowait").unwrap(),
            ("select 1 from t", LockClause::Exclusive(LockWait::NoWait))
        );
        assert_eq!(
            strip_lock_clause("select 1 from t lock in share mode wait 3").unwrap(),
            ("select 1 from t", LockClause::Shared(LockWait::Seconds(3)))
        );
        assert_eq!(
            strip_lock_clause("select 1 from t for update skip locked").unwrap(),
            (
                "select 1 from t",
                LockClause::Exclusive(LockWait::SkipLocked)
            )
        );
    }
}
