//! `onelog binlog --to-binlog DIR`: writes the classic view (`onelog_log::view`) of the
//! given onelog segments as MariaDB binlog files in DIR, offline (segment files read
//! directly, never through a running `Log`).
//!
//! Owns [`Export`]. Segment N becomes `binlog.NNNNNN`, its bytes made by the view's own
//! functions ([`view::file_start`], [`view::place`], [`view::rotate`]), so an exported file of
//! a whole segment equals the server's view of it (what the dump stream, SHOW BINLOG EVENTS
//! and the mirror show), byte for byte: a file ends with a Rotate when the next segment given
//! is the next one of the log. `--start-gtid`/`--stop-gtid` drop groups (offsets stay
//! contiguous); the first file's Gtid_list is then the GTID state just before its first
//! exported group (the segment's header state advanced by every group and GTID-state record
//! read before it).
//!
//! Invariants: a file is created when its first exported group comes (or at the start of a
//! segment once the export has started, so whole segments stay whole; or at the end when
//! nothing was selected); every file is complete events, `end_log_pos` contiguous, written
//! closed (in-use flag clear) and synced with the index, so even a run that stops at a
//! damaged record leaves valid files; an existing binlog in DIR is never appended to.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use onelog_binlog::event::BINLOG_MAGIC;
use onelog_binlog::{Gtid, GtidState};
use onelog_log::segment::SegmentHeader;
use onelog_log::view::{self, ViewItem, FIRST_EVENT_OFFSET};

const BASENAME: &str = "binlog";

/// What an export wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportSummary {
    pub groups: u64,
    pub first: Option<Gtid>,
    pub last: Option<Gtid>,
    /// The Gtid_list of the first file.
    pub initial_state: GtidState,
    /// Paths of the files written, oldest first.
    pub files: Vec<String>,
}

/// The file being written: view file `number` of the segment with `header`.
struct OutFile {
    number: u64,
    header: SegmentHeader,
    path: PathBuf,
    out: BufWriter<File>,
    /// Offset where the next event goes.
    offset: u64,
    /// Timestamp of the file's last group (0: none), for its Rotate.
    last_ts: u32,
}

/// An export in progress.
pub struct Export {
    dir: PathBuf,
    /// The segment being read (its header), before and after its file is created.
    segment: Option<SegmentHeader>,
    file: Option<OutFile>,
    /// Names of the files written, oldest first.
    files: Vec<String>,
    /// Until the first group is exported: the state just before the next record.
    state: GtidState,
    initial_state: Option<GtidState>,
    groups: u64,
    first: Option<Gtid>,
    last: Option<Gtid>,
    buf: Vec<u8>,
}

fn io_err(path: &Path, what: &str, e: std::io::Error) -> String {
    format!("cannot {what} {}: {e}", path.display())
}

impl Export {
    /// Prepares an export into `dir` (created if missing); refuses a directory that already
    /// holds a binlog.
    pub fn new(dir: &Path) -> Result<Export, String> {
        let index = dir.join(format!("{BASENAME}.index"));
        let has_binlog = std::fs::read_dir(dir).is_ok_and(|entries| {
            entries
                .flatten()
                .any(|e| view::parse_view_file_name(&e.file_name().to_string_lossy()).is_some())
        });
        if index.exists() || has_binlog {
            return Err(format!(
                "{} already holds a binlog ({BASENAME}.index); export into an empty directory",
                dir.display()
            ));
        }
        std::fs::create_dir_all(dir).map_err(|e| io_err(dir, "create", e))?;
        Ok(Export {
            dir: dir.to_path_buf(),
            segment: None,
            file: None,
            files: Vec::new(),
            state: GtidState::new(),
            initial_state: None,
            groups: 0,
            first: None,
            last: None,
            buf: Vec::new(),
        })
    }

    fn started(&self) -> bool {
        self.initial_state.is_some()
    }

    /// A segment header was read (its records follow): ends the previous file (with a Rotate
    /// when this segment is the next one), and once the export has started, starts this
    /// segment's file.
    pub fn segment_header(&mut self, h: &SegmentHeader) -> Result<(), String> {
        self.end_file(Some(h))?;
        if !self.started() {
            self.state = h.state.clone();
        }
        self.segment = Some(h.clone());
        if self.started() {
            self.begin_file(&h.state)?;
        }
        Ok(())
    }

