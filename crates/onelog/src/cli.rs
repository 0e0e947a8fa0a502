//! The command line: `onelog serve [options]`, `onelog --version`, `onelog --help`.
//!
//! Owns [`parse_args`] and [`ServeOptions`]. Server options use mariadbd's names and syntax so
//! a MariaDB user's habits and my.cnf files carry over: `--name=value` or `--name value`, `_`
//! and `-` interchangeable in names, sizes with `K`/`M`/`G`/`T` suffixes, `--loose-` prefix
//! for options that may be unknown (ignored with a warning), `--defaults-file=PATH` only as
//! the first option (its `[mysqld]`/`[server]`/`[mariadbd]`/`[mariadb]`/`[onelog]` groups are
//! read first, so the command line wins), `--no-defaults` accepted (we read no implicit
//! files anyway). Any other unknown option is an error naming it and where it came from.
//!
//! A small hand parser rather than `clap`: mariadbd's conventions (`_`/`-` equivalence,
//! `loose-`, option files feeding the same parser, size suffixes) are not clap's, and a
//! dozen options do not need a framework.
//!
//! Invariants: every option given is applied or refused with an error naming it and where it
//! came from (command line or option file); only `--loose-` options may be unknown, and those are
//! reported as warnings, never dropped silently.

use onelog_binlog::event::table_map::RowMetadata;
use std::fmt;
use std::path::PathBuf;

use crate::config::{read_defaults_file, ConfigError};

pub use onelog_sql::BinlogStorageMode;
pub use onelog_sql::RootAuth;

/// The server version we advertise (`SELECT @@version`, handshake, Format_description).
pub const SERVER_VERSION: &str = "10.11.9-MariaDB-onelog";

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    Serve(Box<ServeOptions>),
    Help,
    Version,
}

/// Options of `onelog serve` (mariadbd names; defaults in [`ServeOptions::default`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServeOptions {
    /// `--datadir`; created if missing.
    pub datadir: PathBuf,
    /// `--port`; 0 = any free port (the ready line says which).
    pub port: u16,
    /// `--bind-address`.
    pub bind_address: String,
    /// `--socket`; None = `<datadir>/onelog.sock`.
    pub socket: Option<PathBuf>,
    /// `--server-id`.
    pub server_id: u32,
    /// `--gtid-domain-id`.
    pub gtid_domain_id: u32,
    /// `--innodb-flush-log-at-trx-commit` (0, 1 or 2).
    pub flush_log_at_trx_commit: u8,
    /// `--max-binlog-size` in bytes (log segment size).
    pub max_binlog_size: u64,
    /// `--binlog-state-interval` in bytes (GTID state record period).
    pub binlog_state_interval: u64,
    /// `--binlog-row-metadata=NO_LOG|MINIMAL|FULL`: the optional metadata of Table_map events.
    pub binlog_row_metadata: RowMetadata,
    /// `--max-connections`.
    pub max_connections: u32,
    /// `--max-allowed-packet` in bytes.
    pub max_allowed_packet: u32,
    /// `--max-session-mem-used` in bytes: the global default of `max_session_mem_used`.
    pub max_session_mem_used: u64,
    /// `--wait-timeout` in seconds.
    pub wait_timeout: u32,
    /// `--checkpoint-interval` in seconds: a background checkpoint after this long with log
    /// growth (0: only every 64 MiB of log).
    pub checkpoint_interval: u32,
    /// `--binlog-storage=engine|file`: where the binlog lives. `engine` (default): the log is
    /// the binlog; `file`: classic `binlog.NNNNNN` files in the datadir, written with
    /// two-phase commit after the engine log.
    pub binlog_storage: BinlogStorageMode,
    /// `--sync-binlog=N`: file mode syncs the classic binlog every N commit groups (0 =
    /// never, left to the OS); default 1.
    pub sync_binlog: u32,
    /// `--binlog-file-mirror=ON|OFF`: engine mode keeps classic binlog files in the datadir,
    /// written behind the commit path by a background thread.
    pub binlog_file_mirror: bool,
    /// `--skip-slave-start`: a configured replica does not start replicating at startup.
    pub skip_slave_start: bool,
    /// `--log-recovery=strict|truncate-damaged`: what opening the log does with damage a
    /// crash cannot explain (docs/LOG_FORMAT.md, "Torn tail vs corruption").
    pub log_recovery: onelog_log::LogRecovery,
    /// `--auth-root-authentication-method=socket|normal` (mariadb-install-db's option): how the
    /// `root@localhost` created on a new data directory logs in. `socket` (default): only over
    /// the unix socket from the server's OS user or OS root (unix_socket authentication);
    /// `normal`: without a password from any local client (test setups).
    pub root_auth: RootAuth,
    /// `--binlog-expire-logs-seconds=N` (0..=8553600, 99 days), or `--expire-logs-days=D`
    /// (0..=99, fractions allowed) which sets it to `D * 86400` as MariaDB 10.11 does: binlog
    /// segments closed longer ago are purged automatically; 0 (default) = never.
    pub binlog_expire_logs_seconds: u64,
    /// `--max-binlog-total-size=SIZE`: the oldest binlog segments are purged while the binlog
    /// is larger; 0 (default) = unlimited. MariaDB has it from 11.4 on (not in 10.11).
    pub max_binlog_total_size: u64,
    /// `--binlog-cache-size=SIZE`: startup `binlog_cache_size` (rounded down to 4K).
    pub binlog_cache_size: u64,
    /// `--max-binlog-cache-size=SIZE`: startup `max_binlog_cache_size` (rounded down to 4K).
    pub max_binlog_cache_size: u64,
    /// `--tmpdir=PATH`: where transactions' binlog caches spill (default `$TMPDIR`, else /tmp).
    pub tmpdir: Option<PathBuf>,
    /// `--table-store=memory|paged`: where a new data directory keeps its tables
    /// (docs/PAGED_STORE.md); an existing in-memory one is converted to paged, never back.
    pub paged_store: bool,
    /// `--innodb-buffer-pool-size=SIZE`: the paged store's memory budget (block cache and
    /// checkpoint trigger; only with `--table-store=paged`). None: 128M.
    pub innodb_buffer_pool_size: Option<u64>,
    /// The buffer pool size came as `--loose-innodb-buffer-pool-size` (MariaDB option files
    /// carry it): without `--table-store=paged` it is then ignored with a warning, as an
    /// unknown loose option is, instead of refused.
    pub innodb_buffer_pool_size_loose: bool,
    /// Global variables set at startup as `SET GLOBAL` would (the query logs:
    /// `--general-log`, `--general-log-file=`, `--slow-query-log`, `--slow-query-log-file=`,
    /// `--long-query-time=`, `--log-output=`, `--log-warnings=`), in the order given:
    /// (variable name, value).
    pub globals: Vec<(String, String)>,
    /// Messages for the log (ignored `--loose-` options).
    pub warnings: Vec<String>,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            datadir: PathBuf::from("onelog-data"),
            port: 3306,
            bind_address: "127.0.0.1".to_string(),
            socket: None,
            server_id: 1,
            gtid_domain_id: 0,
            flush_log_at_trx_commit: 1,
            max_binlog_size: 1 << 30,
            binlog_state_interval: 2 << 20,
            binlog_row_metadata: RowMetadata::NoLog,
            max_connections: 151,
            max_allowed_packet: 16 << 20,
            max_session_mem_used: onelog_sql::DEFAULT_MAX_SESSION_MEM_USED,
            wait_timeout: 28800,
            checkpoint_interval: 300,
            binlog_storage: BinlogStorageMode::Engine,
            sync_binlog: 1,
            binlog_file_mirror: false,
            skip_slave_start: false,
            log_recovery: onelog_log::LogRecovery::Strict,
            root_auth: RootAuth::Socket,
            binlog_expire_logs_seconds: 0,
            max_binlog_total_size: 0,
            binlog_cache_size: 32768,
            max_binlog_cache_size: 18_446_744_073_709_547_520,
            tmpdir: None,
            paged_store: false,
            innodb_buffer_pool_size: None,
            innodb_buffer_pool_size_loose: false,
            globals: Vec::new(),
            warnings: Vec::new(),
        }
    }
}

