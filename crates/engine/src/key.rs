//! Memcomparable key encoding: index keys whose byte order is the SQL order of the values.
//!
//! Owns [`encode_value`], [`encode_key`] and [`compare_values`] (the SQL order the encoding
//! implements; also what the property test checks it against), [`prefix_end`] for range
//! bounds over key prefixes, [`KeyBytes`], the stored form of a key (short keys inline), and
//! [`ByteRange`], a range of key bytes (with [`range_is_empty`]).
//!
//! Per value (the canonical values of `SqlType::coerce`):
//!
//! | value | bytes |
//! |---|---|
//! | NULL (nullable key columns only) | `00`; a non-NULL value of a nullable column is prefixed `01` |
//! | `Int` | 8 bytes big-endian with the sign bit flipped |
//! | `UInt` | 8 bytes big-endian |
//! | `Float`/`Double` | IEEE bits big-endian; positive: sign bit set; negative: all bits inverted (`-0.0` is `0.0`) |
//! | `Decimal` | `00` negative / `01` zero / `02` positive, then exponent and digits (below) |
//! | `Bytes` | each `00` byte written `00 FF`, then the terminator `00 01` |
//! | `Date` | year u16 BE, month, day |
//! | `DateTime` | year u16 BE, month, day, hour, minute, second, micros u32 BE |
//! | `Timestamp` | secs u32 BE, micros u32 BE |
//! | `Time` | signed total microseconds, like `Int` |
//! | `Year` | u16 BE |
//!
//! DECIMAL: the value is `0.D × 10^E` with `D` the significant digits (no leading or trailing
//! zeros); positive values write `E` as a sign-flipped big-endian i16, then the ASCII digits of
//! `D`, then `00`; negative values write every one of those bytes inverted and end with `FF`.
//! So `1.5` (DECIMAL(5,1)) and `1.50` (DECIMAL(5,2)) encode alike, as SQL compares them.
//!
//! Invariants:
//! - for two values of one column type, `encode(a) < encode(b)` ⇔ `compare_values(a, b) ==
//!   Less` (property-tested below); NULL sorts first, as in InnoDB;
//! - every value encoding is prefix-free (self-delimiting), so a composite key is the
//!   concatenation of its parts, a secondary index entry is `index key ++ primary key`, and
//!   all entries of one index value share the index key as a byte prefix;
//! - a string of a column with a collation ([`encode_value_as`]) is its collation's sort key
//!   ([`Collation::sort_key`]: `'Bob'` and `'bob '` encode alike under utf8mb4_general_ci);
//!   without one ([`encode_value`], binary strings) it is the bytes as in the table above
//!   (NO PAD: `'a' < 'a '`), the `binary` collation's key.

use std::cmp::Ordering;
use std::ops::Bound;

use onelog_binlog::Value;

use crate::collation::Collation;

/// Appends the key bytes of one value of a column whose strings compare under `coll` (None:
/// as bytes). `nullable` adds the NULL/not-NULL marker byte.
pub fn encode_value_as(out: &mut Vec<u8>, v: &Value, nullable: bool, coll: Option<Collation>) {
    match (v, coll) {
        (Value::Bytes(b), Some(c)) => {
            if nullable {
                out.push(1);
            }
            c.sort_key(b, out);
        }
        _ => encode_value(out, v, nullable),
    }
}

