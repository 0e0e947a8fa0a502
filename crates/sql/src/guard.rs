//! Per-statement limits: what stops a running statement and what bounds its memory.
//!
//! Each connection has one [`ConnControl`], shared by its registry entry (so `KILL` from
//! another thread and SHOW PROCESSLIST reach it) and its [`Session`](crate::Session). Each
//! session has one [`StatementGuard`], armed by the session at the start of every statement
//! ([`StatementGuard::begin`]) with:
//! - the kill flag of its connection (`KILL QUERY` → 1317, `KILL [CONNECTION]` → 1317 for the
//!   statement, then the connection is closed),
//! - a deadline from `max_statement_time` (→ 1969),
//! - an optional client-liveness probe supplied by the protocol layer (a disconnected client
//!   → 1317; the connection ends without a reply),
//! - a memory budget from `max_session_mem_used` (→ 1290) that executors charge for every
//!   row or value they keep (result sets, sort keys, groups, DISTINCT sets, joined tables),
//! - the session's `max_allowed_packet`, the cap of string function results (→ NULL with
//!   warning 1301), and its `group_concat_max_len` (GROUP_CONCAT cut, warning 1260),
//! - the warnings raised while evaluating (merged into the diagnostics area at the end).
//!
//! Executors call [`StatementGuard::check`] at every row boundary (scans, joins, sorts,
//! DML loops): it reads one atomic per call and the clock / the probe only every
//! [`CLOCK_EVERY`] calls (the probe at most every [`PROBE_EVERY`]), so it costs a few
//! nanoseconds per row and no system call. Arming a statement allocates nothing.
//!
//! [`CommitWait`] is what a commit hands the engine for semi-sync's ack wait: the kill flag
//! (KILL QUERY or KILL ends the wait, without an error) and the PROCESSLIST state "Waiting
//! for semi-sync ACK from slave" while it lasts.
//!
//! Invariants: the kill flag's query bit is cleared when a statement begins (a `KILL QUERY`
//! aimed at an idle connection does not reach its next statement, as in MariaDB); once a
//! check failed, every later check of the same statement fails the same way (an executor that
//! swallowed the error cannot continue); `mem_used` never exceeds `mem_limit` after a
//! successful charge.

use onelog_protocol::errors;
use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use onelog_binlog::Value;
use onelog_engine::semisync::WAITING_FOR_ACK;
use onelog_engine::CommitWaiter;

use crate::error::SqlError;

/// `KILL QUERY` was issued: the running statement stops.
pub const KILL_QUERY: u8 = 1;
/// `KILL [CONNECTION]` was issued: the running statement stops and the connection closes.
pub const KILL_CONNECTION: u8 = 2;

/// onelog's default `max_session_mem_used` (bytes a statement may keep): MariaDB's default is
/// unlimited, onelog bounds every statement (DESIGN §7b), so one statement cannot take the
/// machine's memory; `--max-session-mem-used` and `SET [GLOBAL] max_session_mem_used` raise or
/// lower it.
pub const DEFAULT_MAX_SESSION_MEM_USED: u64 = 2 << 30;

/// Rows between two looks at the clock (deadline, probe).
pub const CLOCK_EVERY: u32 = 64;
/// Least time between two calls of the client-liveness probe.
pub const PROBE_EVERY: Duration = Duration::from_millis(5);

/// What SHOW PROCESSLIST shows of a connection's current statement.
#[derive(Debug, Clone)]
pub struct Activity {
    /// A statement is running (Command `Query`).
    pub running: bool,
    /// When the statement (or, when idle, the connection's last command) started.
    pub since: Instant,
    /// PROCESSLIST `State`.
    pub state: &'static str,
    /// The statement's text (kept between statements to reuse its buffer).
    pub info: String,
}

/// A committing connection as semi-sync's wait sees it: KILL ends the wait, and PROCESSLIST
/// shows "Waiting for semi-sync ACK from slave" meanwhile (the previous state comes back
/// after, as MariaDB's THD_EXIT_COND).
pub struct CommitWait<'a> {
    ctl: &'a ConnControl,
    before: Cell<&'static str>,
}

