//! The read-only `mysql` schema: its tables' rows follow the account catalogue at once
//! (CREATE USER / GRANT / REVOKE / DROP USER), reading needs SELECT on `mysql` (1142), writes
//! and DDL are refused (1036 / 1044), and USE / SHOW TABLES / SHOW DATABASES / SHOW COLUMNS /
//! SHOW CREATE TABLE answer as MariaDB 10.11.14 does. Expected values were measured on a
//! MariaDB 10.11.14 server with the same accounts (`mariadb -N --batch`), except where a test
//! says onelog differs (no `password_last_changed` in `Priv`; `version_id` is onelog's 101109).

use onelog_sql::Session;

mod common;
use common::{fail, ok, text_rows, Db};

fn root(db: &Db) -> Session {
    Session::new(db.server.clone(), 1, "root", "localhost")
}

fn joined(rows: Vec<Vec<String>>) -> Vec<String> {
    rows.into_iter().map(|r| r.join("\t")).collect()
}

/// The accounts of the MariaDB measurement.
fn setup(s: &mut Session) {
    for sql in [
        "create user u1@'%' identified by 'pw'",
        "grant select, insert on *.* to u1@'%'",
        "create database d1",
        "grant all on d1.* to u1@'%'",
        "create user u2@localhost",
        "grant select on mysql.* to u2@localhost",
        "grant reload, process, super, replication client, replication slave, slave monitor on *.* to u2@localhost",
        "create user u5@localhost",
    ] {
        ok(s, sql);
    }
}

#[test]
fn user_global_priv_and_db_rows_follow_the_account_catalogue() {
    let db = Db::open("mysqlschema-rows");
    let mut s = root(&db);
    setup(&mut s);
    // MariaDB 10.11.14 (its Priv also holds password_last_changed, and version_id 101114).
    assert_eq!(
        joined(text_rows(
            &mut s,
            "select host, user, priv from mysql.global_priv where user like 'u%' order by user"
        )),
        [
            "%\tu1\t{\"access\":3,\"version_id\":101109,\"plugin\":\"mysql_native_password\",\"authentication_string\":\"*D821809F681A40A6E379B50D0463EFAE20BDD122\"}",
            "localhost\tu2\t{\"access\":274879512896,\"version_id\":101109,\"plugin\":\"mysql_native_password\",\"authentication_string\":\"\"}",
            "localhost\tu5\t{\"access\":0,\"version_id\":101109,\"plugin\":\"mysql_native_password\",\"authentication_string\":\"\"}",
        ]
    );
    assert_eq!(
        joined(text_rows(&mut s, "select * from mysql.user where user='u1'")),
        ["%\tu1\t*D821809F681A40A6E379B50D0463EFAE20BDD122\tY\tY\tN\tN\tN\tN\tN\tN\tN\tN\tN\tN\tN\tN\tN\tN\tN\tN\tN\tN\tN\tN\tN\tN\tN\tN\tN\tN\tN\tN\t\t\t\t\t0\t0\t0\t0\tmysql_native_password\t*D821809F681A40A6E379B50D0463EFAE20BDD122\tN\tN\t\t0.000000"]
    );
    assert_eq!(
        joined(text_rows(&mut s, "select * from mysql.user where user='u2'")),
        ["localhost\tu2\t\tN\tN\tN\tN\tN\tN\tY\tN\tY\tN\tN\tN\tN\tN\tN\tY\tN\tN\tN\tY\tY\tN\tN\tN\tN\tN\tN\tN\tN\tN\t\t\t\t\t0\t0\t0\t0\tmysql_native_password\t\tN\tN\t\t0.000000"]
    );
    assert_eq!(
        joined(text_rows(&mut s, "select * from mysql.db order by user")),
        [
            "%\td1\tu1\tY\tY\tY\tY\tY\tY\tN\tY\tY\tY\tY\tY\tY\tY\tY\tY\tY\tY\tY\tY",
            "localhost\tmysql\tu2\tY\tN\tN\tN\tN\tN\tN\tN\tN\tN\tN\tN\tN\tN\tN\tN\tN\tN\tN\tN",
        ]
    );
    // Root, bootstrapped VIA unix_socket only: MariaDB's mariadb-install-db writes the same
    // plugin chain (its access is 2^64-1; onelog's ALL PRIVILEGES WITH GRANT OPTION is
    // MariaDB's GRANT ALL ... WITH GRANT OPTION, 549755813887).
    assert_eq!(
        joined(text_rows(&mut s, "select priv from mysql.global_priv where user='root'")),
        ["{\"access\":549755813887,\"version_id\":101109,\"plugin\":\"mysql_native_password\",\"authentication_string\":\"invalid\",\"auth_or\":[{},{\"plugin\":\"unix_socket\"}]}"]
    );
    // Changes show at once.
    ok(&mut s, "revoke insert on *.* from u1@'%'");
    ok(&mut s, "drop user u5@localhost");
    assert_eq!(
        joined(text_rows(
            &mut s,
            "select user, Select_priv, Insert_priv from mysql.user where user like 'u%' order by 1"
        )),
        ["u1\tY\tN", "u2\tN\tN"]
    );
    // Joins and subqueries work on them as on any table.
    assert_eq!(
        joined(text_rows(
            &mut s,
            "select u.user, d.db from mysql.user u join mysql.db d on d.user = u.user \
             where u.host in (select host from mysql.global_priv) order by 1"
        )),
        ["u1\td1", "u2\tmysql"]
    );
    // The unserved tables exist, empty.
    for t in [
        "tables_priv",
        "columns_priv",
        "procs_priv",
        "proxies_priv",
        "roles_mapping",
        "proc",
        "event",
        "func",
        "plugin",
        "servers",
        "gtid_slave_pos",
    ] {
        assert!(text_rows(&mut s, &format!("select * from mysql.{t}")).is_empty());
    }
}

