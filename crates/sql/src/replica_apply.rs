//! The replica's applier: how an event group from a MariaDB or onelog primary becomes a
//! commit here, with its original GTID (REPLICATION_FACTS.md §2, DESIGN.md §7).
//!
//! Owns [`SqlApplier`] (the `GroupApplier` each replica worker runs) and [`SqlHost`] (the
//! `ReplicaHost` the replica's threads read positions and settings from).
//!
//! A group is one of:
//! - **rows** (Table_map, Write/Update/Delete_rows with full images, Annotate_rows, Xid): the
//!   engine decodes it and encodes its record for this log first
//!   ([`Engine::prepare_replicated_rows`]), then logs it without row locks
//!   ([`Engine::commit_prepared_rows`]) once it has queued behind the group before it
//!   ([`CommitOrder::wait_prior_queued`]), and lets the next one queue behind it, so workers
//!   prepare in parallel and the log keeps the primary's order; the log's sink admits it
//!   against the latest data and everything queued before it; it does not wait for its sync
//!   (nobody is acknowledged by it), so the next group applies while the log syncs;
//! - **statements** (Query events, DDL or DML as MIXED/STATEMENT format sends them, with the
//!   Intvar / User_var events they depend on): run alone, after every earlier group committed,
//!   through a session of this server, inside [`Engine::with_origin`] so the commit carries
//!   the original GTID and is marked replicated; Intvar, Rand and User_var events set the
//!   session's INSERT_ID / LAST_INSERT_ID, RAND() seeds and user variables first.
//!
//! A statement group may also hold row events (MIXED switching to rows inside a transaction):
//! they are applied to the session's transaction in their place, by primary key.
//!
//! Anything else (v2 or compressed rows events, XA, a partial row image, a statement onelog
//! refuses, an INSERT whose AUTO_INCREMENT value would differ from the primary's) stops the
//! SQL side with an error naming the GTID: never a silent skip or a different answer.
//!
//! Invariants: every group that returns Ok was logged here exactly once with its GTID (a group
//! that changed nothing is logged empty), so `gtid_slave_pos` moves; `CommitOrder::queued` is
//! called at most once per attempt, and only once the commit holds its place in the log.

use std::sync::Arc;

use onelog_binlog::event::gtid::{FL_DDL, FL_STANDALONE};
use onelog_binlog::event::query::OPTION_NO_FOREIGN_KEY_CHECKS;
use onelog_binlog::event::statement_vars::{
    decode_statement_var, StatementVar, UserValue, INTVAR, INTVAR_INSERT_ID, INTVAR_LAST_INSERT_ID,
    RAND, USER_VAR,
};
use onelog_binlog::event::{check_event, event_type, GtidEvent, QueryEvent};
use onelog_binlog::{GtidPos, Value};
use onelog_engine::{CommitOrigin, Engine, EngineError};
use onelog_log::LogError;
use onelog_protocol::errors;
use onelog_replication::replica::control::Threads;
use onelog_replication::replica::schedule::{CommitOrder, OrderAbort};
use onelog_replication::replica::{
    ApplyError, GroupApplier, RelayGroup, Replica, ReplicaHost, ReplicaSettings,
};

use crate::error::SqlError;
use crate::server::Server;
use crate::session::Session;
use crate::sysvar;

/// Wires the replica connection into `server` (its `master.info` in the data directory) and,
/// when `start` and CHANGE MASTER configured it, starts replicating, as mariadbd does at
/// startup unless `--skip-slave-start`. Returns what to tell the operator.
pub fn wire_replica(server: &Arc<Server>, start: bool) -> Result<Option<String>, String> {
    let host: Arc<dyn ReplicaHost> = Arc::new(SqlHost::new(server.clone()));
    let replica = Arc::new(Replica::open(&server.config().datadir, host)?);
    let configured = replica.is_configured();
    if server.set_replica(replica.clone()).is_err() {
        return Err("the replica connection was already wired".into());
    }
    if !configured {
        return Ok(None);
    }
    let c = replica.config();
    if !start {
        return Ok(Some(format!(
            "replica of '{}@{}:{}' configured; not started (--skip-slave-start)",
            c.user, c.host, c.port
        )));
    }
    replica
        .start(Threads::Both, None)
        .map_err(|e| format!("starting replication: {}", e.message))?;
    Ok(Some(format!(
        "replica of '{}@{}:{}' started (Using_Gtid={})",
        c.user,
        c.host,
        c.port,
        c.use_gtid.name()
    )))
}

