//! Where a commit's GTID comes from, and the replica's position (`gtid_slave_pos`).
//!
//! Owns [`CommitOrigin`] (what a session's `gtid_domain_id` / `server_id` / `gtid_seq_no`
//! and a replica's applier ask of the next commit), the per-thread scope that carries it to
//! the commit path ([`Engine::with_origin`]), `@@last_gtid` per thread, and the engine's
//! replica position API (`gtid_slave_pos`, `gtid_current_pos`, `gtid_strict_mode`).
//!
//! Invariants: an origin applies only inside its scope and only on the thread that set it; a
//! replicated commit moves `gtid_slave_pos` in the same log record that carries its changes
//! (so the position is exactly as durable as the data, and recovery rebuilds it).

use std::cell::{Cell, RefCell};
use std::time::Duration;

use onelog_binlog::{Gtid, GtidPos};

use crate::engine::Engine;
use crate::error::EngineError;

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

impl Engine {
    /// Runs `f` with `origin` in scope on this thread: every commit and DDL `f` makes is
    /// logged as the origin says (module docs). Returns `f`'s result and the origin as `f`
    /// left it (`seq_no` cleared once used).
    pub fn with_origin<R>(&self, origin: CommitOrigin, f: impl FnOnce() -> R) -> (R, CommitOrigin) {
        let prev = ORIGIN.with(|o| o.borrow_mut().replace(origin));
        let r = f();
        let after = ORIGIN.with(|o| std::mem::replace(&mut *o.borrow_mut(), prev));
        (r, after.unwrap_or(origin))
    }

    /// The GTID of the last commit made on this thread (`@@last_gtid`).
    pub fn thread_last_gtid() -> Option<Gtid> {
        LAST_GTID.with(|l| l.get())
    }

    /// `@@gtid_slave_pos`.
    pub fn gtid_slave_pos(&self) -> GtidPos {
        self.core().store().current().slave_pos.clone()
    }

    /// `SET GLOBAL gtid_slave_pos` (and DEMOTE): durable before it returns (a checkpoint of
    /// the root carrying it is written: the log after it only moves the position further).
    /// The caller checks that no replica thread runs and MariaDB's 1947/1948 rules.
    pub fn set_gtid_slave_pos(&self, pos: GtidPos) -> Result<(), EngineError> {
        let core = self.core();
        core.check_open()?;
        {
            let gate = core.exclusive();
            core.publish_slave_pos(&gate, pos);
        }
        self.checkpoints().write(core, true)?;
        Ok(())
    }

    /// `@@gtid_current_pos` (REPLICATION_FACTS.md §2.1): per domain, the binlog's last GTID if
    /// its server id is this server's and its seq_no is above the slave position's, else the
    /// slave position's; domains only in the binlog under other server ids are left out.
    pub fn gtid_current_pos(&self) -> GtidPos {
        let own = self.options().server_id;
        let slave = self.gtid_slave_pos();
        let mut pos = slave.clone();
        for g in self.log().gtid_state().pos().iter() {
            if g.server_id != own {
                continue;
            }
            match slave.get(g.domain_id) {
                Some(s) if s.seq_no >= g.seq_no => {}
                _ => pos.set(g),
            }
        }
        pos
    }

    /// Waits up to `timeout` for `gtid_slave_pos` to satisfy `until`; true when it does.
    pub fn wait_slave_pos(&self, until: &dyn Fn(&GtidPos) -> bool, timeout: Duration) -> bool {
        let deadline = std::time::Instant::now() + timeout;
        let mut seen = self.core().wait_slave_pos_moved(u64::MAX, Duration::ZERO);
        loop {
            if until(&self.gtid_slave_pos()) {
                return true;
            }
            let now = std::time::Instant::now();
            if now >= deadline {
                return false;
            }
            seen = self.core().wait_slave_pos_moved(seen, deadline - now);
        }
    }

    /// `@@gtid_strict_mode`: a commit whose GTID would not be above its domain's last fails
    /// with 1950 (the log refuses it: `LogError::GtidOutOfOrder`).
    pub fn set_gtid_strict_mode(&self, on: bool) {
        self.log().set_gtid_strict_mode(on);
    }

    pub fn gtid_strict_mode(&self) -> bool {
        self.log().gtid_strict_mode()
    }
}
