//! Classic MariaDB binlog files: what `ClassicBinlog` writes, how it repairs them at open, and
//! that `read_classic_file` (and, when installed, `mariadb-binlog`) accepts them.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use onelog_binlog::event::gtid::{FL_DDL, FL_STANDALONE, FL_TRANSACTIONAL};
use onelog_binlog::event::{
    event_type, BinlogCheckpointEvent, GtidEvent, GtidListEvent, QueryEvent, RotateEvent, XidEvent,
};
use onelog_binlog::{Gtid, GtidState};
use onelog_log::{read_classic_file, ClassicBinlog, ClassicOptions, LogError, SimFs, StdFs};

fn dir() -> PathBuf {
    PathBuf::from("/data/binlog")
}

fn opts(max_size: u64) -> ClassicOptions {
    ClassicOptions {
        dir: dir(),
        basename: "binlog".into(),
        max_size,
        server_id: 1,
        server_version: "10.11.9-MariaDB-onelog".into(),
    }
}

fn gtid_event(seq: u64, flags2: u8, out: &mut Vec<u8>) {
    GtidEvent {
        gtid: Gtid::new(0, 1, seq),
        flags2,
        commit_id: Some(seq + 100),
        timestamp: 1_700_000_000,
    }
    .encode(out);
}

/// GTID, an INSERT Query, Xid: a transactional group.
fn txn_group(seq: u64, pad: usize) -> Vec<u8> {
    let mut v = Vec::new();
    gtid_event(seq, FL_TRANSACTIONAL, &mut v);
    QueryEvent::new(
        "test",
        &format!("insert into t values ({seq}, '{}')", "x".repeat(pad)),
    )
    .encode(1_700_000_000, 1, &mut v)
    .unwrap();
    XidEvent { xid: seq }.encode(1_700_000_000, 1, &mut v);
    v
}

/// GTID (standalone) + the DDL Query.
fn ddl_group(seq: u64) -> Vec<u8> {
    let mut v = Vec::new();
    gtid_event(seq, FL_STANDALONE | FL_DDL, &mut v);
    QueryEvent::new("test", "create table t (a int primary key, b text)")
        .encode(1_700_000_000, 1, &mut v)
        .unwrap();
    v
}

/// GTID, BEGIN, INSERT, COMMIT: a non-transactional group.
fn commit_group(seq: u64) -> Vec<u8> {
    let mut v = Vec::new();
    gtid_event(seq, 0, &mut v);
    for q in ["BEGIN", "insert into m values (1)", "COMMIT"] {
        QueryEvent::new("test", q)
            .encode(1_700_000_000, 1, &mut v)
            .unwrap();
    }
    v
}

/// Each event with log_pos and CRC zeroed, so groups compare modulo their file placement.
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

/// The event groups of a file's bytes (GTID event to before the next GTID or non-group event).
fn groups_of(name: &str, data: &[u8]) -> Vec<(Gtid, Vec<Vec<u8>>)> {
    let mut out: Vec<(Gtid, Vec<Vec<u8>>)> = Vec::new();
    let mut open = false;
    for ev in read_classic_file(name, data) {
        let ev = ev.unwrap();
        match ev.event_type() {
            event_type::GTID => {
                let g = GtidEvent::decode(ev.bytes).unwrap().gtid;
                out.push((g, normalized(ev.bytes)));
                open = true;
            }
            event_type::FORMAT_DESCRIPTION
            | event_type::GTID_LIST
            | event_type::BINLOG_CHECKPOINT
            | event_type::ROTATE => open = false,
            _ => {
                assert!(open, "{name}: event at {} outside a group", ev.offset);
                out.last_mut().unwrap().1.extend(normalized(ev.bytes));
            }
        }
    }
    out
}

fn file(fs: &SimFs, name: &str) -> Vec<u8> {
    fs.read_file(&dir().join(name)).unwrap()
}

fn open(fs: &Arc<SimFs>, o: ClassicOptions) -> (ClassicBinlog, onelog_log::ClassicOpenReport) {
    ClassicBinlog::open(fs.clone(), o, &GtidState::new()).unwrap()
}

fn state_of(seqs: impl IntoIterator<Item = u64>) -> GtidState {
    GtidState::from_entries(seqs.into_iter().map(|s| Gtid::new(0, 1, s)))
}

