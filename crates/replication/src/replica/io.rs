//! The IO thread: connects to the primary as a MariaDB 10.11 replica does, reads the binlog
//! stream, cuts it into event groups and hands them to the SQL side through the relay queue.
//!
//! One [`run`] is one life of the thread (START SLAVE .. STOP SLAVE or a fatal error):
//! - connect and log in ([`super::client`]), then MariaDB's connect sequence
//!   (REPLICATION_FACTS.md §1.2, `slave.cc get_master_version_and_clock`,
//!   `register_slave_on_master`, `request_dump`): `SELECT UNIX_TIMESTAMP()` (clock difference),
//!   `SHOW VARIABLES LIKE 'SERVER_ID'` (equal ids are fatal, 1593), the heartbeat period, the
//!   checksum (only CRC32 is accepted: onelog checks every event's CRC32), the capability,
//!   `@@GLOBAL.gtid_domain_id` and the GTID start state (GTID mode), COM_REGISTER_SLAVE,
//!   COM_BINLOG_DUMP;
//! - the stream: the fake Rotate, Format_description, Gtid_list, Binlog_checkpoint and
//!   heartbeat events only move the status (`Master_Log_File`, `Read_Master_Log_Pos`,
//!   `Slave_received_heartbeats`); every other event joins the open group, and a group ends as
//!   `onelog_binlog::EventGroupDecoder` ends one (Xid, the Query of a standalone group, a
//!   `COMMIT`/`ROLLBACK` Query, XA_PREPARE, `XA COMMIT`/`XA ROLLBACK`); a whole group is pushed
//!   into the bounded queue with its raw events, unless it carries this server's own id (a
//!   ring's own transaction coming back: skipped, as MariaDB does without
//!   `replicate_same_server_id`, while `Gtid_IO_Pos` moves past it);
//! - after a network error, the primary's EOF packet (its shutdown) or `slave_net_timeout`
//!   seconds without a packet (heartbeats count), it reconnects at once, then every
//!   `connect_retry` seconds, at most `retry_count` times in a row.
//!
//! Invariants:
//! - a reconnect resumes after the last group queued (GTID mode: `Gtid_IO_Pos`, which moves only
//!   when a group was queued; file mode: the file and end position of that group), never from
//!   the start position again, so a group reaches the queue at most once per run; a partial
//!   group at a disconnect is dropped and refetched whole;
//! - `Slave_IO_Running` is Connecting until the dump was requested, Yes while it streams, No
//!   once [`run`] returns; a fatal error (1236 from the primary, 1593, a bad event) stops the
//!   thread without a retry and stays in `Last_IO_Errno` / `Last_IO_Error`;
//! - the thread notices `ctx.stop` within about [`TICK`] wherever it waits (reads, a full queue,
//!   the retry sleep).
//!
//! Caller: `control::Replica` (START SLAVE) on a thread of its own.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use onelog_binlog::event::format_description::CHECKSUM_ALG_CRC32;
use onelog_binlog::event::gtid::FL_STANDALONE;
use onelog_binlog::event::{
    check_event, event_type, EventHeader, FormatDescriptionEvent, GtidEvent, GtidListEvent,
    QueryEvent, RotateEvent,
};
use onelog_binlog::GtidPos;

use super::client::{Client, ClientConfig, ClientError, DumpPacket, QueryResult};
use super::config::{MasterConfig, StartPosition};
use super::relay::{RelayGroup, RelayQueue};
use super::status::ReplicaStatus;
use super::{IoRunning, ReplicaHost};

/// What one run of the IO thread works with.
pub struct IoContext {
    pub config: MasterConfig,
    /// Where the first connection starts; reconnects start after the last group queued.
    pub start: StartPosition,
    /// START SLAVE UNTIL master_gtid_pos: sent as `@slave_until_gtid`; the thread ends once
    /// the primary says it was reached.
    pub until: Option<GtidPos>,
    pub host: Arc<dyn ReplicaHost>,
    pub status: Arc<ReplicaStatus>,
    pub queue: Arc<RelayQueue>,
    /// Set by STOP SLAVE: the thread ends within about a second.
    pub stop: Arc<AtomicBool>,
}

/// How often every wait of the thread looks at `ctx.stop`.
pub const TICK: Duration = Duration::from_millis(250);

/// `BINLOG_SEND_ANNOTATE_ROWS_EVENT`: what a MariaDB replica with log_slave_updates sends.
const DUMP_FLAGS: u16 = 2;
/// Gtid_list flag: the primary reached `@slave_until_gtid`.
const FLAG_UNTIL_REACHED: u8 = 1;
/// `LOG_EVENT_ARTIFICIAL_F`.
const ARTIFICIAL: u16 = 0x20;
/// XA_PREPARE_LOG_EVENT.
const XA_PREPARE: u8 = 38;

