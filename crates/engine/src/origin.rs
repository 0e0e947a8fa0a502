//! Where a commit's GTID comes from.
//!
//! Owns [`CommitOrigin`] (what a session's `gtid_domain_id` / `server_id` / `gtid_seq_no`
//! and a replica's applier ask of the next commit), the per-thread scope that carries it to
//! the commit path (`Engine::with_origin`, in `replica.rs`, sets it; `commit.rs` reads it)
//! and `@@last_gtid` per thread. The engine's replica position API (`gtid_slave_pos`,
//! `gtid_current_pos`, `gtid_strict_mode`) is `replica.rs`'s. Imports nothing of the crate.
//!
//! Invariants: an origin applies only inside its scope and only on the thread that set it; a
//! replicated commit moves `gtid_slave_pos` in the same log record that carries its changes
//! (so the position is exactly as durable as the data, and recovery rebuilds it).

use std::cell::{Cell, RefCell};

use onelog_binlog::Gtid;

/// What the next commits of a scope are logged as.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CommitOrigin {
    /// `@@gtid_domain_id` (None: the server's).
    pub domain_id: Option<u32>,
    /// `@@server_id` of the session (None: the server's).
    pub server_id: Option<u32>,
    /// `@@gtid_seq_no`: the next commit gets exactly this sequence number (None: the next of
    /// its domain). Used by one commit, then cleared.
    pub seq_no: Option<u64>,
    /// A replica applying its primary's transaction: the commit moves `gtid_slave_pos`.
    pub replicated: bool,
    /// The original commit's timestamp for its events (None: now).
    pub timestamp: Option<u32>,
}

thread_local! {
    static ORIGIN: RefCell<Option<CommitOrigin>> = const { RefCell::new(None) };
    static LAST_GTID: Cell<Option<Gtid>> = const { Cell::new(None) };
}

/// The origin in scope on this thread.
pub(crate) fn current_origin() -> Option<CommitOrigin> {
    ORIGIN.with(|o| *o.borrow())
}

/// Clears `seq_no` of the origin in scope (a fixed sequence number is used once).
pub(crate) fn consume_seq_no() {
    ORIGIN.with(|o| {
        if let Some(o) = o.borrow_mut().as_mut() {
            o.seq_no = None;
        }
    });
}

/// Records the GTID a commit on this thread was logged with (`@@last_gtid`).
pub(crate) fn note_committed(gtid: Gtid) {
    LAST_GTID.with(|l| l.set(Some(gtid)));
}

/// Sets the scope's origin, returning the one it replaces (`Engine::with_origin`).
pub(crate) fn enter(origin: CommitOrigin) -> Option<CommitOrigin> {
    ORIGIN.with(|o| o.borrow_mut().replace(origin))
}

/// Ends a scope: puts `prev` back and returns the origin as the scope left it.
pub(crate) fn leave(prev: Option<CommitOrigin>) -> Option<CommitOrigin> {
    ORIGIN.with(|o| std::mem::replace(&mut *o.borrow_mut(), prev))
}

/// The GTID of the last commit made on this thread.
pub(crate) fn last_gtid() -> Option<Gtid> {
    LAST_GTID.with(|l| l.get())
}
