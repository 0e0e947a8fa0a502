//! The statements `mariadb-dump` writes around a table (issue 16 parts 1 and 5), answered as
//! MariaDB 10.11.19 answered them: versioned comments run or are skipped by their version,
//! the SETs inside them work as outside, `sql_notes=0` keeps notes out of the diagnostics, and
//! `ALTER TABLE ... {DISABLE | ENABLE} KEYS` is InnoDB's note 1031.

mod common;
use common::{err, ok, session_in, text_rows as rows, Db};

#[test]
fn a_dump_preamble_runs_its_versioned_sets_and_restores_them() {
    let db = Db::open("dump-preamble");
    let mut s = session_in(&db, "dd");
    // As mariadb-dump 10.11 writes them (the first line is MariaDB's sandbox marker, for
    // versions after ours: a comment).
    for sql in [
        "/*M!999999\\- enable the sandbox mode */ \n/*!40101 SET @OLD_CHARACTER_SET_CLIENT=@@CHARACTER_SET_CLIENT */",
        "/*!40101 SET NAMES utf8mb4 */",
        "/*!40103 SET @OLD_TIME_ZONE=@@TIME_ZONE */",
        "/*!40103 SET TIME_ZONE='+00:00' */",
        "/*!40014 SET @OLD_UNIQUE_CHECKS=@@UNIQUE_CHECKS, UNIQUE_CHECKS=0 */",
        "/*!40014 SET @OLD_FOREIGN_KEY_CHECKS=@@FOREIGN_KEY_CHECKS, FOREIGN_KEY_CHECKS=0 */",
        "/*!40101 SET @OLD_SQL_MODE=@@SQL_MODE, SQL_MODE='NO_AUTO_VALUE_ON_ZERO' */",
        "/*!40111 SET @OLD_SQL_NOTES=@@SQL_NOTES, SQL_NOTES=0 */",
    ] {
        ok(&mut s, sql);
    }
    assert_eq!(
        rows(
            &mut s,
            "SELECT @@time_zone, @@foreign_key_checks, @@unique_checks, @@sql_mode, @@sql_notes, \
             @OLD_FOREIGN_KEY_CHECKS, @OLD_SQL_NOTES"
        ),
        [["+00:00", "0", "0", "NO_AUTO_VALUE_ON_ZERO", "0", "1", "1"]]
    );
    // With the checks off, a child table is created before its parent, as dumps order them.
    ok(
        &mut s,
        "CREATE TABLE `c` (`id` int(11) NOT NULL, `pid` int(11) DEFAULT NULL, PRIMARY KEY (`id`), \
         KEY `pid` (`pid`), CONSTRAINT `fk` FOREIGN KEY (`pid`) REFERENCES `p` (`id`)) \
         ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci",
    );
    // Notes are off: DISABLE KEYS and DROP TABLE IF EXISTS of a missing table record none.
    ok(&mut s, "/*!40000 ALTER TABLE `c` DISABLE KEYS */");
    ok(&mut s, "DROP TABLE IF EXISTS `nothing`");
    assert!(rows(&mut s, "SHOW WARNINGS").is_empty());
    ok(&mut s, "INSERT INTO `c` VALUES (1,1),(2,NULL)");
    ok(&mut s, "/*!40000 ALTER TABLE `c` ENABLE KEYS */");
    for sql in [
        "/*!40101 SET SQL_MODE=@OLD_SQL_MODE */",
        "/*!40014 SET FOREIGN_KEY_CHECKS=@OLD_FOREIGN_KEY_CHECKS */",
        "/*!40014 SET UNIQUE_CHECKS=@OLD_UNIQUE_CHECKS */",
        "/*!40111 SET SQL_NOTES=@OLD_SQL_NOTES */",
        "/*!40103 SET TIME_ZONE=@OLD_TIME_ZONE */",
    ] {
        ok(&mut s, sql);
    }
    assert_eq!(
        rows(
            &mut s,
            "SELECT @@foreign_key_checks, @@unique_checks, @@sql_notes, @@time_zone"
        ),
        [["1", "1", "1", "SYSTEM"]]
    );
    // Notes are back.
    ok(&mut s, "ALTER TABLE c DISABLE KEYS");
    assert_eq!(
        rows(&mut s, "SHOW WARNINGS"),
        [[
            "Note",
            "1031",
            "Storage engine InnoDB of the table `dd`.`c` doesn't have this option"
        ]]
    );
    assert_eq!(rows(&mut s, "SELECT COUNT(*) FROM c"), [["2"]]);
}

