//! MariaDB's binary DECIMAL format (`decimal2bin`/`bin2decimal` in `strings/decimal.c`), the
//! form of a NEWDECIMAL field in a row image.
//!
//! A DECIMAL(p, s) value is split into an integer part of `p - s` digits and a fraction of `s`
//! digits. Each part is cut into groups of 9 decimal digits stored as 4-byte big-endian
//! integers; the left-over digits of the integer part form a shorter group at its start and
//! those of the fraction a shorter group at its end, stored in 1-4 bytes (`DIG2BYTES`).
//! A negative number has every byte inverted; then the top bit of the first byte is flipped, so
//! the encoding sorts like the number.
//!
//! Values are exchanged as canonical text: optional `-`, the integer digits without leading
//! zeros (`0` when none), then `.` and exactly `s` digits when `s > 0`. Zero is never negative.
//!
//! Invariants: an encoded DECIMAL(p, s) takes exactly [`bin_size`]`(p, s)` bytes (asserted in
//! [`encode`]); decoding what [`encode`] wrote gives back the canonical text (unit tests below,
//! against bytes MariaDB wrote).

/// Bytes needed for a group of 0..=9 digits.
const DIG2BYTES: [usize; 10] = [0, 1, 1, 2, 2, 3, 3, 4, 4, 4];
const DIG_PER_GROUP: usize = 9;
/// Largest precision and scale MariaDB accepts.
pub const MAX_PRECISION: u8 = 65;
pub const MAX_SCALE: u8 = 38;

fn check_ps(precision: u8, scale: u8) -> Result<(), String> {
    if precision == 0 || precision > MAX_PRECISION || scale > MAX_SCALE || scale > precision {
        return Err(format!("invalid DECIMAL({precision},{scale})"));
    }
    Ok(())
}

/// Size of the binary form of a DECIMAL(precision, scale).
pub fn bin_size(precision: u8, scale: u8) -> usize {
    let intg = usize::from(precision.saturating_sub(scale));
    let frac = usize::from(scale);
    (intg / DIG_PER_GROUP) * 4
        + DIG2BYTES[intg % DIG_PER_GROUP]
        + (frac / DIG_PER_GROUP) * 4
        + DIG2BYTES[frac % DIG_PER_GROUP]
}

/// Group sizes in digits, in storage order.
fn groups(precision: u8, scale: u8) -> impl Iterator<Item = usize> {
    let intg = usize::from(precision - scale);
    let frac = usize::from(scale);
    let lead = intg % DIG_PER_GROUP;
    let trail = frac % DIG_PER_GROUP;
    std::iter::once(lead)
        .filter(|&d| d > 0)
        .chain(std::iter::repeat_n(DIG_PER_GROUP, intg / DIG_PER_GROUP))
        .chain(std::iter::repeat_n(DIG_PER_GROUP, frac / DIG_PER_GROUP))
        .chain(std::iter::once(trail).filter(|&d| d > 0))
}

