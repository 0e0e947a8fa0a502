//! The replica connection: its configuration and its threads.
//!
//! Owns [`Replica`]: the `MasterConfig` (persisted in `master.info`), the IO thread, the SQL
//! thread (with its workers, `schedule.rs`), the relay queue between them and the shared
//! status. START / STOP / RESET SLAVE and CHANGE MASTER go through it; SHOW SLAVE STATUS reads
//! it. MariaDB 10.11's rules: CHANGE MASTER and RESET SLAVE need both threads stopped (1198);
//! START SLAVE of a running thread is a note (1254), not an error; START SLAVE UNTIL needs both
//! threads stopped and GTID mode (1949).
//!
//! Threads: "replica io" runs `io::run`, "replica sql" runs `schedule::run_sql_thread` (which
//! starts the "replica worker N" threads). There is no relay log: the queue between them is
//! in memory, so whenever it may not follow on from what was applied (the SQL thread was
//! stopped, the SQL thread left groups it took unapplied) it is cleared and the IO thread
//! refetches from `gtid_slave_pos` (GTID mode) or from the last applied position (file mode),
//! as a MariaDB GTID replica does when it purges its relay logs (MDEV-4698).
//!
//! Invariants: at most one IO thread and one SQL thread run; `stop` returns only after the
//! threads it stops have ended (a stopped SQL thread has no group half committed: a group is
//! either committed with its GTID or not at all); the SQL thread never starts on a queue with
//! a gap behind what was applied.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;

use onelog_binlog::GtidPos;

use super::config::{ChangeMaster, ConfigError, MasterConfig, StartPosition, UseGtid};
use super::io::{self, IoContext};
use super::relay::RelayQueue;
use super::schedule::{run_sql_thread, SqlContext, SqlEnd};
use super::status::{IoRunning, ReplicaStatus, StatusSnapshot};
use super::ReplicaHost;

/// Which threads START / STOP SLAVE name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Threads {
    Both,
    Io,
    Sql,
}

impl Threads {
    fn io(self) -> bool {
        self != Threads::Sql
    }

    fn sql(self) -> bool {
        self != Threads::Io
    }
}

/// ER_SLAVE_WAS_RUNNING (a note for START SLAVE of running threads).
pub const NOTE_SLAVE_WAS_RUNNING: &str = "Slave is already running";
/// ER_SLAVE_WAS_NOT_RUNNING (1255, a note for STOP SLAVE of stopped threads).
pub const NOTE_SLAVE_WAS_NOT_RUNNING: &str = "Slave already has been stopped";

fn err(code: u16, message: impl Into<String>) -> ConfigError {
    ConfigError {
        code,
        message: message.into(),
    }
}

/// 1198 ER_SLAVE_MUST_STOP for the default connection ('').
fn must_stop() -> ConfigError {
    err(
        1198,
        "This operation cannot be performed as you have a running slave ''; run STOP SLAVE '' \
         first",
    )
}

/// One running thread: its stop flag and handle.
struct Running<T> {
    stop: Arc<AtomicBool>,
    handle: JoinHandle<T>,
}

impl<T> Running<T> {
    fn spawn(name: &str, f: impl FnOnce(Arc<AtomicBool>) -> T + Send + 'static) -> Option<Self>
    where
        T: Send + 'static,
    {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || f(flag))
            .ok()?;
        Some(Running { stop, handle })
    }
}

/// The threads of the connection.
#[derive(Default)]
struct ThreadSet {
    io: Option<Running<()>>,
    sql: Option<Running<SqlEnd>>,
    /// The last SQL thread left groups it took from the queue unapplied: the queue does not
    /// follow on from `gtid_slave_pos` any more and must be refilled by a fresh IO thread.
    refetch: bool,
}

/// The replica connection (module docs).
pub struct Replica {
    datadir: PathBuf,
    host: Arc<dyn ReplicaHost>,
    config: Mutex<MasterConfig>,
    status: Arc<ReplicaStatus>,
    queue: Arc<RelayQueue>,
    /// Held for the whole of START / STOP / RESET / CHANGE MASTER, so they run one at a time.
    threads: Mutex<ThreadSet>,
}

