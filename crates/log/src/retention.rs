//! Retention: which segments may be purged (DESIGN.md §4: "segments are purged only when all
//! of these allow").
//!
//! Owns [`Retention`] (what holds segments back), [`PurgePlan`] (what a purge removes),
//! [`SegmentInUse`] / [`PurgeError`] (why not) and the planners [`plan_purge_to`] (`PURGE
//! BINARY LOGS TO`) and [`plan_purge_while`] (`PURGE BINARY LOGS BEFORE`, expiry by age or
//! total size: the caller's predicate says which of the oldest segments it wants gone).
//! [`crate::Log::purge_to_checked`] and [`crate::Log::purge_while_checked`] plan against the
//! log's current segments and carry the plan out with [`crate::Log::purge_before`].
//!
//! The rules, in the order they are checked for each segment a purge would remove:
//! - recovery: a segment may go only if it ends at or before the LSN of the newest checkpoint
//!   (recovery replays the log from that LSN); with no checkpoint yet, none may go;
//! - readers: a segment may go only if it ends at or before the lowest LSN an open reader (a
//!   replica's dump, a backup) still needs, when the caller names one;
//! - the current segment (the last one) is never purged.
//!
//! Called by the engine (`Engine::purge_log_to`, which knows the checkpoint LSN) and through it
//! by SQL's PURGE BINARY LOGS. The log keeps no list of readers: whoever tracks them passes the
//! oldest one in [`Retention::oldest_reader_lsn`].
//!
//! Invariants: a plan only ever names a prefix of the segments, never the last one, and every
//! segment in it passes [`Retention::check`] (asserted where plans are made).

use std::fmt;

use crate::{Lsn, SegmentInfo};

/// What holds segments back from a purge.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Retention {
    /// LSN of the newest checkpoint; None when there is none yet (recovery needs every segment).
    pub checkpoint_lsn: Option<Lsn>,
    /// Lowest LSN an open reader still needs; None when no reader holds anything back.
    pub oldest_reader_lsn: Option<Lsn>,
}

/// Who still needs a segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NeededBy {
    /// Crash recovery: the segment ends after the newest checkpoint (`None`: there is none).
    Recovery { checkpoint_lsn: Option<Lsn> },
    /// An open reader at this LSN.
    Reader { lsn: Lsn },
}

/// A segment a purge would remove but may not (MySQL error 1378, `ER_LOG_IN_USE`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentInUse {
    /// Its binlog file name (`binlog.NNNNNN`, the classic view's).
    pub name: String,
    pub number: u64,
    /// Where its records end.
    pub end_lsn: Lsn,
    pub needed_by: NeededBy,
}

impl fmt::Display for SegmentInUse {
    /// The text of SQL's 1378 error (`ER_LOG_IN_USE`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.needed_by {
            NeededBy::Recovery { checkpoint_lsn } => write!(
                f,
                "A purgeable log is in use, will not purge: {} is still needed for crash \
                 recovery (it ends at LSN {}, after the newest checkpoint {}); it can be purged \
                 after the next checkpoint",
                self.name,
                self.end_lsn,
                checkpoint_lsn.map_or("(none yet)".to_string(), |c| format!("at LSN {c}"))
            ),
            NeededBy::Reader { lsn } => write!(
                f,
                "A purgeable log is in use, will not purge: {} is still being read (it ends at \
                 LSN {}, after a reader at LSN {lsn})",
                self.name, self.end_lsn
            ),
        }
    }
}

impl std::error::Error for SegmentInUse {}

/// Why a purge was refused.
#[derive(Debug)]
pub enum PurgeError {
    /// `PURGE BINARY LOGS TO` named no segment of the log (MySQL 1373,
    /// `ER_UNKNOWN_TARGET_BINLOG`, "Target log not found in binlog index").
    UnknownTarget(String),
    /// A segment that would go is still needed (MySQL 1378, `ER_LOG_IN_USE`).
    InUse(SegmentInUse),
    /// Removing the files failed (MySQL 1377, `ER_BINLOG_PURGE_FATAL_ERR`).
    Log(crate::LogError),
}

impl fmt::Display for PurgeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PurgeError::UnknownTarget(_) => f.write_str("Target log not found in binlog index"),
            PurgeError::InUse(s) => s.fmt(f),
            PurgeError::Log(e) => write!(f, "Fatal error during log purge: {e}"),
        }
    }
}

impl std::error::Error for PurgeError {}

/// What a purge removes: the `count` oldest segments, i.e. every segment that ends at or
/// before `before_lsn` (the start LSN of the first segment kept).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PurgePlan {
    pub count: usize,
    /// None when nothing is to be removed.
    pub before_lsn: Option<Lsn>,
}

impl Retention {
    /// May `seg` be purged? Err names the segment and who needs it.
    pub fn check(&self, seg: &SegmentInfo) -> Result<(), SegmentInUse> {
        let in_use = |needed_by| SegmentInUse {
            name: crate::view::view_file_name(seg.number),
            number: seg.number,
            end_lsn: seg.end_lsn,
            needed_by,
        };
        if self.checkpoint_lsn.is_none_or(|c| seg.end_lsn > c) {
            return Err(in_use(NeededBy::Recovery {
                checkpoint_lsn: self.checkpoint_lsn,
            }));
        }
        if let Some(lsn) = self.oldest_reader_lsn.filter(|&r| seg.end_lsn > r) {
            return Err(in_use(NeededBy::Reader { lsn }));
        }
        Ok(())
    }
}

