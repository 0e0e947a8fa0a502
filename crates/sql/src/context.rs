//! The execution context: what executors and expressions may read and change while a
//! statement runs: the server, the account and its privileges, the current database, the
//! statement's start time, system and user variables, the diagnostics area, the session's
//! transaction, and the statement guard. The session owns one (and dereferences to it);
//! executors, expressions and variable access take `&ExecContext` / `&mut ExecContext` and
//! never see the session's dispatch (prepared statements, statement splitting).
//!
//! Invariants:
//! - `txn` is `Some` whenever `explicit` is true (BEGIN or autocommit=0 opened one);
//! - `read_only` implies `explicit` (START TRANSACTION READ ONLY);
//! - between statements, with autocommit on and no explicit transaction, no transaction is
//!   open (each statement ran in its own);
//! - `stmt_time` is fixed for the whole statement: set by [`ExecContext::begin_statement_time`]
//!   at its start, read by NOW() and friends.

use onelog_protocol::errors;
use std::collections::HashMap;
use std::sync::Arc;

use onelog_binlog::Value;
use onelog_engine::backup::BackupHold;
use onelog_engine::{AccountDef, Transaction};

use crate::error::SqlError;
use crate::guard::StatementGuard;
use crate::parse::admin::BackupStage;
use crate::privilege::{
    best_match, db_denied, global_grants, grants_on, need_global_error, table_denied, PrivCache,
    ALL_DB, SHOW_DATABASES,
};
use crate::server::Server;
use crate::sysvar::registry::SessionVars;

/// The current time as (seconds, microseconds) since the Unix epoch: NOW() of a statement.
pub(crate) fn now_unix() -> (i64, u32) {
    let d = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    (d.as_secs() as i64, d.subsec_micros())
}

/// `my_rnd`'s modulus (MariaDB `my_rnd_init`).
pub(crate) const RAND_MAX_VALUE: u64 = 0x3FFF_FFFF;

/// A session's first RAND() seeds: from the clock and the connection id (MariaDB mixes a
/// global random value with the THD's address; only unpredictability matters here).
fn initial_rand_seeds(connection_id: u32) -> (u64, u64) {
    let (s, us) = now_unix();
    let t = (s as u64).wrapping_mul(1_000_003) ^ u64::from(us) << 17;
    (
        t.wrapping_add(u64::from(connection_id)) % RAND_MAX_VALUE,
        (t >> 7).wrapping_add(0x9E37_79B9) % RAND_MAX_VALUE,
    )
}

/// MariaDB's `my_rnd`: advances `seeds`, returns the next value in [0, 1).
pub(crate) fn my_rnd(seeds: &mut (u64, u64)) -> f64 {
    seeds.0 = (seeds.0 * 3 + seeds.1) % RAND_MAX_VALUE;
    seeds.1 = (seeds.0 + seeds.1 + 33) % RAND_MAX_VALUE;
    seeds.0 as f64 / RAND_MAX_VALUE as f64
}

/// RAND(N)'s seeds (MariaDB `Item_func_rand::seed_random`).
pub(crate) fn rand_seeds_for(n: i64) -> (u64, u64) {
    let tmp = n as u32;
    (
        u64::from(tmp.wrapping_mul(0x10001).wrapping_add(55_555_555)) % RAND_MAX_VALUE,
        u64::from(tmp.wrapping_mul(0x1000_0001)) % RAND_MAX_VALUE,
    )
}