#[test]
fn gtid_slave_pos_table_shows_the_variable() {
    let db = Db::open("mysqlschema-gtid");
    let mut s = root(&db);
    ok(&mut s, "set global gtid_slave_pos = '0-1-5,3-2-7'");
    // MariaDB 10.11.14 right after the same SET GLOBAL.
    assert_eq!(
        joined(text_rows(&mut s, "select * from mysql.gtid_slave_pos")),
        ["0\t1\t1\t5", "3\t2\t2\t7"]
    );
}

#[test]
fn reading_needs_select_on_mysql() {
    let db = Db::open("mysqlschema-privs");
    let mut s = root(&db);
    setup(&mut s);
    let mut u5 = Session::new(db.server.clone(), 2, "u5", "localhost");
    let e = fail(&mut u5, "select * from mysql.user");
    assert_eq!(e.code, 1142);
    assert_eq!(
        e.message,
        "SELECT command denied to user 'u5'@'localhost' for table `mysql`.`user`"
    );
    let e = fail(&mut u5, "show create table mysql.db");
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            1142,
            "SHOW command denied to user 'u5'@'localhost' for table `mysql`.`db`"
        )
    );
    assert_eq!(fail(&mut u5, "show columns from mysql.db").code, 1142);
    assert_eq!(fail(&mut u5, "use mysql").code, 1044);
    assert!(text_rows(&mut u5, "show databases like 'mysql'").is_empty());
    let mut u2 = Session::new(db.server.clone(), 3, "u2", "localhost");
    assert_eq!(
        joined(text_rows(
            &mut u2,
            "select user from mysql.user where user='u5'"
        )),
        ["u5"]
    );
    assert_eq!(
        joined(text_rows(&mut u2, "show databases like 'mysql'")),
        ["mysql"]
    );
}

