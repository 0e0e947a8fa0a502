//! onelog's write-ahead log, which is also its binlog.
//!
//! A committed transaction's record is its MariaDB binlog event group, framed and checksummed
//! ([`frame`]), appended to preallocated segment files ([`segment`]) by a group-commit leader
//! (`group_commit.rs`, `appender.rs`) with one write and, at durability level 1, one
//! `fdatasync` per group (a group above [`MAX_UNSYNCED`] bytes is written in chunks with a sync
//! between them: no more than that is ever written but unsynced, which bounds recovery's tail
//! scan). Background threads prepare the next segment (`prealloc.rs`) and
//! flush/sync at levels 0 and 2 (`flusher.rs`). [`Log::open`] recovers the tail
//! (`recovery.rs`); [`LogReader`]s stream records from an LSN or a GTID position ([`reader`]).
//! With [`BinlogStorage::File`] (file mode, for comparison) the binlog is instead classic
//! MariaDB files ([`classic`]) written with two-phase commit: the log's records are PREPARE
//! records, committed by a later CommitMark record or by their presence in the binlog
//! (`group_commit.rs`, `recovery.rs`); a marker in the log directory says where the file-mode
//! session started, so records written in engine mode are never taken for prepared ones
//! ([`filemode`]).
//! Where an LSN sits in the binlog files users see is [`position`]'s (one position map);
//! what may be purged is [`retention`]'s.
//! Every file access goes through the [`fs::FileSystem`] seam so [`fs::SimFs`] can crash,
//! tear writes, fail fsyncs and run out of space in tests.
//!
//! Invariants every module keeps:
//! - LSN = byte position in the concatenated record stream (segment headers excluded);
//!   `durable_lsn <= written_lsn <= end_lsn`, all three on record boundaries, never decreasing
//!   (every change goes through `Progress::{set_end, set_written, advance_durable}`, which
//!   assert it);
//! - records are appended in GTID-assignment order; GTIDs assigned with `GtidAssign::Next`
//!   have contiguous sequence numbers per domain, and a crash recovers a prefix of the log;
//! - at level 1 a commit is acknowledged only once its record is durable.

mod appender;
pub mod classic;
mod cursor;
pub mod error;
mod file_stage;
pub mod filemode;
mod flusher;
pub mod frame;
pub mod fs;
mod group_commit;
mod inner;
pub mod inspect;
mod locks;
mod log;
pub mod mirror;
mod pins;
mod pipeline;
pub mod position;
mod prealloc;
mod progress;
pub mod reader;
mod recovery;
pub mod retention;
mod seglist;
pub mod segment;
mod shared;
pub mod streamed;
mod trim;
pub mod verify;
pub mod view;
mod view_cache;

use std::any::Any;
use std::path::PathBuf;
use std::time::Duration;

use onelog_binlog::{Gtid, GtidPos, GtidState};

pub use appender::MAX_UNSYNCED;
pub use classic::{
    read_classic_file, ClassicBinlog, ClassicEvent, ClassicFileInfo, ClassicOpenReport,
    ClassicOptions,
};
pub use error::LogError;
pub use fs::{File, FileSystem, SimCounters, SimFs, StdFs};
pub use log::Log;
pub use mirror::{Mirror, MirrorReport, MirrorStats};
pub use pins::ReaderPin;
pub use reader::LogReader;
pub use streamed::{EventSource, StreamedEvents};

/// Byte position in the whole record stream (segment headers excluded).
pub type Lsn = u64;

/// `innodb_flush_log_at_trx_commit`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durability {
    /// Buffered in memory; written and synced by the flusher about every `flush_interval`.
    Level0,
    /// Acknowledged only once durable: one `fdatasync` per commit group.
    Level1,
    /// Written to the OS at commit; synced by the flusher about every `flush_interval`.
    Level2,
}

impl Durability {
    pub fn from_level(n: u8) -> Option<Self> {
        match n {
            0 => Some(Durability::Level0),
            1 => Some(Durability::Level1),
            2 => Some(Durability::Level2),
            _ => None,
        }
    }

    pub fn level(self) -> u8 {
        match self {
            Durability::Level0 => 0,
            Durability::Level1 => 1,
            Durability::Level2 => 2,
        }
    }
}

