//! DDL: CREATE/DROP DATABASE, CREATE TABLE (types, defaults, NOT NULL, AUTO_INCREMENT,
//! PRIMARY KEY inline or as a constraint, UNIQUE/KEY/INDEX, table options ignored), DROP
//! TABLE (several), TRUNCATE, CREATE [UNIQUE] INDEX, DROP INDEX, ALTER TABLE ADD/DROP INDEX;
//! FOREIGN KEY and CHECK constraints through `fk` and `check` (declared at CREATE TABLE, added
//! and dropped by ALTER TABLE, guarding DROP/TRUNCATE/DROP COLUMN/DROP INDEX/RENAME).
//! Each runs through the engine's DDL methods with the statement text (its Query event).
//!
//! Invariant: the session commits any open transaction before calling in here (implicit
//! commit), so a DDL never runs inside a transaction.

use onelog_binlog::Value;
use onelog_engine::collation::Collation;
use onelog_engine::{ColumnSpec, IndexSpec, SqlType, TableOptions, TableSpec};
use onelog_protocol::errors;
use sqlparser::ast;

use crate::context::ExecContext;
use crate::error::SqlError;
use crate::execute::algorithm::{Clauses, IndexLock};
use crate::execute::{check, fk, keys};
use crate::expr::{
    charset_named, check_charset, collation_named, object_name_parts, Compiler, Env, Scope,
};

/// The (database, table) a DDL statement changes: the current database where none is named;
/// a table of the read-only `mysql` schema is refused (`mysqlschema::refuse_change`).
pub(crate) fn split_name(
    cx: &ExecContext,
    n: &ast::ObjectName,
) -> Result<(String, String), SqlError> {
    let (db, t) = split_name_read(cx, n)?;
    if crate::mysqlschema::is_database(&db) {
        return Err(crate::mysqlschema::refuse_change(cx, &t));
    }
    Ok((db, t))
}

/// The (database, table) a statement reads (no refusal for `mysql`).
pub(super) fn split_name_read(
    cx: &ExecContext,
    n: &ast::ObjectName,
) -> Result<(String, String), SqlError> {
    let p = object_name_parts(n);
    match p.as_slice() {
        [t] => Ok((
            cx.current_db.clone().ok_or_else(SqlError::no_database)?,
            t.clone(),
        )),
        [d, t] => Ok((d.clone(), t.clone())),
        _ => Err(SqlError::syntax(&n.to_string())),
    }
}

fn num_args(s: &str) -> Vec<u32> {
    match (s.find('('), s.find(')')) {
        (Some(a), Some(b)) if b > a => s[a + 1..b]
            .split(',')
            .filter_map(|x| x.trim().parse().ok())
            .collect(),
        _ => Vec::new(),
    }
}

/// The display width declared for an integer column (`INT(5)`; BOOL/BOOLEAN are
/// `tinyint(1)`), kept for SHOW CREATE TABLE / SHOW COLUMNS as MariaDB shows it.
fn display_width(dt: &ast::DataType, ty: &SqlType) -> Option<u16> {
    if !ty.is_integer() {
        return None;
    }
    let s = dt.to_string().to_ascii_uppercase();
    if s.starts_with("BOOL") {
        return Some(1);
    }
    if s.starts_with("SERIAL") {
        return None;
    }
    num_args(&s).first().map(|&w| w.min(255) as u16)
}

/// `FLOAT(M,D)` / `DOUBLE(M,D)` / `REAL(M,D)`: (M, D), kept for SHOW CREATE TABLE,
/// information_schema and the rounding of stored values ([`check_column_size`] has checked
/// M <= 255, D <= 30, D <= M).
fn float_digits(dt: &ast::DataType, ty: &SqlType) -> Option<(u8, u8)> {
    if !matches!(ty, SqlType::Float | SqlType::Double) {
        return None;
    }
    match num_args(&dt.to_string()).as_slice() {
        &[m, d] => Some((m.min(255) as u8, d.min(30) as u8)),
        _ => None,
    }
}

/// Maps a sqlparser data type to the engine's (by its SQL text, robust to AST naming).
pub(crate) fn sql_type(dt: &ast::DataType) -> Result<SqlType, SqlError> {
    let s = dt.to_string().to_ascii_uppercase();
    let unsigned = s.contains("UNSIGNED");
    let base: String = s
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    let args = num_args(&s);
    let a0 = args.first().copied();
    let fsp = |d: Option<u32>| d.unwrap_or(0).min(6) as u8;
    Ok(match base.as_str() {
        "TINYINT" | "INT1" | "BOOL" | "BOOLEAN" => SqlType::TinyInt { unsigned },
        "SMALLINT" | "INT2" => SqlType::SmallInt { unsigned },
        "MEDIUMINT" | "INT3" => SqlType::MediumInt { unsigned },
        "INT" | "INTEGER" | "INT4" => SqlType::Int { unsigned },
        "BIGINT" | "INT8" => SqlType::BigInt { unsigned },
        "SERIAL" => SqlType::BigInt { unsigned: true },
        // FLOAT(M,D) stays FLOAT whatever M (MariaDB: `float(30,10)`); REAL is DOUBLE.
        "FLOAT" if args.len() == 2 => SqlType::Float,
        "FLOAT" | "REAL" if args.is_empty() || a0.unwrap_or(0) <= 24 => {
            if base == "REAL" {
                SqlType::Double
            } else {
                SqlType::Float
            }
        }
        "FLOAT" | "REAL" | "DOUBLE" | "FLOAT8" => SqlType::Double,
        "DECIMAL" | "NUMERIC" | "DEC" | "FIXED" => SqlType::Decimal {
            precision: a0.unwrap_or(10).clamp(1, 65) as u8,
            scale: args.get(1).copied().unwrap_or(0).min(30) as u8,
        },
        "CHAR" | "CHARACTER" | "NCHAR" => SqlType::Char(a0.unwrap_or(1)),
        "VARCHAR" | "NVARCHAR" | "CHARACTER VARYING" => match a0 {
            Some(n) => SqlType::VarChar(n),
            None => return Err(SqlError::syntax(&s)),
        },
        "BINARY" => SqlType::Binary(a0.unwrap_or(1)),
        "VARBINARY" => match a0 {
            Some(n) => SqlType::VarBinary(n),
            None => return Err(SqlError::syntax(&s)),
        },
        "TINYTEXT" => SqlType::TinyText,
        "TEXT" => SqlType::Text,
        "MEDIUMTEXT" => SqlType::MediumText,
        "LONGTEXT" => SqlType::LongText,
        "JSON" => SqlType::Json,
        // BIT(M): M 1..=64 (65 and up: `check_column_size`'s 1439; BIT(0) is refused).
        "BIT" => match a0.unwrap_or(1) {
            m @ 1..=64 => SqlType::Bit(m as u8),
            _ => return Err(SqlError::unsupported(&format!("column type {s}"))),
        },
        "ENUM" | "SET" => {
            let n = type_members(dt).len();
            match (base.as_str(), u16::try_from(n), u8::try_from(n)) {
                ("ENUM", Ok(n), _) if n > 0 => SqlType::Enum(n),
                ("SET", _, Ok(n)) if n > 0 && n <= 64 => SqlType::Set(n),
                _ => return Err(SqlError::unsupported(&format!("column type {s}"))),
            }
        }
        "TINYBLOB" => SqlType::TinyBlob,
        "BLOB" => SqlType::Blob,
        "MEDIUMBLOB" => SqlType::MediumBlob,
        "LONGBLOB" => SqlType::LongBlob,
        "DATE" => SqlType::Date,
        "DATETIME" => SqlType::DateTime(fsp(a0)),
        "TIMESTAMP" => SqlType::Timestamp(fsp(a0)),
        "TIME" => SqlType::Time(fsp(a0)),
        "YEAR" => SqlType::Year,
        _ => return Err(SqlError::unsupported(&format!("column type {s}"))),
    })
}

