//! One client connection: handshake, authentication, and the command loop.
//!
//! Owns a connection's protocol state: negotiated capabilities, scramble, the SQL session, and
//! per-statement protocol state for prepared statements (parameter count, the parameter types
//! the client last bound, long data). Runs on the connection's own thread until the client quits,
//! the socket closes, `wait_timeout` passes, or a protocol error ends it.
//!
//! Invariants:
//! - Every command starts at sequence id 0 and its whole response is flushed before the next
//!   packet is read.
//! - A framing error (bad sequence, packet over `max_allowed_packet`) or a malformed command
//!   packet gets one ERR packet (1156 / 1153 / 1835) and then the connection closes; nothing is
//!   shared with other connections, so they are unaffected.
//! - Status flags in OK/EOF packets come from the session after the command ran
//!   (IN_TRANS, AUTOCOMMIT), plus MORE_RESULTS_EXISTS on every result but the last of a
//!   multi-statement query.
//! - Result sets end with EOF packets, or with an OK packet headed `0xFE` when the client
//!   negotiated CLIENT_DEPRECATE_EOF.
//! - The handshake (greeting to OK) must complete within `connect_timeout` (global variable,
//!   read at connect), however slowly the bytes trickle in; a connection that fails it (timeout,
//!   bad handshake, failed login, unknown initial database, the reserved slot taken by an
//!   account without SUPER) is counted once in `Aborted_connects`. An authenticated connection
//!   that ends without COM_QUIT is counted in `Aborted_clients`.
//! - Authentication: an account's `mysql_native_password` hash (unless the account has no
//!   password login), or `unix_socket`: the unix-socket peer's `SO_PEERCRED` uid is the
//!   server's effective uid or 0. No auth switch is sent for unix_socket: like MariaDB's
//!   server plugin it reads no client data, so any client response is accepted for it.
//!   Failed logins are logged as `[Warning] Access denied for user ...` when `log_warnings`
//!   is 2 or more, and so are aborted connections (`Aborted connection N to db: ... (reason)`, as
//!   MariaDB: a client gone without COM_QUIT, `wait_timeout`, a write error, a client that
//!   closed before authenticating; not a killed connection).
//! - Bytes on the socket are counted (`transport::Counted`) into the connection's and the
//!   server's `Bytes_received` / `Bytes_sent`; the general query log gets MariaDB's lines
//!   (`Connect`, `Change user`, `Query`, `Prepare`, `Execute` with its parameters written in,
//!   `Long Data`, `Close stmt`, `Reset stmt`, `Field List`, `Init DB`, `Quit`, `Statistics`,
//!   `Refresh`, `Debug`); after a COM_QUERY's or COM_STMT_EXECUTE's answer, each statement the session
//!   marked slow (`onelog_sql::querylog::StatementRun`) is counted and written to the slow
//!   log with its own rows and bytes.
//! - `max_allowed_packet` is the global value at connect (SESSION is read-only, as MariaDB).
//! - Between commands the connection wakes every [`IDLE_TICK`] (the socket's read timeout) to
//!   notice a KILL or the end of `wait_timeout`, and then closes without a reply; a KILL seen
//!   when a command arrives is answered with ERR 1927. Inside a packet, up to
//!   `NET_READ_STALLS` ticks without data are tolerated (MariaDB's `net_read_timeout`).

use std::collections::HashMap;
use std::io;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mysql_common::constants::{CapabilityFlags, StatusFlags};
use onelog_protocol::errors::{
    ER_ACCESS_DENIED_ERROR, ER_ACCESS_DENIED_NO_PASSWORD_ERROR, ER_CONNECTION_KILLED,
    ER_CON_COUNT_ERROR, ER_HANDSHAKE_ERROR, ER_MALFORMED_PACKET, ER_NET_PACKETS_OUT_OF_ORDER,
    ER_NET_PACKET_TOO_LARGE, ER_QUERY_INTERRUPTED, ER_STMT_HAS_NO_OPEN_CURSOR,
    ER_UNKNOWN_COM_ERROR, ER_UNKNOWN_STMT_HANDLER, ER_WRONG_ARGUMENTS,
};
use onelog_protocol::{Command, ErrorCode};
use onelog_sql::{Column, Output, SqlError, Value};

use crate::auth::{new_scramble, verify_native, NATIVE_PLUGIN, SCRAMBLE_LEN};
use crate::backend::{Backend, SessionApi};
use crate::command::{
    decode_change_user, decode_execute, decode_handshake_response, decode_send_long_data,
    is_ssl_request, stmt_id, ParamType,
};
use crate::dump_link::DumpLink;
use crate::packet::{FrameError, PacketStream};
use crate::response::{
    param_column, put_column_def, put_eof, put_err, put_handshake, put_ok, put_sql_err, Handshake,
    EOF_HEADER, OK_HEADER,
};
use crate::shared::Shared;
use crate::transport::{Counted, Transport};
use crate::value::{binary_is_null, put_binary, put_text, wire_type};
use crate::wire::{put_lenenc_int, put_nul_bytes, put_u16, put_u32, Malformed, Reader};
use onelog_sql::status::Traffic;

/// Capabilities onelog offers. CLIENT_LONG_PASSWORD (alias CLIENT_MYSQL) is left clear, which
/// is how MariaDB servers announce that the filler carries MariaDB extended capabilities.
pub fn server_capabilities() -> CapabilityFlags {
    CapabilityFlags::CLIENT_LONG_FLAG
        | CapabilityFlags::CLIENT_CONNECT_WITH_DB
        | CapabilityFlags::CLIENT_PROTOCOL_41
        | CapabilityFlags::CLIENT_INTERACTIVE
        | CapabilityFlags::CLIENT_TRANSACTIONS
        | CapabilityFlags::CLIENT_SECURE_CONNECTION
        | CapabilityFlags::CLIENT_MULTI_STATEMENTS
        | CapabilityFlags::CLIENT_MULTI_RESULTS
        | CapabilityFlags::CLIENT_PS_MULTI_RESULTS
        | CapabilityFlags::CLIENT_PLUGIN_AUTH
        | CapabilityFlags::CLIENT_CONNECT_ATTRS
        | CapabilityFlags::CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA
        | CapabilityFlags::CLIENT_DEPRECATE_EOF
}

/// MariaDB extended capabilities offered: none (no progress reports, bulk execution or extended
/// metadata are implemented).
pub const MARIADB_CAPABILITIES: u32 = 0;

