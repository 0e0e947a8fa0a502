//! The replica's connection configuration: what CHANGE MASTER TO sets, its rules, and its
//! persistence in `master.info` in the data directory.
//!
//! Owns [`MasterConfig`] (the stored configuration), [`ChangeMaster`] (the options of one
//! CHANGE MASTER statement) and [`MasterConfig::change`] (the statement's merge rules, as
//! MariaDB 10.11's: REPLICATION_FACTS.md §2.2, §2.3).
//!
//! Invariants: `master.info` is replaced atomically (written to a temporary file, synced,
//! renamed, directory synced), so a crash leaves the old or the new configuration, never a
//! mix; a configuration that fails to parse refuses to start the replica with an error naming
//! the file and line, never a silent default.

use std::path::{Path, PathBuf};

use onelog_binlog::GtidPos;

/// `MASTER_USE_GTID` (`Using_Gtid`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum UseGtid {
    No,
    #[default]
    SlavePos,
    CurrentPos,
}

impl UseGtid {
    /// As SHOW SLAVE STATUS prints it.
    pub fn name(self) -> &'static str {
        match self {
            UseGtid::No => "No",
            UseGtid::SlavePos => "Slave_Pos",
            UseGtid::CurrentPos => "Current_Pos",
        }
    }
}

/// The stored configuration of the replica connection (MariaDB's master.info).
#[derive(Clone, Debug, PartialEq)]
pub struct MasterConfig {
    /// `MASTER_HOST` ("" = not configured: START SLAVE refuses, 1200).
    pub host: String,
    pub port: u16,
    pub user: String,
    pub password: String,
    /// `MASTER_CONNECT_RETRY` seconds (default 60).
    pub connect_retry: u64,
    /// `MASTER_HEARTBEAT_PERIOD` seconds (default `slave_net_timeout / 2`; 0 = off).
    pub heartbeat_period: f64,
    pub use_gtid: UseGtid,
    /// `MASTER_LOG_FILE` / `MASTER_LOG_POS`, used when `use_gtid` is No.
    pub log_file: String,
    pub log_pos: u64,
    /// `master_retry_count` (100000, MariaDB 10.6+'s default).
    pub retry_count: u64,
}

impl Default for MasterConfig {
    fn default() -> Self {
        MasterConfig {
            host: String::new(),
            port: 3306,
            user: String::new(),
            password: String::new(),
            connect_retry: 60,
            heartbeat_period: 30.0,
            use_gtid: UseGtid::SlavePos,
            log_file: String::new(),
            log_pos: 4,
            retry_count: 100_000,
        }
    }
}

/// The options of one CHANGE MASTER TO statement (None: not given).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChangeMaster {
    pub host: Option<String>,
    pub port: Option<u16>,
    pub user: Option<String>,
    pub password: Option<String>,
    pub connect_retry: Option<u64>,
    pub heartbeat_period: Option<f64>,
    pub use_gtid: Option<UseGtid>,
    pub log_file: Option<String>,
    pub log_pos: Option<u64>,
    /// `MASTER_DEMOTE_TO_SLAVE=1` (applied by the caller, which owns `gtid_slave_pos`, after
    /// [`MasterConfig::change`] accepted the statement).
    pub demote: bool,
}

/// A CHANGE MASTER that MariaDB refuses: its error code and message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    pub code: u16,
    pub message: String,
}

/// MariaDB's upper bound of `MASTER_HEARTBEAT_PERIOD` (`SLAVE_MAX_HEARTBEAT_PERIOD`).
pub const MAX_HEARTBEAT_PERIOD: f64 = 4_294_967.0;

/// A note or warning of CHANGE MASTER as MariaDB gives it: `(level, code)` for one of the
/// messages [`MasterConfig::change`] returns (the statement layer shows them in SHOW WARNINGS).
pub fn warning_code(message: &str) -> (&'static str, u16) {
    if message.starts_with("The requested value for the heartbeat period exceeds") {
        ("Warning", 1704)
    } else if message.starts_with("The requested value for the heartbeat period is less") {
        ("Warning", 1703)
    } else if message.starts_with("CHANGE MASTER TO is implicitly changing") {
        ("Note", 4190)
    } else {
        ("Note", 1618)
    }
}

/// The file header of `master.info` (the format's version).
const HEADER: &str = "# onelog master.info v1";

