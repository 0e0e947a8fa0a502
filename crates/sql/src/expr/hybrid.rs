//! Hex hybrids: the literals `0x41` and `b'1000001'` (MariaDB's `Item_hex_hybrid`).
//!
//! Such a literal is a binary string (`CONCAT(0x41)` is `A`, `0x41 = 'A'` is true, a string
//! column stores its bytes) that reads as the unsigned number its bytes spell, big-endian,
//! wherever a number is wanted: arithmetic and bit operations, a comparison with a number,
//! CAST to a number, the numeric built-ins and aggregates, a logical operand, and a numeric
//! column it is stored in. Of more than 8 bytes, the number is that of the last 8 (MariaDB's
//! `val_int`); stored into a numeric column, such a literal is out of range. `X'41'` is not a
//! hybrid: it is a binary string everywhere (`parse::hex_literals` tells the spellings apart).
//!
//! Compiled as `HEX_HYBRID(number, bytes)`, a call SQL cannot make: it evaluates to the
//! bytes, and [`as_number`] (called by `compile::numeric_view` and where a value is only
//! ever a number) takes the number out, as a BIT column's `BIT_TEXT` is read. IF, IFNULL,
//! COALESCE, NULLIF, GREATEST, LEAST and CASE whose every result is a hybrid (or NULL) are
//! hybrids too: MariaDB aggregates two hybrids to a hybrid, and a hybrid with anything else
//! to a string.
//!
//! Invariants: [`literal`] is the only maker of a HEX_HYBRID call, whose first argument is
//! the `Value::UInt` of its second's bytes; [`as_number`] and [`for_column`] change nothing
//! but hybrids.

use onelog_binlog::Value;
use onelog_engine::collation::Collation;
use onelog_engine::SqlType;

use super::ir::{Expr, Func};
use crate::error::SqlError;

const HEX_HYBRID: Func = Func::named("HEX_HYBRID");

/// The hybrid literal of `bytes`.
pub(crate) fn literal(bytes: &[u8]) -> Expr {
    Expr::Func(
        HEX_HYBRID,
        vec![
            Expr::Lit(Value::UInt(number_of(bytes))),
            Expr::Introduced(Box::new(Expr::Lit(Value::bytes(bytes))), Collation::Binary),
        ],
    )
}

/// The number of a hybrid's bytes: big-endian, of the last 8 bytes.
fn number_of(bytes: &[u8]) -> u64 {
    bytes[bytes.len().saturating_sub(8)..]
        .iter()
        .fold(0, |n, &b| n << 8 | u64::from(b))
}

/// The bytes of the bit literal `b'digits'`: the number the digits spell, in as many bytes
/// as its digits need (`b'101'` one byte, `b'0000000001'` two, `b''` none), as MariaDB's.
pub(crate) fn bit_bytes(digits: &str) -> Result<Vec<u8>, SqlError> {
    if digits.bytes().any(|b| !matches!(b, b'0' | b'1')) {
        return Err(SqlError::syntax(&format!("b'{digits}'")));
    }
    let mut out = vec![0u8; digits.len().div_ceil(8)];
    // The last digit is bit 0 of the last byte.
    for (i, d) in digits.bytes().rev().enumerate() {
        if d == b'1' {
            let at = out.len() - 1 - i / 8;
            out[at] |= 1 << (i % 8);
        }
    }
    Ok(out)
}

/// The positions of the arguments whose value a call returns, for the calls that are hybrids
/// when those are (NULLIF aside: [`kind`]); None for any other call.
fn results_of(f: Func, args: usize) -> Option<std::ops::Range<usize>> {
    match f.def().name {
        "IF" => Some(1..args),
        "IFNULL" | "COALESCE" | "GREATEST" | "LEAST" => Some(0..args),
        _ => None,
    }
}

fn is_number_literal(e: &Expr) -> bool {
    matches!(
        e,
        Expr::Lit(Value::Int(_) | Value::UInt(_) | Value::Decimal(_) | Value::Double(_))
    )
}

