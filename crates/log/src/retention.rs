//! Retention: which segments may be purged (DESIGN.md §4: "segments are purged only when all
//! of these allow").
//!
//! Owns [`Retention`] (what holds segments back), [`PurgePlan`] (what a purge removes),
//! [`ExpiryLimits`] (automatic expiry), [`PurgeOutcome`] (what a purge did),
//! [`SegmentInUse`] / [`PurgeError`] (why not), the planners [`plan_purge_to`] (`PURGE
//! BINARY LOGS TO`), [`plan_purge_while`] (`PURGE BINARY LOGS BEFORE`: the caller's predicate
//! says which of the oldest segments it wants gone) and [`plan_expiry`]
//! (`binlog_expire_logs_seconds`, `max_binlog_total_size`), and [`find_segment`], the one
//! place a binlog file name given by a user is resolved to a segment.
//! [`crate::Log::purge_to_checked`], [`crate::Log::purge_while_checked`] and
//! [`crate::Log::expire_checked`] plan against the log's current segments, with the oldest
//! reader pin ([`crate::Log::pin_reader`]) filled into [`Retention::oldest_reader_lsn`], and
//! carry the plan out.
//!
//! The rules, in the order they are checked for each segment a purge would remove:
//! - recovery: a segment may go only if it ends at or before the LSN of the newest checkpoint
//!   (recovery replays the log from that LSN); with no checkpoint yet, none may go;
//! - readers: a segment may go only if it ends at or before the lowest LSN an open reader (a
//!   replica's dump, a backup) still needs;
//! - the current segment (the last one) is never purged.
//!
//! What a purge does at a segment still needed, as MariaDB 10.11 does (`MYSQL_BIN_LOG::
//! purge_logs` stops at the first file `can_purge_log` refuses: the active one or one a dump
//! thread is reading, and answers OK without a warning, having removed the files before it;
//! checked against mariadbd 10.11.19 with a stalled `mariadb-binlog --stop-never`):
//! - `PURGE BINARY LOGS TO` stops silently before a segment a reader needs and removes
//!   the ones before it; a segment recovery needs refuses the whole statement with 1378
//!   (onelog's own rule: MariaDB has no checkpoint to wait for, and a PURGE that silently did
//!   nothing until the next checkpoint would puzzle);
//! - expiry and `PURGE BINARY LOGS BEFORE` stop at the first segment still needed and name it
//!   beside the plan (the SQL layer warns when recovery kept it; expiry logs it).
//!
//! Age of a segment ([`SegmentInfo::closed_at`]): when it stopped being written, i.e. the
//! rotation that sealed it (for a segment found at open, its file's modification time, as
//! MariaDB's `purge_logs_before_date` uses `st_mtime`). A sealed segment's last record was
//! written at or before that time, so a segment is never expired earlier than the time of its
//! last record allows, and knowing it costs nothing on the commit path (no timestamp per
//! record). A segment is expired when strictly more than the limit has passed since then
//! (MariaDB: `st_mtime < now - binlog_expire_logs_seconds`).
//!
//! Size ([`ExpiryLimits::max_total_size`]): the sum of the segments' binlog sizes (SHOW BINARY
//! LOGS' `File_size`, the current segment included), as MariaDB 11.4 sums its files' sizes;
//! the oldest go until the sum is at most the limit, as far as the rules allow.
//!
//! Called by the engine (`Engine::purge_log_to`, `Engine::expire_logs`, which know the
//! checkpoint LSN) and through it by SQL's PURGE BINARY LOGS and the expiry sysvars.
//!
//! Invariants: a plan only ever names a prefix of the segments, never the last one, and every
//! segment in it passes [`Retention::check`] (asserted where plans are made).

use std::fmt;
use std::time::{Duration, SystemTime};

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
    /// Its binlog file name ([`segment_name`]).
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
            name: segment_name(seg),
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

/// The binlog file name users see for a segment (SHOW BINARY LOGS, PURGE, 1378 texts): its
/// classic view's file, `binlog.NNNNNN` (`crate::view`).
pub fn segment_name(seg: &SegmentInfo) -> String {
    crate::view::view_file_name(seg.number)
}

/// The index in `segs` of the segment whose binlog file is named `name`: the one place a
/// user's file name is resolved (it and [`segment_name`] change together).
pub fn find_segment(segs: &[SegmentInfo], name: &str) -> Option<usize> {
    segs.iter().position(|s| segment_name(s) == name)
}

