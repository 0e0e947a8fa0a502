//! MariaDB global transaction ids.
//!
//! - [`Gtid`] is `domain-server-seq`, as printed by MariaDB (`0-1-42`).
//! - [`GtidPos`] is a replication position: one GTID per domain (`@@gtid_binlog_pos`,
//!   `@@gtid_slave_pos`, `@slave_connect_state`).
//! - [`GtidState`] is the binlog state (`@@gtid_binlog_state`, the Gtid_list event, onelog's
//!   segment headers and GTID-state records): per domain, the last sequence number logged by
//!   each server id, and which GTID of the domain was logged last.
//!
//! Invariant of `GtidState`: within a domain, the GTID recorded last is the one `pos()` reports,
//! and `next_seq(domain)` is one more than the largest sequence number seen in that domain, so
//! sequence numbers handed out through it never repeat and never go backwards.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use crate::error::DecodeError;

/// One MariaDB GTID.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Gtid {
    pub domain_id: u32,
    pub server_id: u32,
    pub seq_no: u64,
}

impl Gtid {
    pub const fn new(domain_id: u32, server_id: u32, seq_no: u64) -> Self {
        Gtid {
            domain_id,
            server_id,
            seq_no,
        }
    }
}

impl fmt::Display for Gtid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}-{}", self.domain_id, self.server_id, self.seq_no)
    }
}

/// Error parsing a GTID or GTID list from text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GtidParseError(pub String);

impl fmt::Display for GtidParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid GTID '{}'", self.0)
    }
}

impl std::error::Error for GtidParseError {}

impl FromStr for Gtid {
    type Err = GtidParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || GtidParseError(s.to_string());
        let mut parts = s.trim().split('-');
        let domain_id = parts.next().ok_or_else(err)?.parse().map_err(|_| err())?;
        let server_id = parts.next().ok_or_else(err)?.parse().map_err(|_| err())?;
        let seq_no = parts.next().ok_or_else(err)?.parse().map_err(|_| err())?;
        if parts.next().is_some() {
            return Err(err());
        }
        Ok(Gtid {
            domain_id,
            server_id,
            seq_no,
        })
    }
}

/// A replication position: at most one GTID per domain.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GtidPos {
    by_domain: BTreeMap<u32, Gtid>,
}

impl GtidPos {
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the position of `gtid.domain_id` to `gtid`.
    pub fn set(&mut self, gtid: Gtid) {
        self.by_domain.insert(gtid.domain_id, gtid);
    }

    pub fn get(&self, domain_id: u32) -> Option<Gtid> {
        self.by_domain.get(&domain_id).copied()
    }

    /// Drops the domain `domain_id` from the position; its GTID, if it had one.
    pub fn remove(&mut self, domain_id: u32) -> Option<Gtid> {
        self.by_domain.remove(&domain_id)
    }

    pub fn is_empty(&self) -> bool {
        self.by_domain.is_empty()
    }

    /// GTIDs in domain order.
    pub fn iter(&self) -> impl Iterator<Item = Gtid> + '_ {
        self.by_domain.values().copied()
    }

    /// True when this position has reached `gtid`: its domain's GTID has the same or a larger
    /// sequence number.
    pub fn contains(&self, gtid: Gtid) -> bool {
        self.by_domain
            .get(&gtid.domain_id)
            .is_some_and(|g| g.seq_no >= gtid.seq_no)
    }
}

impl fmt::Display for GtidPos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, g) in self.by_domain.values().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{g}")?;
        }
        Ok(())
    }
}

impl FromStr for GtidPos {
    type Err = GtidParseError;

    /// Parses `"0-1-5,1-2-3"`; the empty string is the empty position. Two GTIDs of one domain
    /// are an error, as in MariaDB.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut pos = GtidPos::new();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let g: Gtid = part.parse()?;
            if pos.by_domain.insert(g.domain_id, g).is_some() {
                return Err(GtidParseError(s.to_string()));
            }
        }
        Ok(pos)
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct DomainState {
    /// Last sequence number logged by each server id in this domain.
    by_server: BTreeMap<u32, u64>,
    /// The GTID of this domain that was recorded last.
    last: Option<Gtid>,
    /// Largest sequence number ever recorded in this domain.
    max_seq: u64,
}

/// The binlog GTID state: what `@@gtid_binlog_state` and the Gtid_list event carry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GtidState {
    domains: BTreeMap<u32, DomainState>,
}

impl GtidState {
    pub fn new() -> Self {
        Self::default()
    }

    /// Records that `gtid` was logged.
    pub fn record(&mut self, gtid: Gtid) {
        let d = self.domains.entry(gtid.domain_id).or_default();
        d.by_server.insert(gtid.server_id, gtid.seq_no);
        d.last = Some(gtid);
        d.max_seq = d.max_seq.max(gtid.seq_no);
        debug_assert!(self.next_seq(gtid.domain_id) > gtid.seq_no || gtid.seq_no == u64::MAX);
        debug_assert_eq!(self.last(gtid.domain_id), Some(gtid));
    }

    /// The sequence number the next GTID of `domain_id` gets when onelog assigns it. A domain
    /// whose largest sequence number is already `u64::MAX` (only a fixed GTID can put it
    /// there: `SET gtid_seq_no`, a primary's event, a file) answers `u64::MAX`, never wraps.
    pub fn next_seq(&self, domain_id: u32) -> u64 {
        self.domains
            .get(&domain_id)
            .map_or(1, |d| d.max_seq.saturating_add(1))
    }

    /// The last GTID of `domain_id`, if any.
    pub fn last(&self, domain_id: u32) -> Option<Gtid> {
        self.domains.get(&domain_id).and_then(|d| d.last)
    }

