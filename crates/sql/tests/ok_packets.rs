//! The OK packets of DDL as MariaDB 10.11.14 (Debian's) sends them, measured on the real
//! server: DROP DATABASE's affected rows (the tables and views it dropped), the info text
//! `Records: 0  Duplicates: 0  Warnings: 0` of ALTER TABLE, CREATE INDEX and DROP INDEX (none
//! for a lone RENAME), and the notes of the IF [NOT] EXISTS forms.

use onelog_sql::{Output, Session};

mod common;
use common::{ok, Db};

/// (affected rows, warning count, info text) of an OK.
fn ok_of(s: &mut Session, sql: &str) -> (u64, u16, String) {
    match ok(s, sql) {
        Output::Ok {
            affected_rows,
            warnings,
            info,
            ..
        } => (affected_rows, warnings, info),
        other => panic!("{sql}: not an OK: {other:?}"),
    }
}

const RECORDS: &str = "Records: 0  Duplicates: 0  Warnings: 0";

#[test]
fn drop_database_counts_the_tables_and_views_it_drops() {
    let db = Db::open("ok_packets_dropdb");
    let mut s = common::session_in(&db, "okp");
    for q in [
        "create database dd3",
        "create table dd3.a (x int)",
        "create view dd3.v1 as select 1",
        "create view dd3.v2 as select 2",
        "create database dd4",
        "create view dd4.v1 as select 1",
        "create database dd5",
        "create table dd5.a (x int)",
        "create database dd6",
    ] {
        ok(&mut s, q);
    }
    assert_eq!(ok_of(&mut s, "drop database dd3"), (3, 0, String::new()));
    assert_eq!(ok_of(&mut s, "drop database dd4"), (1, 0, String::new()));
    assert_eq!(ok_of(&mut s, "drop database dd5"), (1, 0, String::new()));
    assert_eq!(ok_of(&mut s, "drop database dd6"), (0, 0, String::new()));
}

#[test]
fn alter_table_and_index_statements_send_records_info() {
    let db = Db::open("ok_packets_alter");
    let mut s = common::session_in(&db, "okp");
    ok(&mut s, "create table t20 (a int primary key, b int)");
    ok(&mut s, "insert into t20 values (1, 300), (2, 5)");
    let records = (0, 0, RECORDS.to_string());
    for q in [
        "alter table t20 add column c int",
        "alter table t20 drop column c",
        "alter table t20 add key kb (b)",
        "alter table t20 drop index kb",
        "alter table t20 alter column b set default 5",
        "alter table t20 add column c int, rename to t21",
        "create unique index ub on t21 (b)",
        "drop index ub on t21",
        "create index ib on t21 (b)",
    ] {
        assert_eq!(ok_of(&mut s, q), records, "{q}");
    }
    // A lone RENAME sends no info text.
    assert_eq!(
        ok_of(&mut s, "alter table t21 rename to t20"),
        (0, 0, String::new())
    );
}
