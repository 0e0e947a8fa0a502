//! Writes through views (INSERT / UPDATE / DELETE on updatable views, WITH CHECK OPTION), as
//! MariaDB 10.11 answered the same statements run in the same order (generated against the
//! real server while writing these; rows as `mariadb -B -N` prints them).

mod common;
use common::{check_cases, err, fail, ok, text_rows, Case};

const SINGLE_SETUP: &[&str] = &[
    "create table t (a int primary key, b varchar(10), c int not null default 0, d int)",
    "insert into t values (1,'x',10,1),(2,'y',20,2),(3,'z',30,3)",
    "create view v as select a, b, c from t where a > 1",
    "create view v2 (x, y) as select a+1, b from t",
    "create view v3 as select a, b as bb, c*2 as c2 from t where c < 100",
    "create algorithm=temptable view vt as select a, b from t",
    "create view vlim as select a, b from t limit 2",
    "create view vd as select distinct a from t",
    "create view vg as select a, count(*) n from t group by a",
    "create view vdup as select a, a as a2, b from t",
    "create view vconst as select a, 5 as k from t",
    "create view vw as select a, b from t where b in (select b from t where a > 1)",
    "create view vv as select a, b from v where a < 10",
    "create view vx as select x.a, x.b from t as x where x.c >= 0",
    "create view vs as select * from t",
    "create table t2 (d int not null, e int)",
    "create view vn2 as select e from t2",
];

