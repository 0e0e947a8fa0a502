//! A real MariaDB 10.11 server (Debian's `mariadbd`) on a temporary data directory, for the
//! tests that compare with it or use it as onelog's peer (a replica, or the target of
//! `mariadb-binlog | mariadb`).
//!
//! [`MariaDb::start`] runs `mariadb-install-db` once and starts the server reachable only
//! through its unix socket (`--skip-networking`: as a replica it still connects out over
//! TCP), without a binlog, with small InnoDB buffers. The server can be stopped, killed with
//! SIGKILL and started again on the same data directory; it is killed when dropped. Every wait
//! is bounded. A missing program is a failure pointing at `scripts/test.sh`, never a skip.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::{capture_stderr, run_bounded};

/// How long `mariadb-install-db` or a server start may take.
pub const MARIADB_START_TIMEOUT: Duration = Duration::from_secs(120);
/// How long one client call may take.
pub const MARIADB_CLIENT_TIMEOUT: Duration = Duration::from_secs(120);

/// Finds a program in PATH or the sbin directories (mariadbd lives in /usr/sbin).
pub fn find_program(name: &str) -> PathBuf {
    let mut dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    dirs.extend(["/usr/sbin", "/usr/local/sbin", "/sbin"].map(PathBuf::from));
    dirs.into_iter()
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!(
                "`{name}` is not installed: this test needs MariaDB 10.11's server and client \
                 (Debian packages mariadb-server and mariadb-client). Run scripts/test.sh, which \
                 installs them, or `apt-get install -y mariadb-server mariadb-client`"
            )
        })
}

fn running_as_root() -> bool {
    // SAFETY: getuid(2) has no preconditions.
    unsafe { libc::getuid() == 0 }
}

/// A MariaDB server on a temporary datadir, reachable only through its unix socket.
pub struct MariaDb {
    child: Option<Child>,
    dir: PathBuf,
    pub socket: PathBuf,
    extra: Vec<String>,
    log: Arc<Mutex<Vec<String>>>,
}

impl MariaDb {
    /// Installs a data directory under `dir` and starts the server (see the module docs).
    pub fn start(dir: &Path) -> MariaDb {
        Self::start_with(dir, &[])
    }

    /// As [`MariaDb::start`], with `extra` server options (e.g. `--server-id=2`), which also
    /// apply to every [`MariaDb::restart`].
    pub fn start_with(dir: &Path, extra: &[&str]) -> MariaDb {
        let datadir = dir.join("data");
        // A private tmpdir: bootstraps running side by side must not share /tmp's
        // `#sql-temptable-*` files.
        let tmpdir = dir.join("tmp");
        std::fs::create_dir_all(&tmpdir).expect("creating the MariaDB tmpdir");
        let mut install = Command::new(find_program("mariadb-install-db"));
        install.args([
            "--no-defaults".to_string(),
            format!("--datadir={}", datadir.display()),
            format!("--tmpdir={}", tmpdir.display()),
            "--auth-root-authentication-method=normal".to_string(),
            "--skip-test-db".to_string(),
        ]);
        if running_as_root() {
            install.arg("--user=root");
        }
        let out = run_bounded(&mut install, None, MARIADB_START_TIMEOUT);
        assert!(
            out.status.success(),
            "mariadb-install-db failed ({}):\n{}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let mut server = MariaDb {
            child: None,
            dir: dir.to_path_buf(),
            socket: dir.join("mariadb.sock"),
            extra: extra.iter().map(|s| s.to_string()).collect(),
            log: Arc::new(Mutex::new(Vec::new())),
        };
        server.restart();
        server
    }

    /// Starts the server again on its data directory (after [`MariaDb::stop`] or
    /// [`MariaDb::kill9`]); panics if it is not ready within [`MARIADB_START_TIMEOUT`].
    pub fn restart(&mut self) {
        assert!(self.child.is_none(), "mariadbd is already running");
        let mut cmd = Command::new(find_program("mariadbd"));
        cmd.args([
            "--no-defaults".to_string(),
            format!("--datadir={}", self.dir.join("data").display()),
            format!("--socket={}", self.socket.display()),
            format!("--pid-file={}", self.dir.join("mariadb.pid").display()),
            format!("--tmpdir={}", self.dir.join("tmp").display()),
            "--skip-networking".to_string(),
            "--skip-log-bin".to_string(),
            "--innodb-buffer-pool-size=32M".to_string(),
            "--innodb-log-file-size=16M".to_string(),
            "--max-allowed-packet=64M".to_string(),
        ]);
        cmd.args(&self.extra);
        if running_as_root() {
            cmd.arg("--user=root");
        }
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawning mariadbd");
        let (log, rx) = capture_stderr(&mut child);
        self.child = Some(child);
        self.log = log;
        let deadline = Instant::now() + MARIADB_START_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(line) if line.contains("ready for connections") => return,
                Ok(_) => {}
                Err(_) => {
                    self.kill9();
                    panic!(
                        "mariadbd did not become ready within {MARIADB_START_TIMEOUT:?}:\n{}",
                        self.log_text()
                    );
                }
            }
        }
    }

    /// Everything the server wrote to stderr since its last start.
    pub fn log_text(&self) -> String {
        self.log.lock().unwrap().join("\n")
    }

    /// The `mariadb` CLI connected over the unix socket as root.
    pub fn client(&self) -> Command {
        let mut cmd = Command::new(find_program("mariadb"));
        cmd.args([
            "--no-defaults".to_string(),
            format!("--socket={}", self.socket.display()),
            "-uroot".to_string(),
        ]);
        cmd
    }

    /// Runs `sql` with `-N -B -e` (or stdin `input` when `sql` is None), whatever its outcome.
    pub fn try_run(&self, sql: Option<&str>, input: Option<&str>) -> Output {
        let mut cmd = self.client();
        if let Some(sql) = sql {
            cmd.args(["-N", "-B", "-e", sql]);
        }
        run_bounded(&mut cmd, input, MARIADB_CLIENT_TIMEOUT)
    }

    /// Runs `sql` (or stdin `input` when `sql` is None); asserts success, returns stdout.
    pub fn run(&self, sql: Option<&str>, input: Option<&str>) -> String {
        let out = self.try_run(sql, input);
        assert!(
            out.status.success(),
            "mariadb (into MariaDB) failed ({}): {}\nstatement: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr),
            sql.unwrap_or("(stdin)")
        );
        String::from_utf8(out.stdout).expect("utf-8")
    }

    /// One value (first row, first column) of `query`.
    pub fn value(&self, query: &str) -> String {
        self.run(Some(query), None)
            .trim_end_matches('\n')
            .to_string()
    }

    /// SIGTERM and wait (bounded) for the exit.
    pub fn stop(&mut self) {
        let Some(child) = self.child.as_mut() else {
            return;
        };
        // SAFETY: plain kill(2) on our own child's pid (not yet reaped).
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
        let deadline = Instant::now() + MARIADB_START_TIMEOUT;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                self.child = None;
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        self.kill9();
        panic!("mariadbd did not stop within {MARIADB_START_TIMEOUT:?}");
    }

    /// SIGKILL and reap: the process is gone when this returns.
    pub fn kill9(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for MariaDb {
    fn drop(&mut self) {
        self.kill9();
    }
}
