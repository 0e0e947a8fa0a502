//! `onelog restore`: a data directory from a backup or a chain of backups, optionally stopped
//! at a GTID or a time (docs/BACKUP.md; DESIGN.md §7a).
//!
//! Owns [`RestoreOptions`], [`Stop`] and [`run`]. Steps:
//! 1. every backup of the chain is verified ([`verify_backup`]); the first must be full, each
//!    next one incremental, starting at the previous one's end LSN and GTID state;
//! 2. the target (absent or empty) gets the checkpoint, rewritten by the engine's own writer
//!    (control file included), and the segments: each piece's records placed at their offsets,
//!    each file extended to the size its header names (sparse zeros, as preallocated);
//! 3. a stop point cuts the log after the record of `--stop-gtid`, or before the first record
//!    whose GTID event's time is at or after `--stop-datetime` (mariadb-binlog's rule); the
//!    rest of that segment is zeroed and later segments are not written;
//! 4. the restored directory gets `gtid_slave_pos` = its `gtid_binlog_pos` at the end. Fast
//!    path: the checkpoint is written with that position in its body
//!    (`Root::checkpoint_with_slave_pos`: the tables are copied a part at a time, not decoded,
//!    so a restore holds a megabyte of the checkpoint, not the whole), and the first
//!    server start replays the log after it as any start does; that replay moves a domain's
//!    position only for replicated records, so this path is taken only when no domain has a
//!    replicated record after the checkpoint followed by a record of the server's own (a
//!    replica's local write). Otherwise, and without a checkpoint, the engine opens the
//!    directory (recovery: checkpoint + replay), sets the position (which writes a checkpoint)
//!    and shuts down; with `--table-store=paged` it opens it with the paged store within its
//!    budget (converting the checkpoint into a base a part at a time), which leaves a
//!    directory only a paged server opens. On the fast path the directory stays in the
//!    in-memory store's format, which a paged server's first start converts.
//!
//! Invariants: nothing is written before every backup verified; the restored directory's
//! `gtid_slave_pos` after its first start equals its `gtid_binlog_pos` (either path); a stop point before the full
//! backup's checkpoint (whose state already includes later transactions) is refused, never
//! approximated; files are synced before the engine opens them.

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use onelog_binlog::{Gtid, GtidPos};
use onelog_engine::apply::REPLICATED_AUX;
use onelog_engine::checkpoint::{
    write_checkpoint_streamed, CheckpointError, CheckpointFile, PartSink,
};
use onelog_engine::store::Root;
use onelog_engine::{Engine, EngineOptions, TableStore};
use onelog_log::inspect::SegmentInspector;
use onelog_log::segment::file_name;
use onelog_log::{Lsn, RecordKind, StdFs};

use super::check::{piece_header, verify_backup};
use super::manifest::Manifest;

/// Where a restore stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// After the record of this GTID.
    Gtid(Gtid),
    /// Before the first record whose GTID event time (seconds since the epoch) is at or after.
    Time(i64),
}

/// Options of `onelog restore`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RestoreOptions {
    pub target_dir: PathBuf,
    pub stop: Option<Stop>,
    /// The full backup, then its incrementals in order.
    pub backups: Vec<PathBuf>,
    /// `--table-store=paged`: the memory budget of the paged table store that recovery opens
    /// the restored directory with when it runs one (step 4); None: the in-memory store.
    pub paged_memory: Option<u64>,
}

/// What a restore produced.
#[derive(Debug)]
pub struct Restored {
    pub end_lsn: Lsn,
    pub gtid_pos: GtidPos,
}

/// Step 1: verifies the chain; returns the manifests in order.
fn verify_chain(backups: &[PathBuf]) -> Result<Vec<Manifest>, String> {
    let mut out: Vec<Manifest> = Vec::new();
    for dir in backups {
        let m = verify_backup(dir)?;
        match out.last() {
            None if !m.full => {
                return Err(format!(
                    "{}: an incremental backup; restore starts from a full backup (give the full one first, then its incrementals in order)",
                    dir.display()
                ))
            }
            Some(_) if m.full => {
                return Err(format!(
                    "{}: a full backup in the middle of the chain",
                    dir.display()
                ))
            }
            Some(prev)
                if prev.end_lsn != m.start_lsn
                    || prev.end_state.entries() != m.start_state.entries() =>
            {
                return Err(format!(
                    "{}: does not continue the previous backup (it starts at LSN {} / {}, the previous one ends at LSN {} / {})",
                    dir.display(),
                    m.start_lsn,
                    m.start_state.pos(),
                    prev.end_lsn,
                    prev.end_state.pos()
                ))
            }
            _ => {}
        }
        out.push(m);
    }
    if out.is_empty() {
        return Err("no backup given".into());
    }
    Ok(out)
}

