//! The SHOW statements dump tools (mariadb-dump, mydumper) send: SHOW TABLE STATUS, SHOW
//! OPEN TABLES, SHOW PROCEDURE / FUNCTION STATUS, SHOW TRIGGERS, SHOW EVENTS, SHOW ENGINE,
//! SHOW CREATE DATABASE [IF NOT EXISTS], SHOW CREATE USER and SHOW FULL COLUMNS of ENUM / SET
//! columns. Expected values were measured on MariaDB 10.11.14 (`mariadb --batch`) with the
//! same schema; where onelog keeps no statistic (SHOW TABLE STATUS' Version, Rows, lengths,
//! times) the test says so.

use onelog_sql::{Output, Session};

mod common;
use common::{fail, ok, text_rows, Db};

fn root(db: &Db) -> Session {
    Session::new(db.server.clone(), 1, "root", "localhost")
}

fn joined(rows: Vec<Vec<String>>) -> Vec<String> {
    rows.into_iter().map(|r| r.join("\t")).collect()
}

fn column_names(s: &mut Session, sql: &str) -> Vec<String> {
    match ok(s, sql) {
        Output::Rows { columns, .. } => columns.iter().map(|c| c.name.clone()).collect(),
        other => panic!("{sql}: not a result set: {other:?}"),
    }
}

fn setup(s: &mut Session) {
    for sql in [
        "create database d1",
        "use d1",
        "create table t (id int auto_increment primary key, a varchar(10)) comment 'hi'",
        "insert into t(a) values ('x')",
        "create view v as select * from t",
    ] {
        ok(s, sql);
    }
}

#[test]
fn show_table_status_has_mariadb_columns_and_information_schema_values() {
    let db = Db::open("show-table-status");
    let mut s = root(&db);
    setup(&mut s);
    assert_eq!(
        column_names(&mut s, "show table status"),
        [
            "Name",
            "Engine",
            "Version",
            "Row_format",
            "Rows",
            "Avg_row_length",
            "Data_length",
            "Max_data_length",
            "Index_length",
            "Data_free",
            "Auto_increment",
            "Create_time",
            "Update_time",
            "Check_time",
            "Collation",
            "Checksum",
            "Create_options",
            "Comment",
            "Max_index_length",
            "Temporary",
        ]
    );
    // MariaDB 10.11.14: `t InnoDB 10 Dynamic 1 16384 16384 0 0 0 2 <now> <now> NULL
    // utf8mb4_general_ci NULL  hi 0 N`; onelog keeps no InnoDB statistics (NULL, as in
    // information_schema.TABLES). The view's row is MariaDB's exactly.
    assert_eq!(
        joined(text_rows(&mut s, "show table status from d1")),
        [
            "t\tInnoDB\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\t2\tNULL\tNULL\tNULL\tutf8mb4_general_ci\tNULL\t\thi\tNULL\tN",
            "v\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\tVIEW\tNULL\tNULL",
        ]
    );
    assert_eq!(
        joined(text_rows(&mut s, "show table status like 'v'")).len(),
        1
    );
    assert_eq!(
        joined(text_rows(&mut s, "show table status where Comment = 'hi'"))[0]
            .split('\t')
            .next(),
        Some("t")
    );
    assert_eq!(fail(&mut s, "show table status from nosuch").code, 1049);
    let mut fresh = root(&db);
    assert_eq!(fail(&mut fresh, "show table status").code, 1046);
}

#[test]
fn routines_triggers_events_are_empty_with_mariadb_columns() {
    let db = Db::open("show-no-objects");
    let mut s = root(&db);
    setup(&mut s);
    let routine = [
        "Db",
        "Name",
        "Type",
        "Definer",
        "Modified",
        "Created",
        "Security_type",
        "Comment",
        "character_set_client",
        "collation_connection",
        "Database Collation",
    ];
    for sql in [
        "show procedure status where Db = 'd1'",
        "show function status like 'x'",
        // mariadb-dump --routines asks for packages too (MariaDB 10.11.14: same columns, no rows).
        "SHOW PACKAGE STATUS WHERE Db = 'd1'",
        "SHOW PACKAGE BODY STATUS WHERE Db = 'd1'",
    ] {
        assert_eq!(column_names(&mut s, sql), routine, "{sql}");
        assert!(text_rows(&mut s, sql).is_empty());
    }
    assert_eq!(
        column_names(&mut s, "show triggers from d1 like 't'"),
        [
            "Trigger",
            "Event",
            "Table",
            "Statement",
            "Timing",
            "Created",
            "sql_mode",
            "Definer",
            "character_set_client",
            "collation_connection",
            "Database Collation",
        ]
    );
    assert_eq!(column_names(&mut s, "show events from `d1`").len(), 15);
    assert!(text_rows(&mut s, "show events").is_empty());
    assert_eq!(fail(&mut s, "show triggers from nosuch").code, 1049);
    assert_eq!(
        fail(&mut s, "show procedure status where nosuch = 'x'").code,
        1054
    );
}

