//! Table-level locks: `LOCK TABLES`, `FLUSH TABLES [t, ...] WITH READ LOCK` and the waits of
//! the statements of other sessions they hold up (MariaDB's metadata locks, reduced to what
//! those statements need). Row locks are the engine's (`onelog_engine::lock`); this module
//! knows tables by `(database, name)` only.
//!
//! Owns [`TableLocks`] (one per server: which connection holds which table in which mode,
//! which connections hold the global read lock, which `LOCK TABLES` wait, and every session's
//! published table uses) and [`SessionTableLocks`] (a session's handle: the tables it locked,
//! under which aliases, and the tables its open transaction uses; released when it is dropped,
//! i.e. at disconnect).
//!
//! Modes, as MariaDB's metadata locks on InnoDB tables (measured on 10.11): `READ [LOCAL]`
//! (MDL_SHARED_READ_ONLY) lets other sessions read and makes their writes wait; `[LOW_PRIORITY]
//! WRITE` (MDL_SHARED_NO_READ_WRITE) makes their reads and writes wait; `WRITE CONCURRENT`
//! (MDL_SHARED_WRITE) makes neither wait, only another session's `LOCK TABLES ... READ` or
//! `WRITE` of the table. The global read lock (FTWRL) makes other sessions' writes, DDL and
//! commits of transactions that changed rows wait. A wait lasts at most the waiter's
//! `lock_wait_timeout` (then 1205), shows `Waiting for table metadata lock` (or `Waiting for
//! backup lock` for the global read lock) in SHOW PROCESSLIST, and ends at KILL.
//!
//! Transactions' uses (MariaDB's MDL_SHARED_READ / MDL_SHARED_WRITE): every table a statement
//! reads or changes stays used by its session until its transaction ends (an autocommit
//! statement's: until the statement ends). `LOCK TABLES ... WRITE` waits while another
//! session uses the table, `READ` while another session's use changed it, `WRITE CONCURRENT`
//! for no use. A `LOCK TABLES` takes its whole list at once or nothing: it holds no lock while
//! it waits, so a transaction never waits for a waiting `LOCK TABLES` and no wait cycle forms
//! (MariaDB takes the list lock by lock and answers 1213 to one side of such a cycle; onelog's
//! transaction goes on and the `LOCK TABLES` waits for its end). It does not hold new users
//! back either (MariaDB's pending lock does), so it may wait longer.
//!
//! How uses are seen at the cost of one atomic load per statement: while no table lock exists
//! and no `LOCK TABLES` waits ([`TableLocks::active`] is 0), a statement only remembers the
//! tables it uses inside an open transaction, in its session ([`SessionTableLocks::record`]),
//! and publishes that list at its end into its connection's control
//! (`guard::ConnControl::table_uses`) under the mutex the statement's start and end take
//! anyway for PROCESSLIST, and only when the list changed. A waiting `LOCK TABLES` first
//! announces itself (it counts in `active`) and then reads every session's published list; a
//! statement that was already running (not `live`) may have used tables it did not publish
//! yet, so the `LOCK TABLES` waits for its end. A statement that begins while `active` is
//! not 0 is `live`: it publishes each use as it makes it, so a `LOCK TABLES` waits for it
//! only when it uses the table. The mutex makes the two sides meet: a statement whose start
//! came after the announcement sees `active`, one whose start came before is seen running.
//! A cached prepared plan records the tables its compile used at each execution.
//!
//! Where statements check and wait: every statement checks the privilege of each table it
//! uses when it is compiled (`ExecContext::check_table_privilege`); that check first records
//! the use, then asks [`SessionTableLocks::check_use`] (the session's own locks, by table
//! name) and [`TableLocks::access`] (other sessions' locks). A SELECT, INSERT, UPDATE or
//! DELETE of a session with table locks is also matched use by use, by alias, against its
//! list before it compiles ([`check_statement`], `uses.rs`). A cached prepared plan is
//! compiled again while `active`, so it checks too. A transaction that changed rows also
//! waits at its commit while another session holds the global read lock or a lock that
//! blocks changes of a table it changed (`ExecContext::wait_commit_allowed`): the uses make
//! that rare, but a change can reach a table no statement named (a foreign key's cascade), so
//! the check stays and no change lands in a READ- or WRITE-locked table.
//!
//! DDL statements (ALTER TABLE, CREATE / DROP INDEX, DROP TABLE / DATABASE, TRUNCATE, RENAME)
//! take their tables' exclusive lock (MariaDB's MDL_EXCLUSIVE; measured on 10.11.19): a
//! *ticket*, announced at once and granted once no other session uses the tables (in its
//! open transaction or running statement, reads included), no other connection holds a
//! table lock on them or the global read lock, and no earlier ticket shares a table. So a
//! transaction that used a table before a DDL on it ends first, and its commit does not meet
//! the engine's 1412. While a ticket waits, a new use of its tables waits behind it (so a
//! stream of short statements does not starve the DDL), as MariaDB's pending lock holds new
//! users back; a session that already uses the table goes on (the DDL waits for it). A
//! waiting use whose waits lead back to it through DDL statements' waits (two DDLs, each
//! waiting for a transaction that waits behind the other) fails with 1213, as MariaDB's
//! deadlock detector answers the DML side. A use is published under the state mutex when its
//! check passes, so a ticket either sees it or is seen by it. CREATE INDEX takes its ticket
//! at the start, lets uses go on during the build while other DDL keeps waiting for it
//! (*building*), and takes it again before the index is created
//! (`execute::ddl::create_index_online`), as MariaDB's online ALTER. A ticket that waits for
//! a statement that did not publish its uses (it began before any lock existed) does not
//! hold new users back, since that statement may use any table. A ticket is announced only
//! when no other connection holds the global read lock, and FLUSH TABLES WITH READ LOCK waits
//! for every ticket, as MariaDB's backup lock comes before the table's. The ticket of a copying
//! ALTER TABLE (and of CREATE INDEX with `LOCK=SHARED` or `ALGORITHM=COPY`) lets statements
//! outside a transaction read the table once it is granted, as MariaDB's
//! MDL_SHARED_NO_WRITE lets readers on during the copy; a transaction's read waits (MariaDB
//! lets it in and waits for the transaction's end before it renames the copy in).
//!
//! Invariants: a connection appears at most once per table in `held` (its strongest mode
//! there); `active` equals the number of `(table, holder)` pairs plus the global read lock
//! holders plus the waiting `LOCK TABLES`, checked by `debug_check`; the mutex is never held
//! while waiting (only the condvar wait releases it); the state mutex may be held while a
//! connection's control mutex is taken, never the other way; a session's handle and the
//! server's table agree on what it holds; a session's published list holds every table its
//! open transaction used once its statement ended, and, while its statement is `live`,
//! every table that statement used and was let use; while a ticket is granted, no other
//! connection holds a table lock on its tables and no other session uses them, but a
//! statement outside a transaction that reads them when the ticket lets readers through.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use onelog_protocol::errors;

use crate::error::SqlError;
use crate::guard::{ConnControl, StatementGuard, TableUse};

mod uses;
pub(crate) use uses::check_statement;

/// PROCESSLIST state of a statement waiting for a table lock (MariaDB's MDL wait).
pub(crate) const WAITING_FOR_TABLE_LOCK: &str = "Waiting for table metadata lock";
/// PROCESSLIST state of a statement waiting for the global read lock (MariaDB's backup MDL).
pub(crate) const WAITING_FOR_GLOBAL_READ_LOCK: &str = "Waiting for backup lock";

