//! Classic MariaDB 10.11 binlog files (`binlog.000001`, ..., `binlog.index`) written through
//! the [`FileSystem`] seam: the file-mode binlog and the mirror of the engine log.
//!
//! Owns [`ClassicBinlog`] (the writer; it validates and repairs the files at open) and
//! [`read_classic_file`] (the checked reader of one file held in memory).
//!
//! Layout of each file, as mariadbd writes it (`sql/log.cc`, `MYSQL_BIN_LOG::open`): the
//! magic `\xfebin`; a Format_description whose header flags carry `LOG_EVENT_BINLOG_IN_USE_F`
//! while the file is open (its CRC32 is computed with the flag cleared, so open and close
//! rewrite one byte); a Gtid_list holding the GTID state at the start of the file; a
//! Binlog_checkpoint naming the file itself; then whole event groups, each event's
//! `end_log_pos` (header bytes 13..17) the file offset after it and its CRC32 recomputed;
//! after the group that takes the file past `max_size`, a Rotate event (position 4, the next
//! file's name). The index lists one file per line as `./binlog.000001`.
//!
//! Invariants:
//! - a group is written with one write at the end of the current file; the GTID state is
//!   the last file's Gtid_list plus the GTIDs of its complete groups;
//! - rotation is durable before it returns: the Rotate event and the old file are synced,
//!   then the new file (header synced, directory synced), then the index (written to a
//!   temporary file, synced, renamed, directory synced). So the last file named by the index
//!   always has a durable header, and a file named by a Rotate but missing from the index
//!   (crash in between) is recreated at open;
//! - [`ClassicBinlog::open`] validates every event of the last file: a torn tail group is cut
//!   at its start, a damaged event followed by more data is `Corrupt` (file and offset);
//! - after an I/O error the writer refuses further appends (`Failed`): the file's tail is
//!   unknown until the next open repairs it.

pub(crate) mod format;
mod scan;
mod view_files;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use onelog_binlog::event::format_description::LOG_EVENT_BINLOG_IN_USE_F;
use onelog_binlog::{Gtid, GtidState};

use crate::error::LogError;
use crate::fs::{read_full_at, File, FileSystem};

pub(crate) use format::{first_event, same_event};
pub use format::{read_classic_file, ClassicEvent};

use format::{
    file_header, file_name, parse_file_name, place_group, rotate_event, FDE_FLAGS_OFFSET,
};

/// Crash point (SimFs): a rotation synced the Rotate event of the old file but has not yet
/// created the next file.
pub const CRASH_ROTATE_AFTER_OLD_SYNC: &str = "classic.rotate.after_old_sync";

/// Where and how classic binlog files are written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClassicOptions {
    pub dir: PathBuf,
    /// `binlog`: files `binlog.000001`, ..., index `binlog.index`.
    pub basename: String,
    /// Rotate after the group that takes the current file past this size (file mode and
    /// `append_group`; the mirror ignores it: its files rotate with the log's segments).
    pub max_size: u64,
    pub server_id: u32,
    /// For the Format_description event (cut to 49 bytes).
    pub server_version: String,
}

impl Default for ClassicOptions {
    fn default() -> Self {
        ClassicOptions {
            dir: PathBuf::from("."),
            basename: "binlog".to_string(),
            max_size: 1 << 30,
            server_id: 1,
            server_version: "10.11.9-MariaDB-onelog".to_string(),
        }
    }
}

/// What [`ClassicBinlog::open`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClassicOpenReport {
    /// File names in the index, oldest first.
    pub files: Vec<String>,
    /// The state after the last complete group of the files.
    pub gtid_state: GtidState,
    /// The GTID of the last complete group of the last file.
    pub last_gtid: Option<Gtid>,
    /// Bytes of an incomplete or damaged tail cut off the last file.
    pub torn_bytes: u64,
    /// No file existed: `<basename>.000001` was created.
    pub created: bool,
}

/// One file of the binlog.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClassicFileInfo {
    pub name: String,
    pub path: PathBuf,
    pub size: u64,
}

