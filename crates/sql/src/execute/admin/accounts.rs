//! Accounts: `'user'@'host'` with a `mysql_native_password` hash and privileges.
//!
//! Storage: accounts live in the engine catalog (`onelog_engine::AccountDef`), so every
//! account statement is a DDL log record (a Query event plus the catalog change), replayed by
//! recovery and replicas and saved in checkpoints like tables. The logged statement text never
//! holds a plain password: `CREATE USER 'u'@'h' IDENTIFIED BY PASSWORD '*HASH'`,
//! `ALTER USER 'u'@'h' IDENTIFIED BY PASSWORD '*HASH'`.
//!
//! Password hash: SHA1(SHA1(password)) (20 bytes; empty = no password), printed as `*` and 40
//! upper-case hex digits.
//!
//! Host matching for login: `localhost` matches the client hosts `localhost`, `127.0.0.1`,
//! `::1` and the unix socket (empty host); `%` and `_` are wildcards; otherwise exact
//! (case-insensitive). Among the accounts of a user that match, the most specific wins (no
//! wildcard, then patterns, then `%`), like MariaDB's sort of `mysql.user`.
//!
//! Privileges: a bit set per scope (`*.*` or `db.*`); the names are MariaDB's. `ALL` is every
//! privilege of the scope. Enforcement: statements check through the session's
//! [`PrivCache`] (refreshed when the catalog changes; a fast path for accounts holding what is
//! needed globally): table statements at compile time (SELECT; INSERT, +DELETE for REPLACE,
//! +UPDATE for ON DUPLICATE KEY UPDATE; UPDATE/DELETE, +SELECT with a WHERE clause; CREATE,
//! DROP, TRUNCATE (DROP), CREATE/DROP INDEX (INDEX), ALTER (ALTER, then INSERT and CREATE))
//! fail with 1142; CREATE/DROP DATABASE (CREATE/DROP) and USE (any database privilege) with
//! 1044. Column-level checks (SELECT on the columns an UPDATE's SET reads) are not done.
//! A session that logged in with an account and whose account was dropped holds nothing;
//! sessions of users without any account at login (embedded use) are not checked.
//!
//! Authentication methods ([`AuthMethods`]): a plain account checks `mysql_native_password`
//! against its hash (empty hash: empty password). `unix_socket` accounts also admit a unix
//! socket peer running as the server's OS user or as OS root (the protocol layer checks the
//! peer credentials); with `no_password_login` (MariaDB's `USING 'invalid'`) they admit
//! nothing else. Setting a password (`SET PASSWORD`, `ALTER USER ... IDENTIFIED BY`) keeps
//! `unix_socket` and enables the password (MariaDB's `VIA unix_socket OR
//! mysql_native_password`).
//!
//! Bootstrap: on a database without any account, `root@localhost` is created with ALL
//! PRIVILEGES ON *.* WITH GRANT OPTION, authenticated `VIA unix_socket` only
//! ([`RootAuth::Socket`], MariaDB 10.4+'s default) or without a password
//! ([`RootAuth::Normal`], `--auth-root-authentication-method=normal`, for test setups).
//!
//! Password hashes are shown (SHOW GRANTS, SHOW CREATE USER) only to accounts that may read
//! `mysql.user` (SELECT on `*.*` or on `mysql`), as in MariaDB; SHOW GRANTS for another
//! account needs the same privilege (1044 on `mysql` otherwise).

use onelog_protocol::errors;
use std::sync::{Arc, OnceLock};

use onelog_engine::{AccountDef, AuthMethods, Catalog, Engine, GrantDef};
use sha1::{Digest, Sha1};

use crate::error::SqlError;
use crate::parse::admin::{Password, PrivName};
use crate::server::{Account, RootAuth, Server};
use crate::session::Session;

