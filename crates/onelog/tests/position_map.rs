//! One position map (DESIGN.md §7): every place that shows binlog files and offsets shows
//! the same ones. A real server (`--binlog-file-mirror=ON`, small `--max-binlog-size`, a
//! few thousand rows over several segments, FLUSH BINARY LOGS in between) is read five ways,
//! and for every file, event by event (name, position, end_log_pos, bytes where there are
//! bytes), they agree: SHOW BINLOG EVENTS, the mirror's files (`read_classic_file`), `onelog
//! binlog --to-binlog`, and the dump stream as the real `mariadb-binlog
//! --read-from-remote-server --raw` writes it. SHOW MASTER STATUS is the last file's size,
//! SHOW BINARY LOGS' sizes are the files' sizes, and BINLOG_GTID_POS at every event end is
//! the GTIDs up to there.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::{onelog_bin, run_bounded, sql, sql_value, status, Onelog};
use onelog_binlog::event::{event_type, GtidEvent, GtidListEvent};
use onelog_binlog::GtidState;
use onelog_log::read_classic_file;

/// One event of a file: position, end_log_pos, type, bytes (the Format_description's
/// in-use flag cleared: it is set only while a file is open).
type Ev = (u64, u64, u8, Vec<u8>);

fn events_of(name: &str, data: &[u8]) -> Vec<Ev> {
    read_classic_file(name, data)
        .map(|e| {
            let e = e.unwrap_or_else(|e| panic!("{name}: {e}"));
            let mut bytes = e.bytes.to_vec();
            if e.event_type() == event_type::FORMAT_DESCRIPTION {
                bytes[17] &= !1;
            }
            let end = u64::from(e.end_log_pos());
            (e.offset, end, e.event_type(), bytes)
        })
        .collect()
}

/// The files `binlog.NNNNNN` of `dir`, by name, with their events.
fn dir_files(dir: &Path) -> BTreeMap<String, (u64, Vec<Ev>)> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if onelog_log::view::parse_view_file_name(&name).is_some() {
            let data = std::fs::read(e.path()).unwrap();
            let evs = events_of(&name, &data);
            out.insert(name, (data.len() as u64, evs));
        }
    }
    out
}

/// SHOW BINLOG EVENTS IN `file`: (pos, end_log_pos, event type name) per event.
fn show_events(port: u16, file: &str) -> Vec<(u64, u64, String)> {
    sql(port, &format!("SHOW BINLOG EVENTS IN '{file}'"))
        .lines()
        .map(|l| {
            let c: Vec<&str> = l.split('\t').collect();
            assert_eq!(c[0], file, "{l}");
            (
                c[1].parse().unwrap(),
                c[4].parse().unwrap(),
                c[2].to_string(),
            )
        })
        .collect()
}

fn type_name(t: u8) -> &'static str {
    match t {
        event_type::FORMAT_DESCRIPTION => "Format_desc",
        event_type::GTID_LIST => "Gtid_list",
        event_type::BINLOG_CHECKPOINT => "Binlog_checkpoint",
        event_type::GTID => "Gtid",
        event_type::QUERY => "Query",
        event_type::XID => "Xid",
        event_type::ROTATE => "Rotate",
        event_type::TABLE_MAP => "Table_map",
        event_type::ANNOTATE_ROWS => "Annotate_rows",
        event_type::WRITE_ROWS_V1 => "Write_rows_v1",
        _ => "",
    }
}

