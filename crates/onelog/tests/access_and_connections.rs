//! Access and connections against the real `onelog` binary and the real `mariadb` client
//! (issue 9, parts 5 and 6):
//! - out of the box `root@localhost` logs in only through the unix socket from the server's OS
//!   user (unix_socket authentication): a passwordless TCP login is refused (1698), from any
//!   OS user (as `nobody` too when the test runs as OS root), and so is a socket peer of
//!   another OS user; once a password is set, TCP works with it and the socket still works,
//!   also after a restart (the authentication methods are logged and checkpointed);
//! - the data directory is 0700 and every file in it 0600; a looser existing one is tightened;
//! - SHOW GRANTS for another account and SHOW CREATE DATABASE on a database without
//!   privileges answer 1044 as MariaDB, and no other account's hash is shown;
//! - silent and trickling clients are dropped after `connect_timeout` and counted in
//!   `Aborted_connects`; with every slot taken an account with SUPER still gets in through
//!   the reserved connection, one without gets 1040;
//! - a session's `wait_timeout` (and `interactive_timeout` for CLIENT_INTERACTIVE clients)
//!   closes an idle connection, counted in `Aborted_clients`; `max_allowed_packet` is
//!   read-only per session (1621) and SET GLOBAL applies to new connections;
//! - failed logins are counted and logged with user and host (`log_warnings` >= 2).

mod common;

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use common::{
    mariadb_cmd, require_tool, run_bounded, sql, sql_err, sql_value, status, Onelog,
    ROOT_AUTH_OPTION,
};

const CLI_TIMEOUT: Duration = Duration::from_secs(60);
/// Upper bound for the server to drop a client it must drop (never a timing assertion: the
/// expected time is a few seconds).
const DROP_BOUND: Duration = Duration::from_secs(60);
/// The OS user `nobody`.
const NOBODY: u32 = 65534;

fn socket_default() -> String {
    format!("{ROOT_AUTH_OPTION}=socket")
}

/// The `mariadb` CLI with `args`, as OS user `uid` when given.
fn cli(args: &[&str], uid: Option<u32>) -> Output {
    require_tool("mariadb");
    let mut cmd = Command::new("mariadb");
    cmd.arg("--no-defaults").args(args);
    if let Some(uid) = uid {
        cmd.uid(uid).gid(NOBODY);
    }
    run_bounded(&mut cmd, None, CLI_TIMEOUT)
}

fn tcp(port: u16, user: &str, password: Option<&str>, sql: &str, uid: Option<u32>) -> Output {
    let port = format!("-P{port}");
    let pw = password.map(|p| format!("-p{p}"));
    let user = format!("-u{user}");
    let mut args = vec!["--protocol=TCP", "-h127.0.0.1", &port, &user];
    if let Some(pw) = &pw {
        args.push(pw);
    }
    args.extend(["-N", "-B", "-e", sql]);
    cli(&args, uid)
}

fn via_socket(socket: &Path, user: &str, sql: &str, uid: Option<u32>) -> Output {
    let socket = format!("--socket={}", socket.display());
    let user = format!("-u{user}");
    cli(
        &["--protocol=SOCKET", &socket, &user, "-N", "-B", "-e", sql],
        uid,
    )
}

