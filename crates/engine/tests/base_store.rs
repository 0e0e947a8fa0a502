//! The paged store's on-disk base (`base.rs`) on real files: checkpoints round-trip and survive
//! a reopen, snapshots see only earlier checkpoints, refused batches write nothing, damaged
//! files are errors (never a different row), and kill -9 during checkpoints leaves the newest
//! completed checkpoint whole. The base bypasses the simulated `FileSystem`, so these run on a
//! scratch directory under the system's temporary directory.

mod common;

use std::io::{BufRead, BufReader};
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::Scratch;
use onelog_engine::base::{Base, BaseChange, BaseError};

const CACHE: u64 = 8 << 20;

/// Data keys and values in key order.
type Pairs = Vec<(Vec<u8>, Vec<u8>)>;
/// A checkpoint's meta records.
type Meta<'a> = Vec<(&'a str, &'a [u8])>;

fn key(table: u8, id: u32) -> Vec<u8> {
    let mut k = vec![table];
    k.extend_from_slice(&id.to_be_bytes());
    k
}

fn value(id: u32, version: u64) -> Vec<u8> {
    format!(
        "row {id} version {version} {}",
        "x".repeat((id % 50) as usize)
    )
    .into_bytes()
}

/// Every data key and value, in order, or the first read error.
fn try_all(base: &Base) -> Result<Pairs, BaseError> {
    let mut out = Vec::new();
    base.snapshot()
        .range(Bound::Unbounded, Bound::Unbounded, &mut |k, v| {
            out.push((k.to_vec(), v.to_vec()));
            true
        })
        .map(|()| out)
}

/// Every data key and value, in order.
fn all(base: &Base) -> Pairs {
    try_all(base).expect("range")
}

fn lsn_of(bytes: Option<Vec<u8>>) -> u64 {
    bytes.map_or(0, |b| u64::from_le_bytes(b.try_into().expect("8-byte LSN")))
}

#[test]
fn checkpoints_round_trip_and_survive_a_reopen() {
    let dir = Scratch::new("roundtrip");
    let base = Base::open(&dir.0, CACHE).expect("open");
    let first: Vec<BaseChange> = (1..=1000).map(|i| (key(1, i), Some(value(i, 1)))).collect();
    base.checkpoint(
        &[("lsn", &10u64.to_le_bytes()), ("gtid", b"0-1-10")],
        &first,
    )
    .expect("first checkpoint");
    // The second deletes every tenth row, rewrites every seventh and adds rows of table 2.
    let mut second: Vec<BaseChange> = Vec::new();
    for i in 1..=1000u32 {
        if i % 10 == 0 {
            second.push((key(1, i), None));
        } else if i % 7 == 0 {
            second.push((key(1, i), Some(value(i, 2))));
        }
    }
    second.extend((1..=5).map(|i| (key(2, i), Some(value(i, 2)))));
    base.checkpoint(&[("lsn", &20u64.to_le_bytes())], &second)
        .expect("second checkpoint");
    drop(base);

    let base = Base::open(&dir.0, CACHE).expect("reopen");
    let snap = base.snapshot();
    assert_eq!(lsn_of(snap.meta("lsn").unwrap()), 20);
    assert_eq!(
        snap.meta("gtid").unwrap().as_deref(),
        Some(&b"0-1-10"[..]),
        "a meta record not rewritten stays"
    );
    assert_eq!(snap.meta("absent").unwrap(), None);
    assert_eq!(snap.get(&key(1, 10)).unwrap(), None, "deleted");
    assert_eq!(
        snap.get(&key(1, 14)).unwrap(),
        Some(value(14, 2)),
        "rewritten"
    );
    assert_eq!(
        snap.get(&key(1, 11)).unwrap(),
        Some(value(11, 1)),
        "untouched"
    );
    let rows = all(&base);
    assert_eq!(rows.len(), 900 + 5, "meta records are not data");
    let mut expected: Pairs = (1..=1000u32)
        .filter(|i| i % 10 != 0)
        .map(|i| (key(1, i), value(i, if i % 7 == 0 { 2 } else { 1 })))
        .collect();
    expected.extend((1..=5).map(|i| (key(2, i), value(i, 2))));
    assert_eq!(rows, expected);
    // A bounded range stops where asked, and the visitor can stop early.
    let mut seen = Vec::new();
    snap.range(
        Bound::Included(&key(1, 995)),
        Bound::Excluded(&key(2, 0)),
        &mut |k, _| {
            seen.push(k.to_vec());
            true
        },
    )
    .unwrap();
    assert_eq!(
        seen,
        vec![
            key(1, 995),
            key(1, 996),
            key(1, 997),
            key(1, 998),
            key(1, 999)
        ]
    );
    // Bounds below the first data key never reach the meta records, and empty or inverted
    // ranges read nothing.
    let keys = |from: Bound<&[u8]>, to: Bound<&[u8]>| {
        let mut n = 0;
        snap.range(from, to, &mut |k, _| {
            assert!(k[0] >= 1, "meta record {k:02x?} read as data");
            n += 1;
            true
        })
        .unwrap();
        n
    };
    assert_eq!(keys(Bound::Excluded(&[0u8][..]), Bound::Unbounded), 905);
    assert_eq!(
        keys(
            Bound::Included(&[0u8, b'l'][..]),
            Bound::Excluded(&key(1, 3))
        ),
        2
    );
    assert_eq!(
        keys(Bound::Included(&key(1, 5)), Bound::Excluded(&key(1, 5))),
        0
    );
    assert_eq!(
        keys(Bound::Excluded(&key(1, 5)), Bound::Included(&key(1, 5))),
        0
    );
    assert_eq!(
        keys(Bound::Included(&key(1, 9)), Bound::Included(&key(1, 2))),
        0
    );
    assert_eq!(keys(Bound::Unbounded, Bound::Included(&[0u8][..])), 0);
    assert_eq!(
        keys(Bound::Included(&key(1, 5)), Bound::Included(&key(1, 5))),
        1
    );
    let mut first_two = 0;
    snap.range(Bound::Unbounded, Bound::Unbounded, &mut |_, _| {
        first_two += 1;
        first_two < 2
    })
    .unwrap();
    assert_eq!(first_two, 2);
}

