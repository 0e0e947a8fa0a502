//! Rotate event (type 4): the last event of a binlog file, naming the next one; also sent
//! first ("fake rotate", timestamp 0) by a dump thread to name the file it streams.
//!
//! Body: `position u64 LE` (offset of the first event in the next file, 4) then the file
//! name (no terminator, up to the checksum).
//!
//! Invariants: decoding what the encoder wrote gives the same event (tests/roundtrip.rs, and
//! the layout is cross-checked against an independent decoder in tests/cross_check_mysql_common.rs);
//! the decoder reads only through the bounds-checked `wire::Reader`, so a short body is a
//! `DecodeError`, never a panic (fuzzed by fuzz/fuzz_targets/decode_event.rs).

use super::{event_type, new_header, typed_body};
use crate::error::DecodeError;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RotateEvent {
    pub position: u64,
    pub next_file: String,
}

impl RotateEvent {
    pub fn encode(&self, timestamp: u32, server_id: u32, out: &mut Vec<u8>) {
        let mut body = Vec::with_capacity(8 + self.next_file.len());
        body.extend_from_slice(&self.position.to_le_bytes());
        body.extend_from_slice(self.next_file.as_bytes());
        super::write_event(
            out,
            new_header(event_type::ROTATE, timestamp, server_id),
            &body,
        );
    }

    pub fn decode(ev: &[u8]) -> Result<Self, DecodeError> {
        let (_, mut r) = typed_body(ev, event_type::ROTATE, "Rotate event")?;
        let position = r.u64()?;
        let n = r.remaining();
        Ok(RotateEvent {
            position,
            next_file: r.str(n)?,
        })
    }
}
