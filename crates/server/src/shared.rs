//! What the accept loops, the connections and the [`ServerHandle`](crate::ServerHandle) share:
//! the backend's connection registry, the listening sockets to wake at shutdown, the
//! connection limit.
//!
//! Invariants: the accept loops are stopped at most once (`stopping` flips false to true a
//! single time; the wake-up after it is harmless when repeated); a client's shutdown request
//! sets the registry's flag before it stops accepting and closes the connections.
//!
//! Callers: `listener` builds it and runs the accept loops and the handle on it; `connection`
//! asks it for COM_STATISTICS and a client's shutdown request.

use std::net::{SocketAddr, TcpStream};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use onelog_sql::server::Registry;

/// State shared by the accept loops, the connections and the handle.
pub(crate) struct Shared {
    pub(crate) stopping: AtomicBool,
    /// Connections, shutdown flag, `Questions` (the backend's, shared with the SQL layer).
    pub(crate) registry: Arc<Registry>,
    pub(crate) wake_tcp: Option<SocketAddr>,
    pub(crate) wake_unix: Option<PathBuf>,
    /// Duplicates of the listening sockets' descriptors, to wake the accept loops with
    /// `shutdown(2)`; owned here, so the descriptor stays valid until the listener is dropped.
    pub(crate) listening: Vec<OwnedFd>,
    pub(crate) max_connections: usize,
}

impl Shared {
    /// Asked by a client (SHUTDOWN / COM_SHUTDOWN): stop accepting and close idle connections;
    /// the owner of the [`ServerHandle`](crate::ServerHandle) completes the shutdown.
    pub(crate) fn request_shutdown(&self) {
        self.registry.request_shutdown();
        debug_assert!(self.registry.shutdown_requested());
        self.stop_accepting();
        self.registry.close_connections();
    }

    /// Wakes and ends the accept loops (idempotent).
    pub(crate) fn stop_accepting(&self) {
        if self.stopping.swap(true, Ordering::SeqCst) {
            return;
        }
        debug_assert!(self.stopping.load(Ordering::SeqCst));
        for fd in &self.listening {
            // SAFETY: shutdown(2) on a descriptor this struct owns (a dup of a listening
            // socket); it only changes the socket's state. On Linux it makes a blocked
            // accept(2) return EINVAL at once, for TCP and unix sockets alike.
            unsafe {
                libc::shutdown(fd.as_raw_fd(), libc::SHUT_RDWR);
            }
        }
        // Fallback for a kernel where shutdown(2) does not wake accept(2): connect to
        // ourselves (fails quickly, without harm, when the shutdown already closed the socket
        // or the socket file is gone).
        if let Some(addr) = self.wake_tcp {
            let _ = TcpStream::connect_timeout(&addr, Duration::from_secs(1));
        }
        if let Some(p) = &self.wake_unix {
            let _ = UnixStream::connect(p);
        }
    }

    /// COM_STATISTICS text.
    pub(crate) fn statistics(&self, slow_queries: u64) -> String {
        let uptime = self.registry.uptime().as_secs();
        let threads = self.registry.slot_count();
        let questions = self.registry.questions();
        let qps = if uptime > 0 {
            questions as f64 / uptime as f64
        } else {
            questions as f64
        };
        format!(
            "Uptime: {uptime}  Threads: {threads}  Questions: {questions}  Slow queries: {slow_queries}  Opens: 0  \
             Open tables: 0  Queries per second avg: {qps:.3}"
        )
    }
}
