//! Three views of a whole JSON document that MariaDB 10.11's later JSON functions give:
//! JSON_DETAILED's indented form ([`detailed`]), JSON_NORMALIZE's canonical form
//! ([`normalize`], which JSON_EQUALS compares) and JSON_OVERLAPS's test ([`overlaps`]).
//!
//! Each follows MariaDB's own walk over the document, quirks included: JSON_DETAILED writes
//! an empty array as `[]` but an empty object as `{` newline `}`, and an array of one scalar
//! on one line (`[1]`); JSON_NORMALIZE sorts members by the bytes of their escaped keys
//! (duplicates kept, in document order), writes numbers as `d.dddEn` and strings as written;
//! JSON_OVERLAPS compares nested objects whole (their normalized forms) and nested arrays
//! element by element, the second no longer than the first.
//!
//! Invariants: nothing here panics on any document; recursion is bounded by the parser's
//! depth limit ([`super::json::DEPTH_LIMIT`]).
//!
//! Called by the JSON functions (`functions/json.rs`).

use super::json::Json;

/// MariaDB's largest indentation step for JSON_DETAILED.
const TAB_LIMIT: usize = 8;

/// JSON_DETAILED / JSON_PRETTY of a document, indented by `tab` spaces per level (clipped to
/// 0..=8).
pub(crate) fn detailed(doc: &Json, tab: i64) -> String {
    let mut w = Detailed {
        out: String::new(),
        tab: tab.clamp(0, TAB_LIMIT as i64) as usize,
        depth: 0,
        first: true,
        size: 0,
        last: String::new(),
    };
    w.value(doc, false);
    w.out
}

/// The state of MariaDB's `json_nice` in DETAILED mode.
struct Detailed {
    out: String,
    tab: usize,
    depth: usize,
    /// No value written yet at this level (no comma before the next).
    first: bool,
    /// Scalars written at the innermost open level; -1 after an object opens or a level
    /// closes (MariaDB's `value_size`).
    size: i64,
    /// The text of the last scalar written.
    last: String,
}

impl Detailed {
    fn newline(&mut self, depth: usize) {
        self.out.push('\n');
        for _ in 0..depth * self.tab {
            self.out.push(' ');
        }
    }

    /// Writes one value; `after_key` when it is an object member's.
    fn value(&mut self, v: &Json, after_key: bool) {
        let (open, close) = match v {
            Json::Arr(_) => ('[', ']'),
            Json::Obj(_) => ('{', '}'),
            scalar => {
                let t = scalar.text();
                self.out.push_str(&t);
                self.first = false;
                if self.size != -1 {
                    self.size += 1;
                }
                self.last = t;
                return;
            }
        };
        if self.depth > 0 && after_key {
            self.newline(self.depth);
        }
        self.out.push(open);
        self.first = true;
        self.size = if open == '{' { -1 } else { 0 };
        self.depth += 1;
        match v {
            Json::Arr(items) => {
                for item in items {
                    self.separator();
                    self.newline(self.depth);
                    self.value(item, false);
                }
            }
            Json::Obj(members) => {
                for (k, item) in members {
                    self.separator();
                    self.newline(self.depth);
                    self.out.push('"');
                    self.out.push_str(k);
                    self.out.push_str("\": ");
                    self.value(item, true);
                }
            }
            _ => {}
        }
        self.close(close);
    }

    fn separator(&mut self) {
        if !self.first {
            self.out.push(',');
        }
    }

    fn close(&mut self, close: char) {
        self.depth -= 1;
        if self.size > 1 || self.size == -1 {
            self.newline(self.depth);
        }
        if self.size == 1 && close == ']' {
            // One scalar: back to `[` and the scalar on its line.
            let cut = self.last.len() + (self.depth + 1) * self.tab + 1;
            let keep = self.out.len().saturating_sub(cut);
            debug_assert!(self.out.is_char_boundary(keep));
            self.out.truncate(keep);
            let last = std::mem::take(&mut self.last);
            self.out.push_str(&last);
            self.last = last;
        }
        self.out.push(close);
        self.first = false;
        self.size = -1;
    }
}