#[test]
fn use_mysql_show_tables_and_show_databases() {
    let db = Db::open("mysqlschema-show");
    let mut s = root(&db);
    ok(&mut s, "create database d1");
    // Sorted among the catalogue's databases, as MariaDB lists it.
    let dbs = joined(text_rows(&mut s, "show databases"));
    let (d1, mysql) = (
        dbs.iter().position(|d| d == "d1"),
        dbs.iter().position(|d| d == "mysql"),
    );
    assert!(d1.is_some() && mysql.is_some() && d1 < mysql, "{dbs:?}");
    ok(&mut s, "use mysql");
    assert_eq!(
        joined(text_rows(
            &mut s,
            "select user from user where user = 'root'"
        )),
        ["root"]
    );
    assert_eq!(
        joined(text_rows(&mut s, "show full tables like '%priv%'")),
        [
            "columns_priv\tBASE TABLE",
            "global_priv\tBASE TABLE",
            "procs_priv\tBASE TABLE",
            "proxies_priv\tBASE TABLE",
            "tables_priv\tBASE TABLE",
        ]
    );
    assert_eq!(
        joined(text_rows(&mut s, "show full tables from mysql like 'user'")),
        ["user\tVIEW"]
    );
    assert_eq!(fail(&mut s, "select * from mysql.nope").code, 1146);
    // MariaDB 10.11.14's SHOW [FULL] COLUMNS.
    assert_eq!(
        joined(text_rows(&mut s, "show columns from mysql.global_priv")),
        [
            "Host\tchar(255)\tNO\tPRI\t\t",
            "User\tchar(128)\tNO\tPRI\t\t",
            "Priv\tlongtext\tNO\t\t'{}'\t",
        ]
    );
    assert_eq!(
        joined(text_rows(&mut s, "show full columns from gtid_slave_pos")),
        [
            "domain_id\tint(10) unsigned\tNULL\tNO\tPRI\tNULL\t\tselect,insert,update,references\t",
            "sub_id\tbigint(20) unsigned\tNULL\tNO\tPRI\tNULL\t\tselect,insert,update,references\t",
            "server_id\tint(10) unsigned\tNULL\tNO\t\tNULL\t\tselect,insert,update,references\t",
            "seq_no\tbigint(20) unsigned\tNULL\tNO\t\tNULL\t\tselect,insert,update,references\t",
        ]
    );
    // MariaDB 10.11.14's SHOW INDEX but Cardinality (Aria's statistics: 4 and 2 there).
    assert_eq!(
        joined(text_rows(&mut s, "show index from mysql.db")),
        [
            "db\t0\tPRIMARY\t1\tHost\tA\tNULL\tNULL\tNULL\t\tBTREE\t\t\tNO",
            "db\t0\tPRIMARY\t2\tDb\tA\tNULL\tNULL\tNULL\t\tBTREE\t\t\tNO",
            "db\t0\tPRIMARY\t3\tUser\tA\tNULL\tNULL\tNULL\t\tBTREE\t\t\tNO",
            "db\t1\tUser\t1\tUser\tA\tNULL\tNULL\tNULL\t\tBTREE\t\t\tNO",
        ]
    );
    let create = text_rows(&mut s, "show create table mysql.plugin");
    assert_eq!(
        create[0][1],
        "CREATE TABLE `plugin` (\n  `name` varchar(64) NOT NULL DEFAULT '',\n  `dl` varchar(128) NOT NULL DEFAULT '',\n  PRIMARY KEY (`name`)\n) ENGINE=Aria DEFAULT CHARSET=utf8mb3 COLLATE=utf8mb3_general_ci PAGE_CHECKSUM=1 TRANSACTIONAL=1 COMMENT='MySQL plugins'"
    );
    assert_eq!(
        text_rows(&mut s, "show create view mysql.user"),
        text_rows(&mut s, "show create table mysql.user")
    );
    assert_eq!(fail(&mut s, "show create view mysql.db").code, 1347);
    let view = text_rows(&mut s, "show create table mysql.user");
    assert_eq!(view[0].len(), 4);
    assert!(view[0][1].starts_with("CREATE ALGORITHM=UNDEFINED DEFINER=`mariadb.sys`@`localhost` SQL SECURITY DEFINER VIEW `mysql`.`user` AS select"));
}

#[test]
fn writes_and_ddl_on_mysql_are_refused() {
    let db = Db::open("mysqlschema-writes");
    let mut s = root(&db);
    for (sql, code, message) in [
        (
            "insert into mysql.global_priv values ('h','u','{}')",
            1036,
            "Table 'global_priv' is read only",
        ),
        (
            "update mysql.db set Select_priv='Y'",
            1036,
            "Table 'db' is read only",
        ),
        ("delete from mysql.user", 1036, "Table 'user' is read only"),
        (
            "truncate table mysql.proc",
            1036,
            "Table 'proc' is read only",
        ),
        // (DROP TABLE of an account table begins a reload: tests/mysql_reload.rs.)
        (
            "drop table mysql.general_log",
            1036,
            "Table 'general_log' is read only",
        ),
        (
            "alter table mysql.db add column x int",
            1036,
            "Table 'db' is read only",
        ),
        (
            "create table mysql.t1 (a int)",
            1044,
            "Access denied for user 'root'@'localhost' to database 'mysql'",
        ),
        (
            "drop database mysql",
            1044,
            "Access denied for user 'root'@'localhost' to database 'mysql'",
        ),
        (
            "create database mysql",
            1007,
            "Can't create database 'mysql'; database exists",
        ),
    ] {
        let e = fail(&mut s, sql);
        assert_eq!((e.code, e.message.as_str()), (code, message), "{sql}");
    }
    ok(&mut s, "create database if not exists mysql");
    // Nothing changed.
    assert_eq!(
        joined(text_rows(&mut s, "select count(*) from mysql.global_priv")),
        ["1"]
    );
}

