//! Hand parser for the administration statements sqlparser does not know (or knows only in
//! part): SHOW ..., DESCRIBE, SET (system and user variables, NAMES, TRANSACTION, PASSWORD),
//! FLUSH, PURGE BINARY LOGS, RESET MASTER, CREATE/DROP/ALTER USER, GRANT, REVOKE, SHUTDOWN, KILL.
//!
//! Contract: [`parse`] returns `None` when the statement is not one of these (the caller then
//! hands it to sqlparser), `Some(Err(1064))` when it clearly is one but is malformed, and
//! `Some(Ok(stmt))` otherwise. Keywords are case-insensitive; identifiers may be backquoted;
//! strings take either quote kind with backslash escapes and doubled quotes. The lexer never
//! panics on any input (it works on chars, never slices inside one).
//!
//! The value of a `SET` assignment is kept as its source text (`ExprText`) and evaluated by
//! `admin::eval_set_value`, so expressions keep whatever the expression evaluator supports.

use crate::error::SqlError;
use crate::sysvar::registry::VarScope;
use onelog_protocol::errors;

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
        if c == '#' || (c == '-' && i + 1 < n && b[i + 1].1 == '-') {
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
        out.push(Token {
            tok,
            start,
            end: pos(i),
        });
    }
    Some(out)
}

fn prev_is_name(out: &[Token]) -> bool {
    matches!(
        out.last().map(|t| &t.tok),
        Some(Tok::Word(_) | Tok::QIdent(_))
    )
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// Reads a quoted string starting at the quote `b[i]`; returns its content and the index
/// after the closing quote. Backslash escapes apply to strings, not to backquoted names.
fn quoted(b: &[(usize, char)], i: usize, q: char) -> Option<(String, usize)> {
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

/// `LIKE 'pattern'` or `WHERE <conditions>` after a SHOW.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Filter {
    None,
    Like(String),
    /// Disjunction of conjunctions of simple conditions on result columns.
    Where(Vec<Vec<Cond>>),
}

/// `column = 'x'`, `column LIKE 'x'`, `column IN ('a', 'b')` (column names compared
/// case-insensitively with the result's column names).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Cond {
    Eq(String, String),
    Like(String, String),
    In(String, Vec<String>),
}

/// `'user'@'host'` (host `%` when omitted); `CURRENT_USER` is `None`.
pub(crate) type UserName = Option<(String, String)>;

/// How an account statement gives a password.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Password {
    None,
    /// Plain text (`IDENTIFIED BY 'pw'`, `PASSWORD('pw')`).
    Plain(String),
    /// A stored hash (`IDENTIFIED BY PASSWORD '*HEX'`, `SET PASSWORD = '*HEX'`).
    Hash(String),
}

/// The left side of a SET assignment.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum SetTarget {
    User(String),
    /// `scope` None: the default scope (SESSION for variables that have one).
    Sys {
        scope: Option<VarScope>,
        name: String,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Assignment {
    pub target: SetTarget,
    /// Source text of the value expression.
    pub expr: String,
}

/// Privileges a GRANT can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PrivName {
    All,
    Usage,
    Named(u64),
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Stmt {
    ShowVariables {
        global: bool,
        filter: Filter,
    },
    ShowStatus {
        global: bool,
        filter: Filter,
    },
    ShowDatabases {
        filter: Filter,
    },
    ShowTables {
        full: bool,
        db: Option<String>,
        filter: Filter,
    },
    ShowCreateTable {
        db: Option<String>,
        table: String,
    },
    ShowCreateDatabase {
        name: String,
    },
    ShowColumns {
        full: bool,
        db: Option<String>,
        table: String,
        filter: Filter,
    },
    ShowIndex {
        db: Option<String>,
        table: String,
    },
    ShowProcesslist {
        full: bool,
    },
    ShowWarnings {
        errors_only: bool,
        count: bool,
    },
    ShowEngines,
    ShowCollation {
        filter: Filter,
    },
    ShowCharset {
        filter: Filter,
    },
    ShowMasterStatus,
    ShowBinaryLogs,
    ShowBinlogEvents {
        file: Option<String>,
        from: Option<u64>,
        offset: u64,
        limit: Option<u64>,
    },
    ShowGrants {
        user: UserName,
    },
    FlushBinaryLogs,
    /// FLUSH LOGS / TABLES / PRIVILEGES / STATUS / HOSTS ...: nothing to do for onelog.
    FlushNoop,
    PurgeTo(String),
    PurgeBefore(String),
    ResetMaster,
    Set(Vec<Assignment>),
    SetNames {
        charset: Option<String>,
        collate: Option<String>,
    },
    SetTransaction {
        global: bool,
        isolation: Option<String>,
        read_only: Option<bool>,
    },
    SetPassword {
        user: UserName,
        password: Password,
    },
    CreateUser {
        if_not_exists: bool,
        users: Vec<((String, String), Password)>,
    },
    DropUser {
        if_exists: bool,
        users: Vec<(String, String)>,
    },
    AlterUser {
        if_exists: bool,
        users: Vec<((String, String), Password)>,
    },
    Grant {
        privs: Vec<PrivName>,
        scope: String,
        users: Vec<((String, String), Password)>,
        grant_option: bool,
    },
    Revoke {
        privs: Vec<PrivName>,
        scope: String,
        users: Vec<(String, String)>,
    },
    Shutdown,
    Kill {
        query_only: bool,
        id: u64,
    },
}

struct P<'a> {
    sql: &'a str,
    t: Vec<Token>,
    i: usize,
}

type R<T> = Result<T, SqlError>;

