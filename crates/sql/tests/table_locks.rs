//! LOCK TABLES, UNLOCK TABLES and FLUSH TABLES [t, ...] WITH READ LOCK (issue 16 part 4),
//! each rule and error as MariaDB 10.11.14 answers it (measured): what a session with table
//! locks may use (1100, 1099, 1066, 1146, 1192), the implicit commits, the waits of other
//! sessions (1205 after `lock_wait_timeout`, `Waiting for table metadata lock`, KILL, the end
//! of the holder's session), and the global read lock (1223 for the holder, other sessions'
//! writes and commits wait).

use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;
use std::time::Duration;

use onelog_sql::{Server, ServerConfig, Session};

mod common;
use common::{err, fail, in_background, ok, text_rows as rows, wait_for_state, Db, TempDir};

/// A root session in database `d`; it waits at most 30 s for a lock (a test never makes it
/// wait that long but a broken rule fails instead of hanging).
fn root(server: &Arc<Server>, id: u32) -> Session {
    let mut s = Session::new(server.clone(), id, "root", "localhost");
    ok(&mut s, "CREATE DATABASE IF NOT EXISTS d");
    ok(&mut s, "USE d");
    ok(&mut s, "SET SESSION lock_wait_timeout = 30");
    s
}

fn setup(db: &Db) -> Session {
    let mut s = root(&db.server, 1);
    ok(&mut s, "CREATE TABLE t (a INT PRIMARY KEY)");
    ok(&mut s, "CREATE TABLE u (a INT PRIMARY KEY)");
    ok(&mut s, "INSERT INTO t VALUES (1), (2)");
    ok(&mut s, "INSERT INTO u VALUES (1)");
    s
}

fn count(s: &mut Session, table: &str) -> String {
    rows(s, &format!("SELECT COUNT(*) FROM {table}"))[0][0].clone()
}

#[test]
fn a_session_with_table_locks_uses_only_its_locked_tables() {
    let db = Db::open("tl-rules");
    let mut s = setup(&db);
    ok(&mut s, "LOCK TABLES t READ");
    assert_eq!(count(&mut s, "t"), "2");
    let e = fail(&mut s, "SELECT * FROM u");
    assert_eq!(
        (e.code, e.message.as_str()),
        (1100, "Table 'u' was not locked with LOCK TABLES")
    );
    let e = fail(&mut s, "INSERT INTO t VALUES (3)");
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            1099,
            "Table 't' was locked with a READ lock and can't be updated"
        )
    );
    assert_eq!(err(&mut s, "UPDATE t SET a = a + 10"), 1099);
    assert_eq!(err(&mut s, "DELETE FROM t"), 1099);
    assert_eq!(err(&mut s, "DROP TABLE t"), 1099);
    assert_eq!(err(&mut s, "DROP TABLE u"), 1100);
    assert_eq!(err(&mut s, "CREATE TABLE z (a INT)"), 1100);
    assert_eq!(err(&mut s, "RENAME TABLE t TO t2"), 1192);
    assert_eq!(err(&mut s, "CREATE VIEW v2 AS SELECT * FROM t"), 1192);
    // SHOW CREATE TABLE needs the lock; SHOW COLUMNS does not.
    assert_eq!(err(&mut s, "SHOW CREATE TABLE u"), 1100);
    ok(&mut s, "SHOW CREATE TABLE t");
    ok(&mut s, "SHOW COLUMNS FROM u");
    // information_schema needs no lock.
    assert_eq!(
        rows(
            &mut s,
            "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'd'"
        )[0][0],
        "2"
    );
    // A new LOCK TABLES replaces the list; WRITE lets the session change the table.
    ok(&mut s, "LOCK TABLES t WRITE, u READ");
    ok(&mut s, "INSERT INTO t SELECT a + 10 FROM u");
    ok(&mut s, "UPDATE t SET a = a + 100 WHERE a = 11");
    ok(&mut s, "DELETE FROM t WHERE a = 111");
    assert_eq!(count(&mut s, "t"), "2");
    assert_eq!(err(&mut s, "INSERT INTO u VALUES (5)"), 1099);
    // A failed LOCK TABLES leaves the session without table locks.
    let e = fail(&mut s, "LOCK TABLES t READ, nosuch READ");
    assert_eq!(
        (e.code, e.message.as_str()),
        (1146, "Table 'd.nosuch' doesn't exist")
    );
    assert_eq!(count(&mut s, "u"), "1");
    let e = fail(&mut s, "LOCK TABLES t READ, t READ");
    assert_eq!(
        (e.code, e.message.as_str()),
        (1066, "Not unique table/alias: 't'")
    );
    ok(&mut s, "LOCK TABLES t READ, t AS x READ");
    ok(&mut s, "UNLOCK TABLES");
    ok(&mut s, "INSERT INTO u VALUES (5)");
}

