//! The seam between the protocol layer and the SQL layer.
//!
//! The protocol code (handshake, commands, result sets) talks only to these two traits, so it is
//! tested over real sockets against a small in-test backend, and runs in production against
//! `onelog_sql` through the adapter in [`crate::sql_backend`]. The traits mirror the
//! `onelog_sql::Server`/`Session` contract one to one; they add nothing the SQL layer lacks.
//!
//! Invariants: the traits add nothing the SQL layer lacks; everything stateful (accounts,
//! sessions, the connection registry) stays behind them.

use std::sync::Arc;

use onelog_sql::server::Registry;
use onelog_sql::{Account, Column, Output, PreparedInfo, SqlError, Value};

/// Server-wide services the protocol needs.
pub trait Backend: Send + Sync + 'static {
    type Session: SessionApi;
    /// Held for the lifetime of an authenticated connection (PROCESSLIST, Threads_connected).
    type Registration;

    /// The account `user` may use when connecting from `host` ("localhost" for loopback and the
    /// unix socket), with its stored `mysql_native_password` hash.
    fn lookup_account(&self, user: &str, host: &str) -> Option<Account>;

    /// A new session for an authenticated connection.
    fn open_session(&self, connection_id: u32, user: &str, host: &str) -> Self::Session;

    /// Registers an authenticated connection; dropping the registration unregisters it.
    fn register_connection(&self, connection_id: u32, user: &str, host: &str)
        -> Self::Registration;

    /// True once the connection was killed (`KILL <id>`); it is then closed before its next
    /// command.
    fn is_killed(registration: &Self::Registration) -> bool;

    /// A global integer variable read at connect (`connect_timeout`, `max_allowed_packet`,
    /// `log_warnings`); `None`: the listener's configured value.
    fn global_int(&self, _name: &str) -> Option<u64> {
        None
    }

    /// Whether `user`@`host` may use the connection reserved above `max_connections` (SUPER,
    /// MariaDB's CONNECTION ADMIN).
    fn is_connection_admin(&self, _user: &str, _host: &str) -> bool {
        false
    }

    /// The connection registry the listener shares with this backend (connection table,
    /// shutdown flag, `Questions`); `None`: the listener keeps its own.
    fn registry(&self) -> Option<Arc<Registry>> {
        None
    }

    /// A connection attempt failed (bad handshake, failed login, handshake timeout).
    fn aborted_connect(&self) {}

    /// An authenticated connection ended without COM_QUIT (closed, wait_timeout, error).
    fn aborted_client(&self) {}

    /// The server-wide byte counters (`Bytes_received`, `Bytes_sent`) every connection adds
    /// its socket's bytes to; `None`: not counted.
    fn traffic(&self) -> Option<Arc<onelog_sql::status::Traffic>> {
        None
    }

    /// Whether the general query log is on (nothing is formatted for it otherwise).
    fn general_log_on(&self) -> bool {
        false
    }

    /// Writes one general log line: the connection, the command (`Connect`, `Query`, ...)
    /// and its argument.
    fn general_log(&self, _connection_id: u32, _command: &str, _argument: &str) {}

    /// A statement ran longer than its session's `long_query_time`: counted in
    /// `Slow_queries` and written to the slow query log when that is on.
    fn slow_query(&self, _entry: &onelog_sql::querylog::SlowEntry<'_>) {}

    /// `Slow_queries` (COM_STATISTICS prints it).
    fn slow_queries(&self) -> u64 {
        0
    }
}

/// One connection's SQL session (`onelog_sql::Session`'s methods).
pub trait SessionApi {
    fn query(&mut self, sql: &str) -> Vec<Result<Output, SqlError>>;
    fn prepare(&mut self, sql: &str) -> Result<PreparedInfo, SqlError>;
    fn execute(&mut self, stmt_id: u32, params: &[Value]) -> Result<Output, SqlError>;
    fn close_statement(&mut self, stmt_id: u32);
    fn reset_statement(&mut self, stmt_id: u32) -> Result<(), SqlError>;
    fn use_database(&mut self, db: &str) -> Result<(), SqlError>;
    fn field_list(&mut self, table: &str, wildcard: &str) -> Result<Vec<Column>, SqlError>;
    fn reset(&mut self);
    fn change_user(&mut self, user: &str, db: Option<&str>) -> Result<(), SqlError>;
    fn current_database(&self) -> Option<&str>;
    fn in_transaction(&self) -> bool;
    fn autocommit(&self) -> bool;
    fn set_multi_statements(&mut self, on: bool);
    fn warning_count(&self) -> u16;

    /// The session's `wait_timeout` (idle time before the connection is closed); `None`: the
    /// listener's configured value.
    fn wait_timeout(&self) -> Option<std::time::Duration> {
        None
    }

    /// The client set CLIENT_INTERACTIVE: `wait_timeout` starts at `interactive_timeout`.
    fn make_interactive(&mut self) {}
    /// The collation id the client sent in its handshake response.
    fn set_client_collation(&mut self, _id: u16) {}
    /// Installs the probe running statements poll to notice a client disconnect.
    fn set_liveness_probe(&mut self, _probe: onelog_sql::guard::Probe) {}
    /// The connection's byte counters (session `Bytes_received` / `Bytes_sent`).
    fn set_traffic(&mut self, _traffic: Arc<onelog_sql::status::Traffic>) {}
    /// The session's `sql_log_off`: its commands are not written to the general log.
    fn sql_log_off(&self) -> bool {
        false
    }
    /// The statements the last COM_QUERY / COM_STMT_EXECUTE ran (for the slow log; those
    /// marked `slow` are counted and logged).
    fn statement_runs(&self) -> &[onelog_sql::querylog::StatementRun] {
        &[]
    }
    /// A prepared statement's text with `params` written in, as the logs show an execution.
    fn expanded_statement(&self, _stmt_id: u32, _params: &[Value]) -> Option<String> {
        None
    }

    /// COM_REGISTER_SLAVE (body after the command byte).
    fn register_slave(&mut self, _body: &[u8]) -> Result<(), SqlError> {
        Err(unknown_command())
    }

    /// COM_BINLOG_DUMP (body after the command byte): streams over `io` until the dump ends;
    /// `Err` is answered before any event and the connection goes on.
    fn binlog_dump(
        &mut self,
        _body: &[u8],
        _io: &mut dyn onelog_replication::source::DumpIo,
    ) -> Result<(), SqlError> {
        Err(unknown_command())
    }
}

fn unknown_command() -> SqlError {
    SqlError::of(
        onelog_protocol::errors::ER_UNKNOWN_COM_ERROR,
        "Unknown command",
    )
}