/// utf8mb4_general_ci, the collation announced in the greeting.
const SERVER_COLLATION: u8 = 45;

/// Seconds a client has to complete the handshake (MariaDB's `connect_timeout` default, used
/// when the backend has no `connect_timeout` variable).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// `log_warnings` default (MariaDB 10.11's): failed logins are logged.
const LOG_WARNINGS: u64 = 2;

/// The reasons of MariaDB's `Aborted connection` warnings (ER_NET_READ_ERROR,
/// ER_NET_READ_INTERRUPTED, ER_NET_ERROR_ON_WRITE).
const READ_ERROR: &str = "Got an error reading communication packets";
const TIMEOUT: &str = "Got timeout reading communication packets";
const WRITE_ERROR: &str = "Got an error writing communication packets";

/// Idle connections wake this often to notice KILL and `wait_timeout`; it is also the socket's
/// read timeout, so a packet may stall `NET_READ_STALLS` ticks (MariaDB's `net_read_timeout`,
/// 30 s) before the connection is dropped.
const IDLE_TICK: Duration = Duration::from_secs(1);
const NET_READ_STALLS: u32 = 30;

/// Seconds a write may block on a client that stops reading (MariaDB's `net_write_timeout`).
const WRITE_TIMEOUT: Duration = Duration::from_secs(60);

/// Server version sent in the greeting: MariaDB 10.x prefixes "5.5.5-" (its replication version
/// hack, which MariaDB clients strip) so old MySQL clients do not misread a two-digit major.
pub fn greeting_version(version: &str) -> String {
    let major: u32 = version
        .split('.')
        .next()
        .and_then(|m| m.parse().ok())
        .unwrap_or(0);
    if major >= 10 && version.contains("MariaDB") && !version.starts_with("5.5.5-") {
        format!("5.5.5-{version}")
    } else {
        version.to_owned()
    }
}

/// Settings a connection needs.
#[derive(Debug, Clone)]
pub struct ConnectionConfig {
    pub version: String,
    pub max_allowed_packet: usize,
    /// Idle time after which the connection is closed (`None`: never) when the session has
    /// no `wait_timeout` of its own.
    pub wait_timeout: Option<Duration>,
    /// Where `[Warning]` lines go.
    pub log_warning: fn(&str),
}

/// Why the command loop stopped.
enum Flow {
    Continue,
    Quit,
}

/// Errors that end the connection.
enum ConnError {
    /// The socket failed or closed; nothing more can be sent.
    Io,
    /// A command packet did not decode; answered with ERR 1835.
    Malformed(Malformed),
}

impl From<io::Error> for ConnError {
    fn from(_: io::Error) -> Self {
        ConnError::Io
    }
}

/// Whether an I/O error means the peer closed or reset its end of the connection.
fn is_peer_gone(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::BrokenPipe
            | io::ErrorKind::UnexpectedEof
    )
}

impl From<Malformed> for ConnError {
    fn from(e: Malformed) -> Self {
        ConnError::Malformed(e)
    }
}

/// Protocol state of one prepared statement.
struct StmtState {
    params: u16,
    bound_types: Option<Vec<ParamType>>,
    long_data: Vec<Option<Vec<u8>>>,
    long_data_size: usize,
    long_data_error: bool,
}

/// One authenticated (or authenticating) client.
pub(crate) struct Connection<'a, B: Backend, S: Transport> {
    backend: &'a B,
    shared: &'a Shared,
    config: &'a ConnectionConfig,
    stream: PacketStream<Counted<S>>,
    /// This connection's bytes on the wire (its session's `Bytes_received` / `Bytes_sent`).
    traffic: Arc<Traffic>,
    id: u32,
    host: String,
    scramble: [u8; SCRAMBLE_LEN],
    caps: CapabilityFlags,
    user: String,
    session: Option<B::Session>,
    registration: Option<B::Registration>,
    stmts: HashMap<u32, StmtState>,
    last_prepared: Option<u32>,
    payload: Vec<u8>,
    scratch: Vec<u8>,
    /// Holds the slot above `max_connections` (kept only by an account with CONNECTION ADMIN
    /// or SUPER).
    reserved_slot: bool,
    /// The unix-socket peer's uid (`None` over TCP).
    peer_uid: Option<u32>,
    /// Authenticated, and the client has not sent COM_QUIT (so an end now is an abort).
    open: bool,
    /// This connection was already counted in `Aborted_connects`.
    aborted_counted: bool,
    log_warnings: u64,
    /// Why an authenticated connection ended without COM_QUIT, for the `Aborted connection`
    /// warning (None: killed, which MariaDB does not report).
    end_reason: Option<&'static str>,
    /// Per result of the last COM_QUERY / COM_STMT_EXECUTE: (rows sent, rows affected, bytes
    /// sent), for the slow log.
    sent: Vec<(u64, u64, u64)>,
}

impl<'a, B: Backend, S: Transport> Connection<'a, B, S> {
    pub(crate) fn new(
        backend: &'a B,
        shared: &'a Shared,
        config: &'a ConnectionConfig,
        stream: S,
        id: u32,
        host: String,
    ) -> Self {
        let traffic = Arc::new(Traffic::default());
        let stream = Counted::new(stream, traffic.clone(), backend.traffic());
        Connection {
            backend,
            shared,
            config,
            stream: PacketStream::new(stream, config.max_allowed_packet),
            traffic,
            id,
            host,
            scramble: new_scramble(id),
            caps: CapabilityFlags::empty(),
            user: String::new(),
            session: None,
            registration: None,
            stmts: HashMap::new(),
            last_prepared: None,
            payload: Vec::new(),
            scratch: Vec::new(),
            reserved_slot: false,
            peer_uid: None,
            open: false,
            aborted_counted: false,
            log_warnings: LOG_WARNINGS,
            end_reason: Some(READ_ERROR),
            sent: Vec::new(),
        }
    }

    /// Marks the connection as holding the slot reserved above `max_connections`.
    pub(crate) fn reserved_slot(mut self, extra: bool) -> Self {
        self.reserved_slot = extra;
        self
    }

