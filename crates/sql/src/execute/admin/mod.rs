//! Administration statements: SHOW ..., SET (system/user variables, NAMES, TRANSACTION,
//! PASSWORD), account statements, binlog statements, FLUSH, PURGE, RESET MASTER, SHUTDOWN,
//! KILL, BACKUP STAGE.
//!
//! [`try_execute`] is called by the session for every statement before sqlparser: it returns
//! `None` when the statement is not an administration statement. Modules: `parse` (hand
//! parser), `sysvars` (system variables), `status` (status counters), `accounts` (users,
//! passwords, privileges), `binlog` (binlog statements over the log), `backup` (BACKUP STAGE
//! and the backup waits of PURGE and RESET MASTER), `show` (SHOW over the catalog and the
//! session), `checksum` (CHECKSUM TABLE, with MariaDB's values).
//!
//! Administration statements count themselves in `Com_*` (`Com_show_other`, `Com_set_option`,
//! `Com_create_user`, ...); the session counts `Questions` and the other statements.
//!
//! FLUSH LOGS / TABLES / PRIVILEGES / STATUS / HOSTS are accepted and do nothing: onelog has
//! no log files besides the binlog, no table cache to close, and account changes take effect
//! at once (there is no privilege cache to reload).
//!
//! Invariants: every administration statement counts once in `Com_*` ([`try_execute`]); the
//! global privilege a statement needs is checked before it runs; each family's runner gets only
//! its family's statements (asserted: `misrouted`).

pub mod accounts;
pub mod backup;
pub mod binlog;
pub mod checksum;
pub(crate) mod reload;
pub mod replica;
pub mod show;
mod show_status;
pub mod status;
pub mod table_lock;

use onelog_binlog::Value;
use onelog_protocol::errors;
use sqlparser::parser::Parser;

use crate::context::ExecContext;
use crate::error::SqlError;
use crate::output::{Column, Output};
use crate::parse::admin::{self as parse, Filter, SetTarget, Stmt};
use crate::parse::lexer::{self, top_level_word, Tok};
use crate::status::ComKind;
use crate::sysvar::{self as sysvars, SetValue, VarScope};

/// Runs `sql` if it is an administration statement (see the module docs).
pub fn try_execute(cx: &mut ExecContext, sql: &str) -> Option<Result<Output, SqlError>> {
    let stmt = match parse::parse(sql)? {
        Ok(s) => s,
        Err(e) => return Some(Err(e)),
    };
    cx.server.status.com(com_kind(&stmt));
    Some(execute(cx, stmt))
}

fn com_kind(s: &Stmt) -> ComKind {
    match s {
        Stmt::Set(_)
        | Stmt::SetNames { .. }
        | Stmt::SetTransaction { .. }
        | Stmt::SetPassword { .. } => ComKind::Set,
        Stmt::CreateUser { .. } => ComKind::CreateUser,
        Stmt::DropUser { .. } => ComKind::DropUser,
        Stmt::AlterUser { .. } => ComKind::Other,
        Stmt::Grant { .. } => ComKind::Grant,
        Stmt::Revoke { .. } => ComKind::Revoke,
        Stmt::FlushBinaryLogs
        | Stmt::FlushLogsStatus { .. }
        | Stmt::FlushNoop
        | Stmt::FlushPrivileges(_) => ComKind::Flush,
        Stmt::PurgeTo(_) | Stmt::PurgeBefore(_) => ComKind::Purge,
        Stmt::ResetMaster => ComKind::Other,
        Stmt::BackupStage(_) => ComKind::Backup,
        Stmt::Shutdown => ComKind::Shutdown,
        Stmt::Kill { .. } => ComKind::Kill,
        Stmt::UnlockTables | Stmt::LockTables(_) => ComKind::Other,
        Stmt::FlushTables(_) | Stmt::FlushTablesReadLock(_) | Stmt::FlushTablesForExport => {
            ComKind::Flush
        }
        Stmt::AlterKeys { .. } => ComKind::AlterTable,
        Stmt::Checksum { .. } => ComKind::Other,
        Stmt::ChangeMaster(_)
        | Stmt::StartSlave { .. }
        | Stmt::StopSlave { .. }
        | Stmt::ResetSlave { .. } => ComKind::Other,
        _ => ComKind::Show,
    }
}

/// A result set whose column types follow the first row's values (integers as BIGINT,
/// everything else as text).
pub(crate) fn result(names: &[&str], rows: Vec<Vec<Value>>) -> Output {
    let columns = names
        .iter()
        .enumerate()
        .map(|(i, n)| match rows.first().and_then(|r| r.get(i)) {
            Some(Value::Int(_)) | Some(Value::UInt(_)) => Column::new_int(n),
            _ => Column::new_text(n),
        })
        .collect();
    Output::rows(columns, rows)
}

/// SHOW [FULL] TABLES: `information_schema`'s tables, or `show::tables`.
fn tables(
    cx: &ExecContext,
    full: bool,
    db: Option<String>,
) -> Result<(String, Vec<Vec<Value>>), SqlError> {
    match crate::infoschema::show_tables(cx, full, db.as_deref()) {
        Some(r) => Ok(r),
        None => show::tables(cx, full, db),
    }
}

