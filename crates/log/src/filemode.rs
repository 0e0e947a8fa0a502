//! Switching a log between engine mode and file mode safely: the file-mode session marker
//! and the catch-up of the classic binlog after an engine-mode run.
//!
//! Owns [`MARKER_NAME`] (`filemode.since` in the log directory) and the catch-up scan.
//!
//! Why: file-mode recovery treats the records after the last durable CommitMark as IN DOUBT
//! and rolls back those the classic binlog lacks. Records written in ENGINE mode carry no
//! CommitMarks, yet every one of them was committed and acknowledged (the log is the binlog
//! there), and classic files left from an earlier file-mode run (or written by the lagging
//! mirror) lack them. Without more information a file-mode restart would roll back
//! acknowledged commits. The marker supplies it: it holds the LSN where the current
//! file-mode session started, and only file mode ever writes it.
//!
//! Marker format (24 bytes, little-endian):
//!
//! ```text
//! magic    8   "OLFMSINC"
//! version  u32 1
//! since    u64 the log's end LSN after recovery when the file-mode session started
//! crc      u32 masked CRC32C (as in frames) of the 20 bytes before it
//! ```
//!
//! Protocol (`recovery.rs` runs it before the log takes its first commit):
//! - file-mode open: marker ABSENT (the previous run was engine mode, or the log is new):
//!   every record is committed, nothing is in doubt; the classic binlog is caught up with
//!   the log's groups it lacks (below). Marker PRESENT with `since = S`: only records at LSN
//!   `>= S` (and after the last CommitMark) are in doubt. Then, once recovery's decisions
//!   are durable (segment synced, classic binlog synced), the marker is replaced with
//!   `since = E`, the end LSN after recovery (temporary file, `fdatasync`, rename, directory
//!   sync);
//! - engine-mode open: a marker present is removed, durably (directory synced), before the
//!   first commit.
//!
//! Crash safety, step by step: a crash before the engine-mode removal is durable leaves the
//! marker, and no engine-mode record was written yet: the next file-mode open decides the
//! old file-mode session's records exactly as before. Once the removal is durable every
//! record in the log is committed (engine mode commits them all at its open), which is what
//! "absent" means. A crash during file-mode open before the new marker is durable leaves the
//! old marker (its `since` is at or below every record written later) or none (then nothing
//! was written in file mode yet: every record is still an engine-mode or decided one). A
//! marker is only ever installed complete (synced before the rename), so a damaged one is
//! corruption: `Corrupt`, naming the file; so is a `since` beyond the log's end.
//!
//! Catch-up (marker absent): the log's groups the classic binlog lacks are appended in LSN
//! order, then the binlog is synced. The position is verified, never guessed: the scan looks
//! for the record boundary where the log's GTID state equals the binlog's (per domain last
//! GTID), and, when the binlog's last file ends with a group, where the record just before
//! is that group (same GTID, and its GTID event equal byte for byte but for `end_log_pos`
//! and CRC: the commit id in it is unique across restarts). Not found (purged, or the files
//! belong to another history, e.g. after `RESET MASTER`): nothing is appended and the
//! divergence is reported (`binlog_behind` / `binlog_ahead`) as before. When no classic file
//! exists at all, the binlog is created with the GTID state of the oldest segment, so it ends
//! up holding every group of the log. A crash during catch-up leaves the marker absent and a
//! prefix of the missing groups in the binlog (a torn one is cut at the next open): the next
//! open continues from there.
//!
//! Invariants: the marker is written durably (file synced, directory synced) before the first
//! commit of a file-mode session and removed durably before the first commit in engine mode;
//! catch-up copies groups into the classic binlog in log order from a position verified to be in
//! the log, and syncs them before the first commit.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use onelog_binlog::{Gtid, GtidPos, GtidState};

use crate::classic::{first_event, same_event, ClassicBinlog};
use crate::cursor::SegmentCursor;
use crate::error::LogError;
use crate::frame;
use crate::fs::{read_full_at, File, FileSystem};
use crate::locks::lock;
use crate::seglist::SegmentMeta;
use crate::shared::Stats;
use crate::{Lsn, RecordKind};

/// The classic binlog of file mode and what the commit path tracks about it.
pub(crate) struct BinlogFile {
    pub classic: ClassicBinlog,
    /// Groups appended since the last binlog sync (`sync_binlog`).
    pub groups_since_sync: u32,
}