    /// Runs the connection to its end and returns its socket, so the caller can release the
    /// connection slot before the peer sees the close (the session and its registration are
    /// already gone by then).
    pub(crate) fn run(mut self) -> S {
        self.serve();
        if self.open {
            self.backend.aborted_client();
            if let Some(reason) = self.end_reason.filter(|_| self.log_warnings >= 2) {
                let db = self
                    .session
                    .as_ref()
                    .and_then(|s| s.current_database().map(str::to_string))
                    .unwrap_or_else(|| "unconnected".to_string());
                (self.config.log_warning)(&format!(
                    "Aborted connection {} to db: '{db}' user: '{}' host: '{}' ({reason})",
                    self.id, self.user, self.host
                ));
            }
        }
        self.session = None;
        self.registration = None;
        self.stream.into_inner().into_inner()
    }

    /// Errors are answered on the wire where possible and otherwise just end the connection.
    fn serve(&mut self) {
        let _ = self.stream.get_ref().set_write_timeout(Some(WRITE_TIMEOUT));
        let _ = self.stream.get_ref().set_read_timeout(Some(IDLE_TICK));
        let connect_timeout = self
            .backend
            .global_int("connect_timeout")
            .map_or(CONNECT_TIMEOUT, Duration::from_secs);
        if let Some(max) = self.backend.global_int("max_allowed_packet") {
            self.stream.set_max_allowed(max as usize);
        }
        self.log_warnings = self
            .backend
            .global_int("log_warnings")
            .unwrap_or(LOG_WARNINGS);
        self.peer_uid = self.stream.get_ref().peer_uid();
        self.stream.set_max_stalls(u32::MAX);
        self.stream
            .set_deadline(Some(Instant::now() + connect_timeout));
        let ready = matches!(self.handshake(), Ok(true));
        self.stream.set_deadline(None);
        if !ready {
            self.count_aborted_connect();
            return;
        }
        self.open = true;
        self.stream.set_max_stalls(NET_READ_STALLS);
        loop {
            if !self.wait_for_command() {
                return;
            }
            self.stream.reset_sequence();
            debug_assert!(
                !self.stream.has_pending_output(),
                "the previous response was not flushed before the next command"
            );
            let mut payload = std::mem::take(&mut self.payload);
            let read = self.stream.read_packet(&mut payload);
            let flow = match read {
                Ok(()) => self.dispatch(&payload),
                Err(e) => {
                    self.answer_frame_error(e);
                    return;
                }
            };
            self.payload = payload;
            // Keep a huge packet's buffer from living for the rest of the connection.
            if self.payload.capacity() > 1 << 20 {
                self.payload = Vec::new();
            }
            match flow {
                Ok(Flow::Continue) => {
                    if self.stream.flush().is_err() {
                        self.end_reason = Some(WRITE_ERROR);
                        return;
                    }
                }
                Ok(Flow::Quit) => {
                    let _ = self.stream.flush();
                    return;
                }
                Err(ConnError::Io) => return,
                Err(ConnError::Malformed(m)) => {
                    self.send_error(
                        ER_MALFORMED_PACKET,
                        &format!("Malformed communication packet ({m})"),
                    );
                    let _ = self.stream.flush();
                    return;
                }
            }
        }
    }

    /// Idles until the next command arrives. False when the connection must end instead: the
    /// peer closed, `wait_timeout` passed, or the connection was killed. Nothing is sent then
    /// (as MariaDB: the client was not waiting for a reply, so it sees the close on its next
    /// command).
    fn wait_for_command(&mut self) -> bool {
        let idle_since = Instant::now();
        let wait_timeout = match self.session.as_ref().and_then(|s| s.wait_timeout()) {
            Some(w) => Some(w),
            None => self.config.wait_timeout,
        };
        loop {
            match self.stream.wait_readable() {
                Ok(true) => return true,
                Ok(false) => {
                    if self.registration.as_ref().is_some_and(B::is_killed) {
                        self.end_reason = None;
                        return false;
                    }
                    if wait_timeout.is_some_and(|w| idle_since.elapsed() >= w) {
                        self.end_reason = Some(TIMEOUT);
                        return false;
                    }
                }
                Err(_) => return false,
            }
        }
    }

    fn answer_frame_error(&mut self, e: FrameError) {
        match e {
            FrameError::Closed | FrameError::Io(_) => {}
            FrameError::OutOfOrder { .. } => {
                self.send_error(ER_NET_PACKETS_OUT_OF_ORDER, "Got packets out of order");
                let _ = self.stream.flush();
            }
            FrameError::TooLarge { .. } => {
                self.send_error(
                    ER_NET_PACKET_TOO_LARGE,
                    "Got a packet bigger than 'max_allowed_packet' bytes",
                );
                let _ = self.stream.flush();
            }
        }
    }

    fn send_error(&mut self, e: ErrorCode, msg: &str) {
        let start = self.stream.begin_packet();
        put_err(self.stream.out(), e.code, e.sqlstate, msg);
        self.stream.finish_packet(start);
    }

    fn send_sql_error(&mut self, e: &SqlError) {
        let start = self.stream.begin_packet();
        put_sql_err(self.stream.out(), e);
        self.stream.finish_packet(start);
    }

    fn status(&self, more: bool) -> u16 {
        let mut s = StatusFlags::empty();
        if let Some(sess) = &self.session {
            if sess.in_transaction() {
                s |= StatusFlags::SERVER_STATUS_IN_TRANS;
            }
            if sess.autocommit() {
                s |= StatusFlags::SERVER_STATUS_AUTOCOMMIT;
            }
        } else {
            s |= StatusFlags::SERVER_STATUS_AUTOCOMMIT;
        }
        if more {
            s |= StatusFlags::SERVER_MORE_RESULTS_EXISTS;
        }
        s.bits()
    }

    fn warnings(&self) -> u16 {
        self.session.as_ref().map_or(0, |s| s.warning_count())
    }

    fn send_ok(&mut self, affected: u64, last_id: u64, warnings: u16, info: &str, more: bool) {
        let status = self.status(more);
        let start = self.stream.begin_packet();
        put_ok(
            self.stream.out(),
            OK_HEADER,
            affected,
            last_id,
            status,
            warnings,
            info,
        );
        self.stream.finish_packet(start);
    }

    /// The packet that ends a result set (or COM_FIELD_LIST / COM_SET_OPTION replies).
    fn send_terminator(&mut self, more: bool) {
        let status = self.status(more);
        let warnings = self.warnings();
        debug_assert!(
            !more || status & StatusFlags::SERVER_MORE_RESULTS_EXISTS.bits() != 0,
            "MORE_RESULTS_EXISTS on every result but the last"
        );
        let start = self.stream.begin_packet();
        if self.caps.contains(CapabilityFlags::CLIENT_DEPRECATE_EOF) {
            put_ok(self.stream.out(), EOF_HEADER, 0, 0, status, warnings, "");
        } else {
            put_eof(self.stream.out(), warnings, status);
        }
        self.stream.finish_packet(start);
    }

