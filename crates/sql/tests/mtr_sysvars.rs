//! System variables the mtr yardstick's tests set (docs/SQL.md, *System variables from the mtr
//! yardstick*), each honoured and pinned to MariaDB 10.11.14's answers (measured with the
//! `mariadb` client on a server started with `--no-defaults`): `sql_warnings`,
//! `SET timestamp`, `div_precision_increment`, `check_constraint_checks`, `note_verbosity`
//! and `innodb_stats_persistent`; and the statement form `COMMIT / ROLLBACK AND CHAIN`.

use onelog_sql::Session;

mod common;
use common::{done, err, fail, log_records, ok, session_in, text_rows, wire_rows, Db};

fn one(s: &mut Session, sql: &str) -> String {
    wire_rows(s, sql).remove(0).join("\t")
}

/// MariaDB: with sql_warnings=1 a one-row INSERT that cut or clipped a value (1264, 1265) answers `Records: 1  Duplicates: 0  Warnings: n` as a many-row INSERT does; an
/// incorrect value (1366) or a skipped duplicate does not; with 0 (the default) none does.
#[test]
fn sql_warnings_reports_a_one_row_insert_that_cut_a_value() {
    let db = Db::open("mtr-sqlwarnings");
    let mut s = session_in(&db, "t");
    ok(
        &mut s,
        "CREATE TABLE t2 (a INT PRIMARY KEY, b TINYINT, d DATE, c CHAR(2))",
    );
    assert_eq!(
        one(&mut s, "SELECT @@sql_warnings, @@global.sql_warnings"),
        "0\t0"
    );
    ok(&mut s, "SET sql_mode = ''");
    assert_eq!(done(&mut s, "INSERT INTO t2 (a, b) VALUES (1, 1000)").1, "");
    ok(&mut s, "SET sql_warnings = 1");
    assert_eq!(
        text_rows(&mut s, "SHOW VARIABLES LIKE 'sql_warnings'"),
        [["sql_warnings", "ON"]]
    );
    assert_eq!(
        done(&mut s, "INSERT INTO t2 (a, b) VALUES (2, 1000)"),
        (1, "Records: 1  Duplicates: 0  Warnings: 1".to_string())
    );
    assert_eq!(
        done(&mut s, "INSERT INTO t2 (a, c) VALUES (4, 'abc')"),
        (1, "Records: 1  Duplicates: 0  Warnings: 1".to_string())
    );
    // 1366 is not a cut value for MariaDB; neither is a duplicate INSERT IGNORE skipped.
    assert_eq!(done(&mut s, "INSERT INTO t2 (a, b) VALUES (5, 'x')").1, "");
    assert_eq!(done(&mut s, "INSERT IGNORE INTO t2 (a) VALUES (1)").1, "");
    assert_eq!(done(&mut s, "INSERT INTO t2 (a, b) VALUES (6, 1)").1, "");
    assert_eq!(
        done(&mut s, "INSERT INTO t2 (a, b) VALUES (7, 1000), (8, 2)"),
        (2, "Records: 2  Duplicates: 0  Warnings: 1".to_string())
    );
    ok(&mut s, "SET GLOBAL sql_warnings = 1");
    assert_eq!(one(&mut s, "SELECT @@global.sql_warnings"), "1");
    let e = fail(&mut s, "SET sql_warnings = 'x'");
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            1231,
            "Variable 'sql_warnings' can't be set to the value of 'x'"
        )
    );
}

