//! ALTER TABLE with several operations, FIRST/AFTER, MODIFY, CHANGE, RENAME COLUMN, ALTER
//! COLUMN SET/DROP DEFAULT and ADD/DROP PRIMARY KEY, each answer as MariaDB 10.11 gave it for
//! the same statements (strict mode): the order rules of one ALTER, the conversion of the
//! existing values with MariaDB's errors and texts, keys following their columns, all or
//! nothing, and one logged record per statement.

mod common;
use common::{err, fail, log_records, ok, wire_rows as rows, Db};
use onelog_sql::Session;

fn show(s: &mut Session, t: &str) -> String {
    rows(s, &format!("SHOW CREATE TABLE {t}"))[0][1].clone()
}

fn error(s: &mut Session, sql: &str) -> (u16, String) {
    let e = fail(s, sql);
    (e.code, e.message)
}

#[test]
fn conversions_fail_as_mariadb_and_change_nothing() {
    let db = Db::open("alter-convert");
    let mut s = Session::new(db.server.clone(), 1, "root", "localhost");
    for sql in [
        "CREATE DATABASE d",
        "USE d",
        "CREATE TABLE t (id INT PRIMARY KEY, a VARCHAR(10), b INT, c INT)",
        "INSERT INTO t VALUES (1, 'abcdef', 5, NULL), (2, 'x', 300, 7)",
    ] {
        ok(&mut s, sql);
    }
    let before = show(&mut s, "t");
    for (sql, code, text) in [
        (
            "ALTER TABLE t MODIFY a VARCHAR(3)",
            1265,
            "Data truncated for column 'a' at row 1",
        ),
        (
            "ALTER TABLE t MODIFY b TINYINT",
            1264,
            "Out of range value for column 'b' at row 2",
        ),
        (
            "ALTER TABLE t MODIFY c INT NOT NULL",
            1265,
            "Data truncated for column 'c' at row 1",
        ),
        (
            "ALTER TABLE t MODIFY b VARCHAR(2)",
            1406,
            "Data too long for column 'b' at row 2",
        ),
        (
            "ALTER TABLE t MODIFY a INT",
            1292,
            "Truncated incorrect INTEGER value: 'abcdef'",
        ),
        (
            "ALTER TABLE t ADD z INT, DROP z",
            1091,
            "Can't DROP COLUMN `z`; check that it exists",
        ),
        (
            "ALTER TABLE t DROP b, ADD b2 INT AFTER b",
            1054,
            "Unknown column 'b' in 't'",
        ),
        // A later operation fails: the earlier ones are not applied either.
        (
            "ALTER TABLE t ADD q INT FIRST, MODIFY b TINYINT",
            1264,
            "Out of range value for column 'b' at row 2",
        ),
    ] {
        assert_eq!(error(&mut s, sql), (code, text.to_string()), "{sql}");
    }
    assert_eq!(show(&mut s, "t"), before);
    assert_eq!(
        rows(&mut s, "SELECT * FROM t ORDER BY id"),
        vec![vec!["1", "abcdef", "5", "NULL"], vec!["2", "x", "300", "7"]]
    );
}

