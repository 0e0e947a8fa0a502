//! Decoding errors. Every error says what was being read and at which byte offset of the
//! buffer handed to the decoder, so a caller can add the file and position.
//!
//! Invariants: every error names what was being read and the byte offset in the decoder's
//! input.

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
        DecodeError {
            what,
            offset,
            reason: reason.into(),
        }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at offset {}: {}",
            self.what, self.offset, self.reason
        )
    }
}

impl std::error::Error for DecodeError {}

/// A value or event that cannot be encoded (a value that does not fit its column, a name too
/// long for its length byte, ...). Encoders return it instead of panicking or truncating.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodeError {
    /// What was being encoded (`"row image"`, `"Table_map event"`, ...).
    pub what: &'static str,
    /// Index of the column concerned, when there is one.
    pub column: Option<usize>,
    /// The problem.
    pub reason: String,
}

impl EncodeError {
    pub fn new(what: &'static str, reason: impl Into<String>) -> Self {
        EncodeError {
            what,
            column: None,
            reason: reason.into(),
        }
    }

    pub fn column(what: &'static str, column: usize, reason: impl Into<String>) -> Self {
        EncodeError {
            what,
            column: Some(column),
            reason: reason.into(),
        }
    }
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.column {
            Some(c) => write!(f, "{} column {}: {}", self.what, c, self.reason),
            None => write!(f, "{}: {}", self.what, self.reason),
        }
    }
}

impl std::error::Error for EncodeError {}
