//! `onelog binlog --to-binlog DIR`: writes event groups read from onelog segments as standard
//! MariaDB binlog files with `onelog_log::classic::ClassicBinlog` on the real file system.
//!
//! Owns [`Export`]. Invariants: the first file's Gtid_list is the GTID state just before the
//! first exported group (the first segment's header state, advanced by every group and
//! GTID-state record read before it); the binlog is only opened when that state is known (at
//! the first exported group, or at the end when nothing was selected), and it is always closed
//! (in-use flag cleared, synced) so even a run that stops at a damaged record leaves valid
//! files; an existing binlog in DIR is never appended to.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use onelog_binlog::event::FormatDescriptionEvent;
use onelog_binlog::{Gtid, GtidState};
use onelog_log::classic::{ClassicBinlog, ClassicOptions};
use onelog_log::segment::SegmentHeader;
use onelog_log::{FileSystem, StdFs};

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

/// An export in progress.
pub struct Export {
    dir: PathBuf,
    opts: ClassicOptions,
    binlog: Option<ClassicBinlog>,
    /// Until the first group is exported: the state just before the next record.
    state: GtidState,
    initial_state: GtidState,
    seen_header: bool,
    groups: u64,
    first: Option<Gtid>,
    last: Option<Gtid>,
}

impl Export {
    /// Prepares an export into `dir` (created if missing); refuses a directory that already
    /// holds a binlog.
    pub fn new(dir: &Path) -> Result<Export, String> {
        let index = dir.join(format!("{BASENAME}.index"));
        if index.exists() || dir.join(format!("{BASENAME}.000001")).exists() {
            return Err(format!(
                "{} already holds a binlog ({BASENAME}.index); export into an empty directory",
                dir.display()
            ));
        }
        Ok(Export {
            dir: dir.to_path_buf(),
            opts: ClassicOptions {
                dir: dir.to_path_buf(),
                basename: BASENAME.to_string(),
                ..ClassicOptions::default()
            },
            binlog: None,
            state: GtidState::new(),
            initial_state: GtidState::new(),
            seen_header: false,
            groups: 0,
            first: None,
            last: None,
        })
    }

    fn started(&self) -> bool {
        self.binlog.is_some()
    }

    /// A segment header was read: before the first export, its state is authoritative; the
    /// first one also gives the server id and version of the Format_description.
    pub fn segment_header(&mut self, h: &SegmentHeader) {
        if self.started() {
            return;
        }
        self.state = h.state.clone();
        if !self.seen_header {
            self.seen_header = true;
            if let Some(b) = h.fde.get(5..9) {
                self.opts.server_id = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            }
            if let Ok(f) = FormatDescriptionEvent::decode(&h.fde) {
                self.opts.server_version = f.server_version;
            }
        }
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

    fn open(&mut self) -> Result<&mut ClassicBinlog, String> {
        if self.binlog.is_none() {
            // Opened at the first exported group (or at the end), so `state` is the GTID state
            // just before that group: the first file's Gtid_list.
            debug_assert_eq!(
                self.groups, 0,
                "the binlog opens before any group is exported"
            );
            let fs: Arc<dyn FileSystem> = StdFs::new();
            let (b, _) = ClassicBinlog::open(fs, self.opts.clone(), &self.state)
                .map_err(|e| format!("cannot create the binlog in {}: {e}", self.dir.display()))?;
            self.initial_state = self.state.clone();
            self.binlog = Some(b);
        }
        self.binlog
            .as_mut()
            .ok_or_else(|| "binlog not open".to_string())
    }

    /// Exports one event group (its GTID is `g`).
    pub fn append(&mut self, g: Gtid, events: &[u8]) -> Result<(), String> {
        let b = self.open()?;
        b.append_group(events)
            .map_err(|e| format!("cannot write group {g}: {e}"))?;
        self.groups += 1;
        self.first.get_or_insert(g);
        self.last = Some(g);
        Ok(())
    }

    /// Closes the binlog (creating an empty one holding the state when nothing was exported).
    pub fn finish(mut self) -> Result<ExportSummary, String> {
        self.open()?;
        let mut files = Vec::new();
        if let Some(b) = self.binlog.as_mut() {
            b.close()
                .map_err(|e| format!("cannot close the binlog: {e}"))?;
            files = b
                .files()
                .into_iter()
                .map(|f| f.path.display().to_string())
                .collect();
        }
        Ok(ExportSummary {
            groups: self.groups,
            first: self.first,
            last: self.last,
            initial_state: self.initial_state,
            files,
        })
    }
}
