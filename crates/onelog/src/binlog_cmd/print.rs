//! Text of `onelog binlog`: binlog events printed the way `mariadb-binlog
//! --base64-output=decode-rows` prints them (MariaDB's `sql/log_event_client.cc` and
//! `client/mysqlbinlog.cc` are the reference for every line shape), plus `#` comment lines
//! for what only onelog segments have (segment header, record LSNs, GTID-state and
//! CommitMark records).
//!
//! Owns [`Printer`], which carries the session state mariadb-binlog carries between events
//! (current database, which `SET @@session...` lines were already printed, table maps), so the
//! output stays as compact as the real tool's.
//!
//! Invariants: the printer never panics on any bytes (events are checked by size and CRC32
//! before they are decoded; a decode error is returned, naming the event's offset); output is
//! written as bytes, so row values that are not UTF-8 come out exactly as MariaDB prints them.

use std::io::{self, Write};

use onelog_binlog::event::format_description::LOG_EVENT_BINLOG_IN_USE_F;
use onelog_binlog::event::gtid::{
    FL_ALLOW_PARALLEL, FL_DDL, FL_GROUP_COMMIT_ID, FL_STANDALONE, FL_TRANSACTIONAL, FL_WAITED,
};
use onelog_binlog::event::query::LOG_EVENT_SUPPRESS_USE_F;
use onelog_binlog::event::{
    check_event, crc32, decode_event_with_header, event_type, Event, EventHeader,
    FormatDescriptionEvent, GtidEvent, QueryEvent, RawRowsEvent, Rows, RowsEvent, TableMap,
    CHECKSUM_LEN, HEADER_LEN,
};
use onelog_binlog::value::{ENUM_REAL_TYPE, SET_REAL_TYPE};
use onelog_binlog::{ColumnMeta, ColumnType, TableMapCache, Value};

/// The delimiter mariadb-binlog declares (`DELIMITER /*!*/;`).
const DELIM: &str = "/*!*/;";

// Session option bits of the Query event's Q_FLAGS2 (MariaDB `sql_priv.h`).
const OPTION_AUTO_IS_NULL: u32 = 1 << 14;
const OPTION_NO_CHECK_CONSTRAINT_CHECKS: u32 = 1 << 15;
const OPTION_NOT_AUTOCOMMIT: u32 = 1 << 19;
const OPTION_EXPLICIT_DEF_TIMESTAMP: u32 = 1 << 24;
const OPTION_NO_FOREIGN_KEY_CHECKS: u32 = 1 << 26;
const OPTION_RELAXED_UNIQUE_CHECKS: u32 = 1 << 27;
const OPTION_IF_EXISTS: u32 = 1 << 28;
const OPTION_INSERT_HISTORY: u32 = 1 << 30;

/// An event that cannot be decoded: where, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventError {
    pub offset: u64,
    pub reason: String,
}

/// What the printer needs to know about where an event lies.
#[derive(Debug, Clone, Copy)]
pub struct EventPos {
    /// File offset of the event's first byte (`# at`).
    pub offset: u64,
    /// `end_log_pos` to print: the header's for classic files, the end offset in the
    /// segment file for onelog segments (whose events carry 0).
    pub end_log_pos: u64,
}

/// mariadb-binlog's `PRINT_EVENT_INFO`: what was already said, so it is not repeated.
pub struct Printer {
    /// 0: no rows; 1: `-v` pseudo-SQL rows; 2: `-vv` with column types.
    pub verbose: u8,
    /// `--base64-output=auto`: also print the `BINLOG '...'` statements that make the output
    /// replayable into a MariaDB server (Format_description, Table_map + rows events).
    pub base64: bool,
    db: Vec<u8>,
    thread_id: Option<u32>,
    flags2: Option<u32>,
    sql_mode: Option<u64>,
    auto_increment_printed: bool,
    charset: Option<[u16; 3]>,
    lc_time_names_printed: bool,
    collation_database_printed: bool,
    allow_parallel: Option<bool>,
    domain_id: Option<u32>,
    server_id: Option<u32>,
    maps: TableMapCache,
    /// Verbose rows waiting for the end of their statement (mariadb-binlog's tail cache).
    tail: Vec<u8>,
    /// Base64 of the Table_map and rows events of the current statement (the body cache).
    body: Vec<u8>,
    /// Header lines of rows events waiting for the end of their statement (mariadb-binlog's
    /// head cache: `# at` lines come out at once, these only with the statement's last event).
    head: Vec<u8>,
    /// Rows counted since the last statement end (`# Number of rows`).
    rows: u64,
}

/// The first line every event starts with (`Log_event::print_header`).
#[derive(Clone, Copy)]
struct HeadLine<'a> {
    h: &'a EventHeader,
    end_log_pos: u64,
    crc: u32,
}

impl HeadLine<'_> {
    fn write(&self, out: &mut dyn Write) -> io::Result<()> {
        write!(
            out,
            "#{} server id {}  end_log_pos {} CRC32 0x{:08x} ",
            format_timestamp(self.h.timestamp),
            self.h.server_id,
            self.end_log_pos,
            self.crc
        )
    }
}

/// A Format_description of an open classic file has the in-use flag set, which its CRC32 does
/// not cover: the event to check and decode is `ev` with the flag cleared (a copy only then);
/// true when it was set.
fn without_in_use_flag(ev: &[u8]) -> (std::borrow::Cow<'_, [u8]>, bool) {
    let in_use = ev.len() > HEADER_LEN
        && ev[4] == event_type::FORMAT_DESCRIPTION
        && ev[17] & LOG_EVENT_BINLOG_IN_USE_F as u8 != 0;
    if !in_use {
        return (std::borrow::Cow::Borrowed(ev), false);
    }
    let mut c = ev.to_vec();
    c[17] &= !(LOG_EVENT_BINLOG_IN_USE_F as u8);
    (std::borrow::Cow::Owned(c), true)
}

