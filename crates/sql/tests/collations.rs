//! Collations end to end through `Session::query`: comparisons, ORDER BY, GROUP BY, DISTINCT,
//! LIKE, MIN/MAX, unique keys and index ranges under utf8mb4_general_ci (the default),
//! utf8mb4_bin and utf8mb4_unicode_ci, COLLATE in expressions, SET NAMES, the errors of an
//! illegal mix or an unknown name, and SHOW CREATE TABLE / SHOW FULL COLUMNS. Every expected
//! value was produced by MariaDB 10.11.19 running the same statements (utf8mb4 database).

use onelog_sql::Session;

mod common;
use common::{fail, ok, text_rows as rows, Db};

fn session(db: &Db) -> Session {
    let mut s = Session::new(db.server.clone(), 1, "root", "localhost");
    ok(&mut s, "CREATE DATABASE cdb");
    ok(&mut s, "USE cdb");
    s
}

/// The first column of each row, joined with spaces.
fn col(s: &mut Session, sql: &str) -> String {
    rows(s, sql)
        .iter()
        .map(|r| r[0].clone())
        .collect::<Vec<_>>()
        .join(" ")
}

fn setup(s: &mut Session) {
    ok(
        s,
        "CREATE TABLE w (id INT PRIMARY KEY, g VARCHAR(10), \
         b VARCHAR(10) COLLATE utf8mb4_bin, u VARCHAR(10) COLLATE utf8mb4_unicode_ci, KEY kg (g))",
    );
    ok(
        s,
        "INSERT INTO w VALUES (1,'a','a','ß'),(2,'B','B','ss'),(3,'á','á','s'),(4,'b','b','Ss'),\
         (5,'C','C','t')",
    );
}

#[test]
fn unique_keys_follow_the_collation() {
    let db = Db::open("coll-unique");
    let mut s = session(&db);
    ok(
        &mut s,
        "CREATE TABLE p (name VARCHAR(20) PRIMARY KEY, n INT)",
    );
    ok(&mut s, "INSERT INTO p VALUES ('Bob', 1)");
    let e = fail(&mut s, "INSERT INTO p VALUES ('bob', 2)");
    assert_eq!(
        (e.code, e.message.as_str()),
        (1062, "Duplicate entry 'bob' for key 'PRIMARY'")
    );
    ok(
        &mut s,
        "CREATE TABLE u (id INT PRIMARY KEY, name VARCHAR(20), UNIQUE KEY un (name))",
    );
    ok(&mut s, "INSERT INTO u VALUES (1,'Bob')");
    let e = fail(&mut s, "INSERT INTO u VALUES (2,'bob ')");
    assert_eq!(
        (e.code, e.message.as_str()),
        (1062, "Duplicate entry 'bob ' for key 'un'")
    );
    // A primary key lookup finds the row whatever the case.
    assert_eq!(col(&mut s, "SELECT n FROM p WHERE name = 'BOB'"), "1");
    ok(&mut s, "UPDATE p SET n = 5 WHERE name = 'bOb'");
    assert_eq!(col(&mut s, "SELECT n FROM p"), "5");
    // utf8mb4_bin keeps them apart.
    ok(
        &mut s,
        "CREATE TABLE pb (name VARCHAR(20) COLLATE utf8mb4_bin PRIMARY KEY)",
    );
    ok(&mut s, "INSERT INTO pb VALUES ('Bob'), ('bob')");
    assert_eq!(fail(&mut s, "INSERT INTO pb VALUES ('bob  ')").code, 1062);
}