/// A table lock's mode, weakest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LockMode {
    /// `WRITE CONCURRENT`: others read and write; only their LOCK TABLES conflicts.
    WriteConcurrent,
    /// `READ [LOCAL]`: others read, their writes wait.
    Read,
    /// `[LOW_PRIORITY] WRITE`: others' reads and writes wait.
    Write,
}

impl LockMode {
    /// Whether the holder itself may change the table.
    pub fn writes(self) -> bool {
        self != LockMode::Read
    }

    /// Whether another connection's lock in `other` conflicts with this one.
    fn conflicts_with_lock(self, other: LockMode) -> bool {
        !matches!(
            (self, other),
            (LockMode::Read, LockMode::Read)
                | (LockMode::WriteConcurrent, LockMode::WriteConcurrent)
        )
    }

    /// Whether a statement of another connection that reads (`write` false) or changes the
    /// table must wait while this lock is held.
    fn blocks_access(self, write: bool) -> bool {
        match self {
            LockMode::WriteConcurrent => false,
            LockMode::Read => write,
            LockMode::Write => true,
        }
    }
}

type Key = (String, String);

/// A DDL statement's exclusive lock on its tables (MariaDB's MDL_EXCLUSIVE): waiting until
/// `granted`, then held until the statement releases it. Tickets on a table are granted in
/// `seq` order. `readers`: once granted, statements outside a transaction may read the tables
/// (MariaDB's MDL_SHARED_NO_WRITE of a copying ALTER, which lets readers go on).
/// `building`: granted, then let go for an online index build (MariaDB's
/// MDL_SHARED_UPGRADABLE): uses go on, other DDL waits for it, and it is upgraded again
/// (waiting, then granted) before the index is created.
struct Ticket {
    seq: u64,
    conn: u32,
    keys: Vec<Key>,
    granted: bool,
    readers: bool,
    building: bool,
}

impl Ticket {
    fn covers(&self, key: &Key) -> bool {
        self.keys.contains(key)
    }

    fn shares_with(&self, other: &Ticket) -> bool {
        self.keys.iter().any(|k| other.covers(k))
    }
}

#[derive(Default)]
struct State {
    /// Table -> (holder connection, mode).
    held: HashMap<Key, Vec<(u32, LockMode)>>,
    /// DDL statements' exclusive locks, waiting or granted (they count in `active`).
    tickets: Vec<Ticket>,
    next_ticket: u64,
    /// Connections whose statement waits to use a table: the table and how (what the
    /// deadlock search follows).
    access_waits: HashMap<u32, (Key, Use)>,
    /// Connections holding the global read lock.
    global_read: HashSet<u32>,
    /// `LOCK TABLES` statements waiting for their locks (announced: they count in `active`).
    waiting: usize,
    /// Every session's connection and control, by registration number: where its published
    /// table uses are read.
    sessions: HashMap<u64, (u32, Arc<ConnControl>)>,
    next_session: u64,
}

impl State {
    fn pairs(&self) -> usize {
        self.held.values().map(Vec::len).sum::<usize>()
            + self.global_read.len()
            + self.waiting
            + self.tickets.len()
    }

    /// Whether `conn` holds a ticket on `key` (its uses of `key` then wait in ticket order).
    fn has_ticket(&self, conn: u32, key: &Key) -> bool {
        self.tickets.iter().any(|t| t.conn == conn && t.covers(key))
    }

    /// The connections the ticket `t` waits for: earlier tickets on its tables, other
    /// connections' table locks on them, and every other session that uses one of them (in
    /// its open transaction or running statement) or runs a statement that did not publish
    /// its uses. (The global read lock is waited for before a ticket is announced, and
    /// FLUSH TABLES WITH READ LOCK waits for the tickets.)
    fn ticket_blockers(&self, t: &Ticket) -> Vec<u32> {
        let mut out: Vec<u32> = self
            .tickets
            .iter()
            .filter(|o| o.seq < t.seq && o.conn != t.conn && o.shares_with(t))
            .map(|o| o.conn)
            .collect();
        for k in &t.keys {
            if let Some(v) = self.held.get(k) {
                out.extend(v.iter().map(|h| h.0).filter(|&c| c != t.conn));
            }
        }
        for (c, ctl) in self.sessions.values() {
            if *c == t.conn || out.contains(c) {
                continue;
            }
            let uses = ctl.table_uses(|running, u| {
                (running && !u.live)
                    || u.list
                        .iter()
                        .any(|(k, _)| t.covers(k) && !self.has_ticket(*c, k))
            });
            if uses {
                out.push(*c);
            }
        }
        out
    }

    /// Whether another session runs a statement that did not publish its uses (a waiting
    /// ticket waits for it whatever tables it uses).
    fn unpublished_running(&self, conn: u32) -> bool {
        self.sessions
            .values()
            .any(|(c, ctl)| *c != conn && ctl.table_uses(|running, u| running && !u.live))
    }

    /// Whether the ticket `t` holds up `conn`'s use `how` of `key`: a granted one does (but a
    /// read outside a transaction when it lets readers through), a building one does not,
    /// and a waiting one holds back a use the connection did not have, unless the ticket
    /// also waits for statements that did not publish their uses (which may use any table:
    /// holding the table's traffic back for them would stop it for as long as an unrelated
    /// long statement runs).
    fn ticket_blocks_use(&self, t: &Ticket, conn: u32, key: &Key, how: Use) -> bool {
        if t.conn == conn || !t.covers(key) || t.building {
            return false;
        }
        if t.granted {
            return !(t.readers && !how.write && how.statement_only);
        }
        let had = how.had
            || self
                .held
                .get(key)
                .is_some_and(|v| v.iter().any(|h| h.0 == conn));
        !had && !self.unpublished_running(t.conn)
    }

    /// The connections `conn` waits for: the tickets and table locks that hold up the use its
    /// statement waits to make, or what its own waiting ticket waits for.
    fn waits_of(&self, conn: u32) -> Vec<u32> {
        let mut out = Vec::new();
        if let Some((k, how)) = self.access_waits.get(&conn) {
            out.extend(
                self.tickets
                    .iter()
                    .filter(|t| self.ticket_blocks_use(t, conn, k, *how))
                    .map(|t| t.conn),
            );
            if let Some(v) = self.held.get(k) {
                out.extend(
                    v.iter()
                        .filter(|&&(c, m)| c != conn && m.blocks_access(how.write))
                        .map(|h| h.0),
                );
            }
        }
        for t in self
            .tickets
            .iter()
            .filter(|t| t.conn == conn && !t.granted && !t.building)
        {
            out.extend(self.ticket_blockers(t));
        }
        out
    }

    /// Whether the waits starting at `conn` lead back to it (MariaDB's MDL deadlock: a
    /// statement waits behind a DDL that waits, through others, for its transaction).
    fn deadlocked(&self, conn: u32) -> bool {
        let mut seen = HashSet::new();
        let mut todo = self.waits_of(conn);
        while let Some(c) = todo.pop() {
            if c == conn {
                return true;
            }
            if seen.insert(c) {
                todo.extend(self.waits_of(c));
            }
        }
        false
    }

    /// Whether a session other than `conn` uses a table of `wanted` in a way its mode blocks
    /// (MariaDB's MDL_SHARED_READ / _WRITE of its transaction or statement), or runs a
    /// statement that did not publish its uses (it began before the wait was announced).
    fn used_by_others(&self, conn: u32, wanted: &[(Key, LockMode)]) -> bool {
        self.sessions.values().any(|(c, ctl)| {
            *c != conn
                && ctl.table_uses(|running, u| {
                    (running && !u.live)
                        || u.list.iter().any(|(k, w)| {
                            wanted.iter().any(|(wk, m)| wk == k && m.blocks_access(*w))
                        })
                })
        })
    }
}