/// The writer of classic binlog files. See the module docs.
pub struct ClassicBinlog {
    fs: Arc<dyn FileSystem>,
    opts: ClassicOptions,
    fde: Vec<u8>,
    /// Index order; the last one is the current file (its size kept current).
    files: Vec<ClassicFileInfo>,
    cur: Arc<dyn File>,
    /// Low byte of the current file's Format_description header flags as written.
    cur_fde_flags: u8,
    state: GtidState,
    /// GTID event of the last complete group found at open (for the mirror's checks).
    opened_last_gtid_event: Option<Vec<u8>>,
    dirty: bool,
    fsyncs: u64,
    bytes_written: u64,
    failed: Option<String>,
    closed: bool,
    buf: Vec<u8>,
}

fn now_secs() -> u32 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as u32)
}

impl ClassicBinlog {
    /// Opens the files in `opts.dir` (validating every event of the last file, cutting an
    /// incomplete or damaged tail group at its start, setting the in-use flag), or creates
    /// `<basename>.000001` whose Gtid_list holds `initial_state`. Errors name file and offset.
    pub fn open(
        fs: Arc<dyn FileSystem>,
        opts: ClassicOptions,
        initial_state: &GtidState,
    ) -> Result<(ClassicBinlog, ClassicOpenReport), LogError> {
        fs.create_dir_all(&opts.dir)
            .map_err(|e| LogError::io(&opts.dir, 0, "create binlog directory", e))?;
        let fde = crate::segment::format_description(&opts.server_version, opts.server_id);
        let tmp = tmp_index_path(&opts);
        if fs.exists(&tmp) {
            fs.remove_file(&tmp)
                .map_err(|e| LogError::io(&tmp, 0, "remove temporary index", e))?;
        }
        let (names, from_index) = match read_index(fs.as_ref(), &opts)? {
            Some(n) => (n, true),
            None => (scan_dir(fs.as_ref(), &opts)?, false),
        };
        if names.is_empty() {
            return Self::create_first(fs, opts, fde, initial_state);
        }
        let mut infos = file_infos(fs.as_ref(), &opts, &names)?;
        let last = infos.len() - 1;
        let path = infos[last].path.clone();
        let cur = fs
            .open(&path, false)
            .map_err(|e| LogError::io(&path, 0, "open classic binlog", e))?;
        let scan = scan::scan_file(cur.as_ref(), &path)?;
        let torn = scan.len - scan.valid_end;
        let mut need_sync = false;
        if torn > 0 {
            cur.set_len(scan.valid_end)
                .map_err(|e| LogError::io(&path, scan.valid_end, "cut torn binlog tail", e))?;
            need_sync = true;
        }
        infos[last].size = scan.valid_end;
        let mut b = ClassicBinlog::new(fs, opts, fde, cur, infos, scan.state.clone());
        b.cur_fde_flags = scan.fde_flags;
        b.opened_last_gtid_event = scan.last_gtid_event.clone();
        b.resume(&scan, &path, need_sync, from_index)?;
        let report = ClassicOpenReport {
            files: b.file_names(),
            gtid_state: scan.state,
            last_gtid: scan.last_gtid,
            torn_bytes: torn,
            created: false,
        };
        Ok((b, report))
    }

    /// `open` of a directory without binlog files: creates the first, with `initial_state`.
    fn create_first(
        fs: Arc<dyn FileSystem>,
        opts: ClassicOptions,
        fde: Vec<u8>,
        initial_state: &GtidState,
    ) -> Result<(ClassicBinlog, ClassicOpenReport), LogError> {
        let (cur, info) = create_file(fs.as_ref(), &opts, &fde, 1, initial_state)?;
        let mut b = ClassicBinlog::new(fs, opts, fde, cur, vec![info], initial_state.clone());
        b.fsyncs += 1;
        b.write_index()?;
        let report = ClassicOpenReport {
            files: b.file_names(),
            gtid_state: b.state.clone(),
            last_gtid: None,
            torn_bytes: 0,
            created: true,
        };
        Ok((b, report))
    }

