//! Opening the log: finding the segments, checking their headers, and recovering the tail.
//!
//! Steps:
//! 1. create the directory; delete a stale `next.olog.tmp` or `oversize.olog.tmp` (they never
//!    hold records);
//!    if `reset.olog.tmp` exists, a reset was committed: finish it (`segment::finish_reset`);
//! 2. list `binlog-NNNNNN.olog` files; none: create segment 1 (start LSN 0, empty state);
//! 3. read every header: the numbers must be contiguous and match the names, start LSNs must
//!    increase and fit in the previous segment's file; a version-2 segment's file must have
//!    the size its header says it was preallocated to (a crash cannot change it: appends never
//!    change file metadata), except that a sealed one (not the last) may be shorter, down to
//!    the end of its records, the next segment's start (`trim.rs` shortens sealed segments;
//!    a crash may leave either size). Anything else is `Corrupt` naming the file — except a
//!    LAST segment shorter than its size under `LogRecovery::TruncateDamaged`, which is
//!    extended back with zeros and reported in `OpenReport::damage_cuts`. Sealed segments
//!    still longer than their records are trimmed once the open has succeeded (`trim.rs`;
//!    one that fails is queued);
//! 4. scan the LAST segment from its first record, checking each CRC, rebuilding the GTID
//!    state (header state, then each record's GTID, GtidState records replacing it), to the
//!    first zero length word or invalid/truncated frame `B`; the log ends at `E`, the end of
//!    the last record before `B` that is not a SyncMark (a SyncMark is framed in front of a
//!    group in the same write, so marks with nothing after them belong to a lost write);
//! 5. the bytes from `B` on are judged (below): a torn tail is zeroed from `E` (backwards,
//!    so a crash meanwhile leaves a prefix) and counted in `torn_bytes`; damage is
//!    `Corrupt` naming the file and `B` and the option that accepts the loss, or, under
//!    `LogRecovery::TruncateDamaged`, zeroed from `E` to the last non-zero byte of the
//!    segment and reported in `damage_cuts`. The segment is then `fdatasync`ed (what a
//!    crashed process left in the page cache is not durable until then) and everything up
//!    to `E` counts as durable.
//!
//! Torn tail vs corruption (the argument, also in docs/LOG_FORMAT.md). After a crash the
//! bytes that differ from what the log wrote can only lie in what was written but not yet
//! synced: the file was preallocated with zeros and synced, and the appender never has more
//! than `MAX_UNSYNCED` bytes written but not synced (it syncs first, and chunks a larger
//! write, see `appender.rs`). Two independent proofs of damage:
//! (a) distance: the unsynced extent is at most `MAX_UNSYNCED` bytes starting at or before
//!     `B` (everything before the last sync is intact, so the first bad frame is not before
//!     it), or, when a record larger than the bound was being written in synced chunks, its
//!     synced prefix, whose length word (synced with it) says how far it reaches. With
//!     `claimed` the frame length the word at `B` states (at least the 9-byte header), any
//!     non-zero byte past `B + claimed + MAX_UNSYNCED` is damage. The scan stops once it has
//!     seen a `MAX_UNSYNCED` run of zeros after the window, then samples one 4 KiB page per
//!     MiB to the end of the file (records lost under a zeroed extent leave data after it);
//! (b) SyncMarks: a SyncMark (`frame.rs`) names the durable LSN when it was framed, which
//!     only moves after a successful fsync. A CRC-valid SyncMark found anywhere in the
//!     non-zero extent after `B`, at the position its own LSN names, whose synced LSN is past
//!     `B`, proves the bytes at `B` had been synced before the crash: damage. Within the
//!     window and without such a mark, the bytes could have been in flight: a torn tail.
//! So damage in the synced region — anything below the synced LSN of a later surviving
//! SyncMark, which under load is everything but the last group or two — is always refused;
//! an idle log writes (past its end, taking no LSN) and syncs the mark the next group would
//! frame (`flusher::idle_mark`), so the last group is vouched for too once the log has been
//! idle for `LogOptions::idle_sync_mark` or shut down cleanly; such a mark ending the data is
//! dropped at open without being reported as torn. What (b) cannot vouch for is a group
//! synced less than that delay before the crash, where damage a crash could also explain is
//! cut like a torn tail (only (a) applies there). The search for a vouching mark reaches a
//! whole mark past the last non-zero byte (a mark's last bytes are usually zeros). Level 0/2 groups acknowledged before their sync are in flight by
//! design: a power cut may lose them (never with a hole: a prefix is kept).
//!
//! File mode (two-phase commit, see `group_commit.rs`): after step 5,
//! 6. the file-mode marker (`filemode.since`, see `filemode.rs`) is read: absent means the
//!    previous run was engine mode (or the log is new) and every record is committed;
//!    present, it holds the LSN `S` where the previous file-mode session started (beyond the
//!    log's end, or damaged: `Corrupt`);
//! 7. the classic binlog is opened (`ClassicBinlog::open`, which cuts a torn group off its
//!    last file), created if absent with the log's GTID state at its end as initial state
//!    (marker absent: the oldest segment's starting state, so the catch-up of step 9 fills
//!    it with every group of the log);
//! 8. marker present: the records of the last segment at or after both `S` and the last
//!    CommitMark's LSN (or the segment's start: every record of a sealed segment is
//!    committed, since rotation happens under the staged commit's turn and seals the segment
//!    after framing the mark of its last group) are IN DOUBT: prepared, fate unknown. Binlog
//!    order == log order, so the binlog holds a prefix of them: each in-doubt record whose
//!    GTID the binlog's GTID state contains is committed; from the first one it lacks on, the
//!    records are cut off the log exactly like a torn tail (zeroed from the end backwards, so
//!    a crash during recovery leaves a prefix that the next recovery decides the same way;
//!    then synced), the GTID state is the one before that record, and they are counted as
//!    rolled back. Records below `S` were decided by an earlier recovery or written in engine
//!    mode: committed;
//! 9. marker absent and the binlog behind the log (and nowhere ahead): the log's groups after
//!    the binlog's verified position are appended to it and it is synced
//!    (`filemode::catch_up`; position not found: nothing appended);
//! 10. the log's and the binlog's GTID states are compared per domain: groups only the binlog
//!    holds (`binlog_ahead`: the log lost them, levels 0/2) or only the log holds
//!    (`binlog_behind`: the binlog lost them, `sync_binlog` != 1) are reported in
//!    `OpenReport::binlog`, never repaired;
//! 11. after the segment sync of step 5, the binlog's current file is synced (recovery's
//!    decisions rest on it) and the marker is replaced with `S = E` (the end after recovery),
//!    durably, before the first commit.
//!
//! Engine mode removes a marker, durably, before the first commit; it skips CommitMark
//! records (a log written in file mode opens in engine mode with every record committed).
//!
//! Earlier segments are not scanned here (only their headers and sizes are checked): readers
//! verify their CRCs as they read them and read a sealed segment exactly up to its
//! successor's start LSN, so a bad record there, or records that stop short of it, is
//! `Corrupt` naming the file and offset, never skipped (the engine's replay from a checkpoint
//! in an older segment refuses to open on it). `LogRecovery::TruncateDamaged` does not
//! apply to them: cutting a sealed segment would drop every later segment.
//!
//! Invariants: segment numbers are contiguous and start LSNs increase (step 3: anything else
//! is `Corrupt`); recovery removes nothing before the recovered end except what it reports in
//! `damage_cuts`; the kept records end on a record boundary inside the last segment, before the
//! first bad byte (asserted in `recover_tail` and `cut_tail`); everything up to that end is
//! durable when `open` returns.

