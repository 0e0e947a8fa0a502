//! Privileges and accounts as data: the privilege bits with MariaDB's names, the account
//! registry's lookup ([`Accounts`]: which `'user'@'host'` a login matches), password hashes, the
//! rules that decide what an account holds on a database or table, and the per-session
//! [`PrivCache`]. Shared ground: executors and the execution context import it; it imports
//! none of them. The account *statements* (CREATE USER, GRANT, ...) are executed in
//! `execute::admin::accounts`; the checks against the running statement's account are
//! methods of the execution context (`context`).
//!
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
//!
//! Invariants: the privileges of a scope are a bit set of [`NAMES`]' bits (`ALL` = every bit of
//! the scope); an account matches a login only through [`host_matches`], the most specific
//! pattern first; [`PrivCache`]'s global bits are those of its account (asserted in
//! `PrivCache::refresh`).

use onelog_protocol::errors;
use std::sync::{Arc, OnceLock};

use onelog_engine::{AccountDef, AuthMethods, Catalog, Engine, GrantDef};
use sha1::{Digest, Sha1};

use crate::error::SqlError;
use crate::like::like;

/// How the first `root@localhost` authenticates (mariadb-install-db's
/// `--auth-root-authentication-method`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RootAuth {
    /// `IDENTIFIED VIA unix_socket` only, until an operator sets a password (default).
    #[default]
    Socket,
    /// No password, from any local client (test setups only).
    Normal,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    pub user: String,
    pub host: String,
    /// SHA1(SHA1(password)), 20 bytes; empty when the account has no password.
    pub auth_hash: Vec<u8>,
    /// `IDENTIFIED VIA unix_socket`: a unix-socket peer running as the server's OS user (or
    /// OS root) logs in without a password.
    pub unix_socket: bool,
    /// Whether `auth_hash` may be used at all (false: MariaDB's `USING 'invalid'`, the
    /// account logs in only through `unix_socket`).
    pub password_login: bool,
}

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
/// MariaDB 10.5.2+'s REPLICATION MASTER ADMIN: SHOW SLAVE HOSTS and the primary's semi-sync
/// variables.
pub const REPLICATION_MASTER_ADMIN: u64 = 1 << 29;
/// MariaDB 10.5.2+'s READ_ONLY ADMIN: writes while `read_only` is ON (SUPER keeps it too, as
/// in MariaDB 10.11).
pub const READ_ONLY_ADMIN: u64 = 1 << 30;
/// MariaDB 10.5.2+'s REPLICATION SLAVE ADMIN: CHANGE MASTER, START / STOP / RESET SLAVE and
/// the replica's variables.
pub const REPLICATION_SLAVE_ADMIN: u64 = 1 << 31;
/// MariaDB 10.5.9+'s SLAVE MONITOR (alias REPLICA MONITOR): SHOW SLAVE STATUS.
pub const SLAVE_MONITOR: u64 = 1 << 32;
/// What lets an account kill others' connections and take the reserved connection.
pub const KILL_OTHERS: u64 = SUPER | CONNECTION_ADMIN;
/// WITH GRANT OPTION.
pub const GRANT_OPTION: u64 = 1 << 40;
/// Privilege names in MariaDB's SHOW GRANTS order, with their bits.
pub(crate) const NAMES: &[(&str, u64)] = &[
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
    ("READ_ONLY ADMIN", READ_ONLY_ADMIN),
    ("REPLICATION SLAVE ADMIN", REPLICATION_SLAVE_ADMIN),
    ("REPLICATION MASTER ADMIN", REPLICATION_MASTER_ADMIN),
    ("SLAVE MONITOR", SLAVE_MONITOR),
];

/// Every privilege that exists at `*.*`.
/// (A data directory bootstrapped before CONNECTION ADMIN existed keeps its root's grants as
/// they were: SHOW GRANTS lists them one by one; SUPER still does what CONNECTION ADMIN does.)
pub const ALL_GLOBAL: u64 = (1 << 33) - 1;
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
/// CLIENT` is MariaDB's old name of `BINLOG MONITOR`; `REPLICA MONITOR` is `SLAVE MONITOR`.
pub(crate) fn privilege_bit(name: &str) -> Option<u64> {
    if name == "REPLICATION CLIENT" {
        return Some(BINLOG_MONITOR);
    }
    if name == "REPLICA MONITOR" {
        return Some(SLAVE_MONITOR);
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
pub fn bootstrap(
    accounts: &Accounts,
    engine: &Arc<Engine>,
    root_auth: RootAuth,
) -> Result<(), SqlError> {
    let _ = accounts.engine.set(engine.clone());
    if engine.catalog().accounts().next().is_some() {
        return Ok(());
    }
    let socket = root_auth == RootAuth::Socket;
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
    engine.create_account(root, true, sql)?;
    Ok(())
}

/// Whether the account host pattern `pattern` admits a client from `host`.
pub(crate) fn host_matches(pattern: &str, host: &str) -> bool {
    if pattern.eq_ignore_ascii_case("localhost") {
        return matches!(host, "" | "localhost" | "127.0.0.1" | "::1")
            || host.eq_ignore_ascii_case("localhost");
    }
    let like = like;
    // The protocol layer names loopback peers "localhost"; accounts for the loopback
    // addresses admit them too.
    like(pattern, host)
        || (host.eq_ignore_ascii_case("localhost")
            && (like(pattern, "127.0.0.1") || like(pattern, "::1")))
}

pub(crate) fn specificity(pattern: &str) -> u8 {
    if pattern == "%" {
        0
    } else if pattern.contains(['%', '_']) {
        1
    } else {
        2
    }
}

pub(crate) fn best_match(engine: &Engine, user: &str, host: &str) -> Option<Arc<AccountDef>> {
    best_match_in(&engine.catalog(), user, host)
}

pub(crate) fn best_match_in(cat: &Catalog, user: &str, host: &str) -> Option<Arc<AccountDef>> {
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

/// The privileges `account` holds on `db` (global grants included).
pub(crate) fn grants_on(account: &AccountDef, db: &str) -> u64 {
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
    pub(crate) enforce: bool,
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
        debug_assert_eq!(
            self.global,
            self.account.as_deref().map_or(0, global_grants)
        );
    }

    /// The account the session's privileges are those of (None: not enforced, or no match).
    pub(crate) fn account(&self) -> Option<&Arc<AccountDef>> {
        self.account.as_ref()
    }

    /// The session's `*.*` privileges.
    pub(crate) fn global(&self) -> u64 {
        self.global
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

pub(crate) fn global_grants(a: &AccountDef) -> u64 {
    a.grants
        .iter()
        .filter(|g| g.scope == "*")
        .fold(0, |acc, g| acc | g.privileges)
}

pub(crate) fn need_global_error(what: &str) -> SqlError {
    SqlError::of(
        errors::ER_SPECIFIC_ACCESS_DENIED_ERROR,
        format!(
            "Access denied; you need (at least one of) the {what} privilege(s) for this operation"
        ),
    )
}
