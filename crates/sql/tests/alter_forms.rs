//! MariaDB's ALTER TABLE forms that migration tools and DBAs write and sqlparser does not
//! parse (they were 1064 here): `RENAME {INDEX | KEY}`, the table `COMMENT`, `ENGINE=InnoDB`
//! and `FORCE` (a rebuild), `ALTER ONLINE TABLE`, alone and among other operations. Every
//! expected answer was measured on MariaDB 10.11.19 with the same statements.

use onelog_sql::{Server, Session};

mod common;
use common::{fail, log_records, ok, open_in, root_in, text_rows, TempDir};

fn show(s: &mut Session, t: &str) -> String {
    text_rows(s, &format!("SHOW CREATE TABLE {t}"))[0][1].clone()
}

/// The key lines and the table options line of SHOW CREATE TABLE `t`.
fn keys_and_options(s: &mut Session, t: &str) -> Vec<String> {
    show(s, t)
        .lines()
        .map(str::trim)
        .filter(|l| l.contains("KEY ") || l.starts_with(')'))
        .map(|l| l.trim_end_matches(',').to_string())
        .collect()
}

fn error(s: &mut Session, sql: &str) -> (u16, String) {
    let e = fail(s, sql);
    (e.code, e.message)
}

fn ddl_records(server: &Server) -> usize {
    log_records(server)
        .iter()
        .filter(|r| r.kind == onelog_log::RecordKind::Ddl)
        .count()
}

#[test]
fn rename_index_comment_and_rebuild_as_mariadb_alone_and_mixed() {
    let dir = TempDir::new("alter-forms");
    let server = open_in(&dir);
    let mut s = root_in(&server, 1, "d");
    ok(
        &mut s,
        "CREATE TABLE r (id INT PRIMARY KEY, a INT, b INT, KEY ka (a), KEY kb (b))",
    );
    ok(&mut s, "INSERT INTO r VALUES (1, 10, 100), (2, 20, 200)");
    for (sql, code, text) in [
        (
            "ALTER TABLE r RENAME INDEX nope TO x",
            1176,
            "Key 'nope' doesn't exist in table 'r'",
        ),
        (
            "ALTER TABLE r RENAME INDEX ka TO kb",
            1061,
            "Duplicate key name 'kb'",
        ),
        (
            "ALTER TABLE r ENGINE=Foo",
            1286,
            "Unknown storage engine 'Foo'",
        ),
        (
            "ALTER TABLE r FORCE, ALGORITHM=INSTANT",
            1845,
            "ALGORITHM=INSTANT is not supported for this operation. Try ALGORITHM=INPLACE",
        ),
    ] {
        assert_eq!(error(&mut s, sql), (code, text.to_string()), "{sql}");
    }
    // `PRIMARY` is no index name there (MariaDB's parser stops at it).
    assert_eq!(
        error(&mut s, "ALTER TABLE r RENAME INDEX PRIMARY TO x").0,
        1064
    );
    assert_eq!(
        error(&mut s, "ALTER TABLE r RENAME INDEX ka TO PRIMARY").0,
        1064
    );
    // Converting to another engine is refused, never taken and ignored.
    assert_eq!(error(&mut s, "ALTER TABLE r ENGINE=MyISAM").0, 1235);
    // The same statements MariaDB ran, in order; the refused ones changed nothing.
    let n = ddl_records(&server);
    for sql in [
        "ALTER TABLE r RENAME INDEX ka TO KA2, RENAME INDEX kb TO ka",
        "ALTER TABLE r RENAME KEY KA2 TO ka2, ADD COLUMN c INT",
        "ALTER TABLE r ENGINE InnoDB",
        "ALTER TABLE r ENGINE=innodb, FORCE",
        "ALTER TABLE r COMMENT 'hello', ADD COLUMN d INT",
        "ALTER TABLE r FORCE, ALGORITHM=INPLACE",
        "ALTER TABLE r ENGINE=InnoDB, ALGORITHM=COPY",
        "ALTER TABLE r RENAME INDEX ka2 TO kz, ALGORITHM=INSTANT",
        "ALTER TABLE r COMMENT 'x', ALGORITHM=INSTANT",
        "ALTER ONLINE TABLE r FORCE",
    ] {
        ok(&mut s, sql);
    }
    // Each one is a logged DDL (a replica runs it too).
    assert_eq!(ddl_records(&server), n + 10);
    assert_eq!(
        error(&mut s, "ALTER TABLE r DROP INDEX kz, RENAME INDEX kz TO z"),
        (1176, "Key 'kz' doesn't exist in table 'r'".to_string())
    );
    let measured = [
        "PRIMARY KEY (`id`)",
        "KEY `kz` (`a`)",
        "KEY `ka` (`b`)",
        ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci COMMENT='x'",
    ];
    assert_eq!(keys_and_options(&mut s, "r"), measured);
    // The renamed keys still serve their columns and the rows are those inserted.
    assert_eq!(
        text_rows(&mut s, "SELECT id, a, b, c, d FROM r WHERE a = 20"),
        [["2", "20", "200", "NULL", "NULL"]]
    );
    ok(&mut s, "ALTER TABLE r DROP INDEX ka");
    ok(&mut s, "ALTER TABLE r COMMENT = ''");
    assert_eq!(
        keys_and_options(&mut s, "r"),
        [
            "PRIMARY KEY (`id`)",
            "KEY `kz` (`a`)",
            ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci"
        ]
    );
    // The table comment's limit, as CREATE TABLE's.
    let long = "x".repeat(2049);
    assert_eq!(
        error(&mut s, &format!("ALTER TABLE r COMMENT '{long}'")),
        (
            1628,
            "Comment for table 'r' is too long (max = 2048)".to_string()
        )
    );
    // Through a prepared statement too.
    ok(
        &mut s,
        "PREPARE p FROM 'ALTER TABLE r RENAME KEY kz TO ky, COMMENT ''p'''",
    );
    ok(&mut s, "EXECUTE p");
    // Kept after a restart.
    let before = show(&mut s, "r");
    assert!(
        before.contains("KEY `ky` (`a`)") && before.ends_with("COMMENT='p'"),
        "{before}"
    );
    drop(s);
    server.shutdown().unwrap();
    drop(server);
    let server = open_in(&dir);
    let mut s = root_in(&server, 2, "d");
    assert_eq!(show(&mut s, "r"), before);
    let _ = server.shutdown();
}

