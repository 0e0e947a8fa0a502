//! Compact binary encoding primitives shared by the catalog serialization (DDL records' `aux`
//! and checkpoints) and the checkpoint row format (`store.rs`).
//!
//! Owns: [`Writer`] helpers (little-endian fixed ints, LEB128 varints, length-prefixed bytes,
//! strings and [`Value`]s) and the bounds-checked [`Reader`] that decodes them.
//!
//! Invariants: the reader never trusts a length (every read is checked against the remaining
//! bytes, and a length larger than what is left is an error before anything is allocated), never
//! panics on bad input, and reports the byte offset of the problem. The formats are onelog's own
//! and versioned by their callers.

use onelog_binlog::Value;

/// A decoding problem: what was read, where, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatError {
    pub what: &'static str,
    pub offset: usize,
    pub reason: String,
    /// A read ran past the end of the bytes: more of them could make it parse (a reader of a
    /// window of a longer file reads more and tries again; `convert.rs`).
    pub truncated: bool,
}

impl std::fmt::Display for FormatError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at byte {}: {}", self.what, self.offset, self.reason)
    }
}

pub fn put_u8(out: &mut Vec<u8>, v: u8) {
    out.push(v);
}

pub fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

pub fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// LEB128 unsigned varint.
pub fn put_var(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

pub fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_var(out, b.len() as u64);
    out.extend_from_slice(b);
}

pub fn put_str(out: &mut Vec<u8>, s: &str) {
    put_bytes(out, s.as_bytes());
}

// Value tags of the compact value encoding.
const V_NULL: u8 = 0;
const V_INT: u8 = 1;
const V_UINT: u8 = 2;
const V_FLOAT: u8 = 3;
const V_DOUBLE: u8 = 4;
const V_DECIMAL: u8 = 5;
const V_BYTES: u8 = 6;
const V_DATE: u8 = 7;
const V_DATETIME: u8 = 8;
const V_TIMESTAMP: u8 = 9;
const V_TIME: u8 = 10;
const V_YEAR: u8 = 11;

/// Appends one value: a tag byte and its payload (integers zig-zag/LEB128, floats raw bits).
pub fn put_value(out: &mut Vec<u8>, v: &Value) {
    match v {
        Value::Null => out.push(V_NULL),
        Value::Int(i) => {
            out.push(V_INT);
            put_var(out, ((*i << 1) ^ (*i >> 63)) as u64);
        }
        Value::UInt(u) => {
            out.push(V_UINT);
            put_var(out, *u);
        }
        Value::Float(f) => {
            out.push(V_FLOAT);
            put_u32(out, f.to_bits());
        }
        Value::Double(d) => {
            out.push(V_DOUBLE);
            put_u64(out, d.to_bits());
        }
        Value::Decimal(s) => {
            out.push(V_DECIMAL);
            put_str(out, s);
        }
        Value::Bytes(b) => {
            out.push(V_BYTES);
            put_bytes(out, b);
        }
        Value::Date { year, month, day } => {
            out.push(V_DATE);
            out.extend_from_slice(&year.to_le_bytes());
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
            out.push(V_DATETIME);
            out.extend_from_slice(&year.to_le_bytes());
            out.extend_from_slice(&[*month, *day, *hour, *minute, *second]);
            put_u32(out, *micros);
        }
        Value::Timestamp { secs, micros } => {
            out.push(V_TIMESTAMP);
            put_u32(out, *secs);
            put_u32(out, *micros);
        }
        Value::Time {
            negative,
            hours,
            minutes,
            seconds,
            micros,
        } => {
            out.push(V_TIME);
            out.push(*negative as u8);
            out.extend_from_slice(&hours.to_le_bytes());
            out.push(*minutes);
            out.push(*seconds);
            put_u32(out, *micros);
        }
        Value::Year(y) => {
            out.push(V_YEAR);
            out.extend_from_slice(&y.to_le_bytes());
        }
    }
}