#[test]
fn a_checkpoint_is_written_uncompressed() {
    // A checkpoint goes into fjall's canonical L1, which a load rewrites again and again:
    // its blocks are not compressed (`base.rs`, DATA_COMPRESSION). 4 MiB of values that LZ4
    // would shrink a hundredfold take their full size on disk, and read back equal.
    let dir = Scratch::new("uncompressed");
    let base = Base::open(&dir.0, CACHE).expect("open");
    let before = base.stats().disk_bytes;
    let changes: Vec<BaseChange> = (1..=4096u32)
        .map(|i| (key(1, i), Some(vec![b'a'; 1024])))
        .collect();
    base.checkpoint(&[("lsn", &1u64.to_le_bytes())], &changes)
        .expect("checkpoint");
    let written = base.stats().disk_bytes - before;
    assert!(
        written >= 4 << 20,
        "4 MiB of values took {written} bytes on disk: compressed"
    );
    assert_eq!(all(&base).len(), 4096);
    assert_eq!(
        base.snapshot().get(&key(1, 77)).unwrap(),
        Some(vec![b'a'; 1024])
    );
}

#[test]
fn a_snapshot_sees_only_the_checkpoints_before_it() {
    let dir = Scratch::new("snapshot");
    let base = Base::open(&dir.0, CACHE).expect("open");
    base.checkpoint(
        &[("lsn", &1u64.to_le_bytes())],
        &[(key(1, 1), Some(b"one".to_vec()))],
    )
    .unwrap();
    let before = base.snapshot();
    base.checkpoint(
        &[("lsn", &2u64.to_le_bytes())],
        &[(key(1, 1), None), (key(1, 2), Some(b"two".to_vec()))],
    )
    .unwrap();
    assert_eq!(lsn_of(before.meta("lsn").unwrap()), 1);
    assert_eq!(before.get(&key(1, 1)).unwrap(), Some(b"one".to_vec()));
    assert_eq!(before.get(&key(1, 2)).unwrap(), None);
    let after = base.snapshot();
    assert_eq!(lsn_of(after.meta("lsn").unwrap()), 2);
    assert_eq!(after.get(&key(1, 1)).unwrap(), None);
    assert_eq!(after.get(&key(1, 2)).unwrap(), Some(b"two".to_vec()));
    // An iterator is owned: it keeps its snapshot's view after the snapshot value is gone and
    // more checkpoints ran (a table root will carry one while readers scan).
    let keys = |it: &mut dyn Iterator<Item = onelog_engine::base::BaseItem>| -> Vec<Vec<u8>> {
        it.map(|r| r.unwrap().0.to_vec()).collect()
    };
    let mut old = before.iter(Bound::Unbounded, Bound::Unbounded);
    drop(before);
    base.checkpoint(
        &[("lsn", &3u64.to_le_bytes())],
        &[(key(1, 3), Some(b"three".to_vec()))],
    )
    .unwrap();
    assert_eq!(keys(&mut old), [key(1, 1)]);
    let mut new = after.iter(Bound::Included(&key(1, 2)), Bound::Unbounded);
    assert_eq!(keys(&mut new), [key(1, 2)]);
    let mut newest = base
        .snapshot()
        .iter(Bound::Excluded(&key(1, 2)), Bound::Unbounded);
    assert_eq!(keys(&mut newest), [key(1, 3)]);
}

