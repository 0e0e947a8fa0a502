//! The replica's statements: CHANGE MASTER TO, START / STOP SLAVE, RESET SLAVE and SHOW SLAVE
//! STATUS (with MariaDB's REPLICA spellings, the `'connection_name'` form and the ALL forms).
//!
//! CHANGE MASTER takes the options onelog honours (`MASTER_HOST`, `_PORT`, `_USER`,
//! `_PASSWORD`, `_USE_GTID`, `_DEMOTE_TO_SLAVE` / `_TO_REPLICA`, `_HEARTBEAT_PERIOD`,
//! `_CONNECT_RETRY`, `_LOG_FILE`, `_LOG_POS`); every other option MariaDB 10.11 has is refused
//! with 1235 (never ignored), except where its value is MariaDB's default, which is what
//! onelog does anyway (`MASTER_SSL=0`, `MASTER_SSL_VERIFY_SERVER_CERT=0`, `MASTER_DELAY=0`,
//! empty `IGNORE_SERVER_IDS` / `DO_DOMAIN_IDS` / `IGNORE_DOMAIN_IDS`). A named connection
//! other than `''` is refused with 1235: onelog has one replica connection.
//!
//! Invariants: those of the family parsers (`parse/admin/mod.rs`); the checks that need the
//! replica's state (1277, 1941, 1943, 1949, 1254) are the executor's.

use onelog_protocol::errors;
use onelog_replication::replica::control::Threads;
use onelog_replication::replica::{ChangeMaster, UseGtid};

use super::{Stmt, P, R};
use crate::error::SqlError;
use crate::parse::lexer::Tok;

/// The options MariaDB 10.11 has that onelog refuses (unless given their default value:
/// [`default_value_ok`]).
const REFUSED: &[&str] = &[
    "MASTER_BIND",
    "RELAY_LOG_FILE",
    "RELAY_LOG_POS",
    "MASTER_SSL",
    "MASTER_SSL_CA",
    "MASTER_SSL_CAPATH",
    "MASTER_SSL_CERT",
    "MASTER_SSL_CRL",
    "MASTER_SSL_CRLPATH",
    "MASTER_SSL_KEY",
    "MASTER_SSL_CIPHER",
    "MASTER_SSL_VERIFY_SERVER_CERT",
    "IGNORE_SERVER_IDS",
    "DO_DOMAIN_IDS",
    "IGNORE_DOMAIN_IDS",
    "MASTER_DELAY",
];

fn refused(what: &str) -> SqlError {
    SqlError::of(
        errors::ER_NOT_SUPPORTED_YET,
        format!("This version of onelog doesn't yet support '{what}'"),
    )
}

/// `['connection_name']` after SLAVE / MASTER: only the default connection `''`.
fn connection_name(p: &mut P<'_>) -> R<()> {
    if let Some(Tok::Str(name)) = p.peek().cloned() {
        p.i += 1;
        if !name.is_empty() {
            return Err(refused(&format!(
                "replication connection '{name}' (onelog has only the default connection '')"
            )));
        }
    }
    Ok(())
}

fn slave_word(p: &mut P<'_>) -> bool {
    p.eat_kw("SLAVE") || p.eat_kw("REPLICA")
}

/// `CHANGE MASTER ['name'] TO opt = value [, ...]` (after CHANGE); None for other CHANGE
/// statements.
pub(super) fn change(p: &mut P<'_>) -> Option<R<Stmt>> {
    if !p.eat_kw("MASTER") {
        return None;
    }
    Some((|| {
        connection_name(p)?;
        p.expect_kw("TO")?;
        let mut cm = ChangeMaster::default();
        loop {
            option(p, &mut cm)?;
            if !p.eat_sym(",") {
                break;
            }
        }
        p.expect_end()?;
        Ok(Stmt::ChangeMaster(cm))
    })())
}

