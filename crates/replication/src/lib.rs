//! Replication (DESIGN.md §7): what lets MariaDB replicas, `mariadb-binlog` and CDC clients
//! follow onelog.
//!
//! - [`source`]: the primary side: COM_REGISTER_SLAVE (SHOW SLAVE HOSTS), COM_BINLOG_DUMP in
//!   GTID and file/offset mode over the log's classic view (`onelog_log::view`), heartbeats,
//!   MariaDB's 1236 errors, semi-sync acknowledgement framing.
//!
//! Below `sql` (which checks privileges, reads the session's `@` variables and calls in) and
//! beside `server` (which owns the socket and lends it through [`source::DumpIo`]); it
//! depends only on the protocol vocabulary, the binlog codecs and the log.
//!
//! Invariants: a dump sends only durable log records (the view's readers never yield
//! others), never takes a lock the commit path holds for longer than a read of the segment
//! list, and holds at most one record and one packet in memory whatever the reader's speed.

pub mod replica;
pub mod source;
