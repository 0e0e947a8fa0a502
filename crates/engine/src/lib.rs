//! onelog's transactional engine: catalog, MVCC table store, row locks, transactions,
//! checkpoints, recovery and the apply path shared by recovery and replicas.
//!
//! Modules: `catalog` (databases, tables, types, DDL changes), `key` (memcomparable keys),
//! `store` (immutable roots of persistent maps, snapshots), `txn` (transactions), `events`
//! (write set -> binlog event group), `apply` (event group -> store: recovery and replicas),
//! `engine` (open/recovery, DDL, commit through the log's group sink, checkpoints), `lock`
//! (row locks), `checkpoint` (checkpoint files), `encoding` (compact byte formats), `error`.
//!
//! Entry points: [`Engine::open`] (recovery), [`Engine::begin`] -> [`Transaction`] (get, scan,
//! insert, update, delete, savepoints, commit), the DDL methods of [`Engine`], and
//! [`Engine::apply_logged_group`] for replicas. Every table needs a primary key; strings compare
//! as bytes (`utf8mb4_bin`-like); a commit is visible before it is durable unless the log runs
//! with `strict_visibility` (see `engine.rs`).

pub mod apply;
pub mod catalog;
pub mod checkpoint;
pub mod encoding;
pub mod engine;
pub mod error;
pub mod events;
pub mod key;
pub mod lock;
pub mod report;
pub mod store;
pub mod txn;

pub use catalog::{
    AccountDef, AuthMethods, Catalog, CatalogChange, ColumnDef, ColumnSpec, GrantDef, IndexDef,
    IndexSpec, SqlType, TableDef, TableId, TableSpec,
};
pub use engine::{Engine, EngineOptions, RecoveryReport};
pub use error::EngineError;
pub use lock::LockMode;
pub use onelog_log::CommitReceipt;
pub use report::{EngineEvent, Reporter, Severity};
pub use store::{IndexRef, KeyRange, Row, RowChange, Snapshot};
pub use txn::{InsertOutcome, Transaction};
