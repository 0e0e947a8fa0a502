//! Harness for onelog as a replica (issue 12): a MariaDB 10.11 primary on loopback TCP, the
//! replica's CHANGE MASTER / START SLAVE, its SHOW SLAVE STATUS by column name, and bounded
//! waits until a replica holds its primary's position.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use super::mariadb::MariaDb;
use super::{mariadb_cmd, run_bounded, sql, sql_value};

/// How long a replica may take to catch up.
pub const SYNC_TIMEOUT: Duration = Duration::from_secs(180);

/// A free loopback port (bound then released: MariaDB cannot be told to use port 0).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

/// A MariaDB 10.11 primary with a binlog, listening on a loopback port, with the `rpl`
/// account (REPLICATION SLAVE). Returns it and its port.
pub fn mariadb_primary(dir: &Path, server_id: u32, extra: &[&str]) -> (MariaDb, u16) {
    let port = free_port();
    let port_arg = format!("--port={port}");
    let id_arg = format!("--server-id={server_id}");
    let bin_arg = format!("--log-bin={}", dir.join("mb").display());
    let mut args = vec![
        "--skip-networking=0",
        "--bind-address=127.0.0.1",
        port_arg.as_str(),
        id_arg.as_str(),
        bin_arg.as_str(),
        "--character-set-server=utf8mb4",
        "--collation-server=utf8mb4_general_ci",
    ];
    args.extend_from_slice(extra);
    let m = MariaDb::start_with(dir, &args);
    m.run(
        Some(
            "CREATE USER rpl@'%' IDENTIFIED BY 'rpl'; \
             GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO rpl@'%'",
        ),
        None,
    );
    (m, port)
}

/// The `rpl` account on an onelog primary.
pub fn onelog_rpl_user(port: u16) {
    sql(
        port,
        "CREATE USER rpl@'%' IDENTIFIED BY 'rpl'; \
         GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO rpl@'%'",
    );
}

/// CHANGE MASTER TO the primary on `primary_port` (account `rpl`), `extra` options appended,
/// then START SLAVE, on the onelog replica on `port`.
pub fn start_slave(port: u16, primary_port: u16, extra: &str) {
    sql(
        port,
        &format!(
            "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={primary_port}, \
             MASTER_USER='rpl', MASTER_PASSWORD='rpl', MASTER_CONNECT_RETRY=1{extra}; \
             START SLAVE"
        ),
    );
}

/// A MariaDB replica's CHANGE MASTER + START SLAVE towards `primary_port`.
pub fn mariadb_start_slave(m: &MariaDb, primary_port: u16) {
    m.run(
        Some(&format!(
            "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={primary_port}, \
             MASTER_USER='rpl', MASTER_PASSWORD='rpl', MASTER_USE_GTID=slave_pos, \
             MASTER_CONNECT_RETRY=1; START SLAVE"
        )),
        None,
    );
}

/// Parses `mariadb -B` output with a header line into column name → value.
fn header_row(text: &str) -> BTreeMap<String, String> {
    let mut lines = text.lines();
    let (Some(names), Some(values)) = (lines.next(), lines.next()) else {
        return BTreeMap::new();
    };
    names
        .split('\t')
        .zip(values.split('\t'))
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect()
}

/// SHOW SLAVE STATUS of the onelog on `port`, by column name (empty when not configured).
pub fn slave_status(port: u16) -> BTreeMap<String, String> {
    let out = run_bounded(
        mariadb_cmd(port).args(["-B", "-e", "SHOW SLAVE STATUS"]),
        None,
        Duration::from_secs(60),
    );
    header_row(&String::from_utf8_lossy(&out.stdout))
}

/// SHOW SLAVE STATUS of a MariaDB replica.
pub fn mariadb_slave_status(m: &MariaDb) -> BTreeMap<String, String> {
    let out = run_bounded(
        m.client().args(["-B", "-e", "SHOW SLAVE STATUS"]),
        None,
        Duration::from_secs(60),
    );
    header_row(&String::from_utf8_lossy(&out.stdout))
}

