//! Hand parser of the view statements: `CREATE [OR REPLACE] [ALGORITHM = ...] [DEFINER =
//! ...] [SQL SECURITY ...] VIEW [IF NOT EXISTS] [db.]v [(columns)] AS select [WITH
//! [CASCADED | LOCAL] CHECK OPTION]`, `ALTER [ALGORITHM ...] [DEFINER ...] [SQL SECURITY ...]
//! VIEW ...`, `DROP VIEW [IF EXISTS] v, ... [RESTRICT | CASCADE]` and `SHOW CREATE VIEW v`.
//!
//! Contract: [`parse`] answers None for any other statement (the caller goes on with its other
//! parsers), `Some(Err(1064))` for a malformed view statement (1221 for OR REPLACE with IF NOT
//! EXISTS, as MariaDB), else the statement. The SELECT is kept as its source text (from the
//! word after `AS`), parsed by the caller with the statement parser; the text handed in has
//! its comments stripped and versioned comments unwrapped (`parse::strip_comments`), which is
//! how mysqldump writes views.
//!
//! Called by `execute::view::try_execute`.

use onelog_engine::{ViewAlgorithm, ViewCheck};
use onelog_protocol::errors;

use super::lexer::{lex, Tok, Token};
use crate::error::SqlError;

/// `CREATE VIEW` / `ALTER VIEW`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CreateView {
    /// ALTER VIEW: the view must exist; clauses not given keep their old values.
    pub alter: bool,
    pub or_replace: bool,
    pub if_not_exists: bool,
    pub algorithm: Option<ViewAlgorithm>,
    /// `DEFINER = 'user'@'host'`; None: not given or `CURRENT_USER`.
    pub definer: Option<(String, String)>,
    /// `SQL SECURITY INVOKER` (true) / `DEFINER` (false).
    pub invoker: Option<bool>,
    pub db: Option<String>,
    pub name: String,
    pub columns: Vec<String>,
    /// The SELECT's source text (without `WITH ... CHECK OPTION`).
    pub query: String,
    pub check: ViewCheck,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ViewStmt {
    Create(CreateView),
    Drop {
        if_exists: bool,
        names: Vec<(Option<String>, String)>,
    },
    ShowCreate {
        db: Option<String>,
        name: String,
    },
}

struct Cur<'a> {
    sql: &'a str,
    t: Vec<Token>,
    i: usize,
}

impl Cur<'_> {
    fn is_kw(&self, k: usize, kw: &str) -> bool {
        matches!(self.t.get(self.i + k).map(|t| &t.tok), Some(Tok::Word(w)) if w.eq_ignore_ascii_case(kw))
    }
    fn eat(&mut self, kw: &str) -> bool {
        let yes = self.is_kw(0, kw);
        self.i += usize::from(yes);
        yes
    }
    fn sym(&mut self, s: &str) -> bool {
        let yes = matches!(self.t.get(self.i).map(|t| &t.tok), Some(Tok::Sym(x)) if *x == s);
        self.i += usize::from(yes);
        yes
    }
    fn err(&self) -> SqlError {
        let near = self.t.get(self.i).map_or("", |t| &self.sql[t.start..]);
        SqlError::syntax(near)
    }
    fn expect(&mut self, kw: &str) -> Result<(), SqlError> {
        if self.eat(kw) {
            Ok(())
        } else {
            Err(self.err())
        }
    }
    fn ident(&mut self) -> Result<String, SqlError> {
        match self.t.get(self.i).map(|t| &t.tok) {
            Some(Tok::Word(w) | Tok::QIdent(w)) => {
                let w = w.clone();
                self.i += 1;
                Ok(w)
            }
            _ => Err(self.err()),
        }
    }
    /// A user or host name: an identifier or a string.
    fn account_part(&mut self) -> Result<String, SqlError> {
        match self.t.get(self.i).map(|t| &t.tok) {
            Some(Tok::Str(s)) => {
                let s = s.clone();
                self.i += 1;
                Ok(s)
            }
            _ => self.ident(),
        }
    }
    fn qualified(&mut self) -> Result<(Option<String>, String), SqlError> {
        let a = self.ident()?;
        if self.sym(".") {
            return Ok((Some(a), self.ident()?));
        }
        Ok((None, a))
    }
    fn at_end(&mut self) -> bool {
        while self.sym(";") {}
        self.i >= self.t.len()
    }
}

/// Whether the tokens start a view statement: `SHOW CREATE VIEW`, `DROP VIEW`, or CREATE
/// [OR REPLACE] / ALTER followed by ALGORITHM, DEFINER, SQL (SECURITY) or VIEW.
fn starts_view_statement(t: &[Token]) -> bool {
    let word = |k: usize| match t.get(k).map(|x| &x.tok) {
        Some(Tok::Word(w)) => w.to_ascii_uppercase(),
        _ => String::new(),
    };
    let clause = |w: &str| ["ALGORITHM", "DEFINER", "SQL", "VIEW"].contains(&w);
    match word(0).as_str() {
        "SHOW" => word(1) == "CREATE" && word(2) == "VIEW",
        "DROP" => word(1) == "VIEW",
        "CREATE" if word(1) == "OR" => word(2) == "REPLACE" && clause(&word(3)),
        "CREATE" | "ALTER" => clause(&word(1)),
        _ => false,
    }
}

