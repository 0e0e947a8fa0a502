//! `onelog backup`: the online copy (docs/BACKUP.md; DESIGN.md §7a).
//!
//! Owns [`BackupOptions`] and [`run`]. The backup logs in ([`ServerSession`]), takes
//! `BACKUP STAGE START` (the server then purges no segment and removes no checkpoint file;
//! commits go on), and copies from the data directory:
//! 1. a full backup: the current checkpoint (named by `checkpoints/control`), verified as it is
//!    copied ([`CheckpointStreamCheck`]), or none if the server has not written one yet (the log
//!    is then copied from LSN 0, which no purge can have removed); with the paged table store,
//!    whose control file names its base, the backup image the server wrote for this session
//!    at `BACKUP STAGE START` (named by its connection id), copied under the name of a
//!    checkpoint file; an incremental one: nothing (its base has it);
//! 2. the log from the segment holding the start LSN (the checkpoint's, or the base backup's
//!    end), every segment that has a successor (sealed: fully durable, never written again);
//! 3. then the durable LSN L is read from the server, and the log up to exactly L is copied
//!    (records below the durable LSN never change);
//! 4. `BACKUP STAGE END`; only if the server answers is the manifest written, last.
//!
//! Each log piece is its segment's header block plus the records of its LSN range, fed through
//! a [`RecordVerifier`] while copying (every frame's CRC32C, GTID continuity from the segment
//! header's state, or from the base backup's end state), and the headers of consecutive
//! segments must continue each other (number + 1, start LSN = the previous end, GTID state =
//! the state the previous records built).
//!
//! Invariants: nothing is read from the log beyond the durable LSN taken in step 3; a failure
//! at any step (server gone, damage, disk full, a purged segment) ends the backup with an
//! error naming file and offset and leaves no manifest (a directory target removes what it
//! wrote); the copy loop is bounded by the byte count of the range it copies.

use std::fs::File;
use std::io::{self, BufWriter};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use onelog_binlog::GtidState;
use onelog_engine::checkpoint::{
    checkpoint_file_name, parse_backup_image_name, read_control_any, CheckpointStreamCheck,
    Control, CONTROL_FILE,
};
use onelog_log::inspect::SegmentInspector;
use onelog_log::segment::{file_name, SegmentHeader};
use onelog_log::verify::RecordVerifier;
use onelog_log::{Lsn, StdFs};

use super::manifest::{FileEntry, Manifest, Piece};
use super::source::{ConnectOptions, ServerSession};
use super::target::{DirTarget, TarTarget, Target};
use super::{human_bytes, list_segments, read_manifest};

/// Options of `onelog backup`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BackupOptions {
    /// `--target-dir`; None with `--stream`.
    pub target_dir: Option<PathBuf>,
    pub stream: bool,
    pub incremental_basedir: Option<PathBuf>,
    pub connect: ConnectOptions,
    /// `--datadir`: where the server's files are (default: its `@@datadir`).
    pub datadir: Option<PathBuf>,
}

const CHUNK: usize = 4 << 20;

/// Progress on stderr, at most once a second (module docs).
struct Progress {
    started: Instant,
    last: Instant,
    done: u64,
    total: u64,
}

impl Progress {
    fn add(&mut self, n: u64) {
        self.done += n;
        if self.last.elapsed().as_secs() >= 1 {
            self.last = Instant::now();
            eprintln!(
                "{}",
                progress_line(self.done, self.total, self.started.elapsed().as_secs_f64())
            );
        }
    }
}

/// `onelog backup: 512.0 MiB of 1.9 GiB (26%), 431.2 MB/s, ETA 3 s` after `secs` seconds.
fn progress_line(done: u64, total: u64, secs: f64) -> String {
    let rate = done as f64 / secs.max(1e-3);
    let total = total.max(done);
    let eta = (total - done) as f64 / rate.max(1.0);
    format!(
        "onelog backup: {} of {} ({:.0}%), {:.1} MB/s, ETA {:.0} s",
        human_bytes(done),
        human_bytes(total),
        done as f64 * 100.0 / total.max(1) as f64,
        rate / 1e6,
        eta
    )
}

/// One backup in progress: the target, the manifest's files, the running GTID state.
struct Copy<'a> {
    target: &'a mut dyn Target,
    progress: Progress,
    files: Vec<FileEntry>,
    buf: Vec<u8>,
    /// The GTID state and LSN after the last piece copied.
    state: GtidState,
    lsn: Lsn,
    /// The number of the last segment copied.
    number: Option<u64>,
    /// The backup's start LSN and, once the copy has verified the records up to it, the GTID
    /// state there (the manifest's `start_gtid_state`).
    start: (Lsn, Option<GtidState>),
}