/// What an expression is to the hybrid rules.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Hybrid,
    /// The NULL literal: leaves a call or CASE of hybrids a hybrid.
    Null,
    Other,
}

/// The [`Kind`] of `e`, in one walk of its results (each node once: nested calls of hybrids
/// are as deep as the parser allows).
fn kind(e: &Expr) -> Kind {
    match e {
        Expr::Lit(Value::Null) => Kind::Null,
        Expr::Func(f, _) if *f == HEX_HYBRID => Kind::Hybrid,
        // Its value is its first argument's, and it compares the two: that comparison would
        // change if only the first became a number.
        Expr::Func(f, args) if f.def().name == "NULLIF" => {
            let second = kind(&args[1]) != Kind::Other || is_number_literal(&args[1]);
            if second && kind(&args[0]) == Kind::Hybrid {
                Kind::Hybrid
            } else {
                Kind::Other
            }
        }
        Expr::Func(f, args) => match results_of(*f, args.len()) {
            Some(r) => results_kind(&args[r]),
            None => Kind::Other,
        },
        Expr::Collated(_, inner) if kind(inner) == Kind::Hybrid => Kind::Hybrid,
        Expr::Case(_, whens, el) => results_kind(whens.iter().map(|(_, r)| r).chain(el.as_deref())),
        _ => Kind::Other,
    }
}

/// A hybrid when every result is a hybrid or NULL and one is a hybrid.
fn results_kind<'e>(results: impl IntoIterator<Item = &'e Expr>) -> Kind {
    let mut hybrid = false;
    for r in results {
        match kind(r) {
            Kind::Other => return Kind::Other,
            Kind::Hybrid => hybrid = true,
            Kind::Null => {}
        }
    }
    if hybrid {
        Kind::Hybrid
    } else {
        Kind::Other
    }
}

/// True when `e` is a hybrid literal, or a call or CASE whose every result is one.
pub(crate) fn is_hybrid(e: &Expr) -> bool {
    kind(e) == Kind::Hybrid
}

/// `e` read as a number where it is a hybrid; any other `e` as it is.
pub(crate) fn as_number(e: Expr) -> Expr {
    if !is_hybrid(&e) {
        return e;
    }
    match e {
        Expr::Func(f, mut args) if f == HEX_HYBRID => args.swap_remove(0),
        Expr::Func(f, args) => {
            let r = match f.def().name {
                "NULLIF" => 0..args.len(),
                _ => results_of(f, args.len()).unwrap_or(0..0),
            };
            let args = args
                .into_iter()
                .enumerate()
                .map(|(i, a)| if r.contains(&i) { as_number(a) } else { a })
                .collect();
            Expr::Func(f, args)
        }
        Expr::Collated(c, inner) => Expr::Collated(c, Box::new(as_number(*inner))),
        Expr::Case(op, whens, el) => Expr::Case(
            op,
            whens.into_iter().map(|(c, r)| (c, as_number(r))).collect(),
            el.map(|e| Box::new(as_number(*e))),
        ),
        other => other,
    }
}

/// `e` as a binary string where it is a hybrid literal (`_binary 0x41`: an introducer makes
/// it a plain string in MariaDB); any other `e` as it is.
pub(crate) fn as_string(e: Expr) -> Expr {
    match e {
        Expr::Func(f, mut args) if f == HEX_HYBRID => args.swap_remove(1),
        other => other,
    }
}

