//! CHARSET(), COLLATION() and COERCIBILITY() of every kind of expression, character functions
//! on binary strings (VARBINARY values, literals under `SET NAMES binary`), CONVERT(... USING
//! ...) and the collation of a CHECK constraint's literals, through `Session::query`. Every
//! expected value was produced by MariaDB 10.11.14 running the same statements
//! (`--character-set-server=utf8mb4`, a utf8mb4 client); where onelog differs the test says so.

use onelog_sql::{Output, Session};

mod common;
use common::{fail, ok, text_rows as rows, Db};

fn session(db: &Db) -> Session {
    let mut s = Session::new(db.server.clone(), 1, "root", "localhost");
    ok(&mut s, "CREATE DATABASE cs");
    ok(&mut s, "USE cs");
    ok(
        &mut s,
        "CREATE TABLE c (id INT PRIMARY KEY, vc VARCHAR(10), ch CHAR(5), tx TEXT, \
         vb VARBINARY(10), bn BINARY(4), bl BLOB, e ENUM('a','b'), st SET('x','y'), \
         i INT, d DECIMAL(5,2), f DOUBLE, dt DATE, ts TIMESTAMP NULL, tm TIME, y YEAR, \
         u VARCHAR(10) COLLATE utf8mb4_unicode_ci, b VARCHAR(10) COLLATE utf8mb4_bin)",
    );
    ok(
        &mut s,
        "INSERT INTO c VALUES (1, 'héllo', 'ab', 't', 'héllo', 'A', 'bb', 'a', 'x', 1, 1.5, \
         2.5, '2020-01-01', NULL, '10:00', 2020, 'u', 'b')",
    );
    s
}

fn one(s: &mut Session, sql: &str) -> Vec<String> {
    rows(s, sql).remove(0)
}

/// (CHARSET, COLLATION, COERCIBILITY) of `expr` read from table `c`.
fn described(s: &mut Session, expr: &str) -> Vec<String> {
    one(
        s,
        &format!("SELECT CHARSET({expr}), COLLATION({expr}), COERCIBILITY({expr}) FROM c"),
    )
}

#[test]
fn columns_are_implicit_with_their_collation_and_other_types_binary_numeric() {
    let db = Db::open("cs-columns");
    let mut s = session(&db);
    for (expr, want) in [
        ("vc", ["utf8mb4", "utf8mb4_general_ci", "2"]),
        ("ch", ["utf8mb4", "utf8mb4_general_ci", "2"]),
        ("tx", ["utf8mb4", "utf8mb4_general_ci", "2"]),
        ("u", ["utf8mb4", "utf8mb4_unicode_ci", "2"]),
        ("b", ["utf8mb4", "utf8mb4_bin", "2"]),
        ("vb", ["binary", "binary", "2"]),
        ("bn", ["binary", "binary", "2"]),
        ("bl", ["binary", "binary", "2"]),
        ("e", ["utf8mb4", "utf8mb4_general_ci", "2"]),
        ("st", ["utf8mb4", "utf8mb4_general_ci", "2"]),
        ("i", ["binary", "binary", "5"]),
        ("d", ["binary", "binary", "5"]),
        ("f", ["binary", "binary", "5"]),
        ("dt", ["binary", "binary", "5"]),
        ("ts", ["binary", "binary", "5"]),
        ("tm", ["binary", "binary", "5"]),
        ("y", ["binary", "binary", "5"]),
    ] {
        assert_eq!(described(&mut s, expr), want, "{expr}");
    }
    ok(&mut s, "CREATE TABLE jb (j JSON, bt BIT(3))");
    ok(&mut s, "INSERT INTO jb VALUES ('{}', b'101')");
    assert_eq!(
        one(
            &mut s,
            "SELECT CHARSET(j), COLLATION(j), COERCIBILITY(j), CHARSET(bt), COLLATION(bt), \
             COERCIBILITY(bt) FROM jb"
        ),
        ["utf8mb4", "utf8mb4_bin", "2", "binary", "binary", "2"]
    );
}

