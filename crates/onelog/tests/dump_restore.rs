//! Dump and restore with the real tools (issue 16 part 5): `mariadb-dump` of onelog (plain,
//! `--all-databases`, `--single-transaction --gtid --master-data=2`, `--routines`) restored
//! into a fresh onelog and into a real MariaDB 10.11, MariaDB's own dump of the same schema
//! restored into onelog with the `mariadb` client and no `--force`, and mydumper / myloader
//! from Debian. Data are compared with CHECKSUM TABLE (onelog computes MariaDB's values) and
//! with sorted SELECTs of every column (HEX for the binary ones), number to number and byte
//! to byte.
//!
//! The schema ([`SCHEMA`]) has every column type onelog supports, NULLs, a foreign key, a
//! view, unicode beyond the BMP, secondary and unique indexes and an AUTO_INCREMENT counter
//! above the rows (checked after the restore by the next id each server gives).
//!
//! Every process is bounded in time (`run_bounded`, the servers' start and stop timeouts).

mod common;

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use common::mariadb::{find_program, MariaDb};
use common::{mariadb_cmd, require_tool, run_bounded, run_bounded_bytes, sql_value, Onelog};

/// Longest run of one dump or load tool.
const TOOL_TIMEOUT: Duration = Duration::from_secs(300);

/// The tables of [`SCHEMA`], each with its primary key (the ORDER BY of the sorted dumps).
const TABLES: &[(&str, &str)] = &[("parent", "id"), ("every_type", "id"), ("fixed_only", "k")];

/// A schema with every column type, NULLs, a foreign key, a view, unicode, indexes and an
/// AUTO_INCREMENT counter; loaded with `--default-character-set=utf8mb4`.
const SCHEMA: &str = r#"
CREATE DATABASE dumpdb;
USE dumpdb;
CREATE TABLE parent (
  id INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  name VARCHAR(40) NOT NULL,
  UNIQUE KEY uk_name (name)
);
CREATE TABLE every_type (
  id INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  parent_id INT,
  ti TINYINT, si SMALLINT, mi MEDIUMINT, i INT, bi BIGINT,
  ubi BIGINT UNSIGNED, uti TINYINT UNSIGNED,
  dec1 DECIMAL(10,2), dec2 DECIMAL(30,10),
  f FLOAT, d DOUBLE,
  c CHAR(10), vc VARCHAR(100), bn BINARY(4), vb VARBINARY(20),
  tt TINYTEXT, t TEXT, mt MEDIUMTEXT, lt LONGTEXT,
  tb TINYBLOB, b BLOB, mb MEDIUMBLOB, lb LONGBLOB,
  dt DATE, tm TIME, tm6 TIME(6), dtm DATETIME, dtm3 DATETIME(3),
  ts TIMESTAMP NULL, ts6 TIMESTAMP(6) NULL, y YEAR,
  e ENUM('a','b','c'), s SET('x','y','z'), j JSON, bt BIT(10), b1 BIT(1),
  KEY k_vc (vc),
  KEY k_dt (dt, i),
  CONSTRAINT fk_parent FOREIGN KEY (parent_id) REFERENCES parent (id)
) AUTO_INCREMENT=100;
CREATE TABLE fixed_only (
  k INT NOT NULL PRIMARY KEY,
  c CHAR(5) NOT NULL,
  n INT,
  d DATE
);
CREATE VIEW v_every AS SELECT id, vc, dec1 FROM every_type WHERE i > 0;
INSERT INTO parent (name) VALUES ('première'), ('日本語'), ('emoji 😀');
INSERT INTO every_type (parent_id, ti, si, mi, i, bi, ubi, uti, dec1, dec2, f, d, c, vc, bn, vb,
  tt, t, mt, lt, tb, b, mb, lb, dt, tm, tm6, dtm, dtm3, ts, ts6, y, e, s, j, bt, b1) VALUES
 (1, -128, -32768, -8388608, -2147483648, -9223372036854775808, 18446744073709551615, 255,
  -12345678.90, 12345678901234567890.0123456789, 3.14159, -2.718281828459045, 'héllo',
  'Grüße, 世界 😀', 'ab', x'00ff10', 'tiny', 'text ''quoted'' \\ backslash', 'medium',
  REPEAT('long ', 50), x'01', x'000102', x'ff', x'deadbeef',
  '2024-02-29', '-838:59:59', '12:34:56.123456', '9999-12-31 23:59:59', '2000-01-01 00:00:00.123',
  '2038-01-19 03:14:07', '1970-01-01 00:00:01.000001', 2155, 'c', 'x,z', '{"k": [1, 2.5, "ü"]}',
  b'1010101010', b'1'),
 (2, 127, 32767, 8388607, 2147483647, 9223372036854775807, 0, 0,
  0.00, -0.0000000001, -1.5e10, 1e-300, '', '', x'', '',
  '', '', '', '', '', '', '', '',
  '1000-01-01', '00:00:00', '-00:00:00.5', '1000-01-01 00:00:00', '1000-01-01 00:00:00.999',
  '2024-06-01 12:00:00', NULL, 1901, 'a', '', '[]', b'0', b'0'),
 (NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
  NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
  NULL, NULL, NULL, NULL, NULL),
 (3, 1, 2, 3, 4, 5, 6, 7, 8.5, 9.25, 0.1, 0.1, 'tab	nl\nx', 'line1\nline2', 'abcd', 'a\0b',
  'x', 'y', 'z', 'w', 'v', 'u', 't', 's',
  '2024-12-31', '23:59:59', '838:59:59.999999', '2024-12-31 23:59:59', '2024-12-31 23:59:59.999',
  '1970-01-01 00:00:01', '2024-12-31 23:59:59.999999', 0, 'b', 'x,y,z', 'null', b'1111111111',
  b'1');
