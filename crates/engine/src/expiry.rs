//! The live settings of automatic log expiry: `binlog_expire_logs_seconds` and
//! `max_binlog_total_size` (0 = off), and the last expiry and segment-trim errors reported.
//!
//! Owns [`ExpirySettings`], held by the engine (`engine.rs`), read by every expiry and set by
//! SET GLOBAL through `retention.rs`' `Engine` methods, which run the expiry itself. Imports
//! nothing of the crate, so `engine.rs` and `retention.rs` both use it without a circle.
//!
//! Invariants: the values are plain atomics (a SET applies from the next expiry on, nothing
//! waits for it); the last error is kept only to report each distinct failure once.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use onelog_log::retention::ExpiryLimits;

/// See the module docs.
#[derive(Debug, Default)]
pub struct ExpirySettings {
    expire_logs_seconds: AtomicU64,
    max_total_size: AtomicU64,
    last_error: Mutex<Option<String>>,
    last_trim_error: Mutex<Option<String>>,
}

impl ExpirySettings {
    pub(crate) fn new(expire_logs_seconds: u64, max_total_size: u64) -> Self {
        let s = ExpirySettings::default();
        s.set_expire_logs_seconds(expire_logs_seconds);
        s.set_max_total_size(max_total_size);
        s
    }

    pub(crate) fn expire_logs_seconds(&self) -> u64 {
        self.expire_logs_seconds.load(Ordering::Relaxed)
    }

    pub(crate) fn set_expire_logs_seconds(&self, secs: u64) {
        self.expire_logs_seconds.store(secs, Ordering::Relaxed);
    }

    pub(crate) fn max_total_size(&self) -> u64 {
        self.max_total_size.load(Ordering::Relaxed)
    }

    pub(crate) fn set_max_total_size(&self, bytes: u64) {
        self.max_total_size.store(bytes, Ordering::Relaxed);
    }

    /// The limits an expiry applies now.
    pub(crate) fn limits(&self) -> ExpiryLimits {
        ExpiryLimits::new(self.expire_logs_seconds(), self.max_total_size())
    }

    /// Records the outcome of an expiry (None: it succeeded); true when `error` differs from
    /// the last one recorded (so it is to be reported).
    pub(crate) fn note_error(&self, error: Option<&str>) -> bool {
        note(&self.last_error, error)
    }

    /// [`ExpirySettings::note_error`] for the trimming of sealed segments (`Log::trim_sealed`).
    pub(crate) fn note_trim_error(&self, error: Option<&str>) -> bool {
        note(&self.last_trim_error, error)
    }
}

/// Records `error` in `last`; true when it is new (see [`ExpirySettings::note_error`]).
fn note(last: &Mutex<Option<String>>, error: Option<&str>) -> bool {
    let mut last = last.lock().unwrap_or_else(|p| p.into_inner());
    let new = error.is_some() && last.as_deref() != error;
    *last = error.map(str::to_string);
    new
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_distinct_error_is_reported_once_and_a_success_resets() {
        let s = ExpirySettings::new(0, 0);
        assert!(s.limits().is_off());
        assert!(s.note_error(Some("disk")));
        assert!(!s.note_error(Some("disk")));
        assert!(s.note_error(Some("other")));
        assert!(!s.note_error(None));
        assert!(s.note_error(Some("other")));
        // The trim errors are kept apart from the expiry ones.
        assert!(s.note_trim_error(Some("other")));
        assert!(!s.note_trim_error(Some("other")));
        assert!(!s.note_error(Some("other")));
        s.set_expire_logs_seconds(60);
        s.set_max_total_size(1 << 20);
        assert_eq!((s.expire_logs_seconds(), s.max_total_size()), (60, 1 << 20));
        assert!(!s.limits().is_off());
    }
}
