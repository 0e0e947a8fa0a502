//! The MySQL/MariaDB protocol vocabulary every onelog crate shares.
//!
//! - [`errors`]: the server error codes onelog answers with, named as in MariaDB's
//!   `include/mysqld_error.h`, each with the SQLSTATE MariaDB sends with it
//!   ([`ErrorCode`]);
//! - [`command`]: the command byte that starts every client packet after the handshake
//!   ([`Command`]: `Command::Query`, not `0x03`), including those onelog does not serve yet
//!   (the replication commands);
//! - the wire codec: [`wire`] (field encodings inside a payload: fixed and length-encoded
//!   integers, length-encoded and NUL-terminated strings, the bounds-checked [`wire::Reader`]),
//!   [`packet`] (framing: 4-byte headers, sequence ids, 16 MiB split/merge,
//!   `max_allowed_packet`) and [`response`] (OK, EOF, ERR and handshake payloads).
//!
//! Why a crate: the engine, the SQL layer, the server and (next) the replication crate all
//! name these, and the lowest layer they share is below all of them; a crate with no
//! dependencies is the one place every crate can import. The codec is here so the replica
//! side (a client connection to a primary) and the server write the protocol once; column
//! definitions and rows, which need onelog's value types, stay in `onelog-server`.
//!
//! Invariants: every [`ErrorCode`] is MariaDB's code with the SQLSTATE MariaDB pairs it with
//! (checked against a real MariaDB 10.11 where onelog's tests compare); a [`Command`]'s byte
//! is MariaDB's `enum_server_command` value, and [`Command::from_byte`] is its inverse.

pub mod command;
pub mod errors;
pub mod packet;
pub mod response;
pub mod wire;

pub use command::Command;
pub use errors::ErrorCode;
