//! Shared harness of the integration tests: the real `onelog` binary on a temporary data
//! directory, and the real client programs, every wait bounded in time.
//!
//! [`Onelog`] starts `onelog serve --port=0` (the kernel picks a free loopback port; the test
//! reads it from the ready banner, so there is no pick-then-bind race) with
//! `--auth-root-authentication-method=normal` (root logs in over TCP without a password on
//! the test's fresh data directory; the server's default is a unix_socket-only root), collects its stderr
//! lines, and kills it with SIGKILL on drop so a failing test never leaks a server.
//! [`run_bounded`] runs a client program with a deadline (killed and reported on expiry).
//! A missing client program is a test failure that says to run `scripts/test.sh`, never a skip.

#![allow(dead_code)] // each test binary uses a different part of the harness

pub mod differ;
pub mod mariadb;
pub mod python;
pub mod raw;
pub mod replica;
pub mod tmpfs;

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a server may take to print its ready banner (a debug build recovering a log).
pub const START_TIMEOUT: Duration = Duration::from_secs(120);
/// Log segment size for test servers (later options override it). Segments are preallocated
/// and zero-filled, and the default 1G would cost seconds and gigabytes per server start.
pub const TEST_SEGMENT_SIZE: &str = "--max-binlog-size=8M";
/// How the first `root@localhost` logs in (`socket`, the server's default, or `normal`: no
/// password, what the harness passes unless a test gives this option itself).
pub const ROOT_AUTH_OPTION: &str = "--auth-root-authentication-method";
/// How long a clean shutdown may take.
pub const STOP_TIMEOUT: Duration = Duration::from_secs(60);

pub fn onelog_bin() -> &'static str {
    env!("CARGO_BIN_EXE_onelog")
}

/// Fails the test (with what to do) when a client program is not installed.
pub fn require_tool(name: &str) {
    let found = std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).any(|d| d.join(name).is_file()))
        .unwrap_or(false);
    assert!(
        found,
        "`{name}` is not installed: run scripts/test.sh (it installs sysbench and \
         mariadb-client on Debian), or `apt-get install -y sysbench mariadb-client`"
    );
}

/// A running `onelog serve`.
pub struct Onelog {
    child: Option<Child>,
    pub port: u16,
    pub datadir: PathBuf,
    pub socket: PathBuf,
    log: Arc<Mutex<Vec<String>>>,
    lines: Receiver<String>,
}

/// A server that exited (or hung) before its ready banner.
#[derive(Debug)]
pub struct StartFailure {
    pub status: Option<ExitStatus>,
    pub log: String,
}

impl Onelog {
    /// Starts a server on `datadir` with `--port=0` and `extra` options; panics if it is not
    /// ready within [`START_TIMEOUT`].
    pub fn start(datadir: &Path, extra: &[&str]) -> Onelog {
        let mut args = vec!["--port=0".to_string()];
        args.extend(extra.iter().map(|s| s.to_string()));
        match Self::try_start_args(datadir, &args) {
            Ok(s) => s,
            Err(f) => panic!(
                "onelog did not start (status {:?}); its log:\n{}",
                f.status, f.log
            ),
        }
    }

    /// Starts `onelog serve [--defaults-file] --datadir=DIR --max-binlog-size=8M ARGS...` (no
    /// implicit port) and waits for the banner or the process's exit.
    pub fn try_start_args(datadir: &Path, args: &[String]) -> Result<Onelog, StartFailure> {
        let mut cmd = Command::new(onelog_bin());
        cmd.arg("serve");
        // --defaults-file must stay first.
        let (first, rest): (Vec<&String>, Vec<&String>) =
            args.iter().partition(|a| a.starts_with("--defaults-file="));
        cmd.args(first);
        cmd.arg(format!("--datadir={}", datadir.display()));
        cmd.arg(TEST_SEGMENT_SIZE);
        // Test servers are reached over TCP as root without a password (like mariadb-test-run's
        // servers), which the default unix_socket-only root refuses: ask for it explicitly,
        // unless the test chose the root authentication itself.
        if !args.iter().any(|a| a.starts_with(ROOT_AUTH_OPTION)) {
            cmd.arg(format!("{ROOT_AUTH_OPTION}=normal"));
        }
        if let Some(store) = test_table_store() {
            if !args.iter().any(|a| a.starts_with("--table-store")) {
                cmd.arg(format!("--table-store={store}"));
            }
        }
        cmd.args(rest);
        Self::spawn(cmd, datadir)
    }

