//! `information_schema` (every table onelog serves, docs/SQL.md) and the SHOW forms that
//! share its column facts, against the rows MariaDB 10.11 printed for the same schema
//! (`mariadb -N`, tab-separated; captured from a real server, 10.11.14 for the tests after
//! `information_schema_follows_the_catalog_and_privileges`). SHOW INDEX's and STATISTICS'
//! CARDINALITY is left out: onelog keeps no index statistics (NULL).

use onelog_sql::{Output, Session};

mod common;
use common::{fail, ok, text_rows, Db};

#[path = "mariadb_expected/information_schema_columns.rs"]
mod expected_columns;

#[path = "mariadb_expected/information_schema_mysql.rs"]
mod expected_mysql;

const SETUP: &[&str] = &[
    r#"create database it character set utf8mb4"#,
    r#"create table it.t (id int auto_increment primary key, a tinyint, b smallint unsigned not null default 3, c int(5), d bigint unsigned, e decimal(10,3) default 1.5, f float, g double, h char(3) default 'x''y', i varchar(10) collate utf8mb4_bin, j text, k longtext, l blob, m binary(4), n varbinary(7), o date default '2020-01-02', p datetime(3) default current_timestamp(3) on update current_timestamp(3), q timestamp null, r time(2), s year, t enum('a','bcd'), u set('x','yy'), v bit(5) default b'101', x mediumint, y tinytext, z tinyblob, aa mediumtext, ab bool default true, unique key uk (a, b), key kk (c), unique key (d), constraint ck check (a > 0), ac int check (ac < 5)) comment 'hi'"#,
    r#"create table it.c (id int primary key, tid int, constraint fk1 foreign key (tid) references t(id) on update no action)"#,
    r#"insert into it.t (id) values (41)"#,
    r#"create table it.j (id int primary key, constraint z1 check (id > 0), a int check (a>1), w json, b int check (b<3), constraint a1 check (b > a))"#,
];

