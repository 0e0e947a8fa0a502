//! `Inner`: the state shared by committers, background threads and readers: [`Shared`] (what
//! every part reads) plus the commit pipeline (the writer, the commit queue and gather, the
//! sync lock, the sink, the flusher's control, file mode's stage). `log.rs`'s `Log` holds it.
//! Imported by the modules that run the pipeline (group_commit, flusher, reader, recovery,
//! log); it imports only state types, never them.
//!
//! Locks, always taken in this order (never the reverse): `sync_lock` -> `writer` ->
//! `segments` -> `progress`; the readers' pin registry (`pins.rs`) is taken only by purges,
//! before `segments` and `progress`, and by a pin's creation and drop alone (`queue`, the commit slots and the preparer slot are only held
//! briefly, never while waiting for another of these). `progress` guards the three LSNs, the failed/closed flags and
//! the file the next sync must cover; its condvar wakes readers and `next_wait`. No lock but
//! `sync_lock` (whose point is to serialise fsyncs) is held across an fsync of the group path;
//! rotation syncs the old segment under `writer`, which is what makes it a barrier, and so does
//! the appender when a write would leave more than `MAX_UNSYNCED` bytes unsynced (rare: only
//! with more than 8 MiB written since the last sync). A group leader gathering (see
//! `group_commit.rs`) waits on `Gather::cv` with `queue` while holding `sync_lock`.
//! `fsync_gate` is innermost: held across one `fdatasync` (and the failed-state check and
//! update around it) by whichever path syncs, so no two syncs of the log are ever in flight.
//! The applier's `turn` (held while a sink applies groups) is taken with `writer` held (a
//! replicated batch's `needs_applied`) or with no lock, never with `sync_lock`, and only
//! `pending` inside it; `pending` and the flusher's state are held briefly (a leader checks
//! `pending` and wakes the flusher under `sync_lock`, just before its fsync).
//!
//! File mode (`BinlogStorage::File`) adds `FileMode::turn`, taken FIRST (before all of the
//! above) by a file-mode group leader for its whole staged commit and by flush, rotate and
//! reset, so those never interleave with a group between its prepare and its binlog write;
//! and `FileMode::binlog` (the classic binlog), taken only with `turn` held; whoever holds it
//! takes no other lock but `progress` (`Log::reset` takes it inside `sync_lock` and `writer`,
//! which nobody holding `binlog` ever waits for).
//!
//! Failure model: once `progress.failed` is set (fsync error, write error, crash) the log takes
//! no more writes and never calls fsync again; readers keep reading what was durable.
//!
//! Invariants: the lock order below is the only one used anywhere in the crate.

use std::ops::Deref;
use std::sync::{Arc, Mutex, RwLock};

use crate::appender::Writer;
use crate::filemode::FileMode;
use crate::pipeline::{Applier, FlusherCtl, Gather, Queue};
pub(crate) use crate::shared::Shared;
use crate::GroupSink;

/// The log's state: [`Shared`] (reached through `Deref`) plus the commit pipeline.
pub(crate) struct Inner {
    pub shared: Shared,
    pub sink: RwLock<Option<Arc<dyn GroupSink>>>,
    pub queue: Mutex<Queue>,
    pub gather: Gather,
    pub writer: Mutex<Writer>,
    pub sync_lock: Mutex<()>,
    pub applier: Applier,
    pub flusher: FlusherCtl,
    /// Some in file mode: its commit stage (`file_stage.rs`), which the core calls where
    /// file mode adds to the engine-mode path.
    pub file: Option<FileMode>,
}

impl Deref for Inner {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.shared
    }
}
