//! EXPLAIN (issue 15 part 4): MariaDB's traditional table for the plan onelog runs: the access
//! type, key, key_len and ref of each table in nesting order, and the Extra words, for the
//! single-table paths (const, ref, range, ALL) and each join access (eq_ref, ref, hash join,
//! loop); SELECTs nested in subqueries, derived tables, CTEs, views and set operations,
//! numbered and typed as MariaDB shows them; UPDATE, DELETE and INSERT; the forms not
//! built (EXTENDED, PARTITIONS, FORMAT=JSON) are refused.

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
    for sql in [
        "EXPLAIN EXTENDED SELECT * FROM a",
        "EXPLAIN PARTITIONS SELECT * FROM a",
        "EXPLAIN FORMAT=JSON SELECT * FROM a",
    ] {
        assert_eq!(fail(&mut s, sql).code, 1235, "{sql}");
    }
}

/// Each line as `id select_type table type key key_len ref rows | Extra`.
fn lines(s: &mut Session, sql: &str) -> Vec<String> {
    text_rows(s, &format!("EXPLAIN {sql}"))
        .iter()
        .map(|r| {
            format!(
                "{} {} {} {} {} {} {} {} | {}",
                r[0], r[1], r[2], r[3], r[5], r[6], r[7], r[8], r[9]
            )
        })
        .collect()
}

fn check(s: &mut Session, cases: &[(&str, &[&str])]) {
    for (sql, want) in cases {
        assert_eq!(lines(s, sql), *want, "{sql}");
    }
}

