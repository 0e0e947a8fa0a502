//! Shortening sealed segments to their records, so a rotation does not keep a whole
//! preallocated segment on disk.
//!
//! Every segment is preallocated to its size (`max_binlog_size`, 1 GiB by default) so that a
//! commit's `fdatasync` never has file metadata to write. Once a rotation has sealed it, the
//! records end where the next segment starts, and the zeros after them are never written
//! again: they are disk held for nothing (three `FLUSH LOGS` on a new server held 4.1 GB).
//! Rotation queues the sealed segment here ([`Untrimmed::push`], by file handle, so a RESET
//! MASTER that reuses the name cannot make a trim hit the new file); opening the log, once
//! it has succeeded, trims every sealed segment still longer than its records (a trim the
//! last run did not reach), queueing only one whose trim failed, so it holds no file open
//! for the others.
//! [`Untrimmed::run`] (`Log::trim_sealed`, called by the engine's once-a-second housekeeping
//! and after `FLUSH BINARY LOGS`) shortens them, off the commit path.
//!
//! Invariants: only a sealed segment is trimmed, and never below the end of its records (the
//! next segment's start LSN, which rotation fixed before queueing it); a trim keeps the file's
//! modification time (retention's age of a segment found at open) and is not synced: after a
//! crash the file has either size, and recovery accepts any size of a sealed segment from the
//! end of its records to its preallocated size (`recovery.rs`, step 3); a failed trim stays
//! queued and is retried at the next run (the caller reports the error), restoring the time if
//! only that failed; a segment purged meanwhile is dropped from the queue, one not listed as
//! sealed yet stays in it.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use crate::error::LogError;
use crate::fs::File;
use crate::locks::lock;
use crate::Lsn;

/// A sealed segment whose file is longer than its records.
pub(crate) struct Trim {
    pub file: Arc<dyn File>,
    pub path: PathBuf,
    pub number: u64,
    pub start_lsn: Lsn,
    /// File offset where its records end: the size to trim it to.
    pub data_end: u64,
    /// Its modification time before the first cut (read then; restored after it, again on a
    /// retry if restoring it failed).
    pub mtime: Option<SystemTime>,
    /// The file was cut: its time is still to be restored.
    pub cut: bool,
}

impl Trim {
    pub fn new(
        file: Arc<dyn File>,
        path: PathBuf,
        number: u64,
        start_lsn: Lsn,
        data_end: u64,
    ) -> Self {
        Trim {
            file,
            path,
            number,
            start_lsn,
            data_end,
            mtime: None,
            cut: false,
        }
    }

    /// Trims the file to its records, keeping its modification time; the bytes released (0
    /// when it already was).
    pub fn apply(&mut self) -> Result<u64, LogError> {
        let (path, at) = (&self.path, self.data_end);
        let err = |doing: &'static str| move |e| LogError::io(path, at, doing, e);
        let len = self.file.len().map_err(err("stat sealed segment"))?;
        let mut freed = 0;
        if len > self.data_end {
            if !self.cut {
                self.mtime = self.file.modified().map_err(err("stat sealed segment"))?;
            }
            self.file
                .set_len(self.data_end)
                .map_err(err("shorten sealed segment to its records"))?;
            self.cut = true;
            freed = len - self.data_end;
        }
        if let (true, Some(t)) = (self.cut, self.mtime) {
            self.file
                .set_modified(t)
                .map_err(err("restore the modification time of a shortened segment"))?;
        }
        Ok(freed)
    }
}

/// What the segment list says of a queued segment now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Listed {
    Sealed,
    /// Still written (not sealed yet): stays queued.
    Current,
}

/// The queue of sealed segments to trim (module docs).
#[derive(Default)]
pub(crate) struct Untrimmed {
    queue: Mutex<Vec<Trim>>,
}

impl Untrimmed {
    pub fn push(&self, t: Trim) {
        lock(&self.queue).push(t);
    }

    /// Takes everything queued. Take it BEFORE listing the segments for [`Untrimmed::run`]:
    /// rotation lists a segment as sealed before it queues it, so whatever was taken is
    /// listed.
    pub fn take(&self) -> Vec<Trim> {
        std::mem::take(&mut *lock(&self.queue))
    }

    /// Trims the entries of `todo` that `listed` (number, start LSN, state of every segment;
    /// a copy taken after `todo`, so no lock is held while files shrink) says are sealed;
    /// entries of segments no longer listed (purged, or replaced by a reset) are dropped,
    /// those of the current segment stay queued. Returns the bytes released. The first
    /// failure stops the run and leaves it and what follows queued.
    pub fn run(&self, todo: Vec<Trim>, listed: &[(u64, Lsn, Listed)]) -> Result<u64, LogError> {
        let mut freed = 0;
        let mut rest = todo.into_iter();
        while let Some(mut t) = rest.next() {
            let state = listed
                .iter()
                .find(|s| s.0 == t.number && s.1 == t.start_lsn)
                .map(|s| s.2);
            match state {
                None => continue,
                Some(Listed::Current) => {
                    self.push(t);
                    continue;
                }
                Some(Listed::Sealed) => {}
            }
            match t.apply() {
                Ok(n) => freed += n,
                Err(e) => {
                    let mut q = lock(&self.queue);
                    q.push(t);
                    q.extend(rest);
                    return Err(e);
                }
            }
        }
        Ok(freed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::{FileSystem, SimFs};
    use std::path::Path;

    #[test]
    fn trims_live_sealed_segments_to_their_records_and_drops_purged_ones() {
        let fs = SimFs::new();
        let len_of = |n: u64| {
            let path = Path::new("/d").join(n.to_string());
            fs.open(&path, false).unwrap().len().unwrap()
        };
        let trim = |n: u64, start: Lsn, len: u64, data_end: u64| {
            let path = Path::new("/d").join(n.to_string());
            let file = fs.open(&path, true).unwrap();
            file.set_len(len).unwrap();
            Trim::new(file, path, n, start, data_end)
        };
        let q = Untrimmed::default();
        q.push(trim(1, 0, 1000, 100));
        q.push(trim(2, 10, 1000, 300));
        q.push(trim(3, 20, 50, 50));
        // Segment 1 was purged, and the sealed segment 2 has another start LSN (a reset made
        // a new one): only segment 3's entry matches, and it is already short.
        let segs = [(2, 99, Listed::Sealed), (3, 20, Listed::Sealed)];
        assert_eq!(q.run(q.take(), &segs).unwrap(), 0);
        assert!(q.take().is_empty());
        assert_eq!((len_of(1), len_of(2), len_of(3)), (1000, 1000, 50));
        q.push(trim(2, 10, 1000, 300));
        let segs = [(2, 10, Listed::Sealed), (3, 20, Listed::Current)];
        assert_eq!(q.run(q.take(), &segs).unwrap(), 700);
        assert_eq!(len_of(2), 300);
        // A segment listed as still written is not trimmed but stays queued, and is trimmed
        // once it is listed as sealed.
        q.push(trim(3, 20, 1000, 40));
        assert_eq!(q.run(q.take(), &segs).unwrap(), 0);
        assert_eq!(len_of(3), 1000);
        let segs = [(3, 20, Listed::Sealed)];
        assert_eq!(q.run(q.take(), &segs).unwrap(), 960);
        assert_eq!(len_of(3), 40);
    }
}