#[test]
fn alter_online_table_is_lock_none() {
    let dir = TempDir::new("alter-online");
    let server = open_in(&dir);
    let mut s = root_in(&server, 1, "d");
    ok(&mut s, "CREATE TABLE o (id INT PRIMARY KEY, a INT)");
    // ONLINE is LOCK=NONE: an index build and a rename go online; a rewrite of the rows
    // cannot here (MariaDB adds this column instantly).
    ok(&mut s, "ALTER ONLINE TABLE o ADD INDEX ia (a)");
    ok(&mut s, "ALTER ONLINE TABLE o RENAME INDEX ia TO ib");
    assert_eq!(
        error(&mut s, "ALTER ONLINE TABLE o ADD COLUMN c INT"),
        (
            1845,
            "LOCK=NONE is not supported for this operation. Try LOCK=SHARED".to_string()
        )
    );
    assert!(show(&mut s, "o").contains("KEY `ib` (`a`)"));
    let _ = server.shutdown();
}

#[test]
fn create_table_with_an_engine_mariadb_lacks_answers_as_mariadb() {
    let dir = TempDir::new("create-engine");
    let server = open_in(&dir);
    let mut s = root_in(&server, 1, "d");
    // The default sql_mode has NO_ENGINE_SUBSTITUTION: 1286, no table.
    assert_eq!(
        error(&mut s, "CREATE TABLE e1 (a INT) ENGINE=Foo"),
        (1286, "Unknown storage engine 'Foo'".to_string())
    );
    assert!(text_rows(&mut s, "SHOW TABLES").is_empty());
    // Without it MariaDB uses its default engine and says so.
    ok(&mut s, "SET sql_mode = ''");
    ok(&mut s, "CREATE TABLE e2 (a INT) ENGINE=Foo");
    assert_eq!(
        common::warnings(&mut s),
        [
            common::warning("1286", "Unknown storage engine 'Foo'"),
            common::warning("1266", "Using storage engine InnoDB for table 'e2'"),
        ]
    );
    // An engine MariaDB has is taken as onelog's, as before (docs/SQL.md).
    ok(&mut s, "SET sql_mode = DEFAULT");
    ok(&mut s, "CREATE TABLE e3 (a INT) ENGINE=MyISAM");
    assert_eq!(text_rows(&mut s, "SHOW TABLES"), [["e2"], ["e3"]]);
    let _ = server.shutdown();
}

