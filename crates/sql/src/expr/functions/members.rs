//! ENUM_TEXT and SET_TEXT: the text of an ENUM or SET column's stored value; BIT_TEXT: the
//! bytes of a BIT(M) column's number. SQL cannot call them (no names): compile wraps a
//! reference to such a column in one, with the column's members (its M) as the second,
//! literal, argument (`expr::members`). HEX_HYBRID, likewise made only by compile, is a
//! `0x..` or `b'..'` literal: its number and its bytes, evaluated as the bytes
//! (`expr::hybrid`).

use onelog_binlog::Value;

use super::{rt_str, strict, FunctionDef};
use crate::expr::members::{decode_members, member_text};

pub(super) const FUNCTIONS: &[FunctionDef] = &[
    strict("ENUM_TEXT", &[], (2, 2), rt_str, |v, _| {
        Ok(match &v[1] {
            Value::Bytes(m) => member_text(&v[0], &decode_members(m), false),
            _ => Value::Null,
        })
    }),
    strict("BIT_TEXT", &[], (2, 2), rt_str, |v, _| {
        // The number of a BIT(M) as `(M + 7) / 8` bytes, big-endian.
        let m = usize::try_from(super::int(&v[1]))
            .unwrap_or(64)
            .clamp(1, 64);
        Ok(match v[0] {
            Value::UInt(n) => Value::bytes(&n.to_be_bytes()[8 - m.div_ceil(8)..]),
            Value::Int(i) => Value::bytes(&i.to_be_bytes()[8 - m.div_ceil(8)..]),
            ref other => other.clone(),
        })
    }),
    strict(
        "HEX_HYBRID",
        &[],
        (2, 2),
        |args, cx| cx.of(&args[1]),
        |mut v, _| Ok(v.swap_remove(1)),
    ),
    strict("SET_TEXT", &[], (2, 2), rt_str, |v, _| {
        Ok(match &v[1] {
            Value::Bytes(m) => member_text(&v[0], &decode_members(m), true),
            _ => Value::Null,
        })
    }),
];

#[cfg(test)]
mod tests {
    use crate::output::Output;

    /// Runs `statements` on a fresh server: each one's rows as text (NULL as "NULL"), or
    /// "code message" for an error.
    fn run_all(name: &str, statements: &[&str]) -> Vec<Result<Vec<String>, String>> {
        let mut s = crate::expr::functions::test_session(&format!("members-{name}"));
        let mut out = Vec::new();
        for sql in statements {
            out.push(match s.query(sql).pop() {
                Some(Ok(Output::Rows { columns, rows })) => Ok(rows
                    .iter()
                    .map(|r| {
                        r.iter()
                            .zip(&columns)
                            .map(|(v, c)| {
                                crate::render::text(v, c).map_or("NULL".to_string(), |b| {
                                    String::from_utf8_lossy(&b).into_owned()
                                })
                            })
                            .collect::<Vec<_>>()
                            .join("|")
                    })
                    .collect()),
                Some(Ok(_)) | None => Ok(Vec::new()),
                Some(Err(e)) => Err(format!("{} {}", e.code, e.message)),
            });
        }
        out
    }

    fn rows(r: &Result<Vec<String>, String>) -> Vec<&str> {
        match r {
            Ok(v) => v.iter().map(String::as_str).collect(),
            Err(e) => panic!("{e}"),
        }
    }

    /// The numeric arguments of the built-ins read an ENUM, SET or BIT as its number (they
    /// read the text, as a number 0, before). Each value checked against MariaDB 10.11.19.
    #[test]
    fn numeric_arguments_read_enum_set_and_bit_as_numbers() {
        let r = run_all("numeric-args", &[
            "CREATE DATABASE d",
            "CREATE TABLE d.en (id INT PRIMARY KEY, e ENUM('x','y','z'), s SET('a','b'), b BIT(8))",
            "INSERT INTO d.en VALUES (1, 'z', 'a,b', 2)",
            "SELECT ABS(e), ROUND(e), FLOOR(s), SQRT(s), LEFT('abcdef', e), HEX(CHAR(e)), \
             SUBSTRING('abcdef', b), POW(b, 2), e, s FROM d.en",
        ]);
        assert_eq!(
            rows(&r[3]),
            ["3|3|3|1.7320508075688772|abc|03|bcdef|4|z|a,b"]
        );
    }

