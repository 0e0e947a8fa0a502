//! Bounds-checked reading and the binlog's integer encodings, shared by every event codec.
//!
//! [`Reader`] is a cursor over a byte slice whose every read checks the remaining length and
//! reports the absolute offset (relative to the start of the event) of a short read, so no
//! decoder indexes a slice directly. The packed ("length-encoded") integer of the MySQL
//! protocol is written by [`put_packed`] and read by [`Reader::packed`].
//!
//! Invariants: a [`Reader`] never reads past its slice: every read checks the remaining length
//! first and a short read is a `DecodeError` naming the offset.

use crate::error::DecodeError;

/// A cursor over `buf`; `base` is the offset of `buf[0]` in the event, for error messages.
#[derive(Debug, Clone)]
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    base: usize,
    what: &'static str,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8], base: usize, what: &'static str) -> Self {
        Reader {
            buf,
            pos: 0,
            base,
            what,
        }
    }

    /// Offset of the next byte, relative to the event start.
    pub(crate) fn offset(&self) -> usize {
        self.base + self.pos
    }

    pub(crate) fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    pub(crate) fn err(&self, reason: impl Into<String>) -> DecodeError {
        DecodeError::new(self.what, self.offset(), reason)
    }

    pub(crate) fn bytes(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        if n > self.remaining() {
            return Err(self.err(format!(
                "truncated: need {n} bytes, {} left",
                self.remaining()
            )));
        }
        let b = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(b)
    }

    /// Everything that is left, without consuming it.
    pub(crate) fn peek_rest(&self) -> &'a [u8] {
        &self.buf[self.pos..]
    }

    /// Everything that is left.
    pub(crate) fn rest(&mut self) -> &'a [u8] {
        let b = &self.buf[self.pos..];
        self.pos = self.buf.len();
        b
    }

    pub(crate) fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.bytes(1)?[0])
    }

    /// Little-endian unsigned integer of `n` (1..=8) bytes.
    pub(crate) fn uint_le(&mut self, n: usize) -> Result<u64, DecodeError> {
        let b = self.bytes(n)?;
        Ok(b.iter()
            .rev()
            .fold(0u64, |acc, &x| (acc << 8) | u64::from(x)))
    }

    /// Big-endian unsigned integer of `n` (1..=8) bytes.
    pub(crate) fn uint_be(&mut self, n: usize) -> Result<u64, DecodeError> {
        let b = self.bytes(n)?;
        Ok(b.iter().fold(0u64, |acc, &x| (acc << 8) | u64::from(x)))
    }

    pub(crate) fn u16(&mut self) -> Result<u16, DecodeError> {
        Ok(self.uint_le(2)? as u16)
    }

    pub(crate) fn u32(&mut self) -> Result<u32, DecodeError> {
        Ok(self.uint_le(4)? as u32)
    }

    pub(crate) fn u64(&mut self) -> Result<u64, DecodeError> {
        self.uint_le(8)
    }

    /// A packed (length-encoded) integer. The NULL marker 251 and the invalid 255 are errors.
    pub(crate) fn packed(&mut self) -> Result<u64, DecodeError> {
        let at = self.offset();
        match self.u8()? {
            b @ 0..=250 => Ok(u64::from(b)),
            252 => self.uint_le(2),
            253 => self.uint_le(3),
            254 => self.uint_le(8),
            b => Err(DecodeError::new(
                self.what,
                at,
                format!("invalid packed integer prefix {b}"),
            )),
        }
    }

    /// A packed integer used as a length or count: it must not exceed what is left.
    pub(crate) fn packed_len(&mut self) -> Result<usize, DecodeError> {
        let at = self.offset();
        let n = self.packed()?;
        if n > self.remaining() as u64 {
            return Err(DecodeError::new(
                self.what,
                at,
                format!("length {n} exceeds the {} bytes left", self.remaining()),
            ));
        }
        Ok(n as usize)
    }

    /// UTF-8 text of `n` bytes.
    pub(crate) fn str(&mut self, n: usize) -> Result<String, DecodeError> {
        let at = self.offset();
        let b = self.bytes(n)?;
        String::from_utf8(b.to_vec())
            .map_err(|_| DecodeError::new(self.what, at, "text is not valid UTF-8"))
    }
}

/// Appends a packed (length-encoded) integer.
pub(crate) fn put_packed(out: &mut Vec<u8>, n: u64) {
    if n < 251 {
        out.push(n as u8);
    } else if n < 1 << 16 {
        out.push(252);
        out.extend_from_slice(&(n as u16).to_le_bytes());
    } else if n < 1 << 24 {
        out.push(253);
        out.extend_from_slice(&(n as u32).to_le_bytes()[..3]);
    } else {
        out.push(254);
        out.extend_from_slice(&n.to_le_bytes());
    }
}

/// Appends the low `n` bytes of `v`, little-endian.
pub(crate) fn put_uint_le(out: &mut Vec<u8>, v: u64, n: usize) {
    out.extend_from_slice(&v.to_le_bytes()[..n]);
}

/// Appends the low `n` bytes of `v`, big-endian.
pub(crate) fn put_uint_be(out: &mut Vec<u8>, v: u64, n: usize) {
    out.extend_from_slice(&v.to_be_bytes()[8 - n..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_integers_round_trip_at_every_width_boundary() {
        for n in [
            0u64,
            250,
            251,
            65535,
            65536,
            (1 << 24) - 1,
            1 << 24,
            u64::MAX,
        ] {
            let mut out = Vec::new();
            put_packed(&mut out, n);
            let mut r = Reader::new(&out, 0, "test");
            assert_eq!(r.packed().unwrap(), n);
            assert!(r.is_empty());
        }
        assert!(Reader::new(&[251], 0, "t").packed().is_err());
        assert!(Reader::new(&[255], 0, "t").packed().is_err());
        assert!(Reader::new(&[252, 1], 0, "t").packed().is_err());
    }
}
