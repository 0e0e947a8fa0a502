//! Binlog statements over the log: SHOW MASTER STATUS / SHOW BINLOG STATUS, SHOW BINARY LOGS,
//! SHOW BINLOG EVENTS, FLUSH BINARY LOGS, PURGE BINARY LOGS, RESET MASTER.
//!
//! The binlog files users see are the log's classic view (`onelog_log::view`): segment N is
//! the virtual file `binlog.NNNNNN`, whose bytes are what mariadbd would have written
//! (header events, then the groups with contiguous, true `end_log_pos`, then a Rotate when
//! sealed). SHOW BINLOG EVENTS prints those offsets; SHOW MASTER STATUS prints the view's
//! durable end; `File_size` is the view file's size. The dump, BINLOG_GTID_POS(), the
//! mirror and `onelog binlog --to-binlog` use the same view, so a position is valid
//! everywhere. (`binlog-NNNNNN.olog` is only the on-disk segment.)
//!
//! PURGE removes whole segments, oldest first, by `Engine::purge_log_to`'s rules: never one
//! that recovery still needs (it must end at or before the LSN of the newest checkpoint:
//! otherwise PURGE TO is refused with 1378 naming the segment and the checkpoint, and PURGE
//! BEFORE warns with that 1378), never one a connected reader still needs (a dump thread's
//! pin: PURGE stops before it and answers OK without a warning, as MariaDB 10.11 does when a
//! dump thread is behind), never the current one. FLUSH BINARY LOGS runs the automatic expiry
//! (`binlog_expire_logs_seconds`, `max_binlog_total_size`) after rotating, as MariaDB purges
//! expired files on a rotation; the checkpoint thread runs it too, about every second.
//!
//! In `--binlog-storage=file` mode the binlog is the classic `binlog.NNNNNN` files (the log
//! rotates and resets them with its segments): SHOW MASTER STATUS, SHOW BINARY LOGS and SHOW
//! BINLOG EVENTS show those files and their real offsets, as MariaDB does; PURGE BINARY LOGS is
//! refused there with 1235 (the classic files are not purged yet: they go with RESET MASTER).
//!
//! RESET MASTER removes every binlog file and empties the binlog GTID state (MariaDB
//! semantics): the log continues in a new segment 1 (`binlog.000001`) and the next GTID of a domain
//! has sequence number 1. The tables are kept: `Engine::reset_log` checkpoints them at the
//! log's end first, and LSNs keep growing across the reset, so checkpoints stay valid.
//!
//! While a backup runs (`BACKUP STAGE START`, `backup.rs`) PURGE and RESET MASTER wait for it,
//! bounded by the session's `lock_wait_timeout` (then 1205), and automatic expiry removes
//! nothing.
//!
//! Invariants: every position this module prints comes from `onelog_log::view` (never
//! computed here); PURGE removes only what `Engine::purge_log_to` allows.

use onelog_protocol::errors;

use onelog_binlog::event::{event_type, Event};
use onelog_binlog::{decode_event_with_header, Value};
use onelog_log::view::{parse_view_file_name, view_file_name, ViewItem};
use onelog_log::{read_classic_file, ClassicFileInfo};

use crate::context::ExecContext;
use crate::execute::admin::backup::wait_for_backups;
use onelog_engine::PurgeTarget;

use crate::error::SqlError;
use crate::sysvar::SetValue;

fn io_err(what: &str, e: impl std::fmt::Display) -> SqlError {
    SqlError::of(
        errors::ER_ERROR_WHEN_EXECUTING_COMMAND,
        format!("Error when reading the binlog: {what}: {e}"),
    )
}

/// `(File, Position)` of SHOW MASTER STATUS: the current virtual file and its durable end.
pub(crate) fn master_status(cx: &ExecContext) -> Result<(String, u64), SqlError> {
    server_master_status(&cx.server)
}

/// [`master_status`] of `server` (also the global `Binlog_snapshot_file` / `_position`).
pub(crate) fn server_master_status(
    server: &crate::server::Server,
) -> Result<(String, u64), SqlError> {
    let log = server.engine.log();
    if let Some(files) = log.classic_files() {
        let cur = files
            .last()
            .ok_or_else(|| io_err("no binlog file", "the classic binlog has no file"))?;
        return Ok((cur.name.clone(), cur.size));
    }
    let end = log.view_end().map_err(|e| io_err("binlog", e))?;
    Ok((end.name, end.size))
}

