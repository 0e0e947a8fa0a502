//! Multi-table UPDATE and DELETE (issue 15 part 4), each answer checked on MariaDB 10.11:
//! joins and comma lists, the SET list's evaluation order across tables, rows matched several
//! times changed once, outer joins' NULL rows left alone, ORDER BY / LIMIT of UPDATE, the
//! errors (1109, 1221, 1054 with MariaDB's clause names), and the changes in the log.

use onelog_sql::{Output, Session};

mod common;
use common::{fail, ok, text_rows, Db};

fn session(db: &Db) -> Session {
    let mut s = Session::new(db.server.clone(), 1, "root", "localhost");
    ok(&mut s, "CREATE DATABASE m");
    ok(&mut s, "USE m");
    ok(
        &mut s,
        "CREATE TABLE a (id INT PRIMARY KEY, x INT, s VARCHAR(10))",
    );
    ok(
        &mut s,
        "CREATE TABLE b (id INT PRIMARY KEY, aid INT, y INT)",
    );
    ok(
        &mut s,
        "INSERT INTO a VALUES (1,10,'p'),(2,20,'q'),(3,30,'r')",
    );
    ok(
        &mut s,
        "INSERT INTO b VALUES (1,1,100),(2,1,200),(3,2,300),(4,9,400)",
    );
    s
}

fn lines(s: &mut Session, sql: &str) -> Vec<String> {
    text_rows(s, sql).iter().map(|r| r.join("|")).collect()
}

/// The info text of an UPDATE (`Rows matched: ...`) or the affected rows of a DELETE.
fn info(s: &mut Session, sql: &str) -> (u64, String) {
    match ok(s, sql) {
        Output::Ok {
            affected_rows,
            info,
            ..
        } => (affected_rows, info),
        o => panic!("{sql}: {o:?}"),
    }
}

#[test]
fn multi_table_update_as_mariadb() {
    let db = Db::open("multi-update");
    let mut s = session(&db);
    // a.id 1 matches two b rows: it changes once, from the first.
    let (n, i) = info(
        &mut s,
        "UPDATE a JOIN b ON a.id = b.aid SET a.x = b.y WHERE b.y >= 200",
    );
    assert_eq!(
        (n, i.as_str()),
        (2, "Rows matched: 2  Changed: 2  Warnings: 0")
    );
    assert_eq!(
        lines(&mut s, "SELECT id, x FROM a ORDER BY id"),
        ["1|200", "2|300", "3|30"]
    );
    // A comma list; b.y gets a.x as read, not as the same statement set it.
    let (_, i) = info(
        &mut s,
        "UPDATE a, b SET a.x = a.x + 1, b.y = a.x WHERE a.id = b.aid",
    );
    assert_eq!(i, "Rows matched: 5  Changed: 3  Warnings: 0");
    assert_eq!(
        lines(&mut s, "SELECT id, x FROM a ORDER BY id"),
        ["1|201", "2|301", "3|30"]
    );
    assert_eq!(
        lines(&mut s, "SELECT * FROM b ORDER BY id"),
        ["1|1|200", "2|1|200", "3|2|300", "4|9|400"]
    );
    // An outer join's NULL-extended rows are not changed; a WHERE on them selects a rows.
    info(
        &mut s,
        "UPDATE a LEFT JOIN b ON a.id = b.aid SET a.s = CONCAT(a.s, '!') WHERE b.id IS NULL",
    );
    assert_eq!(
        lines(&mut s, "SELECT id, s FROM a ORDER BY id"),
        ["1|p", "2|q", "3|r!"]
    );
    // Aliases, ORDER BY and LIMIT (MariaDB takes them in a multi-table UPDATE).
    let (_, i) = info(
        &mut s,
        "UPDATE a AS t1 JOIN b AS t2 ON t1.id = t2.aid SET t1.x = t2.y ORDER BY t2.y DESC LIMIT 1",
    );
    assert_eq!(i, "Rows matched: 1  Changed: 1  Warnings: 0");
    assert_eq!(
        lines(&mut s, "SELECT id, x FROM a ORDER BY id"),
        ["1|201", "2|300", "3|30"]
    );
    let e = fail(&mut s, "UPDATE a JOIN b ON a.id = b.aid SET nosuch = 1");
    assert_eq!(
        (e.code, e.message.as_str()),
        (1054, "Unknown column 'nosuch' in 'SET'")
    );
    let e = fail(&mut s, "UPDATE a JOIN b ON a.id = b.aid SET a.x = nosuch");
    assert_eq!(e.message, "Unknown column 'nosuch' in 'SELECT'");
    let e = fail(&mut s, "UPDATE a SET nosuch = 1");
    assert_eq!(e.message, "Unknown column 'nosuch' in 'SET'");
}

