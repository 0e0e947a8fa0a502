//! FOREIGN KEY constraints as MariaDB 10.11 (InnoDB) answered the same statements: the
//! definitions (names, implicit index, SHOW CREATE TABLE), the DDL refusals (1005 errno 150,
//! 1451 on DROP TABLE, 1701 on TRUNCATE, 1553, 1829), the row checks (1452 on a child row
//! without parent, 1451 on a parent row with children) with their exact texts,
//! `foreign_key_checks=0` (and the flags it gives the logged events), self-referencing tables,
//! and the shared lock a child's check holds on its parent row (ON DELETE/UPDATE actions:
//! `foreign_key_actions.rs`). What onelog does not do yet is refused (1235), never ignored.

mod common;
use common::{err, fail, ok, text_rows as rows, Db};
use onelog_binlog::event::query::OPTION_NO_FOREIGN_KEY_CHECKS;
use onelog_binlog::event::rows::{NO_FOREIGN_KEY_CHECKS_F, STMT_END_F};
use onelog_binlog::event::{event_type, split_events, QueryEvent};
use onelog_sql::{Server, ServerConfig, Session};

fn session(db: &Db) -> Session {
    let mut s = Session::new(db.server.clone(), 1, "root", "localhost");
    ok(&mut s, "CREATE DATABASE IF NOT EXISTS d");
    ok(&mut s, "USE d");
    s
}

fn show(s: &mut Session, t: &str) -> String {
    let text = rows(s, &format!("SHOW CREATE TABLE {t}"))[0][1].clone();
    // The table options (charset) are not what these tests are about.
    text.split("\n) ENGINE").next().unwrap_or("").to_string()
}

const C_FK: &str = "(`d`.`c`, CONSTRAINT `c_ibfk_1` FOREIGN KEY (`p`) REFERENCES `p` (`id`))";

