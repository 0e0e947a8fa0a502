//! The classic view's measured file sizes (`view.rs` measures, this module only keeps): per
//! segment, how far its records have been read and the view offset reached there, so a
//! repeated SHOW MASTER STATUS or SHOW BINARY LOGS reads only what was appended since.
//!
//! Owns [`ViewSizes`] (held in `Shared`) and [`Measured`]. A leaf: it imports nothing of the
//! crate but the LSN type, so `Shared` can hold it without depending on the view.
//!
//! Invariants: an entry is keyed by segment number and used only for the same start LSN (a
//! RESET MASTER's new segment 1 is measured afresh); a measurement only moves forward
//! (asserted in [`ViewSizes::put`]).

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use crate::Lsn;

/// How far one segment's view was measured.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Measured {
    pub start_lsn: Lsn,
    /// The LSN the records were read to, and the view offset there (the next group's).
    pub lsn: Lsn,
    pub offset: u64,
    /// Once the segment is sealed and fully durable: its final size, Rotate included.
    pub sealed_size: Option<u64>,
}

/// One [`Measured`] per segment number.
#[derive(Default)]
pub(crate) struct ViewSizes {
    measured: Mutex<HashMap<u64, Measured>>,
}

impl ViewSizes {
    fn map(&self) -> MutexGuard<'_, HashMap<u64, Measured>> {
        self.measured.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The measurement of segment `number` if it was taken for the segment starting at
    /// `start_lsn`.
    pub fn get(&self, number: u64, start_lsn: Lsn) -> Option<Measured> {
        self.map()
            .get(&number)
            .copied()
            .filter(|m| m.start_lsn == start_lsn)
    }

    pub fn put(&self, number: u64, m: Measured) {
        let mut map = self.map();
        if let Some(old) = map.get(&number).filter(|o| o.start_lsn == m.start_lsn) {
            debug_assert!(
                m.lsn >= old.lsn && m.offset >= old.offset,
                "a view measurement went backwards"
            );
        }
        map.insert(number, m);
    }

    /// Forgets segments no longer present (purged, reset).
    pub fn retain(&self, present: &[u64]) {
        self.map().retain(|n, _| present.contains(n));
    }
}
