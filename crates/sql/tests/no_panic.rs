//! Arbitrary statement text never panics the SQL layer: every input gives results or errors.

use std::sync::atomic::{AtomicU32, Ordering};

use onelog_sql::{Server, ServerConfig, Session};
use proptest::prelude::*;

static N: AtomicU32 = AtomicU32::new(0);

const WORDS: &[&str] = &[
    "SELECT",
    "INSERT",
    "INTO",
    "VALUES",
    "UPDATE",
    "SET",
    "DELETE",
    "FROM",
    "WHERE",
    "AND",
    "OR",
    "NOT",
    "IN",
    "BETWEEN",
    "LIKE",
    "IS",
    "NULL",
    "ORDER",
    "BY",
    "GROUP",
    "HAVING",
    "LIMIT",
    "OFFSET",
    "DESC",
    "DISTINCT",
    "COUNT(*)",
    "SUM(k)",
    "t",
    "id",
    "k",
    "c",
    "(",
    ")",
    ",",
    "=",
    "<",
    ">",
    "+",
    "-",
    "*",
    "/",
    "1",
    "0",
    "-1",
    "99999999999999999999",
    "'x'",
    "'2024-01-01'",
    "1.5",
    "1e308",
    "?",
    "@x",
    "@@autocommit",
    "CONCAT(c, 1)",
    "SUBSTRING(c, -1)",
    "ROUND(k, -40)",
    "LPAD(c, 5, '')",
    "CAST(c AS SIGNED)",
    ";",
    "/*!",
    "*/",
    "--",
    "BEGIN",
    "COMMIT",
    "ROLLBACK",
    "CREATE",
    "TABLE",
    "DROP",
    "INDEX",
    "ON",
    "PRIMARY",
    "KEY",
    "INT",
    "UNIQUE",
    "DEFAULT",
    "FOR UPDATE",
    "`t`",
    "\"q\"",
    "\\",
    "X'4'",
    "0x",
    "DIV",
    "%",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, failure_persistence: None, ..ProptestConfig::default() })]
    #[test]
    fn random_statements_never_panic(words in proptest::collection::vec(0..WORDS.len(), 1..14)) {
        let dir = std::env::temp_dir().join(format!(
            "onelog-sql-nopanic-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        let mut cfg = ServerConfig::new(&dir);
        cfg.max_binlog_size = 1 << 20;
        cfg.flush_log_at_trx_commit = 2;
        let (server, _) = Server::open(cfg).unwrap();
        let mut s = Session::new(server.clone(), 1, "root", "localhost");
        for q in [
            "CREATE DATABASE d",
            "USE d",
            "CREATE TABLE t (id INT PRIMARY KEY, k INT, c VARCHAR(20), KEY kk (k))",
            "INSERT INTO t VALUES (1, 1, 'a'), (2, NULL, NULL), (3, 3, '2024-01-01')",
        ] {
            s.query(q).pop().unwrap().unwrap();
        }
        let sql: Vec<&str> = words.iter().map(|&i| WORDS[i]).collect();
        let sql = sql.join(" ");
        let _ = s.query(&sql);
        let _ = s.prepare(&sql);
        drop(s);
        server.shutdown().unwrap();
        let _ = std::fs::remove_dir_all(&dir);
    }
}
