//! The `mysql` schema onelog serves: a read-only virtual database whose tables are computed
//! from the account catalogue and the replica's position when a statement reads them, with
//! MariaDB 10.11's table names, columns (names, order, types) and `SHOW CREATE TABLE` text.
//!
//! Owns [`MysqlTable`] (which tables exist: [`MysqlTable::named`]), each table's column
//! definitions ([`MysqlTable::columns`]), its rows ([`MysqlTable::rows`]) and what SHOW
//! answers about it (`SHOW TABLES FROM mysql`, `SHOW [FULL] COLUMNS`, `SHOW CREATE TABLE`:
//! [`show_tables`], [`MysqlTable::show_columns`], [`MysqlTable::create_sql`]). The
//! definitions are MariaDB's own, kept verbatim in `tables.rs`.
//!
//! Served: `global_priv`, `user` (MariaDB's view over `global_priv`), `db` (one row per
//! database grant) computed from the accounts; `gtid_slave_pos` (one row per replication
//! domain of `@@gtid_slave_pos`, `sub_id` numbering them 1.. in domain order, as MariaDB's
//! table reads right after `SET GLOBAL gtid_slave_pos`); `columns_priv`, `tables_priv`, `procs_priv`,
//! `proxies_priv`, `roles_mapping`, `proc`, `event`, `func`, `plugin`, `servers` empty
//! (onelog has no table, column, routine or proxy grants, roles, routines, events, UDFs,
//! plugins or servers); `general_log` and `slow_log` empty (onelog writes its query logs to
//! files only: `log_output=TABLE` is refused). Any other name is 1146, as for a missing
//! table.
//!
//! Invariants: every row has exactly as many values as its table has columns (asserted in
//! debug builds); the rows are those of the catalogue the statement reads, so CREATE USER /
//! GRANT / REVOKE / DROP USER show at once; reading a table needs SELECT on `mysql` (1142
//! otherwise, checked by the planner hook); nothing writes these tables (every write is
//! refused with [`read_only`], 1036): accounts change through CREATE USER and GRANT.
//!
//! Called by `plan::select::subquery` (a FROM table of `mysql` becomes a derived table with
//! these columns), `execute::subquery` (which materializes the rows) and the SHOW executors.

mod tables;

use onelog_binlog::Value;
use onelog_engine::collation::Collation;
use onelog_engine::{
    AccountDef, ColumnDef, ColumnExtras, IndexDef, SqlType, TableDef, TableOptions,
};
use onelog_protocol::errors;

use crate::context::ExecContext;
use crate::error::SqlError;
use crate::output::{Column, Output};
use crate::privilege::{self as p, global_grants};

/// The database name (case-sensitive, as MariaDB's database names are on Linux).
pub(crate) const DATABASE: &str = "mysql";

/// Whether `db` names the `mysql` schema.
pub(crate) fn is_database(db: &str) -> bool {
    db == DATABASE
}

/// The `character_set_client` and `collation_connection` the view `user` reports (SHOW
/// CREATE VIEW, `information_schema.VIEWS`). MariaDB's are latin1 (`mariadb-install-db`
/// creates the view over a latin1 connection); onelog reports its own connection defaults,
/// because mariadb-dump sets the connection to these before the view's CREATE VIEW and
/// onelog takes no latin1 client character set: so the dump of `--all-databases` restores
/// into onelog and into MariaDB alike. The view's text is ASCII: either gives it the same
/// meaning.
pub(crate) const USER_VIEW_CHARSET: (&str, &str) = ("utf8mb4", "utf8mb4_general_ci");

/// A table's definition as MariaDB 10.11 shows it.
#[derive(Debug)]
pub(crate) struct Spec {
    name: &'static str,
    /// MariaDB's `mysql.user` is a view (SHOW FULL TABLES says VIEW).
    view: bool,
    /// SHOW CREATE TABLE's second column, verbatim.
    create: &'static str,
    columns: &'static [SpecCol],
}