#[test]
fn snapshots_taken_while_checkpoints_run_each_see_one_whole_checkpoint() {
    use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
    let dir = Scratch::new("concurrent");
    let base = Base::open(&dir.0, CACHE).expect("open");
    let rows = |lsn: u64| -> Vec<BaseChange> {
        (1..=2000)
            .map(|i| (key(1, i), Some(value(i, lsn))))
            .collect()
    };
    base.checkpoint(&[("lsn", &1u64.to_le_bytes())], &rows(1))
        .unwrap();
    let (done, checked) = (AtomicBool::new(false), AtomicU32::new(0));
    let seen_lsns = std::thread::scope(|s| {
        let reader = s.spawn(|| {
            let mut lsns = std::collections::BTreeSet::new();
            while !done.load(Ordering::Acquire) && checked.load(Ordering::Relaxed) < 100_000 {
                let snap = base.snapshot();
                let lsn = lsn_of(snap.meta("lsn").unwrap());
                let mut n = 0;
                snap.range(Bound::Unbounded, Bound::Unbounded, &mut |k, v| {
                    let id = u32::from_be_bytes(k[1..5].try_into().unwrap());
                    assert_eq!(
                        v,
                        value(id, lsn),
                        "a snapshot at checkpoint {lsn} read another's row {id}"
                    );
                    n += 1;
                    true
                })
                .unwrap();
                assert_eq!(n, 2000);
                checked.fetch_add(1, Ordering::Relaxed);
                lsns.insert(lsn);
            }
            lsns
        });
        for lsn in 2..=30u64 {
            // Let the reader finish a pass between checkpoints (bounded), so it reads under
            // several of them whatever the machine's load.
            let before = checked.load(Ordering::Relaxed);
            let start = Instant::now();
            while checked.load(Ordering::Relaxed) == before
                && start.elapsed() < Duration::from_secs(5)
            {
                std::thread::sleep(Duration::from_millis(1));
            }
            base.checkpoint(&[("lsn", &lsn.to_le_bytes())], &rows(lsn))
                .unwrap();
        }
        done.store(true, Ordering::Release);
        reader.join().unwrap()
    });
    assert!(seen_lsns.len() > 10, "the reader saw only {seen_lsns:?}");
}