use std::path::Path;
use std::sync::atomic::AtomicU8;
use std::sync::{Arc, Condvar, Mutex, RwLock};

use onelog_binlog::{Gtid, GtidState};

use crate::appender::{Writer, MAX_UNSYNCED};
use crate::classic::{ClassicBinlog, ClassicOptions};
use crate::cursor::SegmentCursor;
use crate::error::LogError;
use crate::filemode::{BinlogFile, FileMode};
use crate::frame::{self, FRAME_HEADER_LEN};
use crate::fs::{read_full_at, File, FileSystem};
use crate::inner::{Inner, Shared};
use crate::progress::Progress;
use crate::seglist::{SegmentList, SegmentMeta};
use crate::segment::{self, SegmentHeader, PREPARED_NAME, RESET_NAME};
use crate::shared::Stats;
use crate::trim::{Trim, Untrimmed};
use crate::{
    filemode, BinlogStorage, DamageCut, FileModeRecovery, LogOptions, LogRecovery, Lsn, OpenReport,
    RecordKind,
};

const MIN_SEGMENT: u64 = 16 << 10;

/// Opens the log in `opts.dir`: the steps of the module docs, one function each.
pub(crate) fn open(
    fs: Arc<dyn FileSystem>,
    opts: LogOptions,
) -> Result<(Inner, OpenReport), LogError> {
    check_options(&opts)?;
    let fde = segment::format_description(&opts.server_version, opts.server_id);
    prepare_dir(&*fs, &opts.dir)?; // step 1
    let numbers = list_segments(&*fs, &opts, &fde)?; // step 2
    let mut segs = read_headers(&*fs, &opts, &numbers)?; // step 3
    let mut tail = recover_tail(&mut segs, opts.recovery)?; // steps 4-5
    let file_mode = match &opts.binlog_storage {
        BinlogStorage::File {
            classic,
            sync_binlog,
        } => Some((
            recover_file_mode(&fs, &opts.dir, &segs, &mut tail, classic)?,
            *sync_binlog,
        )), // steps 6-10
        BinlogStorage::Engine => None,
    };
    let (file_mode, binlog_report) = start_session(&*fs, &opts.dir, &segs, &tail, file_mode)?; // step 11
    let report = OpenReport {
        segment: segs.last.number,
        segment_path: segs.last.path.clone(),
        offset: tail.cur.offset_of(tail.lsn),
        end_lsn: tail.lsn,
        gtid_state: tail.state.clone(),
        torn_bytes: tail.torn_bytes,
        damage_cuts: std::mem::take(&mut segs.damage_cuts),
        binlog: binlog_report,
    };
    let untrimmed = trim_long_segments(&*fs, std::mem::take(&mut segs.long));
    Ok((
        build_inner(fs, opts, fde, segs, tail, file_mode, untrimmed),
        report,
    ))
}

/// `segment_size` must leave room for records.
fn check_options(opts: &LogOptions) -> Result<(), LogError> {
    if opts.segment_size >= MIN_SEGMENT {
        return Ok(());
    }
    Err(LogError::io(
        &opts.dir,
        0,
        "open log",
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "segment_size {} is below the minimum {MIN_SEGMENT}",
                opts.segment_size
            ),
        ),
    ))
}