/// The plan removing the `count` oldest of `segs` (count < segs.len()).
fn plan_of(segs: &[SegmentInfo], count: usize, r: &Retention) -> PurgePlan {
    debug_assert!(
        count == 0 || count < segs.len(),
        "a purge plan never names the last segment"
    );
    debug_assert!(segs[..count].iter().all(|s| r.check(s).is_ok()));
    PurgePlan {
        count,
        before_lsn: (count > 0).then(|| segs[count].start_lsn),
    }
}

/// `PURGE BINARY LOGS TO 'target'`: removes every segment before the one named `target` (a
/// virtual file name, `binlog.NNNNNN`). Refused, removing nothing, when `target` is not one of
/// `segs` or when any segment before it is still needed (the oldest such one is named).
pub fn plan_purge_to(
    segs: &[SegmentInfo],
    target: &str,
    retention: &Retention,
) -> Result<PurgePlan, PurgeError> {
    let idx = segs
        .iter()
        .position(|s| crate::view::view_file_name(s.number) == target)
        .ok_or_else(|| PurgeError::UnknownTarget(target.to_string()))?;
    for s in &segs[..idx] {
        retention.check(s).map_err(PurgeError::InUse)?;
    }
    Ok(plan_of(segs, idx, retention))
}

/// Expiry (`PURGE BINARY LOGS BEFORE`, age or size limits): removes the oldest segments for as
/// long as `wanted` says so, stopping at the first one it does not want, at the first one still
/// needed (returned beside the plan, so the caller can warn), and before the last segment.
pub fn plan_purge_while(
    segs: &[SegmentInfo],
    retention: &Retention,
    mut wanted: impl FnMut(&SegmentInfo) -> bool,
) -> (PurgePlan, Option<SegmentInUse>) {
    let mut count = 0;
    let mut kept = None;
    for s in segs.iter().take(segs.len().saturating_sub(1)) {
        if !wanted(s) {
            break;
        }
        if let Err(e) = retention.check(s) {
            kept = Some(e);
            break;
        }
        count += 1;
    }
    (plan_of(segs, count, retention), kept)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// Segments 1..=n of 100 bytes each, from LSN 0.
    fn segs(n: u64) -> Vec<SegmentInfo> {
        (1..=n)
            .map(|i| SegmentInfo {
                number: i,
                path: PathBuf::from(format!("/d/{}", crate::segment::file_name(i))),
                start_lsn: (i - 1) * 100,
                end_lsn: i * 100,
            })
            .collect()
    }

    fn ckpt(c: Lsn) -> Retention {
        Retention {
            checkpoint_lsn: Some(c),
            oldest_reader_lsn: None,
        }
    }

    #[test]
    fn purge_to_removes_what_the_checkpoint_covers() {
        let s = segs(4);
        let p = plan_purge_to(&s, "binlog-000003.olog", &ckpt(250)).unwrap();
        assert_eq!(
            p,
            PurgePlan {
                count: 2,
                before_lsn: Some(200)
            }
        );
        let p = plan_purge_to(&s, "binlog-000001.olog", &Retention::default()).unwrap();
        assert_eq!(p, PurgePlan::default());
    }

    #[test]
    fn purge_to_names_the_segment_recovery_needs() {
        let s = segs(4);
        let Err(PurgeError::InUse(e)) = plan_purge_to(&s, "binlog-000004.olog", &ckpt(150)) else {
            panic!("not refused")
        };
        assert_eq!((e.number, e.end_lsn), (2, 200));
        assert_eq!(
            e.to_string(),
            "A purgeable log is in use, will not purge: binlog-000002.olog is still needed for \
             crash recovery (it ends at LSN 200, after the newest checkpoint at LSN 150); it can \
             be purged after the next checkpoint"
        );
        let Err(PurgeError::InUse(e)) =
            plan_purge_to(&s, "binlog-000002.olog", &Retention::default())
        else {
            panic!("not refused")
        };
        assert_eq!(e.number, 1);
        assert!(e.to_string().contains("newest checkpoint (none yet)"));
    }

    #[test]
    fn purge_to_an_unknown_file_is_refused() {
        let r = plan_purge_to(&segs(2), "binlog.000001", &ckpt(1000));
        assert!(matches!(r, Err(PurgeError::UnknownTarget(t)) if t == "binlog.000001"));
    }

    #[test]
    fn an_open_reader_holds_its_segments() {
        let s = segs(4);
        let r = Retention {
            checkpoint_lsn: Some(400),
            oldest_reader_lsn: Some(120),
        };
        let Err(PurgeError::InUse(e)) = plan_purge_to(&s, "binlog-000004.olog", &r) else {
            panic!("not refused")
        };
        assert_eq!(e.needed_by, NeededBy::Reader { lsn: 120 });
        assert_eq!(e.number, 2);
        assert_eq!(
            plan_purge_to(&s, "binlog-000002.olog", &r).unwrap().count,
            1
        );
    }

    #[test]
    fn expiry_stops_at_the_unwanted_the_needed_and_the_last() {
        let s = segs(4);
        let (p, kept) = plan_purge_while(&s, &ckpt(1000), |_| true);
        assert_eq!((p.count, p.before_lsn, kept), (3, Some(300), None));
        let (p, kept) = plan_purge_while(&s, &ckpt(1000), |s| s.number < 2);
        assert_eq!((p.count, kept), (1, None));
        let (p, kept) = plan_purge_while(&s, &ckpt(200), |_| true);
        assert_eq!((p.count, p.before_lsn), (2, Some(200)));
        assert_eq!(kept.map(|k| k.number), Some(3));
        let (p, kept) = plan_purge_while(&s[..1], &ckpt(1000), |_| true);
        assert_eq!((p, kept), (PurgePlan::default(), None));
        let (p, _) = plan_purge_while(&[], &ckpt(1000), |_| true);
        assert_eq!(p, PurgePlan::default());
    }
}