    /// `open` after the scan of the last file (`path`): finishes a rotation that crashed
    /// before the index named the next file, or marks the file in use again; syncs it when
    /// `need_sync` or when it changed; rewrites the index when it was rebuilt from the
    /// directory (`!from_index`).
    fn resume(
        &mut self,
        scan: &scan::ScanResult,
        path: &Path,
        mut need_sync: bool,
        from_index: bool,
    ) -> Result<(), LogError> {
        let b = self;
        if let Some(next) = &scan.rotated_to {
            // A rotation that crashed before the index named the next file: finish it.
            let n = parse_file_name(&b.opts.basename, next).ok_or_else(|| {
                LogError::corrupt(
                    path,
                    scan.valid_end,
                    format!(
                        "Rotate event names {next}, not a {}.NNNNNN file",
                        b.opts.basename
                    ),
                )
            })?;
            if need_sync {
                b.sync_file(&b.cur.clone(), path)?;
            }
            return b.finish_rotation(n);
        }
        if scan.fde_flags & LOG_EVENT_BINLOG_IN_USE_F as u8 == 0 {
            let flags = scan.fde_flags | LOG_EVENT_BINLOG_IN_USE_F as u8;
            b.cur
                .write_all_at(&[flags], FDE_FLAGS_OFFSET)
                .map_err(|e| LogError::io(path, FDE_FLAGS_OFFSET, "set in-use flag", e))?;
            b.cur_fde_flags = flags;
            need_sync = true;
        }
        if need_sync {
            b.sync_file(&b.cur.clone(), path)?;
        }
        if !from_index {
            b.write_index()?;
        }
        Ok(())
    }
}

/// The index's (or directory's) files with their sizes; a file the index names but that
/// does not exist is `Corrupt`.
fn file_infos(
    fs: &dyn FileSystem,
    opts: &ClassicOptions,
    names: &[String],
) -> Result<Vec<ClassicFileInfo>, LogError> {
    let mut infos = Vec::with_capacity(names.len());
    for name in names {
        let path = opts.dir.join(name);
        let size = match fs.open(&path, false) {
            Ok(f) => f
                .len()
                .map_err(|e| LogError::io(&path, 0, "stat classic binlog", e))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(LogError::corrupt(
                    index_path(opts),
                    0,
                    format!("the index names {name}, which does not exist"),
                ))
            }
            Err(e) => return Err(LogError::io(&path, 0, "open classic binlog", e)),
        };
        infos.push(ClassicFileInfo {
            name: name.clone(),
            path,
            size,
        });
    }
    Ok(infos)
}

impl ClassicBinlog {
    fn new(
        fs: Arc<dyn FileSystem>,
        opts: ClassicOptions,
        fde: Vec<u8>,
        cur: Arc<dyn File>,
        files: Vec<ClassicFileInfo>,
        state: GtidState,
    ) -> Self {
        ClassicBinlog {
            fs,
            opts,
            fde,
            files,
            cur,
            cur_fde_flags: LOG_EVENT_BINLOG_IN_USE_F as u8,
            state,
            opened_last_gtid_event: None,
            dirty: false,
            fsyncs: 0,
            bytes_written: 0,
            failed: None,
            closed: false,
            buf: Vec::new(),
        }
    }

    fn usable(&self) -> Result<(), LogError> {
        if let Some(why) = &self.failed {
            return Err(LogError::Failed(format!("classic binlog: {why}")));
        }
        if self.closed {
            return Err(LogError::Closed);
        }
        Ok(())
    }

    fn fail(&mut self, e: LogError) -> LogError {
        self.failed = Some(e.to_string());
        e
    }

    fn cur_info(&self) -> &ClassicFileInfo {
        // `files` is never empty: open and reset always leave the current file in it.
        &self.files[self.files.len() - 1]
    }

    fn sync_file(&mut self, f: &Arc<dyn File>, path: &Path) -> Result<(), LogError> {
        self.fsyncs += 1;
        f.sync_data()
            .map_err(|e| LogError::io(path, 0, "fdatasync classic binlog", e))
    }

    /// Appends one complete event group exactly as stored in onelog's log records (GTID event
    /// first, each event with a CRC32; `end_log_pos` may be 0): rewrites every event's
    /// `end_log_pos` and CRC32 and writes the group with one write. Rotates after it when the
    /// file is past `max_size`. Not synced. A malformed group is `InvalidRecord` and nothing
    /// is written.
    pub fn append_group(&mut self, events: &[u8]) -> Result<(), LogError> {
        self.usable()?;
        let off = self.cur_info().size;
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        let placed = place_group(events, off, &mut buf);
        let gtid = match placed {
            Ok(g) => g,
            Err(why) => {
                self.buf = buf;
                return Err(LogError::InvalidRecord(format!(
                    "event group for {}: {why}",
                    self.cur_info().name
                )));
            }
        };
        let r = self.cur.write_all_at(&buf, off);
        let n = buf.len() as u64;
        self.buf = buf;
        if let Err(e) = r {
            let e = LogError::io(&self.cur_info().path, off, "write classic binlog", e);
            return Err(self.fail(e));
        }
        let last = self.files.len() - 1;
        debug_assert_eq!(
            self.files[last].size, off,
            "a group is written at the end of the file"
        );
        self.files[last].size += n;
        self.bytes_written += n;
        self.dirty = true;
        self.state.record(gtid);
        self.opened_last_gtid_event = None;
        if self.files[last].size > self.opts.max_size {
            self.rotate()?;
        }
        Ok(())
    }

