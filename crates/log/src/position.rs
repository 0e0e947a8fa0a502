//! Offsets inside the on-disk segment files (`binlog-NNNNNN.olog`): where a record (an LSN)
//! sits in its segment, and back. This is the storage layout only: the binlog files and
//! offsets users, replicas and tools see are the classic view's (`binlog.NNNNNN`,
//! contiguous offsets; [`crate::view`], DESIGN.md §7 "one position map"), which SHOW MASTER
//! STATUS / SHOW BINARY LOGS / SHOW BINLOG EVENTS, the dump, `BINLOG_GTID_POS()`, the
//! mirror and `onelog binlog --to-binlog` all use. Nothing here is shown as a binlog
//! position.
//!
//! Owns [`SegmentPositions`] and the formulas under it ([`offset_in_segment`],
//! [`lsn_in_segment`], [`events_offset`], [`file_name`]):
//! - the record at LSN `l` sits at byte `header_len + (l - start_lsn)` of its segment
//!   ([`offset_in_segment`]; [`lsn_in_segment`] is the inverse);
//! - the first binlog event of a record sits after the frame header and the 4-byte events
//!   length ([`events_offset`]); the next events follow back to back;
//! - the Format_description event of the header block is shown at `40 + state_len`
//!   ([`SegmentPositions::fde_offset`]; 40 is the version-1 fixed header length);
//! - [`SegmentPositions::size`] is the segment offset of an end LSN.
//!
//! Called by the log's own cursors, appender and recovery (file offsets of LSNs) and by the
//! segment inspector ([`crate::inspect`], used by `onelog binlog` to print segment files
//! with their on-disk offsets).
//!
//! Invariants: an LSN mapped into a segment is at or after its start LSN, and an offset mapped
//! back is at or after its header length (records start there): asserted; the two mappings are
//! inverse of each other (tested).

use std::path::Path;

use crate::frame::FRAME_HEADER_LEN;
use crate::segment::SegmentHeader;
use crate::Lsn;

/// Where the state of the header block is taken to start when placing the Format_description
/// event (the version-1 fixed header length; see the module docs).
const FDE_BASE: u64 = 40;

/// File offset of the record at `lsn` in a segment whose records start at `header_len` with
/// the record at `start_lsn`.
#[inline]
pub fn offset_in_segment(header_len: u64, start_lsn: Lsn, lsn: Lsn) -> u64 {
    debug_assert!(
        lsn >= start_lsn,
        "LSN {lsn} before the segment start {start_lsn}"
    );
    header_len + (lsn - start_lsn)
}

/// LSN of the record at file offset `offset` (the inverse of [`offset_in_segment`]).
#[inline]
pub fn lsn_in_segment(header_len: u64, start_lsn: Lsn, offset: u64) -> Lsn {
    debug_assert!(
        offset >= header_len,
        "offset {offset} inside the header block ({header_len} bytes)"
    );
    start_lsn + (offset - header_len)
}

/// File offset of the first binlog event of the record at file offset `record_offset` (after
/// the frame header and the events length).
#[inline]
pub fn events_offset(record_offset: u64) -> u64 {
    record_offset + FRAME_HEADER_LEN as u64 + 4
}

/// The binlog file name of a segment path (its last component; empty when it has none).
pub fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The position view of one segment: its binlog file name and the offsets of its records and
/// header events.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentPositions {
    name: String,
    start_lsn: Lsn,
    header_len: u64,
    fde_offset: u64,
}

impl SegmentPositions {
    /// The view of the segment at `path` with this (already read and checked) header.
    pub fn new(path: &Path, header: &SegmentHeader) -> Self {
        let mut state = Vec::new();
        header.state.encode(&mut state);
        SegmentPositions {
            name: file_name(path),
            start_lsn: header.start_lsn,
            header_len: header.header_len,
            fde_offset: FDE_BASE + state.len() as u64,
        }
    }

    /// The segment's file name (`binlog-NNNNNN.olog`; not a view file name).
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn start_lsn(&self) -> Lsn {
        self.start_lsn
    }

    pub fn header_len(&self) -> u64 {
        self.header_len
    }

    /// Offset shown for the Format_description event of the header block.
    pub fn fde_offset(&self) -> u64 {
        self.fde_offset
    }

    /// File offset of the record at `lsn`.
    pub fn record_offset(&self, lsn: Lsn) -> u64 {
        offset_in_segment(self.header_len, self.start_lsn, lsn)
    }

    /// LSN of the record at file offset `offset`.
    pub fn lsn_at(&self, offset: u64) -> Lsn {
        lsn_in_segment(self.header_len, self.start_lsn, offset)
    }

    /// The binlog size of the segment when its records end at `end_lsn`.
    pub fn size(&self, end_lsn: Lsn) -> u64 {
        self.record_offset(end_lsn)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use onelog_binlog::GtidState;
    use std::path::PathBuf;

    fn header(start_lsn: Lsn) -> SegmentHeader {
        SegmentHeader {
            number: 7,
            start_lsn,
            state: GtidState::default(),
            fde: vec![0; 20],
            header_len: 4096,
            version: 2,
            file_len: Some(1 << 20),
        }
    }

    #[test]
    fn offsets_and_lsns_are_inverse() {
        let p = SegmentPositions::new(&PathBuf::from("/d/binlog-000007.olog"), &header(1000));
        assert_eq!(p.name(), "binlog-000007.olog");
        assert_eq!(p.record_offset(1000), 4096);
        assert_eq!(p.record_offset(1234), 4096 + 234);
        for lsn in [1000, 1001, 5000, 1 << 40] {
            assert_eq!(p.lsn_at(p.record_offset(lsn)), lsn);
        }
        assert_eq!(p.size(1500), 4096 + 500);
        assert_eq!(events_offset(4096), 4096 + FRAME_HEADER_LEN as u64 + 4);
        let mut st = Vec::new();
        GtidState::default().encode(&mut st);
        assert_eq!(p.fde_offset(), 40 + st.len() as u64);
    }

    #[test]
    fn a_path_without_a_name_has_an_empty_one() {
        assert_eq!(file_name(Path::new("/")), "");
        assert_eq!(
            file_name(Path::new("x/binlog-000001.olog")),
            "binlog-000001.olog"
        );
    }
}
