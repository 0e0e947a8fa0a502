//! Engine-level behaviour under injected disk faults, on the simulated file system.
//!
//! - an fsync failure at durability level 1 fails the commit that hit it and stops every later
//!   commit, DDL and checkpoint with a clear error, without ever retrying the fsync; reads keep
//!   working and every acknowledged commit survives a reboot;
//! - a full disk fails the commit that needed space with 1021 "disk full", logs and applies
//!   nothing of it, keeps reads working, and commits resume once space is freed; acknowledged
//!   commits survive a reboot;
//! - a torn tail (power lost in the middle of a write) is cut at open, which reports the torn
//!   bytes and where the log continues; the database is the acknowledged commits, and the next
//!   commit is logged exactly there;
//! - a damaged record in a sealed segment makes `Engine::open` refuse with an error naming the
//!   segment file and the offset; once a checkpoint covers it, open succeeds but a reader
//!   (a replica, `mysqlbinlog`) still gets the same error instead of skipping it;
//! - a damaged checkpoint file, or a control file naming a damaged or missing checkpoint,
//!   makes `Engine::open` refuse with an error naming the file;
//! - a crash at each checkpoint crash point recovers from the previous checkpoint or the new
//!   one, with the same tables, and leaves only the current checkpoint file;
//! - a full disk while writing a checkpoint fails only the checkpoint;
//! - at level 2 an fsync failure in the flush a checkpoint needs fails the checkpoint (none
//!   is written ahead of the durable log) and stops writes;
//! - level-2 commits (written, not synced) survive a process crash; a power cut may lose them,
//!   leaving a consistent prefix.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use onelog_binlog::{Gtid, Value};
use onelog_engine::{
    ColumnSpec, Engine, EngineError, EngineOptions, RecoveryReport, SqlType, TableId, TableSpec,
};
use onelog_log::{
    CommitReceipt, Durability, FileSystem, LogError, ReadStart, ReaderOptions, Record, SimFs,
};

const SEGMENT: u64 = 16 << 10;

fn options(level: Durability) -> EngineOptions {
    let mut o = EngineOptions::new("/db");
    o.log.segment_size = SEGMENT;
    o.log.durability = level;
    o.lock_wait_timeout = Duration::from_secs(5);
    o.background_checkpoints = false;
    o
}

fn open(fs: &Arc<SimFs>, o: EngineOptions) -> Result<(Arc<Engine>, RecoveryReport), EngineError> {
    let fs: Arc<dyn FileSystem> = fs.clone();
    Engine::open(fs, o)
}

fn binlog_dir() -> PathBuf {
    PathBuf::from("/db/binlog")
}

fn checkpoint_dir() -> PathBuf {
    PathBuf::from("/db/checkpoints")
}

/// `d.t (id INT PRIMARY KEY, v VARCHAR(32), note BLOB)`.
fn create_table(e: &Engine) -> TableId {
    e.create_database("d", false, "CREATE DATABASE d").unwrap();
    let spec = TableSpec {
        db: "d".into(),
        name: "t".into(),
        columns: vec![
            ColumnSpec::new("id", SqlType::Int { unsigned: false }).not_null(),
            ColumnSpec::new("v", SqlType::VarChar(32)),
            ColumnSpec::new("note", SqlType::Blob),
        ],
        primary_key: vec!["id".into()],
        indexes: vec![],
    };
    e.create_table(spec, false, "CREATE TABLE t (...)").unwrap()
}

fn row(id: i64, note_len: usize) -> Vec<Value> {
    vec![
        Value::Int(id),
        Value::bytes(format!("v{id}").into_bytes()),
        Value::bytes(vec![(id % 251) as u8; note_len]),
    ]
}

fn insert(
    e: &Arc<Engine>,
    t: TableId,
    id: i64,
    note_len: usize,
) -> Result<CommitReceipt, EngineError> {
    let mut tx = e.begin();
    tx.insert(t, row(id, note_len))?;
    Ok(tx.commit()?.expect("a write transaction has a receipt"))
}