/// Whether `sql` (comments not stripped) may be a view statement: the cheap test before
/// [`parse`], true for every statement starting with CREATE, ALTER, DROP or SHOW, or with a
/// comment (mysqldump's `/*!50001 CREATE ... VIEW`).
pub(crate) fn maybe_view(sql: &str) -> bool {
    let t = sql.trim_start();
    let first = t.get(..4).map(|w| w.to_ascii_uppercase());
    t.starts_with("/*")
        || first.is_some_and(|w| ["CREA", "ALTE", "DROP", "SHOW"].contains(&w.as_str()))
}

/// Parses one view statement (see the module docs for the contract).
pub(crate) fn parse(sql: &str) -> Option<Result<ViewStmt, SqlError>> {
    let first = sql.trim_start().get(..4)?.to_ascii_uppercase();
    if !["CREA", "ALTE", "DROP", "SHOW"].contains(&first.as_str()) {
        return None;
    }
    let t = lex(sql)?;
    if !starts_view_statement(&t) {
        return None;
    }
    let mut c = Cur { sql, t, i: 0 };
    Some(statement(&mut c))
}

fn statement(c: &mut Cur<'_>) -> Result<ViewStmt, SqlError> {
    if c.eat("SHOW") {
        c.expect("CREATE")?;
        c.expect("VIEW")?;
        let (db, name) = c.qualified()?;
        if !c.at_end() {
            return Err(c.err());
        }
        return Ok(ViewStmt::ShowCreate { db, name });
    }
    if c.eat("DROP") {
        c.expect("VIEW")?;
        let if_exists = c.eat("IF") && {
            c.expect("EXISTS")?;
            true
        };
        let mut names = vec![c.qualified()?];
        while c.sym(",") {
            names.push(c.qualified()?);
        }
        // RESTRICT and CASCADE are accepted and mean nothing (as in MariaDB).
        let _ = c.eat("RESTRICT") || c.eat("CASCADE");
        if !c.at_end() {
            return Err(c.err());
        }
        return Ok(ViewStmt::Drop { if_exists, names });
    }
    create(c).map(ViewStmt::Create)
}

fn create(c: &mut Cur<'_>) -> Result<CreateView, SqlError> {
    let alter = c.eat("ALTER");
    if !alter {
        c.expect("CREATE")?;
    }
    let or_replace = !alter && c.eat("OR") && {
        c.expect("REPLACE")?;
        true
    };
    let mut v = CreateView {
        alter,
        or_replace,
        if_not_exists: false,
        algorithm: None,
        definer: None,
        invoker: None,
        db: None,
        name: String::new(),
        columns: Vec::new(),
        query: String::new(),
        check: ViewCheck::None,
    };
    if c.eat("ALGORITHM") {
        c.sym("=");
        v.algorithm = Some(if c.eat("UNDEFINED") {
            ViewAlgorithm::Undefined
        } else if c.eat("MERGE") {
            ViewAlgorithm::Merge
        } else if c.eat("TEMPTABLE") {
            ViewAlgorithm::TempTable
        } else {
            return Err(c.err());
        });
    }
    if c.eat("DEFINER") {
        c.sym("=");
        if c.eat("CURRENT_USER") {
            if c.sym("(") && !c.sym(")") {
                return Err(c.err());
            }
        } else {
            let user = c.account_part()?;
            let var = match c.t.get(c.i).map(|t| &t.tok) {
                Some(Tok::UserVar(h)) => Some(h.clone()),
                _ => None,
            };
            let host = match var {
                Some(h) => {
                    c.i += 1;
                    h
                }
                None if c.sym("@") => c.account_part()?,
                None => "%".to_string(),
            };
            v.definer = Some((user, host));
        }
    }
    if c.eat("SQL") {
        c.expect("SECURITY")?;
        v.invoker = Some(if c.eat("INVOKER") {
            true
        } else if c.eat("DEFINER") {
            false
        } else {
            return Err(c.err());
        });
    }
    c.expect("VIEW")?;
    if c.is_kw(0, "IF") && c.is_kw(1, "NOT") && c.is_kw(2, "EXISTS") && !alter {
        c.i += 3;
        v.if_not_exists = true;
    }
    let (db, name) = c.qualified()?;
    v.db = db;
    v.name = name;
    if c.sym("(") {
        loop {
            v.columns.push(c.ident()?);
            if c.sym(")") {
                break;
            }
            if !c.sym(",") {
                return Err(c.err());
            }
        }
    }
    if !c.is_kw(0, "AS") {
        return Err(c.err());
    }
    c.i += 1;
    let Some(start) = c.t.get(c.i).map(|t| t.start) else {
        return Err(c.err());
    };
    let (end, check) = check_option(&c.t[c.i..], c.sql.len());
    v.query = c.sql[start..end]
        .trim()
        .trim_end_matches(';')
        .trim_end()
        .to_string();
    v.check = check;
    if v.query.is_empty() {
        return Err(c.err());
    }
    if v.or_replace && v.if_not_exists {
        return Err(SqlError::of(
            errors::ER_WRONG_USAGE,
            "Incorrect usage of OR REPLACE and IF NOT EXISTS",
        ));
    }
    Ok(v)
}

