//! Debian's `mydumper` (0.10.1) against the real `onelog` binary: it lists the databases
//! (the read-only `mysql` schema among them, as on MariaDB), reads SHOW TABLE STATUS, SHOW
//! CREATE TABLE / VIEW, SHOW FIELDS / INDEX, SHOW PROCEDURE / FUNCTION STATUS, SHOW EVENTS,
//! SHOW TRIGGERS and the rows, and writes the `mysql` tables as MariaDB 10.11 defines them
//! with the rows the account catalogue gives. `--no-locks`: FLUSH TABLES WITH READ LOCK is
//! refused by onelog (issue 16 part 4).

mod common;

use std::process::Command;
use std::time::Duration;

use common::{require_tool, run_bounded, sql, Onelog};

#[test]
fn mydumper_dumps_the_mysql_schema_and_a_user_database() {
    require_tool("mydumper");
    let data = tempfile::tempdir().unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let server = Onelog::start(data.path(), &[]);
    sql(
        server.port,
        "CREATE DATABASE d1; CREATE TABLE d1.t (id INT PRIMARY KEY, a VARCHAR(10)); \
         INSERT INTO d1.t VALUES (1, 'x'), (2, 'y'); CREATE VIEW d1.v AS SELECT id FROM d1.t; \
         CREATE USER u1@'%' IDENTIFIED BY 'pw'",
    );
    let out = run_bounded(
        Command::new("mydumper").args([
            "--host=127.0.0.1",
            &format!("--port={}", server.port),
            "--user=root",
            "--no-locks",
            "--threads=2",
            &format!("--outputdir={}", out_dir.path().display()),
        ]),
        None,
        Duration::from_secs(120),
    );
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "mydumper failed: {log}");
    assert!(!log.contains("CRITICAL"), "{log}");
    let read = |f: &str| {
        std::fs::read_to_string(out_dir.path().join(f))
            .unwrap_or_else(|e| panic!("{f}: {e}; mydumper's log:\n{log}"))
    };
    assert!(read("d1.t.sql").contains("(1,\"x\"),\n(2,\"y\");"));
    assert!(read("d1.v-schema-view.sql").contains(" VIEW `v`"));
    // The account, as MariaDB's global_priv holds it (version_id onelog's; without
    // password_last_changed, which onelog does not keep).
    assert!(read("mysql.global_priv.sql").contains(
        r#"("%","u1","{\"access\":0,\"version_id\":101109,\"plugin\":\"mysql_native_password\",\"authentication_string\":\"*D821809F681A40A6E379B50D0463EFAE20BDD122\"}")"#
    ));
    // MariaDB 10.11.14's definitions, verbatim.
    assert!(read("mysql.db-schema.sql").contains(
        ") ENGINE=Aria DEFAULT CHARSET=utf8mb3 COLLATE=utf8mb3_bin PAGE_CHECKSUM=1 TRANSACTIONAL=1 COMMENT='Database privileges';"
    ));
    assert!(read("mysql.user-schema-view.sql").contains(
        "CREATE ALGORITHM=UNDEFINED DEFINER=`mariadb.sys`@`localhost` SQL SECURITY DEFINER VIEW `mysql`.`user` AS select"
    ));
}
