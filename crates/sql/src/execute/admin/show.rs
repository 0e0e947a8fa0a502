//! SHOW statements over the catalog and the session: DATABASES, TABLES, CREATE TABLE,
//! CREATE DATABASE, COLUMNS (and DESCRIBE), INDEX, PROCESSLIST, WARNINGS/ERRORS, ENGINES,
//! COLLATION, CHARACTER SET.
//!
//! Formats follow MariaDB 10.11. Choices:
//! - SHOW CREATE TABLE prints `ENGINE=InnoDB`: onelog's store is transactional with row locks
//!   like InnoDB, and tools that copy a schema (mysqldump into MariaDB, ORMs comparing
//!   schemas) expect an engine they know; SHOW ENGINES lists `onelog` as the default engine
//!   and `InnoDB` as a supported alias of it, so `ENGINE=InnoDB` in DDL is accepted.
//! - Integer types are shown with their declared display width (`tinyint(1)`), else MariaDB's
//!   default one (`int(11)`, `bigint(20) unsigned`).
//! - Text columns show the collation the catalog keeps for them (SHOW FULL COLUMNS); SHOW
//!   CREATE TABLE prints `CHARACTER SET .. COLLATE ..` on a column whose collation is not the
//!   table's, and as the table's the one all its text columns share (else the default).
//! - SHOW DATABASES lists the databases of the catalog and the read-only `mysql` schema
//!   (`mysqlschema`, which also answers SHOW TABLES / COLUMNS / INDEX / CREATE TABLE of its
//!   tables); no `information_schema` or `performance_schema`.
//! - SHOW TABLE STATUS, OPEN TABLES, PROCEDURE / FUNCTION STATUS, TRIGGERS, EVENTS and
//!   ENGINE are in `show_status`.
//!
//! Invariants: SHOW reads only what the session may see (SHOW DATABASES filters by privilege,
//! the table statements check a privilege on the table's database first: 1044); LIKE and WHERE
//! filters apply to the result's own columns, so a filter never changes a row's values.

use onelog_binlog::Value;
use onelog_engine::{SqlType, TableDef};

use crate::context::ExecContext;
use crate::error::SqlError;
use crate::like::like;
use crate::parse::admin::{Cond, Filter};

pub(crate) fn text(s: impl Into<String>) -> Value {
    Value::bytes(s.into().into_bytes())
}

fn opt_text(s: Option<String>) -> Value {
    s.map_or(Value::Null, text)
}

/// Applies a LIKE/WHERE filter to rows whose column names are `columns`; LIKE applies to
/// column `like_col`.
pub(crate) fn filter_rows(
    columns: &[&str],
    like_col: usize,
    rows: Vec<Vec<Value>>,
    filter: &Filter,
) -> Result<Vec<Vec<Value>>, SqlError> {
    let cell = |row: &[Value], i: usize| -> String {
        match row.get(i) {
            Some(Value::Bytes(b)) => String::from_utf8_lossy(b).into_owned(),
            Some(Value::Null) | None => String::new(),
            Some(v) => String::from_utf8_lossy(&crate::render::text_plain(v)).into_owned(),
        }
    };
    match filter {
        Filter::None => Ok(rows),
        Filter::Like(p) => Ok(rows
            .into_iter()
            .filter(|r| like(p, &cell(r, like_col)))
            .collect()),
        Filter::Where(ors) => {
            let col_of = |name: &str| -> Result<usize, SqlError> {
                columns
                    .iter()
                    .position(|c| c.eq_ignore_ascii_case(name))
                    .ok_or_else(|| SqlError::unknown_column(name, "WHERE"))
            };
            // Resolve columns first so an unknown one is an error even on no rows.
            let mut resolved = Vec::new();
            for and in ors {
                let mut v = Vec::new();
                for c in and {
                    v.push(match c {
                        Cond::Eq(n, x) => (col_of(n)?, 0, vec![x.clone()]),
                        Cond::Like(n, x) => (col_of(n)?, 1, vec![x.clone()]),
                        Cond::In(n, xs) => (col_of(n)?, 0, xs.clone()),
                    });
                }
                resolved.push(v);
            }
            Ok(rows
                .into_iter()
                .filter(|r| {
                    resolved.iter().any(|and| {
                        and.iter().all(|(i, kind, xs)| {
                            let c = cell(r, *i);
                            xs.iter().any(|x| {
                                if *kind == 1 {
                                    like(x, &c)
                                } else {
                                    x.eq_ignore_ascii_case(&c)
                                }
                            })
                        })
                    })
                })
                .collect())
        }
    }
}