/// A statement's execution context (see the module docs).
pub struct ExecContext {
    pub(crate) server: Arc<Server>,
    pub(crate) connection_id: u32,
    pub(crate) user: String,
    pub(crate) host: String,
    pub(crate) current_db: Option<String>,
    pub(crate) vars: SessionVars,
    pub(crate) user_vars: HashMap<String, Value>,
    /// The diagnostics area: (level, code, message) of the last statement that raised any.
    pub(crate) warnings: Vec<(String, u16, String)>,
    pub(crate) last_insert_id: u64,
    pub(crate) found_rows: u64,
    pub(crate) row_count: i64,
    pub(crate) txn: Option<Transaction>,
    /// BEGIN was issued (or autocommit=0 opened one).
    pub(crate) explicit: bool,
    pub(crate) read_only: bool,
    pub(crate) autocommit: bool,
    stmt_time: (i64, u32),
    /// RAND()'s generator (MariaDB's `thd->rand`: `my_rnd` over two seeds below 2^30-1);
    /// a replica sets it from the primary's Rand event.
    pub(crate) rand: std::cell::Cell<(u64, u64)>,
    /// RAND(N)'s generators of the running statement, by N (seeded at first use).
    pub(crate) rand_seeded: std::cell::RefCell<HashMap<i64, (u64, u64)>>,
    /// The session's clock when fixed (seconds, microseconds): `SET timestamp = t`, or a
    /// replica applying a statement-based event (its statements run at the primary's time,
    /// the Query event's timestamp, as MariaDB's SET TIMESTAMP in the binlog does).
    fixed_time: Option<(i64, u32)>,
    /// The account's privileges, cached per catalog version.
    pub(crate) privs: PrivCache,
    /// The limits of the running statement (KILL, max_statement_time, memory, strings).
    pub(crate) guard: StatementGuard,
    /// What the session's `gtid_domain_id` / `server_id` / `gtid_seq_no` ask of its commits;
    /// None while all three are the server's defaults (statements then run without an origin
    /// scope). Kept by `sysvar::replica::refresh_origin` (the session
    /// sets it when it starts).
    pub(crate) origin: Option<onelog_engine::CommitOrigin>,
    /// The session's `BACKUP STAGE`: its stage and the engine hold it keeps (None: no backup
    /// runs in this session). Dropped with the session, which releases the hold
    /// (`execute::admin::backup`).
    pub(crate) backup: Option<(BackupStage, BackupHold)>,
    /// The user-level locks this session holds (GET_LOCK), released when it ends.
    pub(crate) user_locks: crate::user_locks::SessionLocks,
    /// The table locks (LOCK TABLES) and global read lock this session holds, released when
    /// it ends (`crate::table_locks`).
    pub(crate) table_locks: crate::table_locks::SessionTableLocks,
    /// The binlog file and position matching the read view of the open transaction, when it
    /// began WITH CONSISTENT SNAPSHOT (`Binlog_snapshot_file` / `_position`); cleared when
    /// the transaction ends.
    pub(crate) binlog_snapshot: Option<(String, u64)>,
    /// While the SELECT of a `SQL SECURITY DEFINER` view is compiled: its definer's account,
    /// against which table privileges are checked instead of the session's
    /// (`plan::select::view`, which restores the previous value after).
    pub(crate) definer: std::cell::RefCell<Option<Arc<AccountDef>>>,
    /// How many views deep the SELECT being compiled is (`plan::select::view`).
    pub(crate) view_depth: std::cell::Cell<u32>,
    /// While a statement written through a view compiles: the base tables (database, name)
    /// whose privileges the view's security context granted (`plan::view_dml`).
    pub(crate) view_grants: std::cell::RefCell<Vec<(String, String)>>,
    /// The connection's bytes on the wire (`SHOW SESSION STATUS LIKE 'Bytes%'`); None for a
    /// session without a client connection.
    pub(crate) traffic: Option<Arc<crate::status::Traffic>>,
    /// The reload of `mysql`'s account tables this session runs (a dump's restore: DROP
    /// TABLE, CREATE TABLE, INSERT of `mysql.global_priv` ...), staged until FLUSH PRIVILEGES
    /// or the session's end applies it (`execute::admin::reload`); None when none runs.
    pub(crate) reload: Option<Box<Reload>>,
}

/// A reload of `mysql`'s account tables in progress (see `execute::admin::reload`, which owns
/// the rules): which tables were dropped and created again, and the rows inserted since.
#[derive(Debug, Default)]
pub(crate) struct Reload {
    /// The tables dropped (by MariaDB's name), each `true` once created again.
    pub(crate) tables: Vec<(&'static str, bool)>,
    /// `DROP VIEW mysql.user` ran and the view's final definition was not created again yet.
    pub(crate) user_view_dropped: bool,
    /// The accounts of the `global_priv` rows inserted (no database grants).
    pub(crate) accounts: Vec<AccountDef>,
    /// The `db` rows inserted: (user, host, grant).
    pub(crate) db_grants: Vec<(String, String, onelog_engine::GrantDef)>,
}

impl ExecContext {
    pub(crate) fn new(server: Arc<Server>, connection_id: u32, user: &str, host: &str) -> Self {
        let vars = SessionVars::new(&server.globals);
        let privs = PrivCache::new(server.engine.catalog(), user, host);
        let ctl = server.connection_control(connection_id).unwrap_or_default();
        let user_locks =
            crate::user_locks::SessionLocks::new(server.user_locks.clone(), connection_id);
        let table_locks = crate::table_locks::SessionTableLocks::new(
            server.table_locks.clone(),
            connection_id,
            ctl.clone(),
        );
        ExecContext {
            guard: StatementGuard::new(ctl),
            server,
            connection_id,
            user: user.to_string(),
            host: host.to_string(),
            current_db: None,
            vars,
            user_vars: HashMap::new(),
            warnings: Vec::new(),
            last_insert_id: 0,
            found_rows: 0,
            row_count: -1,
            txn: None,
            explicit: false,
            read_only: false,
            autocommit: true,
            stmt_time: now_unix(),
            fixed_time: None,
            rand: std::cell::Cell::new(initial_rand_seeds(connection_id)),
            rand_seeded: std::cell::RefCell::new(HashMap::new()),
            privs,
            origin: None,
            backup: None,
            user_locks,
            table_locks,
            binlog_snapshot: None,
            reload: None,
            definer: std::cell::RefCell::new(None),
            view_depth: std::cell::Cell::new(0),
            view_grants: std::cell::RefCell::new(Vec::new()),
            traffic: None,
        }
    }

