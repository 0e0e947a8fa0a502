//! The listener: TCP and unix-socket accept loops, one thread per connection, the
//! `max_connections` limit, connection ids, and orderly shutdown ([`ServerHandle`]).
//!
//! Invariants:
//! - At most `max_connections` + 1 connections run at once; one more is answered with ERR 1040
//!   `Too many connections` (as its first packet, instead of the greeting) and closed. The
//!   connection above `max_connections` is answered 1040 after authentication unless its
//!   account holds CONNECTION ADMIN or SUPER (MariaDB's reserved connection).
//! - A client must complete the handshake within `connect_timeout` (see `connection`), so
//!   silent or trickling sockets cannot hold slots for long.
//! - Connection ids are unique for the registry's lifetime (shared by TCP and socket) and start
//!   at 1.
//! - Shutdown: stop accepting (each accept loop is woken by `shutdown(2)` of its listening
//!   socket, through a duplicate of its descriptor: this works whatever happened to the socket
//!   file, which may have been removed or renamed with the data directory; a connection to
//!   itself is the fallback), close the read side of every connection (idle ones end at once; one running a command finishes
//!   it, sends its result and ends at its next read), then wait until every connection thread
//!   has finished. No thread outlives [`ServerHandle::shutdown`].
//! - A connection's failure (I/O error, malformed packet, panic in the SQL layer) ends only that
//!   connection's thread; the slot it held is released by a guard, even on panic.
//!
//! The connection table (slots, ids, the closers used at shutdown), the shutdown flag and the
//! `Questions` counter are the backend's [`Registry`] (`onelog_sql::server::Registry`, the one
//! the SQL layer reads for PROCESSLIST, KILL, SHUTDOWN and SHOW STATUS), or the listener's own
//! for a backend without one; the slot limit and the id invariants are asserted there.

use std::io::{self, Read, Write};
use std::net::{
    IpAddr, Ipv4Addr, Ipv6Addr, Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs,
};
use std::os::fd::OwnedFd;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crate::backend::Backend;
use crate::connection::{Connection, ConnectionConfig};
use crate::packet::PacketStream;
use crate::response::put_err;
use crate::shared::Shared;
pub use crate::transport::Transport;
use onelog_protocol::errors::ER_CON_COUNT_ERROR;
use onelog_sql::server::{Closer, Registry, Slot};

/// A log sink that drops the line (tests without an error log).
pub fn no_log(_: &str) {}

/// Listener settings (the network part of `onelog_sql::ServerConfig`).
#[derive(Debug, Clone)]
pub struct ListenerConfig {
    /// Address to bind TCP to ("*" = all IPv4 addresses); `None`: no TCP listener.
    pub bind_address: Option<String>,
    /// TCP port; 0 picks a free one (see [`ServerHandle::local_addr`]).
    pub port: u16,
    /// Unix socket path, if any.
    pub socket: Option<PathBuf>,
    pub max_connections: u32,
    pub max_allowed_packet: u32,
    /// Seconds of idleness before a connection is closed; 0 = never.
    pub wait_timeout: u32,
    /// Server version string (e.g. "10.11.9-MariaDB-onelog").
    pub version: String,
    /// Where `[Warning]` lines go (failed logins when `log_warnings` >= 2).
    pub log_warning: fn(&str),
}

impl From<&onelog_sql::ServerConfig> for ListenerConfig {
    fn from(c: &onelog_sql::ServerConfig) -> Self {
        ListenerConfig {
            bind_address: Some(c.bind_address.clone()),
            port: c.port,
            socket: c.socket.clone(),
            max_connections: c.max_connections,
            max_allowed_packet: c.max_allowed_packet,
            wait_timeout: c.wait_timeout,
            version: c.version.clone(),
            log_warning: no_log,
        }
    }
}

/// A running listener. Dropping it shuts it down.
pub struct ServerHandle {
    shared: Arc<Shared>,
    accept_threads: Vec<JoinHandle<()>>,
    local_addr: Option<SocketAddr>,
    socket_path: Option<PathBuf>,
}

