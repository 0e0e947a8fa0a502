//! `onelog binlog`, run as the real binary on segments written by the real engine: the text
//! lists every GTID and statement, `-v` shows row values, `--start-gtid`/`--stop-gtid` select
//! groups, damaged and truncated copies fail with file and offset (after printing what came
//! before), `--to-binlog` writes MariaDB binlog files that read back with the same GTIDs (and,
//! when the `mariadb-binlog` client is installed, that it verifies and lists the same way).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;
use std::time::Duration;

use onelog_binlog::event::event_type;
use onelog_binlog::event::gtid::GtidEvent;
use onelog_binlog::Value;
use onelog_engine::{ColumnSpec, Engine, EngineOptions, IndexSpec, SqlType, TableSpec};
use onelog_log::classic::read_classic_file;
use onelog_log::classic::ClassicOptions;
use onelog_log::{BinlogStorage, FileSystem, StdFs};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_onelog")
}

fn run(args: &[&str]) -> Output {
    Command::new(bin())
        .arg("binlog")
        .args(args)
        .env("TZ", "UTC")
        .output()
        .unwrap()
}

/// `onelog binlog OPTS SEGMENTS...`.
fn run_with(opts: &[&str], segs: &[PathBuf]) -> Output {
    let mut args: Vec<&str> = opts.to_vec();
    args.extend(segs.iter().map(|p| p.to_str().unwrap()));
    run(&args)
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A data directory with: CREATE DATABASE (0-1-1), CREATE TABLE (0-1-2), three inserts in one
/// transaction (0-1-3), an update + delete (0-1-4), sixty single-row inserts (0-1-5 ..= 0-1-64) and CREATE TABLE t2 (0-1-65). Segments are small so there are
/// several. Returns the segment paths in order.
fn build_datadir(dir: &Path) -> Vec<PathBuf> {
    build_datadir_in(dir, false)
}

/// [`build_datadir`]; with `file_mode` the engine runs with `--binlog-storage=file`: the log
/// holds PREPARE records and CommitMark records, the binlog is classic files in `dir`.
fn build_datadir_in(dir: &Path, file_mode: bool) -> Vec<PathBuf> {
    let mut o = EngineOptions::new(dir);
    if file_mode {
        o.log.binlog_storage = BinlogStorage::File {
            classic: ClassicOptions {
                dir: dir.to_path_buf(),
                // Small, so the binlog rotates (Rotate events, several files).
                max_size: 4096,
                ..ClassicOptions::default()
            },
            sync_binlog: 1,
        };
    }
    o.log.segment_size = 16 << 10;
    o.background_checkpoints = false;
    o.lock_wait_timeout = Duration::from_secs(10);
    let fs: Arc<dyn FileSystem> = StdFs::new();
    let (e, _) = Engine::open(fs, o).unwrap();
    e.create_database("shop", false, "CREATE DATABASE shop")
        .unwrap();
    let spec = TableSpec {
        db: "shop".into(),
        name: "items".into(),
        columns: vec![
            ColumnSpec::new("id", SqlType::Int { unsigned: false }).not_null(),
            ColumnSpec::new("name", SqlType::VarChar(20)).not_null(),
            ColumnSpec::new("qty", SqlType::Int { unsigned: false }),
        ],
        primary_key: vec!["id".into()],
        indexes: vec![IndexSpec::new("by_name", &["name"], false)],
    };
    let t = e
        .create_table(
            spec,
            false,
            "CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(20) NOT NULL, qty INT)",
        )
        .unwrap();
    let row = |id: i64, name: &str, qty: Option<i64>| {
        vec![
            Value::Int(id),
            Value::bytes(name.as_bytes()),
            qty.map_or(Value::Null, Value::Int),
        ]
    };
    let mut tx = e.begin();
    tx.insert(t, row(1, "apple", Some(10))).unwrap();
    tx.insert(t, row(2, "banana", None)).unwrap();
    tx.insert(t, row(3, "cherry", Some(-7))).unwrap();
    tx.commit().unwrap();
    let mut tx = e.begin();
    tx.update(t, &[Value::Int(1)], row(1, "apple", Some(11)))
        .unwrap();
    assert!(tx.delete(t, &[Value::Int(2)]).unwrap());
    tx.commit().unwrap();
    // Enough single-row transactions to fill more than one 16 KiB segment.
    for i in 0..60 {
        let mut tx = e.begin();
        tx.insert(t, row(100 + i, &format!("bulk{i}"), Some(i)))
            .unwrap();
        tx.commit().unwrap();
    }
    let spec2 = TableSpec {
        db: "shop".into(),
        name: "t2".into(),
        columns: vec![ColumnSpec::new("a", SqlType::Int { unsigned: false }).not_null()],
        primary_key: vec!["a".into()],
        indexes: vec![],
    };
    e.create_table(spec2, false, "CREATE TABLE t2 (a INT PRIMARY KEY)")
        .unwrap();
    e.shutdown().unwrap();
    let mut segs: Vec<PathBuf> = std::fs::read_dir(dir.join("binlog"))
        .unwrap()
        .map(|d| d.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "olog"))
        .collect();
    segs.sort();
    segs
}

