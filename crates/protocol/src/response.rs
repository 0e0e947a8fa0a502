//! Server response payloads every user of the protocol writes the same way: OK, EOF and ERR
//! packets, and the server's initial handshake packet (Protocol::HandshakeV10). Column
//! definitions and rows, which need onelog's column and value types, are written by
//! `onelog-server` (`response.rs`, `value.rs`) with the field encoders of [`crate::wire`].
//!
//! Owns the payload layouts; framing is [`crate::packet`]'s. Invariants:
//! - An OK packet is `0x00` (or `0xFE` when it ends a result set under CLIENT_DEPRECATE_EOF),
//!   affected rows, last insert id, status flags, warnings, then the info text as a
//!   length-encoded string when non-empty (as MariaDB's `net_send_ok` writes it and libmariadb
//!   reads it; CLIENT_SESSION_TRACK is not offered, so no session-state block follows).
//! - An ERR packet always carries the `#` SQLSTATE marker (CLIENT_PROTOCOL_41 is required at
//!   the handshake); a SQLSTATE that is not 5 bytes is padded with `0`/cut to 5.
//! - The handshake's scramble is 20 bytes, sent as 8 + 12 with a NUL after each part, and its
//!   length byte says 21 (MariaDB's form).
//!
//! Callers: `onelog-server`'s connection and listener (and, next, the replica side of
//! `crates/replication`, which reads what these write).

use crate::wire::{
    put_lenenc_bytes, put_lenenc_int, put_nul_bytes, put_u16, put_u32, Malformed, Reader,
};

pub const OK_HEADER: u8 = 0x00;
pub const EOF_HEADER: u8 = 0xFE;
pub const ERR_HEADER: u8 = 0xFF;

/// Length of the mysql_native_password scramble the handshake carries.
pub const HANDSHAKE_SCRAMBLE_LEN: usize = 20;

/// Appends an OK packet payload.
pub fn put_ok(
    out: &mut Vec<u8>,
    header: u8,
    affected_rows: u64,
    last_insert_id: u64,
    status: u16,
    warnings: u16,
    info: &str,
) {
    debug_assert!(
        header == OK_HEADER || header == EOF_HEADER,
        "an OK packet is headed 0x00 or 0xFE"
    );
    out.push(header);
    put_lenenc_int(out, affected_rows);
    put_lenenc_int(out, last_insert_id);
    put_u16(out, status);
    put_u16(out, warnings);
    if !info.is_empty() {
        put_lenenc_bytes(out, info.as_bytes());
    }
}

/// Appends a (pre-CLIENT_DEPRECATE_EOF) EOF packet payload.
pub fn put_eof(out: &mut Vec<u8>, warnings: u16, status: u16) {
    out.push(EOF_HEADER);
    put_u16(out, warnings);
    put_u16(out, status);
}

/// Appends an ERR packet payload.
pub fn put_err(out: &mut Vec<u8>, code: u16, sqlstate: &str, message: &str) {
    let start = out.len();
    out.push(ERR_HEADER);
    put_u16(out, code);
    out.push(b'#');
    let mut state = [b'0'; 5];
    for (d, s) in state.iter_mut().zip(sqlstate.bytes()) {
        *d = s;
    }
    out.extend_from_slice(&state);
    debug_assert_eq!(
        out.len() - start,
        9,
        "ERR header, code, '#', 5-byte SQLSTATE"
    );
    out.extend_from_slice(message.as_bytes());
}

/// What the server's initial handshake packet announces.
#[derive(Debug, Clone, Copy)]
pub struct Handshake<'a> {
    /// The version string as the client shows it.
    pub version: &'a str,
    pub connection_id: u32,
    /// The mysql_native_password challenge ([`HANDSHAKE_SCRAMBLE_LEN`] bytes, no NUL).
    pub scramble: &'a [u8; HANDSHAKE_SCRAMBLE_LEN],
    /// CLIENT_* capability flags (both 16-bit halves).
    pub capabilities: u32,
    pub collation: u8,
    pub status: u16,
    /// MariaDB's extended capabilities (the filler's last 4 bytes).
    pub mariadb_capabilities: u32,
    /// The authentication plugin's name.
    pub auth_plugin: &'a str,
}

/// Appends a Protocol::HandshakeV10 payload.
pub fn put_handshake(out: &mut Vec<u8>, h: &Handshake<'_>) {
    debug_assert!(
        !h.scramble.contains(&0),
        "the scramble is read as C strings by some clients"
    );
    out.push(10);
    put_nul_bytes(out, h.version.as_bytes());
    put_u32(out, h.connection_id);
    out.extend_from_slice(&h.scramble[..8]);
    out.push(0);
    put_u16(out, h.capabilities as u16);
    out.push(h.collation);
    put_u16(out, h.status);
    put_u16(out, (h.capabilities >> 16) as u16);
    out.push((HANDSHAKE_SCRAMBLE_LEN + 1) as u8);
    out.extend_from_slice(&[0; 6]);
    put_u32(out, h.mariadb_capabilities);
    out.extend_from_slice(&h.scramble[8..]);
    out.push(0);
    put_nul_bytes(out, h.auth_plugin.as_bytes());
}

/// A server's initial handshake as a client reads it (the inverse of [`put_handshake`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerHandshake {
    pub protocol_version: u8,
    pub version: String,
    pub connection_id: u32,
    /// Both scramble parts joined, without their NUL terminators (20 bytes from MariaDB).
    pub scramble: Vec<u8>,
    pub capabilities: u32,
    pub collation: u8,
    pub status: u16,
    /// "" when the server does not send CLIENT_PLUGIN_AUTH's plugin name.
    pub auth_plugin: String,
}