/// The members of an ENUM or SET type as declared (empty for other types).
fn type_members(dt: &ast::DataType) -> Vec<String> {
    match dt {
        ast::DataType::Enum(members, _) => members
            .iter()
            .map(|m| match m {
                ast::EnumMember::Name(n) | ast::EnumMember::NamedValue(n, _) => n.clone(),
            })
            .collect(),
        ast::DataType::Set(members) => members.clone(),
        _ => Vec::new(),
    }
}

/// An ENUM's or SET's members as MariaDB keeps them (trailing spaces dropped), or its error
/// for a list it refuses: 1291 a duplicate (compared case-insensitively), 1367 a SET member
/// with a comma, 1097 a SET of more than 64. A member with a NUL byte is 1235.
fn checked_members(dt: &ast::DataType, col: &str) -> Result<Vec<String>, SqlError> {
    let set = matches!(dt, ast::DataType::Set(_));
    let kind = if set { "SET" } else { "ENUM" };
    let members: Vec<String> = type_members(dt)
        .into_iter()
        .map(|m| m.trim_end_matches(' ').to_string())
        .collect();
    if set && members.len() > 64 {
        return Err(SqlError::of(
            errors::ER_TOO_BIG_SET,
            format!("Too many strings for column {col} and SET"),
        ));
    }
    for (i, m) in members.iter().enumerate() {
        if m.contains('\0') {
            return Err(SqlError::unsupported("a NUL byte in an ENUM or SET member"));
        }
        if set && m.contains(',') {
            return Err(SqlError::of(
                errors::ER_ILLEGAL_VALUE_FOR_TYPE,
                format!("Illegal set '{m}' value found during parsing"),
            ));
        }
        // MariaDB names the first of the two.
        if let Some(first) = members[..i]
            .iter()
            .find(|x| x.to_lowercase() == m.to_lowercase())
        {
            return Err(SqlError::of(
                errors::ER_DUPLICATED_VALUE_IN_TYPE,
                format!("Column '{col}' has duplicated value '{first}' in {kind}"),
            ));
        }
    }
    Ok(members)
}

/// MariaDB's checks of a column's declared sizes, with its errors: 1425 too big scale, 1426
/// too big precision, 1427 M < D, 1439 display width, 1074 column length (utf8mb4: VARCHAR
/// up to 16383 characters), 1063 FLOAT(p) past 53. Declarations MariaDB accepts but onelog
/// cannot honour (DECIMAL scale 31..38, DECIMAL/FLOAT UNSIGNED, ZEROFILL) are
/// refused with 1235, never stored as something else.
pub(crate) fn check_column_size(dt: &ast::DataType, col: &str) -> Result<(), SqlError> {
    let s = dt.to_string().to_ascii_uppercase();
    let base: String = s
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    let args: Vec<u64> = match (s.find('('), s.find(')')) {
        (Some(a), Some(b)) if b > a => s[a + 1..b]
            .split(',')
            .filter_map(|x| x.trim().parse().ok())
            .collect(),
        _ => Vec::new(),
    };
    let err = |e: onelog_protocol::ErrorCode, msg: String| Err(SqlError::of(e, msg));
    let unsupported = |what: &str| Err(SqlError::unsupported(what));
    let width = |max: u64| -> Result<(), SqlError> {
        match args.first() {
            Some(&w) if w > max => err(
                errors::ER_TOO_BIG_DISPLAYWIDTH,
                format!("Display width out of range for '{col}' (max = {max})"),
            ),
            _ => Ok(()),
        }
    };
    let length = |max: u64| -> Result<(), SqlError> {
        match args.first() {
            Some(&n) if n > max => err(
                errors::ER_TOO_BIG_FIELDLENGTH,
                format!("Column length too big for column '{col}' (max = {max}); use BLOB or TEXT instead"),
            ),
            _ => Ok(()),
        }
    };
    let m_ge_d = |m: u64, d: u64| -> Result<(), SqlError> {
        if m < d {
            return err(
                errors::ER_M_BIGGER_THAN_D,
                format!(
                    "For float(M,D), double(M,D) or decimal(M,D), M must be >= D (column '{col}')"
                ),
            );
        }
        Ok(())
    };
    if s.contains("ZEROFILL") {
        return unsupported("ZEROFILL");
    }
    match base.as_str() {
        "TINYINT" | "INT1" | "SMALLINT" | "INT2" | "MEDIUMINT" | "INT3" | "INT" | "INTEGER"
        | "INT4" | "BIGINT" | "INT8" => width(255),
        "BIT" => width(64),
        "DECIMAL" | "NUMERIC" | "DEC" | "FIXED" => {
            let p = args.first().copied().unwrap_or(10);
            let d = args.get(1).copied().unwrap_or(0);
            if d > 38 {
                return err(
                    errors::ER_TOO_BIG_SCALE,
                    format!("Too big scale specified for '{col}'. Maximum is 38"),
                );
            }
            if p > 65 {
                return err(
                    errors::ER_TOO_BIG_PRECISION,
                    format!("Too big precision specified for '{col}'. Maximum is 65"),
                );
            }
            m_ge_d(p, d)?;
            if d > 30 {
                return unsupported("DECIMAL with a scale above 30");
            }
            if s.contains("UNSIGNED") {
                return unsupported("DECIMAL UNSIGNED");
            }
            Ok(())
        }
        "FLOAT" | "REAL" | "DOUBLE" | "FLOAT8" => {
            match args.as_slice() {
                [p] if base == "FLOAT" && *p > 53 => {
                    return err(
                        errors::ER_WRONG_FIELD_SPEC,
                        format!("Incorrect column specifier for column '{col}'"),
                    )
                }
                [m, d] => {
                    width(255)?;
                    if *d > 30 && m >= d {
                        return err(
                            errors::ER_TOO_BIG_SCALE,
                            format!("Too big scale specified for '{col}'. Maximum is 30"),
                        );
                    }
                    m_ge_d(*m, *d)?;
                }
                _ => {}
            }
            if s.contains("UNSIGNED") {
                return unsupported("FLOAT/DOUBLE UNSIGNED");
            }
            Ok(())
        }
        "CHAR" | "CHARACTER" | "NCHAR" | "BINARY" => length(255),
        "VARCHAR" | "NVARCHAR" => length(16383),
        "VARBINARY" => length(65532),
        "DATETIME" | "TIMESTAMP" | "TIME" => match args.first() {
            Some(&f) if f > 6 => err(
                errors::ER_TOO_BIG_PRECISION,
                format!("Too big precision specified for '{col}'. Maximum is 6"),
            ),
            _ => Ok(()),
        },
        _ => Ok(()),
    }
}

