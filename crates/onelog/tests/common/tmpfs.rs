//! A small tmpfs for disk-full tests: mounted by the test (it runs as root, as
//! `scripts/test.sh` does; a test that cannot mount fails with the reason instead of
//! skipping) and always unmounted.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use super::run_bounded;

/// A tmpfs mounted on a fresh temporary directory; unmounted (lazily if busy) on drop.
pub struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    pub fn mount(size: &str) -> Tmpfs {
        let dir = tempfile::tempdir().expect("temporary directory");
        let out = run_bounded(
            Command::new("mount").args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size},mode=0700"),
                "tmpfs",
                dir.path().to_str().expect("utf-8 path"),
            ]),
            None,
            Duration::from_secs(30),
        );
        assert!(
            out.status.success(),
            "cannot mount a {size} tmpfs on {} (this test needs root or CAP_SYS_ADMIN, as in \
             scripts/test.sh; in a container without it run the suite under `unshare -m` \
             as root): {}",
            dir.path().display(),
            String::from_utf8_lossy(&out.stderr)
        );
        Tmpfs { dir }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let p = self.dir.path().to_path_buf();
        let ok = Command::new("umount")
            .arg(&p)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            let _ = Command::new("umount").arg("-l").arg(&p).status();
        }
    }
}