impl Printer {
    pub fn new(verbose: u8) -> Self {
        Printer {
            verbose,
            base64: false,
            db: Vec::new(),
            thread_id: None,
            flags2: None,
            sql_mode: None,
            auto_increment_printed: false,
            charset: None,
            lc_time_names_printed: false,
            collation_database_printed: false,
            allow_parallel: None,
            domain_id: None,
            server_id: None,
            maps: TableMapCache::new(),
            tail: Vec::new(),
            body: Vec::new(),
            head: Vec::new(),
            rows: 0,
        }
    }

    /// The lines mariadb-binlog starts its output with.
    pub fn preamble(out: &mut dyn Write) -> io::Result<()> {
        out.write_all(
            b"/*!50530 SET @@SESSION.PSEUDO_SLAVE_MODE=1*/;\n\
              /*!40019 SET @@session.max_delayed_threads=0*/;\n\
              /*!50003 SET @OLD_COMPLETION_TYPE=@@COMPLETION_TYPE,COMPLETION_TYPE=0*/;\n\
              DELIMITER /*!*/;\n",
        )
    }

    /// The lines mariadb-binlog ends its output with.
    pub fn postamble(out: &mut dyn Write) -> io::Result<()> {
        out.write_all(
            b"DELIMITER ;\n\
              # End of log file\n\
              ROLLBACK /* added by mysqlbinlog */;\n\
              /*!50003 SET COMPLETION_TYPE=@OLD_COMPLETION_TYPE*/;\n\
              /*!50530 SET @@SESSION.PSEUDO_SLAVE_MODE=0*/;\n",
        )
    }

    /// Forgets table maps (at a new event group: maps never outlive their group).
    pub fn start_group(&mut self) {
        self.maps.clear();
        self.head.clear();
        self.tail.clear();
        self.body.clear();
        self.rows = 0;
    }

    /// Prints one whole event (header to CRC32). `Ok(Err(..))` is an event that does not
    /// decode; `Err` is an output error.
    pub fn event(
        &mut self,
        out: &mut dyn Write,
        pos: EventPos,
        ev: &[u8],
    ) -> io::Result<Result<(), EventError>> {
        let bad = |reason: String| {
            Ok(Err(EventError {
                offset: pos.offset,
                reason,
            }))
        };
        let (bytes, in_use) = without_in_use_flag(ev);
        let (h, event, _) = match decode_event_with_header(&bytes) {
            Ok(x) => x,
            Err(e) => return bad(format!("{} event: {e}", type_name(ev.get(4).copied()))),
        };
        let size = h.event_size as usize;
        let crc = match ev.get(size.saturating_sub(CHECKSUM_LEN)..size) {
            Some(b) => u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            None => 0,
        };
        // The event's own bytes (base64 output).
        let raw = &ev[..size.min(ev.len())];
        writeln!(out, "# at {}", pos.offset)?;
        let head = HeadLine {
            h: &h,
            end_log_pos: pos.end_log_pos,
            crc,
        };
        match event {
            Event::FormatDescription(f) => self.format_description(out, head, &f, in_use, raw)?,
            Event::GtidList(l) => {
                head.write(out)?;
                let mut gtids = l.gtids.clone();
                gtids.sort_by_key(|g| (g.domain_id, g.server_id, g.seq_no));
                let list: Vec<String> = gtids.iter().map(|g| g.to_string()).collect();
                writeln!(out, "\tGtid list [{}]", list.join(",\n# "))?;
            }
            Event::BinlogCheckpoint(c) => {
                head.write(out)?;
                writeln!(out, "\tBinlog checkpoint {}", c.file)?;
            }
            Event::Rotate(r) => {
                head.write(out)?;
                writeln!(out, "\tRotate to {}  pos: {}", r.next_file, r.position)?;
            }
            Event::Gtid(g) => self.gtid(out, head, &g)?,
            Event::Query(q) => {
                head.write(out)?;
                self.query(out, &h, &q)?;
            }
            Event::Xid(x) => {
                head.write(out)?;
                writeln!(out, "\tXid = {}", x.xid)?;
                writeln!(out, "COMMIT{DELIM}")?;
            }
            Event::AnnotateRows(a) => {
                head.write(out)?;
                out.write_all(b"\tAnnotate_rows:\n")?;
                for line in a.query.split(['\r', '\n']).filter(|l| !l.is_empty()) {
                    writeln!(out, "#Q> {line}")?;
                }
            }
            Event::TableMap(m) => self.table_map(out, head, m, raw)?,
            Event::Rows(rows) => {
                if let Err(reason) = self.rows_event(out, head, &rows, raw)? {
                    return bad(reason);
                }
            }
            Event::Unknown { header, .. } => {
                head.write(out)?;
                writeln!(out, "\t{}", type_name(Some(header.event_type)))?;
                writeln!(out, "# (event type {} not decoded)", header.event_type)?;
            }
        }
        Ok(Ok(()))
    }