pub(crate) fn databases(cx: &ExecContext) -> Vec<Vec<Value>> {
    let cat = cx.server.engine.catalog();
    // `information_schema` is listed for every account, as MariaDB lists it; names sort
    // byte-wise as MariaDB sorts them (`Zed` before `aaa` before `information_schema`).
    let mut names: Vec<&str> = cat
        .databases()
        .chain([crate::mysqlschema::DATABASE])
        .filter(|n| cx.may_see_db(n))
        .chain([crate::schema_names::INFORMATION_SCHEMA])
        .collect();
    names.sort_unstable();
    names.dedup();
    names.into_iter().map(|n| vec![text(n)]).collect()
}

pub(crate) fn resolve_db(cx: &ExecContext, db: Option<String>) -> Result<String, SqlError> {
    let db = match db {
        Some(d) => d,
        None => cx.current_db.clone().ok_or_else(SqlError::no_database)?,
    };
    cx.require_some_on_db(&db)?;
    let virtual_db = crate::mysqlschema::is_database(&db);
    if !virtual_db && !cx.server.engine.catalog().has_database(&db) {
        return Err(SqlError::unknown_database(&db));
    }
    Ok(db)
}

/// SHOW [FULL] TABLES of a catalog database or `mysql`: the column name and rows
/// (`information_schema`'s: `execute::admin::tables`).
pub(crate) fn tables(
    cx: &ExecContext,
    full: bool,
    db: Option<String>,
) -> Result<(String, Vec<Vec<Value>>), SqlError> {
    let db = resolve_db(cx, db)?;
    let cat = cx.server.engine.catalog();
    // Tables and views, by name (a name is never both).
    let mut named: Vec<(&str, &str)> = if crate::mysqlschema::is_database(&db) {
        crate::mysqlschema::show_tables()
    } else {
        Vec::new()
    };
    named.extend(
        cat.tables_in(&db)
            .iter()
            .map(|t| (t.name.as_str(), "BASE TABLE"))
            .chain(cat.views_in(&db).iter().map(|v| (v.name.as_str(), "VIEW"))),
    );
    named.sort_unstable();
    let rows = named
        .into_iter()
        .map(|(name, ty)| {
            let mut r = vec![text(name)];
            if full {
                r.push(text(ty));
            }
            r
        })
        .collect();
    Ok((format!("Tables_in_{db}"), rows))
}

/// The definition of a catalog table or view `db`.`table` (`information_schema`'s:
/// `execute::admin::table_def`).
pub(crate) fn table_def(
    cx: &ExecContext,
    db: Option<String>,
    table: &str,
) -> Result<std::sync::Arc<TableDef>, SqlError> {
    let db = match db {
        Some(d) => d,
        None => cx.current_db.clone().ok_or_else(SqlError::no_database)?,
    };
    cx.require_some_on_db(&db)?;
    let cat = cx.server.engine.catalog();
    if let Some(t) = cat.table_by_name(&db, table) {
        return Ok(t.clone());
    }
    // A view: the columns its SELECT gives.
    match cat.view(&db, table).cloned() {
        Some(v) => crate::plan::select::view::view_table_def(cx, &v),
        None => Err(SqlError::no_such_table(&db, table)),
    }
}

/// A column's type as MariaDB shows it: an integer with its declared display width
/// (`tinyint(1)`), else the type's default width; FLOAT/DOUBLE with its (M,D).
pub(crate) fn column_type_text(c: &onelog_engine::ColumnDef) -> String {
    if c.ty.member_count() > 0 {
        // `enum('a','it''s')`, as MariaDB prints it.
        let list: Vec<String> = c
            .members
            .iter()
            .map(|m| format!("'{}'", m.replace('\'', "''")))
            .collect();
        return format!("{}({})", c.ty.sql_name(), list.join(","));
    }
    if let Some((m, d)) = c.extras.float_digits {
        // `float(7,3)`, `double(10,2)` (REAL(M,D) and DOUBLE PRECISION(M,D) are DOUBLE).
        return format!("{}({m},{d})", c.ty.sql_name());
    }
    type_text_width(&c.ty, c.extras.display_width)
}

