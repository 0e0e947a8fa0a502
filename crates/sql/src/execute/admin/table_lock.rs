//! `LOCK TABLES`, `UNLOCK TABLES`, `FLUSH TABLES [t, ...] WITH READ LOCK` and `FLUSH TABLES
//! ... FOR EXPORT`: the statements; the locks themselves and the rules statements follow
//! under them are `crate::table_locks`.
//!
//! As MariaDB 10.11 (each measured): LOCK TABLES first releases the session's table locks,
//! then commits its open transaction, then checks each table (1046 without a database, 1044
//! without the LOCK TABLES privilege on its database, 1142 without SELECT on it, 1146 when it
//! does not exist, 1066 for an alias used twice) and takes all of them at once, waiting at
//! most `lock_wait_timeout` (1205) for other sessions' locks. A view locks its base tables
//! too (in the view's mode; the session may then name them itself). UNLOCK TABLES commits the
//! open transaction only when the session held table locks, and releases the global read
//! lock too. `FLUSH TABLES t, ... WITH READ LOCK` is `LOCK TABLES t READ, ...`; without tables
//! it takes the global read lock (FTWRL: 1192 under LOCK TABLES, else it commits the open
//! transaction; the session may still read; its own writes fail with 1223; other sessions'
//! writes and commits wait). FOR EXPORT is refused:
//! onelog has no tablespace files to export.
//!
//! Invariants: the session holds table locks exactly while its LOCK TABLES list is non-empty
//! (`SessionTableLocks`); a failed LOCK TABLES leaves the session without table locks, as in
//! MariaDB.

use onelog_protocol::errors;
use sqlparser::ast;

use crate::context::ExecContext;
use crate::error::SqlError;
use crate::parse::admin::LockItem;
use crate::table_locks::{LockMode, LockedTable};

/// How deep views of views are followed for their base tables.
const VIEW_DEPTH: u32 = 16;

/// `LOCK TABLES items`.
pub(crate) fn lock_tables(cx: &mut ExecContext, items: Vec<LockItem>) -> Result<(), SqlError> {
    cx.table_locks.unlock_tables();
    cx.commit()?;
    let mut tables: Vec<LockedTable> = Vec::with_capacity(items.len());
    for it in items {
        let db = match it.db {
            Some(d) => d,
            None => cx.current_db.clone().ok_or_else(SqlError::no_database)?,
        };
        cx.check_db_privilege(&db, crate::privilege::LOCK_TABLES)?;
        cx.privs
            .check_table(&cx.user, &cx.host, &db, &it.table, crate::privilege::SELECT)?;
        let alias = it.alias.unwrap_or_else(|| it.table.clone());
        if tables
            .iter()
            .any(|t| !t.implicit && t.db == db && t.alias == alias)
        {
            return Err(SqlError::of(
                errors::ER_NONUNIQ_TABLE,
                format!("Not unique table/alias: '{alias}'"),
            ));
        }
        let cat = cx.server.engine.catalog();
        let is_table = cat.table_by_name(&db, &it.table).is_some();
        let view = cat.view(&db, &it.table).cloned();
        drop(cat);
        if !is_table && view.is_none() {
            // A `mysql` table onelog serves may be READ locked (mariadb-dump --all-databases
            // locks them); nothing writes it, so a WRITE lock is refused as a write is.
            match crate::mysqlschema::MysqlTable::named(&it.table) {
                Ok(t) if crate::mysqlschema::is_database(&db) => {
                    // ... except by the session reloading it from a dump (`reload`).
                    if it.mode.writes() && !super::reload::reloading(cx, &db, t.name()) {
                        return Err(crate::mysqlschema::read_only(t.name()));
                    }
                }
                _ => return Err(SqlError::no_such_table(&db, &it.table)),
            }
        }
        tables.push(LockedTable {
            db: db.clone(),
            table: it.table.clone(),
            alias,
            mode: it.mode,
            implicit: false,
        });
        if let Some(v) = view {
            view_base_tables(cx, &v, it.mode, 0, &mut tables);
        }
    }
    let timeout = cx.vars.lock_wait_timeout();
    cx.table_locks.lock(tables, timeout, &cx.guard)
}

