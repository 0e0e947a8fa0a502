//! redb as the base store: one write transaction per checkpoint, `Durability::Immediate`
//! (redb's two commit slots + checksums make it atomic), the LSN in a second table of the same
//! transaction. Snapshots are redb read transactions (copy-on-write pages pin the old version).

use crate::base::{err, Base, Change, Snap};
use redb::{Database, Durability, ReadTransaction, ReadableDatabase, TableDefinition};
use std::io;
use std::path::{Path, PathBuf};

const DATA: TableDefinition<&[u8], &[u8]> = TableDefinition::new("data");
const META: TableDefinition<&str, u64> = TableDefinition::new("meta");

pub struct RedbStore {
    db: Database,
    path: PathBuf,
}

impl RedbStore {
    pub fn open(dir: &Path, cache_bytes: usize) -> io::Result<Self> {
        std::fs::create_dir_all(dir)?;
        let path = dir.join("store.redb");
        let db = Database::builder()
            .set_cache_size(cache_bytes)
            .create(&path)
            .map_err(err)?;
        let tx = db.begin_write().map_err(err)?;
        tx.open_table(DATA).map_err(err)?;
        tx.open_table(META).map_err(err)?;
        tx.commit().map_err(err)?;
        Ok(RedbStore { db, path })
    }
}

impl Base for RedbStore {
    fn checkpoint(&self, batch: &[Change], lsn: u64) -> io::Result<()> {
        let mut tx = self.db.begin_write().map_err(err)?;
        tx.set_durability(Durability::Immediate).map_err(err)?;
        // The allocator state is saved with each checkpoint, so reopening after a crash does not
        // walk the whole file (STORE_PROTO_REDB_FULL_REPAIR=1 measures the walk instead).
        tx.set_quick_repair(std::env::var_os("STORE_PROTO_REDB_FULL_REPAIR").is_none());
        {
            let mut t = tx.open_table(DATA).map_err(err)?;
            for (k, v) in batch {
                match v {
                    Some(v) => {
                        t.insert(k.as_slice(), v.as_slice()).map_err(err)?;
                    }
                    None => {
                        t.remove(k.as_slice()).map_err(err)?;
                    }
                }
            }
            let mut m = tx.open_table(META).map_err(err)?;
            m.insert("lsn", lsn).map_err(err)?;
        }
        tx.commit().map_err(err)
    }

    fn durable_lsn(&self) -> io::Result<u64> {
        let tx = self.db.begin_read().map_err(err)?;
        let m = tx.open_table(META).map_err(err)?;
        Ok(m.get("lsn").map_err(err)?.map_or(0, |v| v.value()))
    }

    fn snapshot(&self) -> io::Result<Box<dyn Snap + '_>> {
        let tx = self.db.begin_read().map_err(err)?;
        let table = tx.open_table(DATA).map_err(err)?;
        Ok(Box::new(RedbSnap { _tx: tx, table }))
    }

    fn compact(&mut self) -> io::Result<()> {
        while self.db.compact().map_err(err)? {}
        Ok(())
    }

    fn disk_bytes(&self) -> u64 {
        std::fs::metadata(&self.path).map_or(0, |m| m.len())
    }
}

struct RedbSnap {
    _tx: ReadTransaction,
    table: redb::ReadOnlyTable<&'static [u8], &'static [u8]>,
}

impl Snap for RedbSnap {
    fn get(&self, key: &[u8]) -> io::Result<Option<Vec<u8>>> {
        Ok(self
            .table
            .get(key)
            .map_err(err)?
            .map(|v| v.value().to_vec()))
    }

    fn scan(&self, from: &[u8], n: usize, f: &mut dyn FnMut(&[u8], &[u8])) -> io::Result<usize> {
        let mut seen = 0;
        for item in self.table.range(from..).map_err(err)? {
            if seen == n {
                break;
            }
            let (k, v) = item.map_err(err)?;
            f(k.value(), v.value());
            seen += 1;
        }
        Ok(seen)
    }
}
