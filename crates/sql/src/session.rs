//! One client session: statement dispatch (admin statements first, then transaction
//! control, then sqlparser statements), the session's transaction (explicit, autocommit=0,
//! or one per statement), statement atomicity, prepared statements and session state
//! (current database, user variables, warnings, LAST_INSERT_ID, FOUND_ROWS).
//!
//! Invariants:
//! - with autocommit on and no explicit transaction, every statement runs in its own engine
//!   transaction, committed when it succeeds and rolled back when it fails;
//! - inside a transaction each data-changing statement runs under a savepoint: a failing
//!   statement (1205 included) leaves none of its changes, except 1213 which rolls the whole
//!   transaction back (MySQL semantics) and ends it;
//! - DDL commits the open transaction first (implicit commit);
//! - privileges are checked once per statement and table when it is compiled (1142 before
//!   1146, 1044 for database statements and USE), against the session's [`PrivCache`]
//!   brought up to date at the start of the statement; a prepared statement's cached plan is
//!   compiled (and so checked) again when the account's grants changed since;
//! - the diagnostics area (`warnings`) holds the conditions of the last statement that
//!   produced any: a statement clears it first unless it uses no table and reads
//!   `@@warning_count` / `@@error_count` (SHOW WARNINGS / ERRORS keep it too, in `admin`); a
//!   failed statement leaves its error there;
//! - every statement of a COM_QUERY and every COM_STMT_EXECUTE runs with the session's
//!   [`StatementGuard`] armed (its text in PROCESSLIST, its limits from the session's
//!   `max_statement_time`, `max_session_mem_used`, `max_allowed_packet`,
//!   `group_concat_max_len`); the warnings raised while evaluating join the diagnostics area
//!   when it is disarmed. `SET STATEMENT ... FOR` restores the session's variables after its
//!   statement, whatever its outcome.

use onelog_protocol::errors;
use std::collections::HashMap;
use std::sync::Arc;

use onelog_binlog::Value;
use sqlparser::ast::{self, Statement};

use crate::context::ExecContext;
use crate::error::SqlError;
use crate::execute::admin;
use crate::execute::dml::{self, DmlResult};
use crate::execute::select;
use crate::expr::Env;
use crate::guard::Probe;
use crate::output::{Column, Output, PreparedInfo};
use crate::parse::{self, LockClause, Parsed, TxnStmt};
use crate::plan;
use crate::plan::dml::{DeletePlan, InsertPlan, UpdatePlan};
use crate::plan::select::SelectPlan;
use crate::privilege::PrivCache;
use crate::server::Server;
use crate::status::ComKind;
use crate::sysvar::SessionVars;
use onelog_engine::Transaction;

mod sql_prepare;

/// A compiled statement (cached by prepared statements).
#[derive(Debug, Clone)]
pub(crate) enum Compiled {
    Select(Box<SelectPlan>),
    Insert(Box<InsertPlan>),
    Update(Box<UpdatePlan>),
    Delete(Box<DeletePlan>),
    /// Multi-table UPDATE or DELETE.
    Multi(Box<crate::plan::multi_dml::MultiPlan>),
}

impl Compiled {
    /// The `Com_` counter the statement counts in.
    fn com_kind(&self) -> ComKind {
        match self {
            Compiled::Select(_) => ComKind::Select,
            Compiled::Insert(p) if p.replace => ComKind::Replace,
            Compiled::Insert(_) => ComKind::Insert,
            Compiled::Update(_) => ComKind::Update,
            Compiled::Delete(_) => ComKind::Delete,
            Compiled::Multi(p) if p.delete => ComKind::DeleteMulti,
            Compiled::Multi(_) => ComKind::UpdateMulti,
        }
    }

    fn table(&self) -> Option<&Arc<onelog_engine::TableDef>> {
        match self {
            Compiled::Select(p) => p.table.as_ref(),
            Compiled::Insert(p) => Some(&p.table),
            Compiled::Update(p) => Some(&p.table),
            Compiled::Delete(p) => Some(&p.table),
            Compiled::Multi(p) => p.tables.first(),
        }
    }

    /// Whether the plan writes through a view (its definition may have changed since: such a
    /// plan is compiled again at each execution).
    fn through_view(&self) -> bool {
        match self {
            Compiled::Select(_) => false,
            Compiled::Insert(p) => p.view.is_some(),
            Compiled::Update(p) => p.view.is_some(),
            Compiled::Delete(p) => p.view.is_some(),
            Compiled::Multi(p) => p.view.is_some(),
        }
    }
}

/// A prepared statement.
pub(crate) struct Prepared {
    pub sql: Arc<str>,
    pub parsed: Arc<Parsed>,
    pub params: usize,
    pub compiled: Option<Compiled>,
    pub db: Option<String>,
    /// An administration statement (run through `admin::try_execute`).
    pub admin: bool,
    /// The session's privilege epoch `compiled` was checked under (see [`PrivCache`]).
    pub priv_epoch: u64,
    /// The tables `compiled` uses, recorded for the open transaction at each execution of
    /// the cached plan (`crate::table_locks`).
    pub uses: Vec<crate::guard::TableUse>,
}

const STMT_SAVEPOINT: &str = "\u{1}stmt";

/// Times one statement and takes the rows it examined (`crate::querylog`'s thread totals).
struct RunClock {
    at: std::time::Instant,
    start: u64,
    examined: (u64, u64),
}

impl RunClock {
    fn start() -> RunClock {
        RunClock {
            at: std::time::Instant::now(),
            start: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            examined: crate::querylog::examined(),
        }
    }

    fn stop(self) -> crate::querylog::StatementRun {
        let (rows, scans) = crate::querylog::examined();
        crate::querylog::StatementRun {
            text: 0..0,
            start: self.start,
            took: self.at.elapsed().as_secs_f64(),
            rows_examined: rows.wrapping_sub(self.examined.0),
            no_index: scans != self.examined.1,
            admin: false,
            slow: false,
            expanded: None,
            db: None,
        }
    }
}

