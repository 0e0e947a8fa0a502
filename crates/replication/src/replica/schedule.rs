//! The SQL thread and its workers: applying relay groups in the primary's commit order.
//!
//! Owns [`CommitOrder`], the ticket a group carries while it is applied: its place `index` in
//! the stream of groups this SQL thread handed out, and the shared [`OrderBook`] that says how
//! far the groups before it got (queued in the log, committed) or whether one of them failed.
//!
//! Also owns the SQL thread, [`run_sql_thread`] (started by `control::Replica::start` as
//! "replica sql"): it takes [`RelayGroup`]s from the relay queue, numbers them in queue order
//! and applies them in the thread itself or on `slave_parallel_threads` workers ("replica
//! worker N"), each with its own [`GroupApplier`]; it keeps `Exec_Master_Log_Pos`, the group
//! counters, `Seconds_Behind_Master`'s timestamp and `Slave_SQL_Running_State` in the shared
//! status, retries retryable failures and honours START SLAVE UNTIL master_gtid_pos.
//!
//! Invariants: group `i` is handed to the log only after every group `< i` was (so the log's
//! order is the primary's order); `committed_upto` only grows and counts a group once its
//! commit returned; a failure at `i` makes every waiter `> i` give up (they are retried after
//! it). The SQL thread hands groups out in index order, has at most two per worker in flight,
//! retries a failed group only once every group before it committed and nothing after it did,
//! and publishes positions in index order (never a committed group's position ahead of an
//! earlier group that did not commit).

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use onelog_binlog::event::gtid::{
    FL_ALLOW_PARALLEL, FL_DDL, FL_GROUP_COMMIT_ID, FL_TRANSACTIONAL, FL_WAITED,
};
use onelog_binlog::GtidPos;

use super::relay::{RelayGroup, RelayQueue};
use super::status::ReplicaStatus;
use super::{ApplyError, GroupApplier, ParallelMode, ReplicaHost};

/// ER_PRIOR_COMMIT_FAILED: "Commit failed due to failure of an earlier commit on which this
/// one depends" (an applier whose wait ended `PriorFailed` returns it).
pub const ER_PRIOR_COMMIT_FAILED: u16 = 1964;
/// ER_SLAVE_FATAL_ERROR: "Fatal error: %s".
pub const ER_SLAVE_FATAL_ERROR: u16 = 1593;

/// Why a wait on the order book ended without the condition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OrderAbort {
    /// An earlier group failed: this one must be rolled back and retried after it
    /// (MariaDB's 1964 ER_PRIOR_COMMIT_FAILED).
    PriorFailed,
    /// The SQL thread is stopping.
    Stopping,
}

#[derive(Default)]
struct Book {
    /// Every group `< queued_upto` was handed to the log.
    queued_upto: u64,
    /// Every group `< committed_upto` committed.
    committed_upto: u64,
    /// Committed groups above `committed_upto` (commits return out of order).
    committed_above: BTreeSet<u64>,
    /// The lowest failed group, if any.
    failed_at: Option<u64>,
    stopping: bool,
}

/// Condition variables a waiter of the order book sleeps on, by its index (`index % STRIPES`):
/// a group that queued or committed wakes only the waiters it may release (the group after
/// it), not every worker, which with 16 workers cost ~15 wasted wake-ups per group.
const STRIPES: u64 = 64;

/// Progress of the groups of one SQL thread (module docs).
pub struct OrderBook {
    book: Mutex<Book>,
    /// `changed[i % STRIPES]`: the waiters for group `i`'s conditions (`queued_upto >= i`,
    /// `committed_upto >= i`, a failure before `i`, the stop).
    changed: Vec<Condvar>,
}

impl Default for OrderBook {
    fn default() -> Self {
        OrderBook {
            book: Mutex::new(Book::default()),
            changed: (0..STRIPES).map(|_| Condvar::new()).collect(),
        }
    }
}

impl OrderBook {
    pub fn new() -> Arc<OrderBook> {
        Arc::new(OrderBook::default())
    }

    fn stripe(&self, index: u64) -> &Condvar {
        &self.changed[(index % STRIPES) as usize]
    }

    /// Wakes the waiters of the groups whose conditions a move of `queued_upto` or
    /// `committed_upto` from `from` to `to` may have met (indexes `from + 1 ..= to`).
    fn wake_range(&self, from: u64, to: u64) {
        if to.saturating_sub(from) >= STRIPES {
            return self.wake_all();
        }
        for i in from + 1..=to {
            self.stripe(i).notify_all();
        }
    }

    fn wake_all(&self) {
        for c in &self.changed {
            c.notify_all();
        }
    }

    fn locked(&self) -> MutexGuard<'_, Book> {
        self.book.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn wait_until(&self, index: u64, f: impl Fn(&Book) -> bool) -> Result<(), OrderAbort> {
        let mut b = self.locked();
        loop {
            if b.stopping {
                return Err(OrderAbort::Stopping);
            }
            if b.failed_at.is_some_and(|f| f < index) {
                return Err(OrderAbort::PriorFailed);
            }
            if f(&b) {
                return Ok(());
            }
            b = self
                .stripe(index)
                .wait(b)
                .unwrap_or_else(|p| p.into_inner());
        }
    }

