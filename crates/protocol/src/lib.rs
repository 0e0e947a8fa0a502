//! The MySQL/MariaDB protocol vocabulary every onelog crate shares.
//!
//! - [`errors`]: the server error codes onelog answers with, named as in MariaDB's
//!   `include/mysqld_error.h`, each with the SQLSTATE MariaDB sends with it
//!   ([`ErrorCode`]);
//! - [`command`]: the command byte that starts every client packet after the handshake
//!   ([`Command`]: `Command::Query`, not `0x03`), including those onelog does not serve yet
//!   (the replication commands).
//!
//! Why a crate: the engine, the SQL layer, the server and (next) the replication crate all
//! name these, and the lowest layer they share is below all of them; a crate with no
//! dependencies is the one place every crate can import. It is also where the wire codec
//! (packet framing, length-encoded integers, today in `onelog-server`'s `packet.rs` and
//! `wire.rs`) moves when the replica side needs a client connection, so the two directions
//! of the protocol are written once.
//!
//! Invariants: every [`ErrorCode`] is MariaDB's code with the SQLSTATE MariaDB pairs it with
//! (checked against a real MariaDB 10.11 where onelog's tests compare); a [`Command`]'s byte
//! is MariaDB's `enum_server_command` value, and [`Command::from_byte`] is its inverse.

pub mod command;
pub mod errors;

pub use command::Command;
pub use errors::ErrorCode;