/// A client session: the execution context its statements run in, plus what only the
/// session's dispatch needs (prepared statements, the multi-statement flag). Dereferences to
/// its [`ExecContext`].
pub struct Session {
    cx: ExecContext,
    multi_statements: bool,
    prepared: HashMap<u32, Prepared>,
    next_stmt_id: u32,
    /// SQL-level prepared statements: name (lower case) -> id in `prepared`
    /// (`sql_prepare.rs`).
    sql_names: HashMap<String, u32>,
    /// The statements the last COM_QUERY / COM_STMT_EXECUTE ran, for the slow log
    /// (`crate::querylog`).
    runs: Vec<crate::querylog::StatementRun>,
    /// The expanded text of the SQL-level EXECUTE the current statement ran (`sql_prepare`).
    expanded: Option<String>,
}

impl std::ops::Deref for Session {
    type Target = ExecContext;
    fn deref(&self) -> &ExecContext {
        &self.cx
    }
}

impl std::ops::DerefMut for Session {
    fn deref_mut(&mut self) -> &mut ExecContext {
        &mut self.cx
    }
}

impl Session {
    pub fn new(server: Arc<Server>, connection_id: u32, user: &str, host: &str) -> Session {
        let mut cx = ExecContext::new(server, connection_id, user, host);
        // SET GLOBAL gtid_domain_id reaches new sessions.
        crate::sysvar::replica::refresh_origin(&mut cx);
        Session {
            cx,
            multi_statements: true,
            prepared: HashMap::new(),
            next_stmt_id: 1,
            sql_names: HashMap::new(),
            runs: Vec::new(),
            expanded: None,
        }
    }

    pub fn server(&self) -> &Arc<Server> {
        &self.cx.server
    }

    pub fn connection_id(&self) -> u32 {
        self.cx.connection_id
    }

    pub fn user(&self) -> &str {
        &self.cx.user
    }

    /// Installs the client-liveness probe the running statements poll (see
    /// [`StatementGuard::check`]): false once the client is gone.
    pub fn set_liveness_probe(&mut self, probe: Probe) {
        self.cx.guard.set_probe(probe);
    }

    /// Gives the session its connection's byte counters (its session `Bytes_received` /
    /// `Bytes_sent`), which the protocol layer keeps.
    pub fn set_traffic(&mut self, traffic: Arc<crate::status::Traffic>) {
        self.cx.traffic = Some(traffic);
    }

    /// True once `KILL [CONNECTION]` named this session's connection, or its client was
    /// found gone while a statement ran: the connection closes without a reply.
    pub fn connection_killed(&self) -> bool {
        self.cx.guard.control().connection_killed()
    }

    /// Arms the statement guard with the session's limits (`max_statement_time`,
    /// `max_session_mem_used`, `max_allowed_packet`) and shows `text` in PROCESSLIST.
    fn begin_guard(&mut self, text: &str) {
        let int = |v: Option<&Value>| match v {
            Some(Value::Int(i)) => Some(*i as u64),
            Some(Value::UInt(u)) => Some(*u),
            _ => None,
        };
        let secs = match self.cx.vars.get("max_statement_time") {
            Some(Value::Decimal(d)) => d.parse::<f64>().unwrap_or(0.0),
            v => int(v).unwrap_or(0) as f64,
        };
        let mem = int(self.cx.vars.get("max_session_mem_used"))
            .unwrap_or(self.cx.server.config.max_session_mem_used);
        let packet = int(self.cx.vars.get("max_allowed_packet"))
            .unwrap_or(u64::from(self.cx.server.config.max_allowed_packet));
        let timeout = (secs > 0.0).then(|| std::time::Duration::from_secs_f64(secs));
        let gc = int(self.cx.vars.get("group_concat_max_len")).unwrap_or(1 << 20);
        self.cx.guard.begin(text, timeout, mem, packet);
        self.cx.guard.set_group_concat_max(gc);
        self.cx.table_locks.statement_begin();
    }

    /// Disarms the guard: its warnings join the diagnostics area (and an OK packet's count).
    fn end_guard(&mut self, r: &mut Result<Output, SqlError>) {
        self.cx.debug_check();
        self.cx
            .table_locks
            .statement_end(self.cx.txn.is_some(), r.is_err());
        self.cx.guard.end(&mut self.cx.warnings);
        // `sql_notes=0`, or `note_verbosity` without `basic`: the statement's notes are not
        // recorded (MariaDB's rule; dumps set sql_notes).
        if !self.cx.warnings.is_empty() && !crate::sysvar::notes_recorded(&self.cx) {
            self.cx.warnings.retain(|(level, _, _)| level != "Note");
        }
        let n = self.warning_count();
        if let Ok(Output::Ok { warnings, .. }) = r {
            *warnings = n;
        }
    }

    /// Starts an engine transaction; `locks`: it may wait for row locks, so it gets the
    /// session's `innodb_lock_wait_timeout`.
    fn begin_txn(&self, locks: bool) -> Transaction {
        let mut t = self.server.engine.begin();
        if locks {
            t.set_lock_wait_timeout(crate::sysvar::lock_wait_timeout(self));
        }
        t
    }

    pub fn set_multi_statements(&mut self, on: bool) {
        self.multi_statements = on;
    }

    pub fn use_database(&mut self, db: &str) -> Result<(), SqlError> {
        let r = self.use_database_inner(db);
        self.note_error(&r);
        r
    }

    fn use_database_inner(&mut self, db: &str) -> Result<(), SqlError> {
        if crate::infoschema::is_database(db) {
            // Every account may use it (MariaDB names it in lower case).
            return self.enter_database(crate::infoschema::DATABASE);
        }
        let cat = self.cx.server.engine.catalog();
        self.cx.privs.refresh(&cat, &self.cx.user, &self.cx.host);
        // MariaDB checks the privilege first: an unknown database is 1044 too without one.
        self.cx
            .privs
            .check_some_on_db(&self.cx.user, &self.cx.host, db)?;
        if !cat.has_database(db) && !crate::mysqlschema::is_database(db) {
            return Err(SqlError::unknown_database(db));
        }
        drop(cat);
        self.enter_database(db)
    }

    fn enter_database(&mut self, db: &str) -> Result<(), SqlError> {
        self.cx.current_db = Some(db.to_string());
        let id = self.cx.connection_id;
        let d = db.to_string();
        self.cx.server.update_connection(id, |c| c.db = Some(d));
        Ok(())
    }

