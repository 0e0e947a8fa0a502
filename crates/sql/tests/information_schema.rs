//! `information_schema` (the slice onelog serves: TABLES, COLUMNS, TABLE_CONSTRAINTS,
//! KEY_COLUMN_USAGE, REFERENTIAL_CONSTRAINTS, CHECK_CONSTRAINTS, STATISTICS) and the SHOW
//! forms that share its column facts, against the rows MariaDB 10.11 printed for the same
//! schema (`mariadb -N`, tab-separated; captured from a real server). SHOW INDEX's and
//! STATISTICS' CARDINALITY is left out: onelog keeps no index statistics (NULL).

use onelog_sql::Session;

mod common;
use common::{fail, ok, text_rows, Db};

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
            "SELECT table_schema, table_name FROM information_schema.tables"
        ),
        ["other\to"]
    );
}
