//! The mirror: classic binlog files following the engine log, repaired at start after a
//! crash, rebuilt after `RESET MASTER`, never skipping a group.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use onelog_binlog::event::gtid::{FL_DDL, FL_STANDALONE, FL_TRANSACTIONAL};
use onelog_binlog::event::{event_type, GtidEvent, QueryEvent, XidEvent, BINLOG_MAGIC};
use onelog_binlog::Gtid;
use onelog_log::view::ViewItem;
use onelog_log::{
    read_classic_file, ClassicOptions, Durability, FileSystem, GtidAssign, Log, LogOptions, Mirror,
    PendingRecord, ReadStart, ReaderOptions, RecordKind, SimFs,
};

const WAIT: Duration = Duration::from_secs(30);

fn log_opts() -> LogOptions {
    LogOptions {
        dir: PathBuf::from("/data/binlog"),
        segment_size: 64 << 10,
        state_interval: 16 << 10,
        durability: Durability::Level1,
        flush_interval: Duration::from_millis(5),
        ..LogOptions::default()
    }
}

fn mirror_dir() -> PathBuf {
    PathBuf::from("/data/mirror")
}

fn mirror_opts() -> ClassicOptions {
    ClassicOptions {
        dir: mirror_dir(),
        basename: "binlog".into(),
        max_size: 4000,
        server_id: 1,
        server_version: "10.11.9-MariaDB-onelog".into(),
    }
}

fn gtid_event(flags2: u8, out: &mut Vec<u8>) {
    GtidEvent {
        gtid: Gtid::new(0, 0, 0),
        flags2,
        commit_id: Some(0),
        timestamp: 1_700_000_000,
    }
    .encode(out);
}

fn txn(i: u64) -> PendingRecord {
    let mut v = Vec::new();
    gtid_event(FL_TRANSACTIONAL, &mut v);
    QueryEvent::new(
        "test",
        &format!(
            "insert into t values ({i}, '{}')",
            "y".repeat((i % 7 * 40) as usize)
        ),
    )
    .encode(1_700_000_000, 1, &mut v)
    .unwrap();
    XidEvent { xid: i }.encode(1_700_000_000, 1, &mut v);
    record(RecordKind::Transaction, v)
}

fn ddl() -> PendingRecord {
    let mut v = Vec::new();
    gtid_event(FL_STANDALONE | FL_DDL, &mut v);
    QueryEvent::new("test", "create table t (a int primary key, b text)")
        .encode(1_700_000_000, 1, &mut v)
        .unwrap();
    record(RecordKind::Ddl, v)
}

fn record(kind: RecordKind, events: Vec<u8>) -> PendingRecord {
    PendingRecord {
        kind,
        gtid: GtidAssign::Next {
            domain_id: 0,
            server_id: 1,
        },
        events,
        aux: Vec::new(),
        streamed: None,
        payload: None,
    }
}

/// Each event with log_pos and CRC zeroed.
fn normalized(events: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut rest = events;
    while !rest.is_empty() {
        let n = u32::from_le_bytes(rest[9..13].try_into().unwrap()) as usize;
        let mut e = rest[..n].to_vec();
        e[13..17].fill(0);
        let l = e.len();
        e[l - 4..].fill(0);
        out.push(e);
        rest = &rest[n..];
    }
    out
}

type Groups = Vec<(Gtid, Vec<Vec<u8>>)>;

/// The groups of the mirror's files (in index order), every event checked.
fn mirror_groups(fs: &SimFs) -> Groups {
    let index =
        String::from_utf8(fs.read_file(&mirror_dir().join("binlog.index")).unwrap()).unwrap();
    let mut out: Groups = Vec::new();
    for line in index.lines() {
        let name = line.trim_start_matches("./");
        let data = fs.read_file(&mirror_dir().join(name)).unwrap();
        for ev in read_classic_file(name, &data) {
            let ev = ev.unwrap();
            match ev.event_type() {
                event_type::GTID => {
                    let g = GtidEvent::decode(ev.bytes).unwrap().gtid;
                    out.push((g, normalized(ev.bytes)));
                }
                event_type::FORMAT_DESCRIPTION
                | event_type::GTID_LIST
                | event_type::BINLOG_CHECKPOINT
                | event_type::ROTATE => {}
                _ => out.last_mut().unwrap().1.extend(normalized(ev.bytes)),
            }
        }
    }
    out
}