/// Step 1: the directory exists, holds no stale prepared segment, and no half-done reset.
fn prepare_dir(fs: &dyn FileSystem, dir: &Path) -> Result<(), LogError> {
    fs.create_dir_all(dir)
        .map_err(|e| LogError::io(dir, 0, "create log directory", e))?;
    let tmp = dir.join(PREPARED_NAME);
    if fs.exists(&tmp) {
        fs.remove_file(&tmp)
            .map_err(|e| LogError::io(&tmp, 0, "remove stale prepared segment", e))?;
    }
    let big = dir.join(segment::OVERSIZE_NAME);
    if fs.exists(&big) {
        fs.remove_file(&big)
            .map_err(|e| LogError::io(&big, 0, "remove stale prepared segment", e))?;
    }
    if fs.exists(&dir.join(RESET_NAME)) {
        segment::finish_reset(fs, dir)?;
    }
    filemode::remove_stale_tmp(fs, dir)
}

/// Step 2: the numbers of the segment files, ascending (segment 1 is created when there are
/// none).
fn list_segments(fs: &dyn FileSystem, opts: &LogOptions, fde: &[u8]) -> Result<Vec<u64>, LogError> {
    let dir = &opts.dir;
    let mut numbers: Vec<u64> = fs
        .list_dir(dir)
        .map_err(|e| LogError::io(dir, 0, "list log directory", e))?
        .iter()
        .filter_map(|n| segment::parse_name(n))
        .collect();
    numbers.sort_unstable();
    if numbers.is_empty() {
        let tmp = dir.join(PREPARED_NAME);
        let file = segment::create_zeroed(fs, &tmp, opts.segment_size, &|| false)?;
        let header = SegmentHeader::encode(1, 0, &GtidState::new(), fde, opts.segment_size);
        segment::install(fs, dir, &tmp, &*file, &header, 1)?;
        numbers.push(1);
    }
    Ok(numbers)
}

/// What step 3 found: every segment, and the last one's open file.
struct Segments {
    metas: Vec<SegmentMeta>,
    /// The last (current) segment (a copy of `metas`' last).
    last: SegmentMeta,
    file: Arc<dyn File>,
    /// Its size (after a repair of step 3).
    file_len: u64,
    /// Its format version.
    last_version: u32,
    damage_cuts: Vec<DamageCut>,
    /// Sealed segments longer than their records.
    long: Vec<LongSegment>,
}

/// A sealed segment longer than its records: path, number, start LSN, where its records end.
type LongSegment = (std::path::PathBuf, u64, Lsn, u64);

impl Segments {
    /// A cursor over the last (current) segment's records, from its start.
    fn last_cursor(&self) -> SegmentCursor {
        let last = &self.last;
        SegmentCursor::new(
            self.file.clone(),
            last.path.clone(),
            last.number,
            last.header_len,
            last.start_lsn,
        )
    }
}

/// When a sealed segment found at open stopped being written: its file's modification time,
/// or now where the file system keeps none (retention then counts its age from the open).
fn closed_at(fs: &dyn FileSystem, path: &std::path::Path) -> std::time::SystemTime {
    fs.modified(path)
        .ok()
        .flatten()
        .unwrap_or_else(std::time::SystemTime::now)
}

/// Step 3: reads and checks every segment's header and size (see the module docs).
fn read_headers(
    fs: &dyn FileSystem,
    opts: &LogOptions,
    numbers: &[u64],
) -> Result<Segments, LogError> {
    let mut metas: Vec<SegmentMeta> = Vec::with_capacity(numbers.len());
    let mut file_lens = Vec::with_capacity(numbers.len());
    let mut last_file = None;
    let mut last_version = segment::VERSION;
    let mut damage_cuts = Vec::new();
    let mut long = Vec::new();
    for (i, &n) in numbers.iter().enumerate() {
        let path = opts.dir.join(segment::file_name(n));
        let file = fs
            .open(&path, false)
            .map_err(|e| LogError::io(&path, 0, "open segment", e))?;
        let h = SegmentHeader::read(&*file, &path)?;
        let len = file
            .len()
            .map_err(|e| LogError::io(&path, 0, "stat segment", e))?;
        check_header(
            &path,
            n,
            &h,
            len,
            metas.last().zip(file_lens.last().copied()),
        )?;
        let is_last = i + 1 == numbers.len();
        let len = check_size(
            &path,
            &*file,
            len,
            &h,
            is_last,
            opts.recovery,
            &mut damage_cuts,
        )?;
        last_version = h.version;
        if let (Some(prev), Some(&prev_len)) = (metas.last_mut(), file_lens.last()) {
            prev.end_lsn = Some(h.start_lsn);
            prev.closed_at = Some(closed_at(fs, &prev.path));
            // check_header made sure the records fit: data_end <= prev_len.
            let data_end =
                crate::position::offset_in_segment(prev.header_len, prev.start_lsn, h.start_lsn);
            if prev_len > data_end {
                long.push((prev.path.clone(), prev.number, prev.start_lsn, data_end));
            }
        }
        file_lens.push(len);
        metas.push(SegmentMeta {
            number: n,
            path,
            start_lsn: h.start_lsn,
            end_lsn: None,
            header_len: h.header_len,
            state: Arc::new(h.state),
            closed_at: None,
        });
        last_file = Some(file);
    }
    let (Some(last), Some(file), Some(&file_len)) =
        (metas.last().cloned(), last_file, file_lens.last())
    else {
        return Err(LogError::corrupt(&opts.dir, 0, "no segment"));
    };
    Ok(Segments {
        metas,
        last,
        file,
        file_len,
        last_version,
        damage_cuts,
        long,
    })
}