    pub fn field_list(&mut self, table: &str, wildcard: &str) -> Result<Vec<Column>, SqlError> {
        let db = self
            .cx
            .current_db
            .clone()
            .ok_or_else(SqlError::no_database)?;
        self.refresh_privileges();
        let t = if crate::infoschema::is_database(&db) {
            Arc::new(crate::infoschema::InfoTable::named(table)?.table_def())
        } else {
            self.check_table_privilege(&db, table, crate::privilege::SELECT)?;
            let cat = self.cx.server.engine.catalog();
            cat.table_by_name(&db, table)
                .cloned()
                .ok_or_else(|| SqlError::no_such_table(&db, table))?
        };
        let t = &*t;
        let pat = wildcard.to_ascii_lowercase();
        let mut out = Vec::new();
        for (i, c) in t.columns.iter().enumerate() {
            if !pat.is_empty()
                && pat != "%"
                && !c
                    .name
                    .to_ascii_lowercase()
                    .starts_with(pat.trim_end_matches('%'))
            {
                continue;
            }
            out.push(plan::select::table_column(t, i, &t.name, &c.name));
        }
        Ok(out)
    }

    pub fn reset(&mut self) {
        admin::reload::end_session(&mut self.cx);
        if let Some(t) = self.cx.txn.take() {
            t.rollback();
        }
        // A running backup ends, as MariaDB's THD::cleanup does; so do table locks.
        self.cx.backup = None;
        self.cx.binlog_snapshot = None;
        self.cx.table_locks.unlock_tables();
        self.cx.table_locks.unlock_global_read();
        self.cx.table_locks.statement_end(false, false);
        self.cx.explicit = false;
        self.cx.read_only = false;
        self.cx.autocommit = true;
        self.cx.user_vars.clear();
        self.cx.warnings.clear();
        self.prepared.clear();
        self.sql_names.clear();
        self.cx.last_insert_id = 0;
        self.cx.found_rows = 0;
        self.cx.vars = SessionVars::new(&self.cx.server.globals);
        crate::sysvar::replica::refresh_origin(&mut self.cx);
    }

    pub fn change_user(&mut self, user: &str, db: Option<&str>) -> Result<(), SqlError> {
        self.reset();
        self.cx.user = user.to_string();
        self.cx.privs = PrivCache::new(self.cx.server.engine.catalog(), user, &self.cx.host);
        self.cx.current_db = None;
        if let Some(d) = db {
            self.use_database(d)?;
        }
        Ok(())
    }

    /// COM_QUERY.
    pub fn query(&mut self, sql: &str) -> Vec<Result<Output, SqlError>> {
        self.runs.clear();
        let pieces = parse::split_statements(sql);
        if pieces.is_empty() {
            return vec![Err(SqlError::of(errors::ER_EMPTY_QUERY, "Query was empty"))];
        }
        if pieces.len() > 1 && !self.multi_statements {
            return vec![Err(SqlError::syntax(pieces[1]))];
        }
        let mut out = Vec::with_capacity(pieces.len());
        let multi = pieces.len() > 1;
        for p in pieces {
            let began = RunClock::start();
            self.expanded = None;
            let mut r = self.run_piece(p);
            let mut run = began.stop();
            run.expanded = self.expanded.take();
            run.text = crate::querylog::piece_text(sql, p);
            run.admin = crate::querylog::is_admin_statement(p);
            run.slow = crate::sysvar::is_slow(&self.cx, &run);
            if multi {
                run.db = Some(self.cx.current_db.clone().unwrap_or_default());
            }
            self.runs.push(run);
            crate::sysvar::results_charset(&self.cx, &mut r);
            self.note_error(&r);
            let stop = r.is_err();
            out.push(r);
            if stop {
                break;
            }
        }
        out
    }

    /// The statements the last COM_QUERY (one per statement run) or COM_STMT_EXECUTE (one)
    /// ran: their text, times and rows examined, for the slow log.
    pub fn statement_runs(&self) -> &[crate::querylog::StatementRun] {
        &self.runs
    }

    /// Writes a general log line for this session (unless the log is off or the session set
    /// `sql_log_off`).
    pub(crate) fn log_general(&self, command: &str, argument: &str) {
        let logs = &self.cx.server.query_logs;
        if logs.general_on() && !crate::sysvar::sql_log_off(&self.cx) {
            logs.general(self.cx.connection_id, command, argument);
        }
    }

    /// The text prepared statement `stmt_id` is logged as when run with `params`
    /// (`crate::querylog::expand_params`); None for an unknown statement.
    pub fn expanded_statement(&self, stmt_id: u32, params: &[Value]) -> Option<String> {
        let p = self.prepared.get(&stmt_id)?;
        Some(crate::querylog::expand_params(&p.sql, params))
    }

    /// One statement of a COM_QUERY, under its statement guard (and, for `SET STATEMENT ...
    /// FOR`, with its variables set for it alone).
    fn run_piece(&mut self, sql: &str) -> Result<Output, SqlError> {
        let (saved, text) = match admin::set_statement(self, sql) {
            None => (None, sql),
            Some(Ok((saved, inner))) => (Some(saved), inner),
            Some(Err(e)) => return Err(e),
        };
        self.begin_guard(sql);
        let mut r = self.in_origin(|s| s.run_text(text));
        self.end_guard(&mut r);
        if let Some(v) = saved {
            self.cx.vars = v;
            crate::sysvar::replica::refresh_origin(&mut self.cx);
        }
        r
    }

    /// Runs `f` in the origin scope of the session's GTID variables when one differs from the
    /// server's default (the common case runs `f` directly: no scope, no allocation), then
    /// gives back a fixed `gtid_seq_no` a commit used.
    fn in_origin<R>(&mut self, f: impl FnOnce(&mut Self) -> R) -> R {
        let Some(origin) = self.cx.origin else {
            return f(self);
        };
        let engine = self.cx.server.engine.clone();
        let (r, after) = engine.with_origin(origin, || f(self));
        crate::sysvar::replica::origin_used(&mut self.cx, after);
        r
    }

