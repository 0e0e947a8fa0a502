//! SHOW statements (variables, status, databases, tables, columns, indexes, processlist,
//! warnings, engines, collations, character sets, master status, binary logs, binlog events,
//! grants) and DESCRIBE.
use super::Filter;

use super::{Stmt, P, R};
use crate::parse::lexer::Tok;

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
    let r = (|| -> R<Option<Stmt>> {
        let s = match w.as_str() {
            "VARIABLES" => Stmt::ShowVariables {
                global: global == Some(true),
                filter: p.filter()?,
            },
            "STATUS" => Stmt::ShowStatus {
                global: global == Some(true),
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
            "CREATE" => {
                if p.eat_kw("TABLE") {
                    let (db, table) = p.qualified()?;
                    Stmt::ShowCreateTable { db, table }
                } else if p.eat_kw("DATABASE") || p.eat_kw("SCHEMA") {
                    if p.eat_kw("IF") {
                        p.expect_kw("NOT")?;
                        p.expect_kw("EXISTS")?;
                    }
                    Stmt::ShowCreateDatabase { name: p.ident()? }
                } else {
                    return Ok(None);
                }
            }
            "COLUMNS" | "FIELDS" => {
                if !(p.eat_kw("FROM") || p.eat_kw("IN")) {
                    return Err(p.err());
                }
                let (mut db, table) = p.qualified()?;
                if p.eat_kw("FROM") || p.eat_kw("IN") {
                    db = Some(p.ident()?);
                }
                Stmt::ShowColumns {
                    full,
                    db,
                    table,
                    filter: p.filter()?,
                }
            }
            "INDEX" | "INDEXES" | "KEYS" => {
                if !(p.eat_kw("FROM") || p.eat_kw("IN")) {
                    return Err(p.err());
                }
                let (mut db, table) = p.qualified()?;
                if p.eat_kw("FROM") || p.eat_kw("IN") {
                    db = Some(p.ident()?);
                }
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
            "COUNT" => {
                // SHOW COUNT(*) WARNINGS | ERRORS
                if !(p.eat_sym("(") && p.eat_sym("*") && p.eat_sym(")")) {
                    return Err(p.err());
                }
                let errors_only = if p.eat_kw("ERRORS") {
                    true
                } else {
                    p.expect_kw("WARNINGS")?;
                    false
                };
                Stmt::ShowWarnings {
                    errors_only,
                    count: true,
                }
            }
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
            "MASTER" => {
                if p.eat_kw("STATUS") {
                    Stmt::ShowMasterStatus
                } else if p.eat_kw("LOGS") {
                    Stmt::ShowBinaryLogs
                } else {
                    return Ok(None);
                }
            }
            "BINLOG" => {
                if p.eat_kw("STATUS") {
                    Stmt::ShowMasterStatus
                } else if p.eat_kw("EVENTS") {
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
                } else {
                    return Ok(None);
                }
            }
            "BINARY" => {
                p.expect_kw("LOGS")?;
                Stmt::ShowBinaryLogs
            }
            "GRANTS" => {
                let user = if p.eat_kw("FOR") { p.user()? } else { None };
                Stmt::ShowGrants { user }
            }
            _ => return Ok(None),
        };
        p.expect_end()?;
        Ok(Some(s))
    })();
    match r {
        Ok(Some(s)) => Some(Ok(s)),
        Ok(None) => None,
        Err(e) => Some(Err(e)),
    }
}

/// `DESCRIBE | DESC | EXPLAIN [db.]table [column pattern]` (the keyword not yet consumed);
/// None for `EXPLAIN SELECT ...` and the like (not ours).
pub(super) fn describe(p: &mut P<'_>) -> Option<R<Stmt>> {
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