/// The positions of the numeric arguments of the built-in `name` (its canonical name), for
/// the built-ins that read some argument as a number (a hybrid, an ENUM, SET or BIT column
/// there reads as its number: `compile::numeric_view`); None for the others.
pub(crate) fn numeric_arguments(name: &str) -> Option<std::ops::Range<usize>> {
    const ALL: usize = usize::MAX;
    Some(match name {
        "ABS" | "ROUND" | "TRUNCATE" | "FLOOR" | "CEIL" | "MOD" | "POW" | "SQRT" | "SIGN"
        | "RAND" | "EXP" | "LN" | "LOG" | "LOG2" | "LOG10" | "SIN" | "COS" | "TAN" | "ASIN"
        | "ACOS" | "ATAN" | "ATAN2" | "COT" | "DEGREES" | "RADIANS" | "BIT_COUNT" | "CHAR"
        | "CHR" | "INET_NTOA" | "FROM_DAYS" | "MAKEDATE" | "SEC_TO_TIME" | "PERIOD_ADD"
        | "PERIOD_DIFF" | "SPACE" | "FORMAT" => 0..ALL,
        "FROM_UNIXTIME" | "ELT" | "MAKE_SET" => 0..1,
        "LEFT" | "RIGHT" | "REPEAT" | "LPAD" | "RPAD" => 1..2,
        "SUBSTRING" | "INSERT" => 1..3,
        "LOCATE" | "SUBSTRING_INDEX" => 2..3,
        _ => return None,
    })
}

/// True for a column a hybrid is stored into as its number (MariaDB: a field whose result
/// type is not a string; an ENUM, SET or temporal column takes the bytes).
pub(crate) fn stores_number(ty: &SqlType) -> bool {
    ty.is_integer()
        || matches!(
            ty,
            SqlType::Float
                | SqlType::Double
                | SqlType::Decimal { .. }
                | SqlType::Bit(_)
                | SqlType::Year
        )
}

/// A number larger than any numeric column holds (2^64).
const PAST_EVERY_RANGE: &str = "18446744073709551616";

/// The value expression `e` stored into a column of type `ty`: a hybrid's number into a
/// numeric column (a literal of more than 8 bytes a number past every column's range, so
/// out of range as in MariaDB; into a BIT column its bytes, too long), its bytes into any
/// other.
pub(crate) fn for_column(e: Expr, ty: &SqlType) -> Expr {
    if !stores_number(ty) {
        return e;
    }
    if let Expr::Func(f, args) = &e {
        let long = matches!(args.get(1), Some(Expr::Introduced(b, _))
            if matches!(&**b, Expr::Lit(Value::Bytes(b)) if b.len() > 8));
        if *f == HEX_HYBRID && long {
            return match ty {
                // Its bytes, too long for a BIT(M) under 64: 1406, MariaDB's answer (a
                // BIT(64) is out of range, as below).
                SqlType::Bit(m) if *m < 64 => as_string(e),
                _ => Expr::Lit(Value::Decimal(PAST_EVERY_RANGE.into())),
            };
        }
    }
    as_number(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bit_literals_take_the_bytes_their_digits_need() {
        assert_eq!(bit_bytes("101").unwrap(), [5]);
        assert_eq!(bit_bytes("1000001").unwrap(), [0x41]);
        assert_eq!(bit_bytes("0000000001").unwrap(), [0, 1]);
        assert_eq!(bit_bytes("").unwrap(), [0u8; 0]);
        assert_eq!(bit_bytes(&"1".repeat(70)).unwrap()[..2], [0x3f, 0xff]);
        assert!(bit_bytes("102").is_err());
    }

    #[test]
    fn the_number_is_that_of_the_last_eight_bytes() {
        assert_eq!(number_of(&[0x41]), 65);
        assert_eq!(number_of(&[]), 0);
        assert_eq!(number_of(&[0xff; 8]), u64::MAX);
        assert_eq!(
            number_of(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]),
            0x030405060708090a
        );
    }

    #[test]
    fn a_hybrid_reads_as_its_number_and_anything_else_is_left_alone() {
        let h = literal(&[0x41]);
        assert!(is_hybrid(&h));
        assert!(matches!(as_number(h.clone()), Expr::Lit(Value::UInt(65))));
        let col = Expr::Col(0);
        assert!(matches!(as_number(col), Expr::Col(0)));
        let both = Expr::Case(
            None,
            vec![(Expr::Col(1), h.clone())],
            Some(Box::new(h.clone())),
        );
        assert!(is_hybrid(&both));
        let mixed = Expr::Case(None, vec![(Expr::Col(1), h)], Some(Box::new(Expr::Col(2))));
        assert!(!is_hybrid(&mixed));
    }
}
