//! MariaDB's ALTER TABLE operations that sqlparser does not parse, which migration tools and
//! DBAs write alone or among other operations: `ENGINE [=] InnoDB` and `FORCE` (a rebuild),
//! the table option `COMMENT [=] '...'`, `RENAME {INDEX | KEY} a TO b`, the `ONLINE` of
//! `ALTER ONLINE TABLE` (MariaDB's `LOCK=NONE`), and the `IF [NOT] EXISTS` of ADD COLUMN, ADD
//! INDEX / KEY / UNIQUE, DROP INDEX / KEY, MODIFY and CHANGE (the operation goes to sqlparser
//! without it, and a [`Guard`] skips it with MariaDB's note when its object is (not) there);
//! `DROP KEY k` goes to sqlparser as its `DROP INDEX k`.
//!
//! [`split`] takes such operations out of the statement and leaves the others, in their order
//! and as written, to sqlparser; it is tried only when sqlparser refused the whole statement,
//! so statements sqlparser parses pay nothing for it.
//!
//! Invariants: an operation is either recognised here (and then executed: nothing parsed here
//! is dropped) or handed to sqlparser unchanged; a statement with none of these operations is
//! not ours (None), so sqlparser's own error stands.

use onelog_protocol::errors;

use super::lexer::{lex, Tok, Token};
use crate::error::SqlError;

/// The operations [`split`] took out of an ALTER TABLE.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct TableOps {
    /// `ENGINE=InnoDB` or `FORCE`: MariaDB rebuilds the table; onelog's rows and keys need
    /// nothing, so it is an ALTER that changes nothing (still logged, locked and checked).
    pub rebuild: bool,
    /// The table option `COMMENT [=] '...'` (the last one written).
    pub comment: Option<String>,
    /// `RENAME {INDEX | KEY} from TO to`, in their order.
    pub rename_indexes: Vec<(String, String)>,
    /// The `IF [NOT] EXISTS` of sqlparser's operations, by their position among them.
    pub guards: Vec<(usize, Guard)>,
}

/// What an operation written with `IF [NOT] EXISTS` needs of the table as it was; without
/// it the operation is skipped with MariaDB's note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Guard {
    /// ADD [COLUMN] IF NOT EXISTS c: note 1060 when `c` exists.
    NoColumn(String),
    /// ADD {INDEX | KEY | UNIQUE} IF NOT EXISTS k: note 1061 when `k` exists.
    NoIndex(String),
    /// DROP {INDEX | KEY} IF EXISTS k: note 1091 when there is no `k`.
    Index(String),
    /// MODIFY / CHANGE [COLUMN] IF EXISTS c: note 1054 when there is no `c`.
    Column(String),
}

impl TableOps {
    pub(crate) fn is_empty(&self) -> bool {
        *self == TableOps::default()
    }

    /// Whether there is more than guards: a rebuild, a comment or an index rename.
    pub(crate) fn changes_table(&self) -> bool {
        self.rebuild || self.comment.is_some() || !self.rename_indexes.is_empty()
    }
}

/// An ALTER TABLE split in two: the operations sqlparser parses and ours.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Split {
    /// `ALTER [IGNORE] TABLE name` followed by the operations left to sqlparser (and `LOCK =
    /// NONE` for ONLINE); None when every operation was ours.
    pub rest: Option<String>,
    /// How many operations `rest` has (sqlparser must give as many for the guards' positions
    /// to hold).
    pub operations: usize,
    /// The table's name as written (`db`.`t`).
    pub name: (Option<String>, String),
    pub ops: TableOps,
}

/// Storage engines MariaDB 10.11 has besides InnoDB (built in or as plugins).
const OTHER_ENGINES: &[&str] = &[
    "MyISAM",
    "Aria",
    "MEMORY",
    "HEAP",
    "CSV",
    "ARCHIVE",
    "BLACKHOLE",
    "MRG_MyISAM",
    "MERGE",
    "SEQUENCE",
    "FEDERATED",
    "CONNECT",
    "ROCKSDB",
    "SPIDER",
    "S3",
    "PERFORMANCE_SCHEMA",
];

