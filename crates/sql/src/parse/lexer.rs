//! The one lexer of the statements parsed by hand: tokens ([`lex`]: words, quoted identifiers,
//! strings with MariaDB's escapes, numbers, `@user` and `@@system` variables, punctuation),
//! and the byte-level scanning the other hand-written passes share (skipping a quoted
//! literal or a comment, reading a word): statement splitting and comment stripping
//! (`parse`), the nesting bound (`depth`), `SET STATEMENT ... FOR` and the administration
//! parser's first-word check.
//!
//! Invariants: no function here panics on any input; [`lex`] works on chars and never
//! slices inside one; every token's byte range lies inside the input and ranges increase.

/// A token and the byte range it came from.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tok {
    /// Unquoted word (keyword or identifier), as written.
    Word(String),
    /// Backquoted identifier.
    QIdent(String),
    /// String literal (either quote kind), unescaped.
    Str(String),
    Num(String),
    /// `@name`, `@'name'`, `` @`name` ``.
    UserVar(String),
    /// `@@name`, `@@global.name`, `@@session.name` (the text after `@@`).
    SysVar(String),
    /// Punctuation; `:=` is reported as `=`, `<=`, `>=`, `<>`, `!=` as themselves.
    Sym(&'static str),
}

#[derive(Debug, Clone)]
pub(crate) struct Token {
    pub tok: Tok,
    pub start: usize,
    pub end: usize,
}

/// Splits `sql` into tokens; None on an unterminated string/comment or a character the admin
/// grammar has no use for (the statement is then not ours).
pub(crate) fn lex(sql: &str) -> Option<Vec<Token>> {
    let b: Vec<(usize, char)> = sql.char_indices().collect();
    let n = b.len();
    let pos = |i: usize| if i < n { b[i].0 } else { sql.len() };
    let mut out = Vec::new();
    let mut i = 0;
    while i < n {
        let c = b[i].1;
        let start = pos(i);
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        if c == '#' || (c == '-' && line_comment_at(sql.as_bytes(), start)) {
            while i < n && b[i].1 != '\n' {
                i += 1;
            }
            continue;
        }
        if c == '/' && i + 1 < n && b[i + 1].1 == '*' {
            i += 2;
            loop {
                if i + 1 >= n {
                    return None;
                }
                if b[i].1 == '*' && b[i + 1].1 == '/' {
                    i += 2;
                    break;
                }
                i += 1;
            }
            continue;
        }
        let tok = if c == '\'' || c == '"' {
            let (s, j) = quoted(&b, i, c)?;
            i = j;
            Tok::Str(s)
        } else if c == '`' {
            let (s, j) = quoted(&b, i, '`')?;
            i = j;
            Tok::QIdent(s)
        } else if c == '@' {
            if i + 1 < n && b[i + 1].1 == '@' {
                let mut j = i + 2;
                while j < n && (is_word(b[j].1) || b[j].1 == '.') {
                    j += 1;
                }
                let name: String = b[i + 2..j].iter().map(|x| x.1).collect();
                if name.is_empty() {
                    return None;
                }
                i = j;
                Tok::SysVar(name)
            } else if i + 1 < n && matches!(b[i + 1].1, '\'' | '"' | '`') {
                let (s, j) = quoted(&b, i + 1, b[i + 1].1)?;
                i = j;
                Tok::UserVar(s)
            } else {
                let mut j = i + 1;
                while j < n && (is_word(b[j].1) || b[j].1 == '.') {
                    j += 1;
                }
                let name: String = b[i + 1..j].iter().map(|x| x.1).collect();
                if name.is_empty() {
                    return None;
                }
                i = j;
                Tok::UserVar(name)
            }
        } else if c.is_ascii_digit()
            || (c == '.' && i + 1 < n && b[i + 1].1.is_ascii_digit() && !prev_is_name(&out))
        {
            let mut j = i;
            while j < n && (b[j].1.is_ascii_alphanumeric() || b[j].1 == '.') {
                j += 1;
            }
            let text: String = b[i..j].iter().map(|x| x.1).collect();
            i = j;
            if text.chars().all(|c| c.is_ascii_digit() || c == '.') {
                Tok::Num(text)
            } else {
                Tok::Word(text)
            }
        } else if is_word(c) {
            let mut j = i;
            while j < n && is_word(b[j].1) {
                j += 1;
            }
            let text: String = b[i..j].iter().map(|x| x.1).collect();
            i = j;
            Tok::Word(text)
        } else {
            let next = if i + 1 < n { b[i + 1].1 } else { '\0' };
            let (sym, len): (&'static str, usize) = match (c, next) {
                (':', '=') => ("=", 2),
                ('<', '=') => ("<=", 2),
                ('>', '=') => (">=", 2),
                ('<', '>') => ("<>", 2),
                ('!', '=') => ("!=", 2),
                ('=', _) => ("=", 1),
                (',', _) => (",", 1),
                ('(', _) => ("(", 1),
                (')', _) => (")", 1),
                ('.', _) => (".", 1),
                (';', _) => (";", 1),
                ('*', _) => ("*", 1),
                ('+', _) => ("+", 1),
                ('-', _) => ("-", 1),
                ('/', _) => ("/", 1),
                ('<', _) => ("<", 1),
                ('>', _) => (">", 1),
                ('%', _) => ("%", 1),
                ('!', _) => ("!", 1),
                ('|', _) => ("|", 1),
                ('&', _) => ("&", 1),
                ('^', _) => ("^", 1),
                ('~', _) => ("~", 1),
                ('?', _) => ("?", 1),
                _ => return None,
            };
            i += len;
            Tok::Sym(sym)
        };
        let end = pos(i);
        debug_assert!(
            start < end && end <= sql.len() && out.last().is_none_or(|t: &Token| t.end <= start),
            "token ranges lie inside the input and increase"
        );
        out.push(Token { tok, start, end });
    }
    Some(out)
}