    fn run_text(&mut self, sql: &str) -> Result<Output, SqlError> {
        self.begin_statement_time();
        crate::expr::set_div_precision_increment(crate::sysvar::div_precision_increment(&self.cx));
        let server = self.cx.server.clone();
        server.registry.question();
        let _running = server.status.running();
        if sql.contains("/*") {
            if let Some(e) = parse::unclosed_comment(sql) {
                return Err(e);
            }
        }
        if let Some(r) = admin::reload::try_execute(&mut self.cx, sql) {
            return r;
        }
        if !is_core_statement(sql) {
            if let Some(r) = self.sql_prepared(sql) {
                return r;
            }
            if crate::parse::view::maybe_view(sql) {
                self.refresh_privileges();
                if let Some(r) = crate::execute::view::try_execute(self, sql) {
                    return r;
                }
            }
            // Versioned comments (`/*!40101 SET ... */`, as dumps write them) unwrapped first:
            // the administration parser skips every comment.
            let unwrapped = parse::strip_comments(sql);
            if let Some(r) = admin::try_execute(self, &unwrapped) {
                return r;
            }
        }
        let fast = parse::fast_insert::scan(sql);
        // An INSERT into a view goes the general way (`plan::view_dml`).
        let fast = fast.filter(|i| plan::view_dml::target_view(self, &i.table).is_none());
        if let Some(ins) = fast {
            // A bulk INSERT of literals: the plan the general path below would build.
            self.refresh_privileges();
            let c = Compiled::Insert(Box::new(plan::dml::compile_literal_insert(self, ins)?));
            self.begin_diagnostics(&c, sql);
            return self.run_compiled(&c, &[]);
        }
        let parsed = parse::parse_statement(sql)?;
        if matches!(parsed, Parsed::Sql(..) | Parsed::Alter(..)) {
            self.refresh_privileges();
        }
        self.run_parsed(&parsed, sql, &[], None)
    }

    /// COM_STMT_PREPARE.
    pub fn prepare(&mut self, sql: &str) -> Result<PreparedInfo, SqlError> {
        let r = self.prepare_inner(sql);
        self.note_error(&r);
        r
    }

    fn prepare_inner(&mut self, sql: &str) -> Result<PreparedInfo, SqlError> {
        self.cx.server.status.com(ComKind::StmtPrepare);
        let pieces = parse::split_statements(sql);
        if pieces.len() != 1 {
            return Err(SqlError::syntax(pieces.get(1).copied().unwrap_or("")));
        }
        let text = pieces[0];
        if !is_core_statement(text)
            && crate::parse::admin::parse(&parse::strip_comments(text)).is_some()
        {
            // An administration statement: run by the admin layer at each execution.
            let id = self.next_stmt_id;
            self.next_stmt_id = self.next_stmt_id.wrapping_add(1).max(1);
            self.prepared.insert(
                id,
                Prepared {
                    sql: Arc::from(text),
                    parsed: Arc::new(Parsed::Empty),
                    params: 0,
                    compiled: None,
                    db: self.cx.current_db.clone(),
                    admin: true,
                    priv_epoch: 0,
                    uses: Vec::new(),
                },
            );
            return Ok(PreparedInfo {
                stmt_id: id,
                params: 0,
                columns: Vec::new(),
            });
        }
        let parsed = parse::parse_statement(text)?;
        let params = match &parsed {
            Parsed::Sql(s, _) => parse::count_placeholders(s),
            _ => 0,
        };
        self.refresh_privileges();
        let (compiled, uses) = match &parsed {
            Parsed::Sql(s, lock) => self.compile_capturing(s, *lock)?,
            _ => (None, Vec::new()),
        };
        let columns = match &compiled {
            Some(Compiled::Select(p)) if p.into.is_empty() => p.columns.clone(),
            Some(Compiled::Insert(p)) => p
                .returning
                .as_ref()
                .map_or(Vec::new(), |r| r.columns.clone()),
            Some(Compiled::Delete(p)) => p
                .returning
                .as_ref()
                .map_or(Vec::new(), |r| r.columns.clone()),
            _ => Vec::new(),
        };
        let id = self.next_stmt_id;
        self.next_stmt_id = self.next_stmt_id.wrapping_add(1).max(1);
        self.prepared.insert(
            id,
            Prepared {
                sql: Arc::from(text),
                parsed: Arc::new(parsed),
                params,
                compiled,
                db: self.cx.current_db.clone(),
                admin: false,
                priv_epoch: self.cx.privs.epoch(),
                uses,
            },
        );
        Ok(PreparedInfo {
            stmt_id: id,
            params: params.min(u16::MAX as usize) as u16,
            columns,
        })
    }

    /// COM_STMT_EXECUTE.
    pub fn execute(&mut self, stmt_id: u32, params: &[Value]) -> Result<Output, SqlError> {
        let sql = self.prepared.get(&stmt_id).map(|p| p.sql.clone());
        self.begin_guard(sql.as_deref().unwrap_or(""));
        let began = RunClock::start();
        let mut r = self.in_origin(|s| s.execute_inner(stmt_id, params));
        let mut run = began.stop();
        run.admin = sql
            .as_deref()
            .is_some_and(crate::querylog::is_admin_statement);
        run.slow = crate::sysvar::is_slow(&self.cx, &run);
        self.runs.clear();
        self.runs.push(run);
        self.end_guard(&mut r);
        crate::sysvar::results_charset(&self.cx, &mut r);
        self.note_error(&r);
        r
    }

