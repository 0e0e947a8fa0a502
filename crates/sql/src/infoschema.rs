//! The `information_schema` tables onelog serves: read-only virtual tables computed from the
//! catalog, the accounts and the server when a statement reads them (`FROM
//! information_schema.tables`, or `FROM tables` after `USE information_schema`), with
//! MariaDB 10.11's table and column names, column order and types (display widths included).
//!
//! Owns [`InfoTable`] (which tables exist: [`SERVED`], [`InfoTable::named`]), each table's
//! column definitions ([`InfoTable::columns`], [`InfoTable::table_def`] for SHOW COLUMNS) and
//! its rows for a session ([`InfoTable::rows`]), and SHOW TABLES FROM information_schema
//! ([`show_tables`]). The list of tables served is in docs/SQL.md (*information_schema*); any
//! other name is MariaDB's 1109 `Unknown table 'x' in information_schema`. A new table is a
//! variant, its place in [`SERVED`], its name, columns and rows here.
//!
//! Invariants: every row has exactly as many values as its table has columns (asserted in
//! debug builds). Privilege filtering is MariaDB's: the tables about objects (TABLES,
//! COLUMNS, VIEWS, constraints, STATISTICS, PARTITIONS) show the databases the session holds
//! some privilege on (as SHOW TABLES); SCHEMATA those SHOW DATABASES lists; PROCESSLIST a
//! session's own connections without PROCESS; USER_/SCHEMA_PRIVILEGES the session's own
//! account without SELECT on `mysql`; the `INNODB_*` tables need PROCESS (1227). Rows come
//! ordered by database (TABLES and COLUMNS first describe information_schema's own tables,
//! as MariaDB), then table name, then (within a table) MariaDB's order: primary key,
//! unique keys in index order, checks, foreign keys by name. What onelog does not know
//! (InnoDB's statistics: row counts, lengths, times) is NULL, or 0 in a NOT NULL column.
//!
//! Called by `plan::select::subquery` (a FROM table of information_schema becomes a derived
//! table with these columns), `execute::subquery` (which materializes the rows) and
//! `execute::admin::show` (SHOW TABLES, SHOW COLUMNS).

use std::sync::Arc;

use onelog_binlog::Value;
use onelog_engine::collation::Collation;
use onelog_engine::{
    AccountDef, Catalog, ColumnDef, ColumnExtras, ForeignKeyDef, SqlType, TableDef, ViewCheck,
    ViewDef,
};
use onelog_protocol::errors;

use crate::context::ExecContext;
use crate::error::SqlError;
use crate::execute::admin::show;
use crate::mysqlschema::{self, MysqlTable};
use crate::privilege::{GRANT_OPTION, NAMES, PROCESS, SELECT};

/// The database name and its test (`schema_names`, a leaf the session also reads).
pub(crate) use crate::schema_names::{
    is_information_schema as is_database, INFORMATION_SCHEMA as DATABASE,
};

/// An `information_schema` table onelog serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum InfoTable {
    CharacterSets,
    CheckConstraints,
    Collations,
    Columns,
    ColumnPrivileges,
    Engines,
    Events,
    GlobalStatus,
    GlobalVariables,
    KeyColumnUsage,
    Parameters,
    Partitions,
    Processlist,
    ReferentialConstraints,
    Routines,
    Schemata,
    SchemaPrivileges,
    SessionStatus,
    SessionVariables,
    Statistics,
    SystemVariables,
    Tables,
    TableConstraints,
    TablePrivileges,
    Triggers,
    UserPrivileges,
    Views,
    InnodbCmp,
    InnodbCmpReset,
    InnodbCmpmem,
    InnodbCmpmemReset,
}

/// A column's type in MariaDB's `information_schema` (all strings are utf8 general_ci); the
/// integers carry the display width MariaDB shows (`bigint(21) unsigned`).
#[derive(Clone, Copy)]
enum Ty {
    /// VARCHAR(n).
    Str(u32),
    /// BIGINT(w) UNSIGNED.
    U64(u16),
    /// BIGINT(w).
    I64(u16),
    /// INT(w) UNSIGNED.
    U32(u16),
    /// INT(w).
    I32(u16),
    /// TINYINT(w).
    I8(u16),
    /// DECIMAL(p, s).
    Dec(u8, u8),
    LongText,
    Blob,
    /// DATETIME(fsp).
    DateTime(u8),
}