/// Views of one table: UPDATE, DELETE and INSERT mapped to the base table, the view's WHERE
/// added, views over views, and what MariaDB refuses (1288, 1348, 1471, 1423, 1054).
#[test]
fn single_table_views_take_writes_as_mariadb() {
    let cases: &[Case] = &[
        ("update v set b = 'q' where a = 1", Ok("")),
        ("update v set b = 'q' where a = 2", Ok("")),
        ("update v set c = c + 1", Ok("")),
        ("select * from t order by a", Ok("1\tx\t10\t1\n2\tq\t21\t2\n3\tz\t31\t3")),
        ("update v2 set y = 'w' where x = 3", Ok("")),
        ("update v2 set x = 5", Err((1348, "Column 'x' is not updatable"))),
        ("update v3 set c2 = 5", Err((1348, "Column 'c2' is not updatable"))),
        ("update v3 set bb = 'k' where c2 = 62", Ok("")),
        ("select * from t order by a", Ok("1\tx\t10\t1\n2\tw\t21\t2\n3\tk\t31\t3")),
        ("update vt set b = 'r'", Err((1288, "The target table vt of the UPDATE is not updatable"))),
        ("update vlim set b = 'l'", Err((1288, "The target table vlim of the UPDATE is not updatable"))),
        ("update vd set a = 9", Err((1288, "The target table vd of the UPDATE is not updatable"))),
        ("update vg set a = 7", Err((1288, "The target table vg of the UPDATE is not updatable"))),
        ("update vw set b = 'p' where a = 2", Err((1288, "The target table vw of the UPDATE is not updatable"))),
        ("update v set zz = 1", Err((1054, "Unknown column 'zz' in 'SET'"))),
        ("update v set t.b = 'n' where v.a = 2", Err((1054, "Unknown column 't.b' in 'SET'"))),
        ("update v set v.b = 'o' where v.a = 2", Ok("")),
        ("update v as w set w.b = 'p' where w.a = 3 and w.c > 0", Ok("")),
        ("select * from t order by a", Ok("1\tx\t10\t1\n2\to\t21\t2\n3\tp\t31\t3")),
        ("update vv set b = 'vv' order by a desc limit 1", Ok("")),
        ("update vx set b = 'vx' where a = 2", Ok("")),
        ("update vs set d = d + 100 where c > 20", Ok("")),
        ("select * from t order by a", Ok("1\tx\t10\t1\n2\tvx\t21\t102\n3\tvv\t31\t103")),
        ("delete from v where a = 3", Ok("")),
        ("select * from t order by a", Ok("1\tx\t10\t1\n2\tvx\t21\t102")),
        ("delete from v2 where x = 2", Ok("")),
        ("delete from vt", Err((1288, "The target table vt of the DELETE is not updatable"))),
        ("delete from vlim", Err((1288, "The target table vlim of the DELETE is not updatable"))),
        ("delete from vw", Err((1288, "The target table vw of the DELETE is not updatable"))),
        ("select * from t order by a", Ok("2\tvx\t21\t102")),
        ("insert into v (a, b, c) values (5, 'e', 50)", Ok("")),
        ("insert into v values (6, 'f', 60)", Ok("")),
        ("insert into v (a) values (7)", Ok("")),
        ("insert into v set a = 8, b = 'set'", Ok("")),
        ("insert into v3 (a, bb) values (9, 'h')", Ok("")),
        ("insert into v3 (a, bb, c2) values (10, 'h', 4)", Err((1471, "The target table v3 of the INSERT is not insertable-into"))),
        ("insert into v3 values (10, 'h', 3)", Err((1471, "The target table v3 of the INSERT is not insertable-into"))),
        ("insert into v2 (y) values ('z')", Err((1423, "Field of view 'vw1.v2' underlying table doesn't have a default value"))),
        ("insert into v2 values (1, 'z')", Err((1471, "The target table v2 of the INSERT is not insertable-into"))),
        ("insert into vt values (11, 'x')", Err((1471, "The target table vt of the INSERT is not insertable-into"))),
        ("insert into vlim values (11, 'x')", Err((1471, "The target table vlim of the INSERT is not insertable-into"))),
        ("insert into vdup (a, b) values (12, 'x')", Ok("")),
        ("insert into vdup values (13, 13, 'x')", Err((1471, "The target table vdup of the INSERT is not insertable-into"))),
        ("insert into vdup (a, a2) values (13, 13)", Err((1471, "The target table vdup of the INSERT is not insertable-into"))),
        ("insert into vconst (a) values (14)", Ok("")),
        ("insert into vconst values (15, 5)", Err((1471, "The target table vconst of the INSERT is not insertable-into"))),
        ("insert into vw values (16, 'zz')", Err((1471, "The target table vw of the INSERT is not insertable-into"))),
        ("insert into v (zz) values (1)", Err((1054, "Unknown column 'zz' in 'INSERT INTO'"))),
        ("insert into vv (a, b) values (17, 'vv')", Ok("")),
        ("insert into vx values (18, 'vx')", Ok("")),
        ("insert into vx values (18, 'vx2') on duplicate key update b = 'dup'", Ok("")),
        ("insert into vs (a, b, d) values (19, 's', 19)", Ok("")),
        ("replace into v (a, b) values (5, 'rep')", Ok("")),
        ("insert into vn2 values (3)", Err((1423, "Field of view 'vw1.vn2' underlying table doesn't have a default value"))),
        ("insert into v (a) select a + 100 from t where a < 3", Ok("")),
        ("select * from t order by a", Ok("2\tvx\t21\t102\n5\trep\t0\tNULL\n6\tf\t60\tNULL\n7\tNULL\t0\tNULL\n8\tset\t0\tNULL\n9\th\t0\tNULL\n12\tx\t0\tNULL\n14\tNULL\t0\tNULL\n17\tvv\t0\tNULL\n18\tdup\t0\tNULL\n19\ts\t0\t19\n102\tNULL\t0\tNULL")),
        ("select * from t2", Ok("")),
        ("update vdup set a2 = 40 where a = 19", Ok("")),
        ("select * from t order by a", Ok("2\tvx\t21\t102\n5\trep\t0\tNULL\n6\tf\t60\tNULL\n7\tNULL\t0\tNULL\n8\tset\t0\tNULL\n9\th\t0\tNULL\n12\tx\t0\tNULL\n14\tNULL\t0\tNULL\n17\tvv\t0\tNULL\n18\tdup\t0\tNULL\n40\ts\t0\t19\n102\tNULL\t0\tNULL")),
        ("update v set b = 1 where zz = 1", Err((1054, "Unknown column 'zz' in 'FROM'"))),
        ("delete from v where zz = 1", Err((1054, "Unknown column 'zz' in 'FROM'"))),
        ("update v set b = zz", Err((1054, "Unknown column 'zz' in 'SET'"))),
        ("insert into vx values (2, 'v2') on duplicate key update b = values(b)", Ok("")),
        ("insert into vx values (2, 'v2') on duplicate key update b = concat(vx.b, '!')", Ok("")),
        ("insert into vx values (2, 'v2') on duplicate key update b = x.b", Err((1054, "Unknown column 'x.b' in 'SELECT'"))),
        ("insert into vx (a) values (2) on duplicate key update a = a + 1000", Ok("")),
        ("select * from t order by a", Ok("5\trep\t0\tNULL\n6\tf\t60\tNULL\n7\tNULL\t0\tNULL\n8\tset\t0\tNULL\n9\th\t0\tNULL\n12\tx\t0\tNULL\n14\tNULL\t0\tNULL\n17\tvv\t0\tNULL\n18\tdup\t0\tNULL\n40\ts\t0\t19\n102\tNULL\t0\tNULL\n1002\tv2!\t21\t102")),
    ];
    check_cases("views-write-1", "vw1", SINGLE_SETUP, cases);
}

