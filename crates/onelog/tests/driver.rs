//! The `mysql_async` driver (a real, widely used Rust client) against the real `onelog` binary:
//! DDL, every column type through server-side prepared statements (binary protocol) and plain
//! queries (text protocol) with exact value round trips, NULLs, transactions (commit,
//! rollback, isolation from a second connection), affected rows / last insert id, and server
//! errors surfaced with their MySQL codes (1062, 1146, 1064).
//!
//! Values read back are normalised to MariaDB's text rendering (a binary DATE/DATETIME/TIME
//! value is formatted by its column's type and fractional digits), so both protocols are held
//! to the same expected strings, which are what MariaDB 10.11 itself prints for these inserts.

mod common;

use mysql_async::consts::ColumnType;
use mysql_async::prelude::*;
use mysql_async::{Conn, Error, OptsBuilder, Row, TxOpts, Value};

use common::Onelog;

async fn connect(port: u16, db: Option<&str>) -> Conn {
    let opts = OptsBuilder::default()
        .ip_or_hostname("127.0.0.1")
        .tcp_port(port)
        .user(Some("root"))
        .db_name(db)
        .prefer_socket(false);
    Conn::new(opts).await.expect("connecting with mysql_async")
}

fn server_code(e: &Error) -> Option<u16> {
    match e {
        Error::Server(s) => Some(s.code),
        _ => None,
    }
}

/// Columns of the all-types table, with the SQL literal inserted into each (text and
/// prepared inserts use the same values) and the text MariaDB prints back.
struct Col {
    name: &'static str,
    ddl: &'static str,
    param: Value,
    text: &'static str,
}

fn col(name: &'static str, ddl: &'static str, param: Value, text: &'static str) -> Col {
    Col {
        name,
        ddl,
        param,
        text,
    }
}

fn columns() -> Vec<Col> {
    let b = |s: &str| Value::Bytes(s.as_bytes().to_vec());
    vec![
        col("c_tiny", "TINYINT", Value::Int(-128), "-128"),
        col("c_utiny", "TINYINT UNSIGNED", Value::UInt(255), "255"),
        col("c_small", "SMALLINT", Value::Int(-32768), "-32768"),
        col("c_usmall", "SMALLINT UNSIGNED", Value::UInt(65535), "65535"),
        col("c_medium", "MEDIUMINT", Value::Int(-8388608), "-8388608"),
        col(
            "c_umedium",
            "MEDIUMINT UNSIGNED",
            Value::UInt(16777215),
            "16777215",
        ),
        col("c_int", "INT", Value::Int(-2147483648), "-2147483648"),
        col(
            "c_uint",
            "INT UNSIGNED",
            Value::UInt(4294967295),
            "4294967295",
        ),
        col(
            "c_big",
            "BIGINT",
            Value::Int(i64::MIN),
            "-9223372036854775808",
        ),
        col(
            "c_ubig",
            "BIGINT UNSIGNED",
            Value::UInt(u64::MAX),
            "18446744073709551615",
        ),
        col("c_float", "FLOAT", Value::Float(1.5), "1.5"),
        col("c_double", "DOUBLE", Value::Double(-2.25), "-2.25"),
        col(
            "c_decimal",
            "DECIMAL(20,6)",
            b("-12345678901234.567891"),
            "-12345678901234.567891",
        ),
        col("c_char", "CHAR(10)", b("h\u{e9}llo"), "h\u{e9}llo"),
        col(
            "c_varchar",
            "VARCHAR(100)",
            b("it's a \\ \"test\" \u{1F600}"),
            "it's a \\ \"test\" \u{1F600}",
        ),
        col(
            "c_binary",
            "BINARY(4)",
            Value::Bytes(vec![0, 1, 2, 255]),
            "",
        ),
        col(
            "c_varbinary",
            "VARBINARY(10)",
            Value::Bytes(vec![0xde, 0xad, 0, 0xbe]),
            "",
        ),
        col("c_text", "TEXT", b(&"0123456789".repeat(100)), ""),
        col(
            "c_blob",
            "BLOB",
            Value::Bytes((0..=255u8).cycle().take(300).collect()),
            "",
        ),
        col(
            "c_date",
            "DATE",
            Value::Date(2024, 2, 29, 0, 0, 0, 0),
            "2024-02-29",
        ),
        col(
            "c_datetime",
            "DATETIME(6)",
            Value::Date(2024, 2, 29, 23, 59, 58, 123456),
            "2024-02-29 23:59:58.123456",
        ),
        col(
            "c_datetime0",
            "DATETIME",
            Value::Date(1999, 12, 31, 1, 2, 3, 0),
            "1999-12-31 01:02:03",
        ),
        col(
            "c_timestamp",
            "TIMESTAMP NULL",
            Value::Date(2024, 1, 1, 0, 0, 1, 0),
            "2024-01-01 00:00:01",
        ),
        col(
            "c_time",
            "TIME",
            Value::Time(true, 34, 22, 59, 59, 0),
            "-838:59:59",
        ),
        col(
            "c_time3",
            "TIME(3)",
            Value::Time(false, 0, 12, 34, 56, 789000),
            "12:34:56.789",
        ),
        col("c_year", "YEAR", Value::Int(2155), "2155"),
    ]
}

