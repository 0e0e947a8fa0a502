//! `onelog check` of the paged store's base (docs/PAGED_STORE.md, step 6): every record read
//! once, in key order, through fjall (which checks each block's checksum), and held against
//! the base's root record.
//!
//! Owns [`check_base`]. What it verifies: the root record decodes (`Root::over_base`); every
//! key is a row or an index entry (`base_format.rs`); every row of a table decodes with its
//! table's column count and every entry's value decodes; each table has exactly the rows its
//! root record counts; every row of a live table has, in each of its table's indexes, the
//! entry its values and primary key make (one point read per row and index, the join InnoDB's
//! CHECK TABLE does between its secondary and clustered indexes), and each index has no
//! more entries than rows, so the entries are exactly the rows' (every row has its own
//! entry, they differ by primary key, and there are no others); every other record
//! lies under a storage id or an index the root retired (later checkpoints delete it), at or
//! above the next storage id (what a rebuild left before a crash: the next open deletes it,
//! `table_rebuild.rs`), or under an index id a live table does not have (what an index build
//! left whose DDL a crash lost: `index_build.rs`). Anything else is an error naming the directory, the key and what was
//! wrong.
//!
//! Invariants: the base is opened without fjall's background threads (`Base::open_idle`), so
//! nothing compacts; no record is written. A base a running server holds (fjall's lock) is
//! not opened: [`BaseCheckError::InUse`] says so, and the caller reports it as not checked.

use std::collections::BTreeMap;
use std::fmt;
use std::fs::File;
use std::ops::Bound;
use std::path::{Path, PathBuf};

use onelog_binlog::GtidState;
use onelog_log::Lsn;

use crate::base::Base;
use crate::base::BaseSnapshot;
use crate::base_format::{decode_entry, decode_row, entry_key, parse_key, BaseKey};
use crate::catalog::TableDef;
use crate::store::{index_key, Retired, Root, BASE_ROOT_META};

/// The file fjall writes first into a store it creates (its format version).
const FJALL_VERSION_FILE: &str = "version";

/// The block cache of a check. The scan reads each block once; the join of rows to their
/// index entries reads one entry per row and index, in the rows' order (blocks of an index
/// are read again when its order differs from the primary key's: a large store's check costs
/// up to rows × indexes block reads, like InnoDB's CHECK TABLE ... EXTENDED).
const CHECK_CACHE_BYTES: u64 = 64 << 20;

/// What [`check_base`] found in a sound base.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BaseReport {
    /// The LSN and GTID state of its root record (None: no checkpoint was ever written).
    pub lsn: Option<Lsn>,
    pub gtid_state: GtidState,
    pub tables: usize,
    pub rows: u64,
    pub entries: u64,
    /// Records of retired storage ids and indexes that later checkpoints delete.
    pub retired: u64,
    /// Records no table or retirement names that a crash may leave: at or above the next
    /// storage id (a rebuild's; the next open deletes them) or entries of an index a table
    /// does not have (a build's whose DDL was lost; the next build of that index id deletes
    /// them).
    pub unclaimed: u64,
}

/// Why [`check_base`] did not verify a base.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BaseCheckError {
    /// A running server holds it.
    InUse(PathBuf),
    /// It is damaged, or does not say what its root record says (the reason names the
    /// directory and the record).
    Bad(String),
}

impl fmt::Display for BaseCheckError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BaseCheckError::InUse(dir) => write!(
                f,
                "{}: in use by a running server (stop it to check the table store, or check a \
                 backup)",
                dir.display()
            ),
            BaseCheckError::Bad(why) => f.write_str(why),
        }
    }
}

/// Whether another process holds fjall's lock file in `dir`.
fn locked(dir: &Path) -> bool {
    match File::open(dir.join("lock")) {
        Ok(f) => matches!(f.try_lock(), Err(std::fs::TryLockError::WouldBlock)),
        Err(_) => false,
    }
}

/// What one storage id holds.
#[derive(Default)]
struct Found {
    rows: u64,
    /// Entries per index id.
    entries: BTreeMap<u32, u64>,
}

/// What is wrong with the first index of `def`'s table (kept under `storage`) whose entry for
/// `row` (whose storage key is `pk`) is missing or says another index key length; None when
/// every index has it. `entry` is scratch space.
fn entry_problem(
    snapshot: &BaseSnapshot,
    (storage, def): (u64, &TableDef),
    row: &[onelog_binlog::Value],
    pk: &[u8],
    entry: &mut Vec<u8>,
) -> Result<Option<String>, crate::base::BaseError> {
    for index in &def.indexes {
        entry.clear();
        index_key(def, index, row, entry);
        let klen = entry.len();
        entry.extend_from_slice(pk);
        let key = entry_key(storage, index.id, entry);
        let found = snapshot.get(&key)?.map(|v| decode_entry(&v, entry.len()));
        if matches!(found, Some(Ok(k)) if k as usize == klen) {
            continue;
        }
        // Only now: the name is built for the report, not for every row read.
        let name = def.qualified_name();
        let problem = match found {
            None => format!("a row of {name} without its entry in index {}", index.name),
            Some(Ok(k)) => format!(
                "the entry of a row of {name} in index {} says an index key of {k} bytes, \
                 the row's values make {klen}",
                index.name
            ),
            Some(Err(e)) => format!("the entry of a row of {name} in index {}: {e}", index.name),
        };
        return Ok(Some(problem));
    }
    Ok(None)
}

