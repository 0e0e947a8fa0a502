//! What the engine reports to its embedding server as it happens (`Engine::set_reporter`), on
//! the simulated file system:
//!
//! - an fsync that fails (EIO) is reported once as `LogFailed` with the reason, by the commit
//!   that hit it; every later commit is refused (the log never retries the sync), reads work;
//! - a background checkpoint that fails on a full disk is reported at once as
//!   `CheckpointFailed` with the reason, leaves no temporary file behind, is retried after a
//!   backoff, and once space is freed succeeds by itself (`CheckpointRecovered`); commits that
//!   failed with 1021 meanwhile are reported once (`DiskFull`, a warning) and resume without a
//!   restart (`WritesResumed`).

use std::path::PathBuf;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use onelog_binlog::Value;
use onelog_engine::scheduler::Backoff;
use onelog_engine::{
    ColumnSpec, Engine, EngineError, EngineEvent, EngineOptions, Severity, SqlType, TableId,
    TableSpec,
};
use onelog_log::{Durability, FileSystem, SimFs};

const LONG: Duration = Duration::from_secs(30);

fn options() -> EngineOptions {
    let mut o = EngineOptions::new("/db");
    o.log.segment_size = 64 << 10;
    o.log.durability = Durability::Level1;
    o.lock_wait_timeout = Duration::from_secs(5);
    o.background_checkpoints = false;
    o
}

fn open(fs: &Arc<SimFs>, o: EngineOptions) -> Arc<Engine> {
    let fs: Arc<dyn FileSystem> = fs.clone();
    Engine::open(fs, o).unwrap().0
}

/// Installs a reporter that forwards every event to the returned channel.
fn listen(e: &Engine) -> mpsc::Receiver<EngineEvent> {
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    e.set_reporter(Arc::new(move |ev: &EngineEvent| {
        let _ = tx.lock().unwrap().send(ev.clone());
    }));
    rx
}

fn create_table(e: &Engine) -> TableId {
    e.create_database("d", false, "CREATE DATABASE d").unwrap();
    let spec = TableSpec {
        db: "d".into(),
        name: "t".into(),
        columns: vec![
            ColumnSpec::new("id", SqlType::Int { unsigned: false }).not_null(),
            ColumnSpec::new("note", SqlType::Blob),
        ],
        primary_key: vec!["id".into()],
        indexes: vec![],
    };
    e.create_table(spec, false, "CREATE TABLE t (...)").unwrap()
}

fn insert(e: &Arc<Engine>, t: TableId, id: i64, len: usize) -> Result<(), EngineError> {
    let mut tx = e.begin();
    tx.insert(t, vec![Value::Int(id), Value::bytes(vec![b'x'; len])])?;
    tx.commit()?;
    Ok(())
}

fn ids(e: &Engine) -> Vec<i64> {
    e.snapshot()
        .dump()
        .remove("d.t")
        .unwrap_or_default()
        .into_iter()
        .map(|r| match r[0] {
            Value::Int(id) => id,
            ref v => panic!("unexpected id {v:?}"),
        })
        .collect()
}

fn checkpoint_dir() -> PathBuf {
    PathBuf::from("/db/checkpoints")
}

/// Total bytes of every file the engine has (the simulated disk's usage).
fn used_bytes(fs: &SimFs) -> u64 {
    ["/db/checkpoints", "/db/binlog"]
        .iter()
        .flat_map(|d| {
            fs.list_dir(&PathBuf::from(d))
                .unwrap()
                .into_iter()
                .map(move |n| PathBuf::from(d).join(n))
        })
        .map(|p| fs.read_file(&p).map_or(0, |b| b.len() as u64))
        .sum()
}

#[test]
fn a_failed_fsync_is_reported_once_with_its_reason_and_every_later_commit_is_refused() {
    let fs = SimFs::new();
    let e = open(&fs, options());
    let events = listen(&e);
    let t = create_table(&e);
    for id in 0..5 {
        insert(&e, t, id, 10).unwrap();
    }
    fs.fail_fsyncs(true);
    let err = insert(&e, t, 5, 10).unwrap_err();
    assert_eq!(err.code(), 1030, "{err}");
    let ev = events.recv_timeout(LONG).unwrap();
    let EngineEvent::LogFailed { reason } = &ev else {
        panic!("unexpected {ev:?}");
    };
    assert!(reason.contains("fdatasync"), "{reason}");
    assert_eq!(ev.severity(), Severity::Error);
    assert!(
        ev.to_string()
            .contains("refuses all writes until a restart"),
        "{ev}"
    );

    // The disk works again, but the log does not trust it: refused, and not reported again.
    fs.fail_fsyncs(false);
    for id in 6..9 {
        let err = insert(&e, t, id, 10).unwrap_err();
        assert!(err.to_string().contains("fdatasync"), "{err}");
    }
    assert!(e.checkpoint().is_err());
    assert!(events.try_recv().is_err(), "LogFailed is reported once");
    // Reads keep working. (Row 5 may be visible: commits become visible before their fsync,
    // as in InnoDB, so the failed commit was applied; a restart decides what was durable.)
    let seen = ids(&e);
    assert_eq!(seen[..5], [0, 1, 2, 3, 4], "{seen:?}");
    assert!(seen.len() <= 6, "{seen:?}");

    // A reporter installed later still learns of the failure.
    let late = listen(&e);
    assert!(matches!(
        late.recv_timeout(LONG).unwrap(),
        EngineEvent::LogFailed { .. }
    ));
}