/// `CURRENT_TIMESTAMP[(n)]` and its synonyms (NOW, LOCALTIME, LOCALTIMESTAMP): Some(n).
fn current_timestamp_fsp(e: &ast::Expr) -> Option<u8> {
    let s = e.to_string().to_ascii_uppercase().replace(' ', "");
    let rest = ["CURRENT_TIMESTAMP", "NOW", "LOCALTIMESTAMP", "LOCALTIME"]
        .iter()
        .find_map(|n| s.strip_prefix(n))?;
    match rest {
        "" | "()" => Some(0),
        r => r
            .strip_prefix('(')?
            .strip_suffix(')')?
            .parse::<u8>()
            .ok()
            .filter(|&n| n <= 6),
    }
}

/// `DEFAULT CURRENT_TIMESTAMP(n)` (any column type: MariaDB converts the DATETIME at insert)
/// or `ON UPDATE CURRENT_TIMESTAMP(n)` (DATETIME and TIMESTAMP only, else MariaDB's 1294) of
/// column `c`: n.
fn now_option(e: &ast::Expr, ty: &SqlType, c: &str, on_update: bool) -> Result<u8, SqlError> {
    match current_timestamp_fsp(e) {
        Some(n) if !on_update || matches!(ty, SqlType::DateTime(_) | SqlType::Timestamp(_)) => {
            Ok(n)
        }
        _ if on_update => Err(SqlError::of(
            errors::ER_INVALID_ON_UPDATE,
            format!("Invalid ON UPDATE clause for '{c}' column"),
        )),
        _ => Err(SqlError::of(
            errors::ER_INVALID_DEFAULT,
            format!("Invalid default value for '{c}'"),
        )),
    }
}

pub(super) fn default_value(
    cx: &ExecContext,
    e: &ast::Expr,
    ty: &SqlType,
) -> Result<Option<Value>, SqlError> {
    let mut c = Compiler::new(
        Scope {
            table: None,
            qualifier: "",
            db: "",
            joined: Vec::new(),
        },
        "DEFAULT",
    );
    // `i INT DEFAULT 0x10` is 16, as a value stored into the column (`expr::hybrid`).
    let x = crate::expr::hybrid_for_column(c.compile(e)?, ty);
    let env = Env {
        cx,
        params: &[],
        insert_row: None,
        coll: crate::expr::connection_collation(cx),
        subq: None,
    };
    Ok(Some(x.eval(&[], &env)?))
}

/// The text of a table option's value (`utf8mb4`, `'utf8mb4'`).
fn option_text(e: &ast::Expr) -> String {
    match e {
        ast::Expr::Identifier(i) => i.value.clone(),
        ast::Expr::Value(v) => match &v.value {
            ast::Value::SingleQuotedString(s) | ast::Value::DoubleQuotedString(s) => s.clone(),
            other => other.to_string(),
        },
        other => other.to_string(),
    }
}

/// The table's default collation from its `[DEFAULT] CHARSET=` / `COLLATE=` options: None when
/// neither is given (the server's, utf8mb4_general_ci); 1115/1273/1235/1253 as MariaDB.
fn table_collation(opts: &ast::CreateTableOptions) -> Result<Option<Collation>, SqlError> {
    let list = match opts {
        ast::CreateTableOptions::None => return Ok(None),
        ast::CreateTableOptions::With(v)
        | ast::CreateTableOptions::Options(v)
        | ast::CreateTableOptions::Plain(v)
        | ast::CreateTableOptions::TableProperties(v) => v,
    };
    let (mut charset, mut coll) = (None, None);
    for o in list {
        let ast::SqlOption::KeyValue { key, value } = o else {
            continue;
        };
        let k = key.value.to_ascii_uppercase();
        let k = k.strip_prefix("DEFAULT ").unwrap_or(&k);
        match k {
            "CHARSET" | "CHARACTER SET" => charset = Some(charset_named(&option_text(value))?),
            "COLLATE" => coll = Some(collation_named(&option_text(value))?),
            _ => {}
        }
    }
    both(charset, coll)
}

/// A charset and a collation given together: the collation, if it belongs to the charset.
fn both(
    charset: Option<Collation>,
    coll: Option<Collation>,
) -> Result<Option<Collation>, SqlError> {
    match (charset, coll) {
        (Some(cs), Some(c)) => {
            check_charset(c, cs)?;
            Ok(Some(c))
        }
        (cs, c) => Ok(c.or(cs)),
    }
}

/// A column's collation: its COLLATE, else its CHARACTER SET's default, else the table's
/// (None: the server default). Only text columns take one; a binary charset on a text
/// column (MariaDB turns it into a binary type) is refused.
fn column_collation(
    options: &[ast::ColumnOptionDef],
    ty: SqlType,
    table: Option<Collation>,
) -> Result<Option<Collation>, SqlError> {
    let (mut charset, mut coll) = (None, None);
    for o in options {
        match &o.option {
            ast::ColumnOption::CharacterSet(n) => {
                charset = Some(charset_named(&object_name_parts(n).join("."))?)
            }
            ast::ColumnOption::Collation(n) => {
                coll = Some(collation_named(&object_name_parts(n).join("."))?)
            }
            _ => {}
        }
    }
    let given = both(charset, coll)?;
    // Text columns, and ENUM and SET, whose members compare as text.
    if !ty.is_text() && ty.member_count() == 0 {
        return Ok(None);
    }
    match given.or(table) {
        Some(Collation::Binary) => Err(SqlError::unsupported(
            "CHARACTER SET binary on a text column",
        )),
        c => Ok(c),
    }
}

