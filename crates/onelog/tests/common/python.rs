//! Python venvs for the tests that drive real Python clients (python-mysql-replication,
//! SQLAlchemy, Django): made once per machine under `$HOME/.cache/onelog-tests/<name>` with
//! pinned packages from PyPI, every step bounded in time.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use super::run_bounded;

/// The python of the venv `name` holding `packages`; `imports` is the Python import line that
/// tells a usable venv (else it is made again).
pub fn venv(name: &str, packages: &[&str], imports: &str) -> PathBuf {
    let home = std::env::var_os("HOME").map_or_else(std::env::temp_dir, PathBuf::from);
    let venv = home.join(".cache/onelog-tests").join(name);
    let python = venv.join("bin/python");
    let ready = |p: &Path| {
        p.is_file()
            && run_bounded(
                Command::new(p).args(["-c", imports]),
                None,
                Duration::from_secs(60),
            )
            .status
            .success()
    };
    if ready(&python) {
        return python;
    }
    let _ = std::fs::remove_dir_all(&venv);
    std::fs::create_dir_all(venv.parent().expect("parent")).expect("creating the cache dir");
    let out = run_bounded(
        Command::new("python3").args(["-m", "venv"]).arg(&venv),
        None,
        Duration::from_secs(120),
    );
    assert!(
        out.status.success(),
        "python3 -m venv failed (install python3-venv): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run_bounded(
        Command::new(venv.join("bin/pip"))
            .args(["install", "-q", "--disable-pip-version-check"])
            .args(packages),
        None,
        Duration::from_secs(300),
    );
    assert!(
        out.status.success(),
        "pip install {packages:?} failed (PyPI must be reachable): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(ready(&python), "the venv at {} is unusable", venv.display());
    python
}
