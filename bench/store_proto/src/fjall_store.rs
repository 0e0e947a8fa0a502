//! fjall (an LSM tree) as the base store: each checkpoint is one *ingestion* (the sorted batch,
//! with the LSN under a reserved key that sorts last, written straight into table files and
//! registered as one new version), so fjall's journal and memtables are never written at all.
//! Snapshots are fjall snapshots (seqno).

use crate::base::{err, Base, Change, Snap};
use fjall::config::CompressionPolicy;
use fjall::{
    CompressionType, Database, Keyspace, KeyspaceCreateOptions, PersistMode, Readable, Snapshot,
};
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const LSN_KEY: &[u8] = b"\xff__lsn";

pub struct FjallStore {
    db: Database,
    data: Keyspace,
    dir: PathBuf,
}

impl FjallStore {
    pub fn open(dir: &Path, cache_bytes: usize) -> io::Result<Self> {
        std::fs::create_dir_all(dir)?;
        let db = Database::builder(dir)
            .cache_size(cache_bytes as u64)
            .manual_journal_persist(true)
            .open()
            .map_err(err)?;
        let data = db
            .keyspace("data", || {
                KeyspaceCreateOptions::default()
                    .data_block_compression_policy(CompressionPolicy::all(CompressionType::Lz4))
            })
            .map_err(err)?;
        Ok(FjallStore {
            db,
            data,
            dir: dir.to_path_buf(),
        })
    }
}

impl Base for FjallStore {
    fn checkpoint(&self, batch: &[Change], lsn: u64) -> io::Result<()> {
        let mut ingest = self.data.start_ingestion().map_err(err)?;
        for (k, v) in batch {
            match v {
                Some(v) => ingest.write(k.as_slice(), v.as_slice()),
                None => ingest.write_tombstone(k.as_slice()),
            }
            .map_err(err)?;
        }
        ingest.write(LSN_KEY, lsn.to_be_bytes()).map_err(err)?;
        ingest.finish().map_err(err)?;
        self.db.persist(PersistMode::SyncAll).map_err(err)
    }

    fn durable_lsn(&self) -> io::Result<u64> {
        let v = self.data.get(LSN_KEY).map_err(err)?;
        Ok(v.map_or(0, |v| {
            u64::from_be_bytes(v.as_ref().try_into().unwrap_or([0; 8]))
        }))
    }

    fn snapshot(&self) -> io::Result<Box<dyn Snap + '_>> {
        Ok(Box::new(FjallSnap {
            snap: self.db.snapshot(),
            data: &self.data,
        }))
    }

    fn disk_bytes(&self) -> u64 {
        crate::dir_bytes(&self.dir)
    }

    fn compact(&mut self) -> io::Result<()> {
        self.data.major_compact().map_err(err)?;
        self.settle();
        Ok(())
    }

    fn settle(&self) {
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(120)
            && (self.db.outstanding_flushes() > 0 || self.db.active_compactions() > 0)
        {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

struct FjallSnap<'a> {
    snap: Snapshot,
    data: &'a Keyspace,
}

impl Snap for FjallSnap<'_> {
    fn get(&self, key: &[u8]) -> io::Result<Option<Vec<u8>>> {
        Ok(self
            .snap
            .get(self.data, key)
            .map_err(err)?
            .map(|v| v.to_vec()))
    }

    fn scan(&self, from: &[u8], n: usize, f: &mut dyn FnMut(&[u8], &[u8])) -> io::Result<usize> {
        let mut seen = 0;
        for guard in self.snap.range(self.data, from..) {
            if seen == n {
                break;
            }
            let (k, v) = guard.into_inner().map_err(err)?;
            if k.as_ref() == LSN_KEY {
                break;
            }
            f(&k, &v);
            seen += 1;
        }
        Ok(seen)
    }
}
