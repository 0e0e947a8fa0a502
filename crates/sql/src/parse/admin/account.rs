//! Account statements: CREATE / DROP / ALTER USER, GRANT, REVOKE, and the privilege list
//! with its `ON scope` they share.
//!
//! Invariants: those of the family parsers (`parse/admin/mod.rs`); a password is kept as given
//! (plain or hash), hashed by the executor, never logged by the parser.
use super::PrivName;
use onelog_protocol::errors;

use super::{Stmt, P, R};
use crate::error::SqlError;
use crate::parse::lexer::Tok;

/// `CREATE USER [IF NOT EXISTS] user [IDENTIFIED ...], ...` (after `CREATE USER`).
pub(super) fn create_user(p: &mut P<'_>) -> R<Stmt> {
    let mut if_not_exists = false;
    if p.eat_kw("IF") {
        p.expect_kw("NOT")?;
        p.expect_kw("EXISTS")?;
        if_not_exists = true;
    }
    let users = p.user_list_with_password()?;
    p.expect_end()?;
    Ok(Stmt::CreateUser {
        if_not_exists,
        users,
    })
}

/// `DROP USER [IF EXISTS] user, ...` (after `DROP USER`).
pub(super) fn drop_user(p: &mut P<'_>) -> R<Stmt> {
    let mut if_exists = false;
    if p.eat_kw("IF") {
        p.expect_kw("EXISTS")?;
        if_exists = true;
    }
    let mut users = vec![p.named_user()?];
    while p.eat_sym(",") {
        users.push(p.named_user()?);
    }
    p.expect_end()?;
    Ok(Stmt::DropUser { if_exists, users })
}

/// `ALTER USER [IF EXISTS] user IDENTIFIED ..., ...` (after `ALTER USER`).
pub(super) fn alter_user(p: &mut P<'_>) -> R<Stmt> {
    let mut if_exists = false;
    if p.eat_kw("IF") {
        p.expect_kw("EXISTS")?;
        if_exists = true;
    }
    let users = p.user_list_with_password()?;
    p.expect_end()?;
    Ok(Stmt::AlterUser { if_exists, users })
}

/// `GRANT privileges ON scope TO user, ... [WITH GRANT OPTION]` (after `GRANT`).
pub(super) fn grant(p: &mut P<'_>) -> R<Stmt> {
    let (privs, scope) = privileges_on(p)?;
    p.expect_kw("TO")?;
    let users = p.user_list_with_password()?;
    let mut grant_option = false;
    if p.eat_kw("WITH") {
        p.expect_kw("GRANT")?;
        p.expect_kw("OPTION")?;
        grant_option = true;
    }
    p.expect_end()?;
    Ok(Stmt::Grant {
        privs,
        scope,
        users,
        grant_option,
    })
}

/// `REVOKE privileges ON scope FROM user, ...` (after `REVOKE`).
pub(super) fn revoke(p: &mut P<'_>) -> R<Stmt> {
    let (privs, scope) = privileges_on(p)?;
    p.expect_kw("FROM")?;
    let mut users = vec![p.named_user()?];
    while p.eat_sym(",") {
        users.push(p.named_user()?);
    }
    p.expect_end()?;
    Ok(Stmt::Revoke {
        privs,
        scope,
        users,
    })
}

/// `priv [, priv] ON scope` of GRANT / REVOKE.
pub(super) fn privileges_on(p: &mut P<'_>) -> R<(Vec<PrivName>, String)> {
    use crate::privilege::privilege_bit;
    let mut privs = Vec::new();
    loop {
        let w = p.ident()?.to_ascii_uppercase();
        let mut name = w.clone();
        // Multi-word privilege names.
        while let Some(Tok::Word(next)) = p.peek().cloned() {
            if next.eq_ignore_ascii_case("ON") || next.eq_ignore_ascii_case("PRIVILEGES") {
                break;
            }
            name.push(' ');
            name.push_str(&next.to_ascii_uppercase());
            p.i += 1;
        }
        let pv = match name.as_str() {
            "ALL" => {
                let _ = p.eat_kw("PRIVILEGES");
                PrivName::All
            }
            "USAGE" => PrivName::Usage,
            other => match privilege_bit(other) {
                Some(b) => PrivName::Named(b),
                None => return Err(p.err()),
            },
        };
        privs.push(pv);
        if !p.eat_sym(",") {
            break;
        }
    }
    p.expect_kw("ON")?;
    let _ = p.eat_kw("TABLE");
    let scope = if p.eat_sym("*") {
        if p.eat_sym(".") {
            if !p.eat_sym("*") {
                return Err(p.err());
            }
            "*".to_string()
        } else {
            // `ON *`: the current database; resolved by the caller as "".
            String::new()
        }
    } else {
        let db = p.ident()?;
        if !p.eat_sym(".") || !p.eat_sym("*") {
            return Err(SqlError::of(
                errors::ER_NOT_SUPPORTED_YET,
                "onelog supports privileges on *.* and db.* only (no table or column privileges)",
            ));
        }
        db
    };
    Ok((privs, scope))
}
