//! onelog's MySQL/MariaDB client/server protocol: listener, handshake and authentication,
//! command dispatch, text and binary result sets, prepared statements.
//!
//! Layering (one mechanism per module):
//! - [`wire`], [`packet`]: field encodings and framing, re-exported from `onelog_protocol`
//!   (the wire codec lives there, shared with the coming replication crate).
//! - [`command`]: decoders for client packets (handshake response, COM_STMT_EXECUTE, ...).
//! - [`response`]: column definition packets; OK/EOF/ERR/handshake re-exported from
//!   `onelog_protocol::response`.
//! - [`value`]: values in the text and binary protocols, statement parameter decoding.
//! - [`auth`]: mysql_native_password scramble and verification.
//! - `connection`: one connection's handshake and command loop.
//! - [`transport`]: the sockets a connection runs on (timeouts, peer uid, liveness probe).
//! - `shared`: what the accept loops, the connections and the handle share (the registry).
//! - [`listener`]: TCP/unix accept loops, connection limit, [`ServerHandle`].
//! - [`backend`]: the traits the protocol calls the SQL layer through; [`sql_backend`] adapts
//!   `onelog_sql` to them.
//!
//! The protocol layer never panics on client input: every decoder returns a typed error, and a
//! connection that sends a bad packet gets an ERR packet and is closed without affecting others.
//!
//! Invariants: each module's docs name its own; the crate reaches SQL only through `backend.rs`.

pub mod auth;
pub mod backend;
pub mod command;
mod connection;
mod dump_link;
pub mod listener;
pub mod response;
mod shared;
pub mod sql_backend;
pub mod transport;
pub mod value;

pub use onelog_protocol::{packet, wire};

pub use backend::{Backend, SessionApi};
pub use connection::{
    greeting_version, server_capabilities, ConnectionConfig, MARIADB_CAPABILITIES,
};
pub use listener::{ListenerConfig, ServerHandle};