/// Appends the key bytes of one value. `nullable` adds the NULL/not-NULL marker byte.
pub fn encode_value(out: &mut Vec<u8>, v: &Value, nullable: bool) {
    if nullable {
        if *v == Value::Null {
            out.push(0);
            return;
        }
        out.push(1);
    }
    match v {
        Value::Null => out.push(0),
        Value::Int(i) => out.extend_from_slice(&((*i as u64) ^ (1 << 63)).to_be_bytes()),
        Value::UInt(u) => out.extend_from_slice(&u.to_be_bytes()),
        Value::Float(f) => {
            let f = if *f == 0.0 { 0.0f32 } else { *f };
            let b = f.to_bits();
            let b = if b >> 31 == 1 { !b } else { b | (1 << 31) };
            out.extend_from_slice(&b.to_be_bytes());
        }
        Value::Double(d) => {
            let d = if *d == 0.0 { 0.0f64 } else { *d };
            let b = d.to_bits();
            let b = if b >> 63 == 1 { !b } else { b | (1 << 63) };
            out.extend_from_slice(&b.to_be_bytes());
        }
        Value::Decimal(s) => encode_decimal(out, s),
        Value::Bytes(b) => {
            for &c in b {
                out.push(c);
                if c == 0 {
                    out.push(0xff);
                }
            }
            out.extend_from_slice(&[0, 1]);
        }
        Value::Date { year, month, day } => {
            out.extend_from_slice(&year.to_be_bytes());
            out.push(*month);
            out.push(*day);
        }
        Value::DateTime {
            year,
            month,
            day,
            hour,
            minute,
            second,
            micros,
        } => {
            out.extend_from_slice(&year.to_be_bytes());
            out.extend_from_slice(&[*month, *day, *hour, *minute, *second]);
            out.extend_from_slice(&micros.to_be_bytes());
        }
        Value::Timestamp { secs, micros } => {
            out.extend_from_slice(&secs.to_be_bytes());
            out.extend_from_slice(&micros.to_be_bytes());
        }
        Value::Time { .. } => {
            let t = v.time_micros().unwrap_or(0);
            out.extend_from_slice(&((t as u64) ^ (1 << 63)).to_be_bytes());
        }
        Value::Year(y) => out.extend_from_slice(&y.to_be_bytes()),
    }
}

/// Splits decimal text into (negative, exponent, significant digits). Tolerates any text: non
/// digits are ignored (values reaching here are canonical).
fn decimal_parts(s: &str) -> (bool, i16, Vec<u8>) {
    let neg = s.starts_with('-');
    let body = s.trim_start_matches(['-', '+']);
    let (int_part, frac_part) = match body.find('.') {
        Some(i) => (&body[..i], &body[i + 1..]),
        None => (body, ""),
    };
    let int_digits: Vec<u8> = int_part.bytes().filter(u8::is_ascii_digit).collect();
    let frac_digits: Vec<u8> = frac_part.bytes().filter(u8::is_ascii_digit).collect();
    let lead = int_digits.iter().take_while(|&&d| d == b'0').count();
    let int_sig = &int_digits[lead..];
    let mut digits: Vec<u8>;
    let exp: i16;
    if !int_sig.is_empty() {
        exp = int_sig.len().min(i16::MAX as usize) as i16;
        digits = int_sig.to_vec();
        digits.extend_from_slice(&frac_digits);
    } else {
        let z = frac_digits.iter().take_while(|&&d| d == b'0').count();
        exp = -(z.min(i16::MAX as usize) as i16);
        digits = frac_digits[z..].to_vec();
    }
    while digits.last() == Some(&b'0') {
        digits.pop();
    }
    (neg && !digits.is_empty(), exp, digits)
}

fn encode_decimal(out: &mut Vec<u8>, s: &str) {
    let (neg, exp, digits) = decimal_parts(s);
    if digits.is_empty() {
        out.push(1);
        return;
    }
    let e = ((exp as u16) ^ 0x8000).to_be_bytes();
    if neg {
        out.push(0);
        out.extend_from_slice(&[!e[0], !e[1]]);
        out.extend(digits.iter().map(|d| !d));
        out.push(0xff);
    } else {
        out.push(2);
        out.extend_from_slice(&e);
        out.extend_from_slice(&digits);
        out.push(0);
    }
}

/// The key of the columns `cols` of `row` (primary key or index key).
pub fn encode_key(
    out: &mut Vec<u8>,
    row: &[Value],
    cols: &[usize],
    nullable: &dyn Fn(usize) -> bool,
) {
    for &c in cols {
        let v = row.get(c).unwrap_or(&Value::Null);
        encode_value(out, v, nullable(c));
    }
}

/// Longest key [`KeyBytes`] keeps inline.
pub(crate) const INLINE_KEY: usize = 22;

/// Key bytes as the store keeps them: up to 22 bytes inline (an integer primary key, or an
/// integer index key plus such a primary key), longer ones on the heap. Cloning a short key
/// is a copy, not an allocation (a persistent map clones every key of a node it copies), and
/// comparing short keys reads no other memory (a map lookup compares keys of one node).
/// Equality, order and hashing are those of the bytes, so maps keyed by `KeyBytes` are
/// searched with `&[u8]`.
#[derive(Clone)]
pub struct KeyBytes(KeyRepr);

