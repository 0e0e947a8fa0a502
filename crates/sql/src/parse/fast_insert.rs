//! The bulk INSERT fast path (issue 14 part 4): `INSERT [IGNORE] INTO t [(cols)] VALUES (...),
//! (...)` and `REPLACE INTO ...` whose values are all plain literals, recognised by a small
//! scanner without sqlparser's tokenizer and parser (which took over a third of the server's
//! CPU in a sysbench `prepare`: a token, a `String` and an AST node per literal).
//!
//! What it accepts, exactly: ASCII whitespace (space, tab, CR, LF) between tokens; the table as
//! `name` or `db.name`; column names; values that are unsigned decimal integers (`123`), a minus
//! directly before one (`-5`), single-quoted strings without a backslash (`''` inside is a
//! quote), `NULL` and `DEFAULT`; nothing after the last row. A name is either unquoted
//! (`[A-Za-z_][A-Za-z0-9_$]*`, and for the table not one of sqlparser's keywords) or in
//! backticks without a backtick inside.
//!
//! Invariant: [`scan`] returns `Some` only for text that sqlparser's MySQL dialect parses into
//! an `INSERT` whose compiled plan (`plan::dml::compile_insert`) is the one
//! `plan::dml::compile_literal_insert` builds from the scan: same table and column names, same
//! flags, and per value the literal `Compiler::compile` would produce (numbers through
//! [`crate::expr::number_literal`], a minus through [`crate::expr::negate_literal`]). Anything
//! else (comments, escapes, double quotes, decimals, exponents, hex/bit literals, charset
//! introducers, expressions, functions, `SET`, `ON DUPLICATE KEY UPDATE`, priorities,
//! partitions, a trailing `;`) gives `None`, and the statement takes the general path: the
//! fast path never gives a different answer, only a faster one. `tests::fast_path_matches_
//! the_parser` compares the two over a corpus.
//!
//! Called by `Session::run_text` for COM_QUERY statements starting with `INSERT`/`REPLACE`.

use onelog_binlog::Value;
use sqlparser::ast::{Ident, ObjectName};

/// A scanned literal INSERT (see the module docs).
#[derive(Debug)]
pub(crate) struct LiteralInsert {
    pub replace: bool,
    pub ignore: bool,
    pub table: ObjectName,
    /// Target columns as written (empty: all columns).
    pub columns: Vec<ObjectName>,
    /// One entry per value: `None` for `DEFAULT`.
    pub rows: Vec<Vec<Option<Value>>>,
}

/// The literal INSERT `sql` is, or `None` when the general parser must handle it.
pub(crate) fn scan(sql: &str) -> Option<LiteralInsert> {
    let first = *sql.as_bytes().first()?;
    if !matches!(first | 0x20, b'i' | b'r') {
        return None;
    }
    let mut s = Scanner { s: sql, i: 0 };
    let (replace, ignore) = if s.keyword("INSERT") {
        (false, s.keyword("IGNORE"))
    } else if s.keyword("REPLACE") {
        (true, false)
    } else {
        return None;
    };
    if !s.keyword("INTO") {
        return None;
    }
    let table = s.object_name(true)?;
    let mut columns = Vec::new();
    if s.punct(b'(') {
        loop {
            columns.push(s.object_name(false)?);
            if s.punct(b')') {
                break;
            }
            if !s.punct(b',') {
                return None;
            }
        }
    }
    if !s.keyword("VALUES") {
        return None;
    }
    let rows = s.rows(columns.len())?;
    s.ws();
    (s.i == sql.len()).then_some(LiteralInsert {
        replace,
        ignore,
        table,
        columns,
        rows,
    })
}

struct Scanner<'a> {
    s: &'a str,
    i: usize,
}

