//! ENUM and SET values, as MariaDB's `Field_enum` / `Field_set` read and write them.
//!
//! A row holds an ENUM as the 1-based index of its member (0: the error value `''`) and a
//! SET as the bit set of its members (bit 0: the first), as the binlog carries them. An
//! expression sees the column as its text (compile wraps the column in ENUM_TEXT /
//! SET_TEXT, `compile::member_column`), except where MariaDB uses its number: arithmetic, a
//! comparison with a number, the numeric aggregates, ORDER BY (which sorts by the index /
//! bit set) — there compile unwraps it (`compile::numeric_view`).
//!
//! Writing ([`store_value`]): a string names a member (compared case-insensitively and
//! ignoring trailing spaces, as utf8mb4_general_ci does), a SET string is a comma list of
//! members in any order; a number is the index / bit set itself; an ENUM string of digits
//! that names no member is the index it spells. Anything else is MariaDB's 1265: an error in
//! strict mode, otherwise stored as its nearest value (ENUM `''`, SET the members it did
//! name) with the warning.
//!
//! Invariants: [`store_value`] returns a value the engine's type check accepts (an index
//! `0..=n`, a bit set below `2^n`); a member list survives [`encode_members`] /
//! [`decode_members`] (members never hold a NUL byte: CREATE refuses one).

use onelog_binlog::Value;

use super::text::text_of;

/// The members of a column as one literal argument of ENUM_TEXT / SET_TEXT (NUL-separated).
pub(crate) fn encode_members(members: &[String]) -> Vec<u8> {
    debug_assert!(
        members.iter().all(|m| !m.contains('\0')),
        "a member with NUL"
    );
    members.join("\0").into_bytes()
}

/// The members [`encode_members`] wrote.
pub(crate) fn decode_members(b: &[u8]) -> Vec<&[u8]> {
    b.split(|&c| c == 0).collect()
}

/// The text of a stored ENUM index or SET bit set (`''` for 0 or a number past the members).
pub(crate) fn member_text(v: &Value, members: &[&[u8]], set: bool) -> Value {
    let n = match v {
        Value::UInt(n) => *n,
        Value::Int(i) if *i >= 0 => *i as u64,
        Value::Null => return Value::Null,
        other => return other.clone(),
    };
    if !set {
        let text = usize::try_from(n)
            .ok()
            .and_then(|i| i.checked_sub(1))
            .and_then(|i| members.get(i))
            .map_or(Vec::new(), |m| m.to_vec());
        return Value::bytes(text);
    }
    let mut out = Vec::new();
    for (i, m) in members.iter().enumerate().take(64) {
        if n >> i & 1 == 1 {
            if !out.is_empty() {
                out.push(b',');
            }
            out.extend_from_slice(m);
        }
    }
    Value::bytes(out)
}

fn same_member(a: &str, b: &str) -> bool {
    let (a, b) = (a.trim_end_matches(' '), b.trim_end_matches(' '));
    a == b || a.to_lowercase() == b.to_lowercase()
}

/// The stored value of `v` for an ENUM (`set` false) or SET of `members`: `Ok` when it is
/// exact, `Err` with what non-strict mode stores (with warning 1265) otherwise. NULL stays
/// NULL.
pub(crate) fn store_value(members: &[String], set: bool, v: &Value) -> Result<Value, Value> {
    let n = members.len();
    let number = match v {
        Value::Null => return Ok(Value::Null),
        Value::Int(i) => Some(i128::from(*i)),
        Value::UInt(u) => Some(i128::from(*u)),
        Value::Bytes(_) => None,
        other => String::from_utf8_lossy(&text_of(other))
            .trim()
            .parse::<i128>()
            .ok(),
    };
    if let Some(x) = number {
        return number_value(n, set, x);
    }
    let text = String::from_utf8_lossy(&text_of(v)).into_owned();
    if !set {
        if let Some(i) = members.iter().position(|m| same_member(m, &text)) {
            return Ok(Value::UInt(i as u64 + 1));
        }
        return match text.trim().parse::<i128>() {
            Ok(x) if !text.trim().is_empty() => number_value(n, false, x),
            _ => Err(Value::UInt(0)),
        };
    }
    let mut mask = 0u64;
    let mut exact = true;
    if !text.is_empty() {
        for part in text.split(',') {
            match members.iter().position(|m| same_member(m, part)) {
                Some(i) => mask |= 1 << i,
                None => exact = false,
            }
        }
    }
    if exact {
        Ok(Value::UInt(mask))
    } else {
        Err(Value::UInt(mask))
    }
}

/// An ENUM index or SET bit set given as a number.
fn number_value(n: usize, set: bool, x: i128) -> Result<Value, Value> {
    if set {
        let all: i128 = if n >= 64 {
            i128::from(u64::MAX)
        } else {
            (1 << n) - 1
        };
        if (0..=all).contains(&x) {
            return Ok(Value::UInt(x as u64));
        }
        // MariaDB keeps the bits of the members it has.
        let kept = if x < 0 { 0 } else { x & all };
        return Err(Value::UInt(kept as u64));
    }
    if (1..=n as i128).contains(&x) {
        Ok(Value::UInt(x as u64))
    } else {
        Err(Value::UInt(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_stored_and_read_as_mariadb() {
        let m: Vec<String> = ["b", "a", "c"].iter().map(|s| s.to_string()).collect();
        let b = |s: &str| Value::bytes(s.as_bytes());
        assert_eq!(store_value(&m, false, &b("A")), Ok(Value::UInt(2)));
        assert_eq!(store_value(&m, false, &b("c ")), Ok(Value::UInt(3)));
        assert_eq!(store_value(&m, false, &b("3")), Ok(Value::UInt(3)));
        assert_eq!(store_value(&m, false, &Value::Int(2)), Ok(Value::UInt(2)));
        assert_eq!(store_value(&m, false, &b("zz")), Err(Value::UInt(0)));
        assert_eq!(store_value(&m, false, &Value::Int(0)), Err(Value::UInt(0)));
        assert_eq!(store_value(&m, false, &Value::Int(9)), Err(Value::UInt(0)));
        assert_eq!(store_value(&m, true, &b("c,b,c")), Ok(Value::UInt(5)));
        assert_eq!(store_value(&m, true, &b("")), Ok(Value::UInt(0)));
        assert_eq!(store_value(&m, true, &b("b,w")), Err(Value::UInt(1)));
        assert_eq!(store_value(&m, true, &Value::Int(9)), Err(Value::UInt(1)));
        assert_eq!(store_value(&m, true, &Value::Int(7)), Ok(Value::UInt(7)));
        let enc = encode_members(&m);
        let d = decode_members(&enc);
        assert_eq!(member_text(&Value::UInt(2), &d, false), b("a"));
        assert_eq!(member_text(&Value::UInt(0), &d, false), b(""));
        assert_eq!(member_text(&Value::UInt(5), &d, true), b("b,c"));
        assert_eq!(member_text(&Value::Null, &d, true), Value::Null);
    }
}