/// MariaDB: `SET timestamp = t` fixes NOW(), CURRENT_TIMESTAMP, UNIX_TIMESTAMP() and the
/// defaults at t (to the microsecond, cut); SYSDATE() keeps the clock; 0 and DEFAULT give the
/// clock back; a negative value is 0 and one past 2147483647 is 2147483647, each with 1292;
/// a string is 1232, SET GLOBAL 1228.
#[test]
fn set_timestamp_fixes_the_session_clock() {
    let db = Db::open("mtr-timestamp");
    let mut s = session_in(&db, "t");
    ok(&mut s, "SET timestamp = 1000000000.5");
    assert_eq!(
        one(
            &mut s,
            "SELECT NOW(), NOW(6), @@timestamp, UNIX_TIMESTAMP(), UNIX_TIMESTAMP(NOW(6)), \
             CURRENT_TIMESTAMP(3), CURDATE(), CURTIME(), UTC_TIMESTAMP(6), \
             SYSDATE() > '2020-01-01', LOCALTIME"
        ),
        "2001-09-09 01:46:40\t2001-09-09 01:46:40.500000\t1000000000.500000\t1000000000\t\
         1000000000.500000\t2001-09-09 01:46:40.500\t2001-09-09\t01:46:40\t\
         2001-09-09 01:46:40.500000\t1\t2001-09-09 01:46:40"
    );
    // A DOUBLE in exponent form, as MariaDB takes it (it was a word: 1232).
    ok(&mut s, "SET timestamp = 1e9");
    assert_eq!(
        one(&mut s, "SELECT NOW(), @@timestamp"),
        "2001-09-09 01:46:40\t1000000000.000000"
    );
    ok(&mut s, "SET timestamp = 1000000000.1234567");
    assert_eq!(
        one(&mut s, "SELECT @@timestamp, NOW(6)"),
        "1000000000.123456\t2001-09-09 01:46:40.123456"
    );
    ok(&mut s, "SET @@session.timestamp = 1000000000");
    ok(
        &mut s,
        "CREATE TABLE d1 (a INT, t TIMESTAMP(6) DEFAULT CURRENT_TIMESTAMP(6), d DATETIME DEFAULT NOW())",
    );
    ok(&mut s, "INSERT INTO d1 (a) VALUES (1)");
    assert_eq!(
        one(&mut s, "SELECT * FROM d1"),
        "1\t2001-09-09 01:46:40.000000\t2001-09-09 01:46:40"
    );
    // The binlog events of the INSERT carry the session's time, as MariaDB's do.
    let rec = log_records(&db.server).pop().unwrap();
    assert_eq!(
        u32::from_le_bytes(rec.events[..4].try_into().unwrap()),
        1_000_000_000
    );
    ok(&mut s, "SET timestamp = DEFAULT");
    assert_eq!(one(&mut s, "SELECT @@timestamp > 1000000001"), "1");
    ok(&mut s, "SET timestamp = 1000000000");
    ok(&mut s, "SET timestamp = 0");
    assert_eq!(one(&mut s, "SELECT NOW() > '2020-01-01'"), "1");
    ok(&mut s, "SET timestamp = -1");
    assert_eq!(
        text_rows(&mut s, "SHOW WARNINGS"),
        [[
            "Warning",
            "1292",
            "Truncated incorrect timestamp value: '-1'"
        ]]
    );
    assert_eq!(one(&mut s, "SELECT @@timestamp > 1000000001"), "1");
    ok(&mut s, "SET timestamp = 4294967296");
    assert_eq!(
        text_rows(&mut s, "SHOW WARNINGS"),
        [[
            "Warning",
            "1292",
            "Truncated incorrect timestamp value: '4294967296'"
        ]]
    );
    assert_eq!(one(&mut s, "SELECT @@timestamp"), "2147483647.000000");
    ok(&mut s, "SET timestamp = 1000000000.0");
    assert_eq!(one(&mut s, "SELECT @@timestamp"), "1000000000.000000");
    // type_hrtime.inc's form.
    ok(
        &mut s,
        "SET timestamp = UNIX_TIMESTAMP('2001-02-03 10:20:30')",
    );
    assert_eq!(
        one(&mut s, "SELECT @@timestamp, NOW()"),
        "981195630.000000\t2001-02-03 10:20:30"
    );
    let e = fail(&mut s, "SET timestamp = 'abc'");
    assert_eq!(
        (e.code, e.message.as_str()),
        (1232, "Incorrect argument type to variable 'timestamp'")
    );
    assert_eq!(err(&mut s, "SET timestamp = NULL"), 1232);
    let e = fail(&mut s, "SET GLOBAL timestamp = 5");
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            1228,
            "Variable 'timestamp' is a SESSION variable and can't be used with SET GLOBAL"
        )
    );
}

