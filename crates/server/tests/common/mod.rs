//! Test support: a small in-memory [`Backend`] whose sessions answer a fixed vocabulary of
//! statements, and a minimal client built on `mysql_common`'s packet parsers and builders (an
//! independent implementation of the client side, so our encoder and its decoder are checked
//! against each other).

#![allow(dead_code)]

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use mysql_common::auth::plugins::mysql_native_password::scramble_native;
use mysql_common::constants::{CapabilityFlags, StatusFlags};
use mysql_common::io::ParseBuf;
use mysql_common::packets::{
    AuthPlugin, Column as MyColumn, ComStmtExecuteRequestBuilder, ErrPacket, HandshakePacket,
    HandshakeResponse, OkPacket, OkPacketDeserializer, OldEofPacket, ResultSetTerminator,
};
use mysql_common::proto::MySerialize;
use mysql_common::row::RowDeserializer;
use mysql_common::value::ServerSide;
use onelog_binlog::{ColumnType, Value};
use onelog_server::auth::native_hash;
use onelog_server::{Backend, ListenerConfig, ServerHandle, SessionApi};
use onelog_sql::{Account, Column, Output, PreparedInfo, SqlError};

// ---------------------------------------------------------------------------------------------
// Backend

#[derive(Default)]
pub struct Shared {
    /// Parameters of every COM_STMT_EXECUTE, in order.
    pub executed: Mutex<Vec<Vec<Value>>>,
    /// Connections registered right now.
    pub registered: AtomicUsize,
    /// Hosts account lookups were made for.
    pub lookup_hosts: Mutex<Vec<String>>,
    /// Set by "KILL <n>": every registration then reports killed.
    pub kill_all: AtomicBool,
}

pub struct TestBackend {
    /// user -> SHA1(SHA1(password)) (empty: no password). "root" only from "localhost".
    pub accounts: HashMap<String, Vec<u8>>,
    pub shared: Arc<Shared>,
}

impl TestBackend {
    pub fn new() -> Self {
        let mut accounts = HashMap::new();
        accounts.insert("root".to_owned(), Vec::new());
        accounts.insert("alice".to_owned(), native_hash(b"wonderland"));
        TestBackend {
            accounts,
            shared: Arc::new(Shared::default()),
        }
    }
}

pub struct Registration {
    shared: Arc<Shared>,
    pub killed: Arc<AtomicBool>,
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.shared.registered.fetch_sub(1, Ordering::SeqCst);
    }
}

pub struct TestSession {
    shared: Arc<Shared>,
    user: String,
    db: Option<String>,
    in_trans: bool,
    multi: bool,
    stmts: HashMap<u32, String>,
    next_stmt: u32,
}

impl Backend for TestBackend {
    type Session = TestSession;
    type Registration = Registration;

    fn lookup_account(&self, user: &str, host: &str) -> Option<Account> {
        self.shared
            .lookup_hosts
            .lock()
            .unwrap()
            .push(host.to_owned());
        if user == "root" && host != "localhost" {
            return None;
        }
        self.accounts.get(user).map(|h| Account {
            user: user.into(),
            host: host.into(),
            auth_hash: h.clone(),
            unix_socket: false,
            password_login: true,
        })
    }

    fn open_session(&self, _id: u32, user: &str, _host: &str) -> TestSession {
        TestSession {
            shared: self.shared.clone(),
            user: user.into(),
            db: None,
            in_trans: false,
            multi: false,
            stmts: HashMap::new(),
            next_stmt: 1,
        }
    }

    fn register_connection(&self, _id: u32, _user: &str, _host: &str) -> Registration {
        self.shared.registered.fetch_add(1, Ordering::SeqCst);
        Registration {
            shared: self.shared.clone(),
            killed: Arc::new(AtomicBool::new(false)),
        }
    }

    fn is_killed(r: &Registration) -> bool {
        r.killed.load(Ordering::SeqCst) || r.shared.kill_all.load(Ordering::SeqCst)
    }
}

pub fn col(name: &str, t: ColumnType, flags: u16, decimals: u8, charset: u16) -> Column {
    Column {
        name: name.into(),
        org_name: name.into(),
        table: "t".into(),
        org_table: "t".into(),
        db: "test".into(),
        column_type: t,
        flags,
        length: 20,
        decimals,
        charset,
    }
}

