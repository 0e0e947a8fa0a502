//! EXPLAIN (issue 15 part 4): MariaDB's traditional table for the plan onelog runs: the access
//! type, key, key_len and ref of each table in nesting order, and the Extra words, for the
//! single-table paths (const, ref, range, ALL) and each join access (eq_ref, ref, hash join,
//! loop); statements EXPLAIN cannot show whole are refused.

use onelog_sql::Session;

mod common;
use common::{fail, ok, text_rows, Db};

fn session(db: &Db) -> Session {
    let mut s = Session::new(db.server.clone(), 1, "root", "localhost");
    ok(&mut s, "CREATE DATABASE j");
    ok(&mut s, "USE j");
    ok(
        &mut s,
        "CREATE TABLE a (id INT PRIMARY KEY, x INT, s VARCHAR(10), KEY kx (x))",
    );
    ok(
        &mut s,
        "CREATE TABLE b (id INT PRIMARY KEY, aid INT, y INT)",
    );
    ok(
        &mut s,
        "CREATE TABLE c (id BIGINT PRIMARY KEY, bid INT NOT NULL, KEY kb (bid))",
    );
    ok(
        &mut s,
        "INSERT INTO a VALUES (1,10,'p'),(2,20,'q'),(3,30,'r')",
    );
    ok(&mut s, "INSERT INTO b VALUES (1,1,100),(2,1,200)");
    s
}

/// Each line as `table type key key_len ref rows | Extra`.
fn plan(s: &mut Session, sql: &str) -> Vec<String> {
    text_rows(s, &format!("EXPLAIN {sql}"))
        .iter()
        .map(|r| {
            assert_eq!(r[0..2], ["1", "SIMPLE"], "{sql}");
            format!(
                "{} {} {} {} {} {} | {}",
                r[2], r[3], r[5], r[6], r[7], r[8], r[9]
            )
        })
        .collect()
}

#[test]
fn explain_shows_the_plan_run() {
    let db = Db::open("explain");
    let mut s = session(&db);
    let cases: &[(&str, &[&str])] = &[
        ("SELECT 1", &["NULL NULL NULL NULL NULL NULL | No tables used"]),
        ("SELECT * FROM a", &["a ALL NULL NULL NULL 3 | "]),
        ("SELECT * FROM a WHERE id = 2", &["a const PRIMARY 4 const 1 | "]),
        ("SELECT * FROM a WHERE x = 10", &["a ref kx 5 const 3 | "]),
        ("SELECT * FROM a WHERE id > 1", &["a range PRIMARY 4 NULL 3 | Using where"]),
        (
            "SELECT s, COUNT(*) FROM a WHERE s <> 'x' GROUP BY s",
            &["a ALL NULL NULL NULL 3 | Using where; Using temporary; Using filesort"],
        ),
        (
            "SELECT * FROM b JOIN a ON a.id = b.aid",
            &["b ALL NULL NULL NULL 2 | ", "a eq_ref PRIMARY 4 j.b.aid 1 | "],
        ),
        (
            "SELECT * FROM a JOIN c ON c.bid = a.id AND c.id > 0",
            &["a ALL NULL NULL NULL 3 | ", "c ref kb 4 j.a.id 0 | Using where"],
        ),
        (
            "SELECT * FROM a JOIN b ON a.id = b.aid",
            &[
                "a ALL NULL NULL NULL 3 | ",
                "b hash_ALL #hash#$hj 5 j.a.id 2 | Using where; Using join buffer (flat, BNLH join)",
            ],
        ),
        (
            "SELECT * FROM a LEFT JOIN b ON b.y > a.x",
            &[
                "a ALL NULL NULL NULL 3 | ",
                "b ALL NULL NULL NULL 2 | Using where; Using join buffer (flat, BNL join)",
            ],
        ),
    ];
    for (sql, want) in cases {
        assert_eq!(plan(&mut s, sql), *want, "{sql}");
    }
    let e = fail(
        &mut s,
        "EXPLAIN SELECT * FROM a WHERE id IN (SELECT aid FROM b)",
    );
    assert_eq!(e.code, 1235);
}