/// `D-S-N,...` → domain → (server, seq_no).
pub fn gtid_pos(text: &str) -> BTreeMap<u32, (u32, u64)> {
    text.trim()
        .split(',')
        .filter(|g| !g.trim().is_empty())
        .map(|g| {
            let p: Vec<u64> = g
                .trim()
                .split('-')
                .map(|s| s.parse().unwrap_or_else(|_| panic!("bad GTID {g:?}")))
                .collect();
            assert_eq!(p.len(), 3, "bad GTID {g:?} in {text:?}");
            (p[0] as u32, (p[1] as u32, p[2]))
        })
        .collect()
}

/// Waits until `get_pos()` (a replica's `@@gtid_slave_pos`) equals `want`; on the way fails
/// when `status()` reports an SQL or IO error that stops the replica.
pub fn wait_pos(
    want: &str,
    get_pos: &dyn Fn() -> String,
    status: &dyn Fn() -> BTreeMap<String, String>,
    what: &str,
) -> Duration {
    let started = Instant::now();
    loop {
        let got = get_pos();
        if gtid_pos(&got) == gtid_pos(want) {
            return started.elapsed();
        }
        let st = status();
        let sql_errno = st.get("Last_SQL_Errno").map_or("0", String::as_str);
        assert!(
            sql_errno == "0",
            "{what}: the replica's SQL thread failed: {sql_errno} {}\n{st:#?}",
            st.get("Last_SQL_Error").cloned().unwrap_or_default()
        );
        assert!(
            started.elapsed() < SYNC_TIMEOUT,
            "{what}: the replica did not reach {want:?} within {SYNC_TIMEOUT:?} (at {got:?})\n\
             {st:#?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Waits until the onelog replica on `port` applied `want` (a GTID position).
pub fn wait_onelog_pos(port: u16, want: &str, what: &str) -> Duration {
    wait_pos(
        want,
        &|| sql_value(port, "SELECT @@gtid_slave_pos"),
        &|| slave_status(port),
        what,
    )
}

/// Waits until the onelog replica on `port` applied everything the onelog on `primary` logged.
pub fn wait_onelog_caught_up(port: u16, primary: u16, what: &str) -> Duration {
    let want = sql_value(primary, "SELECT @@gtid_binlog_pos");
    wait_onelog_pos(port, &want, what)
}

/// Waits until the MariaDB replica `m` applied `want`.
pub fn wait_mariadb_pos(m: &MariaDb, want: &str, what: &str) -> Duration {
    wait_pos(
        want,
        &|| m.value("SELECT @@gtid_slave_pos"),
        &|| mariadb_slave_status(m),
        what,
    )
}

/// Waits until `Last_SQL_Errno` of the onelog replica on `port` is non-zero; returns
/// (errno, error text).
pub fn wait_sql_error(port: u16, what: &str) -> (String, String) {
    let started = Instant::now();
    loop {
        let st = slave_status(port);
        let errno = st.get("Last_SQL_Errno").cloned().unwrap_or_default();
        if !errno.is_empty() && errno != "0" {
            return (errno, st.get("Last_SQL_Error").cloned().unwrap_or_default());
        }
        assert!(
            started.elapsed() < SYNC_TIMEOUT,
            "{what}: no SQL error within {SYNC_TIMEOUT:?}\n{st:#?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The GTIDs of the onelog on `port`'s binlog, in log order (SHOW BINLOG EVENTS of every
/// file of SHOW BINARY LOGS).
pub fn binlog_gtids(port: u16) -> Vec<String> {
    let mut out = Vec::new();
    for line in sql(port, "SHOW BINARY LOGS").lines() {
        let Some(file) = line.split('\t').next() else {
            continue;
        };
        let events = sql(port, &format!("SHOW BINLOG EVENTS IN '{file}'"));
        for ev in events.lines() {
            let cols: Vec<&str> = ev.split('\t').collect();
            if cols.get(2) == Some(&"Gtid") {
                let gtid = cols
                    .get(5)
                    .and_then(|i| i.split("GTID ").nth(1))
                    .and_then(|g| g.split_whitespace().next());
                if let Some(g) = gtid {
                    out.push(g.to_string());
                }
            }
        }
    }
    out
}

/// `SELECT * FROM table ORDER BY 1` on an onelog.
pub fn dump(port: u16, table: &str) -> String {
    sql(port, &format!("SELECT * FROM {table} ORDER BY 1"))
}

/// The same on a MariaDB.
pub fn mariadb_dump(m: &MariaDb, table: &str) -> String {
    m.run(Some(&format!("SELECT * FROM {table} ORDER BY 1")), None)
}