/// A column as SHOW FULL COLUMNS prints it (information_schema.COLUMNS reads it too).
#[derive(Debug)]
pub(crate) struct SpecCol {
    pub field: &'static str,
    pub ty: &'static str,
    pub collation: Option<&'static str>,
    pub null: bool,
    pub key: &'static str,
    pub default: Option<&'static str>,
    pub extra: &'static str,
}

/// A `mysql` table onelog serves.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MysqlTable(&'static Spec);

impl PartialEq for MysqlTable {
    fn eq(&self, other: &Self) -> bool {
        self.0.name == other.0.name
    }
}

impl Eq for MysqlTable {}

/// 1036 `Table 'x' is read only`: what a write to a `mysql` table answers.
pub(crate) fn read_only(table: &str) -> SqlError {
    SqlError::of(
        errors::ER_OPEN_AS_READONLY,
        format!("Table '{table}' is read only"),
    )
}

/// What a statement that would change `mysql`.`table` answers: 1036 for a table onelog
/// serves (`Table 'x' is read only`), else (a new table, the database itself: `table`
/// empty) 1044 `Access denied ... to database 'mysql'`, as MariaDB answers for
/// `information_schema`.
pub(crate) fn refuse_change(cx: &ExecContext, table: &str) -> SqlError {
    match MysqlTable::named(table) {
        Ok(t) => read_only(t.name()),
        Err(_) => {
            let (user, host) = cx
                .current_account()
                .unwrap_or_else(|| (cx.user.clone(), cx.host.clone()));
            crate::privilege::db_denied(&user, &host, DATABASE)
        }
    }
}

/// SHOW CREATE VIEW mysql.`name`: the view `user` as SHOW CREATE TABLE shows it; 1347 for a
/// table, 1146 for neither (as MariaDB).
pub(crate) fn show_create_view(cx: &ExecContext, name: &str) -> Result<Output, SqlError> {
    let t = MysqlTable::named(name)?;
    t.check_show(cx)?;
    if !t.is_view() {
        return Err(SqlError::of(
            errors::ER_WRONG_OBJECT,
            format!("'{DATABASE}.{name}' is not of type 'VIEW'"),
        ));
    }
    Ok(t.show_create())
}

/// SHOW [FULL] TABLES FROM mysql: (name, Table_type) by name.
pub(crate) fn show_tables() -> Vec<(&'static str, &'static str)> {
    tables::ALL
        .iter()
        .map(|s| (s.name, if s.view { "VIEW" } else { "BASE TABLE" }))
        .collect()
}

/// SHOW TABLE STATUS FROM mysql: each table with its engine, collation and comment from its
/// definition (MariaDB's Aria / InnoDB statistics are NULL: onelog keeps none), the `user`
/// view as MariaDB shows a view.
pub(crate) fn table_status() -> Vec<Vec<Value>> {
    MysqlTable::all()
        .map(|t| {
            let mut r = vec![text(t.name())];
            if t.is_view() {
                r.extend(std::iter::repeat_n(Value::Null, 16));
                r.extend([text("VIEW"), Value::Null, Value::Null]);
                return r;
            }
            r.push(t.option("ENGINE").map_or(Value::Null, text));
            r.push(Value::UInt(10));
            r.extend(std::iter::repeat_n(Value::Null, 11));
            r.push(t.option("COLLATE").map_or(Value::Null, text));
            r.extend([
                Value::Null,
                text(""),
                text(t.comment()),
                Value::Null,
                text("N"),
            ]);
            r
        })
        .collect()
}

impl MysqlTable {
    /// Every table served, by name.
    pub(crate) fn all() -> impl Iterator<Item = MysqlTable> {
        tables::ALL.iter().map(MysqlTable)
    }

