//! The table uses of a SELECT, INSERT, UPDATE or DELETE matched against a session's LOCK
//! TABLES list the way MariaDB's `open_table` does in locked-tables mode: each use of a table
//! (its alias, or its name without one: `FROM t AS x` is `x`) takes one entry of the list
//! locked under that same name, not taken yet by the statement, the one whose mode fits best
//! (a writing one for a use that changes the table). So a table used twice in a statement
//! (a subquery, a self-join) must be locked twice, under its aliases; a use without an entry
//! is 1100 naming its alias, a change through a READ entry 1099.
//!
//! Uses are collected from the statement's syntax (table factors, the INSERT target), so a
//! view counts as one use of its own name; its base tables are checked by name when the view
//! is compiled (`ExecContext::check_table_privilege`), as the view's lock brought them.
//! Names of CTEs and tables of `information_schema` / `performance_schema` are not uses.

use std::ops::ControlFlow;

use sqlparser::ast::{self, Visit, Visitor};

use super::{exempt, not_locked, read_locked, LockedTable};
use crate::error::SqlError;

/// One use of a table by a statement.
#[derive(Debug)]
struct Use {
    db: String,
    table: String,
    alias: String,
    write: bool,
}

/// Collects the uses of the table factors of a statement (CTE names left out).
struct Collect<'a> {
    current_db: Option<&'a str>,
    ctes: Vec<String>,
    uses: Vec<Use>,
}

impl Collect<'_> {
    fn add(&mut self, name: &ast::ObjectName, alias: Option<&str>, write: bool) {
        let parts = crate::expr::object_name_parts(name);
        let (db, table) = match parts.as_slice() {
            [t] => {
                if self.ctes.iter().any(|c| c == t) || t.eq_ignore_ascii_case("dual") {
                    return;
                }
                // Without a database the statement fails elsewhere (1046).
                let Some(db) = self.current_db else { return };
                (db.to_string(), t.clone())
            }
            [d, t] => (d.clone(), t.clone()),
            _ => return,
        };
        if exempt(&db) {
            return;
        }
        let alias = alias.map_or_else(|| table.clone(), str::to_string);
        self.uses.push(Use {
            db,
            table,
            alias,
            write,
        });
    }
}

impl Visitor for Collect<'_> {
    type Break = ();

    fn pre_visit_query(&mut self, q: &ast::Query) -> ControlFlow<()> {
        if let Some(w) = &q.with {
            for c in &w.cte_tables {
                self.ctes.push(c.alias.name.value.clone());
            }
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, f: &ast::TableFactor) -> ControlFlow<()> {
        if let ast::TableFactor::Table { name, alias, .. } = f {
            let alias = alias.as_ref().map(|a| a.name.value.as_str());
            self.add(name, alias, false);
        }
        ControlFlow::Continue(())
    }
}

/// Marks as writes the uses named (alias or name) `target`, or the first use when `target`
/// is None.
fn mark_write(uses: &mut [Use], from: usize, target: Option<&str>) {
    match target {
        None => {
            if let Some(u) = uses.get_mut(from) {
                u.write = true;
            }
        }
        Some(t) => {
            for u in uses.iter_mut().skip(from).filter(|u| u.alias == t) {
                u.write = true;
            }
        }
    }
}

/// The last part of a name (`a.b` -> `b`).
fn last_part(n: &ast::ObjectName) -> Option<String> {
    crate::expr::object_name_parts(n).pop()
}

/// Checks the table uses of `stmt` against `locked` (module docs); statements other than
/// SELECT, INSERT, UPDATE and DELETE pass (their tables are checked by name).
pub(crate) fn check_statement(
    stmt: &ast::Statement,
    current_db: Option<&str>,
    locked: &[LockedTable],
) -> Result<(), SqlError> {
    let mut c = Collect {
        current_db,
        ctes: Vec::new(),
        uses: Vec::new(),
    };
    match stmt {
        ast::Statement::Query(_) => {
            let _ = stmt.visit(&mut c);
        }
        ast::Statement::Insert(i) => {
            if let ast::TableObject::TableName(n) = &i.table {
                c.add(n, None, true);
            }
            let _ = stmt.visit(&mut c);
        }
        ast::Statement::Update(u) => {
            let _ = stmt.visit(&mut c);
            // The tables its SET assigns (by qualifier; an unqualified column: the first).
            let mut any = false;
            for a in &u.assignments {
                if let ast::AssignmentTarget::ColumnName(n) = &a.target {
                    let parts = crate::expr::object_name_parts(n);
                    if parts.len() >= 2 {
                        mark_write(&mut c.uses, 0, Some(&parts[parts.len() - 2]));
                        any = true;
                    }
                }
            }
            if !any {
                mark_write(&mut c.uses, 0, None);
            }
        }
        ast::Statement::Delete(d) => {
            let _ = stmt.visit(&mut c);
            if d.tables.is_empty() {
                mark_write(&mut c.uses, 0, None);
            } else {
                for n in &d.tables {
                    if let Some(t) = last_part(n) {
                        mark_write(&mut c.uses, 0, Some(&t));
                    }
                }
            }
        }
        _ => return Ok(()),
    }
    match_uses(&c.uses, locked)
}

/// Gives each use an entry of `locked` (module docs): writes first, so that a READ entry is
/// not taken by a write that a WRITE entry of the same name would serve.
fn match_uses(uses: &[Use], locked: &[LockedTable]) -> Result<(), SqlError> {
    let mut taken = vec![false; locked.len()];
    let mut order: Vec<&Use> = uses.iter().filter(|u| u.write).collect();
    order.extend(uses.iter().filter(|u| !u.write));
    for u in order {
        let candidates = || {
            locked.iter().enumerate().filter(|(i, l)| {
                !taken[*i] && l.db == u.db && l.table == u.table && l.alias == u.alias
            })
        };
        let best = if u.write {
            candidates()
                .find(|(_, l)| l.mode.writes())
                .or_else(|| candidates().next())
        } else {
            // A READ entry first: the WRITE ones stay for the statement's changes.
            candidates()
                .find(|(_, l)| !l.mode.writes())
                .or_else(|| candidates().next())
        };
        let Some((i, l)) = best else {
            return Err(not_locked(&u.alias));
        };
        if u.write && !l.mode.writes() {
            return Err(read_locked(&u.alias));
        }
        taken[i] = true;
    }
    Ok(())
}