/// File mode's state (see the lock order in the module docs and `group_commit.rs`).
pub(crate) struct FileMode {
    /// `sync_binlog`.
    pub sync_binlog: u32,
    /// `ClassicBinlog::fsyncs` at open (recovery's syncs are not commit-path syncs).
    pub base_fsyncs: u64,
    /// Serialises staged commits with flush, rotate, reset and shutdown.
    pub turn: Mutex<()>,
    pub binlog: Mutex<BinlogFile>,
}

impl FileMode {
    /// The classic binlog files, oldest first.
    pub fn files(&self) -> Vec<crate::classic::ClassicFileInfo> {
        lock(&self.binlog).classic.files()
    }

    /// Publishes the classic binlog's counters into the log's stats.
    pub fn publish_stats(&self, b: &BinlogFile, stats: &Stats) {
        stats.binlog_fsyncs.store(
            b.classic.fsyncs().saturating_sub(self.base_fsyncs),
            Ordering::SeqCst,
        );
        stats
            .binlog_bytes
            .store(b.classic.bytes_written(), Ordering::SeqCst);
    }
}

/// The marker's file name in the log directory.
pub const MARKER_NAME: &str = "filemode.since";
/// The marker being written (a stale one is removed at open).
pub const MARKER_TMP_NAME: &str = "filemode.since.tmp";

/// Crash point (SimFs): file mode wrote and synced the new marker's temporary file.
pub const CRASH_MARKER_AFTER_TMP_SYNC: &str = "filemode.marker.after_tmp_sync";
/// Crash point: file mode renamed the new marker into place (directory not synced yet).
pub const CRASH_MARKER_AFTER_RENAME: &str = "filemode.marker.after_rename";
/// Crash point: engine mode removed the marker (directory not synced yet).
pub const CRASH_MARKER_AFTER_REMOVE: &str = "filemode.marker.after_remove";
/// Crash point: the catch-up appended one group to the classic binlog (not synced).
pub const CRASH_CATCH_UP_AFTER_GROUP: &str = "filemode.catch_up.after_group";
/// Crash point: the catch-up synced the classic binlog; the marker is not written yet.
pub const CRASH_AFTER_CATCH_UP: &str = "filemode.after_catch_up";

const MAGIC: &[u8; 8] = b"OLFMSINC";
const VERSION: u32 = 1;
const MARKER_LEN: usize = 24;

fn marker_path(dir: &Path) -> PathBuf {
    dir.join(MARKER_NAME)
}

fn crash(fs: &dyn FileSystem, path: &Path, name: &'static str) -> Result<(), LogError> {
    fs.crash_point(name)
        .map_err(|e| LogError::io(path, 0, name, e))
}

fn encode_marker(since: Lsn) -> [u8; MARKER_LEN] {
    let mut b = [0u8; MARKER_LEN];
    b[..8].copy_from_slice(MAGIC);
    b[8..12].copy_from_slice(&VERSION.to_le_bytes());
    b[12..20].copy_from_slice(&since.to_le_bytes());
    let crc = frame::mask_crc(crc32c::crc32c(&b[..20]));
    b[20..].copy_from_slice(&crc.to_le_bytes());
    b
}

fn decode_marker(b: &[u8]) -> Result<Lsn, (u64, String)> {
    if b.len() != MARKER_LEN {
        return Err((
            b.len().min(MARKER_LEN) as u64,
            format!("{} bytes, a marker has {MARKER_LEN}", b.len()),
        ));
    }
    if &b[..8] != MAGIC {
        return Err((0, "bad magic".to_string()));
    }
    let crc = u32::from_le_bytes([b[20], b[21], b[22], b[23]]);
    if frame::mask_crc(crc32c::crc32c(&b[..20])) != crc {
        return Err((20, "checksum mismatch".to_string()));
    }
    let version = u32::from_le_bytes([b[8], b[9], b[10], b[11]]);
    if version != VERSION {
        return Err((8, format!("unknown version {version}")));
    }
    let mut since = [0u8; 8];
    since.copy_from_slice(&b[12..20]);
    Ok(Lsn::from_le_bytes(since))
}

