//! The engine's replica side, as `impl Engine` blocks.
//!
//! Owns the replica's entry points: [`Engine::apply_replicated_rows`] (a row group from a
//! MariaDB or onelog primary, logged with its GTID without row locks, admitted by the log's
//! sink: `commit.rs`), [`Engine::log_replicated_empty`], [`Engine::clear_replica_refusal`],
//! [`Engine::apply_logged_group`] (another onelog's raw log record), the commit origin scope
//! ([`Engine::with_origin`], `origin.rs`), and the replica position API
//! ([`Engine::gtid_slave_pos`], [`Engine::set_gtid_slave_pos`], [`Engine::gtid_current_pos`],
//! [`Engine::wait_slave_pos`], `gtid_strict_mode`). The decoding and the apply to a root are
//! `apply.rs`'s (shared with recovery). Uses `ddl.rs` for the unique-index check; nothing
//! imports it.
//!
//! Invariants: a replicated group is logged only once it applies to the latest data (checked
//! under the exclusive gate, or by the sink's admission before framing), with the GTID it was
//! logged with elsewhere, marked replicated so that it moves `gtid_slave_pos`; a set slave
//! position is durable (checkpointed) before `set_gtid_slave_pos` returns.

use onelog_binlog::event::table_map::RowMetadata;
use std::time::Duration;

use onelog_binlog::event::GtidEvent;
use onelog_binlog::{Gtid, GtidPos};
use onelog_log::{GtidAssign, PendingRecord, RecordKind};

use crate::apply::{apply_body, decode_record, DecodedBody};
use crate::catalog::{Catalog, CatalogChange};
use crate::commit::CommitPayload;
use crate::ddl::check_unique_index;
use crate::engine::Engine;
use crate::error::EngineError;
use crate::events::{encode_ddl_rows, encode_ddl_with_mode, encode_transaction};
use crate::origin::CommitOrigin;
use crate::store::{Root, RowChange};
use onelog_binlog::event::rows::NO_FOREIGN_KEY_CHECKS_F;

impl Engine {
    /// Replica path: applies an event group logged elsewhere (another onelog's log record:
    /// `events` and `aux`) and logs it here with its original GTID. The group is decoded and
    /// applied to a scratch root first, so a group that does not apply is refused without being
    /// logged. Replicated row changes take no row locks (a replica has no local writers).
    pub fn apply_logged_group(&self, events: &[u8], aux: &[u8]) -> Result<(), EngineError> {
        let core = self.core();
        core.check_open()?;
        let gate = core.exclusive();
        let root = core.store().current();
        let decoded =
            decode_record(&root.catalog, events, aux).map_err(|reason| EngineError::Apply {
                gtid: None,
                lsn: None,
                reason,
            })?;
        check_applies(&root, &decoded.body, &decoded.gtid_event)?;
        let gtid = decoded.gtid_event.gtid;
        let record = re_encode(
            &root.catalog,
            decoded.body,
            &decoded.gtid_event,
            self.binlog_row_metadata(),
        )?;
        debug_assert!(std::sync::Arc::ptr_eq(&root, &core.store().current()));
        let receipt =
            core.log_exclusive(&gate, record, || format!("logging replicated GTID {gtid}"))?;
        debug_assert_eq!(receipt.gtid, gtid, "a replicated group keeps its GTID");
        Ok(())
    }
}

impl Engine {
    /// Replica path for a row-based group from a MariaDB or onelog primary (Table_map and
    /// Write/Update/Delete_rows with full images, `BEGIN`/`COMMIT`, Xid; Annotate_rows and
    /// other informational events ignored): decoded against the latest catalog and logged here
    /// with its original GTID, marked replicated (it moves `gtid_slave_pos`). No row locks:
    /// the log's sink admits it against the latest data and everything queued before it, so
    /// `on_queued` lets the next group queue behind it (parallel workers keep their primary's
    /// order); a group that does not apply is refused (`EngineError::Log` with
    /// `LogError::Refused`, code 1032) and nothing is logged. [`Engine::prepare_replicated_rows`]
    /// then [`Engine::commit_prepared_rows`].
    pub fn apply_replicated_rows(
        &self,
        events: &[u8],
        on_queued: &dyn Fn(),
    ) -> Result<onelog_log::CommitReceipt, EngineError> {
        let rows = self.prepare_replicated_rows(events)?;
        self.commit_prepared_rows(events, rows, on_queued)
    }

