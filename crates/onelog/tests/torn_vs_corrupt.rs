//! Torn is not corrupt (issue 9, part 4), on the real server: commit rows, kill -9, damage
//! the log segment the way a disk or an operator can (a flipped byte and a zeroed 4 KiB page
//! well inside the synced region, the preallocated file truncated), restart. The server
//! must refuse to start (non-zero exit) naming the file, the offset and the option that
//! accepts the loss; with `--log-recovery=truncate-damaged` it starts and says what it cut.
//! A genuine torn tail (a partial frame after the last record) still recovers with every
//! committed row. Damage in the LAST group, once the server has been idle (its idle SyncMark
//! synced), is refused too.

mod common;

use std::path::{Path, PathBuf};

use common::Onelog;
use onelog_log::frame;

const ROWS: u64 = 300;
const SEGMENT: u64 = 8 << 20; // common::TEST_SEGMENT_SIZE

/// A datadir holding `ROWS` acknowledged commits (one row each), left by kill -9.
fn killed_datadir(root: &Path) -> PathBuf {
    let datadir = root.join("data");
    let mut server = Onelog::start(&datadir, &[]);
    let mut script = String::from(
        "CREATE DATABASE tc; CREATE TABLE tc.t (id INT PRIMARY KEY, v VARCHAR(500) NOT NULL);",
    );
    for i in 1..=ROWS {
        let c = char::from(b'a' + (i % 26) as u8);
        script.push_str(&format!(
            "INSERT INTO tc.t VALUES ({i}, REPEAT('{c}', 400));"
        ));
    }
    common::sql(server.port, &script);
    assert_eq!(
        common::sql_value(server.port, "SELECT COUNT(*) FROM tc.t"),
        ROWS.to_string()
    );
    server.kill9();
    datadir
}

fn segment(datadir: &Path) -> PathBuf {
    datadir.join("binlog").join("binlog-000001.olog")
}

