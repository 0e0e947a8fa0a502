//! `onelog serve`: the server's life from options to exit.
//!
//! Order (each step only after the previous one succeeded):
//! 1. block SIGTERM/SIGINT (before any thread exists, see `signals.rs`);
//! 2. set the umask to 077 (directories 0700, files 0600), create the data directory and take
//!    its lock (`datadir.rs`): a second server on the same directory stops here, before
//!    touching the log; tighten the modes of an existing data directory that are looser
//!    (logged as a warning);
//! 3. open the SQL server, which opens and recovers the engine; log the recovery report (the
//!    segment and offset the log continues at, `gtid_binlog_pos`; in `--binlog-storage=file`
//!    mode also the two-phase commit's outcome: in-doubt groups committed because the binlog
//!    files hold them, groups rolled back, binlog files ahead of the engine log);
//!    with `--binlog-file-mirror=ON`, start the mirror (it catches up with the log before
//!    the server listens) and log its report;
//! 4. refuse a non-loopback `--bind-address` while root@localhost logs in with an empty
//!    password (the default unix_socket-only root cannot log in over TCP, so it is allowed);
//! 5. start the listeners (TCP and unix socket) and print mariadbd's ready banner;
//! 6. wait for SIGTERM, SIGINT or the SHUTDOWN statement; then stop the listeners and
//!    connections (waiting at most `CONNECTIONS_GRACE` for running statements, and whatever
//!    happened to the socket file or the data directory meanwhile), shut the server down (final
//!    checkpoint, so the next start replays nothing; then the mirror catches up and closes its
//!    files) and exit 0. A failed final checkpoint exits 1 with its reason: the log is intact,
//!    so the next start replays it and loses nothing.
//!
//! While serving, the engine's events (a failed background checkpoint, its recovery, a log
//! that failed and refuses writes) are written to the log as they happen.
//!
//! `--binlog-file-mirror=ON` with `--binlog-storage=file` is refused before anything is opened.
//!
//! Every failure is one log line naming what failed and the process exits 1.
//!
//! Invariants: the steps run in the order listed, each only after the previous succeeded; the
//! data directory's lock is held from step 2 until the process exits; the server listens only
//! after recovery (and the mirror's catch-up) finished, and the server is shut down (engine,
//! log, mirror) before the process exits.

