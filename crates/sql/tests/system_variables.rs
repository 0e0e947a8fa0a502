//! `information_schema.SYSTEM_VARIABLES` and the optimizer variables (`optimizer_switch`,
//! `join_cache_level`, ...) against MariaDB 10.11.14 (`mariadb_expected/system_variables.rs`
//! and the statements of its test suite's `include/default_optimizer_switch.inc` and
//! `include/have_innodb.inc`).

use onelog_sql::Session;

mod common;
use common::{fail, ok, text_rows, Db};

#[path = "mariadb_expected/system_variables.rs"]
mod expected;

fn session(db: &Db) -> Session {
    Session::new(db.server.clone(), 1, "root", "localhost")
}

fn tabbed(s: &mut Session, sql: &str) -> Vec<String> {
    text_rows(s, sql)
        .into_iter()
        .map(|r| r.join("\t"))
        .collect()
}

#[test]
fn system_variables_rows_match_mariadb() {
    let db = Db::open("sysvars_rows");
    let mut s = session(&db);
    let want: Vec<String> = expected::ROWS
        .iter()
        .map(|r| {
            // onelog's two documented differences (docs/SQL.md, *SYSTEM_VARIABLES*):
            // autocommit is a session-only variable; the binlog is always ROW.
            if r.starts_with("AUTOCOMMIT\t") {
                r.replacen(
                    "\tON\tON\tCOMPILE-TIME\tON\tSESSION\t",
                    "\tON\tNULL\tCOMPILE-TIME\tON\tSESSION ONLY\t",
                    1,
                )
            } else if r.starts_with("BINLOG_FORMAT\t") {
                r.replacen(
                    "\tMIXED\tMIXED\tCOMPILE-TIME\tMIXED\t",
                    "\tROW\tROW\tCOMPILE-TIME\tROW\t",
                    1,
                )
                .replacen("\tMIXED,STATEMENT,ROW\t", "\tROW\t", 1)
            } else {
                r.to_string()
            }
        })
        .collect();
    assert_eq!(tabbed(&mut s, expected::QUERY), want);
    // A value set with SET shows in its column; SET GLOBAL makes the origin SQL.
    ok(&mut s, "SET SESSION lock_wait_timeout = 5");
    ok(&mut s, "SET GLOBAL max_connections = 200");
    assert_eq!(
        tabbed(
            &mut s,
            "select variable_name, session_value, global_value, global_value_origin \
             from information_schema.system_variables \
             where variable_name in ('lock_wait_timeout', 'max_connections') order by 1"
        ),
        [
            "LOCK_WAIT_TIMEOUT\t5\t86400\tCOMPILE-TIME",
            "MAX_CONNECTIONS\tNULL\t200\tSQL",
        ]
    );
    // A server option off its default: COMMAND-LINE (the test server's max_binlog_size); at
    // its default: COMPILE-TIME. DEFAULT_VALUE is the option's default.
    assert_eq!(
        tabbed(
            &mut s,
            "select variable_name, global_value, global_value_origin, default_value, read_only \
             from information_schema.system_variables \
             where variable_name in ('max_binlog_size', 'binlog_state_interval') order by 1"
        ),
        [
            "BINLOG_STATE_INTERVAL\t2097152\tCOMPILE-TIME\t2097152\tYES",
            "MAX_BINLOG_SIZE\t1048576\tCOMMAND-LINE\t1073741824\tYES",
        ]
    );
    // The bounds SET clamps to: onelog's for an integer, MariaDB's for max_statement_time
    // (a DOUBLE clamped to 0..31536000 by its own SET).
    assert_eq!(
        tabbed(
            &mut s,
            "select variable_name, variable_type, numeric_min_value, numeric_max_value, \
             numeric_block_size from information_schema.system_variables \
             where variable_name in ('max_statement_time', 'innodb_flush_log_at_trx_commit') \
             order by 1"
        ),
        [
            "INNODB_FLUSH_LOG_AT_TRX_COMMIT\tBIGINT UNSIGNED\t0\t2\t0",
            "MAX_STATEMENT_TIME\tDOUBLE\t0\t31536000\tNULL",
        ]
    );
    // One row per variable SHOW VARIABLES lists, each with a comment.
    let all = tabbed(
        &mut s,
        "select count(*), sum(variable_comment <> '') from information_schema.system_variables",
    );
    let shown = text_rows(&mut s, "SHOW VARIABLES").len();
    assert_eq!(all, [format!("{shown}\t{shown}")]);
    // include/have_innodb.inc's probe.
    assert_eq!(
        tabbed(
            &mut s,
            "select count(*) from information_schema.system_variables \
             where variable_name='have_sanitizer' and global_value like 'MSAN%'"
        ),
        ["0"]
    );
}

