//! The general query log and the slow query log, written to files in MariaDB 10.11's formats
//! (`general_log` / `general_log_file`, `slow_query_log` / `slow_query_log_file`,
//! `long_query_time`, `log_output=FILE|NONE`).
//!
//! Owns the two log files and whether each is on. `sysvar` calls [`QueryLogs::configure`]
//! after every SET GLOBAL of one of those variables (and at startup), which opens, reopens
//! (the file name changed) or closes the files to match the global values.
//!
//! Formats (measured on MariaDB 10.11):
//! - every time a file is opened it gets MariaDB's header: `<program>, Version: <version>
//!   (onelog). started with:`, `Tcp port: P  Unix socket: S`, `Time\t\t    Id Command\tArgument`;
//! - a general log line is `YYMMDD HH:MM:SS\t` when the second changed since the file's last
//!   line (else `\t\t`), the connection id right-aligned in 6, a space, the command
//!   (`Connect`, `Query`, `Quit`, `Init DB`, ...), a tab and its argument;
//! - a slow log entry is `# Time: YYMMDD HH:MM:SS` (when the second changed), `# User@Host:
//!   user[user] @ host []`, `# Thread_id: N  Schema: db  QC_hit: No`, `# Query_time: s.us
//!   Lock_time: s.us  Rows_sent: N  Rows_examined: N`, `# Rows_affected: N  Bytes_sent: N`,
//!   `use db;` when the schema differs from the previous entry's, `SET timestamp=N;` and the
//!   statement ending in `;`.
//!
//! Times are UTC (the server's time zone).
//!
//! Invariants: an entry is written whole under its file's lock; while a log is off, logging
//! costs one atomic load and formats nothing; a file that cannot be written to is closed and
//! its log turned off (with an error-log line), never a failed statement.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{SystemTime, UNIX_EPOCH};

use onelog_binlog::value::civil_from_days;

/// What a slow log entry records of one statement.
pub struct SlowEntry<'a> {
    pub connection_id: u32,
    pub user: &'a str,
    pub host: &'a str,
    pub db: &'a str,
    pub query_time: f64,
    pub rows_sent: u64,
    pub rows_examined: u64,
    pub rows_affected: u64,
    pub bytes_sent: u64,
    /// The statement's start, seconds since the epoch (`SET timestamp=`).
    pub start: u64,
    pub sql: &'a str,
}

#[derive(Default)]
struct LogFile {
    on: AtomicBool,
    state: Mutex<FileState>,
}

#[derive(Default)]
struct FileState {
    path: Option<PathBuf>,
    file: Option<File>,
    /// The second of the last line written (a new second starts a line with the time).
    last_time: u64,
    /// The schema of the last slow log entry (`use db;` when it changes).
    last_db: String,
}

/// The two query logs of a server.
pub struct QueryLogs {
    general: LogFile,
    slow: LogFile,
    /// The header's first two lines (program, version, port, socket).
    header: String,
    /// Where relative file names are resolved (the data directory).
    base: PathBuf,
    /// Where a failure to write is reported (the error log; stderr until the server sets it).
    report: OnceLock<fn(&str)>,
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// `YYMMDD HH:MM:SS` (MariaDB's query log time, the hour not zero-padded: `%2d`).
fn log_time(secs: u64) -> String {
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    let rem = secs % 86_400;
    format!(
        "{:02}{m:02}{d:02} {:2}:{:02}:{:02}",
        y.rem_euclid(100),
        rem / 3600,
        (rem / 60) % 60,
        rem % 60
    )
}

impl QueryLogs {
    /// Both logs off. `version`, `port` and `socket` go into each file's header; relative
    /// file names are taken under `datadir`.
    pub fn new(version: &str, port: u16, socket: Option<&Path>, datadir: &Path) -> QueryLogs {
        let program = std::env::current_exe()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| "onelog".to_string());
        QueryLogs {
            general: LogFile::default(),
            slow: LogFile::default(),
            header: format!(
                "{program}, Version: {version} (onelog). started with:\nTcp port: {port}  Unix socket: {}\n",
                socket.map_or_else(String::new, |s| s.display().to_string())
            ),
            base: datadir.to_path_buf(),
            report: OnceLock::new(),
        }
    }

    /// Where failures to write a log go (the server's error log).
    pub fn set_report(&self, report: fn(&str)) {
        let _ = self.report.set(report);
    }

    fn report(&self, msg: &str) {
        match self.report.get() {
            Some(f) => f(msg),
            None => eprintln!("{msg}"),
        }
    }

    /// Whether a name given for a log file can be opened for appending (SET GLOBAL
    /// `general_log_file` / `slow_query_log_file` checks it before storing it, as MariaDB).
    pub fn can_open(&self, name: &str) -> bool {
        let path = self.base.join(name);
        !name.is_empty()
            && !path.is_dir()
            && path
                .parent()
                .is_none_or(|p| p.as_os_str().is_empty() || p.is_dir())
    }

    /// Opens, reopens or closes the general log to match `on` and `name`. Err: the file
    /// cannot be opened (the log stays off).
    pub fn configure_general(&self, on: bool, name: &str) -> Result<(), String> {
        self.configure(&self.general, on, name)
    }

    /// The same for the slow query log.
    pub fn configure_slow(&self, on: bool, name: &str) -> Result<(), String> {
        self.configure(&self.slow, on, name)
    }

