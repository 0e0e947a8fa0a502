//! Collations: how text values compare, sort, group and are keyed.
//!
//! Owns [`Collation`] (the collations onelog honours, with MariaDB's ids and names), their
//! weight functions ([`Collation::compare`], [`Collation::sort_key`]) and the per-character
//! keys LIKE matches with ([`Collation::like_key`]). The weight tables are generated from a
//! real MariaDB 10.11 (`collation_tables.rs`, by `scripts/gen_collation_tables.py`).
//!
//! Semantics (as MariaDB 10.11):
//! - `utf8mb4_general_ci`: one 16-bit weight per character from MariaDB's simple case/accent
//!   folding of the BMP (`'a' = 'A' = 'á'`, `'ß' = 's'`); characters beyond the BMP weigh
//!   `0xFFFD` (so all of them are equal); PAD SPACE (trailing spaces ignored);
//! - `utf8mb4_unicode_ci`: UCA 4.0.0 primary weights (expansions such as `'ß' = 'ss'`,
//!   ignorable characters weigh nothing, implicit weights for unlisted ideographs); beyond the
//!   BMP `0xFFFD`; PAD SPACE;
//! - `utf8mb4_bin`: code point order, PAD SPACE;
//! - `binary`: bytes, NO PAD.
//!
//! Invariants: `compare(a, b) == Equal` exactly when `sort_key(a) == sort_key(b)`; for
//! strings whose trailing characters weigh at least a space (everything but control
//! characters) `sort_key` order is `compare` order (tested below); the one exception to the
//! first: under utf8mb4_general_ci the noncharacters U+FFFE and U+FFFF share a key unit. Bytes that are not UTF-8
//! weigh as U+FFFD in the utf8mb4 collations. Nothing here panics on any input.
//!
//! Callers: the catalog (column collations), `key.rs` (index keys) and the SQL layer
//! (comparisons, ORDER BY, GROUP BY, LIKE).

use std::cmp::Ordering;

use crate::collation_tables::{
    GENERAL_RUNS, UNICODE_EXPANSIONS, UNICODE_EXPANSION_STARTS, UNICODE_RUNS,
};

/// A collation onelog honours.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Collation {
    Utf8mb4GeneralCi,
    Utf8mb4Bin,
    Utf8mb4UnicodeCi,
    Binary,
}

/// Every collation, for SHOW COLLATION and name lookups.
pub const ALL_COLLATIONS: [Collation; 4] = [
    Collation::Utf8mb4GeneralCi,
    Collation::Utf8mb4Bin,
    Collation::Utf8mb4UnicodeCi,
    Collation::Binary,
];

/// Weight of U+FFFD and of everything beyond the BMP.
const REPLACEMENT: u16 = 0xFFFD;

impl Collation {
    /// The server default (`collation_server`, `collation_connection`).
    pub const DEFAULT: Collation = Collation::Utf8mb4GeneralCi;

    /// MariaDB's collation id.
    pub fn id(self) -> u16 {
        match self {
            Collation::Utf8mb4GeneralCi => 45,
            Collation::Utf8mb4Bin => 46,
            Collation::Utf8mb4UnicodeCi => 224,
            Collation::Binary => 63,
        }
    }