/// The definition of `db`.`table`: an `information_schema` table's, or `show::table_def`.
fn table_def(
    cx: &ExecContext,
    db: Option<String>,
    table: &str,
) -> Result<std::sync::Arc<onelog_engine::TableDef>, SqlError> {
    let in_infoschema = match &db {
        Some(d) => crate::infoschema::is_database(d),
        None => cx
            .current_db
            .as_deref()
            .is_some_and(crate::infoschema::is_database),
    };
    if in_infoschema {
        return Ok(std::sync::Arc::new(
            crate::infoschema::InfoTable::named(table)?.table_def(),
        ));
    }
    show::table_def(cx, db, table)
}

fn ok(affected_rows: u64) -> Output {
    Output::Ok {
        affected_rows,
        last_insert_id: 0,
        warnings: 0,
        info: String::new(),
    }
}

fn text(s: impl Into<String>) -> Value {
    Value::bytes(s.into().into_bytes())
}

/// Global privileges a statement needs (MariaDB 10.11's; at least one of the bits).
fn check_global_privilege(cx: &ExecContext, stmt: &Stmt) -> Result<(), SqlError> {
    use crate::privilege::{
        BINLOG_MONITOR, RELOAD, REPLICATION_MASTER_ADMIN, REPLICATION_SLAVE_ADMIN, SLAVE_MONITOR,
        SUPER,
    };
    let global_set = |a: &parse::Assignment| {
        matches!(
            a.target,
            SetTarget::Sys {
                scope: Some(VarScope::Global),
                ..
            }
        )
    };
    let (bits, what) = match stmt {
        // MariaDB 10.11's PRIV_STMT_SHOW_BINLOG_STATUS / _SHOW_BINARY_LOGS (BINLOG MONITOR or
        // SUPER) and PRIV_STMT_SHOW_BINLOG_EVENTS (BINLOG MONITOR alone).
        Stmt::ShowMasterStatus | Stmt::ShowBinaryLogs => {
            (BINLOG_MONITOR | SUPER, "SUPER, BINLOG MONITOR")
        }
        Stmt::ShowBinlogEvents { .. } => (BINLOG_MONITOR, "BINLOG MONITOR"),
        // MariaDB 10.5.2+: PRIV_STMT_SHOW_SLAVE_HOSTS is REPLICATION MASTER ADMIN alone.
        Stmt::ShowSlaveHosts => (REPLICATION_MASTER_ADMIN, "REPLICATION MASTER ADMIN"),
        // MariaDB: RESET MASTER needs RELOAD, like FLUSH BINARY LOGS; so does every BACKUP
        // STAGE (sql_parse.cc's SQLCOM_BACKUP).
        Stmt::FlushBinaryLogs
        | Stmt::FlushLogsStatus { .. }
        | Stmt::FlushNoop
        | Stmt::FlushPrivileges(_)
        | Stmt::FlushTables(_)
        | Stmt::FlushTablesReadLock(_)
        | Stmt::FlushTablesForExport
        | Stmt::ResetMaster
        | Stmt::BackupStage(_) => (RELOAD, "RELOAD"),
        Stmt::PurgeTo(_) | Stmt::PurgeBefore(_) => (SUPER, "SUPER, BINLOG ADMIN"),
        // MariaDB 10.11: PRIV_STMT_CHANGE_MASTER, _START_SLAVE, _STOP_SLAVE, _RESET_SLAVE are
        // REPLICATION SLAVE ADMIN or SUPER; PRIV_STMT_SHOW_SLAVE_STATUS is SLAVE MONITOR or
        // SUPER.
        Stmt::ChangeMaster(_)
        | Stmt::StartSlave { .. }
        | Stmt::StopSlave { .. }
        | Stmt::ResetSlave { .. } => (
            REPLICATION_SLAVE_ADMIN | SUPER,
            "SUPER, REPLICATION SLAVE ADMIN",
        ),
        Stmt::ShowSlaveStatus { .. } => (SLAVE_MONITOR | SUPER, "SUPER, SLAVE MONITOR"),
        // Each SET GLOBAL asks for its variable's privilege (MariaDB 10.11's).
        Stmt::Set(a) => {
            for x in a.iter().filter(|x| global_set(x)) {
                if let SetTarget::Sys { name, .. } = &x.target {
                    let (bits, what) = crate::sysvar::replica::global_set_privilege(name);
                    cx.require_any_global(bits, what)?;
                }
            }
            return Ok(());
        }
        Stmt::SetTransaction { global: true, .. } => (SUPER, "SUPER"),
        _ => return Ok(()),
    };
    cx.require_any_global(bits, what)
}

