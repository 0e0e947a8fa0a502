//! onelog's SQL layer: parsing (sqlparser, MySQL dialect), planning and execution over
//! `onelog_engine`, sessions, and (in `admin/`) system variables, status, accounts and the
//! administration statements. No networking: the server crate drives [`Session`]s.
//!
//! Modules: `server` (shared state, open/bootstrap), `session` (dispatch, transactions,
//! prepared statements), `parse` (splitting, comments, hand-parsed transaction statements),
//! `expr` (expressions and functions), `plan` (index selection), `select`, `dml`, `ddl`,
//! `render` (text protocol values), `error`, `guard` (per-statement limits: KILL,
//! `max_statement_time`, client liveness, memory and string caps), `admin` (s3), `depth`
//! (bounds on statement nesting, so no statement can overflow a stack).

pub mod context;
pub mod error;
pub mod execute;
pub(crate) mod expr;
pub mod guard;
pub(crate) mod like;
pub mod output;
pub(crate) mod parse;
pub(crate) mod plan;
pub mod privilege;
pub mod render;
pub mod server;
pub mod session;
pub mod status;
pub mod sysvar;
pub(crate) mod wide;

pub use context::ExecContext;
pub use error::SqlError;
pub use guard::DEFAULT_MAX_SESSION_MEM_USED;
pub use onelog_binlog::Value;
pub use onelog_engine::{EngineEvent, Reporter, Severity};
pub use output::{Column, Output, PreparedInfo};
pub use parse::depth::THREAD_STACK_SIZE;
pub use parse::statement_text_of_bytes;
pub use server::{
    Account, BinlogStorageMode, ConnectionGuard, ConnectionInfo, RootAuth, Server, ServerConfig,
};
pub use session::Session;
