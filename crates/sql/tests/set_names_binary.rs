//! `SET NAMES binary` (what every file mydumper writes starts with) through `Session::query`:
//! the session variables it sets, literals comparing byte by byte, literals stored into a
//! utf8mb4 column (checked: 1366, 1406), result metadata under `character_set_results =
//! binary`, the collation checks of SET NAMES (1253), the string functions on a binary literal
//! (computed on bytes) and `SET NAMES utf8mb4` returning to normal. Every expected value
//! was produced by MariaDB 10.11 running the same statements (utf8mb4 database).

use onelog_sql::{Output, Session};

mod common;
use common::{fail, ok, text_rows as rows, Db};

fn session(db: &Db) -> Session {
    let mut s = Session::new(db.server.clone(), 1, "root", "localhost");
    ok(&mut s, "CREATE DATABASE nb");
    ok(&mut s, "USE nb");
    ok(
        &mut s,
        "CREATE TABLE d (id INT PRIMARY KEY, s VARCHAR(4), b VARBINARY(4)) DEFAULT CHARSET utf8mb4",
    );
    s
}

fn one(s: &mut Session, sql: &str) -> Vec<String> {
    rows(s, sql).remove(0)
}

#[test]
fn set_names_binary_sets_the_connection_variables_and_utf8mb4_restores_them() {
    let db = Db::open("names-vars");
    let mut s = session(&db);
    let vars = "SELECT @@character_set_client, @@character_set_connection, \
                @@character_set_results, @@collation_connection";
    ok(&mut s, "SET NAMES binary");
    assert_eq!(one(&mut s, vars), ["binary", "binary", "binary", "binary"]);
    ok(&mut s, "SET NAMES utf8mb4");
    assert_eq!(
        one(&mut s, vars),
        ["utf8mb4", "utf8mb4", "utf8mb4", "utf8mb4_general_ci"]
    );
    assert_eq!(one(&mut s, "SELECT 'a' = 'A', UPPER('abc')"), ["1", "ABC"]);
    ok(&mut s, "SET NAMES binary COLLATE binary");
    assert_eq!(one(&mut s, "SELECT @@collation_connection"), ["binary"]);
    let e = fail(&mut s, "SET NAMES binary COLLATE utf8mb4_bin");
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            1253,
            "COLLATION 'utf8mb4_bin' is not valid for CHARACTER SET 'binary'"
        )
    );
    let e = fail(&mut s, "SET NAMES utf8mb4 COLLATE binary");
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            1253,
            "COLLATION 'binary' is not valid for CHARACTER SET 'utf8mb4'"
        )
    );
}

#[test]
fn literals_compare_as_bytes_and_are_checked_when_stored() {
    let db = Db::open("names-literals");
    let mut s = session(&db);
    ok(&mut s, "SET NAMES binary");
    assert_eq!(one(&mut s, "SELECT 'a' = 'A', 'a' < 'B'"), ["0", "0"]);
    assert_eq!(one(&mut s, "SELECT LENGTH('é'), HEX('é')"), ["2", "C3A9"]);
    ok(&mut s, "INSERT INTO d VALUES (1, 'abé', 'abé')");
    // The column keeps its collation: a column against a literal compares under it.
    assert_eq!(
        one(&mut s, "SELECT s, b, CHAR_LENGTH(s), s = 'ABÉ' FROM d"),
        ["abé", "abé", "3", "1"]
    );
    assert_eq!(one(&mut s, "SELECT COUNT(*) FROM d WHERE s = 'ABÉ'"), ["1"]);
    let e = fail(&mut s, "INSERT INTO d VALUES (2, x'c3', 'x')");
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            1366,
            "Incorrect string value: '\\xC3' for column `nb`.`d`.`s` at row 1"
        )
    );
    let e = fail(&mut s, "INSERT INTO d VALUES (3, 'abcde', 'x')");
    assert_eq!(
        (e.code, e.message.as_str()),
        (1406, "Data too long for column 's' at row 1")
    );
}

#[test]
fn results_binary_sends_text_columns_as_binary_counting_characters() {
    let db = Db::open("names-results");
    let mut s = session(&db);
    ok(&mut s, "INSERT INTO d VALUES (1, 'é', 'x')");
    let meta = |s: &mut Session| match ok(s, "SELECT s FROM d") {
        Output::Rows { columns, .. } => (columns[0].charset, columns[0].length),
        other => panic!("not a result set: {other:?}"),
    };
    assert_eq!(meta(&mut s), (45, 16));
    ok(&mut s, "SET NAMES binary");
    assert_eq!(meta(&mut s), (63, 4));
    ok(&mut s, "SET NAMES utf8mb4");
    ok(&mut s, "SET character_set_results = binary");
    assert_eq!(meta(&mut s), (63, 4));
}

#[test]
fn character_functions_on_a_binary_literal_work_on_bytes() {
    let db = Db::open("names-functions");
    let mut s = session(&db);
    ok(&mut s, "INSERT INTO d VALUES (1, 'abé', 'x')");
    ok(&mut s, "SET NAMES binary");
    // MariaDB: UPPER('abc') = 'abc', CHAR_LENGTH('é') = 2 (bytes); a literal joined to a
    // text column takes the column's collation (more in tests/charset_functions.rs).
    assert_eq!(
        one(
            &mut s,
            "SELECT UPPER('abc'), CHAR_LENGTH('é'), LOWER(CONCAT('A', s)) FROM d"
        ),
        ["abc", "2", "aabé"]
    );
    // On a column alone they answer as MariaDB does.
    assert_eq!(
        one(&mut s, "SELECT UPPER(s), CHAR_LENGTH(s) FROM d"),
        ["ABÉ", "3"]
    );
}

#[test]
fn the_connection_charset_and_collation_follow_each_other() {
    let db = Db::open("names-link");
    let mut s = session(&db);
    ok(&mut s, "SET character_set_connection = binary");
    assert_eq!(
        one(&mut s, "SELECT @@collation_connection, 'a' = 'A'"),
        ["binary", "0"]
    );
    ok(&mut s, "SET collation_connection = utf8mb4_general_ci");
    assert_eq!(
        one(&mut s, "SELECT @@character_set_connection, 'a' = 'A'"),
        ["utf8mb4", "1"]
    );
    ok(&mut s, "SET collation_connection = binary");
    assert_eq!(
        one(&mut s, "SELECT @@character_set_connection, 'a' = 'A'"),
        ["binary", "0"]
    );
}