    /// The value of table option `key` (`ENGINE`, `COLLATE`, `TRANSACTIONAL`, ...) in its
    /// CREATE TABLE text; None for a view or an option it lacks.
    pub(crate) fn option(self, key: &str) -> Option<&'static str> {
        let (_, opts) = self.0.create.rsplit_once(')')?;
        let value = opts.split(&format!(" {key}=")).nth(1)?;
        Some(value.split(' ').next().unwrap_or(""))
    }

    /// The table's comment (empty for none).
    pub(crate) fn comment(self) -> &'static str {
        self.0
            .create
            .rsplit_once("COMMENT='")
            .map_or("", |(_, c)| c.trim_end_matches('\''))
    }

    /// Its columns as SHOW FULL COLUMNS prints them.
    pub(crate) fn spec_columns(self) -> &'static [SpecCol] {
        self.0.columns
    }

    /// The table `name` (case-sensitive); 1146 for one onelog does not serve.
    pub(crate) fn named(name: &str) -> Result<MysqlTable, SqlError> {
        tables::ALL
            .iter()
            .find(|s| s.name == name)
            .map(MysqlTable)
            .ok_or_else(|| SqlError::no_such_table(DATABASE, name))
    }

    pub(crate) fn name(self) -> &'static str {
        self.0.name
    }

    /// Fails with 1142 unless the session holds SELECT on `mysql` (as MariaDB).
    pub(crate) fn check_select(self, cx: &ExecContext) -> Result<(), SqlError> {
        cx.check_table_privilege(DATABASE, self.0.name, p::SELECT)
    }

    /// SHOW CREATE TABLE's privilege: SELECT on `mysql`, refused as MariaDB words it (1142
    /// `SHOW command denied`).
    pub(crate) fn check_show(self, cx: &ExecContext) -> Result<(), SqlError> {
        self.check_select(cx).map_err(|mut e| {
            e.message = e.message.replacen("SELECT command", "SHOW command", 1);
            e
        })
    }

    /// SHOW CREATE TABLE's result (SHOW CREATE VIEW's for the view `user`, as MariaDB).
    pub(crate) fn show_create(self) -> Output {
        let title = if self.is_view() {
            [
                "View",
                "Create View",
                "character_set_client",
                "collation_connection",
            ]
            .as_slice()
        } else {
            ["Table", "Create Table"].as_slice()
        };
        let mut row = vec![text(self.name()), text(self.create_sql())];
        if self.is_view() {
            let (client, connection) = USER_VIEW_CHARSET;
            row.extend([text(client), text(connection)]);
        }
        let columns = title.iter().map(|n| Column::new_text(n)).collect();
        Output::rows(columns, vec![row])
    }

    /// SHOW CREATE TABLE's text (a view's SHOW CREATE VIEW text for `user`).
    pub(crate) fn create_sql(self) -> &'static str {
        self.0.create
    }

    /// Whether the table is a view (`user`).
    pub(crate) fn is_view(self) -> bool {
        self.0.view
    }

    /// The table's column definitions, in MariaDB's order (ENUM and SET columns are typed
    /// as VARCHAR of their longest value: the rows carry their text).
    pub(crate) fn columns(self) -> Vec<ColumnDef> {
        self.0.columns.iter().map(column).collect()
    }

    /// The table as a definition with its keys (from its CREATE TABLE text), for SHOW
    /// INDEX; a view (`user`) has none.
    pub(crate) fn table_def(self) -> TableDef {
        let columns = self.columns();
        let position = |n: &str| columns.iter().position(|c| c.name == n);
        let key_columns = |line: &str| -> Vec<usize> {
            let inner = line
                .rsplit_once('(')
                .map_or("", |(_, r)| r.trim_end_matches([')', ',']));
            inner
                .split(',')
                .filter_map(|c| position(c.trim_matches('`')))
                .collect()
        };
        let mut primary_key = Vec::new();
        let mut indexes = Vec::new();
        for line in self.0.create.lines().map(str::trim) {
            if line.starts_with("PRIMARY KEY (") {
                primary_key = key_columns(line);
            } else if let Some(rest) = line
                .strip_prefix("UNIQUE KEY `")
                .map(|r| (true, r))
                .or_else(|| line.strip_prefix("KEY `").map(|r| (false, r)))
            {
                let (unique, rest) = rest;
                let name = rest.split('`').next().unwrap_or("").to_string();
                indexes.push(IndexDef {
                    id: indexes.len() as u32 + 1,
                    name,
                    columns: key_columns(line),
                    unique,
                    options: Default::default(),
                });
            }
        }
        TableDef {
            id: u64::MAX,
            db: DATABASE.to_string(),
            name: self.0.name.to_string(),
            columns,
            primary_key,
            next_index_id: indexes.len() as u32 + 1,
            indexes,
            auto_increment: None,
            options: TableOptions::default(),
        }
    }

    /// SHOW [FULL] COLUMNS rows, as MariaDB prints them.
    pub(crate) fn show_columns(self, full: bool) -> Vec<Vec<Value>> {
        self.0
            .columns
            .iter()
            .map(|c| {
                let mut r = vec![text(c.field), text(c.ty)];
                if full {
                    r.push(c.collation.map_or(Value::Null, text));
                }
                r.push(text(if c.null { "YES" } else { "NO" }));
                r.extend([text(c.key), c.default.map_or(Value::Null, text)]);
                r.push(text(c.extra));
                if full {
                    r.extend([text("select,insert,update,references"), text("")]);
                }
                r
            })
            .collect()
    }

    /// The rows the session `cx` sees now (the caller checked SELECT on `mysql`).
    pub(crate) fn rows(self, cx: &ExecContext) -> Vec<Vec<Value>> {
        let cat = cx.server.engine.catalog();
        let accounts = || cat.accounts().map(|a| &**a);
        let out: Vec<Vec<Value>> = match self.0.name {
            "global_priv" => accounts().map(global_priv_row).collect(),
            "user" => accounts().map(user_row).collect(),
            "db" => accounts().flat_map(db_rows).collect(),
            "gtid_slave_pos" => cx
                .server
                .engine
                .gtid_slave_pos()
                .iter()
                .zip(1..)
                .map(|(g, sub_id)| {
                    vec![
                        Value::UInt(u64::from(g.domain_id)),
                        Value::UInt(sub_id),
                        Value::UInt(u64::from(g.server_id)),
                        Value::UInt(g.seq_no),
                    ]
                })
                .collect(),
            _ => Vec::new(),
        };
        debug_assert!(out.iter().all(|r| r.len() == self.0.columns.len()));
        out
    }
}

