//! Backup holds (`Engine::hold_for_backup`, issue 13): while one lives PURGE and RESET MASTER
//! wait for it (and give up with 1205 at their bound), expiry removes nothing, and older
//! checkpoint files stay; all of it resumes when the hold goes.

use std::sync::Arc;
use std::time::Duration;

use onelog_engine::{Engine, EngineError, EngineOptions, PurgeTarget, TableId};
use onelog_log::{FileSystem, SimFs};

mod common;

use common::{commit_step, setup};

fn filled(fs: &Arc<SimFs>) -> (Arc<Engine>, TableId) {
    let mut o = EngineOptions::new("/data");
    o.log.segment_size = 64 << 10;
    o.background_checkpoints = false;
    let dynfs: Arc<dyn FileSystem> = fs.clone();
    let e = Engine::open(dynfs, o).unwrap().0;
    let t = setup(&e);
    for i in 1..=500 {
        commit_step(&e, t, i, 150).unwrap();
    }
    assert!(e.log().segments().len() > 2);
    e.checkpoint().unwrap();
    (e, t)
}

fn third_segment(e: &Engine) -> String {
    onelog_log::retention::segment_name(&e.log().segments()[2])
}

fn checkpoint_files(fs: &SimFs) -> Vec<String> {
    let mut v: Vec<String> = fs
        .list_dir(std::path::Path::new("/data/checkpoints"))
        .unwrap()
        .into_iter()
        .filter(|n| n.ends_with(".ckpt"))
        .collect();
    v.sort();
    v
}

#[test]
fn purge_waits_for_the_hold_then_runs() {
    let fs = SimFs::new();
    let (e, _) = filled(&fs);
    let hold = e.hold_for_backup();
    assert_eq!(e.backups_running(), 1);
    let before = e.log().segments().len();
    let target = third_segment(&e);
    let e2 = e.clone();
    let purge = std::thread::spawn(move || {
        e2.purge_log_within(PurgeTarget::To(&target), Duration::from_secs(60))
            .map(|p| p.segments)
    });
    std::thread::sleep(Duration::from_millis(300));
    assert!(!purge.is_finished(), "PURGE ran under a backup");
    assert_eq!(e.log().segments().len(), before);
    drop(hold);
    assert_eq!(purge.join().unwrap().unwrap(), 2);
    assert_eq!(e.backups_running(), 0);
}

#[test]
fn purge_and_reset_give_up_with_1205_at_their_bound() {
    let fs = SimFs::new();
    let (e, _) = filled(&fs);
    let _hold = e.hold_for_backup();
    let err = e
        .purge_log_within(
            PurgeTarget::To(&third_segment(&e)),
            Duration::from_millis(50),
        )
        .unwrap_err();
    assert!(matches!(err, EngineError::LockWaitTimeout), "{err:?}");
    assert_eq!(err.code(), 1205);
    let err = e.reset_log_within(Duration::from_millis(50)).unwrap_err();
    assert_eq!(err.code(), 1205);
    assert!(e.log().segments().len() > 2, "nothing purged or reset");
}

#[test]
fn expiry_removes_nothing_under_a_hold() {
    let fs = SimFs::new();
    let (e, _) = filled(&fs);
    e.set_max_binlog_total_size(1);
    let before = e.log().segments().len();
    let hold = e.hold_for_backup();
    assert_eq!(e.expire_logs().unwrap().segments, 0);
    assert_eq!(e.log().segments().len(), before);
    drop(hold);
    assert!(e.expire_logs().unwrap().segments > 0);
    assert!(e.log().segments().len() < before);
}

#[test]
fn older_checkpoint_files_stay_while_a_backup_runs() {
    let fs = SimFs::new();
    let (e, t) = filled(&fs);
    let first = checkpoint_files(&fs);
    assert_eq!(first.len(), 1);
    let hold = e.hold_for_backup();
    commit_step(&e, t, 10_001, 150).unwrap();
    e.checkpoint().unwrap();
    let during = checkpoint_files(&fs);
    assert_eq!(
        during.len(),
        2,
        "the one a backup may be copying is kept: {during:?}"
    );
    assert!(during.contains(&first[0]));
    drop(hold);
    commit_step(&e, t, 10_002, 150).unwrap();
    e.checkpoint().unwrap();
    let after = checkpoint_files(&fs);
    assert_eq!(after.len(), 1, "{after:?}");
    assert!(!after.contains(&first[0]));
}

#[test]
fn reset_master_waits_and_cleans_up() {
    let fs = SimFs::new();
    let (e, _) = filled(&fs);
    let hold = e.hold_for_backup();
    let e2 = e.clone();
    let reset = std::thread::spawn(move || e2.reset_log_within(Duration::from_secs(60)));
    std::thread::sleep(Duration::from_millis(200));
    assert!(!reset.is_finished(), "RESET MASTER ran under a backup");
    drop(hold);
    reset.join().unwrap().unwrap();
    assert_eq!(e.log().segments().len(), 1);
    assert_eq!(checkpoint_files(&fs).len(), 1);
}

#[test]
fn the_hold_pins_the_log_so_its_own_purge_keeps_every_segment() {
    let fs = SimFs::new();
    let (e, _) = filled(&fs);
    let retention = onelog_log::retention::Retention {
        checkpoint_lsn: e.checkpoint_lsn(),
        oldest_reader_lsn: None,
    };
    let target = third_segment(&e);
    let before = e.log().segments().len();
    let hold = e.hold_for_backup();
    assert_eq!(e.log().oldest_reader_lsn(), Some(0));
    // The log's purge, below the engine's wait, stops at the pin: nothing goes.
    let out = e.log().purge_to_checked(&target, &retention).unwrap();
    assert!(out.removed.is_empty(), "{:?}", out.removed);
    assert!(out.stopped_at.is_some());
    assert_eq!(e.log().segments().len(), before);
    drop(hold);
    assert_eq!(e.log().oldest_reader_lsn(), None);
    let out = e.log().purge_to_checked(&target, &retention).unwrap();
    assert_eq!(out.removed.len(), 2);
}