#[test]
fn several_operations_in_mariadb_order_as_one_record() {
    let db = Db::open("alter-multi");
    let mut s = Session::new(db.server.clone(), 1, "root", "localhost");
    for sql in [
        "CREATE DATABASE d",
        "USE d",
        "CREATE TABLE t (id INT PRIMARY KEY, a VARCHAR(10), b INT, c INT, KEY kb (b))",
        "INSERT INTO t VALUES (1, 'abcdef', 5, NULL), (2, 'x', 300, 7)",
    ] {
        ok(&mut s, sql);
    }
    let ddl = |db: &Db| {
        log_records(&db.server)
            .iter()
            .filter(|r| r.kind == onelog_log::RecordKind::Ddl)
            .count()
    };
    let n = ddl(&db);
    ok(
        &mut s,
        "ALTER TABLE t ADD x INT FIRST, ADD y INT AFTER b, DROP c",
    );
    assert_eq!(ddl(&db), n + 1);
    ok(
        &mut s,
        "ALTER TABLE t CHANGE a aa VARCHAR(20) NOT NULL DEFAULT 'q', RENAME COLUMN b TO bb",
    );
    ok(
        &mut s,
        "ALTER TABLE t ALTER COLUMN bb SET DEFAULT 9, ALTER y DROP DEFAULT",
    );
    assert_eq!(
        show(&mut s, "t"),
        "CREATE TABLE `t` (\n  `x` int(11) DEFAULT NULL,\n  `id` int(11) NOT NULL,\n  \
         `aa` varchar(20) NOT NULL DEFAULT 'q',\n  `bb` int(11) DEFAULT 9,\n  \
         `y` int(11) DEFAULT NULL,\n  PRIMARY KEY (`id`),\n  KEY `kb` (`bb`)\n) \
         ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci"
    );
    assert_eq!(
        rows(&mut s, "SELECT * FROM t ORDER BY id"),
        vec![
            vec!["NULL", "1", "abcdef", "5", "NULL"],
            vec!["NULL", "2", "x", "300", "NULL"]
        ]
    );
    // The renamed column's index still finds its rows.
    assert_eq!(
        rows(&mut s, "SELECT id FROM t WHERE bb = 300"),
        vec![vec!["2"]]
    );
    ok(&mut s, "INSERT INTO t (id) VALUES (3)");
    assert_eq!(
        rows(&mut s, "SELECT aa, bb FROM t WHERE id = 3"),
        vec![vec!["q", "9"]]
    );
    // Moved columns: MODIFY ... FIRST, MODIFY ... AFTER a column of the new list.
    ok(
        &mut s,
        "ALTER TABLE t MODIFY aa VARCHAR(20) FIRST, MODIFY x INT AFTER y",
    );
    assert_eq!(
        rows(&mut s, "SELECT * FROM t WHERE id = 2"),
        vec![vec!["x", "2", "300", "NULL", "NULL"]]
    );
}

#[test]
fn type_changes_convert_existing_values_as_mariadb() {
    let db = Db::open("alter-types");
    let mut s = Session::new(db.server.clone(), 1, "root", "localhost");
    for sql in [
        "CREATE DATABASE d",
        "USE d",
        "CREATE TABLE v (id INT PRIMARY KEY, s VARCHAR(10), i INT, dc DECIMAL(5,2))",
        "INSERT INTO v VALUES (1, '12', 5, 1.25), (2, '13', -7, -3.5)",
        "ALTER TABLE v MODIFY s INT",
        "ALTER TABLE v MODIFY dc INT",
    ] {
        ok(&mut s, sql);
    }
    assert_eq!(
        rows(&mut s, "SELECT * FROM v ORDER BY id"),
        vec![vec!["1", "12", "5", "1"], vec!["2", "13", "-7", "-4"]]
    );
    assert_eq!(
        error(&mut s, "ALTER TABLE v MODIFY i INT UNSIGNED"),
        (1264, "Out of range value for column 'i' at row 2".into())
    );
    ok(
        &mut s,
        "ALTER TABLE v MODIFY i VARCHAR(5), MODIFY dc DECIMAL(4,1)",
    );
    assert_eq!(
        rows(&mut s, "SELECT * FROM v ORDER BY id"),
        vec![vec!["1", "12", "5", "1.0"], vec!["2", "13", "-7", "-4.0"]]
    );
    // Types onelog does not convert between are refused, never stored otherwise.
    assert_eq!(err(&mut s, "ALTER TABLE v MODIFY s DATE"), 1235);
    // MariaDB 10.11 on the same rows: DOUBLE to INT rounds half to even, DATETIME to DATE
    // keeps the date with note 1265 where there was a time of day.
    for sql in [
        "CREATE TABLE cv (id INT PRIMARY KEY, i INT, d DOUBLE, dt DATETIME, da DATE, f FLOAT)",
        "INSERT INTO cv VALUES (1, 7, 2.5, '2020-01-02 03:04:05', '2021-05-06', 1.5), \
         (2, -3, -2.5, '2020-01-02 00:00:00', '2021-05-07', 0.1)",
        "ALTER TABLE cv MODIFY i DOUBLE, MODIFY d INT, MODIFY dt DATE",
    ] {
        ok(&mut s, sql);
    }
    assert_eq!(
        rows(&mut s, "SHOW WARNINGS"),
        vec![vec![
            "Note",
            "1265",
            "Data truncated for column 'dt' at row 1"
        ]]
    );
    ok(&mut s, "ALTER TABLE cv MODIFY da DATETIME, MODIFY f DOUBLE");
    assert_eq!(
        rows(&mut s, "SELECT * FROM cv ORDER BY id"),
        vec![
            vec!["1", "7", "2", "2020-01-02", "2021-05-06 00:00:00", "1.5"],
            vec![
                "2",
                "-3",
                "-2",
                "2020-01-02",
                "2021-05-07 00:00:00",
                "0.10000000149011612"
            ],
        ]
    );
}