INSERT INTO fixed_only VALUES (1, 'a', 1, '2020-01-01'), (2, 'bb', NULL, NULL), (3, '', 3, '1999-09-09');
"#;

/// Every column of `every_type`, the binary ones as HEX (a byte-exact, printable dump).
const EVERY_TYPE_COLUMNS: &str = "id, parent_id, ti, si, mi, i, bi, ubi, uti, dec1, dec2, f, d, \
    c, vc, HEX(bn), HEX(vb), tt, t, mt, lt, HEX(tb), HEX(b), HEX(mb), HEX(lb), dt, tm, tm6, dtm, \
    dtm3, ts, ts6, y, e, s, j, HEX(bt), HEX(b1)";

/// The CHECKSUM TABLE statement over every table of the schema.
fn checksum_sql() -> String {
    let names: Vec<String> = TABLES.iter().map(|(t, _)| format!("dumpdb.{t}")).collect();
    format!("CHECKSUM TABLE {}", names.join(", "))
}

/// The sorted SELECT of every table (and the view) that the comparisons run.
fn sorted_selects() -> Vec<String> {
    let mut q: Vec<String> = TABLES
        .iter()
        .map(|(t, pk)| {
            let cols = if *t == "every_type" {
                EVERY_TYPE_COLUMNS
            } else {
                "*"
            };
            format!("SELECT {cols} FROM dumpdb.{t} ORDER BY {pk}")
        })
        .collect();
    q.push("SELECT * FROM dumpdb.v_every ORDER BY id".into());
    q
}

/// One side of a comparison: a running onelog or MariaDB.
enum Server<'a> {
    Onelog(u16),
    MariaDb(&'a MariaDb),
}

