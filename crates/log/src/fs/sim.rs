//! `SimFs`: an in-memory disk that models durability exactly and injects faults.
//!
//! Model:
//! - each file is an inode with two images: `data` (what reads see: every write so far) and
//!   `durable` (what survives power loss). Writes and `set_len` are appended to a global log of
//!   unsynced operations; `sync_data` of a file replays that file's operations (those issued
//!   before the call began) onto its durable image;
//! - the namespace (path -> inode) also has two versions: the live one and the durable one;
//!   `sync_dir(d)` copies the live entries whose parent is `d` into the durable namespace.
//!   Directories themselves are always durable (a simplification: the log never relies on
//!   directory creation surviving without a later `sync_dir` of its own entries);
//! - `crash_now` (or an armed crash point firing) freezes the disk: every later operation on
//!   this `SimFs` and its open files fails with an io error, so a log using it fails fast.
//!   `reboot` returns a new `SimFs` holding the durable namespace and durable images, plus,
//!   when `tear` is set and the seeded rng says so, a prefix (cut at a random byte) of the
//!   unsynced operations replayed in issue order — the last write kept being torn;
//! - faults: `fail_fsyncs` makes `sync_data` return EIO (nothing becomes durable),
//!   `set_space_limit` makes growing writes fail with ENOSPC, `set_fsync_latency` sleeps in
//!   `sync_data` (outside the lock, so other operations proceed meanwhile).
//!
//! Invariant: a byte is in `durable` only if a `sync_data` of its file that began after the
//! byte was written returned Ok (or it was replayed by a tearing reboot).

use std::collections::{BTreeMap, HashMap};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use super::{File, FileSystem};

/// Counters of what a `SimFs` was asked to do.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SimCounters {
    /// `sync_data` calls (successful or not).
    pub fsyncs: u64,
    /// `sync_dir` calls.
    pub dir_syncs: u64,
    /// Bytes passed to `write_all_at`.
    pub bytes_written: u64,
    /// `write_all_at` calls.
    pub writes: u64,
}

#[derive(Default)]
struct Inode {
    data: Vec<u8>,
    durable: Vec<u8>,
}

enum OpKind {
    Write { offset: u64, bytes: Vec<u8> },
    SetLen(u64),
}

struct Op {
    seq: u64,
    ino: u64,
    kind: OpKind,
}

#[derive(Default)]
struct State {
    inodes: HashMap<u64, Inode>,
    names: BTreeMap<PathBuf, u64>,
    durable_names: BTreeMap<PathBuf, u64>,
    unsynced: Vec<Op>,
    next_ino: u64,
    next_seq: u64,
    crash_points: HashMap<&'static str, u64>,
    space_limit: Option<u64>,
    fsyncs_by_path: HashMap<PathBuf, u64>,
}

struct Shared {
    state: Mutex<State>,
    crashed: AtomicBool,
    fail_fsyncs: AtomicBool,
    latency_ns: AtomicU64,
    fsyncs: AtomicU64,
    dir_syncs: AtomicU64,
    bytes_written: AtomicU64,
    writes: AtomicU64,
}

/// The simulated disk. Cheap to share (`Arc`).
pub struct SimFs {
    shared: Arc<Shared>,
}

struct SimFile {
    shared: Arc<Shared>,
    ino: u64,
    path: PathBuf,
}

fn crashed_err() -> io::Error {
    io::Error::other("simulated power loss: the disk is gone until reboot")
}

fn enospc() -> io::Error {
    io::Error::from_raw_os_error(28)
}

/// SplitMix64: the seeded rng of reboots.
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

fn apply_op(img: &mut Vec<u8>, kind: &OpKind, keep: usize) {
    match kind {
        OpKind::Write { offset, bytes } => {
            let bytes = &bytes[..keep.min(bytes.len())];
            let off = *offset as usize;
            let end = off + bytes.len();
            if img.len() < end {
                img.resize(end, 0);
            }
            img[off..end].copy_from_slice(bytes);
        }
        OpKind::SetLen(len) => img.resize(*len as usize, 0),
    }
}

impl Shared {
    fn lock(&self) -> io::Result<MutexGuard<'_, State>> {
        if self.crashed.load(Ordering::SeqCst) {
            return Err(crashed_err());
        }
        // A poisoned lock only means a test thread panicked; the state is still consistent
        // enough to report on.
        Ok(self.state.lock().unwrap_or_else(|p| p.into_inner()))
    }

    fn used_bytes(st: &State) -> u64 {
        let mut seen = std::collections::HashSet::new();
        st.names
            .values()
            .filter(|ino| seen.insert(**ino))
            .map(|ino| st.inodes.get(ino).map_or(0, |i| i.data.len() as u64))
            .sum()
    }

    fn check_space(st: &State, ino: u64, new_len: u64) -> io::Result<()> {
        let Some(limit) = st.space_limit else {
            return Ok(());
        };
        let cur = st.inodes.get(&ino).map_or(0, |i| i.data.len() as u64);
        if new_len <= cur {
            return Ok(());
        }
        if Self::used_bytes(st) + (new_len - cur) > limit {
            return Err(enospc());
        }
        Ok(())
    }
}

