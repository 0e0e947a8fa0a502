//! The replica's client connection to its primary: a blocking MySQL/MariaDB protocol client
//! over TCP that does exactly what MariaDB 10.11's IO thread needs (REPLICATION_FACTS.md §1.2
//! to §1.5): the handshake with `mysql_native_password`, COM_QUERY (text result sets or OK),
//! COM_REGISTER_SLAVE, COM_BINLOG_DUMP and reading the dump stream packet by packet.
//!
//! Why our own client and not the `mysql` / `mysql_common` crates: the sync `mysql` crate
//! brings a large dependency tree (pooling, TLS, URL parsing, its own binlog event types) for
//! the few packets a replica sends, and it decodes events into its own types where we must keep
//! the primary's raw bytes (the relay groups carry them unchanged, CRC32 included). The wire
//! codec already lives in `onelog-protocol` (framing, field encodings, ERR and handshake
//! payloads), so the client is this one module on top of it.
//!
//! Invariants:
//! - nothing read from the network can panic this module: every field goes through the
//!   bounds-checked `wire::Reader`, and a malformed packet is error 2027 (CR_MALFORMED_PACKET);
//! - every error carries a MySQL code: client codes (2003 can't connect, 2013 lost connection,
//!   2027 malformed packet, 2059 unsupported auth plugin) for failures on our side of the wire,
//!   the server's own code and message for an ERR packet;
//! - the socket's read timeout is a short tick (`ClientConfig::tick`), so a caller polling
//!   [`Client::read_dump_packet`] regains control at least once per tick; a packet that has
//!   started arriving may stall at most `read_timeout` before the read fails with 2013.
//!
//! Caller: the IO thread (`replica::io`).

use std::net::{TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use onelog_protocol::packet::{FrameError, PacketStream};
use onelog_protocol::response::{parse_err, parse_handshake, EOF_HEADER, ERR_HEADER, OK_HEADER};
use onelog_protocol::wire::{put_u16, put_u32, Reader};
use onelog_protocol::Command;
use sha1::{Digest, Sha1};

/// CLIENT_LONG_PASSWORD | CLIENT_LONG_FLAG | CLIENT_PROTOCOL_41 | CLIENT_TRANSACTIONS |
/// CLIENT_SECURE_CONNECTION | CLIENT_MULTI_RESULTS | CLIENT_PLUGIN_AUTH.
pub const CLIENT_CAPABILITIES: u32 = 0x1 | 0x4 | 0x200 | 0x2000 | 0x8000 | 0x2_0000 | 0x8_0000;
const CLIENT_PROTOCOL_41: u32 = 0x200;
/// utf8mb4_general_ci.
const COLLATION: u8 = 45;
/// A replica accepts events up to MariaDB's `slave_max_allowed_packet` maximum, 1 GiB.
pub const MAX_PACKET: usize = 1 << 30;
const NATIVE_PASSWORD: &str = "mysql_native_password";

/// CR_CONN_HOST_ERROR: "Can't connect to server on '%s' (%d)".
pub const CR_CONN_HOST_ERROR: u16 = 2003;
/// CR_SERVER_LOST: "Lost connection to server during query".
pub const CR_SERVER_LOST: u16 = 2013;
/// CR_MALFORMED_PACKET: "Malformed packet".
pub const CR_MALFORMED_PACKET: u16 = 2027;
/// CR_AUTH_PLUGIN_CANNOT_LOAD: "Plugin %s could not be loaded: %s".
pub const CR_AUTH_PLUGIN_CANNOT_LOAD: u16 = 2059;

/// An error with its MySQL code (module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientError {
    pub code: u16,
    pub message: String,
}

impl ClientError {
    fn new(code: u16, message: impl Into<String>) -> ClientError {
        ClientError {
            code,
            message: message.into(),
        }
    }

    /// 2013, what a dropped connection reads as.
    pub fn lost() -> ClientError {
        ClientError::new(CR_SERVER_LOST, "Lost connection to server during query")
    }

    fn malformed() -> ClientError {
        ClientError::new(CR_MALFORMED_PACKET, "Malformed packet")
    }

