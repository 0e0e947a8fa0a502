//! Binding and planning: a parsed statement becomes a plan the executors run. Names are
//! resolved against the catalog (with the privilege checks of each table) and expressions
//! compiled in the same pass (`select`, `dml`); `access` chooses how a table is read (primary
//! key point or range, secondary index, scan) and resolves that choice at run time.
//!
//! Invariants: a plan refers to the catalog it was compiled against; the session compiles it
//! again when the account's privileges or the statement's database changed.
pub(crate) mod access;
pub(crate) mod dml;
pub(crate) mod select;
