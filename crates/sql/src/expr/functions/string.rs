//! String functions: CONCAT, CONCAT_WS, LENGTH, CHAR_LENGTH, UPPER, LOWER, SUBSTRING, LEFT,
//! RIGHT, TRIM (and the LEADING/TRAILING/BOTH forms), LTRIM, RTRIM, REPLACE, REPEAT,
//! REVERSE, LPAD, RPAD, HEX, ASCII, LOCATE, INSTR, SPACE.
//!
//! Invariants: a result that would pass the session's string limit (`max_allowed_packet`,
//! via the guard) is NULL, checked on its exact length before it is built; positions count
//! characters, lengths (LENGTH) bytes.

use onelog_binlog::Value;

use super::{int, lossy, rt_int, rt_str, sees_null, str_val, strict, FunctionDef, ANY};
use crate::error::SqlError;
use crate::expr::env::Env;
use crate::expr::text::text_of;

type R = Result<Value, SqlError>;

pub(super) const FUNCTIONS: &[FunctionDef] = &[
    strict("CONCAT", &["CONCAT"], (1, ANY), rt_str, concat),
    sees_null("CONCAT_WS", &["CONCAT_WS"], (2, ANY), rt_str, concat_ws),
    strict(
        "LENGTH",
        &["LENGTH", "OCTET_LENGTH", "LENGTHB"],
        (1, 1),
        rt_int,
        |v, _| Ok(Value::Int(text_of(&v[0]).len() as i64)),
    ),
    strict(
        "CHAR_LENGTH",
        &["CHAR_LENGTH", "CHARACTER_LENGTH"],
        (1, 1),
        rt_int,
        |v, _| Ok(Value::Int(lossy(&v[0]).chars().count() as i64)),
    ),
    strict("UPPER", &["UPPER", "UCASE"], (1, 1), rt_str, |v, _| {
        Ok(str_val(lossy(&v[0]).to_uppercase().into_bytes()))
    }),
    strict("LOWER", &["LOWER", "LCASE"], (1, 1), rt_str, |v, _| {
        Ok(str_val(lossy(&v[0]).to_lowercase().into_bytes()))
    }),
    strict(
        "SUBSTRING",
        &["SUBSTRING", "SUBSTR", "MID"],
        (2, 3),
        rt_str,
        substring,
    ),
    strict("LEFT", &["LEFT"], (2, 2), rt_str, |v, _| {
        Ok(left_right(&v, true))
    }),
    strict("RIGHT", &["RIGHT"], (2, 2), rt_str, |v, _| {
        Ok(left_right(&v, false))
    }),
    strict("TRIM", &["TRIM"], (1, 1), rt_str, |v, _| {
        Ok(trim(&v, true, true))
    }),
    strict("LTRIM", &["LTRIM"], (1, 1), rt_str, |v, _| {
        Ok(trim(&v, true, false))
    }),
    strict("RTRIM", &["RTRIM"], (1, 1), rt_str, |v, _| {
        Ok(trim(&v, false, true))
    }),
    // TRIM([BOTH | LEADING | TRAILING] what FROM s): (s, what).
    strict("TRIM_BOTH", &[], (2, 2), rt_str, |v, _| {
        Ok(trim(&v, true, true))
    }),
    strict("TRIM_LEADING", &[], (2, 2), rt_str, |v, _| {
        Ok(trim(&v, true, false))
    }),
    strict("TRIM_TRAILING", &[], (2, 2), rt_str, |v, _| {
        Ok(trim(&v, false, true))
    }),
    strict("REPLACE", &["REPLACE"], (3, 3), rt_str, replace),
    strict("REPEAT", &["REPEAT"], (2, 2), rt_str, repeat),
    strict("REVERSE", &["REVERSE"], (1, 1), rt_str, |v, _| {
        Ok(str_val(
            lossy(&v[0]).chars().rev().collect::<String>().into_bytes(),
        ))
    }),
    strict("LPAD", &["LPAD"], (3, 3), rt_str, |v, env| {
        pad(&v, env, true)
    }),
    strict("RPAD", &["RPAD"], (3, 3), rt_str, |v, env| {
        pad(&v, env, false)
    }),
    strict("HEX", &["HEX"], (1, 1), rt_str, hex),
    strict("ASCII", &["ASCII"], (1, 1), rt_int, |v, _| {
        Ok(Value::Int(i64::from(
            text_of(&v[0]).first().copied().unwrap_or(0),
        )))
    }),
    // LOCATE(needle, haystack); POSITION(needle IN haystack) compiles to it.
    strict("LOCATE", &["LOCATE"], (2, 2), rt_int, |v, _| {
        Ok(locate(&v[0], &v[1]))
    }),
    strict("INSTR", &["INSTR"], (2, 2), rt_int, |v, _| {
        Ok(locate(&v[1], &v[0]))
    }),
    strict("SPACE", &["SPACE"], (1, 1), rt_str, space),
];