#[test]
fn a_batch_that_breaks_the_key_rules_is_refused_and_writes_nothing() {
    let dir = Scratch::new("refused");
    let base = Base::open(&dir.0, CACHE).expect("open");
    base.checkpoint(
        &[("lsn", &1u64.to_le_bytes())],
        &[(key(1, 1), Some(b"a".to_vec()))],
    )
    .unwrap();
    let lsn2 = 2u64.to_le_bytes();
    let cases: Vec<(Meta, Vec<BaseChange>, &str)> = vec![
        (
            vec![("lsn", &lsn2)],
            vec![
                (key(1, 3), Some(b"c".to_vec())),
                (key(1, 2), Some(b"b".to_vec())),
            ],
            "keys out of order",
        ),
        (
            vec![("lsn", &lsn2)],
            vec![(key(1, 2), Some(b"b".to_vec())), (key(1, 2), None)],
            "keys out of order",
        ),
        (
            vec![("lsn", &lsn2)],
            vec![(vec![0, 1], Some(b"m".to_vec()))],
            "meta prefix",
        ),
        (
            vec![("lsn", &lsn2)],
            vec![(Vec::new(), Some(b"e".to_vec()))],
            "is empty",
        ),
        (
            vec![("lsn", &lsn2), ("lsn", &lsn2)],
            Vec::new(),
            "named twice",
        ),
    ];
    base.checkpoint(&[], &[])
        .expect("an empty checkpoint writes nothing");
    for (meta, changes, why) in cases {
        let err = base.checkpoint(&meta, &changes).expect_err(why);
        assert_eq!(err.dir, dir.0);
        assert_eq!(err.doing, "checkpoint");
        assert!(err.detail.contains(why), "{err}");
        assert!(
            err.to_string().contains(&dir.0.display().to_string()),
            "{err}"
        );
        // Streamed, the same refusal comes after the changes before it were written into the
        // ingestion: none of them is registered.
        let err = base
            .checkpoint_streamed(&meta, &mut changes.clone().into_iter())
            .expect_err(why);
        assert!(err.detail.contains(why), "{err}");
        assert_eq!(all(&base), vec![(key(1, 1), b"a".to_vec())], "{why}");
        assert_eq!(lsn_of(base.snapshot().meta("lsn").unwrap()), 1, "{why}");
    }
    // A stream that keeps the rules is one checkpoint like a batch.
    let (l3, l4) = (3u64.to_le_bytes(), 4u64.to_le_bytes());
    let streamed: Vec<BaseChange> = (2..200).map(|i| (key(1, i), Some(value(i, 3)))).collect();
    base.checkpoint_streamed(&[("lsn", &l3)], &mut streamed.clone().into_iter())
        .unwrap();
    let mut want = vec![(key(1, 1), b"a".to_vec())];
    want.extend(
        streamed
            .iter()
            .map(|(k, v)| (k.clone(), v.clone().unwrap())),
    );
    assert_eq!(all(&base), want);
    base.checkpoint_streamed(&[("lsn", &l4)], &mut (2..200).map(|i| (key(1, i), None)))
        .unwrap();
    want.truncate(1);
    assert_eq!(all(&base), want);
    assert_eq!(lsn_of(base.snapshot().meta("lsn").unwrap()), 4);
    drop(base);
    let base = Base::open(&dir.0, CACHE).expect("reopen");
    assert_eq!(lsn_of(base.snapshot().meta("lsn").unwrap()), 4);
    assert_eq!(all(&base), vec![(key(1, 1), b"a".to_vec())]);
}

fn largest_file(dir: &Path) -> PathBuf {
    let mut best: Option<(u64, PathBuf)> = None;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let m = e.metadata().unwrap();
            if m.is_dir() {
                stack.push(e.path());
            } else if best.as_ref().is_none_or(|(s, _)| m.len() > *s) {
                best = Some((m.len(), e.path()));
            }
        }
    }
    best.expect("a file").1
}

/// Opens and reads everything; the first error, or `Ok` with the rows.
fn read_back(dir: &Path) -> Result<Pairs, String> {
    let base = Base::open(dir, CACHE).map_err(|e| e.to_string())?;
    try_all(&base).map_err(|e| e.to_string())
}