    /// MariaDB's collation name.
    pub fn name(self) -> &'static str {
        match self {
            Collation::Utf8mb4GeneralCi => "utf8mb4_general_ci",
            Collation::Utf8mb4Bin => "utf8mb4_bin",
            Collation::Utf8mb4UnicodeCi => "utf8mb4_unicode_ci",
            Collation::Binary => "binary",
        }
    }

    /// The character set the collation belongs to.
    pub fn charset(self) -> &'static str {
        match self {
            Collation::Binary => "binary",
            _ => "utf8mb4",
        }
    }

    /// True for the default collation of its character set (MariaDB omits it from a column
    /// definition in SHOW CREATE TABLE when the table's charset is the same).
    pub fn is_charset_default(self) -> bool {
        matches!(self, Collation::Utf8mb4GeneralCi | Collation::Binary)
    }

    /// The collation called `name` (ASCII case-insensitive; `utf8mb3`-less: onelog's text is
    /// utf8mb4).
    pub fn by_name(name: &str) -> Option<Collation> {
        ALL_COLLATIONS
            .into_iter()
            .find(|c| c.name().eq_ignore_ascii_case(name))
    }

    /// The collation with MariaDB id `id`.
    pub fn by_id(id: u16) -> Option<Collation> {
        ALL_COLLATIONS.into_iter().find(|c| c.id() == id)
    }

    /// The default collation of character set `charset` (`utf8mb4`, `binary`).
    pub fn default_of_charset(charset: &str) -> Option<Collation> {
        if charset.eq_ignore_ascii_case("utf8mb4") {
            Some(Collation::Utf8mb4GeneralCi)
        } else if charset.eq_ignore_ascii_case("binary") {
            Some(Collation::Binary)
        } else {
            None
        }
    }

    /// True when trailing spaces are ignored (PAD SPACE).
    pub fn pad_space(self) -> bool {
        self != Collation::Binary
    }

    /// Compares two strings under this collation (no allocation).
    pub fn compare(self, a: &[u8], b: &[u8]) -> Ordering {
        if self == Collation::Binary {
            return a.cmp(b);
        }
        let (mut wa, mut wb) = (Weights::new(self, a), Weights::new(self, b));
        let space = self.space_weight();
        loop {
            match (wa.next(), wb.next()) {
                (Some(x), Some(y)) if x != y => return x.cmp(&y),
                (Some(_), Some(_)) => {}
                (None, None) => return Ordering::Equal,
                // PAD SPACE: the shorter string is padded with spaces.
                (Some(x), None) => {
                    return std::iter::once(x)
                        .chain(wa)
                        .map(|w| w.cmp(&space))
                        .find(|o| o.is_ne())
                        .unwrap_or(Ordering::Equal)
                }
                (None, Some(y)) => {
                    return std::iter::once(y)
                        .chain(wb)
                        .map(|w| space.cmp(&w))
                        .find(|o| o.is_ne())
                        .unwrap_or(Ordering::Equal)
                }
            }
        }
    }

    /// Appends the sort key of `s`: a memcomparable, self-delimiting key part whose byte
    /// order is the collation's order. `binary`: the bytes with each `00` written `00 FF`, then
    /// `00 01`; the others: each weight plus one as a fixed-width big-endian unit (2 bytes; 3
    /// for `utf8mb4_bin`'s code points), trailing space weights dropped (PAD SPACE), then a
    /// zero unit, which sorts below every weight.
    pub fn sort_key(self, s: &[u8], out: &mut Vec<u8>) {
        match self {
            Collation::Binary => {
                for &c in s {
                    out.push(c);
                    if c == 0 {
                        out.push(0xff);
                    }
                }
                out.extend_from_slice(&[0, 1]);
            }
            Collation::Utf8mb4Bin => {
                let start = out.len();
                for cp in chars(s) {
                    out.extend_from_slice(&(cp + 1).to_be_bytes()[1..]);
                }
                pop_units(out, start, &[0, 0, 0x21]);
                out.extend_from_slice(&[0, 0, 0]);
            }
            Collation::Utf8mb4GeneralCi => {
                let start = out.len();
                for cp in chars(s) {
                    out.extend_from_slice(&general_weight(cp).saturating_add(1).to_be_bytes());
                }
                pop_units(out, start, &[0, 0x21]);
                out.extend_from_slice(&[0, 0]);
            }
            Collation::Utf8mb4UnicodeCi => {
                let start = out.len();
                for w in Weights::new(self, s) {
                    out.extend_from_slice(&(w as u16).saturating_add(1).to_be_bytes());
                }
                let space = (self.space_weight() as u16).saturating_add(1);
                pop_units(out, start, &space.to_be_bytes());
                out.extend_from_slice(&[0, 0]);
            }
        }
    }

    /// One key per character for LIKE: two characters match a literal pattern character
    /// when their keys are equal (a byte each under `binary`).
    pub fn like_keys(self, s: &[u8]) -> Vec<u64> {
        match self {
            Collation::Binary => s.iter().map(|&b| u64::from(b)).collect(),
            _ => chars(s).map(|cp| self.char_key(cp)).collect(),
        }
    }

    fn char_key(self, cp: u32) -> u64 {
        let pack = |w: &[u16]| {
            w.iter()
                .fold(w.len() as u64, |k, &x| (k << 16) | u64::from(x))
        };
        match self {
            Collation::Utf8mb4Bin | Collation::Binary => u64::from(cp),
            Collation::Utf8mb4GeneralCi => pack(&[general_weight(cp)]),
            Collation::Utf8mb4UnicodeCi => match unicode_weight(cp) {
                Uw::One(a) => pack(&[a]),
                Uw::Two(a, b) => pack(&[a, b]),
                Uw::Many(w) if w.len() <= 3 => pack(w),
                Uw::Many(_) => (1 << 63) | u64::from(cp),
            },
        }
    }

    /// The weight of a space (U+0020).
    fn space_weight(self) -> u32 {
        match self {
            Collation::Utf8mb4UnicodeCi => 0x0209,
            _ => 0x20,
        }
    }

    /// The weights of every character of `s` (code points for `utf8mb4_bin`, bytes for
    /// `binary`).
    #[cfg(test)]
    fn weights(self, s: &[u8], out: &mut Vec<u32>) {
        match self {
            Collation::Binary => out.extend(s.iter().map(|&b| u32::from(b))),
            _ => out.extend(Weights::new(self, s)),
        }
    }
}