impl Server<'_> {
    /// The `mariadb` client connected to this server, utf8mb4.
    fn client(&self) -> Command {
        let mut cmd = match self {
            Server::Onelog(port) => mariadb_cmd(*port),
            Server::MariaDb(m) => m.client(),
        };
        cmd.arg("--default-character-set=utf8mb4");
        cmd
    }

    fn name(&self) -> &'static str {
        match self {
            Server::Onelog(_) => "onelog",
            Server::MariaDb(_) => "MariaDB",
        }
    }

    /// Runs `input` with the `mariadb` client (no --force: it stops at the first error);
    /// asserts success.
    fn load(&self, input: impl AsRef<[u8]>, what: &str) {
        let out = run_bounded_bytes(&mut self.client(), Some(input.as_ref()), TOOL_TIMEOUT);
        ok(&out, &format!("loading {what} into {}", self.name()));
    }

    /// The raw bytes `mariadb -N -B -e query` prints; asserts success.
    fn query(&self, query: &str) -> Vec<u8> {
        let out = run_bounded(
            self.client().args(["-N", "-B", "-e", query]),
            None,
            TOOL_TIMEOUT,
        );
        ok(&out, &format!("{query} on {}", self.name()));
        out.stdout
    }

    fn text(&self, query: &str) -> String {
        String::from_utf8_lossy(&self.query(query))
            .trim_end()
            .to_string()
    }

    /// CHECKSUM TABLE of every table: `db.t<TAB>value` lines.
    fn checksums(&self) -> String {
        self.text(&checksum_sql())
    }

    /// The sorted SELECTs' output.
    fn data(&self) -> Vec<Vec<u8>> {
        sorted_selects().iter().map(|q| self.query(q)).collect()
    }

    /// The server's connection arguments for mariadb-dump / mydumper / myloader.
    fn tool_args(&self, mydumper: bool) -> Vec<String> {
        match self {
            Server::Onelog(port) if mydumper => vec![
                "-h".into(),
                "127.0.0.1".into(),
                "-P".into(),
                port.to_string(),
                "-u".into(),
                "root".into(),
            ],
            Server::Onelog(port) => vec![
                "--protocol=TCP".into(),
                "-h127.0.0.1".into(),
                format!("-P{port}"),
                "-uroot".into(),
            ],
            Server::MariaDb(m) if mydumper => vec![
                "-S".into(),
                m.socket.display().to_string(),
                "-u".into(),
                "root".into(),
            ],
            Server::MariaDb(m) => vec![format!("--socket={}", m.socket.display()), "-uroot".into()],
        }
    }
}

fn ok(out: &Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what} failed ({}):\nstderr: {}\nstdout (end): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr),
        tail(&String::from_utf8_lossy(&out.stdout), 2000)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn tail(s: &str, n: usize) -> &str {
    let mut i = s.len().saturating_sub(n);
    while !s.is_char_boundary(i) {
        i += 1;
    }
    &s[i..]
}

/// `mariadb-dump ARGS` of `server`; asserts success, returns the dump (bytes: binary
/// columns are written as raw bytes in string literals).
fn mariadb_dump(server: &Server<'_>, args: &[&str]) -> Vec<u8> {
    require_tool("mariadb-dump");
    let mut cmd = Command::new("mariadb-dump");
    cmd.arg("--no-defaults")
        .args(server.tool_args(false))
        .args(args);
    let out = run_bounded(&mut cmd, None, TOOL_TIMEOUT);
    ok(&out, &format!("mariadb-dump {args:?} of {}", server.name()));
    out.stdout
}

/// Asserts that `a` and `b` hold the same data: sorted SELECTs, then CHECKSUM TABLE values.
fn assert_same_data(a: &Server<'_>, b: &Server<'_>, what: &str) {
    for (q, (da, db)) in sorted_selects().iter().zip(a.data().iter().zip(b.data())) {
        assert_eq!(
            String::from_utf8_lossy(da),
            String::from_utf8_lossy(&db),
            "{what}: `{q}`, {} vs {}",
            a.name(),
            b.name()
        );
        assert_eq!(da, &db, "{what}: `{q}` bytes, {} vs {}", a.name(), b.name());
    }
    let (ca, cb) = (a.checksums(), b.checksums());
    assert!(
        ca.lines().all(|l| !l.ends_with("NULL")),
        "{what}: a missing table on {}:\n{ca}",
        a.name()
    );
    assert_eq!(
        ca,
        cb,
        "{what}: CHECKSUM TABLE, {} vs {}",
        a.name(),
        b.name()
    );
}

/// The id the next row of `parent` and of `every_type` gets: the AUTO_INCREMENT counters
/// survived (inserted in a transaction rolled back, so the data stay as they were; the
/// counters move on in both servers alike, as InnoDB's do).
fn next_ids(s: &Server<'_>) -> String {
    s.text(
        "BEGIN; INSERT INTO dumpdb.parent (name) VALUES ('next'); SELECT LAST_INSERT_ID(); \
         INSERT INTO dumpdb.every_type (i) VALUES (1); SELECT LAST_INSERT_ID(); ROLLBACK",
    )
}