    /// A Format_description event (`Format_description_log_event::print`); `in_use`: the file's
    /// in-use flag was set.
    fn format_description(
        &mut self,
        out: &mut dyn Write,
        head: HeadLine<'_>,
        f: &FormatDescriptionEvent,
        in_use: bool,
        raw: &[u8],
    ) -> io::Result<()> {
        head.write(out)?;
        // mariadb-binlog prints the event's own time after "created"
        // (`print_timestamp` of `when`), "at startup" when create_timestamp is set.
        write!(
            out,
            "\tStart: binlog v {}, server v {} created {}",
            f.binlog_version,
            f.server_version,
            format_timestamp(head.h.timestamp)
        )?;
        if f.create_timestamp != 0 {
            out.write_all(b" at startup")?;
        }
        out.write_all(b"\n")?;
        if in_use {
            out.write_all(
                b"# Warning: this binlog is either in use or was not closed properly.\n",
            )?;
        }
        if f.create_timestamp != 0 {
            writeln!(out, "ROLLBACK{DELIM}")?;
        }
        if self.base64 {
            out.write_all(b"BINLOG '\n")?;
            out.write_all(&base64(raw))?;
            writeln!(out, "\n'{DELIM}")?;
        }
        Ok(())
    }

    /// A GTID event: starts a group, and prints the session lines that changed.
    fn gtid(&mut self, out: &mut dyn Write, head: HeadLine<'_>, g: &GtidEvent) -> io::Result<()> {
        self.start_group();
        head.write(out)?;
        write!(out, "\tGTID {}", g.gtid)?;
        if g.flags2 & FL_GROUP_COMMIT_ID != 0 {
            write!(out, " cid={}", g.commit_id.unwrap_or(0))?;
        }
        if g.flags2 & FL_DDL != 0 {
            out.write_all(b" ddl")?;
        }
        if g.flags2 & FL_TRANSACTIONAL != 0 {
            out.write_all(b" trans")?;
        }
        if g.flags2 & FL_WAITED != 0 {
            out.write_all(b" waited")?;
        }
        out.write_all(b"\n")?;
        let parallel = g.flags2 & FL_ALLOW_PARALLEL != 0;
        if self.allow_parallel != Some(parallel) {
            writeln!(
                out,
                "/*M!100101 SET @@session.skip_parallel_replication={}*/{DELIM}",
                u8::from(!parallel)
            )?;
            self.allow_parallel = Some(parallel);
        }
        if self.domain_id != Some(g.gtid.domain_id) {
            writeln!(
                out,
                "/*M!100001 SET @@session.gtid_domain_id={}*/{DELIM}",
                g.gtid.domain_id
            )?;
            self.domain_id = Some(g.gtid.domain_id);
        }
        if self.server_id != Some(g.gtid.server_id) {
            writeln!(
                out,
                "/*M!100001 SET @@session.server_id={}*/{DELIM}",
                g.gtid.server_id
            )?;
            self.server_id = Some(g.gtid.server_id);
        }
        writeln!(
            out,
            "/*M!100001 SET @@session.gtid_seq_no={}*/{DELIM}",
            g.gtid.seq_no
        )?;
        if g.flags2 & FL_STANDALONE == 0 {
            writeln!(out, "START TRANSACTION\n{DELIM}")?;
        }
        Ok(())
    }

    /// A Table_map event: remembered for the rows events of its statement.
    fn table_map(
        &mut self,
        out: &mut dyn Write,
        head: HeadLine<'_>,
        m: TableMap,
        raw: &[u8],
    ) -> io::Result<()> {
        head.write(out)?;
        write!(out, "\tTable_map: ")?;
        write_ident(out, m.db.as_bytes())?;
        out.write_all(b".")?;
        write_ident(out, m.table.as_bytes())?;
        writeln!(out, " mapped to number {}", m.table_id)?;
        self.maps.insert(m);
        if self.base64 {
            self.body.extend_from_slice(&base64(raw));
            self.body.push(b'\n');
        }
        Ok(())
    }

    /// A rows event: its header line, base64 and verbose rows wait in the head, body and tail
    /// caches until the statement's last event (`STMT_END_F`) prints them all. `Ok(Err(..))`:
    /// the rows do not decode against their table map.
    fn rows_event(
        &mut self,
        out: &mut dyn Write,
        head: HeadLine<'_>,
        rows: &RawRowsEvent,
        raw: &[u8],
    ) -> io::Result<Result<(), String>> {
        let decoded = match self.maps.get(rows.table_id).cloned() {
            Some(map) => match RowsEvent::decode(&rows.bytes, &map) {
                Ok(r) => Some((map, r)),
                Err(e) => return Ok(Err(format!("rows event: {e}"))),
            },
            None => None,
        };
        let name = match rows.kind {
            onelog_binlog::event::RowsKind::Write => "Write_rows",
            onelog_binlog::event::RowsKind::Update => "Update_rows",
            onelog_binlog::event::RowsKind::Delete => "Delete_rows",
        };
        let flags = rows_flags(&rows.bytes);
        let stmt_end = flags & onelog_binlog::event::STMT_END_F != 0;
        let mut pending = std::mem::take(&mut self.head);
        head.write(&mut pending)?;
        writeln!(
            pending,
            "\t{name}: table id {}{}",
            rows.table_id,
            if stmt_end { " flags: STMT_END_F" } else { "" }
        )?;
        self.head = pending;
        if self.base64 {
            self.body.extend_from_slice(&base64(raw));
            self.body.push(b'\n');
        }
        match decoded {
            Some((map, r)) => {
                self.rows += r.rows.len() as u64;
                if self.verbose > 0 {
                    let mut tail = std::mem::take(&mut self.tail);
                    write_rows(&mut tail, &map, &r, self.verbose)?;
                    self.tail = tail;
                }
            }
            None => {
                if self.verbose > 0 {
                    writeln!(
                        self.tail,
                        "### Row event for unknown table #{}",
                        rows.table_id
                    )?;
                }
            }
        }
        if stmt_end {
            self.end_statement(out)?;
        }
        Ok(Ok(()))
    }

