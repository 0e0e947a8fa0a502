//! `kill -9` of the real server under concurrent committing load, many times, in each binlog
//! storage mode: engine (the log is the binlog), `--binlog-storage=file --sync-binlog=1`
//! (classic files written with two-phase commit) and engine + `--binlog-file-mirror=ON`; and
//! with the paged table store (`--table-store=paged`, checkpoints into its base every second,
//! so kills land before, during and after them).
//!
//! Each round: start `onelog serve` (durability 1, 32 KiB log segments and binlog files so the
//! rounds cross many rotations) on the same data directory, run CLIENTS `mysql_async`
//! connections that each insert rows `(client, seq)` and move their row of `counters` to `seq`
//! (alternately as two autocommit statements and as one explicit transaction), record every
//! commit the server acknowledged, and SIGKILL the server after a seeded random number of
//! acknowledgements. Then:
//!
//! 1. the data directory is copied as the kill left it (the server is dead: nothing changes
//!    under the copy);
//! 2. the server restarts on the original directory, and through SQL every acknowledged insert
//!    is present with its value, each client has at most one unacknowledged (in-flight) extra
//!    row, the next `seq` in line, and each counter is at least its acknowledged value and
//!    never ahead of the client's rows;
//! 3. file mode: the classic binlog files' GTIDs are exactly the engine's history
//!    (`@@gtid_binlog_pos`: every group, in order, nothing more: in-doubt groups were
//!    committed or rolled back consistently); mirror: after the restart (the mirror catches up
//!    before the server listens) the mirror's files hold every group of the log;
//! 4. log replay equals recovery: the copy is opened with the engine library (recovery =
//!    newest checkpoint + log tail; in file mode with the copy's binlog files deciding the
//!    in-doubt groups) and, separately, every Transaction/DDL record of the copy's log from
//!    LSN 0 is applied with `Engine::apply_logged_group` to a fresh engine (the replica
//!    path); both engines' `Snapshot::dump()` (every table, system tables included) must be
//!    equal, and the recovered test tables must equal what the restarted server returns for
//!    `SELECT ... ORDER BY` primary key.
//!
//! Rounds, targets and the interleaving are derived from a seed printed at the start (set
//! `ONELOG_KILL9_SEED` to replay a failing sequence of kill points; thread timing still varies,
//! which is the point of a kill test). Every wait is bounded.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mysql_async::prelude::*;
use mysql_async::{Conn, OptsBuilder, TxOpts};
use onelog_binlog::Value;
use onelog_engine::{Engine, EngineOptions, TableStore};
use onelog_log::{
    BinlogStorage, ClassicOptions, Durability, ReadStart, ReaderOptions, RecordKind, StdFs,
};

use common::Onelog;

const ROUNDS: u32 = 20;
/// Rounds of the file-mode and mirror variants (each round also checks the binlog files).
const BINLOG_FILE_ROUNDS: u32 = 6;
const CLIENTS: u32 = 4;
const SEGMENT: &str = "32K";
const SEGMENT_BYTES: u64 = 32 << 10;
const ACK_TIMEOUT: Duration = Duration::from_secs(60);

/// splitmix64: a tiny seeded generator, enough to pick kill points reproducibly.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// What the server acknowledged to the clients.
#[derive(Default)]
struct Acked {
    /// (client, seq) -> val of every acknowledged insert.
    rows: BTreeMap<(i64, i64), String>,
    /// client -> highest acknowledged counter value.
    counters: BTreeMap<i64, i64>,
}

async fn connect(port: u16) -> Result<Conn, mysql_async::Error> {
    let opts = OptsBuilder::default()
        .ip_or_hostname("127.0.0.1")
        .tcp_port(port)
        .user(Some("root"))
        .db_name(Some("k9"))
        .prefer_socket(false);
    Conn::new(opts).await
}