/// A column's default as SHOW CREATE TABLE and DESCRIBE read it: an ENUM's or SET's stored
/// number as its text, a FLOAT(M,D)'s with D decimals.
pub(crate) fn default_text(c: &onelog_engine::ColumnDef, v: &Value) -> Value {
    match (c.ty, v) {
        (SqlType::Bit(_), Value::UInt(n)) => Value::bytes(format!("b'{n:b}'").into_bytes()),
        (SqlType::Enum(_) | SqlType::Set(_), Value::UInt(n)) => {
            let set = matches!(c.ty, SqlType::Set(_));
            let names: Vec<&str> = if set {
                c.members
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| *i < 64 && n >> i & 1 == 1)
                    .map(|(_, m)| m.as_str())
                    .collect()
            } else {
                usize::try_from(*n)
                    .ok()
                    .and_then(|i| i.checked_sub(1))
                    .and_then(|i| c.members.get(i))
                    .map(|m| vec![m.as_str()])
                    .unwrap_or_default()
            };
            Value::bytes(names.join(",").into_bytes())
        }
        // FLOAT(M,D): with its D decimals (`DEFAULT 3.00`), as MariaDB shows it.
        (SqlType::Float | SqlType::Double, Value::Float(_) | Value::Double(_))
            if c.extras.float_digits.is_some() =>
        {
            let d = c.extras.float_digits.map_or(0, |(_, d)| usize::from(d));
            let x = crate::expr::to_f64_quiet(v).unwrap_or_default();
            Value::Decimal(format!("{x:.d$}"))
        }
        _ => v.clone(),
    }
}

fn type_text_width(ty: &SqlType, width: Option<u16>) -> String {
    let (base, w_signed, w_unsigned, unsigned) = match *ty {
        SqlType::TinyInt { unsigned } => ("tinyint", 4, 3, unsigned),
        SqlType::SmallInt { unsigned } => ("smallint", 6, 5, unsigned),
        SqlType::MediumInt { unsigned } => ("mediumint", 9, 8, unsigned),
        SqlType::Int { unsigned } => ("int", 11, 10, unsigned),
        SqlType::BigInt { unsigned } => ("bigint", 20, 20, unsigned),
        SqlType::Year => return "year(4)".into(),
        _ => return ty.sql_name(),
    };
    match (width, unsigned) {
        (Some(w), true) => format!("{base}({w}) unsigned"),
        (Some(w), false) => format!("{base}({w})"),
        (None, true) => format!("{base}({w_unsigned}) unsigned"),
        (None, false) => format!("{base}({w_signed})"),
    }
}

fn quote_ident(s: &str) -> String {
    format!("`{}`", s.replace('`', "``"))
}

/// A default value as SHOW CREATE TABLE prints it.
fn default_sql(v: &Value) -> String {
    match v {
        Value::Null => "NULL".into(),
        Value::Int(_) | Value::UInt(_) | Value::Decimal(_) | Value::Float(_) | Value::Double(_) => {
            String::from_utf8_lossy(&crate::render::text_plain(v)).into_owned()
        }
        other => {
            let s = String::from_utf8_lossy(&crate::render::text_plain(other)).into_owned();
            crate::execute::admin::accounts::quote(&s)
        }
    }
}

/// `current_timestamp()` / `current_timestamp(n)` as MariaDB prints a default or ON UPDATE.
pub(crate) fn now_sql(fsp: u8) -> String {
    match fsp {
        0 => "current_timestamp()".into(),
        n => format!("current_timestamp({n})"),
    }
}

/// The table's indexes in the order MariaDB keeps and shows them (its `sort_keys`): unique
/// keys first, those without a nullable column before the others, then the rest; otherwise
/// in the order they were added.
pub(crate) fn keys_in_order(t: &TableDef) -> Vec<&onelog_engine::IndexDef> {
    let mut keys: Vec<&onelog_engine::IndexDef> = t.indexes.iter().collect();
    let nullable = |i: &onelog_engine::IndexDef| i.columns.iter().any(|&c| t.columns[c].nullable);
    keys.sort_by_key(|i| (!i.unique, i.unique && nullable(i)));
    keys
}

