//! The reload of `mysql`'s account tables from a dump: what a `mariadb-dump --all-databases`
//! of onelog sends for them when it is restored into onelog (`DROP TABLE IF EXISTS`,
//! `CREATE TABLE` with MariaDB's definition, `LOCK TABLES ... WRITE`, `ALTER TABLE ...
//! DISABLE KEYS`, `INSERT INTO ... VALUES`, `UNLOCK TABLES`, and for the view `user` `DROP
//! VIEW`, a stand-in `CREATE VIEW` and the final one), honoured with the effect MariaDB gives
//! it once it loads the restored tables (FLUSH PRIVILEGES or a restart).
//!
//! Owns the rules; the state is [`crate::context::Reload`] in the session's context:
//! - `DROP TABLE [IF EXISTS] mysql.t` of a table of [`RELOADABLE`] begins (or restarts) its
//!   reload: the rows it will hold are those the session inserts after creating it again;
//!   the catalogue is unchanged meanwhile (every session, this one included, keeps its
//!   privileges, as MariaDB's in-memory grants stay until FLUSH PRIVILEGES).
//! - `CREATE TABLE mysql.t` is taken only while `t` is dropped by this session's reload, and
//!   only with MariaDB 10.11's definition (`MysqlTable::create_sql`, compared token by
//!   token outside quotes); another definition is refused (1235).
//! - `INSERT INTO mysql.global_priv` / `mysql.db` rows (literals, all columns) are checked
//!   and staged at once: a row onelog cannot represent (a role, a locked or expired
//!   account, TLS requirements, resource limits, another plugin, a privilege onelog lacks)
//!   fails the statement, naming what is missing; nothing is dropped silently. Rows for
//!   the tables onelog keeps empty (table, column, routine and proxy privileges, roles,
//!   routines, events, functions, plugins, servers, `gtid_slave_pos`) are refused the same way.
//! - FLUSH PRIVILEGES, or the session's end ([`end_session`]), applies the reload: the
//!   accounts become the `global_priv` rows (each keeping its database grants unless `db` was
//!   reloaded too) and the database grants the `db` rows, as one logged catalogue change
//!   (`Engine::replace_accounts`), so it survives a restart. A table dropped and not created
//!   again makes FLUSH PRIVILEGES fail (1146, as MariaDB without the table) and the session's
//!   end abandon the reload (a line in the error log), as does a session that ends while it
//!   still holds a reloaded table's write lock (the dump was cut short).
//! - The view `user` cannot change (onelog computes it): `DROP VIEW` of it and the dump's
//!   stand-in are taken while its final `CREATE VIEW` with MariaDB's definition follows
//!   in the same session; another definition is refused (1235).
//!
//! Invariant: nothing here changes the catalogue but [`apply`]; a statement that fails
//! stages nothing.

use onelog_engine::{AccountDef, AuthMethods, GrantDef};
use onelog_protocol::errors;

use crate::context::{ExecContext, Reload};
use crate::error::SqlError;
use crate::expr::json::{self, Json};
use crate::mysqlschema::{self, MysqlTable};
use crate::output::Output;
use crate::parse::lexer::{self, Tok, Token};
use crate::privilege as p;

/// The first `version_id` of a `Priv` whose `access` bits MariaDB 10.11 reads as they are.
const CURRENT_LAYOUT_VERSION: i128 = 100_509;

