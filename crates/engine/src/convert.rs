//! The conversion of a data directory of the in-memory store into the paged store
//! (docs/PAGED_STORE.md, build order step 4), done by the open of such a directory with
//! `TableStore::Paged`: a directory upgraded from the in-memory store, or restored from a
//! backup (whose image is a checkpoint file of the in-memory format).
//!
//! Owns [`convert`]. The checkpoint file is verified whole first (its CRC, read a part at a
//! time: `CheckpointFile`), then its body is read again through a window of the index
//! build's chunk size, at most [`WINDOW_BYTES`] (grown only for a row larger than it), and
//! every row, with its index entries, is written into a new base in sorted chunks of that
//! size (`table_rebuild.rs`'s `RowsWriter` into `index_build.rs`'s `Chunks`,
//! `EngineOptions::index_build_chunk_bytes`), each one
//! ingestion; then the root record, as a checkpoint
//! of the base writes it. So a conversion holds a window and a chunk, not the tables: a
//! backup of data many times the memory budget restores and starts within the budget.
//!
//! Invariants:
//! - Nothing in the base directory counts until the control file names it: whatever an
//!   earlier attempt left there is removed first, and the control file switches (the commit
//!   point) only after every ingestion and the root record are durable. A crash before the
//!   switch leaves the in-memory store's directory as it was, and the next open converts
//!   again; after it, the base is used and the checkpoint files are removed.
//! - The rows are the checkpoint's, under the storage ids and hidden row ids its load into
//!   memory gives them (`Root::decode_checkpoint`: storage ids in table order from 1, hidden
//!   ids from 0 in row order), with the same AUTO_INCREMENT counters; the root is read back
//!   from the root record by the paged open's own code (`Root::over_base`), so a converted
//!   directory is from then on an ordinary paged one.
//! - A checkpoint's rows of a table come in primary key order (the writer scans them so); rows
//!   that do not (the same key twice included) are refused as corruption, never merged.

use std::path::Path;
use std::sync::Arc;

use onelog_log::{FileSystem, Lsn};

use crate::base::{Base, BaseError};
use crate::checkpoint::{BodyReader, CheckpointError, CheckpointFile};
use crate::encoding::{FormatError, Reader};
use crate::error::EngineError;
use crate::index_build::Chunks;
use crate::store::{checkpoint_row, Root, BASE_ROOT_META};
use crate::table_rebuild::RowsWriter;
use crate::table_view::Lower;

/// Bytes of a checkpoint body held at a time while it is parsed (more only for a row larger
/// than this).
const WINDOW_BYTES: usize = 4 << 20;

/// Writes the tables of the checkpoint `ckpt` into `base` (freshly created, empty) in chunks
/// of at most `chunk_bytes`, reading its body through a window of at most that many bytes
/// (and [`WINDOW_BYTES`]), then their root record; returns the root the base now holds
/// (module docs). The caller switches the control file.
pub(crate) fn convert(
    ckpt: &CheckpointFile,
    base: &Base,
    chunk_bytes: usize,
) -> Result<Root, EngineError> {
    let chunk_bytes = chunk_bytes.max(1);
    let mut body = BodyWindow {
        ckpt,
        buf: Vec::new(),
        pos: 0,
        start: 0,
        window: chunk_bytes.min(WINDOW_BYTES),
        base_window: chunk_bytes.min(WINDOW_BYTES),
        reader: ckpt.body_reader(),
    };
    let mut root = body.parse(|r| Root::checkpoint_head(r, ckpt.lsn, ckpt.gtid_state.clone()))?;
    let mut counts = imbl::OrdMap::new();
    let mut chunks = Chunks::new(base, chunk_bytes);
    let tables = body.count()?;
    for _ in 0..tables {
        let (def, stored_auto_inc) = body.parse(|r| root.checkpoint_table(r))?;
        let Some(t) = root.tables.get_mut(&def.id) else {
            return Err(body.corrupt("a table section that made no table"));
        };
        let mut w = RowsWriter::new(t.storage, t.next_row_id);
        let rows = body.count()?;
        for _ in 0..rows {
            let row = body.parse(|r| checkpoint_row(r, &def))?;
            w.push(&mut chunks, &def, &row)?;
            if !w.ascending {
                return Err(body.corrupt(format!(
                    "rows of {} out of primary key order",
                    def.qualified_name()
                )));
            }
        }
        counts.insert(t.storage, rows);
        t.next_row_id = w.next_row_id;
        // Raised past the rows, as the in-memory load's puts raise it, and at least the
        // counter the checkpoint kept.
        t.auto_inc_next = w
            .auto_inc_max
            .map_or(t.auto_inc_next, |m| {
                t.auto_inc_next.max(m.saturating_add(1))
            })
            .max(stored_auto_inc);
    }
    if body.left() > 0 {
        return Err(body.corrupt("trailing bytes after the last table"));
    }
    // What was parsed is what the first read verified, before anything claims it.
    body.reader
        .finish()
        .map_err(checkpoint_error(&ckpt.path, ckpt.lsn))?;
    chunks.write()?;
    root.checkpoint_tables_without_rows();
    for t in root.tables.values() {
        counts.entry(t.storage).or_insert(0);
    }
    root.lower = Some(Arc::new(Lower::new(None, None, counts)));
    // After every chunk: the root record is the last thing written, as a checkpoint's.
    let meta = root.encode_base_meta(&[]);
    base.checkpoint(&[(BASE_ROOT_META, &meta)], &[])?;
    Root::over_base(&meta, base.snapshot()).map_err(|e| {
        EngineError::Store(BaseError {
            dir: base.dir().to_path_buf(),
            doing: "reading the root record the conversion wrote",
            detail: e.to_string(),
        })
    })
}