    fn execute_inner(&mut self, stmt_id: u32, params: &[Value]) -> Result<Output, SqlError> {
        self.begin_statement_time();
        crate::expr::set_div_precision_increment(crate::sysvar::div_precision_increment(&self.cx));
        let server = self.cx.server.clone();
        server.registry.question();
        server.status.com(ComKind::StmtExecute);
        let _running = server.status.running();
        let Some(p) = self.prepared.get(&stmt_id) else {
            return Err(SqlError::unknown_statement(stmt_id, "mysqld_stmt_execute"));
        };
        if params.len() != p.params {
            return Err(SqlError::wrong_arguments("mysqld_stmt_execute"));
        }
        if p.admin {
            let sql = p.sql.clone();
            let unwrapped = parse::strip_comments(&sql);
            return admin::try_execute(self, &unwrapped)
                .unwrap_or_else(|| Err(SqlError::syntax(&sql)));
        }
        // Grants may have changed since the plan was checked: bring the privilege cache up to
        // date (a pointer comparison when the catalog is unchanged).
        let cat = self.cx.server.engine.catalog();
        self.cx.privs.refresh(&cat, &self.cx.user, &self.cx.host);
        let epoch = self.cx.privs.epoch();
        let Some(p) = self.prepared.get_mut(&stmt_id) else {
            return Err(SqlError::unknown_statement(stmt_id, "mysqld_stmt_execute"));
        };
        // Revalidate the cached plan: same database, unchanged table definition, and
        // privileges checked under the account's current grants.
        let mut compiled = p.compiled.take();
        let parsed = p.parsed.clone();
        let sql = p.sql.clone();
        let stale = match &compiled {
            Some(c) => {
                p.db != self.cx.current_db
                    || p.priv_epoch != epoch
                    || c.through_view()
                    // Compiling checks table locks (`crate::table_locks`): while any exists
                    // or the statement began while one did (it is live), a cached plan is
                    // compiled again.
                    || self.cx.table_locks.slow()
                    || c.table()
                        .is_some_and(|t| cat.table(t.id).is_none_or(|cur| !Arc::ptr_eq(cur, t)))
            }
            None => false,
        };
        drop(cat);
        if stale {
            compiled = None;
            let mut uses = Vec::new();
            if let Parsed::Sql(s, lock) = &*parsed {
                (compiled, uses) = self.compile_capturing(s, *lock)?;
            }
            if let Some(p) = self.prepared.get_mut(&stmt_id) {
                p.db = self.cx.current_db.clone();
                p.priv_epoch = epoch;
                p.uses = uses;
            }
        } else if compiled.is_some() && (!self.cx.autocommit || self.cx.explicit) {
            // The cached plan's tables join the open transaction's uses, as compiling would.
            if let Some(p) = self.prepared.get(&stmt_id) {
                self.cx.table_locks.record_all(&p.uses);
            }
        }
        let r = self.run_parsed(&parsed, &sql, params, compiled.as_ref());
        if let Some(p) = self.prepared.get_mut(&stmt_id) {
            p.compiled = compiled;
        }
        r
    }

    pub fn close_statement(&mut self, stmt_id: u32) {
        self.cx.server.status.com(ComKind::StmtClose);
        self.prepared.remove(&stmt_id);
    }

    pub fn reset_statement(&mut self, stmt_id: u32) -> Result<(), SqlError> {
        self.cx.server.status.com(ComKind::StmtReset);
        if self.prepared.contains_key(&stmt_id) {
            Ok(())
        } else {
            Err(SqlError::unknown_statement(stmt_id, "mysqld_stmt_reset"))
        }
    }

    /// [`compile`](Self::compile) for a prepared statement: with the tables its plan uses.
    fn compile_capturing(
        &self,
        s: &Statement,
        lock: LockClause,
    ) -> Result<(Option<Compiled>, Vec<crate::guard::TableUse>), SqlError> {
        self.cx.table_locks.start_capture();
        let r = self.compile(s, lock);
        let uses = self.cx.table_locks.take_capture();
        Ok((r?, uses))
    }

    /// Compiles DML/SELECT statements (None for the others).
    fn compile(&self, s: &Statement, lock: LockClause) -> Result<Option<Compiled>, SqlError> {
        if !self.cx.table_locks.locked().is_empty() {
            crate::table_locks::check_statement(
                s,
                self.cx.current_db.as_deref(),
                self.cx.table_locks.locked(),
            )?;
        }
        Ok(Some(match s {
            Statement::Query(q) => {
                Compiled::Select(Box::new(plan::select::compile(self, q, lock)?))
            }
            Statement::Insert(i) => Compiled::Insert(Box::new(plan::dml::compile_insert(self, i)?)),
            Statement::Update(u) if plan::multi_dml::is_multi_update(u) => {
                if plan::dml::update_ignore(u)? {
                    return Err(SqlError::unsupported("UPDATE IGNORE of several tables"));
                }
                Compiled::Multi(Box::new(plan::multi_dml::compile_multi_update(self, u)?))
            }
            Statement::Delete(d) if plan::multi_dml::is_multi_delete(d) => {
                if plan::dml::delete_ignore(d) {
                    return Err(SqlError::unsupported("DELETE IGNORE of several tables"));
                }
                Compiled::Multi(Box::new(plan::multi_dml::compile_multi_delete(self, d)?))
            }
            Statement::Update(u) => match plan::dml::compile_update_any(self, u)? {
                plan::dml::UpdateKind::Single(p) => Compiled::Update(p),
                plan::dml::UpdateKind::Multi(p) => Compiled::Multi(p),
            },
            Statement::Delete(d) => Compiled::Delete(Box::new(plan::dml::compile_delete(self, d)?)),
            _ => return Ok(None),
        }))
    }

    fn run_parsed(
        &mut self,
        parsed: &Parsed,
        sql: &str,
        params: &[Value],
        compiled: Option<&Compiled>,
    ) -> Result<Output, SqlError> {
        match parsed {
            // A statement of comments only (`/* ... */`, a versioned comment newer than
            // onelog): MariaDB 10.11.14 answers OK; an empty COM_QUERY is 1065 (`query`).
            Parsed::Empty => {
                self.cx.warnings.clear();
                Ok(affected(0))
            }
            Parsed::Txn(t) => {
                self.cx.warnings.clear();
                self.run_txn(t)
            }
            Parsed::Alter(a) => {
                self.cx.warnings.clear();
                self.cx.server.status.com(ComKind::AlterTable);
                crate::sysvar::replica::check_read_only(&self.cx)?;
                let text = parse::strip_comments(sql);
                self.alter_table(&a.name, &a.operations, &a.table, text.trim())
            }
            Parsed::Sql(stmt, lock) => match compiled {
                Some(c) => {
                    self.begin_diagnostics(c, sql);
                    self.run_compiled(c, params)
                }
                None => match self.compile(stmt, *lock)? {
                    Some(c) => {
                        self.begin_diagnostics(&c, sql);
                        self.run_compiled(&c, params)
                    }
                    None => {
                        self.cx.warnings.clear();
                        self.run_other(stmt, sql)
                    }
                },
            },
        }
    }

    /// Clears the previous statement's conditions, except for a statement that uses no
    /// table and reads the diagnostics variables (`SELECT @@warning_count`,
    /// `@@error_count`): like SHOW WARNINGS it reports the previous statement's.
    fn begin_diagnostics(&mut self, c: &Compiled, sql: &str) {
        if self.cx.warnings.is_empty() {
            return;
        }
        if c.table().is_some() || !reads_diagnostics(sql) {
            self.cx.warnings.clear();
        }
    }