/// Statements with nested SELECTs: each SELECT numbered as MariaDB 10.11 numbers them (in
/// the order written), its select_type saying how onelog runs it, nested SELECTs listed
/// after the one holding them, the last written first (the shapes compared with MariaDB
/// 10.11's EXPLAIN of the same statements; only access types onelog does not have differ).
#[test]
fn explain_shows_nested_selects() {
    let db = Db::open("explain_nested");
    let mut s = session(&db);
    ok(
        &mut s,
        "CREATE VIEW v AS SELECT aid, COUNT(*) n FROM b GROUP BY aid",
    );
    let cases: &[(&str, &[&str])] = &[
        (
            "SELECT * FROM a WHERE id IN (SELECT aid FROM b)",
            &[
                "1 PRIMARY a ALL NULL NULL NULL 3 | ",
                "1 PRIMARY <subquery2> eq_ref distinct_key 4 func 1 | ",
                "2 MATERIALIZED b ALL NULL NULL NULL 2 | ",
            ],
        ),
        (
            "SELECT * FROM a WHERE id IN (SELECT aid FROM b) AND s <> 'z'",
            &[
                "1 PRIMARY a ALL NULL NULL NULL 3 | Using where",
                "1 PRIMARY <subquery2> eq_ref distinct_key 4 func 1 | ",
                "2 MATERIALIZED b ALL NULL NULL NULL 2 | ",
            ],
        ),
        (
            "SELECT * FROM a WHERE x NOT IN (SELECT y FROM b)",
            &[
                "1 PRIMARY a ALL NULL NULL NULL 3 | Using where",
                "2 MATERIALIZED b ALL NULL NULL NULL 2 | ",
            ],
        ),
        (
            "SELECT id, id IN (SELECT aid FROM b) FROM a",
            &[
                "1 PRIMARY a ALL NULL NULL NULL 3 | ",
                "2 MATERIALIZED b ALL NULL NULL NULL 2 | ",
            ],
        ),
        (
            "SELECT (SELECT MAX(y) FROM b WHERE b.aid = a.id) FROM a",
            &[
                "1 PRIMARY a ALL NULL NULL NULL 3 | ",
                "2 DEPENDENT SUBQUERY b ALL NULL NULL NULL 2 | Using where",
            ],
        ),
        (
            "SELECT * FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.aid = a.id)",
            &[
                "1 PRIMARY a ALL NULL NULL NULL 3 | ",
                "1 PRIMARY <subquery2> eq_ref distinct_key 4 func 1 | ",
                "2 MATERIALIZED b ALL NULL NULL NULL 2 | ",
            ],
        ),
        (
            "SELECT * FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.y > a.x)",
            &[
                "1 PRIMARY a ALL NULL NULL NULL 3 | Using where",
                "2 DEPENDENT SUBQUERY b ALL NULL NULL NULL 2 | Using where",
            ],
        ),
        (
            "SELECT (SELECT 1 FROM b LIMIT 1) x FROM (SELECT * FROM c GROUP BY bid) d \
             WHERE d.id > (SELECT MIN(y) FROM b)",
            &[
                "1 PRIMARY <derived3> ALL NULL NULL NULL 0 | Using where",
                "4 SUBQUERY b ALL NULL NULL NULL 2 | ",
                "3 DERIVED c ALL NULL NULL NULL 0 | Using temporary; Using filesort",
                "2 SUBQUERY b ALL NULL NULL NULL 2 | ",
            ],
        ),
        (
            "SELECT * FROM (SELECT aid, COUNT(*) n FROM b GROUP BY aid) d JOIN a ON a.id = d.aid",
            &[
                "1 PRIMARY <derived2> ALL NULL NULL NULL 2 | ",
                "1 PRIMARY a eq_ref PRIMARY 4 d.aid 1 | ",
                "2 DERIVED b ALL NULL NULL NULL 2 | Using temporary; Using filesort",
            ],
        ),
        (
            "WITH d AS (SELECT aid, COUNT(*) n FROM b GROUP BY aid) SELECT * FROM d",
            &[
                "1 PRIMARY <derived2> ALL NULL NULL NULL 2 | ",
                "2 DERIVED b ALL NULL NULL NULL 2 | Using temporary; Using filesort",
            ],
        ),
        (
            "SELECT id, ROW_NUMBER() OVER (ORDER BY x) + 1 FROM a",
            &[
                "1 PRIMARY <derived2> ALL NULL NULL NULL 3 | ",
                "2 DERIVED a ALL NULL NULL NULL 3 | Using temporary",
            ],
        ),
        (
            "SELECT * FROM v",
            &[
                "1 PRIMARY <derived2> ALL NULL NULL NULL 2 | ",
                "2 DERIVED b ALL NULL NULL NULL 2 | Using temporary; Using filesort",
            ],
        ),
        (
            "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5) \
             SELECT * FROM r",
            &[
                "1 PRIMARY <derived2> ALL NULL NULL NULL 1 | ",
                "2 DERIVED NULL NULL NULL NULL NULL NULL | No tables used",
                "3 RECURSIVE UNION <derived2> ALL NULL NULL NULL 1 | Using where",
                "NULL UNION RESULT <union2,3> ALL NULL NULL NULL NULL | ",
            ],
        ),
    ];
    check(&mut s, cases);
}

/// UNION, INTERSECT and EXCEPT: the parts, then the result line MariaDB shows (none for
/// UNION ALL alone, which it streams).
#[test]
fn explain_shows_set_operations() {
    let db = Db::open("explain_union");
    let mut s = session(&db);
    let cases: &[(&str, &[&str])] = &[
        (
            "SELECT id FROM a UNION SELECT id FROM b UNION SELECT 5",
            &[
                "1 PRIMARY a ALL NULL NULL NULL 3 | ",
                "2 UNION b ALL NULL NULL NULL 2 | ",
                "3 UNION NULL NULL NULL NULL NULL NULL | No tables used",
                "NULL UNION RESULT <union1,2,3> ALL NULL NULL NULL NULL | ",
            ],
        ),
        (
            "SELECT id FROM a UNION ALL SELECT id FROM b",
            &[
                "1 PRIMARY a ALL NULL NULL NULL 3 | ",
                "2 UNION b ALL NULL NULL NULL 2 | ",
            ],
        ),
        (
            "SELECT id FROM a UNION SELECT id FROM b ORDER BY 1 LIMIT 2",
            &[
                "1 PRIMARY a ALL NULL NULL NULL 3 | ",
                "2 UNION b ALL NULL NULL NULL 2 | ",
                "NULL UNION RESULT <union1,2> ALL NULL NULL NULL NULL | Using filesort",
            ],
        ),
        (
            "SELECT id FROM a INTERSECT SELECT id FROM b",
            &[
                "1 PRIMARY a ALL NULL NULL NULL 3 | ",
                "2 INTERSECT b ALL NULL NULL NULL 2 | ",
                "NULL INTERSECT RESULT <intersect1,2> ALL NULL NULL NULL NULL | ",
            ],
        ),
        (
            "SELECT id FROM a EXCEPT SELECT id FROM b",
            &[
                "1 PRIMARY a ALL NULL NULL NULL 3 | ",
                "2 EXCEPT b ALL NULL NULL NULL 2 | ",
                "NULL EXCEPT RESULT <except1,2> ALL NULL NULL NULL NULL | ",
            ],
        ),
        (
            "SELECT * FROM (SELECT id FROM a UNION SELECT id FROM b) u",
            &[
                "1 PRIMARY <derived2> ALL NULL NULL NULL 5 | ",
                "2 DERIVED a ALL NULL NULL NULL 3 | ",
                "3 UNION b ALL NULL NULL NULL 2 | ",
                "NULL UNION RESULT <union2,3> ALL NULL NULL NULL NULL | ",
            ],
        ),
    ];
    check(&mut s, cases);
}