    /// The statement's last rows event: prints the cached header lines, base64 and rows.
    fn end_statement(&mut self, out: &mut dyn Write) -> io::Result<()> {
        out.write_all(&self.head)?;
        self.head.clear();
        if self.base64 {
            out.write_all(b"\nBINLOG '\n")?;
            out.write_all(&self.body)?;
            writeln!(out, "'{DELIM}")?;
        }
        self.body.clear();
        out.write_all(&self.tail)?;
        self.tail.clear();
        writeln!(out, "# Number of rows: {}", self.rows)?;
        self.rows = 0;
        Ok(())
    }

    /// The `SET ...` lines and text of a Query event (`Query_log_event::print`).
    fn query(&mut self, out: &mut dyn Write, h: &EventHeader, q: &QueryEvent) -> io::Result<()> {
        writeln!(
            out,
            "\tQuery\tthread_id={}\texec_time={}\terror_code={}\txid=0",
            q.thread_id, q.exec_time, q.error_code
        )?;
        // LOG_EVENT_SUPPRESS_USE_F (CREATE/DROP DATABASE): no `use`, and the next statement
        // that names a database prints its `use` again (BEGIN/COMMIT keep the current one).
        if h.flags & LOG_EVENT_SUPPRESS_USE_F != 0 {
            if !matches!(q.query.as_bytes(), b"BEGIN" | b"COMMIT" | b"ROLLBACK") {
                self.db.clear();
            }
        } else {
            if !q.db.is_empty() && self.db != q.db.as_bytes() {
                out.write_all(b"use ")?;
                write_ident(out, q.db.as_bytes())?;
                writeln!(out, "{DELIM}")?;
            }
            self.db = q.db.as_bytes().to_vec();
        }
        writeln!(out, "SET TIMESTAMP={}{DELIM}", h.timestamp)?;
        if self.thread_id != Some(q.thread_id) {
            writeln!(out, "SET @@session.pseudo_thread_id={}{DELIM}", q.thread_id)?;
            self.thread_id = Some(q.thread_id);
        }
        let changed = match self.flags2 {
            Some(f) => f ^ q.flags2,
            None => u32::MAX,
        };
        if changed != 0 {
            writeln!(out, "SET {}{DELIM}", flags2_assignments(changed, q.flags2))?;
            self.flags2 = Some(q.flags2);
        }
        if self.sql_mode != Some(q.sql_mode) {
            writeln!(out, "SET @@session.sql_mode={}{DELIM}", q.sql_mode)?;
            self.sql_mode = Some(q.sql_mode);
        }
        if !self.auto_increment_printed {
            writeln!(
                out,
                "SET @@session.auto_increment_increment=1, @@session.auto_increment_offset=1{DELIM}"
            )?;
            self.auto_increment_printed = true;
        }
        if q.charset != [0; 3] && self.charset != Some(q.charset) {
            match charset_name(q.charset[0]) {
                Some(cs) => {
                    writeln!(out, "/*!\\C {cs} */{DELIM}")?;
                }
                None => out.write_all(b"# Ignored (Unknown charset) ")?,
            }
            writeln!(
                out,
                "SET @@session.character_set_client={},@@session.collation_connection={},@@session.collation_server={}{DELIM}",
                charset_name(q.charset[0]).unwrap_or("Unknown"),
                q.charset[1],
                q.charset[2]
            )?;
            self.charset = Some(q.charset);
        }
        if !self.lc_time_names_printed {
            writeln!(out, "SET @@session.lc_time_names=0{DELIM}")?;
            self.lc_time_names_printed = true;
        }
        if !self.collation_database_printed {
            writeln!(out, "SET @@session.collation_database=DEFAULT{DELIM}")?;
            self.collation_database_printed = true;
        }
        out.write_all(q.query.as_bytes())?;
        writeln!(out, "\n{DELIM}")
    }
}

/// The session variables of Q_FLAGS2 mariadb-binlog prints, in its order: the option bit,
/// whether the variable is ON when the bit is clear (the `NO_...` bits), the variable.
const FLAGS2_VARS: [(u32, bool, &str); 8] = [
    (
        OPTION_NO_FOREIGN_KEY_CHECKS,
        true,
        "@@session.foreign_key_checks",
    ),
    (OPTION_AUTO_IS_NULL, false, "@@session.sql_auto_is_null"),
    (
        OPTION_RELAXED_UNIQUE_CHECKS,
        true,
        "@@session.unique_checks",
    ),
    (OPTION_NOT_AUTOCOMMIT, true, "@@session.autocommit"),
    (
        OPTION_NO_CHECK_CONSTRAINT_CHECKS,
        true,
        "@@session.check_constraint_checks",
    ),
    (OPTION_IF_EXISTS, false, "@@session.sql_if_exists"),
    (
        OPTION_EXPLICIT_DEF_TIMESTAMP,
        false,
        "@@session.explicit_defaults_for_timestamp",
    ),
    (
        OPTION_INSERT_HISTORY,
        false,
        "@@session.system_versioning_insert_history",
    ),
];