const CHECK_SETUP: &[&str] = &[
    "create table t (a int primary key, b int)",
    "insert into t values (1,1),(5,5),(10,10)",
    "create view v1 as select a, b from t where b < 10 with check option",
    "create view v1n as select a, b from t where b < 10",
    "create view v2c as select a, b from v1n where b > 2 with cascaded check option",
    "create view v2l as select a, b from v1n where b > 2 with local check option",
    "create view v3l as select a, b from v1 where b > 2 with local check option",
    "create view v3n as select a, b from v1 where b > 2",
    "create view v5l as select a, b from v2c where b < 8 with local check option",
    "create table u (a int auto_increment primary key, b int)",
    "create view vu as select a, b from u where a < 3 with check option",
];

/// WITH [LOCAL | CASCADED] CHECK OPTION: 1369 for a written row the view would not show
/// (NULL included), a warning for INSERT IGNORE of several rows; only the outermost view's
/// option counts, LOCAL reading its own WHERE and CASCADED every level's; an AUTO_INCREMENT
/// value not generated yet reads as 0.
#[test]
fn check_option_refuses_rows_the_view_would_not_show() {
    let cases: &[Case] = &[
        (
            "update v1 set b = 20 where a = 1",
            Err((1369, "CHECK OPTION failed `vw2`.`v1`")),
        ),
        (
            "update v1 set b = NULL where a = 1",
            Err((1369, "CHECK OPTION failed `vw2`.`v1`")),
        ),
        ("update v1 set b = 3 where a = 1", Ok("")),
        (
            "insert into v1 values (2, 30)",
            Err((1369, "CHECK OPTION failed `vw2`.`v1`")),
        ),
        ("insert into v1 values (2, 3)", Ok("")),
        ("insert ignore into v1 values (3, 30), (4, 4)", Ok("")),
        (
            "show warnings",
            Ok("Warning\t1369\tCHECK OPTION failed `vw2`.`v1`"),
        ),
        (
            "insert ignore into v1 values (3, 30)",
            Err((1369, "CHECK OPTION failed `vw2`.`v1`")),
        ),
        (
            "select * from t order by a",
            Ok("1\t3\n2\t3\n4\t4\n5\t5\n10\t10"),
        ),
        (
            "update v2c set b = 20 where a = 5",
            Err((1369, "CHECK OPTION failed `vw2`.`v2c`")),
        ),
        (
            "update v2c set b = 1 where a = 5",
            Err((1369, "CHECK OPTION failed `vw2`.`v2c`")),
        ),
        ("update v2l set b = 20 where a = 5", Ok("")),
        (
            "select * from t order by a",
            Ok("1\t3\n2\t3\n4\t4\n5\t20\n10\t10"),
        ),
        ("update t set b = 5 where a = 5", Ok("")),
        (
            "update v2l set b = 1 where a = 5",
            Err((1369, "CHECK OPTION failed `vw2`.`v2l`")),
        ),
        ("update v3l set b = 20 where a = 5", Ok("")),
        ("update t set b = 5 where a = 5", Ok("")),
        ("update v3n set b = 20 where a = 5", Ok("")),
        ("update t set b = 5 where a = 5", Ok("")),
        (
            "update v5l set b = 9 where a = 5",
            Err((1369, "CHECK OPTION failed `vw2`.`v5l`")),
        ),
        (
            "update v5l set b = 20 where a = 5",
            Err((1369, "CHECK OPTION failed `vw2`.`v5l`")),
        ),
        ("update v5l set b = 1 where a = 5", Ok("")),
        (
            "select * from t order by a",
            Ok("1\t3\n2\t3\n4\t4\n5\t1\n10\t10"),
        ),
        ("delete from v1 where a = 5", Ok("")),
        (
            "replace into v1 values (5, 50)",
            Err((1369, "CHECK OPTION failed `vw2`.`v1`")),
        ),
        ("replace into v1 values (4, 6)", Ok("")),
        (
            "insert into v1 values (1, 3) on duplicate key update b = 99",
            Err((1369, "CHECK OPTION failed `vw2`.`v1`")),
        ),
        (
            "insert into v1 values (1, 3) on duplicate key update b = 8",
            Ok(""),
        ),
        ("select * from t order by a", Ok("1\t8\n2\t3\n4\t6\n10\t10")),
        ("insert into vu (b) values (1),(2)", Ok("")),
        ("insert into vu (b) values (3)", Ok("")),
        (
            "insert into vu values (7, 7)",
            Err((1369, "CHECK OPTION failed `vw2`.`vu`")),
        ),
        ("select * from u order by a", Ok("1\t1\n2\t2\n3\t3")),
    ];
    check_cases("views-write-2", "vw2", CHECK_SETUP, cases);
}