    /// [`Self::wait_until`] for at most `timeout`: Ok(false) when the time passed first.
    fn wait_until_for(
        &self,
        index: u64,
        timeout: Duration,
        f: impl Fn(&Book) -> bool,
    ) -> Result<bool, OrderAbort> {
        let deadline = Instant::now() + timeout;
        let mut b = self.locked();
        loop {
            if b.stopping {
                return Err(OrderAbort::Stopping);
            }
            if b.failed_at.is_some_and(|f| f < index) {
                return Err(OrderAbort::PriorFailed);
            }
            if f(&b) {
                return Ok(true);
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(false);
            }
            b = self
                .stripe(index)
                .wait_timeout(b, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// Group `index` was handed to the log.
    pub fn mark_queued(&self, index: u64) {
        let mut b = self.locked();
        debug_assert_eq!(b.queued_upto, index, "groups queue in order");
        let from = b.queued_upto;
        b.queued_upto = b.queued_upto.max(index + 1);
        self.wake_range(from, b.queued_upto);
    }

    /// Group `index` committed.
    pub fn mark_committed(&self, index: u64) {
        let mut b = self.locked();
        let (queued_from, committed_from) = (b.queued_upto, b.committed_upto);
        b.queued_upto = b.queued_upto.max(index + 1);
        if index == b.committed_upto {
            b.committed_upto += 1;
            loop {
                let next = b.committed_upto;
                if !b.committed_above.remove(&next) {
                    break;
                }
                b.committed_upto += 1;
            }
        } else if index > b.committed_upto {
            b.committed_above.insert(index);
        }
        self.wake_range(queued_from, b.queued_upto);
        self.wake_range(committed_from, b.committed_upto);
    }

    /// Group `index` failed: later waiters give up.
    pub fn mark_failed(&self, index: u64) {
        let mut b = self.locked();
        b.failed_at = Some(b.failed_at.map_or(index, |f| f.min(index)));
        self.wake_all();
    }

    /// After a failure was handled: groups from `index` on are handed out again.
    pub fn restart_at(&self, index: u64) {
        let mut b = self.locked();
        b.failed_at = None;
        b.queued_upto = index;
        b.committed_above.retain(|&i| i < index);
        self.wake_all();
    }

    /// Wakes every waiter with `Stopping`.
    pub fn stop(&self) {
        self.locked().stopping = true;
        self.wake_all();
    }

    /// Every group below `index` was handed to the log.
    fn prior_queued(&self, index: u64) -> bool {
        self.locked().queued_upto >= index
    }

    /// Every group below `index` committed.
    pub fn committed_below(&self, index: u64) -> bool {
        self.locked().committed_upto >= index
    }
}

/// One group's place in the order (module docs).
pub struct CommitOrder {
    pub book: Arc<OrderBook>,
    pub index: u64,
}

impl CommitOrder {
    /// Waits until every earlier group was handed to the log.
    pub fn wait_prior_queued(&self) -> Result<(), OrderAbort> {
        let i = self.index;
        self.book.wait_until(i, |b| b.queued_upto >= i)
    }

    /// Waits until every earlier group committed (its changes are visible).
    pub fn wait_prior_committed(&self) -> Result<(), OrderAbort> {
        let i = self.index;
        self.book.wait_until(i, |b| b.committed_upto >= i)
    }

    /// [`Self::wait_prior_queued`] for at most `timeout` (Ok(false): not yet).
    pub fn wait_prior_queued_for(&self, timeout: Duration) -> Result<bool, OrderAbort> {
        let i = self.index;
        self.book.wait_until_for(i, timeout, |b| b.queued_upto >= i)
    }

    /// [`Self::wait_prior_committed`] for at most `timeout` (Ok(false): not yet).
    pub fn wait_prior_committed_for(&self, timeout: Duration) -> Result<bool, OrderAbort> {
        let i = self.index;
        self.book
            .wait_until_for(i, timeout, |b| b.committed_upto >= i)
    }

    /// This group was handed to the log (call from the log's queue hook).
    pub fn queued(&self) {
        self.book.mark_queued(self.index);
    }
}

// ---------------------------------------------------------------------------------------
// The SQL thread.

/// `Slave_SQL_Running_State` texts (MariaDB's stage names, REPLICATION_FACTS.md §2.10).
pub const STATE_IDLE: &str = "Slave has read all relay log; waiting for more updates";
pub const STATE_READING: &str = "Reading event from the relay log";
pub const STATE_WAIT_START_COMMIT: &str =
    "Waiting for prior transaction to start commit before starting next transaction";
pub const STATE_WAIT_COMMIT: &str = "Waiting for prior transaction to commit";
pub const STATE_WAIT_ROOM: &str = "Waiting for room in worker thread event queue";

/// How long one wait of the SQL thread lasts before it looks at its stop flag again.
const TICK: Duration = Duration::from_millis(50);

/// What one run of the SQL thread works with.
pub struct SqlContext {
    pub host: Arc<dyn ReplicaHost>,
    pub status: Arc<ReplicaStatus>,
    pub queue: Arc<RelayQueue>,
    /// Set by STOP SLAVE: the thread ends within about a second.
    pub stop: Arc<AtomicBool>,
    /// START SLAVE UNTIL master_gtid_pos (§2.9).
    pub until: Option<GtidPos>,
}

/// Why a run of the SQL thread ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SqlEndReason {
    /// The stop flag.
    Stopped,
    /// The UNTIL position was reached.
    Until,
    /// An error, left in `Last_SQL_Errno` / `Last_SQL_Error`.
    Error,
}

/// How a run of the SQL thread ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SqlEnd {
    pub reason: SqlEndReason,
    /// True when groups it took from the queue were left unapplied: before the SQL thread
    /// runs again the queue must be cleared and the IO thread must refetch from
    /// `gtid_slave_pos` (the queue no longer follows on from what was applied).
    pub dropped: bool,
}

/// One group handed to a worker.
struct Job {
    index: u64,
    group: Arc<RelayGroup>,
}

/// A worker's answer for one group.
struct Done {
    index: u64,
    result: Result<(), ApplyError>,
}

/// Applies one group with its ticket and records the outcome in the book: committed, or
/// failed (so that later groups waiting on it give up at once).
fn apply_one(
    applier: &mut dyn GroupApplier,
    book: &Arc<OrderBook>,
    index: u64,
    group: &RelayGroup,
) -> Result<(), ApplyError> {
    let order = CommitOrder {
        book: book.clone(),
        index,
    };
    let mut r = applier.apply(group, &order);
    if r.is_ok() && !book.prior_queued(index) {
        // An applier that did not commit (a duplicate it skipped) and did not wait: the
        // groups after it must still not pass the groups before it.
        if let Err(a) = order.wait_prior_queued() {
            r = Err(ApplyError {
                code: ER_PRIOR_COMMIT_FAILED,
                message: format!("{a:?}"),
                retryable: a == OrderAbort::PriorFailed,
            });
        }
    }
    match &r {
        Ok(()) => book.mark_committed(index),
        Err(_) => book.mark_failed(index),
    }
    r
}

/// A worker thread: takes jobs in the order the SQL thread sent them (one shared channel, so
/// the lowest unfinished group is always running or first in line) until the channel closes.
fn worker_loop(
    jobs: Arc<Mutex<mpsc::Receiver<Job>>>,
    done: mpsc::Sender<Done>,
    book: Arc<OrderBook>,
    mut applier: Box<dyn GroupApplier>,
) {
    loop {
        let job = {
            let rx = jobs.lock().unwrap_or_else(|p| p.into_inner());
            rx.recv()
        };
        let Ok(job) = job else { return };
        let result = apply_one(&mut *applier, &book, job.index, &job.group);
        if done
            .send(Done {
                index: job.index,
                result,
            })
            .is_err()
        {
            return;
        }
    }
}

/// Where groups run: in the SQL thread itself, or on worker threads.
enum Pool {
    Serial {
        applier: Box<dyn GroupApplier>,
        done: VecDeque<Done>,
    },
    Workers {
        jobs: Option<mpsc::Sender<Job>>,
        done: mpsc::Receiver<Done>,
        handles: Vec<JoinHandle<()>>,
    },
}

impl Pool {
    /// `n` workers, each with its own applier (fewer if threads cannot be spawned; serial
    /// when none could).
    fn start(host: &Arc<dyn ReplicaHost>, book: &Arc<OrderBook>, n: usize) -> Pool {
        let (job_tx, job_rx) = mpsc::channel::<Job>();
        let (done_tx, done_rx) = mpsc::channel::<Done>();
        let job_rx = Arc::new(Mutex::new(job_rx));
        let mut handles = Vec::with_capacity(n);
        for w in 0..n {
            let (jobs, done, book, applier) = (
                job_rx.clone(),
                done_tx.clone(),
                book.clone(),
                host.applier(),
            );
            let spawned = std::thread::Builder::new()
                .name(format!("replica worker {w}"))
                .spawn(move || worker_loop(jobs, done, book, applier));
            match spawned {
                Ok(h) => handles.push(h),
                Err(_) => break,
            }
        }
        if handles.is_empty() {
            return Pool::Serial {
                applier: host.applier(),
                done: VecDeque::new(),
            };
        }
        Pool::Workers {
            jobs: Some(job_tx),
            done: done_rx,
            handles,
        }
    }