#[test]
fn round_trip_events_have_real_end_log_pos_and_crc() {
    let fs = SimFs::new();
    let (mut b, report) = open(&fs, opts(1 << 20));
    assert!(report.created);
    assert_eq!(report.files, vec!["binlog.000001".to_string()]);
    let groups = [
        txn_group(1, 10),
        ddl_group(2),
        commit_group(3),
        txn_group(4, 300),
    ];
    for g in &groups {
        b.append_group(g).unwrap();
    }
    b.sync().unwrap();
    b.close().unwrap();
    assert_eq!(b.gtid_state(), &state_of(1..=4));

    let data = file(&fs, "binlog.000001");
    assert_eq!(&data[..4], b"\xfebin");
    let events: Vec<_> = read_classic_file("binlog.000001", &data)
        .collect::<Result<_, _>>()
        .unwrap();
    let mut at = 4u64;
    for e in &events {
        assert_eq!(e.offset, at);
        at += e.bytes.len() as u64;
        assert_eq!(u64::from(e.end_log_pos()), at, "event at {}", e.offset);
    }
    assert_eq!(at, data.len() as u64);
    let types: Vec<u8> = events.iter().map(|e| e.event_type()).collect();
    assert_eq!(
        &types[..3],
        &[
            event_type::FORMAT_DESCRIPTION,
            event_type::GTID_LIST,
            event_type::BINLOG_CHECKPOINT
        ]
    );
    assert!(GtidListEvent::decode(events[1].bytes)
        .unwrap()
        .gtids
        .is_empty());
    assert_eq!(
        BinlogCheckpointEvent::decode(events[2].bytes).unwrap().file,
        "binlog.000001"
    );
    // Closed cleanly: the in-use flag is clear.
    assert_eq!(events[0].bytes[17] & 1, 0);

    let got = groups_of("binlog.000001", &data);
    assert_eq!(got.len(), groups.len());
    for (i, (g, evs)) in got.iter().enumerate() {
        assert_eq!(g.seq_no, i as u64 + 1);
        assert_eq!(evs, &normalized(&groups[i]), "group {i}");
    }
    assert_eq!(
        fs.read_file(&dir().join("binlog.index")).unwrap(),
        b"./binlog.000001\n"
    );
}

#[test]
fn in_use_flag_is_set_while_open_and_the_fde_still_verifies() {
    let fs = SimFs::new();
    let (mut b, _) = open(&fs, opts(1 << 20));
    b.append_group(&txn_group(1, 5)).unwrap();
    b.sync().unwrap();
    let data = file(&fs, "binlog.000001");
    let first = read_classic_file("binlog.000001", &data)
        .next()
        .unwrap()
        .unwrap();
    assert_eq!(first.event_type(), event_type::FORMAT_DESCRIPTION);
    assert_eq!(
        first.bytes[17] & 1,
        1,
        "LOG_EVENT_BINLOG_IN_USE_F while open"
    );
    assert!(read_classic_file("binlog.000001", &data).all(|e| e.is_ok()));
    b.close().unwrap();
    assert!(b.append_group(&txn_group(2, 5)).is_err(), "closed");
}

#[test]
fn rotation_at_max_size_writes_rotate_new_header_and_index() {
    let fs = SimFs::new();
    let (mut b, _) = open(&fs, opts(1500));
    for seq in 1..=12 {
        b.append_group(&txn_group(seq, 200)).unwrap();
    }
    b.sync().unwrap();
    let files = b.files();
    assert!(files.len() >= 3, "{files:?}");
    let index = String::from_utf8(fs.read_file(&dir().join("binlog.index")).unwrap()).unwrap();
    let expect: String = files.iter().map(|f| format!("./{}\n", f.name)).collect();
    assert_eq!(index, expect);
    let mut seen = 0u64;
    for (i, f) in files.iter().enumerate() {
        assert_eq!(f.name, format!("binlog.{:06}", i + 1));
        let data = file(&fs, &f.name);
        assert_eq!(data.len() as u64, f.size);
        let events: Vec<_> = read_classic_file(&f.name, &data)
            .collect::<Result<_, _>>()
            .unwrap();
        // Header: FDE, Gtid_list = the state before this file's first group, checkpoint.
        let list = GtidListEvent::decode(events[1].bytes).unwrap().to_state();
        assert_eq!(list, state_of(1..=seen), "{}", f.name);
        assert_eq!(
            BinlogCheckpointEvent::decode(events[2].bytes).unwrap().file,
            f.name
        );
        let groups = groups_of(&f.name, &data);
        for (g, _) in &groups {
            seen += 1;
            assert_eq!(g.seq_no, seen);
        }
        let last = events.last().unwrap();
        if i + 1 < files.len() {
            assert!(data.len() as u64 > 1500);
            assert_eq!(last.event_type(), event_type::ROTATE);
            let r = RotateEvent::decode(last.bytes).unwrap();
            assert_eq!(r.position, 4);
            assert_eq!(r.next_file, files[i + 1].name);
            assert_eq!(events[0].bytes[17] & 1, 0, "closed file {}", f.name);
        } else {
            assert_eq!(events[0].bytes[17] & 1, 1, "current file");
        }
    }
    assert_eq!(seen, 12);
    // FLUSH BINARY LOGS.
    let before = b.files().len();
    b.rotate().unwrap();
    assert_eq!(b.files().len(), before + 1);
}