/// The module's invariant: DDL never runs inside a transaction (the session committed it).
fn assert_no_transaction(cx: &ExecContext) {
    debug_assert!(cx.txn.is_none(), "DDL inside an open transaction");
}

/// The keys a column definition declares itself (`PRIMARY KEY`, `UNIQUE`, SERIAL's UNIQUE).
#[derive(Default)]
pub(super) struct ColumnKeys {
    pub(super) primary: bool,
    pub(super) unique: bool,
    /// `REFERENCES p (c)`: MariaDB 10.5+ makes it a foreign key of the column.
    pub(super) references: Option<ast::ForeignKeyConstraint>,
    /// `CHECK (...)`: the column's check constraint.
    pub(super) check: Option<ast::CheckConstraint>,
}

/// A column definition of CREATE TABLE or ALTER TABLE ... ADD COLUMN as the engine's spec.
pub(super) fn column_spec(
    cx: &ExecContext,
    cd: &ast::ColumnDef,
    table_coll: Option<Collation>,
) -> Result<(ColumnSpec, ColumnKeys), SqlError> {
    check_column_size(&cd.data_type, &cd.name.value)?;
    let ty = sql_type(&cd.data_type)?;
    let mut spec = ColumnSpec::new(&cd.name.value, ty)
        .members(checked_members(&cd.data_type, &cd.name.value)?);
    let mut keys = ColumnKeys::default();
    spec.extras.display_width = display_width(&cd.data_type, &ty);
    spec.extras.float_digits = float_digits(&cd.data_type, &ty);
    spec.collation = column_collation(&cd.options, ty, table_coll)?;
    if cd.data_type.to_string().eq_ignore_ascii_case("serial") {
        // SERIAL = BIGINT UNSIGNED NOT NULL AUTO_INCREMENT UNIQUE
        spec.nullable = false;
        spec.auto_increment = true;
        keys.unique = true;
    }
    for o in &cd.options {
        match &o.option {
            ast::ColumnOption::NotNull => spec.nullable = false,
            ast::ColumnOption::Null => spec.nullable = true,
            ast::ColumnOption::Default(e) if current_timestamp_fsp(e).is_some() => {
                let n = now_option(e, &ty, &cd.name.value, false)?;
                spec.extras.default_now = Some(n);
                spec.default = None;
            }
            ast::ColumnOption::OnUpdate(e) => {
                spec.extras.on_update_now = Some(now_option(e, &ty, &cd.name.value, true)?);
            }
            ast::ColumnOption::Comment(c) => {
                let of = keys::Commented::Column(&cd.name.value);
                spec.extras.comment = keys::comment(cx, c, of)?;
            }
            ast::ColumnOption::ForeignKey(fk) => keys.references = Some(fk.clone()),
            ast::ColumnOption::Check(c) => keys.check = Some(c.clone()),
            ast::ColumnOption::Default(e) => {
                spec.extras.default_now = None;
                if let Some(v) = default_value(cx, e, &ty)? {
                    let v = if ty.member_count() > 0 {
                        // An ENUM's or SET's default names its members exactly (1067).
                        let set = matches!(ty, SqlType::Set(_));
                        crate::expr::member_value(&spec.members, set, &v).map_err(|_| {
                            SqlError::of(
                                errors::ER_INVALID_DEFAULT,
                                format!("Invalid default value for '{}'", cd.name.value),
                            )
                        })?
                    } else {
                        crate::expr::convert_for_column(v, &ty, &cd.name.value)?
                    };
                    // FLOAT(M,D): the default rounded to D decimals; past M digits 1067.
                    let v = match (spec.extras.float_digits, crate::expr::to_f64_quiet(&v)) {
                        (Some(md), Some(x)) => match crate::expr::float_digits(x, md) {
                            Ok(r) => Value::Double(r),
                            Err(_) => {
                                return Err(SqlError::of(
                                    errors::ER_INVALID_DEFAULT,
                                    format!("Invalid default value for '{}'", cd.name.value),
                                ))
                            }
                        },
                        _ => v,
                    };
                    spec.default = Some(v);
                }
            }
            other => {
                let t = other.to_string().to_ascii_uppercase();
                if t.contains("AUTO_INCREMENT") || t.contains("AUTOINCREMENT") {
                    spec.auto_increment = true;
                } else if t.starts_with("PRIMARY KEY") {
                    keys.primary = true;
                    spec.nullable = false;
                } else if t.starts_with("UNIQUE") {
                    keys.unique = true;
                } else if t.starts_with("CHARACTER SET") || t.starts_with("COLLATE") {
                    // CHARACTER SET and COLLATE: `column_collation`.
                } else {
                    return Err(SqlError::unsupported(&format!("column option {t}")));
                }
            }
        }
    }
    Ok((spec, keys))
}

/// `CREATE TABLE IF NOT EXISTS` of a `mysql` table onelog serves: it exists, so note 1050
/// after the CREATE privilege check (1142 without it), as MariaDB answers a dump's `CREATE
/// TABLE IF NOT EXISTS mysql.general_log`. Whether it was such a table.
fn served_mysql_table_exists(cx: &ExecContext, n: &ast::ObjectName) -> Result<bool, SqlError> {
    let (db, name) = split_name_read(cx, n)?;
    if !crate::mysqlschema::is_database(&db) {
        return Ok(false);
    }
    let Ok(t) = crate::mysqlschema::MysqlTable::named(&name) else {
        return Ok(false);
    };
    cx.check_table_privilege(&db, &name, crate::privilege::CREATE)?;
    crate::expr::warn("Note", 1050, format!("Table '{}' already exists", t.name()));
    Ok(true)
}

/// CREATE TABLE IF NOT EXISTS of a name a table or view has: Note 1050, nothing else done
/// (MariaDB 10.11.14, also for `... LIKE` and `... SELECT`).
fn exists_already(cx: &ExecContext, db: &str, name: &str) -> bool {
    let cat = cx.server.engine.catalog();
    let found = cat.table_by_name(db, name).is_some() || cat.view(db, name).is_some();
    if found {
        crate::expr::warn("Note", 1050, format!("Table '{name}' already exists"));
    }
    found
}