    fn configure(&self, log: &LogFile, on: bool, name: &str) -> Result<(), String> {
        let mut st = log.state.lock().unwrap_or_else(|e| e.into_inner());
        let path = self.base.join(name);
        if !on {
            log.on.store(false, Ordering::Release);
            st.file = None;
            st.path = None;
            return Ok(());
        }
        if st.file.is_some() && st.path.as_deref() == Some(path.as_path()) {
            log.on.store(true, Ordering::Release);
            return Ok(());
        }
        let opened = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut f| {
                writeln!(f, "{}Time\t\t    Id Command\tArgument", self.header)?;
                Ok(f)
            });
        match opened {
            Ok(f) => {
                st.file = Some(f);
                st.path = Some(path);
                st.last_time = 0;
                st.last_db.clear();
                log.on.store(true, Ordering::Release);
                Ok(())
            }
            Err(e) => {
                log.on.store(false, Ordering::Release);
                st.file = None;
                st.path = None;
                Err(format!(
                    "Could not use {} for logging (error {e})",
                    path.display()
                ))
            }
        }
    }

    /// Reopens the open files (FLUSH LOGS: a file moved away is created again, with its
    /// header).
    pub fn reopen(&self) {
        for log in [&self.general, &self.slow] {
            let path = {
                let mut st = log.state.lock().unwrap_or_else(|e| e.into_inner());
                st.file = None;
                st.path.take()
            };
            if let Some(p) = path {
                let name = p.display().to_string();
                if let Err(e) = self.configure(log, true, &name) {
                    self.report(&e);
                }
            }
        }
    }

    pub fn general_on(&self) -> bool {
        self.general.on.load(Ordering::Acquire)
    }

    pub fn slow_on(&self) -> bool {
        self.slow.on.load(Ordering::Acquire)
    }

    /// Writes one general log line (nothing while the log is off).
    pub fn general(&self, connection_id: u32, command: &str, argument: &str) {
        if !self.general_on() {
            return;
        }
        let mut st = self.general.state.lock().unwrap_or_else(|e| e.into_inner());
        let now = now_secs();
        let mut line = String::with_capacity(32 + argument.len());
        if now != st.last_time {
            st.last_time = now;
            line.push_str(&log_time(now));
            line.push('\t');
        } else {
            line.push_str("\t\t");
        }
        line.push_str(&format!("{connection_id:6} {command}\t{argument}\n"));
        self.write(&self.general, &mut st, &line);
    }

    /// Writes one slow log entry (nothing while the log is off).
    pub fn slow(&self, e: &SlowEntry<'_>) {
        if !self.slow_on() {
            return;
        }
        let mut st = self.slow.state.lock().unwrap_or_else(|e| e.into_inner());
        let now = now_secs();
        let mut text = String::with_capacity(256 + e.sql.len());
        if now != st.last_time {
            st.last_time = now;
            text.push_str(&format!("# Time: {}\n", log_time(now)));
        }
        text.push_str(&format!(
            "# User@Host: {u}[{u}] @ {h} []\n# Thread_id: {id}  Schema: {db}  QC_hit: No\n\
             # Query_time: {qt:.6}  Lock_time: 0.000000  Rows_sent: {rs}  Rows_examined: {rx}\n\
             # Rows_affected: {ra}  Bytes_sent: {bs}\n",
            u = e.user,
            h = e.host,
            id = e.connection_id,
            db = e.db,
            qt = e.query_time,
            rs = e.rows_sent,
            rx = e.rows_examined,
            ra = e.rows_affected,
            bs = e.bytes_sent,
        ));
        if !e.db.is_empty() && e.db != st.last_db {
            st.last_db = e.db.to_string();
            text.push_str(&format!("use `{}`;\n", e.db.replace('`', "``")));
        }
        text.push_str(&format!("SET timestamp={};\n{};\n", e.start, e.sql));
        self.write(&self.slow, &mut st, &text);
    }

    fn write(&self, log: &LogFile, st: &mut FileState, text: &str) {
        let Some(f) = st.file.as_mut() else {
            return;
        };
        if let Err(err) = f.write_all(text.as_bytes()) {
            log.on.store(false, Ordering::Release);
            st.file = None;
            self.report(&format!(
                "Could not write to {} ({err}): the log is turned off",
                st.path
                    .as_deref()
                    .map_or_else(String::new, |p| p.display().to_string())
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn general_log_lines_in_mariadbs_format() {
        let dir = std::env::temp_dir().join(format!("onelog-querylog-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let _ = std::fs::remove_file(dir.join("g.log"));
        let logs = QueryLogs::new("10.11.9-MariaDB-onelog", 3306, None, &dir);
        logs.general(1, "Query", "not logged: off");
        logs.configure_general(true, "g.log").unwrap();
        logs.general(3, "Connect", "root@localhost on  using Socket");
        logs.general(3, "Query", "select 1");
        logs.configure_general(false, "g.log").unwrap();
        logs.general(3, "Quit", "");
        let text = std::fs::read_to_string(dir.join("g.log")).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].ends_with(", Version: 10.11.9-MariaDB-onelog (onelog). started with:"));
        assert_eq!(lines[1], "Tcp port: 3306  Unix socket: ");
        assert_eq!(lines[2], "Time\t\t    Id Command\tArgument");
        assert!(
            lines[3].ends_with("\t     3 Connect\troot@localhost on  using Socket"),
            "{text}"
        );
        assert_eq!(lines[3].find('\t'), Some("261126 16:00:24".len()), "{text}");
        assert!(
            lines[4] == "\t\t     3 Query\tselect 1"
                || lines[4].ends_with("\t     3 Query\tselect 1"),
            "{text}"
        );
        assert_eq!(lines.len(), 5, "{text}");
    }

    #[test]
    fn log_time_is_mariadbs_yymmdd_and_space_padded_hour() {
        assert_eq!(log_time(1_795_708_885), "261126 16:01:25");
        assert_eq!(log_time(1_795_651_200 + 5 * 3600 + 7), "261126  5:00:07");
    }
}
