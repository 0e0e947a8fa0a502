//! Prebuilt table versions of a big transaction, so that applying its record in log order does
//! not stall the small commits behind it (issue 14 part 3).
//!
//! Owns [`Feed`] and [`Prebuild`]. Once a transaction's change log reaches
//! [`PREBUILD_MIN_CHANGES`] (`txn.rs`), it starts a prebuild thread from the latest root (the
//! *base*) and feeds it its changes in batches as its statements make them; the thread applies
//! them to a scratch clone of the base (copy-on-write: only the touched tables' paths are
//! copied). A rollback to a savepoint below what was sent cancels it (the next change past the
//! threshold starts a new one). At commit (`Committer::commit_changes`, which also starts one
//! for a big change log without a feed) the rest is sent, and the thread finishes while the
//! record is written and synced. When the record's turn comes, the sink
//! ([`Prebuild::install`]) waits for the thread if it is still running, then installs the new
//! table versions into the root being built **only if every touched table in that root is
//! still the very version the prebuild started from** (the same imbl trees: `ptr_eq`, the same
//! `auto_inc_next` and generation). The result is then exactly the root a sequential apply
//! gives: the same changes applied to the same table versions. Otherwise (a commit to one of the
//! same tables came after the base, a DDL, or a change that did not apply to the base) the sink
//! applies the change log as before. So the published roots, recovery and replicas (which
//! apply through `apply.rs`) are unchanged; only where and when the work happens moves.
//!
//! Invariants: a `Prebuild` is resolved exactly once (`done` goes from `None` to `Some`, by the
//! thread, or by its guard when the feed was dropped or the thread panicked), so `install`
//! never waits forever; the base's table versions are held by the result, so `ptr_eq` with
//! them means the same content (an imbl node shared with them is never changed in place);
//! installed tables replace only tables whose current version is the prebuild's base.

use std::sync::{mpsc, Arc, Condvar, Mutex};

use crate::catalog::TableId;
use crate::store::{Root, RowChange, TableData};

/// Row changes from which a commit prebuilds its tables (below it the apply is short anyway,
/// and a thread per commit would cost more than it saves).
pub(crate) const PREBUILD_MIN_CHANGES: usize = 16_384;

/// Whether a change log of `changes` row changes is big: its tables are prebuilt (a feed
/// starts once the transaction's change log reaches it, `txn.rs`), its write set and payload
/// are freed off the commit path, and its transaction releases its own row locks after its
/// record is published (`commit.rs`, `Committer::finish_commit`) instead of the sink, whose
/// leader would take long to release them.
pub(crate) fn big_change_log(changes: usize) -> bool {
    changes >= PREBUILD_MIN_CHANGES
}

/// The touched tables before and after the transaction's changes.
struct Built {
    /// Each touched table as the base root held it (`None`: not there).
    base: Vec<(TableId, Option<TableData>)>,
    /// The same tables with the change log applied.
    tables: Vec<(TableId, TableData)>,
}

/// A prebuild in flight or done (shared by its thread and the record's payload).
pub(crate) struct Prebuild {
    /// `None` while the thread runs; `Some(None)` when it failed.
    done: Mutex<Option<Option<Built>>>,
    ready: Condvar,
}

/// Resolves the prebuild as failed if its thread ends without a result (a panic).
struct Resolve(Arc<Prebuild>);

impl Drop for Resolve {
    fn drop(&mut self) {
        self.0.finish(None);
    }
}

/// Changes sent to a [`Feed`]'s thread at a time.
const FEED_BATCH: usize = 4_096;

enum Msg {
    Changes(Vec<RowChange>),
    /// The change log is complete: resolve the prebuild.
    Finish,
}

/// The transaction's side of a prebuild started while its statements run: it sends each
/// batch of new changes to the prebuild's thread, which applies them to its scratch root as
/// they come. Dropping it without [`finish`](Feed::finish) resolves the prebuild as failed.
pub(crate) struct Feed {
    tx: mpsc::Sender<Msg>,
    /// How many changes of the change log were sent.
    sent: usize,
    prebuild: Arc<Prebuild>,
}

impl Feed {
    /// Starts a prebuild from `base` on a new thread; `None` when no thread could be started.
    pub(crate) fn start(base: Arc<Root>) -> Option<Feed> {
        let prebuild = Arc::new(Prebuild {
            done: Mutex::new(None),
            ready: Condvar::new(),
        });
        let (tx, rx) = mpsc::channel();
        let guard = Resolve(prebuild.clone());
        std::thread::Builder::new()
            .name("onelog-prebuild".into())
            .spawn(move || {
                if let Some(built) = build(base, rx) {
                    guard.0.finish(built);
                }
            })
            .ok()?;
        Some(Feed {
            tx,
            sent: 0,
            prebuild,
        })
    }

    /// How many changes of the change log were sent: a rollback below it cancels the feed.
    pub(crate) fn sent(&self) -> usize {
        self.sent
    }

