//! Annotate_rows event (type 160): the SQL text of the statement whose rows events follow
//! (`binlog_annotate_row_events`). Body: the text, up to the checksum. Informational only, so
//! text that is not UTF-8 is decoded lossily rather than rejected.
//!
//! Invariants: decoding what the encoder wrote gives the same event (tests/roundtrip.rs, and
//! the layout is cross-checked against an independent decoder in tests/cross_check_mysql_common.rs);
//! the decoder reads only through the bounds-checked `wire::Reader`, so a short body is a
//! `DecodeError`, never a panic (fuzzed by fuzz/fuzz_targets/decode_event.rs).

use super::{event_type, new_header, typed_body};
use crate::error::DecodeError;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnnotateRowsEvent {
    pub query: String,
}

impl AnnotateRowsEvent {
    pub fn encode(&self, timestamp: u32, server_id: u32, out: &mut Vec<u8>) {
        super::write_event(
            out,
            new_header(event_type::ANNOTATE_ROWS, timestamp, server_id),
            self.query.as_bytes(),
        );
    }

    pub fn decode(ev: &[u8]) -> Result<Self, DecodeError> {
        let (_, mut r) = typed_body(ev, event_type::ANNOTATE_ROWS, "Annotate_rows event")?;
        Ok(AnnotateRowsEvent {
            query: String::from_utf8_lossy(r.rest()).into_owned(),
        })
    }
}
