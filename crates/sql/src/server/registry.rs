//! The connection registry: the one table of connections, the one shutdown flag and the
//! connection counters, shared by the protocol layer's listener (`onelog_server`) and the SQL
//! layer (SHOW PROCESSLIST, KILL, SHUTDOWN, `Threads_connected`, `Questions`).
//!
//! A connection appears in the table in up to two ways, each owned by a guard:
//! - a listener *slot* ([`Slot`], taken by [`Registry::take_slot`] when a socket is accepted,
//!   released when its thread ends): it counts against `max_connections`, carries the closer
//!   that shuts the socket's read side at shutdown, and its id comes from
//!   [`Registry::take_slot`]'s counter;
//! - a *registration* ([`ConnectionGuard`], made by [`Registry::register`] once the connection
//!   authenticated): its [`ConnectionInfo`] (PROCESSLIST) and [`ConnControl`] (KILL). Sessions
//!   opened without a listener (tests, internal use) register without a slot.
//!
//! Invariants:
//! - an entry exists exactly while a slot or a registration holds it (neither: removed);
//! - `slots` equals the number of entries holding a slot, and never exceeds the `max` + 1
//!   that [`Registry::take_slot`] was given;
//! - slot ids are unique for the registry's lifetime and start at 1;
//! - the shutdown flag, once set, stays set.
//!
//! Callers: `crate::server::Server` owns one registry (and delegates its connection methods
//! to it); `onelog_server`'s listener takes slots from the backend's registry (or its own, for
//! a backend without one) and waits on its shutdown flag.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::guard::ConnControl;

/// One connection as PROCESSLIST shows it.
#[derive(Debug, Clone)]
pub struct ConnectionInfo {
    pub id: u32,
    pub user: String,
    pub host: String,
    pub db: Option<String>,
    /// `Query`, `Sleep`, `Binlog Dump`, ...
    pub command: String,
    /// The state SHOW PROCESSLIST shows while no statement runs (a dump's).
    pub state: &'static str,
    pub started: Instant,
}

impl ConnectionInfo {
    pub fn new(id: u32, user: &str, host: &str) -> Self {
        ConnectionInfo {
            id,
            user: user.to_string(),
            host: host.to_string(),
            db: None,
            command: "Sleep".into(),
            state: "",
            started: Instant::now(),
        }
    }
}

/// A registered connection: the info, and the control (KILL flags, running statement) the
/// connection's thread and its session share.
#[derive(Debug, Clone)]
pub struct ConnectionEntry {
    pub info: ConnectionInfo,
    pub ctl: Arc<ConnControl>,
}

/// Shuts a connection's read side (its idle read ends at once; a running command finishes and
/// the connection ends at its next read).
pub type Closer = Box<dyn Fn() + Send + Sync>;

/// One table entry.
struct Entry {
    /// Set while registered.
    registered: Option<ConnectionEntry>,
    /// Set while a listener slot holds the entry.
    closer: Option<Closer>,
}

#[derive(Default)]
struct Table {
    entries: BTreeMap<u32, Entry>,
    /// Entries holding a slot.
    slots: usize,
}

impl Table {
    /// Removes entry `id` once neither a slot nor a registration holds it.
    fn drop_if_unheld(&mut self, id: u32) {
        if self
            .entries
            .get(&id)
            .is_some_and(|e| e.registered.is_none() && e.closer.is_none())
        {
            self.entries.remove(&id);
        }
        self.check();
    }

    /// The table's invariants (debug builds; O(connections)).
    fn check(&self) {
        debug_assert!(
            self.entries
                .values()
                .all(|e| e.registered.is_some() || e.closer.is_some()),
            "a registry entry outlived its slot and registration"
        );
        debug_assert_eq!(
            self.slots,
            self.entries.values().filter(|e| e.closer.is_some()).count(),
            "slot count out of step with the table"
        );
    }
}

/// The connection table, the shutdown flag and the connection counters.
pub struct Registry {
    table: Mutex<Table>,
    /// Notified when a slot is released.
    slot_released: Condvar,
    next_id: AtomicU32,
    shutdown_requested: Mutex<bool>,
    shutdown_cv: Condvar,
    /// `Questions` (also `Queries`): statements received from clients.
    questions: AtomicU64,
    started: Instant,
}

