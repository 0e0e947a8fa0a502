//! Byte-level encoding of protocol fields inside one packet payload.
//!
//! Owns the primitive field forms of the MySQL client/server protocol: little-endian fixed
//! integers, length-encoded integers (`0xFB` = NULL, `0xFC` + 2, `0xFD` + 3, `0xFE` + 8 bytes),
//! length-encoded strings, NUL-terminated strings and rest-of-packet strings.
//!
//! Invariants: [`Reader`] never reads past its slice and never panics; every method returns a
//! [`Malformed`] carrying the field name and the offset where the payload ran out or was wrong.
//! A length read from the wire is checked against the bytes remaining before any slice is taken,
//! so a lying length costs nothing. The `put_*` writers append to a caller-owned `Vec<u8>` (the
//! connection's output buffer), so encoding allocates nothing per field.

use std::fmt;

/// A payload did not have the shape a field needed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed {
    /// Which field was being read.
    pub what: &'static str,
    /// Offset in the payload where reading the field failed.
    pub offset: usize,
}

impl fmt::Display for Malformed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "malformed packet: {} at offset {}",
            self.what, self.offset
        )
    }
}

impl std::error::Error for Malformed {}

/// A cursor over one packet payload.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    pub fn position(&self) -> usize {
        self.pos
    }

    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    fn err(&self, what: &'static str) -> Malformed {
        Malformed {
            what,
            offset: self.pos,
        }
    }

    /// The next `n` bytes.
    pub fn bytes(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], Malformed> {
        if n > self.remaining() {
            return Err(self.err(what));
        }
        let out = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        debug_assert!(
            self.pos <= self.buf.len(),
            "Reader past the end of its payload"
        );
        Ok(out)
    }

    pub fn u8(&mut self, what: &'static str) -> Result<u8, Malformed> {
        Ok(self.bytes(1, what)?[0])
    }

    pub fn u16(&mut self, what: &'static str) -> Result<u16, Malformed> {
        let b = self.bytes(2, what)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    pub fn u24(&mut self, what: &'static str) -> Result<u32, Malformed> {
        let b = self.bytes(3, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], 0]))
    }

    pub fn u32(&mut self, what: &'static str) -> Result<u32, Malformed> {
        let b = self.bytes(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub fn u64(&mut self, what: &'static str) -> Result<u64, Malformed> {
        let b = self.bytes(8, what)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }

    /// A length-encoded integer; `None` for the NULL marker `0xFB`.
    pub fn lenenc_int(&mut self, what: &'static str) -> Result<Option<u64>, Malformed> {
        let start = self.pos;
        let first = self.u8(what)?;
        let v = match first {
            0xFB => return Ok(None),
            0xFC => u64::from(self.u16(what)?),
            0xFD => u64::from(self.u24(what)?),
            0xFE => self.u64(what)?,
            0xFF => {
                self.pos = start;
                return Err(self.err(what));
            }
            b => u64::from(b),
        };
        Ok(Some(v))
    }

    /// A length-encoded string (NULL is an error here).
    pub fn lenenc_bytes(&mut self, what: &'static str) -> Result<&'a [u8], Malformed> {
        let len = self.lenenc_int(what)?.ok_or_else(|| self.err(what))?;
        let len = usize::try_from(len).map_err(|_| self.err(what))?;
        self.bytes(len, what)
    }

    /// A NUL-terminated string (without the NUL).
    pub fn nul_bytes(&mut self, what: &'static str) -> Result<&'a [u8], Malformed> {
        let rest = &self.buf[self.pos..];
        match rest.iter().position(|&b| b == 0) {
            Some(i) => {
                self.pos += i + 1;
                Ok(&rest[..i])
            }
            None => Err(self.err(what)),
        }
    }

    /// A NUL-terminated string, or the rest of the packet when no NUL follows (clients differ
    /// in whether they terminate the last string of a packet).
    pub fn nul_or_rest(&mut self) -> &'a [u8] {
        let rest = &self.buf[self.pos..];
        match rest.iter().position(|&b| b == 0) {
            Some(i) => {
                self.pos += i + 1;
                &rest[..i]
            }
            None => {
                self.pos = self.buf.len();
                rest
            }
        }
    }

    /// Everything left in the payload.
    pub fn rest(&mut self) -> &'a [u8] {
        let rest = &self.buf[self.pos..];
        self.pos = self.buf.len();
        rest
    }
}

pub fn put_u16(out: &mut Vec<u8>, v: u16) {
    out.extend_from_slice(&v.to_le_bytes());
}

pub fn put_u24(out: &mut Vec<u8>, v: u32) {
    debug_assert!(v <= 0xFF_FFFF, "{v} does not fit 3 bytes");
    out.extend_from_slice(&v.to_le_bytes()[..3]);
}

pub fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

pub fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// Appends `v` as a length-encoded integer.
pub fn put_lenenc_int(out: &mut Vec<u8>, v: u64) {
    if v < 0xFB {
        out.push(v as u8);
    } else if v <= 0xFFFF {
        out.push(0xFC);
        put_u16(out, v as u16);
    } else if v <= 0xFF_FFFF {
        out.push(0xFD);
        put_u24(out, v as u32);
    } else {
        out.push(0xFE);
        put_u64(out, v);
    }
}

/// Appends a length-encoded string.
pub fn put_lenenc_bytes(out: &mut Vec<u8>, b: &[u8]) {
    // Encoding appends to the caller's buffer: at most one growth, no temporary.
    put_lenenc_int(out, b.len() as u64);
    out.extend_from_slice(b);
}

/// Appends a NUL-terminated string.
pub fn put_nul_bytes(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(b);
    out.push(0);
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn lenenc_int_round_trips(v in any::<u64>()) {
            let mut out = Vec::new();
            put_lenenc_int(&mut out, v);
            let mut r = Reader::new(&out);
            prop_assert_eq!(r.lenenc_int("v").unwrap(), Some(v));
            prop_assert!(r.is_empty());
        }

        #[test]
        fn lenenc_bytes_round_trip(b in proptest::collection::vec(any::<u8>(), 0..400)) {
            let mut out = Vec::new();
            put_lenenc_bytes(&mut out, &b);
            let mut r = Reader::new(&out);
            prop_assert_eq!(r.lenenc_bytes("b").unwrap(), &b[..]);
            prop_assert!(r.is_empty());
        }

        #[test]
        fn reader_never_panics_on_arbitrary_bytes(b in proptest::collection::vec(any::<u8>(), 0..64)) {
            let mut r = Reader::new(&b);
            let _ = r.lenenc_bytes("x");
            let _ = r.nul_bytes("y");
            let _ = r.u64("z");
            let _ = r.lenenc_int("w");
            let _ = r.rest();
        }
    }

    #[test]
    fn lying_lenenc_length_is_rejected_without_reading() {
        // 0xFE + 8-byte length of u64::MAX, then 3 bytes.
        let mut b = vec![0xFE];
        b.extend_from_slice(&u64::MAX.to_le_bytes());
        b.extend_from_slice(b"abc");
        let mut r = Reader::new(&b);
        assert_eq!(r.lenenc_bytes("s").unwrap_err().what, "s");
    }

    #[test]
    fn lenenc_null_marker_reads_as_none() {
        let mut r = Reader::new(&[0xFB]);
        assert_eq!(r.lenenc_int("n").unwrap(), None);
    }
}
