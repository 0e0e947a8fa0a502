//! Table maintenance statements: `CHECKSUM {TABLE | TABLES} t [, t ...] [QUICK | EXTENDED]`;
//! `ANALYZE`, `OPTIMIZE` and `REPAIR [NO_WRITE_TO_BINLOG | LOCAL] {TABLE | TABLES} t [, t ...]`
//! and `CHECK {TABLE | TABLES} t [, t ...]` with MariaDB's options (ANALYZE's `PERSISTENT FOR`
//! is refused: onelog keeps no engine-independent statistics).
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

/// `ANALYZE | CHECK | OPTIMIZE | REPAIR ...` (after the verb `first`); None when the verb does
/// not go on with TABLE (`ANALYZE SELECT ...` is not a table statement).
pub(super) fn table_op(p: &mut P<'_>, first: &str) -> Option<R<Stmt>> {
    let op = match first {
        "ANALYZE" => "analyze",
        "CHECK" => "check",
        "OPTIMIZE" => "optimize",
        _ => "repair",
    };
    let at = p.i;
    if op != "check" && !p.eat_kw("NO_WRITE_TO_BINLOG") {
        p.eat_kw("LOCAL");
    }
    if !p.eat_kw("TABLE") && !p.eat_kw("TABLES") {
        p.i = at;
        return None;
    }
    Some(table_op_rest(p, op))
}

fn table_op_rest(p: &mut P<'_>, op: &'static str) -> R<Stmt> {
    let mut tables = vec![p.qualified()?];
    while p.eat_sym(",") {
        tables.push(p.qualified()?);
    }
    let mut for_upgrade = false;
    match op {
        "analyze" if p.is_kw("PERSISTENT") => {
            return Err(crate::error::SqlError::unsupported(
                "ANALYZE TABLE ... PERSISTENT FOR (engine-independent statistics)",
            ))
        }
        "check" => loop {
            if p.eat_kw("FOR") {
                p.expect_kw("UPGRADE")?;
                for_upgrade = true;
            } else if !["QUICK", "FAST", "MEDIUM", "EXTENDED", "CHANGED"]
                .iter()
                .any(|k| p.eat_kw(k))
            {
                break;
            }
        },
        "optimize" => {
            if p.eat_kw("WAIT") {
                p.number()?;
            } else {
                p.eat_kw("NOWAIT");
            }
        }
        "repair" => while ["QUICK", "EXTENDED", "USE_FRM"].iter().any(|k| p.eat_kw(k)) {},
        _ => {}
    }
    p.expect_end()?;
    Ok(Stmt::TableMaintenance {
        op,
        tables,
        for_upgrade,
    })
}
