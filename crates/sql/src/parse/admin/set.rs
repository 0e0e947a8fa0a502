//! SET statements: system and user variables (`SET [GLOBAL | SESSION] var = expr, ...`,
//! `@@scope.var`, `@user := expr`), `SET NAMES`, `SET [GLOBAL | SESSION] TRANSACTION`,
//! `SET PASSWORD`. Values are kept as their source text, evaluated by the executor.
//!
//! Invariants: those of the family parsers (`parse/admin/mod.rs`); an assignment's value is the
//! exact source text between `=` and the next top-level `,` or the end.
use super::{Assignment, Password, SetTarget};
use crate::sysvar::registry::VarScope;

use super::{Stmt, P, R};
use crate::parse::lexer::Tok;

/// `SET ...` (after `SET`); None for SET STATEMENT / SET ROLE / SET DEFAULT ROLE (not ours).
pub(super) fn set(p: &mut P<'_>) -> Option<R<Stmt>> {
    // SET STATEMENT ... FOR ... is not supported here.
    if p.is_kw("STATEMENT") || p.is_kw("ROLE") || p.is_kw("DEFAULT") && p.is_kw_at(1, "ROLE") {
        return None;
    }
    if p.is_kw("NAMES") {
        p.i += 1;
        return Some(set_names(p));
    }
    if (p.is_kw("CHARACTER") && p.is_kw_at(1, "SET")) || p.is_kw("CHARSET") {
        p.i += if p.is_kw("CHARSET") { 1 } else { 2 };
        return Some(set_charset(p));
    }
    if p.is_kw("PASSWORD") && (matches!(p.peek_at(1), Some(Tok::Sym("="))) || p.is_kw_at(1, "FOR"))
    {
        p.i += 1;
        return Some(set_password(p));
    }
    // SET [GLOBAL|SESSION] TRANSACTION ...
    let k = usize::from(p.is_kw("GLOBAL") || p.is_kw("SESSION") || p.is_kw("LOCAL"));
    if p.is_kw_at(k, "TRANSACTION") {
        let global = p.is_kw("GLOBAL");
        p.i += k + 1;
        return Some(set_transaction(p, global, k == 0));
    }
    Some(assignments(p))
}

/// `SET NAMES {charset | DEFAULT} [COLLATE collation]` (after `NAMES`).
fn set_names(p: &mut P<'_>) -> R<Stmt> {
    let charset = if p.eat_kw("DEFAULT") {
        None
    } else {
        Some(p.name()?)
    };
    let collate = if p.eat_kw("COLLATE") {
        Some(p.name()?)
    } else {
        None
    };
    p.expect_end()?;
    Ok(Stmt::SetNames { charset, collate })
}

/// `SET {CHARACTER SET | CHARSET} {charset | DEFAULT}` (after the keyword).
fn set_charset(p: &mut P<'_>) -> R<Stmt> {
    let charset = if p.eat_kw("DEFAULT") {
        None
    } else {
        Some(p.name()?)
    };
    p.expect_end()?;
    Ok(Stmt::SetNames {
        charset,
        collate: None,
    })
}

/// `SET PASSWORD [FOR user] = {PASSWORD('plain') | '*HASH' | ''} [, assignment ...]` (after
/// `PASSWORD`).
fn set_password(p: &mut P<'_>) -> R<Stmt> {
    let user = if p.eat_kw("FOR") { p.user()? } else { None };
    if !p.eat_sym("=") {
        return Err(p.err());
    }
    let password = if p.eat_kw("PASSWORD") {
        if !p.eat_sym("(") {
            return Err(p.err());
        }
        let s = p.string()?;
        if !p.eat_sym(")") {
            return Err(p.err());
        }
        Password::Plain(s)
    } else {
        let h = p.string()?;
        if h.is_empty() {
            Password::None
        } else {
            Password::Hash(h)
        }
    };
    // More assignments may follow in the same SET, as in MariaDB's grammar.
    let then = if p.eat_sym(",") {
        match assignments(p)? {
            Stmt::Set(a) => a,
            _ => return Err(p.err()),
        }
    } else {
        p.expect_end()?;
        Vec::new()
    };
    Ok(Stmt::SetPassword {
        user,
        password,
        then,
    })
}

