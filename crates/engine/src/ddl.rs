//! DDL: CREATE/DROP DATABASE, TABLE and INDEX, TRUNCATE, and accounts (CREATE/DROP/ALTER
//! USER, GRANT, REVOKE, SET PASSWORD), as `impl Engine` methods.
//!
//! Owns the DDL methods of [`Engine`] and the unique-index duplicate check over rows (also
//! used by `replica.rs`). Called by the SQL layer's DDL and account executors. Uses the commit path
//! (`commit.rs`); nothing below imports it.
//!
//! DDL is an implicit commit, like MySQL: it is validated against the latest catalog, logged as
//! its own record (Query event + the catalog change in `aux`) and applied by the sink. DDL and
//! commits are ordered by the commit gate (commits share it, DDL takes it exclusively), so a
//! transaction's record never reaches the log after a DROP of a table it wrote: a commit that
//! finds a table gone fails with 1146. The engine has no metadata locks (the SQL layer's make a
//! DDL wait for the transactions that use its tables: `onelog_sql`'s `table_locks`); here
//! every DDL bumps the generation of the table it touches (`TableData::generation`) and a
//! transaction that wrote the table under an older generation fails at commit with 1412
//! (`ER_TABLE_DEF_CHANGED`), checked under the shared gate. So a
//! logged row change always applies (no update of a row a TRUNCATE removed, no duplicate in a
//! unique index created meanwhile), which recovery and replicas rely on.
//!
//! With the paged store, CREATE INDEX (and a foreign key's generated key added by ALTER TABLE)
//! over a table whose rows lie in the base writes the new entries into the base in sorted
//! chunks before logging (`index_build.rs`), holding the checkpoint writers' lock (taken
//! before the exclusive gate, as checkpoints take them). CREATE INDEX builds its entries
//! before it takes the gate, while commits go on, and holds the gate only to bring them up to
//! the rows committed meanwhile (`online_index.rs`); every other DDL does its work under it.
//!
//! Invariants: a DDL is logged only after its change applied to a scratch copy of the latest
//! root under the exclusive gate (so the sink's apply of it cannot fail), and a unique index
//! is created only over values without duplicates.

use std::sync::Arc;

use onelog_binlog::Value;

use crate::alter::{self, AlterPlan, Condition};
use crate::base::Base;
use crate::catalog::{
    check_identifier, AccountDef, CatalogChange, CheckDef, ColumnDef, ColumnSource, ColumnSpec,
    ForeignKeyDef, IndexDef, IndexSpec, TableDef, TableId, TableOptions, TableSpec,
};
use crate::commit::attach_validated;
use crate::engine::Engine;
use crate::error::EngineError;
use crate::events::encode_ddl_with_mode;
use crate::online_index::{self, Prebuilt};
use crate::scheduler::CheckpointSerial;
use crate::store::{check_unique_entries, duplicate_key, index_has_null, index_key, Root, Row};
use crate::table_rebuild::{abandoned, build_below};
use crate::view::ViewDef;

impl Engine {
    /// Runs one DDL statement: `build` validates against the latest root and returns the
    /// change (None: nothing to do, e.g. IF NOT EXISTS on an existing object).
    fn run_ddl(
        &self,
        db: &str,
        sql: &str,
        build: impl FnOnce(&Root) -> Result<Option<CatalogChange>, EngineError>,
    ) -> Result<Option<CatalogChange>, EngineError> {
        self.run_ddl_with(db, sql, false, build)
    }

    /// With the paged store, its base and the checkpoint writers' lock, for DDL that writes an
    /// index (`index_build.rs`) or a rewritten table (`table_rebuild.rs`) there: taken before
    /// the commit gate, as checkpoints take them.
    fn base_writer(&self) -> Option<(Arc<Base>, CheckpointSerial<'_>)> {
        let base = self.checkpoints().base()?.clone();
        Some((base, self.checkpoints().serialize()))
    }