/// One client: commits until the server dies. Sends one message per acknowledgement.
async fn client(
    port: u16,
    client: i64,
    mut seq: i64,
    round: u32,
    acked: Arc<Mutex<Acked>>,
    tick: mpsc::Sender<()>,
) {
    let Ok(mut conn) = connect(port).await else {
        return;
    };
    loop {
        let val = format!("r{round}-c{client}-s{seq}");
        if seq % 2 == 0 {
            // Two autocommit statements: two acknowledged commits.
            let r = conn
                .exec_drop(
                    "INSERT INTO acked (client, seq, val) VALUES (?, ?, ?)",
                    (client, seq, &val),
                )
                .await;
            if r.is_err() {
                return;
            }
            acked
                .lock()
                .unwrap()
                .rows
                .insert((client, seq), val.clone());
            let _ = tick.send(());
            let r = conn
                .exec_drop("UPDATE counters SET n = ? WHERE client = ?", (seq, client))
                .await;
            if r.is_err() {
                return;
            }
            acked.lock().unwrap().counters.insert(client, seq);
            let _ = tick.send(());
        } else {
            // One explicit transaction: acknowledged by COMMIT's OK.
            let Ok(mut tx) = conn.start_transaction(TxOpts::default()).await else {
                return;
            };
            let ok = tx
                .exec_drop(
                    "INSERT INTO acked (client, seq, val) VALUES (?, ?, ?)",
                    (client, seq, &val),
                )
                .await
                .is_ok()
                && tx
                    .exec_drop("UPDATE counters SET n = ? WHERE client = ?", (seq, client))
                    .await
                    .is_ok();
            if !ok || tx.commit().await.is_err() {
                return;
            }
            let mut a = acked.lock().unwrap();
            a.rows.insert((client, seq), val);
            a.counters.insert(client, seq);
            drop(a);
            let _ = tick.send(());
        }
        seq += 1;
    }
}

/// Copies a data directory's regular files (the unix socket is skipped).
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let ty = entry.file_type().unwrap();
        let dest = to.join(entry.file_name());
        if ty.is_dir() {
            copy_dir(&entry.path(), &dest);
        } else if ty.is_file() {
            std::fs::copy(entry.path(), &dest).unwrap();
        }
    }
}

/// The engine directory inside a data directory: the one holding `binlog/`.
fn engine_dir(datadir: &Path) -> PathBuf {
    if datadir.join("binlog").is_dir() {
        return datadir.to_path_buf();
    }
    for entry in std::fs::read_dir(datadir).unwrap() {
        let p = entry.unwrap().path();
        if p.join("binlog").is_dir() {
            return p;
        }
    }
    panic!("no binlog/ directory under {}", datadir.display());
}

/// How the server under test keeps its binlog.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Storage {
    Engine,
    /// `--binlog-storage=file --sync-binlog=1`.
    File,
    /// `--binlog-file-mirror=ON`.
    Mirror,
    /// `--table-store=paged --checkpoint-interval=1`.
    Paged,
}

impl Storage {
    fn server_args(self) -> Vec<String> {
        let mut a = vec![
            "--innodb-flush-log-at-trx-commit=1".to_string(),
            format!("--max-binlog-size={SEGMENT}"),
        ];
        match self {
            Storage::Engine => {}
            Storage::File => {
                a.push("--binlog-storage=file".to_string());
                a.push("--sync-binlog=1".to_string());
            }
            Storage::Mirror => a.push("--binlog-file-mirror=ON".to_string()),
            Storage::Paged => {
                a.push("--table-store=paged".to_string());
                a.push("--checkpoint-interval=1".to_string());
            }
        }
        a
    }
}

/// Engine options for the copy: file mode opens the copy's classic files too (they decide
/// the in-doubt groups), as the server does.
fn engine_options(dir: &Path, storage: Storage) -> EngineOptions {
    let mut o = EngineOptions::new(dir);
    o.log.segment_size = SEGMENT_BYTES;
    o.log.durability = Durability::Level0;
    o.background_checkpoints = false;
    // The server kept its tables where `Onelog::start` put them: the paged store for
    // `Storage::Paged`, and for every server of a run under `ONELOG_TEST_TABLE_STORE=paged`.
    if storage == Storage::Paged || common::test_table_store().as_deref() == Some("paged") {
        o.table_store = TableStore::Paged {
            dir: None,
            memory_bytes: 16 << 20,
        };
    }
    if storage == Storage::File {
        o.log.binlog_storage = BinlogStorage::File {
            classic: ClassicOptions {
                dir: dir.to_path_buf(),
                basename: "binlog".to_string(),
                max_size: SEGMENT_BYTES,
                server_id: 1,
                server_version: "10.11.9-MariaDB-onelog".to_string(),
            },
            sync_binlog: 1,
        };
    }
    o
}

type Dump = BTreeMap<String, Vec<Vec<Value>>>;