impl Default for Registry {
    fn default() -> Self {
        Registry::new()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every update of the table is complete before its lock is released, and no code panics
    // while holding it, so a poisoned lock (a panicking connection thread elsewhere) is still
    // consistent.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Registry {
    pub fn new() -> Self {
        Registry {
            table: Mutex::new(Table::default()),
            slot_released: Condvar::new(),
            next_id: AtomicU32::new(1),
            shutdown_requested: Mutex::new(false),
            shutdown_cv: Condvar::new(),
            questions: AtomicU64::new(0),
            started: Instant::now(),
        }
    }

    // -----------------------------------------------------------------------------------------
    // Listener slots

    /// Takes a slot for a newly accepted connection, with a fresh id; `None` when `max` + 1
    /// slots are taken. The slot above `max` is marked [`Slot::extra`] (MariaDB's connection
    /// reserved for CONNECTION ADMIN / SUPER).
    pub fn take_slot(self: &Arc<Self>, max: usize, closer: Closer) -> Option<Slot> {
        let mut t = lock(&self.table);
        if t.slots > max {
            return None;
        }
        let extra = t.slots == max;
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        assert!(id != 0, "connection ids wrapped around");
        let previous = t.entries.insert(
            id,
            Entry {
                registered: None,
                closer: Some(closer),
            },
        );
        debug_assert!(previous.is_none(), "connection id {id} given twice");
        t.slots += 1;
        debug_assert!(
            t.slots <= max + 1,
            "more than max_connections + 1 slots taken"
        );
        t.check();
        Some(Slot {
            registry: self.clone(),
            id,
            extra,
        })
    }

    /// Slots taken (connections authenticating or authenticated through the listener).
    pub fn slot_count(&self) -> usize {
        lock(&self.table).slots
    }

    /// Shuts the read side of every connection holding a slot.
    pub fn close_connections(&self) {
        let t = lock(&self.table);
        for c in t.entries.values().filter_map(|e| e.closer.as_ref()) {
            c();
        }
    }

    /// Blocks until every slot was released.
    pub fn wait_no_slots(&self) {
        let mut t = lock(&self.table);
        while t.slots > 0 {
            t = self
                .slot_released
                .wait(t)
                .unwrap_or_else(|p| p.into_inner());
        }
    }

    fn release_slot(&self, id: u32) {
        let mut t = lock(&self.table);
        if let Some(e) = t.entries.get_mut(&id) {
            if e.closer.take().is_some() {
                t.slots -= 1;
            }
        }
        t.drop_if_unheld(id);
        drop(t);
        self.slot_released.notify_all();
    }

    // -----------------------------------------------------------------------------------------
    // Registrations (PROCESSLIST, KILL)

    /// Registers an authenticated connection (fills in its slot's entry, or adds one);
    /// dropping the guard unregisters it.
    pub fn register(self: &Arc<Self>, info: ConnectionInfo) -> ConnectionGuard {
        let ctl = Arc::new(ConnControl::default());
        let id = info.id;
        let mut t = lock(&self.table);
        let entry = ConnectionEntry {
            info,
            ctl: ctl.clone(),
        };
        match t.entries.get_mut(&id) {
            Some(e) => e.registered = Some(entry),
            None => {
                t.entries.insert(
                    id,
                    Entry {
                        registered: Some(entry),
                        closer: None,
                    },
                );
            }
        }
        t.check();
        ConnectionGuard {
            registry: self.clone(),
            id,
            ctl,
        }
    }

    fn unregister(&self, id: u32, ctl: &Arc<ConnControl>) {
        let mut t = lock(&self.table);
        if let Some(e) = t.entries.get_mut(&id) {
            // Only this guard's registration (a later one under the same id is not ours).
            if e.registered
                .as_ref()
                .is_some_and(|r| Arc::ptr_eq(&r.ctl, ctl))
            {
                e.registered = None;
            }
        }
        t.drop_if_unheld(id);
    }

    /// Number of registered connections (`Threads_connected`).
    pub fn connection_count(&self) -> usize {
        lock(&self.table)
            .entries
            .values()
            .filter(|e| e.registered.is_some())
            .count()
    }

    /// A copy of every registered connection, in id order (PROCESSLIST).
    pub fn connections(&self) -> Vec<ConnectionEntry> {
        lock(&self.table)
            .entries
            .values()
            .filter_map(|e| e.registered.clone())
            .collect()
    }

    /// Runs `f` on the info of registered connection `id`, if registered.
    pub fn update_connection(&self, id: u32, f: impl FnOnce(&mut ConnectionInfo)) {
        if let Some(r) = lock(&self.table)
            .entries
            .get_mut(&id)
            .and_then(|e| e.registered.as_mut())
        {
            f(&mut r.info);
        }
    }

    /// The control of registered connection `id`.
    pub fn connection_control(&self, id: u32) -> Option<Arc<ConnControl>> {
        lock(&self.table)
            .entries
            .get(&id)
            .and_then(|e| e.registered.as_ref())
            .map(|r| r.ctl.clone())
    }

    // -----------------------------------------------------------------------------------------
    // Shutdown flag

    /// Asks the server to stop (SHUTDOWN statement, COM_SHUTDOWN).
    pub fn request_shutdown(&self) {
        *lock(&self.shutdown_requested) = true;
        self.shutdown_cv.notify_all();
    }

    pub fn shutdown_requested(&self) -> bool {
        *lock(&self.shutdown_requested)
    }

    /// Blocks until [`request_shutdown`](Self::request_shutdown) was called.
    pub fn wait_shutdown_request(&self) {
        let mut r = lock(&self.shutdown_requested);
        while !*r {
            r = self.shutdown_cv.wait(r).unwrap_or_else(|p| p.into_inner());
        }
    }

    // -----------------------------------------------------------------------------------------
    // Counters

    /// Counts one statement received from a client (`Questions`).
    pub fn question(&self) {
        self.questions.fetch_add(1, Ordering::Relaxed);
    }

    /// `Questions`.
    pub fn questions(&self) -> u64 {
        self.questions.load(Ordering::Relaxed)
    }

    /// Time since the registry (the server) started (`Uptime`).
    pub fn uptime(&self) -> Duration {
        self.started.elapsed()
    }
}

/// A listener slot; dropping it releases the slot (and the entry, unless registered).
pub struct Slot {
    registry: Arc<Registry>,
    id: u32,
    extra: bool,
}

impl Slot {
    /// The connection id.
    pub fn id(&self) -> u32 {
        self.id
    }
    /// The slot above `max_connections`: kept after authentication only by an account with
    /// CONNECTION ADMIN or SUPER.
    pub fn extra(&self) -> bool {
        self.extra
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.registry.release_slot(self.id);
    }
}

/// Removes its connection's registration when dropped.
pub struct ConnectionGuard {
    registry: Arc<Registry>,
    id: u32,
    ctl: Arc<ConnControl>,
}

impl ConnectionGuard {
    pub fn id(&self) -> u32 {
        self.id
    }
    /// True once `KILL [CONNECTION] <id>` was issued for this connection (or its running
    /// statement found the client gone).
    pub fn killed(&self) -> bool {
        self.ctl.connection_killed()
    }
}

impl Drop for ConnectionGuard {
    fn drop(&mut self) {
        self.registry.unregister(self.id, &self.ctl);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn slots_and_registrations_share_one_entry() {
        let r = Arc::new(Registry::new());
        let closed = Arc::new(AtomicUsize::new(0));
        let c = closed.clone();
        let slot = r
            .take_slot(
                1,
                Box::new(move || {
                    c.fetch_add(1, Ordering::Relaxed);
                }),
            )
            .unwrap();
        assert_eq!(slot.id(), 1);
        assert!(!slot.extra());
        assert_eq!((r.slot_count(), r.connection_count()), (1, 0));
        let g = r.register(ConnectionInfo::new(slot.id(), "u", "localhost"));
        assert_eq!((r.slot_count(), r.connection_count()), (1, 1));
        r.close_connections();
        assert_eq!(closed.load(Ordering::Relaxed), 1);
        let extra = r.take_slot(1, Box::new(|| {})).unwrap();
        assert!(extra.extra());
        assert!(r.take_slot(1, Box::new(|| {})).is_none());
        drop(extra);
        drop(g);
        assert_eq!((r.slot_count(), r.connection_count()), (1, 0));
        drop(slot);
        assert_eq!(r.slot_count(), 0);
        r.wait_no_slots();
        assert!(lock(&r.table).entries.is_empty());
    }

    #[test]
    fn a_registration_without_a_slot_is_its_own_entry() {
        let r = Arc::new(Registry::new());
        let g = r.register(ConnectionInfo::new(7, "u", "h"));
        assert!(r.connection_control(7).is_some());
        r.update_connection(7, |i| i.db = Some("d".into()));
        assert_eq!(r.connections()[0].info.db.as_deref(), Some("d"));
        // A newer registration under the same id is not removed by the older guard.
        let g2 = r.register(ConnectionInfo::new(7, "u", "h"));
        drop(g);
        assert_eq!(r.connection_count(), 1);
        drop(g2);
        assert_eq!(r.connection_count(), 0);
    }

    #[test]
    fn questions_count_and_shutdown_stays_set() {
        let r = Registry::new();
        r.question();
        assert_eq!(r.questions(), 1);
        assert!(!r.shutdown_requested());
        r.request_shutdown();
        r.request_shutdown();
        r.wait_shutdown_request();
        assert!(r.shutdown_requested());
    }
}
