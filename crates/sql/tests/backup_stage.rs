//! `BACKUP STAGE` on a real server (issue 13 part 1): MariaDB's privilege (RELOAD), stage
//! order and errors; the session's hold keeps PURGE BINARY LOGS and RESET MASTER waiting
//! (visibly, `Waiting for backup lock`) until BACKUP STAGE END or the end of the session,
//! bounded by `lock_wait_timeout` (1205) and stopped by KILL; `Onelog_backups_running` counts
//! the holds; file mode refuses START.

use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use onelog_sql::{ConnectionInfo, Server, ServerConfig, Session};

mod common;
use common::{err, fail, ok, text_rows as rows, Db, TempDir};

fn root(server: &Arc<Server>, id: u32) -> Session {
    Session::new(server.clone(), id, "root", "localhost")
}

fn running(s: &mut Session) -> String {
    rows(s, "SHOW GLOBAL STATUS LIKE 'Onelog_backups_running'")[0][1].clone()
}

fn binary_logs(s: &mut Session) -> Vec<String> {
    rows(s, "SHOW BINARY LOGS")
        .into_iter()
        .map(|r| r[0].clone())
        .collect()
}

/// A server with four binlog files whose first three a PURGE may remove (checkpointed).
fn four_files(db: &Db) {
    let mut s = root(&db.server, 100);
    ok(&mut s, "CREATE DATABASE d");
    ok(&mut s, "CREATE TABLE d.t (a INT PRIMARY KEY)");
    for i in 0..3 {
        ok(&mut s, &format!("INSERT INTO d.t VALUES ({i})"));
        ok(&mut s, "FLUSH BINARY LOGS");
    }
    db.server.engine().checkpoint().unwrap();
    assert_eq!(binary_logs(&mut s).len(), 4);
}

/// Runs `sql` in a session of its own (connection `id`, registered so SHOW PROCESSLIST and
/// KILL see it) on another thread; the result's code (0 for OK) and how long it took.
fn in_background(server: &Arc<Server>, id: u32, sql: &'static str) -> JoinHandle<(u16, Duration)> {
    let server = server.clone();
    let ready = Arc::new(std::sync::Barrier::new(2));
    let r2 = ready.clone();
    let h = std::thread::spawn(move || {
        let _reg = server.register_connection(ConnectionInfo::new(id, "root", "localhost"));
        let mut s = root(&server, id);
        r2.wait();
        let t = Instant::now();
        let code = match s.query(sql).pop().unwrap() {
            Ok(_) => 0,
            Err(e) => e.code,
        };
        (code, t.elapsed())
    });
    ready.wait();
    h
}