    /// `fdatasync` of the current file when it has unsynced groups (rotation syncs what it
    /// creates itself). Counts one fsync per file sync.
    pub fn sync(&mut self) -> Result<(), LogError> {
        self.usable()?;
        if !self.dirty {
            return Ok(());
        }
        let (f, p) = (self.cur.clone(), self.cur_info().path.clone());
        if let Err(e) = self.sync_file(&f, &p) {
            return Err(self.fail(e));
        }
        self.dirty = false;
        Ok(())
    }

    /// `FLUSH BINARY LOGS`: ends the current file with a Rotate event, clears its in-use
    /// flag, syncs it, creates the next file and adds it to the index, all durably.
    pub fn rotate(&mut self) -> Result<(), LogError> {
        self.usable()?;
        let r = self.rotate_inner();
        r.map_err(|e| self.fail(e))
    }

    fn rotate_inner(&mut self) -> Result<(), LogError> {
        let info = self.cur_info().clone();
        let n = parse_file_name(&self.opts.basename, &info.name).unwrap_or(0) + 1;
        let next = file_name(&self.opts.basename, n);
        let ev = rotate_event(&next, info.size, self.opts.server_id, now_secs());
        self.cur
            .write_all_at(&ev, info.size)
            .map_err(|e| LogError::io(&info.path, info.size, "write Rotate event", e))?;
        let last = self.files.len() - 1;
        self.files[last].size += ev.len() as u64;
        self.bytes_written += ev.len() as u64;
        self.finish_rotation(n)
    }

    /// Clears the in-use flag of the current file, syncs it, creates file `n`, names it in
    /// the index.
    fn finish_rotation(&mut self, n: u64) -> Result<(), LogError> {
        let info = self.cur_info().clone();
        let cleared = self.cur_fde_flags & !(LOG_EVENT_BINLOG_IN_USE_F as u8);
        self.cur
            .write_all_at(&[cleared], FDE_FLAGS_OFFSET)
            .map_err(|e| LogError::io(&info.path, FDE_FLAGS_OFFSET, "clear in-use flag", e))?;
        let cur = self.cur.clone();
        self.sync_file(&cur, &info.path)?;
        self.fs
            .crash_point(CRASH_ROTATE_AFTER_OLD_SYNC)
            .map_err(|e| LogError::io(&info.path, info.size, "rotate", e))?;
        let (file, new_info) =
            create_file(self.fs.as_ref(), &self.opts, &self.fde, n, &self.state)?;
        self.fsyncs += 1;
        self.files.push(new_info);
        self.write_index()?;
        self.cur = file;
        self.cur_fde_flags = LOG_EVENT_BINLOG_IN_USE_F as u8;
        self.dirty = false;
        debug_assert!(
            self.files
                .windows(2)
                .all(|w| parse_file_name(&self.opts.basename, &w[0].name)
                    < parse_file_name(&self.opts.basename, &w[1].name)),
            "the index names the files in increasing order"
        );
        Ok(())
    }

    /// `RESET MASTER`: removes every file and the index, then starts again at
    /// `<basename>.000001` with an empty Gtid_list.
    pub fn reset(&mut self) -> Result<(), LogError> {
        self.reset_to(&GtidState::new())
    }

    /// Like [`reset`](Self::reset), with `state` in the new file's Gtid_list (the mirror
    /// rebuilding from a log whose oldest segment starts at `state`). Clears a failure.
    pub fn reset_to(&mut self, state: &GtidState) -> Result<(), LogError> {
        let r = self.reset_inner(state);
        match r {
            Ok(()) => {
                self.failed = None;
                self.closed = false;
                Ok(())
            }
            Err(e) => Err(self.fail(e)),
        }
    }

