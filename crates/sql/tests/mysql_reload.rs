//! The reload of `mysql`'s account tables from a dump (`execute::admin::reload`): the
//! statements `mariadb-dump --all-databases` writes for `mysql.global_priv` and `mysql.db`,
//! staged until FLUSH PRIVILEGES or the session's end, then the accounts (one logged change,
//! kept across a restart); what onelog cannot represent refused, never dropped.

use onelog_sql::{Server, ServerConfig, Session};

mod common;
use common::{fail, ok, text_rows, Db, TempDir};

fn root(server: &std::sync::Arc<Server>, id: u32) -> Session {
    Session::new(server.clone(), id, "root", "localhost")
}

const ROOT_ROW: &str = r#"('localhost','root','{\"access\":549755813887,\"version_id\":101109,\"plugin\":\"mysql_native_password\",\"authentication_string\":\"invalid\",\"auth_or\":[{},{\"plugin\":\"unix_socket\"}]}')"#;
/// `u1`@`%` with the password `pw` and no global privilege.
const U1_ROW: &str = r#"('%','u1','{\"access\":0,\"version_id\":101109,\"plugin\":\"mysql_native_password\",\"authentication_string\":\"*D821809F681A40A6E379B50D0463EFAE20BDD122\"}')"#;
const U1_GRANT: &str = "GRANT USAGE ON *.* TO `u1`@`%` IDENTIFIED BY PASSWORD '*D821809F681A40A6E379B50D0463EFAE20BDD122'";

/// A `db` row: `u1`@`%` holds SELECT and INSERT on `d1`.
fn db_row() -> String {
    let yn: Vec<&str> = (0..20).map(|i| if i < 2 { "'Y'" } else { "'N'" }).collect();
    format!("('%','d1','u1',{})", yn.join(","))
}

/// SHOW CREATE TABLE mysql.`t` (what mariadb-dump writes as its CREATE TABLE).
fn create_text(s: &mut Session, t: &str) -> String {
    text_rows(s, &format!("show create table mysql.{t}"))[0][1].clone()
}

/// The statements mariadb-dump writes for table `t` of `mysql` holding `rows`.
fn reload_table(s: &mut Session, t: &str, create: &str, rows: &[String]) {
    ok(s, "use mysql");
    ok(s, &format!("DROP TABLE IF EXISTS `{t}`"));
    ok(s, create);
    ok(s, &format!("LOCK TABLES `{t}` WRITE"));
    ok(s, &format!("/*!40000 ALTER TABLE `{t}` DISABLE KEYS */"));
    if !rows.is_empty() {
        ok(s, &format!("INSERT INTO `{t}` VALUES {}", rows.join(",")));
    }
    ok(s, &format!("/*!40000 ALTER TABLE `{t}` ENABLE KEYS */"));
    ok(s, "UNLOCK TABLES");
}

fn grants(s: &mut Session, account: &str) -> Vec<String> {
    text_rows(s, &format!("show grants for {account}"))
        .into_iter()
        .map(|r| r[0].clone())
        .collect()
}

