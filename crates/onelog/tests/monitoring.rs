//! Monitoring and administration with the real tools: Debian's `prometheus-mysqld-exporter`
//! scraping onelog with its default collectors, `mariadb-admin`'s commands, the
//! `Bytes_received` / `Bytes_sent` counters (session and global) they read, and the paged
//! table store's `innodb_buffer_pool_size` and `Innodb_*` counters.
//!
//! Every expected answer was measured on MariaDB 10.11 with the same tool and command.

mod common;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{require_tool, run_bounded, sql, sql_err, sql_value, status, Onelog};

const CLI_TIMEOUT: Duration = Duration::from_secs(60);

/// `mariadb-admin ARGS` as root over TCP: (exit code, stdout, stderr).
fn admin(port: u16, args: &[&str]) -> (Option<i32>, String, String) {
    require_tool("mariadb-admin");
    let mut cmd = Command::new("mariadb-admin");
    cmd.args([
        "--no-defaults",
        "--protocol=TCP",
        "-h127.0.0.1",
        &format!("-P{port}"),
        "-uroot",
    ])
    .args(args);
    let out = run_bounded(&mut cmd, None, CLI_TIMEOUT);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs `mariadb-admin ARGS` and asserts that it succeeded without a word on stderr.
fn admin_ok(port: u16, args: &[&str]) -> String {
    let (code, out, err) = admin(port, args);
    assert_eq!(code, Some(0), "mariadb-admin {args:?}: {out}{err}");
    assert!(
        err.is_empty(),
        "mariadb-admin {args:?} wrote to stderr: {err}"
    );
    out
}

#[test]
fn bytes_sent_and_received_count_the_wire_per_session_and_globally() {
    let dir = tempfile::tempdir().unwrap();
    let server = Onelog::start(dir.path(), &[]);
    let out = sql(
        server.port,
        "SHOW SESSION STATUS LIKE 'Bytes_%'; SELECT LENGTH(REPEAT('x', 100000)); \
         SELECT REPEAT('y', 100000) INTO @v; SHOW SESSION STATUS LIKE 'Bytes_%'",
    );
    let nums: Vec<u64> = out
        .lines()
        .filter_map(|l| {
            l.strip_prefix("Bytes_received\t")
                .or(l.strip_prefix("Bytes_sent\t"))
        })
        .map(|v| v.trim().parse().unwrap())
        .collect();
    assert_eq!(nums.len(), 4, "{out}");
    let (recv1, sent1, recv2, sent2) = (nums[0], nums[1], nums[2], nums[3]);
    // The handshake response and the CLI's first query came before the first SHOW (MariaDB
    // 10.11: 208 received, 119 sent at that point with the same CLI).
    assert!(recv1 > 100 && sent1 > 50, "{out}");
    // The 100000-byte string only went to the client in the first SELECT's answer ...
    assert!(sent2 - sent1 < 1000, "{out}");
    // ... and the statements' text in between came from it.
    assert!(recv2 > recv1 + 60 && recv2 < recv1 + 300, "{out}");
    // A result with a 100000-byte value: the session sends it, the server's total grows by
    // at least as much.
    let before = status(server.port, "Bytes_sent");
    let out = sql(
        server.port,
        "SELECT REPEAT('z', 100000); SHOW SESSION STATUS LIKE 'Bytes_sent'",
    );
    let session_sent: u64 = out
        .lines()
        .find_map(|l| l.strip_prefix("Bytes_sent\t"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(session_sent > 100_000, "{session_sent}");
    let after = status(server.port, "Bytes_sent");
    assert!(
        after >= before + session_sent,
        "{before} {session_sent} {after}"
    );
    assert!(status(server.port, "Bytes_received") > recv2);
    // FLUSH STATUS zeroes the session's counters, not the server's (MariaDB 10.11 then shows
    // 39 received, the SHOW itself, and 11 sent, FLUSH's OK packet).
    let global = status(server.port, "Bytes_sent");
    let out = sql(
        server.port,
        "FLUSH STATUS; SHOW SESSION STATUS LIKE 'Bytes_%'",
    );
    assert_eq!(out, "Bytes_received\t39\nBytes_sent\t11\n");
    assert!(status(server.port, "Bytes_sent") > global);
}

#[test]
fn mariadb_admin_commands_work_as_on_mariadb() {
    let dir = tempfile::tempdir().unwrap();
    let server = Onelog::start(dir.path(), &[]);
    let port = server.port;

    assert_eq!(admin_ok(port, &["ping"]), "mysqld is alive\n");
    let out = admin_ok(port, &["status"]);
    assert!(
        out.starts_with("Uptime: ") && out.contains("Threads: 1  Questions: "),
        "{out}"
    );
    let out = admin_ok(port, &["version"]);
    assert!(out.contains("Server version\t\t10.11."), "{out}");
    let out = admin_ok(port, &["extended-status"]);
    let received = out
        .lines()
        .find(|l| l.starts_with("| Bytes_received "))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(!received.contains("| 0 "), "{received}");
    let out = admin_ok(port, &["variables"]);
    assert!(out.contains("| max_connections "), "{out}");
    let out = admin_ok(port, &["processlist"]);
    assert!(
        out.contains("| Id ") && out.contains("show processlist"),
        "{out}"
    );

    // COM_REFRESH (refresh, flush-threads) and the FLUSH statements of the flush-* commands.
    for cmd in [
        "refresh",
        "reload",
        "flush-hosts",
        "flush-logs",
        "flush-privileges",
        "flush-status",
        "flush-tables",
        "flush-threads",
        "flush-binary-log",
        "debug",
    ] {
        assert_eq!(admin_ok(port, &[cmd]), "", "{cmd}");
    }

    assert_eq!(admin_ok(port, &["create", "admin_db"]), "");
    assert_eq!(sql(port, "SHOW DATABASES LIKE 'admin_db'"), "admin_db\n");
    assert_eq!(
        admin_ok(port, &["-f", "drop", "admin_db"]),
        "Database \"admin_db\" dropped\n"
    );
    assert_eq!(sql(port, "SHOW DATABASES LIKE 'admin_db'"), "");

    // password: SHOW VARIABLES LIKE 'old_passwords', SET sql_log_off=1, SET PASSWORD.
    sql(port, "CREATE USER pw@'%' IDENTIFIED BY 'old'");
    let mut cmd = Command::new("mariadb-admin");
    cmd.args([
        "--no-defaults",
        "--protocol=TCP",
        "-h127.0.0.1",
        &format!("-P{port}"),
        "-upw",
        "-pold",
        "password",
        "new",
    ]);
    let out = run_bounded(&mut cmd, None, CLI_TIMEOUT);
    assert!(out.status.success(), "{out:?}");
    let (code, _, _) = admin(port, &["-upw", "-pnew", "ping"]);
    assert_eq!(code, Some(0));

    // No replica configured: MariaDB's message and exit code.
    let (code, out, err) = admin(port, &["start-slave"]);
    assert_eq!(code, Some(1), "{out}{err}");
    // (mariadb-admin rings the terminal bell before its error messages.)
    assert_eq!(
        err.trim_start_matches('\u{7}'),
        "mariadb-admin: Error starting slave: Misconfigured slave: MASTER_HOST was not set; \
         Fix in config file or with CHANGE MASTER TO\n"
    );
    let (code, out, err) = admin(port, &["stop-slave"]);
    assert_eq!(code, Some(0), "{out}{err}");

    let (code, _, err) = admin(port, &["kill", "99999"]);
    assert_eq!(code, Some(1));
    assert_eq!(
        err.trim_start_matches('\u{7}'),
        "mariadb-admin: kill failed on 99999; error: 'Unknown thread id: 99999'\n"
    );

    // kill: another connection, found in the processlist.
    let mut sleeper = Command::new("mariadb")
        .args([
            "--no-defaults",
            "--protocol=TCP",
            "-h127.0.0.1",
            &format!("-P{port}"),
            "-uroot",
            "-e",
            "SELECT SLEEP(60)",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let id = loop {
        let list = sql(port, "SHOW PROCESSLIST");
        let found = list
            .lines()
            .find(|l| l.contains("\tSELECT SLEEP(60)"))
            .and_then(|l| l.split('\t').next());
        if let Some(id) = found {
            break id.to_string();
        }
        assert!(Instant::now() < deadline, "the sleeping query never showed");
        std::thread::sleep(Duration::from_millis(50));
    };
    admin_ok(port, &["kill", &id]);
    let deadline = Instant::now() + Duration::from_secs(30);
    while sleeper.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "the killed client did not end");
        std::thread::sleep(Duration::from_millis(50));
    }

    let mut server = server;
    admin_ok(port, &["shutdown"]);
    assert!(server.wait_exit(Duration::from_secs(60)).success());
}

/// A port nobody listens on (bound and released: the exporter takes no port 0).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `GET path` over HTTP/1.0 with a deadline; None while nothing listens.
fn http_get(port: u16, path: &str) -> Option<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(60))).ok()?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut body = String::new();
    s.read_to_string(&mut body).ok()?;
    Some(body)
}

