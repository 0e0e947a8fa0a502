//! LIKE pattern matching (`%`, `_` as one UTF-8 character, an escape byte), under a
//! collation: a literal pattern character matches a subject character of equal weight
//! ([`like_match_in`]; `binary` compares bytes and `_` is one byte, as [`like_match`]). No padding: `'a '` is not
//! LIKE `'a'`, as in MariaDB.
//!
//! Invariants: matching never moves past the end of either input; it runs in
//! O(len(s) * len(p)).
//!
//! Called by evaluation of [`super::Expr::Like`].

use onelog_engine::collation::Collation;

/// One element of a compiled pattern.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pat {
    /// `%`
    Any,
    /// `_`
    One,
    /// A character, by its collation key.
    Lit(u64),
}

/// `s LIKE p` under `coll`.
pub(super) fn like_match_in(coll: Collation, s: &[u8], p: &[u8], esc: Option<u8>) -> bool {
    if coll == Collation::Binary {
        return like_match(s, p, esc);
    }
    let subject = coll.like_keys(s);
    let mut pat = Vec::with_capacity(p.len());
    let mut i = 0;
    while i < p.len() {
        let n = char_len(p[i]).min(p.len() - i);
        let c = &p[i..i + n];
        if n == 1 && Some(c[0]) == esc && i + 1 < p.len() {
            let m = char_len(p[i + 1]).min(p.len() - i - 1);
            pat.push(Pat::Lit(key_of(coll, &p[i + 1..i + 1 + m])));
            i += 1 + m;
            continue;
        }
        pat.push(match c {
            b"%" => Pat::Any,
            b"_" => Pat::One,
            _ => Pat::Lit(key_of(coll, c)),
        });
        i += n;
    }
    match_keys(&subject, &pat)
}

/// The collation key of one character.
fn key_of(coll: Collation, c: &[u8]) -> u64 {
    coll.like_keys(c).first().copied().unwrap_or(0)
}

fn char_len(b: u8) -> usize {
    match b {
        0xF0..=0xFF => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}

/// Matches keys against a compiled pattern, backtracking over the last `%`.
fn match_keys(s: &[u64], p: &[Pat]) -> bool {
    let (mut si, mut pi) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        match p.get(pi) {
            Some(Pat::Any) => {
                star = Some((pi, si));
                pi += 1;
                continue;
            }
            Some(Pat::One) => {
                si += 1;
                pi += 1;
                continue;
            }
            Some(Pat::Lit(k)) if *k == s[si] => {
                si += 1;
                pi += 1;
                continue;
            }
            _ => {}
        }
        match star {
            Some((sp, ss)) => {
                star = Some((sp, ss + 1));
                pi = sp + 1;
                si = ss + 1;
            }
            None => return false,
        }
    }
    debug_assert!(si <= s.len() && pi <= p.len());
    p[pi..].iter().all(|x| *x == Pat::Any)
}

/// `s LIKE p` for binary strings: byte by byte, `_` one byte (MariaDB: `_binary'é' LIKE
/// '__'` is 1).
pub(super) fn like_match(s: &[u8], p: &[u8], esc: Option<u8>) -> bool {
    // Iterative matcher with backtracking over the last `%`.
    let (mut si, mut pi) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        if pi < p.len() {
            let c = p[pi];
            if Some(c) == esc && pi + 1 < p.len() {
                if p[pi + 1] == s[si] {
                    si += 1;
                    pi += 2;
                    continue;
                }
            } else if c == b'%' {
                star = Some((pi, si));
                pi += 1;
                continue;
            } else if c == b'_' || c == s[si] {
                si += 1;
                pi += 1;
                continue;
            }
        }
        match star {
            Some((sp, ss)) => {
                let ns = ss + 1;
                star = Some((sp, ns));
                pi = sp + 1;
                si = ns;
            }
            None => return false,
        }
    }
    debug_assert!(si <= s.len() && pi <= p.len());
    while pi < p.len() && p[pi] == b'%' {
        pi += 1;
    }
    pi == p.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_patterns() {
        assert!(like_match(b"abc", b"a%", Some(b'\\')));
        assert!(like_match(b"abc", b"_b_", Some(b'\\')));
        assert!(!like_match(b"abc", b"a_", Some(b'\\')));
        assert!(like_match(b"a%c", b"a\\%c", Some(b'\\')));
        assert!(!like_match(b"abc", b"a\\%c", Some(b'\\')));
        assert!(like_match(b"", b"%", Some(b'\\')));
        assert!(like_match(b"xaybzc", b"%a%b%c", Some(b'\\')));
    }

    /// Checked on MariaDB 10.11.
    #[test]
    fn like_follows_the_collation() {
        let ci = Collation::Utf8mb4GeneralCi;
        let m = |c: Collation, s: &str, p: &str| {
            like_match_in(c, s.as_bytes(), p.as_bytes(), Some(b'\\'))
        };
        assert!(m(ci, "ab", "A%"));
        assert!(m(ci, "á", "a%"));
        assert!(m(ci, "ß", "s"));
        assert!(!m(ci, "a ", "a"));
        assert!(m(ci, "xÁyBz", "%a%b_"));
        assert!(m(ci, "a%", "A\\%"));
        assert!(!m(ci, "ab", "A\\%"));
        let u = Collation::Utf8mb4UnicodeCi;
        assert!(!m(u, "ß", "ss"));
        assert!(!m(u, "ß", "s_"));
        assert!(m(u, "ß", "_"));
        assert!(!m(Collation::Utf8mb4Bin, "ab", "A%"));
        assert!(!m(Collation::Binary, "ab", "A%"));
        assert!(m(Collation::Binary, "ab", "a%"));
    }
}