/// `var=0|1, ...` for the Q_FLAGS2 variables whose bit is in `changed`, as `flags2` sets them.
fn flags2_assignments(changed: u32, flags2: u32) -> String {
    FLAGS2_VARS
        .iter()
        .filter(|(bit, _, _)| changed & bit != 0)
        .map(|&(bit, on_when_clear, name)| {
            format!("{name}={}", u8::from((flags2 & bit == 0) == on_when_clear))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The flags word of a v1 rows event (after the 6-byte table id).
fn rows_flags(ev: &[u8]) -> u16 {
    match ev.get(HEADER_LEN + 6..HEADER_LEN + 8) {
        Some(b) => u16::from_le_bytes([b[0], b[1]]),
        None => 0,
    }
}

/// Checks that `ev` is one whole event with a good CRC32 (Format_description: ignoring the
/// in-use flag) and returns its length.
pub fn checked_len(ev: &[u8]) -> Result<usize, String> {
    if ev.len() > HEADER_LEN
        && ev[4] == event_type::FORMAT_DESCRIPTION
        && ev[17] & LOG_EVENT_BINLOG_IN_USE_F as u8 != 0
    {
        let size = u32::from_le_bytes([ev[9], ev[10], ev[11], ev[12]]) as usize;
        if size < HEADER_LEN + CHECKSUM_LEN || size > ev.len() {
            return Err(format!("event size {size} does not fit"));
        }
        let mut c = ev[..size].to_vec();
        c[17] &= !(LOG_EVENT_BINLOG_IN_USE_F as u8);
        let stored = u32::from_le_bytes([c[size - 4], c[size - 3], c[size - 2], c[size - 1]]);
        if crc32(&c[..size - 4]) != stored {
            return Err("bad CRC32".into());
        }
        return Ok(size);
    }
    check_event(ev)
        .map(|(_, e)| e.len())
        .map_err(|e| e.to_string())
}

/// MariaDB's name of an event type (`Log_event::get_type_str`).
pub fn type_name(t: Option<u8>) -> &'static str {
    match t {
        Some(2) => "Query",
        Some(3) => "Stop",
        Some(4) => "Rotate",
        Some(5) => "Intvar",
        Some(13) => "RAND",
        Some(14) => "User var",
        Some(15) => "Format_desc",
        Some(16) => "Xid",
        Some(19) => "Table_map",
        Some(23) => "Write_rows_v1",
        Some(24) => "Update_rows_v1",
        Some(25) => "Delete_rows_v1",
        Some(26) => "Incident",
        Some(27) => "Heartbeat",
        Some(28) => "Ignorable",
        Some(30) => "Write_rows",
        Some(31) => "Update_rows",
        Some(32) => "Delete_rows",
        Some(160) => "Annotate_rows",
        Some(161) => "Binlog_checkpoint",
        Some(162) => "Gtid",
        Some(163) => "Gtid_list",
        Some(164) => "Start_encryption",
        Some(165) => "Query_compressed",
        _ => "Unknown",
    }
}

/// Character set name of a collation id (the ones onelog and common clients use).
fn charset_name(collation: u16) -> Option<&'static str> {
    Some(match collation {
        8 | 47 | 48 | 5 | 15 | 31 | 94 => "latin1",
        33 | 83 | 192..=215 | 223 => "utf8mb3",
        45 | 46 | 224..=247 | 255 | 256..=309 => "utf8mb4",
        63 => "binary",
        11 | 65 => "ascii",
        _ => return None,
    })
}

/// Base64 as MariaDB's `my_base64_encode` writes it: standard alphabet with padding, a
/// newline before every group of four that would start past column 76.
pub fn base64(data: &[u8]) -> Vec<u8> {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::with_capacity(data.len() * 4 / 3 + data.len() / 57 + 4);
    let mut line = 0;
    for chunk in data.chunks(3) {
        if line == 76 {
            out.push(b'\n');
            line = 0;
        }
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        out.push(ALPHABET[(n >> 18) as usize & 63]);
        out.push(ALPHABET[(n >> 12) as usize & 63]);
        out.push(if chunk.len() > 1 {
            ALPHABET[(n >> 6) as usize & 63]
        } else {
            b'='
        });
        out.push(if chunk.len() > 2 {
            ALPHABET[n as usize & 63]
        } else {
            b'='
        });
        line += 4;
    }
    out
}

/// `%`s` of MariaDB's printf: a backtick-quoted identifier, backticks doubled.
pub fn write_ident(out: &mut dyn Write, name: &[u8]) -> io::Result<()> {
    out.write_all(b"`")?;
    for &b in name {
        if b == b'`' {
            out.write_all(b"``")?;
        } else {
            out.write_all(&[b])?;
        }
    }
    out.write_all(b"`")
}

/// `#YYMMDD HH:MM:SS` in local time, as `Log_event::print_timestamp` (hour space-padded).
pub fn format_timestamp(ts: u32) -> String {
    let t = ts as libc::time_t;
    // SAFETY: localtime_r only writes into the `tm` we own; a zeroed tm is a valid value.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    let ok = unsafe { !libc::localtime_r(&t, &mut tm).is_null() };
    if !ok {
        return "000000  0:00:00".to_string();
    }
    format!(
        "{:02}{:02}{:02} {:2}:{:02}:{:02}",
        tm.tm_year.rem_euclid(100),
        tm.tm_mon + 1,
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec
    )
}

/// The `### INSERT INTO ...` pseudo-SQL of a rows event (`Rows_log_event::print_verbose`).
fn write_rows(out: &mut Vec<u8>, map: &TableMap, r: &RowsEvent, verbose: u8) -> io::Result<()> {
    let mut name = Vec::new();
    write_ident(&mut name, map.db.as_bytes())?;
    name.push(b'.');
    write_ident(&mut name, map.table.as_bytes())?;
    let after_present = r
        .columns_present_after
        .as_deref()
        .unwrap_or(&r.columns_present);
    match &r.rows {
        Rows::Write(rows) => {
            if rows.is_empty() {
                out.write_all(b"### INSERT INTO ")?;
                out.write_all(&name)?;
                out.write_all(b" VALUES ()\n")?;
            }
            for row in rows {
                out.write_all(b"### INSERT INTO ")?;
                out.write_all(&name)?;
                out.write_all(b"\n### SET\n")?;
                write_image(out, map, &r.columns_present, row, verbose)?;
            }
        }
        Rows::Delete(rows) => {
            for row in rows {
                out.write_all(b"### DELETE FROM ")?;
                out.write_all(&name)?;
                out.write_all(b"\n### WHERE\n")?;
                write_image(out, map, &r.columns_present, row, verbose)?;
            }
        }
        Rows::Update(rows) => {
            for (before, after) in rows {
                out.write_all(b"### UPDATE ")?;
                out.write_all(&name)?;
                out.write_all(b"\n### WHERE\n")?;
                write_image(out, map, &r.columns_present, before, verbose)?;
                if after_present.iter().any(|&p| p) {
                    out.write_all(b"### SET\n")?;
                    write_image(out, map, after_present, after, verbose)?;
                } else {
                    out.write_all(b"### SET /* no columns */\n")?;
                }
            }
        }
    }
    Ok(())
}

fn write_image(
    out: &mut Vec<u8>,
    map: &TableMap,
    present: &[bool],
    row: &[Value],
    verbose: u8,
) -> io::Result<()> {
    for (i, col) in map.columns.iter().enumerate() {
        if !present.get(i).copied().unwrap_or(false) {
            continue;
        }
        let v = row.get(i).unwrap_or(&Value::Null);
        write!(out, "###   @{}=", i + 1)?;
        write_value(out, col, v)?;
        if verbose > 1 {
            write!(
                out,
                " /* {} meta={} nullable={} is_null={} */",
                type_text(col),
                col.meta,
                u8::from(col.nullable),
                u8::from(matches!(v, Value::Null))
            )?;
        }
        out.push(b'\n');
    }
    Ok(())
}

/// Column type text of `-vv` (`log_event_print_value`'s typestr).
fn type_text(col: &ColumnMeta) -> String {
    use ColumnType as T;
    match col.column_type {
        T::Tiny => "TINYINT".into(),
        T::Short => "SHORTINT".into(),
        T::Int24 => "MEDIUMINT".into(),
        T::Long => "INT".into(),
        T::LongLong => "LONGINT".into(),
        T::Float => "FLOAT".into(),
        T::Double => "DOUBLE".into(),
        T::NewDecimal => format!("DECIMAL({},{})", col.meta >> 8, col.meta & 0xff),
        T::Timestamp2 => format!("TIMESTAMP({})", col.meta),
        T::DateTime2 => format!("DATETIME({})", col.meta),
        T::Time2 => format!("TIME({})", col.meta),
        T::Date | T::NewDate => "DATE".into(),
        T::Year => "YEAR".into(),
        T::VarChar | T::VarString => format!("VARSTRING({})", col.meta),
        T::String => {
            let (real, len) = ColumnMeta::unpack_string_meta(col.meta);
            match real {
                ENUM_REAL_TYPE => format!("ENUM({len} byte{})", if len == 1 { "" } else { "s" }),
                SET_REAL_TYPE => format!("SET({len} bytes)"),
                _ => format!("STRING({len})"),
            }
        }
        T::TinyBlob | T::Blob | T::MediumBlob | T::LongBlob => match col.meta {
            1 => "TINYBLOB/TINYTEXT".into(),
            2 => "BLOB/TEXT".into(),
            3 => "MEDIUMBLOB/MEDIUMTEXT".into(),
            _ => "LONGBLOB/LONGTEXT".into(),
        },
        T::Geometry => "GEOMETRY".into(),
        other => format!("{other:?}"),
    }
}

/// `my_b_write_quoted`: bytes above 0x1F as they are, others as `\xNN`, in single quotes.
fn write_quoted(out: &mut Vec<u8>, b: &[u8]) {
    out.push(b'\'');
    for &c in b {
        if c > 0x1f {
            out.push(c);
        } else {
            out.extend_from_slice(format!("\\x{c:02x}").as_bytes());
        }
    }
    out.push(b'\'');
}

/// Bytes of an integer column's packed form.
fn int_bytes(t: ColumnType) -> u32 {
    match t {
        ColumnType::Tiny => 1,
        ColumnType::Short => 2,
        ColumnType::Int24 => 3,
        ColumnType::Long => 4,
        _ => 8,
    }
}

/// One value as `log_event_print_value` prints it.
fn write_value(out: &mut Vec<u8>, col: &ColumnMeta, v: &Value) -> io::Result<()> {
    use ColumnType as T;
    match v {
        Value::Null => out.extend_from_slice(b"NULL"),
        Value::Int(_) | Value::UInt(_) if is_enum_or_set(col).is_some() => {
            let n = match v {
                Value::UInt(u) => *u,
                Value::Int(i) => *i as u64,
                _ => 0,
            };
            match is_enum_or_set(col) {
                Some(true) => write!(out, "{n}")?,
                _ => {
                    let (_, len) = ColumnMeta::unpack_string_meta(col.meta);
                    let bytes = n.to_le_bytes();
                    out.extend_from_slice(b"b'");
                    for byte in bytes.iter().take(usize::from(len).min(8)) {
                        for bit in (0..8).rev() {
                            out.push(if byte >> bit & 1 == 1 { b'1' } else { b'0' });
                        }
                    }
                    out.push(b'\'');
                }
            }
        }
        Value::Int(_) | Value::UInt(_) => {
            let bits = 8 * int_bytes(col.column_type);
            let raw = match v {
                Value::Int(i) => *i as u64,
                Value::UInt(u) => *u,
                _ => 0,
            };
            let raw = if bits < 64 {
                raw & ((1u64 << bits) - 1)
            } else {
                raw
            };
            if col.column_type == T::Year {
                write!(out, "{:04}", raw + 1900)?;
                return Ok(());
            }
            let shift = 64 - bits;
            let signed = ((raw << shift) as i64) >> shift;
            write!(out, "{signed}")?;
            if signed < 0 {
                write!(out, " ({raw})")?;
            }
        }
        Value::Float(f) => {
            let s = format_g(f64::from(*f), 6);
            write!(out, "{s:<20}")?;
        }
        Value::Double(f) => out.extend_from_slice(format_g(*f, 20).as_bytes()),
        Value::Decimal(s) => out.extend_from_slice(s.as_bytes()),
        Value::Bytes(b) => write_quoted(out, b),
        Value::Date { year, month, day } => {
            write!(out, "'{year:04}:{month:02}:{day:02}'")?;
        }
        Value::DateTime {
            year,
            month,
            day,
            hour,
            minute,
            second,
            micros,
        } => {
            let mut s = format!("{year:04}-{month:02}-{day:02} {hour:02}:{minute:02}:{second:02}");
            push_fraction(&mut s, *micros, col.meta);
            write_quoted(out, s.as_bytes());
        }
        Value::Timestamp { secs, micros } => {
            let mut s = secs.to_string();
            push_fraction(&mut s, *micros, col.meta);
            out.extend_from_slice(s.as_bytes());
        }
        Value::Time {
            negative,
            hours,
            minutes,
            seconds,
            micros,
        } => {
            let mut s = format!(
                "{}{hours:02}:{minutes:02}:{seconds:02}",
                if *negative { "-" } else { "" }
            );
            push_fraction(&mut s, *micros, col.meta);
            write_quoted(out, s.as_bytes());
        }
        Value::Year(y) => write!(out, "{y:04}")?,
    }
    Ok(())
}

/// Some(true) for ENUM, Some(false) for SET columns (carried as `String` with a real type).
fn is_enum_or_set(col: &ColumnMeta) -> Option<bool> {
    match col.column_type {
        ColumnType::Enum => Some(true),
        ColumnType::Set => Some(false),
        ColumnType::String => match ColumnMeta::unpack_string_meta(col.meta).0 {
            ENUM_REAL_TYPE => Some(true),
            SET_REAL_TYPE => Some(false),
            _ => None,
        },
        _ => None,
    }
}

/// `.ffffff` cut to `fsp` digits (nothing for fsp 0).
fn push_fraction(s: &mut String, micros: u32, fsp: u16) {
    let fsp = usize::from(fsp.min(6));
    if fsp > 0 {
        let digits = format!("{micros:06}");
        s.push('.');
        s.push_str(&digits[..fsp]);
    }
}

/// C's `%.{precision}g`.
pub fn format_g(x: f64, precision: usize) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x < 0.0 { "-inf".into() } else { "inf".into() };
    }
    let p = precision.max(1);
    if x == 0.0 {
        return if x.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    // The exponent after rounding to p significant digits.
    let sci = format!("{:.*e}", p - 1, x);
    let (mantissa, exp) = match sci.split_once('e') {
        Some((m, e)) => (m.to_string(), e.parse::<i32>().unwrap_or(0)),
        None => (sci.clone(), 0),
    };
    if exp < -4 || exp >= p as i32 {
        let m = strip_zeros(&mantissa);
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{m}e{sign}{:02}", exp.abs())
    } else {
        let decimals = (p as i32 - 1 - exp).max(0) as usize;
        strip_zeros(&format!("{x:.decimals$}"))
    }
}