/// One column of every kind the protocol encodes differently.
pub fn typed_columns() -> Vec<Column> {
    vec![
        col("tiny", ColumnType::Tiny, 0, 0, 63),
        col("ushort", ColumnType::Short, 32, 0, 63),
        col("int24", ColumnType::Int24, 0, 0, 63),
        col("long", ColumnType::Long, 0, 0, 63),
        col("ubig", ColumnType::LongLong, 32, 0, 63),
        col("flt", ColumnType::Float, 0, 31, 63),
        col("dbl", ColumnType::Double, 0, 31, 63),
        col("dec", ColumnType::NewDecimal, 0, 2, 63),
        col("vc", ColumnType::VarChar, 0, 0, 45),
        col("blob", ColumnType::Blob, 144, 0, 63),
        col("d", ColumnType::Date, 0, 0, 63),
        col("dt", ColumnType::DateTime2, 0, 6, 63),
        col("ts", ColumnType::Timestamp2, 0, 0, 63),
        col("tm", ColumnType::Time2, 0, 3, 63),
        col("yr", ColumnType::Year, 32, 0, 63),
    ]
}

pub fn typed_row() -> Vec<Value> {
    vec![
        Value::Int(-5),
        Value::UInt(65535),
        Value::Int(-8_388_608),
        Value::Int(2_147_483_647),
        Value::UInt(u64::MAX),
        Value::Float(1.5),
        Value::Double(-2.25),
        Value::Decimal("-12.50".into()),
        Value::bytes("héllo".as_bytes()),
        Value::bytes(vec![0, 1, 2, 255]),
        Value::Date {
            year: 2024,
            month: 2,
            day: 29,
        },
        Value::DateTime {
            year: 1999,
            month: 12,
            day: 31,
            hour: 23,
            minute: 59,
            second: 58,
            micros: 123_456,
        },
        Value::Timestamp {
            secs: 86_400 + 3_661,
            micros: 0,
        },
        Value::Time {
            negative: true,
            hours: 100,
            minutes: 2,
            seconds: 3,
            micros: 450_000,
        },
        Value::Year(2023),
    ]
}

fn ok(affected: u64, last_id: u64, warnings: u16, info: &str) -> Output {
    Output::Ok {
        affected_rows: affected,
        last_insert_id: last_id,
        warnings,
        info: info.into(),
    }
}

fn parse_err(sql: &str) -> SqlError {
    SqlError::new(
        1064,
        "42000",
        format!("You have an error in your SQL syntax near '{sql}'"),
    )
}

impl TestSession {
    fn one(&mut self, sql: &str) -> Result<Output, SqlError> {
        let sql = sql.trim();
        if let Some(n) = sql.strip_prefix("big ") {
            let n: usize = n.parse().map_err(|_| parse_err(sql))?;
            let data: Vec<u8> = (0..n).map(|i| (i % 253) as u8).collect();
            return Ok(Output::Rows {
                columns: vec![col("b", ColumnType::LongBlob, 144, 0, 63)],
                rows: vec![vec![Value::bytes(data)]],
            });
        }
        if let Some(rest) = sql.strip_prefix("len ") {
            return Ok(Output::Rows {
                columns: vec![col("n", ColumnType::LongLong, 32, 0, 63)],
                rows: vec![vec![Value::UInt(rest.len() as u64)]],
            });
        }
        if sql.starts_with("KILL ") {
            self.shared.kill_all.store(true, Ordering::SeqCst);
            return Ok(ok(0, 0, 0, ""));
        }
        match sql {
            "select rows" => Ok(Output::Rows {
                columns: typed_columns(),
                rows: vec![typed_row(), vec![Value::Null; typed_columns().len()]],
            }),
            "insert" => Ok(ok(3, 42, 1, "Records: 3  Duplicates: 0  Warnings: 1")),
            "begin" => {
                self.in_trans = true;
                Ok(ok(0, 0, 0, ""))
            }
            "commit" => {
                self.in_trans = false;
                Ok(ok(0, 0, 0, ""))
            }
            "shutdown" | "SHUTDOWN" => Ok(Output::Shutdown),
            "db" => Ok(Output::Rows {
                columns: vec![col("db", ColumnType::VarChar, 0, 0, 45)],
                rows: vec![vec![self
                    .db
                    .clone()
                    .map_or(Value::Null, |d| Value::bytes(d.into_bytes()))]],
            }),
            "user" => Ok(Output::Rows {
                columns: vec![col("user", ColumnType::VarChar, 0, 0, 45)],
                rows: vec![vec![Value::bytes(self.user.clone().into_bytes())]],
            }),
            _ => Err(parse_err(sql)),
        }
    }
}