/// The replica's view of this server ([`ReplicaHost`]).
pub struct SqlHost {
    server: Arc<Server>,
}

impl SqlHost {
    pub fn new(server: Arc<Server>) -> SqlHost {
        SqlHost { server }
    }
}

impl ReplicaHost for SqlHost {
    fn server_id(&self) -> u32 {
        self.server.engine().options().server_id
    }

    fn gtid_slave_pos(&self) -> GtidPos {
        self.server.engine().gtid_slave_pos()
    }

    fn gtid_current_pos(&self) -> GtidPos {
        self.server.engine().gtid_current_pos()
    }

    fn gtid_strict_mode(&self) -> bool {
        self.server.engine().gtid_strict_mode()
    }

    fn settings(&self) -> ReplicaSettings {
        sysvar::replica::settings(&self.server)
    }

    fn applier(&self) -> Box<dyn GroupApplier> {
        Box::new(SqlApplier::new(self.server.clone()))
    }
}

/// One worker's applier (module docs).
pub struct SqlApplier {
    server: Arc<Server>,
    session: Option<Session>,
}

/// What a group holds, by kind of event.
enum Shape {
    Rows,
    Statements,
}

impl SqlApplier {
    pub fn new(server: Arc<Server>) -> SqlApplier {
        server.engine().clear_replica_refusal();
        SqlApplier {
            server,
            session: None,
        }
    }

    fn engine(&self) -> &Arc<Engine> {
        self.server.engine()
    }

    fn session(&mut self) -> &mut Session {
        let server = self.server.clone();
        self.session
            .get_or_insert_with(|| Session::new(server, 0, "system user", ""))
    }
}

fn abort(a: OrderAbort) -> ApplyError {
    match a {
        OrderAbort::PriorFailed => ApplyError {
            code: errors::ER_PRIOR_COMMIT_FAILED.code,
            message: "Commit failed due to failure of an earlier commit on which this one depends"
                .into(),
            retryable: true,
        },
        OrderAbort::Stopping => ApplyError {
            code: errors::ER_QUERY_INTERRUPTED.code,
            message: "Query execution was interrupted (the SQL thread is stopping)".into(),
            retryable: true,
        },
    }
}

/// Last_SQL_Error's text for a group: the error, then where it came from.
fn group_error(group: &RelayGroup, code: u16, what: &str) -> ApplyError {
    ApplyError {
        code,
        message: format!(
            "{what}; GTID {}, the event's master log {}, end_log_pos {}",
            group.gtid, group.master_log_file, group.end_log_pos
        ),
        retryable: false,
    }
}

fn event_name(t: u8) -> String {
    match t {
        30..=32 => format!("rows event v2 (type {t})"),
        166..=171 => format!("compressed event (type {t})"),
        26 => "Incident event".into(),
        _ => format!("event type {t}"),
    }
}

/// MariaDB's MODE_STRICT_TRANS_TABLES and MODE_STRICT_ALL_TABLES bits of a Query event's
/// `sql_mode`.
const STRICT_MODES: u64 = (1 << 22) | (1 << 23);

/// The session mode a statement logged without the strict modes runs under: MariaDB's
/// default without them.
const NON_STRICT: &str =
    "SET SESSION sql_mode = 'ERROR_FOR_DIVISION_BY_ZERO,NO_AUTO_CREATE_USER,NO_ENGINE_SUBSTITUTION'";

/// Classifies `group` (and checks every event's framing and checksum).
fn shape(group: &RelayGroup) -> Result<Shape, ApplyError> {
    let mut statements = false;
    for (i, ev) in group.events.iter().enumerate() {
        let (h, _) = check_event(ev)
            .map_err(|e| group_error(group, errors::ER_UNKNOWN_ERROR.code, &e.to_string()))?;
        match h.event_type {
            event_type::GTID if i == 0 => {}
            t if is_row_event(t) => {}
            event_type::ANNOTATE_ROWS | event_type::XID => {}
            event_type::QUERY => {
                let q = QueryEvent::decode(ev).map_err(|e| {
                    group_error(group, errors::ER_UNKNOWN_ERROR.code, &e.to_string())
                })?;
                let s = q.query.trim();
                if !(s.eq_ignore_ascii_case("BEGIN") || s.eq_ignore_ascii_case("COMMIT")) {
                    statements = true;
                }
            }
            INTVAR | RAND | USER_VAR => statements = true,
            t => {
                return Err(group_error(
                    group,
                    errors::ER_NOT_SUPPORTED_YET.code,
                    &format!("onelog cannot apply {}", event_name(t)),
                ))
            }
        }
    }
    // A group with statements (MIXED may switch to rows inside one transaction) runs through
    // the session, its row events applied to the session's transaction in order.
    Ok(if statements {
        Shape::Statements
    } else {
        Shape::Rows
    })
}

