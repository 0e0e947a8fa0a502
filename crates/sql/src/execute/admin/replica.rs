//! The replica's statements: CHANGE MASTER TO, START / STOP / RESET SLAVE and SHOW [ALL] SLAVE[S]
//! STATUS, over the server's [`Replica`] (`Server::replica`).
//!
//! Without a wired replica (or with one never given a host), the statements act as on a
//! MariaDB 10.11 never configured as a replica: SHOW SLAVE STATUS is an empty set, START SLAVE
//! is 1200, STOP SLAVE a note 1255. CHANGE MASTER with `MASTER_DEMOTE_TO_SLAVE=1` sets
//! `gtid_slave_pos := gtid_current_pos` once the configuration was accepted
//! (REPLICATION_FACTS.md §2.3).
//!
//! Invariants: CHANGE MASTER and RESET SLAVE never act while a replica thread runs (1198);
//! START SLAVE UNTIL is checked (1277, 1941, 1943, 1949, 1254) before the replica sees it;
//! SHOW SLAVE STATUS has exactly MariaDB 10.11.19's 54 columns (62 for ALL: counted on the
//! real server; REPLICATION_FACTS.md §2.11 says 56 but lists these 54), asserted.

use onelog_binlog::Value;
use onelog_protocol::errors;
use onelog_replication::replica::config::{warning_code, ConfigError};
use onelog_replication::replica::control::Threads;
use onelog_replication::replica::{ChangeMaster, MasterConfig, Replica, StatusSnapshot, UseGtid};

use crate::context::ExecContext;
use crate::error::SqlError;
use crate::output::{Column, Output};
use crate::sysvar::replica::{parse_gtid_list, replica_running, slave_must_stop};
use crate::sysvar::{self as sysvars};

/// SHOW SLAVE STATUS's columns in MariaDB 10.11's order.
pub(crate) const SLAVE_STATUS_COLUMNS: &[&str] = &[
    "Slave_IO_State",
    "Master_Host",
    "Master_User",
    "Master_Port",
    "Connect_Retry",
    "Master_Log_File",
    "Read_Master_Log_Pos",
    "Relay_Log_File",
    "Relay_Log_Pos",
    "Relay_Master_Log_File",
    "Slave_IO_Running",
    "Slave_SQL_Running",
    "Replicate_Do_DB",
    "Replicate_Ignore_DB",
    "Replicate_Do_Table",
    "Replicate_Ignore_Table",
    "Replicate_Wild_Do_Table",
    "Replicate_Wild_Ignore_Table",
    "Last_Errno",
    "Last_Error",
    "Skip_Counter",
    "Exec_Master_Log_Pos",
    "Relay_Log_Space",
    "Until_Condition",
    "Until_Log_File",
    "Until_Log_Pos",
    "Master_SSL_Allowed",
    "Master_SSL_CA_File",
    "Master_SSL_CA_Path",
    "Master_SSL_Cert",
    "Master_SSL_Cipher",
    "Master_SSL_Key",
    "Seconds_Behind_Master",
    "Master_SSL_Verify_Server_Cert",
    "Last_IO_Errno",
    "Last_IO_Error",
    "Last_SQL_Errno",
    "Last_SQL_Error",
    "Replicate_Ignore_Server_Ids",
    "Master_Server_Id",
    "Master_SSL_Crl",
    "Master_SSL_Crlpath",
    "Using_Gtid",
    "Gtid_IO_Pos",
    "Replicate_Do_Domain_Ids",
    "Replicate_Ignore_Domain_Ids",
    "Parallel_Mode",
    "SQL_Delay",
    "SQL_Remaining_Delay",
    "Slave_SQL_Running_State",
    "Slave_DDL_Groups",
    "Slave_Non_Transactional_Groups",
    "Slave_Transactional_Groups",
    "Replicate_Rewrite_DB",
];

/// SHOW ALL SLAVES STATUS's columns before and after [`SLAVE_STATUS_COLUMNS`].
pub(crate) const ALL_PREFIX: &[&str] = &["Connection_name", "Slave_SQL_State"];
pub(crate) const ALL_SUFFIX: &[&str] = &[
    "Retried_transactions",
    "Max_relay_log_size",
    "Executed_log_entries",
    "Slave_received_heartbeats",
    "Slave_heartbeat_period",
    "Gtid_Slave_Pos",
];