/// ER_SLAVE_FATAL_ERROR: "Fatal error: %s".
const ER_SLAVE_FATAL_ERROR: u16 = 1593;
/// ER_MASTER_FATAL_ERROR_READING_BINLOG.
const ER_MASTER_FATAL_ERROR_READING_BINLOG: u16 = 1236;
/// ER_SLAVE_MASTER_COM_FAILURE: "Master command %s failed: %s".
const ER_SLAVE_MASTER_COM_FAILURE: u16 = 1597;
/// ER_NETWORK_READ_EVENT_CHECKSUM_FAILURE.
const ER_NETWORK_READ_EVENT_CHECKSUM_FAILURE: u16 = 1743;

const STATE_CONNECTING: &str = "Connecting to master";
const STATE_CHECKING: &str = "Checking master version";
const STATE_REGISTERING: &str = "Registering slave on master";
const STATE_REQUESTING: &str = "Requesting binlog dump";
const STATE_WAITING: &str = "Waiting for master to send event";
const STATE_QUEUEING: &str = "Queueing master event to the relay log";
const STATE_QUEUE_FULL: &str = "Waiting for the slave SQL thread to free enough relay log space";
const STATE_RECONNECTING: &str = "Reconnecting after a failed master event read";
const STATE_WAIT_RECONNECT: &str = "Waiting to reconnect after a failed master event read";

const EQUAL_SERVER_IDS: &str = "The slave I/O thread stops because master and slave have equal \
     MariaDB server ids; these ids must be different for replication to work (or the \
     --replicate-same-server-id option must be used on slave but this does not always make \
     sense; please check the manual before using it).";

/// Why a connection ended or could not be made.
#[derive(Debug, PartialEq)]
enum End {
    /// `ctx.stop` was set.
    Stop,
    /// The UNTIL position was reached.
    Until,
    /// Stop the thread with this Last_IO_Errno / Last_IO_Error.
    Fatal(u16, String),
    /// Connect again (a connection that could not be made carries its error).
    Retry(Option<ClientError>),
}

/// Where the stream stands: what a reconnect resumes from.
struct Cursor {
    gtid_mode: bool,
    /// After the last queued group (GTID mode's reconnect point).
    io_pos: GtidPos,
    /// File mode: the file and position after the last queued group (or the last event read
    /// outside a group). GTID mode: the last known file and position (sent, ignored).
    file: String,
    pos: u64,
}

impl Cursor {
    fn new(start: &StartPosition) -> Cursor {
        match start {
            StartPosition::Gtid(p) => Cursor {
                gtid_mode: true,
                io_pos: p.clone(),
                file: String::new(),
                pos: 4,
            },
            StartPosition::File { name, pos } => Cursor {
                gtid_mode: false,
                io_pos: GtidPos::new(),
                file: name.clone(),
                pos: (*pos).max(4),
            },
        }
    }
}

/// Runs the IO thread until `ctx.stop`, a fatal error (left in `Last_IO_Errno/Error`) or the
/// UNTIL position; sets `Slave_IO_Running` back to No when it returns.
pub fn run(ctx: IoContext) {
    let mut cursor = Cursor::new(&ctx.start);
    ctx.status.update(|s| {
        s.io_running = IoRunning::Connecting;
        s.io_state = STATE_CONNECTING.into();
        s.last_io_errno = 0;
        s.last_io_error.clear();
        // `Until_Condition` is the control's (START SLAVE UNTIL sets it, the SQL thread
        // clears it when reached).
        if cursor.gtid_mode {
            s.gtid_io_pos = cursor.io_pos.clone();
        }
    });
    let mut failures: u64 = 0;
    let mut reconnecting = false;
    loop {
        if stopped(&ctx) {
            break;
        }
        let end = match connect(&ctx, &mut cursor) {
            Ok(client) => {
                failures = 0;
                stream(&ctx, client, &mut cursor)
            }
            Err(e) => e,
        };
        if stopped(&ctx) {
            // STOP SLAVE: whatever the connection was doing, it is not an error to report.
            break;
        }
        match end {
            End::Stop | End::Until => break,
            End::Fatal(code, message) => {
                ctx.status.update(|s| {
                    s.last_io_errno = code;
                    s.last_io_error = message;
                });
                break;
            }
            End::Retry(None) => {
                // A dropped stream: the first reconnect is immediate.
                reconnecting = true;
                set_state(&ctx, IoRunning::Connecting, STATE_RECONNECTING);
            }
            End::Retry(Some(e)) => {
                failures += 1;
                report_connect_error(&ctx, &e, reconnecting);
                if failures > ctx.config.retry_count {
                    break;
                }
                let wait = if reconnecting {
                    STATE_WAIT_RECONNECT
                } else {
                    STATE_CONNECTING
                };
                set_state(&ctx, IoRunning::Connecting, wait);
                if !sleep_unless_stopped(&ctx, Duration::from_secs(ctx.config.connect_retry)) {
                    break;
                }
                if reconnecting {
                    set_state(&ctx, IoRunning::Connecting, STATE_RECONNECTING);
                }
            }
        }
    }
    ctx.status.update(|s| {
        s.io_running = IoRunning::No;
        s.io_state.clear();
    });
}

