//! The socket side of a binlog dump: the connection lends its packet stream to
//! `onelog_replication`'s dump through [`DumpLink`] ([`DumpIo`]).
//!
//! Owns the dump's reader thread: after COM_BINLOG_DUMP the client only sends semi-sync ACKs,
//! COM_PING or COM_QUIT, read on a thread of their own from a second handle of the socket so
//! an ACK is seen at once, whatever the dump is doing. Invariants: the thread ends when the
//! link is dropped (the socket is shut down both ways, which also tells the client the dump is
//! over) or when the stream ends; it never holds more than one packet of at most
//! [`MAX_CLIENT_PACKET`] bytes. After a failed write nothing more is written: a client that
//! stopped reading costs one write timeout, then its connection is shut down.

use std::io::{self, Read};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use onelog_protocol::packet::PacketStream;
use onelog_protocol::response::put_err;
use onelog_replication::source::{DumpIo, PacketSink};

use crate::transport::Transport;

/// Longest packet the reader thread accepts from a dump client (an ACK is ~30 bytes).
pub const MAX_CLIENT_PACKET: usize = 64 << 10;

/// A dump's view of the connection.
pub(crate) struct DumpLink<'a, S: Transport> {
    pub stream: &'a mut PacketStream<S>,
    pub killed: &'a dyn Fn() -> bool,
    reader: Option<(Arc<AtomicBool>, JoinHandle<()>)>,
    /// Something was sent: the connection ends with the dump.
    started: bool,
    /// A write failed (the client stopped reading past the write timeout, or left): nothing
    /// more is written, not even what is buffered.
    failed: bool,
}

impl<'a, S: Transport> DumpLink<'a, S> {
    pub fn new(stream: &'a mut PacketStream<S>, killed: &'a dyn Fn() -> bool) -> Self {
        DumpLink {
            stream,
            killed,
            reader: None,
            started: false,
            failed: false,
        }
    }
}

impl<S: Transport> DumpIo for DumpLink<'_, S> {
    fn send(&mut self, payload: &[u8]) -> io::Result<()> {
        self.started = true;
        self.stream.write_packet(payload);
        let r = self.stream.maybe_flush();
        self.failed |= r.is_err();
        r
    }

    fn flush(&mut self) -> io::Result<()> {
        let r = self.stream.flush();
        self.failed |= r.is_err();
        r
    }

    fn set_sequence(&mut self, seq: u8) {
        self.stream.set_sequence(seq);
    }

    fn send_error(&mut self, code: u16, message: &str) -> io::Result<()> {
        self.started = true;
        let start = self.stream.begin_packet();
        put_err(self.stream.out(), code, "HY000", message);
        self.stream.finish_packet(start);
        self.stream.flush()
    }

    fn send_eof(&mut self) -> io::Result<()> {
        self.started = true;
        // `fe 00 00 02 00`: no warnings, AUTOCOMMIT, as MariaDB ends a dump.
        self.stream.write_packet(&[0xfe, 0, 0, 2, 0]);
        self.stream.flush()
    }

    fn read_in_background(&mut self, mut sink: PacketSink) -> bool {
        let Some(mut r) = self.stream.get_ref().try_clone_reader() else {
            return false;
        };
        let done = Arc::new(AtomicBool::new(false));
        let stop = done.clone();
        let spawned = std::thread::Builder::new()
            .name("dump-reader".into())
            .spawn(move || {
                let mut payload = Vec::new();
                loop {
                    match read_one(&mut *r, &mut payload, &stop) {
                        Ok(true) => sink(Some(&payload)),
                        Ok(false) | Err(_) => {
                            sink(None);
                            return;
                        }
                    }
                }
            });
        match spawned {
            Ok(h) => {
                self.reader = Some((done, h));
                true
            }
            Err(_) => false,
        }
    }

    fn killed(&self) -> bool {
        (self.killed)()
    }

    fn set_state(&mut self, _state: &'static str) {}
}

/// Reads one packet (its chunks are not merged: a dump client never sends 16 MiB); false at
/// the end of the stream or when `stop` is set.
fn read_one(r: &mut dyn Read, payload: &mut Vec<u8>, stop: &AtomicBool) -> io::Result<bool> {
    let mut head = [0u8; 4];
    if !read_exact_or_stop(r, &mut head, stop)? {
        return Ok(false);
    }
    let len = u32::from_le_bytes([head[0], head[1], head[2], 0]) as usize;
    if len > MAX_CLIENT_PACKET {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "packet too large",
        ));
    }
    payload.clear();
    payload.resize(len, 0);
    read_exact_or_stop(r, payload, stop)
}

/// Fills `buf`, retrying the socket's read timeouts until `stop`; false at end of stream.
fn read_exact_or_stop(r: &mut dyn Read, buf: &mut [u8], stop: &AtomicBool) -> io::Result<bool> {
    let mut got = 0;
    while got < buf.len() {
        if stop.load(Ordering::SeqCst) {
            return Ok(false);
        }
        match r.read(&mut buf[got..]) {
            Ok(0) => return Ok(false),
            Ok(n) => got += n,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock
                        | io::ErrorKind::TimedOut
                        | io::ErrorKind::Interrupted
                ) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

impl<S: Transport> Drop for DumpLink<'_, S> {
    /// A dump that sent anything ends its connection: what is buffered goes out (unless a
    /// write already failed: another blocked write would wait out the timeout again), then
    /// the socket is shut down both ways, which ends the reader thread too. A dump refused
    /// before it sent anything leaves the connection as it was.
    fn drop(&mut self) {
        if self.started && !self.failed {
            let _ = self.stream.flush();
        }
        if self.started || self.failed || self.reader.is_some() {
            self.stream.get_ref().shutdown_both();
        }
        if let Some((done, h)) = self.reader.take() {
            done.store(true, Ordering::SeqCst);
            let _ = h.join();
        }
    }
}
