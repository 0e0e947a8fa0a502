//! The built-in scalar functions, one file per family: `string`, `math`, `temporal`,
//! `calendar`, `control` (control flow and comparison), `information` (session and server
//! information, SLEEP), `encode` (digests, base64, UUID), `locks` (user-level locks),
//! `regexp`, `json` and `members` (the text of ENUM and SET columns); `aggregate` names the aggregate functions. Each function is declared once, as a
//! [`FunctionDef`] in its family's `FUNCTIONS` table: its names, arity, NULL behaviour, result
//! type and evaluation. Adding a function adds one entry (and its code) to one family file.
//!
//! Invariants: every SQL name belongs to one definition; `min_args <= max_args`; a compiled
//! call ([`super::Expr::Func`]) has an argument count within its definition's arity; a
//! [`Func`] is a valid (family, index) pair of [`REGISTRY`] (only [`Func::named`] and
//! [`lookup`] make one).
//!
//! Called by `compile` (names to [`Func`]), `eval` ([`FunctionDef::eval`]) and `infer`
//! ([`FunctionDef::return_type`]); the planner never folds a [`FunctionDef::volatile`] call
//! (RAND, SLEEP, UUID, the lock functions) as a constant.

pub(super) mod aggregate;
mod calendar;
pub(super) use calendar::Unit;
mod control;
mod encode;
mod information;
pub(super) mod json;
mod locks;
mod math;
mod members;
mod regexp;
mod string;
mod temporal;

pub(super) use information::SYSTEM_COLLATION;
pub(crate) use temporal::statement_now;

use onelog_binlog::Value;

use super::env::Env;
use super::ir::{Expr, Func};
use super::numeric::to_i128;
use super::text::text_of;
use super::types::{RType, TypeCx};
use crate::error::SqlError;

/// One built-in function.
pub(crate) struct FunctionDef {
    /// Canonical name (upper case).
    pub name: &'static str,
    /// The names SQL calls it by (upper case); empty for the forms only special syntax
    /// compiles to (`TRIM(LEADING x FROM y)`).
    pub aliases: &'static [&'static str],
    pub min_args: usize,
    /// `usize::MAX`: any number.
    pub max_args: usize,
    /// A NULL argument makes the result NULL without calling [`Eval::Values`]'s function.
    pub null_in_null_out: bool,
    /// The result type, from the argument expressions.
    pub return_type: ReturnType,
    pub eval: Eval,
    /// A new value (or an effect) at each call: never evaluated once as a constant.
    pub volatile: bool,
    /// Compares its string arguments: compiled under the collation they derive to (MariaDB's
    /// rules, as a comparison), which it reads as `Env::coll`.
    pub collated: bool,
}

/// How a function evaluates.
pub(crate) enum Eval {
    /// From its argument values (all evaluated first).
    Values(ValuesFn),
    /// From its argument count and `arg(i)`, which evaluates argument `i` on demand (IF,
    /// IFNULL, COALESCE evaluate only what they need).
    Lazy(fn(usize, &mut LazyArg) -> Result<Value, SqlError>),
}

/// Evaluates argument `i` of a lazy function.
pub(crate) type LazyArg<'a> = dyn FnMut(usize) -> Result<Value, SqlError> + 'a;

/// Any number of arguments.
const ANY: usize = usize::MAX;

/// A function's result type rule.
type ReturnType = fn(&[Expr], &TypeCx) -> RType;

/// A function of its argument values.
pub(super) type ValuesFn = fn(Vec<Value>, &Env) -> Result<Value, SqlError>;

/// A function of its argument values, NULL when one is NULL (most built-ins).
const fn strict(
    name: &'static str,
    aliases: &'static [&'static str],
    (min_args, max_args): (usize, usize),
    return_type: ReturnType,
    eval: ValuesFn,
) -> FunctionDef {
    FunctionDef {
        name,
        aliases,
        min_args,
        max_args,
        null_in_null_out: true,
        return_type,
        eval: Eval::Values(eval),
        volatile: false,
        collated: false,
    }
}

/// A function of its argument values that handles NULL arguments itself (CONCAT_WS,
/// NULLIF, NOW(), ...).
const fn sees_null(
    name: &'static str,
    aliases: &'static [&'static str],
    arity: (usize, usize),
    return_type: ReturnType,
    eval: ValuesFn,
) -> FunctionDef {
    FunctionDef {
        null_in_null_out: false,
        ..strict(name, aliases, arity, return_type, eval)
    }
}