fn concat(v: Vec<Value>, env: &Env) -> R {
    let parts: Vec<Vec<u8>> = v.iter().map(text_of).collect();
    let len: u64 = parts.iter().map(|p| p.len() as u64).sum();
    if !env.cx.guard.string_fits("concat", len) {
        return Ok(Value::Null);
    }
    let out = parts.concat();
    debug_assert_eq!(out.len() as u64, len);
    Ok(str_val(out))
}

/// CONCAT_WS(sep, ...): NULL only when the separator is; NULL arguments are skipped.
fn concat_ws(v: Vec<Value>, env: &Env) -> R {
    if v[0] == Value::Null {
        return Ok(Value::Null);
    }
    let sep = text_of(&v[0]);
    let parts: Vec<Vec<u8>> = v[1..]
        .iter()
        .filter(|x| **x != Value::Null)
        .map(text_of)
        .collect();
    let len: u64 = parts.iter().map(|p| p.len() as u64).sum::<u64>()
        + (sep.len() as u64).saturating_mul(parts.len().saturating_sub(1) as u64);
    if !env.cx.guard.string_fits("concat_ws", len) {
        return Ok(Value::Null);
    }
    let out = parts.join(&sep[..]);
    debug_assert_eq!(out.len() as u64, len);
    Ok(str_val(out))
}

fn substring(v: Vec<Value>, _: &Env) -> R {
    let s: Vec<char> = lossy(&v[0]).chars().collect();
    let n = s.len() as i128;
    let pos = int(&v[1]);
    let start = if pos > 0 {
        pos - 1
    } else if pos < 0 {
        n + pos
    } else {
        return Ok(str_val(Vec::new()));
    };
    if start < 0 || start >= n {
        return Ok(str_val(Vec::new()));
    }
    let len = if v.len() > 2 { int(&v[2]).max(0) } else { n };
    let end = (start + len).min(n);
    Ok(str_val(
        s[start as usize..end as usize]
            .iter()
            .collect::<String>()
            .into_bytes(),
    ))
}

fn left_right(v: &[Value], left: bool) -> Value {
    let s: Vec<char> = lossy(&v[0]).chars().collect();
    let k = (int(&v[1]).max(0) as usize).min(s.len());
    let part: String = if left {
        s[..k].iter().collect()
    } else {
        s[s.len() - k..].iter().collect()
    };
    str_val(part.into_bytes())
}

/// Removes `v[1]` (default: a space) repeatedly from the start (`lead`) and/or end (`trail`).
fn trim(v: &[Value], lead: bool, trail: bool) -> Value {
    let s = text_of(&v[0]);
    let what = if v.len() > 1 {
        text_of(&v[1])
    } else {
        b" ".to_vec()
    };
    let mut a = 0;
    let mut b = s.len();
    if !what.is_empty() {
        if lead {
            while b - a >= what.len() && s[a..].starts_with(&what) {
                a += what.len();
            }
        }
        if trail {
            while b - a >= what.len() && s[..b].ends_with(&what) {
                b -= what.len();
            }
        }
    }
    str_val(s[a..b].to_vec())
}

fn replace(v: Vec<Value>, env: &Env) -> R {
    let s = lossy(&v[0]);
    let from = lossy(&v[1]);
    let to = lossy(&v[2]);
    if from.is_empty() {
        return Ok(str_val(s.into_bytes()));
    }
    let hits = s.matches(from.as_str()).count() as u64;
    let len = (s.len() as u64 - hits * from.len() as u64)
        .saturating_add(hits.saturating_mul(to.len() as u64));
    if !env.cx.guard.string_fits("replace", len) {
        return Ok(Value::Null);
    }
    let out = s.replace(&from, &to);
    debug_assert_eq!(out.len() as u64, len);
    Ok(str_val(out.into_bytes()))
}

fn repeat(v: Vec<Value>, env: &Env) -> R {
    let n = int(&v[1]).clamp(0, i128::from(u32::MAX)) as u64;
    let s = text_of(&v[0]);
    if s.is_empty() || n == 0 {
        return Ok(str_val(Vec::new()));
    }
    if !env
        .cx
        .guard
        .string_fits("repeat", (s.len() as u64).saturating_mul(n))
    {
        return Ok(Value::Null);
    }
    Ok(str_val(s.repeat(n as usize)))
}

