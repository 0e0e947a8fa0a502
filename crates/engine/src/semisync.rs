//! Semi-synchronous replication, primary side: who waits for which replica acknowledgement.
//!
//! Owns [`SemiSync`] (MariaDB's `rpl_semi_sync_master_*` settings, the semi-sync status ON/OFF,
//! the highest acknowledged LSN, the connected semi-sync replicas and MariaDB's
//! `Rpl_semi_sync_master_*` counters), [`SemiSyncClient`] (one connected semi-sync replica),
//! [`WaitPoint`] and [`SemiSyncStatus`]. The engine owns one ([`crate::Engine::semisync`]).
//!
//! Positions are log LSNs. A transaction is acknowledged once the acknowledged LSN is at or
//! past the END of its log record (the LSN just after it): the dump thread sends the event that
//! ends a transaction with the ack-request flag when [`SemiSync::wants_ack`] says so, and calls
//! [`SemiSync::ack`] with the same end LSN when the replica's reply arrives. Any one replica's
//! ack releases every waiter at or below it (MariaDB has no quorum either).
//!
//! Callers:
//! - the commit path (`commit.rs`): [`SemiSync::is_enabled`] once per commit (one atomic load;
//!   nothing else runs while disabled); while enabled the group sink registers each record's
//!   end ([`SemiSync::note_logged`]) and every committer calls [`SemiSync::wait_for_ack`]:
//!   `AFTER_SYNC` before its group becomes visible, `AFTER_COMMIT` after;
//! - the dump thread: [`SemiSync::add_client`], [`SemiSync::wants_ack`], [`SemiSync::ack`];
//! - the SQL layer: the setters and getters (`SET GLOBAL rpl_semi_sync_master_*`),
//!   [`SemiSync::status`] (SHOW STATUS) and [`SemiSync::reset`] (RESET MASTER).
//!
//! Rules (MariaDB's `semisync_master.cc`, REPLICATION_FACTS §1.10): while the status is ON a
//! committer waits until acknowledged, for at most `rpl_semi_sync_master_timeout` ms; a timeout
//! logs "Timeout waiting for reply of binlog ..." and switches the status OFF (waking every
//! waiter); while OFF nobody waits, and every transaction end at or after the newest logged one
//! asks for an ack, so that a replica that has caught up switches the status back ON ("Semi-sync
//! replication switched ON with slave ..."). With no semi-sync replica connected and
//! `wait_no_slave` OFF nobody waits; with it ON (the default) committers wait (and time out).
//! An interrupted (KILLed) waiter stops waiting without an error.
//!
//! Invariants: the acknowledged LSN only grows while the status stays ON (switching OFF forgets
//! it, as MariaDB forgets its reply position); every registered (waitable) end is above the
//! acknowledged LSN; the status is OFF whenever semi-sync is disabled; `wait_sessions` counts
//! exactly the committers inside the wait loop.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use onelog_log::Lsn;

use crate::report::{EngineEvent, Notifier, SemiSyncEvent};

/// Longest single sleep of a waiter, so an interrupt (KILL) is seen within this time.
const INTERRUPT_POLL: Duration = Duration::from_millis(20);

/// What a committing session lets semi-sync's wait do (the SQL layer implements it for its
/// connection; a plain closure `Fn() -> bool` is an interrupt check alone).
pub trait CommitWaiter {
    /// True once the session was KILLed: the wait ends at once, without an error.
    fn interrupted(&self) -> bool;
    /// The wait for a replica's ack starts (`true`) or ends (`false`): PROCESSLIST shows
    /// MariaDB's state "Waiting for semi-sync ACK from slave" meanwhile.
    fn waiting_for_ack(&self, _waiting: bool) {}
}

impl<F: Fn() -> bool> CommitWaiter for F {
    fn interrupted(&self) -> bool {
        self()
    }
}

/// MariaDB's PROCESSLIST state of a session waiting for its ack.
pub const WAITING_FOR_ACK: &str = "Waiting for semi-sync ACK from slave";

/// `rpl_semi_sync_master_wait_point`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitPoint {
    /// Wait after the group is durable and before anyone else can see it ("lossless").
    AfterSync,
    /// Wait after the group is visible, before the committing client is answered (default).
    AfterCommit,
}

impl WaitPoint {
    /// MariaDB's name of the value.
    pub fn name(self) -> &'static str {
        match self {
            WaitPoint::AfterSync => "AFTER_SYNC",
            WaitPoint::AfterCommit => "AFTER_COMMIT",
        }
    }
}

