//! A raw MySQL-protocol client over a loopback TCP socket, for tests that must send exactly
//! what a binlog reader sends (COM_REGISTER_SLAVE, COM_BINLOG_DUMP, COM_PING on a dump
//! connection, malformed packets) and see the bytes that come back.
//!
//! Logs in as `root` without a password (the harness's test servers allow it) with
//! `mysql_native_password`, answering an auth-switch request with an empty response. Every
//! read has a timeout ([`READ_TIMEOUT`] unless the test sets another).

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// How long one read may wait.
pub const READ_TIMEOUT: Duration = Duration::from_secs(60);

/// CLIENT_LONG_PASSWORD | CLIENT_LONG_FLAG | CLIENT_PROTOCOL_41 | CLIENT_TRANSACTIONS |
/// CLIENT_SECURE_CONNECTION | CLIENT_MULTI_RESULTS | CLIENT_PLUGIN_AUTH.
const CAPABILITIES: u32 = 0x1 | 0x4 | 0x200 | 0x2000 | 0x8000 | 0x20000 | 0x80000;

/// An error packet: (code, message).
pub type ErrPacket = (u16, String);

/// A logged-in connection.
pub struct RawConn {
    pub stream: TcpStream,
    seq: u8,
    /// The thread id from the server's greeting.
    pub connection_id: u32,
    /// Server status of the last result set's closing EOF.
    last_status: u16,
}

/// The code and message of an ERR payload.
pub fn parse_err(p: &[u8]) -> Option<ErrPacket> {
    if p.first() != Some(&0xff) || p.len() < 3 {
        return None;
    }
    let code = u16::from_le_bytes([p[1], p[2]]);
    let msg = if p.get(3) == Some(&b'#') && p.len() >= 9 {
        &p[9..]
    } else {
        &p[3..]
    };
    Some((code, String::from_utf8_lossy(msg).into_owned()))
}

/// A length-encoded integer at `p[*at]` (advances `at`); None for the NULL marker 0xfb.
fn lenenc(p: &[u8], at: &mut usize) -> Option<u64> {
    let b = *p.get(*at)?;
    *at += 1;
    let n = match b {
        0xfb => return None,
        0xfc => 2,
        0xfd => 3,
        0xfe => 8,
        _ => return Some(b as u64),
    };
    let mut v = 0u64;
    for i in 0..n {
        v |= (*p.get(*at + i)? as u64) << (8 * i);
    }
    *at += n;
    Some(v)
}

impl RawConn {
    /// Connects to 127.0.0.1:`port` and logs in as root.
    pub fn connect(port: u16) -> io::Result<RawConn> {
        Self::from_stream(TcpStream::connect(("127.0.0.1", port))?)
    }

    /// Logs in as root on a connected socket.
    pub fn from_stream(stream: TcpStream) -> io::Result<RawConn> {
        stream.set_read_timeout(Some(READ_TIMEOUT))?;
        stream.set_nodelay(true)?;
        let mut c = RawConn {
            stream,
            seq: 0,
            connection_id: 0,
            last_status: 0,
        };
        let greeting = c.read_packet()?;
        let bad = || io::Error::new(io::ErrorKind::InvalidData, "bad greeting");
        if greeting.first() != Some(&10) {
            return Err(bad());
        }
        let nul = greeting[1..].iter().position(|&b| b == 0).ok_or_else(bad)?;
        let id_at = 1 + nul + 1;
        let id = greeting.get(id_at..id_at + 4).ok_or_else(bad)?;
        c.connection_id = u32::from_le_bytes([id[0], id[1], id[2], id[3]]);
        let mut resp = Vec::new();
        resp.extend_from_slice(&CAPABILITIES.to_le_bytes());
        resp.extend_from_slice(&(16u32 << 20).to_le_bytes());
        resp.push(45); // utf8mb4_general_ci
        resp.extend_from_slice(&[0; 23]);
        resp.extend_from_slice(b"root\0");
        resp.push(0); // empty auth response
        resp.extend_from_slice(b"mysql_native_password\0");
        c.write_packet(&resp)?;
        loop {
            let p = c.read_packet()?;
            match p.first() {
                Some(0x00) => return Ok(c),
                Some(0xfe) => c.write_packet(&[])?, // auth switch: still no password
                _ => {
                    let (code, msg) = parse_err(&p).unwrap_or((0, format!("{p:?}")));
                    return Err(io::Error::other(format!("login failed: {code} {msg}")));
                }
            }
        }
    }