use std::net::{IpAddr, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use onelog_engine::TableStore;
use onelog_log::{MirrorReport, OpenReport};
use onelog_server::sql_backend::SqlBackend;
use onelog_server::{ListenerConfig, ServerHandle};
use onelog_sql::{BinlogStorageMode, EngineEvent, Server, ServerConfig, Severity};

use crate::cli::{ServeOptions, SERVER_VERSION};
use crate::datadir::{self, DataDirLock};
use crate::logging::{error, note, warning};
use crate::signals::TerminationSignals;

/// How often the shutdown flag (the connection registry's, set by the SHUTDOWN statement and
/// COM_SHUTDOWN) is looked at.
const SHUTDOWN_POLL: Duration = Duration::from_millis(100);

/// How long a shutdown waits for connections to finish the statement they run before it
/// goes on without them (the process exit ends them; their open transactions are never
/// committed, and a commit they try after the engine shut down fails with 1053).
const CONNECTIONS_GRACE: Duration = Duration::from_secs(5);

/// Why the server stops.
enum Stop {
    Signal(&'static str),
    Statement,
}

/// Runs the server; returns the process exit status.
pub fn run(opts: &ServeOptions) -> i32 {
    match serve(opts) {
        Ok(()) => 0,
        Err(msg) => {
            error(&msg);
            error("Aborting");
            1
        }
    }
}

/// The steps of the module doc, in order.
fn serve(opts: &ServeOptions) -> Result<(), String> {
    // Step 1.
    let signals =
        TerminationSignals::block().map_err(|e| format!("cannot block SIGTERM/SIGINT: {e}"))?;
    for w in &opts.warnings {
        warning(w);
    }
    note(&format!(
        "onelog (server {SERVER_VERSION}) starting as process {}",
        std::process::id()
    ));
    check_binlog_options(opts)?;
    // Step 2.
    let (lock, datadir) = open_datadir(&opts.datadir)?;
    let (signal_tx, stop_rx) = mpsc::channel::<Stop>();
    signals
        .spawn_waiter(move |name| {
            let _ = signal_tx.send(Stop::Signal(name));
        })
        .map_err(|e| format!("cannot start the signal thread: {e}"))?;
    // Step 3.
    let config = server_config(opts, &datadir);
    let server = open_server(&config, opts.skip_slave_start)?;
    // A SIGTERM/SIGINT that arrived during recovery: stop before listening.
    if let Ok(Stop::Signal(name)) = stop_rx.try_recv() {
        note(&format!("received {name} during startup: normal shutdown"));
        return server
            .shutdown()
            .map(|()| note("final checkpoint written; shutdown complete"))
            .map_err(|e| format!("shutdown failed: {e}"));
    }
    // The global variables given as options (the query logs), as SET GLOBAL sets them.
    server.query_logs().set_report(error);
    for (name, value) in &opts.globals {
        if let Err(e) = onelog_sql::sysvar::set_global_option(&server, name, value) {
            shutdown_server(&server);
            return Err(format!(
                "--{}={value}: {}",
                name.replace('_', "-"),
                e.message
            ));
        }
    }
    // Step 4.
    if let Err(msg) = check_bind_address(&config.bind_address, &server) {
        shutdown_server(&server);
        return Err(msg);
    }
    // Step 5.
    let handle = start_listening(&config, &server)?;
    // Step 6.
    let why = wait_for_stop(&stop_rx, &server);
    match why {
        Stop::Signal(name) => note(&format!("received {name}: normal shutdown")),
        Stop::Statement => note("SHUTDOWN statement: normal shutdown"),
    }
    stop_listening(handle);
    let result = server.shutdown();
    drop(lock);
    report_shutdown(&server, result)
}

/// Step 2: the umask, the data directory (created, locked, modes tightened); returns the lock
/// and the directory's canonical path.
fn open_datadir(dir: &Path) -> Result<(DataDirLock, PathBuf), String> {
    datadir::set_private_umask();
    let lock = DataDirLock::acquire(dir).map_err(|e| e.to_string())?;
    for change in datadir::tighten_permissions(dir) {
        warning(&format!(
            "data directory permissions were looser than 0700/0600; tightened {change}"
        ));
    }
    let datadir = std::fs::canonicalize(dir)
        .map_err(|e| format!("cannot resolve the data directory {}: {e}", dir.display()))?;
    note(&format!(
        "data directory {} (locked: {})",
        datadir.display(),
        lock.path().display()
    ));
    Ok((lock, datadir))
}

/// Step 3: opens (and recovers) the SQL server, routes the engine's events to the log, logs the
/// recovery report, starts the mirror when configured.
fn open_server(config: &ServerConfig, skip_slave_start: bool) -> Result<Arc<Server>, String> {
    let datadir = &config.datadir;
    note(&format!(
        "opening the database (durability innodb_flush_log_at_trx_commit={}, max_binlog_size={}, \
         binlog_storage={}{})",
        config.flush_log_at_trx_commit,
        config.max_binlog_size,
        config.binlog_storage.name(),
        match config.binlog_storage {
            BinlogStorageMode::File => format!(", sync_binlog={}", config.sync_binlog),
            BinlogStorageMode::Engine if config.binlog_file_mirror => {
                ", binlog_file_mirror=ON".to_string()
            }
            BinlogStorageMode::Engine => String::new(),
        }
    ));
    let (server, report) = Server::open(config.clone())
        .map_err(|e| format!("cannot open the database in {}: {e}", datadir.display()))?;
    // The engine's events (a failed background checkpoint and its recovery, a log that
    // failed and refuses writes) go to this log as they happen.
    server
        .engine()
        .set_reporter(Arc::new(|ev: &EngineEvent| match ev.severity() {
            Severity::Error => error(&ev.to_string()),
            Severity::Warning => warning(&ev.to_string()),
            Severity::Note => note(&ev.to_string()),
        }));
    // The report names the checkpoint, the records replayed, the segment file and offset the
    // log continues at, and gtid_binlog_pos.
    note(&format!("recovery: {report}"));
    log_recovery(&report.log);
    match server.start_mirror() {
        Ok(Some(m)) => log_mirror(&m, datadir),
        Ok(None) => {}
        Err(e) => {
            shutdown_server(&server);
            return Err(e.to_string());
        }
    }
    match onelog_sql::replica_apply::wire_replica(&server, !skip_slave_start) {
        Ok(Some(what)) => note(&what),
        Ok(None) => {}
        Err(e) => {
            shutdown_server(&server);
            return Err(format!("replication: {e}"));
        }
    }
    Ok(server)
}

/// The log's part of the recovery report: damage cut, and in file mode the two-phase commit's
/// outcome.
fn log_recovery(log: &OpenReport) {
    for cut in &log.damage_cuts {
        warning(&format!(
            "--log-recovery=truncate-damaged: cut {} byte(s) of the log at offset {} of {} \
             (every record from there on is lost): {}",
            cut.bytes,
            cut.offset,
            cut.path.display(),
            cut.reason
        ));
    }
    let Some(b) = &log.binlog else { return };
    note(&format!(
        "binlog files (--binlog-storage=file): {}; two-phase commit recovery: {} in-doubt \
         transaction(s) committed (found in the binlog), {} rolled back (not in the \
         binlog), {} binlog group(s) ahead of the engine log{}",
        if b.binlog_files.is_empty() {
            "(none)".to_string()
        } else {
            b.binlog_files.join(", ")
        },
        b.committed_in_doubt,
        b.rolled_back,
        b.binlog_ahead,
        if b.binlog_torn_bytes > 0 {
            format!(", {} torn binlog bytes cut", b.binlog_torn_bytes)
        } else {
            String::new()
        }
    ));
    if b.rolled_back > 0 {
        warning(&format!(
            "crash recovery rolled back {} prepared transaction(s) the binlog did not hold",
            b.rolled_back
        ));
    }
}

/// The mirror's start report.
fn log_mirror(m: &MirrorReport, datadir: &Path) {
    note(&format!(
        "binlog file mirror: {} in {}{}{}{}",
        if m.files.is_empty() {
            "(no files)".to_string()
        } else {
            m.files.join(", ")
        },
        datadir.display(),
        if m.rebuilt {
            "; rebuilt from the oldest log segment (the files did not match the log)"
        } else {
            ""
        },
        if m.repaired_groups > 0 {
            format!(
                "; {} missing group(s) written from the log",
                m.repaired_groups
            )
        } else {
            String::new()
        },
        if m.torn_bytes > 0 {
            format!("; {} torn bytes cut", m.torn_bytes)
        } else {
            String::new()
        }
    ));
}

/// Step 5: the listeners (the server is shut down when they cannot start), the socket's mode,
/// and mariadbd's ready banner.
fn start_listening(config: &ServerConfig, server: &Arc<Server>) -> Result<ServerHandle, String> {
    let mut listener = ListenerConfig::from(config);
    listener.log_warning = warning;
    let backend = Arc::new(SqlBackend::new(server.clone()));
    let handle = match ServerHandle::start_with(backend, listener) {
        Ok(h) => h,
        Err(e) => {
            shutdown_server(server);
            return Err(format!(
                "cannot listen on {}:{} / {}: {e}",
                config.bind_address,
                config.port,
                config
                    .socket
                    .as_deref()
                    .map_or_else(String::new, |p| p.display().to_string())
            ));
        }
    };
    // The socket is world-connectable as MariaDB's (the umask made it 0700); who may log in
    // through it is decided by authentication (unix_socket checks the peer's uid). Inside the
    // 0700 data directory (the default path) only the server's OS user and root reach it.
    if let Some(p) = handle.socket_path() {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o777));
    }
    let port = handle.local_addr().map_or(config.port, |a| a.port());
    let socket = config
        .socket
        .as_deref()
        .map_or_else(String::new, |p| p.display().to_string());
    // mariadbd's banner, verbatim in shape: scripts and tests wait for it.
    eprintln!(
        "onelog: ready for connections.\nVersion: '{SERVER_VERSION}'  socket: '{socket}'  port: {port}"
    );
    Ok(handle)
}