/// Recovery of the copy, and a replay of its whole log into a fresh engine: both dumps and
/// the number of log segments.
fn recover_and_replay(copy: &Path, scratch: &Path, storage: Storage) -> (Dump, Dump, usize) {
    let (recovered, report) =
        Engine::open(StdFs::new(), engine_options(&engine_dir(copy), storage))
            .expect("recovering the copy");
    assert!(report.log.end_lsn > 0, "the copy's log is empty: {report}");
    let recovered_dump = recovered.snapshot().dump();

    let (fresh, _) =
        Engine::open(StdFs::new(), engine_options(scratch, Storage::Engine)).expect("fresh engine");
    let segments = recovered.log().segments();
    assert_eq!(
        segments.first().map(|s| s.start_lsn),
        Some(0),
        "the log was purged: a replay from the start is impossible"
    );
    let mut reader = recovered
        .log()
        .reader(
            ReadStart::Lsn(0),
            ReaderOptions {
                include_non_durable: true,
                include_state_records: false,
            },
        )
        .expect("reading the copy's log");
    let mut applied = 0u64;
    while let Some(rec) = reader.next().expect("reading a record") {
        match rec.kind {
            RecordKind::Transaction | RecordKind::Ddl => {
                fresh
                    .apply_logged_group(&rec.events, &rec.aux)
                    .unwrap_or_else(|e| panic!("replaying the record at LSN {}: {e}", rec.lsn));
                applied += 1;
            }
            _ => {}
        }
    }
    assert!(applied > 0, "no record replayed");
    assert_eq!(
        fresh.gtid_state().pos().to_string(),
        recovered.gtid_state().pos().to_string(),
        "GTID position after replay"
    );
    let replayed_dump = fresh.snapshot().dump();
    recovered.shutdown().unwrap();
    fresh.shutdown().unwrap();
    (recovered_dump, replayed_dump, segments.len())
}

fn render(v: &Value) -> String {
    match v {
        Value::Null => "NULL".to_string(),
        Value::Int(i) => i.to_string(),
        Value::UInt(u) => u.to_string(),
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        other => format!("{other:?}"),
    }
}

fn dump_table_text(dump: &Dump, table: &str) -> String {
    let rows = dump
        .get(table)
        .unwrap_or_else(|| panic!("{table} missing from the recovered engine"));
    rows.iter()
        .map(|r| r.iter().map(render).collect::<Vec<_>>().join("\t") + "\n")
        .collect()
}

/// Step 3 of the module docs, on the restarted server.
fn check_binlog_files(storage: Storage, server: &Onelog, datadir: &Path, round: u32) {
    let port = server.port;
    let log = server.log_text();
    match storage {
        Storage::Engine | Storage::Paged => return,
        Storage::File => {
            let line = log
                .lines()
                .find(|l| l.contains("two-phase commit recovery"))
                .unwrap_or_else(|| panic!("round {round}: no file-mode recovery report:\n{log}"));
            eprintln!("kill9 round {round}: {line}");
        }
        Storage::Mirror => {
            let line = log
                .lines()
                .find(|l| l.contains("binlog file mirror:"))
                .unwrap_or_else(|| panic!("round {round}: no mirror report:\n{log}"));
            eprintln!("kill9 round {round}: {line}");
        }
    }
    let pos = common::sql_value(port, "SELECT @@gtid_binlog_pos");
    let want = common::gtid_history(&pos);
    let files = common::classic_files(datadir);
    let got = common::classic_gtids(&files);
    assert_eq!(
        got.len(),
        want.len(),
        "round {round} ({storage:?}): the binlog files hold {} groups, gtid_binlog_pos {pos} \
         implies {} (files {files:?})",
        got.len(),
        want.len()
    );
    assert!(
        got == want,
        "round {round} ({storage:?}): the binlog files' GTIDs differ from the engine's history \
         ending at {pos}"
    );
}

#[test]
fn acknowledged_commits_survive_kill_9_and_recovery_equals_log_replay() {
    kill9_rounds(Storage::Engine, ROUNDS, 0x6f6e_656c_6f67);
}

#[test]
fn file_mode_at_sync_binlog_1_survives_kill_9_with_binlog_files_equal_to_the_engine_history() {
    kill9_rounds(Storage::File, BINLOG_FILE_ROUNDS, 0x6669_6c65);
}

#[test]
fn mirror_holds_every_group_of_the_log_after_kill_9_and_restart() {
    kill9_rounds(Storage::Mirror, BINLOG_FILE_ROUNDS, 0x6d69_7272);
}