fn execute(cx: &mut ExecContext, stmt: Stmt) -> Result<Output, SqlError> {
    // SHOW WARNINGS / SHOW ERRORS / SHOW COUNT(*) read the previous statement's list.
    if !matches!(stmt, Stmt::ShowWarnings { .. }) {
        cx.warnings.clear();
    }
    check_global_privilege(cx, &stmt)?;
    match stmt {
        Stmt::ShowMasterStatus
        | Stmt::ShowSlaveHosts
        | Stmt::ShowBinaryLogs
        | Stmt::ShowBinlogEvents { .. }
        | Stmt::FlushBinaryLogs
        | Stmt::FlushLogsStatus { .. }
        | Stmt::PurgeTo { .. }
        | Stmt::PurgeBefore { .. }
        | Stmt::ResetMaster => run_binlog(cx, stmt),
        Stmt::Set { .. } | Stmt::SetNames { .. } | Stmt::SetTransaction { .. } => run_set(cx, stmt),
        Stmt::SetPassword { .. }
        | Stmt::CreateUser { .. }
        | Stmt::DropUser { .. }
        | Stmt::AlterUser { .. }
        | Stmt::Grant { .. }
        | Stmt::Revoke { .. }
        | Stmt::ShowGrants { .. }
        | Stmt::ShowCreateUser { .. } => run_account(cx, stmt),
        Stmt::FlushNoop
        | Stmt::FlushPrivileges(_)
        | Stmt::UnlockTables
        | Stmt::LockTables(_)
        | Stmt::FlushTables(_)
        | Stmt::FlushTablesReadLock(_)
        | Stmt::FlushTablesForExport
        | Stmt::AlterKeys { .. }
        | Stmt::Shutdown
        | Stmt::Kill { .. }
        | Stmt::BackupStage(_) => run_server(cx, stmt),
        Stmt::ChangeMaster(_)
        | Stmt::StartSlave { .. }
        | Stmt::StopSlave { .. }
        | Stmt::ResetSlave { .. }
        | Stmt::ShowSlaveStatus { .. } => run_replica(cx, stmt),
        Stmt::Checksum { tables, quick } => {
            let out = checksum::checksum_tables(cx, &tables, quick)?;
            Ok(with_warnings(cx, out))
        }
        Stmt::TableMaintenance {
            op,
            tables,
            for_upgrade,
        } => checksum::table_maintenance(cx, op, &tables, for_upgrade),
        _ => run_show(cx, stmt),
    }
}

/// The replica's statements (`replica.rs`).
fn run_replica(cx: &mut ExecContext, stmt: Stmt) -> Result<Output, SqlError> {
    let out = match stmt {
        Stmt::ChangeMaster(cm) => replica::change_master(cx, &cm)?,
        Stmt::StartSlave { threads, until } => replica::start(cx, threads, until.as_deref())?,
        Stmt::StopSlave { threads } => replica::stop(cx, threads)?,
        Stmt::ResetSlave { all } => replica::reset(cx, all)?,
        Stmt::ShowSlaveStatus { all } => return Ok(replica::show_status(cx, all)),
        other => return Err(misrouted(&other)),
    };
    Ok(with_warnings(cx, out))
}

/// A statement handed to the wrong family's runner: a bug of [`execute`]'s dispatch, reported
/// as an error (never a panic) and asserted in debug builds.
fn misrouted(stmt: &Stmt) -> SqlError {
    debug_assert!(false, "statement dispatched to the wrong family: {stmt:?}");
    SqlError::of(
        errors::ER_UNKNOWN_ERROR,
        format!("internal error: statement dispatched to the wrong family: {stmt:?}"),
    )
}