#[test]
fn keys_follow_their_columns_and_primary_keys_change() {
    let db = Db::open("alter-keys");
    let mut s = Session::new(db.server.clone(), 1, "root", "localhost");
    for sql in [
        "CREATE DATABASE d",
        "USE d",
        "CREATE TABLE u (id INT PRIMARY KEY, a INT, b INT, KEY k (a, b), KEY k2 (b))",
        "INSERT INTO u VALUES (1, 10, 100), (2, 20, 200)",
        "ALTER TABLE u DROP b",
    ] {
        ok(&mut s, sql);
    }
    assert_eq!(
        show(&mut s, "u"),
        "CREATE TABLE `u` (\n  `id` int(11) NOT NULL,\n  `a` int(11) DEFAULT NULL,\n  \
         PRIMARY KEY (`id`),\n  KEY `k` (`a`)\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 \
         COLLATE=utf8mb4_general_ci"
    );
    assert_eq!(
        rows(&mut s, "SELECT id FROM u WHERE a = 20"),
        vec![vec!["2"]]
    );
    for sql in [
        "CREATE TABLE n (id INT PRIMARY KEY, a INT, b INT)",
        "INSERT INTO n VALUES (1, NULL, 1), (2, 5, NULL)",
    ] {
        ok(&mut s, sql);
    }
    assert_eq!(
        error(&mut s, "ALTER TABLE n ADD PRIMARY KEY (a)"),
        (1068, "Multiple primary key defined".into())
    );
    assert_eq!(
        error(
            &mut s,
            "ALTER TABLE n DROP PRIMARY KEY, ADD PRIMARY KEY (a)"
        ),
        (1265, "Data truncated for column 'a' at row 1".into())
    );
    assert_eq!(
        error(
            &mut s,
            "ALTER TABLE n DROP PRIMARY KEY, ADD PRIMARY KEY (b, id)"
        ),
        (1265, "Data truncated for column 'b' at row 2".into())
    );
    // A primary key column stays NOT NULL.
    ok(&mut s, "ALTER TABLE n MODIFY id INT NULL");
    assert!(show(&mut s, "n").contains("`id` int(11) NOT NULL"));
    ok(&mut s, "UPDATE n SET a = 1 WHERE id = 1");
    ok(
        &mut s,
        "ALTER TABLE n DROP PRIMARY KEY, ADD PRIMARY KEY (a)",
    );
    assert_eq!(
        rows(&mut s, "SELECT a, id FROM n ORDER BY a"),
        vec![vec!["1", "1"], vec!["5", "2"]]
    );
    ok(
        &mut s,
        "ALTER TABLE n DROP PRIMARY KEY, ADD PRIMARY KEY (id)",
    );
    ok(&mut s, "UPDATE n SET a = 5 WHERE id = 1");
    assert_eq!(
        error(
            &mut s,
            "ALTER TABLE n DROP PRIMARY KEY, ADD PRIMARY KEY (a)"
        ),
        (1062, "Duplicate entry '5' for key 'PRIMARY'".into())
    );
    ok(
        &mut s,
        "ALTER TABLE n ADD UNIQUE (b), ADD INDEX (b), ADD KEY (a, b)",
    );
    let ct = show(&mut s, "n");
    assert!(ct.contains("UNIQUE KEY `b` (`b`)"), "{ct}");
    assert!(ct.contains("KEY `b_2` (`b`)"), "{ct}");
    assert!(ct.contains("KEY `a` (`a`,`b`)"), "{ct}");
    // MariaDB's key order: unique keys first (over NOT NULL columns before the others), each
    // kind in the order made.
    for sql in [
        "CREATE TABLE k2 (id INT PRIMARY KEY, a INT, b INT NOT NULL, c INT)",
        "ALTER TABLE k2 ADD KEY (a), ADD UNIQUE (c), ADD UNIQUE (b), ADD UNIQUE (a, c)",
    ] {
        ok(&mut s, sql);
    }
    assert_eq!(
        show(&mut s, "k2"),
        "CREATE TABLE `k2` (\n  `id` int(11) NOT NULL,\n  `a` int(11) DEFAULT NULL,\n  \
         `b` int(11) NOT NULL,\n  `c` int(11) DEFAULT NULL,\n  PRIMARY KEY (`id`),\n  \
         UNIQUE KEY `b` (`b`),\n  UNIQUE KEY `c` (`c`),\n  UNIQUE KEY `a_2` (`a`,`c`),\n  \
         KEY `a` (`a`)\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci"
    );
    // Without its primary key the table keeps its rows (`no_primary_key.rs`).
    ok(&mut s, "ALTER TABLE n DROP PRIMARY KEY");
    assert!(!show(&mut s, "n").contains("PRIMARY KEY"));
}