fn stopped(ctx: &IoContext) -> bool {
    ctx.stop.load(Ordering::Relaxed)
}

fn set_state(ctx: &IoContext, running: IoRunning, state: &str) {
    ctx.status.update(|s| {
        s.io_running = running;
        if s.io_state != state {
            s.io_state = state.to_string();
        }
    });
}

/// Sleeps `d` in ticks; false when `ctx.stop` was set meanwhile.
fn sleep_unless_stopped(ctx: &IoContext, d: Duration) -> bool {
    let until = Instant::now() + d;
    loop {
        if stopped(ctx) {
            return false;
        }
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return true;
        }
        std::thread::sleep(left.min(TICK));
    }
}

/// MariaDB's `connect_to_master` error text.
fn report_connect_error(ctx: &IoContext, e: &ClientError, reconnect: bool) {
    let c = &ctx.config;
    let message = format!(
        "error {} to master '{}@{}:{}' - retry-time: {}  maximum-retries: {}  message: {}",
        if reconnect {
            "reconnecting"
        } else {
            "connecting"
        },
        c.user,
        c.host,
        c.port,
        c.connect_retry,
        c.retry_count,
        e.message
    );
    ctx.status.update(|s| {
        s.last_io_errno = e.code;
        s.last_io_error = message;
    });
}

/// Seconds of silence after which the connection is given up (`slave_net_timeout`).
fn net_timeout(ctx: &IoContext) -> Duration {
    Duration::from_secs(ctx.host.settings().slave_net_timeout.max(1))
}

/// Connects, logs in and runs the connect sequence up to COM_BINLOG_DUMP.
fn connect(ctx: &IoContext, cursor: &mut Cursor) -> Result<Client, End> {
    let c = &ctx.config;
    let cfg = ClientConfig {
        host: c.host.clone(),
        port: c.port,
        user: c.user.clone(),
        password: c.password.clone(),
        connect_timeout: net_timeout(ctx),
        read_timeout: net_timeout(ctx),
        tick: TICK,
        stop: Some(Arc::clone(&ctx.stop)),
    };
    let mut client = Client::connect(&cfg).map_err(|e| End::Retry(Some(e)))?;
    if stopped(ctx) {
        return Err(End::Stop);
    }
    set_state(ctx, IoRunning::Connecting, STATE_CHECKING);
    check_master(ctx, &mut client)?;
    set_stream_variables(ctx, &mut client, cursor)?;
    set_state(ctx, IoRunning::Connecting, STATE_REGISTERING);
    client
        .register_slave(ctx.host.server_id(), "", 0)
        .map_err(|e| query_error(e, "COM_REGISTER_SLAVE"))?;
    set_state(ctx, IoRunning::Connecting, STATE_REQUESTING);
    let pos = u32::try_from(cursor.pos).unwrap_or(u32::MAX);
    client
        .binlog_dump(pos, DUMP_FLAGS, ctx.host.server_id(), &cursor.file)
        .map_err(|e| query_error(e, "COM_BINLOG_DUMP"))?;
    ctx.status.update(|s| {
        s.connects += 1;
        s.io_running = IoRunning::Yes;
        s.io_state = STATE_WAITING.into();
        s.last_io_errno = 0;
        s.last_io_error.clear();
    });
    Ok(client)
}

/// A failed setup step: network errors reconnect, the primary's refusals stop the thread.
fn query_error(e: ClientError, what: &str) -> End {
    if e.is_network() {
        return End::Retry(Some(e));
    }
    if what.starts_with("COM_") {
        return End::Fatal(
            ER_SLAVE_MASTER_COM_FAILURE,
            format!("Master command {what} failed: {}", e.message),
        );
    }
    End::Fatal(
        ER_SLAVE_FATAL_ERROR,
        format!(
            "Fatal error: The slave I/O thread stops because a fatal error is encountered when \
             it tried to {what} on master. Error: {}",
            e.message
        ),
    )
}