pub(crate) fn create_table(
    cx: &ExecContext,
    ct: &ast::CreateTable,
    sql: &str,
) -> Result<crate::output::Output, SqlError> {
    assert_no_transaction(cx);
    if ct.temporary {
        // Refused rather than made a table every session shares and that outlives its session.
        return Err(SqlError::unsupported("CREATE TEMPORARY TABLE"));
    }
    if ct.if_not_exists && served_mysql_table_exists(cx, &ct.name)? {
        return Ok(crate::output::Output::ok());
    }
    let (db, name) = split_name(cx, &ct.name)?;
    cx.check_table_privilege(&db, &name, crate::privilege::CREATE)?;
    if ct.if_not_exists && exists_already(cx, &db, &name) {
        return Ok(crate::output::Output::ok());
    }
    if let Some(like) = &ct.like {
        let (ast::CreateTableLikeKind::Plain(l) | ast::CreateTableLikeKind::Parenthesized(l)) =
            like;
        // MariaDB takes nothing beside the LIKE (1064 for columns or table options).
        let options =
            !matches!(ct.table_options, ast::CreateTableOptions::None) || ct.comment.is_some();
        if !ct.columns.is_empty() || !ct.constraints.is_empty() || l.defaults.is_some() || options {
            return Err(SqlError::syntax(&ct.to_string()));
        }
        // MariaDB: SELECT on the source table, CREATE on the new one.
        let (src_db, src) = split_name_read(cx, &l.name)?;
        cx.check_table_privilege(&src_db, &src, crate::privilege::SELECT)?;
        cx.server
            .engine
            .create_table_like((&db, &name), (&src_db, &src), ct.if_not_exists, sql)?;
        return Ok(crate::output::Output::ok());
    }
    let mut columns = Vec::new();
    let mut primary_key: Vec<String> = Vec::new();
    let mut indexes: Vec<IndexSpec> = Vec::new();
    let mut unnamed = 0;
    let mut index_name = |cols: &[String], given: Option<String>, taken: &[IndexSpec]| -> String {
        if let Some(g) = given {
            return g;
        }
        let base = cols.first().cloned().unwrap_or_else(|| "idx".into());
        let mut n = base.clone();
        while taken.iter().any(|i| i.name.eq_ignore_ascii_case(&n)) {
            unnamed += 1;
            n = format!("{base}_{}", unnamed + 1);
        }
        n
    };
    let table_coll = table_collation(&ct.table_options)?;
    let mut fks: Vec<fk::Declared> = Vec::new();
    let mut checks = Vec::new();
    for cd in &ct.columns {
        let (spec, keys) = column_spec(cx, cd, table_coll)?;
        if let Some(r) = &keys.references {
            fks.push(fk::declared(&db, r, Some(vec![cd.name.value.clone()]))?);
        }
        if let Some(c) = &keys.check {
            checks.push(check::column_check(&cd.name.value, c));
        }
        if keys.primary {
            primary_key = vec![cd.name.value.clone()];
        }
        if keys.unique {
            let cols = vec![cd.name.value.clone()];
            let n = index_name(&cols, None, &indexes);
            indexes.push(IndexSpec {
                name: n,
                columns: cols,
                unique: true,
                options: Default::default(),
            });
        }
        columns.push(spec);
    }
    let mut checks_unnamed: Vec<&ast::CheckConstraint> = Vec::new();
    let mut primary = Default::default();
    for c in &ct.constraints {
        if let Some(k) = keys::declared(cx, c)? {
            if k.primary {
                if !primary_key.is_empty() {
                    return Err(SqlError::of(
                        errors::ER_MULTIPLE_PRI_KEY,
                        "Multiple primary key defined",
                    ));
                }
                (primary_key, primary) = (k.spec.columns, k.spec.options);
            } else {
                let name = index_name(&k.spec.columns, k.given, &indexes);
                indexes.push(IndexSpec { name, ..k.spec });
            }
            continue;
        }
        match c {
            ast::TableConstraint::ForeignKey(f) => fks.push(fk::declared(&db, f, None)?),
            ast::TableConstraint::Check(c) => {
                if c.enforced == Some(false) || c.no_inherit {
                    return Err(SqlError::unsupported("CHECK ... NOT ENFORCED"));
                }
                checks_unnamed.push(c);
            }
            other => {
                return Err(SqlError::unsupported(
                    &other.to_string().chars().take(40).collect::<String>(),
                ))
            }
        }
    }
    if primary_key.is_empty() {
        (primary_key, primary) = implicit_primary_key(&columns, &mut indexes);
    }
    let generated = add_fk_indexes(&fks, &primary_key, &mut indexes, &mut index_name);
    let spec = TableSpec {
        db,
        name,
        columns,
        primary_key,
        indexes,
    };
    let mut options = table_options(cx, ct, &spec.name)?;
    options.primary = primary;
    options.foreign_keys = name_foreign_keys(&spec.name, fks);
    options.generated_keys = generated;
    let mut unnamed = 0;
    checks.extend(
        checks_unnamed
            .into_iter()
            .map(|c| check::table_check(c, &mut unnamed)),
    );
    options.checks = checks;
    if let Some(q) = &ct.query {
        return crate::execute::ctas::create_table_select(cx, ct, q, (spec, options), sql);
    }
    create_checked(cx, spec, options, ct.if_not_exists, sql).map(|()| crate::output::Output::ok())
}

/// The engine's CREATE TABLE of `spec` after its constraints are validated (the CHECK
/// expressions compile, the foreign keys are well formed), logged with the session's
/// `foreign_key_checks`.
fn create_checked(
    cx: &ExecContext,
    spec: TableSpec,
    options: TableOptions,
    if_not_exists: bool,
    sql: &str,
) -> Result<(), SqlError> {
    if !options.foreign_keys.is_empty() || !options.checks.is_empty() {
        let engine = &cx.server.engine;
        let mut child = onelog_engine::TableDef::from_spec(0, &spec)?;
        child.options = options.clone();
        check::compile(cx, &child)?;
        fk::validate(&engine.catalog(), &child, fk::checks_on(cx))?;
    }
    fk::logged_with_checks(cx, || {
        cx.server
            .engine
            .create_table_with(spec, options, if_not_exists, sql)
    })?;
    Ok(())
}

/// InnoDB's index for each foreign key no declared key starts with (named by `name_of`); of
/// two such generated indexes on the same columns the later stays (MariaDB drops a generated
/// key another key starts with). Returns the generated indexes' names (kept with the table:
/// a later key that serves the foreign key drops them, `TableOptions::generated_keys`).
fn add_fk_indexes(
    fks: &[fk::Declared],
    primary_key: &[String],
    indexes: &mut Vec<IndexSpec>,
    name_of: &mut impl FnMut(&[String], Option<String>, &[IndexSpec]) -> String,
) -> Vec<String> {
    let mut generated = Vec::new();
    for (i, f) in fks.iter().enumerate() {
        let cols = &f.def.columns;
        let later = fks[i + 1..]
            .iter()
            .any(|g| key_covers(&g.def.columns, &[], cols));
        if !later && !key_covers(primary_key, indexes, cols) {
            let name = name_of(cols, f.name.clone(), indexes);
            let cols: Vec<&str> = cols.iter().map(String::as_str).collect();
            indexes.push(IndexSpec::new(&name, &cols, false));
            generated.push(name);
        }
    }
    generated
}