    /// True for client-side (network, protocol) errors: codes 2000..=2999. A caller retries
    /// these by reconnecting; a server error is the server's answer.
    pub fn is_network(&self) -> bool {
        (2000..3000).contains(&self.code)
    }

    fn from_frame(e: FrameError) -> ClientError {
        match e {
            FrameError::TooLarge { .. } => ClientError::new(
                1153,
                "Got a packet bigger than 'slave_max_allowed_packet' bytes",
            ),
            FrameError::OutOfOrder { .. } => ClientError::new(2041, "Got packets out of order"),
            FrameError::Closed | FrameError::Io(_) => ClientError::lost(),
        }
    }

    fn from_err_packet(p: &[u8]) -> ClientError {
        match parse_err(p) {
            Some((code, _, message)) => ClientError { code, message },
            None => ClientError::malformed(),
        }
    }
}

/// Where and how to connect.
#[derive(Clone, Debug)]
pub struct ClientConfig {
    pub host: String,
    pub port: u16,
    pub user: String,
    pub password: String,
    /// Bound on the TCP connect and on the whole handshake.
    pub connect_timeout: Duration,
    /// How long a started packet may stall, and how long a query waits for its answer.
    pub read_timeout: Duration,
    /// The socket's read timeout: how often a waiting [`Client::read_dump_packet`] returns.
    pub tick: Duration,
    /// When set (STOP SLAVE), a connect or a wait for an answer gives up within a tick
    /// (error 2013).
    pub stop: Option<Arc<AtomicBool>>,
}

/// A query's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum QueryResult {
    /// An OK packet.
    Ok { affected_rows: u64 },
    /// A text result set: column names and rows (None = SQL NULL).
    Rows {
        columns: Vec<String>,
        rows: Vec<Vec<Option<String>>>,
    },
}

impl QueryResult {
    /// The first column of the first row (None for OK, no row or NULL).
    pub fn first_value(&self) -> Option<&str> {
        match self {
            QueryResult::Rows { rows, .. } => rows.first()?.first()?.as_deref(),
            QueryResult::Ok { .. } => None,
        }
    }
}

/// One packet of a binlog dump.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DumpPacket {
    /// An event, whole (header .. CRC32), without the OK byte in front of it.
    Event(Vec<u8>),
    /// The EOF packet: the primary ended the stream (non-blocking dump, shutdown, UNTIL).
    Eof,
    /// Nothing arrived within one tick.
    Idle,
}

/// `SHA1(pw) XOR SHA1(scramble ++ SHA1(SHA1(pw)))`; empty for an empty password.
pub fn native_password_response(scramble: &[u8], password: &[u8]) -> Vec<u8> {
    if password.is_empty() {
        return Vec::new();
    }
    let stage1 = Sha1::digest(password);
    let stage2 = Sha1::digest(stage1);
    let mut h = Sha1::new();
    h.update(scramble);
    h.update(stage2);
    let mix = h.finalize();
    stage1.iter().zip(mix.iter()).map(|(a, b)| a ^ b).collect()
}

/// The handshake response payload (Protocol::HandshakeResponse41) for `user`.
pub fn handshake_response(user: &str, auth: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + user.len());
    put_u32(&mut out, CLIENT_CAPABILITIES);
    put_u32(&mut out, MAX_PACKET as u32);
    out.push(COLLATION);
    out.extend_from_slice(&[0; 23]);
    out.extend_from_slice(user.as_bytes());
    out.push(0);
    debug_assert!(auth.len() < 251, "a native password response is 20 bytes");
    out.push(auth.len() as u8);
    out.extend_from_slice(auth);
    out.extend_from_slice(NATIVE_PASSWORD.as_bytes());
    out.push(0);
    out
}

/// A connected, authenticated client (module docs).
pub struct Client {
    io: PacketStream<TcpStream>,
    server_version: String,
    connection_id: u32,
    read_timeout: Duration,
    stop: Option<Arc<AtomicBool>>,
    buf: Vec<u8>,
}