/// Columns MariaDB sends as integers.
const INT_COLUMNS: &[&str] = &[
    "Master_Port",
    "Connect_Retry",
    "Read_Master_Log_Pos",
    "Relay_Log_Pos",
    "Last_Errno",
    "Skip_Counter",
    "Exec_Master_Log_Pos",
    "Relay_Log_Space",
    "Until_Log_Pos",
    "Seconds_Behind_Master",
    "Last_IO_Errno",
    "Last_SQL_Errno",
    "Master_Server_Id",
    "SQL_Delay",
    "SQL_Remaining_Delay",
    "Slave_DDL_Groups",
    "Slave_Non_Transactional_Groups",
    "Slave_Transactional_Groups",
    "Retried_transactions",
    "Max_relay_log_size",
    "Executed_log_entries",
    "Slave_received_heartbeats",
];

fn text(s: impl Into<String>) -> Value {
    Value::bytes(s.into().into_bytes())
}

fn uint(n: u64) -> Value {
    Value::UInt(n)
}

fn ok() -> Output {
    Output::Ok {
        affected_rows: 0,
        last_insert_id: 0,
        warnings: 0,
        info: String::new(),
    }
}

fn config_error(e: ConfigError) -> SqlError {
    let sqlstate = errors::by_code(e.code).map_or("HY000", |c| c.sqlstate);
    SqlError::new(e.code, sqlstate, e.message)
}

fn note(cx: &mut ExecContext, code: u16, message: impl Into<String>) {
    cx.warnings.push(("Note".into(), code, message.into()));
}

/// Notes a START / STOP SLAVE returned (1254 / 1255 by their texts).
fn push_notes(cx: &mut ExecContext, notes: Vec<String>) {
    for n in notes {
        let code = if n.contains("stopped") { 1255 } else { 1254 };
        note(cx, code, n);
    }
}

fn slave_net_timeout(cx: &ExecContext) -> u64 {
    match sysvars::global_var(&cx.server, "slave_net_timeout") {
        Ok(Value::Int(i)) => i.max(1) as u64,
        _ => 60,
    }
}

fn not_configured() -> SqlError {
    SqlError::of(
        errors::ER_BAD_SLAVE,
        "Misconfigured slave: MASTER_HOST was not set; Fix in config file or with CHANGE MASTER TO",
    )
}

fn configured(cx: &ExecContext) -> Option<std::sync::Arc<Replica>> {
    cx.server.replica().filter(|r| r.is_configured()).cloned()
}

/// CHANGE MASTER TO.
pub(crate) fn change_master(cx: &mut ExecContext, cm: &ChangeMaster) -> Result<Output, SqlError> {
    let Some(replica) = cx.server.replica().cloned() else {
        return Err(SqlError::of(
            errors::ER_MASTER_INFO,
            "Could not initialize master info structure for ''; more error messages can be \
             found in the MariaDB error log",
        ));
    };
    if replica.any_running() {
        return Err(slave_must_stop());
    }
    // Checked here too so that a refused statement changes nothing (the replica checks again).
    let mut probe = replica.config();
    probe
        .change(cm, slave_net_timeout(cx))
        .map_err(config_error)?;
    let warnings = replica.change_master(cm).map_err(config_error)?;
    for w in warnings {
        let (level, code) = warning_code(&w);
        cx.warnings.push((level.into(), code, w));
    }
    if cm.demote {
        debug_assert_eq!(replica.config().use_gtid, UseGtid::SlavePos);
        let engine = cx.server.engine.clone();
        engine.set_gtid_slave_pos(engine.gtid_current_pos())?;
    }
    Ok(ok())
}

/// START SLAVE [threads] [UNTIL master_gtid_pos = 'pos'].
pub(crate) fn start(
    cx: &mut ExecContext,
    threads: Threads,
    until: Option<&str>,
) -> Result<Output, SqlError> {
    let until = match until {
        Some(u) => {
            if threads != Threads::Both {
                return Err(SqlError::of(
                    errors::ER_BAD_SLAVE_UNTIL_COND,
                    "Incorrect parameter or combination of parameters for START SLAVE UNTIL",
                ));
            }
            Some(parse_gtid_list(u)?)
        }
        None => None,
    };
    let replica = configured(cx).ok_or_else(not_configured)?;
    if until.is_some() {
        if replica.config().use_gtid == UseGtid::No {
            return Err(SqlError::of(
                errors::ER_UNTIL_REQUIRES_USING_GTID,
                "START SLAVE UNTIL master_gtid_pos requires that slave is using GTID",
            ));
        }
        if replica.any_running() {
            return Err(SqlError::of(
                errors::ER_SLAVE_WAS_RUNNING,
                "Slave is already running",
            ));
        }
    }
    let notes = replica.start(threads, until).map_err(config_error)?;
    push_notes(cx, notes);
    Ok(ok())
}