pub const SELECT: u64 = 1 << 0;
pub const INSERT: u64 = 1 << 1;
pub const UPDATE: u64 = 1 << 2;
pub const DELETE: u64 = 1 << 3;
pub const CREATE: u64 = 1 << 4;
pub const DROP: u64 = 1 << 5;
pub const RELOAD: u64 = 1 << 6;
pub const SHUTDOWN: u64 = 1 << 7;
pub const PROCESS: u64 = 1 << 8;
pub const FILE: u64 = 1 << 9;
pub const REFERENCES: u64 = 1 << 10;
pub const INDEX: u64 = 1 << 11;
pub const ALTER: u64 = 1 << 12;
pub const SHOW_DATABASES: u64 = 1 << 13;
pub const SUPER: u64 = 1 << 14;
pub const CREATE_TEMPORARY_TABLES: u64 = 1 << 15;
pub const LOCK_TABLES: u64 = 1 << 16;
pub const EXECUTE: u64 = 1 << 17;
pub const REPLICATION_SLAVE: u64 = 1 << 18;
pub const BINLOG_MONITOR: u64 = 1 << 19;
pub const CREATE_VIEW: u64 = 1 << 20;
pub const SHOW_VIEW: u64 = 1 << 21;
pub const CREATE_ROUTINE: u64 = 1 << 22;
pub const ALTER_ROUTINE: u64 = 1 << 23;
pub const CREATE_USER: u64 = 1 << 24;
pub const EVENT: u64 = 1 << 25;
pub const TRIGGER: u64 = 1 << 26;
pub const DELETE_HISTORY: u64 = 1 << 27;
/// MariaDB 10.5+'s CONNECTION ADMIN: KILL of other accounts' connections and the connection
/// reserved above `max_connections`. SUPER keeps both, as in MariaDB 10.11
/// (`PRIV_KILL_OTHER_USER_PROCESS`, `PRIV_IGNORE_MAX_CONNECTIONS`).
pub const CONNECTION_ADMIN: u64 = 1 << 28;
/// What lets an account kill others' connections and take the reserved connection.
pub const KILL_OTHERS: u64 = SUPER | CONNECTION_ADMIN;
/// WITH GRANT OPTION.
pub const GRANT_OPTION: u64 = 1 << 40;

/// Privilege names in MariaDB's SHOW GRANTS order, with their bits.
const NAMES: &[(&str, u64)] = &[
    ("SELECT", SELECT),
    ("INSERT", INSERT),
    ("UPDATE", UPDATE),
    ("DELETE", DELETE),
    ("CREATE", CREATE),
    ("DROP", DROP),
    ("RELOAD", RELOAD),
    ("SHUTDOWN", SHUTDOWN),
    ("PROCESS", PROCESS),
    ("FILE", FILE),
    ("REFERENCES", REFERENCES),
    ("INDEX", INDEX),
    ("ALTER", ALTER),
    ("SHOW DATABASES", SHOW_DATABASES),
    ("SUPER", SUPER),
    ("CREATE TEMPORARY TABLES", CREATE_TEMPORARY_TABLES),
    ("LOCK TABLES", LOCK_TABLES),
    ("EXECUTE", EXECUTE),
    ("REPLICATION SLAVE", REPLICATION_SLAVE),
    ("BINLOG MONITOR", BINLOG_MONITOR),
    ("CREATE VIEW", CREATE_VIEW),
    ("SHOW VIEW", SHOW_VIEW),
    ("CREATE ROUTINE", CREATE_ROUTINE),
    ("ALTER ROUTINE", ALTER_ROUTINE),
    ("CREATE USER", CREATE_USER),
    ("EVENT", EVENT),
    ("TRIGGER", TRIGGER),
    ("DELETE HISTORY", DELETE_HISTORY),
    ("CONNECTION ADMIN", CONNECTION_ADMIN),
];

/// Every privilege that exists at `*.*`.
/// (A data directory bootstrapped before CONNECTION ADMIN existed keeps its root's grants as
/// they were: SHOW GRANTS lists them one by one; SUPER still does what CONNECTION ADMIN does.)
pub const ALL_GLOBAL: u64 = (1 << 29) - 1;
/// Every privilege that exists at `db.*`.
pub const ALL_DB: u64 = SELECT
    | INSERT
    | UPDATE
    | DELETE
    | CREATE
    | DROP
    | REFERENCES
    | INDEX
    | ALTER
    | CREATE_TEMPORARY_TABLES
    | LOCK_TABLES
    | EXECUTE
    | CREATE_VIEW
    | SHOW_VIEW
    | CREATE_ROUTINE
    | ALTER_ROUTINE
    | EVENT
    | TRIGGER
    | DELETE_HISTORY;

/// The bit of a privilege name (upper case, words separated by one space). `REPLICATION
/// CLIENT` is MariaDB's old name of `BINLOG MONITOR`.
pub(crate) fn privilege_bit(name: &str) -> Option<u64> {
    if name == "REPLICATION CLIENT" {
        return Some(BINLOG_MONITOR);
    }
    NAMES.iter().find(|(n, _)| *n == name).map(|(_, b)| *b)
}

/// The account registry's handle on the engine (set by [`bootstrap`]).
#[derive(Default)]
pub struct Accounts {
    engine: OnceLock<Arc<Engine>>,
}

impl std::fmt::Debug for Accounts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Accounts")
            .field("bootstrapped", &self.engine.get().is_some())
            .finish()
    }
}

impl Accounts {
    /// The account `user` logs in with from `host` (see module docs), if any.
    pub fn lookup(&self, user: &str, host: &str) -> Option<Account> {
        let engine = self.engine.get()?;
        best_match(engine, user, host).map(|a| Account {
            user: a.user.clone(),
            host: a.host.clone(),
            auth_hash: a.auth_hash.clone(),
            unix_socket: a.auth.unix_socket,
            password_login: !a.auth.no_password_login,
        })
    }

