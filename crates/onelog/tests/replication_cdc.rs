//! CDC clients follow onelog's binlog (issue 11 part 6):
//! - python-mysql-replication 1.0.15 (installed with pip into a venv under `$HOME/.cache`,
//!   PyPI must be reachable): `BinlogStreamReader(is_mariadb=True, auto_position=<GTID>,
//!   blocking=False)` run by `tests/python/binlog_stream.py` gets every row event written after
//!   that GTID, with the right values and, through `binlog_row_metadata=FULL`'s Table_map
//!   metadata, the column names (and a BLOB as bytes, not text). Its control connection
//!   logs in with the default database `information_schema`;
//! - go-mysql's and Debezium's connect sequences (REPLICATION_FACTS.md §3.2, §3.3; neither can
//!   be installed here), replayed byte for byte over a raw socket ([`common::raw`]): the
//!   queries, go-mysql's COM_REGISTER_SLAVE, the dump with `@master_binlog_checksum='NONE'`
//!   (fake Rotate without CRC) or `= @@global.binlog_checksum` (with), from pos 4, from
//!   SHOW MASTER STATUS's file and position, from a GTID with pos 0, and Debezium's COM_PING
//!   on the dump connection. The stream is checked event by event: fake Rotate, then
//!   Format_description, Gtid_list, events whose CRC32 is right and whose `log_pos` is the
//!   true end offset in the file.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::raw::{binlog_dump, register_slave, RawConn};
use common::{run_bounded, sql, sql_value, Onelog};
use onelog_binlog::event::{check_event, event_type, EventHeader, HEADER_LEN};

const ARTIFICIAL: u16 = 0x20;

// ---------------------------------------------------------------------------------------
// python-mysql-replication

const PY_PACKAGES: &[&str] = &["mysql-replication==1.0.15", "PyMySQL==1.1.1"];

/// A venv with python-mysql-replication, made once per machine (bounded).
fn python_venv() -> PathBuf {
    common::python::venv(
        "python-mysql-replication-1.0.15",
        PY_PACKAGES,
        "import pymysqlreplication, pymysql",
    )
}

#[test]
fn python_mysql_replication_reads_every_row() {
    let python = python_venv();
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Onelog::start(dir.path(), &[]);
    let port = server.port;
    sql(
        port,
        "CREATE USER rpl@'%' IDENTIFIED BY 'rpl'; \
         GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO rpl@'%'; \
         CREATE DATABASE cdc; \
         CREATE TABLE cdc.t (id INT NOT NULL PRIMARY KEY, big BIGINT, name VARCHAR(40), \
         price DECIMAL(10,2), at DATETIME, d DOUBLE, data BLOB); \
         INSERT INTO cdc.t (id, name) VALUES (99, 'before the start')",
    );
    // Column names (and BLOB vs TEXT) reach the client only through Table_map metadata.
    sql(port, "SET GLOBAL binlog_row_metadata = FULL");
    let start = sql_value(port, "SELECT @@gtid_binlog_pos");
    sql(
        port,
        "INSERT INTO cdc.t VALUES (1, -9223372036854775808, 'one', 12.50, \
         '2026-11-25 10:11:12', 0.5, X'616263'); \
         INSERT INTO cdc.t VALUES (2, NULL, NULL, NULL, NULL, NULL, NULL); \
         BEGIN; UPDATE cdc.t SET name = 'uno', big = 9223372036854775807 WHERE id = 1; \
         DELETE FROM cdc.t WHERE id = 99; COMMIT; \
         DELETE FROM cdc.t WHERE id = 2",
    );
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/binlog_stream.py");
    let t = Instant::now();
    let out = run_bounded(
        Command::new(&python)
            .arg(&script)
            .args([&port.to_string(), "rpl", "rpl", &start]),
        None,
        Duration::from_secs(120),
    );
    eprintln!("python reader: {:?}", t.elapsed());
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "binlog_stream.py failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Vec<&str> = stdout
        .lines()
        .filter(|l| {
            ["write ", "update ", "delete "]
                .iter()
                .any(|k| l.starts_with(k))
        })
        .collect();
    // The BLOB arrives as bytes (the script prints them as hex).
    let one = r#"["1", "-9223372036854775808", "one", "12.50", "2026-11-25 10:11:12", "0.5", "0x616263"]"#;
    let uno =
        r#"["1", "9223372036854775807", "uno", "12.50", "2026-11-25 10:11:12", "0.5", "0x616263"]"#;
    let two = r#"["2", null, null, null, null, null, null]"#;
    let before = r#"["99", null, "before the start", null, null, null, null]"#;
    let want = vec![
        format!("write cdc.t {one}"),
        format!("write cdc.t {two}"),
        format!("update cdc.t {one} -> {uno}"),
        format!("delete cdc.t {before}"),
        format!("delete cdc.t {two}"),
    ];
    assert_eq!(rows, want, "python-mysql-replication's rows");
    let names: Vec<&str> = stdout.lines().filter(|l| l.starts_with("names ")).collect();
    assert_eq!(names.len(), want.len());
    let want_names = r#"names cdc.t ["id", "big", "name", "price", "at", "d", "data"]"#;
    assert!(names.iter().all(|n| *n == want_names), "{names:?}");
}