/// The parts of a decimal's text `[+-]digits[.digits]`: whether it is negative, the integer
/// digits and the fraction digits (either may be empty, not both); None for anything else.
/// Shared by every reader of decimal text (this codec, the engine's column coercion, the SQL
/// layer's DECIMAL arithmetic), so they accept exactly the same strings.
pub fn split_text(text: &str) -> Option<(bool, &str, &str)> {
    let (negative, unsigned) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let (int_txt, frac_txt) = unsigned.split_once('.').unwrap_or((unsigned, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let ok = !(int_txt.is_empty() && frac_txt.is_empty()) && digits(int_txt) && digits(frac_txt);
    ok.then_some((negative, int_txt, frac_txt))
}

/// Appends the binary form of the canonical-text decimal `text` for DECIMAL(precision, scale).
/// Text with more fraction digits than `scale` or more integer digits than `precision - scale`
/// is an error (the caller rounds; this codec never loses digits).
pub fn encode(text: &str, precision: u8, scale: u8, out: &mut Vec<u8>) -> Result<(), String> {
    check_ps(precision, scale)?;
    let bad = || format!("'{text}' is not a decimal");
    let (negative, int_txt, frac_txt) = split_text(text).ok_or_else(bad)?;
    let int_txt = int_txt.trim_start_matches('0');
    let intg = usize::from(precision - scale);
    let frac = usize::from(scale);
    if int_txt.len() > intg {
        return Err(format!(
            "'{text}' has more than {intg} integer digits for DECIMAL({precision},{scale})"
        ));
    }
    if frac_txt.len() > frac {
        return Err(format!(
            "'{text}' has more than {frac} fraction digits for DECIMAL({precision},{scale})"
        ));
    }
    let is_zero = int_txt.is_empty() && frac_txt.bytes().all(|b| b == b'0');
    let negative = negative && !is_zero;
    // Digit `i` of the `intg + frac` digit string, padded with zeros on both sides.
    let int_pad = intg - int_txt.len();
    let digit = |i: usize| -> u32 {
        let b = if i < intg {
            if i < int_pad {
                b'0'
            } else {
                int_txt.as_bytes()[i - int_pad]
            }
        } else {
            frac_txt.as_bytes().get(i - intg).copied().unwrap_or(b'0')
        };
        u32::from(b - b'0')
    };
    let start = out.len();
    let mask: u32 = if negative { u32::MAX } else { 0 };
    let mut i = 0;
    for g in groups(precision, scale) {
        let mut v = 0u32;
        for _ in 0..g {
            v = v * 10 + digit(i);
            i += 1;
        }
        let n = DIG2BYTES[g];
        out.extend_from_slice(&(v ^ mask).to_be_bytes()[4 - n..]);
    }
    if let Some(b) = out.get_mut(start) {
        *b ^= 0x80;
    }
    debug_assert_eq!(
        out.len() - start,
        bin_size(precision, scale),
        "DECIMAL({precision},{scale}) width"
    );
    Ok(())
}

/// Decodes the binary form at the start of `buf`; returns the canonical text and the number of
/// bytes read.
pub fn decode(buf: &[u8], precision: u8, scale: u8) -> Result<(String, usize), String> {
    check_ps(precision, scale)?;
    let size = bin_size(precision, scale);
    let src = buf
        .get(..size)
        .ok_or_else(|| format!("truncated decimal: need {size} bytes"))?;
    let mut b = [0u8; 32];
    let b = &mut b[..size];
    b.copy_from_slice(src);
    let negative = b[0] & 0x80 == 0;
    b[0] ^= 0x80;
    if negative {
        b.iter_mut().for_each(|x| *x = !*x);
    }
    let intg = usize::from(precision - scale);
    let mut digits = String::with_capacity(usize::from(precision) + 2);
    let mut pos = 0;
    let mut ndigits = 0;
    for g in groups(precision, scale) {
        let n = DIG2BYTES[g];
        let v = b[pos..pos + n]
            .iter()
            .fold(0u32, |acc, &x| (acc << 8) | u32::from(x));
        pos += n;
        if u64::from(v) >= 10u64.pow(g as u32) {
            return Err(format!("decimal group value {v} has more than {g} digits"));
        }
        if ndigits == intg {
            digits.push('.');
        }
        let s = v.to_string();
        for _ in s.len()..g {
            digits.push('0');
        }
        digits.push_str(&s);
        ndigits += g;
    }
    let (int_part, frac_part) = digits.split_once('.').unwrap_or((&digits, ""));
    let int_part = int_part.trim_start_matches('0');
    let is_zero = int_part.is_empty() && frac_part.bytes().all(|c| c == b'0');
    let mut text = String::with_capacity(digits.len() + 2);
    if negative && !is_zero {
        text.push('-');
    }
    text.push_str(if int_part.is_empty() { "0" } else { int_part });
    if scale > 0 {
        text.push('.');
        text.push_str(frac_part);
    }
    Ok((text, size))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(t: &str, p: u8, s: u8) -> Vec<u8> {
        let mut out = Vec::new();
        encode(t, p, s, &mut out).unwrap();
        out
    }

    /// The example of `decimal2bin`'s comment in MariaDB's `strings/decimal.c`:
    /// 1234567890.1234 as DECIMAL(14,4) is `81 0D FB 38 D2 04 D2`, and its negation
    /// `7E F2 04 C7 2D FB 2D`.
    #[test]
    fn decimal_matches_mariadb_reference_bytes() {
        assert_eq!(
            enc("1234567890.1234", 14, 4),
            [0x81, 0x0D, 0xFB, 0x38, 0xD2, 0x04, 0xD2]
        );
        assert_eq!(
            enc("-1234567890.1234", 14, 4),
            [0x7E, 0xF2, 0x04, 0xC7, 0x2D, 0xFB, 0x2D]
        );
        assert_eq!(
            decode(&[0x7E, 0xF2, 0x04, 0xC7, 0x2D, 0xFB, 0x2D], 14, 4)
                .unwrap()
                .0,
            "-1234567890.1234"
        );
        assert_eq!(bin_size(14, 4), 7);
    }

    #[test]
    fn decimal_small_values_have_expected_bytes() {
        // DECIMAL(5,2): 3 integer digits in 2 bytes, 2 fraction digits in 1 byte.
        assert_eq!(enc("1.50", 5, 2), [0x80, 0x01, 0x32]);
        assert_eq!(enc("-1.50", 5, 2), [0x7F, 0xFE, 0xCD]);
        assert_eq!(enc("0.00", 5, 2), [0x80, 0x00, 0x00]);
        assert_eq!(enc("-0.00", 5, 2), [0x80, 0x00, 0x00]);
        assert_eq!(enc("7", 1, 0), [0x87]);
        // DECIMAL(10,10): no integer part.
        assert_eq!(
            decode(&enc("-0.0000000001", 10, 10), 10, 10).unwrap().0,
            "-0.0000000001"
        );
    }

    #[test]
    fn decimal_canonicalises_and_rejects_overflow() {
        assert_eq!(decode(&enc("007.5", 5, 2), 5, 2).unwrap().0, "7.50");
        assert!(encode("1000", 5, 2, &mut Vec::new()).is_err());
        assert!(encode("1.234", 5, 2, &mut Vec::new()).is_err());
        assert!(encode("1.2.3", 5, 2, &mut Vec::new()).is_err());
        assert!(encode("", 5, 2, &mut Vec::new()).is_err());
        assert!(encode("1", 66, 0, &mut Vec::new()).is_err());
        // A group holding more than its digits is rejected.
        assert!(decode(&[0x83, 0xE8, 0x00], 5, 2).is_err());
        assert!(decode(&[0x80], 5, 2).is_err());
    }
}