/// (name, type, nullable)
type Col = (&'static str, Ty, bool);

/// Every table served, in the order SHOW TABLES FROM information_schema lists them
/// (MariaDB 10.11's).
const SERVED: &[InfoTable] = &[
    InfoTable::CharacterSets,
    InfoTable::CheckConstraints,
    InfoTable::Collations,
    InfoTable::Columns,
    InfoTable::ColumnPrivileges,
    InfoTable::Engines,
    InfoTable::Events,
    InfoTable::GlobalStatus,
    InfoTable::GlobalVariables,
    InfoTable::KeyColumnUsage,
    InfoTable::Parameters,
    InfoTable::Partitions,
    InfoTable::Processlist,
    InfoTable::ReferentialConstraints,
    InfoTable::Routines,
    InfoTable::Schemata,
    InfoTable::SchemaPrivileges,
    InfoTable::SessionStatus,
    InfoTable::SessionVariables,
    InfoTable::Statistics,
    InfoTable::SystemVariables,
    InfoTable::Tables,
    InfoTable::TableConstraints,
    InfoTable::TablePrivileges,
    InfoTable::Triggers,
    InfoTable::UserPrivileges,
    InfoTable::Views,
    InfoTable::InnodbCmp,
    InfoTable::InnodbCmpReset,
    InfoTable::InnodbCmpmem,
    InfoTable::InnodbCmpmemReset,
];

const TABLES: &[Col] = &[
    ("TABLE_CATALOG", Ty::Str(512), false),
    ("TABLE_SCHEMA", Ty::Str(64), false),
    ("TABLE_NAME", Ty::Str(64), false),
    ("TABLE_TYPE", Ty::Str(64), false),
    ("ENGINE", Ty::Str(64), true),
    ("VERSION", Ty::U64(21), true),
    ("ROW_FORMAT", Ty::Str(10), true),
    ("TABLE_ROWS", Ty::U64(21), true),
    ("AVG_ROW_LENGTH", Ty::U64(21), true),
    ("DATA_LENGTH", Ty::U64(21), true),
    ("MAX_DATA_LENGTH", Ty::U64(21), true),
    ("INDEX_LENGTH", Ty::U64(21), true),
    ("DATA_FREE", Ty::U64(21), true),
    ("AUTO_INCREMENT", Ty::U64(21), true),
    ("CREATE_TIME", Ty::DateTime(0), true),
    ("UPDATE_TIME", Ty::DateTime(0), true),
    ("CHECK_TIME", Ty::DateTime(0), true),
    ("TABLE_COLLATION", Ty::Str(64), true),
    ("CHECKSUM", Ty::U64(21), true),
    ("CREATE_OPTIONS", Ty::Str(2048), true),
    ("TABLE_COMMENT", Ty::Str(2048), false),
    ("MAX_INDEX_LENGTH", Ty::U64(21), true),
    ("TEMPORARY", Ty::Str(1), true),
];

const COLUMNS: &[Col] = &[
    ("TABLE_CATALOG", Ty::Str(512), false),
    ("TABLE_SCHEMA", Ty::Str(64), false),
    ("TABLE_NAME", Ty::Str(64), false),
    ("COLUMN_NAME", Ty::Str(64), false),
    ("ORDINAL_POSITION", Ty::U64(21), false),
    ("COLUMN_DEFAULT", Ty::LongText, true),
    ("IS_NULLABLE", Ty::Str(3), false),
    ("DATA_TYPE", Ty::Str(64), false),
    ("CHARACTER_MAXIMUM_LENGTH", Ty::U64(21), true),
    ("CHARACTER_OCTET_LENGTH", Ty::U64(21), true),
    ("NUMERIC_PRECISION", Ty::U64(21), true),
    ("NUMERIC_SCALE", Ty::U64(21), true),
    ("DATETIME_PRECISION", Ty::U64(21), true),
    ("CHARACTER_SET_NAME", Ty::Str(32), true),
    ("COLLATION_NAME", Ty::Str(64), true),
    ("COLUMN_TYPE", Ty::LongText, false),
    ("COLUMN_KEY", Ty::Str(3), false),
    ("EXTRA", Ty::Str(80), false),
    ("PRIVILEGES", Ty::Str(80), false),
    ("COLUMN_COMMENT", Ty::Str(1024), false),
    ("IS_GENERATED", Ty::Str(6), false),
    ("GENERATION_EXPRESSION", Ty::LongText, true),
];

const TABLE_CONSTRAINTS: &[Col] = &[
    ("CONSTRAINT_CATALOG", Ty::Str(512), false),
    ("CONSTRAINT_SCHEMA", Ty::Str(64), false),
    ("CONSTRAINT_NAME", Ty::Str(64), false),
    ("TABLE_SCHEMA", Ty::Str(64), false),
    ("TABLE_NAME", Ty::Str(64), false),
    ("CONSTRAINT_TYPE", Ty::Str(64), false),
];

const KEY_COLUMN_USAGE: &[Col] = &[
    ("CONSTRAINT_CATALOG", Ty::Str(512), false),
    ("CONSTRAINT_SCHEMA", Ty::Str(64), false),
    ("CONSTRAINT_NAME", Ty::Str(64), false),
    ("TABLE_CATALOG", Ty::Str(512), false),
    ("TABLE_SCHEMA", Ty::Str(64), false),
    ("TABLE_NAME", Ty::Str(64), false),
    ("COLUMN_NAME", Ty::Str(64), false),
    ("ORDINAL_POSITION", Ty::I64(10), false),
    ("POSITION_IN_UNIQUE_CONSTRAINT", Ty::I64(10), true),
    ("REFERENCED_TABLE_SCHEMA", Ty::Str(64), true),
    ("REFERENCED_TABLE_NAME", Ty::Str(64), true),
    ("REFERENCED_COLUMN_NAME", Ty::Str(64), true),
];

const REFERENTIAL_CONSTRAINTS: &[Col] = &[
    ("CONSTRAINT_CATALOG", Ty::Str(512), false),
    ("CONSTRAINT_SCHEMA", Ty::Str(64), false),
    ("CONSTRAINT_NAME", Ty::Str(64), false),
    ("UNIQUE_CONSTRAINT_CATALOG", Ty::Str(512), false),
    ("UNIQUE_CONSTRAINT_SCHEMA", Ty::Str(64), false),
    ("UNIQUE_CONSTRAINT_NAME", Ty::Str(64), true),
    ("MATCH_OPTION", Ty::Str(64), false),
    ("UPDATE_RULE", Ty::Str(64), false),
    ("DELETE_RULE", Ty::Str(64), false),
    ("TABLE_NAME", Ty::Str(64), false),
    ("REFERENCED_TABLE_NAME", Ty::Str(64), true),
];

const CHECK_CONSTRAINTS: &[Col] = &[
    ("CONSTRAINT_CATALOG", Ty::Str(512), false),
    ("CONSTRAINT_SCHEMA", Ty::Str(64), false),
    ("TABLE_NAME", Ty::Str(64), false),
    ("CONSTRAINT_NAME", Ty::Str(64), false),
    ("LEVEL", Ty::Str(6), false),
    ("CHECK_CLAUSE", Ty::LongText, false),
];

const STATISTICS: &[Col] = &[
    ("TABLE_CATALOG", Ty::Str(512), false),
    ("TABLE_SCHEMA", Ty::Str(64), false),
    ("TABLE_NAME", Ty::Str(64), false),
    ("NON_UNIQUE", Ty::I64(1), false),
    ("INDEX_SCHEMA", Ty::Str(64), false),
    ("INDEX_NAME", Ty::Str(64), false),
    ("SEQ_IN_INDEX", Ty::U32(2), false),
    ("COLUMN_NAME", Ty::Str(64), false),
    ("COLLATION", Ty::Str(1), true),
    ("CARDINALITY", Ty::I64(21), true),
    ("SUB_PART", Ty::I64(3), true),
    ("PACKED", Ty::Str(10), true),
    ("NULLABLE", Ty::Str(3), false),
    ("INDEX_TYPE", Ty::Str(16), false),
    ("COMMENT", Ty::Str(16), true),
    ("INDEX_COMMENT", Ty::Str(1024), false),
    ("IGNORED", Ty::Str(3), false),
];

const SCHEMATA: &[Col] = &[
    ("CATALOG_NAME", Ty::Str(512), false),
    ("SCHEMA_NAME", Ty::Str(64), false),
    ("DEFAULT_CHARACTER_SET_NAME", Ty::Str(32), false),
    ("DEFAULT_COLLATION_NAME", Ty::Str(64), false),
    ("SQL_PATH", Ty::Str(512), true),
    ("SCHEMA_COMMENT", Ty::Str(1024), false),
];

const VIEWS: &[Col] = &[
    ("TABLE_CATALOG", Ty::Str(512), false),
    ("TABLE_SCHEMA", Ty::Str(64), false),
    ("TABLE_NAME", Ty::Str(64), false),
    ("VIEW_DEFINITION", Ty::LongText, false),
    ("CHECK_OPTION", Ty::Str(8), false),
    ("IS_UPDATABLE", Ty::Str(3), false),
    ("DEFINER", Ty::Str(384), false),
    ("SECURITY_TYPE", Ty::Str(7), false),
    ("CHARACTER_SET_CLIENT", Ty::Str(32), false),
    ("COLLATION_CONNECTION", Ty::Str(64), false),
    ("ALGORITHM", Ty::Str(10), false),
];

const ROUTINES: &[Col] = &[
    ("SPECIFIC_NAME", Ty::Str(64), false),
    ("ROUTINE_CATALOG", Ty::Str(512), false),
    ("ROUTINE_SCHEMA", Ty::Str(64), false),
    ("ROUTINE_NAME", Ty::Str(64), false),
    ("ROUTINE_TYPE", Ty::Str(13), false),
    ("DATA_TYPE", Ty::Str(64), false),
    ("CHARACTER_MAXIMUM_LENGTH", Ty::I32(21), true),
    ("CHARACTER_OCTET_LENGTH", Ty::I32(21), true),
    ("NUMERIC_PRECISION", Ty::I32(21), true),
    ("NUMERIC_SCALE", Ty::I32(21), true),
    ("DATETIME_PRECISION", Ty::U64(21), true),
    ("CHARACTER_SET_NAME", Ty::Str(64), true),
    ("COLLATION_NAME", Ty::Str(64), true),
    ("DTD_IDENTIFIER", Ty::LongText, true),
    ("ROUTINE_BODY", Ty::Str(8), false),
    ("ROUTINE_DEFINITION", Ty::LongText, true),
    ("EXTERNAL_NAME", Ty::Str(64), true),
    ("EXTERNAL_LANGUAGE", Ty::Str(64), true),
    ("PARAMETER_STYLE", Ty::Str(8), false),
    ("IS_DETERMINISTIC", Ty::Str(3), false),
    ("SQL_DATA_ACCESS", Ty::Str(64), false),
    ("SQL_PATH", Ty::Str(64), true),
    ("SECURITY_TYPE", Ty::Str(7), false),
    ("CREATED", Ty::DateTime(0), false),
    ("LAST_ALTERED", Ty::DateTime(0), false),
    ("SQL_MODE", Ty::Str(8192), false),
    ("ROUTINE_COMMENT", Ty::LongText, false),
    ("DEFINER", Ty::Str(384), false),
    ("CHARACTER_SET_CLIENT", Ty::Str(32), false),
    ("COLLATION_CONNECTION", Ty::Str(64), false),
    ("DATABASE_COLLATION", Ty::Str(64), false),
];

const TRIGGERS: &[Col] = &[
    ("TRIGGER_CATALOG", Ty::Str(512), false),
    ("TRIGGER_SCHEMA", Ty::Str(64), false),
    ("TRIGGER_NAME", Ty::Str(64), false),
    ("EVENT_MANIPULATION", Ty::Str(6), false),
    ("EVENT_OBJECT_CATALOG", Ty::Str(512), false),
    ("EVENT_OBJECT_SCHEMA", Ty::Str(64), false),
    ("EVENT_OBJECT_TABLE", Ty::Str(64), false),
    ("ACTION_ORDER", Ty::I64(4), false),
    ("ACTION_CONDITION", Ty::LongText, true),
    ("ACTION_STATEMENT", Ty::LongText, false),
    ("ACTION_ORIENTATION", Ty::Str(9), false),
    ("ACTION_TIMING", Ty::Str(6), false),
    ("ACTION_REFERENCE_OLD_TABLE", Ty::Str(64), true),
    ("ACTION_REFERENCE_NEW_TABLE", Ty::Str(64), true),
    ("ACTION_REFERENCE_OLD_ROW", Ty::Str(3), false),
    ("ACTION_REFERENCE_NEW_ROW", Ty::Str(3), false),
    ("CREATED", Ty::DateTime(2), true),
    ("SQL_MODE", Ty::Str(8192), false),
    ("DEFINER", Ty::Str(384), false),
    ("CHARACTER_SET_CLIENT", Ty::Str(32), false),
    ("COLLATION_CONNECTION", Ty::Str(64), false),
    ("DATABASE_COLLATION", Ty::Str(64), false),
];

const EVENTS: &[Col] = &[
    ("EVENT_CATALOG", Ty::Str(64), false),
    ("EVENT_SCHEMA", Ty::Str(64), false),
    ("EVENT_NAME", Ty::Str(64), false),
    ("DEFINER", Ty::Str(384), false),
    ("TIME_ZONE", Ty::Str(64), false),
    ("EVENT_BODY", Ty::Str(8), false),
    ("EVENT_DEFINITION", Ty::LongText, false),
    ("EVENT_TYPE", Ty::Str(9), false),
    ("EXECUTE_AT", Ty::DateTime(0), true),
    ("INTERVAL_VALUE", Ty::Str(256), true),
    ("INTERVAL_FIELD", Ty::Str(18), true),
    ("SQL_MODE", Ty::Str(8192), false),
    ("STARTS", Ty::DateTime(0), true),
    ("ENDS", Ty::DateTime(0), true),
    ("STATUS", Ty::Str(18), false),
    ("ON_COMPLETION", Ty::Str(12), false),
    ("CREATED", Ty::DateTime(0), false),
    ("LAST_ALTERED", Ty::DateTime(0), false),
    ("LAST_EXECUTED", Ty::DateTime(0), true),
    ("EVENT_COMMENT", Ty::Str(64), false),
    ("ORIGINATOR", Ty::I64(10), false),
    ("CHARACTER_SET_CLIENT", Ty::Str(32), false),
    ("COLLATION_CONNECTION", Ty::Str(64), false),
    ("DATABASE_COLLATION", Ty::Str(64), false),
];

const PARAMETERS: &[Col] = &[
    ("SPECIFIC_CATALOG", Ty::Str(512), false),
    ("SPECIFIC_SCHEMA", Ty::Str(64), false),
    ("SPECIFIC_NAME", Ty::Str(64), false),
    ("ORDINAL_POSITION", Ty::I32(21), false),
    ("PARAMETER_MODE", Ty::Str(5), true),
    ("PARAMETER_NAME", Ty::Str(64), true),
    ("DATA_TYPE", Ty::Str(64), false),
    ("CHARACTER_MAXIMUM_LENGTH", Ty::I32(21), true),
    ("CHARACTER_OCTET_LENGTH", Ty::I32(21), true),
    ("NUMERIC_PRECISION", Ty::I32(21), true),
    ("NUMERIC_SCALE", Ty::I32(21), true),
    ("DATETIME_PRECISION", Ty::U64(21), true),
    ("CHARACTER_SET_NAME", Ty::Str(64), true),
    ("COLLATION_NAME", Ty::Str(64), true),
    ("DTD_IDENTIFIER", Ty::LongText, false),
    ("ROUTINE_TYPE", Ty::Str(9), false),
];

const ENGINES: &[Col] = &[
    ("ENGINE", Ty::Str(64), false),
    ("SUPPORT", Ty::Str(8), false),
    ("COMMENT", Ty::Str(160), false),
    ("TRANSACTIONS", Ty::Str(3), true),
    ("XA", Ty::Str(3), true),
    ("SAVEPOINTS", Ty::Str(3), true),
];

const CHARACTER_SETS: &[Col] = &[
    ("CHARACTER_SET_NAME", Ty::Str(32), false),
    ("DEFAULT_COLLATE_NAME", Ty::Str(64), false),
    ("DESCRIPTION", Ty::Str(60), false),
    ("MAXLEN", Ty::I64(3), false),
];

const COLLATIONS: &[Col] = &[
    ("COLLATION_NAME", Ty::Str(64), false),
    ("CHARACTER_SET_NAME", Ty::Str(32), true),
    ("ID", Ty::I64(11), true),
    ("IS_DEFAULT", Ty::Str(3), true),
    ("IS_COMPILED", Ty::Str(3), false),
    ("SORTLEN", Ty::I64(3), false),
];

const PROCESSLIST: &[Col] = &[
    ("ID", Ty::I64(4), false),
    ("USER", Ty::Str(128), false),
    ("HOST", Ty::Str(64), false),
    ("DB", Ty::Str(64), true),
    ("COMMAND", Ty::Str(16), false),
    ("TIME", Ty::I32(7), false),
    ("STATE", Ty::Str(64), true),
    ("INFO", Ty::LongText, true),
    ("TIME_MS", Ty::Dec(22, 3), false),
    ("STAGE", Ty::I8(2), false),
    ("MAX_STAGE", Ty::I8(2), false),
    ("PROGRESS", Ty::Dec(7, 3), false),
    ("MEMORY_USED", Ty::I64(7), false),
    ("MAX_MEMORY_USED", Ty::I64(7), false),
    ("EXAMINED_ROWS", Ty::I32(7), false),
    ("QUERY_ID", Ty::I64(4), false),
    ("INFO_BINARY", Ty::Blob, true),
    ("TID", Ty::I64(4), false),
];

/// SYSTEM_VARIABLES (rows: `sysvar::info`).
const SYSTEM_VARIABLES: &[Col] = &[
    ("VARIABLE_NAME", Ty::Str(64), false),
    ("SESSION_VALUE", Ty::Str(2048), true),
    ("GLOBAL_VALUE", Ty::Str(2048), true),
    ("GLOBAL_VALUE_ORIGIN", Ty::Str(64), false),
    ("DEFAULT_VALUE", Ty::Str(2048), true),
    ("VARIABLE_SCOPE", Ty::Str(64), false),
    ("VARIABLE_TYPE", Ty::Str(64), false),
    ("VARIABLE_COMMENT", Ty::Str(2048), false),
    ("NUMERIC_MIN_VALUE", Ty::Str(21), true),
    ("NUMERIC_MAX_VALUE", Ty::Str(21), true),
    ("NUMERIC_BLOCK_SIZE", Ty::Str(21), true),
    ("ENUM_VALUE_LIST", Ty::LongText, true),
    ("READ_ONLY", Ty::Str(3), false),
    ("COMMAND_LINE_ARGUMENT", Ty::Str(64), true),
    ("GLOBAL_VALUE_PATH", Ty::Str(2048), true),
];

/// GLOBAL_/SESSION_VARIABLES and GLOBAL_/SESSION_STATUS.
const VARIABLES: &[Col] = &[
    ("VARIABLE_NAME", Ty::Str(64), false),
    ("VARIABLE_VALUE", Ty::Str(4096), false),
];

const PARTITIONS: &[Col] = &[
    ("TABLE_CATALOG", Ty::Str(512), false),
    ("TABLE_SCHEMA", Ty::Str(64), false),
    ("TABLE_NAME", Ty::Str(64), false),
    ("PARTITION_NAME", Ty::Str(64), true),
    ("SUBPARTITION_NAME", Ty::Str(64), true),
    ("PARTITION_ORDINAL_POSITION", Ty::U64(21), true),
    ("SUBPARTITION_ORDINAL_POSITION", Ty::U64(21), true),
    ("PARTITION_METHOD", Ty::Str(18), true),
    ("SUBPARTITION_METHOD", Ty::Str(12), true),
    ("PARTITION_EXPRESSION", Ty::LongText, true),
    ("SUBPARTITION_EXPRESSION", Ty::LongText, true),
    ("PARTITION_DESCRIPTION", Ty::LongText, true),
    ("TABLE_ROWS", Ty::U64(21), false),
    ("AVG_ROW_LENGTH", Ty::U64(21), false),
    ("DATA_LENGTH", Ty::U64(21), false),
    ("MAX_DATA_LENGTH", Ty::U64(21), true),
    ("INDEX_LENGTH", Ty::U64(21), false),
    ("DATA_FREE", Ty::U64(21), false),
    ("CREATE_TIME", Ty::DateTime(0), true),
    ("UPDATE_TIME", Ty::DateTime(0), true),
    ("CHECK_TIME", Ty::DateTime(0), true),
    ("CHECKSUM", Ty::U64(21), true),
    ("PARTITION_COMMENT", Ty::Str(80), false),
    ("NODEGROUP", Ty::Str(12), false),
    ("TABLESPACE_NAME", Ty::Str(64), true),
];

const USER_PRIVILEGES: &[Col] = &[
    ("GRANTEE", Ty::Str(385), false),
    ("TABLE_CATALOG", Ty::Str(512), false),
    ("PRIVILEGE_TYPE", Ty::Str(64), false),
    ("IS_GRANTABLE", Ty::Str(3), false),
];

const SCHEMA_PRIVILEGES: &[Col] = &[
    ("GRANTEE", Ty::Str(385), false),
    ("TABLE_CATALOG", Ty::Str(512), false),
    ("TABLE_SCHEMA", Ty::Str(64), false),
    ("PRIVILEGE_TYPE", Ty::Str(64), false),
    ("IS_GRANTABLE", Ty::Str(3), false),
];

const TABLE_PRIVILEGES: &[Col] = &[
    ("GRANTEE", Ty::Str(385), false),
    ("TABLE_CATALOG", Ty::Str(512), false),
    ("TABLE_SCHEMA", Ty::Str(64), false),
    ("TABLE_NAME", Ty::Str(64), false),
    ("PRIVILEGE_TYPE", Ty::Str(64), false),
    ("IS_GRANTABLE", Ty::Str(3), false),
];

const COLUMN_PRIVILEGES: &[Col] = &[
    ("GRANTEE", Ty::Str(385), false),
    ("TABLE_CATALOG", Ty::Str(512), false),
    ("TABLE_SCHEMA", Ty::Str(64), false),
    ("TABLE_NAME", Ty::Str(64), false),
    ("COLUMN_NAME", Ty::Str(64), false),
    ("PRIVILEGE_TYPE", Ty::Str(64), false),
    ("IS_GRANTABLE", Ty::Str(3), false),
];

/// INNODB_CMP and INNODB_CMP_RESET.
const INNODB_CMP: &[Col] = &[
    ("page_size", Ty::I32(5), false),
    ("compress_ops", Ty::I32(11), false),
    ("compress_ops_ok", Ty::I32(11), false),
    ("compress_time", Ty::I32(11), false),
    ("uncompress_ops", Ty::I32(11), false),
    ("uncompress_time", Ty::I32(11), false),
];

/// INNODB_CMPMEM and INNODB_CMPMEM_RESET.
const INNODB_CMPMEM: &[Col] = &[
    ("page_size", Ty::I32(5), false),
    ("buffer_pool_instance", Ty::I32(11), false),
    ("pages_used", Ty::I32(11), false),
    ("pages_free", Ty::I32(11), false),
    ("relocation_ops", Ty::I64(21), false),
    ("relocation_time", Ty::I32(11), false),
];

/// The names SHOW TABLES FROM information_schema lists, in MariaDB's order.
pub(crate) fn table_names() -> impl Iterator<Item = &'static str> {
    SERVED.iter().map(|t| t.name())
}