impl SessionApi for TestSession {
    fn query(&mut self, sql: &str) -> Vec<Result<Output, SqlError>> {
        let parts: Vec<&str> = sql.split(';').filter(|s| !s.trim().is_empty()).collect();
        if parts.len() > 1 && !self.multi {
            return vec![Err(parse_err(sql))];
        }
        let mut out = Vec::new();
        for p in parts {
            let r = self.one(p);
            let stop = r.is_err();
            out.push(r);
            if stop {
                break;
            }
        }
        out
    }

    fn prepare(&mut self, sql: &str) -> Result<PreparedInfo, SqlError> {
        if !sql.starts_with("select") && !sql.starts_with("insert") {
            return Err(parse_err(sql));
        }
        let id = self.next_stmt;
        self.next_stmt += 1;
        self.stmts.insert(id, sql.to_owned());
        let columns = if sql.starts_with("select") {
            typed_columns()
        } else {
            Vec::new()
        };
        Ok(PreparedInfo {
            stmt_id: id,
            params: sql.matches('?').count() as u16,
            columns,
        })
    }

    fn execute(&mut self, stmt_id: u32, params: &[Value]) -> Result<Output, SqlError> {
        let sql = self
            .stmts
            .get(&stmt_id)
            .ok_or_else(|| SqlError::new(1243, "HY000", "Unknown prepared statement handler"))?;
        self.shared.executed.lock().unwrap().push(params.to_vec());
        if sql.starts_with("select") {
            Ok(Output::Rows {
                columns: typed_columns(),
                rows: vec![typed_row(), vec![Value::Null; 15]],
            })
        } else {
            Ok(ok(params.len() as u64, 0, 0, ""))
        }
    }

    fn close_statement(&mut self, stmt_id: u32) {
        self.stmts.remove(&stmt_id);
    }

    fn reset_statement(&mut self, stmt_id: u32) -> Result<(), SqlError> {
        if self.stmts.contains_key(&stmt_id) {
            Ok(())
        } else {
            Err(SqlError::new(
                1243,
                "HY000",
                "Unknown prepared statement handler",
            ))
        }
    }

    fn use_database(&mut self, db: &str) -> Result<(), SqlError> {
        if db == "nodb" {
            return Err(SqlError::new(
                1049,
                "42000",
                format!("Unknown database '{db}'"),
            ));
        }
        self.db = Some(db.to_owned());
        Ok(())
    }

    fn field_list(&mut self, table: &str, _wildcard: &str) -> Result<Vec<Column>, SqlError> {
        if table == "t" {
            Ok(typed_columns().into_iter().take(2).collect())
        } else {
            Err(SqlError::new(
                1146,
                "42S02",
                format!("Table 'test.{table}' doesn't exist"),
            ))
        }
    }

    fn reset(&mut self) {
        self.in_trans = false;
        self.stmts.clear();
    }

    fn change_user(&mut self, user: &str, db: Option<&str>) -> Result<(), SqlError> {
        self.user = user.to_owned();
        self.db = db.map(str::to_owned);
        Ok(())
    }

    fn current_database(&self) -> Option<&str> {
        self.db.as_deref()
    }

    fn in_transaction(&self) -> bool {
        self.in_trans
    }

    fn autocommit(&self) -> bool {
        true
    }

    fn set_multi_statements(&mut self, on: bool) {
        self.multi = on;
    }

    fn warning_count(&self) -> u16 {
        0
    }
}

pub fn config() -> ListenerConfig {
    ListenerConfig {
        bind_address: Some("127.0.0.1".into()),
        port: 0,
        socket: None,
        max_connections: 20,
        max_allowed_packet: 64 << 20,
        wait_timeout: 0,
        version: "10.11.9-MariaDB-onelog".into(),
        log_warning: onelog_server::listener::no_log,
    }
}

pub fn start(config: ListenerConfig) -> (ServerHandle, Arc<Shared>) {
    let backend = TestBackend::new();
    let shared = backend.shared.clone();
    (
        ServerHandle::start_with(Arc::new(backend), config).unwrap(),
        shared,
    )
}

// ---------------------------------------------------------------------------------------------
// Client

pub trait Stream: Read + Write + Send {}
impl Stream for TcpStream {}
impl Stream for UnixStream {}