struct Exporter(Child);

impl Drop for Exporter {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts the exporter against `port` with `extra` options and scrapes `/metrics` once;
/// returns (metrics, exporter log).
fn scrape(port: u16, extra: &[&str]) -> (String, String) {
    require_tool("prometheus-mysqld-exporter");
    let listen = free_port();
    let log = tempfile::NamedTempFile::new().unwrap();
    let child = Command::new("prometheus-mysqld-exporter")
        .env("DATA_SOURCE_NAME", format!("root@(127.0.0.1:{port})/"))
        .arg(format!("--web.listen-address=127.0.0.1:{listen}"))
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log.reopen().unwrap())
        .spawn()
        .unwrap();
    let mut exporter = Exporter(child);
    let deadline = Instant::now() + Duration::from_secs(60);
    let metrics = loop {
        if let Some(m) = http_get(listen, "/metrics") {
            break m;
        }
        assert!(
            exporter.0.try_wait().unwrap().is_none(),
            "the exporter exited: {}",
            std::fs::read_to_string(log.path()).unwrap()
        );
        assert!(Instant::now() < deadline, "the exporter never listened");
        std::thread::sleep(Duration::from_millis(100));
    };
    let _ = exporter.0.kill();
    let _ = exporter.0.wait();
    (metrics, std::fs::read_to_string(log.path()).unwrap())
}