/// A command line that cannot be run (exit status 1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CliError {
    Usage(String),
    Config(ConfigError),
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Usage(m) => f.write_str(m),
            CliError::Config(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for CliError {}

/// Help text of `onelog --help`.
pub fn help_text() -> String {
    let d = ServeOptions::default();
    format!(
        "onelog {pkg}: a MariaDB-compatible server whose binlog is its write-ahead log

Usage:
  onelog serve [--defaults-file=PATH] [options]   run the server
  onelog binlog [options] FILE...                 print binlog events (mariadb-binlog)
  onelog backup --target-dir=DIR | --stream       back up a running server (full or
                                                  incremental, as mariadb-backup)
  onelog restore --target-dir=DIR BACKUP...       make a data directory from backups
  onelog check DIR                                verify a data directory or a backup
  onelog --version                                print the version
  onelog --help                                   print this help
  onelog COMMAND --help                           print a command's options

Options of `serve` (mariadbd names; `_` and `-` are interchangeable; `--name=value` or
`--name value`; sizes take K, M, G suffixes; `--loose-NAME` ignores an unknown NAME):
  --defaults-file=PATH   read options from PATH first (must be the first option); groups
                         [mysqld] [server] [mariadbd] [mariadb] [onelog]
  --datadir=DIR          data directory, created if missing (default ./{datadir})
  --port=N               TCP port (default {port}; 0 = any free port)
  --bind-address=ADDR    listen address (default {bind}); beyond loopback only once root
                         has a password
  --socket=PATH          unix socket (default <datadir>/onelog.sock)
  --server-id=N          server id in GTIDs (default {sid})
  --gtid-domain-id=N     GTID domain id (default {dom})
  --innodb-flush-log-at-trx-commit=0|1|2
                         durability: 1 = acknowledged commits are on disk (default {flush}),
                         2 = written to the OS, synced every second, 0 = synced every second
  --max-binlog-size=SIZE log segment size (default 1G)
  --skip-slave-start     a configured replica (CHANGE MASTER, master.info) does not start
                         replicating when the server starts
  --binlog-state-interval=SIZE
                         log bytes between GTID state records (default 2M)
  --binlog-row-metadata=NO_LOG|MINIMAL|FULL
                         optional metadata of Table_map events (default NO_LOG; FULL
                         adds column names and the primary key)
  --binlog-cache-size=SIZE
                         bytes of a transaction's binlog events kept in memory before
                         they spill to a file in --tmpdir (default 32K)
  --max-binlog-cache-size=SIZE
                         most bytes of binlog events a transaction may make; past it the
                         statement fails with 1197 (default 16E, MariaDB's)
  --tmpdir=PATH          where spilled binlog caches go (default $TMPDIR, else /tmp)
  --table-store=memory|paged
                         where a NEW data directory keeps its tables: memory (default):
                         every row in memory, checkpoints as whole files; paged (in
                         development, docs/PAGED_STORE.md): rows changed since the last
                         checkpoint in memory over an on-disk store with a 128M block
                         cache. paged converts an existing in-memory data directory at
                         start (no way back: a paged one is refused without paged)
  --innodb-buffer-pool-size=SIZE
                         with --table-store=paged: its memory budget (default 128M): 3/4
                         for the store's caches (blocks, decoded rows), and a checkpoint
                         after every SIZE/20 of log (4M..64M) so the rows changed since
                         the last one stay in proportion
  --max-connections=N    (default {maxc})
  --max-allowed-packet=SIZE
                         (default 16M)
  --max-session-mem-used=SIZE
                         memory one statement may keep (rows, sort keys, groups) before
                         it fails with 1290 (default 2G; MariaDB's default is unlimited)
  --wait-timeout=SECONDS idle connection timeout (default {wait})
  --general-log[=ON|OFF], --general-log-file=FILE, --slow-query-log[=ON|OFF],
  --slow-query-log-file=FILE, --long-query-time=SECONDS, --log-output=FILE|NONE,
  --log-warnings=N       the query logs and the error log's verbosity, as the global
                         variables of the same names (files relative to the datadir)
  --checkpoint-interval=SECONDS
                         background checkpoint after this long with log growth (default
                         {ckpt}; 0 = only after every 64M of log)
  --binlog-storage=engine|file
                         engine (default): the log is the binlog (one fsync per commit
                         group); file: classic binlog.NNNNNN files in the datadir written
                         after the engine log with two-phase commit (two fsyncs per group)
  --sync-binlog=N        file mode: sync the binlog file every N groups, 0 = never (default 1)
  --binlog-expire-logs-seconds=N
                         purge binlog segments closed more than N seconds ago, as far as
                         the newest checkpoint and connected replicas allow (default 0 =
                         never; at most 8553600); --expire-logs-days=D sets it to D*86400
  --max-binlog-total-size=SIZE
                         purge the oldest binlog segments while the binlog is larger, as
                         far as the checkpoint and replicas allow (default 0 = unlimited)
  --binlog-file-mirror[=ON|OFF]
                         engine mode: also keep classic binlog.NNNNNN files in the datadir,
                         written in the background from the log (default OFF; bare = ON,
                         --skip-binlog-file-mirror = OFF)
  --log-recovery=strict|truncate-damaged
                         strict (default): refuse to start when the log is damaged where a
                         crash cannot explain it; truncate-damaged: cut the log at the
                         damage, losing every commit after it (use once, after a refusal)
  --auth-root-authentication-method=socket|normal
                         how root@localhost logs in on a NEW data directory: socket
                         (default): over the unix socket, from the OS user running the
                         server or OS root, until a password is set; normal: no password
                         from any local client (for test setups only)

Stop the server with SIGTERM, SIGINT (Ctrl-C) or the SHUTDOWN statement.
",
        pkg = env!("CARGO_PKG_VERSION"),
        datadir = d.datadir.display(),
        port = d.port,
        bind = d.bind_address,
        sid = d.server_id,
        dom = d.gtid_domain_id,
        flush = d.flush_log_at_trx_commit,
        maxc = d.max_connections,
        wait = d.wait_timeout,
        ckpt = d.checkpoint_interval,
    )
}

/// Text of `onelog --version`, in mariadbd's shape.
pub fn version_text() -> String {
    format!(
        "onelog  Ver {SERVER_VERSION} for {} on {} (onelog {})",
        std::env::consts::OS,
        std::env::consts::ARCH,
        env!("CARGO_PKG_VERSION")
    )
}

/// Parses the arguments after the program name.
pub fn parse_args(args: &[String]) -> Result<Command, CliError> {
    let Some(first) = args.first() else {
        return Err(CliError::Usage(
            "no command given: try `onelog serve` or `onelog --help`".to_string(),
        ));
    };
    match first.as_str() {
        "--help" | "-?" | "-h" | "help" => return Ok(Command::Help),
        "--version" | "-V" | "version" => return Ok(Command::Version),
        "serve" => {}
        other => {
            return Err(CliError::Usage(format!(
                "unknown command '{other}': try `onelog serve` or `onelog --help`"
            )))
        }
    }
    let rest = &args[1..];
    if rest
        .iter()
        .any(|a| matches!(a.as_str(), "--help" | "-?" | "-h"))
    {
        return Ok(Command::Help);
    }
    if rest
        .iter()
        .any(|a| matches!(a.as_str(), "--version" | "-V"))
    {
        return Ok(Command::Version);
    }
    parse_serve(rest).map(|o| Command::Serve(Box::new(o)))
}

/// Where an argument came from, for error messages.
#[derive(Clone, Copy)]
enum Source<'a> {
    CommandLine,
    File(&'a std::path::Path),
}

impl fmt::Display for Source<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::CommandLine => f.write_str("on the command line"),
            Source::File(p) => write!(f, "in {}", p.display()),
        }
    }
}

