//! Binlog statements: PURGE BINARY LOGS, RESET MASTER (FLUSH BINARY LOGS is a FLUSH form,
//! in `server`; SHOW MASTER STATUS / BINARY LOGS / BINLOG EVENTS are SHOW forms, in `show`).
//!
//! Invariants: those of the family parsers (`parse/admin/mod.rs`).

use super::{Stmt, P, R};

/// `PURGE {BINARY | MASTER} LOGS {TO 'file' | BEFORE datetime_expr}` (after `PURGE`); None
/// when the next word is neither BINARY nor MASTER (not ours). The BEFORE expression is kept as
/// its source text (MariaDB's grammar takes any expression: `NOW() - INTERVAL 3 DAY`).
pub(super) fn purge(p: &mut P<'_>) -> Option<R<Stmt>> {
    if !(p.eat_kw("BINARY") || p.eat_kw("MASTER")) {
        return None;
    }
    Some((|| {
        p.expect_kw("LOGS")?;
        let s = if p.eat_kw("TO") {
            Stmt::PurgeTo(p.string()?)
        } else if p.eat_kw("BEFORE") {
            Stmt::PurgeBefore(p.expr_text()?)
        } else {
            return Err(p.err());
        };
        p.expect_end()?;
        Ok(s)
    })())
}

/// `RESET MASTER` (after `RESET`); None for other RESET statements (not ours).
pub(super) fn reset(p: &mut P<'_>) -> Option<R<Stmt>> {
    if !p.eat_kw("MASTER") {
        return None;
    }
    Some(p.expect_end().map(|_| Stmt::ResetMaster))
}