impl MasterConfig {
    /// The path of `master.info` in `datadir`.
    pub fn path(datadir: &Path) -> PathBuf {
        datadir.join("master.info")
    }

    /// The heartbeat MariaDB gives a new connection: `slave_net_timeout / 2`, bounded.
    pub fn default_heartbeat(slave_net_timeout: u64) -> f64 {
        (slave_net_timeout as f64 / 2.0).min(MAX_HEARTBEAT_PERIOD)
    }

    /// Applies `cm` with MariaDB 10.11's rules (`sql_repl.cc change_master`); `slave_net_timeout`
    /// gives the heartbeat's default and the bound of warning 1704. Returns the notes and
    /// warnings MariaDB gives (their codes: [`warning_code`]); on an error nothing changes.
    ///
    /// - a heartbeat above 4294967 s is 1624; one above `slave_net_timeout` warns 1704; one
    ///   below 1 ms (but not 0) becomes 0 with warning 1703; a new host or port without a new
    ///   heartbeat resets it to `slave_net_timeout / 2`;
    /// - `MASTER_CONNECT_RETRY=0` keeps the old value;
    /// - `MASTER_LOG_FILE` / `MASTER_LOG_POS` with an explicit GTID mode are ignored (note
    ///   1618 each); without one they switch `Using_Gtid` to No (note 4190 when it was not);
    ///   a new host or port without them implies `MASTER_LOG_FILE='', MASTER_LOG_POS=4`;
    ///   a position below 4 becomes 4;
    /// - `MASTER_DEMOTE_TO_SLAVE=1` needs the resulting `Using_Gtid` to be Slave_Pos (4191).
    pub fn change(
        &mut self,
        cm: &ChangeMaster,
        slave_net_timeout: u64,
    ) -> Result<Vec<String>, ConfigError> {
        let mut warnings = Vec::new();
        let mut next = self.clone();
        if let Some(h) = &cm.host {
            next.host = h.clone();
        }
        if let Some(p) = cm.port {
            next.port = p;
        }
        if let Some(u) = &cm.user {
            next.user = u.clone();
        }
        if let Some(p) = &cm.password {
            next.password = p.clone();
        }
        if let Some(r) = cm.connect_retry.filter(|r| *r > 0) {
            next.connect_retry = r;
        }
        let new_server = cm.host.is_some() || cm.port.is_some();
        next.heartbeat_period = heartbeat(cm, self, new_server, slave_net_timeout, &mut warnings)?;
        positions(cm, &mut next, new_server, &mut warnings);
        if cm.demote && next.use_gtid != UseGtid::SlavePos {
            return Err(ConfigError {
                code: 4191,
                message: "CHANGE MASTER TO option 'MASTER_DEMOTE_TO_SLAVE=TRUE' is missing \
                          requirement Using_Gtid=Slave_Pos"
                    .into(),
            });
        }
        debug_assert!(next.log_pos >= 4, "a binlog position below the header");
        *self = next;
        Ok(warnings)
    }

    /// RESET SLAVE (without ALL): MariaDB keeps host, port, user, password and connect retry,
    /// forgets the file position, and gives back the defaults of `Using_Gtid` (Slave_Pos) and
    /// of the heartbeat.
    pub fn reset(&mut self, slave_net_timeout: u64) {
        self.log_file.clear();
        self.log_pos = 4;
        self.use_gtid = UseGtid::SlavePos;
        self.heartbeat_period = Self::default_heartbeat(slave_net_timeout);
    }