#[derive(Clone)]
enum KeyRepr {
    Inline(u8, [u8; INLINE_KEY]),
    Heap(Box<[u8]>),
}

impl KeyBytes {
    /// Bytes it keeps on the heap (0 when inline).
    pub fn heap_len(&self) -> usize {
        match &self.0 {
            KeyRepr::Inline(..) => 0,
            KeyRepr::Heap(b) => b.len(),
        }
    }

    pub fn as_slice(&self) -> &[u8] {
        match &self.0 {
            KeyRepr::Inline(n, b) => &b[..usize::from(*n)],
            KeyRepr::Heap(b) => b,
        }
    }
}

impl From<&[u8]> for KeyBytes {
    fn from(b: &[u8]) -> Self {
        if b.len() <= INLINE_KEY {
            let mut buf = [0u8; INLINE_KEY];
            buf[..b.len()].copy_from_slice(b);
            KeyBytes(KeyRepr::Inline(b.len() as u8, buf))
        } else {
            KeyBytes(KeyRepr::Heap(b.into()))
        }
    }
}

impl From<Vec<u8>> for KeyBytes {
    fn from(v: Vec<u8>) -> Self {
        if v.len() <= INLINE_KEY {
            KeyBytes::from(v.as_slice())
        } else {
            KeyBytes(KeyRepr::Heap(v.into_boxed_slice()))
        }
    }
}

impl std::ops::Deref for KeyBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl std::borrow::Borrow<[u8]> for KeyBytes {
    fn borrow(&self) -> &[u8] {
        self.as_slice()
    }
}

impl PartialEq for KeyBytes {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for KeyBytes {}

impl PartialOrd for KeyBytes {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for KeyBytes {
    fn cmp(&self, other: &Self) -> Ordering {
        self.as_slice().cmp(other.as_slice())
    }
}

impl std::hash::Hash for KeyBytes {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_slice().hash(state)
    }
}

impl std::fmt::Debug for KeyBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.as_slice().fmt(f)
    }
}

/// The smallest byte string greater than every string that starts with `prefix`, or `None`
/// when there is none (empty or all `FF`).
pub fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut p = prefix.to_vec();
    while let Some(last) = p.pop() {
        if last < 0xff {
            p.push(last + 1);
            return Some(p);
        }
    }
    None
}

/// SQL order of two values of one column type (NULL first). Values of different kinds order
/// by kind (never happens for canonical values of one column).
pub fn compare_values(a: &Value, b: &Value) -> Ordering {
    use Value::*;
    match (a, b) {
        (Null, Null) => Ordering::Equal,
        (Null, _) => Ordering::Less,
        (_, Null) => Ordering::Greater,
        (Int(x), Int(y)) => x.cmp(y),
        (UInt(x), UInt(y)) => x.cmp(y),
        (Float(x), Float(y)) => x.partial_cmp(y).unwrap_or(Ordering::Equal),
        (Double(x), Double(y)) => x.partial_cmp(y).unwrap_or(Ordering::Equal),
        (Decimal(x), Decimal(y)) => compare_decimals(x, y),
        (Bytes(x), Bytes(y)) => x.cmp(y),
        (
            Date {
                year: y1,
                month: m1,
                day: d1,
            },
            Date {
                year: y2,
                month: m2,
                day: d2,
            },
        ) => (y1, m1, d1).cmp(&(y2, m2, d2)),
        (
            DateTime {
                year,
                month,
                day,
                hour,
                minute,
                second,
                micros,
            },
            DateTime {
                year: y2,
                month: m2,
                day: d2,
                hour: h2,
                minute: mi2,
                second: s2,
                micros: u2,
            },
        ) => (year, month, day, hour, minute, second, micros).cmp(&(y2, m2, d2, h2, mi2, s2, u2)),
        (
            Timestamp { secs, micros },
            Timestamp {
                secs: s2,
                micros: m2,
            },
        ) => (secs, micros).cmp(&(s2, m2)),
        (Time { .. }, Time { .. }) => a.time_micros().cmp(&b.time_micros()),
        (Year(x), Year(y)) => x.cmp(y),
        _ => kind(a).cmp(&kind(b)),
    }
}