/// Bounds-checked cursor over an encoded buffer.
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    what: &'static str,
    /// A read ran past the end of `buf` (its error says so: `FormatError::truncated`).
    short: bool,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8], what: &'static str) -> Self {
        Reader {
            buf,
            pos: 0,
            what,
            short: false,
        }
    }

    pub fn position(&self) -> usize {
        self.pos
    }

    pub fn is_empty(&self) -> bool {
        self.pos >= self.buf.len()
    }

    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    pub fn err(&self, reason: impl Into<String>) -> FormatError {
        FormatError {
            what: self.what,
            offset: self.pos,
            reason: reason.into(),
            truncated: self.short,
        }
    }

    pub fn take(&mut self, n: usize) -> Result<&'a [u8], FormatError> {
        if n > self.remaining() {
            self.short = true;
            return Err(self.err(format!(
                "truncated: need {n} bytes, {} left",
                self.remaining()
            )));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        debug_assert!(self.pos <= self.buf.len());
        Ok(s)
    }

    pub fn u8(&mut self) -> Result<u8, FormatError> {
        Ok(self.take(1)?[0])
    }

    pub fn u16(&mut self) -> Result<u16, FormatError> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    pub fn u32(&mut self) -> Result<u32, FormatError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub fn u64(&mut self) -> Result<u64, FormatError> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }

    pub fn var(&mut self) -> Result<u64, FormatError> {
        let mut v: u64 = 0;
        for i in 0..10 {
            let b = self.u8()?;
            if i == 9 && b > 1 {
                return Err(self.err("varint overflows 64 bits"));
            }
            v |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(self.err("varint longer than 10 bytes"))
    }

    /// A varint count of items each at least `min_item_bytes` long: rejected when the buffer
    /// cannot hold that many, so callers may pre-allocate with it.
    pub fn count(&mut self, min_item_bytes: usize) -> Result<usize, FormatError> {
        let n = self.var()?;
        let max = (self.remaining() / min_item_bytes.max(1)) as u64;
        if n > max {
            self.short = true;
            return Err(self.err(format!(
                "count {n} exceeds what the remaining bytes can hold"
            )));
        }
        debug_assert!(n as usize <= self.remaining() / min_item_bytes.max(1));
        Ok(n as usize)
    }

    pub fn bytes(&mut self) -> Result<&'a [u8], FormatError> {
        let n = self.var()?;
        if n > self.remaining() as u64 {
            self.short = true;
            return Err(self.err(format!("length {n} but {} bytes left", self.remaining())));
        }
        self.take(n as usize)
    }

    pub fn string(&mut self) -> Result<String, FormatError> {
        let b = self.bytes()?;
        String::from_utf8(b.to_vec()).map_err(|_| self.err("string is not UTF-8"))
    }

    pub fn value(&mut self) -> Result<Value, FormatError> {
        let tag = self.u8()?;
        Ok(match tag {
            V_NULL => Value::Null,
            V_INT => {
                let z = self.var()?;
                Value::Int(((z >> 1) as i64) ^ -((z & 1) as i64))
            }
            V_UINT => Value::UInt(self.var()?),
            V_FLOAT => Value::Float(f32::from_bits(self.u32()?)),
            V_DOUBLE => Value::Double(f64::from_bits(self.u64()?)),
            V_DECIMAL => Value::Decimal(self.string()?),
            V_BYTES => Value::bytes(self.bytes()?),
            V_DATE => {
                let year = self.u16()?;
                let month = self.u8()?;
                let day = self.u8()?;
                Value::Date { year, month, day }
            }
            V_DATETIME => {
                let year = self.u16()?;
                let b = self.take(5)?;
                let micros = self.u32()?;
                Value::DateTime {
                    year,
                    month: b[0],
                    day: b[1],
                    hour: b[2],
                    minute: b[3],
                    second: b[4],
                    micros,
                }
            }
            V_TIMESTAMP => {
                let secs = self.u32()?;
                let micros = self.u32()?;
                Value::Timestamp { secs, micros }
            }
            V_TIME => {
                let negative = match self.u8()? {
                    0 => false,
                    1 => true,
                    b => return Err(self.err(format!("bad TIME sign byte {b}"))),
                };
                let hours = self.u16()?;
                let minutes = self.u8()?;
                let seconds = self.u8()?;
                let micros = self.u32()?;
                Value::Time {
                    negative,
                    hours,
                    minutes,
                    seconds,
                    micros,
                }
            }
            V_YEAR => Value::Year(self.u16()?),
            t => return Err(self.err(format!("unknown value tag {t}"))),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_round_trip() {
        let vals = vec![
            Value::Null,
            Value::Int(-5),
            Value::Int(i64::MIN),
            Value::UInt(u64::MAX),
            Value::Float(1.5),
            Value::Double(-2.25),
            Value::Decimal("-12.50".into()),
            Value::bytes(b"abc\0"),
            Value::Date {
                year: 2024,
                month: 2,
                day: 29,
            },
            Value::DateTime {
                year: 1,
                month: 2,
                day: 3,
                hour: 4,
                minute: 5,
                second: 6,
                micros: 7,
            },
            Value::Timestamp {
                secs: 1,
                micros: 999_999,
            },
            Value::Time {
                negative: true,
                hours: 838,
                minutes: 59,
                seconds: 59,
                micros: 0,
            },
            Value::Year(2155),
        ];
        let mut out = Vec::new();
        for v in &vals {
            put_value(&mut out, v);
        }
        let mut r = Reader::new(&out, "test");
        for v in &vals {
            assert_eq!(&r.value().unwrap(), v);
        }
        assert!(r.is_empty());
    }

    #[test]
    fn truncated_and_garbage_input_is_an_error_not_a_panic() {
        let mut out = Vec::new();
        put_value(&mut out, &Value::bytes(vec![1; 100]));
        for n in 0..out.len() {
            let mut r = Reader::new(&out[..n], "test");
            assert!(r.value().is_err());
        }
        let mut r = Reader::new(&[0xff; 12], "test");
        assert!(r.var().is_err());
        let mut r = Reader::new(&[0x80, 0x80, 0x80, 0x80, 0x01], "test");
        assert!(r.count(1).is_err());
    }
}