    fn spawn(mut cmd: Command, datadir: &Path) -> Result<Onelog, StartFailure> {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawning the onelog binary");
        let (log, rx) = capture_stderr(&mut child);
        let mut server = Onelog {
            child: Some(child),
            port: 0,
            datadir: datadir.to_path_buf(),
            socket: PathBuf::new(),
            log,
            lines: rx,
        };
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match server.lines.recv_timeout(left) {
                Ok(line) => {
                    if let Some((socket, port)) = parse_banner(&line) {
                        server.port = port;
                        server.socket = PathBuf::from(socket);
                        return Ok(server);
                    }
                }
                Err(RecvTimeoutError::Disconnected) => {
                    let status = server.wait_exit(STOP_TIMEOUT);
                    return Err(StartFailure {
                        status: Some(status),
                        log: server.log_text(),
                    });
                }
                Err(RecvTimeoutError::Timeout) => {
                    server.kill9();
                    return Err(StartFailure {
                        status: None,
                        log: server.log_text(),
                    });
                }
            }
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, |c| c.id())
    }

    /// Everything the server wrote to stderr so far.
    pub fn log_text(&self) -> String {
        self.log.lock().unwrap().join("\n")
    }

    /// Sends SIGTERM.
    pub fn sigterm(&self) {
        let pid = self.pid() as libc::pid_t;
        // SAFETY: plain kill(2) on our own child's pid (still a zombie at worst until waited).
        let rc = unsafe { libc::kill(pid, libc::SIGTERM) };
        assert_eq!(rc, 0, "kill -TERM {pid}");
    }

    /// SIGKILL and reap: the process is gone when this returns.
    pub fn kill9(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Waits for the process to exit; panics (after killing it) past `timeout`.
    pub fn wait_exit(&mut self, timeout: Duration) -> ExitStatus {
        let Some(child) = self.child.as_mut() else {
            panic!("server already reaped");
        };
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = child.try_wait().expect("waiting for onelog") {
                self.child = None;
                return status;
            }
            if Instant::now() >= deadline {
                self.kill9();
                panic!(
                    "onelog did not exit within {timeout:?}; its log:\n{}",
                    self.log_text()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGTERM, then wait for the exit; returns the status.
    pub fn stop(&mut self) -> ExitStatus {
        self.sigterm();
        self.wait_exit(STOP_TIMEOUT)
    }
}

impl Drop for Onelog {
    fn drop(&mut self) {
        self.kill9();
    }
}

/// `Version: '...'  socket: '/x.sock'  port: 1234` → (socket, port).
/// A server's stderr, line by line: every line kept in the returned log (for failure
/// messages) and sent to the receiver (to wait for a banner with a timeout).
pub fn capture_stderr(child: &mut Child) -> (Arc<Mutex<Vec<String>>>, Receiver<String>) {
    let stderr = child.stderr.take().expect("piped stderr");
    let log = Arc::new(Mutex::new(Vec::new()));
    let (tx, rx) = mpsc::channel();
    let log2 = log.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            log2.lock().unwrap().push(line.clone());
            let _ = tx.send(line);
        }
    });
    (log, rx)
}

pub fn parse_banner(line: &str) -> Option<(String, u16)> {
    let rest = line.strip_prefix("Version: '")?;
    let (_, rest) = rest.split_once("socket: '")?;
    let (socket, rest) = rest.split_once('\'')?;
    let port = rest.trim().strip_prefix("port:")?.trim().parse().ok()?;
    Some((socket.to_string(), port))
}

/// Runs `cmd` (stdin from `input` if given) and returns its output; kills it and panics past
/// `timeout`.
pub fn run_bounded(cmd: &mut Command, input: Option<&str>, timeout: Duration) -> Output {
    run_bounded_bytes(cmd, input.map(str::as_bytes), timeout)
}

