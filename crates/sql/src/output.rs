//! What statements return: [`Output`] (an OK with its counters, or a result set), the
//! [`Column`] definitions of a result set and [`PreparedInfo`] for COM_STMT_PREPARE. Shared
//! ground: imported by every executor and by the session, importing nothing of theirs.
//!
//! Invariants: a `Rows` output has one value per column in every row (checked where result
//! sets are built, see [`Output::rows`]).

use onelog_binlog::{ColumnType, Value};

#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    Ok {
        affected_rows: u64,
        last_insert_id: u64,
        warnings: u16,
        info: String,
    },
    Rows {
        columns: Vec<Column>,
        rows: Vec<Vec<Value>>,
    },
    Shutdown,
}

impl Output {
    /// The same output, an OK's warning count set to `n` (a result set is unchanged).
    pub(crate) fn with_warning_count(self, n: u16) -> Output {
        match self {
            Output::Ok {
                affected_rows,
                last_insert_id,
                info,
                ..
            } => Output::Ok {
                affected_rows,
                last_insert_id,
                warnings: n,
                info,
            },
            other => other,
        }
    }

    /// A result set; every row has one value per column.
    pub(crate) fn rows(columns: Vec<Column>, rows: Vec<Vec<Value>>) -> Output {
        debug_assert!(
            rows.iter().all(|r| r.len() == columns.len()),
            "a result row's width differs from its {} columns",
            columns.len()
        );
        Output::Rows { columns, rows }
    }

    pub(crate) fn ok() -> Output {
        Output::ok_affected(0)
    }

    /// The OK of ALTER TABLE (other than a lone RENAME), CREATE INDEX and DROP INDEX, with
    /// MariaDB 10.11's info text `Records: 0  Duplicates: 0  Warnings: w` (onelog copies no
    /// rows into a new table, so 0 rows, as MariaDB's in-place and instant changes).
    pub(crate) fn table_altered(warnings: u16) -> Output {
        Output::Ok {
            affected_rows: 0,
            last_insert_id: 0,
            warnings,
            info: format!("Records: 0  Duplicates: 0  Warnings: {warnings}"),
        }
    }

    /// OK with `n` affected rows.
    pub(crate) fn ok_affected(n: u64) -> Output {
        Output::Ok {
            affected_rows: n,
            last_insert_id: 0,
            warnings: 0,
            info: String::new(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    pub name: String,
    pub org_name: String,
    pub table: String,
    pub org_table: String,
    pub db: String,
    pub column_type: ColumnType,
    pub flags: u16,
    pub length: u32,
    pub decimals: u8,
    pub charset: u16,
}

impl Column {
    /// A text column of a computed result set (SHOW ...).
    pub fn new_text(name: &str) -> Column {
        Column {
            name: name.to_string(),
            org_name: name.to_string(),
            table: String::new(),
            org_table: String::new(),
            db: String::new(),
            column_type: ColumnType::VarString,
            flags: 0,
            length: 1024,
            decimals: 39,
            charset: 45,
        }
    }

    /// A BIGINT column of a computed result set.
    pub fn new_int(name: &str) -> Column {
        Column {
            name: name.to_string(),
            org_name: name.to_string(),
            table: String::new(),
            org_table: String::new(),
            db: String::new(),
            column_type: ColumnType::LongLong,
            flags: 128 | 32768,
            length: 21,
            decimals: 0,
            charset: 63,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreparedInfo {
    pub stmt_id: u32,
    pub params: u16,
    pub columns: Vec<Column>,
}