#[test]
fn definitions_are_named_indexed_and_shown_as_mariadb() {
    let db = Db::open("fk-defs");
    let mut s = session(&db);
    ok(&mut s, "CREATE TABLE p (id INT PRIMARY KEY, v INT)");
    ok(
        &mut s,
        "CREATE TABLE c (id INT PRIMARY KEY, p INT, FOREIGN KEY (p) REFERENCES p(id))",
    );
    assert_eq!(
        show(&mut s, "c"),
        "CREATE TABLE `c` (\n  `id` int(11) NOT NULL,\n  `p` int(11) DEFAULT NULL,\n  \
         PRIMARY KEY (`id`),\n  KEY `p` (`p`),\n  CONSTRAINT `c_ibfk_1` FOREIGN KEY (`p`) \
         REFERENCES `p` (`id`)"
    );
    // Named and unnamed, sorted by name; RESTRICT and SET DEFAULT print no clause.
    ok(
        &mut s,
        "CREATE TABLE c2 (id INT PRIMARY KEY, p INT, CONSTRAINT myfk FOREIGN KEY (p) \
         REFERENCES p(id) ON DELETE NO ACTION ON UPDATE RESTRICT, FOREIGN KEY (p) REFERENCES \
         p(id) ON DELETE RESTRICT ON UPDATE NO ACTION)",
    );
    assert_eq!(
        show(&mut s, "c2"),
        "CREATE TABLE `c2` (\n  `id` int(11) NOT NULL,\n  `p` int(11) DEFAULT NULL,\n  \
         PRIMARY KEY (`id`),\n  KEY `p` (`p`),\n  CONSTRAINT `c2_ibfk_1` FOREIGN KEY (`p`) \
         REFERENCES `p` (`id`) ON UPDATE NO ACTION,\n  CONSTRAINT `myfk` FOREIGN KEY (`p`) \
         REFERENCES `p` (`id`) ON DELETE NO ACTION"
    );
    // An existing key that starts with the columns serves; a column's REFERENCES is a foreign
    // key too (MariaDB 10.5+).
    ok(
        &mut s,
        "CREATE TABLE x3 (id INT PRIMARY KEY, p INT, KEY k (p, id), CONSTRAINT cn FOREIGN KEY \
         fkidx (p) REFERENCES p(id) ON DELETE SET DEFAULT)",
    );
    assert_eq!(
        show(&mut s, "x3"),
        "CREATE TABLE `x3` (\n  `id` int(11) NOT NULL,\n  `p` int(11) DEFAULT NULL,\n  \
         PRIMARY KEY (`id`),\n  KEY `k` (`p`,`id`),\n  CONSTRAINT `cn` FOREIGN KEY (`p`) \
         REFERENCES `p` (`id`)"
    );
    // The constraint's name (or FOREIGN KEY's) names the index too.
    for (sql, key) in [
        (
            "CREATE TABLE n1 (id INT PRIMARY KEY, p INT, CONSTRAINT mk1 FOREIGN KEY (p) \
             REFERENCES p(id))",
            "KEY `mk1` (`p`),\n  CONSTRAINT `mk1` FOREIGN KEY",
        ),
        (
            "CREATE TABLE n2 (id INT PRIMARY KEY, p INT, CONSTRAINT myfk2 FOREIGN KEY ix2 (p) \
             REFERENCES p(id))",
            "KEY `myfk2` (`p`),\n  CONSTRAINT `myfk2` FOREIGN KEY",
        ),
        (
            "CREATE TABLE n3 (id INT PRIMARY KEY, p INT, FOREIGN KEY ix3 (p) REFERENCES p(id))",
            "KEY `ix3` (`p`),\n  CONSTRAINT `ix3` FOREIGN KEY",
        ),
    ] {
        ok(&mut s, sql);
        let table = &sql[13..15];
        assert!(show(&mut s, table).contains(key), "{sql}");
    }
    ok(
        &mut s,
        "CREATE TABLE y (id INT PRIMARY KEY, p INT REFERENCES p(id))",
    );
    assert!(show(&mut s, "y").ends_with(
        "KEY `p` (`p`),\n  CONSTRAINT `y_ibfk_1` FOREIGN KEY (`p`) REFERENCES `p` (`id`)"
    ));
    // Another database's parent is qualified.
    ok(&mut s, "CREATE DATABASE o");
    ok(&mut s, "CREATE TABLE o.q (a VARCHAR(10) PRIMARY KEY)");
    ok(
        &mut s,
        "CREATE TABLE z (id INT PRIMARY KEY, a CHAR(4), FOREIGN KEY (a) REFERENCES o.q(a))",
    );
    assert!(show(&mut s, "z").ends_with("REFERENCES `o`.`q` (`a`)"));
    // LIKE copies no foreign key.
    ok(&mut s, "CREATE TABLE lk LIKE c");
    assert!(!show(&mut s, "lk").contains("CONSTRAINT"));
}

#[test]
fn malformed_definitions_are_refused_as_innodb() {
    let db = Db::open("fk-bad");
    let mut s = session(&db);
    ok(&mut s, "CREATE TABLE p (id INT PRIMARY KEY, v INT)");
    ok(
        &mut s,
        "CREATE TABLE c (id INT PRIMARY KEY, p INT, FOREIGN KEY (p) REFERENCES p(id))",
    );
    let e150 = |t: &str| {
        format!(
            "Can't create table `d`.`{t}` (errno: 150 \"Foreign key constraint is incorrectly \
             formed\")"
        )
    };
    for sql in [
        "CREATE TABLE x (id INT PRIMARY KEY, p INT, FOREIGN KEY (p) REFERENCES nope(id))",
        "CREATE TABLE x (id INT PRIMARY KEY, p BIGINT, FOREIGN KEY (p) REFERENCES p(id))",
        "CREATE TABLE x (id INT PRIMARY KEY, p INT UNSIGNED, FOREIGN KEY (p) REFERENCES p(id))",
        // No key of the parent starts with v.
        "CREATE TABLE x (id INT PRIMARY KEY, p INT, FOREIGN KEY (p) REFERENCES p(v))",
        "CREATE TABLE x (id INT PRIMARY KEY, p INT, FOREIGN KEY (p) REFERENCES p(zz))",
        "CREATE TABLE x (id INT PRIMARY KEY, p INT, FOREIGN KEY (p) REFERENCES other.p(id))",
        "CREATE TABLE x (id INT PRIMARY KEY, a INT, CONSTRAINT cc FOREIGN KEY (a) REFERENCES \
         p(id), CONSTRAINT cc FOREIGN KEY (a) REFERENCES p(id))",
    ] {
        let e = fail(&mut s, sql);
        assert_eq!(
            (e.code, e.message.as_str()),
            (1005, e150("x").as_str()),
            "{sql}"
        );
    }
    let e = fail(
        &mut s,
        "CREATE TABLE x (id INT PRIMARY KEY, a INT, CONSTRAINT c_ibfk_1 FOREIGN KEY (a) \
         REFERENCES p(id))",
    );
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            1005,
            "Can't create table `d`.`x` (errno: 121 \"Duplicate key on write or update\")"
        )
    );
    let e = fail(
        &mut s,
        "CREATE TABLE x (id INT PRIMARY KEY, p INT, FOREIGN KEY (zz) REFERENCES p(id))",
    );
    assert_eq!(
        (e.code, e.message.as_str()),
        (1072, "Key column 'zz' doesn't exist in table")
    );
    let e = fail(
        &mut s,
        "CREATE TABLE x (id INT PRIMARY KEY, p INT, FOREIGN KEY (p) REFERENCES p(id, v))",
    );
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            1239,
            "Incorrect foreign key definition for 'foreign key without name': Key reference and table reference don't match"
        )
    );
    assert_eq!(rows(&mut s, "SHOW TABLES LIKE 'x'").len(), 0);
    // Not done yet: refused, never accepted and ignored.
    assert_eq!(
        err(&mut s, "ALTER TABLE c ADD COLUMN q INT REFERENCES p(id)"),
        1235
    );
}