/// The weights of a string's characters under a utf8mb4 collation, one by one.
struct Weights<I> {
    coll: Collation,
    chars: I,
    /// The rest of the current character's expansion (utf8mb4_unicode_ci).
    pending: &'static [u16],
    /// A second weight still to give (a UCA implicit weight).
    second: Option<u16>,
}

impl Weights<()> {
    fn new(coll: Collation, s: &[u8]) -> Weights<impl Iterator<Item = u32> + '_> {
        debug_assert!(coll != Collation::Binary, "binary has no character weights");
        Weights {
            coll,
            chars: chars(s),
            pending: &[],
            second: None,
        }
    }
}

impl<I: Iterator<Item = u32>> Iterator for Weights<I> {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        loop {
            if let Some(w) = self.second.take() {
                return Some(u32::from(w));
            }
            if let Some((&w, rest)) = self.pending.split_first() {
                self.pending = rest;
                return Some(u32::from(w));
            }
            let cp = self.chars.next()?;
            match self.coll {
                Collation::Utf8mb4GeneralCi => return Some(u32::from(general_weight(cp))),
                Collation::Utf8mb4UnicodeCi => match unicode_weight(cp) {
                    Uw::One(w) => return Some(u32::from(w)),
                    Uw::Two(a, b) => {
                        self.second = Some(b);
                        return Some(u32::from(a));
                    }
                    Uw::Many(list) => self.pending = list,
                },
                _ => return Some(cp),
            }
        }
    }
}

/// Drops the trailing units equal to `unit` from `out[start..]` (PAD SPACE).
fn pop_units(out: &mut Vec<u8>, start: usize, unit: &[u8]) {
    debug_assert!(
        (out.len() - start).is_multiple_of(unit.len()),
        "unit-aligned key"
    );
    while out.len() >= start + unit.len() && out.ends_with(unit) {
        out.truncate(out.len() - unit.len());
    }
}