const JOIN_SETUP: &[&str] = &[
    "create table t (a int primary key, b int, c int)",
    "create table u (x int primary key, y int, z int not null)",
    "insert into t values (1,1,1),(2,2,2),(3,3,3)",
    "insert into u values (1,10,1),(2,20,2),(4,40,4)",
    "create view vj as select t.a, t.b, u.x, u.y from t join u on t.a = u.x where t.c < 3",
    "create view vl as select t.a, t.b, u.x, u.y from t left join u on t.a = u.x",
    "create view vc as select t.a, t.b, u.x, u.y, u.z from t, u where t.a = u.x",
    "create view vjc as select t.a, t.b, u.x, u.y from t join u on t.a = u.x where t.c < 3 with check option",
    "create view vjv as select vj.a, vj.y from vj where vj.y > 0",
];

/// Join views: UPDATE of one table's columns (1393 for two), INSERT with a column list of one
/// table (1394 without a list), DELETE refused (1395), the ON condition part of the CHECK
/// OPTION, a view over a join view.
#[test]
fn join_views_write_one_table_as_mariadb() {
    let cases: &[Case] = &[
        ("update vj set b = 5 where a = 1", Ok("")),
        ("update vj set y = 50 where a = 1", Ok("")),
        (
            "update vj set b = 6, y = 60 where a = 1",
            Err((
                1393,
                "Can not modify more than one base table through a join view 'vw3.vj'",
            )),
        ),
        ("update vj set b = 7 where a = 1 limit 1", Ok("")),
        (
            "delete from vj where a = 1",
            Err((1395, "Can not delete from join view 'vw3.vj'")),
        ),
        (
            "insert into vj values (5,5,5,5)",
            Err((
                1394,
                "Can not insert into join view 'vw3.vj' without fields list",
            )),
        ),
        ("insert into vj (a, b) values (5, 5)", Ok("")),
        (
            "insert into vj (x, y) values (5, 5)",
            Err((
                1423,
                "Field of view 'vw3.vj' underlying table doesn't have a default value",
            )),
        ),
        (
            "insert into vj (a, x) values (6, 6)",
            Err((
                1393,
                "Can not modify more than one base table through a join view 'vw3.vj'",
            )),
        ),
        ("update vl set y = 1 where a = 3", Ok("")),
        ("update vl set b = 9 where a = 3", Ok("")),
        (
            "select * from t order by a",
            Ok("1\t7\t1\n2\t2\t2\n3\t9\t3\n5\t5\tNULL"),
        ),
        (
            "select * from u order by x",
            Ok("1\t50\t1\n2\t20\t2\n4\t40\t4"),
        ),
        ("update vc set z = z + 1 where y > 10", Ok("")),
        (
            "select * from u order by x",
            Ok("1\t50\t2\n2\t20\t3\n4\t40\t4"),
        ),
        ("update vjc set b = 1 where a = 1", Ok("")),
        (
            "update vjc set a = 9 where a = 1",
            Err((1369, "CHECK OPTION failed `vw3`.`vjc`")),
        ),
        ("update vjc set y = 9 where a = 1", Ok("")),
        ("update vjv set y = 77", Ok("")),
        (
            "select * from t order by a",
            Ok("1\t1\t1\n2\t2\t2\n3\t9\t3\n5\t5\tNULL"),
        ),
        (
            "select * from u order by x",
            Ok("1\t77\t2\n2\t77\t3\n4\t40\t4"),
        ),
    ];
    check_cases("views-write-3", "vw3", JOIN_SETUP, cases);
}