/// After a successful open (a refused start changes nothing): trims the sealed segments
/// still longer than their records (`trim.rs`). Nothing else uses the files yet, so they
/// are opened by name; one that fails is queued with its handle for the engine's next look,
/// which reports the error.
fn trim_long_segments(fs: &dyn FileSystem, long: Vec<LongSegment>) -> Untrimmed {
    let queue = Untrimmed::default();
    for (path, number, start_lsn, data_end) in long {
        let Ok(file) = fs.open(&path, false) else {
            continue; // it was just read: the next open tries again
        };
        let mut t = Trim::new(file, path, number, start_lsn, data_end);
        if t.apply().is_err() {
            queue.push(t);
        }
    }
    queue
}

/// Step 3 for one header: its number matches the name and follows `prev` (the previous
/// segment and its file size), its start LSN fits in `prev`, the file holds the header.
fn check_header(
    path: &Path,
    n: u64,
    h: &SegmentHeader,
    len: u64,
    prev: Option<(&SegmentMeta, u64)>,
) -> Result<(), LogError> {
    if h.number != n {
        return Err(LogError::corrupt(
            path,
            16,
            format!(
                "header says segment {} but the file name says {n}",
                h.number
            ),
        ));
    }
    if let Some((prev, prev_len)) = prev {
        if n != prev.number + 1 {
            return Err(LogError::corrupt(
                path,
                0,
                format!("segment {} is missing before it", prev.number + 1),
            ));
        }
        if h.start_lsn < prev.start_lsn {
            return Err(LogError::corrupt(
                path,
                24,
                format!(
                    "start LSN {} is before segment {}'s start LSN {}",
                    h.start_lsn, prev.number, prev.start_lsn
                ),
            ));
        }
        // A sealed segment's records end where the next one starts: its file must reach there.
        let need = prev.header_len + (h.start_lsn - prev.start_lsn);
        if need > prev_len {
            return Err(LogError::corrupt(
                &prev.path,
                prev_len,
                format!(
                    "segment file is {prev_len} bytes but its records end at offset {need}, \
                     where segment {n} starts (LSN {}): it was cut short or replaced",
                    h.start_lsn
                ),
            ));
        }
    }
    if len < h.header_len {
        return Err(LogError::corrupt(
            path,
            len,
            "segment shorter than its header",
        ));
    }
    Ok(())
}

/// Where the log ends after steps 4-5 (and step 8, which may cut more).
struct Recovered {
    /// A cursor on the last segment.
    cur: SegmentCursor,
    /// End of the kept records.
    lsn: Lsn,
    /// File offset where the records kept by step 5 end.
    end_off: u64,
    /// GTID state at `lsn`.
    state: GtidState,
    /// The largest LSN a CommitMark names (the segment's start LSN when none).
    committed: Lsn,
    torn_bytes: u64,
}

/// Steps 4-5: scans the last segment's records and judges and cuts what follows them.
fn recover_tail(segs: &mut Segments, recovery: LogRecovery) -> Result<Recovered, LogError> {
    let last = &segs.last;
    let mut cur = segs.last_cursor();
    let file_end_lsn = cur.lsn_at(segs.file_len);
    let scan = scan_tail(&mut cur, &last.state, file_end_lsn, &mut |_, _, _| true)?;
    // The first bytes that are not a valid record, and where the kept records end (before
    // SyncMarks that only preceded them: a mark is written with the group after it).
    let bad_off = cur.offset_of(scan.end);
    let lsn = scan.end_before_marks;
    let end_off = cur.offset_of(lsn);
    debug_assert!(
        lsn >= segs.last.start_lsn && end_off <= bad_off,
        "the kept records end inside the last segment, before the first bad byte"
    );
    let torn_bytes = cut_tail(
        &cur,
        &*segs.file,
        (end_off, bad_off, segs.file_len),
        &scan.why_end,
        recovery,
        &mut segs.damage_cuts,
    )?;
    Ok(Recovered {
        cur,
        lsn,
        end_off,
        state: scan.state,
        committed: scan.committed,
        torn_bytes,
    })
}

/// Steps 6-10 (file mode): reads the marker, opens the classic binlog, decides the in-doubt
/// records (cutting the rolled-back ones off `tail`), catches the binlog up, compares.
fn recover_file_mode(
    fs: &Arc<dyn FileSystem>,
    dir: &Path,
    segs: &Segments,
    tail: &mut Recovered,
    classic: &ClassicOptions,
) -> Result<(ClassicBinlog, FileModeRecovery), LogError> {
    let since = read_marker(&**fs, dir, tail.lsn, &segs.last.path)?; // step 6
                                                                     // No marker: the previous run was engine mode (or the log is new), so the binlog
                                                                     // should hold every group of the log; files created now start where the log does.
    let initial = match since {
        Some(_) => tail.state.clone(),
        None => (*segs.metas[0].state).clone(),
    };
    let (mut binlog, crep) = ClassicBinlog::open(fs.clone(), classic.clone(), &initial)?; // step 7
    let mut rep = FileModeRecovery {
        binlog_files: crep.files.clone(),
        binlog_torn_bytes: crep.torn_bytes,
        file_mode_since: since,
        ..Default::default()
    };
    let doubt_from = since.map(|s| s.max(tail.committed));
    if let Some(doubt_from) = doubt_from.filter(|&d| d < tail.lsn) {
        (rep.committed_in_doubt, rep.rolled_back) =
            decide_in_doubt(segs, tail, doubt_from, binlog.gtid_state())?; // step 8
    }
    if since.is_none() && behind_only(&tail.state, binlog.gtid_state()) {
        let end = tail.lsn;
        if let Some(n) = filemode::catch_up(
            &**fs,
            &segs.metas,
            &segs.file,
            end,
            &mut binlog,
            crep.last_gtid,
        )? {
            rep.binlog_caught_up = n; // step 9
        }
    }
    (rep.binlog_ahead, rep.binlog_behind) = divergence(&tail.state, binlog.gtid_state()); // step 10
    Ok((binlog, rep))
}