/// The mirror's files (index order) with their bytes.
fn mirror_files(fs: &SimFs) -> Vec<(String, Vec<u8>)> {
    let index =
        String::from_utf8(fs.read_file(&mirror_dir().join("binlog.index")).unwrap()).unwrap();
    index
        .lines()
        .map(|l| {
            let name = l.trim_start_matches("./").to_string();
            let data = fs.read_file(&mirror_dir().join(&name)).unwrap();
            (name, data)
        })
        .collect()
}

/// The classic view's files from the oldest segment, as bytes.
fn view_files(log: &Log) -> Vec<(String, Vec<u8>)> {
    let mut r = log.view_reader(log.segments()[0].number).unwrap();
    let mut out: Vec<(String, Vec<u8>)> = Vec::new();
    while let Some(item) = r.next_wait(Duration::ZERO).unwrap() {
        if let ViewItem::FileStart { name, .. } = &item {
            out.push((name.clone(), BINLOG_MAGIC.to_vec()));
        }
        out.last_mut().unwrap().1.extend_from_slice(item.events());
    }
    out
}

/// The log's durable groups from its oldest segment.
fn log_groups(log: &Log) -> Groups {
    let start = log.segments()[0].start_lsn;
    let mut r = log
        .reader(ReadStart::Lsn(start), ReaderOptions::default())
        .unwrap();
    let mut out = Vec::new();
    while let Some(rec) = r.next().unwrap() {
        out.push((rec.gtid.unwrap(), normalized(&rec.events)));
    }
    out
}

fn gtids(g: &Groups) -> Vec<u64> {
    g.iter().map(|(g, _)| g.seq_no).collect()
}

fn start(log: &Arc<Log>, fs: &Arc<SimFs>) -> (Mirror, onelog_log::MirrorReport) {
    Mirror::start(log.clone(), fs.clone(), mirror_opts()).unwrap()
}

#[test]
fn mirror_follows_commits_across_rotations() {
    let fs = SimFs::new();
    let (log, _) = Log::open(fs.clone(), log_opts()).unwrap();
    let (m, report) = start(&log, &fs);
    assert_eq!(report.repaired_groups, 0);
    assert!(!report.rebuilt);
    log.commit(ddl()).unwrap();
    for i in 0..40 {
        log.commit(txn(i)).unwrap();
        if i % 12 == 11 {
            // The mirror rotates exactly when the log moves to its next segment.
            log.rotate().unwrap();
        }
    }
    assert!(m.wait_caught_up(WAIT), "{:?}", m.stats());
    let st = m.stats();
    assert_eq!(st.groups, 41);
    let want: Vec<String> = (1..=4).map(|n| format!("binlog.{n:06}")).collect();
    assert_eq!(st.files, want, "{st:?}");
    assert_eq!(st.last_gtid, Some(Gtid::new(0, 1, 41)));
    assert_eq!(st.last_error, None);
    m.shutdown().unwrap();
    let got = mirror_groups(&fs);
    assert_eq!(gtids(&got), (1..=41).collect::<Vec<_>>());
    assert_eq!(got, log_groups(&log));
    // Closed cleanly: the current file's in-use flag is clear.
    let last = m.stats().files.last().cloned().unwrap();
    assert_eq!(fs.read_file(&mirror_dir().join(last)).unwrap()[21] & 1, 0);
    // Byte for byte the view's files (the last one closed, so its in-use flag is clear too).
    assert_eq!(mirror_files(&fs), view_files(&log));
    log.shutdown().unwrap();
}

