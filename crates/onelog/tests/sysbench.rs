//! sysbench 1.0.20 (Debian's) against the real `onelog` binary: every bundled workload,
//! prepare/run/cleanup, with server-side prepared statements (`--db-ps-mode=auto`, sysbench's
//! default) and without (`--db-ps-mode=disable`), at 1 and 16 threads.
//!
//! Each run must exit 0 with no reconnects and no FATAL line, and the data must afterwards be
//! what the workload implies, checked through the `mariadb` CLI against a full snapshot of the
//! tables taken between prepare and run:
//! - read-only workloads (oltp_read_only, oltp_point_select, select_random_points,
//!   select_random_ranges): every row byte-identical;
//! - oltp_update_index: same ids, `c`/`pad` unchanged, `SUM(k)` grew by exactly the number of
//!   transactions (each one is `k = k + 1` on an existing id);
//! - oltp_update_non_index: same ids, `k` and `pad` unchanged;
//! - oltp_delete: the remaining rows are a subset of the old ones, unchanged, and at most one
//!   row went per transaction;
//! - oltp_insert: old rows unchanged, exactly one new row per transaction;
//! - oltp_write_only, oltp_read_write: the set of ids per table is unchanged (each transaction
//!   deletes an id and inserts it back);
//! - bulk_insert: each thread's table holds exactly ids 1..n with k = id, and the rows of all
//!   tables add up to the transactions sysbench counted.
//!
//! "ignored errors" (sysbench retries deadlocks 1213 and lock wait timeouts 1205) must be 0
//! everywhere except oltp_write_only/oltp_read_write at 16 threads: there transactions lock
//! several rows in random order, so deadlocks are legitimate (MariaDB 10.11 reports about 5%
//! of transactions deadlocked with these very settings); the id-set check proves each one was
//! rolled back as a whole. A missing sysbench is a failure, never a skip.

mod common;

use std::collections::BTreeMap;
use std::process::Command;
use std::time::Duration;

use common::{require_tool, run_bounded, sql, sql_value, Onelog};

const TABLES: usize = 2;
const TABLE_SIZE: usize = 1000;
const RUN_SECONDS: u32 = 3;
const SEED: u32 = 20261121;
const SYSBENCH_TIMEOUT: Duration = Duration::from_secs(300);

#[derive(Clone, Copy, Debug, PartialEq)]
enum Expect {
    Unchanged,
    UpdateIndex,
    UpdateNonIndex,
    Delete,
    Insert,
    SameIds,
    Bulk,
}

/// One row of an sbtest table: id, k, c, pad.
type Row = (i64, i64, String, String);
type Tables = BTreeMap<String, BTreeMap<i64, Row>>;

/// Tables a workload runs on: select_random_* refuse `--tables` > 1.
fn tables_for(workload: &str) -> usize {
    if workload.starts_with("select_random_") {
        1
    } else {
        TABLES
    }
}

fn sysbench(workload: &str, command: &str, port: u16, db: &str, ps: &str, threads: u32) -> String {
    require_tool("sysbench");
    let mut cmd = Command::new("sysbench");
    cmd.arg(workload).args([
        "--db-driver=mysql",
        "--mysql-host=127.0.0.1",
        &format!("--mysql-port={port}"),
        "--mysql-user=root",
        &format!("--mysql-db={db}"),
        &format!("--db-ps-mode={ps}"),
        &format!("--threads={threads}"),
        &format!("--tables={}", tables_for(workload)),
        &format!("--table-size={TABLE_SIZE}"),
        &format!("--time={RUN_SECONDS}"),
        &format!("--rand-seed={SEED}"),
    ]);
    if workload == "bulk_insert" {
        // Bound the rows too: sysbench batches them into large multi-row INSERTs.
        cmd.arg("--events=200000");
    } else {
        cmd.arg("--events=0");
    }
    cmd.arg(command);
    let out = run_bounded(&mut cmd, None, SYSBENCH_TIMEOUT);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success() && !stdout.contains("FATAL") && !stderr.contains("FATAL"),
        "sysbench {workload} {command} (ps-mode={ps}, threads={threads}) failed: {}\n\
         stdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    stdout
}