fn ok_text(out: &Output) -> String {
    assert!(
        out.status.success(),
        "mariadb failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn err_text(out: &Output) -> String {
    assert!(
        !out.status.success(),
        "mariadb succeeded: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn is_os_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

#[test]
fn root_logs_in_through_the_unix_socket_only_until_a_password_is_set() {
    let dir = tempfile::tempdir().unwrap();
    let datadir = dir.path().join("data");
    let args = [socket_default()];
    let mut server = Onelog::try_start_args(
        &datadir,
        &[vec!["--port=0".to_string()], args.to_vec()].concat(),
    )
    .unwrap_or_else(|f| panic!("start: {:?}\n{}", f.status, f.log));
    let (port, socket) = (server.port, server.socket.clone());

    // The OS user running the server (this test) logs in over the socket.
    let out = via_socket(&socket, "root", "SELECT CURRENT_USER(); SHOW GRANTS", None);
    assert_eq!(
        ok_text(&out),
        "root@localhost\nGRANT ALL PRIVILEGES ON *.* TO `root`@`localhost` IDENTIFIED VIA \
         mysql_native_password USING 'invalid' OR unix_socket WITH GRANT OPTION\n"
    );
    // No passwordless TCP login, from this OS user or any other.
    let err = err_text(&tcp(port, "root", None, "SELECT 1", None));
    assert!(
        err.contains("ERROR 1698 (28000)")
            && err.contains("Access denied for user 'root'@'localhost'"),
        "{err}"
    );
    let mut failures = 1u64;
    if is_os_root() {
        let err = err_text(&tcp(port, "root", None, "SELECT 1", Some(NOBODY)));
        assert!(err.contains("ERROR 1698 (28000)"), "{err}");
        failures += 1;
        // The default socket lies in the 0700 data directory: `nobody` cannot even reach it.
        let err = err_text(&via_socket(&socket, "root", "SELECT 1", Some(NOBODY)));
        assert!(err.contains("ERROR 2002"), "{err}");
    }
    assert_eq!(
        ok_text(&via_socket(
            &socket,
            "root",
            "SHOW GLOBAL STATUS LIKE 'Aborted_connects'",
            None
        )),
        format!("Aborted_connects\t{failures}\n")
    );
    assert!(
        server
            .log_text()
            .contains("[Warning] Access denied for user 'root'@'localhost'"),
        "{}",
        server.log_text()
    );

    // An operator sets a password: TCP works with it, the socket keeps working.
    ok_text(&via_socket(
        &socket,
        "root",
        "ALTER USER root@localhost IDENTIFIED BY 's3cret'",
        None,
    ));
    assert_eq!(
        ok_text(&tcp(port, "root", Some("s3cret"), "SELECT 1", None)),
        "1\n"
    );
    let err = err_text(&tcp(port, "root", Some("wrong"), "SELECT 1", None));
    assert!(
        err.contains("ERROR 1045 (28000)")
            && err.contains("Access denied for user 'root'@'localhost' (using password: YES)"),
        "{err}"
    );
    let err = err_text(&tcp(port, "root", None, "SELECT 1", None));
    assert!(err.contains("(using password: NO)"), "{err}");
    assert_eq!(
        ok_text(&via_socket(&socket, "root", "SELECT 2", None)),
        "2\n"
    );
    // SET PASSWORD does the same.
    ok_text(&via_socket(
        &socket,
        "root",
        "SET PASSWORD FOR root@localhost = PASSWORD('other')",
        None,
    ));
    assert_eq!(
        ok_text(&tcp(port, "root", Some("other"), "SELECT 3", None)),
        "3\n"
    );

    // The methods survive a restart (log replay and checkpoint).
    server.stop();
    let server = Onelog::try_start_args(
        &datadir,
        &[vec!["--port=0".to_string()], args.to_vec()].concat(),
    )
    .unwrap_or_else(|f| panic!("restart: {:?}\n{}", f.status, f.log));
    assert_eq!(
        ok_text(&tcp(server.port, "root", Some("other"), "SELECT 4", None)),
        "4\n"
    );
    assert_eq!(
        ok_text(&via_socket(&server.socket, "root", "SELECT 5", None)),
        "5\n"
    );
    let err = err_text(&tcp(server.port, "root", None, "SELECT 1", None));
    assert!(err.contains("ERROR 1045"), "{err}");
}

#[test]
fn a_socket_peer_of_another_os_user_is_refused_as_root() {
    // Running a client as another OS user needs OS root (CI and scripts/test.sh run as root):
    // fail rather than skip, so the case is never silently left out.
    assert!(
        is_os_root(),
        "this test runs a client as `nobody` and needs OS root: run scripts/test.sh as root"
    );
    let dir = tempfile::tempdir().unwrap();
    let sockdir = dir.path().join("run");
    std::fs::create_dir(&sockdir).unwrap();
    std::fs::set_permissions(&sockdir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let socket = sockdir.join("onelog.sock");
    let server = Onelog::start(
        &dir.path().join("data"),
        &[&socket_default(), &format!("--socket={}", socket.display())],
    );
    // World-connectable like MariaDB's socket: who logs in is authentication's business.
    let mode = std::fs::metadata(&socket).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o777);
    let err = err_text(&via_socket(&socket, "root", "SELECT 1", Some(NOBODY)));
    assert!(
        err.contains("ERROR 1698 (28000)")
            && err.contains("Access denied for user 'root'@'localhost'"),
        "{err}"
    );
    assert_eq!(
        ok_text(&via_socket(&socket, "root", "SELECT 1", None)),
        "1\n"
    );
    assert_eq!(
        ok_text(&via_socket(
            &socket,
            "root",
            "SHOW GLOBAL STATUS LIKE 'Aborted_connects'",
            None
        )),
        "Aborted_connects\t1\n"
    );
    drop(server);
}

/// Every directory under `dir` is 0700 and every file 0600 (the socket is gone after a clean
/// shutdown). Returns how many files were checked.
fn assert_private(dir: &Path) -> usize {
    let mut files = 0;
    let mode = std::fs::metadata(dir).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700, "{}", dir.display());
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let meta = std::fs::symlink_metadata(e.path()).unwrap();
        if meta.is_dir() {
            files += assert_private(&e.path());
        } else {
            let mode = meta.permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "{}", e.path().display());
            files += 1;
        }
    }
    files
}