#[test]
fn non_strict_copies_convert_with_mariadbs_warnings() {
    let db = Db::open("alter-loose");
    let mut s = Session::new(db.server.clone(), 1, "root", "localhost");
    for sql in [
        "SET sql_mode = ''",
        "CREATE DATABASE d",
        "USE d",
        "CREATE TABLE ns (id INT PRIMARY KEY, a VARCHAR(10), b INT, c INT, s VARCHAR(10), \
         dc DECIMAL(6,2))",
        "INSERT INTO ns VALUES (1, 'abcdef', 300, NULL, '12abc', 1234.5), \
         (2, 'x', -300, 7, 'abc', -9999.99), (3, 'y', 5, 1, ' 13 ', 1)",
        "ALTER TABLE ns MODIFY a VARCHAR(3), MODIFY b TINYINT, MODIFY c INT NOT NULL, \
         MODIFY s INT, MODIFY dc DECIMAL(4,1)",
    ] {
        ok(&mut s, sql);
    }
    // MariaDB 10.11's SHOW WARNINGS after the same statement.
    let w = |l: &str, c: &str, m: &str| vec![l.to_string(), c.to_string(), m.to_string()];
    assert_eq!(
        rows(&mut s, "SHOW WARNINGS"),
        vec![
            w("Warning", "1265", "Data truncated for column 'a' at row 1"),
            w(
                "Warning",
                "1264",
                "Out of range value for column 'b' at row 1"
            ),
            w("Warning", "1265", "Data truncated for column 'c' at row 1"),
            w(
                "Warning",
                "1292",
                "Truncated incorrect INTEGER value: '12abc'"
            ),
            w(
                "Warning",
                "1264",
                "Out of range value for column 'dc' at row 1"
            ),
            w(
                "Warning",
                "1264",
                "Out of range value for column 'b' at row 2"
            ),
            w(
                "Warning",
                "1292",
                "Truncated incorrect INTEGER value: 'abc'"
            ),
            w(
                "Warning",
                "1264",
                "Out of range value for column 'dc' at row 2"
            ),
            w("Note", "1292", "Truncated incorrect INTEGER value: ' 13 '"),
        ]
    );
    assert_eq!(
        rows(&mut s, "SELECT * FROM ns ORDER BY id"),
        vec![
            vec!["1", "abc", "127", "0", "12", "999.9"],
            vec!["2", "x", "-128", "7", "0", "-999.9"],
            vec!["3", "y", "5", "1", "13", "1.0"],
        ]
    );
    // Logged with the session's non-strict sql_mode, so a replica clips the values as well.
    let last = log_records(&db.server)
        .into_iter()
        .rfind(|r| r.kind == onelog_log::RecordKind::Ddl)
        .unwrap();
    let gtid_len = u32::from_le_bytes(last.events[9..13].try_into().unwrap()) as usize;
    let q = onelog_binlog::event::QueryEvent::decode(&last.events[gtid_len..]).unwrap();
    assert!(q.query.starts_with("ALTER TABLE ns MODIFY a VARCHAR(3)"));
    assert_eq!(q.sql_mode & (1 << 22), 0);
    assert_ne!(q.sql_mode, 0);
    ok(
        &mut s,
        "ALTER TABLE ns MODIFY b VARCHAR(2), MODIFY a CHAR(2)",
    );
    assert_eq!(
        rows(&mut s, "SHOW WARNINGS"),
        vec![
            w("Warning", "1265", "Data truncated for column 'a' at row 1"),
            w("Warning", "1265", "Data truncated for column 'b' at row 1"),
            w("Warning", "1265", "Data truncated for column 'b' at row 2"),
        ]
    );
    assert_eq!(
        rows(&mut s, "SELECT a, b FROM ns ORDER BY id"),
        vec![vec!["ab", "12"], vec!["x", "-1"], vec!["y", "5"]]
    );
    ok(&mut s, "ALTER TABLE ns MODIFY b TINYINT UNSIGNED");
    assert_eq!(
        rows(&mut s, "SHOW WARNINGS"),
        vec![w(
            "Warning",
            "1264",
            "Out of range value for column 'b' at row 2"
        )]
    );
    assert_eq!(
        rows(&mut s, "SELECT b FROM ns ORDER BY id"),
        vec![vec!["12"], vec!["0"], vec!["5"]]
    );
}