/// `PURGE BINARY LOGS TO 'target'`: removes every segment before the one named `target`
/// ([`find_segment`]), stopping silently before the first one a reader still needs (returned
/// beside the plan), as MariaDB does. Refused, removing nothing, when `target` is not one of
/// `segs` or when a segment before it (and before any reader's) is still needed for
/// recovery (that segment is named).
pub fn plan_purge_to(
    segs: &[SegmentInfo],
    target: &str,
    retention: &Retention,
) -> Result<(PurgePlan, Option<SegmentInUse>), PurgeError> {
    let idx =
        find_segment(segs, target).ok_or_else(|| PurgeError::UnknownTarget(target.to_string()))?;
    for (i, s) in segs[..idx].iter().enumerate() {
        match retention.check(s) {
            Ok(()) => {}
            Err(
                e @ SegmentInUse {
                    needed_by: NeededBy::Reader { .. },
                    ..
                },
            ) => return Ok((plan_of(segs, i, retention), Some(e))),
            Err(e) => return Err(PurgeError::InUse(e)),
        }
    }
    Ok((plan_of(segs, idx, retention), None))
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

/// Automatic expiry: how old and how large the log may grow before its oldest segments go.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExpiryLimits {
    /// `binlog_expire_logs_seconds`: a segment goes once more than this has passed since it
    /// was closed (see the module docs); None (0) = never by age.
    pub max_age: Option<Duration>,
    /// `max_binlog_total_size`: the oldest segments go while the binlog sizes of all of them
    /// sum to more than this; None (0) = unlimited.
    pub max_total_size: Option<u64>,
}

impl ExpiryLimits {
    /// The limits of the two variables' values (0 = off).
    pub fn new(expire_logs_seconds: u64, max_total_size: u64) -> Self {
        ExpiryLimits {
            max_age: (expire_logs_seconds > 0).then(|| Duration::from_secs(expire_logs_seconds)),
            max_total_size: (max_total_size > 0).then_some(max_total_size),
        }
    }

    /// True when neither limit is set (expiry has nothing to do).
    pub fn is_off(&self) -> bool {
        self.max_age.is_none() && self.max_total_size.is_none()
    }
}

/// Expiry at time `now`: removes the oldest segments that are too old or while the log is
/// too large ([`ExpiryLimits`]), stopping at the first one neither limit wants gone, at the
/// first one still needed (returned beside the plan) and before the current one.
pub fn plan_expiry(
    segs: &[SegmentInfo],
    retention: &Retention,
    limits: &ExpiryLimits,
    now: SystemTime,
) -> (PurgePlan, Option<SegmentInUse>) {
    if limits.is_off() {
        return (PurgePlan::default(), None);
    }
    let mut total: u64 = segs.iter().map(SegmentInfo::binlog_size).sum();
    plan_purge_while(segs, retention, |s| {
        let too_old = limits.max_age.is_some_and(|age| {
            s.closed_at
                .and_then(|c| now.duration_since(c).ok())
                .is_some_and(|d| d > age)
        });
        let too_big = limits.max_total_size.is_some_and(|max| total > max);
        if too_old || too_big {
            total = total.saturating_sub(s.binlog_size());
        }
        too_old || too_big
    })
}