/// SHOW statements over the catalog, the variables, the status counters and the session.
// Long: one short arm per SHOW statement.
fn run_show(cx: &mut ExecContext, stmt: Stmt) -> Result<Output, SqlError> {
    match stmt {
        Stmt::ShowVariables { global, filter } => {
            let rows = sysvars::show_all(cx, global)
                .into_iter()
                .map(|(n, v)| vec![text(n), text(v)])
                .collect();
            let names = ["Variable_name", "Value"];
            Ok(result(&names, show::filter_rows(&names, 0, rows, &filter)?))
        }
        Stmt::ShowStatus { filter, global } => {
            let snapshot = match &cx.binlog_snapshot {
                Some(s) if !global && cx.in_transaction() => Some(s.clone()),
                _ => None,
            };
            let session = if global { None } else { cx.traffic.clone() };
            let rows = status::rows(&cx.server, session.as_deref())
                .into_iter()
                .map(|(n, v)| match (&snapshot, n.as_str()) {
                    (Some((file, _)), "Binlog_snapshot_file") => (n, text(file.clone())),
                    (Some((_, pos)), "Binlog_snapshot_position") => (n, Value::UInt(*pos)),
                    _ => (n, v),
                })
                .map(|(n, v)| {
                    let v = match v {
                        Value::Bytes(b) => Value::Bytes(b),
                        other => text(
                            String::from_utf8_lossy(&crate::render::text_plain(&other))
                                .into_owned(),
                        ),
                    };
                    vec![text(n), v]
                })
                .collect();
            let names = ["Variable_name", "Value"];
            Ok(result(&names, show::filter_rows(&names, 0, rows, &filter)?))
        }
        Stmt::ShowDatabases { filter } => {
            let title = match &filter {
                Filter::Like(p) => format!("Database ({p})"),
                _ => "Database".to_string(),
            };
            let rows = show::filter_rows(&["Database"], 0, show::databases(cx), &filter)?;
            Ok(result(&[title.as_str()], rows))
        }
        Stmt::ShowTables { full, db, filter } => {
            let (title, rows) = tables(cx, full, db)?;
            let title = match &filter {
                Filter::Like(p) => format!("{title} ({p})"),
                _ => title,
            };
            let names: Vec<&str> = if full {
                vec![title.as_str(), "Table_type"]
            } else {
                vec![title.as_str()]
            };
            let rows = show::filter_rows(&names, 0, rows, &filter)?;
            Ok(result(&names, rows))
        }
        Stmt::ShowCreateTable { db, table } => {
            if let Some(r) = crate::infoschema::show_create_table(cx, db.as_deref(), &table) {
                let (name, sql) = r?;
                return Ok(result(
                    &["Table", "Create Table"],
                    vec![vec![text(name), text(sql)]],
                ));
            }
            if let Some(t) = mysql_table(cx, db.as_deref(), &table)? {
                t.check_show(cx)?;
                return Ok(t.show_create());
            }
            let vdb = db.clone().or_else(|| cx.current_db.clone());
            if let Some(vdb) = vdb.filter(|d| cx.server.engine.catalog().view(d, &table).is_some())
            {
                // MariaDB answers SHOW CREATE TABLE of a view as SHOW CREATE VIEW.
                return crate::execute::view::show_create(cx, &vdb, &table);
            }
            let t = table_def(cx, db, &table)?;
            // Under LOCK TABLES, only a locked table's (MariaDB: 1100 otherwise).
            if !cx.table_locks.locked().is_empty()
                && !cx
                    .table_locks
                    .locked()
                    .iter()
                    .any(|l| l.db == t.db && l.table == t.name)
            {
                return Err(crate::table_locks::not_locked(&table));
            }
            Ok(result(
                &["Table", "Create Table"],
                vec![vec![
                    text(t.name.clone()),
                    text(show::create_table_sql(
                        &t,
                        cx.server.engine.auto_increment_next(t.id),
                    )),
                ]],
            ))
        }
        Stmt::ShowTableStatus { db, filter } => {
            let names = show_status::TABLE_STATUS_COLUMNS;
            let rows = show_status::table_status(cx, db)?;
            Ok(result(names, show::filter_rows(names, 0, rows, &filter)?))
        }
        Stmt::ShowOpenTables { db, filter } => {
            let names = show_status::OPEN_TABLES_COLUMNS;
            let rows = show_status::open_tables(cx, db)?;
            Ok(result(names, show::filter_rows(names, 1, rows, &filter)?))
        }
        Stmt::ShowNoObjects { what, db, filter } => {
            show_status::check_no_objects(cx, what, db)?;
            let names = show_status::no_objects_columns(what);
            // LIKE matches a trigger's table, else the object's name.
            let like_col = if what == parse::NoObjects::Triggers {
                2
            } else {
                1
            };
            Ok(result(
                names,
                show::filter_rows(names, like_col, Vec::new(), &filter)?,
            ))
        }
        Stmt::ShowEngine { name } => {
            show_status::check_engine(cx, &name)?;
            Ok(result(show_status::ENGINE_STATUS_COLUMNS, Vec::new()))
        }
        Stmt::ShowCreateDatabase {
            name,
            if_not_exists,
        } => {
            let sql = show::create_database_sql(cx, &name, if_not_exists)?;
            Ok(result(
                &["Database", "Create Database"],
                vec![vec![text(name), text(sql)]],
            ))
        }
        Stmt::ShowColumns {
            full,
            db,
            table,
            filter,
        } => {
            let names = show::column_names(full);
            if let Some(t) = mysql_table(cx, db.as_deref(), &table)? {
                t.check_select(cx)?;
                let rows = show::filter_rows(&names, 0, t.show_columns(full), &filter)?;
                return Ok(result(&names, rows));
            }
            let t = table_def(cx, db, &table)?;
            let mut rows = show::columns(&t, full);
            if full {
                crate::infoschema::patch_full_columns(&t, &mut rows);
            }
            let rows = show::filter_rows(&names, 0, rows, &filter)?;
            Ok(result(&names, rows))
        }
        Stmt::ShowIndex { db, table } => {
            if let Some(t) = mysql_table(cx, db.as_deref(), &table)? {
                t.check_select(cx)?;
                return Ok(result(
                    show::INDEX_COLUMNS,
                    show::index_rows(&t.table_def()),
                ));
            }
            let t = table_def(cx, db, &table)?;
            Ok(result(show::INDEX_COLUMNS, show::index_rows(&t)))
        }
        Stmt::ShowProcesslist { full } => Ok(result(
            show::PROCESSLIST_COLUMNS,
            show::processlist(cx, full),
        )),
        Stmt::ShowWarnings { errors_only, count } => {
            if count {
                let n = show::warnings(cx, errors_only).len() as i64;
                let name = if errors_only {
                    "@@session.error_count"
                } else {
                    "@@session.warning_count"
                };
                return Ok(result(&[name], vec![vec![Value::Int(n)]]));
            }
            let rows = show::warnings(cx, errors_only);
            let mut out = result(&["Level", "Code", "Message"], rows);
            if let Output::Rows { columns, .. } = &mut out {
                columns[1] = Column::new_int("Code");
            }
            Ok(out)
        }
        Stmt::ShowEngines => Ok(result(show::ENGINE_COLUMNS, show::engines())),
        Stmt::ShowCollation { filter } => {
            let rows = show::filter_rows(show::COLLATION_COLUMNS, 0, show::collations(), &filter)?;
            Ok(result(show::COLLATION_COLUMNS, rows))
        }
        Stmt::ShowCharset { filter } => {
            let rows = show::filter_rows(show::CHARSET_COLUMNS, 0, show::charsets(), &filter)?;
            Ok(result(show::CHARSET_COLUMNS, rows))
        }
        other => Err(misrouted(&other)),
    }
}