fn now_secs() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// The version check, the clock difference and the server id (`get_master_version_and_clock`).
fn check_master(ctx: &IoContext, client: &mut Client) -> Result<(), End> {
    let version = client.server_version().to_string();
    match version.chars().next().and_then(|c| c.to_digit(10)) {
        Some(major) if major >= 3 => {}
        _ => {
            return Err(End::Fatal(
                ER_SLAVE_FATAL_ERROR,
                "Fatal error: Master reported unrecognized MariaDB version".into(),
            ))
        }
    }
    // Non-fatal (Seconds_Behind_Master is then not corrected), as in MariaDB.
    match client.query("SELECT UNIX_TIMESTAMP()") {
        Ok(r) => {
            if let Some(t) = r.first_value().and_then(|v| v.parse::<i64>().ok()) {
                let diff = now_secs() - t;
                ctx.status.update(|s| s.clock_diff_with_master = diff);
            }
        }
        Err(e) if e.is_network() => return Err(End::Retry(Some(e))),
        Err(_) => {}
    }
    let id = match client.query("SHOW VARIABLES LIKE 'SERVER_ID'") {
        Ok(QueryResult::Rows { rows, .. }) => rows
            .first()
            .and_then(|r| r.get(1).cloned().flatten())
            .and_then(|v| v.parse::<u32>().ok()),
        Ok(_) => None,
        Err(e) if e.is_network() => return Err(End::Retry(Some(e))),
        Err(_) => None,
    };
    if let Some(id) = id {
        if id == ctx.host.server_id() {
            return Err(End::Fatal(
                ER_SLAVE_FATAL_ERROR,
                format!("Fatal error: {EQUAL_SERVER_IDS}"),
            ));
        }
        ctx.status.update(|s| s.master_server_id = id);
    }
    Ok(())
}

/// Runs a SET on the primary; a refusal stops the thread (MariaDB's rule for these).
fn set(client: &mut Client, sql: &str, what: &str) -> Result<(), End> {
    client
        .query(sql)
        .map(|_| ())
        .map_err(|e| query_error(e, what))
}

/// Heartbeat, checksum, capability and the GTID start state (§1.2 rows 3-10a).
fn set_stream_variables(ctx: &IoContext, client: &mut Client, cursor: &Cursor) -> Result<(), End> {
    let period_ns = (ctx.config.heartbeat_period.max(0.0) * 1e9) as u64;
    if period_ns != 0 {
        let sql = format!("SET @master_heartbeat_period= {period_ns}");
        set(client, &sql, "SET @master_heartbeat_period")?;
    }
    check_checksum(client)?;
    set(
        client,
        "SET @mariadb_slave_capability=4",
        "SET @mariadb_slave_capability",
    )?;
    if !cursor.gtid_mode {
        return Ok(());
    }
    match client.query("SELECT @@GLOBAL.gtid_domain_id") {
        Ok(r) if r.first_value().is_some() => {}
        Err(e) if e.is_network() => return Err(End::Retry(Some(e))),
        _ => {
            return Err(End::Fatal(
                ER_SLAVE_FATAL_ERROR,
                "Fatal error: The slave I/O thread stops because master does not support \
                 MariaDB global transaction id. A fatal error is encountered when it tried to \
                 SELECT @@GLOBAL.gtid_domain_id."
                    .into(),
            ))
        }
    }
    let state = format!("SET @slave_connect_state='{}'", cursor.io_pos);
    set(client, &state, "SET @slave_connect_state")?;
    let strict = format!(
        "SET @slave_gtid_strict_mode={}",
        u8::from(ctx.host.gtid_strict_mode())
    );
    set(client, &strict, "SET @slave_gtid_strict_mode")?;
    let dups = format!(
        "SET @slave_gtid_ignore_duplicates={}",
        u8::from(ctx.host.settings().gtid_ignore_duplicates)
    );
    set(client, &dups, "SET @slave_gtid_ignore_duplicates")?;
    if let Some(until) = &ctx.until {
        let sql = format!("SET @slave_until_gtid='{until}'");
        set(client, &sql, "SET @slave_until_gtid")?;
    }
    Ok(())
}