#[test]
fn restart_appends_what_the_mirror_missed_without_rebuilding() {
    let fs = SimFs::new();
    let (log, _) = Log::open(fs.clone(), log_opts()).unwrap();
    let (m, _) = start(&log, &fs);
    for i in 0..10 {
        log.commit(txn(i)).unwrap();
    }
    m.shutdown().unwrap();
    for i in 10..17 {
        log.commit(txn(i)).unwrap();
    }
    let (m, report) = start(&log, &fs);
    assert!(!report.rebuilt);
    assert_eq!(report.repaired_groups, 7);
    assert_eq!(mirror_groups(&fs), log_groups(&log));
    m.shutdown().unwrap();
    log.shutdown().unwrap();
}

#[test]
fn after_a_crash_the_mirror_is_repaired_to_the_logs_groups() {
    for seed in 0..12u64 {
        let fs = SimFs::new();
        let (log, _) = Log::open(fs.clone(), log_opts()).unwrap();
        let (m, _) = start(&log, &fs);
        for i in 0..(10 + seed) {
            log.commit(txn(i)).unwrap();
        }
        if seed % 3 == 0 {
            // The mirror is down while more commits arrive.
            m.shutdown().unwrap();
            for i in 0..5 {
                log.commit(txn(100 + i)).unwrap();
            }
        }
        // Power loss while the mirror may be appending.
        fs.crash_now();
        drop(m);
        drop(log);
        let fs2 = fs.reboot(seed, true);
        let (log, _) = Log::open(fs2.clone(), log_opts()).unwrap();
        let (m, report) = start(&log, &fs2);
        let want = log_groups(&log);
        assert!(
            want.len() as u64 >= 10 + seed,
            "seed {seed}: level 1 commits are durable"
        );
        assert_eq!(mirror_groups(&fs2), want, "seed {seed}: {report:?}");
        if seed % 3 == 0 {
            assert!(report.repaired_groups >= 5, "seed {seed}: {report:?}");
        }
        // And it follows again.
        log.commit(txn(999)).unwrap();
        assert!(m.wait_caught_up(WAIT), "seed {seed}: {:?}", m.stats());
        m.shutdown().unwrap();
        assert_eq!(mirror_groups(&fs2), log_groups(&log), "seed {seed}");
        assert_eq!(mirror_files(&fs2), view_files(&log), "seed {seed}");
        log.shutdown().unwrap();
    }
}

#[test]
fn reset_rebuilds_the_mirror_from_the_reset_log() {
    let fs = SimFs::new();
    let (log, _) = Log::open(fs.clone(), log_opts()).unwrap();
    let (m, _) = start(&log, &fs);
    for i in 0..12 {
        log.commit(txn(i)).unwrap();
    }
    assert!(m.wait_caught_up(WAIT));
    log.reset().unwrap();
    m.reset().unwrap();
    assert_eq!(m.stats().files, vec!["binlog.000001".to_string()]);
    for i in 0..3 {
        log.commit(txn(i)).unwrap();
    }
    assert!(m.wait_caught_up(WAIT), "{:?}", m.stats());
    m.shutdown().unwrap();
    let got = mirror_groups(&fs);
    assert_eq!(gtids(&got), vec![1, 2, 3]);
    assert_eq!(got, log_groups(&log));
    log.shutdown().unwrap();
}

#[test]
fn the_thread_notices_a_log_reset_by_itself() {
    let fs = SimFs::new();
    let (log, _) = Log::open(fs.clone(), log_opts()).unwrap();
    let (m, _) = start(&log, &fs);
    for i in 0..6 {
        log.commit(txn(i)).unwrap();
    }
    assert!(m.wait_caught_up(WAIT));
    log.reset().unwrap();
    for i in 0..4 {
        log.commit(txn(i)).unwrap();
    }
    assert!(m.wait_caught_up(WAIT), "{:?}", m.stats());
    assert_eq!(m.stats().rebuilds, 1);
    m.shutdown().unwrap();
    assert_eq!(gtids(&mirror_groups(&fs)), vec![1, 2, 3, 4]);
    assert_eq!(mirror_groups(&fs), log_groups(&log));
    log.shutdown().unwrap();
}