/// Binlog statements: SHOW MASTER STATUS / BINARY LOGS / BINLOG EVENTS, FLUSH BINARY LOGS, PURGE, RESET MASTER.
fn run_binlog(cx: &mut ExecContext, stmt: Stmt) -> Result<Output, SqlError> {
    match stmt {
        Stmt::ShowMasterStatus => {
            let (file, pos) = binlog::master_status(cx)?;
            Ok(result(
                &["File", "Position", "Binlog_Do_DB", "Binlog_Ignore_DB"],
                vec![vec![text(file), Value::UInt(pos), text(""), text("")]],
            ))
        }
        Stmt::ShowSlaveHosts => {
            // MariaDB 10.11's columns: Server_id, Host, Port, Master_id.
            let rows = cx
                .server
                .source()
                .slave_hosts()
                .into_iter()
                .map(|h| {
                    vec![
                        Value::UInt(u64::from(h.server_id)),
                        text(h.host),
                        Value::UInt(u64::from(h.port)),
                        Value::UInt(u64::from(h.master_id)),
                    ]
                })
                .collect();
            Ok(result(&["Server_id", "Host", "Port", "Master_id"], rows))
        }
        Stmt::ShowBinaryLogs => {
            let rows = binlog::binary_logs(cx)?
                .into_iter()
                .map(|(n, s)| vec![text(n), Value::UInt(s)])
                .collect();
            Ok(result(&["Log_name", "File_size"], rows))
        }
        Stmt::ShowBinlogEvents {
            file,
            from,
            offset,
            limit,
        } => {
            let rows = binlog::binlog_events(cx, file.as_deref(), from, offset, limit)?
                .iter()
                .map(|r| r.values())
                .collect();
            let mut out = result(
                &[
                    "Log_name",
                    "Pos",
                    "Event_type",
                    "Server_id",
                    "End_log_pos",
                    "Info",
                ],
                rows,
            );
            if let Output::Rows { columns, .. } = &mut out {
                for i in [1, 3, 4] {
                    columns[i] = Column::new_int(&columns[i].name.clone());
                }
            }
            Ok(out)
        }
        Stmt::FlushBinaryLogs => {
            binlog::flush_binary_logs(cx)?;
            Ok(ok(0))
        }
        Stmt::FlushLogsStatus {
            binary,
            query_logs,
            status,
        } => {
            if binary {
                binlog::flush_binary_logs(cx)?;
            }
            if query_logs {
                cx.server.query_logs.reopen();
            }
            // MariaDB moves the session's counters into the global ones and zeroes them; the
            // global byte counters here already hold every session's bytes.
            if let (true, Some(t)) = (status, &cx.traffic) {
                t.reset();
            }
            Ok(ok(0))
        }
        Stmt::PurgeTo(file) => {
            binlog::purge_to(cx, &file)?;
            Ok(ok(0))
        }
        Stmt::PurgeBefore(when) => {
            binlog::purge_before(cx, &when)?;
            Ok(with_warnings(cx, ok(0)))
        }
        Stmt::ResetMaster => {
            binlog::reset_master(cx)?;
            Ok(ok(0))
        }
        other => Err(misrouted(&other)),
    }
}

/// SET: variables, NAMES, TRANSACTION.
fn run_set(cx: &mut ExecContext, stmt: Stmt) -> Result<Output, SqlError> {
    match stmt {
        Stmt::Set(assignments) => {
            for a in assignments {
                set_one(cx, a)?;
            }
            Ok(with_warnings(cx, ok(0)))
        }
        Stmt::SetNames { charset, collate } => {
            set_names(cx, charset, collate)?;
            Ok(ok(0))
        }
        Stmt::SetTransaction {
            global,
            next_only,
            isolation,
            read_only,
        } => {
            let scope = if global {
                VarScope::Global
            } else {
                VarScope::Session
            };
            if let Some(level) = isolation {
                // The next-transaction-only form is honoured when it names the session's
                // level (nothing changes); another level would outlive that transaction here.
                let current = sysvars::get_var(cx, "transaction_isolation", VarScope::Session)?;
                if next_only && current != text(level.clone()) {
                    return Err(SqlError::unsupported(
                        "SET TRANSACTION ISOLATION LEVEL without SESSION or GLOBAL (the next transaction only)",
                    ));
                }
                sysvars::set_var(
                    cx,
                    "transaction_isolation",
                    scope,
                    SetValue::Value(text(level)),
                )?;
            }
            if let Some(ro) = read_only {
                sysvars::set_var(
                    cx,
                    "transaction_read_only",
                    scope,
                    SetValue::Value(Value::Int(i64::from(ro))),
                )?;
            }
            Ok(with_warnings(cx, ok(0)))
        }
        other => Err(misrouted(&other)),
    }
}

