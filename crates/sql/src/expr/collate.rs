//! Collations in expressions: which collation a comparison uses (MariaDB's derivation and
//! coercibility rules, error 1267 for an illegal mix), the names of collations and character
//! sets (1273, 1115, 1253) and comparison of two values under a collation.
//!
//! A string expression has a derivation ([`Deriv`]): its collation and coercibility
//! (EXPLICIT 0 for `COLLATE`, NONE 1 for a failed mix, IMPLICIT 2 for columns, casts and user
//! variables, SYSCONST 3 for system values, COERCIBLE 4 for literals and parameters; NULL and
//! numbers have none). A comparison aggregates its operands' derivations as MariaDB's
//! `DTCollation::aggregate` does: the lower coercibility wins; at equal coercibility the same
//! collation stays, a `_bin` collation of the same charset wins, `binary` wins at equal or lower
//! coercibility, and otherwise the result is NONE, which a comparison refuses with 1267.
//!
//! Literals use the connection's collation (`collation_connection`, read per statement into
//! [`super::Env`]): [`CollRef::Connection`] stands for it in a compiled tree, so a cached
//! statement follows a later `SET NAMES`.
//!
//! Invariants: a compiled comparison of strings carries the collation it was derived with
//! (`Expr::Collated`); values of other types compare as before (numbers, dates).
//!
//! Called by the compiler (derivations), evaluation (comparisons), the planner (whether an
//! index's key order is the comparison's) and the executors (ORDER BY, GROUP BY, DISTINCT).

use std::cmp::Ordering;

use onelog_binlog::Value;
use onelog_engine::collation::Collation;
use onelog_protocol::errors;

use onelog_engine::TableDef;

use super::coerce::{compare, key_bytes};
use super::ir::{BinOp, Expr};
use crate::error::SqlError;

/// A collation in a compiled tree: a fixed one, or the connection's (read at evaluation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CollRef {
    Fixed(Collation),
    Connection,
}

impl CollRef {
    /// The collation, with `conn` the connection's.
    pub fn resolve(self, conn: Collation) -> Collation {
        match self {
            CollRef::Fixed(c) => c,
            CollRef::Connection => conn,
        }
    }
}

/// MariaDB's coercibility levels (lower wins).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Coercibility {
    Explicit = 0,
    None = 1,
    Implicit = 2,
    SysConst = 3,
    Coercible = 4,
}

impl Coercibility {
    fn name(self) -> &'static str {
        match self {
            Coercibility::Explicit => "EXPLICIT",
            Coercibility::None => "NONE",
            Coercibility::Implicit => "IMPLICIT",
            Coercibility::SysConst => "SYSCONST",
            Coercibility::Coercible => "COERCIBLE",
        }
    }
}

/// The derivation of a string expression.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Deriv {
    pub coll: CollRef,
    pub co: Coercibility,
}

impl Deriv {
    pub fn new(coll: CollRef, co: Coercibility) -> Self {
        Deriv { coll, co }
    }

    /// The collation as a name (the connection's shown as the default's: compile time).
    fn shown(self) -> &'static str {
        self.coll.resolve(Collation::DEFAULT).name()
    }
}

/// Aggregates two derivations (MariaDB's `DTCollation::aggregate`); the result may be NONE.
pub(crate) fn aggregate(a: Deriv, b: Deriv) -> Deriv {
    let (ca, cb) = (
        a.coll.resolve(Collation::DEFAULT),
        b.coll.resolve(Collation::DEFAULT),
    );
    if a.coll == b.coll {
        return Deriv::new(a.coll, a.co.min(b.co));
    }
    if ca.charset() != cb.charset() {
        // One side is `binary` (the only other charset): it wins unless the other side's
        // coercibility is lower.
        return if ca == Collation::Binary {
            if a.co <= b.co {
                a
            } else {
                b
            }
        } else if b.co <= a.co {
            b
        } else {
            a
        };
    }
    match a.co.cmp(&b.co) {
        Ordering::Less => a,
        Ordering::Greater => b,
        Ordering::Equal if ca == cb => Deriv::new(a.coll, a.co),
        Ordering::Equal if a.co == Coercibility::Explicit => {
            Deriv::new(CollRef::Fixed(Collation::Utf8mb4Bin), Coercibility::None)
        }
        Ordering::Equal if ca == Collation::Utf8mb4Bin => a,
        Ordering::Equal if cb == Collation::Utf8mb4Bin => b,
        Ordering::Equal => Deriv::new(CollRef::Fixed(Collation::Utf8mb4Bin), Coercibility::None),
    }
}

