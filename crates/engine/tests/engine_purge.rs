//! `Engine::purge_log_to` (PURGE BINARY LOGS): never a segment recovery still needs (one that
//! ends after the newest checkpoint), never the current one; 1373 for an unknown file; the
//! MySQL codes and messages the SQL layer forwards unchanged.

use std::sync::Arc;
use std::time::Duration;

use onelog_engine::{Engine, EngineError, EngineOptions, PurgeTarget, TableId};
use onelog_log::{FileSystem, SimFs};

mod common;

use common::{commit_step, setup};

fn open(fs: &Arc<SimFs>) -> Arc<Engine> {
    let mut o = EngineOptions::new("/data");
    o.log.segment_size = 64 << 10;
    o.background_checkpoints = false;
    o.lock_wait_timeout = Duration::from_secs(30);
    let fs: Arc<dyn FileSystem> = fs.clone();
    Engine::open(fs, o).unwrap().0
}

fn filled(fs: &Arc<SimFs>) -> (Arc<Engine>, TableId) {
    let e = open(fs);
    let t = setup(&e);
    for i in 1..=500 {
        commit_step(&e, t, i, 150).unwrap();
    }
    assert!(e.log().segments().len() > 2);
    (e, t)
}

/// The binlog name of the i-th segment (the classic view's `binlog.NNNNNN`).
fn file_name(e: &Engine, i: usize) -> String {
    file_name_of(&e.log().segments()[i])
}

#[test]
fn purge_to_is_refused_before_a_checkpoint_covers_the_segments() {
    let fs = SimFs::new();
    let (e, _) = filled(&fs);
    let first = e.log().segments()[0].clone();
    let err = e
        .purge_log_to(PurgeTarget::To(&file_name(&e, 2)))
        .unwrap_err();
    assert!(matches!(err, EngineError::LogInUse { .. }), "{err:?}");
    assert_eq!((err.code(), err.sqlstate()), (1378, "HY000"));
    assert_eq!(
        err.to_string(),
        format!(
            "A purgeable log is in use, will not purge: {} is still needed for crash recovery (it ends at LSN {}, after the newest checkpoint (none yet)); it can be purged after the next checkpoint",
            file_name(&e, 0),
            first.end_lsn
        )
    );
    assert_eq!(e.log().segments()[0].path, first.path, "nothing purged");
}

#[test]
fn purge_to_removes_the_segments_a_checkpoint_covers() {
    let fs = SimFs::new();
    let (e, _) = filled(&fs);
    let before = e.log().segments();
    e.checkpoint().unwrap();
    // The first segment is the target: nothing before it, nothing to do.
    let none = e.purge_log_to(PurgeTarget::To(&file_name(&e, 0))).unwrap();
    assert_eq!((none.segments, none.kept_for_recovery.is_none()), (0, true));
    let purged = e.purge_log_to(PurgeTarget::To(&file_name(&e, 2))).unwrap();
    assert_eq!(purged.segments, 2);
    let after = e.log().segments();
    assert_eq!(after.len(), before.len() - 2);
    assert_eq!(after[0].path, before[2].path);
}

#[test]
fn purge_to_an_unknown_file_is_1373() {
    let fs = SimFs::new();
    let (e, _) = filled(&fs);
    let err = e
        .purge_log_to(PurgeTarget::To("binlog.999999"))
        .unwrap_err();
    assert_eq!(err.code(), 1373);
    assert_eq!(err.to_string(), "Target log not found in binlog index");
}

#[test]
fn a_segment_written_after_the_checkpoint_blocks_purge_to() {
    let fs = SimFs::new();
    let (e, t) = filled(&fs);
    e.checkpoint().unwrap();
    let ckpt = e.checkpoint_lsn().unwrap();
    for i in 501..=1000 {
        commit_step(&e, t, i, 150).unwrap();
    }
    let segs = e.log().segments();
    let last = segs.len() - 1;
    let blocking = segs.iter().position(|s| s.end_lsn > ckpt).unwrap();
    assert!(blocking < last);
    let err = e
        .purge_log_to(PurgeTarget::To(&file_name(&e, last)))
        .unwrap_err();
    assert_eq!(err.code(), 1378);
    assert!(
        err.to_string().contains(&format!(
            "{} is still needed for crash recovery (it ends at LSN {}, after the newest checkpoint at LSN {ckpt})",
            file_name(&e, blocking),
            segs[blocking].end_lsn
        )),
        "{err}"
    );
}

