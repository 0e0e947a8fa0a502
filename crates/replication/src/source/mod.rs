//! The primary side of replication: what a MariaDB replica, `mariadb-binlog` or a CDC client
//! reaches with COM_REGISTER_SLAVE and COM_BINLOG_DUMP (REPLICATION_FACTS.md §1).
//!
//! Owns [`Source`], the server-wide state of the primary side: the registered replicas (SHOW
//! SLAVE HOSTS) and the running dumps (a new dump from a server id ends the older one with the
//! same id, MariaDB's `kill_zombie_dump_threads`). The dump itself is [`dump::run`]; the
//! socket it writes to is lent by the server through [`DumpIo`], and semi-sync waiting lives
//! in the engine behind [`AckSink`].
//!
//! Invariants: a connection appears at most once among the hosts and once among the dumps
//! (keyed by connection id), and leaves both when its [`DumpGuard`] or [`Source::unregister`]
//! says so; at most one running dump per non-zero server id.

pub mod artificial;
pub mod dump;
pub mod gtid_start;
pub mod packets;

use std::collections::BTreeMap;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

pub use artificial::Checksum;
pub use dump::{run as run_dump, DumpEnd, DumpParams};
pub use packets::{DumpRequest, RegisterSlave, SemiSyncAck};

/// A replica as SHOW SLAVE HOSTS lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlaveHost {
    pub connection_id: u32,
    pub server_id: u32,
    pub host: String,
    pub port: u16,
    pub master_id: u32,
}

struct RunningDump {
    server_id: u32,
    stop: Arc<AtomicBool>,
}

/// Server-wide state of the primary side (see the module docs).
#[derive(Default)]
pub struct Source {
    hosts: Mutex<BTreeMap<u32, SlaveHost>>,
    dumps: Mutex<BTreeMap<u32, RunningDump>>,
}

fn locked<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Source {
    pub fn new() -> Source {
        Source::default()
    }

    /// COM_REGISTER_SLAVE from connection `connection_id` (a second one replaces the first).
    pub fn register(&self, connection_id: u32, r: &RegisterSlave) {
        locked(&self.hosts).insert(
            connection_id,
            SlaveHost {
                connection_id,
                server_id: r.server_id,
                host: r.host.clone(),
                port: r.port,
                master_id: r.master_id,
            },
        );
    }

    /// The connection ended: it is no longer a registered replica.
    pub fn unregister(&self, connection_id: u32) {
        locked(&self.hosts).remove(&connection_id);
    }

    /// SHOW SLAVE HOSTS, by server id.
    pub fn slave_hosts(&self) -> Vec<SlaveHost> {
        let mut v: Vec<SlaveHost> = locked(&self.hosts).values().cloned().collect();
        v.sort_by_key(|h| (h.server_id, h.connection_id));
        v
    }

    /// A dump starts on `connection_id` for `server_id`: an older dump with the same non-zero
    /// server id is told to stop. The guard ends the registration.
    pub fn start_dump(self: &Arc<Self>, connection_id: u32, server_id: u32) -> DumpGuard {
        let stop = Arc::new(AtomicBool::new(false));
        let mut dumps = locked(&self.dumps);
        if server_id != 0 {
            for d in dumps.values().filter(|d| d.server_id == server_id) {
                d.stop.store(true, Ordering::SeqCst);
            }
        }
        dumps.insert(
            connection_id,
            RunningDump {
                server_id,
                stop: stop.clone(),
            },
        );
        debug_assert_eq!(
            dumps
                .values()
                .filter(|d| server_id != 0
                    && d.server_id == server_id
                    && !d.stop.load(Ordering::SeqCst))
                .count(),
            usize::from(server_id != 0),
            "one running dump per server id"
        );
        DumpGuard {
            source: self.clone(),
            connection_id,
            stop,
        }
    }
}

/// A running dump's registration; dropping it ends the registration.
pub struct DumpGuard {
    source: Arc<Source>,
    connection_id: u32,
    stop: Arc<AtomicBool>,
}

impl DumpGuard {
    /// True once a newer dump from the same server id took over.
    pub fn replaced(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }
}

impl Drop for DumpGuard {
    fn drop(&mut self) {
        let mut dumps = locked(&self.source.dumps);
        if dumps
            .get(&self.connection_id)
            .is_some_and(|d| Arc::ptr_eq(&d.stop, &self.stop))
        {
            dumps.remove(&self.connection_id);
        }
    }
}

/// Where the reader thread hands each client packet (`None`: the client closed).
pub type PacketSink = Box<dyn FnMut(Option<&[u8]>) + Send>;

/// The connection a dump writes to, lent by the server.
pub trait DumpIo {
    /// Queues one packet with this payload (framing and sequence ids are the server's).
    fn send(&mut self, payload: &[u8]) -> io::Result<()>;
    /// Writes out what is queued.
    fn flush(&mut self) -> io::Result<()>;
    /// The next packet gets sequence id `seq` (after a semi-sync ACK request).
    fn set_sequence(&mut self, seq: u8);
    /// Sends an ERR packet (SQLSTATE HY000).
    fn send_error(&mut self, code: u16, message: &str) -> io::Result<()>;
    /// Sends the EOF packet that ends a non-blocking dump.
    fn send_eof(&mut self) -> io::Result<()>;
    /// Reads the client's packets on a thread of their own, handing each payload to `sink`
    /// (`None` once the client closed or the stream broke); false when the transport cannot.
    fn read_in_background(&mut self, sink: PacketSink) -> bool;
    /// True once the connection was killed (`KILL`, shutdown).
    fn killed(&self) -> bool;
    /// The thread state SHOW PROCESSLIST shows.
    fn set_state(&mut self, state: &'static str);
}

/// The semi-sync side of the commit path, as a dump sees it (positions are log LSNs: the end
/// of a transaction's record).
pub trait AckSink: Send + Sync {
    /// A semi-sync replica connected; the returned value is held while it stays.
    fn client_added(&self) -> Box<dyn Send>;
    /// Should the last event of the transaction ending at `end_lsn` ask for an ACK.
    fn wants_ack(&self, end_lsn: u64) -> bool;
    /// The replica `server_id` acknowledged everything up to `end_lsn`.
    fn ack(&self, end_lsn: u64, server_id: u32);
}

/// How often a waiting dump looks at KILL, a replaced registration and heartbeats.
pub const DUMP_TICK: Duration = Duration::from_millis(200);
