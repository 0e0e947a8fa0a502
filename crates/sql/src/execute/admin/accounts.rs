//! The account statements: CREATE/DROP USER, ALTER USER and SET PASSWORD, GRANT, REVOKE,
//! SHOW GRANTS and SHOW CREATE USER. The privilege model they change (bits, lookup, hashes,
//! the rules) is `crate::privilege`, whose module docs describe storage, host matching,
//! enforcement and bootstrap.
//!
//! Every account statement is a DDL log record (a Query event plus the catalog change); the
//! logged statement text never holds a plain password. Password hashes are shown (SHOW
//! GRANTS, SHOW CREATE USER) only to accounts that may read `mysql.user` (SELECT on `*.*` or
//! on `mysql`), as in MariaDB; SHOW GRANTS for another account needs the same privilege (1044
//! on `mysql` otherwise).
//!
//! Invariants: each account a statement names is changed by its own engine DDL record; the
//! text logged with it never holds a plain password.

use onelog_protocol::errors;

use onelog_engine::AccountDef;

use crate::context::ExecContext;
use crate::error::SqlError;
use crate::parse::admin::{Password, PrivName};
use crate::privilege::*;
use onelog_engine::AuthMethods;
use onelog_engine::GrantDef;

/// Parses `*HEX40` into the 20-byte hash (empty string: no password).
pub(crate) fn parse_hash(text: &str) -> Result<Vec<u8>, SqlError> {
    if text.is_empty() {
        return Ok(Vec::new());
    }
    let bad = || {
        SqlError::of(
            errors::ER_PASSWD_LENGTH,
            "Password hash should be a 41-digit hexadecimal number",
        )
    };
    let hex = text.strip_prefix('*').ok_or_else(bad)?;
    if hex.len() != 40 || !hex.is_ascii() {
        return Err(bad());
    }
    (0..20)
        .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).map_err(|_| bad()))
        .collect()
}

fn password_hash(pw: &Password) -> Result<Option<Vec<u8>>, SqlError> {
    Ok(match pw {
        Password::None => None,
        Password::Plain(p) if p.is_empty() => Some(Vec::new()),
        Password::Plain(p) => Some(native_hash(p)),
        Password::Hash(h) => Some(parse_hash(h)?),
    })
}