/// Waits (bounded) until connection `id` shows `state` in SHOW PROCESSLIST.
fn wait_for_state(s: &mut Session, id: u32, state: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let pl = rows(s, "SHOW PROCESSLIST");
        if pl.iter().any(|r| r[0] == id.to_string() && r[6] == state) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{id} never showed {state}: {pl:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn backup_stage_needs_reload_and_keeps_mariadbs_order() {
    let db = Db::open("backup-order");
    let mut r = root(&db.server, 1);
    ok(&mut r, "CREATE USER app@'%', bk@'%'");
    ok(&mut r, "GRANT RELOAD ON *.* TO bk@'%'");
    let mut app = Session::new(db.server.clone(), 2, "app", "10.0.0.1");
    for stage in ["START", "END", "FLUSH"] {
        let e = fail(&mut app, &format!("BACKUP STAGE {stage}"));
        assert_eq!(e.code, 1227, "{stage}");
        assert_eq!(
            e.message,
            "Access denied; you need (at least one of) the RELOAD privilege(s) for this operation"
        );
    }
    // The stage name is checked before the privilege, as MariaDB's grammar does.
    assert_eq!(err(&mut app, "BACKUP STAGE NOPE"), 4149);

    let mut bk = Session::new(db.server.clone(), 3, "bk", "10.0.0.1");
    let e = fail(&mut bk, "BACKUP STAGE END");
    assert_eq!(
        (e.code, e.message.as_str()),
        (4146, "You must start backup with \"BACKUP STAGE START\"")
    );
    assert_eq!(err(&mut bk, "BACKUP STAGE FLUSH"), 4146);
    assert_eq!(running(&mut r), "0");
    ok(&mut bk, "BACKUP STAGE START");
    assert_eq!(running(&mut r), "1");
    let e = fail(&mut bk, "BACKUP STAGE START");
    assert_eq!(e.code, 4147);
    assert_eq!(
        e.message,
        "Backup stage 'START' is same or before current backup stage 'START'"
    );
    ok(&mut bk, "BACKUP STAGE FLUSH");
    let e = fail(&mut bk, "BACKUP STAGE FLUSH");
    assert_eq!(
        e.message,
        "Backup stage 'FLUSH' is same or before current backup stage 'FLUSH'"
    );
    // Blocking stages are not implemented: refused, the stage stays FLUSH, the hold lives.
    let e = fail(&mut bk, "BACKUP STAGE BLOCK_COMMIT");
    assert_eq!(e.code, 1235, "{}", e.message);
    assert!(
        e.message.contains("BACKUP STAGE BLOCK_DDL"),
        "{}",
        e.message
    );
    assert_eq!(
        fail(&mut bk, "BACKUP STAGE START").message,
        "Backup stage 'START' is same or before current backup stage 'FLUSH'"
    );
    assert_eq!(running(&mut r), "1");
    // A second session's backup runs beside it.
    ok(&mut r, "BACKUP STAGE START");
    assert_eq!(running(&mut r), "2");
    ok(&mut bk, "BACKUP STAGE END");
    assert_eq!(running(&mut r), "1");
    assert_eq!(err(&mut bk, "BACKUP STAGE END"), 4146);
    // A new backup starts after END; COM_RESET_CONNECTION ends one, as does the session's end.
    ok(&mut bk, "BACKUP STAGE START");
    assert_eq!(running(&mut r), "2");
    bk.reset();
    assert_eq!(running(&mut r), "1");
    drop(r);
    let mut r = root(&db.server, 4);
    assert_eq!(running(&mut r), "0");
    let com = rows(&mut r, "SHOW GLOBAL STATUS LIKE 'Com_backup'");
    assert_eq!(com, [["Com_backup", "15"]]);
}

#[test]
fn backup_stage_commits_the_open_transaction() {
    let db = Db::open("backup-commit");
    let mut s = root(&db.server, 1);
    ok(&mut s, "CREATE DATABASE d");
    ok(&mut s, "CREATE TABLE d.t (a INT PRIMARY KEY)");
    ok(&mut s, "BEGIN");
    ok(&mut s, "INSERT INTO d.t VALUES (1)");
    ok(&mut s, "BACKUP STAGE START");
    ok(&mut s, "ROLLBACK");
    ok(&mut s, "BACKUP STAGE END");
    assert_eq!(rows(&mut s, "SELECT COUNT(*) FROM d.t"), [["1"]]);
}

#[test]
fn purge_waits_for_backup_stage_end() {
    let db = Db::open("backup-purge-end");
    four_files(&db);
    let mut bk = root(&db.server, 1);
    ok(&mut bk, "BACKUP STAGE START");
    let mut watch = root(&db.server, 2);
    let purge = in_background(&db.server, 7, "PURGE BINARY LOGS TO 'binlog.000004'");
    wait_for_state(&mut watch, 7, "Waiting for backup lock");
    std::thread::sleep(Duration::from_millis(200));
    assert!(!purge.is_finished(), "PURGE ran under a backup");
    assert_eq!(binary_logs(&mut watch).len(), 4);
    // A bounded one gives up with MariaDB's error.
    let e = fail(
        &mut watch,
        "SET SESSION lock_wait_timeout = 0; PURGE BINARY LOGS BEFORE '2999-01-01'",
    );
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            1205,
            "Lock wait timeout exceeded; try restarting transaction"
        )
    );
    ok(&mut watch, "SET SESSION lock_wait_timeout = 1");
    assert_eq!(
        err(&mut watch, "PURGE BINARY LOGS TO 'binlog.000004'"),
        1205
    );
    assert_eq!(binary_logs(&mut watch).len(), 4);
    ok(&mut bk, "BACKUP STAGE END");
    let (code, _) = purge.join().unwrap();
    assert_eq!(code, 0);
    assert_eq!(binary_logs(&mut watch), ["binlog.000004"]);
}

#[test]
fn purge_and_reset_master_wait_for_a_backup_whose_session_ends() {
    let db = Db::open("backup-purge-quit");
    four_files(&db);
    let mut bk = root(&db.server, 1);
    ok(&mut bk, "BACKUP STAGE START");
    let mut watch = root(&db.server, 2);
    // Either may run first once the backup ends (so no PURGE TO a file RESET removes).
    let purge = in_background(&db.server, 7, "PURGE BINARY LOGS BEFORE '2999-01-01'");
    let reset = in_background(&db.server, 8, "RESET MASTER");
    wait_for_state(&mut watch, 7, "Waiting for backup lock");
    wait_for_state(&mut watch, 8, "Waiting for backup lock");
    assert_eq!(binary_logs(&mut watch).len(), 4);
    // The backup's client goes away: its session ends and its hold with it.
    drop(bk);
    let (code, _) = purge.join().unwrap();
    assert_eq!(code, 0);
    let (code, _) = reset.join().unwrap();
    assert_eq!(code, 0);
    assert_eq!(binary_logs(&mut watch), ["binlog.000001"]);
    assert_eq!(running(&mut watch), "0");
}

#[test]
fn kill_stops_a_purge_waiting_for_a_backup() {
    let db = Db::open("backup-kill");
    four_files(&db);
    let mut bk = root(&db.server, 1);
    ok(&mut bk, "BACKUP STAGE START");
    let mut watch = root(&db.server, 2);
    let purge = in_background(&db.server, 7, "PURGE BINARY LOGS TO 'binlog.000004'");
    wait_for_state(&mut watch, 7, "Waiting for backup lock");
    ok(&mut watch, "KILL QUERY 7");
    let (code, _) = purge.join().unwrap();
    assert_eq!(code, 1317);
    assert_eq!(binary_logs(&mut watch).len(), 4);
    assert_eq!(running(&mut watch), "1");
}

#[test]
fn file_mode_refuses_backup_stage_start() {
    let d = TempDir::new("backup-file-mode");
    let mut cfg = ServerConfig::new(d.path());
    cfg.binlog_storage = onelog_sql::BinlogStorageMode::File;
    let server = Server::open(cfg).unwrap().0;
    let mut s = root(&server, 1);
    let e = fail(&mut s, "BACKUP STAGE START");
    assert_eq!(e.code, 1235);
    assert!(e.message.contains("--binlog-storage=file"), "{}", e.message);
    assert_eq!(running(&mut s), "0");
    assert_eq!(err(&mut s, "BACKUP STAGE END"), 4146);
    server.shutdown().unwrap();
}