/// STOP SLAVE [threads].
pub(crate) fn stop(cx: &mut ExecContext, threads: Threads) -> Result<Output, SqlError> {
    match configured(cx) {
        Some(replica) => {
            let running = replica.any_running();
            let notes = replica.stop(threads).map_err(config_error)?;
            if !running && notes.is_empty() {
                note(cx, 1255, "Slave already has been stopped");
            }
            push_notes(cx, notes);
        }
        None => note(cx, 1255, "Slave already has been stopped"),
    }
    Ok(ok())
}

/// RESET SLAVE [ALL].
pub(crate) fn reset(cx: &mut ExecContext, all: bool) -> Result<Output, SqlError> {
    let Some(replica) = cx.server.replica().cloned() else {
        return Ok(ok());
    };
    if replica_running(&cx.server) {
        return Err(slave_must_stop());
    }
    replica.reset(all).map_err(config_error)?;
    Ok(ok())
}

/// SHOW SLAVE STATUS / SHOW ALL SLAVES STATUS.
pub(crate) fn show_status(cx: &ExecContext, all: bool) -> Output {
    let mut names: Vec<&str> = Vec::with_capacity(62);
    if all {
        names.extend_from_slice(ALL_PREFIX);
    }
    names.extend_from_slice(SLAVE_STATUS_COLUMNS);
    if all {
        names.extend_from_slice(ALL_SUFFIX);
    }
    debug_assert_eq!(names.len(), if all { 62 } else { 54 });
    let columns = names
        .iter()
        .map(|n| {
            if INT_COLUMNS.contains(n) {
                Column::new_int(n)
            } else {
                Column::new_text(n)
            }
        })
        .collect();
    let rows = match configured(cx) {
        Some(r) => {
            let parallel = match sysvars::global_var(&cx.server, "slave_parallel_mode") {
                Ok(Value::Bytes(b)) => String::from_utf8_lossy(&b).into_owned(),
                _ => "optimistic".into(),
            };
            let view = StatusView {
                config: r.config(),
                status: r.status(),
                seconds_behind: r.seconds_behind_master(),
                parallel_mode: parallel,
                slave_pos: cx.server.engine.gtid_slave_pos().to_string(),
            };
            vec![view.row(all)]
        }
        None => Vec::new(),
    };
    debug_assert!(rows.iter().all(|r| r.len() == names.len()));
    Output::rows(columns, rows)
}

/// What one SHOW SLAVE STATUS row is made of.
pub(crate) struct StatusView {
    pub config: MasterConfig,
    pub status: StatusSnapshot,
    pub seconds_behind: Option<u64>,
    pub parallel_mode: String,
    pub slave_pos: String,
}

impl StatusView {
    /// The row (`all`: SHOW ALL SLAVES STATUS's).
    pub(crate) fn row(&self, all: bool) -> Vec<Value> {
        let (c, s) = (&self.config, &self.status);
        let mut row = Vec::with_capacity(62);
        if all {
            row.push(text(""));
            row.push(text(s.sql_state.clone()));
        }
        row.extend(self.main_columns());
        if all {
            row.push(uint(s.retried_transactions));
            row.push(uint(1 << 30));
            row.push(uint(s.executed_log_entries));
            row.push(uint(s.received_heartbeats));
            row.push(text(format!("{:.3}", c.heartbeat_period)));
            row.push(text(self.slave_pos.clone()));
        }
        row
    }