/// Reads a Protocol::HandshakeV10 payload (never panics on short or odd input).
pub fn parse_handshake(payload: &[u8]) -> Result<ServerHandshake, Malformed> {
    let mut r = Reader::new(payload);
    let protocol_version = r.u8("protocol version")?;
    let version = String::from_utf8_lossy(r.nul_bytes("server version")?).into_owned();
    let connection_id = r.u32("connection id")?;
    let mut scramble = r.bytes(8, "scramble part 1")?.to_vec();
    r.u8("filler")?;
    let low = r.u16("capability flags")?;
    let mut h = ServerHandshake {
        protocol_version,
        version,
        connection_id,
        scramble: Vec::new(),
        capabilities: u32::from(low),
        collation: 0,
        status: 0,
        auth_plugin: String::new(),
    };
    if r.is_empty() {
        h.scramble = scramble;
        return Ok(h);
    }
    h.collation = r.u8("collation")?;
    h.status = r.u16("status flags")?;
    h.capabilities |= u32::from(r.u16("capability flags")?) << 16;
    let auth_len = usize::from(r.u8("auth data length")?);
    r.bytes(10, "reserved")?;
    // CLIENT_SECURE_CONNECTION (or a non-zero auth data length): part 2 is
    // max(13, auth_len - 8) bytes, its last one a NUL.
    if h.capabilities & 0x8000 != 0 || auth_len > 0 {
        let n = auth_len.saturating_sub(8).max(13).min(r.remaining());
        let part2 = r.bytes(n, "scramble part 2")?;
        let end = part2.iter().position(|&b| b == 0).unwrap_or(part2.len());
        scramble.extend_from_slice(&part2[..end]);
    }
    h.scramble = scramble;
    if h.capabilities & 0x8_0000 != 0 {
        h.auth_plugin = String::from_utf8_lossy(r.nul_or_rest()).into_owned();
    }
    Ok(h)
}

/// The code, SQLSTATE ("" when the packet has no `#` marker) and message of an ERR payload;
/// None when `payload` is not one.
pub fn parse_err(payload: &[u8]) -> Option<(u16, String, String)> {
    let mut r = Reader::new(payload);
    if r.u8("header").ok()? != ERR_HEADER {
        return None;
    }
    let code = r.u16("error code").ok()?;
    let mut state = String::new();
    if payload.get(3) == Some(&b'#') && payload.len() >= 9 {
        r.u8("marker").ok()?;
        state = String::from_utf8_lossy(r.bytes(5, "sqlstate").ok()?).into_owned();
    }
    let message = String::from_utf8_lossy(r.rest()).into_owned();
    Some((code, state, message))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn err_pads_and_cuts_the_sqlstate() {
        let mut out = Vec::new();
        put_err(&mut out, 1064, "42", "x");
        assert_eq!(out, b"\xff\x28\x04#42000x");
        out.clear();
        put_err(&mut out, 1, "HY0001", "");
        assert_eq!(out, b"\xff\x01\x00#HY000");
    }

    #[test]
    fn ok_carries_info_only_when_there_is_some() {
        let mut out = Vec::new();
        put_ok(&mut out, OK_HEADER, 1, 300, 2, 0, "");
        assert_eq!(out, [0x00, 1, 0xFC, 0x2C, 0x01, 2, 0, 0, 0]);
        out.clear();
        put_ok(&mut out, EOF_HEADER, 0, 0, 0, 0, "ab");
        assert_eq!(out, [0xFE, 0, 0, 0, 0, 0, 0, 2, b'a', b'b']);
    }

    #[test]
    fn handshake_layout() {
        let scramble = [b'a'; HANDSHAKE_SCRAMBLE_LEN];
        let mut out = Vec::new();
        put_handshake(
            &mut out,
            &Handshake {
                version: "v",
                connection_id: 7,
                scramble: &scramble,
                capabilities: 0x0102_0304,
                collation: 45,
                status: 2,
                mariadb_capabilities: 9,
                auth_plugin: "p",
            },
        );
        let mut want = vec![10, b'v', 0, 7, 0, 0, 0];
        want.extend_from_slice(&[b'a'; 8]);
        want.extend_from_slice(&[0, 0x04, 0x03, 45, 2, 0, 0x02, 0x01, 21]);
        want.extend_from_slice(&[0; 6]);
        want.extend_from_slice(&[9, 0, 0, 0]);
        want.extend_from_slice(&[b'a'; 12]);
        want.extend_from_slice(&[0, b'p', 0]);
        assert_eq!(out, want);
        let back = parse_handshake(&out).unwrap();
        assert_eq!(back.version, "v");
        assert_eq!(back.connection_id, 7);
        assert_eq!(back.scramble, scramble.to_vec());
        assert_eq!(back.capabilities, 0x0102_0304);
        assert_eq!(back.collation, 45);
        assert_eq!(back.status, 2);
        // 0x0102_0304 lacks CLIENT_PLUGIN_AUTH: no plugin name is read.
        assert_eq!(back.auth_plugin, "");
        // Every truncation is an error or a shorter handshake, never a panic.
        for n in 0..out.len() {
            let _ = parse_handshake(&out[..n]);
        }
    }

    #[test]
    fn err_parses_back() {
        let mut out = Vec::new();
        put_err(&mut out, 1236, "HY000", "boom");
        assert_eq!(
            parse_err(&out),
            Some((1236, "HY000".to_string(), "boom".to_string()))
        );
        assert_eq!(parse_err(&[0xff, 1]), None);
        assert_eq!(parse_err(&[0]), None);
        assert_eq!(
            parse_err(&[0xff, 0x15, 0x04, b'x']),
            Some((1045, String::new(), "x".to_string()))
        );
    }
}