    fn reset_inner(&mut self, state: &GtidState) -> Result<(), LogError> {
        self.remove_all()?;
        let (file, info) = create_file(self.fs.as_ref(), &self.opts, &self.fde, 1, state)?;
        self.fsyncs += 1;
        self.files = vec![info];
        self.cur = file;
        self.cur_fde_flags = LOG_EVENT_BINLOG_IN_USE_F as u8;
        self.state = state.clone();
        self.opened_last_gtid_event = None;
        self.dirty = false;
        self.write_index()
    }

    /// Removes the index and every `<basename>.NNNNNN` file of the directory, durably.
    fn remove_all(&mut self) -> Result<(), LogError> {
        let dir = self.opts.dir.clone();
        let index = index_path(&self.opts);
        if self.fs.exists(&index) {
            self.fs
                .remove_file(&index)
                .map_err(|e| LogError::io(&index, 0, "remove binlog index", e))?;
            self.sync_dir()?;
        }
        let names = self
            .fs
            .list_dir(&dir)
            .map_err(|e| LogError::io(&dir, 0, "list binlog directory", e))?;
        for name in names {
            if parse_file_name(&self.opts.basename, &name).is_some() {
                let p = dir.join(&name);
                self.fs
                    .remove_file(&p)
                    .map_err(|e| LogError::io(&p, 0, "remove classic binlog", e))?;
            }
        }
        self.sync_dir()
    }

    /// Clears the in-use flag of the current file and syncs it; later appends get `Closed`.
    pub fn close(&mut self) -> Result<(), LogError> {
        if self.closed {
            return Ok(());
        }
        self.usable()?;
        let info = self.cur_info().clone();
        let cleared = self.cur_fde_flags & !(LOG_EVENT_BINLOG_IN_USE_F as u8);
        let r = self
            .cur
            .write_all_at(&[cleared], FDE_FLAGS_OFFSET)
            .map_err(|e| LogError::io(&info.path, FDE_FLAGS_OFFSET, "clear in-use flag", e));
        let cur = self.cur.clone();
        let r = r.and_then(|()| self.sync_file(&cur, &info.path));
        match r {
            Ok(()) => {
                self.cur_fde_flags = cleared;
                self.dirty = false;
                self.closed = true;
                Ok(())
            }
            Err(e) => Err(self.fail(e)),
        }
    }

    /// The state after the last group appended.
    pub fn gtid_state(&self) -> &GtidState {
        &self.state
    }

    /// `fdatasync` calls on binlog files and the index.
    pub fn fsyncs(&self) -> u64 {
        self.fsyncs
    }

    /// Bytes of groups and Rotate events written since open (file headers excluded).
    pub fn bytes_written(&self) -> u64 {
        self.bytes_written
    }

    /// The files, oldest first; the last is the current one.
    pub fn files(&self) -> Vec<ClassicFileInfo> {
        self.files.clone()
    }

    /// Why the writer refuses appends, if it does.
    pub fn failed(&self) -> Option<&str> {
        self.failed.as_deref()
    }

    pub fn options(&self) -> &ClassicOptions {
        &self.opts
    }

    /// The GTID event (as in the file) of the last complete group found by `open` in the
    /// last file; None after any append, rotation or reset.
    pub(crate) fn opened_last_gtid_event(&self) -> Option<&[u8]> {
        self.opened_last_gtid_event.as_deref()
    }

    fn file_names(&self) -> Vec<String> {
        self.files.iter().map(|f| f.name.clone()).collect()
    }

    fn sync_dir(&self) -> Result<(), LogError> {
        self.fs
            .sync_dir(&self.opts.dir)
            .map_err(|e| LogError::io(&self.opts.dir, 0, "fsync binlog directory", e))
    }