/// A column's DEFAULT clause as SHOW CREATE TABLE prints it (and
/// information_schema.COLUMNS.COLUMN_DEFAULT shows it): None when it has none (a NOT NULL
/// column without default).
pub(crate) fn column_default_sql(c: &onelog_engine::ColumnDef) -> Option<String> {
    match (&c.default, c.extras.default_now) {
        (_, Some(fsp)) => Some(now_sql(fsp)),
        (Some(v), None) => Some(match (c.ty, default_text(c, v)) {
            // `b'101'` as written, not quoted.
            (SqlType::Bit(_), Value::Bytes(b)) => String::from_utf8_lossy(&b).into_owned(),
            (_, d) => default_sql(&d),
        }),
        (None, None) if c.nullable => Some("NULL".into()),
        (None, None) => None,
    }
}

/// SHOW CREATE TABLE text; `auto_increment_next`: the table's next AUTO_INCREMENT value
/// (shown as `AUTO_INCREMENT=N` when the table has such a column and N > 1, as MariaDB).
pub(crate) fn create_table_sql(t: &TableDef, auto_increment_next: u64) -> String {
    let table_coll = table_collation(t);
    let mut lines = Vec::new();
    for c in &t.columns {
        let mut l = format!("  {} {}", quote_ident(&c.name), column_type_text(c));
        if let Some(coll) = c.collation.filter(|&k| k != table_coll) {
            l.push_str(&format!(
                " CHARACTER SET {} COLLATE {}",
                coll.charset(),
                coll.name()
            ));
        }
        if !c.nullable {
            l.push_str(" NOT NULL");
        } else if matches!(c.ty, SqlType::Timestamp(_)) {
            // MariaDB names the NULL of a nullable TIMESTAMP.
            l.push_str(" NULL");
        }
        if let Some(d) = column_default_sql(c) {
            l.push_str(" DEFAULT ");
            l.push_str(&d);
        }
        if let Some(fsp) = c.extras.on_update_now {
            l.push_str(" ON UPDATE ");
            l.push_str(&now_sql(fsp));
        }
        if c.auto_increment {
            l.push_str(" AUTO_INCREMENT");
        }
        if !c.extras.comment.is_empty() {
            l.push_str(" COMMENT ");
            l.push_str(&crate::execute::admin::accounts::quote(&c.extras.comment));
        }
        l.push_str(&crate::execute::check::show_column(t, &c.name));
        if c.ty == SqlType::Json {
            // MariaDB's automatic constraint of a JSON column.
            l.push_str(&format!(" CHECK (json_valid({}))", quote_ident(&c.name)));
        }
        lines.push(l);
    }
    let cols = |ps: &[usize]| {
        ps.iter()
            .map(|&p| quote_ident(&t.columns[p].name))
            .collect::<Vec<_>>()
            .join(",")
    };
    let options = crate::execute::keys::show_options;
    if !t.primary_key.is_empty() {
        lines.push(format!(
            "  PRIMARY KEY ({}){}",
            cols(&t.primary_key),
            options(&t.options.primary)
        ));
    }
    for i in keys_in_order(t) {
        lines.push(format!(
            "  {}KEY {} ({}){}",
            if i.unique { "UNIQUE " } else { "" },
            quote_ident(&i.name),
            cols(&i.columns),
            options(&i.options)
        ));
    }
    for fk in &t.options.foreign_keys {
        lines.push(crate::execute::fk::show_line(&t.db, fk));
    }
    lines.extend(crate::execute::check::show_lines(t));
    let auto = match t.auto_increment {
        Some(_) if auto_increment_next > 1 => format!(" AUTO_INCREMENT={auto_increment_next}"),
        _ => String::new(),
    };
    let comment = match t.options.comment.as_str() {
        "" => String::new(),
        c => format!(" COMMENT={}", crate::execute::admin::accounts::quote(c)),
    };
    format!(
        "CREATE TABLE {} (\n{}\n) ENGINE=InnoDB{auto} DEFAULT CHARSET={} COLLATE={}{comment}",
        quote_ident(&t.name),
        lines.join(",\n"),
        table_coll.charset(),
        table_coll.name()
    )
}

/// The table collation SHOW CREATE TABLE prints (`expr::table_collation`).
pub(crate) use crate::expr::table_collation;