/// Whether the primary key or an index starts with `cols` (ASCII case-insensitively).
fn key_covers(primary_key: &[String], indexes: &[IndexSpec], cols: &[String]) -> bool {
    let starts = |k: &[String]| {
        k.len() >= cols.len() && k.iter().zip(cols).all(|(a, b)| a.eq_ignore_ascii_case(b))
    };
    starts(primary_key) || indexes.iter().any(|i| starts(&i.columns))
}

/// The foreign keys' names (InnoDB's `<table>_ibfk_<n>` for the unnamed ones, numbered in
/// order), sorted by name as InnoDB keeps and shows them.
fn name_foreign_keys(table: &str, fks: Vec<fk::Declared>) -> Vec<onelog_engine::ForeignKeyDef> {
    let mut n = 0;
    let mut out: Vec<_> = fks
        .into_iter()
        .map(|f| {
            let mut def = f.def;
            def.name = f.name.unwrap_or_else(|| {
                n += 1;
                fk::generated_name(table, n)
            });
            def
        })
        .collect();
    out.sort_by_key(|f| f.name.to_ascii_lowercase());
    out
}

/// Like InnoDB's clustered index for a table without PRIMARY KEY: the first UNIQUE index over
/// NOT NULL columns (taken out of `indexes`) with its options; no columns when there is none.
fn implicit_primary_key(
    columns: &[ColumnSpec],
    indexes: &mut Vec<IndexSpec>,
) -> (Vec<String>, onelog_engine::IndexOptions) {
    let not_null = |n: &String| {
        columns
            .iter()
            .any(|c: &ColumnSpec| c.name.eq_ignore_ascii_case(n) && !c.nullable)
    };
    match indexes
        .iter()
        .position(|ix| ix.unique && ix.columns.iter().all(not_null))
    {
        Some(i) => {
            let ix = indexes.remove(i);
            (ix.columns, ix.options)
        }
        None => Default::default(),
    }
}

/// The table options onelog keeps: `COMMENT` and `AUTO_INCREMENT=N` (the first generated
/// value). The others (ENGINE, CHARSET, ROW_FORMAT, ...) describe what onelog is or does not
/// apply to it, as before.
fn table_options(
    cx: &ExecContext,
    ct: &ast::CreateTable,
    table: &str,
) -> Result<TableOptions, SqlError> {
    let mut o = TableOptions::default();
    let list = match &ct.table_options {
        ast::CreateTableOptions::Plain(v)
        | ast::CreateTableOptions::With(v)
        | ast::CreateTableOptions::Options(v)
        | ast::CreateTableOptions::TableProperties(v) => v.as_slice(),
        ast::CreateTableOptions::None => &[],
    };
    let comment = |c: &ast::CommentDef| match c {
        ast::CommentDef::WithEq(s) | ast::CommentDef::WithoutEq(s) => {
            keys::comment(cx, s, keys::Commented::Table(table))
        }
    };
    if let Some(c) = &ct.comment {
        o.comment = comment(c)?;
    }
    for opt in list {
        match opt {
            ast::SqlOption::Comment(c) => o.comment = comment(c)?,
            ast::SqlOption::NamedParenthesizedList(l)
                if l.key.value.eq_ignore_ascii_case("ENGINE") =>
            {
                if let Some(name) = &l.name {
                    engine_substitution(cx, &name.value, table)?;
                }
            }
            ast::SqlOption::KeyValue { key, value }
                if key.value.eq_ignore_ascii_case("AUTO_INCREMENT") =>
            {
                let text = value.to_string();
                o.auto_increment = text
                    .trim_matches('\'')
                    .parse()
                    .map_err(|_| SqlError::syntax(&text))?;
            }
            _ => {}
        }
    }
    Ok(o)
}

/// `ENGINE=name` of CREATE TABLE: every table is onelog's (InnoDB's alias). An engine MariaDB
/// has (MyISAM, Aria, MEMORY, ...) is taken as onelog's (docs/SQL.md); one MariaDB does not
/// have is its 1286 under NO_ENGINE_SUBSTITUTION, else warnings 1286 and 1266 and the table
/// is onelog's, as MariaDB substitutes its default engine.
fn engine_substitution(cx: &ExecContext, name: &str, table: &str) -> Result<(), SqlError> {
    use crate::parse::alter_ops::{storage_engine, unknown_engine, StorageEngine};
    if !matches!(storage_engine(name), StorageEngine::Unknown) {
        return Ok(());
    }
    let e = unknown_engine(name);
    if crate::sysvar::no_engine_substitution(cx) {
        return Err(e);
    }
    crate::expr::warn("Warning", e.code, e.message);
    let msg = format!("Using storage engine InnoDB for table '{table}'");
    crate::expr::warn("Warning", errors::ER_WARN_USING_OTHER_HANDLER.code, msg);
    Ok(())
}

pub(crate) fn create_index(
    cx: &ExecContext,
    ci: &ast::CreateIndex,
    sql: &str,
) -> Result<(), SqlError> {
    assert_no_transaction(cx);
    let (db, table) = split_name(cx, &ci.table_name)?;
    cx.check_table_privilege(&db, &table, crate::privilege::INDEX)?;
    keys::refuse_foreign_clauses(ci)?;
    let cols = keys::columns(&ci.columns)?;
    let name = match &ci.name {
        Some(n) => object_name_parts(n).join("."),
        None => cols.first().cloned().unwrap_or_default(),
    };
    let options = keys::options(cx, &name, ci.using.as_ref(), &ci.index_options)?;
    let spec = IndexSpec {
        name,
        columns: cols,
        unique: ci.unique,
        options,
    };
    let name = spec.name.clone();
    let (clauses, other) = Clauses::split(&ci.alter_options);
    if let Some(o) = other.first() {
        return Err(SqlError::syntax(&o.to_string()));
    }
    let created = create_index_as(cx, (&db, &table), spec, sql, clauses.index_build()?);
    match created {
        Err(e) if e.code == errors::ER_DUP_KEYNAME.code && ci.if_not_exists => {
            crate::expr::warn("Note", 1061, format!("Duplicate key name '{name}'"));
            Ok(())
        }
        r => r,
    }
}

/// CREATE INDEX and a lone ALTER TABLE ADD INDEX / ADD UNIQUE, built as `how` says.
pub(super) fn create_index_as(
    cx: &ExecContext,
    (db, table): (&str, &str),
    spec: IndexSpec,
    sql: &str,
    how: IndexLock,
) -> Result<(), SqlError> {
    match how {
        IndexLock::Online => create_index_online(cx, (db, table), spec, sql),
        IndexLock::Locked { readers } => {
            let _lock = cx.exclusive_lock(&[(db, table)], readers)?;
            let engine = &cx.server.engine;
            Ok(engine.create_index_locked(db, table, spec, sql)?)
        }
    }
}

