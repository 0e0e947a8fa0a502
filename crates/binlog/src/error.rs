//! Decoding errors. Every error says what was being read and at which byte offset of the
//! buffer handed to the decoder, so a caller can add the file and position.

use std::fmt;

/// A buffer that is not a valid event (or part of one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    /// What was being decoded (`"GTID event"`, `"row image"`, ...).
    pub what: &'static str,
    /// Offset in the buffer given to the decoder where the problem was found.
    pub offset: usize,
    /// The problem (`"truncated"`, `"bad checksum"`, ...).
    pub reason: String,
}

impl DecodeError {
    pub fn new(what: &'static str, offset: usize, reason: impl Into<String>) -> Self {
        DecodeError { what, offset, reason: reason.into() }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at offset {}: {}", self.what, self.offset, self.reason)
    }
}

impl std::error::Error for DecodeError {}
