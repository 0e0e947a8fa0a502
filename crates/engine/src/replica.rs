//! Replica apply: an event group logged by another onelog, applied and logged here.
//!
//! Owns [`Engine::apply_logged_group`], the entry point of a replica's applier. The decoding
//! and the apply to a root are `apply.rs`'s (shared with recovery); this module validates the
//! group against the latest root, re-encodes it for this log and logs it through the commit
//! path (`commit.rs`) with its original GTID. Uses `ddl.rs` for the unique-index check;
//! nothing imports it.
//!
//! Invariants: a group is logged only after it applied to a scratch copy of the latest root
//! under the exclusive commit gate (so the sink's apply of it cannot fail, and no local commit
//! or DDL runs between the check and the log); its GTID is the one it was logged with
//! elsewhere. Replicated row changes take no row locks (a replica has no local writers).

use onelog_binlog::event::table_map::RowMetadata;
use onelog_binlog::event::GtidEvent;
use onelog_log::{GtidAssign, PendingRecord, RecordKind};

use crate::apply::{apply_body, decode_record, DecodedBody};
use crate::catalog::{Catalog, CatalogChange};
use crate::commit::CommitPayload;
use crate::ddl::check_unique_index;
use crate::engine::Engine;
use crate::error::EngineError;
use crate::events::{encode_ddl, encode_transaction};
use crate::store::Root;

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
    /// `LogError::Refused`, code 1032) and nothing is logged.
    pub fn apply_replicated_rows(
        &self,
        events: &[u8],
        on_queued: &dyn Fn(),
    ) -> Result<onelog_log::CommitReceipt, EngineError> {
        let core = self.core();
        let catalog = core.store().current().catalog.clone();
        let decoded =
            decode_record(&catalog, events, &[]).map_err(|reason| EngineError::Apply {
                gtid: None,
                lsn: None,
                reason,
            })?;
        let DecodedBody::Rows(changes) = decoded.body else {
            return Err(EngineError::Apply {
                gtid: Some(decoded.gtid_event.gtid),
                lsn: None,
                reason: "a DDL group is not a row group".into(),
            });
        };
        core.commit_replicated(&decoded.gtid_event, changes, on_queued)
    }

    /// Logs an empty replicated transaction with `gtid` (a group that changed nothing here:
    /// its GTID still moves `gtid_binlog_pos` and `gtid_slave_pos`, as on MariaDB).
    pub fn log_replicated_empty(
        &self,
        gtid_event: &GtidEvent,
        on_queued: &dyn Fn(),
    ) -> Result<onelog_log::CommitReceipt, EngineError> {
        self.core()
            .commit_replicated(gtid_event, Vec::new(), on_queued)
    }

    /// After the sink refused a replicated row group, every later one is refused until this
    /// is called: by the replica once every group before the refused one committed and it is
    /// about to retry it (or when its SQL thread starts).
    pub fn clear_replica_refusal(&self) {
        self.core().clear_replica_refusal();
    }
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
                    changes,
                    replicated: true,
                },
            )
        }
        DecodedBody::Ddl { change, query } => {
            let ev = encode_ddl(
                &query.db,
                &query.query,
                change.suppresses_use(),
                gtid.domain_id,
                gtid.server_id,
                ts,
            )?;
            (
                RecordKind::Ddl,
                ev,
                [crate::apply::REPLICATED_AUX, &change.encode()].concat(),
                CommitPayload::Ddl {
                    change,
                    replicated: true,
                },
            )
        }
    };
    Ok(PendingRecord {
        kind,
        gtid: GtidAssign::Fixed(gtid),
        events,
        aux,
        payload: Some(Box::new(payload)),
    })
}
