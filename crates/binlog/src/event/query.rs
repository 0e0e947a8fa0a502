//! Query event (type 2): a statement as text (DDL, `BEGIN`, or `COMMIT` of a non-transactional
//! group).
//!
//! Body:
//!
//! ```text
//! 0  thread_id        u32 LE
//! 4  exec_time        u32 LE
//! 8  db_len           u8
//! 9  error_code       u16 LE
//! 11 status_vars_len  u16 LE
//! 13 status vars      status_vars_len bytes: (code u8, value) pairs
//! .. db               db_len bytes, then NUL
//! .. query            up to the checksum
//! ```
//!
//! onelog writes the status variables Q_FLAGS2, Q_SQL_MODE, Q_CATALOG_NZ ("std") and
//! Q_CHARSET, which `mariadb-binlog` and replicas need to run the statement. The decoder parses
//! the variables it knows and stops at the first it does not (their lengths are not
//! self-describing); the db name is found through `status_vars_len` either way.
//!
//! Invariants: decoding what the encoder wrote gives the same event (tests/roundtrip.rs, and
//! the layout is cross-checked against an independent decoder in tests/cross_check_mysql_common.rs);
//! the decoder reads only through the bounds-checked `wire::Reader`, so a short body is a
//! `DecodeError`, never a panic (fuzzed by fuzz/fuzz_targets/decode_event.rs).

use super::{event_type, new_header, typed_body};
use crate::error::{DecodeError, EncodeError};
use crate::wire::Reader;

/// Event header flag of a Query event that names a database it creates or drops
/// (`CREATE/DROP DATABASE`): readers must not `use` that database before the statement.
pub const LOG_EVENT_SUPPRESS_USE_F: u16 = 0x0008;

/// Q_FLAGS2 bit of a session with `foreign_key_checks=0` (MariaDB's
/// `OPTION_NO_FOREIGN_KEY_CHECKS`): a replica runs the statement without foreign key checks.
pub const OPTION_NO_FOREIGN_KEY_CHECKS: u32 = 1 << 26;

pub const Q_FLAGS2_CODE: u8 = 0;
pub const Q_SQL_MODE_CODE: u8 = 1;
pub const Q_CATALOG_CODE: u8 = 2;
pub const Q_AUTO_INCREMENT: u8 = 3;
pub const Q_CHARSET_CODE: u8 = 4;
pub const Q_TIME_ZONE_CODE: u8 = 5;
pub const Q_CATALOG_NZ_CODE: u8 = 6;
pub const Q_LC_TIME_NAMES_CODE: u8 = 7;
pub const Q_CHARSET_DATABASE_CODE: u8 = 8;
pub const Q_TABLE_MAP_FOR_UPDATE_CODE: u8 = 9;
pub const Q_MASTER_DATA_WRITTEN_CODE: u8 = 10;
pub const Q_INVOKER: u8 = 11;
pub const Q_UPDATED_DB_NAMES: u8 = 12;
pub const Q_MICROSECONDS: u8 = 13;
pub const Q_HRNOW: u8 = 128;
pub const Q_XID: u8 = 129;

/// utf8mb4_general_ci, MariaDB 10.11's default utf8mb4 collation.
pub const UTF8MB4_GENERAL_CI: u16 = 45;
/// MariaDB 10.11's default `sql_mode`: STRICT_TRANS_TABLES, ERROR_FOR_DIVISION_BY_ZERO,
/// NO_AUTO_CREATE_USER, NO_ENGINE_SUBSTITUTION.
pub const DEFAULT_SQL_MODE: u64 = (1 << 22) | (1 << 27) | (1 << 29) | (1 << 30);

const POST_HEADER_LEN: usize = 13;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryEvent {
    pub thread_id: u32,
    pub exec_time: u32,
    pub error_code: u16,
    /// Default database (`""` for none).
    pub db: String,
    pub query: String,
    /// Q_FLAGS2 (`OPTIONS_WRITTEN_TO_BIN_LOG` bits of the session); 0 when absent.
    pub flags2: u32,
    /// Q_SQL_MODE; 0 when absent.
    pub sql_mode: u64,
    /// Q_CHARSET: character_set_client, collation_connection, collation_server; zeros when
    /// absent.
    pub charset: [u16; 3],
}

