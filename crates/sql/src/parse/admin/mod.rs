//! Hand parser for the administration statements sqlparser does not know (or knows only in
//! part): SHOW ..., DESCRIBE, SET (system and user variables, NAMES, TRANSACTION, PASSWORD),
//! FLUSH, PURGE BINARY LOGS, RESET MASTER, CREATE/DROP/ALTER USER, GRANT, REVOKE, SHUTDOWN, KILL,
//! BACKUP STAGE.
//!
//! Contract: [`parse`] returns `None` when the statement is not one of these (the caller then
//! hands it to sqlparser), `Some(Err(1064))` when it clearly is one but is malformed, and
//! `Some(Ok(stmt))` otherwise. Keywords are case-insensitive; identifiers may be backquoted;
//! strings take either quote kind with backslash escapes and doubled quotes. The lexer never
//! panics on any input (it works on chars, never slices inside one).
//!
//! The value of a `SET` assignment is kept as its source text (`ExprText`) and evaluated by
//! `admin::eval_set_value`, so expressions keep whatever the expression evaluator supports.
//!
//! Families, one file each: `show` (SHOW, DESCRIBE), `set` (SET), `account` (CREATE / DROP /
//! ALTER USER, GRANT, REVOKE), `binlog` (PURGE, RESET MASTER), `server` (FLUSH, SHUTDOWN,
//! KILL, LOCK / UNLOCK TABLES, BACKUP STAGE, ALTER TABLE ... DISABLE/ENABLE KEYS), `maintenance`
//! (CHECKSUM TABLE), `replication` (CHANGE MASTER TO, START / STOP / RESET
//! SLAVE, SHOW SLAVE STATUS; SHOW SLAVE HOSTS is a SHOW form, in `show`). This module keeps the statement tree ([`Stmt`]), the token cursor the families share and the dispatch.
//!
//! Invariants: [`parse`] answers `Some` only for a statement whose first word
//! [`maybe_admin`] accepts; its errors are 1064 (syntax), 1235 (a form onelog refuses), 1524
//! (an authentication plugin onelog does not have) or 4149 (an unknown BACKUP STAGE, which
//! MariaDB's grammar refuses too), asserted at the dispatch.

mod account;
mod binlog;
mod maintenance;
mod replication;
mod server;
mod set;
mod show;

use crate::error::SqlError;
use crate::parse::lexer::{lex, skip_blank, word_at, Tok, Token};
use crate::sysvar::registry::VarScope;
use onelog_protocol::errors;

pub(crate) use set::split_sysvar;

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

/// The stages of `BACKUP STAGE`, in MariaDB's order (a session moves only forward).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum BackupStage {
    Start,
    Flush,
    BlockDdl,
    BlockCommit,
    End,
}

impl BackupStage {
    /// Every stage, in order.
    pub(crate) const ALL: [BackupStage; 5] = [
        BackupStage::Start,
        BackupStage::Flush,
        BackupStage::BlockDdl,
        BackupStage::BlockCommit,
        BackupStage::End,
    ];

    /// The name MariaDB's messages use.
    pub(crate) fn name(self) -> &'static str {
        match self {
            BackupStage::Start => "START",
            BackupStage::Flush => "FLUSH",
            BackupStage::BlockDdl => "BLOCK_DDL",
            BackupStage::BlockCommit => "BLOCK_COMMIT",
            BackupStage::End => "END",
        }
    }
}