#[test]
fn literals_casts_functions_and_null_as_mariadb_derives_them() {
    let db = Db::open("cs-literals");
    let mut s = session(&db);
    for (expr, want) in [
        ("'a'", ["utf8mb4", "utf8mb4_general_ci", "4"]),
        (
            "_utf8mb4'a' COLLATE utf8mb4_bin",
            ["utf8mb4", "utf8mb4_bin", "0"],
        ),
        ("_binary'a'", ["binary", "binary", "4"]),
        ("x'41'", ["binary", "binary", "4"]),
        ("0x41", ["binary", "binary", "4"]),
        ("CONVERT('a' USING binary)", ["binary", "binary", "2"]),
        (
            "CONVERT(vb USING utf8mb4)",
            ["utf8mb4", "utf8mb4_general_ci", "2"],
        ),
        ("CAST(1 AS CHAR)", ["utf8mb4", "utf8mb4_general_ci", "2"]),
        ("CAST('a' AS BINARY)", ["binary", "binary", "2"]),
        ("CAST('1' AS SIGNED)", ["binary", "binary", "5"]),
        ("NULL", ["binary", "binary", "6"]),
        ("1", ["binary", "binary", "5"]),
        ("1.5", ["binary", "binary", "5"]),
        ("1e0", ["binary", "binary", "5"]),
        ("NOW()", ["binary", "binary", "5"]),
        ("CURDATE()", ["binary", "binary", "5"]),
        ("UPPER('a')", ["utf8mb4", "utf8mb4_general_ci", "4"]),
        ("UPPER(vc)", ["utf8mb4", "utf8mb4_general_ci", "2"]),
        ("CONCAT(vc, 'x')", ["utf8mb4", "utf8mb4_general_ci", "2"]),
        ("CONCAT(vc, 1)", ["utf8mb4", "utf8mb4_general_ci", "2"]),
        ("CONCAT(vb, vc)", ["binary", "binary", "2"]),
        ("UPPER(vb)", ["binary", "binary", "2"]),
        ("HEX('a')", ["utf8mb4", "utf8mb4_general_ci", "4"]),
        ("MD5('a')", ["utf8mb4", "utf8mb4_general_ci", "4"]),
        ("IF(1, vc, 'b')", ["utf8mb4", "utf8mb4_general_ci", "2"]),
        ("IFNULL(vc, 'b')", ["utf8mb4", "utf8mb4_general_ci", "2"]),
        ("COALESCE(vc, 'x')", ["utf8mb4", "utf8mb4_general_ci", "2"]),
        ("(SELECT vc FROM c)", ["utf8mb4", "utf8mb4_general_ci", "2"]),
        ("(SELECT 'a')", ["utf8mb4", "utf8mb4_general_ci", "4"]),
        ("VERSION()", ["utf8mb3", "utf8mb3_general_ci", "3"]),
        ("USER()", ["utf8mb3", "utf8mb3_general_ci", "3"]),
        ("DATABASE()", ["utf8mb3", "utf8mb3_general_ci", "3"]),
        ("@@version", ["utf8mb3", "utf8mb3_general_ci", "3"]),
        ("@@sql_mode", ["utf8mb3", "utf8mb3_general_ci", "3"]),
        ("@@autocommit", ["binary", "binary", "5"]),
    ] {
        assert_eq!(described(&mut s, expr), want, "{expr}");
    }
    // An aggregate keeps its argument's derivation.
    assert_eq!(
        one(
            &mut s,
            "SELECT CHARSET(MAX(vc)), COERCIBILITY(MAX(vc)), CHARSET(GROUP_CONCAT(vc)) FROM c"
        ),
        ["utf8mb4", "2", "utf8mb4"]
    );
    // Two IMPLICIT collations: NONE (1), not an error outside a comparison.
    assert_eq!(
        one(&mut s, "SELECT COERCIBILITY(CONCAT(vc, u)) FROM c"),
        ["1"]
    );
}

#[test]
fn variables_and_parameters_are_described_by_their_value() {
    let db = Db::open("cs-variables");
    let mut s = session(&db);
    ok(&mut s, "SET @v = 'a', @n = 1, @vb = _binary'z'");
    assert_eq!(
        one(
            &mut s,
            "SELECT CHARSET(@v), COLLATION(@v), COERCIBILITY(@v), CHARSET(@n), \
             COERCIBILITY(@n), CHARSET(@none), COERCIBILITY(@none)"
        ),
        [
            "utf8mb4",
            "utf8mb4_general_ci",
            "2",
            "binary",
            "5",
            "binary",
            "2"
        ]
    );
    ok(
        &mut s,
        "PREPARE p FROM 'SELECT COERCIBILITY(?), CHARSET(?), COLLATION(?)'",
    );
    ok(&mut s, "SET @a = 'x'");
    assert_eq!(
        one(&mut s, "EXECUTE p USING @a, @a, @a"),
        ["4", "utf8mb4", "utf8mb4_general_ci"]
    );
    ok(&mut s, "SET @a = 5");
    assert_eq!(
        one(&mut s, "EXECUTE p USING @a, @a, @a"),
        ["5", "binary", "binary"]
    );
    assert_eq!(
        one(&mut s, "EXECUTE p USING NULL, NULL, NULL"),
        ["6", "binary", "binary"]
    );
}