/// MariaDB 10.11's default, `SELECT @@optimizer_switch`.
const DEFAULT_SWITCH: &str = "index_merge=on,index_merge_union=on,index_merge_sort_union=on,index_merge_intersection=on,index_merge_sort_intersection=off,engine_condition_pushdown=off,index_condition_pushdown=on,derived_merge=on,derived_with_keys=on,firstmatch=on,loosescan=on,materialization=on,in_to_exists=on,semijoin=on,partial_match_rowid_merge=on,partial_match_table_scan=on,subquery_cache=on,mrr=off,mrr_cost_based=off,mrr_sort_keys=off,outer_join_with_cache=on,semijoin_with_cache=on,join_cache_incremental=on,join_cache_hashed=on,join_cache_bka=on,optimize_join_buffer_size=on,table_elimination=on,extended_keys=on,exists_to_in=on,orderby_uses_equalities=on,condition_pushdown_for_derived=on,split_materialized=on,condition_pushdown_for_subquery=on,rowid_filter=on,condition_pushdown_from_having=on,not_null_range_scan=off,hash_join_cardinality=off,cset_narrowing=off";

#[test]
fn optimizer_switch_reads_mariadbs_defaults_and_accepts_only_them() {
    let db = Db::open("sysvars_optimizer");
    let mut s = session(&db);
    for v in ["@@optimizer_switch", "@@global.optimizer_switch"] {
        assert_eq!(tabbed(&mut s, &format!("SELECT {v}")), [DEFAULT_SWITCH]);
    }
    assert_eq!(
        tabbed(
            &mut s,
            "SELECT @@join_cache_level, @@join_buffer_size, @@join_buffer_space_limit, \
             @@optimizer_search_depth, @@optimizer_use_condition_selectivity, \
             @@optimizer_prune_level"
        ),
        ["2\t262144\t2097152\t62\t4\t2"]
    );
    // include/default_optimizer_switch.inc, statement for statement.
    for sql in [
        "set @save_optimizer_switch=@@optimizer_switch",
        "set @save_join_cache_level=@@join_cache_level",
        "set optimizer_switch=\"index_merge=on,index_merge_union=on,index_merge_sort_union=on,index_merge_intersection=on,index_merge_sort_intersection=off,engine_condition_pushdown=off,index_condition_pushdown=on,derived_merge=on,derived_with_keys=on,firstmatch=on,loosescan=on,materialization=on,in_to_exists=on,semijoin=on,partial_match_rowid_merge=on,partial_match_table_scan=on,subquery_cache=on,mrr=off,mrr_cost_based=off,mrr_sort_keys=off,outer_join_with_cache=on,semijoin_with_cache=on,join_cache_incremental=on,join_cache_hashed=on,join_cache_bka=on,optimize_join_buffer_size=on,table_elimination=on,extended_keys=on,exists_to_in=on,orderby_uses_equalities=on,condition_pushdown_for_derived=on,split_materialized=on,condition_pushdown_for_subquery=on,rowid_filter=on,condition_pushdown_from_having=on\"",
        "set optimizer_use_condition_selectivity=4",
        "set optimizer_search_depth=62",
        "set join_buffer_space_limit=2097152",
        "set join_cache_level=2",
        "set join_buffer_size=262144",
        "set optimizer_switch=@save_optimizer_switch",
        "set join_cache_level=@save_join_cache_level",
    ] {
        ok(&mut s, sql);
    }
    // MariaDB's syntax: partial lists, `default`, case and trailing spaces.
    for v in [
        "'mrr=off'",
        "'default'",
        "'MRR=OFF ,mrr=default'",
        "''",
        "DEFAULT",
    ] {
        ok(&mut s, &format!("SET optimizer_switch = {v}"));
        ok(&mut s, &format!("SET GLOBAL optimizer_switch = {v}"));
    }
    assert_eq!(
        tabbed(&mut s, "SELECT @@optimizer_switch"),
        [DEFAULT_SWITCH]
    );
    // A flag changed: onelog has no such optimization, so it is refused (1235, naming it).
    let e = fail(&mut s, "SET optimizer_switch = 'mrr=on'");
    assert_eq!(e.code, 1235);
    assert!(
        e.message.contains("'optimizer_switch mrr=on'"),
        "{}",
        e.message
    );
    let e = fail(
        &mut s,
        "SET GLOBAL optimizer_switch = 'default,semijoin=off'",
    );
    assert_eq!(e.code, 1235);
    assert!(e.message.contains("semijoin=off"), "{}", e.message);
    // What MariaDB 10.11.14 refuses, with its error and text.
    for (v, bad) in [
        ("'foo=on'", "foo=on"),
        ("'mrr=maybe'", "mrr=maybe"),
        ("'mrr=off,foo'", "foo"),
        ("' mrr=off'", " mrr=off"),
        ("'default=on'", "default=on"),
        ("NULL", "NULL"),
    ] {
        let e = fail(&mut s, &format!("SET optimizer_switch = {v}"));
        assert_eq!(
            (e.code, e.message),
            (
                1231,
                format!("Variable 'optimizer_switch' can't be set to the value of '{bad}'")
            ),
            "{v}"
        );
    }
    assert_eq!(
        tabbed(&mut s, "SELECT @@optimizer_switch"),
        [DEFAULT_SWITCH]
    );
    // The numeric knobs: their defaults only.
    for sql in [
        "SET join_cache_level = 6",
        "SET optimizer_search_depth = 0",
        "SET GLOBAL join_buffer_size = 1048576",
        "SET optimizer_use_condition_selectivity = 1",
        "SET optimizer_prune_level = 0",
    ] {
        assert_eq!(fail(&mut s, sql).code, 1235, "{sql}");
    }
    assert_eq!(fail(&mut s, "SET join_cache_level = 'x'").code, 1232);
}
