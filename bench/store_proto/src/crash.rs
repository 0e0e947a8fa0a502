//! Crash rounds: a child process loads the rows, then checkpoints batches of random updates in
//! a loop; the parent kills it with SIGKILL at a random moment, reopens the store, times the
//! open and checks that the newest durable checkpoint is there whole: the marker row that every
//! checkpoint rewrites carries the same LSN as the store's LSN, and every row has its index entry.

use crate::base::{self, Change};
use crate::workload::{index_key, k_of, mix, row_key, row_value};
use std::io::{self, BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Row updates per crash-round checkpoint.
const BATCH_ROWS: u64 = 50_000;

/// The child: load (once), then checkpoint forever (bounded: 10 minutes).
pub fn child(store: &str, dir: &Path, rows: u64, cache: usize) -> io::Result<()> {
    let base = base::open(store, dir, cache)?;
    let mut lsn = base.durable_lsn()?;
    if lsn == 0 {
        crate::workload::load(base.as_ref(), rows)?;
        lsn = base.durable_lsn()?;
    }
    println!("LOADED {lsn}");
    let start = Instant::now();
    let mut x = lsn;
    while start.elapsed() < Duration::from_secs(600) {
        lsn += 1;
        let snap = base.snapshot()?;
        let mut batch: Vec<Change> = Vec::new();
        let mut ids: Vec<u64> = (0..BATCH_ROWS)
            .map(|_| {
                x = mix(x);
                2 + x % (rows - 1)
            })
            .collect();
        ids.sort_unstable();
        ids.dedup();
        let mut index = Vec::new();
        // Row 1 is the marker: its k is the LSN of the checkpoint that wrote it.
        let marker_k = lsn as u32;
        for id in std::iter::once(1).chain(ids) {
            let Some(old) = snap.get(&row_key(id))? else {
                continue;
            };
            let k = if id == 1 {
                marker_k
            } else {
                x = mix(x);
                1 + (x % rows) as u32
            };
            index.push((index_key(k_of(&old), id), None));
            index.push((index_key(k, id), Some(Vec::new())));
            batch.push((row_key(id), Some(row_value(k, x))));
        }
        drop(snap);
        index.sort_by(|a, b| a.0.cmp(&b.0));
        // An entry deleted and re-added (same k) keeps the put: dedup keeps the last of equals.
        index.reverse();
        index.dedup_by(|a, b| a.0 == b.0);
        index.reverse();
        batch.extend(index);
        base.checkpoint(&batch, lsn)?;
        println!("CKPT {lsn}");
    }
    Ok(())
}

/// Runs `rounds` kill/reopen rounds; prints one RESULT line.
pub fn rounds(
    store: &str,
    dir: &Path,
    rows: u64,
    cache_mb: usize,
    rounds: u32,
) -> io::Result<String> {
    let exe = std::env::current_exe()?;
    let mut worst_open = 0f64;
    let mut killed_after = Vec::new();
    for round in 0..rounds {
        let mut child = Command::new(&exe)
            .args([
                "crash-child",
                store,
                "--rows",
                &rows.to_string(),
                "--cache-mb",
                &cache_mb.to_string(),
            ])
            .arg("--dir")
            .arg(dir)
            .stdout(Stdio::piped())
            .spawn()?;
        let out = child
            .stdout
            .take()
            .ok_or_else(|| io::Error::other("no stdout"))?;
        let mut lines = BufReader::new(out).lines();
        let mut last_seen = 0u64;
        // Wait for the load, then let it checkpoint for a random while (0.2 to 3 s).
        for line in lines.by_ref() {
            let line = line?;
            if let Some(l) = line.strip_prefix("LOADED ") {
                last_seen = l.parse().unwrap_or(0);
                break;
            }
        }
        let delay = Duration::from_millis(200 + mix(u64::from(round) + 99) % 2800);
        std::thread::sleep(delay);
        child.kill()?;
        let _ = child.wait();
        for line in lines.map_while(Result::ok) {
            if let Some(l) = line.strip_prefix("CKPT ") {
                last_seen = l.parse().unwrap_or(last_seen);
            }
        }
        killed_after.push(last_seen);
        let t = Instant::now();
        let base = base::open(store, dir, cache_mb << 20)?;
        let open = t.elapsed().as_secs_f64();
        worst_open = worst_open.max(open);
        let lsn = base.durable_lsn()?;
        if lsn < last_seen {
            return Err(io::Error::other(format!(
                "round {round}: acknowledged checkpoint {last_seen} lost, store at {lsn}"
            )));
        }
        let snap = base.snapshot()?;
        let marker = snap
            .get(&row_key(1))?
            .ok_or_else(|| io::Error::other("marker row missing"))?;
        let load_lsn = rows.div_ceil(crate::workload::LOAD_BATCH);
        if lsn > load_lsn && u64::from(k_of(&marker)) != lsn {
            return Err(io::Error::other(format!(
                "round {round}: store LSN {lsn}, marker row {}",
                k_of(&marker)
            )));
        }
        // Every row has exactly its index entry: count rows, then look each entry's row up.
        let (mut n_rows, mut n_index) = (0u64, 0u64);
        base::scan_all(snap.as_ref(), vec![1], 2, &mut |k, _| {
            if k[0] == 1 {
                n_rows += 1;
            } else {
                n_index += 1;
            }
        })?;
        if n_rows != rows || n_index != rows {
            return Err(io::Error::other(format!(
                "round {round}: {n_rows} rows, {n_index} index entries, want {rows}"
            )));
        }
        eprintln!("round {round}: killed after {} ms at LSN {last_seen}, reopened at LSN {lsn} in {open:.3} s, consistent", delay.as_millis());
    }
    Ok(format!(
        "rounds={rounds} worst_open_s={worst_open:.3} last_lsns={killed_after:?}"
    ))
}