impl Client {
    /// Connects to `cfg.host:cfg.port` and logs in.
    pub fn connect(cfg: &ClientConfig) -> Result<Client, ClientError> {
        let stream = tcp_connect(cfg)?;
        let _ = stream.set_nodelay(true);
        stream
            .set_read_timeout(Some(cfg.tick.max(Duration::from_millis(1))))
            .map_err(|_| ClientError::lost())?;
        let _ = stream.set_write_timeout(Some(cfg.read_timeout.max(Duration::from_secs(1))));
        let mut io = PacketStream::new(stream, MAX_PACKET);
        let tick_ms = cfg.tick.as_millis().max(1);
        io.set_max_stalls(
            (cfg.read_timeout.as_millis() / tick_ms).clamp(1, u32::MAX as u128) as u32,
        );
        io.set_deadline(Some(Instant::now() + cfg.connect_timeout));
        let mut client = Client {
            io,
            server_version: String::new(),
            connection_id: 0,
            read_timeout: cfg.read_timeout,
            stop: cfg.stop.clone(),
            buf: Vec::new(),
        };
        client.login(&cfg.user, cfg.password.as_bytes())?;
        client.io.set_deadline(None);
        Ok(client)
    }

    /// Wraps an already connected stream and logs in (tests drive a recorded server with it).
    pub fn login_on(
        stream: TcpStream,
        user: &str,
        password: &str,
        read_timeout: Duration,
    ) -> Result<Client, ClientError> {
        let _ = stream.set_read_timeout(Some(read_timeout));
        let mut client = Client {
            io: PacketStream::new(stream, MAX_PACKET),
            server_version: String::new(),
            connection_id: 0,
            read_timeout,
            stop: None,
            buf: Vec::new(),
        };
        client.login(user, password.as_bytes())?;
        Ok(client)
    }

    /// The primary's version string (e.g. `5.5.5-10.11.19-MariaDB-log`).
    pub fn server_version(&self) -> &str {
        &self.server_version
    }

    /// The primary's thread id of this connection.
    pub fn connection_id(&self) -> u32 {
        self.connection_id
    }

    fn login(&mut self, user: &str, password: &[u8]) -> Result<(), ClientError> {
        self.read()?;
        if self.buf.first() == Some(&ERR_HEADER) {
            return Err(ClientError::from_err_packet(&self.buf));
        }
        let hs = parse_handshake(&self.buf).map_err(|_| ClientError::malformed())?;
        if hs.protocol_version != 10 || hs.capabilities & CLIENT_PROTOCOL_41 == 0 {
            return Err(ClientError::new(
                2007,
                format!(
                    "Protocol mismatch; server version = {}, client version = 10",
                    hs.protocol_version
                ),
            ));
        }
        self.server_version = hs.version;
        self.connection_id = hs.connection_id;
        let auth = native_password_response(&hs.scramble, password);
        let resp = handshake_response(user, &auth);
        self.send(&resp)?;
        // The server may switch us to another plugin (0xFE): only native passwords are spoken.
        for _ in 0..4 {
            self.read()?;
            match self.buf.first() {
                Some(&OK_HEADER) => return Ok(()),
                Some(&ERR_HEADER) => return Err(ClientError::from_err_packet(&self.buf)),
                Some(&EOF_HEADER) => self.auth_switch(password)?,
                _ => return Err(ClientError::malformed()),
            }
        }
        Err(ClientError::malformed())
    }

    fn auth_switch(&mut self, password: &[u8]) -> Result<(), ClientError> {
        let mut r = Reader::new(&self.buf[1..]);
        let plugin = String::from_utf8_lossy(r.nul_or_rest()).into_owned();
        if plugin != NATIVE_PASSWORD {
            return Err(ClientError::new(
                CR_AUTH_PLUGIN_CANNOT_LOAD,
                format!("Plugin {plugin} could not be loaded: not available"),
            ));
        }
        let data = r.rest();
        let scramble = data.strip_suffix(&[0]).unwrap_or(data).to_vec();
        let auth = native_password_response(&scramble, password);
        self.send(&auth)
    }