/// The number in a sysbench statistics line such as `    reconnects:   0   (0.00 per sec.)`.
fn stat(output: &str, label: &str) -> u64 {
    output
        .lines()
        .find_map(|l| {
            l.trim_start()
                .strip_prefix(label)?
                .split_whitespace()
                .next()?
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("no '{label}' line in sysbench's output:\n{output}"))
}

fn snapshot(port: u16, db: &str, tables: &[String]) -> Tables {
    let mut out = Tables::new();
    for t in tables {
        let text = sql(
            port,
            &format!("SELECT id, k, c, pad FROM {db}.{t} ORDER BY id"),
        );
        let mut rows = BTreeMap::new();
        for line in text.lines() {
            let f: Vec<&str> = line.split('\t').collect();
            assert_eq!(f.len(), 4, "bad row {line:?} in {db}.{t}");
            let id: i64 = f[0].parse().unwrap();
            let row = (
                id,
                f[1].parse().unwrap(),
                f[2].to_string(),
                f[3].to_string(),
            );
            assert!(
                rows.insert(id, row).is_none(),
                "duplicate id {id} in {db}.{t}"
            );
        }
        out.insert(t.clone(), rows);
    }
    out
}

fn sbtest_tables(n: usize) -> Vec<String> {
    (1..=n).map(|i| format!("sbtest{i}")).collect()
}

fn run_one(server: &Onelog, workload: &str, expect: Expect, ps: &str, threads: u32) {
    let port = server.port;
    let db = format!("sb_{ps}_{threads}");
    let ctx = format!("{workload} ps-mode={ps} threads={threads}");
    sql(port, &format!("CREATE DATABASE {db}"));
    sysbench(workload, "prepare", port, &db, ps, threads);

    let tables = if expect == Expect::Bulk {
        sbtest_tables(threads as usize)
    } else {
        sbtest_tables(tables_for(workload))
    };
    let before = if expect == Expect::Bulk {
        Tables::new()
    } else {
        let b = snapshot(port, &db, &tables);
        for (t, rows) in &b {
            assert_eq!(rows.len(), TABLE_SIZE, "{ctx}: prepare left {t} wrong");
            let ids: Vec<i64> = rows.keys().copied().collect();
            let want: Vec<i64> = (1..=TABLE_SIZE as i64).collect();
            assert_eq!(ids, want, "{ctx}: prepare's AUTO_INCREMENT ids in {t}");
        }
        b
    };

    let out = sysbench(workload, "run", port, &db, ps, threads);
    let transactions = stat(&out, "transactions:");
    let ignored = stat(&out, "ignored errors:");
    let reconnects = stat(&out, "reconnects:");
    eprintln!("{ctx}: {transactions} transactions, {ignored} ignored errors");
    assert_eq!(reconnects, 0, "{ctx}: reconnects\n{out}");
    assert!(transactions > 0, "{ctx}: no transaction ran\n{out}");
    let deadlocks_possible = threads > 1 && expect == Expect::SameIds;
    if !deadlocks_possible {
        assert_eq!(ignored, 0, "{ctx}: ignored errors\n{out}");
    }

    if expect == Expect::Bulk {
        check_bulk(port, &db, &tables, transactions, &ctx);
    } else {
        let after = snapshot(port, &db, &tables);
        check(expect, &before, &after, transactions, &ctx);
    }

    sysbench(workload, "cleanup", port, &db, ps, threads);
    let left = sql(port, &format!("SHOW TABLES FROM {db}"));
    assert_eq!(left.trim(), "", "{ctx}: cleanup left tables");
    sql(port, &format!("DROP DATABASE {db}"));
}

fn check(expect: Expect, before: &Tables, after: &Tables, transactions: u64, ctx: &str) {
    let rows = |t: &Tables| t.values().map(|r| r.len()).sum::<usize>();
    let sum_k = |t: &Tables| {
        t.values()
            .flat_map(|r| r.values())
            .map(|r| r.1)
            .sum::<i64>()
    };
    match expect {
        Expect::Unchanged => assert!(before == after, "{ctx}: a read-only workload changed data"),
        Expect::UpdateIndex => {
            for (t, b) in before {
                let a = &after[t];
                assert!(b.keys().eq(a.keys()), "{ctx}: ids of {t} changed");
                for (id, row) in b {
                    let new = &a[id];
                    assert_eq!((&row.2, &row.3), (&new.2, &new.3), "{ctx}: {t} id {id}");
                }
            }
            assert_eq!(
                sum_k(after) - sum_k(before),
                transactions as i64,
                "{ctx}: SUM(k) must grow by one per UPDATE ... SET k=k+1"
            );
        }
        Expect::UpdateNonIndex => {
            for (t, b) in before {
                let a = &after[t];
                assert!(b.keys().eq(a.keys()), "{ctx}: ids of {t} changed");
                for (id, row) in b {
                    let new = &a[id];
                    assert_eq!((row.1, &row.3), (new.1, &new.3), "{ctx}: {t} id {id}");
                }
            }
        }
        Expect::Delete => {
            for (t, a) in after {
                for (id, row) in a {
                    assert_eq!(Some(row), before[t].get(id), "{ctx}: {t} id {id}");
                }
            }
            let gone = rows(before) - rows(after);
            assert!(
                gone as u64 <= transactions,
                "{ctx}: {gone} rows deleted by {transactions} single-row deletes"
            );
        }
        Expect::Insert => {
            for (t, b) in before {
                for (id, row) in b {
                    assert_eq!(Some(row), after[t].get(id), "{ctx}: {t} id {id}");
                }
            }
            assert_eq!(
                (rows(after) - rows(before)) as u64,
                transactions,
                "{ctx}: one new row per INSERT"
            );
        }
        Expect::SameIds => {
            for (t, b) in before {
                assert!(
                    b.keys().eq(after[t].keys()),
                    "{ctx}: the ids of {t} changed (a DELETE+INSERT pair was split)"
                );
            }
        }
        Expect::Bulk => unreachable!(),
    }
}

fn check_bulk(port: u16, db: &str, tables: &[String], transactions: u64, ctx: &str) {
    let mut total = 0u64;
    for t in tables {
        let v = sql_value(
            port,
            &format!(
                "SELECT COUNT(*), COALESCE(MIN(id), 0), COALESCE(MAX(id), 0), \
                 COALESCE(SUM(k = id), 0) FROM {db}.{t}"
            ),
        );
        let f: Vec<u64> = v.split('\t').map(|x| x.parse().unwrap()).collect();
        let (count, min, max, k_is_id) = (f[0], f[1], f[2], f[3]);
        if count > 0 {
            assert_eq!(
                (min, max),
                (1, count),
                "{ctx}: {t} must hold ids 1..{count}"
            );
        }
        assert_eq!(k_is_id, count, "{ctx}: {t}: k = id in every row");
        total += count;
    }
    assert_eq!(total, transactions, "{ctx}: rows inserted vs events");
}

fn matrix(workload: &str, expect: Expect) {
    let dir = tempfile::tempdir().unwrap();
    let server = Onelog::start(dir.path(), &["--max-connections=200"]);
    for ps in ["auto", "disable"] {
        for threads in [1, 16] {
            run_one(&server, workload, expect, ps, threads);
        }
    }
}

#[test]
fn oltp_read_write_keeps_every_id() {
    matrix("oltp_read_write", Expect::SameIds);
}

#[test]
fn oltp_read_only_changes_nothing() {
    matrix("oltp_read_only", Expect::Unchanged);
}

#[test]
fn oltp_write_only_keeps_every_id() {
    matrix("oltp_write_only", Expect::SameIds);
}

#[test]
fn oltp_point_select_changes_nothing() {
    matrix("oltp_point_select", Expect::Unchanged);
}

#[test]
fn oltp_insert_adds_one_row_per_transaction() {
    matrix("oltp_insert", Expect::Insert);
}

#[test]
fn oltp_delete_removes_at_most_one_row_per_transaction() {
    matrix("oltp_delete", Expect::Delete);
}

#[test]
fn oltp_update_index_adds_one_to_k_per_transaction() {
    matrix("oltp_update_index", Expect::UpdateIndex);
}

#[test]
fn oltp_update_non_index_keeps_k() {
    matrix("oltp_update_non_index", Expect::UpdateNonIndex);
}

#[test]
fn bulk_insert_rows_match_events() {
    matrix("bulk_insert", Expect::Bulk);
}

#[test]
fn select_random_points_changes_nothing() {
    matrix("select_random_points", Expect::Unchanged);
}

#[test]
fn select_random_ranges_changes_nothing() {
    matrix("select_random_ranges", Expect::Unchanged);
}