/// The binlog file and position of the state at `lsn` (a transaction's consistent
/// snapshot): the end of every event committed before it, on SHOW MASTER STATUS's scale.
/// In file mode (`--binlog-storage=file`), or when the view cannot place `lsn`, the current
/// end: right only when nothing was committed since the snapshot (docs/SQL.md).
pub(crate) fn snapshot_position(cx: &ExecContext, lsn: onelog_log::Lsn) -> (String, u64) {
    let log = cx.server.engine.log();
    if log.classic_files().is_none() {
        if let Ok(p) = log.view_position(lsn) {
            return p;
        }
    }
    master_status(cx).unwrap_or_default()
}

/// `(Log_name, File_size)` of every virtual file, oldest first.
pub(crate) fn binary_logs(cx: &ExecContext) -> Result<Vec<(String, u64)>, SqlError> {
    let log = cx.server.engine.log();
    if let Some(files) = log.classic_files() {
        return Ok(files.into_iter().map(|f| (f.name, f.size)).collect());
    }
    let files = log.view_files().map_err(|e| io_err("binlog", e))?;
    Ok(files.into_iter().map(|f| (f.name, f.size)).collect())
}

/// One row of SHOW BINLOG EVENTS.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct EventRow {
    pub log_name: String,
    pub pos: u64,
    pub event_type: &'static str,
    pub server_id: u32,
    pub end_log_pos: u64,
    pub info: String,
}

impl EventRow {
    pub(crate) fn values(&self) -> Vec<Value> {
        vec![
            Value::bytes(self.log_name.clone().into_bytes()),
            Value::UInt(self.pos),
            Value::bytes(self.event_type.as_bytes()),
            Value::UInt(u64::from(self.server_id)),
            Value::UInt(self.end_log_pos),
            Value::bytes(self.info.clone().into_bytes()),
        ]
    }
}

fn type_name(t: u8) -> &'static str {
    match t {
        event_type::QUERY => "Query",
        event_type::STOP => "Stop",
        event_type::ROTATE => "Rotate",
        event_type::FORMAT_DESCRIPTION => "Format_desc",
        event_type::XID => "Xid",
        event_type::TABLE_MAP => "Table_map",
        event_type::WRITE_ROWS_V1 => "Write_rows_v1",
        event_type::UPDATE_ROWS_V1 => "Update_rows_v1",
        event_type::DELETE_ROWS_V1 => "Delete_rows_v1",
        event_type::HEARTBEAT => "Heartbeat",
        event_type::ANNOTATE_ROWS => "Annotate_rows",
        event_type::BINLOG_CHECKPOINT => "Binlog_checkpoint",
        event_type::GTID => "Gtid",
        event_type::GTID_LIST => "Gtid_list",
        event_type::START_ENCRYPTION => "Start_encryption",
        _ => "Unknown",
    }
}

/// MariaDB's Info column for one event.
fn info(bytes: &[u8]) -> String {
    let Ok((_, ev, _)) = decode_event_with_header(bytes) else {
        return String::new();
    };
    match ev {
        Event::Gtid(g) => {
            let standalone = g.flags2 & 1 != 0;
            let mut s = if standalone {
                format!("GTID {}", g.gtid)
            } else {
                format!("BEGIN GTID {}", g.gtid)
            };
            if let Some(c) = g.commit_id {
                s.push_str(&format!(" cid={c}"));
            }
            s
        }
        Event::TableMap(t) => format!("table_id: {} ({}.{})", t.table_id, t.db, t.table),
        Event::Xid(x) => format!("COMMIT /* xid={} */", x.xid),
        Event::Query(q) if q.db.is_empty() => q.query,
        Event::Query(q) => format!("use `{}`; {}", q.db.replace('`', "``"), q.query),
        Event::AnnotateRows(a) => a.query,
        Event::FormatDescription(f) => format!(
            "Server ver: {}, Binlog ver: {}",
            f.server_version, f.binlog_version
        ),
        Event::GtidList(l) => format!(
            "[{}]",
            l.gtids
                .iter()
                .map(|g| g.to_string())
                .collect::<Vec<_>>()
                .join(",")
        ),
        // MariaDB's `Rotate_log_event::pack_info` and `Binlog_checkpoint_log_event::pack_info`.
        Event::Rotate(r) => format!("{};pos={}", r.next_file, r.position),
        Event::BinlogCheckpoint(c) => c.file,
        Event::Rows(_) => {
            // Post-header: table id (6 bytes), flags (2 bytes).
            let body = &bytes[onelog_binlog::event::HEADER_LEN.min(bytes.len())..];
            if body.len() < 8 {
                return String::new();
            }
            let mut id = [0u8; 8];
            id[..6].copy_from_slice(&body[..6]);
            let flags = u16::from_le_bytes([body[6], body[7]]);
            if flags & onelog_binlog::event::STMT_END_F != 0 {
                format!("table_id: {} flags: STMT_END_F", u64::from_le_bytes(id))
            } else {
                format!("table_id: {}", u64::from_le_bytes(id))
            }
        }
        _ => String::new(),
    }
}