#[test]
fn reopen_after_clean_close_continues_the_last_file() {
    let fs = SimFs::new();
    let (mut b, _) = open(&fs, opts(1 << 20));
    for seq in 1..=3 {
        b.append_group(&txn_group(seq, 20)).unwrap();
    }
    b.close().unwrap();
    let (mut b, r) = open(&fs, opts(1 << 20));
    assert!(!r.created);
    assert_eq!(r.torn_bytes, 0);
    assert_eq!(r.gtid_state, state_of(1..=3));
    assert_eq!(r.last_gtid, Some(Gtid::new(0, 1, 3)));
    assert_eq!(r.files, vec!["binlog.000001".to_string()]);
    let data = file(&fs, "binlog.000001");
    assert_eq!(data[21] & 1, 1, "in use again");
    b.append_group(&ddl_group(4)).unwrap();
    b.close().unwrap();
    let data = file(&fs, "binlog.000001");
    let got: Vec<u64> = groups_of("binlog.000001", &data)
        .iter()
        .map(|(g, _)| g.seq_no)
        .collect();
    assert_eq!(got, vec![1, 2, 3, 4]);
}

#[test]
fn a_cut_tail_group_is_removed_at_open() {
    let fs = SimFs::new();
    let (mut b, _) = open(&fs, opts(1 << 20));
    for seq in 1..=3 {
        b.append_group(&txn_group(seq, 20)).unwrap();
    }
    b.close().unwrap();
    let before = file(&fs, "binlog.000001");
    let last_len = txn_group(3, 20).len() as u64;
    // Cut inside the Xid of group 3: it is incomplete.
    let f = onelog_log::FileSystem::open(fs.as_ref(), &dir().join("binlog.000001"), false).unwrap();
    f.set_len(before.len() as u64 - 3).unwrap();
    f.sync_data().unwrap();
    let (_b, r) = open(&fs, opts(1 << 20));
    assert_eq!(r.torn_bytes, last_len - 3);
    assert_eq!(r.gtid_state, state_of(1..=2));
    assert_eq!(r.last_gtid, Some(Gtid::new(0, 1, 2)));
    let after = file(&fs, "binlog.000001");
    assert_eq!(after.len() as u64, before.len() as u64 - last_len);
    assert!(read_classic_file("binlog.000001", &after).all(|e| e.is_ok()));
}

#[test]
fn crash_with_torn_tail_recovers_a_prefix_of_the_groups() {
    for seed in 0..24u64 {
        let fs = SimFs::new();
        let (mut b, _) = open(&fs, opts(4000));
        for seq in 1..=6 {
            b.append_group(&txn_group(seq, 100 + seed as usize))
                .unwrap();
        }
        b.sync().unwrap();
        for seq in 7..=9 {
            b.append_group(&txn_group(seq, 100)).unwrap();
        }
        fs.crash_now();
        let fs2 = fs.reboot(seed, true);
        let (mut b, r) = open(&fs2, opts(4000));
        let n = r.gtid_state.pos().get(0).unwrap().seq_no;
        assert!((6..=9).contains(&n), "seed {seed}: recovered up to {n}");
        assert_eq!(r.gtid_state, state_of(1..=n), "seed {seed}");
        // Every file reads back whole and the groups are exactly 1..=n.
        let mut seqs = Vec::new();
        for f in &r.files {
            let data = fs2.read_file(&dir().join(f)).unwrap();
            seqs.extend(groups_of(f, &data).into_iter().map(|(g, _)| g.seq_no));
        }
        assert_eq!(seqs, (1..=n).collect::<Vec<_>>(), "seed {seed}");
        // And the binlog goes on.
        b.append_group(&txn_group(n + 1, 10)).unwrap();
        b.close().unwrap();
    }
}