#[test]
fn each_use_of_a_locked_table_needs_a_lock_under_its_alias() {
    let db = Db::open("tl-alias");
    let mut s = setup(&db);
    ok(&mut s, "LOCK TABLES t READ");
    let e = fail(&mut s, "SELECT * FROM t AS x");
    assert_eq!(
        (e.code, e.message.as_str()),
        (1100, "Table 'x' was not locked with LOCK TABLES")
    );
    // The same table twice in one statement needs two locks.
    let e = fail(&mut s, "SELECT * FROM t WHERE a IN (SELECT a FROM t)");
    assert_eq!(
        (e.code, e.message.as_str()),
        (1100, "Table 't' was not locked with LOCK TABLES")
    );
    ok(&mut s, "LOCK TABLES t AS x READ, t WRITE");
    assert_eq!(count(&mut s, "t AS x"), "2");
    assert_eq!(count(&mut s, "t"), "2");
    assert_eq!(count(&mut s, "t, t AS x"), "4");
    assert_eq!(
        err(&mut s, "SELECT * FROM t AS X"),
        1100,
        "aliases are case sensitive"
    );
    assert_eq!(err(&mut s, "SELECT * FROM t AS y"), 1100);
    ok(&mut s, "INSERT INTO t SELECT a + 10 FROM t AS x");
    assert_eq!(count(&mut s, "t"), "4");
    let e = fail(&mut s, "UPDATE t AS x SET a = a + 100");
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            1099,
            "Table 'x' was locked with a READ lock and can't be updated"
        )
    );
    ok(&mut s, "UPDATE t SET a = a + 100 WHERE a > 10");
    ok(
        &mut s,
        "DELETE FROM t WHERE a IN (SELECT a + 110 FROM t AS x)",
    );
    assert_eq!(count(&mut s, "t"), "2");
    // A CTE's name is no table.
    assert_eq!(
        rows(&mut s, "WITH c AS (SELECT a FROM t) SELECT COUNT(*) FROM c")[0][0],
        "2"
    );
}

#[test]
fn lock_tables_grammar_and_privileges_follow_mariadb() {
    let db = Db::open("tl-grammar");
    let mut s = setup(&db);
    for sql in [
        "LOCK TABLE t READ LOCAL",
        "LOCK TABLES `t` READ /*!32311 LOCAL */",
        "LOCK TABLES t LOW_PRIORITY WRITE",
        "LOCK TABLES t WRITE CONCURRENT, d.u AS uu READ",
        "lock tables t as a read, t b write",
    ] {
        ok(&mut s, sql);
    }
    assert_eq!(err(&mut s, "LOCK TABLES t"), 1064);
    assert_eq!(err(&mut s, "LOCK TABLES t READ,"), 1064);
    ok(&mut s, "UNLOCK TABLES");
    ok(&mut s, "CREATE USER a@localhost, b@localhost");
    ok(&mut s, "GRANT SELECT ON d.* TO a@localhost");
    ok(&mut s, "GRANT LOCK TABLES ON d.* TO b@localhost");
    let mut a = Session::new(db.server.clone(), 2, "a", "localhost");
    let e = fail(&mut a, "LOCK TABLES d.t READ");
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            1044,
            "Access denied for user 'a'@'localhost' to database 'd'"
        )
    );
    let mut b = Session::new(db.server.clone(), 3, "b", "localhost");
    let e = fail(&mut b, "LOCK TABLES d.t READ");
    assert_eq!(e.code, 1142);
    assert_eq!(
        e.message,
        "SELECT command denied to user 'b'@'localhost' for table `d`.`t`"
    );
}

#[test]
fn lock_and_unlock_tables_commit_as_mariadb_and_begin_releases_the_locks() {
    let db = Db::open("tl-commit");
    let mut s = setup(&db);
    let mut other = root(&db.server, 2);
    // UNLOCK TABLES without table locks commits nothing.
    ok(&mut s, "BEGIN");
    ok(&mut s, "INSERT INTO u VALUES (2)");
    ok(&mut s, "UNLOCK TABLES");
    assert!(s.in_transaction());
    // LOCK TABLES commits the open transaction.
    ok(&mut s, "LOCK TABLES t WRITE");
    assert!(!s.in_transaction());
    assert_eq!(count(&mut other, "u"), "2");
    // With table locks, UNLOCK TABLES commits.
    ok(&mut s, "SET autocommit = 0");
    ok(&mut s, "INSERT INTO t VALUES (3)");
    assert!(s.in_transaction());
    ok(&mut s, "UNLOCK TABLES");
    assert!(!s.in_transaction());
    assert_eq!(count(&mut other, "t"), "3");
    ok(&mut s, "SET autocommit = 1");
    // BEGIN releases the table locks: any table again, and UNLOCK TABLES then commits
    // nothing.
    ok(&mut s, "LOCK TABLES u WRITE");
    ok(&mut s, "BEGIN");
    assert_eq!(count(&mut s, "t"), "3");
    ok(&mut s, "INSERT INTO u VALUES (4)");
    ok(&mut s, "UNLOCK TABLES");
    assert!(s.in_transaction());
    ok(&mut s, "ROLLBACK");
    assert_eq!(count(&mut s, "u"), "2");
}