/// How the log is laid out and behaves.
#[derive(Clone, Debug)]
pub struct LogOptions {
    pub dir: PathBuf,
    /// Size every segment is preallocated to; default 1 GiB. At least 16 KiB.
    pub segment_size: u64,
    /// A GTID-state record is written after the group that crosses every `state_interval`
    /// bytes; default 2 MiB.
    pub state_interval: u64,
    pub durability: Durability,
    /// Period of the background flusher (levels 0 and 2); default 1 s.
    pub flush_interval: Duration,
    /// Apply groups (and acknowledge them) only once durable, whatever the durability level.
    pub strict_visibility: bool,
    /// Level 1: before starting a group's fsync, wait a bounded time (1/8 of the recent
    /// average fsync latency, or up to one fsync when they measurably come back sooner) for
    /// the committers the previous sync just acknowledged to re-enqueue, so one fsync covers
    /// them all (see `group_commit.rs`).
    /// Default true; false only to measure without it.
    pub commit_gather: bool,
    /// For the Format_description event in every segment header. Peers recognise a MariaDB
    /// server only if it contains "MariaDB".
    pub server_version: String,
    pub server_id: u32,
    /// Where the binlog lives: the log itself (default) or classic binlog files written with
    /// two-phase commit (file mode, see `group_commit.rs`).
    pub binlog_storage: BinlogStorage,
    /// What opening does with damage a crash cannot explain; default `Strict` (refuse).
    pub recovery: LogRecovery,
    /// Engine mode, version-2 segments: once the log has been idle this long after a sync
    /// (no group written since), write the SyncMark the next group would frame, ahead of time,
    /// and sync it, so the last group before an idle period or a crash is vouched for too
    /// (`LOG_FORMAT.md`, "Torn tail vs corruption"). The mark takes no LSN: the next group
    /// rewrites the same bytes, so positions never depend on it. At most one extra fsync per
    /// idle period, none under load. Default `None` (off: the library's tests count fsyncs);
    /// the server turns it on.
    pub idle_sync_mark: Option<Duration>,
}

/// `--binlog-storage`: the architecture of the binlog.
#[derive(Clone, Debug, Default)]
pub enum BinlogStorage {
    /// The log is the binlog: one write and one fsync per group (onelog's design).
    #[default]
    Engine,
    /// The classic MariaDB design: the log holds PREPARE records, the binlog is separate
    /// classic files (`classic::ClassicBinlog`), and a commit is staged: prepare + engine-log
    /// fsync, binlog write + binlog fsync (per `sync_binlog`), apply, and a CommitMark record
    /// written with the next group. Two fsyncs per group at `sync_binlog = 1` and level 1.
    File {
        classic: classic::ClassicOptions,
        /// `sync_binlog`: 0 = never sync the binlog in the commit path (flush and shutdown
        /// still do), N = sync it after every N-th group.
        sync_binlog: u32,
    },
}

impl BinlogStorage {
    /// True in file mode.
    pub fn is_file(&self) -> bool {
        matches!(self, BinlogStorage::File { .. })
    }
}

impl Default for LogOptions {
    fn default() -> Self {
        LogOptions {
            dir: PathBuf::from("binlog"),
            segment_size: 1 << 30,
            state_interval: 2 << 20,
            durability: Durability::Level1,
            flush_interval: Duration::from_secs(1),
            strict_visibility: false,
            commit_gather: true,
            server_version: "10.11.9-MariaDB-onelog".to_string(),
            server_id: 1,
            binlog_storage: BinlogStorage::Engine,
            recovery: LogRecovery::Strict,
            idle_sync_mark: None,
        }
    }
}

/// What a record holds. Codes 1, 2, 3, 4, 5 in the frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RecordKind {
    /// A transaction's binlog event group.
    Transaction,
    /// A DDL statement's event group (Query event) plus the engine's catalog change in `aux`.
    Ddl,
    /// The GTID state at this point of the log (written by the log itself).
    GtidState,
    /// File mode only (written by the log itself): every Transaction/Ddl record below the LSN
    /// it holds is committed (its group reached the classic binlog). Readers and recovery
    /// consumers never see these records.
    CommitMark,
    /// Written by the log itself (format version 2) in front of a group when a sync
    /// completed since the last one: its own LSN and the LSN below which every byte was
    /// durable when it was framed. Recovery uses them to tell a torn tail from corruption
    /// (`recovery.rs`); readers never yield them.
    SyncMark,
}

