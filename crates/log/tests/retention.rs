//! Reader pins and automatic expiry against a real log: a pinned reader's segments survive
//! PURGE (which stops silently before them, as MariaDB does) and expiry until the pin moves
//! on or is dropped; expiry by age and by total size never passes the checkpoint or the
//! current segment.

use std::time::{Duration, SystemTime};

use onelog_log::retention::{segment_name, ExpiryLimits, NeededBy, Retention};
use onelog_log::{Durability, ReadStart, ReaderOptions, SimFs};

mod common;
use common::{open, opts, read_all, txn};

/// A log of `n` segments, one record each but the last (current, empty).
fn log_of(n: usize) -> (std::sync::Arc<onelog_log::Log>, std::sync::Arc<SimFs>) {
    let fs = SimFs::new();
    let log = open(&fs, opts(1 << 20, Durability::Level1));
    for i in 0..n - 1 {
        log.commit(txn(i as u64, 100)).unwrap();
        log.rotate().unwrap();
    }
    assert_eq!(log.segments().len(), n);
    (log, fs)
}

fn checkpointed(log: &onelog_log::Log) -> Retention {
    Retention {
        checkpoint_lsn: Some(log.end_lsn()),
        oldest_reader_lsn: None,
    }
}

#[test]
fn a_pinned_reader_holds_its_segments_until_it_moves_on_or_goes() {
    let (log, _fs) = log_of(5);
    let segs = log.segments();
    let pin = log.pin_reader(segs[1].start_lsn);
    let mut reader = log
        .reader(ReadStart::Lsn(segs[1].start_lsn), ReaderOptions::default())
        .unwrap();
    assert_eq!(
        (log.reader_pins(), log.oldest_reader_lsn()),
        (1, Some(segs[1].start_lsn))
    );
    // PURGE TO the last segment: the one before the reader goes, the statement succeeds.
    let last = segment_name(&segs[4]);
    let out = log.purge_to_checked(&last, &checkpointed(&log)).unwrap();
    assert_eq!(
        out.removed.iter().map(|s| s.number).collect::<Vec<_>>(),
        [segs[0].number]
    );
    let stopped = out.stopped_at.expect("stopped at the reader's segment");
    assert_eq!(
        (stopped.number, stopped.needed_by),
        (
            segs[1].number,
            NeededBy::Reader {
                lsn: segs[1].start_lsn
            }
        )
    );
    // Expiry does not pass it either.
    let old = ExpiryLimits::new(1, 0);
    let later = SystemTime::now() + Duration::from_secs(3600);
    let out = log
        .expire_checked(&checkpointed(&log), &old, later)
        .unwrap();
    assert!(out.removed.is_empty());
    assert_eq!(log.segments()[0].number, segs[1].number);
    // The reader still reads everything from its position.
    assert_eq!(read_all(&mut reader).len(), 3);
    // It moves on to the fourth segment: the second and third may go now.
    pin.advance(segs[3].start_lsn);
    pin.advance(segs[1].start_lsn);
    assert_eq!(pin.lsn(), segs[3].start_lsn, "a pin never moves back");
    let out = log
        .expire_checked(&checkpointed(&log), &old, later)
        .unwrap();
    assert_eq!(out.removed.len(), 2);
    assert_eq!(out.stopped_at.map(|s| s.number), Some(segs[3].number));
    // Dropped: nothing holds the fourth back; the current segment always stays.
    drop(pin);
    assert_eq!((log.reader_pins(), log.oldest_reader_lsn()), (0, None));
    let out = log
        .expire_checked(&checkpointed(&log), &old, later)
        .unwrap();
    assert_eq!(out.removed.len(), 1);
    assert_eq!(log.segments().len(), 1);
    assert_eq!(log.segments()[0].number, segs[4].number);
}

#[test]
fn the_oldest_of_several_pins_holds_segments_back() {
    let (log, _fs) = log_of(4);
    let segs = log.segments();
    let a = log.pin_reader(segs[2].start_lsn);
    let b = log.pin_reader(segs[1].start_lsn + 1);
    assert_eq!(log.reader_pins(), 2);
    let out = log
        .purge_while_checked(&checkpointed(&log), |_| true)
        .unwrap();
    assert_eq!(out.removed.len(), 1, "b is inside the second segment");
    drop(b);
    let out = log
        .purge_while_checked(&checkpointed(&log), |_| true)
        .unwrap();
    assert_eq!(out.removed.len(), 1, "a is at the start of the third");
    drop(a);
    assert_eq!(log.reader_pins(), 0);
}

