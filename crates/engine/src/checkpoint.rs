//! Checkpoint files and the control file that names the current one (the background scheduler
//! is `scheduler.rs`).
//!
//! A checkpoint is the table store serialized at a log position (LSN): recovery loads the
//! current checkpoint and replays the log from its LSN. This module owns the on-disk form and
//! the atomic switch; the body bytes are the engine's business.
//!
//! ## Checkpoint file `checkpoint-<lsn as 16 lowercase hex digits>.ckpt`
//!
//! ```text
//! offset      size  field
//! 0           8     magic b"OLOGCKPT"
//! 8           4     format version, u32 LE (1)
//! 12          8     LSN, u64 LE: the log position the body is consistent with
//! 20          n     GTID state at that LSN: GtidState::encode (u32 count, 16 bytes per entry)
//! 20+n        8     body length b, u64 LE
//! 28+n        b     body (engine-defined)
//! 28+n+b      4     CRC32C (Castagnoli), u32 LE, of every byte before it
//! ```
//! The file is exactly `32 + n + b` bytes long; anything else is corruption.
//!
//! ## Control file `control`
//!
//! ```text
//! 0      8  magic b"OLOGCTRL"
//! 8      4  format version, u32 LE (1)
//! 12     8  LSN of the current checkpoint, u64 LE
//! 20     2  length k of the file name, u16 LE
//! 22     k  file name of the current checkpoint (in the same directory)
//! 22+k   4  CRC32C of every byte before it
//! ```
//!
//! Format 2 ([`write_base_control`], docs/PAGED_STORE.md) has the same layout with version 2,
//! LSN 0 and the name of the paged table store's base directory beside the control file: the
//! base's own root record carries the LSN, and there are no checkpoint files.
//!
//! ## Backup images `backup-<tag>-checkpoint-<lsn>.ckpt` (the paged store)
//!
//! A paged data directory has no checkpoint file for `onelog backup` to copy. While a backup
//! holds it (`backup.rs`), the engine writes the current tables as one checkpoint file of the
//! format above, named after the backup session's `tag` (its connection id) and the LSN
//! ([`backup_image_name`]), beside the control file ([`write_backup_image`]); the hold removes
//! it when released, and an open removes any a crash left ([`remove_backup_images`]). The
//! control file never names one.
//!
//! ## Protocol and invariants
//!
//! [`write_checkpoint`]: write `<name>.tmp` (synced every
//! [`SYNC_STEP`](onelog_log::fs::SYNC_STEP) bytes on the way, so its writeback never queues
//! ahead of the log's fsyncs all at once), `sync_data`, rename to `<name>`, `sync_dir`
//! (crash point `checkpoint.after_write`); write `control.tmp`, `sync_data` (crash point
//! `checkpoint.before_control_switch`); rename it over `control`, `sync_dir` (crash point
//! `checkpoint.after_control_switch`); then remove every other checkpoint file. Calls are
//! serialized within the process, and a checkpoint older than the current one is refused
//! ([`CheckpointError::Backwards`]): the log before the current checkpoint may be purged. A
//! failed call removes its temporary files before returning (a partial `.ckpt.tmp` on a full
//! disk would otherwise hold the space an operator frees), and never creates the directory
//! (the engine does at open; one that vanished under a running server is an error).
//!
//! - The control file only ever names a checkpoint file that is complete and durable, and it is
//!   itself replaced by an atomic rename of a synced file, so after a crash at any point
//!   [`load_checkpoint`] finds either the previous checkpoint or the new one, never a mix and
//!   never a torn file. A control file that is unreadable, or names a missing or corrupt file,
//!   is therefore real corruption and an error naming the file and offset, never skipped.
//! - Only the file the control names is needed; other `checkpoint-*.ckpt` files and this
//!   module's `.tmp` files are leftovers of an interrupted checkpoint and are removed (best
//!   effort) after a switch and when a checkpoint is loaded. Other files in the directory are
//!   never touched.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use onelog_binlog::GtidState;
use onelog_log::fs::StepSync;
use onelog_log::{File, FileSystem, Lsn};

const CKPT_MAGIC: &[u8; 8] = b"OLOGCKPT";
const CTRL_MAGIC: &[u8; 8] = b"OLOGCTRL";
const FORMAT_VERSION: u32 = 1;
/// The control file's format when it names the paged store's base (`write_base_control`).
const BASE_FORMAT_VERSION: u32 = 2;
/// magic + version + LSN.
const CKPT_FIXED_HEAD: u64 = 20;
/// Bytes of a checkpoint file besides the GTID state and the body: head, body length, CRC.
const CKPT_OVERHEAD: u64 = CKPT_FIXED_HEAD + 8 + 4;
/// magic + version + LSN + name length.
const CTRL_HEAD: usize = 22;
const CTRL_MAX_LEN: u64 = (CTRL_HEAD + u16::MAX as usize + 4) as u64;

/// Serializes `write_checkpoint` calls (see there).
static WRITE_LOCK: Mutex<()> = Mutex::new(());

/// Name of the control file in the checkpoint directory.
pub const CONTROL_FILE: &str = "control";
const CONTROL_TMP: &str = "control.tmp";
const CKPT_PREFIX: &str = "checkpoint-";
const CKPT_SUFFIX: &str = ".ckpt";
const TMP_SUFFIX: &str = ".tmp";

/// A checkpoint read back by [`load_checkpoint`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadedCheckpoint {
    pub lsn: Lsn,
    pub gtid_state: GtidState,
    pub body: Vec<u8>,
    pub path: PathBuf,
}

/// A checkpoint could not be written or loaded.
#[derive(Debug)]
pub enum CheckpointError {
    /// The file system failed (including a simulated crash).
    Io {
        path: PathBuf,
        offset: u64,
        op: &'static str,
        source: io::Error,
    },
    /// A file's content is not what this module writes.
    Corrupt {
        path: PathBuf,
        offset: u64,
        reason: String,
    },
    /// `write_checkpoint` was asked for an LSN older than the current checkpoint's (`path` is
    /// the control file). Going backwards could name a position whose log was already purged.
    Backwards {
        path: PathBuf,
        current: Lsn,
        requested: Lsn,
    },
    /// The control file (`path`) names the paged table store's base `base`, which the caller
    /// (a tool that reads checkpoint files) cannot read.
    PagedStore { path: PathBuf, base: String },
}

impl CheckpointError {
    /// The file the error is about.
    pub fn path(&self) -> &Path {
        match self {
            CheckpointError::Io { path, .. }
            | CheckpointError::Corrupt { path, .. }
            | CheckpointError::Backwards { path, .. }
            | CheckpointError::PagedStore { path, .. } => path,
        }
    }

    /// The byte offset in that file.
    pub fn offset(&self) -> u64 {
        match self {
            CheckpointError::Io { offset, .. } | CheckpointError::Corrupt { offset, .. } => *offset,
            CheckpointError::Backwards { .. } | CheckpointError::PagedStore { .. } => 0,
        }
    }

    fn corrupt(path: &Path, offset: u64, reason: impl Into<String>) -> Self {
        CheckpointError::Corrupt {
            path: path.to_path_buf(),
            offset,
            reason: reason.into(),
        }
    }
}

fn io_err(path: &Path, offset: u64, op: &'static str) -> impl FnOnce(io::Error) -> CheckpointError {
    let path = path.to_path_buf();
    move |source| CheckpointError::Io {
        path,
        offset,
        op,
        source,
    }
}

impl fmt::Display for CheckpointError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckpointError::Io {
                path,
                offset,
                op,
                source,
            } => {
                write!(
                    f,
                    "checkpoint I/O error: {op} {} at offset {offset}: {source}",
                    path.display()
                )
            }
            CheckpointError::Corrupt {
                path,
                offset,
                reason,
            } => {
                write!(
                    f,
                    "corrupt checkpoint data in {} at offset {offset}: {reason}",
                    path.display()
                )
            }
            CheckpointError::Backwards {
                path,
                current,
                requested,
            } => write!(
                f,
                "refusing to write a checkpoint at LSN {requested}: {} already names LSN {current}",
                path.display()
            ),
            CheckpointError::PagedStore { path, base } => write!(
                f,
                "{} names the paged table store `{base}` (control format {BASE_FORMAT_VERSION}), \
                 which this operation does not read yet",
                path.display()
            ),
        }
    }
}

