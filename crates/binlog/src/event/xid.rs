//! Xid event (type 16): the commit of a transactional event group. Body: `xid u64 LE`.
//!
//! Invariants: decoding what the encoder wrote gives the same event (tests/roundtrip.rs, and
//! the layout is cross-checked against an independent decoder in tests/cross_check_mysql_common.rs);
//! the decoder reads only through the bounds-checked `wire::Reader`, so a short body is a
//! `DecodeError`, never a panic (fuzzed by fuzz/fuzz_targets/decode_event.rs).

use super::{event_type, new_header, typed_body};
use crate::error::DecodeError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct XidEvent {
    pub xid: u64,
}

impl XidEvent {
    pub fn encode(&self, timestamp: u32, server_id: u32, out: &mut Vec<u8>) {
        super::write_event(
            out,
            new_header(event_type::XID, timestamp, server_id),
            &self.xid.to_le_bytes(),
        );
    }

    pub fn decode(ev: &[u8]) -> Result<Self, DecodeError> {
        let (_, mut r) = typed_body(ev, event_type::XID, "Xid event")?;
        let xid = r.u64()?;
        if !r.is_empty() {
            return Err(r.err("bytes after the xid"));
        }
        Ok(XidEvent { xid })
    }
}