fn text(s: &str) -> Value {
    Value::bytes(s.as_bytes())
}

fn yn(b: bool) -> Value {
    text(if b { "Y" } else { "N" })
}

/// A column's onelog type from MariaDB's type text.
fn column(c: &SpecCol) -> ColumnDef {
    let ty = c.ty;
    let num = |s: &str| -> u32 {
        s.split(['(', ')', ','])
            .nth(1)
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or(0)
    };
    let unsigned = ty.ends_with("unsigned");
    let members = |s: &str| -> Vec<usize> {
        let inner = s
            .split_once('(')
            .map_or("", |(_, r)| r.trim_end_matches(')'));
        inner
            .split("','")
            .map(|m| m.trim_matches('\'').len())
            .collect()
    };
    let mut width = None;
    let sql_ty = if ty.starts_with("char(") {
        SqlType::Char(num(ty))
    } else if ty.starts_with("varchar(") {
        SqlType::VarChar(num(ty))
    } else if ty.starts_with("enum(") {
        SqlType::VarChar(members(ty).into_iter().max().unwrap_or(1) as u32)
    } else if ty.starts_with("set(") {
        let m = members(ty);
        SqlType::VarChar((m.iter().sum::<usize>() + m.len().saturating_sub(1)) as u32)
    } else if ty.starts_with("tinyint(") {
        width = Some(num(ty) as u16);
        SqlType::TinyInt { unsigned }
    } else if ty.starts_with("int(") {
        width = Some(num(ty) as u16);
        SqlType::Int { unsigned }
    } else if ty.starts_with("bigint(") {
        width = Some(num(ty) as u16);
        SqlType::BigInt { unsigned }
    } else if ty.starts_with("decimal(") {
        let scale = ty
            .split([',', ')'])
            .nth(1)
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        SqlType::Decimal {
            precision: num(ty) as u8,
            scale,
        }
    } else {
        match ty {
            "timestamp" => SqlType::Timestamp(0),
            "timestamp(6)" => SqlType::Timestamp(6),
            "time(6)" => SqlType::Time(6),
            "mediumtext" => SqlType::MediumText,
            "datetime" => SqlType::DateTime(0),
            "blob" => SqlType::Blob,
            "longblob" => SqlType::LongBlob,
            "text" => SqlType::Text,
            _ => SqlType::LongText,
        }
    };
    let collation = c.collation.map(|k| {
        if k.ends_with("_bin") {
            Collation::Utf8mb4Bin
        } else {
            Collation::Utf8mb4GeneralCi
        }
    });
    ColumnDef {
        name: c.field.to_string(),
        ty: sql_ty,
        nullable: c.null,
        default: None,
        auto_increment: false,
        extras: ColumnExtras {
            display_width: width,
            ..ColumnExtras::default()
        },
        collation,
        members: Vec::new(),
    }
}