#[test]
fn the_paged_store_survives_kill_9_during_checkpoints_into_its_base() {
    kill9_rounds(Storage::Paged, BINLOG_FILE_ROUNDS, 0x7061_6765);
}

fn kill9_rounds(storage: Storage, rounds: u32, default_seed: u64) {
    let seed: u64 = std::env::var("ONELOG_KILL9_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default_seed);
    eprintln!(
        "kill9 {storage:?}: seed {seed} (set ONELOG_KILL9_SEED={seed} to replay the kill points)"
    );
    let mut rng = Rng(seed);

    let dir = tempfile::tempdir().unwrap();
    let datadir = dir.path().join("data");
    let server_args = storage.server_args();
    let server_args: Vec<&str> = server_args.iter().map(String::as_str).collect();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();

    let mut server = Onelog::start(&datadir, &server_args);
    common::sql(
        server.port,
        "CREATE DATABASE k9; \
         CREATE TABLE k9.acked (client INT NOT NULL, seq INT NOT NULL, val VARCHAR(32) NOT NULL, \
                                PRIMARY KEY (client, seq)); \
         CREATE TABLE k9.counters (client INT NOT NULL PRIMARY KEY, n BIGINT NOT NULL)",
    );
    let inserts: Vec<String> = (0..CLIENTS).map(|c| format!("({c}, -1)")).collect();
    common::sql(
        server.port,
        &format!("INSERT INTO k9.counters VALUES {}", inserts.join(", ")),
    );

    let mut all_acked = Acked::default();
    let mut max_segments = 0;
    let mut next_seq: BTreeMap<i64, i64> = (0..CLIENTS as i64).map(|c| (c, 0)).collect();
    // Paged rounds: recoveries that found a checkpoint in the base.
    let mut from_base = 0;
    for round in 0..rounds {
        // Paged: long enough for the once-a-second checkpoints to run under the load.
        let target = match storage {
            Storage::Paged => 500 + rng.below(6000),
            _ => 20 + rng.below(600),
        };
        let acked = Arc::new(Mutex::new(Acked::default()));
        let (tick_tx, tick_rx) = mpsc::channel();
        let tasks: Vec<_> = (0..CLIENTS as i64)
            .map(|c| {
                runtime.spawn(client(
                    server.port,
                    c,
                    next_seq[&c],
                    round,
                    acked.clone(),
                    tick_tx.clone(),
                ))
            })
            .collect();
        drop(tick_tx);
        for n in 0..target {
            if tick_rx.recv_timeout(ACK_TIMEOUT).is_err() {
                panic!(
                    "round {round}: only {n} of {target} commits acknowledged; server log:\n{}",
                    server.log_text()
                );
            }
        }
        server.kill9();
        runtime.block_on(async {
            for t in tasks {
                tokio::time::timeout(Duration::from_secs(30), t)
                    .await
                    .expect("a client did not notice the dead server")
                    .unwrap();
            }
        });
        let acked = std::mem::take(&mut *acked.lock().unwrap());
        eprintln!(
            "kill9 round {round}: killed after {target} acknowledgements ({} rows acknowledged)",
            acked.rows.len()
        );
        all_acked.rows.extend(acked.rows);
        for (c, n) in acked.counters {
            all_acked.counters.insert(c, n);
        }

        let copy = dir.path().join(format!("copy{round}"));
        copy_dir(&datadir, &copy);

        server = Onelog::start(&datadir, &server_args);
        let port = server.port;
        if server
            .log_text()
            .contains("recovery: loaded checkpoint at LSN")
        {
            from_base += 1;
        }

        // 1. Every acknowledged commit is there; at most one in-flight extra per client.
        let rows_text = common::sql(
            port,
            "SELECT client, seq, val FROM k9.acked ORDER BY client, seq",
        );
        let mut present: BTreeMap<(i64, i64), String> = BTreeMap::new();
        for line in rows_text.lines() {
            let f: Vec<&str> = line.split('\t').collect();
            present.insert(
                (f[0].parse().unwrap(), f[1].parse().unwrap()),
                f[2].to_string(),
            );
        }
        for (key, val) in &all_acked.rows {
            assert_eq!(
                present.get(key),
                Some(val),
                "round {round}: acknowledged insert {key:?} lost after kill -9"
            );
        }
        let extras: BTreeSet<_> = present
            .keys()
            .filter(|k| !all_acked.rows.contains_key(k))
            .collect();
        for c in 0..CLIENTS as i64 {
            let mine: Vec<_> = extras.iter().filter(|k| k.0 == c).collect();
            assert!(
                mine.len() <= 1,
                "round {round}: client {c} has unacknowledged rows {mine:?}"
            );
        }
        let counters_text = common::sql(port, "SELECT client, n FROM k9.counters ORDER BY client");
        for line in counters_text.lines() {
            let f: Vec<i64> = line.split('\t').map(|x| x.parse().unwrap()).collect();
            let (c, n) = (f[0], f[1]);
            let acked_n = all_acked.counters.get(&c).copied().unwrap_or(-1);
            assert!(
                n >= acked_n,
                "round {round}: client {c} counter {n} < acknowledged {acked_n}"
            );
            let max_seq = present
                .keys()
                .filter(|k| k.0 == c)
                .map(|k| k.1)
                .max()
                .unwrap_or(-1);
            assert!(
                n <= max_seq,
                "round {round}: client {c} counter {n} ahead of its rows ({max_seq})"
            );
        }
        for c in 0..CLIENTS as i64 {
            let max_seq = present
                .keys()
                .filter(|k| k.0 == c)
                .map(|k| k.1)
                .max()
                .unwrap_or(-1);
            next_seq.insert(c, max_seq + 1);
        }
        // Rows that survived unacknowledged are now simply data.
        all_acked.rows = present.clone();

        // 3. The binlog files (file mode, mirror) hold exactly the engine's history.
        check_binlog_files(storage, &server, &datadir, round);

        // 4. Recovery of the copy = replay of its whole log; both = what the server serves.
        let scratch = dir.path().join(format!("replay{round}"));
        let (recovered, replayed, segments) = recover_and_replay(&copy, &scratch, storage);
        max_segments = max_segments.max(segments);
        assert!(
            recovered == replayed,
            "round {round}: recovered tables differ from a replay of the log (tables {:?})",
            recovered.keys().collect::<Vec<_>>()
        );
        assert_eq!(
            dump_table_text(&recovered, "k9.acked"),
            rows_text,
            "round {round}"
        );
        assert_eq!(
            dump_table_text(&recovered, "k9.counters"),
            counters_text,
            "round {round}"
        );
        std::fs::remove_dir_all(&copy).unwrap();
        std::fs::remove_dir_all(&scratch).unwrap();
    }
    assert!(
        max_segments > 2,
        "the load never rotated the log ({max_segments} segments): the test misses rotations"
    );
    if storage == Storage::Paged {
        eprintln!("kill9 Paged: {from_base} of {rounds} recoveries started from a checkpoint");
        assert!(
            from_base > 0,
            "no checkpoint into the base ran under the load"
        );
    }
    assert_eq!(server.stop().code(), Some(0), "{}", server.log_text());
}

/// Issue 15 part 4: a table without a primary key keeps its rows across kill -9 — identical
/// rows stay distinct, and an UPDATE / DELETE (LIMIT 1) of one of two identical rows changes
/// exactly one after recovery replays the log, and again after a restart from a checkpoint.
#[test]
fn a_table_without_primary_key_survives_kill_9_with_its_identical_rows() {
    let dir = tempfile::tempdir().expect("tempdir");
    let datadir = dir.path().join("onelog");
    let mut server = Onelog::start(&datadir, &[]);
    let port = server.port;
    common::sql(
        port,
        "CREATE DATABASE np; CREATE TABLE np.t (a INT, b VARCHAR(10)); \
         INSERT INTO np.t VALUES (1, 'x'), (1, 'x'), (1, 'x'), (2, NULL), (2, NULL); \
         UPDATE np.t SET b = 'y' WHERE a = 1 LIMIT 1; \
         DELETE FROM np.t WHERE a = 2 LIMIT 1",
    );
    let want = "1\tx\n1\tx\n1\ty\n2\tNULL\n";
    let rows = |port: u16| common::sql(port, "SELECT a, b FROM np.t ORDER BY a, b");
    assert_eq!(rows(port), want);
    server.kill9();
    let mut server = Onelog::start(&datadir, &[&format!("--port={port}")]);
    assert_eq!(rows(server.port), want, "after kill -9 (log replay)");
    common::sql(server.port, "DELETE FROM np.t WHERE b = 'x' LIMIT 1");
    server.stop();
    let server = Onelog::start(&datadir, &[&format!("--port={port}")]);
    assert_eq!(
        rows(server.port),
        "1\tx\n1\ty\n2\tNULL\n",
        "after a clean restart (checkpoint)"
    );
}