/// SHOW CREATE DATABASE: needs some privilege on the database (1044 otherwise, also for a
/// database that does not exist, as MariaDB: the check comes first).
/// `if_not_exists` (SHOW CREATE DATABASE IF NOT EXISTS) prints MariaDB's
/// `/*!32312 IF NOT EXISTS*/`; the `mysql` schema shows MariaDB's latin1 default.
pub(crate) fn create_database_sql(
    cx: &ExecContext,
    name: &str,
    if_not_exists: bool,
) -> Result<String, SqlError> {
    cx.require_some_on_db(name)?;
    let virtual_db = crate::mysqlschema::is_database(name);
    if !virtual_db && !cx.server.engine.catalog().has_database(name) {
        return Err(SqlError::unknown_database(name));
    }
    let charset = if virtual_db {
        "latin1 COLLATE latin1_swedish_ci"
    } else {
        "utf8mb4 COLLATE utf8mb4_general_ci"
    };
    Ok(format!(
        "CREATE DATABASE {}{} /*!40100 DEFAULT CHARACTER SET {charset} */",
        if if_not_exists {
            "/*!32312 IF NOT EXISTS*/ "
        } else {
            ""
        },
        quote_ident(name)
    ))
}

pub(crate) fn is_text_type(ty: &SqlType) -> bool {
    ty.is_text() || matches!(ty, SqlType::Char(_) | SqlType::VarChar(_))
}

/// SHOW [FULL] COLUMNS rows: Field, Type, [Collation], Null, Key, Default, Extra,
/// [Privileges, Comment].
pub(crate) fn columns(t: &TableDef, full: bool) -> Vec<Vec<Value>> {
    t.columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let key = if t.primary_key.contains(&i) {
                "PRI"
            } else if t.indexes.iter().any(|x| x.unique && x.columns == [i]) {
                // A column that starts a unique key of several columns is MUL in MariaDB.
                "UNI"
            } else if t.indexes.iter().any(|x| x.columns.first() == Some(&i)) {
                "MUL"
            } else {
                ""
            };
            let default = match (&c.default, c.extras.default_now) {
                (_, Some(fsp)) => text(now_sql(fsp)),
                (Some(Value::Null) | None, None) => Value::Null,
                (Some(v), None) => text(
                    String::from_utf8_lossy(&crate::render::text_plain(&default_text(c, v)))
                        .into_owned(),
                ),
            };
            let mut r = vec![text(c.name.clone()), text(column_type_text(c))];
            if full {
                // ENUM and SET members compare as text: MariaDB shows their collation too.
                let coll = match c.collation.filter(|_| is_text_type(&c.ty)) {
                    None if c.ty.member_count() > 0 => {
                        Some(c.collation.unwrap_or_else(|| table_collation(t)))
                    }
                    coll => coll,
                };
                r.push(coll.map_or(Value::Null, |k| text(k.name())));
            }
            r.push(text(if c.nullable { "YES" } else { "NO" }));
            r.push(text(key));
            r.push(default);
            r.push(text(match c.extras.on_update_now {
                _ if c.auto_increment => "auto_increment".into(),
                Some(fsp) => format!("on update {}", now_sql(fsp)),
                None => String::new(),
            }));
            if full {
                r.push(text("select,insert,update,references"));
                r.push(text(c.extras.comment.clone()));
            }
            r
        })
        .collect()
}

/// Column names of SHOW [FULL] COLUMNS.
pub(crate) fn column_names(full: bool) -> Vec<&'static str> {
    if full {
        vec![
            "Field",
            "Type",
            "Collation",
            "Null",
            "Key",
            "Default",
            "Extra",
            "Privileges",
            "Comment",
        ]
    } else {
        vec!["Field", "Type", "Null", "Key", "Default", "Extra"]
    }
}

pub(crate) const INDEX_COLUMNS: &[&str] = &[
    "Table",
    "Non_unique",
    "Key_name",
    "Seq_in_index",
    "Column_name",
    "Collation",
    "Cardinality",
    "Sub_part",
    "Packed",
    "Null",
    "Index_type",
    "Comment",
    "Index_comment",
    "Ignored",
];

