//! End-to-end tests of the query engine through `Session::query` / `prepare` / `execute` on a
//! real engine in a temporary directory: sysbench's exact statement shapes, DDL/DML/SELECT
//! features with their result values, MySQL error codes, statement atomicity, and the log
//! containing every data change.

use onelog_log::RecordKind;
use onelog_sql::{Output, Session, Value};

mod common;
use common::{err, ok, run, Db};

fn open() -> Db {
    Db::open("sql")
}

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

fn affected(o: &Output) -> u64 {
    match o {
        Output::Ok { affected_rows, .. } => *affected_rows,
        o => panic!("not OK: {o:?}"),
    }
}

fn b(s: &str) -> Value {
    Value::bytes(s.as_bytes())
}

const SBTEST: &str = "CREATE TABLE sbtest1(\n  id INTEGER NOT NULL AUTO_INCREMENT,\n  k INTEGER DEFAULT '0' NOT NULL,\n  c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL,\n  PRIMARY KEY (id)\n) /*! ENGINE = innodb */ ";

fn sysbench_prepare(s: &mut Session, n: usize) {
    ok(s, SBTEST);
    let mut q = String::from("INSERT INTO sbtest1(k, c, pad) VALUES");
    for i in 1..=n {
        if i > 1 {
            q.push(',');
        }
        q.push_str(&format!("({}, 'c{:03}', 'pad{}')", (i * 7) % n + 1, i, i));
    }
    assert_eq!(affected(&ok(s, &q)), n as u64);
    ok(s, "CREATE INDEX k_1 ON sbtest1(k)");
}

#[test]
fn sysbench_oltp_statements_run_prepared() {
    let db = open();
    let mut s = session(&db);
    sysbench_prepare(&mut s, 200);
    let begin = s.prepare("BEGIN").unwrap();
    let commit = s.prepare("COMMIT").unwrap();
    let point = s.prepare("SELECT c FROM sbtest1 WHERE id=?").unwrap();
    assert_eq!(point.params, 1);
    assert_eq!(point.columns.len(), 1);
    assert_eq!(point.columns[0].name, "c");
    let simple = s
        .prepare("SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ?")
        .unwrap();
    let sum = s
        .prepare("SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN ? AND ?")
        .unwrap();
    let order = s
        .prepare("SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c")
        .unwrap();
    let distinct = s
        .prepare("SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c")
        .unwrap();
    let idx_upd = s.prepare("UPDATE sbtest1 SET k=k+1 WHERE id=?").unwrap();
    let nonidx_upd = s.prepare("UPDATE sbtest1 SET c=? WHERE id=?").unwrap();
    let del = s.prepare("DELETE FROM sbtest1 WHERE id=?").unwrap();
    let ins = s
        .prepare("INSERT INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)")
        .unwrap();
    assert_eq!(ins.params, 4);

    s.execute(begin.stmt_id, &[]).unwrap();
    assert!(s.in_transaction());
    for id in [1i64, 5, 200] {
        match s.execute(point.stmt_id, &[Value::Int(id)]).unwrap() {
            Output::Rows { rows, .. } => {
                assert_eq!(rows, vec![vec![b(&format!("c{id:03}"))]])
            }
            o => panic!("{o:?}"),
        }
    }
    match s
        .execute(simple.stmt_id, &[Value::Int(10), Value::Int(19)])
        .unwrap()
    {
        Output::Rows { rows, .. } => assert_eq!(rows.len(), 10),
        o => panic!("{o:?}"),
    }
    match s
        .execute(sum.stmt_id, &[Value::Int(1), Value::Int(3)])
        .unwrap()
    {
        Output::Rows { rows, columns } => {
            // k of ids 1..3 = (7, 14, 21) % 200 + 1
            assert_eq!(rows, vec![vec![Value::Decimal("45".into())]]);
            assert_eq!(
                columns[0].column_type,
                onelog_binlog::ColumnType::NewDecimal
            );
        }
        o => panic!("{o:?}"),
    }
    match s
        .execute(order.stmt_id, &[Value::Int(5), Value::Int(9)])
        .unwrap()
    {
        Output::Rows { rows, .. } => assert_eq!(
            rows,
            (5..=9)
                .map(|i| vec![b(&format!("c{i:03}"))])
                .collect::<Vec<_>>()
        ),
        o => panic!("{o:?}"),
    }
    match s
        .execute(distinct.stmt_id, &[Value::Int(5), Value::Int(9)])
        .unwrap()
    {
        Output::Rows { rows, .. } => assert_eq!(rows.len(), 5),
        o => panic!("{o:?}"),
    }
    assert_eq!(
        affected(&s.execute(idx_upd.stmt_id, &[Value::Int(3)]).unwrap()),
        1
    );
    assert_eq!(
        affected(
            &s.execute(nonidx_upd.stmt_id, &[b("new-c"), Value::Int(4)])
                .unwrap()
        ),
        1
    );
    assert_eq!(
        affected(&s.execute(del.stmt_id, &[Value::Int(6)]).unwrap()),
        1
    );
    assert_eq!(
        affected(
            &s.execute(
                ins.stmt_id,
                &[Value::Int(6), Value::Int(42), b("cc"), b("pp")]
            )
            .unwrap()
        ),
        1
    );
    s.execute(commit.stmt_id, &[]).unwrap();
    assert!(!s.in_transaction());
    assert_eq!(
        rows(
            &mut s,
            "SELECT k, c FROM sbtest1 WHERE id IN (3, 4, 6) ORDER BY id"
        ),
        vec![
            vec![Value::Int(23), b("c003")],
            vec![Value::Int(29), b("new-c")],
            vec![Value::Int(42), b("cc")],
        ]
    );
    // Secondary index paths: select_random_points / select_random_ranges.
    let r = rows(
        &mut s,
        "SELECT id, k, c, pad FROM sbtest1 WHERE k IN (8, 15, 1000)",
    );
    assert_eq!(r.len(), 2);
    let r = rows(
        &mut s,
        "SELECT count(k) FROM sbtest1 WHERE k BETWEEN 1 AND 10 OR k BETWEEN 5 AND 20 OR k BETWEEN 100 AND 100",
    );
    let expect = rows(
        &mut s,
        "SELECT count(*) FROM sbtest1 WHERE (k + 0 BETWEEN 1 AND 20) OR k + 0 = 100",
    );
    assert_eq!(r, expect);
    let r = rows(
        &mut s,
        "SELECT sum(length(c)) FROM sbtest1 WHERE k BETWEEN 1 AND 3",
    );
    assert_eq!(r.len(), 1);
}

