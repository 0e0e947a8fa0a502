//! Reader pins: the positions open readers (a replica's dump thread, a backup) still need,
//! so that no purge removes a segment under them (DESIGN.md §4: segments are purged only
//! when "not being read by any connected replica").
//!
//! Owns [`PinRegistry`] (one per log, in `Shared::pins`) and [`ReaderPin`], the handle a
//! reader holds ([`crate::Log::pin_reader`]). A pin is one `AtomicU64`: the reader moves it
//! forward with [`ReaderPin::advance`] (an atomic `fetch_max`, no lock: nothing on the commit
//! path or the reader's path waits for a purge), and dropping the handle removes it. The
//! registry's mutex is taken only to add or remove a pin and by purges
//! ([`PinRegistry::hold`]), which keep it from planning until the segments are out of the
//! segment list: a pin added meanwhile waits, and its reader then finds its segment purged
//! (`InvalidPosition`) instead of losing it under its feet. So a reader that pins its start
//! position *before* opening its `LogReader` never has a segment it reads purged.
//!
//! Lock order: the registry's mutex is taken before `segments` and `progress` (a purge holds
//! it while it lists and removes segments), never while holding another lock of the log.
//!
//! Invariants: a pin's LSN never decreases (`fetch_max`); the registry holds exactly the pins
//! whose handles are alive (added in `pin`, removed in `Drop`, asserted).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::locks::lock;
use crate::Lsn;

/// The pins of one log (see the module docs).
#[derive(Default)]
pub(crate) struct PinRegistry {
    pins: Mutex<Vec<Arc<AtomicU64>>>,
}

/// The registry held by a purge: no pin is added or removed until it is dropped.
pub(crate) struct HeldPins<'a> {
    pins: MutexGuard<'a, Vec<Arc<AtomicU64>>>,
}

impl HeldPins<'_> {
    /// The lowest LSN a pin holds; None without pins.
    pub fn oldest(&self) -> Option<Lsn> {
        self.pins.iter().map(|p| p.load(Ordering::Acquire)).min()
    }
}

impl PinRegistry {
    /// Registers a pin at `lsn`.
    pub fn pin(self: &Arc<Self>, lsn: Lsn) -> ReaderPin {
        let slot = Arc::new(AtomicU64::new(lsn));
        lock(&self.pins).push(slot.clone());
        ReaderPin {
            slot,
            registry: self.clone(),
        }
    }

    /// Number of live pins.
    pub fn count(&self) -> usize {
        lock(&self.pins).len()
    }

    /// Takes the registry for a purge (see the module docs).
    pub fn hold(&self) -> HeldPins<'_> {
        HeldPins {
            pins: lock(&self.pins),
        }
    }
}

/// A reader's claim on the log from an LSN on: segments that end after it are not purged
/// while the handle lives. Create with [`crate::Log::pin_reader`] before opening the reader;
/// move it with [`ReaderPin::advance`] as the reader no longer needs older records; drop it
/// when the reader goes.
pub struct ReaderPin {
    slot: Arc<AtomicU64>,
    registry: Arc<PinRegistry>,
}

impl ReaderPin {
    /// Moves the pin forward to `lsn` (the reader needs nothing before it any more). A lower
    /// LSN than the pin's is ignored: a pin never moves back. One atomic operation, no lock.
    pub fn advance(&self, lsn: Lsn) {
        self.slot.fetch_max(lsn, Ordering::AcqRel);
    }

    /// The LSN the pin holds.
    pub fn lsn(&self) -> Lsn {
        self.slot.load(Ordering::Acquire)
    }
}

impl Drop for ReaderPin {
    fn drop(&mut self) {
        let mut pins = lock(&self.registry.pins);
        let before = pins.len();
        pins.retain(|p| !Arc::ptr_eq(p, &self.slot));
        debug_assert_eq!(pins.len() + 1, before, "a live pin was not registered");
    }
}

impl std::fmt::Debug for ReaderPin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReaderPin")
            .field("lsn", &self.lsn())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_live_pin_is_what_holds_segments_back() {
        let r = Arc::new(PinRegistry::default());
        assert_eq!((r.count(), r.hold().oldest()), (0, None));
        let a = r.pin(500);
        let b = r.pin(300);
        assert_eq!((r.count(), r.hold().oldest()), (2, Some(300)));
        b.advance(900);
        assert_eq!(r.hold().oldest(), Some(500));
        b.advance(100);
        assert_eq!(b.lsn(), 900, "a pin never moves back");
        drop(a);
        assert_eq!((r.count(), r.hold().oldest()), (1, Some(900)));
        drop(b);
        assert_eq!((r.count(), r.hold().oldest()), (0, None));
    }
}