#[test]
fn corrupt_middle_event_is_an_error_naming_file_and_offset() {
    let fs = SimFs::new();
    let (mut b, _) = open(&fs, opts(1 << 20));
    for seq in 1..=5 {
        b.append_group(&txn_group(seq, 20)).unwrap();
    }
    b.close().unwrap();
    let data = file(&fs, "binlog.000001");
    // The Query event of group 2.
    let ev = read_classic_file("binlog.000001", &data)
        .map(|e| e.unwrap())
        .filter(|e| e.event_type() == event_type::QUERY)
        .nth(1)
        .unwrap();
    let at = ev.offset;
    let path = dir().join("binlog.000001");
    assert!(fs.corrupt(&path, at + 30, &[data[at as usize + 30] ^ 0x40]));
    let damaged = file(&fs, "binlog.000001");
    let err = read_classic_file("binlog.000001", &damaged)
        .find_map(|e| e.err())
        .unwrap();
    match &err {
        LogError::Corrupt { path, offset, .. } => {
            assert_eq!(path, Path::new("binlog.000001"));
            assert_eq!(*offset, at);
        }
        e => panic!("{e}"),
    }
    match ClassicBinlog::open(fs.clone(), opts(1 << 20), &GtidState::new()) {
        Err(LogError::Corrupt { path, offset, .. }) => {
            assert!(path.ends_with("binlog.000001"));
            assert_eq!(offset, at);
        }
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("a damaged middle event was accepted"),
    }
    assert!(err.to_string().contains(&format!("offset {at}")));
}

#[test]
fn malformed_group_is_refused_and_nothing_is_written() {
    let fs = SimFs::new();
    let (mut b, _) = open(&fs, opts(1 << 20));
    let size = b.files()[0].size;
    let g = txn_group(1, 5);
    let xid_len = 19 + 8 + 4;
    // Missing its Xid.
    assert!(matches!(
        b.append_group(&g[..g.len() - xid_len]),
        Err(LogError::InvalidRecord(_))
    ));
    // Starting with a Query.
    let mut q = Vec::new();
    QueryEvent::new("test", "COMMIT")
        .encode(0, 1, &mut q)
        .unwrap();
    assert!(b.append_group(&q).is_err());
    // Bad CRC.
    let mut bad = g.clone();
    bad[30] ^= 1;
    assert!(b.append_group(&bad).is_err());
    assert_eq!(b.files()[0].size, size);
    assert!(b.gtid_state().is_empty());
    b.append_group(&g).unwrap();
}

#[test]
fn interrupted_rotation_is_finished_at_open() {
    let fs = SimFs::new();
    let (mut b, _) = open(&fs, opts(1 << 20));
    b.append_group(&txn_group(1, 5)).unwrap();
    fs.arm_crash_point("classic.rotate.after_old_sync", 1);
    assert!(b.rotate().is_err());
    let fs2 = fs.reboot(7, false);
    let (mut b, r) = open(&fs2, opts(1 << 20));
    assert_eq!(
        r.files,
        vec!["binlog.000001".to_string(), "binlog.000002".to_string()]
    );
    assert_eq!(r.gtid_state, state_of(1..=1));
    b.append_group(&txn_group(2, 5)).unwrap();
    b.close().unwrap();
    let d1 = fs2.read_file(&dir().join("binlog.000001")).unwrap();
    let d2 = fs2.read_file(&dir().join("binlog.000002")).unwrap();
    assert_eq!(groups_of("binlog.000001", &d1).len(), 1);
    let g2 = groups_of("binlog.000002", &d2);
    assert_eq!(g2.len(), 1);
    assert_eq!(g2[0].0, Gtid::new(0, 1, 2));
}