/// One `opt = value` of CHANGE MASTER into `cm`.
fn option(p: &mut P<'_>, cm: &mut ChangeMaster) -> R<()> {
    let name = p.ident()?.to_ascii_uppercase();
    if !p.eat_sym("=") {
        return Err(p.err());
    }
    match name.as_str() {
        "MASTER_HOST" => cm.host = Some(p.string()?),
        "MASTER_USER" => cm.user = Some(p.string()?),
        "MASTER_PASSWORD" => cm.password = Some(p.string()?),
        "MASTER_LOG_FILE" => cm.log_file = Some(p.string()?),
        "MASTER_PORT" => {
            let n = p.number()?;
            cm.port = Some(u16::try_from(n).map_err(|_| p.err())?);
        }
        "MASTER_CONNECT_RETRY" => cm.connect_retry = Some(p.number()?),
        "MASTER_LOG_POS" => cm.log_pos = Some(p.number()?),
        "MASTER_HEARTBEAT_PERIOD" => {
            let Some(Tok::Num(n)) = p.peek().cloned() else {
                return Err(p.err());
            };
            cm.heartbeat_period = Some(n.parse::<f64>().map_err(|_| p.err())?);
            p.i += 1;
        }
        "MASTER_USE_GTID" => {
            let w = p.ident()?.to_ascii_uppercase();
            cm.use_gtid = Some(match w.as_str() {
                "SLAVE_POS" | "REPLICA_POS" => UseGtid::SlavePos,
                "CURRENT_POS" => UseGtid::CurrentPos,
                "NO" => UseGtid::No,
                _ => {
                    p.i -= 1;
                    return Err(p.err());
                }
            });
        }
        "MASTER_DEMOTE_TO_SLAVE" | "MASTER_DEMOTE_TO_REPLICA" => cm.demote = boolean(p)?,
        other if REFUSED.contains(&other) => {
            if !default_value_ok(p, other)? {
                return Err(refused(&format!("CHANGE MASTER TO {other}")));
            }
        }
        _ => {
            p.i -= 2;
            return Err(p.err());
        }
    }
    Ok(())
}

/// `0`, `1`, TRUE, FALSE.
fn boolean(p: &mut P<'_>) -> R<bool> {
    if p.eat_kw("TRUE") {
        return Ok(true);
    }
    if p.eat_kw("FALSE") {
        return Ok(false);
    }
    Ok(p.number()? != 0)
}

/// Consumes the value of a refused option; true when it is MariaDB's default (what onelog
/// does anyway), so the option may be accepted.
fn default_value_ok(p: &mut P<'_>, name: &str) -> R<bool> {
    match name {
        "MASTER_SSL" | "MASTER_SSL_VERIFY_SERVER_CERT" | "MASTER_DELAY" => {
            if p.is_kw("TRUE") || p.is_kw("FALSE") {
                return Ok(!boolean(p)?);
            }
            Ok(matches!(p.peek(), Some(Tok::Num(_))) && p.number()? == 0)
        }
        "IGNORE_SERVER_IDS" | "DO_DOMAIN_IDS" | "IGNORE_DOMAIN_IDS" => {
            if !p.eat_sym("(") {
                return Err(p.err());
            }
            Ok(p.eat_sym(")"))
        }
        _ => Ok(false),
    }
}

/// `START SLAVE ['name'] [IO_THREAD | SQL_THREAD [, ...]] [UNTIL MASTER_GTID_POS = 'pos']`,
/// `START ALL SLAVES` (after START); None for other START statements (START TRANSACTION).
pub(super) fn start(p: &mut P<'_>) -> Option<R<Stmt>> {
    if p.eat_kw("ALL") {
        if !(p.eat_kw("SLAVES") || p.eat_kw("REPLICAS")) {
            return Some(Err(p.err()));
        }
        return Some(all_threads(p).map(|threads| Stmt::StartSlave {
            threads,
            until: None,
        }));
    }
    if !slave_word(p) {
        return None;
    }
    Some((|| {
        connection_name(p)?;
        let threads = thread_list(p)?;
        let until = if p.eat_kw("UNTIL") {
            let w = p.ident()?.to_ascii_uppercase();
            if w != "MASTER_GTID_POS" {
                return Err(refused(&format!("START SLAVE UNTIL {w}")));
            }
            if !p.eat_sym("=") {
                return Err(p.err());
            }
            Some(p.string()?)
        } else {
            None
        };
        p.expect_end()?;
        Ok(Stmt::StartSlave { threads, until })
    })())
}