// ---------------------------------------------------------------------------------------
// Raw-socket replays of go-mysql and Debezium

/// One event of a dump stream.
struct Ev {
    h: EventHeader,
    bytes: Vec<u8>,
}

impl Ev {
    fn body(&self) -> &[u8] {
        &self.bytes[HEADER_LEN..]
    }
}

/// How a stream ended.
#[derive(Debug, PartialEq)]
enum End {
    Eof,
    Err(u16, String),
    /// Stopped reading: `stop` said so.
    Stopped,
}

/// Reads event packets until EOF, an error, or `stop(events so far)` is true.
fn read_stream(c: &mut RawConn, mut stop: impl FnMut(&[Ev]) -> bool) -> (Vec<Ev>, End) {
    let mut evs = Vec::new();
    loop {
        let p = c.read_packet().expect("reading the dump stream");
        match p.first() {
            Some(0x00) => {
                let bytes = p[1..].to_vec();
                let h = EventHeader::decode(&bytes).expect("an event header");
                assert_eq!(h.event_size as usize, bytes.len(), "event_size of {h:?}");
                evs.push(Ev { h, bytes });
                if stop(&evs) {
                    return (evs, End::Stopped);
                }
            }
            Some(0xfe) if p.len() < 9 => return (evs, End::Eof),
            _ => {
                let (code, msg) = common::raw::parse_err(&p).expect("an event, EOF or ERR");
                return (evs, End::Err(code, msg));
            }
        }
    }
}

/// The fake Rotate a stream starts with; returns (position, file). `crc`: whether it carries
/// a CRC32 (it must exactly when the reader asked for CRC32).
fn check_fake_rotate(ev: &Ev, crc: bool) -> (u64, String) {
    assert_eq!(ev.h.event_type, event_type::ROTATE, "{:?}", ev.h);
    assert_eq!(
        (ev.h.timestamp, ev.h.log_pos),
        (0, 0),
        "fake Rotate {:?}",
        ev.h
    );
    assert!(ev.h.flags & ARTIFICIAL != 0, "fake Rotate not ARTIFICIAL");
    let body = if crc {
        check_event(&ev.bytes).expect("fake Rotate's CRC32");
        &ev.body()[..ev.body().len() - 4]
    } else {
        ev.body()
    };
    let pos = u64::from_le_bytes(body[..8].try_into().expect("8 bytes"));
    let name = String::from_utf8(body[8..].to_vec()).expect("a file name");
    assert!(
        name.starts_with("binlog.") && name.len() == "binlog.000001".len(),
        "fake Rotate names {name:?}"
    );
    (pos, name)
}