impl GroupApplier for SqlApplier {
    fn apply(&mut self, group: &RelayGroup, order: &CommitOrder) -> Result<(), ApplyError> {
        let gev = group
            .events
            .first()
            .and_then(|e| GtidEvent::decode(e).ok())
            .ok_or_else(|| {
                group_error(
                    group,
                    errors::ER_UNKNOWN_ERROR.code,
                    "group without a GTID event",
                )
            })?;
        if self.skip_duplicate(group) {
            order.wait_prior_queued().map_err(abort)?;
            order.queued();
            return Ok(());
        }
        match shape(group)? {
            Shape::Rows => self.apply_rows(group, order),
            Shape::Statements => self.apply_statements(group, &gev, order),
        }
    }
}

impl SqlApplier {
    /// `gtid_ignore_duplicates`: a group whose seq_no is not above its domain's applied one.
    fn skip_duplicate(&self, group: &RelayGroup) -> bool {
        sysvar::replica::settings(&self.server).gtid_ignore_duplicates
            && self
                .engine()
                .gtid_slave_pos()
                .get(group.gtid.domain_id)
                .is_some_and(|g| g.seq_no >= group.gtid.seq_no)
    }

    /// Decodes the group and encodes its record for this log before waiting for the groups
    /// ahead of it (workers do that part in parallel), then logs it in its turn.
    fn apply_rows(&mut self, group: &RelayGroup, order: &CommitOrder) -> Result<(), ApplyError> {
        let events = group.events.concat();
        let prepared = self.engine().prepare_replicated_rows(&events);
        order.wait_prior_queued().map_err(abort)?;
        if order.book.committed_below(order.index) {
            self.engine().clear_replica_refusal();
        }
        let committed = prepared.and_then(|p| {
            self.engine()
                .commit_prepared_rows(&events, p, &|| order.queued())
        });
        match committed {
            Ok(_) => Ok(()),
            Err(e) => Err(engine_error(group, &e)),
        }
    }

    fn apply_statements(
        &mut self,
        group: &RelayGroup,
        gev: &GtidEvent,
        order: &CommitOrder,
    ) -> Result<(), ApplyError> {
        order.wait_prior_committed().map_err(abort)?;
        let origin = CommitOrigin {
            domain_id: Some(gev.gtid.domain_id),
            server_id: Some(gev.gtid.server_id),
            seq_no: Some(gev.gtid.seq_no),
            replicated: true,
            timestamp: Some(gev.timestamp),
        };
        let engine = self.engine().clone();
        let before = Engine::thread_last_gtid();
        let (r, _) = engine.with_origin(origin, || self.run_statements(group, gev));
        if let Err(e) = r {
            let s = self.session();
            if s.in_transaction() {
                let _ = s.query("ROLLBACK");
            }
            return Err(e);
        }
        let logged = Engine::thread_last_gtid() == Some(gev.gtid) && before != Some(gev.gtid);
        if logged {
            order.queued();
            return Ok(());
        }
        engine
            .log_replicated_empty(gev, &|| order.queued())
            .map(|_| ())
            .map_err(|e| engine_error(group, &e))
    }