    /// Groups that may be in flight at once (about two per worker).
    fn capacity(&self) -> usize {
        match self {
            Pool::Serial { .. } => 1,
            Pool::Workers { handles, .. } => handles.len() * 2,
        }
    }

    fn is_serial(&self) -> bool {
        matches!(self, Pool::Serial { .. })
    }

    /// Hands group `index` out (serial: applies it now).
    fn dispatch(&mut self, book: &Arc<OrderBook>, index: u64, group: Arc<RelayGroup>) {
        match self {
            Pool::Serial { applier, done } => {
                let result = apply_one(&mut **applier, book, index, &group);
                done.push_back(Done { index, result });
            }
            Pool::Workers { jobs, .. } => {
                let sent = jobs.as_ref().map(|tx| tx.send(Job { index, group }));
                debug_assert!(
                    matches!(sent, Some(Ok(()))),
                    "workers outlive the SQL thread"
                );
            }
        }
    }

    /// The next answer, waiting up to `timeout` (None: nothing yet).
    fn next_done(&mut self, timeout: Duration) -> Option<Done> {
        match self {
            Pool::Serial { done, .. } => done.pop_front(),
            Pool::Workers { done, .. } if timeout.is_zero() => done.try_recv().ok(),
            Pool::Workers { done, .. } => done.recv_timeout(timeout).ok(),
        }
    }

    /// False once a worker ended before the shutdown (its applier panicked): its group will
    /// never be answered.
    fn alive(&self) -> bool {
        match self {
            Pool::Serial { .. } => true,
            Pool::Workers { handles, .. } => handles.iter().all(|h| !h.is_finished()),
        }
    }

    /// Closes the job channel and joins the workers.
    fn shutdown(&mut self) {
        if let Pool::Workers { jobs, handles, .. } = self {
            jobs.take();
            for h in handles.drain(..) {
                let _ = h.join();
            }
        }
    }
}

/// What a group must wait for before it is handed out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Gate {
    Now,
    /// Every earlier group started to commit (conservative: a new batch).
    PriorQueued,
    /// Every earlier group committed (DDL, non-transactional, a retried group, the group
    /// after one that runs alone).
    PriorCommitted,
}

/// The outcome of waiting at a gate.
enum GateEnd {
    Open,
    /// An earlier group failed: the failure is handled first.
    PriorFailed,
    /// The stop flag.
    Stop,
}

/// The state of one run of the SQL thread (see [`run_sql_thread`]).
struct Sql {
    ctx: SqlContext,
    book: Arc<OrderBook>,
    mode: ParallelMode,
    pool: Pool,
    /// The index the next group taken from the queue gets.
    next_index: u64,
    /// Groups with an index that wait to be handed out, in index order; every one is above
    /// every group in flight.
    pending: VecDeque<(u64, Arc<RelayGroup>)>,
    in_flight: BTreeMap<u64, Arc<RelayGroup>>,
    /// Committed groups above `exec_next` (their status update waits for the order).
    committed: BTreeMap<u64, Arc<RelayGroup>>,
    /// Every group below it committed and is in the status.
    exec_next: u64,
    /// Groups that failed since the last failure was handled, and their errors.
    failed: BTreeMap<u64, (Arc<RelayGroup>, ApplyError)>,
    /// Retries per group index.
    retries: BTreeMap<u64, u64>,
    /// Groups in flight or failed that were started speculatively (optimistic/aggressive,
    /// before the groups before them committed): any error of theirs is retried, as
    /// MariaDB turns it into a deadlock kill and retry (§2.12).
    speculative: BTreeSet<u64>,
    /// The last group handed out: its commit id and whether later groups must wait for it to
    /// commit.
    last: Option<(Option<u64>, bool, u64)>,
    /// The next group is a retry: it runs alone.
    retry_at: Option<u64>,
    /// UNTIL: the domains not reached yet (None: no UNTIL).
    until: Option<GtidPos>,
    /// UNTIL reached: take no more groups.
    until_reached: bool,
    dropped: bool,
}

/// Runs the SQL thread until the stop flag, the UNTIL position or an error. Groups are
/// applied in the thread itself (`slave_parallel_threads` = 0 or `slave_parallel_mode` =
/// none) or on `slave_parallel_threads` workers ("replica worker N").
///
/// Order: one global commit order over all domains (MariaDB allows domains to overtake each
/// other; one order is simpler and never wrong, at the price of parallelism across domains).
/// What may start early follows §2.12: conservative/minimal start a group of a new batch
/// (another commit id) only once every earlier group started to commit; optimistic and
/// aggressive start transactional groups at once; DDL and non-transactional groups start after
/// every earlier group committed and run alone.
///
/// Failures: a retryable error (or 1964, an earlier group failed; or any error of a group that
/// optimistic/aggressive mode started before the groups before it committed) makes the thread
/// let every group in flight end, then retry the lowest failed group alone, up to
/// `slave_transaction_retries` times (`Retried_transactions`), then go on in parallel. Any
/// other error stops the thread with `Last_SQL_Errno` / `Last_SQL_Error` set; the groups not
/// committed stay unapplied.
pub fn run_sql_thread(ctx: SqlContext) -> SqlEnd {
    let mut sql = Sql::new(ctx);
    let reason = sql.run();
    sql.finish(reason)
}