#[test]
fn bulk_insert_shape_and_cleanup() {
    let db = open();
    let mut s = session(&db);
    ok(
        &mut s,
        "CREATE TABLE IF NOT EXISTS sbtest1 (\n id INTEGER NOT NULL,\n k INTEGER DEFAULT '0' NOT NULL,\n PRIMARY KEY (id))",
    );
    ok(
        &mut s,
        "CREATE TABLE IF NOT EXISTS sbtest1 (id INTEGER NOT NULL, PRIMARY KEY (id))",
    );
    assert_eq!(
        affected(&ok(&mut s, "INSERT INTO sbtest1 VALUES(1,1),(2,2),(3,3)")),
        3
    );
    assert_eq!(
        rows(&mut s, "SELECT COUNT(*) FROM sbtest1"),
        vec![vec![Value::Int(3)]]
    );
    ok(&mut s, "DROP TABLE IF EXISTS sbtest1");
    ok(&mut s, "DROP TABLE IF EXISTS sbtest1");
    assert_eq!(err(&mut s, "SELECT * FROM sbtest1"), 1146);
}

#[test]
fn select_features_return_real_values() {
    let db = open();
    let mut s = session(&db);
    ok(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(20), score DECIMAL(6,2), d DATE, ts DATETIME(3), f DOUBLE) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin",
    );
    ok(
        &mut s,
        "INSERT INTO t VALUES (1, 'alice', 10.5, '2024-01-02', '2024-01-02 03:04:05.678', 1.5), (2, 'bob', NULL, NULL, NULL, NULL), (3, 'carol', 7, '2023-12-31', NULL, 2.25), (4, 'al_x', 3.333, NULL, NULL, NULL)",
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT id FROM t WHERE name LIKE 'al%' ORDER BY id DESC"
        ),
        vec![vec![Value::Int(4)], vec![Value::Int(1)]]
    );
    assert_eq!(
        rows(&mut s, "SELECT id FROM t WHERE name LIKE 'al\\_%'"),
        vec![vec![Value::Int(4)]]
    );
    assert_eq!(
        rows(&mut s, "SELECT score FROM t WHERE id = 4"),
        vec![vec![Value::Decimal("3.33".into())]]
    );
    assert_eq!(
        rows(&mut s, "SELECT id FROM t WHERE score IS NULL"),
        vec![vec![Value::Int(2)]]
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT COUNT(*), COUNT(score), SUM(score), MAX(name), MIN(id), AVG(id) FROM t"
        ),
        vec![vec![
            Value::Int(4),
            Value::Int(3),
            Value::Decimal("20.83".into()),
            b("carol"),
            Value::Int(1),
            Value::Decimal("2.5000".into()),
        ]]
    );
    assert_eq!(
        rows(&mut s, "SELECT 1 + 2, 7 / 2, 7 DIV 2, 7 % 3, -3, CONCAT('a', 1, NULL IS NULL), UPPER('x'), LENGTH('héllo'), CHAR_LENGTH('héllo')"),
        vec![vec![
            Value::Int(3),
            Value::Decimal("3.5000".into()),
            Value::Int(3),
            Value::Int(1),
            Value::Int(-3),
            b("a11"),
            b("X"),
            Value::Int(6),
            Value::Int(5),
        ]]
    );
    assert_eq!(
        rows(&mut s, "SELECT CASE WHEN id > 2 THEN 'big' ELSE 'small' END AS size, id FROM t ORDER BY 2 LIMIT 1, 2"),
        vec![vec![b("small"), Value::Int(2)], vec![b("big"), Value::Int(3)]]
    );
    assert_eq!(
        rows(&mut s, "SELECT id FROM t ORDER BY id LIMIT 2 OFFSET 2"),
        vec![vec![Value::Int(3)], vec![Value::Int(4)]]
    );
    assert_eq!(
        rows(&mut s, "SELECT COALESCE(score, 0), IFNULL(d, 'none'), IF(id = 1, 'one', 'other') FROM t WHERE id = 2"),
        vec![vec![Value::Decimal("0.00".into()), b("none"), b("other")]]
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT id FROM t WHERE id BETWEEN 2 AND 3 AND NOT name = 'bob'"
        ),
        vec![vec![Value::Int(3)]]
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT id FROM t WHERE id IN (1, 3) OR name = 'bob' ORDER BY id"
        ),
        vec![
            vec![Value::Int(1)],
            vec![Value::Int(2)],
            vec![Value::Int(3)]
        ]
    );
    assert_eq!(
        rows(&mut s, "SELECT DATE_FORMAT(d, '%Y/%m/%d'), ROUND(f), FLOOR(2.7), CEIL(2.1), ABS(-4), GREATEST(1, 5, 3), LEAST(4, 2) FROM t WHERE id = 1"),
        vec![vec![b("2024/01/02"), Value::Double(2.0), Value::Int(2), Value::Int(3), Value::Int(4), Value::Int(5), Value::Int(2)]]
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT SUBSTRING('hello', 2, 3), TRIM('  x  '), REPLACE('aXbX', 'X', '-'), DATABASE()"
        ),
        vec![vec![b("ell"), b("x"), b("a-b-"), b("sbtest")]]
    );
    // GROUP BY / HAVING.
    ok(
        &mut s,
        "CREATE TABLE g (id INT PRIMARY KEY AUTO_INCREMENT, grp INT, v INT)",
    );
    ok(
        &mut s,
        "INSERT INTO g (grp, v) VALUES (1, 10), (1, 20), (2, 5), (3, 1), (3, 1)",
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT grp, COUNT(*) AS n, SUM(v) FROM g GROUP BY grp HAVING n > 1 ORDER BY grp"
        ),
        vec![
            vec![Value::Int(1), Value::Int(2), Value::Decimal("30".into())],
            vec![Value::Int(3), Value::Int(2), Value::Decimal("2".into())],
        ]
    );
    assert_eq!(
        rows(&mut s, "SELECT COUNT(DISTINCT v) FROM g"),
        vec![vec![Value::Int(4)]]
    );
    // Columns metadata of a table column.
    match ok(&mut s, "SELECT id, name FROM t WHERE id = 1") {
        Output::Rows { columns, .. } => {
            assert_eq!(columns[0].column_type, onelog_binlog::ColumnType::Long);
            assert_eq!(columns[0].flags & 3, 3); // NOT_NULL | PRI_KEY
            assert_eq!(columns[1].column_type, onelog_binlog::ColumnType::VarString);
            assert_eq!(columns[0].org_table, "t");
        }
        o => panic!("{o:?}"),
    }
    assert_eq!(
        rows(&mut s, "SELECT 1 FROM DUAL"),
        vec![vec![Value::Int(1)]]
    );
    let r = rows(
        &mut s,
        "SELECT NOW(), CURDATE(), UNIX_TIMESTAMP(), VERSION(), CONNECTION_ID()",
    );
    assert_eq!(r[0][4], Value::UInt(1));
    // FOR UPDATE / LOCK IN SHARE MODE parse and run.
    assert_eq!(
        rows(&mut s, "SELECT id FROM t WHERE id = 1 FOR UPDATE").len(),
        1
    );
    assert_eq!(
        rows(&mut s, "SELECT id FROM t WHERE id > 2 LOCK IN SHARE MODE").len(),
        2
    );
}

