//! SHOW statements (variables, status, databases, tables, columns, indexes, processlist,
//! warnings, engines, collations, character sets, master status, binary logs, binlog events,
//! grants) and DESCRIBE.
//!
//! Invariants: those of the family parsers (`parse/admin/mod.rs`): a form is recognised and
//! consumed to the statement's end, or it is not ours (None), or it is a 1064.
use super::Filter;

use super::{NoObjects, Stmt, P, R};
use crate::parse::lexer::Tok;

/// `SHOW ...` (after `SHOW`); None when it is not one of ours.
pub(super) fn show(p: &mut P<'_>) -> Option<R<Stmt>> {
    let global = if p.eat_kw("GLOBAL") {
        Some(true)
    } else if p.eat_kw("SESSION") || p.eat_kw("LOCAL") {
        Some(false)
    } else {
        None
    };
    let full = p.eat_kw("FULL");
    let Some(Tok::Word(w)) = p.peek().cloned() else {
        return None;
    };
    let w = w.to_ascii_uppercase();
    // Scope words only go with VARIABLES / STATUS; FULL only with TABLES / COLUMNS / PROCESSLIST.
    let scoped = matches!(w.as_str(), "VARIABLES" | "STATUS");
    if global.is_some() && !scoped {
        return None;
    }
    if full && !matches!(w.as_str(), "TABLES" | "COLUMNS" | "FIELDS" | "PROCESSLIST") {
        return None;
    }
    p.i += 1;
    let r = show_what(p, &w, global == Some(true), full).and_then(|s| match s {
        Some(s) => p.expect_end().map(|_| Some(s)),
        None => Ok(None),
    });
    r.transpose()
}

/// The statement after `SHOW [GLOBAL | SESSION] [FULL] w`; Ok(None) when not ours.
fn show_what(p: &mut P<'_>, w: &str, global: bool, full: bool) -> R<Option<Stmt>> {
    Ok(Some(match w {
        "VARIABLES" => Stmt::ShowVariables {
            global,
            filter: p.filter()?,
        },
        "STATUS" => Stmt::ShowStatus {
            global,
            filter: p.filter()?,
        },
        "DATABASES" | "SCHEMAS" => Stmt::ShowDatabases {
            filter: p.filter()?,
        },
        "TABLES" => {
            let db = if p.eat_kw("FROM") || p.eat_kw("IN") {
                Some(p.ident()?)
            } else {
                None
            };
            Stmt::ShowTables {
                full,
                db,
                filter: p.filter()?,
            }
        }
        "CREATE" => return show_create(p),
        "COLUMNS" | "FIELDS" => {
            let (db, table) = from_table(p)?;
            Stmt::ShowColumns {
                full,
                db,
                table,
                filter: p.filter()?,
            }
        }
        "INDEX" | "INDEXES" | "KEYS" => {
            let (db, table) = from_table(p)?;
            if p.eat_kw("WHERE") {
                // Accepted and ignored would be a lie; refuse.
                return Err(p.err());
            }
            Stmt::ShowIndex { db, table }
        }
        "PROCESSLIST" => Stmt::ShowProcesslist { full },
        "WARNINGS" | "ERRORS" => {
            if p.eat_kw("LIMIT") {
                p.number()?;
                if p.eat_sym(",") {
                    p.number()?;
                }
            }
            Stmt::ShowWarnings {
                errors_only: w == "ERRORS",
                count: false,
            }
        }
        "COUNT" => show_count(p)?,
        "ENGINES" => Stmt::ShowEngines,
        "STORAGE" => {
            p.expect_kw("ENGINES")?;
            Stmt::ShowEngines
        }
        "COLLATION" => Stmt::ShowCollation {
            filter: p.filter()?,
        },
        "CHARACTER" => {
            p.expect_kw("SET")?;
            Stmt::ShowCharset {
                filter: p.filter()?,
            }
        }
        "CHARSET" => Stmt::ShowCharset {
            filter: p.filter()?,
        },
        "MASTER" | "BINLOG" | "BINARY" => return show_binlog(p, w),
        "SLAVE" | "REPLICA" if p.eat_kw("HOSTS") => return Ok(Some(Stmt::ShowSlaveHosts)),
        "SLAVE" | "REPLICA" => return super::replication::show_status(p, false),
        "ALL" if p.eat_kw("SLAVES") || p.eat_kw("REPLICAS") => {
            return super::replication::show_status(p, true)
        }
        "TABLE" => {
            p.expect_kw("STATUS")?;
            let (db, filter) = from_db(p)?;
            Stmt::ShowTableStatus { db, filter }
        }
        "OPEN" => {
            p.expect_kw("TABLES")?;
            let (db, filter) = from_db(p)?;
            Stmt::ShowOpenTables { db, filter }
        }
        "PROCEDURE" | "FUNCTION" if p.eat_kw("STATUS") => Stmt::ShowNoObjects {
            what: if w == "PROCEDURE" {
                NoObjects::ProcedureStatus
            } else {
                NoObjects::FunctionStatus
            },
            db: None,
            filter: p.filter()?,
        },
        "PACKAGE" => {
            let _ = p.eat_kw("BODY");
            p.expect_kw("STATUS")?;
            Stmt::ShowNoObjects {
                what: NoObjects::PackageStatus,
                db: None,
                filter: p.filter()?,
            }
        }
        "TRIGGERS" | "EVENTS" => {
            let (db, filter) = from_db(p)?;
            let what = if w == "TRIGGERS" {
                NoObjects::Triggers
            } else {
                NoObjects::Events
            };
            Stmt::ShowNoObjects { what, db, filter }
        }
        "ENGINE" => {
            let name = p.ident()?;
            if !(p.eat_kw("STATUS") || p.eat_kw("MUTEX") || p.eat_kw("LOGS")) {
                return Err(p.err());
            }
            Stmt::ShowEngine { name }
        }
        "GRANTS" => {
            let user = if p.eat_kw("FOR") { p.user()? } else { None };
            Stmt::ShowGrants { user }
        }
        _ => return Ok(None),
    }))
}