impl Sql {
    fn new(ctx: SqlContext) -> Sql {
        let book = OrderBook::new();
        let settings = ctx.host.settings();
        let (mode, threads) = (
            settings.slave_parallel_mode,
            settings.slave_parallel_threads,
        );
        let pool = if threads == 0 || mode == ParallelMode::None {
            Pool::Serial {
                applier: ctx.host.applier(),
                done: VecDeque::new(),
            }
        } else {
            Pool::start(&ctx.host, &book, threads)
        };
        let until = ctx.until.as_ref().map(|u| {
            let applied = ctx.host.gtid_slave_pos();
            let mut rest = GtidPos::new();
            for g in u.iter().filter(|g| !applied.contains(*g)) {
                rest.set(g);
            }
            rest
        });
        let until_reached = until.as_ref().is_some_and(GtidPos::is_empty);
        ctx.status.update(|s| {
            s.sql_running = true;
            s.sql_state = STATE_IDLE.into();
            s.until_gtid = ctx.until.clone();
        });
        Sql {
            ctx,
            book,
            mode,
            pool,
            next_index: 0,
            pending: VecDeque::new(),
            in_flight: BTreeMap::new(),
            committed: BTreeMap::new(),
            exec_next: 0,
            failed: BTreeMap::new(),
            retries: BTreeMap::new(),
            speculative: BTreeSet::new(),
            last: None,
            retry_at: None,
            until,
            until_reached,
            dropped: false,
        }
    }

    fn stopping(&self) -> bool {
        self.ctx.stop.load(Ordering::Relaxed)
    }

    fn set_state(&self, state: &'static str) {
        self.ctx.status.update(|s| {
            if s.sql_state != state {
                s.sql_state = state.into();
            }
        });
    }

    /// The main loop.
    fn run(&mut self) -> SqlEndReason {
        loop {
            if self.stopping() {
                return SqlEndReason::Stopped;
            }
            self.collect(Duration::ZERO);
            if !self.failed.is_empty() {
                if !self.in_flight.is_empty() {
                    self.collect(TICK);
                    continue;
                }
                if let Err(reason) = self.handle_failure() {
                    return reason;
                }
            }
            if self.until_reached && self.pending.is_empty() {
                if self.in_flight.is_empty() {
                    return SqlEndReason::Until;
                }
                self.collect(TICK);
                continue;
            }
            if !self.in_flight.is_empty() && !self.pool.alive() {
                self.ctx.status.update(|s| {
                    s.last_sql_errno = ER_SLAVE_FATAL_ERROR;
                    s.last_sql_error = "Fatal error: a replica worker thread ended".into();
                });
                return SqlEndReason::Error;
            }
            if self.in_flight.len() >= self.pool.capacity() {
                self.set_state(STATE_WAIT_ROOM);
                self.collect(TICK);
                continue;
            }
            let Some((index, group)) = self.next_group() else {
                continue;
            };
            match self.gate_wait(index, &group) {
                GateEnd::Open => self.dispatch(index, group),
                GateEnd::PriorFailed => {
                    // Handled once the failed group's answer is in.
                    self.pending.push_front((index, group));
                    self.collect(TICK);
                }
                GateEnd::Stop => {
                    self.pending.push_front((index, group));
                    return SqlEndReason::Stopped;
                }
            }
        }
    }

    /// Takes in the workers' answers, waiting up to `timeout` for the first.
    fn collect(&mut self, timeout: Duration) {
        let mut wait = timeout;
        while let Some(done) = self.pool.next_done(wait) {
            wait = Duration::ZERO;
            let Some(group) = self.in_flight.remove(&done.index) else {
                debug_assert!(false, "an answer for a group not in flight");
                continue;
            };
            match done.result {
                Ok(()) => {
                    self.retries.remove(&done.index);
                    self.speculative.remove(&done.index);
                    self.committed.insert(done.index, group);
                }
                Err(e) => {
                    self.failed.insert(done.index, (group, e));
                }
            }
        }
        self.publish_committed();
        if self.in_flight.is_empty() && self.pending.is_empty() && self.ctx.queue.is_empty() {
            self.ctx.status.update(|s| s.sql_busy = false);
        }
    }

    /// Puts the committed groups that are next in order into the status.
    fn publish_committed(&mut self) {
        if !self.committed.contains_key(&self.exec_next) {
            return;
        }
        let parallel = !self.pool.is_serial();
        let status = self.ctx.status.clone();
        status.update(|s| {
            while let Some(g) = self.committed.remove(&self.exec_next) {
                self.exec_next += 1;
                s.exec_master_log_file.clone_from(&g.master_log_file);
                s.exec_master_log_pos = g.end_log_pos;
                s.executed_log_entries += g.events.len() as u64;
                if g.flags2 & FL_DDL != 0 {
                    s.ddl_groups += 1;
                } else if g.flags2 & FL_TRANSACTIONAL != 0 {
                    s.transactional_groups += 1;
                } else {
                    s.non_transactional_groups += 1;
                }
                if parallel {
                    s.last_master_timestamp = g.timestamp;
                }
            }
        });
    }

    /// The next group to hand out: a pending one, else one from the queue (None after a
    /// wait of one tick with nothing, or for a group UNTIL skips).
    fn next_group(&mut self) -> Option<(u64, Arc<RelayGroup>)> {
        if let Some(p) = self.pending.pop_front() {
            return Some(p);
        }
        let asked = Instant::now();
        let group = match self.ctx.queue.pop(TICK) {
            Some(g) => g,
            None => {
                if asked.elapsed() < TICK / 4 {
                    // A closed queue (the IO thread is being stopped) answers at once.
                    std::thread::sleep(TICK / 4);
                }
                if self.in_flight.is_empty() {
                    self.set_state(STATE_IDLE);
                    self.ctx.status.update(|s| s.sql_busy = false);
                }
                return None;
            }
        };
        if !self.until_allows(&group) {
            self.dropped = true;
            return None;
        }
        let index = self.next_index;
        self.next_index += 1;
        Some((index, Arc::new(group)))
    }

    /// UNTIL master_gtid_pos: true when `group` is applied. Groups of domains not listed
    /// (or listed and reached) are not applied; the group with the listed GTID (or the first
    /// one past it) reaches its domain; once every domain is reached no more groups are taken.
    fn until_allows(&mut self, group: &RelayGroup) -> bool {
        let Some(rest) = self.until.as_mut() else {
            return true;
        };
        let gtid = group.gtid;
        let Some(target) = rest.get(gtid.domain_id) else {
            return false;
        };
        if gtid.seq_no < target.seq_no {
            return true;
        }
        rest.remove(gtid.domain_id);
        self.until_reached = rest.is_empty();
        gtid.seq_no == target.seq_no
    }

