//! The view statements: CREATE [OR REPLACE] VIEW, ALTER VIEW, DROP VIEW, SHOW CREATE VIEW
//! (and SHOW CREATE TABLE of a view), RENAME TABLE of views.
//!
//! CREATE VIEW validates the SELECT by compiling it as the view will be read
//! (`plan::select::view`: 1146 / 1054 / 1142 / 1060 / 1353 as MariaDB), fixes the view's
//! column names, and stores the SELECT's text as written with the database its unqualified
//! names resolve against. The statement is logged as MariaDB logs it: a Query event with the
//! creating session's current database and the text `CREATE [OR REPLACE] ALGORITHM=...
//! DEFINER=... SQL SECURITY ... VIEW name [(columns)] AS <select as written> [WITH ... CHECK
//! OPTION]`, which a MariaDB replica (and a onelog one) runs to the same view.
//!
//! Privileges as MariaDB: CREATE VIEW on the view (and DROP for OR REPLACE / ALTER), SELECT
//! on what the SELECT reads, SUPER to name another definer (1227); DROP on each dropped view;
//! SHOW VIEW for SHOW CREATE VIEW.
//!
//! Invariant: the session commits its transaction before a view DDL (implicit commit), as for
//! every DDL. Called by the session (`try_execute`, before the other parsers) and by
//! `execute::ddl` (RENAME TABLE of views, DROP TABLE of a view).

use onelog_binlog::Value;
use onelog_engine::{ViewAlgorithm, ViewCheck, ViewDef};
use onelog_protocol::errors;

use crate::context::ExecContext;
use crate::error::SqlError;
use crate::output::{Column, Output};
use crate::parse::view::{CreateView, ViewStmt};
use crate::plan::select::view as plan_view;
use crate::privilege::{CREATE_VIEW, DROP, SHOW_VIEW, SUPER};

/// Runs `sql` when it is a view statement (None otherwise).
pub(crate) fn try_execute(cx: &mut ExecContext, sql: &str) -> Option<Result<Output, SqlError>> {
    let text = crate::parse::strip_comments(sql);
    let stmt = match crate::parse::view::parse(&text)? {
        Ok(s) => s,
        Err(e) => return Some(Err(e)),
    };
    cx.warnings.clear();
    Some(run(cx, stmt, &text))
}

fn run(cx: &mut ExecContext, stmt: ViewStmt, sql: &str) -> Result<Output, SqlError> {
    match stmt {
        ViewStmt::ShowCreate { db, name } => {
            let db = db_or_current(cx, db)?;
            show_create(cx, &db, &name)
        }
        ViewStmt::Create(c) => {
            if !cx.table_locks.locked().is_empty() {
                return Err(crate::execute::admin::table_lock::lock_or_active_transaction());
            }
            crate::sysvar::replica::check_read_only(cx)?;
            cx.commit()?;
            create(cx, c)?;
            Ok(Output::ok().with_warning_count(cx.warning_count()))
        }
        ViewStmt::Drop { if_exists, names } => {
            crate::sysvar::replica::check_read_only(cx)?;
            cx.commit()?;
            drop_views(cx, if_exists, names, sql)?;
            Ok(Output::ok().with_warning_count(cx.warning_count()))
        }
    }
}

fn db_or_current(cx: &ExecContext, db: Option<String>) -> Result<String, SqlError> {
    match db {
        Some(d) => Ok(d),
        None => cx.current_db.clone().ok_or_else(SqlError::no_database),
    }
}

/// 1347: `db.name` is not of the type a statement needs.
fn wrong_object(db: &str, name: &str, ty: &str) -> SqlError {
    SqlError::of(
        errors::ER_WRONG_OBJECT,
        format!("'{db}.{name}' is not of type '{ty}'"),
    )
}

