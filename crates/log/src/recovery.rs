//! Opening the log: finding the segments, checking their headers, and recovering the tail.
//!
//! Steps:
//! 1. create the directory; delete a stale `next.olog.tmp` (it never holds records);
//!    if `reset.olog.tmp` exists, a reset was committed: finish it (`segment::finish_reset`);
//! 2. list `binlog-NNNNNN.olog` files; none: create segment 1 (start LSN 0, empty state);
//! 3. read every header: the numbers must be contiguous and match the names, start LSNs must
//!    increase and fit in the previous segment; anything else is `Corrupt` naming the file;
//! 4. scan the LAST segment from its first record, checking each CRC, rebuilding the GTID
//!    state (header state, then each record's GTID, GtidState records replacing it), to the
//!    first zero length word or invalid/truncated frame: that is the end of the log;
//! 5. a torn tail (non-zero bytes after the end) is overwritten with zeros and counted;
//!    the segment is then `fdatasync`ed (what a crashed process left in the page cache is not
//!    durable until then) and everything up to the end counts as durable.
//!
//! The tail scan of step 5 is bounded. The file was preallocated with zeros and synced, and
//! the appender never has more than `MAX_UNSYNCED` bytes written but not synced (it syncs
//! first, and chunks a larger write, see `appender.rs`). So after a crash, non-zero bytes past
//! the end `E` can only be: (a) the unsynced extent, at most `MAX_UNSYNCED` bytes starting at
//! or before `E` (everything before it was synced and is intact, so the first invalid frame is
//! not before it), or (b) when a record larger than the bound was being written in synced
//! chunks, its synced prefix from `E` on — whose length word, synced with it, is intact and
//! says how far it reaches. The scan therefore covers `E .. E + claimed + MAX_UNSYNCED`, where
//! `claimed` is the frame length the word at `E` states, at least the 9-byte frame header (a
//! sync that cut the header itself leaves the word unreliable but the synced prefix shorter
//! than 9 bytes; a garbage word only makes the scan longer), and then keeps going until it has seen a run of
//! `MAX_UNSYNCED` zero bytes after the last non-zero one (so garbage after a short zero run is
//! still found). It never reads past the file. A zero run inside the covered window does not
//! stop it: a torn write can leave zeros between kept pieces.
//!
//! Torn tail vs corruption: within that window, non-zero bytes are what a crash leaves and
//! are zeroed (`torn_bytes`); a non-zero byte PAST the window, reached without a
//! `MAX_UNSYNCED`-long zero run, cannot come from a crash, so the bad record at `E` is damage
//! in the middle of the log: `Corrupt` (refuse to start, naming the file and offset), never
//! silently truncated.
//!
//! Earlier segments are not scanned here: readers verify their CRCs as they read them, and a
//! bad record there is `Corrupt`, never skipped.

use std::path::Path;
use std::sync::atomic::AtomicU8;
use std::sync::{Arc, Condvar, Mutex, RwLock};

use onelog_binlog::GtidState;

use crate::appender::{Writer, MAX_UNSYNCED};
use crate::cursor::SegmentCursor;
use crate::error::LogError;
use crate::frame::{self, FRAME_HEADER_LEN};
use crate::fs::{read_full_at, FileSystem};
use crate::log::{Inner, Progress, SegmentMeta, Stats};
use crate::segment::{self, SegmentHeader, PREPARED_NAME, RESET_NAME};
use crate::{LogOptions, OpenReport, RecordKind};

const MIN_SEGMENT: u64 = 16 << 10;