#[test]
fn an_added_auto_increment_column_numbers_the_rows_and_rename_goes_along() {
    let db = Db::open("alter-auto");
    let mut s = Session::new(db.server.clone(), 1, "root", "localhost");
    for sql in [
        "CREATE DATABASE d",
        "USE d",
        "CREATE TABLE ai (k VARCHAR(5) PRIMARY KEY, v INT)",
        "INSERT INTO ai VALUES ('b', 1), ('a', 2), ('c', 3)",
        "ALTER TABLE ai ADD id INT AUTO_INCREMENT UNIQUE FIRST",
    ] {
        ok(&mut s, sql);
    }
    // As MariaDB 10.11: numbered in primary key order, the counter past them.
    assert_eq!(
        rows(&mut s, "SELECT * FROM ai ORDER BY id"),
        vec![
            vec!["1", "a", "2"],
            vec!["2", "b", "1"],
            vec!["3", "c", "3"]
        ]
    );
    assert!(show(&mut s, "ai").contains("`id` int(11) NOT NULL AUTO_INCREMENT,"));
    ok(&mut s, "INSERT INTO ai (k) VALUES ('d')");
    assert_eq!(
        rows(&mut s, "SELECT id, v FROM ai WHERE k = 'd'"),
        vec![vec!["4", "NULL"]]
    );
    assert_eq!(
        error(&mut s, "ALTER TABLE ai ADD id2 INT AUTO_INCREMENT"),
        (
            1075,
            "Incorrect table definition; there can be only one auto column and it must be \
             defined as a key"
                .into()
        )
    );
    ok(&mut s, "ALTER TABLE ai RENAME COLUMN v TO w, RENAME TO ai2");
    assert_eq!(err(&mut s, "SELECT * FROM ai"), 1146);
    assert_eq!(
        rows(&mut s, "SELECT w FROM ai2 WHERE k = 'a'"),
        vec![vec!["2"]]
    );
    ok(&mut s, "CREATE TABLE other (id INT PRIMARY KEY)");
    assert_eq!(
        err(&mut s, "ALTER TABLE ai2 ADD z INT, RENAME TO other"),
        1050
    );
    assert!(!show(&mut s, "ai2").contains("`z`"));
}