fn parse_serve(args: &[String]) -> Result<ServeOptions, CliError> {
    let mut opts = ServeOptions::default();
    let mut args = args;
    let mut defaults_file: Option<PathBuf> = None;
    if let Some(first) = args.first() {
        if let Some(path) = first.strip_prefix("--defaults-file=") {
            if path.is_empty() {
                return Err(CliError::Usage(
                    "--defaults-file needs a path: --defaults-file=PATH".to_string(),
                ));
            }
            defaults_file = Some(PathBuf::from(path));
            args = &args[1..];
        } else if first == "--no-defaults" {
            args = &args[1..];
        }
    }
    if let Some(path) = &defaults_file {
        let file_args = read_defaults_file(path).map_err(CliError::Config)?;
        let mut it = file_args.iter();
        while let Some(arg) = it.next() {
            apply_arg(&mut opts, arg, &mut it, Source::File(path), false)?;
        }
    }
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        apply_arg(&mut opts, arg, &mut it, Source::CommandLine, true)?;
    }
    if opts.innodb_buffer_pool_size_loose && !opts.paged_store {
        opts.innodb_buffer_pool_size = None;
        opts.warnings.push(
            "ignoring '--loose-innodb-buffer-pool-size': it sizes the paged table store \
             (--table-store=paged); the in-memory store keeps every row in memory"
                .to_string(),
        );
    }
    Ok(opts)
}