    /// Writes one packet (continuing the current sequence) and flushes it.
    fn send(&mut self, payload: &[u8]) -> Result<(), ClientError> {
        self.io.write_packet(payload);
        self.io.flush().map_err(|_| ClientError::lost())
    }

    /// Starts a command: sequence 0.
    fn command(&mut self, payload: &[u8]) -> Result<(), ClientError> {
        self.io.reset_sequence();
        self.send(payload)
    }

    /// Reads one packet into `self.buf`, waiting up to `read_timeout` for it to start.
    fn read(&mut self) -> Result<(), ClientError> {
        let deadline = Instant::now() + self.read_timeout;
        loop {
            match self.io.wait_readable() {
                Ok(true) => break,
                Ok(false) if is_stopped(&self.stop) => return Err(ClientError::lost()),
                Ok(false) if Instant::now() < deadline => {}
                Ok(false) => return Err(ClientError::lost()),
                Err(e) => return Err(ClientError::from_frame(e)),
            }
        }
        self.io
            .read_packet(&mut self.buf)
            .map_err(ClientError::from_frame)
    }

    /// Runs one statement; a server error is `Err` with the server's code and message.
    pub fn query(&mut self, sql: &str) -> Result<QueryResult, ClientError> {
        let mut p = Vec::with_capacity(1 + sql.len());
        p.push(Command::Query.byte());
        p.extend_from_slice(sql.as_bytes());
        self.command(&p)?;
        self.read()?;
        match self.buf.first() {
            Some(&OK_HEADER) => {
                let mut r = Reader::new(&self.buf[1..]);
                let affected_rows = r
                    .lenenc_int("affected rows")
                    .map_err(|_| ClientError::malformed())?
                    .unwrap_or(0);
                Ok(QueryResult::Ok { affected_rows })
            }
            Some(&ERR_HEADER) => Err(ClientError::from_err_packet(&self.buf)),
            Some(0xFB) | None => Err(ClientError::malformed()),
            Some(_) => self.result_set(),
        }
    }

    /// Reads a text result set whose column count is in `self.buf`.
    fn result_set(&mut self) -> Result<QueryResult, ClientError> {
        let count = Reader::new(&self.buf)
            .lenenc_int("column count")
            .ok()
            .flatten()
            .ok_or_else(ClientError::malformed)?;
        let mut columns = Vec::new();
        for _ in 0..count {
            self.read()?;
            columns.push(column_name(&self.buf).ok_or_else(ClientError::malformed)?);
        }
        self.read()?;
        if !is_eof(&self.buf) {
            return Err(ClientError::malformed());
        }
        let mut rows = Vec::new();
        loop {
            self.read()?;
            if is_eof(&self.buf) {
                break;
            }
            if self.buf.first() == Some(&ERR_HEADER) {
                return Err(ClientError::from_err_packet(&self.buf));
            }
            rows.push(text_row(&self.buf, columns.len()).ok_or_else(ClientError::malformed)?);
        }
        Ok(QueryResult::Rows { columns, rows })
    }

    /// Reads a command's OK (or ERR) answer.
    fn expect_ok(&mut self) -> Result<(), ClientError> {
        self.read()?;
        match self.buf.first() {
            Some(&OK_HEADER) => Ok(()),
            Some(&ERR_HEADER) => Err(ClientError::from_err_packet(&self.buf)),
            _ => Err(ClientError::malformed()),
        }
    }

    /// COM_REGISTER_SLAVE (REPLICATION_FACTS.md §1.3).
    pub fn register_slave(
        &mut self,
        server_id: u32,
        report_host: &str,
        report_port: u16,
    ) -> Result<(), ClientError> {
        let mut p = vec![Command::RegisterSlave.byte()];
        put_u32(&mut p, server_id);
        for s in [report_host, "", ""] {
            let b = &s.as_bytes()[..s.len().min(255)];
            p.push(b.len() as u8);
            p.extend_from_slice(b);
        }
        put_u16(&mut p, report_port);
        put_u32(&mut p, 0); // rank
        put_u32(&mut p, 0); // master id
        self.command(&p)?;
        self.expect_ok()
    }

