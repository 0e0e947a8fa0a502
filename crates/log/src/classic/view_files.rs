//! Writing the classic view's files (`crate::view`) as they are: the mirror's way of using a
//! [`ClassicBinlog`]. The view decides every byte (file names, header events, offsets,
//! Rotate events); these methods only put them in files durably, with the same index and
//! in-use-flag rules as the rest of the writer.
//!
//! Called by `crate::mirror` only. Invariant: every write lands at the current end of the
//! current file, at the offset the view placed it for (checked: a mismatch is an error and
//! nothing is written).

use std::path::PathBuf;

use onelog_binlog::event::format_description::LOG_EVENT_BINLOG_IN_USE_F;
use onelog_binlog::event::BINLOG_MAGIC;
use onelog_binlog::{Gtid, GtidState};

use super::format::FDE_FLAGS_OFFSET;
use super::{ClassicBinlog, ClassicFileInfo};
use crate::error::LogError;

impl ClassicBinlog {
    /// Starts view file `name`: magic + `events` (the view's header events, in-use flag set
    /// here), synced with its directory, then named in the index. When the current file is
    /// already called `name` (its header is being repaired) it is rewritten instead. The
    /// GTID state becomes `state`. Does not end the previous file (see
    /// [`end_view_file`](Self::end_view_file)).
    pub(crate) fn begin_view_file(
        &mut self,
        name: &str,
        events: &[u8],
        state: &GtidState,
    ) -> Result<(), LogError> {
        self.usable()?;
        let r = self.begin_view_file_inner(name, events, state);
        r.map_err(|e| self.fail(e))
    }

    fn begin_view_file_inner(
        &mut self,
        name: &str,
        events: &[u8],
        state: &GtidState,
    ) -> Result<(), LogError> {
        let path = self.opts.dir.join(name);
        let mut bytes = Vec::with_capacity(BINLOG_MAGIC.len() + events.len());
        bytes.extend_from_slice(&BINLOG_MAGIC);
        bytes.extend_from_slice(events);
        if bytes.len() <= FDE_FLAGS_OFFSET as usize {
            return Err(LogError::InvalidRecord(format!(
                "the header events of {name} are too short"
            )));
        }
        // The view's header has the flag clear and its CRC computed so; an open file has it set.
        bytes[FDE_FLAGS_OFFSET as usize] |= LOG_EVENT_BINLOG_IN_USE_F as u8;
        let f = self
            .fs
            .open(&path, true)
            .map_err(|e| LogError::io(&path, 0, "create classic binlog", e))?;
        f.set_len(0)
            .map_err(|e| LogError::io(&path, 0, "truncate classic binlog", e))?;
        f.write_all_at(&bytes, 0)
            .map_err(|e| LogError::io(&path, 0, "write classic binlog header", e))?;
        self.sync_file(&f, &path)?;
        self.sync_dir()?;
        let info = ClassicFileInfo {
            name: name.to_string(),
            path: path.clone(),
            size: bytes.len() as u64,
        };
        let replacing = self.files.last().is_some_and(|l| l.name == name);
        if replacing {
            let last = self.files.len() - 1;
            self.files[last] = info;
        } else {
            self.files.push(info);
            self.write_index()?;
        }
        self.bytes_written += bytes.len() as u64;
        self.cur = f;
        self.cur_fde_flags = bytes[FDE_FLAGS_OFFSET as usize];
        self.state = state.clone();
        self.opened_last_gtid_event = None;
        self.dirty = false;
        Ok(())
    }

    /// Appends bytes the view placed at `offset` of the current file (whole events,
    /// `end_log_pos` and CRC already set); `gtid`: the group's, recorded in the state. Not
    /// synced.
    pub(crate) fn append_view_bytes(
        &mut self,
        offset: u64,
        bytes: &[u8],
        gtid: Option<Gtid>,
    ) -> Result<(), LogError> {
        self.usable()?;
        let cur = self.cur_info().clone();
        if cur.size != offset {
            return Err(LogError::Failed(format!(
                "the view places bytes at offset {offset} of {}, which ends at {}",
                cur.name, cur.size
            )));
        }
        if let Err(e) = self.cur.write_all_at(bytes, offset) {
            let e = LogError::io(&cur.path, offset, "write classic binlog", e);
            return Err(self.fail(e));
        }
        let last = self.files.len() - 1;
        self.files[last].size += bytes.len() as u64;
        self.bytes_written += bytes.len() as u64;
        self.dirty = true;
        if let Some(g) = gtid {
            self.state.record(g);
        }
        self.opened_last_gtid_event = None;
        Ok(())
    }

    /// Ends the current file with the view's Rotate event (placed at `offset`): writes it,
    /// clears the in-use flag and syncs the file. The next file comes with
    /// [`begin_view_file`](Self::begin_view_file).
    pub(crate) fn end_view_file(&mut self, offset: u64, rotate: &[u8]) -> Result<(), LogError> {
        self.append_view_bytes(offset, rotate, None)?;
        let info = self.cur_info().clone();
        let cleared = self.cur_fde_flags & !(LOG_EVENT_BINLOG_IN_USE_F as u8);
        let r = self
            .cur
            .write_all_at(&[cleared], FDE_FLAGS_OFFSET)
            .map_err(|e| LogError::io(&info.path, FDE_FLAGS_OFFSET, "clear in-use flag", e))
            .and_then(|()| {
                let cur = self.cur.clone();
                self.sync_file(&cur, &info.path)
            })
            .and_then(|()| {
                self.fs
                    .crash_point(super::CRASH_ROTATE_AFTER_OLD_SYNC)
                    .map_err(|e| LogError::io(&info.path, info.size, "rotate", e))
            });
        match r {
            Ok(()) => {
                self.cur_fde_flags = cleared;
                self.dirty = false;
                Ok(())
            }
            Err(e) => Err(self.fail(e)),
        }
    }

    /// Removes every file and the index (like `reset`), then starts view file `name` as the
    /// only one. Clears a failure.
    pub(crate) fn reset_to_view_file(
        &mut self,
        name: &str,
        events: &[u8],
        state: &GtidState,
    ) -> Result<(), LogError> {
        self.remove_all()?;
        self.files.clear();
        self.failed = None;
        self.closed = false;
        let r = self.begin_view_file_inner(name, events, state);
        debug_assert!(
            r.is_err() || self.files.len() == 1,
            "a reset leaves one file"
        );
        r.map_err(|e| self.fail(e))
    }

    /// Bytes `[offset, offset + len)` of the current file (the mirror's checks at start).
    pub(crate) fn read_current(&self, offset: u64, len: usize) -> Result<Vec<u8>, LogError> {
        let path: PathBuf = self.cur_info().path.clone();
        let mut buf = vec![0u8; len];
        let n = crate::fs::read_full_at(self.cur.as_ref(), &mut buf, offset)
            .map_err(|e| LogError::io(&path, offset, "read classic binlog", e))?;
        buf.truncate(n);
        Ok(buf)
    }
}
