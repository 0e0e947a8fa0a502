//! Read-only decoding of one segment file, for tools (`onelog binlog`) and tests.
//!
//! Owns [`SegmentInspector`] (a streaming iterator over the records of one
//! `binlog-NNNNNN.olog`), [`inspect_segment`] (the same, collected) and [`InspectError`].
//! It never opens the [`crate::Log`] (a running server holds it) and never writes: it reads
//! the file's bytes with positioned reads, checks the header exactly as the log does
//! ([`SegmentHeader::read`]), then walks the frames from `header_len`, checking each CRC, until
//! the zero length word that ends the data (or the end of the file at a record boundary).
//! Offsets and LSNs are placed by the log's one position view ([`crate::position`]).
//!
//! Invariants:
//! - every record yielded had a matching CRC32C and a well-formed payload (Transaction/Ddl
//!   events start with a GTID event; GtidState payloads decode exactly);
//! - frames are decoded by the log's own [`frame::decode`], so the inspector accepts exactly
//!   what recovery accepts: `CommitMark` records (code 4) are shown, an unknown code or a
//!   malformed payload is an error;
//! - a torn, truncated or damaged frame is an [`InspectError`] naming the file and the byte
//!   offset of the frame; after an error the iterator yields nothing more;
//! - a zero length word followed (within [`MAX_UNSYNCED`] bytes) by non-zero bytes is reported
//!   as damage, not silently taken as the end of the data (unless the word itself became
//!   non-zero meanwhile: a running server appended there, and the data ended when we looked);
//! - nothing here trusts a length from the file: every length is checked against the file
//!   size before anything is allocated or read, and no input makes it panic.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use onelog_binlog::{Gtid, GtidState};

use crate::appender::MAX_UNSYNCED;
use crate::error::LogError;
use crate::frame::{self, commit_mark_lsn, record_gtid, FRAME_HEADER_LEN};
use crate::fs::{read_full_at, File};
use crate::position::{self, SegmentPositions};
use crate::segment::{SegmentHeader, MAGIC};
use crate::{Lsn, RecordKind};

/// One record of a segment, as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InspectedRecord {
    pub lsn: Lsn,
    /// Byte offset of the frame in the segment file.
    pub offset: u64,
    /// Bytes of the whole frame (header included).
    pub frame_len: u64,
    pub kind: RecordKind,
    /// Transaction/Ddl: the GTID of its GTID event.
    pub gtid: Option<Gtid>,
    /// Transaction/Ddl: the binlog event group.
    pub events: Vec<u8>,
    /// Transaction/Ddl: the aux bytes; GtidState: the encoded state; CommitMark: its payload.
    pub aux: Vec<u8>,
    /// GtidState: the decoded state.
    pub state: Option<GtidState>,
    /// CommitMark: the end LSN it commits (when the payload is the expected 8 bytes).
    pub commit_mark: Option<Lsn>,
}

impl InspectedRecord {
    /// File offset of the first byte of `events` (after the frame header and events length).
    pub fn events_offset(&self) -> u64 {
        position::events_offset(self.offset)
    }

    /// LSN of the next record.
    pub fn end_lsn(&self) -> Lsn {
        self.lsn + self.frame_len
    }
}

/// Why a segment cannot be (fully) read: names the file and the byte offset.
#[derive(Debug)]
pub struct InspectError {
    pub path: PathBuf,
    pub offset: u64,
    pub reason: String,
}

impl InspectError {
    fn new(path: &Path, offset: u64, reason: impl Into<String>) -> Self {
        InspectError {
            path: path.to_path_buf(),
            offset,
            reason: reason.into(),
        }
    }
}

impl fmt::Display for InspectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: offset {}: {}",
            self.path.display(),
            self.offset,
            self.reason
        )
    }
}

impl std::error::Error for InspectError {}

/// Where the bytes come from: a real file (positioned reads) or memory (tests, fuzzing).
enum Source {
    Disk(std::fs::File),
    Memory(Vec<u8>),
}