/// SHOW [FULL] TABLES FROM information_schema (or in it): the title and rows (the served
/// tables, Table_type `SYSTEM VIEW`); None for another database.
pub(crate) fn show_tables(
    cx: &ExecContext,
    full: bool,
    db: Option<&str>,
) -> Option<(String, Vec<Vec<Value>>)> {
    if !db.or(cx.current_db.as_deref()).is_some_and(is_database) {
        return None;
    }
    let rows = table_names()
        .map(|n| {
            let mut r = vec![text(n)];
            if full {
                r.push(text("SYSTEM VIEW"));
            }
            r
        })
        .collect();
    Some((format!("Tables_in_{DATABASE}"), rows))
}

/// TABLES' rows for information_schema's own tables, as MariaDB fills them (`SYSTEM VIEW`,
/// a temporary MEMORY or Aria table); the statistics and CREATE_OPTIONS MariaDB computes for
/// its in-memory copy are NULL.
fn own_table_rows(out: &mut Vec<Vec<Value>>) {
    for t in SERVED {
        let (engine, format) = if t.is_aria() {
            ("Aria", "Page")
        } else {
            ("MEMORY", "Fixed")
        };
        let mut r = vec![text("def"), text(DATABASE), text(t.name())];
        r.extend([
            text("SYSTEM VIEW"),
            text(engine),
            Value::UInt(11),
            text(format),
        ]);
        r.extend(std::iter::repeat_n(Value::Null, 10));
        r.extend([
            text("utf8mb3_general_ci"),
            Value::Null,
            Value::Null,
            text(""),
        ]);
        r.extend([Value::Null, text("Y")]);
        out.push(r);
    }
}

