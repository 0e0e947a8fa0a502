//! Regular expressions: `x [NOT] REGEXP p` / `RLIKE` (compiled to `REGEXP_MATCH`, which only
//! that syntax reaches), REGEXP_REPLACE, REGEXP_SUBSTR and REGEXP_INSTR.
//!
//! MariaDB uses PCRE2; onelog uses the `regex` crate, which matches in linear time with a
//! bounded compiled size. The patterns both accept mean the same; what `regex` lacks
//! (backreferences such as `\1` in a pattern, look-around, possessive quantifiers) is refused
//! with MariaDB's error 1139, never answered differently. Matching is case-insensitive under a
//! `_ci` collation and exact under `_bin`/binary, the collation the arguments derive to (the
//! functions are `collated`). A replacement names groups as MariaDB does (`\1`..`\9`).
//! REGEXP_SUBSTR of no match is an empty string, REGEXP_INSTR of no match 0, as MariaDB.
//!
//! Invariant: a compiled pattern is cached per thread by (pattern, case-insensitive), at most
//! [`CACHE`] entries, so a scan compiles each pattern once.

use std::cell::RefCell;

use onelog_binlog::Value;
use onelog_engine::collation::Collation;
use onelog_protocol::errors;
use regex::{Regex, RegexBuilder};

use super::{collated, lossy, rt_int, rt_str, str_val, strict, FunctionDef};
use crate::error::SqlError;
use crate::expr::env::Env;

type R = Result<Value, SqlError>;

pub(super) const FUNCTIONS: &[FunctionDef] = &[
    collated(strict("REGEXP_MATCH", &[], (2, 2), rt_int, |v, env| {
        let re = regex(&lossy(&v[1]), env.coll)?;
        Ok(Value::Int(i64::from(re.is_match(&lossy(&v[0])))))
    })),
    collated(strict(
        "REGEXP_REPLACE",
        &["REGEXP_REPLACE"],
        (3, 3),
        rt_str,
        replace,
    )),
    collated(strict(
        "REGEXP_SUBSTR",
        &["REGEXP_SUBSTR"],
        (2, 2),
        rt_str,
        |v, env| {
            let re = regex(&lossy(&v[1]), env.coll)?;
            let s = lossy(&v[0]);
            Ok(str_val(
                re.find(&s)
                    .map_or(Vec::new(), |m| m.as_str().as_bytes().to_vec()),
            ))
        },
    )),
    collated(strict(
        "REGEXP_INSTR",
        &["REGEXP_INSTR"],
        (2, 2),
        rt_int,
        |v, env| {
            let re = regex(&lossy(&v[1]), env.coll)?;
            let s = lossy(&v[0]);
            Ok(Value::Int(
                re.find(&s)
                    .map_or(0, |m| s[..m.start()].chars().count() as i64 + 1),
            ))
        },
    )),
];

/// Compiled patterns kept per thread.
const CACHE: usize = 16;

thread_local! {
    static COMPILED: RefCell<Vec<(String, bool, Regex)>> = const { RefCell::new(Vec::new()) };
}

/// `pattern` compiled, case-insensitive unless `coll` compares exactly; 1139 when it cannot be.
fn regex(pattern: &str, coll: Collation) -> Result<Regex, SqlError> {
    let ci = !matches!(coll, Collation::Binary | Collation::Utf8mb4Bin);
    if let Some(re) = COMPILED.with(|c| {
        c.borrow()
            .iter()
            .find(|(p, i, _)| p == pattern && *i == ci)
            .map(|(_, _, r)| r.clone())
    }) {
        return Ok(re);
    }
    let re = RegexBuilder::new(pattern)
        .case_insensitive(ci)
        .size_limit(1 << 20)
        .build()
        .map_err(|e| {
            let why = e.to_string();
            let first = why.lines().last().unwrap_or("").trim().to_string();
            SqlError::of(errors::ER_REGEXP_ERROR, format!("Regex error '{first}'"))
        })?;
    COMPILED.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() >= CACHE {
            c.remove(0);
        }
        c.push((pattern.to_string(), ci, re.clone()));
    });
    Ok(re)
}

/// REGEXP_REPLACE(s, pattern, replacement): every match replaced; `\N` in the replacement is
/// group N, `\\` a backslash.
fn replace(v: Vec<Value>, env: &Env) -> R {
    let re = regex(&lossy(&v[1]), env.coll)?;
    let mut rep = String::new();
    let mut chars = lossy(&v[2])
        .chars()
        .collect::<Vec<_>>()
        .into_iter()
        .peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(d) if d.is_ascii_digit() => rep.push_str(&format!("${{{d}}}")),
                Some(other) => rep.push(other),
                None => rep.push('\\'),
            },
            '$' => rep.push_str("$$"),
            c => rep.push(c),
        }
    }
    let s = lossy(&v[0]);
    let out = re.replace_all(&s, rep.as_str()).into_owned();
    if !env.cx.guard.string_fits("regexp_replace", out.len() as u64) {
        return Ok(Value::Null);
    }
    Ok(str_val(out.into_bytes()))
}

#[cfg(test)]
mod tests {
    use super::super::check_against_mariadb;

    #[test]
    fn regular_expressions_match_mariadb() {
        // Expected values: what MariaDB 10.11.19 returned for `SELECT <expr>` with a utf8mb4
        // connection (mariadb --default-character-set=utf8mb4 -N -B).
        check_against_mariadb(&[
            ("'ABC' REGEXP 'abc'", "1"),
            ("'abc' RLIKE '^a.c$'", "1"),
            ("'abc' NOT REGEXP 'x'", "1"),
            ("'ABC' COLLATE utf8mb4_bin REGEXP 'abc'", "0"),
            ("'a' REGEXP ''", "1"),
            ("NULL REGEXP 'a'", "NULL"),
            ("'aé' REGEXP '^a.$'", "1"),
            ("REGEXP_REPLACE('abc ABC','b','x')", "axc AxC"),
            ("REGEXP_REPLACE('abc','(b)','[\\\\1]')", "a[b]c"),
            ("REGEXP_REPLACE('aAa','a','-')", "---"),
            ("REGEXP_SUBSTR('abc123def','[0-9]+')", "123"),
            ("REGEXP_SUBSTR('abc','x')", ""),
            ("REGEXP_INSTR('abc123','[0-9]')", "4"),
            ("REGEXP_INSTR('abc','x')", "0"),
            ("'12' REGEXP '^\\\\d+$'", "1"),
            ("'a' REGEXP '('", "ERROR 1139"),
            // A backreference in a pattern: MariaDB matches, onelog refuses (never a different
            // answer).
            ("'aa' REGEXP '(a)\\\\1'", "ERROR 1139"),
        ]);
    }
}