/// Account statements: SET PASSWORD, CREATE / DROP / ALTER USER, GRANT, REVOKE, SHOW GRANTS.
fn run_account(cx: &mut ExecContext, stmt: Stmt) -> Result<Output, SqlError> {
    match stmt {
        Stmt::ShowGrants { user } => {
            let (title, lines) = accounts::show_grants(cx, user)?;
            Ok(result(
                &[title.as_str()],
                lines.into_iter().map(|l| vec![text(l)]).collect(),
            ))
        }
        Stmt::ShowCreateUser { user } => {
            let (title, line) = accounts::show_create_user(cx, user)?;
            Ok(result(&[title.as_str()], vec![vec![text(line)]]))
        }
        Stmt::SetPassword {
            user,
            password,
            then,
        } => {
            accounts::set_password(cx, user, &password, false)?;
            if !then.is_empty() {
                return run_set(cx, Stmt::Set(then));
            }
            Ok(ok(0))
        }
        Stmt::CreateUser {
            if_not_exists,
            users,
        } => {
            accounts::create_users(cx, if_not_exists, &users)?;
            Ok(with_warnings(cx, ok(0)))
        }
        Stmt::DropUser { if_exists, users } => {
            accounts::drop_users(cx, if_exists, &users)?;
            Ok(with_warnings(cx, ok(0)))
        }
        Stmt::AlterUser { if_exists, users } => {
            for (u, pw) in users {
                accounts::set_password(cx, Some(u), &pw, if_exists)?;
            }
            Ok(ok(0))
        }
        Stmt::Grant {
            privs,
            scope,
            users,
            grant_option,
        } => {
            accounts::grant(cx, &privs, &scope, &users, grant_option)?;
            Ok(ok(0))
        }
        Stmt::Revoke {
            privs,
            scope,
            users,
        } => {
            accounts::revoke(cx, &privs, &scope, &users)?;
            Ok(ok(0))
        }
        other => Err(misrouted(&other)),
    }
}

/// `ALTER TABLE t {DISABLE | ENABLE} KEYS`: ALTER TABLE's checks and implicit commit, then
/// MariaDB's answer for an InnoDB table, note 1031 (nothing is changed or logged).
/// The `mysql` table a SHOW names (`db`, else the current database), if it names one;
/// 1146 for a name in `mysql` that onelog does not serve.
fn mysql_table(
    cx: &ExecContext,
    db: Option<&str>,
    table: &str,
) -> Result<Option<crate::mysqlschema::MysqlTable>, SqlError> {
    let db = db.or(cx.current_db.as_deref());
    if !db.is_some_and(crate::mysqlschema::is_database) {
        return Ok(None);
    }
    crate::mysqlschema::MysqlTable::named(table).map(Some)
}

fn alter_keys(cx: &mut ExecContext, db: Option<String>, table: &str) -> Result<Output, SqlError> {
    let db = match db {
        Some(d) => d,
        None => cx.current_db.clone().ok_or_else(SqlError::no_database)?,
    };
    cx.check_table_privilege(&db, table, crate::privilege::ALTER)?;
    cx.check_table_privilege(
        &db,
        table,
        crate::privilege::INSERT | crate::privilege::CREATE,
    )?;
    cx.commit()?;
    if !reload::reloading(cx, &db, table) {
        crate::bind::tables::table_named(cx, &db, table)?;
    }
    cx.warnings.push((
        "Note".into(),
        errors::ER_ILLEGAL_HA.code,
        format!("Storage engine InnoDB of the table `{db}`.`{table}` doesn't have this option"),
    ));
    Ok(with_warnings(cx, ok(0)))
}

/// Server control: FLUSH, LOCK / UNLOCK TABLES, SHUTDOWN, KILL, BACKUP STAGE.
fn run_server(cx: &mut ExecContext, stmt: Stmt) -> Result<Output, SqlError> {
    match stmt {
        Stmt::FlushNoop => Ok(ok(0)),
        Stmt::FlushPrivileges(rest) => {
            table_lock::flush_privileges(cx)?;
            reload::apply(cx)?;
            execute(cx, *rest)
        }
        Stmt::FlushTables(tables) => table_lock::flush_tables(cx, tables).map(|_| ok(0)),
        Stmt::UnlockTables => table_lock::unlock_tables(cx).map(|_| ok(0)),
        Stmt::LockTables(items) => table_lock::lock_tables(cx, items).map(|_| ok(0)),
        Stmt::FlushTablesReadLock(tables) => table_lock::flush_read_lock(cx, tables).map(|_| ok(0)),
        Stmt::FlushTablesForExport => Err(table_lock::flush_for_export(cx)),
        Stmt::AlterKeys { db, table } => alter_keys(cx, db, &table),
        Stmt::Shutdown => {
            if cx.is_checked() && cx.privileges_on("*") & crate::privilege::SHUTDOWN == 0 {
                return Err(SqlError::of(errors::ER_SPECIFIC_ACCESS_DENIED_ERROR,
                "Access denied; you need (at least one of) the SHUTDOWN privilege(s) for this operation",
            ));
            }
            cx.server.request_shutdown();
            Ok(Output::Shutdown)
        }
        Stmt::Kill { query_only, id } => kill(cx, query_only, id),
        Stmt::BackupStage(stage) => {
            backup::backup_stage(cx, stage)?;
            Ok(ok(0))
        }
        other => Err(misrouted(&other)),
    }
}

fn with_warnings(cx: &ExecContext, out: Output) -> Output {
    out.with_warning_count(cx.warning_count())
}