    /// The EOF after column definitions (omitted under CLIENT_DEPRECATE_EOF).
    fn send_intermediate_eof(&mut self) {
        if !self.caps.contains(CapabilityFlags::CLIENT_DEPRECATE_EOF) {
            let status = self.status(false);
            let warnings = self.warnings();
            let start = self.stream.begin_packet();
            put_eof(self.stream.out(), warnings, status);
            self.stream.finish_packet(start);
        }
    }

    fn session(&mut self) -> &mut B::Session {
        // The command loop only runs after the handshake created the session.
        self.session
            .get_or_insert_with(|| self.backend.open_session(self.id, &self.user, &self.host))
    }

    // ---------------------------------------------------------------------------------------
    // Handshake

    fn send_greeting(&mut self) {
        let version = greeting_version(&self.config.version);
        let start = self.stream.begin_packet();
        put_handshake(
            self.stream.out(),
            &Handshake {
                version: &version,
                connection_id: self.id,
                scramble: &self.scramble,
                capabilities: server_capabilities().bits(),
                collation: SERVER_COLLATION,
                status: StatusFlags::SERVER_STATUS_AUTOCOMMIT.bits(),
                mariadb_capabilities: MARIADB_CAPABILITIES,
                auth_plugin: NATIVE_PLUGIN,
            },
        );
        self.stream.finish_packet(start);
    }

    /// Reads the rest of an authentication exchange: when the client used another plugin
    /// (e.g. MySQL 8's caching_sha2_password) and sent data, asks it to switch to
    /// mysql_native_password and returns the new response.
    fn auth_data(
        &mut self,
        plugin: Option<&[u8]>,
        response: Vec<u8>,
    ) -> Result<Vec<u8>, ConnError> {
        let native = match plugin {
            None => true,
            Some(p) => p == NATIVE_PLUGIN.as_bytes() || p.is_empty(),
        };
        if native || response.is_empty() {
            return Ok(response);
        }
        let start = self.stream.begin_packet();
        let out = self.stream.out();
        out.push(0xFE);
        put_nul_bytes(out, NATIVE_PLUGIN.as_bytes());
        out.extend_from_slice(&self.scramble);
        out.push(0);
        self.stream.finish_packet(start);
        self.stream.flush()?;
        let mut p = Vec::new();
        match self.stream.read_packet(&mut p) {
            Ok(()) => Ok(p),
            Err(e) => {
                self.answer_frame_error(e);
                let _ = self.stream.flush();
                Err(ConnError::Io)
            }
        }
    }

    /// Counts the connection in `Aborted_connects` once. Called before a refusal is sent, so a
    /// client that saw the refusal sees the counter already raised.
    fn count_aborted_connect(&mut self) {
        if !std::mem::replace(&mut self.aborted_counted, true) {
            self.backend.aborted_connect();
        }
    }

    /// True when the peer is a unix-socket client running as the server's OS user or as OS
    /// root (the `unix_socket` plugin's check).
    fn socket_peer_trusted(&self) -> bool {
        // SAFETY: geteuid has no preconditions and cannot fail.
        let euid = unsafe { libc::geteuid() };
        self.peer_uid.is_some_and(|uid| uid == 0 || uid == euid)
    }

    /// Checks credentials; sends 1045 (1698 for a socket-only account) when they are wrong and
    /// logs the failure when `log_warnings` >= 2.
    /// `command`: the general log's name for the login (`Connect`, `Change user`).
    fn authenticate(
        &mut self,
        user: &str,
        response: &[u8],
        db: Option<&str>,
        command: &str,
    ) -> bool {
        if self.backend.general_log_on() {
            let how = if self.peer_uid.is_some() {
                "Socket"
            } else {
                "TCP/IP"
            };
            let line = format!("{user}@{} on {} using {how}", self.host, db.unwrap_or(""));
            self.backend.general_log(self.id, command, &line);
        }
        let acct = self.backend.lookup_account(user, &self.host);
        let ok = acct.as_ref().is_some_and(|a| {
            (a.unix_socket && self.socket_peer_trusted())
                || (a.password_login && verify_native(&self.scramble, response, &a.auth_hash))
        });
        if ok {
            return true;
        }
        let (code, msg) = match &acct {
            Some(a) if !a.password_login => (
                ER_ACCESS_DENIED_NO_PASSWORD_ERROR,
                format!("Access denied for user '{}'@'{}'", user, self.host),
            ),
            _ => (
                ER_ACCESS_DENIED_ERROR,
                format!(
                    "Access denied for user '{}'@'{}' (using password: {})",
                    user,
                    self.host,
                    if response.is_empty() { "NO" } else { "YES" }
                ),
            ),
        };
        if self.log_warnings >= 2 {
            (self.config.log_warning)(&msg);
        }
        self.backend.general_log(self.id, "Connect", &msg);
        self.count_aborted_connect();
        self.send_error(code, &msg);
        false
    }

    /// MariaDB's warning (at `log_warnings` >= 2) for a connection closed before its login.
    fn log_closed_before_login(&self) {
        if self.log_warnings >= 2 {
            (self.config.log_warning)(&format!(
                "Aborted connection {} to db: 'unconnected' user: 'unauthenticated' host: '{}' (This connection closed normally without authentication)",
                self.id, self.host
            ));
        }
    }