#[test]
fn a_dump_of_the_account_tables_applies_at_flush_privileges() {
    let db = Db::open("reload-flush");
    let mut s = root(&db.server, 1);
    let mut other = root(&db.server, 2);
    ok(&mut s, "create database d1");
    ok(&mut s, "create user old@'%'");
    ok(&mut s, "grant select on d1.* to old@'%'");
    let (gp, dbt) = (
        create_text(&mut s, "global_priv"),
        create_text(&mut s, "db"),
    );
    // The dump's order: `db` first, then `global_priv`, plus an always-empty table.
    let tp = create_text(&mut s, "tables_priv");
    reload_table(&mut s, "db", &dbt, &[db_row()]);
    reload_table(
        &mut s,
        "global_priv",
        &gp,
        &[ROOT_ROW.into(), U1_ROW.into()],
    );
    reload_table(&mut s, "tables_priv", &tp, &[]);
    // Staged only: no session sees u1 yet, and old keeps its grant.
    assert_eq!(fail(&mut other, "show grants for u1@'%'").code, 1141);
    assert_eq!(grants(&mut other, "old@'%'").len(), 2);
    ok(&mut s, "FLUSH PRIVILEGES");
    assert_eq!(
        grants(&mut other, "u1@'%'"),
        [U1_GRANT, "GRANT SELECT, INSERT ON `d1`.* TO `u1`@`%`"]
    );
    assert_eq!(fail(&mut other, "show grants for old@'%'").code, 1141);
    assert_eq!(
        text_rows(
            &mut other,
            "select user, host from mysql.global_priv order by user"
        ),
        [["root", "localhost"], ["u1", "%"]]
    );
    // Applied once: a second FLUSH PRIVILEGES changes nothing, a new INSERT is refused.
    ok(&mut s, "FLUSH PRIVILEGES");
    assert_eq!(
        fail(&mut s, &format!("INSERT INTO global_priv VALUES {U1_ROW}")).code,
        1036
    );
}

#[test]
fn the_reload_applies_when_the_session_ends_and_survives_a_restart() {
    let dir = TempDir::new("reload-end");
    let open = || {
        let mut cfg = ServerConfig::new(dir.path());
        cfg.max_binlog_size = 1 << 20;
        Server::open(cfg).unwrap().0
    };
    let server = open();
    let mut s = root(&server, 1);
    ok(&mut s, "create database d1");
    ok(&mut s, "create user u1@'%'");
    ok(&mut s, "grant select, insert on d1.* to u1@'%'");
    ok(&mut s, "create user gone@localhost");
    let gp = create_text(&mut s, "global_priv");
    let mut r = root(&server, 2);
    reload_table(
        &mut r,
        "global_priv",
        &gp,
        &[ROOT_ROW.into(), U1_ROW.into()],
    );
    drop(r);
    // `global_priv` alone: u1 gets its password and keeps its database grant.
    assert_eq!(
        grants(&mut s, "u1@'%'"),
        [U1_GRANT, "GRANT SELECT, INSERT ON `d1`.* TO `u1`@`%`"]
    );
    assert_eq!(fail(&mut s, "show grants for gone@localhost").code, 1141);
    drop(s);
    server.shutdown().unwrap();
    let server = open();
    let mut s = root(&server, 1);
    assert_eq!(grants(&mut s, "u1@'%'")[0], U1_GRANT);
    assert_eq!(fail(&mut s, "show grants for gone@localhost").code, 1141);
    drop(s);
    server.shutdown().unwrap();
}