    /// The gate of group `index` (see [`Gate`]) and whether later groups must wait for it to
    /// commit.
    fn gate(&self, index: u64, group: &RelayGroup) -> (Gate, bool) {
        if self.pool.is_serial() || self.retry_at == Some(index) {
            return (Gate::PriorCommitted, true);
        }
        let after_alone = self
            .last
            .is_some_and(|(_, alone, i)| alone && i + 1 == index);
        let same_batch = group.flags2 & FL_GROUP_COMMIT_ID != 0
            && self
                .last
                .is_some_and(|(c, _, i)| i + 1 == index && c.is_some() && c == group.commit_id);
        let f = group.flags2;
        let alone = f & FL_DDL != 0 || f & FL_TRANSACTIONAL == 0;
        let gate = match self.mode {
            ParallelMode::None => Gate::PriorCommitted,
            _ if alone || after_alone => Gate::PriorCommitted,
            ParallelMode::Minimal => Gate::PriorQueued,
            ParallelMode::Conservative if same_batch => Gate::Now,
            ParallelMode::Conservative => Gate::PriorQueued,
            ParallelMode::Optimistic if f & FL_ALLOW_PARALLEL == 0 || f & FL_WAITED != 0 => {
                Gate::PriorCommitted
            }
            ParallelMode::Optimistic | ParallelMode::Aggressive => Gate::Now,
        };
        (gate, alone)
    }

    /// Waits until group `index` may be handed out, taking in answers meanwhile.
    fn gate_wait(&mut self, index: u64, group: &RelayGroup) -> GateEnd {
        let (gate, _) = self.gate(index, group);
        let order = CommitOrder {
            book: self.book.clone(),
            index,
        };
        let state = match gate {
            Gate::Now => return GateEnd::Open,
            Gate::PriorQueued => STATE_WAIT_START_COMMIT,
            Gate::PriorCommitted => STATE_WAIT_COMMIT,
        };
        loop {
            if self.stopping() {
                return GateEnd::Stop;
            }
            let r = match gate {
                Gate::PriorQueued => order.wait_prior_queued_for(TICK),
                _ => order.wait_prior_committed_for(TICK),
            };
            match r {
                Ok(true) => return GateEnd::Open,
                Ok(false) => {
                    self.set_state(state);
                    self.collect(Duration::ZERO);
                }
                Err(OrderAbort::PriorFailed) => return GateEnd::PriorFailed,
                Err(OrderAbort::Stopping) => return GateEnd::Stop,
            }
        }
    }

    /// Hands group `index` out and records it.
    fn dispatch(&mut self, index: u64, group: Arc<RelayGroup>) {
        let (gate, alone) = self.gate(index, &group);
        if gate == Gate::Now
            && matches!(
                self.mode,
                ParallelMode::Optimistic | ParallelMode::Aggressive
            )
            && !self.book.committed_below(index)
        {
            self.speculative.insert(index);
        }
        let was_idle = self.in_flight.is_empty();
        let serial = self.pool.is_serial();
        self.ctx.status.update(|s| {
            s.sql_busy = true;
            s.sql_state = STATE_READING.into();
            if serial || was_idle {
                s.last_master_timestamp = group.timestamp;
            }
        });
        self.last = Some((
            group.commit_id,
            alone || self.retry_at == Some(index),
            index,
        ));
        if self.retry_at == Some(index) {
            self.retry_at = None;
        }
        self.in_flight.insert(index, group.clone());
        self.pool.dispatch(&self.book, index, group);
    }

    /// Every group in flight ended and some failed: retry the lowest failed group alone, or
    /// stop with its error.
    fn handle_failure(&mut self) -> Result<(), SqlEndReason> {
        debug_assert!(self.in_flight.is_empty());
        let Some((&f, (_, err))) = self.failed.first_key_value() else {
            return Ok(());
        };
        let err = err.clone();
        let later_committed = self.exec_next > f || self.committed.keys().any(|&i| i > f);
        let may_retry = |i: u64, e: &ApplyError| e.retryable || self.speculative.contains(&i);
        // Count a retry for every group that failed on its own (1964 is a consequence).
        let own: Vec<u64> = self
            .failed
            .iter()
            .filter(|(&i, (_, e))| may_retry(i, e) && e.code != ER_PRIOR_COMMIT_FAILED)
            .map(|(&i, _)| i)
            .collect();
        let limit = self.ctx.host.settings().slave_transaction_retries;
        let retryable = may_retry(f, &err) || err.code == ER_PRIOR_COMMIT_FAILED;
        let tries = self.retries.get(&f).copied().unwrap_or(0);
        if !retryable || later_committed || (err.code != ER_PRIOR_COMMIT_FAILED && tries >= limit) {
            self.ctx.status.update(|s| {
                s.last_sql_errno = err.code;
                s.last_sql_error = err.message.clone();
            });
            return Err(SqlEndReason::Error);
        }
        for i in &own {
            *self.retries.entry(*i).or_insert(0) += 1;
        }
        let n = own.len() as u64;
        self.ctx.status.update(|s| s.retried_transactions += n);
        debug_assert!(
            self.book.committed_below(f),
            "every group before a retry committed"
        );
        self.book.restart_at(f);
        self.speculative.clear();
        let failed = std::mem::take(&mut self.failed);
        for (i, (g, _)) in failed.into_iter().rev() {
            self.pending.push_front((i, g));
        }
        self.retry_at = Some(f);
        self.last = None;
        Ok(())
    }