/// Step 6: the LSN where the previous file-mode session started (None: no marker); a marker
/// beyond the end of the log `end` (in `last_path`) is `Corrupt`.
fn read_marker(
    fs: &dyn FileSystem,
    dir: &Path,
    end: Lsn,
    last_path: &Path,
) -> Result<Option<Lsn>, LogError> {
    let since = filemode::read_marker(fs, dir)?;
    if let Some(s) = since.filter(|&s| s > end) {
        return Err(LogError::corrupt(
            dir.join(filemode::MARKER_NAME),
            12,
            format!(
                "refusing to start: the file-mode marker says the last file-mode session \
                 started at LSN {s}, beyond the end of the log ({end} in {}): the log \
                 directory does not belong with this marker",
                last_path.display()
            ),
        ));
    }
    Ok(since)
}

/// Step 8: the records of the last segment from `doubt_from` on are committed while the
/// binlog (whose GTID state is `binlog`) holds them; from the first one it lacks on they are
/// cut off the log (`tail` then ends before it). Returns (committed, rolled back).
fn decide_in_doubt(
    segs: &Segments,
    tail: &mut Recovered,
    doubt_from: Lsn,
    binlog: &GtidState,
) -> Result<(u64, u64), LogError> {
    let in_binlog = |g: Gtid| binlog.next_seq(g.domain_id) > g.seq_no;
    let mut cut: Option<(Lsn, GtidState)> = None;
    let (mut yes, mut no) = (0u64, 0u64);
    let last = &segs.last;
    let mut cur = segs.last_cursor();
    scan_tail(&mut cur, &last.state, tail.lsn, &mut |rec_lsn, g, st| {
        if rec_lsn < doubt_from {
            return true;
        }
        if cut.is_none() && in_binlog(g) {
            yes += 1;
        } else {
            if cut.is_none() {
                cut = Some((rec_lsn, st.clone()));
            }
            no += 1;
        }
        true
    })?;
    if let Some((at, st)) = cut {
        zero_backwards(&last.path, &*segs.file, cur.offset_of(at), tail.end_off)?;
        tail.lsn = at;
        tail.state = st;
    }
    Ok((yes, no))
}

/// Step 11 (and the end of step 5): syncs the recovered segment; in file mode syncs the
/// binlog's current file and writes the marker of the new session, in engine mode removes
/// a marker.
fn start_session(
    fs: &dyn FileSystem,
    dir: &Path,
    segs: &Segments,
    tail: &Recovered,
    file_mode: Option<((ClassicBinlog, FileModeRecovery), u32)>,
) -> Result<(Option<FileMode>, Option<FileModeRecovery>), LogError> {
    let end_off = tail.cur.offset_of(tail.lsn);
    segs.file
        .sync_data()
        .map_err(|e| LogError::io(&segs.last.path, end_off, "fdatasync recovered segment", e))?;
    let Some(((binlog, rep), sync_binlog)) = file_mode else {
        filemode::remove_marker(fs, dir)?;
        return Ok((None, None));
    };
    // Recovery's decisions rest on what the binlog holds: make it durable (a crashed
    // process can leave it in the page cache only), then start the new session.
    if let Some(info) = binlog.files().last() {
        let f = fs
            .open(&info.path, false)
            .map_err(|e| LogError::io(&info.path, 0, "open classic binlog", e))?;
        f.sync_data()
            .map_err(|e| LogError::io(&info.path, 0, "fdatasync classic binlog", e))?;
    }
    fs.crash_point(filemode::CRASH_AFTER_CATCH_UP)
        .map_err(|e| LogError::io(dir, 0, filemode::CRASH_AFTER_CATCH_UP, e))?;
    filemode::write_marker(fs, dir, tail.lsn)?;
    let fm = FileMode {
        sync_binlog,
        base_fsyncs: binlog.fsyncs(),
        turn: Mutex::new(()),
        binlog: Mutex::new(BinlogFile {
            classic: binlog,
            groups_since_sync: 0,
        }),
    };
    Ok((Some(fm), Some(rep)))
}

