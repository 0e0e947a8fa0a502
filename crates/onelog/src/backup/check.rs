//! `onelog check DIR`: offline verification of a data directory or a backup (docs/BACKUP.md).
//!
//! Owns [`verify_backup`] (also restore's first step) and [`check_datadir`]. A backup: the
//! manifest's CRC, every file's size and CRC32C, the checkpoint file's own checks
//! ([`CheckpointStreamCheck`]), every log piece's frames and GTID continuity
//! ([`RecordVerifier`]) from the segment header's state (or the manifest's start state), the
//! pieces continuing each other and ending at the manifest's end LSN and GTID state. A data
//! directory: the current checkpoint (read-only: nothing is removed, so a running server's
//! directory may be checked), every segment's header and records (the log's own inspector),
//! segments contiguous in number, LSN and GTID state, and the checkpoint inside the log.
//!
//! Invariants: nothing is written; every problem is reported with the file and byte offset;
//! the exit status is 0 only when everything verified.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

use onelog_binlog::GtidState;
use onelog_engine::base_check::{check_base, BaseCheckError, BaseReport};
use onelog_engine::checkpoint::{
    read_control, read_control_any, CheckpointFile, CheckpointStreamCheck, Control, CONTROL_FILE,
};
use onelog_log::inspect::SegmentInspector;
use onelog_log::segment::{file_name, SegmentHeader};
use onelog_log::verify::{check_state_record, RecordVerifier};
use onelog_log::{Lsn, RecordKind, StdFs};

use super::manifest::{FileEntry, Manifest, MANIFEST};
use super::{human_bytes, list_segments, read_manifest};

const CHUNK: usize = 4 << 20;

/// Reads a backup file in chunks, checking its size and CRC32C against the manifest and
/// handing the bytes to `each`.
fn read_file(
    dir: &Path,
    f: &FileEntry,
    mut each: impl FnMut(u64, &[u8]) -> Result<(), String>,
) -> Result<(), String> {
    let path = dir.join(&f.path);
    let file = File::open(&path).map_err(|e| format!("{}: cannot open: {e}", path.display()))?;
    let len = file
        .metadata()
        .map_err(|e| format!("{}: cannot stat: {e}", path.display()))?
        .len();
    if len != f.bytes {
        return Err(format!(
            "{}: {len} bytes, the manifest says {} (truncated or replaced)",
            path.display(),
            f.bytes
        ));
    }
    let mut buf = vec![0u8; CHUNK.min(len as usize)];
    let mut crc = 0u32;
    let mut off = 0u64;
    while off < len {
        let n = ((len - off) as usize).min(CHUNK);
        file.read_exact_at(&mut buf[..n], off)
            .map_err(|e| format!("{}: offset {off}: read failed: {e}", path.display()))?;
        crc = crc32c::crc32c_append(crc, &buf[..n]);
        each(off, &buf[..n])?;
        off += n as u64;
    }
    if crc != f.crc {
        return Err(format!(
            "{}: CRC32C {crc:08x}, the manifest says {:08x} (damaged)",
            path.display(),
            f.crc
        ));
    }
    Ok(())
}

/// The header of a log piece of a backup.
pub fn piece_header(dir: &Path, f: &FileEntry) -> Result<SegmentHeader, String> {
    let insp = SegmentInspector::open(&dir.join(&f.path)).map_err(|e| e.to_string())?;
    Ok(insp.header().clone())
}

