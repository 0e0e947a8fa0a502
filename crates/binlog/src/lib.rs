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
//! Where they are checked: `event::write_event` and `event::reseal` assert each event's size
//! and checksum span, the row codec asserts widths and signedness, the round-trip property
//! tests and the cross-check against `mysql_common` (tests/) compare the layouts, and the
//! `decode_event` fuzz target (fuzz/) feeds the decoders arbitrary bytes.
//!
//! Modules: `event` (header, CRC, one module per event kind, `decode_event`), `rows` (row
//! images: the packed form of each column type), `decimal` (MariaDB's binary DECIMAL),
//! `group` (decoding whole event groups for recovery and replicas), `value` (column types and
//! values), `gtid`, `error`.
//!
//! It depends on nothing of onelog; the log and the engine depend on it.

pub mod decimal;
pub mod error;
pub mod event;
pub mod group;
pub mod gtid;
pub mod rows;
pub mod value;
mod wire;

pub use error::{DecodeError, EncodeError};
pub use event::{decode_event, decode_event_with_header, Event};
pub use group::{decode_group, DecodedGroup, EventGroupDecoder, GroupItem, TableMapCache};
pub use gtid::{Gtid, GtidPos, GtidState};
pub use value::{ColumnMeta, ColumnType, SharedBytes, Value};