#[test]
fn rows_are_checked_with_mariadbs_errors() {
    let db = Db::open("fk-rows");
    let mut s = session(&db);
    ok(&mut s, "CREATE TABLE p (id INT PRIMARY KEY, v INT)");
    ok(
        &mut s,
        "CREATE TABLE c (id INT PRIMARY KEY, p INT, FOREIGN KEY (p) REFERENCES p(id))",
    );
    let e = fail(&mut s, "INSERT INTO c VALUES (1, 5)");
    assert_eq!(
        (e.code, e.sqlstate, e.message.clone()),
        (
            1452,
            "23000",
            format!("Cannot add or update a child row: a foreign key constraint fails {C_FK}")
        )
    );
    ok(&mut s, "INSERT INTO p VALUES (5, 0), (6, 0)");
    // NULL references nothing.
    ok(&mut s, "INSERT INTO c VALUES (1, 5), (2, NULL)");
    let e = fail(&mut s, "DELETE FROM p");
    assert_eq!(
        (e.code, e.message.clone()),
        (
            1451,
            format!("Cannot delete or update a parent row: a foreign key constraint fails {C_FK}")
        )
    );
    // The failed statement left every row.
    assert_eq!(rows(&mut s, "SELECT COUNT(*) FROM p"), vec![vec!["2"]]);
    assert_eq!(err(&mut s, "UPDATE p SET id = 7 WHERE id = 5"), 1451);
    // A parent without children goes; a non-key column of a parent changes freely.
    ok(&mut s, "DELETE FROM p WHERE id = 6");
    ok(&mut s, "UPDATE p SET v = 9");
    assert_eq!(err(&mut s, "UPDATE c SET p = 8 WHERE id = 1"), 1452);
    assert_eq!(err(&mut s, "UPDATE c SET p = 8 WHERE id = 2"), 1452);
    ok(&mut s, "UPDATE c SET p = NULL WHERE id = 1");
    assert_eq!(err(&mut s, "REPLACE INTO c VALUES (3, 4)"), 1452);
    ok(
        &mut s,
        "INSERT INTO c VALUES (1, 5) ON DUPLICATE KEY UPDATE p = 5",
    );
    assert_eq!(
        err(
            &mut s,
            "INSERT INTO c VALUES (1, 5) ON DUPLICATE KEY UPDATE p = 4"
        ),
        1452
    );
    assert_eq!(err(&mut s, "REPLACE INTO p VALUES (5, 1)"), 1451);
    // INSERT IGNORE leaves the row out with the error as a warning.
    ok(&mut s, "INSERT IGNORE INTO c VALUES (10, 5), (11, 99)");
    assert_eq!(
        rows(&mut s, "SHOW WARNINGS"),
        vec![vec![
            "Warning".to_string(),
            "1452".to_string(),
            format!(
                "Cannot add or update a child row: a foreign key constraint fails (`d`.`c`, \
                 CONSTRAINT `c_ibfk_1` FOREIGN KEY (`p`) REFERENCES `p` (`id`))"
            )
        ]]
    );
    assert_eq!(
        rows(&mut s, "SELECT id, p FROM c ORDER BY id"),
        vec![vec!["1", "5"], vec!["2", "NULL"], vec!["10", "5"]]
    );
    // The parent cannot be dropped or truncated while referenced.
    let e = fail(&mut s, "DROP TABLE p");
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            1451,
            "Cannot delete or update a parent row: a foreign key constraint fails"
        )
    );
    let e = fail(&mut s, "TRUNCATE p");
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            1701,
            "Cannot truncate a table referenced in a foreign key constraint (`d`.`c`, \
             CONSTRAINT `c_ibfk_1` FOREIGN KEY (`p`) REFERENCES `d`.`p` (`id`))"
        )
    );
    let e = fail(&mut s, "ALTER TABLE p DROP COLUMN id");
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            1829,
            "Cannot drop column 'id': needed in a foreign key constraint 'c_ibfk_1' of table \
             `d`.`c`"
        )
    );
    let e = fail(&mut s, "ALTER TABLE c DROP INDEX p");
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            1553,
            "Cannot drop index 'p': needed in a foreign key constraint"
        )
    );
    assert_eq!(err(&mut s, "ALTER TABLE c DROP COLUMN p"), 1553);
    // As MariaDB: DROP TABLE p, c refuses p (c still references it) but drops c.
    assert_eq!(err(&mut s, "DROP TABLE p, c"), 1451);
    assert_eq!(rows(&mut s, "SHOW TABLES"), vec![vec!["p"]]);
    ok(&mut s, "TRUNCATE p");
    ok(&mut s, "DROP TABLE p");
}