/// The log's shared state at the recovered end.
fn build_inner(
    fs: Arc<dyn FileSystem>,
    opts: LogOptions,
    fde: Vec<u8>,
    segs: Segments,
    tail: Recovered,
    file_mode: Option<FileMode>,
    untrimmed: Untrimmed,
) -> Inner {
    let lsn = tail.lsn;
    let last = &segs.last;
    let writer = Writer::recovered(
        last,
        segs.file.clone(),
        lsn,
        tail.state,
        opts.state_interval,
        file_mode.is_some(),
        segs.last_version >= 2,
    )
    .in_segment_of(segs.file_len);
    let progress = Progress::recovered(lsn, segs.file, last.path.clone(), file_mode.is_some());
    Inner {
        shared: Shared {
            fs,
            durability: AtomicU8::new(opts.durability.level()),
            opts,
            fde,
            fsync_gate: Mutex::new(()),
            segments: SegmentList::new(segs.metas),
            progress: Mutex::new(progress),
            progress_cv: Condvar::new(),
            preparer: Default::default(),
            untrimmed,
            stats: Stats::default(),
            view_sizes: Default::default(),
            pins: Default::default(),
            gtid_strict: Default::default(),
        },
        sink: RwLock::new(None),
        queue: Mutex::new(Default::default()),
        gather: Default::default(),
        writer: Mutex::new(writer),
        sync_lock: Mutex::new(()),
        applier: Default::default(),
        flusher: Default::default(),
        file: file_mode,
    }
}

/// True when the binlog's position differs from the log's and it holds no group beyond the
/// log's in any domain (`next_seq`): the only case a catch-up can repair.
fn behind_only(log: &GtidState, binlog: &GtidState) -> bool {
    divergence(log, binlog).0 == 0 && log.pos() != binlog.pos()
}

/// (groups only the binlog holds, groups only the log holds), counted per domain.
fn divergence(log: &GtidState, binlog: &GtidState) -> (u64, u64) {
    let domains: std::collections::BTreeSet<u32> = log
        .entries()
        .iter()
        .chain(binlog.entries().iter())
        .map(|g| g.domain_id)
        .collect();
    let (mut ahead, mut behind) = (0, 0);
    for d in domains {
        let (l, c) = (log.next_seq(d), binlog.next_seq(d));
        ahead += c.saturating_sub(l);
        behind += l.saturating_sub(c);
    }
    (ahead, behind)
}

/// What `scan_tail` found.
struct TailScan {
    /// End of the valid records.
    end: Lsn,
    /// End of the last valid record that is not a SyncMark (`end` but for trailing marks).
    end_before_marks: Lsn,
    /// GTID state at `end`.
    state: GtidState,
    /// Why the scan stopped at `end`.
    why_end: String,
    /// The largest LSN a CommitMark names (the segment's start LSN when none).
    committed: Lsn,
}

/// Scans the segment of `cur` from its first record to the first invalid frame (or `limit`),
/// rebuilding the GTID state from `start_state`. `visit` sees each Transaction/Ddl record
/// (its LSN and GTID) with the state BEFORE it; returning false stops the scan there.
fn scan_tail(
    cur: &mut SegmentCursor,
    start_state: &GtidState,
    limit: Lsn,
    visit: &mut dyn FnMut(Lsn, Gtid, &GtidState) -> bool,
) -> Result<TailScan, LogError> {
    let mut state = start_state.clone();
    let mut lsn = cur.start_lsn;
    let mut committed = cur.start_lsn;
    // End of the last record that is not a SyncMark: a mark is framed in front of a group
    // in the same write, so marks with no record after them belong to a lost write.
    let mut end_before_marks = lsn;
    let why_end = loop {
        let f = match cur.frame_at(lsn, limit)? {
            Ok(f) => f,
            Err(e) => break e.to_string(),
        };
        match f.kind {
            RecordKind::Transaction | RecordKind::Ddl => match frame::record_gtid(f.events) {
                Ok(g) => {
                    if !visit(lsn, g, &state) {
                        break "stopped".to_string();
                    }
                    state.record(g);
                }
                Err(e) => break format!("bad GTID event: {e}"),
            },
            RecordKind::GtidState => match GtidState::decode(f.aux) {
                Ok((s, _)) => state = s,
                Err(e) => break format!("bad GTID state: {e}"),
            },
            RecordKind::CommitMark => match frame::commit_mark_lsn(f.aux) {
                // A mark only ever names an LSN at or before itself.
                Some(c) if c <= lsn => {
                    committed = committed.max(c);
                }
                _ => break format!("CommitMark at LSN {lsn} names a later LSN"),
            },
            RecordKind::SyncMark => match frame::sync_mark_lsns(f.aux) {
                Some((at, synced)) if at == lsn && synced <= lsn => {}
                _ => break format!("SyncMark at LSN {lsn} names another position"),
            },
        }
        if f.kind != RecordKind::SyncMark {
            end_before_marks = lsn + f.len as u64;
        }
        lsn += f.len as u64;
    };
    Ok(TailScan {
        end: lsn,
        end_before_marks,
        state,
        why_end,
        committed,
    })
}

/// Zeroes `[from, to)` from the end backwards (rolled-back records, a torn tail, cut damage:
/// a crash meanwhile leaves a prefix of them, which the next recovery decides the same way,
/// never zeros followed by leftover bytes).
fn zero_backwards(
    path: &Path,
    file: &dyn crate::fs::File,
    from: u64,
    to: u64,
) -> Result<(), LogError> {
    const CHUNK: u64 = 1 << 20;
    let zeros = vec![0u8; CHUNK.min(to.saturating_sub(from)) as usize];
    let mut end = to;
    while end > from {
        let start = end.saturating_sub(CHUNK).max(from);
        file.write_all_at(&zeros[..(end - start) as usize], start)
            .map_err(|e| LogError::io(path, start, "zero cut-off records", e))?;
        end = start;
    }
    Ok(())
}