#[test]
fn dml_features_and_affected_rows() {
    let db = open();
    let mut s = session(&db);
    ok(&mut s, "CREATE TABLE u (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, email VARCHAR(50), n INT NOT NULL DEFAULT 0, UNIQUE KEY email_u (email))");
    let o = ok(&mut s, "INSERT INTO u (email) VALUES ('a@x'), ('b@x')");
    assert_eq!(affected(&o), 2);
    match o {
        Output::Ok { last_insert_id, .. } => assert_eq!(last_insert_id, 1),
        _ => unreachable!(),
    }
    assert_eq!(
        rows(&mut s, "SELECT LAST_INSERT_ID()"),
        vec![vec![Value::UInt(1)]]
    );
    ok(&mut s, "INSERT INTO u (id, email) VALUES (0, 'c@x')");
    assert_eq!(
        rows(&mut s, "SELECT id FROM u WHERE email = 'c@x'"),
        vec![vec![Value::Int(3)]]
    );
    assert_eq!(err(&mut s, "INSERT INTO u (email) VALUES ('a@x')"), 1062);
    assert_eq!(
        err(&mut s, "INSERT INTO u (id, email) VALUES (1, 'zz')"),
        1062
    );
    let o = ok(
        &mut s,
        "INSERT IGNORE INTO u (email) VALUES ('a@x'), ('d@x')",
    );
    assert_eq!(affected(&o), 1);
    assert_eq!(s.warning_count(), 1);
    let o = ok(&mut s, "INSERT INTO u (id, email, n) VALUES (1, 'a@x', 5) ON DUPLICATE KEY UPDATE n = n + VALUES(n)");
    assert_eq!(affected(&o), 2);
    assert_eq!(
        rows(&mut s, "SELECT n FROM u WHERE id = 1"),
        vec![vec![Value::Int(5)]]
    );
    let o = ok(
        &mut s,
        "REPLACE INTO u (id, email, n) VALUES (2, 'b2@x', 7)",
    );
    assert_eq!(affected(&o), 2);
    assert_eq!(
        rows(&mut s, "SELECT email, n FROM u WHERE id = 2"),
        vec![vec![b("b2@x"), Value::Int(7)]]
    );
    // UPDATE counts changed rows only.
    let o = ok(&mut s, "UPDATE u SET n = 7 WHERE id IN (1, 2)");
    assert_eq!(affected(&o), 1);
    match o {
        Output::Ok { info, .. } => assert_eq!(info, "Rows matched: 2  Changed: 1  Warnings: 0"),
        _ => unreachable!(),
    }
    // Assignments run left to right, each seeing the ones before; a row whose assignments
    // end where they began is matched, not changed.
    let o = ok(&mut s, "UPDATE u SET n = n + 1, n = n * 2 WHERE id = 2");
    assert_eq!(affected(&o), 1);
    assert_eq!(
        rows(&mut s, "SELECT n FROM u WHERE id = 2"),
        vec![vec![Value::Int(16)]]
    );
    let o = ok(
        &mut s,
        "UPDATE u SET n = n + 1, n = n - 1 WHERE id IN (1, 2)",
    );
    assert_eq!(affected(&o), 0);
    ok(&mut s, "UPDATE u SET n = 7 WHERE id = 2");
    let o = ok(&mut s, "UPDATE u SET n = n + 1 ORDER BY id DESC LIMIT 2");
    assert_eq!(affected(&o), 2);
    assert_eq!(
        affected(&ok(
            &mut s,
            "DELETE FROM u WHERE n >= 7 ORDER BY id LIMIT 1"
        )),
        1
    );
    assert_eq!(affected(&ok(&mut s, "DELETE FROM u")), 3);
    ok(&mut s, "INSERT INTO u SET email = 'set@x', n = 3");
    assert_eq!(rows(&mut s, "SELECT n FROM u"), vec![vec![Value::Int(3)]]);
    // INSERT ... SELECT.
    ok(&mut s, "CREATE TABLE u2 (id INT PRIMARY KEY, n INT)");
    assert_eq!(
        affected(&ok(&mut s, "INSERT INTO u2 SELECT id, n FROM u")),
        1
    );
    ok(&mut s, "TRUNCATE TABLE u2");
    assert_eq!(
        rows(&mut s, "SELECT COUNT(*) FROM u2"),
        vec![vec![Value::Int(0)]]
    );
    // Conversions: quoted numbers into ints, numbers into strings.
    ok(&mut s, "INSERT INTO u2 VALUES ('5', 6)");
    assert_eq!(
        rows(&mut s, "SELECT id, n FROM u2 WHERE id = '5'"),
        vec![vec![Value::Int(5), Value::Int(6)]]
    );
}