    /// Ends the run: stops the book (a stop abandons the groups waiting), lets the groups in
    /// flight end, joins the workers and leaves the status as a stopped SQL thread's.
    fn finish(mut self, reason: SqlEndReason) -> SqlEnd {
        if reason != SqlEndReason::Until {
            self.book.stop();
        }
        while !self.in_flight.is_empty() {
            let before = self.in_flight.len();
            self.collect(TICK);
            if self.in_flight.len() == before && (self.pool.is_serial() || !self.pool.alive()) {
                break;
            }
        }
        self.pool.shutdown();
        self.publish_committed();
        let dropped = self.dropped || !self.pending.is_empty() || !self.failed.is_empty();
        self.ctx.status.update(|s| {
            s.sql_running = false;
            s.sql_state.clear();
            s.sql_busy = false;
            s.until_gtid = None;
        });
        SqlEnd { reason, dropped }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replica::ReplicaSettings;

    #[test]
    fn order_book_tracks_prefixes_and_failures() {
        let book = OrderBook::new();
        let o1 = CommitOrder {
            book: book.clone(),
            index: 1,
        };
        book.mark_queued(0);
        o1.wait_prior_queued().unwrap();
        book.mark_committed(1);
        assert!(!book.committed_below(1));
        book.mark_committed(0);
        assert!(book.committed_below(2));
        book.mark_failed(2);
        let o3 = CommitOrder { book, index: 3 };
        assert_eq!(o3.wait_prior_queued(), Err(OrderAbort::PriorFailed));
    }

    // -- The SQL thread over a fake host and applier ------------------------------------

    use std::collections::HashMap;
    use std::sync::atomic::AtomicU64;

    use onelog_binlog::Gtid;

    use crate::replica::StatusSnapshot;

    /// What the fake applier shares: the "log" it commits to and the failures to inject.
    #[derive(Default)]
    struct Shared {
        log: Mutex<Vec<Gtid>>,
        /// seq_no -> how many attempts fail with a retryable 1213.
        fail: Mutex<HashMap<u64, u32>>,
        /// seq_no that fails with a fatal 1062.
        fatal: Option<u64>,
        /// seq_nos whose first attempt fails with a 1032 that is not retryable.
        fatal_once: Mutex<Vec<u64>>,
        /// (a, b): group a waits until group b started.
        hold: Option<(u64, u64)>,
        /// Groups that entered `apply`, in order.
        entered: Mutex<Vec<u64>>,
        /// seq_nos the applier skips as duplicates (Ok without waiting or committing).
        skip: Vec<u64>,
        /// Sleep per group, microseconds (upper bound of a random sleep).
        sleep_us: u64,
        seed: AtomicU64,
        /// Appliers inside `apply` now, and the most seen at once.
        inside: AtomicU64,
        most_inside: AtomicU64,
    }

    struct FakeHost {
        threads: usize,
        mode: ParallelMode,
        retries: u64,
        shared: Arc<Shared>,
    }

    impl ReplicaHost for FakeHost {
        fn server_id(&self) -> u32 {
            2
        }
        fn gtid_slave_pos(&self) -> GtidPos {
            let mut p = GtidPos::new();
            for g in self.shared.log.lock().unwrap().iter() {
                p.set(*g);
            }
            p
        }
        fn gtid_current_pos(&self) -> GtidPos {
            self.gtid_slave_pos()
        }
        fn gtid_strict_mode(&self) -> bool {
            false
        }
        fn settings(&self) -> ReplicaSettings {
            ReplicaSettings {
                slave_parallel_threads: self.threads,
                slave_parallel_mode: self.mode,
                slave_transaction_retries: self.retries,
                ..ReplicaSettings::default()
            }
        }
        fn applier(&self) -> Box<dyn GroupApplier> {
            let seed = self.shared.seed.fetch_add(0x9E37_79B9, Ordering::Relaxed) | 1;
            Box::new(FakeApplier {
                shared: self.shared.clone(),
                rng: seed,
            })
        }
    }

    struct FakeApplier {
        shared: Arc<Shared>,
        rng: u64,
    }

    impl FakeApplier {
        fn sleep(&mut self) {
            self.rng ^= self.rng << 13;
            self.rng ^= self.rng >> 7;
            self.rng ^= self.rng << 17;
            if self.shared.sleep_us > 0 {
                let us = self.rng % self.shared.sleep_us;
                std::thread::sleep(Duration::from_micros(us));
            }
        }
    }

    fn abort_error(a: OrderAbort) -> ApplyError {
        match a {
            OrderAbort::PriorFailed => ApplyError {
                code: ER_PRIOR_COMMIT_FAILED,
                message: "Commit failed due to failure of an earlier commit on which this one \
                          depends"
                    .into(),
                retryable: true,
            },
            OrderAbort::Stopping => ApplyError::fatal(1927, "Connection was killed"),
        }
    }

    impl GroupApplier for FakeApplier {
        fn apply(&mut self, group: &RelayGroup, order: &CommitOrder) -> Result<(), ApplyError> {
            let now = self.shared.inside.fetch_add(1, Ordering::SeqCst) + 1;
            self.shared.most_inside.fetch_max(now, Ordering::SeqCst);
            let r = self.apply_inner(group, order);
            self.shared.inside.fetch_sub(1, Ordering::SeqCst);
            r
        }
    }

    impl FakeApplier {
        fn apply_inner(
            &mut self,
            group: &RelayGroup,
            order: &CommitOrder,
        ) -> Result<(), ApplyError> {
            self.sleep();
            let seq = group.gtid.seq_no;
            self.shared.entered.lock().unwrap().push(seq);
            if let Some((a, b)) = self.shared.hold {
                // Group a waits (bounded) until group b started.
                for _ in 0..500 {
                    if seq != a || self.shared.entered.lock().unwrap().contains(&b) {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
            }
            // An error while applying, before the commit step (e.g. a row not found that an
            // earlier group inserts).
            let mut once = self.shared.fatal_once.lock().unwrap();
            if let Some(at) = once.iter().position(|&s| s == seq) {
                once.remove(at);
                return Err(ApplyError::fatal(1032, "Can't find record in 't1'"));
            }
            drop(once);
            if self.shared.skip.contains(&seq) {
                // gtid_ignore_duplicates: already applied, nothing to commit, no wait.
                return Ok(());
            }
            let alone = group.flags2 & FL_DDL != 0 || group.flags2 & FL_TRANSACTIONAL == 0;
            if alone {
                order.wait_prior_committed().map_err(abort_error)?;
            } else {
                order.wait_prior_queued().map_err(abort_error)?;
            }
            if self.shared.fatal == Some(seq) {
                return Err(ApplyError::fatal(
                    1062,
                    format!("Duplicate entry '{seq}' for key 'PRIMARY'"),
                ));
            }
            if let Some(n) = self.shared.fail.lock().unwrap().get_mut(&seq) {
                if *n > 0 {
                    *n -= 1;
                    return Err(ApplyError {
                        code: 1213,
                        message: "Deadlock found when trying to get lock; try restarting \
                                  transaction"
                            .into(),
                        retryable: true,
                    });
                }
            }
            self.shared.log.lock().unwrap().push(group.gtid);
            order.queued();
            // The log's flush after the group was queued.
            self.sleep();
            Ok(())
        }
    }

    /// 1..=n in domain 0: batches of three commit ids, every 17th a DDL, every 23rd
    /// non-transactional.
    fn groups(n: u64) -> Vec<RelayGroup> {
        (1..=n)
            .map(|seq| {
                let flags2 = if seq % 17 == 0 {
                    FL_DDL | FL_STANDALONE
                } else if seq % 23 == 0 {
                    FL_GROUP_COMMIT_ID
                } else {
                    FL_GROUP_COMMIT_ID | FL_TRANSACTIONAL | FL_ALLOW_PARALLEL
                };
                RelayGroup {
                    gtid: Gtid::new(0, 1, seq),
                    flags2,
                    commit_id: (flags2 & FL_GROUP_COMMIT_ID != 0).then_some(1000 + seq / 3),
                    timestamp: 1_700_000_000 + seq as u32,
                    events: vec![vec![0; 19]; 3],
                    master_log_file: "mb.000001".into(),
                    end_log_pos: 1000 + seq * 100,
                }
            })
            .collect()
    }

    use onelog_binlog::event::gtid::FL_STANDALONE;

    struct Run {
        status: Arc<ReplicaStatus>,
        queue: Arc<RelayQueue>,
        stop: Arc<AtomicBool>,
        thread: JoinHandle<SqlEnd>,
    }

    fn start(host: FakeHost, input: &[RelayGroup], until: Option<GtidPos>) -> Run {
        let status = Arc::new(ReplicaStatus::new());
        let queue = Arc::new(RelayQueue::new(64 << 20));
        for g in input {
            queue.push(g.clone(), Duration::from_secs(1)).unwrap();
        }
        let stop = Arc::new(AtomicBool::new(false));
        // As the control does: running from the moment it is spawned.
        status.update(|s| s.sql_running = true);
        let ctx = SqlContext {
            host: Arc::new(host),
            status: status.clone(),
            queue: queue.clone(),
            stop: stop.clone(),
            until,
        };
        let thread = std::thread::spawn(move || run_sql_thread(ctx));
        Run {
            status,
            queue,
            stop,
            thread,
        }
    }

    /// Waits (bounded) until `done` holds, then stops the thread and returns how it ended.
    fn finish(run: Run, done: impl Fn(&StatusSnapshot) -> bool) -> (SqlEnd, StatusSnapshot) {
        for _ in 0..3000 {
            let s = run.status.snapshot();
            if done(&s) || !s.sql_running {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        run.stop.store(true, Ordering::Relaxed);
        let end = run.thread.join().unwrap();
        (end, run.status.snapshot())
    }

    fn host(threads: usize, mode: ParallelMode, shared: &Arc<Shared>) -> FakeHost {
        FakeHost {
            threads,
            mode,
            retries: 10,
            shared: shared.clone(),
        }
    }

    fn shared(sleep_us: u64) -> Arc<Shared> {
        Arc::new(Shared {
            sleep_us,
            ..Shared::default()
        })
    }

    fn gtids(input: &[RelayGroup]) -> Vec<Gtid> {
        input.iter().map(|g| g.gtid).collect()
    }

    #[test]
    fn commit_order_holds_in_every_mode() {
        let input = groups(200);
        let modes = [
            (4, ParallelMode::Optimistic),
            (4, ParallelMode::Aggressive),
            (4, ParallelMode::Conservative),
            (4, ParallelMode::Minimal),
            (4, ParallelMode::None),
            (0, ParallelMode::Optimistic),
        ];
        for (threads, mode) in modes {
            let sh = shared(300);
            let run = start(host(threads, mode, &sh), &input, None);
            let (end, s) = finish(run, |s| s.exec_master_log_pos == 1000 + 200 * 100);
            assert_eq!(end.reason, SqlEndReason::Stopped);
            assert!(!end.dropped);
            assert_eq!(*sh.log.lock().unwrap(), gtids(&input), "{threads} {mode:?}");
            assert_eq!(s.exec_master_log_file, "mb.000001");
            assert_eq!(s.executed_log_entries, 600);
            assert_eq!(s.ddl_groups, 11);
            assert_eq!(s.non_transactional_groups, 8);
            assert_eq!(s.transactional_groups, 181);
            assert_eq!(s.retried_transactions, 0);
            assert!(!s.sql_running);
            assert_eq!(s.sql_state, "");
            assert_eq!(s.last_sql_errno, 0);
            let most = sh.most_inside.load(Ordering::SeqCst);
            if threads == 0 || mode == ParallelMode::None {
                assert_eq!(most, 1, "{mode:?}: one group at a time");
            } else {
                assert!(most > 1, "{mode:?}: groups overlap");
                assert!(most <= 4, "{mode:?}: at most one group per worker");
            }
        }
    }

    #[test]
    fn retryable_failures_are_retried_in_order() {
        let input = groups(200);
        for threads in [4, 0] {
            let sh = shared(300);
            *sh.fail.lock().unwrap() = [5, 50, 51, 52, 120, 199].map(|s| (s, 1)).into();
            let run = start(host(threads, ParallelMode::Optimistic, &sh), &input, None);
            let (end, s) = finish(run, |s| s.exec_master_log_pos == 1000 + 200 * 100);
            assert_eq!(end.reason, SqlEndReason::Stopped);
            assert_eq!(*sh.log.lock().unwrap(), gtids(&input));
            assert_eq!(s.retried_transactions, 6);
            assert_eq!(s.last_sql_errno, 0);
        }
    }

    #[test]
    fn skipped_groups_keep_the_order() {
        let input = groups(200);
        let skip: Vec<u64> = (1..=200).filter(|s| s % 5 == 0).collect();
        let sh = Arc::new(Shared {
            sleep_us: 300,
            skip: skip.clone(),
            ..Shared::default()
        });
        let run = start(host(4, ParallelMode::Aggressive, &sh), &input, None);
        let (end, s) = finish(run, |s| s.exec_master_log_pos == 1000 + 200 * 100);
        assert_eq!(end.reason, SqlEndReason::Stopped);
        let want: Vec<Gtid> = gtids(&input)
            .into_iter()
            .filter(|g| !skip.contains(&g.seq_no))
            .collect();
        assert_eq!(*sh.log.lock().unwrap(), want);
        assert_eq!(s.exec_master_log_pos, 1000 + 200 * 100);
    }

    #[test]
    fn retries_are_bounded() {
        let input = groups(40);
        let sh = shared(100);
        *sh.fail.lock().unwrap() = [(30, 100)].into();
        let mut h = host(4, ParallelMode::Optimistic, &sh);
        h.retries = 3;
        let (end, s) = finish(start(h, &input, None), |_| false);
        assert_eq!(end.reason, SqlEndReason::Error);
        assert!(end.dropped);
        assert_eq!(s.retried_transactions, 3);
        assert_eq!(
            sh.fail.lock().unwrap()[&30],
            96,
            "the first attempt and 3 retries"
        );
        assert_eq!(s.last_sql_errno, 1213);
        assert_eq!(*sh.log.lock().unwrap(), gtids(&input[..29]));
    }

    #[test]
    fn fatal_error_stops_with_nothing_after_it() {
        let input = groups(200);
        for threads in [4, 0] {
            let sh = Arc::new(Shared {
                fatal: Some(100),
                sleep_us: 200,
                ..Shared::default()
            });
            let run = start(host(threads, ParallelMode::Aggressive, &sh), &input, None);
            let (end, s) = finish(run, |_| false);
            assert_eq!(end.reason, SqlEndReason::Error);
            assert!(end.dropped);
            assert!(!s.sql_running);
            assert_eq!(s.last_sql_errno, 1062);
            assert_eq!(s.last_sql_error, "Duplicate entry '100' for key 'PRIMARY'");
            assert_eq!(*sh.log.lock().unwrap(), gtids(&input[..99]));
            assert_eq!(s.exec_master_log_pos, 1000 + 99 * 100);
            // In parallel it may have run before 99 committed (speculatively): then it was
            // retried once, alone, before the error was taken as real.
            assert!(s.retried_transactions <= u64::from(threads > 0));
        }
    }

    #[test]
    fn any_error_of_a_speculative_group_is_retried() {
        let input = groups(200);
        // 39 waits until 40 started, so 40 surely runs before 39 committed.
        let sh = Arc::new(Shared {
            sleep_us: 300,
            hold: Some((39, 40)),
            fatal_once: Mutex::new(vec![40]),
            ..Shared::default()
        });
        let run = start(host(4, ParallelMode::Optimistic, &sh), &input, None);
        let (end, s) = finish(run, |s| s.exec_master_log_pos == 1000 + 200 * 100);
        assert_eq!(end.reason, SqlEndReason::Stopped);
        assert_eq!(*sh.log.lock().unwrap(), gtids(&input));
        assert_eq!(s.last_sql_errno, 0);
        assert_eq!(s.retried_transactions, 1);
        // The same error in the serial thread is real.
        let sh = shared(0);
        *sh.fatal_once.lock().unwrap() = vec![40];
        let run = start(host(0, ParallelMode::Optimistic, &sh), &input, None);
        let (end, s) = finish(run, |_| false);
        assert_eq!(end.reason, SqlEndReason::Error);
        assert_eq!((s.last_sql_errno, s.retried_transactions), (1032, 0));
        assert_eq!(*sh.log.lock().unwrap(), gtids(&input[..39]));
    }

    #[test]
    fn until_stops_at_the_gtid_and_skips_other_domains() {
        // Domain 0 seq 1..=80 with domain 7 groups in between.
        let mut input = Vec::new();
        for (i, mut g) in groups(80).into_iter().enumerate() {
            input.push(g.clone());
            if i % 10 == 0 {
                g.gtid = Gtid::new(7, 1, i as u64 + 1);
                input.push(g);
            }
        }
        for threads in [4, 0] {
            let sh = shared(200);
            let until: GtidPos = "0-1-60".parse().unwrap();
            let run = start(
                host(threads, ParallelMode::Optimistic, &sh),
                &input,
                Some(until),
            );
            let (end, s) = finish(run, |_| false);
            assert_eq!(end.reason, SqlEndReason::Until);
            let want: Vec<Gtid> = (1..=60).map(|q| Gtid::new(0, 1, q)).collect();
            assert_eq!(*sh.log.lock().unwrap(), want);
            assert_eq!(s.until_gtid, None);
            assert!(!s.sql_running);
            assert_eq!(s.exec_master_log_pos, 1000 + 60 * 100);
        }
        // Already reached: stops at once, applies nothing.
        let sh = shared(0);
        sh.log.lock().unwrap().push(Gtid::new(0, 1, 5));
        let until: GtidPos = "0-1-3".parse().unwrap();
        let run = start(host(4, ParallelMode::Optimistic, &sh), &input, Some(until));
        let (end, _) = finish(run, |_| false);
        assert_eq!(end.reason, SqlEndReason::Until);
        assert_eq!(sh.log.lock().unwrap().len(), 1);
    }

    #[test]
    fn stop_while_busy_ends_and_leaves_a_prefix() {
        let input = groups(2000);
        for threads in [4, 0] {
            let sh = shared(20_000);
            let run = start(host(threads, ParallelMode::Optimistic, &sh), &input, None);
            let (end, s) = finish(run, |s| s.exec_master_log_pos > 1000 + 10 * 100);
            assert_eq!(end.reason, SqlEndReason::Stopped);
            let log = sh.log.lock().unwrap().clone();
            assert!(log.len() < input.len());
            assert_eq!(log, gtids(&input[..log.len()]));
            assert_eq!(s.exec_master_log_pos, 1000 + log.len() as u64 * 100);
            assert!(!s.sql_running);
        }
    }

    #[test]
    fn idle_thread_reports_waiting_for_more_updates() {
        let sh = shared(0);
        let run = start(host(2, ParallelMode::Optimistic, &sh), &groups(3), None);
        let status = run.status.clone();
        let queue = run.queue.clone();
        let (end, _) = finish(run, |s| {
            s.exec_master_log_pos == 1300 && s.sql_state == STATE_IDLE && !s.sql_busy
        });
        assert_eq!(end.reason, SqlEndReason::Stopped);
        assert!(queue.is_empty());
        assert_eq!(status.snapshot().last_master_timestamp, 1_700_000_003);
    }

    /// Groups per second through the SQL thread with an applier that only keeps the order
    /// (`cargo test --release -p onelog-replication throughput -- --ignored --nocapture`).
    #[test]
    #[ignore]
    fn throughput() {
        let n = 100_000;
        let input = groups(n);
        for (threads, mode) in [
            (0, ParallelMode::Optimistic),
            (4, ParallelMode::Optimistic),
            (4, ParallelMode::Conservative),
        ] {
            let sh = shared(0);
            let t0 = Instant::now();
            let run = start(host(threads, mode, &sh), &input, None);
            let (_, s) = finish(run, |s| s.exec_master_log_pos == 1000 + n * 100);
            let secs = t0.elapsed().as_secs_f64();
            assert_eq!(sh.log.lock().unwrap().len() as u64, n);
            assert_eq!(s.exec_master_log_pos, 1000 + n * 100);
            println!(
                "{threads} workers {mode:?}: {:.0} groups/s",
                n as f64 / secs
            );
        }
    }
}
