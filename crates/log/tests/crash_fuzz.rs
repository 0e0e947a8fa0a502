//! Seeded random crashes of the log alone: a random crash point fires at a random hit while
//! concurrent committers run at a random durability level; after a (tearing) reboot the log
//! must open, hold every acknowledged level-1 commit, and be a contiguous prefix of what was
//! attempted. Every failure message names its seed.

mod common;

use std::sync::{Arc, Mutex};

use common::*;
use onelog_log::{Durability, Log, SimFs};

const POINTS: [&str; 6] = [
    "commit.before_write",
    "commit.after_write",
    "commit.after_sync",
    "rotate.before_header",
    "rotate.after_header",
    "rotate.after_rename",
];

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

fn one_run(seed: u64) {
    let mut rng = Rng(seed);
    let level = Durability::from_level((rng.next() % 3) as u8).unwrap();
    let point = POINTS[(rng.next() % POINTS.len() as u64) as usize];
    let nth = 1 + rng.next() % if point.starts_with("rotate") { 4 } else { 40 };
    let threads = 1 + rng.next() % 4;
    let fs = SimFs::new();
    let seg = 32u64 << 10;
    let log = Log::open(fs.clone(), opts(seg, level))
        .unwrap_or_else(|e| panic!("seed {seed}: open: {e}"))
        .0;
    fs.arm_crash_point(point, nth);
    let acked = Arc::new(Mutex::new(Vec::new()));
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let log = log.clone();
            let acked = acked.clone();
            let mut trng = Rng(seed ^ ((t + 1) * 0x1234_5678));
            std::thread::spawn(move || {
                for i in 0..60 {
                    let tag = t * 1000 + i;
                    let size = 50 + (trng.next() % 1500) as usize;
                    match log.commit(txn(tag, size)) {
                        Ok(r) => acked.lock().unwrap().push((r.gtid.seq_no, tag)),
                        Err(_) => break,
                    }
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let crashed = fs.crashed();
    let fs2 = fs.reboot(seed, true);
    drop(log);
    let ctx =
        format!("seed {seed} ({point} #{nth}, {level:?}, {threads} threads, crashed={crashed})");
    let (log2, rep) =
        Log::open(fs2.clone(), opts(seg, level)).unwrap_or_else(|e| panic!("{ctx}: reopen: {e}"));
    let recs = read_all(
        &mut log2
            .reader(onelog_log::ReadStart::Lsn(0), Default::default())
            .unwrap_or_else(|e| panic!("{ctx}: reader: {e}")),
    );
    assert_contiguous(&recs, &ctx);
    for r in &recs {
        let tag = tag_of(r);
        assert!(
            tag % 1000 < 60 && tag / 1000 < threads,
            "{ctx}: record with unknown tag {tag}"
        );
    }
    let acked = acked.lock().unwrap();
    for &(seq, tag) in acked.iter() {
        match recs.get(seq as usize - 1) {
            Some(r) => assert_eq!(tag_of(r), tag, "{ctx}: seq {seq} holds another transaction"),
            None => assert!(
                level != Durability::Level1,
                "{ctx}: acked level-1 commit seq {seq} lost"
            ),
        }
    }
    if std::env::var("ONELOG_CRASH_VERBOSE").is_ok() {
        eprintln!(
            "{ctx}: acked {} recovered {} segments {} torn {}",
            acked.len(),
            recs.len(),
            log2.segments().len(),
            rep.torn_bytes
        );
    }
    assert_eq!(rep.gtid_state.next_seq(0), recs.len() as u64 + 1, "{ctx}");
    let next = log2
        .commit(txn(999_999, 10))
        .unwrap_or_else(|e| panic!("{ctx}: commit after recovery: {e}"));
    assert_eq!(next.gtid.seq_no, recs.len() as u64 + 1, "{ctx}");
}

#[test]
fn random_crash_points_recover_a_contiguous_prefix_with_every_acked_level1_commit() {
    let base = std::env::var("ONELOG_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0u64);
    let runs = std::env::var("ONELOG_CRASH_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(300u64);
    for seed in base..base + runs {
        one_run(seed);
    }
}