    /// Whether the account `user` logs in with from `host` holds CONNECTION ADMIN or SUPER
    /// globally.
    pub fn is_connection_admin(&self, user: &str, host: &str) -> bool {
        self.engine
            .get()
            .and_then(|e| best_match(e, user, host))
            .is_some_and(|a| global_grants(&a) & KILL_OTHERS != 0)
    }

    /// True when `root@localhost` exists and logs in with an empty password.
    pub fn root_has_no_password(&self) -> bool {
        self.engine.get().is_some_and(|e| {
            e.catalog()
                .account("root", "localhost")
                .is_some_and(|a| a.auth_hash.is_empty() && !a.auth.no_password_login)
        })
    }
}

/// Connects the registry to the engine and creates `root@localhost` on a database without
/// accounts.
pub fn bootstrap(server: &Server) -> Result<(), SqlError> {
    let _ = server.accounts.engine.set(server.engine.clone());
    if server.engine.catalog().accounts().next().is_some() {
        return Ok(());
    }
    let socket = server.config.root_auth == RootAuth::Socket;
    let root = AccountDef {
        user: "root".into(),
        host: "localhost".into(),
        auth_hash: Vec::new(),
        auth: AuthMethods {
            unix_socket: socket,
            no_password_login: socket,
        },
        grants: vec![GrantDef {
            scope: "*".into(),
            privileges: ALL_GLOBAL | GRANT_OPTION,
        }],
    };
    let sql = if socket {
        "CREATE USER IF NOT EXISTS 'root'@'localhost' IDENTIFIED VIA unix_socket"
    } else {
        "CREATE USER IF NOT EXISTS 'root'@'localhost'"
    };
    server.engine.create_account(root, true, sql)?;
    Ok(())
}

/// [`Accounts::lookup`] for callers holding the server.
pub fn lookup(server: &Server, user: &str, host: &str) -> Option<Account> {
    server.accounts.lookup(user, host)
}

/// Whether the account host pattern `pattern` admits a client from `host`.
pub(crate) fn host_matches(pattern: &str, host: &str) -> bool {
    if pattern.eq_ignore_ascii_case("localhost") {
        return matches!(host, "" | "localhost" | "127.0.0.1" | "::1")
            || host.eq_ignore_ascii_case("localhost");
    }
    let like = crate::parse::admin::like;
    // The protocol layer names loopback peers "localhost"; accounts for the loopback
    // addresses admit them too.
    like(pattern, host)
        || (host.eq_ignore_ascii_case("localhost")
            && (like(pattern, "127.0.0.1") || like(pattern, "::1")))
}

fn specificity(pattern: &str) -> u8 {
    if pattern == "%" {
        0
    } else if pattern.contains(['%', '_']) {
        1
    } else {
        2
    }
}

fn best_match(engine: &Engine, user: &str, host: &str) -> Option<Arc<AccountDef>> {
    best_match_in(&engine.catalog(), user, host)
}

fn best_match_in(cat: &Catalog, user: &str, host: &str) -> Option<Arc<AccountDef>> {
    cat.accounts()
        .filter(|a| a.user == user && host_matches(&a.host, host))
        .max_by_key(|a| specificity(&a.host))
        .cloned()
}

/// SHA1(SHA1(password)).
pub fn native_hash(password: &str) -> Vec<u8> {
    let once = Sha1::digest(password.as_bytes());
    Sha1::digest(once.as_slice()).to_vec()
}

/// `*` + 40 upper-case hex digits (empty for no password).
pub fn hash_text(hash: &[u8]) -> String {
    if hash.is_empty() {
        return String::new();
    }
    let mut s = String::with_capacity(41);
    s.push('*');
    for b in hash {
        s.push_str(&format!("{b:02X}"));
    }
    s
}

/// Parses `*HEX40` into the 20-byte hash (empty string: no password).
fn parse_hash(text: &str) -> Result<Vec<u8>, SqlError> {
    if text.is_empty() {
        return Ok(Vec::new());
    }
    let bad = || {
        SqlError::of(
            errors::ER_PASSWD_LENGTH,
            "Password hash should be a 41-digit hexadecimal number",
        )
    };
    let hex = text.strip_prefix('*').ok_or_else(bad)?;
    if hex.len() != 40 || !hex.is_ascii() {
        return Err(bad());
    }
    (0..20)
        .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).map_err(|_| bad()))
        .collect()
}

fn password_hash(pw: &Password) -> Result<Option<Vec<u8>>, SqlError> {
    Ok(match pw {
        Password::None => None,
        Password::Plain(p) if p.is_empty() => Some(Vec::new()),
        Password::Plain(p) => Some(native_hash(p)),
        Password::Hash(h) => Some(parse_hash(h)?),
    })
}