fn wait_mirror(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while status(port, "Onelog_mirror_lag_bytes") != 0 {
        assert!(Instant::now() < deadline, "the mirror did not catch up");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The expected BINLOG_GTID_POS at every event end of a file: the Gtid_list's state (even
/// before it: MariaDB reads it first) plus every GTID event before that offset.
fn expected_positions(evs: &[Ev]) -> Vec<(u64, String)> {
    let list = evs.iter().find(|e| e.2 == event_type::GTID_LIST).unwrap();
    let mut state: GtidState = GtidListEvent::decode(&list.3).unwrap().to_state();
    let mut out = vec![(4, state.pos().to_string())];
    for (_, end, t, bytes) in evs {
        if *t == event_type::GTID {
            state.record(GtidEvent::decode(bytes).unwrap().gtid);
        }
        out.push((*end, state.pos().to_string()));
    }
    out
}

#[test]
fn every_view_of_the_binlog_agrees_event_by_event() {
    let dir = tempfile::tempdir().unwrap();
    let datadir = dir.path().join("data");
    let args = ["--binlog-file-mirror=ON", "--max-binlog-size=16K"];
    let mut server = Onelog::start(&datadir, &args);
    let port = server.port;
    sql(
        port,
        "CREATE DATABASE pm; CREATE TABLE pm.t (a INT PRIMARY KEY, b VARCHAR(40))",
    );
    for batch in 0..150 {
        let rows: Vec<String> = (0..20)
            .map(|i| format!("({}, 'row {batch} {i}')", batch * 20 + i))
            .collect();
        let mut stmt = format!("INSERT INTO pm.t VALUES {}", rows.join(","));
        if batch % 50 == 49 {
            stmt.push_str("; FLUSH BINARY LOGS");
        }
        sql(port, &stmt);
    }
    assert_eq!(sql_value(port, "SELECT COUNT(*) FROM pm.t"), "3000");
    wait_mirror(port);

    // SHOW BINARY LOGS / SHOW MASTER STATUS.
    let logs: Vec<(String, u64)> = sql(port, "SHOW BINARY LOGS")
        .lines()
        .map(|l| {
            let c: Vec<&str> = l.split('\t').collect();
            (c[0].to_string(), c[1].parse().unwrap())
        })
        .collect();
    assert!(logs.len() >= 4, "several segments: {logs:?}");
    let master = sql_value(port, "SHOW MASTER STATUS");
    let m: Vec<&str> = master.split('\t').collect();
    let last = logs.last().unwrap();
    assert_eq!(
        (m[0], m[1].parse::<u64>().unwrap()),
        (last.0.as_str(), last.1)
    );

    // The mirror's files.
    let mirror = dir_files(&datadir);
    let names: Vec<&String> = mirror.keys().collect();
    let log_names: Vec<&String> = logs.iter().map(|(n, _)| n).collect();
    assert_eq!(names, log_names);
    for (name, size) in &logs {
        let (len, evs) = &mirror[name];
        assert_eq!(len, size, "{name}: SHOW BINARY LOGS size vs mirror file");
        // SHOW BINLOG EVENTS, event by event.
        let shown = show_events(port, name);
        let ours: Vec<(u64, u64, String)> = evs
            .iter()
            .map(|(p, e, t, _)| (*p, *e, type_name(*t).to_string()))
            .collect();
        assert_eq!(shown.len(), ours.len(), "{name}: event count");
        for (s, o) in shown.iter().zip(&ours) {
            assert_eq!(
                (s.0, s.1),
                (o.0, o.1),
                "{name}: SHOW BINLOG EVENTS vs mirror"
            );
            if !o.2.is_empty() {
                assert_eq!(s.2, o.2, "{name} at {}", o.0);
            }
        }
        // BINLOG_GTID_POS at every event end (and a position inside an event: NULL).
        let want = expected_positions(evs);
        let queries: Vec<String> = want
            .iter()
            .map(|(p, _)| format!("SELECT IFNULL(BINLOG_GTID_POS('{name}', {p}), 'NULL')"))
            .collect();
        let got: Vec<String> = sql(port, &queries.join(";"))
            .lines()
            .map(str::to_string)
            .collect();
        let want_text: Vec<String> = want.iter().map(|(_, s)| s.clone()).collect();
        assert_eq!(got, want_text, "{name}: BINLOG_GTID_POS");
        let inside = evs[evs.len() - 1].0 + 1;
        assert_eq!(
            sql_value(
                port,
                &format!("SELECT BINLOG_GTID_POS('{name}', {inside}) IS NULL")
            ),
            "1"
        );
    }
    assert_eq!(
        sql_value(port, "SELECT BINLOG_GTID_POS('binlog.999999', 4) IS NULL"),
        "1"
    );

    // The dump stream, written by the real mariadb-binlog.
    let raw = dir.path().join("raw");
    std::fs::create_dir_all(&raw).unwrap();
    let dumped = match which("mariadb-binlog") {
        Some(mb) => {
            // One run from the first file across all of them: every later file's fake
            // Rotate must carry the checksum of the Format_description sent before it, or
            // mariadb-binlog misreads it and stops after the first file.
            let first = &logs[0].0;
            let out = run_bounded(
                Command::new(&mb)
                    .arg("--no-defaults")
                    .arg("--read-from-remote-server")
                    .arg("--raw")
                    .arg("--to-last-log")
                    .arg(format!("--result-file={}/", raw.display()))
                    .args([
                        "--protocol=TCP",
                        "-h127.0.0.1",
                        &format!("-P{port}"),
                        "-uroot",
                    ])
                    .arg(first),
                None,
                Duration::from_secs(60),
            );
            assert!(
                out.status.success(),
                "mariadb-binlog --to-last-log {first}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            Some(dir_files(&raw))
        }
        None => {
            eprintln!("SKIPPED the dump-stream comparison: mariadb-binlog is not installed");
            None
        }
    };

    assert_eq!(server.stop().code(), Some(0), "{}", server.log_text());
    // `onelog binlog --to-binlog` of every segment.
    let segs = segments(&datadir);
    assert!(!segs.is_empty(), "no segment under {}", datadir.display());
    let export = dir.path().join("export");
    let out = run_bounded(
        Command::new(onelog_bin())
            .arg("binlog")
            .arg("--to-binlog")
            .arg(&export)
            .args(&segs),
        None,
        Duration::from_secs(120),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let exported = dir_files(&export);
    if let Some(d) = &dumped {
        assert_eq!(
            d.keys().collect::<Vec<_>>(),
            log_names,
            "mariadb-binlog's files"
        );
    }
    let closed_mirror = dir_files(&datadir);
    assert_eq!(exported.keys().collect::<Vec<_>>(), log_names);
    for (name, _) in &logs {
        assert_eq!(
            exported[name], closed_mirror[name],
            "{name}: export vs mirror"
        );
        assert_eq!(
            exported[name], mirror[name],
            "{name}: export vs mirror while running"
        );
        if let Some(d) = &dumped {
            let (_, evs) = &d[name];
            same_events(
                evs,
                &mirror[name].1,
                &format!("{name}: dump stream vs mirror"),
            );
        }
    }
}

fn which(tool: &str) -> Option<PathBuf> {
    let out = Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .ok()?;
    let p = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (out.status.success() && !p.is_empty()).then(|| PathBuf::from(p))
}

/// The log's segment files (`binlog-NNNNNN.olog`) under `dir`, in number order.
fn segments(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "olog")
                && p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("binlog-"))
            {
                out.push(p);
            }
        }
    }
    out.sort_by_key(|p| p.file_name().map(|n| n.to_os_string()));
    out
}

/// Asserts two event lists are equal, naming the first event that differs.
fn same_events(a: &[Ev], b: &[Ev], what: &str) {
    for (x, y) in a.iter().zip(b) {
        assert!(
            x == y,
            "{what}: first difference at position {} (type {}, {} bytes) vs {} (type {}, {} bytes):\n{:?}\n{:?}",
            x.0, x.2, x.3.len(), y.0, y.2, y.3.len(), x.3, y.3
        );
    }
    assert_eq!(a.len(), b.len(), "{what}: event count");
}