    /// Runs the group's statements in one session transaction (or alone, for a standalone
    /// group), with their Intvar / User_var context and the primary's statement time.
    fn run_statements(&mut self, group: &RelayGroup, gev: &GtidEvent) -> Result<(), ApplyError> {
        let standalone = gev.flags2 & (FL_STANDALONE | FL_DDL) != 0;
        if !standalone {
            self.run(group, "", "BEGIN")?;
        }
        let mut insert_id = None;
        let mut rows_run: Vec<&[u8]> = Vec::new();
        for ev in &group.events[1..] {
            let Ok((h, _)) = check_event(ev) else {
                continue;
            };
            if is_row_event(h.event_type) {
                rows_run.push(ev);
                continue;
            }
            if !rows_run.is_empty() {
                self.apply_rows_in_session(group, &std::mem::take(&mut rows_run))?;
            }
            match h.event_type {
                event_type::QUERY => {
                    let q = QueryEvent::decode(ev).map_err(|e| {
                        group_error(group, errors::ER_UNKNOWN_ERROR.code, &e.to_string())
                    })?;
                    let s = q.query.trim();
                    if s.eq_ignore_ascii_case("BEGIN") {
                        continue;
                    }
                    self.session()
                        .set_fixed_time(Some((i64::from(h.timestamp), 0)));
                    // A statement the primary ran without strict mode (an ALTER TABLE that
                    // clipped values with warnings) runs without it here too.
                    let loose = q.sql_mode != 0 && q.sql_mode & STRICT_MODES == 0;
                    if loose {
                        self.run(group, "", NON_STRICT)?;
                    }
                    let r = self.run_query(group, &q);
                    if loose {
                        self.run(group, "", "SET SESSION sql_mode = DEFAULT")?;
                    }
                    self.session().set_fixed_time(None);
                    r?;
                    if let Some(id) = insert_id.take() {
                        self.check_insert_id(group, &q, id)?;
                    }
                }
                event_type::XID => self.run(group, "", "COMMIT")?,
                _ => match decode_statement_var(ev) {
                    Ok(Some(StatementVar::Intvar { kind, value })) => match kind {
                        INTVAR_INSERT_ID => insert_id = Some(value),
                        INTVAR_LAST_INSERT_ID => self.session().last_insert_id = value,
                        _ => {}
                    },
                    Ok(Some(StatementVar::Rand { seed1, seed2 })) => {
                        // The session's RAND() generator, as the primary's was.
                        self.session().rand.set((
                            seed1 % crate::context::RAND_MAX_VALUE,
                            seed2 % crate::context::RAND_MAX_VALUE,
                        ));
                    }
                    Ok(Some(StatementVar::UserVar { name, value })) => {
                        let v = user_value(value);
                        self.session()
                            .user_vars
                            .insert(name.to_ascii_lowercase(), v);
                    }
                    Ok(_) => {}
                    Err(e) => {
                        return Err(group_error(
                            group,
                            errors::ER_UNKNOWN_ERROR.code,
                            &e.to_string(),
                        ))
                    }
                },
            }
        }
        if !rows_run.is_empty() {
            self.apply_rows_in_session(group, &rows_run)?;
        }
        if self.session().in_transaction() {
            return Err(group_error(
                group,
                errors::ER_UNKNOWN_ERROR.code,
                "the group ended without its commit (Xid or COMMIT)",
            ));
        }
        Ok(())
    }

    /// Applies a run of Table_map / rows events of a statement group to the session's open
    /// transaction (MIXED format switching to rows inside a transaction): with row locks, as
    /// the statements around them; an update or delete of a missing row is 1032, a write of an
    /// existing key 1062, as MariaDB's replica in its default (strict) slave_exec_mode.
    fn apply_rows_in_session(
        &mut self,
        group: &RelayGroup,
        run: &[&[u8]],
    ) -> Result<(), ApplyError> {
        let mut bytes = group.events[0].clone();
        for ev in run {
            bytes.extend_from_slice(ev);
        }
        let catalog = self.engine().catalog();
        let decoded = onelog_engine::apply::decode_record(&catalog, &bytes, &[]).map_err(|e| {
            group_error(
                group,
                errors::ER_UNKNOWN_ERROR.code,
                &format!("rows event: {e}"),
            )
        })?;
        let onelog_engine::apply::DecodedBody::Rows(changes) = decoded.body else {
            return Ok(());
        };
        let Some(txn) = self.session().txn.as_mut() else {
            return Err(group_error(
                group,
                errors::ER_UNKNOWN_ERROR.code,
                "rows event outside a transaction",
            ));
        };
        for c in changes {
            apply_change(txn, &catalog, c).map_err(|e| {
                let mut err = group_error(
                    group,
                    e.code(),
                    &format!("Could not execute row event: {e}"),
                );
                err.retryable = matches!(e, EngineError::Deadlock | EngineError::LockWaitTimeout);
                err
            })?;
        }
        Ok(())
    }