/// A log segment found in the data directory.
struct Segment {
    path: PathBuf,
    header: SegmentHeader,
}

fn open_segment(path: &Path) -> Result<Segment, String> {
    let insp = SegmentInspector::open(path).map_err(|e| e.to_string())?;
    Ok(Segment {
        path: path.to_path_buf(),
        header: insp.header().clone(),
    })
}

/// The backup image of the backup session `session` in `ckdir` (the paged store's, written
/// at BACKUP STAGE START): its LSN and path.
fn backup_image(ckdir: &Path, session: u64) -> Result<(Lsn, PathBuf), String> {
    let names =
        std::fs::read_dir(ckdir).map_err(|e| format!("cannot list {}: {e}", ckdir.display()))?;
    // The newest, should an older image of the same session have outlived its hold.
    let mut found: Option<(Lsn, PathBuf)> = None;
    for entry in names {
        let entry = entry.map_err(|e| format!("cannot list {}: {e}", ckdir.display()))?;
        let name = entry.file_name();
        if let Some(lsn) = name
            .to_str()
            .and_then(|n| parse_backup_image_name(n, session))
        {
            if found.as_ref().is_none_or(|(l, _)| lsn > *l) {
                found = Some((lsn, entry.path()));
            }
        }
    }
    found.ok_or_else(|| {
        format!(
            "{} keeps its tables in the paged store, and the server wrote no backup image of \
         them for this backup's session (connection {session}) in {}",
            ckdir.parent().unwrap_or(ckdir).display(),
            ckdir.display()
        )
    })
}

fn read_at(f: &File, path: &Path, buf: &mut [u8], off: u64) -> Result<(), String> {
    f.read_exact_at(buf, off)
        .map_err(|e| format!("{}: offset {off}: read failed: {e}", path.display()))
}