    /// Reads `master.info` from `datadir` (None when there is none). A line that does not
    /// parse is an error naming the file and the line.
    pub fn load(datadir: &Path) -> Result<Option<MasterConfig>, String> {
        let path = Self::path(datadir);
        match std::fs::read_to_string(&path) {
            Ok(text) => Self::parse(&text)
                .map(Some)
                .map_err(|(line, e)| format!("{}:{line}: {e}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(format!("{}: {e}", path.display())),
        }
    }

    /// `master.info`'s text: a header line, then `key=value` lines (values escaped: `\\`,
    /// `\n`).
    pub fn render(&self) -> String {
        let mut s = String::from(HEADER);
        s.push('\n');
        let mut kv = |k: &str, v: &str| {
            s.push_str(k);
            s.push('=');
            s.push_str(&escape(v));
            s.push('\n');
        };
        kv("host", &self.host);
        kv("port", &self.port.to_string());
        kv("user", &self.user);
        kv("password", &self.password);
        kv("connect_retry", &self.connect_retry.to_string());
        kv("heartbeat_period", &format!("{:.3}", self.heartbeat_period));
        kv("use_gtid", self.use_gtid.name());
        kv("log_file", &self.log_file);
        kv("log_pos", &self.log_pos.to_string());
        kv("retry_count", &self.retry_count.to_string());
        s
    }

    /// Parses [`render`](Self::render)'s text; errors carry the 1-based line number.
    pub fn parse(text: &str) -> Result<MasterConfig, (usize, String)> {
        let mut lines = text.lines().enumerate();
        match lines.next() {
            Some((_, h)) if h == HEADER => {}
            _ => return Err((1, format!("expected the header '{HEADER}'"))),
        }
        let mut c = MasterConfig::default();
        for (i, line) in lines {
            let n = i + 1;
            if line.is_empty() {
                continue;
            }
            let (k, v) = line
                .split_once('=')
                .ok_or_else(|| (n, format!("expected key=value, got '{line}'")))?;
            let v = unescape(v).ok_or_else(|| (n, format!("bad escape in '{line}'")))?;
            set_field(&mut c, k, &v).map_err(|e| (n, e))?;
        }
        Ok(c)
    }

    /// Writes `master.info` into `datadir` atomically: a temporary file, synced, renamed over
    /// the old one, and the directory synced.
    pub fn save(&self, datadir: &Path) -> Result<(), String> {
        use std::io::Write;
        let path = Self::path(datadir);
        let tmp = datadir.join("master.info.tmp");
        let write = || -> std::io::Result<()> {
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(self.render().as_bytes())?;
            f.sync_all()?;
            drop(f);
            std::fs::rename(&tmp, &path)?;
            std::fs::File::open(datadir)?.sync_all()
        };
        write().map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Removes `master.info` (RESET SLAVE ALL).
    pub fn remove(datadir: &Path) -> Result<(), String> {
        match std::fs::remove_file(Self::path(datadir)) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e.to_string()),
        }
    }
}

/// The heartbeat period after `cm` (rules: [`MasterConfig::change`]).
fn heartbeat(
    cm: &ChangeMaster,
    old: &MasterConfig,
    new_server: bool,
    slave_net_timeout: u64,
    warnings: &mut Vec<String>,
) -> Result<f64, ConfigError> {
    let Some(h) = cm.heartbeat_period else {
        return Ok(if new_server {
            MasterConfig::default_heartbeat(slave_net_timeout)
        } else {
            old.heartbeat_period
        });
    };
    if !(0.0..=MAX_HEARTBEAT_PERIOD).contains(&h) {
        return Err(ConfigError {
            code: 1624,
            message: "The requested value for the heartbeat period is either negative or \
                      exceeds the maximum allowed (4294967 seconds)"
                .into(),
        });
    }
    if h > slave_net_timeout as f64 {
        warnings.push(
            "The requested value for the heartbeat period exceeds the value of \
             `slave_net_timeout' seconds. A sensible value for the period should be less than \
             the timeout"
                .into(),
        );
    }
    if h > 0.0 && h < 0.001 {
        warnings.push(
            "The requested value for the heartbeat period is less than 1 millisecond. The value \
             is reset to 0, meaning that heartbeating will effectively be disabled"
                .into(),
        );
        return Ok(0.0);
    }
    Ok(h)
}

/// `Using_Gtid`, `MASTER_LOG_FILE` and `MASTER_LOG_POS` after `cm` (rules:
/// [`MasterConfig::change`]).
fn positions(cm: &ChangeMaster, next: &mut MasterConfig, new_server: bool, w: &mut Vec<String>) {
    let file_given = cm.log_file.is_some() || cm.log_pos.is_some();
    if let Some(u) = cm.use_gtid {
        next.use_gtid = u;
        if cm.log_file.is_some() {
            w.push("<MASTER_LOG_FILE> option ignored".into());
        }
        if cm.log_pos.is_some() {
            w.push("<MASTER_LOG_POS> option ignored".into());
        }
    } else if file_given {
        if next.use_gtid != UseGtid::No {
            w.push(format!(
                "CHANGE MASTER TO is implicitly changing the value of 'Using_Gtid' from '{}' to \
                 'No'",
                next.use_gtid.name()
            ));
        }
        next.use_gtid = UseGtid::No;
        if let Some(f) = &cm.log_file {
            next.log_file = f.clone();
        }
        if let Some(p) = cm.log_pos {
            next.log_pos = p.max(4);
        }
    }
    if new_server && !file_given {
        next.log_file.clear();
        next.log_pos = 4;
    }
}

fn set_field(c: &mut MasterConfig, k: &str, v: &str) -> Result<(), String> {
    let num = |v: &str| {
        v.parse::<u64>()
            .map_err(|_| format!("{k}: not a number: '{v}'"))
    };
    match k {
        "host" => c.host = v.to_string(),
        "port" => {
            c.port = v
                .parse()
                .map_err(|_| format!("port: not a port number: '{v}'"))?
        }
        "user" => c.user = v.to_string(),
        "password" => c.password = v.to_string(),
        "connect_retry" => c.connect_retry = num(v)?,
        "heartbeat_period" => {
            c.heartbeat_period = v
                .parse::<f64>()
                .ok()
                .filter(|h| (0.0..=MAX_HEARTBEAT_PERIOD).contains(h))
                .ok_or_else(|| format!("heartbeat_period: out of range: '{v}'"))?
        }
        "use_gtid" => {
            c.use_gtid = match v {
                "No" => UseGtid::No,
                "Slave_Pos" => UseGtid::SlavePos,
                "Current_Pos" => UseGtid::CurrentPos,
                _ => return Err(format!("use_gtid: unknown value '{v}'")),
            }
        }
        "log_file" => c.log_file = v.to_string(),
        "log_pos" => c.log_pos = num(v)?.max(4),
        "retry_count" => c.retry_count = num(v)?,
        _ => return Err(format!("unknown key '{k}'")),
    }
    Ok(())
}

fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('\n', "\\n")
        .replace('\r', "\\r")
}