/// Splits `sql` (comments stripped, one statement) when it is an `ALTER [ONLINE] [IGNORE]
/// TABLE` with at least one operation of ours or ONLINE; None otherwise (not ours).
pub(crate) fn split(sql: &str) -> Option<Result<Split, SqlError>> {
    let t = lex(sql)?;
    let word = |i: usize, w: &str| matches!(t.get(i), Some(Token { tok: Tok::Word(x), .. }) if x.eq_ignore_ascii_case(w));
    if !word(0, "ALTER") {
        return None;
    }
    let mut i = 1;
    let online = word(i, "ONLINE");
    i += usize::from(online);
    let ignore = word(i, "IGNORE");
    i += usize::from(ignore);
    if !word(i, "TABLE") {
        return None;
    }
    i += 1;
    let Qualified {
        name,
        span,
        next: after,
    } = qualified(&t, i)?;
    let mut end = t.len();
    while end > after && matches!(t[end - 1].tok, Tok::Sym(";")) {
        end -= 1;
    }
    let mut ops = TableOps::default();
    let mut others: Vec<String> = Vec::new();
    let mut ours = false;
    for (a, b) in operations(&t[..end], after) {
        // `DROP KEY k` is sqlparser's `DROP INDEX k`.
        let drop_key = b - a > 2 && word(a, "DROP") && word(a + 1, "KEY");
        if let Some((guard, (i, j))) = guarded(&t[a..b]) {
            // The operation without its `IF [NOT] EXISTS` (tokens i..j of it).
            let (i, j) = (a + i, a + j);
            ours = true;
            ops.guards.push((others.len(), guard));
            let head = match drop_key {
                true => "DROP INDEX",
                false => &sql[t[a].start..t[i].start],
            };
            others.push(format!("{head} {}", &sql[t[j].start..t[b - 1].end]));
            continue;
        }
        if drop_key {
            ours = true;
            others.push(format!("DROP INDEX {}", &sql[t[a + 2].start..t[b - 1].end]));
            continue;
        }
        match operation(&t[a..b]) {
            Some(Ok(op)) => {
                ours = true;
                match op {
                    Op::Rebuild => ops.rebuild = true,
                    Op::Comment(c) => ops.comment = Some(c),
                    Op::RenameIndex(from, to) => ops.rename_indexes.push((from, to)),
                }
            }
            Some(Err(e)) => return Some(Err(e)),
            None if a == b => return Some(Err(near(sql, &t, a))),
            None => others.push(sql[t[a].start..t[b - 1].end].to_string()),
        }
    }
    if !ours && !online {
        return None;
    }
    if online {
        others.push("LOCK = NONE".to_string());
    }
    let operations = others.len();
    let head = format!(
        "ALTER {}TABLE {}",
        if ignore { "IGNORE " } else { "" },
        &sql[span.0..span.1]
    );
    let rest = (!others.is_empty()).then(|| format!("{head} {}", others.join(", ")));
    Some(Ok(Split {
        rest,
        operations,
        name,
        ops,
    }))
}

/// An operation with `IF [NOT] EXISTS` after its verb: its guard and the token range of the
/// words to leave out.
fn guarded(t: &[Token]) -> Option<(Guard, (usize, usize))> {
    let kw = |k: usize, w: &str| matches!(t.get(k).map(|x| &x.tok), Some(Tok::Word(x)) if x.eq_ignore_ascii_case(w));
    let mut k = 1;
    let adding = kw(0, "ADD");
    let make: fn(String) -> Guard = if adding && kw(1, "UNIQUE") {
        k += 1 + usize::from(kw(2, "INDEX") || kw(2, "KEY"));
        Guard::NoIndex
    } else if adding && (kw(1, "INDEX") || kw(1, "KEY")) {
        k += 1;
        Guard::NoIndex
    } else if adding {
        k += usize::from(kw(1, "COLUMN"));
        Guard::NoColumn
    } else if kw(0, "DROP") && (kw(1, "INDEX") || kw(1, "KEY")) {
        k += 1;
        Guard::Index
    } else if kw(0, "MODIFY") || kw(0, "CHANGE") {
        k += usize::from(kw(1, "COLUMN"));
        Guard::Column
    } else {
        return None;
    };
    // ADD takes `IF NOT EXISTS`, the others `IF EXISTS`.
    let not = adding;
    let words = if not { 3 } else { 2 };
    let written = kw(k, "IF") && (!not || kw(k + 1, "NOT")) && kw(k + words - 1, "EXISTS");
    if !written {
        return None;
    }
    let name = match t.get(k + words).map(|x| &x.tok) {
        Some(Tok::Word(n) | Tok::QIdent(n)) => n.clone(),
        _ => return None,
    };
    Some((make(name), (k, k + words)))
}

enum Op {
    Rebuild,
    Comment(String),
    RenameIndex(String, String),
}

/// A `[db.]name` and where it was.
struct Qualified {
    name: (Option<String>, String),
    /// Its bytes in the statement.
    span: (usize, usize),
    /// The token after it.
    next: usize,
}

/// `[db.]name` at token `i`.
fn qualified(t: &[Token], i: usize) -> Option<Qualified> {
    let ident = |k: usize| match t.get(k).map(|x| &x.tok) {
        Some(Tok::Word(w) | Tok::QIdent(w)) => Some(w.clone()),
        _ => None,
    };
    let first = ident(i)?;
    if matches!(t.get(i + 1).map(|x| &x.tok), Some(Tok::Sym("."))) {
        let second = ident(i + 2)?;
        return Some(Qualified {
            name: (Some(first), second),
            span: (t[i].start, t[i + 2].end),
            next: i + 3,
        });
    }
    Some(Qualified {
        name: (None, first),
        span: (t[i].start, t[i].end),
        next: i + 1,
    })
}