/// The tables of `mysql` a dump's restore may drop, create again and fill: onelog serves rows
/// for `global_priv` and `db` (None) and keeps the others empty (what a row of one would
/// need).
const RELOADABLE: &[(&str, Option<&str>)] = &[
    ("global_priv", None),
    ("db", None),
    (
        "columns_priv",
        Some("column privileges (rows of mysql.columns_priv)"),
    ),
    (
        "tables_priv",
        Some("table privileges (rows of mysql.tables_priv)"),
    ),
    (
        "procs_priv",
        Some("routine privileges (rows of mysql.procs_priv)"),
    ),
    (
        "proxies_priv",
        Some("proxy privileges (rows of mysql.proxies_priv)"),
    ),
    ("roles_mapping", Some("roles (rows of mysql.roles_mapping)")),
    ("proc", Some("stored routines (rows of mysql.proc)")),
    ("event", Some("events (rows of mysql.event)")),
    ("func", Some("user-defined functions (rows of mysql.func)")),
    ("plugin", Some("plugins (rows of mysql.plugin)")),
    ("servers", Some("servers (rows of mysql.servers)")),
    (
        "gtid_slave_pos",
        Some("rows of mysql.gtid_slave_pos (SET GLOBAL gtid_slave_pos sets the position)"),
    ),
];

/// Runs `sql` when it is a statement of a reload (see the module docs); None leaves it to
/// the other paths. Cheap for every other statement: unless a reload runs or the current
/// database is `mysql`, only a statement starting with `DROP` is looked at.
pub(crate) fn try_execute(cx: &mut ExecContext, sql: &str) -> Option<Result<Output, SqlError>> {
    let in_mysql = cx.current_db.as_deref() == Some(mysqlschema::DATABASE);
    let head = sql.trim_start().as_bytes();
    let drop = head.len() >= 4 && head[..4].eq_ignore_ascii_case(b"DROP");
    if cx.reload.is_none() && !in_mysql && !drop {
        return None;
    }
    let text = crate::parse::strip_comments(sql);
    let text = text.trim().trim_end_matches(';').trim_end();
    let first = word(text, 0);
    if first.eq_ignore_ascii_case(b"DROP") {
        drop_statement(cx, text)
    } else if first.eq_ignore_ascii_case(b"CREATE") {
        create_statement(cx, text)
    } else if first.eq_ignore_ascii_case(b"INSERT") {
        insert(cx, text)
    } else {
        None
    }
}

/// The word at byte `at` of `s`, after blanks (empty when there is none).
fn word(s: &str, at: usize) -> &[u8] {
    let b = s.as_bytes();
    lexer::word_at(b, lexer::skip_blank(b, at.min(b.len()))).0
}

fn is_word(t: Option<&Token>, w: &str) -> bool {
    matches!(t.map(|t| &t.tok), Some(Tok::Word(x)) if x.eq_ignore_ascii_case(w))
}

/// A (database, table) name at `toks[i..]` and the index after it.
fn name_at(cx: &ExecContext, toks: &[Token], i: usize) -> Option<((String, String), usize)> {
    let part = |t: Option<&Token>| match t.map(|t| &t.tok) {
        Some(Tok::Word(w)) | Some(Tok::QIdent(w)) => Some(w.clone()),
        _ => None,
    };
    let a = part(toks.get(i))?;
    if matches!(toks.get(i + 1).map(|t| &t.tok), Some(Tok::Sym("."))) {
        let b = part(toks.get(i + 2))?;
        return Some(((a, b), i + 3));
    }
    let db = cx.current_db.clone()?;
    Some(((db, a), i + 1))
}

/// The reloadable table `name` of `mysql`, by MariaDB's spelling.
fn reloadable(db: &str, name: &str) -> Option<&'static str> {
    if !mysqlschema::is_database(db) {
        return None;
    }
    RELOADABLE.iter().map(|(t, _)| *t).find(|t| *t == name)
}

/// `DROP TABLE [IF EXISTS] mysql.t` (one table) and `DROP VIEW [IF EXISTS] mysql.user`.
fn drop_statement(cx: &mut ExecContext, text: &str) -> Option<Result<Output, SqlError>> {
    let toks = lexer::lex(text)?;
    let view = is_word(toks.get(1), "VIEW");
    if !view && !is_word(toks.get(1), "TABLE") {
        return None;
    }
    let if_exists = is_word(toks.get(2), "IF") && is_word(toks.get(3), "EXISTS");
    let ((db, table), end) = name_at(cx, &toks, if if_exists { 4 } else { 2 })?;
    if end != toks.len() || !mysqlschema::is_database(&db) {
        return None;
    }
    if table == "user" {
        return Some(drop_user_view(cx, view, if_exists));
    }
    let name = reloadable(&db, &table).filter(|_| !view)?;
    Some(begin(cx, name))
}

