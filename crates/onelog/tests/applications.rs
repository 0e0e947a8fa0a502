//! Real applications run against onelog and against MariaDB 10.11, with the same results
//! (issue 15 part 6):
//! - `tests/python/sqlalchemy_app.py`: a SQLAlchemy 2.0 ORM application (declarative models
//!   with one-to-many and many-to-many relationships, foreign keys (`ondelete="RESTRICT"`
//!   until the "cascade" work lands on this branch: a TODO in the script), bulk
//!   inserts with RETURNING, updates, deletes, joined and selectin eager loading, filters,
//!   order/limit/offset, aggregates with group_by, subqueries, EXISTS, savepoints, and Core
//!   reflection (`MetaData.reflect`, the inspector's indexes and constraints) of its tables);
//! - `tests/python/django_app.py`: a Django 5 project (an app with FK, M2M, unique_together,
//!   an index, auto_now fields, a JSONField; `makemigrations` and `migrate` with the admin, auth,
//!   contenttypes and sessions apps; the ORM's common queries, update(), delete() with
//!   cascades, get_or_create, bulk_create, atomic blocks with savepoints; the admin changelist
//!   with list_filter and search_fields, and admin pages through the test client).
//!
//! Each script prints one JSON line per step (a step's name and every result it read); the
//! test runs it against a fresh database on each server and compares the lines exactly. The
//! packages come from PyPI (pinned versions, one venv per machine under
//! `$HOME/.cache/onelog-tests`, made once); Django reaches the server through PyMySQL
//! (`pymysql.install_as_MySQLdb()`). Every step is bounded in time.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::mariadb::MariaDb;
use common::{run_bounded, sql, Onelog};

/// The packages of the venv, every one pinned (the direct ones and what they pull in).
const PY_PACKAGES: &[&str] = &[
    "SQLAlchemy==2.0.58",
    "Django==5.2.19",
    "PyMySQL==1.1.3",
    "asgiref==3.13.0",
    "sqlparse==0.6.1",
    "typing_extensions==4.16.0",
    "greenlet==3.5.6",
];
const VENV_NAME: &str = "apps-sa2.0.58-dj5.2.19-pymysql1.1.3";
/// How long one scenario may run against one server.
const SCENARIO_TIMEOUT: Duration = Duration::from_secs(300);

/// A venv with SQLAlchemy, Django and PyMySQL, made once per machine (bounded).
fn python_venv() -> PathBuf {
    common::python::venv(VENV_NAME, PY_PACKAGES, "import sqlalchemy, django, pymysql")
}

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/python")
        .join(name)
}

/// Runs a scenario script with `args`; returns its JSON lines (fails the test on an error).
fn run_scenario(python: &Path, name: &str, server: &str, args: &[String]) -> Vec<String> {
    let t = Instant::now();
    let out = run_bounded(
        Command::new(python).arg(script(name)).args(args),
        None,
        SCENARIO_TIMEOUT,
    );
    eprintln!("{name} against {server}: {:?}", t.elapsed());
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{name} failed against {server} ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout.lines().map(str::to_string).collect()
}

/// Both servers, each with an empty database `db`.
struct Servers {
    onelog: Onelog,
    mariadb: MariaDb,
    _dir: tempfile::TempDir,
}

fn servers(db: &str) -> Servers {
    let dir = tempfile::tempdir().expect("tempdir");
    let onelog = Onelog::start(&dir.path().join("onelog"), &[]);
    sql(onelog.port, &format!("CREATE DATABASE {db}"));
    let mariadb = MariaDb::start(&dir.path().join("mariadb"));
    mariadb.run(Some(&format!("CREATE DATABASE {db}")), None);
    Servers {
        onelog,
        mariadb,
        _dir: dir,
    }
}

/// Steps whose results differ for a known divergence (docs/SQL.md, *Known divergences*): the
/// step's name and the reason. The test fails when such a step stops differing, so the entry
/// goes when the divergence is fixed.
const KNOWN: &[(&str, &str)] = &[];

fn step_name(line: &str) -> &str {
    line.strip_prefix("[\"")
        .and_then(|l| l.split('"').next())
        .unwrap_or(line)
}

/// Compares the two servers' step lines, reporting every step that differs.
fn assert_same(name: &str, onelog: &[String], mariadb: &[String]) {
    let known = |l: &str| KNOWN.iter().any(|(k, _)| *k == step_name(l));
    let differ: Vec<String> = onelog
        .iter()
        .zip(mariadb)
        .filter(|(a, b)| a != b && !known(b))
        .map(|(a, b)| format!("  onelog:  {a}\n  mariadb: {b}"))
        .collect();
    let fixed: Vec<&str> = onelog
        .iter()
        .zip(mariadb)
        .filter(|(a, b)| a == b && known(b))
        .map(|(_, b)| step_name(b))
        .collect();
    assert!(
        fixed.is_empty(),
        "{name}: known divergences no longer differ, remove them from KNOWN: {fixed:?}"
    );
    assert!(
        differ.is_empty() && onelog.len() == mariadb.len(),
        "{name}: onelog's results differ from MariaDB's ({} vs {} steps):\n{}",
        onelog.len(),
        mariadb.len(),
        differ.join("\n")
    );
    assert!(
        mariadb.len() > 20,
        "{name} printed too few steps: {mariadb:?}"
    );
}

#[test]
fn sqlalchemy_orm_same_results_as_mariadb() {
    let python = python_venv();
    let s = servers("sa");
    let url = |host: String| format!("mysql+pymysql://root@{host}/sa?charset=utf8mb4");
    let onelog = run_scenario(
        &python,
        "sqlalchemy_app.py",
        "onelog",
        &[url(format!("127.0.0.1:{}", s.onelog.port))],
    );
    let mariadb = run_scenario(
        &python,
        "sqlalchemy_app.py",
        "MariaDB",
        &[format!(
            "{}&unix_socket={}",
            url("localhost".into()),
            s.mariadb.socket.display()
        )],
    );
    assert_same("sqlalchemy_app.py", &onelog, &mariadb);
}

#[test]
fn django_same_results_as_mariadb() {
    let python = python_venv();
    let s = servers("dj");
    let work = tempfile::tempdir().expect("tempdir");
    let (w1, w2) = (work.path().join("onelog"), work.path().join("mariadb"));
    std::fs::create_dir_all(&w1).expect("workdir");
    std::fs::create_dir_all(&w2).expect("workdir");
    let args = |w: &Path, host: &str, port: String, socket: String| {
        [
            w.display().to_string(),
            host.into(),
            port,
            socket,
            "dj".into(),
        ]
    };
    let onelog = run_scenario(
        &python,
        "django_app.py",
        "onelog",
        &args(&w1, "127.0.0.1", s.onelog.port.to_string(), "-".into()),
    );
    let mariadb = run_scenario(
        &python,
        "django_app.py",
        "MariaDB",
        &args(&w2, "-", "-".into(), s.mariadb.socket.display().to_string()),
    );
    assert_same("django_app.py", &onelog, &mariadb);
}
