//! The backup's session with the running server: login, `BACKUP STAGE START` / `END`, and the
//! few values the copy needs (`@@datadir`, `@@version`, the durable LSN).
//!
//! Owns [`ServerSession`] and [`ConnectOptions`]. The connection is the replica's own MySQL
//! client (`onelog_replication::replica::client`: mysql_native_password, bounded connect and
//! read timeouts), so the backup needs no driver of its own. While the session holds
//! `BACKUP STAGE START` the server purges no log segment and removes no checkpoint file
//! (docs/SQL.md, "BACKUP STAGE"); if this process dies the connection closes and the server
//! releases the hold by itself.
//!
//! Invariants: every value read from the server is checked (a missing or unparsable answer is
//! an error naming the query); a lost connection is an error ("the server went away"), never
//! a silent end of the backup.

use std::time::Duration;

use onelog_log::Lsn;
use onelog_replication::replica::client::{Client, ClientConfig, ClientError, QueryResult};

/// Where the server is and who logs in (mariadb-backup's option names).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConnectOptions {
    pub host: String,
    pub port: u16,
    pub user: String,
    pub password: String,
}

impl Default for ConnectOptions {
    fn default() -> Self {
        ConnectOptions {
            host: "127.0.0.1".into(),
            port: 3306,
            user: "root".into(),
            password: String::new(),
        }
    }
}

/// A logged-in session (module docs).
pub struct ServerSession {
    client: Client,
    where_: String,
}

fn describe(e: &ClientError, what: &str) -> String {
    if e.is_network() {
        format!("{what}: the server went away ({} {})", e.code, e.message)
    } else {
        format!("{what}: ERROR {}: {}", e.code, e.message)
    }
}

impl ServerSession {
    pub fn connect(o: &ConnectOptions) -> Result<ServerSession, String> {
        let cfg = ClientConfig {
            host: o.host.clone(),
            port: o.port,
            user: o.user.clone(),
            password: o.password.clone(),
            connect_timeout: Duration::from_secs(10),
            read_timeout: Duration::from_secs(600),
            tick: Duration::from_secs(1),
            stop: None,
        };
        let where_ = format!("{}@{}:{}", o.user, o.host, o.port);
        let client = Client::connect(&cfg)
            .map_err(|e| describe(&e, &format!("cannot connect as {where_}")))?;
        Ok(ServerSession { client, where_ })
    }

    /// Runs a statement that answers OK.
    pub fn execute(&mut self, sql: &str) -> Result<(), String> {
        self.client
            .query(sql)
            .map(|_| ())
            .map_err(|e| describe(&e, &format!("{sql} on {}", self.where_)))
    }

    /// The first column of the first row of `sql`'s answer.
    fn value(&mut self, sql: &str, col: usize) -> Result<String, String> {
        let r = self
            .client
            .query(sql)
            .map_err(|e| describe(&e, &format!("{sql} on {}", self.where_)))?;
        match r {
            QueryResult::Rows { rows, .. } => rows
                .first()
                .and_then(|r| r.get(col).cloned().flatten())
                .ok_or_else(|| format!("{sql}: the server returned no value")),
            QueryResult::Ok { .. } => Err(format!("{sql}: the server returned no rows")),
        }
    }

    /// `@@datadir`.
    pub fn datadir(&mut self) -> Result<String, String> {
        self.value("SELECT @@datadir", 0)
    }

    /// `CONNECTION_ID()` of this session.
    pub fn connection_id(&mut self) -> Result<u64, String> {
        let v = self.value("SELECT CONNECTION_ID()", 0)?;
        v.parse()
            .map_err(|_| format!("SELECT CONNECTION_ID(): {v:?} is not a connection id"))
    }

    /// `@@version`.
    pub fn version(&mut self) -> Result<String, String> {
        self.value("SELECT @@version", 0)
    }

    /// The log's durable LSN now (`Onelog_durable_lsn`): every record below it is synced.
    pub fn durable_lsn(&mut self) -> Result<Lsn, String> {
        let sql = "SHOW GLOBAL STATUS LIKE 'Onelog_durable_lsn'";
        let v = self.value(sql, 1)?;
        v.parse()
            .map_err(|_| format!("{sql}: {v:?} is not an LSN (is this an onelog server?)"))
    }
}
