//! Where a backup's files go: a directory ([`DirTarget`]) or a POSIX ustar archive on a
//! writer, stdout for `--stream` ([`TarTarget`]).
//!
//! Owns the [`Target`] trait and both targets. A target receives whole files in order
//! (`begin` with the file's exact size, `write`s, `end`), then the manifest (`finish`), which
//! is always last: in a directory it is written to `backup.info.tmp`, synced and renamed after
//! every other file was synced, and the directories synced; in an archive it is the last
//! member. So an interrupted backup never leaves a manifest behind, and restore and check
//! refuse a directory without one.
//!
//! Invariants: `write` never receives more bytes than `begin` announced and `end` checks the
//! count (a tar member's size is in its header); [`DirTarget::abort`] removes only files this
//! target created (and the directory, if it created it).

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::manifest::MANIFEST;

/// Receives a backup's files (module docs).
pub trait Target {
    /// Starts the file at `rel` (a path inside the backup) of exactly `len` bytes.
    fn begin(&mut self, rel: &str, len: u64) -> io::Result<()>;
    fn write(&mut self, bytes: &[u8]) -> io::Result<()>;
    fn end(&mut self) -> io::Result<()>;
    /// Writes the manifest, last.
    fn finish(&mut self, manifest: &str) -> io::Result<()>;
    /// Where the failure happened, for messages.
    fn describe(&self) -> String;
}

/// A backup directory (module docs).
pub struct DirTarget {
    root: PathBuf,
    created_root: bool,
    created: Vec<PathBuf>,
    current: Option<(File, PathBuf, u64, u64)>,
}

fn sync_dir(p: &Path) -> io::Result<()> {
    File::open(p)?.sync_all()
}

impl DirTarget {
    /// Uses `root`, which must not exist or be an empty directory.
    pub fn create(root: &Path) -> Result<DirTarget, String> {
        let created_root = match fs::read_dir(root) {
            Ok(mut entries) => {
                if entries.next().is_some() {
                    return Err(format!(
                        "the target directory {} is not empty",
                        root.display()
                    ));
                }
                false
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                fs::create_dir_all(root)
                    .map_err(|e| format!("cannot create {}: {e}", root.display()))?;
                true
            }
            Err(e) => return Err(format!("cannot read {}: {e}", root.display())),
        };
        for sub in ["checkpoints", "binlog"] {
            fs::create_dir(root.join(sub))
                .map_err(|e| format!("cannot create {}: {e}", root.join(sub).display()))?;
        }
        Ok(DirTarget {
            root: root.to_path_buf(),
            created_root,
            created: Vec::new(),
            current: None,
        })
    }

    /// Removes what this target wrote (after a failure): nothing half-written stays behind.
    pub fn abort(&mut self) {
        self.current = None;
        for p in self.created.drain(..) {
            let _ = fs::remove_file(p);
        }
        let _ = fs::remove_file(self.root.join(format!("{MANIFEST}.tmp")));
        for sub in ["checkpoints", "binlog"] {
            let _ = fs::remove_dir(self.root.join(sub));
        }
        if self.created_root {
            let _ = fs::remove_dir(&self.root);
        }
    }
}

impl Target for DirTarget {
    fn begin(&mut self, rel: &str, len: u64) -> io::Result<()> {
        let path = self.root.join(rel);
        let f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)?;
        self.created.push(path.clone());
        self.current = Some((f, path, len, 0));
        Ok(())
    }

    fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        let (f, _, len, done) = self.current.as_mut().ok_or_else(no_file)?;
        if *done + bytes.len() as u64 > *len {
            return Err(io::Error::other(
                "more bytes than the file was announced with",
            ));
        }
        f.write_all(bytes)?;
        *done += bytes.len() as u64;
        Ok(())
    }

    fn end(&mut self) -> io::Result<()> {
        let (f, _, len, done) = self.current.take().ok_or_else(no_file)?;
        if done != len {
            return Err(io::Error::other(format!("{done} bytes written of {len}")));
        }
        f.sync_data()
    }

    fn finish(&mut self, manifest: &str) -> io::Result<()> {
        for sub in ["checkpoints", "binlog"] {
            sync_dir(&self.root.join(sub))?;
        }
        let tmp = self.root.join(format!("{MANIFEST}.tmp"));
        let mut f = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        f.write_all(manifest.as_bytes())?;
        f.sync_data()?;
        fs::rename(&tmp, self.root.join(MANIFEST))?;
        sync_dir(&self.root)
    }

    fn describe(&self) -> String {
        match &self.current {
            Some((_, p, _, _)) => p.display().to_string(),
            None => self.root.display().to_string(),
        }
    }
}

fn no_file() -> io::Error {
    io::Error::other("no file started")
}

/// A POSIX ustar archive written to `out` (module docs).
pub struct TarTarget<W: Write> {
    out: W,
    name: String,
    /// The current member's size and the bytes of it still to come.
    size: u64,
    left: u64,
    mtime: u64,
}

const BLOCK: usize = 512;

impl<W: Write> TarTarget<W> {
    /// An archive on `out`; starts with the two directories.
    pub fn new(mut out: W) -> io::Result<TarTarget<W>> {
        let mtime = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        for dir in ["checkpoints/", "binlog/"] {
            out.write_all(&tar_header(dir, 0, b'5', mtime))?;
        }
        Ok(TarTarget {
            out,
            name: String::new(),
            size: 0,
            left: 0,
            mtime,
        })
    }

