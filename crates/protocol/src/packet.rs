//! Packet framing: the 4-byte header (3-byte little-endian payload length, 1-byte sequence id),
//! splitting of large payloads into 16 MiB - 1 chunks, and merging them back.
//!
//! Owns one connection's byte stream. Invariants:
//! - A logical payload of length `n` is sent as chunks of exactly `max_chunk` bytes followed by
//!   one shorter chunk (possibly empty), so a payload of exactly `k * max_chunk` bytes ends with
//!   an empty chunk. Reading merges chunks the same way. `max_chunk` is `0xFF_FFFF` on real
//!   connections; tests shrink it to exercise the boundaries cheaply.
//! - Every chunk carries the next sequence id (wrapping at 256); a read chunk whose id is not the
//!   expected one is [`FrameError::OutOfOrder`] (the error reply then continues the peer's
//!   numbering). [`PacketStream::reset_sequence`] starts a new
//!   command (id 0).
//! - A payload longer than `max_allowed` is refused from the chunk headers alone, before its
//!   bytes are buffered ([`FrameError::TooLarge`]), so a lying length never makes us allocate.
//! - Output is buffered in `out` and written by [`PacketStream::flush`]; the caller flushes at the
//!   end of every response (and [`PacketStream::maybe_flush`] bounds the buffer during big result
//!   sets).

use std::fmt;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::time::Instant;

/// Largest chunk payload the protocol allows (`2^24 - 1`).
pub const MAX_CHUNK: usize = 0xFF_FFFF;

/// Output buffered beyond this is written out mid-response.
const FLUSH_THRESHOLD: usize = 64 * 1024;

fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

/// Why a packet could not be read.
#[derive(Debug)]
pub enum FrameError {
    /// The peer closed the connection before a packet started.
    Closed,
    /// I/O failure or timeout (`io::ErrorKind::WouldBlock`/`TimedOut` for `wait_timeout`), or the
    /// stream ended inside a packet.
    Io(io::Error),
    /// A chunk arrived with an unexpected sequence id.
    OutOfOrder { expected: u8, got: u8 },
    /// The payload would exceed `max_allowed_packet`.
    TooLarge { size: usize, max_allowed: usize },
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::Closed => write!(f, "connection closed by peer"),
            FrameError::Io(e) => write!(f, "i/o error reading packet: {e}"),
            FrameError::OutOfOrder { expected, got } => {
                write!(
                    f,
                    "packet out of order: expected sequence {expected}, got {got}"
                )
            }
            FrameError::TooLarge { size, max_allowed } => {
                write!(
                    f,
                    "packet of at least {size} bytes exceeds max_allowed_packet {max_allowed}"
                )
            }
        }
    }
}

impl std::error::Error for FrameError {}

/// One connection's framed packet stream.
pub struct PacketStream<S: Read + Write> {
    io: BufReader<S>,
    seq: u8,
    max_chunk: usize,
    max_allowed: usize,
    /// Read timeouts tolerated in a row inside one packet before giving up.
    max_stalls: u32,
    /// Reads fail with `TimedOut` once this passes, however the bytes trickle in (the
    /// handshake's `connect_timeout`).
    deadline: Option<Instant>,
    out: Vec<u8>,
}

impl<S: Read + Write> PacketStream<S> {
    /// A stream with the protocol's 16 MiB chunk size.
    pub fn new(stream: S, max_allowed: usize) -> Self {
        Self::with_max_chunk(stream, max_allowed, MAX_CHUNK)
    }

    /// A stream splitting at `max_chunk` bytes (tests use small values; must be >= 1 and
    /// <= [`MAX_CHUNK`]).
    pub fn with_max_chunk(stream: S, max_allowed: usize, max_chunk: usize) -> Self {
        let max_chunk = max_chunk.clamp(1, MAX_CHUNK);
        PacketStream {
            io: BufReader::new(stream),
            seq: 0,
            max_chunk,
            max_allowed,
            max_stalls: 1,
            deadline: None,
            out: Vec::new(),
        }
    }