#[test]
fn a_damaged_file_is_an_error_naming_the_directory_never_a_different_row() {
    let rows: Vec<BaseChange> = (1..=20_000)
        .map(|i| (key(1, i), Some(value(i, 1))))
        .collect();
    let expected: Vec<(Vec<u8>, Vec<u8>)> = rows
        .iter()
        .map(|(k, v)| (k.clone(), v.clone().unwrap()))
        .collect();
    for (case, damage) in [
        (0, "flip at 25%"),
        (1, "flip at 50%"),
        (2, "flip at 75%"),
        (3, "cut to half"),
    ] {
        let dir = Scratch::new(&format!("damaged{case}"));
        {
            let base = Base::open(&dir.0, CACHE).expect("open");
            base.checkpoint(&[("lsn", &1u64.to_le_bytes())], &rows)
                .unwrap();
        }
        assert_eq!(read_back(&dir.0).as_ref(), Ok(&expected), "pristine");
        let file = largest_file(&dir.0);
        let mut bytes = std::fs::read(&file).unwrap();
        let len = bytes.len();
        if case < 3 {
            bytes[len * (case + 1) / 4] ^= 0x10;
        } else {
            bytes.truncate(len / 2);
        }
        std::fs::write(&file, bytes).unwrap();
        let err = read_back(&dir.0).expect_err(damage);
        assert!(
            err.contains(&dir.0.display().to_string()),
            "{damage}: {err}"
        );
    }
}

/// The child of the kill -9 test (run only by that test, as a separate process): checkpoints in
/// a loop, each rewriting the marker key with its LSN, and prints each LSN once it is written.
#[test]
#[ignore = "child process of kill9_during_checkpoints_leaves_the_newest_one_whole"]
fn kill9_child_writer() {
    let dir =
        PathBuf::from(std::env::var("ONELOG_BASE_KILL9_DIR").expect("run by the kill -9 test"));
    let base = Base::open(&dir, CACHE).expect("open");
    let mut lsn = lsn_of(base.snapshot().meta("lsn").unwrap());
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(30) {
        lsn += 1;
        // 5,000 rows of table 1, every one carrying this LSN, and the marker in table 9.
        let mut changes: Vec<BaseChange> = (1..=5000)
            .map(|i| (key(1, i), Some(value(i, lsn))))
            .collect();
        changes.push((key(9, 0), Some(lsn.to_le_bytes().to_vec())));
        base.checkpoint(&[("lsn", &lsn.to_le_bytes())], &changes)
            .expect("checkpoint");
        println!("LSN {lsn}");
    }
}

#[test]
fn kill9_during_checkpoints_leaves_the_newest_one_whole() {
    let dir = Scratch::new("kill9");
    let exe = std::env::current_exe().unwrap();
    for round in 0..6u64 {
        let mut child = Command::new(&exe)
            .args([
                "--exact",
                "kill9_child_writer",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("ONELOG_BASE_KILL9_DIR", &dir.0)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut acknowledged = 0u64;
        // Wait for the first checkpoint of this round, then let it run a little (bounded).
        for line in lines.by_ref() {
            if let Some(l) = line.unwrap().strip_prefix("LSN ") {
                acknowledged = l.parse().unwrap();
                break;
            }
        }
        assert!(
            acknowledged > 0,
            "round {round}: the child wrote no checkpoint"
        );
        std::thread::sleep(Duration::from_millis(20 + (round * 37) % 150));
        child.kill().unwrap();
        let _ = child.wait();
        for line in lines.map_while(Result::ok) {
            if let Some(l) = line.strip_prefix("LSN ") {
                acknowledged = l.parse().unwrap();
            }
        }
        let base = Base::open(&dir.0, CACHE).expect("reopen after kill -9");
        let snap = base.snapshot();
        let lsn = lsn_of(snap.meta("lsn").unwrap());
        assert!(
            lsn >= acknowledged,
            "round {round}: checkpoint {acknowledged} acknowledged, base at {lsn}"
        );
        assert_eq!(
            lsn_of(snap.get(&key(9, 0)).unwrap()),
            lsn,
            "round {round}: marker and meta disagree"
        );
        let rows = all(&base);
        assert_eq!(rows.len(), 5001);
        for (k, v) in &rows[..5000] {
            let id = u32::from_be_bytes(k[1..5].try_into().unwrap());
            assert_eq!(
                v,
                &value(id, lsn),
                "round {round}: row {id} is not checkpoint {lsn}'s"
            );
        }
    }
}
