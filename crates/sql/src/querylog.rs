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
//! What the protocol layer writes (measured on MariaDB 10.11.14): the general log gets
//! `Query` with the COM_QUERY text as [`trim_query`] leaves it, `Prepare` (after a successful
//! prepare), `Execute` with the statement text and its parameters written as literals
//! ([`expand_params`]; after a successful execution), `Close stmt` and `Reset stmt` (empty
//! argument), `Long Data` (COM_STMT_SEND_LONG_DATA for a known statement's parameter), `Field
//! List` (`table wildcard`), `Change user` (`user@host on db using ...`),
//! `Connect`, `Init DB`, `Quit`, `Refresh`, `Statistics`, `Debug`; COM_PROCESS_KILL writes
//! nothing (as MariaDB). The slow log gets one entry per statement of a multi-statement
//! COM_QUERY ([`StatementRun`], text as [`piece_text`] cuts it) and one per COM_STMT_EXECUTE
//! (the expanded text, `Bytes_sent: 0` as MariaDB writes it), when [`SlowPolicy::logs`] says so.
//!
//! `Rows_examined` counts the rows the executor reads from tables: every row an access path
//! hands over (a full scan's rows, an index lookup's or range's matches, each inner lookup of
//! a join, subqueries' reads), counted per connection thread by [`count_examined`] at the end
//! of each access-path visit (one thread-local add, whether or not a log is on). MariaDB also
//! counts rows it re-reads from its temporary tables and filesort buffers, and skips tables
//! its optimizer answers from an index alone (`MIN`/`MAX`), so its number is higher for
//! GROUP BY / ORDER BY through a temporary table and lower for those. `Lock_time` is written
//! 0: onelog opens no tables before running a statement, so there is no "waiting to lock the
//! tables" phase to time apart; lock waits are part of `Query_time`.
//!
//! Invariants: an entry is written whole under its file's lock; while a log is off, logging
//! costs one atomic load and formats nothing; a file that cannot be written to is closed and
//! its log turned off (with an error-log line), never a failed statement.

use std::cell::Cell;
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
    /// The client's IP address (empty over the unix socket): `@ host [ip]`.
    pub ip: &'a str,
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

    /// Writes `msg` to the server's error log (as an error).
    pub(crate) fn error_log(&self, msg: &str) {
        self.report(msg);
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
            "# User@Host: {u}[{u}] @ {h} [{ip}]\n# Thread_id: {id}  Schema: {db}  QC_hit: No\n\
             # Query_time: {qt:.6}  Lock_time: 0.000000  Rows_sent: {rs}  Rows_examined: {rx}\n\
             # Rows_affected: {ra}  Bytes_sent: {bs}\n",
            u = e.user,
            h = e.host,
            ip = e.ip,
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

/// One statement a session ran, as the slow log needs it: a statement of a COM_QUERY (in
/// order; the one that failed is the last) or a COM_STMT_EXECUTE.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StatementRun {
    /// Its text, a byte range of the COM_QUERY's text ([`piece_text`]); empty for an execute.
    pub text: std::ops::Range<usize>,
    /// When it began, seconds since the epoch (`SET timestamp=`).
    pub start: u64,
    /// How long it ran, in seconds.
    pub took: f64,
    /// Rows read from tables ([`count_examined`]).
    pub rows_examined: u64,
    /// A table was read by a full scan (MariaDB's "no index used").
    pub no_index: bool,
    /// An administrative statement (`log_slow_admin_statements`: ALTER, ANALYZE, CHECK,
    /// OPTIMIZE, REPAIR, CREATE/DROP INDEX).
    pub admin: bool,
    /// The session's settings just after it ran call it slow ([`SlowPolicy::logs`]): it is
    /// counted in `Slow_queries` and written to the slow log when that is on.
    pub slow: bool,
    /// An SQL-level `EXECUTE`: the prepared text with its parameters written in, which
    /// MariaDB logs in the statement's place (with `Bytes_sent: 0`). Only set while a query
    /// log is on.
    pub expanded: Option<String>,
    /// The current database just after it ran (empty: none), recorded only for the
    /// statements of a multi-statement COM_QUERY (one may be a USE); otherwise the
    /// session's current database is the statement's.
    pub db: Option<String>,
}

/// The session settings that decide whether a statement is slow (`long_query_time`,
/// `log_queries_not_using_indexes`, `min_examined_row_limit`, `log_slow_admin_statements`).
#[derive(Debug, Clone, Copy)]
pub struct SlowPolicy {
    pub long_query_time: f64,
    pub not_using_indexes: bool,
    pub min_examined_row_limit: u64,
    pub admin_statements: bool,
}

