//! onelog's SQL layer: parsing (sqlparser, MySQL dialect), planning and execution over
//! `onelog_engine`, sessions, and (in `admin/`) system variables, status, accounts and the
//! administration statements. No networking: the server crate drives [`Session`]s.
//!
//! Modules: `server` (shared state, open/bootstrap), `session` (dispatch, transactions,
//! prepared statements), `parse` (splitting, comments, hand-parsed transaction statements),
//! `expr` (expressions and functions), `plan` (index selection), `select`, `dml`, `ddl`,
//! `render` (text protocol values), `error`, `admin` (s3), `depth` (bounds on statement nesting,
//! so no statement can overflow a stack).

pub mod admin;
pub(crate) mod ddl;
pub(crate) mod depth;
pub(crate) mod dml;
pub mod error;
pub(crate) mod expr;
pub(crate) mod parse;
pub(crate) mod plan;
pub mod render;
pub(crate) mod select;
pub mod server;
pub mod session;

pub use depth::THREAD_STACK_SIZE;
pub use error::SqlError;
pub use onelog_binlog::Value;
pub use server::{
    Account, BinlogStorageMode, ConnectionGuard, ConnectionInfo, Server, ServerConfig,
};
pub use session::{Column, Output, PreparedInfo, Session};