/// The exporter 0.14's default collectors (`--help`: those on by default).
const DEFAULT_COLLECTORS: &[&str] = &[
    "global_status",
    "global_variables",
    "slave_status",
    "info_schema.innodb_cmp",
    "info_schema.innodb_cmpmem",
    "info_schema.query_response_time",
];

#[test]
fn mysqld_exporter_scrapes_every_default_collector() {
    let dir = tempfile::tempdir().unwrap();
    let server = Onelog::start(dir.path(), &[]);
    let (metrics, log) = scrape(server.port, &[]);
    assert!(metrics.contains("\nmysql_up 1\n"), "{metrics}\n{log}");
    // 0.14 has no per-collector success metric: a collector that ran has its duration, one
    // that failed logs `level=error msg="Error from scraper" scraper=NAME` and sets
    // mysql_exporter_last_scrape_error.
    for c in DEFAULT_COLLECTORS {
        let line =
            format!("\nmysql_exporter_collector_duration_seconds{{collector=\"collect.{c}\"}} ");
        assert!(
            metrics.contains(&line),
            "collector {c} did not run:\n{metrics}\n{log}"
        );
    }
    assert!(!log.contains("level=error"), "{log}");
    assert!(
        metrics.contains("\nmysql_exporter_last_scrape_error 0\n"),
        "{metrics}\n{log}"
    );
    // The counters it reads are real.
    let bytes = metrics
        .lines()
        .find_map(|l| l.strip_prefix("mysql_global_status_bytes_received "))
        .unwrap_or_else(|| panic!("{metrics}"));
    assert!(bytes.parse::<f64>().unwrap() > 0.0, "{bytes}");
    assert!(
        metrics.contains("\nmysql_global_status_threads_connected 1\n"),
        "{metrics}"
    );
    assert!(
        metrics.contains("\nmysql_global_variables_max_connections "),
        "{metrics}"
    );
}

/// Waits (bounded) until the server's error log has a line containing `needle`.
fn wait_for_log_line(server: &Onelog, needle: &str) -> String {
    wait_for_log_lines(server, needle, 1).remove(0)
}

