//! SQL LIKE matching of names (`%`, `_`, `\\` escapes, case-insensitive): the patterns of
//! `SHOW ... LIKE` and of account hosts. Expressions have their own byte-wise LIKE with
//! collation rules (`expr`). Shared ground: imports nothing of the crate.
//!
//! Invariants: matching is linear in the pattern times the text (no exponential backtracking on
//! `%` runs: tested with a pathological pattern); it never panics on any input.

/// MySQL `LIKE` matching (`%`, `_`, backslash escape), ASCII case-insensitive like the
/// SHOW statements' default collation. Linear-time greedy matching with one backtrack point
/// (no exponential blow-up on patterns like `%%%%%a`).
pub(crate) fn like(pattern: &str, s: &str) -> bool {
    #[derive(Clone, Copy, PartialEq)]
    enum P {
        Any,
        One,
        Lit(char),
    }
    let mut pat = Vec::new();
    let mut it = pattern.chars().peekable();
    while let Some(c) = it.next() {
        pat.push(match c {
            '%' => P::Any,
            '_' => P::One,
            '\\' => P::Lit(it.next().unwrap_or('\\')),
            c => P::Lit(c),
        });
    }
    let t: Vec<char> = s.chars().collect();
    let eq = |a: char, b: char| a == b || a.to_lowercase().eq(b.to_lowercase());
    let (mut p, mut i) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while i < t.len() {
        match pat.get(p) {
            Some(P::One) => {
                p += 1;
                i += 1;
            }
            Some(P::Lit(c)) if eq(*c, t[i]) => {
                p += 1;
                i += 1;
            }
            Some(P::Any) => {
                star = Some((p, i));
                p += 1;
            }
            _ => match star {
                Some((sp, si)) => {
                    p = sp + 1;
                    i = si + 1;
                    star = Some((sp, si + 1));
                }
                None => return false,
            },
        }
    }
    while pat.get(p) == Some(&P::Any) {
        p += 1;
    }
    p == pat.len()
}

#[cfg(test)]
mod tests {
    use super::like;

    #[test]
    fn wildcards_escapes_and_case() {
        assert!(like("gtid%", "GTID_binlog_pos"));
        assert!(like("a_c", "abc"));
        assert!(!like("a_c", "abbc"));
        assert!(like("100\\%", "100%"));
        assert!(!like("100\\%", "1000"));
        assert!(like("%", ""));
        assert!(like("%b%", "abc"));
        assert!(!like("%b%d", "abcdx"));
        assert!(like("a%c%e", "abcde"));
        let long = "a".repeat(200);
        assert!(!like(&format!("{}b", "%a".repeat(30)), &long));
    }
}