impl Replica {
    /// Loads `master.info` from `datadir` (a replica that was never configured has none).
    pub fn open(datadir: &Path, host: Arc<dyn ReplicaHost>) -> Result<Replica, String> {
        let config = MasterConfig::load(datadir)?.unwrap_or_default();
        Ok(Replica {
            datadir: datadir.to_path_buf(),
            host,
            config: Mutex::new(config),
            status: Arc::new(ReplicaStatus::new()),
            queue: Arc::new(RelayQueue::new(16 << 20)),
            threads: Mutex::new(ThreadSet::default()),
        })
    }

    /// The configuration (SHOW SLAVE STATUS's configuration columns).
    pub fn config(&self) -> MasterConfig {
        self.config
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// True once CHANGE MASTER gave a host.
    pub fn is_configured(&self) -> bool {
        !self.config().host.is_empty()
    }

    /// The thread set with the threads that ended by themselves joined.
    fn threads(&self) -> MutexGuard<'_, ThreadSet> {
        let mut t = self.threads.lock().unwrap_or_else(|p| p.into_inner());
        if t.io.as_ref().is_some_and(|r| r.handle.is_finished()) {
            if let Some(r) = t.io.take() {
                let _ = r.handle.join();
            }
        }
        if t.sql.as_ref().is_some_and(|r| r.handle.is_finished()) {
            if let Some(r) = t.sql.take() {
                Self::reap_sql(&mut t, r);
            }
        }
        t
    }

    /// Joins an ended (or stopping) SQL thread and remembers whether it dropped groups.
    fn reap_sql(t: &mut ThreadSet, r: Running<SqlEnd>) {
        match r.handle.join() {
            Ok(end) => t.refetch |= end.dropped,
            Err(_) => t.refetch = true,
        }
    }

    /// CHANGE MASTER TO: 1198 while a thread runs; the merge rules are `MasterConfig::change`;
    /// the result is saved to `master.info` before this returns. Returns MariaDB's warnings.
    /// Clears the errors of both threads (as MariaDB) and the groups queued from the old
    /// configuration.
    pub fn change_master(&self, cm: &ChangeMaster) -> Result<Vec<String>, ConfigError> {
        let t = self.threads();
        if t.io.is_some() || t.sql.is_some() {
            return Err(must_stop());
        }
        let mut c = self.config.lock().unwrap_or_else(|p| p.into_inner());
        let mut next = c.clone();
        let warnings = next.change(cm, self.host.settings().slave_net_timeout)?;
        next.save(&self.datadir).map_err(|e| ConfigError {
            code: 1201,
            message: format!("Could not initialize master info structure for ''; {e}"),
        })?;
        // A new primary or a new file position: the old positions no longer apply (a change
        // of MASTER_USE_GTID alone keeps them: file mode goes on from where GTID mode got).
        let moved =
            cm.host.is_some() || cm.port.is_some() || cm.log_file.is_some() || cm.log_pos.is_some();
        let (file, pos) = (next.log_file.clone(), next.log_pos);
        *c = next;
        self.queue.clear();
        self.status.update(|s| {
            s.last_io_errno = 0;
            s.last_io_error.clear();
            s.last_sql_errno = 0;
            s.last_sql_error.clear();
            if moved {
                s.master_log_file.clone_from(&file);
                s.read_master_log_pos = pos;
                s.exec_master_log_file = file;
                s.exec_master_log_pos = pos;
                s.gtid_io_pos = GtidPos::new();
            }
        });
        Ok(warnings)
    }

