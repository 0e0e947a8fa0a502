//! A key's `USING` and `COMMENT` are kept and shown as MariaDB shows them (they were parsed
//! and dropped), other dialects' key clauses are refused instead of dropped (a partial index's
//! `WHERE` made a full index), and comments longer than MariaDB's limits answer as MariaDB.
//! Every expected value was measured on MariaDB 10.11.19 with the same statements.

mod common;
use common::{err, key_lines, ok, open_in, root_in, text_rows, warning, warnings, TempDir};

#[test]
fn using_and_comment_of_keys_are_kept_shown_and_survive_alter_and_restart() {
    let dir = TempDir::new("index-options");
    let server = open_in(&dir);
    let mut s = root_in(&server, 1, "d");
    for sql in [
        "CREATE TABLE t (id INT, a INT, b VARCHAR(10), \
         PRIMARY KEY (id) USING BTREE COMMENT 'pk c', KEY ka (a) USING HASH COMMENT 'hi', \
         UNIQUE KEY ub (b) COMMENT 'u''q', KEY kab (a,b) USING BTREE)",
        "CREATE INDEX ix1 ON t (b) USING HASH COMMENT 'ci'",
        "CREATE INDEX ix2 USING BTREE ON t (a, id)",
        "ALTER TABLE t ADD INDEX ix3 (b) COMMENT 'al', ADD KEY ix4 USING HASH (a)",
        // The last COMMENT and the last USING win.
        "CREATE INDEX ix6 ON t (a) COMMENT 'a' COMMENT 'b'",
        "CREATE INDEX g2 ON t (a) USING HASH USING BTREE",
        // A rebuilding ALTER keeps every key's options.
        "ALTER TABLE t ADD COLUMN c INT",
    ] {
        ok(&mut s, sql);
    }
    let measured = [
        "PRIMARY KEY (`id`) USING BTREE COMMENT 'pk c'",
        "UNIQUE KEY `ub` (`b`) COMMENT 'u''q'",
        "KEY `ka` (`a`) USING HASH COMMENT 'hi'",
        "KEY `kab` (`a`,`b`) USING BTREE",
        "KEY `ix1` (`b`) USING HASH COMMENT 'ci'",
        "KEY `ix2` (`a`,`id`) USING BTREE",
        "KEY `ix3` (`b`) COMMENT 'al'",
        "KEY `ix4` (`a`) USING HASH",
        "KEY `ix6` (`a`) COMMENT 'b'",
        "KEY `g2` (`a`) USING BTREE",
    ];
    assert_eq!(key_lines(&mut s, "t"), measured);
    // SHOW INDEX and information_schema: Index_type is BTREE whatever USING says (InnoDB's
    // answer), Index_comment the comment.
    let index = text_rows(&mut s, "SHOW INDEX FROM t");
    let cols: Vec<[&str; 4]> = index
        .iter()
        .map(|r| [r[2].as_str(), r[3].as_str(), r[10].as_str(), r[12].as_str()])
        .collect();
    assert_eq!(
        cols[..5],
        [
            ["PRIMARY", "1", "BTREE", "pk c"],
            ["ub", "1", "BTREE", "u'q"],
            ["ka", "1", "BTREE", "hi"],
            ["kab", "1", "BTREE", ""],
            ["kab", "2", "BTREE", ""],
        ]
    );
    assert_eq!(
        text_rows(
            &mut s,
            "SELECT INDEX_NAME, SEQ_IN_INDEX, INDEX_TYPE, INDEX_COMMENT FROM \
             information_schema.STATISTICS WHERE TABLE_NAME = 't' AND INDEX_COMMENT <> ''"
        ),
        [
            ["PRIMARY", "1", "BTREE", "pk c"],
            ["ub", "1", "BTREE", "u'q"],
            ["ka", "1", "BTREE", "hi"],
            ["ix1", "1", "BTREE", "ci"],
            ["ix3", "1", "BTREE", "al"],
            ["ix6", "1", "BTREE", "b"],
        ]
    );
    // A new primary key has its own options; keys keep MariaDB's order (a non-unique key
    // does not move when its column becomes NOT NULL).
    ok(
        &mut s,
        "ALTER TABLE t DROP PRIMARY KEY, ADD PRIMARY KEY (id, a) COMMENT 'new pk'",
    );
    ok(
        &mut s,
        "ALTER TABLE t DROP INDEX ka, ADD UNIQUE KEY uc (c) USING HASH COMMENT 'uc'",
    );
    let after = [
        "PRIMARY KEY (`id`,`a`) COMMENT 'new pk'",
        "UNIQUE KEY `ub` (`b`) COMMENT 'u''q'",
        "UNIQUE KEY `uc` (`c`) USING HASH COMMENT 'uc'",
        "KEY `kab` (`a`,`b`) USING BTREE",
        "KEY `ix1` (`b`) USING HASH COMMENT 'ci'",
        "KEY `ix2` (`a`,`id`) USING BTREE",
        "KEY `ix3` (`b`) COMMENT 'al'",
        "KEY `ix4` (`a`) USING HASH",
        "KEY `ix6` (`a`) COMMENT 'b'",
        "KEY `g2` (`a`) USING BTREE",
    ];
    assert_eq!(key_lines(&mut s, "t"), after);
    // Dropping the primary key drops its options.
    ok(
        &mut s,
        "CREATE TABLE p (id INT NOT NULL, PRIMARY KEY (id) COMMENT 'x')",
    );
    ok(
        &mut s,
        "ALTER TABLE p DROP PRIMARY KEY, ADD PRIMARY KEY (id)",
    );
    assert_eq!(key_lines(&mut s, "p"), ["PRIMARY KEY (`id`)"]);
    // Kept with the definition: after a restart, in the checkpoint and replayed from the log.
    ok(
        &mut s,
        "CREATE INDEX late ON t (c) USING HASH COMMENT 'added last'",
    );
    drop(s);
    server.shutdown().unwrap();
    drop(server);
    let server = open_in(&dir);
    let mut s = root_in(&server, 2, "d");
    let mut expected = after.to_vec();
    expected.push("KEY `late` (`c`) USING HASH COMMENT 'added last'");
    assert_eq!(key_lines(&mut s, "t"), expected);
    let _ = server.shutdown();
}