/// UPDATE, DELETE and INSERT: MariaDB's lines for them (a key read of a single-table UPDATE
/// or DELETE is `range`; `DELETE FROM t` is "Deleting all rows"; INSERT ... VALUES is one
/// `INSERT` line with NULL rows and Extra).
#[test]
fn explain_shows_data_changes() {
    let db = Db::open("explain_dml");
    let mut s = session(&db);
    let cases: &[(&str, &[&str])] = &[
        (
            "UPDATE a SET x = 1 WHERE id = 2",
            &["1 SIMPLE a range PRIMARY 4 NULL 1 | Using where"],
        ),
        (
            "DELETE FROM a WHERE x = 10",
            &["1 SIMPLE a range kx 5 NULL 3 | Using where"],
        ),
        (
            "DELETE FROM a WHERE s = 'z'",
            &["1 SIMPLE a ALL NULL NULL NULL 3 | Using where"],
        ),
        (
            "UPDATE a SET x = 1 WHERE s = 'p' ORDER BY id LIMIT 1",
            &["1 SIMPLE a ALL NULL NULL NULL 3 | Using where; Using filesort"],
        ),
        (
            "DELETE FROM a",
            &["1 SIMPLE NULL NULL NULL NULL NULL 3 | Deleting all rows"],
        ),
        (
            "UPDATE a SET x = (SELECT MAX(y) FROM b) WHERE id IN (SELECT aid FROM b)",
            &[
                "1 PRIMARY a ALL NULL NULL NULL 3 | Using where",
                "3 MATERIALIZED b ALL NULL NULL NULL 2 | ",
                "2 SUBQUERY b ALL NULL NULL NULL 2 | ",
            ],
        ),
        (
            "UPDATE a JOIN b ON a.id = b.aid SET a.x = 1",
            &[
                "1 SIMPLE a ALL NULL NULL NULL 3 | ",
                "1 SIMPLE b hash_ALL #hash#$hj 5 j.a.id 2 | \
                 Using where; Using join buffer (flat, BNLH join)",
            ],
        ),
        (
            "DELETE a FROM a JOIN b ON a.id = b.aid",
            &[
                "1 SIMPLE a ALL NULL NULL NULL 3 | ",
                "1 SIMPLE b hash_ALL #hash#$hj 5 j.a.id 2 | \
                 Using where; Using join buffer (flat, BNLH join)",
            ],
        ),
        (
            "INSERT INTO b SELECT id, x, 1 FROM a WHERE id = 1",
            &["1 SIMPLE a const PRIMARY 4 const 1 | "],
        ),
        (
            "INSERT INTO b VALUES (5, 5, 5)",
            &["1 INSERT b ALL NULL NULL NULL NULL | NULL"],
        ),
    ];
    check(&mut s, cases);
    // EXPLAIN changes nothing.
    assert_eq!(text_rows(&mut s, "SELECT COUNT(*) FROM a")[0][0], "3");
    assert_eq!(
        text_rows(&mut s, "SELECT x FROM a WHERE id = 2")[0][0],
        "20"
    );
}