/// The exact bytes expected back for a column: `text`, or the parameter's bytes for the
/// binary/text columns whose content is not printable.
fn expected_bytes(c: &Col) -> Vec<u8> {
    match (&c.param, c.ddl) {
        (Value::Bytes(b), "BINARY(4)" | "VARBINARY(10)" | "TEXT" | "BLOB") => b.clone(),
        _ => c.text.as_bytes().to_vec(),
    }
}

/// A value read back, as the bytes MariaDB's text protocol would send for it.
fn as_text(v: &Value, ty: ColumnType, decimals: u8) -> Option<Vec<u8>> {
    let frac = |us: u32| -> String {
        if decimals == 0 || decimals > 6 {
            String::new()
        } else {
            let digits = format!("{us:06}");
            format!(".{}", &digits[..decimals as usize])
        }
    };
    Some(match v {
        Value::NULL => return None,
        Value::Bytes(b) => b.clone(),
        Value::Int(i) => i.to_string().into_bytes(),
        Value::UInt(u) => u.to_string().into_bytes(),
        Value::Float(f) => f.to_string().into_bytes(),
        Value::Double(d) => d.to_string().into_bytes(),
        Value::Date(y, m, d, h, mi, s, us) => {
            if ty == ColumnType::MYSQL_TYPE_DATE {
                format!("{y:04}-{m:02}-{d:02}").into_bytes()
            } else {
                format!("{y:04}-{m:02}-{d:02} {h:02}:{mi:02}:{s:02}{}", frac(*us)).into_bytes()
            }
        }
        Value::Time(neg, days, h, mi, s, us) => {
            let hours = *days * 24 + u32::from(*h);
            format!(
                "{}{hours:02}:{mi:02}:{s:02}{}",
                if *neg { "-" } else { "" },
                frac(*us)
            )
            .into_bytes()
        }
    })
}