/// COLUMNS' rows for information_schema's own columns, as MariaDB fills them: strings in
/// utf8mb3 (3 bytes a character), PRIVILEGES `select`.
fn own_column_rows(out: &mut Vec<Vec<Value>>) {
    for t in SERVED {
        let start = out.len();
        column_rows(&t.table_def(), out);
        for r in &mut out[start..] {
            if r[13] != Value::Null {
                if let (Value::UInt(n), Ty::Str(_)) = (&r[8], t.spec()[col_index(r)].1) {
                    r[9] = Value::UInt(n * 3);
                }
                r[13] = text("utf8mb3");
                r[14] = text("utf8mb3_general_ci");
            }
            r[18] = text("select");
        }
    }
}

/// The 0-based position of a COLUMNS row's column (its ORDINAL_POSITION less one).
fn col_index(r: &[Value]) -> usize {
    match r[4] {
        Value::UInt(p) => (p as usize).saturating_sub(1),
        _ => 0,
    }
}

/// SHOW CREATE TABLE of an information_schema table (`db` None: the current database), as
/// MariaDB prints it: a TEMPORARY table, MEMORY (Aria when it has a text or blob column);
/// None for another database.
pub(crate) fn show_create_table(
    cx: &ExecContext,
    db: Option<&str>,
    table: &str,
) -> Option<Result<(String, String), SqlError>> {
    if !db.or(cx.current_db.as_deref()).is_some_and(is_database) {
        return None;
    }
    let t = match InfoTable::named(table) {
        Ok(t) => t,
        Err(e) => return Some(Err(e)),
    };
    let columns: Vec<String> = t
        .columns()
        .iter()
        .map(|c| {
            let null = if c.nullable { "" } else { " NOT NULL" };
            format!("  `{}` {}{null}", c.name, show::column_type_text(c))
        })
        .collect();
    let engine = if t.is_aria() {
        "Aria DEFAULT CHARSET=utf8mb3 COLLATE=utf8mb3_general_ci PAGE_CHECKSUM=0"
    } else {
        "MEMORY DEFAULT CHARSET=utf8mb3 COLLATE=utf8mb3_general_ci"
    };
    let sql = format!(
        "CREATE TEMPORARY TABLE `{}` (\n{}\n) ENGINE={engine}",
        t.name(),
        columns.join(",\n")
    );
    Some(Ok((t.name().to_string(), sql)))
}

/// SHOW FULL COLUMNS' rows of an information_schema table `t` (from `show::columns`) as
/// MariaDB prints them: the strings' collation `utf8mb3_general_ci`, Privileges `select`.
pub(crate) fn patch_full_columns(t: &TableDef, rows: &mut [Vec<Value>]) {
    if !is_database(&t.db) {
        return;
    }
    for r in rows {
        if let Some(c) = r.get_mut(2).filter(|c| !matches!(c, Value::Null)) {
            *c = text("utf8mb3_general_ci");
        }
        if let Some(p) = r.get_mut(7) {
            *p = text("select");
        }
    }
}

impl InfoTable {
    /// The table `name` (ASCII case-insensitive); 1109 for one onelog does not serve.
    pub(crate) fn named(name: &str) -> Result<InfoTable, SqlError> {
        SERVED
            .iter()
            .find(|t| t.name().eq_ignore_ascii_case(name))
            .copied()
            .ok_or_else(|| {
                SqlError::of(
                    errors::ER_UNKNOWN_TABLE,
                    format!("Unknown table '{name}' in {DATABASE}"),
                )
            })
    }