/// A string literal for logged statement text.
pub(crate) fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for c in s.chars() {
        match c {
            '\'' => out.push_str("''"),
            '\\' => out.push_str("\\\\"),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

fn user_text(user: &str, host: &str) -> String {
    format!("{}@{}", quote(user), quote(host))
}

fn identified_text(hash: &[u8]) -> String {
    if hash.is_empty() {
        String::new()
    } else {
        format!(" IDENTIFIED BY PASSWORD '{}'", hash_text(hash))
    }
}

/// The account the session is logged in as (its user and the host pattern that admitted it).
pub(crate) fn current_account(session: &Session) -> Option<(String, String)> {
    best_match(&session.server.engine, &session.user, &session.host)
        .map(|a| (a.user.clone(), a.host.clone()))
}

/// The privileges `session` holds on `db` (global grants included).
pub(crate) fn privileges_on(session: &Session, db: &str) -> u64 {
    match best_match(&session.server.engine, &session.user, &session.host) {
        None => 0,
        Some(a) => a
            .grants
            .iter()
            .filter(|g| g.scope == "*" || g.scope == db)
            .fold(0, |acc, g| acc | g.privileges),
    }
}

/// Fails with 1044 (`table` None) or 1142 unless the session holds every bit of `need` on
/// `db`. Sessions of users that had no account when they logged in (embedded use) are not
/// checked; a session whose account was dropped since holds nothing.
///
/// This looks the account up in the latest catalog; statements use the session's cached
/// [`PrivCache`] instead (`Session::check_table_privilege`).
pub fn check_privilege(
    session: &Session,
    db: &str,
    table: Option<&str>,
    need: u64,
) -> Result<(), SqlError> {
    let account = best_match(&session.server.engine, &session.user, &session.host);
    if account.is_none() && !session.privs.enforce {
        return Ok(());
    }
    let have = account.as_deref().map_or(0, |a| grants_on(a, db));
    if have & need == need {
        return Ok(());
    }
    let host = account
        .as_deref()
        .map_or(session.host.as_str(), |a| a.host.as_str());
    Err(match table {
        None => db_denied(&session.user, host, db),
        Some(t) => table_denied(&session.user, &session.host, db, t, need & !have),
    })
}

/// The privileges `account` holds on `db` (global grants included).
fn grants_on(account: &AccountDef, db: &str) -> u64 {
    account
        .grants
        .iter()
        .filter(|g| g.scope == "*" || g.scope == db)
        .fold(0, |acc, g| acc | g.privileges)
}

/// 1044 `ER_DBACCESS_DENIED_ERROR`; `host` is the account's host pattern (MariaDB's
/// `priv_host`).
pub(crate) fn db_denied(user: &str, host: &str, db: &str) -> SqlError {
    SqlError::of(
        errors::ER_DBACCESS_DENIED_ERROR,
        format!("Access denied for user '{user}'@'{host}' to database '{db}'"),
    )
}

/// 1142 `ER_TABLEACCESS_DENIED_ERROR` (MariaDB 10.11 wording: the missing privileges'
/// names joined by commas, the client's host, the table as `` `db`.`t` ``).
pub(crate) fn table_denied(
    user: &str,
    host: &str,
    db: &str,
    table: &str,
    missing: u64,
) -> SqlError {
    let mut names = String::new();
    for (n, b) in NAMES {
        if missing & b != 0 {
            if !names.is_empty() {
                names.push(',');
            }
            names.push_str(n);
        }
    }
    if names.is_empty() {
        names.push_str("ALL");
    }
    let host = if host.is_empty() { "localhost" } else { host };
    SqlError::of(
        errors::ER_TABLEACCESS_DENIED_ERROR,
        format!(
            "{names} command denied to user '{user}'@'{host}' for table `{}`.`{}`",
            db.replace('`', "``"),
            table.replace('`', "``")
        ),
    )
}

/// A session's privileges, cached per catalog version so that the per-statement check costs
/// a pointer comparison (and nothing more for accounts with global ALL).
///
/// Invariants: `account` is the account that matches the session's user and host in
/// `catalog`; `global` is its `*.*` privileges; `epoch` changes whenever `account` does (a
/// GRANT, REVOKE, ALTER USER or DROP USER of it), so plans compiled (and checked) under an
/// older epoch are checked again. Holding `catalog` keeps the pointer comparison free of
/// address reuse.
#[derive(Debug)]
pub(crate) struct PrivCache {
    catalog: Arc<Catalog>,
    account: Option<Arc<AccountDef>>,
    global: u64,
    epoch: u64,
    /// The session logged in with an account: privileges are enforced. Sessions of users
    /// without any account at login (tests, embedded use) are not checked.
    enforce: bool,
}

impl PrivCache {
    /// The state of `user`@`host` in `catalog`; enforced when an account matches.
    pub(crate) fn new(catalog: Arc<Catalog>, user: &str, host: &str) -> PrivCache {
        let account = best_match_in(&catalog, user, host);
        PrivCache {
            global: account.as_deref().map_or(0, global_grants),
            enforce: account.is_some(),
            account,
            catalog,
            epoch: 0,
        }
    }

    /// Brings the cache up to `catalog` (a pointer comparison when it is unchanged).
    pub(crate) fn refresh(&mut self, catalog: &Arc<Catalog>, user: &str, host: &str) {
        if Arc::ptr_eq(&self.catalog, catalog) {
            return;
        }
        let account = best_match_in(catalog, user, host);
        let same = match (&account, &self.account) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        };
        if !same {
            self.global = account.as_deref().map_or(0, global_grants);
            self.account = account;
            self.epoch = self.epoch.wrapping_add(1);
        }
        self.catalog = catalog.clone();
    }

    /// Changes with every change of the session's account.
    pub(crate) fn epoch(&self) -> u64 {
        self.epoch
    }

    /// The privileges held on `db` (global ones included); every bit when not enforced.
    pub(crate) fn on_db(&self, db: &str) -> u64 {
        if !self.enforce {
            return u64::MAX;
        }
        match &self.account {
            Some(a) => grants_on(a, db),
            None => 0,
        }
    }

    /// Fails with 1142 unless every bit of `need` is held on `db`.`table`.
    pub(crate) fn check_table(
        &self,
        user: &str,
        host: &str,
        db: &str,
        table: &str,
        need: u64,
    ) -> Result<(), SqlError> {
        if !self.enforce || self.global & need == need {
            return Ok(());
        }
        let have = self.on_db(db);
        if have & need == need {
            return Ok(());
        }
        Err(table_denied(user, host, db, table, need & !have))
    }

    /// Fails with 1044 unless every bit of `need` is held on `db`.
    pub(crate) fn check_db(
        &self,
        user: &str,
        host: &str,
        db: &str,
        need: u64,
    ) -> Result<(), SqlError> {
        if !self.enforce || self.global & need == need || self.on_db(db) & need == need {
            return Ok(());
        }
        Err(db_denied(user, self.priv_host(host), db))
    }

    /// Fails with 1044 unless some database-level privilege is held on `db` (USE).
    pub(crate) fn check_some_on_db(
        &self,
        user: &str,
        host: &str,
        db: &str,
    ) -> Result<(), SqlError> {
        if !self.enforce || self.global & ALL_DB != 0 || self.on_db(db) & ALL_DB != 0 {
            return Ok(());
        }
        Err(db_denied(user, self.priv_host(host), db))
    }

    fn priv_host<'a>(&'a self, host: &'a str) -> &'a str {
        self.account.as_deref().map_or(host, |a| a.host.as_str())
    }
}

fn global_grants(a: &AccountDef) -> u64 {
    a.grants
        .iter()
        .filter(|g| g.scope == "*")
        .fold(0, |acc, g| acc | g.privileges)
}

/// The session's account in the latest catalog: `None` when the session is not checked (no
/// account at login), `Some(None)` when its account was dropped since (no privileges).
fn checked_account(session: &Session) -> Option<Option<Arc<AccountDef>>> {
    let a = best_match(&session.server.engine, &session.user, &session.host);
    if a.is_none() && !session.privs.enforce {
        None
    } else {
        Some(a)
    }
}

/// Whether the session's privileges are checked (it logged in with an account, or has one
/// now).
pub(crate) fn is_checked(session: &Session) -> bool {
    checked_account(session).is_some()
}

fn need_global_error(what: &str) -> SqlError {
    SqlError::of(
        errors::ER_SPECIFIC_ACCESS_DENIED_ERROR,
        format!(
            "Access denied; you need (at least one of) the {what} privilege(s) for this operation"
        ),
    )
}

/// Fails with 1227 unless the session holds at least one of the bits of `any` globally.
pub(crate) fn require_any_global(session: &Session, any: u64, what: &str) -> Result<(), SqlError> {
    let Some(a) = checked_account(session) else {
        return Ok(());
    };
    if a.as_deref().map_or(0, global_grants) & any != 0 {
        Ok(())
    } else {
        Err(need_global_error(what))
    }
}

/// Fails with 1044 unless the session holds some privilege on `db` (SHOW TABLES, SHOW
/// CREATE TABLE, SHOW COLUMNS, SHOW INDEX).
pub(crate) fn require_some_on_db(session: &Session, db: &str) -> Result<(), SqlError> {
    let Some(a) = checked_account(session) else {
        return Ok(());
    };
    if a.as_deref().map_or(0, |a| grants_on(a, db)) & ALL_DB != 0 {
        return Ok(());
    }
    let host = a
        .as_deref()
        .map_or(session.host.as_str(), |a| a.host.as_str());
    Err(db_denied(&session.user, host, db))
}

/// Whether SHOW DATABASES lists `db` for this session: with the global SHOW DATABASES
/// privilege, or some privilege on `db`.
pub(crate) fn may_see_db(session: &Session, db: &str) -> bool {
    let Some(a) = checked_account(session) else {
        return true;
    };
    a.as_deref()
        .is_some_and(|a| global_grants(a) & SHOW_DATABASES != 0 || grants_on(a, db) & ALL_DB != 0)
}

fn require_global(session: &Session, need: u64, what: &str) -> Result<(), SqlError> {
    let Some(a) = checked_account(session) else {
        return Ok(());
    };
    if a.as_deref().map_or(0, global_grants) & need == need {
        Ok(())
    } else {
        Err(need_global_error(what))
    }
}

/// `CREATE USER`; returns the number of accounts created.
pub(crate) fn create_users(
    session: &mut Session,
    if_not_exists: bool,
    users: &[((String, String), Password)],
) -> Result<u64, SqlError> {
    require_global(session, CREATE_USER, "CREATE USER")?;
    let mut n = 0;
    for ((user, host), pw) in users {
        let hash = password_hash(pw)?.unwrap_or_default();
        let sql = format!(
            "CREATE USER {}{}{}",
            if if_not_exists { "IF NOT EXISTS " } else { "" },
            user_text(user, host),
            identified_text(&hash)
        );
        let def = AccountDef {
            user: user.clone(),
            host: host.clone(),
            auth_hash: hash,
            auth: AuthMethods::default(),
            grants: Vec::new(),
        };
        if session
            .server
            .engine
            .create_account(def, if_not_exists, &sql)?
        {
            n += 1;
        } else {
            session.warnings.push((
                "Note".into(),
                1973,
                format!("Can't create user '{user}'@'{host}'; it already exists"),
            ));
        }
    }
    Ok(n)
}

/// `DROP USER`.
pub(crate) fn drop_users(
    session: &mut Session,
    if_exists: bool,
    users: &[(String, String)],
) -> Result<u64, SqlError> {
    require_global(session, CREATE_USER, "CREATE USER")?;
    let mut n = 0;
    for (user, host) in users {
        let sql = format!(
            "DROP USER {}{}",
            if if_exists { "IF EXISTS " } else { "" },
            user_text(user, host)
        );
        if session
            .server
            .engine
            .drop_account(user, host, if_exists, &sql)?
        {
            n += 1;
        } else {
            session.warnings.push((
                "Note".into(),
                1974,
                format!("Can't drop user '{user}'@'{host}'; it doesn't exist"),
            ));
        }
    }
    Ok(n)
}

/// `SET PASSWORD [FOR u@h] = ...`, `ALTER USER u@h IDENTIFIED BY ...`.
pub(crate) fn set_password(
    session: &mut Session,
    user: Option<(String, String)>,
    pw: &Password,
    if_exists: bool,
) -> Result<(), SqlError> {
    let (user, host) = match user {
        Some(u) => {
            let own = current_account(session).is_some_and(|c| c == u);
            if !own {
                require_global(session, CREATE_USER, "CREATE USER")?;
            }
            u
        }
        None => current_account(session).ok_or_else(|| {
            SqlError::of(
                errors::ER_PASSWORD_NO_MATCH,
                "Can't find any matching row in the user table",
            )
        })?,
    };
    let Some(hash) = password_hash(pw)? else {
        return Ok(());
    };
    if if_exists
        && session
            .server
            .engine
            .catalog()
            .account(&user, &host)
            .is_none()
    {
        return Ok(());
    }
    let sql = format!(
        "ALTER USER {}{}",
        user_text(&user, &host),
        if hash.is_empty() {
            " IDENTIFIED BY ''".to_string()
        } else {
            identified_text(&hash)
        }
    );
    session
        .server
        .engine
        .alter_account(&user, &host, &sql, |a| {
            let mut a = a.clone();
            a.auth_hash = hash;
            // A password set on a unix_socket account is an alternative to the socket.
            a.auth.no_password_login = false;
            Ok(a)
        })
        .map_err(|e| match e.code() {
            1396 => SqlError::of(
                errors::ER_PASSWORD_NO_MATCH,
                "Can't find any matching row in the user table",
            ),
            _ => e.into(),
        })
}

fn bits_of(privs: &[PrivName], scope: &str) -> u64 {
    privs.iter().fold(0, |acc, p| {
        acc | match p {
            PrivName::All if scope == "*" => ALL_GLOBAL,
            PrivName::All => ALL_DB,
            PrivName::Usage => 0,
            PrivName::Named(b) => *b,
        }
    })
}

fn privs_text(bits: u64, scope: &str) -> String {
    let all = if scope == "*" { ALL_GLOBAL } else { ALL_DB };
    let bits = bits & !GRANT_OPTION;
    if bits == 0 {
        return "USAGE".into();
    }
    if bits & all == all {
        return "ALL PRIVILEGES".into();
    }
    NAMES
        .iter()
        .filter(|(_, b)| bits & b != 0)
        .map(|(n, _)| *n)
        .collect::<Vec<_>>()
        .join(", ")
}

fn scope_text(scope: &str) -> String {
    if scope == "*" {
        "*.*".into()
    } else {
        format!("`{}`.*", scope.replace('`', "``"))
    }
}

fn resolve_scope(session: &Session, scope: &str) -> Result<String, SqlError> {
    if scope.is_empty() {
        session
            .current_db
            .clone()
            .ok_or_else(|| SqlError::of(errors::ER_NO_DB_ERROR, "No database selected"))
    } else {
        Ok(scope.to_string())
    }
}

/// `GRANT privs ON scope TO users` (a password given with the user is set too).
pub(crate) fn grant(
    session: &mut Session,
    privs: &[PrivName],
    scope: &str,
    users: &[((String, String), Password)],
    grant_option: bool,
) -> Result<(), SqlError> {
    let scope = resolve_scope(session, scope)?;
    let bits = bits_of(privs, &scope);
    if scope != "*" && bits & !ALL_DB != 0 {
        return Err(SqlError::of(
            errors::ER_WRONG_USAGE,
            "Incorrect usage of DB GRANT and GLOBAL PRIVILEGES",
        ));
    }
    require_grantor(session, &scope, bits)?;
    let stored = if grant_option {
        bits | GRANT_OPTION
    } else {
        bits
    };
    for ((user, host), pw) in users {
        let hash = password_hash(pw)?;
        let sql = format!(
            "GRANT {} ON {} TO {}{}",
            privs_text(bits, &scope),
            scope_text(&scope),
            user_text(user, host),
            if grant_option {
                " WITH GRANT OPTION"
            } else {
                ""
            }
        );
        let scope2 = scope.clone();
        session
            .server
            .engine
            .alter_account(user, host, &sql, move |a| {
                let mut a = a.clone();
                if let Some(h) = hash {
                    a.auth_hash = h;
                    a.auth.no_password_login = false;
                }
                match a.grants.iter_mut().find(|g| g.scope == scope2) {
                    Some(g) => g.privileges |= stored,
                    None => a.grants.push(GrantDef {
                        scope: scope2,
                        privileges: stored,
                    }),
                }
                Ok(a)
            })
            .map_err(|e| match e.code() {
                1396 => SqlError::of(
                    errors::ER_PASSWORD_NO_MATCH,
                    "Can't find any matching row in the user table",
                ),
                _ => e.into(),
            })?;
    }
    Ok(())
}

fn require_grantor(session: &Session, scope: &str, bits: u64) -> Result<(), SqlError> {
    if checked_account(session).is_none() {
        return Ok(());
    }
    let have = privileges_on(session, scope);
    if have & GRANT_OPTION != 0 && have & bits == bits {
        return Ok(());
    }
    Err(SqlError::of(
        errors::ER_DBACCESS_DENIED_ERROR,
        format!(
            "Access denied for user '{}'@'{}' to database '{}'",
            session.user,
            session.host,
            if scope == "*" { "*" } else { scope }
        ),
    ))
}

/// `REVOKE privs ON scope FROM users`.
pub(crate) fn revoke(
    session: &mut Session,
    privs: &[PrivName],
    scope: &str,
    users: &[(String, String)],
) -> Result<(), SqlError> {
    let scope = resolve_scope(session, scope)?;
    let mut bits = bits_of(privs, &scope);
    if privs.contains(&PrivName::All) {
        bits |= GRANT_OPTION;
    }
    require_grantor(session, &scope, bits & !GRANT_OPTION)?;
    for (user, host) in users {
        let sql = format!(
            "REVOKE {} ON {} FROM {}",
            privs_text(bits, &scope),
            scope_text(&scope),
            user_text(user, host)
        );
        let scope2 = scope.clone();
        session
            .server
            .engine
            .alter_account(user, host, &sql, move |a| {
                let mut a = a.clone();
                for g in a.grants.iter_mut().filter(|g| g.scope == scope2) {
                    g.privileges &= !bits;
                }
                a.grants.retain(|g| g.privileges != 0);
                Ok(a)
            })
            .map_err(|e| match e.code() {
                1396 => SqlError::of(
                    errors::ER_NONEXISTING_GRANT,
                    format!("There is no such grant defined for user '{user}' on host '{host}'"),
                ),
                _ => e.into(),
            })?;
    }
    Ok(())
}

/// Showing another account's grants (and so its password hash) needs what reading
/// `mysql.user` needs: SELECT on `mysql` (or on `*.*`); 1044 on `mysql` otherwise, as MariaDB.
/// The session's own account is always shown.
fn require_user_table_read(session: &Session, target: &(String, String)) -> Result<(), SqlError> {
    let Some(a) = checked_account(session) else {
        return Ok(());
    };
    let own = a
        .as_deref()
        .is_some_and(|a| a.user == target.0 && a.host == target.1);
    if own
        || a.as_deref()
            .is_some_and(|a| grants_on(a, "mysql") & SELECT != 0)
    {
        return Ok(());
    }
    let host = a
        .as_deref()
        .map_or(session.host.as_str(), |a| a.host.as_str());
    Err(db_denied(&session.user, host, "mysql"))
}

/// The authentication part of SHOW GRANTS' first line, in MariaDB's words.
fn identified_clause(a: &AccountDef) -> String {
    if !a.auth.unix_socket {
        return identified_text(&a.auth_hash);
    }
    let using = if a.auth.no_password_login {
        "invalid".to_string()
    } else {
        hash_text(&a.auth_hash)
    };
    format!(" IDENTIFIED VIA mysql_native_password USING '{using}' OR unix_socket")
}

/// The lines of `SHOW GRANTS [FOR u@h]` and the column title.
pub(crate) fn show_grants(
    session: &Session,
    user: Option<(String, String)>,
) -> Result<(String, Vec<String>), SqlError> {
    let (user, host) = match user {
        Some(u) => {
            require_user_table_read(session, &u)?;
            u
        }
        None => current_account(session).ok_or_else(|| {
            SqlError::of(
                errors::ER_NONEXISTING_GRANT,
                format!(
                    "There is no such grant defined for user '{}' on host '{}'",
                    session.user, session.host
                ),
            )
        })?,
    };
    let cat = session.server.engine.catalog();
    let a = cat.account(&user, &host).ok_or_else(|| {
        SqlError::of(
            errors::ER_NONEXISTING_GRANT,
            format!("There is no such grant defined for user '{user}' on host '{host}'"),
        )
    })?;
    let who = user_text(&a.user, &a.host);
    let global = a
        .grants
        .iter()
        .find(|g| g.scope == "*")
        .map_or(0, |g| g.privileges);
    let mut lines = vec![format!(
        "GRANT {} ON *.* TO {}{}{}",
        privs_text(global, "*"),
        who,
        identified_clause(a),
        if global & GRANT_OPTION != 0 {
            " WITH GRANT OPTION"
        } else {
            ""
        }
    )];
    for g in a.grants.iter().filter(|g| g.scope != "*") {
        lines.push(format!(
            "GRANT {} ON {} TO {}{}",
            privs_text(g.privileges, &g.scope),
            scope_text(&g.scope),
            who,
            if g.privileges & GRANT_OPTION != 0 {
                " WITH GRANT OPTION"
            } else {
                ""
            }
        ));
    }
    Ok((format!("Grants for {}@{}", a.user, a.host), lines))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn native_hash_matches_mysql_password_function() {
        // MariaDB: SELECT PASSWORD('password') = '*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19'.
        assert_eq!(
            hash_text(&native_hash("password")),
            "*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19"
        );
        let h = native_hash("x");
        assert_eq!(parse_hash(&hash_text(&h)).unwrap(), h);
        assert_eq!(parse_hash("*12").unwrap_err().code, 1372);
        assert_eq!(parse_hash("").unwrap(), Vec::<u8>::new());
    }

    #[test]
    fn hosts_match_localhost_wildcards_and_exact_addresses() {
        assert!(host_matches("localhost", "127.0.0.1"));
        assert!(host_matches("localhost", ""));
        assert!(host_matches("localhost", "::1"));
        assert!(!host_matches("localhost", "10.0.0.1"));
        assert!(host_matches("%", "10.0.0.1"));
        assert!(host_matches("10.0.0.%", "10.0.0.7"));
        assert!(!host_matches("10.0.0.%", "10.0.1.7"));
        assert!(host_matches("10.0.0.1", "10.0.0.1"));
        assert!(host_matches("127.0.0.1", "localhost"));
        assert!(host_matches("127.%", "localhost"));
        assert!(!host_matches("10.%", "localhost"));
        assert!(
            specificity("10.0.0.1") > specificity("10.%") && specificity("10.%") > specificity("%")
        );
    }

    #[test]
    fn privilege_text_names_all_or_each_privilege() {
        assert_eq!(privs_text(ALL_GLOBAL, "*"), "ALL PRIVILEGES");
        assert_eq!(privs_text(ALL_DB, "d"), "ALL PRIVILEGES");
        assert_eq!(privs_text(0, "*"), "USAGE");
        assert_eq!(
            privs_text(REPLICATION_SLAVE | SELECT, "*"),
            "SELECT, REPLICATION SLAVE"
        );
        assert_eq!(privilege_bit("REPLICATION CLIENT"), Some(BINLOG_MONITOR));
        assert_eq!(quote("a'b\\"), "'a''b\\\\'");
    }
}