impl SlowPolicy {
    /// MariaDB's `log_slow_statement` rule: an administrative statement counts only under
    /// `log_slow_admin_statements`; then the statement ran longer than `long_query_time`, or
    /// read a table without an index while `log_queries_not_using_indexes` is on; and it
    /// examined at least `min_examined_row_limit` rows. Such a statement is counted in
    /// `Slow_queries` and written to the slow log when that is on.
    pub fn logs(&self, run: &StatementRun) -> bool {
        if run.admin && !self.admin_statements {
            return false;
        }
        (run.took > self.long_query_time || (run.no_index && self.not_using_indexes))
            && run.rows_examined >= self.min_examined_row_limit
    }
}

thread_local! {
    /// Rows read by access paths on this thread, and full scans among those reads (running
    /// totals; a statement takes the difference across its run).
    static EXAMINED: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
}

/// Adds `rows` read by one access path (`full_scan`: a full table scan) to this thread's
/// totals. Called by the executor at the end of each access-path visit.
pub(crate) fn count_examined(rows: u64, full_scan: bool) {
    EXAMINED.with(|c| {
        let (r, f) = c.get();
        c.set((r.wrapping_add(rows), f.wrapping_add(u64::from(full_scan))))
    });
}

/// This thread's running totals: (rows examined, full scans).
pub(crate) fn examined() -> (u64, u64) {
    EXAMINED.with(Cell::get)
}

/// The statement text MariaDB keeps of a COM_QUERY or COM_STMT_PREPARE packet (its
/// `alloc_query`): leading white space, and trailing white space and semicolons, removed.
pub fn trim_query(sql: &str) -> &str {
    sql.trim_start()
        .trim_end_matches(|c: char| c == ';' || c.is_whitespace())
}

/// The byte range of `sql` a statement `piece` (a trimmed sub-slice of `sql`) is logged as in
/// the slow log: MariaDB keeps a statement's text up to the `;` that ends it, white space
/// before that `;` included (`SELECT 2 ;` is logged `SELECT 2 ;`); the last statement is
/// trimmed ([`trim_query`]).
pub(crate) fn piece_text(sql: &str, piece: &str) -> std::ops::Range<usize> {
    let start = (piece.as_ptr() as usize)
        .saturating_sub(sql.as_ptr() as usize)
        .min(sql.len());
    let mut end = (start + piece.len()).min(sql.len());
    let rest = &sql.as_bytes()[end..];
    let ws = rest.iter().take_while(|b| b.is_ascii_whitespace()).count();
    if rest.get(ws) == Some(&b';') && !trim_query(&sql[end + ws..]).is_empty() {
        end += ws;
    }
    start..end
}

/// Whether `sql` is one of the statements `log_slow_admin_statements` governs (no
/// allocation: it is asked of every statement).
pub(crate) fn is_admin_statement(sql: &str) -> bool {
    let mut words = sql
        .split(|c: char| c.is_whitespace() || c == '(')
        .filter(|w| !w.is_empty());
    let first = words.next().unwrap_or_default();
    let second = words.next().unwrap_or_default();
    let is = |w: &str, any: &[&str]| any.iter().any(|a| w.eq_ignore_ascii_case(a));
    if is(first, &["ANALYZE", "CHECK", "OPTIMIZE", "REPAIR"]) {
        is(second, &["TABLE", "NO_WRITE_TO_BINLOG", "LOCAL"])
    } else if is(first, &["ALTER"]) {
        is(second, &["TABLE", "ONLINE", "IGNORE"])
    } else if is(first, &["CREATE"]) {
        is(second, &["INDEX", "UNIQUE", "FULLTEXT", "SPATIAL"])
    } else {
        is(first, &["DROP"]) && is(second, &["INDEX"])
    }
}

/// A prepared statement's text with each `?` placeholder (outside quotes and comments)
/// replaced by its parameter written as MariaDB logs it (`Item_param::query_val_str`):
/// NULL, numbers as they print, strings and temporal values quoted, `'` `\` `"` and control
/// characters escaped with a backslash. Extra placeholders stay `?`.
pub fn expand_params(sql: &str, params: &[onelog_binlog::Value]) -> String {
    use crate::parse::lexer;
    let b = sql.as_bytes();
    let mut out = String::with_capacity(sql.len() + 16 * params.len());
    let mut next = params.iter();
    let (mut i, mut copied) = (0, 0);
    while i < b.len() {
        let j = match b[i] {
            b'\'' | b'"' | b'`' => lexer::skip_quoted(b, i),
            b'/' if b.get(i + 1) == Some(&b'*') => {
                lexer::block_comment_close(b, i + 2).map_or(b.len(), |k| k + 2)
            }
            b'#' | b'-' if lexer::line_comment_at(b, i) => lexer::skip_line(b, i),
            b'?' => match next.next() {
                Some(v) => {
                    out.push_str(&sql[copied..i]);
                    param_literal(v, &mut out);
                    copied = i + 1;
                    i + 1
                }
                None => i + 1,
            },
            _ => i + 1,
        };
        i = j.max(i + 1).min(b.len());
    }
    out.push_str(&sql[copied..]);
    out
}