fn io_err<'a>(what: &'a str, p: &'a Path) -> impl FnOnce(std::io::Error) -> String + 'a {
    move |e| format!("{what} {}: {e}", p.display())
}

/// The target directory, created (it must not exist or be empty).
fn prepare_target(dir: &Path) -> Result<(), String> {
    if let Ok(mut rd) = fs::read_dir(dir) {
        if rd.next().is_some() {
            return Err(format!(
                "the target directory {} is not empty",
                dir.display()
            ));
        }
    }
    for sub in ["", "checkpoints", "binlog"] {
        let p = dir.join(sub);
        fs::create_dir_all(&p).map_err(io_err("cannot create", &p))?;
    }
    Ok(())
}

/// One segment being written: its file, header length, start LSN and preallocated size.
struct OutSegment {
    file: File,
    path: PathBuf,
    header: Vec<u8>,
    header_len: u64,
    start_lsn: Lsn,
    file_len: Option<u64>,
}

/// Step 2's log part: writes every piece of the chain into `binlog/`.
fn write_segments(
    chain: &[(PathBuf, Manifest)],
    target: &Path,
) -> Result<BTreeMap<u64, OutSegment>, String> {
    let mut segs: BTreeMap<u64, OutSegment> = BTreeMap::new();
    let mut buf = vec![0u8; 4 << 20];
    for (dir, m) in chain {
        for f in m.files.iter().filter(|f| f.piece.is_some()) {
            let piece = f.piece.unwrap_or_else(|| unreachable!("filtered"));
            let h = piece_header(dir, f)?;
            let src_path = dir.join(&f.path);
            let src = File::open(&src_path).map_err(io_err("cannot open", &src_path))?;
            let mut head = vec![0u8; h.header_len as usize];
            src.read_exact_at(&mut head, 0)
                .map_err(io_err("cannot read", &src_path))?;
            if let Some(seg) = segs.get(&piece.number) {
                if seg.header != head {
                    return Err(format!(
                        "{}: its segment header differs from the base backup's (a different log: was RESET MASTER run between the backups?)",
                        src_path.display()
                    ));
                }
            } else {
                let path = target.join("binlog").join(file_name(piece.number));
                let file = OpenOptions::new()
                    .write(true)
                    .read(true)
                    .create_new(true)
                    .open(&path)
                    .map_err(io_err("cannot create", &path))?;
                file.write_all_at(&head, 0)
                    .map_err(io_err("cannot write", &path))?;
                segs.insert(
                    piece.number,
                    OutSegment {
                        file,
                        path,
                        header: head,
                        header_len: h.header_len,
                        start_lsn: h.start_lsn,
                        file_len: h.file_len,
                    },
                );
            }
            let seg = &segs[&piece.number];
            let mut done = 0u64;
            let len = piece.to - piece.from;
            while done < len {
                let n = ((len - done) as usize).min(buf.len());
                src.read_exact_at(&mut buf[..n], h.header_len + done)
                    .map_err(io_err("cannot read", &src_path))?;
                let at = seg.header_len + (piece.from - seg.start_lsn) + done;
                seg.file
                    .write_all_at(&buf[..n], at)
                    .map_err(io_err("cannot write", &seg.path))?;
                done += n as u64;
            }
        }
    }
    Ok(segs)
}

/// What the log after the checkpoint holds, up to the restore's end.
struct LogAfter {
    /// Where the restored log ends: the stop point, or the backup's end.
    end: Lsn,
    /// The GTID position at the end (`gtid_binlog_pos` of the restored directory).
    pos: GtidPos,
    /// Some domain's last record after the checkpoint is the server's own but an earlier one
    /// was replicated: recovery would move that domain's `gtid_slave_pos` to the replicated
    /// one, so the position cannot be given by the checkpoint alone.
    mixed: bool,
}