/// Step 6's wait: a signal, or the SHUTDOWN statement / COM_SHUTDOWN (the connection
/// registry's flag, which the SQL layer and the listener share).
fn wait_for_stop(stop_rx: &mpsc::Receiver<Stop>, server: &Server) -> Stop {
    loop {
        match stop_rx.recv_timeout(SHUTDOWN_POLL) {
            Ok(why) => return why,
            Err(mpsc::RecvTimeoutError::Timeout) if server.shutdown_requested() => {
                return Stop::Statement
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => return Stop::Statement,
        }
    }
}

/// Step 6's last line: the final checkpoint's (and the mirror's) outcome.
fn report_shutdown(
    server: &Server,
    result: Result<(), onelog_sql::SqlError>,
) -> Result<(), String> {
    match result {
        Ok(()) => {
            match server.mirror() {
                Some(m) => note(&format!(
                    "final checkpoint written; binlog file mirror caught up and closed ({} \
                     groups, {} fsyncs); shutdown complete",
                    m.stats().groups,
                    m.stats().fsyncs
                )),
                None => note("final checkpoint written; shutdown complete"),
            }
            Ok(())
        }
        Err(e) => Err(format!(
            "shutdown failed: {e}; every acknowledged commit is in the log, which the next \
             start replays from the last checkpoint"
        )),
    }
}

/// Stops the listeners and waits for the connections to end, at most [`CONNECTIONS_GRACE`]:
/// a statement that does not stop must not keep the process alive after SIGTERM.
fn stop_listening(handle: ServerHandle) {
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let spawned = std::thread::Builder::new()
        .name("listener-stop".to_string())
        .spawn(move || {
            handle.shutdown();
            let _ = done_tx.send(());
        });
    if let Err(e) = spawned {
        // The closure (and the handle in it) was dropped, which shut the listener down here.
        warning(&format!("cannot start the listener-stop thread: {e}"));
        return;
    }
    if done_rx.recv_timeout(CONNECTIONS_GRACE).is_err() {
        warning(&format!(
            "connections still running a statement after {} s: shutting down without them \
             (their uncommitted transactions are rolled back)",
            CONNECTIONS_GRACE.as_secs()
        ));
    }
}

fn shutdown_server(server: &Arc<Server>) {
    if let Err(e) = server.shutdown() {
        error(&format!("shutdown failed: {e}"));
    }
}

/// The SQL layer's configuration for these options (`datadir` already resolved).
pub fn server_config(opts: &ServeOptions, datadir: &Path) -> ServerConfig {
    let socket = match &opts.socket {
        Some(p) => p.clone(),
        None => datadir.join("onelog.sock"),
    };
    ServerConfig {
        datadir: datadir.to_path_buf(),
        port: opts.port,
        bind_address: opts.bind_address.clone(),
        socket: Some(socket),
        server_id: opts.server_id,
        gtid_domain_id: opts.gtid_domain_id,
        flush_log_at_trx_commit: opts.flush_log_at_trx_commit,
        max_binlog_size: opts.max_binlog_size,
        binlog_state_interval: opts.binlog_state_interval,
        binlog_row_metadata: opts.binlog_row_metadata,
        max_connections: opts.max_connections,
        max_allowed_packet: opts.max_allowed_packet,
        max_session_mem_used: opts.max_session_mem_used,
        wait_timeout: opts.wait_timeout,
        checkpoint_interval: opts.checkpoint_interval,
        version: SERVER_VERSION.to_string(),
        binlog_storage: opts.binlog_storage,
        sync_binlog: opts.sync_binlog,
        binlog_file_mirror: opts.binlog_file_mirror,
        log_recovery: opts.log_recovery,
        root_auth: opts.root_auth,
        binlog_expire_logs_seconds: opts.binlog_expire_logs_seconds,
        max_binlog_total_size: opts.max_binlog_total_size,
        binlog_cache_size: opts.binlog_cache_size,
        max_binlog_cache_size: opts.max_binlog_cache_size,
        tmpdir: opts.tmpdir.clone(),
        table_store: if opts.paged_store {
            TableStore::Paged {
                dir: None,
                memory_bytes: opts.innodb_buffer_pool_size.unwrap_or(PAGED_MEMORY_BYTES),
            }
        } else {
            TableStore::Memory
        },
    }
}

/// The paged store's memory budget without `--innodb-buffer-pool-size` (MariaDB's default
/// buffer pool, 128M).
pub(crate) const PAGED_MEMORY_BYTES: u64 = 128 << 20;

/// Refuses option combinations that cannot work, before anything is opened.
pub fn check_binlog_options(opts: &ServeOptions) -> Result<(), String> {
    if opts.binlog_file_mirror && opts.binlog_storage == BinlogStorageMode::File {
        return Err(
            "--binlog-file-mirror=ON cannot be used with --binlog-storage=file: in file \
                    mode the binlog already is classic binlog.NNNNNN files in the datadir \
                    (use --binlog-storage=engine with the mirror, or file mode without it)"
                .to_string(),
        );
    }
    if opts.innodb_buffer_pool_size.is_some() && !opts.paged_store {
        return Err(
            "--innodb-buffer-pool-size sizes the paged table store's memory and needs \
             --table-store=paged: the in-memory store (the default) keeps every row in memory \
             whatever the size"
                .to_string(),
        );
    }
    let expiry = opts.binlog_expire_logs_seconds > 0 || opts.max_binlog_total_size > 0;
    if expiry && opts.binlog_storage == BinlogStorageMode::File {
        return Err(
            "--binlog-expire-logs-seconds / --expire-logs-days / --max-binlog-total-size \
             cannot be used with --binlog-storage=file: the classic binlog files are not \
             purged in file mode (use --binlog-storage=engine)"
                .to_string(),
        );
    }
    Ok(())
}

/// Refuses to listen beyond loopback while root@localhost has no password.
fn check_bind_address(addr: &str, server: &Server) -> Result<(), String> {
    if is_loopback_only(addr) || !server.root_has_no_password() {
        return Ok(());
    }
    Err(format!(
        "refusing to listen on --bind-address={addr}: root has no password. Start on 127.0.0.1, \
         set one (SET PASSWORD FOR root@localhost = PASSWORD('...')), then restart with \
         --bind-address={addr}"
    ))
}

/// True when every address `addr` names is a loopback address (`localhost` included).
pub fn is_loopback_only(addr: &str) -> bool {
    if addr.eq_ignore_ascii_case("localhost") {
        return true;
    }
    if let Ok(ip) = addr.parse::<IpAddr>() {
        return ip.is_loopback();
    }
    // A host name: every address it resolves to must be loopback (none resolved: not safe).
    match (addr, 0u16).to_socket_addrs() {
        Ok(addrs) => {
            let addrs: Vec<_> = addrs.collect();
            !addrs.is_empty() && addrs.iter().all(|a| a.ip().is_loopback())
        }
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mirror_is_refused_in_file_mode() {
        let mut o = ServeOptions {
            binlog_file_mirror: true,
            ..ServeOptions::default()
        };
        assert!(check_binlog_options(&o).is_ok());
        o.binlog_storage = BinlogStorageMode::File;
        let e = check_binlog_options(&o).unwrap_err();
        assert!(e.contains("--binlog-file-mirror") && e.contains("--binlog-storage=file"));
    }

    #[test]
    fn a_buffer_pool_size_needs_the_paged_store() {
        let mut o = ServeOptions {
            innodb_buffer_pool_size: Some(256 << 20),
            ..ServeOptions::default()
        };
        let e = check_binlog_options(&o).unwrap_err();
        assert!(e.contains("--table-store=paged"), "{e}");
        o.paged_store = true;
        assert!(check_binlog_options(&o).is_ok());
        match server_config(&o, std::path::Path::new("/d")).table_store {
            TableStore::Paged { memory_bytes, .. } => assert_eq!(memory_bytes, 256 << 20),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn binlog_expiry_is_refused_in_file_mode() {
        let mut o = ServeOptions {
            binlog_expire_logs_seconds: 60,
            ..ServeOptions::default()
        };
        assert!(check_binlog_options(&o).is_ok());
        o.binlog_storage = BinlogStorageMode::File;
        assert!(check_binlog_options(&o)
            .unwrap_err()
            .contains("not purged in file mode"));
        o.binlog_expire_logs_seconds = 0;
        assert!(check_binlog_options(&o).is_ok());
        o.max_binlog_total_size = 1 << 30;
        assert!(check_binlog_options(&o).is_err());
    }

    #[test]
    fn only_loopback_addresses_count_as_loopback() {
        for a in ["127.0.0.1", "127.1.2.3", "::1", "localhost"] {
            assert!(is_loopback_only(a), "{a}");
        }
        for a in ["0.0.0.0", "::", "10.0.0.1", "*"] {
            assert!(!is_loopback_only(a), "{a}");
        }
    }
}
