//! ALTER TABLE ... ADD COLUMN and DROP COLUMN as MariaDB 10.11 answered the same statements:
//! existing rows get the default, NULL, or the type's zero value for NOT NULL without a
//! default; a dropped column leaves every row and the indexes past it still find their rows;
//! the errors; a transaction that wrote the table before fails its commit.

mod common;
use common::{err, ok, wire_rows as rows, Db};
use onelog_sql::Session;

#[test]
fn add_column_fills_existing_rows_as_mariadb() {
    let db = Db::open("add-column");
    let mut s = Session::new(db.server.clone(), 1, "root", "localhost");
    for sql in [
        "CREATE DATABASE t1",
        "USE t1",
        "CREATE TABLE ac (id INT PRIMARY KEY, k INT, KEY kk (k))",
        "INSERT INTO ac VALUES (1, 10), (2, 20)",
        "ALTER TABLE ac ADD COLUMN a INT NOT NULL",
        "ALTER TABLE ac ADD COLUMN b VARCHAR(5) NOT NULL",
        "ALTER TABLE ac ADD COLUMN c DATE NOT NULL",
        "ALTER TABLE ac ADD COLUMN d INT DEFAULT 7",
        "ALTER TABLE ac ADD e VARCHAR(3)",
        "ALTER TABLE ac ADD COLUMN f DECIMAL(5,2) NOT NULL",
        "ALTER TABLE ac ADD COLUMN g DATETIME NOT NULL",
        "ALTER TABLE ac ADD COLUMN h DOUBLE NOT NULL",
    ] {
        ok(&mut s, sql);
    }
    let want = |id: &str, k: &str| {
        [
            id,
            k,
            "0",
            "",
            "0000-00-00",
            "7",
            "NULL",
            "0.00",
            "0000-00-00 00:00:00",
            "0",
        ]
        .map(String::from)
        .to_vec()
    };
    assert_eq!(
        rows(&mut s, "SELECT * FROM ac ORDER BY id"),
        vec![want("1", "10"), want("2", "20")]
    );
    // The index still finds the rows (its entries were rebuilt for the new rows).
    assert_eq!(
        rows(&mut s, "SELECT id, d FROM ac WHERE k = 20"),
        vec![vec!["2", "7"]]
    );
    ok(
        &mut s,
        "INSERT INTO ac (id, k, a, b, c, f, g, h) VALUES (3, 30, 1, 'x', '2020-01-02', 1.5, \
         '2020-01-02 03:04:05', 2)",
    );
    assert_eq!(
        rows(&mut s, "SELECT d, e, f FROM ac WHERE id = 3"),
        vec![vec!["7", "NULL", "1.50"]]
    );
    assert_eq!(err(&mut s, "ALTER TABLE ac ADD COLUMN a INT"), 1060);
    // IF NOT EXISTS: MariaDB's note 1060 and nothing added (tests/alter_forms.rs has more).
    ok(&mut s, "ALTER TABLE ac ADD COLUMN IF NOT EXISTS a INT");
    assert_eq!(
        common::warnings(&mut s),
        [["Note", "1060", "Duplicate column name 'a'"]]
    );
    // AUTO_INCREMENT without a key: MariaDB's 1075 (tests/alter_table.rs numbers rows).
    assert_eq!(
        err(&mut s, "ALTER TABLE ac ADD COLUMN z INT AUTO_INCREMENT"),
        1075
    );
    assert_eq!(err(&mut s, "ALTER TABLE nope ADD COLUMN z INT"), 1146);

    // A transaction that wrote the table holds the ALTER up (1205 once lock_wait_timeout
    // passes); it commits, then the ALTER runs over its row.
    let mut w = Session::new(db.server.clone(), 2, "root", "localhost");
    ok(&mut w, "USE t1");
    ok(&mut w, "BEGIN");
    ok(&mut w, "UPDATE ac SET k = 11 WHERE id = 1");
    ok(&mut s, "SET SESSION lock_wait_timeout = 1");
    let alter = "ALTER TABLE ac ADD COLUMN last INT DEFAULT 5";
    assert_eq!(err(&mut s, alter), 1205);
    ok(&mut w, "COMMIT");
    ok(&mut s, alter);
    assert_eq!(
        rows(&mut s, "SELECT k, last FROM ac WHERE id = 1"),
        vec![vec!["11", "5"]]
    );
}

#[test]
fn drop_column_removes_the_value_and_keeps_the_keys() {
    let db = Db::open("drop-column");
    let mut s = Session::new(db.server.clone(), 1, "root", "localhost");
    for sql in [
        "CREATE DATABASE t1",
        "USE t1",
        "CREATE TABLE dc (id INT PRIMARY KEY, a INT, b VARCHAR(5), c INT, KEY kc (c))",
        "INSERT INTO dc VALUES (1, 2, 'x', 3), (2, 4, 'y', 6)",
        "ALTER TABLE dc DROP COLUMN a",
    ] {
        ok(&mut s, sql);
    }
    assert_eq!(
        rows(&mut s, "SELECT * FROM dc ORDER BY id"),
        vec![vec!["1", "x", "3"], vec!["2", "y", "6"]]
    );
    ok(&mut s, "ALTER TABLE dc DROP b");
    // The index on c (now the second column) still finds its rows.
    assert_eq!(
        rows(&mut s, "SELECT id FROM dc WHERE c = 6"),
        vec![vec!["2"]]
    );
    assert_eq!(
        rows(&mut s, "SELECT * FROM dc WHERE id = 1"),
        vec![vec!["1", "3"]]
    );
    assert_eq!(err(&mut s, "ALTER TABLE dc DROP COLUMN nope"), 1091);
    ok(&mut s, "ALTER TABLE dc DROP COLUMN IF EXISTS nope");
    // The primary key's only column: the table is left without a primary key
    // (`no_primary_key.rs`); here the key column stays.
    ok(&mut s, "CREATE TABLE one (id INT PRIMARY KEY)");
    assert_eq!(err(&mut s, "ALTER TABLE one DROP COLUMN id"), 1090);
    ok(&mut s, "INSERT INTO dc VALUES (3, 9)");
    assert_eq!(rows(&mut s, "SELECT COUNT(*) FROM dc"), vec![vec!["3"]]);
    // A column in an index leaves it; the emptied index goes (as MariaDB).
    ok(&mut s, "ALTER TABLE dc DROP COLUMN c");
    assert_eq!(
        rows(&mut s, "SHOW CREATE TABLE dc")[0][1],
        "CREATE TABLE `dc` (\n  `id` int(11) NOT NULL,\n  PRIMARY KEY (`id`)\n) \
         ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci"
    );
}