#[test]
fn errors_have_mysql_codes() {
    let db = open();
    let mut s = session(&db);
    ok(&mut s, "CREATE TABLE e (id INT PRIMARY KEY, v INT)");
    assert_eq!(err(&mut s, "SELECT * FROM nope"), 1146);
    assert_eq!(err(&mut s, "SELECT nope FROM e"), 1054);
    assert_eq!(err(&mut s, "SELECT * FROM e WHERE nope = 1"), 1054);
    assert_eq!(err(&mut s, "SELEC 1"), 1064);
    let e = run(&mut s, "SELECT * FRM e").unwrap_err();
    assert!(e.message.starts_with("You have an error in your SQL syntax; check the manual that corresponds to your MariaDB server version for the right syntax to use near"), "{}", e.message);
    assert_eq!(err(&mut s, "CREATE TABLE e (id INT PRIMARY KEY)"), 1050);
    assert_eq!(err(&mut s, "USE nodb"), 1049);
    assert_eq!(err(&mut s, "INSERT INTO e VALUES (1, 1), (1, 2)"), 1062);
    assert_eq!(
        err(&mut s, "CREATE TEMPORARY TABLE tt (id INT PRIMARY KEY)"),
        1235
    );
    assert_eq!(err(&mut s, "SELECT NOSUCHFUNC(1)"), 1305);
    assert_eq!(err(&mut s, "DROP TABLE nope"), 1051);
    assert_eq!(err(&mut s, "INSERT INTO e (id) VALUES (1, 2)"), 1136);
    let mut s2 = Session::new(db.server.clone(), 2, "root", "localhost");
    assert_eq!(err(&mut s2, "SELECT * FROM e"), 1046);
    // Multi-statement: stops at the first error.
    let r = s.query("SELECT 1; SELECT nope FROM e; SELECT 2");
    assert_eq!(r.len(), 2);
    assert!(r[0].is_ok());
    assert_eq!(r[1].as_ref().unwrap_err().code, 1054);
}

