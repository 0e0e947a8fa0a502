//! [`Wide`]: the signed integer mantissa of the SQL layer's decimals (`expr::Dec`), wide
//! enough for MariaDB's decimal arithmetic: DECIMAL columns hold up to 65 digits and
//! intermediate results up to 81 (nine words of nine digits in MariaDB's `decimal_t`).
//!
//! Representation: sign and magnitude, the magnitude in base 10^9 limbs, least significant
//! first ([`LIMBS`] limbs = 90 digits). Invariants: every limb is < 10^9; zero is never
//! negative; every operation that could exceed the capacity is checked (`None`), none panics.

use std::cmp::Ordering;

/// Number of base-10^9 limbs: 90 decimal digits.
const LIMBS: usize = 10;
const BASE: u64 = 1_000_000_000;

/// A signed integer of up to 90 decimal digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Wide {
    neg: bool,
    mag: [u32; LIMBS],
}

type Mag = [u32; LIMBS];

fn mag_cmp(a: &Mag, b: &Mag) -> Ordering {
    for i in (0..LIMBS).rev() {
        match a[i].cmp(&b[i]) {
            Ordering::Equal => {}
            o => return o,
        }
    }
    Ordering::Equal
}

fn mag_add(a: &Mag, b: &Mag) -> Option<Mag> {
    let mut out = [0u32; LIMBS];
    let mut carry = 0u64;
    for i in 0..LIMBS {
        let s = u64::from(a[i]) + u64::from(b[i]) + carry;
        out[i] = (s % BASE) as u32;
        carry = s / BASE;
    }
    (carry == 0).then_some(out)
}

/// `a - b` for `a >= b`.
fn mag_sub(a: &Mag, b: &Mag) -> Mag {
    debug_assert!(mag_cmp(a, b) != Ordering::Less);
    let mut out = [0u32; LIMBS];
    let mut borrow = 0i64;
    for i in 0..LIMBS {
        let mut d = i64::from(a[i]) - i64::from(b[i]) - borrow;
        borrow = 0;
        if d < 0 {
            d += BASE as i64;
            borrow = 1;
        }
        out[i] = d as u32;
    }
    out
}

/// `a * m + add` for small `m`, `add`.
fn mag_mul_small(a: &Mag, m: u32, add: u32) -> Option<Mag> {
    let mut out = [0u32; LIMBS];
    let mut carry = u64::from(add);
    for i in 0..LIMBS {
        let p = u64::from(a[i]) * u64::from(m) + carry;
        out[i] = (p % BASE) as u32;
        carry = p / BASE;
    }
    (carry == 0).then_some(out)
}

impl Wide {
    pub const ZERO: Wide = Wide {
        neg: false,
        mag: [0; LIMBS],
    };

    fn make(neg: bool, mag: Mag) -> Wide {
        let zero = mag.iter().all(|&l| l == 0);
        Wide {
            neg: neg && !zero,
            mag,
        }
    }

    pub fn from_i128(i: i128) -> Wide {
        let mut u = i.unsigned_abs();
        let mut mag = [0u32; LIMBS];
        for l in mag.iter_mut() {
            *l = (u % u128::from(BASE)) as u32;
            u /= u128::from(BASE);
        }
        Wide::make(i < 0, mag)
    }

    /// The value as an i128, if it fits.
    pub fn to_i128(self) -> Option<i128> {
        let mut u: i128 = 0;
        for &l in self.mag.iter().rev() {
            u = u.checked_mul(BASE as i128)?.checked_add(i128::from(l))?;
        }
        Some(if self.neg { -u } else { u })
    }

    pub fn is_zero(self) -> bool {
        self.mag.iter().all(|&l| l == 0)
    }

    pub fn is_negative(self) -> bool {
        self.neg
    }

    pub fn neg(self) -> Wide {
        Wide::make(!self.neg, self.mag)
    }

    pub fn abs(self) -> Wide {
        Wide::make(false, self.mag)
    }

    pub fn checked_add(self, o: Wide) -> Option<Wide> {
        if self.neg == o.neg {
            return Some(Wide::make(self.neg, mag_add(&self.mag, &o.mag)?));
        }
        Some(match mag_cmp(&self.mag, &o.mag) {
            Ordering::Less => Wide::make(o.neg, mag_sub(&o.mag, &self.mag)),
            _ => Wide::make(self.neg, mag_sub(&self.mag, &o.mag)),
        })
    }

    pub fn checked_sub(self, o: Wide) -> Option<Wide> {
        self.checked_add(o.neg())
    }