#[derive(Debug, Clone, PartialEq)]
pub struct ServerErr {
    pub code: u16,
    pub state: String,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Resp {
    Ok {
        affected: u64,
        last_id: u64,
        status: u16,
        warnings: u16,
        info: String,
    },
    Text {
        columns: Vec<MyColumn>,
        rows: Vec<Vec<Option<Vec<u8>>>>,
        status: u16,
    },
    Binary {
        columns: Vec<MyColumn>,
        rows: Vec<Vec<mysql_common::Value>>,
        status: u16,
    },
}

impl Resp {
    pub fn status(&self) -> u16 {
        match self {
            Resp::Ok { status, .. } | Resp::Text { status, .. } | Resp::Binary { status, .. } => {
                *status
            }
        }
    }
}

pub struct Opts<'a> {
    pub user: &'a str,
    pub password: &'a str,
    pub db: Option<&'a str>,
    pub plugin: &'a str,
    pub deprecate_eof: bool,
    pub multi_statements: bool,
}

impl Default for Opts<'_> {
    fn default() -> Self {
        Opts {
            user: "root",
            password: "",
            db: None,
            plugin: "mysql_native_password",
            deprecate_eof: true,
            multi_statements: true,
        }
    }
}

pub struct Client {
    pub s: Box<dyn Stream>,
    pub seq: u8,
    pub caps: CapabilityFlags,
    pub greeting: HandshakePacket<'static>,
}

const MAX: usize = 0xFF_FFFF;

pub fn read_raw(s: &mut dyn Stream, seq: &mut u8) -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let mut h = [0u8; 4];
        s.read_exact(&mut h)?;
        let len = u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize;
        assert_eq!(h[3], *seq, "server sequence id");
        *seq = seq.wrapping_add(1);
        let start = out.len();
        out.resize(start + len, 0);
        s.read_exact(&mut out[start..])?;
        if len < MAX {
            return Ok(out);
        }
    }
}

impl Client {
    /// Connects and authenticates; `Err` carries the server's ERR packet.
    pub fn connect_tcp(addr: SocketAddr, opts: &Opts<'_>) -> Result<Client, ServerErr> {
        Self::connect(Box::new(TcpStream::connect(addr).unwrap()), opts)
    }

    pub fn connect_unix(path: &Path, opts: &Opts<'_>) -> Result<Client, ServerErr> {
        Self::connect(Box::new(UnixStream::connect(path).unwrap()), opts)
    }

    pub fn connect(mut s: Box<dyn Stream>, opts: &Opts<'_>) -> Result<Client, ServerErr> {
        let mut seq = 0;
        let first = read_raw(&mut *s, &mut seq).unwrap();
        if first[0] == 0xFF {
            return Err(parse_err_packet(
                &first,
                CapabilityFlags::CLIENT_PROTOCOL_41,
            ));
        }
        let greeting: HandshakePacket<'_> = ParseBuf(&first).parse(()).unwrap();
        let greeting = greeting.into_owned();
        let mut caps = CapabilityFlags::CLIENT_PROTOCOL_41
            | CapabilityFlags::CLIENT_SECURE_CONNECTION
            | CapabilityFlags::CLIENT_PLUGIN_AUTH
            | CapabilityFlags::CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA
            | CapabilityFlags::CLIENT_LONG_PASSWORD
            | CapabilityFlags::CLIENT_TRANSACTIONS
            | CapabilityFlags::CLIENT_MULTI_RESULTS
            | CapabilityFlags::CLIENT_CONNECT_ATTRS;
        if opts.deprecate_eof {
            caps |= CapabilityFlags::CLIENT_DEPRECATE_EOF;
        }
        if opts.multi_statements {
            caps |= CapabilityFlags::CLIENT_MULTI_STATEMENTS;
        }
        if opts.db.is_some() {
            caps |= CapabilityFlags::CLIENT_CONNECT_WITH_DB;
        }
        let nonce = greeting.nonce();
        let scramble: Vec<u8> = if opts.password.is_empty() {
            Vec::new()
        } else if opts.plugin == "mysql_native_password" {
            scramble_native(&nonce, opts.password.as_bytes())
                .unwrap()
                .to_vec()
        } else {
            // A caching_sha2_password-style first response: anything non-empty.
            vec![0xAB; 32]
        };
        let mut attrs = HashMap::new();
        attrs.insert("_client_name".to_owned(), "onelog-test".to_owned());
        let resp = HandshakeResponse::new(
            Some(&scramble[..]),
            (10, 11, 9),
            Some(opts.user.as_bytes()),
            opts.db.map(str::as_bytes),
            Some(AuthPlugin::from_bytes(opts.plugin.as_bytes())),
            caps,
            Some(attrs),
            16 << 20,
        );
        let mut buf = Vec::new();
        resp.serialize(&mut buf);
        let mut c = Client {
            s,
            seq,
            caps,
            greeting,
        };
        c.write_raw(&buf);
        let mut p = c.read().unwrap();
        if p[0] == 0xFE {
            // Auth switch request: plugin name, then the scramble.
            let mut parts = p[1..].splitn(2, |&b| b == 0);
            assert_eq!(parts.next().unwrap(), b"mysql_native_password");
            let data = parts.next().unwrap();
            let data = &data[..20];
            let r = if opts.password.is_empty() {
                Vec::new()
            } else {
                scramble_native(data, opts.password.as_bytes())
                    .unwrap()
                    .to_vec()
            };
            c.write_raw(&r);
            p = c.read().unwrap();
        }
        if p[0] == 0xFF {
            return Err(parse_err_packet(&p, caps));
        }
        assert_eq!(p[0], 0x00, "OK after authentication");
        Ok(c)
    }