/// The server's table locks.
#[derive(Default)]
pub struct TableLocks {
    state: Mutex<State>,
    released: Condvar,
    /// Number of `(table, holder)` pairs plus global read lock holders plus waiting `LOCK
    /// TABLES` (module invariant): statements skip everything while it is 0.
    active: AtomicUsize,
}

/// How long one wait slice lasts before the statement's guard is checked again.
const SLICE: Duration = Duration::from_millis(50);

/// 1213, MariaDB's answer to the statement whose metadata lock wait closes a cycle.
fn deadlock_error() -> SqlError {
    SqlError::of(
        errors::ER_LOCK_DEADLOCK,
        "Deadlock found when trying to get lock; try restarting transaction",
    )
}

/// 1205, MariaDB's answer when `lock_wait_timeout` passes.
fn timeout_error() -> SqlError {
    SqlError::of(
        errors::ER_LOCK_WAIT_TIMEOUT,
        "Lock wait timeout exceeded; try restarting transaction",
    )
}

impl TableLocks {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether any table lock or global read lock exists or a `LOCK TABLES` waits (one
    /// atomic load).
    #[inline]
    pub fn active(&self) -> bool {
        self.active.load(Ordering::Acquire) != 0
    }

    fn debug_check(&self, s: &State) {
        debug_assert_eq!(self.active.load(Ordering::Acquire), s.pairs());
        debug_assert!(s.held.values().all(|v| {
            let mut c: Vec<u32> = v.iter().map(|h| h.0).collect();
            c.sort_unstable();
            c.windows(2).all(|w| w[0] != w[1]) && !v.is_empty()
        }));
    }

    /// Waits (the guard showing `state`) until `blocked(state)` is false, at most `timeout`
    /// (1205), stopping at KILL; then runs `then` under the same mutex.
    fn wait_until<T>(
        &self,
        timeout: Duration,
        guard: &StatementGuard,
        wait_state: &'static str,
        blocked: impl Fn(&State) -> bool,
        then: impl FnOnce(&mut State) -> T,
    ) -> Result<T, SqlError> {
        let mut s = self.lock();
        if blocked(&s) {
            let r = self.wait_blocked(s, (timeout, wait_state), guard, &blocked, None);
            s = r.0;
            r.1?;
        }
        let out = then(&mut s);
        self.debug_check(&s);
        Ok(out)
    }

    /// Registers a session's connection control, whose published table uses `acquire`
    /// reads; the number to unregister it with.
    fn register(&self, conn: u32, ctl: Arc<ConnControl>) -> u64 {
        let mut s = self.lock();
        let id = s.next_session;
        s.next_session += 1;
        s.sessions.insert(id, (conn, ctl));
        id
    }

    fn unregister(&self, id: u64) {
        let mut s = self.lock();
        s.sessions.remove(&id);
        if s.waiting > 0 || !s.tickets.is_empty() {
            self.released.notify_all();
        }
    }

    /// Wakes waiting `LOCK TABLES` (a session published fewer uses).
    fn uses_changed(&self) {
        if self.active() {
            self.released.notify_all();
        }
    }

    /// Takes the locks `wanted` for `conn` once no other connection's lock (or, for a mode
    /// that writes, global read lock) conflicts and no other session's statement or open
    /// transaction uses a table in a way the mode blocks. All or nothing: the connection
    /// holds nothing before (LOCK TABLES releases first) nor while it waits, so a waiting
    /// LOCK TABLES never holds up anyone (no deadlock, module docs).
    pub fn acquire(
        &self,
        conn: u32,
        wanted: &[(Key, LockMode)],
        timeout: Duration,
        guard: &StatementGuard,
    ) -> Result<(), SqlError> {
        // Announce the wait before looking at the uses: statements that begin from here on
        // publish theirs (`SessionTableLocks::statement_begin`).
        {
            let mut s = self.lock();
            s.waiting += 1;
            self.active.fetch_add(1, Ordering::AcqRel);
        }
        let blocked = |s: &State| {
            wanted.iter().any(|(k, m)| {
                (m.writes() && s.global_read.iter().any(|&c| c != conn))
                    || s.tickets.iter().any(|t| t.conn != conn && t.covers(k))
                    || s.held.get(k).is_some_and(|v| {
                        v.iter()
                            .any(|&(c, other)| c != conn && m.conflicts_with_lock(other))
                    })
            }) || s.used_by_others(conn, wanted)
        };
        let r = self.take_when(conn, wanted, timeout, guard, blocked);
        let mut s = self.lock();
        s.waiting -= 1;
        self.active.fetch_sub(1, Ordering::AcqRel);
        self.debug_check(&s);
        r
    }

    fn take_when(
        &self,
        conn: u32,
        wanted: &[(Key, LockMode)],
        timeout: Duration,
        guard: &StatementGuard,
        blocked: impl Fn(&State) -> bool,
    ) -> Result<(), SqlError> {
        self.wait_until(timeout, guard, WAITING_FOR_TABLE_LOCK, blocked, |s| {
            for (k, m) in wanted {
                let v = s.held.entry(k.clone()).or_default();
                match v.iter_mut().find(|h| h.0 == conn) {
                    Some(h) => h.1 = h.1.max(*m),
                    None => {
                        v.push((conn, *m));
                        self.active.fetch_add(1, Ordering::AcqRel);
                    }
                }
            }
        })
    }

    /// Releases every table lock of `conn` (not its global read lock).
    pub fn release_tables(&self, conn: u32) {
        let mut s = self.lock();
        let mut n = 0;
        s.held.retain(|_, v| {
            let before = v.len();
            v.retain(|h| h.0 != conn);
            n += before - v.len();
            !v.is_empty()
        });
        if n > 0 {
            self.active.fetch_sub(n, Ordering::AcqRel);
            self.released.notify_all();
        }
        self.debug_check(&s);
    }

    /// Forgets `conn`'s lock on a table it dropped or renamed away.
    pub fn release_table(&self, conn: u32, key: &Key) {
        let mut s = self.lock();
        if let Some(v) = s.held.get_mut(key) {
            let before = v.len();
            v.retain(|h| h.0 != conn);
            let n = before - v.len();
            if v.is_empty() {
                s.held.remove(key);
            }
            if n > 0 {
                self.active.fetch_sub(n, Ordering::AcqRel);
                self.released.notify_all();
            }
        }
        self.debug_check(&s);
    }

    /// Takes the global read lock for `conn` (FLUSH TABLES WITH READ LOCK) once no other
    /// connection holds a table lock that writes.
    pub fn acquire_global_read(
        &self,
        conn: u32,
        timeout: Duration,
        guard: &StatementGuard,
    ) -> Result<(), SqlError> {
        let blocked = |s: &State| {
            s.held
                .values()
                .flatten()
                .any(|&(c, m)| c != conn && m.writes())
                || s.tickets.iter().any(|t| t.conn != conn)
        };
        self.wait_until(timeout, guard, WAITING_FOR_GLOBAL_READ_LOCK, blocked, |s| {
            if s.global_read.insert(conn) {
                self.active.fetch_add(1, Ordering::AcqRel);
            }
        })
    }

    /// Releases `conn`'s global read lock; whether it held one.
    pub fn release_global_read(&self, conn: u32) -> bool {
        let mut s = self.lock();
        let had = s.global_read.remove(&conn);
        if had {
            self.active.fetch_sub(1, Ordering::AcqRel);
            self.released.notify_all();
        }
        self.debug_check(&s);
        had
    }

    /// Waits until `conn` may read (`write` false) or change `db`.`table`: no other
    /// connection holds a lock that blocks it, nor (for a change) the global read lock, nor
    /// a DDL statement's lock on it. [`Self::use_table`] for a use the connection had.
    pub fn access(
        &self,
        conn: u32,
        db: &str,
        table: &str,
        write: bool,
        timeout: Duration,
        guard: &StatementGuard,
    ) -> Result<(), SqlError> {
        let how = Use {
            write,
            had: true,
            statement_only: false,
        };
        self.use_table(conn, (db, table), how, timeout, guard, || ())
    }

    /// [`Self::access`], then `passed` under the mutex (the session publishes the use there,
    /// so a DDL statement either sees it or is seen by it). A use the connection had
    /// ([`Use::had`]) is not held up by a waiting DDL statement, only by a granted one; any
    /// other waits behind a waiting one too (MariaDB's pending MDL_EXCLUSIVE holds new users
    /// back, so a DDL is not starved by a stream of short statements). A granted DDL lock
    /// that lets readers through lets a read outside a transaction through. A wait that
    /// closes a cycle through DDL statements' waits fails with 1213.
    pub(crate) fn use_table(
        &self,
        conn: u32,
        (db, table): (&str, &str),
        how: Use,
        timeout: Duration,
        guard: &StatementGuard,
        passed: impl FnOnce(),
    ) -> Result<(), SqlError> {
        let write = how.write;
        if !self.active() {
            passed();
            return Ok(());
        }
        let key = (db.to_string(), table.to_string());
        let global_blocked = |s: &State| write && s.global_read.iter().any(|&c| c != conn);
        // The global read lock first, as MariaDB takes the backup MDL before the table's.
        self.wait_until(
            timeout,
            guard,
            WAITING_FOR_GLOBAL_READ_LOCK,
            global_blocked,
            |_| (),
        )?;
        let ticket_blocked = |s: &State| {
            s.tickets
                .iter()
                .any(|t| s.ticket_blocks_use(t, conn, &key, how))
        };
        let blocked = |s: &State| {
            s.held
                .get(&key)
                .is_some_and(|v| v.iter().any(|&(c, m)| c != conn && m.blocks_access(write)))
                || global_blocked(s)
                || ticket_blocked(s)
        };
        let mut s = self.lock();
        if blocked(&s) {
            s.access_waits.insert(conn, (key.clone(), how));
            let r = self.wait_blocked(
                s,
                (timeout, WAITING_FOR_TABLE_LOCK),
                guard,
                &blocked,
                Some(conn),
            );
            s = r.0;
            s.access_waits.remove(&conn);
            r.1?;
        }
        passed();
        self.debug_check(&s);
        Ok(())
    }

    /// A wait (the guard showing `wait_state`): until `blocked` is false, at most `timeout`
    /// (1205), stopping at KILL, or, with `deadlock` (the waiting connection), until the
    /// waits close a cycle (1213).
    fn wait_blocked<'a>(
        &'a self,
        mut s: MutexGuard<'a, State>,
        (timeout, wait_state): (Duration, &'static str),
        guard: &StatementGuard,
        blocked: &impl Fn(&State) -> bool,
        deadlock: Option<u32>,
    ) -> (MutexGuard<'a, State>, Result<(), SqlError>) {
        let end = Instant::now().checked_add(timeout);
        guard.set_state(wait_state);
        let r = loop {
            if deadlock.is_some_and(|c| s.deadlocked(c)) {
                break Err(deadlock_error());
            }
            let now = Instant::now();
            if end.is_some_and(|e| now >= e) {
                break Err(timeout_error());
            }
            let slice = end.map_or(SLICE, |e| (e - now).min(SLICE));
            s = self
                .released
                .wait_timeout(s, slice)
                .unwrap_or_else(|p| p.into_inner())
                .0;
            if let Err(e) = guard.check_now() {
                break Err(e);
            }
            if !blocked(&s) {
                break Ok(());
            }
        };
        guard.set_state("starting");
        (s, r)
    }

    /// Takes a DDL statement's exclusive lock on `keys` for `conn` (MariaDB's MDL_EXCLUSIVE):
    /// announced at once, so that new uses of the tables wait behind it, then granted once no
    /// earlier DDL statement's lock, other connection's table lock or global read lock, and
    /// no other session's use of the tables is left (at most `timeout`: 1205; KILL); with
    /// `readers`, it then lets reads outside a transaction through ([`Ticket`]). The number
    /// to release it with.
    pub fn acquire_exclusive(
        &self,
        conn: u32,
        (keys, readers): (Vec<Key>, bool),
        timeout: Duration,
        guard: &StatementGuard,
    ) -> Result<u64, SqlError> {
        // The global read lock first (MariaDB's backup lock comes before the table's).
        let global = |s: &State| s.global_read.iter().any(|&c| c != conn);
        let seq = self.wait_until(timeout, guard, WAITING_FOR_GLOBAL_READ_LOCK, global, |s| {
            let seq = s.next_ticket;
            s.next_ticket += 1;
            s.tickets.push(Ticket {
                seq,
                conn,
                keys,
                granted: false,
                readers,
                building: false,
            });
            self.active.fetch_add(1, Ordering::AcqRel);
            seq
        })?;
        match self.grant(seq, conn, timeout, guard) {
            Ok(()) => Ok(seq),
            Err(e) => {
                self.release_exclusive(seq);
                Err(e)
            }
        }
    }

    /// Waits until the ticket `seq` (waiting) has nothing left to wait for, then grants it;
    /// 1205 after `timeout`, KILL, 1213 when the waits close a cycle.
    fn grant(
        &self,
        seq: u64,
        conn: u32,
        timeout: Duration,
        guard: &StatementGuard,
    ) -> Result<(), SqlError> {
        let blocked = |s: &State| {
            s.tickets
                .iter()
                .find(|t| t.seq == seq)
                .is_some_and(|t| !s.ticket_blockers(t).is_empty())
        };
        let mut s = self.lock();
        if blocked(&s) {
            let r = self.wait_blocked(
                s,
                (timeout, WAITING_FOR_TABLE_LOCK),
                guard,
                &blocked,
                Some(conn),
            );
            s = r.0;
            r.1?;
        }
        if let Some(t) = s.tickets.iter_mut().find(|t| t.seq == seq) {
            t.granted = true;
        }
        self.debug_check(&s);
        Ok(())
    }

    /// Lets the granted ticket `seq` go for an online index build ([`Ticket`]: uses go on,
    /// other DDL waits).
    fn building(&self, seq: u64) {
        let mut s = self.lock();
        if let Some(t) = s.tickets.iter_mut().find(|t| t.seq == seq) {
            (t.granted, t.building) = (false, true);
        }
        self.released.notify_all();
    }

    /// Takes the building ticket `seq` again: waits for the uses of its tables, as when it
    /// was first announced (later tickets wait for it still).
    fn upgrade(
        &self,
        seq: u64,
        conn: u32,
        timeout: Duration,
        guard: &StatementGuard,
    ) -> Result<(), SqlError> {
        {
            let mut s = self.lock();
            if let Some(t) = s.tickets.iter_mut().find(|t| t.seq == seq) {
                t.building = false;
            }
        }
        self.grant(seq, conn, timeout, guard)
    }

    /// Releases the DDL statement's lock `seq` (granted or not).
    pub fn release_exclusive(&self, seq: u64) {
        let mut s = self.lock();
        let before = s.tickets.len();
        s.tickets.retain(|t| t.seq != seq);
        if s.tickets.len() != before {
            self.active.fetch_sub(1, Ordering::AcqRel);
            self.released.notify_all();
        }
        self.debug_check(&s);
    }

    /// Waits until `conn` may commit a transaction that changed rows: no other connection
    /// holds the global read lock.
    pub fn commit_allowed(
        &self,
        conn: u32,
        timeout: Duration,
        guard: &StatementGuard,
    ) -> Result<(), SqlError> {
        if !self.active() {
            return Ok(());
        }
        self.wait_until(
            timeout,
            guard,
            WAITING_FOR_GLOBAL_READ_LOCK,
            |s| s.global_read.iter().any(|&c| c != conn),
            |_| (),
        )
    }
}

/// One table a session locked: the name it locked it under (`alias`, the table's name when
/// none was given) and whether it came with a view (`implicit`: a view's base table).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockedTable {
    pub db: String,
    pub table: String,
    pub alias: String,
    pub mode: LockMode,
    pub implicit: bool,
}