impl<'a> CommitWait<'a> {
    pub fn new(ctl: &'a ConnControl) -> Self {
        CommitWait {
            ctl,
            before: Cell::new(""),
        }
    }
}

impl CommitWaiter for CommitWait<'_> {
    fn interrupted(&self) -> bool {
        self.ctl.killed()
    }

    fn waiting_for_ack(&self, waiting: bool) {
        if waiting {
            self.before.set(self.ctl.state());
            self.ctl.set_state(WAITING_FOR_ACK);
        } else {
            self.ctl.set_state(self.before.get());
        }
    }
}

/// A table a connection's statement or open transaction used: `((database, table), write)`
/// (a change: MariaDB's MDL_SHARED_WRITE; else MDL_SHARED_READ).
pub type TableUse = ((String, String), bool);

/// What a connection published of its table uses for other sessions' `LOCK TABLES`
/// (`crate::table_locks` owns the rules; it is kept here, under the activity's mutex, so that a
/// statement's start costs no second lock).
#[derive(Debug, Default)]
pub struct TableUses {
    /// The running statement publishes each table it uses as it uses it (it began while a
    /// table lock existed or was waited for); false from each statement's start until then.
    pub live: bool,
    /// The tables the open transaction (and, while `live`, the running statement) used.
    pub list: Vec<TableUse>,
}

/// Per-connection control shared between the connection's thread and the registry.
#[derive(Debug)]
pub struct ConnControl {
    kill: AtomicU8,
    activity: Mutex<(Activity, TableUses)>,
}

impl Default for ConnControl {
    fn default() -> Self {
        ConnControl {
            kill: AtomicU8::new(0),
            activity: Mutex::new((
                Activity {
                    running: false,
                    since: Instant::now(),
                    state: "",
                    info: String::new(),
                },
                TableUses::default(),
            )),
        }
    }
}

impl ConnControl {
    /// Asks the connection's running statement (and with [`KILL_CONNECTION`] the connection)
    /// to stop.
    pub fn kill(&self, how: u8) {
        debug_assert!(how == KILL_QUERY || how == KILL_CONNECTION);
        self.kill.fetch_or(how, Ordering::AcqRel);
    }

    /// True once `KILL [CONNECTION]` was issued.
    pub fn connection_killed(&self) -> bool {
        self.kill.load(Ordering::Acquire) & KILL_CONNECTION != 0
    }

    /// True once `KILL QUERY` or `KILL [CONNECTION]` was issued (a semi-sync ack wait stops,
    /// as MariaDB's `thd_killed`).
    pub fn killed(&self) -> bool {
        self.kill.load(Ordering::Acquire) != 0
    }

    fn flags(&self) -> u8 {
        self.kill.load(Ordering::Relaxed)
    }

    /// A copy of the connection's activity (SHOW PROCESSLIST).
    pub fn activity(&self) -> Activity {
        self.activity
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .0
            .clone()
    }

    /// Runs `f` on the connection's published table uses, with whether a statement runs.
    pub fn table_uses<T>(&self, f: impl FnOnce(bool, &mut TableUses) -> T) -> T {
        let mut g = self.activity.lock().unwrap_or_else(|p| p.into_inner());
        let (a, u) = &mut *g;
        f(a.running, u)
    }

    fn set_running(&self, text: &str) {
        let mut g = self.activity.lock().unwrap_or_else(|p| p.into_inner());
        g.1.live = false;
        let a = &mut g.0;
        a.running = true;
        a.since = Instant::now();
        a.state = "starting";
        a.info.clear();
        a.info.push_str(text);
    }

    fn state(&self) -> &'static str {
        self.activity
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .0
            .state
    }

    fn set_state(&self, state: &'static str) {
        self.activity
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .0
            .state = state;
    }

    fn set_idle(&self) {
        let mut g = self.activity.lock().unwrap_or_else(|p| p.into_inner());
        let a = &mut g.0;
        a.running = false;
        a.since = Instant::now();
        a.state = "";
        if a.info.capacity() > 4096 {
            a.info = String::new();
        }
    }
}