    /// A group that is not exported.
    pub fn pass(&mut self, g: Gtid) {
        if !self.started() {
            self.state.record(g);
        }
    }

    /// A GTID-state record.
    pub fn state_record(&mut self, s: &GtidState) {
        if !self.started() {
            self.state = s.clone();
        }
    }

    /// Creates the current segment's file with `state` in its Gtid_list.
    fn begin_file(&mut self, state: &GtidState) -> Result<(), String> {
        let Some(h) = self.segment.clone() else {
            return Err("no segment header read before the first group".into());
        };
        let start = view::file_start_with_state(h.number, &h, state)
            .map_err(|e| format!("segment {}: {e}", h.number))?;
        let ViewItem::FileStart { name, events, .. } = start else {
            return Err("the view's file start is not a FileStart".into());
        };
        let path = self.dir.join(&name);
        let f = File::create_new(&path).map_err(|e| io_err(&path, "create", e))?;
        let mut out = BufWriter::new(f);
        out.write_all(&BINLOG_MAGIC)
            .and_then(|()| out.write_all(&events))
            .map_err(|e| io_err(&path, "write", e))?;
        self.files.push(name);
        self.write_index()?;
        self.initial_state.get_or_insert_with(|| state.clone());
        self.file = Some(OutFile {
            number: h.number,
            header: h,
            path,
            out,
            offset: FIRST_EVENT_OFFSET + events.len() as u64,
            last_ts: 0,
        });
        Ok(())
    }

    /// Ends the current file: a Rotate when `next` is the header of the next segment, then
    /// flush and sync.
    fn end_file(&mut self, next: Option<&SegmentHeader>) -> Result<(), String> {
        let Some(mut f) = self.file.take() else {
            return Ok(());
        };
        if let Some(n) = next.filter(|n| n.number == f.number + 1) {
            let rot = view::rotate(f.number, f.offset, &f.header, n.number, n, f.last_ts)
                .map_err(|e| format!("{}: {e}", f.path.display()))?;
            f.out
                .write_all(rot.events())
                .map_err(|e| io_err(&f.path, "write", e))?;
        }
        let file = f
            .out
            .into_inner()
            .map_err(|e| io_err(&f.path, "write", e.into_error()))?;
        file.sync_all().map_err(|e| io_err(&f.path, "sync", e))
    }

    fn write_index(&self) -> Result<(), String> {
        let text: String = self.files.iter().map(|n| format!("./{n}\n")).collect();
        let path = self.dir.join(format!("{BASENAME}.index"));
        std::fs::write(&path, text).map_err(|e| io_err(&path, "write", e))
    }

    /// Exports one event group (its GTID is `g`).
    pub fn append(&mut self, g: Gtid, events: &[u8]) -> Result<(), String> {
        if self.file.is_none() {
            // The first exported group of the export (or of a segment whose file could not be
            // started): `state` is the state just before it.
            let state = if self.started() {
                self.segment
                    .as_ref()
                    .map(|h| h.state.clone())
                    .unwrap_or_default()
            } else {
                self.state.clone()
            };
            self.begin_file(&state)?;
        }
        let Some(f) = self.file.as_mut() else {
            return Err("binlog not open".into());
        };
        self.buf.clear();
        let placed = view::place(f.number, f.offset, events, &mut self.buf)
            .map_err(|e| format!("cannot write group {g}: {e}"))?;
        debug_assert_eq!(placed, g, "the group's GTID event is the record's GTID");
        f.out
            .write_all(&self.buf)
            .map_err(|e| io_err(&f.path, "write", e))?;
        f.offset += self.buf.len() as u64;
        f.last_ts = view::group_timestamp(&self.buf);
        self.groups += 1;
        self.first.get_or_insert(g);
        self.last = Some(g);
        Ok(())
    }

    /// Closes the last file (creating an empty one holding the state when nothing was
    /// exported).
    pub fn finish(mut self) -> Result<ExportSummary, String> {
        if !self.started() && self.segment.is_some() {
            let state = self.state.clone();
            self.begin_file(&state)?;
        }
        self.end_file(None)?;
        Ok(ExportSummary {
            groups: self.groups,
            first: self.first,
            last: self.last,
            initial_state: self.initial_state.unwrap_or_default(),
            files: self
                .files
                .iter()
                .map(|n| self.dir.join(n).display().to_string())
                .collect(),
        })
    }
}