    /// Checks the transaction-state invariants of the module docs.
    pub(crate) fn debug_check(&self) {
        debug_assert!(
            !self.explicit || self.txn.is_some(),
            "explicit transaction without txn"
        );
        debug_assert!(
            !self.read_only || self.explicit,
            "read-only outside a transaction"
        );
        debug_assert!(
            !self.autocommit || self.explicit || self.txn.is_none(),
            "an autocommit statement left its transaction open"
        );
    }

    /// Start time of the current statement (NOW()).
    pub(crate) fn statement_time(&self) -> (i64, u32) {
        self.stmt_time
    }

    pub(crate) fn begin_statement_time(&mut self) {
        self.rand_seeded.get_mut().clear();
        self.stmt_time = self.fixed_time.unwrap_or_else(now_unix);
    }

    /// Fixes the time the next statements run at, (seconds, microseconds) since the epoch
    /// (None: the clock again).
    pub(crate) fn set_fixed_time(&mut self, t: Option<(i64, u32)>) {
        self.fixed_time = t;
    }

    /// The time fixed by [`Self::set_fixed_time`] (`@@timestamp` after SET timestamp).
    pub(crate) fn fixed_time(&self) -> Option<(i64, u32)> {
        self.fixed_time
    }

    pub fn current_database(&self) -> Option<&str> {
        self.current_db.as_deref()
    }

    pub fn in_transaction(&self) -> bool {
        self.txn.is_some()
    }

    pub fn autocommit(&self) -> bool {
        self.autocommit
    }

    pub fn warning_count(&self) -> u16 {
        self.warnings.len().min(u16::MAX as usize) as u16
    }

    /// `SET autocommit = on|off`; turning it on commits an open transaction.
    pub(crate) fn set_autocommit(&mut self, on: bool) -> Result<(), SqlError> {
        if on && !self.autocommit {
            self.commit()?;
        }
        self.autocommit = on;
        Ok(())
    }

    /// Fails with 1142 unless the session holds every bit of `need` on `db`.`table`
    /// (against the cache brought up to date at the start of the statement).
    pub(crate) fn check_table_privilege(
        &self,
        db: &str,
        table: &str,
        need: u64,
    ) -> Result<(), SqlError> {
        self.refuse_infoschema_write(db, need)?;
        self.check_table_locks(db, table, need)?;
        {
            let granted = self.view_grants.borrow();
            if !granted.is_empty() && granted.iter().any(|(d, t)| d == db && t == table) {
                return Ok(());
            }
        }
        if let Some(a) = &*self.definer.borrow() {
            // Inside a DEFINER view (only set while privileges are enforced).
            let have = global_grants(a) | grants_on(a, db);
            if have & need == need {
                return Ok(());
            }
            return Err(table_denied(&a.user, &a.host, db, table, need & !have));
        }
        self.privs
            .check_table(&self.user, &self.host, db, table, need)
    }