#[test]
fn the_connection_collation_is_read_when_the_statement_runs() {
    let db = Db::open("cs-names");
    let mut s = session(&db);
    ok(&mut s, "SET NAMES utf8mb4 COLLATE utf8mb4_unicode_ci");
    assert_eq!(
        one(
            &mut s,
            "SELECT CHARSET('a'), COLLATION('a'), COERCIBILITY('a'), \
             COLLATION(CONCAT('a', 'b')), COLLATION(CAST(1 AS CHAR)), COLLATION(vc) FROM c"
        ),
        [
            "utf8mb4",
            "utf8mb4_unicode_ci",
            "4",
            "utf8mb4_unicode_ci",
            "utf8mb4_unicode_ci",
            "utf8mb4_general_ci"
        ]
    );
    ok(&mut s, "SET NAMES binary");
    assert_eq!(
        one(
            &mut s,
            "SELECT CHARSET('a'), COLLATION('a'), COERCIBILITY('a'), \
             COLLATION(CAST(1 AS CHAR)), CHARSET(VERSION()), COLLATION(vc) FROM c"
        ),
        [
            "binary",
            "binary",
            "4",
            "binary",
            "utf8mb3",
            "utf8mb4_general_ci"
        ]
    );
    // A prepared statement follows a later SET NAMES.
    ok(&mut s, "PREPARE q FROM 'SELECT COLLATION(''a'')'");
    assert_eq!(one(&mut s, "EXECUTE q"), ["binary"]);
    ok(&mut s, "SET NAMES utf8mb4");
    assert_eq!(one(&mut s, "EXECUTE q"), ["utf8mb4_general_ci"]);
}

#[test]
fn result_metadata_and_argument_errors_are_mariadbs() {
    let db = Db::open("cs-meta");
    let mut s = session(&db);
    // mariadb --column-type-info: VAR_STRING, utf8mb4_general_ci (45), length 256,
    // decimals 39.
    match ok(&mut s, "SELECT CHARSET('a'), COLLATION('a')") {
        Output::Rows { columns, .. } => {
            for c in &columns {
                assert_eq!(
                    (c.charset, c.length, c.decimals),
                    (45, 256, 39),
                    "{}",
                    c.name
                );
            }
        }
        other => panic!("not a result set: {other:?}"),
    }
    let e = fail(&mut s, "SELECT collation()");
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            1582,
            "Incorrect parameter count in the call to native function 'collation'"
        )
    );
    let e = fail(&mut s, "SELECT CHARSET(1, 2)");
    assert_eq!(e.code, 1064);
    assert!(e.message.contains("near '2)'"), "{}", e.message);
    // A character set onelog does not store: refused, never ignored.
    assert_eq!(fail(&mut s, "SELECT CONVERT('a' USING latin1)").code, 1235);
    assert_eq!(fail(&mut s, "SELECT CONVERT('a' USING nosuch)").code, 1115);
    assert_eq!(
        one(&mut s, "SELECT HEX(CONVERT('é' USING binary))"),
        ["C3A9"]
    );
}

#[test]
fn character_functions_on_binary_values_work_on_bytes() {
    let db = Db::open("cs-bytes");
    let mut s = session(&db);
    ok(&mut s, "UPDATE c SET vb = 'xÉ'");
    assert_eq!(
        one(
            &mut s,
            "SELECT HEX(UPPER(vb)), CHAR_LENGTH(vb), LENGTH(vb), HEX(REVERSE(vb)), \
             HEX(SUBSTRING(vb, 2, 1)), HEX(LPAD(vb, 5, 'é')), vb LIKE 'x_', vb LIKE 'x__', \
             HEX(TRIM(LEADING 'x' FROM vb)), UPPER(CONCAT(vb, 'a')), ORD(vb), \
             INSTR(vb, 'É'), POSITION('É' IN vb), CHAR_LENGTH(vc), UPPER(vc) FROM c"
        ),
        [
            "78C389",
            "3",
            "3",
            "89C378",
            "C3",
            "C3A978C389",
            "0",
            "1",
            "C389",
            "xÉa",
            "120",
            "2",
            "2",
            "5",
            "HÉLLO"
        ]
    );
}