    /// The table's name as MariaDB spells it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            InfoTable::CharacterSets => "CHARACTER_SETS",
            InfoTable::CheckConstraints => "CHECK_CONSTRAINTS",
            InfoTable::Collations => "COLLATIONS",
            InfoTable::Columns => "COLUMNS",
            InfoTable::ColumnPrivileges => "COLUMN_PRIVILEGES",
            InfoTable::Engines => "ENGINES",
            InfoTable::Events => "EVENTS",
            InfoTable::GlobalStatus => "GLOBAL_STATUS",
            InfoTable::GlobalVariables => "GLOBAL_VARIABLES",
            InfoTable::KeyColumnUsage => "KEY_COLUMN_USAGE",
            InfoTable::Parameters => "PARAMETERS",
            InfoTable::Partitions => "PARTITIONS",
            InfoTable::Processlist => "PROCESSLIST",
            InfoTable::ReferentialConstraints => "REFERENTIAL_CONSTRAINTS",
            InfoTable::Routines => "ROUTINES",
            InfoTable::Schemata => "SCHEMATA",
            InfoTable::SchemaPrivileges => "SCHEMA_PRIVILEGES",
            InfoTable::SessionStatus => "SESSION_STATUS",
            InfoTable::SessionVariables => "SESSION_VARIABLES",
            InfoTable::Statistics => "STATISTICS",
            InfoTable::SystemVariables => "SYSTEM_VARIABLES",
            InfoTable::Tables => "TABLES",
            InfoTable::TableConstraints => "TABLE_CONSTRAINTS",
            InfoTable::TablePrivileges => "TABLE_PRIVILEGES",
            InfoTable::Triggers => "TRIGGERS",
            InfoTable::UserPrivileges => "USER_PRIVILEGES",
            InfoTable::Views => "VIEWS",
            InfoTable::InnodbCmp => "INNODB_CMP",
            InfoTable::InnodbCmpReset => "INNODB_CMP_RESET",
            InfoTable::InnodbCmpmem => "INNODB_CMPMEM",
            InfoTable::InnodbCmpmemReset => "INNODB_CMPMEM_RESET",
        }
    }

    /// Whether MariaDB makes the table as Aria (it has a text or blob column), else MEMORY.
    fn is_aria(self) -> bool {
        self.spec()
            .iter()
            .any(|(_, ty, _)| matches!(ty, Ty::LongText | Ty::Blob))
    }

    fn spec(self) -> &'static [Col] {
        match self {
            InfoTable::CharacterSets => CHARACTER_SETS,
            InfoTable::CheckConstraints => CHECK_CONSTRAINTS,
            InfoTable::Collations => COLLATIONS,
            InfoTable::Columns => COLUMNS,
            InfoTable::ColumnPrivileges => COLUMN_PRIVILEGES,
            InfoTable::Engines => ENGINES,
            InfoTable::Events => EVENTS,
            InfoTable::GlobalStatus => VARIABLES,
            InfoTable::GlobalVariables => VARIABLES,
            InfoTable::KeyColumnUsage => KEY_COLUMN_USAGE,
            InfoTable::Parameters => PARAMETERS,
            InfoTable::Partitions => PARTITIONS,
            InfoTable::Processlist => PROCESSLIST,
            InfoTable::ReferentialConstraints => REFERENTIAL_CONSTRAINTS,
            InfoTable::Routines => ROUTINES,
            InfoTable::Schemata => SCHEMATA,
            InfoTable::SchemaPrivileges => SCHEMA_PRIVILEGES,
            InfoTable::SessionStatus => VARIABLES,
            InfoTable::SessionVariables => VARIABLES,
            InfoTable::Statistics => STATISTICS,
            InfoTable::SystemVariables => SYSTEM_VARIABLES,
            InfoTable::Tables => TABLES,
            InfoTable::TableConstraints => TABLE_CONSTRAINTS,
            InfoTable::TablePrivileges => TABLE_PRIVILEGES,
            InfoTable::Triggers => TRIGGERS,
            InfoTable::UserPrivileges => USER_PRIVILEGES,
            InfoTable::Views => VIEWS,
            InfoTable::InnodbCmp => INNODB_CMP,
            InfoTable::InnodbCmpReset => INNODB_CMP,
            InfoTable::InnodbCmpmem => INNODB_CMPMEM,
            InfoTable::InnodbCmpmemReset => INNODB_CMPMEM,
        }
    }

    /// The table's column definitions, in MariaDB's order.
    pub(crate) fn columns(self) -> Vec<ColumnDef> {
        self.spec()
            .iter()
            .map(|&(n, ty, null)| column(n, ty, null))
            .collect()
    }

    /// The table as a definition (SHOW COLUMNS, DESCRIBE), named as MariaDB names it.
    pub(crate) fn table_def(self) -> TableDef {
        let mut t = TableDef::in_memory(self.name(), self.columns());
        t.db = DATABASE.to_string();
        t
    }

    /// The rows the session `cx` sees now (see the module docs for their order); 1227 for an
    /// `INNODB_*` table without PROCESS, as MariaDB.
    pub(crate) fn rows(self, cx: &ExecContext) -> Result<Vec<Vec<Value>>, SqlError> {
        let out = match self {
            InfoTable::Tables
            | InfoTable::Columns
            | InfoTable::TableConstraints
            | InfoTable::KeyColumnUsage
            | InfoTable::ReferentialConstraints
            | InfoTable::CheckConstraints
            | InfoTable::Statistics
            | InfoTable::Partitions
            | InfoTable::Views => self.object_rows(cx),
            InfoTable::Routines
            | InfoTable::Triggers
            | InfoTable::Events
            | InfoTable::Parameters
            | InfoTable::TablePrivileges
            | InfoTable::ColumnPrivileges => Vec::new(),
            InfoTable::Schemata => schemata_rows(cx),
            InfoTable::Engines => show::engines(),
            InfoTable::CharacterSets => show::charsets()
                .into_iter()
                .map(|r| match <[Value; 4]>::try_from(r) {
                    // SHOW CHARACTER SET's columns are Charset, Description, Default
                    // collation, Maxlen.
                    Ok([cs, desc, coll, max]) => vec![cs, coll, desc, max],
                    Err(r) => r,
                })
                .collect(),
            InfoTable::Collations => show::collations(),
            InfoTable::Processlist => processlist_rows(cx),
            InfoTable::GlobalVariables | InfoTable::SessionVariables => {
                let global = self == InfoTable::GlobalVariables;
                crate::sysvar::show_all(cx, global)
                    .into_iter()
                    .map(|(n, v)| vec![text(&n.to_ascii_uppercase()), text(&v)])
                    .collect()
            }
            InfoTable::SystemVariables => crate::sysvar::info::system_variables_rows(cx),
            InfoTable::GlobalStatus | InfoTable::SessionStatus => {
                let session = match self {
                    InfoTable::SessionStatus => cx.traffic.clone(),
                    _ => None,
                };
                crate::execute::admin::status::rows(&cx.server, session.as_deref())
                    .into_iter()
                    .map(|(n, v)| vec![text(&n.to_ascii_uppercase()), as_text(v)])
                    .collect()
            }
            InfoTable::UserPrivileges | InfoTable::SchemaPrivileges => privilege_rows(self, cx),
            InfoTable::InnodbCmp
            | InfoTable::InnodbCmpReset
            | InfoTable::InnodbCmpmem
            | InfoTable::InnodbCmpmemReset => {
                cx.require_any_global(PROCESS, "PROCESS")?;
                innodb_cmp_rows()
            }
        };
        debug_assert!(out.iter().all(|r| r.len() == self.spec().len()));
        Ok(out)
    }

    /// The rows of a table about the objects (tables, views) of the databases the session
    /// holds some privilege on.
    fn object_rows(self, cx: &ExecContext) -> Vec<Vec<Value>> {
        let cat = cx.server.engine.catalog();
        let mut out = Vec::new();
        let mut dbs: Vec<&str> = cat
            .databases()
            .filter(|d| cx.require_some_on_db(d).is_ok())
            .collect();
        if cx.require_some_on_db(mysqlschema::DATABASE).is_ok() {
            dbs.push(mysqlschema::DATABASE);
        }
        dbs.sort_unstable();
        // information_schema's own tables first, as MariaDB lists them.
        match self {
            InfoTable::Tables => own_table_rows(&mut out),
            InfoTable::Columns => own_column_rows(&mut out),
            _ => {}
        }
        for db in dbs {
            if db == mysqlschema::DATABASE {
                if self == InfoTable::Views {
                    out.extend(mysql_view_rows(cx));
                } else {
                    mysql_rows(self, &mut out);
                }
                continue;
            }
            if self == InfoTable::Views {
                for v in cat.views_in(db) {
                    out.push(view_row(cx, v));
                }
                continue;
            }
            if self == InfoTable::Tables {
                table_rows(cx, &cat, db, &mut out);
                continue;
            }
            if self == InfoTable::Columns {
                // Tables and views by name; a view's columns are those its SELECT gives (a
                // view that no longer compiles shows none).
                let mut defs: Vec<Arc<TableDef>> = cat.tables_in(db).into_iter().cloned().collect();
                defs.extend(
                    cat.views_in(db)
                        .into_iter()
                        .filter_map(|v| crate::plan::select::view::view_table_def(cx, v).ok()),
                );
                defs.sort_by(|a, b| a.name.cmp(&b.name));
                for t in &defs {
                    column_rows(t, &mut out);
                }
                continue;
            }
            for t in cat.tables_in(db) {
                match self {
                    InfoTable::TableConstraints => constraint_rows(t, &mut out),
                    InfoTable::KeyColumnUsage => key_column_rows(t, &mut out),
                    InfoTable::ReferentialConstraints => referential_rows(&cat, t, &mut out),
                    InfoTable::CheckConstraints => check_rows(t, &mut out),
                    InfoTable::Statistics => statistics_rows(t, &mut out),
                    InfoTable::Partitions => out.push(partition_row(t)),
                    _ => {}
                }
            }
        }
        out
    }
}