/// The conversion's context for errors about `path`.
fn context(path: &Path, lsn: Lsn) -> String {
    format!(
        "converting checkpoint {} (LSN {lsn}) to the paged store",
        path.display()
    )
}

/// The error of a checkpoint file that could not be read.
fn checkpoint_error(path: &Path, lsn: Lsn) -> impl Fn(CheckpointError) -> EngineError {
    let context = context(path, lsn);
    move |source| EngineError::Checkpoint {
        context: context.clone(),
        source,
    }
}

/// Opens the current checkpoint of `dir` for [`convert`] (None without one).
pub(crate) fn open_checkpoint(
    fs: &dyn FileSystem,
    dir: &Path,
) -> Result<Option<CheckpointFile>, EngineError> {
    CheckpointFile::open_current(fs, dir).map_err(|source| EngineError::Checkpoint {
        context: format!("loading the checkpoint in {}", dir.display()),
        source,
    })
}

/// A checkpoint body parsed through a window of its bytes.
struct BodyWindow<'f> {
    ckpt: &'f CheckpointFile,
    /// Body bytes from `start` on.
    buf: Vec<u8>,
    /// Bytes of `buf` parsed.
    pos: usize,
    /// The body offset of `buf[0]`.
    start: u64,
    /// How many bytes `buf` is filled to; `base_window` when no item is larger.
    window: usize,
    base_window: usize,
    /// Reads the body in order, from `start + buf.len()` on, and checks its CRC at the end.
    reader: BodyReader<'f>,
}

impl BodyWindow<'_> {
    /// Body bytes not parsed yet.
    fn left(&self) -> u64 {
        self.ckpt.body_len - self.start - self.pos as u64
    }

    /// Body bytes not read into the window yet.
    fn unread(&self) -> u64 {
        self.ckpt.body_len - self.reader.position()
    }

    /// `parse` run on the bytes not parsed yet; while it fails by running out of bytes with
    /// body bytes still unread (the window cut the item), more are read and it runs again.
    /// Any other failure is the body's error at once.
    fn parse<T>(
        &mut self,
        mut parse: impl FnMut(&mut Reader<'_>) -> Result<T, FormatError>,
    ) -> Result<T, EngineError> {
        loop {
            let mut r = Reader::new(&self.buf[self.pos..], "checkpoint body");
            match parse(&mut r) {
                Ok(v) => {
                    self.pos += r.position();
                    return Ok(v);
                }
                Err(e) if e.truncated && self.unread() > 0 => self.fill()?,
                Err(e) => {
                    let at = self.start + self.pos as u64 + e.offset as u64;
                    return Err(EngineError::corrupt(
                        context(&self.ckpt.path, self.ckpt.lsn),
                        format!("checkpoint body at byte {at}: {}", e.reason),
                    ));
                }
            }
        }
    }

    /// A count of items in the body (tables, rows), each at least one byte long.
    fn count(&mut self) -> Result<u64, EngineError> {
        let n = self.parse(|r| r.var())?;
        if n > self.left() {
            return Err(self.corrupt(format!("count {n} exceeds the body's remaining bytes")));
        }
        Ok(n)
    }

    /// Drops the parsed bytes and reads the next ones, doubling the window when what is left
    /// of it fills it (an item larger than the window), back to its base size once what is
    /// left is small again.
    fn fill(&mut self) -> Result<(), EngineError> {
        self.buf.drain(..self.pos);
        self.start += self.pos as u64;
        self.pos = 0;
        if self.buf.len() >= self.window {
            self.window = self.window.saturating_mul(2);
        } else if self.buf.len() < self.base_window / 2 {
            self.window = self.base_window;
            self.buf.shrink_to(self.base_window);
        }
        let n = ((self.window - self.buf.len()) as u64).min(self.unread()) as usize;
        let at = self.buf.len();
        self.buf.resize(at + n, 0);
        debug_assert_eq!(self.reader.position(), self.start + at as u64);
        self.reader
            .read(&mut self.buf[at..])
            .map_err(checkpoint_error(&self.ckpt.path, self.ckpt.lsn))
    }

    fn corrupt(&self, reason: impl Into<String>) -> EngineError {
        EngineError::corrupt(
            context(&self.ckpt.path, self.ckpt.lsn),
            format!(
                "checkpoint body at byte {}: {}",
                self.start + self.pos as u64,
                reason.into()
            ),
        )
    }
}