#[test]
fn what_onelog_cannot_represent_is_refused_and_nothing_is_staged() {
    let db = Db::open("reload-refuse");
    let mut s = root(&db.server, 1);
    ok(&mut s, "create user keep@'%'");
    let gp = create_text(&mut s, "global_priv");
    ok(&mut s, "use mysql");
    // Outside a reload the tables stay read only.
    assert_eq!(
        fail(&mut s, &format!("INSERT INTO global_priv VALUES {U1_ROW}")).code,
        1036
    );
    ok(&mut s, "DROP TABLE IF EXISTS global_priv");
    // Dropped and not created yet: no table; another definition is refused.
    assert_eq!(
        fail(&mut s, &format!("INSERT INTO global_priv VALUES {U1_ROW}")).code,
        1146
    );
    let other = gp.replace("longtext", "text");
    let e = fail(&mut s, &other);
    assert_eq!(e.code, 1235, "{}", e.message);
    assert!(e.message.contains("mysql.global_priv"), "{}", e.message);
    assert_eq!(fail(&mut s, "FLUSH PRIVILEGES").code, 1146);
    ok(&mut s, &gp);
    assert_eq!(fail(&mut s, &gp).code, 1050);
    for (priv_json, lacks) in [
        (
            r#"{\"access\":0,\"version_id\":101109,\"plugin\":\"mysql_native_password\",\"authentication_string\":\"\",\"account_locked\":true}"#,
            "locked accounts",
        ),
        (
            r#"{\"access\":0,\"version_id\":101109,\"plugin\":\"ed25519\",\"authentication_string\":\"x\"}"#,
            "plugin 'ed25519'",
        ),
        (
            r#"{\"access\":0,\"version_id\":101109,\"plugin\":\"mysql_native_password\",\"authentication_string\":\"\",\"is_role\":true}"#,
            "roles",
        ),
        (
            r#"{\"access\":268435456,\"version_id\":101109,\"plugin\":\"mysql_native_password\",\"authentication_string\":\"\"}"#,
            "access bits 0x10000000",
        ),
        (
            r#"{\"access\":3,\"plugin\":\"mysql_native_password\",\"authentication_string\":\"\"}"#,
            "older MariaDB's layout",
        ),
        // REPLICATION SLAVE from a 10.5.8 row: MariaDB adds SLAVE MONITOR on load.
        (
            r#"{\"access\":524288,\"version_id\":100508,\"plugin\":\"mysql_native_password\",\"authentication_string\":\"\"}"#,
            "older MariaDB's layout",
        ),
        (
            r#"{\"access\":0,\"version_id\":101109,\"plugin\":\"mysql_native_password\",\"authentication_string\":\"\",\"password_last_changed\":0}"#,
            "PASSWORD EXPIRE",
        ),
    ] {
        // A good row beside the refused one: the statement stages neither.
        let sql = format!("INSERT INTO global_priv VALUES {U1_ROW},('%','x','{priv_json}')");
        let e = fail(&mut s, &sql);
        assert_eq!(e.code, 1235, "{sql}: {}", e.message);
        assert!(e.message.contains(lacks), "{sql}: {}", e.message);
    }
    assert_eq!(
        fail(
            &mut s,
            "INSERT INTO global_priv VALUES ('%','x','not json')"
        )
        .code,
        4025
    );
    ok(
        &mut s,
        &format!("INSERT INTO global_priv VALUES {ROOT_ROW}"),
    );
    assert_eq!(
        fail(
            &mut s,
            &format!("INSERT INTO global_priv VALUES {ROOT_ROW}")
        )
        .code,
        1062
    );
    // Rows of a table onelog keeps empty.
    let tp = create_text(&mut s, "tables_priv");
    ok(&mut s, "DROP TABLE tables_priv");
    ok(&mut s, &tp);
    let e = fail(&mut s, "INSERT INTO tables_priv VALUES ('%','d','u','t','root@localhost','2020-01-01 00:00:00','Select','')");
    assert!(e.message.contains("table privileges"), "{}", e.message);
    ok(&mut s, "FLUSH PRIVILEGES");
    // Only root's row was staged: keep is gone, root remains.
    assert_eq!(fail(&mut s, "show grants for keep@'%'").code, 1141);
    assert_eq!(grants(&mut s, "root@localhost").len(), 1);
}