#[test]
fn self_references_and_foreign_key_checks_off() {
    let db = Db::open("fk-self");
    let mut s = session(&db);
    ok(
        &mut s,
        "CREATE TABLE s (id INT PRIMARY KEY, m INT, FOREIGN KEY (m) REFERENCES s(id))",
    );
    // A row may reference itself and an earlier row of the same statement.
    ok(&mut s, "INSERT INTO s VALUES (1, 1), (2, 1)");
    assert_eq!(err(&mut s, "INSERT INTO s VALUES (3, 4)"), 1452);
    ok(&mut s, "DELETE FROM s WHERE id = 2");
    // Row 1 references itself: InnoDB finds it as a child of itself.
    let e = fail(&mut s, "DELETE FROM s");
    assert_eq!(
        e.message,
        "Cannot delete or update a parent row: a foreign key constraint fails (`d`.`s`, \
         CONSTRAINT `s_ibfk_1` FOREIGN KEY (`m`) REFERENCES `s` (`id`))"
    );
    // A rename carries its generated constraint name and its reference along, as InnoDB.
    ok(&mut s, "RENAME TABLE s TO s3");
    assert!(show(&mut s, "s3")
        .ends_with("CONSTRAINT `s3_ibfk_1` FOREIGN KEY (`m`) REFERENCES `s3` (`id`)"));
    ok(&mut s, "RENAME TABLE s3 TO s");
    // A table referencing itself only can be truncated and dropped.
    ok(&mut s, "TRUNCATE s");
    ok(&mut s, "DROP TABLE s");
    // A database whose table another database's table references is not dropped.
    ok(&mut s, "CREATE DATABASE da");
    ok(&mut s, "CREATE TABLE da.p (id INT PRIMARY KEY)");
    ok(
        &mut s,
        "CREATE TABLE dc (id INT PRIMARY KEY, p INT, FOREIGN KEY (p) REFERENCES da.p(id))",
    );
    assert_eq!(err(&mut s, "DROP DATABASE da"), 1451);
    assert_eq!(rows(&mut s, "SHOW TABLES IN da"), vec![vec!["p"]]);
    ok(&mut s, "DROP TABLE dc");
    ok(&mut s, "DROP DATABASE da");

    // foreign_key_checks=0: a missing parent, unchecked rows, a referenced parent dropped.
    ok(&mut s, "SET foreign_key_checks = 0");
    ok(
        &mut s,
        "CREATE TABLE z (id INT PRIMARY KEY, p INT, FOREIGN KEY (p) REFERENCES nope(id))",
    );
    assert!(show(&mut s, "z").ends_with("REFERENCES `nope` (`id`)"));
    // Logged with the session's OPTION_NO_FOREIGN_KEY_CHECKS, as MariaDB: a replica runs it
    // unchecked too.
    assert_eq!(
        query_flags2(&db, "CREATE TABLE z"),
        OPTION_NO_FOREIGN_KEY_CHECKS
    );
    ok(&mut s, "INSERT INTO z VALUES (1, 1)");
    assert_eq!(
        rows_flags(&db).last(),
        Some(&(NO_FOREIGN_KEY_CHECKS_F | STMT_END_F))
    );
    ok(&mut s, "SET foreign_key_checks = 1");
    let e = fail(&mut s, "INSERT INTO z VALUES (2, 1)");
    assert_eq!(
        e.message,
        "Cannot add or update a child row: a foreign key constraint fails (`d`.`z`, \
         CONSTRAINT `z_ibfk_1` FOREIGN KEY (`p`) REFERENCES `nope` (`id`))"
    );
    ok(&mut s, "CREATE TABLE nope (id INT PRIMARY KEY)");
    assert_eq!(query_flags2(&db, "CREATE TABLE nope"), 0);
    ok(&mut s, "INSERT INTO nope VALUES (1)");
    ok(&mut s, "INSERT INTO z VALUES (2, 1)");
    assert_eq!(rows_flags(&db).last(), Some(&STMT_END_F));
    assert_eq!(err(&mut s, "DROP TABLE nope"), 1451);
    ok(&mut s, "SET foreign_key_checks = 0");
    ok(&mut s, "DELETE FROM nope");
    ok(&mut s, "DROP TABLE nope");
    ok(&mut s, "SET foreign_key_checks = 1");
    assert_eq!(rows(&mut s, "SELECT COUNT(*) FROM z"), vec![vec!["2"]]);
}

