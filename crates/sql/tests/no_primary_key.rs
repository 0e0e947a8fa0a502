//! Tables without a primary key, as MariaDB 10.11 answered the same statements: identical rows
//! are kept, UPDATE/DELETE (with LIMIT) change one of them, REPLACE and INSERT IGNORE conflict
//! only on unique keys, DROP/ADD PRIMARY KEY, and the row events name rows by their whole
//! before image (what a MariaDB replica matches on).

mod common;
use common::{err, fail, log_records, ok, text_rows as rows, Db};
use onelog_binlog::event::Rows;
use onelog_binlog::{decode_group, GroupItem};
use onelog_sql::Session;

fn show(s: &mut Session, t: &str) -> String {
    rows(s, &format!("SHOW CREATE TABLE {t}"))[0][1].clone()
}

fn sorted(s: &mut Session, sql: &str) -> Vec<Vec<String>> {
    let mut r = rows(s, sql);
    r.sort();
    r
}

#[test]
fn identical_rows_and_one_at_a_time_changes() {
    let db = Db::open("nopk-dml");
    let mut s = Session::new(db.server.clone(), 1, "root", "localhost");
    for sql in [
        "CREATE DATABASE e",
        "USE e",
        "CREATE TABLE w (a INT, b VARCHAR(3))",
        "INSERT INTO w VALUES (1,'x'),(1,'x'),(2,'y')",
    ] {
        ok(&mut s, sql);
    }
    assert_eq!(
        show(&mut s, "w"),
        "CREATE TABLE `w` (\n  `a` int(11) DEFAULT NULL,\n  `b` varchar(3) DEFAULT NULL\n) \
         ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci"
    );
    ok(&mut s, "UPDATE w SET b = 'z' WHERE a = 1 LIMIT 1");
    let v = |r: &[&str]| r.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    assert_eq!(
        sorted(&mut s, "SELECT * FROM w"),
        vec![v(&["1", "x"]), v(&["1", "z"]), v(&["2", "y"])]
    );
    // No unique key: REPLACE and INSERT IGNORE just insert (MariaDB: 4, then 5 rows).
    ok(&mut s, "REPLACE INTO w VALUES (1,'x')");
    assert_eq!(rows(&mut s, "SELECT COUNT(*) FROM w"), vec![v(&["4"])]);
    ok(&mut s, "INSERT IGNORE INTO w VALUES (1,'z')");
    assert_eq!(rows(&mut s, "SELECT COUNT(*) FROM w"), vec![v(&["5"])]);
    // Both identical rows go with a plain DELETE; LIMIT 1 takes one.
    ok(&mut s, "DELETE FROM w WHERE b = 'x' LIMIT 1");
    assert_eq!(
        rows(&mut s, "SELECT COUNT(*) FROM w WHERE b = 'x'"),
        vec![v(&["1"])]
    );
    match ok(&mut s, "DELETE FROM w WHERE b = 'z'") {
        onelog_sql::Output::Ok { affected_rows, .. } => assert_eq!(affected_rows, 2),
        o => panic!("{o:?}"),
    }
    assert_eq!(
        sorted(&mut s, "SELECT * FROM w"),
        vec![v(&["1", "x"]), v(&["2", "y"])]
    );
    ok(&mut s, "INSERT INTO w VALUES (1,'x')");
    // An UPDATE of every row changes each identical row once.
    ok(&mut s, "UPDATE w SET a = a + 10");
    assert_eq!(
        sorted(&mut s, "SELECT * FROM w"),
        vec![v(&["11", "x"]), v(&["11", "x"]), v(&["12", "y"])]
    );
    // A unique key still conflicts (NULLs never do).
    ok(&mut s, "CREATE TABLE u (a INT, UNIQUE KEY (a))");
    ok(&mut s, "INSERT INTO u VALUES (1), (NULL), (NULL)");
    assert_eq!(err(&mut s, "INSERT INTO u VALUES (1)"), 1062);
    ok(&mut s, "REPLACE INTO u VALUES (1)");
    assert_eq!(rows(&mut s, "SELECT COUNT(*) FROM u"), vec![v(&["3"])]);

    // The last UPDATE's row events: each before image is a whole row, identical twice.
    let recs = log_records(&db.server);
    let mut befores = Vec::new();
    for rec in recs.iter().rev() {
        let g = decode_group(&rec.events).unwrap();
        for item in g.statements {
            if let GroupItem::Rows { table, event } = item {
                if table.table == "w" {
                    if let Rows::Update(pairs) = event.rows {
                        befores.extend(pairs.into_iter().map(|(b, _)| b));
                    }
                }
            }
        }
        if !befores.is_empty() {
            break;
        }
    }
    assert_eq!(befores.len(), 3, "{befores:?}");
    assert_eq!(befores.iter().filter(|b| **b == befores[0]).count(), 2);
}

#[test]
fn primary_key_dropped_and_added_again() {
    let db = Db::open("nopk-alter");
    let mut s = Session::new(db.server.clone(), 1, "root", "localhost");
    for sql in [
        "CREATE DATABASE e",
        "USE e",
        "CREATE TABLE n (id INT PRIMARY KEY, a INT, b INT)",
        "INSERT INTO n VALUES (1, NULL, 1), (2, 5, NULL)",
        "ALTER TABLE n DROP PRIMARY KEY",
    ] {
        ok(&mut s, sql);
    }
    assert_eq!(
        show(&mut s, "n"),
        "CREATE TABLE `n` (\n  `id` int(11) NOT NULL,\n  `a` int(11) DEFAULT NULL,\n  \
         `b` int(11) DEFAULT NULL\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 \
         COLLATE=utf8mb4_general_ci"
    );
    let e = fail(&mut s, "ALTER TABLE n DROP PRIMARY KEY");
    assert_eq!(
        (e.code, e.message.as_str()),
        (1091, "Can't DROP INDEX `PRIMARY`; check that it exists")
    );
    ok(&mut s, "INSERT INTO n VALUES (1, NULL, 1)");
    let e = fail(&mut s, "ALTER TABLE n ADD PRIMARY KEY (id)");
    assert_eq!(
        (e.code, e.message.as_str()),
        (1062, "Duplicate entry '1' for key 'PRIMARY'")
    );
    ok(&mut s, "DELETE FROM n WHERE id = 1 LIMIT 1");
    ok(&mut s, "ALTER TABLE n ADD PRIMARY KEY (id)");
    assert!(show(&mut s, "n").contains("  PRIMARY KEY (`id`)\n"));
    assert_eq!(err(&mut s, "INSERT INTO n VALUES (1, NULL, 1)"), 1062);
    // Dropping the primary key's only column leaves a table without one (as MariaDB).
    ok(&mut s, "CREATE TABLE dc (id INT PRIMARY KEY, v INT)");
    ok(&mut s, "INSERT INTO dc VALUES (1, 2), (2, 2)");
    ok(&mut s, "ALTER TABLE dc DROP COLUMN id");
    assert_eq!(
        show(&mut s, "dc"),
        "CREATE TABLE `dc` (\n  `v` int(11) DEFAULT NULL\n) ENGINE=InnoDB DEFAULT \
         CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci"
    );
    assert_eq!(
        rows(&mut s, "SELECT v FROM dc"),
        vec![vec!["2".to_string()], vec!["2".to_string()]]
    );
}