/// Applies one `--name[=value]` argument; `next_is_value`: a value may be the next argument.
fn apply_arg<'a>(
    opts: &mut ServeOptions,
    arg: &str,
    rest: &mut impl Iterator<Item = &'a String>,
    source: Source<'_>,
    next_is_value: bool,
) -> Result<(), CliError> {
    let Some(body) = arg.strip_prefix("--") else {
        return Err(CliError::Usage(format!(
            "unexpected argument '{arg}' {source}: options are written --name=value"
        )));
    };
    let (raw_name, inline_value) = match body.split_once('=') {
        Some((n, v)) => (n, Some(v.to_string())),
        None => (body, None),
    };
    let mut name = raw_name.trim().replace('_', "-");
    let loose = name.starts_with("loose-");
    if loose {
        name = name["loose-".len()..].to_string();
    }
    if name == "defaults-file" || name == "defaults-extra-file" || name == "no-defaults" {
        return Err(CliError::Usage(format!(
            "--{name} {source} must be the first option (as in mariadbd)"
        )));
    }
    // Boolean options as in mariadbd: a bare `--NAME` is ON, `--skip-NAME` / `--disable-NAME`
    // are OFF (never consuming the next argument).
    let mut inline_value = inline_value;
    if inline_value.is_none() {
        if BOOLEAN.contains(&name.as_str()) {
            inline_value = Some("ON".to_string());
        } else if let Some(base) = name
            .strip_prefix("skip-")
            .or_else(|| name.strip_prefix("disable-"))
            .filter(|b| BOOLEAN.contains(b))
        {
            name = base.to_string();
            inline_value = Some("OFF".to_string());
        }
    }
    if !is_known(&name) {
        if loose {
            opts.warnings
                .push(format!("ignoring unknown option '--loose-{name}' {source}"));
            return Ok(());
        }
        return Err(CliError::Usage(format!(
            "unknown option '--{}' {source} (see `onelog --help`)",
            raw_name.trim()
        )));
    }
    let value = match inline_value {
        Some(v) => v,
        None if next_is_value => match rest.next() {
            Some(v) if !v.starts_with("--") => v.clone(),
            _ => {
                return Err(CliError::Usage(format!(
                    "option '--{name}' {source} needs a value: --{name}=VALUE"
                )))
            }
        },
        None => {
            return Err(CliError::Usage(format!(
                "option '{name}' {source} needs a value: {name}=VALUE"
            )))
        }
    };
    set_option(opts, &name, value.trim()).map_err(|why| {
        CliError::Usage(format!(
            "invalid value '{value}' for --{name} {source}: {why}"
        ))
    })?;
    if name == "innodb-buffer-pool-size" {
        opts.innodb_buffer_pool_size_loose = loose;
    }
    Ok(())
}