#[test]
fn statements_are_atomic_inside_transactions() {
    let db = open();
    let mut s = session(&db);
    ok(&mut s, "CREATE TABLE a (id INT PRIMARY KEY)");
    ok(&mut s, "INSERT INTO a VALUES (3)");
    ok(&mut s, "BEGIN");
    ok(&mut s, "INSERT INTO a VALUES (1)");
    // Row 2 goes in, then 3 fails: the statement must leave neither.
    assert_eq!(err(&mut s, "INSERT INTO a VALUES (2), (3)"), 1062);
    assert!(s.in_transaction());
    ok(&mut s, "COMMIT");
    assert_eq!(
        rows(&mut s, "SELECT id FROM a ORDER BY id"),
        vec![vec![Value::Int(1)], vec![Value::Int(3)]]
    );
    // Autocommit statement failure leaves nothing either.
    assert_eq!(err(&mut s, "INSERT INTO a VALUES (4), (3)"), 1062);
    assert_eq!(
        rows(&mut s, "SELECT COUNT(*) FROM a"),
        vec![vec![Value::Int(2)]]
    );
    // Savepoints and rollback.
    ok(&mut s, "START TRANSACTION WITH CONSISTENT SNAPSHOT");
    ok(&mut s, "INSERT INTO a VALUES (10)");
    ok(&mut s, "SAVEPOINT sp1");
    ok(&mut s, "INSERT INTO a VALUES (11)");
    ok(&mut s, "ROLLBACK TO SAVEPOINT sp1");
    ok(&mut s, "RELEASE SAVEPOINT sp1");
    ok(&mut s, "COMMIT");
    assert_eq!(
        rows(&mut s, "SELECT COUNT(*) FROM a WHERE id >= 10"),
        vec![vec![Value::Int(1)]]
    );
    ok(&mut s, "BEGIN");
    ok(&mut s, "DELETE FROM a");
    ok(&mut s, "ROLLBACK");
    assert_eq!(
        rows(&mut s, "SELECT COUNT(*) FROM a"),
        vec![vec![Value::Int(3)]]
    );
    // DDL commits the open transaction.
    ok(&mut s, "BEGIN");
    ok(&mut s, "INSERT INTO a VALUES (20)");
    ok(&mut s, "CREATE TABLE a2 (id INT PRIMARY KEY)");
    assert!(!s.in_transaction());
    let mut other = session(&db);
    assert_eq!(
        rows(&mut other, "SELECT COUNT(*) FROM a WHERE id = 20"),
        vec![vec![Value::Int(1)]]
    );
    // READ ONLY transactions refuse writes.
    ok(&mut s, "START TRANSACTION READ ONLY");
    assert_eq!(err(&mut s, "INSERT INTO a VALUES (30)"), 1792);
    ok(&mut s, "COMMIT");
}

