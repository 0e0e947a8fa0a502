//! Accounts in the catalog: logged as DDL, replayed by recovery, saved in checkpoints, and
//! validated like MySQL (1396 for CREATE of an existing / DROP of a missing account).

use std::sync::Arc;

use onelog_engine::{AccountDef, Engine, EngineOptions, GrantDef};
use onelog_log::{FileSystem, ReadStart, ReaderOptions, RecordKind, SimFs};

fn options() -> EngineOptions {
    let mut o = EngineOptions::new("/data");
    o.log.segment_size = 256 << 10;
    o.background_checkpoints = false;
    o
}

fn open(fs: &Arc<SimFs>) -> Arc<Engine> {
    let fs: Arc<dyn FileSystem> = fs.clone();
    Engine::open(fs, options()).unwrap().0
}

fn account(user: &str, host: &str, hash: &[u8]) -> AccountDef {
    AccountDef {
        user: user.into(),
        host: host.into(),
        auth_hash: hash.to_vec(),
        auth: Default::default(),
        grants: vec![],
    }
}

fn make_accounts(e: &Engine) {
    assert!(e
        .create_account(
            account("app", "%", &[7; 20]),
            false,
            "CREATE USER 'app'@'%'"
        )
        .unwrap());
    assert!(!e
        .create_account(
            account("app", "%", &[1; 20]),
            true,
            "CREATE USER IF NOT EXISTS"
        )
        .unwrap());
    assert_eq!(
        e.create_account(
            account("app", "%", &[1; 20]),
            false,
            "CREATE USER 'app'@'%'"
        )
        .unwrap_err()
        .code(),
        1396
    );
    e.create_account(
        account("gone", "localhost", &[]),
        false,
        "CREATE USER 'gone'@'localhost'",
    )
    .unwrap();
    e.alter_account("app", "%", "GRANT ALL ON d.* TO 'app'@'%'", |a| {
        let mut a = a.clone();
        a.grants.push(GrantDef {
            scope: "d".into(),
            privileges: 0xff,
        });
        Ok(a)
    })
    .unwrap();
    assert!(e
        .drop_account("gone", "localhost", false, "DROP USER 'gone'@'localhost'")
        .unwrap());
    assert!(!e
        .drop_account(
            "gone",
            "localhost",
            true,
            "DROP USER IF EXISTS 'gone'@'localhost'"
        )
        .unwrap());
    assert_eq!(
        e.drop_account("gone", "localhost", false, "DROP USER 'gone'@'localhost'")
            .unwrap_err()
            .code(),
        1396
    );
    assert_eq!(
        e.alter_account("nobody", "%", "SET PASSWORD", |a| Ok(a.clone()))
            .unwrap_err()
            .code(),
        1396
    );
}

fn expected() -> Vec<AccountDef> {
    vec![AccountDef {
        user: "app".into(),
        host: "%".into(),
        auth_hash: vec![7; 20],
        auth: Default::default(),
        grants: vec![GrantDef {
            scope: "d".into(),
            privileges: 0xff,
        }],
    }]
}

fn accounts(e: &Engine) -> Vec<AccountDef> {
    e.catalog().accounts().map(|a| (**a).clone()).collect()
}

#[test]
fn accounts_survive_replay_of_the_log() {
    let fs = SimFs::new();
    let e = open(&fs);
    make_accounts(&e);
    assert_eq!(accounts(&e), expected());
    e.log().flush().unwrap();
    drop(e);
    let e = open(&fs);
    assert_eq!(accounts(&e), expected());
    // Each successful account statement is one DDL record carrying its statement text.
    let mut r = e
        .log()
        .reader(
            ReadStart::Lsn(0),
            ReaderOptions {
                include_non_durable: true,
                include_state_records: false,
            },
        )
        .unwrap();
    let mut ddl = 0;
    while let Some(rec) = r.next().unwrap() {
        assert_eq!(rec.kind, RecordKind::Ddl);
        ddl += 1;
    }
    assert_eq!(ddl, 4);
}

#[test]
fn accounts_survive_a_checkpoint_and_later_changes_replay_on_top() {
    let fs = SimFs::new();
    let e = open(&fs);
    make_accounts(&e);
    e.checkpoint().unwrap();
    e.alter_account("app", "%", "SET PASSWORD FOR 'app'@'%' = '*..'", |a| {
        let mut a = a.clone();
        a.auth_hash = vec![9; 20];
        Ok(a)
    })
    .unwrap();
    e.shutdown().unwrap();
    drop(e);
    let e = open(&fs);
    let mut want = expected();
    want[0].auth_hash = vec![9; 20];
    assert_eq!(accounts(&e), want);
    assert_eq!(
        e.catalog().account("app", "%").unwrap().auth_hash,
        vec![9; 20]
    );
    assert!(e.catalog().account("app", "localhost").is_none());
}

#[test]
fn replacing_all_accounts_is_one_logged_change_that_survives_restart() {
    let fs = SimFs::new();
    let e = open(&fs);
    make_accounts(&e);
    let mut seen = Vec::new();
    e.replace_accounts("FLUSH PRIVILEGES", |cur| {
        seen = cur;
        Ok(vec![
            account("root", "localhost", &[]),
            account("u1", "%", &[4; 20]),
        ])
    })
    .unwrap();
    assert_eq!(seen, expected());
    let want = vec![
        account("root", "localhost", &[]),
        account("u1", "%", &[4; 20]),
    ];
    assert_eq!(accounts(&e), want);
    // The same account twice: 1396, nothing changes.
    let twice = e
        .replace_accounts("FLUSH PRIVILEGES", |_| {
            Ok(vec![account("x", "%", &[]), account("x", "%", &[])])
        })
        .unwrap_err();
    assert_eq!(twice.code(), 1396);
    assert_eq!(accounts(&e), want);
    e.log().flush().unwrap();
    drop(e);
    let e = open(&fs);
    assert_eq!(accounts(&e), want);
    e.checkpoint().unwrap();
    e.shutdown().unwrap();
    drop(e);
    assert_eq!(accounts(&open(&fs)), want);
}

#[test]
fn a_transaction_uses_its_own_lock_wait_timeout() {
    use onelog_binlog::Value;
    use onelog_engine::{ColumnSpec, SqlType, TableSpec};
    use std::time::Duration;

    let fs = SimFs::new();
    let mut o = options();
    // The engine default would make the second transaction wait an hour.
    o.lock_wait_timeout = Duration::from_secs(3600);
    let fsd: Arc<dyn FileSystem> = fs.clone();
    let e = Engine::open(fsd, o).unwrap().0;
    e.create_database("d", false, "CREATE DATABASE d").unwrap();
    let t = e
        .create_table(
            TableSpec {
                db: "d".into(),
                name: "t".into(),
                columns: vec![ColumnSpec::new("id", SqlType::Int { unsigned: false }).not_null()],
                primary_key: vec!["id".into()],
                indexes: vec![],
            },
            false,
            "CREATE TABLE d.t (id INT PRIMARY KEY)",
        )
        .unwrap();
    let mut a = e.begin();
    a.insert(t, vec![Value::Int(1)]).unwrap();
    let mut b = e.begin();
    b.set_lock_wait_timeout(Duration::ZERO);
    assert_eq!(b.insert(t, vec![Value::Int(1)]).unwrap_err().code(), 1205);
    b.rollback();
    a.commit().unwrap();
}