/// The session's account as a definer: its user and host pattern (the login's user and
/// host when privileges are not enforced).
fn current_user(cx: &ExecContext) -> (String, String) {
    match cx.privs.account() {
        Some(a) => (a.user.clone(), a.host.clone()),
        None if cx.host.is_empty() => (cx.user.clone(), "localhost".into()),
        None => (cx.user.clone(), cx.host.clone()),
    }
}

/// `CREATE VIEW` / `ALTER VIEW`.
fn create(cx: &mut ExecContext, c: CreateView) -> Result<(), SqlError> {
    let db = db_or_current(cx, c.db.clone())?;
    let replace = c.or_replace || c.alter;
    let need = if replace {
        CREATE_VIEW | DROP
    } else {
        CREATE_VIEW
    };
    cx.check_table_privilege(&db, &c.name, need)?;
    let cat = cx.server.engine.catalog();
    let old = cat.view(&db, &c.name).cloned();
    let is_table = cat.table_by_name(&db, &c.name).is_some();
    std::mem::drop(cat);
    if (c.alter && old.is_none()) || (c.or_replace && is_table) {
        return Err(if is_table {
            wrong_object(&db, &c.name, "VIEW")
        } else {
            SqlError::no_such_table(&db, &c.name)
        });
    }
    if !replace && (is_table || old.is_some()) {
        let msg = format!("Table '{}' already exists", c.name);
        if c.if_not_exists {
            cx.warnings.push(("Note".into(), 1050, msg));
            return Ok(());
        }
        return Err(SqlError::of(errors::ER_TABLE_EXISTS_ERROR, msg));
    }
    let inherit = old.as_deref().filter(|_| c.alter);
    let me = current_user(cx);
    let definer = match (&c.definer, inherit) {
        (Some(d), _) => d.clone(),
        (None, Some(o)) => o.definer.clone(),
        (None, None) => me.clone(),
    };
    if definer != me {
        cx.require_global(SUPER, "SUPER, SET USER")?;
    }
    let query_db = cx.current_db.clone().unwrap_or_default();
    let (_, defs) = plan_view::compile_body(cx, &c.query, &query_db)?;
    let mut algorithm = c
        .algorithm
        .or(inherit.map(|o| o.algorithm))
        .unwrap_or(ViewAlgorithm::Undefined);
    if algorithm == ViewAlgorithm::Merge
        && !plan_view::mergeable(&plan_view::parse_body(&c.query, "")?)
    {
        cx.warnings.push((
            "Warning".into(),
            1354,
            "View merge algorithm can't be used here for now (assumed undefined algorithm)".into(),
        ));
        algorithm = ViewAlgorithm::Undefined;
    }
    let columns = view_columns(&c.columns, defs.iter().map(|d| d.name.clone()).collect())?;
    if cx.privs.enforce
        && cx
            .server
            .engine
            .catalog()
            .account(&definer.0, &definer.1)
            .is_none()
    {
        let e = plan_view::no_such_definer(&definer.0, &definer.1);
        cx.warnings.push(("Note".into(), e.code, e.message));
    }
    let view = ViewDef {
        db,
        name: c.name.clone(),
        columns,
        query: c.query.clone(),
        query_db,
        algorithm,
        definer,
        invoker: c.invoker.or(inherit.map(|o| o.invoker)).unwrap_or(false),
        check: c.check,
    };
    let logged = logged_create(cx, &c, &view);
    let event_db = event_db(cx, &view.db);
    cx.server
        .engine
        .create_view(&event_db, view, replace, c.if_not_exists, &logged)?;
    Ok(())
}

/// The view's column names: the column list (1353 when its length differs from the
/// SELECT's), else the SELECT's names; 1060 for a name given twice.
fn view_columns(list: &[String], select: Vec<String>) -> Result<Vec<String>, SqlError> {
    let names = if list.is_empty() {
        select
    } else if list.len() != select.len() {
        return Err(SqlError::of(
            errors::ER_VIEW_WRONG_LIST,
            "View's SELECT and view's field list have different column counts",
        ));
    } else {
        list.to_vec()
    };
    for (i, n) in names.iter().enumerate() {
        if names[..i].iter().any(|m| m.eq_ignore_ascii_case(n)) {
            return Err(SqlError::of(
                errors::ER_DUP_FIELDNAME,
                format!("Duplicate column name '{n}'"),
            ));
        }
    }
    Ok(names)
}