/// JSON_NORMALIZE of a document: members sorted by their keys' bytes (stable, so duplicates
/// keep their order), no whitespace, numbers as [`normalize_number`] writes them.
pub(crate) fn normalize(doc: &Json) -> String {
    let mut out = String::new();
    write_normalized(doc, &mut out);
    out
}

fn write_normalized(v: &Json, out: &mut String) {
    match v {
        Json::Num(n) => out.push_str(&normalize_number(n)),
        Json::Arr(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_normalized(item, out);
            }
            out.push(']');
        }
        Json::Obj(members) => {
            let mut sorted: Vec<&(String, Json)> = members.iter().collect();
            sorted.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            out.push('{');
            for (i, (k, item)) in sorted.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push('"');
                out.push_str(k);
                out.push_str("\":");
                write_normalized(item, out);
            }
            out.push('}');
        }
        scalar => scalar.write_compact(out),
    }
}

/// A JSON number as MariaDB's `json_normalize_number` writes it: `-d.dddEn` with the
/// significant digits only (`100` is `1.0E2`, `-0` and `0.0` are `0.0E0`).
pub(crate) fn normalize_number(n: &str) -> String {
    let b = n.as_bytes();
    let (negative, mut i) = if b.first() == Some(&b'-') {
        (true, 1)
    } else {
        (false, 0)
    };
    let mut digits: Vec<u8> = Vec::with_capacity(b.len());
    while i < b.len() && !matches!(b[i], b'.' | b'e' | b'E') {
        digits.push(b[i]);
        i += 1;
    }
    let mut magnitude = digits.len() as i64 - 1;
    if b.get(i) == Some(&b'.') {
        i += 1;
    }
    while i < b.len() && !matches!(b[i], b'e' | b'E') {
        digits.push(b[i]);
        i += 1;
    }
    // Trailing zeros go (all but the first digit), then leading ones.
    while digits.len() > 1 && digits.last() == Some(&b'0') {
        digits.pop();
    }
    let lead = digits.iter().take_while(|&&d| d == b'0').count();
    digits.drain(..lead);
    magnitude -= lead as i64;
    if digits.is_empty() {
        return "0.0E0".to_string();
    }
    if i < b.len() {
        magnitude += exponent(&b[i + 1..]);
    }
    let mut out = String::with_capacity(digits.len() + 8);
    if negative {
        out.push('-');
    }
    out.push(char::from(digits[0]));
    out.push('.');
    if digits.len() == 1 {
        out.push('0');
    } else {
        out.extend(digits[1..].iter().map(|&d| char::from(d)));
    }
    out.push('E');
    out.push_str(&magnitude.to_string());
    out
}

/// The exponent as C's `strtol` reads it (a sign, digits; 0 when there are none).
fn exponent(b: &[u8]) -> i64 {
    let (neg, digits) = match b.first() {
        Some(b'-') => (true, &b[1..]),
        Some(b'+') => (false, &b[1..]),
        _ => (false, b),
    };
    let v = digits
        .iter()
        .take_while(|d| d.is_ascii_digit())
        .fold(0i64, |acc, d| {
            acc.saturating_mul(10).saturating_add(i64::from(d - b'0'))
        });
    if neg {
        -v
    } else {
        v
    }
}

/// JSON_OVERLAPS: whether the documents share a scalar, an array element, an object member
/// (MariaDB's `check_overlaps` with `compare_whole` false at the top).
pub(crate) fn overlaps(js: &Json, value: &Json) -> bool {
    check(js, value, false)
}

fn same_kind(a: &Json, b: &Json) -> bool {
    std::mem::discriminant(a) == std::mem::discriminant(b)
}

fn is_scalar(v: &Json) -> bool {
    !matches!(v, Json::Arr(_) | Json::Obj(_))
}