fn unescape(v: &str) -> Option<String> {
    let mut out = String::with_capacity(v.len());
    let mut it = v.chars();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match it.next()? {
            '\\' => out.push('\\'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            _ => return None,
        }
    }
    Some(out)
}

/// Where the IO thread starts streaming.
#[derive(Clone, Debug, PartialEq)]
pub enum StartPosition {
    /// GTID mode: `@slave_connect_state`.
    Gtid(GtidPos),
    /// File/offset mode.
    File { name: String, pos: u64 },
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cm() -> ChangeMaster {
        ChangeMaster::default()
    }

    #[test]
    fn host_change_resets_file_position_and_heartbeat() {
        let mut c = MasterConfig::default();
        let w = c
            .change(
                &ChangeMaster {
                    host: Some("h1".into()),
                    log_file: Some("x.000001".into()),
                    log_pos: Some(2),
                    ..cm()
                },
                60,
            )
            .unwrap();
        assert_eq!(c.use_gtid, UseGtid::No);
        assert_eq!((c.log_file.as_str(), c.log_pos), ("x.000001", 4));
        assert_eq!(w.len(), 1);
        assert_eq!(warning_code(&w[0]), ("Note", 4190));
        c.change(
            &ChangeMaster {
                heartbeat_period: Some(7.0),
                ..cm()
            },
            60,
        )
        .unwrap();
        assert_eq!(c.heartbeat_period, 7.0);
        c.change(
            &ChangeMaster {
                port: Some(3307),
                connect_retry: Some(0),
                ..cm()
            },
            40,
        )
        .unwrap();
        assert_eq!((c.log_file.as_str(), c.log_pos), ("", 4));
        assert_eq!(c.heartbeat_period, 20.0);
        assert_eq!(
            c.connect_retry, 60,
            "MASTER_CONNECT_RETRY=0 keeps the old value"
        );
        assert_eq!(c.use_gtid, UseGtid::No, "a host change keeps Using_Gtid");
    }

