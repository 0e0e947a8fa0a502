//! SQL errors as the client sees them: MySQL error code, SQLSTATE and message.
//!
//! Owns [`SqlError`], its constructors for the errors the SQL layer raises itself (syntax,
//! unknown column/table, unsupported feature, ...) and the conversion from
//! [`EngineError`](onelog_engine::EngineError), which already carries MySQL's code and
//! SQLSTATE. Invariant: every error has a real MariaDB code and its SQLSTATE.

use onelog_protocol::errors;
use std::fmt;

use onelog_engine::EngineError;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqlError {
    pub code: u16,
    pub sqlstate: &'static str,
    pub message: String,
}

impl SqlError {
    /// The error `e` (code and SQLSTATE from `onelog_protocol::errors`) with `message`.
    pub fn of(e: onelog_protocol::ErrorCode, message: impl Into<String>) -> Self {
        SqlError::new(e.code, e.sqlstate, message)
    }

    pub fn new(code: u16, sqlstate: &'static str, message: impl Into<String>) -> Self {
        debug_assert!(
            sqlstate.len() == 5 && sqlstate.bytes().all(|b| b.is_ascii_alphanumeric()),
            "SQLSTATE {sqlstate:?} of error {code}"
        );
        debug_assert!((1000..=9999).contains(&code), "error code {code}");
        SqlError {
            code,
            sqlstate,
            message: message.into(),
        }
    }

    /// 1064 `ER_PARSE_ERROR`, MariaDB's wording; `near` is the text from the error position.
    pub fn syntax(near: &str) -> Self {
        let near: String = near.chars().take(80).collect();
        SqlError::of(errors::ER_PARSE_ERROR,
            format!(
                "You have an error in your SQL syntax; check the manual that corresponds to your MariaDB server version for the right syntax to use near '{near}' at line 1"
            ),
        )
    }

    /// 1235 `ER_NOT_SUPPORTED_YET`.
    pub fn unsupported(what: &str) -> Self {
        SqlError::of(
            errors::ER_NOT_SUPPORTED_YET,
            format!("This version of MariaDB doesn't yet support '{what}'"),
        )
    }

    /// 1054 `ER_BAD_FIELD_ERROR`.
    pub fn unknown_column(name: &str, place: &str) -> Self {
        SqlError::of(
            errors::ER_BAD_FIELD_ERROR,
            format!("Unknown column '{name}' in '{place}'"),
        )
    }

    /// 1146 `ER_NO_SUCH_TABLE`.
    pub fn no_such_table(db: &str, table: &str) -> Self {
        SqlError::of(
            errors::ER_NO_SUCH_TABLE,
            format!("Table '{db}.{table}' doesn't exist"),
        )
    }

    /// 1046 `ER_NO_DB_ERROR`.
    pub fn no_database() -> Self {
        SqlError::of(errors::ER_NO_DB_ERROR, "No database selected")
    }

    /// 1049 `ER_BAD_DB_ERROR`.
    pub fn unknown_database(db: &str) -> Self {
        SqlError::of(errors::ER_BAD_DB_ERROR, format!("Unknown database '{db}'"))
    }

    /// 1305 `ER_SP_DOES_NOT_EXIST` (unknown function).
    pub fn unknown_function(name: &str) -> Self {
        SqlError::of(
            errors::ER_SP_DOES_NOT_EXIST,
            format!("FUNCTION {name} does not exist"),
        )
    }

    /// 1582 `ER_WRONG_PARAMCOUNT_TO_NATIVE_FCT`.
    pub fn param_count(name: &str) -> Self {
        SqlError::of(
            errors::ER_WRONG_PARAMCOUNT_TO_NATIVE_FCT,
            format!("Incorrect parameter count in the call to native function '{name}'"),
        )
    }

    /// 1243 `ER_UNKNOWN_STMT_HANDLER`.
    pub fn unknown_statement(id: u32, what: &str) -> Self {
        SqlError::of(
            errors::ER_UNKNOWN_STMT_HANDLER,
            format!("Unknown prepared statement handler ({id}) given to {what}"),
        )
    }

    /// 1210 `ER_WRONG_ARGUMENTS`.
    pub fn wrong_arguments(what: &str) -> Self {
        SqlError::of(
            errors::ER_WRONG_ARGUMENTS,
            format!("Incorrect arguments to {what}"),
        )
    }

    /// 1052 `ER_NON_UNIQ_ERROR`.
    pub fn ambiguous_column(name: &str, place: &str) -> Self {
        SqlError::of(
            errors::ER_NON_UNIQ_ERROR,
            format!("Column '{name}' in {place} is ambiguous"),
        )
    }

    /// 1054 or 1052: an error of resolving a name (which clause's comes first follows
    /// MariaDB's resolution order, so the planners hold these back).
    pub(crate) fn is_name_error(&self) -> bool {
        self.code == errors::ER_BAD_FIELD_ERROR.code || self.code == errors::ER_NON_UNIQ_ERROR.code
    }

    /// 1111 `ER_INVALID_GROUP_FUNC_USE`.
    pub fn invalid_group_use() -> Self {
        SqlError::of(
            errors::ER_INVALID_GROUP_FUNC_USE,
            "Invalid use of group function",
        )
    }

    /// 1365 `ER_DIVISION_BY_ZERO` is a warning by default; errors from it are not raised.
    /// 1292 `ER_TRUNCATED_WRONG_VALUE`.
    pub fn truncated_wrong_value(kind: &str, value: &str) -> Self {
        SqlError::of(
            errors::ER_TRUNCATED_WRONG_VALUE,
            format!("Incorrect {kind} value: '{value}'"),
        )
    }

    /// Internal failures that are a bug, reported as 1105 `ER_UNKNOWN_ERROR`.
    pub fn internal(msg: impl Into<String>) -> Self {
        SqlError::of(errors::ER_UNKNOWN_ERROR, msg)
    }
}

impl From<EngineError> for SqlError {
    fn from(e: EngineError) -> Self {
        SqlError::new(e.code(), e.sqlstate(), e.to_string())
    }
}

impl fmt::Display for SqlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "ERROR {} ({}): {}",
            self.code, self.sqlstate, self.message
        )
    }
}

impl std::error::Error for SqlError {}

/// `msg` with a trailing " at row 1" naming `row` instead.
pub(crate) fn with_row(msg: &str, row: u64) -> String {
    match msg.strip_suffix(" at row 1") {
        Some(head) if row != 1 => format!("{head} at row {row}"),
        _ => msg.to_string(),
    }
}
