//! Binding: the names a statement uses resolved to catalog objects, with their privilege
//! checks (1142 before 1146, as in MariaDB): the FROM tables and joins of a SELECT laid out in
//! the joined row (`tables.rs`), the target table and columns of INSERT / UPDATE / DELETE
//! (`target.rs`). Column names inside expressions are bound by the expression compiler
//! (`expr/compile.rs`) against the scope built here. The planner (`plan/`) calls in here
//! first, then compiles and chooses access paths.
//!
//! Invariants: a resolved table was checked for the privilege the statement needs on it
//! before its existence was looked up; a joined row's layout gives every FROM table a
//! contiguous range of column positions, in FROM order (asserted in `tables.rs`).

pub(crate) mod tables;
pub(crate) mod target;