/// Verifies the backup in `dir` (module docs); returns its manifest.
pub fn verify_backup(dir: &Path) -> Result<Manifest, String> {
    let m = read_manifest(dir)?;
    let mut state: Option<GtidState> = (!m.full).then(|| m.start_state.clone());
    let mut lsn = m.start_lsn;
    let mut number: Option<u64> = None;
    let mut saw_checkpoint = false;
    for f in &m.files {
        let path = dir.join(&f.path);
        let Some(piece) = f.piece else {
            let Some((ck_lsn, ck_file)) = m.checkpoint.as_ref().filter(|c| c.1 == f.path) else {
                return Err(format!("{}: not named by the manifest", path.display()));
            };
            let mut check = CheckpointStreamCheck::new(*ck_lsn);
            read_file(dir, f, |_, b| {
                check.feed(b);
                Ok(())
            })?;
            check
                .finish(&dir.join(ck_file))
                .map_err(|e| e.to_string())?;
            saw_checkpoint = true;
            continue;
        };
        let h = piece_header(dir, f)?;
        let bad = |why: String| format!("{}: {why}", path.display());
        if h.number != piece.number || f.bytes != h.header_len + (piece.to - piece.from) {
            return Err(bad("the piece does not match its manifest entry".into()));
        }
        let start = match (&state, number) {
            // The first piece of a full backup starts at its segment's start.
            (None, _) => {
                if piece.from != h.start_lsn || piece.from > m.start_lsn {
                    return Err(bad("the log does not start at the checkpoint".into()));
                }
                if m.checkpoint.is_none() && (piece.from != 0 || h.number != 1) {
                    return Err(bad(
                        "without a checkpoint the log must start at segment 1, LSN 0".into(),
                    ));
                }
                h.state.clone()
            }
            (Some(s), prev) => {
                let continues = piece.from == lsn
                    && match prev {
                        Some(p) => h.number == p + 1 && h.start_lsn == lsn,
                        None => h.start_lsn <= lsn,
                    };
                if !continues {
                    return Err(bad(format!(
                        "the log does not continue: piece of segment {} from LSN {}, expected LSN {lsn}",
                        h.number, piece.from
                    )));
                }
                if prev.is_some() && h.state.entries() != s.entries() {
                    return Err(bad(
                        "the segment header's GTID state does not continue the records before it"
                            .into(),
                    ));
                }
                s.clone()
            }
        };
        let mut v = RecordVerifier::new(piece.from, piece.to, start);
        let header_len = h.header_len;
        read_file(dir, f, |off, bytes| {
            let skip = header_len.saturating_sub(off).min(bytes.len() as u64) as usize;
            v.feed(&bytes[skip..]).map_err(|e| {
                format!(
                    "{}: offset {}: {}",
                    path.display(),
                    header_len + (e.lsn - piece.from),
                    e.reason
                )
            })
        })?;
        let run = v.finish().map_err(|e| bad(e.to_string()))?;
        state = Some(run.state);
        lsn = piece.to;
        number = Some(h.number);
    }
    if m.checkpoint.is_some() && !saw_checkpoint {
        return Err(format!("{}: the checkpoint file is missing", dir.display()));
    }
    let end_state = state.unwrap_or_default();
    if lsn != m.end_lsn || end_state.entries() != m.end_state.entries() {
        return Err(format!(
            "{}: the log ends at LSN {lsn} with GTID position {}, the manifest says LSN {} and {}",
            dir.display(),
            end_state.pos(),
            m.end_lsn,
            m.end_state.pos()
        ));
    }
    Ok(m)
}

/// What [`check_datadir`] found.
pub struct DatadirReport {
    pub checkpoint_lsn: Option<Lsn>,
    pub store: StoreCheck,
    pub first_lsn: Lsn,
    pub end_lsn: Lsn,
    pub segments: usize,
    pub transactions: u64,
    pub state: GtidState,
}

/// The tables' part of a data directory, as [`check_datadir`] found it.
pub enum StoreCheck {
    /// No control file: no checkpoint was ever written.
    Nothing,
    /// The in-memory store's checkpoint file, verified.
    Checkpoint,
    /// The paged store's base, verified.
    Base(BaseReport),
    /// The paged store's base, held by a running server: not verified (the message says so).
    InUse(String),
}