/// A session's handle on the server's table locks: what it holds, released when it is
/// dropped, and the tables its open transaction uses.
pub struct SessionTableLocks {
    table: Arc<TableLocks>,
    conn: u32,
    /// The tables of the session's LOCK TABLES (empty: not in locked-tables mode).
    locked: Vec<LockedTable>,
    /// Whether the session holds the global read lock (FTWRL).
    global_read: bool,
    /// The connection's control, where the session publishes its uses.
    ctl: Arc<ConnControl>,
    /// Its registration number in the server's `TableLocks`.
    reg: u64,
    /// The tables the open transaction used (and the running statement, when it records
    /// them: in a transaction, while it is live, or while `capture` is on).
    uses: RefCell<Vec<TableUse>>,
    /// Whether `uses` is what the connection published.
    published: Cell<bool>,
    /// Whether the running statement is live (publishes each use as it makes it).
    live: Cell<bool>,
    /// `uses` as the running statement found it: its length and the entries the statement
    /// turned into writes (a failed statement's uses go, as MariaDB releases its MDL).
    stmt_mark: Cell<usize>,
    stmt_upgraded: RefCell<Vec<usize>>,
    /// While a prepared statement compiles: the uses of its plan, recorded again at each
    /// execution of the cached plan.
    capture: RefCell<Option<Vec<TableUse>>>,
}