/// What `check_tail` found after the end of the valid records.
enum Tail {
    /// What a crash can leave (the last non-zero byte, if any): cut it.
    Torn(Option<u64>),
    /// Damage a crash cannot explain: what was found.
    Damaged(String),
}

/// Checks a segment's size against the size its (version 2) header says it was preallocated
/// to (module docs, step 3); returns the size to use. A sealed segment may be shorter (trimmed
/// to its records: the next header's check makes sure they all fit); a last segment that is
/// shorter is extended back under `TruncateDamaged` (reported in `cuts`), refused otherwise.
fn check_size(
    path: &Path,
    file: &dyn crate::fs::File,
    len: u64,
    h: &SegmentHeader,
    is_last: bool,
    recovery: LogRecovery,
    cuts: &mut Vec<DamageCut>,
) -> Result<u64, LogError> {
    let Some(want) = h.file_len.filter(|&want| want != len) else {
        return Ok(len);
    };
    if !is_last && len < want {
        return Ok(len);
    }
    let reason = short_file(len, want);
    let repairable = is_last && want > len;
    if repairable && recovery == LogRecovery::TruncateDamaged {
        file.set_len(want)
            .map_err(|e| LogError::io(path, len, "extend truncated segment", e))?;
        cuts.push(DamageCut {
            path: path.to_path_buf(),
            offset: len,
            bytes: want - len,
            reason,
        });
        return Ok(want);
    }
    let hint = if repairable {
        accept_hint(len)
    } else {
        String::new()
    };
    Err(LogError::corrupt(path, len, format!("{reason}{hint}")))
}

/// Judges and cuts the tail of the last segment (module docs, step 5). The offsets are the
/// end of the kept records, the first bad byte and the file length. Returns the torn bytes
/// cut; damage is refused, or cut and reported in `cuts` under `TruncateDamaged`.
fn cut_tail(
    cur: &SegmentCursor,
    file: &dyn crate::fs::File,
    (end_off, bad_off, file_len): (u64, u64, u64),
    why_end: &str,
    recovery: LogRecovery,
    cuts: &mut Vec<DamageCut>,
) -> Result<u64, LogError> {
    debug_assert!(end_off <= bad_off && bad_off <= file_len);
    let path = &cur.path;
    match check_tail(cur, file, bad_off, file_len, MAX_UNSYNCED, why_end)? {
        Tail::Torn(last_nonzero) => {
            let upto = last_nonzero.map_or(bad_off, |l| l + 1);
            zero_backwards(path, file, end_off, upto)?;
            // Valid trailing SyncMarks and nothing after them: an idle mark (written ahead of
            // the next group, `flusher::idle_mark`), not a torn write; dropped, not reported.
            Ok(if upto <= bad_off { 0 } else { upto - end_off })
        }
        Tail::Damaged(reason) if recovery == LogRecovery::TruncateDamaged => {
            let last_nonzero = last_nonzero_in(path, file, bad_off, file_len)?;
            let upto = last_nonzero.map_or(bad_off, |l| l + 1);
            zero_backwards(path, file, end_off, upto)?;
            cuts.push(DamageCut {
                path: path.clone(),
                offset: bad_off,
                bytes: upto - end_off,
                reason,
            });
            Ok(0)
        }
        Tail::Damaged(reason) => Err(LogError::corrupt(
            path,
            bad_off,
            format!("{reason}{}", accept_hint(bad_off)),
        )),
    }
}

/// The sentence a refusal ends with when `LogRecovery::TruncateDamaged` would accept it.
fn accept_hint(offset: u64) -> String {
    format!(
        ". To accept the loss of every record from offset {offset} of this segment on \
         (acknowledged commits included), start once with --log-recovery=truncate-damaged"
    )
}

fn short_file(len: u64, want: u64) -> String {
    format!(
        "segment file is {len} bytes but was preallocated to {want} bytes: a crash cannot \
         change the size of a preallocated file, it was truncated or replaced"
    )
}

/// Decides whether the bytes after the end of the valid records (file offset `from`) are a
/// torn tail (module docs): non-zero bytes must lie in the window a crash can leave
/// unsynced (`bound` = `MAX_UNSYNCED`), and no SyncMark among them may say that `from` was
/// already synced. `why_end` says what is wrong with the record at `from`.
fn check_tail(
    cur: &SegmentCursor,
    file: &dyn crate::fs::File,
    from: u64,
    file_len: u64,
    bound: u64,
    why_end: &str,
) -> Result<Tail, LogError> {
    let path = &cur.path;
    let last = match tail_extent(path, file, from, file_len, bound)? {
        Err(at) => {
            return Ok(Tail::Damaged(format!(
                "{why_end}; yet data follows at offset {at}, farther than a crash can leave \
                 unsynced bytes ({bound} after the last good record): this is corruption, \
                 not a torn tail"
            )))
        }
        Ok(None) => return Ok(Tail::Torn(None)),
        Ok(Some(last)) => last,
    };
    let end_lsn = cur.lsn_at(from);
    // A mark's last bytes (the high bytes of its `synced_lsn`) are usually zeros: search up to
    // a whole mark past the last non-zero byte, or a mark ending the data is missed.
    let to = (last + 1 + frame::SYNC_MARK_LEN as u64).min(file_len);
    if let Some((at, synced)) = vouching_mark(cur, file, from, to, end_lsn)? {
        return Ok(Tail::Damaged(format!(
            "{why_end}; yet the SyncMark record at offset {} (LSN {at}) says the log had \
             been synced up to LSN {synced}, past this record (LSN {end_lsn}): these bytes \
             were durable, this is corruption, not a torn tail",
            cur.offset_of(at)
        )));
    }
    Ok(Tail::Torn(Some(last)))
}