/// Verifies the tables' part of the data directory whose checkpoint directory is `ckdir`:
/// the current checkpoint file, or the paged store's base; returns the LSN the tables are at.
fn check_store(ckdir: &Path) -> Result<(Option<Lsn>, StoreCheck), String> {
    let control = ckdir.join(CONTROL_FILE);
    if !control.exists() {
        return Ok((None, StoreCheck::Nothing));
    }
    match read_control_any(&StdFs, &control).map_err(|e| e.to_string())? {
        Control::File { .. } => Ok((check_checkpoint(ckdir)?, StoreCheck::Checkpoint)),
        Control::Base { name } => match check_base(&ckdir.join(name)) {
            Ok(r) => Ok((r.lsn, StoreCheck::Base(r))),
            Err(e @ BaseCheckError::InUse(_)) => Ok((None, StoreCheck::InUse(e.to_string()))),
            Err(BaseCheckError::Bad(why)) => Err(why),
        },
    }
}

/// Verifies the current checkpoint of `ckdir` as a stream (its body is never held in
/// memory); returns its LSN, None without a control file.
fn check_checkpoint(ckdir: &Path) -> Result<Option<Lsn>, String> {
    let control = ckdir.join(CONTROL_FILE);
    if !control.exists() {
        return Ok(None);
    }
    // A running server may switch to a newer checkpoint and remove the one the control file
    // named between the two reads: read the control file again then (a few times at most).
    let mut attempts = 0;
    loop {
        let (lsn, name) = read_control(&StdFs, &control).map_err(|e| e.to_string())?;
        let path = ckdir.join(&name);
        // Verified as the engine verifies a checkpoint it reads part by part.
        match CheckpointFile::open(&StdFs, &path, lsn) {
            Ok(_) => return Ok(Some(lsn)),
            Err(_) if !path.exists() && attempts < 3 => attempts += 1,
            Err(e) => return Err(e.to_string()),
        }
    }
}

/// Verifies the data directory `dir` (module docs).
pub fn check_datadir(dir: &Path) -> Result<DatadirReport, String> {
    let (checkpoint_lsn, store) = check_store(&dir.join("checkpoints"))?;
    let segments = list_segments(&dir.join("binlog"))?;
    if segments.is_empty() {
        // A server writes segment 1 before it accepts anything, so a directory without one is
        // not a data directory: most often a backup cut before its log was copied.
        return Err(format!(
            "{}: no log segment in binlog/: neither a data directory a server wrote nor a \
             complete backup (no {MANIFEST}: was the backup interrupted?)",
            dir.display()
        ));
    }
    let mut r = DatadirReport {
        checkpoint_lsn,
        store,
        first_lsn: 0,
        end_lsn: 0,
        segments: segments.len(),
        transactions: 0,
        state: GtidState::new(),
    };
    let mut prev: Option<u64> = None;
    let last = segments.last().map(|(n, _)| *n);
    for (n, path) in &segments {
        let mut insp = SegmentInspector::open(path).map_err(|e| e.to_string())?;
        let h = insp.header().clone();
        let bad = |why: String| format!("{}: {why}", path.display());
        match prev {
            None => {
                r.first_lsn = h.start_lsn;
                r.state = h.state.clone();
            }
            Some(p) => {
                if *n != p + 1 || h.start_lsn != r.end_lsn {
                    return Err(bad(format!(
                        "the log does not continue: segment {n} starts at LSN {}, after segment {p} ended at {}",
                        h.start_lsn, r.end_lsn
                    )));
                }
                if h.state.entries() != r.state.entries() {
                    return Err(bad(
                        "the header's GTID state does not continue the records before it".into(),
                    ));
                }
            }
        }
        if h.number != *n {
            return Err(bad(format!("its header says segment {}", h.number)));
        }
        // A sealed segment may have been shortened to its records (the server trims them
        // after rotation); the next header's start LSN shows whether they all are there. The
        // listing's last one may have been sealed and trimmed by a running server since: its
        // successor exists now (its records are then read up to the end of the file).
        let sealed = Some(*n) != last || path.with_file_name(file_name(n + 1)).exists();
        let sealed_short = sealed && h.file_len.is_some_and(|l| insp.file_len() < l);
        if let Some(want) = h
            .file_len
            .filter(|&l| l != insp.file_len() && !sealed_short)
        {
            return Err(bad(format!(
                "{} bytes, its header says {want}: truncated or replaced (or a piece of a \
                 backup whose {MANIFEST} is missing: an interrupted backup)",
                insp.file_len()
            )));
        }
        while let Some(rec) = insp.next_record().map_err(|e| e.to_string())? {
            match rec.kind {
                RecordKind::Transaction | RecordKind::Ddl => {
                    if let Some(g) = rec.gtid {
                        r.state.record(g);
                        r.transactions += 1;
                    }
                }
                RecordKind::GtidState => {
                    let s = rec.state.unwrap_or_default();
                    check_state_record(&s, &r.state)
                        .map_err(|e| bad(format!("offset {}: {e}", rec.offset)))?;
                }
                RecordKind::CommitMark | RecordKind::SyncMark => {}
            }
        }
        r.end_lsn = insp.lsn();
        prev = Some(*n);
    }
    if let Some(c) = r.checkpoint_lsn {
        if segments.is_empty() || c < r.first_lsn || c > r.end_lsn {
            return Err(format!(
                "{}: the checkpoint is at LSN {c}, outside the log ({}..{})",
                dir.display(),
                r.first_lsn,
                r.end_lsn
            ));
        }
    }
    Ok(r)
}