#[test]
fn ddl_variants_work() {
    let db = open();
    let mut s = session(&db);
    ok(&mut s, "CREATE TABLE d (id BIGINT UNSIGNED NOT NULL, a INT, b VARCHAR(10), PRIMARY KEY (id), KEY ka (a), UNIQUE INDEX ub (b))");
    ok(&mut s, "CREATE UNIQUE INDEX uab ON d (a, b)");
    ok(&mut s, "DROP INDEX uab ON d");
    // Several operations in one ALTER: one change (tests/alter_table.rs).
    ok(&mut s, "ALTER TABLE d ADD INDEX kb2 (b), DROP INDEX ka");
    ok(&mut s, "INSERT INTO d VALUES (1, 1, 'x'), (2, 1, 'y')");
    assert_eq!(
        rows(&mut s, "SELECT id FROM d WHERE b = 'y'"),
        vec![vec![Value::UInt(2)]]
    );
    ok(&mut s, "CREATE TABLE d2 (id INT PRIMARY KEY)");
    ok(&mut s, "DROP TABLE d, d2");
    ok(&mut s, "CREATE DATABASE other");
    assert_eq!(err(&mut s, "CREATE DATABASE other"), 1007);
    ok(&mut s, "CREATE TABLE other.t (id INT PRIMARY KEY)");
    ok(&mut s, "INSERT INTO other.t VALUES (1)");
    assert_eq!(
        rows(&mut s, "SELECT id FROM other.t"),
        vec![vec![Value::Int(1)]]
    );
    ok(&mut s, "DROP DATABASE other");
    ok(&mut s, "DROP DATABASE IF EXISTS other");
    // Versioned comments: executed.
    ok(&mut s, "/*!40101 CREATE TABLE vc (id INT PRIMARY KEY) */");
    assert_eq!(
        rows(&mut s, "SELECT COUNT(*) FROM vc /* comment */"),
        vec![vec![Value::Int(0)]]
    );
}

#[test]
fn every_change_lands_in_the_log() {
    let db = open();
    let mut s = session(&db);
    let before = log_kinds(&db);
    ok(&mut s, "CREATE TABLE l (id INT PRIMARY KEY, v INT)");
    ok(&mut s, "INSERT INTO l VALUES (1, 1)");
    ok(&mut s, "UPDATE l SET v = 2 WHERE id = 1");
    ok(&mut s, "DELETE FROM l WHERE id = 1");
    ok(&mut s, "BEGIN");
    ok(&mut s, "INSERT INTO l VALUES (2, 2)");
    ok(&mut s, "INSERT INTO l VALUES (3, 3)");
    ok(&mut s, "COMMIT");
    ok(&mut s, "UPDATE l SET v = v WHERE id = 2"); // changes nothing: no record
    let kinds = log_kinds(&db);
    let kinds = &kinds[before.len()..];
    let txns = kinds
        .iter()
        .filter(|k| **k == RecordKind::Transaction)
        .count();
    let ddl = kinds.iter().filter(|k| **k == RecordKind::Ddl).count();
    assert_eq!(txns, 4, "{kinds:?}");
    assert_eq!(ddl, 1, "{kinds:?}"); // CREATE TABLE
}

fn log_kinds(db: &Db) -> Vec<RecordKind> {
    common::log_records(&db.server)
        .into_iter()
        .map(|rec| rec.kind)
        .collect()
}

#[test]
fn prepared_statements_revalidate_after_ddl() {
    let db = open();
    let mut s = session(&db);
    ok(&mut s, "CREATE TABLE p (id INT PRIMARY KEY, v INT)");
    ok(&mut s, "INSERT INTO p VALUES (1, 10)");
    let st = s.prepare("SELECT v FROM p WHERE id = ?").unwrap();
    ok(&mut s, "DROP TABLE p");
    ok(&mut s, "CREATE TABLE p (id INT PRIMARY KEY, v INT)");
    ok(&mut s, "INSERT INTO p VALUES (1, 20)");
    match s.execute(st.stmt_id, &[Value::Int(1)]).unwrap() {
        Output::Rows { rows, .. } => assert_eq!(rows, vec![vec![Value::Int(20)]]),
        o => panic!("{o:?}"),
    }
    assert_eq!(s.execute(st.stmt_id, &[]).unwrap_err().code, 1210);
    s.close_statement(st.stmt_id);
    assert_eq!(
        s.execute(st.stmt_id, &[Value::Int(1)]).unwrap_err().code,
        1243
    );
    assert_eq!(s.prepare("SELECT * FROM nope").unwrap_err().code, 1146);
}