/// `STOP SLAVE ['name'] [threads]`, `STOP ALL SLAVES` (after STOP).
pub(super) fn stop(p: &mut P<'_>) -> Option<R<Stmt>> {
    if p.eat_kw("ALL") {
        if !(p.eat_kw("SLAVES") || p.eat_kw("REPLICAS")) {
            return Some(Err(p.err()));
        }
        return Some(all_threads(p).map(|threads| Stmt::StopSlave { threads }));
    }
    if !slave_word(p) {
        return None;
    }
    Some((|| {
        connection_name(p)?;
        let threads = thread_list(p)?;
        p.expect_end()?;
        Ok(Stmt::StopSlave { threads })
    })())
}

/// The optional thread list of START ALL SLAVES / STOP ALL SLAVES, to the end.
fn all_threads(p: &mut P<'_>) -> R<Threads> {
    let t = thread_list(p)?;
    p.expect_end()?;
    Ok(t)
}

/// `[IO_THREAD | SQL_THREAD [, ...]]`.
fn thread_list(p: &mut P<'_>) -> R<Threads> {
    let (mut io, mut sql) = (false, false);
    loop {
        if p.eat_kw("IO_THREAD") {
            io = true;
        } else if p.eat_kw("SQL_THREAD") {
            sql = true;
        } else if io || sql {
            return Err(p.err());
        } else {
            break;
        }
        if !p.eat_sym(",") {
            break;
        }
    }
    Ok(match (io, sql) {
        (true, false) => Threads::Io,
        (false, true) => Threads::Sql,
        _ => Threads::Both,
    })
}

/// `RESET SLAVE ['name'] [ALL]` (after RESET, with SLAVE / REPLICA next); None otherwise.
pub(super) fn reset(p: &mut P<'_>) -> Option<R<Stmt>> {
    if !slave_word(p) {
        return None;
    }
    Some((|| {
        connection_name(p)?;
        let all = p.eat_kw("ALL");
        p.expect_end()?;
        Ok(Stmt::ResetSlave { all })
    })())
}

/// `SHOW SLAVE ['name'] STATUS` after `SHOW SLAVE` (`all` false) or `SHOW ALL SLAVES STATUS`
/// after `SHOW ALL SLAVES` (`all` true). The caller checks the statement's end.
pub(super) fn show_status(p: &mut P<'_>, all: bool) -> R<Option<Stmt>> {
    if !all {
        connection_name(p)?;
    }
    p.expect_kw("STATUS")?;
    Ok(Some(Stmt::ShowSlaveStatus { all }))
}

#[cfg(test)]
mod tests {
    use super::super::parse;
    use super::*;

    fn ok(sql: &str) -> Stmt {
        match parse(sql) {
            Some(Ok(s)) => s,
            other => panic!("{sql}: {other:?}"),
        }
    }

    fn code(sql: &str) -> u16 {
        match parse(sql) {
            Some(Err(e)) => e.code,
            other => panic!("{sql}: {other:?}"),
        }
    }