/// The rows of `t` (TABLES, COLUMNS, STATISTICS) about the `mysql` schema's tables, from
/// their MariaDB definitions (`mysqlschema`), as MariaDB 10.11 fills them: Aria tables
/// `Page`, InnoDB ones `Dynamic`, CREATE_OPTIONS `transactional=1`; the view `user` as a
/// view. MariaDB's statistics (row counts, lengths, times, MAX_INDEX_LENGTH) are NULL.
fn mysql_rows(t: InfoTable, out: &mut Vec<Vec<Value>>) {
    for m in MysqlTable::all() {
        match t {
            InfoTable::Tables => out.push(mysql_table_row(m)),
            InfoTable::Columns => mysql_column_rows(m, out),
            InfoTable::Statistics => statistics_rows(&m.table_def(), out),
            _ => {}
        }
    }
}

fn mysql_table_row(m: MysqlTable) -> Vec<Value> {
    let mut r = vec![text("def"), text(mysqlschema::DATABASE), text(m.name())];
    if m.is_view() {
        r.push(text("VIEW"));
        r.extend(std::iter::repeat_n(Value::Null, 16));
        r.extend([text("VIEW"), Value::Null, Value::Null]);
        return r;
    }
    let engine = m.option("ENGINE").unwrap_or("Aria");
    // The frm version MariaDB 10.11.14 reports (global_priv's is newer).
    let version = if m.name() == "global_priv" { 11 } else { 10 };
    r.extend([text("BASE TABLE"), text(engine), Value::UInt(version)]);
    r.push(text(if engine == "Aria" { "Page" } else { "Dynamic" }));
    r.extend(std::iter::repeat_n(Value::Null, 10));
    r.push(m.option("COLLATE").map_or(Value::Null, text));
    r.push(Value::Null);
    let options = match (m.option("TRANSACTIONAL"), m.option("STATS_PERSISTENT")) {
        (Some(t), _) => format!("transactional={t}"),
        (None, Some(s)) => format!("stats_persistent={s}"),
        (None, None) => String::new(),
    };
    r.extend([text(&options), text(m.comment()), Value::Null, text("N")]);
    r
}

/// COLUMNS' rows of a `mysql` table: its definition's (SHOW FULL COLUMNS') types, collations
/// (utf8mb3 three bytes a character, latin1 one), keys, defaults (strings quoted, as MariaDB
/// shows them here) and extras over what [`column_rows`] computes of the typed columns.
fn mysql_column_rows(m: MysqlTable, out: &mut Vec<Vec<Value>>) {
    let start = out.len();
    column_rows(&m.table_def(), out);
    for (r, c) in out[start..].iter_mut().zip(m.spec_columns()) {
        let data_type = c.ty.split(['(', ' ']).next().unwrap_or(c.ty);
        let string = c.collation.is_some() || data_type.ends_with("blob");
        r[5] = match c.default {
            None => Value::Null,
            // A function (`current_timestamp(6)`) or an already quoted string.
            Some(d) if d.ends_with(')') || d.starts_with('\'') => text(d),
            Some(d) if string || data_type == "timestamp" || data_type == "datetime" => {
                text(&format!("'{d}'"))
            }
            Some(d) => text(d),
        };
        r[7] = text(data_type);
        let per_char = match c.collation {
            Some(k) if k.starts_with("utf8mb3") => 3,
            Some(k) if k.starts_with("utf8mb4") => 4,
            _ => 1,
        };
        // TEXT and BLOB columns: their length in bytes, as both lengths.
        let bytes = match data_type {
            "text" | "blob" => Some(65_535),
            "longtext" | "longblob" => Some(4_294_967_295),
            _ => None,
        };
        match (bytes, &r[8]) {
            (Some(b), _) => (r[8], r[9]) = (Value::UInt(b), Value::UInt(b)),
            (None, Value::UInt(n)) => r[9] = Value::UInt(n * per_char),
            _ => {}
        }
        let charset = c.collation.map(|k| k.split('_').next().unwrap_or(k));
        r[13] = charset.map_or(Value::Null, text);
        r[14] = c.collation.map_or(Value::Null, text);
        r[15] = text(c.ty);
        r[16] = text(c.key);
        r[17] = text(c.extra);
    }
}

fn column(name: &str, ty: Ty, nullable: bool) -> ColumnDef {
    let utf8 = Some(Collation::Utf8mb4GeneralCi);
    let (ty, collation, width) = match ty {
        Ty::Str(n) => (SqlType::VarChar(n), utf8, None),
        Ty::U64(w) => (SqlType::BigInt { unsigned: true }, None, Some(w)),
        Ty::I64(w) => (SqlType::BigInt { unsigned: false }, None, Some(w)),
        Ty::U32(w) => (SqlType::Int { unsigned: true }, None, Some(w)),
        Ty::I32(w) => (SqlType::Int { unsigned: false }, None, Some(w)),
        Ty::I8(w) => (SqlType::TinyInt { unsigned: false }, None, Some(w)),
        Ty::Dec(precision, scale) => (SqlType::Decimal { precision, scale }, None, None),
        Ty::LongText => (SqlType::LongText, utf8, None),
        Ty::Blob => (SqlType::Blob, None, None),
        Ty::DateTime(fsp) => (SqlType::DateTime(fsp), None, None),
    };
    ColumnDef {
        name: name.to_string(),
        ty,
        nullable,
        default: None,
        auto_increment: false,
        extras: ColumnExtras {
            display_width: width,
            ..ColumnExtras::default()
        },
        collation,
        members: Vec::new(),
    }
}

fn text(s: &str) -> Value {
    Value::bytes(s.as_bytes())
}

fn uint(n: usize) -> Value {
    Value::UInt(n as u64)
}

/// TABLES' rows of database `db`: its tables and views, by name.
fn table_rows(cx: &ExecContext, cat: &Catalog, db: &str, out: &mut Vec<Vec<Value>>) {
    let tables = cat.tables_in(db);
    let views = cat.views_in(db);
    let mut named: Vec<(&str, Option<&TableDef>)> = tables
        .iter()
        .map(|t| (t.name.as_str(), Some(&***t)))
        .chain(views.iter().map(|v| (v.name.as_str(), None)))
        .collect();
    named.sort_unstable_by(|a, b| a.0.cmp(b.0));
    for (name, t) in named {
        match t {
            Some(t) => out.push(table_row(cx, t)),
            None => {
                // A view: MariaDB fills only its names, its type and the comment `VIEW`.
                let mut r = vec![text("def"), text(db), text(name), text("VIEW")];
                r.extend(std::iter::repeat_n(Value::Null, 16));
                r.extend([text("VIEW"), Value::Null, Value::Null]);
                out.push(r);
            }
        }
    }
}

fn table_row(cx: &ExecContext, t: &TableDef) -> Vec<Value> {
    let auto_increment = match t.auto_increment {
        Some(_) => Value::UInt(cx.server.engine.auto_increment_next(t.id)),
        None => Value::Null,
    };
    let mut r = vec![text("def"), text(&t.db), text(&t.name), text("BASE TABLE")];
    r.push(text("InnoDB"));
    // VERSION .. DATA_FREE: InnoDB's statistics, which onelog does not keep.
    r.extend(std::iter::repeat_n(Value::Null, 8));
    r.push(auto_increment);
    r.extend([Value::Null, Value::Null, Value::Null]);
    r.push(text(show::table_collation(t).name()));
    r.push(Value::Null);
    r.push(text(""));
    r.push(text(&t.options.comment));
    r.extend([Value::Null, text("N")]);
    r
}

fn column_rows(t: &TableDef, out: &mut Vec<Vec<Value>>) {
    // SHOW FULL COLUMNS' Key, Extra and Comment are COLUMN_KEY, EXTRA and COLUMN_COMMENT.
    let shown = show::columns(t, true);
    for (i, (c, sc)) in t.columns.iter().zip(shown).enumerate() {
        let column_type = show::column_type_text(c);
        let data_type: String = column_type
            .split(['(', ' '])
            .next()
            .unwrap_or_default()
            .to_string();
        let (chars, octets) = match char_lengths(c) {
            Some((n, o)) => (Value::UInt(n), Value::UInt(o)),
            None => (Value::Null, Value::Null),
        };
        let (precision, scale) = match c.extras.float_digits {
            // FLOAT(M,D): M and D, as MariaDB shows them.
            Some((m, d)) => (Value::UInt(u64::from(m)), Value::UInt(u64::from(d))),
            None => numeric_precision(&c.ty),
        };
        let datetime = match c.ty {
            SqlType::DateTime(f) | SqlType::Timestamp(f) | SqlType::Time(f) => {
                Value::UInt(u64::from(f))
            }
            _ => Value::Null,
        };
        // An ENUM's or SET's members compare under its own collation, else (a column made
        // before onelog kept one) under the table's (SHOW CREATE TABLE's).
        let coll = if c.ty.member_count() > 0 {
            Some(c.collation.unwrap_or_else(|| show::table_collation(t)))
        } else {
            c.collation.filter(|_| show::is_text_type(&c.ty))
        };
        let mut r = vec![text("def"), text(&t.db), text(&t.name), text(&c.name)];
        r.push(uint(i + 1));
        r.push(show::column_default_sql(c).map_or(Value::Null, |d| text(&d)));
        r.push(text(if c.nullable { "YES" } else { "NO" }));
        r.extend([text(&data_type), chars, octets, precision, scale, datetime]);
        r.push(coll.map_or(Value::Null, |k| text(k.charset())));
        r.push(coll.map_or(Value::Null, |k| text(k.name())));
        r.extend([text(&column_type), sc[4].clone(), sc[6].clone()]);
        r.extend([text("select,insert,update,references"), sc[8].clone()]);
        r.extend([text("NEVER"), Value::Null]);
        out.push(r);
    }
}