/// A failed read of the table store's base while a checkpoint body was encoded.
impl From<crate::base::BaseError> for CheckpointError {
    fn from(e: crate::base::BaseError) -> Self {
        CheckpointError::Io {
            path: e.dir.clone(),
            offset: 0,
            op: e.doing,
            source: io::Error::other(e.detail),
        }
    }
}

impl std::error::Error for CheckpointError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CheckpointError::Io { source, .. } => Some(source),
            CheckpointError::Corrupt { .. }
            | CheckpointError::Backwards { .. }
            | CheckpointError::PagedStore { .. } => None,
        }
    }
}

/// The file name of the checkpoint at `lsn`.
pub fn checkpoint_file_name(lsn: Lsn) -> String {
    format!("{CKPT_PREFIX}{lsn:016x}{CKPT_SUFFIX}")
}

/// The LSN in a checkpoint file name, if `name` is one.
fn parse_checkpoint_name(name: &str) -> Option<Lsn> {
    let hex = name.strip_prefix(CKPT_PREFIX)?.strip_suffix(CKPT_SUFFIX)?;
    if hex.len() != 16
        || !hex
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        return None;
    }
    u64::from_str_radix(hex, 16).ok()
}

fn crash_point(fs: &dyn FileSystem, dir: &Path, name: &'static str) -> Result<(), CheckpointError> {
    fs.crash_point(name).map_err(io_err(dir, 0, name))
}

/// Writes the concatenation of `parts` as the whole content of `path` and syncs it.
fn write_synced(fs: &dyn FileSystem, path: &Path, parts: &[&[u8]]) -> Result<(), CheckpointError> {
    let file = fs.open(path, true).map_err(io_err(path, 0, "create"))?;
    file.set_len(0).map_err(io_err(path, 0, "truncate"))?;
    let mut offset = 0u64;
    for part in parts {
        file.write_all_at(part, offset)
            .map_err(io_err(path, offset, "write"))?;
        offset += part.len() as u64;
    }
    file.sync_data().map_err(io_err(path, 0, "sync"))
}

/// Writes the checkpoint file `path` (header, the body as `body` produces it, CRC) and syncs
/// it, every [`SYNC_STEP`](onelog_log::fs::SYNC_STEP) bytes of body on the way. The header's
/// body length is written as 0 first and overwritten once the body is written; the CRC of the
/// header and body is combined from their separate CRCs.
fn write_checkpoint_file(
    fs: &dyn FileSystem,
    path: &Path,
    lsn: Lsn,
    gtid_state: &GtidState,
    body: &mut BodyParts,
) -> Result<(), CheckpointError> {
    let mut head = Vec::with_capacity(64);
    head.extend_from_slice(CKPT_MAGIC);
    head.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    head.extend_from_slice(&lsn.to_le_bytes());
    gtid_state.encode(&mut head);
    let len_at = head.len();
    head.extend_from_slice(&0u64.to_le_bytes());
    let file = fs.open(path, true).map_err(io_err(path, 0, "create"))?;
    file.set_len(0).map_err(io_err(path, 0, "truncate"))?;
    let start = head.len() as u64;
    let mut offset = start;
    let mut steps = StepSync::from(start);
    let mut body_crc = 0u32;
    body(&mut |part: &[u8]| {
        file.write_all_at(part, offset)
            .map_err(io_err(path, offset, "write"))?;
        offset += part.len() as u64;
        body_crc = crc32c::crc32c_append(body_crc, part);
        steps
            .wrote(&*file, offset)
            .map_err(io_err(path, offset, "sync"))?;
        Ok(())
    })?;
    let body_len = offset - start;
    head[len_at..].copy_from_slice(&body_len.to_le_bytes());
    let len = usize::try_from(body_len)
        .map_err(|_| CheckpointError::corrupt(path, 0, "checkpoint body too large"))?;
    let crc = crc32c::crc32c_combine(crc32c::crc32c(&head), body_crc, len);
    file.write_all_at(&head, 0)
        .map_err(io_err(path, 0, "write"))?;
    file.write_all_at(&crc.to_le_bytes(), offset)
        .map_err(io_err(path, offset, "write"))?;
    file.sync_data().map_err(io_err(path, 0, "sync"))
}

/// Writes the checkpoint at `lsn` and makes it the current one (see the module doc for the
/// protocol). Returns the checkpoint file's path. On error the previous checkpoint stays
/// current and the attempt's temporary files are removed (best effort), so a failure on a full
/// disk gives back the space it took instead of keeping it until the next success.
///
/// `dir` must exist (the engine creates it at open): it is never created here, so a data
/// directory renamed or removed under a running server makes the checkpoint fail (ENOENT on
/// the temporary file) instead of creating a stray checkpoint directory at the old path.
pub fn write_checkpoint(
    fs: &dyn FileSystem,
    dir: &Path,
    lsn: Lsn,
    gtid_state: &GtidState,
    body: &[u8],
) -> Result<PathBuf, CheckpointError> {
    write_checkpoint_then(fs, dir, lsn, gtid_state, &[body], &mut |remove| remove())
}

/// Removes every checkpoint file of `dir` but the one of `lsn` (the current one), and this
/// module's temporary files: what a switch does after writing, for a writer that skipped it.
pub fn remove_older_checkpoints(fs: &dyn FileSystem, dir: &Path, lsn: Lsn) {
    let _serialized = WRITE_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    remove_leftovers(fs, dir, &checkpoint_file_name(lsn));
}

/// [`write_checkpoint`], with the body given in parts written one after the other, and the
/// removal of the older checkpoint files handed to `cleanup`, which runs it (or not: a backup
/// may be copying the previous checkpoint; its files are then removed by a later switch or at
/// the next load).
pub fn write_checkpoint_then(
    fs: &dyn FileSystem,
    dir: &Path,
    lsn: Lsn,
    gtid_state: &GtidState,
    body: &[&[u8]],
    cleanup: &mut dyn FnMut(&mut dyn FnMut()),
) -> Result<PathBuf, CheckpointError> {
    let mut parts = |sink: &mut PartSink| body.iter().try_for_each(|p| sink(p));
    write_checkpoint_streamed(fs, dir, lsn, gtid_state, &mut parts, cleanup)
}

/// Where a streamed checkpoint body goes: each call writes the next part of it.
pub type PartSink<'s> = dyn FnMut(&[u8]) -> Result<(), CheckpointError> + 's;

/// A checkpoint body produced while it is written: called once, it hands the sink every part
/// of the body in order and stops at the sink's first error.
pub type BodyParts<'b> = dyn FnMut(&mut PartSink) -> Result<(), CheckpointError> + 'b;

/// [`write_checkpoint_then`] with a body that is produced part by part as it is written, so
/// it never has to be in memory whole (the engine encodes its tables this way: a large
/// body built in one buffer cost more, in copies and freshly zeroed pages, than encoding it;
/// issue 14 part 4). The file is the same: its header's body length and its CRC are filled in
/// once the body is written.
pub fn write_checkpoint_streamed(
    fs: &dyn FileSystem,
    dir: &Path,
    lsn: Lsn,
    gtid_state: &GtidState,
    body: &mut BodyParts,
    cleanup: &mut dyn FnMut(&mut dyn FnMut()),
) -> Result<PathBuf, CheckpointError> {
    // One checkpoint write at a time in this process: a concurrent writer's leftover removal
    // could otherwise delete the file the other is about to name in the control file.
    let _serialized = WRITE_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let r = write_checkpoint_serialized(fs, dir, lsn, gtid_state, body);
    if let Ok(path) = &r {
        let name = checkpoint_file_name(lsn);
        debug_assert_eq!(path.file_name().and_then(|n| n.to_str()), Some(&name[..]));
        cleanup(&mut || remove_leftovers(fs, dir, &name));
    }
    if r.is_err() {
        // Under WRITE_LOCK the only temporary files are this attempt's. After a simulated
        // crash the file system refuses the removal, which is what a real crash leaves.
        remove_tmp_files(fs, dir);
    }
    debug_assert!(r.is_err() || !fs.exists(&dir.join(CONTROL_TMP)));
    r
}

