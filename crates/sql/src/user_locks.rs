//! User-level locks: GET_LOCK, RELEASE_LOCK, RELEASE_ALL_LOCKS, IS_FREE_LOCK, IS_USED_LOCK
//! (the functions are in `expr/functions/locks.rs`; this module owns the server's table).
//!
//! Owns [`UserLocks`] (one per server: which connection holds each name, how many times, and
//! which name each waiting connection waits for) and [`SessionLocks`] (a session's handle,
//! which releases everything the session holds when it is dropped, i.e. at disconnect).
//!
//! Semantics, as MariaDB 10.11 (checked against it): names are compared byte for byte (case
//! sensitive); a holder may take its lock again (each GET_LOCK counts, each RELEASE_LOCK
//! takes one back, RELEASE_ALL_LOCKS returns the sum); a waiter whose wait would close a cycle
//! of waits (A holds x and waits for y, B holds y and asks for x) is refused at once with
//! 1213; waits end on KILL and `max_statement_time` like any statement (the guard's checks).
//!
//! Invariants: every held name has a count of at least 1; a connection waits for at most one
//! name at a time, and only while it is in [`UserLocks::acquire`]; the table's mutex is never
//! held while waiting (only the condvar wait releases it).

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use onelog_protocol::errors;

use crate::error::SqlError;
use crate::guard::StatementGuard;

#[derive(Default)]
struct Table {
    /// Name -> (holder's connection id, times taken).
    held: HashMap<Vec<u8>, (u32, u64)>,
    /// Connection id -> the name it waits for.
    waiting: HashMap<u32, Vec<u8>>,
}

/// The server's user-level locks.
#[derive(Default)]
pub struct UserLocks {
    table: Mutex<Table>,
    released: Condvar,
}

/// How long one wait slice lasts before the guard is checked again.
const SLICE: Duration = Duration::from_millis(50);

impl UserLocks {
    fn lock(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// GET_LOCK: Ok(true) once `conn` holds `name`, Ok(false) when `timeout` passed first,
    /// 1213 when waiting would deadlock, the guard's error when the statement is stopped.
    pub fn acquire(
        &self,
        conn: u32,
        name: &[u8],
        timeout: Duration,
        guard: &StatementGuard,
    ) -> Result<bool, SqlError> {
        let end = Instant::now().checked_add(timeout);
        let mut t = self.lock();
        loop {
            match t.held.get_mut(name) {
                None => {
                    t.held.insert(name.to_vec(), (conn, 1));
                    t.waiting.remove(&conn);
                    return Ok(true);
                }
                Some((holder, n)) if *holder == conn => {
                    *n += 1;
                    t.waiting.remove(&conn);
                    return Ok(true);
                }
                Some(&mut (holder, _)) => {
                    if closes_cycle(&t, conn, holder) {
                        t.waiting.remove(&conn);
                        return Err(SqlError::of(
                            errors::ER_LOCK_DEADLOCK,
                            "Deadlock found when trying to get lock; try restarting transaction",
                        ));
                    }
                }
            }
            let now = Instant::now();
            if end.is_some_and(|e| now >= e) {
                t.waiting.remove(&conn);
                return Ok(false);
            }
            t.waiting.insert(conn, name.to_vec());
            let slice = end.map_or(SLICE, |e| (e - now).min(SLICE));
            t = self
                .released
                .wait_timeout(t, slice)
                .unwrap_or_else(|p| p.into_inner())
                .0;
            if let Err(e) = guard.check_now() {
                t.waiting.remove(&conn);
                return Err(e);
            }
        }
    }

    /// RELEASE_LOCK: Some(true) when `conn` held `name` (once less now), Some(false) when
    /// another connection holds it, None when nobody does.
    pub fn release(&self, conn: u32, name: &[u8]) -> Option<bool> {
        let mut t = self.lock();
        let (holder, n) = t.held.get_mut(name)?;
        if *holder != conn {
            return Some(false);
        }
        *n -= 1;
        if *n == 0 {
            t.held.remove(name);
            self.released.notify_all();
        }
        Some(true)
    }

    /// RELEASE_ALL_LOCKS (and a session's end): releases everything `conn` holds; the number
    /// of times the names had been taken.
    pub fn release_all(&self, conn: u32) -> u64 {
        let mut t = self.lock();
        let mut count = 0;
        t.held.retain(|_, (holder, n)| {
            let mine = *holder == conn;
            if mine {
                count += *n;
            }
            !mine
        });
        t.waiting.remove(&conn);
        if count > 0 {
            self.released.notify_all();
        }
        count
    }

    /// IS_USED_LOCK: the holder's connection id.
    pub fn holder(&self, name: &[u8]) -> Option<u32> {
        self.lock().held.get(name).map(|&(holder, _)| holder)
    }
}

/// Whether `conn` waiting for a lock `holder` holds would close a cycle: `holder` waits
/// (through other holders) for something `conn` holds.
fn closes_cycle(t: &Table, conn: u32, holder: u32) -> bool {
    let mut at = holder;
    // Each step moves to another connection; a chain longer than the waiters is a cycle
    // not through `conn` (impossible by the invariant, bounded anyway).
    for _ in 0..=t.waiting.len() {
        if at == conn {
            return true;
        }
        let Some(name) = t.waiting.get(&at) else {
            return false;
        };
        match t.held.get(name) {
            Some(&(next, _)) => at = next,
            None => return false,
        }
    }
    false
}

/// A session's handle on the server's user locks: releases what the session holds when it
/// is dropped.
pub struct SessionLocks {
    table: Arc<UserLocks>,
    conn: u32,
}

impl SessionLocks {
    pub fn new(table: Arc<UserLocks>, conn: u32) -> Self {
        SessionLocks { table, conn }
    }

