//! Events a dump makes up rather than reads from the log (REPLICATION_FACTS.md §1.5, §1.6,
//! §1.8): the fake Rotate at the start of every file, the fake Gtid_list after skipped groups,
//! heartbeats, and the Format_description as a dump sends it.
//!
//! Owns [`Checksum`] (what the reader asked for with `@master_binlog_checksum`) and the
//! builders. Invariant: an artificial event carries a CRC32 exactly when the reader's
//! checksum is CRC32, and its `event_size` always matches its bytes (asserted).

use onelog_binlog::event::format_description::{clear_created, CREATED_OFFSET};
use onelog_binlog::event::{crc32, EventHeader, HEADER_LEN};
use onelog_binlog::Gtid;

/// `LOG_EVENT_ARTIFICIAL_F`.
pub const ARTIFICIAL_F: u16 = 0x20;
/// Gtid_list flag bit: the `START SLAVE UNTIL` position was reached.
pub const FLAG_UNTIL_REACHED: u32 = 1;

const ROTATE: u8 = 4;
const HEARTBEAT: u8 = 27;
const GTID_LIST: u8 = 163;

/// The checksum a reader announced (`@master_binlog_checksum`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Checksum {
    /// Never set: the reader does not know checksums.
    Unaware,
    None,
    Crc32,
}

impl Checksum {
    /// From the value of `@master_binlog_checksum` (None: unset).
    pub fn from_var(v: Option<&str>) -> Checksum {
        match v {
            None => Checksum::Unaware,
            Some(s) if s.eq_ignore_ascii_case("CRC32") => Checksum::Crc32,
            Some(_) => Checksum::None,
        }
    }
}

fn build(
    event_type: u8,
    server_id: u32,
    log_pos: u32,
    flags: u16,
    body: &[u8],
    c: Checksum,
) -> Vec<u8> {
    let crc = if c == Checksum::Crc32 { 4 } else { 0 };
    let size = HEADER_LEN + body.len() + crc;
    let mut out = Vec::with_capacity(size);
    EventHeader {
        timestamp: 0,
        event_type,
        server_id,
        event_size: size as u32,
        log_pos,
        flags,
    }
    .encode(&mut out);
    out.extend_from_slice(body);
    if crc != 0 {
        let sum = crc32(&out);
        out.extend_from_slice(&sum.to_le_bytes());
    }
    debug_assert_eq!(out.len(), size, "event_size matches the bytes");
    out
}

/// The fake Rotate sent when a dump enters `file` at `position`.
pub fn fake_rotate(server_id: u32, file: &str, position: u64, c: Checksum) -> Vec<u8> {
    let mut body = Vec::with_capacity(8 + file.len());
    body.extend_from_slice(&position.to_le_bytes());
    body.extend_from_slice(file.as_bytes());
    build(ROTATE, server_id, 0, ARTIFICIAL_F, &body, c)
}

/// A heartbeat: `log_pos` the end of the last event sent in `file`.
pub fn heartbeat(server_id: u32, file: &str, log_pos: u64, c: Checksum) -> Vec<u8> {
    build(HEARTBEAT, server_id, log_pos as u32, 0, file.as_bytes(), c)
}

/// The fake Gtid_list sent after the skipped groups of a GTID start (or, with
/// [`FLAG_UNTIL_REACHED`], when `START SLAVE UNTIL` is reached): `log_pos` the end of the last
/// group passed over.
pub fn fake_gtid_list(
    server_id: u32,
    gtids: &[Gtid],
    log_pos: u64,
    flags: u32,
    c: Checksum,
) -> Vec<u8> {
    let mut body = Vec::with_capacity(4 + 16 * gtids.len());
    body.extend_from_slice(&((gtids.len() as u32) | (flags << 28)).to_le_bytes());
    for g in gtids {
        body.extend_from_slice(&g.domain_id.to_le_bytes());
        body.extend_from_slice(&g.server_id.to_le_bytes());
        body.extend_from_slice(&g.seq_no.to_le_bytes());
    }
    build(GTID_LIST, server_id, log_pos as u32, ARTIFICIAL_F, &body, c)
}

/// The Format_description as a dump sends it when it starts inside a file (MariaDB: `log_pos`
/// 0 so the reader does not move its position, `created` 0), CRC recomputed.
pub fn fde_mid_file(fde: &[u8]) -> Vec<u8> {
    let mut ev = fde.to_vec();
    if ev.len() >= CREATED_OFFSET + 4 + 4 {
        ev[13..17].copy_from_slice(&0u32.to_le_bytes());
        clear_created(&mut ev);
        onelog_binlog::event::reseal(&mut ev);
    }
    ev
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotate_sizes_as_captured() {
        // A replica with CRC32 gets a 48-byte Rotate for 'master-bin.000001', a reader with
        // NONE a 44-byte one.
        let r = fake_rotate(1, "master-bin.000001", 4, Checksum::Crc32);
        assert_eq!(r.len(), 48);
        assert_eq!(u32::from_le_bytes(r[9..13].try_into().unwrap()), 48);
        assert_eq!(u16::from_le_bytes([r[17], r[18]]), ARTIFICIAL_F);
        let crc = crc32(&r[..44]);
        assert_eq!(&r[44..], &crc.to_le_bytes());
        assert_eq!(
            fake_rotate(1, "master-bin.000001", 4, Checksum::None).len(),
            44
        );
    }

    #[test]
    fn heartbeat_and_gtid_list_as_captured() {
        let h = heartbeat(1, "master-bin.000001", 2277, Checksum::Crc32);
        assert_eq!(h.len(), 40);
        assert_eq!(h[4], HEARTBEAT);
        assert_eq!(u32::from_le_bytes(h[13..17].try_into().unwrap()), 2277);
        let g = fake_gtid_list(
            1,
            &[Gtid {
                domain_id: 0,
                server_id: 1,
                seq_no: 9,
            }],
            2064,
            0,
            Checksum::Crc32,
        );
        assert_eq!(g.len(), 43);
        assert_eq!(&g[19..23], &[1, 0, 0, 0]);
        assert_eq!(u16::from_le_bytes([g[17], g[18]]), ARTIFICIAL_F);
    }
}