    /// Reads one packet (payloads of 16M and more are joined); the next write continues the
    /// sequence.
    pub fn read_packet(&mut self) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        loop {
            let mut h = [0u8; 4];
            self.stream.read_exact(&mut h)?;
            let len = u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize;
            self.seq = h[3].wrapping_add(1);
            let at = out.len();
            out.resize(at + len, 0);
            self.stream.read_exact(&mut out[at..])?;
            if len < 0xff_ffff {
                return Ok(out);
            }
        }
    }

    /// Writes one packet with the current sequence number.
    pub fn write_packet(&mut self, payload: &[u8]) -> io::Result<()> {
        assert!(payload.len() < 0xff_ffff, "test packets are small");
        let mut buf = Vec::with_capacity(payload.len() + 4);
        buf.extend_from_slice(&(payload.len() as u32).to_le_bytes()[..3]);
        buf.push(self.seq);
        buf.extend_from_slice(payload);
        self.seq = self.seq.wrapping_add(1);
        self.stream.write_all(&buf)
    }

    /// Starts a command: sequence 0, then the payload.
    pub fn command(&mut self, payload: &[u8]) -> io::Result<()> {
        self.seq = 0;
        self.write_packet(payload)
    }

    /// A COM_QUERY: the rows of its (last) result set as text (empty for an OK), or its error.
    pub fn query(&mut self, sql: &str) -> io::Result<Result<Vec<Vec<Option<String>>>, ErrPacket>> {
        let mut p = vec![0x03];
        p.extend_from_slice(sql.as_bytes());
        self.command(&p)?;
        let mut rows = Vec::new();
        loop {
            let first = self.read_packet()?;
            if let Some(e) = parse_err(&first) {
                return Ok(Err(e));
            }
            let more = if first.first() == Some(&0x00) {
                // OK: server status at 1 + two lenencs.
                let mut at = 1;
                lenenc(&first, &mut at);
                lenenc(&first, &mut at);
                first.get(at).is_some_and(|s| s & 0x08 != 0)
            } else {
                rows = self.result_set(&first)?;
                self.last_status & 0x08 != 0
            };
            if !more {
                return Ok(Ok(rows));
            }
        }
    }

    fn result_set(&mut self, first: &[u8]) -> io::Result<Vec<Vec<Option<String>>>> {
        let mut at = 0;
        let ncols = lenenc(first, &mut at).unwrap_or(0) as usize;
        for _ in 0..ncols {
            self.read_packet()?;
        }
        let eof = self.read_packet()?;
        debug_assert_eq!(eof.first(), Some(&0xfe));
        let mut rows = Vec::new();
        loop {
            let p = self.read_packet()?;
            if p.first() == Some(&0xfe) && p.len() < 9 {
                self.last_status = p.get(3..5).map_or(0, |s| u16::from_le_bytes([s[0], s[1]]));
                return Ok(rows);
            }
            if let Some(e) = parse_err(&p) {
                return Err(io::Error::other(format!("error in rows: {e:?}")));
            }
            let mut at = 0;
            let mut row = Vec::with_capacity(ncols);
            for _ in 0..ncols {
                match lenenc(&p, &mut at) {
                    None => row.push(None),
                    Some(n) => {
                        let v = p.get(at..at + n as usize).unwrap_or_default();
                        row.push(Some(String::from_utf8_lossy(v).into_owned()));
                        at += n as usize;
                    }
                }
            }
            rows.push(row);
        }
    }

    /// A query that must succeed; its rows.
    pub fn query_ok(&mut self, sql: &str) -> Vec<Vec<Option<String>>> {
        match self.query(sql) {
            Ok(Ok(rows)) => rows,
            Ok(Err(e)) => panic!("{sql}: error {e:?}"),
            Err(e) => panic!("{sql}: {e}"),
        }
    }
}

/// COM_REGISTER_SLAVE as go-mysql sends it (host, user, empty password, port, rank 0,
/// master id 0).
pub fn register_slave(server_id: u32, host: &str, user: &str, port: u16) -> Vec<u8> {
    let mut p = vec![0x15];
    p.extend_from_slice(&server_id.to_le_bytes());
    for s in [host, user, ""] {
        p.push(s.len() as u8);
        p.extend_from_slice(s.as_bytes());
    }
    p.extend_from_slice(&port.to_le_bytes());
    p.extend_from_slice(&0u32.to_le_bytes()); // replication rank
    p.extend_from_slice(&0u32.to_le_bytes()); // master id
    p
}

/// COM_BINLOG_DUMP: position, flags, server id, file name (no terminator).
pub fn binlog_dump(pos: u32, flags: u16, server_id: u32, file: &str) -> Vec<u8> {
    let mut p = vec![0x12];
    p.extend_from_slice(&pos.to_le_bytes());
    p.extend_from_slice(&flags.to_le_bytes());
    p.extend_from_slice(&server_id.to_le_bytes());
    p.extend_from_slice(file.as_bytes());
    p
}