/// Empties a target server for the next restore.
fn drop_dumpdb(s: &Server<'_>) {
    s.load("DROP DATABASE IF EXISTS dumpdb", "DROP DATABASE");
}

fn start_mariadb(dir: &Path) -> MariaDb {
    find_program("mariadbd");
    MariaDb::start_with(
        dir,
        &[
            "--character-set-server=utf8mb4",
            "--collation-server=utf8mb4_general_ci",
        ],
    )
}

/// The CHECKSUM TABLE values onelog computes equal MariaDB 10.11's for the same rows of every
/// column type; QUICK is NULL (InnoDB keeps no live checksum); a missing table and a view
/// give MariaDB's row and Error note.
#[test]
fn checksum_table_matches_mariadb() {
    let dir = tempfile::tempdir().unwrap();
    let o = Onelog::start(&dir.path().join("o"), &[]);
    let m = start_mariadb(&dir.path().join("m"));
    let (so, sm) = (Server::Onelog(o.port), Server::MariaDb(&m));
    so.load(SCHEMA, "the schema");
    sm.load(SCHEMA, "the schema");
    assert_same_data(&so, &sm, "the schema loaded into both");
    // The values are real numbers, not a constant: the tables differ.
    let sums = so.checksums();
    let values: Vec<&str> = sums
        .lines()
        .map(|l| l.split('\t').nth(1).unwrap())
        .collect();
    assert_eq!(values.len(), 3, "{sums}");
    assert!(values[0] != values[1] && values[1] != values[2], "{sums}");
    for q in [
        "CHECKSUM TABLE dumpdb.every_type QUICK",
        "CHECKSUM TABLES dumpdb.fixed_only EXTENDED",
        "CHECKSUM TABLE dumpdb.nosuch, dumpdb.parent; SHOW WARNINGS",
        "CHECKSUM TABLE dumpdb.v_every; SHOW WARNINGS",
        "USE dumpdb; CHECKSUM TABLE parent",
        "CREATE TABLE dumpdb.empty_t (a INT); CHECKSUM TABLE dumpdb.empty_t",
        "UPDATE dumpdb.fixed_only SET n = n + 1; CHECKSUM TABLE dumpdb.fixed_only",
        "BEGIN; DELETE FROM dumpdb.fixed_only WHERE k = 1; CHECKSUM TABLE dumpdb.fixed_only; \
         ROLLBACK; CHECKSUM TABLE dumpdb.fixed_only",
    ] {
        assert_eq!(so.text(q), sm.text(q), "{q}");
    }
    assert_eq!(
        so.text("CHECKSUM TABLE dumpdb.every_type QUICK"),
        "dumpdb.every_type\tNULL"
    );
}

/// (b) with `--skip-add-locks`: MariaDB's dump of the schema (its versioned comments,
/// `DISABLE KEYS`, multi-row INSERTs, the view's placeholder table) restores into onelog with
/// the plain `mariadb` client, stopping at the first error, with equal data.
#[test]
fn mariadb_dump_of_mariadb_without_locks_restores_into_onelog() {
    let dir = tempfile::tempdir().unwrap();
    let o = Onelog::start(&dir.path().join("o"), &[]);
    let m = start_mariadb(&dir.path().join("m"));
    let (so, sm) = (Server::Onelog(o.port), Server::MariaDb(&m));
    sm.load(SCHEMA, "the schema");
    let dump = mariadb_dump(&sm, &["--skip-add-locks", "--databases", "dumpdb"]);
    let text = String::from_utf8_lossy(&dump);
    assert!(!text.contains("LOCK TABLES"), "{}", tail(&text, 3000));
    so.load(&dump, "MariaDB's dump");
    assert_same_data(&so, &sm, "MariaDB's dump restored into onelog");
    assert_eq!(next_ids(&so), next_ids(&sm));
}