/// SHOW BINLOG EVENTS [IN file] [FROM pos] [LIMIT [offset,] n].
pub(crate) fn binlog_events(
    cx: &ExecContext,
    file: Option<&str>,
    from: Option<u64>,
    offset: u64,
    limit: Option<u64>,
) -> Result<Vec<EventRow>, SqlError> {
    let log = cx.server.engine.log();
    if let Some(files) = log.classic_files() {
        let rows = classic_events(&files, file)?;
        return Ok(window(rows, from, offset, limit));
    }
    let number = match file {
        Some(f) => parse_view_file_name(f).ok_or_else(not_found)?,
        None => log
            .segments()
            .first()
            .map(|s| s.number)
            .ok_or_else(not_found)?,
    };
    let mut reader = log.view_reader(number).map_err(|_| not_found())?;
    let name = view_file_name(number);
    let mut rows = Vec::new();
    let want = limit.map(|l| offset.saturating_add(l));
    let enough = |rows: &Vec<EventRow>| want.is_some_and(|w| rows.len() as u64 >= w);
    while !enough(&rows) {
        let Some(item) = reader
            .next_wait(std::time::Duration::ZERO)
            .map_err(|e| io_err(&name, e))?
        else {
            break;
        };
        let pos = match &item {
            ViewItem::FileStart { number: n, .. } if *n != number => break,
            ViewItem::FileStart { .. } => 4,
            ViewItem::Group { offset, .. } | ViewItem::Rotate { offset, .. } => *offset,
        };
        push_events(&mut rows, &name, pos, item.events());
    }
    Ok(window(rows, from, offset, limit))
}

/// One row per event of `events`, placed from `pos`.
fn push_events(rows: &mut Vec<EventRow>, name: &str, mut pos: u64, events: &[u8]) {
    for item in onelog_binlog::event::split_events(events) {
        let Ok((eh, bytes)) = item else {
            break;
        };
        let len = bytes.len() as u64;
        rows.push(EventRow {
            log_name: name.to_string(),
            pos,
            event_type: type_name(eh.event_type),
            server_id: eh.server_id,
            end_log_pos: pos + len,
            info: info(bytes),
        });
        pos += len;
    }
}

/// `FROM pos LIMIT [offset,] limit` of SHOW BINLOG EVENTS.
fn window(
    rows: Vec<EventRow>,
    from: Option<u64>,
    offset: u64,
    limit: Option<u64>,
) -> Vec<EventRow> {
    rows.into_iter()
        .filter(|r| from.is_none_or(|f| r.pos >= f))
        .skip(offset as usize)
        .take(limit.map_or(usize::MAX, |l| l as usize))
        .collect()
}

fn not_found() -> SqlError {
    SqlError::of(
        errors::ER_ERROR_WHEN_EXECUTING_COMMAND,
        "Error when executing command SHOW BINLOG EVENTS: Could not find target log",
    )
}

/// Every event of one classic binlog file (file mode), at its real offset.
fn classic_events(
    files: &[ClassicFileInfo],
    file: Option<&str>,
) -> Result<Vec<EventRow>, SqlError> {
    let f = match file {
        Some(name) => files
            .iter()
            .find(|f| f.name == name)
            .ok_or_else(not_found)?,
        None => files.first().ok_or_else(not_found)?,
    };
    let data = std::fs::read(&f.path).map_err(|e| io_err(&f.path.display().to_string(), e))?;
    let mut rows = Vec::new();
    for ev in read_classic_file(&f.name, &data) {
        let ev = ev.map_err(|e| io_err(&f.name, e))?;
        // The Format_description of the open file carries LOG_EVENT_BINLOG_IN_USE_F, which
        // MariaDB leaves out of its CRC: decode a copy without it.
        let mut bytes = std::borrow::Cow::Borrowed(ev.bytes);
        if ev.event_type() == event_type::FORMAT_DESCRIPTION && bytes.len() > 17 {
            bytes.to_mut()[17] &= !0x01;
        }
        let (eh, _, _) = decode_event_with_header(&bytes)
            .map_err(|e| io_err(&f.name, format!("event at offset {}: {e}", ev.offset)))?;
        rows.push(EventRow {
            log_name: f.name.clone(),
            pos: ev.offset,
            event_type: type_name(eh.event_type),
            server_id: eh.server_id,
            end_log_pos: ev.offset + ev.bytes.len() as u64,
            info: info(&bytes),
        });
    }
    Ok(rows)
}

