//! Numbers: the fixed-point [`Dec`] (MariaDB's decimal_t, up to [`DEC_MAX_DIGITS`] digits),
//! the numeric view of any value ([`Num`]: string prefixes, dates as numbers), integer and
//! double views, truth, rounding and the 1690 out-of-range error.
//!
//! Invariants: what the decimal arithmetic returns ([`Dec::parse`], `rescale`, `add`, `mul`,
//! `div`) has at most [`DEC_MAX_DIGITS`] digits (all go through `Dec::checked`); products and
//! quotients keep at most 38 fraction digits, as MariaDB; a string that is not entirely a
//! number raises 1292 when viewed as a number ([`to_f64_quiet`] and friends do not).
//!
//! Called by evaluation, coercion, result typing and the executors.

use std::cmp::Ordering;

use onelog_binlog::Value;
use onelog_protocol::errors;

use super::temporal::timestamp_to_datetime;
use super::warnings::warn;
use crate::error::SqlError;
use crate::wide::Wide;

/// The most digits a decimal value holds (MariaDB's DECIMAL_MAX_POSSIBLE_PRECISION: nine
/// words of nine digits); a result with more is an overflow (1690 "DECIMAL value is out of
/// range").
pub(crate) const DEC_MAX_DIGITS: usize = 81;

thread_local! {
    /// The running statement's `div_precision_increment` (the session sets it before each
    /// statement: [`set_div_precision_increment`]).
    static DIV_PRECISION_INCREMENT: std::cell::Cell<u32> = const { std::cell::Cell::new(4) };
}

/// Sets the fraction digits `/` and AVG add for the statements this thread runs next
/// (the session's `div_precision_increment`, 0 to 38).
pub(crate) fn set_div_precision_increment(n: u32) {
    DIV_PRECISION_INCREMENT.with(|c| c.set(n.min(38)));
}

/// The fraction digits `/` and AVG add (`div_precision_increment`, MariaDB's default 4).
pub(crate) fn div_precision_increment() -> u32 {
    DIV_PRECISION_INCREMENT.with(|c| c.get())
}

/// The (precision, scale) of a quotient (`/`, AVG) of a DECIMAL(`p`, `s`) value, or of an
/// integer of `p` digits with `s` 0: widened by the session's `div_precision_increment`
/// (at most 38) as MariaDB widens it, within DECIMAL's 65 digits and 38 decimals.
pub(crate) fn quotient_digits(p: u8, s: u8) -> (u8, u8) {
    let incr = div_precision_increment() as u8;
    (
        p.saturating_add(incr).min(65),
        s.saturating_add(incr).min(38),
    )
}

/// A fixed-point decimal: `m / 10^s`. Invariant: `m` has at most [`DEC_MAX_DIGITS`] digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Dec {
    pub m: Wide,
    pub s: u32,
}

/// 10^n as a mantissa (None past the capacity).
pub(crate) fn pow10(n: u32) -> Option<Wide> {
    Wide::pow10(n)
}

impl Dec {
    pub fn from_int(i: i128) -> Dec {
        Dec {
            m: Wide::from_i128(i),
            s: 0,
        }
    }

    /// `m` checked against the digit limit.
    fn checked(m: Wide, s: u32) -> Option<Dec> {
        (m.num_digits() <= DEC_MAX_DIGITS).then_some(Dec { m, s })
    }

    pub fn parse(text: &str) -> Option<Dec> {
        let (neg, ip, fp) = onelog_binlog::decimal::split_text(text.trim())?;
        let ip = ip.trim_start_matches('0');
        if ip.len() + fp.len() > DEC_MAX_DIGITS {
            return None;
        }
        let m = Wide::parse_digits(&format!("{ip}{fp}"), neg)?;
        Dec::checked(m, fp.len() as u32)
    }

    pub fn rescale(self, s: u32) -> Option<Dec> {
        if s >= self.s {
            let f = pow10(s - self.s)?;
            Dec::checked(self.m.checked_mul(f)?, s)
        } else {
            // Round half away from zero.
            let Some(f) = pow10(self.s - s) else {
                return Some(Dec { m: Wide::ZERO, s });
            };
            let (q, r) = self.m.div_rem(f)?;
            let twice = r.abs().checked_add(r.abs())?;
            let q = if twice >= f {
                let one = Wide::from_i128(if self.m.is_negative() { -1 } else { 1 });
                q.checked_add(one)?
            } else {
                q
            };
            Dec::checked(q, s)
        }
    }

    pub fn add(self, o: Dec) -> Option<Dec> {
        let s = self.s.max(o.s);
        Dec::checked(self.rescale(s)?.m.checked_add(o.rescale(s)?.m)?, s)
    }