fn kill(cx: &mut ExecContext, query_only: bool, id: u64) -> Result<Output, SqlError> {
    let target = cx
        .server
        .connections()
        .into_iter()
        .find(|c| u64::from(c.info.id) == id);
    let Some(target) = target else {
        return Err(SqlError::of(
            errors::ER_NO_SUCH_THREAD,
            format!("Unknown thread id: {id}"),
        ));
    };
    // A user may kill its own connections; others need CONNECTION ADMIN or SUPER.
    let own = target.info.user == cx.user;
    if !own && cx.is_checked() && cx.privileges_on("*") & crate::privilege::KILL_OTHERS == 0 {
        return Err(SqlError::of(
            errors::ER_KILL_DENIED_ERROR,
            format!("You are not owner of thread {id}"),
        ));
    }
    let how = if query_only {
        crate::guard::KILL_QUERY
    } else {
        crate::guard::KILL_CONNECTION
    };
    cx.server.kill_connection(target.info.id, how);
    Ok(ok(0))
}

fn set_one(cx: &mut ExecContext, a: parse::Assignment) -> Result<(), SqlError> {
    let value = eval_set_value(cx, &a.expr, matches!(a.target, SetTarget::Sys { .. }))?;
    match a.target {
        SetTarget::User(name) => {
            let v = match value {
                SetValue::Value(v) => v,
                SetValue::Default => {
                    return Err(SqlError::syntax("DEFAULT"));
                }
            };
            cx.user_vars.insert(name, v);
            Ok(())
        }
        SetTarget::Sys { scope, name } => {
            sysvars::set_var(cx, &name, scope.unwrap_or(VarScope::Default), value)
        }
    }
}

/// Evaluates the value of a SET assignment. For system variables a bare word (`ON`, `OFF`,
/// `ROW`, `utf8mb4`, ...) is its own text and `DEFAULT` restores the default; other
/// expressions go to the expression evaluator.
pub(crate) fn eval_set_value(
    cx: &mut ExecContext,
    expr: &str,
    system: bool,
) -> Result<SetValue, SqlError> {
    let toks = lexer::lex(expr).unwrap_or_default();
    match toks.as_slice() {
        [t] => match &t.tok {
            Tok::Word(w) if system && w.eq_ignore_ascii_case("DEFAULT") => {
                return Ok(SetValue::Default)
            }
            // A number in exponent form (`1e9`) lexes as a word: it is a DOUBLE below.
            Tok::Word(w)
                if system
                    && !w.eq_ignore_ascii_case("NULL")
                    && !(w.starts_with(|c: char| c.is_ascii_digit())
                        && w.parse::<f64>().is_ok()) =>
            {
                return Ok(SetValue::Value(text(w.clone())))
            }
            Tok::QIdent(w) if system => return Ok(SetValue::Value(text(w.clone()))),
            Tok::Str(s) => return Ok(SetValue::Value(text(s.clone()))),
            Tok::Num(n) => {
                if let Ok(i) = n.parse::<i64>() {
                    return Ok(SetValue::Value(Value::Int(i)));
                }
                if let Ok(u) = n.parse::<u64>() {
                    return Ok(SetValue::Value(Value::UInt(u)));
                }
            }
            Tok::SysVar(v) => {
                let (scope, name) = parse::split_sysvar(v);
                return sysvars::get_var(cx, &name, scope.unwrap_or(VarScope::Default))
                    .map(SetValue::Value);
            }
            _ => {}
        },
        [a, b] => {
            if let (Tok::Sym("-"), Tok::Num(n)) = (&a.tok, &b.tok) {
                if let Ok(i) = n.parse::<i64>() {
                    return Ok(SetValue::Value(Value::Int(-i)));
                }
            }
        }
        _ => {}
    }
    let dialect = crate::parse::dialect::OnelogDialect::default();
    crate::parse::depth::check_lexical(expr)?;
    // A subquery reads tables: the value is that of `SELECT expr`.
    if toks
        .iter()
        .any(|t| matches!(&t.tok, Tok::Word(w) if w.eq_ignore_ascii_case("SELECT")))
    {
        return select_value(cx, expr).map(SetValue::Value);
    }
    let mut parsed = Parser::new(&dialect)
        .with_recursion_limit(crate::parse::depth::PARSER_RECURSION_LIMIT)
        .try_with_sql(expr)
        .and_then(|mut p| p.parse_expr())
        .map_err(|_| SqlError::syntax(expr))?;
    crate::parse::depth::guard_expr(&mut parsed)?;
    crate::parse::hex_literals::mark_hybrids(&mut parsed, expr);
    crate::expr::eval_scalar(cx, &parsed).map(SetValue::Value)
}

/// The value of `SELECT expr` (an expression with subqueries), run in the session's
/// transaction or, outside one, in a transaction of its own.
fn select_value(cx: &mut ExecContext, expr: &str) -> Result<Value, SqlError> {
    let sql = format!("SELECT {expr}");
    let dialect = crate::parse::dialect::OnelogDialect::default();
    let mut parsed = Parser::new(&dialect)
        .with_recursion_limit(crate::parse::depth::PARSER_RECURSION_LIMIT)
        .try_with_sql(&sql)
        .and_then(|mut p| p.parse_statement())
        .map_err(|_| SqlError::syntax(expr))?;
    crate::parse::hex_literals::mark_hybrids(&mut parsed, &sql);
    let sqlparser::ast::Statement::Query(q) = &mut parsed else {
        return Err(SqlError::syntax(expr));
    };
    if let sqlparser::ast::SetExpr::Select(sel) = &mut *q.body {
        for item in &mut sel.projection {
            if let sqlparser::ast::SelectItem::UnnamedExpr(e) = item {
                crate::parse::depth::guard_expr(e)?;
            }
        }
    }
    let plan = crate::plan::select::compile(cx, q, crate::parse::LockClause::None)?;
    if plan.projections.len() != 1 || !plan.into.is_empty() {
        return Err(SqlError::syntax(expr));
    }
    let own = cx.txn.is_none();
    let mut txn = match cx.txn.take() {
        Some(t) => t,
        None => cx.server.engine.begin(),
    };
    let r = {
        let env = crate::expr::Env {
            cx,
            params: &[],
            insert_row: None,
            coll: crate::expr::connection_collation(cx),
            subq: None,
        };
        crate::execute::subquery::execute(&plan, &mut txn, &env)
    };
    if own {
        txn.rollback();
    } else {
        cx.txn = Some(txn);
    }
    let (rows, _) = r?;
    Ok(rows
        .into_iter()
        .next()
        .and_then(|r| r.into_iter().next())
        .unwrap_or(Value::Null))
}

