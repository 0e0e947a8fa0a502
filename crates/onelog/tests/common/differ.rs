//! The comparison half of the differential tests (`differential.rs`: random expressions;
//! `differential_queries.rs`: random schemas, data, queries and DML): a seeded generator, a
//! client connection to each server, one statement's outcome as comparable text (rows,
//! affected-row count, warning codes, or the error code) and the tolerances both tests share
//! for known divergence classes (docs/SQL.md, "Known divergences from MariaDB").
//!
//! Values travel as the text protocol's bytes, so a difference in formatting is a
//! difference; [`numerically_close`] and [`only_conversion_warnings_differ`] are the narrow
//! tolerances the "number formatting and precision" class allows.

use mysql_async::prelude::*;
use mysql_async::{Conn, OptsBuilder, Row, Value};

/// A small deterministic generator (xorshift64*), so no dependency is needed.
pub struct Rng(pub u64);

impl Rng {
    /// A generator for `seed` (any value: zero is remapped, xorshift must not start at 0).
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        debug_assert!(n > 0, "Rng::below(0)");
        (self.next() % n as u64) as usize
    }

    /// True with probability 1/n.
    pub fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }

    pub fn pick<'a, T: ?Sized>(&mut self, xs: &[&'a T]) -> &'a T {
        xs[self.below(xs.len())]
    }
}

/// A connection to onelog over TCP as root.
pub async fn connect_onelog(port: u16) -> Conn {
    Conn::new(
        OptsBuilder::default()
            .ip_or_hostname("127.0.0.1")
            .tcp_port(port)
            .user(Some("root"))
            .prefer_socket(false),
    )
    .await
    .expect("connecting to onelog")
}

/// A connection to MariaDB over its unix socket as root.
pub async fn connect_mariadb(socket: &std::path::Path) -> Conn {
    Conn::new(
        OptsBuilder::default()
            .socket(Some(socket.display().to_string()))
            .user(Some("root")),
    )
    .await
    .expect("connecting to MariaDB")
}

/// A value as the text protocol sent it (None: NULL).
pub fn text(v: &Value) -> Option<String> {
    match v {
        Value::NULL => None,
        Value::Bytes(b) => Some(String::from_utf8_lossy(b).into_owned()),
        other => Some(format!("{other:?}")),
    }
}

/// What a server answered to one statement.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// A result set: its column count, its rows as text, the warning codes.
    Rows {
        columns: usize,
        rows: Vec<Vec<Option<String>>>,
        warnings: Vec<u16>,
    },
    /// An OK packet: affected rows, the info text, the warning codes.
    Done {
        affected: u64,
        info: String,
        warnings: Vec<u16>,
    },
    /// An error packet's code.
    Error(u16),
}

impl Outcome {
    pub fn warnings(&self) -> &[u16] {
        match self {
            Outcome::Rows { warnings, .. } | Outcome::Done { warnings, .. } => warnings,
            Outcome::Error(_) => &[],
        }
    }

    /// The first row's first value of a result set (None: NULL, no row, or no result set).
    pub fn first_value(&self) -> Option<String> {
        match self {
            Outcome::Rows { rows, .. } => rows.first().and_then(|r| r.first()).cloned()?,
            _ => None,
        }
    }
}

/// Runs `sql` (one statement) and returns its outcome; a failure that is not an error packet
/// (a lost connection, a protocol error) panics with the statement.
pub async fn run(conn: &mut Conn, sql: &str) -> Outcome {
    let outcome = match conn.query_iter(sql).await {
        Ok(mut result) => {
            let columns = result.columns_ref().len();
            let rows: Result<Vec<Row>, _> = result.collect().await;
            match rows {
                Ok(rows) if columns > 0 => Outcome::Rows {
                    columns,
                    rows: rows
                        .iter()
                        .map(|r| (0..r.len()).map(|i| r.as_ref(i).and_then(text)).collect())
                        .collect(),
                    warnings: Vec::new(),
                },
                Ok(_) => Outcome::Done {
                    affected: conn.affected_rows(),
                    info: conn.info().into_owned(),
                    warnings: Vec::new(),
                },
                Err(mysql_async::Error::Server(e)) => return Outcome::Error(e.code),
                Err(e) => panic!("{sql}: not a server error: {e}"),
            }
        }
        Err(mysql_async::Error::Server(e)) => return Outcome::Error(e.code),
        Err(e) => panic!("{sql}: not a server error: {e}"),
    };
    // The count comes with the result itself; SHOW WARNINGS only when it is not zero
    // (MariaDB keeps the previous statement's list after a table-less statement that raised
    // nothing).
    let codes: Vec<u16> = if conn.get_warnings() > 0 {
        let w: Vec<Row> = conn.query("SHOW WARNINGS").await.unwrap_or_default();
        w.iter().filter_map(|w| w.get::<u16, _>(1)).collect()
    } else {
        Vec::new()
    };
    match outcome {
        Outcome::Rows { columns, rows, .. } => Outcome::Rows {
            columns,
            rows,
            warnings: codes,
        },
        Outcome::Done { affected, info, .. } => Outcome::Done {
            affected,
            info,
            warnings: codes,
        },
        e => e,
    }
}

/// Numbers equal as decimals once trailing fraction zeros are dropped, or doubles within
/// 1e-9 relative (onelog and MariaDB print doubles with different digit counts).
pub fn numerically_close(a: &str, b: &str) -> bool {
    match (a.parse::<f64>(), b.parse::<f64>()) {
        (Ok(x), Ok(y)) => x == y || (x - y).abs() <= 1e-9 * x.abs().max(y.abs()),
        _ => false,
    }
}

/// Whether two warning lists differ only in conversion conditions (1292 truncated value,
/// 1916 overflow in conversion, 1365 division by zero): MariaDB raises them per conversion it
/// performs, including operands it evaluates to resolve types or that a short-circuit would
/// skip; onelog once per conversion its evaluation performs.
pub fn only_conversion_warnings_differ(m: &[u16], o: &[u16]) -> bool {
    let strip = |a: &[u16]| -> Vec<u16> {
        a.iter()
            .copied()
            .filter(|c| !matches!(c, 1292 | 1916 | 1365))
            .collect()
    };
    strip(m) == strip(o)
}