    fn member(&mut self, rel: &str, len: u64) -> io::Result<()> {
        self.out
            .write_all(&tar_header(rel, len, b'0', self.mtime))?;
        self.name = rel.to_owned();
        self.size = len;
        self.left = len;
        Ok(())
    }

    fn pad(&mut self, len: u64) -> io::Result<()> {
        let rem = (len % BLOCK as u64) as usize;
        if rem != 0 {
            self.out.write_all(&[0u8; BLOCK][..BLOCK - rem])?;
        }
        Ok(())
    }
}

impl<W: Write> Target for TarTarget<W> {
    fn begin(&mut self, rel: &str, len: u64) -> io::Result<()> {
        self.member(rel, len)
    }

    fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        if bytes.len() as u64 > self.left {
            return Err(io::Error::other(
                "more bytes than the member was announced with",
            ));
        }
        self.out.write_all(bytes)?;
        self.left -= bytes.len() as u64;
        Ok(())
    }

    fn end(&mut self) -> io::Result<()> {
        if self.left != 0 {
            return Err(io::Error::other(format!("{} bytes missing", self.left)));
        }
        // The member's size is in its header; padding to a block follows its data.
        self.pad(self.size)
    }

    fn finish(&mut self, manifest: &str) -> io::Result<()> {
        self.member(MANIFEST, manifest.len() as u64)?;
        self.write(manifest.as_bytes())?;
        self.end()?;
        self.out.write_all(&[0u8; 2 * BLOCK])?;
        self.out.flush()
    }

    fn describe(&self) -> String {
        format!("the archive on standard output (member {})", self.name)
    }
}

/// A ustar header block for `name` (at most 100 bytes, ours are short) of `size` bytes.
/// Sizes above ustar's 11 octal digits (8 GiB) use the base-256 form GNU tar and bsdtar read.
fn tar_header(name: &str, size: u64, kind: u8, mtime: u64) -> [u8; BLOCK] {
    debug_assert!(name.len() < 100, "backup paths are short");
    let mut h = [0u8; BLOCK];
    let n = name.len().min(99);
    h[..n].copy_from_slice(&name.as_bytes()[..n]);
    let mode: &[u8] = if kind == b'5' {
        b"0000700\0"
    } else {
        b"0000600\0"
    };
    h[100..108].copy_from_slice(mode);
    h[108..116].copy_from_slice(b"0000000\0");
    h[116..124].copy_from_slice(b"0000000\0");
    if size < 0o77777777777 {
        h[124..136].copy_from_slice(format!("{size:011o}\0").as_bytes());
    } else {
        h[124] = 0x80;
        h[128..136].copy_from_slice(&size.to_be_bytes());
    }
    h[136..148].copy_from_slice(format!("{:011o}\0", mtime.min(0o77777777777)).as_bytes());
    h[148..156].copy_from_slice(b"        ");
    h[156] = kind;
    h[257..263].copy_from_slice(b"ustar\0");
    h[263..265].copy_from_slice(b"00");
    let sum: u32 = h.iter().map(|&b| u32::from(b)).sum();
    h[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tar_archive_extracts_with_tar() {
        let dir = tempfile::tempdir().unwrap();
        let archive = dir.path().join("b.tar");
        {
            let mut t = TarTarget::new(File::create(&archive).unwrap()).unwrap();
            t.begin("binlog/binlog-000001.olog", 1000).unwrap();
            t.write(&[7u8; 600]).unwrap();
            t.write(&[8u8; 400]).unwrap();
            t.end().unwrap();
            assert!(t.begin("checkpoints/x", 2).is_ok());
            assert!(t.write(&[1, 2, 3]).is_err(), "more than announced");
            t.write(&[1, 2]).unwrap();
            t.end().unwrap();
            t.finish("manifest text\n").unwrap();
        }
        let out = dir.path().join("x");
        fs::create_dir(&out).unwrap();
        let st = std::process::Command::new("tar")
            .arg("-xf")
            .arg(&archive)
            .arg("-C")
            .arg(&out)
            .status()
            .unwrap();
        assert!(st.success());
        let seg = fs::read(out.join("binlog/binlog-000001.olog")).unwrap();
        assert_eq!((seg.len(), seg[599], seg[600]), (1000, 7, 8));
        assert_eq!(fs::read(out.join("checkpoints/x")).unwrap(), vec![1, 2]);
        assert_eq!(
            fs::read_to_string(out.join(MANIFEST)).unwrap(),
            "manifest text\n"
        );
    }

    #[test]
    fn dir_target_refuses_a_non_empty_dir_and_abort_removes_its_files() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("other"), b"x").unwrap();
        let err = DirTarget::create(dir.path()).err().expect("refused");
        assert!(err.contains("not empty"), "{err}");
        let root = dir.path().join("b");
        let mut t = DirTarget::create(&root).unwrap();
        t.begin("binlog/a", 3).unwrap();
        t.write(b"abc").unwrap();
        t.end().unwrap();
        t.abort();
        assert!(!root.exists());
    }
}