/// 1 (database) + 1 (table) + 2 + 60 + 1 (t2) groups.
const GROUPS: u64 = 65;

fn paths(segs: &[PathBuf]) -> Vec<&str> {
    segs.iter().map(|p| p.to_str().unwrap()).collect()
}

fn gtid_lines(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.split("\tGTID ").nth(1))
        .map(|r| r.split(' ').next().unwrap_or("").to_string())
        .collect()
}

fn all_gtids() -> Vec<String> {
    (1..=GROUPS).map(|s| format!("0-1-{s}")).collect()
}

#[test]
fn text_lists_every_gtid_and_statement() {
    let dir = tempfile::tempdir().unwrap();
    let segs = build_datadir(dir.path());
    assert!(segs.len() >= 2, "expected several segments: {segs:?}");
    let o = run(&paths(&segs));
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert_eq!(gtid_lines(&text), all_gtids());
    assert!(text.starts_with("/*!50530 SET @@SESSION.PSEUDO_SLAVE_MODE=1*/;\n"));
    assert!(text.contains("DELIMITER /*!*/;\n"));
    assert!(text.contains("CREATE DATABASE shop\n/*!*/;\n"), "{text}");
    assert!(text.contains("use `shop`/*!*/;\n"), "{text}");
    assert!(text.contains(
        "CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(20) NOT NULL, qty INT)\n/*!*/;"
    ));
    assert!(text.contains("SET TIMESTAMP="));
    assert!(text.contains(" ddl\n"));
    assert!(text.contains(" trans\n"));
    assert!(text.contains("START TRANSACTION\n/*!*/;\n"));
    assert!(text.contains("\tTable_map: `shop`.`items` mapped to number "));
    assert!(
        text.contains("\tWrite_rows_v1: table id ") || text.contains("\tWrite_rows: table id ")
    );
    assert!(text.contains("COMMIT/*!*/;\n"));
    assert!(text.contains("\tXid = "));
    assert!(text.contains("# at "));
    assert!(text.contains(" server id 1  end_log_pos "));
    assert!(text.contains(" CRC32 0x"));
    assert!(text.contains("\tStart: binlog v 4, server v 10.11.9-MariaDB-onelog created "));
    assert!(
        text.contains("# LSN 0: Ddl record at offset 4096"),
        "{text}"
    );
    assert!(text.ends_with("/*!50530 SET @@SESSION.PSEUDO_SLAVE_MODE=0*/;\n"));
    // Without -v no pseudo-SQL.
    assert!(!text.contains("### INSERT"));
}