/// (b) with MariaDB's default options (`LOCK TABLES t WRITE` around each table's rows).
#[test]
fn mariadb_dump_of_mariadb_restores_into_onelog() {
    let dir = tempfile::tempdir().unwrap();
    let o = Onelog::start(&dir.path().join("o"), &[]);
    let m = start_mariadb(&dir.path().join("m"));
    let (so, sm) = (Server::Onelog(o.port), Server::MariaDb(&m));
    sm.load(SCHEMA, "the schema");
    for args in [
        &["--databases", "dumpdb"][..],
        &[
            "--single-transaction",
            "--routines",
            "--databases",
            "dumpdb",
        ][..],
    ] {
        let dump = mariadb_dump(&sm, args);
        assert!(String::from_utf8_lossy(&dump).contains("LOCK TABLES `every_type` WRITE"));
        drop_dumpdb(&so);
        so.load(&dump, &format!("MariaDB's dump {args:?}"));
        assert_same_data(
            &so,
            &sm,
            &format!("MariaDB's dump {args:?} restored into onelog"),
        );
    }
    assert_eq!(next_ids(&so), next_ids(&sm));
}

/// (a) `mariadb-dump` of onelog with each option set restores into a fresh onelog and into
/// MariaDB with equal data; `--master-data=2 --gtid` write onelog's true position.
#[test]
fn mariadb_dump_of_onelog_restores_into_onelog_and_mariadb() {
    dump_onelog_with(&[
        &["--databases", "dumpdb"],
        &[
            "--single-transaction",
            "--gtid",
            "--master-data=2",
            "--databases",
            "dumpdb",
        ],
    ]);
}

/// (a) with `--all-databases`, into onelog: the dump's `mysql` section (the account tables
/// dropped, created again with MariaDB's definitions and filled, the view `user` made again)
/// reloads onelog's accounts when the restoring session ends (`execute::admin::reload` in the
/// sql crate): the account created on the source logs in to the restored server with its
/// password and holds exactly its grant; root keeps every privilege; the data is the same.
#[test]
fn mariadb_dump_all_databases_of_onelog_restores_into_onelog() {
    let dir = tempfile::tempdir().unwrap();
    let src = Onelog::start(&dir.path().join("src"), &[]);
    let dst = Onelog::start(&dir.path().join("dst"), &[]);
    let (ss, sd) = (Server::Onelog(src.port), Server::Onelog(dst.port));
    ss.load(SCHEMA, "the schema");
    ss.load(
        "CREATE USER dumper@'%' IDENTIFIED BY 'dump-pw'; \
         GRANT SELECT, INSERT ON dumpdb.* TO dumper@'%'",
        "the account",
    );
    sd.load("CREATE USER stale@'%'", "an account the dump does not have");
    let dump = mariadb_dump(&ss, &["--all-databases"]);
    sd.load(&dump, "onelog's --all-databases dump");
    assert_same_data(&ss, &sd, "onelog's --all-databases dump");
    // The reload applies when the loading session ends, which the server sees a moment after
    // the client has gone: ask again for a bounded time.
    let tcp = [
        "--protocol=TCP".to_string(),
        "-h127.0.0.1".to_string(),
        format!("-P{}", dst.port),
    ];
    let mut out = dumper_login(&tcp);
    for _ in 0..100 {
        if out.status.success() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
        out = dumper_login(&tcp);
    }
    let hash = ss.text("SELECT PASSWORD('dump-pw')");
    expect_dumper_grants(&out, &hash, "dumper's login on the restored onelog");
    // The account only the restored server had is gone, as the dump's accounts replace all.
    assert_eq!(
        sd.text("SELECT COUNT(*) FROM mysql.global_priv WHERE user = 'stale'"),
        "0"
    );
    let grants = sd.text("SHOW GRANTS");
    assert!(
        grants.starts_with("GRANT ALL PRIVILEGES ON *.* TO `root`@`localhost`")
            && grants.contains("WITH GRANT OPTION"),
        "{grants}"
    );
    assert_eq!(
        sd.text("SELECT user FROM mysql.global_priv ORDER BY user"),
        ss.text("SELECT user FROM mysql.global_priv ORDER BY user")
    );
}