/// MariaDB: `/` and AVG give the dividend's scale plus div_precision_increment fraction
/// digits; the quotient is cut, not rounded, when those digits end a 9-digit word (`2/3` is 0
/// with 0); 0-38, a value outside clipped with 1292.
#[test]
fn div_precision_increment_sets_the_digits_of_a_quotient() {
    let db = Db::open("mtr-dpi");
    let mut s = session_in(&db, "t");
    assert_eq!(
        one(&mut s, "SELECT @@div_precision_increment, 1/3"),
        "4\t0.3333"
    );
    ok(&mut s, "SET div_precision_increment = 5");
    assert_eq!(
        text_rows(&mut s, "SHOW VARIABLES LIKE 'div_precision_increment'"),
        [["div_precision_increment", "5"]]
    );
    assert_eq!(
        one(&mut s, "SELECT 1/3, 1.5/7, AVG(2), 2/3.25"),
        "0.33333\t0.214286\t2.00000\t0.61538"
    );
    ok(&mut s, "CREATE TABLE n (a INT, d DECIMAL(5,2))");
    ok(&mut s, "INSERT INTO n VALUES (1, 1.25), (2, 2.5)");
    assert_eq!(
        one(&mut s, "SELECT AVG(a), AVG(d), SUM(d)/3 FROM n"),
        "1.50000\t1.8750000\t1.2500000"
    );
    ok(&mut s, "SET div_precision_increment = 0");
    assert_eq!(
        one(&mut s, "SELECT 1/3, 2/3, 1.5/7, AVG(1.5)"),
        "0\t0\t0.2\t1.5"
    );
    assert_eq!(one(&mut s, "SELECT 5/3"), "1");
    ok(&mut s, "SET div_precision_increment = 9");
    assert_eq!(
        one(&mut s, "SELECT 2/3, 2.0/3"),
        "0.666666666\t0.6666666667"
    );
    ok(&mut s, "SET div_precision_increment = 19");
    assert_eq!(
        one(&mut s, "SELECT 1/3, 1.123456789012345678901234567/7"),
        "0.3333333333333333333\t0.16049382700176366841446208100000000000"
    );
    ok(&mut s, "SET div_precision_increment = 39");
    assert_eq!(
        text_rows(&mut s, "SHOW WARNINGS"),
        [[
            "Warning",
            "1292",
            "Truncated incorrect div_precision_increment value: '39'"
        ]]
    );
    assert_eq!(
        one(&mut s, "SELECT @@div_precision_increment, 1/3"),
        "38\t0.33333333333333333333333333333333333333"
    );
    assert_eq!(err(&mut s, "SET div_precision_increment = 'x'"), 1232);
    // SET GLOBAL reaches new sessions only.
    ok(&mut s, "SET GLOBAL div_precision_increment = 6");
    let mut s2 = session_in(&db, "t");
    assert_eq!(one(&mut s2, "SELECT 1/3"), "0.333333");
    assert_eq!(
        one(&mut s, "SELECT 1/3"),
        "0.33333333333333333333333333333333333333"
    );
}

/// MariaDB: with check_constraint_checks=0, INSERT, UPDATE and ALTER TABLE ... ADD CHECK
/// write rows their CHECK constraints refuse; at 1 (the default) they are 4025.
#[test]
fn check_constraint_checks_off_writes_refused_rows() {
    let db = Db::open("mtr-checks");
    let mut s = session_in(&db, "t");
    ok(
        &mut s,
        "CREATE TABLE c1 (a INT CHECK (a > 10), b INT, CONSTRAINT m CHECK (a + b < 100))",
    );
    assert_eq!(
        one(
            &mut s,
            "SELECT @@check_constraint_checks, @@global.check_constraint_checks"
        ),
        "1\t1"
    );
    let e = fail(&mut s, "INSERT INTO c1 VALUES (1, 1)");
    assert_eq!(
        (e.code, e.message.as_str()),
        (4025, "CONSTRAINT `c1.a` failed for `t`.`c1`")
    );
    ok(&mut s, "SET check_constraint_checks = 0");
    ok(&mut s, "INSERT INTO c1 VALUES (1, 1000)");
    ok(&mut s, "UPDATE c1 SET a = 0");
    assert_eq!(one(&mut s, "SELECT * FROM c1"), "0\t1000");
    ok(&mut s, "ALTER TABLE c1 ADD CONSTRAINT n CHECK (b < 0)");
    ok(&mut s, "SET check_constraint_checks = 1");
    assert_eq!(err(&mut s, "INSERT INTO c1 VALUES (1, 1)"), 4025);
    ok(&mut s, "INSERT INTO c1 VALUES (20, -1)");
}