    pub fn neg(self) -> Dec {
        Dec {
            m: self.m.neg(),
            s: self.s,
        }
    }

    pub fn mul(self, o: Dec) -> Option<Dec> {
        let d = Dec::checked(self.m.checked_mul(o.m)?, self.s + o.s)?;
        // MariaDB keeps at most 38 fraction digits (decimal_mul then rounds).
        let r = if d.s > 38 { d.rescale(38) } else { Some(d) };
        debug_assert!(r.is_none_or(Dec::within_limits));
        r
    }

    /// At most [`DEC_MAX_DIGITS`] digits and 38 fraction digits (the arithmetic's
    /// post-condition).
    fn within_limits(self) -> bool {
        self.m.num_digits() <= DEC_MAX_DIGITS && self.s <= 38
    }

    /// Division with `self.s + div_precision_increment` fraction digits (at most 38); None
    /// on / 0 and on overflow. As MariaDB's decimal_div, the quotient is cut after
    /// `self.s + o.s + increment` digits rounded up to whole 9-digit words, then rounded to
    /// its scale: when those are the same digits it is cut, not rounded (`2/3` is 0 with an
    /// increment of 0).
    pub fn div(self, o: Dec) -> Option<Dec> {
        if o.m.is_zero() {
            return None;
        }
        let incr = div_precision_increment();
        let s = (self.s + incr).min(38);
        let cut = (self.s + o.s + incr).div_ceil(9) * 9 == s;
        let digits = if cut { s } else { s + 1 };
        // self.m / 10^self.s / (o.m / 10^o.s) = self.m * 10^(o.s + d - self.s) / o.m / 10^d
        let num = self
            .m
            .checked_mul(pow10((o.s + digits).checked_sub(self.s)?)?)?;
        let (q, _) = num.div_rem(o.m)?;
        let r = Dec { m: q, s: digits }.rescale(s);
        debug_assert!(r.is_none_or(Dec::within_limits));
        r
    }

    pub fn cmp(self, o: Dec) -> Ordering {
        let s = self.s.max(o.s);
        match (self.rescale(s), o.rescale(s)) {
            (Some(a), Some(b)) => a.m.cmp(&b.m),
            _ => self.to_f64().total_cmp(&o.to_f64()),
        }
    }

    pub fn to_f64(self) -> f64 {
        self.to_string().parse().unwrap_or(0.0)
    }

    /// Rounded to an integer (half away from zero); None when it does not fit an i128.
    pub fn round_int(self) -> Option<i128> {
        self.rescale(0).and_then(|d| d.m.to_i128())
    }

    /// Truncated (`floor`: towards minus infinity) to an integer mantissa at scale 0.
    pub fn floor_or_trunc(self, floor: bool) -> Option<Wide> {
        let (q, r) = self.m.div_rem(pow10(self.s)?)?;
        if floor && r.is_negative() {
            q.checked_sub(Wide::from_i128(1))
        } else {
            Some(q)
        }
    }
}

impl std::fmt::Display for Dec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let neg = self.m.is_negative();
        let digits = self.m.digits();
        let s = self.s as usize;
        let (ip, fp) = if digits.len() > s {
            let (a, b) = digits.split_at(digits.len() - s);
            (a.to_string(), b.to_string())
        } else {
            ("0".to_string(), format!("{:0>width$}", digits, width = s))
        };
        if neg {
            write!(f, "-")?;
        }
        write!(f, "{ip}")?;
        if s > 0 {
            write!(f, ".{fp}")?;
        }
        Ok(())
    }
}

/// Numeric view of a value.
#[derive(Debug, Clone, Copy)]
pub(super) enum Num {
    Int(i128),
    Dec(Dec),
    Dbl(f64),
}

/// Leading numeric prefix of a string as MySQL converts it (`'12abc'` -> 12).
pub(crate) fn parse_num_prefix(b: &[u8]) -> Num2 {
    let s = String::from_utf8_lossy(b);
    let t = s.trim_start();
    let bytes = t.as_bytes();
    let mut i = 0;
    if i < bytes.len() && (bytes[i] == b'-' || bytes[i] == b'+') {
        i += 1;
    }
    let ds = i;
    while i < bytes.len() && bytes[i].is_ascii_digit() {
        i += 1;
    }
    let mut is_int = true;
    if i < bytes.len() && bytes[i] == b'.' {
        is_int = false;
        i += 1;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
    }
    if i > ds && i < bytes.len() && (bytes[i] == b'e' || bytes[i] == b'E') {
        let mut j = i + 1;
        if j < bytes.len() && (bytes[j] == b'-' || bytes[j] == b'+') {
            j += 1;
        }
        if j < bytes.len() && bytes[j].is_ascii_digit() {
            while j < bytes.len() && bytes[j].is_ascii_digit() {
                j += 1;
            }
            is_int = false;
            i = j;
        }
    }
    let p = &t[..i];
    if is_int {
        if let Ok(v) = p.parse::<i128>() {
            return Num2::Int(v);
        }
    }
    Num2::Dbl(p.parse::<f64>().unwrap_or(0.0))
}