impl SimFs {
    pub fn new() -> Arc<SimFs> {
        Arc::new(SimFs {
            shared: Arc::new(Shared {
                state: Mutex::new(State {
                    next_ino: 1,
                    ..State::default()
                }),
                crashed: AtomicBool::new(false),
                fail_fsyncs: AtomicBool::new(false),
                latency_ns: AtomicU64::new(0),
                fsyncs: AtomicU64::new(0),
                dir_syncs: AtomicU64::new(0),
                bytes_written: AtomicU64::new(0),
                writes: AtomicU64::new(0),
            }),
        })
    }

    /// Every `sync_data` sleeps this long (benchmarks, forcing commit groups in tests).
    pub fn set_fsync_latency(&self, d: Duration) {
        self.shared
            .latency_ns
            .store(d.as_nanos().min(u64::MAX as u128) as u64, Ordering::SeqCst);
    }

    /// While on, `sync_data` fails with EIO and makes nothing durable.
    pub fn fail_fsyncs(&self, on: bool) {
        self.shared.fail_fsyncs.store(on, Ordering::SeqCst);
    }

    /// Total size of all files; a write or `set_len` growing past it fails with ENOSPC.
    pub fn set_space_limit(&self, bytes: Option<u64>) {
        self.shared
            .state
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .space_limit = bytes;
    }

    /// Crash at the `nth` (1-based) hit of the crash point `name`.
    pub fn arm_crash_point(&self, name: &'static str, nth: u64) {
        self.shared
            .state
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .crash_points
            .insert(name, nth.max(1));
    }

    /// Power loss now: every later operation fails until `reboot`.
    pub fn crash_now(&self) {
        self.shared.crashed.store(true, Ordering::SeqCst);
    }

    pub fn crashed(&self) -> bool {
        self.shared.crashed.load(Ordering::SeqCst)
    }

    /// The disk after power loss: durable namespace and data, plus (when `tear` and the rng
    /// says so) a random prefix of the unsynced operations. Works whether or not the disk
    /// crashed first (a reboot implies the power loss). Faults and counters start fresh.
    pub fn reboot(&self, rng_seed: u64, tear: bool) -> Arc<SimFs> {
        self.crash_now();
        let st = self.shared.state.lock().unwrap_or_else(|p| p.into_inner());
        let mut rng = Rng(rng_seed);
        let mut images: HashMap<u64, Vec<u8>> = HashMap::new();
        for ino in st.durable_names.values() {
            if let Some(i) = st.inodes.get(ino) {
                images.entry(*ino).or_insert_with(|| i.durable.clone());
            }
        }
        if tear && rng.next() & 1 == 0 {
            let total: u64 = st
                .unsynced
                .iter()
                .map(|o| match &o.kind {
                    OpKind::Write { bytes, .. } => bytes.len() as u64,
                    OpKind::SetLen(_) => 0,
                })
                .sum();
            let mut budget = rng.next() % (total + 1);
            for op in &st.unsynced {
                let len = match &op.kind {
                    OpKind::Write { bytes, .. } => bytes.len() as u64,
                    OpKind::SetLen(_) => 0,
                };
                let keep = len.min(budget);
                if len > 0 && keep == 0 {
                    break;
                }
                if let Some(img) = images.get_mut(&op.ino) {
                    apply_op(img, &op.kind, keep as usize);
                }
                budget -= keep;
                if keep < len {
                    break;
                }
            }
        }
        let fresh = SimFs::new();
        {
            let mut ns = fresh.shared.state.lock().unwrap_or_else(|p| p.into_inner());
            let mut max_ino = 0;
            for (path, ino) in &st.durable_names {
                let img = images.get(ino).cloned().unwrap_or_default();
                ns.inodes.insert(
                    *ino,
                    Inode {
                        data: img.clone(),
                        durable: img,
                    },
                );
                ns.names.insert(path.clone(), *ino);
                ns.durable_names.insert(path.clone(), *ino);
                max_ino = max_ino.max(*ino);
            }
            ns.next_ino = max_ino + 1;
        }
        fresh
    }

    pub fn counters(&self) -> SimCounters {
        let s = &self.shared;
        SimCounters {
            fsyncs: s.fsyncs.load(Ordering::SeqCst),
            dir_syncs: s.dir_syncs.load(Ordering::SeqCst),
            bytes_written: s.bytes_written.load(Ordering::SeqCst),
            writes: s.writes.load(Ordering::SeqCst),
        }
    }

