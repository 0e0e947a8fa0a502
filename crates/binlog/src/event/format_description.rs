//! Format_description event (type 15): the first event of every binlog file (after the magic
//! `\xfebin`), describing the layout of the events that follow.
//!
//! Body:
//!
//! ```text
//! 0   binlog_version     u16 LE   always 4
//! 2   server_version     50 bytes NUL-padded
//! 52  create_timestamp   u32 LE
//! 56  header_length      u8       19
//! 57  post_header_len    one byte per event type 1..=LOG_EVENT_TYPES (171 in MariaDB 10.11)
//! ..  checksum_alg       u8       1 = CRC32
//! ```
//!
//! The post-header lengths are MariaDB 10.11's (`Format_description_log_event` constructor in
//! `sql/log_event.cc`); a reader uses them to find the body of each event type.
//!
//! Invariants: decoding what the encoder wrote gives the same event (tests/roundtrip.rs, and
//! the layout is cross-checked against an independent decoder in tests/cross_check_mysql_common.rs);
//! the decoder reads only through the bounds-checked `wire::Reader`, so a short body is a
//! `DecodeError`, never a panic (fuzzed by fuzz/fuzz_targets/decode_event.rs).

use super::{event_type, new_header, typed_body};
use crate::error::{DecodeError, EncodeError};

/// `ST_SERVER_VER_LEN`.
pub const SERVER_VERSION_LEN: usize = 50;
/// `BINLOG_CHECKSUM_ALG_CRC32`.
pub const CHECKSUM_ALG_CRC32: u8 = 1;
/// `BINLOG_CHECKSUM_ALG_OFF`.
pub const CHECKSUM_ALG_OFF: u8 = 0;
/// `LOG_EVENT_BINLOG_IN_USE_F`: set in the header of the Format_description of an open file.
pub const LOG_EVENT_BINLOG_IN_USE_F: u16 = 1;
/// Offset of `create_timestamp` in a whole Format_description event (common header, binlog
/// version, server version).
pub const CREATED_OFFSET: usize = super::HEADER_LEN + 2 + SERVER_VERSION_LEN;

/// Sets `create_timestamp` of the whole Format_description event `ev` to 0 (a file that does
/// not begin at a server start: a non-zero value tells a replica the primary restarted). The
/// CRC is left to the caller to recompute; a buffer too short to hold the field is left alone.
pub fn clear_created(ev: &mut [u8]) {
    if let Some(created) = ev.get_mut(CREATED_OFFSET..CREATED_OFFSET + 4) {
        created.fill(0);
    }
}

/// `LOG_EVENT_TYPES` of MariaDB 10.11 (`ENUM_END_EVENT - 1`).
pub const LOG_EVENT_TYPES: usize = 171;

/// MariaDB 10.11's post-header length of each event type 1..=171 (index = type - 1).
pub const MARIADB_POST_HEADER_LENS: [u8; LOG_EVENT_TYPES] = {
    let mut a = [0u8; LOG_EVENT_TYPES];
    a[0] = 56; // START_EVENT_V3: 2 + 50 + 4
    a[1] = 13; // QUERY
    a[3] = 8; // ROTATE
    a[5] = 18; // LOAD
    a[7] = 4; // CREATE_FILE
    a[8] = 4; // APPEND_BLOCK
    a[9] = 4; // EXEC_LOAD
    a[10] = 4; // DELETE_FILE
    a[11] = 18; // NEW_LOAD
    a[14] = (56 + 1 + LOG_EVENT_TYPES) as u8; // FORMAT_DESCRIPTION: 228
    a[16] = 4; // BEGIN_LOAD_QUERY
    a[17] = 26; // EXECUTE_LOAD_QUERY: 13 + 13
    a[18] = 8; // TABLE_MAP
    a[22] = 8; // WRITE_ROWS_V1
    a[23] = 8; // UPDATE_ROWS_V1
    a[24] = 8; // DELETE_ROWS_V1
    a[25] = 2; // INCIDENT
    a[29] = 10; // WRITE_ROWS (v2)
    a[30] = 10; // UPDATE_ROWS (v2)
    a[31] = 10; // DELETE_ROWS (v2)
    a[160] = 4; // BINLOG_CHECKPOINT (161)
    a[161] = 19; // GTID (162)
    a[162] = 4; // GTID_LIST (163)
    a[164] = 13; // QUERY_COMPRESSED (165)
    a[165] = 8; // WRITE_ROWS_COMPRESSED_V1
    a[166] = 8; // UPDATE_ROWS_COMPRESSED_V1
    a[167] = 8; // DELETE_ROWS_COMPRESSED_V1
    a[168] = 10; // WRITE_ROWS_COMPRESSED
    a[169] = 10; // UPDATE_ROWS_COMPRESSED
    a[170] = 10; // DELETE_ROWS_COMPRESSED
    a
};