    /// [`Self::run_ddl`]; with `write_below` and the paged store (its base, and the checkpoint
    /// writers' lock, taken before the commit gate), a CREATE INDEX over rows in the base is
    /// built there in chunks (`index_build.rs`), and so is a table whose rows an ADD / DROP
    /// COLUMN or a copying ALTER TABLE rewrites (`table_rebuild.rs`), instead of copying the
    /// table into memory.
    fn run_ddl_with(
        &self,
        db: &str,
        sql: &str,
        write_below: bool,
        build: impl FnOnce(&Root) -> Result<Option<CatalogChange>, EngineError>,
    ) -> Result<Option<CatalogChange>, EngineError> {
        self.core().check_open()?;
        let writer = if write_below {
            self.base_writer()
        } else {
            None
        };
        self.run_ddl_gated(db, sql, writer, None, build)
    }

    /// [`Self::run_ddl_with`] with `write_below` for CREATE INDEX, whose entries are built
    /// before the commit gate is taken, from the rows of the root then current, and brought up
    /// to the latest rows under it (`online_index.rs`): commits go on during the build.
    fn run_ddl_online(
        &self,
        db: &str,
        sql: &str,
        built: impl FnOnce() -> Result<(), EngineError>,
        build: impl Fn(&Root) -> Result<Option<CatalogChange>, EngineError>,
    ) -> Result<Option<CatalogChange>, EngineError> {
        let core = self.core();
        core.check_open()?;
        let writer = self.base_writer();
        // Commits waiting for a checkpoint wait for the build instead of timing out (not for
        // `built`: the caller may wait there for transactions, which may be such commits).
        let hold = writer
            .as_ref()
            .and(core.budget())
            .map(|b| b.hold_for_build());
        let from = core.store().current();
        let Some(change) = build(&from)? else {
            return Ok(None);
        };
        let base = writer.as_ref().map(|(base, _)| &**base);
        let chunk = self.options().index_build_chunk_bytes;
        let prebuilt = online_index::prebuild(from, change, base, chunk)?;
        drop(hold);
        if let Err(e) = built() {
            if let Some(p) = prebuilt {
                p.abandon(base, chunk);
            }
            return Err(e);
        }
        self.run_ddl_gated(db, sql, writer, prebuilt, build)
    }

