//! Shortening sealed segments to their records, so a rotation does not keep a whole
//! preallocated segment on disk.
//!
//! Every segment is preallocated to its size (`max_binlog_size`, 1 GiB by default) so that a
//! commit's `fdatasync` never has file metadata to write. Once a rotation has sealed it, the
//! records end where the next segment starts, and the zeros after them are never written
//! again: they are disk held for nothing (three `FLUSH LOGS` on a new server held 4.1 GB).
//! Rotation queues the sealed segment here ([`Untrimmed::push`], by file handle, so a RESET
//! MASTER that reuses the name cannot make a trim hit the new file); opening the log queues
//! every sealed segment still longer than its records (a trim the last run did not reach).
//! [`Untrimmed::run`] (`Log::trim_sealed`, called by the engine's once-a-second housekeeping
//! and after `FLUSH BINARY LOGS`) shortens them, off the commit path.
//!
//! Invariants: only a sealed segment is trimmed, and never below the end of its records (the
//! next segment's start LSN, which rotation fixed before queueing it); a trim keeps the file's
//! modification time (retention's age of a segment found at open) and is not synced: after a
//! crash the file has either size, and recovery accepts any size of a sealed segment from the
//! end of its records to its preallocated size (`recovery.rs`, step 3); a failed trim stays
//! queued and is retried at the next run (the caller reports the error), a segment purged
//! meanwhile is dropped from the queue.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

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

    pub fn is_empty(&self) -> bool {
        lock(&self.queue).is_empty()
    }

    /// Trims what is queued and still among the `sealed` segments (number and start LSN, a
    /// copy taken before, so no lock is held while files shrink); returns the bytes released.
    /// The first failure stops the run and leaves it and what follows queued.
    pub fn run(&self, sealed: &[(u64, Lsn)]) -> Result<u64, LogError> {
        let todo = std::mem::take(&mut *lock(&self.queue));
        let mut freed = 0;
        let mut rest = todo.into_iter();
        while let Some(t) = rest.next() {
            if !sealed.contains(&(t.number, t.start_lsn)) {
                continue;
            }
            match trim_one(&t) {
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

/// Trims one file to its records; the bytes released (0 when it already was).
fn trim_one(t: &Trim) -> Result<u64, LogError> {
    let at = |doing: &'static str| {
        let path = t.path.clone();
        move |e| LogError::io(path, t.data_end, doing, e)
    };
    let len = t.file.len().map_err(at("stat sealed segment"))?;
    if len <= t.data_end {
        return Ok(0);
    }
    t.file
        .trim(t.data_end)
        .map_err(at("shorten sealed segment to its records"))?;
    Ok(len - t.data_end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::{FileSystem, SimFs};
    use std::path::Path;

    #[test]
    fn trims_live_sealed_segments_to_their_records_and_drops_purged_ones() {
        let fs = SimFs::new();
        let trim = |n: u64, start: Lsn, len: u64, data_end: u64| {
            let path = Path::new("/d").join(n.to_string());
            let file = fs.open(&path, true).unwrap();
            file.set_len(len).unwrap();
            Trim {
                file,
                path,
                number: n,
                start_lsn: start,
                data_end,
            }
        };
        let q = Untrimmed::default();
        let (a, b, c) = (
            trim(1, 0, 1000, 100),
            trim(2, 10, 1000, 300),
            trim(3, 20, 50, 50),
        );
        let (fa, fb, fc) = (a.file.clone(), b.file.clone(), c.file.clone());
        q.push(a);
        q.push(b);
        q.push(c);
        // Segment 1 was purged, and the sealed segment 2 has another start LSN (a reset made
        // a new one): only segment 3's entry matches, and it is already short.
        let segs = [(2, 99), (3, 20)];
        assert_eq!(q.run(&segs).unwrap(), 0);
        assert!(q.is_empty());
        assert_eq!(
            (fa.len().unwrap(), fb.len().unwrap(), fc.len().unwrap()),
            (1000, 1000, 50)
        );
        q.push(trim(2, 10, 1000, 300));
        let segs = [(2, 10)];
        assert_eq!(q.run(&segs).unwrap(), 700);
        assert_eq!(
            fs.open(Path::new("/d/2"), false).unwrap().len().unwrap(),
            300
        );
        // A segment that is not sealed (the current one) is never trimmed, even if queued.
        q.push(trim(3, 20, 1000, 40));
        assert_eq!(q.run(&segs).unwrap(), 0);
        assert_eq!(
            fs.open(Path::new("/d/3"), false).unwrap().len().unwrap(),
            1000
        );
    }
}