    #[test]
    fn explicit_gtid_mode_ignores_file_options_with_notes() {
        let mut c = MasterConfig::default();
        let w = c
            .change(
                &ChangeMaster {
                    use_gtid: Some(UseGtid::SlavePos),
                    log_file: Some("x.1".into()),
                    log_pos: Some(100),
                    ..cm()
                },
                60,
            )
            .unwrap();
        assert_eq!(c.log_file, "");
        assert_eq!(c.log_pos, 4);
        let codes: Vec<_> = w.iter().map(|m| warning_code(m)).collect();
        assert_eq!(codes, vec![("Note", 1618), ("Note", 1618)]);
        assert_eq!(w[0], "<MASTER_LOG_FILE> option ignored");
    }

    #[test]
    fn heartbeat_bounds_and_warnings() {
        let mut c = MasterConfig::default();
        let hb = |h| ChangeMaster {
            heartbeat_period: Some(h),
            ..cm()
        };
        let e = c.change(&hb(5_000_000.0), 60).unwrap_err();
        assert_eq!(e.code, 1624);
        assert_eq!(c, MasterConfig::default(), "an error changes nothing");
        let w = c.change(&hb(100.0), 60).unwrap();
        assert_eq!(warning_code(&w[0]), ("Warning", 1704));
        assert_eq!(c.heartbeat_period, 100.0);
        let w = c.change(&hb(0.0001), 60).unwrap();
        assert_eq!(warning_code(&w[0]), ("Warning", 1703));
        assert_eq!(c.heartbeat_period, 0.0);
    }

    #[test]
    fn demote_needs_slave_pos() {
        let mut c = MasterConfig::default();
        let demote = |u| ChangeMaster {
            use_gtid: u,
            demote: true,
            ..cm()
        };
        assert_eq!(
            c.change(&demote(Some(UseGtid::CurrentPos)), 60)
                .unwrap_err()
                .code,
            4191
        );
        assert_eq!(c.use_gtid, UseGtid::SlavePos);
        c.change(&demote(None), 60).unwrap();
        c.use_gtid = UseGtid::No;
        let e = c.change(&demote(None), 60).unwrap_err();
        assert_eq!(
            e.message,
            "CHANGE MASTER TO option 'MASTER_DEMOTE_TO_SLAVE=TRUE' is missing requirement \
             Using_Gtid=Slave_Pos"
        );
        c.change(&demote(Some(UseGtid::SlavePos)), 60).unwrap();
    }

    #[test]
    fn reset_keeps_connection_and_forgets_position() {
        let mut c = MasterConfig {
            host: "h".into(),
            user: "u".into(),
            connect_retry: 9,
            heartbeat_period: 7.0,
            use_gtid: UseGtid::No,
            log_file: "f.1".into(),
            log_pos: 99,
            ..MasterConfig::default()
        };
        c.reset(60);
        assert_eq!(
            (c.host.as_str(), c.user.as_str(), c.connect_retry),
            ("h", "u", 9)
        );
        assert_eq!((c.log_file.as_str(), c.log_pos), ("", 4));
        assert_eq!(c.use_gtid, UseGtid::SlavePos);
        assert_eq!(c.heartbeat_period, 30.0);
    }

    #[test]
    fn master_info_round_trips_atomically() {
        let dir = std::env::temp_dir().join(format!("onelog-master-info-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        assert_eq!(MasterConfig::load(&dir).unwrap(), None);
        let c = MasterConfig {
            host: "db\n1".into(),
            port: 3310,
            user: "re=pl".into(),
            password: "p\\w".into(),
            connect_retry: 5,
            heartbeat_period: 1.5,
            use_gtid: UseGtid::CurrentPos,
            log_file: "binlog.000002".into(),
            log_pos: 1234,
            retry_count: 7,
        };
        c.save(&dir).unwrap();
        assert!(!dir.join("master.info.tmp").exists());
        assert_eq!(MasterConfig::load(&dir).unwrap(), Some(c.clone()));
        std::fs::write(MasterConfig::path(&dir), format!("{HEADER}\nport=x\n")).unwrap();
        let e = MasterConfig::load(&dir).unwrap_err();
        assert!(
            e.ends_with("master.info:2: port: not a port number: 'x'"),
            "{e}"
        );
        std::fs::write(MasterConfig::path(&dir), "garbage").unwrap();
        assert!(MasterConfig::load(&dir).unwrap_err().contains(":1: "));
        MasterConfig::remove(&dir).unwrap();
        assert_eq!(MasterConfig::load(&dir).unwrap(), None);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