    #[test]
    fn change_master_options() {
        let s = ok(
            "CHANGE MASTER TO MASTER_HOST='10.0.0.1', master_port=3307, \
                    MASTER_USER='repl', MASTER_PASSWORD=\"pw\", MASTER_USE_GTID=replica_pos, \
                    MASTER_DEMOTE_TO_REPLICA=1, MASTER_HEARTBEAT_PERIOD=2.5, \
                    MASTER_CONNECT_RETRY=10, MASTER_LOG_FILE='b.000001', MASTER_LOG_POS=4;",
        );
        assert_eq!(
            s,
            Stmt::ChangeMaster(ChangeMaster {
                host: Some("10.0.0.1".into()),
                port: Some(3307),
                user: Some("repl".into()),
                password: Some("pw".into()),
                connect_retry: Some(10),
                heartbeat_period: Some(2.5),
                use_gtid: Some(UseGtid::SlavePos),
                log_file: Some("b.000001".into()),
                log_pos: Some(4),
                demote: true,
            })
        );
        let s = ok(
            "change master '' to master_use_gtid=current_pos, MASTER_SSL=0, \
                    IGNORE_SERVER_IDS=(), MASTER_DEMOTE_TO_SLAVE=FALSE",
        );
        assert_eq!(
            s,
            Stmt::ChangeMaster(ChangeMaster {
                use_gtid: Some(UseGtid::CurrentPos),
                ..ChangeMaster::default()
            })
        );
        assert_eq!(code("CHANGE MASTER TO MASTER_SSL_CA='/x'"), 1235);
        assert_eq!(code("CHANGE MASTER TO MASTER_SSL=1"), 1235);
        assert_eq!(code("CHANGE MASTER TO DO_DOMAIN_IDS=(1)"), 1235);
        assert_eq!(code("CHANGE MASTER TO MASTER_DELAY=5"), 1235);
        let e = parse("CHANGE MASTER TO IGNORE_SERVER_IDS=(3)")
            .unwrap()
            .unwrap_err();
        assert_eq!(
            e.message,
            "This version of onelog doesn't yet support 'CHANGE MASTER TO IGNORE_SERVER_IDS'"
        );
        assert_eq!(code("CHANGE MASTER 'abc' TO MASTER_HOST='x'"), 1235);
        assert_eq!(code("CHANGE MASTER TO MASTER_HEARTBEAT_PERIOD=-1"), 1064);
        assert_eq!(code("CHANGE MASTER TO MASTER_USE_GTID=maybe"), 1064);
        assert_eq!(code("CHANGE MASTER TO MASTER_BOGUS=1"), 1064);
        assert_eq!(code("CHANGE MASTER TO"), 1064);
        assert_eq!(code("CHANGE MASTER TO MASTER_PORT=70000"), 1064);
        assert!(parse("CHANGE COLUMN x").is_none());
    }

    #[test]
    fn start_stop_reset_show() {
        assert_eq!(
            ok("START SLAVE"),
            Stmt::StartSlave {
                threads: Threads::Both,
                until: None
            }
        );
        assert_eq!(
            ok("start replica '' io_thread"),
            Stmt::StartSlave {
                threads: Threads::Io,
                until: None
            }
        );
        assert_eq!(
            ok("START SLAVE SQL_THREAD, IO_THREAD UNTIL master_gtid_pos = '0-1-5'"),
            Stmt::StartSlave {
                threads: Threads::Both,
                until: Some("0-1-5".into())
            }
        );
        assert_eq!(
            ok("START SLAVE SQL_THREAD UNTIL MASTER_GTID_POS=''"),
            Stmt::StartSlave {
                threads: Threads::Sql,
                until: Some(String::new())
            }
        );
        assert_eq!(
            code("START SLAVE UNTIL MASTER_LOG_FILE='x', MASTER_LOG_POS=4"),
            1235
        );
        assert_eq!(code("START SLAVE 'other'"), 1235);
        assert!(parse("START TRANSACTION").is_none());
        assert_eq!(
            ok("STOP ALL REPLICAS"),
            Stmt::StopSlave {
                threads: Threads::Both
            }
        );
        assert_eq!(
            ok("stop slave sql_thread"),
            Stmt::StopSlave {
                threads: Threads::Sql
            }
        );
        assert_eq!(ok("RESET SLAVE"), Stmt::ResetSlave { all: false });
        assert_eq!(ok("RESET REPLICA '' ALL"), Stmt::ResetSlave { all: true });
        assert_eq!(ok("RESET MASTER"), Stmt::ResetMaster);
        assert!(parse("RESET QUERY CACHE").is_none());
        assert_eq!(
            ok("SHOW SLAVE STATUS"),
            Stmt::ShowSlaveStatus { all: false }
        );
        assert_eq!(
            ok("show replica '' status"),
            Stmt::ShowSlaveStatus { all: false }
        );
        assert_eq!(
            ok("SHOW ALL SLAVES STATUS"),
            Stmt::ShowSlaveStatus { all: true }
        );
        assert_eq!(
            ok("SHOW ALL REPLICAS STATUS"),
            Stmt::ShowSlaveStatus { all: true }
        );
        assert_eq!(code("SHOW SLAVE 'x' STATUS"), 1235);
        assert_eq!(code("SHOW SLAVE STATUS x"), 1064);
    }
}