    /// The rest of [`Self::run_ddl_with`], from taking the exclusive gate: `writer` is the
    /// base and the checkpoint writers' lock when the DDL may write there, `prebuilt` a CREATE
    /// INDEX's entries built before the gate.
    fn run_ddl_gated(
        &self,
        db: &str,
        sql: &str,
        writer: Option<(Arc<Base>, CheckpointSerial<'_>)>,
        prebuilt: Option<Prebuilt>,
        build: impl FnOnce(&Root) -> Result<Option<CatalogChange>, EngineError>,
    ) -> Result<Option<CatalogChange>, EngineError> {
        let core = self.core();
        let below = writer.as_ref().map(|(base, serial)| (&**base, serial));
        let gate = core.exclusive();
        let root = core.store().current();
        let Some(change) = build(&root)? else {
            return Ok(None);
        };
        // Full validation (and, for a unique index, the duplicate check) before logging.
        let mut scratch = (*root).clone();
        let chunk = self.options().index_build_chunk_bytes;
        let validated = match prebuilt {
            Some(p) => p.finish(&mut scratch, &root, &change, (below.map(|(b, _)| b), chunk)),
            None => Ok(false),
        }
        .and_then(|done| {
            if done {
                Ok(())
            } else {
                validate(&mut scratch, &root, &change, below, chunk)
            }
        });
        let handed_out = scratch.next_storage;
        let origin = core.origin();
        let logged = validated.and_then(|()| {
            let events = encode_ddl_with_mode(
                db,
                sql,
                change.suppresses_use(),
                logged_sql_mode(&change),
                (origin.domain_id, origin.server_id, origin.timestamp),
            )?;
            let mut record = origin.ddl_record(events, &change, Vec::new());
            // The exclusive gate kept every commit out: the change was validated against the
            // state it is logged after, so the sink publishes the validated root instead of
            // building it again (one copy of a rebuilt table in memory, not two).
            debug_assert!(Arc::ptr_eq(&root, &core.store().current()));
            attach_validated(&mut record, root.clone(), scratch);
            core.log_exclusive(&gate, record, || format!("logging DDL `{sql}`"))
        });
        let receipt = match logged {
            Ok(receipt) => receipt,
            Err(e) => {
                // What a rebuild wrote into the base under storage ids the live root would
                // hand out again is no later table's (`table_rebuild.rs`).
                if let Some((base, _)) = below {
                    // The current root, not `root`: a failed sync may come after the sink
                    // published the change.
                    if let Some(past) = abandoned(&core.store().current(), handed_out, base) {
                        drop(core.store().publish(Arc::new(past)));
                    }
                }
                return Err(e);
            }
        };
        origin.used(receipt.gtid);
        core.notifier().logged();
        core.forget_auto_inc(&change);
        // With the paged store, DDL that copied a table put all its rows into memory (and
        // dropped tables leave records to delete): a checkpoint takes them to the base soon,
        // where the log's growth would not ask for one.
        if self.paged() {
            self.checkpoints().request();
        }
        Ok(Some(change))
    }

    fn find_table(root: &Root, db: &str, table: &str) -> Result<Arc<TableDef>, EngineError> {
        if !root.catalog.has_database(db) {
            return Err(EngineError::NoSuchDatabase { db: db.to_string() });
        }
        root.catalog
            .table_by_name(db, table)
            .cloned()
            .ok_or_else(|| EngineError::NoSuchTable {
                db: db.to_string(),
                table: table.to_string(),
            })
    }

    /// `CREATE DATABASE`.
    pub fn create_database(
        &self,
        name: &str,
        if_not_exists: bool,
        sql: &str,
    ) -> Result<(), EngineError> {
        check_identifier(name)?;
        self.run_ddl(name, sql, |root| {
            if root.catalog.has_database(name) {
                return if if_not_exists {
                    Ok(None)
                } else {
                    Err(EngineError::DatabaseExists {
                        db: name.to_string(),
                    })
                };
            }
            Ok(Some(CatalogChange::CreateDatabase {
                name: name.to_string(),
            }))
        })?;
        Ok(())
    }

    /// `DROP DATABASE` (drops its tables).
    pub fn drop_database(&self, name: &str, if_exists: bool, sql: &str) -> Result<(), EngineError> {
        self.run_ddl(name, sql, |root| {
            if !root.catalog.has_database(name) {
                return if if_exists {
                    Ok(None)
                } else {
                    Err(EngineError::NoSuchDatabase {
                        db: name.to_string(),
                    })
                };
            }
            Ok(Some(CatalogChange::DropDatabase {
                name: name.to_string(),
            }))
        })?;
        Ok(())
    }

    /// `CREATE TABLE`; returns the table's id (the existing one with IF NOT EXISTS).
    pub fn create_table(
        &self,
        spec: TableSpec,
        if_not_exists: bool,
        sql: &str,
    ) -> Result<TableId, EngineError> {
        self.create_table_with(spec, TableOptions::default(), if_not_exists, sql)
    }

    /// `CREATE TABLE` with table options (COMMENT, `AUTO_INCREMENT=N`: the first generated
    /// value).
    pub fn create_table_with(
        &self,
        spec: TableSpec,
        options: TableOptions,
        if_not_exists: bool,
        sql: &str,
    ) -> Result<TableId, EngineError> {
        let mut existing = None;
        let change = self.run_ddl(&spec.db, sql, |root| {
            if !root.catalog.has_database(&spec.db) {
                return Err(EngineError::NoSuchDatabase {
                    db: spec.db.clone(),
                });
            }
            if let Some(t) = root.catalog.table_by_name(&spec.db, &spec.name) {
                if if_not_exists {
                    existing = Some(t.id);
                    return Ok(None);
                }
                return Err(EngineError::TableExists {
                    table: spec.name.clone(),
                });
            }
            let mut def = TableDef::from_spec(root.catalog.next_table_id(), &spec)?;
            def.options = options.clone();
            Ok(Some(CatalogChange::CreateTable { table: def }))
        })?;
        match (change, existing) {
            (Some(CatalogChange::CreateTable { table }), _) => Ok(table.id),
            (_, Some(id)) => Ok(id),
            _ => Err(EngineError::corrupt("CREATE TABLE", "no table created")),
        }
    }

    /// `CREATE TABLE [IF NOT EXISTS] db.name LIKE src_db.src`: a new empty table with the
    /// source's columns, keys, collations, attributes, CHECK constraints and COMMENT, but not
    /// its AUTO_INCREMENT start nor its foreign keys (as MariaDB). 1146 for a missing source, 1049 for a missing database, 1050 for a
    /// name in use (IF NOT EXISTS: nothing happens).
    pub fn create_table_like(
        &self,
        (db, name): (&str, &str),
        (src_db, src): (&str, &str),
        if_not_exists: bool,
        sql: &str,
    ) -> Result<(), EngineError> {
        self.run_ddl(db, sql, |root| {
            let source = Self::find_table(root, src_db, src)?;
            if !root.catalog.has_database(db) {
                return Err(EngineError::NoSuchDatabase { db: db.to_string() });
            }
            if root.catalog.table_by_name(db, name).is_some() {
                if if_not_exists {
                    return Ok(None);
                }
                return Err(EngineError::TableExists {
                    table: name.to_string(),
                });
            }
            let mut def = (*source).clone();
            def.id = root.catalog.next_table_id();
            def.db = db.to_string();
            def.name = name.to_string();
            def.options.auto_increment = 0;
            // MariaDB's LIKE copies CHECK constraints but no FOREIGN KEY.
            def.options.foreign_keys.clear();
            Ok(Some(CatalogChange::CreateTable { table: def }))
        })?;
        Ok(())
    }

    /// The value the next generated AUTO_INCREMENT of `table` would be (SHOW CREATE TABLE's
    /// `AUTO_INCREMENT=N`); 1 for a table never given one.
    pub fn auto_increment_next(&self, table: TableId) -> u64 {
        self.core().peek_auto_inc(table)
    }

    /// `ALTER TABLE ... ADD/DROP FOREIGN KEY / CONSTRAINT / CHECK`: the table's foreign keys
    /// and checks become `foreign_keys` and `checks` (validated by the caller, which checked
    /// the rows too), with `index` (a non-unique index, InnoDB's for a foreign key no key
    /// serves) added and built; 1146 for a missing table, 1061 for an index name in use.
    pub fn alter_constraints(
        &self,
        (db, table): (&str, &str),
        (foreign_keys, checks): (Vec<ForeignKeyDef>, Vec<CheckDef>),
        index: Option<IndexSpec>,
        sql: &str,
    ) -> Result<(), EngineError> {
        self.run_ddl_with(db, sql, index.is_some(), |root| {
            let mut def = (*Self::find_table(root, db, table)?).clone();
            let index = match index {
                Some(spec) => {
                    let ix = def.add_index(&IndexSpec {
                        unique: false,
                        ..spec
                    })?;
                    def.options.generated_keys.push(ix.name.clone());
                    Some(ix)
                }
                None => None,
            };
            def.options.foreign_keys = foreign_keys;
            def.options.checks = checks;
            Ok(Some(CatalogChange::AlterConstraints { index, table: def }))
        })?;
        Ok(())
    }

    /// `CREATE [OR REPLACE] VIEW` / `ALTER VIEW` (`replace`); the SQL layer validated the
    /// query. 1049 for a missing database, 1050 for a name in use (IF NOT EXISTS: nothing
    /// happens, and the return is false).
    /// `db`: the database the Query event runs in.
    pub fn create_view(
        &self,
        db: &str,
        view: ViewDef,
        replace: bool,
        if_not_exists: bool,
        sql: &str,
    ) -> Result<bool, EngineError> {
        let change = self.run_ddl(db, sql, |root| {
            let cat = &root.catalog;
            if !cat.has_database(&view.db) {
                return Err(EngineError::NoSuchDatabase {
                    db: view.db.clone(),
                });
            }
            let taken = cat.table_by_name(&view.db, &view.name).is_some()
                || (!replace && cat.view(&view.db, &view.name).is_some());
            if taken && if_not_exists {
                return Ok(None);
            }
            Ok(Some(CatalogChange::CreateView { replace, view }))
        })?;
        Ok(change.is_some())
    }

    /// `DROP VIEW` of the views `views` (`(db, name)`, each one a view; the SQL layer left out
    /// the missing ones of `IF EXISTS`); 1146 for one that is not there.
    pub fn drop_views(
        &self,
        db: &str,
        views: Vec<(String, String)>,
        sql: &str,
    ) -> Result<(), EngineError> {
        self.run_ddl(db, sql, |_| {
            Ok((!views.is_empty()).then_some(CatalogChange::DropViews { views }))
        })?;
        Ok(())
    }

    /// `RENAME TABLE` of views only: each `(db, name, new db, new name)` in order.
    pub fn rename_views(
        &self,
        db: &str,
        renames: Vec<(String, String, String, String)>,
        sql: &str,
    ) -> Result<(), EngineError> {
        self.run_ddl(db, sql, |_| {
            Ok(Some(CatalogChange::RenameViews { renames }))
        })?;
        Ok(())
    }

    /// `DROP TABLE`.
    pub fn drop_table(
        &self,
        db: &str,
        table: &str,
        if_exists: bool,
        sql: &str,
    ) -> Result<(), EngineError> {
        self.run_ddl(db, sql, |root| match Self::find_table(root, db, table) {
            Ok(t) => Ok(Some(CatalogChange::DropTable { id: t.id })),
            Err(_) if if_exists => Ok(None),
            Err(e) => Err(e),
        })?;
        Ok(())
    }

    /// `RENAME TABLE old TO new, ...` (each pair `(db, table, new db, new table)`, applied in
    /// order, all or none): 1146 for a missing table, 1050 for a name in use, 1049 for a
    /// missing target database.
    pub fn rename_tables(
        &self,
        db: &str,
        pairs: &[(String, String, String, String)],
        sql: &str,
    ) -> Result<(), EngineError> {
        self.run_ddl(db, sql, |root| {
            // Each pair is resolved against the catalog the earlier pairs produced.
            let mut scratch = (*root.catalog).clone();
            let mut renames = Vec::with_capacity(pairs.len());
            for (old_db, old, new_db, new) in pairs {
                let id = scratch
                    .table_by_name(old_db, old)
                    .map(|t| t.id)
                    .ok_or_else(|| EngineError::NoSuchTable {
                        db: old_db.clone(),
                        table: old.clone(),
                    })?;
                let one = CatalogChange::RenameTables {
                    renames: vec![(id, new_db.clone(), new.clone())],
                };
                scratch = scratch.apply(&one)?;
                renames.push((id, new_db.clone(), new.clone()));
            }
            Ok(Some(CatalogChange::RenameTables { renames }))
        })?;
        Ok(())
    }

    /// `ALTER TABLE ... ADD COLUMN` (last): every row gets `fill`. 1060 for a name in use;
    /// an AUTO_INCREMENT column is refused (its values would have to be generated).
    pub fn add_column(
        &self,
        db: &str,
        table: &str,
        column: ColumnSpec,
        fill: Value,
        sql: &str,
    ) -> Result<(), EngineError> {
        self.run_ddl_with(db, sql, true, |root| {
            let t = Self::find_table(root, db, table)?;
            if t.columns
                .iter()
                .any(|c| c.name.eq_ignore_ascii_case(&column.name))
            {
                return Err(EngineError::DuplicateColumn {
                    column: column.name.clone(),
                });
            }
            if column.auto_increment {
                return Err(EngineError::WrongColumnSpec {
                    column: column.name.clone(),
                    reason: "ADD COLUMN ... AUTO_INCREMENT".into(),
                });
            }
            let col = ColumnDef::from_spec(&column)?;
            let fill = match fill {
                Value::Null => Value::Null,
                v => col.ty.coerce(&col.name, v)?,
            };
            let mut def = (*t).clone();
            def.columns.push(col);
            Ok(Some(CatalogChange::AddColumn { table: def, fill }))
        })?;
        Ok(())
    }

    /// `ALTER TABLE ... DROP COLUMN c`: the caller has checked that `c` exists, is not the only
    /// column and is in no key (the primary key or an index).
    pub fn drop_column(
        &self,
        db: &str,
        table: &str,
        column: &str,
        sql: &str,
    ) -> Result<(), EngineError> {
        self.run_ddl_with(db, sql, true, |root| {
            let t = Self::find_table(root, db, table)?;
            let p = t
                .columns
                .iter()
                .position(|c| c.name.eq_ignore_ascii_case(column))
                .ok_or_else(|| EngineError::NoSuchKeyColumn {
                    column: column.to_string(),
                })?;
            let keyed =
                t.primary_key.contains(&p) || t.indexes.iter().any(|i| i.columns.contains(&p));
            if keyed || t.columns.len() == 1 {
                return Err(EngineError::WrongColumnSpec {
                    column: column.to_string(),
                    reason: "a key column or the only column".into(),
                });
            }
            let down = |q: usize| if q > p { q - 1 } else { q };
            let mut def = (*t).clone();
            def.columns.remove(p);
            def.primary_key = def.primary_key.iter().map(|&q| down(q)).collect();
            for ix in &mut def.indexes {
                ix.columns = ix.columns.iter().map(|&q| down(q)).collect();
            }
            def.auto_increment = def.auto_increment.filter(|&a| a != p).map(down);
            Ok(Some(CatalogChange::DropColumn {
                table: def,
                position: p as u32,
            }))
        })?;
        Ok(())
    }

    /// `ALTER TABLE` with any operations, all or nothing as one change: `new` is the whole
    /// new definition the caller built from `old` (what it read of the table), `sources` where
    /// each new column's values come from. 1412 when the table is no longer `old` (another DDL
    /// changed it meanwhile); the copy's conversion errors (`alter::convert`), 1062 for a
    /// primary or unique key the new rows repeat, and the definition's own errors (1060, 1061,
    /// 1075, ...) as MariaDB.
    ///
    /// `strict`: conversion failures are errors; otherwise they are warnings. Returns the
    /// copy's conditions (notes, and those warnings), at most 64, in row order.
    pub fn alter_table(
        &self,
        old: &TableDef,
        new: TableDef,
        plan: AlterPlan,
        sql: &str,
    ) -> Result<Vec<Condition>, EngineError> {
        let AlterPlan {
            sources,
            strict,
            auto_increment,
        } = plan;
        let mut conditions = Vec::new();
        self.run_ddl_with(&old.db, sql, true, |root| {
            let t = Self::find_table(root, &old.db, &old.name)?;
            if *t != *old || new.id != t.id {
                return Err(EngineError::TableDefChanged {
                    table: old.name.clone(),
                });
            }
            new.check_alter()?;
            conditions = copy_conditions(root, (&t, &new), &sources, strict)?;
            Ok(Some(CatalogChange::AlterTable {
                strict,
                auto_increment,
                sources,
                table: new,
            }))
        })?;
        Ok(conditions)
    }

    /// `TRUNCATE TABLE`: removes every row, resets AUTO_INCREMENT.
    pub fn truncate_table(&self, db: &str, table: &str, sql: &str) -> Result<(), EngineError> {
        self.run_ddl(db, sql, |root| {
            let t = Self::find_table(root, db, table)?;
            Ok(Some(CatalogChange::TruncateTable { id: t.id }))
        })?;
        Ok(())
    }

    /// `CREATE [UNIQUE] INDEX` (a unique index over duplicate values fails with 1062). The
    /// entries are built while commits go on, and the commit gate is held only to bring them
    /// up to the rows committed meanwhile (`online_index.rs`).
    pub fn create_index(
        &self,
        db: &str,
        table: &str,
        index: IndexSpec,
        sql: &str,
    ) -> Result<(), EngineError> {
        self.create_index_with(db, table, index, sql, || Ok(()))
    }

    /// [`Self::create_index`], calling `built` once the entries are built from the rows and
    /// before the commit gate is taken: what is committed there (by this thread or another)
    /// is in the index when it is created. The SQL layer waits there for the transactions
    /// that use the table (its metadata lock); an error from `built` ends the DDL with it,
    /// the built entries dropped. The seam tests commit through.
    pub fn create_index_with(
        &self,
        db: &str,
        table: &str,
        index: IndexSpec,
        sql: &str,
        built: impl FnOnce() -> Result<(), EngineError>,
    ) -> Result<(), EngineError> {
        let change = |root: &Root| Self::index_added(root, db, table, &index);
        self.run_ddl_online(db, sql, built, change)?;
        Ok(())
    }

    /// [`Self::create_index`] holding the commit gate for the whole build, so no write
    /// commits meanwhile (MariaDB's `LOCK=SHARED` / `LOCK=EXCLUSIVE`, `ALGORITHM=COPY`).
    pub fn create_index_locked(
        &self,
        db: &str,
        table: &str,
        index: IndexSpec,
        sql: &str,
    ) -> Result<(), EngineError> {
        let change = |root: &Root| Self::index_added(root, db, table, &index);
        self.run_ddl_with(db, sql, true, change)?;
        Ok(())
    }

    /// The change of a CREATE INDEX of `index` on `db.table` over `root`.
    fn index_added(
        root: &Root,
        db: &str,
        table: &str,
        index: &IndexSpec,
    ) -> Result<Option<CatalogChange>, EngineError> {
        let t = Self::find_table(root, db, table)?;
        let mut def = (*t).clone();
        let ix = def.add_index(index)?;
        Ok(Some(CatalogChange::CreateIndex {
            table: t.id,
            index: ix,
        }))
    }

    /// `DROP INDEX`.
    pub fn drop_index(
        &self,
        db: &str,
        table: &str,
        index: &str,
        sql: &str,
    ) -> Result<(), EngineError> {
        self.run_ddl(db, sql, |root| {
            let t = Self::find_table(root, db, table)?;
            let ix = t.index(index).ok_or_else(|| EngineError::NoSuchIndex {
                index: index.to_string(),
            })?;
            Ok(Some(CatalogChange::DropIndex {
                table: t.id,
                index_id: ix.id,
            }))
        })?;
        Ok(())
    }

    /// `CREATE USER`: logs `sql` (which must not contain a plain-text password: the SQL layer
    /// logs `IDENTIFIED BY PASSWORD '*hash'`) with the account as its catalog change. Returns
    /// false when the account exists and `if_not_exists` (nothing logged); else 1396.
    pub fn create_account(
        &self,
        account: AccountDef,
        if_not_exists: bool,
        sql: &str,
    ) -> Result<bool, EngineError> {
        let done = self.run_ddl("", sql, |root| {
            if if_not_exists && root.catalog.account(&account.user, &account.host).is_some() {
                return Ok(None);
            }
            Ok(Some(CatalogChange::CreateAccount { account }))
        })?;
        Ok(done.is_some())
    }

    /// `DROP USER`: false when the account is missing and `if_exists`; else 1396.
    pub fn drop_account(
        &self,
        user: &str,
        host: &str,
        if_exists: bool,
        sql: &str,
    ) -> Result<bool, EngineError> {
        let done = self.run_ddl("", sql, |root| {
            if if_exists && root.catalog.account(user, host).is_none() {
                return Ok(None);
            }
            Ok(Some(CatalogChange::DropAccount {
                user: user.to_string(),
                host: host.to_string(),
            }))
        })?;
        Ok(done.is_some())
    }

    /// Changes an existing account (`SET PASSWORD`, `GRANT`, `REVOKE`, `ALTER USER`): `update`
    /// gets the current definition, under the DDL gate (so concurrent changes never lose each
    /// other's effect), and returns the new one. 1396 when the account does not exist.
    pub fn alter_account(
        &self,
        user: &str,
        host: &str,
        sql: &str,
        update: impl FnOnce(&AccountDef) -> Result<AccountDef, EngineError>,
    ) -> Result<(), EngineError> {
        self.run_ddl("", sql, |root| {
            let Some(cur) = root.catalog.account(user, host) else {
                return Err(EngineError::AccountOperation {
                    op: "ALTER USER",
                    user: user.to_string(),
                    host: host.to_string(),
                });
            };
            let mut account = update(cur)?;
            account.user = user.to_string();
            account.host = host.to_string();
            Ok(Some(CatalogChange::AlterAccount { account }))
        })?;
        Ok(())
    }

    /// Replaces every account at once (the reload of the `mysql` account tables from a dump):
    /// `build` gets the current accounts, under the DDL gate, and returns the accounts the
    /// catalog then holds, logged as one [`CatalogChange::ReplaceAccounts`] with `sql`. 1396
    /// when `build` returns one `(user, host)` twice (nothing changes).
    pub fn replace_accounts(
        &self,
        sql: &str,
        build: impl FnOnce(Vec<AccountDef>) -> Result<Vec<AccountDef>, EngineError>,
    ) -> Result<(), EngineError> {
        self.run_ddl("", sql, |root| {
            let current = root.catalog.accounts().map(|a| (**a).clone()).collect();
            Ok(Some(CatalogChange::ReplaceAccounts {
                accounts: build(current)?,
            }))
        })?;
        Ok(())
    }
}

/// [`Engine::run_ddl_with`]'s validation of `change` against `root`, leaving in `scratch`
/// the root it builds: the index or the rewritten table written into the base where that
/// applies (`below`, in chunks of `chunk` bytes), else the change applied in memory; and the
/// unique keys the new rows must keep.
fn validate(
    scratch: &mut Root,
    root: &Root,
    change: &CatalogChange,
    below: Option<(&Base, &CheckpointSerial<'_>)>,
    chunk: usize,
) -> Result<(), EngineError> {
    let built_below = match below {
        Some((base, serial)) => build_below(scratch, base, Some(serial), change, chunk)?,
        None => false,
    };
    if built_below {
        // The builds checked the unique keys they wrote.
        return Ok(());
    }
    scratch.apply_catalog_change(change)?;
    if let CatalogChange::CreateIndex { table, index } = change {
        // Built whole in the delta (`Root::make_whole` first), one entry per row.
        let built = scratch
            .tables
            .get(table)
            .and_then(|t| t.indexes.get(&index.id));
        if let (true, Some(entries)) = (index.unique, built) {
            check_unique_entries(entries, index)?;
        }
    }
    if let CatalogChange::AlterTable { table, sources, .. } = change {
        // Rows that stay as they were keep their unique keys valid.
        let kept = root
            .catalog
            .table(table.id)
            .is_some_and(|old| alter::keeps_rows(old, table, sources));
        for index in table.indexes.iter().filter(|i| i.unique && !kept) {
            check_unique_index(scratch, table.id, index)?;
        }
    }
    Ok(())
}

/// MariaDB's MODE_STRICT_TRANS_TABLES and MODE_STRICT_ALL_TABLES bits of `sql_mode`.
const STRICT_MODES: u64 = (1 << 22) | (1 << 23);

/// The `sql_mode` a DDL's Query event carries: MariaDB's default, without the strict modes
/// for an ALTER TABLE that copied without them (a replica, MariaDB's or onelog's, then
/// converts the values as the primary did).
fn logged_sql_mode(change: &CatalogChange) -> u64 {
    let default = onelog_binlog::event::query::DEFAULT_SQL_MODE;
    match change {
        CatalogChange::AlterTable { strict: false, .. } => default & !STRICT_MODES,
        _ => default,
    }
}

/// The conditions an ALTER TABLE's copy of `old`'s rows into `new` raises (the first failure
/// when `strict`), at most 64 (MariaDB's max_error_count), in row order.
fn copy_conditions(
    root: &Root,
    (old, new): (&TableDef, &TableDef),
    sources: &[ColumnSource],
    strict: bool,
) -> Result<Vec<Condition>, EngineError> {
    let mut out = Vec::new();
    if alter::keeps_rows(old, new, sources) {
        return Ok(out);
    }
    for (n, row) in root.all_rows(old.id).enumerate() {
        let row = row?;
        for (col, src) in new.columns.iter().zip(sources) {
            if let ColumnSource::Old(p) = src {
                let (Some(v), Some(from)) = (row.get(*p), old.columns.get(*p)) else {
                    continue;
                };
                alter::convert(col, &from.ty, v, n as u64 + 1, strict, &mut out)?;
                out.truncate(64);
            } else if let ColumnSource::Sequence = src {
                alter::number(col, n as u64 + 1)?;
            }
        }
    }
    Ok(out)
}

/// 1062 when `index` (already built in `root`) holds two entries with one non-NULL key.
pub(crate) fn check_unique_index(
    root: &Root,
    table: TableId,
    index: &IndexDef,
) -> Result<(), EngineError> {
    let Some(def) = root.catalog.table(table) else {
        return Ok(());
    };
    let mut prev: Option<Vec<u8>> = None;
    let mut keys: Vec<(Vec<u8>, Arc<Row>)> = Vec::new();
    for row in root.all_rows(table) {
        let row = row?;
        if index_has_null(index, &row) {
            continue;
        }
        let mut k = Vec::new();
        index_key(def, index, &row, &mut k);
        keys.push((k, row));
    }
    keys.sort_by(|a, b| a.0.cmp(&b.0));
    for (k, row) in &keys {
        if prev.as_ref() == Some(k) {
            return Err(duplicate_key(index, row));
        }
        prev = Some(k.clone());
    }
    Ok(())
}