/// Removes a stale temporary marker (it never counts: only the renamed file does).
pub(crate) fn remove_stale_tmp(fs: &dyn FileSystem, dir: &Path) -> Result<(), LogError> {
    let tmp = dir.join(MARKER_TMP_NAME);
    if fs.exists(&tmp) {
        fs.remove_file(&tmp)
            .map_err(|e| LogError::io(&tmp, 0, "remove stale temporary file-mode marker", e))?;
    }
    Ok(())
}

/// The `since` LSN of the marker, or None when there is none. A damaged marker is `Corrupt`.
pub(crate) fn read_marker(fs: &dyn FileSystem, dir: &Path) -> Result<Option<Lsn>, LogError> {
    let path = marker_path(dir);
    if !fs.exists(&path) {
        return Ok(None);
    }
    let f = match fs.open(&path, false) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(LogError::io(&path, 0, "open file-mode marker", e)),
    };
    let len = f
        .len()
        .map_err(|e| LogError::io(&path, 0, "stat file-mode marker", e))?;
    let mut buf = vec![0u8; (len as usize).min(MARKER_LEN + 1)];
    let got = read_full_at(f.as_ref(), &mut buf, 0)
        .map_err(|e| LogError::io(&path, 0, "read file-mode marker", e))?;
    buf.truncate(got);
    decode_marker(&buf).map(Some).map_err(|(off, why)| {
        LogError::corrupt(
            &path,
            off,
            format!(
                "refusing to start: damaged file-mode marker ({why}). It says where the last \
                 file-mode session started; remove it only if the previous run of this data \
                 directory was in engine mode"
            ),
        )
    })
}

/// Installs a marker holding `since`: temporary file, `fdatasync`, rename, directory sync.
pub(crate) fn write_marker(fs: &dyn FileSystem, dir: &Path, since: Lsn) -> Result<(), LogError> {
    let tmp = dir.join(MARKER_TMP_NAME);
    let path = marker_path(dir);
    remove_stale_tmp(fs, dir)?;
    let f = fs
        .open(&tmp, true)
        .map_err(|e| LogError::io(&tmp, 0, "create file-mode marker", e))?;
    f.write_all_at(&encode_marker(since), 0)
        .map_err(|e| LogError::io(&tmp, 0, "write file-mode marker", e))?;
    f.sync_data()
        .map_err(|e| LogError::io(&tmp, 0, "fdatasync file-mode marker", e))?;
    crash(fs, &tmp, CRASH_MARKER_AFTER_TMP_SYNC)?;
    fs.rename(&tmp, &path)
        .map_err(|e| LogError::io(&path, 0, "rename file-mode marker", e))?;
    crash(fs, &path, CRASH_MARKER_AFTER_RENAME)?;
    fs.sync_dir(dir)
        .map_err(|e| LogError::io(dir, 0, "fsync log directory", e))
}

/// Removes the marker, durably, if there is one (engine-mode open).
pub(crate) fn remove_marker(fs: &dyn FileSystem, dir: &Path) -> Result<(), LogError> {
    let path = marker_path(dir);
    if !fs.exists(&path) {
        return Ok(());
    }
    fs.remove_file(&path)
        .map_err(|e| LogError::io(&path, 0, "remove file-mode marker", e))?;
    crash(fs, &path, CRASH_MARKER_AFTER_REMOVE)?;
    fs.sync_dir(dir)
        .map_err(|e| LogError::io(dir, 0, "fsync log directory", e))
}

/// True when every domain's last GTID of `state` is in `pos` (every record logged before
/// `state` was taken is in the binlog).
fn covers(binlog: &GtidState, state: &GtidState) -> bool {
    let pos = binlog.pos();
    state.pos().iter().all(|g| pos.contains(g))
}