/// One parameter as MariaDB writes it into an expanded statement.
fn param_literal(v: &onelog_binlog::Value, out: &mut String) {
    use onelog_binlog::Value;
    match v {
        Value::Null => out.push_str("NULL"),
        Value::Int(_) | Value::UInt(_) | Value::Float(_) | Value::Double(_) | Value::Decimal(_) => {
            out.push_str(&String::from_utf8_lossy(&crate::render::text_plain(v)))
        }
        Value::Bytes(bytes) => {
            out.push('\'');
            for ch in String::from_utf8_lossy(bytes).chars() {
                match ch {
                    '\0' => out.push_str("\\0"),
                    '\n' => out.push_str("\\n"),
                    '\r' => out.push_str("\\r"),
                    '\u{1a}' => out.push_str("\\Z"),
                    '\\' | '\'' | '"' => {
                        out.push('\\');
                        out.push(ch);
                    }
                    c => out.push(c),
                }
            }
            out.push('\'');
        }
        other => {
            out.push('\'');
            out.push_str(&String::from_utf8_lossy(&crate::render::text_plain(other)));
            out.push('\'');
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
    fn multi_statement_pieces_are_cut_as_mariadb_logs_them() {
        let sql = trim_query("  SELECT 1;  SELECT 2 ; \n UPDATE t SET k=1;SELECT 3 ;; \n");
        assert_eq!(sql, "SELECT 1;  SELECT 2 ; \n UPDATE t SET k=1;SELECT 3");
        let pieces = crate::parse::split_statements(sql);
        let cut: Vec<&str> = pieces.iter().map(|p| &sql[piece_text(sql, p)]).collect();
        // Measured on 10.11.14: `SELECT 2 ;` is logged `SELECT 2 ;` (its space kept).
        assert_eq!(
            cut,
            ["SELECT 1", "SELECT 2 ", "UPDATE t SET k=1", "SELECT 3"]
        );
    }

    #[test]
    fn parameters_are_written_in_as_mariadb_logs_an_execution() {
        use onelog_binlog::Value;
        let sql = "SELECT ?, ? /* ? */, '?', `?`, ?, ?, ? -- ?\n, ?";
        let params = [
            Value::bytes(b"it's \\ \"x\"\n\r\0\x1a"),
            Value::Null,
            Value::Int(-3),
            Value::Double(1.5),
            Value::Date {
                year: 2024,
                month: 2,
                day: 29,
            },
        ];
        assert_eq!(
            expand_params(sql, &params),
            "SELECT 'it\\'s \\\\ \\\"x\\\"\\n\\r\\0\\Z', NULL /* ? */, '?', `?`, -3, 1.5, '2024-02-29' -- ?\n, ?"
        );
    }

    #[test]
    fn admin_statements_are_the_ones_log_slow_admin_statements_names() {
        for s in [
            "ALTER TABLE t ADD c INT",
            "alter online table t force",
            "CREATE INDEX i ON t(a)",
            "create unique index i on t(a)",
            "DROP INDEX i ON t",
            "OPTIMIZE TABLE t",
            "ANALYZE TABLE t",
            "CHECK TABLE t",
            "REPAIR TABLE t",
        ] {
            assert!(is_admin_statement(s), "{s}");
        }
        for s in [
            "SELECT 1",
            "CREATE TABLE t (a INT)",
            "ALTER USER u",
            "DROP TABLE t",
            "ANALYZE SELECT 1",
        ] {
            assert!(!is_admin_statement(s), "{s}");
        }
    }

    #[test]
    fn slow_policy_is_mariadbs_rule() {
        let policy = SlowPolicy {
            long_query_time: 1.0,
            not_using_indexes: true,
            min_examined_row_limit: 3,
            admin_statements: false,
        };
        let run = |took: f64, rows: u64, no_index: bool, admin: bool| StatementRun {
            took,
            rows_examined: rows,
            no_index,
            admin,
            ..StatementRun::default()
        };
        assert!(policy.logs(&run(2.0, 3, false, false)));
        assert!(
            !policy.logs(&run(0.5, 3, false, false)),
            "fast, with an index"
        );
        assert!(policy.logs(&run(0.5, 3, true, false)), "a full scan");
        assert!(!policy.logs(&run(2.0, 2, false, false)), "too few rows");
        assert!(!policy.logs(&run(2.0, 3, false, true)), "administrative");
        let all = SlowPolicy {
            not_using_indexes: false,
            admin_statements: true,
            ..policy
        };
        assert!(!all.logs(&run(0.5, 3, true, false)));
        assert!(all.logs(&run(2.0, 3, false, true)));
    }

    #[test]
    fn log_time_is_mariadbs_yymmdd_and_space_padded_hour() {
        assert_eq!(log_time(1_795_708_885), "261126 16:01:25");
        assert_eq!(log_time(1_795_651_200 + 5 * 3600 + 7), "261126  5:00:07");
    }
}
