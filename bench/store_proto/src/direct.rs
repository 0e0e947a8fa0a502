//! The rejected shape, kept measurable: redb written by every commit group (a non-durable
//! transaction per group, a durable one per checkpoint) instead of by checkpoints only. redb
//! frees pages only at durable commits, so the file grows with the number of non-durable
//! commits between checkpoints.

use crate::base::err;
use crate::workload::{mix, row_value};
use redb::{Database, Durability, TableDefinition};
use std::io;
use std::path::Path;
use std::time::Instant;

const T: TableDefinition<u64, &[u8]> = TableDefinition::new("rows");

/// Loads `rows` rows (distinct ids in random order) in groups of 1,000 (one non-durable commit each), one durable commit at
/// the end, then 20,000 groups of 10 updates with a durable commit every 1,000 groups.
pub fn run(dir: &Path, rows: u64, cache: usize) -> io::Result<String> {
    std::fs::create_dir_all(dir)?;
    let path = dir.join("direct.redb");
    let db = Database::builder()
        .set_cache_size(cache)
        .create(&path)
        .map_err(err)?;
    let commit = |keys: &mut dyn Iterator<Item = u64>, durability| -> io::Result<()> {
        let mut tx = db.begin_write().map_err(err)?;
        tx.set_durability(durability).map_err(err)?;
        {
            let mut t = tx.open_table(T).map_err(err)?;
            for id in keys {
                t.insert(id, row_value(id as u32, id).as_slice())
                    .map_err(err)?;
            }
        }
        tx.commit().map_err(err)
    };
    let t = Instant::now();
    let mut first = 1;
    while first <= rows {
        let last = (first + 999).min(rows);
        commit(
            &mut (first..=last).map(|i| 1 + mix(i) % rows),
            Durability::None,
        )?;
        first = last + 1;
    }
    commit(&mut std::iter::empty(), Durability::Immediate)?;
    let load_s = t.elapsed().as_secs_f64();
    let after_load = std::fs::metadata(&path)?.len() >> 20;
    let mut x = 5u64;
    let t = Instant::now();
    for g in 0..20_000u32 {
        commit(
            &mut (0..10).map(|_| {
                x = mix(x);
                1 + x % rows
            }),
            Durability::None,
        )?;
        if g % 1000 == 999 {
            commit(&mut std::iter::empty(), Durability::Immediate)?;
        }
    }
    let per_group = t.elapsed().as_secs_f64() * 1e6 / 20_000.0;
    let end = std::fs::metadata(&path)?.len() >> 20;
    let raw = (rows * (9 + 182)) >> 20;
    Ok(format!(
        "redb written per commit group: {rows} rows (~{raw} MB of keys and values) loaded in {load_s:.1} s by 1,000-row non-durable commits: file {after_load} MB; 20,000 groups of 10 updates ({per_group:.0} µs/group, a durable commit per 1,000): file {end} MB"
    ))
}
