//! The adapter from the protocol layer's [`Backend`]/[`SessionApi`] traits to `onelog_sql`.
//!
//! One-to-one delegation, nothing else: the SQL layer owns accounts, sessions and connection
//! registration; this module only names which method serves which trait method. Sessions are
//! wrapped in [`SqlSession`] (rather than implementing the trait on `onelog_sql::Session`
//! directly) so every call here can only resolve to the SQL layer's own method.
//!
//! Invariants: each trait method calls exactly one SQL-layer method and adds no behaviour.

use std::sync::Arc;

use onelog_sql::server::{ConnectionGuard, ConnectionInfo, Registry};
use onelog_sql::{Account, Column, Output, PreparedInfo, Server, Session, SqlError, Value};

use crate::backend::{Backend, SessionApi};

/// `onelog_sql::Server` as a protocol backend.
pub struct SqlBackend {
    server: Arc<Server>,
}

impl SqlBackend {
    pub fn new(server: Arc<Server>) -> Self {
        SqlBackend { server }
    }
}

/// One `onelog_sql::Session`.
pub struct SqlSession(pub Session);

impl Backend for SqlBackend {
    type Session = SqlSession;
    type Registration = ConnectionGuard;

    fn lookup_account(&self, user: &str, host: &str) -> Option<Account> {
        self.server.lookup_account(user, host)
    }

    fn open_session(&self, connection_id: u32, user: &str, host: &str) -> SqlSession {
        SqlSession(Session::new(self.server.clone(), connection_id, user, host))
    }

    fn register_connection(&self, connection_id: u32, user: &str, host: &str) -> ConnectionGuard {
        self.server
            .register_connection(ConnectionInfo::new(connection_id, user, host))
    }

    fn is_killed(registration: &ConnectionGuard) -> bool {
        registration.killed()
    }

    fn global_int(&self, name: &str) -> Option<u64> {
        match onelog_sql::sysvar::global_var(&self.server, name).ok()? {
            Value::Int(i) => u64::try_from(i).ok(),
            Value::UInt(u) => Some(u),
            _ => None,
        }
    }

    fn is_connection_admin(&self, user: &str, host: &str) -> bool {
        self.server.is_connection_admin(user, host)
    }

    fn registry(&self) -> Option<Arc<Registry>> {
        Some(self.server.registry().clone())
    }

    fn aborted_connect(&self) {
        self.server.status().aborted_connect();
    }

    fn aborted_client(&self) {
        self.server.status().aborted_client();
    }

    fn traffic(&self) -> Option<Arc<onelog_sql::status::Traffic>> {
        Some(self.server.status().traffic())
    }

    fn general_log_on(&self) -> bool {
        self.server.query_logs().general_on()
    }

    fn general_log(&self, connection_id: u32, command: &str, argument: &str) {
        self.server
            .query_logs()
            .general(connection_id, command, argument)
    }

    fn slow_query(&self, entry: &onelog_sql::querylog::SlowEntry<'_>) {
        self.server.status().slow_query();
        self.server.query_logs().slow(entry)
    }

    fn slow_queries(&self) -> u64 {
        self.server.status().slow_queries()
    }
}

impl SessionApi for SqlSession {
    fn query(&mut self, sql: &str) -> Vec<Result<Output, SqlError>> {
        self.0.query(sql)
    }
    fn prepare(&mut self, sql: &str) -> Result<PreparedInfo, SqlError> {
        self.0.prepare(sql)
    }
    fn execute(&mut self, stmt_id: u32, params: &[Value]) -> Result<Output, SqlError> {
        self.0.execute(stmt_id, params)
    }
    fn close_statement(&mut self, stmt_id: u32) {
        self.0.close_statement(stmt_id)
    }
    fn reset_statement(&mut self, stmt_id: u32) -> Result<(), SqlError> {
        self.0.reset_statement(stmt_id)
    }
    fn use_database(&mut self, db: &str) -> Result<(), SqlError> {
        self.0.use_database(db)
    }
    fn field_list(&mut self, table: &str, wildcard: &str) -> Result<Vec<Column>, SqlError> {
        self.0.field_list(table, wildcard)
    }
    fn reset(&mut self) {
        self.0.reset()
    }
    fn change_user(&mut self, user: &str, db: Option<&str>) -> Result<(), SqlError> {
        self.0.change_user(user, db)
    }
    fn current_database(&self) -> Option<&str> {
        self.0.current_database()
    }
    fn in_transaction(&self) -> bool {
        self.0.in_transaction()
    }
    fn autocommit(&self) -> bool {
        self.0.autocommit()
    }
    fn set_multi_statements(&mut self, on: bool) {
        self.0.set_multi_statements(on)
    }
    fn warning_count(&self) -> u16 {
        self.0.warning_count()
    }
    fn wait_timeout(&self) -> Option<std::time::Duration> {
        Some(std::time::Duration::from_secs(
            onelog_sql::sysvar::wait_timeout(&self.0),
        ))
    }
    fn make_interactive(&mut self) {
        onelog_sql::sysvar::make_interactive(&mut self.0)
    }
    fn set_client_collation(&mut self, id: u16) {
        onelog_sql::sysvar::set_client_collation(&mut self.0, id)
    }
    fn set_liveness_probe(&mut self, probe: onelog_sql::guard::Probe) {
        self.0.set_liveness_probe(probe)
    }
    fn set_traffic(&mut self, traffic: Arc<onelog_sql::status::Traffic>) {
        self.0.set_traffic(traffic)
    }
    fn sql_log_off(&self) -> bool {
        onelog_sql::sysvar::sql_log_off(&self.0)
    }
    fn statement_runs(&self) -> &[onelog_sql::querylog::StatementRun] {
        self.0.statement_runs()
    }
    fn expanded_statement(&self, stmt_id: u32, params: &[Value]) -> Option<String> {
        self.0.expanded_statement(stmt_id, params)
    }
    fn register_slave(&mut self, body: &[u8]) -> Result<(), SqlError> {
        self.0.register_slave(body)
    }
    fn binlog_dump(
        &mut self,
        body: &[u8],
        io: &mut dyn onelog_replication::source::DumpIo,
    ) -> Result<(), SqlError> {
        self.0.binlog_dump(body, io).map(|_| ())
    }
}
