//! The `information_schema` tables onelog serves: read-only virtual tables computed from the
//! catalog when a statement reads them (`FROM information_schema.tables`), with MariaDB
//! 10.11's table and column names, column order and types.
//!
//! Owns [`InfoTable`] (which tables exist: [`InfoTable::named`]), each table's column
//! definitions ([`InfoTable::columns`]) and its rows for a session ([`InfoTable::rows`]).
//! Served so far (the slice ORMs read to introspect a schema; docs/SQL.md): `TABLES`,
//! `TABLE_CONSTRAINTS`, `KEY_COLUMN_USAGE`, `REFERENTIAL_CONSTRAINTS`, `CHECK_CONSTRAINTS`,
//! `STATISTICS`. Any other name is MariaDB's 1109 `Unknown table 'x' in information_schema`.
//! Tools wanting more tables (issue 16) add a variant, its columns and its rows here.
//!
//! Invariants: every row has exactly as many values as its table has columns (asserted in
//! debug builds); a session sees the tables of the databases it holds some privilege on
//! (as SHOW TABLES); rows come ordered by database, then table name, then (within a table)
//! MariaDB's order: primary key, unique keys in index order, checks, foreign keys by name.
//! What onelog does not know (InnoDB's statistics: row counts, lengths, times) is NULL.
//!
//! Called by `plan::select::subquery` (a FROM table named `information_schema.x` becomes a
//! derived table with these columns) and `execute::subquery` (which materializes the rows).

use onelog_binlog::Value;
use onelog_engine::collation::Collation;
use onelog_engine::{Catalog, ColumnDef, ColumnExtras, ForeignKeyDef, SqlType, TableDef};
use onelog_protocol::errors;

use crate::context::ExecContext;
use crate::error::SqlError;
use crate::execute::admin::show;

/// The database name (matched ASCII case-insensitively, as MariaDB does).
pub(crate) const DATABASE: &str = "information_schema";

/// An `information_schema` table onelog serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum InfoTable {
    Tables,
    Columns,
    TableConstraints,
    KeyColumnUsage,
    ReferentialConstraints,
    CheckConstraints,
    Statistics,
}

/// A column's type in MariaDB's `information_schema` (all strings are utf8 general_ci).
#[derive(Clone, Copy)]
enum Ty {
    /// VARCHAR(n).
    Str(u32),
    /// BIGINT (unsigned when true).
    Int(bool),
    LongText,
    DateTime,
}

/// (name, type, nullable)
type Col = (&'static str, Ty, bool);

const TABLES: &[Col] = &[
    ("TABLE_CATALOG", Ty::Str(512), false),
    ("TABLE_SCHEMA", Ty::Str(64), false),
    ("TABLE_NAME", Ty::Str(64), false),
    ("TABLE_TYPE", Ty::Str(64), false),
    ("ENGINE", Ty::Str(64), true),
    ("VERSION", Ty::Int(true), true),
    ("ROW_FORMAT", Ty::Str(10), true),
    ("TABLE_ROWS", Ty::Int(true), true),
    ("AVG_ROW_LENGTH", Ty::Int(true), true),
    ("DATA_LENGTH", Ty::Int(true), true),
    ("MAX_DATA_LENGTH", Ty::Int(true), true),
    ("INDEX_LENGTH", Ty::Int(true), true),
    ("DATA_FREE", Ty::Int(true), true),
    ("AUTO_INCREMENT", Ty::Int(true), true),
    ("CREATE_TIME", Ty::DateTime, true),
    ("UPDATE_TIME", Ty::DateTime, true),
    ("CHECK_TIME", Ty::DateTime, true),
    ("TABLE_COLLATION", Ty::Str(64), true),
    ("CHECKSUM", Ty::Int(true), true),
    ("CREATE_OPTIONS", Ty::Str(2048), true),
    ("TABLE_COMMENT", Ty::Str(2048), false),
    ("MAX_INDEX_LENGTH", Ty::Int(true), true),
    ("TEMPORARY", Ty::Str(1), true),
];

const COLUMNS: &[Col] = &[
    ("TABLE_CATALOG", Ty::Str(512), false),
    ("TABLE_SCHEMA", Ty::Str(64), false),
    ("TABLE_NAME", Ty::Str(64), false),
    ("COLUMN_NAME", Ty::Str(64), false),
    ("ORDINAL_POSITION", Ty::Int(true), false),
    ("COLUMN_DEFAULT", Ty::LongText, true),
    ("IS_NULLABLE", Ty::Str(3), false),
    ("DATA_TYPE", Ty::Str(64), false),
    ("CHARACTER_MAXIMUM_LENGTH", Ty::Int(true), true),
    ("CHARACTER_OCTET_LENGTH", Ty::Int(true), true),
    ("NUMERIC_PRECISION", Ty::Int(true), true),
    ("NUMERIC_SCALE", Ty::Int(true), true),
    ("DATETIME_PRECISION", Ty::Int(true), true),
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
    ("ORDINAL_POSITION", Ty::Int(false), false),
    ("POSITION_IN_UNIQUE_CONSTRAINT", Ty::Int(false), true),
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
    ("NON_UNIQUE", Ty::Int(false), false),
    ("INDEX_SCHEMA", Ty::Str(64), false),
    ("INDEX_NAME", Ty::Str(64), false),
    ("SEQ_IN_INDEX", Ty::Int(true), false),
    ("COLUMN_NAME", Ty::Str(64), false),
    ("COLLATION", Ty::Str(1), true),
    ("CARDINALITY", Ty::Int(false), true),
    ("SUB_PART", Ty::Int(false), true),
    ("PACKED", Ty::Str(10), true),
    ("NULLABLE", Ty::Str(3), false),
    ("INDEX_TYPE", Ty::Str(16), false),
    ("COMMENT", Ty::Str(16), true),
    ("INDEX_COMMENT", Ty::Str(1024), false),
    ("IGNORED", Ty::Str(3), false),
];

impl InfoTable {
    /// The table `name` (ASCII case-insensitive); 1109 for one onelog does not serve.
    pub(crate) fn named(name: &str) -> Result<InfoTable, SqlError> {
        let t = match name.to_ascii_uppercase().as_str() {
            "TABLES" => InfoTable::Tables,
            "COLUMNS" => InfoTable::Columns,
            "TABLE_CONSTRAINTS" => InfoTable::TableConstraints,
            "KEY_COLUMN_USAGE" => InfoTable::KeyColumnUsage,
            "REFERENTIAL_CONSTRAINTS" => InfoTable::ReferentialConstraints,
            "CHECK_CONSTRAINTS" => InfoTable::CheckConstraints,
            "STATISTICS" => InfoTable::Statistics,
            _ => {
                return Err(SqlError::of(
                    errors::ER_UNKNOWN_TABLE,
                    format!("Unknown table '{name}' in {DATABASE}"),
                ))
            }
        };
        Ok(t)
    }

    fn spec(self) -> &'static [Col] {
        match self {
            InfoTable::Tables => TABLES,
            InfoTable::Columns => COLUMNS,
            InfoTable::TableConstraints => TABLE_CONSTRAINTS,
            InfoTable::KeyColumnUsage => KEY_COLUMN_USAGE,
            InfoTable::ReferentialConstraints => REFERENTIAL_CONSTRAINTS,
            InfoTable::CheckConstraints => CHECK_CONSTRAINTS,
            InfoTable::Statistics => STATISTICS,
        }
    }

    /// The table's column definitions, in MariaDB's order.
    pub(crate) fn columns(self) -> Vec<ColumnDef> {
        self.spec()
            .iter()
            .map(|&(n, ty, null)| column(n, ty, null))
            .collect()
    }

    /// The rows the session `cx` sees now (see the module docs for their order).
    pub(crate) fn rows(self, cx: &ExecContext) -> Vec<Vec<Value>> {
        let cat = cx.server.engine.catalog();
        let mut out = Vec::new();
        let mut dbs: Vec<&str> = cat
            .databases()
            .filter(|d| cx.require_some_on_db(d).is_ok())
            .collect();
        dbs.sort_unstable();
        for db in dbs {
            for t in cat.tables_in(db) {
                match self {
                    InfoTable::Tables => out.push(table_row(cx, t)),
                    InfoTable::Columns => column_rows(t, &mut out),
                    InfoTable::TableConstraints => constraint_rows(t, &mut out),
                    InfoTable::KeyColumnUsage => key_column_rows(t, &mut out),
                    InfoTable::ReferentialConstraints => referential_rows(&cat, t, &mut out),
                    InfoTable::CheckConstraints => check_rows(t, &mut out),
                    InfoTable::Statistics => statistics_rows(t, &mut out),
                }
            }
        }
        debug_assert!(out.iter().all(|r| r.len() == self.spec().len()));
        out
    }
}