/// `@master_binlog_checksum`: onelog checks every event's CRC32, so a primary logging without
/// checksums is refused with a clear error.
fn check_checksum(client: &mut Client) -> Result<(), End> {
    match client.query("SET @master_binlog_checksum= @@global.binlog_checksum") {
        Ok(_) => {}
        Err(e) if e.is_network() => return Err(End::Retry(Some(e))),
        // ER_UNKNOWN_SYSTEM_VARIABLE: a pre-checksum primary; the SELECT below says NONE.
        Err(e) if e.code == 1193 => {}
        Err(e) => return Err(query_error(e, "SET @master_binlog_checksum")),
    }
    let alg = match client.query("SELECT @master_binlog_checksum") {
        Ok(r) => r.first_value().unwrap_or("NONE").to_ascii_uppercase(),
        Err(e) if e.is_network() => return Err(End::Retry(Some(e))),
        Err(e) => return Err(query_error(e, "SELECT @master_binlog_checksum")),
    };
    if alg != "CRC32" {
        return Err(End::Fatal(
            ER_SLAVE_FATAL_ERROR,
            format!(
                "Fatal error: The slave I/O thread stops because the master's binlog_checksum \
                 is {alg}: onelog replicates only from a primary with binlog_checksum=CRC32"
            ),
        ));
    }
    Ok(())
}

/// Reads the dump until it ends (module docs).
fn stream(ctx: &IoContext, mut client: Client, cursor: &mut Cursor) -> End {
    let mut asm = Assembler::default();
    let mut file = if cursor.gtid_mode {
        String::new()
    } else {
        cursor.file.clone()
    };
    let mut last_packet = Instant::now();
    let mut received = false;
    let timeout = net_timeout(ctx);
    loop {
        if stopped(ctx) {
            return End::Stop;
        }
        let packet = match client.read_dump_packet() {
            Ok(p) => p,
            Err(e) => return dropped(read_error(e), received),
        };
        let ev = match packet {
            DumpPacket::Idle if last_packet.elapsed() >= timeout => {
                return dropped(End::Retry(None), received)
            }
            DumpPacket::Idle => continue,
            DumpPacket::Eof if ctx.until.is_some() => return End::Until,
            DumpPacket::Eof => return dropped(End::Retry(None), received),
            DumpPacket::Event(ev) => ev,
        };
        received = true;
        if let Some(end) = on_event(ctx, cursor, &mut asm, &mut file, ev) {
            return end;
        }
        // After the event: a wait for queue space is not the primary's silence.
        last_packet = Instant::now();
    }
}

/// A stream that ended before its first packet counts as a failed attempt (it waits
/// `connect_retry` and counts toward `retry_count`), so a primary that drops every dump
/// at once is not hammered; after a working stream the first reconnect is immediate.
fn dropped(end: End, received: bool) -> End {
    match end {
        End::Retry(None) if !received => End::Retry(Some(ClientError::lost())),
        end => end,
    }
}

/// The primary's ERR on the dump, or a lost connection (`slave.cc read_event`).
fn read_error(e: ClientError) -> End {
    match e.code {
        ER_MASTER_FATAL_ERROR_READING_BINLOG => End::Fatal(
            ER_MASTER_FATAL_ERROR_READING_BINLOG,
            format!(
                "Got fatal error 1236 from master when reading data from binary log: '{}'",
                e.message
            ),
        ),
        1153 => End::Fatal(
            1153,
            "Got a packet bigger than 'slave_max_allowed_packet' bytes".into(),
        ),
        _ => End::Retry(None),
    }
}

/// Handles one event; Some when the connection's stream ends here.
fn on_event(
    ctx: &IoContext,
    cursor: &mut Cursor,
    asm: &mut Assembler,
    file: &mut String,
    ev: Vec<u8>,
) -> Option<End> {
    let h = match check_event(&ev) {
        Ok((h, _)) => h,
        Err(e) => {
            return Some(End::Fatal(
                ER_NETWORK_READ_EVENT_CHECKSUM_FAILURE,
                format!(
                    "Replication event checksum verification failed while reading from network. \
                     ({e})"
                ),
            ))
        }
    };
    if h.event_type == event_type::HEARTBEAT {
        ctx.status.update(|s| s.received_heartbeats += 1);
        return None;
    }
    if h.log_pos != 0 && h.event_type != event_type::ROTATE {
        ctx.status
            .update(|s| s.read_master_log_pos = u64::from(h.log_pos));
    }
    match h.event_type {
        event_type::ROTATE => on_rotate(ctx, cursor, asm, file, &ev),
        event_type::FORMAT_DESCRIPTION => on_format_description(&ev),
        event_type::GTID_LIST => match GtidListEvent::decode(&ev) {
            Ok(l) if l.flags & FLAG_UNTIL_REACHED != 0 && ctx.until.is_some() => Some(End::Until),
            _ => None,
        },
        event_type::BINLOG_CHECKPOINT => None,
        _ => on_group_event(ctx, cursor, asm, file, h, ev),
    }
}