/// A client-liveness probe: false once the client is gone.
pub type Probe = Box<dyn FnMut() -> bool + Send>;

/// Why a statement stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    Killed,
    Timeout,
}

/// The limits of the statement a session is running (see the module docs).
pub struct StatementGuard {
    ctl: Arc<ConnControl>,
    probe: RefCell<Option<Probe>>,
    active: bool,
    deadline: Option<Instant>,
    ticks: Cell<u32>,
    last_probe: Cell<Option<Instant>>,
    stopped: Cell<Option<Stop>>,
    mem_used: Cell<u64>,
    mem_limit: u64,
    max_packet: u64,
    group_concat_max: u64,
    warnings: RefCell<Vec<(String, u16, String)>>,
}

/// The most warnings one statement keeps (MariaDB's `max_error_count` default).
const MAX_WARNINGS: usize = 64;

impl StatementGuard {
    pub fn new(ctl: Arc<ConnControl>) -> Self {
        StatementGuard {
            ctl,
            probe: RefCell::new(None),
            active: false,
            deadline: None,
            ticks: Cell::new(0),
            last_probe: Cell::new(None),
            stopped: Cell::new(None),
            mem_used: Cell::new(0),
            mem_limit: u64::MAX,
            max_packet: u64::MAX,
            group_concat_max: u64::MAX,
            warnings: RefCell::new(Vec::new()),
        }
    }

    /// The connection control this guard watches.
    pub fn control(&self) -> &Arc<ConnControl> {
        &self.ctl
    }

    /// Installs the client-liveness probe (the protocol layer, once per connection).
    pub fn set_probe(&mut self, probe: Probe) {
        *self.probe.get_mut() = Some(probe);
    }

    /// Arms the guard for a statement: `timeout` (None or zero: no deadline), the memory
    /// budget in bytes and the string cap. Shows `text` in PROCESSLIST. The GROUP_CONCAT cap
    /// is unlimited until [`set_group_concat_max`](Self::set_group_concat_max).
    pub fn begin(
        &mut self,
        text: &str,
        timeout: Option<Duration>,
        mem_limit: u64,
        max_packet: u64,
    ) {
        self.ctl.kill.fetch_and(!KILL_QUERY, Ordering::AcqRel);
        self.active = true;
        self.deadline = timeout
            .filter(|d| !d.is_zero())
            .and_then(|d| Instant::now().checked_add(d));
        self.ticks.set(0);
        self.last_probe.set(None);
        self.stopped.set(None);
        self.mem_used.set(0);
        self.mem_limit = mem_limit;
        self.max_packet = max_packet;
        self.group_concat_max = u64::MAX;
        self.warnings.get_mut().clear();
        self.ctl.set_running(text);
    }

    /// Disarms the guard after a statement; returns its warnings (appended to `into`).
    pub fn end(&mut self, into: &mut Vec<(String, u16, String)>) {
        self.active = false;
        self.deadline = None;
        into.append(self.warnings.get_mut());
        self.ctl.set_idle();
    }

    /// PROCESSLIST `State` of the running statement.
    pub fn set_state(&self, state: &'static str) {
        self.ctl.set_state(state);
    }

    /// The row-boundary check: fails with 1317 once the statement was killed or its client
    /// is gone, 1969 once `max_statement_time` passed.
    #[inline]
    pub fn check(&self) -> Result<(), SqlError> {
        if self.ctl.flags() != 0 {
            return self.stop(Stop::Killed);
        }
        let t = self.ticks.get().wrapping_add(1);
        self.ticks.set(t);
        if !t.is_multiple_of(CLOCK_EVERY) && self.stopped.get().is_none() {
            return Ok(());
        }
        self.check_now()
    }