const KNOWN: &[&str] = &[
    "datadir",
    "port",
    "bind-address",
    "socket",
    "server-id",
    "gtid-domain-id",
    "innodb-flush-log-at-trx-commit",
    "max-binlog-size",
    "binlog-state-interval",
    "binlog-row-metadata",
    "max-connections",
    "max-allowed-packet",
    "max-session-mem-used",
    "wait-timeout",
    "checkpoint-interval",
    "binlog-storage",
    "sync-binlog",
    "binlog-file-mirror",
    "log-recovery",
    "auth-root-authentication-method",
    "binlog-expire-logs-seconds",
    "expire-logs-days",
    "max-binlog-total-size",
    "skip-slave-start",
    "binlog-cache-size",
    "max-binlog-cache-size",
    "tmpdir",
    "table-store",
    "innodb-buffer-pool-size",
    "general-log",
    "general-log-file",
    "slow-query-log",
    "slow-query-log-file",
    "long-query-time",
    "log-output",
    "log-warnings",
];

/// Options that take ON/OFF and may be given bare (`--NAME`) or as `--skip-NAME`.
const BOOLEAN: &[&str] = &[
    "binlog-file-mirror",
    "skip-slave-start",
    "general-log",
    "slow-query-log",
];

fn is_known(name: &str) -> bool {
    KNOWN.contains(&name)
}

fn set_option(o: &mut ServeOptions, name: &str, v: &str) -> Result<(), String> {
    match name {
        "datadir" => {
            if v.is_empty() {
                return Err("empty path".to_string());
            }
            o.datadir = PathBuf::from(v);
        }
        "port" => o.port = parse_int(v, 0, u16::MAX as u64)? as u16,
        "bind-address" => {
            if v.is_empty() {
                return Err("empty address".to_string());
            }
            o.bind_address = v.to_string();
        }
        "socket" => {
            if v.is_empty() {
                return Err("empty path".to_string());
            }
            o.socket = Some(PathBuf::from(v));
        }
        "server-id" => o.server_id = parse_int(v, 0, u32::MAX as u64)? as u32,
        "gtid-domain-id" => o.gtid_domain_id = parse_int(v, 0, u32::MAX as u64)? as u32,
        "innodb-flush-log-at-trx-commit" => o.flush_log_at_trx_commit = parse_int(v, 0, 2)? as u8,
        "max-binlog-size" => o.max_binlog_size = parse_size(v, 16 << 10, 1 << 30)?,
        "binlog-state-interval" => o.binlog_state_interval = parse_size(v, 4096, 1 << 40)?,
        "binlog-row-metadata" => {
            o.binlog_row_metadata = RowMetadata::from_name(v)
                .ok_or_else(|| "expected NO_LOG, MINIMAL or FULL".to_string())?
        }
        "max-connections" => o.max_connections = parse_int(v, 1, 100_000)? as u32,
        "max-allowed-packet" => o.max_allowed_packet = parse_size(v, 1024, 1 << 30)? as u32,
        "max-session-mem-used" => o.max_session_mem_used = parse_size(v, 8192, i64::MAX as u64)?,
        "wait-timeout" => o.wait_timeout = parse_int(v, 1, 31_536_000)? as u32,
        "checkpoint-interval" => o.checkpoint_interval = parse_int(v, 0, 31_536_000)? as u32,
        "binlog-storage" => {
            o.binlog_storage = match v.to_ascii_lowercase().as_str() {
                "engine" => BinlogStorageMode::Engine,
                "file" => BinlogStorageMode::File,
                _ => return Err("expected engine or file".to_string()),
            }
        }
        "sync-binlog" => o.sync_binlog = parse_int(v, 0, u32::MAX as u64)? as u32,
        "binlog-file-mirror" => o.binlog_file_mirror = parse_bool(v)?,
        "skip-slave-start" => o.skip_slave_start = parse_bool(v)?,
        "log-recovery" => {
            o.log_recovery = match v.to_ascii_lowercase().as_str() {
                "strict" => onelog_log::LogRecovery::Strict,
                "truncate-damaged" => onelog_log::LogRecovery::TruncateDamaged,
                _ => return Err("expected strict or truncate-damaged".to_string()),
            }
        }
        "auth-root-authentication-method" => {
            o.root_auth = match v.to_ascii_lowercase().as_str() {
                "socket" => RootAuth::Socket,
                "normal" => RootAuth::Normal,
                _ => return Err("expected socket or normal".to_string()),
            }
        }
        "binlog-expire-logs-seconds" => {
            o.binlog_expire_logs_seconds = parse_int(v, 0, MAX_EXPIRE_LOGS_SECONDS)?
        }
        "expire-logs-days" => o.binlog_expire_logs_seconds = parse_days(v)?,
        "max-binlog-total-size" => o.max_binlog_total_size = parse_size(v, 0, u64::MAX)?,
        // MariaDB's range and 4096-byte blocks (rounded down, as `SET GLOBAL` does).
        "binlog-cache-size" => o.binlog_cache_size = parse_size(v, 4096, u64::MAX)? & !4095,
        "max-binlog-cache-size" => o.max_binlog_cache_size = parse_size(v, 4096, u64::MAX)? & !4095,
        "tmpdir" => {
            if v.is_empty() {
                return Err("empty path".to_string());
            }
            o.tmpdir = Some(PathBuf::from(v));
        }
        "innodb-buffer-pool-size" => {
            o.innodb_buffer_pool_size = Some(parse_buffer_pool_size(v)?);
            o.innodb_buffer_pool_size_loose = false;
        }
        "table-store" => o.paged_store = parse_table_store(v)?,
        // Global variables, checked and applied by the server as SET GLOBAL.
        "general-log" | "slow-query-log" => o
            .globals
            .push((name.replace('-', "_"), u8::from(parse_bool(v)?).to_string())),
        "general-log-file"
        | "slow-query-log-file"
        | "long-query-time"
        | "log-output"
        | "log-warnings" => o.globals.push((name.replace('-', "_"), v.to_string())),
        _ => return Err("unknown option".to_string()),
    }
    Ok(())
}