    /// `sync_data` calls on files opened under `path` (successful or not).
    pub fn fsyncs_of(&self, path: &Path) -> u64 {
        let st = self.shared.state.lock().unwrap_or_else(|p| p.into_inner());
        st.fsyncs_by_path.get(path).copied().unwrap_or(0)
    }

    /// The current (not necessarily durable) contents of a file, for tests.
    pub fn read_file(&self, path: &Path) -> Option<Vec<u8>> {
        let st = self.shared.state.lock().unwrap_or_else(|p| p.into_inner());
        st.names
            .get(path)
            .and_then(|ino| st.inodes.get(ino))
            .map(|i| i.data.clone())
    }

    /// Overwrites bytes of a file and makes them durable at once (tests: simulate bit rot).
    pub fn corrupt(&self, path: &Path, offset: u64, bytes: &[u8]) -> bool {
        let mut st = self.shared.state.lock().unwrap_or_else(|p| p.into_inner());
        let Some(ino) = st.names.get(path).copied() else {
            return false;
        };
        let Some(i) = st.inodes.get_mut(&ino) else {
            return false;
        };
        let kind = OpKind::Write {
            offset,
            bytes: bytes.to_vec(),
        };
        apply_op(&mut i.data, &kind, bytes.len());
        apply_op(&mut i.durable, &kind, bytes.len());
        true
    }
}

fn parent_of(p: &Path) -> PathBuf {
    p.parent().map(Path::to_path_buf).unwrap_or_default()
}

impl FileSystem for SimFs {
    fn create_dir_all(&self, _path: &Path) -> io::Result<()> {
        self.shared.lock().map(|_| ())
    }

    fn open(&self, path: &Path, create: bool) -> io::Result<Arc<dyn File>> {
        let mut st = self.shared.lock()?;
        let ino = match st.names.get(path) {
            Some(ino) => *ino,
            None if create => {
                let ino = st.next_ino;
                st.next_ino += 1;
                st.inodes.insert(ino, Inode::default());
                st.names.insert(path.to_path_buf(), ino);
                ino
            }
            None => {
                return Err(io::Error::new(
                    io::ErrorKind::NotFound,
                    format!("{}: no such file", path.display()),
                ))
            }
        };
        Ok(Arc::new(SimFile {
            shared: self.shared.clone(),
            ino,
            path: path.to_path_buf(),
        }))
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        let mut st = self.shared.lock()?;
        match st.names.remove(path) {
            Some(_) => Ok(()),
            None => Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("{}: no such file", path.display()),
            )),
        }
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let mut st = self.shared.lock()?;
        let ino = st.names.remove(from).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                format!("{}: no such file", from.display()),
            )
        })?;
        st.names.insert(to.to_path_buf(), ino);
        Ok(())
    }

    fn list_dir(&self, path: &Path) -> io::Result<Vec<String>> {
        let st = self.shared.lock()?;
        Ok(st
            .names
            .keys()
            .filter(|p| p.parent() == Some(path))
            .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .collect())
    }

    fn exists(&self, path: &Path) -> bool {
        self.shared
            .lock()
            .is_ok_and(|st| st.names.contains_key(path))
    }

    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        let mut st = self.shared.lock()?;
        self.shared.dir_syncs.fetch_add(1, Ordering::SeqCst);
        st.durable_names.retain(|p, _| parent_of(p) != path);
        let live: Vec<(PathBuf, u64)> = st
            .names
            .iter()
            .filter(|(p, _)| parent_of(p) == path)
            .map(|(p, i)| (p.clone(), *i))
            .collect();
        st.durable_names.extend(live);
        Ok(())
    }

    fn crash_point(&self, name: &'static str) -> io::Result<()> {
        let mut st = self.shared.lock()?;
        if let Some(n) = st.crash_points.get_mut(name) {
            *n -= 1;
            if *n == 0 {
                st.crash_points.remove(name);
                self.shared.crashed.store(true, Ordering::SeqCst);
                return Err(io::Error::other(format!(
                    "simulated power loss at crash point {name}"
                )));
            }
        }
        Ok(())
    }
}