    /// Runs one statement of the group in database `db` ('' = keep the current one).
    fn run(&mut self, group: &RelayGroup, db: &str, sql: &str) -> Result<(), ApplyError> {
        let s = self.session();
        if !db.is_empty() && s.current_database() != Some(db) {
            // As MariaDB's SQL thread: the event's database becomes the default one whether
            // it exists or not (CREATE DATABASE d is logged with d as its database).
            s.current_db = Some(db.to_string());
        }
        for r in s.query(sql) {
            if let Err(e) = r {
                return Err(statement_error(group, db, sql, &e));
            }
        }
        Ok(())
    }

    /// A Query event's statement, run as the primary's session did: with `foreign_key_checks`
    /// off when its Q_FLAGS2 says so (as MariaDB's SQL thread takes the event's options).
    fn run_query(&mut self, group: &RelayGroup, q: &QueryEvent) -> Result<(), ApplyError> {
        if q.flags2 & OPTION_NO_FOREIGN_KEY_CHECKS == 0 {
            return self.run(group, &q.db, &q.query);
        }
        self.run(group, "", "SET SESSION foreign_key_checks = 0")?;
        let r = self.run(group, &q.db, &q.query);
        let restored = self.run(group, "", "SET SESSION foreign_key_checks = 1");
        r.and(restored)
    }

    /// An INSERT the primary ran with AUTO_INCREMENT value `id` must have used the same here.
    fn check_insert_id(
        &mut self,
        group: &RelayGroup,
        q: &QueryEvent,
        id: u64,
    ) -> Result<(), ApplyError> {
        let got = self.session().last_insert_id;
        if got != id {
            return Err(group_error(
                group,
                errors::ER_UNKNOWN_ERROR.code,
                &format!(
                    "the statement `{}` generated AUTO_INCREMENT value {got} here but {id} on \
                     the primary: the replica's data differs from the primary's",
                    q.query
                ),
            ));
        }
        Ok(())
    }
}

fn is_row_event(t: u8) -> bool {
    matches!(
        t,
        event_type::TABLE_MAP
            | event_type::WRITE_ROWS_V1
            | event_type::UPDATE_ROWS_V1
            | event_type::DELETE_ROWS_V1
    )
}

/// One row change applied to a session transaction by primary key.
fn apply_change(
    txn: &mut onelog_engine::Transaction,
    catalog: &onelog_engine::Catalog,
    change: onelog_engine::RowChange,
) -> Result<(), EngineError> {
    use onelog_engine::RowChange;
    let table = change.table();
    let def = catalog
        .table(table)
        .ok_or_else(|| EngineError::NoSuchTable {
            db: String::new(),
            table: format!("#{table}"),
        })?;
    // A table without primary key: the whole before image, matched row for row.
    let pk = |row: &[Value]| -> Vec<Value> {
        if def.primary_key.is_empty() {
            return row.to_vec();
        }
        def.primary_key
            .iter()
            .map(|&i| row.get(i).cloned().unwrap_or(Value::Null))
            .collect()
    };
    let missing = || EngineError::Apply {
        gtid: None,
        lsn: None,
        reason: format!("Can't find record in '{}'", def.name),
    };
    match change {
        RowChange::Insert { row, .. } => {
            // A row event's values are final: a 0 in the AUTO_INCREMENT column stays 0 (as
            // MariaDB's row applier), whatever generated it on the primary.
            txn.set_no_auto_value_on_zero(true);
            txn.insert(table, row.to_vec()).map(|_| ())
        }
        RowChange::Update { before, after, .. } => {
            if txn.update(table, &pk(&before), after.to_vec())? {
                Ok(())
            } else {
                Err(missing())
            }
        }
        RowChange::Delete { before, .. } => {
            if txn.delete(table, &pk(&before))? {
                Ok(())
            } else {
                Err(missing())
            }
        }
    }
}

/// MariaDB's Last_SQL_Error for a failed statement.
fn statement_error(group: &RelayGroup, db: &str, sql: &str, e: &SqlError) -> ApplyError {
    let retryable =
        e.code == errors::ER_LOCK_DEADLOCK.code || e.code == errors::ER_LOCK_WAIT_TIMEOUT.code;
    let mut err = group_error(
        group,
        e.code,
        &format!(
            "Error '{}' on query. Default database: '{db}'. Query: '{sql}'",
            e.message
        ),
    );
    err.retryable = retryable;
    err
}