    /// The first half of [`Engine::apply_replicated_rows`], which needs no turn: decodes a
    /// row group and encodes its record for this log against the latest catalog, so that a
    /// replica worker does it before it waits for the groups ahead of it. A group that must be
    /// derived against the data (a cascade), or a log that does not admit before framing,
    /// leaves it to the commit, which handles the group whole.
    pub fn prepare_replicated_rows(&self, events: &[u8]) -> Result<PreparedRows, EngineError> {
        let core = self.core();
        if !core.log().admits_before_framing() {
            return Ok(PreparedRows(None));
        }
        let catalog = core.store().current().catalog.clone();
        let (gtid_event, changes) = decode_rows(&catalog, events)?;
        if may_cascade(&catalog, &changes) {
            return Ok(PreparedRows(None));
        }
        let record = core.replicated_record(&catalog, &gtid_event, changes, &|_| 0)?;
        Ok(PreparedRows(Some((catalog, gtid_event, record))))
    }

    /// Logs `events`, which [`Engine::prepare_replicated_rows`] prepared as `rows`, in its
    /// turn; prepared again when a DDL moved the catalog meanwhile.
    pub fn commit_prepared_rows(
        &self,
        events: &[u8],
        mut rows: PreparedRows,
        on_queued: &dyn Fn(),
    ) -> Result<onelog_log::CommitReceipt, EngineError> {
        let core = self.core();
        while let Some((catalog, gtid_event, record)) = rows.0 {
            if let Some(r) = core.commit_replicated_record(&catalog, &gtid_event, record, on_queued)
            {
                return r;
            }
            rows = self.prepare_replicated_rows(events)?;
        }
        // Handled whole, under the exclusive gate.
        let catalog = core.store().current().catalog.clone();
        let (gtid_event, changes) = decode_rows(&catalog, events)?;
        if !may_cascade(&catalog, &changes) {
            return core.commit_replicated_checked(&gtid_event, changes, on_queued);
        }
        // A MariaDB primary logs a parent's change without the rows its cascade changed:
        // derive them here, against the latest data (a onelog primary logged them before the
        // parent, so nothing is left to derive).
        let flags = crate::apply::rows_flags(events).map_err(|reason| EngineError::Apply {
            gtid: Some(gtid_event.gtid),
            lsn: None,
            reason,
        })?;
        let checked = |i: usize| {
            flags
                .get(i)
                .is_some_and(|f| f & NO_FOREIGN_KEY_CHECKS_F == 0)
        };
        // Where each change of the group to log came from (None: derived), for its flags:
        // the derived ones and those that had it carry NO_FOREIGN_KEY_CHECKS_F.
        let sources = std::cell::RefCell::new(Vec::new());
        let derive = |root: &Root, changes: Vec<RowChange>| {
            let (out, from) = crate::cascade::derive_replicated(root, changes, &checked)?;
            *sources.borrow_mut() = from;
            Ok(out)
        };
        let out_flags = |i: usize| match sources.borrow().get(i) {
            Some(Some(j)) => flags.get(*j).map_or(0, |f| f & NO_FOREIGN_KEY_CHECKS_F),
            _ => NO_FOREIGN_KEY_CHECKS_F,
        };
        core.commit_replicated_derived(&gtid_event, changes, &derive, &out_flags, on_queued)
    }

    /// Logs an empty replicated transaction with `gtid` (a group that changed nothing here:
    /// its GTID still moves `gtid_binlog_pos` and `gtid_slave_pos`, as on MariaDB).
    pub fn log_replicated_empty(
        &self,
        gtid_event: &GtidEvent,
        on_queued: &dyn Fn(),
    ) -> Result<onelog_log::CommitReceipt, EngineError> {
        self.core().commit_replicated_empty(gtid_event, on_queued)
    }

    /// After the sink refused a replicated row group, every later one is refused until this
    /// is called: by the replica once every group before the refused one committed and it is
    /// about to retry it (or when its SQL thread starts).
    pub fn clear_replica_refusal(&self) {
        self.core().clear_replica_refusal();
    }
}