    /// The table-lock side of using `db`.`table` with the privileges `need` (those of a
    /// change mean a write): the session's own LOCK TABLES / global read lock rules, then the
    /// wait for other sessions' locks (`crate::table_locks`), after recording the use for
    /// other sessions' LOCK TABLES. One atomic load when no table lock exists or is waited
    /// for.
    fn check_table_locks(&self, db: &str, table: &str, need: u64) -> Result<(), SqlError> {
        use crate::privilege::{ALTER, CREATE, DELETE, DROP, INDEX, INSERT, UPDATE};
        let write = need & (INSERT | UPDATE | DELETE | CREATE | DROP | ALTER | INDEX) != 0;
        let locks = &self.table_locks;
        if !locks.slow() {
            // No lock and no waiting LOCK TABLES: the use is only remembered, for the rest of
            // an open transaction (an autocommit statement's end is its transaction's).
            if !self.autocommit || self.explicit || locks.capturing() {
                locks.record(db, table, write);
            }
            return Ok(());
        }
        let how = crate::table_locks::Use {
            write,
            had: locks.record_use(db, table, write),
            statement_only: self.autocommit && !self.explicit,
        };
        let timeout = self.vars.lock_wait_timeout();
        self.table_locks
            .check_use((db, table), how, timeout, &self.guard)
    }

    /// Takes an online index build's lock again ([`crate::table_locks::ExclusiveLock::upgrade`]),
    /// waiting at most `lock_wait_timeout` and `at_most` (`execute::ddl::create_index_online`
    /// says why).
    pub(crate) fn upgrade_lock(
        &self,
        lock: &crate::table_locks::ExclusiveLock,
        at_most: std::time::Duration,
    ) -> Result<(), SqlError> {
        let timeout = self.vars.lock_wait_timeout().min(at_most);
        lock.upgrade(timeout, &self.guard)
    }

    /// A DDL statement's exclusive lock on `tables` (`crate::table_locks`): waits, at most
    /// `lock_wait_timeout`, until no other session's statement or transaction uses them;
    /// new uses wait behind it. Held until the lock is dropped; with `readers`, statements
    /// outside a transaction may read the tables meanwhile (a copying ALTER's lock).
    pub(crate) fn exclusive_lock<S: AsRef<str>>(
        &self,
        tables: &[(S, S)],
        readers: bool,
    ) -> Result<crate::table_locks::ExclusiveLock, SqlError> {
        let keys = tables
            .iter()
            .map(|(d, t)| (d.as_ref().to_string(), t.as_ref().to_string()))
            .collect();
        let timeout = self.vars.lock_wait_timeout();
        self.table_locks
            .exclusive((keys, readers), timeout, &self.guard)
    }

    /// Fails with 1044 unless the session holds every bit of `need` on `db`.
    pub(crate) fn check_db_privilege(&self, db: &str, need: u64) -> Result<(), SqlError> {
        self.refuse_infoschema_write(db, need)?;
        self.privs.check_db(&self.user, &self.host, db, need)
    }

    /// `information_schema` is read-only for every account: anything but SELECT on it is
    /// MariaDB's 1044.
    fn refuse_infoschema_write(&self, db: &str, need: u64) -> Result<(), SqlError> {
        if need & !crate::privilege::SELECT == 0 || !crate::schema_names::is_information_schema(db)
        {
            return Ok(());
        }
        let host = self
            .current_account()
            .map_or_else(|| self.host.clone(), |(_, h)| h);
        Err(db_denied(&self.user, &host, db))
    }

    /// Commits the open transaction, if any.
    pub(crate) fn commit(&mut self) -> Result<(), SqlError> {
        if let Some(t) = &self.txn {
            // Another session's table locks and FLUSH TABLES WITH READ LOCK hold commits up
            // (the transaction stays open when the wait fails).
            self.wait_commit_allowed(t)?;
        }
        self.explicit = false;
        self.read_only = false;
        self.binlog_snapshot = None;
        self.table_locks.transaction_end();
        if let Some(t) = self.txn.take() {
            let ctl = self.guard.control();
            t.commit_interruptible(&crate::guard::CommitWait::new(ctl))?;
        }
        Ok(())
    }

    /// Before `txn` commits: when it changed rows, waits while another session holds the
    /// global read lock or a lock that blocks changes of a table it changed (READ, WRITE).
    /// A LOCK TABLES waits for the transaction's uses, so the second wait only matters for a
    /// table changed without a use (a foreign key's cascade; `crate::table_locks`).
    pub(crate) fn wait_commit_allowed(
        &self,
        txn: &onelog_engine::Transaction,
    ) -> Result<(), SqlError> {
        if !self.server.table_locks.active() || txn.changes() == 0 {
            return Ok(());
        }
        let timeout = self.vars.lock_wait_timeout();
        let locks = &self.server.table_locks;
        locks.commit_allowed(self.connection_id, timeout, &self.guard)?;
        let cat = self.server.engine.catalog();
        for id in txn.changed_tables() {
            if let Some(t) = cat.table(id) {
                locks.access(
                    self.connection_id,
                    &t.db,
                    &t.name,
                    true,
                    timeout,
                    &self.guard,
                )?;
            }
        }
        Ok(())
    }