    pub fn table(&self) -> &UserLocks {
        &self.table
    }
}

impl Drop for SessionLocks {
    fn drop(&mut self) {
        self.table.release_all(self.conn);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard() -> StatementGuard {
        StatementGuard::new(Default::default())
    }

    #[test]
    fn locks_count_per_holder_and_release_at_session_end() {
        let t = Arc::new(UserLocks::default());
        let g = guard();
        assert!(t.acquire(1, b"a", Duration::ZERO, &g).unwrap());
        assert!(t.acquire(1, b"a", Duration::ZERO, &g).unwrap());
        assert!(!t.acquire(2, b"a", Duration::from_millis(20), &g).unwrap());
        assert!(
            t.acquire(2, b"A", Duration::ZERO, &g).unwrap(),
            "case sensitive"
        );
        assert_eq!(t.release(2, b"a"), Some(false));
        assert_eq!(t.release(1, b"a"), Some(true));
        assert_eq!(t.holder(b"a"), Some(1));
        assert_eq!(t.release(1, b"a"), Some(true));
        assert_eq!(t.holder(b"a"), None);
        assert_eq!(t.release(1, b"a"), None);
        {
            let s = SessionLocks::new(t.clone(), 3);
            assert!(s.table().acquire(3, b"x", Duration::ZERO, &g).unwrap());
            assert!(s.table().acquire(3, b"y", Duration::ZERO, &g).unwrap());
            assert_eq!(t.holder(b"x"), Some(3));
        }
        assert_eq!(t.holder(b"x"), None);
        assert_eq!(t.holder(b"y"), None);
        assert_eq!(t.release_all(2), 1);
    }

    #[test]
    fn a_waiter_gets_the_lock_when_it_is_released_and_a_cycle_is_refused() {
        let t = Arc::new(UserLocks::default());
        let g = guard();
        assert!(t.acquire(1, b"l1", Duration::ZERO, &g).unwrap());
        assert!(t.acquire(2, b"l2", Duration::ZERO, &g).unwrap());
        let t2 = t.clone();
        let waiter = std::thread::spawn(move || {
            // Connection 1 waits for l2 (held by 2).
            t2.acquire(1, b"l2", Duration::from_secs(30), &guard())
        });
        let start = Instant::now();
        while !t.lock().waiting.contains_key(&1) {
            assert!(start.elapsed() < Duration::from_secs(30), "1 never waited");
            std::thread::sleep(Duration::from_millis(1));
        }
        // 2 asking for l1 closes the cycle 2 -> 1 -> 2.
        let e = t
            .acquire(2, b"l1", Duration::from_secs(30), &g)
            .unwrap_err();
        assert_eq!(e.code, errors::ER_LOCK_DEADLOCK.code);
        assert_eq!(t.release_all(2), 1);
        assert!(waiter.join().unwrap().unwrap());
        assert_eq!(t.holder(b"l2"), Some(1));
    }
}