/// MariaDB: note_verbosity is a SET of basic, unusable_keys and explain (canonical order, a
/// bit mask 0-7 too); without `basic` a statement's notes are not recorded.
#[test]
fn note_verbosity_without_basic_drops_notes() {
    let db = Db::open("mtr-notes");
    let mut s = session_in(&db, "t");
    assert_eq!(one(&mut s, "SELECT @@note_verbosity"), "basic,explain");
    ok(&mut s, "DROP TEMPORARY TABLE IF EXISTS nope");
    assert_eq!(
        text_rows(&mut s, "SHOW WARNINGS"),
        [["Note", "1051", "Unknown table 't.nope'"]]
    );
    for (v, want) in [
        ("'explain,BASIC'", "basic,explain"),
        ("''", ""),
        ("3", "basic,unusable_keys"),
        ("'basic,basic'", "basic"),
        ("7", "basic,unusable_keys,explain"),
        ("0", ""),
        ("'basic,,explain'", "basic,explain"),
        ("','", ""),
    ] {
        ok(&mut s, &format!("SET note_verbosity = {v}"));
        assert_eq!(one(&mut s, "SELECT @@note_verbosity"), want, "{v}");
    }
    for (v, code, msg) in [
        (
            "'x'",
            1231,
            "Variable 'note_verbosity' can't be set to the value of 'x'",
        ),
        (
            "8",
            1231,
            "Variable 'note_verbosity' can't be set to the value of '8'",
        ),
        (
            "NULL",
            1231,
            "Variable 'note_verbosity' can't be set to the value of 'NULL'",
        ),
        (
            "' basic'",
            1231,
            "Variable 'note_verbosity' can't be set to the value of ' basic'",
        ),
        (
            "'basic, explain'",
            1231,
            "Variable 'note_verbosity' can't be set to the value of ' explain'",
        ),
        (
            "1.5",
            1232,
            "Incorrect argument type to variable 'note_verbosity'",
        ),
    ] {
        let e = fail(&mut s, &format!("SET note_verbosity = {v}"));
        assert_eq!((e.code, e.message.as_str()), (code, msg), "{v}");
    }
    ok(&mut s, "SET note_verbosity = ''");
    ok(&mut s, "DROP TEMPORARY TABLE IF EXISTS nope");
    assert!(text_rows(&mut s, "SHOW WARNINGS").is_empty());
    // null_key.test's way to leave out `explain`.
    ok(&mut s, "SET note_verbosity = DEFAULT");
    ok(
        &mut s,
        "SET note_verbosity = replace(@@note_verbosity, 'explain', '')",
    );
    assert_eq!(one(&mut s, "SELECT @@note_verbosity"), "basic");
    ok(&mut s, "DROP TEMPORARY TABLE IF EXISTS nope");
    assert_eq!(
        text_rows(&mut s, "SHOW WARNINGS"),
        [["Note", "1051", "Unknown table 't.nope'"]]
    );
}

/// onelog keeps no optimizer statistics, so whether InnoDB's would persist changes nothing:
/// both values are taken (the tests of MariaDB's suite set 0 and 1), global only as in
/// MariaDB, with MariaDB's defaults and bounds.
#[test]
fn innodb_stats_persistent_takes_both_values() {
    let db = Db::open("mtr-stats");
    let mut s = session_in(&db, "t");
    assert_eq!(
        one(
            &mut s,
            "SELECT @@innodb_stats_persistent, @@innodb_stats_persistent_sample_pages"
        ),
        "1\t20"
    );
    ok(&mut s, "SET GLOBAL innodb_stats_persistent = 0");
    ok(
        &mut s,
        "SET GLOBAL innodb_stats_persistent_sample_pages = 100",
    );
    assert_eq!(
        one(
            &mut s,
            "SELECT @@global.innodb_stats_persistent, @@innodb_stats_persistent_sample_pages"
        ),
        "0\t100"
    );
    ok(&mut s, "SET GLOBAL innodb_stats_persistent = ON");
    let e = fail(&mut s, "SET innodb_stats_persistent = 0");
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            1229,
            "Variable 'innodb_stats_persistent' is a GLOBAL variable and should be set with SET GLOBAL"
        )
    );
}