/// The first `count` lines of the server's log that contain `needle`, waiting up to 30 s.
fn wait_for_log_lines(server: &Onelog, needle: &str, count: usize) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let log = server.log_text();
        let lines: Vec<String> = log
            .lines()
            .filter(|l| l.contains(needle))
            .map(str::to_string)
            .collect();
        if lines.len() >= count {
            return lines;
        }
        assert!(
            Instant::now() < deadline,
            "{} of {count} {needle:?} lines in the log:\n{log}",
            lines.len()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn error_log_records_failed_logins_and_aborted_connections() {
    let dir = tempfile::tempdir().unwrap();
    let server = Onelog::start(dir.path(), &[]);
    let port = server.port;
    let out = run_bounded(
        common::mariadb_cmd(port).args(["-pwrong", "-e", "SELECT 1"]),
        None,
        CLI_TIMEOUT,
    );
    assert!(!out.status.success());
    let line = wait_for_log_line(&server, "Access denied");
    assert!(
        line.ends_with(
            " [Warning] Access denied for user 'root'@'localhost' (using password: YES)"
        ),
        "{line}"
    );
    // A client that closes before logging in, once with the greeting still unread in its
    // socket (the kernel then resets the connection instead of ending it) and once after
    // reading it (a plain end of stream).
    let unread = TcpStream::connect(("127.0.0.1", port)).unwrap();
    unread
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    assert!(unread.peek(&mut [0u8; 1]).unwrap() > 0, "no greeting");
    drop(unread);
    let mut read = TcpStream::connect(("127.0.0.1", port)).unwrap();
    read.set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    assert!(read.read(&mut [0u8; 512]).unwrap() > 0, "no greeting");
    drop(read);
    let lines = wait_for_log_lines(&server, "without authentication", 2);
    for line in &lines {
        assert!(
            line.contains("[Warning] Aborted connection ")
                && line.ends_with(
                    " to db: 'unconnected' user: 'unauthenticated' host: 'localhost' (This connection closed normally without authentication)"
                ),
            "{line}"
        );
    }
    // A logged-in client killed without COM_QUIT.
    sql(port, "CREATE DATABASE gone");
    let mut client = common::mariadb_cmd(port)
        .args(["gone"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while status(port, "Threads_connected") < 2 {
        assert!(Instant::now() < deadline, "the client never connected");
        std::thread::sleep(Duration::from_millis(50));
    }
    client.kill().unwrap();
    let _ = client.wait();
    let line = wait_for_log_line(&server, "Got an error reading communication packets");
    assert!(
        line.contains(" to db: 'gone' user: 'root' host: 'localhost' ("),
        "{line}"
    );
}

#[test]
fn general_and_slow_query_logs_are_written_in_mariadbs_formats() {
    let dir = tempfile::tempdir().unwrap();
    let logs = tempfile::tempdir().unwrap();
    let general = logs.path().join("general.log");
    let slow = logs.path().join("slow.log");
    let server = Onelog::start(
        dir.path(),
        &[
            "--general-log",
            &format!("--general-log-file={}", general.display()),
            "--slow-query-log=ON",
            &format!("--slow-query-log-file={}", slow.display()),
            "--long-query-time=0.5",
        ],
    );
    let port = server.port;
    sql(port, "CREATE DATABASE lg");
    let out = run_bounded(
        common::mariadb_cmd(port)
            .args(["-N", "-B", "lg"])
            .arg("-e")
            .arg("SELECT SLEEP(0.6) AS s, 2 AS two; USE lg; SELECT 3"),
        None,
        CLI_TIMEOUT,
    );
    assert!(out.status.success(), "{out:?}");
    assert!(status(port, "Slow_queries") >= 1);

    let text = std::fs::read_to_string(&general).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].contains(", Version: 10.11."), "{text}");
    assert_eq!(
        lines[1],
        format!("Tcp port: 0  Unix socket: {}", server.socket.display())
    );
    assert_eq!(lines[2], "Time\t\t    Id Command\tArgument");
    let has = |cmd: &str, arg: &str| {
        lines
            .iter()
            .any(|l| l.ends_with(&format!(" {cmd}\t{arg}")) && l.contains('\t'))
    };
    assert!(has("Connect", "root@localhost on  using TCP/IP"), "{text}");
    assert!(has("Query", "CREATE DATABASE lg"), "{text}");
    assert!(
        has("Connect", "root@localhost on lg using TCP/IP"),
        "{text}"
    );
    assert!(has("Query", "SELECT SLEEP(0.6) AS s, 2 AS two"), "{text}");
    assert!(has("Init DB", "lg"), "{text}");
    assert!(has("Query", "SELECT 3"), "{text}");
    assert!(has("Quit", ""), "{text}");
    // FLUSH LOGS reopens the file (a rotated-away log is created again, with its header).
    std::fs::rename(&general, logs.path().join("general.old")).unwrap();
    sql(port, "FLUSH LOGS");
    let text = std::fs::read_to_string(&general).unwrap();
    assert!(
        text.lines().nth(2) == Some("Time\t\t    Id Command\tArgument"),
        "{text}"
    );
    // sql_log_off keeps a session out of it.
    sql(port, "SET sql_log_off=1; SELECT 'hidden'");
    let text = std::fs::read_to_string(&general).unwrap();
    assert!(!text.contains("hidden"), "{text}");

    let text = std::fs::read_to_string(&slow).unwrap();
    let at = text
        .find("# User@Host: root[root] @ localhost [127.0.0.1]\n")
        .unwrap_or_else(|| panic!("{text}"));
    let entry = &text[at..];
    let lines: Vec<&str> = entry.lines().collect();
    assert!(lines[1].starts_with("# Thread_id: "), "{entry}");
    assert!(lines[1].ends_with("  Schema: lg  QC_hit: No"), "{entry}");
    assert!(lines[2].starts_with("# Query_time: 0.") || lines[2].starts_with("# Query_time: "));
    assert!(
        lines[2].contains("  Lock_time: 0.000000  Rows_sent: 1  Rows_examined: 0"),
        "{entry}"
    );
    assert!(
        lines[3].starts_with("# Rows_affected: 0  Bytes_sent: "),
        "{entry}"
    );
    assert_eq!(lines[4], "use `lg`;");
    assert!(lines[5].starts_with("SET timestamp="), "{entry}");
    assert_eq!(lines[6], "SELECT SLEEP(0.6) AS s, 2 AS two;");
    // The same header as the general log's.
    let general_text = std::fs::read_to_string(&general).unwrap();
    assert!(text.starts_with(general_text.lines().next().unwrap()));
}

/// A log's lines with MariaDB's varying parts masked: the general log's time column (a line
/// then starts with two tabs, as within one second), the slow log's `# Time:` lines (dropped),
/// `Query_time`, `Thread_id` and `SET timestamp`.
fn masked_log(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.starts_with("# Time: "))
        .map(|l| {
            let l = match l.split_once('\t') {
                Some((t, rest)) if t.len() == 15 && t.as_bytes()[6] == b' ' => {
                    format!("\t\t{rest}")
                }
                _ => l.to_string(),
            };
            if let Some(rest) = l.strip_prefix("# Query_time: ") {
                let lock = rest.find("  Lock_time").unwrap_or(0);
                return format!("# Query_time: Q{}", &rest[lock..]);
            }
            if let Some(rest) = l.strip_prefix("# Thread_id: ") {
                let schema = rest.find("  Schema").unwrap_or(0);
                return format!("# Thread_id: N{}", &rest[schema..]);
            }
            if l.starts_with("SET timestamp=") {
                return "SET timestamp=T;".to_string();
            }
            l
        })
        .collect()
}