/// Names a position in messages: LSN -> (binlog file name, offset). The default names an LSN
/// `("", lsn)`; the replication layer installs the position map's
/// ([`SemiSync::set_position_namer`]).
pub type PositionNamer = Arc<dyn Fn(Lsn) -> (String, u64) + Send + Sync>;

/// The `Rpl_semi_sync_master_*` status values (MariaDB's meanings).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SemiSyncStatus {
    /// `_clients`: semi-sync replicas connected.
    pub clients: u64,
    /// `_get_ack`: acknowledgements received.
    pub get_ack: u64,
    /// `_net_avg_wait_time`, `_net_wait_time` (µs): 0, as in MariaDB 10.11 (never measured).
    pub net_avg_wait_time: u64,
    pub net_wait_time: u64,
    /// `_net_waits`: events sent with the ack-request flag.
    pub net_waits: u64,
    /// `_no_times`: times the status switched OFF.
    pub no_times: u64,
    /// `_no_tx`: commits not acknowledged (status OFF, timeout, no replica, interrupted).
    pub no_tx: u64,
    /// `_request_ack`: transactions logged while the status was ON (each wants an ack).
    pub request_ack: u64,
    /// `_status`: ON (true) or OFF.
    pub status: bool,
    /// `_timefunc_failures`: always 0 (a monotonic clock does not fail).
    pub timefunc_failures: u64,
    /// `_tx_avg_wait_time`, `_tx_wait_time` (µs), `_tx_waits`: acknowledged waits.
    pub tx_avg_wait_time: u64,
    pub tx_wait_time: u64,
    pub tx_waits: u64,
    /// `_wait_pos_backtraverse`: a waiter started below the lowest position already waited on.
    pub wait_pos_backtraverse: u64,
    /// `_wait_sessions`: committers waiting now.
    pub wait_sessions: u64,
    /// `_yes_tx`: commits acknowledged by a replica.
    pub yes_tx: u64,
}

impl SemiSyncStatus {
    /// `(name, value)` rows as SHOW STATUS prints them, sorted by name.
    pub fn rows(&self) -> Vec<(&'static str, String)> {
        let n = |v: u64| v.to_string();
        vec![
            ("Rpl_semi_sync_master_clients", n(self.clients)),
            ("Rpl_semi_sync_master_get_ack", n(self.get_ack)),
            (
                "Rpl_semi_sync_master_net_avg_wait_time",
                n(self.net_avg_wait_time),
            ),
            ("Rpl_semi_sync_master_net_wait_time", n(self.net_wait_time)),
            ("Rpl_semi_sync_master_net_waits", n(self.net_waits)),
            ("Rpl_semi_sync_master_no_times", n(self.no_times)),
            ("Rpl_semi_sync_master_no_tx", n(self.no_tx)),
            ("Rpl_semi_sync_master_request_ack", n(self.request_ack)),
            (
                "Rpl_semi_sync_master_status",
                if self.status { "ON" } else { "OFF" }.to_string(),
            ),
            (
                "Rpl_semi_sync_master_timefunc_failures",
                n(self.timefunc_failures),
            ),
            (
                "Rpl_semi_sync_master_tx_avg_wait_time",
                n(self.tx_avg_wait_time),
            ),
            ("Rpl_semi_sync_master_tx_wait_time", n(self.tx_wait_time)),
            ("Rpl_semi_sync_master_tx_waits", n(self.tx_waits)),
            (
                "Rpl_semi_sync_master_wait_pos_backtraverse",
                n(self.wait_pos_backtraverse),
            ),
            ("Rpl_semi_sync_master_wait_sessions", n(self.wait_sessions)),
            ("Rpl_semi_sync_master_yes_tx", n(self.yes_tx)),
        ]
    }
}

/// What happened to a report, named by positions: events are reported after the lock is left.
enum Pending {
    Timeout { end: Lsn, acked: Lsn },
    SwitchedOff,
    SwitchedOn { server_id: u32, at: Lsn },
    Enabled,
    Disabled,
}