impl Copy<'_> {
    fn write(&mut self, bytes: &[u8]) -> Result<(), String> {
        self.target
            .write(bytes)
            .map_err(|e| format!("writing {}: {e}", self.target.describe()))
    }

    fn begin(&mut self, rel: &str, len: u64) -> Result<(), String> {
        self.target
            .begin(rel, len)
            .map_err(|e| format!("writing {}: {e}", self.target.describe()))
    }

    fn end(&mut self) -> Result<(), String> {
        self.target
            .end()
            .map_err(|e| format!("writing {}: {e}", self.target.describe()))
    }

    /// Copies the checkpoint the control file names; returns its LSN and file name. None
    /// when the server has written no checkpoint yet (recovery then replays the log from LSN 0,
    /// and no segment can have been purged).
    /// With the paged store, the backup image the server wrote for this session (`session`:
    /// its connection id) at BACKUP STAGE START, under the same name as a checkpoint file.
    fn checkpoint(&mut self, ckdir: &Path, session: u64) -> Result<Option<(Lsn, String)>, String> {
        if !ckdir.join(CONTROL_FILE).exists() {
            return Ok(None);
        }
        let control = read_control_any(&StdFs, &ckdir.join(CONTROL_FILE))
            .map_err(|e| format!("the server has no readable checkpoint: {e}"))?;
        let (lsn, path) = match control {
            Control::File { lsn, name } => (lsn, ckdir.join(name)),
            Control::Base { .. } => backup_image(ckdir, session)?,
        };
        let name = checkpoint_file_name(lsn);
        let f = File::open(&path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
        let len = f
            .metadata()
            .map_err(|e| format!("cannot stat {}: {e}", path.display()))?
            .len();
        let rel = format!("checkpoints/{name}");
        self.begin(&rel, len)?;
        let mut check = CheckpointStreamCheck::new(lsn);
        let mut crc = 0u32;
        let mut buf = std::mem::take(&mut self.buf);
        let mut off = 0u64;
        while off < len {
            let n = ((len - off) as usize).min(CHUNK);
            read_at(&f, &path, &mut buf[..n], off)?;
            check.feed(&buf[..n]);
            crc = crc32c::crc32c_append(crc, &buf[..n]);
            self.write(&buf[..n])?;
            self.progress.add(n as u64);
            off += n as u64;
        }
        self.buf = buf;
        check.finish(&path).map_err(|e| e.to_string())?;
        self.end()?;
        self.files.push(FileEntry {
            path: rel.clone(),
            bytes: len,
            crc,
            piece: None,
        });
        Ok(Some((lsn, rel)))
    }

    /// Copies the records `[self.lsn, to)` of `seg` with its header block.
    fn piece(&mut self, seg: &Segment, to: Lsn) -> Result<(), String> {
        let h = &seg.header;
        let from = self.lsn;
        self.check_continues(seg)?;
        let f = File::open(&seg.path)
            .map_err(|e| format!("cannot open {}: {e}", seg.path.display()))?;
        let name = file_name(h.number);
        let rel = format!("binlog/{name}");
        let len = h.header_len + (to - from);
        self.begin(&rel, len)?;
        let mut buf = std::mem::take(&mut self.buf);
        if buf.len() < h.header_len as usize {
            buf.resize(h.header_len as usize, 0);
        }
        let head = &mut buf[..h.header_len as usize];
        read_at(&f, &seg.path, head, 0)?;
        let mut crc = crc32c::crc32c(head);
        let head = head.to_vec();
        self.write(&head)?;
        let mut verifier = RecordVerifier::new(from, to, std::mem::take(&mut self.state));
        let mut lsn = from;
        self.note_start(&verifier, &seg.path)?;
        while lsn < to {
            // A chunk ends at the start LSN, so the state there is known when it is reached.
            let stop = Some(self.start.0)
                .filter(|&s| s > lsn && s < to)
                .unwrap_or(to);
            let n = ((stop - lsn) as usize).min(CHUNK);
            let off = h.header_len + (lsn - h.start_lsn);
            read_at(&f, &seg.path, &mut buf[..n], off)?;
            verifier
                .feed(&buf[..n])
                .map_err(|e| damaged(&seg.path, h, &e))?;
            crc = crc32c::crc32c_append(crc, &buf[..n]);
            self.write(&buf[..n])?;
            self.progress.add(n as u64);
            lsn += n as u64;
            if lsn == self.start.0 {
                self.note_start(&verifier, &seg.path)?;
            }
        }
        self.buf = buf;
        let run = verifier.finish().map_err(|e| damaged(&seg.path, h, &e))?;
        self.end()?;
        self.state = run.state;
        self.lsn = to;
        self.number = Some(h.number);
        self.files.push(FileEntry {
            path: rel,
            bytes: len,
            crc,
            piece: Some(Piece {
                number: h.number,
                from,
                to,
            }),
        });
        Ok(())
    }

    /// Keeps the verified GTID state at the start LSN when the verifier stands there (the
    /// checkpoint's LSN is a record boundary: anything else is damage).
    fn note_start(&mut self, v: &RecordVerifier, path: &Path) -> Result<(), String> {
        if self.start.1.is_some() || v.lsn() + v.pending_bytes() != self.start.0 {
            return Ok(());
        }
        if v.pending_bytes() != 0 {
            return Err(format!(
                "{}: the checkpoint's LSN {} is not at a record boundary",
                path.display(),
                self.start.0
            ));
        }
        self.start.1 = Some(v.state().clone());
        Ok(())
    }

    /// A segment copied from its start continues the previous one exactly.
    fn check_continues(&mut self, seg: &Segment) -> Result<(), String> {
        let h = &seg.header;
        let Some(prev) = self.number else {
            return Ok(());
        };
        let bad = |why: String| format!("{}: the log does not continue: {why}", seg.path.display());
        if h.number != prev + 1 {
            return Err(bad(format!("segment {} follows segment {prev}", h.number)));
        }
        if h.start_lsn != self.lsn {
            return Err(bad(format!(
                "it starts at LSN {}, the previous segment ended at {}",
                h.start_lsn, self.lsn
            )));
        }
        if h.state.entries() != self.state.entries() {
            return Err(bad(
                "its header's GTID state is not the state the records before it built".into(),
            ));
        }
        Ok(())
    }
}

fn damaged(path: &Path, h: &SegmentHeader, e: &onelog_log::verify::VerifyError) -> String {
    let off = h.header_len + e.lsn.saturating_sub(h.start_lsn);
    format!("{}: offset {off}: {}", path.display(), e.reason)
}

/// Where the copy starts.
struct Start {
    lsn: Lsn,
    state: Option<GtidState>,
    /// Incremental: the base backup's last log piece (segment number and header block), which
    /// the server's segment holding `lsn` must match: the same log, not one reset since.
    base_header: Option<(u64, Vec<u8>)>,
}

