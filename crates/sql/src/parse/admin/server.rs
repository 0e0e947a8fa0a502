//! Server control: FLUSH (BINARY LOGS, TABLES [t, ...] [WITH READ LOCK | FOR EXPORT] and
//! the forms that have nothing to do in onelog), SHUTDOWN, KILL [QUERY | CONNECTION], LOCK
//! TABLES, UNLOCK TABLES, BACKUP STAGE, ALTER TABLE ... {DISABLE | ENABLE} KEYS.
//!
//! Invariants: those of the family parsers (`parse/admin/mod.rs`).
use onelog_protocol::errors;

use super::{BackupStage, Stmt, P, R};
use crate::error::SqlError;
use crate::parse::lexer::Tok;

pub(super) fn flush(p: &mut P<'_>) -> R<Stmt> {
    let _ = p.eat_kw("NO_WRITE_TO_BINLOG") || p.eat_kw("LOCAL");
    let (mut binary, mut query_logs, mut status) = (false, false, false);
    let mut privileges = false;
    // `TABLES [t, ...]`: checked against the session's LOCK TABLES list.
    let mut flushed: Option<Vec<(Option<String>, String)>> = None;
    loop {
        let w = p.ident()?.to_ascii_uppercase();
        match w.as_str() {
            "BINARY" => {
                p.expect_kw("LOGS")?;
                binary = true;
            }
            "ENGINE" | "ERROR" | "GENERAL" | "SLOW" | "RELAY" => {
                p.expect_kw("LOGS")?;
                query_logs |= w == "GENERAL" || w == "SLOW";
            }
            "LOGS" => {
                binary = true;
                query_logs = true;
            }
            "STATUS" => status = true,
            "PRIVILEGES" => privileges = true,
            "HOSTS" | "USER_RESOURCES" | "QUERY" | "THREADS" => {
                if w == "QUERY" {
                    p.expect_kw("CACHE")?;
                }
            }
            "TABLES" | "TABLE" => {
                // FLUSH TABLES [t, ...] [WITH READ LOCK | FOR EXPORT]
                let mut tables = Vec::new();
                while matches!(p.peek(), Some(Tok::Word(_)) | Some(Tok::QIdent(_)))
                    && !p.is_kw("WITH")
                    && !p.is_kw("FOR")
                {
                    tables.push(p.qualified()?);
                    if !p.eat_sym(",") {
                        break;
                    }
                }
                if p.eat_kw("WITH") {
                    p.expect_kw("READ")?;
                    p.expect_kw("LOCK")?;
                    p.expect_end()?;
                    return Ok(Stmt::FlushTablesReadLock(tables));
                }
                if !tables.is_empty() && p.eat_kw("FOR") {
                    p.expect_kw("EXPORT")?;
                    p.expect_end()?;
                    return Ok(Stmt::FlushTablesForExport);
                }
                flushed.get_or_insert_with(Vec::new).extend(tables);
            }
            _ => return Err(p.err()),
        }
        if !p.eat_sym(",") {
            break;
        }
    }
    p.expect_end()?;
    let stmt = if query_logs || status {
        Stmt::FlushLogsStatus {
            binary,
            query_logs,
            status,
        }
    } else if binary {
        Stmt::FlushBinaryLogs
    } else if let Some(tables) = flushed {
        Stmt::FlushTables(tables)
    } else {
        Stmt::FlushNoop
    };
    Ok(match privileges {
        true => Stmt::FlushPrivileges(Box::new(stmt)),
        false => stmt,
    })
}

/// `KILL [HARD | SOFT] [QUERY | CONNECTION] id` (after `KILL`).
pub(super) fn kill(p: &mut P<'_>) -> R<Stmt> {
    let _ = p.eat_kw("HARD") || p.eat_kw("SOFT");
    let query_only = if p.eat_kw("QUERY") {
        true
    } else {
        p.eat_kw("CONNECTION");
        false
    };
    let id = p.number()?;
    p.expect_end()?;
    Ok(Stmt::Kill { query_only, id })
}

/// `UNLOCK {TABLES | TABLE}` (after `UNLOCK`).
pub(super) fn unlock(p: &mut P<'_>) -> R<Stmt> {
    if !p.eat_kw("TABLES") {
        p.expect_kw("TABLE")?;
    }
    p.expect_end()?;
    Ok(Stmt::UnlockTables)
}

/// `LOCK {TABLES | TABLE} t [[AS] alias] {READ [LOCAL] | [LOW_PRIORITY] WRITE | WRITE
/// CONCURRENT}, ...` (after `LOCK`), MariaDB 10.11's grammar.
pub(super) fn lock(p: &mut P<'_>) -> R<Stmt> {
    use crate::table_locks::LockMode;
    if !p.eat_kw("TABLES") {
        p.expect_kw("TABLE")?;
    }
    let mut items = Vec::new();
    loop {
        let (db, table) = p.qualified()?;
        let is_mode = |p: &P<'_>| p.is_kw("READ") || p.is_kw("WRITE") || p.is_kw("LOW_PRIORITY");
        let alias = if p.eat_kw("AS") || !is_mode(p) {
            Some(p.ident()?)
        } else {
            None
        };
        let mode = if p.eat_kw("READ") {
            let _ = p.eat_kw("LOCAL");
            LockMode::Read
        } else if p.eat_kw("LOW_PRIORITY") {
            p.expect_kw("WRITE")?;
            LockMode::Write
        } else {
            p.expect_kw("WRITE")?;
            if p.eat_kw("CONCURRENT") {
                LockMode::WriteConcurrent
            } else {
                LockMode::Write
            }
        };
        items.push(super::LockItem {
            db,
            table,
            alias,
            mode,
        });
        if !p.eat_sym(",") {
            break;
        }
    }
    p.expect_end()?;
    Ok(Stmt::LockTables(items))
}

/// `ALTER [IGNORE] TABLE name {DISABLE | ENABLE} KEYS` (after `ALTER`); None for any other
/// ALTER TABLE (sqlparser's: also ONLINE, which MariaDB refuses for this form, 1845).
pub(super) fn alter_keys(p: &mut P<'_>) -> Option<R<Stmt>> {
    let _ = p.eat_kw("IGNORE");
    if !p.eat_kw("TABLE") {
        return None;
    }
    let (db, table) = p.qualified().ok()?;
    if !(p.eat_kw("DISABLE") || p.eat_kw("ENABLE")) || !p.eat_kw("KEYS") {
        return None;
    }
    Some(p.expect_end().map(|_| Stmt::AlterKeys { db, table }))
}

/// `BACKUP STAGE {START | FLUSH | BLOCK_DDL | BLOCK_COMMIT | END}` (after `BACKUP`); None when
/// the next word is not STAGE (not ours). The stage is an identifier, as in MariaDB's grammar
/// (so it may be backquoted); an unknown one is MariaDB's 4149.
pub(super) fn backup(p: &mut P<'_>) -> Option<R<Stmt>> {
    if !p.eat_kw("STAGE") {
        return None;
    }
    Some((|| {
        let name = p.ident()?;
        let stage = BackupStage::ALL
            .into_iter()
            .find(|s| s.name().eq_ignore_ascii_case(&name))
            .ok_or_else(|| {
                SqlError::of(
                    errors::ER_BACKUP_UNKNOWN_STAGE,
                    format!(
                        "Unknown backup stage: '{name}'. Stage should be one of START, FLUSH, BLOCK_DDL, BLOCK_COMMIT or END"
                    ),
                )
            })?;
        p.expect_end()?;
        Ok(Stmt::BackupStage(stage))
    })())
}