    /// Each value checked against MariaDB 10.11 with the same statements.
    #[test]
    fn bit_columns_behave_as_in_mariadb() {
        let r = run_all("bit", &[
            "CREATE DATABASE d",
            "CREATE TABLE d.b2 (id INT PRIMARY KEY, b BIT(3) NOT NULL DEFAULT b'101', c BIT(10))",
            "SHOW CREATE TABLE d.b2",
            "DESCRIBE d.b2",
            "INSERT INTO d.b2 VALUES (1, 8, 1)",
            "INSERT INTO d.b2 VALUES (2, -1, 1)",
            "INSERT INTO d.b2 VALUES (3, 'a', 1)",
            "INSERT INTO d.b2 VALUES (4, '', 1)",
            "INSERT INTO d.b2 (id) VALUES (5)",
            "INSERT INTO d.b2 VALUES (6, 2.6, 'ab')",
            "SELECT id, b+0, hex(b), c+0, hex(c), b = 5, b = b'101', length(b), length(c) FROM d.b2 ORDER BY id",
            "CREATE TABLE d.b3 (id INT PRIMARY KEY, b BIT(65))",
            "SET sql_mode = ''",
            "INSERT INTO d.b2 VALUES (8, 9, 'ab')",
            "INSERT INTO d.b2 VALUES (9, -1, 2.6)",
            "SELECT b+0, c+0 FROM d.b2 WHERE id >= 8 ORDER BY id",
            "CREATE TABLE d.b64 (id INT PRIMARY KEY, b BIT(64))",
            "INSERT INTO d.b64 VALUES (1, 18446744073709551615)",
            "SELECT b + 0 FROM d.b64",
            "SELECT b + 1 FROM d.b64",
            "SELECT id FROM d.b2 ORDER BY b DESC, id",
        ]);
        let create = rows(&r[2]).join("\n");
        assert!(
            create.contains("  `b` bit(3) NOT NULL DEFAULT b'101',\n  `c` bit(10) DEFAULT NULL,"),
            "{create}"
        );
        assert_eq!(
            &rows(&r[3])[1..],
            ["b|bit(3)|NO||b'101'|", "c|bit(10)|YES||NULL|"]
        );
        let too_long = |c: &str| Err(format!("1406 Data too long for column '{c}' at row 1"));
        assert_eq!(r[4], too_long("b"));
        assert_eq!(r[5], too_long("b"));
        assert_eq!(r[6], too_long("b"));
        assert_eq!(r[9], too_long("c"));
        assert_eq!(
            rows(&r[10]),
            ["4|0|0|1|1|0|0|1|2", "5|5|5|NULL|NULL|1|1|1|NULL"]
        );
        assert_eq!(
            r[11],
            Err("1439 Display width out of range for 'b' (max = 64)".into())
        );
        assert_eq!(rows(&r[15]), ["7|1023", "7|3"]);
        assert_eq!(rows(&r[20]), ["8", "9", "5", "4"]);
        assert_eq!(rows(&r[18]), ["18446744073709551615"]);
        // MariaDB names the column in the message (a documented divergence: the value here).
        assert!(
            matches!(&r[19], Err(e) if e.starts_with("1690 BIGINT UNSIGNED value is out of range"))
        );
    }

