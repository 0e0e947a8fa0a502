//! Today's store, for comparison: every row in persistent in-memory maps, and a checkpoint that
//! serializes all of it to one file (write, fsync, rename), whatever changed.

use crate::base::{Base, Change, Snap};
use imbl::OrdMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

type Map = OrdMap<Vec<u8>, Arc<Vec<u8>>>;

pub struct MemStore {
    map: RwLock<Map>,
    lsn: AtomicU64,
    dir: PathBuf,
}

impl MemStore {
    pub fn open(dir: &Path) -> io::Result<Self> {
        std::fs::create_dir_all(dir)?;
        let mut map = Map::new();
        let mut lsn = 0;
        if let Ok(bytes) = std::fs::read(dir.join("checkpoint")) {
            let (head, mut rest) = bytes.split_at(8.min(bytes.len()));
            lsn = u64::from_be_bytes(head.try_into().unwrap_or([0; 8]));
            while rest.len() >= 8 {
                let kl = u32::from_be_bytes(rest[..4].try_into().unwrap_or([0; 4])) as usize;
                let vl = u32::from_be_bytes(rest[4..8].try_into().unwrap_or([0; 4])) as usize;
                if rest.len() < 8 + kl + vl {
                    return Err(io::Error::other("truncated checkpoint"));
                }
                map.insert(
                    rest[8..8 + kl].to_vec(),
                    Arc::new(rest[8 + kl..8 + kl + vl].to_vec()),
                );
                rest = &rest[8 + kl + vl..];
            }
        }
        Ok(MemStore {
            map: RwLock::new(map),
            lsn: AtomicU64::new(lsn),
            dir: dir.to_path_buf(),
        })
    }
}

impl Base for MemStore {
    fn checkpoint(&self, batch: &[Change], lsn: u64) -> io::Result<()> {
        // Applied to a copy and published under the lock, as the engine publishes a root.
        let mut snapshot = self
            .map
            .read()
            .map_err(|_| io::Error::other("poisoned"))?
            .clone();
        for (k, v) in batch {
            match v {
                Some(v) => snapshot.insert(k.clone(), Arc::new(v.clone())),
                None => snapshot.remove(k),
            };
        }
        *self.map.write().map_err(|_| io::Error::other("poisoned"))? = snapshot.clone();
        let tmp = self.dir.join("checkpoint.tmp");
        let mut out = io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&tmp)?);
        out.write_all(&lsn.to_be_bytes())?;
        for (k, v) in &snapshot {
            out.write_all(&(k.len() as u32).to_be_bytes())?;
            out.write_all(&(v.len() as u32).to_be_bytes())?;
            out.write_all(k)?;
            out.write_all(v)?;
        }
        let file = out.into_inner().map_err(|e| e.into_error())?;
        file.sync_data()?;
        std::fs::rename(&tmp, self.dir.join("checkpoint"))?;
        self.lsn.store(lsn, Ordering::Release);
        Ok(())
    }

    fn durable_lsn(&self) -> io::Result<u64> {
        Ok(self.lsn.load(Ordering::Acquire))
    }

    fn snapshot(&self) -> io::Result<Box<dyn Snap + '_>> {
        let map = self
            .map
            .read()
            .map_err(|_| io::Error::other("poisoned"))?
            .clone();
        Ok(Box::new(MemSnap(map)))
    }

    fn disk_bytes(&self) -> u64 {
        crate::dir_bytes(&self.dir)
    }
}

struct MemSnap(Map);

impl Snap for MemSnap {
    fn get(&self, key: &[u8]) -> io::Result<Option<Vec<u8>>> {
        Ok(self.0.get(key).map(|v| v.to_vec()))
    }

    fn scan(&self, from: &[u8], n: usize, f: &mut dyn FnMut(&[u8], &[u8])) -> io::Result<usize> {
        let mut seen = 0;
        for (k, v) in self.0.range(from.to_vec()..).take(n) {
            f(k, v);
            seen += 1;
        }
        Ok(seen)
    }
}