fn kind(v: &Value) -> u8 {
    use Value::*;
    match v {
        Null => 0,
        Int(_) => 1,
        UInt(_) => 2,
        Float(_) => 3,
        Double(_) => 4,
        Decimal(_) => 5,
        Bytes(_) => 6,
        Date { .. } => 7,
        DateTime { .. } => 8,
        Timestamp { .. } => 9,
        Time { .. } => 10,
        Year(_) => 11,
    }
}

fn compare_decimals(a: &str, b: &str) -> Ordering {
    let (na, ea, da) = decimal_parts(a);
    let (nb, eb, db) = decimal_parts(b);
    let sign = |neg: bool, d: &[u8]| {
        if d.is_empty() {
            1
        } else if neg {
            0
        } else {
            2
        }
    };
    let (sa, sb) = (sign(na, &da), sign(nb, &db));
    if sa != sb {
        return sa.cmp(&sb);
    }
    let mag = ea.cmp(&eb).then_with(|| da.cmp(&db));
    match sa {
        0 => mag.reverse(),
        1 => Ordering::Equal,
        _ => mag,
    }
}

/// Renders key values the way MySQL prints them in a duplicate-key message (`1-abc`).
pub fn display_values(vals: &[&Value]) -> String {
    let mut s = String::new();
    for (i, v) in vals.iter().enumerate() {
        if i > 0 {
            s.push('-');
        }
        display_value(&mut s, v);
    }
    s
}

/// Appends one value as MySQL prints it.
pub fn display_value(s: &mut String, v: &Value) {
    use std::fmt::Write;
    let _ = match v {
        Value::Null => write!(s, "NULL"),
        Value::Int(i) => write!(s, "{i}"),
        Value::UInt(u) => write!(s, "{u}"),
        Value::Float(f) => write!(s, "{f}"),
        Value::Double(d) => write!(s, "{d}"),
        Value::Decimal(d) => write!(s, "{d}"),
        Value::Bytes(b) => write!(s, "{}", String::from_utf8_lossy(b)),
        Value::Date { year, month, day } => write!(s, "{year:04}-{month:02}-{day:02}"),
        Value::DateTime {
            year,
            month,
            day,
            hour,
            minute,
            second,
            micros,
        } => {
            let _ = write!(
                s,
                "{year:04}-{month:02}-{day:02} {hour:02}:{minute:02}:{second:02}"
            );
            if *micros != 0 {
                write!(s, ".{micros:06}")
            } else {
                Ok(())
            }
        }
        Value::Timestamp { secs, micros } => write!(s, "@{secs}.{micros:06}"),
        Value::Time {
            negative,
            hours,
            minutes,
            seconds,
            micros,
        } => {
            let _ = write!(
                s,
                "{}{hours:02}:{minutes:02}:{seconds:02}",
                if *negative { "-" } else { "" }
            );
            if *micros != 0 {
                write!(s, ".{micros:06}")
            } else {
                Ok(())
            }
        }
        Value::Year(y) => write!(s, "{y:04}"),
    };
}

/// Byte bounds of a key range.
pub type ByteRange = (Bound<Vec<u8>>, Bound<Vec<u8>>);

/// Borrowed form of a byte range, for `OrdMap::range` without cloning the bounds.
pub(crate) fn borrowed(r: &ByteRange) -> (Bound<&[u8]>, Bound<&[u8]>) {
    fn b(x: &Bound<Vec<u8>>) -> Bound<&[u8]> {
        match x {
            Bound::Included(v) => Bound::Included(v.as_slice()),
            Bound::Excluded(v) => Bound::Excluded(v.as_slice()),
            Bound::Unbounded => Bound::Unbounded,
        }
    }
    (b(&r.0), b(&r.1))
}

/// True when the byte range is empty or inverted (imbl panics on inverted ranges).
pub fn range_is_empty(r: &ByteRange) -> bool {
    let (from, to) = borrowed(r);
    bounds_empty(from, to)
}

