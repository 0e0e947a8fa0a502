//! User-level locks through sessions: a lock another session holds is not granted until that
//! session releases it or ends (a dropped session releases everything it held), and a waiting
//! GET_LOCK gets the lock as soon as its holder lets it go (checked against MariaDB 10.11).

mod common;
use common::{text_rows as rows, Db};
use onelog_sql::Session;

fn one(s: &mut Session, sql: &str) -> String {
    rows(s, sql)[0][0].clone()
}

#[test]
fn a_session_end_releases_its_locks_to_a_waiter() {
    let db = Db::open("user-locks");
    let mut a = Session::new(db.server.clone(), 1, "root", "localhost");
    let mut b = Session::new(db.server.clone(), 2, "root", "localhost");
    assert_eq!(one(&mut a, "SELECT GET_LOCK('m', 0)"), "1");
    assert_eq!(one(&mut a, "SELECT GET_LOCK('n', 0)"), "1");
    assert_eq!(one(&mut b, "SELECT GET_LOCK('m', 0)"), "0");
    assert_eq!(one(&mut b, "SELECT IS_USED_LOCK('m')"), "1");
    assert_eq!(one(&mut b, "SELECT RELEASE_LOCK('m')"), "0");
    // B waits (up to 30 s) while A ends: A's drop releases both names.
    let waiter = std::thread::spawn(move || {
        let got = one(&mut b, "SELECT GET_LOCK('m', 30)");
        (got, b)
    });
    std::thread::sleep(std::time::Duration::from_millis(200));
    drop(a);
    let (got, mut b) = waiter.join().unwrap();
    assert_eq!(got, "1");
    assert_eq!(one(&mut b, "SELECT IS_USED_LOCK('m')"), "2");
    assert_eq!(one(&mut b, "SELECT IS_FREE_LOCK('n')"), "1");
}