    pub(crate) fn rollback(&mut self) {
        self.binlog_snapshot = None;
        self.table_locks.transaction_end();
        self.explicit = false;
        self.read_only = false;
        if let Some(t) = self.txn.take() {
            t.rollback();
        }
    }

    /// Brings the privilege cache up to the latest catalog (once per statement).
    pub(crate) fn refresh_privileges(&mut self) {
        let cat = self.server.engine.catalog();
        self.privs.refresh(&cat, &self.user, &self.host);
    }

    /// A failed statement leaves its error as the only condition of the diagnostics area
    /// (SHOW ERRORS, `@@error_count`), as in MariaDB; a row change refused by the binlog
    /// cache (1197) is followed by MariaDB's second condition, 1534.
    pub(crate) fn note_error<T>(&mut self, r: &Result<T, SqlError>) {
        if let Err(e) = r {
            self.warnings.clear();
            self.warnings
                .push(("Error".to_string(), e.code, e.message.clone()));
            if e.code == errors::ER_TRANS_CACHE_FULL.code {
                self.warnings.push((
                    "Error".to_string(),
                    errors::ER_BINLOG_ROW_LOGGING_FAILED.code,
                    "Writing one row to the row-based binary log failed".to_string(),
                ));
            }
        }
    }

    /// The account the session is logged in as (its user and the host pattern that admitted it).
    pub(crate) fn current_account(&self) -> Option<(String, String)> {
        best_match(&self.server.engine, &self.user, &self.host)
            .map(|a| (a.user.clone(), a.host.clone()))
    }

    /// The privileges `session` holds on `db` (global grants included).
    pub(crate) fn privileges_on(&self, db: &str) -> u64 {
        match best_match(&self.server.engine, &self.user, &self.host) {
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
        &self,
        db: &str,
        table: Option<&str>,
        need: u64,
    ) -> Result<(), SqlError> {
        let account = best_match(&self.server.engine, &self.user, &self.host);
        if account.is_none() && !self.privs.enforce {
            return Ok(());
        }
        let have = account.as_deref().map_or(0, |a| grants_on(a, db));
        if have & need == need {
            return Ok(());
        }
        let host = account
            .as_deref()
            .map_or(self.host.as_str(), |a| a.host.as_str());
        Err(match table {
            None => db_denied(&self.user, host, db),
            Some(t) => table_denied(&self.user, &self.host, db, t, need & !have),
        })
    }

    /// The session's account in the latest catalog: `None` when the session is not checked (no
    /// account at login), `Some(None)` when its account was dropped since (no privileges).
    pub(crate) fn checked_account(&self) -> Option<Option<Arc<AccountDef>>> {
        let a = best_match(&self.server.engine, &self.user, &self.host);
        if a.is_none() && !self.privs.enforce {
            None
        } else {
            Some(a)
        }
    }

    /// Whether the session's privileges are checked (it logged in with an account, or has one
    /// now).
    pub(crate) fn is_checked(&self) -> bool {
        self.checked_account().is_some()
    }

    /// Fails with 1227 unless the session holds at least one of the bits of `any` globally.
    pub(crate) fn require_any_global(&self, any: u64, what: &str) -> Result<(), SqlError> {
        let Some(a) = self.checked_account() else {
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
    pub(crate) fn require_some_on_db(&self, db: &str) -> Result<(), SqlError> {
        let Some(a) = self.checked_account() else {
            return Ok(());
        };
        if a.as_deref().map_or(0, |a| grants_on(a, db)) & ALL_DB != 0 {
            return Ok(());
        }
        let host = a.as_deref().map_or(self.host.as_str(), |a| a.host.as_str());
        Err(db_denied(&self.user, host, db))
    }

    /// Whether SHOW DATABASES lists `db` for this session: with the global SHOW DATABASES
    /// privilege, or some privilege on `db`.
    pub(crate) fn may_see_db(&self, db: &str) -> bool {
        let Some(a) = self.checked_account() else {
            return true;
        };
        a.as_deref().is_some_and(|a| {
            global_grants(a) & SHOW_DATABASES != 0 || grants_on(a, db) & ALL_DB != 0
        })
    }

    pub(crate) fn require_global(&self, need: u64, what: &str) -> Result<(), SqlError> {
        let Some(a) = self.checked_account() else {
            return Ok(());
        };
        if a.as_deref().map_or(0, global_grants) & need == need {
            Ok(())
        } else {
            Err(need_global_error(what))
        }
    }
}