/// Decodes a row group against `catalog`: its GTID event and its changes (a DDL group is an
/// error here).
fn decode_rows(
    catalog: &Catalog,
    events: &[u8],
) -> Result<(GtidEvent, Vec<RowChange>), EngineError> {
    let decoded = decode_record(catalog, events, &[]).map_err(|reason| EngineError::Apply {
        gtid: None,
        lsn: None,
        reason,
    })?;
    match decoded.body {
        DecodedBody::Rows(changes) => Ok((decoded.gtid_event, changes)),
        _ => Err(EngineError::Apply {
            gtid: Some(decoded.gtid_event.gtid),
            lsn: None,
            reason: "a DDL group is not a row group".into(),
        }),
    }
}

/// A replicated row group decoded and encoded ahead of its turn
/// ([`Engine::prepare_replicated_rows`]): the catalog it was decoded against, its GTID event
/// and its record for this log; None when the commit handles the group whole.
pub struct PreparedRows(
    Option<(
        std::sync::Arc<Catalog>,
        GtidEvent,
        onelog_log::PendingRecord,
    )>,
);

/// Whether a parent change of `changes` (a Delete or Update) is of a table that a CASCADE or
/// SET NULL foreign key references (each table looked at once).
fn may_cascade(catalog: &Catalog, changes: &[RowChange]) -> bool {
    let mut seen: Vec<crate::catalog::TableId> = Vec::new();
    for c in changes {
        let t = c.table();
        if matches!(c, RowChange::Insert { .. }) || seen.contains(&t) {
            continue;
        }
        seen.push(t);
        if catalog
            .table(t)
            .is_some_and(|d| crate::cascade::cascades_from(catalog, d))
        {
            return true;
        }
    }
    false
}

/// Applies `body` to a scratch copy of `root` (and checks a new unique index for duplicates):
/// the error the group would meet when the sink applies it.
fn check_applies(
    root: &Root,
    body: &DecodedBody,
    gtid_event: &GtidEvent,
) -> Result<(), EngineError> {
    let mut scratch = root.clone();
    apply_body(&mut scratch, body).map_err(|reason| EngineError::Apply {
        gtid: Some(gtid_event.gtid),
        lsn: None,
        reason,
    })?;
    if let DecodedBody::Ddl {
        change: CatalogChange::CreateIndex { table, index },
        ..
    } = body
    {
        if index.unique {
            check_unique_index(&scratch, *table, index)?;
        }
    }
    Ok(())
}

/// The log record of a decoded group for this log: same GTID and timestamp, events encoded
/// against `catalog`, the change as the sink's payload.
fn re_encode(
    catalog: &Catalog,
    body: DecodedBody,
    gtid_event: &GtidEvent,
    metadata: RowMetadata,
) -> Result<PendingRecord, EngineError> {
    let gtid = gtid_event.gtid;
    let ts = gtid_event.timestamp;
    let (kind, events, aux, payload) = match body {
        DecodedBody::Rows(changes) => {
            let ev = encode_transaction(
                catalog,
                &changes,
                gtid.domain_id,
                gtid.server_id,
                ts,
                gtid.seq_no,
                metadata,
            )?;
            (
                RecordKind::Transaction,
                ev,
                crate::apply::REPLICATED_AUX.to_vec(),
                CommitPayload::Rows {
                    txn: None,
                    changes: std::sync::Arc::new(changes),
                    replicated: true,
                    prebuilt: None,
                },
            )
        }
        DecodedBody::Ddl {
            change,
            query,
            rows,
        } if !rows.is_empty() => {
            // CREATE TABLE ... SELECT: the rows against the catalog with the table created.
            let after = catalog.apply(&change)?;
            let ev = encode_ddl_rows(
                &after,
                &rows,
                (&query.db, &query.query),
                (gtid.domain_id, gtid.server_id, ts),
                metadata,
            )?;
            (
                RecordKind::Ddl,
                ev,
                [crate::apply::REPLICATED_AUX, &change.encode()].concat(),
                CommitPayload::Ddl {
                    change,
                    rows,
                    replicated: true,
                    validated: None,
                },
            )
        }
        DecodedBody::Ddl { change, query, .. } => {
            // The primary's sql_mode (strictness of an ALTER TABLE's copy) goes on downstream.
            let mode = match query.sql_mode {
                0 => onelog_binlog::event::query::DEFAULT_SQL_MODE,
                m => m,
            };
            let ev = encode_ddl_with_mode(
                &query.db,
                &query.query,
                change.suppresses_use(),
                mode,
                (gtid.domain_id, gtid.server_id, ts),
            )?;
            (
                RecordKind::Ddl,
                ev,
                [crate::apply::REPLICATED_AUX, &change.encode()].concat(),
                CommitPayload::Ddl {
                    change,
                    rows: Vec::new(),
                    replicated: true,
                    validated: None,
                },
            )
        }
    };
    Ok(PendingRecord {
        kind,
        gtid: GtidAssign::Fixed(gtid),
        events,
        aux,
        streamed: None,
        payload: Some(Box::new(payload)),
    })
}