fn strip_zeros(s: &str) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use onelog_binlog::event::table_map::RowMetadata;

    #[test]
    fn format_g_matches_c() {
        assert_eq!(format_g(1.5, 6), "1.5");
        assert_eq!(format_g(100000.0, 6), "100000");
        assert_eq!(format_g(1000000.0, 6), "1e+06");
        assert_eq!(format_g(0.0001, 6), "0.0001");
        assert_eq!(format_g(0.00001, 6), "1e-05");
        assert_eq!(format_g(-2.25, 6), "-2.25");
        assert_eq!(format_g(0.1, 20), "0.10000000000000000555");
        assert_eq!(format_g(3.0, 20), "3");
    }

    #[test]
    fn flags2_assignments_name_the_changed_variables_with_their_sense() {
        assert_eq!(
            flags2_assignments(u32::MAX, OPTION_AUTO_IS_NULL | OPTION_NOT_AUTOCOMMIT),
            "@@session.foreign_key_checks=1, @@session.sql_auto_is_null=1, \
             @@session.unique_checks=1, @@session.autocommit=0, \
             @@session.check_constraint_checks=1, @@session.sql_if_exists=0, \
             @@session.explicit_defaults_for_timestamp=0, \
             @@session.system_versioning_insert_history=0"
        );
        assert_eq!(
            flags2_assignments(OPTION_NO_FOREIGN_KEY_CHECKS, OPTION_NO_FOREIGN_KEY_CHECKS),
            "@@session.foreign_key_checks=0"
        );
    }

    #[test]
    fn base64_wraps_at_76_columns() {
        assert_eq!(base64(b""), b"");
        assert_eq!(base64(b"f"), b"Zg==");
        assert_eq!(base64(b"foobar"), b"Zm9vYmFy");
        let long = base64(&[0u8; 60]);
        assert_eq!(long.iter().position(|&c| c == b'\n'), Some(76));
        assert_eq!(long.len(), 80 + 1);
    }

    #[test]
    fn identifiers_double_backticks() {
        let mut v = Vec::new();
        write_ident(&mut v, b"a`b").unwrap();
        assert_eq!(v, b"`a``b`");
    }

    fn col(t: ColumnType, meta: u16) -> ColumnMeta {
        ColumnMeta {
            column_type: t,
            meta,
            unsigned: false,
            nullable: true,
            binary: false,
            name: String::new(),
        }
    }

    fn val(c: &ColumnMeta, v: Value) -> String {
        let mut out = Vec::new();
        write_value(&mut out, c, &v).unwrap();
        String::from_utf8_lossy(&out).into_owned()
    }

    #[test]
    fn values_print_like_mariadb() {
        assert_eq!(
            val(&col(ColumnType::Long, 0), Value::Int(-1)),
            "-1 (4294967295)"
        );
        assert_eq!(
            val(&col(ColumnType::Tiny, 0), Value::UInt(200)),
            "-56 (200)"
        );
        assert_eq!(val(&col(ColumnType::LongLong, 0), Value::Int(7)), "7");
        assert_eq!(
            val(&col(ColumnType::VarChar, 20), Value::bytes(b"a'\nb")),
            "'a'\\x0ab'"
        );
        assert_eq!(val(&col(ColumnType::Long, 0), Value::Null), "NULL");
        assert_eq!(
            val(
                &col(ColumnType::DateTime2, 3),
                Value::DateTime {
                    year: 2024,
                    month: 1,
                    day: 2,
                    hour: 3,
                    minute: 4,
                    second: 5,
                    micros: 120_000
                }
            ),
            "'2024-01-02 03:04:05.120'"
        );
        assert_eq!(
            val(
                &col(ColumnType::Date, 0),
                Value::Date {
                    year: 2024,
                    month: 1,
                    day: 2
                }
            ),
            "'2024:01:02'"
        );
        assert_eq!(
            val(&col(ColumnType::Float, 4), Value::Float(1.5)),
            format!("{:<20}", "1.5")
        );
        let set = col(
            ColumnType::String,
            ColumnMeta::pack_string_meta(SET_REAL_TYPE, 1),
        );
        assert_eq!(val(&set, Value::UInt(5)), "b'00000101'");
        let en = col(
            ColumnType::String,
            ColumnMeta::pack_string_meta(ENUM_REAL_TYPE, 1),
        );
        assert_eq!(val(&en, Value::UInt(2)), "2");
    }

    /// Events with a correct size and CRC32 but random bodies (what a bug or a deliberate
    /// forgery could put in a record whose frame checks) never panic the printer, with a
    /// table map in place so rows events are decoded against it too.
    #[test]
    fn random_events_with_valid_checksums_never_panic() {
        use onelog_binlog::event::{write_event, RowsEventWriter, RowsKind};
        let cols = vec![
            col(ColumnType::Long, 0),
            col(ColumnType::VarChar, 80),
            col(ColumnType::DateTime2, 6),
            col(ColumnType::NewDecimal, (10 << 8) | 2),
            col(ColumnType::Blob, 2),
            col(
                ColumnType::String,
                ColumnMeta::pack_string_meta(SET_REAL_TYPE, 2),
            ),
        ];
        let map = TableMap {
            table_id: 7,
            flags: 1,
            db: "d".into(),
            table: "t".into(),
            columns: cols.clone(),
            // MINIMAL: FULL would need the SET column's value list.
            metadata: RowMetadata::Minimal,
            primary_key: vec![],
        };
        let mut tm = Vec::new();
        map.encode(1, 1, &mut tm).unwrap();
        let mut good_rows = Vec::new();
        let mut w = RowsEventWriter::new(RowsKind::Write, 7, cols.len());
        w.push_row(
            &cols,
            &[
                Value::Int(1),
                Value::bytes(b"x"),
                Value::Null,
                Value::Decimal("1.50".into()),
                Value::bytes(vec![0, 1, 2]),
                Value::UInt(3),
            ],
        )
        .unwrap();
        w.finish(1, 1, true, &mut good_rows);
        let types = [2u8, 4, 15, 16, 19, 23, 24, 25, 160, 161, 162, 163, 5, 99];
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let pos = EventPos {
            offset: 0,
            end_log_pos: 0,
        };
        for round in 0..3000 {
            let mut p = Printer::new(2);
            let mut out = Vec::new();
            assert!(p.event(&mut out, pos, &tm).unwrap().is_ok());
            let ev = if round % 2 == 0 {
                // A real rows event with a few bytes of its body changed, CRC recomputed.
                let mut e = good_rows.clone();
                let body = e.len() - HEADER_LEN - CHECKSUM_LEN;
                for _ in 0..1 + next() % 3 {
                    let at = HEADER_LEN + (next() as usize % body);
                    e[at] ^= (next() % 255 + 1) as u8;
                }
                onelog_binlog::event::reseal(&mut e);
                e
            } else {
                let t = types[next() as usize % types.len()];
                let len = next() as usize % 120;
                let body: Vec<u8> = (0..len).map(|_| next() as u8).collect();
                let mut e = Vec::new();
                let h = EventHeader {
                    timestamp: next() as u32,
                    event_type: t,
                    server_id: 1,
                    event_size: 0,
                    log_pos: 0,
                    flags: 0,
                };
                write_event(&mut e, h, &body);
                e
            };
            let _ = p.event(&mut out, pos, &ev).unwrap();
        }
    }

    #[test]
    fn garbage_events_are_errors_not_panics() {
        let mut p = Printer::new(2);
        let mut out = Vec::new();
        for len in 0..64usize {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 37 + len) as u8).collect();
            let pos = EventPos {
                offset: 0,
                end_log_pos: 0,
            };
            // Never panics; garbage never decodes.
            let r = p.event(&mut out, pos, &bytes).unwrap();
            assert!(r.is_err());
        }
    }
}