impl QueryEvent {
    /// A query with onelog's defaults (utf8mb4, MariaDB's default sql_mode).
    pub fn new(db: &str, query: &str) -> Self {
        QueryEvent {
            thread_id: 0,
            exec_time: 0,
            error_code: 0,
            db: db.to_string(),
            query: query.to_string(),
            flags2: 0,
            sql_mode: DEFAULT_SQL_MODE,
            charset: [UTF8MB4_GENERAL_CI; 3],
        }
    }

    pub fn encode(
        &self,
        timestamp: u32,
        server_id: u32,
        out: &mut Vec<u8>,
    ) -> Result<(), EncodeError> {
        self.encode_with_flags(timestamp, server_id, 0, out)
    }

    /// [`Self::encode`] with these event header flags (e.g. [`LOG_EVENT_SUPPRESS_USE_F`]).
    pub fn encode_with_flags(
        &self,
        timestamp: u32,
        server_id: u32,
        header_flags: u16,
        out: &mut Vec<u8>,
    ) -> Result<(), EncodeError> {
        if self.db.len() > 255 || self.db.as_bytes().contains(&0) {
            return Err(EncodeError::new(
                "Query event",
                "db name longer than 255 bytes or containing NUL",
            ));
        }
        let mut status = Vec::with_capacity(32);
        status.push(Q_FLAGS2_CODE);
        status.extend_from_slice(&self.flags2.to_le_bytes());
        status.push(Q_SQL_MODE_CODE);
        status.extend_from_slice(&self.sql_mode.to_le_bytes());
        status.push(Q_CATALOG_NZ_CODE);
        status.push(3);
        status.extend_from_slice(b"std");
        status.push(Q_CHARSET_CODE);
        for c in self.charset {
            status.extend_from_slice(&c.to_le_bytes());
        }
        let mut body = Vec::with_capacity(
            POST_HEADER_LEN + status.len() + self.db.len() + 1 + self.query.len(),
        );
        body.extend_from_slice(&self.thread_id.to_le_bytes());
        body.extend_from_slice(&self.exec_time.to_le_bytes());
        body.push(self.db.len() as u8);
        body.extend_from_slice(&self.error_code.to_le_bytes());
        body.extend_from_slice(&(status.len() as u16).to_le_bytes());
        body.extend_from_slice(&status);
        body.extend_from_slice(self.db.as_bytes());
        body.push(0);
        body.extend_from_slice(self.query.as_bytes());
        let mut header = new_header(event_type::QUERY, timestamp, server_id);
        header.flags = header_flags;
        super::write_event(out, header, &body);
        Ok(())
    }

    pub fn decode(ev: &[u8]) -> Result<Self, DecodeError> {
        let (_, mut r) = typed_body(ev, event_type::QUERY, "Query event")?;
        let thread_id = r.u32()?;
        let exec_time = r.u32()?;
        let db_len = usize::from(r.u8()?);
        let error_code = r.u16()?;
        let status_len = usize::from(r.u16()?);
        let status_at = r.offset();
        let status = r.bytes(status_len)?;
        let mut q = QueryEvent {
            thread_id,
            exec_time,
            error_code,
            db: String::new(),
            query: String::new(),
            flags2: 0,
            sql_mode: 0,
            charset: [0; 3],
        };
        parse_status_vars(
            Reader::new(status, status_at, "Query event status variables"),
            &mut q,
        )?;
        q.db = r.str(db_len)?;
        if r.u8()? != 0 {
            return Err(r.err("db name is not NUL-terminated"));
        }
        let n = r.remaining();
        q.query = r.str(n)?;
        Ok(q)
    }
}

