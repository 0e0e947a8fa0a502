//! The file-system seam: every byte the log reads or writes goes through [`FileSystem`] and
//! [`File`], so tests can swap the real disk ([`StdFs`]) for a simulated one ([`SimFs`]) that
//! models durability exactly and injects faults.
//!
//! Contract both implementations keep:
//! - `File::write_all_at` data is durable only after `File::sync_data` of that file returns Ok;
//! - creating, renaming or removing a directory entry is durable only after `sync_dir` of the
//!   parent directory returns Ok;
//! - `rename` atomically replaces the target;
//! - `crash_point` is a no-op on a real disk; on `SimFs` an armed point "crashes" the machine.
//!
//! Invariants: the contract below, kept by both implementations (the simulated one asserts its
//! side: a synced file with nothing pending is durable as written).

pub mod sim;

use std::io;
use std::path::Path;
use std::sync::Arc;

pub use sim::{SimCounters, SimFs};

/// Bytes of a file written front to back (a checkpoint file, a segment's zero-fill) left
/// unsynced at most while it is written: synced once at its end, hundreds of megabytes of
/// writeback queued at once ahead of every commit's fsync (issue 14 part 3; the role of
/// RocksDB's `bytes_per_sync`).
pub const SYNC_STEP: u64 = 8 << 20;

/// Syncs a file written front to back every [`SYNC_STEP`] bytes.
pub struct StepSync {
    synced: u64,
}

impl StepSync {
    /// Writing starts at offset `start`.
    pub fn from(start: u64) -> StepSync {
        StepSync { synced: start }
    }

    /// After a write ending at `end`: syncs `file` once a step's worth is unsynced.
    pub fn wrote(&mut self, file: &dyn File, end: u64) -> io::Result<()> {
        if end - self.synced >= SYNC_STEP {
            file.sync_data()?;
            self.synced = end;
        }
        Ok(())
    }
}

/// A directory tree of files (the real one or a simulated one).
pub trait FileSystem: Send + Sync + 'static {
    fn create_dir_all(&self, path: &Path) -> io::Result<()>;
    /// Opens a file for reading and writing, creating it when `create`.
    fn open(&self, path: &Path, create: bool) -> io::Result<Arc<dyn File>>;
    fn remove_file(&self, path: &Path) -> io::Result<()>;
    /// Atomically replaces `to` with `from`.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Names of the entries of a directory.
    fn list_dir(&self, path: &Path) -> io::Result<Vec<String>>;
    fn exists(&self, path: &Path) -> bool;
    /// Makes creations, renames and removals of entries in `path` durable.
    fn sync_dir(&self, path: &Path) -> io::Result<()>;
    /// When the file was last written (its mtime); None where the file system does not keep
    /// it (the default, and `SimFs`). Retention takes a recovered segment's age from it.
    fn modified(&self, path: &Path) -> io::Result<Option<std::time::SystemTime>> {
        let _ = path;
        Ok(None)
    }
    /// A named crash point (e.g. "commit.after_write", "rotate.after_header"). Real fs:
    /// Ok(()). SimFs: if armed, "crashes" here and returns an error.
    fn crash_point(&self, name: &'static str) -> io::Result<()> {
        let _ = name;
        Ok(())
    }
}

/// An open file: positioned reads and writes, `fdatasync`.
#[allow(clippy::len_without_is_empty)]
pub trait File: Send + Sync {
    /// Reads up to `buf.len()` bytes at `offset`; fewer only at the end of the file.
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize>;
    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()>;
    /// `fdatasync`: makes the data written so far (and the size) durable.
    fn sync_data(&self) -> io::Result<()>;
    fn len(&self) -> io::Result<u64>;
    fn set_len(&self, len: u64) -> io::Result<()>;
    /// Its modification time; None where the file system keeps none (the default).
    fn modified(&self) -> io::Result<Option<std::time::SystemTime>> {
        Ok(None)
    }
    /// Sets its modification time (a no-op where the file system keeps none). A shortened
    /// sealed segment gets its time back: retention takes its age from it (`trim.rs`).
    fn set_modified(&self, time: std::time::SystemTime) -> io::Result<()> {
        let _ = time;
        Ok(())
    }
}

/// Reads exactly `buf.len()` bytes at `offset` unless the file ends first; returns the count.
pub(crate) fn read_full_at(file: &dyn File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        let n = file.read_at(&mut buf[done..], offset + done as u64)?;
        if n == 0 {
            break;
        }
        done += n;
    }
    Ok(done)
}

/// The real file system (`pread`/`pwrite`, `fdatasync`, directory `fsync`).
#[derive(Debug, Default, Clone, Copy)]
pub struct StdFs;

impl StdFs {
    pub fn new() -> Arc<StdFs> {
        Arc::new(StdFs)
    }
}

struct StdFile(std::fs::File);

impl FileSystem for StdFs {
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        std::fs::create_dir_all(path)
    }

    fn open(&self, path: &Path, create: bool) -> io::Result<Arc<dyn File>> {
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(create)
            .truncate(false)
            .open(path)?;
        Ok(Arc::new(StdFile(f)))
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        std::fs::remove_file(path)
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        std::fs::rename(from, to)
    }

    fn list_dir(&self, path: &Path) -> io::Result<Vec<String>> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(path)? {
            out.push(e?.file_name().to_string_lossy().into_owned());
        }
        Ok(out)
    }

    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }

    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        std::fs::File::open(path)?.sync_all()
    }

    fn modified(&self, path: &Path) -> io::Result<Option<std::time::SystemTime>> {
        Ok(Some(std::fs::metadata(path)?.modified()?))
    }
}

impl File for StdFile {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        std::os::unix::fs::FileExt::read_at(&self.0, buf, offset)
    }

    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        std::os::unix::fs::FileExt::write_all_at(&self.0, buf, offset)
    }

    fn sync_data(&self) -> io::Result<()> {
        self.0.sync_data()
    }

    fn len(&self) -> io::Result<u64> {
        Ok(self.0.metadata()?.len())
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        self.0.set_len(len)
    }

    fn modified(&self) -> io::Result<Option<std::time::SystemTime>> {
        Ok(Some(self.0.metadata()?.modified()?))
    }

    fn set_modified(&self, time: std::time::SystemTime) -> io::Result<()> {
        self.0.set_modified(time)
    }
}