/// `SHOW CREATE TABLE t` / `SHOW CREATE {DATABASE | SCHEMA} [IF NOT EXISTS] d`.
fn show_create(p: &mut P<'_>) -> R<Option<Stmt>> {
    if p.eat_kw("TABLE") {
        let (db, table) = p.qualified()?;
        Ok(Some(Stmt::ShowCreateTable { db, table }))
    } else if p.eat_kw("USER") {
        let user = if p.at_end() || matches!(p.peek(), Some(Tok::Sym(";"))) {
            None
        } else {
            p.user()?
        };
        Ok(Some(Stmt::ShowCreateUser { user }))
    } else if p.eat_kw("DATABASE") || p.eat_kw("SCHEMA") {
        let if_not_exists = p.eat_kw("IF");
        if if_not_exists {
            p.expect_kw("NOT")?;
            p.expect_kw("EXISTS")?;
        }
        Ok(Some(Stmt::ShowCreateDatabase {
            name: p.ident()?,
            if_not_exists,
        }))
    } else {
        Ok(None)
    }
}

/// `[{FROM | IN} db] [LIKE 'p' | WHERE ...]` of SHOW TABLE STATUS, OPEN TABLES, TRIGGERS,
/// EVENTS.
fn from_db(p: &mut P<'_>) -> R<(Option<String>, Filter)> {
    let db = if p.eat_kw("FROM") || p.eat_kw("IN") {
        Some(p.ident()?)
    } else {
        None
    };
    Ok((db, p.filter()?))
}

/// `{FROM | IN} [db.]table [{FROM | IN} db]` of SHOW COLUMNS / SHOW INDEX.
fn from_table(p: &mut P<'_>) -> R<(Option<String>, String)> {
    if !(p.eat_kw("FROM") || p.eat_kw("IN")) {
        return Err(p.err());
    }
    let (mut db, table) = p.qualified()?;
    if p.eat_kw("FROM") || p.eat_kw("IN") {
        db = Some(p.ident()?);
    }
    Ok((db, table))
}