#[test]
fn client_connect_statements_and_session_state() {
    let db = open();
    let mut s = session(&db);
    let r = rows(&mut s, "select @@version_comment limit 1");
    assert_eq!(r.len(), 1);
    assert_eq!(
        rows(&mut s, "SELECT DATABASE(), USER()"),
        vec![vec![b("sbtest"), b("root@localhost")]]
    );
    ok(&mut s, "SET @x = 41");
    assert_eq!(rows(&mut s, "SELECT @x + 1"), vec![vec![Value::Int(42)]]);
    // CHAR drops trailing spaces.
    ok(&mut s, "CREATE TABLE ch (id INT PRIMARY KEY, c CHAR(10))");
    ok(&mut s, "INSERT INTO ch VALUES (1, 'ab  ')");
    assert_eq!(
        rows(&mut s, "SELECT CONCAT(c, '|') FROM ch"),
        vec![vec![b("ab|")]]
    );
    // autocommit=0 keeps a transaction open until COMMIT.
    ok(&mut s, "SET autocommit = 0");
    assert!(!s.autocommit());
    ok(&mut s, "INSERT INTO ch VALUES (2, 'x')");
    assert!(s.in_transaction());
    let mut other = session(&db);
    assert_eq!(
        rows(&mut other, "SELECT COUNT(*) FROM ch"),
        vec![vec![Value::Int(1)]]
    );
    ok(&mut s, "SET autocommit = 1");
    assert!(!s.in_transaction());
    assert_eq!(
        rows(&mut other, "SELECT COUNT(*) FROM ch"),
        vec![vec![Value::Int(2)]]
    );
}

#[test]
fn lock_wait_timeout_fails_only_the_statement() {
    let db = open();
    let mut a = session(&db);
    let mut b = session(&db);
    ok(&mut a, "CREATE TABLE w (id INT PRIMARY KEY, v INT)");
    ok(&mut a, "INSERT INTO w VALUES (1, 0), (2, 0)");
    ok(&mut a, "BEGIN");
    ok(&mut a, "UPDATE w SET v = 1 WHERE id = 1");
    ok(&mut b, "SET SESSION innodb_lock_wait_timeout = 1");
    ok(&mut b, "BEGIN");
    ok(&mut b, "UPDATE w SET v = 2 WHERE id = 2");
    assert_eq!(err(&mut b, "UPDATE w SET v = 2 WHERE id = 1"), 1205);
    assert!(b.in_transaction());
    ok(&mut a, "COMMIT");
    ok(&mut b, "COMMIT");
    assert_eq!(
        rows(&mut a, "SELECT v FROM w ORDER BY id"),
        vec![vec![Value::Int(1)], vec![Value::Int(2)]]
    );
}

#[test]
fn mariadb_slap_shapes_work() {
    let db = open();
    let mut s = Session::new(db.server.clone(), 1, "root", "localhost");
    ok(&mut s, "DROP SCHEMA IF EXISTS `mysqlslap`");
    ok(&mut s, "CREATE SCHEMA `mysqlslap`");
    ok(&mut s, "use mysqlslap");
    ok(
        &mut s,
        "CREATE TABLE `t1` (id serial,intcol1 INT(32) ,charcol1 VARCHAR(128))",
    );
    ok(&mut s, "INSERT INTO t1 VALUES (NULL,364531492,'qMa5SuKo4M5OM7ldvisSc6WK9rsG9E8sSixocHdgfa5uiiNTGFxkDJ4EAwWC2e4NL1BpAgWiFRcp1zIH6F1BayPdmwphatwnmzdwgzWnQ6SRxmcvtd6JRYwEKdvuWr')");
    ok(&mut s, "INSERT INTO t1 VALUES (DEFAULT, 5, 'x')");
    assert_eq!(
        rows(&mut s, "SELECT id, intcol1 FROM t1 ORDER BY id"),
        vec![
            vec![Value::UInt(1), Value::Int(364531492)],
            vec![Value::UInt(2), Value::Int(5)]
        ]
    );
    ok(&mut s, "DROP SCHEMA IF EXISTS `mysqlslap`");
}

#[test]
fn admin_statements_can_be_prepared() {
    let db = open();
    let mut s = session(&db);
    let st = s.prepare("SET @p = 7").unwrap();
    assert_eq!(st.params, 0);
    s.execute(st.stmt_id, &[]).unwrap();
    assert_eq!(rows(&mut s, "SELECT @p"), vec![vec![Value::Int(7)]]);
    let show = s.prepare("SHOW DATABASES").unwrap();
    match s.execute(show.stmt_id, &[]).unwrap() {
        Output::Rows { rows, .. } => assert!(rows.contains(&vec![b("sbtest")])),
        o => panic!("{o:?}"),
    }
}