/// CHARACTER_MAXIMUM_LENGTH and CHARACTER_OCTET_LENGTH (None: not a string type).
fn char_lengths(c: &ColumnDef) -> Option<(u64, u64)> {
    let utf8 = |n: u64| Some((n, n * 4));
    let bytes = |n: u64| Some((n, n));
    match c.ty {
        SqlType::Char(n) | SqlType::VarChar(n) => utf8(u64::from(n)),
        SqlType::Binary(n) | SqlType::VarBinary(n) => bytes(u64::from(n)),
        SqlType::TinyText | SqlType::TinyBlob => bytes(255),
        SqlType::Text | SqlType::Blob => bytes(65_535),
        SqlType::MediumText | SqlType::MediumBlob => bytes(16_777_215),
        SqlType::LongText | SqlType::LongBlob | SqlType::Json => bytes(4_294_967_295),
        SqlType::Enum(_) => utf8(
            c.members
                .iter()
                .map(|m| m.chars().count() as u64)
                .max()
                .unwrap_or(0),
        ),
        SqlType::Set(_) => {
            let all: u64 = c.members.iter().map(|m| m.chars().count() as u64).sum();
            utf8(all + c.members.len().saturating_sub(1) as u64)
        }
        _ => None,
    }
}

/// NUMERIC_PRECISION and NUMERIC_SCALE.
fn numeric_precision(ty: &SqlType) -> (Value, Value) {
    let int = |p: u64| (Value::UInt(p), Value::UInt(0));
    match *ty {
        SqlType::TinyInt { .. } => int(3),
        SqlType::SmallInt { .. } => int(5),
        SqlType::MediumInt { unsigned } => int(if unsigned { 8 } else { 7 }),
        SqlType::Int { .. } => int(10),
        SqlType::BigInt { unsigned } => int(if unsigned { 20 } else { 19 }),
        SqlType::Decimal { precision, scale } => (
            Value::UInt(u64::from(precision)),
            Value::UInt(u64::from(scale)),
        ),
        SqlType::Float => (Value::UInt(12), Value::Null),
        SqlType::Double => (Value::UInt(22), Value::Null),
        SqlType::Bit(m) => (Value::UInt(u64::from(m)), Value::Null),
        _ => (Value::Null, Value::Null),
    }
}

/// The table's keys that are constraints (the primary key, unique indexes), as (name,
/// column positions) in MariaDB's order. A table without a declared primary key shows none
/// (its key is an implicit one, or a unique index taken as the primary key, named as such).
fn key_constraints(t: &TableDef) -> Vec<(&str, &[usize])> {
    let mut out: Vec<(&str, &[usize])> = Vec::new();
    if !t.primary_key.is_empty() {
        out.push(("PRIMARY", &t.primary_key));
    }
    out.extend(
        show::keys_in_order(t)
            .into_iter()
            .filter(|i| i.unique)
            .map(|i| (i.name.as_str(), &i.columns[..])),
    );
    out
}

fn constraint_rows(t: &TableDef, out: &mut Vec<Vec<Value>>) {
    let row = |name: &str, kind: &str| {
        vec![
            text("def"),
            text(&t.db),
            text(name),
            text(&t.db),
            text(&t.name),
            text(kind),
        ]
    };
    for (name, _) in key_constraints(t) {
        out.push(row(
            name,
            if name == "PRIMARY" {
                "PRIMARY KEY"
            } else {
                "UNIQUE"
            },
        ));
    }
    for (name, _, _) in checks_in_order(t) {
        out.push(row(name, "CHECK"));
    }
    for f in &t.options.foreign_keys {
        out.push(row(&f.name, "FOREIGN KEY"));
    }
}

fn key_column_rows(t: &TableDef, out: &mut Vec<Vec<Value>>) {
    let head = |name: &str| {
        vec![
            text("def"),
            text(&t.db),
            text(name),
            text("def"),
            text(&t.db),
            text(&t.name),
        ]
    };
    for (name, cols) in key_constraints(t) {
        for (i, &c) in cols.iter().enumerate() {
            let mut r = head(name);
            r.extend([text(&t.columns[c].name), uint(i + 1)]);
            r.extend([Value::Null, Value::Null, Value::Null, Value::Null]);
            out.push(r);
        }
    }
    for f in &t.options.foreign_keys {
        for (i, (c, p)) in f.columns.iter().zip(&f.parent_columns).enumerate() {
            let mut r = head(&f.name);
            r.extend([text(c), uint(i + 1), uint(i + 1)]);
            r.extend([text(&f.parent_db), text(&f.parent_table), text(p)]);
            out.push(r);
        }
    }
}

fn rule(a: onelog_engine::FkAction) -> Value {
    text(a.sql().unwrap_or("RESTRICT"))
}

fn referential_rows(cat: &Catalog, t: &TableDef, out: &mut Vec<Vec<Value>>) {
    for f in &t.options.foreign_keys {
        out.push(vec![
            text("def"),
            text(&t.db),
            text(&f.name),
            text("def"),
            text(&f.parent_db),
            unique_constraint_name(cat, f),
            text("NONE"),
            rule(f.on_update),
            rule(f.on_delete),
            text(&t.name),
            text(&f.parent_table),
        ]);
    }
}

/// REFERENTIAL_CONSTRAINTS.UNIQUE_CONSTRAINT_NAME: the parent's key the foreign key refers
/// to: PRIMARY when the referenced columns start the parent's primary key, else the first
/// index they start (as InnoDB picks it); NULL when the parent is missing (foreign_key_checks
/// was off when it was created) or has no such key.
fn unique_constraint_name(cat: &Catalog, f: &ForeignKeyDef) -> Value {
    let Some(p) = cat.table_by_name(&f.parent_db, &f.parent_table) else {
        return Value::Null;
    };
    let starts = |key: &[usize]| {
        key.len() >= f.parent_columns.len()
            && key
                .iter()
                .zip(&f.parent_columns)
                .all(|(&k, c)| p.columns[k].name.eq_ignore_ascii_case(c))
    };
    if starts(&p.primary_key) {
        return text("PRIMARY");
    }
    p.indexes
        .iter()
        .find(|i| starts(&i.columns))
        .map_or(Value::Null, |i| text(&i.name))
}

/// The table's CHECK constraints in MariaDB's order, as (name, LEVEL, CHECK_CLAUSE): the
/// column constraints in column order (a JSON column's automatic `json_valid(col)` among
/// them), then the table constraints in declaration order.
fn checks_in_order(t: &TableDef) -> Vec<(&str, &'static str, String)> {
    let mut out = Vec::new();
    for c in &t.columns {
        if c.ty == SqlType::Json {
            let clause = format!("json_valid(`{}`)", c.name.replace('`', "``"));
            out.push((c.name.as_str(), "Column", clause));
        }
        out.extend(
            t.options
                .checks
                .iter()
                .filter(|k| k.column.as_deref() == Some(c.name.as_str()))
                .map(|k| (k.name.as_str(), "Column", k.expr.clone())),
        );
    }
    out.extend(
        t.options
            .checks
            .iter()
            .filter(|k| k.column.is_none())
            .map(|k| (k.name.as_str(), "Table", k.expr.clone())),
    );
    out
}

fn check_rows(t: &TableDef, out: &mut Vec<Vec<Value>>) {
    for (name, level, clause) in checks_in_order(t) {
        out.push(vec![
            text("def"),
            text(&t.db),
            text(&t.name),
            text(name),
            text(level),
            text(&clause),
        ]);
    }
}

/// STATISTICS rows: SHOW INDEX's rows with the catalog and schemas MariaDB adds.
fn statistics_rows(t: &TableDef, out: &mut Vec<Vec<Value>>) {
    for r in show::index_rows(t) {
        let mut row = vec![text("def"), text(&t.db)];
        let mut shown = r.into_iter();
        // Table, Non_unique, then INDEX_SCHEMA, then Key_name onwards.
        row.extend(shown.by_ref().take(2));
        row.push(text(&t.db));
        row.extend(shown.next());
        row.extend(shown.next().map(|seq| match seq {
            Value::Int(n) => Value::UInt(n as u64),
            v => v,
        }));
        row.extend(shown);
        out.push(row);
    }
}