impl Engine {
    /// Runs `f` with `origin` in scope on this thread: every commit and DDL `f` makes is
    /// logged as the origin says (module docs). Returns `f`'s result and the origin as `f`
    /// left it (`seq_no` cleared once used).
    pub fn with_origin<R>(&self, origin: CommitOrigin, f: impl FnOnce() -> R) -> (R, CommitOrigin) {
        let prev = crate::origin::enter(origin);
        let r = f();
        let after = crate::origin::leave(prev);
        (r, after.unwrap_or(origin))
    }

    /// The GTID of the last commit made on this thread (`@@last_gtid`).
    pub fn thread_last_gtid() -> Option<Gtid> {
        crate::origin::last_gtid()
    }

    /// `@@gtid_slave_pos`.
    pub fn gtid_slave_pos(&self) -> GtidPos {
        self.core().store().current().slave_pos.clone()
    }

    /// `SET GLOBAL gtid_slave_pos` (and DEMOTE): durable before it returns (a checkpoint of
    /// the root carrying it is written: the log after it only moves the position further).
    /// The caller checks that no replica thread runs and MariaDB's 1947/1948 rules.
    pub fn set_gtid_slave_pos(&self, pos: GtidPos) -> Result<(), EngineError> {
        let core = self.core();
        core.check_open()?;
        {
            let gate = core.exclusive();
            core.publish_slave_pos(&gate, pos);
        }
        self.checkpoints().write(core, true)?;
        Ok(())
    }

    /// `@@gtid_current_pos` (REPLICATION_FACTS.md §2.1): per domain, the binlog's last GTID if
    /// its server id is this server's and its seq_no is above the slave position's, else the
    /// slave position's; domains only in the binlog under other server ids are left out.
    pub fn gtid_current_pos(&self) -> GtidPos {
        let own = self.options().server_id;
        let slave = self.gtid_slave_pos();
        let mut pos = slave.clone();
        for g in self.log().gtid_state().pos().iter() {
            if g.server_id != own {
                continue;
            }
            match slave.get(g.domain_id) {
                Some(s) if s.seq_no >= g.seq_no => {}
                _ => pos.set(g),
            }
        }
        pos
    }

    /// Waits up to `timeout` for `gtid_slave_pos` to satisfy `until`; true when it does.
    pub fn wait_slave_pos(&self, until: &dyn Fn(&GtidPos) -> bool, timeout: Duration) -> bool {
        let deadline = std::time::Instant::now() + timeout;
        let mut seen = self.core().wait_slave_pos_moved(u64::MAX, Duration::ZERO);
        loop {
            if until(&self.gtid_slave_pos()) {
                return true;
            }
            let now = std::time::Instant::now();
            if now >= deadline {
                return false;
            }
            seen = self.core().wait_slave_pos_moved(seen, deadline - now);
        }
    }

    /// `@@gtid_strict_mode`: a commit whose GTID would not be above its domain's last fails
    /// with 1950 (the log refuses it: `LogError::GtidOutOfOrder`).
    pub fn set_gtid_strict_mode(&self, on: bool) {
        self.log().set_gtid_strict_mode(on);
    }

    pub fn gtid_strict_mode(&self) -> bool {
        self.log().gtid_strict_mode()
    }
}