impl<'a> P<'a> {
    fn peek(&self) -> Option<&Tok> {
        self.t.get(self.i).map(|t| &t.tok)
    }
    fn peek_at(&self, k: usize) -> Option<&Tok> {
        self.t.get(self.i + k).map(|t| &t.tok)
    }
    fn is_kw_at(&self, k: usize, kw: &str) -> bool {
        matches!(self.peek_at(k), Some(Tok::Word(w)) if w.eq_ignore_ascii_case(kw))
    }
    fn is_kw(&self, kw: &str) -> bool {
        self.is_kw_at(0, kw)
    }
    fn eat_kw(&mut self, kw: &str) -> bool {
        if self.is_kw(kw) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn eat_sym(&mut self, s: &str) -> bool {
        if matches!(self.peek(), Some(Tok::Sym(x)) if *x == s) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn at_end(&self) -> bool {
        self.i >= self.t.len()
    }
    fn err(&self) -> SqlError {
        let near = self.t.get(self.i).map_or("", |t| &self.sql[t.start..]);
        SqlError::of(errors::ER_PARSE_ERROR,
            format!(
                "You have an error in your SQL syntax; check the manual that corresponds to your MariaDB server version for the right syntax to use near '{}' at line 1",
                near.chars().take(80).collect::<String>()
            ),
        )
    }
    fn expect_kw(&mut self, kw: &str) -> R<()> {
        if self.eat_kw(kw) {
            Ok(())
        } else {
            Err(self.err())
        }
    }
    fn expect_end(&mut self) -> R<()> {
        while self.eat_sym(";") {}
        if self.at_end() {
            Ok(())
        } else {
            Err(self.err())
        }
    }
    /// An identifier (word or backquoted).
    fn ident(&mut self) -> R<String> {
        match self.peek().cloned() {
            Some(Tok::Word(w)) | Some(Tok::QIdent(w)) => {
                self.i += 1;
                Ok(w)
            }
            _ => Err(self.err()),
        }
    }
    fn string(&mut self) -> R<String> {
        match self.peek().cloned() {
            Some(Tok::Str(s)) => {
                self.i += 1;
                Ok(s)
            }
            _ => Err(self.err()),
        }
    }
    fn number(&mut self) -> R<u64> {
        match self.peek().cloned() {
            Some(Tok::Num(s)) => {
                self.i += 1;
                s.parse().map_err(|_| self.err())
            }
            _ => Err(self.err()),
        }
    }
    /// An identifier or a string (names of charsets, users, hosts, files ...).
    fn name(&mut self) -> R<String> {
        match self.peek().cloned() {
            Some(Tok::Word(w)) | Some(Tok::QIdent(w)) | Some(Tok::Str(w)) => {
                self.i += 1;
                Ok(w)
            }
            _ => Err(self.err()),
        }
    }
    /// `[db.]name`.
    fn qualified(&mut self) -> R<(Option<String>, String)> {
        let a = self.ident()?;
        if self.eat_sym(".") {
            let b = self.ident()?;
            Ok((Some(a), b))
        } else {
            Ok((None, a))
        }
    }
    fn filter(&mut self) -> R<Filter> {
        if self.eat_kw("LIKE") {
            return Ok(Filter::Like(self.string()?));
        }
        if self.eat_kw("WHERE") {
            let mut ors = vec![Vec::new()];
            loop {
                let paren = self.eat_sym("(");
                let col = self.ident()?;
                let cond = if self.eat_sym("=") {
                    Cond::Eq(col, self.name()?)
                } else if self.eat_kw("LIKE") {
                    Cond::Like(col, self.string()?)
                } else if self.eat_kw("IN") {
                    if !self.eat_sym("(") {
                        return Err(self.err());
                    }
                    let mut v = vec![self.name()?];
                    while self.eat_sym(",") {
                        v.push(self.name()?);
                    }
                    if !self.eat_sym(")") {
                        return Err(self.err());
                    }
                    Cond::In(col, v)
                } else {
                    return Err(self.err());
                };
                if paren && !self.eat_sym(")") {
                    return Err(self.err());
                }
                if let Some(last) = ors.last_mut() {
                    last.push(cond);
                }
                if self.eat_kw("OR") {
                    ors.push(Vec::new());
                } else if !self.eat_kw("AND") {
                    break;
                }
            }
            return Ok(Filter::Where(ors));
        }
        Ok(Filter::None)
    }
    /// `'user'@'host'`, `user@host`, `CURRENT_USER[()]`.
    fn user(&mut self) -> R<UserName> {
        if self.eat_kw("CURRENT_USER") {
            if self.eat_sym("(") && !self.eat_sym(")") {
                return Err(self.err());
            }
            return Ok(None);
        }
        let user = self.name()?;
        let host = match self.peek().cloned() {
            Some(Tok::UserVar(h)) => {
                self.i += 1;
                h
            }
            _ => "%".to_string(),
        };
        Ok(Some((user, host)))
    }
    fn named_user(&mut self) -> R<(String, String)> {
        match self.user()? {
            Some(u) => Ok(u),
            None => Err(self.err()),
        }
    }
    /// `[IDENTIFIED BY [PASSWORD] 'x' | IDENTIFIED WITH plugin [BY|AS 'x']]`.
    fn identified(&mut self) -> R<Password> {
        if !self.eat_kw("IDENTIFIED") {
            return Ok(Password::None);
        }
        if self.eat_kw("WITH") {
            let plugin = self.name()?;
            if !plugin.eq_ignore_ascii_case("mysql_native_password") {
                return Err(SqlError::of(
                    errors::ER_PLUGIN_IS_NOT_LOADED,
                    format!("Plugin '{plugin}' is not loaded"),
                ));
            }
            if self.eat_kw("AS") {
                return Ok(Password::Hash(self.string()?));
            }
            if self.eat_kw("BY") {
                return Ok(Password::Plain(self.string()?));
            }
            return Ok(Password::None);
        }
        self.expect_kw("BY")?;
        if self.eat_kw("PASSWORD") {
            return Ok(Password::Hash(self.string()?));
        }
        Ok(Password::Plain(self.string()?))
    }
    fn user_list_with_password(&mut self) -> R<Vec<((String, String), Password)>> {
        let mut v = Vec::new();
        loop {
            let u = self.named_user()?;
            let pw = self.identified()?;
            v.push((u, pw));
            if !self.eat_sym(",") {
                return Ok(v);
            }
        }
    }
    /// Source text up to the next top-level `,` (or the end).
    fn expr_text(&mut self) -> R<String> {
        let start_tok = self.i;
        let mut depth = 0i32;
        while let Some(t) = self.peek() {
            match t {
                Tok::Sym("(") => depth += 1,
                Tok::Sym(")") => depth -= 1,
                Tok::Sym(",") | Tok::Sym(";") if depth == 0 => break,
                _ => {}
            }
            self.i += 1;
        }
        if self.i == start_tok || depth != 0 {
            return Err(self.err());
        }
        let a = self.t[start_tok].start;
        let b = self.t[self.i - 1].end;
        Ok(self.sql[a..b].to_string())
    }
}

/// Skips whitespace and comments from byte `i`; returns the index of the next token.
fn skip_blank(b: &[u8], mut i: usize) -> usize {
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
fn word_at(b: &[u8], i: usize) -> (&[u8], usize) {
    let mut j = i;
    while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
        j += 1;
    }
    (&b[i..j], j)
}

/// Cheap first check, without allocating: could `sql` be an administration statement? The
/// hot statements (SELECT, INSERT, UPDATE, DELETE, BEGIN, COMMIT, CREATE TABLE ...) are
/// rejected after reading one or two words.
fn maybe_admin(sql: &str) -> bool {
    let b = sql.as_bytes();
    let i = skip_blank(b, 0);
    let (w, j) = word_at(b, i);
    let is = |k: &str| w.eq_ignore_ascii_case(k.as_bytes());
    if [
        "SHOW", "DESCRIBE", "DESC", "EXPLAIN", "SET", "FLUSH", "PURGE", "RESET", "GRANT", "REVOKE",
        "SHUTDOWN", "KILL",
    ]
    .iter()
    .any(|k| is(k))
    {
        return true;
    }
    if is("CREATE") || is("DROP") || is("ALTER") {
        let (w2, _) = word_at(b, skip_blank(b, j));
        return w2.eq_ignore_ascii_case(b"USER");
    }
    false
}

/// Parses one statement (see the module docs for the contract).
pub(crate) fn parse(sql: &str) -> Option<R<Stmt>> {
    if !maybe_admin(sql) {
        return None;
    }
    let t = lex(sql)?;
    let mut p = P { sql, t, i: 0 };
    let Some(Tok::Word(first)) = p.peek().cloned() else {
        return None;
    };
    let first = first.to_ascii_uppercase();
    match first.as_str() {
        "SHOW" => {
            p.i += 1;
            show(&mut p)
        }
        "DESCRIBE" | "DESC" | "EXPLAIN" => {
            // Only the table form; EXPLAIN SELECT ... is not ours.
            match p.peek_at(1) {
                Some(Tok::Word(w)) if is_statement_word(w) => return None,
                Some(Tok::Word(_)) | Some(Tok::QIdent(_)) => {}
                _ => return None,
            }
            p.i += 1;
            Some((|| {
                let (db, table) = p.qualified()?;
                let filter = match p.peek().cloned() {
                    Some(Tok::Str(s)) | Some(Tok::Word(s)) | Some(Tok::QIdent(s)) => {
                        p.i += 1;
                        Filter::Like(s)
                    }
                    _ => Filter::None,
                };
                p.expect_end()?;
                Ok(Stmt::ShowColumns {
                    full: false,
                    db,
                    table,
                    filter,
                })
            })())
        }
        "SET" => {
            p.i += 1;
            set(&mut p)
        }
        "FLUSH" => {
            p.i += 1;
            Some(flush(&mut p))
        }
        "PURGE" => {
            p.i += 1;
            if !(p.eat_kw("BINARY") || p.eat_kw("MASTER")) {
                return None;
            }
            Some((|| {
                p.expect_kw("LOGS")?;
                let s = if p.eat_kw("TO") {
                    Stmt::PurgeTo(p.string()?)
                } else if p.eat_kw("BEFORE") {
                    Stmt::PurgeBefore(p.string()?)
                } else {
                    return Err(p.err());
                };
                p.expect_end()?;
                Ok(s)
            })())
        }
        "RESET" => {
            p.i += 1;
            if !p.eat_kw("MASTER") {
                return None;
            }
            Some(p.expect_end().map(|_| Stmt::ResetMaster))
        }
        "CREATE" if p.is_kw_at(1, "USER") => {
            p.i += 2;
            Some((|| {
                let mut if_not_exists = false;
                if p.eat_kw("IF") {
                    p.expect_kw("NOT")?;
                    p.expect_kw("EXISTS")?;
                    if_not_exists = true;
                }
                let users = p.user_list_with_password()?;
                p.expect_end()?;
                Ok(Stmt::CreateUser {
                    if_not_exists,
                    users,
                })
            })())
        }
        "DROP" if p.is_kw_at(1, "USER") => {
            p.i += 2;
            Some((|| {
                let mut if_exists = false;
                if p.eat_kw("IF") {
                    p.expect_kw("EXISTS")?;
                    if_exists = true;
                }
                let mut users = vec![p.named_user()?];
                while p.eat_sym(",") {
                    users.push(p.named_user()?);
                }
                p.expect_end()?;
                Ok(Stmt::DropUser { if_exists, users })
            })())
        }
        "ALTER" if p.is_kw_at(1, "USER") => {
            p.i += 2;
            Some((|| {
                let mut if_exists = false;
                if p.eat_kw("IF") {
                    p.expect_kw("EXISTS")?;
                    if_exists = true;
                }
                let users = p.user_list_with_password()?;
                p.expect_end()?;
                Ok(Stmt::AlterUser { if_exists, users })
            })())
        }
        "GRANT" => {
            p.i += 1;
            Some((|| {
                let (privs, scope) = privileges_on(&mut p)?;
                p.expect_kw("TO")?;
                let users = p.user_list_with_password()?;
                let mut grant_option = false;
                if p.eat_kw("WITH") {
                    p.expect_kw("GRANT")?;
                    p.expect_kw("OPTION")?;
                    grant_option = true;
                }
                p.expect_end()?;
                Ok(Stmt::Grant {
                    privs,
                    scope,
                    users,
                    grant_option,
                })
            })())
        }
        "REVOKE" => {
            p.i += 1;
            Some((|| {
                let (privs, scope) = privileges_on(&mut p)?;
                p.expect_kw("FROM")?;
                let mut users = vec![p.named_user()?];
                while p.eat_sym(",") {
                    users.push(p.named_user()?);
                }
                p.expect_end()?;
                Ok(Stmt::Revoke {
                    privs,
                    scope,
                    users,
                })
            })())
        }
        "SHUTDOWN" => {
            p.i += 1;
            Some(p.expect_end().map(|_| Stmt::Shutdown))
        }
        "KILL" => {
            p.i += 1;
            Some((|| {
                let _ = p.eat_kw("HARD") || p.eat_kw("SOFT");
                let query_only = if p.eat_kw("QUERY") {
                    true
                } else {
                    p.eat_kw("CONNECTION");
                    false
                };
                let id = p.number()?;
                p.expect_end()?;
                Ok(Stmt::Kill { query_only, id })
            })())
        }
        _ => None,
    }
}

fn is_statement_word(w: &str) -> bool {
    [
        "SELECT",
        "INSERT",
        "UPDATE",
        "DELETE",
        "REPLACE",
        "WITH",
        "EXTENDED",
        "PARTITIONS",
        "FORMAT",
        "ANALYZE",
    ]
    .iter()
    .any(|k| w.eq_ignore_ascii_case(k))
}

fn show(p: &mut P<'_>) -> Option<R<Stmt>> {
    let global = if p.eat_kw("GLOBAL") {
        Some(true)
    } else if p.eat_kw("SESSION") || p.eat_kw("LOCAL") {
        Some(false)
    } else {
        None
    };
    let full = p.eat_kw("FULL");
    let Some(Tok::Word(w)) = p.peek().cloned() else {
        return None;
    };
    let w = w.to_ascii_uppercase();
    // Scope words only go with VARIABLES / STATUS; FULL only with TABLES / COLUMNS / PROCESSLIST.
    let scoped = matches!(w.as_str(), "VARIABLES" | "STATUS");
    if global.is_some() && !scoped {
        return None;
    }
    if full && !matches!(w.as_str(), "TABLES" | "COLUMNS" | "FIELDS" | "PROCESSLIST") {
        return None;
    }
    p.i += 1;
    let r = (|| -> R<Option<Stmt>> {
        let s = match w.as_str() {
            "VARIABLES" => Stmt::ShowVariables {
                global: global == Some(true),
                filter: p.filter()?,
            },
            "STATUS" => Stmt::ShowStatus {
                global: global == Some(true),
                filter: p.filter()?,
            },
            "DATABASES" | "SCHEMAS" => Stmt::ShowDatabases {
                filter: p.filter()?,
            },
            "TABLES" => {
                let db = if p.eat_kw("FROM") || p.eat_kw("IN") {
                    Some(p.ident()?)
                } else {
                    None
                };
                Stmt::ShowTables {
                    full,
                    db,
                    filter: p.filter()?,
                }
            }
            "CREATE" => {
                if p.eat_kw("TABLE") {
                    let (db, table) = p.qualified()?;
                    Stmt::ShowCreateTable { db, table }
                } else if p.eat_kw("DATABASE") || p.eat_kw("SCHEMA") {
                    if p.eat_kw("IF") {
                        p.expect_kw("NOT")?;
                        p.expect_kw("EXISTS")?;
                    }
                    Stmt::ShowCreateDatabase { name: p.ident()? }
                } else {
                    return Ok(None);
                }
            }
            "COLUMNS" | "FIELDS" => {
                if !(p.eat_kw("FROM") || p.eat_kw("IN")) {
                    return Err(p.err());
                }
                let (mut db, table) = p.qualified()?;
                if p.eat_kw("FROM") || p.eat_kw("IN") {
                    db = Some(p.ident()?);
                }
                Stmt::ShowColumns {
                    full,
                    db,
                    table,
                    filter: p.filter()?,
                }
            }
            "INDEX" | "INDEXES" | "KEYS" => {
                if !(p.eat_kw("FROM") || p.eat_kw("IN")) {
                    return Err(p.err());
                }
                let (mut db, table) = p.qualified()?;
                if p.eat_kw("FROM") || p.eat_kw("IN") {
                    db = Some(p.ident()?);
                }
                if p.eat_kw("WHERE") {
                    // Accepted and ignored would be a lie; refuse.
                    return Err(p.err());
                }
                Stmt::ShowIndex { db, table }
            }
            "PROCESSLIST" => Stmt::ShowProcesslist { full },
            "WARNINGS" | "ERRORS" => {
                if p.eat_kw("LIMIT") {
                    p.number()?;
                    if p.eat_sym(",") {
                        p.number()?;
                    }
                }
                Stmt::ShowWarnings {
                    errors_only: w == "ERRORS",
                    count: false,
                }
            }
            "COUNT" => {
                // SHOW COUNT(*) WARNINGS | ERRORS
                if !(p.eat_sym("(") && p.eat_sym("*") && p.eat_sym(")")) {
                    return Err(p.err());
                }
                let errors_only = if p.eat_kw("ERRORS") {
                    true
                } else {
                    p.expect_kw("WARNINGS")?;
                    false
                };
                Stmt::ShowWarnings {
                    errors_only,
                    count: true,
                }
            }
            "ENGINES" => Stmt::ShowEngines,
            "STORAGE" => {
                p.expect_kw("ENGINES")?;
                Stmt::ShowEngines
            }
            "COLLATION" => Stmt::ShowCollation {
                filter: p.filter()?,
            },
            "CHARACTER" => {
                p.expect_kw("SET")?;
                Stmt::ShowCharset {
                    filter: p.filter()?,
                }
            }
            "CHARSET" => Stmt::ShowCharset {
                filter: p.filter()?,
            },
            "MASTER" => {
                if p.eat_kw("STATUS") {
                    Stmt::ShowMasterStatus
                } else if p.eat_kw("LOGS") {
                    Stmt::ShowBinaryLogs
                } else {
                    return Ok(None);
                }
            }
            "BINLOG" => {
                if p.eat_kw("STATUS") {
                    Stmt::ShowMasterStatus
                } else if p.eat_kw("EVENTS") {
                    let file = if p.eat_kw("IN") {
                        Some(p.string()?)
                    } else {
                        None
                    };
                    let from = if p.eat_kw("FROM") {
                        Some(p.number()?)
                    } else {
                        None
                    };
                    let (mut offset, mut limit) = (0, None);
                    if p.eat_kw("LIMIT") {
                        let a = p.number()?;
                        if p.eat_sym(",") {
                            offset = a;
                            limit = Some(p.number()?);
                        } else {
                            limit = Some(a);
                        }
                    }
                    Stmt::ShowBinlogEvents {
                        file,
                        from,
                        offset,
                        limit,
                    }
                } else {
                    return Ok(None);
                }
            }
            "BINARY" => {
                p.expect_kw("LOGS")?;
                Stmt::ShowBinaryLogs
            }
            "GRANTS" => {
                let user = if p.eat_kw("FOR") { p.user()? } else { None };
                Stmt::ShowGrants { user }
            }
            _ => return Ok(None),
        };
        p.expect_end()?;
        Ok(Some(s))
    })();
    match r {
        Ok(Some(s)) => Some(Ok(s)),
        Ok(None) => None,
        Err(e) => Some(Err(e)),
    }
}

fn flush(p: &mut P<'_>) -> R<Stmt> {
    let _ = p.eat_kw("NO_WRITE_TO_BINLOG") || p.eat_kw("LOCAL");
    let mut binary = false;
    loop {
        let w = p.ident()?.to_ascii_uppercase();
        match w.as_str() {
            "BINARY" => {
                p.expect_kw("LOGS")?;
                binary = true;
            }
            "ENGINE" | "ERROR" | "GENERAL" | "SLOW" | "RELAY" => {
                p.expect_kw("LOGS")?;
            }
            "LOGS" | "PRIVILEGES" | "STATUS" | "HOSTS" | "USER_RESOURCES" | "QUERY" => {
                if w == "QUERY" {
                    p.expect_kw("CACHE")?;
                }
            }
            "TABLES" | "TABLE" => {
                // FLUSH TABLES [t, ...] [WITH READ LOCK] — the lock is not supported.
                while matches!(p.peek(), Some(Tok::Word(_)) | Some(Tok::QIdent(_)))
                    && !p.is_kw("WITH")
                {
                    p.qualified()?;
                    if !p.eat_sym(",") {
                        break;
                    }
                }
                if p.is_kw("WITH") {
                    return Err(SqlError::of(
                        errors::ER_NOT_SUPPORTED_YET,
                        "This version of onelog doesn't yet support 'FLUSH TABLES WITH READ LOCK'",
                    ));
                }
            }
            _ => return Err(p.err()),
        }
        if !p.eat_sym(",") {
            break;
        }
    }
    p.expect_end()?;
    Ok(if binary {
        Stmt::FlushBinaryLogs
    } else {
        Stmt::FlushNoop
    })
}

fn set(p: &mut P<'_>) -> Option<R<Stmt>> {
    // SET STATEMENT ... FOR ... is not supported here.
    if p.is_kw("STATEMENT") || p.is_kw("ROLE") || p.is_kw("DEFAULT") && p.is_kw_at(1, "ROLE") {
        return None;
    }
    if p.is_kw("NAMES") {
        p.i += 1;
        return Some((|| {
            let charset = if p.eat_kw("DEFAULT") {
                None
            } else {
                Some(p.name()?)
            };
            let collate = if p.eat_kw("COLLATE") {
                Some(p.name()?)
            } else {
                None
            };
            p.expect_end()?;
            Ok(Stmt::SetNames { charset, collate })
        })());
    }
    if (p.is_kw("CHARACTER") && p.is_kw_at(1, "SET")) || p.is_kw("CHARSET") {
        p.i += if p.is_kw("CHARSET") { 1 } else { 2 };
        return Some((|| {
            let charset = if p.eat_kw("DEFAULT") {
                None
            } else {
                Some(p.name()?)
            };
            p.expect_end()?;
            Ok(Stmt::SetNames {
                charset,
                collate: None,
            })
        })());
    }
    if p.is_kw("PASSWORD") && (matches!(p.peek_at(1), Some(Tok::Sym("="))) || p.is_kw_at(1, "FOR"))
    {
        p.i += 1;
        return Some((|| {
            let user = if p.eat_kw("FOR") { p.user()? } else { None };
            if !p.eat_sym("=") {
                return Err(p.err());
            }
            let password = if p.eat_kw("PASSWORD") {
                if !p.eat_sym("(") {
                    return Err(p.err());
                }
                let s = p.string()?;
                if !p.eat_sym(")") {
                    return Err(p.err());
                }
                Password::Plain(s)
            } else {
                let h = p.string()?;
                if h.is_empty() {
                    Password::None
                } else {
                    Password::Hash(h)
                }
            };
            p.expect_end()?;
            Ok(Stmt::SetPassword { user, password })
        })());
    }
    // SET [GLOBAL|SESSION] TRANSACTION ...
    let k = usize::from(p.is_kw("GLOBAL") || p.is_kw("SESSION") || p.is_kw("LOCAL"));
    if p.is_kw_at(k, "TRANSACTION") {
        let global = p.is_kw("GLOBAL");
        p.i += k + 1;
        return Some((|| {
            let mut isolation = None;
            let mut read_only = None;
            loop {
                if p.eat_kw("ISOLATION") {
                    p.expect_kw("LEVEL")?;
                    let a = p.ident()?.to_ascii_uppercase();
                    let level = match a.as_str() {
                        "REPEATABLE" => {
                            p.expect_kw("READ")?;
                            "REPEATABLE-READ"
                        }
                        "READ" => {
                            if p.eat_kw("COMMITTED") {
                                "READ-COMMITTED"
                            } else {
                                p.expect_kw("UNCOMMITTED")?;
                                "READ-UNCOMMITTED"
                            }
                        }
                        "SERIALIZABLE" => "SERIALIZABLE",
                        _ => return Err(p.err()),
                    };
                    isolation = Some(level.to_string());
                } else if p.eat_kw("READ") {
                    if p.eat_kw("ONLY") {
                        read_only = Some(true);
                    } else {
                        p.expect_kw("WRITE")?;
                        read_only = Some(false);
                    }
                } else {
                    return Err(p.err());
                }
                if !p.eat_sym(",") {
                    break;
                }
            }
            p.expect_end()?;
            Ok(Stmt::SetTransaction {
                global,
                isolation,
                read_only,
            })
        })());
    }
    Some((|| {
        let mut out = Vec::new();
        let mut scope: Option<VarScope> = None;
        loop {
            if p.eat_kw("GLOBAL") {
                scope = Some(VarScope::Global);
            } else if p.eat_kw("SESSION") || p.eat_kw("LOCAL") {
                scope = Some(VarScope::Session);
            }
            let target = match p.peek().cloned() {
                Some(Tok::UserVar(n)) => {
                    p.i += 1;
                    SetTarget::User(n.to_ascii_lowercase())
                }
                Some(Tok::SysVar(n)) => {
                    p.i += 1;
                    let (sc, name) = split_sysvar(&n);
                    let name = if name.is_empty() {
                        return Err(p.err());
                    } else {
                        name
                    };
                    SetTarget::Sys {
                        scope: sc.or(scope),
                        name,
                    }
                }
                Some(Tok::Word(_)) | Some(Tok::QIdent(_)) => {
                    let mut name = p.ident()?;
                    // `SET GLOBAL a.b = ...` style names (structured variables) are not
                    // supported; a dotted name is an error below as an unknown variable.
                    if p.eat_sym(".") {
                        name = format!("{name}.{}", p.ident()?);
                    }
                    SetTarget::Sys {
                        scope,
                        name: name.to_ascii_lowercase(),
                    }
                }
                _ => return Err(p.err()),
            };
            if !p.eat_sym("=") {
                return Err(p.err());
            }
            let expr = p.expr_text()?;
            out.push(Assignment { target, expr });
            if !p.eat_sym(",") {
                break;
            }
        }
        p.expect_end()?;
        Ok(Stmt::Set(out))
    })())
}

/// `global.name` / `session.name` / `local.name` / `name` after `@@`.
pub(crate) fn split_sysvar(text: &str) -> (Option<VarScope>, String) {
    if let Some((a, b)) = text.split_once('.') {
        if a.eq_ignore_ascii_case("global") {
            return (Some(VarScope::Global), b.to_ascii_lowercase());
        }
        if a.eq_ignore_ascii_case("session") || a.eq_ignore_ascii_case("local") {
            return (Some(VarScope::Session), b.to_ascii_lowercase());
        }
    }
    (None, text.to_ascii_lowercase())
}

/// `priv [, priv] ON scope` of GRANT / REVOKE.
fn privileges_on(p: &mut P<'_>) -> R<(Vec<PrivName>, String)> {
    use crate::privilege::privilege_bit;
    let mut privs = Vec::new();
    loop {
        let w = p.ident()?.to_ascii_uppercase();
        let mut name = w.clone();
        // Multi-word privilege names.
        while let Some(Tok::Word(next)) = p.peek().cloned() {
            if next.eq_ignore_ascii_case("ON") || next.eq_ignore_ascii_case("PRIVILEGES") {
                break;
            }
            name.push(' ');
            name.push_str(&next.to_ascii_uppercase());
            p.i += 1;
        }
        let pv = match name.as_str() {
            "ALL" => {
                let _ = p.eat_kw("PRIVILEGES");
                PrivName::All
            }
            "USAGE" => PrivName::Usage,
            other => match privilege_bit(other) {
                Some(b) => PrivName::Named(b),
                None => return Err(p.err()),
            },
        };
        privs.push(pv);
        if !p.eat_sym(",") {
            break;
        }
    }
    p.expect_kw("ON")?;
    let _ = p.eat_kw("TABLE");
    let scope = if p.eat_sym("*") {
        if p.eat_sym(".") {
            if !p.eat_sym("*") {
                return Err(p.err());
            }
            "*".to_string()
        } else {
            // `ON *`: the current database; resolved by the caller as "".
            String::new()
        }
    } else {
        let db = p.ident()?;
        if !p.eat_sym(".") || !p.eat_sym("*") {
            return Err(SqlError::of(
                errors::ER_NOT_SUPPORTED_YET,
                "onelog supports privileges on *.* and db.* only (no table or column privileges)",
            ));
        }
        db
    };
    Ok((privs, scope))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(sql: &str) -> Stmt {
        match parse(sql) {
            Some(Ok(s)) => s,
            other => panic!("{sql}: {other:?}"),
        }
    }

    #[test]
    fn show_statements_parse_with_scopes_and_filters() {
        assert_eq!(
            ok("show global variables like 'gtid%'"),
            Stmt::ShowVariables {
                global: true,
                filter: Filter::Like("gtid%".into())
            }
        );
        assert_eq!(
            ok("SHOW VARIABLES WHERE Variable_name IN ('a', \"b\") OR Variable_name = 'c'"),
            Stmt::ShowVariables {
                global: false,
                filter: Filter::Where(vec![
                    vec![Cond::In(
                        "Variable_name".into(),
                        vec!["a".into(), "b".into()]
                    )],
                    vec![Cond::Eq("Variable_name".into(), "c".into())]
                ])
            }
        );
        assert_eq!(
            ok("SHOW FULL TABLES FROM `my db` LIKE 't%';"),
            Stmt::ShowTables {
                full: true,
                db: Some("my db".into()),
                filter: Filter::Like("t%".into())
            }
        );
        assert_eq!(
            ok("show create table d.`t`"),
            Stmt::ShowCreateTable {
                db: Some("d".into()),
                table: "t".into()
            }
        );
        assert_eq!(
            ok("SHOW FULL COLUMNS FROM t FROM d LIKE 'a%'"),
            Stmt::ShowColumns {
                full: true,
                db: Some("d".into()),
                table: "t".into(),
                filter: Filter::Like("a%".into())
            }
        );
        assert_eq!(
            ok("desc t"),
            Stmt::ShowColumns {
                full: false,
                db: None,
                table: "t".into(),
                filter: Filter::None
            }
        );
        assert!(parse("DESC SELECT 1").is_none());
        assert!(parse("EXPLAIN SELECT * FROM t").is_none());
        assert_eq!(
            ok("SHOW KEYS IN t"),
            Stmt::ShowIndex {
                db: None,
                table: "t".into()
            }
        );
        assert_eq!(
            ok("SHOW BINLOG EVENTS IN 'binlog-000001.olog' FROM 4096 LIMIT 2, 5"),
            Stmt::ShowBinlogEvents {
                file: Some("binlog-000001.olog".into()),
                from: Some(4096),
                offset: 2,
                limit: Some(5)
            }
        );
        assert_eq!(ok("show master logs"), Stmt::ShowBinaryLogs);
        assert_eq!(ok("SHOW BINLOG STATUS"), Stmt::ShowMasterStatus);
        assert_eq!(
            ok("SHOW GRANTS FOR 'app'@'10.0.0.1'"),
            Stmt::ShowGrants {
                user: Some(("app".into(), "10.0.0.1".into()))
            }
        );
        assert_eq!(
            ok("SHOW GRANTS FOR CURRENT_USER()"),
            Stmt::ShowGrants { user: None }
        );
        assert!(parse("SHOW SLAVE STATUS").is_none());
        assert!(parse("SELECT 1").is_none());
        assert_eq!(
            parse("SHOW VARIABLES LIKE").unwrap().unwrap_err().code,
            1064
        );
    }

    #[test]
    fn set_statements_keep_expression_text_and_scopes() {
        assert_eq!(
            ok("SET @@global.max_connections = 10, session sql_mode='', @x := (1, 2), autocommit=1"),
            Stmt::Set(vec![
                Assignment {
                    target: SetTarget::Sys {
                        scope: Some(VarScope::Global),
                        name: "max_connections".into()
                    },
                    expr: "10".into()
                },
                Assignment {
                    target: SetTarget::Sys {
                        scope: Some(VarScope::Session),
                        name: "sql_mode".into()
                    },
                    expr: "''".into()
                },
                Assignment {
                    target: SetTarget::User("x".into()),
                    expr: "(1, 2)".into()
                },
                Assignment {
                    target: SetTarget::Sys {
                        scope: Some(VarScope::Session),
                        name: "autocommit".into()
                    },
                    expr: "1".into()
                },
            ])
        );
        assert_eq!(
            ok("SET NAMES utf8mb4 COLLATE 'utf8mb4_general_ci'"),
            Stmt::SetNames {
                charset: Some("utf8mb4".into()),
                collate: Some("utf8mb4_general_ci".into())
            }
        );
        assert_eq!(
            ok("set session transaction isolation level read committed"),
            Stmt::SetTransaction {
                global: false,
                isolation: Some("READ-COMMITTED".into()),
                read_only: None
            }
        );
        assert_eq!(
            ok("SET PASSWORD FOR 'u'@'%' = PASSWORD('it''s')"),
            Stmt::SetPassword {
                user: Some(("u".into(), "%".into())),
                password: Password::Plain("it's".into())
            }
        );
        assert_eq!(
            ok("SET PASSWORD = '*ABC'"),
            Stmt::SetPassword {
                user: None,
                password: Password::Hash("*ABC".into())
            }
        );
        assert!(parse("SET STATEMENT max_statement_time=1 FOR SELECT 1").is_none());
    }

    #[test]
    fn account_statements_parse_users_passwords_and_privileges() {
        assert_eq!(
            ok("CREATE USER IF NOT EXISTS 'app'@'%' IDENTIFIED BY 'p\\'w', bob@localhost"),
            Stmt::CreateUser {
                if_not_exists: true,
                users: vec![
                    (("app".into(), "%".into()), Password::Plain("p'w".into())),
                    (("bob".into(), "localhost".into()), Password::None),
                ]
            }
        );
        assert_eq!(
            ok("drop user if exists 'x'"),
            Stmt::DropUser {
                if_exists: true,
                users: vec![("x".into(), "%".into())]
            }
        );
        let rs = crate::privilege::privilege_bit("REPLICATION SLAVE").unwrap();
        assert_eq!(
            ok("GRANT REPLICATION SLAVE, SELECT ON *.* TO 'repl'@'%' IDENTIFIED BY PASSWORD '*AA'"),
            Stmt::Grant {
                privs: vec![
                    PrivName::Named(rs),
                    PrivName::Named(crate::privilege::privilege_bit("SELECT").unwrap())
                ],
                scope: "*".into(),
                users: vec![(("repl".into(), "%".into()), Password::Hash("*AA".into()))],
                grant_option: false
            }
        );
        assert_eq!(
            ok("GRANT ALL PRIVILEGES ON shop.* TO app@'%' WITH GRANT OPTION"),
            Stmt::Grant {
                privs: vec![PrivName::All],
                scope: "shop".into(),
                users: vec![(("app".into(), "%".into()), Password::None)],
                grant_option: true
            }
        );
        assert_eq!(
            parse("GRANT SELECT ON shop.t TO app")
                .unwrap()
                .unwrap_err()
                .code,
            1235
        );
        assert_eq!(
            ok("KILL QUERY 12"),
            Stmt::Kill {
                query_only: true,
                id: 12
            }
        );
        assert_eq!(
            ok("kill 7;"),
            Stmt::Kill {
                query_only: false,
                id: 7
            }
        );
        assert_eq!(ok("FLUSH BINARY LOGS"), Stmt::FlushBinaryLogs);
        assert_eq!(ok("flush privileges"), Stmt::FlushNoop);
        assert_eq!(ok("FLUSH LOCAL TABLES"), Stmt::FlushNoop);
        assert_eq!(
            ok("PURGE BINARY LOGS TO 'binlog-000002.olog'"),
            Stmt::PurgeTo("binlog-000002.olog".into())
        );
        assert_eq!(ok("RESET MASTER"), Stmt::ResetMaster);
    }

    #[test]
    fn hot_statements_are_rejected_without_lexing() {
        assert!(!maybe_admin("SELECT c FROM sbtest1 WHERE id=1"));
        assert!(!maybe_admin("  /* x */ INSERT INTO t VALUES (1)"));
        assert!(!maybe_admin("CREATE TABLE t (id INT)"));
        assert!(!maybe_admin("COMMIT"));
        assert!(maybe_admin("-- c\n show tables"));
        assert!(maybe_admin("CREATE /* c */ USER x"));
        assert!(maybe_admin("drop user x"));
        assert!(!maybe_admin(""));
        assert!(!maybe_admin("/* unterminated"));
    }

    #[test]
    fn parser_never_panics_on_random_statements() {
        // Deterministic xorshift over an alphabet of the characters the grammar cares about.
        let alphabet: Vec<char> =
            "SHOWSETGRANTPURGEFLUSH @@.`'\"\\,()=*;-#/%_0123456789é\u{0}\n\t:"
                .chars()
                .collect();
        let words = [
            "SHOW ",
            "SET ",
            "GRANT ",
            "ON ",
            "TO ",
            "'u'@'h' ",
            "BINLOG EVENTS ",
            "LIMIT ",
            "GLOBAL ",
            "@@session.",
            "CREATE USER ",
            "IDENTIFIED BY ",
            "FROM ",
            "LIKE ",
            "WHERE ",
            "IN (",
            "KILL ",
            "PURGE BINARY LOGS TO ",
            "NAMES ",
            "TRANSACTION ",
        ];
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..20_000 {
            let mut s = String::new();
            for _ in 0..(next() % 12) {
                if next() % 3 == 0 {
                    s.push_str(words[(next() % words.len() as u64) as usize]);
                } else {
                    s.push(alphabet[(next() % alphabet.len() as u64) as usize]);
                }
            }
            let _ = parse(&s);
        }
    }

    #[test]
    fn lexer_never_panics_and_like_matches_mysql() {
        for s in [
            "'",
            "`a",
            "@",
            "@@",
            "/*",
            "SHOW 'é",
            "SET @x = 'ü' ,",
            "\u{0}",
            "é@'",
        ] {
            let _ = parse(s);
        }
    }
}