    /// Greeting, response, authentication, optional initial database. Returns whether the
    /// connection is ready for commands.
    fn handshake(&mut self) -> Result<bool, ConnError> {
        self.send_greeting();
        if let Err(e) = self.stream.flush() {
            if is_peer_gone(&e) {
                self.log_closed_before_login();
                return Ok(false);
            }
            return Err(e.into());
        }
        let mut payload = Vec::new();
        if let Err(e) = self.stream.read_packet(&mut payload) {
            // A client that closes before it logs in (a port probe, a health check) is a normal
            // close, whether the kernel delivers it as an end of stream or, when the greeting
            // was still unread in the client's socket, as a reset.
            let gone = match &e {
                FrameError::Closed => true,
                FrameError::Io(io) => is_peer_gone(io),
                _ => false,
            };
            if gone {
                self.log_closed_before_login();
            }
            self.answer_frame_error(e);
            let _ = self.stream.flush();
            return Ok(false);
        }
        if is_ssl_request(&payload) {
            self.count_aborted_connect();
            self.send_error(ER_HANDSHAKE_ERROR, "Bad handshake (TLS is not supported)");
            self.stream.flush()?;
            return Ok(false);
        }
        let resp = match decode_handshake_response(&payload) {
            Ok(r) => r,
            Err(_) => {
                self.count_aborted_connect();
                self.send_error(ER_HANDSHAKE_ERROR, "Bad handshake");
                self.stream.flush()?;
                return Ok(false);
            }
        };
        self.caps = resp.capabilities & server_capabilities();
        let client_collation = u16::from(resp.charset);
        let user = String::from_utf8_lossy(resp.user).into_owned();
        let db = resp
            .database
            .map(|d| String::from_utf8_lossy(d).into_owned());
        let plugin = resp.auth_plugin.map(<[u8]>::to_vec);
        let response = resp.auth_response.to_vec();
        let response = self.auth_data(plugin.as_deref(), response)?;
        if !self.authenticate(&user, &response, db.as_deref(), "Connect") {
            self.stream.flush()?;
            return Ok(false);
        }
        if self.reserved_slot && !self.backend.is_connection_admin(&user, &self.host) {
            self.count_aborted_connect();
            self.send_error(ER_CON_COUNT_ERROR, "Too many connections");
            self.stream.flush()?;
            return Ok(false);
        }
        self.user = user;
        self.registration = Some(
            self.backend
                .register_connection(self.id, &self.user, &self.host),
        );
        let mut session = self.backend.open_session(self.id, &self.user, &self.host);
        if let Some(probe) = self.stream.get_ref().liveness_probe() {
            session.set_liveness_probe(probe);
        }
        session.set_traffic(self.traffic.clone());
        session.set_multi_statements(self.caps.contains(CapabilityFlags::CLIENT_MULTI_STATEMENTS));
        if self.caps.contains(CapabilityFlags::CLIENT_INTERACTIVE) {
            session.make_interactive();
        }
        session.set_client_collation(client_collation);
        if let Some(db) = db {
            if let Err(e) = session.use_database(&db) {
                self.count_aborted_connect();
                self.send_sql_error(&e);
                self.stream.flush()?;
                return Ok(false);
            }
        }
        self.session = Some(session);
        self.send_ok(0, 0, 0, "", false);
        self.stream.flush()?;
        Ok(true)
    }

    // ---------------------------------------------------------------------------------------
    // Commands

    fn dispatch(&mut self, payload: &[u8]) -> Result<Flow, ConnError> {
        let Some((&cmd, body)) = payload.split_first() else {
            return Err(Malformed {
                what: "empty command packet",
                offset: 0,
            }
            .into());
        };
        if self.registration.as_ref().is_some_and(B::is_killed) {
            self.send_error(ER_CONNECTION_KILLED, "Connection was killed");
            self.end_reason = None;
            return Ok(Flow::Quit);
        }
        let Some(cmd) = Command::from_byte(cmd) else {
            self.send_error(ER_UNKNOWN_COM_ERROR, "Unknown command");
            return Ok(Flow::Continue);
        };
        match cmd {
            Command::Quit => {
                // An orderly end, not an aborted client.
                self.log_general("Quit", "");
                self.open = false;
                return Ok(Flow::Quit);
            }
            Command::InitDb => {
                let db = String::from_utf8_lossy(body).into_owned();
                self.log_general("Init DB", &db);
                match self.session().use_database(&db) {
                    Ok(()) => self.send_ok(0, 0, 0, "", false),
                    Err(e) => self.send_sql_error(&e),
                }
            }
            Command::Query => {
                let text = statement_text(body);
                let sql = onelog_sql::querylog::trim_query(&text);
                self.log_general("Query", sql);
                let results = self.session().query(sql);
                if self.killed_while_running(results.last().and_then(|r| r.as_ref().err())) {
                    // Logged as MariaDB logs a killed statement: nothing sent.
                    self.sent.clear();
                    self.account_slow_statements(sql, None);
                    self.end_reason = None;
                    return Ok(Flow::Quit);
                }
                let flow = self.send_results(results)?;
                self.stream.flush()?;
                self.account_slow_statements(sql, None);
                return Ok(flow);
            }
            Command::FieldList => self.com_field_list(body)?,
            Command::Shutdown => {
                let results = self.session().query("SHUTDOWN");
                return self.send_results(results);
            }
            Command::Refresh => {
                self.log_general("Refresh", "");
                let Some(&options) = body.first() else {
                    return Err(Malformed {
                        what: "COM_REFRESH without options",
                        offset: 1,
                    }
                    .into());
                };
                return self.com_refresh(options);
            }
            Command::Statistics => {
                // A bare string packet.
                self.log_general("Statistics", "");
                let stats = self.shared.statistics(self.backend.slow_queries());
                self.stream.write_packet(stats.as_bytes());
            }
            Command::ProcessKill => {
                let id = Reader::new(body).u32("connection id")?;
                let results = self.session().query(&format!("KILL {id}"));
                return self.send_results(results);
            }
            Command::RegisterSlave => match self.session().register_slave(body) {
                Ok(()) => self.send_ok(0, 0, 0, "", false),
                Err(e) => self.send_sql_error(&e),
            },
            Command::BinlogDump => return self.com_binlog_dump(body),
            Command::Debug => {
                self.log_general("Debug", "");
                self.send_terminator(false)
            }
            Command::Ping => self.send_ok(0, 0, 0, "", false),
            Command::ChangeUser => return self.com_change_user(body),
            Command::StmtPrepare => self.com_stmt_prepare(body),
            Command::StmtExecute => return self.com_stmt_execute(body),
            Command::StmtSendLongData => self.com_stmt_send_long_data(body)?,
            Command::StmtClose => {
                // No response.
                let id = stmt_id(body)?;
                let known = self.stmts.remove(&id).is_some();
                self.session().close_statement(id);
                if known {
                    self.log_general("Close stmt", "");
                }
            }
            Command::StmtReset => self.com_stmt_reset(body)?,
            Command::SetOption => {
                let opt = Reader::new(body).u16("option")?;
                match opt {
                    0 | 1 => {
                        let on = opt == 0;
                        self.caps.set(CapabilityFlags::CLIENT_MULTI_STATEMENTS, on);
                        self.session().set_multi_statements(on);
                        self.send_terminator(false);
                    }
                    _ => self.send_error(ER_UNKNOWN_COM_ERROR, "Unknown command"),
                }
            }
            Command::StmtFetch => {
                let id = stmt_id(body)?;
                self.send_error(
                    ER_STMT_HAS_NO_OPEN_CURSOR,
                    &format!("The statement ({id}) has no open cursor."),
                );
            }
            Command::ResetConnection => {
                self.stmts.clear();
                self.last_prepared = None;
                self.session().reset();
                self.send_ok(0, 0, 0, "", false);
            }
            _ => self.send_error(ER_UNKNOWN_COM_ERROR, "Unknown command"),
        }
        Ok(Flow::Continue)
    }

