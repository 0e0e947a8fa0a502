//! MariaDB GTID event (type 162): the first event of every event group.
//!
//! Body (after the common header, whose server_id is the GTID's server id):
//!
//! ```text
//! 0  seq_no     u64 LE
//! 8  domain_id  u32 LE
//! 12 flags2     u8     FL_STANDALONE 1, FL_GROUP_COMMIT_ID 2, FL_TRANSACTIONAL 4,
//!                      FL_ALLOW_PARALLEL 8, FL_WAITED 16, FL_DDL 32
//! 13 commit_id  u64 LE when FL_GROUP_COMMIT_ID, else 6 zero bytes
//! ```
//!
//! onelog always writes the commit id (the id of the commit group; transactions of one group
//! share it, which tells a parallel replica they can be applied together), so a GTID event it
//! writes has a fixed size, [`GTID_EVENT_LEN`], and the log's group-commit leader can fill in
//! the sequence number and commit id with [`patch`] once the event order is known.
//!
//! Invariants: decoding what the encoder wrote gives the same event (tests/roundtrip.rs, and
//! the layout is cross-checked against an independent decoder in tests/cross_check_mysql_common.rs);
//! the decoder reads only through the bounds-checked `wire::Reader`, so a short body is a
//! `DecodeError`, never a panic (fuzzed by fuzz/fuzz_targets/decode_event.rs).

use super::{event_type, reseal, EventHeader, HEADER_LEN};
use crate::error::DecodeError;
use crate::gtid::Gtid;

pub const FL_STANDALONE: u8 = 1;
pub const FL_GROUP_COMMIT_ID: u8 = 2;
pub const FL_TRANSACTIONAL: u8 = 4;
pub const FL_ALLOW_PARALLEL: u8 = 8;
pub const FL_WAITED: u8 = 16;
pub const FL_DDL: u8 = 32;

/// Size of a GTID event with a commit id, checksum included.
pub const GTID_EVENT_LEN: usize = HEADER_LEN + 21 + super::CHECKSUM_LEN;

/// A decoded GTID event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GtidEvent {
    pub gtid: Gtid,
    pub flags2: u8,
    pub commit_id: Option<u64>,
    pub timestamp: u32,
}

impl GtidEvent {
    /// Appends the event. With `commit_id` it is [`GTID_EVENT_LEN`] bytes long.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let mut body = Vec::with_capacity(21);
        body.extend_from_slice(&self.gtid.seq_no.to_le_bytes());
        body.extend_from_slice(&self.gtid.domain_id.to_le_bytes());
        match self.commit_id {
            Some(id) => {
                body.push(self.flags2 | FL_GROUP_COMMIT_ID);
                body.extend_from_slice(&id.to_le_bytes());
            }
            None => {
                body.push(self.flags2 & !FL_GROUP_COMMIT_ID);
                body.extend_from_slice(&[0; 6]);
            }
        }
        let header = EventHeader {
            timestamp: self.timestamp,
            event_type: event_type::GTID,
            server_id: self.gtid.server_id,
            event_size: 0,
            log_pos: 0,
            flags: 0,
        };
        super::write_event(out, header, &body);
    }

    /// Decodes a whole GTID event (header, body, checksum), checking its checksum.
    pub fn decode(ev: &[u8]) -> Result<Self, DecodeError> {
        let (h, ev) = super::check_event(ev)?;
        if h.event_type != event_type::GTID {
            return Err(DecodeError::new(
                "GTID event",
                4,
                format!("type {} is not 162", h.event_type),
            ));
        }
        let body = &ev[HEADER_LEN..ev.len() - super::CHECKSUM_LEN];
        if body.len() < 13 {
            return Err(DecodeError::new(
                "GTID event",
                HEADER_LEN + body.len(),
                "truncated body",
            ));
        }
        let seq_no = u64::from_le_bytes(body[0..8].try_into().unwrap_or_default());
        let domain_id = u32::from_le_bytes(body[8..12].try_into().unwrap_or_default());
        let flags2 = body[12];
        let commit_id = if flags2 & FL_GROUP_COMMIT_ID != 0 {
            let b = body.get(13..21).ok_or_else(|| {
                DecodeError::new("GTID event", HEADER_LEN + 13, "truncated commit id")
            })?;
            Some(u64::from_le_bytes(b.try_into().unwrap_or_default()))
        } else {
            None
        };
        Ok(GtidEvent {
            gtid: Gtid {
                domain_id,
                server_id: h.server_id,
                seq_no,
            },
            flags2,
            commit_id,
            timestamp: h.timestamp,
        })
    }
}

/// Fills in the GTID and commit id of the GTID event at the start of `group` (written by
/// [`GtidEvent::encode`] with a commit id) and recomputes its checksum.
pub fn patch(group: &mut [u8], gtid: Gtid, commit_id: u64) -> Result<(), DecodeError> {
    let ev = group.get_mut(..GTID_EVENT_LEN).ok_or_else(|| {
        DecodeError::new("GTID event", 0, "event group shorter than a GTID event")
    })?;
    let size = u32::from_le_bytes([ev[9], ev[10], ev[11], ev[12]]) as usize;
    if ev[4] != event_type::GTID
        || size != GTID_EVENT_LEN
        || ev[HEADER_LEN + 12] & FL_GROUP_COMMIT_ID == 0
    {
        return Err(DecodeError::new(
            "GTID event",
            0,
            "not a GTID event with a commit id",
        ));
    }
    ev[5..9].copy_from_slice(&gtid.server_id.to_le_bytes());
    ev[HEADER_LEN..HEADER_LEN + 8].copy_from_slice(&gtid.seq_no.to_le_bytes());
    ev[HEADER_LEN + 8..HEADER_LEN + 12].copy_from_slice(&gtid.domain_id.to_le_bytes());
    ev[HEADER_LEN + 13..HEADER_LEN + 21].copy_from_slice(&commit_id.to_le_bytes());
    reseal(ev);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patched_gtid_event_decodes_with_new_values() {
        let mut buf = Vec::new();
        GtidEvent {
            gtid: Gtid::new(0, 0, 0),
            flags2: FL_TRANSACTIONAL,
            commit_id: Some(0),
            timestamp: 7,
        }
        .encode(&mut buf);
        assert_eq!(buf.len(), GTID_EVENT_LEN);
        patch(&mut buf, Gtid::new(3, 9, 77), 5).unwrap();
        let ev = GtidEvent::decode(&buf).unwrap();
        assert_eq!(ev.gtid, Gtid::new(3, 9, 77));
        assert_eq!(ev.commit_id, Some(5));
        assert_eq!(ev.flags2, FL_TRANSACTIONAL | FL_GROUP_COMMIT_ID);
        assert_eq!(ev.timestamp, 7);
    }

    #[test]
    fn gtid_event_without_commit_id_round_trips() {
        let e = GtidEvent {
            gtid: Gtid::new(1, 2, 3),
            flags2: FL_STANDALONE | FL_DDL,
            commit_id: None,
            timestamp: 1,
        };
        let mut buf = Vec::new();
        e.encode(&mut buf);
        assert_eq!(GtidEvent::decode(&buf).unwrap(), e);
        let mut bad = buf.clone();
        bad[HEADER_LEN] ^= 1;
        assert!(GtidEvent::decode(&bad).is_err());
        assert!(patch(&mut buf, Gtid::new(0, 1, 1), 1).is_err());
    }
}
