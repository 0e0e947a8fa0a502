//! Execution: runs planned statements against the engine.
pub mod admin;
pub(crate) mod ddl;
pub(crate) mod dml;
pub(crate) mod select;