/// MariaDB: `COMMIT [WORK] AND CHAIN` / `ROLLBACK AND CHAIN` start the next transaction at
/// once, with the same access mode, under autocommit too; `AND NO CHAIN`, `NO RELEASE` are the
/// plain forms; `AND CHAIN RELEASE`, `AND NO RELEASE`, `CHAIN` without AND are 1064. RELEASE
/// (disconnect after the reply) is refused here (1235).
#[test]
fn commit_and_chain_starts_the_next_transaction() {
    let db = Db::open("mtr-chain");
    let mut s = session_in(&db, "t");
    let mut other = session_in(&db, "t");
    ok(&mut s, "CREATE TABLE ch (a INT PRIMARY KEY)");
    ok(&mut s, "START TRANSACTION READ ONLY");
    ok(&mut s, "COMMIT AND CHAIN");
    assert_eq!(err(&mut s, "INSERT INTO ch VALUES (1)"), 1792);
    ok(&mut s, "ROLLBACK");
    ok(&mut s, "BEGIN");
    ok(&mut s, "INSERT INTO ch VALUES (2)");
    ok(&mut s, "ROLLBACK WORK AND CHAIN");
    // Still in a transaction: the next INSERT is not committed by itself.
    ok(&mut s, "INSERT INTO ch VALUES (3)");
    assert!(text_rows(&mut other, "SELECT * FROM ch").is_empty());
    ok(&mut s, "COMMIT AND NO CHAIN");
    assert_eq!(text_rows(&mut other, "SELECT * FROM ch"), [["3"]]);
    // Under autocommit: COMMIT AND CHAIN opens a transaction too.
    ok(&mut s, "COMMIT WORK AND CHAIN");
    ok(&mut s, "INSERT INTO ch VALUES (4)");
    assert_eq!(text_rows(&mut other, "SELECT * FROM ch"), [["3"]]);
    ok(&mut s, "COMMIT WORK AND NO CHAIN NO RELEASE");
    assert_eq!(text_rows(&mut other, "SELECT * FROM ch"), [["3"], ["4"]]);
    ok(&mut s, "ROLLBACK AND CHAIN NO RELEASE");
    ok(&mut s, "COMMIT NO RELEASE");
    for bad in [
        "COMMIT AND CHAIN RELEASE",
        "COMMIT AND NO RELEASE",
        "COMMIT CHAIN RELEASE",
        "COMMIT NO CHAIN RELEASE",
        "COMMIT AND RELEASE",
    ] {
        assert_eq!(err(&mut s, bad), 1064, "{bad}");
    }
    assert_eq!(err(&mut s, "COMMIT AND NO CHAIN RELEASE"), 1235);
    assert_eq!(err(&mut s, "COMMIT RELEASE"), 1235);
    ok(&mut s, "BEGIN");
    ok(&mut s, "SAVEPOINT sp");
    ok(&mut s, "ROLLBACK WORK TO SAVEPOINT sp");
    ok(&mut s, "ROLLBACK");
}

/// onelog has no event scheduler: `event_scheduler` reads OFF (MariaDB's default) and takes
/// only OFF (create_drop_event.test sets it); ON is refused (1235), DISABLED is 1231 as in
/// MariaDB (a startup value), SET SESSION 1229.
#[test]
fn event_scheduler_is_off() {
    let db = Db::open("mtr-events");
    let mut s = session_in(&db, "t");
    assert_eq!(one(&mut s, "SELECT @@event_scheduler"), "OFF");
    ok(&mut s, "SET GLOBAL event_scheduler = off");
    ok(&mut s, "SET GLOBAL event_scheduler = 0");
    assert_eq!(one(&mut s, "SELECT @@global.event_scheduler"), "OFF");
    assert_eq!(err(&mut s, "SET GLOBAL event_scheduler = ON"), 1235);
    let e = fail(&mut s, "SET GLOBAL event_scheduler = disabled");
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            1231,
            "Variable 'event_scheduler' can't be set to the value of 'disabled'"
        )
    );
    assert_eq!(err(&mut s, "SET event_scheduler = off"), 1229);
}