/// The database a view DDL's Query event runs in: the session's current one (the view's
/// when there is none; its name is then qualified).
fn event_db(cx: &ExecContext, view_db: &str) -> String {
    cx.current_db.clone().unwrap_or_else(|| view_db.to_string())
}

fn quote(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

/// The view's name as a statement run in database `current` writes it.
fn view_name_in(v: &ViewDef, current: Option<&str>) -> String {
    if current == Some(v.db.as_str()) {
        quote(&v.name)
    } else {
        format!("{}.{}", quote(&v.db), quote(&v.name))
    }
}

/// `ALGORITHM=... DEFINER=... SQL SECURITY ...`, as MariaDB writes it.
fn view_clauses(v: &ViewDef) -> String {
    format!(
        "ALGORITHM={} DEFINER={}@{} SQL SECURITY {}",
        v.algorithm.sql(),
        quote(&v.definer.0),
        quote(&v.definer.1),
        if v.invoker { "INVOKER" } else { "DEFINER" }
    )
}

fn check_clause(c: ViewCheck) -> &'static str {
    match c {
        ViewCheck::None => "",
        ViewCheck::Local => " WITH LOCAL CHECK OPTION",
        ViewCheck::Cascaded => " WITH CASCADED CHECK OPTION",
    }
}

/// The Query event's text of a CREATE / ALTER VIEW (module docs).
fn logged_create(cx: &ExecContext, c: &CreateView, v: &ViewDef) -> String {
    let verb = if c.alter {
        "ALTER"
    } else if c.or_replace {
        "CREATE OR REPLACE"
    } else {
        "CREATE"
    };
    let cols = if c.columns.is_empty() {
        String::new()
    } else {
        let q: Vec<String> = c.columns.iter().map(|n| quote(n)).collect();
        format!("({})", q.join(", "))
    };
    format!(
        "{verb} {} VIEW {}{}{cols} AS {}{}",
        view_clauses(v),
        if c.if_not_exists {
            "IF NOT EXISTS "
        } else {
            ""
        },
        view_name_in(v, Some(&event_db(cx, &v.db))),
        v.query,
        check_clause(v.check)
    )
}

/// `DROP VIEW [IF EXISTS] ...`: the views there are dropped; the others are 4092 (a note
/// each with IF EXISTS), reported after the drop as MariaDB does. The Query event names only
/// the dropped views when some were missing, so a replica runs it without an error.
fn drop_views(
    cx: &mut ExecContext,
    if_exists: bool,
    names: Vec<(Option<String>, String)>,
    sql: &str,
) -> Result<(), SqlError> {
    let mut resolved = Vec::with_capacity(names.len());
    for (db, name) in names {
        let db = db_or_current(cx, db)?;
        cx.check_table_privilege(&db, &name, DROP)?;
        resolved.push((db, name));
    }
    let cat = cx.server.engine.catalog();
    let (there, missing): (Vec<_>, Vec<_>) = resolved
        .into_iter()
        .partition(|(d, n)| cat.view(d, n).is_some());
    std::mem::drop(cat);
    let missing: Vec<String> = missing.iter().map(|(d, n)| format!("{d}.{n}")).collect();
    let current = cx.current_db.clone().unwrap_or_default();
    let logged = if missing.is_empty() {
        sql.to_string()
    } else {
        let list: Vec<String> = there
            .iter()
            .map(|(d, n)| format!("{}.{}", quote(d), quote(n)))
            .collect();
        format!("DROP VIEW IF EXISTS {}", list.join(","))
    };
    cx.server.engine.drop_views(&current, there, &logged)?;
    if missing.is_empty() {
        return Ok(());
    }
    if if_exists {
        for m in missing {
            cx.warnings
                .push(("Note".into(), 4092, format!("Unknown VIEW: '{m}'")));
        }
        return Ok(());
    }
    Err(SqlError::of(
        errors::ER_UNKNOWN_VIEW,
        format!("Unknown VIEW: '{}'", missing.join(",")),
    ))
}