/// The statement's privilege on the view; the base table's under the view's definer (SQL
/// SECURITY DEFINER) or the caller (INVOKER: 1356 without it), as MariaDB.
#[test]
fn writes_through_views_check_privileges_as_mariadb() {
    let db = common::Db::open("views-write-priv");
    let mut r = common::session_in(&db, "vp");
    for q in [
        "CREATE DATABASE vb",
        "CREATE TABLE vb.t (a INT PRIMARY KEY, b INT)",
        "INSERT INTO vb.t VALUES (1,1),(2,2)",
        "CREATE VIEW vdef AS SELECT a, b FROM vb.t",
        "CREATE SQL SECURITY INVOKER VIEW vinv AS SELECT a, b FROM vb.t",
        "CREATE USER 'pu'@'%' IDENTIFIED BY 'p'",
        "GRANT UPDATE, SELECT, INSERT ON vp.* TO 'pu'@'%'",
    ] {
        ok(&mut r, q);
    }
    let mut u = onelog_sql::Session::new(db.server.clone(), 2, "pu", "10.0.0.1");
    ok(&mut u, "UPDATE vp.vdef SET b = 5 WHERE a = 1");
    assert_eq!(err(&mut u, "UPDATE vp.vinv SET b = 6 WHERE a = 1"), 1356);
    let e = fail(&mut u, "DELETE FROM vp.vdef WHERE a = 1");
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            1142,
            "DELETE command denied to user 'pu'@'10.0.0.1' for table `vp`.`vdef`"
        )
    );
    ok(&mut u, "INSERT INTO vp.vdef VALUES (3, 3)");
    assert_eq!(err(&mut u, "INSERT INTO vp.vinv VALUES (4, 4)"), 1356);
    assert_eq!(err(&mut u, "SELECT * FROM vb.t"), 1142);
    assert_eq!(
        text_rows(&mut r, "SELECT * FROM vb.t ORDER BY a"),
        vec![vec!["1", "5"], vec!["2", "2"], vec!["3", "3"]]
    );
}