/// onelog's privilege bits and MariaDB 10.11's `access` bits (`privilege_t`) for each.
const ACCESS_BITS: &[(u64, u64)] = &[
    (p::SELECT, 1 << 0),
    (p::INSERT, 1 << 1),
    (p::UPDATE, 1 << 2),
    (p::DELETE, 1 << 3),
    (p::CREATE, 1 << 4),
    (p::DROP, 1 << 5),
    (p::RELOAD, 1 << 6),
    (p::SHUTDOWN, 1 << 7),
    (p::PROCESS, 1 << 8),
    (p::FILE, 1 << 9),
    (p::GRANT_OPTION, 1 << 10),
    (p::REFERENCES, 1 << 11),
    (p::INDEX, 1 << 12),
    (p::ALTER, 1 << 13),
    (p::SHOW_DATABASES, 1 << 14),
    (p::SUPER, 1 << 15),
    (p::CREATE_TEMPORARY_TABLES, 1 << 16),
    (p::LOCK_TABLES, 1 << 17),
    (p::EXECUTE, 1 << 18),
    (p::REPLICATION_SLAVE, 1 << 19),
    (p::BINLOG_MONITOR, 1 << 20),
    (p::CREATE_VIEW, 1 << 21),
    (p::SHOW_VIEW, 1 << 22),
    (p::CREATE_ROUTINE, 1 << 23),
    (p::ALTER_ROUTINE, 1 << 24),
    (p::CREATE_USER, 1 << 25),
    (p::EVENT, 1 << 26),
    (p::TRIGGER, 1 << 27),
    (p::DELETE_HISTORY, 1 << 29),
    (p::CONNECTION_ADMIN, 1 << 32),
    (p::READ_ONLY_ADMIN, 1 << 33),
    (p::REPLICATION_SLAVE_ADMIN, 1 << 34),
    (p::REPLICATION_MASTER_ADMIN, 1 << 35),
    (p::SLAVE_MONITOR, 1 << 38),
];

/// MariaDB 10.11's `ALL PRIVILEGES` at `*.*` (every bit below 39 but GRANT OPTION's).
const MARIADB_ALL: u64 = ((1 << 39) - 1) & !(1 << 10);

/// MariaDB's `access` bit set for onelog's privilege bits: ALL PRIVILEGES (every privilege
/// onelog has at that scope) is MariaDB's ALL, which also holds the privileges onelog lacks
/// (CREATE TABLESPACE, SET USER, FEDERATED ADMIN, BINLOG ADMIN, BINLOG REPLAY).
fn access(bits: u64, all: u64) -> u64 {
    let mut out: u64 = ACCESS_BITS
        .iter()
        .filter(|(o, _)| bits & o != 0)
        .fold(0, |acc, (_, m)| acc | m);
    if bits & all == all {
        out |= MARIADB_ALL;
    }
    out
}

fn global_access(a: &AccountDef) -> u64 {
    access(global_grants(a), p::ALL_GLOBAL)
}