#[test]
fn other_sessions_wait_for_conflicting_locks_until_lock_wait_timeout() {
    let db = Db::open("tl-timeout");
    let mut s = setup(&db);
    let mut o = root(&db.server, 2);
    ok(&mut o, "SET SESSION lock_wait_timeout = 0");
    // READ: others read, their writes wait.
    ok(&mut s, "LOCK TABLES t READ");
    assert_eq!(count(&mut o, "t"), "2");
    let e = fail(&mut o, "INSERT INTO t VALUES (9)");
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            1205,
            "Lock wait timeout exceeded; try restarting transaction"
        )
    );
    // LOCK TABLES ... READ waits for a transaction that changed the table.
    ok(&mut s, "UNLOCK TABLES");
    ok(&mut s, "SET SESSION lock_wait_timeout = 0");
    ok(&mut o, "BEGIN");
    ok(&mut o, "INSERT INTO t VALUES (8)");
    assert_eq!(err(&mut s, "LOCK TABLES t READ"), 1205);
    ok(&mut o, "COMMIT");
    ok(&mut o, "DELETE FROM t WHERE a = 8");
    ok(&mut s, "LOCK TABLES t READ");
    assert_eq!(err(&mut o, "LOCK TABLES t WRITE"), 1205);
    ok(&mut o, "LOCK TABLES t READ");
    ok(&mut o, "UNLOCK TABLES");
    ok(&mut o, "INSERT INTO u VALUES (9)");
    // WRITE: others' reads and writes wait.
    ok(&mut s, "LOCK TABLES t WRITE");
    assert_eq!(err(&mut o, "SELECT * FROM t"), 1205);
    assert_eq!(err(&mut o, "INSERT INTO t VALUES (9)"), 1205);
    assert_eq!(err(&mut o, "LOCK TABLES t READ"), 1205);
    assert_eq!(count(&mut o, "u"), "2");
    // A prepared statement's cached plan waits too.
    ok(&mut s, "UNLOCK TABLES");
    ok(&mut o, "PREPARE p FROM 'SELECT COUNT(*) FROM t'");
    assert_eq!(rows(&mut o, "EXECUTE p")[0][0], "2");
    ok(&mut s, "LOCK TABLES t WRITE");
    assert_eq!(err(&mut o, "EXECUTE p"), 1205);
    // WRITE CONCURRENT: nothing of theirs waits but LOCK TABLES.
    ok(&mut s, "LOCK TABLES t WRITE CONCURRENT");
    ok(&mut o, "INSERT INTO t VALUES (9)");
    assert_eq!(count(&mut o, "t"), "3");
    assert_eq!(err(&mut o, "LOCK TABLES t READ"), 1205);
    ok(&mut s, "UNLOCK TABLES");
    assert_eq!(rows(&mut o, "EXECUTE p")[0][0], "3");
}

#[test]
fn a_waiter_shows_its_state_and_runs_when_the_locks_go() {
    let db = Db::open("tl-wait");
    let mut s = setup(&db);
    let mut watch = root(&db.server, 2);
    ok(&mut s, "LOCK TABLES t WRITE");
    let reader = in_background(&db.server, 7, "USE d", "SELECT * FROM t");
    wait_for_state(&mut watch, 7, "Waiting for table metadata lock");
    ok(&mut s, "UNLOCK TABLES");
    assert_eq!(reader.join().unwrap(), 0);
    // The holder's session ends: its locks go with it.
    ok(&mut s, "LOCK TABLES t READ");
    let writer = in_background(&db.server, 8, "USE d", "INSERT INTO t VALUES (5)");
    wait_for_state(&mut watch, 8, "Waiting for table metadata lock");
    drop(s);
    assert_eq!(writer.join().unwrap(), 0);
    assert_eq!(count(&mut watch, "t"), "3");
    // KILL QUERY stops a waiter.
    let mut s = root(&db.server, 1);
    ok(&mut s, "LOCK TABLES t WRITE");
    let reader = in_background(&db.server, 9, "USE d", "SELECT * FROM t");
    wait_for_state(&mut watch, 9, "Waiting for table metadata lock");
    ok(&mut watch, "KILL QUERY 9");
    assert_eq!(reader.join().unwrap(), 1317);
}

#[test]
fn views_lock_their_base_tables_and_a_dropped_table_leaves_the_list() {
    let db = Db::open("tl-views");
    let mut s = setup(&db);
    ok(&mut s, "CREATE VIEW v AS SELECT * FROM t");
    let mut o = root(&db.server, 2);
    ok(&mut o, "SET SESSION lock_wait_timeout = 0");
    ok(&mut s, "LOCK TABLES v READ");
    assert_eq!(count(&mut s, "v"), "2");
    // The base table came with the view, under its own name.
    assert_eq!(count(&mut s, "t"), "2");
    assert_eq!(err(&mut s, "SELECT * FROM u"), 1100);
    assert_eq!(err(&mut o, "INSERT INTO t VALUES (7)"), 1205);
    ok(&mut s, "LOCK TABLES t READ");
    assert_eq!(err(&mut s, "SELECT * FROM v"), 1100);
    // DROP TABLE of a WRITE-locked table is allowed; the table then is gone (1146).
    ok(&mut s, "LOCK TABLES u WRITE");
    ok(&mut s, "DROP TABLE u");
    assert_eq!(err(&mut s, "SELECT * FROM u"), 1146);
    ok(&mut s, "UNLOCK TABLES");
    ok(&mut o, "CREATE TABLE u (a INT)");
}