/// The code points of `s`; a byte that does not start a valid UTF-8 sequence is U+FFFD.
fn chars(s: &[u8]) -> impl Iterator<Item = u32> + '_ {
    let mut i = 0;
    std::iter::from_fn(move || {
        let b = *s.get(i)?;
        let (len, init) = match b {
            0x00..=0x7F => (1, u32::from(b)),
            0xC2..=0xDF => (2, u32::from(b & 0x1F)),
            0xE0..=0xEF => (3, u32::from(b & 0x0F)),
            0xF0..=0xF4 => (4, u32::from(b & 0x07)),
            _ => {
                i += 1;
                return Some(0xFFFD);
            }
        };
        let tail = s.get(i + 1..i + len);
        match tail {
            Some(t) if t.iter().all(|&c| c & 0xC0 == 0x80) => {
                i += len;
                Some(
                    t.iter()
                        .fold(init, |cp, &c| (cp << 6) | u32::from(c & 0x3F)),
                )
            }
            _ => {
                i += 1;
                Some(0xFFFD)
            }
        }
    })
}

/// The run of `runs` holding code point `cp` (every BMP code point is in one).
fn find_run(runs: &[(u16, u16, u16, u8)], cp: u32) -> Option<(u16, u16, u16, u8)> {
    let i = runs.partition_point(|r| u32::from(r.0) <= cp);
    let r = *runs.get(i.checked_sub(1)?)?;
    (cp < u32::from(r.0) + u32::from(r.1)).then_some(r)
}

/// utf8mb4_general_ci weight of one code point.
fn general_weight(cp: u32) -> u16 {
    if cp < 0x80 {
        // ASCII (the common case, no table search): lower case folds to upper case.
        return if (0x61..=0x7A).contains(&cp) {
            (cp - 0x20) as u16
        } else {
            cp as u16
        };
    }
    general_weight_from_table(cp)
}

/// utf8mb4_general_ci weight of one code point, from the generated table.
fn general_weight_from_table(cp: u32) -> u16 {
    if cp > 0xFFFF {
        return REPLACEMENT;
    }
    match find_run(&GENERAL_RUNS, cp) {
        Some((start, _, w, 1)) => w.wrapping_add((cp - u32::from(start)) as u16),
        Some((_, _, w, _)) => w,
        None => REPLACEMENT,
    }
}