/// (a) with `--all-databases`, into MariaDB: the dump has onelog's `mysql` schema
/// (`general_log` / `slow_log` as `CREATE TABLE IF NOT EXISTS`, empty; the account tables
/// with their rows); MariaDB loads it with no error, holds the same data, and after FLUSH
/// PRIVILEGES the account created on onelog logs in with its password and has its database
/// grant, while root (onelog's root row: no password, as the test servers' root) keeps every
/// privilege; MariaDB's `mariadb.sys` account must be made again for its view mysql.user.
#[test]
fn mariadb_dump_all_databases_of_onelog_restores_into_mariadb() {
    let dir = tempfile::tempdir().unwrap();
    let src = Onelog::start(&dir.path().join("src"), &[]);
    let m = start_mariadb(&dir.path().join("m"));
    let (ss, sm) = (Server::Onelog(src.port), Server::MariaDb(&m));
    ss.load(SCHEMA, "the schema");
    ss.load(
        "CREATE USER dumper@'%' IDENTIFIED BY 'dump-pw'; \
         GRANT SELECT, INSERT ON dumpdb.* TO dumper@'%'",
        "the account",
    );
    let dump = mariadb_dump(&ss, &["--all-databases"]);
    let text = String::from_utf8_lossy(&dump);
    for want in [
        "CREATE TABLE IF NOT EXISTS `general_log` (",
        "CREATE TABLE IF NOT EXISTS `slow_log` (",
        "DROP TABLE IF EXISTS `global_priv`;",
        r#"('%','dumper','{\"access\":0,\"version_id\":101109,\"plugin\":\"mysql_native_password\""#,
        "INSERT INTO `db` VALUES",
    ] {
        assert!(text.contains(want), "{want} not in:\n{}", tail(&text, 3000));
    }
    sm.load(&dump, "onelog's --all-databases dump");
    assert_same_data(&ss, &sm, "onelog's --all-databases dump");
    sm.load("FLUSH PRIVILEGES", "FLUSH PRIVILEGES");
    let out = dumper_login(&[format!("--socket={}", m.socket.display())]);
    let hash = sm.text("SELECT PASSWORD('dump-pw')");
    expect_dumper_grants(&out, &hash, "dumper's login on MariaDB");
    // root keeps every privilege (its row's version_id tells MariaDB the bit layout).
    let grants = sm.text("SELECT CURRENT_USER(); SHOW GRANTS");
    assert!(
        grants.starts_with("root@localhost\nGRANT ALL PRIVILEGES ON *.* TO `root`@`localhost`")
            && grants.ends_with("WITH GRANT OPTION"),
        "{grants}"
    );
    // MariaDB's own `mariadb.sys` (the definer of its view mysql.user) is not among onelog's
    // accounts: the view fails until it is made again, as mariadb-install-db makes it.
    let out = m.try_run(Some("SELECT user FROM mysql.user"), None);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("ERROR 1449"),
        "{out:?}"
    );
    sm.load(
        "CREATE USER 'mariadb.sys'@localhost ACCOUNT LOCK PASSWORD EXPIRE; \
         GRANT SELECT, DELETE ON mysql.global_priv TO 'mariadb.sys'@localhost",
        "mariadb.sys",
    );
    assert_eq!(
        sm.text("SELECT user FROM mysql.user WHERE user = 'dumper'"),
        "dumper"
    );
}

/// `dumper` (made by the `--all-databases` tests: password `dump-pw`, SELECT and INSERT on
/// `dumpdb`) logs in through `conn` and reads a table and its grants.
fn dumper_login(conn: &[String]) -> Output {
    let mut as_dumper = Command::new(find_program("mariadb"));
    as_dumper.arg("--no-defaults").args(conn).args([
        "-udumper",
        "-pdump-pw",
        "-N",
        "-B",
        "-e",
        "SELECT COUNT(*) FROM dumpdb.parent; SHOW GRANTS",
    ]);
    run_bounded(&mut as_dumper, None, TOOL_TIMEOUT)
}

/// `out` (of [`dumper_login`]) logged in and shows dumper's grants with password hash `hash`.
fn expect_dumper_grants(out: &Output, hash: &str, what: &str) {
    let shown = ok(out, what);
    assert_eq!(
        shown.trim_end(),
        format!(
            "3\nGRANT USAGE ON *.* TO `dumper`@`%` IDENTIFIED BY PASSWORD '{hash}'\n\
             GRANT SELECT, INSERT ON `dumpdb`.* TO `dumper`@`%`"
        )
    );
}