/// A Format_description event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatDescriptionEvent {
    pub binlog_version: u16,
    pub server_version: String,
    pub create_timestamp: u32,
    pub header_len: u8,
    /// Post-header length per event type (index = type - 1).
    pub post_header_lens: Vec<u8>,
    pub checksum_alg: u8,
    /// Header flags (`LOG_EVENT_BINLOG_IN_USE_F` while the file is open).
    pub flags: u16,
}

impl FormatDescriptionEvent {
    /// The event MariaDB 10.11 writes with `binlog_checksum=CRC32`.
    pub fn new(server_version: &str, create_timestamp: u32) -> Self {
        FormatDescriptionEvent {
            binlog_version: 4,
            server_version: server_version.to_string(),
            create_timestamp,
            header_len: super::HEADER_LEN as u8,
            post_header_lens: MARIADB_POST_HEADER_LENS.to_vec(),
            checksum_alg: CHECKSUM_ALG_CRC32,
            flags: 0,
        }
    }

    pub fn encode(
        &self,
        timestamp: u32,
        server_id: u32,
        out: &mut Vec<u8>,
    ) -> Result<(), EncodeError> {
        const WHAT: &str = "Format_description event";
        let v = self.server_version.as_bytes();
        if v.len() >= SERVER_VERSION_LEN || v.contains(&0) {
            return Err(EncodeError::new(
                WHAT,
                "server version longer than 49 bytes or containing NUL",
            ));
        }
        let mut body = Vec::with_capacity(58 + self.post_header_lens.len());
        body.extend_from_slice(&self.binlog_version.to_le_bytes());
        body.extend_from_slice(v);
        body.resize(2 + SERVER_VERSION_LEN, 0);
        body.extend_from_slice(&self.create_timestamp.to_le_bytes());
        body.push(self.header_len);
        body.extend_from_slice(&self.post_header_lens);
        body.push(self.checksum_alg);
        let mut h = new_header(event_type::FORMAT_DESCRIPTION, timestamp, server_id);
        h.flags = self.flags;
        super::write_event(out, h, &body);
        Ok(())
    }

    pub fn decode(ev: &[u8]) -> Result<Self, DecodeError> {
        let (h, mut r) = typed_body(
            ev,
            event_type::FORMAT_DESCRIPTION,
            "Format_description event",
        )?;
        let binlog_version = r.u16()?;
        let at = r.offset();
        let ver = r.bytes(SERVER_VERSION_LEN)?;
        let end = ver.iter().position(|&b| b == 0).unwrap_or(ver.len());
        let server_version = String::from_utf8(ver[..end].to_vec()).map_err(|_| {
            DecodeError::new(
                "Format_description event",
                at,
                "server version is not UTF-8",
            )
        })?;
        let create_timestamp = r.u32()?;
        let header_len = r.u8()?;
        if r.is_empty() {
            return Err(r.err("missing checksum algorithm"));
        }
        let rest = r.rest();
        let (lens, alg) = rest.split_at(rest.len() - 1);
        Ok(FormatDescriptionEvent {
            binlog_version,
            server_version,
            create_timestamp,
            header_len,
            post_header_lens: lens.to_vec(),
            checksum_alg: alg[0],
            flags: h.flags,
        })
    }
}