#[test]
fn joins_match_rows_across_tables() {
    let db = open();
    let mut s = session(&db);
    ok(
        &mut s,
        "CREATE TABLE emp (id INT PRIMARY KEY, name VARCHAR(10), dept INT)",
    );
    ok(
        &mut s,
        "CREATE TABLE dept (id INT PRIMARY KEY, name VARCHAR(10))",
    );
    ok(
        &mut s,
        "INSERT INTO emp VALUES (1, 'ann', 10), (2, 'bo', 20), (3, 'cy', NULL)",
    );
    ok(&mut s, "INSERT INTO dept VALUES (10, 'eng'), (20, 'ops')");
    assert_eq!(
        rows(
            &mut s,
            "SELECT e.name, d.name FROM emp e JOIN dept d ON e.dept = d.id ORDER BY e.id"
        ),
        vec![vec![b("ann"), b("eng")], vec![b("bo"), b("ops")]]
    );
    assert_eq!(
        rows(&mut s, "SELECT e.name, d.name FROM emp e LEFT JOIN dept d ON e.dept = d.id WHERE e.id >= 2 ORDER BY e.id"),
        vec![vec![b("bo"), b("ops")], vec![b("cy"), Value::Null]]
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT COUNT(*) FROM emp, dept WHERE emp.dept = dept.id AND dept.name = 'ops'"
        ),
        vec![vec![Value::Int(1)]]
    );
    assert_eq!(err(&mut s, "SELECT name FROM emp, dept"), 1052);
    match ok(
        &mut s,
        "SELECT * FROM emp JOIN dept ON emp.dept = dept.id WHERE emp.id = 1",
    ) {
        Output::Rows { columns, rows } => {
            assert_eq!(columns.len(), 5);
            assert_eq!(columns[3].org_table, "dept");
            assert_eq!(
                rows,
                vec![vec![
                    Value::Int(1),
                    b("ann"),
                    Value::Int(10),
                    Value::Int(10),
                    b("eng")
                ]]
            );
        }
        o => panic!("{o:?}"),
    }
}

#[test]
fn deadlock_rolls_back_the_whole_victim_transaction() {
    let db = open();
    let mut a = session(&db);
    let mut b = session(&db);
    ok(&mut a, "CREATE TABLE dl (id INT PRIMARY KEY, v INT)");
    ok(&mut a, "INSERT INTO dl VALUES (1, 0), (2, 0), (3, 0)");
    for s in [&mut a, &mut b] {
        ok(s, "SET SESSION innodb_lock_wait_timeout = 20");
        ok(s, "BEGIN");
    }
    ok(&mut a, "UPDATE dl SET v = 1 WHERE id = 1");
    ok(&mut b, "UPDATE dl SET v = 2 WHERE id = 2");
    ok(&mut b, "UPDATE dl SET v = 2 WHERE id = 3");
    // Whatever the interleaving, one of the two closes the cycle and is the victim.
    let (ra, rb) = std::thread::scope(|sc| {
        let hb = sc.spawn(|| run(&mut b, "UPDATE dl SET v = 2 WHERE id = 1").map(|_| ()));
        let ra = run(&mut a, "UPDATE dl SET v = 1 WHERE id = 2").map(|_| ());
        if ra.is_ok() {
            // a won: it must commit for b's wait to end.
            ok(&mut a, "COMMIT");
        }
        (ra, hb.join().unwrap())
    });
    let codes = (
        ra.as_ref().err().map(|e| e.code),
        rb.as_ref().err().map(|e| e.code),
    );
    match codes {
        (Some(1213), None) => {
            assert!(!a.in_transaction());
            ok(&mut b, "COMMIT");
            assert_eq!(
                rows(&mut a, "SELECT v FROM dl ORDER BY id"),
                vec![
                    vec![Value::Int(2)],
                    vec![Value::Int(2)],
                    vec![Value::Int(2)]
                ]
            );
        }
        (None, Some(1213)) => {
            assert!(!b.in_transaction());
            // b's earlier updates of rows 2 and 3 are gone with it.
            assert_eq!(
                rows(&mut a, "SELECT v FROM dl ORDER BY id"),
                vec![
                    vec![Value::Int(1)],
                    vec![Value::Int(1)],
                    vec![Value::Int(0)]
                ]
            );
        }
        other => panic!("expected exactly one deadlock victim, got {other:?}"),
    }
}
