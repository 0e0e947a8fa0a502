//! The SQL thread and its workers: applying relay groups in the primary's commit order.
//!
//! Owns [`CommitOrder`], the ticket a group carries while it is applied: its place `index` in
//! the stream of groups this SQL thread handed out, and the shared [`OrderBook`] that says how
//! far the groups before it got (queued in the log, committed) or whether one of them failed.
//!
//! Invariants: group `i` is handed to the log only after every group `< i` was (so the log's
//! order is the primary's order); `committed_upto` only grows and counts a group once its
//! commit returned; a failure at `i` makes every waiter `> i` give up (they are retried after
//! it).

use std::collections::BTreeSet;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

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

/// Progress of the groups of one SQL thread (module docs).
#[derive(Default)]
pub struct OrderBook {
    book: Mutex<Book>,
    changed: Condvar,
}

impl OrderBook {
    pub fn new() -> Arc<OrderBook> {
        Arc::new(OrderBook::default())
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
            b = self.changed.wait(b).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// Group `index` was handed to the log.
    pub fn mark_queued(&self, index: u64) {
        let mut b = self.locked();
        debug_assert_eq!(b.queued_upto, index, "groups queue in order");
        b.queued_upto = b.queued_upto.max(index + 1);
        self.changed.notify_all();
    }

    /// Group `index` committed.
    pub fn mark_committed(&self, index: u64) {
        let mut b = self.locked();
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
        self.changed.notify_all();
    }

    /// Group `index` failed: later waiters give up.
    pub fn mark_failed(&self, index: u64) {
        let mut b = self.locked();
        b.failed_at = Some(b.failed_at.map_or(index, |f| f.min(index)));
        self.changed.notify_all();
    }

    /// After a failure was handled: groups from `index` on are handed out again.
    pub fn restart_at(&self, index: u64) {
        let mut b = self.locked();
        b.failed_at = None;
        b.queued_upto = index;
        b.committed_above.retain(|&i| i < index);
        self.changed.notify_all();
    }

    /// Wakes every waiter with `Stopping`.
    pub fn stop(&self) {
        self.locked().stopping = true;
        self.changed.notify_all();
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

    /// This group was handed to the log (call from the log's queue hook).
    pub fn queued(&self) {
        self.book.mark_queued(self.index);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