const CHARSETS: &[(&str, &str)] = &[
    ("utf8mb4", "utf8mb4_general_ci"),
    ("utf8mb3", "utf8mb3_general_ci"),
    ("utf8", "utf8mb3_general_ci"),
    ("latin1", "latin1_swedish_ci"),
    ("ascii", "ascii_general_ci"),
    ("binary", "binary"),
];

fn set_names(
    cx: &mut ExecContext,
    charset: Option<String>,
    collate: Option<String>,
) -> Result<(), SqlError> {
    let cs = charset
        .unwrap_or_else(|| "utf8mb4".into())
        .to_ascii_lowercase();
    let Some((cs, default_coll)) = CHARSETS.iter().find(|(c, _)| *c == cs) else {
        return Err(SqlError::of(
            errors::ER_UNKNOWN_CHARACTER_SET,
            format!("Unknown character set: '{cs}'"),
        ));
    };
    let cs = if *cs == "utf8" { "utf8mb3" } else { cs };
    let coll = collate.map_or_else(|| default_coll.to_string(), |c| c.to_ascii_lowercase());
    // The binary character set has the one collation `binary`, which no other set has.
    if (*cs == *"binary") != (coll == "binary") {
        return Err(SqlError::of(
            errors::ER_COLLATION_CHARSET_MISMATCH,
            format!("COLLATION '{coll}' is not valid for CHARACTER SET '{cs}'"),
        ));
    }
    for v in [
        "character_set_client",
        "character_set_connection",
        "character_set_results",
    ] {
        sysvars::set_var(cx, v, VarScope::Session, SetValue::Value(text(cs)))?;
    }
    sysvars::set_var(
        cx,
        "collation_connection",
        VarScope::Session,
        SetValue::Value(text(coll)),
    )
}

/// Variables `SET STATEMENT ... FOR` may set: those whose session value is all the statement
/// needs (no side effect beyond it). Others are refused with 1971.
const SET_STATEMENT_VARS: &[&str] = &[
    "max_statement_time",
    "max_session_mem_used",
    "innodb_lock_wait_timeout",
    "sql_mode",
];

/// `SET STATEMENT var=value[, ...] FOR <statement>`: None when `sql` is not one. Otherwise
/// sets the variables for the session and returns the values to restore after the statement
/// and the statement's text (the caller runs it, then restores).
pub(crate) fn set_statement<'s>(
    cx: &mut ExecContext,
    sql: &'s str,
) -> Option<Result<(sysvars::SessionVars, &'s str), SqlError>> {
    let rest = strip_word(sql.trim_start(), "SET")?;
    let rest = strip_word(rest.trim_start(), "STATEMENT")?;
    let Some(at) = top_level_word(rest, "FOR") else {
        return Some(Err(SqlError::syntax(rest)));
    };
    let (assigns, inner) = (&rest[..at], &rest[at + 3..]);
    let stmts = match parse::parse(&format!("SET {assigns}")) {
        Some(Ok(Stmt::Set(a))) => a,
        Some(Err(e)) => return Some(Err(e)),
        _ => return Some(Err(SqlError::syntax(assigns))),
    };
    let saved = cx.vars.clone();
    for a in stmts {
        let ok = match &a.target {
            SetTarget::Sys { scope, name } => {
                let lname = name.to_ascii_lowercase();
                if !matches!(scope, None | Some(VarScope::Session)) {
                    return Some(Err(SqlError::syntax(&a.expr)));
                }
                if !SET_STATEMENT_VARS.contains(&lname.as_str()) {
                    cx.vars = saved;
                    return Some(Err(SqlError::of(
                        errors::ER_SET_STATEMENT_NOT_SUPPORTED,
                        format!("The system variable {lname} cannot be set in SET STATEMENT."),
                    )));
                }
                true
            }
            SetTarget::User(_) => false,
        };
        if !ok {
            cx.vars = saved;
            return Some(Err(SqlError::syntax(&a.expr)));
        }
        if let Err(e) = set_one(cx, a) {
            cx.vars = saved;
            return Some(Err(e));
        }
    }
    Some(Ok((saved, inner)))
}

/// `s` without its leading keyword `word` (case-insensitive, followed by a space), if it
/// starts with it.
fn strip_word<'s>(s: &'s str, word: &str) -> Option<&'s str> {
    let head = s.get(..word.len())?;
    let next = s[word.len()..].chars().next()?;
    (head.eq_ignore_ascii_case(word) && next.is_whitespace()).then(|| &s[word.len()..])
}