/// Steps 3 and 4's walk of the restored segments up to the backup's `end`, in one pass: where
/// `stop` cuts the log (None: at `end`) and what the log after the checkpoint holds up to there.
fn walk_log(
    segs: &BTreeMap<u64, OutSegment>,
    stop: Option<Stop>,
    ckpt_lsn: Lsn,
    end: Lsn,
) -> Result<LogAfter, String> {
    let mut state = None;
    // Per domain: (a replicated record after the checkpoint, the last one was replicated).
    let mut domains: BTreeMap<u32, (bool, bool)> = BTreeMap::new();
    // The end of the last record that is not a SyncMark: a time stop cuts there, so no mark
    // is left dangling at the end of the log (recovery would drop it as an idle mark).
    let mut kept_end = segs.values().next().map_or(0, |s| s.start_lsn);
    let mut cut = None;
    'segments: for seg in segs.values() {
        let mut insp = SegmentInspector::open(&seg.path).map_err(|e| e.to_string())?;
        let st = state.get_or_insert_with(|| insp.header().state.clone());
        while insp.lsn() < end {
            let Some(rec) = insp.next_record().map_err(|e| e.to_string())? else {
                break;
            };
            let Some(gtid) = rec.gtid else {
                if rec.kind != RecordKind::SyncMark {
                    kept_end = rec.end_lsn();
                }
                continue;
            };
            let ts = rec
                .events
                .get(..4)
                .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
            let at = match stop {
                Some(Stop::Gtid(g)) if g == gtid => Some(rec.end_lsn()),
                Some(Stop::Time(t)) if i64::from(ts) >= t => Some(kept_end.max(ckpt_lsn)),
                _ => None,
            };
            if at.is_some() && rec.lsn < ckpt_lsn {
                return Err(format!(
                    "the stop point is before the full backup's checkpoint (LSN {ckpt_lsn}), \
                     which already holds later transactions: restore from an older full backup"
                ));
            }
            // A time stop keeps nothing of the record it stops at; a GTID stop keeps it.
            if !matches!(stop, Some(Stop::Time(_))) || at.is_none() {
                st.record(gtid);
                if rec.lsn >= ckpt_lsn {
                    let replicated = rec.aux.starts_with(REPLICATED_AUX);
                    let d = domains.entry(gtid.domain_id).or_default();
                    d.0 |= replicated;
                    d.1 = replicated;
                }
                kept_end = rec.end_lsn();
            }
            if at.is_some() {
                cut = at;
                break 'segments;
            }
        }
    }
    let end = match (stop, cut) {
        (_, Some(at)) => at,
        (Some(Stop::Gtid(g)), None) => {
            return Err(format!(
                "GTID {g} is not in the backup's log after its checkpoint (LSN {ckpt_lsn}..{end})"
            ))
        }
        // No stop, or no record at or after the time: everything is before it.
        _ => end,
    };
    Ok(LogAfter {
        end,
        pos: state.unwrap_or_default().pos(),
        mixed: domains.values().any(|&(any, last)| any && !last),
    })
}

/// Step 3's cut and the final sizes: zeros after `end` in its segment, later segments removed.
fn finish_segments(segs: BTreeMap<u64, OutSegment>, end: Lsn) -> Result<(), String> {
    let mut first = true;
    for seg in segs.into_values() {
        if !first && seg.start_lsn > end {
            drop(seg.file);
            fs::remove_file(&seg.path).map_err(io_err("cannot remove", &seg.path))?;
            continue;
        }
        first = false;
        let data_end = seg.header_len + end.saturating_sub(seg.start_lsn);
        let len = seg
            .file
            .metadata()
            .map_err(io_err("cannot stat", &seg.path))?
            .len();
        if data_end < len {
            seg.file
                .set_len(data_end)
                .map_err(io_err("cannot truncate", &seg.path))?;
        }
        if let Some(l) = seg.file_len {
            seg.file
                .set_len(l)
                .map_err(io_err("cannot extend", &seg.path))?;
        }
        seg.file
            .sync_all()
            .map_err(io_err("cannot sync", &seg.path))?;
    }
    Ok(())
}

/// Bytes of a checkpoint body restore holds at a time (more only for a catalog larger than
/// this).
const BODY_PART: u64 = 1 << 20;

/// Step 4, fast: the checkpoint rewritten with `gtid_slave_pos` = `pos`, its tables copied as
/// they are, a part at a time. Recovery at the first start replays the log after it and moves
/// no domain's position ([`LogAfter::mixed`] is false).
fn write_checkpoint_at_pos(ck: &CheckpointFile, ckdir: &Path, pos: &GtidPos) -> Result<(), String> {
    // The part before the tables (catalog, slave position), from a prefix of the body grown
    // until it holds that part.
    let mut prefix_len = BODY_PART.min(ck.body_len);
    let (head, slave, tables_at) = loop {
        let mut prefix = vec![0u8; prefix_len as usize];
        ck.read_body(0, &mut prefix).map_err(|e| e.to_string())?;
        match Root::checkpoint_with_slave_pos(&prefix, pos) {
            Ok([head, slave, rest]) => {
                break (
                    head.into_owned(),
                    slave.into_owned(),
                    prefix_len - rest.len() as u64,
                )
            }
            Err(e) if e.truncated && prefix_len < ck.body_len => {
                prefix_len = prefix_len.saturating_mul(2).min(ck.body_len)
            }
            Err(e) => return Err(format!("{}: {e}", ck.path.display())),
        }
    };
    write_checkpoint_copy(ck, ckdir, &[&head, &slave], tables_at)
}