/// `--log-recovery`: what opening the log does when it finds damage that a crash cannot
/// explain in the last segment (see `recovery.rs`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LogRecovery {
    /// Refuse to open (`LogError::Corrupt`, naming the file, the offset and what was found).
    #[default]
    Strict,
    /// Accept the loss: cut the last segment at the first bad record (zeroing everything
    /// after it, records that were acknowledged included) and report it in
    /// `OpenReport::damage_cuts`. A segment file shorter than its preallocated size is
    /// extended back to it with zeros first.
    TruncateDamaged,
}

/// What `LogRecovery::TruncateDamaged` cut off the last segment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DamageCut {
    pub path: PathBuf,
    /// File offset of the first bad record: it and everything after it were zeroed (with a
    /// SyncMark just before it, which belongs to the same write).
    pub offset: u64,
    /// Bytes zeroed (up to the last non-zero byte of the segment).
    pub bytes: u64,
    /// What was found (the refusal `Strict` would have given).
    pub reason: String,
}

/// How the leader assigns a record's GTID.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GtidAssign {
    /// `domain_id-server_id-(state.next_seq(domain_id))`.
    Next { domain_id: u32, server_id: u32 },
    /// Exactly this GTID (a replica applying its primary's transactions).
    Fixed(Gtid),
}

/// A record waiting to be committed.
pub struct PendingRecord {
    /// Transaction or Ddl.
    pub kind: RecordKind,
    pub gtid: GtidAssign,
    /// The event group. Its first event MUST be a GTID event written by
    /// `onelog_binlog::event::gtid::GtidEvent::encode` with `commit_id: Some(_)`; the leader
    /// patches in the assigned GTID and the group's commit id with `gtid::patch`.
    pub events: Vec<u8>,
    /// Opaque bytes stored with the record (DDL: the engine's catalog change). Empty for txns.
    pub aux: Vec<u8>,
    /// Handed back to the GroupSink untouched (the engine's write set).
    pub payload: Option<Box<dyn Any + Send>>,
    /// The rest of the event group when it is not all in `events` (a transaction whose binlog
    /// cache spilled to a file): the group is `events ++ streamed`; the log frames and writes
    /// it from there without building it in memory (`streamed.rs`). `None` for most records.
    pub streamed: Option<StreamedEvents>,
}

impl PendingRecord {
    /// Bytes of the whole event group (`events` and `streamed`).
    pub fn events_len(&self) -> u64 {
        self.events.len() as u64 + self.streamed.as_ref().map_or(0, StreamedEvents::len)
    }

    /// Moves the streamed part of the event group into `events` (a log that needs the group
    /// as bytes: file mode's classic binlog).
    pub fn materialize(&mut self) -> std::io::Result<()> {
        let Some(s) = self.streamed.take() else {
            return Ok(());
        };
        let start = self.events.len();
        let n = usize::try_from(s.source.len()).map_err(|_| std::io::ErrorKind::OutOfMemory)?;
        self.events.resize(start + n, 0);
        s.source.read_at(0, &mut self.events[start..])?;
        self.events.extend_from_slice(&s.tail);
        Ok(())
    }
}

/// Where and as what a record was logged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CommitReceipt {
    pub gtid: Gtid,
    pub lsn: Lsn,
    pub end_lsn: Lsn,
    /// The group's commit id (shared by the records of one group; onelog uses the group's
    /// start LSN + 1, so ids never repeat across restarts).
    pub commit_id: u64,
}

/// A record of a group, as handed to the [`GroupSink`].
pub struct CommittedRecord {
    pub receipt: CommitReceipt,
    pub kind: RecordKind,
    pub payload: Option<Box<dyn Any + Send>>,
}

/// The engine's hook into the pipeline. `apply_group` is called with one or more whole groups
/// (several written groups may be applied in one call), groups in log order, records in log
/// order, one call at a time, after the groups are written (or, with strict_visibility, after
/// they are durable), BEFORE their committers are acknowledged. Must not call back into
/// commit.
///
/// Without strict_visibility it is called by the group leader after its fsync, by the next
/// leader while it waits for an fsync in flight, or by the log's flusher thread during an
/// fsync (`group_commit.rs`, step 4), holding none of the log's locks: it may call
/// `Log::durable_lsn`, `written_lsn`, `end_lsn` and `stats`, but not `commit`, `flush`,
/// `gtid_state` or `shutdown`, and must not wait for anything the flusher does (a level-0/2
/// flush, a sync of unsynced commits).
/// In file mode it runs once the group is in the classic binlog (synced per `sync_binlog`),
/// under the staged commit's turn instead of the appender lock, with the same restrictions
/// (and not `rotate` or `reset` either).
pub trait GroupSink: Send + Sync {
    fn apply_group(&self, group: &mut [CommittedRecord]);