/// onelog's global privileges for MariaDB's `access` bits (the inverse of [`access`]):
/// MariaDB's ALL (with or without the privileges onelog lacks) is onelog's ALL; `u64::MAX`
/// (what `mariadb-install-db` writes for root) is ALL with GRANT OPTION. Err: the bits onelog
/// has no privilege for, when not part of ALL.
pub(crate) fn privileges_of_access(bits: u64) -> Result<u64, u64> {
    const GRANT: u64 = 1 << 10;
    if bits == u64::MAX {
        return Ok(p::ALL_GLOBAL | p::GRANT_OPTION);
    }
    let mapped: u64 = ACCESS_BITS.iter().fold(0, |acc, (_, m)| acc | m);
    let mut out: u64 = ACCESS_BITS
        .iter()
        .filter(|(_, m)| bits & m != 0)
        .fold(0, |acc, (o, _)| acc | o);
    let all = bits & MARIADB_ALL == MARIADB_ALL;
    if all {
        out |= p::ALL_GLOBAL;
    }
    let known = if all { MARIADB_ALL | GRANT } else { mapped };
    match bits & !known {
        0 => Ok(out),
        unknown => Err(unknown),
    }
}

fn json_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// (plugin, authentication_string) as `mysql.user` shows them.
fn auth(a: &AccountDef) -> (&'static str, String) {
    if a.auth.unix_socket && a.auth.no_password_login {
        ("mysql_native_password", "invalid".to_string())
    } else if a.auth_hash.is_empty() {
        ("mysql_native_password", String::new())
    } else {
        ("mysql_native_password", p::hash_text(&a.auth_hash))
    }
}

/// `Priv` as MariaDB writes it: the access bits, the plugin and its authentication string,
/// and the unix_socket alternative (`auth_or`, second, as SHOW GRANTS prints the account)
/// where the account has one. onelog keeps no
/// `version_id` or `password_last_changed`, so neither is written (MariaDB writes neither
/// for the accounts `mariadb-install-db` creates either).
fn priv_json(a: &AccountDef) -> String {
    let (plugin, auth_string) = auth(a);
    // `version_id` (MariaDB's MYSQL_VERSION_ID of the server that wrote the row, here the
    // version onelog reports): without it a MariaDB that loads the row (a restored dump)
    // reads `access` in 10.4's bit layout and drops an account's newer privileges.
    let mut j = format!(
        "{{\"access\":{},\"version_id\":{},\"plugin\":{},\"authentication_string\":{}",
        global_access(a),
        crate::parse::VERSION_ID,
        json_str(plugin),
        json_str(&auth_string)
    );
    if a.auth.unix_socket {
        // SHOW GRANTS' `VIA mysql_native_password USING '...' OR unix_socket`.
        j.push_str(",\"auth_or\":[{},{\"plugin\":\"unix_socket\"}]");
    }
    j.push('}');
    j
}

fn global_priv_row(a: &AccountDef) -> Vec<Value> {
    vec![text(&a.host), text(&a.user), text(&priv_json(a))]
}

/// `mysql.user`: MariaDB's view over `global_priv`, column by column.
fn user_row(a: &AccountDef) -> Vec<Value> {
    let bits = global_access(a);
    let (plugin, auth_string) = auth(a);
    let mut r = vec![text(&a.host), text(&a.user), text(&auth_string)];
    // Select_priv .. Delete_history_priv: access bits 0..=29.
    r.extend((0..30).map(|b| yn(bits & (1 << b) != 0)));
    r.extend([text(""), text(""), text(""), text("")]);
    r.extend([
        Value::UInt(0),
        Value::UInt(0),
        Value::UInt(0),
        Value::Int(0),
    ]);
    r.extend([text(plugin), text(&auth_string), yn(false), yn(false)]);
    r.push(text(""));
    r.push(Value::bytes(b"0.000000"));
    r
}

/// The `db` table's privilege columns after `User`, in order, with onelog's bit for each.
pub(crate) const DB_COLUMNS: &[u64] = &[
    p::SELECT,
    p::INSERT,
    p::UPDATE,
    p::DELETE,
    p::CREATE,
    p::DROP,
    p::GRANT_OPTION,
    p::REFERENCES,
    p::INDEX,
    p::ALTER,
    p::CREATE_TEMPORARY_TABLES,
    p::LOCK_TABLES,
    p::CREATE_VIEW,
    p::SHOW_VIEW,
    p::CREATE_ROUTINE,
    p::ALTER_ROUTINE,
    p::EXECUTE,
    p::EVENT,
    p::TRIGGER,
    p::DELETE_HISTORY,
];