#[test]
fn reset_removes_every_file_and_starts_again_empty() {
    let fs = SimFs::new();
    let (mut b, _) = open(&fs, opts(1000));
    for seq in 1..=8 {
        b.append_group(&txn_group(seq, 200)).unwrap();
    }
    assert!(b.files().len() > 2);
    b.reset().unwrap();
    assert_eq!(b.files().len(), 1);
    assert!(b.gtid_state().is_empty());
    assert!(!fs.exists_path(&dir().join("binlog.000002")));
    assert_eq!(
        fs.read_file(&dir().join("binlog.index")).unwrap(),
        b"./binlog.000001\n"
    );
    b.append_group(&txn_group(1, 5)).unwrap();
    b.close().unwrap();
    let (_b, r) = open(&fs, opts(1000));
    assert_eq!(r.gtid_state, state_of(1..=1));
    let data = file(&fs, "binlog.000001");
    let list = read_classic_file("binlog.000001", &data)
        .nth(1)
        .unwrap()
        .unwrap();
    assert!(GtidListEvent::decode(list.bytes).unwrap().gtids.is_empty());
}

trait Exists {
    fn exists_path(&self, p: &Path) -> bool;
}

impl Exists for SimFs {
    fn exists_path(&self, p: &Path) -> bool {
        onelog_log::FileSystem::exists(self, p)
    }
}

#[test]
fn mariadb_binlog_verifies_the_files() {
    let Ok(out) = std::process::Command::new("mariadb-binlog")
        .arg("--version")
        .output()
    else {
        eprintln!("mariadb-binlog is not installed: skipped");
        return;
    };
    assert!(out.status.success());
    let tmp = std::env::temp_dir().join(format!("onelog-classic-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let mut o = opts(2000);
    o.dir = tmp.clone();
    let (mut b, _) = ClassicBinlog::open(StdFs::new(), o, &GtidState::new()).unwrap();
    b.append_group(&ddl_group(1)).unwrap();
    for seq in 2..=8 {
        b.append_group(&txn_group(seq, 300)).unwrap();
    }
    b.append_group(&commit_group(9)).unwrap();
    b.close().unwrap();
    let files: Vec<PathBuf> = b.files().iter().map(|f| f.path.clone()).collect();
    assert!(files.len() >= 2);
    let out = std::process::Command::new("mariadb-binlog")
        .arg("--verify-binlog-checksum")
        .args(&files)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "mariadb-binlog failed: {}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    for seq in 1..=9 {
        assert!(
            text.contains(&format!("GTID 0-1-{seq}")),
            "GTID 0-1-{seq} missing:\n{text}"
        );
    }
    assert!(text.contains("Rotate to binlog.000002"), "{text}");
    if std::env::var_os("H2_KEEP").is_none() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
}

mod damaged {
    use super::*;
    use proptest::prelude::*;

    fn sample() -> Vec<u8> {
        let fs = SimFs::new();
        let (mut b, _) = open(&fs, opts(1 << 20));
        b.append_group(&ddl_group(1)).unwrap();
        b.append_group(&txn_group(2, 30)).unwrap();
        b.append_group(&commit_group(3)).unwrap();
        b.close().unwrap();
        file(&fs, "binlog.000001")
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, failure_persistence: None, rng_seed: proptest::test_runner::RngSeed::Fixed(0x0e1_0c1a), ..ProptestConfig::default() })]

        /// Reading or opening a damaged file never panics; an error names an offset inside it.
        #[test]
        fn damaged_files_never_panic(cut in 0usize..2000, at in 0usize..2000, x in 1u8..=255) {
            let mut data = sample();
            let at = at % data.len();
            data[at] ^= x;
            data.truncate(cut.min(data.len()));
            for ev in read_classic_file("binlog.000001", &data) {
                if let Err(LogError::Corrupt { offset, .. }) = ev {
                    prop_assert!(offset <= data.len() as u64);
                }
            }
            let fs = SimFs::new();
            let (b, _) = open(&fs, opts(1 << 20));
            drop(b);
            let f = onelog_log::FileSystem::open(fs.as_ref(), &dir().join("binlog.000001"), true).unwrap();
            f.set_len(0).unwrap();
            f.write_all_at(&data, 0).unwrap();
            f.sync_data().unwrap();
            if let Ok((_, r)) = ClassicBinlog::open(fs.clone(), opts(1 << 20), &GtidState::new()) {
                // What survived reads back whole.
                let after = file(&fs, "binlog.000001");
                prop_assert!(read_classic_file("binlog.000001", &after).all(|e| e.is_ok()));
                prop_assert!(r.gtid_state.pos().get(0).map_or(0, |g| g.seq_no) <= 3);
            }
        }
    }
}
