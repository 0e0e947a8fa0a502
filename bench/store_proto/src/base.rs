//! The narrow interface every candidate base store implements for the prototype.
//!
//! The design under test (docs/PAGED_STORE.md): commits go to an in-memory delta (today's MVCC
//! maps); a checkpoint writes a frozen delta into the base store in one batch and makes it
//! durable together with the LSN it covers. The base store is written *only* by checkpoints,
//! so its own journal (if it has one) is never on the commit path. Reads merge the delta with a
//! snapshot of the base.

use std::io;
use std::path::Path;

/// One change of a checkpoint batch: `None` deletes the key.
pub type Change = (Vec<u8>, Option<Vec<u8>>);

/// A base store opened on a directory with a cache of a given size.
pub trait Base: Send + Sync {
    /// Writes one checkpoint's batch (keys ascending, each at most once) and makes it durable
    /// together with `lsn`, atomically: after a crash either all of it and `lsn` are there, or
    /// none of it and the previous LSN.
    fn checkpoint(&self, batch: &[Change], lsn: u64) -> io::Result<()>;
    /// The LSN of the newest durable checkpoint (0 for a new store).
    fn durable_lsn(&self) -> io::Result<u64>;
    /// A consistent read view (a REPEATABLE READ reader keeps one for its transaction).
    fn snapshot(&self) -> io::Result<Box<dyn Snap + '_>>;
    /// Bytes the store occupies on disk now.
    fn disk_bytes(&self) -> u64;
    /// Waits (bounded) until background work (flushes, compactions) is done, for a fair size.
    fn settle(&self) {}
    /// Compacts the store offline (no snapshot open), so its size is the live data's.
    fn compact(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A consistent read view of a base store.
pub trait Snap {
    fn get(&self, key: &[u8]) -> io::Result<Option<Vec<u8>>>;
    /// Visits up to `n` pairs with key >= `from`, ascending; returns how many it visited.
    fn scan(&self, from: &[u8], n: usize, f: &mut dyn FnMut(&[u8], &[u8])) -> io::Result<usize>;
}

/// Visits every key from `from` on whose first byte is at most `last_prefix`, ascending, in
/// pages of 10,000 reads of one snapshot; returns how many it visited.
pub fn scan_all(
    snap: &dyn Snap,
    mut from: Vec<u8>,
    last_prefix: u8,
    f: &mut dyn FnMut(&[u8], &[u8]),
) -> io::Result<u64> {
    let mut visited = 0;
    loop {
        let mut last = None;
        let seen = snap.scan(&from, 10_000, &mut |k, v| {
            if k.first().is_some_and(|&b| b <= last_prefix) {
                f(k, v);
                visited += 1;
            }
            last = Some(k.to_vec());
        })?;
        match last {
            Some(mut k) if seen == 10_000 && k.first().is_some_and(|&b| b <= last_prefix) => {
                k.push(0);
                from = k;
            }
            _ => return Ok(visited),
        }
    }
}

/// Opens the named store in `dir` with a cache of `cache_bytes`.
pub fn open(name: &str, dir: &Path, cache_bytes: usize) -> io::Result<Box<dyn Base>> {
    match name {
        "redb" => Ok(Box::new(crate::redb_store::RedbStore::open(
            dir,
            cache_bytes,
        )?)),
        "fjall" => Ok(Box::new(crate::fjall_store::FjallStore::open(
            dir,
            cache_bytes,
        )?)),
        "memory" => Ok(Box::new(crate::memory::MemStore::open(dir)?)),
        #[cfg(feature = "rocks")]
        "rocksdb" => Ok(Box::new(crate::rocks_store::RocksStore::open(
            dir,
            cache_bytes,
        )?)),
        other => Err(io::Error::other(format!("unknown store {other}"))),
    }
}

/// Turns any store error into an `io::Error` carrying its text.
pub fn err(e: impl std::fmt::Display) -> io::Error {
    io::Error::other(e.to_string())
}