/// The slow log's entries (from each `# User@Host:` line), masked as [`masked_log`] and
/// without their `use db;` lines.
fn slow_entries(text: &str) -> Vec<String> {
    let mut entries: Vec<String> = Vec::new();
    for l in masked_log(text) {
        if l.starts_with("# User@Host: ") {
            entries.push(String::new());
        }
        if let Some(e) = entries.last_mut() {
            if !l.starts_with("use `") {
                e.push_str(&l);
                e.push('\n');
            }
        }
    }
    entries
}

/// The slow log entry of `sql` as MariaDB 10.11 writes it (times masked).
/// `counts`: rows sent, rows examined, rows affected, bytes sent.
fn slow_entry(host: &str, counts: [u64; 4], sql: &str) -> String {
    let [sent, examined, affected, bytes] = counts;
    format!(
        "# User@Host: root[root] @ {host}\n# Thread_id: N  Schema: lg  QC_hit: No\n\
         # Query_time: Q  Lock_time: 0.000000  Rows_sent: {sent}  Rows_examined: {examined}\n\
         # Rows_affected: {affected}  Bytes_sent: {bytes}\nSET timestamp=T;\n{sql};\n"
    )
}

/// The general log and the slow log as MariaDB 10.11 writes them for the same statements
/// (measured side by side with the same clients, times masked): a multi-statement COM_QUERY
/// is one `Query` line and one slow entry per statement; a prepared statement's `Prepare`,
/// `Execute` (parameters written in) and `Close stmt` lines and its slow entry; `Change user`;
/// `Rows_examined` of scans and index lookups; the statements `log_queries_not_using_indexes`,
/// `min_examined_row_limit` and `log_slow_admin_statements` select.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn query_logs_write_each_statement_and_prepared_executions_as_mariadb() {
    use mysql_async::prelude::*;
    let dir = tempfile::tempdir().unwrap();
    let logs = tempfile::tempdir().unwrap();
    let general = logs.path().join("general.log");
    let slow = logs.path().join("slow.log");
    let server = Onelog::start(
        dir.path(),
        &[
            "--general-log",
            &format!("--general-log-file={}", general.display()),
            "--slow-query-log=ON",
            &format!("--slow-query-log-file={}", slow.display()),
            "--long-query-time=0",
        ],
    );
    let port = server.port;
    sql(
        port,
        "CREATE DATABASE lg; CREATE TABLE lg.t (id INT PRIMARY KEY, k INT, v VARCHAR(10), KEY(k)); \
         INSERT INTO lg.t VALUES (1,10,'a'),(2,20,'b'),(3,30,'c'),(4,40,'d'),(5,50,'e'); \
         CREATE USER u@localhost IDENTIFIED BY 'pw'; GRANT ALL ON *.* TO u@localhost",
    );
    // One COM_QUERY holding four statements (the CLI sends what lies between delimiters).
    let multi = "SELECT 1;  SELECT 2 ; \n UPDATE t SET k=k+1 WHERE id=1;SELECT * FROM t WHERE id=1";
    let out = run_bounded(
        common::mariadb_cmd(port).args(["-N", "-B", "lg"]),
        Some(&format!("delimiter //\n{multi} //\n")),
        CLI_TIMEOUT,
    );
    assert!(out.status.success(), "{out:?}");
    // Prepared statements and COM_CHANGE_USER through a driver.
    let opts = mysql_async::OptsBuilder::default()
        .ip_or_hostname("127.0.0.1")
        .tcp_port(port)
        .user(Some("root"))
        .db_name(Some("lg"))
        .prefer_socket(false);
    let mut conn = mysql_async::Conn::new(opts).await.unwrap();
    let id = conn.id();
    let stmt = conn
        .prep("SELECT id, ? AS s, ? AS n FROM t WHERE id = ? /* ? */ AND v <> '?'")
        .await
        .unwrap();
    let text = mysql_async::Value::Bytes(b"it's \\ \"x\"\n".to_vec());
    let rows: Vec<mysql_async::Row> = conn
        .exec(&stmt, (text, mysql_async::Value::NULL, 2))
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
    conn.close(stmt).await.unwrap();
    conn.change_user(
        mysql_async::ChangeUserOpts::new()
            .with_user(Some("u".into()))
            .with_pass(Some("pw".into()))
            .with_db_name(Some("lg".into())),
    )
    .await
    .unwrap();
    conn.query_drop("SELECT CURRENT_USER()").await.unwrap();
    conn.disconnect().await.unwrap();
    // Which statements the slow log settings select (one statement per COM_QUERY).
    let out = run_bounded(
        common::mariadb_cmd(port).args(["-N", "-B", "lg"]),
        Some(
            "SET long_query_time=10; SET log_queries_not_using_indexes=ON;\n\
             SELECT * FROM t WHERE id=2; SELECT * FROM t WHERE v='a';\n\
             SET min_examined_row_limit=6; SELECT * FROM t WHERE v='b';\n\
             SET log_queries_not_using_indexes=OFF; SET long_query_time=0;\n\
             SELECT 'few'; SET min_examined_row_limit=0; SET log_slow_admin_statements=OFF;\n\
             CREATE INDEX iv ON t(v); SET log_slow_admin_statements=ON; DROP INDEX iv ON t;\n",
        ),
        CLI_TIMEOUT,
    );
    assert!(out.status.success(), "{out:?}");

    let general_text = std::fs::read_to_string(&general).unwrap();
    let lines = masked_log(&general_text);
    // The multi-statement query is one line (its text spans two lines of the file).
    let start = lines
        .iter()
        .position(|l| l.ends_with(" Query\tSELECT 1;  SELECT 2 ; "))
        .unwrap_or_else(|| panic!("{general_text}"));
    assert_eq!(
        lines[start + 1],
        " UPDATE t SET k=k+1 WHERE id=1;SELECT * FROM t WHERE id=1"
    );
    let mine: Vec<&str> = lines
        .iter()
        .filter_map(|l| l.strip_prefix(&format!("\t\t{id:6} ")))
        .filter(|l| !l.starts_with("Query\tSELECT @@") && !l.starts_with("Query\tSET "))
        .collect();
    assert_eq!(
        mine,
        [
            "Connect\troot@localhost on lg using TCP/IP",
            "Prepare\tSELECT id, ? AS s, ? AS n FROM t WHERE id = ? /* ? */ AND v <> '?'",
            "Execute\tSELECT id, 'it\\'s \\\\ \\\"x\\\"\\n' AS s, NULL AS n FROM t WHERE id = 2 /* ? */ AND v <> '?'",
            "Close stmt\t",
            "Change user\tu@localhost on lg using TCP/IP",
            "Query\tSELECT CURRENT_USER()",
            "Quit\t",
        ],
        "{general_text}"
    );

    let slow_text = std::fs::read_to_string(&slow).unwrap();
    let entries = slow_entries(&slow_text);
    let tcp = "localhost [127.0.0.1]";
    // Bytes_sent: onelog's answers (MariaDB's own client gets one byte more per column and
    // per result set from MariaDB: extended metadata, which onelog does not offer).
    for want in [
        slow_entry(tcp, [1, 0, 0, 56], "SELECT 1"),
        slow_entry(tcp, [1, 0, 0, 56], "SELECT 2 "),
        slow_entry(tcp, [0, 1, 1, 52], "UPDATE t SET k=k+1 WHERE id=1"),
        slow_entry(tcp, [1, 1, 0, 132], "SELECT * FROM t WHERE id=1"),
        slow_entry(
            tcp,
            [1, 1, 0, 0],
            "SELECT id, 'it\\'s \\\\ \\\"x\\\"\\n' AS s, NULL AS n FROM t WHERE id = 2 /* ? */ AND v <> '?'",
        ),
        slow_entry(tcp, [1, 5, 0, 132], "SELECT * FROM t WHERE v='a'"),
        slow_entry(tcp, [0, 0, 0, 11], "SET min_examined_row_limit=0"),
    ] {
        assert!(
            entries.contains(&want),
            "missing:\n{want}\nin:\n{}",
            entries.join("")
        );
    }
    let logged = |sql: &str| entries.iter().any(|e| e.ends_with(&format!("\n{sql};\n")));
    // Under long_query_time without a full scan, fewer rows examined than
    // min_examined_row_limit, an administrative statement while log_slow_admin_statements is
    // OFF.
    for absent in [
        "SET long_query_time=10",
        "SELECT * FROM t WHERE id=2",
        "SELECT * FROM t WHERE v='b'",
        "SET long_query_time=0",
        "SELECT 'few'",
        "CREATE INDEX iv ON t(v)",
    ] {
        assert!(!logged(absent), "{absent} logged:\n{slow_text}");
    }
    // Administrative again once log_slow_admin_statements is ON.
    assert!(logged("DROP INDEX iv ON t"), "{slow_text}");
    assert!(slow_text.contains("\nuse `lg`;\n"), "{slow_text}");
}