    /// `@@gtid_binlog_pos`: the last GTID of each domain.
    pub fn pos(&self) -> GtidPos {
        let mut pos = GtidPos::new();
        for g in self.domains.values().filter_map(|d| d.last) {
            pos.set(g);
        }
        pos
    }

    /// Every (domain, server) entry, each domain's last-recorded GTID last within its domain:
    /// the order of a Gtid_list event and of `@@gtid_binlog_state`.
    pub fn entries(&self) -> Vec<Gtid> {
        let mut out = Vec::new();
        for (&domain_id, d) in &self.domains {
            let last = d.last;
            for (&server_id, &seq_no) in &d.by_server {
                let g = Gtid {
                    domain_id,
                    server_id,
                    seq_no,
                };
                if Some(g) != last {
                    out.push(g);
                }
            }
            out.extend(last);
        }
        out
    }

    /// Rebuilds a state from entries in the order `entries()` gives them.
    pub fn from_entries(entries: impl IntoIterator<Item = Gtid>) -> Self {
        let mut s = GtidState::new();
        for g in entries {
            s.record(g);
        }
        s
    }

    pub fn is_empty(&self) -> bool {
        self.domains.is_empty()
    }

    /// Binary form used inside onelog's own files: `u32 count`, then per entry
    /// `u32 domain, u32 server, u64 seq`, little-endian, in `entries()` order.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let entries = self.entries();
        out.extend_from_slice(&(entries.len() as u32).to_le_bytes());
        for g in entries {
            out.extend_from_slice(&g.domain_id.to_le_bytes());
            out.extend_from_slice(&g.server_id.to_le_bytes());
            out.extend_from_slice(&g.seq_no.to_le_bytes());
        }
    }

    /// Decodes `encode`'s form; returns the state and the number of bytes read.
    pub fn decode(buf: &[u8]) -> Result<(Self, usize), DecodeError> {
        let what = "GTID state";
        let count = buf
            .get(..4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
            .ok_or_else(|| DecodeError::new(what, 0, "truncated count"))?;
        let need = count
            .checked_mul(16)
            .and_then(|n| n.checked_add(4))
            .ok_or_else(|| DecodeError::new(what, 0, "count overflows"))?;
        if buf.len() < need {
            return Err(DecodeError::new(
                what,
                buf.len(),
                format!("{count} entries need {need} bytes"),
            ));
        }
        let mut s = GtidState::new();
        for chunk in buf[4..need].chunks_exact(16) {
            let domain_id = u32::from_le_bytes(chunk[0..4].try_into().unwrap_or_default());
            let server_id = u32::from_le_bytes(chunk[4..8].try_into().unwrap_or_default());
            let seq_no = u64::from_le_bytes(chunk[8..16].try_into().unwrap_or_default());
            s.record(Gtid {
                domain_id,
                server_id,
                seq_no,
            });
        }
        Ok((s, need))
    }
}

impl fmt::Display for GtidState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, g) in self.entries().iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{g}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by the verify_backup fuzz target: a GTID state record at u64::MAX overflowed.
    #[test]
    fn next_seq_never_wraps() {
        let mut st = GtidState::new();
        st.record(Gtid::new(0, 1, u64::MAX));
        assert_eq!(st.next_seq(0), u64::MAX);
        assert_eq!(st.last(0), Some(Gtid::new(0, 1, u64::MAX)));
    }

    #[test]
    fn gtid_text_round_trips() {
        let g: Gtid = "0-1-42".parse().unwrap();
        assert_eq!(g, Gtid::new(0, 1, 42));
        assert_eq!(g.to_string(), "0-1-42");
        assert!("0-1".parse::<Gtid>().is_err());
        assert!("0-1-2-3".parse::<Gtid>().is_err());
        assert!("a-1-2".parse::<Gtid>().is_err());
    }

    #[test]
    fn pos_rejects_two_gtids_of_one_domain() {
        assert!("0-1-5,0-2-6".parse::<GtidPos>().is_err());
        let p: GtidPos = "1-2-3, 0-1-5".parse().unwrap();
        assert_eq!(p.to_string(), "0-1-5,1-2-3");
        assert!("".parse::<GtidPos>().unwrap().is_empty());
    }

    #[test]
    fn state_tracks_last_per_domain_and_next_seq() {
        let mut s = GtidState::new();
        s.record(Gtid::new(0, 1, 1));
        s.record(Gtid::new(0, 2, 7));
        s.record(Gtid::new(0, 1, 8));
        s.record(Gtid::new(3, 1, 2));
        assert_eq!(s.pos().to_string(), "0-1-8,3-1-2");
        assert_eq!(s.to_string(), "0-2-7,0-1-8,3-1-2");
        assert_eq!(s.next_seq(0), 9);
        assert_eq!(s.next_seq(3), 3);
        assert_eq!(s.next_seq(9), 1);
        let mut buf = Vec::new();
        s.encode(&mut buf);
        let (back, n) = GtidState::decode(&buf).unwrap();
        assert_eq!(n, buf.len());
        assert_eq!(back, s);
        assert_eq!(GtidState::from_entries(s.entries()), s);
    }

    #[test]
    fn state_decode_refuses_short_buffers() {
        let mut s = GtidState::new();
        s.record(Gtid::new(0, 1, 1));
        let mut buf = Vec::new();
        s.encode(&mut buf);
        for cut in 0..buf.len() {
            assert!(GtidState::decode(&buf[..cut]).is_err(), "cut at {cut}");
        }
        assert!(GtidState::decode(&[0xff, 0xff, 0xff, 0xff]).is_err());
    }
}