/// `binlog_expire_logs_seconds`' maximum: 99 days (MariaDB 10.11).
const MAX_EXPIRE_LOGS_SECONDS: u64 = 99 * 86_400;

/// `--expire-logs-days=D` (0..=99, a fraction allowed) as seconds, truncated (MariaDB 10.11).
fn parse_days(v: &str) -> Result<u64, String> {
    let d: f64 = v
        .parse()
        .ok()
        .filter(|d: &f64| d.is_finite())
        .ok_or_else(|| "not a number of days".to_string())?;
    if !(0.0..=99.0).contains(&d) {
        return Err("out of range (0..=99)".to_string());
    }
    Ok((d * 86_400.0) as u64)
}

/// mariadbd's boolean option values: ON/OFF, TRUE/FALSE, YES/NO, 1/0 (any case).
fn parse_bool(v: &str) -> Result<bool, String> {
    match v.to_ascii_uppercase().as_str() {
        "ON" | "TRUE" | "YES" | "1" => Ok(true),
        "OFF" | "FALSE" | "NO" | "0" => Ok(false),
        _ => Err("expected ON or OFF (or 1/0)".to_string()),
    }
}

fn parse_int(v: &str, min: u64, max: u64) -> Result<u64, String> {
    let n: u64 = v
        .parse()
        .map_err(|_| "not a non-negative integer".to_string())?;
    check_range(n, min, max)
}

/// `--table-store`: whether it names the paged store (`memory` or `paged`, any case).
pub fn parse_table_store(v: &str) -> Result<bool, String> {
    match v.to_ascii_lowercase().as_str() {
        "memory" => Ok(false),
        "paged" => Ok(true),
        _ => Err("expected memory or paged".to_string()),
    }
}

/// `--innodb-buffer-pool-size`: the paged store's memory budget, 8M to 1P.
pub fn parse_buffer_pool_size(v: &str) -> Result<u64, String> {
    parse_size(v, 8 << 20, 1 << 50)
}

/// A byte size: digits with an optional K, M, G or T suffix (powers of 1024, either case).
pub fn parse_size(v: &str, min: u64, max: u64) -> Result<u64, String> {
    let (digits, shift) = match v.as_bytes().last().map(u8::to_ascii_uppercase) {
        Some(b'K') => (&v[..v.len() - 1], 10),
        Some(b'M') => (&v[..v.len() - 1], 20),
        Some(b'G') => (&v[..v.len() - 1], 30),
        Some(b'T') => (&v[..v.len() - 1], 40),
        _ => (v, 0),
    };
    let n: u64 = digits
        .parse()
        .map_err(|_| "not a size (digits with an optional K, M, G or T suffix)".to_string())?;
    let n = n
        .checked_mul(1u64 << shift)
        .ok_or_else(|| "too large".to_string())?;
    check_range(n, min, max)
}