impl File for SimFile {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let st = self.shared.lock()?;
        let data = st
            .inodes
            .get(&self.ino)
            .map(|i| i.data.as_slice())
            .unwrap_or_default();
        let off = (offset as usize).min(data.len());
        let n = buf.len().min(data.len() - off);
        buf[..n].copy_from_slice(&data[off..off + n]);
        Ok(n)
    }

    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        let mut st = self.shared.lock()?;
        Shared::check_space(&st, self.ino, offset + buf.len() as u64)?;
        let kind = OpKind::Write {
            offset,
            bytes: buf.to_vec(),
        };
        if let Some(i) = st.inodes.get_mut(&self.ino) {
            apply_op(&mut i.data, &kind, buf.len());
        }
        let seq = st.next_seq;
        st.next_seq += 1;
        st.unsynced.push(Op {
            seq,
            ino: self.ino,
            kind,
        });
        self.shared.writes.fetch_add(1, Ordering::SeqCst);
        self.shared
            .bytes_written
            .fetch_add(buf.len() as u64, Ordering::SeqCst);
        Ok(())
    }

    fn sync_data(&self) -> io::Result<()> {
        let upto = {
            let mut st = self.shared.lock()?;
            self.shared.fsyncs.fetch_add(1, Ordering::SeqCst);
            *st.fsyncs_by_path.entry(self.path.clone()).or_default() += 1;
            if self.shared.fail_fsyncs.load(Ordering::SeqCst) {
                return Err(io::Error::from_raw_os_error(5));
            }
            st.next_seq
        };
        let ns = self.shared.latency_ns.load(Ordering::SeqCst);
        if ns > 0 {
            std::thread::sleep(Duration::from_nanos(ns));
        }
        let mut st = self.shared.lock()?;
        let st = &mut *st;
        let ino = self.ino;
        let Some(inode) = st.inodes.get_mut(&ino) else {
            return Ok(());
        };
        st.unsynced.retain(|op| {
            if op.ino == ino && op.seq < upto {
                apply_op(&mut inode.durable, &op.kind, usize::MAX);
                false
            } else {
                true
            }
        });
        debug_assert!(
            st.unsynced.iter().any(|op| op.ino == ino) || inode.durable == inode.data,
            "a synced file with nothing pending must be durable as written"
        );
        Ok(())
    }

    fn len(&self) -> io::Result<u64> {
        let st = self.shared.lock()?;
        Ok(st.inodes.get(&self.ino).map_or(0, |i| i.data.len() as u64))
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        let mut st = self.shared.lock()?;
        Shared::check_space(&st, self.ino, len)?;
        let kind = OpKind::SetLen(len);
        if let Some(i) = st.inodes.get_mut(&self.ino) {
            apply_op(&mut i.data, &kind, 0);
        }
        let seq = st.next_seq;
        st.next_seq += 1;
        st.unsynced.push(Op {
            seq,
            ino: self.ino,
            kind,
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsynced_writes_and_unsynced_renames_vanish_at_reboot() {
        let fs = SimFs::new();
        let d = Path::new("/d");
        let f = fs.open(&d.join("a"), true).unwrap();
        f.write_all_at(b"hello", 0).unwrap();
        f.sync_data().unwrap();
        fs.sync_dir(d).unwrap();
        f.write_all_at(b" world", 5).unwrap();
        fs.rename(&d.join("a"), &d.join("b")).unwrap();
        let fs2 = fs.reboot(1, false);
        assert!(fs2.exists(&d.join("a")));
        assert!(!fs2.exists(&d.join("b")));
        assert_eq!(fs2.read_file(&d.join("a")).unwrap(), b"hello");
        assert!(
            fs.open(&d.join("b"), false).is_err(),
            "crashed disk refuses operations"
        );
    }

    #[test]
    fn tearing_reboot_keeps_a_prefix_of_unsynced_writes() {
        let mut saw_partial = false;
        for seed in 0..64 {
            let fs = SimFs::new();
            let p = Path::new("/d/f");
            let f = fs.open(p, true).unwrap();
            f.write_all_at(&[1; 8], 0).unwrap();
            f.sync_data().unwrap();
            fs.sync_dir(Path::new("/d")).unwrap();
            f.write_all_at(&[2; 8], 8).unwrap();
            let img = fs.reboot(seed, true).read_file(p).unwrap();
            assert_eq!(&img[..8], &[1; 8]);
            assert!(img[8..].iter().all(|b| *b == 2));
            saw_partial |= img.len() > 8 && img.len() < 16;
        }
        assert!(saw_partial);
    }

    #[test]
    fn space_limit_gives_enospc_and_crash_point_fires_at_nth_hit() {
        let fs = SimFs::new();
        fs.set_space_limit(Some(10));
        let f = fs.open(Path::new("/f"), true).unwrap();
        f.write_all_at(&[0; 10], 0).unwrap();
        let e = f.write_all_at(&[0; 1], 10).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::StorageFull);
        f.write_all_at(&[1; 5], 0).unwrap();
        fs.arm_crash_point("x", 2);
        fs.crash_point("x").unwrap();
        assert!(fs.crash_point("x").is_err());
        assert!(fs.crashed());
        assert!(f.read_at(&mut [0; 1], 0).is_err());
    }
}