impl SessionTableLocks {
    pub fn new(table: Arc<TableLocks>, conn: u32, ctl: Arc<ConnControl>) -> Self {
        let reg = table.register(conn, ctl.clone());
        SessionTableLocks {
            table,
            conn,
            locked: Vec::new(),
            global_read: false,
            ctl,
            reg,
            uses: RefCell::new(Vec::new()),
            published: Cell::new(true),
            live: Cell::new(false),
            stmt_mark: Cell::new(0),
            stmt_upgraded: RefCell::new(Vec::new()),
            capture: RefCell::new(None),
        }
    }

    /// At a statement's start (after the guard showed it running): while a table lock exists
    /// or a LOCK TABLES waits, the statement is live: it publishes its uses as it makes them,
    /// so a LOCK TABLES need not wait for its end. One atomic load otherwise.
    pub fn statement_begin(&self) {
        self.stmt_mark.set(self.uses.borrow().len());
        self.stmt_upgraded.borrow_mut().clear();
        if self.table.active() {
            self.live.set(true);
            self.publish();
        }
    }

    /// Whether a use must take the slow path (publish, check other sessions' locks).
    #[inline]
    pub fn slow(&self) -> bool {
        self.live.get() || self.table.active()
    }

    /// Records that the running statement uses `db`.`table` (`write`: changes it), kept with
    /// the open transaction's uses.
    pub fn record(&self, db: &str, table: &str, write: bool) {
        if let Some(c) = self.capture.borrow_mut().as_mut() {
            let _ = add_use(c, db, table, write);
        }
        let mut uses = self.uses.borrow_mut();
        let before = uses.len();
        if let Some(i) = add_use(&mut uses, db, table, write) {
            self.published.set(false);
            if i < before {
                self.stmt_upgraded.borrow_mut().push(i);
            }
        }
    }

    /// A use while [`slow`](Self::slow): records it (published once its check passes,
    /// [`Self::check_use`]); whether the session already had it (its transaction or
    /// statement used the table, or the statement is not live: a DDL waits for its end).
    pub fn record_use(&self, db: &str, table: &str, write: bool) -> bool {
        let had = !self.live.get()
            || self
                .uses
                .borrow()
                .iter()
                .any(|((d, t), _)| d == db && t == table);
        self.record(db, table, write);
        had
    }

    /// Records every use of `uses` (a cached prepared plan's).
    pub fn record_all(&self, uses: &[TableUse]) {
        for ((db, table), write) in uses {
            self.record(db, table, *write);
        }
        if self.live.get() && !self.published.get() {
            self.publish();
        }
    }

    /// Starts capturing the uses of a compile (a prepared statement's plan).
    pub fn start_capture(&self) {
        *self.capture.borrow_mut() = Some(Vec::new());
    }

    /// Whether uses are being captured (they are then recorded outside a transaction too).
    pub fn capturing(&self) -> bool {
        self.capture.borrow().is_some()
    }

    /// Ends the capture: the uses recorded since `start_capture`.
    pub fn take_capture(&self) -> Vec<TableUse> {
        self.capture.borrow_mut().take().unwrap_or_default()
    }

    /// Publishes the recorded uses (and whether the running statement is live).
    fn publish(&self) {
        let uses = self.uses.borrow();
        let live = self.live.get();
        self.ctl.table_uses(|_, u| {
            u.list.clone_from(&uses);
            u.live = live;
        });
        self.published.set(true);
    }

    /// The transaction ended: its uses go (published at the statement's end).
    pub fn transaction_end(&self) {
        let mut u = self.uses.borrow_mut();
        if !u.is_empty() {
            u.clear();
            self.published.set(false);
        }
    }

    /// At a statement's end (before the guard shows the connection idle): without an open
    /// transaction the uses go, after a failed statement the uses it added; what changed is
    /// published. No atomic operation when nothing changed.
    pub fn statement_end(&self, in_transaction: bool, failed: bool) {
        if !in_transaction {
            self.transaction_end();
        } else if failed {
            let mut uses = self.uses.borrow_mut();
            let mark = self.stmt_mark.get();
            if uses.len() > mark {
                uses.truncate(mark);
                self.published.set(false);
            }
            for &i in self.stmt_upgraded.borrow().iter() {
                if let Some(u) = uses.get_mut(i) {
                    u.1 = false;
                    self.published.set(false);
                }
            }
        }
        if !self.published.get() || self.live.get() {
            // Still marked live: the list is complete until the next statement starts.
            self.publish();
            self.live.set(false);
            self.table.uses_changed();
        }
    }

    pub fn server(&self) -> &TableLocks {
        &self.table
    }

    /// The tables of the session's LOCK TABLES (empty when it holds none).
    pub fn locked(&self) -> &[LockedTable] {
        &self.locked
    }

    pub fn holds_global_read(&self) -> bool {
        self.global_read
    }

