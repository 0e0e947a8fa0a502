//! The measured workload: sysbench-shaped rows (id, k, c CHAR(120), pad CHAR(60)) plus the
//! secondary index on k, loaded, read, and updated through the delta + checkpoint design.

use crate::base::{self, Base, Change, Snap};
use imbl::OrdMap;
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Rows per load checkpoint (the delta's size bound during a bulk load).
pub(crate) const LOAD_BATCH: u64 = 100_000;
/// Row updates per checkpoint in the update phase, and how many checkpoints.
const UPDATES_PER_CHECKPOINT: usize = 50_000;
const CHECKPOINTS: usize = 5;
/// Rows a commit updates (sysbench oltp_write_only updates 2 rows, deletes and inserts 1).
const ROWS_PER_COMMIT: usize = 10;

/// One run's measurements, `key=value` pairs in the order measured.
#[derive(Default)]
pub struct Report(Vec<(&'static str, String)>);

impl Report {
    fn put(&mut self, key: &'static str, value: impl ToString) {
        self.0.push((key, value.to_string()));
    }

    pub fn line(&self) -> String {
        self.0
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The table's columns: key and heading.
    pub fn columns() -> Vec<(&'static str, &'static str)> {
        vec![
            ("load_s", "load s"),
            ("disk_mb", "disk MB"),
            ("b_row", "disk B/row"),
            ("rss_load", "RSS after load MB"),
            ("open_s", "reopen s"),
            ("get_cold", "get µs (cold)"),
            ("full_scan", "full scan k rows/s (cold)"),
            ("get_warm", "get µs (warm)"),
            ("scan", "scan 100 rows µs"),
            ("rss_read", "RSS after reads MB"),
            ("ckpt_s", "checkpoint s (50k row upd)"),
            ("commits_idle", "commits/s, no ckpt"),
            ("commits_ckpt", "commits/s, during ckpt"),
            ("p99_idle", "commit p99 µs, no ckpt"),
            ("p99_ckpt", "commit p99 µs, during ckpt"),
            ("max_ckpt", "commit max ms, during ckpt"),
            ("disk_open", "disk MB after ckpts, open"),
            ("disk_end", "disk MB after ckpts, compacted"),
            ("rss_peak", "peak RSS MB"),
        ]
    }
}

pub(crate) fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

pub(crate) fn row_key(id: u64) -> Vec<u8> {
    let mut k = vec![1u8];
    k.extend_from_slice(&id.to_be_bytes());
    k
}

pub(crate) fn index_key(k: u32, id: u64) -> Vec<u8> {
    let mut out = vec![2u8];
    out.extend_from_slice(&k.to_be_bytes());
    out.extend_from_slice(&id.to_be_bytes());
    out
}

/// A row's value: k, then c and pad as sysbench fills them (groups of 11 random digits).
pub(crate) fn row_value(k: u32, seed: u64) -> Vec<u8> {
    let mut v = Vec::with_capacity(4 + 119 + 59);
    v.extend_from_slice(&k.to_be_bytes());
    let mut x = seed;
    for groups in [10, 5] {
        for g in 0..groups {
            if g > 0 {
                v.push(b'-');
            }
            for _ in 0..11 {
                x = mix(x);
                v.push(b'0' + (x % 10) as u8);
            }
        }
    }
    v
}

pub(crate) fn k_of(value: &[u8]) -> u32 {
    u32::from_be_bytes(value[..4].try_into().unwrap_or([0; 4]))
}

fn rss_mb(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(0)
        / 1024
}

fn drop_os_cache() {
    let _ = std::process::Command::new("sync").status();
    let _ = std::fs::write("/proc/sys/vm/drop_caches", "1");
}

type Delta = OrdMap<Vec<u8>, Option<Arc<Vec<u8>>>>;

/// The store as the engine would run it: a live delta, a frozen one being checkpointed, the base.
pub(crate) struct Live<'a> {
    base: &'a dyn Base,
    deltas: Mutex<(Delta, Option<Delta>)>,
    lsn: AtomicU64,
}

/// A consistent read view: the deltas as they were, and a base snapshot taken under the lock.
pub(crate) struct View<'a> {
    active: Delta,
    frozen: Option<Delta>,
    snap: Box<dyn Snap + 'a>,
}

impl View<'_> {
    pub(crate) fn get(&self, key: &[u8]) -> io::Result<Option<Vec<u8>>> {
        for d in std::iter::once(&self.active).chain(self.frozen.as_ref()) {
            if let Some(v) = d.get(key) {
                return Ok(v.as_ref().map(|v| v.to_vec()));
            }
        }
        self.snap.get(key)
    }
}

impl<'a> Live<'a> {
    pub(crate) fn new(base: &'a dyn Base, lsn: u64) -> Self {
        Live {
            base,
            deltas: Mutex::default(),
            lsn: AtomicU64::new(lsn),
        }
    }

    pub(crate) fn view(&self) -> io::Result<View<'a>> {
        let d = self
            .deltas
            .lock()
            .map_err(|_| io::Error::other("poisoned"))?;
        Ok(View {
            active: d.0.clone(),
            frozen: d.1.clone(),
            snap: self.base.snapshot()?,
        })
    }

    pub(crate) fn commit(&self, changes: Vec<Change>) -> io::Result<()> {
        let mut d = self
            .deltas
            .lock()
            .map_err(|_| io::Error::other("poisoned"))?;
        for (k, v) in changes {
            d.0.insert(k, v.map(Arc::new));
        }
        self.lsn.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    fn active_len(&self) -> usize {
        self.deltas.lock().map_or(0, |d| d.0.len())
    }

    /// Freezes the live delta, writes it into the base durably, then drops it.
    pub(crate) fn checkpoint(&self) -> io::Result<()> {
        let (frozen, lsn) = {
            let mut d = self
                .deltas
                .lock()
                .map_err(|_| io::Error::other("poisoned"))?;
            let frozen = std::mem::take(&mut d.0);
            d.1 = Some(frozen.clone());
            (frozen, self.lsn.load(Ordering::Relaxed))
        };
        let batch: Vec<Change> = frozen
            .iter()
            .map(|(k, v)| (k.clone(), v.as_ref().map(|v| v.to_vec())))
            .collect();
        self.base.checkpoint(&batch, lsn)?;
        self.deltas
            .lock()
            .map_err(|_| io::Error::other("poisoned"))?
            .1 = None;
        Ok(())
    }
}

pub fn run(store: &str, dir: &Path, rows: u64, cache: usize) -> io::Result<Report> {
    let mut r = Report::default();
    let base = base::open(store, dir, cache)?;
    let t = Instant::now();
    load(base.as_ref(), rows)?;
    base.settle();
    r.put("load_s", format!("{:.1}", t.elapsed().as_secs_f64()));
    r.put("rss_load", rss_mb("VmRSS"));
    drop(base);
    // Sizes are taken with the store closed, so files a store deletes lazily are gone.
    let disk = crate::dir_bytes(dir);
    r.put("disk_mb", disk >> 20);
    r.put("b_row", disk / rows);
    drop_os_cache();
    let t = Instant::now();
    let base = base::open(store, dir, cache)?;
    if base.durable_lsn()? != rows.div_ceil(LOAD_BATCH) {
        return Err(io::Error::other("reopened store lost its LSN"));
    }
    r.put("open_s", format!("{:.2}", t.elapsed().as_secs_f64()));
    let live = Live::new(base.as_ref(), rows);
    reads(&live, rows, &mut r)?;
    r.put("rss_read", rss_mb("VmRSS"));
    updates(&live, rows, &mut r)?;
    base.settle();
    r.put("disk_open", base.disk_bytes() >> 20);
    drop(live);
    let mut base = base;
    base.compact()?;
    drop(base);
    r.put("disk_end", crate::dir_bytes(dir) >> 20);
    r.put("rss_peak", rss_mb("VmHWM"));
    Ok(r)
}

pub(crate) fn load(base: &dyn Base, rows: u64) -> io::Result<()> {
    let mut lsn = 0;
    let mut first = 1;
    while first <= rows {
        let last = (first + LOAD_BATCH - 1).min(rows);
        let mut batch: Vec<Change> = Vec::with_capacity(2 * LOAD_BATCH as usize);
        let mut index = Vec::with_capacity(LOAD_BATCH as usize);
        for id in first..=last {
            let k = 1 + (mix(id) % rows) as u32;
            batch.push((row_key(id), Some(row_value(k, id))));
            index.push((index_key(k, id), Some(Vec::new())));
        }
        index.sort_unstable();
        batch.extend(index);
        lsn += 1;
        base.checkpoint(&batch, lsn)?;
        first = last + 1;
    }
    Ok(())
}

fn micros(d: Duration, n: u64) -> String {
    format!("{:.1}", d.as_secs_f64() * 1e6 / n as f64)
}

/// Point reads (a new view per 10, as a short transaction would) and range scans of 100 rows.
fn reads(live: &Live, rows: u64, r: &mut Report) -> io::Result<()> {
    let mut x = 42u64;
    let mut found = 0u64;
    let mut get_n = |n: u64, x: &mut u64| -> io::Result<Duration> {
        let t = Instant::now();
        for i in 0..n {
            let view = live.view()?;
            for _ in 0..10 {
                *x = mix(*x);
                found += u64::from(view.get(&row_key(1 + *x % rows))?.is_some());
            }
            let _ = i;
        }
        Ok(t.elapsed())
    };
    let cold = get_n(2_000, &mut x)?;
    r.put("get_cold", micros(cold, 20_000));
    // One full scan (cold: the rate a backup or a table scan reads at), which also warms the
    // cache before the warm point reads.
    let t = Instant::now();
    let view = live.view()?;
    let all = base::scan_all(view.snap.as_ref(), row_key(0), 1, &mut |_, v| {
        std::hint::black_box(v);
    })?;
    drop(view);
    r.put(
        "full_scan",
        format!("{:.0}", all as f64 / t.elapsed().as_secs_f64() / 1000.0),
    );
    let warm = get_n(20_000, &mut x)?;
    r.put("get_warm", micros(warm, 200_000));
    if found != 220_000 {
        return Err(io::Error::other(format!(
            "only {found} of 220000 rows found"
        )));
    }
    let t = Instant::now();
    let mut seen = 0;
    for _ in 0..5_000 {
        x = mix(x);
        let view = live.view()?;
        seen += view.snap.scan(&row_key(1 + x % rows), 100, &mut |_, v| {
            std::hint::black_box(v);
        })?;
    }
    r.put("scan", micros(t.elapsed(), 5_000));
    if seen < 5_000 * 90 {
        return Err(io::Error::other("scans saw too few rows"));
    }
    Ok(())
}

/// Commit latencies in µs: without a checkpoint running, and while one runs.
#[derive(Default)]
struct Latencies {
    idle: Vec<u32>,
    ckpt: Vec<u32>,
    idle_time: Duration,
    ckpt_time: Duration,
}

fn pct(v: &mut [u32], p: f64) -> u32 {
    if v.is_empty() {
        return 0;
    }
    v.sort_unstable();
    v[((v.len() - 1) as f64 * p) as usize]
}

/// One committer thread updates rows (half of them change k, moving the index entry) through
/// the delta while this thread checkpoints every 50k row updates.
fn updates(live: &Live, rows: u64, r: &mut Report) -> io::Result<()> {
    let stop = AtomicBool::new(false);
    let in_ckpt = AtomicBool::new(false);
    let updated = AtomicU64::new(0);
    let mut ckpt_secs = Vec::new();
    let lat = std::thread::scope(|s| -> io::Result<Latencies> {
        let committer = s.spawn(|| -> io::Result<Latencies> {
            let mut lat = Latencies::default();
            let mut x = 7u64;
            let mut since = Instant::now();
            let mut phase = false;
            while !stop.load(Ordering::Relaxed) && lat.idle.len() + lat.ckpt.len() < 5_000_000 {
                let t = Instant::now();
                let view = live.view()?;
                let mut changes = Vec::with_capacity(3 * ROWS_PER_COMMIT);
                for _ in 0..ROWS_PER_COMMIT {
                    x = mix(x);
                    let id = 1 + x % rows;
                    let Some(old) = view.get(&row_key(id))? else {
                        continue;
                    };
                    let old_k = k_of(&old);
                    let k = if x & 1 == 0 {
                        old_k
                    } else {
                        1 + (mix(x) % rows) as u32
                    };
                    if k != old_k {
                        changes.push((index_key(old_k, id), None));
                        changes.push((index_key(k, id), Some(Vec::new())));
                    }
                    changes.push((row_key(id), Some(row_value(k, x))));
                }
                drop(view);
                live.commit(changes)?;
                updated.fetch_add(ROWS_PER_COMMIT as u64, Ordering::Relaxed);
                let us = t.elapsed().as_micros().min(u128::from(u32::MAX)) as u32;
                let now_ckpt = in_ckpt.load(Ordering::Relaxed);
                if now_ckpt != phase {
                    let spent = since.elapsed();
                    if phase {
                        lat.ckpt_time += spent
                    } else {
                        lat.idle_time += spent
                    }
                    since = Instant::now();
                    phase = now_ckpt;
                }
                if now_ckpt {
                    lat.ckpt.push(us)
                } else {
                    lat.idle.push(us)
                }
            }
            let spent = since.elapsed();
            if phase {
                lat.ckpt_time += spent
            } else {
                lat.idle_time += spent
            }
            Ok(lat)
        });
        let result = (|| -> io::Result<()> {
            for _ in 0..CHECKPOINTS {
                let target = updated.load(Ordering::Relaxed) + UPDATES_PER_CHECKPOINT as u64;
                let wait = Instant::now();
                while updated.load(Ordering::Relaxed) < target
                    && wait.elapsed() < Duration::from_secs(300)
                {
                    if committer.is_finished() {
                        return Err(io::Error::other("committer stopped"));
                    }
                    std::thread::sleep(Duration::from_millis(5));
                }
                let t = Instant::now();
                in_ckpt.store(true, Ordering::Relaxed);
                live.checkpoint()?;
                in_ckpt.store(false, Ordering::Relaxed);
                ckpt_secs.push(t.elapsed().as_secs_f64());
            }
            Ok(())
        })();
        stop.store(true, Ordering::Relaxed);
        let lat = committer
            .join()
            .map_err(|_| io::Error::other("committer panicked"))??;
        result.map(|()| lat)
    })?;
    let mut lat = lat;
    let median = {
        let mut c = ckpt_secs.clone();
        c.sort_by(f64::total_cmp);
        c[c.len() / 2]
    };
    r.put("ckpt_s", format!("{median:.2}"));
    let rate = |n: usize, d: Duration| format!("{:.0}", n as f64 / d.as_secs_f64().max(1e-9));
    r.put("commits_idle", rate(lat.idle.len(), lat.idle_time));
    r.put("commits_ckpt", rate(lat.ckpt.len(), lat.ckpt_time));
    r.put("p99_idle", pct(&mut lat.idle, 0.99));
    r.put("p99_ckpt", pct(&mut lat.ckpt, 0.99));
    r.put(
        "max_ckpt",
        format!("{:.1}", f64::from(pct(&mut lat.ckpt, 1.0)) / 1000.0),
    );
    let _ = live.active_len();
    Ok(())
}