/// Where the SELECT of `t` (the tokens after `AS`) ends, and its `WITH [CASCADED | LOCAL]
/// CHECK OPTION` (a trailing `;` ignored).
fn check_option(t: &[Token], len: usize) -> (usize, ViewCheck) {
    let mut n = t.len();
    while n > 0 && matches!(t[n - 1].tok, Tok::Sym(";")) {
        n -= 1;
    }
    let word = |k: usize, w: &str| matches!(&t[k].tok, Tok::Word(x) if x.eq_ignore_ascii_case(w));
    if n >= 3 && word(n - 1, "OPTION") && word(n - 2, "CHECK") {
        if word(n - 3, "WITH") {
            return (t[n - 3].start, ViewCheck::Cascaded);
        }
        let kind = if word(n - 3, "CASCADED") {
            Some(ViewCheck::Cascaded)
        } else if word(n - 3, "LOCAL") {
            Some(ViewCheck::Local)
        } else {
            None
        };
        if let Some(k) = kind.filter(|_| n >= 4 && word(n - 4, "WITH")) {
            return (t[n - 4].start, k);
        }
    }
    (t.get(n).map_or(len, |x| x.start), ViewCheck::None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn create_of(sql: &str) -> CreateView {
        match parse(sql).unwrap().unwrap() {
            ViewStmt::Create(c) => c,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn create_view_clauses_parse() {
        let c = create_of(
            "CREATE OR REPLACE ALGORITHM=MERGE DEFINER=`root`@`localhost` SQL SECURITY INVOKER \
             VIEW d.v (x, `y z`) AS select a, b from t where a > 1 WITH LOCAL CHECK OPTION;",
        );
        assert!(c.or_replace && !c.alter && !c.if_not_exists);
        assert_eq!(c.algorithm, Some(ViewAlgorithm::Merge));
        assert_eq!(c.definer, Some(("root".into(), "localhost".into())));
        assert_eq!(c.invoker, Some(true));
        assert_eq!((c.db.as_deref(), c.name.as_str()), (Some("d"), "v"));
        assert_eq!(c.columns, vec!["x".to_string(), "y z".to_string()]);
        assert_eq!(c.query, "select a, b from t where a > 1");
        assert_eq!(c.check, ViewCheck::Local);
        let c = create_of("create definer='u'@'%' view v as select 1 with check option");
        assert_eq!(c.definer, Some(("u".into(), "%".into())));
        assert_eq!(
            (c.query.as_str(), c.check),
            ("select 1", ViewCheck::Cascaded)
        );
        let c = create_of("create view if not exists v as (select 1) union (select 2)");
        assert!(c.if_not_exists);
        assert_eq!(c.query, "(select 1) union (select 2)");
        let c = create_of("alter sql security definer view v as select 2");
        assert!(c.alter && c.invoker == Some(false) && c.algorithm.is_none());
    }

    #[test]
    fn other_statements_are_not_view_statements() {
        for sql in [
            "create table view (a int)",
            "create user v",
            "select 1",
            "drop table v",
            "show create table v",
            "alter table v add view int",
            "create sequence view",
            "create or replace table view (a int)",
        ] {
            assert!(parse(sql).is_none(), "{sql}");
        }
    }

    #[test]
    fn malformed_view_statements_are_syntax_errors() {
        assert_eq!(parse("create view v").unwrap().unwrap_err().code, 1064);
        assert_eq!(parse("create view v as").unwrap().unwrap_err().code, 1064);
        assert_eq!(parse("drop view").unwrap().unwrap_err().code, 1064);
        assert_eq!(
            parse("create or replace view if not exists v as select 1")
                .unwrap()
                .unwrap_err()
                .code,
            1221
        );
        match parse("drop view if exists a, d.b cascade")
            .unwrap()
            .unwrap()
        {
            ViewStmt::Drop { if_exists, names } => {
                assert!(if_exists);
                assert_eq!(
                    names,
                    vec![(None, "a".into()), (Some("d".into()), "b".into())]
                );
            }
            other => panic!("{other:?}"),
        }
    }
}