/// The utf8mb4_unicode_ci primary weights of one code point.
enum Uw {
    One(u16),
    /// A UCA implicit weight.
    Two(u16, u16),
    /// An expansion (empty: an ignorable character).
    Many(&'static [u16]),
}

/// utf8mb4_unicode_ci primary weights of one code point.
fn unicode_weight(cp: u32) -> Uw {
    if cp > 0xFFFF {
        return Uw::One(REPLACEMENT);
    }
    let Some((start, _, w, kind)) = find_run(&UNICODE_RUNS, cp) else {
        return Uw::One(REPLACEMENT);
    };
    let off = (cp - u32::from(start)) as u16;
    match kind {
        0 => Uw::One(w),
        1 => Uw::One(w.wrapping_add(off)),
        2 => Uw::Two(w + (cp >> 15) as u16, ((cp & 0x7FFF) | 0x8000) as u16),
        _ => {
            let i = usize::from(w) + usize::from(off);
            let range = UNICODE_EXPANSION_STARTS
                .get(i)
                .zip(UNICODE_EXPANSION_STARTS.get(i + 1))
                .and_then(|(&a, &b)| UNICODE_EXPANSIONS.get(usize::from(a)..usize::from(b)));
            range.map_or(Uw::One(REPLACEMENT), Uw::Many)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Collation::*;

    fn key(c: Collation, s: &str) -> Vec<u8> {
        let mut out = Vec::new();
        c.sort_key(s.as_bytes(), &mut out);
        out
    }

    fn hex(c: Collation, s: &str) -> String {
        let mut w = Vec::new();
        c.weights(s.as_bytes(), &mut w);
        w.iter().map(|x| format!("{x:04X}")).collect()
    }

    /// Weights checked on MariaDB 10.11.19 with `HEX(WEIGHT_STRING(_utf8mb4'…' COLLATE …))`.
    #[test]
    fn weights_match_mariadb() {
        assert_eq!(hex(Utf8mb4GeneralCi, "aÁß"), "004100410053");
        assert_eq!(hex(Utf8mb4UnicodeCi, "aÁß "), "0E330E330FEA0FEA0209");
        assert_eq!(hex(Utf8mb4UnicodeCi, "\u{1}"), "");
        assert_eq!(hex(Utf8mb4UnicodeCi, "\u{2029}"), "0208");
        assert_eq!(hex(Utf8mb4GeneralCi, "\u{1F600}"), "FFFD");
        assert_eq!(hex(Utf8mb4UnicodeCi, "\u{1F600}"), "FFFD");
        // A CJK ideograph: UCA implicit weight.
        assert_eq!(hex(Utf8mb4UnicodeCi, "\u{4E00}"), "FB40CE00");
    }

    #[test]
    fn comparisons_follow_mariadb() {
        let eq = |c: Collation, a: &str, b: &str| c.compare(a.as_bytes(), b.as_bytes());
        assert_eq!(eq(Utf8mb4GeneralCi, "a", "A"), Ordering::Equal);
        assert_eq!(eq(Utf8mb4GeneralCi, "a", "á"), Ordering::Equal);
        assert_eq!(eq(Utf8mb4GeneralCi, "ß", "s"), Ordering::Equal);
        assert_eq!(eq(Utf8mb4GeneralCi, "Bob ", "bob"), Ordering::Equal);
        assert_eq!(eq(Utf8mb4UnicodeCi, "ß", "ss"), Ordering::Equal);
        assert_eq!(eq(Utf8mb4UnicodeCi, "ß", "s"), Ordering::Greater);
        assert_eq!(eq(Utf8mb4Bin, "a", "A"), Ordering::Greater);
        assert_eq!(eq(Utf8mb4Bin, "a ", "a"), Ordering::Equal);
        assert_eq!(eq(Binary, "a ", "a"), Ordering::Greater);
        // PAD SPACE: a tab sorts before the padding space.
        assert_eq!(eq(Utf8mb4GeneralCi, "a\t", "a"), Ordering::Less);
        assert_eq!(eq(Utf8mb4GeneralCi, "Z", "a"), Ordering::Greater);
    }

    #[test]
    fn sort_keys_agree_with_compare() {
        let words = [
            "",
            " ",
            "a",
            "A",
            "á",
            "ab",
            "aB ",
            "b",
            "ß",
            "s",
            "ss",
            "ST",
            "é",
            "z",
            "Ω",
            "ω",
            "\u{1F600}",
            "\u{4E00}",
            "a b",
            "ä",
            "ae",
            "a\u{A0}",
            "\u{3000}",
        ];
        for c in ALL_COLLATIONS {
            for a in words {
                for b in words {
                    let o = c.compare(a.as_bytes(), b.as_bytes());
                    assert_eq!(key(c, a).cmp(&key(c, b)), o, "{c:?} {a:?} {b:?}");
                }
            }
        }
    }

    #[test]
    fn the_ascii_fast_path_agrees_with_the_table() {
        for cp in 0..0x80 {
            assert_eq!(general_weight(cp), general_weight_from_table(cp), "{cp:#x}");
        }
    }

    #[test]
    fn names_and_ids() {
        for c in ALL_COLLATIONS {
            assert_eq!(Collation::by_name(c.name()), Some(c));
            assert_eq!(Collation::by_id(c.id()), Some(c));
        }
        assert_eq!(Collation::by_name("UTF8MB4_BIN"), Some(Utf8mb4Bin));
        assert_eq!(
            Collation::default_of_charset("utf8mb4"),
            Some(Utf8mb4GeneralCi)
        );
        assert_eq!(Collation::by_name("latin1_swedish_ci"), None);
    }

    #[test]
    fn like_keys_fold_case() {
        assert_eq!(
            Utf8mb4GeneralCi.like_keys("aÁ".as_bytes()),
            Utf8mb4GeneralCi.like_keys("AA".as_bytes())
        );
        assert_ne!(Utf8mb4Bin.like_keys(b"a"), Utf8mb4Bin.like_keys(b"A"));
        // Invalid UTF-8 does not panic.
        assert_eq!(Utf8mb4GeneralCi.like_keys(&[0xFF, 0xE2, 0x82]).len(), 3);
    }
}
