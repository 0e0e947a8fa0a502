//! Range access paths and the streaming SELECT executor: IN lists and ORs of ranges over the
//! primary key and a secondary index return exactly the rows a full scan filtered by the same
//! WHERE returns, each once, in index order (overlapping ranges included), inside a
//! transaction with its own uncommitted changes too; LIMIT/OFFSET stop the scan without
//! changing the result; aggregates, GROUP BY, DISTINCT and ORDER BY see every row.

use onelog_sql::{Output, Session, Value};

mod common;
use common::{ok, Db};

fn session(db: &Db) -> Session {
    let mut s = Session::new(db.server.clone(), 1, "root", "localhost");
    ok(&mut s, "CREATE DATABASE IF NOT EXISTS sbtest");
    ok(&mut s, "USE sbtest");
    s
}

fn rows(s: &mut Session, sql: &str) -> Vec<Vec<Value>> {
    match ok(s, sql) {
        Output::Rows { rows, .. } => rows,
        o => panic!("{sql}: not rows: {o:?}"),
    }
}

fn exec(s: &mut Session, id: u32, params: &[Value]) -> Vec<Vec<Value>> {
    match s.execute(id, params) {
        Ok(Output::Rows { rows, .. }) => rows,
        o => panic!("execute {id}: {o:?}"),
    }
}

fn int(v: &Value) -> i64 {
    match v {
        Value::Int(i) => *i,
        Value::UInt(u) => *u as i64,
        o => panic!("not an integer: {o:?}"),
    }
}

/// `sbtest1` with `n` rows, k = id*7 mod 23 (so k values repeat), and index k_1 on k.
fn prepare(s: &mut Session, n: i64) {
    ok(
        s,
        "CREATE TABLE sbtest1(id INTEGER NOT NULL AUTO_INCREMENT, k INTEGER DEFAULT '0' NOT NULL, \
         c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id))",
    );
    let mut q = String::from("INSERT INTO sbtest1(k, c, pad) VALUES");
    for i in 1..=n {
        if i > 1 {
            q.push(',');
        }
        q.push_str(&format!(
            "({}, 'c{:03}', 'pad{}')",
            (i * 7) % 23,
            (i * 13) % 50,
            i
        ));
    }
    ok(s, &q);
    ok(s, "CREATE INDEX k_1 ON sbtest1(k)");
}

/// The WHERE clause evaluated on every row (`k+0` / `id+0` defeat the index planner).
fn full_scan(s: &mut Session, cols: &str, where_: &str) -> Vec<Vec<Value>> {
    let w = where_.replace("k ", "k+0 ").replace("id ", "id+0 ");
    rows(s, &format!("SELECT {cols} FROM sbtest1 WHERE {w}"))
}

fn sorted(mut v: Vec<Vec<Value>>) -> Vec<Vec<Value>> {
    v.sort_by_key(|r| (int(&r[0]), int(&r[1])));
    v
}

const WHERES: &[&str] = &[
    "k IN (3, 1, 3, 22, 5, 40)",
    "k BETWEEN 2 AND 6 OR k BETWEEN 4 AND 9 OR k BETWEEN 20 AND 20",
    "k BETWEEN 10 AND 5 OR k IN (7)",
    "k < 3 OR k > 20 OR k = 11",
    "k >= 15 OR k BETWEEN 0 AND 16",
    "id IN (5, 1, 99, 5, 60, 300)",
    "id BETWEEN 10 AND 20 OR id BETWEEN 15 AND 30 OR id < 3",
    "id > 90 OR id <= 2",
];

fn check_ranges(s: &mut Session, what: &str) {
    for w in WHERES {
        let by_k = w.starts_with('k');
        let got = rows(s, &format!("SELECT k, id FROM sbtest1 WHERE {w}"));
        let want = sorted(full_scan(s, "k, id", w));
        // Each row once, in index order: (k, id) for k_1, id for the primary key.
        let mut order = got.clone();
        if by_k {
            order = sorted(order);
        } else {
            order.sort_by_key(|r| int(&r[1]));
        }
        assert_eq!(got, order, "{what}: index order of {w}");
        assert_eq!(sorted(got), want, "{what}: rows of {w}");
        let n = rows(
            s,
            &format!("SELECT COUNT(*), SUM(k) FROM sbtest1 WHERE {w}"),
        );
        let full = full_scan(s, "COUNT(*), SUM(k)", w);
        assert_eq!(n, full, "{what}: aggregates of {w}");
    }
}