/// The rows of `d.t`, keyed by id.
fn rows(e: &Engine) -> BTreeMap<i64, Vec<Value>> {
    e.snapshot()
        .dump()
        .remove("d.t")
        .unwrap_or_default()
        .into_iter()
        .map(|r| match r[0] {
            Value::Int(id) => (id, r),
            ref v => panic!("unexpected id {v:?}"),
        })
        .collect()
}

fn expected(ids: impl IntoIterator<Item = i64>, note_len: usize) -> BTreeMap<i64, Vec<Value>> {
    ids.into_iter().map(|id| (id, row(id, note_len))).collect()
}

fn read_log(e: &Engine, opts: ReaderOptions) -> Vec<Record> {
    let mut r = e.log().reader(ReadStart::Lsn(0), opts).unwrap();
    let mut out = Vec::new();
    while let Some(rec) = r.next().unwrap() {
        out.push(rec);
    }
    out
}

fn all_records(e: &Engine) -> Vec<Record> {
    read_log(
        e,
        ReaderOptions {
            include_non_durable: true,
            include_state_records: false,
        },
    )
}

fn segment_path(n: u64) -> PathBuf {
    binlog_dir().join(format!("binlog-{n:06}.olog"))
}

#[test]
fn fsync_failure_fails_the_commit_refuses_all_later_writes_without_retrying_and_keeps_reads() {
    let fs = SimFs::new();
    let (e, _) = open(&fs, options(Durability::Level1)).unwrap();
    let t = create_table(&e);
    let acked: Vec<CommitReceipt> = (0..10).map(|id| insert(&e, t, id, 50).unwrap()).collect();
    let seg = segment_path(1);
    assert_eq!(e.log().segments().len(), 1, "the test expects one segment");
    let before = fs.fsyncs_of(&seg);

    fs.fail_fsyncs(true);
    let err = insert(&e, t, 10, 50).unwrap_err();
    assert!(
        matches!(
            &err,
            EngineError::Log {
                source: LogError::Failed(_),
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(err.code(), 1030, "{err}");
    assert!(
        err.to_string().contains("fdatasync"),
        "the message says what failed: {err}"
    );
    assert_eq!(
        fs.fsyncs_of(&seg),
        before + 1,
        "exactly one fsync was attempted"
    );

    // Even with the disk healthy again, every later write is refused, with the reason.
    fs.fail_fsyncs(false);
    for id in 11..14 {
        let e2 = insert(&e, t, id, 50).unwrap_err();
        assert!(
            matches!(
                &e2,
                EngineError::Log {
                    source: LogError::Failed(_),
                    ..
                }
            ),
            "{e2}"
        );
        assert!(e2.to_string().contains("stopped accepting writes"), "{e2}");
    }
    let ddl = e
        .create_database("other", false, "CREATE DATABASE other")
        .unwrap_err();
    assert!(
        ddl.to_string().contains("stopped accepting writes"),
        "{ddl}"
    );
    let ckpt = e.checkpoint().unwrap_err();
    assert!(
        ckpt.to_string().contains("stopped accepting writes"),
        "{ckpt}"
    );
    assert!(e
        .log()
        .failed()
        .is_some_and(|why| why.contains("fdatasync")));
    assert_eq!(
        fs.fsyncs_of(&seg),
        before + 1,
        "the failed fsync was retried"
    );
    assert!(
        !fs.exists(&checkpoint_dir().join("control")),
        "no checkpoint may cover a non-durable commit"
    );

    // Reads keep working and see every acknowledged commit. (The failed commit was applied
    // before its fsync, so it may be visible too: visibility precedes durability.)
    let live = rows(&e);
    for id in 0..10 {
        assert_eq!(live.get(&id), Some(&row(id, 50)));
    }
    assert!(live.keys().all(|id| *id <= 10), "{:?}", live.keys());
    let mut tx = e.begin();
    assert_eq!(tx.get(t, &[Value::Int(3)]).unwrap(), Some(row(3, 50)));
    assert_eq!(
        tx.get_for_update(t, &[Value::Int(4)]).unwrap(),
        Some(row(4, 50))
    );
    tx.rollback();
    assert!(e.apply_failure().is_none());

    // After a power cut every acknowledged commit is there and the failed one is not (its
    // bytes never became durable).
    let fs2 = fs.reboot(11, false);
    drop(e);
    let (e2, report) = open(&fs2, options(Durability::Level1)).unwrap();
    assert_eq!(rows(&e2), expected(0..10, 50));
    assert_eq!(
        report.log.gtid_state.next_seq(0),
        acked.last().unwrap().gtid.seq_no + 1
    );
    let r = insert(&e2, t, 10, 50).unwrap();
    assert_eq!(
        r.gtid,
        Gtid::new(0, 1, acked.last().unwrap().gtid.seq_no + 1)
    );
}

#[test]
fn full_disk_fails_the_commit_with_disk_full_applies_nothing_and_commits_resume_after_freeing_space(
) {
    let fs = SimFs::new();
    // Room for the first segment and one prepared segment, not for a third.
    fs.set_space_limit(Some(2 * SEGMENT + 8192));
    let (e, _) = open(&fs, options(Durability::Level1)).unwrap();
    let t = create_table(&e);
    let mut ids = Vec::new();
    let err = loop {
        let id = ids.len() as i64;
        match insert(&e, t, id, 300) {
            Ok(_) => ids.push(id),
            Err(err) => break err,
        }
        assert!(ids.len() < 1000, "never ran out of space");
    };
    assert!(
        ids.len() > 20,
        "ran out of space too early, after {} commits: {err}",
        ids.len()
    );
    assert!(
        matches!(&err, EngineError::Log { source, .. } if source.is_storage_full()),
        "{err:?}"
    );
    assert_eq!(err.code(), 1021, "{err}");
    assert!(
        err.to_string().contains("disk full"),
        "the message says the disk is full: {err}"
    );
    let failed_id = ids.len() as i64;

    // Nothing of the failed commit is visible; reads work; a retry is refused the same way.
    assert_eq!(rows(&e), expected(ids.iter().copied(), 300));
    let again = insert(&e, t, failed_id, 300).unwrap_err();
    assert_eq!(again.code(), 1021, "{again}");
    let mut tx = e.begin();
    assert_eq!(tx.get(t, &[Value::Int(0)]).unwrap(), Some(row(0, 300)));
    assert_eq!(tx.get(t, &[Value::Int(failed_id)]).unwrap(), None);
    tx.rollback();
    let logged = all_records(&e).len();
    assert_eq!(logged, 2 + ids.len(), "the failed commit reached the log");

    // Space freed: the same commit goes through with the next GTID (none was consumed).
    fs.set_space_limit(None);
    let r = insert(&e, t, failed_id, 300).unwrap();
    assert_eq!(r.gtid, Gtid::new(0, 1, logged as u64 + 1));
    ids.push(failed_id);

    let fs2 = fs.reboot(5, true);
    drop(e);
    let (e2, _) = open(&fs2, options(Durability::Level1)).unwrap();
    assert_eq!(rows(&e2), expected(ids.iter().copied(), 300));
}

#[test]
fn full_disk_while_writing_a_checkpoint_fails_only_the_checkpoint() {
    let fs = SimFs::new();
    let (e, _) = open(&fs, options(Durability::Level1)).unwrap();
    let t = create_table(&e);
    for id in 0..20 {
        insert(&e, t, id, 300).unwrap();
    }
    // Whatever is used now, plus too little for a checkpoint of 20 rows of 300 bytes.
    let used: u64 = [binlog_dir(), checkpoint_dir()]
        .iter()
        .flat_map(|d| fs.list_dir(d).unwrap().into_iter().map(move |n| d.join(n)))
        .map(|p| fs.read_file(&p).map_or(0, |b| b.len() as u64))
        .sum();
    fs.set_space_limit(Some(used + 1024));
    let err = e.checkpoint().unwrap_err();
    assert!(
        err.to_string()
            .contains(&checkpoint_dir().display().to_string()),
        "names the directory: {err}"
    );
    // Commits that fit in the current segment still work; the checkpoint works once space is back.
    insert(&e, t, 20, 10).unwrap();
    fs.set_space_limit(None);
    e.checkpoint().unwrap();
    let fs2 = fs.reboot(1, true);
    drop(e);
    let (e2, report) = open(&fs2, options(Durability::Level1)).unwrap();
    assert!(report.checkpoint_lsn.is_some());
    let mut want = expected(0..20, 300);
    want.insert(20, row(20, 10));
    assert_eq!(rows(&e2), want);
}

#[test]
fn torn_tail_is_cut_at_open_which_reports_where_the_log_continues() {
    let mut torn_runs = 0;
    for seed in 0..40u64 {
        let fs = SimFs::new();
        let (e, _) = open(&fs, options(Durability::Level1)).unwrap();
        let t = create_table(&e);
        let acked: Vec<CommitReceipt> = (0..5).map(|id| insert(&e, t, id, 200).unwrap()).collect();
        // Power is lost after the next group is written, before its fsync.
        fs.arm_crash_point("commit.after_write", 1);
        let err = insert(&e, t, 5, 2000).unwrap_err();
        assert!(fs.crashed(), "seed {seed}: {err}");
        let fs2 = fs.reboot(seed, true);
        drop(e);
        let (e2, report) =
            open(&fs2, options(Durability::Level1)).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let ctx = format!("seed {seed}: {report}");
        let recs = all_records(&e2);
        let n = recs.len() as u64;
        let last_acked = acked.last().unwrap();
        // Every acknowledged commit is there; the unacknowledged one only if it was whole.
        assert!(
            n == last_acked.gtid.seq_no || n == last_acked.gtid.seq_no + 1,
            "{ctx}: {n} records"
        );
        let survived = n > last_acked.gtid.seq_no;
        let want = if survived {
            expected(0..6, 200)
        } else {
            expected(0..5, 200)
        };
        let mut got = rows(&e2);
        if survived {
            assert_eq!(got.remove(&5), Some(row(5, 2000)), "{ctx}");
            got.insert(5, row(5, 200));
        }
        assert_eq!(got, want, "{ctx}");
        if report.log.torn_bytes > 0 {
            torn_runs += 1;
            assert!(
                !survived,
                "{ctx}: torn bytes cut but the torn record recovered"
            );
            assert!(report.to_string().contains("torn bytes cut"), "{ctx}");
        }
        // The log continues exactly where the recovered records end, in the segment it names.
        let all = read_log(
            &e2,
            ReaderOptions {
                include_non_durable: true,
                include_state_records: true,
            },
        );
        let end = all.last().map_or(0, |r| r.end_lsn);
        assert_eq!(report.log.end_lsn, end, "{ctx}");
        let segs = e2.log().segments();
        assert_eq!(report.log.segment, segs.last().unwrap().number, "{ctx}");
        assert_eq!(report.log.segment_path, segs.last().unwrap().path, "{ctx}");
        assert!(
            report.log.offset >= end - segs.last().unwrap().start_lsn,
            "{ctx}"
        );
        let next = insert(&e2, t, 100, 10).unwrap();
        assert_eq!((next.gtid.seq_no, next.lsn), (n + 1, end), "{ctx}");
        // The cut was made durable: a second power cut finds nothing torn.
        let fs3 = fs2.reboot(seed + 1000, false);
        drop(e2);
        let (e3, report3) = open(&fs3, options(Durability::Level1)).unwrap();
        assert_eq!(report3.log.torn_bytes, 0, "{ctx}: second open {report3}");
        assert_eq!(rows(&e3).get(&100), Some(&row(100, 10)), "{ctx}");
    }
    assert!(torn_runs > 0, "no seed tore the tail");
}

/// Offset of `needle` in `hay`.
fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The number after "offset " in `msg`.
fn offset_in(msg: &str) -> Option<u64> {
    let i = msg.find("offset ")? + "offset ".len();
    msg[i..]
        .split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

/// Fills three segments, loses power, and returns the rebooted disk, the record that was
/// damaged on it (in segment 1) and the file offset of the flipped byte.
fn damaged_sealed_segment(checkpoint_after: bool) -> (Arc<SimFs>, Record, u64) {
    let fs = SimFs::new();
    let (e, _) = open(&fs, options(Durability::Level1)).unwrap();
    let t = create_table(&e);
    let mut id = 0;
    while e.log().segments().len() < 3 {
        insert(&e, t, id, 400).unwrap();
        id += 1;
    }
    if checkpoint_after {
        e.checkpoint().unwrap();
    }
    let recs = all_records(&e);
    let seg1_end = e.log().segments()[0].end_lsn;
    let victim = recs
        .iter()
        .rev()
        .find(|r| r.end_lsn <= seg1_end)
        .unwrap()
        .clone();
    let fs2 = fs.reboot(3, false);
    drop(e);
    let path = segment_path(1);
    let img = fs2.read_file(&path).unwrap();
    let at = find(&img, &victim.events).expect("the record's events are in its segment")
        + victim.events.len() / 2;
    assert!(fs2.corrupt(&path, at as u64, &[img[at] ^ 0x20]));
    (fs2, victim, at as u64)
}

#[test]
fn damaged_record_in_a_sealed_segment_makes_open_refuse_naming_the_file_and_offset() {
    let (fs, victim, at) = damaged_sealed_segment(false);
    let err = open(&fs, options(Durability::Level1))
        .err()
        .expect("open must refuse a damaged log");
    let msg = err.to_string();
    assert!(
        msg.contains("binlog-000001.olog"),
        "names the segment: {msg}"
    );
    let off = offset_in(&msg).unwrap_or_else(|| panic!("names an offset: {msg}"));
    // The offset is the damaged record's (its frame starts before its events).
    assert!(
        off <= at && at - off < victim.events.len() as u64 + 64,
        "offset {off} vs damage at {at}: {msg}"
    );
    // Refusing is stable: a second attempt says the same.
    let again = open(&fs, options(Durability::Level1))
        .err()
        .unwrap()
        .to_string();
    assert_eq!(again, msg);
}

#[test]
fn damaged_record_behind_the_checkpoint_is_reported_to_readers_never_skipped() {
    let (fs, victim, at) = damaged_sealed_segment(true);
    // Recovery starts at the checkpoint, after the damage, so the engine opens...
    let (e, report) = open(&fs, options(Durability::Level1)).unwrap();
    assert!(report.checkpoint_lsn.unwrap() > victim.end_lsn);
    // ...but whoever reads the old log (a replica, mysqlbinlog) gets the error, not a gap.
    let mut r = e
        .log()
        .reader(ReadStart::Lsn(0), ReaderOptions::default())
        .unwrap();
    let err = loop {
        match r.next() {
            Ok(Some(rec)) => assert!(
                rec.lsn < victim.lsn,
                "read past the damaged record at LSN {}",
                victim.lsn
            ),
            Ok(None) => panic!("reached the end without noticing the damage"),
            Err(e) => break e,
        }
    };
    let msg = err.to_string();
    assert!(matches!(err, LogError::Corrupt { .. }), "{msg}");
    assert!(msg.contains("binlog-000001.olog"), "{msg}");
    let off = offset_in(&msg).unwrap();
    assert!(
        off <= at && at - off < victim.events.len() as u64 + 64,
        "offset {off} vs damage at {at}: {msg}"
    );
}

/// A database with a checkpoint; returns the rebooted disk and the checkpoint file's path.
fn with_checkpoint() -> (Arc<SimFs>, PathBuf) {
    let fs = SimFs::new();
    let (e, _) = open(&fs, options(Durability::Level1)).unwrap();
    let t = create_table(&e);
    for id in 0..10 {
        insert(&e, t, id, 100).unwrap();
    }
    let lsn = e.checkpoint().unwrap();
    let path = checkpoint_dir().join(format!("checkpoint-{lsn:016x}.ckpt"));
    assert!(fs.exists(&path), "{} missing", path.display());
    let fs2 = fs.reboot(9, false);
    drop(e);
    (fs2, path)
}

fn refusal(fs: &Arc<SimFs>) -> String {
    match open(fs, options(Durability::Level1)) {
        Ok(_) => panic!("open must refuse"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn damaged_checkpoint_makes_open_refuse_naming_the_file_and_offset() {
    let (fs, path) = with_checkpoint();
    let len = fs.read_file(&path).unwrap().len() as u64;
    for at in [0, 13, len / 2, len - 1] {
        let (fs, _) = with_checkpoint();
        let byte = fs.read_file(&path).unwrap()[at as usize];
        fs.corrupt(&path, at, &[byte ^ 1]);
        let msg = refusal(&fs);
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            msg.contains(&name),
            "byte {at}: names the checkpoint file: {msg}"
        );
        assert!(
            offset_in(&msg).is_some(),
            "byte {at}: names an offset: {msg}"
        );
    }
    // Sanity: undamaged, it opens from the checkpoint.
    let (e, report) = open(&fs, options(Durability::Level1)).unwrap();
    assert!(report.checkpoint_lsn.is_some());
    assert_eq!(rows(&e), expected(0..10, 100));
}

#[test]
fn damaged_control_file_or_missing_checkpoint_makes_open_refuse_naming_the_file() {
    let control = checkpoint_dir().join("control");
    let (fs, _) = with_checkpoint();
    fs.corrupt(&control, 9, &[0xff]);
    let msg = refusal(&fs);
    assert!(
        msg.contains(&control.display().to_string()),
        "names the control file: {msg}"
    );

    let (fs, path) = with_checkpoint();
    fs.remove_file(&path).unwrap();
    let msg = refusal(&fs);
    assert!(
        msg.contains(&path.file_name().unwrap().to_string_lossy().into_owned()),
        "names the missing file: {msg}"
    );

    let (fs, path) = with_checkpoint();
    let len = fs.read_file(&path).unwrap().len() as u64;
    fs.open(&path, false).unwrap().set_len(len - 3).unwrap();
    let msg = refusal(&fs);
    assert!(
        msg.contains(&path.file_name().unwrap().to_string_lossy().into_owned()),
        "names the short file: {msg}"
    );
}

#[test]
fn crash_while_checkpointing_recovers_from_the_previous_checkpoint_or_the_new_one() {
    for (i, point) in [
        "checkpoint.after_write",
        "checkpoint.before_control_switch",
        "checkpoint.after_control_switch",
    ]
    .into_iter()
    .enumerate()
    {
        let fs = SimFs::new();
        let (e, _) = open(&fs, options(Durability::Level1)).unwrap();
        let t = create_table(&e);
        for id in 0..5 {
            insert(&e, t, id, 100).unwrap();
        }
        let first = e.checkpoint().unwrap();
        for id in 5..10 {
            insert(&e, t, id, 100).unwrap();
        }
        fs.arm_crash_point(point, 1);
        let err = e.checkpoint().unwrap_err();
        assert!(fs.crashed(), "{point}: {err}");
        let fs2 = fs.reboot(i as u64, true);
        drop(e);
        let (e2, report) =
            open(&fs2, options(Durability::Level1)).unwrap_or_else(|e| panic!("{point}: {e}"));
        let want_new = point == "checkpoint.after_control_switch";
        assert_eq!(
            report.checkpoint_lsn == Some(first),
            !want_new,
            "{point}: {report}"
        );
        assert_eq!(rows(&e2), expected(0..10, 100), "{point}");
        // Leftovers of the interrupted checkpoint are gone; only the current one remains.
        let ckpts: Vec<String> = fs2
            .list_dir(&checkpoint_dir())
            .unwrap()
            .into_iter()
            .filter(|n| n.starts_with("checkpoint-"))
            .collect();
        assert_eq!(ckpts.len(), 1, "{point}: {ckpts:?}");
        assert!(
            Path::new(&ckpts[0])
                .extension()
                .is_some_and(|x| x == "ckpt"),
            "{point}: {ckpts:?}"
        );
    }
}

/// Level-2 engine whose flusher never runs during the test, with 2 DDL + 30 commits acked
/// (written, not synced; the DDL was flushed). Returns the engine, its disk and its options.
fn level2_with_unsynced_commits() -> (Arc<Engine>, Arc<SimFs>, EngineOptions, u64) {
    let mut o = options(Durability::Level2);
    o.log.flush_interval = Duration::from_secs(3600);
    let fs = SimFs::new();
    let (e, _) = open(&fs, o.clone()).unwrap();
    let t = create_table(&e);
    e.log().flush().unwrap();
    let mut last = 0;
    for id in 0..30 {
        last = insert(&e, t, id, 100).unwrap().gtid.seq_no;
    }
    assert_eq!(rows(&e), expected(0..30, 100));
    (e, fs, o, last)
}

#[test]
fn level2_commits_survive_a_process_crash() {
    let (e, fs, o, last) = level2_with_unsynced_commits();
    // The process dies (no shutdown, no checkpoint) but the machine stays up: the next process
    // sees every write (SimFs's live image), so every level-2 commit is recovered.
    drop(e);
    let (e2, report) = open(&fs, o).unwrap();
    assert_eq!(rows(&e2), expected(0..30, 100), "{report}");
    assert_eq!(report.log.gtid_state.next_seq(0), last + 1);
}

#[test]
fn level2_commits_lost_in_a_power_cut_leave_a_consistent_prefix() {
    let mut lost_some = false;
    for seed in 0..8 {
        let (e, fs, o, _) = level2_with_unsynced_commits();
        let fs2 = fs.reboot(seed, true);
        drop(e);
        let (e2, report) = open(&fs2, o).unwrap();
        let n = all_records(&e2).len();
        assert!(n >= 2, "seed {seed}: the flushed DDL was lost: {report}");
        assert_eq!(
            rows(&e2),
            expected(0..(n - 2) as i64, 100),
            "seed {seed}: {report}"
        );
        assert_eq!(
            report.log.gtid_state.next_seq(0),
            n as u64 + 1,
            "seed {seed}"
        );
        lost_some |= n - 2 < 30;
    }
    assert!(
        lost_some,
        "no power cut lost an unsynced level-2 commit: the test tests nothing"
    );
}

#[test]
fn fsync_failure_while_checkpointing_at_level2_fails_the_checkpoint_and_stops_writes() {
    let mut o = options(Durability::Level2);
    o.log.flush_interval = Duration::from_secs(3600);
    let fs = SimFs::new();
    let (e, _) = open(&fs, o.clone()).unwrap();
    let t = create_table(&e);
    for id in 0..10 {
        insert(&e, t, id, 100).unwrap();
    }
    fs.fail_fsyncs(true);
    // The checkpoint must first make the log durable up to its LSN; that fsync fails.
    let err = e.checkpoint().unwrap_err();
    assert!(err.to_string().contains("fdatasync"), "{err}");
    assert!(
        !fs.exists(&checkpoint_dir().join("control")),
        "a checkpoint was written ahead of the durable log"
    );
    fs.fail_fsyncs(false);
    let err = insert(&e, t, 10, 100).unwrap_err();
    assert!(
        matches!(
            &err,
            EngineError::Log {
                source: LogError::Failed(_),
                ..
            }
        ),
        "{err}"
    );
    assert!(e.checkpoint().is_err());
    // Reads still work.
    assert_eq!(rows(&e), expected(0..10, 100));
    // After a power cut: a consistent prefix (the unsynced commits are gone or whole).
    let fs2 = fs.reboot(4, true);
    drop(e);
    let (e2, report) = open(&fs2, o).unwrap();
    assert!(report.checkpoint_lsn.is_none(), "{report}");
    let got = rows(&e2);
    let kept = got.len() as i64;
    assert_eq!(got, expected(0..kept, 100), "{report}");
}