    /// START SLAVE [threads] [UNTIL master_gtid_pos = until]. Returns notes (1254 for a
    /// thread already running).
    ///
    /// Errors as MariaDB's: 1200 when the IO thread is to start and MASTER_HOST is empty;
    /// with UNTIL, 1277 for a thread option, 1254 when a thread runs, 1949 without GTID.
    /// Where the IO thread starts: in GTID mode from `gtid_slave_pos` (Slave_Pos) or
    /// `gtid_current_pos` (Current_Pos) after clearing the queue, unless the SQL thread keeps
    /// running on the queue (then from `Gtid_IO_Pos`); in file mode from where the SQL thread
    /// got to (or `MASTER_LOG_FILE`/`MASTER_LOG_POS` before anything ran).
    pub fn start(
        &self,
        threads: Threads,
        until: Option<GtidPos>,
    ) -> Result<Vec<String>, ConfigError> {
        let mut t = self.threads();
        let mut start_io = threads.io() && t.io.is_none();
        let start_sql = threads.sql() && t.sql.is_none();
        if !start_io && !start_sql {
            return Ok(vec![NOTE_SLAVE_WAS_RUNNING.into()]);
        }
        let config = self.config();
        if start_io && config.host.is_empty() {
            return Err(err(
                1200,
                "Misconfigured slave: MASTER_HOST was not set; Fix in config file or with \
                 CHANGE MASTER TO",
            ));
        }
        if until.is_some() {
            if threads != Threads::Both {
                return Err(err(
                    1277,
                    "Incorrect parameter or combination of parameters for START SLAVE UNTIL",
                ));
            }
            if !(start_io && start_sql) {
                return Err(err(1254, NOTE_SLAVE_WAS_RUNNING));
            }
            if config.use_gtid == UseGtid::No {
                return Err(err(
                    1949,
                    "START SLAVE UNTIL master_gtid_pos requires that slave is using GTID",
                ));
            }
        }
        // A SQL thread that dropped groups needs the queue refilled: restart a running IO
        // thread so that it refetches from gtid_slave_pos.
        if start_sql && t.refetch && t.io.is_some() && !config.host.is_empty() {
            self.stop_io(&mut t);
            start_io = true;
        }
        let sql_keeps_queue = t.sql.is_some();
        if !sql_keeps_queue && (start_io || t.refetch) {
            self.clear_queue(&config);
            t.refetch = false;
        }
        self.queue.reopen();
        if start_sql {
            self.spawn_sql(&mut t, until.clone())?;
        }
        if start_io {
            let start = self.start_position(&config, sql_keeps_queue);
            self.spawn_io(&mut t, config, start, until)?;
        }
        Ok(Vec::new())
    }

    /// Drops the queued groups; the IO thread's position goes back to what was applied, so
    /// that an IO thread started later while the SQL thread runs refetches them.
    fn clear_queue(&self, config: &MasterConfig) {
        self.queue.clear();
        let applied = match config.use_gtid {
            UseGtid::CurrentPos => self.host.gtid_current_pos(),
            _ => self.host.gtid_slave_pos(),
        };
        self.status.update(|s| {
            s.gtid_io_pos = applied;
            if !s.exec_master_log_file.is_empty() {
                s.master_log_file.clone_from(&s.exec_master_log_file);
                s.read_master_log_pos = s.exec_master_log_pos;
            }
        });
    }

    /// Where a starting IO thread begins (see [`Self::start`]).
    fn start_position(&self, config: &MasterConfig, sql_keeps_queue: bool) -> StartPosition {
        let s = self.status.snapshot();
        match config.use_gtid {
            UseGtid::No if sql_keeps_queue && !s.master_log_file.is_empty() => {
                StartPosition::File {
                    name: s.master_log_file,
                    pos: s.read_master_log_pos,
                }
            }
            UseGtid::No if !s.exec_master_log_file.is_empty() => StartPosition::File {
                name: s.exec_master_log_file,
                pos: s.exec_master_log_pos,
            },
            UseGtid::No => StartPosition::File {
                name: config.log_file.clone(),
                pos: config.log_pos,
            },
            _ if sql_keeps_queue && !s.gtid_io_pos.is_empty() => StartPosition::Gtid(s.gtid_io_pos),
            UseGtid::SlavePos => StartPosition::Gtid(self.host.gtid_slave_pos()),
            UseGtid::CurrentPos => StartPosition::Gtid(self.host.gtid_current_pos()),
        }
    }

    fn spawn_sql(&self, t: &mut ThreadSet, until: Option<GtidPos>) -> Result<(), ConfigError> {
        self.status.update(|s| {
            s.sql_running = true;
            s.last_sql_errno = 0;
            s.last_sql_error.clear();
            s.until_gtid.clone_from(&until);
        });
        let (host, status, queue) = (self.host.clone(), self.status.clone(), self.queue.clone());
        let running = Running::spawn("replica sql", move |stop| {
            run_sql_thread(SqlContext {
                host,
                status,
                queue,
                stop,
                until,
            })
        });
        match running {
            Some(r) => {
                t.sql = Some(r);
                Ok(())
            }
            None => {
                self.status.update(|s| {
                    s.sql_running = false;
                    s.until_gtid = None;
                });
                Err(thread_error())
            }
        }
    }

