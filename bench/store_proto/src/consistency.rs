//! Snapshot consistency across checkpoints: accounts whose balances always sum to the same
//! total; one committer moves money between two accounts per commit (through the delta), a
//! reader sums every balance through one view at a time, and checkpoints freeze the delta and
//! write it into the base underneath them. Any view that mixes two states shows a wrong sum.

use crate::base::{self, Change};
use crate::workload::{mix, row_key, Live};
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

const ACCOUNTS: u64 = 20_000;
const START: u64 = 1_000;

fn balance(v: &[u8]) -> u64 {
    u64::from_be_bytes(v.try_into().unwrap_or([0; 8]))
}

/// Runs `checkpoints` checkpoints under the committer and the reader; one summary line.
pub fn run(store: &str, dir: &Path, checkpoints: u32) -> io::Result<String> {
    let _ = std::fs::remove_dir_all(dir);
    let base = base::open(store, dir, 16 << 20)?;
    let initial: Vec<Change> = (1..=ACCOUNTS)
        .map(|id| (row_key(id), Some(START.to_be_bytes().to_vec())))
        .collect();
    base.checkpoint(&initial, 1)?;
    let live = Live::new(base.as_ref(), 1);
    let stop = AtomicBool::new(false);
    let (commits, sums, bad) = (AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0));
    let result = std::thread::scope(|s| -> io::Result<()> {
        let committer = s.spawn(|| -> io::Result<()> {
            let mut x = 1u64;
            while !stop.load(Ordering::Relaxed) {
                let view = live.view()?;
                x = mix(x);
                let (a, b) = (1 + x % ACCOUNTS, 1 + mix(x) % ACCOUNTS);
                if a == b {
                    continue;
                }
                let ba = balance(&view.get(&row_key(a))?.unwrap_or_default());
                let bb = balance(&view.get(&row_key(b))?.unwrap_or_default());
                let amount = x % (ba + 1);
                drop(view);
                live.commit(vec![
                    (row_key(a), Some((ba - amount).to_be_bytes().to_vec())),
                    (row_key(b), Some((bb + amount).to_be_bytes().to_vec())),
                ])?;
                commits.fetch_add(1, Ordering::Relaxed);
            }
            Ok(())
        });
        let reader = s.spawn(|| -> io::Result<()> {
            while !stop.load(Ordering::Relaxed) {
                let view = live.view()?;
                let mut total = 0;
                for id in 1..=ACCOUNTS {
                    total += balance(&view.get(&row_key(id))?.unwrap_or_default());
                }
                sums.fetch_add(1, Ordering::Relaxed);
                if total != ACCOUNTS * START {
                    bad.fetch_add(1, Ordering::Relaxed);
                }
            }
            Ok(())
        });
        let start = Instant::now();
        let mut outcome = Ok(());
        for _ in 0..checkpoints {
            std::thread::sleep(Duration::from_millis(150));
            if let Err(e) = live.checkpoint() {
                outcome = Err(e);
                break;
            }
            if start.elapsed() > Duration::from_secs(300) {
                break;
            }
        }
        stop.store(true, Ordering::Relaxed);
        committer
            .join()
            .map_err(|_| io::Error::other("committer panicked"))??;
        reader
            .join()
            .map_err(|_| io::Error::other("reader panicked"))??;
        outcome
    });
    result?;
    live.checkpoint()?;
    let snap = base.snapshot()?;
    let mut total = 0;
    for id in 1..=ACCOUNTS {
        total += balance(&snap.get(&row_key(id))?.unwrap_or_default());
    }
    let line = format!(
        "{store}: {checkpoints} checkpoints, {} commits, {} full sums through views, {} wrong sums; base after the last checkpoint sums to {} (want {})",
        commits.load(Ordering::Relaxed),
        sums.load(Ordering::Relaxed),
        bad.load(Ordering::Relaxed),
        total,
        ACCOUNTS * START
    );
    if bad.load(Ordering::Relaxed) > 0 || total != ACCOUNTS * START {
        return Err(io::Error::other(line));
    }
    Ok(line)
}