/// `SHOW COUNT(*) {WARNINGS | ERRORS}` (after `COUNT`).
fn show_count(p: &mut P<'_>) -> R<Stmt> {
    if !(p.eat_sym("(") && p.eat_sym("*") && p.eat_sym(")")) {
        return Err(p.err());
    }
    let errors_only = if p.eat_kw("ERRORS") {
        true
    } else {
        p.expect_kw("WARNINGS")?;
        false
    };
    Ok(Stmt::ShowWarnings {
        errors_only,
        count: true,
    })
}

/// `SHOW MASTER STATUS | MASTER LOGS | BINLOG STATUS | BINARY LOGS` and
/// `SHOW BINLOG EVENTS [IN 'file'] [FROM pos] [LIMIT [offset,] n]` (after the first word).
fn show_binlog(p: &mut P<'_>, w: &str) -> R<Option<Stmt>> {
    Ok(Some(match w {
        "MASTER" if p.eat_kw("STATUS") => Stmt::ShowMasterStatus,
        "MASTER" if p.eat_kw("LOGS") => Stmt::ShowBinaryLogs,
        "BINLOG" if p.eat_kw("STATUS") => Stmt::ShowMasterStatus,
        "BINLOG" if p.eat_kw("EVENTS") => {
            let file = if p.eat_kw("IN") {
                Some(p.string()?)
            } else {
                None
            };
            let from = if p.eat_kw("FROM") {
                Some(p.number()?)
            } else {
                None
            };
            let (mut offset, mut limit) = (0, None);
            if p.eat_kw("LIMIT") {
                let a = p.number()?;
                if p.eat_sym(",") {
                    offset = a;
                    limit = Some(p.number()?);
                } else {
                    limit = Some(a);
                }
            }
            Stmt::ShowBinlogEvents {
                file,
                from,
                offset,
                limit,
            }
        }
        "BINARY" => {
            p.expect_kw("LOGS")?;
            Stmt::ShowBinaryLogs
        }
        _ => return Ok(None),
    }))
}

/// `DESCRIBE | DESC | EXPLAIN [db.]table [column pattern]` (the keyword not yet consumed);
/// None for `EXPLAIN SELECT ...` and the like (not ours).
pub(super) fn describe(p: &mut P<'_>) -> Option<R<Stmt>> {
    // MariaDB's EXPLAIN EXTENDED / PARTITIONS (the SQL parser knows neither): refused.
    if let (Some(Tok::Word(w)), Some(Tok::Word(next))) = (p.peek_at(1), p.peek_at(2)) {
        for kw in ["EXTENDED", "PARTITIONS"] {
            if w.eq_ignore_ascii_case(kw) && is_statement_word(next) {
                return Some(Err(crate::error::SqlError::unsupported(&format!(
                    "EXPLAIN {kw}"
                ))));
            }
        }
    }
    match p.peek_at(1) {
        Some(Tok::Word(w)) if is_statement_word(w) => return None,
        Some(Tok::Word(_)) | Some(Tok::QIdent(_)) => {}
        _ => return None,
    }
    p.i += 1;
    Some((|| {
        let (db, table) = p.qualified()?;
        let filter = match p.peek().cloned() {
            Some(Tok::Str(s)) | Some(Tok::Word(s)) | Some(Tok::QIdent(s)) => {
                p.i += 1;
                Filter::Like(s)
            }
            _ => Filter::None,
        };
        p.expect_end()?;
        Ok(Stmt::ShowColumns {
            full: false,
            db,
            table,
            filter,
        })
    })())
}

fn is_statement_word(w: &str) -> bool {
    [
        "SELECT",
        "INSERT",
        "UPDATE",
        "DELETE",
        "REPLACE",
        "WITH",
        "EXTENDED",
        "PARTITIONS",
        "FORMAT",
        "ANALYZE",
    ]
    .iter()
    .any(|k| w.eq_ignore_ascii_case(k))
}