fn write_checkpoint_serialized(
    fs: &dyn FileSystem,
    dir: &Path,
    lsn: Lsn,
    gtid_state: &GtidState,
    body: &mut BodyParts,
) -> Result<PathBuf, CheckpointError> {
    let control = dir.join(CONTROL_FILE);
    if fs.exists(&control) {
        let (current, _) = read_control(fs, &control)?;
        if current > lsn {
            return Err(CheckpointError::Backwards {
                path: control,
                current,
                requested: lsn,
            });
        }
    }
    let name = checkpoint_file_name(lsn);
    let path = write_checkpoint_file_as(fs, dir, &name, lsn, gtid_state, body)?;
    crash_point(fs, dir, "checkpoint.after_write")?;

    let ctrl = encode_control(FORMAT_VERSION, lsn, &name)
        .ok_or_else(|| CheckpointError::corrupt(&path, 0, "checkpoint file name too long"))?;
    let ctrl_tmp = dir.join(CONTROL_TMP);
    // The control file only ever names a complete, durable checkpoint file: it was renamed
    // into place and its directory synced above. (No `fs.exists` assertion here: under the
    // crash simulation a concurrent power cut may take the file away at any moment, and
    // recovery then finds the old control file.)
    write_synced(fs, &ctrl_tmp, &[&ctrl])?;
    crash_point(fs, dir, "checkpoint.before_control_switch")?;
    fs.rename(&ctrl_tmp, &dir.join(CONTROL_FILE))
        .map_err(io_err(&ctrl_tmp, 0, "rename"))?;
    fs.sync_dir(dir).map_err(io_err(dir, 0, "sync directory"))?;
    crash_point(fs, dir, "checkpoint.after_control_switch")?;
    Ok(path)
}

/// The control file's bytes (module docs) naming `name` at `lsn` in format `version`; `None`
/// when the name is too long for its 16-bit length.
fn encode_control(version: u32, lsn: Lsn, name: &str) -> Option<Vec<u8>> {
    let name_len = u16::try_from(name.len()).ok()?;
    let mut ctrl = Vec::with_capacity(CTRL_HEAD + name.len() + 4);
    ctrl.extend_from_slice(CTRL_MAGIC);
    ctrl.extend_from_slice(&version.to_le_bytes());
    ctrl.extend_from_slice(&lsn.to_le_bytes());
    ctrl.extend_from_slice(&name_len.to_le_bytes());
    ctrl.extend_from_slice(name.as_bytes());
    let crc = crc32c::crc32c(&ctrl);
    ctrl.extend_from_slice(&crc.to_le_bytes());
    Some(ctrl)
}

/// The file name of the backup image of the backup session `tag` at `lsn` (module docs).
pub fn backup_image_name(tag: u64, lsn: Lsn) -> String {
    format!("{BACKUP_IMAGE_PREFIX}{tag}-{}", checkpoint_file_name(lsn))
}

/// The LSN of `name` if it is the backup image of the backup session `tag`.
pub fn parse_backup_image_name(name: &str, tag: u64) -> Option<Lsn> {
    split_backup_image_name(name)
        .filter(|(t, _)| *t == tag.to_string())
        .map(|(_, lsn)| lsn)
}

/// The session tag (its digits) and the LSN of `name` if it is any backup image's name.
fn split_backup_image_name(name: &str) -> Option<(&str, Lsn)> {
    let (tag, rest) = name.strip_prefix(BACKUP_IMAGE_PREFIX)?.split_once('-')?;
    if !tag.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((tag, parse_checkpoint_name(rest)?))
}

const BACKUP_IMAGE_PREFIX: &str = "backup-";

/// Writes the checkpoint file of `lsn` as `name` in `dir`: under a temporary name, synced,
/// renamed, and the directory synced. Returns its path.
fn write_checkpoint_file_as(
    fs: &dyn FileSystem,
    dir: &Path,
    name: &str,
    lsn: Lsn,
    gtid_state: &GtidState,
    body: &mut BodyParts,
) -> Result<PathBuf, CheckpointError> {
    let path = dir.join(name);
    let tmp = dir.join(format!("{name}{TMP_SUFFIX}"));
    write_checkpoint_file(fs, &tmp, lsn, gtid_state, body)?;
    fs.rename(&tmp, &path).map_err(io_err(&tmp, 0, "rename"))?;
    fs.sync_dir(dir).map_err(io_err(dir, 0, "sync directory"))?;
    Ok(path)
}

/// Writes the backup image `name` into `dir` (module docs) as [`write_checkpoint_file_as`]
/// does; on error neither it nor its temporary file is left (best effort).
pub(crate) fn write_backup_image(
    fs: &dyn FileSystem,
    dir: &Path,
    name: &str,
    lsn: Lsn,
    gtid_state: &GtidState,
    body: &mut BodyParts,
) -> Result<PathBuf, CheckpointError> {
    let written = write_checkpoint_file_as(fs, dir, name, lsn, gtid_state, body);
    if written.is_err() {
        let _ = fs.remove_file(&dir.join(format!("{name}{TMP_SUFFIX}")));
        let _ = fs.remove_file(&dir.join(name));
    }
    written
}

/// Removes every backup image of `dir` and its temporary files (what a crash during a backup
/// of the paged store leaves; no backup runs at open).
pub(crate) fn remove_backup_images(fs: &dyn FileSystem, dir: &Path) {
    let Ok(names) = fs.list_dir(dir) else { return };
    for n in names {
        if split_backup_image_name(n.strip_suffix(TMP_SUFFIX).unwrap_or(&n)).is_some() {
            let _ = fs.remove_file(&dir.join(n));
        }
    }
}

/// Whether `name` is a temporary file of this module (`control.tmp`,
/// `checkpoint-<lsn>.ckpt.tmp`). Other files in `dir` are never touched.
fn is_our_tmp(name: &str) -> bool {
    name == CONTROL_TMP
        || name
            .strip_suffix(TMP_SUFFIX)
            .is_some_and(|n| parse_checkpoint_name(n).is_some())
}

/// Removes every checkpoint file but `keep` and this module's temporary files in `dir`. Best
/// effort: a leftover that cannot be removed now is removed by the next checkpoint or load,
/// and never affects which checkpoint is current.
fn remove_leftovers(fs: &dyn FileSystem, dir: &Path, keep: &str) {
    let Ok(names) = fs.list_dir(dir) else { return };
    for name in names {
        let stale_ckpt = name != keep && parse_checkpoint_name(&name).is_some();
        if stale_ckpt || is_our_tmp(&name) {
            let _ = fs.remove_file(&dir.join(&name));
        }
    }
}

/// Removes every checkpoint file of `dir` and this module's temporary files (best effort):
/// after the control file switched to naming the paged store's base, none is used again.
pub fn remove_checkpoint_files(fs: &dyn FileSystem, dir: &Path) {
    let _serialized = WRITE_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    remove_leftovers(fs, dir, "");
}

/// Removes only this module's temporary files: used when there is no control file to say
/// which checkpoint to keep.
fn remove_tmp_files(fs: &dyn FileSystem, dir: &Path) {
    let Ok(names) = fs.list_dir(dir) else { return };
    for name in names.iter().filter(|n| is_our_tmp(n)) {
        let _ = fs.remove_file(&dir.join(name));
    }
}

/// Reads exactly `buf.len()` bytes at `offset`; a short file is corruption.
fn read_exact_at(
    file: &dyn File,
    path: &Path,
    buf: &mut [u8],
    offset: u64,
) -> Result<(), CheckpointError> {
    let mut done = 0usize;
    while done < buf.len() {
        let at = offset + done as u64;
        let n = file
            .read_at(&mut buf[done..], at)
            .map_err(io_err(path, at, "read"))?;
        if n == 0 {
            return Err(CheckpointError::corrupt(path, at, "file ends early"));
        }
        done += n;
    }
    Ok(())
}