impl File for Source {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        match self {
            Source::Disk(f) => std::os::unix::fs::FileExt::read_at(f, buf, offset),
            Source::Memory(b) => {
                let start = usize::try_from(offset).unwrap_or(usize::MAX).min(b.len());
                let n = buf.len().min(b.len() - start);
                buf[..n].copy_from_slice(&b[start..start + n]);
                Ok(n)
            }
        }
    }

    fn write_all_at(&self, _buf: &[u8], _offset: u64) -> io::Result<()> {
        Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            "segment inspector is read-only",
        ))
    }

    fn sync_data(&self) -> io::Result<()> {
        Ok(())
    }

    fn len(&self) -> io::Result<u64> {
        match self {
            Source::Disk(f) => f.metadata().map(|m| m.len()),
            Source::Memory(b) => Ok(b.len() as u64),
        }
    }

    fn set_len(&self, _len: u64) -> io::Result<()> {
        Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            "segment inspector is read-only",
        ))
    }
}

/// True when `prefix` (the first bytes of a file) is an onelog segment's magic.
pub fn is_segment(prefix: &[u8]) -> bool {
    prefix.starts_with(MAGIC)
}

/// Streams the records of one segment file. Iterate it (or call [`Self::next_record`]);
/// after the first error it yields nothing more.
pub struct SegmentInspector {
    path: PathBuf,
    source: Source,
    file_len: u64,
    header: SegmentHeader,
    positions: SegmentPositions,
    /// Offset of the next frame.
    offset: u64,
    done: bool,
}

/// Bytes scanned after a zero length word to make sure it really ends the data.
const TAIL_CHECK: u64 = MAX_UNSYNCED;
const CHUNK: usize = 64 << 10;

impl SegmentInspector {
    /// Opens `path` read-only and checks its header.
    pub fn open(path: &Path) -> Result<Self, InspectError> {
        let file = std::fs::File::open(path)
            .map_err(|e| InspectError::new(path, 0, format!("cannot open: {e}")))?;
        Self::with_source(path, Source::Disk(file))
    }

    /// The same over bytes already in memory (`name` is used in errors).
    pub fn from_bytes(name: impl Into<PathBuf>, bytes: Vec<u8>) -> Result<Self, InspectError> {
        let path = name.into();
        Self::with_source(&path, Source::Memory(bytes))
    }