    /// Sends the changes of `changes` (the whole change log) not sent yet, once a batch of
    /// them is there.
    pub(crate) fn feed(&mut self, changes: &[RowChange]) {
        if changes.len() - self.sent >= FEED_BATCH {
            self.send_rest(changes);
        }
    }

    fn send_rest(&mut self, changes: &[RowChange]) {
        debug_assert!(
            self.sent <= changes.len(),
            "the change log shrank under a feed"
        );
        if self.sent < changes.len() {
            // A thread that stopped (a change did not apply) has resolved already.
            let _ = self.tx.send(Msg::Changes(changes[self.sent..].to_vec()));
            self.sent = changes.len();
        }
    }

    /// Sends the rest of the complete change log and lets the thread resolve the prebuild.
    pub(crate) fn finish(mut self, changes: &[RowChange]) -> Arc<Prebuild> {
        self.send_rest(changes);
        let _ = self.tx.send(Msg::Finish);
        self.prebuild
    }
}

impl Prebuild {
    /// Records the result (the first one only) and wakes `install`.
    fn finish(&self, built: Option<Built>) {
        let mut d = self.done.lock().unwrap_or_else(|e| e.into_inner());
        if d.is_none() {
            *d = Some(built);
            self.ready.notify_all();
        }
    }

    /// Installs the prebuilt tables into `root` (the root the sink is building, with every
    /// earlier record applied) if each touched table there is still the base's version;
    /// waits for the thread first. `false`: nothing changed, apply the change log instead.
    pub(crate) fn install(&self, root: &mut Root) -> bool {
        let mut d = self.done.lock().unwrap_or_else(|e| e.into_inner());
        while d.is_none() {
            d = self.ready.wait(d).unwrap_or_else(|e| e.into_inner());
        }
        // Taken once; a later call finds it resolved and empty.
        let Some(Some(built)) = d.replace(None) else {
            return false;
        };
        drop(d);
        let unchanged = built
            .base
            .iter()
            .all(|(id, base)| same_version(root.tables.get(id), base.as_ref()));
        if !unchanged {
            return false;
        }
        for (id, t) in built.tables {
            root.tables.insert(id, t);
        }
        true
    }
}

/// The prebuild thread: applies the batches from `rx` to a scratch clone of `base` until
/// `Finish`; `Some(result)` then (`None` inside: a change did not apply), `None` when the feed
/// was dropped first (the guard resolves it as failed).
fn build(base: Arc<Root>, rx: mpsc::Receiver<Msg>) -> Option<Option<Built>> {
    let mut scratch = (*base).clone();
    let mut ids: Vec<TableId> = Vec::new();
    let mut ok = true;
    loop {
        match rx.recv().ok()? {
            Msg::Changes(batch) if ok => {
                for c in &batch {
                    if !ids.contains(&c.table()) {
                        ids.push(c.table());
                    }
                    if scratch.apply_row_change(c).is_err() {
                        ok = false;
                        break;
                    }
                }
            }
            Msg::Changes(_) => {}
            Msg::Finish if !ok => return Some(None),
            Msg::Finish => break,
        }
    }
    let base_tables = ids
        .iter()
        .map(|id| (*id, base.tables.get(id).cloned()))
        .collect();
    let tables = ids
        .iter()
        .map(|id| scratch.tables.get(id).cloned().map(|t| (*id, t)))
        .collect::<Option<Vec<_>>>();
    Some(tables.map(|tables| Built {
        base: base_tables,
        tables,
    }))
}

/// Drops `x` on a thread of its own (the change log, overlay and old table versions of a big
/// transaction: freeing a million rows' worth takes a while), or here if none can be started.
pub(crate) fn drop_later<T: Send + 'static>(x: T) {
    // On a failed spawn the closure, and `x` with it, is dropped here.
    let _ = std::thread::Builder::new()
        .name("onelog-drop".into())
        .spawn(move || drop(x));
}