/// Result of [`parse_num_prefix`].
#[derive(Debug, Clone, Copy)]
pub(crate) enum Num2 {
    Int(i128),
    Dbl(f64),
}

/// Numeric view of a value; a string that is not entirely a number raises MariaDB's 1292
/// "Truncated incorrect DOUBLE value" (as in arithmetic and comparisons with numbers).
pub(super) fn num_of(v: &Value) -> Option<Num> {
    if let Value::Bytes(b) = v {
        let (_, bad) = number_prefix(b, false);
        let trailing_space = b.last().is_some_and(u8::is_ascii_whitespace);
        if bad || trailing_space {
            warn(
                "Warning",
                1292,
                format!(
                    "Truncated incorrect DOUBLE value: '{}'",
                    String::from_utf8_lossy(b)
                ),
            );
        }
    }
    num_of_quiet(v)
}

/// [`num_of`] without the warning (conversions that report their own condition).
pub(super) fn num_of_quiet(v: &Value) -> Option<Num> {
    Some(match v {
        Value::Null => return None,
        Value::Int(i) => Num::Int(i128::from(*i)),
        Value::UInt(u) => Num::Int(i128::from(*u)),
        Value::Float(f) => Num::Dbl(f64::from(*f)),
        Value::Double(d) => Num::Dbl(*d),
        Value::Decimal(s) => match Dec::parse(s) {
            Some(d) => Num::Dec(d),
            None => Num::Dbl(s.parse().unwrap_or(0.0)),
        },
        Value::Bytes(b) => match parse_num_prefix(b) {
            Num2::Int(i) => Num::Dbl(i as f64),
            Num2::Dbl(d) => Num::Dbl(d),
        },
        Value::Year(y) => Num::Int(i128::from(*y)),
        Value::Date { year, month, day } => {
            Num::Int(i128::from(*year) * 10000 + i128::from(*month) * 100 + i128::from(*day))
        }
        Value::DateTime {
            year,
            month,
            day,
            hour,
            minute,
            second,
            ..
        } => Num::Int(
            ((i128::from(*year) * 100 + i128::from(*month)) * 100 + i128::from(*day)) * 1_000_000
                + i128::from(*hour) * 10000
                + i128::from(*minute) * 100
                + i128::from(*second),
        ),
        Value::Time {
            negative,
            hours,
            minutes,
            seconds,
            ..
        } => {
            let n = i128::from(*hours) * 10000 + i128::from(*minutes) * 100 + i128::from(*seconds);
            Num::Int(if *negative { -n } else { n })
        }
        Value::Timestamp { .. } => {
            let dt = timestamp_to_datetime(v);
            return num_of_quiet(&dt);
        }
    })
}

pub(super) fn num_f64(n: Num) -> f64 {
    match n {
        Num::Int(i) => i as f64,
        Num::Dec(d) => d.to_f64(),
        Num::Dbl(d) => d,
    }
}

pub(super) fn num_dec(n: Num) -> Option<Dec> {
    match n {
        Num::Int(i) => Some(Dec::from_int(i)),
        Num::Dec(d) => Some(d),
        Num::Dbl(_) => None,
    }
}

/// f64 view (NULL -> None).
pub(crate) fn to_f64(v: &Value) -> Option<f64> {
    num_of(v).map(num_f64)
}

/// A number stored into a `FLOAT(M,D)` / `DOUBLE(M,D)` column, as MariaDB's
/// `Field_real::truncate_double`: rounded to `d` decimals half to even (`rint`), then
/// Ok(it) when within `±(10^(m-d) - 10^-d)`, else Err(that bound, with the number's sign):
/// the value a non-strict store clips to, with its 1264.
pub(crate) fn float_digits(x: f64, (m, d): (u8, u8)) -> Result<f64, f64> {
    let scale = 10f64.powi(i32::from(d));
    let rounded = (x * scale).round_ties_even() / scale;
    let max = (10f64.powi(i32::from(m)) - 1.0) / scale;
    match rounded.abs() <= max {
        true => Ok(rounded),
        false => Err(max.copysign(x)),
    }
}

/// [`to_f64`] without the 1292 warning for strings.
pub(crate) fn to_f64_quiet(v: &Value) -> Option<f64> {
    num_of_quiet(v).map(num_f64)
}

/// Integer view, rounding (NULL -> None).
pub(crate) fn to_i128(v: &Value) -> Option<i128> {
    num_of(v).map(num_i128)
}