/// (query, MariaDB's rows, tab-separated)
const EXPECTED: &[(&str, &[&str])] = &[
    (
        r#"select * from information_schema.columns where table_schema='it' order by table_name, ordinal_position"#,
        &[
            r#"def	it	c	id	1	NULL	NO	int	NULL	NULL	10	0	NULL	NULL	NULL	int(11)	PRI		select,insert,update,references		NEVER	NULL"#,
            r#"def	it	c	tid	2	NULL	YES	int	NULL	NULL	10	0	NULL	NULL	NULL	int(11)	MUL		select,insert,update,references		NEVER	NULL"#,
            r#"def	it	j	id	1	NULL	NO	int	NULL	NULL	10	0	NULL	NULL	NULL	int(11)	PRI		select,insert,update,references		NEVER	NULL"#,
            r#"def	it	j	a	2	NULL	YES	int	NULL	NULL	10	0	NULL	NULL	NULL	int(11)			select,insert,update,references		NEVER	NULL"#,
            r#"def	it	j	w	3	NULL	YES	longtext	4294967295	4294967295	NULL	NULL	NULL	utf8mb4	utf8mb4_bin	longtext			select,insert,update,references		NEVER	NULL"#,
            r#"def	it	j	b	4	NULL	YES	int	NULL	NULL	10	0	NULL	NULL	NULL	int(11)			select,insert,update,references		NEVER	NULL"#,
            r#"def	it	t	id	1	NULL	NO	int	NULL	NULL	10	0	NULL	NULL	NULL	int(11)	PRI	auto_increment	select,insert,update,references		NEVER	NULL"#,
            r#"def	it	t	a	2	NULL	YES	tinyint	NULL	NULL	3	0	NULL	NULL	NULL	tinyint(4)	MUL		select,insert,update,references		NEVER	NULL"#,
            r#"def	it	t	b	3	3	NO	smallint	NULL	NULL	5	0	NULL	NULL	NULL	smallint(5) unsigned			select,insert,update,references		NEVER	NULL"#,
            r#"def	it	t	c	4	NULL	YES	int	NULL	NULL	10	0	NULL	NULL	NULL	int(5)	MUL		select,insert,update,references		NEVER	NULL"#,
            r#"def	it	t	d	5	NULL	YES	bigint	NULL	NULL	20	0	NULL	NULL	NULL	bigint(20) unsigned	UNI		select,insert,update,references		NEVER	NULL"#,
            r#"def	it	t	e	6	1.500	YES	decimal	NULL	NULL	10	3	NULL	NULL	NULL	decimal(10,3)			select,insert,update,references		NEVER	NULL"#,
            r#"def	it	t	f	7	NULL	YES	float	NULL	NULL	12	NULL	NULL	NULL	NULL	float			select,insert,update,references		NEVER	NULL"#,
            r#"def	it	t	g	8	NULL	YES	double	NULL	NULL	22	NULL	NULL	NULL	NULL	double			select,insert,update,references		NEVER	NULL"#,
            r#"def	it	t	h	9	'x''y'	YES	char	3	12	NULL	NULL	NULL	utf8mb4	utf8mb4_general_ci	char(3)			select,insert,update,references		NEVER	NULL"#,
            r#"def	it	t	i	10	NULL	YES	varchar	10	40	NULL	NULL	NULL	utf8mb4	utf8mb4_bin	varchar(10)			select,insert,update,references		NEVER	NULL"#,
            r#"def	it	t	j	11	NULL	YES	text	65535	65535	NULL	NULL	NULL	utf8mb4	utf8mb4_general_ci	text			select,insert,update,references		NEVER	NULL"#,
            r#"def	it	t	k	12	NULL	YES	longtext	4294967295	4294967295	NULL	NULL	NULL	utf8mb4	utf8mb4_general_ci	longtext			select,insert,update,references		NEVER	NULL"#,
            r#"def	it	t	l	13	NULL	YES	blob	65535	65535	NULL	NULL	NULL	NULL	NULL	blob			select,insert,update,references		NEVER	NULL"#,
            r#"def	it	t	m	14	NULL	YES	binary	4	4	NULL	NULL	NULL	NULL	NULL	binary(4)			select,insert,update,references		NEVER	NULL"#,
            r#"def	it	t	n	15	NULL	YES	varbinary	7	7	NULL	NULL	NULL	NULL	NULL	varbinary(7)			select,insert,update,references		NEVER	NULL"#,
            r#"def	it	t	o	16	'2020-01-02'	YES	date	NULL	NULL	NULL	NULL	NULL	NULL	NULL	date			select,insert,update,references		NEVER	NULL"#,
            r#"def	it	t	p	17	current_timestamp(3)	YES	datetime	NULL	NULL	NULL	NULL	3	NULL	NULL	datetime(3)		on update current_timestamp(3)	select,insert,update,references		NEVER	NULL"#,
            r#"def	it	t	q	18	NULL	YES	timestamp	NULL	NULL	NULL	NULL	0	NULL	NULL	timestamp			select,insert,update,references		NEVER	NULL"#,
            r#"def	it	t	r	19	NULL	YES	time	NULL	NULL	NULL	NULL	2	NULL	NULL	time(2)			select,insert,update,references		NEVER	NULL"#,
            r#"def	it	t	s	20	NULL	YES	year	NULL	NULL	NULL	NULL	NULL	NULL	NULL	year(4)			select,insert,update,references		NEVER	NULL"#,
            r#"def	it	t	t	21	NULL	YES	enum	3	12	NULL	NULL	NULL	utf8mb4	utf8mb4_general_ci	enum('a','bcd')			select,insert,update,references		NEVER	NULL"#,
            r#"def	it	t	u	22	NULL	YES	set	4	16	NULL	NULL	NULL	utf8mb4	utf8mb4_general_ci	set('x','yy')			select,insert,update,references		NEVER	NULL"#,
            r#"def	it	t	v	23	b'101'	YES	bit	NULL	NULL	5	NULL	NULL	NULL	NULL	bit(5)			select,insert,update,references		NEVER	NULL"#,
            r#"def	it	t	x	24	NULL	YES	mediumint	NULL	NULL	7	0	NULL	NULL	NULL	mediumint(9)			select,insert,update,references		NEVER	NULL"#,
            r#"def	it	t	y	25	NULL	YES	tinytext	255	255	NULL	NULL	NULL	utf8mb4	utf8mb4_general_ci	tinytext			select,insert,update,references		NEVER	NULL"#,
            r#"def	it	t	z	26	NULL	YES	tinyblob	255	255	NULL	NULL	NULL	NULL	NULL	tinyblob			select,insert,update,references		NEVER	NULL"#,
            r#"def	it	t	aa	27	NULL	YES	mediumtext	16777215	16777215	NULL	NULL	NULL	utf8mb4	utf8mb4_general_ci	mediumtext			select,insert,update,references		NEVER	NULL"#,
            r#"def	it	t	ab	28	1	YES	tinyint	NULL	NULL	3	0	NULL	NULL	NULL	tinyint(1)			select,insert,update,references		NEVER	NULL"#,
            r#"def	it	t	ac	29	NULL	YES	int	NULL	NULL	10	0	NULL	NULL	NULL	int(11)			select,insert,update,references		NEVER	NULL"#,
        ],
    ),
    (
        r#"select * from information_schema.table_constraints where table_schema='it'"#,
        &[
            r#"def	it	PRIMARY	it	c	PRIMARY KEY"#,
            r#"def	it	fk1	it	c	FOREIGN KEY"#,
            r#"def	it	PRIMARY	it	j	PRIMARY KEY"#,
            r#"def	it	a	it	j	CHECK"#,
            r#"def	it	w	it	j	CHECK"#,
            r#"def	it	b	it	j	CHECK"#,
            r#"def	it	z1	it	j	CHECK"#,
            r#"def	it	a1	it	j	CHECK"#,
            r#"def	it	PRIMARY	it	t	PRIMARY KEY"#,
            r#"def	it	uk	it	t	UNIQUE"#,
            r#"def	it	d	it	t	UNIQUE"#,
            r#"def	it	ac	it	t	CHECK"#,
            r#"def	it	ck	it	t	CHECK"#,
        ],
    ),
    (
        r#"select * from information_schema.key_column_usage where table_schema='it'"#,
        &[
            r#"def	it	PRIMARY	def	it	c	id	1	NULL	NULL	NULL	NULL"#,
            r#"def	it	fk1	def	it	c	tid	1	1	it	t	id"#,
            r#"def	it	PRIMARY	def	it	j	id	1	NULL	NULL	NULL	NULL"#,
            r#"def	it	PRIMARY	def	it	t	id	1	NULL	NULL	NULL	NULL"#,
            r#"def	it	uk	def	it	t	a	1	NULL	NULL	NULL	NULL"#,
            r#"def	it	uk	def	it	t	b	2	NULL	NULL	NULL	NULL"#,
            r#"def	it	d	def	it	t	d	1	NULL	NULL	NULL	NULL"#,
        ],
    ),
    (
        r#"select * from information_schema.referential_constraints where constraint_schema='it'"#,
        &[r#"def	it	fk1	def	it	PRIMARY	NONE	NO ACTION	RESTRICT	c	t"#],
    ),
    (
        r#"select * from information_schema.check_constraints where constraint_schema='it'"#,
        &[
            r#"def	it	j	a	Column	`a` > 1"#,
            r#"def	it	j	w	Column	json_valid(`w`)"#,
            r#"def	it	j	b	Column	`b` < 3"#,
            r#"def	it	j	z1	Table	`id` > 0"#,
            r#"def	it	j	a1	Table	`b` > `a`"#,
            r#"def	it	t	ac	Column	`ac` < 5"#,
            r#"def	it	t	ck	Table	`a` > 0"#,
        ],
    ),
    (
        r#"select table_catalog,table_schema,table_name,table_type,engine,auto_increment,table_collation,create_options,table_comment,temporary from information_schema.tables where table_schema='it'"#,
        &[
            r#"def	it	c	BASE TABLE	InnoDB	NULL	utf8mb4_general_ci			N"#,
            r#"def	it	j	BASE TABLE	InnoDB	NULL	utf8mb4_general_ci			N"#,
            r#"def	it	t	BASE TABLE	InnoDB	42	utf8mb4_general_ci		hi	N"#,
        ],
    ),
    (
        r#"select TABLE_CATALOG,TABLE_SCHEMA,TABLE_NAME,NON_UNIQUE,INDEX_SCHEMA,INDEX_NAME,SEQ_IN_INDEX,COLUMN_NAME,COLLATION,SUB_PART,PACKED,NULLABLE,INDEX_TYPE,COMMENT,INDEX_COMMENT,IGNORED from information_schema.statistics where table_schema='it'"#,
        &[
            r#"def	it	c	0	it	PRIMARY	1	id	A	NULL	NULL		BTREE			NO"#,
            r#"def	it	c	1	it	fk1	1	tid	A	NULL	NULL	YES	BTREE			NO"#,
            r#"def	it	j	0	it	PRIMARY	1	id	A	NULL	NULL		BTREE			NO"#,
            r#"def	it	t	0	it	PRIMARY	1	id	A	NULL	NULL		BTREE			NO"#,
            r#"def	it	t	0	it	uk	1	a	A	NULL	NULL	YES	BTREE			NO"#,
            r#"def	it	t	0	it	uk	2	b	A	NULL	NULL		BTREE			NO"#,
            r#"def	it	t	0	it	d	1	d	A	NULL	NULL	YES	BTREE			NO"#,
            r#"def	it	t	1	it	kk	1	c	A	NULL	NULL	YES	BTREE			NO"#,
        ],
    ),
    (
        r#"show create table it.t"#,
        &[
            r#"t	CREATE TABLE `t` (\n  `id` int(11) NOT NULL AUTO_INCREMENT,\n  `a` tinyint(4) DEFAULT NULL,\n  `b` smallint(5) unsigned NOT NULL DEFAULT 3,\n  `c` int(5) DEFAULT NULL,\n  `d` bigint(20) unsigned DEFAULT NULL,\n  `e` decimal(10,3) DEFAULT 1.500,\n  `f` float DEFAULT NULL,\n  `g` double DEFAULT NULL,\n  `h` char(3) DEFAULT 'x''y',\n  `i` varchar(10) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin DEFAULT NULL,\n  `j` text DEFAULT NULL,\n  `k` longtext DEFAULT NULL,\n  `l` blob DEFAULT NULL,\n  `m` binary(4) DEFAULT NULL,\n  `n` varbinary(7) DEFAULT NULL,\n  `o` date DEFAULT '2020-01-02',\n  `p` datetime(3) DEFAULT current_timestamp(3) ON UPDATE current_timestamp(3),\n  `q` timestamp NULL DEFAULT NULL,\n  `r` time(2) DEFAULT NULL,\n  `s` year(4) DEFAULT NULL,\n  `t` enum('a','bcd') DEFAULT NULL,\n  `u` set('x','yy') DEFAULT NULL,\n  `v` bit(5) DEFAULT b'101',\n  `x` mediumint(9) DEFAULT NULL,\n  `y` tinytext DEFAULT NULL,\n  `z` tinyblob DEFAULT NULL,\n  `aa` mediumtext DEFAULT NULL,\n  `ab` tinyint(1) DEFAULT 1,\n  `ac` int(11) DEFAULT NULL CHECK (`ac` < 5),\n  PRIMARY KEY (`id`),\n  UNIQUE KEY `uk` (`a`,`b`),\n  UNIQUE KEY `d` (`d`),\n  KEY `kk` (`c`),\n  CONSTRAINT `ck` CHECK (`a` > 0)\n) ENGINE=InnoDB AUTO_INCREMENT=42 DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci COMMENT='hi'"#,
        ],
    ),
    (
        r#"show columns from it.t"#,
        &[
            r#"id	int(11)	NO	PRI	NULL	auto_increment"#,
            r#"a	tinyint(4)	YES	MUL	NULL	"#,
            r#"b	smallint(5) unsigned	NO		3	"#,
            r#"c	int(5)	YES	MUL	NULL	"#,
            r#"d	bigint(20) unsigned	YES	UNI	NULL	"#,
            r#"e	decimal(10,3)	YES		1.500	"#,
            r#"f	float	YES		NULL	"#,
            r#"g	double	YES		NULL	"#,
            r#"h	char(3)	YES		x'y	"#,
            r#"i	varchar(10)	YES		NULL	"#,
            r#"j	text	YES		NULL	"#,
            r#"k	longtext	YES		NULL	"#,
            r#"l	blob	YES		NULL	"#,
            r#"m	binary(4)	YES		NULL	"#,
            r#"n	varbinary(7)	YES		NULL	"#,
            r#"o	date	YES		2020-01-02	"#,
            r#"p	datetime(3)	YES		current_timestamp(3)	on update current_timestamp(3)"#,
            r#"q	timestamp	YES		NULL	"#,
            r#"r	time(2)	YES		NULL	"#,
            r#"s	year(4)	YES		NULL	"#,
            r#"t	enum('a','bcd')	YES		NULL	"#,
            r#"u	set('x','yy')	YES		NULL	"#,
            r#"v	bit(5)	YES		b'101'	"#,
            r#"x	mediumint(9)	YES		NULL	"#,
            r#"y	tinytext	YES		NULL	"#,
            r#"z	tinyblob	YES		NULL	"#,
            r#"aa	mediumtext	YES		NULL	"#,
            r#"ab	tinyint(1)	YES		1	"#,
            r#"ac	int(11)	YES		NULL	"#,
        ],
    ),
];

fn session(db: &Db) -> Session {
    Session::new(db.server.clone(), 1, "root", "localhost")
}

/// MariaDB's `-N` form of a row: cells joined by tabs, a newline in a cell as `\n`.
fn tabbed(s: &mut Session, sql: &str) -> Vec<String> {
    text_rows(s, sql)
        .into_iter()
        .map(|r| r.join("\t").replace('\n', "\\n"))
        .collect()
}

#[test]
fn information_schema_rows_match_mariadb() {
    let db = Db::open("infoschema");
    let mut s = session(&db);
    for sql in SETUP {
        ok(&mut s, sql);
    }
    for (sql, want) in EXPECTED {
        assert_eq!(tabbed(&mut s, sql), *want, "{sql}");
    }
}

#[test]
fn information_schema_follows_the_catalog_and_privileges() {
    let db = Db::open("infoschema2");
    let mut s = session(&db);
    for sql in SETUP {
        ok(&mut s, sql);
    }
    let tables = "SELECT table_name FROM information_schema.tables \
                  WHERE table_schema = 'it' ORDER BY table_name";
    assert_eq!(tabbed(&mut s, tables), ["c", "j", "t"]);
    ok(&mut s, "DROP TABLE it.c");
    ok(&mut s, "ALTER TABLE it.j ADD UNIQUE KEY ua (a)");
    assert_eq!(tabbed(&mut s, tables), ["j", "t"]);
    assert_eq!(
        tabbed(
            &mut s,
            "SELECT constraint_name, constraint_type FROM information_schema.TABLE_CONSTRAINTS \
             WHERE table_name = 'j' AND constraint_type <> 'CHECK'"
        ),
        ["PRIMARY\tPRIMARY KEY", "ua\tUNIQUE"]
    );
    // Joins, aliases and aggregates over it work as over any table.
    assert_eq!(
        tabbed(
            &mut s,
            "SELECT t.table_name, COUNT(*) FROM information_schema.tables AS t \
             JOIN information_schema.columns c ON c.table_schema = t.table_schema \
             AND c.table_name = t.table_name WHERE t.table_schema = DATABASE() \
             GROUP BY t.table_name"
        ),
        Vec::<String>::new()
    );
    ok(&mut s, "USE it");
    assert_eq!(
        tabbed(
            &mut s,
            "SELECT t.table_name, COUNT(*) FROM information_schema.tables AS t \
             JOIN information_schema.columns c ON c.table_schema = t.table_schema \
             AND c.table_name = t.table_name WHERE t.table_schema = DATABASE() \
             GROUP BY t.table_name ORDER BY 1"
        ),
        ["j\t4", "t\t29"]
    );
    // An unknown table of the schema: MariaDB's 1109.
    let e = fail(&mut s, "SELECT * FROM information_schema.nope");
    assert_eq!(e.code, 1109);
    assert_eq!(e.message, "Unknown table 'nope' in information_schema");
    // A user with privileges on one database sees only its tables.
    ok(&mut s, "CREATE DATABASE other");
    ok(&mut s, "CREATE TABLE other.o (id INT PRIMARY KEY)");
    ok(&mut s, "CREATE USER u@localhost");
    ok(&mut s, "GRANT SELECT ON other.* TO u@localhost");
    let mut u = Session::new(db.server.clone(), 2, "u", "localhost");
    assert_eq!(
        tabbed(
            &mut u,
            "SELECT table_schema, table_name FROM information_schema.tables \
             WHERE table_schema <> 'information_schema'"
        ),
        ["other\to"]
    );
}

/// A session of `user`@`host` (an account made by the test, or root).
fn login(db: &Db, id: u32, user: &str, host: &str) -> Session {
    Session::new(db.server.clone(), id, user, host)
}

fn column_names(s: &mut Session, sql: &str) -> Vec<String> {
    match ok(s, sql) {
        Output::Rows { columns, .. } => columns.into_iter().map(|c| c.name).collect(),
        other => panic!("{sql}: not a result set: {other:?}"),
    }
}

#[test]
fn every_served_table_has_mariadbs_columns() {
    let db = Db::open("infoschema_cols");
    let mut s = session(&db);
    let listed = tabbed(&mut s, "SHOW TABLES FROM information_schema");
    let served: Vec<&str> = expected_columns::SHOW_COLUMNS
        .iter()
        .map(|(t, _)| *t)
        .collect();
    assert_eq!(listed, served);
    for (table, want) in expected_columns::SHOW_COLUMNS {
        let want: Vec<&str> = want.lines().collect();
        let sql = format!("SHOW COLUMNS FROM information_schema.{table}");
        assert_eq!(tabbed(&mut s, &sql), want, "{sql}");
        // SELECT * names the same columns, in the same order.
        let names: Vec<String> = want
            .iter()
            .map(|l| l.split('\t').next().unwrap_or_default().to_string())
            .collect();
        let sql = format!("SELECT * FROM information_schema.{table} LIMIT 0");
        assert_eq!(column_names(&mut s, &sql), names, "{sql}");
    }
    for (table, want) in expected_columns::SHOW_CREATE {
        let sql = format!("SHOW CREATE TABLE information_schema.{table}");
        assert_eq!(
            text_rows(&mut s, &sql),
            [[table.to_string(), want.to_string()]],
            "{sql}"
        );
    }
    // SHOW FULL COLUMNS: MariaDB 10.11.14's collation and privileges.
    assert_eq!(
        tabbed(
            &mut s,
            "SHOW FULL COLUMNS FROM information_schema.engines LIKE 'X%'"
        ),
        ["XA\tvarchar(3)\tutf8mb3_general_ci\tYES\t\tNULL\t\tselect\t"]
    );
    assert_eq!(
        tabbed(
            &mut s,
            "SHOW FULL COLUMNS FROM information_schema.innodb_cmp LIKE 'page%'"
        ),
        ["page_size\tint(5)\tNULL\tNO\t\tNULL\t\tselect\t"]
    );
    // Tables onelog has no objects for are empty (no routines, triggers, events, table or
    // column grants yet).
    for t in [
        "ROUTINES",
        "TRIGGERS",
        "EVENTS",
        "PARAMETERS",
        "TABLE_PRIVILEGES",
        "COLUMN_PRIVILEGES",
    ] {
        let sql = format!("SELECT COUNT(*) FROM information_schema.{t}");
        assert_eq!(tabbed(&mut s, &sql), ["0"], "{sql}");
    }
}

#[test]
fn information_schema_can_be_used_as_a_database() {
    let db = Db::open("infoschema_use");
    let mut s = session(&db);
    ok(&mut s, "CREATE USER nobody@localhost");
    // MariaDB 10.11: any account may USE it; its name comes back in lower case.
    let mut n = login(&db, 2, "nobody", "localhost");
    ok(&mut n, "USE INFORMATION_SCHEMA");
    assert_eq!(tabbed(&mut n, "SELECT DATABASE()"), ["information_schema"]);
    assert_eq!(
        tabbed(&mut n, "SHOW TABLES LIKE 'SCH%'"),
        ["SCHEMATA", "SCHEMA_PRIVILEGES"]
    );
    assert_eq!(
        tabbed(&mut n, "SHOW FULL TABLES LIKE 'ENG%'"),
        ["ENGINES\tSYSTEM VIEW"]
    );
    // Unqualified names read its tables; SHOW COLUMNS without FROM db too.
    assert_eq!(
        tabbed(&mut n, "SELECT schema_name FROM schemata"),
        ["information_schema"]
    );
    assert_eq!(
        tabbed(&mut n, "SHOW COLUMNS FROM user_privileges LIKE 'IS%'"),
        ["IS_GRANTABLE\tvarchar(3)\tNO\t\tNULL\t"]
    );
    // COM_FIELD_LIST (the CLI's completion) describes its tables too.
    let fields: Vec<String> = n
        .field_list("ENGINES", "")
        .unwrap()
        .into_iter()
        .map(|c| c.name)
        .collect();
    assert_eq!(
        fields,
        [
            "ENGINE",
            "SUPPORT",
            "COMMENT",
            "TRANSACTIONS",
            "XA",
            "SAVEPOINTS"
        ]
    );
    let e = fail(&mut n, "SHOW COLUMNS FROM nope");
    assert_eq!(
        (e.code, e.message.as_str()),
        (1109, "Unknown table 'nope' in information_schema")
    );
    // performance_schema is not served (docs/SQL.md): onelog answers as a MariaDB 10.11
    // built without it.
    let e = fail(&mut s, "USE performance_schema");
    assert_eq!(
        (e.code, e.message.as_str()),
        (1049, "Unknown database 'performance_schema'")
    );
    let e = fail(&mut s, "SELECT * FROM performance_schema.threads");
    assert_eq!(
        (e.code, e.message.as_str()),
        (1146, "Table 'performance_schema.threads' doesn't exist")
    );
    // Its tables are read-only: MariaDB 10.11.14 refuses a write with 1044.
    for sql in [
        "INSERT INTO information_schema.engines VALUES ('a', 'b', 'c', 'd', 'e', 'f')",
        "UPDATE information_schema.tables SET table_comment = 'x'",
        "DELETE FROM information_schema.schemata",
        "CREATE TABLE information_schema.t (a INT)",
        "DROP TABLE information_schema.tables",
    ] {
        let e = fail(&mut s, sql);
        assert_eq!(
            (e.code, e.message.as_str()),
            (
                1044,
                "Access denied for user 'root'@'localhost' to database 'information_schema'"
            ),
            "{sql}"
        );
    }
    // Qualified column names (MariaDB 10.11.14 answers InnoDB, DEFAULT, YES: its engines).
    assert_eq!(
        tabbed(
            &mut s,
            "SELECT information_schema.engines.engine, engines.support, e.xa \
             FROM information_schema.engines JOIN information_schema.engines e \
             USING (engine) WHERE engines.support = 'DEFAULT'"
        ),
        ["onelog\tDEFAULT\tNO"]
    );
    // Counting, filtering and a subquery over it.
    assert_eq!(
        tabbed(
            &mut s,
            "SELECT COUNT(*) FROM information_schema.collations \
             WHERE character_set_name IN (SELECT character_set_name \
             FROM information_schema.character_sets WHERE maxlen = 4)"
        ),
        ["3"]
    );
}

#[test]
fn schemata_views_tables_and_partitions_match_mariadb() {
    let db = Db::open("infoschema_views");
    let mut s = session(&db);
    for sql in [
        "create database it character set utf8mb4",
        "create table it.t (id int primary key, a int)",
        "create view it.v as select id, a from it.t where a > 1",
        "create algorithm=merge view it.w as select id from it.t with check option",
        "create user u2@'%'",
        "grant insert on it.* to u2@'%'",
    ] {
        ok(&mut s, sql);
    }
    // MariaDB 10.11.14 for the same statements.
    let cases: &[(&str, &[&str])] = &[
        (
            "select * from information_schema.schemata \
             where schema_name in ('information_schema', 'it')",
            &[
                "def\tinformation_schema\tutf8mb3\tutf8mb3_general_ci\tNULL\t",
                "def\tit\tutf8mb4\tutf8mb4_general_ci\tNULL\t",
            ],
        ),
        (
            "select table_catalog, table_schema, table_name, check_option, is_updatable, \
             definer, security_type, algorithm from information_schema.views \
             where table_schema = 'it' order by table_name",
            &[
                "def\tit\tv\tNONE\tYES\troot@localhost\tDEFINER\tUNDEFINED",
                "def\tit\tw\tCASCADED\tYES\troot@localhost\tDEFINER\tMERGE",
            ],
        ),
        (
            "select table_name, table_type, engine, auto_increment, table_collation, \
             create_options, table_comment, temporary from information_schema.tables \
             where table_schema = 'it' order by table_name",
            &[
                "t\tBASE TABLE\tInnoDB\tNULL\tutf8mb4_general_ci\t\t\tN",
                "v\tVIEW\tNULL\tNULL\tNULL\tNULL\tVIEW\tNULL",
                "w\tVIEW\tNULL\tNULL\tNULL\tNULL\tVIEW\tNULL",
            ],
        ),
        (
            "select * from information_schema.columns where table_schema = 'it' \
             order by table_name, ordinal_position",
            &[
                "def\tit\tt\tid\t1\tNULL\tNO\tint\tNULL\tNULL\t10\t0\tNULL\tNULL\tNULL\tint(11)\tPRI\t\tselect,insert,update,references\t\tNEVER\tNULL",
                "def\tit\tt\ta\t2\tNULL\tYES\tint\tNULL\tNULL\t10\t0\tNULL\tNULL\tNULL\tint(11)\t\t\tselect,insert,update,references\t\tNEVER\tNULL",
                "def\tit\tv\tid\t1\tNULL\tNO\tint\tNULL\tNULL\t10\t0\tNULL\tNULL\tNULL\tint(11)\t\t\tselect,insert,update,references\t\tNEVER\tNULL",
                "def\tit\tv\ta\t2\tNULL\tYES\tint\tNULL\tNULL\t10\t0\tNULL\tNULL\tNULL\tint(11)\t\t\tselect,insert,update,references\t\tNEVER\tNULL",
                "def\tit\tw\tid\t1\tNULL\tNO\tint\tNULL\tNULL\t10\t0\tNULL\tNULL\tNULL\tint(11)\t\t\tselect,insert,update,references\t\tNEVER\tNULL",
            ],
        ),
        // MariaDB's statistics columns (TABLE_ROWS .. DATA_FREE, CREATE_TIME) are left out:
        // onelog keeps none (0 and NULL).
        (
            "select table_catalog, table_schema, table_name, partition_name, \
             subpartition_name, partition_ordinal_position, subpartition_ordinal_position, \
             partition_method, subpartition_method, partition_expression, \
             subpartition_expression, partition_description, max_data_length, update_time, \
             check_time, checksum, partition_comment, nodegroup, tablespace_name \
             from information_schema.partitions where table_schema = 'it'",
            &["def\tit\tt\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\t\t\tNULL"],
        ),
    ];
    for (sql, want) in cases {
        assert_eq!(tabbed(&mut s, sql), *want, "{sql}");
    }
    // A user without SHOW VIEW sees the views, not their definitions.
    let mut u = login(&db, 2, "u2", "127.0.0.1");
    assert_eq!(
        tabbed(
            &mut u,
            "select table_name, view_definition from information_schema.views order by 1"
        ),
        ["v\t", "w\t"]
    );
    let def = tabbed(
        &mut s,
        "select view_definition from information_schema.views where table_name = 'v'",
    );
    assert!(
        def[0].contains("it.t") && def[0].contains("a > 1"),
        "{def:?}"
    );
    // ... and only the databases it holds a privilege on.
    assert_eq!(
        tabbed(
            &mut u,
            "select schema_name from information_schema.schemata"
        ),
        ["information_schema", "it"]
    );
}

#[test]
fn engines_character_sets_and_collations_match_show() {
    let db = Db::open("infoschema_cs");
    let mut s = session(&db);
    // MariaDB 10.11.14's rows for the character sets and collations onelog has.
    assert_eq!(
        tabbed(
            &mut s,
            "select * from information_schema.character_sets order by 1"
        ),
        [
            "binary\tbinary\tBinary pseudo charset\t1",
            "utf8mb4\tutf8mb4_general_ci\tUTF-8 Unicode\t4"
        ]
    );
    assert_eq!(
        tabbed(
            &mut s,
            "select * from information_schema.collations order by id"
        ),
        [
            "utf8mb4_general_ci\tutf8mb4\t45\tYes\tYes\t1",
            "utf8mb4_bin\tutf8mb4\t46\t\tYes\t1",
            "binary\tbinary\t63\tYes\tYes\t1",
            "utf8mb4_unicode_ci\tutf8mb4\t224\t\tYes\t8",
        ]
    );
    assert_eq!(
        tabbed(&mut s, "select * from information_schema.engines"),
        tabbed(&mut s, "SHOW ENGINES")
    );
}

#[test]
fn variables_and_status_tables_follow_show() {
    let db = Db::open("infoschema_vars");
    let mut s = session(&db);
    ok(&mut s, "SET autocommit = 0");
    // MariaDB 10.11.14 after the same SET: the session's value, and global ones (onelog's
    // autocommit is a session variable only, so GLOBAL_VARIABLES lacks it, as SHOW GLOBAL
    // VARIABLES does).
    assert_eq!(
        tabbed(
            &mut s,
            "select * from information_schema.session_variables \
             where variable_name = 'autocommit'"
        ),
        ["AUTOCOMMIT\tOFF"]
    );
    assert_eq!(
        tabbed(
            &mut s,
            "select * from information_schema.global_variables \
             where variable_name in ('max_connections', 'max_allowed_packet') order by 1"
        ),
        ["MAX_ALLOWED_PACKET\t16777216", "MAX_CONNECTIONS\t151"]
    );
    // Every variable SHOW lists, named in upper case.
    let names = |s: &mut Session, sql: &str| -> Vec<String> {
        let mut v: Vec<String> = tabbed(s, sql)
            .into_iter()
            .map(|r| {
                r.split('\t')
                    .next()
                    .unwrap_or_default()
                    .to_ascii_uppercase()
            })
            .collect();
        v.sort();
        v
    };
    assert_eq!(
        names(
            &mut s,
            "select variable_name from information_schema.session_variables"
        ),
        names(&mut s, "SHOW VARIABLES")
    );
    assert_eq!(
        names(
            &mut s,
            "select variable_name from information_schema.global_variables"
        ),
        names(&mut s, "SHOW GLOBAL VARIABLES")
    );
    assert_eq!(
        names(
            &mut s,
            "select variable_name from information_schema.global_status"
        ),
        names(&mut s, "SHOW GLOBAL STATUS")
    );
    assert_eq!(
        tabbed(
            &mut s,
            "select count(*) from information_schema.session_status \
             where variable_name = 'UPTIME' and variable_value + 0 >= 0"
        ),
        ["1"]
    );
}

#[test]
fn processlist_has_mariadbs_extra_columns() {
    let db = Db::open("infoschema_proc");
    let mut s = session(&db);
    // MariaDB 10.11.14 for its own connection (STAGE .. PROGRESS and EXAMINED_ROWS; its
    // MEMORY_USED is real, onelog's 0).
    assert_eq!(
        tabbed(
            &mut s,
            "select user, host, db, command, stage, max_stage, progress, examined_rows \
             from information_schema.processlist where id = connection_id()"
        ),
        ["root\tlocalhost\tNULL\tQuery\t0\t0\t0.000\t0"]
    );
}

#[test]
fn privilege_tables_follow_the_accounts() {
    let db = Db::open("infoschema_privs");
    let mut s = session(&db);
    for sql in [
        "create database it",
        "create user u@localhost",
        "grant select, process on *.* to u@localhost with grant option",
        "grant select, insert on it.* to u@localhost",
        "create user u2@'%'",
        "grant insert on it.* to u2@'%'",
    ] {
        ok(&mut s, sql);
    }
    // MariaDB 10.11.14 after the same statements (root sees every account).
    assert_eq!(
        tabbed(
            &mut s,
            "select * from information_schema.user_privileges where grantee like '''u%'"
        ),
        [
            "'u'@'localhost'\tdef\tSELECT\tYES",
            "'u'@'localhost'\tdef\tPROCESS\tYES",
            "'u2'@'%'\tdef\tUSAGE\tNO",
        ]
    );
    assert_eq!(
        tabbed(
            &mut s,
            "select * from information_schema.schema_privileges where grantee like '''u%'"
        ),
        [
            "'u'@'localhost'\tdef\tit\tSELECT\tNO",
            "'u'@'localhost'\tdef\tit\tINSERT\tNO",
            "'u2'@'%'\tdef\tit\tINSERT\tNO",
        ]
    );
    // Without SELECT on mysql an account sees its own grants only.
    let mut u2 = login(&db, 2, "u2", "127.0.0.1");
    assert_eq!(
        tabbed(&mut u2, "select * from information_schema.user_privileges"),
        ["'u2'@'%'\tdef\tUSAGE\tNO"]
    );
    assert_eq!(
        tabbed(
            &mut u2,
            "select * from information_schema.schema_privileges"
        ),
        ["'u2'@'%'\tdef\tit\tINSERT\tNO"]
    );
    // The INNODB_CMP* tables: one row of zeros per compressed page size, for PROCESS only.
    let zeros = [
        "1024\t0\t0\t0\t0\t0",
        "2048\t0\t0\t0\t0\t0",
        "4096\t0\t0\t0\t0\t0",
        "8192\t0\t0\t0\t0\t0",
        "16384\t0\t0\t0\t0\t0",
    ];
    let mut u = login(&db, 3, "u", "localhost");
    for t in [
        "INNODB_CMP",
        "INNODB_CMP_RESET",
        "INNODB_CMPMEM",
        "INNODB_CMPMEM_RESET",
    ] {
        let sql = format!("select * from information_schema.{t}");
        assert_eq!(tabbed(&mut u, &sql), zeros, "{sql}");
        let e = fail(&mut u2, &sql);
        assert_eq!(
            (e.code, e.message.as_str()),
            (
                1227,
                "Access denied; you need (at least one of) the PROCESS privilege(s) for this operation"
            )
        );
    }
}

#[test]
fn columns_of_every_type_match_mariadb() {
    let db = Db::open("infoschema_types");
    let mut s = session(&db);
    ok(&mut s, "create database it");
    ok(
        &mut s,
        "create table it.ty (a tinyint unsigned, b mediumint unsigned, c int unsigned, \
         f decimal, h varchar(5) collate utf8mb4_unicode_ci, i datetime, \
         j timestamp(6) not null default current_timestamp(6), k bit(1), l year, m json, \
         n enum('x') collate utf8mb4_bin, o longblob, p mediumblob, \
         q set('a','b') not null default 'a', r time, s date not null, t char(0), \
         u bigint not null default -5, v double precision, w real, x numeric(5,2))",
    );
    // MariaDB 10.11.14 for the same table (the columns python-mysql-replication and Django
    // read among them).
    assert_eq!(
        tabbed(
            &mut s,
            "select * from information_schema.columns where table_name = 'ty' \
             order by ordinal_position"
        ),
        [
            "def\tit\tty\ta\t1\tNULL\tYES\ttinyint\tNULL\tNULL\t3\t0\tNULL\tNULL\tNULL\ttinyint(3) unsigned\t\t\tselect,insert,update,references\t\tNEVER\tNULL",
            "def\tit\tty\tb\t2\tNULL\tYES\tmediumint\tNULL\tNULL\t8\t0\tNULL\tNULL\tNULL\tmediumint(8) unsigned\t\t\tselect,insert,update,references\t\tNEVER\tNULL",
            "def\tit\tty\tc\t3\tNULL\tYES\tint\tNULL\tNULL\t10\t0\tNULL\tNULL\tNULL\tint(10) unsigned\t\t\tselect,insert,update,references\t\tNEVER\tNULL",
            "def\tit\tty\tf\t4\tNULL\tYES\tdecimal\tNULL\tNULL\t10\t0\tNULL\tNULL\tNULL\tdecimal(10,0)\t\t\tselect,insert,update,references\t\tNEVER\tNULL",
            "def\tit\tty\th\t5\tNULL\tYES\tvarchar\t5\t20\tNULL\tNULL\tNULL\tutf8mb4\tutf8mb4_unicode_ci\tvarchar(5)\t\t\tselect,insert,update,references\t\tNEVER\tNULL",
            "def\tit\tty\ti\t6\tNULL\tYES\tdatetime\tNULL\tNULL\tNULL\tNULL\t0\tNULL\tNULL\tdatetime\t\t\tselect,insert,update,references\t\tNEVER\tNULL",
            "def\tit\tty\tj\t7\tcurrent_timestamp(6)\tNO\ttimestamp\tNULL\tNULL\tNULL\tNULL\t6\tNULL\tNULL\ttimestamp(6)\t\t\tselect,insert,update,references\t\tNEVER\tNULL",
            "def\tit\tty\tk\t8\tNULL\tYES\tbit\tNULL\tNULL\t1\tNULL\tNULL\tNULL\tNULL\tbit(1)\t\t\tselect,insert,update,references\t\tNEVER\tNULL",
            "def\tit\tty\tl\t9\tNULL\tYES\tyear\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\tyear(4)\t\t\tselect,insert,update,references\t\tNEVER\tNULL",
            "def\tit\tty\tm\t10\tNULL\tYES\tlongtext\t4294967295\t4294967295\tNULL\tNULL\tNULL\tutf8mb4\tutf8mb4_bin\tlongtext\t\t\tselect,insert,update,references\t\tNEVER\tNULL",
            "def\tit\tty\tn\t11\tNULL\tYES\tenum\t1\t4\tNULL\tNULL\tNULL\tutf8mb4\tutf8mb4_bin\tenum('x')\t\t\tselect,insert,update,references\t\tNEVER\tNULL",
            "def\tit\tty\to\t12\tNULL\tYES\tlongblob\t4294967295\t4294967295\tNULL\tNULL\tNULL\tNULL\tNULL\tlongblob\t\t\tselect,insert,update,references\t\tNEVER\tNULL",
            "def\tit\tty\tp\t13\tNULL\tYES\tmediumblob\t16777215\t16777215\tNULL\tNULL\tNULL\tNULL\tNULL\tmediumblob\t\t\tselect,insert,update,references\t\tNEVER\tNULL",
            "def\tit\tty\tq\t14\t'a'\tNO\tset\t3\t12\tNULL\tNULL\tNULL\tutf8mb4\tutf8mb4_general_ci\tset('a','b')\t\t\tselect,insert,update,references\t\tNEVER\tNULL",
            "def\tit\tty\tr\t15\tNULL\tYES\ttime\tNULL\tNULL\tNULL\tNULL\t0\tNULL\tNULL\ttime\t\t\tselect,insert,update,references\t\tNEVER\tNULL",
            "def\tit\tty\ts\t16\tNULL\tNO\tdate\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\tdate\t\t\tselect,insert,update,references\t\tNEVER\tNULL",
            "def\tit\tty\tt\t17\tNULL\tYES\tchar\t0\t0\tNULL\tNULL\tNULL\tutf8mb4\tutf8mb4_general_ci\tchar(0)\t\t\tselect,insert,update,references\t\tNEVER\tNULL",
            "def\tit\tty\tu\t18\t-5\tNO\tbigint\tNULL\tNULL\t19\t0\tNULL\tNULL\tNULL\tbigint(20)\t\t\tselect,insert,update,references\t\tNEVER\tNULL",
            "def\tit\tty\tv\t19\tNULL\tYES\tdouble\tNULL\tNULL\t22\tNULL\tNULL\tNULL\tNULL\tdouble\t\t\tselect,insert,update,references\t\tNEVER\tNULL",
            "def\tit\tty\tw\t20\tNULL\tYES\tdouble\tNULL\tNULL\t22\tNULL\tNULL\tNULL\tNULL\tdouble\t\t\tselect,insert,update,references\t\tNEVER\tNULL",
            "def\tit\tty\tx\t21\tNULL\tYES\tdecimal\tNULL\tNULL\t5\t2\tNULL\tNULL\tNULL\tdecimal(5,2)\t\t\tselect,insert,update,references\t\tNEVER\tNULL",
        ]
    );
}

#[test]
fn information_schema_describes_its_own_tables() {
    let db = Db::open("infoschema_own");
    let mut s = session(&db);
    ok(&mut s, "CREATE USER nobody@localhost");
    let mut n = login(&db, 2, "nobody", "localhost");
    // MariaDB 10.11.14 (its statistics and CREATE_OPTIONS left out: onelog's are NULL).
    assert_eq!(
        tabbed(
            &mut n,
            "select table_catalog, table_schema, table_name, table_type, engine, version, \
             row_format, table_collation, table_comment, temporary \
             from information_schema.tables where table_schema = 'information_schema' \
             and table_name in ('ENGINES', 'COLUMNS', 'INNODB_CMP')"
        ),
        [
            "def\tinformation_schema\tCOLUMNS\tSYSTEM VIEW\tAria\t11\tPage\tutf8mb3_general_ci\t\tY",
            "def\tinformation_schema\tENGINES\tSYSTEM VIEW\tMEMORY\t11\tFixed\tutf8mb3_general_ci\t\tY",
            "def\tinformation_schema\tINNODB_CMP\tSYSTEM VIEW\tMEMORY\t11\tFixed\tutf8mb3_general_ci\t\tY",
        ]
    );
    assert_eq!(
        tabbed(
            &mut n,
            "select count(*) from information_schema.tables \
             where table_schema = 'information_schema'"
        ),
        ["31"]
    );
    assert_eq!(
        tabbed(
            &mut n,
            "select * from information_schema.columns where table_schema = 'information_schema' \
             and table_name = 'PROCESSLIST' order by ordinal_position"
        ),
        [
            "def\tinformation_schema\tPROCESSLIST\tID\t1\tNULL\tNO\tbigint\tNULL\tNULL\t19\t0\tNULL\tNULL\tNULL\tbigint(4)\t\t\tselect\t\tNEVER\tNULL",
            "def\tinformation_schema\tPROCESSLIST\tUSER\t2\tNULL\tNO\tvarchar\t128\t384\tNULL\tNULL\tNULL\tutf8mb3\tutf8mb3_general_ci\tvarchar(128)\t\t\tselect\t\tNEVER\tNULL",
            "def\tinformation_schema\tPROCESSLIST\tHOST\t3\tNULL\tNO\tvarchar\t64\t192\tNULL\tNULL\tNULL\tutf8mb3\tutf8mb3_general_ci\tvarchar(64)\t\t\tselect\t\tNEVER\tNULL",
            "def\tinformation_schema\tPROCESSLIST\tDB\t4\tNULL\tYES\tvarchar\t64\t192\tNULL\tNULL\tNULL\tutf8mb3\tutf8mb3_general_ci\tvarchar(64)\t\t\tselect\t\tNEVER\tNULL",
            "def\tinformation_schema\tPROCESSLIST\tCOMMAND\t5\tNULL\tNO\tvarchar\t16\t48\tNULL\tNULL\tNULL\tutf8mb3\tutf8mb3_general_ci\tvarchar(16)\t\t\tselect\t\tNEVER\tNULL",
            "def\tinformation_schema\tPROCESSLIST\tTIME\t6\tNULL\tNO\tint\tNULL\tNULL\t10\t0\tNULL\tNULL\tNULL\tint(7)\t\t\tselect\t\tNEVER\tNULL",
            "def\tinformation_schema\tPROCESSLIST\tSTATE\t7\tNULL\tYES\tvarchar\t64\t192\tNULL\tNULL\tNULL\tutf8mb3\tutf8mb3_general_ci\tvarchar(64)\t\t\tselect\t\tNEVER\tNULL",
            "def\tinformation_schema\tPROCESSLIST\tINFO\t8\tNULL\tYES\tlongtext\t4294967295\t4294967295\tNULL\tNULL\tNULL\tutf8mb3\tutf8mb3_general_ci\tlongtext\t\t\tselect\t\tNEVER\tNULL",
            "def\tinformation_schema\tPROCESSLIST\tTIME_MS\t9\tNULL\tNO\tdecimal\tNULL\tNULL\t22\t3\tNULL\tNULL\tNULL\tdecimal(22,3)\t\t\tselect\t\tNEVER\tNULL",
            "def\tinformation_schema\tPROCESSLIST\tSTAGE\t10\tNULL\tNO\ttinyint\tNULL\tNULL\t3\t0\tNULL\tNULL\tNULL\ttinyint(2)\t\t\tselect\t\tNEVER\tNULL",
            "def\tinformation_schema\tPROCESSLIST\tMAX_STAGE\t11\tNULL\tNO\ttinyint\tNULL\tNULL\t3\t0\tNULL\tNULL\tNULL\ttinyint(2)\t\t\tselect\t\tNEVER\tNULL",
            "def\tinformation_schema\tPROCESSLIST\tPROGRESS\t12\tNULL\tNO\tdecimal\tNULL\tNULL\t7\t3\tNULL\tNULL\tNULL\tdecimal(7,3)\t\t\tselect\t\tNEVER\tNULL",
            "def\tinformation_schema\tPROCESSLIST\tMEMORY_USED\t13\tNULL\tNO\tbigint\tNULL\tNULL\t19\t0\tNULL\tNULL\tNULL\tbigint(7)\t\t\tselect\t\tNEVER\tNULL",
            "def\tinformation_schema\tPROCESSLIST\tMAX_MEMORY_USED\t14\tNULL\tNO\tbigint\tNULL\tNULL\t19\t0\tNULL\tNULL\tNULL\tbigint(7)\t\t\tselect\t\tNEVER\tNULL",
            "def\tinformation_schema\tPROCESSLIST\tEXAMINED_ROWS\t15\tNULL\tNO\tint\tNULL\tNULL\t10\t0\tNULL\tNULL\tNULL\tint(7)\t\t\tselect\t\tNEVER\tNULL",
            "def\tinformation_schema\tPROCESSLIST\tQUERY_ID\t16\tNULL\tNO\tbigint\tNULL\tNULL\t19\t0\tNULL\tNULL\tNULL\tbigint(4)\t\t\tselect\t\tNEVER\tNULL",
            "def\tinformation_schema\tPROCESSLIST\tINFO_BINARY\t17\tNULL\tYES\tblob\t65535\t65535\tNULL\tNULL\tNULL\tNULL\tNULL\tblob\t\t\tselect\t\tNEVER\tNULL",
            "def\tinformation_schema\tPROCESSLIST\tTID\t18\tNULL\tNO\tbigint\tNULL\tNULL\t19\t0\tNULL\tNULL\tNULL\tbigint(4)\t\t\tselect\t\tNEVER\tNULL",
        ]
    );
}

#[test]
fn the_mysql_schemas_tables_are_described_as_mariadb_describes_them() {
    let db = Db::open("infoschema-mysql");
    let mut s = session(&db);
    for (sql, want) in expected_mysql::MYSQL_ROWS {
        assert_eq!(tabbed(&mut s, sql), *want, "{sql}");
    }
    // MariaDB's statistics (row counts, lengths, times) are NULL: onelog keeps none.
    assert_eq!(
        tabbed(
            &mut s,
            "select table_rows, data_length, create_time, max_index_length \
             from information_schema.tables where table_schema = 'mysql' and table_name = 'db'"
        ),
        ["NULL\tNULL\tNULL\tNULL"]
    );
    // Without a privilege on `mysql` an account sees none of its tables.
    ok(&mut s, "CREATE USER nobody@localhost");
    let mut other = Session::new(db.server.clone(), 2, "nobody", "localhost");
    assert_eq!(
        tabbed(
            &mut other,
            "select count(*) from information_schema.columns where table_schema = 'mysql'"
        ),
        ["0"]
    );
}