/// Every record of the base, counted per storage id; rows of a live table (`defs`, by
/// storage id) decoded with its columns and joined to its indexes. `bad` names the store.
fn scan(
    snapshot: &BaseSnapshot,
    defs: &BTreeMap<u64, &TableDef>,
    bad: &dyn Fn(String) -> BaseCheckError,
) -> Result<BTreeMap<u64, Found>, BaseCheckError> {
    let mut found: BTreeMap<u64, Found> = BTreeMap::new();
    let mut entry = Vec::new();
    for item in snapshot.iter(Bound::Unbounded, Bound::Unbounded) {
        let (key, value) = item.map_err(|e| BaseCheckError::Bad(e.to_string()))?;
        let what = |why: String| bad(format!("record {:02x?}: {why}", &key[..key.len().min(24)]));
        match parse_key(&key) {
            Some(BaseKey::Row { storage, pk }) => {
                if let Some(def) = defs.get(&storage) {
                    let row =
                        decode_row(&value, def.columns.len()).map_err(|e| what(e.to_string()))?;
                    let problem = entry_problem(snapshot, (storage, def), &row, pk, &mut entry)
                        .map_err(|e| bad(e.to_string()))?;
                    if let Some(p) = problem {
                        return Err(what(p));
                    }
                }
                found.entry(storage).or_default().rows += 1;
            }
            Some(BaseKey::Entry {
                storage,
                index,
                entry,
            }) => {
                decode_entry(&value, entry.len()).map_err(|e| what(e.to_string()))?;
                *found
                    .entry(storage)
                    .or_default()
                    .entries
                    .entry(index)
                    .or_default() += 1;
            }
            None => return Err(what("neither a row's key nor an index entry's".into())),
        }
    }
    Ok(found)
}

/// Verifies the base in `dir` (module docs).
pub fn check_base(dir: &Path) -> Result<BaseReport, BaseCheckError> {
    let bad = |why: String| BaseCheckError::Bad(format!("table store {}: {why}", dir.display()));
    // fjall's open would create a missing store: one the control file names must be there.
    if !dir.join(FJALL_VERSION_FILE).is_file() {
        return Err(bad(format!(
            "named by the control file but missing (no {FJALL_VERSION_FILE} file)"
        )));
    }
    if locked(dir) {
        return Err(BaseCheckError::InUse(dir.to_path_buf()));
    }
    let base = Base::open_idle(dir, CHECK_CACHE_BYTES).map_err(|e| {
        if locked(dir) {
            BaseCheckError::InUse(dir.to_path_buf())
        } else {
            BaseCheckError::Bad(e.to_string())
        }
    })?;
    let snapshot = base.snapshot();
    let meta = snapshot
        .meta(BASE_ROOT_META)
        .map_err(|e| BaseCheckError::Bad(e.to_string()))?;
    let root = match &meta {
        Some(m) => Some(
            Root::over_base(m, snapshot.clone())
                .map_err(|e| bad(format!("the root record: {e}")))?,
        ),
        None => None,
    };
    // Every record, counted per storage id; rows of a live table decoded with its columns
    // and joined to its indexes.
    let defs: BTreeMap<u64, &TableDef> = root
        .iter()
        .flat_map(|r| {
            r.tables
                .iter()
                .filter_map(|(id, t)| Some((t.storage, &**r.catalog.table(*id)?)))
        })
        .collect();
    let mut found = scan(&snapshot, &defs, &bad)?;
    let Some(root) = root else {
        if let Some((s, _)) = found.iter().next() {
            return Err(bad(format!(
                "records under storage id {s} but no root record"
            )));
        }
        return Ok(BaseReport::default());
    };
    let mut report = BaseReport {
        lsn: Some(root.lsn),
        gtid_state: root.gtid_state.clone(),
        tables: root.tables.len(),
        ..BaseReport::default()
    };
    let counts = root
        .lower
        .as_ref()
        .map(|l| l.counts.clone())
        .unwrap_or_default();
    let retired = |r: Retired| root.retired.contains(&r);
    for (id, t) in root.tables.iter() {
        let Some(def) = root.catalog.table(*id) else {
            continue;
        };
        let name = def.qualified_name();
        let f = found.remove(&t.storage).unwrap_or_default();
        let want = counts.get(&t.storage).copied().unwrap_or(0);
        if f.rows != want {
            return Err(bad(format!(
                "{name} (storage id {}) has {} rows, its root record says {want}",
                t.storage, f.rows
            )));
        }
        report.rows += f.rows;
        for index in &def.indexes {
            // Every row has its entry (the join above): more entries than rows are strays.
            let n = f.entries.get(&index.id).copied().unwrap_or(0);
            if n != f.rows {
                return Err(bad(format!(
                    "index {} of {name} has {n} entries for {} rows",
                    index.name, f.rows
                )));
            }
            report.entries += n;
        }
        for (index, n) in &f.entries {
            let live = def.indexes.iter().any(|i| i.id == *index);
            if live {
                continue;
            }
            // Not retired: an index build whose DDL a crash lost (`index_build.rs`: the next
            // build of the id deletes them, and nothing reads them).
            if retired(Retired::Index {
                storage: t.storage,
                index: *index,
            }) {
                report.retired += n;
            } else {
                report.unclaimed += n;
            }
        }
    }
    for (storage, f) in found {
        let n = f.rows + f.entries.values().sum::<u64>();
        if storage >= root.next_storage {
            report.unclaimed += n;
        } else if retired(Retired::Storage(storage))
            || f.entries
                .keys()
                .all(|&index| retired(Retired::Index { storage, index }))
                && f.rows == 0
        {
            report.retired += n;
        } else {
            return Err(bad(format!(
                "{n} records under storage id {storage}, which no table keeps and none retired"
            )));
        }
    }
    Ok(report)
}
