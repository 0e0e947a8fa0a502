//! `lock`: how the log takes its mutexes. Used by every module that holds state behind one;
//! imports nothing of the crate.
//!
//! Invariants: a poisoned mutex is taken anyway: every state a lock protects is changed only in
//! steps that keep it consistent, so a panicking thread cannot leave it half changed.

use std::sync::{Mutex, MutexGuard, TryLockError};

/// Locks a mutex, ignoring poisoning (a panicking test thread must not wedge the log; the
/// protected state is only mutated in ways that keep it consistent at every step).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// [`lock`] without waiting: None when another thread holds the mutex.
pub(crate) fn try_lock<T>(m: &Mutex<T>) -> Option<MutexGuard<'_, T>> {
    match m.try_lock() {
        Ok(g) => Some(g),
        Err(TryLockError::Poisoned(p)) => Some(p.into_inner()),
        Err(TryLockError::WouldBlock) => None,
    }
}