    fn with_source(path: &Path, source: Source) -> Result<Self, InspectError> {
        let file_len = source
            .len()
            .map_err(|e| InspectError::new(path, 0, format!("cannot stat: {e}")))?;
        let header = SegmentHeader::read(&source, path).map_err(|e| match e {
            LogError::Corrupt { offset, reason, .. } => InspectError::new(path, offset, reason),
            LogError::Io { offset, source, .. } => {
                InspectError::new(path, offset, format!("read failed: {source}"))
            }
            other => InspectError::new(path, 0, other.to_string()),
        })?;
        let positions = SegmentPositions::new(path, &header);
        if header.header_len > file_len {
            return Err(InspectError::new(
                path,
                12,
                format!(
                    "header length {} is beyond the end of the file ({file_len} bytes)",
                    header.header_len
                ),
            ));
        }
        Ok(SegmentInspector {
            path: path.to_path_buf(),
            source,
            file_len,
            offset: header.header_len,
            header,
            positions,
            done: false,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn header(&self) -> &SegmentHeader {
        &self.header
    }

    /// File offset of the Format_description event inside the header block.
    pub fn fde_offset(&self) -> u64 {
        self.positions.fde_offset()
    }

    /// The position view of the segment (file name, offsets of LSNs).
    pub fn positions(&self) -> &SegmentPositions {
        &self.positions
    }

    /// Offset of the next frame (after the last record once the end was reached).
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// LSN of the next record.
    pub fn lsn(&self) -> Lsn {
        self.positions.lsn_at(self.offset)
    }

    pub fn file_len(&self) -> u64 {
        self.file_len
    }

    fn err(&mut self, offset: u64, reason: impl Into<String>) -> InspectError {
        self.done = true;
        InspectError::new(&self.path, offset, reason)
    }

    fn read_exact_at(&mut self, buf: &mut [u8], offset: u64) -> Result<usize, InspectError> {
        match read_full_at(&self.source, buf, offset) {
            Ok(n) => Ok(n),
            Err(e) => Err(self.err(offset, format!("read failed: {e}"))),
        }
    }

    /// The next record, `Ok(None)` at the end of the data.
    pub fn next_record(&mut self) -> Result<Option<InspectedRecord>, InspectError> {
        if self.done {
            return Ok(None);
        }
        let at = self.offset;
        let mut head = [0u8; FRAME_HEADER_LEN];
        let n = self.read_exact_at(&mut head, at)?;
        if n < 4 {
            if head[..n].iter().all(|&b| b == 0) {
                self.done = true;
                return Ok(None);
            }
            return Err(self.err(
                at,
                format!("truncated record: {n} bytes before the end of the file"),
            ));
        }
        let len = u32::from_le_bytes([head[0], head[1], head[2], head[3]]) as u64;
        if len == 0 {
            self.check_zero_tail(at)?;
            self.done = true;
            return Ok(None);
        }
        let total = FRAME_HEADER_LEN as u64 + len;
        if n < FRAME_HEADER_LEN || at + total > self.file_len {
            return Err(self.err(
                at,
                format!(
                    "truncated record: needs {total} bytes, {} before the end of the file",
                    self.file_len - at
                ),
            ));
        }
        // `len` fits in the file, so this allocation is bounded by the file size.
        let mut buf = vec![0u8; total as usize];
        buf[..FRAME_HEADER_LEN].copy_from_slice(&head);
        let got = self.read_exact_at(&mut buf[FRAME_HEADER_LEN..], at + FRAME_HEADER_LEN as u64)?;
        if got < len as usize {
            return Err(self.err(
                at,
                format!("truncated record: needs {total} bytes, file ended"),
            ));
        }
        let f = match frame::decode(&buf) {
            Ok(f) => f,
            Err(e) => return Err(self.err(at, format!("bad record ({total} bytes): {e}"))),
        };
        let mut rec = InspectedRecord {
            lsn: self.lsn(),
            offset: at,
            frame_len: total,
            kind: f.kind,
            gtid: None,
            events: f.events.to_vec(),
            aux: f.aux.to_vec(),
            state: None,
            commit_mark: None,
        };
        match f.kind {
            RecordKind::Transaction | RecordKind::Ddl => match record_gtid(f.events) {
                Ok(g) => rec.gtid = Some(g),
                Err(e) => {
                    return Err(self.err(
                        at,
                        format!("event group does not start with a GTID event: {e}"),
                    ))
                }
            },
            RecordKind::GtidState => match GtidState::decode(f.aux) {
                Ok((state, _)) => rec.state = Some(state),
                Err(e) => return Err(self.err(at, format!("bad GTID state record: {e}"))),
            },
            RecordKind::CommitMark => rec.commit_mark = commit_mark_lsn(f.aux),
            RecordKind::SyncMark => {}
        }
        debug_assert!(
            total > 0 && at + total <= self.file_len,
            "records advance inside the file"
        );
        self.offset = at + total;
        Ok(Some(rec))
    }

    /// After a zero length word at `at`: the data really ends there only if the bytes after
    /// it (up to [`TAIL_CHECK`] of them) are zeros too.
    fn check_zero_tail(&mut self, at: u64) -> Result<(), InspectError> {
        let end = self.file_len.min(at.saturating_add(TAIL_CHECK));
        let mut buf = vec![0u8; CHUNK];
        let mut pos = at;
        while pos < end {
            let want = ((end - pos) as usize).min(CHUNK);
            let n = self.read_exact_at(&mut buf[..want], pos)?;
            if let Some(i) = buf[..n].iter().position(|&b| b != 0) {
                // A running server may have appended a group at `at` since its length word
                // was read: then the data simply ended there when we looked.
                let mut word = [0u8; 4];
                if self.read_exact_at(&mut word, at)? == 4 && word != [0; 4] {
                    return Ok(());
                }
                return Err(self.err(
                    at,
                    format!(
                        "zero length word, but non-zero bytes follow at offset {}: a damaged \
                         record (or the torn tail of a log that crashed and was not reopened)",
                        pos + i as u64
                    ),
                ));
            }
            if n < want {
                break;
            }
            pos += n as u64;
        }
        Ok(())
    }
}

impl Iterator for SegmentInspector {
    type Item = Result<InspectedRecord, InspectError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_record().transpose()
    }
}

/// A whole segment, decoded: the header, every record that decoded, and the error that
/// stopped the walk, if any (records before it are still there).
#[derive(Debug)]
pub struct SegmentDump {
    pub path: PathBuf,
    pub header: SegmentHeader,
    pub fde_offset: u64,
    pub records: Vec<InspectedRecord>,
    /// Offset after the last good record.
    pub end_offset: u64,
    pub error: Option<InspectError>,
}

/// Reads a whole segment file (header errors are `Err`; record errors end up in
/// [`SegmentDump::error`]).
pub fn inspect_segment(path: &Path) -> Result<SegmentDump, InspectError> {
    let ins = SegmentInspector::open(path)?;
    Ok(collect(ins))
}

/// [`inspect_segment`] over bytes in memory.
pub fn inspect_segment_bytes(
    name: impl Into<PathBuf>,
    bytes: Vec<u8>,
) -> Result<SegmentDump, InspectError> {
    let ins = SegmentInspector::from_bytes(name, bytes)?;
    Ok(collect(ins))
}

fn collect(mut ins: SegmentInspector) -> SegmentDump {
    let mut records = Vec::new();
    let mut error = None;
    loop {
        match ins.next_record() {
            Ok(Some(r)) => records.push(r),
            Ok(None) => break,
            Err(e) => {
                error = Some(e);
                break;
            }
        }
    }
    SegmentDump {
        end_offset: records
            .last()
            .map_or(ins.header.header_len, |r| r.offset + r.frame_len),
        path: ins.path,
        header: ins.header,
        fde_offset: ins.positions.fde_offset(),
        records,
        error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::{encode_commit_mark, encode_event_record, encode_state_record};
    use crate::segment::format_description;
    use onelog_binlog::event::gtid::{GtidEvent, FL_TRANSACTIONAL};
    use onelog_binlog::event::XidEvent;

    fn group(seq: u64) -> Vec<u8> {
        let mut ev = Vec::new();
        GtidEvent {
            gtid: Gtid::new(0, 1, seq),
            flags2: FL_TRANSACTIONAL,
            commit_id: Some(seq),
            timestamp: 1_700_000_000,
        }
        .encode(&mut ev);
        XidEvent { xid: seq }.encode(1_700_000_000, 1, &mut ev);
        ev
    }

    /// A segment of `size` bytes with three transactions, a GTID-state record and a CommitMark.
    fn segment(size: usize) -> (Vec<u8>, Vec<u64>) {
        let mut st = GtidState::new();
        st.record(Gtid::new(0, 1, 4));
        let fde = format_description("10.11.9-MariaDB-onelog", 1);
        let mut buf = SegmentHeader::encode(2, 1000, &st, &fde, size as u64);
        let mut offsets = Vec::new();
        for seq in 5..8 {
            offsets.push(buf.len() as u64);
            encode_event_record(&mut buf, RecordKind::Transaction, &group(seq), b"");
        }
        st.record(Gtid::new(0, 1, 7));
        offsets.push(buf.len() as u64);
        encode_state_record(&mut buf, &st);
        offsets.push(buf.len() as u64);
        encode_commit_mark(&mut buf, 1234);
        buf.resize(size, 0);
        (buf, offsets)
    }

    #[test]
    fn reads_header_records_and_stops_at_zero_tail() {
        let (buf, offsets) = segment(64 << 10);
        let d = inspect_segment_bytes("binlog-000002.olog", buf).unwrap();
        assert!(d.error.is_none(), "{:?}", d.error);
        assert_eq!(d.header.number, 2);
        assert_eq!(d.header.start_lsn, 1000);
        assert_eq!(d.header.state.to_string(), "0-1-4");
        assert_eq!(d.records.len(), 5);
        let gtids: Vec<String> = d
            .records
            .iter()
            .filter_map(|r| r.gtid.map(|g| g.to_string()))
            .collect();
        assert_eq!(gtids, ["0-1-5", "0-1-6", "0-1-7"]);
        for (r, off) in d.records.iter().zip(&offsets) {
            assert_eq!(r.offset, *off);
            assert_eq!(r.lsn, 1000 + off - 4096);
        }
        assert_eq!(d.records[3].kind, RecordKind::GtidState);
        assert_eq!(
            d.records[3]
                .state
                .as_ref()
                .map(|s| s.to_string())
                .as_deref(),
            Some("0-1-7")
        );
        assert_eq!(d.records[4].kind, RecordKind::CommitMark);
        assert_eq!(d.records[4].commit_mark, Some(1234));
        // The FDE is where the inspector says it is.
        let fde = format_description("10.11.9-MariaDB-onelog", 1);
        assert_eq!(d.header.fde, fde);
        assert_eq!(d.fde_offset, 40 + 4 + 16);
    }

    #[test]
    fn truncated_record_names_its_offset() {
        let (buf, offsets) = segment(64 << 10);
        let cut = offsets[1] as usize + 20;
        let d = inspect_segment_bytes("s.olog", buf[..cut].to_vec()).unwrap();
        assert_eq!(d.records.len(), 1);
        let e = d.error.unwrap();
        assert_eq!(e.offset, offsets[1]);
        assert!(e.to_string().starts_with("s.olog: offset "), "{e}");
        assert!(e.reason.contains("truncated"), "{e}");
    }

    #[test]
    fn flipped_bit_is_an_error_at_its_record() {
        let (buf, offsets) = segment(64 << 10);
        for byte in offsets[1]..offsets[2] {
            let mut b = buf.clone();
            b[byte as usize] ^= 0x10;
            let d = inspect_segment_bytes("s.olog", b).unwrap();
            assert_eq!(d.records.len(), 1, "flip at {byte}");
            assert_eq!(d.error.unwrap().offset, offsets[1], "flip at {byte}");
        }
    }

    #[test]
    fn zeroed_length_word_with_data_after_it_is_damage() {
        let (mut buf, offsets) = segment(64 << 10);
        let at = offsets[1] as usize;
        buf[at..at + 4].copy_from_slice(&[0; 4]);
        let d = inspect_segment_bytes("s.olog", buf).unwrap();
        assert_eq!(d.records.len(), 1);
        assert_eq!(d.error.unwrap().offset, offsets[1]);
    }

    #[test]
    fn bad_header_is_an_error() {
        let (mut buf, _) = segment(64 << 10);
        buf[20] ^= 1;
        let e = inspect_segment_bytes("s.olog", buf.clone()).unwrap_err();
        assert!(e.reason.contains("CRC"), "{e}");
        assert!(inspect_segment_bytes("s.olog", b"nope".to_vec()).is_err());
        assert!(inspect_segment_bytes("s.olog", Vec::new()).is_err());
    }

    #[test]
    fn file_ending_at_a_record_boundary_ends_the_data() {
        let (buf, offsets) = segment(64 << 10);
        let d = inspect_segment_bytes("s.olog", buf[..offsets[2] as usize].to_vec()).unwrap();
        assert!(d.error.is_none());
        assert_eq!(d.records.len(), 2);
    }

    proptest::proptest! {
        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..6000)) {
            let mut b = bytes.clone();
            let _ = inspect_segment_bytes("r.olog", bytes);
            // With a valid-looking magic and version too.
            if b.len() >= 16 {
                b[..8].copy_from_slice(MAGIC);
                b[8..12].copy_from_slice(&1u32.to_le_bytes());
                b[12..16].copy_from_slice(&4096u32.to_le_bytes());
            }
            let _ = inspect_segment_bytes("r.olog", b);
        }

        #[test]
        fn mutated_segments_never_panic(flips in proptest::collection::vec((0usize..5000, proptest::num::u8::ANY), 1..8),
                                        cut in 0usize..6000) {
            let (mut buf, _) = segment(6000);
            for (at, x) in flips {
                buf[at % 6000] ^= x;
            }
            buf.truncate(cut);
            if let Ok(d) = inspect_segment_bytes("m.olog", buf) {
                for r in &d.records {
                    proptest::prop_assert!(r.offset + r.frame_len <= 6000);
                }
            }
        }
    }
}