    pub fn write_raw(&mut self, payload: &[u8]) {
        let mut rest = payload;
        loop {
            let n = rest.len().min(MAX);
            let h = (n as u32).to_le_bytes();
            self.s.write_all(&[h[0], h[1], h[2], self.seq]).unwrap();
            self.seq = self.seq.wrapping_add(1);
            self.s.write_all(&rest[..n]).unwrap();
            rest = &rest[n..];
            if n < MAX {
                break;
            }
        }
        self.s.flush().unwrap();
    }

    pub fn read(&mut self) -> io::Result<Vec<u8>> {
        read_raw(&mut *self.s, &mut self.seq)
    }

    /// Sends a command packet (sequence 0).
    pub fn command(&mut self, cmd: u8, body: &[u8]) {
        self.seq = 0;
        let mut p = vec![cmd];
        p.extend_from_slice(body);
        self.write_raw(&p);
    }

    /// True when the server closed the connection (EOF on read).
    pub fn is_closed(&mut self) -> bool {
        let mut b = [0u8; 1];
        matches!(self.s.read(&mut b), Ok(0) | Err(_))
    }

    pub fn query(&mut self, sql: &str) -> Vec<Result<Resp, ServerErr>> {
        self.command(0x03, sql.as_bytes());
        self.read_results(false)
    }

    pub fn query_one(&mut self, sql: &str) -> Result<Resp, ServerErr> {
        let mut r = self.query(sql);
        assert_eq!(r.len(), 1, "{r:?}");
        r.remove(0)
    }

    pub fn read_results(&mut self, binary: bool) -> Vec<Result<Resp, ServerErr>> {
        let mut out = Vec::new();
        loop {
            let r = self.read_result(binary);
            let more = match &r {
                Ok(resp) => resp.status() & StatusFlags::SERVER_MORE_RESULTS_EXISTS.bits() != 0,
                Err(_) => false,
            };
            out.push(r);
            if !more {
                return out;
            }
        }
    }