/// A string literal for logged statement text.
pub(crate) fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for c in s.chars() {
        match c {
            '\'' => out.push_str("''"),
            '\\' => out.push_str("\\\\"),
            // A NUL (a BINARY(n) default's padding) as MariaDB writes it: `'a\0\0'`.
            '\0' => out.push_str("\\0"),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// An account as SHOW GRANTS and SHOW CREATE USER write it in MariaDB 10.11: `` `u`@`h` ``
/// (a backtick doubled), where logged statements use [`user_text`]'s `'u'@'h'`.
fn account_ident(user: &str, host: &str) -> String {
    let bq = |s: &str| format!("`{}`", s.replace('`', "``"));
    format!("{}@{}", bq(user), bq(host))
}

fn user_text(user: &str, host: &str) -> String {
    format!("{}@{}", quote(user), quote(host))
}

fn identified_text(hash: &[u8]) -> String {
    if hash.is_empty() {
        String::new()
    } else {
        format!(" IDENTIFIED BY PASSWORD '{}'", hash_text(hash))
    }
}

/// `CREATE USER`; returns the number of accounts created.
pub(crate) fn create_users(
    cx: &mut ExecContext,
    if_not_exists: bool,
    users: &[((String, String), Password)],
) -> Result<u64, SqlError> {
    cx.require_global(CREATE_USER, "CREATE USER")?;
    let mut n = 0;
    for ((user, host), pw) in users {
        let hash = password_hash(pw)?.unwrap_or_default();
        let sql = format!(
            "CREATE USER {}{}{}",
            if if_not_exists { "IF NOT EXISTS " } else { "" },
            user_text(user, host),
            identified_text(&hash)
        );
        let def = AccountDef {
            user: user.clone(),
            host: host.clone(),
            auth_hash: hash,
            auth: AuthMethods::default(),
            grants: Vec::new(),
        };
        if cx.server.engine.create_account(def, if_not_exists, &sql)? {
            n += 1;
        } else {
            cx.warnings.push((
                "Note".into(),
                1973,
                format!("Can't create user '{user}'@'{host}'; it already exists"),
            ));
        }
    }
    Ok(n)
}

/// `DROP USER`.
pub(crate) fn drop_users(
    cx: &mut ExecContext,
    if_exists: bool,
    users: &[(String, String)],
) -> Result<u64, SqlError> {
    cx.require_global(CREATE_USER, "CREATE USER")?;
    let mut n = 0;
    for (user, host) in users {
        let sql = format!(
            "DROP USER {}{}",
            if if_exists { "IF EXISTS " } else { "" },
            user_text(user, host)
        );
        if cx.server.engine.drop_account(user, host, if_exists, &sql)? {
            n += 1;
        } else {
            cx.warnings.push((
                "Note".into(),
                1974,
                format!("Can't drop user '{user}'@'{host}'; it doesn't exist"),
            ));
        }
    }
    Ok(n)
}

/// `SET PASSWORD [FOR u@h] = ...`, `ALTER USER u@h IDENTIFIED BY ...`.
pub(crate) fn set_password(
    cx: &mut ExecContext,
    user: Option<(String, String)>,
    pw: &Password,
    if_exists: bool,
) -> Result<(), SqlError> {
    let (user, host) = match user {
        Some(u) => {
            let own = cx.current_account().is_some_and(|c| c == u);
            if !own {
                cx.require_global(CREATE_USER, "CREATE USER")?;
            }
            u
        }
        None => cx.current_account().ok_or_else(|| {
            SqlError::of(
                errors::ER_PASSWORD_NO_MATCH,
                "Can't find any matching row in the user table",
            )
        })?,
    };
    let Some(hash) = password_hash(pw)? else {
        return Ok(());
    };
    if if_exists && cx.server.engine.catalog().account(&user, &host).is_none() {
        return Ok(());
    }
    let sql = format!(
        "ALTER USER {}{}",
        user_text(&user, &host),
        if hash.is_empty() {
            " IDENTIFIED BY ''".to_string()
        } else {
            identified_text(&hash)
        }
    );
    cx.server
        .engine
        .alter_account(&user, &host, &sql, |a| {
            let mut a = a.clone();
            a.auth_hash = hash;
            // A password set on a unix_socket account is an alternative to the socket.
            a.auth.no_password_login = false;
            Ok(a)
        })
        .map_err(no_matching_row)
}

fn bits_of(privs: &[PrivName], scope: &str) -> u64 {
    privs.iter().fold(0, |acc, p| {
        acc | match p {
            PrivName::All if scope == "*" => ALL_GLOBAL,
            PrivName::All => ALL_DB,
            PrivName::Usage => 0,
            PrivName::Named(b) => *b,
        }
    })
}

fn privs_text(bits: u64, scope: &str) -> String {
    let all = if scope == "*" { ALL_GLOBAL } else { ALL_DB };
    let bits = bits & !GRANT_OPTION;
    if bits == 0 {
        return "USAGE".into();
    }
    if bits & all == all {
        return "ALL PRIVILEGES".into();
    }
    NAMES
        .iter()
        .filter(|(_, b)| bits & b != 0)
        .map(|(n, _)| *n)
        .collect::<Vec<_>>()
        .join(", ")
}

fn scope_text(scope: &str) -> String {
    if scope == "*" {
        "*.*".into()
    } else {
        format!("`{}`.*", scope.replace('`', "``"))
    }
}

fn resolve_scope(cx: &ExecContext, scope: &str) -> Result<String, SqlError> {
    if scope.is_empty() {
        cx.current_db
            .clone()
            .ok_or_else(|| SqlError::of(errors::ER_NO_DB_ERROR, "No database selected"))
    } else {
        Ok(scope.to_string())
    }
}

/// `GRANT privs ON scope TO users` (a password given with the user is set too).
pub(crate) fn grant(
    cx: &mut ExecContext,
    privs: &[PrivName],
    scope: &str,
    users: &[((String, String), Password)],
    grant_option: bool,
) -> Result<(), SqlError> {
    let scope = resolve_scope(cx, scope)?;
    let bits = bits_of(privs, &scope);
    if scope != "*" && bits & !ALL_DB != 0 {
        return Err(SqlError::of(
            errors::ER_WRONG_USAGE,
            "Incorrect usage of DB GRANT and GLOBAL PRIVILEGES",
        ));
    }
    require_grantor(cx, &scope, bits)?;
    let stored = if grant_option {
        bits | GRANT_OPTION
    } else {
        bits
    };
    for ((user, host), pw) in users {
        let hash = password_hash(pw)?;
        let sql = format!(
            "GRANT {} ON {} TO {}{}",
            privs_text(bits, &scope),
            scope_text(&scope),
            user_text(user, host),
            if grant_option {
                " WITH GRANT OPTION"
            } else {
                ""
            }
        );
        let scope2 = scope.clone();
        cx.server
            .engine
            .alter_account(user, host, &sql, move |a| {
                let mut a = a.clone();
                if let Some(h) = hash {
                    a.auth_hash = h;
                    a.auth.no_password_login = false;
                }
                match a.grants.iter_mut().find(|g| g.scope == scope2) {
                    Some(g) => g.privileges |= stored,
                    None => a.grants.push(GrantDef {
                        scope: scope2,
                        privileges: stored,
                    }),
                }
                Ok(a)
            })
            .map_err(no_matching_row)?;
    }
    Ok(())
}

fn require_grantor(cx: &ExecContext, scope: &str, bits: u64) -> Result<(), SqlError> {
    if cx.checked_account().is_none() {
        return Ok(());
    }
    let have = cx.privileges_on(scope);
    if have & GRANT_OPTION != 0 && have & bits == bits {
        return Ok(());
    }
    Err(SqlError::of(
        errors::ER_DBACCESS_DENIED_ERROR,
        format!(
            "Access denied for user '{}'@'{}' to database '{}'",
            cx.user,
            cx.host,
            if scope == "*" { "*" } else { scope }
        ),
    ))
}

/// `REVOKE privs ON scope FROM users`.
pub(crate) fn revoke(
    cx: &mut ExecContext,
    privs: &[PrivName],
    scope: &str,
    users: &[(String, String)],
) -> Result<(), SqlError> {
    let scope = resolve_scope(cx, scope)?;
    let mut bits = bits_of(privs, &scope);
    if privs.contains(&PrivName::All) {
        bits |= GRANT_OPTION;
    }
    require_grantor(cx, &scope, bits & !GRANT_OPTION)?;
    for (user, host) in users {
        let sql = format!(
            "REVOKE {} ON {} FROM {}",
            privs_text(bits, &scope),
            scope_text(&scope),
            user_text(user, host)
        );
        let scope2 = scope.clone();
        cx.server
            .engine
            .alter_account(user, host, &sql, move |a| {
                let mut a = a.clone();
                for g in a.grants.iter_mut().filter(|g| g.scope == scope2) {
                    g.privileges &= !bits;
                }
                a.grants.retain(|g| g.privileges != 0);
                Ok(a)
            })
            .map_err(|e| match e.code() {
                1396 => SqlError::of(
                    errors::ER_NONEXISTING_GRANT,
                    format!("There is no such grant defined for user '{user}' on host '{host}'"),
                ),
                _ => e.into(),
            })?;
    }
    Ok(())
}

/// Showing another account's grants (and so its password hash) needs what reading
/// `mysql.user` needs: SELECT on `mysql` (or on `*.*`); 1044 on `mysql` otherwise, as MariaDB.
/// The session's own account is always shown.
fn require_user_table_read(cx: &ExecContext, target: &(String, String)) -> Result<(), SqlError> {
    let Some(a) = cx.checked_account() else {
        return Ok(());
    };
    let own = a
        .as_deref()
        .is_some_and(|a| a.user == target.0 && a.host == target.1);
    if own
        || a.as_deref()
            .is_some_and(|a| grants_on(a, "mysql") & SELECT != 0)
    {
        return Ok(());
    }
    let host = a.as_deref().map_or(cx.host.as_str(), |a| a.host.as_str());
    Err(db_denied(&cx.user, host, "mysql"))
}

/// The authentication part of SHOW GRANTS' first line, in MariaDB's words.
fn identified_clause(a: &AccountDef) -> String {
    if !a.auth.unix_socket {
        return identified_text(&a.auth_hash);
    }
    let using = if a.auth.no_password_login {
        "invalid".to_string()
    } else {
        hash_text(&a.auth_hash)
    };
    format!(" IDENTIFIED VIA mysql_native_password USING '{using}' OR unix_socket")
}

/// The lines of `SHOW GRANTS [FOR u@h]` and the column title.
pub(crate) fn show_grants(
    cx: &ExecContext,
    user: Option<(String, String)>,
) -> Result<(String, Vec<String>), SqlError> {
    let (user, host) = match user {
        Some(u) => {
            require_user_table_read(cx, &u)?;
            u
        }
        None => cx.current_account().ok_or_else(|| {
            SqlError::of(
                errors::ER_NONEXISTING_GRANT,
                format!(
                    "There is no such grant defined for user '{}' on host '{}'",
                    cx.user, cx.host
                ),
            )
        })?,
    };
    let cat = cx.server.engine.catalog();
    let a = cat.account(&user, &host).ok_or_else(|| {
        SqlError::of(
            errors::ER_NONEXISTING_GRANT,
            format!("There is no such grant defined for user '{user}' on host '{host}'"),
        )
    })?;
    let who = account_ident(&a.user, &a.host);
    let global = a
        .grants
        .iter()
        .find(|g| g.scope == "*")
        .map_or(0, |g| g.privileges);
    let mut lines = vec![format!(
        "GRANT {} ON *.* TO {}{}{}",
        privs_text(global, "*"),
        who,
        identified_clause(a),
        if global & GRANT_OPTION != 0 {
            " WITH GRANT OPTION"
        } else {
            ""
        }
    )];
    for g in a.grants.iter().filter(|g| g.scope != "*") {
        lines.push(format!(
            "GRANT {} ON {} TO {}{}",
            privs_text(g.privileges, &g.scope),
            scope_text(&g.scope),
            who,
            if g.privileges & GRANT_OPTION != 0 {
                " WITH GRANT OPTION"
            } else {
                ""
            }
        ));
    }
    Ok((format!("Grants for {}@{}", a.user, a.host), lines))
}

/// `SHOW CREATE USER [u@h]`: the column title and MariaDB 10.11's statement
/// (`` CREATE USER `u`@`h` `` and the authentication part SHOW GRANTS prints). Another
/// account needs SELECT on `mysql` (1044), as SHOW GRANTS; 1133 for no such account.
pub(crate) fn show_create_user(
    cx: &ExecContext,
    user: Option<(String, String)>,
) -> Result<(String, String), SqlError> {
    let (user, host) = match user {
        Some(u) => {
            require_user_table_read(cx, &u)?;
            u
        }
        None => cx
            .current_account()
            .unwrap_or_else(|| (cx.user.clone(), cx.host.clone())),
    };
    let cat = cx.server.engine.catalog();
    let a = cat.account(&user, &host).ok_or_else(|| {
        SqlError::of(
            errors::ER_PASSWORD_NO_MATCH,
            "Can't find any matching row in the user table",
        )
    })?;
    Ok((
        format!("CREATE USER for {}@{}", a.user, a.host),
        format!(
            "CREATE USER {}{}",
            account_ident(&a.user, &a.host),
            identified_clause(a)
        ),
    ))
}

/// An engine error of an account change; 1396 (no such account) becomes MariaDB's 1133 of
/// SET PASSWORD / GRANT ("Can't find any matching row in the user table").
fn no_matching_row(e: onelog_engine::EngineError) -> SqlError {
    match e.code() {
        1396 => SqlError::of(
            errors::ER_PASSWORD_NO_MATCH,
            "Can't find any matching row in the user table",
        ),
        _ => e.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn native_hash_matches_mysql_password_function() {
        // MariaDB: SELECT PASSWORD('password') = '*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19'.
        assert_eq!(
            hash_text(&native_hash("password")),
            "*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19"
        );
        let h = native_hash("x");
        assert_eq!(parse_hash(&hash_text(&h)).unwrap(), h);
        assert_eq!(parse_hash("*12").unwrap_err().code, 1372);
        assert_eq!(parse_hash("").unwrap(), Vec::<u8>::new());
    }

    #[test]
    fn hosts_match_localhost_wildcards_and_exact_addresses() {
        assert!(host_matches("localhost", "127.0.0.1"));
        assert!(host_matches("localhost", ""));
        assert!(host_matches("localhost", "::1"));
        assert!(!host_matches("localhost", "10.0.0.1"));
        assert!(host_matches("%", "10.0.0.1"));
        assert!(host_matches("10.0.0.%", "10.0.0.7"));
        assert!(!host_matches("10.0.0.%", "10.0.1.7"));
        assert!(host_matches("10.0.0.1", "10.0.0.1"));
        assert!(host_matches("127.0.0.1", "localhost"));
        assert!(host_matches("127.%", "localhost"));
        assert!(!host_matches("10.%", "localhost"));
        assert!(
            specificity("10.0.0.1") > specificity("10.%") && specificity("10.%") > specificity("%")
        );
    }

    #[test]
    fn privilege_text_names_all_or_each_privilege() {
        assert_eq!(privs_text(ALL_GLOBAL, "*"), "ALL PRIVILEGES");
        assert_eq!(privs_text(ALL_DB, "d"), "ALL PRIVILEGES");
        assert_eq!(privs_text(0, "*"), "USAGE");
        assert_eq!(
            privs_text(REPLICATION_SLAVE | SELECT, "*"),
            "SELECT, REPLICATION SLAVE"
        );
        assert_eq!(privilege_bit("REPLICATION CLIENT"), Some(BINLOG_MONITOR));
        assert_eq!(quote("a'b\\"), "'a''b\\\\'");
    }
}