fn le_u32(b: &[u8], at: usize) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(a)
}

fn le_u64(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

/// Checks magic and version of a fixed head already read into `head`.
fn check_magic(path: &Path, head: &[u8], magic: &[u8; 8]) -> Result<(), CheckpointError> {
    if &head[..8] != magic {
        return Err(CheckpointError::corrupt(
            path,
            0,
            format!("bad magic {:02x?}", &head[..8]),
        ));
    }
    let version = le_u32(head, 8);
    if version != FORMAT_VERSION {
        return Err(CheckpointError::corrupt(
            path,
            8,
            format!("unsupported format version {version} (this build reads {FORMAT_VERSION})"),
        ));
    }
    Ok(())
}

/// What the control file names: the current checkpoint file, or the paged store's base.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Control {
    /// Format 1: the checkpoint file `name`, written at `lsn`.
    File { lsn: Lsn, name: String },
    /// Format 2: the paged table store's base, the directory `name` beside the control file
    /// (its checkpoints carry their own LSN; docs/PAGED_STORE.md).
    Base { name: String },
}

/// Reads and verifies the control file: the LSN and file name of the current checkpoint. A
/// control file that names the paged store's base is [`CheckpointError::PagedStore`].
pub fn read_control(fs: &dyn FileSystem, path: &Path) -> Result<(Lsn, String), CheckpointError> {
    match read_control_any(fs, path)? {
        Control::File { lsn, name } => Ok((lsn, name)),
        Control::Base { name } => Err(CheckpointError::PagedStore {
            path: path.to_path_buf(),
            base: name,
        }),
    }
}

/// Reads and verifies the control file, of either format.
pub fn read_control_any(fs: &dyn FileSystem, path: &Path) -> Result<Control, CheckpointError> {
    let file = fs.open(path, false).map_err(io_err(path, 0, "open"))?;
    let len = file.len().map_err(io_err(path, 0, "stat"))?;
    if len < (CTRL_HEAD + 4) as u64 || len > CTRL_MAX_LEN {
        return Err(CheckpointError::corrupt(
            path,
            0,
            format!("impossible length {len}"),
        ));
    }
    let mut buf = vec![0u8; len as usize];
    read_exact_at(file.as_ref(), path, &mut buf, 0)?;
    let paged =
        buf.len() >= 12 && &buf[..8] == CTRL_MAGIC && le_u32(&buf, 8) == BASE_FORMAT_VERSION;
    if !paged {
        check_magic(path, &buf, CTRL_MAGIC)?;
    }
    let lsn = le_u64(&buf, 12);
    let name_len = usize::from(u16::from_le_bytes([buf[20], buf[21]]));
    let crc_at = CTRL_HEAD + name_len;
    if crc_at + 4 != buf.len() {
        return Err(CheckpointError::corrupt(
            path,
            20,
            format!("name length {name_len} does not match file length {len}"),
        ));
    }
    let stored = le_u32(&buf, crc_at);
    let computed = crc32c::crc32c(&buf[..crc_at]);
    if stored != computed {
        return Err(CheckpointError::corrupt(
            path,
            crc_at as u64,
            format!("CRC32C mismatch: stored {stored:#010x}, computed {computed:#010x}"),
        ));
    }
    let raw = &buf[CTRL_HEAD..crc_at];
    let bad_name = |what: &str| {
        CheckpointError::corrupt(
            path,
            CTRL_HEAD as u64,
            format!("names {:?}, not {what}", String::from_utf8_lossy(raw)),
        )
    };
    if paged {
        let name = std::str::from_utf8(raw)
            .ok()
            .filter(|n| is_plain_name(n) && lsn == 0)
            .ok_or_else(|| bad_name("a directory beside it (with LSN 0)"))?;
        return Ok(Control::Base {
            name: name.to_owned(),
        });
    }
    let name = std::str::from_utf8(raw)
        .ok()
        .filter(|n| parse_checkpoint_name(n) == Some(lsn))
        .ok_or_else(|| bad_name(&format!("the checkpoint file of LSN {lsn}")))?;
    Ok(Control::File {
        lsn,
        name: name.to_owned(),
    })
}

/// A file name without a directory part.
fn is_plain_name(n: &str) -> bool {
    !n.is_empty() && n != "." && n != ".." && !n.contains(['/', '\\', '\0'])
}

/// Makes `dir`'s control file name the paged store's base `name` (a directory beside it):
/// written to a temporary file, synced, renamed over `control`, directory synced. Done once,
/// when a data directory starts on the paged store; a control file already there is replaced.
pub fn write_base_control(
    fs: &dyn FileSystem,
    dir: &Path,
    name: &str,
) -> Result<(), CheckpointError> {
    let _serialized = WRITE_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let control = dir.join(CONTROL_FILE);
    if !is_plain_name(name) {
        return Err(CheckpointError::corrupt(
            &control,
            0,
            format!("base name {name:?}"),
        ));
    }
    let ctrl = encode_control(BASE_FORMAT_VERSION, 0, name)
        .ok_or_else(|| CheckpointError::corrupt(&control, 0, "base name too long"))?;
    let tmp = dir.join(CONTROL_TMP);
    write_synced(fs, &tmp, &[&ctrl])?;
    fs.rename(&tmp, &control)
        .map_err(io_err(&tmp, 0, "rename"))?;
    fs.sync_dir(dir).map_err(io_err(dir, 0, "sync directory"))
}

/// The checkpoint file `path` (one the control file names) and its length.
fn open_checkpoint_file(
    fs: &dyn FileSystem,
    path: &Path,
) -> Result<(std::sync::Arc<dyn File>, u64), CheckpointError> {
    let file = fs.open(path, false).map_err(|e| {
        if e.kind() == io::ErrorKind::NotFound {
            CheckpointError::corrupt(path, 0, "named by the control file but missing")
        } else {
            io_err(path, 0, "open")(e)
        }
    })?;
    let len = file.len().map_err(io_err(path, 0, "stat"))?;
    Ok((file, len))
}

/// Reads and verifies a checkpoint file written for `expect_lsn`.
pub fn read_checkpoint_file(
    fs: &dyn FileSystem,
    path: &Path,
    expect_lsn: Lsn,
) -> Result<LoadedCheckpoint, CheckpointError> {
    let (file, len) = open_checkpoint_file(fs, path)?;
    let file = file.as_ref();
    if len < CKPT_OVERHEAD + 4 {
        return Err(CheckpointError::corrupt(
            path,
            len,
            format!("file too short ({len} bytes)"),
        ));
    }
    let head = read_checkpoint_head(file, path, len, expect_lsn)?;
    let body = read_checkpoint_body(file, path, len, &head)?;
    let gtid_len = head.len() as u64 - CKPT_FIXED_HEAD - 8;
    let gtid_bytes = &head[CKPT_FIXED_HEAD as usize..(CKPT_FIXED_HEAD + gtid_len) as usize];
    let (gtid_state, used) = GtidState::decode(gtid_bytes).map_err(|e| {
        CheckpointError::corrupt(path, CKPT_FIXED_HEAD + e.offset as u64, e.to_string())
    })?;
    if used as u64 != gtid_len {
        return Err(CheckpointError::corrupt(
            path,
            CKPT_FIXED_HEAD,
            "GTID state length mismatch",
        ));
    }
    Ok(LoadedCheckpoint {
        lsn: expect_lsn,
        gtid_state,
        body,
        path: path.to_path_buf(),
    })
}