    /// Called (engine mode) under the writer lock before a batch is framed, every earlier
    /// group applied: the indexes of the records to refuse, with why (each committer gets
    /// `LogError::Refused`). The default admits everything.
    fn admit(&self, batch: &[PendingRecord]) -> Vec<(usize, String)> {
        let _ = batch;
        Vec::new()
    }

    /// Whether `admit` must see every earlier group applied to judge `batch`: the log then
    /// applies the written groups still pending before it calls `admit` (engine mode applies
    /// a group after its leader hands on, so without this `admit` may run ahead of them).
    /// The default (false) suits a sink whose `admit` reads no applied state.
    fn needs_applied(&self, batch: &[PendingRecord]) -> bool {
        let _ = batch;
        false
    }

    /// Whether `record` is cheap to apply, so that it may be applied while an fsync runs
    /// (by the flusher or the next leader) instead of after its sync by its leader: an
    /// expensive apply there could delay the next sync. Records over 1 MiB never are. The
    /// default (true) suits a sink whose applies are short.
    fn early_apply(&self, record: &CommittedRecord) -> bool {
        let _ = record;
        true
    }
}

/// What `Log::open` found.
#[derive(Clone, Debug)]
pub struct OpenReport {
    /// Number of the segment the log continues in.
    pub segment: u64,
    pub segment_path: PathBuf,
    /// Byte offset in that file where the next record goes.
    pub offset: u64,
    pub end_lsn: Lsn,
    /// State at end_lsn (gtid_binlog_pos = gtid_state.pos()).
    pub gtid_state: GtidState,
    /// Bytes of a torn tail that were truncated and zeroed (rolled-back records excluded).
    pub torn_bytes: u64,
    /// `LogRecovery::TruncateDamaged` only: the damage it cut (empty when there was none).
    pub damage_cuts: Vec<DamageCut>,
    /// File mode: what two-phase-commit recovery decided. None in engine mode.
    pub binlog: Option<FileModeRecovery>,
}

/// What `Log::open` found in file mode (see `recovery.rs`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileModeRecovery {
    /// Prepared records after the last durable CommitMark that were found in the binlog and
    /// are therefore committed.
    pub committed_in_doubt: u64,
    /// Prepared records after the last durable CommitMark missing from the binlog: cut off
    /// the log (rolled back).
    pub rolled_back: u64,
    /// Groups the binlog holds beyond the log's end (the log lost them: levels 0/2). Reported,
    /// never repaired.
    pub binlog_ahead: u64,
    /// Committed groups of the log the binlog lacks (it lost them: `sync_binlog` != 1 or
    /// levels 0/2), after any catch-up: the two have diverged. Reported, never repaired (only
    /// after an engine-mode run is the binlog caught up, and only from a position verified to
    /// be in the log: `binlog_caught_up`).
    pub binlog_behind: u64,
    /// The classic binlog files, oldest first.
    pub binlog_files: Vec<String>,
    /// Bytes of a torn group cut off the last classic binlog file.
    pub binlog_torn_bytes: u64,
    /// Where the previous file-mode session started (`filemode.since` in the log directory,
    /// see [`filemode`]): only records from there on could be in doubt. None when the previous
    /// run was engine mode or the log is new: every record was committed, nothing in doubt.
    pub file_mode_since: Option<Lsn>,
    /// Groups of the log the classic binlog lacked after an engine-mode run (stale files
    /// from an earlier file-mode run, the lagging mirror's files, or none) that were appended
    /// to it at open, in log order, before the first commit.
    pub binlog_caught_up: u64,
}

