//! Table maintenance statements: `CHECKSUM {TABLE | TABLES} t [, t ...] [QUICK | EXTENDED]`.
//!
//! Invariants: those of the family parsers (`parse/admin/mod.rs`); QUICK and EXTENDED are
//! exclusive (MariaDB's grammar takes at most one option word: 1064 otherwise).
use super::{Stmt, P, R};

/// `CHECKSUM {TABLE | TABLES} name [, name ...] [QUICK | EXTENDED]` (after `CHECKSUM`).
pub(super) fn checksum(p: &mut P<'_>) -> R<Stmt> {
    if !p.eat_kw("TABLE") {
        p.expect_kw("TABLES")?;
    }
    let mut tables = vec![p.qualified()?];
    while p.eat_sym(",") {
        tables.push(p.qualified()?);
    }
    let quick = if p.eat_kw("QUICK") {
        true
    } else {
        p.eat_kw("EXTENDED");
        false
    };
    p.expect_end()?;
    Ok(Stmt::Checksum { tables, quick })
}