/// MariaDB's `check_overlaps(js, value, compare_whole)`.
fn check(js: &Json, value: &Json, whole: bool) -> bool {
    match js {
        Json::Obj(members) => with_object(members, js, value, whole),
        Json::Arr(items) => with_array(items, value, whole),
        _ => with_scalar(js, value),
    }
}

/// A scalar `js` against `value`: an equal scalar, or an array holding one.
fn with_scalar(js: &Json, value: &Json) -> bool {
    match value {
        Json::Arr(items) => items
            .iter()
            .any(|v| is_scalar(v) && same_kind(js, v) && with_scalar(js, v)),
        Json::Obj(_) => false,
        v => scalars_overlap(js, v),
    }
}

fn scalars_overlap(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Num(x), Json::Num(y)) => (leading_f64(x) - leading_f64(y)).abs() < 1e-12,
        (Json::Str(x), Json::Str(y)) => x == y,
        (Json::Bool(x), Json::Bool(y)) => x == y,
        (Json::Null, Json::Null) => true,
        _ => false,
    }
}

/// A JSON number's value as C's `strtod` reads its text.
fn leading_f64(n: &str) -> f64 {
    let end = (1..=n.len())
        .rev()
        .find(|&i| n.is_char_boundary(i) && n[..i].parse::<f64>().is_ok())
        .unwrap_or(0);
    n[..end].parse().unwrap_or(0.0)
}

fn with_array(items: &[Json], value: &Json, whole: bool) -> bool {
    match value {
        Json::Arr(vs) if whole => {
            // Element by element, as long as `value` lasts.
            vs.len() <= items.len()
                && items
                    .iter()
                    .zip(vs)
                    .all(|(a, b)| same_kind(a, b) && check(a, b, true))
        }
        Json::Arr(vs) => items
            .iter()
            .any(|a| vs.iter().any(|b| same_kind(a, b) && check(a, b, true))),
        Json::Obj(_) if whole => false,
        Json::Obj(_) => items
            .iter()
            .any(|a| matches!(a, Json::Obj(_)) && normalize(a) == normalize(value)),
        scalar => items
            .iter()
            .any(|a| is_scalar(a) && same_kind(scalar, a) && scalars_overlap(scalar, a)),
    }
}

fn with_object(members: &[(String, Json)], js: &Json, value: &Json, whole: bool) -> bool {
    match value {
        Json::Obj(_) if whole => normalize(js) == normalize(value),
        Json::Obj(vm) => vm.iter().any(|(k, b)| {
            let key = super::json::unescape(k);
            let found = members
                .iter()
                .find(|(mk, _)| super::json::unescape(mk) == key);
            found.is_some_and(|(_, a)| same_kind(a, b) && check(a, b, true))
        }),
        Json::Arr(vs) if !whole => vs
            .iter()
            .any(|a| matches!(a, Json::Obj(_)) && normalize(a) == normalize(js)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::json::parse;

    fn j(s: &str) -> Json {
        parse(s.as_bytes()).unwrap()
    }

    #[test]
    fn numbers_normalize_as_mariadb() {
        for (n, want) in [
            ("1", "1.0E0"),
            ("2e3", "2.0E3"),
            ("-0", "0.0E0"),
            ("0.0", "0.0E0"),
            ("100", "1.0E2"),
            ("1E-2", "1.0E-2"),
            ("1.50", "1.5E0"),
            ("123.4500e2", "1.2345E4"),
            ("0.5", "5.0E-1"),
            ("-1.2", "-1.2E0"),
        ] {
            assert_eq!(normalize_number(n), want, "{n}");
        }
    }

    #[test]
    fn detailed_keeps_mariadbs_quirks() {
        assert_eq!(detailed(&j("[1]"), 4), "[1]");
        assert_eq!(detailed(&j("{\"a\":[5]}"), 4), "{\n    \"a\": \n    [5]\n}");
        assert_eq!(detailed(&j("[{}]"), 4), "[\n    {\n    }\n]");
        assert_eq!(detailed(&j("[[]]"), 4), "[\n    []\n]");
    }
}