#[test]
fn show_open_tables_and_show_engine() {
    let db = Db::open("show-open-engine");
    let mut s = root(&db);
    setup(&mut s);
    assert_eq!(
        joined(text_rows(&mut s, "show open tables from d1")),
        ["d1\tt\t0\t0", "d1\tv\t0\t0"]
    );
    assert_eq!(
        joined(text_rows(&mut s, "show open tables from d1 like 'v'")),
        ["d1\tv\t0\t0"]
    );
    let e = fail(&mut s, "show engine foo status");
    assert_eq!(
        (e.code, e.message.as_str()),
        (1286, "Unknown storage engine 'foo'")
    );
    for sql in [
        "show engine innodb status",
        "show engine InnoDB mutex",
        "show engine onelog logs",
    ] {
        assert_eq!(column_names(&mut s, sql), ["Type", "Name", "Status"]);
        assert!(text_rows(&mut s, sql).is_empty());
    }
    ok(&mut s, "create user u5@localhost");
    let mut u5 = Session::new(db.server.clone(), 2, "u5", "localhost");
    let e = fail(&mut u5, "show engine innodb status");
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            1227,
            "Access denied; you need (at least one of) the PROCESS privilege(s) for this operation"
        )
    );
}

#[test]
fn show_create_database_and_user_print_mariadb_text() {
    let db = Db::open("show-create-db-user");
    let mut s = root(&db);
    setup(&mut s);
    assert_eq!(
        joined(text_rows(&mut s, "show create database d1")),
        ["d1\tCREATE DATABASE `d1` /*!40100 DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci */"]
    );
    assert_eq!(
        joined(text_rows(&mut s, "show create database if not exists d1")),
        ["d1\tCREATE DATABASE /*!32312 IF NOT EXISTS*/ `d1` /*!40100 DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci */"]
    );
    assert_eq!(
        joined(text_rows(&mut s, "show create database mysql")),
        ["mysql\tCREATE DATABASE `mysql` /*!40100 DEFAULT CHARACTER SET latin1 COLLATE latin1_swedish_ci */"]
    );
    ok(&mut s, "create user u1@'%' identified by 'pw'");
    ok(&mut s, "create user u5@localhost");
    assert_eq!(
        column_names(&mut s, "show create user u1@'%'"),
        ["CREATE USER for u1@%"]
    );
    assert_eq!(
        joined(text_rows(&mut s, "show create user u1@'%'")),
        ["CREATE USER `u1`@`%` IDENTIFIED BY PASSWORD '*D821809F681A40A6E379B50D0463EFAE20BDD122'"]
    );
    assert_eq!(
        joined(text_rows(&mut s, "show create user root@localhost")),
        ["CREATE USER `root`@`localhost` IDENTIFIED VIA mysql_native_password USING 'invalid' OR unix_socket"]
    );
    assert_eq!(fail(&mut s, "show create user nosuch").code, 1133);
    let mut u5 = Session::new(db.server.clone(), 2, "u5", "localhost");
    assert_eq!(
        joined(text_rows(&mut u5, "show create user")),
        ["CREATE USER `u5`@`localhost`"]
    );
    assert_eq!(
        joined(text_rows(&mut u5, "show create user u5@localhost")),
        ["CREATE USER `u5`@`localhost`"]
    );
    let e = fail(&mut u5, "show create user u1@'%'");
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            1044,
            "Access denied for user 'u5'@'localhost' to database 'mysql'"
        )
    );
}

#[test]
fn show_full_columns_shows_enum_and_set_collations() {
    let db = Db::open("show-full-columns-enum");
    let mut s = root(&db);
    ok(&mut s, "create database d1");
    ok(&mut s, "use d1");
    ok(
        &mut s,
        "create table e (a enum('x','y') not null, b set('p','q'), c enum('z') collate utf8mb4_bin)",
    );
    // MariaDB 10.11.14.
    assert_eq!(
        joined(text_rows(&mut s, "show full columns from e")),
        [
            "a\tenum('x','y')\tutf8mb4_general_ci\tNO\t\tNULL\t\tselect,insert,update,references\t",
            "b\tset('p','q')\tutf8mb4_general_ci\tYES\t\tNULL\t\tselect,insert,update,references\t",
            "c\tenum('z')\tutf8mb4_bin\tYES\t\tNULL\t\tselect,insert,update,references\t",
        ]
    );
}