pub(super) fn num_i128(n: Num) -> i128 {
    match n {
        Num::Int(i) => i,
        Num::Dec(d) => d.round_int().unwrap_or(if d.m.is_negative() {
            i128::MIN
        } else {
            i128::MAX
        }),
        Num::Dbl(d) => d.round() as i128,
    }
}

/// Truth of a value (NULL -> None).
pub(crate) fn truth(v: &Value) -> Option<bool> {
    match v {
        Value::Null => None,
        Value::Int(i) => Some(*i != 0),
        Value::UInt(u) => Some(*u != 0),
        other => num_of(other).map(|n| match n {
            Num::Int(i) => i != 0,
            Num::Dec(d) => !d.m.is_zero(),
            Num::Dbl(d) => d != 0.0,
        }),
    }
}

pub(super) fn int_value(i: i128) -> Result<Value, SqlError> {
    if let Ok(v) = i64::try_from(i) {
        Ok(Value::Int(v))
    } else if let Ok(u) = u64::try_from(i) {
        Ok(Value::UInt(u))
    } else {
        Err(SqlError::of(
            errors::ER_DATA_OUT_OF_RANGE,
            "BIGINT value is out of range",
        ))
    }
}

/// An integer mantissa as a SQL value: BIGINT (signed or unsigned) when it fits, else a
/// DECIMAL (as MariaDB answers FLOOR/ROUND past the BIGINT range).
pub(super) fn wide_int_value(w: Wide) -> Value {
    match w.to_i128().map(int_value) {
        Some(Ok(v)) => v,
        _ => Value::Decimal(Dec { m: w, s: 0 }.to_string()),
    }
}

/// ROUND (`round`) or TRUNCATE of a decimal to `places` fraction digits (negative: tens,
/// hundreds, ...); None on overflow.
pub(super) fn round_dec(d: Dec, places: i64, round: bool) -> Option<Dec> {
    if places >= 0 {
        let s = places as u32;
        if round {
            return d.rescale(s);
        }
        let cut = d.s.saturating_sub(s);
        let (q, _) = d.m.div_rem(pow10(cut)?)?;
        return Some(Dec { m: q, s: d.s - cut });
    }
    let k = (-places) as u32;
    let Some(f10) = pow10(k) else {
        return Some(Dec::from_int(0));
    };
    let shifted = Dec { m: d.m, s: d.s + k };
    let q = if round {
        shifted.rescale(0)?.m
    } else {
        shifted.floor_or_trunc(false)?
    };
    Some(Dec {
        m: q.checked_mul(f10)?,
        s: 0,
    })
}

/// 1690 "<type> value is out of range in '<expr>'" (MariaDB names the expression).
pub(crate) fn out_of_range(ty: &str, expr: &str) -> SqlError {
    SqlError::of(
        errors::ER_DATA_OUT_OF_RANGE,
        format!("{ty} value is out of range in '{expr}'"),
    )
}

/// The digits of a string's leading number (sign, digits, fraction, exponent), and whether
/// anything but spaces follows it.
pub(crate) fn number_prefix(b: &[u8], int_only: bool) -> (String, bool) {
    let t = String::from_utf8_lossy(b);
    let t = t.trim_start_matches([' ', '\t', '\n', '\r']);
    let bytes = t.as_bytes();
    let mut i = 0;
    if matches!(bytes.first(), Some(b'-' | b'+')) {
        i = 1;
    }
    let digits = |mut j: usize| {
        while j < bytes.len() && bytes[j].is_ascii_digit() {
            j += 1;
        }
        j
    };
    let int_end = digits(i);
    let mut end = int_end;
    if !int_only && bytes.get(end) == Some(&b'.') {
        end = digits(end + 1);
    }
    if !int_only && end > i && matches!(bytes.get(end), Some(b'e' | b'E')) {
        let mut j = end + 1;
        if matches!(bytes.get(j), Some(b'-' | b'+')) {
            j += 1;
        }
        if bytes.get(j).is_some_and(u8::is_ascii_digit) {
            end = digits(j);
        }
    }
    let rest = &t[end..];
    (t[..end].to_string(), end == i || !rest.trim().is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_arithmetic_rounds_like_mysql() {
        let a = Dec::parse("1.25").unwrap();
        assert_eq!(a.rescale(1).unwrap().to_string(), "1.3");
        assert_eq!(a.neg().rescale(1).unwrap().to_string(), "-1.3");
        assert_eq!(
            Dec::from_int(1).div(Dec::from_int(3)).unwrap().to_string(),
            "0.3333"
        );
        assert_eq!(Dec::parse("0.05").unwrap().to_string(), "0.05");
        assert_eq!(
            a.add(Dec::parse("-3").unwrap()).unwrap().to_string(),
            "-1.75"
        );
    }
}