pub(crate) fn open(
    fs: Arc<dyn FileSystem>,
    opts: LogOptions,
) -> Result<(Inner, OpenReport), LogError> {
    let dir = opts.dir.clone();
    if opts.segment_size < MIN_SEGMENT {
        return Err(LogError::io(
            &dir,
            0,
            "open log",
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!(
                    "segment_size {} is below the minimum {MIN_SEGMENT}",
                    opts.segment_size
                ),
            ),
        ));
    }
    fs.create_dir_all(&dir)
        .map_err(|e| LogError::io(&dir, 0, "create log directory", e))?;
    let tmp = dir.join(PREPARED_NAME);
    if fs.exists(&tmp) {
        fs.remove_file(&tmp)
            .map_err(|e| LogError::io(&tmp, 0, "remove stale prepared segment", e))?;
    }
    if fs.exists(&dir.join(RESET_NAME)) {
        segment::finish_reset(&*fs, &dir)?;
    }
    let fde = segment::format_description(&opts.server_version, opts.server_id);
    let mut numbers: Vec<u64> = fs
        .list_dir(&dir)
        .map_err(|e| LogError::io(&dir, 0, "list log directory", e))?
        .iter()
        .filter_map(|n| segment::parse_name(n))
        .collect();
    numbers.sort_unstable();
    if numbers.is_empty() {
        let file = segment::create_zeroed(&*fs, &tmp, opts.segment_size, &|| false)?;
        let header = SegmentHeader::encode(1, 0, &GtidState::new(), &fde);
        segment::install(&*fs, &dir, &tmp, &*file, &header, 1)?;
        numbers.push(1);
    }

    // Headers.
    let mut metas: Vec<SegmentMeta> = Vec::with_capacity(numbers.len());
    let mut file_lens = Vec::with_capacity(numbers.len());
    let mut last_file = None;
    for (i, &n) in numbers.iter().enumerate() {
        let path = dir.join(segment::file_name(n));
        let file = fs
            .open(&path, false)
            .map_err(|e| LogError::io(&path, 0, "open segment", e))?;
        let h = SegmentHeader::read(&*file, &path)?;
        let len = file
            .len()
            .map_err(|e| LogError::io(&path, 0, "stat segment", e))?;
        if h.number != n {
            return Err(LogError::corrupt(
                &path,
                16,
                format!(
                    "header says segment {} but the file name says {n}",
                    h.number
                ),
            ));
        }
        if let Some(prev) = metas.last() {
            if n != prev.number + 1 {
                return Err(LogError::corrupt(
                    &path,
                    0,
                    format!("segment {} is missing before it", prev.number + 1),
                ));
            }
            let cap = file_lens[i - 1] - prev.header_len;
            if h.start_lsn < prev.start_lsn || h.start_lsn - prev.start_lsn > cap {
                return Err(LogError::corrupt(
                    &path,
                    24,
                    format!(
                        "start LSN {} does not follow segment {} (start LSN {}, room for {cap} bytes)",
                        h.start_lsn, prev.number, prev.start_lsn
                    ),
                ));
            }
        }
        if len < h.header_len {
            return Err(LogError::corrupt(
                &path,
                len,
                "segment shorter than its header",
            ));
        }
        if let Some(prev) = metas.last_mut() {
            prev.end_lsn = Some(h.start_lsn);
        }
        file_lens.push(len);
        metas.push(SegmentMeta {
            number: n,
            path: path.clone(),
            start_lsn: h.start_lsn,
            end_lsn: None,
            header_len: h.header_len,
            state: Arc::new(h.state),
        });
        last_file = Some(file);
    }
    let (Some(last), Some(file), Some(&file_len)) =
        (metas.last().cloned(), last_file, file_lens.last())
    else {
        return Err(LogError::corrupt(&dir, 0, "no segment"));
    };

    // Tail scan of the last segment.
    let mut state = (*last.state).clone();
    let mut cur = SegmentCursor::new(
        file.clone(),
        last.path.clone(),
        last.number,
        last.header_len,
        last.start_lsn,
    );
    let file_end_lsn = last.start_lsn + (file_len - last.header_len);
    let mut lsn = last.start_lsn;
    let why_end = loop {
        let f = match cur.frame_at(lsn, file_end_lsn)? {
            Ok(f) => f,
            Err(e) => break e.to_string(),
        };
        match f.kind {
            RecordKind::Transaction | RecordKind::Ddl => match frame::record_gtid(f.events) {
                Ok(g) => state.record(g),
                Err(e) => break format!("bad GTID event: {e}"),
            },
            RecordKind::GtidState => match GtidState::decode(f.aux) {
                Ok((s, _)) => state = s,
                Err(e) => break format!("bad GTID state: {e}"),
            },
        }
        lsn += f.len as u64;
    };
    let end_off = cur.offset_of(lsn);
    let torn_bytes = zero_tail(
        &last.path,
        &*file,
        end_off,
        file_len,
        MAX_UNSYNCED,
        &why_end,
    )?;
    file.sync_data()
        .map_err(|e| LogError::io(&last.path, end_off, "fdatasync recovered segment", e))?;

    let report = OpenReport {
        segment: last.number,
        segment_path: last.path.clone(),
        offset: end_off,
        end_lsn: lsn,
        gtid_state: state.clone(),
        torn_bytes,
    };
    let writer = Writer {
        seg_number: last.number,
        seg_path: last.path.clone(),
        seg_file: file.clone(),
        seg_start_lsn: last.start_lsn,
        header_len: last.header_len,
        lsn,
        written: lsn,
        pending: Vec::with_capacity(64 << 10),
        state,
        next_state_lsn: lsn + opts.state_interval.max(1),
    };
    let progress = Progress {
        end: lsn,
        written: lsn,
        durable: lsn,
        cur_file: file,
        cur_path: last.path.clone(),
        failed: None,
        closed: false,
    };
    let inner = Inner {
        fs,
        durability: AtomicU8::new(opts.durability.level()),
        opts,
        fde,
        sink: RwLock::new(None),
        queue: Mutex::new(Default::default()),
        gather: Default::default(),
        writer: Mutex::new(writer),
        sync_lock: Mutex::new(()),
        fsync_gate: Mutex::new(()),
        segments: RwLock::new(metas),
        progress: Mutex::new(progress),
        progress_cv: Condvar::new(),
        preparer: Default::default(),
        flusher: Default::default(),
        stats: Stats::default(),
    };
    Ok((inner, report))
}

