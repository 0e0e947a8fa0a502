//! onelog's SQL layer, as a pipeline over `onelog_engine`: a statement is parsed, bound and
//! planned, then executed, inside a session. No networking: the server crate drives
//! [`Session`]s.
//!
//! Stages (each imports only the stages before it and the ground below):
//! - `parse/`: statement splitting, comments and versioned comments, the one hand lexer
//!   (`parse/lexer.rs`), the transaction statements, the administration statements by family
//!   (`parse/admin/`), and sqlparser (MySQL dialect) for the rest, with the nesting bound
//!   (`parse/depth.rs`) that keeps every statement within the thread's stack;
//! - `bind/`: names resolved against the catalog with their privilege checks: the FROM tables
//!   and the joined row's layout (`tables`), the target of INSERT / UPDATE / DELETE (`target`);
//! - `plan/`: planning over the bound names: expressions compiled (column names bound in that
//!   scope), result columns, the access path chosen: `select`, `dml`, `access`;
//! - `execute/`: running plans and statements: `select`, `dml`, `ddl`, and `admin/` (SHOW,
//!   SET, accounts, binlog statements, server control, SHOW STATUS);
//! - `expr/`: expressions (IR, compile, eval, types, coercion, numeric, temporal, LIKE) and
//!   the built-in functions by family (`expr/functions/`), used by plans and executors;
//! - `session`: one client session's dispatch (statement splitting, transaction control,
//!   statement atomicity, prepared statements) over its execution context.
//!
//! Ground (imports none of the stages): `context` (the execution context executors and
//! expressions read), `output` (result sets), `sysvar/` (`registry`: every system variable's
//! definition; the parent: their live values and SET), `privilege` (privilege bits, accounts'
//! lookup, the rules and the per-session cache), `server` (shared state: engine, variables,
//! connection registry, open/bootstrap), `status` (status counters), `guard` (per-statement
//! limits: KILL, `max_statement_time`, client liveness, memory and string caps), `error`,
//! `render` (text-protocol values), `wide` (the decimal mantissa), `like` (name patterns).
//!
//! Invariants: no module imports another in a circle; executors and expressions never import the
//! session (the stage rule above).

pub(crate) mod bind;
pub mod context;
pub mod error;
pub mod execute;
pub(crate) mod expr;
pub mod guard;
pub(crate) mod infoschema;
pub(crate) mod like;
pub(crate) mod mysqlschema;
pub mod output;
pub(crate) mod parse;
pub(crate) mod plan;
pub mod privilege;
pub mod querylog;
pub mod render;
pub mod replica_apply;
mod replication;
pub(crate) mod schema_names;
pub mod server;
pub mod session;
pub mod status;
pub mod sysvar;
pub mod table_locks;
pub mod user_locks;
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
