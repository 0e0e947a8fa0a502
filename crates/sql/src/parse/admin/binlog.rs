//! Binlog statements: PURGE BINARY LOGS, RESET MASTER, BACKUP STAGE (FLUSH BINARY LOGS is a FLUSH form,
//! in `server`; SHOW MASTER STATUS / BINARY LOGS / BINLOG EVENTS are SHOW forms, in `show`).
//!
//! Invariants: those of the family parsers (`parse/admin/mod.rs`).

use super::{Stmt, P, R};

/// `PURGE {BINARY | MASTER} LOGS {TO 'file' | BEFORE 'datetime'}` (after `PURGE`); None when
/// the next word is neither BINARY nor MASTER (not ours).
pub(super) fn purge(p: &mut P<'_>) -> Option<R<Stmt>> {
    if !(p.eat_kw("BINARY") || p.eat_kw("MASTER")) {
        return None;
    }
    Some((|| {
        p.expect_kw("LOGS")?;
        let s = if p.eat_kw("TO") {
            Stmt::PurgeTo(p.string()?)
        } else if p.eat_kw("BEFORE") {
            Stmt::PurgeBefore(p.string()?)
        } else {
            return Err(p.err());
        };
        p.expect_end()?;
        Ok(s)
    })())
}

/// A stage of `BACKUP STAGE`, in MariaDB's order (stages only move forward).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum BackupStage {
    Start,
    Flush,
    BlockDdl,
    BlockCommit,
    End,
}

impl BackupStage {
    /// MariaDB's name of the stage (in its error messages).
    pub fn name(self) -> &'static str {
        match self {
            BackupStage::Start => "START",
            BackupStage::Flush => "FLUSH",
            BackupStage::BlockDdl => "BLOCK_DDL",
            BackupStage::BlockCommit => "BLOCK_COMMIT",
            BackupStage::End => "END",
        }
    }
}

/// `BACKUP STAGE {START | FLUSH | BLOCK_DDL | BLOCK_COMMIT | END}` (after `BACKUP`); None when
/// the next word is not STAGE (BACKUP LOCK, not ours).
pub(super) fn backup_stage(p: &mut P<'_>) -> Option<R<Stmt>> {
    if !p.eat_kw("STAGE") {
        return None;
    }
    let stage = [
        BackupStage::Start,
        BackupStage::Flush,
        BackupStage::BlockDdl,
        BackupStage::BlockCommit,
        BackupStage::End,
    ]
    .into_iter()
    .find(|s| p.eat_kw(s.name()));
    Some(match stage {
        Some(s) => p.expect_end().map(|_| Stmt::BackupStage(s)),
        None => Err(p.err()),
    })
}

/// `RESET MASTER` (after `RESET`); None for other RESET statements (not ours).
pub(super) fn reset(p: &mut P<'_>) -> Option<R<Stmt>> {
    if !p.eat_kw("MASTER") {
        return None;
    }
    Some(p.expect_end().map(|_| Stmt::ResetMaster))
}