/// `SET [GLOBAL | SESSION] TRANSACTION characteristic, ...` (after `TRANSACTION`);
/// `next_only`: neither GLOBAL nor SESSION (MariaDB: the next transaction only).
fn set_transaction(p: &mut P<'_>, global: bool, next_only: bool) -> R<Stmt> {
    let mut isolation = None;
    let mut read_only = None;
    loop {
        if p.eat_kw("ISOLATION") {
            p.expect_kw("LEVEL")?;
            let a = p.ident()?.to_ascii_uppercase();
            let level = match a.as_str() {
                "REPEATABLE" => {
                    p.expect_kw("READ")?;
                    "REPEATABLE-READ"
                }
                "READ" => {
                    if p.eat_kw("COMMITTED") {
                        "READ-COMMITTED"
                    } else {
                        p.expect_kw("UNCOMMITTED")?;
                        "READ-UNCOMMITTED"
                    }
                }
                "SERIALIZABLE" => "SERIALIZABLE",
                _ => return Err(p.err()),
            };
            isolation = Some(level.to_string());
        } else if p.eat_kw("READ") {
            if p.eat_kw("ONLY") {
                read_only = Some(true);
            } else {
                p.expect_kw("WRITE")?;
                read_only = Some(false);
            }
        } else {
            return Err(p.err());
        }
        if !p.eat_sym(",") {
            break;
        }
    }
    p.expect_end()?;
    Ok(Stmt::SetTransaction {
        global,
        next_only,
        isolation,
        read_only,
    })
}

/// `SET [GLOBAL | SESSION] target = expr, ...`: user and system variable assignments.
fn assignments(p: &mut P<'_>) -> R<Stmt> {
    let mut out = Vec::new();
    let mut scope: Option<VarScope> = None;
    loop {
        if p.eat_kw("GLOBAL") {
            scope = Some(VarScope::Global);
        } else if p.eat_kw("SESSION") || p.eat_kw("LOCAL") {
            scope = Some(VarScope::Session);
        }
        let target = match p.peek().cloned() {
            Some(Tok::UserVar(n)) => {
                p.i += 1;
                SetTarget::User(n.to_ascii_lowercase())
            }
            Some(Tok::SysVar(n)) => {
                p.i += 1;
                let (sc, name) = split_sysvar(&n);
                let name = if name.is_empty() {
                    return Err(p.err());
                } else {
                    name
                };
                SetTarget::Sys {
                    scope: sc.or(scope),
                    name,
                }
            }
            Some(Tok::Word(_)) | Some(Tok::QIdent(_)) => {
                let mut name = p.ident()?;
                // `SET GLOBAL a.b = ...` style names (structured variables) are not
                // supported; a dotted name is an error below as an unknown variable.
                if p.eat_sym(".") {
                    name = format!("{name}.{}", p.ident()?);
                }
                SetTarget::Sys {
                    scope,
                    name: name.to_ascii_lowercase(),
                }
            }
            _ => return Err(p.err()),
        };
        if !p.eat_sym("=") {
            return Err(p.err());
        }
        let expr = p.expr_text()?;
        out.push(Assignment { target, expr });
        if !p.eat_sym(",") {
            break;
        }
    }
    p.expect_end()?;
    Ok(Stmt::Set(out))
}

/// `global.name` / `session.name` / `local.name` / `name` after `@@`.
pub(crate) fn split_sysvar(text: &str) -> (Option<VarScope>, String) {
    if let Some((a, b)) = text.split_once('.') {
        if a.eq_ignore_ascii_case("global") {
            return (Some(VarScope::Global), b.to_ascii_lowercase());
        }
        if a.eq_ignore_ascii_case("session") || a.eq_ignore_ascii_case("local") {
            return (Some(VarScope::Session), b.to_ascii_lowercase());
        }
    }
    (None, text.to_ascii_lowercase())
}