/// True when the key range between `from` and `to` is empty or inverted (fjall and imbl are
/// never given one: they panic on inverted ranges).
pub fn bounds_empty(from: Bound<&[u8]>, to: Bound<&[u8]>) -> bool {
    match (from, to) {
        (Bound::Included(a), Bound::Included(b)) => a > b,
        (Bound::Included(a) | Bound::Excluded(a), Bound::Included(b) | Bound::Excluded(b)) => {
            a >= b
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collated_strings_key_by_weight() {
        let k = |s: &str, c: Option<Collation>| {
            let mut out = Vec::new();
            encode_value_as(&mut out, &Value::bytes(s.as_bytes()), true, c);
            out
        };
        let ci = Some(Collation::Utf8mb4GeneralCi);
        assert_eq!(k("Bob", ci), k("bob ", ci));
        assert_eq!(k("straße", ci), k("STRASE", ci));
        assert!(k("a", ci) < k("B", ci));
        assert!(k("B", None) < k("a", None));
        assert!(k("a", ci) < k("ab", ci));
        let bin = Some(Collation::Utf8mb4Bin);
        assert_ne!(k("Bob", bin), k("bob", bin));
        assert_eq!(k("bob", bin), k("bob  ", bin));
        // Composite keys stay ordered by their first part.
        let mut a = k("a", ci);
        a.extend(k("z", ci));
        let mut b = k("a ", ci);
        b.extend(k("zz", ci));
        assert!(a < b);
        let mut null = Vec::new();
        encode_value_as(&mut null, &Value::Null, true, ci);
        assert_eq!(null, vec![0]);
    }
    use proptest::prelude::*;

    fn enc(v: &Value, nullable: bool) -> Vec<u8> {
        let mut out = Vec::new();
        encode_value(&mut out, v, nullable);
        out
    }

    fn decimal_text() -> impl Strategy<Value = String> {
        (any::<bool>(), 0u64..1_000_000, 0u32..10_000).prop_map(|(neg, i, f)| {
            let s = format!("{}{}.{:04}", if neg { "-" } else { "" }, i, f);
            if neg && i == 0 && f == 0 {
                "0.0000".to_string()
            } else {
                s
            }
        })
    }

    /// Pairs of values of one kind.
    fn same_kind_pair() -> impl Strategy<Value = (Value, Value)> {
        prop_oneof![
            (any::<i64>(), any::<i64>()).prop_map(|(a, b)| (Value::Int(a), Value::Int(b))),
            (any::<u64>(), any::<u64>()).prop_map(|(a, b)| (Value::UInt(a), Value::UInt(b))),
            (-1e30f32..1e30, -1e30f32..1e30).prop_map(|(a, b)| (Value::Float(a), Value::Float(b))),
            (any::<f64>(), any::<f64>())
                .prop_filter("finite", |(a, b)| a.is_finite() && b.is_finite())
                .prop_map(|(a, b)| (Value::Double(a), Value::Double(b))),
            (decimal_text(), decimal_text())
                .prop_map(|(a, b)| (Value::Decimal(a), Value::Decimal(b))),
            (
                prop::collection::vec(0u8..4, 0..6),
                prop::collection::vec(0u8..4, 0..6)
            )
                .prop_map(|(a, b)| (Value::bytes(a), Value::bytes(b))),
            (any::<[u8; 3]>(), any::<[u8; 3]>()).prop_map(|(a, b)| (
                Value::Date {
                    year: 2000 + u16::from(a[0] % 3),
                    month: a[1] % 13,
                    day: a[2] % 32
                },
                Value::Date {
                    year: 2000 + u16::from(b[0] % 3),
                    month: b[1] % 13,
                    day: b[2] % 32
                }
            )),
            (any::<(u8, u8, u32)>(), any::<(u8, u8, u32)>()).prop_map(|(a, b)| (
                Value::DateTime {
                    year: 2020,
                    month: 1,
                    day: a.0 % 3,
                    hour: a.1 % 24,
                    minute: 0,
                    second: 0,
                    micros: a.2 % 1_000_000
                },
                Value::DateTime {
                    year: 2020,
                    month: 1,
                    day: b.0 % 3,
                    hour: b.1 % 24,
                    minute: 0,
                    second: 0,
                    micros: b.2 % 1_000_000
                }
            )),
            (any::<(u32, u32)>(), any::<(u32, u32)>()).prop_map(|(a, b)| (
                Value::Timestamp {
                    secs: a.0 % 5,
                    micros: a.1 % 1_000_000
                },
                Value::Timestamp {
                    secs: b.0 % 5,
                    micros: b.1 % 1_000_000
                }
            )),
            (any::<(bool, u16, u8, u32)>(), any::<(bool, u16, u8, u32)>()).prop_map(|(a, b)| (
                Value::Time {
                    negative: a.0,
                    hours: a.1 % 839,
                    minutes: a.2 % 60,
                    seconds: 0,
                    micros: a.3 % 1_000_000
                },
                Value::Time {
                    negative: b.0,
                    hours: b.1 % 839,
                    minutes: b.2 % 60,
                    seconds: 0,
                    micros: b.3 % 1_000_000
                }
            )),
            (any::<u16>(), any::<u16>()).prop_map(|(a, b)| (Value::Year(a), Value::Year(b))),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        #[test]
        fn key_byte_order_is_sql_value_order((a, b) in same_kind_pair(), nullable in any::<bool>()) {
            let expected = compare_values(&a, &b);
            prop_assert_eq!(enc(&a, nullable).cmp(&enc(&b, nullable)), expected, "{:?} vs {:?}", a, b);
            // NULL sorts before every value of a nullable column.
            prop_assert!(enc(&Value::Null, true) < enc(&a, true));
        }

        #[test]
        fn composite_key_order_is_lexicographic_value_order(
            (a1, b1) in same_kind_pair(), (a2, b2) in same_kind_pair()
        ) {
            // Second column of one fixed kind: use a1's kind for both rows' first column.
            let mut ka = enc(&a1, false);
            ka.extend(enc(&a2, false));
            let mut kb = enc(&b1, false);
            kb.extend(enc(&b2, false));
            let expected = compare_values(&a1, &b1).then(compare_values(&a2, &b2));
            prop_assert_eq!(ka.cmp(&kb), expected);
        }
    }

    #[test]
    fn decimals_of_equal_value_encode_alike_and_order_by_magnitude() {
        let e = |s: &str| enc(&Value::Decimal(s.into()), false);
        assert_eq!(e("1.5"), e("1.50"));
        assert_eq!(e("0.00"), e("-0.0"));
        let ordered = [
            "-100.5", "-100", "-99.99", "-0.01", "0", "0.001", "0.01", "0.1", "1", "1.01", "9.9",
            "10", "100",
        ];
        for w in ordered.windows(2) {
            assert!(e(w[0]) < e(w[1]), "{} < {}", w[0], w[1]);
        }
    }

    #[test]
    fn byte_strings_with_zero_bytes_and_prefixes_order_right() {
        let e = |b: &[u8]| enc(&Value::bytes(b), false);
        let ordered: [&[u8]; 6] = [b"", b"\0", b"\0\0", b"\0\x01", b"a", b"a\0"];
        for w in ordered.windows(2) {
            assert!(e(w[0]) < e(w[1]), "{:?} < {:?}", w[0], w[1]);
        }
        assert!(e(b"ab") < e(b"a\xff"));
    }

    #[test]
    fn prefix_end_is_the_first_key_past_a_prefix() {
        assert_eq!(prefix_end(b"ab"), Some(b"ac".to_vec()));
        assert_eq!(prefix_end(&[1, 0xff]), Some(vec![2]));
        assert_eq!(prefix_end(&[0xff, 0xff]), None);
    }

    proptest! {
        /// Stored keys keep their bytes and order, equal and hash as the bytes, inline or not.
        #[test]
        fn key_bytes_behave_as_their_bytes(
            a in proptest::collection::vec(any::<u8>(), 0..40),
            b in proptest::collection::vec(any::<u8>(), 0..40),
        ) {
            use std::hash::{BuildHasher, RandomState};
            let (ka, kb) = (KeyBytes::from(a.clone()), KeyBytes::from(b.as_slice()));
            prop_assert_eq!(ka.as_slice(), a.as_slice());
            prop_assert_eq!(&*kb, b.as_slice());
            prop_assert_eq!(ka.cmp(&kb), a.cmp(&b));
            prop_assert_eq!(ka == kb, a == b);
            prop_assert_eq!(ka.clone(), KeyBytes::from(a.as_slice()));
            let h = RandomState::new();
            prop_assert_eq!(h.hash_one(&ka), h.hash_one(a.as_slice()));
        }
    }
}