/// A write through a view logs the base table's row events (a replica applies them to its
/// own base table): the transactions name `base_tbl`, never the view.
#[test]
fn writes_through_views_log_the_base_tables_rows() {
    let db = common::Db::open("views-write-log");
    let mut s = common::session_in(&db, "vl");
    for q in [
        "CREATE TABLE base_tbl (a INT PRIMARY KEY, b INT)",
        "CREATE VIEW view_x AS SELECT a, b AS bb FROM base_tbl WHERE a < 100",
        "INSERT INTO view_x VALUES (1, 1), (2, 2)",
        "UPDATE view_x SET bb = bb + 10 WHERE a = 2",
        "DELETE FROM view_x WHERE a = 1",
    ] {
        ok(&mut s, q);
    }
    assert_eq!(
        text_rows(&mut s, "SELECT * FROM base_tbl"),
        vec![vec!["2", "12"]]
    );
    let txns: Vec<Vec<u8>> = common::log_records(&db.server)
        .into_iter()
        .filter(|r| r.kind == onelog_log::RecordKind::Transaction)
        .map(|r| r.events.to_vec())
        .collect();
    let has = |b: &[u8], w: &[u8]| b.windows(w.len()).any(|x| x == w);
    let rows: Vec<_> = txns.iter().filter(|b| has(b, b"base_tbl")).collect();
    assert_eq!(rows.len(), 3, "one transaction per statement");
    assert!(txns.iter().all(|b| !has(b, b"view_x")));
}

const MULTI_SETUP: &[&str] = &[
    "create table t (a int primary key, b int, c int)",
    "create table u (x int primary key, y int, z int)",
    "insert into t values (1,1,1),(2,2,2),(3,3,3),(4,4,4)",
    "insert into u values (1,10,1),(2,20,2),(3,30,3),(5,50,5)",
    "create view v as select a, b as bb, c from t where a > 1",
    "create view vc as select a, b, c from t where a < 4 with check option",
    "create view vg as select a, count(*) n from t group by a",
    "create view vu as select x, y from u where y >= 20",
];