fn begin(cx: &mut ExecContext, name: &'static str) -> Result<Output, SqlError> {
    cx.warnings.clear();
    cx.check_table_privilege(mysqlschema::DATABASE, name, p::DROP)?;
    cx.commit()?;
    let reload = cx.reload.get_or_insert_with(Box::default);
    reload.tables.retain(|(t, _)| *t != name);
    reload.tables.push((name, false));
    match name {
        "global_priv" => reload.accounts.clear(),
        "db" => reload.db_grants.clear(),
        _ => {}
    }
    Ok(super::ok(0))
}

/// `DROP TABLE mysql.user` is MariaDB's 1965 (a note with IF EXISTS); `DROP VIEW` of it
/// begins its re-creation.
fn drop_user_view(cx: &mut ExecContext, view: bool, if_exists: bool) -> Result<Output, SqlError> {
    cx.warnings.clear();
    if !view {
        let e = SqlError::of(errors::ER_IT_IS_A_VIEW, "'mysql.user' is a view");
        if !if_exists {
            return Err(e);
        }
        cx.warnings.push(("Note".into(), e.code, e.message));
        return Ok(super::with_warnings(cx, super::ok(0)));
    }
    cx.check_table_privilege(mysqlschema::DATABASE, "user", p::DROP)?;
    cx.commit()?;
    cx.reload.get_or_insert_with(Box::default).user_view_dropped = true;
    Ok(super::ok(0))
}

/// `CREATE TABLE mysql.t (...)` while `t` is dropped by the reload; `CREATE VIEW mysql.user`
/// while the view is.
fn create_statement(cx: &mut ExecContext, text: &str) -> Option<Result<Output, SqlError>> {
    let reload = cx.reload.as_ref()?;
    let second = word(text, "CREATE".len());
    if let Some(open) = text
        .find('(')
        .filter(|_| second.eq_ignore_ascii_case(b"TABLE"))
    {
        let toks = lexer::lex(&text[..open])?;
        let at = if is_word(toks.get(2), "IF") { 5 } else { 2 };
        let ((db, table), end) = name_at(cx, &toks, at)?;
        let name = reloadable(&db, &table)?;
        let created = reload.tables.iter().find(|(t, _)| *t == name)?.1;
        if end != toks.len() {
            return None;
        }
        return Some(create_table(cx, name, created, &text[open..]));
    }
    if !reload.user_view_dropped {
        return None;
    }
    let as_at = lexer::top_level_word(text, "AS")?;
    let toks = lexer::lex(&text[..as_at])?;
    let view_at = toks.iter().position(|t| is_word(Some(t), "VIEW"))?;
    let ((db, table), end) = name_at(cx, &toks, view_at + 1)?;
    if end != toks.len() || !mysqlschema::is_database(&db) || table != "user" {
        return None;
    }
    Some(create_user_view(cx, &text[..as_at], &text[as_at + 2..]))
}

fn create_table(
    cx: &mut ExecContext,
    name: &'static str,
    created: bool,
    body: &str,
) -> Result<Output, SqlError> {
    cx.warnings.clear();
    cx.check_table_privilege(mysqlschema::DATABASE, name, p::CREATE)?;
    if created {
        return Err(SqlError::of(
            errors::ER_TABLE_EXISTS_ERROR,
            format!("Table '{name}' already exists"),
        ));
    }
    let ours = MysqlTable::named(name)?.create_sql();
    let ours = &ours[ours.find('(').unwrap_or(0)..];
    if squeeze(ours) != squeeze(body) {
        return Err(SqlError::unsupported(&format!(
            "a definition of mysql.{name} other than MariaDB 10.11's"
        )));
    }
    cx.commit()?;
    if let Some(r) = cx.reload.as_mut() {
        for t in r.tables.iter_mut().filter(|(t, _)| *t == name) {
            t.1 = true;
        }
    }
    Ok(super::ok(0))
}

