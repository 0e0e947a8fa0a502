//! The names of select-list items without an alias: MariaDB names such an item by its text as
//! written, and the name is what applications read a column by, what CREATE TABLE ... SELECT
//! and a view name their columns, and what ORDER BY, GROUP BY and HAVING may refer to. Every
//! expected name below is what MariaDB 10.11.19 (Debian's) returned for the same statement on
//! the same table.

mod common;
use common::{ok, session_in, text_rows, Db};
use onelog_sql::Output;

fn names(s: &mut onelog_sql::Session, sql: &str) -> Vec<String> {
    match ok(s, sql) {
        Output::Rows { columns, .. } => columns.into_iter().map(|c| c.name).collect(),
        other => panic!("{sql}: not a result set: {other:?}"),
    }
}

#[test]
fn unaliased_items_are_named_by_their_text() {
    let db = Db::open("item_names");
    let mut s = session_in(&db, "d");
    ok(&mut s, "CREATE TABLE t (a INT, b VARCHAR(10))");
    ok(&mut s, "INSERT INTO t VALUES (1, 'xy')");
    let cases: &[(&str, &[&str])] = &[
        (
            "SELECT 1+1, 1 + 1,  count(*) , COUNT( * ), MAX(a)+1, a*2, CONCAT(a,'x'), IF(a>0,1,0) FROM t GROUP BY a, b",
            &["1+1", "1 + 1", "count(*)", "COUNT( * )", "MAX(a)+1", "a*2", "CONCAT(a,'x')", "IF(a>0,1,0)"],
        ),
        (
            "SELECT a IN (1,2), x'41', b'01', a<=>NULL, a MOD 2, a<<1, COALESCE(a,0), SUBSTRING(b,1,2), EXISTS(SELECT 1) FROM t",
            &["a IN (1,2)", "x'41'", "b'01'", "a<=>NULL", "a MOD 2", "a<<1", "COALESCE(a,0)", "SUBSTRING(b,1,2)", "EXISTS(SELECT 1)"],
        ),
        (
            "SELECT true, false, nuLL, ('abc'), ((a)), t.a, d.t.a, (t.a), N'x', _utf8mb4'y', '  sp', 'it''s' FROM t",
            &["TRUE", "FALSE", "NULL", "abc", "a", "a", "a", "a", "x", "y", "sp", "it's"],
        ),
        (
            "SELECT DATE'2020-01-01', -1, - 1, +1, 1.0e1, .5, 5., -a, (a)+1, a+(1), 0.0, 1/*c*/+1 FROM t",
            &["DATE'2020-01-01'", "-1", "- 1", "1", "1.0e1", ".5", "5.", "-a", "(a)+1", "a+(1)", "0.0", "1 +1"],
        ),
        (
            "SELECT\n   1  +\n 2   , CONCAT('a' , 'b') /* x */ , sum(a)over(), 'a' AS `x` FROM t",
            &["1  +\n 2", "CONCAT('a' , 'b')", "sum(a)over()", "x"],
        ),
        (
            "SELECT DISTINCT a+1 FROM t UNION SELECT 2*3",
            &["a+1"],
        ),
    ];
    for (sql, want) in cases {
        assert_eq!(&names(&mut s, sql), want, "{sql}");
    }
    // 255 bytes at most, cut at a character: MariaDB kept 127 of 300 two-byte characters.
    let long = names(&mut s, &format!("SELECT '{}'", "é".repeat(300)));
    assert_eq!(long, ["é".repeat(127)]);
    let sum = vec!["1"; 200].join("+");
    assert_eq!(names(&mut s, &format!("SELECT {sum}")), [&sum[..255]]);
}

#[test]
fn the_text_names_columns_of_tables_views_and_derived_tables_and_clauses_refer_to_it() {
    let db = Db::open("item_names_use");
    let mut s = session_in(&db, "d");
    ok(&mut s, "CREATE TABLE t (a INT, b VARCHAR(10))");
    ok(&mut s, "INSERT INTO t VALUES (1, 'xy'), (2, 'z')");
    // Before, these columns were `a + 1` and `CONCAT(b, 1)`.
    ok(&mut s, "CREATE TABLE c1 AS SELECT a+1, CONCAT(b,1) FROM t");
    assert_eq!(
        text_rows(&mut s, "SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_NAME = 'c1' ORDER BY ORDINAL_POSITION"),
        [["a+1"], ["CONCAT(b,1)"]]
    );
    assert_eq!(
        text_rows(&mut s, "SELECT `a+1` FROM c1 ORDER BY 1"),
        [["2"], ["3"]]
    );
    ok(&mut s, "CREATE VIEW v1 AS SELECT a+1, (a) FROM t");
    assert_eq!(names(&mut s, "SELECT * FROM v1"), ["a+1", "a"]);
    assert_eq!(
        names(&mut s, "SELECT * FROM (SELECT a*2, b FROM t) x"),
        ["a*2", "b"]
    );
    assert_eq!(
        names(&mut s, "WITH w AS (SELECT a*2 FROM t) SELECT * FROM w"),
        ["a*2"]
    );
    assert_eq!(
        names(
            &mut s,
            "INSERT INTO t VALUES (5,'r') RETURNING a+1, CONCAT(b,'x'), a"
        ),
        ["a+1", "CONCAT(b,'x')", "a"]
    );
    assert_eq!(
        names(&mut s, "DELETE FROM t WHERE a=5 RETURNING a*2, (a), 'lit'"),
        ["a*2", "a", "lit"]
    );
    // ORDER BY, GROUP BY and HAVING may name an unaliased item (1054 before).
    assert_eq!(
        text_rows(&mut s, "SELECT a+1 FROM t ORDER BY `a+1` DESC"),
        [["3"], ["2"]]
    );
    assert_eq!(
        text_rows(&mut s, "SELECT a+1 FROM t HAVING `a+1` > 2"),
        [["3"]]
    );
    assert_eq!(
        text_rows(
            &mut s,
            "SELECT a%2, COUNT(*) FROM t GROUP BY `a%2` ORDER BY `COUNT(*)`, 1"
        ),
        [["0", "1"], ["1", "1"]]
    );
}

/// `CURRENT_USER`, `CURRENT_ROLE`, `UTC_DATE`, `UTC_TIME` and `UTC_TIMESTAMP` are calls without
/// brackets too (reserved words: a backquoted name is a column), named as written; they were
/// 1054 `Unknown column`. Values and names as MariaDB 10.11.19 answered the same statement.
#[test]
fn functions_called_without_brackets_are_calls() {
    let db = Db::open("item_names_bare");
    let mut s = session_in(&db, "d");
    let sql = "SELECT current_user, CURRENT_ROLE, UTC_DATE = UTC_DATE(), utc_time IS NOT NULL, \
               UTC_TIMESTAMP <= NOW() + INTERVAL 1 DAY, `current_user` \
               FROM (SELECT 1 AS `current_user`, 2 AS a) x";
    assert_eq!(
        names(&mut s, sql),
        [
            "current_user",
            "CURRENT_ROLE",
            "UTC_DATE = UTC_DATE()",
            "utc_time IS NOT NULL",
            "UTC_TIMESTAMP <= NOW() + INTERVAL 1 DAY",
            "current_user"
        ]
    );
    assert_eq!(
        text_rows(&mut s, sql),
        [["root@localhost", "NULL", "1", "1", "1", "1"]]
    );
    assert_eq!(
        text_rows(&mut s, "SELECT CURRENT_USER(), CURRENT_ROLE() IS NULL"),
        [["root@localhost", "1"]]
    );
}