/// Views of one table in multi-table UPDATE and DELETE: read or written, merged onto their
/// base table with their WHERE (the CHECK OPTION of the view written), as MariaDB.
#[test]
fn views_in_multi_table_statements_as_mariadb() {
    let cases: &[Case] = &[
        ("update u join v on u.x = v.a set v.bb = u.y + 1000", Ok("")),
        (
            "select * from t order by a",
            Ok("1\t1\t1\n2\t1020\t2\n3\t1030\t3\n4\t4\t4"),
        ),
        ("update u join v on u.x = v.a set u.z = v.bb", Ok("")),
        (
            "select * from u order by x",
            Ok("1\t10\t1\n2\t20\t1020\n3\t30\t1030\n5\t50\t5"),
        ),
        (
            "update u, v set u.y = u.y + 1 where u.x = v.a and v.c = 3",
            Ok(""),
        ),
        (
            "select * from u order by x",
            Ok("1\t10\t1\n2\t20\t1020\n3\t31\t1030\n5\t50\t5"),
        ),
        ("update v join vu on v.a = vu.x set vu.y = v.c", Ok("")),
        (
            "select * from u order by x",
            Ok("1\t10\t1\n2\t2\t1020\n3\t3\t1030\n5\t50\t5"),
        ),
        (
            "update u join v on u.x = v.a set v.c = 0 where v.a = 3 or u.x = 1",
            Ok(""),
        ),
        (
            "select * from t order by a",
            Ok("1\t1\t1\n2\t1020\t2\n3\t1030\t0\n4\t4\t4"),
        ),
        (
            "update u join vc on u.x = vc.a set vc.a = vc.a + 10",
            Err((1369, "CHECK OPTION failed `vw4`.`vc`")),
        ),
        ("update u join vc on u.x = vc.a set vc.b = 7", Ok("")),
        (
            "select * from t order by a",
            Ok("1\t7\t1\n2\t7\t2\n3\t7\t0\n4\t4\t4"),
        ),
        (
            "update u join v on u.x = v.a set v.a = v.a + 100 where u.x = 2 order by u.x limit 1",
            Ok(""),
        ),
        (
            "select * from t order by a",
            Ok("1\t7\t1\n3\t7\t0\n4\t4\t4\n102\t7\t2"),
        ),
        (
            "update u left join v on u.x = v.a set u.z = 99 where v.a is null",
            Ok(""),
        ),
        (
            "select * from u order by x",
            Ok("1\t10\t99\n2\t2\t99\n3\t3\t1030\n5\t50\t99"),
        ),
        (
            "update u join vg on u.x = vg.a set vg.n = 1",
            Err((1288, "The target table vg of the UPDATE is not updatable")),
        ),
        ("delete u from u join v on u.x = v.a where v.c = 0", Ok("")),
        (
            "select * from u order by x",
            Ok("1\t10\t99\n2\t2\t99\n5\t50\t99"),
        ),
        ("delete v from u join v on u.x = v.a", Ok("")),
        ("delete v from t join v on t.a = v.a where v.c = 4", Ok("")),
        (
            "select * from t order by a",
            Ok("1\t7\t1\n3\t7\t0\n102\t7\t2"),
        ),
        ("delete from vu using vu join t on vu.x = t.a", Ok("")),
        (
            "select * from u order by x",
            Ok("1\t10\t99\n2\t2\t99\n5\t50\t99"),
        ),
        (
            "update u join v on u.x = v.a set v.zz = 1",
            Err((1054, "Unknown column 'v.zz' in 'SET'")),
        ),
        (
            "update u join v on u.x = v.a set u.y = 1 where v.zz = 1",
            Err((1054, "Unknown column 'v.zz' in 'WHERE'")),
        ),
    ];
    check_cases("views-write-4", "vw4", MULTI_SETUP, cases);
}

const PREPARED_SETUP: &[&str] = &[
    "create table t (a int primary key, b int)",
    "insert into t values (1,1),(2,2),(3,3)",
    "create view v as select a, b from t where a > 1",
];

/// Prepared statements through views: placeholders in place, and a view replaced between
/// executions is read again (its new WHERE and CHECK OPTION), as MariaDB.
#[test]
fn prepared_writes_through_views_follow_the_view() {
    let cases: &[Case] = &[
        (
            "prepare s from 'update v set b = b + ? where a < ?'",
            Ok(""),
        ),
        ("set @x = 10, @y = 3", Ok("")),
        ("execute s using @x, @y", Ok("")),
        ("select * from t order by a", Ok("1\t1\n2\t12\n3\t3")),
        (
            "create or replace view v as select a, b from t where a > 0",
            Ok(""),
        ),
        ("execute s using @x, @y", Ok("")),
        ("select * from t order by a", Ok("1\t11\n2\t22\n3\t3")),
        (
            "prepare i from 'insert into v (a, b) values (?, ?)'",
            Ok(""),
        ),
        ("execute i using @x, @y", Ok("")),
        ("prepare d from 'delete from v where b = ?'", Ok("")),
        ("execute d using @x", Ok("")),
        (
            "select * from t order by a",
            Ok("1\t11\n2\t22\n3\t3\n10\t3"),
        ),
        (
            "create or replace view v as select a, b from t where a < 3 with check option",
            Ok(""),
        ),
        (
            "execute i using @x, @y",
            Err((1369, "CHECK OPTION failed `vw5`.`v`")),
        ),
    ];
    check_cases("views-write-5", "vw5", PREPARED_SETUP, cases);
}