/// SHOW INDEX rows (MariaDB 10.11 columns).
pub(crate) fn index_rows(t: &TableDef) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    let mut push = |name: &str, unique: bool, cols: &[usize], comment: &str| {
        for (seq, &p) in cols.iter().enumerate() {
            let c = &t.columns[p];
            out.push(vec![
                text(t.name.clone()),
                Value::Int(i64::from(!unique)),
                text(name),
                Value::Int(seq as i64 + 1),
                text(c.name.clone()),
                text("A"),
                Value::Null,
                Value::Null,
                Value::Null,
                text(if c.nullable { "YES" } else { "" }),
                // Every key is a B-tree (InnoDB's says BTREE for `USING HASH` too).
                text("BTREE"),
                text(""),
                text(comment),
                text("NO"),
            ]);
        }
    };
    push("PRIMARY", true, &t.primary_key, &t.options.primary.comment);
    for i in keys_in_order(t) {
        push(&i.name, i.unique, &i.columns, &i.options.comment);
    }
    out
}

pub(crate) const PROCESSLIST_COLUMNS: &[&str] = &[
    "Id", "User", "Host", "db", "Command", "Time", "State", "Info", "Progress",
];

/// SHOW PROCESSLIST rows: every registered connection, with its running statement (from the
/// connection's [`ConnControl`](crate::guard::ConnControl)) as Command/Time/State/Info.
pub(crate) fn processlist(cx: &ExecContext, full: bool) -> Vec<Vec<Value>> {
    let mut conns = cx.server.connections();
    conns.sort_by_key(|c| c.info.id);
    // Without PROCESS (or SUPER) a user sees only its own connections, as in MariaDB.
    let all = !cx.is_checked()
        || cx.privileges_on("*") & (crate::privilege::PROCESS | crate::privilege::SUPER) != 0;
    conns.retain(|c| all || c.info.user == cx.user);
    let mut rows: Vec<Vec<Value>> = conns
        .iter()
        .map(|c| {
            let me = c.info.id == cx.connection_id;
            // A running statement shows as `Query` with its state and text (cut to 100
            // characters without FULL, as MariaDB); an idle connection shows its command
            // (`Sleep`, `Binlog Dump`) and the time since its last statement.
            // The session's own statement is in its guard (an embedded session may have been
            // made before its connection was registered).
            let a = if me {
                cx.guard.control().activity()
            } else {
                c.ctl.activity()
            };
            let (command, state, info) = if a.running {
                let info = if full {
                    a.info
                } else {
                    a.info.chars().take(100).collect()
                };
                ("Query", a.state, text(info))
            } else {
                (c.info.command.as_str(), c.info.state, Value::Null)
            };
            vec![
                Value::Int(i64::from(c.info.id)),
                text(c.info.user.clone()),
                text(c.info.host.clone()),
                opt_text(if me {
                    cx.current_db.clone()
                } else {
                    c.info.db.clone()
                }),
                text(command),
                Value::Int(a.since.elapsed().as_secs() as i64),
                text(state),
                info,
                Value::Decimal("0.000".into()),
            ]
        })
        .collect();
    if !conns.iter().any(|c| c.info.id == cx.connection_id) {
        // A session that is not registered (embedded use, tests) still sees itself.
        rows.push(vec![
            Value::Int(i64::from(cx.connection_id)),
            text(cx.user.clone()),
            text(cx.host.clone()),
            opt_text(cx.current_db.clone()),
            text("Query"),
            Value::Int(0),
            text("starting"),
            text(if full {
                "SHOW FULL PROCESSLIST"
            } else {
                "SHOW PROCESSLIST"
            }),
            Value::Decimal("0.000".into()),
        ]);
    }
    rows
}

/// SHOW WARNINGS / SHOW ERRORS rows: Level, Code, Message.
pub(crate) fn warnings(cx: &ExecContext, errors_only: bool) -> Vec<Vec<Value>> {
    cx.warnings
        .iter()
        .filter(|w| !errors_only || w.0 == "Error")
        .map(|(level, code, msg)| {
            vec![
                text(level.clone()),
                Value::Int(i64::from(*code)),
                text(msg.clone()),
            ]
        })
        .collect()
}

pub(crate) const ENGINE_COLUMNS: &[&str] = &[
    "Engine",
    "Support",
    "Comment",
    "Transactions",
    "XA",
    "Savepoints",
];

pub(crate) fn engines() -> Vec<Vec<Value>> {
    vec![
        vec![
            text("onelog"),
            text("DEFAULT"),
            text("Transactional MVCC store whose write-ahead log is the binlog"),
            text("YES"),
            text("NO"),
            text("YES"),
        ],
        vec![
            text("InnoDB"),
            text("YES"),
            text("Alias of onelog: tables created with ENGINE=InnoDB are onelog tables"),
            text("YES"),
            text("NO"),
            text("YES"),
        ],
    ]
}

