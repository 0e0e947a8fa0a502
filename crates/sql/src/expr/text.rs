//! The text of a value: as string functions, LIKE and CONCAT see it ([`text_of`]) and as
//! MariaDB writes a constant inside an error message ([`sql_text`]).
//! DATETIME fractions are shown only when non-zero.
//!
//! Invariants: [`text_of`] is the text MariaDB's string functions see for a value, the same as
//! the text protocol sends for it (`render.rs`).

use onelog_binlog::Value;

/// A value written as SQL text, the way MariaDB prints a constant inside an error message.
pub(crate) fn sql_text(v: &Value) -> String {
    match v {
        Value::Null => "NULL".to_string(),
        Value::Bytes(b) => format!("'{}'", String::from_utf8_lossy(b)),
        Value::Double(d) => render_double(*d),
        other => String::from_utf8_lossy(&text_of(other)).into_owned(),
    }
}

/// A DOUBLE the way MariaDB prints it in an expression (`1e300`, `1.5`).
pub(super) fn render_double(d: f64) -> String {
    crate::render::double_text(d)
}

/// The text form of a value (CONCAT, LIKE, string functions); DATETIME fractions shown only
/// when non-zero.
pub(crate) fn text_of(v: &Value) -> Vec<u8> {
    match v {
        Value::Null => Vec::new(),
        Value::Bytes(b) => b.to_vec(),
        other => crate::render::text_plain(other),
    }
}