/// LPAD (`left`) / RPAD(s, n, pad): `s` cut or padded to `n` characters.
fn pad(v: &[Value], env: &Env, left: bool) -> R {
    let s: Vec<char> = lossy(&v[0]).chars().collect();
    let n = int(&v[1]);
    if n < 0 {
        return Ok(Value::Null);
    }
    let name = if left { "lpad" } else { "rpad" };
    // At least one byte per character: a count past the cap cannot fit.
    if !env
        .cx
        .guard
        .string_fits(name, n.min(i128::from(u64::MAX)) as u64)
    {
        return Ok(Value::Null);
    }
    let n = n as usize;
    let pad: Vec<char> = lossy(&v[2]).chars().collect();
    if s.len() >= n {
        return Ok(str_val(s[..n].iter().collect::<String>().into_bytes()));
    }
    if pad.is_empty() {
        return Ok(Value::Null);
    }
    let fill: String = pad.iter().cycle().take(n - s.len()).collect();
    let body: String = s.iter().collect();
    if !env
        .cx
        .guard
        .string_fits(name, (fill.len() + body.len()) as u64)
    {
        return Ok(Value::Null);
    }
    Ok(str_val(
        if left { fill + &body } else { body + &fill }.into_bytes(),
    ))
}

fn hex(v: Vec<Value>, _: &Env) -> R {
    Ok(match &v[0] {
        Value::Bytes(b) => str_val(
            b.iter()
                .map(|x| format!("{x:02X}"))
                .collect::<String>()
                .into_bytes(),
        ),
        other => str_val(format!("{:X}", int(other) as u64).into_bytes()),
    })
}

/// 1-based character position of `needle` in `hay`, 0 when absent.
fn locate(needle: &Value, hay: &Value) -> Value {
    let (needle, hay) = (lossy(needle), lossy(hay));
    Value::Int(match hay.find(&needle) {
        Some(i) => hay[..i].chars().count() as i64 + 1,
        None => 0,
    })
}

fn space(v: Vec<Value>, env: &Env) -> R {
    let n = int(&v[0]).clamp(0, i128::from(u64::MAX)) as u64;
    if !env.cx.guard.string_fits("space", n) {
        return Ok(Value::Null);
    }
    Ok(str_val(vec![b' '; n as usize]))
}

#[cfg(test)]
mod tests {
    use super::super::check_against_mariadb;

    #[test]
    fn string_functions_match_mariadb() {
        // Expected values: what MariaDB 10.11.19 returned for `SELECT <expr>` (mariadb -N -B).
        check_against_mariadb(&[
            ("CONCAT('ab', 'cd', 1)", "abcd1"),
            ("CONCAT('a', NULL)", "NULL"),
            ("CONCAT_WS(',', 'a', NULL, 'b')", "a,b"),
            ("CONCAT_WS(NULL, 'a', 'b')", "NULL"),
            ("LENGTH('héllo')", "6"),
            ("CHAR_LENGTH('héllo')", "5"),
            ("OCTET_LENGTH(NULL)", "NULL"),
            ("UPPER('abc')", "ABC"),
            ("LCASE('ÀBC')", "àbc"),
            ("SUBSTRING('Quadratically', 5)", "ratically"),
            ("SUBSTRING('Quadratically', 5, 6)", "ratica"),
            ("SUBSTR('Sakila', -3)", "ila"),
            ("SUBSTRING('Sakila' FROM 2 FOR 3)", "aki"),
            ("CONCAT('[', SUBSTRING('abc', 0), ']')", "[]"),
            ("MID('abc', 2, 1)", "b"),
            ("LEFT('foobar', 3)", "foo"),
            ("RIGHT('foobar', 10)", "foobar"),
            ("LEFT(NULL, 1)", "NULL"),
            ("CONCAT('[', TRIM('  x  '), ']')", "[x]"),
            ("CONCAT('[', LTRIM('  x  '), ']')", "[x  ]"),
            ("CONCAT('[', RTRIM('  x  '), ']')", "[  x]"),
            ("TRIM(LEADING 'x' FROM 'xxbarxx')", "barxx"),
            ("TRIM(TRAILING 'x' FROM 'xxbarxx')", "xxbar"),
            ("TRIM(BOTH 'x' FROM 'xxbarxx')", "bar"),
            ("REPLACE('www.mysql.com', 'w', 'Ww')", "WwWwWw.mysql.com"),
            ("REPLACE('abc', '', 'x')", "abc"),
            ("REPEAT('ab', 3)", "ababab"),
            ("CONCAT('[', REPEAT('ab', -1), ']')", "[]"),
            ("REVERSE('abc')", "cba"),
            ("LPAD('hi', 4, '??')", "??hi"),
            ("LPAD('hi', 1, '??')", "h"),
            ("RPAD('hi', 5, 'ab')", "hiaba"),
            ("LPAD('hi', -1, 'x')", "NULL"),
            ("LPAD('hi', 5, '')", "NULL"),
            ("HEX('abc')", "616263"),
            ("HEX(255)", "FF"),
            ("HEX(-1)", "FFFFFFFFFFFFFFFF"),
            ("ASCII('2')", "50"),
            ("ASCII('')", "0"),
            ("LOCATE('bar', 'foobarbar')", "4"),
            ("LOCATE('xbar', 'foobar')", "0"),
            ("INSTR('foobarbar', 'bar')", "4"),
            ("POSITION('b' IN 'abc')", "2"),
            ("CONCAT('[', SPACE(3), ']')", "[   ]"),
        ]);
    }
}