/// The collation a comparison (`op`: `=`, `in`, `like`, ...) of operands with derivations
/// `ds` uses: None when fewer than two operands are strings (no string comparison), else
/// their aggregate; 1267 when that is NONE (an illegal mix).
pub(crate) fn for_comparison(ds: &[Option<Deriv>], op: &str) -> Result<Option<CollRef>, SqlError> {
    let strings: Vec<Deriv> = ds.iter().flatten().copied().collect();
    let Some((&first, rest)) = strings.split_first() else {
        return Ok(None);
    };
    let acc = rest.iter().fold(first, |a, d| aggregate(a, *d));
    if acc.co == Coercibility::None {
        return Err(illegal_mix(&strings, op));
    }
    Ok((strings.len() >= 2).then_some(acc.coll))
}

/// 1267 (two operands), 1270 (three) or 1271 (more) for the operands `ds` of `op`.
fn illegal_mix(ds: &[Deriv], op: &str) -> SqlError {
    let each: Vec<String> = ds
        .iter()
        .map(|d| format!("({},{})", d.shown(), d.co.name()))
        .collect();
    match each.as_slice() {
        [a, b] => SqlError::of(
            errors::ER_CANT_AGGREGATE_2COLLATIONS,
            format!("Illegal mix of collations {a} and {b} for operation '{op}'"),
        ),
        [a, b, c] => SqlError::of(
            errors::ER_CANT_AGGREGATE_3COLLATIONS,
            format!("Illegal mix of collations {a}, {b}, {c} for operation '{op}'"),
        ),
        _ => SqlError::of(
            errors::ER_CANT_AGGREGATE_NCOLLATIONS,
            format!("Illegal mix of collations for operation '{op}'"),
        ),
    }
}

/// The collation called `name`: 1273 for a name MariaDB does not know either, 1235 for one
/// of a character set onelog does not store.
pub(crate) fn collation_named(name: &str) -> Result<Collation, SqlError> {
    if let Some(c) = Collation::by_name(name) {
        return Ok(c);
    }
    let lower = name.to_ascii_lowercase();
    let known_charset = [
        "latin1_", "utf8mb3_", "utf8_", "ascii_", "ucs2_", "utf16_", "utf32_", "utf8mb4_",
        "latin2_", "cp1250_", "cp1251_", "big5_", "gbk_", "sjis_",
    ]
    .iter()
    .any(|p| lower.starts_with(p));
    if known_charset {
        return Err(SqlError::unsupported(&format!("COLLATE {lower}")));
    }
    Err(SqlError::of(
        errors::ER_UNKNOWN_COLLATION,
        format!("Unknown collation: '{name}'"),
    ))
}

/// The default collation of character set `name`: 1235 for one MariaDB has and onelog does
/// not store (its text is utf8mb4), 1115 for an unknown one.
pub(crate) fn charset_named(name: &str) -> Result<Collation, SqlError> {
    if let Some(c) = Collation::default_of_charset(name) {
        return Ok(c);
    }
    let lower = name.to_ascii_lowercase();
    let known = [
        "latin1", "utf8mb3", "utf8", "ascii", "ucs2", "utf16", "utf32", "latin2", "cp1250",
        "cp1251", "big5", "gbk", "sjis", "utf16le",
    ];
    if known.contains(&lower.as_str()) {
        return Err(SqlError::unsupported(&format!("CHARACTER SET {lower}")));
    }
    Err(SqlError::of(
        errors::ER_UNKNOWN_CHARACTER_SET,
        format!("Unknown character set: '{name}'"),
    ))
}

/// 1253 unless `coll` belongs to `charset` (the default collation of a charset).
pub(crate) fn check_charset(coll: Collation, charset: Collation) -> Result<(), SqlError> {
    if coll.charset() == charset.charset() {
        return Ok(());
    }
    Err(SqlError::of(
        errors::ER_COLLATION_CHARSET_MISMATCH,
        format!(
            "COLLATION '{}' is not valid for CHARACTER SET '{}'",
            coll.name(),
            charset.charset()
        ),
    ))
}

/// MySQL comparison of two values (None when either is NULL), strings under `coll`.
pub(crate) fn compare_in(coll: Collation, a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Bytes(x), Value::Bytes(y)) => Some(coll.compare(x, y)),
        _ => compare(a, b),
    }
}

/// A comparison operator on two values with strings under `coll`; None for other operators.
pub(crate) fn compare_op(op: BinOp, coll: Collation, a: &Value, b: &Value) -> Option<Value> {
    super::ops::comparison(op, a, b, || compare_in(coll, a, b))
}