#[test]
fn data_directory_is_0700_and_its_files_0600_and_looser_modes_are_tightened() {
    let dir = tempfile::tempdir().unwrap();
    let datadir = dir.path().join("data");
    let mut server = Onelog::start(&datadir, &[]);
    sql(
        server.port,
        "CREATE DATABASE d; CREATE TABLE d.t (id INT PRIMARY KEY, secret VARCHAR(20)); \
         INSERT INTO d.t VALUES (1, 'table-data')",
    );
    server.stop();
    // Segments, checkpoint, control files, pid file.
    let files = assert_private(&datadir);
    assert!(files >= 3, "only {files} files in {}", datadir.display());

    // A data directory with looser modes (an older version, a copy): tightened at start.
    std::fs::set_permissions(&datadir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let pid = datadir.join("onelog.pid");
    std::fs::set_permissions(&pid, std::fs::Permissions::from_mode(0o644)).unwrap();
    let mut server = Onelog::start(&datadir, &[]);
    let log = server.log_text();
    assert!(
        log.contains("[Warning] data directory permissions were looser than 0700/0600")
            && log.contains("mode 0755 -> 0700"),
        "{log}"
    );
    assert_eq!(
        sql_value(server.port, "SELECT secret FROM d.t"),
        "table-data"
    );
    server.stop();
    assert_private(&datadir);
}

#[test]
fn show_grants_for_others_and_show_create_database_follow_mariadb_privileges() {
    let dir = tempfile::tempdir().unwrap();
    let server = Onelog::start(dir.path(), &[]);
    let port = server.port;
    sql(
        port,
        "CREATE DATABASE d1; CREATE DATABASE d2; \
         CREATE USER app@'%' IDENTIFIED BY 'apppw'; GRANT SELECT ON d1.* TO app@'%'; \
         CREATE USER other@'%' IDENTIFIED BY 'otherpw'",
    );
    let grants = sql_value(port, "SHOW GRANTS FOR other@'%'");
    let other_hash = grants
        .split('\'')
        .find(|w| w.starts_with('*') && w.len() == 41)
        .unwrap_or_else(|| panic!("no hash in {grants}"))
        .to_string();
    let app = |q: &str| tcp(port, "app", Some("apppw"), q, None);
    for q in [
        "SHOW GRANTS FOR other@'%'",
        "SHOW GRANTS FOR root@localhost",
    ] {
        let err = err_text(&app(q));
        assert!(
            err.contains("ERROR 1044 (42000)")
                && err.contains("Access denied for user 'app'@'%' to database 'mysql'"),
            "{q}: {err}"
        );
        assert!(!err.contains(&other_hash), "{err}");
    }
    for db in ["d2", "nosuch"] {
        let err = err_text(&app(&format!("SHOW CREATE DATABASE {db}")));
        assert!(
            err.contains("ERROR 1044 (42000)")
                && err.contains(&format!(
                    "Access denied for user 'app'@'%' to database '{db}'"
                )),
            "{db}: {err}"
        );
    }
    // Its own grants and its own database, as MariaDB.
    let own = ok_text(&app("SHOW GRANTS FOR app@'%'"));
    assert!(own.contains("GRANT SELECT ON `d1`.* TO `app`@`%`"), "{own}");
    assert!(ok_text(&app("SHOW CREATE DATABASE d1")).starts_with("d1\tCREATE DATABASE `d1`"));
    // An account that may read mysql.* sees the others.
    sql(port, "GRANT SELECT ON mysql.* TO app@'%'");
    let theirs = ok_text(&app("SHOW GRANTS FOR other@'%'"));
    assert!(theirs.contains(&other_hash), "{theirs}");
}

// ---------------------------------------------------------------------------------------------
// Raw protocol clients (to hold a connection mid-handshake or idle without a client library).

fn read_packet(s: &mut TcpStream) -> std::io::Result<Vec<u8>> {
    let mut h = [0u8; 4];
    s.read_exact(&mut h)?;
    let len = usize::from(h[0]) | usize::from(h[1]) << 8 | usize::from(h[2]) << 16;
    let mut p = vec![0; len];
    s.read_exact(&mut p)?;
    Ok(p)
}

fn write_packet(s: &mut TcpStream, seq: u8, payload: &[u8]) {
    let len = payload.len();
    let mut out = vec![len as u8, (len >> 8) as u8, (len >> 16) as u8, seq];
    out.extend_from_slice(payload);
    s.write_all(&out).unwrap();
}

/// Connects and reads the greeting; the handshake is left to the caller.
fn greeted(port: u16) -> TcpStream {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(DROP_BOUND)).unwrap();
    let g = read_packet(&mut s).unwrap();
    assert_eq!(g[0], 10, "not a greeting: {g:?}");
    s
}