/// The segment number and header block of the base backup's last log piece (it ends at the
/// base's end LSN).
fn base_header(dir: &Path, m: &Manifest) -> Result<Option<(u64, Vec<u8>)>, String> {
    let Some((f, p)) = m.files.iter().rev().find_map(|f| f.piece.map(|p| (f, p))) else {
        return Ok(None);
    };
    let path = dir.join(&f.path);
    let insp = SegmentInspector::open(&path).map_err(|e| e.to_string())?;
    let mut head = vec![0u8; insp.header().header_len as usize];
    let file = File::open(&path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    read_at(&file, &path, &mut head, 0)?;
    Ok(Some((p.number, head)))
}

/// Copies the log from `start` to the server's durable LSN (steps 2 and 3 of the module docs).
fn copy_log(
    copy: &mut Copy<'_>,
    server: &mut ServerSession,
    logdir: &Path,
    start: Start,
) -> Result<(), String> {
    let segments = list_segments(logdir)?;
    let mut idx = None;
    for (i, (_, path)) in segments.iter().enumerate() {
        if open_segment(path)?.header.start_lsn <= start.lsn {
            idx = Some(i);
        }
    }
    let Some(first) = idx else {
        return Err(format!(
            "the log from LSN {} is no longer in {} (purged): take a full backup",
            start.lsn,
            logdir.display()
        ));
    };
    let seg = open_segment(&segments[first].1)?;
    if let Some((number, head)) = &start.base_header {
        let f = File::open(&seg.path)
            .map_err(|e| format!("cannot open {}: {e}", seg.path.display()))?;
        let mut mine = vec![0u8; head.len()];
        let same = seg.header.number == *number
            && read_at(&f, &seg.path, &mut mine, 0).is_ok()
            && mine == *head;
        if !same {
            return Err(format!(
                "the server's log is not the one the base backup was taken from (its segment at \
                 LSN {} differs: RESET MASTER since, or another server): take a full backup",
                start.lsn
            ));
        }
    }
    copy.lsn = if start.state.is_some() {
        start.lsn
    } else {
        seg.header.start_lsn
    };
    copy.state = start.state.unwrap_or_else(|| seg.header.state.clone());
    let mut next = segments[first].0;
    // Phase 1: sealed segments (a successor exists). Phase 2: up to the durable LSN.
    let mut durable: Option<Lsn> = None;
    loop {
        let segments = list_segments(logdir)?;
        let find = |n: u64| {
            segments
                .iter()
                .find(|(m, _)| *m == n)
                .map(|(_, p)| p.clone())
        };
        let Some(path) = find(next) else {
            return Err(format!(
                "segment {} is missing from {}",
                file_name(next),
                logdir.display()
            ));
        };
        let seg = open_segment(&path)?;
        let successor = match find(next + 1) {
            Some(p) => Some(open_segment(&p)?.header.start_lsn),
            None => None,
        };
        let to = match (successor, durable) {
            (Some(end), Some(d)) => end.min(d),
            (Some(end), None) => end,
            (None, Some(d)) => d,
            (None, None) => {
                durable = Some(server.durable_lsn()?);
                continue;
            }
        };
        if to < copy.lsn || to < seg.header.start_lsn {
            return Err(format!(
                "{}: the durable LSN {to} is before the copy's position {}",
                path.display(),
                copy.lsn
            ));
        }
        copy.piece(&seg, to)?;
        if durable.is_some_and(|d| to == d) {
            return Ok(());
        }
        next += 1;
    }
}

/// `onelog backup` (module docs).
pub fn run(opts: &BackupOptions) -> Result<Manifest, String> {
    let mut server = ServerSession::connect(&opts.connect)?;
    let server_version = server.version()?;
    let datadir = match &opts.datadir {
        Some(d) => d.clone(),
        None => PathBuf::from(server.datadir()?),
    };
    if !datadir.join("binlog").is_dir() {
        return Err(format!(
            "the server's data directory {} is not readable here: onelog backup runs on the \
             server's host, as its OS user (or give --datadir=DIR)",
            datadir.display()
        ));
    }
    let base = match &opts.incremental_basedir {
        Some(b) => Some((b.as_path(), read_manifest(b)?)),
        None => None,
    };
    server.execute("BACKUP STAGE START")?;
    let started = Instant::now();
    let estimate = server.durable_lsn()?;
    let session = server.connection_id()?;
    let mut dir_target = None;
    let mut stream_target = None;
    let target: &mut dyn Target = match &opts.target_dir {
        Some(dir) => dir_target.insert(DirTarget::create(dir)?),
        None => stream_target.insert(
            TarTarget::new(BufWriter::with_capacity(1 << 20, io::stdout().lock()))
                .map_err(|e| format!("writing the archive to standard output: {e}"))?,
        ),
    };
    let run = Run {
        server_version,
        datadir,
        estimate,
        started,
        session,
    };
    let result = backup_into(
        target,
        &mut server,
        &run,
        base.as_ref().map(|(d, m)| (*d, m)),
    )
    .and_then(|m| {
        server.execute("BACKUP STAGE END")?;
        target
            .finish(&m.encode())
            .map_err(|e| format!("writing {}: {e}", target.describe()))?;
        Ok(m)
    });
    if result.is_err() {
        if let Some(t) = dir_target.as_mut() {
            t.abort();
        }
    }
    let m = result?;
    let bytes: u64 = m.files.iter().map(|f| f.bytes).sum();
    let secs = started.elapsed().as_secs_f64();
    eprintln!(
        "onelog backup: completed OK: {} {} in {secs:.1} s ({:.1} MB/s), LSN {}..{}, GTID position {}",
        if m.full { "full backup," } else { "incremental backup," },
        human_bytes(bytes),
        bytes as f64 / secs.max(1e-3) / 1e6,
        m.start_lsn,
        m.end_lsn,
        m.end_state.pos()
    );
    Ok(m)
}

/// What [`backup_into`] needs to know about the run.
struct Run {
    server_version: String,
    datadir: PathBuf,
    /// The durable LSN when the backup started (for the progress estimate).
    estimate: Lsn,
    started: Instant,
    /// The backup session's connection id (names the paged store's backup image).
    session: u64,
}

fn backup_into(
    target: &mut dyn Target,
    server: &mut ServerSession,
    run: &Run,
    base: Option<(&Path, &Manifest)>,
) -> Result<Manifest, String> {
    let (datadir, started) = (&run.datadir, run.started);
    let mut copy = Copy {
        target,
        progress: Progress {
            started,
            last: started,
            done: 0,
            total: 0,
        },
        files: Vec::new(),
        buf: vec![0u8; CHUNK],
        state: GtidState::new(),
        lsn: 0,
        number: None,
        start: (0, None),
    };
    let (checkpoint, start) = match base {
        None => {
            let ck = copy.checkpoint(&datadir.join("checkpoints"), run.session)?;
            let lsn = ck.as_ref().map_or(0, |c| c.0);
            let start = Start {
                lsn,
                state: None,
                base_header: None,
            };
            (ck, start)
        }
        Some((dir, b)) => (
            None,
            Start {
                lsn: b.end_lsn,
                state: Some(b.end_state.clone()),
                base_header: base_header(dir, b)?,
            },
        ),
    };
    let start_lsn = start.lsn;
    copy.start = (start_lsn, start.state.clone());
    copy.progress.total = copy.progress.done + run.estimate.saturating_sub(start_lsn);
    copy_log(&mut copy, server, &datadir.join("binlog"), start)?;
    let Some(start_state) = copy.start.1 else {
        return Err(format!(
            "the log copied does not reach the start LSN {start_lsn} on a record boundary"
        ));
    };
    Ok(Manifest {
        full: base.is_none(),
        server_version: run.server_version.clone(),
        created: utc_now(),
        checkpoint,
        start_lsn,
        end_lsn: copy.lsn,
        start_state,
        end_state: copy.state,
        files: copy.files,
    })
}

/// Now, as `2026-11-25T23:59:59Z`.
pub fn utc_now() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    let (y, m, d) = onelog_binlog::value::civil_from_days(secs.div_euclid(86_400));
    let s = secs.rem_euclid(86_400);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        s / 3600,
        s / 60 % 60,
        s % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_says_bytes_rate_and_eta() {
        assert_eq!(
            progress_line(512 << 20, 2 << 30, 2.0),
            "onelog backup: 512.0 MiB of 2.0 GiB (25%), 268.4 MB/s, ETA 6 s"
        );
        // An estimate that was too low never shows more than 100%.
        assert_eq!(
            progress_line(3 << 20, 1 << 20, 1.0),
            "onelog backup: 3.0 MiB of 3.0 MiB (100%), 3.1 MB/s, ETA 0 s"
        );
    }
}
