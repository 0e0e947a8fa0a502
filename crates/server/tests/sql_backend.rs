//! The adapter to the real SQL layer: `ServerHandle::start` on an `onelog_sql::Server` in a
//! temporary data directory, reached over loopback by the test client.

mod common;

use std::sync::Arc;

use common::{Client, Opts, Resp};

fn temp_datadir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("onelog-server-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn real_sql_server_authenticates_root_and_answers_queries() {
    let dir = temp_datadir("sql-backend");
    let mut config = onelog_sql::ServerConfig::new(&dir);
    config.port = 0;
    // Small segments keep the engine's preallocation cheap.
    config.max_binlog_size = 1 << 20;
    // root without a password over TCP (the default root logs in only through the unix socket).
    config.root_auth = onelog_sql::RootAuth::Normal;
    let (server, _report) = onelog_sql::Server::open(config.clone()).unwrap();
    let h = onelog_server::ServerHandle::start(Arc::clone(&server), &config).unwrap();
    let addr = h.local_addr().unwrap();

    let mut c = Client::connect_tcp(addr, &Opts::default()).unwrap();
    c.command(0x0E, &[]);
    assert!(matches!(c.read_result(false).unwrap(), Resp::Ok { .. }));
    let r = c.query_one("SELECT 1").unwrap();
    let Resp::Text { rows, .. } = r else {
        panic!("{r:?}")
    };
    assert_eq!(rows, vec![vec![Some(b"1".to_vec())]]);
    let r = c.query("CREATE DATABASE shop; USE shop; CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(20)); INSERT INTO t VALUES (1, 'a'), (2, NULL)");
    assert!(r.iter().all(Result::is_ok), "{r:?}");
    let (id, n, cols) = c
        .prepare("SELECT id, name FROM t WHERE id >= ? ORDER BY id")
        .unwrap();
    assert_eq!((n, cols.len()), (1, 2));
    let r = c.execute(id, &[mysql_common::Value::Int(1)]).unwrap();
    let Resp::Binary { rows, .. } = r else {
        panic!("{r:?}")
    };
    assert_eq!(
        rows,
        vec![
            vec![
                mysql_common::Value::Int(1),
                mysql_common::Value::Bytes(b"a".to_vec())
            ],
            vec![mysql_common::Value::Int(2), mysql_common::Value::NULL],
        ]
    );
    // root has no password: one sent is refused.
    let e = Client::connect_tcp(
        addr,
        &Opts {
            password: "x",
            ..Opts::default()
        },
    )
    .err()
    .unwrap();
    assert_eq!(e.code, 1045);

    drop(c);
    h.shutdown();
    server.shutdown().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}