    /// Whether the session holds anything (table locks or the global read lock).
    pub fn holds_any(&self) -> bool {
        self.global_read || !self.locked.is_empty()
    }

    /// Takes `tables` (LOCK TABLES; the session holds no table lock before).
    pub fn lock(
        &mut self,
        tables: Vec<LockedTable>,
        timeout: Duration,
        guard: &StatementGuard,
    ) -> Result<(), SqlError> {
        debug_assert!(self.locked.is_empty(), "LOCK TABLES releases first");
        // Live before waiting, so that two waiting LOCK TABLES see each other's (empty) uses.
        self.live.set(true);
        self.publish();
        let wanted: Vec<(Key, LockMode)> = tables
            .iter()
            .map(|t| ((t.db.clone(), t.table.clone()), t.mode))
            .collect();
        self.table.acquire(self.conn, &wanted, timeout, guard)?;
        self.locked = tables;
        Ok(())
    }

    /// Releases the session's table locks (UNLOCK TABLES, LOCK TABLES, BEGIN); whether it
    /// held any.
    pub fn unlock_tables(&mut self) -> bool {
        if self.locked.is_empty() {
            return false;
        }
        self.locked.clear();
        self.table.release_tables(self.conn);
        true
    }

    /// Forgets the session's locks on `db`.`table` (it dropped the table).
    pub fn forget(&mut self, db: &str, table: &str) {
        let before = self.locked.len();
        self.locked.retain(|t| !(t.db == db && t.table == table));
        if self.locked.len() != before {
            self.table
                .release_table(self.conn, &(db.to_string(), table.to_string()));
        }
    }

    /// FLUSH TABLES WITH READ LOCK.
    pub fn lock_global_read(
        &mut self,
        timeout: Duration,
        guard: &StatementGuard,
    ) -> Result<(), SqlError> {
        if !self.global_read {
            self.table.acquire_global_read(self.conn, timeout, guard)?;
            self.global_read = true;
        }
        Ok(())
    }

    /// Releases the global read lock; whether the session held it.
    pub fn unlock_global_read(&mut self) -> bool {
        self.global_read = false;
        self.table.release_global_read(self.conn)
    }

    /// The checks of a statement of this session that uses `db`.`table` (as MariaDB's
    /// locked-tables mode and global read lock): with table locks, the table must be locked
    /// (1100), for a change in a mode that writes (1099); with the global read lock, a change
    /// fails (1223). Then it waits for other sessions' locks ([`TableLocks::use_table`]; `had`
    /// from [`Self::record_use`]) and, when the statement is live, publishes its uses.
    pub fn check_use(
        &self,
        (db, table): (&str, &str),
        how: Use,
        timeout: Duration,
        guard: &StatementGuard,
    ) -> Result<(), SqlError> {
        let write = how.write;
        if !self.locked.is_empty() && !exempt(db) {
            let mut mine = self
                .locked
                .iter()
                .filter(|t| t.db == db && t.table == table);
            let Some(first) = mine.next() else {
                return Err(not_locked(table));
            };
            if write && !first.mode.writes() && !mine.any(|t| t.mode.writes()) {
                return Err(read_locked(table));
            }
        }
        if write && self.global_read && !exempt(db) {
            return Err(conflicting_read_lock());
        }
        let publish = || {
            if self.live.get() && !self.published.get() {
                self.publish();
            }
        };
        self.table
            .use_table(self.conn, (db, table), how, timeout, guard, publish)
    }

    /// Takes a DDL statement's exclusive lock on `tables` ([`TableLocks::acquire_exclusive`]),
    /// released when the returned lock is dropped. The statement becomes live first, so that
    /// DDL statements waiting for each other see each other's uses.
    pub fn exclusive(
        &self,
        tables: (Vec<Key>, bool),
        timeout: Duration,
        guard: &StatementGuard,
    ) -> Result<ExclusiveLock, SqlError> {
        self.live.set(true);
        self.publish();
        let seq = self
            .table
            .acquire_exclusive(self.conn, tables, timeout, guard)?;
        Ok(ExclusiveLock {
            table: self.table.clone(),
            seq,
            conn: self.conn,
        })
    }
}

/// How a statement uses a table, for [`TableLocks::use_table`].
#[derive(Debug, Clone, Copy)]
pub struct Use {
    /// It changes the table.
    pub write: bool,
    /// The session already uses it ([`SessionTableLocks::record_use`]).
    pub had: bool,
    /// The use ends with the statement (no open transaction).
    pub statement_only: bool,
}

/// A DDL statement's exclusive lock on its tables, released when dropped.
pub struct ExclusiveLock {
    table: Arc<TableLocks>,
    seq: u64,
    conn: u32,
}

impl ExclusiveLock {
    /// Lets the tables' uses go on while an index is built; other DDL on them keeps waiting
    /// (MariaDB's MDL_SHARED_UPGRADABLE of an online ALTER).
    pub fn building(&self) {
        self.table.building(self.seq);
    }

    /// Takes the lock again after [`Self::building`]: waits, at most `timeout`, for the
    /// uses of the tables (1205; KILL; 1213 on a cycle).
    pub fn upgrade(&self, timeout: Duration, guard: &StatementGuard) -> Result<(), SqlError> {
        self.table.upgrade(self.seq, self.conn, timeout, guard)
    }
}

impl Drop for ExclusiveLock {
    fn drop(&mut self) {
        self.table.release_exclusive(self.seq);
    }
}

impl Drop for SessionTableLocks {
    fn drop(&mut self) {
        self.table.unregister(self.reg);
        if !self.locked.is_empty() {
            self.table.release_tables(self.conn);
        }
        if self.global_read {
            self.table.release_global_read(self.conn);
        }
    }
}

/// Adds `db`.`table` to `uses` (a write upgrades a read); the entry changed, if any.
fn add_use(uses: &mut Vec<TableUse>, db: &str, table: &str, write: bool) -> Option<usize> {
    match uses.iter().position(|(k, _)| k.0 == db && k.1 == table) {
        Some(i) if uses[i].1 || !write => None,
        Some(i) => {
            uses[i].1 = true;
            Some(i)
        }
        None => {
            uses.push(((db.to_string(), table.to_string()), write));
            Some(uses.len() - 1)
        }
    }
}

/// Schemas a session in locked-tables mode may read without locking them, as in MariaDB.
fn exempt(db: &str) -> bool {
    crate::schema_names::is_information_schema(db) || db.eq_ignore_ascii_case("performance_schema")
}

/// 1100.
pub(crate) fn not_locked(alias: &str) -> SqlError {
    SqlError::of(
        errors::ER_TABLE_NOT_LOCKED,
        format!("Table '{alias}' was not locked with LOCK TABLES"),
    )
}

/// 1099.
pub(crate) fn read_locked(alias: &str) -> SqlError {
    SqlError::of(
        errors::ER_TABLE_NOT_LOCKED_FOR_WRITE,
        format!("Table '{alias}' was locked with a READ lock and can't be updated"),
    )
}

