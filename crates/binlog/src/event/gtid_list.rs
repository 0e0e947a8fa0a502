//! Gtid_list event (type 163): the binlog GTID state at the start of a binlog file (after
//! Format_description), one entry per (domain, server).
//!
//! Body: `count u32 LE` (low 28 bits the number of entries, high 4 bits flags), then per entry
//! `domain_id u32, server_id u32, seq_no u64`, little-endian, in `GtidState::entries()` order.
//!
//! Invariants: decoding what the encoder wrote gives the same event (tests/roundtrip.rs, and
//! the layout is cross-checked against an independent decoder in tests/cross_check_mysql_common.rs);
//! the decoder reads only through the bounds-checked `wire::Reader`, so a short body is a
//! `DecodeError`, never a panic (fuzzed by fuzz/fuzz_targets/decode_event.rs).

use super::{event_type, new_header, typed_body};
use crate::error::{DecodeError, EncodeError};
use crate::gtid::{Gtid, GtidState};

/// Largest entry count the 28-bit count field holds.
pub const MAX_ENTRIES: usize = (1 << 28) - 1;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GtidListEvent {
    /// The 4 flag bits above the count (`FLAG_UNTIL_REACHED` 1, `FLAG_IGN_GTIDS` 2).
    pub flags: u8,
    pub gtids: Vec<Gtid>,
}

impl GtidListEvent {
    pub fn from_state(state: &GtidState) -> Self {
        GtidListEvent {
            flags: 0,
            gtids: state.entries(),
        }
    }

    pub fn to_state(&self) -> GtidState {
        GtidState::from_entries(self.gtids.iter().copied())
    }

    pub fn encode(
        &self,
        timestamp: u32,
        server_id: u32,
        out: &mut Vec<u8>,
    ) -> Result<(), EncodeError> {
        if self.gtids.len() > MAX_ENTRIES || self.flags > 15 {
            return Err(EncodeError::new(
                "Gtid_list event",
                "too many entries or flags beyond 4 bits",
            ));
        }
        let mut body = Vec::with_capacity(4 + 16 * self.gtids.len());
        let count = self.gtids.len() as u32 | (u32::from(self.flags) << 28);
        body.extend_from_slice(&count.to_le_bytes());
        for g in &self.gtids {
            body.extend_from_slice(&g.domain_id.to_le_bytes());
            body.extend_from_slice(&g.server_id.to_le_bytes());
            body.extend_from_slice(&g.seq_no.to_le_bytes());
        }
        super::write_event(
            out,
            new_header(event_type::GTID_LIST, timestamp, server_id),
            &body,
        );
        Ok(())
    }

    pub fn decode(ev: &[u8]) -> Result<Self, DecodeError> {
        let (_, mut r) = typed_body(ev, event_type::GTID_LIST, "Gtid_list event")?;
        let raw = r.u32()?;
        let count = (raw & 0x0fff_ffff) as usize;
        if count.saturating_mul(16) > r.remaining() {
            return Err(r.err(format!("{count} entries but {} bytes", r.remaining())));
        }
        let mut gtids = Vec::with_capacity(count);
        for _ in 0..count {
            let domain_id = r.u32()?;
            let server_id = r.u32()?;
            let seq_no = r.u64()?;
            gtids.push(Gtid {
                domain_id,
                server_id,
                seq_no,
            });
        }
        Ok(GtidListEvent {
            flags: (raw >> 28) as u8,
            gtids,
        })
    }
}