    /// `COMMIT AND CHAIN` / `ROLLBACK AND CHAIN`: a new explicit transaction, with the
    /// access mode of the one that ended (MariaDB's trans_begin after the commit), also under
    /// autocommit.
    fn chain_transaction(&mut self, read_only: bool) {
        let txn = self.begin_txn(true);
        self.cx.txn = Some(txn);
        self.cx.explicit = true;
        self.cx.read_only = read_only;
    }

    fn run_txn(&mut self, t: &TxnStmt) -> Result<Output, SqlError> {
        self.cx.server.status.com(match t {
            TxnStmt::Begin { .. } => ComKind::Begin,
            TxnStmt::Commit { .. } => ComKind::Commit,
            TxnStmt::Rollback { .. } => ComKind::Rollback,
            TxnStmt::Savepoint(_) => ComKind::Savepoint,
            TxnStmt::RollbackTo(_) => ComKind::RollbackToSavepoint,
            TxnStmt::Release(_) => ComKind::ReleaseSavepoint,
        });
        match t {
            TxnStmt::Begin {
                read_only,
                consistent,
            } => {
                self.commit()?;
                // START TRANSACTION / BEGIN releases the table locks, as in MariaDB.
                self.cx.table_locks.unlock_tables();
                let mut txn = self.begin_txn(true);
                if *consistent {
                    let lsn = txn.take_snapshot();
                    self.cx.binlog_snapshot = Some(admin::binlog::snapshot_position(&self.cx, lsn));
                }
                self.cx.txn = Some(txn);
                self.cx.explicit = true;
                self.cx.read_only = *read_only;
            }
            TxnStmt::Commit { chain } => {
                let read_only = self.cx.read_only;
                self.commit()?;
                if *chain {
                    self.chain_transaction(read_only);
                }
            }
            TxnStmt::Rollback { chain } => {
                let read_only = self.cx.read_only;
                self.rollback();
                if *chain {
                    self.chain_transaction(read_only);
                }
            }
            TxnStmt::Savepoint(n) => {
                if let Some(t) = self.cx.txn.as_mut() {
                    t.savepoint(n);
                } else if !self.cx.autocommit {
                    let mut t = self.begin_txn(true);
                    t.savepoint(n);
                    self.cx.txn = Some(t);
                }
            }
            TxnStmt::RollbackTo(n) => match self.cx.txn.as_mut() {
                Some(t) => t.rollback_to_savepoint(n)?,
                None => {
                    return Err(SqlError::of(
                        errors::ER_SP_DOES_NOT_EXIST,
                        format!("SAVEPOINT {n} does not exist"),
                    ))
                }
            },
            TxnStmt::Release(n) => match self.cx.txn.as_mut() {
                Some(t) => t.release_savepoint(n)?,
                None => {
                    return Err(SqlError::of(
                        errors::ER_SP_DOES_NOT_EXIST,
                        format!("SAVEPOINT {n} does not exist"),
                    ))
                }
            },
        }
        Ok(Output::ok())
    }

    /// Runs a compiled statement in the session's transaction (or its own one).
    fn run_compiled(&mut self, c: &Compiled, params: &[Value]) -> Result<Output, SqlError> {
        self.cx.server.status.com(c.com_kind());
        let writes = !matches!(c, Compiled::Select(_));
        if writes {
            crate::sysvar::replica::check_read_only(&self.cx)?;
        }
        if writes && self.cx.read_only && self.cx.txn.is_some() {
            return Err(SqlError::of(
                errors::ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION,
                "Cannot execute statement in a READ ONLY transaction",
            ));
        }
        let own = self.cx.txn.is_none() && self.cx.autocommit;
        let locks = writes || matches!(c, Compiled::Select(p) if p.lock.is_some());
        let mut txn = match self.cx.txn.take() {
            Some(mut t) => {
                // READ COMMITTED: each statement sees the latest committed state.
                if crate::sysvar::read_committed(self) {
                    t.refresh_snapshot();
                }
                t
            }
            None => self.begin_txn(locks || !self.cx.autocommit),
        };
        let guarded = !own && writes;
        if guarded {
            txn.savepoint(STMT_SAVEPOINT);
        }
        // NOWAIT / WAIT n / SKIP LOCKED: this statement's locking reads only (reset below).
        let (lock_wait, skip_locked) = match c {
            Compiled::Select(p) => (p.lock_wait, p.skip_locked),
            _ => (None, false),
        };
        if let Some(d) = lock_wait {
            txn.set_lock_wait_timeout(d);
        }
        txn.set_skip_locked(skip_locked);
        // Conditions left by an earlier evaluation outside a statement are not this one's.
        drop(crate::expr::take_warnings());
        // SELECT ... INTO: the row to assign once the statement succeeded.
        let mut into_row = None;
        let r = {
            let env = Env {
                cx: self,
                params,
                insert_row: None,
                coll: crate::expr::connection_collation(self),
                subq: None,
            };
            match c {
                Compiled::Select(p) if !p.into.is_empty() => crate::execute::subquery::execute(
                    p, &mut txn, &env,
                )
                .and_then(|(rows, found)| {
                    into_row = select::into_row(rows)?;
                    let n = u64::from(into_row.is_some());
                    Ok((Output::ok_affected(n), Some(found), None))
                }),
                Compiled::Select(p) => {
                    crate::execute::subquery::execute(p, &mut txn, &env).map(|(rows, found)| {
                        (
                            Output::rows(select::result_columns(p, &rows), rows),
                            Some(found),
                            None,
                        )
                    })
                }
                Compiled::Insert(p) => dml::execute_insert(p, &mut txn, &env)
                    .map(|d| dml_out(d, p.returning.as_deref())),
                Compiled::Update(p) => {
                    dml::execute_update(p, &mut txn, &env).map(|d| dml_out(d, None))
                }
                Compiled::Delete(p) => dml::execute_delete(p, &mut txn, &env)
                    .map(|d| dml_out(d, p.returning.as_deref())),
                Compiled::Multi(p) => crate::execute::multi_dml::execute_multi(p, &mut txn, &env)
                    .map(|d| dml_out(d, None)),
            }
        };
        if lock_wait.is_some() {
            txn.set_lock_wait_timeout(crate::sysvar::lock_wait_timeout(self));
        }
        if skip_locked {
            txn.set_skip_locked(false);
        }
        // Strict mode with ERROR_FOR_DIVISION_BY_ZERO: a division by zero in INSERT/UPDATE
        // fails the statement (its changes are rolled back below).
        let r = match r {
            Ok(_)
                if writes
                    && crate::expr::has_warning(1365)
                    && crate::sysvar::division_by_zero_is_error(self) =>
            {
                drop(crate::expr::take_warnings());
                Err(SqlError::of(errors::ER_DIVISION_BY_ZERO, "Division by 0"))
            }
            other => other,
        };
        match r {
            Ok((out, found, extra)) => {
                if own {
                    self.cx.wait_commit_allowed(&txn)?;
                    let ctl = self.cx.guard.control();
                    txn.commit_interruptible(&crate::guard::CommitWait::new(ctl))?;
                } else {
                    if guarded {
                        let _ = txn.release_savepoint(STMT_SAVEPOINT);
                    }
                    self.cx.txn = Some(txn);
                }
                if let Some(f) = found {
                    self.cx.found_rows = f;
                    self.cx.row_count = -1;
                }
                if let (Compiled::Select(p), Some(row)) = (c, into_row) {
                    debug_assert_eq!(p.into.len(), row.len());
                    for (name, v) in p.into.iter().zip(row) {
                        self.cx.user_vars.insert(name.clone(), v);
                    }
                }
                if let Some((id, warnings, affected)) = extra {
                    if let Some(id) = id {
                        self.cx.last_insert_id = id;
                    }
                    self.cx.row_count = affected as i64;
                    self.cx.warnings = warnings;
                }
                // Conditions raised by expressions (CAST truncation, division by zero).
                self.cx.warnings.extend(crate::expr::take_warnings());
                Ok(out.with_warning_count(self.warning_count()))
            }
            Err(e) => {
                if e.code == 1213 {
                    // The engine rolled the whole transaction back.
                    txn.rollback();
                    self.cx.explicit = false;
                    self.cx.read_only = false;
                    debug_assert!(self.cx.txn.is_none(), "1213 ends the whole transaction");
                } else if own {
                    txn.rollback();
                } else {
                    if guarded {
                        let _ = txn.rollback_to_savepoint(STMT_SAVEPOINT);
                        let _ = txn.release_savepoint(STMT_SAVEPOINT);
                    }
                    self.cx.txn = Some(txn);
                }
                Err(e)
            }
        }
    }