#[test]
fn multi_table_delete_as_mariadb() {
    let db = Db::open("multi-delete");
    let mut s = session(&db);
    let (n, _) = info(
        &mut s,
        "DELETE a, b FROM a JOIN b ON a.id = b.aid WHERE a.id = 2",
    );
    assert_eq!(n, 2);
    assert_eq!(lines(&mut s, "SELECT id FROM a ORDER BY id"), ["1", "3"]);
    assert_eq!(
        lines(&mut s, "SELECT id FROM b ORDER BY id"),
        ["1", "2", "4"]
    );
    // USING: only b's rows go, each once although a row of a matches two.
    let (n, _) = info(&mut s, "DELETE FROM b USING a JOIN b ON a.id = b.aid");
    assert_eq!(n, 2);
    assert_eq!(lines(&mut s, "SELECT id FROM b ORDER BY id"), ["4"]);
    assert_eq!(lines(&mut s, "SELECT id FROM a ORDER BY id"), ["1", "3"]);
    // A RIGHT JOIN keeps b's rows without a partner; an alias names the target.
    let (n, _) = info(
        &mut s,
        "DELETE t2 FROM a AS t1 RIGHT JOIN b AS t2 ON t1.id = t2.aid WHERE t1.id IS NULL",
    );
    assert_eq!(n, 1);
    assert!(lines(&mut s, "SELECT id FROM b").is_empty());
    let e = fail(&mut s, "DELETE zz FROM a JOIN b ON a.id = b.aid");
    assert_eq!(
        (e.code, e.message.as_str()),
        (1109, "Unknown table 'zz' in MULTI DELETE")
    );
    let e = fail(&mut s, "DELETE a FROM a JOIN b ON a.id = b.aid LIMIT 1");
    assert_eq!(e.code, 1064);
}

/// Foreign keys and CHECK constraints hold for multi-table statements as for single-table
/// ones (codes and texts as MariaDB 10.11).
#[test]
fn multi_table_statements_keep_constraints() {
    let db = Db::open("multi-constraints");
    let mut s = session(&db);
    ok(&mut s, "CREATE TABLE p (id INT PRIMARY KEY)");
    ok(
        &mut s,
        "CREATE TABLE c (id INT PRIMARY KEY, pid INT, v INT CHECK (v < 1000), \
         CONSTRAINT fk_p FOREIGN KEY (pid) REFERENCES p (id))",
    );
    ok(&mut s, "INSERT INTO p VALUES (1), (2)");
    ok(&mut s, "INSERT INTO c VALUES (10, 1, 5), (20, 2, 6)");
    let e = fail(
        &mut s,
        "DELETE p FROM p JOIN c ON c.pid = p.id WHERE c.id = 10",
    );
    assert_eq!(e.code, 1451, "{}", e.message);
    let e = fail(
        &mut s,
        "UPDATE c JOIN p ON c.pid = p.id SET c.pid = p.id + 10",
    );
    assert_eq!(e.code, 1452, "{}", e.message);
    let e = fail(&mut s, "UPDATE c JOIN p ON c.pid = p.id SET c.v = 5000");
    assert_eq!(
        (e.code, e.message.as_str()),
        (4025, "CONSTRAINT `c.v` failed for `m`.`c`")
    );
    // Nothing changed.
    assert_eq!(
        lines(&mut s, "SELECT id, pid, v FROM c ORDER BY id"),
        ["10|1|5", "20|2|6"]
    );
}