/// Polls `SHOW GLOBAL STATUS` until `name` reaches `at_least` (60 s at most).
fn wait_for_status(port: u16, name: &str, at_least: u64) -> u64 {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let v = status(port, name);
        if v >= at_least {
            return v;
        }
        assert!(Instant::now() < deadline, "{name} stayed at {v}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn the_paged_stores_cache_is_innodb_buffer_pool_size_and_its_reads_are_counted() {
    let dir = tempfile::tempdir().unwrap();
    let paged = [
        "--table-store=paged",
        "--innodb-buffer-pool-size=64M",
        "--checkpoint-interval=1",
    ];
    let mut server = Onelog::start(dir.path(), &paged);
    let port = server.port;
    assert_eq!(
        sql_value(port, "SELECT @@innodb_buffer_pool_size"),
        "67108864"
    );
    assert_eq!(
        sql_value(port, "SHOW GLOBAL VARIABLES LIKE 'innodb_buffer_pool_size'"),
        "innodb_buffer_pool_size\t67108864"
    );
    // The block cache has a fixed size: SET is refused, not accepted and ignored.
    let err = sql_err(
        port,
        "SET GLOBAL innodb_buffer_pool_size = 128 * 1024 * 1024",
    );
    assert!(err.contains("ERROR 1238"), "{err}");
    let values: Vec<String> = (1..=5000)
        .map(|i| format!("({i}, REPEAT('x', 90))"))
        .collect();
    sql(
        port,
        &format!(
            "CREATE DATABASE d; CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(100)); \
             INSERT INTO d.t VALUES {}",
            values.join(",")
        ),
    );
    // The background checkpoint writes the rows into the store.
    wait_for_status(port, "Innodb_data_written", 5000 * 90);
    assert!(status(port, "Onelog_table_store_checkpoints") >= 1);
    assert!(status(port, "Onelog_table_store_disk_bytes") > 0);
    server.stop();
    // Restarted, the cache is cold: a full scan reads blocks from the store's files.
    let server = Onelog::start(dir.path(), &paged);
    let port = server.port;
    let before = (
        status(port, "Innodb_buffer_pool_read_requests"),
        status(port, "Innodb_buffer_pool_reads"),
    );
    assert_eq!(
        sql_value(port, "SELECT COUNT(*), SUM(LENGTH(v)) FROM d.t"),
        "5000\t450000"
    );
    let requests = status(port, "Innodb_buffer_pool_read_requests") - before.0;
    let reads = status(port, "Innodb_buffer_pool_reads") - before.1;
    assert!(
        reads > 0 && requests >= reads,
        "{requests} requests, {reads} reads"
    );
    assert_eq!(
        status(port, "Innodb_data_reads"),
        status(port, "Innodb_buffer_pool_reads")
    );
    assert!(status(port, "Innodb_data_read") > 0);
    assert!(status(port, "Innodb_buffer_pool_bytes_data") > 0);
    // A point read of a row no scan has kept: the first decodes it and keeps it in the row
    // cache, the second is answered from there.
    let (hits, misses) = (
        status(port, "Onelog_table_store_row_cache_hits"),
        status(port, "Onelog_table_store_row_cache_misses"),
    );
    let point = "SELECT LENGTH(v) FROM d.t WHERE id = 4321";
    assert_eq!(sql_value(port, point), "90");
    assert_eq!(status(port, "Onelog_table_store_row_cache_hits"), hits);
    assert_eq!(
        status(port, "Onelog_table_store_row_cache_misses"),
        misses + 1
    );
    assert_eq!(sql_value(port, point), "90");
    assert_eq!(status(port, "Onelog_table_store_row_cache_hits"), hits + 1);
    // The same scan again reads no block from the store's files: the rows the first kept in
    // runs (its first 4,096) are answered by the row cache, the rest by the block cache.
    let reads = status(port, "Innodb_buffer_pool_reads");
    let (hits, misses) = (
        status(port, "Onelog_table_store_row_cache_hits"),
        status(port, "Onelog_table_store_row_cache_misses"),
    );
    sql(port, "SELECT COUNT(*), SUM(LENGTH(v)) FROM d.t");
    assert_eq!(status(port, "Innodb_buffer_pool_reads"), reads);
    assert!(status(port, "Onelog_table_store_row_cache_hits") >= hits + 64);
    assert!(status(port, "Onelog_table_store_row_cache_misses") > misses);
    // Commits wait at twice the distance between checkpoints: at most 64M/20 of log raised to
    // the 4 MiB floor, as low as 2 MiB once checkpoints measured what a log byte costs.
    let limit = status(port, "Onelog_table_store_delta_limit_bytes");
    assert!((2 << 20..=8 << 20).contains(&limit), "{limit}");
    let bytes = status(port, "Onelog_table_store_row_cache_bytes");
    assert!(bytes > 0 && bytes <= status(port, "Onelog_table_store_row_cache_capacity"));
}

#[test]
fn the_in_memory_store_has_no_buffer_pool_variable_or_counters() {
    let dir = tempfile::tempdir().unwrap();
    let server = Onelog::start(dir.path(), &["--table-store=memory"]);
    let port = server.port;
    let err = sql_err(port, "SELECT @@innodb_buffer_pool_size");
    assert!(err.contains("ERROR 1193"), "{err}");
    let err = sql_err(port, "SET GLOBAL innodb_buffer_pool_size = 1 << 30");
    assert!(err.contains("ERROR 1193"), "{err}");
    assert_eq!(sql(port, "SHOW GLOBAL VARIABLES LIKE 'innodb_buffer%'"), "");
    assert_eq!(
        sql(
            port,
            "SELECT COUNT(*) FROM information_schema.SYSTEM_VARIABLES \
             WHERE VARIABLE_NAME = 'INNODB_BUFFER_POOL_SIZE'"
        ),
        "0\n"
    );
    assert_eq!(sql(port, "SHOW GLOBAL STATUS LIKE 'Innodb%'"), "");
    assert_eq!(
        sql(port, "SHOW GLOBAL STATUS LIKE 'Onelog_table_store%'"),
        ""
    );
}