    /// Replaces the index with the current file list: temporary file, sync, rename, sync dir.
    fn write_index(&mut self) -> Result<(), LogError> {
        let mut text = String::new();
        for f in &self.files {
            text.push_str("./");
            text.push_str(&f.name);
            text.push('\n');
        }
        let tmp = tmp_index_path(&self.opts);
        let f = self
            .fs
            .open(&tmp, true)
            .map_err(|e| LogError::io(&tmp, 0, "create temporary index", e))?;
        f.set_len(0)
            .map_err(|e| LogError::io(&tmp, 0, "truncate temporary index", e))?;
        f.write_all_at(text.as_bytes(), 0)
            .map_err(|e| LogError::io(&tmp, 0, "write temporary index", e))?;
        self.sync_file(&f, &tmp)?;
        let index = index_path(&self.opts);
        self.fs
            .rename(&tmp, &index)
            .map_err(|e| LogError::io(&index, 0, "rename temporary index", e))?;
        self.sync_dir()
    }
}

impl std::fmt::Debug for ClassicBinlog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClassicBinlog")
            .field("dir", &self.opts.dir)
            .field("files", &self.files)
            .field("state", &self.state.to_string())
            .field("failed", &self.failed)
            .finish()
    }
}

fn index_path(opts: &ClassicOptions) -> PathBuf {
    opts.dir.join(format!("{}.index", opts.basename))
}

fn tmp_index_path(opts: &ClassicOptions) -> PathBuf {
    opts.dir.join(format!("{}.index_tmp", opts.basename))
}

/// Creates (truncating) file `n` with its header, syncs it and the directory.
fn create_file(
    fs: &dyn FileSystem,
    opts: &ClassicOptions,
    fde: &[u8],
    n: u64,
    state: &GtidState,
) -> Result<(Arc<dyn File>, ClassicFileInfo), LogError> {
    let name = file_name(&opts.basename, n);
    let path = opts.dir.join(&name);
    let header = file_header(fde, state, &name, opts.server_id, now_secs())?;
    let f = fs
        .open(&path, true)
        .map_err(|e| LogError::io(&path, 0, "create classic binlog", e))?;
    f.set_len(0)
        .map_err(|e| LogError::io(&path, 0, "truncate classic binlog", e))?;
    f.write_all_at(&header, 0)
        .map_err(|e| LogError::io(&path, 0, "write classic binlog header", e))?;
    f.sync_data()
        .map_err(|e| LogError::io(&path, 0, "fdatasync classic binlog", e))?;
    fs.sync_dir(&opts.dir)
        .map_err(|e| LogError::io(&opts.dir, 0, "fsync binlog directory", e))?;
    let size = header.len() as u64;
    Ok((f, ClassicFileInfo { name, path, size }))
}

/// The file names of the index, or None when there is no index.
fn read_index(fs: &dyn FileSystem, opts: &ClassicOptions) -> Result<Option<Vec<String>>, LogError> {
    let path = index_path(opts);
    if !fs.exists(&path) {
        return Ok(None);
    }
    let f = fs
        .open(&path, false)
        .map_err(|e| LogError::io(&path, 0, "open binlog index", e))?;
    let len = f
        .len()
        .map_err(|e| LogError::io(&path, 0, "stat binlog index", e))?;
    let mut buf = vec![0u8; len.min(64 << 20) as usize];
    let n = read_full_at(f.as_ref(), &mut buf, 0)
        .map_err(|e| LogError::io(&path, 0, "read binlog index", e))?;
    buf.truncate(n);
    let mut names = Vec::new();
    let mut at = 0u64;
    for line in buf.split(|&b| b == b'\n') {
        let line_at = at;
        at += line.len() as u64 + 1;
        let text = String::from_utf8_lossy(line);
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        let name = text.rsplit('/').next().unwrap_or(text);
        if parse_file_name(&opts.basename, name).is_none() {
            return Err(LogError::corrupt(
                &path,
                line_at,
                format!("index line '{text}' is not a {}.NNNNNN file", opts.basename),
            ));
        }
        names.push(name.to_string());
    }
    Ok(Some(names))
}

/// Without an index (crash while creating the first file or resetting): the binlog files
/// present, by number.
fn scan_dir(fs: &dyn FileSystem, opts: &ClassicOptions) -> Result<Vec<String>, LogError> {
    let mut found: Vec<(u64, String)> = fs
        .list_dir(&opts.dir)
        .map_err(|e| LogError::io(&opts.dir, 0, "list binlog directory", e))?
        .into_iter()
        .filter_map(|n| parse_file_name(&opts.basename, &n).map(|k| (k, n)))
        .collect();
    found.sort();
    Ok(found.into_iter().map(|(_, n)| n).collect())
}