#[test]
fn flush_tables_with_read_lock_holds_up_other_writers_and_commits() {
    let db = Db::open("tl-ftwrl");
    let mut s = setup(&db);
    let mut o = root(&db.server, 2);
    ok(&mut o, "SET SESSION lock_wait_timeout = 0");
    // FTWRL commits the session's open transaction.
    ok(&mut s, "BEGIN");
    ok(&mut s, "INSERT INTO u VALUES (2)");
    ok(&mut o, "BEGIN");
    ok(&mut o, "INSERT INTO u VALUES (3)");
    ok(&mut s, "FLUSH TABLES WITH READ LOCK");
    assert!(!s.in_transaction());
    let e = fail(&mut s, "INSERT INTO t VALUES (3)");
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            1223,
            "Can't execute the query because you have a conflicting read lock"
        )
    );
    assert_eq!(err(&mut s, "CREATE TABLE z (a INT)"), 1223);
    // The holder reads any table; so do the others, whose writes and commits wait.
    assert_eq!(count(&mut s, "u"), "2");
    assert_eq!(count(&mut o, "t"), "2");
    assert_eq!(err(&mut o, "DELETE FROM t"), 1205);
    assert_eq!(err(&mut o, "COMMIT"), 1205);
    assert!(o.in_transaction(), "a commit that timed out leaves it open");
    // FLUSH TABLES WITH READ LOCK again is fine; LOCK TABLES ... READ under it too.
    ok(&mut s, "FLUSH TABLES WITH READ LOCK");
    ok(&mut s, "LOCK TABLES t READ");
    assert_eq!(err(&mut s, "FLUSH TABLES WITH READ LOCK"), 1192);
    ok(&mut s, "UNLOCK TABLES");
    ok(&mut o, "COMMIT");
    assert_eq!(count(&mut s, "u"), "3");
    // A waiting commit proceeds once the lock goes.
    ok(&mut s, "FLUSH TABLES WITH READ LOCK");
    let mut watch = root(&db.server, 3);
    let writer = in_background(&db.server, 9, "USE d", "INSERT INTO u VALUES (4)");
    wait_for_state(&mut watch, 9, "Waiting for backup lock");
    ok(&mut s, "UNLOCK TABLES");
    assert_eq!(writer.join().unwrap(), 0);
    assert_eq!(count(&mut watch, "u"), "4");
}

#[test]
fn flush_tables_lists_lock_read_and_for_export_is_refused() {
    let db = Db::open("tl-flush");
    let mut s = setup(&db);
    ok(&mut s, "FLUSH TABLES");
    ok(&mut s, "FLUSH TABLES t, u");
    // Under LOCK TABLES, FLUSH TABLES needs WRITE locks on what it names (all: every one).
    ok(&mut s, "LOCK TABLES t WRITE, u READ");
    ok(&mut s, "FLUSH TABLES t");
    let e = fail(&mut s, "FLUSH TABLES");
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            1099,
            "Table 'u' was locked with a READ lock and can't be updated"
        )
    );
    assert_eq!(err(&mut s, "FLUSH TABLES u"), 1099);
    ok(&mut s, "LOCK TABLES t WRITE");
    ok(&mut s, "FLUSH LOCAL TABLES");
    ok(&mut s, "FLUSH LOGS");
    assert_eq!(err(&mut s, "FLUSH TABLES u"), 1100);
    ok(&mut s, "FLUSH TABLES t WITH READ LOCK");
    assert_eq!(count(&mut s, "t"), "2");
    assert_eq!(err(&mut s, "SELECT * FROM u"), 1100);
    assert_eq!(err(&mut s, "INSERT INTO t VALUES (3)"), 1099);
    assert_eq!(err(&mut s, "FLUSH TABLES nosuch WITH READ LOCK"), 1146);
    ok(&mut s, "UNLOCK TABLES");
    let e = fail(&mut s, "FLUSH TABLES t FOR EXPORT");
    assert_eq!(e.code, 1235);
    assert!(e.message.contains("FOR EXPORT"), "{}", e.message);
    ok(&mut s, "SET lock_wait_timeout = 2");
    assert_eq!(rows(&mut s, "SELECT @@lock_wait_timeout")[0][0], "2");
    assert_eq!(
        rows(&mut s, "SELECT @@global.lock_wait_timeout")[0][0],
        "86400"
    );
}

/// SHOW MASTER STATUS's file and position.
fn master(s: &mut Session) -> Vec<String> {
    rows(s, "SHOW MASTER STATUS")[0][..2].to_vec()
}

/// The session's `Binlog_snapshot_file` and `Binlog_snapshot_position`.
fn snapshot(s: &mut Session, scope: &str) -> Vec<String> {
    rows(s, &format!("SHOW {scope} STATUS LIKE 'Binlog_snapshot%'"))
        .into_iter()
        .map(|r| r[1].clone())
        .collect()
}