#[test]
fn versioned_comments_newer_than_us_or_mysql_57_are_comments() {
    let db = Db::open("dump-versions");
    let mut s = session_in(&db, "dd");
    // MariaDB 10.11.19: 50700-99999 in `/*!` are MySQL 5.7+ only; `/*M!` runs them.
    assert_eq!(
        rows(
            &mut s,
            "SELECT 3 /*!40101 +1 */ /*!50700 +10 */ /*M!99999 +100 */ /*M!101110 +1000 */ \
             /*! +10000 */"
        ),
        [["10104"]]
    );
    ok(&mut s, "/*!99999 SET @y = 1 */ SET @x = 2");
    assert_eq!(rows(&mut s, "SELECT @x, @y"), [["2", "NULL"]]);
    // Fewer than five digits stay in the text: a syntax error, as in MariaDB.
    assert_eq!(err(&mut s, "SELECT 3 /*!1001 +1 */"), 1064);
    // A statement of comments only is OK (MariaDB 10.11.14, also through PREPARE); an empty
    // query is 1065.
    ok(&mut s, "/* line with only comment */");
    ok(&mut s, "/*!99999 SET @z = 1 */");
    ok(&mut s, "PREPARE p FROM '/* c */'");
    ok(&mut s, "EXECUTE p");
    assert_eq!(rows(&mut s, "SELECT @z"), [["NULL"]]);
    assert_eq!(err(&mut s, ""), 1065);
    // A comment never closed is a syntax error (main.comments), never the statement before it.
    ok(&mut s, "CREATE TABLE t28779 (a INT)");
    ok(&mut s, "INSERT INTO t28779 VALUES (7)");
    for (sql, near) in [
        (
            "DELETE FROM t28779 WHERE a = 7 OR 1=1/*' AND b = 'bar';",
            "/*' AND b = 'bar'",
        ),
        (
            "PREPARE bar FROM \"DELETE FROM t28779 WHERE a = 7 OR 1=1/*' AND b = 'bar';\"",
            "/*' AND b = 'bar'",
        ),
        ("DELETE FROM t28779 WHERE a = 7 OR 1=1/*! AND 2=2;", ""),
        (
            "DELETE FROM t28779 WHERE a = 7 OR 1=1/*!998765' AND b = 'bar';",
            "/*!998765' AND b = 'bar'",
        ),
        ("SET @w = 1 /* abc", "/* abc"),
    ] {
        let e = common::fail(&mut s, sql);
        assert_eq!(e.code, 1064, "{sql}");
        assert!(
            e.message.contains(&format!("near '{near}' at line 1")),
            "{sql}: {}",
            e.message
        );
    }
    assert_eq!(
        rows(&mut s, "SELECT COUNT(*), @w FROM t28779"),
        [["1", "NULL"]]
    );
}

#[test]
fn disable_keys_checks_the_table_like_alter_table() {
    let db = Db::open("dump-keys");
    let mut s = session_in(&db, "dd");
    ok(&mut s, "CREATE TABLE t (id INT PRIMARY KEY)");
    ok(&mut s, "CREATE VIEW v AS SELECT id FROM t");
    assert_eq!(err(&mut s, "ALTER TABLE nonex DISABLE KEYS"), 1146);
    assert_eq!(err(&mut s, "ALTER TABLE v ENABLE KEYS"), 1347);
    ok(&mut s, "ALTER IGNORE TABLE dd.t ENABLE KEYS");
    assert_eq!(rows(&mut s, "SHOW WARNINGS")[0][1], "1031");
    // sql_notes is a boolean (MariaDB: 1231 for 2).
    assert_eq!(err(&mut s, "SET sql_notes = 2"), 1231);
}

/// Variables the dump tools set or read: mariadb-dump's `SET SQL_QUOTE_SHOW_CREATE=1` (onelog
/// always quotes: 0 is refused) and mydumper's `SELECT @@default_master_connection` (the
/// unnamed connection; MariaDB's answer is `''`, a session-only variable).
#[test]
fn dump_tool_variables_answer_as_mariadb() {
    let db = Db::open("dump-vars");
    let mut s = session_in(&db, "dv");
    ok(&mut s, "SET SQL_QUOTE_SHOW_CREATE=1");
    assert_eq!(rows(&mut s, "SELECT @@sql_quote_show_create"), [["1"]]);
    assert_eq!(err(&mut s, "SET sql_quote_show_create=0"), 1235);
    assert_eq!(err(&mut s, "SET sql_quote_show_create=2"), 1231);
    assert_eq!(rows(&mut s, "SELECT @@default_master_connection"), [[""]]);
    ok(&mut s, "SET default_master_connection=''");
    assert_eq!(err(&mut s, "SET default_master_connection='other'"), 1235);
    assert_eq!(
        err(&mut s, "SELECT @@global.default_master_connection"),
        1238
    );
}
