//! Where a GTID-mode dump starts (REPLICATION_FACTS.md §1.7, MariaDB's
//! `check_slave_start_position` and the skipping in `send_event_to_slave`).
//!
//! Owns [`validate`] (every requested GTID checked against the primary's binlog state, with
//! MariaDB's 1236 texts) and [`Skip`] (per domain, which groups the reader already has).
//!
//! Rules, per requested GTID D-S-N, in MariaDB's order:
//! - OK if the binlog state has (D, S) at N or beyond;
//! - OK if D-S-N is the primary's own `gtid_slave_pos` in D (a former replica);
//! - OK if the binlog has never seen domain D (the check is redone when D appears: the first
//!   group of D passes the skip test only if it follows N);
//! - OK with `@slave_gtid_ignore_duplicates` if the binlog's newest seq in D is below N;
//! - otherwise 1945's text when the binlog has no higher seq in D, 1955's when it has.
//!
//! Invariants: a domain leaves the skip set at most once, and groups of domains not in it are
//! never skipped.

use onelog_binlog::{Gtid, GtidPos, GtidState};

/// Why a dump cannot start or continue: sent as error 1236 with this text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fatal(pub String);

/// Checks `requested` against the primary's binlog state (see the module docs).
pub fn validate(
    requested: &GtidPos,
    state: &GtidState,
    own_slave_pos: &GtidPos,
    ignore_duplicates: bool,
) -> Result<(), Fatal> {
    let entries = state.entries();
    for g in requested.iter() {
        let same_server = entries.iter().any(|e| {
            e.domain_id == g.domain_id && e.server_id == g.server_id && e.seq_no >= g.seq_no
        });
        if same_server || own_slave_pos.get(g.domain_id) == Some(g) {
            continue;
        }
        let Some(last) = state.last(g.domain_id) else {
            continue;
        };
        let max_seq = state.next_seq(g.domain_id) - 1;
        if ignore_duplicates && max_seq < g.seq_no {
            continue;
        }
        let _ = last;
        return Err(if max_seq > g.seq_no {
            Fatal(format!(
                "Error: connecting slave requested to start from GTID {g}, which is not in the \
                 master's binlog. Since the master's binlog contains GTIDs with higher sequence \
                 numbers, it probably means that the slave has diverged due to executing extra \
                 erroneous transactions"
            ))
        } else {
            Fatal(format!(
                "Error: connecting slave requested to start from GTID {g}, which is not in the \
                 master's binlog"
            ))
        });
    }
    Ok(())
}

/// The text when no file starts early enough for the requested position.
pub fn purged_text() -> String {
    "Could not find GTID state requested by slave in any binlog files. Probably the slave state \
     is too old and required binlog files have been purged."
        .to_string()
}

/// What to do with a group during a GTID start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The reader has it: do not send.
    Skip,
    /// Send it.
    Send,
}

/// Per domain of the start position, the GTID the reader has last; a domain leaves the set
/// at the group with that GTID (skipped) or at the first group after it.
#[derive(Clone, Debug)]
pub struct Skip {
    pending: GtidPos,
    start: GtidPos,
    strict: bool,
    skipped_any: bool,
}

impl Skip {
    pub fn new(start: GtidPos, strict: bool) -> Skip {
        Skip {
            pending: start.clone(),
            start,
            strict,
            skipped_any: false,
        }
    }

    /// True while some domain is still being skipped.
    pub fn active(&self) -> bool {
        !self.pending.is_empty()
    }

    /// True once at least one group was skipped (a fake Gtid_list is then due when the last
    /// domain leaves).
    pub fn skipped_any(&self) -> bool {
        self.skipped_any
    }

    /// The reader's start position (the body of the fake Gtid_list).
    pub fn start(&self) -> Vec<Gtid> {
        self.start.iter().collect()
    }

    /// The verdict on the group `g`; `Err` is the strict-mode hole (1951's text).
    pub fn judge(&mut self, g: Gtid) -> Result<Verdict, Fatal> {
        let Some(want) = self.pending.get(g.domain_id) else {
            return Ok(Verdict::Send);
        };
        if g.server_id != want.server_id || g.seq_no < want.seq_no {
            self.skipped_any = true;
            return Ok(Verdict::Skip);
        }
        if g.seq_no > want.seq_no && self.strict {
            return Err(Fatal(format!(
                "The binlog on the master is missing the GTID {want} requested by the slave \
                 (even though both a prior and a subsequent sequence number does exist), and \
                 GTID strict mode is enabled"
            )));
        }
        self.drop_domain(g.domain_id);
        if g.seq_no == want.seq_no {
            self.skipped_any = true;
            Ok(Verdict::Skip)
        } else {
            Ok(Verdict::Send)
        }
    }

    fn drop_domain(&mut self, domain: u32) {
        let left = self.pending.remove(domain);
        debug_assert!(left.is_some(), "a domain leaves the skip set at most once");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(s: &str) -> Gtid {
        s.parse().unwrap()
    }
    fn pos(s: &str) -> GtidPos {
        s.parse().unwrap()
    }

    #[test]
    fn validation_texts() {
        let st = GtidState::from_entries([g("0-1-10")]);
        let none = GtidPos::new();
        assert!(validate(&pos("0-1-9"), &st, &none, false).is_ok());
        assert!(
            validate(&pos("9-1-5"), &st, &none, false).is_ok(),
            "unknown domain"
        );
        let e = validate(&pos("0-1-100"), &st, &none, false).unwrap_err();
        assert_eq!(
            e.0,
            "Error: connecting slave requested to start from GTID 0-1-100, which is not in the master's binlog"
        );
        let e = validate(&pos("0-5-3"), &st, &none, false).unwrap_err();
        assert!(
            e.0.contains("GTID 0-5-3") && e.0.contains("diverged"),
            "{}",
            e.0
        );
        assert!(validate(&pos("0-1-100"), &st, &none, true).is_ok());
        assert!(validate(&pos("0-5-3"), &st, &pos("0-5-3"), false).is_ok());
    }

    #[test]
    fn skipping() {
        let mut s = Skip::new(pos("0-1-9"), true);
        assert_eq!(s.judge(g("0-1-8")).unwrap(), Verdict::Skip);
        assert_eq!(s.judge(g("1-1-1")).unwrap(), Verdict::Send);
        assert_eq!(s.judge(g("0-1-9")).unwrap(), Verdict::Skip);
        assert!(!s.active());
        assert_eq!(s.judge(g("0-1-10")).unwrap(), Verdict::Send);
        // A hole: 0-1-50 requested, the binlog jumps from 49 to 51.
        let mut s = Skip::new(pos("0-1-50"), true);
        assert_eq!(s.judge(g("0-1-49")).unwrap(), Verdict::Skip);
        assert!(s
            .judge(g("0-1-51"))
            .unwrap_err()
            .0
            .contains("missing the GTID 0-1-50"));
        let mut s = Skip::new(pos("0-1-50"), false);
        assert_eq!(s.judge(g("0-1-51")).unwrap(), Verdict::Send);
        assert!(!s.active());
    }
}