/// `mysql.general_log` and `mysql.slow_log` (mariadb-dump --all-databases asks for their
/// definitions): MariaDB 10.11.14's definitions, empty (onelog writes its query logs to files
/// only; `log_output=TABLE` stays refused), and `CREATE TABLE IF NOT EXISTS` of them (what the
/// dump sends) is note 1050 as MariaDB answers.
#[test]
fn general_log_and_slow_log_are_empty_with_mariadb_definitions() {
    let db = Db::open("mysqlschema-logs");
    let mut s = root(&db);
    assert_eq!(
        joined(text_rows(&mut s, "show full tables from mysql like '%log'")),
        ["general_log\tBASE TABLE", "slow_log\tBASE TABLE"]
    );
    for t in ["general_log", "slow_log"] {
        assert_eq!(
            joined(text_rows(
                &mut s,
                &format!("select count(*) from mysql.{t}")
            )),
            ["0"]
        );
    }
    let create = text_rows(&mut s, "show create table mysql.general_log");
    assert_eq!(
        create[0][1],
        "CREATE TABLE `general_log` (\n  `event_time` timestamp(6) NOT NULL DEFAULT current_timestamp(6) ON UPDATE current_timestamp(6),\n  `user_host` mediumtext NOT NULL,\n  `thread_id` bigint(21) unsigned NOT NULL,\n  `server_id` int(10) unsigned NOT NULL,\n  `command_type` varchar(64) NOT NULL,\n  `argument` mediumtext NOT NULL\n) ENGINE=CSV DEFAULT CHARSET=utf8mb3 COLLATE=utf8mb3_general_ci COMMENT='General log'"
    );
    assert_eq!(
        joined(text_rows(&mut s, "show full columns from mysql.general_log")),
        [
            "event_time\ttimestamp(6)\tNULL\tNO\t\tcurrent_timestamp(6)\ton update current_timestamp(6)\tselect,insert,update,references\t",
            "user_host\tmediumtext\tutf8mb3_general_ci\tNO\t\tNULL\t\tselect,insert,update,references\t",
            "thread_id\tbigint(21) unsigned\tNULL\tNO\t\tNULL\t\tselect,insert,update,references\t",
            "server_id\tint(10) unsigned\tNULL\tNO\t\tNULL\t\tselect,insert,update,references\t",
            "command_type\tvarchar(64)\tutf8mb3_general_ci\tNO\t\tNULL\t\tselect,insert,update,references\t",
            "argument\tmediumtext\tutf8mb3_general_ci\tNO\t\tNULL\t\tselect,insert,update,references\t",
        ]
    );
    let slow = joined(text_rows(&mut s, "show columns from mysql.slow_log"));
    assert_eq!(slow.len(), 13);
    assert_eq!(slow[2], "query_time\ttime(6)\tNO\t\tNULL\t");
    assert_eq!(slow[12], "rows_affected\tbigint(20) unsigned\tNO\t\tNULL\t");
    // The dump's statement: the table exists (MariaDB: Note 1050).
    ok(
        &mut s,
        "CREATE TABLE IF NOT EXISTS mysql.general_log (a int) ENGINE=CSV",
    );
    assert_eq!(
        joined(text_rows(&mut s, "show warnings")),
        ["Note\t1050\tTable 'general_log' already exists"]
    );
    ok(&mut s, "create table if not exists mysql.db (a int)");
    assert_eq!(
        joined(text_rows(&mut s, "show warnings")),
        ["Note\t1050\tTable 'db' already exists"]
    );
    // Without IF NOT EXISTS, and any write, still refused.
    assert_eq!(
        fail(&mut s, "create table mysql.slow_log (a int)").code,
        1036
    );
    assert_eq!(
        fail(
            &mut s,
            "insert into mysql.general_log (argument) values ('x')"
        )
        .code,
        1036
    );
    // Logging to the tables stays refused (onelog logs to files only).
    assert_eq!(fail(&mut s, "set global log_output = 'TABLE'").code, 1235);
    // mariadb-dump --all-databases READ-locks the tables it dumps: accepted; a WRITE lock is
    // refused as a write is (MariaDB grants it: its tables are writable).
    ok(&mut s, "use mysql");
    ok(
        &mut s,
        "LOCK TABLES `columns_priv` READ /*!32311 LOCAL */,`db` READ /*!32311 LOCAL */,`user` READ /*!32311 LOCAL */",
    );
    assert_eq!(joined(text_rows(&mut s, "select count(*) from db")), ["0"]);
    ok(&mut s, "UNLOCK TABLES");
    let e = fail(&mut s, "LOCK TABLES db WRITE");
    assert_eq!(
        (e.code, e.message.as_str()),
        (1036, "Table 'db' is read only")
    );
    assert_eq!(fail(&mut s, "LOCK TABLES mysql.nope READ").code, 1146);
    // mariadb-dump asks information_schema.TABLES for each table's engine and type.
    assert_eq!(
        joined(text_rows(
            &mut s,
            "SELECT table_name, engine, table_type, table_collation, table_comment \
             FROM information_schema.TABLES WHERE table_schema = 'mysql' \
             AND table_name IN ('general_log', 'user', 'db') ORDER BY table_name"
        )),
        [
            "db\tAria\tBASE TABLE\tutf8mb3_bin\tDatabase privileges",
            "general_log\tCSV\tBASE TABLE\tutf8mb3_general_ci\tGeneral log",
            "user\tNULL\tVIEW\tNULL\tVIEW",
        ]
    );
    // ... and information_schema.COLUMNS for the columns it selects (MariaDB 10.11.14's rows).
    assert_eq!(
        joined(text_rows(
            &mut s,
            "select table_name, column_name, column_default, is_nullable, data_type, \
             character_set_name, collation_name, column_type, column_key, extra \
             from information_schema.columns where table_schema = 'mysql' \
             and table_name in ('db', 'general_log', 'global_priv') \
             and ordinal_position in (1, 3, 4) order by table_name, ordinal_position"
        )),
        [
            "db\tHost\t''\tNO\tchar\tutf8mb3\tutf8mb3_bin\tchar(255)\tPRI\t",
            "db\tUser\t''\tNO\tchar\tutf8mb3\tutf8mb3_bin\tchar(128)\tPRI\t",
            "db\tSelect_priv\t'N'\tNO\tenum\tutf8mb3\tutf8mb3_general_ci\tenum('N','Y')\t\t",
            "general_log\tevent_time\tcurrent_timestamp(6)\tNO\ttimestamp\tNULL\tNULL\ttimestamp(6)\t\ton update current_timestamp(6)",
            "general_log\tthread_id\tNULL\tNO\tbigint\tNULL\tNULL\tbigint(21) unsigned\t\t",
            "general_log\tserver_id\tNULL\tNO\tint\tNULL\tNULL\tint(10) unsigned\t\t",
            "global_priv\tHost\t''\tNO\tchar\tutf8mb3\tutf8mb3_bin\tchar(255)\tPRI\t",
            "global_priv\tPriv\t'{}'\tNO\tlongtext\tutf8mb4\tutf8mb4_bin\tlongtext\t\t",
        ]
    );
    // ... and information_schema.VIEWS for the view `user` (MariaDB 10.11.14's row, but for
    // the connection character set: see mysqlschema::USER_VIEW_CHARSET).
    assert_eq!(
        joined(text_rows(
            &mut s,
            "SELECT CHECK_OPTION, DEFINER, SECURITY_TYPE, CHARACTER_SET_CLIENT, \
             COLLATION_CONNECTION, IS_UPDATABLE, ALGORITHM, LEFT(VIEW_DEFINITION, 49) \
             FROM information_schema.views WHERE table_name='user' AND table_schema='mysql'"
        )),
        ["NONE\tmariadb.sys@localhost\tDEFINER\tutf8mb4\tutf8mb4_general_ci\tYES\tUNDEFINED\tselect `mysql`.`global_priv`.`Host` AS `Host`,`my"]
    );
    // CREATE needs the privilege first (MariaDB: 1142 before the note).
    ok(&mut s, "create user nob@localhost");
    let mut nob = Session::new(db.server.clone(), 2, "nob", "localhost");
    let e = fail(
        &mut nob,
        "create table if not exists mysql.general_log (a int)",
    );
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            1142,
            "CREATE command denied to user 'nob'@'localhost' for table `mysql`.`general_log`"
        )
    );
    // Without a privilege on `mysql`, information_schema.TABLES shows none of its tables.
    assert_eq!(
        joined(text_rows(
            &mut nob,
            "select count(*) from information_schema.tables where table_schema = 'mysql'"
        )),
        ["0"]
    );
}