/// The flags of every logged rows event, in log order.
fn rows_flags(db: &Db) -> Vec<u16> {
    let mut out = Vec::new();
    for rec in common::log_records(&db.server) {
        for ev in split_events(&rec.events) {
            let (h, ev) = ev.unwrap();
            if matches!(
                h.event_type,
                event_type::WRITE_ROWS_V1 | event_type::UPDATE_ROWS_V1 | event_type::DELETE_ROWS_V1
            ) {
                // Header (19 bytes), table id (6), flags.
                out.push(u16::from_le_bytes([ev[25], ev[26]]));
            }
        }
    }
    out
}

/// Q_FLAGS2 of the logged Query event whose statement starts with `head`.
fn query_flags2(db: &Db, head: &str) -> u32 {
    for rec in common::log_records(&db.server) {
        for ev in split_events(&rec.events) {
            let (h, ev) = ev.unwrap();
            if h.event_type == event_type::QUERY {
                let q = QueryEvent::decode(ev).unwrap();
                if q.query.starts_with(head) {
                    return q.flags2;
                }
            }
        }
    }
    panic!("no Query event {head}");
}

#[test]
fn a_childs_check_holds_its_parent_row() {
    let db = Db::open("fk-locks");
    let mut a = session(&db);
    let mut b = Session::new(db.server.clone(), 2, "root", "localhost");
    ok(&mut b, "USE d");
    ok(&mut a, "CREATE TABLE p (id INT PRIMARY KEY)");
    ok(
        &mut a,
        "CREATE TABLE c (id INT PRIMARY KEY, p INT, FOREIGN KEY (p) REFERENCES p(id))",
    );
    ok(&mut a, "INSERT INTO p VALUES (1), (2)");
    ok(&mut b, "SET innodb_lock_wait_timeout = 1");
    // A's uncommitted child share-locks parent 1: B cannot delete it meanwhile.
    ok(&mut a, "BEGIN");
    ok(&mut a, "INSERT INTO c VALUES (1, 1)");
    assert_eq!(err(&mut b, "DELETE FROM p WHERE id = 1"), 1205);
    // Other parents are free.
    ok(&mut b, "DELETE FROM p WHERE id = 2");
    ok(&mut a, "COMMIT");
    assert_eq!(err(&mut b, "DELETE FROM p WHERE id = 1"), 1451);
    // A parent being deleted (exclusively locked) holds back a new child.
    ok(&mut b, "INSERT INTO p VALUES (3)");
    ok(&mut b, "BEGIN");
    ok(&mut b, "DELETE FROM p WHERE id = 3");
    ok(&mut a, "SET innodb_lock_wait_timeout = 1");
    assert_eq!(err(&mut a, "INSERT INTO c VALUES (2, 3)"), 1205);
    ok(&mut b, "COMMIT");
    assert_eq!(err(&mut a, "INSERT INTO c VALUES (2, 3)"), 1452);
}