/// [`run_bounded`] with stdin bytes that need not be UTF-8 (a dump with binary data).
pub fn run_bounded_bytes(cmd: &mut Command, input: Option<&[u8]>, timeout: Duration) -> Output {
    let what = format!("{cmd:?}");
    let mut child = cmd
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawning {what}: {e}"));
    if let Some(text) = input {
        let mut stdin = child.stdin.take().expect("piped stdin");
        let text = text.to_vec();
        std::thread::spawn(move || {
            use std::io::Write;
            let _ = stdin.write_all(&text);
        });
    }
    let out_reader = reader_thread(child.stdout.take().expect("piped stdout"));
    let err_reader = reader_thread(child.stderr.take().expect("piped stderr"));
    let deadline = Instant::now() + timeout;
    let status = loop {
        if let Some(s) = child.try_wait().expect("waiting for a client") {
            break s;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            let out = out_reader.join().unwrap_or_default();
            let err = err_reader.join().unwrap_or_default();
            panic!(
                "{what} did not finish within {timeout:?}\nstdout:\n{}\nstderr:\n{}",
                String::from_utf8_lossy(&out),
                String::from_utf8_lossy(&err)
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Output {
        status,
        stdout: out_reader.join().unwrap_or_default(),
        stderr: err_reader.join().unwrap_or_default(),
    }
}

fn reader_thread(mut r: impl Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = r.read_to_end(&mut buf);
        buf
    })
}

/// The `mariadb` CLI connected to the server over TCP as root.
pub fn mariadb_cmd(port: u16) -> Command {
    require_tool("mariadb");
    let mut cmd = Command::new("mariadb");
    cmd.args([
        "--no-defaults",
        "--protocol=TCP",
        "-h127.0.0.1",
        &format!("-P{port}"),
        "-uroot",
    ]);
    cmd
}

/// Runs `sql` with `mariadb -N -B -e`, asserts success, returns stdout.
pub fn sql(port: u16, sql: &str) -> String {
    let out = run_bounded(
        mariadb_cmd(port).args(["-N", "-B", "-e", sql]),
        None,
        Duration::from_secs(120),
    );
    assert!(
        out.status.success(),
        "mariadb -e {sql:?} failed ({}):\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 output")
}

/// Runs `sql` with `mariadb -e`, asserts that it fails, returns stderr (the error line).
pub fn sql_err(port: u16, sql: &str) -> String {
    let out = run_bounded(
        mariadb_cmd(port).args(["-N", "-B", "-e", sql]),
        None,
        Duration::from_secs(120),
    );
    assert!(!out.status.success(), "mariadb -e {sql:?} succeeded");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A single value from `sql`.
pub fn sql_value(port: u16, query: &str) -> String {
    sql(port, query).trim_end_matches('\n').to_string()
}

/// `SHOW GLOBAL STATUS LIKE 'name'` as a number.
pub fn status(port: u16, name: &str) -> u64 {
    let out = sql(port, &format!("SHOW GLOBAL STATUS LIKE '{name}'"));
    let value = out
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{name}\t")))
        .unwrap_or_else(|| panic!("no status variable {name} in:\n{out}"));
    value
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("{name} is not a number: {value:?}"))
}

/// `sysbench oltp_write_only COMMAND` as root on database `sb`: 4 threads, 2 tables of
/// `table_size` rows, `seconds` of load (`run`), a fixed seed.
pub fn sysbench_write_only(port: u16, command: &str, seconds: u64, table_size: u32) -> Command {
    require_tool("sysbench");
    let mut cmd = Command::new("sysbench");
    cmd.arg("oltp_write_only").args([
        "--db-driver=mysql",
        "--mysql-host=127.0.0.1",
        &format!("--mysql-port={port}"),
        "--mysql-user=root",
        "--mysql-db=sb",
        "--threads=4",
        "--tables=2",
        &format!("--table-size={table_size}"),
        &format!("--time={seconds}"),
        "--events=0",
        "--rand-seed=11",
        command,
    ]);
    cmd
}

/// Runs `sysbench WORKLOAD COMMAND` (1 table of 1000 rows, `events` transactions, seeded) and
/// returns its stdout; fails on a non-zero exit or a FATAL line.
pub fn sysbench(
    workload: &str,
    command: &str,
    port: u16,
    db: &str,
    threads: u32,
    events: u64,
) -> String {
    require_tool("sysbench");
    let mut cmd = Command::new("sysbench");
    cmd.arg(workload).args([
        "--db-driver=mysql",
        "--mysql-host=127.0.0.1",
        &format!("--mysql-port={port}"),
        "--mysql-user=root",
        &format!("--mysql-db={db}"),
        &format!("--threads={threads}"),
        "--tables=1",
        "--table-size=1000",
        "--time=0",
        &format!("--events={events}"),
        "--rand-seed=7",
        command,
    ]);
    let out = run_bounded(&mut cmd, None, Duration::from_secs(300));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success() && !stdout.contains("FATAL") && !stderr.contains("FATAL"),
        "sysbench {workload} {command} failed: {}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    stdout
}

/// The table store of the servers of tests that do not choose one: `ONELOG_TEST_TABLE_STORE`
/// (`scripts/test.sh` runs this crate's tests a second time with it set to `paged`), or None
/// (the server's default).
pub fn test_table_store() -> Option<String> {
    std::env::var("ONELOG_TEST_TABLE_STORE")
        .ok()
        .filter(|s| !s.is_empty())
}

/// A `kB` field of `/proc/<pid>/status` (`VmHWM:`, the peak resident size; `VmRSS:`).
pub fn proc_kb(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/{pid}/status"))
}

/// The names listed in `<dir>/<basename>.index` (MariaDB writes `./binlog.000001`), oldest
/// first, as plain file names.
pub fn classic_index(dir: &Path, basename: &str) -> Vec<String> {
    let index = dir.join(format!("{basename}.index"));
    let text = std::fs::read_to_string(&index)
        .unwrap_or_else(|e| panic!("reading {}: {e}", index.display()));
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|l| {
            Path::new(l)
                .file_name()
                .unwrap_or_else(|| panic!("bad line {l:?} in {}", index.display()))
                .to_string_lossy()
                .into_owned()
        })
        .collect()
}