/// The token ranges of the comma-separated operations from `from` (commas inside parentheses
/// belong to their operation).
fn operations(t: &[Token], from: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0usize, from);
    for (k, tok) in t.iter().enumerate().skip(from) {
        match tok.tok {
            Tok::Sym("(") => depth += 1,
            Tok::Sym(")") => depth = depth.saturating_sub(1),
            Tok::Sym(",") if depth == 0 => {
                out.push((start, k));
                start = k + 1;
            }
            _ => {}
        }
    }
    if start < t.len() || out.is_empty() {
        out.push((start, t.len()));
    }
    out
}

/// One operation, when it is one of ours.
fn operation(t: &[Token]) -> Option<Result<Op, SqlError>> {
    let kw = |k: usize, w: &str| matches!(t.get(k).map(|x| &x.tok), Some(Tok::Word(x)) if x.eq_ignore_ascii_case(w));
    let eq = usize::from(matches!(t.get(1).map(|x| &x.tok), Some(Tok::Sym("="))));
    match t.first().map(|x| &x.tok)? {
        Tok::Word(w) if w.eq_ignore_ascii_case("FORCE") && t.len() == 1 => Some(Ok(Op::Rebuild)),
        Tok::Word(w) if w.eq_ignore_ascii_case("ENGINE") && t.len() == 2 + eq => {
            let name = match &t[1 + eq].tok {
                Tok::Word(n) | Tok::QIdent(n) | Tok::Str(n) => n.clone(),
                _ => return None,
            };
            Some(engine(&name))
        }
        Tok::Word(w) if w.eq_ignore_ascii_case("COMMENT") && t.len() == 2 + eq => {
            match &t[1 + eq].tok {
                Tok::Str(s) => Some(Ok(Op::Comment(s.clone()))),
                _ => None,
            }
        }
        Tok::Word(w)
            if w.eq_ignore_ascii_case("RENAME")
                && (kw(1, "INDEX") || kw(1, "KEY"))
                && kw(3, "TO")
                && t.len() == 5 =>
        {
            let name = |k: usize| match &t[k].tok {
                Tok::Word(n) if n.eq_ignore_ascii_case("PRIMARY") => None,
                Tok::Word(n) | Tok::QIdent(n) => Some(n.clone()),
                _ => None,
            };
            // `PRIMARY` is a reserved word there: MariaDB's parser stops at it (1064).
            let at = |k: usize| {
                let text: Vec<String> = t[k..].iter().map(token_text).collect();
                Some(Err(SqlError::syntax(&text.join(" "))))
            };
            match (name(2), name(4)) {
                (Some(a), Some(b)) => Some(Ok(Op::RenameIndex(a, b))),
                (None, _) => at(2),
                (_, None) => at(4),
            }
        }
        _ => None,
    }
}