/// A VIEWS row. VIEW_DEFINITION is the view's SELECT with its table names qualified, as
/// onelog keeps it (MariaDB prints its own normalized form); empty without SHOW VIEW on the
/// view's database, as MariaDB shows it to a user who may not see the definition.
fn view_row(cx: &ExecContext, v: &ViewDef) -> Vec<Value> {
    let may_show = !cx.is_checked()
        || cx.privileges_on(&v.db) & crate::privilege::SHOW_VIEW != 0
        || cx.current_account() == Some(v.definer.clone());
    let parsed = crate::plan::select::view::parse_body(&v.query, &v.query_db);
    let definition = match (&parsed, may_show) {
        (_, false) => String::new(),
        (Ok(q), true) => q.to_string(),
        (Err(_), true) => v.query.clone(),
    };
    let updatable = v.algorithm != onelog_engine::ViewAlgorithm::TempTable
        && parsed.as_ref().is_ok_and(|q| {
            crate::plan::select::view::mergeable(q)
                && matches!(*q.body, sqlparser::ast::SetExpr::Select(_))
        });
    let check = match v.check {
        ViewCheck::None => "NONE",
        ViewCheck::Local => "LOCAL",
        ViewCheck::Cascaded => "CASCADED",
    };
    vec![
        text("def"),
        text(&v.db),
        text(&v.name),
        text(&definition),
        text(check),
        text(if updatable { "YES" } else { "NO" }),
        text(&format!("{}@{}", v.definer.0, v.definer.1)),
        text(if v.invoker { "INVOKER" } else { "DEFINER" }),
        // As SHOW CREATE VIEW prints them.
        text("utf8mb4"),
        text("utf8mb4_general_ci"),
        text(v.algorithm.sql()),
    ]
}

/// VIEWS' rows of the `mysql` schema: its view `user` as MariaDB 10.11.14 describes it
/// (VIEW_DEFINITION empty without SHOW VIEW on `mysql`, as for any view).
fn mysql_view_rows(cx: &ExecContext) -> Vec<Vec<Value>> {
    let may_show = !cx.is_checked()
        || cx.privileges_on(crate::mysqlschema::DATABASE) & crate::privilege::SHOW_VIEW != 0;
    MysqlTable::all()
        .filter(|t| t.is_view())
        .map(|t| {
            let definition = match t.create_sql().split_once(" AS ") {
                Some((_, d)) if may_show => d,
                _ => "",
            };
            [
                "def",
                crate::mysqlschema::DATABASE,
                t.name(),
                definition,
                "NONE",
                "YES",
                "mariadb.sys@localhost",
                "DEFINER",
                crate::mysqlschema::USER_VIEW_CHARSET.0,
                crate::mysqlschema::USER_VIEW_CHARSET.1,
                "UNDEFINED",
            ]
            .into_iter()
            .map(text)
            .collect()
        })
        .collect()
}

/// A PARTITIONS row: MariaDB's row for an unpartitioned table (the partition columns NULL).
/// The statistics onelog does not keep are 0 where the column is NOT NULL, else NULL.
fn partition_row(t: &TableDef) -> Vec<Value> {
    let mut r = vec![text("def"), text(&t.db), text(&t.name)];
    r.extend(std::iter::repeat_n(Value::Null, 9));
    r.extend([Value::UInt(0), Value::UInt(0), Value::UInt(0), Value::Null]);
    r.extend([Value::UInt(0), Value::UInt(0)]);
    r.extend([Value::Null, Value::Null, Value::Null, Value::Null]);
    r.extend([text(""), text(""), Value::Null]);
    r
}

/// SCHEMATA: `information_schema` first (as MariaDB lists it), then the other databases SHOW
/// DATABASES lists for the session, with the character set SHOW CREATE DATABASE prints
/// (`mysql`: latin1, as MariaDB's).
fn schemata_rows(cx: &ExecContext) -> Vec<Vec<Value>> {
    let row = |name: &str, cs: &str, coll: &str| {
        vec![
            text("def"),
            text(name),
            text(cs),
            text(coll),
            Value::Null,
            text(""),
        ]
    };
    let mut out = vec![row(DATABASE, "utf8mb3", "utf8mb3_general_ci")];
    for db in show::databases(cx) {
        if let Some(Value::Bytes(name)) = db.first() {
            let name = String::from_utf8_lossy(name);
            if is_database(&name) {
                continue;
            }
            if crate::mysqlschema::is_database(&name) {
                out.push(row(&name, "latin1", "latin1_swedish_ci"));
            } else {
                out.push(row(&name, "utf8mb4", "utf8mb4_general_ci"));
            }
        }
    }
    out
}

/// PROCESSLIST: SHOW FULL PROCESSLIST's rows (the same filtering: without PROCESS a user
/// sees its own connections), with MariaDB's extra columns. TIME_MS is TIME in milliseconds
/// (onelog's activity clock counts seconds here); the stage, memory and examined-rows
/// counters MariaDB keeps are 0; QUERY_ID is 0 and TID the connection id.
fn processlist_rows(cx: &ExecContext) -> Vec<Vec<Value>> {
    show::processlist(cx, true)
        .into_iter()
        .map(|r| {
            let mut r: Vec<Value> = r.into_iter().take(8).collect();
            let id = r[0].clone();
            let secs = match &r[5] {
                Value::Int(n) => *n,
                _ => 0,
            };
            let info = r[7].clone();
            r.push(Value::Decimal(format!("{}.000", secs.saturating_mul(1000))));
            r.extend([Value::Int(0), Value::Int(0)]);
            r.push(Value::Decimal("0.000".into()));
            r.extend([Value::Int(0), Value::Int(0), Value::Int(0), Value::Int(0)]);
            r.extend([info, id]);
            r
        })
        .collect()
}

/// A status value as SHOW STATUS prints it.
fn as_text(v: Value) -> Value {
    match v {
        Value::Bytes(b) => Value::Bytes(b),
        other => Value::bytes(crate::render::text_plain(&other)),
    }
}

/// USER_PRIVILEGES (the global grants) and SCHEMA_PRIVILEGES (the database grants) of the
/// accounts, one row per privilege in SHOW GRANTS' order; an account without a global
/// privilege has MariaDB's `USAGE` row. Without SELECT on `mysql` (or globally) a session
/// sees only its own account's rows, as in MariaDB.
fn privilege_rows(t: InfoTable, cx: &ExecContext) -> Vec<Vec<Value>> {
    let cat = cx.server.engine.catalog();
    let all = !cx.is_checked() || cx.privileges_on("mysql") & SELECT != 0;
    let me = cx.current_account();
    let mut accounts: Vec<&AccountDef> = cat
        .accounts()
        .map(|a| &**a)
        .filter(|a| all || me.as_ref() == Some(&(a.user.clone(), a.host.clone())))
        .collect();
    accounts.sort_by(|a, b| (&a.user, &a.host).cmp(&(&b.user, &b.host)));
    let mut out = Vec::new();
    for a in accounts {
        let grantee = format!("'{}'@'{}'", a.user, a.host);
        let mut grants: Vec<_> = a
            .grants
            .iter()
            .filter(|g| (g.scope == "*") == (t == InfoTable::UserPrivileges))
            .collect();
        grants.sort_by(|x, y| x.scope.cmp(&y.scope));
        let mut any_global = false;
        for g in grants {
            let grantable = text(if g.privileges & GRANT_OPTION != 0 {
                "YES"
            } else {
                "NO"
            });
            for (name, _) in NAMES.iter().filter(|(_, b)| g.privileges & b != 0) {
                let mut r = vec![text(&grantee), text("def")];
                if t == InfoTable::SchemaPrivileges {
                    r.push(text(&g.scope));
                }
                r.extend([text(name), grantable.clone()]);
                any_global = true;
                out.push(r);
            }
        }
        if t == InfoTable::UserPrivileges && !any_global {
            out.push(vec![text(&grantee), text("def"), text("USAGE"), text("NO")]);
        }
    }
    out
}

/// INNODB_CMP, INNODB_CMPMEM and their _RESET forms: MariaDB's rows for an InnoDB without
/// compressed tables (one per compressed page size, every counter 0); onelog compresses
/// no pages.
fn innodb_cmp_rows() -> Vec<Vec<Value>> {
    [1024, 2048, 4096, 8192, 16384]
        .into_iter()
        .map(|size| {
            let mut r = vec![Value::Int(size)];
            r.extend(std::iter::repeat_n(Value::Int(0), 5));
            r
        })
        .collect()
}