    /// `DROP TEMPORARY TABLE`: onelog has no temporary tables, so it answers as MariaDB does
    /// for names that are not temporary tables (never dropping the base table of that name).
    fn drop_temporary(
        &mut self,
        if_exists: bool,
        names: &[ast::ObjectName],
    ) -> Result<Output, SqlError> {
        self.commit()?;
        let db = self.cx.current_db.clone().unwrap_or_default();
        let list: Vec<String> = names
            .iter()
            .map(|n| match crate::expr::object_name_parts(n).as_slice() {
                [t] => format!("{db}.{t}"),
                p => p.join("."),
            })
            .collect();
        let msg = format!("Unknown table '{}'", list.join(","));
        if !if_exists {
            return Err(SqlError::of(errors::ER_BAD_TABLE_ERROR, msg));
        }
        self.cx.warnings.push(("Note".into(), 1051, msg));
        Ok(Output::ok().with_warning_count(self.warning_count()))
    }

    /// CREATE TABLE (LIKE, ... SELECT), with the conditions CREATE TABLE ... SELECT raises
    /// (note 1050, conversions, duplicates skipped).
    fn create_table(&mut self, ct: &ast::CreateTable, text: &str) -> Result<Output, SqlError> {
        self.commit()?;
        drop(crate::expr::take_warnings());
        let out = crate::execute::ddl::create_table(self, ct, text)?;
        self.cx.warnings.extend(crate::expr::take_warnings());
        Ok(out.with_warning_count(self.warning_count()))
    }

    /// ALTER TABLE (sqlparser's operations and [`parse::alter_ops`]'s).
    fn alter_table(
        &mut self,
        name: &ast::ObjectName,
        operations: &[ast::AlterTableOperation],
        table: &parse::alter_ops::TableOps,
        text: &str,
    ) -> Result<Output, SqlError> {
        self.commit()?;
        drop(crate::expr::take_warnings());
        crate::execute::alter::alter_table(self, name, operations, table, text)?;
        // The copy's conditions (`execute::alter` raises them as evaluation ones).
        self.cx.warnings.extend(crate::expr::take_warnings());
        // A lone RENAME sends no info text (MariaDB 10.11.14).
        let rename = table.is_empty()
            && matches!(operations, [ast::AlterTableOperation::RenameTable { .. }]);
        Ok(match rename {
            true => Output::ok(),
            false => Output::table_altered(self.warning_count()),
        })
    }