/// Everything behind the mutex.
struct State {
    wait_point: WaitPoint,
    timeout: Duration,
    wait_no_slave: bool,
    /// `Rpl_semi_sync_master_status`.
    on: bool,
    /// Highest acknowledged end LSN while ON (0: none).
    acked: Lsn,
    /// Highest transaction end logged while enabled (0: none): the catch-up target while OFF.
    commit_max: Lsn,
    /// Ends registered while ON and not yet acknowledged (MariaDB's active transactions).
    active: BTreeSet<Lsn>,
    /// Lowest end a committer waits for (0: none).
    wait_min: Lsn,
    counters: SemiSyncStatus,
}

struct Inner {
    enabled: AtomicBool,
    state: Mutex<State>,
    /// Signalled on every ack, switch OFF, disable, client change and setting change.
    cv: Condvar,
    notifier: Arc<Notifier>,
    namer: Mutex<Option<PositionNamer>>,
}

/// Semi-sync, primary side (module docs). Cheap to share: clones share one state.
#[derive(Clone)]
pub struct SemiSync {
    inner: Arc<Inner>,
}

/// A connected semi-sync replica (`Rpl_semi_sync_master_clients`); dropping it says the
/// replica is gone.
pub struct SemiSyncClient {
    inner: Arc<Inner>,
}

impl Drop for SemiSyncClient {
    fn drop(&mut self) {
        let mut s = lock(&self.inner.state);
        debug_assert!(s.counters.clients > 0, "semi-sync client count below zero");
        s.counters.clients = s.counters.clients.saturating_sub(1);
        if s.counters.clients == 0 && !s.wait_no_slave {
            // Nobody is left to acknowledge: the waiters stop waiting (they see no replica).
            s.active.clear();
            s.wait_min = 0;
        }
        drop(s);
        self.inner.cv.notify_all();
    }
}