/// `head AS select` for the view `user`: MariaDB's definition ends its re-creation; the
/// stand-in mariadb-dump writes first is taken too: `SELECT 1 AS Host, 1 AS User, ...` from
/// earlier 10.11 releases, `SELECT NULL AS Host, NULL AS User, ...` from 10.11.19's.
fn create_user_view(cx: &mut ExecContext, head: &str, select: &str) -> Result<Output, SqlError> {
    cx.warnings.clear();
    cx.check_table_privilege(mysqlschema::DATABASE, "user", p::CREATE_VIEW)?;
    let user = MysqlTable::named("user")?;
    let ours = user.create_sql();
    let (our_head, our_select) = ours.split_once(" AS ").unwrap_or((ours, ""));
    let (head, select) = (squeeze(head), squeeze(select));
    let stand_in = |value: &str| {
        let columns = user
            .spec_columns()
            .iter()
            .map(|c| format!("{value} AS `{}`", c.field))
            .collect::<Vec<_>>()
            .join(",");
        squeeze(&format!("SELECT {columns}"))
    };
    let is_stand_in = select == stand_in("1") || select == stand_in("NULL");
    let is_ours = select == squeeze(our_select)
        && head.trim_start_matches("CREATE") == squeeze(our_head).trim_start_matches("CREATE");
    if !is_stand_in && !is_ours {
        return Err(SqlError::unsupported(
            "a definition of the view mysql.user other than MariaDB 10.11's",
        ));
    }
    cx.commit()?;
    if let Some(r) = cx.reload.as_mut() {
        r.user_view_dropped = is_stand_in;
    }
    Ok(super::ok(0))
}