#[test]
fn a_reset_while_the_mirror_was_down_rebuilds_it_at_start() {
    let fs = SimFs::new();
    let (log, _) = Log::open(fs.clone(), log_opts()).unwrap();
    let (m, _) = start(&log, &fs);
    for i in 0..20 {
        log.commit(txn(i)).unwrap();
    }
    m.shutdown().unwrap();
    log.reset().unwrap();
    // More groups after the reset than the mirror had: GTID positions alone would match.
    for i in 0..25 {
        log.commit(txn(i)).unwrap();
    }
    let (m, report) = start(&log, &fs);
    assert!(report.rebuilt, "{report:?}");
    assert_eq!(report.repaired_groups, 25);
    assert_eq!(mirror_groups(&fs), log_groups(&log));
    m.shutdown().unwrap();
    log.shutdown().unwrap();
}

#[test]
fn a_malformed_group_stops_the_mirror_with_an_error_instead_of_being_skipped() {
    let fs = SimFs::new();
    let (log, _) = Log::open(fs.clone(), log_opts()).unwrap();
    let (m, _) = start(&log, &fs);
    log.commit(txn(1)).unwrap();
    // A GTID event followed by bytes that are no events: the log takes it, the mirror must not.
    let mut bad = Vec::new();
    gtid_event(FL_TRANSACTIONAL, &mut bad);
    bad.extend_from_slice(&[7u8; 40]);
    log.commit(record(RecordKind::Transaction, bad)).unwrap();
    log.commit(txn(3)).unwrap();
    assert!(!m.wait_caught_up(WAIT));
    let st = m.stats();
    let why = st.last_error.clone().expect("an error is reported");
    assert!(why.contains("0-1-2"), "{why}");
    assert_eq!(st.groups, 1);
    assert!(m.shutdown().is_err());
    assert_eq!(gtids(&mirror_groups(&fs)), vec![1]);
    // The log itself is unaffected.
    assert!(FileSystem::exists(
        fs.as_ref(),
        &mirror_dir().join("binlog.index")
    ));
    log.shutdown().unwrap();
}

#[test]
fn mirror_in_the_log_directory_leaves_the_segments_alone() {
    let fs = SimFs::new();
    let (log, _) = Log::open(fs.clone(), log_opts()).unwrap();
    let mut o = mirror_opts();
    o.dir = log_opts().dir;
    let (m, _) = Mirror::start(log.clone(), fs.clone(), o.clone()).unwrap();
    for i in 0..30 {
        log.commit(txn(i)).unwrap();
    }
    assert!(m.wait_caught_up(WAIT));
    log.reset().unwrap();
    m.reset().unwrap();
    log.commit(txn(1)).unwrap();
    assert!(m.wait_caught_up(WAIT));
    m.shutdown().unwrap();
    log.shutdown().unwrap();
    drop(log);
    let (log, report) = Log::open(fs.clone(), log_opts()).unwrap();
    assert_eq!(report.gtid_state.pos().to_string(), "0-1-1");
    let (m, report) = Mirror::start(log.clone(), fs.clone(), o).unwrap();
    assert!(!report.rebuilt);
    assert_eq!(report.repaired_groups, 0);
    m.shutdown().unwrap();
    log.shutdown().unwrap();
}

#[test]
fn mirror_and_classic_binlog_can_be_shared_between_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Mirror>();
    send_sync::<onelog_log::ClassicBinlog>();
}

#[test]
fn the_mirror_pins_what_it_has_not_copied_and_releases_it_at_shutdown() {
    let fs = SimFs::new();
    let (log, _) = Log::open(fs.clone(), log_opts()).unwrap();
    let (m, _) = start(&log, &fs);
    assert_eq!(log.reader_pins(), 1);
    for i in 0..40 {
        log.commit(txn(i)).unwrap();
    }
    assert!(m.wait_caught_up(WAIT), "{:?}", m.stats());
    assert_eq!(log.oldest_reader_lsn(), Some(log.durable_lsn()));
    m.shutdown().unwrap();
    assert_eq!(log.reader_pins(), 0);
}