#[test]
fn alter_table_adds_and_drops_constraints_as_mariadb() {
    let db = Db::open("fk-alter");
    let mut s = session(&db);
    for sql in [
        "CREATE TABLE p (id INT PRIMARY KEY)",
        "CREATE TABLE c (id INT PRIMARY KEY, p INT, q INT, KEY (q))",
        "INSERT INTO p VALUES (1)",
        "INSERT INTO c VALUES (1, 1, 5)",
    ] {
        ok(&mut s, sql);
    }
    // An existing row without parent: 1452 (MariaDB names its temporary copy there).
    let e = fail(&mut s, "ALTER TABLE c ADD FOREIGN KEY (q) REFERENCES p(id)");
    assert_eq!(e.code, 1452);
    // InnoDB's index comes with the constraint; the next one reuses it.
    ok(&mut s, "ALTER TABLE c ADD FOREIGN KEY (p) REFERENCES p(id)");
    ok(
        &mut s,
        "ALTER TABLE c ADD CONSTRAINT FOREIGN KEY (p) REFERENCES p(id)",
    );
    assert_eq!(
        show(&mut s, "c"),
        "CREATE TABLE `c` (\n  `id` int(11) NOT NULL,\n  `p` int(11) DEFAULT NULL,\n  `q` \
         int(11) DEFAULT NULL,\n  PRIMARY KEY (`id`),\n  KEY `q` (`q`),\n  KEY `p` (`p`),\n  \
         CONSTRAINT `c_ibfk_1` FOREIGN KEY (`p`) REFERENCES `p` (`id`),\n  CONSTRAINT \
         `c_ibfk_2` FOREIGN KEY (`p`) REFERENCES `p` (`id`)"
    );
    assert_eq!(err(&mut s, "DELETE FROM p"), 1451);
    let e = fail(&mut s, "ALTER TABLE c DROP FOREIGN KEY nope");
    assert_eq!(
        (e.code, e.message.as_str()),
        (1091, "Can't DROP FOREIGN KEY `nope`; check that it exists")
    );
    let e = fail(&mut s, "ALTER TABLE c DROP CONSTRAINT nope");
    assert_eq!(
        (e.code, e.message.as_str()),
        (1091, "Can't DROP CONSTRAINT `nope`; check that it exists")
    );
    ok(&mut s, "ALTER TABLE c DROP FOREIGN KEY c_ibfk_1");
    ok(&mut s, "ALTER TABLE c DROP CONSTRAINT c_ibfk_2");
    assert_eq!(
        show(&mut s, "c"),
        "CREATE TABLE `c` (\n  `id` int(11) NOT NULL,\n  `p` int(11) DEFAULT NULL,\n  `q` \
         int(11) DEFAULT NULL,\n  PRIMARY KEY (`id`),\n  KEY `q` (`q`),\n  KEY `p` (`p`)"
    );
    ok(&mut s, "DELETE FROM p");
    // CHECK constraints: existing rows are tested.
    let e = fail(&mut s, "ALTER TABLE c ADD CONSTRAINT ck CHECK (q < 5)");
    assert_eq!(
        (e.code, e.message.as_str()),
        (4025, "CONSTRAINT `ck` failed for `d`.`c`")
    );
    ok(&mut s, "ALTER TABLE c ADD CONSTRAINT ck CHECK (q < 6)");
    ok(&mut s, "ALTER TABLE c ADD CHECK (q > 0)");
    assert!(show(&mut s, "c").ends_with(
        "KEY `p` (`p`),\n  CONSTRAINT `ck` CHECK (`q` < 6),\n  CONSTRAINT `CONSTRAINT_1` CHECK \
         (`q` > 0)"
    ));
    assert_eq!(err(&mut s, "UPDATE c SET q = 9"), 4025);
    ok(&mut s, "ALTER TABLE c DROP CONSTRAINT ck");
    ok(&mut s, "ALTER TABLE c DROP CONSTRAINT IF EXISTS ck");
    ok(&mut s, "UPDATE c SET q = 9");
    // With foreign_key_checks=0 the rows are not looked at.
    ok(&mut s, "SET foreign_key_checks = 0");
    ok(
        &mut s,
        "ALTER TABLE c ADD CONSTRAINT fq FOREIGN KEY (q) REFERENCES p(id)",
    );
    ok(&mut s, "SET foreign_key_checks = 1");
    assert_eq!(err(&mut s, "INSERT INTO c VALUES (2, NULL, 3)"), 1452);
}