fn bind_tcp(addr: &str, port: u16) -> io::Result<TcpListener> {
    let host = match addr {
        "" | "*" => "0.0.0.0",
        a => a,
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let addrs: Vec<SocketAddr> = (host, port).to_socket_addrs()?.collect();
    let mut last = io::Error::new(
        io::ErrorKind::AddrNotAvailable,
        format!("cannot resolve {addr}"),
    );
    for a in addrs {
        match TcpListener::bind(a) {
            Ok(l) => return Ok(l),
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// The address to connect to to wake an accept loop bound to `a`.
fn wake_address(a: SocketAddr) -> SocketAddr {
    match a.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => {
            SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), a.port())
        }
        IpAddr::V6(ip) if ip.is_unspecified() => {
            SocketAddr::new(IpAddr::V6(Ipv6Addr::LOCALHOST), a.port())
        }
        _ => a,
    }
}

/// The host name a peer is known by for account lookup: "localhost" for loopback.
pub fn peer_host(ip: IpAddr) -> String {
    let loopback = match ip {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => {
            v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
    };
    if loopback {
        "localhost".to_owned()
    } else {
        match ip {
            IpAddr::V6(v6) => v6
                .to_ipv4_mapped()
                .map_or_else(|| v6.to_string(), |v4| v4.to_string()),
            IpAddr::V4(v4) => v4.to_string(),
        }
    }
}

impl ServerHandle {
    /// Starts serving `onelog_sql::Server` on the addresses in `config`.
    pub fn start(
        server: Arc<onelog_sql::Server>,
        config: &onelog_sql::ServerConfig,
    ) -> io::Result<ServerHandle> {
        Self::start_with(
            Arc::new(crate::sql_backend::SqlBackend::new(server)),
            ListenerConfig::from(config),
        )
    }

    /// Starts serving any [`Backend`] (tests use a small in-memory one).
    pub fn start_with<B: Backend>(
        backend: Arc<B>,
        config: ListenerConfig,
    ) -> io::Result<ServerHandle> {
        let tcp = match &config.bind_address {
            Some(a) => Some(bind_tcp(a, config.port)?),
            None => None,
        };
        let local_addr = match &tcp {
            Some(l) => Some(l.local_addr()?),
            None => None,
        };
        let unix = match &config.socket {
            Some(p) => {
                // A stale socket file from a previous run would make bind fail.
                if p.exists() && UnixStream::connect(p).is_err() {
                    let _ = std::fs::remove_file(p);
                }
                Some(UnixListener::bind(p)?)
            }
            None => None,
        };
        let mut listening = Vec::new();
        if let Some(l) = &tcp {
            listening.push(OwnedFd::from(l.try_clone()?));
        }
        if let Some(l) = &unix {
            listening.push(OwnedFd::from(l.try_clone()?));
        }
        let shared = Arc::new(Shared {
            stopping: AtomicBool::new(false),
            registry: backend
                .registry()
                .unwrap_or_else(|| Arc::new(Registry::new())),
            wake_tcp: local_addr.map(wake_address),
            wake_unix: config.socket.clone(),
            listening,
            max_connections: config.max_connections as usize,
        });
        let conn_config = Arc::new(ConnectionConfig {
            version: config.version.clone(),
            max_allowed_packet: config.max_allowed_packet as usize,
            wait_timeout: (config.wait_timeout > 0)
                .then(|| Duration::from_secs(u64::from(config.wait_timeout))),
            log_warning: config.log_warning,
        });
        let mut accept_threads = Vec::new();
        if let Some(l) = tcp {
            let (shared, backend, cc) = (shared.clone(), backend.clone(), conn_config.clone());
            accept_threads.push(
                std::thread::Builder::new()
                    .name("onelog-accept-tcp".into())
                    .spawn(move || accept_tcp(l, shared, backend, cc))?,
            );
        }
        if let Some(l) = unix {
            let (shared, backend, cc) = (shared.clone(), backend.clone(), conn_config.clone());
            accept_threads.push(
                std::thread::Builder::new()
                    .name("onelog-accept-unix".into())
                    .spawn(move || accept_unix(l, shared, backend, cc))?,
            );
        }
        Ok(ServerHandle {
            shared,
            accept_threads,
            local_addr,
            socket_path: config.socket,
        })
    }

    /// The bound TCP address (with the real port when 0 was asked for).
    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.local_addr
    }

    pub fn socket_path(&self) -> Option<&Path> {
        self.socket_path.as_deref()
    }

    /// Connections currently open (authenticating or authenticated).
    pub fn connection_count(&self) -> usize {
        self.shared.registry.slot_count()
    }

    /// True once a client asked the server to stop (SHUTDOWN statement or COM_SHUTDOWN).
    pub fn shutdown_requested(&self) -> bool {
        self.shared.registry.shutdown_requested()
    }

    /// Blocks until a client asks the server to stop.
    pub fn wait_shutdown_request(&self) {
        self.shared.registry.wait_shutdown_request()
    }

    /// Stops accepting, closes connections, and waits for every connection thread to end.
    pub fn shutdown(mut self) {
        self.shutdown_inner();
    }

    fn shutdown_inner(&mut self) {
        self.shared.stop_accepting();
        for t in self.accept_threads.drain(..) {
            let _ = t.join();
        }
        if let Some(p) = &self.socket_path {
            let _ = std::fs::remove_file(p);
        }
        // The accept loops have ended, so no slot is taken between these two calls.
        self.shared.registry.close_connections();
        self.shared.registry.wait_no_slots();
        debug_assert_eq!(self.shared.registry.slot_count(), 0);
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        self.shutdown_inner();
    }
}

/// Sends ERR 1040 as the first packet and closes.
fn refuse_too_many<S: Read + Write>(stream: S, max_allowed: usize) {
    let mut ps = PacketStream::new(stream, max_allowed);
    let start = ps.begin_packet();
    let e = ER_CON_COUNT_ERROR;
    put_err(ps.out(), e.code, e.sqlstate, "Too many connections");
    ps.finish_packet(start);
    let _ = ps.flush();
}

/// Takes a slot for a new connection; `None` when `max_connections` + 1 are open. The slot
/// above `max_connections` is marked `extra`: after authentication it is kept only by an
/// account with CONNECTION ADMIN or SUPER (as MariaDB), so an administrator can
/// still log in when ordinary clients hold every slot.
fn take_slot<B: Backend>(shared: &Shared, backend: &B, closer: Closer) -> Option<Slot> {
    let max = backend
        .global_int("max_connections")
        .map_or(shared.max_connections, |m| m as usize);
    shared.registry.take_slot(max, closer)
}

/// A closer shutting the read side of `s` (a clone of the connection's socket).
fn tcp_closer(s: TcpStream) -> Closer {
    Box::new(move || {
        let _ = s.shutdown(Shutdown::Read);
    })
}

fn unix_closer(s: UnixStream) -> Closer {
    Box::new(move || {
        let _ = s.shutdown(Shutdown::Read);
    })
}

fn spawn_connection<B: Backend, S: Transport>(
    slot: Slot,
    shared: Arc<Shared>,
    stream: S,
    host: String,
    backend: Arc<B>,
    config: Arc<ConnectionConfig>,
) {
    let id = slot.id();
    let extra = slot.extra();
    let spawned = std::thread::Builder::new()
        .name(format!("onelog-conn-{id}"))
        // The SQL layer bounds statement nesting against this size (onelog_sql's depth guard).
        .stack_size(onelog_sql::THREAD_STACK_SIZE)
        .spawn(move || {
            let stream = Connection::new(&*backend, &shared, &config, stream, id, host)
                .reserved_slot(extra)
                .run();
            // Free the slot before closing the socket: a client that saw the close can connect again.
            drop(slot);
            drop(stream);
        });
    // On spawn failure the closure (and with it the slot guard and stream) is dropped, which
    // releases the slot and closes the socket.
    let _ = spawned;
}

fn accept_tcp<B: Backend>(
    l: TcpListener,
    shared: Arc<Shared>,
    backend: Arc<B>,
    config: Arc<ConnectionConfig>,
) {
    for s in l.incoming() {
        if shared.stopping.load(Ordering::SeqCst) {
            return;
        }
        let Ok(s) = s else {
            // e.g. out of file descriptors: back off instead of spinning.
            std::thread::sleep(Duration::from_millis(10));
            continue;
        };
        let _ = s.set_nodelay(true);
        let host = s
            .peer_addr()
            .map(|a| peer_host(a.ip()))
            .unwrap_or_else(|_| "unknown".into());
        let Ok(closer) = s.try_clone() else { continue };
        match take_slot(&shared, &*backend, tcp_closer(closer)) {
            Some(slot) => spawn_connection(
                slot,
                shared.clone(),
                s,
                host,
                backend.clone(),
                config.clone(),
            ),
            None => refuse_too_many(s, config.max_allowed_packet),
        }
    }
}

fn accept_unix<B: Backend>(
    l: UnixListener,
    shared: Arc<Shared>,
    backend: Arc<B>,
    config: Arc<ConnectionConfig>,
) {
    for s in l.incoming() {
        if shared.stopping.load(Ordering::SeqCst) {
            return;
        }
        let Ok(s) = s else {
            std::thread::sleep(Duration::from_millis(10));
            continue;
        };
        let Ok(closer) = s.try_clone() else { continue };
        match take_slot(&shared, &*backend, unix_closer(closer)) {
            Some(slot) => spawn_connection(
                slot,
                shared.clone(),
                s,
                "localhost".to_owned(),
                backend.clone(),
                config.clone(),
            ),
            None => refuse_too_many(s, config.max_allowed_packet),
        }
    }
}