    /// COM_BINLOG_DUMP (§1.4). The stream that follows is read with
    /// [`Client::read_dump_packet`]; an immediate refusal comes back from there as an ERR.
    pub fn binlog_dump(
        &mut self,
        pos: u32,
        flags: u16,
        server_id: u32,
        file: &str,
    ) -> Result<(), ClientError> {
        let mut p = vec![Command::BinlogDump.byte()];
        put_u32(&mut p, pos);
        put_u16(&mut p, flags);
        put_u32(&mut p, server_id);
        p.extend_from_slice(file.as_bytes());
        self.command(&p)
    }

    /// Reads the next dump packet, waiting at most one tick for it to start: an event, the
    /// primary's EOF, [`DumpPacket::Idle`], or `Err` (the primary's ERR, a lost connection).
    pub fn read_dump_packet(&mut self) -> Result<DumpPacket, ClientError> {
        match self.io.wait_readable() {
            Ok(true) => {}
            Ok(false) => return Ok(DumpPacket::Idle),
            Err(e) => return Err(ClientError::from_frame(e)),
        }
        self.io
            .read_packet(&mut self.buf)
            .map_err(ClientError::from_frame)?;
        match self.buf.first() {
            Some(&OK_HEADER) => Ok(DumpPacket::Event(self.buf[1..].to_vec())),
            Some(&EOF_HEADER) if self.buf.len() < 8 => Ok(DumpPacket::Eof),
            Some(&ERR_HEADER) => Err(ClientError::from_err_packet(&self.buf)),
            _ => Err(ClientError::malformed()),
        }
    }
}

fn is_stopped(stop: &Option<Arc<AtomicBool>>) -> bool {
    stop.as_ref().is_some_and(|s| s.load(Ordering::Relaxed))
}

/// Connects over TCP to the first address of `cfg.host:cfg.port` that answers within
/// `cfg.connect_timeout`, in attempts of at most a second so that `cfg.stop` is seen.
fn tcp_connect(cfg: &ClientConfig) -> Result<TcpStream, ClientError> {
    let host = &cfg.host;
    let fail = |detail: String| {
        ClientError::new(
            CR_CONN_HOST_ERROR,
            format!("Can't connect to server on '{host}' ({detail})"),
        )
    };
    let unknown = || fail("-2 \"Name or service not known\"".into());
    let addrs: Vec<_> = (host.as_str(), cfg.port)
        .to_socket_addrs()
        .map_err(|_| unknown())?
        .collect();
    let mut last = unknown();
    let deadline = Instant::now() + cfg.connect_timeout;
    for addr in addrs {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let step = left
                .min(Duration::from_secs(1))
                .max(Duration::from_millis(1));
            match TcpStream::connect_timeout(&addr, step) {
                Ok(s) => return Ok(s),
                Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {
                    last = fail(os_error_text(&e));
                    if is_stopped(&cfg.stop) || Instant::now() >= deadline {
                        break;
                    }
                }
                Err(e) => {
                    last = fail(os_error_text(&e));
                    break;
                }
            }
        }
    }
    Err(last)
}

/// libmariadb's `(errno "strerror")` form, e.g. `111 "Connection refused"`.
fn os_error_text(e: &std::io::Error) -> String {
    match e.raw_os_error() {
        Some(n) => {
            let text = e.to_string();
            let text = text.split(" (os error").next().unwrap_or(&text).to_string();
            format!("{n} \"{text}\"")
        }
        None if e.kind() == std::io::ErrorKind::TimedOut => "110 \"Connection timed out\"".into(),
        None => format!("0 \"{e}\""),
    }
}

/// An EOF packet (0xFE, shorter than 9 bytes).
fn is_eof(p: &[u8]) -> bool {
    p.first() == Some(&EOF_HEADER) && p.len() < 9
}

/// The `name` of a Protocol::ColumnDefinition41 payload.
fn column_name(p: &[u8]) -> Option<String> {
    let mut r = Reader::new(p);
    for what in ["catalog", "schema", "table", "org_table"] {
        r.lenenc_bytes(what).ok()?;
    }
    Some(String::from_utf8_lossy(r.lenenc_bytes("name").ok()?).into_owned())
}

