//! LIKE pattern matching (`%`, `_` as one UTF-8 character, an escape byte).
//!
//! Invariants: matching never moves past the end of either input; it runs in
//! O(len(s) * len(p)).
//!
//! Called by evaluation of [`super::Expr::Like`].

pub(super) fn like_match(s: &[u8], p: &[u8], esc: Option<u8>) -> bool {
    // Iterative matcher with backtracking over the last `%` (chars are matched as bytes,
    // `_` as one UTF-8 character).
    let (mut si, mut pi) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    let char_len = |b: u8| -> usize {
        match b {
            0xF0..=0xFF => 4,
            0xE0..=0xEF => 3,
            0xC0..=0xDF => 2,
            _ => 1,
        }
    };
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
            } else if c == b'_' {
                si += char_len(s[si]).min(s.len() - si);
                pi += 1;
                continue;
            } else if c == s[si] {
                si += 1;
                pi += 1;
                continue;
            }
        }
        match star {
            Some((sp, ss)) => {
                let ns = ss + char_len(s[ss]).min(s.len() - ss);
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
}