/// What an `ENGINE = name` names.
pub(crate) enum StorageEngine {
    /// onelog's store, or InnoDB (its alias in SHOW ENGINES).
    Ours,
    /// Another engine MariaDB has (MyISAM, Aria, MEMORY, ...), as MariaDB spells it.
    Other(&'static str),
    /// No engine MariaDB has: MariaDB's 1286.
    Unknown,
}

pub(crate) fn storage_engine(name: &str) -> StorageEngine {
    if name.eq_ignore_ascii_case("InnoDB") || name.eq_ignore_ascii_case("onelog") {
        return StorageEngine::Ours;
    }
    match OTHER_ENGINES.iter().find(|e| e.eq_ignore_ascii_case(name)) {
        Some(e) => StorageEngine::Other(e),
        None => StorageEngine::Unknown,
    }
}

/// 1286 `Unknown storage engine 'name'`.
pub(crate) fn unknown_engine(name: &str) -> SqlError {
    SqlError::of(
        errors::ER_UNKNOWN_STORAGE_ENGINE,
        format!("Unknown storage engine '{name}'"),
    )
}

/// `ENGINE = name` in ALTER TABLE: ours is a rebuild; converting a table to another engine is
/// refused (1235: onelog keeps every table in its one transactional store), an unknown one is
/// MariaDB's 1286.
fn engine(name: &str) -> Result<Op, SqlError> {
    match storage_engine(name) {
        StorageEngine::Ours => Ok(Op::Rebuild),
        StorageEngine::Other(e) => Err(SqlError::unsupported(&format!(
            "ALTER TABLE ... ENGINE={e} (onelog keeps every table in its transactional store)"
        ))),
        StorageEngine::Unknown => Err(unknown_engine(name)),
    }
}

fn token_text(t: &Token) -> String {
    match &t.tok {
        Tok::Word(w) => w.clone(),
        Tok::QIdent(w) => format!("`{w}`"),
        Tok::Str(s) => format!("'{s}'"),
        Tok::Num(n) => n.clone(),
        Tok::UserVar(v) => format!("@{v}"),
        Tok::SysVar(v) => format!("@@{v}"),
        Tok::Sym(s) => s.to_string(),
    }
}

/// 1064 near token `k` (an empty operation: `ALTER TABLE t FORCE,`).
fn near(sql: &str, t: &[Token], k: usize) -> SqlError {
    SqlError::syntax(t.get(k).map_or("", |x| &sql[x.start..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(sql: &str) -> Split {
        match split(sql) {
            Some(Ok(s)) => s,
            other => panic!("{sql}: {other:?}"),
        }
    }

    #[test]
    fn our_operations_come_out_and_the_others_stay_in_order() {
        let s = ok(
            "ALTER TABLE d.`t` ENGINE=InnoDB, ADD COLUMN c INT DEFAULT (1, 2), \
                    COMMENT 'x, y', RENAME KEY a TO `b c`, DROP INDEX z;",
        );
        assert_eq!(s.name, (Some("d".into()), "t".into()));
        assert_eq!(
            s.rest.as_deref(),
            Some("ALTER TABLE d.`t` ADD COLUMN c INT DEFAULT (1, 2), DROP INDEX z")
        );
        assert_eq!(
            s.ops,
            TableOps {
                rebuild: true,
                comment: Some("x, y".into()),
                rename_indexes: vec![("a".into(), "b c".into())],
                guards: Vec::new(),
            }
        );
        let s = ok("alter table t force");
        assert_eq!((s.rest, s.ops.rebuild), (None, true));
        let s = ok("ALTER ONLINE IGNORE TABLE t ADD COLUMN c INT");
        assert_eq!(
            s.rest.as_deref(),
            Some("ALTER IGNORE TABLE t ADD COLUMN c INT, LOCK = NONE")
        );
        assert!(s.ops.is_empty());
        assert_eq!(
            ok("ALTER TABLE t COMMENT = 'a'").ops.comment.as_deref(),
            Some("a")
        );
    }

    #[test]
    fn if_exists_guards_leave_the_operation_to_sqlparser() {
        let s = ok(
            "ALTER TABLE t ADD COLUMN IF NOT EXISTS a INT, ADD IF NOT EXISTS `b` INT, \
                    DROP COLUMN c, ADD UNIQUE KEY IF NOT EXISTS u (a), DROP KEY IF EXISTS k, \
                    MODIFY IF EXISTS d BIGINT, ALGORITHM=COPY",
        );
        assert_eq!(
            s.rest.as_deref(),
            Some(
                "ALTER TABLE t ADD COLUMN  a INT, ADD  `b` INT, DROP COLUMN c, \
                 ADD UNIQUE KEY  u (a), DROP INDEX k, MODIFY  d BIGINT, ALGORITHM=COPY"
            )
        );
        assert_eq!(s.operations, 7);
        assert_eq!(
            s.ops.guards,
            [
                (0, Guard::NoColumn("a".into())),
                (1, Guard::NoColumn("b".into())),
                (3, Guard::NoIndex("u".into())),
                (4, Guard::Index("k".into())),
                (5, Guard::Column("d".into())),
            ]
        );
        // Only guards: no change of the table beyond the guarded operations.
        assert!(!s.ops.changes_table());
        // Not a guard: ADD PRIMARY KEY IF NOT EXISTS is left as it is (sqlparser's 1064).
        assert!(split("ALTER TABLE t ADD PRIMARY KEY IF NOT EXISTS (a)").is_none());
    }

    #[test]
    fn other_statements_are_not_ours_and_bad_ones_answer_as_mariadb() {
        for sql in [
            "ALTER TABLE t ADD COLUMN c INT",
            "ALTER TABLE t COMMENT",
            "ALTER TABLE t RENAME INDEX a TO",
            "ALTER USER u",
            "ALTER DATABASE d COMMENT 'x'",
            "SELECT 1",
        ] {
            assert!(split(sql).is_none(), "{sql}");
        }
        let code = |sql: &str| match split(sql) {
            Some(Err(e)) => e.code,
            other => panic!("{sql}: {other:?}"),
        };
        assert_eq!(code("ALTER TABLE t ENGINE=Foo"), 1286);
        assert_eq!(code("ALTER TABLE t ENGINE=myisam"), 1235);
        assert_eq!(code("ALTER TABLE t RENAME INDEX PRIMARY TO x"), 1064);
        assert_eq!(code("ALTER TABLE t RENAME KEY a TO PRIMARY"), 1064);
        assert_eq!(code("ALTER TABLE t FORCE,, ADD c INT"), 1064);
    }
}