#[test]
fn in_lists_and_ors_of_ranges_return_each_matching_row_once_in_index_order() {
    let db = Db::open("ranges");
    let mut s = session(&db);
    prepare(&mut s, 100);
    check_ranges(&mut s, "committed");

    // Own uncommitted changes: rows move between k values, appear and disappear.
    ok(&mut s, "BEGIN");
    ok(&mut s, "UPDATE sbtest1 SET k = 3 WHERE id IN (10, 11, 12)");
    ok(
        &mut s,
        "UPDATE sbtest1 SET k = k + 1 WHERE k BETWEEN 5 AND 6",
    );
    ok(
        &mut s,
        "DELETE FROM sbtest1 WHERE id BETWEEN 40 AND 45 OR k = 22",
    );
    ok(
        &mut s,
        "INSERT INTO sbtest1(id, k, c, pad) VALUES (150, 4, 'x', 'y'), (2000, 21, 'x', 'y')",
    );
    check_ranges(&mut s, "own changes");
    ok(&mut s, "ROLLBACK");
    check_ranges(&mut s, "rolled back");
}

#[test]
fn prepared_sysbench_range_shapes_match_a_full_scan() {
    let db = Db::open("ranges-ps");
    let mut s = session(&db);
    prepare(&mut s, 300);
    let ranges = ["k BETWEEN ? AND ?"; 10].join(" OR ");
    let id = s
        .prepare(&format!("SELECT count(k) FROM sbtest1 WHERE {ranges}"))
        .unwrap()
        .stmt_id;
    let points = s
        .prepare("SELECT id, k, c, pad FROM sbtest1 WHERE k IN (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
        .unwrap()
        .stmt_id;
    let mut seed = 12345u64;
    let mut next = |m: i64| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((seed >> 33) % m as u64) as i64
    };
    for _ in 0..30 {
        let mut params = Vec::new();
        let mut text = Vec::new();
        for _ in 0..10 {
            let lo = next(25);
            params.push(Value::Int(lo));
            params.push(Value::Int(lo + 2));
            text.push(format!("k+0 BETWEEN {lo} AND {}", lo + 2));
        }
        let got = exec(&mut s, id, &params);
        let want = rows(
            &mut s,
            &format!("SELECT count(k) FROM sbtest1 WHERE {}", text.join(" OR ")),
        );
        assert_eq!(got, want);

        let ks: Vec<i64> = (0..10).map(|_| next(25)).collect();
        let params: Vec<Value> = ks.iter().map(|&k| Value::Int(k)).collect();
        let got = exec(&mut s, points, &params);
        let list = ks
            .iter()
            .map(|k| k.to_string())
            .collect::<Vec<_>>()
            .join(",");
        let want = rows(
            &mut s,
            &format!("SELECT id, k, c, pad FROM sbtest1 WHERE k+0 IN ({list}) ORDER BY k, id"),
        );
        assert_eq!(got, want);
    }
}

#[test]
fn limit_and_offset_stop_the_scan_without_changing_the_result() {
    let db = Db::open("ranges-limit");
    let mut s = session(&db);
    prepare(&mut s, 100);
    let all = rows(
        &mut s,
        "SELECT id FROM sbtest1 WHERE id BETWEEN 10 AND 60 AND k > 5",
    );
    assert_eq!(
        all,
        full_scan(&mut s, "id", "id BETWEEN 10 AND 60 AND k > 5")
    );
    for (limit, offset) in [(0, 0), (1, 0), (5, 0), (5, 3), (100, 0), (3, 100)] {
        let got = rows(
            &mut s,
            &format!(
                "SELECT id FROM sbtest1 WHERE id BETWEEN 10 AND 60 AND k > 5 LIMIT {offset}, {limit}"
            ),
        );
        let want: Vec<Vec<Value>> = all.iter().skip(offset).take(limit).cloned().collect();
        assert_eq!(got, want, "LIMIT {offset}, {limit}");
    }
    // DISTINCT and ORDER BY see every row before LIMIT applies.
    let got = rows(
        &mut s,
        "SELECT DISTINCT k FROM sbtest1 WHERE id BETWEEN 1 AND 100 ORDER BY k DESC LIMIT 3",
    );
    assert_eq!(
        got,
        vec![
            vec![Value::Int(22)],
            vec![Value::Int(21)],
            vec![Value::Int(20)]
        ]
    );
    let got = rows(
        &mut s,
        "SELECT DISTINCT k FROM sbtest1 WHERE id < 50 LIMIT 2",
    );
    assert_eq!(got.len(), 2);
    assert_ne!(got[0], got[1]);
}

