//! onelog's transactional engine: catalog, MVCC table store, row locks, transactions,
//! checkpoints, recovery and the apply path shared by recovery and replicas.
//!
//! Modules, from the top: `engine` (open/recovery, shutdown, accessors) with the `impl Engine`
//! blocks of `ddl` (DDL and accounts), `ctas` (CREATE TABLE ... SELECT), `replica` (applying groups logged elsewhere) and
//! `retention` (PURGE BINARY LOGS, RESET MASTER); `txn` (transactions); `commit` (the commit
//! path below both: commit gate, group sink, AUTO_INCREMENT counters); `scheduler` (checkpoint
//! scheduling and the checkpoint writer); `semisync` (semi-sync replication, primary side: who
//! waits for which replica ack); `apply` (event group -> store: recovery and
//! replicas); `events` (write set -> binlog event group); `store` (immutable roots of
//! persistent maps, snapshots); `catalog` (databases, tables, types, DDL changes); `key`
//! (memcomparable keys); `lock` (row locks); `checkpoint` (checkpoint files); `report`
//! (operator events); `encoding` (compact byte formats); `error`. Beside them, not used by the
//! server yet (docs/PAGED_STORE.md): `base` (the on-disk base of the paged store), `base_format`
//! (what its keys and values are) and `layered` (the merge of sorted layers a read of it goes
//! through). No module imports one above it.
//!
//! Entry points: [`Engine::open`] (recovery), [`Engine::begin`] -> [`Transaction`] (get, scan,
//! insert, update, delete, savepoints, commit), the DDL methods of [`Engine`], and
//! [`Engine::apply_logged_group`] for replicas. A table without a primary key has its rows keyed
//! by a hidden key (`store.rs`); strings compare
//! as bytes (`utf8mb4_bin`-like); a commit is visible before it is durable unless the log runs
//! with `strict_visibility` (see `engine.rs`).
//!
//! Invariants: each module's docs name its own; the crate imports nothing of `sql` or `server`.

pub mod alter;
pub mod apply;
pub mod backup;
mod backup_hold;
pub mod base;
pub mod base_check;
pub mod base_format;
mod budget;
pub mod cached_scan;
pub mod cascade;
pub mod catalog;
pub mod checkpoint;
pub mod collation;
mod collation_tables;
mod commit;
mod convert;
mod ctas;
mod ddl;
pub mod encoding;
pub mod engine;
pub mod error;
pub mod event_cache;
pub mod events;
mod expiry;
mod freeze;
mod index_build;
pub mod key;
pub mod layered;
pub mod lock;
mod online_index;
pub mod origin;
mod prebuild;
mod replica;
pub mod report;
pub mod retention;
pub mod row_cache;
pub mod scheduler;
pub mod semisync;
pub mod store;
pub mod table_data;
mod table_rebuild;
pub mod table_view;
pub mod txn;
pub mod view;

pub use catalog::{
    AccountDef, AuthMethods, Catalog, CatalogChange, CheckDef, ColumnDef, ColumnExtras,
    ColumnSource, ColumnSpec, FkAction, ForeignKeyDef, GrantDef, IndexDef, IndexOptions, IndexSpec,
    IndexUsing, SqlType, TableDef, TableId, TableOptions, TableSpec,
};
pub use ctas::{Duplicates, SelectOutcome};
pub use engine::{Engine, EngineOptions, RecoveryReport, TableStore, TableStoreStats};
pub use error::EngineError;
pub use lock::LockMode;
pub use onelog_log::CommitReceipt;
pub use origin::CommitOrigin;
pub use replica::PreparedRows;
pub use report::{EngineEvent, Reporter, SemiSyncEvent, Severity};
pub use retention::{PurgeTarget, Purged};
pub use scheduler::Backoff;
pub use semisync::{CommitWaiter, SemiSync, SemiSyncClient, SemiSyncStatus, WaitPoint};
pub use store::{IndexRef, KeyRange, Row, RowChange, Snapshot};
pub use txn::{InsertOutcome, Transaction};
pub use view::{ViewAlgorithm, ViewCheck, ViewDef};