#[test]
fn a_reader_pin_stops_purge_to_silently_after_the_segments_before_it() {
    let fs = SimFs::new();
    let (e, _) = filled(&fs);
    e.checkpoint().unwrap();
    let segs = e.log().segments();
    let pin = e.log().pin_reader(segs[2].start_lsn + 1);
    let last = segs.len() - 1;
    // As MariaDB with a dump thread behind: OK, the files before the reader's are gone.
    let purged = e
        .purge_log_to(PurgeTarget::To(&file_name(&e, last)))
        .unwrap();
    assert_eq!(purged.segments, 2);
    assert!(purged.kept_for_recovery.is_none());
    let kept = purged.kept_for_reader.unwrap();
    assert_eq!(file_name(&e, 0), kept);
    // Released: the rest goes (up to the target).
    drop(pin);
    let purged = e
        .purge_log_to(PurgeTarget::To(&file_name(&e, last - 2)))
        .unwrap();
    assert_eq!((purged.segments, purged.kept_for_reader), (last - 2, None));
    assert_eq!(e.log().segments().len(), 1);
}

#[test]
fn expiry_by_age_and_size_stops_at_the_checkpoint_and_reports_what_it_removed() {
    use onelog_engine::EngineEvent;
    use std::sync::Mutex;
    use std::time::SystemTime;
    let fs = SimFs::new();
    let (e, t) = filled(&fs);
    let events = Arc::new(Mutex::new(Vec::new()));
    let ev = events.clone();
    e.set_reporter(Arc::new(move |x: &EngineEvent| {
        ev.lock().unwrap().push(x.clone())
    }));
    let later = SystemTime::now() + Duration::from_secs(3600);
    // Off by default: nothing, however old.
    assert_eq!(e.expire_logs_at(later).unwrap().segments, 0);
    e.set_binlog_expire_logs_seconds(60);
    assert_eq!(e.binlog_expire_logs_seconds(), 60);
    // Not yet old.
    assert_eq!(e.expire_logs().unwrap().segments, 0);
    // Old, but no checkpoint: kept for recovery (named), nothing removed.
    let p = e.expire_logs_at(later).unwrap();
    assert_eq!(p.segments, 0);
    assert_eq!(p.kept_for_recovery.map(|k| k.code()), Some(1378));
    e.checkpoint().unwrap();
    let ckpt = e.checkpoint_lsn().unwrap();
    for i in 501..=700 {
        commit_step(&e, t, i, 150).unwrap();
    }
    let segs = e.log().segments();
    let needed = segs.iter().position(|s| s.end_lsn > ckpt).unwrap();
    let p = e.expire_logs_at(later).unwrap();
    assert_eq!(p.segments, needed, "every segment before the checkpoint's");
    assert!(p.kept_for_recovery.is_some());
    assert_eq!(e.log().segments()[0].path, segs[needed].path);
    let reported = events.lock().unwrap().clone();
    assert_eq!(
        reported,
        [EngineEvent::LogsExpired {
            segments: needed,
            first: file_name_of(&segs[0]),
            last: file_name_of(&segs[needed - 1]),
        }]
    );
    // By size, after a checkpoint at the end: down to the limit, never the current segment.
    e.set_binlog_expire_logs_seconds(0);
    e.checkpoint().unwrap();
    let segs = e.log().segments();
    let cur = segs.last().unwrap().binlog_size();
    e.set_max_binlog_total_size(cur + segs[segs.len() - 2].binlog_size());
    let p = e.expire_logs().unwrap();
    assert_eq!(p.segments, segs.len() - 2);
    e.set_max_binlog_total_size(1);
    assert_eq!(e.expire_logs().unwrap().segments, 1);
    assert_eq!(e.log().segments().len(), 1);
    assert_eq!(e.expire_logs().unwrap().segments, 0);
}

fn file_name_of(s: &onelog_log::SegmentInfo) -> String {
    onelog_log::retention::segment_name(s)
}

#[test]
fn the_checkpoint_thread_expires_segments_by_itself() {
    let fs = SimFs::new();
    let mut o = EngineOptions::new("/data");
    o.log.segment_size = 64 << 10;
    o.checkpoint_every = Duration::from_millis(10);
    o.max_binlog_total_size = 1;
    let dynfs: Arc<dyn FileSystem> = fs.clone();
    let e = Engine::open(dynfs, o).unwrap().0;
    let t = setup(&e);
    for i in 1..=500 {
        commit_step(&e, t, i, 150).unwrap();
    }
    assert_eq!(e.max_binlog_total_size(), 1);
    // The thread checkpoints (time trigger) and then expires everything the checkpoint
    // covers; no statement runs meanwhile. Bounded wait for the outcome.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while e.log().segments().len() > 1 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(
        e.log().segments().len(),
        1,
        "only the current segment is left"
    );
    assert!(e.checkpoint_lsn().is_some());
}