#[test]
fn ordering_distinct_and_grouping_over_ranges() {
    let db = Db::open("ranges-order");
    let mut s = session(&db);
    prepare(&mut s, 100);
    // ORDER BY a projected column, then a column that is not projected.
    let got = rows(
        &mut s,
        "SELECT c, k FROM sbtest1 WHERE id BETWEEN 1 AND 100 ORDER BY c, id DESC",
    );
    let mut want = rows(&mut s, "SELECT c, k, id FROM sbtest1");
    want.sort_by(|a, b| {
        let (Value::Bytes(x), Value::Bytes(y)) = (&a[0], &b[0]) else {
            panic!("c is text");
        };
        x.cmp(y).then(int(&b[2]).cmp(&int(&a[2])))
    });
    let want: Vec<Vec<Value>> = want.into_iter().map(|r| r[..2].to_vec()).collect();
    assert_eq!(got, want);
    // DISTINCT c ORDER BY c: each value once, sorted.
    let got = rows(
        &mut s,
        "SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN 1 AND 100 ORDER BY c",
    );
    assert_eq!(got.len(), 50);
    let text = |r: &Vec<Value>| match &r[0] {
        Value::Bytes(b) => b.clone(),
        o => panic!("c is text: {o:?}"),
    };
    assert!(got.windows(2).all(|w| text(&w[0]) < text(&w[1])));
    // DISTINCT over two sort keys (duplicates adjacent) and over one (a set): same rows.
    let adjacent = rows(
        &mut s,
        "SELECT DISTINCT k, pad FROM sbtest1 WHERE id BETWEEN 1 AND 100 ORDER BY k DESC, pad",
    );
    let mut set = rows(
        &mut s,
        "SELECT DISTINCT k, pad FROM sbtest1 WHERE id BETWEEN 1 AND 100 ORDER BY k DESC",
    );
    set.sort_by(|a, b| {
        let (Value::Bytes(x), Value::Bytes(y)) = (&a[1], &b[1]) else {
            panic!("pad is text");
        };
        int(&b[0]).cmp(&int(&a[0])).then(x.cmp(y))
    });
    assert_eq!(adjacent, set);
    assert_eq!(
        rows(&mut s, "SELECT DISTINCT k FROM sbtest1 ORDER BY k").len(),
        23
    );
    // Aggregates over an empty range: one row.
    assert_eq!(
        rows(
            &mut s,
            "SELECT COUNT(*), SUM(k) FROM sbtest1 WHERE id BETWEEN 500 AND 600"
        ),
        vec![vec![Value::Int(0), Value::Null]]
    );
    // GROUP BY over an index range, HAVING, ORDER BY an aggregate.
    let got = rows(
        &mut s,
        "SELECT k, COUNT(*) AS n FROM sbtest1 WHERE k IN (1, 2, 3) GROUP BY k HAVING n > 0 ORDER BY k",
    );
    let want = rows(
        &mut s,
        "SELECT k, COUNT(*) AS n FROM sbtest1 WHERE k+0 IN (1, 2, 3) GROUP BY k ORDER BY k",
    );
    assert_eq!(got, want);
    assert_eq!(got.len(), 3);
}

/// A string key compared with a number compares as numbers (`'01' = 1` and `'1.0' = 1` hold,
/// as MariaDB answers), so no key lookup may serve it: every such row is found, on the
/// primary key and on a secondary index, in WHERE and in IN lists.
#[test]
fn string_keys_compared_with_numbers_find_every_numerically_equal_row() {
    let db = Db::open("ranges-string-keys");
    let mut s = session(&db);
    ok(
        &mut s,
        "CREATE TABLE sk (a VARCHAR(10) PRIMARY KEY, b VARCHAR(10), n INT, KEY kb (b))",
    );
    ok(
        &mut s,
        "INSERT INTO sk VALUES ('01','01',1),('1','1',2),('1.0','1.0',3),('x','x',4),('2','2',5)",
    );
    for q in [
        "SELECT n FROM sk WHERE a = 1 ORDER BY n",
        "SELECT n FROM sk WHERE b = 1 ORDER BY n",
        "SELECT n FROM sk WHERE a IN (1) ORDER BY n",
        "SELECT n FROM sk WHERE b IN (1.0) ORDER BY n",
    ] {
        let got: Vec<i64> = rows(&mut s, q).iter().map(|r| int(&r[0])).collect();
        assert_eq!(got, vec![1, 2, 3], "{q}");
    }
    // A string value still uses the key and matches exactly.
    let got: Vec<i64> = rows(&mut s, "SELECT n FROM sk WHERE a = '1'")
        .iter()
        .map(|r| int(&r[0]))
        .collect();
    assert_eq!(got, vec![2]);
}