fn on_rotate(
    ctx: &IoContext,
    cursor: &mut Cursor,
    asm: &Assembler,
    file: &mut String,
    ev: &[u8],
) -> Option<End> {
    let Ok(r) = RotateEvent::decode(ev) else {
        return Some(End::Fatal(
            ER_NETWORK_READ_EVENT_CHECKSUM_FAILURE,
            "Replication event checksum verification failed while reading from network. \
             (bad Rotate event)"
                .into(),
        ));
    };
    *file = r.next_file.clone();
    ctx.status.update(|s| {
        s.master_log_file = r.next_file.clone();
        s.read_master_log_pos = r.position;
    });
    if !asm.in_group() {
        cursor.file = r.next_file;
        cursor.pos = r.position.max(4);
    }
    None
}

fn on_format_description(ev: &[u8]) -> Option<End> {
    match FormatDescriptionEvent::decode(ev) {
        Ok(fd) if fd.checksum_alg == CHECKSUM_ALG_CRC32 => None,
        _ => Some(End::Fatal(
            ER_SLAVE_FATAL_ERROR,
            "Fatal error: The slave I/O thread stops because the master's binlog is not \
             written with binlog_checksum=CRC32"
                .into(),
        )),
    }
}

/// An event of (or outside) a group; queues the group it completes.
fn on_group_event(
    ctx: &IoContext,
    cursor: &mut Cursor,
    asm: &mut Assembler,
    file: &str,
    h: EventHeader,
    ev: Vec<u8>,
) -> Option<End> {
    let outside = !asm.in_group() && h.event_type != event_type::GTID;
    let done = match asm.push(&h, ev) {
        Ok(done) => done,
        Err(message) => {
            return Some(End::Fatal(
                ER_NETWORK_READ_EVENT_CHECKSUM_FAILURE,
                format!(
                    "Replication event checksum verification failed while reading from network. \
                     ({message})"
                ),
            ))
        }
    };
    if outside && h.log_pos != 0 && h.flags & ARTIFICIAL == 0 {
        cursor.pos = u64::from(h.log_pos);
    }
    let (gtid, events) = done?;
    let group = RelayGroup {
        gtid: gtid.gtid,
        flags2: gtid.flags2,
        commit_id: gtid.commit_id,
        timestamp: gtid.timestamp,
        events,
        master_log_file: file.to_string(),
        end_log_pos: u64::from(h.log_pos),
    };
    enqueue(ctx, cursor, group)
}

/// Pushes `group`, waiting while the queue is full; moves the cursor once it is queued. A
/// group the primary logged with this server's own id is not queued (MariaDB's IO thread
/// drops such events without `replicate_same_server_id`: in a ring they are this server's own
/// transactions coming back), but the position moves past it.
fn enqueue(ctx: &IoContext, cursor: &mut Cursor, group: RelayGroup) -> Option<End> {
    let gtid = group.gtid;
    let (file, end) = (group.master_log_file.clone(), group.end_log_pos);
    if gtid.server_id != ctx.host.server_id() && !push_waiting(ctx, group) {
        return Some(End::Stop);
    }
    cursor.io_pos.set(gtid);
    if !file.is_empty() {
        cursor.file = file;
    }
    if end != 0 {
        cursor.pos = end;
    }
    let pos = cursor.io_pos.clone();
    ctx.status.update(|s| {
        s.gtid_io_pos = pos;
        s.io_state = STATE_WAITING.into();
    });
    None
}

/// Pushes `group` into the queue, waiting while it is full; false when `ctx.stop` was set
/// first.
fn push_waiting(ctx: &IoContext, mut group: RelayGroup) -> bool {
    set_state(ctx, IoRunning::Yes, STATE_QUEUEING);
    loop {
        if stopped(ctx) {
            return false;
        }
        let started = Instant::now();
        match ctx.queue.push(group, TICK) {
            Ok(()) => return true,
            Err(back) => {
                group = back;
                set_state(ctx, IoRunning::Yes, STATE_QUEUE_FULL);
                // A closed queue answers at once: do not spin.
                if started.elapsed() < TICK / 2 {
                    std::thread::sleep(TICK / 5);
                }
            }
        }
    }
}

/// The open group of the stream (module docs for where a group ends).
#[derive(Default)]
struct Assembler {
    open: Option<(GtidEvent, Vec<Vec<u8>>)>,
}

impl Assembler {
    fn in_group(&self) -> bool {
        self.open.is_some()
    }