/// Total order for sorting under `coll`: NULL first, then [`compare_in`].
pub(crate) fn sort_cmp_in(coll: Collation, a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Null, Value::Null) => Ordering::Equal,
        (Value::Null, _) => Ordering::Less,
        (_, Value::Null) => Ordering::Greater,
        _ => compare_in(coll, a, b).unwrap_or(Ordering::Equal),
    }
}

/// Appends a GROUP BY / DISTINCT key of `v`: strings by their sort key under `coll` (equal
/// keys exactly for values equal under it), other values as [`key_bytes`].
pub(crate) fn key_bytes_in(coll: Collation, v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Bytes(b) => {
            out.push(4);
            coll.sort_key(b, out);
        }
        other => key_bytes(other, out),
    }
}

/// A table's collation (SHOW CREATE TABLE's, the one a CHECK constraint's literals compare
/// under): the catalog keeps each column's collation, not the table's default, so this is
/// the one every text column shares, else the server default (the text then recreates the
/// same column collations; docs/SQL.md).
pub(crate) fn table_collation(t: &TableDef) -> Collation {
    // A JSON column's utf8mb4_bin is its type's, never the table's default.
    let mut colls = t
        .columns
        .iter()
        .filter(|c| c.ty != onelog_engine::SqlType::Json)
        .filter_map(|c| c.collation);
    match colls.next() {
        Some(first) if colls.all(|c| c == first) => first,
        _ => Collation::DEFAULT,
    }
}

/// The collation an ORDER BY item of a single-table statement sorts under: a column's, an
/// explicit COLLATE, else the connection's (`conn`).
pub(crate) fn order_collation(e: &Expr, def: &TableDef, conn: Collation) -> Collation {
    match e {
        Expr::Col(c) => def
            .columns
            .get(*c)
            .and_then(|d| d.string_collation())
            .unwrap_or(conn),
        Expr::Collate(_, c) => *c,
        _ => conn,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(c: Collation, co: Coercibility) -> Option<Deriv> {
        Some(Deriv::new(CollRef::Fixed(c), co))
    }

    /// Each case checked on MariaDB 10.11 (columns g general_ci, u unicode_ci, b bin,
    /// x varbinary).
    #[test]
    fn aggregation_follows_mariadb() {
        use Coercibility::*;
        use Collation::*;
        let g = d(Utf8mb4GeneralCi, Implicit);
        let u = d(Utf8mb4UnicodeCi, Implicit);
        let b = d(Utf8mb4Bin, Implicit);
        let x = d(Binary, Implicit);
        let lit = Some(Deriv::new(CollRef::Connection, Coercible));
        let err = for_comparison(&[g, u], "=").unwrap_err();
        assert_eq!(err.code, 1267);
        assert_eq!(
            err.message,
            "Illegal mix of collations (utf8mb4_general_ci,IMPLICIT) and \
             (utf8mb4_unicode_ci,IMPLICIT) for operation '='"
        );
        assert_eq!(
            for_comparison(&[g, b], "=").unwrap(),
            Some(CollRef::Fixed(Utf8mb4Bin))
        );
        assert_eq!(
            for_comparison(&[g, x], "=").unwrap(),
            Some(CollRef::Fixed(Binary))
        );
        let explicit_ci = d(Utf8mb4GeneralCi, Explicit);
        assert_eq!(
            for_comparison(&[x, explicit_ci], "=").unwrap(),
            Some(CollRef::Fixed(Utf8mb4GeneralCi))
        );
        assert_eq!(
            for_comparison(&[lit, lit], "=").unwrap(),
            Some(CollRef::Connection)
        );
        assert_eq!(
            for_comparison(&[u, lit], "=").unwrap(),
            Some(CollRef::Fixed(Utf8mb4UnicodeCi))
        );
        assert_eq!(
            for_comparison(&[u, Option::None], "=").unwrap(),
            Option::None
        );
        let e2 = d(Utf8mb4UnicodeCi, Explicit);
        assert_eq!(
            for_comparison(&[explicit_ci, e2], "=").unwrap_err().code,
            1267
        );
    }

    #[test]
    fn names() {
        assert_eq!(
            collation_named("utf8mb4_bin").unwrap(),
            Collation::Utf8mb4Bin
        );
        let e = collation_named("foo").unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (1273, "Unknown collation: 'foo'")
        );
        assert_eq!(collation_named("latin1_swedish_ci").unwrap_err().code, 1235);
        assert_eq!(charset_named("foo").unwrap_err().code, 1115);
        assert_eq!(charset_named("latin1").unwrap_err().code, 1235);
        let e = check_charset(Collation::Binary, Collation::Utf8mb4GeneralCi).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (
                1253,
                "COLLATION 'binary' is not valid for CHARACTER SET 'utf8mb4'"
            )
        );
    }
}