/// Whether `now` is the very table version `base` was (`TableData::same_version`).
fn same_version(now: Option<&TableData>, base: Option<&TableData>) -> bool {
    match (now, base) {
        (None, None) => true,
        (Some(a), Some(b)) => a.same_version(b),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{CatalogChange, ColumnSpec, IndexSpec, SqlType, TableDef, TableSpec};
    use crate::store::Row;
    use onelog_binlog::Value;

    /// Tables 1 and 2: `id INT AUTO_INCREMENT PK, v VARCHAR(10)`, index on `v`.
    fn root_with_tables() -> Root {
        let mut root = Root::empty();
        root.apply_catalog_change(&CatalogChange::CreateDatabase { name: "d".into() })
            .unwrap();
        for (id, name) in [(1, "a"), (2, "b")] {
            let spec = TableSpec {
                db: "d".into(),
                name: name.into(),
                columns: vec![
                    ColumnSpec::new("id", SqlType::Int { unsigned: false }).auto_increment(),
                    ColumnSpec::new("v", SqlType::VarChar(10)),
                ],
                primary_key: vec!["id".into()],
                indexes: vec![IndexSpec::new("by_v", &["v"], false)],
            };
            let def = TableDef::from_spec(id, &spec).unwrap();
            root.apply_catalog_change(&CatalogChange::CreateTable { table: def })
                .unwrap();
        }
        root
    }

    fn row(id: i64, v: &str) -> Arc<Row> {
        Arc::new(vec![Value::Int(id), Value::bytes(v.as_bytes())])
    }

    fn insert(table: TableId, id: i64, v: &str) -> RowChange {
        RowChange::Insert {
            table,
            row: row(id, v),
        }
    }

    /// A base with rows 1..=50 in table 1, and a big change log on table 1 (updates, deletes,
    /// inserts past the AUTO_INCREMENT counter).
    fn base_and_changes() -> (Arc<Root>, Arc<Vec<RowChange>>) {
        let mut base = root_with_tables();
        for i in 1..=50 {
            base.apply_row_change(&insert(1, i, &format!("v{i}")))
                .unwrap();
        }
        let mut changes = Vec::new();
        for i in 1..=40 {
            changes.push(RowChange::Update {
                table: 1,
                before: row(i, &format!("v{i}")),
                after: row(i, &format!("w{}", i % 7)),
            });
        }
        changes.push(RowChange::Delete {
            table: 1,
            before: row(45, "v45"),
        });
        changes.push(insert(1, 90, "x"));
        (Arc::new(base), Arc::new(changes))
    }

    fn start(base: Arc<Root>, changes: &[RowChange]) -> Arc<Prebuild> {
        let mut f = Feed::start(base).unwrap();
        f.feed(changes);
        f.finish(changes)
    }

    fn sequential(root: &Root, changes: &[RowChange]) -> Root {
        let mut r = root.clone();
        changes.iter().for_each(|c| r.apply_row_change(c).unwrap());
        r
    }

    fn assert_same_tables(a: &Root, b: &Root) {
        assert_eq!(a.dump(), b.dump());
        for (id, t) in a.tables.iter() {
            let u = b.table(*id).unwrap();
            assert!(t.same_index_entries(u), "indexes of table {id}");
            assert_eq!(t.auto_inc_next, u.auto_inc_next, "auto_inc_next of {id}");
        }
    }

    #[test]
    fn installs_over_the_base_and_over_other_tables_changes() {
        let (base, changes) = base_and_changes();
        let p = start(base.clone(), &changes);
        // A commit to another table came between the base and the big record.
        let mut root = (*base).clone();
        root.apply_row_change(&insert(2, 7, "other")).unwrap();
        let expected = sequential(&root, &changes);
        assert!(p.install(&mut root));
        assert_same_tables(&root, &expected);
        assert_eq!(root.table(1).unwrap().auto_inc_next, 91);
        assert_eq!(root.row_count(1), 50);
        // Resolved once: a second install finds nothing and changes nothing.
        assert!(!p.install(&mut root));
    }

    #[test]
    fn refuses_when_a_touched_table_changed_meanwhile() {
        let (base, changes) = base_and_changes();
        let p = start(base.clone(), &changes);
        let mut root = (*base).clone();
        root.apply_row_change(&insert(1, 60, "small")).unwrap();
        let before = root.clone();
        assert!(!p.install(&mut root));
        assert_same_tables(&root, &before);
        // The sink then applies the change log: row 60 stays.
        let applied = sequential(&root, &changes);
        assert!(applied
            .get(
                1,
                &crate::store::pk_key(&root.catalog.table(1).unwrap().clone(), &row(60, "")[..])
            )
            .unwrap()
            .is_some());
    }

    #[test]
    fn batches_add_up_and_a_dropped_feed_resolves_as_failed() {
        let (base, _) = base_and_changes();
        let changes: Vec<RowChange> = (0..FEED_BATCH as i64 * 2 + 5)
            .map(|i| insert(2, i + 1, "n"))
            .collect();
        let mut f = Feed::start(base.clone()).unwrap();
        for n in 1..=changes.len() {
            f.feed(&changes[..n]);
        }
        assert_eq!(f.sent(), FEED_BATCH * 2);
        let p = f.finish(&changes);
        let mut root = (*base).clone();
        assert!(p.install(&mut root));
        assert_same_tables(&root, &sequential(&base, &changes));

        let mut f = Feed::start(base.clone()).unwrap();
        f.feed(&changes);
        let p = f.prebuild.clone();
        drop(f);
        let mut root = (*base).clone();
        assert!(
            !p.install(&mut root),
            "a cancelled prebuild installs nothing"
        );
    }

    #[test]
    fn a_change_log_that_does_not_apply_installs_nothing() {
        let (base, _) = base_and_changes();
        let bad = Arc::new(vec![RowChange::Delete {
            table: 1,
            before: row(999, "none"),
        }]);
        let p = start(base.clone(), &bad);
        let mut root = (*base).clone();
        assert!(!p.install(&mut root));
        assert_same_tables(&root, &base);
    }
}