/// `onelog check DIR`: prints what it verified; exit status 0 when everything did.
pub fn main(args: &[String]) -> i32 {
    const USAGE: &str = "usage: onelog check DIR   (a data directory or a backup)";
    if super::asks_for_help(args) {
        println!("{USAGE}");
        return 0;
    }
    let [dir] = args else {
        eprintln!("{USAGE}");
        return 2;
    };
    if dir.starts_with('-') {
        eprintln!("onelog check: unknown option {dir}\n{USAGE}");
        return 2;
    }
    let dir = Path::new(dir);
    let result = if dir.join(MANIFEST).exists() {
        verify_backup(dir).map(|m| {
            let bytes: u64 = m.files.iter().map(|f| f.bytes).sum();
            format!(
                "{}: {} backup OK ({}, {} files), LSN {}..{}, created {}\nGTID position: {}",
                dir.display(),
                if m.full { "full" } else { "incremental" },
                human_bytes(bytes),
                m.files.len(),
                m.start_lsn,
                m.end_lsn,
                m.created,
                m.end_state.pos()
            )
        })
    } else if dir.join("binlog").is_dir() || dir.join("checkpoints").is_dir() {
        check_datadir(dir).and_then(|r| {
            let log = format!(
                "log LSN {}..{} in {} segments, {} transactions\nGTID position: {}",
                r.first_lsn,
                r.end_lsn,
                r.segments,
                r.transactions,
                r.state.pos()
            );
            let at = |lsn: Option<Lsn>| lsn.map_or("(none)".into(), |c| c.to_string());
            match &r.store {
                StoreCheck::Nothing | StoreCheck::Checkpoint => Ok(format!(
                    "{}: data directory OK: checkpoint at LSN {}, {log}",
                    dir.display(),
                    at(r.checkpoint_lsn)
                )),
                StoreCheck::Base(b) => Ok(format!(
                    "{}: data directory OK: table store at LSN {} ({} tables, {} rows, {} index \
                     entries, {} records retired, {} unclaimed), {log}",
                    dir.display(),
                    at(b.lsn),
                    b.tables,
                    b.rows,
                    b.entries,
                    b.retired,
                    b.unclaimed
                )),
                StoreCheck::InUse(why) => Err(format!(
                    "{}: the table store was not checked: {why}; verified: {log}",
                    dir.display()
                )),
            }
        })
    } else if dir.join("binlog").exists() || dir.is_dir() {
        Err(format!(
            "{}: neither a data directory nor a complete backup (no {MANIFEST}: was the backup interrupted?)",
            dir.display()
        ))
    } else {
        Err(format!("{}: no such directory", dir.display()))
    };
    match result {
        Ok(text) => {
            println!("{text}");
            0
        }
        Err(e) => {
            eprintln!("onelog check: {e}");
            1
        }
    }
}