/// Adds the base tables of view `v` (and of the views it reads) to `out`, locked in `mode`.
fn view_base_tables(
    cx: &ExecContext,
    v: &onelog_engine::ViewDef,
    mode: LockMode,
    depth: u32,
    out: &mut Vec<LockedTable>,
) {
    if depth >= VIEW_DEPTH {
        return;
    }
    let Ok(q) = crate::plan::select::view::parse_body(&v.query, &v.query_db) else {
        return;
    };
    let mut names = Vec::new();
    let _ = ast::visit_relations(&q, |n: &ast::ObjectName| {
        names.push(crate::expr::object_name_parts(n));
        std::ops::ControlFlow::<()>::Continue(())
    });
    for parts in names {
        let [db, table] = parts.as_slice() else {
            continue;
        };
        let cat = cx.server.engine.catalog();
        let inner = cat.view(db, table).cloned();
        let is_table = cat.table_by_name(db, table).is_some();
        drop(cat);
        if is_table {
            out.push(LockedTable {
                db: db.clone(),
                table: table.clone(),
                alias: table.clone(),
                mode,
                implicit: true,
            });
        } else if let Some(inner) = inner {
            view_base_tables(cx, &inner, mode, depth + 1, out);
        }
    }
}

/// `UNLOCK TABLES`.
pub(crate) fn unlock_tables(cx: &mut ExecContext) -> Result<(), SqlError> {
    if !cx.table_locks.locked().is_empty() {
        cx.commit()?;
        cx.table_locks.unlock_tables();
    }
    cx.table_locks.unlock_global_read();
    Ok(())
}

/// `FLUSH TABLES [t, ...]`: nothing to flush; under LOCK TABLES each named table (without
/// names: each locked one) must be locked for WRITE, as MariaDB (1100, 1099).
pub(crate) fn flush_tables(
    cx: &ExecContext,
    tables: Vec<(Option<String>, String)>,
) -> Result<(), SqlError> {
    let locked = cx.table_locks.locked();
    if locked.is_empty() {
        return Ok(());
    }
    if tables.is_empty() {
        return match locked.iter().find(|l| !l.implicit && !l.mode.writes()) {
            Some(l) => Err(crate::table_locks::read_locked(&l.table)),
            None => Ok(()),
        };
    }
    for (db, table) in tables {
        let db = match db {
            Some(d) => d,
            None => cx.current_db.clone().ok_or_else(SqlError::no_database)?,
        };
        let mine: Vec<_> = locked
            .iter()
            .filter(|l| l.db == db && l.table == table)
            .collect();
        if mine.is_empty() {
            return Err(crate::table_locks::not_locked(&table));
        }
        if !mine.iter().any(|l| l.mode.writes()) {
            return Err(crate::table_locks::read_locked(&table));
        }
    }
    Ok(())
}

/// `FLUSH TABLES [t, ...] WITH READ LOCK`.
pub(crate) fn flush_read_lock(
    cx: &mut ExecContext,
    tables: Vec<(Option<String>, String)>,
) -> Result<(), SqlError> {
    if tables.is_empty() {
        if !cx.table_locks.locked().is_empty() {
            return Err(lock_or_active_transaction());
        }
        cx.commit()?;
        let timeout = cx.vars.lock_wait_timeout();
        return cx.table_locks.lock_global_read(timeout, &cx.guard);
    }
    let items = tables
        .into_iter()
        .map(|(db, table)| LockItem {
            db,
            table,
            alias: None,
            mode: LockMode::Read,
        })
        .collect();
    lock_tables(cx, items)
}

/// 1192, MariaDB's answer to statements a session with table locks or an open transaction
/// may not run.
pub(crate) fn lock_or_active_transaction() -> SqlError {
    SqlError::of(
        errors::ER_LOCK_OR_ACTIVE_TRANSACTION,
        "Can't execute the given command because you have active locked tables or an active transaction",
    )
}

/// `FLUSH PRIVILEGES`: nothing to reload (the account catalogue is the grant tables), but
/// in locked-tables mode (LOCK TABLES, FLUSH TABLES t WITH READ LOCK) MariaDB 10.11.14
/// cannot open the grant tables it did not lock: 1100 for `db` (for `host` when `mysql.db`
/// is among the locked tables), whatever the lock modes. The global read lock of FLUSH
/// TABLES WITH READ LOCK allows it.
pub(crate) fn flush_privileges(cx: &ExecContext) -> Result<(), SqlError> {
    let locked = cx.table_locks.locked();
    if locked.is_empty() {
        return Ok(());
    }
    let db_locked = locked
        .iter()
        .any(|l| l.db.eq_ignore_ascii_case("mysql") && l.table.eq_ignore_ascii_case("db"));
    Err(crate::table_locks::not_locked(match db_locked {
        true => "host",
        false => "db",
    }))
}

/// `FLUSH TABLES t, ... FOR EXPORT`: 1192 in locked-tables mode (as MariaDB 10.11.14),
/// otherwise not supported.
pub(crate) fn flush_for_export(cx: &ExecContext) -> SqlError {
    if !cx.table_locks.locked().is_empty() {
        return lock_or_active_transaction();
    }
    SqlError::of(
        errors::ER_NOT_SUPPORTED_YET,
        "This version of onelog doesn't yet support 'FLUSH TABLES ... FOR EXPORT' (onelog tables have no tablespace files to copy)",
    )
}