    /// Feeds one checked event; returns the group it completes. A GTID event while a group is
    /// open drops the open (incomplete) group. Events outside a group are ignored.
    #[allow(clippy::type_complexity)]
    fn push(
        &mut self,
        h: &EventHeader,
        ev: Vec<u8>,
    ) -> Result<Option<(GtidEvent, Vec<Vec<u8>>)>, String> {
        if h.event_type == event_type::GTID {
            let g = GtidEvent::decode(&ev).map_err(|e| e.to_string())?;
            self.open = Some((g, vec![ev]));
            return Ok(None);
        }
        let Some((gtid, events)) = self.open.as_mut() else {
            return Ok(None);
        };
        let ends = match h.event_type {
            event_type::XID | XA_PREPARE => true,
            event_type::QUERY => {
                gtid.flags2 & FL_STANDALONE != 0
                    || QueryEvent::decode(&ev).is_ok_and(|q| ends_group(&q.query))
            }
            _ => false,
        };
        events.push(ev);
        if !ends {
            return Ok(None);
        }
        Ok(self.open.take())
    }
}

/// A Query that ends a non-standalone group.
fn ends_group(query: &str) -> bool {
    let q = query.trim_start();
    let starts = |p: &str| {
        q.as_bytes()
            .get(..p.len())
            .is_some_and(|b| b.eq_ignore_ascii_case(p.as_bytes()))
    };
    q.eq_ignore_ascii_case("COMMIT")
        || q.eq_ignore_ascii_case("ROLLBACK")
        || starts("XA COMMIT")
        || starts("XA ROLLBACK")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replica::{ParallelMode, ReplicaSettings};
    use onelog_binlog::event::XidEvent;
    use onelog_binlog::Gtid;

    fn gtid_ev(seq: u64, flags2: u8) -> Vec<u8> {
        let mut out = Vec::new();
        GtidEvent {
            gtid: Gtid::new(0, 1, seq),
            flags2,
            commit_id: None,
            timestamp: 5,
        }
        .encode(&mut out);
        out
    }

    fn query_ev(q: &str) -> Vec<u8> {
        let mut out = Vec::new();
        QueryEvent::new("d", q).encode(5, 1, &mut out).unwrap();
        out
    }

    fn xid_ev() -> Vec<u8> {
        let mut out = Vec::new();
        XidEvent { xid: 9 }.encode(5, 1, &mut out);
        out
    }

    /// Feeds `events`; returns (seq_no, event count) of each group completed.
    fn feed(asm: &mut Assembler, events: &[Vec<u8>]) -> Vec<(u64, usize)> {
        let mut done = Vec::new();
        for ev in events {
            let (h, _) = check_event(ev).unwrap();
            if let Some((g, evs)) = asm.push(&h, ev.clone()).unwrap() {
                assert_eq!(
                    evs[0],
                    gtid_ev(g.gtid.seq_no, g.flags2),
                    "the GTID event first"
                );
                done.push((g.gtid.seq_no, evs.len()));
            }
        }
        done
    }

    #[test]
    fn groups_end_where_the_group_decoder_ends_them() {
        let mut asm = Assembler::default();
        let events = [
            // Outside a group: ignored.
            query_ev("BEGIN"),
            // DDL: standalone, ends with its Query.
            gtid_ev(1, FL_STANDALONE),
            query_ev("CREATE TABLE t (a INT)"),
            // Transactional: BEGIN .. Xid.
            gtid_ev(2, 4),
            query_ev("BEGIN"),
            query_ev("INSERT INTO t VALUES (1)"),
            xid_ev(),
            // Non-transactional: ends with a COMMIT Query.
            gtid_ev(3, 0),
            query_ev("BEGIN"),
            query_ev("commit"),
            // XA: ends with XA COMMIT.
            gtid_ev(4, 0),
            query_ev("XA COMMIT X'01',X'',1"),
        ];
        assert_eq!(
            feed(&mut asm, &events),
            vec![(1, 2), (2, 4), (3, 3), (4, 2)]
        );
        assert!(!asm.in_group());
    }

    #[test]
    fn a_gtid_inside_an_open_group_drops_the_partial_group() {
        let mut asm = Assembler::default();
        let events = [
            gtid_ev(1, 4),
            query_ev("BEGIN"),
            gtid_ev(2, 4),
            query_ev("BEGIN"),
            xid_ev(),
        ];
        assert_eq!(feed(&mut asm, &events), vec![(2, 3)]);
    }

    #[test]
    fn commit_detection_needs_the_whole_word() {
        assert!(ends_group("COMMIT"));
        assert!(ends_group("  rollback"));
        assert!(ends_group("xa rollback X'0a'"));
        assert!(!ends_group("COMMITTED"));
        assert!(!ends_group("XA"));
        assert!(!ends_group("é"));
    }

    #[test]
    fn the_connect_error_text_is_mariadbs() {
        let ctx = context(13308);
        let e = ClientError {
            code: 2003,
            message: "Can't connect to server on '127.0.0.1' (111 \"Connection refused\")".into(),
        };
        report_connect_error(&ctx, &e, false);
        let s = ctx.status.snapshot();
        assert_eq!(s.last_io_errno, 2003);
        // As captured from a MariaDB 10.11 replica (REPLICATION_FACTS.md §2.11).
        assert_eq!(
            s.last_io_error,
            "error connecting to master 'repl@127.0.0.1:13308' - retry-time: 60  \
             maximum-retries: 100000  message: Can't connect to server on '127.0.0.1' \
             (111 \"Connection refused\")"
        );
    }

    fn context(port: u16) -> IoContext {
        IoContext {
            config: MasterConfig {
                host: "127.0.0.1".into(),
                port,
                user: "repl".into(),
                ..MasterConfig::default()
            },
            start: StartPosition::Gtid(GtidPos::new()),
            until: None,
            host: Arc::new(NoHost),
            status: Arc::new(ReplicaStatus::new()),
            queue: Arc::new(RelayQueue::new(1)),
            stop: Arc::new(AtomicBool::new(false)),
        }
    }

    /// A primary that accepts and never says a word: with slave_net_timeout 600 the handshake
    /// would wait 10 minutes; STOP SLAVE must end the thread long before (bounded at 60 s here,
    /// a tick in practice), without leaving an error behind.
    #[test]
    fn stop_ends_a_thread_stuck_in_the_handshake() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let ctx = context(port);
        let (status, stop) = (Arc::clone(&ctx.status), Arc::clone(&ctx.stop));
        let t = std::thread::spawn(move || run(ctx));
        let (_held, _) = listener.accept().unwrap();
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(status.snapshot().io_running, IoRunning::Connecting);
        stop.store(true, Ordering::Relaxed);
        let deadline = Instant::now() + Duration::from_secs(60);
        while !t.is_finished() {
            assert!(Instant::now() < deadline, "STOP did not end the thread");
            std::thread::sleep(Duration::from_millis(20));
        }
        t.join().unwrap();
        let s = status.snapshot();
        assert_eq!(
            (s.io_running, s.last_io_errno, s.io_state.as_str()),
            (IoRunning::No, 0, "")
        );
    }

    /// Nothing listens: 2003 with MariaDB's retry text while the thread waits `connect_retry`
    /// (60 s) as Connecting; STOP ends the wait.
    #[test]
    fn an_unreachable_primary_is_2003_and_connecting() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let ctx = context(port);
        let (status, stop) = (Arc::clone(&ctx.status), Arc::clone(&ctx.stop));
        let t = std::thread::spawn(move || run(ctx));
        let deadline = Instant::now() + Duration::from_secs(60);
        while status.snapshot().last_io_errno == 0 {
            assert!(Instant::now() < deadline, "no connect error");
            std::thread::sleep(Duration::from_millis(20));
        }
        let s = status.snapshot();
        assert_eq!(s.last_io_errno, 2003);
        assert_eq!(
            s.last_io_error,
            format!(
                "error connecting to master 'repl@127.0.0.1:{port}' - retry-time: 60  \
                 maximum-retries: 100000  message: Can't connect to server on '127.0.0.1' \
                 (111 \"Connection refused\")"
            )
        );
        assert_eq!(s.io_running, IoRunning::Connecting);
        assert_eq!(s.io_state, "Connecting to master");
        stop.store(true, Ordering::Relaxed);
        while !t.is_finished() {
            assert!(Instant::now() < deadline, "STOP did not end the retry wait");
            std::thread::sleep(Duration::from_millis(20));
        }
        t.join().unwrap();
        let s = status.snapshot();
        // The error stays for SHOW SLAVE STATUS after the thread stopped, as in MariaDB.
        assert_eq!((s.io_running, s.last_io_errno), (IoRunning::No, 2003));
    }

    struct NoHost;

    impl ReplicaHost for NoHost {
        fn server_id(&self) -> u32 {
            2
        }
        fn gtid_slave_pos(&self) -> GtidPos {
            GtidPos::new()
        }
        fn gtid_current_pos(&self) -> GtidPos {
            GtidPos::new()
        }
        fn gtid_strict_mode(&self) -> bool {
            false
        }
        fn settings(&self) -> ReplicaSettings {
            ReplicaSettings {
                slave_net_timeout: 600,
                slave_parallel_mode: ParallelMode::None,
                slave_transaction_retries: 0,
                ..ReplicaSettings::default()
            }
        }
        fn applier(&self) -> Box<dyn super::super::GroupApplier> {
            unreachable!("the IO thread never applies")
        }
    }
}