/// A function that evaluates its arguments on demand (IF, IFNULL, COALESCE).
const fn lazy(
    name: &'static str,
    aliases: &'static [&'static str],
    (min_args, max_args): (usize, usize),
    return_type: ReturnType,
    eval: fn(usize, &mut LazyArg) -> Result<Value, SqlError>,
) -> FunctionDef {
    FunctionDef {
        name,
        aliases,
        min_args,
        max_args,
        null_in_null_out: false,
        return_type,
        eval: Eval::Lazy(eval),
        volatile: false,
        collated: false,
    }
}

/// `def`, comparing its strings under their derived collation (LOCATE, FIELD, GREATEST, ...).
const fn collated(def: FunctionDef) -> FunctionDef {
    FunctionDef {
        collated: true,
        ..def
    }
}

/// `def`, evaluated at each call (RAND, SLEEP, UUID, GET_LOCK, ...).
const fn volatile(def: FunctionDef) -> FunctionDef {
    FunctionDef {
        volatile: true,
        ..def
    }
}

/// Every family's table; a [`Func`] indexes it.
const FAMILIES: [&[FunctionDef]; 11] = [
    string::FUNCTIONS,
    math::FUNCTIONS,
    temporal::FUNCTIONS,
    control::FUNCTIONS,
    information::FUNCTIONS,
    encode::FUNCTIONS,
    locks::FUNCTIONS,
    calendar::FUNCTIONS,
    regexp::FUNCTIONS,
    json::FUNCTIONS,
    members::FUNCTIONS,
];

/// [`FAMILIES`] at one address, for evaluation.
static REGISTRY: [&[FunctionDef]; 11] = FAMILIES;

const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

impl Func {
    /// The function whose canonical name is `name` (a compile-time error when none is).
    pub(super) const fn named(name: &str) -> Func {
        let mut f = 0;
        while f < FAMILIES.len() {
            let defs = FAMILIES[f];
            let mut i = 0;
            while i < defs.len() {
                if same(defs[i].name, name) {
                    return Func {
                        family: f as u8,
                        index: i as u8,
                    };
                }
                i += 1;
            }
            f += 1;
        }
        panic!("no built-in function of that name")
    }

    /// Its declaration.
    pub(crate) fn def(self) -> &'static FunctionDef {
        debug_assert!(usize::from(self.family) < REGISTRY.len());
        &REGISTRY[usize::from(self.family)][usize::from(self.index)]
    }
}

impl std::fmt::Debug for Func {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.def().name)
    }
}

/// The function SQL calls `name` (upper case), if any.
pub(super) fn lookup(name: &str) -> Option<Func> {
    for (f, defs) in REGISTRY.iter().enumerate() {
        for (i, d) in defs.iter().enumerate() {
            if d.aliases.contains(&name) {
                debug_assert!(d.min_args <= d.max_args, "{}: arity", d.name);
                return Some(Func {
                    family: f as u8,
                    index: i as u8,
                });
            }
        }
    }
    None
}

// Helpers shared by the families.

/// `bytes` as hexadecimal digits, two per byte (HEX writes them upper case, the digests
/// lower case).
fn hex_digits(bytes: &[u8], upper: bool) -> Vec<u8> {
    let digits: &[u8; 16] = if upper {
        b"0123456789ABCDEF"
    } else {
        b"0123456789abcdef"
    };
    bytes
        .iter()
        .flat_map(|b| [b >> 4, b & 15])
        .map(|d| digits[usize::from(d)])
        .collect()
}

fn str_val(v: Vec<u8>) -> Value {
    Value::bytes(v)
}

fn lossy(v: &Value) -> String {
    String::from_utf8_lossy(&text_of(v)).into_owned()
}

/// Integer view of an argument, 0 for what is not a number.
fn int(x: &Value) -> i128 {
    to_i128(x).unwrap_or(0)
}

fn rt_int(_: &[Expr], _: &TypeCx) -> RType {
    RType::Int
}

fn rt_uint(_: &[Expr], _: &TypeCx) -> RType {
    RType::UInt
}

fn rt_double(_: &[Expr], _: &TypeCx) -> RType {
    RType::Double
}

fn rt_str(_: &[Expr], _: &TypeCx) -> RType {
    RType::Str(255)
}

