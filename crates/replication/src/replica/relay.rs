//! Event groups between the IO thread and the SQL side, and the bounded queue that carries
//! them.
//!
//! Owns [`RelayGroup`] (one GTID event group as the primary sent it: its raw events, CRC32
//! included, and where it ended in the primary's binlog) and [`RelayQueue`] (a FIFO bounded
//! in bytes: the IO thread blocks when the SQL side falls behind, so a fast primary costs the
//! replica bounded memory).
//!
//! Invariants: groups leave the queue in the order they entered; the queue holds at most
//! `max_bytes` of events plus one group (a single group larger than the bound still passes,
//! alone); a waiting producer is woken when the queue drains to half its bound or empties
//! (and by its own timeout); `close` wakes every waiter.

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

use onelog_binlog::Gtid;

/// One event group from the primary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RelayGroup {
    pub gtid: Gtid,
    /// The GTID event's flags2 (FL_STANDALONE, FL_GROUP_COMMIT_ID, FL_TRANSACTIONAL,
    /// FL_ALLOW_PARALLEL, FL_WAITED, FL_DDL).
    pub flags2: u8,
    /// The primary's commit id when FL_GROUP_COMMIT_ID is set.
    pub commit_id: Option<u64>,
    /// Timestamp of the GTID event's header (the primary's commit time, seconds).
    pub timestamp: u32,
    /// The group's events in stream order, each whole (header .. CRC32), the GTID event first.
    pub events: Vec<Vec<u8>>,
    /// The primary's binlog file and the end position of the group's last event in it.
    pub master_log_file: String,
    pub end_log_pos: u64,
}

impl RelayGroup {
    /// Bytes of events.
    pub fn size(&self) -> usize {
        self.events.iter().map(Vec::len).sum()
    }
}

struct State {
    groups: VecDeque<RelayGroup>,
    bytes: usize,
    closed: bool,
}

/// FIFO of groups bounded in bytes (module docs).
pub struct RelayQueue {
    max_bytes: usize,
    state: Mutex<State>,
    not_empty: Condvar,
    not_full: Condvar,
}

impl RelayQueue {
    pub fn new(max_bytes: usize) -> RelayQueue {
        RelayQueue {
            max_bytes: max_bytes.max(1),
            state: Mutex::new(State {
                groups: VecDeque::new(),
                bytes: 0,
                closed: false,
            }),
            not_empty: Condvar::new(),
            not_full: Condvar::new(),
        }
    }

    fn locked(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Appends `group`, waiting while the queue is full; waits at most `timeout` per wake-up
    /// and gives the group back (`Err`) when the queue was closed or `timeout` passed.
    pub fn push(&self, group: RelayGroup, timeout: Duration) -> Result<(), RelayGroup> {
        let size = group.size();
        let mut s = self.locked();
        while !s.closed && !s.groups.is_empty() && s.bytes + size > self.max_bytes {
            let (g, t) = self
                .not_full
                .wait_timeout(s, timeout)
                .unwrap_or_else(|p| p.into_inner());
            s = g;
            if t.timed_out() && !s.groups.is_empty() && s.bytes + size > self.max_bytes {
                return Err(group);
            }
        }
        if s.closed {
            return Err(group);
        }
        s.bytes += size;
        s.groups.push_back(group);
        self.not_empty.notify_one();
        Ok(())
    }

    /// Takes the oldest group, waiting up to `timeout`; None on timeout or when closed and
    /// empty.
    pub fn pop(&self, timeout: Duration) -> Option<RelayGroup> {
        let mut s = self.locked();
        if s.groups.is_empty() && !s.closed {
            s = self
                .not_empty
                .wait_timeout(s, timeout)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        let g = s.groups.pop_front()?;
        let before = s.bytes;
        s.bytes -= g.size();
        // A producer waits while the queue is full: wake it once half the bound is free (or
        // the queue is empty, for a group larger than half), not at every group taken, so a
        // backlog costs one wake-up per half queue instead of one per group.
        let half = self.max_bytes / 2;
        if (before > half && s.bytes <= half) || s.groups.is_empty() {
            self.not_full.notify_all();
        }
        Some(g)
    }

    /// Groups waiting.
    pub fn len(&self) -> usize {
        self.locked().groups.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes waiting (`Relay_Log_Space`).
    pub fn bytes(&self) -> usize {
        self.locked().bytes
    }

    /// Drops every waiting group (RESET SLAVE, a restart of the IO thread from
    /// `gtid_slave_pos`).
    pub fn clear(&self) {
        let mut s = self.locked();
        s.groups.clear();
        s.bytes = 0;
        self.not_full.notify_all();
    }

    /// Closes the queue: pushes fail, pops drain what is left then return None.
    pub fn close(&self) {
        self.locked().closed = true;
        self.not_empty.notify_all();
        self.not_full.notify_all();
    }

    /// Opens a closed queue again (START SLAVE after STOP SLAVE).
    pub fn reopen(&self) {
        self.locked().closed = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(seq: u64, size: usize) -> RelayGroup {
        RelayGroup {
            gtid: Gtid::new(0, 1, seq),
            flags2: 0,
            commit_id: None,
            timestamp: 0,
            events: vec![vec![0; size]],
            master_log_file: "binlog.000001".into(),
            end_log_pos: 0,
        }
    }

    #[test]
    fn a_blocked_producer_is_woken_as_the_queue_drains() {
        // 10-byte groups into a 100-byte queue: the producer blocks whenever it is full and
        // is woken at half; a wake-up lost would make a push time out (30 s) and fail.
        let q = std::sync::Arc::new(RelayQueue::new(100));
        let producer = {
            let q = q.clone();
            std::thread::spawn(move || {
                (1..=200).all(|seq| q.push(group(seq, 10), Duration::from_secs(30)).is_ok())
            })
        };
        let mut got = Vec::new();
        while let Some(g) = q.pop(Duration::from_secs(30)) {
            assert!(q.bytes() <= 100);
            got.push(g.gtid.seq_no);
            if got.len() == 200 {
                break;
            }
        }
        assert!(producer.join().unwrap());
        assert_eq!(got, (1..=200).collect::<Vec<u64>>());
    }

    #[test]
    fn fifo_and_bound() {
        let q = RelayQueue::new(100);
        q.push(group(1, 60), Duration::from_millis(10)).unwrap();
        // Full: a second 60-byte group times out and is handed back.
        let back = q.push(group(2, 60), Duration::from_millis(10)).unwrap_err();
        assert_eq!(back.gtid.seq_no, 2);
        assert_eq!(q.bytes(), 60);
        assert_eq!(q.pop(Duration::from_millis(10)).unwrap().gtid.seq_no, 1);
        // A group larger than the bound passes when the queue is empty.
        q.push(group(3, 500), Duration::from_millis(10)).unwrap();
        assert_eq!(q.pop(Duration::from_millis(10)).unwrap().gtid.seq_no, 3);
        assert!(q.pop(Duration::from_millis(10)).is_none());
        q.close();
        assert!(q.push(group(4, 1), Duration::from_millis(10)).is_err());
    }
}