/// (a) with `--routines`: mariadb-dump asks `SHOW FUNCTION / PROCEDURE / PACKAGE [BODY] STATUS
/// WHERE Db = '...'` (empty on onelog, which has no stored routines).
#[test]
fn mariadb_dump_routines_of_onelog_restores_into_onelog_and_mariadb() {
    dump_onelog_with(&[
        &["--routines", "--databases", "dumpdb"],
        &[
            "--single-transaction",
            "--routines",
            "--databases",
            "dumpdb",
        ],
    ]);
}

/// Dumps onelog with each option set and restores each dump into a fresh onelog and into
/// MariaDB (module docs); checks the position a `--master-data=2` dump writes.
fn dump_onelog_with(option_sets: &[&[&str]]) {
    let dir = tempfile::tempdir().unwrap();
    let src = Onelog::start(&dir.path().join("src"), &[]);
    let dst = Onelog::start(&dir.path().join("dst"), &[]);
    let m = start_mariadb(&dir.path().join("m"));
    let (ss, sd, sm) = (
        Server::Onelog(src.port),
        Server::Onelog(dst.port),
        Server::MariaDb(&m),
    );
    ss.load(SCHEMA, "the schema");
    for &args in option_sets {
        let master = ss.text("SHOW MASTER STATUS");
        let gtid = sql_value(src.port, "SELECT @@gtid_binlog_pos");
        let dump = mariadb_dump(&ss, args);
        let text = String::from_utf8_lossy(&dump);
        if args.contains(&"--master-data=2") {
            let fields: Vec<&str> = master.split('\t').collect();
            let want = format!(
                "-- CHANGE MASTER TO MASTER_LOG_FILE='{}', MASTER_LOG_POS={};",
                fields[0], fields[1]
            );
            assert!(
                text.contains(&want),
                "{want} not in:\n{}",
                tail(&text, 3000)
            );
            let want = format!("SET GLOBAL gtid_slave_pos='{gtid}';");
            assert!(
                text.contains(&want),
                "{want} not in:\n{}",
                tail(&text, 3000)
            );
        }
        for target in [&sd, &sm] {
            drop_dumpdb(target);
            target.load(&dump, &format!("onelog's dump {args:?}"));
            assert_same_data(&ss, target, &format!("onelog's dump {args:?}"));
        }
    }
    // Each server asked once: the rolled-back inserts move the counters on.
    let (on_src, on_dst, on_m) = (next_ids(&ss), next_ids(&sd), next_ids(&sm));
    assert_eq!(on_dst, on_m);
    assert_eq!(on_src, on_m);
    assert_eq!(on_m, "4\n104", "the counters after the restores");
}

/// (c) mydumper of onelog, myloader into a fresh onelog (`--enable-binlog`: onelog's binlog is
/// its log, `SET SQL_LOG_BIN=0` is refused) and into MariaDB.
#[test]
fn mydumper_of_onelog_restores_with_myloader() {
    require_tool("mydumper");
    require_tool("myloader");
    let dir = tempfile::tempdir().unwrap();
    let src = Onelog::start(&dir.path().join("src"), &[]);
    let dst = Onelog::start(&dir.path().join("dst"), &[]);
    let m = start_mariadb(&dir.path().join("m"));
    let (ss, sd, sm) = (
        Server::Onelog(src.port),
        Server::Onelog(dst.port),
        Server::MariaDb(&m),
    );
    ss.load(SCHEMA, "the schema");
    let out_dir = dir.path().join("mydumper");
    let mut cmd = Command::new("mydumper");
    cmd.args(ss.tool_args(true))
        .args(["-B", "dumpdb", "-o"])
        .arg(&out_dir);
    ok(
        &run_bounded(&mut cmd, None, TOOL_TIMEOUT),
        "mydumper of onelog",
    );
    for (target, extra) in [(&sd, &["--enable-binlog"][..]), (&sm, &[][..])] {
        let mut cmd = Command::new("myloader");
        cmd.args(target.tool_args(true))
            .args(["-d"])
            .arg(&out_dir)
            .args(extra);
        ok(
            &run_bounded(&mut cmd, None, TOOL_TIMEOUT),
            &format!("myloader into {}", target.name()),
        );
        assert_same_data(
            &ss,
            target,
            &format!("mydumper/myloader into {}", target.name()),
        );
    }
}