pub(crate) const COLLATION_COLUMNS: &[&str] = &[
    "Collation",
    "Charset",
    "Id",
    "Default",
    "Compiled",
    "Sortlen",
];

pub(crate) fn collations() -> Vec<Vec<Value>> {
    let row = |name: &str, cs: &str, id: i64, def: &str| {
        vec![
            text(name),
            text(cs),
            Value::Int(id),
            text(def),
            text("Yes"),
            Value::Int(1),
        ]
    };
    vec![
        row("binary", "binary", 63, "Yes"),
        row("utf8mb4_bin", "utf8mb4", 46, ""),
        row("utf8mb4_general_ci", "utf8mb4", 45, "Yes"),
        {
            let mut r = row("utf8mb4_unicode_ci", "utf8mb4", 224, "");
            r[5] = Value::Int(8);
            r
        },
    ]
}

pub(crate) const CHARSET_COLUMNS: &[&str] =
    &["Charset", "Description", "Default collation", "Maxlen"];

pub(crate) fn charsets() -> Vec<Vec<Value>> {
    vec![
        vec![
            text("binary"),
            text("Binary pseudo charset"),
            text("binary"),
            Value::Int(1),
        ],
        vec![
            text("utf8mb4"),
            text("UTF-8 Unicode"),
            text("utf8mb4_general_ci"),
            Value::Int(4),
        ],
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use onelog_engine::{ColumnSpec, IndexSpec, TableSpec};

    #[test]
    fn create_table_text_matches_mariadb_layout() {
        let spec = TableSpec {
            db: "d".into(),
            name: "t".into(),
            columns: vec![
                ColumnSpec::new("id", SqlType::BigInt { unsigned: true })
                    .not_null()
                    .auto_increment(),
                ColumnSpec::new("name", SqlType::VarChar(20))
                    .not_null()
                    .default(Value::bytes(b"x'y")),
                ColumnSpec::new("n", SqlType::Int { unsigned: false }).default(Value::Int(0)),
                ColumnSpec::new("note", SqlType::Text),
            ],
            primary_key: vec!["id".into()],
            indexes: vec![
                IndexSpec::new("by_name", &["name"], true),
                IndexSpec::new("k", &["n", "name"], false),
            ],
        };
        let t = TableDef::from_spec(1, &spec).unwrap();
        assert_eq!(
            create_table_sql(&t, 1),
            "CREATE TABLE `t` (\n  `id` bigint(20) unsigned NOT NULL AUTO_INCREMENT,\n  `name` varchar(20) NOT NULL DEFAULT 'x''y',\n  `n` int(11) DEFAULT 0,\n  `note` text DEFAULT NULL,\n  PRIMARY KEY (`id`),\n  UNIQUE KEY `by_name` (`name`),\n  KEY `k` (`n`,`name`)\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci"
        );
        let cols = columns(&t, false);
        assert_eq!(
            cols[0],
            vec![
                text("id"),
                text("bigint(20) unsigned"),
                text("NO"),
                text("PRI"),
                Value::Null,
                text("auto_increment")
            ]
        );
        assert_eq!(cols[1][3], text("UNI"));
        assert_eq!(cols[2][3], text("MUL"));
        assert_eq!(cols[2][4], text("0"));
        let idx = index_rows(&t);
        assert_eq!(idx.len(), 4);
        assert_eq!(idx[3][2], text("k"));
        assert_eq!(idx[3][3], Value::Int(2));
        assert_eq!(idx[3][1], Value::Int(1));
    }

    #[test]
    fn where_filters_match_any_disjunct() {
        let rows = vec![vec![text("a"), text("1")], vec![text("b"), text("2")]];
        let f = Filter::Where(vec![vec![Cond::In("NAME".into(), vec!["B".into()])]]);
        let got = filter_rows(&["name", "value"], 0, rows.clone(), &f).unwrap();
        assert_eq!(got, vec![rows[1].clone()]);
        let bad = Filter::Where(vec![vec![Cond::Eq("nope".into(), "x".into())]]);
        assert_eq!(
            filter_rows(&["name"], 0, rows, &bad).unwrap_err().code,
            1054
        );
    }
}