fn parse_status_vars(mut r: Reader<'_>, q: &mut QueryEvent) -> Result<(), DecodeError> {
    while !r.is_empty() {
        match r.u8()? {
            Q_FLAGS2_CODE => q.flags2 = r.u32()?,
            Q_SQL_MODE_CODE => q.sql_mode = r.u64()?,
            Q_CATALOG_CODE => {
                let n = usize::from(r.u8()?);
                r.bytes(n + 1)?;
            }
            Q_AUTO_INCREMENT => {
                r.bytes(4)?;
            }
            Q_CHARSET_CODE => {
                for c in &mut q.charset {
                    *c = r.u16()?;
                }
            }
            Q_TIME_ZONE_CODE | Q_CATALOG_NZ_CODE => {
                let n = usize::from(r.u8()?);
                r.bytes(n)?;
            }
            Q_LC_TIME_NAMES_CODE | Q_CHARSET_DATABASE_CODE => {
                r.bytes(2)?;
            }
            Q_TABLE_MAP_FOR_UPDATE_CODE => {
                r.bytes(8)?;
            }
            Q_MASTER_DATA_WRITTEN_CODE => {
                r.bytes(4)?;
            }
            Q_INVOKER => {
                let n = usize::from(r.u8()?);
                r.bytes(n)?;
                let n = usize::from(r.u8()?);
                r.bytes(n)?;
            }
            Q_UPDATED_DB_NAMES => {
                let count = r.u8()?;
                // 254 (OVER_MAX_DBS_IN_EVENT_MTS) means no names follow.
                if count != 254 {
                    for _ in 0..count {
                        loop {
                            if r.u8()? == 0 {
                                break;
                            }
                        }
                    }
                }
            }
            Q_MICROSECONDS | Q_HRNOW => {
                r.bytes(3)?;
            }
            Q_XID => {
                r.bytes(8)?;
            }
            // Unknown: its length is unknown, so nothing after it can be parsed.
            _ => break,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{write_event, EventHeader};

    fn raw_query(status: &[u8], db: &str, q: &str) -> Vec<u8> {
        let mut body = Vec::new();
        body.extend_from_slice(&7u32.to_le_bytes());
        body.extend_from_slice(&1u32.to_le_bytes());
        body.push(db.len() as u8);
        body.extend_from_slice(&0u16.to_le_bytes());
        body.extend_from_slice(&(status.len() as u16).to_le_bytes());
        body.extend_from_slice(status);
        body.extend_from_slice(db.as_bytes());
        body.push(0);
        body.extend_from_slice(q.as_bytes());
        let mut out = Vec::new();
        let h = EventHeader {
            timestamp: 0,
            event_type: event_type::QUERY,
            server_id: 1,
            event_size: 0,
            log_pos: 0,
            flags: 0,
        };
        write_event(&mut out, h, &body);
        out
    }

    #[test]
    fn query_decode_skips_unknown_status_vars_by_length() {
        // Q_SQL_MODE, Q_TIME_ZONE "UTC", Q_CHARSET, then an unknown code 0x7f with junk after it.
        let mut status = vec![Q_SQL_MODE_CODE];
        status.extend_from_slice(&5u64.to_le_bytes());
        status.extend_from_slice(&[
            Q_TIME_ZONE_CODE,
            3,
            b'U',
            b'T',
            b'C',
            Q_CHARSET_CODE,
            33,
            0,
            8,
            0,
            45,
            0,
        ]);
        status.extend_from_slice(&[0x7f, 1, 2, 3, 4, 5]);
        let q = QueryEvent::decode(&raw_query(&status, "shop", "DROP TABLE t")).unwrap();
        assert_eq!(q.db, "shop");
        assert_eq!(q.query, "DROP TABLE t");
        assert_eq!(q.sql_mode, 5);
        assert_eq!(q.charset, [33, 8, 45]);
        assert_eq!(q.thread_id, 7);
        assert_eq!(q.exec_time, 1);
    }

    #[test]
    fn query_with_bad_status_or_missing_nul_is_an_error() {
        // A known variable cut short by status_vars_len.
        assert!(QueryEvent::decode(&raw_query(&[Q_SQL_MODE_CODE, 1, 2], "d", "q")).is_err());
        // db_len pointing past the NUL.
        let mut ev = raw_query(&[], "d", "q");
        ev[HEADER_LEN_FOR_TEST + 8] = 2;
        crate::event::reseal(&mut ev);
        assert!(QueryEvent::decode(&ev).is_err());
    }

    const HEADER_LEN_FOR_TEST: usize = crate::event::HEADER_LEN;
}