#[test]
fn if_exists_operations_skip_with_mariadbs_notes() {
    let dir = TempDir::new("alter-if-exists");
    let server = open_in(&dir);
    let mut s = root_in(&server, 1, "d");
    ok(
        &mut s,
        "CREATE TABLE q (id INT PRIMARY KEY, a INT, KEY ka (a))",
    );
    ok(&mut s, "INSERT INTO q VALUES (1, 10)");
    let note = |code: &str, msg: &str| vec!["Note".to_string(), code.to_string(), msg.to_string()];
    for (sql, notes) in [
        (
            "ALTER TABLE q ADD COLUMN IF NOT EXISTS a INT",
            vec![note("1060", "Duplicate column name 'a'")],
        ),
        ("ALTER TABLE q ADD IF NOT EXISTS b INT", vec![]),
        (
            "ALTER TABLE q ADD INDEX IF NOT EXISTS ka (a)",
            vec![note("1061", "Duplicate key name 'ka'")],
        ),
        ("ALTER TABLE q ADD KEY IF NOT EXISTS kb (b)", vec![]),
        (
            "ALTER TABLE q DROP INDEX IF EXISTS nope",
            vec![note(
                "1091",
                "Can't DROP INDEX `nope`; check that it exists",
            )],
        ),
        ("ALTER TABLE q DROP KEY IF EXISTS kb", vec![]),
        (
            "ALTER TABLE q ADD UNIQUE IF NOT EXISTS ka (a)",
            vec![note("1061", "Duplicate key name 'ka'")],
        ),
        (
            "ALTER TABLE q ADD COLUMN IF NOT EXISTS a INT, ADD COLUMN IF NOT EXISTS c INT",
            vec![note("1060", "Duplicate column name 'a'")],
        ),
        (
            "ALTER TABLE q MODIFY COLUMN IF EXISTS zz INT",
            vec![note("1054", "Unknown column 'zz' in 'q'")],
        ),
        (
            "ALTER TABLE q CHANGE COLUMN IF EXISTS zz yy INT",
            vec![note("1054", "Unknown column 'zz' in 'q'")],
        ),
        ("ALTER TABLE q MODIFY IF EXISTS c BIGINT", vec![]),
    ] {
        ok(&mut s, sql);
        assert_eq!(common::warnings(&mut s), notes, "{sql}");
    }
    // MariaDB's table after the same statements (`c` made BIGINT by the last).
    let expected = "CREATE TABLE `q` (\n  `id` int(11) NOT NULL,\n  `a` int(11) DEFAULT NULL,\n  \
                    `b` int(11) DEFAULT NULL,\n  `c` bigint(20) DEFAULT NULL,\n  \
                    PRIMARY KEY (`id`),\n  KEY `ka` (`a`)\n) ENGINE=InnoDB DEFAULT \
                    CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci";
    assert_eq!(show(&mut s, "q"), expected);
    assert_eq!(
        text_rows(&mut s, "SELECT * FROM q"),
        [["1", "10", "NULL", "NULL"]]
    );
    let _ = server.shutdown();
}