/// The SHOW statements that list objects onelog does not have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NoObjects {
    ProcedureStatus,
    FunctionStatus,
    /// `SHOW PACKAGE [BODY] STATUS` (MariaDB's Oracle-mode packages; mariadb-dump --routines
    /// asks for them): PROCEDURE STATUS's columns.
    PackageStatus,
    Triggers,
    Events,
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
        /// `SHOW CREATE DATABASE IF NOT EXISTS`: printed as `/*!32312 IF NOT EXISTS*/`.
        if_not_exists: bool,
    },
    /// `SHOW TABLE STATUS [{FROM | IN} db] [LIKE | WHERE]`.
    ShowTableStatus {
        db: Option<String>,
        filter: Filter,
    },
    /// `SHOW OPEN TABLES [{FROM | IN} db] [LIKE | WHERE]`.
    ShowOpenTables {
        db: Option<String>,
        filter: Filter,
    },
    /// SHOW {PROCEDURE | FUNCTION} STATUS, SHOW TRIGGERS, SHOW EVENTS: onelog has no stored
    /// routines, triggers or events; the database named is still checked.
    ShowNoObjects {
        what: NoObjects,
        db: Option<String>,
        filter: Filter,
    },
    /// `SHOW ENGINE name {STATUS | MUTEX | LOGS}`.
    ShowEngine {
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
    /// `SHOW SLAVE HOSTS` / `SHOW REPLICA HOSTS`.
    ShowSlaveHosts,
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
    /// `SHOW CREATE USER [u | CURRENT_USER[()]]`.
    ShowCreateUser {
        user: UserName,
    },
    FlushBinaryLogs,
    /// FLUSH with LOGS (which rotates the binary log and reopens the query logs, as MariaDB's),
    /// GENERAL / SLOW LOGS (the query logs) or STATUS (the session's status counters).
    FlushLogsStatus {
        binary: bool,
        query_logs: bool,
        status: bool,
    },
    /// FLUSH HOSTS / USER_RESOURCES / QUERY CACHE / THREADS ...: nothing to do for onelog.
    FlushNoop,
    /// FLUSH with PRIVILEGES among its forms (`FLUSH PRIVILEGES, STATUS`): refused in
    /// locked-tables mode as MariaDB (it reloads the grant tables), then the other forms
    /// (`FlushNoop` when there is none).
    FlushPrivileges(Box<Stmt>),
    /// `UNLOCK TABLES`: releases the session's table locks (LOCK TABLES, FLUSH TABLES t WITH
    /// READ LOCK) and its global read lock (FLUSH TABLES WITH READ LOCK); it commits the open
    /// transaction only when the session held table locks, as MariaDB
    /// (`execute::admin::table_lock`).
    UnlockTables,
    /// `LOCK TABLE[S] t [[AS] alias] mode, ...` (`execute::admin::table_lock`).
    LockTables(Vec<LockItem>),
    /// `FLUSH TABLES [t, ...]`: nothing to flush (no table cache), but under LOCK TABLES the
    /// tables (all locked ones without a list) must be locked for WRITE (1100, 1099).
    FlushTables(Vec<(Option<String>, String)>),
    /// `FLUSH TABLES t, ... WITH READ LOCK` (tables: LOCK TABLES t READ, ...) or, without
    /// tables, `FLUSH TABLES WITH READ LOCK` (the global read lock).
    FlushTablesReadLock(Vec<(Option<String>, String)>),
    /// `FLUSH TABLES t, ... FOR EXPORT`: refused (onelog has no tablespace files).
    FlushTablesForExport,
    /// `ALTER TABLE t {DISABLE | ENABLE} KEYS`: InnoDB has no such option (note 1031), as for
    /// every onelog table.
    AlterKeys {
        db: Option<String>,
        table: String,
    },
    PurgeTo(String),
    /// `PURGE BINARY LOGS BEFORE expr` (the expression's source text).
    PurgeBefore(String),
    ResetMaster,
    Set(Vec<Assignment>),
    SetNames {
        charset: Option<String>,
        collate: Option<String>,
    },
    SetTransaction {
        global: bool,
        /// No GLOBAL / SESSION: MariaDB applies it to the next transaction only.
        next_only: bool,
        isolation: Option<String>,
        read_only: Option<bool>,
    },
    SetPassword {
        user: UserName,
        password: Password,
        /// Assignments after it in the same SET (`mariadb-admin password` sends
        /// `set password='*HASH',sql_log_off=0`), run after the password is set.
        then: Vec<Assignment>,
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
    /// `BACKUP STAGE stage`.
    BackupStage(BackupStage),
    Kill {
        query_only: bool,
        id: u64,
    },
    /// `CHANGE MASTER TO ...` (the options given).
    ChangeMaster(onelog_replication::replica::ChangeMaster),
    /// `START SLAVE [threads] [UNTIL MASTER_GTID_POS = 'pos']` (`until` unparsed: its errors
    /// depend on the replica's state).
    StartSlave {
        threads: onelog_replication::replica::control::Threads,
        until: Option<String>,
    },
    StopSlave {
        threads: onelog_replication::replica::control::Threads,
    },
    ResetSlave {
        all: bool,
    },
    /// `SHOW SLAVE STATUS` (`all`: `SHOW ALL SLAVES STATUS`).
    ShowSlaveStatus {
        all: bool,
    },
    /// `CHECKSUM TABLE t [, t ...] [QUICK | EXTENDED]` (`maintenance`).
    Checksum {
        tables: Vec<(Option<String>, String)>,
        quick: bool,
    },
    /// `ANALYZE | CHECK | OPTIMIZE | REPAIR TABLE t [, t ...]` and their options
    /// (`maintenance`); `op` is the lower-case verb MariaDB's result rows name.
    TableMaintenance {
        op: &'static str,
        tables: Vec<(Option<String>, String)>,
        for_upgrade: bool,
    },
}

struct P<'a> {
    sql: &'a str,
    t: Vec<Token>,
    i: usize,
}

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

