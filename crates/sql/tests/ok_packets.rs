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

/// The warnings SHOW WARNINGS lists after `sql` (level, code, message), with the OK's
/// affected rows and warning count.
fn notes_of(s: &mut Session, sql: &str) -> (u64, u16, Vec<Vec<String>>) {
    let (rows, warnings, _) = ok_of(s, sql);
    (rows, warnings, common::text_rows(s, "show warnings"))
}

fn note(code: &str, message: &str) -> Vec<Vec<String>> {
    vec![vec![
        "Note".to_string(),
        code.to_string(),
        message.to_string(),
    ]]
}

#[test]
fn if_exists_forms_leave_mariadb_notes() {
    let db = Db::open("ok_packets_notes");
    let mut s = common::session_in(&db, "iw");
    ok(&mut s, "create table t (a int)");
    ok(&mut s, "create table u (a int)");
    assert_eq!(
        notes_of(&mut s, "drop table if exists missing"),
        (0, 1, note("1051", "Unknown table 'iw.missing'"))
    );
    assert_eq!(
        notes_of(&mut s, "drop table if exists t, missing, missing2"),
        (0, 1, note("1051", "Unknown table 'iw.missing,iw.missing2'"))
    );
    assert!(common::text_rows(&mut s, "show tables like 't'").is_empty());
    assert_eq!(
        notes_of(&mut s, "create database if not exists iw"),
        (
            0,
            1,
            note("1007", "Can't create database 'iw'; database exists")
        )
    );
    assert_eq!(
        notes_of(&mut s, "create database if not exists iw2"),
        (1, 0, vec![])
    );
    assert_eq!(
        notes_of(&mut s, "drop database if exists nosuchdb"),
        (
            0,
            1,
            note(
                "1008",
                "Can't drop database 'nosuchdb'; database doesn't exist"
            )
        )
    );
    assert_eq!(
        notes_of(&mut s, "create table if not exists u (a int)"),
        (0, 1, note("1050", "Table 'u' already exists"))
    );
    assert_eq!(
        notes_of(&mut s, "create table if not exists u like missing"),
        (0, 1, note("1050", "Table 'u' already exists"))
    );
    let (_, w, info) = ok_of(&mut s, "drop index if exists nosuchix on u");
    assert_eq!(
        (w, info.as_str()),
        (1, "Records: 0  Duplicates: 0  Warnings: 1")
    );
    assert_eq!(
        common::text_rows(&mut s, "show warnings"),
        note("1091", "Can't DROP INDEX `nosuchix`; check that it exists")
    );
    ok(&mut s, "create index if not exists ia on u (a)");
    let (_, w, info) = ok_of(&mut s, "create index if not exists ia on u (a)");
    assert_eq!(
        (w, info.as_str()),
        (1, "Records: 0  Duplicates: 0  Warnings: 1")
    );
    assert_eq!(
        common::text_rows(&mut s, "show warnings"),
        note("1061", "Duplicate key name 'ia'")
    );
}