/// The GTIDs of every event group in classic binlog files, in file order. Decoded here, with
/// the binlog crate's event splitter (independent of the log crate's classic reader): every
/// event's length and CRC32 are checked, the file must start with the binlog magic and a
/// Format_description event. As in MariaDB, the Format_description's CRC is computed with the
/// "binlog in use" flag (0x01 in the header flags, byte 17) cleared: the flag is set while the
/// file is open and cleared in place at close.
pub fn classic_gtids(files: &[PathBuf]) -> Vec<onelog_binlog::Gtid> {
    use onelog_binlog::event::{split_events, Event};
    let mut out = Vec::new();
    for path in files {
        let data =
            std::fs::read(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
        assert!(
            data.starts_with(b"\xfebin") && data.len() >= 4 + 19,
            "{} does not start with the binlog magic and an event header",
            path.display()
        );
        let fde_len = u32::from_le_bytes(data[13..17].try_into().unwrap()) as usize;
        assert!(
            data[4 + 4] == 15 && data.len() >= 4 + fde_len,
            "{}: no Format_description event at offset 4",
            path.display()
        );
        let mut fde = data[4..4 + fde_len].to_vec();
        fde[17] &= !1;
        onelog_binlog::decode_event_with_header(&fde)
            .unwrap_or_else(|e| panic!("{}: bad Format_description: {e:?}", path.display()));
        for item in split_events(&data[4 + fde_len..]) {
            let (_, bytes) =
                item.unwrap_or_else(|e| panic!("{}: bad event: {e:?}", path.display()));
            let (_, event, _) = onelog_binlog::decode_event_with_header(bytes)
                .unwrap_or_else(|e| panic!("{}: undecodable event: {e:?}", path.display()));
            if let Event::Gtid(g) = event {
                out.push(g.gtid);
            }
        }
    }
    out
}

/// The classic binlog files a datadir's `binlog.index` lists, as paths.
pub fn classic_files(dir: &Path) -> Vec<PathBuf> {
    classic_index(dir, "binlog")
        .into_iter()
        .map(|n| dir.join(n))
        .collect()
}

/// The GTID history `@@gtid_binlog_pos` implies for a single-domain, single-server log that
/// was never reset: `D-S-1 ..= D-S-N` (empty position: none).
pub fn gtid_history(pos: &str) -> Vec<onelog_binlog::Gtid> {
    let pos = pos.trim();
    if pos.is_empty() {
        return Vec::new();
    }
    assert!(
        !pos.contains(','),
        "expected a single-domain gtid_binlog_pos, got {pos:?}"
    );
    let last: onelog_binlog::Gtid = pos
        .parse()
        .unwrap_or_else(|_| panic!("bad gtid_binlog_pos {pos:?}"));
    (1..=last.seq_no)
        .map(|s| onelog_binlog::Gtid::new(last.domain_id, last.server_id, s))
        .collect()
}
