//! MariaDB 10.11 binlog events for onelog.
//!
//! This crate owns the byte format of everything onelog writes as a binlog: the common event
//! header, CRC32 event checksums, the events of a transaction's event group (MariaDB GTID,
//! Table_map, Write/Update/Delete_rows v1 with full row images, Xid, Query, Annotate_rows) and
//! the events around them (Format_description, Gtid_list, Binlog_checkpoint, Rotate), plus the
//! GTID types (`Gtid`, `GtidPos`, `GtidState`).
//!
//! Invariants:
//! - every encoder writes exactly the layout MariaDB 10.11 writes (`sql/log_event.h`), with the
//!   CRC32 checksum (ISO-HDLC, as `binlog_checksum=CRC32`) in the last four bytes;
//! - decoders never trust a length: every read is bounds-checked and a short or inconsistent
//!   buffer is a `DecodeError`, never a panic.
//!
//! It depends on nothing of onelog; the log and the engine depend on it.

pub mod error;
pub mod event;
pub mod gtid;
pub mod value;

pub use error::DecodeError;
pub use gtid::{Gtid, GtidPos, GtidState};
pub use value::{ColumnMeta, ColumnType, Value};