/// Writes the checkpoint `ck` into `ckdir` (control file included) with `parts` in place of
/// its body's bytes before `from`, copying the rest a part at a time. The whole body is read
/// again for it and its CRC checked before the control file names the copy, so a backup that
/// changed since it was verified is refused, never copied under a new, valid CRC.
fn write_checkpoint_copy(
    ck: &CheckpointFile,
    ckdir: &Path,
    parts: &[&[u8]],
    from: u64,
) -> Result<(), String> {
    let mut body = |sink: &mut PartSink| -> Result<(), CheckpointError> {
        for p in parts {
            sink(p)?;
        }
        let mut buf = vec![0u8; BODY_PART.min(ck.body_len) as usize];
        let mut reader = ck.body_reader();
        while reader.position() < ck.body_len {
            let at = reader.position();
            let n = (ck.body_len - at).min(BODY_PART) as usize;
            reader.read(&mut buf[..n])?;
            // Bytes before `from` are replaced by `parts`.
            let skip = from.saturating_sub(at).min(n as u64) as usize;
            sink(&buf[skip..n])?;
        }
        reader.finish()
    };
    write_checkpoint_streamed(
        &StdFs,
        ckdir,
        ck.lsn,
        &ck.gtid_state,
        &mut body,
        &mut |remove| remove(),
    )
    .map_err(|e| e.to_string())?;
    Ok(())
}

/// Step 4, by recovery: opens the engine on the directory (with the paged table store
/// within `paged_memory` when given: it converts the checkpoint into its base a part at a
/// time, so the tables are never all in memory), sets `gtid_slave_pos` to `gtid_binlog_pos`
/// (a checkpoint) and shuts down.
fn recover_and_set_pos(dir: &Path, end: Lsn, paged_memory: Option<u64>) -> Result<GtidPos, String> {
    let mut eopts = EngineOptions::new(dir);
    if let Some(memory_bytes) = paged_memory {
        eopts.table_store = TableStore::Paged {
            dir: None,
            memory_bytes,
        };
    }
    eopts.background_checkpoints = false;
    // Restore writes no record: the segment the log prepares in the background is as small as
    // allowed (the server's first open deletes it and prepares its own size).
    eopts.log.segment_size = 16 << 10;
    let (engine, report) = Engine::open(Arc::new(StdFs), eopts)
        .map_err(|e| format!("recovery of the restored directory failed: {e}"))?;
    let pos = report.gtid_binlog_pos();
    if report.log.end_lsn != end {
        return Err(format!(
            "recovery of the restored directory ended at LSN {}, expected {end}",
            report.log.end_lsn
        ));
    }
    engine
        .set_gtid_slave_pos(pos.clone())
        .map_err(|e| format!("setting gtid_slave_pos: {e}"))?;
    engine
        .shutdown()
        .map_err(|e| format!("closing the restored directory: {e}"))?;
    // The process exits next: freeing every table row by row would only cost time.
    std::mem::forget(engine);
    Ok(pos)
}

/// `onelog restore` (module docs).
pub fn run(opts: &RestoreOptions) -> Result<Restored, String> {
    let manifests = verify_chain(&opts.backups)?;
    let chain: Vec<(PathBuf, Manifest)> = opts.backups.iter().cloned().zip(manifests).collect();
    let (full_dir, full) = &chain[0];
    let end = chain.last().map_or(full.end_lsn, |(_, m)| m.end_lsn);
    prepare_target(&opts.target_dir)?;
    // Without a checkpoint recovery replays the whole log, from LSN 0.
    let ck = match &full.checkpoint {
        Some((lsn, file)) => Some(
            CheckpointFile::open(&StdFs, &full_dir.join(file), *lsn).map_err(|e| e.to_string())?,
        ),
        None => None,
    };
    let ckpt_lsn = ck.as_ref().map_or(0, |c| c.lsn);
    let segs = write_segments(&chain, &opts.target_dir)?;
    let after = walk_log(&segs, opts.stop, ckpt_lsn, end)?;
    let end = after.end;
    finish_segments(segs, end)?;
    File::open(opts.target_dir.join("binlog"))
        .and_then(|d| d.sync_all())
        .map_err(|e| format!("cannot sync {}: {e}", opts.target_dir.display()))?;
    let ckdir = opts.target_dir.join("checkpoints");
    let pos = match ck {
        Some(ck) if !after.mixed => {
            write_checkpoint_at_pos(&ck, &ckdir, &after.pos)?;
            after.pos
        }
        ck => {
            if let Some(ck) = ck {
                write_checkpoint_copy(&ck, &ckdir, &[], 0)?;
            }
            recover_and_set_pos(&opts.target_dir, end, opts.paged_memory)?
        }
    };
    let _ = std::io::stderr().flush();
    Ok(Restored {
        end_lsn: end,
        gtid_pos: pos,
    })
}