#[test]
fn character_functions_on_literals_under_set_names_binary_work_on_bytes() {
    let db = Db::open("cs-names-binary");
    let mut s = session(&db);
    ok(&mut s, "UPDATE c SET vc = 'abé'");
    ok(&mut s, "SET NAMES binary");
    assert_eq!(
        one(
            &mut s,
            "SELECT CHAR_LENGTH('héllo'), LENGTH('héllo'), HEX(UPPER('héllo')), \
             HEX(LOWER('HÉLLO')), HEX(SUBSTRING('héllo', 2, 2)), HEX(LEFT('héllo', 2)), \
             HEX(RIGHT('héllo', 2)), LOCATE('l', 'héllo'), INSTR('héllo', 'l'), \
             HEX(REVERSE('hé'))"
        ),
        [
            "6",
            "6",
            "68C3A96C6C6F",
            "48C3894C4C4F",
            "C3A9",
            "68C3",
            "6C6F",
            "4",
            "4",
            "A9C368"
        ]
    );
    assert_eq!(
        one(
            &mut s,
            "SELECT HEX(LPAD('é', 3, 'x')), HEX(RPAD('é', 3, 'x')), \
             HEX(INSERT('héllo', 2, 1, 'X')), SUBSTRING_INDEX('a,b', ',', 1), \
             FIELD('A', 'a'), FIND_IN_SET('A', 'a,b'), STRCMP('a', 'A'), SOUNDEX('héllo'), \
             ELT(1, 'a')"
        ),
        [
            "78C3A9",
            "C3A978",
            "6858A96C6C6F",
            "a",
            "0",
            "0",
            "1",
            "H400",
            "a"
        ]
    );
    assert_eq!(
        one(
            &mut s,
            "SELECT HEX(TRIM(' é ')), LTRIM(' a'), REPLACE('aAa', 'a', 'x'), ORD('é'), \
             ASCII('é'), 'a' LIKE 'A', 'é' LIKE '__', 'a' = 'A', CONCAT('a', 'B'), \
             HEX(CONCAT('é', 1))"
        ),
        ["C3A9", "a", "xAx", "195", "195", "0", "1", "0", "aB", "C3A931"]
    );
    assert_eq!(
        one(
            &mut s,
            "SELECT REGEXP_REPLACE('aA', 'a', 'x'), REGEXP_SUBSTR('aA', 'A'), \
             REGEXP_INSTR('aA', 'A'), 'aA' REGEXP 'A', POSITION('l' IN 'héllo'), \
             HEX(TRIM(LEADING 'x' FROM 'xxé')), HEX(MID('héllo', 2)), UPPER('abc'), \
             LOWER('ABC')"
        ),
        ["xA", "A", "2", "1", "4", "C3A9", "C3A96C6C6F", "abc", "ABC"]
    );
    // A text column keeps its characters; a literal joined to it takes its collation.
    assert_eq!(
        one(
            &mut s,
            "SELECT LOWER(CONCAT('A', vc)), UPPER(vc), CHAR_LENGTH(vc), LOCATE('b', vc) FROM c"
        ),
        ["aabé", "ABÉ", "3", "2"]
    );
}

#[test]
fn a_check_constraints_literals_compare_under_its_tables_collation() {
    let db = Db::open("cs-check");
    let mut s = session(&db);
    // MariaDB 10.11: the table's collation, whichever connection created the table or
    // writes the row (onelog knows a table's collation from its text columns).
    ok(&mut s, "SET NAMES utf8mb4 COLLATE utf8mb4_bin");
    ok(
        &mut s,
        "CREATE TABLE h2 (a VARCHAR(5), e INT, CHECK (e IS NULL OR 'c' = 'C')) \
         COLLATE utf8mb4_general_ci",
    );
    ok(&mut s, "SET NAMES utf8mb4");
    ok(
        &mut s,
        "CREATE TABLE h3 (a VARCHAR(5), e INT, CHECK (e IS NULL OR 'c' = 'C')) \
         COLLATE utf8mb4_bin",
    );
    ok(&mut s, "INSERT INTO h2 VALUES ('x', 2)");
    let e = fail(&mut s, "INSERT INTO h3 VALUES ('x', 2)");
    assert_eq!(
        (e.code, e.message.as_str()),
        (4025, "CONSTRAINT `CONSTRAINT_1` failed for `cs`.`h3`")
    );
    ok(&mut s, "SET NAMES binary");
    ok(&mut s, "INSERT INTO h2 VALUES ('y', 3)");
}