/// Whether the function called `name` (its canonical name) counts, cuts, pads or maps
/// characters: on binary strings (`SET NAMES binary` literals, BINARY/VARBINARY/BLOB values)
/// it works on bytes (`eval::on_bytes`), as MariaDB's does. Those that only compare (FIELD,
/// STRCMP, ...) follow their collation, `binary` included, without this.
pub(crate) fn counts_characters(name: &str) -> bool {
    const NAMES: &[&str] = &[
        "CHAR_LENGTH",
        "UPPER",
        "LOWER",
        "SUBSTRING",
        "LEFT",
        "RIGHT",
        "LOCATE",
        "INSTR",
        "REVERSE",
        "LPAD",
        "RPAD",
        "INSERT",
        "TRIM",
        "LTRIM",
        "RTRIM",
        "TRIM_BOTH",
        "TRIM_LEADING",
        "TRIM_TRAILING",
        "ORD",
        "SOUNDEX",
        "REGEXP_REPLACE",
        "REGEXP_SUBSTR",
        "REGEXP_INSTR",
        "REGEXP_MATCH",
    ];
    NAMES.contains(&name)
}

/// A name (MariaDB's 64-character identifiers: CHARSET(), COLLATION()).
fn rt_name(_: &[Expr], _: &TypeCx) -> RType {
    RType::Str(64)
}

/// Checks built-in functions against the values a reference server gave (the families'
/// tests): `SELECT <expr>` on a fresh server and session, its first value as the text
/// protocol sends it ("NULL" for NULL, "ERROR <code>" for an error).
/// A root session on a fresh server in a temporary directory of its own (`tag` names it),
/// shut down and removed when dropped.
#[cfg(test)]
pub(in crate::expr) struct TestSession {
    session: crate::session::Session,
    server: std::sync::Arc<crate::server::Server>,
    dir: std::path::PathBuf,
}

#[cfg(test)]
pub(in crate::expr) fn test_session(tag: &str) -> TestSession {
    use crate::server::{Server, ServerConfig};
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    let dir = std::env::temp_dir().join(format!(
        "onelog-{tag}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let mut cfg = ServerConfig::new(&dir);
    cfg.max_binlog_size = 1 << 20;
    cfg.flush_log_at_trx_commit = 2;
    let (server, _) = Server::open(cfg).unwrap();
    let session = crate::session::Session::new(server.clone(), 1, "root", "localhost");
    TestSession {
        session,
        server,
        dir,
    }
}

#[cfg(test)]
impl std::ops::Deref for TestSession {
    type Target = crate::session::Session;
    fn deref(&self) -> &Self::Target {
        &self.session
    }
}

#[cfg(test)]
impl std::ops::DerefMut for TestSession {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.session
    }
}

#[cfg(test)]
impl Drop for TestSession {
    fn drop(&mut self) {
        let _ = self.server.shutdown();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[cfg(test)]
fn check_against_mariadb(cases: &[(&str, &str)]) {
    check_against_mariadb_after(&[], cases)
}

/// [`check_against_mariadb`] after the statements of `setup` (tables for the aggregates).
#[cfg(test)]
pub(in crate::expr) fn check_against_mariadb_after(setup: &[&str], cases: &[(&str, &str)]) {
    use crate::output::Output;
    let mut s = test_session("expr-functions");
    for sql in setup {
        if let Some(Err(e)) = s.query(sql).pop() {
            panic!("{sql}: {e}");
        }
    }
    let mut wrong = Vec::new();
    for (e, want) in cases {
        let got = match s.query(&format!("SELECT {e}")).pop() {
            Some(Ok(Output::Rows { columns, rows })) => {
                match rows.first().and_then(|r| r.first()) {
                    Some(v) => crate::render::text(v, &columns[0])
                        .map_or("NULL".to_string(), |b| {
                            String::from_utf8_lossy(&b).into_owned()
                        }),
                    None => "no row".to_string(),
                }
            }
            Some(Err(err)) => format!("ERROR {}", err.code),
            other => format!("{other:?}"),
        };
        if got != *want {
            wrong.push(format!("SELECT {e}: {got}, MariaDB gives {want}"));
        }
    }
    drop(s); // shut down and removed before the verdict, as before
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_arities_ordered() {
        let mut seen = std::collections::HashSet::new();
        for defs in REGISTRY {
            for d in defs {
                assert!(d.min_args <= d.max_args, "{}", d.name);
                assert!(seen.insert(format!("#{}", d.name)), "{}", d.name);
                for a in d.aliases {
                    assert!(seen.insert(a.to_string()), "{a} declared twice");
                    assert_eq!(lookup(a).map(|f| f.def().name), Some(d.name));
                }
            }
        }
        for name in [
            "RAND",
            "SLEEP",
            "UUID",
            "GET_LOCK",
            "RELEASE_LOCK",
            "IS_FREE_LOCK",
        ] {
            assert!(lookup(name).is_some_and(|f| f.def().volatile), "{name}");
        }
        assert!(!lookup("MD5").is_some_and(|f| f.def().volatile));
    }
}