    fn spawn_io(
        &self,
        t: &mut ThreadSet,
        config: MasterConfig,
        start: StartPosition,
        until: Option<GtidPos>,
    ) -> Result<(), ConfigError> {
        self.status.update(|s| {
            s.io_running = IoRunning::Connecting;
            s.last_io_errno = 0;
            s.last_io_error.clear();
        });
        let (host, status, queue) = (self.host.clone(), self.status.clone(), self.queue.clone());
        let running = Running::spawn("replica io", move |stop| {
            io::run(IoContext {
                config,
                start,
                until,
                host,
                status,
                queue,
                stop,
            })
        });
        match running {
            Some(r) => {
                t.io = Some(r);
                Ok(())
            }
            None => {
                self.status.update(|s| s.io_running = IoRunning::No);
                Err(thread_error())
            }
        }
    }

    /// Stops the IO thread: its flag, then the queue closed so that a blocked push gives up;
    /// the queue is open again when this returns.
    fn stop_io(&self, t: &mut ThreadSet) {
        if let Some(r) = t.io.take() {
            r.stop.store(true, Ordering::Relaxed);
            self.queue.close();
            let _ = r.handle.join();
            self.queue.reopen();
        }
        self.status.update(|s| {
            s.io_running = IoRunning::No;
            s.io_state.clear();
        });
    }

    /// STOP SLAVE [threads]: returns once the stopped threads ended.
    pub fn stop(&self, threads: Threads) -> Result<Vec<String>, ConfigError> {
        let mut t = self.threads();
        let stop_io = threads.io() && t.io.is_some();
        let stop_sql = threads.sql() && t.sql.is_some();
        if !stop_io && !stop_sql {
            return Ok(vec![NOTE_SLAVE_WAS_NOT_RUNNING.into()]);
        }
        // Both flags first, so that the threads wind down together.
        if let (true, Some(r)) = (stop_sql, t.sql.as_ref()) {
            r.stop.store(true, Ordering::Relaxed);
        }
        if stop_io {
            self.stop_io(&mut t);
        }
        if stop_sql {
            if let Some(r) = t.sql.take() {
                Self::reap_sql(&mut t, r);
            }
        }
        Ok(Vec::new())
    }

    /// RESET SLAVE [ALL] (1198 while a thread runs). Forgets the positions, the errors, the
    /// counters and the queued groups; ALL also forgets the configuration (`master.info` is
    /// removed), otherwise host, port, user, password and connect retry stay and the rest
    /// goes back to its default (MariaDB's `clear_in_memory_info`).
    pub fn reset(&self, all: bool) -> Result<(), ConfigError> {
        let mut t = self.threads();
        if t.io.is_some() || t.sql.is_some() {
            return Err(must_stop());
        }
        let mut c = self.config.lock().unwrap_or_else(|p| p.into_inner());
        let next = if all {
            MasterConfig::remove(&self.datadir).map_err(|e| {
                err(
                    1201,
                    format!("Could not initialize master info structure for ''; {e}"),
                )
            })?;
            MasterConfig::default()
        } else {
            let d = MasterConfig::default();
            let next = MasterConfig {
                heartbeat_period: self.host.settings().slave_net_timeout as f64 / 2.0,
                use_gtid: d.use_gtid,
                log_file: d.log_file,
                log_pos: d.log_pos,
                ..c.clone()
            };
            next.save(&self.datadir).map_err(|e| {
                err(
                    1201,
                    format!("Could not initialize master info structure for ''; {e}"),
                )
            })?;
            next
        };
        *c = next;
        self.queue.clear();
        t.refetch = false;
        self.status.update(|s| *s = StatusSnapshot::default());
        Ok(())
    }

    /// True while the IO or the SQL thread runs.
    pub fn any_running(&self) -> bool {
        let t = self.threads();
        t.io.is_some() || t.sql.is_some()
    }

    /// The status (SHOW SLAVE STATUS).
    pub fn status(&self) -> StatusSnapshot {
        self.status.snapshot()
    }

    /// `Seconds_Behind_Master` now.
    pub fn seconds_behind_master(&self) -> Option<u64> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        self.status.seconds_behind_master(now)
    }

    /// Server shutdown: stops both threads.
    pub fn shutdown(&self) {
        let _ = self.stop(Threads::Both);
    }
}