/// What a purge did: the segments it removed (oldest first) and the one that stopped it
/// because it is still needed, if one did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PurgeOutcome {
    pub removed: Vec<SegmentInfo>,
    pub stopped_at: Option<SegmentInUse>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// Segments 1..=n of 100 bytes each (no header), from LSN 0; segment i was closed at
    /// second `1000 * i` after the epoch (the last one is current: not closed).
    fn segs(n: u64) -> Vec<SegmentInfo> {
        (1..=n)
            .map(|i| SegmentInfo {
                number: i,
                path: PathBuf::from(format!("/d/{}", crate::segment::file_name(i))),
                start_lsn: (i - 1) * 100,
                end_lsn: i * 100,
                header_len: 0,
                closed_at: (i < n).then(|| at(1000 * i)),
            })
            .collect()
    }

    fn at(secs: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(secs)
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
        let p = plan_purge_to(&s, "binlog.000003", &ckpt(250)).unwrap();
        assert_eq!(
            p,
            (
                PurgePlan {
                    count: 2,
                    before_lsn: Some(200)
                },
                None
            )
        );
        let p = plan_purge_to(&s, "binlog.000001", &Retention::default()).unwrap();
        assert_eq!(p, (PurgePlan::default(), None));
    }

    #[test]
    fn purge_to_names_the_segment_recovery_needs() {
        let s = segs(4);
        let Err(PurgeError::InUse(e)) = plan_purge_to(&s, "binlog.000004", &ckpt(150)) else {
            panic!("not refused")
        };
        assert_eq!((e.number, e.end_lsn), (2, 200));
        assert_eq!(
            e.to_string(),
            "A purgeable log is in use, will not purge: binlog.000002 is still needed for \
             crash recovery (it ends at LSN 200, after the newest checkpoint at LSN 150); it can \
             be purged after the next checkpoint"
        );
        let Err(PurgeError::InUse(e)) = plan_purge_to(&s, "binlog.000002", &Retention::default())
        else {
            panic!("not refused")
        };
        assert_eq!(e.number, 1);
        assert!(e.to_string().contains("newest checkpoint (none yet)"));
    }

    #[test]
    fn purge_to_an_unknown_file_is_refused() {
        // The segment's own file name is not a binlog name: readers see the classic view's.
        let r = plan_purge_to(&segs(2), "binlog-000001.olog", &ckpt(1000));
        assert!(matches!(r, Err(PurgeError::UnknownTarget(t)) if t == "binlog-000001.olog"));
    }

    #[test]
    fn purge_to_stops_silently_before_what_a_reader_needs() {
        let s = segs(4);
        let r = Retention {
            checkpoint_lsn: Some(400),
            oldest_reader_lsn: Some(120),
        };
        // As MariaDB: the segments before the reader's go, the statement succeeds.
        let (p, stopped) = plan_purge_to(&s, "binlog.000004", &r).unwrap();
        assert_eq!((p.count, p.before_lsn), (1, Some(100)));
        let stopped = stopped.unwrap();
        assert_eq!(stopped.needed_by, NeededBy::Reader { lsn: 120 });
        assert_eq!(stopped.number, 2);
        assert_eq!(
            plan_purge_to(&s, "binlog.000002", &r).unwrap(),
            (
                PurgePlan {
                    count: 1,
                    before_lsn: Some(100)
                },
                None
            )
        );
        // A reader at a segment's end needs only the next one.
        let r = Retention {
            oldest_reader_lsn: Some(200),
            ..r
        };
        let (p, stopped) = plan_purge_to(&s, "binlog.000004", &r).unwrap();
        assert_eq!((p.count, stopped.map(|x| x.number)), (2, Some(3)));
        // Recovery still refuses the whole statement when it comes first.
        let r = Retention {
            checkpoint_lsn: Some(150),
            oldest_reader_lsn: Some(250),
        };
        assert!(matches!(
            plan_purge_to(&s, "binlog.000004", &r),
            Err(PurgeError::InUse(SegmentInUse { number: 2, .. }))
        ));
    }

    #[test]
    fn names_resolve_to_segments_in_one_place() {
        let s = segs(3);
        assert_eq!(find_segment(&s, "binlog.000002"), Some(1));
        assert_eq!(find_segment(&s, "binlog.000009"), None);
        assert_eq!(segment_name(&s[2]), "binlog.000003");
    }

    #[test]
    fn expiry_by_age_removes_segments_closed_more_than_the_limit_ago() {
        let s = segs(5); // closed at 1000, 2000, 3000, 4000; the 5th is current
        let limits = ExpiryLimits::new(1500, 0);
        let (p, kept) = plan_expiry(&s, &ckpt(1000), &limits, at(3501));
        assert_eq!((p.count, p.before_lsn, kept), (2, Some(200), None));
        // Exactly the limit is not yet more than it.
        let (p, _) = plan_expiry(&s, &ckpt(1000), &limits, at(3500));
        assert_eq!(p.count, 1);
        // Never the current segment, however old.
        let (p, _) = plan_expiry(&s, &ckpt(1000), &limits, at(1 << 40));
        assert_eq!(p.count, 4);
        // Never past the checkpoint: the first segment it needs stops it and is named.
        let (p, kept) = plan_expiry(&s, &ckpt(250), &limits, at(1 << 40));
        assert_eq!((p.count, kept.map(|k| k.number)), (2, Some(3)));
        // Nor past a reader.
        let r = Retention {
            checkpoint_lsn: Some(1000),
            oldest_reader_lsn: Some(150),
        };
        let (p, kept) = plan_expiry(&s, &r, &limits, at(1 << 40));
        assert_eq!(
            (p.count, kept.map(|k| k.needed_by)),
            (1, Some(NeededBy::Reader { lsn: 150 }))
        );
        // Off: nothing.
        let (p, kept) = plan_expiry(&s, &ckpt(1000), &ExpiryLimits::default(), at(1 << 40));
        assert_eq!((p, kept), (PurgePlan::default(), None));
    }

    #[test]
    fn expiry_by_size_removes_the_oldest_until_the_total_fits() {
        let s = segs(5); // 500 bytes in all, 100 each
        let r = ckpt(1000);
        let size = |max| {
            plan_expiry(&s, &r, &ExpiryLimits::new(0, max), at(0))
                .0
                .count
        };
        assert_eq!(size(500), 0);
        assert_eq!(size(499), 1);
        assert_eq!(size(300), 2);
        assert_eq!(size(250), 3);
        assert_eq!(size(1), 4, "never the current segment");
        // Either limit is enough.
        let both = ExpiryLimits::new(2500, 450);
        assert_eq!(plan_expiry(&s, &r, &both, at(4000)).0.count, 1);
        assert_eq!(plan_expiry(&s, &r, &both, at(5000)).0.count, 2);
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