#[test]
fn a_consistent_snapshot_keeps_the_binlog_position_of_its_read_view() {
    // Every commit durable at once, so SHOW MASTER STATUS moves with each.
    let dir = TempDir::new("tl-snapshot");
    let mut cfg = ServerConfig::new(dir.path());
    cfg.flush_log_at_trx_commit = 1;
    let server = Server::open(cfg).unwrap().0;
    let mut s = root(&server, 1);
    ok(&mut s, "CREATE TABLE u (a INT PRIMARY KEY)");
    ok(&mut s, "INSERT INTO u VALUES (1)");
    let mut o = root(&server, 2);
    // Outside such a transaction: the current end, as MariaDB.
    assert_eq!(snapshot(&mut s, "SESSION"), master(&mut s));
    ok(&mut s, "START TRANSACTION WITH CONSISTENT SNAPSHOT");
    let at = master(&mut s);
    assert_eq!(snapshot(&mut s, "SESSION"), at);
    ok(&mut o, "INSERT INTO u VALUES (5)");
    let now = master(&mut o);
    assert_ne!(now, at);
    // The snapshot's position and data stay; the global value is the current end.
    assert_eq!(snapshot(&mut s, "SESSION"), at);
    assert_eq!(count(&mut s, "u"), "1", "the read view was taken at START");
    assert_eq!(snapshot(&mut s, "GLOBAL"), now);
    ok(&mut s, "COMMIT");
    assert_eq!(snapshot(&mut s, "SESSION"), now);
    // A plain START TRANSACTION keeps no snapshot position.
    ok(&mut s, "START TRANSACTION");
    ok(&mut o, "INSERT INTO u VALUES (6)");
    assert_eq!(snapshot(&mut s, "SESSION"), master(&mut o));
    ok(&mut s, "ROLLBACK");
    drop((s, o));
    server.shutdown().unwrap();
}