type R<T> = Result<T, SqlError>;

/// One table of a LOCK TABLES statement.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LockItem {
    pub db: Option<String>,
    pub table: String,
    pub alias: Option<String>,
    pub mode: crate::table_locks::LockMode,
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
        "SHUTDOWN", "KILL", "UNLOCK", "CHANGE", "START", "STOP", "BACKUP", "LOCK", "CHECKSUM",
        "ANALYZE", "CHECK", "OPTIMIZE", "REPAIR",
    ]
    .iter()
    .any(|k| is(k))
    {
        return true;
    }
    if is("CREATE") || is("DROP") || is("ALTER") {
        let (w2, _) = word_at(b, skip_blank(b, j));
        return w2.eq_ignore_ascii_case(b"USER") || (is("ALTER") && ends_with_keys(b));
    }
    false
}

/// Whether the statement's last word is `KEYS` (`ALTER TABLE t DISABLE KEYS`).
fn ends_with_keys(b: &[u8]) -> bool {
    let end = b.len()
        - b.iter()
            .rev()
            .take_while(|c| c.is_ascii_whitespace() || **c == b';')
            .count();
    end >= 5
        && b[end - 4..end].eq_ignore_ascii_case(b"KEYS")
        && !(b[end - 5].is_ascii_alphanumeric() || b[end - 5] == b'_')
}

/// Parses one statement (see the module docs for the contract).
pub(crate) fn parse(sql: &str) -> Option<R<Stmt>> {
    let r = dispatch(sql);
    debug_assert!(
        r.is_none() || maybe_admin(sql),
        "a statement maybe_admin rejects parsed as ours"
    );
    debug_assert!(
        !matches!(&r, Some(Err(e)) if ![1064, 1235, 1524, 4149].contains(&e.code)),
        "an administration parse error outside the contract: {r:?}"
    );
    r
}