const CLIENT_PROTOCOL_41: u32 = 0x200;
const CLIENT_INTERACTIVE: u32 = 0x400;
const CLIENT_SECURE_CONNECTION: u32 = 0x8000;
const CLIENT_PLUGIN_AUTH: u32 = 0x8_0000;

/// Logs in as passwordless `user` over TCP (the harness's root) and returns the connection.
fn raw_login(port: u16, user: &str, interactive: bool) -> TcpStream {
    let mut s = greeted(port);
    let mut caps = CLIENT_PROTOCOL_41 | CLIENT_SECURE_CONNECTION | CLIENT_PLUGIN_AUTH;
    if interactive {
        caps |= CLIENT_INTERACTIVE;
    }
    let mut p = caps.to_le_bytes().to_vec();
    p.extend_from_slice(&(1u32 << 24).to_le_bytes());
    p.push(45);
    p.extend_from_slice(&[0; 23]);
    p.extend_from_slice(user.as_bytes());
    p.push(0);
    p.push(0); // empty auth response
    p.extend_from_slice(b"mysql_native_password\0");
    write_packet(&mut s, 1, &p);
    let ok = read_packet(&mut s).unwrap();
    assert_eq!(ok[0], 0, "login failed: {}", String::from_utf8_lossy(&ok));
    s
}

fn raw_query_ok(s: &mut TcpStream, sql: &str) {
    let mut p = vec![0x03];
    p.extend_from_slice(sql.as_bytes());
    write_packet(s, 0, &p);
    let r = read_packet(s).unwrap();
    assert_eq!(r[0], 0, "{sql}: {}", String::from_utf8_lossy(&r));
}

