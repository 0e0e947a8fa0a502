//! ANALYZE / CHECK / OPTIMIZE / REPAIR TABLE answer as MariaDB 10.11.14 answers for an engine
//! without the operation (measured there on a MEMORY table and a view): onelog keeps no
//! statistics, pages or checks of its own, and says so rather than claiming work it did not do.

use onelog_sql::Session;

mod common;
use common::{fail, ok, text_rows, Db};

#[test]
fn maintenance_statements_give_mariadbs_rows() {
    let db = Db::open("maintenance");
    let mut s = Session::new(db.server.clone(), 1, "root", "localhost");
    ok(&mut s, "create database d");
    ok(&mut s, "use d");
    ok(&mut s, "create table t (a int primary key)");
    ok(&mut s, "create view v as select a from t");
    let note = |op: &str| {
        vec![
            "d.t".to_string(),
            op.to_string(),
            "note".to_string(),
            format!("The storage engine for the table doesn't support {op}"),
        ]
    };
    for (sql, op) in [
        ("analyze table t", "analyze"),
        ("analyze local table d.t", "analyze"),
        ("check table t quick", "check"),
        ("optimize no_write_to_binlog table t wait 1", "optimize"),
        ("repair table t quick extended use_frm", "repair"),
    ] {
        assert_eq!(text_rows(&mut s, sql), [note(op)], "{sql}");
    }
    assert_eq!(
        text_rows(&mut s, "analyze table t, nosuch"),
        [
            note("analyze"),
            [
                "d.nosuch",
                "analyze",
                "Error",
                "Table 'd.nosuch' doesn't exist"
            ]
            .map(String::from)
            .to_vec(),
            ["d.nosuch", "analyze", "status", "Operation failed"]
                .map(String::from)
                .to_vec(),
        ]
    );
    assert_eq!(
        text_rows(&mut s, "check table v"),
        [["d.v", "check", "status", "OK"]]
    );
    assert_eq!(
        text_rows(&mut s, "check table t for upgrade"),
        [["d.t", "check", "status", "OK"]]
    );
    assert_eq!(
        text_rows(&mut s, "optimize table v"),
        [
            [
                "d.v",
                "optimize",
                "Error",
                "'d.v' is not of type 'BASE TABLE'"
            ],
            ["d.v", "optimize", "status", "Operation failed"],
        ]
    );
    // Engine-independent statistics are not kept: refused, not ignored.
    assert_eq!(
        fail(&mut s, "analyze table t persistent for all").code,
        1235
    );
    // An account without SELECT and INSERT on the table: 1142, as MariaDB.
    ok(&mut s, "create user u@localhost");
    let mut u = Session::new(db.server.clone(), 2, "u", "localhost");
    assert_eq!(fail(&mut u, "analyze table d.t").code, 1142);
}
