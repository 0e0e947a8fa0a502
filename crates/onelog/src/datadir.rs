//! The data directory: creating it and holding its lock.
//!
//! Owns [`DataDirLock`]: an exclusive advisory lock (`flock`, through std's `File::try_lock`)
//! on `<datadir>/onelog.pid`, taken before the engine opens anything and held for the life of
//! the process, so two servers never write one log. The kernel drops the lock when the
//! process dies, even by `kill -9`, so a stale pid file never blocks a restart. The file's
//! content (our pid) is informational only; the lock is the truth.
//!
//! Permissions: `onelog serve` sets the process umask to 077 before anything is created
//! ([`set_private_umask`]), so the data directory and its subdirectories are 0700 and every
//! file the server writes (log segments, checkpoints, control files, the pid file) is 0600,
//! like MariaDB's datadir. A data directory made by an older version or by hand with looser
//! modes is tightened at start ([`tighten_permissions`]) and each change is logged.
//!
//! Invariants: no log, checkpoint or control file is opened before the lock is held; the lock
//! lives as long as the process (the kernel drops it at exit, whatever the exit).

use std::fmt;
use std::fs::{File, OpenOptions, TryLockError};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Name of the lock file inside the data directory.
pub const LOCK_FILE: &str = "onelog.pid";

/// The held lock; released when dropped (or when the process exits).
#[derive(Debug)]
pub struct DataDirLock {
    _file: File,
    path: PathBuf,
}

/// Why the data directory cannot be used.
#[derive(Debug)]
pub enum DataDirError {
    Create {
        dir: PathBuf,
        source: std::io::Error,
    },
    Lock {
        path: PathBuf,
        source: std::io::Error,
    },
    /// Another process holds the lock.
    InUse {
        path: PathBuf,
        holder: Option<String>,
    },
}

impl fmt::Display for DataDirError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DataDirError::Create { dir, source } => {
                write!(
                    f,
                    "cannot create the data directory {}: {source}",
                    dir.display()
                )
            }
            DataDirError::Lock { path, source } => {
                write!(f, "cannot lock {}: {source}", path.display())
            }
            DataDirError::InUse { path, holder } => {
                write!(
                    f,
                    "the data directory is in use by another onelog server: the lock on {} is held",
                    path.display()
                )?;
                if let Some(pid) = holder {
                    write!(f, " (by process {pid})")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for DataDirError {}

impl DataDirLock {
    /// Creates `dir` if missing and takes its lock, writing our pid into the lock file.
    pub fn acquire(dir: &Path) -> Result<DataDirLock, DataDirError> {
        std::fs::create_dir_all(dir).map_err(|source| DataDirError::Create {
            dir: dir.to_path_buf(),
            source,
        })?;
        let path = dir.join(LOCK_FILE);
        let lock_err = |source| DataDirError::Lock {
            path: path.clone(),
            source,
        };
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(lock_err)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let holder = std::fs::read_to_string(&path)
                    .ok()
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty());
                return Err(DataDirError::InUse { path, holder });
            }
            Err(TryLockError::Error(e)) => return Err(lock_err(e)),
        }
        file.set_len(0).map_err(lock_err)?;
        writeln!(file, "{}", std::process::id()).map_err(lock_err)?;
        Ok(DataDirLock { _file: file, path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Makes everything the process creates from now on private to its OS user (umask 077).
pub fn set_private_umask() {
    // SAFETY: umask only changes the process's file mode creation mask.
    unsafe {
        libc::umask(0o077);
    }
}

/// Removes group and other permission bits from `dir`, its subdirectories and their files
/// (two levels deep: the datadir and its `binlog/` directory). Returns one line per changed
/// path (`path: mode 0755 -> 0700`), for the log. The unix socket is left alone: its access
/// is the authentication's business, as with MariaDB's world-connectable socket.
pub fn tighten_permissions(dir: &Path) -> Vec<String> {
    let mut changed = Vec::new();
    tighten(dir, 2, &mut changed);
    changed
}

fn tighten(path: &Path, depth: u32, changed: &mut Vec<String>) {
    use std::os::unix::fs::{FileTypeExt, PermissionsExt};
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return;
    };
    let ft = meta.file_type();
    if ft.is_symlink() || ft.is_socket() {
        return;
    }
    let mode = meta.permissions().mode() & 0o7777;
    if mode & 0o077 != 0 {
        let new = mode & !0o077;
        if std::fs::set_permissions(path, std::fs::Permissions::from_mode(new)).is_ok() {
            changed.push(format!("{}: mode {mode:04o} -> {new:04o}", path.display()));
        }
    }
    if ft.is_dir() && depth > 0 {
        if let Ok(entries) = std::fs::read_dir(path) {
            for e in entries.flatten() {
                tighten(&e.path(), depth - 1, changed);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_lock_on_one_datadir_is_refused_until_the_first_is_dropped() {
        let dir = std::env::temp_dir().join(format!("onelog-lock-test-{}", std::process::id()));
        let first = DataDirLock::acquire(&dir).unwrap();
        let err = DataDirLock::acquire(&dir).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains(LOCK_FILE) && msg.contains("in use"), "{msg}");
        assert!(msg.contains(&std::process::id().to_string()), "{msg}");
        drop(first);
        let again = DataDirLock::acquire(&dir).unwrap();
        assert_eq!(again.path(), dir.join(LOCK_FILE));
        drop(again);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