/// A session on its own thread (registered as connection `id`, so PROCESSLIST and KILL reach
/// it) that runs the statements it is sent, one at a time, and answers each with its error
/// code (0: success).
struct Remote {
    to: Option<Sender<String>>,
    from: Receiver<u16>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Remote {
    fn start(server: &Arc<Server>, id: u32) -> Remote {
        let (to, rx) = channel::<String>();
        let (tx, from) = channel();
        let server = server.clone();
        let thread = std::thread::spawn(move || {
            let _reg = server.register_connection(onelog_sql::ConnectionInfo::new(
                id,
                "root",
                "localhost",
            ));
            let mut s = root(&server, id);
            for sql in rx {
                let code = match s.query(&sql).pop().unwrap() {
                    Ok(_) => 0,
                    Err(e) => e.code,
                };
                if tx.send(code).is_err() {
                    break;
                }
            }
        });
        Remote {
            to: Some(to),
            from,
            thread: Some(thread),
        }
    }

    /// Sends `sql` without waiting for its answer.
    fn send(&self, sql: &str) {
        self.to.as_ref().unwrap().send(sql.to_string()).unwrap();
    }

    /// The answer to the statement sent before (at most 30 s: a broken rule fails the test
    /// instead of hanging it).
    fn answer(&self) -> u16 {
        self.from
            .recv_timeout(Duration::from_secs(30))
            .expect("the remote session did not answer")
    }

    /// Whether no answer is there yet (the statement still runs).
    fn pending(&self) -> bool {
        match self.from.try_recv() {
            Ok(code) => panic!("answered {code} while it should wait"),
            Err(_) => true,
        }
    }

    fn run(&self, sql: &str) -> u16 {
        self.send(sql);
        self.answer()
    }
}

impl Drop for Remote {
    fn drop(&mut self) {
        drop(self.to.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[test]
fn lock_tables_write_waits_for_an_open_transaction_that_read_the_table() {
    let db = Db::open("tl-mdl-write");
    let mut s = setup(&db);
    let mut watch = root(&db.server, 3);
    ok(&mut s, "BEGIN");
    assert_eq!(count(&mut s, "t"), "2");
    // The transaction's use of t lasts until its end: LOCK TABLES t WRITE waits, showing
    // MariaDB's state, and takes the lock once the transaction commits.
    let b = Remote::start(&db.server, 7);
    b.send("LOCK TABLES t WRITE");
    wait_for_state(&mut watch, 7, "Waiting for table metadata lock");
    assert!(b.pending());
    // The transaction goes on meanwhile (a waiting LOCK TABLES holds nothing).
    ok(&mut s, "INSERT INTO t VALUES (3)");
    assert!(b.pending());
    ok(&mut s, "COMMIT");
    assert_eq!(b.answer(), 0);
    // Now the lock holds the committer up.
    ok(&mut s, "SET SESSION lock_wait_timeout = 0");
    assert_eq!(err(&mut s, "SELECT * FROM t"), 1205);
    assert_eq!(b.run("UNLOCK TABLES"), 0);
    assert_eq!(count(&mut s, "t"), "3");
    // A table the transaction did not use is free; an autocommit statement's use ends with
    // it; SET autocommit = 0 keeps it until COMMIT.
    ok(&mut s, "BEGIN");
    assert_eq!(count(&mut s, "u"), "1");
    assert_eq!(b.run("SET SESSION lock_wait_timeout = 0"), 0);
    assert_eq!(b.run("LOCK TABLES t WRITE"), 0);
    assert_eq!(b.run("LOCK TABLES u WRITE"), 1205);
    assert_eq!(b.run("UNLOCK TABLES"), 0);
    ok(&mut s, "ROLLBACK");
    assert_eq!(b.run("LOCK TABLES u WRITE"), 0);
    assert_eq!(b.run("UNLOCK TABLES"), 0);
    ok(&mut s, "SET autocommit = 0");
    assert_eq!(count(&mut s, "t"), "3");
    assert_eq!(b.run("LOCK TABLES t WRITE"), 1205);
    ok(&mut s, "COMMIT");
    assert_eq!(b.run("LOCK TABLES t WRITE"), 0);
    assert_eq!(b.run("UNLOCK TABLES"), 0);
    // A cached prepared plan's tables join the transaction too.
    ok(&mut s, "SET autocommit = 1");
    ok(&mut s, "PREPARE p FROM 'SELECT COUNT(*) FROM u'");
    assert_eq!(rows(&mut s, "EXECUTE p")[0][0], "1");
    ok(&mut s, "BEGIN");
    assert_eq!(rows(&mut s, "EXECUTE p")[0][0], "1");
    assert_eq!(b.run("LOCK TABLES u WRITE"), 1205);
    ok(&mut s, "COMMIT");
    assert_eq!(b.run("LOCK TABLES u WRITE"), 0);
}

#[test]
fn lock_tables_read_waits_only_for_transactions_that_changed_the_table() {
    let db = Db::open("tl-mdl-read");
    let mut s = setup(&db);
    let mut o = root(&db.server, 2);
    ok(&mut o, "SET SESSION lock_wait_timeout = 0");
    ok(&mut s, "BEGIN");
    assert_eq!(count(&mut s, "t"), "2");
    // A statement that failed keeps no use (MariaDB rolls its metadata locks back): the
    // transaction still only read t, and never used u.
    assert_eq!(err(&mut s, "INSERT INTO t VALUES (1)"), 1062);
    assert_eq!(err(&mut s, "INSERT INTO u VALUES (1)"), 1062);
    ok(&mut o, "LOCK TABLES u WRITE");
    ok(&mut o, "UNLOCK TABLES");
    // A reader: READ and WRITE CONCURRENT go through, WRITE waits (1205 at once with
    // lock_wait_timeout 0).
    ok(&mut o, "LOCK TABLES t READ");
    ok(&mut o, "LOCK TABLES t WRITE CONCURRENT");
    let e = fail(&mut o, "LOCK TABLES t WRITE");
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            1205,
            "Lock wait timeout exceeded; try restarting transaction"
        )
    );
    // A failed LOCK TABLES leaves the session without locks: the transaction writes.
    ok(&mut s, "UPDATE t SET a = a + 10 WHERE a = 2");
    // A writer: READ waits too, WRITE CONCURRENT does not; other tables are free.
    assert_eq!(err(&mut o, "LOCK TABLES t READ"), 1205);
    assert_eq!(err(&mut o, "LOCK TABLES u READ, t READ"), 1205);
    ok(&mut o, "SELECT * FROM u");
    ok(&mut o, "LOCK TABLES t WRITE CONCURRENT, u READ");
    ok(&mut o, "UNLOCK TABLES");
    // lock_wait_timeout bounds the wait (1 s here).
    ok(&mut o, "SET SESSION lock_wait_timeout = 1");
    assert_eq!(err(&mut o, "LOCK TABLES t READ"), 1205);
    ok(&mut s, "ROLLBACK");
    ok(&mut o, "LOCK TABLES t READ");
    assert_eq!(count(&mut o, "t"), "2");
}

#[test]
fn kill_query_ends_a_waiting_lock_tables() {
    let db = Db::open("tl-mdl-kill");
    let mut s = setup(&db);
    let mut watch = root(&db.server, 3);
    ok(&mut s, "BEGIN");
    ok(&mut s, "INSERT INTO t VALUES (3)");
    let b = Remote::start(&db.server, 7);
    b.send("LOCK TABLES t READ");
    wait_for_state(&mut watch, 7, "Waiting for table metadata lock");
    ok(&mut watch, "KILL QUERY 7");
    assert_eq!(b.answer(), 1317);
    // The killed statement took nothing and left nothing waiting.
    ok(&mut s, "INSERT INTO t VALUES (4)");
    ok(&mut s, "COMMIT");
    assert_eq!(b.run("SELECT COUNT(*) FROM t"), 0);
    assert_eq!(b.run("LOCK TABLES t READ"), 0);
}

#[test]
fn a_waiting_lock_tables_holds_nothing_so_no_deadlock_with_a_transaction() {
    let db = Db::open("tl-mdl-deadlock");
    let _s = setup(&db);
    let mut watch = root(&db.server, 3);
    // B holds u; transaction A used t and waits for u; B's next LOCK TABLES wants t and u:
    // it first releases u (A goes on), then waits for A's transaction to end.
    let a = Remote::start(&db.server, 7);
    let b = Remote::start(&db.server, 8);
    assert_eq!(b.run("LOCK TABLES u WRITE"), 0);
    assert_eq!(a.run("BEGIN"), 0);
    assert_eq!(a.run("SELECT * FROM t"), 0);
    a.send("INSERT INTO u (a) VALUES (5)");
    wait_for_state(&mut watch, 7, "Waiting for table metadata lock");
    b.send("LOCK TABLES t WRITE, u WRITE");
    assert_eq!(a.answer(), 0);
    wait_for_state(&mut watch, 8, "Waiting for table metadata lock");
    assert!(b.pending());
    assert_eq!(a.run("COMMIT"), 0);
    assert_eq!(b.answer(), 0);
    assert_eq!(b.run("UNLOCK TABLES"), 0);
    // The other order: A used u, B waits for t and u, A then uses t. MariaDB's B holds t
    // while it waits for u and A gets 1213 (deadlock); onelog's B holds nothing while it
    // waits, so A goes on at once (no wait: lock_wait_timeout 0) and B follows A's commit.
    assert_eq!(a.run("SET SESSION lock_wait_timeout = 0"), 0);
    assert_eq!(a.run("BEGIN"), 0);
    assert_eq!(a.run("SELECT * FROM u"), 0);
    b.send("LOCK TABLES t WRITE, u WRITE");
    wait_for_state(&mut watch, 8, "Waiting for table metadata lock");
    assert_eq!(a.run("INSERT INTO t VALUES (5)"), 0);
    assert!(b.pending());
    assert_eq!(a.run("COMMIT"), 0);
    assert_eq!(b.answer(), 0);
    // Two LOCK TABLES waiting for the same transaction both get their locks after it.
    assert_eq!(b.run("UNLOCK TABLES"), 0);
    let c = Remote::start(&db.server, 9);
    assert_eq!(a.run("BEGIN"), 0);
    assert_eq!(a.run("INSERT INTO t VALUES (6)"), 0);
    b.send("LOCK TABLES t READ");
    c.send("LOCK TABLES t READ");
    wait_for_state(&mut watch, 8, "Waiting for table metadata lock");
    wait_for_state(&mut watch, 9, "Waiting for table metadata lock");
    assert_eq!(a.run("COMMIT"), 0);
    assert_eq!(b.answer(), 0);
    assert_eq!(c.answer(), 0);
    assert_eq!(rows(&mut watch, "SELECT COUNT(*) FROM d.t")[0][0], "4");
}

/// The columns of `m`'s index `name`.
fn index_columns(s: &mut Session, name: &str) -> Vec<String> {
    let q = format!(
        "SELECT COLUMN_NAME FROM information_schema.STATISTICS \
         WHERE TABLE_SCHEMA = 'd' AND TABLE_NAME = 'm' AND INDEX_NAME = '{name}'"
    );
    rows(s, &q).into_iter().map(|r| r[0].clone()).collect()
}

/// `m (id, v)` with two rows, for the DDL tests.
fn ddl_setup(db: &Db) -> Session {
    let mut s = setup(db);
    ok(&mut s, "CREATE TABLE m (id INT PRIMARY KEY, v INT)");
    ok(&mut s, "INSERT INTO m VALUES (1, 10), (2, 20)");
    s
}

#[test]
fn ddl_waits_for_the_transactions_that_use_its_table_and_their_commits_stand() {
    let db = Db::open("tl-ddl-waits");
    let mut s = ddl_setup(&db);
    let mut watch = root(&db.server, 3);
    let b = Remote::start(&db.server, 7);
    // Each DDL waits for a transaction that wrote the table (MariaDB's metadata lock), which
    // goes on using it and commits (before, the DDL ran and the commit failed with 1412).
    for (next, (ddl, table)) in (3..).zip([
        ("ALTER TABLE m ADD c INT", "m"),
        ("ALTER TABLE m DROP COLUMN c", "m"),
        ("CREATE INDEX iv ON m (v)", "m"),
        ("DROP INDEX iv ON m", "m"),
        ("CREATE INDEX iv ON m (v) LOCK=EXCLUSIVE", "m"),
        ("ALTER TABLE m ADD UNIQUE uv (v)", "m"),
        ("ALTER TABLE m DROP INDEX uv", "m"),
        ("RENAME TABLE m TO m2", "m"),
        ("RENAME TABLE m2 TO m", "m2"),
        ("TRUNCATE TABLE m", "m"),
    ]) {
        ok(&mut s, "BEGIN");
        ok(
            &mut s,
            &format!("INSERT INTO {table} (id, v) VALUES ({next}, {next}0)"),
        );
        b.send(ddl);
        wait_for_state(&mut watch, 7, "Waiting for table metadata lock");
        ok(
            &mut s,
            &format!("UPDATE {table} SET v = v + 1 WHERE id = {next}"),
        );
        assert!(b.pending(), "{ddl}");
        ok(&mut s, "COMMIT");
        assert_eq!(b.answer(), 0, "{ddl}");
    }
    // TRUNCATE came after the last commit: nothing is left; the rows before it were there.
    assert_eq!(count(&mut s, "m"), "0");
    assert_eq!(index_columns(&mut s, "iv"), ["v"]);
    // A transaction that only read the table holds DDL up too, until it ends.
    ok(&mut s, "BEGIN");
    assert_eq!(count(&mut s, "m"), "0");
    b.send("DROP TABLE m");
    wait_for_state(&mut watch, 7, "Waiting for table metadata lock");
    assert_eq!(count(&mut s, "m"), "0");
    ok(&mut s, "ROLLBACK");
    assert_eq!(b.answer(), 0);
    assert_eq!(err(&mut s, "SELECT * FROM m"), 1146);
    // DROP DATABASE waits for a transaction on one of its tables.
    ok(&mut s, "CREATE DATABASE e");
    ok(&mut s, "CREATE TABLE e.x (a INT PRIMARY KEY)");
    ok(&mut s, "BEGIN");
    ok(&mut s, "INSERT INTO e.x VALUES (1)");
    b.send("DROP DATABASE e");
    wait_for_state(&mut watch, 7, "Waiting for table metadata lock");
    ok(&mut s, "COMMIT");
    assert_eq!(b.answer(), 0);
}

#[test]
fn a_waiting_ddl_holds_new_users_of_its_table_back_until_it_is_done() {
    let db = Db::open("tl-ddl-pending");
    let mut s = ddl_setup(&db);
    let mut watch = root(&db.server, 3);
    let mut o = root(&db.server, 2);
    ok(&mut o, "SET SESSION lock_wait_timeout = 0");
    let b = Remote::start(&db.server, 7);
    ok(&mut s, "BEGIN");
    assert_eq!(count(&mut s, "m"), "2");
    b.send("ALTER TABLE m ADD c INT");
    wait_for_state(&mut watch, 7, "Waiting for table metadata lock");
    // A new user of m waits behind the DDL (1205 at once here), readers too; other tables
    // are free; the transaction that holds the DDL up goes on with m.
    let e = fail(&mut o, "SELECT * FROM m");
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            1205,
            "Lock wait timeout exceeded; try restarting transaction"
        )
    );
    assert_eq!(err(&mut o, "INSERT INTO m VALUES (5, 50)"), 1205);
    assert_eq!(count(&mut o, "u"), "1");
    ok(&mut s, "INSERT INTO m VALUES (3, 30)");
    // A new user that waits shows MariaDB's state and goes on once the DDL is done.
    let c = Remote::start(&db.server, 8);
    c.send("SELECT * FROM m");
    wait_for_state(&mut watch, 8, "Waiting for table metadata lock");
    ok(&mut s, "COMMIT");
    assert_eq!(b.answer(), 0);
    assert_eq!(c.answer(), 0);
    assert_eq!(
        rows(&mut o, "SELECT id, c FROM m ORDER BY id"),
        [["1", "NULL"], ["2", "NULL"], ["3", "NULL"]]
    );
    // The DDL's own wait is bounded by its lock_wait_timeout (1205), and KILL QUERY ends it;
    // either way it leaves nothing behind that holds others up.
    assert_eq!(b.run("SET SESSION lock_wait_timeout = 1"), 0);
    ok(&mut s, "BEGIN");
    assert_eq!(count(&mut s, "m"), "3");
    assert_eq!(b.run("ALTER TABLE m ADD d INT"), 1205);
    assert_eq!(count(&mut o, "m"), "3");
    assert_eq!(b.run("SET SESSION lock_wait_timeout = 30"), 0);
    b.send("CREATE INDEX ic ON m (c)");
    wait_for_state(&mut watch, 7, "Waiting for table metadata lock");
    ok(&mut watch, "KILL QUERY 7");
    assert_eq!(b.answer(), 1317);
    assert_eq!(count(&mut o, "m"), "3");
    ok(&mut s, "COMMIT");
    assert!(!rows(&mut o, "SHOW CREATE TABLE m")[0][1].contains("`d`"));
    assert!(index_columns(&mut o, "ic").is_empty());
    // Two DDL statements on one table run one after the other, in the order they came.
    ok(&mut s, "BEGIN");
    assert_eq!(count(&mut s, "m"), "3");
    b.send("ALTER TABLE m ADD e INT");
    wait_for_state(&mut watch, 7, "Waiting for table metadata lock");
    c.send("ALTER TABLE m DROP COLUMN e");
    wait_for_state(&mut watch, 8, "Waiting for table metadata lock");
    ok(&mut s, "COMMIT");
    assert_eq!(b.answer(), 0);
    assert_eq!(c.answer(), 0);
    assert!(!rows(&mut o, "SHOW CREATE TABLE m")[0][1].contains("`e`"));
}