    /// Whether this connection's commands go to the general log now (it is on and the session
    /// did not set `sql_log_off`): nothing is formatted for it otherwise.
    fn general_wanted(&self) -> bool {
        self.backend.general_log_on() && !self.session.as_ref().is_some_and(|s| s.sql_log_off())
    }

    /// Writes a general log line for this connection (unless the log is off or the session
    /// set `sql_log_off`).
    fn log_general(&self, command: &str, argument: &str) {
        if self.general_wanted() {
            self.backend.general_log(self.id, command, argument);
        }
    }

    /// The bytes this connection has produced: sent on the socket plus still buffered.
    fn bytes_out(&mut self) -> u64 {
        self.traffic.get().1 + self.stream.out().len() as u64
    }

    /// After the answer of a COM_QUERY (`sql`, its trimmed text) or a COM_STMT_EXECUTE
    /// (`exec`: statement id and parameters) was sent: each statement it ran that the
    /// session's slow log settings call slow is counted in `Slow_queries` and written to the
    /// slow query log (MariaDB's entry per statement; an execution is logged with its
    /// parameters written in and `Bytes_sent: 0`, as MariaDB logs it).
    fn account_slow_statements(&self, sql: &str, exec: Option<(u32, &[Value])>) {
        let Some(session) = self.session.as_ref() else {
            return;
        };
        for (i, run) in session.statement_runs().iter().enumerate() {
            if !run.slow {
                continue;
            }
            let text: std::borrow::Cow<'_, str> = match (exec, &run.expanded) {
                (Some((id, params)), _) => session
                    .expanded_statement(id, params)
                    .map_or(std::borrow::Cow::Borrowed(""), std::borrow::Cow::Owned),
                (None, Some(e)) => std::borrow::Cow::Borrowed(e),
                (None, None) => {
                    std::borrow::Cow::Borrowed(sql.get(run.text.clone()).unwrap_or(sql))
                }
            };
            let (rows_sent, rows_affected, bytes) = self.sent.get(i).copied().unwrap_or_default();
            let ip = self.stream.get_ref().peer_ip().unwrap_or_default();
            self.backend.slow_query(&onelog_sql::querylog::SlowEntry {
                connection_id: self.id,
                user: &self.user,
                host: &self.host,
                ip: &ip,
                db: run
                    .db
                    .as_deref()
                    .or(session.current_database())
                    .unwrap_or(""),
                query_time: run.took,
                rows_sent,
                rows_examined: run.rows_examined,
                rows_affected,
                bytes_sent: if exec.is_some() || run.expanded.is_some() {
                    0
                } else {
                    bytes
                },
                start: run.start,
                sql: &text,
            });
        }
    }

    /// COM_REFRESH (`mariadb-admin refresh`, `flush-threads`): MariaDB's `REFRESH_*` bits run
    /// as the statements they stand for (so privileges, errors and counters are theirs): one
    /// `FLUSH` for grant (PRIVILEGES), log (LOGS), hosts, status, threads and tables, then
    /// `RESET SLAVE` (slave) and `RESET MASTER` (master). An OK when all succeed, else the
    /// first error.
    fn com_refresh(&mut self, options: u8) -> Result<Flow, ConnError> {
        const FLUSHED: [(u8, &str); 6] = [
            (0x01, "PRIVILEGES"),
            (0x02, "LOGS"),
            (0x08, "HOSTS"),
            (0x10, "STATUS"),
            (0x20, "THREADS"),
            (0x04, "TABLES"),
        ];
        let what: Vec<&str> = FLUSHED
            .iter()
            .filter(|(bit, _)| options & bit != 0)
            .map(|&(_, w)| w)
            .collect();
        let mut statements = Vec::new();
        if !what.is_empty() {
            statements.push(format!("FLUSH {}", what.join(", ")));
        }
        if options & 0x40 != 0 {
            statements.push("RESET SLAVE".to_string());
        }
        if options & 0x80 != 0 {
            statements.push("RESET MASTER".to_string());
        }
        for sql in statements {
            let mut results = self.session().query(&sql);
            if let Some(Err(e)) = results.pop() {
                self.send_sql_error(&e);
                return Ok(Flow::Continue);
            }
        }
        self.send_ok(0, 0, 0, "", false);
        Ok(Flow::Continue)
    }

    /// True when the statement that just ended with `err` was stopped because its connection
    /// was killed (`KILL [CONNECTION]`) or its client is gone: the connection then closes
    /// without a reply, as MariaDB's does (the client sees the connection lost).
    /// COM_BINLOG_DUMP: the session streams over this connection's socket; afterwards the
    /// connection closes (MariaDB ends a dump thread's connection too), unless the dump was
    /// refused before it began.
    fn com_binlog_dump(&mut self, body: &[u8]) -> Result<Flow, ConnError> {
        self.session();
        let Some(mut session) = self.session.take() else {
            return Err(ConnError::Io);
        };
        let registration = &self.registration;
        let killed = || registration.as_ref().is_some_and(B::is_killed);
        let result = {
            let mut link = DumpLink::new(&mut self.stream, &killed);
            session.binlog_dump(body, &mut link)
        };
        self.session = Some(session);
        match result {
            Err(e) => {
                self.send_sql_error(&e);
                Ok(Flow::Continue)
            }
            Ok(()) => {
                self.open = false;
                Ok(Flow::Quit)
            }
        }
    }

    fn killed_while_running(&self, err: Option<&SqlError>) -> bool {
        err.is_some_and(|e| e.code == ER_QUERY_INTERRUPTED.code)
            && self.registration.as_ref().is_some_and(B::is_killed)
    }

    /// Sends the results of a COM_QUERY (one per statement; an error is always last).
    /// Records in `self.sent` the rows and bytes of each result.
    fn send_results(&mut self, results: Vec<Result<Output, SqlError>>) -> Result<Flow, ConnError> {
        let n = results.len();
        self.sent.clear();
        if n == 0 {
            self.send_ok(0, 0, 0, "", false);
            return Ok(Flow::Continue);
        }
        let mut shutdown = false;
        for (i, r) in results.into_iter().enumerate() {
            let more = i + 1 < n;
            let before = self.bytes_out();
            let (rows, affected) = match &r {
                Ok(out) => output_counts(out),
                Err(_) => (0, 0),
            };
            let stop = match r {
                Ok(out) => {
                    if matches!(out, Output::Shutdown) {
                        shutdown = true;
                    }
                    self.send_output(out, more, false)?;
                    false
                }
                Err(e) => {
                    self.send_sql_error(&e);
                    true
                }
            };
            let bytes = self.bytes_out() - before;
            self.sent.push((rows, affected, bytes));
            if stop {
                break;
            }
        }
        if shutdown {
            self.stream.flush()?;
            self.shared.request_shutdown();
            return Ok(Flow::Quit);
        }
        Ok(Flow::Continue)
    }

    fn send_output(&mut self, out: Output, more: bool, binary: bool) -> Result<(), ConnError> {
        match out {
            Output::Ok {
                affected_rows,
                last_insert_id,
                warnings,
                info,
            } => {
                self.send_ok(affected_rows, last_insert_id, warnings, &info, more);
            }
            Output::Shutdown => self.send_ok(0, 0, 0, "", more),
            Output::Rows { columns, rows } => {
                if columns.is_empty() {
                    self.send_ok(0, 0, self.warnings(), "", more);
                    return Ok(());
                }
                self.send_result_set(&columns, &rows, more, binary)?;
            }
        }
        Ok(())
    }

    fn send_column_defs(&mut self, columns: &[Column]) {
        for c in columns {
            let start = self.stream.begin_packet();
            put_column_def(self.stream.out(), c, false);
            self.stream.finish_packet(start);
        }
    }

    fn send_result_set(
        &mut self,
        columns: &[Column],
        rows: &[Vec<Value>],
        more: bool,
        binary: bool,
    ) -> Result<(), ConnError> {
        let start = self.stream.begin_packet();
        put_lenenc_int(self.stream.out(), columns.len() as u64);
        self.stream.finish_packet(start);
        self.send_column_defs(columns);
        self.send_intermediate_eof();
        let types: Vec<u8> = columns.iter().map(|c| wire_type(c.column_type)).collect();
        let mut scratch = std::mem::take(&mut self.scratch);
        for row in rows {
            let start = self.stream.begin_packet();
            let out = self.stream.out();
            if binary {
                out.push(0x00);
                let bitmap_at = out.len();
                let bitmap_len = (columns.len() + 7 + 2) / 8;
                out.resize(bitmap_at + bitmap_len, 0);
                for (i, c) in columns.iter().enumerate() {
                    let v = row.get(i).unwrap_or(&Value::Null);
                    if binary_is_null(v, types[i]) {
                        out[bitmap_at + (i + 2) / 8] |= 1 << ((i + 2) % 8);
                    } else {
                        put_binary(out, v, c, types[i], &mut scratch);
                    }
                }
            } else {
                for (i, c) in columns.iter().enumerate() {
                    put_text(out, row.get(i).unwrap_or(&Value::Null), c, &mut scratch);
                }
            }
            self.stream.finish_packet(start);
            self.stream.maybe_flush()?;
        }
        self.scratch = scratch;
        self.send_terminator(more);
        Ok(())
    }

    fn com_field_list(&mut self, body: &[u8]) -> Result<(), ConnError> {
        let mut r = Reader::new(body);
        let table = String::from_utf8_lossy(r.nul_or_rest()).into_owned();
        let wildcard = String::from_utf8_lossy(r.rest()).into_owned();
        // MariaDB logs it once a database is chosen, before the privilege check.
        if self.general_wanted()
            && self
                .session
                .as_ref()
                .is_some_and(|s| s.current_database().is_some())
        {
            self.log_general("Field List", &format!("{table} {wildcard}"));
        }
        match self.session().field_list(&table, &wildcard) {
            Ok(cols) => {
                for c in &cols {
                    let start = self.stream.begin_packet();
                    put_column_def(self.stream.out(), c, true);
                    self.stream.finish_packet(start);
                }
                self.send_terminator(false);
            }
            Err(e) => self.send_sql_error(&e),
        }
        Ok(())
    }

    fn com_change_user(&mut self, body: &[u8]) -> Result<Flow, ConnError> {
        let req = decode_change_user(body, self.caps)?;
        let user = String::from_utf8_lossy(req.user).into_owned();
        let db = req
            .database
            .map(|d| String::from_utf8_lossy(d).into_owned());
        let plugin = req.auth_plugin.map(<[u8]>::to_vec);
        let response = self.auth_data(plugin.as_deref(), req.auth_response.to_vec())?;
        if !self.authenticate(&user, &response, db.as_deref(), "Change user") {
            return Ok(Flow::Quit);
        }
        self.stmts.clear();
        self.last_prepared = None;
        self.registration = None;
        self.user = user;
        self.registration = Some(
            self.backend
                .register_connection(self.id, &self.user, &self.host),
        );
        let multi = self.caps.contains(CapabilityFlags::CLIENT_MULTI_STATEMENTS);
        let user = self.user.clone();
        let session = self.session();
        session.reset();
        let res = session.change_user(&user, db.as_deref());
        session.set_multi_statements(multi);
        match res {
            Ok(()) => self.send_ok(0, 0, 0, "", false),
            Err(e) => self.send_sql_error(&e),
        }
        Ok(Flow::Continue)
    }

    fn com_stmt_prepare(&mut self, body: &[u8]) {
        let sql = statement_text(body);
        let info = match self.session().prepare(&sql) {
            Ok(i) => i,
            Err(e) => {
                self.send_sql_error(&e);
                return;
            }
        };
        self.log_general("Prepare", onelog_sql::querylog::trim_query(&sql));
        let warnings = self.warnings();
        let start = self.stream.begin_packet();
        let out = self.stream.out();
        out.push(0x00);
        put_u32(out, info.stmt_id);
        put_u16(out, info.columns.len().min(usize::from(u16::MAX)) as u16);
        put_u16(out, info.params);
        out.push(0);
        put_u16(out, warnings);
        self.stream.finish_packet(start);
        if info.params > 0 {
            let p = param_column();
            for _ in 0..info.params {
                let start = self.stream.begin_packet();
                put_column_def(self.stream.out(), &p, false);
                self.stream.finish_packet(start);
            }
            self.send_intermediate_eof();
        }
        if !info.columns.is_empty() {
            self.send_column_defs(&info.columns);
            self.send_intermediate_eof();
        }
        self.last_prepared = Some(info.stmt_id);
        self.stmts.insert(
            info.stmt_id,
            StmtState {
                params: info.params,
                bound_types: None,
                long_data: vec![None; usize::from(info.params)],
                long_data_size: 0,
                long_data_error: false,
            },
        );
    }

    /// Resolves MariaDB's "last prepared statement" id (0xFFFFFFFF).
    fn resolve_stmt(&self, id: u32) -> u32 {
        if id == u32::MAX {
            self.last_prepared.unwrap_or(id)
        } else {
            id
        }
    }

    fn com_stmt_execute(&mut self, body: &[u8]) -> Result<Flow, ConnError> {
        let id = self.resolve_stmt(stmt_id(body)?);
        let Some(st) = self.stmts.get_mut(&id) else {
            self.send_error(
                ER_UNKNOWN_STMT_HANDLER,
                &format!("Unknown prepared statement handler ({id}) given to mysqld_stmt_execute"),
            );
            return Ok(Flow::Continue);
        };
        if st.long_data_error {
            st.long_data.iter_mut().for_each(|d| *d = None);
            st.long_data_size = 0;
            st.long_data_error = false;
            self.send_error(
                ER_NET_PACKET_TOO_LARGE,
                "Got a packet bigger than 'max_allowed_packet' bytes",
            );
            return Ok(Flow::Continue);
        }
        let exec = match decode_execute(
            body,
            usize::from(st.params),
            st.bound_types.as_deref(),
            &st.long_data,
        ) {
            Ok(e) => e,
            Err(m) if m.what == "parameter types never bound" => {
                self.send_error(
                    ER_WRONG_ARGUMENTS,
                    "Incorrect arguments to mysqld_stmt_execute",
                );
                return Ok(Flow::Continue);
            }
            Err(m) => return Err(m.into()),
        };
        if let Some(t) = exec.new_types {
            st.bound_types = Some(t);
        }
        st.long_data.iter_mut().for_each(|d| *d = None);
        st.long_data_size = 0;
        let result = self.session().execute(id, &exec.params);
        if self.killed_while_running(result.as_ref().err()) {
            self.end_reason = None;
            return Ok(Flow::Quit);
        }
        if result.is_ok() && self.general_wanted() {
            if let Some(text) = self
                .session
                .as_ref()
                .and_then(|s| s.expanded_statement(id, &exec.params))
            {
                self.log_general("Execute", &text);
            }
        }
        self.sent.clear();
        self.sent.push(match &result {
            Ok(out) => {
                let (rows, affected) = output_counts(out);
                (rows, affected, 0)
            }
            Err(_) => (0, 0, 0),
        });
        match result {
            Ok(Output::Shutdown) => {
                self.send_ok(0, 0, 0, "", false);
                self.stream.flush()?;
                self.shared.request_shutdown();
                return Ok(Flow::Quit);
            }
            Ok(out) => self.send_output(out, false, true)?,
            Err(e) => self.send_sql_error(&e),
        }
        self.account_slow_statements("", Some((id, &exec.params)));
        Ok(Flow::Continue)
    }

    fn com_stmt_send_long_data(&mut self, body: &[u8]) -> Result<(), ConnError> {
        let (id, param, data) = decode_send_long_data(body)?;
        let id = self.resolve_stmt(id);
        let max = self.config.max_allowed_packet;
        // No response; errors surface at the next COM_STMT_EXECUTE, as in MariaDB.
        let mut logged = false;
        if let Some(st) = self.stmts.get_mut(&id) {
            logged = usize::from(param) < st.long_data.len();
            match st.long_data.get_mut(usize::from(param)) {
                Some(slot) if st.long_data_size + data.len() <= max => {
                    st.long_data_size += data.len();
                    slot.get_or_insert_with(Vec::new).extend_from_slice(data);
                }
                _ => st.long_data_error = true,
            }
        }
        // MariaDB's line for a known statement's parameter (its mysql_stmt_get_longdata).
        if logged {
            self.log_general("Long Data", "");
        }
        Ok(())
    }

    fn com_stmt_reset(&mut self, body: &[u8]) -> Result<(), ConnError> {
        let id = self.resolve_stmt(stmt_id(body)?);
        match self.stmts.get_mut(&id) {
            None => self.send_error(
                ER_UNKNOWN_STMT_HANDLER,
                &format!("Unknown prepared statement handler ({id}) given to mysqld_stmt_reset"),
            ),
            Some(st) => {
                st.long_data.iter_mut().for_each(|d| *d = None);
                st.long_data_size = 0;
                st.long_data_error = false;
                match self.session().reset_statement(id) {
                    Ok(()) => {
                        self.log_general("Reset stmt", "");
                        self.send_ok(0, 0, 0, "", false)
                    }
                    Err(e) => self.send_sql_error(&e),
                }
            }
        }
        Ok(())
    }
}

