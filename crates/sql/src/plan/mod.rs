//! Planning: a parsed statement, its tables bound (`bind/`), becomes a plan the executors run:
//! expressions compiled in the bound scope, result columns typed (`select`, `dml`); `access`
//! chooses how a table is read (primary key point or range, secondary index, scan) and
//! resolves that choice at run time.
//!
//! Invariants: a plan refers to the catalog it was compiled against; the session compiles it
//! again when the account's privileges or the statement's database changed.
pub(crate) mod access;
pub(crate) mod dml;
pub(crate) mod join;
pub(crate) mod multi_dml;
pub(crate) mod select;
pub(crate) mod view_dml;