#[test]
fn a_transaction_that_wrote_the_table_holds_any_alter_up_and_commits_first() {
    let db = Db::open("alter-1412");
    let mut s = Session::new(db.server.clone(), 1, "root", "localhost");
    for sql in [
        "CREATE DATABASE d",
        "USE d",
        "CREATE TABLE t (id INT PRIMARY KEY, a INT, KEY ka (a))",
        "INSERT INTO t VALUES (1, 10), (2, 20)",
    ] {
        ok(&mut s, sql);
    }
    let mut w = Session::new(db.server.clone(), 2, "root", "localhost");
    // The ALTER waits for the transaction (MariaDB's metadata lock: 1205 once its
    // lock_wait_timeout passes), which commits; then the ALTER runs. A rename copies no row
    // (the same rows, keys and types), yet the definition changes: it waits too.
    ok(&mut s, "SET SESSION lock_wait_timeout = 1");
    for (alter, id) in [
        (
            "ALTER TABLE t RENAME COLUMN a TO b, ALTER b SET DEFAULT 5",
            50,
        ),
        ("ALTER TABLE t MODIFY b BIGINT, ADD c INT FIRST", 51),
    ] {
        ok(&mut w, "USE d");
        ok(&mut w, "BEGIN");
        ok(&mut w, &format!("INSERT INTO t (id) VALUES ({id})"));
        assert_eq!(err(&mut s, alter), 1205, "{alter}");
        ok(&mut w, "COMMIT");
        ok(&mut s, alter);
    }
    assert_eq!(
        rows(&mut s, "SELECT id FROM t WHERE b = 20"),
        vec![vec!["2"]]
    );
    ok(&mut s, "INSERT INTO t (id) VALUES (3)");
    assert_eq!(
        rows(&mut s, "SELECT * FROM t ORDER BY id"),
        vec![
            vec!["NULL", "1", "10"],
            vec!["NULL", "2", "20"],
            // MODIFY replaced the whole definition, its DEFAULT 5 too (as MariaDB).
            vec!["NULL", "3", "NULL"],
            vec!["NULL", "50", "NULL"],
            vec!["NULL", "51", "5"],
        ]
    );
}

#[test]
fn auto_increment_sets_the_counter_as_innodb() {
    let db = Db::open("alter-auto-counter");
    let mut s = Session::new(db.server.clone(), 1, "root", "localhost");
    for sql in [
        "CREATE DATABASE d",
        "USE d",
        "CREATE TABLE ac (id INT AUTO_INCREMENT PRIMARY KEY, v INT)",
        "INSERT INTO ac (v) VALUES (1), (2), (3)",
        "ALTER TABLE ac AUTO_INCREMENT=100",
    ] {
        ok(&mut s, sql);
    }
    // Each value as MariaDB 10.11 showed it after the same statements.
    let counter = |s: &mut Session| {
        let ct = show(s, "ac");
        ct.split_whitespace()
            .find_map(|w| w.strip_prefix("AUTO_INCREMENT=").map(String::from))
    };
    assert_eq!(counter(&mut s).as_deref(), Some("100"));
    ok(&mut s, "INSERT INTO ac (v) VALUES (4)");
    assert_eq!(rows(&mut s, "SELECT MAX(id) FROM ac"), vec![vec!["100"]]);
    // Below the largest value: the largest + 1.
    ok(&mut s, "ALTER TABLE ac AUTO_INCREMENT=50");
    assert_eq!(counter(&mut s).as_deref(), Some("101"));
    ok(&mut s, "INSERT INTO ac (v) VALUES (5)");
    assert_eq!(rows(&mut s, "SELECT MAX(id) FROM ac"), vec![vec!["101"]]);
    ok(&mut s, "ALTER TABLE ac AUTO_INCREMENT=10, ADD w INT");
    assert_eq!(counter(&mut s).as_deref(), Some("102"));
    // A table without an AUTO_INCREMENT column takes it and shows none.
    ok(&mut s, "CREATE TABLE na (id INT PRIMARY KEY)");
    ok(&mut s, "ALTER TABLE na AUTO_INCREMENT=10");
    assert!(!show(&mut s, "na").contains("AUTO_INCREMENT"));
}
