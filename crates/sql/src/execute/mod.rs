//! Execution: runs what `plan` produced (SELECT, INSERT / UPDATE / DELETE) over the session's
//! transaction, the DDL statements against the engine's catalog (`ddl`), and the
//! administration statements (`admin`). Executors read and change only the execution context
//! (`crate::context`) they are handed; the session decides the transaction they run in.
//!
//! Invariants: an executor changes data only through the transaction it is handed.
pub mod admin;
pub(crate) mod algorithm;
pub(crate) mod alter;
pub(crate) mod check;
pub(crate) mod ctas;
pub(crate) mod ddl;
pub(crate) mod dml;
pub(crate) mod explain;
pub(crate) mod fk;
pub(crate) mod join;
pub(crate) mod keys;
pub(crate) mod multi_dml;
pub(crate) mod select;
pub(crate) mod subquery;
pub(crate) mod view;
pub(crate) mod window;