/// The first SyncMark in file offsets `[from, to)` (found by content, `frame::find_sync_marks`)
/// whose synced LSN is past `end_lsn`, the LSN at `from`.
fn vouching_mark(
    cur: &SegmentCursor,
    file: &dyn crate::fs::File,
    from: u64,
    to: u64,
    end_lsn: Lsn,
) -> Result<Option<(Lsn, Lsn)>, LogError> {
    const CHUNK: u64 = 1 << 20;
    let overlap = frame::SYNC_MARK_LEN as u64 - 1;
    let mut buf = vec![0u8; (CHUNK + overlap) as usize];
    let mut off = from;
    while off < to {
        let n = (to - off).min(CHUNK + overlap) as usize;
        let got = read_full_at(file, &mut buf[..n], off)
            .map_err(|e| LogError::io(&cur.path, off, "read tail", e))?;
        let lsn = cur.lsn_at(off);
        if let Some(m) = frame::find_sync_marks(&buf[..got], lsn)
            .into_iter()
            .find(|&(_, synced)| synced > end_lsn)
        {
            return Ok(Some(m));
        }
        if got < n {
            break;
        }
        off += CHUNK;
    }
    Ok(None)
}

/// Past the end of the data the rest of a preallocated segment is zeros. Reading all of it
/// (up to 1 GiB) at every open would be slow, so one 4 KiB page per MiB is sampled: records
/// lost under a long run of zeros (a zeroed extent) still leave data in later pages, found
/// here. Returns the offset of a non-zero byte found.
fn sampled_data(
    path: &Path,
    file: &dyn crate::fs::File,
    from: u64,
    file_len: u64,
) -> Result<Option<u64>, LogError> {
    const STEP: u64 = 1 << 20;
    let mut page = [0u8; 4096];
    let mut off = from;
    while off < file_len {
        let n = (file_len - off).min(page.len() as u64) as usize;
        let got = read_full_at(file, &mut page[..n], off)
            .map_err(|e| LogError::io(path, off, "read tail", e))?;
        if let Some(i) = page[..got].iter().position(|b| *b != 0) {
            return Ok(Some(off + i as u64));
        }
        off = (off / STEP + 1) * STEP;
    }
    Ok(None)
}

/// The last non-zero byte in `[from, to)`, scanning all of it.
fn last_nonzero_in(
    path: &Path,
    file: &dyn crate::fs::File,
    from: u64,
    to: u64,
) -> Result<Option<u64>, LogError> {
    const CHUNK: u64 = 1 << 20;
    let mut buf = vec![0u8; CHUNK as usize];
    let (mut off, mut last) = (from, None);
    while off < to {
        let n = (to - off).min(CHUNK) as usize;
        let got = read_full_at(file, &mut buf[..n], off)
            .map_err(|e| LogError::io(path, off, "read tail", e))?;
        if let Some(i) = buf[..got].iter().rposition(|b| *b != 0) {
            last = Some(off + i as u64);
        }
        if got < n {
            break;
        }
        off += n as u64;
    }
    Ok(last)
}

/// The extent of the non-zero bytes after `from`, scanning the bounded window the module
/// docs derive (`bound` = `MAX_UNSYNCED`): `Ok(last non-zero byte)`, or `Err(offset)` of a
/// non-zero byte past the window (reached without a `bound`-long zero run), which no crash
/// can leave.
fn tail_extent(
    path: &Path,
    file: &dyn crate::fs::File,
    from: u64,
    file_len: u64,
    bound: u64,
) -> Result<Result<Option<u64>, u64>, LogError> {
    const CHUNK: usize = 1 << 20;
    let mut word = [0u8; 4];
    let got = read_full_at(file, &mut word, from)
        .map_err(|e| LogError::io(path, from, "read tail", e))?;
    let claimed = match u32::from_le_bytes(word) {
        0 => 0,
        _ if got < 4 => 0,
        n => FRAME_HEADER_LEN as u64 + n as u64,
    };
    let window_end = from
        .saturating_add(claimed.max(FRAME_HEADER_LEN as u64))
        .saturating_add(bound);
    let mut buf = vec![0u8; CHUNK];
    let mut last_nonzero: Option<u64> = None;
    let mut off = from;
    while off < file_len {
        let zero_run = off - last_nonzero.map_or(from, |l| l + 1);
        if off >= window_end && zero_run >= bound {
            return Ok(sampled_data(path, file, off, file_len)?.map_or(Ok(last_nonzero), Err));
        }
        let n = ((file_len - off) as usize).min(CHUNK);
        let got = read_full_at(file, &mut buf[..n], off)
            .map_err(|e| LogError::io(path, off, "read tail", e))?;
        let data = &buf[..got];
        // Bytes before `w` lie in the window a crash can explain; after it they must be zero.
        let w = (window_end.saturating_sub(off) as usize).min(got);
        if let Some(i) = data[..w].iter().rposition(|b| *b != 0) {
            last_nonzero = Some(off + i as u64);
        }
        if let Some(i) = data[w..].iter().position(|b| *b != 0) {
            // Past the window (even after a long zero run: records lost under zeros).
            return Ok(Err(off + (w + i) as u64));
        }
        if got < n {
            break;
        }
        off += n as u64;
    }
    Ok(Ok(last_nonzero))
}