    /// The 54 columns of SHOW SLAVE STATUS.
    fn main_columns(&self) -> Vec<Value> {
        let (c, s) = (&self.config, &self.status);
        // Before the IO thread read anything: the configured file position (MariaDB shows
        // Exec_Master_Log_Pos 0 until a position was given).
        let (read_file, read_pos) = if s.master_log_file.is_empty() {
            (c.log_file.clone(), c.log_pos)
        } else {
            (s.master_log_file.clone(), s.read_master_log_pos)
        };
        let (exec_file, exec_pos) = if s.exec_master_log_file.is_empty() {
            let given = !c.log_file.is_empty() || c.log_pos != 4;
            (c.log_file.clone(), if given { c.log_pos } else { 0 })
        } else {
            (s.exec_master_log_file.clone(), s.exec_master_log_pos)
        };
        let e = || text("");
        let until = if s.until_gtid.is_some() {
            "Gtid"
        } else {
            "None"
        };
        vec![
            text(s.io_state.clone()),
            text(c.host.clone()),
            text(c.user.clone()),
            uint(u64::from(c.port)),
            uint(c.connect_retry),
            text(read_file),
            uint(read_pos),
            e(),
            uint(4),
            text(exec_file),
            text(s.io_running.name()),
            text(if s.sql_running { "Yes" } else { "No" }),
            e(),
            e(),
            e(),
            e(),
            e(),
            e(),
            uint(u64::from(s.last_sql_errno)),
            text(s.last_sql_error.clone()),
            uint(0),
            uint(exec_pos),
            uint(0),
            text(until),
            e(),
            uint(0),
            text("No"),
            e(),
            e(),
            e(),
            e(),
            e(),
            self.seconds_behind.map_or(Value::Null, uint),
            text("No"),
            uint(u64::from(s.last_io_errno)),
            text(s.last_io_error.clone()),
            uint(u64::from(s.last_sql_errno)),
            text(s.last_sql_error.clone()),
            e(),
            uint(u64::from(s.master_server_id)),
            e(),
            e(),
            text(c.use_gtid.name()),
            text(s.gtid_io_pos.to_string()),
            e(),
            e(),
            text(self.parallel_mode.clone()),
            uint(0),
            Value::Null,
            text(s.sql_state.clone()),
            uint(s.ddl_groups),
            uint(s.non_transactional_groups),
            uint(s.transactional_groups),
            e(),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_configured_stopped_replica_shows_mariadb_values() {
        let mut config = MasterConfig::default();
        config
            .change(
                &ChangeMaster {
                    host: Some("h2".into()),
                    user: Some("u".into()),
                    port: Some(3307),
                    ..ChangeMaster::default()
                },
                60,
            )
            .unwrap();
        let view = StatusView {
            config,
            status: StatusSnapshot::default(),
            seconds_behind: None,
            parallel_mode: "optimistic".into(),
            slave_pos: "0-1-5".into(),
        };
        let row = view.row(false);
        assert_eq!(row.len(), SLAVE_STATUS_COLUMNS.len());
        assert_eq!(SLAVE_STATUS_COLUMNS.len(), 54);
        let get = |name: &str| {
            let i = SLAVE_STATUS_COLUMNS
                .iter()
                .position(|c| *c == name)
                .unwrap();
            row[i].clone()
        };
        assert_eq!(get("Slave_IO_State"), text(""));
        assert_eq!(get("Master_Host"), text("h2"));
        assert_eq!(get("Master_Port"), uint(3307));
        assert_eq!(get("Connect_Retry"), uint(60));
        assert_eq!(get("Read_Master_Log_Pos"), uint(4));
        assert_eq!(get("Exec_Master_Log_Pos"), uint(0));
        assert_eq!(get("Slave_IO_Running"), text("No"));
        assert_eq!(get("Slave_SQL_Running"), text("No"));
        assert_eq!(get("Until_Condition"), text("None"));
        assert_eq!(get("Seconds_Behind_Master"), Value::Null);
        assert_eq!(get("Master_SSL_Allowed"), text("No"));
        assert_eq!(get("Using_Gtid"), text("Slave_Pos"));
        assert_eq!(get("Parallel_Mode"), text("optimistic"));
        assert_eq!(get("SQL_Remaining_Delay"), Value::Null);
        assert_eq!(SLAVE_STATUS_COLUMNS[53], "Replicate_Rewrite_DB");
        let all = view.row(true);
        assert_eq!(all.len(), 62);
        assert_eq!(all[61], text("0-1-5"));
        assert_eq!(all[0], text(""));
        assert_eq!(all[60], text("30.000"));
    }
}
