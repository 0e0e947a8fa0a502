//! The index InnoDB generates for a foreign key that no declared key serves is dropped when a
//! later key serves the foreign key (CREATE INDEX, ALTER TABLE ADD KEY, a rebuilt table), while
//! a key the user declared stays; the key lines of SHOW CREATE TABLE are MariaDB 10.11's for
//! the same statements (checked on a real server). SQLAlchemy's `index=True` on a foreign key
//! column (tests/applications.rs) depends on it.

use onelog_sql::Session;

mod common;
use common::{key_lines, ok, open_in, text_rows, TempDir};

#[test]
fn a_generated_foreign_key_index_goes_when_another_key_serves_the_key() {
    let dir = TempDir::new("generated-keys");
    let server = open_in(&dir);
    let mut s = Session::new(server.clone(), 1, "root", "localhost");
    for sql in [
        "CREATE DATABASE gk",
        "USE gk",
        "CREATE TABLE p (id INT PRIMARY KEY, b INT, KEY (id, b))",
        "CREATE TABLE c (id INT PRIMARY KEY, pid INT, x INT, \
         CONSTRAINT f FOREIGN KEY (pid) REFERENCES p (id))",
        "CREATE TABLE d (id INT PRIMARY KEY, pid INT, KEY mine (pid), \
         FOREIGN KEY (pid) REFERENCES p (id))",
        "CREATE TABLE e (id INT PRIMARY KEY, pid INT, x INT)",
        "CREATE TABLE g (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES p (id))",
        "INSERT INTO p VALUES (1, 1), (2, 2)",
        "INSERT INTO c VALUES (1, 1, 5), (2, 2, 6), (3, NULL, 7)",
    ] {
        ok(&mut s, sql);
    }
    assert_eq!(
        key_lines(&mut s, "c"),
        ["PRIMARY KEY (`id`)", "KEY `f` (`pid`)"]
    );
    ok(&mut s, "CREATE INDEX ix ON c (pid, x)");
    assert_eq!(
        key_lines(&mut s, "c"),
        ["PRIMARY KEY (`id`)", "KEY `ix` (`pid`,`x`)"]
    );
    // The rows are still found through the remaining key, and the foreign key still holds.
    assert_eq!(text_rows(&mut s, "SELECT id FROM c WHERE pid = 2"), [["2"]]);
    assert_eq!(common::err(&mut s, "INSERT INTO c VALUES (4, 9, 0)"), 1452);
    // A key the user declared is never dropped so.
    ok(&mut s, "CREATE INDEX ix ON d (pid, id)");
    assert_eq!(
        key_lines(&mut s, "d"),
        [
            "PRIMARY KEY (`id`)",
            "KEY `mine` (`pid`)",
            "KEY `ix` (`pid`,`id`)"
        ]
    );
    // ADD FOREIGN KEY generates one; ADD KEY over the same column replaces it.
    ok(
        &mut s,
        "ALTER TABLE e ADD FOREIGN KEY (pid) REFERENCES p (id)",
    );
    assert_eq!(
        key_lines(&mut s, "e"),
        ["PRIMARY KEY (`id`)", "KEY `pid` (`pid`)"]
    );
    ok(&mut s, "ALTER TABLE e ADD KEY k2 (pid)");
    assert_eq!(
        key_lines(&mut s, "e"),
        ["PRIMARY KEY (`id`)", "KEY `k2` (`pid`)"]
    );
    // A rebuilding ALTER keeps it while nothing else serves the key; a new unnamed key that
    // does takes its name.
    ok(&mut s, "ALTER TABLE g ADD COLUMN y INT");
    assert_eq!(
        key_lines(&mut s, "g"),
        ["PRIMARY KEY (`id`)", "KEY `pid` (`pid`)"]
    );
    ok(&mut s, "ALTER TABLE g ADD UNIQUE KEY (pid, y)");
    assert_eq!(
        key_lines(&mut s, "g"),
        ["PRIMARY KEY (`id`)", "UNIQUE KEY `pid` (`pid`,`y`)"]
    );
    // Survives a restart (the generated keys are kept with the table definition).
    ok(
        &mut s,
        "CREATE TABLE h (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES p (id))",
    );
    drop(s);
    server.shutdown().unwrap();
    drop(server);
    let server = open_in(&dir);
    let mut s = Session::new(server.clone(), 2, "root", "localhost");
    ok(&mut s, "CREATE INDEX hx ON gk.h (pid, id)");
    assert_eq!(
        key_lines(&mut s, "gk.h"),
        ["PRIMARY KEY (`id`)", "KEY `hx` (`pid`,`id`)"]
    );
    let _ = server.shutdown();
}
