//! SQL-level PREPARE / EXECUTE / DEALLOCATE PREPARE through a session, with the answers
//! MariaDB 10.11 gave to the same statements.

mod common;
use common::{err, ok, text_rows as rows, Db};
use onelog_sql::output::Output;
use onelog_sql::Session;

#[test]
fn prepare_execute_and_deallocate_as_mariadb() {
    let db = Db::open("sql-prepare");
    let mut s = Session::new(db.server.clone(), 1, "root", "localhost");
    for sql in [
        "CREATE DATABASE t1",
        "USE t1",
        "CREATE TABLE a (id INT PRIMARY KEY, g INT)",
        "INSERT INTO a VALUES (1,1),(2,1),(3,2),(4,2),(5,2)",
    ] {
        ok(&mut s, sql);
    }
    match ok(&mut s, "PREPARE s1 FROM 'SELECT ? + ?'") {
        Output::Ok { info, .. } => assert_eq!(info, "Statement prepared"),
        other => panic!("{other:?}"),
    }
    ok(&mut s, "SET @a = 1, @b = 2");
    assert_eq!(rows(&mut s, "EXECUTE s1 USING @a, @b"), vec![vec!["3"]]);
    assert_eq!(
        rows(&mut s, "EXECUTE S1 USING 5, @b * 10"),
        vec![vec!["25"]]
    );
    ok(
        &mut s,
        "SET @q = 'SELECT id FROM a WHERE g = ? ORDER BY id'",
    );
    ok(&mut s, "PREPARE S2 FROM @q");
    ok(&mut s, "SET @g = 1");
    assert_eq!(
        rows(&mut s, "EXECUTE s2 USING @g"),
        vec![vec!["1"], vec!["2"]]
    );
    // Changing @q afterwards does not change the prepared statement.
    ok(&mut s, "SET @q = 'SELECT 0'");
    assert_eq!(rows(&mut s, "EXECUTE s2 USING 2").len(), 3);
    // DML through EXECUTE.
    ok(&mut s, "PREPARE ins FROM 'INSERT INTO a VALUES (?, ?)'");
    ok(&mut s, "EXECUTE ins USING 6, 3");
    assert_eq!(
        rows(&mut s, "SELECT g FROM a WHERE id = 6"),
        vec![vec!["3"]]
    );
    assert_eq!(err(&mut s, "EXECUTE s1 USING @a"), 1210);
    assert_eq!(err(&mut s, "EXECUTE s1"), 1210);
    ok(&mut s, "DEALLOCATE PREPARE s1");
    assert_eq!(err(&mut s, "EXECUTE s1 USING @a, @b"), 1243);
    assert_eq!(err(&mut s, "DEALLOCATE PREPARE s1"), 1243);
    ok(&mut s, "DROP PREPARE s2");
    assert_eq!(err(&mut s, "EXECUTE nope"), 1243);
    assert_eq!(err(&mut s, "PREPARE m FROM 'SELECT 1; SELECT 2'"), 1064);
    ok(&mut s, "SET @n = NULL");
    assert_eq!(err(&mut s, "PREPARE m FROM @n"), 1064);
}