/// The file offsets of the records of the segment and the end of its records.
fn records(path: &Path) -> (Vec<u64>, u64) {
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(bytes.len() as u64, SEGMENT, "the segment is preallocated");
    let mut offs = Vec::new();
    let mut off = 4096;
    while let Ok(f) = frame::decode(&bytes[off..]) {
        offs.push(off as u64);
        off += f.len;
    }
    (offs, off as u64)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else if e.file_type().unwrap().is_file() {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

fn write_at(path: &Path, offset: u64, bytes: &[u8]) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    f.write_all_at(bytes, offset).unwrap();
    f.sync_all().unwrap();
}

/// Restarting refuses with a non-zero exit, naming the file, `offset` and the option; with
/// the option the server starts, logs the cut, and holds a prefix of the rows (fewer than
/// all). Returns the rows left.
fn assert_refused_then_accepted(datadir: &Path, offset: u64, what: &str) -> u64 {
    let args = vec!["--port=0".to_string()];
    let failure = match Onelog::try_start_args(datadir, &args) {
        Ok(_) => panic!("{what}: the server started on a damaged log"),
        Err(f) => f,
    };
    eprintln!(
        "{what}: {}",
        failure
            .log
            .lines()
            .find(|l| l.contains("refusing"))
            .unwrap_or("")
    );
    let status = failure.status.expect("the server exited");
    assert!(!status.success(), "{what}: exit status {status}");
    let want = format!("binlog-000001.olog at offset {offset}:");
    assert!(
        failure.log.contains(&want),
        "{what}: no `{want}` in:\n{}",
        failure.log
    );
    assert!(
        failure.log.contains("--log-recovery=truncate-damaged"),
        "{what}: the refusal does not name the option:\n{}",
        failure.log
    );
    let server = Onelog::start(datadir, &["--log-recovery=truncate-damaged"]);
    let log = server.log_text();
    assert!(
        log.contains("--log-recovery=truncate-damaged: cut")
            && log.contains(&format!("at offset {offset} of")),
        "{what}: the cut is not reported:\n{log}"
    );
    let n: u64 = common::sql_value(server.port, "SELECT COUNT(*) FROM tc.t")
        .parse()
        .unwrap();
    let max: u64 = common::sql_value(server.port, "SELECT COALESCE(MAX(id), 0) FROM tc.t")
        .parse()
        .unwrap();
    assert!(n < ROWS, "{what}: nothing was cut ({n} rows)");
    assert_eq!(
        max, n,
        "{what}: the rows left are not a prefix of the commits"
    );
    // The server works on after the cut.
    common::sql(
        server.port,
        "INSERT INTO tc.t VALUES (100000, 'after the cut')",
    );
    n
}

#[test]
fn damage_in_the_synced_log_refuses_to_start_naming_file_offset_and_option_which_cuts_it() {
    let root = tempfile::tempdir().unwrap();
    let base = killed_datadir(root.path());
    let (offs, end) = records(&segment(&base));
    assert!(end > 150_000, "{end} bytes of records");
    let record_at = |p: u64| *offs.iter().rev().find(|&&o| o <= p).unwrap();

    // One flipped byte in the middle of the records (tens of groups synced after it).
    let dir = root.path().join("flip");
    copy_dir(&base, &dir);
    let p = 4096 + (end - 4096) / 2;
    let old = std::fs::read(segment(&dir)).unwrap()[p as usize];
    write_at(&segment(&dir), p, &[old ^ 0x10]);
    assert_refused_then_accepted(&dir, record_at(p), "flipped byte");

    // A zeroed 4 KiB page a third of the way in.
    let dir = root.path().join("page");
    copy_dir(&base, &dir);
    let page = (4096 + (end - 4096) / 3) & !4095;
    write_at(&segment(&dir), page, &[0u8; 4096]);
    assert_refused_then_accepted(&dir, record_at(page), "zeroed page");

    // The preallocated file truncated inside its records.
    let dir = root.path().join("truncated");
    copy_dir(&base, &dir);
    let cut = end - 5000;
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(segment(&dir))
        .unwrap();
    f.set_len(cut).unwrap();
    drop(f);
    let failure = Onelog::try_start_args(&dir, &["--port=0".to_string()])
        .err()
        .expect("started on a truncated segment");
    assert!(
        failure.log.contains(&format!(
            "binlog-000001.olog at offset {cut}: segment file is {cut} bytes but was \
             preallocated to {SEGMENT} bytes"
        )) && failure.log.contains("--log-recovery=truncate-damaged"),
        "{}",
        failure.log
    );
    assert!(!failure.status.unwrap().success());
    let server = Onelog::start(&dir, &["--log-recovery=truncate-damaged"]);
    let n: u64 = common::sql_value(server.port, "SELECT COUNT(*) FROM tc.t")
        .parse()
        .unwrap();
    assert!(n < ROWS && n > ROWS - 20, "{n} rows after the cut");
    assert!(server
        .log_text()
        .contains("--log-recovery=truncate-damaged: cut"));
}

#[test]
fn a_torn_tail_after_the_last_record_recovers_every_committed_row() {
    let root = tempfile::tempdir().unwrap();
    let datadir = killed_datadir(root.path());
    let (_, end) = records(&segment(&datadir));
    // What a crash in the middle of a group's write leaves: a frame whose length word says
    // more than is there, then garbage, then (another page written out of order) more.
    let mut junk = vec![0u8; 3000];
    junk[..4].copy_from_slice(&6000u32.to_le_bytes());
    for (i, b) in junk.iter_mut().enumerate().skip(9) {
        *b = (i * 37 % 253) as u8 | 0x80;
    }
    write_at(&segment(&datadir), end, &junk);
    write_at(&segment(&datadir), end + 8192, &[0x5a; 4096]);
    let server = Onelog::start(&datadir, &[]);
    assert_eq!(
        common::sql_value(server.port, "SELECT COUNT(*) FROM tc.t"),
        ROWS.to_string()
    );
    let log = server.log_text();
    assert!(log.contains("torn bytes cut"), "{log}");
    assert!(!log.contains("truncate-damaged"), "{log}");
}

#[test]
fn damage_in_the_last_group_after_the_server_went_idle_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let datadir = root.path().join("data");
    let mut server = Onelog::start(&datadir, &[]);
    common::sql(
        server.port,
        "CREATE DATABASE tc; CREATE TABLE tc.t (id INT PRIMARY KEY, v VARCHAR(500) NOT NULL);",
    );
    let before = common::status(server.port, "Onelog_log_idle_sync_marks");
    for i in 1..=20u64 {
        common::sql(
            server.port,
            &format!("INSERT INTO tc.t VALUES ({i}, REPEAT('x', 300))"),
        );
    }
    // Bounded wait for the idle mark that follows the last commit: the counter moved and the
    // segment ends with a mark (on a loaded machine an idle mark can also fall between two of
    // the inserts, so the counter alone does not say the last one is covered).
    let mut now = before;
    let mut idle_at_end = false;
    for _ in 0..200 {
        now = common::status(server.port, "Onelog_log_idle_sync_marks");
        let (offs, end) = records(&segment(&datadir));
        idle_at_end = offs
            .last()
            .is_some_and(|&o| end - o == frame::SYNC_MARK_LEN as u64);
        if now > before && idle_at_end {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(now > before && idle_at_end, "no idle SyncMark after 4 s");
    server.kill9();
    let (offs, end) = records(&segment(&datadir));
    // The last frame decoded is the idle mark past the log's end; the one before it is the
    // last group (the INSERT of id 20).
    let last = offs[offs.len() - 2];
    assert_eq!(end - offs[offs.len() - 1], frame::SYNC_MARK_LEN as u64);
    let p = last + 30;
    let old = std::fs::read(segment(&datadir)).unwrap()[p as usize];
    write_at(&segment(&datadir), p, &[old ^ 0x04]);
    let failure = Onelog::try_start_args(&datadir, &["--port=0".to_string()])
        .err()
        .expect("started on a log whose last, synced group is damaged");
    assert!(
        failure
            .log
            .contains(&format!("binlog-000001.olog at offset {last}:"))
            && failure.log.contains("SyncMark")
            && failure.log.contains("--log-recovery=truncate-damaged"),
        "{}",
        failure.log
    );
    assert!(!failure.status.unwrap().success());
    let server = Onelog::start(&datadir, &["--log-recovery=truncate-damaged"]);
    assert_eq!(
        common::sql_value(server.port, "SELECT COUNT(*) FROM tc.t"),
        "19"
    );
}