/// The header of a `len`-byte checkpoint file (magic, version, LSN, GTID state, body length),
/// checked against the LSN the control file names; the GTID state must fit the file.
fn read_checkpoint_head(
    file: &dyn File,
    path: &Path,
    len: u64,
    expect_lsn: Lsn,
) -> Result<Vec<u8>, CheckpointError> {
    let mut head = vec![0u8; CKPT_FIXED_HEAD as usize + 4];
    read_exact_at(file, path, &mut head, 0)?;
    check_magic(path, &head, CKPT_MAGIC)?;
    let lsn = le_u64(&head, 12);
    if lsn != expect_lsn {
        return Err(CheckpointError::corrupt(
            path,
            12,
            format!("holds LSN {lsn} but the control file says {expect_lsn}"),
        ));
    }
    let count = u64::from(le_u32(&head, CKPT_FIXED_HEAD as usize));
    let gtid_len = 4 + 16 * count;
    if CKPT_OVERHEAD + gtid_len > len {
        return Err(CheckpointError::corrupt(
            path,
            CKPT_FIXED_HEAD,
            format!("GTID state of {count} entries does not fit in a {len}-byte file"),
        ));
    }
    // Rest of the header: the GTID entries and the body length.
    let head_len = CKPT_FIXED_HEAD + gtid_len + 8;
    head.resize(head_len as usize, 0);
    read_exact_at(
        file,
        path,
        &mut head[CKPT_FIXED_HEAD as usize + 4..],
        CKPT_FIXED_HEAD + 4,
    )?;
    Ok(head)
}

/// The body after `head`, whose length must make up the file's `len` with the CRC, and the
/// CRC32C check of head and body.
fn read_checkpoint_body(
    file: &dyn File,
    path: &Path,
    len: u64,
    head: &[u8],
) -> Result<Vec<u8>, CheckpointError> {
    let head_len = head.len() as u64;
    let body_len = le_u64(head, (head_len - 8) as usize);
    let expect_len = head_len
        .checked_add(body_len)
        .and_then(|n| n.checked_add(4));
    if expect_len != Some(len) {
        return Err(CheckpointError::corrupt(
            path,
            head_len - 8,
            format!("body length {body_len} does not match file length {len}"),
        ));
    }
    let mut body = vec![0u8; body_len as usize];
    read_exact_at(file, path, &mut body, head_len)?;
    let mut trailer = [0u8; 4];
    let crc_at = head_len + body_len;
    read_exact_at(file, path, &mut trailer, crc_at)?;
    let stored = u32::from_le_bytes(trailer);
    let computed = crc32c::crc32c_append(crc32c::crc32c(head), &body);
    if stored != computed {
        return Err(CheckpointError::corrupt(
            path,
            crc_at,
            format!("CRC32C mismatch: stored {stored:#010x}, computed {computed:#010x}"),
        ));
    }
    Ok(body)
}

/// Loads the current checkpoint of `dir` (server start). `None` when there is no control file
/// (a fresh data directory, or no checkpoint ever completed). A control file that is corrupt
/// or names a missing or corrupt checkpoint is an error naming the file and offset. Leftover
/// files of interrupted checkpoints are then removed (best effort; see the module doc), so
/// call it only when no checkpoint of `dir` is being written.
pub fn load_checkpoint(
    fs: &dyn FileSystem,
    dir: &Path,
) -> Result<Option<LoadedCheckpoint>, CheckpointError> {
    let loaded = read_current_checkpoint(fs, dir)?;
    match &loaded {
        Some(ckpt) => {
            let keep = checkpoint_file_name(ckpt.lsn);
            remove_leftovers(fs, dir, &keep);
        }
        None => remove_tmp_files(fs, dir),
    }
    Ok(loaded)
}

/// Like [`load_checkpoint`] but changes nothing on disk: for tools (backup, check) that may
/// look at the data directory of a running server.
pub fn read_current_checkpoint(
    fs: &dyn FileSystem,
    dir: &Path,
) -> Result<Option<LoadedCheckpoint>, CheckpointError> {
    let control = dir.join(CONTROL_FILE);
    if !fs.exists(&control) {
        return Ok(None);
    }
    let (lsn, name) = read_control(fs, &control)?;
    read_checkpoint_file(fs, &dir.join(&name), lsn).map(Some)
}

/// Bytes a [`CheckpointFile`] check reads at a time.
const CHECK_READ: usize = 1 << 20;

/// A checkpoint file verified whole (every byte read once through
/// [`CheckpointStreamCheck`], a part at a time) whose body is then read a part at a time
/// ([`CheckpointFile::read_body`]): for readers that must not hold a body larger than memory
/// (the paged store's conversion, `engine.rs`; `onelog restore`).
pub struct CheckpointFile {
    pub lsn: Lsn,
    pub gtid_state: GtidState,
    pub path: PathBuf,
    file: std::sync::Arc<dyn File>,
    /// Where the body starts in the file.
    body_at: u64,
    pub body_len: u64,
    /// The CRC32C of the header, and the one the file stores (of header and body): a
    /// [`BodyReader`] checks what it read against them.
    head_crc: u32,
    stored_crc: u32,
}

impl fmt::Debug for CheckpointFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CheckpointFile")
            .field("path", &self.path)
            .field("lsn", &self.lsn)
            .field("body_len", &self.body_len)
            .finish_non_exhaustive()
    }
}

impl CheckpointFile {
    /// Opens the checkpoint file `path` written for `expect_lsn` and verifies it as
    /// [`read_checkpoint_file`] does, holding at most [`CHECK_READ`] bytes of it.
    pub fn open(
        fs: &dyn FileSystem,
        path: &Path,
        expect_lsn: Lsn,
    ) -> Result<CheckpointFile, CheckpointError> {
        let (file, len) = open_checkpoint_file(fs, path)?;
        let mut check = CheckpointStreamCheck::new(expect_lsn);
        let mut buf = vec![0u8; CHECK_READ.min(len as usize)];
        let mut at = 0u64;
        while at < len {
            let n = ((len - at) as usize).min(buf.len());
            read_exact_at(file.as_ref(), path, &mut buf[..n], at)?;
            check.feed(&buf[..n]);
            at += n as u64;
        }
        let body_at = check.head_len as u64;
        let head_crc = crc32c::crc32c(&check.head[..check.head.len().min(check.head_len)]);
        let stored_crc = if check.tail.len() == 4 {
            le_u32(&check.tail, 0)
        } else {
            0
        };
        let gtid_state = check.finish(path)?;
        Ok(CheckpointFile {
            lsn: expect_lsn,
            gtid_state,
            path: path.to_path_buf(),
            file,
            body_at,
            body_len: len - body_at - 4,
            head_crc,
            stored_crc,
        })
    }

    /// A reader of the body from its start, in order, that checks what it read against the
    /// file's CRC at its end ([`BodyReader::finish`]).
    pub fn body_reader(&self) -> BodyReader<'_> {
        BodyReader {
            file: self,
            next: 0,
            crc: self.head_crc,
        }
    }

    /// The current checkpoint of `dir`, opened (None without a control file). Changes nothing
    /// on disk.
    pub fn open_current(
        fs: &dyn FileSystem,
        dir: &Path,
    ) -> Result<Option<CheckpointFile>, CheckpointError> {
        let control = dir.join(CONTROL_FILE);
        if !fs.exists(&control) {
            return Ok(None);
        }
        let (lsn, name) = read_control(fs, &control)?;
        CheckpointFile::open(fs, &dir.join(&name), lsn).map(Some)
    }

    /// Reads `buf.len()` bytes of the body from its byte `at`.
    pub fn read_body(&self, at: u64, buf: &mut [u8]) -> Result<(), CheckpointError> {
        if at.saturating_add(buf.len() as u64) > self.body_len {
            return Err(CheckpointError::corrupt(
                &self.path,
                self.body_at.saturating_add(at),
                format!(
                    "reading {} body bytes at {at} of a {}-byte body",
                    buf.len(),
                    self.body_len
                ),
            ));
        }
        read_exact_at(self.file.as_ref(), &self.path, buf, self.body_at + at)
    }
}

/// A [`CheckpointFile`]'s body read again, in order ([`CheckpointFile::body_reader`]): the
/// conversion and `onelog restore` read a body this way after [`CheckpointFile::open`] verified
/// it, so a file that changed or went bad between the two reads is an error, never a copy or
/// a conversion of other bytes.
pub struct BodyReader<'f> {
    file: &'f CheckpointFile,
    /// The body offset of the next byte.
    next: u64,
    /// The CRC32C of the header and the body bytes read so far.
    crc: u32,
}

