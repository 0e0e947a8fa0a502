//! The session's side of the primary's replication commands: COM_REGISTER_SLAVE and
//! COM_BINLOG_DUMP arrive here from the protocol layer, are checked (privilege REPLICATION
//! SLAVE, as MariaDB) and handed to `onelog_replication::source` with what the session's `@`
//! variables asked for (`@master_binlog_checksum`, `@slave_connect_state`, ...).
//!
//! Owns the translation of the session state into [`DumpParams`] and the PROCESSLIST command
//! of a dump (`Binlog Dump`). Invariants: no dump starts without REPLICATION SLAVE; a dump's
//! connection is shown as `Binlog Dump` while it runs.

use std::time::Duration;

use onelog_protocol::errors;
use onelog_replication::source::{
    run_dump, Checksum, DumpEnd, DumpIo, DumpParams, DumpRequest, PacketSink, RegisterSlave,
};

use crate::context::ExecContext;
use crate::privilege::REPLICATION_SLAVE;
use crate::server::registry::Registry;
use crate::session::Session;
use crate::sysvar::registry::value_text;
use crate::SqlError;

fn var_text(cx: &ExecContext, name: &str) -> Option<String> {
    value_text(cx.user_vars.get(name)?)
}

fn var_int(cx: &ExecContext, name: &str) -> Option<u64> {
    let t = var_text(cx, name)?;
    let t = t.trim();
    t.parse::<u64>().ok().or_else(|| {
        t.parse::<f64>()
            .ok()
            .filter(|f| *f >= 0.0)
            .map(|f| f as u64)
    })
}

/// Forwards to the connection's [`DumpIo`] and shows the dump's state in SHOW PROCESSLIST.
struct StateIo<'a> {
    io: &'a mut dyn DumpIo,
    registry: &'a Registry,
    id: u32,
}

impl DumpIo for StateIo<'_> {
    fn send(&mut self, payload: &[u8]) -> std::io::Result<()> {
        self.io.send(payload)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.io.flush()
    }
    fn set_sequence(&mut self, seq: u8) {
        self.io.set_sequence(seq)
    }
    fn send_error(&mut self, code: u16, message: &str) -> std::io::Result<()> {
        self.io.send_error(code, message)
    }
    fn send_eof(&mut self) -> std::io::Result<()> {
        self.io.send_eof()
    }
    fn read_in_background(&mut self, sink: PacketSink) -> bool {
        self.io.read_in_background(sink)
    }
    fn killed(&self) -> bool {
        self.io.killed()
    }
    fn set_state(&mut self, state: &'static str) {
        self.registry
            .update_connection(self.id, |c| c.state = state);
        self.io.set_state(state)
    }
}

fn malformed_register() -> SqlError {
    SqlError::of(
        errors::ER_UNKNOWN_ERROR,
        "Wrong parameters to function register_slave",
    )
}

impl Session {
    /// COM_REGISTER_SLAVE (the body after the command byte).
    pub fn register_slave(&mut self, body: &[u8]) -> Result<(), SqlError> {
        self.require_any_global(REPLICATION_SLAVE, "REPLICATION SLAVE")?;
        let r = RegisterSlave::decode(body).map_err(|_| malformed_register())?;
        let id = self.connection_id;
        self.server.source().register(id, &r);
        Ok(())
    }

    /// COM_BINLOG_DUMP (the body after the command byte): streams until the dump ends; the
    /// connection closes afterwards, as MariaDB's does. `Err` only for what is answered
    /// before any event (privilege, malformed packet).
    pub fn binlog_dump(&mut self, body: &[u8], io: &mut dyn DumpIo) -> Result<DumpEnd, SqlError> {
        self.require_any_global(REPLICATION_SLAVE, "REPLICATION SLAVE")?;
        let request = DumpRequest::decode(body).map_err(|m| {
            SqlError::of(
                errors::ER_MALFORMED_PACKET,
                format!("Malformed communication packet: COM_BINLOG_DUMP {}", m.what),
            )
        })?;
        let server = self.server.clone();
        let params = self.dump_params(request);
        let id = self.connection_id;
        let guard = server.source().start_dump(id, params.request.server_id);
        let registry = server.registry().clone();
        registry.update_connection(id, |c| c.command = "Binlog Dump".into());
        let mut io = StateIo {
            io,
            registry: &registry,
            id,
        };
        let end = run_dump(
            server.engine().log(),
            params,
            server.ack_sink(),
            &guard,
            &mut io,
        );
        Ok(end)
    }

    fn dump_params(&self, request: DumpRequest) -> DumpParams {
        let cx: &ExecContext = self;
        let heartbeat = var_int(cx, "master_heartbeat_period")
            .filter(|&ns| ns > 0)
            .map(Duration::from_nanos);
        DumpParams {
            request,
            checksum: Checksum::from_var(var_text(cx, "master_binlog_checksum").as_deref()),
            capability: var_int(cx, "mariadb_slave_capability").unwrap_or(0),
            heartbeat,
            connect_state: var_text(cx, "slave_connect_state"),
            strict: var_int(cx, "slave_gtid_strict_mode").unwrap_or(0) != 0,
            ignore_duplicates: var_int(cx, "slave_gtid_ignore_duplicates").unwrap_or(0) != 0,
            until: var_text(cx, "slave_until_gtid").filter(|s| !s.trim().is_empty()),
            semi_sync: var_int(cx, "rpl_semi_sync_slave").unwrap_or(0) != 0
                || var_int(cx, "rpl_semi_sync_replica").unwrap_or(0) != 0,
            server_id: cx.server.config().server_id,
            own_slave_pos: Default::default(),
        }
    }
}

impl Drop for Session {
    /// The connection ends: it is no longer a registered replica (SHOW SLAVE HOSTS), and a
    /// reload of the `mysql` account tables it ran applies (`execute::admin::reload`).
    fn drop(&mut self) {
        crate::execute::admin::reload::end_session(self);
        let id = self.connection_id;
        self.server.source().unregister(id);
    }
}
