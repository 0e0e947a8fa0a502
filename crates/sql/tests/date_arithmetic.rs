//! Interval arithmetic on table columns (DATE, DATETIME, TIMESTAMP(3)), in projections and in
//! WHERE, with the values MariaDB 10.11 returned for the same statements.

mod common;
use common::{ok, wire_rows as rows, Db};
use onelog_sql::Session;

#[test]
fn intervals_on_columns_match_mariadb() {
    let db = Db::open("date-arith");
    let mut s = Session::new(db.server.clone(), 1, "root", "localhost");
    for sql in [
        "CREATE DATABASE t1",
        "USE t1",
        "CREATE TABLE ev (id INT PRIMARY KEY, d DATE, dt DATETIME, ts TIMESTAMP(3) NULL)",
        "INSERT INTO ev VALUES (1,'2020-01-31','2020-01-31 10:00:00','2020-01-31 10:00:00.250'),\
         (2,'2020-02-29','2020-03-01 00:30:00',NULL),(3,NULL,'2021-12-31 23:59:59','2021-06-01 00:00:00')",
    ] {
        ok(&mut s, sql);
    }
    let got = rows(
        &mut s,
        "SELECT id, d + INTERVAL 1 MONTH, dt - INTERVAL 90 MINUTE, DATE_ADD(ts, INTERVAL 1 SECOND), \
         TIMESTAMPDIFF(DAY, d, dt), EXTRACT(YEAR FROM dt) FROM ev ORDER BY id",
    );
    let want = [
        [
            "1",
            "2020-02-29",
            "2020-01-31 08:30:00",
            "2020-01-31 10:00:01.250",
            "0",
            "2020",
        ],
        [
            "2",
            "2020-03-29",
            "2020-02-29 23:00:00",
            "NULL",
            "1",
            "2020",
        ],
        [
            "3",
            "NULL",
            "2021-12-31 22:29:59",
            "2021-06-01 00:00:01.000",
            "NULL",
            "2021",
        ],
    ];
    assert_eq!(got, want.map(|r| r.map(String::from).to_vec()).to_vec());
    let got = rows(
        &mut s,
        "SELECT id FROM ev WHERE dt > '2020-01-01' + INTERVAL 2 MONTH ORDER BY id",
    );
    assert_eq!(got, vec![vec!["2".to_string()], vec!["3".to_string()]]);
    let got = rows(
        &mut s,
        "SELECT COUNT(*) FROM ev WHERE d < DATE_SUB(dt, INTERVAL 1 DAY)",
    );
    assert_eq!(got, vec![vec!["1".to_string()]]);
}