/// Waits (bounded) until the server closes `s`; true when it did.
fn server_closes(s: &mut TcpStream) -> bool {
    s.set_read_timeout(Some(DROP_BOUND)).unwrap();
    let mut buf = [0u8; 256];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => continue, // an error packet before the close
            Err(e) if e.kind() == ErrorKind::ConnectionReset => return true,
            Err(_) => return false,
        }
    }
}

#[test]
fn silent_and_trickling_clients_are_dropped_after_connect_timeout_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let server = Onelog::start(dir.path(), &["--max-connections=3"]);
    let port = server.port;
    sql(port, "SET GLOBAL connect_timeout = 2");
    assert_eq!(sql_value(port, "SELECT @@global.connect_timeout"), "2");
    let before = status(port, "Aborted_connects");
    let mut silent: Vec<TcpStream> = (0..2).map(|_| greeted(port)).collect();
    // One byte of a handshake response every 300 ms: never completes.
    let mut trickler = greeted(port);
    trickler
        .set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let mut closed = false;
    let payload = [0x20u8; 64];
    let header = [64u8, 0, 0, 1];
    for byte in header.iter().chain(payload.iter()).take(200) {
        if trickler.write_all(&[*byte]).is_err() {
            closed = true;
            break;
        }
        let mut b = [0u8; 64];
        match trickler.read(&mut b) {
            Ok(0) => {
                closed = true;
                break;
            }
            Err(e) if e.kind() == ErrorKind::ConnectionReset => {
                closed = true;
                break;
            }
            _ => {}
        }
    }
    assert!(
        closed,
        "a client trickling its handshake kept its connection"
    );
    for s in &mut silent {
        assert!(server_closes(s), "a silent client kept its connection");
    }
    assert_eq!(status(port, "Aborted_connects") - before, 3);
    // The slots are free again.
    assert_eq!(sql_value(port, "SELECT 1"), "1");
}