    pub fn checked_mul(self, o: Wide) -> Option<Wide> {
        let mut acc = [0u64; 2 * LIMBS];
        for (i, &a) in self.mag.iter().enumerate() {
            if a == 0 {
                continue;
            }
            let mut carry = 0u64;
            for (j, &b) in o.mag.iter().enumerate() {
                let t = acc[i + j] + u64::from(a) * u64::from(b) + carry;
                acc[i + j] = t % BASE;
                carry = t / BASE;
            }
            let mut k = i + LIMBS;
            while carry > 0 && k < acc.len() {
                let t = acc[k] + carry;
                acc[k] = t % BASE;
                carry = t / BASE;
                k += 1;
            }
        }
        if acc[LIMBS..].iter().any(|&l| l != 0) {
            return None;
        }
        let mut mag = [0u32; LIMBS];
        for (m, a) in mag.iter_mut().zip(acc.iter()) {
            *m = *a as u32;
        }
        Some(Wide::make(self.neg != o.neg, mag))
    }

    /// Truncating division and remainder (the remainder has the dividend's sign); `None` for
    /// a zero divisor.
    pub fn div_rem(self, o: Wide) -> Option<(Wide, Wide)> {
        if o.is_zero() {
            return None;
        }
        let digits = self.digits();
        let mut q = [0u32; LIMBS];
        let mut r = [0u32; LIMBS];
        for d in digits.bytes() {
            r = mag_mul_small(&r, 10, u32::from(d - b'0'))?;
            let mut qd = 0;
            while mag_cmp(&r, &o.mag) != Ordering::Less {
                r = mag_sub(&r, &o.mag);
                qd += 1;
            }
            q = mag_mul_small(&q, 10, qd)?;
        }
        Some((Wide::make(self.neg != o.neg, q), Wide::make(self.neg, r)))
    }

    /// 10^n, if it fits.
    pub fn pow10(n: u32) -> Option<Wide> {
        let n = n as usize;
        if n >= LIMBS * 9 {
            return None;
        }
        let mut mag = [0u32; LIMBS];
        mag[n / 9] = 10u32.pow((n % 9) as u32);
        Some(Wide::make(false, mag))
    }

    /// The decimal digits of the magnitude ("0" for zero).
    pub fn digits(self) -> String {
        let top = self.mag.iter().rposition(|&l| l != 0);
        let Some(top) = top else {
            return "0".to_string();
        };
        let mut s = self.mag[top].to_string();
        for &l in self.mag[..top].iter().rev() {
            s.push_str(&format!("{l:09}"));
        }
        s
    }

    /// Number of decimal digits of the magnitude (1 for zero).
    pub fn num_digits(self) -> usize {
        match self.mag.iter().rposition(|&l| l != 0) {
            None => 1,
            Some(top) => top * 9 + self.mag[top].to_string().len(),
        }
    }

    /// Parses ASCII digits (no sign); `None` for a non-digit or too many digits.
    pub fn parse_digits(s: &str, neg: bool) -> Option<Wide> {
        let mut mag = [0u32; LIMBS];
        for b in s.bytes() {
            if !b.is_ascii_digit() {
                return None;
            }
            mag = mag_mul_small(&mag, 10, u32::from(b - b'0'))?;
        }
        Some(Wide::make(neg, mag))
    }
}

impl PartialOrd for Wide {
    fn partial_cmp(&self, o: &Wide) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl Ord for Wide {
    fn cmp(&self, o: &Wide) -> Ordering {
        match (self.neg, o.neg) {
            (false, true) => Ordering::Greater,
            (true, false) => Ordering::Less,
            (false, false) => mag_cmp(&self.mag, &o.mag),
            (true, true) => mag_cmp(&o.mag, &self.mag),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wide_arithmetic_matches_i128_where_both_fit_and_goes_past_it() {
        let vals: [i128; 7] = [
            0,
            1,
            -1,
            999_999_999,
            -1_000_000_000,
            i64::MAX as i128,
            -123,
        ];
        for &a in &vals {
            for &b in &vals {
                let (x, y) = (Wide::from_i128(a), Wide::from_i128(b));
                assert_eq!(x.checked_add(y).unwrap().to_i128(), Some(a + b));
                assert_eq!(x.checked_sub(y).unwrap().to_i128(), Some(a - b));
                assert_eq!(x.checked_mul(y).unwrap().to_i128(), Some(a * b));
                assert_eq!(x.cmp(&y), a.cmp(&b));
                if b != 0 {
                    let (q, r) = x.div_rem(y).unwrap();
                    assert_eq!((q.to_i128(), r.to_i128()), (Some(a / b), Some(a % b)));
                }
            }
        }
        let nines = Wide::parse_digits(&"9".repeat(65), false).unwrap();
        let sum = nines.checked_add(Wide::from_i128(1)).unwrap();
        assert_eq!(sum.digits(), format!("1{}", "0".repeat(65)));
        assert_eq!(sum.num_digits(), 66);
        assert!(nines.checked_mul(nines).is_none());
        assert_eq!(Wide::pow10(80).unwrap().num_digits(), 81);
        assert!(Wide::from_i128(0).neg() == Wide::ZERO);
    }
}
