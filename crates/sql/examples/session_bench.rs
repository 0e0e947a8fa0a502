//! Rough single-session throughput of sysbench's hot statements through `Session`
//! (prepared point selects, PK updates, autocommit), at durability level 2 so fsync does not
//! dominate. `cargo run --release -p onelog-sql --example session_bench [rows] [iterations]`.

use std::time::Instant;

use onelog_sql::{Server, ServerConfig, Session, Value};

fn main() {
    let mut args = std::env::args().skip(1);
    let rows: i64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(10_000);
    let iters: i64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let dir = std::env::temp_dir().join(format!("onelog-session-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut cfg = ServerConfig::new(&dir);
    cfg.flush_log_at_trx_commit = 2;
    cfg.max_binlog_size = 64 << 20;
    let (server, _) = Server::open(cfg).expect("open");
    let mut s = Session::new(server.clone(), 1, "root", "localhost");
    for q in [
        "CREATE DATABASE sbtest",
        "USE sbtest",
        "CREATE TABLE sbtest1(id INTEGER NOT NULL AUTO_INCREMENT, k INTEGER DEFAULT '0' NOT NULL, c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id)) /*! ENGINE = innodb */",
    ] {
        s.query(q).pop().expect("result").expect(q);
    }
    let mut batch = String::new();
    for i in 1..=rows {
        if batch.is_empty() {
            batch.push_str("INSERT INTO sbtest1(k, c, pad) VALUES");
        } else {
            batch.push(',');
        }
        batch.push_str(&format!("({}, '{:0>119}', '{:0>59}')", i % 1000, i, i));
        if i % 1000 == 0 || i == rows {
            s.query(&batch).pop().expect("result").expect("insert");
            batch.clear();
        }
    }
    s.query("CREATE INDEX k_1 ON sbtest1(k)")
        .pop()
        .expect("r")
        .expect("index");
    let point = s
        .prepare("SELECT c FROM sbtest1 WHERE id=?")
        .expect("prepare");
    let t = Instant::now();
    for i in 0..iters {
        s.execute(point.stmt_id, &[Value::Int(i % rows + 1)])
            .expect("select");
    }
    let e = t.elapsed();
    println!("point select: {:.0}/s", iters as f64 / e.as_secs_f64());
    let range = s
        .prepare("SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c")
        .expect("prepare");
    let n = iters / 100;
    let t = Instant::now();
    for i in 0..n {
        let a = i % (rows - 100) + 1;
        s.execute(range.stmt_id, &[Value::Int(a), Value::Int(a + 99)])
            .expect("range");
    }
    println!(
        "order range (100 rows): {:.0}/s",
        n as f64 / t.elapsed().as_secs_f64()
    );
    let upd = s
        .prepare("UPDATE sbtest1 SET k=k+1 WHERE id=?")
        .expect("prepare");
    let n = iters / 10;
    let t = Instant::now();
    for i in 0..n {
        s.execute(upd.stmt_id, &[Value::Int(i % rows + 1)])
            .expect("update");
    }
    println!(
        "index update (autocommit): {:.0}/s",
        n as f64 / t.elapsed().as_secs_f64()
    );
    let t = Instant::now();
    for i in 0..n {
        s.query(&format!("SELECT c FROM sbtest1 WHERE id={}", i % rows + 1))
            .pop()
            .expect("r")
            .expect("select");
    }
    println!(
        "point select (text protocol): {:.0}/s",
        n as f64 / t.elapsed().as_secs_f64()
    );
    drop(s);
    server.shutdown().expect("shutdown");
    let _ = std::fs::remove_dir_all(&dir);
}