#[test]
fn a_cut_short_reload_is_abandoned_and_the_view_user_cannot_change() {
    let db = Db::open("reload-cut");
    let mut s = root(&db.server, 1);
    ok(&mut s, "create user keep@'%'");
    let gp = create_text(&mut s, "global_priv");
    let mut r = root(&db.server, 2);
    ok(&mut r, "use mysql");
    ok(&mut r, "DROP TABLE IF EXISTS global_priv");
    ok(&mut r, &gp);
    ok(&mut r, "LOCK TABLES global_priv WRITE");
    ok(
        &mut r,
        &format!("INSERT INTO global_priv VALUES {ROOT_ROW}"),
    );
    // The connection ends before UNLOCK TABLES: the dump was cut short.
    drop(r);
    assert_eq!(grants(&mut s, "keep@'%'").len(), 1);
    // `user` is a view: DROP TABLE is 1965 (a note with IF EXISTS), as MariaDB.
    ok(&mut s, "use mysql");
    assert_eq!(fail(&mut s, "DROP TABLE user").code, 1965);
    ok(&mut s, "DROP TABLE IF EXISTS user");
    assert_eq!(
        text_rows(&mut s, "show warnings"),
        [["Note", "1965", "'mysql.user' is a view"]]
    );
    let view = text_rows(&mut s, "show create view mysql.user")[0][1].clone();
    ok(&mut s, "/*!50001 DROP VIEW IF EXISTS `user`*/");
    let stand_in = "/*!50001 CREATE VIEW `user` AS SELECT\n 1 AS `Host`,\n 1 AS `User`,\n 1 AS `Password`,\n 1 AS `Select_priv`,\n 1 AS `Insert_priv`,\n 1 AS `Update_priv`,\n 1 AS `Delete_priv`,\n 1 AS `Create_priv`,\n 1 AS `Drop_priv`,\n 1 AS `Reload_priv`,\n 1 AS `Shutdown_priv`,\n 1 AS `Process_priv`,\n 1 AS `File_priv`,\n 1 AS `Grant_priv`,\n 1 AS `References_priv`,\n 1 AS `Index_priv`,\n 1 AS `Alter_priv`,\n 1 AS `Show_db_priv`,\n 1 AS `Super_priv`,\n 1 AS `Create_tmp_table_priv`,\n 1 AS `Lock_tables_priv`,\n 1 AS `Execute_priv`,\n 1 AS `Repl_slave_priv`,\n 1 AS `Repl_client_priv`,\n 1 AS `Create_view_priv`,\n 1 AS `Show_view_priv`,\n 1 AS `Create_routine_priv`,\n 1 AS `Alter_routine_priv`,\n 1 AS `Create_user_priv`,\n 1 AS `Event_priv`,\n 1 AS `Trigger_priv`,\n 1 AS `Create_tablespace_priv`,\n 1 AS `Delete_history_priv`,\n 1 AS `ssl_type`,\n 1 AS `ssl_cipher`,\n 1 AS `x509_issuer`,\n 1 AS `x509_subject`,\n 1 AS `max_questions`,\n 1 AS `max_updates`,\n 1 AS `max_connections`,\n 1 AS `max_user_connections`,\n 1 AS `plugin`,\n 1 AS `authentication_string`,\n 1 AS `password_expired`,\n 1 AS `is_role`,\n 1 AS `default_role`,\n 1 AS `max_statement_time` */";
    ok(&mut s, stand_in);
    // mariadb-dump 10.11.19 writes NULL where earlier 10.11 releases wrote 1.
    ok(&mut s, &stand_in.replace(" 1 AS ", " NULL AS "));
    let e = fail(&mut s, "CREATE VIEW user AS SELECT 1 AS Host");
    assert_eq!(e.code, 1235, "{}", e.message);
    ok(&mut s, &view);
    // Done: a second CREATE VIEW is not a reload's any more.
    assert_ne!(run_code(&mut s, &view), 0);
}

fn run_code(s: &mut Session, sql: &str) -> u16 {
    common::run(s, sql).err().map_or(0, |e| e.code)
}

#[test]
fn password_gives_the_hash_an_account_stores() {
    // Measured on MariaDB 10.11.14.
    let db = Db::open("reload-password");
    let mut s = root(&db.server, 1);
    assert_eq!(
        text_rows(
            &mut s,
            "select password('dump-pw'), password(''), password(NULL), password(123)"
        ),
        [[
            "*E531B9BDBC8C0E7ECB486514E913074123DFA180",
            "",
            "",
            "*23AE809DDACAF96AF0FD78ED04B6A265E05AA257"
        ]]
    );
}
