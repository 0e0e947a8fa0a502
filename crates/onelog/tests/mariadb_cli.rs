//! The real `mariadb` command line client and `mariadb-slap` against the real `onelog` binary:
//! batch mode output (`-N -B`, and `-B` with headers), scripts on stdin with many statements,
//! the unix socket, database selection, transactions, server errors surfaced with their MySQL
//! codes, and concurrent load from mariadb-slap. Output text is asserted exactly where the
//! client's format is fixed (batch mode: tab-separated, `NULL`, `\t`/`\n` escaped).

mod common;

use std::time::Duration;

use common::{mariadb_cmd, require_tool, run_bounded, sql, sql_value, Onelog};

const CLIENT_TIMEOUT: Duration = Duration::from_secs(120);

fn start() -> (tempfile::TempDir, Onelog) {
    let dir = tempfile::tempdir().unwrap();
    let server = Onelog::start(dir.path(), &[]);
    (dir, server)
}

/// Runs the CLI with `args` and stdin `input`; returns (success, stdout, stderr).
fn cli(server: &Onelog, args: &[&str], input: Option<&str>) -> (bool, String, String) {
    let out = run_bounded(mariadb_cmd(server.port).args(args), input, CLIENT_TIMEOUT);
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn version_and_show_databases_in_batch_mode() {
    let (_dir, server) = start();
    assert_eq!(
        sql_value(server.port, "SELECT @@version"),
        "10.11.9-MariaDB-onelog"
    );
    sql(server.port, "CREATE DATABASE shop");
    let dbs = sql(server.port, "SHOW DATABASES");
    let dbs: Vec<&str> = dbs.lines().collect();
    // information_schema and the read-only `mysql` schema are listed, as MariaDB lists them
    // (docs/SQL.md).
    assert_eq!(
        dbs,
        ["information_schema", "mysql", "shop"],
        "SHOW DATABASES"
    );
    // -B without -N prints the column name first.
    let (ok, out, err) = cli(&server, &["-B", "-e", "SELECT 1 + 1 AS two"], None);
    assert!(ok, "{err}");
    assert_eq!(out, "two\n2\n");
}

#[test]
fn script_on_stdin_round_trips_rows_exactly() {
    let (_dir, server) = start();
    let script = "\
CREATE DATABASE shop;
USE shop;
CREATE TABLE items (
  id INT NOT NULL PRIMARY KEY,
  name VARCHAR(40) NOT NULL,
  price DECIMAL(10,2),
  added DATE,
  note TEXT
);
INSERT INTO items VALUES (1, 'apple', 1.50, '2024-01-31', NULL);
INSERT INTO items VALUES (2, 'pear', 0.99, '2024-02-29', 'tab\\there');
INSERT INTO items (id, name) VALUES (3, 'plum'), (4, 'fig');
UPDATE items SET price = price * 2 WHERE id = 1;
DELETE FROM items WHERE id = 4;
SELECT id, name, price, added, note FROM items ORDER BY id;
SELECT COUNT(*), SUM(price) FROM items;
";
    let (ok, out, err) = cli(&server, &["-N", "-B"], Some(script));
    assert!(ok, "script failed: {err}\n{out}");
    assert_eq!(
        out,
        "1\tapple\t3.00\t2024-01-31\tNULL\n\
         2\tpear\t0.99\t2024-02-29\ttab\\there\n\
         3\tplum\tNULL\tNULL\tNULL\n\
         3\t3.99\n"
    );
}

#[test]
fn database_argument_unix_socket_and_transactions() {
    let (_dir, server) = start();
    sql(
        server.port,
        "CREATE DATABASE d; CREATE TABLE d.t (id INT PRIMARY KEY, v INT)",
    );
    // The database named on the command line is selected (COM_INIT_DB / handshake db).
    let (ok, out, err) = cli(&server, &["-N", "-B", "d", "-e", "SELECT DATABASE()"], None);
    assert!(ok, "{err}");
    assert_eq!(out, "d\n");

    // Over the unix socket.
    require_tool("mariadb");
    let out = run_bounded(
        std::process::Command::new("mariadb").args([
            "--no-defaults",
            "--protocol=SOCKET",
            &format!("--socket={}", server.socket.display()),
            "-uroot",
            "-N",
            "-B",
            "-e",
            "SELECT 40 + 2",
        ]),
        None,
        CLIENT_TIMEOUT,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "42\n");

    // A rolled back transaction leaves nothing; a committed one stays.
    let script = "\
BEGIN; INSERT INTO t VALUES (1, 10); INSERT INTO t VALUES (2, 20); ROLLBACK;
START TRANSACTION; INSERT INTO t VALUES (3, 30); COMMIT;
SET autocommit = 0; INSERT INTO t VALUES (4, 40); ROLLBACK; SET autocommit = 1;
SELECT id, v FROM t ORDER BY id;
";
    let (ok, out, err) = cli(&server, &["-N", "-B", "d"], Some(script));
    assert!(ok, "{err}");
    assert_eq!(out, "3\t30\n");
}

#[test]
fn server_errors_reach_the_cli_with_their_codes() {
    let (_dir, server) = start();
    sql(
        server.port,
        "CREATE DATABASE d; CREATE TABLE d.t (id INT PRIMARY KEY)",
    );
    let cases = [
        ("SELECT * FROM d.missing", "ERROR 1146 (42S02)"),
        ("SELEKT 1", "ERROR 1064 (42000)"),
        (
            "INSERT INTO d.t VALUES (1); INSERT INTO d.t VALUES (1)",
            "ERROR 1062 (23000)",
        ),
        ("USE nowhere", "ERROR 1049 (42000)"),
    ];
    for (stmt, want) in cases {
        let (ok, _out, err) = cli(&server, &["-N", "-B", "-e", stmt], None);
        assert!(!ok, "{stmt} succeeded");
        assert!(err.contains(want), "{stmt}: expected {want}, got {err}");
    }
    // The connection and server survive errors: a later statement works.
    assert_eq!(sql_value(server.port, "SELECT COUNT(*) FROM d.t"), "1");
}

#[test]
fn mariadb_slap_auto_generated_load_with_four_clients() {
    require_tool("mariadb-slap");
    let (_dir, server) = start();
    let out = run_bounded(
        std::process::Command::new("mariadb-slap").args([
            "--no-defaults",
            "--protocol=TCP",
            "-h127.0.0.1",
            &format!("-P{}", server.port),
            "-uroot",
            "--concurrency=4",
            "--iterations=2",
            "--auto-generate-sql",
            "--auto-generate-sql-add-autoincrement",
            "--auto-generate-sql-load-type=mixed",
            "--number-of-queries=200",
        ]),
        None,
        CLIENT_TIMEOUT,
    );
    assert!(
        out.status.success(),
        "mariadb-slap failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("Number of clients running queries: 4"),
        "{stdout}"
    );
}

#[test]
fn mariadb_slap_fixed_queries_with_own_schema() {
    require_tool("mariadb-slap");
    let (_dir, server) = start();
    let out = run_bounded(
        std::process::Command::new("mariadb-slap").args([
            "--no-defaults",
            "--protocol=TCP",
            "-h127.0.0.1",
            &format!("-P{}", server.port),
            "-uroot",
            "--concurrency=4",
            "--iterations=2",
            "--create-schema=slap",
            "--create=CREATE TABLE c (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, v INT NOT NULL); \
                      INSERT INTO c (v) VALUES (1), (2), (3)",
            "--query=INSERT INTO c (v) VALUES (7); SELECT SUM(v) FROM c; \
                     UPDATE c SET v = v + 1 WHERE id = 2",
            "--delimiter=;",
            "--number-of-queries=120",
        ]),
        None,
        CLIENT_TIMEOUT,
    );
    assert!(
        out.status.success(),
        "mariadb-slap failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    // mariadb-slap drops its schema at the end of each iteration.
    let dbs = sql(server.port, "SHOW DATABASES");
    assert!(!dbs.lines().any(|l| l == "slap"), "{dbs}");
}