/// Counters of the commit pipeline.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LogStats {
    /// Records acknowledged.
    pub commits: u64,
    /// Commit groups (leader turns that logged at least one record).
    pub groups: u64,
    /// `fdatasync` calls on segments holding records (group syncs, flusher syncs, rotations).
    pub fsyncs: u64,
    /// Record bytes written to segment files.
    pub bytes_written: u64,
    /// File mode: `fdatasync` calls on classic binlog files (0 in engine mode).
    pub binlog_fsyncs: u64,
    /// File mode: bytes written to classic binlog files.
    pub binlog_bytes: u64,
    /// Idle SyncMarks written and synced (`LogOptions::idle_sync_mark`); their fsyncs are
    /// counted in `fsyncs` too.
    pub idle_marks: u64,
    /// Where commits spend their time (module docs of `group_commit.rs` name the phases).
    pub phases: CommitPhases,
}

/// Size buckets of [`CommitPhases::group_sizes`]: 1, 2-3, 4-7, 8-15, 16-31, 32-63, 64+.
pub const GROUP_SIZE_BUCKETS: usize = 7;

/// Time the commit path spent in each phase since the log opened, in microseconds, summed
/// over records (queue wait) or over groups (the rest), and the groups by size. Differences of
/// two readings over an interval give each phase's share; `fsync_busy_us` over the interval's
/// length is the fraction of time the log had an fsync in flight (one at a time).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CommitPhases {
    /// From a committer's enqueue until a leader takes its record into a group.
    pub queue_wait_us: u64,
    /// Framing a group: GTIDs, commit id, frames, marks (under the writer lock).
    pub encode_us: u64,
    /// Writing a group's buffer to the segment (levels 1 and 2; level 0 buffers).
    pub write_us: u64,
    /// The group sink applying a group (making it visible).
    pub apply_us: u64,
    /// The part of `apply_us` spent while an fsync ran: by the flusher during a group's own
    /// fsync, or by the next leader waiting for the sync lock. Groups made visible during
    /// their sync, whose leader acknowledges them as soon as it ends.
    pub apply_in_sync_us: u64,
    /// A leader's sync of its group: the wait for the sync lock (an earlier sync running;
    /// less the time it applied groups meanwhile, `apply_in_sync_us`), gathering, and the
    /// fdatasync itself.
    pub sync_us: u64,
    /// Completing the committers' slots after the sync.
    pub ack_us: u64,
    /// Time any fdatasync of a segment was in flight (group syncs, the flusher, rotations).
    pub fsync_busy_us: u64,
    /// Time rotations waited for the next segment's zero-fill (`prealloc.rs`): every commit
    /// behind a rotation waits as long.
    pub rotation_wait_us: u64,
    /// Commit groups by number of records, in [`GROUP_SIZE_BUCKETS`] buckets.
    pub group_sizes: [u64; GROUP_SIZE_BUCKETS],
}

/// A segment of the log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentInfo {
    pub number: u64,
    pub path: PathBuf,
    pub start_lsn: Lsn,
    /// End of its records; for the current segment, the written LSN.
    pub end_lsn: Lsn,
    /// Length of its header block (records start at this file offset).
    pub header_len: u64,
    /// When it stopped being written (its age for `binlog_expire_logs_seconds`): the rotation
    /// that sealed it, or, for a segment found at open, its file's modification time (the open
    /// time where the file system keeps none). None for the current segment.
    pub closed_at: Option<std::time::SystemTime>,
}

impl SegmentInfo {
    /// Its size in the log: header block and framed records ([`position::offset_in_segment`]
    /// of its end), which is what a sealed segment's file holds once trimmed (`trim.rs`), not
    /// the preallocated length. SHOW BINARY LOGS' `File_size` is the classic view's size,
    /// without the framing (`view.rs`).
    pub fn binlog_size(&self) -> u64 {
        position::offset_in_segment(self.header_len, self.start_lsn, self.end_lsn)
    }
}

/// Where a reader starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReadStart {
    /// At this LSN, which must be a record boundary.
    Lsn(Lsn),
    /// At the first record NOT contained in this position.
    Gtid(GtidPos),
}

/// What a reader yields.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReaderOptions {
    /// Yield records up to the written LSN instead of the durable LSN.
    pub include_non_durable: bool,
    /// Yield GtidState records too.
    pub include_state_records: bool,
}

/// A record read back from the log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    pub lsn: Lsn,
    pub end_lsn: Lsn,
    pub kind: RecordKind,
    /// The GTID of a Transaction/Ddl record; None for GtidState/CommitMark records.
    pub gtid: Option<Gtid>,
    pub events: Vec<u8>,
    /// Transaction/Ddl: the aux bytes; GtidState: `GtidState::encode` of the state.
    pub aux: Vec<u8>,
}
