//! Binlog_checkpoint event (type 161): names the oldest binlog file a crash recovery would
//! need. Body: `name length u32 LE`, then the file name.
//!
//! Invariants: decoding what the encoder wrote gives the same event (tests/roundtrip.rs, and
//! the layout is cross-checked against an independent decoder in tests/cross_check_mysql_common.rs);
//! the decoder reads only through the bounds-checked `wire::Reader`, so a short body is a
//! `DecodeError`, never a panic (fuzzed by fuzz/fuzz_targets/decode_event.rs).

use super::{event_type, new_header, typed_body};
use crate::error::DecodeError;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BinlogCheckpointEvent {
    pub file: String,
}

impl BinlogCheckpointEvent {
    pub fn encode(&self, timestamp: u32, server_id: u32, out: &mut Vec<u8>) {
        let mut body = Vec::with_capacity(4 + self.file.len());
        body.extend_from_slice(&(self.file.len() as u32).to_le_bytes());
        body.extend_from_slice(self.file.as_bytes());
        super::write_event(
            out,
            new_header(event_type::BINLOG_CHECKPOINT, timestamp, server_id),
            &body,
        );
    }

    pub fn decode(ev: &[u8]) -> Result<Self, DecodeError> {
        let (_, mut r) = typed_body(ev, event_type::BINLOG_CHECKPOINT, "Binlog_checkpoint event")?;
        let n = r.u32()? as usize;
        let file = r.str(n)?;
        if !r.is_empty() {
            return Err(r.err("bytes after the file name"));
        }
        Ok(BinlogCheckpointEvent { file })
    }
}