/// `s` without the blanks outside quotes, for comparing two texts of one definition.
fn squeeze(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\'' | b'"' | b'`' => {
                let end = lexer::skip_quoted(b, i).min(b.len());
                out.extend_from_slice(&b[i..end]);
                i = end.max(i + 1);
            }
            c if c.is_ascii_whitespace() => i += 1,
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `INSERT INTO mysql.t VALUES (...), ...` while `t` is reloaded.
fn insert(cx: &mut ExecContext, text: &str) -> Option<Result<Output, SqlError>> {
    let reload = cx.reload.as_ref()?;
    let toks = lexer::lex(text)?;
    if !is_word(toks.get(1), "INTO") {
        return None;
    }
    let ((db, table), at) = name_at(cx, &toks, 2)?;
    let name = reloadable(&db, &table)?;
    let created = reload.tables.iter().find(|(t, _)| *t == name)?.1;
    Some(insert_rows(cx, name, created, &toks[at..]))
}

fn insert_rows(
    cx: &mut ExecContext,
    name: &'static str,
    created: bool,
    toks: &[Token],
) -> Result<Output, SqlError> {
    cx.warnings.clear();
    cx.check_table_privilege(mysqlschema::DATABASE, name, p::INSERT)?;
    if !created {
        return Err(SqlError::no_such_table(mysqlschema::DATABASE, name));
    }
    let columns: Vec<&str> = MysqlTable::named(name)?
        .spec_columns()
        .iter()
        .map(|c| c.field)
        .collect();
    let rows = literal_rows(toks, &columns)?;
    if rows.is_empty() {
        return Ok(super::ok(0));
    }
    let n = rows.len() as u64;
    match name {
        "global_priv" => stage_accounts(cx, rows)?,
        "db" => stage_db_grants(cx, rows)?,
        _ => {
            let lacks = RELOADABLE
                .iter()
                .find_map(|(t, l)| l.filter(|_| *t == name));
            return Err(SqlError::unsupported(lacks.unwrap_or(name)));
        }
    }
    Ok(super::ok(n))
}

/// The rows of `[(cols)] VALUES (...), ...` in `columns`' order: each value a string, a
/// number or NULL (None). A column list must name every column once.
fn literal_rows(toks: &[Token], columns: &[&str]) -> Result<Vec<Vec<Option<String>>>, SqlError> {
    let bad = || SqlError::unsupported("an INSERT into a mysql account table other than a dump's");
    let mut i = 0;
    let mut order: Vec<usize> = (0..columns.len()).collect();
    if matches!(toks.first().map(|t| &t.tok), Some(Tok::Sym("("))) {
        order.clear();
        i = 1;
        loop {
            let name = match toks.get(i).map(|t| &t.tok) {
                Some(Tok::Word(w)) | Some(Tok::QIdent(w)) => w,
                _ => return Err(bad()),
            };
            let at = columns.iter().position(|c| c.eq_ignore_ascii_case(name));
            match at {
                Some(at) if !order.contains(&at) => order.push(at),
                _ => return Err(bad()),
            }
            i += 1;
            match toks.get(i).map(|t| &t.tok) {
                Some(Tok::Sym(",")) => i += 1,
                Some(Tok::Sym(")")) => break,
                _ => return Err(bad()),
            }
        }
        i += 1;
        if order.len() != columns.len() {
            return Err(bad());
        }
    }
    if !is_word(toks.get(i), "VALUES") && !is_word(toks.get(i), "VALUE") {
        return Err(bad());
    }
    i += 1;
    let mut rows = Vec::new();
    loop {
        if !matches!(toks.get(i).map(|t| &t.tok), Some(Tok::Sym("("))) {
            return Err(bad());
        }
        i += 1;
        let mut row = vec![None; columns.len()];
        for (k, &col) in order.iter().enumerate() {
            if k > 0 {
                if !matches!(toks.get(i).map(|t| &t.tok), Some(Tok::Sym(","))) {
                    return Err(column_count(rows.len() + 1));
                }
                i += 1;
            }
            row[col] = match toks.get(i).map(|t| &t.tok) {
                Some(Tok::Str(s)) | Some(Tok::Num(s)) => Some(s.clone()),
                Some(Tok::Word(w)) if w.eq_ignore_ascii_case("NULL") => None,
                _ => return Err(bad()),
            };
            i += 1;
        }
        if !matches!(toks.get(i).map(|t| &t.tok), Some(Tok::Sym(")"))) {
            return Err(column_count(rows.len() + 1));
        }
        i += 1;
        rows.push(row);
        match toks.get(i).map(|t| &t.tok) {
            None => return Ok(rows),
            Some(Tok::Sym(",")) => i += 1,
            _ => return Err(bad()),
        }
    }
}

fn column_count(row: usize) -> SqlError {
    SqlError::of(
        errors::ER_WRONG_VALUE_COUNT_ON_ROW,
        format!("Column count doesn't match value count at row {row}"),
    )
}

fn not_null(column: &str) -> SqlError {
    SqlError::of(
        errors::ER_BAD_NULL_ERROR,
        format!("Column '{column}' cannot be null"),
    )
}

fn duplicate(entry: &str) -> SqlError {
    SqlError::of(
        errors::ER_DUP_ENTRY,
        format!("Duplicate entry '{entry}' for key 'PRIMARY'"),
    )
}

/// `global_priv` rows (Host, User, Priv) become accounts.
fn stage_accounts(cx: &mut ExecContext, rows: Vec<Vec<Option<String>>>) -> Result<(), SqlError> {
    let mut staged = Vec::with_capacity(rows.len());
    for row in rows {
        let [host, user, priv_json] = <[Option<String>; 3]>::try_from(row)
            .map_err(|_| SqlError::unsupported("mysql.global_priv with other columns"))?;
        let host = host.ok_or_else(|| not_null("Host"))?;
        let user = user.ok_or_else(|| not_null("User"))?;
        let account = account_of(&user, &host, priv_json.as_deref().unwrap_or("{}"))?;
        staged.push(account);
    }
    let reload = cx.reload.get_or_insert_with(Box::default);
    for a in staged.iter() {
        let same = |b: &AccountDef| b.user == a.user && b.host == a.host;
        if reload.accounts.iter().any(same) || staged.iter().filter(|b| same(b)).count() > 1 {
            return Err(duplicate(&format!("{}-{}", a.host, a.user)));
        }
    }
    reload.accounts.extend(staged);
    Ok(())
}

/// The account a `global_priv` row describes; refused where onelog cannot represent it.
fn account_of(user: &str, host: &str, priv_json: &str) -> Result<AccountDef, SqlError> {
    let lacks = |what: &str| {
        SqlError::unsupported(&format!(
            "{what} (the mysql.global_priv row of '{user}'@'{host}')"
        ))
    };
    let Ok(Json::Obj(members)) = json::parse(priv_json.as_bytes()) else {
        return Err(SqlError::of(
            errors::ER_CONSTRAINT_FAILED,
            "CONSTRAINT `global_priv.Priv` failed for `mysql`.`global_priv`",
        ));
    };
    let num = |v: &Json| match v {
        Json::Num(n) => n.parse::<i128>().ok(),
        _ => None,
    };
    let string = |v: &Json| match v {
        Json::Str(s) => Some(json::unescape(s)),
        _ => None,
    };
    let (mut access, mut versioned) = (0u64, false);
    let (mut plugin, mut auth_string, mut socket_too) =
        (String::from("mysql_native_password"), String::new(), false);
    for (key, v) in &members {
        // None: a member onelog takes; Some(what): what the row needs that onelog lacks.
        let missing = match key.as_str() {
            "access" => match num(v).and_then(|n| u64::try_from(n).ok()) {
                Some(n) => {
                    access = n;
                    None
                }
                None => Some("an access value other than a bit set".to_string()),
            },
            // MariaDB reads `access` in its current layout only from rows written by 10.5.9 or
            // later (it moves bits of older rows on load: 10.4's layout, and REPLICATION SLAVE
            // gaining SLAVE MONITOR before 10.5.9).
            "version_id" => {
                versioned = num(v).is_some_and(|n| n >= CURRENT_LAYOUT_VERSION);
                None
            }
            "plugin" | "authentication_string" => match string(v) {
                Some(s) if key == "plugin" => {
                    plugin = s;
                    None
                }
                Some(s) => {
                    auth_string = s;
                    None
                }
                None => Some(format!("a non-string \"{key}\"")),
            },
            "auth_or" => {
                socket_too = is_socket_alternative(v);
                (!socket_too).then(|| "authentication alternatives other than unix_socket".into())
            }
            "password_last_changed" => {
                (num(v) == Some(0)).then(|| "password expiry (PASSWORD EXPIRE)".into())
            }
            "password_lifetime" => (num(v) != Some(-1)).then(|| "a password lifetime".into()),
            "account_locked" => {
                (v != &Json::Bool(false)).then(|| "locked accounts (ACCOUNT LOCK)".into())
            }
            "is_role" => (v != &Json::Bool(false)).then(|| "roles".into()),
            "default_role" => {
                (!string(v).is_some_and(|s| s.is_empty())).then(|| "default roles".into())
            }
            "ssl_type" | "ssl_cipher" | "x509_issuer" | "x509_subject" => {
                let none = num(v) == Some(0) || string(v).is_some_and(|s| s.is_empty());
                (!none).then(|| "TLS requirements (REQUIRE)".into())
            }
            "max_questions"
            | "max_updates"
            | "max_connections"
            | "max_user_connections"
            | "max_statement_time" => {
                let zero = matches!(v, Json::Num(n) if n.parse::<f64>() == Ok(0.0));
                (!zero).then(|| "resource limits (WITH MAX_...)".into())
            }
            other => Some(format!("the Priv member \"{other}\"")),
        };
        if let Some(what) = missing {
            return Err(lacks(&what));
        }
    }
    if !versioned && access != 0 && access != u64::MAX {
        return Err(lacks(
            "privileges in an older MariaDB's layout (a Priv without version_id, or one below 100509)",
        ));
    }
    let privileges = mysqlschema::privileges_of_access(access)
        .map_err(|bits| lacks(&format!("the privileges of access bits {bits:#x}")))?;
    let (auth_hash, auth) = match plugin.as_str() {
        "mysql_native_password" if auth_string == "invalid" => {
            if !socket_too {
                return Err(lacks(
                    "an account no login can use (authentication_string 'invalid')",
                ));
            }
            (
                Vec::new(),
                AuthMethods {
                    unix_socket: true,
                    no_password_login: true,
                },
            )
        }
        "mysql_native_password" => (
            super::accounts::parse_hash(&auth_string)?,
            AuthMethods {
                unix_socket: socket_too,
                no_password_login: false,
            },
        ),
        "unix_socket" if !socket_too && auth_string.is_empty() => (
            Vec::new(),
            AuthMethods {
                unix_socket: true,
                no_password_login: true,
            },
        ),
        other => return Err(lacks(&format!("the authentication plugin '{other}'"))),
    };
    let grants = match privileges {
        0 => Vec::new(),
        privileges => vec![GrantDef {
            scope: "*".into(),
            privileges,
        }],
    };
    Ok(AccountDef {
        user: user.to_string(),
        host: host.to_string(),
        auth_hash,
        auth,
        grants,
    })
}

/// `auth_or`'s `[{}, {"plugin": "unix_socket"}]`: the password or the unix socket.
fn is_socket_alternative(v: &Json) -> bool {
    let Json::Arr(items) = v else { return false };
    match items.as_slice() {
        [Json::Obj(first), Json::Obj(second)] => {
            first.is_empty()
                && second.iter().all(|(k, v)| match k.as_str() {
                    "plugin" => v == &Json::Str("unix_socket".into()),
                    "authentication_string" => v == &Json::Str(String::new()),
                    _ => false,
                })
                && second.iter().any(|(k, _)| k == "plugin")
        }
        _ => false,
    }
}

/// `db` rows (Host, Db, User, then a `Y`/`N` per privilege) become database grants.
fn stage_db_grants(cx: &mut ExecContext, rows: Vec<Vec<Option<String>>>) -> Result<(), SqlError> {
    let columns = MysqlTable::named("db")?.spec_columns();
    let mut staged = Vec::with_capacity(rows.len());
    for (n, row) in rows.into_iter().enumerate() {
        let mut vals = row.into_iter();
        let mut next = |col: &str| vals.next().flatten().ok_or_else(|| not_null(col));
        let (host, db, user) = (next("Host")?, next("Db")?, next("User")?);
        let mut privileges = 0;
        for (bit, c) in mysqlschema::DB_COLUMNS.iter().zip(&columns[3..]) {
            match next(c.field)?.as_str() {
                "Y" => privileges |= bit,
                "N" => {}
                _ => {
                    return Err(SqlError::of(
                        errors::WARN_DATA_TRUNCATED,
                        format!("Data truncated for column '{}' at row {}", c.field, n + 1),
                    ))
                }
            }
        }
        if privileges == 0 {
            continue;
        }
        staged.push((
            user,
            host,
            GrantDef {
                scope: db,
                privileges,
            },
        ));
    }
    let reload = cx.reload.get_or_insert_with(Box::default);
    for (i, (u, h, g)) in staged.iter().enumerate() {
        let same =
            |(u2, h2, g2): &(String, String, GrantDef)| u2 == u && h2 == h && g2.scope == g.scope;
        if reload.db_grants.iter().any(same) || staged[..i].iter().any(same) {
            return Err(duplicate(&format!("{h}-{}-{u}", g.scope)));
        }
    }
    reload.db_grants.extend(staged);
    Ok(())
}

/// Whether the session's reload has `mysql`.`table` created again (LOCK TABLES ... WRITE and
/// ALTER TABLE ... DISABLE/ENABLE KEYS take it then).
pub(crate) fn reloading(cx: &ExecContext, db: &str, table: &str) -> bool {
    mysqlschema::is_database(db)
        && cx
            .reload
            .as_ref()
            .is_some_and(|r| r.tables.iter().any(|(t, created)| *t == table && *created))
}

/// FLUSH PRIVILEGES: applies the session's reload, if any (see the module docs).
pub(crate) fn apply(cx: &mut ExecContext) -> Result<(), SqlError> {
    let Some(reload) = cx.reload.take() else {
        return Ok(());
    };
    if let Some((t, _)) = reload.tables.iter().find(|(_, created)| !created) {
        let e = SqlError::no_such_table(mysqlschema::DATABASE, t);
        cx.reload = Some(reload);
        return Err(e);
    }
    replace(cx, *reload)
}

/// The session ends (or is reset): its reload applies when complete, else is abandoned; the
/// error log says which, and why.
pub(crate) fn end_session(cx: &mut ExecContext) {
    let Some(reload) = cx.reload.take() else {
        return;
    };
    let locked = cx.table_locks.locked();
    let cut = reload.tables.iter().find(|(t, created)| {
        !created
            || locked
                .iter()
                .any(|l| mysqlschema::is_database(&l.db) && l.table == *t)
    });
    let report = |msg: String| cx.server.query_logs.error_log(&msg);
    if reload.user_view_dropped {
        report(format!(
            "connection {}: DROP VIEW mysql.user was not followed by its CREATE VIEW; the view stays as onelog serves it",
            cx.connection_id
        ));
    }
    if let Some((t, _)) = cut {
        report(format!(
            "connection {}: the reload of mysql.{t} was not finished when the session ended; the accounts stay as they were",
            cx.connection_id
        ));
        return;
    }
    if let Err(e) = replace(cx, *reload) {
        cx.server.query_logs.error_log(&format!(
            "connection {}: the reload of the mysql account tables failed at the session's end: {} ({})",
            cx.connection_id, e.message, e.code
        ));
    }
}

/// Makes the catalogue's accounts those of `reload` (one logged change).
fn replace(cx: &mut ExecContext, reload: Reload) -> Result<(), SqlError> {
    let reloaded = |name: &str| reload.tables.iter().any(|(t, _)| *t == name);
    let (global, db) = (reloaded("global_priv"), reloaded("db"));
    if !global && !db {
        return Ok(());
    }
    let Reload {
        accounts,
        db_grants,
        ..
    } = reload;
    cx.server
        .engine
        .replace_accounts("FLUSH PRIVILEGES", |current| {
            let mut out = if global { accounts } else { current.clone() };
            for a in out.iter_mut() {
                let kept: Vec<GrantDef> = match (
                    db,
                    current
                        .iter()
                        .find(|c| c.user == a.user && c.host == a.host),
                ) {
                    (false, Some(c)) => c
                        .grants
                        .iter()
                        .filter(|g| g.scope != "*")
                        .cloned()
                        .collect(),
                    _ => Vec::new(),
                };
                a.grants.retain(|g| g.scope == "*");
                a.grants.extend(kept);
            }
            for (user, host, grant) in db_grants {
                let Some(a) = out.iter_mut().find(|a| a.user == user && a.host == host) else {
                    return Err(onelog_engine::EngineError::AccountOperation {
                        op: "FLUSH PRIVILEGES",
                        user,
                        host,
                    });
                };
                a.grants.push(grant);
            }
            Ok(out)
        })
        .map_err(SqlError::from)?;
    Ok(())
}