/// [`parse`]'s work: the first-word check, the lexer and the family dispatch.
fn dispatch(sql: &str) -> Option<R<Stmt>> {
    if !maybe_admin(sql) {
        return None;
    }
    let t = lex(sql)?;
    let mut p = P { sql, t, i: 0 };
    let Some(Tok::Word(first)) = p.peek().cloned() else {
        return None;
    };
    let first = first.to_ascii_uppercase();
    let user = p.is_kw_at(1, "USER");
    let words = match first.as_str() {
        "CREATE" | "DROP" | "ALTER" if user => 2,
        "DESCRIBE" | "DESC" | "EXPLAIN" => 0,
        _ => 1,
    };
    p.i += words;
    match first.as_str() {
        "SHOW" => show::show(&mut p),
        "DESCRIBE" | "DESC" | "EXPLAIN" => show::describe(&mut p),
        "SET" => set::set(&mut p),
        "FLUSH" => Some(server::flush(&mut p)),
        "SHUTDOWN" => Some(p.expect_end().map(|_| Stmt::Shutdown)),
        "KILL" => Some(server::kill(&mut p)),
        "UNLOCK" => Some(server::unlock(&mut p)),
        "LOCK" => Some(server::lock(&mut p)),
        "BACKUP" => server::backup(&mut p),
        "CHECKSUM" => Some(maintenance::checksum(&mut p)),
        "ANALYZE" | "CHECK" | "OPTIMIZE" | "REPAIR" => maintenance::table_op(&mut p, &first),
        "PURGE" => binlog::purge(&mut p),
        "RESET" => binlog::reset(&mut p).or_else(|| replication::reset(&mut p)),
        "CHANGE" => replication::change(&mut p),
        "START" => replication::start(&mut p),
        "STOP" => replication::stop(&mut p),
        "CREATE" if user => Some(account::create_user(&mut p)),
        "DROP" if user => Some(account::drop_user(&mut p)),
        "ALTER" if user => Some(account::alter_user(&mut p)),
        "ALTER" => server::alter_keys(&mut p),
        "GRANT" => Some(account::grant(&mut p)),
        "REVOKE" => Some(account::revoke(&mut p)),
        _ => None,
    }
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
        assert_eq!(ok("SHOW SLAVE HOSTS"), Stmt::ShowSlaveHosts);
        assert_eq!(ok("show replica hosts"), Stmt::ShowSlaveHosts);
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
                next_only: false,
                isolation: Some("READ-COMMITTED".into()),
                read_only: None
            }
        );
        assert_eq!(
            ok("SET PASSWORD FOR 'u'@'%' = PASSWORD('it''s')"),
            Stmt::SetPassword {
                user: Some(("u".into(), "%".into())),
                password: Password::Plain("it's".into()),
                then: vec![],
            }
        );
        assert_eq!(
            ok("SET PASSWORD = '*ABC'"),
            Stmt::SetPassword {
                user: None,
                password: Password::Hash("*ABC".into()),
                then: vec![],
            }
        );
        match ok("set password='*ABC',sql_log_off=0") {
            Stmt::SetPassword { then, .. } => assert_eq!(then.len(), 1),
            other => panic!("{other:?}"),
        }
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
        assert_eq!(
            ok("flush privileges"),
            Stmt::FlushPrivileges(Box::new(Stmt::FlushNoop))
        );
        assert_eq!(
            ok("FLUSH STATUS, PRIVILEGES"),
            Stmt::FlushPrivileges(Box::new(Stmt::FlushLogsStatus {
                binary: false,
                query_logs: false,
                status: true
            }))
        );
        assert_eq!(ok("FLUSH HOSTS"), Stmt::FlushNoop);
        assert_eq!(
            ok("FLUSH LOGS"),
            Stmt::FlushLogsStatus {
                binary: true,
                query_logs: true,
                status: false
            }
        );
        assert_eq!(
            ok("FLUSH STATUS, SLOW LOGS"),
            Stmt::FlushLogsStatus {
                binary: false,
                query_logs: true,
                status: true
            }
        );
        assert_eq!(ok("FLUSH LOCAL TABLES"), Stmt::FlushTables(vec![]));
        assert_eq!(
            ok("FLUSH TABLES t, d.u"),
            Stmt::FlushTables(vec![(None, "t".into()), (Some("d".into()), "u".into())])
        );
        assert_eq!(ok("UNLOCK TABLES"), Stmt::UnlockTables);
        assert_eq!(ok("unlock table"), Stmt::UnlockTables);
        use crate::table_locks::LockMode;
        let item = |db: Option<&str>, table: &str, alias: Option<&str>, mode| LockItem {
            db: db.map(str::to_string),
            table: table.to_string(),
            alias: alias.map(str::to_string),
            mode,
        };
        assert_eq!(
            ok("LOCK TABLES `t` READ /*!32311 LOCAL */"),
            Stmt::LockTables(vec![item(None, "t", None, LockMode::Read)])
        );
        assert_eq!(
            ok("lock table d.t as a read local, t b low_priority write, u write concurrent, v write"),
            Stmt::LockTables(vec![
                item(Some("d"), "t", Some("a"), LockMode::Read),
                item(None, "t", Some("b"), LockMode::Write),
                item(None, "u", None, LockMode::WriteConcurrent),
                item(None, "v", None, LockMode::Write),
            ])
        );
        for bad in [
            "LOCK TABLES",
            "LOCK TABLES t",
            "LOCK TABLES t READ,",
            "LOCK t READ",
        ] {
            assert_eq!(parse(bad).unwrap().unwrap_err().code, 1064, "{bad}");
        }
        assert_eq!(
            ok("FLUSH TABLES WITH READ LOCK"),
            Stmt::FlushTablesReadLock(vec![])
        );
        assert_eq!(
            ok("flush tables d.t, u with read lock"),
            Stmt::FlushTablesReadLock(vec![(Some("d".into()), "t".into()), (None, "u".into())])
        );
        assert_eq!(ok("FLUSH TABLES t FOR EXPORT"), Stmt::FlushTablesForExport);
        assert_eq!(
            parse("FLUSH TABLES FOR EXPORT").unwrap().unwrap_err().code,
            1064
        );
        assert_eq!(
            ok("ALTER TABLE `d`.`t` DISABLE KEYS ;"),
            Stmt::AlterKeys {
                db: Some("d".into()),
                table: "t".into()
            }
        );
        assert_eq!(
            ok("alter ignore table t enable keys"),
            Stmt::AlterKeys {
                db: None,
                table: "t".into()
            }
        );
        // Other ALTER TABLE forms, and ONLINE (MariaDB's 1845 here), are sqlparser's.
        for other in [
            "ALTER TABLE t ADD COLUMN keys INT",
            "ALTER TABLE t DISABLE KEYS, ADD COLUMN z INT",
            "ALTER ONLINE TABLE t DISABLE KEYS",
            "ALTER TABLE t ADD KEY k (a)",
        ] {
            assert!(parse(other).is_none(), "{other}");
        }
        assert_eq!(
            ok("PURGE BINARY LOGS TO 'binlog-000002.olog'"),
            Stmt::PurgeTo("binlog-000002.olog".into())
        );
        assert_eq!(ok("RESET MASTER"), Stmt::ResetMaster);
    }

    #[test]
    fn backup_stage_takes_mariadbs_stage_names() {
        assert_eq!(
            ok("BACKUP STAGE START"),
            Stmt::BackupStage(BackupStage::Start)
        );
        assert_eq!(
            ok("backup stage block_commit;"),
            Stmt::BackupStage(BackupStage::BlockCommit)
        );
        assert_eq!(
            ok("BACKUP STAGE `end`"),
            Stmt::BackupStage(BackupStage::End)
        );
        let e = parse("BACKUP STAGE FOO").unwrap().unwrap_err();
        assert_eq!(e.code, 4149);
        assert_eq!(
            e.message,
            "Unknown backup stage: 'FOO'. Stage should be one of START, FLUSH, BLOCK_DDL, BLOCK_COMMIT or END"
        );
        for bad in [
            "BACKUP STAGE",
            "BACKUP STAGE 'START'",
            "BACKUP STAGE START END",
        ] {
            assert_eq!(parse(bad).unwrap().unwrap_err().code, 1064, "{bad}");
        }
        assert!(parse("BACKUP LOCK t").is_none());
        assert!(
            BackupStage::Start < BackupStage::Flush && BackupStage::BlockCommit < BackupStage::End
        );
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
            "CHANGE MASTER ",
            "TO ",
            "MASTER_HOST=",
            "MASTER_HEARTBEAT_PERIOD=",
            "IGNORE_SERVER_IDS=(",
            "START SLAVE ",
            "STOP ALL SLAVES ",
            "IO_THREAD,",
            "UNTIL master_gtid_pos=",
            "RESET REPLICA ",
            "SHOW ALL SLAVES STATUS",
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