    /// The check with a look at the clock and the client now (loops that do much work per
    /// step, such as SLEEP).
    pub fn check_now(&self) -> Result<(), SqlError> {
        if let Some(s) = self.stopped.get() {
            return Err(stop_error(s));
        }
        if self.ctl.flags() != 0 {
            return self.stop(Stop::Killed);
        }
        if !self.active {
            return Ok(());
        }
        let now = Instant::now();
        if self.deadline.is_some_and(|d| now >= d) {
            return self.stop(Stop::Timeout);
        }
        if self.last_probe.get().is_none_or(|l| now >= l + PROBE_EVERY) {
            self.last_probe.set(Some(now));
            let mut p = self.probe.borrow_mut();
            if let Some(alive) = p.as_mut() {
                if !alive() {
                    // The client is gone: the statement stops as if killed, and so does the
                    // connection.
                    self.ctl.kill(KILL_CONNECTION);
                    return self.stop(Stop::Killed);
                }
            }
        }
        Ok(())
    }

    fn stop(&self, s: Stop) -> Result<(), SqlError> {
        let s = self.stopped.get().unwrap_or(s);
        self.stopped.set(Some(s));
        Err(stop_error(s))
    }

    /// Sleeps `d` (SLEEP()) in short slices, checking between them; Ok(true) when the whole
    /// time passed.
    pub fn sleep(&self, d: Duration) -> Result<(), SqlError> {
        let end = Instant::now() + d;
        loop {
            self.check_now()?;
            let now = Instant::now();
            if now >= end {
                return Ok(());
            }
            std::thread::sleep((end - now).min(Duration::from_millis(10)));
        }
    }

    /// Charges `bytes` the statement keeps in memory; 1290 past `max_session_mem_used`.
    pub fn charge(&self, bytes: u64) -> Result<(), SqlError> {
        let used = self.mem_used.get().saturating_add(bytes);
        if used > self.mem_limit {
            return Err(SqlError::of(errors::ER_OPTION_PREVENTS_STATEMENT,
                format!(
                    "The MariaDB server is running with the --max-session-mem-used={} option so it cannot execute this statement",
                    self.mem_limit
                ),
            ));
        }
        self.mem_used.set(used);
        Ok(())
    }

    /// Returns `bytes` charged earlier (rows dropped again).
    pub fn release(&self, bytes: u64) {
        self.mem_used.set(self.mem_used.get().saturating_sub(bytes));
    }

    /// Bytes charged by the running statement.
    pub fn mem_used(&self) -> u64 {
        self.mem_used.get()
    }

    /// Whether a string result of `len` bytes from `func` fits `max_allowed_packet`;
    /// when not, records warning 1301 (the caller returns NULL).
    pub fn string_fits(&self, func: &str, len: u64) -> bool {
        if len <= self.max_packet {
            return true;
        }
        self.warn(
            1301,
            format!(
                "Result of {func}() was larger than max_allowed_packet ({}) - truncated",
                self.max_packet
            ),
        );
        false
    }

    /// Sets the running statement's `group_concat_max_len`.
    pub fn set_group_concat_max(&mut self, n: u64) {
        self.group_concat_max = n;
    }

    /// The GROUP_CONCAT result cap (`group_concat_max_len`) of the running statement.
    pub fn group_concat_max(&self) -> u64 {
        self.group_concat_max
    }

    /// The string cap (`max_allowed_packet`) of the running statement.
    pub fn max_packet(&self) -> u64 {
        self.max_packet
    }

    /// Records a warning of the running statement.
    pub fn warn(&self, code: u16, msg: String) {
        let mut w = self.warnings.borrow_mut();
        if w.len() < MAX_WARNINGS {
            w.push(("Warning".to_string(), code, msg));
        }
    }
}

fn stop_error(s: Stop) -> SqlError {
    match s {
        Stop::Killed => SqlError::of(
            errors::ER_QUERY_INTERRUPTED,
            "Query execution was interrupted",
        ),
        Stop::Timeout => SqlError::of(
            errors::ER_STATEMENT_TIMEOUT,
            "Query execution was interrupted (max_statement_time exceeded)",
        ),
    }
}