    pub fn get_ref(&self) -> &S {
        self.io.get_ref()
    }

    /// The underlying stream (buffered unread input is dropped).
    pub fn into_inner(self) -> S {
        self.io.into_inner()
    }

    pub fn set_max_allowed(&mut self, max_allowed: usize) {
        self.max_allowed = max_allowed;
    }

    /// How many consecutive read timeouts a packet being read may take before the read fails
    /// (the socket's timeout is the connection's idle tick; tick x stalls is the effective
    /// `net_read_timeout`).
    pub fn set_max_stalls(&mut self, n: u32) {
        self.max_stalls = n.max(1);
    }

    /// After `deadline`, every read fails with `TimedOut` (checked after each read returns, so
    /// a read may overrun it by up to the socket's read timeout); `None` lifts it.
    pub fn set_deadline(&mut self, deadline: Option<Instant>) {
        self.deadline = deadline;
    }

    fn past_deadline(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    /// Waits for the first byte of the next packet: `Ok(true)` when input is available,
    /// `Ok(false)` when the socket's read timeout passed first (nothing is consumed either way),
    /// `Err(Closed)` when the peer closed.
    pub fn wait_readable(&mut self) -> Result<bool, FrameError> {
        loop {
            match self.io.fill_buf() {
                Ok([]) => return Err(FrameError::Closed),
                Ok(_) => return Ok(true),
                Err(e) if is_timeout(&e) => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(FrameError::Io(e)),
            }
        }
    }

    /// `read_exact` that tolerates up to `max_stalls` consecutive timeouts.
    fn read_full(&mut self, buf: &mut [u8]) -> io::Result<()> {
        let mut filled = 0;
        let mut stalls = 0;
        while filled < buf.len() {
            match self.io.read(&mut buf[filled..]) {
                Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                Ok(n) => {
                    filled += n;
                    stalls = 0;
                    if filled < buf.len() && self.past_deadline() {
                        return Err(io::ErrorKind::TimedOut.into());
                    }
                }
                Err(e) if is_timeout(&e) => {
                    stalls += 1;
                    if stalls >= self.max_stalls || self.past_deadline() {
                        return Err(e);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Starts a new command exchange: the next packet read or written has sequence id 0.
    pub fn reset_sequence(&mut self) {
        self.seq = 0;
    }

    /// The next packet read or written has sequence id `seq` (a dump after a semi-sync ACK
    /// request continues at 1, as MariaDB's).
    pub fn set_sequence(&mut self, seq: u8) {
        self.seq = seq;
    }

    pub fn sequence(&self) -> u8 {
        self.seq
    }

    /// True when output was buffered and not flushed yet.
    pub fn has_pending_output(&self) -> bool {
        !self.out.is_empty()
    }

    /// True when bytes the peer sent are already buffered (a pipelined command).
    pub fn has_buffered_input(&self) -> bool {
        !self.io.buffer().is_empty()
    }

    /// Reads one logical packet into `payload` (cleared first), merging split chunks.
    pub fn read_packet(&mut self, payload: &mut Vec<u8>) -> Result<(), FrameError> {
        payload.clear();
        let mut first = true;
        loop {
            let mut header = [0u8; 4];
            if first {
                // Distinguish a clean close before the packet from a torn one.
                match self.io.fill_buf() {
                    Ok([]) => return Err(FrameError::Closed),
                    Ok(_) => {}
                    Err(e) => return Err(FrameError::Io(e)),
                }
            }
            self.read_full(&mut header).map_err(FrameError::Io)?;
            let len = u32::from_le_bytes([header[0], header[1], header[2], 0]) as usize;
            let got = header[3];
            if got != self.seq {
                let expected = self.seq;
                // Answer in the peer's numbering so it can read the error.
                self.seq = got.wrapping_add(1);
                return Err(FrameError::OutOfOrder { expected, got });
            }
            self.seq = self.seq.wrapping_add(1);
            let size = payload.len() + len;
            if size > self.max_allowed {
                return Err(FrameError::TooLarge {
                    size,
                    max_allowed: self.max_allowed,
                });
            }
            // Checked from the header alone: nothing is buffered beyond max_allowed.
            debug_assert!(size <= self.max_allowed);
            let start = payload.len();
            payload.resize(size, 0);
            self.read_full(&mut payload[start..])
                .map_err(FrameError::Io)?;
            first = false;
            if len < self.max_chunk {
                return Ok(());
            }
        }
    }

    /// Starts a packet written directly into the output buffer; returns its start mark for
    /// [`PacketStream::finish_packet`]. The caller appends the payload to [`PacketStream::out`].
    pub fn begin_packet(&mut self) -> usize {
        let start = self.out.len();
        self.out.extend_from_slice(&[0, 0, 0, 0]);
        start
    }

    /// The output buffer, to append the current packet's payload.
    pub fn out(&mut self) -> &mut Vec<u8> {
        &mut self.out
    }

    /// Frames the payload appended since `start` (splitting it when it reaches `max_chunk`).
    pub fn finish_packet(&mut self, start: usize) {
        debug_assert!(
            start + 4 <= self.out.len(),
            "finish_packet without begin_packet"
        );
        let len = self.out.len() - start - 4;
        if len < self.max_chunk {
            let h = (len as u32).to_le_bytes();
            self.out[start..start + 4].copy_from_slice(&[h[0], h[1], h[2], self.seq]);
            self.seq = self.seq.wrapping_add(1);
            return;
        }
        // Rare path: re-frame a large payload into chunks.
        let payload = self.out.split_off(start + 4);
        self.out.truncate(start);
        self.frame_chunks(&payload);
    }

    /// Writes a whole payload as one logical packet.
    pub fn write_packet(&mut self, payload: &[u8]) {
        self.frame_chunks(payload);
    }

    fn frame_chunks(&mut self, payload: &[u8]) {
        let mut rest = payload;
        loop {
            let n = rest.len().min(self.max_chunk);
            debug_assert!(n <= MAX_CHUNK, "a chunk length must fit the 3-byte header");
            let h = (n as u32).to_le_bytes();
            self.out.extend_from_slice(&[h[0], h[1], h[2], self.seq]);
            self.seq = self.seq.wrapping_add(1);
            self.out.extend_from_slice(&rest[..n]);
            rest = &rest[n..];
            // A payload of exactly k * max_chunk bytes ends with an empty chunk.
            if n < self.max_chunk {
                return;
            }
        }
    }

    /// Writes out everything buffered.
    pub fn flush(&mut self) -> io::Result<()> {
        if !self.out.is_empty() {
            let s = self.io.get_mut();
            s.write_all(&self.out)?;
            s.flush()?;
            self.out.clear();
        }
        Ok(())
    }

    /// Flushes when the buffer has grown past a threshold (between rows of a big result set).
    pub fn maybe_flush(&mut self) -> io::Result<()> {
        if self.out.len() >= FLUSH_THRESHOLD {
            self.flush()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::io::Cursor;

    /// An in-memory duplex: reads from `input`, collects writes in `output`.
    struct Duplex {
        input: Cursor<Vec<u8>>,
        output: Vec<u8>,
    }

    impl Read for Duplex {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.input.read(buf)
        }
    }

    impl Write for Duplex {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.output.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn stream(input: Vec<u8>, max_chunk: usize) -> PacketStream<Duplex> {
        PacketStream::with_max_chunk(
            Duplex {
                input: Cursor::new(input),
                output: Vec::new(),
            },
            usize::MAX,
            max_chunk,
        )
    }

    fn encode(payloads: &[Vec<u8>], max_chunk: usize) -> Vec<u8> {
        let mut w = stream(Vec::new(), max_chunk);
        for p in payloads {
            w.write_packet(p);
        }
        w.flush().unwrap();
        w.io.into_inner().output
    }

    #[test]
    fn payload_of_exact_chunk_multiple_ends_with_empty_chunk() {
        let bytes = encode(&[vec![7u8; 8]], 4);
        // two full chunks and one empty chunk
        assert_eq!(bytes.len(), 3 * 4 + 8);
        assert_eq!(&bytes[0..4], &[4, 0, 0, 0]);
        assert_eq!(&bytes[8..12], &[4, 0, 0, 1]);
        assert_eq!(&bytes[16..20], &[0, 0, 0, 2]);
    }

    #[test]
    fn real_16mib_boundary_splits_and_merges() {
        for len in [MAX_CHUNK - 1, MAX_CHUNK, MAX_CHUNK + 1] {
            let payload: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
            let bytes = encode(std::slice::from_ref(&payload), MAX_CHUNK);
            let chunks = if len >= MAX_CHUNK { 2 } else { 1 };
            assert_eq!(bytes.len(), len + 4 * chunks);
            let mut r = stream(bytes, MAX_CHUNK);
            let mut got = Vec::new();
            r.read_packet(&mut got).unwrap();
            assert_eq!(got.len(), payload.len());
            assert!(got == payload);
        }
    }

    #[test]
    fn begin_finish_packet_splits_large_payloads_like_write_packet() {
        let payload: Vec<u8> = (0..23u8).collect();
        let mut w = stream(Vec::new(), 5);
        let start = w.begin_packet();
        w.out().extend_from_slice(&payload);
        w.finish_packet(start);
        w.flush().unwrap();
        assert_eq!(w.io.into_inner().output, encode(&[payload], 5));
    }

    #[test]
    fn out_of_order_sequence_is_rejected() {
        let mut r = stream(vec![1, 0, 0, 3, b'x'], MAX_CHUNK);
        let mut p = Vec::new();
        match r.read_packet(&mut p) {
            Err(FrameError::OutOfOrder {
                expected: 0,
                got: 3,
            }) => {}
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn oversized_length_header_is_refused_before_reading_the_body() {
        let mut r = PacketStream::with_max_chunk(
            Duplex {
                input: Cursor::new(vec![0xFF, 0xFF, 0xFF, 0]),
                output: Vec::new(),
            },
            1024,
            MAX_CHUNK,
        );
        let mut p = Vec::new();
        match r.read_packet(&mut p) {
            Err(FrameError::TooLarge {
                size: MAX_CHUNK,
                max_allowed: 1024,
            }) => {}
            other => panic!("unexpected {other:?}"),
        }
        assert!(p.capacity() < 1024);
    }

    #[test]
    fn truncated_packet_is_an_io_error_and_empty_input_is_closed() {
        let mut p = Vec::new();
        assert!(matches!(
            stream(vec![5, 0, 0, 0, 1, 2], 8).read_packet(&mut p),
            Err(FrameError::Io(_))
        ));
        assert!(matches!(
            stream(vec![5, 0], 8).read_packet(&mut p),
            Err(FrameError::Io(_))
        ));
        assert!(matches!(
            stream(vec![], 8).read_packet(&mut p),
            Err(FrameError::Closed)
        ));
    }

    proptest! {
        #[test]
        fn framing_round_trips_at_small_chunk_sizes(
            payloads in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..40), 1..8),
            max_chunk in 1usize..12,
        ) {
            let bytes = encode(&payloads, max_chunk);
            let mut r = stream(bytes, max_chunk);
            for p in &payloads {
                let mut got = Vec::new();
                r.read_packet(&mut got).unwrap();
                prop_assert_eq!(&got, p);
            }
            let mut got = Vec::new();
            prop_assert!(matches!(r.read_packet(&mut got), Err(FrameError::Closed)));
        }

        #[test]
        fn reading_arbitrary_bytes_never_panics(
            bytes in proptest::collection::vec(any::<u8>(), 0..200),
            max_chunk in 1usize..16,
        ) {
            let mut r = PacketStream::with_max_chunk(
                Duplex { input: Cursor::new(bytes), output: Vec::new() }, 64, max_chunk);
            let mut p = Vec::new();
            for _ in 0..8 {
                if r.read_packet(&mut p).is_err() { break; }
                prop_assert!(p.len() <= 64);
            }
        }
    }
}