impl BodyReader<'_> {
    /// Body bytes read so far.
    pub fn position(&self) -> u64 {
        self.next
    }

    /// Reads the next `buf.len()` bytes of the body.
    pub fn read(&mut self, buf: &mut [u8]) -> Result<(), CheckpointError> {
        self.file.read_body(self.next, buf)?;
        self.crc = crc32c::crc32c_append(self.crc, buf);
        self.next += buf.len() as u64;
        Ok(())
    }

    /// After the whole body: its CRC, with the header's, against the file's.
    pub fn finish(self) -> Result<(), CheckpointError> {
        let f = self.file;
        if self.next != f.body_len {
            return Err(CheckpointError::corrupt(
                &f.path,
                f.body_at + self.next,
                format!("read {} of {} body bytes", self.next, f.body_len),
            ));
        }
        if self.crc != f.stored_crc {
            return Err(CheckpointError::corrupt(
                &f.path,
                f.body_at + f.body_len,
                format!(
                    "CRC32C mismatch on a second read: stored {:#010x}, computed {:#010x} (the \
                     file changed while it was read)",
                    f.stored_crc, self.crc
                ),
            ));
        }
        Ok(())
    }
}

/// Verifies a checkpoint file from its bytes, fed in order in any chunking (a backup checks
/// the file while it copies it): magic, version, the LSN the control file named, the GTID
/// state, the body length against the file's length and the CRC32C of everything before the
/// trailer. Holds only the header and the last four bytes seen.
pub struct CheckpointStreamCheck {
    expect_lsn: Lsn,
    head: Vec<u8>,
    /// Bytes of the head still to collect (known once the GTID count is in).
    head_len: usize,
    crc: u32,
    /// The last (at most) four bytes fed: the trailer once the file ends.
    tail: Vec<u8>,
    fed: u64,
}

impl CheckpointStreamCheck {
    pub fn new(expect_lsn: Lsn) -> Self {
        CheckpointStreamCheck {
            expect_lsn,
            head: Vec::new(),
            head_len: CKPT_FIXED_HEAD as usize + 4,
            crc: 0,
            tail: Vec::with_capacity(8),
            fed: 0,
        }
    }

    /// The next bytes of the file.
    pub fn feed(&mut self, mut bytes: &[u8]) {
        self.fed += bytes.len() as u64;
        while self.head.len() < self.head_len && !bytes.is_empty() {
            let take = (self.head_len - self.head.len()).min(bytes.len());
            self.head.extend_from_slice(&bytes[..take]);
            self.crc_in(&bytes[..take]);
            bytes = &bytes[take..];
            if self.head.len() == CKPT_FIXED_HEAD as usize + 4 {
                let count = le_u32(&self.head, CKPT_FIXED_HEAD as usize) as usize;
                self.head_len = (CKPT_FIXED_HEAD as usize + 4)
                    .saturating_add(count.saturating_mul(16))
                    .saturating_add(8)
                    .min(64 << 20);
            }
        }
        self.crc_in(bytes);
    }

    /// Adds bytes to the CRC, holding back the last four (they may be the trailer).
    fn crc_in(&mut self, bytes: &[u8]) {
        if bytes.len() >= 4 {
            self.crc = crc32c::crc32c_append(self.crc, &self.tail);
            let (body, last) = bytes.split_at(bytes.len() - 4);
            self.crc = crc32c::crc32c_append(self.crc, body);
            self.tail.clear();
            self.tail.extend_from_slice(last);
        } else {
            self.tail.extend_from_slice(bytes);
            let extra = self.tail.len().saturating_sub(4);
            self.crc = crc32c::crc32c_append(self.crc, &self.tail[..extra]);
            self.tail.drain(..extra);
        }
    }