/// `mysql.db`: one row per database grant, its privileges as `Y`/`N`.
fn db_rows(a: &AccountDef) -> Vec<Vec<Value>> {
    a.grants
        .iter()
        .filter(|g| g.scope != "*")
        .map(|g| {
            let mut r = vec![text(&a.host), text(&g.scope), text(&a.user)];
            r.extend(DB_COLUMNS.iter().map(|b| yn(g.privileges & b != 0)));
            r
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_types_every_column() {
        for s in tables::ALL {
            let t = MysqlTable(s);
            assert_eq!(t.columns().len(), s.columns.len(), "{}", s.name);
        }
        let user = MysqlTable::named("user").unwrap();
        // Host, User, Password, 30 privilege columns, ssl_type .. max_statement_time.
        assert_eq!(user.columns().len(), 3 + 30 + 14);
    }

    #[test]
    fn keys_come_from_the_create_text() {
        let db = MysqlTable::named("db").unwrap().table_def();
        assert_eq!(db.primary_key, [0, 1, 2]);
        assert_eq!(db.indexes.len(), 1);
        assert_eq!(
            (db.indexes[0].name.as_str(), &db.indexes[0].columns[..]),
            ("User", &[2][..])
        );
        let roles = MysqlTable::named("roles_mapping").unwrap().table_def();
        assert!(roles.primary_key.is_empty());
        assert!(roles.indexes[0].unique && roles.indexes[0].columns == [0, 1, 2]);
        assert!(MysqlTable::named("user")
            .unwrap()
            .table_def()
            .indexes
            .is_empty());
    }

    #[test]
    fn all_privileges_map_to_mariadb_access_bits() {
        // Measured on MariaDB 10.11.14: GRANT ALL ON *.* gives access 549755812863, WITH
        // GRANT OPTION 549755813887; SELECT, INSERT gives 3.
        assert_eq!(access(p::ALL_GLOBAL, p::ALL_GLOBAL), 549_755_812_863);
        assert_eq!(
            access(p::ALL_GLOBAL | p::GRANT_OPTION, p::ALL_GLOBAL),
            549_755_813_887
        );
        assert_eq!(access(p::SELECT | p::INSERT, p::ALL_GLOBAL), 3);
        // RELOAD, PROCESS, SUPER, REPLICATION SLAVE, BINLOG MONITOR, SLAVE MONITOR.
        let some = p::RELOAD
            | p::PROCESS
            | p::SUPER
            | p::REPLICATION_SLAVE
            | p::BINLOG_MONITOR
            | p::SLAVE_MONITOR;
        assert_eq!(access(some, p::ALL_GLOBAL), 274_879_512_896);
    }

    #[test]
    fn access_bits_map_back_to_the_privileges_they_came_from() {
        for bits in [
            0,
            p::SELECT | p::INSERT,
            p::ALL_GLOBAL,
            p::ALL_GLOBAL | p::GRANT_OPTION,
            p::RELOAD | p::PROCESS | p::SUPER | p::SLAVE_MONITOR | p::GRANT_OPTION,
        ] {
            assert_eq!(privileges_of_access(access(bits, p::ALL_GLOBAL)), Ok(bits));
        }
        // mariadb-install-db's root; MariaDB's ALL without GRANT OPTION.
        let all = p::ALL_GLOBAL | p::GRANT_OPTION;
        assert_eq!(privileges_of_access(u64::MAX), Ok(all));
        assert_eq!(privileges_of_access(549_755_812_863), Ok(p::ALL_GLOBAL));
        // CREATE TABLESPACE (bit 28) alone: onelog has no such privilege.
        assert_eq!(privileges_of_access((1 << 28) | 1), Err(1 << 28));
    }
}