fn lock(m: &Mutex<State>) -> MutexGuard<'_, State> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl SemiSync {
    /// Disabled, MariaDB's defaults (timeout 10000 ms, AFTER_COMMIT, wait_no_slave ON).
    pub(crate) fn new(notifier: Arc<Notifier>) -> Self {
        SemiSync {
            inner: Arc::new(Inner {
                enabled: AtomicBool::new(false),
                state: Mutex::new(State {
                    wait_point: WaitPoint::AfterCommit,
                    timeout: Duration::from_millis(10_000),
                    wait_no_slave: true,
                    on: false,
                    acked: 0,
                    commit_max: 0,
                    active: BTreeSet::new(),
                    wait_min: 0,
                    counters: SemiSyncStatus::default(),
                }),
                cv: Condvar::new(),
                notifier,
                namer: Mutex::new(None),
            }),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        lock(&self.inner.state)
    }

    /// `rpl_semi_sync_master_enabled` (one atomic load: the commit path's only cost while off).
    pub fn is_enabled(&self) -> bool {
        self.inner.enabled.load(Ordering::Acquire)
    }

    /// `SET GLOBAL rpl_semi_sync_master_enabled`. Enabling turns the status ON; disabling switches
    /// it OFF (counted in `_no_times`, as MariaDB) and releases every waiter.
    pub fn set_enabled(&self, on: bool) {
        let mut s = self.state();
        if on == self.is_enabled() {
            return;
        }
        let was_on = s.on;
        switch_off(&mut s);
        self.inner.enabled.store(on, Ordering::Release);
        if on {
            s.on = true;
        } else {
            s.commit_max = 0;
        }
        drop(s);
        self.inner.cv.notify_all();
        if on {
            self.report(Pending::Enabled);
        } else {
            if was_on {
                self.report(Pending::SwitchedOff);
            }
            self.report(Pending::Disabled);
        }
    }

    /// `rpl_semi_sync_master_timeout`.
    pub fn timeout(&self) -> Duration {
        self.state().timeout
    }

    /// `SET GLOBAL rpl_semi_sync_master_timeout` (ms): applies to waits that start later.
    pub fn set_timeout(&self, timeout: Duration) {
        self.state().timeout = timeout;
    }

    /// `rpl_semi_sync_master_wait_point`.
    pub fn wait_point(&self) -> WaitPoint {
        self.state().wait_point
    }

    /// `SET GLOBAL rpl_semi_sync_master_wait_point`: applies to commits that start later.
    pub fn set_wait_point(&self, wp: WaitPoint) {
        self.state().wait_point = wp;
    }

    /// `rpl_semi_sync_master_wait_no_slave`.
    pub fn wait_no_slave(&self) -> bool {
        self.state().wait_no_slave
    }

    /// `SET GLOBAL rpl_semi_sync_master_wait_no_slave`: OFF with no replica connected releases
    /// the waiters.
    pub fn set_wait_no_slave(&self, on: bool) {
        self.state().wait_no_slave = on;
        self.inner.cv.notify_all();
    }

    /// Installs how messages name a position (the replication layer's position map).
    pub fn set_position_namer(&self, namer: PositionNamer) {
        *self.inner.namer.lock().unwrap_or_else(|p| p.into_inner()) = Some(namer);
    }

    /// The `Rpl_semi_sync_master_*` values now.
    pub fn status(&self) -> SemiSyncStatus {
        let s = self.state();
        let mut c = s.counters.clone();
        c.status = s.on;
        c.tx_avg_wait_time = c.tx_wait_time.checked_div(c.tx_waits).unwrap_or(0);
        c
    }

    /// RESET MASTER: forgets positions (the log restarts) and zeroes the counters MariaDB
    /// zeroes (`clients`, `get_ack`, `request_ack` and `net_waits` stay); the status is ON
    /// iff enabled.
    pub fn reset(&self) {
        let mut s = self.state();
        s.on = self.is_enabled();
        s.acked = 0;
        s.commit_max = 0;
        s.active.clear();
        s.wait_min = 0;
        let c = &mut s.counters;
        let keep = (c.clients, c.get_ack, c.request_ack, c.net_waits);
        *c = SemiSyncStatus::default();
        (c.clients, c.get_ack, c.request_ack, c.net_waits) = keep;
        drop(s);
        self.inner.cv.notify_all();
    }

    /// A semi-sync replica connected (its dump thread holds the returned guard while it runs).
    pub fn add_client(&self) -> SemiSyncClient {
        self.state().counters.clients += 1;
        SemiSyncClient {
            inner: self.inner.clone(),
        }
    }

    /// Should the event that ends the transaction at `end_lsn` ask the replica for an ack?
    /// While ON: when it is not acknowledged yet. While OFF: when it is at or after the newest
    /// logged transaction end (so a caught-up replica's ack switches the status back ON).
    /// False while disabled. A true answer counts in `_net_waits` (the event is sent flagged).
    pub fn wants_ack(&self, end_lsn: Lsn) -> bool {
        if !self.is_enabled() {
            return false;
        }
        let mut s = self.state();
        let want = if s.on {
            end_lsn > s.acked
        } else {
            end_lsn >= s.commit_max
        };
        if want {
            s.counters.net_waits += 1;
        }
        want
    }

    /// A replica (`server_id`) acknowledged everything up to `end_lsn`: releases every waiter at
    /// or below it; while OFF, switches ON once the replica has caught up with the newest logged
    /// transaction.
    pub fn ack(&self, end_lsn: Lsn, server_id: u32) {
        let mut switched = None;
        {
            let mut s = self.state();
            s.counters.get_ack += 1;
            if !self.is_enabled() {
                return;
            }
            if !s.on && end_lsn >= s.commit_max {
                s.on = true;
                switched = Some(Pending::SwitchedOn {
                    server_id,
                    at: end_lsn,
                });
            }
            if s.on && end_lsn > s.acked {
                s.acked = end_lsn;
                s.active = s.active.split_off(&(end_lsn + 1));
                if s.active.is_empty() {
                    s.wait_min = 0;
                }
            }
            debug_assert!(s.active.first().is_none_or(|&e| e > s.acked));
        }
        self.inner.cv.notify_all();
        if let Some(p) = switched {
            self.report(p);
        }
    }

    /// The sink logged transactions ending at `ends` (log order): they become the catch-up
    /// target, and, while ON, positions to wait for (`_request_ack`). True when the group must
    /// stay invisible until acknowledged (ON with AFTER_SYNC). Called only while enabled.
    pub(crate) fn note_logged(&self, ends: impl Iterator<Item = Lsn>) -> bool {
        let mut s = self.state();
        for end in ends {
            s.commit_max = s.commit_max.max(end);
            if s.on && end > s.acked {
                s.active.insert(end);
                s.counters.request_ack += 1;
            }
        }
        s.on && s.wait_point == WaitPoint::AfterSync
    }

    /// A committer waits until the transaction ending at `end_lsn` is acknowledged, the status
    /// goes OFF (its own timeout does that), no replica is left (with wait_no_slave OFF), or
    /// `waiter.interrupted()` says so (KILL). Never an error: the outcome only moves the counters.
    /// Call only when [`SemiSync::is_enabled`] was true.
    pub(crate) fn wait_for_ack(&self, end_lsn: Lsn, waiter: &dyn CommitWaiter) {
        let start = Instant::now();
        let (mut s, outcome) = self.wait_loop(self.state(), end_lsn, start, waiter);
        if outcome == Outcome::Acked {
            s.counters.yes_tx += 1;
            s.counters.tx_waits += 1;
            s.counters.tx_wait_time += start.elapsed().as_micros() as u64;
        } else {
            s.counters.no_tx += 1;
        }
        drop(s);
        if let Outcome::TimedOut { acked_before } = outcome {
            self.inner.cv.notify_all();
            self.report(Pending::Timeout {
                end: end_lsn,
                acked: acked_before,
            });
            self.report(Pending::SwitchedOff);
        }
    }

    /// The loop of [`SemiSync::wait_for_ack`] (the lock is held except while sleeping).
    fn wait_loop<'a>(
        &'a self,
        mut s: MutexGuard<'a, State>,
        end: Lsn,
        start: Instant,
        waiter: &dyn CommitWaiter,
    ) -> (MutexGuard<'a, State>, Outcome) {
        let deadline = start + s.timeout;
        let mut counted_wait = false;
        let outcome = loop {
            if !self.is_enabled() || !s.on || waiter.interrupted() {
                break Outcome::NotAcked;
            }
            if s.counters.clients == 0 && !s.wait_no_slave {
                break Outcome::NotAcked;
            }
            if s.acked >= end {
                break Outcome::Acked;
            }
            if !s.active.contains(&end) {
                // Logged while OFF (or before a switch OFF/ON): no ack is awaited for it.
                break Outcome::NotAcked;
            }
            if !counted_wait {
                counted_wait = true;
                if s.wait_min != 0 && end <= s.wait_min {
                    s.counters.wait_pos_backtraverse += 1;
                }
                if s.wait_min == 0 || end < s.wait_min {
                    s.wait_min = end;
                }
                s.counters.wait_sessions += 1;
                waiter.waiting_for_ack(true);
            }
            let now = Instant::now();
            if now >= deadline {
                let acked_before = s.acked;
                switch_off(&mut s);
                break Outcome::TimedOut { acked_before };
            }
            let sleep = (deadline - now).min(INTERRUPT_POLL);
            s = self
                .inner
                .cv
                .wait_timeout(s, sleep)
                .map(|(g, _)| g)
                .unwrap_or_else(|p| p.into_inner().0);
        };
        if counted_wait {
            debug_assert!(s.counters.wait_sessions > 0);
            s.counters.wait_sessions -= 1;
            waiter.waiting_for_ack(false);
        }
        (s, outcome)
    }

    /// Reports `p` through the engine's reporter, naming positions with the namer.
    fn report(&self, p: Pending) {
        let name = |lsn: Lsn| -> (String, u64) {
            let namer = self
                .inner
                .namer
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone();
            match namer {
                Some(n) => n(lsn),
                None => (String::new(), lsn),
            }
        };
        let ev = match p {
            Pending::Enabled => SemiSyncEvent::Enabled,
            Pending::Disabled => SemiSyncEvent::Disabled,
            Pending::SwitchedOff => SemiSyncEvent::SwitchedOff,
            Pending::Timeout { end, acked } => {
                let (file, pos) = name(end);
                let (acked_file, acked_pos) = if acked == 0 {
                    (String::new(), 0)
                } else {
                    name(acked)
                };
                SemiSyncEvent::Timeout {
                    file,
                    pos,
                    acked_file,
                    acked_pos,
                }
            }
            Pending::SwitchedOn { server_id, at } => {
                let (file, pos) = name(at);
                SemiSyncEvent::SwitchedOn {
                    server_id,
                    file,
                    pos,
                }
            }
        };
        self.inner.notifier.report(&EngineEvent::SemiSync(ev));
    }
}

/// How a wait ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Acked,
    NotAcked,
    /// This waiter's timeout switched the status OFF (`acked_before`: the acknowledged LSN then).
    TimedOut {
        acked_before: Lsn,
    },
}

/// Status OFF: forgets the positions and the awaited ends (their waiters, once woken, stop).
fn switch_off(s: &mut State) {
    s.active.clear();
    s.wait_min = 0;
    s.acked = 0;
    if s.on {
        s.on = false;
        s.counters.no_times += 1;
    }
}