fn check_range(n: u64, min: u64, max: u64) -> Result<u64, String> {
    if n < min || n > max {
        return Err(format!("out of range ({min}..={max})"));
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expiry_options_take_seconds_days_and_sizes() {
        let o = serve(&[
            "--binlog-expire-logs-seconds=3600",
            "--max-binlog-total-size=2G",
        ])
        .unwrap();
        assert_eq!(
            (o.binlog_expire_logs_seconds, o.max_binlog_total_size),
            (3600, 2 << 30)
        );
        let o = serve(&["--expire_logs_days", "1.5"]).unwrap();
        assert_eq!(o.binlog_expire_logs_seconds, 129_600);
        let o = serve(&["--expire-logs-days=0.0001"]).unwrap();
        assert_eq!(o.binlog_expire_logs_seconds, 8, "truncated, as MariaDB");
        let d = ServeOptions::default();
        assert_eq!(
            (d.binlog_expire_logs_seconds, d.max_binlog_total_size),
            (0, 0)
        );
        for bad in [
            "--binlog-expire-logs-seconds=8553601",
            "--binlog-expire-logs-seconds=-1",
            "--expire-logs-days=100",
            "--expire-logs-days=x",
            "--max-binlog-total-size=1Q",
        ] {
            assert!(serve(&[bad]).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_table_store_is_memory_unless_paged_is_asked_for() {
        assert!(!ServeOptions::default().paged_store);
        assert!(serve(&["--table-store=PAGED"]).unwrap().paged_store);
        assert!(!serve(&["--table-store", "memory"]).unwrap().paged_store);
        assert!(serve(&["--table-store=disk"]).is_err());
        let o = serve(&["--table-store=paged", "--innodb-buffer-pool-size=1G"]).unwrap();
        assert_eq!(o.innodb_buffer_pool_size, Some(1 << 30));
        assert!(
            serve(&["--innodb-buffer-pool-size=1M"]).is_err(),
            "below 8M"
        );
    }

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    fn serve(a: &[&str]) -> Result<ServeOptions, CliError> {
        let mut v = vec!["serve"];
        v.extend_from_slice(a);
        match parse_args(&args(&v))? {
            Command::Serve(o) => Ok(*o),
            other => panic!("not serve: {other:?}"),
        }
    }

    #[test]
    fn defaults_match_the_documented_ones() {
        let o = serve(&[]).unwrap();
        assert_eq!(o.datadir, PathBuf::from("onelog-data"));
        assert_eq!(o.port, 3306);
        assert_eq!(o.bind_address, "127.0.0.1");
        assert_eq!(o.socket, None);
        assert_eq!(o.server_id, 1);
        assert_eq!(o.flush_log_at_trx_commit, 1);
    }

    #[test]
    fn binlog_cache_options_take_mariadbs_range_and_4k_blocks() {
        let o = serve(&[]).unwrap();
        assert_eq!(
            (
                o.binlog_cache_size,
                o.max_binlog_cache_size,
                o.tmpdir.clone()
            ),
            (32768, 18_446_744_073_709_547_520, None)
        );
        let o = serve(&[
            "--binlog-cache-size=10000",
            "--max_binlog_cache_size=1G",
            "--tmpdir=/var/tmp",
        ])
        .unwrap();
        assert_eq!(o.binlog_cache_size, 8192);
        assert_eq!(o.max_binlog_cache_size, 1 << 30);
        assert_eq!(o.tmpdir, Some(PathBuf::from("/var/tmp")));
        assert!(serve(&["--binlog-cache-size=100"]).is_err());
        assert!(serve(&["--tmpdir="]).is_err());
    }

    #[test]
    fn mariadbd_option_names_with_either_separator_and_both_value_forms() {
        let o = serve(&[
            "--datadir=/d",
            "--port",
            "4000",
            "--bind_address=::1",
            "--server_id=9",
            "--gtid-domain-id=3",
            "--innodb_flush_log_at_trx_commit=2",
            "--max-binlog-size=64M",
            "--binlog_state_interval=1m",
            "--binlog-row-metadata=full",
            "--max-connections=1040",
            "--max_allowed_packet=1G",
            "--wait-timeout=60",
            "--checkpoint-interval=7",
            "--socket=/tmp/x.sock",
        ])
        .unwrap();
        assert_eq!(o.datadir, PathBuf::from("/d"));
        assert_eq!(o.port, 4000);
        assert_eq!(o.bind_address, "::1");
        assert_eq!(o.server_id, 9);
        assert_eq!(o.gtid_domain_id, 3);
        assert_eq!(o.flush_log_at_trx_commit, 2);
        assert_eq!(o.max_binlog_size, 64 << 20);
        assert_eq!(o.binlog_state_interval, 1 << 20);
        assert_eq!(o.binlog_row_metadata, RowMetadata::Full);
        assert_eq!(o.max_connections, 1040);
        assert_eq!(o.max_allowed_packet, 1 << 30);
        assert_eq!(o.wait_timeout, 60);
        assert_eq!(o.checkpoint_interval, 7);
        assert_eq!(o.socket, Some(PathBuf::from("/tmp/x.sock")));
    }

    #[test]
    fn unknown_options_are_errors_naming_them_and_loose_ones_warnings() {
        let e = serve(&["--innodb-log-file-size=1G"]).unwrap_err();
        assert!(
            e.to_string()
                .contains("unknown option '--innodb-log-file-size'"),
            "{e}"
        );
        let o = serve(&["--loose-innodb-log-file-size=1G"]).unwrap();
        assert_eq!(o.warnings.len(), 1);
        // A loose buffer pool size is ignored the same way with the in-memory store, and
        // honoured with the paged one.
        let o = serve(&["--loose-innodb-buffer-pool-size=1G"]).unwrap();
        assert_eq!((o.innodb_buffer_pool_size, o.warnings.len()), (None, 1));
        let o = serve(&["--loose-innodb-buffer-pool-size=1G", "--table-store=paged"]).unwrap();
        assert_eq!(
            (o.innodb_buffer_pool_size, o.warnings.len()),
            (Some(1 << 30), 0)
        );
        assert!(serve(&["port=5"]).is_err());
    }

    #[test]
    fn bad_values_are_errors_naming_the_option() {
        for bad in [
            "--port=70000",
            "--port=abc",
            "--innodb-flush-log-at-trx-commit=3",
            "--max-binlog-size=1X",
            "--max-binlog-size=1K",
            "--max-connections=0",
        ] {
            let e = serve(&[bad]).unwrap_err().to_string();
            let name = bad.split('=').next().unwrap().trim_start_matches("--");
            assert!(e.contains(name), "{bad}: {e}");
        }
        assert!(serve(&["--port"]).is_err());
    }

    #[test]
    fn defaults_file_is_read_first_and_the_command_line_wins() {
        let dir = std::env::temp_dir().join(format!("onelog-cli-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cnf = dir.join("my.cnf");
        std::fs::write(
            &cnf,
            "[mysqld]\nport=4001\nserver_id = 5\n[client]\nport=1\n",
        )
        .unwrap();
        let first = format!("--defaults-file={}", cnf.display());
        let o = serve(&[&first, "--port=4002"]).unwrap();
        assert_eq!(o.port, 4002);
        assert_eq!(o.server_id, 5);
        let e = serve(&["--port=1", &first]).unwrap_err().to_string();
        assert!(e.contains("must be the first option"), "{e}");
        std::fs::write(&cnf, "[mysqld]\nbogus=1\n").unwrap();
        let e = serve(&[&first]).unwrap_err().to_string();
        assert!(
            e.contains("unknown option '--bogus'") && e.contains("my.cnf"),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn help_and_version_are_recognised() {
        assert_eq!(parse_args(&args(&["--help"])).unwrap(), Command::Help);
        assert_eq!(
            parse_args(&args(&["serve", "--help"])).unwrap(),
            Command::Help
        );
        assert_eq!(parse_args(&args(&["--version"])).unwrap(), Command::Version);
        assert!(parse_args(&args(&[])).is_err());
        assert!(parse_args(&args(&["frobnicate"])).is_err());
        assert!(version_text().contains(SERVER_VERSION));
    }

    #[test]
    fn log_recovery_option_parses_strict_and_truncate_damaged_only() {
        use onelog_log::LogRecovery;
        assert_eq!(serve(&[]).unwrap().log_recovery, LogRecovery::Strict);
        let o = serve(&["--log-recovery=truncate-damaged"]).unwrap();
        assert_eq!(o.log_recovery, LogRecovery::TruncateDamaged);
        let o = serve(&["--log_recovery=STRICT"]).unwrap();
        assert_eq!(o.log_recovery, LogRecovery::Strict);
        let e = serve(&["--log-recovery=force"]).unwrap_err().to_string();
        assert!(e.contains("log-recovery"), "{e}");
    }

    #[test]
    fn root_authentication_method_defaults_to_socket_and_accepts_normal() {
        assert_eq!(serve(&[]).unwrap().root_auth, RootAuth::Socket);
        let o = serve(&["--auth-root-authentication-method=normal"]).unwrap();
        assert_eq!(o.root_auth, RootAuth::Normal);
        let o = serve(&["--auth_root_authentication_method=SOCKET"]).unwrap();
        assert_eq!(o.root_auth, RootAuth::Socket);
        assert!(serve(&["--auth-root-authentication-method=none"]).is_err());
    }

    #[test]
    fn binlog_storage_options_parse_on_the_command_line_and_in_my_cnf() {
        let d = serve(&[]).unwrap();
        assert_eq!(d.binlog_storage, BinlogStorageMode::Engine);
        assert_eq!(d.sync_binlog, 1);
        assert!(!d.binlog_file_mirror);
        let o = serve(&["--binlog-storage=FILE", "--sync_binlog", "0"]).unwrap();
        assert_eq!(o.binlog_storage, BinlogStorageMode::File);
        assert_eq!(o.sync_binlog, 0);
        for (v, want) in [("ON", true), ("1", true), ("off", false), ("0", false)] {
            let o = serve(&[&format!("--binlog_file_mirror={v}")]).unwrap();
            assert_eq!(o.binlog_file_mirror, want, "{v}");
        }
        for bad in [
            "--binlog-storage=disk",
            "--binlog-file-mirror=2",
            "--sync-binlog=-1",
        ] {
            let e = serve(&[bad]).unwrap_err().to_string();
            let name = bad.split('=').next().unwrap().trim_start_matches("--");
            assert!(e.contains(name), "{bad}: {e}");
        }
        assert!(
            serve(&["--binlog-file-mirror", "--port=1"])
                .unwrap()
                .binlog_file_mirror
        );
        let o = serve(&["--binlog-file-mirror=ON", "--skip-binlog-file-mirror"]).unwrap();
        assert!(!o.binlog_file_mirror);
        let dir = std::env::temp_dir().join(format!("onelog-cli-bs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cnf = dir.join("my.cnf");
        std::fs::write(
            &cnf,
            "[mysqld]\nbinlog_storage = file\nsync_binlog=4\nbinlog-file-mirror\n\
             skip_binlog_file_mirror\n",
        )
        .unwrap();
        let o = serve(&[&format!("--defaults-file={}", cnf.display())]).unwrap();
        assert_eq!(o.binlog_storage, BinlogStorageMode::File);
        assert_eq!(o.sync_binlog, 4);
        assert!(!o.binlog_file_mirror);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn sizes_take_suffixes() {
        assert_eq!(parse_size("16K", 0, u64::MAX).unwrap(), 16384);
        assert_eq!(parse_size("2g", 0, u64::MAX).unwrap(), 2 << 30);
        assert_eq!(parse_size("100", 0, u64::MAX).unwrap(), 100);
        assert!(parse_size("", 0, u64::MAX).is_err());
        assert!(parse_size("99999999999999T", 0, u64::MAX).is_err());
    }
}