/// A text row of `n` values (0xFB = NULL).
fn text_row(p: &[u8], n: usize) -> Option<Vec<Option<String>>> {
    let mut r = Reader::new(p);
    let mut row = Vec::with_capacity(n);
    for _ in 0..n {
        if p.get(r.position()) == Some(&0xFB) {
            r.u8("NULL").ok()?;
            row.push(None);
        } else {
            let v = r.lenenc_bytes("value").ok()?;
            row.push(Some(String::from_utf8_lossy(v).into_owned()));
        }
    }
    Some(row)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::TcpListener;

    /// MariaDB 10.11.19's greeting as it went over the wire (header included), recorded from
    /// `mariadbd --port=23411`: version `5.5.5-10.11.19-MariaDB-0+deb12u1-log`, thread id 4,
    /// scramble `)Q>%:32A` + `1nZY.v+qy/x1`, plugin mysql_native_password.
    const GREETING: &str = "680000000a352e352e352d31302e31312e31392d4d6172696144422d302b6465623132\
        75312d6c6f67000400000029513e253a33324100fef7080200ff81150000000000001d000000316e5a592e76\
        2b71792f7831006d7973716c5f6e61746976655f70617373776f726400";
    /// SHA1("rpl") XOR SHA1(scramble ++ SHA1(SHA1("rpl"))), computed with Python's hashlib.
    const RPL_RESPONSE: &str = "db141fcee892e1c688c114353d177943a73476b5";

    fn unhex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    fn read_packet(s: &mut TcpStream) -> (u8, Vec<u8>) {
        let mut h = [0u8; 4];
        s.read_exact(&mut h).unwrap();
        let len = u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize;
        let mut p = vec![0; len];
        s.read_exact(&mut p).unwrap();
        (h[3], p)
    }

    fn write_packet(s: &mut TcpStream, seq: u8, p: &[u8]) {
        let mut out = (p.len() as u32).to_le_bytes()[..3].to_vec();
        out.push(seq);
        out.extend_from_slice(p);
        s.write_all(&out).unwrap();
    }

    fn lenenc_str(out: &mut Vec<u8>, s: &str) {
        out.push(s.len() as u8);
        out.extend_from_slice(s.as_bytes());
    }

    /// A server thread that sends the recorded greeting, then runs `rest` on the socket with
    /// the client's handshake response.
    fn fake_server(
        rest: impl FnOnce(&mut TcpStream, Vec<u8>) + Send + 'static,
    ) -> (TcpStream, std::thread::JoinHandle<()>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let t = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            s.write_all(&unhex(GREETING)).unwrap();
            let (seq, resp) = read_packet(&mut s);
            assert_eq!(seq, 1);
            rest(&mut s, resp);
        });
        (TcpStream::connect(addr).unwrap(), t)
    }

    #[test]
    fn native_password_answers_the_recorded_greeting_and_reads_a_result_set() {
        let (stream, server) = fake_server(|s, resp| {
            let caps = u32::from_le_bytes([resp[0], resp[1], resp[2], resp[3]]);
            assert_eq!(caps, CLIENT_CAPABILITIES);
            assert_eq!(&resp[32..36], b"rpl\0");
            assert_eq!(resp[36], 20);
            assert_eq!(resp[37..57], unhex(RPL_RESPONSE)[..]);
            assert_eq!(&resp[57..], b"mysql_native_password\0");
            write_packet(s, 2, &[0, 0, 0, 2, 0, 0, 0]);
            let (seq, q) = read_packet(s);
            assert_eq!(
                (seq, q.as_slice()),
                (0, &b"\x03SHOW VARIABLES LIKE 'SERVER_ID'"[..])
            );
            write_packet(s, 1, &[2]);
            for (i, name) in ["Variable_name", "Value"].iter().enumerate() {
                let mut col = Vec::new();
                for part in [
                    "def",
                    "information_schema",
                    "VARIABLES",
                    "VARIABLES",
                    name,
                    name,
                ] {
                    lenenc_str(&mut col, part);
                }
                col.extend_from_slice(&[0x0c, 8, 0, 0, 1, 0, 0, 0xfd, 1, 0, 0, 0, 0]);
                write_packet(s, 2 + i as u8, &col);
            }
            write_packet(s, 4, &[0xfe, 0, 0, 2, 0]);
            let mut row = Vec::new();
            lenenc_str(&mut row, "server_id");
            lenenc_str(&mut row, "1");
            write_packet(s, 5, &row);
            write_packet(s, 6, &[0xfb, 0xfb]);
            write_packet(s, 7, &[0xfe, 0, 0, 2, 0]);
        });
        let mut c = Client::login_on(stream, "rpl", "rpl", Duration::from_secs(10)).unwrap();
        assert_eq!(c.server_version(), "5.5.5-10.11.19-MariaDB-0+deb12u1-log");
        assert_eq!(c.connection_id(), 4);
        let r = c.query("SHOW VARIABLES LIKE 'SERVER_ID'").unwrap();
        assert_eq!(
            r,
            QueryResult::Rows {
                columns: vec!["Variable_name".into(), "Value".into()],
                rows: vec![
                    vec![Some("server_id".into()), Some("1".into())],
                    vec![None, None]
                ],
            }
        );
        server.join().unwrap();
    }

    #[test]
    fn access_denied_keeps_the_servers_code_and_text() {
        let (stream, server) = fake_server(|s, _| {
            let mut err = vec![0xff, 0x15, 0x04, b'#'];
            err.extend_from_slice(
                b"28000Access denied for user 'rpl'@'localhost' (using password: YES)",
            );
            write_packet(s, 2, &err);
        });
        let e = Client::login_on(stream, "rpl", "bad", Duration::from_secs(10))
            .err()
            .unwrap();
        assert_eq!(e.code, 1045);
        assert_eq!(
            e.message,
            "Access denied for user 'rpl'@'localhost' (using password: YES)"
        );
        assert!(!e.is_network());
        server.join().unwrap();
    }

    #[test]
    fn auth_switch_to_native_password_uses_the_new_scramble() {
        let (stream, server) = fake_server(|s, _| {
            let mut sw = vec![0xfe];
            sw.extend_from_slice(b"mysql_native_password\0");
            sw.extend_from_slice(b")Q>%:32A1nZY.v+qy/x1\0");
            write_packet(s, 2, &sw);
            let (seq, auth) = read_packet(s);
            assert_eq!(seq, 3);
            assert_eq!(auth, unhex(RPL_RESPONSE));
            write_packet(s, 4, &[0, 0, 0, 2, 0, 0, 0]);
        });
        Client::login_on(stream, "rpl", "rpl", Duration::from_secs(10)).unwrap();
        server.join().unwrap();
    }

    #[test]
    fn bad_bytes_are_errors_not_panics() {
        for greeting in [&b"\x0a"[..], b"\x0a5.5\0\x01", b"\xff", b"\x09abc\0"] {
            let listener = TcpListener::bind("127.0.0.1:0").unwrap();
            let addr = listener.local_addr().unwrap();
            let g = greeting.to_vec();
            let t = std::thread::spawn(move || {
                let (mut s, _) = listener.accept().unwrap();
                write_packet(&mut s, 0, &g);
            });
            let stream = TcpStream::connect(addr).unwrap();
            let e = Client::login_on(stream, "u", "p", Duration::from_secs(10))
                .err()
                .unwrap();
            assert!(e.code >= 2000, "{e:?}");
            t.join().unwrap();
        }
        // Nothing listens: 2003 with libmariadb's text.
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let cfg = ClientConfig {
            host: "127.0.0.1".into(),
            port,
            user: "u".into(),
            password: String::new(),
            connect_timeout: Duration::from_secs(5),
            read_timeout: Duration::from_secs(5),
            tick: Duration::from_millis(100),
            stop: None,
        };
        let e = Client::connect(&cfg).err().unwrap();
        assert_eq!(e.code, CR_CONN_HOST_ERROR);
        assert_eq!(
            e.message,
            "Can't connect to server on '127.0.0.1' (111 \"Connection refused\")"
        );
    }
}
