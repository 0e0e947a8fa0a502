//! CREATE TABLE ... LIKE as MariaDB 10.11 answered the same statements: the new table has the
//! source's columns, keys, collations, attributes and COMMENT but no rows and no AUTO_INCREMENT
//! start; the errors.

mod common;
use common::{err, ok, text_rows as rows, Db};
use onelog_sql::Session;

#[test]
fn create_table_like_copies_the_definition_only() {
    let db = Db::open("create-like");
    let mut s = Session::new(db.server.clone(), 1, "root", "localhost");
    for sql in [
        "CREATE DATABASE t1",
        "USE t1",
        "CREATE TABLE src (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(20) COLLATE \
         utf8mb4_bin COMMENT 'n', k INT, KEY kk (k), UNIQUE KEY u (name)) AUTO_INCREMENT=50 \
         COMMENT='tc'",
        "INSERT INTO src (name, k) VALUES ('a', 1)",
        "CREATE TABLE dst LIKE src",
    ] {
        ok(&mut s, sql);
    }
    let show = |s: &mut Session, t: &str| rows(s, &format!("SHOW CREATE TABLE {t}"))[0][1].clone();
    let want = show(&mut s, "src")
        .replace("`src`", "`dst`")
        .replace(" AUTO_INCREMENT=51", "");
    assert_eq!(show(&mut s, "dst"), want);
    assert!(
        want.contains("utf8mb4_bin") && want.contains("COMMENT='tc'"),
        "{want}"
    );
    assert_eq!(rows(&mut s, "SELECT COUNT(*) FROM dst"), vec![vec!["0"]]);
    ok(&mut s, "INSERT INTO dst (name) VALUES ('x')");
    assert_eq!(rows(&mut s, "SELECT id FROM dst"), vec![vec!["1"]]);
    // The unique key came along, under its collation.
    assert_eq!(err(&mut s, "INSERT INTO dst (name) VALUES ('x')"), 1062);
    ok(&mut s, "CREATE TABLE IF NOT EXISTS dst LIKE src");
    assert_eq!(err(&mut s, "CREATE TABLE dst LIKE src"), 1050);
    assert_eq!(
        err(&mut s, "CREATE TABLE dst3 LIKE src ENGINE=InnoDB"),
        1064
    );
    assert_eq!(err(&mut s, "CREATE TABLE dst2 LIKE nope"), 1146);
    assert_eq!(err(&mut s, "CREATE TABLE nodb.x LIKE t1.src"), 1049);
}