    /// Ends the file (`path` names it in errors); returns the GTID state it holds.
    pub fn finish(self, path: &Path) -> Result<GtidState, CheckpointError> {
        let bad = |off: u64, why: String| CheckpointError::corrupt(path, off, why);
        if self.head.len() < self.head_len || self.tail.len() < 4 {
            return Err(bad(
                self.fed,
                format!("file too short ({} bytes)", self.fed),
            ));
        }
        check_magic(path, &self.head, CKPT_MAGIC)?;
        let lsn = le_u64(&self.head, 12);
        if lsn != self.expect_lsn {
            return Err(bad(
                12,
                format!(
                    "holds LSN {lsn} but the control file says {}",
                    self.expect_lsn
                ),
            ));
        }
        let body_len = le_u64(&self.head, self.head_len - 8);
        if (self.head_len as u64)
            .checked_add(body_len)
            .and_then(|n| n.checked_add(4))
            != Some(self.fed)
        {
            return Err(bad(
                self.head_len as u64 - 8,
                format!(
                    "body length {body_len} does not match file length {}",
                    self.fed
                ),
            ));
        }
        let stored = le_u32(&self.tail, 0);
        if stored != self.crc {
            return Err(bad(
                self.fed - 4,
                format!(
                    "CRC32C mismatch: stored {stored:#010x}, computed {:#010x}",
                    self.crc
                ),
            ));
        }
        let gtid = &self.head[CKPT_FIXED_HEAD as usize..self.head_len - 8];
        match GtidState::decode(gtid) {
            Ok((state, used)) if used == gtid.len() => Ok(state),
            Ok(_) => Err(bad(CKPT_FIXED_HEAD, "GTID state length mismatch".into())),
            Err(e) => Err(bad(CKPT_FIXED_HEAD + e.offset as u64, e.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use onelog_binlog::Gtid;
    use onelog_log::fs::SYNC_STEP;
    use onelog_log::SimFs;
    use std::sync::Arc;

    fn dir() -> PathBuf {
        PathBuf::from("/data/checkpoints")
    }

    fn state(n: u64) -> GtidState {
        GtidState::from_entries([
            Gtid::new(0, 1, n),
            Gtid::new(0, 2, n + 1),
            Gtid::new(5, 1, 3 * n),
        ])
    }

    fn names(fs: &SimFs) -> Vec<String> {
        let mut v = fs.list_dir(&dir()).unwrap();
        v.sort();
        v
    }

    #[test]
    fn written_checkpoint_loads_back_identically() {
        let fs = SimFs::new();
        assert_eq!(load_checkpoint(fs.as_ref(), &dir()).unwrap(), None);
        let body: Vec<u8> = (0..10_000u32).map(|i| (i * 7) as u8).collect();
        let path = write_checkpoint(fs.as_ref(), &dir(), 0x1234, &state(9), &body).unwrap();
        assert_eq!(path, dir().join("checkpoint-0000000000001234.ckpt"));
        let got = load_checkpoint(fs.as_ref(), &dir()).unwrap().unwrap();
        assert_eq!(
            got,
            LoadedCheckpoint {
                lsn: 0x1234,
                gtid_state: state(9),
                body,
                path
            }
        );
    }

    fn file_bytes(fs: &SimFs, path: &Path) -> Vec<u8> {
        let f = fs.open(path, false).unwrap();
        let mut b = vec![0; f.len().unwrap() as usize];
        assert_eq!(f.read_at(&mut b, 0).unwrap(), b.len());
        b
    }

    #[test]
    fn a_streamed_body_writes_the_same_file_and_its_failure_keeps_the_old_one() {
        let body: Vec<u8> = (0..10_000u32).map(|i| (i * 13) as u8).collect();
        let whole = SimFs::new();
        let p1 = write_checkpoint(whole.as_ref(), &dir(), 77, &state(2), &body).unwrap();
        let parts = SimFs::new();
        let mut chunks = |sink: &mut PartSink| body.chunks(999).try_for_each(sink);
        let p2 = write_checkpoint_streamed(
            parts.as_ref(),
            &dir(),
            77,
            &state(2),
            &mut chunks,
            &mut |remove| remove(),
        )
        .unwrap();
        assert_eq!(file_bytes(&whole, &p1), file_bytes(&parts, &p2));
        assert_eq!(
            load_checkpoint(parts.as_ref(), &dir())
                .unwrap()
                .unwrap()
                .body,
            body
        );
        let mut failing = |sink: &mut PartSink| {
            sink(b"a part")?;
            Err(CheckpointError::corrupt(&dir(), 0, "the encoder failed"))
        };
        let r = write_checkpoint_streamed(
            parts.as_ref(),
            &dir(),
            88,
            &state(3),
            &mut failing,
            &mut |remove| remove(),
        );
        assert!(r.unwrap_err().to_string().contains("the encoder failed"));
        assert_eq!(
            names(&parts),
            vec!["checkpoint-000000000000004d.ckpt", "control"]
        );
        assert_eq!(
            load_checkpoint(parts.as_ref(), &dir())
                .unwrap()
                .unwrap()
                .lsn,
            77
        );
    }

    #[test]
    fn empty_state_and_body_round_trip() {
        let fs = SimFs::new();
        write_checkpoint(fs.as_ref(), &dir(), 0, &GtidState::new(), &[]).unwrap();
        let got = load_checkpoint(fs.as_ref(), &dir()).unwrap().unwrap();
        assert_eq!(
            (got.lsn, got.gtid_state, got.body),
            (0, GtidState::new(), vec![])
        );
    }

    #[test]
    fn new_checkpoint_replaces_and_removes_old_ones() {
        let fs = SimFs::new();
        for lsn in [100u64, 200, 300] {
            write_checkpoint(fs.as_ref(), &dir(), lsn, &state(lsn), &lsn.to_le_bytes()).unwrap();
        }
        assert_eq!(
            names(&fs),
            vec![checkpoint_file_name(300), CONTROL_FILE.to_string()]
        );
        let got = load_checkpoint(fs.as_ref(), &dir()).unwrap().unwrap();
        assert_eq!((got.lsn, got.body), (300, 300u64.to_le_bytes().to_vec()));
    }

    #[test]
    fn rewriting_the_current_lsn_keeps_a_valid_checkpoint() {
        let fs = SimFs::new();
        write_checkpoint(fs.as_ref(), &dir(), 100, &state(1), b"one").unwrap();
        write_checkpoint(fs.as_ref(), &dir(), 100, &state(1), b"one again").unwrap();
        let got = load_checkpoint(fs.as_ref(), &dir()).unwrap().unwrap();
        assert_eq!(got.body, b"one again");
        assert_eq!(
            names(&fs),
            vec![checkpoint_file_name(100), CONTROL_FILE.to_string()]
        );
    }

    /// Crash at `point` while writing checkpoint 200 over checkpoint 100; returns what loads
    /// after a power loss.
    fn crash_during_second_checkpoint(
        point: &'static str,
        seed: u64,
    ) -> (LoadedCheckpoint, Arc<SimFs>) {
        let fs = SimFs::new();
        write_checkpoint(fs.as_ref(), &dir(), 100, &state(1), b"old body").unwrap();
        fs.arm_crash_point(point, 1);
        let err =
            write_checkpoint(fs.as_ref(), &dir(), 200, &state(2), b"new body, longer").unwrap_err();
        assert!(matches!(err, CheckpointError::Io { .. }), "{err}");
        assert!(fs.crashed());
        let fs = fs.reboot(seed, true);
        let got = load_checkpoint(fs.as_ref(), &dir()).unwrap().unwrap();
        (got, fs)
    }

    #[test]
    fn crash_before_control_switch_loads_old_checkpoint() {
        for point in ["checkpoint.after_write", "checkpoint.before_control_switch"] {
            for seed in 0..8 {
                let (got, fs) = crash_during_second_checkpoint(point, seed);
                assert_eq!(
                    (got.lsn, got.gtid_state, got.body),
                    (100, state(1), b"old body".to_vec())
                );
                // The interrupted attempt's files are cleaned up at load.
                assert_eq!(
                    names(&fs),
                    vec![checkpoint_file_name(100), CONTROL_FILE.to_string()]
                );
            }
        }
    }

    #[test]
    fn crash_after_control_switch_loads_new_checkpoint() {
        for seed in 0..8 {
            let (got, fs) = crash_during_second_checkpoint("checkpoint.after_control_switch", seed);
            assert_eq!(
                (got.lsn, got.gtid_state, got.body),
                (200, state(2), b"new body, longer".to_vec())
            );
            assert_eq!(
                names(&fs),
                vec![checkpoint_file_name(200), CONTROL_FILE.to_string()]
            );
        }
    }

    #[test]
    fn crash_during_first_checkpoint_leaves_no_checkpoint() {
        for point in ["checkpoint.after_write", "checkpoint.before_control_switch"] {
            let fs = SimFs::new();
            fs.arm_crash_point(point, 1);
            write_checkpoint(fs.as_ref(), &dir(), 100, &state(1), b"body").unwrap_err();
            let fs = fs.reboot(3, true);
            assert_eq!(load_checkpoint(fs.as_ref(), &dir()).unwrap(), None);
            // A later checkpoint succeeds and removes the orphan.
            write_checkpoint(fs.as_ref(), &dir(), 150, &state(1), b"body").unwrap();
            assert_eq!(
                names(&fs),
                vec![checkpoint_file_name(150), CONTROL_FILE.to_string()]
            );
        }
    }

    #[test]
    fn checkpoint_older_than_current_is_refused() {
        let fs = SimFs::new();
        write_checkpoint(fs.as_ref(), &dir(), 200, &state(2), b"new").unwrap();
        let err = write_checkpoint(fs.as_ref(), &dir(), 100, &state(1), b"old").unwrap_err();
        assert!(
            matches!(
                err,
                CheckpointError::Backwards {
                    current: 200,
                    requested: 100,
                    ..
                }
            ),
            "{err}"
        );
        assert_eq!(err.path(), dir().join(CONTROL_FILE));
        let got = load_checkpoint(fs.as_ref(), &dir()).unwrap().unwrap();
        assert_eq!((got.lsn, got.body), (200, b"new".to_vec()));
    }

    #[test]
    fn read_current_checkpoint_leaves_files_alone() {
        let fs = SimFs::new();
        write_checkpoint(fs.as_ref(), &dir(), 100, &state(1), b"body").unwrap();
        fs.open(&dir().join("control.tmp"), true).unwrap();
        let got = read_current_checkpoint(fs.as_ref(), &dir())
            .unwrap()
            .unwrap();
        assert_eq!((got.lsn, got.body), (100, b"body".to_vec()));
        assert!(fs.exists(&dir().join("control.tmp")));
    }

    #[test]
    fn stray_tmp_files_are_removed_at_load() {
        let fs = SimFs::new();
        write_checkpoint(fs.as_ref(), &dir(), 100, &state(1), b"body").unwrap();
        for stray in [
            "control.tmp",
            "checkpoint-00000000000000c8.ckpt.tmp",
            "unrelated.tmp",
        ] {
            fs.open(&dir().join(stray), true)
                .unwrap()
                .write_all_at(b"junk", 0)
                .unwrap();
        }
        load_checkpoint(fs.as_ref(), &dir()).unwrap().unwrap();
        // Our leftovers are gone; a file this module did not write is left alone.
        assert_eq!(
            names(&fs),
            vec![
                checkpoint_file_name(100),
                CONTROL_FILE.to_string(),
                "unrelated.tmp".to_string()
            ]
        );
    }

    fn corrupt_byte(fs: &SimFs, path: &Path, offset: u64) {
        let f = fs.open(path, false).unwrap();
        let mut b = [0u8; 1];
        f.read_at(&mut b, offset).unwrap();
        f.write_all_at(&[b[0] ^ 0x40], offset).unwrap();
    }

    #[test]
    fn a_checkpoint_file_read_again_part_by_part_is_checked_against_its_crc() {
        let fs = SimFs::new();
        fs.create_dir_all(&dir()).unwrap();
        let body: Vec<u8> = (0..5000u32).map(|i| (i % 251) as u8).collect();
        write_checkpoint(fs.as_ref(), &dir(), 9, &state(2), &body).unwrap();
        let ck = CheckpointFile::open_current(fs.as_ref(), &dir())
            .unwrap()
            .unwrap();
        assert_eq!((ck.lsn, ck.body_len), (9, 5000));
        let read_all = |ck: &CheckpointFile| {
            let mut reader = ck.body_reader();
            let mut out = Vec::new();
            while reader.position() < ck.body_len {
                let mut part = vec![0u8; 1000];
                reader.read(&mut part).unwrap();
                out.extend_from_slice(&part);
            }
            (out, reader.finish())
        };
        let (got, ok) = read_all(&ck);
        assert_eq!(got, body);
        ok.unwrap();
        // Past its end is an error, not a short read.
        assert!(ck.read_body(4990, &mut [0u8; 20]).is_err());
        // The file changes after the check: the second read is refused.
        let name = checkpoint_file_name(9);
        corrupt_byte(&fs, &dir().join(&name), 2000);
        let (_, changed) = read_all(&ck);
        let err = changed.unwrap_err().to_string();
        assert!(err.contains("second read") && err.contains(&name), "{err}");
        // Opened again, the damage is found at once.
        assert!(CheckpointFile::open_current(fs.as_ref(), &dir()).is_err());
    }

    #[test]
    fn corrupt_body_is_an_error_naming_file_and_offset() {
        let fs = SimFs::new();
        let path = write_checkpoint(fs.as_ref(), &dir(), 100, &state(1), &[7u8; 1000]).unwrap();
        let body_at = CKPT_OVERHEAD - 4 + 4 + 16 * 3;
        corrupt_byte(&fs, &path, body_at + 500);
        let err = load_checkpoint(fs.as_ref(), &dir()).unwrap_err();
        let crc_at = body_at + 1000;
        match &err {
            CheckpointError::Corrupt {
                path: p,
                offset,
                reason,
            } => {
                assert_eq!((p, *offset), (&path, crc_at));
                assert!(reason.contains("CRC32C"), "{reason}");
            }
            other => panic!("unexpected {other}"),
        }
        let msg = err.to_string();
        assert!(
            msg.contains("checkpoint-0000000000000064.ckpt")
                && msg.contains(&format!("offset {crc_at}")),
            "{msg}"
        );
        // Nothing was removed: the operator still has the evidence.
        assert!(fs.exists(&path));
    }

    #[test]
    fn corrupt_control_file_is_an_error_naming_it() {
        let fs = SimFs::new();
        write_checkpoint(fs.as_ref(), &dir(), 100, &state(1), b"body").unwrap();
        corrupt_byte(&fs, &dir().join(CONTROL_FILE), 14);
        let err = load_checkpoint(fs.as_ref(), &dir()).unwrap_err();
        assert_eq!(err.path(), dir().join(CONTROL_FILE));
        assert!(err.to_string().contains("CRC32C"), "{err}");
    }

    #[test]
    fn missing_checkpoint_named_by_control_is_an_error() {
        let fs = SimFs::new();
        let path = write_checkpoint(fs.as_ref(), &dir(), 100, &state(1), b"body").unwrap();
        fs.remove_file(&path).unwrap();
        let err = load_checkpoint(fs.as_ref(), &dir()).unwrap_err();
        assert_eq!((err.path(), err.offset()), (path.as_path(), 0));
        assert!(err.to_string().contains("missing"), "{err}");
    }

    #[test]
    fn every_truncation_and_bit_flip_is_detected_without_panic() {
        let fs = SimFs::new();
        let path =
            write_checkpoint(fs.as_ref(), &dir(), 100, &state(1), b"some body bytes").unwrap();
        let f = fs.open(&path, false).unwrap();
        let len = f.len().unwrap();
        let mut orig = vec![0u8; len as usize];
        f.read_at(&mut orig, 0).unwrap();
        for cut in 0..len {
            f.set_len(cut).unwrap();
            let err = load_checkpoint(fs.as_ref(), &dir()).unwrap_err();
            assert_eq!(err.path(), path, "cut at {cut}: {err}");
            f.write_all_at(&orig, 0).unwrap();
        }
        for at in 0..len {
            corrupt_byte(&fs, &path, at);
            let err = load_checkpoint(fs.as_ref(), &dir()).unwrap_err();
            assert_eq!(err.path(), path, "flip at {at}: {err}");
            corrupt_byte(&fs, &path, at);
        }
        load_checkpoint(fs.as_ref(), &dir()).unwrap().unwrap();
    }

    #[test]
    fn a_failed_checkpoint_write_removes_its_temporary_file_and_keeps_the_previous_one() {
        let fs = SimFs::new();
        write_checkpoint(fs.as_ref(), &dir(), 10, &GtidState::new(), b"first").unwrap();
        // Room for the temporary file's first bytes, not for the whole body.
        let body = vec![7u8; 64 << 10];
        let used: u64 = fs
            .list_dir(&dir())
            .unwrap()
            .iter()
            .map(|n| fs.read_file(&dir().join(n)).unwrap().len() as u64)
            .sum();
        fs.set_space_limit(Some(used + 4096));
        let err = write_checkpoint(fs.as_ref(), &dir(), 20, &GtidState::new(), &body).unwrap_err();
        assert!(err.to_string().contains("write"), "{err}");
        let names = fs.list_dir(&dir()).unwrap();
        assert!(
            !names.iter().any(|n| n.ends_with(".tmp")),
            "temporary files left: {names:?}"
        );
        let loaded = load_checkpoint(fs.as_ref(), &dir()).unwrap().unwrap();
        assert_eq!((loaded.lsn, loaded.body.as_slice()), (10, &b"first"[..]));
        fs.set_space_limit(None);
        write_checkpoint(fs.as_ref(), &dir(), 20, &GtidState::new(), &body).unwrap();
    }

    #[test]
    fn a_big_checkpoint_file_is_synced_in_steps_as_it_is_written() {
        let fs = SimFs::new();
        write_checkpoint(fs.as_ref(), &dir(), 10, &GtidState::new(), b"first").unwrap();
        let before = fs.counters().fsyncs;
        write_checkpoint(fs.as_ref(), &dir(), 20, &GtidState::new(), b"second").unwrap();
        let small = fs.counters().fsyncs - before;
        // 2.5 steps of body in half-step parts: a sync after the 2nd and the 4th part.
        let part = vec![3u8; (SYNC_STEP / 2) as usize];
        let parts: Vec<&[u8]> = vec![&part; 5];
        let before = fs.counters().fsyncs;
        write_checkpoint_then(
            fs.as_ref(),
            &dir(),
            30,
            &GtidState::new(),
            &parts,
            &mut |r| r(),
        )
        .unwrap();
        assert_eq!(fs.counters().fsyncs - before, small + 2);
        let loaded = load_checkpoint(fs.as_ref(), &dir()).unwrap().unwrap();
        assert_eq!((loaded.lsn, loaded.body.len()), (30, 5 * part.len()));
    }

    #[test]
    fn stream_check_accepts_the_file_in_any_chunking_and_finds_damage() {
        let fs = SimFs::new();
        fs.create_dir_all(&dir()).unwrap();
        write_checkpoint(
            fs.as_ref(),
            &dir(),
            77,
            &state(3),
            b"body bytes of the store",
        )
        .unwrap();
        let path = dir().join(checkpoint_file_name(77));
        let f = fs.open(&path, false).unwrap();
        let mut bytes = vec![0u8; f.len().unwrap() as usize];
        read_exact_at(f.as_ref(), &path, &mut bytes, 0).unwrap();
        for chunk in [1, 3, 4, 5, 7, 64, bytes.len()] {
            let mut c = CheckpointStreamCheck::new(77);
            bytes.chunks(chunk).for_each(|b| c.feed(b));
            assert_eq!(c.finish(&path).unwrap(), state(3), "chunk {chunk}");
        }
        let mut bad = bytes.clone();
        bad[60] ^= 1;
        let mut c = CheckpointStreamCheck::new(77);
        c.feed(&bad);
        assert!(c.finish(&path).unwrap_err().to_string().contains("CRC32C"));
        let mut c = CheckpointStreamCheck::new(78);
        c.feed(&bytes);
        assert!(c
            .finish(&path)
            .unwrap_err()
            .to_string()
            .contains("control file says 78"));
        let mut c = CheckpointStreamCheck::new(77);
        c.feed(&bytes[..bytes.len() - 1]);
        assert!(c.finish(&path).is_err());
    }
}