impl<'a> Scanner<'a> {
    fn bytes(&self) -> &'a [u8] {
        self.s.as_bytes()
    }

    fn peek(&self) -> Option<u8> {
        self.bytes().get(self.i).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    /// After whitespace: `c`, consumed.
    fn punct(&mut self, c: u8) -> bool {
        self.ws();
        if self.peek() == Some(c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    /// After whitespace: an unquoted word that ends at a delimiter the scanner knows (`None`
    /// when anything else follows it, e.g. `@`, a quote or a non-ASCII letter).
    fn word(&mut self) -> Option<&'a str> {
        self.ws();
        let b = self.bytes();
        let start = self.i;
        if !b
            .get(start)
            .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
        {
            return None;
        }
        let mut end = start + 1;
        while b
            .get(end)
            .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'$'))
        {
            end += 1;
        }
        match b.get(end) {
            None | Some(b' ' | b'\t' | b'\n' | b'\r' | b'(' | b')' | b',' | b'.') => {
                self.i = end;
                Some(&self.s[start..end])
            }
            _ => None,
        }
    }

    /// The keyword `kw` (upper case), consumed; nothing consumed otherwise.
    fn keyword(&mut self, kw: &str) -> bool {
        let at = self.i;
        match self.word() {
            Some(w) if w.eq_ignore_ascii_case(kw) => true,
            _ => {
                self.i = at;
                false
            }
        }
    }

    /// One name part: a backticked name without a backtick inside, or an unquoted word
    /// (`table`: not a keyword; a column: not `SELECT`/`WITH`, which would start a subquery).
    fn ident(&mut self, table: bool) -> Option<Ident> {
        self.ws();
        if self.peek() == Some(b'`') {
            let start = self.i + 1;
            let len = self.bytes()[start..].iter().position(|&c| c == b'`')?;
            let end = start + len;
            // A doubled backtick is an escaped one: the general path decodes it.
            if len == 0 || self.bytes().get(end + 1) == Some(&b'`') {
                return None;
            }
            self.i = end + 1;
            return Some(Ident::with_quote('`', &self.s[start..end]));
        }
        let w = self.word()?;
        let refused = if table {
            is_keyword(w)
        } else {
            w.eq_ignore_ascii_case("SELECT") || w.eq_ignore_ascii_case("WITH")
        };
        (!refused).then(|| Ident::new(w))
    }

    /// `name` or `db.name` (no whitespace around the dot).
    fn object_name(&mut self, table: bool) -> Option<ObjectName> {
        let mut parts = vec![self.ident(table)?];
        if self.peek() == Some(b'.') {
            self.i += 1;
            if matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
                return None;
            }
            parts.push(self.ident(table)?);
        }
        Some(ObjectName::from(parts))
    }

    /// `(v, ...), (v, ...) ...`; each row holds at least one value.
    fn rows(&mut self, width: usize) -> Option<Vec<Vec<Option<Value>>>> {
        let mut rows = Vec::new();
        loop {
            if !self.punct(b'(') {
                return None;
            }
            let mut row = Vec::with_capacity(width.max(rows.last().map_or(0, Vec::len)));
            loop {
                row.push(self.value()?);
                if self.punct(b')') {
                    break;
                }
                if !self.punct(b',') {
                    return None;
                }
            }
            rows.push(row);
            if !self.punct(b',') {
                return Some(rows);
            }
        }
    }

    /// One value: `Some(None)` for `DEFAULT`.
    fn value(&mut self) -> Option<Option<Value>> {
        self.ws();
        match self.peek()? {
            b'\'' => self.string().map(Some),
            b'0'..=b'9' => self.number().map(Some),
            b'-' => {
                self.i += 1;
                if !self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    return None;
                }
                crate::expr::negate_literal(self.number()?).ok().map(Some)
            }
            _ => {
                let w = self.word()?;
                if w.eq_ignore_ascii_case("NULL") {
                    Some(Some(Value::Null))
                } else if w.eq_ignore_ascii_case("DEFAULT") {
                    Some(None)
                } else {
                    None
                }
            }
        }
    }

    /// Digits followed by whitespace, `,` or `)`.
    fn number(&mut self) -> Option<Value> {
        let b = self.bytes();
        let start = self.i;
        let mut end = start;
        while b.get(end).is_some_and(u8::is_ascii_digit) {
            end += 1;
        }
        if !matches!(b.get(end), Some(b' ' | b'\t' | b'\n' | b'\r' | b',' | b')')) {
            return None;
        }
        self.i = end;
        crate::expr::number_literal(&self.s[start..end]).ok()
    }

    /// `'...'` without a backslash; `''` inside is one quote.
    fn string(&mut self) -> Option<Value> {
        let b = self.bytes();
        let mut i = self.i + 1;
        let mut out = Vec::new();
        loop {
            let run = b.get(i..)?.iter().position(|&c| c == b'\'' || c == b'\\')?;
            let at = i;
            i += run;
            if b[i] == b'\\' {
                return None; // escapes: the general path decodes them
            }
            if b.get(i + 1) != Some(&b'\'') {
                self.i = i + 1;
                // Without a doubled quote the value is the input's bytes, copied once.
                if out.is_empty() {
                    return Some(Value::bytes(&b[at..i]));
                }
                out.extend_from_slice(&b[at..i]);
                return Some(Value::bytes(out));
            }
            out.extend_from_slice(&b[at..i]);
            out.push(b'\'');
            i += 2;
        }
    }
}