/// The error of a row group the engine did not log.
fn engine_error(group: &RelayGroup, e: &EngineError) -> ApplyError {
    let mut err = group_error(
        group,
        e.code(),
        &format!("Could not execute row event group: {e}"),
    );
    if let EngineError::Log {
        source: LogError::Refused(why),
        ..
    } = e
    {
        err.retryable = why.starts_with("an earlier replicated transaction");
    }
    err
}

fn user_value(v: UserValue) -> Value {
    match v {
        UserValue::Null => Value::Null,
        UserValue::String { bytes, .. } => Value::bytes(bytes),
        UserValue::Real(f) => Value::Double(f),
        UserValue::Int { value, unsigned } => {
            if unsigned {
                Value::UInt(value as u64)
            } else {
                Value::Int(value)
            }
        }
        UserValue::Decimal {
            precision,
            scale,
            bytes,
        } => onelog_binlog::decimal::decode(&bytes, precision, scale)
            .map(|(t, _)| Value::Decimal(t))
            .unwrap_or(Value::Null),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::ServerConfig;
    use onelog_binlog::event::query::DEFAULT_SQL_MODE;
    use onelog_binlog::Gtid;
    use onelog_replication::replica::schedule::OrderBook;

    /// A primary's DDL group (GTID + Query with `sql_mode`) as the relay hands it over.
    fn ddl_group(sql: &str, sql_mode: u64, seq: u64) -> RelayGroup {
        let ids = (0, 9, 1_700_000_000);
        let bytes =
            onelog_engine::events::encode_ddl_with_mode("d", sql, false, sql_mode, ids).unwrap();
        let mut events = Vec::new();
        let mut at = 0;
        while at < bytes.len() {
            let len = u32::from_le_bytes(bytes[at + 9..at + 13].try_into().unwrap()) as usize;
            events.push(bytes[at..at + len].to_vec());
            at += len;
        }
        RelayGroup {
            gtid: Gtid {
                domain_id: 0,
                server_id: 9,
                seq_no: seq,
            },
            flags2: FL_STANDALONE | FL_DDL,
            commit_id: None,
            timestamp: ids.2,
            events,
            master_log_file: "mb.000001".into(),
            end_log_pos: 0,
        }
    }

    /// An ALTER TABLE the primary ran without strict mode (its Query event's sql_mode says so)
    /// clips the values here too; logged with strict mode it fails as the primary's would.
    #[test]
    fn a_statement_runs_under_the_primarys_strictness() {
        let dir = std::env::temp_dir().join(format!("onelog-replica-mode-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut cfg = ServerConfig::new(&dir);
        cfg.flush_log_at_trx_commit = 2;
        let server = Server::open(cfg).unwrap().0;
        let mut s = Session::new(server.clone(), 1, "root", "localhost");
        for sql in [
            "CREATE DATABASE d",
            "CREATE TABLE d.t (id INT PRIMARY KEY, b INT, c INT)",
            "INSERT INTO d.t VALUES (1, 300, 300)",
        ] {
            assert!(s.query(sql).pop().unwrap().is_ok(), "{sql}");
        }
        let mut applier = SqlApplier::new(server.clone());
        let order = CommitOrder {
            book: OrderBook::new(),
            index: 0,
        };
        let strict = ddl_group("ALTER TABLE t MODIFY b TINYINT", DEFAULT_SQL_MODE, 1);
        let e = applier.apply(&strict, &order).unwrap_err();
        assert!(
            e.message
                .contains("Out of range value for column 'b' at row 1"),
            "{e:?}"
        );
        let loose = ddl_group(
            "ALTER TABLE t MODIFY c TINYINT",
            DEFAULT_SQL_MODE & !STRICT_MODES,
            2,
        );
        applier.apply(&loose, &order).unwrap();
        let snap = server.engine().snapshot();
        assert_eq!(
            snap.dump()["d.t"],
            vec![vec![Value::Int(1), Value::Int(300), Value::Int(127)]]
        );
        // The SQL thread's session is strict again afterwards.
        assert!(sysvar::strict_mode(applier.session()));
        drop(s);
        let _ = server.shutdown();
        let _ = std::fs::remove_dir_all(&dir);
    }
}
