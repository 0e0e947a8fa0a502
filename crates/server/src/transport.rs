//! The byte streams a connection runs on ([`Transport`]: TCP and unix sockets): timeouts, the
//! unix-socket peer's uid (`SO_PEERCRED`) and the client-liveness probe.
//!
//! The probe never blocks and never consumes the peer's bytes (a `MSG_PEEK | MSG_DONTWAIT`
//! receive); the peer uid is the kernel's record, never the client's word.
//!
//! [`Counted`] wraps a transport and adds every byte read or written to the connection's
//! and the server's [`Traffic`] (`Bytes_received`, `Bytes_sent`).
//!
//! Callers: `listener` (accepts them), `connection` (runs on one).
//!
//! Invariants: the liveness probe never blocks and never consumes a byte; the peer uid comes
//! from the kernel only; [`Counted`] counts exactly the bytes the socket calls returned.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::time::Duration;

use onelog_sql::status::Traffic;

/// A byte stream a connection runs on.
pub trait Transport: Read + Write + Send + 'static {
    fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()>;
    fn set_write_timeout(&self, timeout: Option<Duration>) -> io::Result<()>;
    /// The OS user id of the peer process (unix sockets: `SO_PEERCRED`); `None` for TCP.
    fn peer_uid(&self) -> Option<u32> {
        None
    }
    /// The peer's IP address as MariaDB shows it (`127.0.0.1`, the slow log's `[ip]`);
    /// `None` for unix sockets.
    fn peer_ip(&self) -> Option<String> {
        None
    }
    /// A probe telling, without blocking or consuming bytes, whether the peer is still
    /// connected (false once it closed or reset the connection); running statements poll it
    /// so a client disconnect stops them. None: this transport cannot tell.
    fn liveness_probe(&self) -> Option<onelog_sql::guard::Probe> {
        None
    }
    /// A second handle reading the same socket (a dump's reader thread).
    fn try_clone_reader(&self) -> Option<Box<dyn Read + Send>> {
        None
    }
    /// Shuts the socket down both ways, for every handle of it.
    fn shutdown_both(&self) {}
}

impl Transport for TcpStream {
    fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        TcpStream::set_read_timeout(self, timeout)
    }
    fn set_write_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        TcpStream::set_write_timeout(self, timeout)
    }
    fn peer_ip(&self) -> Option<String> {
        Some(match self.peer_addr().ok()?.ip() {
            std::net::IpAddr::V6(v6) => v6
                .to_ipv4_mapped()
                .map_or_else(|| v6.to_string(), |v4| v4.to_string()),
            ip => ip.to_string(),
        })
    }
    fn liveness_probe(&self) -> Option<onelog_sql::guard::Probe> {
        let s = self.try_clone().ok()?;
        Some(Box::new(move || peer_alive(s.as_raw_fd())))
    }
    fn try_clone_reader(&self) -> Option<Box<dyn Read + Send>> {
        Some(Box::new(self.try_clone().ok()?))
    }
    fn shutdown_both(&self) {
        let _ = self.shutdown(std::net::Shutdown::Both);
    }
}

impl Transport for UnixStream {
    fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        UnixStream::set_read_timeout(self, timeout)
    }
    fn set_write_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        UnixStream::set_write_timeout(self, timeout)
    }
    fn peer_uid(&self) -> Option<u32> {
        peer_uid(self)
    }
    fn liveness_probe(&self) -> Option<onelog_sql::guard::Probe> {
        let s = self.try_clone().ok()?;
        Some(Box::new(move || peer_alive(s.as_raw_fd())))
    }
    fn try_clone_reader(&self) -> Option<Box<dyn Read + Send>> {
        Some(Box::new(self.try_clone().ok()?))
    }
    fn shutdown_both(&self) {
        let _ = self.shutdown(std::net::Shutdown::Both);
    }
}

/// A transport whose bytes are counted into a connection's and the server's [`Traffic`].
pub struct Counted<S> {
    inner: S,
    connection: Arc<Traffic>,
    server: Option<Arc<Traffic>>,
}

impl<S> Counted<S> {
    pub fn new(inner: S, connection: Arc<Traffic>, server: Option<Arc<Traffic>>) -> Self {
        Counted {
            inner,
            connection,
            server,
        }
    }
    pub fn into_inner(self) -> S {
        self.inner
    }
}

impl<S: Read> Read for Counted<S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.connection.add_received(n as u64);
        if let Some(s) = &self.server {
            s.add_received(n as u64);
        }
        Ok(n)
    }
}

impl<S: Write> Write for Counted<S> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.connection.add_sent(n as u64);
        if let Some(s) = &self.server {
            s.add_sent(n as u64);
        }
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

impl<S: Transport> Transport for Counted<S> {
    fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        self.inner.set_read_timeout(timeout)
    }
    fn set_write_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        self.inner.set_write_timeout(timeout)
    }
    fn peer_uid(&self) -> Option<u32> {
        self.inner.peer_uid()
    }
    fn peer_ip(&self) -> Option<String> {
        self.inner.peer_ip()
    }
    fn liveness_probe(&self) -> Option<onelog_sql::guard::Probe> {
        self.inner.liveness_probe()
    }
    fn try_clone_reader(&self) -> Option<Box<dyn Read + Send>> {
        self.inner.try_clone_reader()
    }
    fn shutdown_both(&self) {
        self.inner.shutdown_both()
    }
}

/// Whether the peer of connected socket `fd` is still there: a non-blocking peek of one byte
/// (`MSG_PEEK | MSG_DONTWAIT`, so neither the socket's mode nor its data change) returns 0
/// only at end of stream, and fails with an error other than EAGAIN once the connection was
/// reset. Bytes waiting (a pipelined next command) mean alive.
fn peer_alive(fd: std::os::fd::RawFd) -> bool {
    let mut b = [0u8; 1];
    // SAFETY: `fd` is an open socket owned by the probe's cloned stream; the buffer is valid
    // for the one byte asked.
    let n = unsafe {
        libc::recv(
            fd,
            b.as_mut_ptr().cast(),
            1,
            libc::MSG_PEEK | libc::MSG_DONTWAIT,
        )
    };
    match n {
        0 => false,
        n if n > 0 => true,
        _ => matches!(
            io::Error::last_os_error().kind(),
            io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
        ),
    }
}

/// `SO_PEERCRED`'s uid: the credentials the kernel recorded when the peer connected (they
/// cannot be forged by the client).
fn peer_uid(s: &UnixStream) -> Option<u32> {
    let mut cred = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: `cred` and `len` are valid for writes of the sizes given; the fd is open for
    // the lifetime of `s`.
    let rc = unsafe {
        libc::getsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut cred as *mut libc::ucred).cast(),
            &mut len,
        )
    };
    (rc == 0 && len as usize == std::mem::size_of::<libc::ucred>()).then_some(cred.uid)
}