#[test]
fn comparisons_sorting_and_grouping_follow_column_collations() {
    let db = Db::open("coll-cmp");
    let mut s = session(&db);
    setup(&mut s);
    assert_eq!(
        col(&mut s, "SELECT id FROM w WHERE g = 'A' ORDER BY id"),
        "1 3"
    );
    assert_eq!(
        col(&mut s, "SELECT id FROM w WHERE b = 'A' ORDER BY id"),
        ""
    );
    assert_eq!(
        col(&mut s, "SELECT id FROM w WHERE u = 'ss' ORDER BY id"),
        "1 2 4"
    );
    assert_eq!(col(&mut s, "SELECT g FROM w ORDER BY g, id"), "a á B b C");
    assert_eq!(col(&mut s, "SELECT b FROM w ORDER BY b"), "B C a b á");
    assert_eq!(col(&mut s, "SELECT u FROM w ORDER BY u, id"), "s ß ss Ss t");
    assert_eq!(
        rows(
            &mut s,
            "SELECT COUNT(*), MIN(id) FROM w GROUP BY g ORDER BY MIN(id)"
        ),
        vec![vec!["2", "1"], vec!["2", "2"], vec!["1", "5"]]
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT COUNT(DISTINCT g), COUNT(DISTINCT b), COUNT(DISTINCT u) FROM w"
        ),
        vec![vec!["3", "5", "3"]]
    );
    assert_eq!(
        col(&mut s, "SELECT id FROM w WHERE g LIKE 'a%' ORDER BY id"),
        "1 3"
    );
    assert_eq!(
        col(&mut s, "SELECT id FROM w WHERE b LIKE 'a%' ORDER BY id"),
        "1"
    );
    // Index ranges on kg follow utf8mb4_general_ci.
    assert_eq!(
        col(&mut s, "SELECT id FROM w WHERE g > 'a' ORDER BY id"),
        "2 4 5"
    );
    assert_eq!(
        col(&mut s, "SELECT id FROM w WHERE g IN ('A','c') ORDER BY id"),
        "1 3 5"
    );
    assert_eq!(
        col(
            &mut s,
            "SELECT id FROM w WHERE g BETWEEN 'a' AND 'b' ORDER BY id"
        ),
        "1 2 3 4"
    );
    assert_eq!(
        col(
            &mut s,
            "SELECT id FROM w WHERE g = 'b' OR g = 'c' ORDER BY id"
        ),
        "2 4 5"
    );
    // A _bin column against a general_ci one: _bin wins.
    assert_eq!(
        col(&mut s, "SELECT id FROM w WHERE g = b ORDER BY id"),
        "1 2 3 4 5"
    );
    assert_eq!(
        rows(&mut s, "SELECT MAX(g), MIN(b), MAX(b) FROM w"),
        vec![vec!["C", "B", "á"]]
    );
    assert_eq!(
        col(
            &mut s,
            "SELECT id FROM w WHERE g = 'A' COLLATE utf8mb4_bin ORDER BY id"
        ),
        ""
    );
    assert_eq!(
        col(
            &mut s,
            "SELECT CASE g WHEN 'A' THEN 1 ELSE 0 END FROM w ORDER BY id"
        ),
        "1 0 1 0 0"
    );
    ok(&mut s, "DELETE FROM w WHERE g = 'A'");
    assert_eq!(col(&mut s, "SELECT id FROM w ORDER BY id"), "2 4 5");
}

#[test]
fn literals_follow_the_connection_collation_and_collate() {
    let db = Db::open("coll-lit");
    let mut s = session(&db);
    assert_eq!(
        rows(
            &mut s,
            "SELECT 'a' = 'A', 'a' = 'A' COLLATE utf8mb4_bin, 'ß' = 's', \
             'ß' = 'ss' COLLATE utf8mb4_unicode_ci, 'a ' = 'a', 'a' < 'B'"
        ),
        vec![vec!["1", "0", "1", "1", "1", "1"]]
    );
    // Binary literals are binary strings: they win over a literal, a column wins over them.
    assert_eq!(
        rows(
            &mut s,
            "SELECT _binary'A' = 'a', x'41' = 'a', 0x41 = 'a', _binary'a' = 'a'"
        ),
        vec![vec!["0", "0", "0", "1"]]
    );
    setup(&mut s);
    ok(&mut s, "DELETE FROM w WHERE id IN (1, 3)");
    assert_eq!(col(&mut s, "SELECT COUNT(*) FROM w WHERE g = x'62'"), "2");
    assert_eq!(
        col(&mut s, "SELECT COUNT(*) FROM w WHERE b = _binary'b'"),
        "1"
    );
    ok(&mut s, "SET NAMES utf8mb4 COLLATE utf8mb4_bin");
    assert_eq!(col(&mut s, "SELECT 'a' = 'A'"), "0");
    ok(&mut s, "SET NAMES utf8mb4 COLLATE utf8mb4_unicode_ci");
    assert_eq!(
        rows(&mut s, "SELECT 'ß' = 'ss', 'ß' = 's'"),
        vec![vec!["1", "0"]]
    );
}

#[test]
fn illegal_mixes_and_unknown_names_are_refused_as_mariadb() {
    let db = Db::open("coll-err");
    let mut s = session(&db);
    setup(&mut s);
    let cases = [
        (
            "SELECT g = u FROM w",
            1267,
            "Illegal mix of collations (utf8mb4_general_ci,IMPLICIT) and \
             (utf8mb4_unicode_ci,IMPLICIT) for operation '='",
        ),
        (
            "SELECT g IN (u, 'a') FROM w",
            1270,
            "Illegal mix of collations (utf8mb4_general_ci,IMPLICIT), \
             (utf8mb4_unicode_ci,IMPLICIT), (utf8mb4_general_ci,COERCIBLE) for operation 'in'",
        ),
        ("SELECT 'a' COLLATE foo", 1273, "Unknown collation: 'foo'"),
        (
            "CREATE TABLE z (id INT PRIMARY KEY, a VARCHAR(3) CHARACTER SET utf8mb4 COLLATE binary)",
            1253,
            "COLLATION 'binary' is not valid for CHARACTER SET 'utf8mb4'",
        ),
        (
            "CREATE TABLE z (id INT PRIMARY KEY, a VARCHAR(3)) CHARSET foo",
            1115,
            "Unknown character set: 'foo'",
        ),
    ];
    for (sql, code, msg) in cases {
        let e = fail(&mut s, sql);
        assert_eq!((e.code, e.message.as_str()), (code, msg), "{sql}");
    }
    // latin1 is not stored by onelog: refused rather than ignored.
    assert_eq!(
        fail(
            &mut s,
            "CREATE TABLE z (id INT PRIMARY KEY, a VARCHAR(3) COLLATE latin1_bin)"
        )
        .code,
        1235
    );
}