/// CREATE INDEX (and a lone ALTER TABLE ADD INDEX / ADD UNIQUE) beside commits, with
/// MariaDB's metadata locks of an online ALTER: the table's exclusive lock is taken at the
/// start (waiting for the transactions that use the table), let go to the table's users for
/// the build (other DDL on it still waits), and taken again before the index is created
/// (waiting for the transactions that began meanwhile) until it is. That last wait holds the
/// paged store's checkpoint writers' lock (the entries built into the base must not move), so
/// a DDL of another table that needs it waits too, unseen by the deadlock search: the wait is
/// bounded by `innodb_lock_wait_timeout` as well as `lock_wait_timeout` (then 1205).
fn create_index_online(
    cx: &ExecContext,
    (db, table): (&str, &str),
    spec: IndexSpec,
    sql: &str,
) -> Result<(), SqlError> {
    let lock = cx.exclusive_lock(&[(db, table)], false)?;
    lock.building();
    let innodb_timeout = crate::sysvar::lock_wait_timeout(cx);
    let mut failed = None;
    let created = cx
        .server
        .engine
        .create_index_with(db, table, spec, sql, || {
            match cx.upgrade_lock(&lock, innodb_timeout) {
                Ok(()) => Ok(()),
                Err(e) => {
                    failed = Some(e);
                    Err(onelog_engine::EngineError::Interrupted)
                }
            }
        });
    std::mem::drop(lock);
    match failed {
        Some(e) => Err(e),
        None => Ok(created?),
    }
}

/// `RENAME TABLE a TO b, ...` and `ALTER TABLE a RENAME [TO | AS] b`: ALTER and DROP on each
/// old table, CREATE and INSERT on each new one (MariaDB's); a target database that does not
/// exist is MariaDB's 1025 (its rename of the table's files fails).
pub(crate) fn rename_tables(
    cx: &ExecContext,
    pairs: &[(&ast::ObjectName, &ast::ObjectName)],
    sql: &str,
) -> Result<(), SqlError> {
    assert_no_transaction(cx);
    let mut resolved = Vec::with_capacity(pairs.len());
    for (old, new) in pairs {
        let (db, table) = split_name(cx, old)?;
        let (new_db, new_table) = split_name(cx, new)?;
        cx.check_table_privilege(
            &db,
            &table,
            crate::privilege::ALTER | crate::privilege::DROP,
        )?;
        cx.check_table_privilege(
            &new_db,
            &new_table,
            crate::privilege::CREATE | crate::privilege::INSERT,
        )?;
        if !cx.server.engine.catalog().has_database(&new_db) {
            return Err(SqlError::of(
                errors::ER_ERROR_ON_RENAME,
                format!(
                    "Error on rename of './{db}/{table}' to './{new_db}/{new_table}' (errno: 168 \
                     \"Unknown (generic) error from engine\")"
                ),
            ));
        }
        resolved.push((db, table, new_db, new_table));
    }
    let cat = cx.server.engine.catalog();
    let views = resolved
        .iter()
        .filter(|(db, t, _, _)| cat.view(db, t).is_some())
        .count();
    if views == resolved.len() {
        return crate::execute::view::rename(cx, resolved, sql);
    }
    if views > 0 {
        return Err(SqlError::unsupported(
            "RENAME TABLE of views and tables in one statement",
        ));
    }
    let keys: Vec<(&str, &str)> = resolved
        .iter()
        .flat_map(|(d, t, nd, nt)| [(d.as_str(), t.as_str()), (nd.as_str(), nt.as_str())])
        .collect();
    let _lock = cx.exclusive_lock(&keys, false)?;
    // A table with foreign keys or referenced by one is renamed as InnoDB does: the catalog
    // change carries the children's references and the generated constraint names along
    // (`Catalog::apply`, RenameTables).
    let current = cx.current_db.clone().unwrap_or_default();
    cx.server.engine.rename_tables(&current, &resolved, sql)?;
    Ok(())
}

/// The value MariaDB gives existing rows for a NOT NULL column added without a default.
pub(super) fn zero_value(ty: &SqlType) -> Value {
    match ty {
        SqlType::Float | SqlType::Double => Value::Double(0.0),
        SqlType::Decimal { scale, .. } => Value::Decimal(if *scale == 0 {
            "0".to_string()
        } else {
            format!("0.{}", "0".repeat(usize::from(*scale)))
        }),
        SqlType::Date => Value::Date {
            year: 0,
            month: 0,
            day: 0,
        },
        SqlType::DateTime(_) | SqlType::Timestamp(_) => Value::DateTime {
            year: 0,
            month: 0,
            day: 0,
            hour: 0,
            minute: 0,
            second: 0,
            micros: 0,
        },
        SqlType::Time(_) => Value::Time {
            negative: false,
            hours: 0,
            minutes: 0,
            seconds: 0,
            micros: 0,
        },
        SqlType::Year => Value::Year(0),
        // MariaDB's implicit default of a NOT NULL ENUM is its first member.
        SqlType::Enum(_) => Value::UInt(1),
        SqlType::Set(_) | SqlType::Bit(_) => Value::UInt(0),
        t if t.is_integer() => Value::Int(0),
        _ => Value::bytes(Vec::new()),
    }
}