/// Appends to `binlog` the log's groups after the point where it stops (module docs), up to
/// `end` (the log's end after recovery), and syncs it. `last_file` is the open last segment.
/// Returns the number of groups appended, or None when the binlog's position is not in the
/// log (nothing appended).
pub(crate) fn catch_up(
    fs: &dyn FileSystem,
    segs: &[SegmentMeta],
    last_file: &Arc<dyn File>,
    end: Lsn,
    binlog: &mut ClassicBinlog,
    last_gtid: Option<Gtid>,
) -> Result<Option<u64>, LogError> {
    let target = binlog.gtid_state().clone();
    let target_pos = target.pos();
    let last_event = binlog.opened_last_gtid_event().map(<[u8]>::to_vec);
    // Segment header states only grow: start in the last segment whose state the binlog
    // covers (starting earlier only scans more; later could miss the position).
    let mut first = segs.partition_point(|s| covers(&target, &s.state));
    if first == 0 {
        return Ok(None);
    }
    // A binlog ending with the last group of a sealed segment: that group, which the check
    // below needs to see, is in an earlier segment (the segments between hold no group).
    while last_gtid.is_some() && first >= 2 && segs[first - 1].state.pos() == target_pos {
        first -= 1;
    }
    let state = (*segs[first - 1].state).clone();
    let mut walk = CatchUp {
        found: last_gtid.is_none() && state.pos() == target_pos,
        state,
        target_pos,
        last_gtid,
        last_event,
        appended: 0,
    };
    for (i, meta) in segs.iter().enumerate().skip(first - 1) {
        let file = if i + 1 == segs.len() {
            last_file.clone()
        } else {
            fs.open(&meta.path, false)
                .map_err(|e| LogError::io(&meta.path, 0, "open segment", e))?
        };
        let seg_end = meta.end_lsn.unwrap_or(end).min(end);
        walk.segment(fs, meta, file, seg_end, binlog)?;
    }
    if !walk.found {
        return Ok(None);
    }
    binlog.sync()?;
    Ok(Some(walk.appended))
}

/// The walk of `catch_up` over the log's groups: looking for the binlog's position, then
/// appending every group after it.
struct CatchUp {
    /// The GTID state of the log at the walk's position (until `found`).
    state: GtidState,
    /// The binlog's position was reached: later groups are appended.
    found: bool,
    target_pos: GtidPos,
    last_gtid: Option<Gtid>,
    last_event: Option<Vec<u8>>,
    appended: u64,
}

impl CatchUp {
    /// Walks the records of one segment up to `seg_end`.
    fn segment(
        &mut self,
        fs: &dyn FileSystem,
        meta: &SegmentMeta,
        file: Arc<dyn File>,
        seg_end: Lsn,
        binlog: &mut ClassicBinlog,
    ) -> Result<(), LogError> {
        let mut cur = SegmentCursor::new(
            file,
            meta.path.clone(),
            meta.number,
            meta.header_len,
            meta.start_lsn,
        );
        let mut lsn = meta.start_lsn;
        while lsn < seg_end {
            let off = cur.offset_of(lsn);
            let f = match cur.frame_at(lsn, seg_end)? {
                Ok(f) => f,
                Err(e) => {
                    return Err(LogError::corrupt(
                        &meta.path,
                        off,
                        format!("record at LSN {lsn}: {e}"),
                    ))
                }
            };
            match f.kind {
                RecordKind::Transaction | RecordKind::Ddl => {
                    let g = frame::record_gtid(f.events).map_err(|e| {
                        LogError::corrupt(
                            &meta.path,
                            off,
                            format!("record at LSN {lsn}: bad GTID event: {e}"),
                        )
                    })?;
                    self.group(fs, meta, lsn, g, f.events, binlog)?;
                }
                RecordKind::GtidState | RecordKind::CommitMark | RecordKind::SyncMark => {}
            }
            lsn += f.len as u64;
        }
        Ok(())
    }

    /// One group (GTID `g`, events `events`, at `lsn`): appended once the position was
    /// found, else checked against it.
    fn group(
        &mut self,
        fs: &dyn FileSystem,
        meta: &SegmentMeta,
        lsn: Lsn,
        g: Gtid,
        events: &[u8],
        binlog: &mut ClassicBinlog,
    ) -> Result<(), LogError> {
        if self.found {
            binlog.append_group(events).map_err(|e| {
                LogError::Failed(format!(
                    "catching the classic binlog up with the group {g} at LSN {lsn} failed: {e}"
                ))
            })?;
            self.appended += 1;
            return crash(fs, &meta.path, CRASH_CATCH_UP_AFTER_GROUP);
        }
        self.state.record(g);
        self.found = self.state.pos() == self.target_pos
            && match (self.last_gtid, &self.last_event) {
                (None, _) => true,
                (Some(l), Some(ev)) => l == g && same_event(first_event(events), ev),
                (Some(l), None) => l == g,
            };
        Ok(())
    }
}