#[test]
fn show_prints_column_collations_as_mariadb() {
    let db = Db::open("coll-show");
    let mut s = session(&db);
    setup(&mut s);
    assert_eq!(
        rows(&mut s, "SHOW CREATE TABLE w")[0][1],
        "CREATE TABLE `w` (\n  `id` int(11) NOT NULL,\n  `g` varchar(10) DEFAULT NULL,\n  \
         `b` varchar(10) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin DEFAULT NULL,\n  \
         `u` varchar(10) CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci DEFAULT NULL,\n  \
         PRIMARY KEY (`id`),\n  KEY `kg` (`g`)\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 \
         COLLATE=utf8mb4_general_ci"
    );
    let cols: Vec<(String, String)> = rows(&mut s, "SHOW FULL COLUMNS FROM w")
        .into_iter()
        .map(|r| (r[0].clone(), r[2].clone()))
        .collect();
    let want = [
        ("id", "NULL"),
        ("g", "utf8mb4_general_ci"),
        ("b", "utf8mb4_bin"),
        ("u", "utf8mb4_unicode_ci"),
    ];
    assert_eq!(
        cols,
        want.map(|(a, b)| (a.to_string(), b.to_string())).to_vec()
    );
    // Result metadata: a utf8mb4_bin column is flagged BINARY (128), charset 45 (MariaDB's
    // `--column-type-info`).
    match ok(&mut s, "SELECT g, b, u FROM w") {
        onelog_sql::Output::Rows { columns, .. } => {
            let f: Vec<(u16, bool)> = columns
                .iter()
                .map(|c| (c.charset, c.flags & 128 != 0))
                .collect();
            assert_eq!(f, vec![(45, false), (45, true), (45, false)]);
        }
        other => panic!("{other:?}"),
    }
    ok(
        &mut s,
        "CREATE TABLE t3 (id INT PRIMARY KEY, a VARCHAR(5)) COLLATE utf8mb4_bin",
    );
    assert_eq!(
        rows(&mut s, "SHOW CREATE TABLE t3")[0][1],
        "CREATE TABLE `t3` (\n  `id` int(11) NOT NULL,\n  `a` varchar(5) DEFAULT NULL,\n  \
         PRIMARY KEY (`id`)\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin"
    );
    assert_eq!(col(&mut s, "SELECT COUNT(*) FROM t3 WHERE a = 'x'"), "0");
}

#[test]
fn column_collations_survive_a_restart() {
    use onelog_sql::{Server, ServerConfig};
    let dir = common::TempDir::new("coll-restart");
    let open = || {
        let mut cfg = ServerConfig::new(dir.path());
        cfg.max_binlog_size = 1 << 20;
        Server::open(cfg).unwrap().0
    };
    let server = open();
    let mut s = Session::new(server.clone(), 1, "root", "localhost");
    ok(&mut s, "CREATE DATABASE cdb");
    ok(&mut s, "USE cdb");
    setup(&mut s);
    ok(&mut s, "CREATE TABLE p (name VARCHAR(20) PRIMARY KEY)");
    ok(&mut s, "INSERT INTO p VALUES ('Bob')");
    drop(s);
    server.shutdown().unwrap();
    drop(server);
    let server = open();
    let mut s = Session::new(server.clone(), 1, "root", "localhost");
    ok(&mut s, "USE cdb");
    assert_eq!(
        rows(&mut s, "SHOW FULL COLUMNS FROM w")[3][2],
        "utf8mb4_unicode_ci"
    );
    assert_eq!(fail(&mut s, "INSERT INTO p VALUES ('BOB')").code, 1062);
    assert_eq!(
        col(&mut s, "SELECT id FROM w WHERE g > 'a' ORDER BY id"),
        "2 4 5"
    );
    server.shutdown().unwrap();
}

#[test]
fn the_handshake_collation_becomes_the_connection_collation() {
    let db = Db::open("coll-handshake");
    let mut s = session(&db);
    // Node's mysql2 sends utf8mb4_unicode_ci (224) in its handshake response.
    onelog_sql::sysvar::set_client_collation(&mut s, 224);
    assert_eq!(
        rows(
            &mut s,
            "SELECT @@collation_connection, @@character_set_client, 'ß' = 'ss'"
        ),
        vec![vec!["utf8mb4_unicode_ci", "utf8mb4", "1"]]
    );
    // An id onelog does not have (latin1_swedish_ci) leaves the defaults.
    let mut t = session_named(&db);
    onelog_sql::sysvar::set_client_collation(&mut t, 8);
    assert_eq!(
        col(&mut t, "SELECT @@collation_connection"),
        "utf8mb4_general_ci"
    );
}

fn session_named(db: &Db) -> Session {
    Session::new(db.server.clone(), 2, "root", "localhost")
}