#[test]
fn a_rotation_cut_by_a_crash_is_finished_with_the_views_header() {
    let fs = SimFs::new();
    let (log, _) = Log::open(fs.clone(), log_opts()).unwrap();
    let (m, _) = start(&log, &fs);
    for i in 0..5 {
        log.commit(txn(i)).unwrap();
    }
    assert!(m.wait_caught_up(WAIT));
    // The mirror syncs binlog.000001's Rotate, then the power goes before binlog.000002.
    fs.arm_crash_point(onelog_log::classic::CRASH_ROTATE_AFTER_OLD_SYNC, 1);
    log.rotate().unwrap();
    // The mirror thread may cut the power before this commit's sync or right after it (the
    // commit then fails at its crash point but is durable): either way it is not lost if
    // acknowledged, and the mirror must end up with what the log kept.
    let acked = log.commit(txn(5)).is_ok();
    assert!(!m.wait_caught_up(Duration::from_secs(2)));
    drop(m);
    drop(log);
    let fs2 = fs.reboot(7, true);
    let (log, _) = Log::open(fs2.clone(), log_opts()).unwrap();
    let (m, report) = start(&log, &fs2);
    assert!(!report.rebuilt, "{report:?}");
    m.shutdown().unwrap();
    assert_eq!(mirror_files(&fs2), view_files(&log));
    let got = gtids(&mirror_groups(&fs2));
    if acked {
        assert_eq!(got, (1..=6).collect::<Vec<_>>());
    } else {
        assert!(
            got == (1..=5).collect::<Vec<_>>() || got == (1..=6).collect::<Vec<_>>(),
            "{got:?}"
        );
    }
    log.shutdown().unwrap();
}

#[test]
fn binlog_gtid_pos_reads_the_view() {
    let fs = SimFs::new();
    let (log, _) = Log::open(fs.clone(), log_opts()).unwrap();
    for i in 0..4 {
        log.commit(txn(i)).unwrap();
    }
    log.rotate().unwrap();
    log.commit(txn(4)).unwrap();
    log.flush().unwrap();
    let files = view_files(&log);
    assert_eq!(files.len(), 2);
    for (n, (name, data)) in files.iter().enumerate() {
        let number = n as u64 + 1;
        let mut state = onelog_binlog::GtidState::new();
        let evs: Vec<_> = read_classic_file(name, data).map(|e| e.unwrap()).collect();
        for ev in &evs {
            if ev.event_type() == event_type::GTID_LIST {
                state = onelog_binlog::event::GtidListEvent::decode(ev.bytes)
                    .unwrap()
                    .to_state();
            }
        }
        // Before the Gtid_list too: its state (MariaDB reads it first).
        for pos in [0, 4] {
            assert_eq!(log.view_gtid_pos(number, pos).unwrap(), Some(state.clone()));
        }
        for ev in &evs {
            if ev.event_type() == event_type::GTID {
                state.record(GtidEvent::decode(ev.bytes).unwrap().gtid);
            }
            let end = u64::from(ev.end_log_pos());
            let got = log.view_gtid_pos(number, end).unwrap();
            assert_eq!(got.as_ref(), Some(&state), "{name} at {end}");
            assert_eq!(log.view_gtid_pos(number, ev.offset + 1).unwrap(), None);
        }
        let end = data.len() as u64;
        assert_eq!(log.view_gtid_pos(number, end + 1).unwrap(), None);
    }
    assert_eq!(log.view_gtid_pos(2, 1 << 20).unwrap(), None, "past the end");
    assert_eq!(log.view_gtid_pos(9, 4).unwrap(), None, "unknown file");
    assert_eq!(
        log.view_gtid_pos(2, 4).unwrap().unwrap().pos().to_string(),
        "0-1-4"
    );
    log.shutdown().unwrap();
}