/// FLUSH BINARY LOGS: continue in a new segment, then expire what the limits say (an
/// expiry failure is the error log's, not the statement's: the engine reports it).
pub(crate) fn flush_binary_logs(cx: &ExecContext) -> Result<(), SqlError> {
    cx.server.engine.log().rotate().map_err(|e| {
        SqlError::of(
            errors::ER_ERROR_ON_WRITE,
            format!("Error writing file: {e}"),
        )
    })?;
    let _ = cx.server.engine.expire_logs();
    Ok(())
}

/// File mode: the classic files are not purged (yet); say so instead of purging the log's
/// segments under names the user does not see (checked before the statement's arguments).
fn refuse_purge_in_file_mode(cx: &ExecContext) -> Result<(), SqlError> {
    cx.server
        .engine
        .check_purge_allowed()
        .map_err(SqlError::from)
}

/// PURGE BINARY LOGS TO 'file': removes the segments before `file` (the rules are
/// `Engine::purge_log_to`'s). Returns how many. Waits for running backups
/// (`backup::wait_for_backups`).
pub(crate) fn purge_to(cx: &ExecContext, file: &str) -> Result<usize, SqlError> {
    let engine = &cx.server.engine;
    let purged = wait_for_backups(cx, |wait| {
        engine.purge_log_within(PurgeTarget::To(file), wait)
    })?;
    Ok(purged.segments)
}

/// PURGE BINARY LOGS BEFORE datetime (UTC; any expression, `expr` is its source text):
/// removes the oldest segments closed before the time, as far as recovery and readers allow
/// (a warning says when a segment was kept for recovery; none for a reader, as MariaDB).
pub(crate) fn purge_before(cx: &mut ExecContext, expr: &str) -> Result<usize, SqlError> {
    refuse_purge_in_file_mode(cx)?;
    let when = match super::eval_set_value(cx, expr, false)? {
        SetValue::Value(v) => String::from_utf8_lossy(&crate::render::text_plain(&v)).into_owned(),
        SetValue::Default => expr.to_string(),
    };
    let cutoff = parse_utc(&when).ok_or_else(|| {
        SqlError::of(
            errors::ER_TRUNCATED_WRONG_VALUE,
            format!("Incorrect datetime value: '{when}'"),
        )
    })?;
    let engine = cx.server.engine.clone();
    let purged = wait_for_backups(cx, |wait| {
        engine.purge_log_within(PurgeTarget::Before(cutoff), wait)
    })?;
    if let Some(kept) = purged.kept_for_recovery {
        let e = SqlError::from(kept);
        cx.warnings.push(("Warning".into(), e.code, e.message));
    }
    Ok(purged.segments)
}

/// Seconds since the epoch of `YYYY-MM-DD[ HH:MM[:SS]]` read as UTC.
fn parse_utc(s: &str) -> Option<i64> {
    let s = s.trim();
    let (date, time) = s.split_once([' ', 'T']).unwrap_or((s, "00:00:00"));
    let mut d = date.split('-').map(|x| x.parse::<i64>().ok());
    let (y, m, dd) = (d.next()??, d.next()??, d.next()??);
    let mut t = time
        .split(':')
        .map(|x| x.split('.').next()?.parse::<i64>().ok());
    let hh = t.next().flatten().unwrap_or(0);
    let mi = t.next().flatten().unwrap_or(0);
    let ss = t.next().flatten().unwrap_or(0);
    if !(1..=12).contains(&m) || !(1..=31).contains(&dd) || hh > 23 || mi > 59 || ss > 59 {
        return None;
    }
    let days = onelog_binlog::value::days_from_civil(y, m as u32, dd as u32);
    Some(days * 86_400 + hh * 3600 + mi * 60 + ss)
}

/// RESET MASTER: see the module docs. With `--binlog-file-mirror` the mirror's classic files
/// are reset too, after the log (its next group is the log's first after the reset). Waits
/// for running backups (`backup::wait_for_backups`).
pub(crate) fn reset_master(cx: &ExecContext) -> Result<(), SqlError> {
    let engine = &cx.server.engine;
    wait_for_backups(cx, |wait| engine.reset_log_within(wait))?;
    if let Some(mirror) = cx.server.mirror() {
        mirror.reset().map_err(|e| {
            SqlError::of(
                errors::ER_UNKNOWN_ERROR,
                format!("RESET MASTER: resetting the binlog file mirror: {e}"),
            )
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_datetimes_parse_to_epoch_seconds() {
        assert_eq!(parse_utc("1970-01-01 00:00:00"), Some(0));
        assert_eq!(parse_utc("2000-03-01"), Some(951_868_800));
        assert_eq!(parse_utc("2026-11-21 12:00:01"), Some(1_795_262_401));
        assert_eq!(parse_utc("2026-13-01"), None);
        assert_eq!(parse_utc("nope"), None);
    }
}