#[test]
fn expiry_never_passes_the_checkpoint_and_sizes_count_what_show_binary_logs_shows() {
    let (log, _fs) = log_of(5);
    let segs = log.segments();
    let later = SystemTime::now() + Duration::from_secs(3600);
    // Nothing before the first checkpoint.
    let out = log
        .expire_checked(&Retention::default(), &ExpiryLimits::new(1, 0), later)
        .unwrap();
    assert!(out.removed.is_empty());
    assert!(matches!(
        out.stopped_at.map(|s| s.needed_by),
        Some(NeededBy::Recovery {
            checkpoint_lsn: None
        })
    ));
    // Not yet old: nothing.
    let out = log
        .expire_checked(
            &checkpointed(&log),
            &ExpiryLimits::new(3600, 0),
            SystemTime::now(),
        )
        .unwrap();
    assert!(out.removed.is_empty() && out.stopped_at.is_none());
    // By size: keep at most the last three segments' bytes.
    let total: u64 = segs.iter().map(|s| s.binlog_size()).sum();
    let keep = total - segs[0].binlog_size() - segs[1].binlog_size();
    let r = Retention {
        checkpoint_lsn: Some(segs[3].start_lsn),
        oldest_reader_lsn: None,
    };
    let out = log
        .expire_checked(&r, &ExpiryLimits::new(0, keep), SystemTime::now())
        .unwrap();
    assert_eq!(out.removed.len(), 2);
    // Smaller still, but the checkpoint needs the fourth segment: only the third goes.
    let out = log
        .expire_checked(&r, &ExpiryLimits::new(0, 1), SystemTime::now())
        .unwrap();
    assert_eq!(out.removed.len(), 1);
    assert_eq!(out.stopped_at.map(|s| s.number), Some(segs[3].number));
    assert_eq!(log.segments()[0].number, segs[3].number);
}

#[test]
fn a_purge_removes_exactly_the_segments_it_planned_even_next_to_empty_ones() {
    let fs = SimFs::new();
    let log = open(&fs, opts(1 << 20, Durability::Level1));
    log.commit(txn(1, 100)).unwrap();
    log.rotate().unwrap();
    log.rotate().unwrap(); // the second segment stays empty: it ends where it starts
    log.commit(txn(2, 100)).unwrap();
    log.rotate().unwrap();
    let segs = log.segments();
    assert_eq!(segs[1].start_lsn, segs[1].end_lsn);
    let first = segs[0].number;
    let out = log
        .purge_while_checked(&checkpointed(&log), |s| s.number == first)
        .unwrap();
    assert_eq!(out.removed.len(), 1);
    assert_eq!(log.segments()[0].number, segs[1].number);
}

#[test]
fn a_segment_found_at_open_is_as_old_as_its_files_last_write() {
    let dir = std::env::temp_dir().join(format!("onelog-retention-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut o = opts(64 << 10, Durability::Level1);
    o.dir = dir.clone();
    let fs = onelog_log::StdFs::new();
    let (log, _) = onelog_log::Log::open(fs.clone(), o.clone()).unwrap();
    log.commit(txn(1, 100)).unwrap();
    log.rotate().unwrap();
    let sealed = log.segments()[0].clone();
    assert!(sealed.closed_at.is_some(), "closed at the rotation");
    assert!(
        log.segments()[1].closed_at.is_none(),
        "the current one is open"
    );
    log.shutdown().unwrap();
    drop(log);
    // Make the first segment a day old on disk: after a restart that is its age.
    let day_ago = SystemTime::now() - Duration::from_secs(86_400);
    std::fs::File::options()
        .write(true)
        .open(&sealed.path)
        .unwrap()
        .set_modified(day_ago)
        .unwrap();
    let (log, _) = onelog_log::Log::open(fs, o).unwrap();
    let found = log.segments()[0].closed_at.unwrap();
    let diff = found
        .duration_since(day_ago)
        .unwrap_or_else(|e| e.duration());
    assert!(diff < Duration::from_secs(2), "{found:?} vs {day_ago:?}");
    let r = checkpointed(&log);
    let out = log
        .expire_checked(&r, &ExpiryLimits::new(3600, 0), SystemTime::now())
        .unwrap();
    assert_eq!(out.removed.len(), 1, "older than an hour");
    log.shutdown().unwrap();
    drop(log);
    let _ = std::fs::remove_dir_all(&dir);
}