#[test]
fn verbose_shows_row_values() {
    let dir = tempfile::tempdir().unwrap();
    let segs = build_datadir(dir.path());
    let o = run_with(&["-v"], &segs);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains(
            "### INSERT INTO `shop`.`items`\n### SET\n###   @1=1\n###   @2='apple'\n###   @3=10\n"
        ),
        "{text}"
    );
    assert!(text.contains("###   @1=2\n###   @2='banana'\n###   @3=NULL\n"));
    assert!(text.contains("###   @3=-7 (4294967289)\n"));
    assert!(text.contains(
        "### UPDATE `shop`.`items`\n### WHERE\n###   @1=1\n###   @2='apple'\n###   @3=10\n### SET\n###   @1=1\n###   @2='apple'\n###   @3=11\n"
    ));
    assert!(text.contains("### DELETE FROM `shop`.`items`\n### WHERE\n###   @1=2\n"));
    assert!(text.contains("# Number of rows: 3\n"));
    let o = run_with(&["-vv"], &segs);
    assert!(stdout(&o).contains("###   @1=1 /* INT meta=0 nullable=0 is_null=0 */\n"));
}

#[test]
fn start_and_stop_gtid_select_groups() {
    let dir = tempfile::tempdir().unwrap();
    let segs = build_datadir(dir.path());
    let o = run_with(&["--start-gtid=0-1-3", "--stop-gtid", "0-1-40"], &segs);
    assert!(o.status.success(), "{}", stderr(&o));
    let want: Vec<String> = (4..=40).map(|s| format!("0-1-{s}")).collect();
    assert_eq!(gtid_lines(&stdout(&o)), want);
    // Another domain's start position does not filter domain 0; a stop list keeps only the
    // domains it names.
    let o = run_with(&["--start-gtid=5-1-100"], &segs);
    assert_eq!(gtid_lines(&stdout(&o)), all_gtids());
    let o = run_with(&["--stop-gtid=5-1-100"], &segs);
    assert!(o.status.success());
    assert!(gtid_lines(&stdout(&o)).is_empty());
    let o = run(&["--start-gtid=nonsense", "x"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("invalid --start-gtid"));
}

#[test]
fn truncated_and_damaged_segments_fail_with_file_and_offset() {
    let dir = tempfile::tempdir().unwrap();
    let segs = build_datadir(dir.path());
    let data = std::fs::read(&segs[0]).unwrap();
    // Where the third record starts: read the record offsets from the tool's own output.
    let o = run(&[segs[0].to_str().unwrap()]);
    let offsets: Vec<u64> = stdout(&o)
        .lines()
        // Event records only (the log's own SyncMark/GtidState records sit between them).
        .filter(|l| l.contains(": Transaction record") || l.contains(": Ddl record"))
        .filter_map(|l| l.split(" record at offset ").nth(1))
        .map(|r| r.split(' ').next().unwrap().parse().unwrap())
        .collect();
    assert!(offsets.len() > 4);
    let third = offsets[2] as usize;

    let cut = dir.path().join("cut.olog");
    std::fs::write(&cut, &data[..third + 30]).unwrap();
    let o = run(&[cut.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.starts_with(&format!(
            "onelog binlog: {}: offset {third}: ",
            cut.display()
        )),
        "{err}"
    );
    assert!(err.contains("truncated"), "{err}");
    // What came before was printed.
    assert_eq!(gtid_lines(&stdout(&o)), ["0-1-1", "0-1-2"]);

    let flip = dir.path().join("flip.olog");
    let mut d = data.clone();
    d[third + 40] ^= 0x04;
    std::fs::write(&flip, &d).unwrap();
    let o = run(&["-v", flip.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.starts_with(&format!(
            "onelog binlog: {}: offset {third}: ",
            flip.display()
        )),
        "{err}"
    );
    assert!(err.contains("CRC32C"), "{err}");
    assert_eq!(gtid_lines(&stdout(&o)), ["0-1-1", "0-1-2"]);

    // A damaged header, and a file that is no binlog at all.
    let mut d = data.clone();
    d[30] ^= 1;
    std::fs::write(&flip, &d).unwrap();
    let o = run(&[flip.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("offset "), "{}", stderr(&o));
    let junk = dir.path().join("junk");
    std::fs::write(&junk, b"hello world").unwrap();
    let o = run(&[junk.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("offset 0: not a binlog file"));
}

/// GTIDs of the groups in classic binlog files, read with `read_classic_file`.
fn classic_gtids(files: &[PathBuf]) -> Vec<String> {
    let mut out = Vec::new();
    for f in files {
        let data = std::fs::read(f).unwrap();
        for ev in read_classic_file(&f.display().to_string(), &data) {
            let ev = ev.unwrap();
            if ev.event_type() == event_type::GTID {
                out.push(GtidEvent::decode(ev.bytes).unwrap().gtid.to_string());
            }
        }
    }
    out
}

fn classic_files(dir: &Path) -> Vec<PathBuf> {
    let index = std::fs::read_to_string(dir.join("binlog.index")).unwrap();
    index
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| dir.join(l.trim_start_matches("./")))
        .collect()
}

#[test]
fn to_binlog_writes_files_that_read_back_with_the_same_gtids() {
    let dir = tempfile::tempdir().unwrap();
    let segs = build_datadir(dir.path());
    let out = dir.path().join("export");
    let o = run_with(&["--to-binlog", out.to_str().unwrap()], &segs);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains(&format!("exported {GROUPS} event groups")));
    let files = classic_files(&out);
    assert_eq!(classic_gtids(&files), all_gtids());
    // Refuses to append to an existing binlog.
    let o = run_with(&["--to-binlog", out.to_str().unwrap()], &segs);
    assert_eq!(o.status.code(), Some(1));

    // Our own decoder reads the exported files as classic files, the same GTIDs.
    let classic: Vec<&str> = files.iter().map(|p| p.to_str().unwrap()).collect();
    let o = run(&classic);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert_eq!(gtid_lines(&text), all_gtids());
    assert!(text.contains("\tGtid list []"), "{text}");
    assert!(text.contains("\tBinlog checkpoint binlog.000001"));

    // A filtered export starts with the state just before its first group.
    let out2 = dir.path().join("export2");
    let o = run_with(
        &["--to-binlog", out2.to_str().unwrap(), "--start-gtid=0-1-10"],
        &segs,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("initial GTID state [0-1-10]"),
        "{}",
        stdout(&o)
    );
    let files2 = classic_files(&out2);
    let want: Vec<String> = (11..=GROUPS).map(|s| format!("0-1-{s}")).collect();
    assert_eq!(classic_gtids(&files2), want);
    let o = run(&[files2[0].to_str().unwrap()]);
    assert!(
        stdout(&o).contains("\tGtid list [0-1-10]"),
        "{}",
        stdout(&o)
    );

    if let Some(mb) = mariadb_binlog() {
        let o = Command::new(&mb)
            .arg("--verify-binlog-checksum")
            .arg("--base64-output=decode-rows")
            .arg("-v")
            .args(&files)
            .env("TZ", "UTC")
            .output()
            .unwrap();
        assert!(o.status.success(), "mariadb-binlog failed: {}", stderr(&o));
        let text = stdout(&o);
        assert_eq!(gtid_lines(&text), all_gtids(), "{text}");
        assert!(text.contains("###   @2='apple'"), "{text}");
        // Our decoding of the same classic files is mariadb-binlog's text, line for line, in
        // its decode-rows mode and in its default mode (BINLOG '...' statements).
        for (ours_opts, theirs_opts) in [
            (vec!["-v"], vec!["--base64-output=decode-rows", "-v"]),
            (vec!["-vv"], vec!["--base64-output=decode-rows", "-vv"]),
            (vec!["--base64-output=auto"], vec![]),
            (vec!["--base64-output=auto", "-v"], vec!["-v"]),
        ] {
            let theirs = Command::new(&mb)
                .args(&theirs_opts)
                .args(&files)
                .env("TZ", "UTC")
                .output()
                .unwrap();
            let theirs = stdout(&theirs);
            let mut args = ours_opts.clone();
            args.extend(classic.iter().copied());
            let ours = stdout(&run(&args));
            for (i, (a, b)) in ours.lines().zip(theirs.lines()).enumerate() {
                assert_eq!(
                    a,
                    b,
                    "{ours_opts:?}: line {} differs from mariadb-binlog",
                    i + 1
                );
            }
            assert_eq!(
                ours.lines().count(),
                theirs.lines().count(),
                "{ours_opts:?}"
            );
        }
    }
}

#[test]
fn file_mode_segments_show_commit_marks_and_match_the_binlog_files() {
    let dir = tempfile::tempdir().unwrap();
    let segs = build_datadir_in(dir.path(), true);
    let o = run_with(&[], &segs);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert_eq!(gtid_lines(&text), all_gtids());
    assert!(text.contains(": CommitMark record at offset "), "{text}");
    assert!(text.contains("are committed"), "{text}");
    // The classic files the server wrote hold the same groups.
    let files = classic_files(dir.path());
    assert_eq!(classic_gtids(&files), all_gtids());
    let classic: Vec<&str> = files.iter().map(|p| p.to_str().unwrap()).collect();
    assert!(files.len() > 1, "{files:?}");
    let o = run(&classic);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(gtid_lines(&stdout(&o)), all_gtids());
    assert!(stdout(&o).contains("\tRotate to binlog.000002  pos: 4\n"));
    if let Some(mb) = mariadb_binlog() {
        let theirs = Command::new(&mb)
            .args(["--base64-output=decode-rows", "-v"])
            .args(&files)
            .env("TZ", "UTC")
            .output()
            .unwrap();
        let mut args = vec!["-v"];
        args.extend(classic.iter().copied());
        let ours = stdout(&run(&args));
        let theirs = stdout(&theirs);
        for (i, (a, b)) in ours.lines().zip(theirs.lines()).enumerate() {
            assert_eq!(a, b, "line {} differs from mariadb-binlog", i + 1);
        }
        assert_eq!(ours.lines().count(), theirs.lines().count());
    }
}

fn mariadb_binlog() -> Option<PathBuf> {
    let out = Command::new("sh")
        .args(["-c", "command -v mariadb-binlog"])
        .output()
        .ok()?;
    let p = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (out.status.success() && !p.is_empty()).then(|| PathBuf::from(p))
}

#[test]
fn mutated_segments_never_crash_the_tool() {
    let dir = tempfile::tempdir().unwrap();
    let segs = build_datadir(dir.path());
    let data = std::fs::read(&segs[0]).unwrap();
    let end = data.iter().rposition(|&b| b != 0).unwrap_or(0) + 1;
    let m = dir.path().join("m.olog");
    // Deterministic pseudo-random mutations (xorshift), each run through the real binary.
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for round in 0..40 {
        let mut d = data.clone();
        let flips = 1 + next() % 4;
        for _ in 0..flips {
            let at = (next() % end as u64) as usize;
            d[at] ^= (next() % 255 + 1) as u8;
        }
        if round % 3 == 0 {
            let cut = (next() % end as u64) as usize;
            d.truncate(cut);
        }
        std::fs::write(&m, &d).unwrap();
        let o = run(&["-vv", m.to_str().unwrap()]);
        let code = o.status.code();
        assert!(
            code == Some(0) || code == Some(1),
            "round {round}: {:?}",
            o.status
        );
        if code == Some(1) {
            assert!(stderr(&o).starts_with("onelog binlog: "), "round {round}");
        }
    }
}