#[test]
fn a_background_checkpoint_on_a_full_disk_is_reported_removes_its_tmp_and_succeeds_once_space_is_freed(
) {
    let fs = SimFs::new();
    let mut o = options();
    o.background_checkpoints = true;
    o.checkpoint_every_bytes = 0;
    o.checkpoint_every = Duration::from_millis(1);
    o.checkpoint_backoff = Backoff {
        first: Duration::from_millis(2),
        max: Duration::from_millis(8),
    };
    let e = open(&fs, o);
    let events = listen(&e);
    let t = create_table(&e);
    for id in 0..40 {
        insert(&e, t, id, 1000).unwrap();
    }
    // Wait for a first successful background checkpoint (no events: nothing failed).
    let deadline = std::time::Instant::now() + LONG;
    while e.checkpoint_lsn().is_none() {
        assert!(std::time::Instant::now() < deadline, "no checkpoint");
        std::thread::sleep(Duration::from_millis(2));
    }

    // The disk fills: a new checkpoint (~40 KB of rows) no longer fits.
    fs.set_space_limit(Some(used_bytes(&fs) + (8 << 10)));
    let mut acked: Vec<i64> = (0..40).collect();
    let mut full = None;
    for id in 40..400 {
        match insert(&e, t, id, 1000) {
            Ok(()) => acked.push(id),
            Err(err) => {
                full = Some(err);
                break;
            }
        }
    }
    let full = full.expect("the segment's rotation needs space the disk does not have");
    assert_eq!(full.code(), 1021, "{full}");
    // One more failing commit: the disk-full episode is reported once.
    assert_eq!(insert(&e, t, 401, 1000).unwrap_err().code(), 1021);
    let mut other = Vec::new();
    let ev = next_checkpoint_event(&events, &mut other);
    let EngineEvent::CheckpointFailed {
        error, consecutive, ..
    } = ev
    else {
        panic!("unexpected {ev:?}");
    };
    assert_eq!(consecutive, 1);
    assert!(
        error.contains("checkpoint"),
        "the reason names what failed: {error}"
    );
    // Wait for a few more backed-off attempts, then look at the directory while the disk is
    // still full: no attempt left its partial file behind.
    for _ in 0..3 {
        assert!(matches!(
            next_checkpoint_event(&events, &mut other),
            EngineEvent::CheckpointFailed { .. }
        ));
    }
    let left: Vec<String> = fs
        .list_dir(&checkpoint_dir())
        .unwrap()
        .into_iter()
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    // A retry may be writing right now; but only one attempt's files can exist at a time
    // and none survives a failure (the unit test in checkpoint.rs checks that exactly).
    assert!(left.len() <= 1, "{left:?}");

    // Space is freed: the checkpoint succeeds by itself, commits resume without a restart.
    fs.set_space_limit(None);
    let recovered = loop {
        match next_checkpoint_event(&events, &mut other) {
            EngineEvent::CheckpointFailed { .. } => continue,
            ev => break ev,
        }
    };
    assert!(
        matches!(recovered, EngineEvent::CheckpointRecovered { after_failures, .. } if after_failures >= 4),
        "{recovered:?}"
    );
    assert_eq!(recovered.severity(), Severity::Note);
    for id in 1000..1010 {
        insert(&e, t, id, 1000).unwrap();
        acked.push(id);
    }
    assert_eq!(ids(&e), acked);
    while let Ok(ev) = events.try_recv() {
        other.push(ev);
    }
    let EngineEvent::DiskFull { error } = &other[0] else {
        panic!("{other:?}");
    };
    assert!(error.contains("1021") || error.contains("full"), "{error}");
    assert_eq!(other[0].severity(), Severity::Warning);
    assert_eq!(other[1..], [EngineEvent::WritesResumed], "{other:?}");
}

/// The next checkpoint event; disk-full and writes-resumed events met on the way go to `other`.
fn next_checkpoint_event(
    events: &mpsc::Receiver<EngineEvent>,
    other: &mut Vec<EngineEvent>,
) -> EngineEvent {
    loop {
        match events.recv_timeout(LONG).unwrap() {
            ev @ (EngineEvent::DiskFull { .. } | EngineEvent::WritesResumed) => other.push(ev),
            ev => return ev,
        }
    }
}