fn column(name: &str, ty: Ty, nullable: bool) -> ColumnDef {
    let (ty, collation) = match ty {
        Ty::Str(n) => (SqlType::VarChar(n), Some(Collation::Utf8mb4GeneralCi)),
        Ty::Int(unsigned) => (SqlType::BigInt { unsigned }, None),
        Ty::LongText => (SqlType::LongText, Some(Collation::Utf8mb4GeneralCi)),
        Ty::DateTime => (SqlType::DateTime(0), None),
    };
    ColumnDef {
        name: name.to_string(),
        ty,
        nullable,
        default: None,
        auto_increment: false,
        extras: ColumnExtras::default(),
        collation,
        members: Vec::new(),
    }
}

fn text(s: &str) -> Value {
    Value::Bytes(s.as_bytes().to_vec())
}

fn uint(n: usize) -> Value {
    Value::UInt(n as u64)
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
        let (precision, scale) = numeric_precision(&c.ty);
        let datetime = match c.ty {
            SqlType::DateTime(f) | SqlType::Timestamp(f) | SqlType::Time(f) => {
                Value::UInt(u64::from(f))
            }
            _ => Value::Null,
        };
        // An ENUM's or SET's members compare under the table's collation (SHOW CREATE TABLE's).
        let coll = match c.collation.filter(|_| show::is_text_type(&c.ty)) {
            None if c.ty.member_count() > 0 => Some(show::table_collation(t)),
            coll => coll,
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
        SqlType::MediumInt { .. } => int(7),
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

fn statistics_rows(t: &TableDef, out: &mut Vec<Vec<Value>>) {
    let mut keys: Vec<(&str, &[usize], bool)> = Vec::new();
    if !t.primary_key.is_empty() {
        keys.push(("PRIMARY", &t.primary_key, true));
    }
    keys.extend(
        show::keys_in_order(t)
            .into_iter()
            .map(|i| (i.name.as_str(), &i.columns[..], i.unique)),
    );
    for (name, cols, unique) in keys {
        for (i, &c) in cols.iter().enumerate() {
            let col = &t.columns[c];
            out.push(vec![
                text("def"),
                text(&t.db),
                text(&t.name),
                Value::Int(i64::from(!unique)),
                text(&t.db),
                text(name),
                uint(i + 1),
                text(&col.name),
                text("A"),
                Value::Null,
                Value::Null,
                Value::Null,
                text(if col.nullable { "YES" } else { "" }),
                text("BTREE"),
                text(""),
                text(""),
                text("NO"),
            ]);
        }
    }
}