/// Checks a stream after its first fake Rotate: every event but fake Rotates passes its
/// CRC32, every real event's `log_pos` is its true end offset (contiguous within a file), the
/// file starts with Format_description then Gtid_list. Returns the GTIDs of the groups.
fn check_stream(evs: &[Ev], crc_rotate: bool) -> Vec<String> {
    let (mut cur, _) = check_fake_rotate(&evs[0], crc_rotate);
    let mut gtids = Vec::new();
    for ev in &evs[1..] {
        if ev.h.event_type == event_type::ROTATE && ev.h.timestamp == 0 {
            (cur, _) = check_fake_rotate(ev, crc_rotate);
            continue;
        }
        check_event(&ev.bytes).unwrap_or_else(|e| panic!("{:?}: {e:?}", ev.h));
        let artificial = ev.h.flags & ARTIFICIAL != 0;
        if ev.h.event_type == event_type::HEARTBEAT || ev.h.log_pos == 0 {
            continue;
        }
        if artificial {
            cur = ev.h.log_pos as u64;
            continue;
        }
        assert_eq!(
            ev.h.log_pos as u64,
            cur + ev.h.event_size as u64,
            "log_pos of {:?} after offset {cur}",
            ev.h
        );
        cur = ev.h.log_pos as u64;
        if ev.h.event_type == event_type::GTID {
            let seq = u64::from_le_bytes(ev.body()[..8].try_into().expect("seq"));
            let domain = u32::from_le_bytes(ev.body()[8..12].try_into().expect("domain"));
            gtids.push(format!("{domain}-{}-{seq}", ev.h.server_id));
        }
    }
    gtids
}

/// The event types right after the first fake Rotate.
fn first_types(evs: &[Ev], n: usize) -> Vec<u8> {
    evs[1..].iter().take(n).map(|e| e.h.event_type).collect()
}

/// The primary with a table and `n` committed rows; returns it.
fn primary_with_rows(dir: &Path, n: u32) -> Onelog {
    let server = Onelog::start(dir, &[]);
    sql(
        server.port,
        "CREATE DATABASE cdc; CREATE TABLE cdc.t (id INT NOT NULL PRIMARY KEY, v VARCHAR(20))",
    );
    for i in 0..n {
        sql(
            server.port,
            &format!("INSERT INTO cdc.t VALUES ({i}, 'r{i}')"),
        );
    }
    server
}

/// go-mysql's `registerSlave` queries and COM_REGISTER_SLAVE (§3.2 steps 1–6).
fn go_mysql_connect(port: u16, server_id: u32) -> RawConn {
    let mut c = RawConn::connect(port).expect("connecting");
    let rows = c.query_ok("SHOW GLOBAL VARIABLES LIKE 'BINLOG_CHECKSUM'");
    assert_eq!(rows.len(), 1, "{rows:?}");
    c.query_ok("SET @master_binlog_checksum='NONE', @source_binlog_checksum='NONE'");
    c.query_ok("SET @mariadb_slave_capability=4");
    c.query_ok("SET @master_heartbeat_period = 1000000000, @source_heartbeat_period = 1000000000");
    c.query_ok("SET @slave_uuid = '3f1a2b3c-0000-4000-8000-000000000001', @replica_uuid = '3f1a2b3c-0000-4000-8000-000000000001'");
    c.command(&register_slave(server_id, "gohost", "root", 0))
        .expect("sending COM_REGISTER_SLAVE");
    let ok = c.read_packet().expect("COM_REGISTER_SLAVE's answer");
    assert_eq!(ok.first(), Some(&0x00), "COM_REGISTER_SLAVE: {ok:?}");
    c
}