#[test]
fn other_dialects_key_clauses_are_refused_not_dropped() {
    let dir = TempDir::new("index-clauses");
    let server = open_in(&dir);
    let mut s = root_in(&server, 1, "d");
    ok(&mut s, "CREATE TABLE t (id INT PRIMARY KEY, a INT, b INT)");
    for (sql, code) in [
        // MariaDB's parser stops at each (1064): none may become a plain full index.
        ("CREATE INDEX g ON t (a) WHERE a > 1", 1064),
        ("CREATE INDEX CONCURRENTLY g ON t (a)", 1064),
        ("CREATE INDEX g ON t (a) INCLUDE (b)", 1064),
        ("CREATE INDEX g ON t (a) NULLS NOT DISTINCT", 1064),
        ("CREATE UNIQUE INDEX g ON t (a) NULLS DISTINCT", 1064),
        ("CREATE INDEX g ON t (a ASC NULLS FIRST)", 1064),
        ("CREATE INDEX g USING GIN ON t (a)", 1064),
        ("ALTER TABLE t ADD INDEX g (a) USING GIN", 1064),
        ("CREATE TABLE x1 (a INT, PRIMARY KEY (a) INCLUDE (a))", 1064),
        ("CREATE TABLE x2 (a INT, UNIQUE (a) DEFERRABLE)", 1064),
        (
            "CREATE TABLE x3 (a INT PRIMARY KEY, b INT, PRIMARY KEY (b))",
            1068,
        ),
        // MariaDB takes these; onelog's keys cannot be them yet (1235, never dropped).
        ("CREATE INDEX g ON t (a DESC)", 1235),
        ("ALTER TABLE t ADD INDEX g (a DESC), ADD COLUMN z INT", 1235),
        ("CREATE TABLE x4 (a INT, PRIMARY KEY (a DESC))", 1235),
        ("CREATE INDEX g ON t (a) USING RTREE", 1235),
    ] {
        assert_eq!(err(&mut s, sql), code, "{sql}");
    }
    assert_eq!(key_lines(&mut s, "t"), ["PRIMARY KEY (`id`)"]);
    assert_eq!(
        text_rows(&mut s, "SHOW TABLES"),
        [["t"]],
        "no table was created"
    );
    // ASC is MariaDB's default order, taken as written.
    ok(&mut s, "CREATE INDEX g ON t (a ASC, b)");
    assert_eq!(
        key_lines(&mut s, "t"),
        ["PRIMARY KEY (`id`)", "KEY `g` (`a`,`b`)"]
    );
    let _ = server.shutdown();
}

#[test]
fn comments_longer_than_mariadb_keeps_are_refused_or_cut() {
    let dir = TempDir::new("comment-lengths");
    let server = open_in(&dir);
    let mut s = root_in(&server, 1, "d");
    // Characters, not bytes: 1,025 two-byte characters are over the 1,024 limit.
    let long_1025 = "é".repeat(1025);
    let long_2049 = "x".repeat(2049);
    let (e1, e2) = (&long_1025, &long_2049);
    for (sql, code) in [
        (format!("CREATE TABLE c1 (a INT COMMENT '{e1}')"), 1629),
        (format!("CREATE TABLE c2 (a INT) COMMENT '{e2}'"), 1628),
        (
            format!("CREATE TABLE c4 (a INT, KEY k (a) COMMENT '{e1}')"),
            1688,
        ),
        (format!("CREATE INDEX big ON c0 (a) COMMENT '{e1}'"), 1688),
    ] {
        if sql.contains("c0") {
            ok(&mut s, "CREATE TABLE c0 (a INT)");
        }
        assert_eq!(err(&mut s, &sql), code, "{}", &sql[..40]);
    }
    // At the limits they are kept whole.
    let max_1024 = "é".repeat(1024);
    ok(
        &mut s,
        &format!("CREATE TABLE ok1 (a INT COMMENT '{max_1024}', KEY k (a) COMMENT '{max_1024}')"),
    );
    // Without a strict sql_mode: warnings, and the comments cut to the limits.
    ok(&mut s, "SET sql_mode = ''");
    ok(
        &mut s,
        &format!("CREATE TABLE c3 (a INT COMMENT '{e1}', KEY k (a) COMMENT '{e1}') COMMENT '{e2}'"),
    );
    let mut w = warnings(&mut s);
    w.sort();
    assert_eq!(
        w,
        [
            warning("1628", "Comment for table 'c3' is too long (max = 2048)"),
            warning("1629", "Comment for field 'a' is too long (max = 1024)"),
            warning("1688", "Comment for index 'k' is too long (max = 1024)"),
        ]
    );
    assert_eq!(
        text_rows(
            &mut s,
            "SELECT (SELECT CHAR_LENGTH(COLUMN_COMMENT) FROM information_schema.COLUMNS \
             WHERE TABLE_NAME = 'c3'), (SELECT CHAR_LENGTH(TABLE_COMMENT) FROM \
             information_schema.TABLES WHERE TABLE_NAME = 'c3'), (SELECT \
             CHAR_LENGTH(INDEX_COMMENT) FROM information_schema.STATISTICS WHERE TABLE_NAME = 'c3')"
        ),
        [["1024", "2048", "1024"]]
    );
    let _ = server.shutdown();
}