fn check_row(row: &Row, cols: &[Col], with_values: bool, what: &str) {
    let meta = row.columns_ref();
    assert_eq!(meta[0].name_str(), "id", "{what}");
    for (i, c) in cols.iter().enumerate() {
        let m = &meta[i + 1];
        assert_eq!(m.name_str(), c.name, "{what}: column name");
        let v = row.as_ref(i + 1).expect("value present");
        let got = as_text(v, m.column_type(), m.decimals());
        let want = with_values.then(|| expected_bytes(c));
        assert_eq!(
            got, want,
            "{what}: column {} ({}) read back {v:?}",
            c.name, c.ddl
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_column_type_round_trips_through_both_protocols() {
    let dir = tempfile::tempdir().unwrap();
    let server = Onelog::start(dir.path(), &[]);
    let mut conn = connect(server.port, None).await;
    conn.query_drop("CREATE DATABASE types").await.unwrap();
    conn.query_drop("USE types").await.unwrap();
    let cols = columns();
    let ddl = cols
        .iter()
        .map(|c| format!("{} {}", c.name, c.ddl))
        .collect::<Vec<_>>()
        .join(", ");
    conn.query_drop(format!(
        "CREATE TABLE t (id INT NOT NULL PRIMARY KEY, {ddl})"
    ))
    .await
    .unwrap();

    let names = cols.iter().map(|c| c.name).collect::<Vec<_>>().join(", ");
    let marks = vec!["?"; cols.len() + 1].join(", ");
    let insert = conn
        .prep(format!("INSERT INTO t (id, {names}) VALUES ({marks})"))
        .await
        .unwrap();
    assert_eq!(insert.num_params() as usize, cols.len() + 1);
    // Row 1: every value; row 2: every column NULL.
    let mut values = vec![Value::Int(1)];
    values.extend(cols.iter().map(|c| c.param.clone()));
    conn.exec_drop(&insert, values).await.unwrap();
    assert_eq!(conn.affected_rows(), 1);
    let mut nulls = vec![Value::Int(2)];
    nulls.extend(cols.iter().map(|_| Value::NULL));
    conn.exec_drop(&insert, nulls).await.unwrap();

    let select = format!("SELECT id, {names} FROM t WHERE id = ?");
    // Binary protocol.
    let row: Row = conn.exec_first(&select, (1,)).await.unwrap().unwrap();
    check_row(&row, &cols, true, "binary protocol, values");
    let row: Row = conn.exec_first(&select, (2,)).await.unwrap().unwrap();
    check_row(&row, &cols, false, "binary protocol, NULLs");
    // Text protocol.
    let rows: Vec<Row> = conn
        .query(format!("SELECT id, {names} FROM t ORDER BY id"))
        .await
        .unwrap();
    assert_eq!(rows.len(), 2);
    check_row(&rows[0], &cols, true, "text protocol, values");
    check_row(&rows[1], &cols, false, "text protocol, NULLs");

    // Prepared statements are reusable and see each execution's parameters.
    let by_int: Vec<(i32, i64)> = conn
        .exec(
            "SELECT id, c_big FROM t WHERE c_int = ? OR id = ? ORDER BY id",
            (-2147483648i64, 2),
        )
        .await
        .unwrap()
        .into_iter()
        .map(|mut r: Row| {
            (
                r.take(0).unwrap(),
                r.take::<Option<i64>, _>(1).unwrap().unwrap_or(0),
            )
        })
        .collect();
    assert_eq!(by_int, vec![(1, i64::MIN), (2, 0)]);
    conn.disconnect().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transactions_commit_rollback_and_isolation() {
    let dir = tempfile::tempdir().unwrap();
    let server = Onelog::start(dir.path(), &[]);
    let mut a = connect(server.port, None).await;
    a.query_drop(
        "CREATE DATABASE bank; CREATE TABLE bank.acct (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, \
         owner VARCHAR(20) NOT NULL, balance BIGINT NOT NULL, UNIQUE KEY by_owner (owner))",
    )
    .await
    .unwrap();
    let mut a = {
        a.disconnect().await.unwrap();
        connect(server.port, Some("bank")).await
    };
    let mut b = connect(server.port, Some("bank")).await;

    a.exec_drop(
        "INSERT INTO acct (owner, balance) VALUES (?, ?), (?, ?)",
        ("ann", 100, "bob", 50),
    )
    .await
    .unwrap();
    assert_eq!(a.affected_rows(), 2);
    assert_eq!(a.last_insert_id(), Some(1));

    // Rollback: nothing stays.
    let mut tx = a.start_transaction(TxOpts::default()).await.unwrap();
    tx.exec_drop(
        "UPDATE acct SET balance = balance - ? WHERE owner = ?",
        (30, "ann"),
    )
    .await
    .unwrap();
    tx.exec_drop(
        "INSERT INTO acct (owner, balance) VALUES (?, ?)",
        ("cid", 1),
    )
    .await
    .unwrap();
    tx.rollback().await.unwrap();
    let rows: Vec<(String, i64)> = b
        .query("SELECT owner, balance FROM acct ORDER BY id")
        .await
        .unwrap();
    assert_eq!(rows, vec![("ann".into(), 100), ("bob".into(), 50)]);

    // Commit: a transfer, invisible to b until committed.
    let mut tx = a.start_transaction(TxOpts::default()).await.unwrap();
    tx.exec_drop(
        "UPDATE acct SET balance = balance - ? WHERE owner = ?",
        (30, "ann"),
    )
    .await
    .unwrap();
    tx.exec_drop(
        "UPDATE acct SET balance = balance + ? WHERE owner = ?",
        (30, "bob"),
    )
    .await
    .unwrap();
    let seen_by_b: Option<i64> = b
        .exec_first("SELECT balance FROM acct WHERE owner = ?", ("ann",))
        .await
        .unwrap();
    assert_eq!(
        seen_by_b,
        Some(100),
        "uncommitted change visible to another session"
    );
    tx.commit().await.unwrap();
    let rows: Vec<(String, i64)> = b
        .query("SELECT owner, balance FROM acct ORDER BY id")
        .await
        .unwrap();
    assert_eq!(rows, vec![("ann".into(), 70), ("bob".into(), 80)]);
    let total: Option<i64> = b
        .query_first("SELECT SUM(balance) FROM acct")
        .await
        .unwrap();
    assert_eq!(total, Some(150));

    a.disconnect().await.unwrap();
    b.disconnect().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_errors_carry_mysql_codes_and_the_connection_survives() {
    let dir = tempfile::tempdir().unwrap();
    let server = Onelog::start(dir.path(), &[]);
    let mut c = connect(server.port, None).await;
    c.query_drop("CREATE DATABASE e; USE e; CREATE TABLE t (id INT PRIMARY KEY, v INT)")
        .await
        .unwrap();
    c.exec_drop("INSERT INTO t VALUES (?, ?)", (1, 1))
        .await
        .unwrap();

    let dup = c
        .exec_drop("INSERT INTO t VALUES (?, ?)", (1, 2))
        .await
        .unwrap_err();
    assert_eq!(server_code(&dup), Some(1062), "{dup}");
    let dup_text = c
        .query_drop("INSERT INTO t VALUES (1, 3)")
        .await
        .unwrap_err();
    assert_eq!(server_code(&dup_text), Some(1062), "{dup_text}");

    let missing = c.query_drop("SELECT * FROM nope").await.unwrap_err();
    assert_eq!(server_code(&missing), Some(1146), "{missing}");
    let missing_prep = c.prep("SELECT * FROM nope WHERE id = ?").await.unwrap_err();
    assert_eq!(server_code(&missing_prep), Some(1146), "{missing_prep}");

    let parse = c.query_drop("SELEKT 1").await.unwrap_err();
    assert_eq!(server_code(&parse), Some(1064), "{parse}");
    let parse_prep = c.prep("INSERT INTO t VALUES (?, ?").await.unwrap_err();
    assert_eq!(server_code(&parse_prep), Some(1064), "{parse_prep}");

    // A failed statement inside a transaction does not end it; the earlier write commits.
    let mut tx = c.start_transaction(TxOpts::default()).await.unwrap();
    tx.exec_drop("INSERT INTO t VALUES (?, ?)", (2, 2))
        .await
        .unwrap();
    let e = tx
        .exec_drop("INSERT INTO t VALUES (?, ?)", (1, 9))
        .await
        .unwrap_err();
    assert_eq!(server_code(&e), Some(1062));
    tx.commit().await.unwrap();
    let rows: Vec<(i32, i32)> = c.query("SELECT id, v FROM t ORDER BY id").await.unwrap();
    assert_eq!(rows, vec![(1, 1), (2, 2)]);
    c.disconnect().await.unwrap();
}