#[test]
fn go_mysql_file_position_and_gtid_dumps() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = primary_with_rows(dir.path(), 5);
    let port = server.port;
    let all = sql_value(port, "SELECT @@gtid_binlog_pos");

    // From pos 4 of the first file, non-blocking: the whole log, then EOF.
    let mut c = go_mysql_connect(port, 101);
    c.command(&binlog_dump(4, 1, 101, "binlog.000001"))
        .expect("dump");
    let (evs, end) = read_stream(&mut c, |_| false);
    assert_eq!(end, End::Eof);
    assert_eq!(
        first_types(&evs, 2),
        vec![event_type::FORMAT_DESCRIPTION, event_type::GTID_LIST]
    );
    let gtids = check_stream(&evs, false);
    assert_eq!(gtids.last(), Some(&all), "{gtids:?}");
    // Every group of the log, in order: 0-1-1 ..= the current position.
    let history: Vec<String> = common::gtid_history(&all)
        .iter()
        .map(|g| g.to_string())
        .collect();
    assert_eq!(gtids, history);
    assert!(
        gtids.len() >= 7,
        "CREATE DATABASE, CREATE TABLE, 5 rows: {gtids:?}"
    );

    // canal: the position from SHOW MASTER STATUS, blocking; a later commit arrives.
    let status = sql(port, "SHOW MASTER STATUS");
    let cols: Vec<&str> = status.trim_end().split('\t').collect();
    let (file, pos): (&str, u32) = (cols[0], cols[1].parse().expect("Position"));
    let mut c = go_mysql_connect(port, 102);
    c.command(&binlog_dump(pos, 0, 102, file)).expect("dump");
    sql(port, "INSERT INTO cdc.t VALUES (100, 'later')");
    let (evs, _) = read_stream(&mut c, |evs| {
        evs.last()
            .is_some_and(|e| e.h.event_type == event_type::XID)
    });
    let (start, name) = check_fake_rotate(&evs[0], false);
    assert_eq!((start, name.as_str()), (pos as u64, file));
    // Mid-file start: a Format_description with log_pos 0, then the new group.
    assert_eq!(evs[1].h.event_type, event_type::FORMAT_DESCRIPTION);
    assert_eq!(evs[1].h.log_pos, 0);
    let gtids = check_stream(&evs, false);
    assert_eq!(gtids, vec![sql_value(port, "SELECT @@gtid_binlog_pos")]);

    // GTID start (MariaDB flavor): pos 0, empty file name, strict mode.
    let mut c = go_mysql_connect(port, 103);
    let from = gtids_before_last(&all);
    c.query_ok(&format!("SET @slave_connect_state='{from}'"));
    c.query_ok("SET @slave_gtid_strict_mode=1");
    c.command(&binlog_dump(0, 1, 103, "")).expect("dump");
    let (evs, end) = read_stream(&mut c, |_| false);
    assert_eq!(end, End::Eof);
    let gtids = check_stream(&evs, false);
    assert_eq!(
        gtids,
        vec![all.clone(), sql_value(port, "SELECT @@gtid_binlog_pos")],
        "the groups after {from}"
    );
}

/// `D-S-N` → `D-S-(N-1)`.
fn gtids_before_last(pos: &str) -> String {
    let (head, seq) = pos.rsplit_once('-').expect("a GTID");
    format!("{head}-{}", seq.parse::<u64>().expect("seq") - 1)
}

#[test]
fn debezium_gtid_dump_tolerates_com_ping() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = primary_with_rows(dir.path(), 3);
    let port = server.port;
    let mut c = RawConn::connect(port).expect("connecting");
    // BinaryLogClient's queries (§3.3).
    let st = c.query_ok("show master status");
    assert_eq!(st.len(), 1, "{st:?}");
    let cs = c.query_ok("show global variables like 'binlog_checksum'");
    assert_eq!(cs[0][1].as_deref(), Some("CRC32"));
    c.query_ok("set @master_binlog_checksum= @@global.binlog_checksum");
    assert_eq!(c.query_ok("select @@server_id")[0][0].as_deref(), Some("1"));
    c.query_ok("SET @mariadb_slave_capability=4");
    let pos = sql_value(port, "SELECT @@gtid_binlog_pos");
    c.query_ok(&format!("SET @slave_connect_state = '{pos}'"));
    c.query_ok("SET @slave_gtid_strict_mode = 0");
    c.query_ok("SET @slave_gtid_ignore_duplicates = 0");
    // No COM_REGISTER_SLAVE; blocking dump from pos 0, file "", flags 0.
    c.command(&binlog_dump(0, 0, 5400, "")).expect("dump");
    // The start: fake Rotate (with CRC32 this time), FD, Gtid_list, checkpoint.
    let (mut evs, _) = read_stream(&mut c, |evs| evs.len() >= 3);
    // The keep-alive thread's COM_PING on the dump connection: must not break the dump.
    c.command(&[0x0e]).expect("COM_PING");
    sql(port, "INSERT INTO cdc.t VALUES (50, 'after ping')");
    let (more, _) = read_stream(&mut c, |evs| {
        evs.last()
            .is_some_and(|e| e.h.event_type == event_type::XID)
    });
    evs.extend(more);
    assert_eq!(
        first_types(&evs, 2),
        vec![event_type::FORMAT_DESCRIPTION, event_type::GTID_LIST]
    );
    let gtids = check_stream(&evs, true);
    assert_eq!(gtids, vec![sql_value(port, "SELECT @@gtid_binlog_pos")]);
    // The connection of another client is unaffected.
    assert_eq!(sql_value(port, "SELECT COUNT(*) FROM cdc.t"), "4");
}