/// DROP TABLE / DATABASE / INDEX; the affected rows MariaDB 10.11.14 answers (DROP DATABASE:
/// the tables and views it dropped; 0 otherwise).
pub(crate) fn drop(
    cx: &ExecContext,
    object_type: &ast::ObjectType,
    if_exists: bool,
    names: &[ast::ObjectName],
    table: Option<&ast::ObjectName>,
    sql: &str,
) -> Result<u64, SqlError> {
    assert_no_transaction(cx);
    let engine = &cx.server.engine;
    match object_type {
        ast::ObjectType::Table => {
            // Check all first, like MySQL reports every unknown table.
            let mut missing = Vec::new();
            let mut keys = Vec::with_capacity(names.len());
            for n in names {
                let (db, t) = split_name(cx, n)?;
                cx.check_table_privilege(&db, &t, crate::privilege::DROP)?;
                keys.push((db, t));
            }
            let _lock = cx.exclusive_lock(&keys, false)?;
            let cat = engine.catalog();
            for n in names {
                let (db, t) = split_name(cx, n)?;
                if cat.view(&db, &t).is_some() {
                    // A view is not dropped by DROP TABLE: 1965, a note with IF EXISTS (the
                    // engine's drop below finds no table of that name and does nothing).
                    let e = crate::execute::view::is_a_view(&db, &t);
                    if !if_exists {
                        return Err(e);
                    }
                    crate::expr::warn("Note", e.code, e.message);
                    continue;
                }
                if cat.table_by_name(&db, &t).is_none() {
                    missing.push(format!("{db}.{t}"));
                }
            }
            if !missing.is_empty() {
                let e = SqlError::of(
                    errors::ER_BAD_TABLE_ERROR,
                    format!("Unknown table '{}'", missing.join(",")),
                );
                if !if_exists {
                    return Err(e);
                }
                // IF EXISTS: one note naming them all (MariaDB 10.11.14).
                crate::expr::warn("Note", e.code, e.message);
            }
            // As MariaDB: a parent another table references is not dropped (1451, after the
            // other tables are).
            let mut refused = None;
            for n in names {
                let (db, t) = split_name(cx, n)?;
                if fk::checks_on(cx) {
                    if let Err(e) = fk::check_drop(&engine.catalog(), &db, &t) {
                        refused = Some(e);
                        continue;
                    }
                }
                fk::logged_with_checks(cx, || engine.drop_table(&db, &t, true, sql))?;
            }
            refused.map_or(Ok(0), Err)
        }
        ast::ObjectType::Database | ast::ObjectType::Schema => {
            for n in names {
                let db = object_name_parts(n).join(".");
                cx.check_db_privilege(&db, crate::privilege::DROP)?;
                if crate::mysqlschema::is_database(&db) {
                    return Err(crate::mysqlschema::refuse_change(cx, ""));
                }
            }
            // MariaDB's affected rows: the tables and views dropped.
            let mut dropped = 0;
            for n in names {
                let db = object_name_parts(n).join(".");
                let tables: Vec<String> = engine
                    .catalog()
                    .tables_in(&db)
                    .iter()
                    .map(|t| t.name.clone())
                    .collect();
                let keys: Vec<(&str, &str)> = tables.iter().map(|t| (&*db, &**t)).collect();
                let _lock = cx.exclusive_lock(&keys, false)?;
                if fk::checks_on(cx) {
                    fk::check_drop_database(&engine.catalog(), &db)?;
                }
                let (objects, exists) = {
                    let cat = engine.catalog();
                    let n = cat.tables_in(&db).len() + cat.views_in(&db).len();
                    (n, cat.has_database(&db))
                };
                if if_exists && !exists {
                    let m = format!("Can't drop database '{db}'; database doesn't exist");
                    crate::expr::warn("Note", errors::ER_DB_DROP_EXISTS.code, m);
                }
                match engine.drop_database(&db, if_exists, sql) {
                    Err(onelog_engine::EngineError::NoSuchDatabase { .. }) => {
                        return Err(SqlError::of(
                            errors::ER_DB_DROP_EXISTS,
                            format!("Can't drop database '{db}'; database doesn't exist"),
                        ))
                    }
                    r => r?,
                }
                dropped += objects as u64;
            }
            Ok(dropped)
        }
        ast::ObjectType::Index => {
            let Some(t) = table else {
                return Err(SqlError::syntax(sql));
            };
            let (db, tn) = split_name(cx, t)?;
            cx.check_table_privilege(&db, &tn, crate::privilege::INDEX)?;
            for n in names {
                let ix = object_name_parts(n).join(".");
                if !if_exists || fk_index_exists(cx, (&db, &tn), &ix) {
                    drop_index_checked(cx, (&db, &tn), &ix, sql)?;
                } else {
                    let m = format!("Can't DROP INDEX `{ix}`; check that it exists");
                    crate::expr::warn("Note", 1091, m);
                }
            }
            Ok(0)
        }
        other => Err(SqlError::unsupported(&format!("DROP {other}"))),
    }
}

pub(crate) fn truncate(cx: &ExecContext, t: &ast::Truncate, sql: &str) -> Result<(), SqlError> {
    assert_no_transaction(cx);
    let mut keys = Vec::with_capacity(t.table_names.len());
    for n in &t.table_names {
        let (db, table) = split_name(cx, &n.name)?;
        // MariaDB: TRUNCATE needs DROP.
        cx.check_table_privilege(&db, &table, crate::privilege::DROP)?;
        keys.push((db, table));
    }
    let _lock = cx.exclusive_lock(&keys, false)?;
    for n in &t.table_names {
        let (db, table) = split_name(cx, &n.name)?;
        if fk::checks_on(cx) {
            fk::check_truncate(&cx.server.engine.catalog(), &db, &table)?;
        }
        fk::logged_with_checks(cx, || cx.server.engine.truncate_table(&db, &table, sql))?;
    }
    Ok(())
}

/// DROP INDEX, refused (1553) when a foreign key needs the index.
pub(super) fn drop_index_checked(
    cx: &ExecContext,
    (db, table): (&str, &str),
    ix: &str,
    sql: &str,
) -> Result<(), SqlError> {
    let _lock = cx.exclusive_lock(&[(db, table)], false)?;
    let cat = cx.server.engine.catalog();
    if let Some(t) = cat.table_by_name(db, table) {
        fk::check_drop_index(&cat, t, ix)?;
    }
    Ok(cx.server.engine.drop_index(db, table, ix, sql)?)
}

/// Whether DROP INDEX IF EXISTS has `ix` to drop (or a missing table to report).
fn fk_index_exists(cx: &ExecContext, (db, table): (&str, &str), ix: &str) -> bool {
    let cat = cx.server.engine.catalog();
    cat.table_by_name(db, table)
        .is_none_or(|t| t.index(ix).is_some())
}

pub(crate) fn create_database(
    cx: &ExecContext,
    name: &ast::ObjectName,
    if_not_exists: bool,
    sql: &str,
) -> Result<u64, SqlError> {
    assert_no_transaction(cx);
    let db = object_name_parts(name).join(".");
    cx.check_db_privilege(&db, crate::privilege::CREATE)?;
    let exists = || {
        SqlError::of(
            errors::ER_DB_CREATE_EXISTS,
            format!("Can't create database '{db}'; database exists"),
        )
    };
    if if_not_exists
        && (crate::mysqlschema::is_database(&db) || cx.server.engine.catalog().has_database(&db))
    {
        // MariaDB 10.11.14: Note 1007 and no row affected.
        let e = exists();
        crate::expr::warn("Note", e.code, e.message);
        return Ok(0);
    }
    if crate::mysqlschema::is_database(&db) {
        // The virtual `mysql` schema always exists.
        return Err(exists());
    }
    cx.server.engine.create_database(&db, if_not_exists, sql)?;
    Ok(1)
}