/// The memory a kept row costs (the values and their heap bytes), for [`StatementGuard::charge`].
pub fn row_bytes(row: &[Value]) -> u64 {
    let mut n = (std::mem::size_of::<Vec<Value>>() + std::mem::size_of_val(row)) as u64;
    for v in row {
        n += value_heap(v);
    }
    n
}

fn value_heap(v: &Value) -> u64 {
    match v {
        Value::Bytes(b) => b.len() as u64,
        Value::Decimal(s) => s.len() as u64,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard() -> StatementGuard {
        StatementGuard::new(Arc::new(ConnControl::default()))
    }

    #[test]
    fn a_semi_sync_wait_shows_in_processlist_and_ends_on_kill() {
        let ctl = ConnControl::default();
        ctl.set_state("Updating");
        let w = CommitWait::new(&ctl);
        w.waiting_for_ack(true);
        assert_eq!(ctl.activity().state, "Waiting for semi-sync ACK from slave");
        assert!(!w.interrupted());
        ctl.kill(KILL_QUERY);
        assert!(w.interrupted(), "KILL QUERY ends the wait too");
        w.waiting_for_ack(false);
        assert_eq!(ctl.activity().state, "Updating");
    }

    #[test]
    fn kill_query_stops_the_statement_and_is_cleared_by_the_next_one() {
        let mut g = guard();
        g.begin("select 1", None, u64::MAX, u64::MAX);
        assert!(g.check().is_ok());
        g.control().kill(KILL_QUERY);
        assert_eq!(g.check().unwrap_err().code, 1317);
        let mut w = Vec::new();
        g.end(&mut w);
        g.begin("select 2", None, u64::MAX, u64::MAX);
        assert!(g.check().is_ok());
    }

    #[test]
    fn kill_connection_stays_set_across_statements() {
        let mut g = guard();
        g.control().kill(KILL_CONNECTION);
        g.begin("select 1", None, u64::MAX, u64::MAX);
        assert_eq!(g.check().unwrap_err().code, 1317);
        assert!(g.control().connection_killed());
    }

    #[test]
    fn deadline_gives_1969_within_clock_every_rows() {
        let mut g = guard();
        g.begin("x", Some(Duration::from_nanos(1)), u64::MAX, u64::MAX);
        std::thread::sleep(Duration::from_millis(1));
        let mut err = None;
        for _ in 0..CLOCK_EVERY {
            if let Err(e) = g.check() {
                err = Some(e);
                break;
            }
        }
        assert_eq!(err.expect("deadline seen").code, 1969);
        // Sticky: every later check fails too.
        assert_eq!(g.check().unwrap_err().code, 1969);
    }

    #[test]
    fn a_dead_client_probe_stops_the_statement_and_kills_the_connection() {
        let mut g = guard();
        g.set_probe(Box::new(|| false));
        g.begin("x", None, u64::MAX, u64::MAX);
        assert_eq!(g.check_now().unwrap_err().code, 1317);
        assert!(g.control().connection_killed());
    }

    #[test]
    fn charge_fails_with_1290_past_the_limit() {
        let mut g = guard();
        g.begin("x", None, 1000, u64::MAX);
        assert!(g.charge(600).is_ok());
        let e = g.charge(600).unwrap_err();
        assert_eq!(e.code, 1290);
        assert!(e.message.contains("--max-session-mem-used=1000"));
        assert_eq!(g.mem_used(), 600);
    }

    #[test]
    fn string_cap_warns_1301() {
        let mut g = guard();
        g.begin("x", None, u64::MAX, 16);
        assert!(g.string_fits("repeat", 16));
        assert!(!g.string_fits("repeat", 17));
        let mut w = Vec::new();
        g.end(&mut w);
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].1, 1301);
        assert_eq!(
            w[0].2,
            "Result of repeat() was larger than max_allowed_packet (16) - truncated"
        );
    }
}