#[test]
fn transactions_waiting_behind_two_ddl_statements_for_each_other_get_1213() {
    let db = Db::open("tl-ddl-deadlock");
    let _s = setup(&db);
    let mut watch = root(&db.server, 3);
    let a = Remote::start(&db.server, 7);
    let b = Remote::start(&db.server, 8);
    let c = Remote::start(&db.server, 9);
    let d = Remote::start(&db.server, 10);
    // a uses t, b uses u; c's DDL on t waits for a, d's on u for b; a then waits behind d.
    for r in [&a, &b] {
        assert_eq!(r.run("BEGIN"), 0);
    }
    assert_eq!(a.run("SELECT * FROM t"), 0);
    assert_eq!(b.run("SELECT * FROM u"), 0);
    c.send("ALTER TABLE t ADD x INT");
    wait_for_state(&mut watch, 9, "Waiting for table metadata lock");
    d.send("ALTER TABLE u ADD y INT");
    wait_for_state(&mut watch, 10, "Waiting for table metadata lock");
    a.send("INSERT INTO u (a) VALUES (5)");
    wait_for_state(&mut watch, 7, "Waiting for table metadata lock");
    // b's use of t would close the cycle b -> c -> a -> d -> b: MariaDB's deadlock answer.
    assert_eq!(b.run("SELECT * FROM t"), 1213);
    assert!(a.pending());
    // b's transaction still holds u; once it ends, d, then a, then c go on.
    assert_eq!(b.run("ROLLBACK"), 0);
    assert_eq!(d.answer(), 0);
    assert_eq!(a.answer(), 0);
    assert!(c.pending());
    assert_eq!(a.run("COMMIT"), 0);
    assert_eq!(c.answer(), 0);
    let cols = "SELECT COUNT(*) FROM information_schema.COLUMNS \
                WHERE TABLE_SCHEMA = 'd' AND COLUMN_NAME IN ('x', 'y')";
    assert_eq!(rows(&mut watch, cols)[0][0], "2");
    assert_eq!(count(&mut watch, "u"), "2");
}