#[test]
fn an_account_with_super_gets_the_connection_reserved_above_max_connections() {
    let dir = tempfile::tempdir().unwrap();
    let server = Onelog::start(dir.path(), &["--max-connections=2"]);
    let port = server.port;
    sql(
        port,
        "SET GLOBAL connect_timeout = 600; CREATE USER app@'%' IDENTIFIED BY 'pw'; \
         GRANT SELECT, PROCESS ON *.* TO app@'%'",
    );
    let before = status(port, "Aborted_connects");
    // Two silent sockets take every ordinary slot.
    let silent: Vec<TcpStream> = (0..2).map(|_| greeted(port)).collect();
    let err = err_text(&tcp(port, "app", Some("pw"), "SELECT 1", None));
    assert!(
        err.contains("ERROR 1040") && err.contains("Too many connections"),
        "{err}"
    );
    // root holds SUPER: it gets in and can see (and end) the squatters.
    let mut admin = raw_login(port, "root", false);
    raw_query_ok(&mut admin, "SET autocommit = 1");
    // With the reserved connection taken too, nobody else gets in.
    let out = run_bounded(
        mariadb_cmd(port).args(["-e", "SELECT 1"]),
        None,
        CLI_TIMEOUT,
    );
    let err = err_text(&out);
    // Refused before the greeting, which this client reports inside its error 2002.
    assert!(
        err.contains("1040") && err.contains("Too many connections"),
        "{err}"
    );
    drop(silent);
    drop(admin);
    // The refused non-SUPER login was counted.
    let deadline = std::time::Instant::now() + DROP_BOUND;
    loop {
        let out = run_bounded(
            mariadb_cmd(port).args(["-N", "-B", "-e", "SELECT 1"]),
            None,
            CLI_TIMEOUT,
        );
        if out.status.success() || std::time::Instant::now() > deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(status(port, "Aborted_connects") - before >= 1);
}

#[test]
fn session_wait_timeout_and_interactive_timeout_close_idle_connections_as_aborted_clients() {
    let dir = tempfile::tempdir().unwrap();
    let server = Onelog::start(dir.path(), &[]);
    let port = server.port;
    let before = status(port, "Aborted_clients");
    // SET SESSION wait_timeout is honoured.
    let mut s = raw_login(port, "root", false);
    raw_query_ok(&mut s, "SET SESSION wait_timeout = 1");
    assert!(
        server_closes(&mut s),
        "idle past its wait_timeout, still open"
    );
    assert_eq!(status(port, "Aborted_clients") - before, 1);
    // An interactive client starts with interactive_timeout; others keep wait_timeout.
    sql(port, "SET GLOBAL interactive_timeout = 1");
    assert_eq!(
        sql_value(
            port,
            "SELECT @@session.wait_timeout, @@global.interactive_timeout"
        ),
        "28800\t1"
    );
    let mut i = raw_login(port, "root", true);
    assert!(
        server_closes(&mut i),
        "interactive client idle past interactive_timeout"
    );
    assert_eq!(status(port, "Aborted_clients") - before, 2);
    // A client that ends with COM_QUIT is not an aborted client.
    let mut q = raw_login(port, "root", false);
    write_packet(&mut q, 0, &[0x01]);
    assert!(server_closes(&mut q));
    assert_eq!(status(port, "Aborted_clients") - before, 2);
}

#[test]
fn max_allowed_packet_is_read_only_per_session_and_set_global_applies_to_new_connections() {
    let dir = tempfile::tempdir().unwrap();
    let server = Onelog::start(dir.path(), &[]);
    let port = server.port;
    let err = sql_err(port, "SET SESSION max_allowed_packet = 1048576");
    assert!(
        err.contains("ERROR 1621 (HY000)")
            && err.contains(
                "SESSION variable 'max_allowed_packet' is read-only. Use SET GLOBAL to assign the value"
            ),
        "{err}"
    );
    // A 4 KB query: small enough to be read whole by the server even when it refuses it.
    let big = format!("SELECT LENGTH('{}')", "a".repeat(4000));
    let mut s = raw_login(port, "root", false);
    let mut p = vec![0x03];
    p.extend_from_slice(big.as_bytes());
    write_packet(&mut s, 0, &p);
    let r = read_packet(&mut s).unwrap();
    assert_eq!(
        r[0], 1,
        "a result set for a 4 KB query under the 16M default"
    );
    drop(s);
    sql(port, "SET GLOBAL max_allowed_packet = 1024");
    let mut s = raw_login(port, "root", false);
    write_packet(&mut s, 0, &p);
    let r = read_packet(&mut s).unwrap();
    assert_eq!(r[0], 0xFF, "expected ERR 1153, got {r:?}");
    assert_eq!(u16::from_le_bytes([r[1], r[2]]), 1153);
    assert!(server_closes(&mut s));
}

#[test]
fn failed_logins_are_counted_and_logged_unless_log_warnings_is_below_2() {
    let dir = tempfile::tempdir().unwrap();
    let server = Onelog::start(dir.path(), &[]);
    let port = server.port;
    assert_eq!(sql_value(port, "SELECT @@global.log_warnings"), "2");
    let before = status(port, "Aborted_connects");
    for _ in 0..5 {
        let err = err_text(&tcp(port, "mallory", Some("guess"), "SELECT 1", None));
        assert!(err.contains("ERROR 1045"), "{err}");
    }
    assert_eq!(status(port, "Aborted_connects") - before, 5);
    let logged = server
        .log_text()
        .matches("[Warning] Access denied for user 'mallory'@'localhost' (using password: YES)")
        .count();
    assert_eq!(logged, 5, "{}", server.log_text());
    sql(port, "SET GLOBAL log_warnings = 1");
    let err = err_text(&tcp(port, "eve", None, "SELECT 1", None));
    assert!(err.contains("ERROR 1045"), "{err}");
    assert!(
        !server.log_text().contains("'eve'"),
        "{}",
        server.log_text()
    );
    assert_eq!(status(port, "Aborted_connects") - before, 6);
}
