//! Binding and planning: a parsed statement becomes a plan the executors run. Names are
//! resolved against the catalog (with the privilege checks of each table) and expressions
//! compiled in the same pass (`select`, `dml`); `access` chooses how a table is read (primary
//! key point or range, secondary index, scan) and resolves that choice at run time.
pub(crate) mod access;
pub(crate) mod dml;
pub(crate) mod select;