    /// Each value checked against MariaDB 10.11 with the same statements.
    #[test]
    fn enum_and_set_columns_behave_as_in_mariadb() {
        let r = run_all("enum", &[
            "CREATE DATABASE d",
            "CREATE TABLE d.e1 (id INT PRIMARY KEY, e ENUM('b','a','c') NOT NULL DEFAULT 'a', s SET('x','y','z'), n ENUM('p','q'))",
            "SHOW CREATE TABLE d.e1",
            "DESCRIBE d.e1",
            "INSERT INTO d.e1 VALUES (1,'c','z,x',NULL),(2,'b','',null),(3,'A','y,x,y','q'),(4, 2, 5, 1)",
            "SELECT id, e, e+0, s, s+0, n, concat(e,'!'), e = 2, e = 'a', find_in_set('x', s), length(e) FROM d.e1 ORDER BY id",
            "SELECT id, e FROM d.e1 ORDER BY e, id",
            "SELECT id, s FROM d.e1 ORDER BY s, id",
            "SELECT id FROM d.e1 WHERE e = 'A' ORDER BY id",
            "SELECT id FROM d.e1 WHERE e > 'a' ORDER BY id",
            "SELECT max(e), min(e), sum(e) FROM d.e1 WHERE e IN (2, 3) OR s IN (3)",
            "INSERT INTO d.e1 VALUES (5,'zz','x',NULL)",
            "INSERT INTO d.e1 (id, s) VALUES (6,'w')",
            "INSERT INTO d.e1 VALUES (7, 0, 0, NULL)",
            "SET sql_mode = ''",
            "INSERT INTO d.e1 VALUES (5,'zz','x,w',NULL)",
            "INSERT INTO d.e1 VALUES (9, 9, 9, 'r')",
            "SELECT id, e, e+0, s, s+0, n, n+0 FROM d.e1 WHERE id IN (5,9) ORDER BY id",
            "SELECT json_array(e, s) FROM d.e1 WHERE id = 1",
            "CREATE TABLE d.x1 (id INT PRIMARY KEY, e ENUM('a','A'))",
            "CREATE TABLE d.x4 (id INT PRIMARY KEY, e ENUM('a','b') DEFAULT 'c')",
            "CREATE TABLE d.x5 (id INT PRIMARY KEY, e ENUM('a ','it''s') NOT NULL)",
            "INSERT INTO d.x5 (id) VALUES (1)",
            "SELECT e, e+0 FROM d.x5",
            "SHOW CREATE TABLE d.x5",
            "CREATE TABLE d.x6 (id INT PRIMARY KEY, s SET('a,b','c'))",
            "UPDATE d.e1 SET e = 'c', s = 'y' WHERE id = 2",
            "SELECT e, s FROM d.e1 WHERE id = 2",
            "SELECT id FROM d.e1 WHERE e BETWEEN 1 AND 2 ORDER BY id",
            "CREATE TABLE d.e2 (id INT PRIMARY KEY, e ENUM('b','a','c'))",
            "INSERT INTO d.e2 VALUES (1,'c'),(2,'b'),(3,'a')",
            "UPDATE d.e2 SET id = id + 10 ORDER BY e LIMIT 1",
            "SELECT id, e FROM d.e2 ORDER BY id",
        ]);
        let create = rows(&r[2]).join("\n");
        assert!(
            create.contains("  `e` enum('b','a','c') NOT NULL DEFAULT 'a',\n  `s` set('x','y','z') DEFAULT NULL,\n  `n` enum('p','q') DEFAULT NULL,"),
            "{create}"
        );
        assert_eq!(
            &rows(&r[3])[1..],
            [
                "e|enum('b','a','c')|NO||a|",
                "s|set('x','y','z')|YES||NULL|",
                "n|enum('p','q')|YES||NULL|"
            ]
        );
        assert_eq!(
            rows(&r[5]),
            [
                "1|c|3|x,z|5|NULL|c!|0|0|1|1",
                "2|b|1||0|NULL|b!|0|0|0|1",
                "3|a|2|x,y|3|q|a!|1|1|1|1",
                "4|a|2|x,z|5|p|a!|1|1|1|1"
            ]
        );
        assert_eq!(rows(&r[6]), ["2|b", "3|a", "4|a", "1|c"]);
        assert_eq!(rows(&r[7]), ["2|", "3|x,y", "1|x,z", "4|x,z"]);
        assert_eq!(rows(&r[8]), ["3", "4"]);
        assert_eq!(rows(&r[9]), ["1", "2"]);
        assert_eq!(rows(&r[10]), ["c|a|7"]);
        let truncated = |c: &str| Err(format!("1265 Data truncated for column '{c}' at row 1"));
        assert_eq!(r[11], truncated("e"));
        assert_eq!(r[12], truncated("s"));
        assert_eq!(r[13], truncated("e"));
        assert_eq!(rows(&r[17]), ["5||0|x|1|NULL|NULL", "9||0|x|1||0"]);
        assert_eq!(rows(&r[18]), ["[\"c\", \"x,z\"]"]);
        assert_eq!(
            r[19],
            Err("1291 Column 'e' has duplicated value 'a' in ENUM".into())
        );
        assert_eq!(r[20], Err("1067 Invalid default value for 'e'".into()));
        assert_eq!(rows(&r[23]), ["a|1"]);
        assert!(
            rows(&r[24])[0].contains("`e` enum('a','it''s') NOT NULL,"),
            "{:?}",
            r[24]
        );
        assert_eq!(
            r[25],
            Err("1367 Illegal set 'a,b' value found during parsing".into())
        );
        assert_eq!(rows(&r[27]), ["c|y"]);
        assert_eq!(rows(&r[28]), ["3", "4"]);
        assert_eq!(rows(&r[32]), ["1|c", "3|a", "12|b"]);
    }
}
