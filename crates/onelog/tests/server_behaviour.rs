//! The `onelog` binary as an operator sees it: command line, the data directory lock, clean
//! shutdown by SIGTERM / SIGINT / the SHUTDOWN statement (with a final checkpoint, so a restart
//! replays nothing), the refusal to listen beyond loopback while root has no password, options
//! from a my.cnf `--defaults-file`, and `max_connections` (error 1040 as the `mariadb` CLI
//! shows it).

mod common;

use std::process::Command;
use std::time::Duration;

use common::{mariadb_cmd, onelog_bin, run_bounded, sql, sql_value, Onelog, STOP_TIMEOUT};

const CLI_TIMEOUT: Duration = Duration::from_secs(60);

fn onelog(args: &[&str]) -> (Option<i32>, String, String) {
    let out = run_bounded(Command::new(onelog_bin()).args(args), None, CLI_TIMEOUT);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[test]
fn version_help_and_bad_options() {
    let (code, out, _) = onelog(&["--version"]);
    assert_eq!(code, Some(0));
    assert!(out.contains("10.11.9-MariaDB-onelog"), "{out}");
    let (code, out, _) = onelog(&["--help"]);
    assert_eq!(code, Some(0));
    assert!(
        out.contains("--datadir") && out.contains("--defaults-file"),
        "{out}"
    );
    let dir = tempfile::tempdir().unwrap();
    let datadir = format!("--datadir={}", dir.path().display());
    let (code, _, err) = onelog(&["serve", &datadir, "--no-such-option=1"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("unknown option '--no-such-option'"), "{err}");
    let (code, _, err) = onelog(&["serve", &datadir, "--port=99999"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("--port"), "{err}");
    let (code, _, err) = onelog(&["frobnicate"]);
    assert_eq!(code, Some(1), "{err}");
}

/// `onelog --help` names every command, and each command's `--help` prints its usage on
/// stdout with status 0 (it used to be an error, and `check --help` looked for a directory
/// named `--help`); an unknown option of `check` is a usage error, not a missing directory.
#[test]
fn every_command_is_listed_and_prints_its_usage_on_help() {
    let (code, out, _) = onelog(&["--help"]);
    assert_eq!(code, Some(0));
    for cmd in ["serve", "binlog", "backup", "restore", "check"] {
        assert!(
            out.contains(&format!("onelog {cmd} ")),
            "{cmd} missing:\n{out}"
        );
    }
    for (cmd, usage) in [
        (
            "backup",
            "usage: onelog backup (--target-dir=DIR | --stream)",
        ),
        ("restore", "usage: onelog restore --target-dir=NEW_DATADIR"),
        ("check", "usage: onelog check DIR"),
        ("binlog", "Usage: onelog binlog [options] FILE..."),
    ] {
        let (code, out, err) = onelog(&[cmd, "--help"]);
        assert_eq!(code, Some(0), "{cmd} --help: {err}");
        assert!(
            out.starts_with(usage),
            "{cmd} --help printed:\n{out}\n{err}"
        );
    }
    let (code, _, err) = onelog(&["check", "-x"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("unknown option -x") && err.contains("usage: onelog check DIR"),
        "{err}"
    );
}

#[test]
fn second_server_on_the_same_datadir_is_refused_naming_the_lock() {
    let dir = tempfile::tempdir().unwrap();
    let first = Onelog::start(dir.path(), &[]);
    let second = Onelog::try_start_args(dir.path(), &args(&["--port=0"]));
    let failure = match second {
        Ok(_) => panic!("a second server started on a locked data directory"),
        Err(f) => f,
    };
    let code = failure.status.and_then(|s| s.code());
    assert!(
        code.is_some() && code != Some(0),
        "exit status {:?}",
        failure.status
    );
    assert!(
        failure.log.contains("onelog.pid") && failure.log.contains("in use"),
        "the refusal must name the lock: {}",
        failure.log
    );
    // The first server is unharmed.
    assert_eq!(sql_value(first.port, "SELECT 1"), "1");
}

#[test]
fn sigterm_and_sigint_shut_down_cleanly_and_restart_replays_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Onelog::start(dir.path(), &[]);
    sql(
        server.port,
        "CREATE DATABASE d; CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(10)); \
         INSERT INTO d.t VALUES (1, 'one'), (2, 'two')",
    );
    let status = server.stop();
    let log = server.log_text();
    assert_eq!(status.code(), Some(0), "SIGTERM exit status; log:\n{log}");
    assert!(log.contains("received SIGTERM"), "{log}");
    assert!(log.contains("shutdown complete"), "{log}");

    // The final checkpoint covers everything: the restart replays no record.
    let server = Onelog::start(dir.path(), &[]);
    let log = server.log_text();
    assert!(
        log.contains("loaded checkpoint at LSN") && log.contains("replayed 0 records"),
        "restart after a clean shutdown must not replay the log:\n{log}"
    );
    assert!(log.contains("gtid_binlog_pos"), "{log}");
    assert_eq!(
        sql(server.port, "SELECT id, v FROM d.t ORDER BY id"),
        "1\tone\n2\ttwo\n"
    );

    // SIGINT (Ctrl-C) does the same.
    let pid = server.pid() as libc::pid_t;
    // SAFETY: kill(2) on our own live child.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    let mut server = server;
    let status = server.wait_exit(STOP_TIMEOUT);
    assert_eq!(
        status.code(),
        Some(0),
        "SIGINT exit status:\n{}",
        server.log_text()
    );
    assert!(server.log_text().contains("received SIGINT"));
}

#[test]
fn shutdown_statement_stops_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Onelog::start(dir.path(), &[]);
    sql(server.port, "CREATE DATABASE kept");
    let out = run_bounded(
        mariadb_cmd(server.port).args(["-e", "SHUTDOWN"]),
        None,
        CLI_TIMEOUT,
    );
    assert!(
        out.status.success(),
        "SHUTDOWN: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let status = server.wait_exit(STOP_TIMEOUT);
    let log = server.log_text();
    assert_eq!(status.code(), Some(0), "{log}");
    assert!(
        log.contains("SHUTDOWN statement") && log.contains("shutdown complete"),
        "{log}"
    );
    let server = Onelog::start(dir.path(), &[]);
    assert!(sql(server.port, "SHOW DATABASES")
        .lines()
        .any(|l| l == "kept"));
}

#[test]
fn listening_beyond_loopback_needs_a_root_password() {
    let dir = tempfile::tempdir().unwrap();
    let refused =
        Onelog::try_start_args(dir.path(), &args(&["--port=0", "--bind-address=0.0.0.0"]));
    let failure = match refused {
        Ok(_) => panic!("listened on 0.0.0.0 while root has no password"),
        Err(f) => f,
    };
    assert_eq!(
        failure.status.and_then(|s| s.code()),
        Some(1),
        "{}",
        failure.log
    );
    assert!(
        failure.log.contains("root has no password"),
        "the refusal must say why: {}",
        failure.log
    );

    // Once root has a password, the same option is accepted.
    let mut server = Onelog::start(dir.path(), &[]);
    sql(
        server.port,
        "SET PASSWORD FOR root@localhost = PASSWORD('s3cret')",
    );
    assert_eq!(server.stop().code(), Some(0));
    let server = Onelog::start(dir.path(), &["--bind-address=0.0.0.0"]);
    let out = run_bounded(
        Command::new("mariadb").args([
            "--no-defaults",
            "--protocol=TCP",
            "-h127.0.0.1",
            &format!("-P{}", server.port),
            "-uroot",
            "-ps3cret",
            "-N",
            "-B",
            "-e",
            "SELECT 7",
        ]),
        None,
        CLI_TIMEOUT,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "7\n");
}

#[test]
fn defaults_file_options_are_applied() {
    let dir = tempfile::tempdir().unwrap();
    // A port the kernel just handed out and we released (the server needs a fixed one here).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let cnf = dir.path().join("my.cnf");
    std::fs::write(
        &cnf,
        format!(
            "# onelog test\n[client]\nport = 1\nuser = nobody\n\n[mysqld]\nport = {port}\n\
             server_id = 42\n[mariadbd]\nmax-connections = 1040\n[onelog]\n\
             innodb_flush_log_at_trx_commit = 2\nwait_timeout = 3600 # seconds\n"
        ),
    )
    .unwrap();
    let datadir = dir.path().join("data");
    let server = Onelog::try_start_args(
        &datadir,
        &args(&[&format!("--defaults-file={}", cnf.display())]),
    )
    .unwrap_or_else(|f| panic!("start with {}: {:?}\n{}", cnf.display(), f.status, f.log));
    assert_eq!(server.port, port);
    assert_eq!(
        sql(
            port,
            "SELECT @@port, @@server_id, @@max_connections, @@innodb_flush_log_at_trx_commit, \
             @@global.wait_timeout"
        ),
        format!("{port}\t42\t1040\t2\t3600\n")
    );
}

#[test]
fn max_connections_is_enforced_with_error_1040() {
    let dir = tempfile::tempdir().unwrap();
    let server = Onelog::start(dir.path(), &["--max-connections=2"]);
    assert_eq!(sql_value(server.port, "SELECT @@max_connections"), "2");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let port = server.port;
    // Hold connections open; MariaDB lets one extra in for a SUPER user, so the limit shows
    // at the third or fourth.
    let mut held = Vec::new();
    let mut refused = None;
    for i in 0..4 {
        let opts = mysql_async::OptsBuilder::default()
            .ip_or_hostname("127.0.0.1")
            .tcp_port(port)
            .user(Some("root"))
            .prefer_socket(false);
        match runtime.block_on(mysql_async::Conn::new(opts)) {
            Ok(c) => held.push(c),
            Err(e) => {
                refused = Some((i, e));
                break;
            }
        }
    }
    let (at, err) = refused.expect("max_connections=2 let 4 clients in");
    assert!(
        at >= 2,
        "refused the connection #{} below the limit: {err}",
        at + 1
    );
    match err {
        mysql_async::Error::Server(e) => assert_eq!(e.code, 1040, "{}", e.message),
        other => panic!("expected ER_CON_COUNT_ERROR 1040, got {other}"),
    }
    // The real CLI shows the same error while the slots are taken…
    let out = run_bounded(
        mariadb_cmd(port).args(["-e", "SELECT 1"]),
        None,
        CLI_TIMEOUT,
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("1040") && err.contains("Too many connections"),
        "{err}"
    );
    // …and gets in once they are released.
    runtime.block_on(async {
        for c in held {
            c.disconnect().await.unwrap();
        }
    });
    // The server frees a slot when it has read the client's COM_QUIT, which happens after
    // disconnect() returns: poll, bounded.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let out = run_bounded(
            mariadb_cmd(port).args(["-N", "-e", "SELECT 1"]),
            None,
            CLI_TIMEOUT,
        );
        if out.status.success() {
            assert_eq!(String::from_utf8_lossy(&out.stdout), "1\n");
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "slots never freed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_port_in_use_is_a_startup_error_naming_the_address() {
    let dir = tempfile::tempdir().unwrap();
    let first = Onelog::start(&dir.path().join("a"), &[]);
    let port = format!("--port={}", first.port);
    let failure = match Onelog::try_start_args(&dir.path().join("b"), &args(&[&port])) {
        Ok(_) => panic!("two servers listened on port {}", first.port),
        Err(f) => f,
    };
    assert_eq!(
        failure.status.and_then(|s| s.code()),
        Some(1),
        "{}",
        failure.log
    );
    assert!(
        failure.log.contains("cannot listen on 127.0.0.1:") && failure.log.contains(&port[7..]),
        "{}",
        failure.log
    );
    assert_eq!(sql_value(first.port, "SELECT 1"), "1");
}