/// 1223.
pub(crate) fn conflicting_read_lock() -> SqlError {
    SqlError::of(
        errors::ER_CANT_UPDATE_WITH_READLOCK,
        "Can't execute the query because you have a conflicting read lock",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard() -> StatementGuard {
        StatementGuard::new(Default::default())
    }

    /// A use the session had (outside the new rules of DDL locks).
    fn had(write: bool) -> Use {
        Use {
            write,
            had: true,
            statement_only: false,
        }
    }

    fn key(t: &str) -> Key {
        ("d".to_string(), t.to_string())
    }

    #[test]
    fn modes_block_other_connections_as_mariadbs_metadata_locks() {
        let t = TableLocks::default();
        let g = guard();
        assert!(!t.active());
        t.acquire(1, &[(key("r"), LockMode::Read)], Duration::ZERO, &g)
            .unwrap();
        t.acquire(1, &[(key("w"), LockMode::Write)], Duration::ZERO, &g)
            .unwrap();
        t.acquire(
            1,
            &[(key("c"), LockMode::WriteConcurrent)],
            Duration::ZERO,
            &g,
        )
        .unwrap();
        assert!(t.active());
        let z = Duration::ZERO;
        assert!(t.access(2, "d", "r", false, z, &g).is_ok());
        assert_eq!(t.access(2, "d", "r", true, z, &g).unwrap_err().code, 1205);
        assert_eq!(t.access(2, "d", "w", false, z, &g).unwrap_err().code, 1205);
        assert!(t.access(2, "d", "c", true, z, &g).is_ok());
        assert!(t.access(1, "d", "w", true, z, &g).is_ok(), "own locks");
        // Between LOCK TABLES: READ with READ, WRITE CONCURRENT with itself.
        assert!(t.acquire(2, &[(key("r"), LockMode::Read)], z, &g).is_ok());
        assert!(t
            .acquire(3, &[(key("c"), LockMode::WriteConcurrent)], z, &g)
            .is_ok());
        assert!(t.acquire(4, &[(key("c"), LockMode::Read)], z, &g).is_err());
        assert!(t.acquire(4, &[(key("r"), LockMode::Write)], z, &g).is_err());
        t.release_tables(1);
        t.release_tables(2);
        t.release_tables(3);
        assert!(!t.active());
        assert!(t.access(2, "d", "w", true, z, &g).is_ok());
    }

    #[test]
    fn a_ddl_lock_waits_for_uses_holds_newcomers_back_and_may_let_readers_through() {
        let t = Arc::new(TableLocks::default());
        let g = guard();
        let z = Duration::ZERO;
        let new_use = |write, statement_only| Use {
            write,
            had: false,
            statement_only,
        };
        // Granted at once without users; released, nothing is left.
        let seq = t
            .acquire_exclusive(1, (vec![key("t")], false), z, &g)
            .unwrap();
        assert!(t.active());
        let uses = [(false, true), (false, false), (true, true)];
        for (w, stmt) in uses {
            let e = t.use_table(2, ("d", "t"), new_use(w, stmt), z, &g, || ());
            assert_eq!(
                e.unwrap_err().code,
                1205,
                "write {w}, statement only {stmt}"
            );
        }
        assert!(t
            .use_table(2, ("d", "u"), new_use(true, false), z, &g, || ())
            .is_ok());
        assert!(t
            .use_table(1, ("d", "t"), new_use(true, false), z, &g, || ())
            .is_ok());
        assert_eq!(
            t.acquire(2, &[(key("t"), LockMode::Read)], z, &g)
                .unwrap_err()
                .code,
            1205
        );
        t.release_exclusive(seq);
        assert!(!t.active());
        // A copying ALTER's lock lets a read outside a transaction through, nothing else.
        let seq = t
            .acquire_exclusive(1, (vec![key("t")], true), z, &g)
            .unwrap();
        let mut passed = false;
        t.use_table(2, ("d", "t"), new_use(false, true), z, &g, || passed = true)
            .unwrap();
        assert!(passed);
        for (w, stmt) in [(false, false), (true, true)] {
            let e = t.use_table(2, ("d", "t"), new_use(w, stmt), z, &g, || ());
            assert_eq!(
                e.unwrap_err().code,
                1205,
                "write {w}, statement only {stmt}"
            );
        }
        // A second DDL lock on the table waits for the first.
        assert_eq!(
            t.acquire_exclusive(3, (vec![key("t")], false), z, &g)
                .unwrap_err()
                .code,
            1205
        );
        t.release_exclusive(seq);
        assert!(!t.active(), "a failed DDL lock leaves nothing");
    }

    /// Waits (at most 10 s) until `f` holds.
    fn eventually(f: impl Fn() -> bool) {
        let end = Instant::now() + Duration::from_secs(10);
        while !f() {
            assert!(Instant::now() < end, "never happened");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn tickets(t: &TableLocks) -> usize {
        t.lock().tickets.len()
    }

    #[test]
    fn an_index_build_lets_uses_go_on_keeps_other_ddl_waiting_and_upgrades() {
        let t = Arc::new(TableLocks::default());
        let g = guard();
        let z = Duration::ZERO;
        let new_use = Use {
            write: true,
            had: false,
            statement_only: false,
        };
        let seq = t
            .acquire_exclusive(1, (vec![key("t")], false), z, &g)
            .unwrap();
        t.building(seq);
        // Uses go on; another DDL on the table waits for the build's lock.
        assert!(t.use_table(2, ("d", "t"), new_use, z, &g, || ()).is_ok());
        let other = t.acquire_exclusive(3, (vec![key("t")], false), z, &g);
        assert_eq!(other.unwrap_err().code, 1205);
        // The upgrade waits for the uses (a session's published use here) and wins over
        // a later DDL.
        let ctl: Arc<ConnControl> = Default::default();
        ctl.table_uses(|_, u| u.list.push((key("t"), true)));
        let reg = t.register(2, ctl.clone());
        assert_eq!(t.upgrade(seq, 1, z, &g).unwrap_err().code, 1205);
        let t2 = t.clone();
        let later = std::thread::spawn(move || {
            t2.acquire_exclusive(
                3,
                (vec![key("t")], false),
                Duration::from_secs(30),
                &guard(),
            )
        });
        eventually(|| tickets(&t) == 2);
        ctl.table_uses(|_, u| u.list.clear());
        t.uses_changed();
        t.upgrade(seq, 1, Duration::from_secs(30), &g).unwrap();
        assert!(t.use_table(2, ("d", "t"), new_use, z, &g, || ()).is_err());
        t.release_exclusive(seq);
        let later = later.join().unwrap().unwrap();
        t.release_exclusive(later);
        t.unregister(reg);
        assert!(!t.active());
    }

    #[test]
    fn a_ddl_waiting_behind_one_that_waits_for_its_own_lock_gets_1213() {
        // A holds LOCK TABLES t WRITE; B's DDL waits for it; A's own DDL on t would wait
        // behind B's: a cycle, answered at once instead of lock_wait_timeout later.
        let t = Arc::new(TableLocks::default());
        let g = guard();
        let z = Duration::ZERO;
        t.acquire(1, &[(key("t"), LockMode::Write)], z, &g).unwrap();
        let t2 = t.clone();
        let b = std::thread::spawn(move || {
            t2.acquire_exclusive(
                2,
                (vec![key("t")], false),
                Duration::from_secs(30),
                &guard(),
            )
        });
        eventually(|| tickets(&t) == 1);
        let e = t.acquire_exclusive(1, (vec![key("t")], false), Duration::from_secs(30), &g);
        assert_eq!(e.unwrap_err().code, 1213);
        t.release_tables(1);
        let b = b.join().unwrap().unwrap();
        t.release_exclusive(b);
        assert!(!t.active());
    }

    #[test]
    fn the_global_read_lock_and_ddl_locks_wait_for_each_other_without_a_cycle() {
        let t = TableLocks::default();
        let g = guard();
        let z = Duration::ZERO;
        let read = Use {
            write: false,
            had: false,
            statement_only: true,
        };
        // With FTWRL held, a DDL waits before it announces anything: the holder's reads go on.
        t.acquire_global_read(1, z, &g).unwrap();
        let e = t.acquire_exclusive(2, (vec![key("t")], false), z, &g);
        assert_eq!(e.unwrap_err().code, 1205);
        assert_eq!(tickets(&t), 0);
        assert!(t.use_table(1, ("d", "t"), read, z, &g, || ()).is_ok());
        assert!(t.release_global_read(1));
        // FTWRL waits for a DDL lock, granted or not.
        let seq = t
            .acquire_exclusive(2, (vec![key("t")], false), z, &g)
            .unwrap();
        assert_eq!(t.acquire_global_read(1, z, &g).unwrap_err().code, 1205);
        t.release_exclusive(seq);
        t.acquire_global_read(1, z, &g).unwrap();
        t.release_global_read(1);
        assert!(!t.active());
    }

    /// Session 1 on `t` and its statement guard (a running statement DDL waits for).
    fn session_one(t: &Arc<TableLocks>) -> (StatementGuard, SessionTableLocks) {
        let ctl: Arc<ConnControl> = Default::default();
        let g = StatementGuard::new(ctl.clone());
        (g, SessionTableLocks::new(t.clone(), 1, ctl))
    }

    /// Statement `sql` begins in the session of `g` and `s`.
    fn begin_statement(g: &mut StatementGuard, s: &SessionTableLocks, sql: &str) {
        g.begin(sql, None, u64::MAX, u64::MAX);
        s.statement_begin();
    }

    #[test]
    fn a_ddl_waiting_for_an_unpublished_statement_holds_no_user_back() {
        let t = Arc::new(TableLocks::default());
        let z = Duration::ZERO;
        let g = guard();
        let (mut g1, s1) = session_one(&t);
        // A statement that began while nothing was locked (its uses unknown) still runs.
        begin_statement(&mut g1, &s1, "SELECT");
        let t2 = t.clone();
        let ddl = std::thread::spawn(move || {
            t2.acquire_exclusive(
                2,
                (vec![key("t")], false),
                Duration::from_secs(30),
                &guard(),
            )
        });
        eventually(|| tickets(&t) == 1);
        // The DDL waits for it, yet new users of t go on (the statement may use any table).
        let new_use = Use {
            write: true,
            had: false,
            statement_only: true,
        };
        assert!(t.use_table(3, ("d", "t"), new_use, z, &g, || ()).is_ok());
        s1.statement_end(false, false);
        g1.end(&mut Vec::new());
        let seq = ddl.join().unwrap().unwrap();
        assert_eq!(
            t.use_table(3, ("d", "t"), new_use, z, &g, || ())
                .unwrap_err()
                .code,
            1205
        );
        t.release_exclusive(seq);
        drop(s1);
        assert!(!t.active());
    }

    #[test]
    fn the_global_read_lock_holds_up_other_writers_and_commits() {
        let t = Arc::new(TableLocks::default());
        let g = guard();
        let z = Duration::ZERO;
        t.acquire_global_read(1, z, &g).unwrap();
        assert!(t.access(2, "d", "x", false, z, &g).is_ok());
        assert_eq!(t.access(2, "d", "x", true, z, &g).unwrap_err().code, 1205);
        assert!(t.commit_allowed(2, z, &g).is_err());
        assert!(t.commit_allowed(1, z, &g).is_ok());
        let t2 = t.clone();
        let waiter = std::thread::spawn(move || {
            t2.access(2, "d", "x", true, Duration::from_secs(30), &guard())
        });
        std::thread::sleep(Duration::from_millis(20));
        assert!(t.release_global_read(1));
        waiter.join().unwrap().unwrap();
        assert!(!t.active());
    }

    #[test]
    fn a_session_handle_checks_its_own_locks_and_releases_them_when_dropped() {
        let t = Arc::new(TableLocks::default());
        let g = guard();
        let z = Duration::ZERO;
        {
            let mut s = SessionTableLocks::new(t.clone(), 7, Default::default());
            let lt = |table: &str, mode| LockedTable {
                db: "d".into(),
                table: table.into(),
                alias: table.into(),
                mode,
                implicit: false,
            };
            s.lock(
                vec![lt("a", LockMode::Read), lt("b", LockMode::Write)],
                z,
                &g,
            )
            .unwrap();
            assert!(s.check_use(("d", "a"), had(false), z, &g).is_ok());
            assert_eq!(
                s.check_use(("d", "a"), had(true), z, &g).unwrap_err().code,
                1099
            );
            assert_eq!(
                s.check_use(("d", "x"), had(false), z, &g).unwrap_err().code,
                1100
            );
            assert!(s
                .check_use(("information_schema", "TABLES"), had(false), z, &g)
                .is_ok());
            assert!(s.check_use(("d", "b"), had(true), z, &g).is_ok());
            s.forget("d", "b");
            assert_eq!(
                s.check_use(("d", "b"), had(true), z, &g).unwrap_err().code,
                1100
            );
            assert!(t.active());
        }
        assert!(!t.active());
    }

    #[test]
    fn lock_tables_waits_for_published_uses_and_unpublished_running_statements() {
        let t = Arc::new(TableLocks::default());
        let z = Duration::ZERO;
        let g = guard();
        let (mut g1, s1) = session_one(&t);
        let a = |m| [(key("a"), m)];
        // A statement that began while nothing was locked and still runs: its uses are
        // unknown, so any LOCK TABLES waits for its end.
        begin_statement(&mut g1, &s1, "SELECT");
        s1.record("d", "a", false);
        let e = t.acquire(2, &[(key("b"), LockMode::Read)], z, &g);
        assert_eq!(e.unwrap_err().code, 1205);
        assert!(!t.active(), "a failed LOCK TABLES leaves nothing");
        s1.statement_end(true, false);
        g1.end(&mut Vec::new());
        // Its transaction read `a`: READ goes through, WRITE waits; `b` is free.
        t.acquire(2, &a(LockMode::Read), z, &g).unwrap();
        t.release_tables(2);
        t.acquire(2, &[(key("b"), LockMode::Write)], z, &g).unwrap();
        t.release_tables(2);
        assert_eq!(
            t.acquire(2, &a(LockMode::Write), z, &g).unwrap_err().code,
            1205
        );
        // A statement that begins while a lock exists is live: it publishes each use.
        t.acquire(3, &[(key("c"), LockMode::Read)], z, &g).unwrap();
        begin_statement(&mut g1, &s1, "UPDATE");
        let had = s1.record_use("d", "a", true);
        let how = Use {
            write: true,
            had,
            statement_only: false,
        };
        s1.check_use(("d", "a"), how, z, &g).unwrap();
        assert_eq!(
            t.acquire(2, &a(LockMode::Read), z, &g).unwrap_err().code,
            1205
        );
        t.acquire(2, &[(key("b"), LockMode::Write)], z, &g).unwrap();
        t.release_tables(2);
        // The statement fails: its write goes, the transaction's read stays.
        s1.statement_end(true, true);
        g1.end(&mut Vec::new());
        t.acquire(2, &a(LockMode::Read), z, &g).unwrap();
        t.release_tables(2);
        // The transaction ends.
        s1.transaction_end();
        s1.statement_end(false, false);
        t.acquire(2, &a(LockMode::Write), z, &g).unwrap();
        t.release_tables(2);
        t.release_tables(3);
        drop(s1);
        assert!(!t.active());
    }
}