pub(crate) fn prev_is_name(out: &[Token]) -> bool {
    matches!(
        out.last().map(|t| &t.tok),
        Some(Tok::Word(_) | Tok::QIdent(_))
    )
}

pub(crate) fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// Reads a quoted string starting at the quote `b[i]`; returns its content and the index
/// after the closing quote. Backslash escapes apply to strings, not to backquoted names.
pub(crate) fn quoted(b: &[(usize, char)], i: usize, q: char) -> Option<(String, usize)> {
    let mut s = String::new();
    let mut j = i + 1;
    while j < b.len() {
        let c = b[j].1;
        if c == q {
            if j + 1 < b.len() && b[j + 1].1 == q {
                s.push(q);
                j += 2;
                continue;
            }
            return Some((s, j + 1));
        }
        if c == '\\' && q != '`' && j + 1 < b.len() {
            let e = b[j + 1].1;
            // MySQL keeps the backslash before % and _ (they stay LIKE escapes).
            if e == '%' || e == '_' {
                s.push('\\');
            }
            s.push(match e {
                'n' => '\n',
                't' => '\t',
                'r' => '\r',
                '0' => '\0',
                'Z' => '\u{1a}',
                'b' => '\u{8}',
                other => other,
            });
            j += 2;
            continue;
        }
        s.push(c);
        j += 1;
    }
    None
}

/// Skips whitespace and comments from byte `i`; returns the index of the next token.
pub(crate) fn skip_blank(b: &[u8], mut i: usize) -> usize {
    loop {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if b[i..].starts_with(b"--") || b[i..].starts_with(b"#") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            match b[i + 2..].windows(2).position(|w| w == b"*/") {
                Some(p) => i += 2 + p + 2,
                None => return b.len(),
            }
        } else {
            return i;
        }
    }
}

/// The ASCII word at byte `i` and the index after it.
pub(crate) fn word_at(b: &[u8], i: usize) -> (&[u8], usize) {
    let mut j = i;
    while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
        j += 1;
    }
    (&b[i..j], j)
}

/// Index just past the quoted string or identifier that starts at `start` (`b[start]` is its
/// quote: `'`, `"` or `` ` ``): backslash escapes (not inside backquotes) and doubled quotes
/// stay inside; `b.len()` when it is not terminated.
pub(crate) fn skip_quoted(b: &[u8], start: usize) -> usize {
    let q = b[start];
    let mut i = start + 1;
    while i < b.len() {
        if b[i] == b'\\' && q != b'`' {
            i += 2;
            continue;
        }
        if b[i] == q {
            if b.get(i + 1) == Some(&q) {
                i += 2;
                continue;
            }
            return i + 1;
        }
        i += 1;
    }
    b.len()
}

/// Whether a line comment starts at `i`: `#`, or `--` followed by a space, a control
/// character or the end (MariaDB's rule: `5--3` is five minus minus three).
pub(crate) fn line_comment_at(b: &[u8], i: usize) -> bool {
    match b.get(i) {
        Some(b'#') => true,
        Some(b'-') => b.get(i + 1) == Some(&b'-') && b.get(i + 2).is_none_or(|c| *c <= b' '),
        _ => false,
    }
}

/// Index of the newline that ends the line comment at `i` (`b.len()` at the end).
pub(crate) fn skip_line(b: &[u8], i: usize) -> usize {
    b[i..]
        .iter()
        .position(|&c| c == b'\n')
        .map_or(b.len(), |k| i + k)
}

/// Index of the `*/` that closes the block comment whose body starts at `from` (after the
/// `/*` and any `!NNNNN` version), or None when it is not closed.
pub(crate) fn block_comment_close(b: &[u8], from: usize) -> Option<usize> {
    (from..b.len().saturating_sub(1)).find(|&k| b[k] == b'*' && b[k + 1] == b'/')
}

/// Byte offset of the first standalone `word` (case-insensitive, not part of a longer name)
/// outside quoted strings and identifiers in `s`.
pub(crate) fn top_level_word(s: &str, word: &str) -> Option<usize> {
    let b = s.as_bytes();
    let is_name = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'\'' || c == b'"' || c == b'`' {
            i = skip_quoted(b, i);
            continue;
        }
        let end = i + word.len();
        if (i == 0 || !is_name(b[i - 1]))
            && s.get(i..end).is_some_and(|w| w.eq_ignore_ascii_case(word))
            && b.get(end).is_none_or(|c| !is_name(*c))
        {
            return Some(i);
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_literals_end_after_escapes_and_doubled_quotes() {
        let b = br#"'a\'b''c' rest"#;
        assert_eq!(skip_quoted(b, 0), 9);
        assert_eq!(skip_quoted(b"`a\\`x", 0), 4);
        assert_eq!(skip_quoted(b"'open", 0), 5);
    }

    #[test]
    fn line_comments_follow_mariadb() {
        assert!(line_comment_at(b"-- x", 0));
        assert!(line_comment_at(b"--", 0));
        assert!(line_comment_at(b"# x", 0));
        assert!(!line_comment_at(b"--3", 0));
        assert_eq!(skip_line(b"# a\nb", 0), 3);
        assert_eq!(block_comment_close(b"/* x */", 2), Some(5));
        assert_eq!(block_comment_close(b"/* x *", 2), None);
    }

    #[test]
    fn top_level_words_skip_quotes_and_longer_names() {
        assert_eq!(top_level_word("a='x FOR y' FOR z", "FOR"), Some(12));
        assert_eq!(top_level_word("forx for", "FOR"), Some(5));
        assert_eq!(top_level_word(r"a='\' FOR' b", "FOR"), None);
    }
}