/// Zeroes the non-zero bytes after `from` (a torn tail), scanning the bounded window the
/// module docs derive (`bound` = `MAX_UNSYNCED`); returns how many bytes it covered (from
/// `from` to the last non-zero byte). Data past the window (reached without a `bound`-long
/// zero run) is `Corrupt`: `why_end` says what is wrong with the record at `from`.
fn zero_tail(
    path: &Path,
    file: &dyn crate::fs::File,
    from: u64,
    file_len: u64,
    bound: u64,
    why_end: &str,
) -> Result<u64, LogError> {
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
            break;
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
            let at = off + (w + i) as u64;
            if at - last_nonzero.map_or(from, |l| l + 1) >= bound {
                // Past a zero run as long as the bound: nothing a crash or the log left.
                break;
            }
            return Err(LogError::corrupt(
                path,
                from,
                format!(
                    "{why_end}; yet data follows at offset {at}, farther than a crash can \
                     leave unsynced bytes ({bound} after the last good record): this is \
                     corruption, not a torn tail"
                ),
            ));
        }
        if got < n {
            break;
        }
        off += n as u64;
    }
    let Some(last) = last_nonzero else {
        return Ok(0);
    };
    let torn = last + 1 - from;
    let zeros = vec![0u8; CHUNK.min(torn as usize)];
    let mut off = from;
    while off <= last {
        let n = ((last + 1 - off) as usize).min(zeros.len());
        file.write_all_at(&zeros[..n], off)
            .map_err(|e| LogError::io(path, off, "zero torn tail", e))?;
        off += n as u64;
    }
    Ok(torn)
}