/// ER_SLAVE_THREAD (1202).
fn thread_error() -> ConfigError {
    err(
        1202,
        "Could not create slave thread; check system resources",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replica::schedule::CommitOrder;
    use crate::replica::{ApplyError, GroupApplier, RelayGroup, ReplicaSettings};

    struct Host;

    struct NoApply;

    impl GroupApplier for NoApply {
        fn apply(&mut self, _: &RelayGroup, order: &CommitOrder) -> Result<(), ApplyError> {
            order.queued();
            Ok(())
        }
    }

    impl ReplicaHost for Host {
        fn server_id(&self) -> u32 {
            2
        }
        fn gtid_slave_pos(&self) -> GtidPos {
            "0-1-5".parse().unwrap()
        }
        fn gtid_current_pos(&self) -> GtidPos {
            "0-1-5".parse().unwrap()
        }
        fn gtid_strict_mode(&self) -> bool {
            false
        }
        fn settings(&self) -> ReplicaSettings {
            ReplicaSettings {
                slave_parallel_threads: 2,
                ..ReplicaSettings::default()
            }
        }
        fn applier(&self) -> Box<dyn GroupApplier> {
            Box::new(NoApply)
        }
    }

    fn replica(name: &str) -> (Replica, PathBuf) {
        let dir = std::env::temp_dir().join(format!("onelog-ctl-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        (Replica::open(&dir, Arc::new(Host)).unwrap(), dir)
    }

    fn configure(r: &Replica) {
        // A file position switches Using_Gtid to No (note 4190); MASTER_USE_GTID alone then
        // keeps the positions (MariaDB's rules, config.rs).
        let cm = ChangeMaster {
            host: Some("127.0.0.1".into()),
            port: Some(3307),
            user: Some("repl".into()),
            password: Some("pw".into()),
            log_file: Some("mb.000002".into()),
            log_pos: Some(100),
            ..ChangeMaster::default()
        };
        r.change_master(&cm).unwrap();
        let cm = ChangeMaster {
            use_gtid: Some(UseGtid::CurrentPos),
            ..ChangeMaster::default()
        };
        r.change_master(&cm).unwrap();
    }

    #[test]
    fn the_replica_is_shared_between_sessions() {
        fn shared<T: Send + Sync>() {}
        shared::<Replica>();
    }

    #[test]
    fn start_needs_a_host_for_the_io_thread() {
        let (r, dir) = replica("nohost");
        let e = r.start(Threads::Both, None).unwrap_err();
        assert_eq!(e.code, 1200);
        assert!(e
            .message
            .starts_with("Misconfigured slave: MASTER_HOST was not set"));
        let e = r.start(Threads::Io, None).unwrap_err();
        assert_eq!(e.code, 1200);
        assert!(!r.any_running());
        // The SQL thread alone runs without a host, as in MariaDB.
        assert_eq!(r.start(Threads::Sql, None).unwrap(), Vec::<String>::new());
        assert!(r.status().sql_running);
        assert_eq!(r.stop(Threads::Both).unwrap(), Vec::<String>::new());
        assert!(!r.any_running());
        assert!(!r.status().sql_running);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn start_and_stop_of_running_or_stopped_threads_are_notes() {
        let (r, dir) = replica("notes");
        configure(&r);
        assert_eq!(
            r.stop(Threads::Both).unwrap(),
            vec![NOTE_SLAVE_WAS_NOT_RUNNING.to_string()]
        );
        assert!(r.start(Threads::Sql, None).unwrap().is_empty());
        assert_eq!(
            r.start(Threads::Sql, None).unwrap(),
            vec![NOTE_SLAVE_WAS_RUNNING.to_string()]
        );
        // UNTIL needs both threads stopped.
        let until: GtidPos = "0-1-9".parse().unwrap();
        assert_eq!(
            r.start(Threads::Both, Some(until.clone()))
                .unwrap_err()
                .code,
            1254
        );
        assert_eq!(r.stop(Threads::Sql).unwrap(), Vec::<String>::new());
        assert_eq!(
            r.stop(Threads::Sql).unwrap(),
            vec![NOTE_SLAVE_WAS_NOT_RUNNING.to_string()]
        );
        assert_eq!(
            r.start(Threads::Sql, Some(until.clone())).unwrap_err().code,
            1277
        );
        let no_gtid = ChangeMaster {
            use_gtid: Some(UseGtid::No),
            ..ChangeMaster::default()
        };
        r.change_master(&no_gtid).unwrap();
        let e = r.start(Threads::Both, Some(until)).unwrap_err();
        assert_eq!(e.code, 1949);
        assert_eq!(
            e.message,
            "START SLAVE UNTIL master_gtid_pos requires that slave is using GTID"
        );
        assert!(!r.any_running());
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn change_and_reset_need_stopped_threads() {
        let (r, dir) = replica("running");
        configure(&r);
        r.start(Threads::Sql, None).unwrap();
        let e = r.reset(false).unwrap_err();
        assert_eq!(e.code, 1198);
        assert_eq!(
            e.message,
            "This operation cannot be performed as you have a running slave ''; run STOP SLAVE \
             '' first"
        );
        assert_eq!(r.reset(true).unwrap_err().code, 1198);
        assert_eq!(
            r.change_master(&ChangeMaster::default()).unwrap_err().code,
            1198
        );
        r.stop(Threads::Both).unwrap();
        r.change_master(&ChangeMaster::default()).unwrap();
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn reset_keeps_the_connection_and_reset_all_forgets_it() {
        let (r, dir) = replica("reset");
        configure(&r);
        r.status.update(|s| {
            s.last_sql_errno = 1062;
            s.exec_master_log_pos = 900;
            s.retried_transactions = 3;
        });
        r.reset(false).unwrap();
        let c = r.config();
        assert_eq!(
            (
                c.host.as_str(),
                c.port,
                c.user.as_str(),
                c.password.as_str()
            ),
            ("127.0.0.1", 3307, "repl", "pw")
        );
        assert_eq!(c.use_gtid, UseGtid::SlavePos);
        assert_eq!((c.log_file.as_str(), c.log_pos), ("", 4));
        assert_eq!(r.status(), StatusSnapshot::default());
        r.reset(true).unwrap();
        assert_eq!(r.config(), MasterConfig::default());
        assert!(!r.is_configured());
        assert!(!MasterConfig::path(&dir).exists());
        assert_eq!(r.start(Threads::Both, None).unwrap_err().code, 1200);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn until_already_reached_ends_the_sql_thread_and_clears_the_condition() {
        let (r, dir) = replica("until");
        configure(&r);
        r.start(Threads::Both, Some("0-1-3".parse().unwrap()))
            .unwrap();
        for _ in 0..500 {
            if !r.status().sql_running {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let s = r.status();
        assert!(!s.sql_running);
        assert_eq!(s.until_gtid, None);
        assert_eq!(s.last_sql_errno, 0);
        // The IO thread (no primary listens on the test's port) is still connecting: it ends
        // on STOP SLAVE.
        r.stop(Threads::Both).unwrap();
        assert!(!r.any_running());
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn file_mode_starts_where_the_sql_thread_got() {
        let (r, dir) = replica("file");
        configure(&r);
        let c = r.config();
        assert_eq!(
            r.start_position(&c, false),
            StartPosition::Gtid("0-1-5".parse().unwrap())
        );
        let no_gtid = ChangeMaster {
            use_gtid: Some(UseGtid::No),
            ..ChangeMaster::default()
        };
        r.change_master(&no_gtid).unwrap();
        let c = r.config();
        let s = r.status();
        assert_eq!(
            (s.exec_master_log_file.as_str(), s.exec_master_log_pos),
            ("mb.000002", 100)
        );
        r.status.update(|s| {
            s.exec_master_log_pos = 700;
            s.master_log_file = "mb.000003".into();
            s.read_master_log_pos = 300;
        });
        let at = |name: &str, pos| StartPosition::File {
            name: name.into(),
            pos,
        };
        assert_eq!(r.start_position(&c, false), at("mb.000002", 700));
        assert_eq!(r.start_position(&c, true), at("mb.000003", 300));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn start_clears_the_errors_and_the_io_thread_gets_its_position() {
        let (r, dir) = replica("position");
        configure(&r);
        r.status.update(|s| {
            s.last_sql_errno = 1062;
            s.last_sql_error = "Duplicate entry".into();
        });
        r.start(Threads::Both, None).unwrap();
        let s = r.status();
        assert_eq!((s.last_sql_errno, s.last_sql_error.as_str()), (0, ""));
        // The queue was refilled from Current_Pos: the IO position restarts there.
        assert_eq!(s.gtid_io_pos.to_string(), "0-1-5");
        r.stop(Threads::Both).unwrap();
        assert!(!r.any_running());
        r.shutdown();
        let _ = std::fs::remove_dir_all(dir);
    }
}