    /// Non-DML statements: DDL, USE.
    // Long: one arm per statement kind.
    fn run_other(&mut self, stmt: &Statement, sql: &str) -> Result<Output, SqlError> {
        let text = parse::strip_comments(sql);
        let text = text.trim();
        self.cx.server.status.com(match stmt {
            Statement::Use(_) => ComKind::ChangeDb,
            Statement::CreateDatabase { .. } | Statement::CreateSchema { .. } => ComKind::CreateDb,
            Statement::CreateTable(_) => ComKind::CreateTable,
            Statement::CreateIndex(_) => ComKind::CreateIndex,
            Statement::AlterTable(_) => ComKind::AlterTable,
            Statement::Truncate(_) => ComKind::TruncateTable,
            Statement::Drop { object_type, .. } => match object_type {
                ast::ObjectType::Database | ast::ObjectType::Schema => ComKind::DropDb,
                ast::ObjectType::Index => ComKind::DropIndex,
                _ => ComKind::DropTable,
            },
            _ => ComKind::Other,
        });
        if matches!(
            stmt,
            Statement::CreateDatabase { .. }
                | Statement::CreateSchema { .. }
                | Statement::CreateTable(_)
                | Statement::CreateIndex(_)
                | Statement::AlterTable(_)
                | Statement::Truncate(_)
                | Statement::Drop { .. }
        ) {
            crate::sysvar::replica::check_read_only(&self.cx)?;
        }
        match stmt {
            Statement::Use(u) => {
                let s = u.to_string();
                let name = s
                    .split_whitespace()
                    .last()
                    .unwrap_or("")
                    .trim_matches('`')
                    .to_string();
                self.use_database(&name)?;
                Ok(Output::ok())
            }
            Statement::CreateDatabase {
                db_name,
                if_not_exists,
                ..
            } => {
                self.commit()?;
                drop(crate::expr::take_warnings());
                let n = crate::execute::ddl::create_database(self, db_name, *if_not_exists, text)?;
                self.cx.warnings.extend(crate::expr::take_warnings());
                Ok(affected(n).with_warning_count(self.warning_count()))
            }
            Statement::CreateSchema {
                schema_name,
                if_not_exists,
                ..
            } => {
                self.commit()?;
                let name = ast::ObjectName(vec![ast::ObjectNamePart::Identifier(ast::Ident::new(
                    schema_name.to_string().trim_matches('`'),
                ))]);
                drop(crate::expr::take_warnings());
                let n = crate::execute::ddl::create_database(self, &name, *if_not_exists, text)?;
                self.cx.warnings.extend(crate::expr::take_warnings());
                Ok(affected(n).with_warning_count(self.warning_count()))
            }
            Statement::CreateTable(ct) => self.create_table(ct, text),
            Statement::RenameTable(pairs) => {
                if !self.cx.table_locks.locked().is_empty() {
                    return Err(admin::table_lock::lock_or_active_transaction());
                }
                self.commit()?;
                let pairs: Vec<_> = pairs.iter().map(|r| (&r.old_name, &r.new_name)).collect();
                crate::execute::ddl::rename_tables(self, &pairs, text).map(|_| Output::ok())
            }
            Statement::CreateIndex(ci) => {
                self.commit()?;
                drop(crate::expr::take_warnings());
                crate::execute::ddl::create_index(self, ci, text)?;
                self.cx.warnings.extend(crate::expr::take_warnings());
                Ok(Output::table_altered(self.warning_count()))
            }
            Statement::AlterTable(at) => {
                let none = parse::alter_ops::TableOps::default();
                self.alter_table(&at.name, &at.operations, &none, text)
            }
            Statement::Drop {
                object_type: ast::ObjectType::Table,
                if_exists,
                names,
                temporary: true,
                ..
            } => self.drop_temporary(*if_exists, names),
            Statement::Drop {
                object_type,
                if_exists,
                names,
                table,
                ..
            } => {
                self.commit()?;
                drop(crate::expr::take_warnings());
                let dropped = crate::execute::ddl::drop(
                    self,
                    object_type,
                    *if_exists,
                    names,
                    table.as_ref(),
                    text,
                )?;
                if *object_type == ast::ObjectType::Table
                    && !self.cx.table_locks.locked().is_empty()
                {
                    // A dropped table leaves the session's LOCK TABLES list, as in MariaDB.
                    for n in names {
                        if let Ok((db, t)) = crate::execute::ddl::split_name(self, n) {
                            self.cx.table_locks.forget(&db, &t);
                        }
                    }
                }
                // DROP TABLE IF EXISTS of a view: its note.
                self.cx.warnings.extend(crate::expr::take_warnings());
                if matches!(
                    object_type,
                    ast::ObjectType::Database | ast::ObjectType::Schema
                ) {
                    if let Some(cur) = &self.cx.current_db {
                        if names
                            .iter()
                            .any(|n| crate::expr::object_name_parts(n).join(".") == *cur)
                        {
                            self.cx.current_db = None;
                        }
                    }
                }
                Ok(match object_type {
                    ast::ObjectType::Index => Output::table_altered(self.warning_count()),
                    // DROP DATABASE: the tables and views it dropped, as MariaDB 10.11.14.
                    _ => Output::ok_affected(dropped).with_warning_count(self.warning_count()),
                })
            }
            Statement::Truncate(t) => {
                self.commit()?;
                crate::execute::ddl::truncate(self, t, text)?;
                Ok(Output::ok())
            }
            Statement::Set(_) => Err(SqlError::unsupported("this SET statement")),
            Statement::Explain {
                statement,
                analyze: false,
                verbose: false,
                query_plan: false,
                estimate: false,
                format: None,
                options: None,
                ..
            } => crate::execute::explain::explain(self, statement),
            other => {
                let s = other.to_string();
                let kind: String = s.split_whitespace().take(2).collect::<Vec<_>>().join(" ");
                Err(SqlError::unsupported(&kind))
            }
        }
    }
}

/// Whether a statement's text reads `@@warning_count` or `@@error_count` (any scope).
fn reads_diagnostics(sql: &str) -> bool {
    let lower = sql.to_ascii_lowercase();
    lower.contains("@@") && (lower.contains("warning_count") || lower.contains("error_count"))
}

/// Statements that are never administration statements (skips the admin parser on the hot
/// path): those starting with one of these words.
fn is_core_statement(sql: &str) -> bool {
    let mut words = sql
        .trim_start()
        .split(|c: char| !c.is_ascii_alphabetic())
        .filter(|w| !w.is_empty());
    let word = words.next().unwrap_or("");
    if word.eq_ignore_ascii_case("START") {
        return words
            .next()
            .is_some_and(|w| w.eq_ignore_ascii_case("TRANSACTION"));
    }
    [
        "SELECT",
        "INSERT",
        "UPDATE",
        "DELETE",
        "REPLACE",
        "BEGIN",
        "COMMIT",
        "ROLLBACK",
        "SAVEPOINT",
    ]
    .iter()
    .any(|w| w.eq_ignore_ascii_case(word))
}

type Extra = Option<(Option<u64>, Vec<(String, u16, String)>, u64)>;

/// A DML statement's reply: OK, or with `RETURNING` (`returning`, the plan of its items) the
/// result set of the returned rows.
fn dml_out(
    d: DmlResult,
    returning: Option<&crate::plan::select::SelectPlan>,
) -> (Output, Option<u64>, Extra) {
    let out = match (d.returned, returning) {
        (Some(rows), Some(sp)) => Output::rows(select::result_columns(sp, &rows), rows),
        _ => Output::Ok {
            affected_rows: d.affected,
            last_insert_id: d.last_insert_id.unwrap_or(0),
            warnings: 0,
            info: d.info,
        },
    };
    (out, None, Some((d.last_insert_id, d.warnings, d.affected)))
}

fn affected(n: u64) -> Output {
    Output::Ok {
        affected_rows: n,
        last_insert_id: 0,
        warnings: 0,
        info: String::new(),
    }
}