/// (rows sent, rows affected) by one statement's result, for the slow query log.
fn output_counts(out: &Output) -> (u64, u64) {
    match out {
        Output::Rows { rows, .. } => (rows.len() as u64, 0),
        Output::Ok { affected_rows, .. } => (0, *affected_rows),
        Output::Shutdown => (0, 0),
    }
}

/// The text of a COM_QUERY / COM_STMT_PREPARE. Some C clients send the terminating NUL of the
/// string as part of the packet (`mariadb-slap` does: `mysql_real_query(q, strlen(q) + 1)`);
/// MariaDB's lexer ends the statement at a NUL, so trailing NULs are dropped here.
fn statement_text(body: &[u8]) -> std::borrow::Cow<'_, str> {
    let end = body.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
    // Literals holding bytes that are not UTF-8 become hex literals (binary data kept).
    onelog_sql::statement_text_of_bytes(&body[..end])
}

#[cfg(test)]
mod statement_text_tests {
    #[test]
    fn statement_text_drops_the_c_string_terminator() {
        assert_eq!(super::statement_text(b"SELECT 1\0"), "SELECT 1");
        assert_eq!(super::statement_text(b"SELECT 1\0\0"), "SELECT 1");
        assert_eq!(super::statement_text(b"SELECT '\0'"), "SELECT '\0'");
        assert_eq!(super::statement_text(b"\0"), "");
    }
}