/// `SHOW CREATE VIEW db.name` (and SHOW CREATE TABLE of a view): SHOW VIEW needed; 1347 for
/// a table, 1146 for neither.
pub(crate) fn show_create(cx: &mut ExecContext, db: &str, name: &str) -> Result<Output, SqlError> {
    if crate::mysqlschema::is_database(db) {
        return crate::mysqlschema::show_create_view(cx, name);
    }
    cx.check_table_privilege(db, name, SHOW_VIEW)?;
    let cat = cx.server.engine.catalog();
    let Some(v) = cat.view(db, name).cloned() else {
        if cat.table_by_name(db, name).is_some() {
            return Err(wrong_object(db, name, "VIEW"));
        }
        return Err(SqlError::no_such_table(db, name));
    };
    std::mem::drop(cat);
    // A view whose SELECT no longer compiles is shown with MariaDB's warning.
    if let Err(e) = plan_view::view_table_def(cx, &v) {
        cx.warnings.push(("Warning".into(), e.code, e.message));
    }
    let text = create_view_sql(cx, &v);
    let row = vec![
        Value::bytes(v.name.clone().into_bytes()),
        Value::bytes(text.into_bytes()),
        Value::bytes(b"utf8mb4"),
        Value::bytes(b"utf8mb4_general_ci"),
    ];
    let columns = [
        "View",
        "Create View",
        "character_set_client",
        "collation_connection",
    ]
    .map(Column::new_text)
    .to_vec();
    Ok(Output::rows(columns, vec![row]).with_warning_count(cx.warning_count()))
}

/// The CREATE VIEW statement that makes `v` again when run in the session's current
/// database: its column list, and its SELECT as written when that database is the one its
/// names resolve against, else with its table names qualified.
pub(crate) fn create_view_sql(cx: &ExecContext, v: &ViewDef) -> String {
    let current = cx.current_db.as_deref();
    let query = if current == Some(v.query_db.as_str()) || v.query_db.is_empty() {
        v.query.clone()
    } else {
        match plan_view::parse_body(&v.query, &v.query_db) {
            Ok(q) => q.to_string(),
            Err(_) => v.query.clone(),
        }
    };
    let cols: Vec<String> = v.columns.iter().map(|c| quote(c)).collect();
    format!(
        "CREATE {} VIEW {}({}) AS {}{}",
        view_clauses(v),
        view_name_in(v, current),
        cols.join(","),
        query,
        check_clause(v.check)
    )
}

/// `RENAME TABLE` whose every old name is a view (`(db, name, new db, new name)`): views stay
/// in their database (1450 otherwise, as MariaDB).
pub(crate) fn rename(
    cx: &ExecContext,
    pairs: Vec<(String, String, String, String)>,
    sql: &str,
) -> Result<(), SqlError> {
    for (db, _, new_db, _) in &pairs {
        if db != new_db {
            return Err(SqlError::of(
                errors::ER_FORBID_SCHEMA_CHANGE,
                format!("Changing schema from '{db}' to '{new_db}' is not allowed"),
            ));
        }
    }
    let current = cx.current_db.clone().unwrap_or_default();
    cx.server.engine.rename_views(&current, pairs, sql)?;
    Ok(())
}

/// 1965 for `DROP TABLE` of a view.
pub(crate) fn is_a_view(db: &str, name: &str) -> SqlError {
    SqlError::of(errors::ER_IT_IS_A_VIEW, format!("'{db}.{name}' is a view"))
}
