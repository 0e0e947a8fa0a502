//! Differences the differential query test (`crates/onelog/tests/differential_queries.rs`,
//! random schemas, data and statements against a real MariaDB 10.11) found, each pinned here
//! with the answers MariaDB 10.11 gave to the same statements.

mod common;
use common::{ok, text_rows as rows, Db};
use onelog_sql::Session;

fn session(db: &Db) -> Session {
    let mut s = Session::new(db.server.clone(), 1, "root", "localhost");
    ok(&mut s, "CREATE DATABASE IF NOT EXISTS d");
    ok(&mut s, "USE d");
    s
}

#[test]
fn infix_mod_is_the_modulo_operator() {
    let db = Db::open("fix-mod");
    let mut s = session(&db);
    assert_eq!(
        rows(
            &mut s,
            "SELECT 7 MOD 3, -7 mod 3, 7.5 MOD 2, 1 + 5 MOD 3 * 2, MOD(7, 3)"
        ),
        vec![vec!["1", "-1", "1.5", "5", "1"]]
    );
}