    pub fn parse_ok(&self, p: &[u8]) -> Resp {
        let ok: OkPacket<'_> = if p[0] == 0xFE {
            ParseBuf(p)
                .parse::<OkPacketDeserializer<'_, ResultSetTerminator>>(self.caps)
                .unwrap()
                .into_inner()
        } else {
            ParseBuf(p)
                .parse::<OkPacketDeserializer<'_, mysql_common::packets::CommonOkPacket>>(self.caps)
                .unwrap()
                .into_inner()
        };
        Resp::Ok {
            affected: ok.affected_rows(),
            last_id: ok.last_insert_id().unwrap_or(0),
            status: ok.status_flags().bits(),
            warnings: ok.warnings(),
            info: ok.info_str().map(|s| s.into_owned()).unwrap_or_default(),
        }
    }

    pub fn read_columns(&mut self, n: usize) -> Vec<MyColumn> {
        let mut cols = Vec::new();
        for _ in 0..n {
            let p = self.read().unwrap();
            let c: MyColumn = ParseBuf(&p).parse(()).unwrap();
            cols.push(c);
        }
        if !self.caps.contains(CapabilityFlags::CLIENT_DEPRECATE_EOF) {
            let p = self.read().unwrap();
            assert_eq!(p[0], 0xFE);
            assert_eq!(p.len(), 5, "EOF after column definitions");
        }
        cols
    }

    /// Status flags of a result-set terminator.
    pub fn terminator_status(&self, p: &[u8]) -> u16 {
        if self.caps.contains(CapabilityFlags::CLIENT_DEPRECATE_EOF) {
            self.parse_ok(p).status()
        } else {
            let ok = ParseBuf(p)
                .parse::<OkPacketDeserializer<'_, OldEofPacket>>(self.caps)
                .unwrap()
                .into_inner();
            ok.status_flags().bits()
        }
    }

    pub fn read_result(&mut self, binary: bool) -> Result<Resp, ServerErr> {
        let p = self.read().unwrap();
        match p[0] {
            0x00 => return Ok(self.parse_ok(&p)),
            0xFF => return Err(parse_err_packet(&p, self.caps)),
            _ => {}
        }
        let n = onelog_server::wire::Reader::new(&p)
            .lenenc_int("n")
            .unwrap()
            .unwrap() as usize;
        let columns = self.read_columns(n);
        let cols: Arc<[MyColumn]> = columns.clone().into();
        let mut text_rows = Vec::new();
        let mut bin_rows = Vec::new();
        loop {
            let p = self.read().unwrap();
            if p[0] == 0xFE && p.len() < MAX {
                let status = self.terminator_status(&p);
                return Ok(if binary {
                    Resp::Binary {
                        columns,
                        rows: bin_rows,
                        status,
                    }
                } else {
                    Resp::Text {
                        columns,
                        rows: text_rows,
                        status,
                    }
                });
            }
            if binary {
                let row: RowDeserializer<ServerSide, mysql_common::proto::Binary> =
                    ParseBuf(&p).parse(cols.clone()).unwrap();
                let row = row.into_inner().unwrap();
                bin_rows.push(row);
            } else {
                let mut r = onelog_server::wire::Reader::new(&p);
                let mut row = Vec::new();
                for _ in 0..n {
                    if p[r.position()] == 0xFB {
                        r.u8("null").unwrap();
                        row.push(None);
                    } else {
                        row.push(Some(r.lenenc_bytes("v").unwrap().to_vec()));
                    }
                }
                assert!(r.is_empty());
                text_rows.push(row);
            }
        }
    }

    /// COM_STMT_PREPARE: (statement id, parameter count, result columns).
    pub fn prepare(&mut self, sql: &str) -> Result<(u32, u16, Vec<MyColumn>), ServerErr> {
        self.command(0x16, sql.as_bytes());
        let p = self.read().unwrap();
        if p[0] == 0xFF {
            return Err(parse_err_packet(&p, self.caps));
        }
        assert_eq!(p[0], 0);
        assert_eq!(p.len(), 12);
        let id = u32::from_le_bytes([p[1], p[2], p[3], p[4]]);
        let ncols = u16::from_le_bytes([p[5], p[6]]);
        let nparams = u16::from_le_bytes([p[7], p[8]]);
        if nparams > 0 {
            let params = self.read_columns(nparams as usize);
            assert!(params.iter().all(|c| c.name_str() == "?"));
        }
        let cols = if ncols > 0 {
            self.read_columns(ncols as usize)
        } else {
            Vec::new()
        };
        Ok((id, nparams, cols))
    }

    pub fn execute(&mut self, id: u32, params: &[mysql_common::Value]) -> Result<Resp, ServerErr> {
        let (req, as_long) = ComStmtExecuteRequestBuilder::new(id).build(params);
        assert!(!as_long);
        let mut buf = Vec::new();
        req.serialize(&mut buf);
        self.seq = 0;
        self.write_raw(&buf);
        self.read_result(true)
    }
}

pub fn parse_err_packet(p: &[u8], caps: CapabilityFlags) -> ServerErr {
    let e: ErrPacket<'_> = ParseBuf(p)
        .parse(caps | CapabilityFlags::CLIENT_PROTOCOL_41)
        .unwrap();
    let e = e.server_error();
    ServerErr {
        code: e.error_code(),
        state: e
            .sql_state_ref()
            .map(|s| s.as_str().into_owned())
            .unwrap_or_default(),
        message: e.message_str().into_owned(),
    }
}