#[test]
fn constraints_survive_restarts() {
    let dir = common::TempDir::new("fk-restart");
    let open = || Server::open(ServerConfig::new(dir.path())).unwrap().0;
    let server = open();
    let mut s = Session::new(server.clone(), 1, "root", "localhost");
    for sql in [
        "CREATE DATABASE d",
        "USE d",
        "CREATE TABLE p (id INT PRIMARY KEY)",
        "CREATE TABLE c (id INT PRIMARY KEY, p INT REFERENCES p(id), CHECK (id > 0))",
        "CREATE TABLE c2 (id INT PRIMARY KEY, p INT)",
        "ALTER TABLE c2 ADD CONSTRAINT f2 FOREIGN KEY (p) REFERENCES p(id)",
        "INSERT INTO p VALUES (1)",
    ] {
        ok(&mut s, sql);
    }
    let want_c = show(&mut s, "c");
    let want_c2 = show(&mut s, "c2");
    drop(s);
    server.shutdown().unwrap();
    for round in 0..2 {
        let server = open();
        let mut s = Session::new(server.clone(), 1, "root", "localhost");
        ok(&mut s, "USE d");
        assert_eq!(show(&mut s, "c"), want_c, "round {round}");
        assert_eq!(show(&mut s, "c2"), want_c2, "round {round}");
        assert_eq!(err(&mut s, "INSERT INTO c VALUES (1, 2)"), 1452);
        assert_eq!(err(&mut s, "INSERT INTO c VALUES (-1, 1)"), 4025);
        assert_eq!(err(&mut s, "INSERT INTO c2 VALUES (1, 2)"), 1452);
        ok(&mut s, "FLUSH BINARY LOGS");
        drop(s);
        server.shutdown().unwrap();
    }
}

/// An ALTER TABLE that renames or retypes a column a foreign key or CHECK names is refused
/// (InnoDB would carry the constraint along; onelog does not yet), never run leaving the
/// constraint naming a column that is gone; other columns of those tables change freely.
#[test]
fn alter_of_constrained_columns_is_refused() {
    let db = Db::open("fk-alter-columns");
    let mut s = session(&db);
    ok(&mut s, "CREATE TABLE p (id INT PRIMARY KEY, n INT)");
    ok(
        &mut s,
        "CREATE TABLE c (id INT PRIMARY KEY, pid INT, v INT CHECK (v > 0), \
         FOREIGN KEY (pid) REFERENCES p (id))",
    );
    for sql in [
        "ALTER TABLE c CHANGE pid parent INT",
        "ALTER TABLE c MODIFY pid BIGINT",
        "ALTER TABLE p CHANGE id pk INT",
        "ALTER TABLE c RENAME COLUMN v TO w",
    ] {
        assert_eq!(fail(&mut s, sql).code, 1235, "{sql}");
    }
    ok(&mut s, "ALTER TABLE p ADD COLUMN m INT, MODIFY n BIGINT");
    ok(&mut s, "ALTER TABLE c ADD COLUMN x INT FIRST");
    assert!(show(&mut s, "c").contains("FOREIGN KEY (`pid`) REFERENCES `p` (`id`)"));
}