/// Whether `w` is one of sqlparser's keywords (any case).
fn is_keyword(w: &str) -> bool {
    let mut buf = [0u8; 40];
    let Some(dst) = buf.get_mut(..w.len()) else {
        return false; // longer than every keyword
    };
    dst.copy_from_slice(w.as_bytes());
    dst.make_ascii_uppercase();
    let up = std::str::from_utf8(dst).unwrap_or("");
    sqlparser::keywords::ALL_KEYWORDS.binary_search(&up).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::{Server, ServerConfig};
    use crate::{Output, Session, SqlError};
    use onelog_binlog::{decode_group, GroupItem};
    use onelog_log::{ReadStart, ReaderOptions};
    use std::sync::Arc;

    /// Statements the fast path must take.
    const FAST: &[&str] = &[
        "INSERT INTO t (k, c, pad) VALUES (1, 'a', 'x1'), (2, 'b', 'x2')",
        "INSERT INTO t(k,c,pad) VALUES(3,'it''s','x3')",
        "insert into t (k, c) values (4, 'ünïcödé€'), (5, '日本語テキスト')",
        "INSERT INTO t (k, c) VALUES (6, 'this string is far too long for ten')",
        "INSERT INTO t (k, u) VALUES (7, 300)",
        "INSERT INTO t (k, u) VALUES (8, -1)",
        "INSERT INTO t (k, big) VALUES (9, 99999999999999999999)",
        "INSERT INTO t (k, big) VALUES (10, -9223372036854775808), (11, 9223372036854775807)",
        "INSERT INTO t (k, big) VALUES (12, 9223372036854775808)",
        "INSERT INTO t (k, big) VALUES (13, -9223372036854775809)",
        "INSERT INTO t (k, big) VALUES (14, -99999999999999999999)",
        "INSERT INTO t (k, d) VALUES (15, 123456)",
        "INSERT INTO t (k, c) VALUES (16, NULL)",
        "INSERT INTO t VALUES (DEFAULT, 17, 'x', NULL, 1, 2, 3, 'bin', 'txt')",
        "INSERT INTO t VALUES (100, 18, 'y', 'p18', 1, 2, 3, 'bin', NULL)",
        "INSERT INTO t (id, k) VALUES (100, 19)",
        "INSERT IGNORE INTO t (id, k) VALUES (100, 20), (101, 21)",
        "REPLACE INTO t (id, k, c) VALUES (100, 22, 'r')",
        "replace into t (id, k, pad) values (102, 23, 'x1'), (103, 24, 'x1')",
        "INSERT INTO t (k, c) VALUES (25)",
        "INSERT INTO t (k, c) VALUES (26, 'a'), (27)",
        "INSERT INTO t (k, nope) VALUES (1, 2)",
        "INSERT INTO nope VALUES (1)",
        "INSERT INTO nodb.t VALUES (1)",
        "INSERT INTO d.t (k) VALUES (28)",
        "INSERT INTO `t` (`k`, `c`) VALUES (29, 'bt')",
        "INSERT INTO `d`.`t` (t.k, `pad`) VALUES (30, 'q')",
        "INSERT INTO t (k, c) VALUES (31, '')",
        "INSERT INTO t (k, c) VALUES\n(32,\t'tab'),\r\n(33 , 'crlf' ) ",
        "INSERT INTO t (k) VALUES (007), (0), (-0)",
        "INSERT INTO t (k, c) VALUES (34, ''''), (35, 'a''''b')",
        "INSERT INTO t (k, b) VALUES (36, 'abcdefghij')",
        "INSERT INTO t (k, pad) VALUES (37, 'toolong')",
        "INSERT INTO t (k) VALUES (2147483648)",
        "INSERT INTO t (k) VALUES (-2147483649)",
        "INSERT INTO t (k, c) VALUES (DEFAULT, DEFAULT)",
        "INSERT INTO t (k, c, k) VALUES (38, 'twice', 39)",
        "INSERT INTO t (id, k, c) VALUES (200, 40, 'id')",
        "INSERT INTO t (k, u) VALUES (41, 18446744073709551616)",
        "INSERT INTO t (k, c) VALUES (42, 'a;b')",
        "INSERT INTO t (k, c) VALUES (43, 'sel(ect), ''x''')",
    ];

    /// Statements it must leave to the general path.
    const GENERAL: &[&str] = &[
        "INSERT INTO t (k, c) VALUES (50, 'a\\nb'), (51, 'q\\'s')",
        "INSERT INTO t (k, c) VALUES (52, '\\0\\Z\\\\'), (53, '\\%\\_')",
        "INSERT INTO t (k, c) VALUES (54, \"dq\")",
        "INSERT INTO t (k, c) VALUES (55, 'a' 'b')",
        "INSERT INTO t (k, d) VALUES (56, 1.5)",
        "INSERT INTO t (k, d) VALUES (57, 1e3)",
        "INSERT INTO t (k, b) VALUES (58, 0x41)",
        "INSERT INTO t (k, b) VALUES (59, X'41')",
        "INSERT INTO t (k, c) VALUES (60, _utf8mb4'x')",
        "INSERT INTO t (k, c) VALUES (61, CONCAT('a', 'b'))",
        "INSERT INTO t (k) VALUES (1+1)",
        "INSERT INTO t (k) VALUES (- 5)",
        "INSERT INTO t (k) VALUES (--5\n)",
        "INSERT INTO t (k) VALUES (62) ON DUPLICATE KEY UPDATE k = 1",
        "INSERT INTO t SET k = 63",
        "INSERT LOW_PRIORITY INTO t (k) VALUES (64)",
        "INSERT t (k) VALUES (65)",
        "INSERT INTO t (k) VALUE (66)",
        "INSERT INTO t (k) SELECT 67",
        "INSERT INTO t (k) VALUES (TRUE)",
        "INSERT INTO t (k) VALUES ()",
        "INSERT INTO t (k) VALUES (68) /* c */",
        "INSERT INTO t (k) VALUES (69) # c",
        "INSERT INTO t (k) VALUES (@x)",
        "INSERT INTO t (k,) VALUES (70)",
        "INSERT INTO t (k) VALUES (71),",
        "INSERT INTO t (k) VALUES (72) (73)",
        "INSERT INTO t (k, c) VALUES (74, 'unterminated)",
        "INSERT INTO `t``x` (k) VALUES (75)",
        "INSERT INTO select (k) VALUES (76)",
        "INSERT INTO t (k) VALUES (77abc)",
        "INSERT INTO t (k) VALUES (78.)",
        "INSERT INTO t (c) VALUES (N'n')",
        "INSERT INTO d . t (k) VALUES (79)",
        "SELECT 1",
    ];

    #[test]
    fn the_scanner_takes_exactly_the_plain_literal_statements() {
        for sql in FAST {
            assert!(scan(sql.trim()).is_some(), "fast path refused: {sql}");
            assert!(scan(&format!("{sql} /**/")).is_none(), "{sql} /**/");
        }
        for sql in GENERAL {
            assert!(scan(sql).is_none(), "fast path took: {sql}");
        }
        let ins = scan("INSERT INTO t (k, c) VALUES (-7, 'it''s'), (DEFAULT, NULL)").unwrap();
        assert_eq!(
            ins.rows,
            vec![
                vec![Some(Value::Int(-7)), Some(Value::bytes(b"it's"))],
                vec![None, Some(Value::Null)],
            ]
        );
        assert_eq!(ins.table.to_string(), "t");
        assert_eq!(ins.columns.len(), 2);
        assert!(!ins.replace && !ins.ignore);
    }

    /// One value of sqlparser's tree as the compiler folds it (`None`: `DEFAULT`); `Err` for a
    /// shape the scanner must never accept.
    fn parsed_value(e: &sqlparser::ast::Expr) -> Result<Option<Value>, String> {
        use sqlparser::ast::{Expr as A, UnaryOperator, Value as V};
        match e {
            A::Identifier(i)
                if i.quote_style.is_none() && i.value.eq_ignore_ascii_case("DEFAULT") =>
            {
                Ok(None)
            }
            A::Value(v) => match &v.value {
                V::Number(n, false) => crate::expr::number_literal(n)
                    .map(Some)
                    .map_err(|e| e.message),
                V::SingleQuotedString(s) => Ok(Some(Value::bytes(s.as_bytes()))),
                V::Null => Ok(Some(Value::Null)),
                other => Err(format!("{other:?}")),
            },
            A::UnaryOp {
                op: UnaryOperator::Minus,
                expr,
            } => match parsed_value(expr)? {
                Some(v @ (Value::Int(_) | Value::UInt(_) | Value::Decimal(_))) => {
                    crate::expr::negate_literal(v)
                        .map(Some)
                        .map_err(|v| format!("-{v:?}"))
                }
                other => Err(format!("-{other:?}")),
            },
            other => Err(format!("{other:?}")),
        }
    }

    /// What sqlparser makes of `sql`, in the scanner's terms.
    fn parsed_insert(sql: &str) -> Result<LiteralInsert, String> {
        use sqlparser::ast::{SetExpr, Statement, TableObject};
        let Ok(crate::parse::Parsed::Sql(stmt, _)) = crate::parse::parse_statement(sql) else {
            return Err("not parsed as one statement".into());
        };
        let Statement::Insert(i) = *stmt else {
            return Err("not an INSERT".into());
        };
        let (TableObject::TableName(table), Some(src)) = (&i.table, &i.source) else {
            return Err("no table or no source".into());
        };
        let SetExpr::Values(v) = &*src.body else {
            return Err("not VALUES".into());
        };
        if i.on.is_some() || !i.assignments.is_empty() || i.partitioned.is_some() {
            return Err("more than VALUES".into());
        }
        let rows = v
            .rows
            .iter()
            .map(|r| r.content.iter().map(parsed_value).collect());
        Ok(LiteralInsert {
            replace: i.replace_into,
            ignore: i.ignore,
            table: table.clone(),
            columns: i.columns.clone(),
            rows: rows.collect::<Result<_, _>>()?,
        })
    }

    fn value_text() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        prop_oneof![
            "[0-9]{1,22}",
            "-[0-9]{1,22}",
            "'[aé日'\\\" ,()%_\n0]{0,10}'",
            "'[a-z]{0,4}'",
            Just("NULL".to_string()),
            Just("null".to_string()),
            Just("Default".to_string()),
            "[-+0-9.eExX'a-z ]{1,5}",
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: 3000,
            failure_persistence: None,
            ..proptest::prelude::ProptestConfig::default()
        })]
        /// Whatever the scanner accepts, sqlparser reads as the same INSERT: same table and
        /// columns, same flags, and per value the literal the compiler would make.
        #[test]
        fn whatever_the_scanner_takes_the_parser_reads_the_same(
            rows in proptest::collection::vec(proptest::collection::vec(value_text(), 1..4), 1..4),
            ws in "[ \t\n]{0,2}",
            head in proptest::sample::select(vec![
                "INSERT INTO t (a, b) VALUES",
                "insert ignore into d.`t x` (`c`,b) values",
                "REPLACE INTO t(a)VALUES",
                "INSERT INTO t VALUES",
            ]),
        ) {
            let body: Vec<String> = rows.iter().map(|r| format!("({})", r.join(&format!(",{ws}")))).collect();
            let sql = format!("{head}{ws}{}{ws}", body.join(","));
            if let Some(ins) = scan(&sql) {
                let parsed = parsed_insert(&sql);
                proptest::prop_assert!(parsed.is_ok(), "{}: {:?}", sql, parsed.err());
                let parsed = parsed.unwrap();
                let names = |n: &ObjectName| crate::expr::object_name_parts(n);
                proptest::prop_assert_eq!(names(&parsed.table), names(&ins.table), "{}", sql);
                let cols = |c: &[ObjectName]| c.iter().map(names).collect::<Vec<_>>();
                proptest::prop_assert_eq!(cols(&parsed.columns), cols(&ins.columns), "{}", sql);
                proptest::prop_assert_eq!((parsed.replace, parsed.ignore), (ins.replace, ins.ignore));
                proptest::prop_assert_eq!(parsed.rows, ins.rows, "{}", sql);
            }
        }
    }

    struct Db(Arc<Server>, std::path::PathBuf);

    impl Db {
        fn open(tag: &str) -> Db {
            let dir = std::env::temp_dir()
                .join(format!("onelog-fast-insert-{tag}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            let mut cfg = ServerConfig::new(&dir);
            cfg.max_binlog_size = 1 << 20;
            cfg.flush_log_at_trx_commit = 2;
            Db(Server::open(cfg).unwrap().0, dir)
        }

        /// The row changes of every logged transaction, decoded.
        fn row_events(&self) -> Vec<String> {
            let opts = ReaderOptions {
                include_non_durable: true,
                include_state_records: false,
            };
            let log = self.0.engine().log();
            let mut reader = log.reader(ReadStart::Lsn(0), opts).unwrap();
            let mut out = Vec::new();
            while let Some(rec) = reader.next().unwrap() {
                for item in decode_group(&rec.events).unwrap().statements {
                    if let GroupItem::Rows { table, event } = item {
                        out.push(format!("{table:?} {event:?}"));
                    }
                }
            }
            out
        }
    }

    impl Drop for Db {
        fn drop(&mut self) {
            let _ = self.0.shutdown();
            let _ = std::fs::remove_dir_all(&self.1);
        }
    }

    /// A statement's result and its warnings, as text.
    fn outcome(s: &mut Session, sql: &str) -> String {
        let text = |r: Result<Output, SqlError>| match r {
            Ok(Output::Rows { rows, .. }) => rows
                .iter()
                .map(|r| {
                    let cells = r.iter().map(|v| match v {
                        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
                        v => format!("{v:?}"),
                    });
                    cells.collect::<Vec<_>>().join("|")
                })
                .collect::<Vec<_>>()
                .join("\n"),
            other => format!("{other:?}"),
        };
        let r = text(s.query(sql).pop().unwrap());
        let warnings = text(s.query("SHOW WARNINGS").pop().unwrap());
        format!("{r}\nwarnings:\n{warnings}")
    }

    /// Runs the corpus under several sql_modes on two servers, the fast path on one and the
    /// general parser on the other (the same text with a comment appended), and compares each
    /// statement's result and warnings, the tables and the logged row events.
    #[test]
    fn fast_path_matches_the_parser() {
        let setup = [
            "CREATE DATABASE d",
            "USE d",
            "CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, k INT NOT NULL DEFAULT 0, \
             c CHAR(10) NOT NULL DEFAULT '', pad VARCHAR(5), u TINYINT UNSIGNED, big BIGINT, \
             d DECIMAL(5,2), b VARBINARY(8), txt TEXT, UNIQUE KEY uk (pad))",
        ];
        let long = format!(
            "INSERT INTO t (k, txt) VALUES (90, '{}')",
            "é'".repeat(40_000).replace('\'', "''")
        );
        // NO_BACKSLASH_ESCAPES is refused (1235, checked below); the fast path would be right
        // under it too: it leaves every backslash to the general path.
        let modes = [
            "STRICT_TRANS_TABLES",
            "",
            "STRICT_ALL_TABLES,ERROR_FOR_DIVISION_BY_ZERO",
        ];
        let (fast, general) = (Db::open("fast"), Db::open("general"));
        let mut a = Session::new(fast.0.clone(), 1, "root", "localhost");
        let mut b = Session::new(general.0.clone(), 1, "root", "localhost");
        for sql in setup {
            assert!(a.query(sql).pop().unwrap().is_ok(), "{sql}");
            assert!(b.query(sql).pop().unwrap().is_ok(), "{sql}");
        }
        let nbe = a
            .query("SET sql_mode = 'NO_BACKSLASH_ESCAPES'")
            .pop()
            .unwrap();
        assert_eq!(nbe.unwrap_err().code, 1235);
        let mut compared = 0;
        for mode in modes {
            let set = format!("SET sql_mode = '{mode}'");
            a.query(&set).pop().unwrap().unwrap();
            b.query(&set).pop().unwrap().unwrap();
            for sql in FAST.iter().chain(GENERAL).copied().chain([long.as_str()]) {
                let via_general = format!("{sql} /**/");
                assert!(scan(&via_general).is_none());
                // An error that quotes the text quotes the comment too.
                let general = outcome(&mut b, &via_general).replace(" /**/", "");
                assert_eq!(outcome(&mut a, sql), general, "{mode}: {sql}");
                compared += 1;
            }
            let select = "SELECT * FROM t ORDER BY id";
            assert_eq!(outcome(&mut a, select), outcome(&mut b, select), "{mode}");
        }
        assert_eq!(compared, 3 * (FAST.len() + GENERAL.len() + 1));
        let rows = a.query("SELECT COUNT(*) FROM t").pop().unwrap().unwrap();
        assert!(matches!(rows, Output::Rows { rows, .. } if rows[0][0] != Value::Int(0)));
        let (ea, eb) = (fast.row_events(), general.row_events());
        assert!(ea.len() > 20, "{}", ea.len());
        assert_eq!(ea, eb);
    }
}
