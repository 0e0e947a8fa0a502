//! The parent side of FOREIGN KEY constraints, as InnoDB runs it: when a parent row is
//! deleted or its referenced key changes, each child row that references the old key is
//! refused (RESTRICT / NO ACTION: 1451), deleted (ON DELETE CASCADE), set to NULL in the
//! constraint's columns (SET NULL) or rewritten to the new key (ON UPDATE CASCADE), and the
//! change of a child row is itself a parent change for its own children (recursively).
//!
//! Owns [`on_parent_change`] (the primary: a [`Transaction`]'s statement, rows read and written
//! under row locks) and [`derive_replicated`] (the replica: a MariaDB primary does not log the
//! rows a cascade changes, so a replicated parent change logged with foreign key checks on is
//! given its cascades here, against the latest data), both over the same derivation
//! ([`Walk`]); plus the texts of the constraint errors ([`error_detail`]).
//!
//! Invariants (InnoDB's, `row_ins_foreign_check_on_constraint`):
//! - the children of a row are changed BEFORE the row itself, deepest first: this is the
//!   order of the transaction's change log, so its event group replays to the same rows, and
//!   a MariaDB replica applying it finds no child left to cascade when the parent's event
//!   comes. The cascaded changes are logged with `NO_FOREIGN_KEY_CHECKS_F` (the replica applies
//!   them unchecked: an ON UPDATE CASCADE child then references a key its parent gets just
//!   after);
//! - a row already being deleted in the chain is not a child to act on (a row referencing
//!   itself, a cycle of rows): InnoDB finds it delete-marked. RESTRICT still finds it (a row
//!   referencing itself holds itself back);
//! - a row of a table without primary key is named by its whole value (its primary key
//!   values otherwise), to the transaction and in the chain: of identical rows, each one being
//!   deleted in the chain passes over one of them, the others are children like any row (as
//!   InnoDB's delete-marked row beside its unmarked twins);
//! - a cascaded UPDATE (SET NULL, ON UPDATE CASCADE) of a table that an UPDATE of the chain
//!   (not a DELETE) is changing fails with 1451 (InnoDB refuses cyclic cascaded updates);
//! - a cascade 15 levels below the statement's row fails with 1296 "Got error 193" (InnoDB's
//!   `FK_MAX_CASCADE_DEL`); the whole statement is then rolled back by the caller;
//! - a cascaded update that would put NULL in a NOT NULL column, or a value the child column
//!   cannot hold, fails with 1451.
//!
//! Callers: the SQL layer's DML (`onelog_sql::execute::fk`), with `foreign_key_checks` on;
//! the replica's row apply (`replica.rs`). Never recovery: the log holds the cascaded rows.

use std::ops::ControlFlow;
use std::sync::Arc;

use onelog_binlog::Value;

use crate::catalog::{Catalog, FkAction, ForeignKeyDef, TableDef, TableId};
use crate::error::EngineError;
use crate::lock::LockMode;
use crate::store::{encode_range, hidden_key, IndexRef, KeyRange, Root, RowChange};
use crate::txn::Transaction;

/// InnoDB's `FK_MAX_CASCADE_DEL`: the most ancestors a cascaded change may have.
pub const MAX_CASCADE_DEPTH: usize = 15;

fn quote(s: &str) -> String {
    format!("`{}`", s.replace('`', "``"))
}

fn quote_list(names: &[String]) -> String {
    names
        .iter()
        .map(|n| quote(n))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `CONSTRAINT `x` FOREIGN KEY (`a`) REFERENCES `p` (`id`)` (the parent qualified by its
/// database when it is not the child's, or when `qualify`), without the actions.
pub fn constraint_text(child_db: &str, fk: &ForeignKeyDef, qualify: bool) -> String {
    let parent = if qualify || fk.parent_db != child_db {
        format!("{}.{}", quote(&fk.parent_db), quote(&fk.parent_table))
    } else {
        quote(&fk.parent_table)
    };
    format!(
        "CONSTRAINT {} FOREIGN KEY ({}) REFERENCES {} ({})",
        quote(&fk.name),
        quote_list(&fk.columns),
        parent,
        quote_list(&fk.parent_columns)
    )
}

/// The constraint as InnoDB prints it in errors and SHOW CREATE TABLE: its text and its
/// `ON DELETE` / `ON UPDATE` clauses (none for RESTRICT).
pub fn constraint_with_actions(child_db: &str, fk: &ForeignKeyDef) -> String {
    let mut s = constraint_text(child_db, fk, false);
    if let Some(a) = fk.on_delete.sql() {
        s.push_str(" ON DELETE ");
        s.push_str(a);
    }
    if let Some(a) = fk.on_update.sql() {
        s.push_str(" ON UPDATE ");
        s.push_str(a);
    }
    s
}

/// `` `db`.`child`, CONSTRAINT ... `` (with the actions): what 1451, 1452 and error 193 name
/// (1451/1452 put it in parentheses).
pub fn constraint_ref(child: &TableDef, fk: &ForeignKeyDef) -> String {
    format!(
        "{}.{}, {}",
        quote(&child.db),
        quote(&child.name),
        constraint_with_actions(&child.db, fk)
    )
}

/// `(`db`.`child`, CONSTRAINT ...)`: the tail of 1451 and 1452.
pub fn error_detail(child: &TableDef, fk: &ForeignKeyDef) -> String {
    format!("({})", constraint_ref(child, fk))
}

fn referenced(child: &TableDef, fk: &ForeignKeyDef) -> EngineError {
    EngineError::RowIsReferenced {
        detail: error_detail(child, fk),
    }
}

/// The foreign keys of the tables of `cat` that reference `db`.`name`, with their child (the
/// table itself among them when it references itself).
pub fn referencing<'a>(
    cat: &'a Catalog,
    db: &'a str,
    name: &'a str,
) -> impl Iterator<Item = (&'a TableDef, &'a ForeignKeyDef)> + 'a {
    cat.tables()
        .filter(|c| !c.options.foreign_keys.is_empty())
        .flat_map(move |c| {
            c.options
                .foreign_keys
                .iter()
                .filter(move |fk| fk.parent_db == db && fk.parent_table == name)
                .map(move |fk| (&**c, fk))
        })
}

/// Whether a change of `def`'s rows may cascade: a foreign key with a CASCADE or SET NULL
/// action references it.
pub fn cascades_from(cat: &Catalog, def: &TableDef) -> bool {
    let acts = |a: FkAction| matches!(a, FkAction::Cascade | FkAction::SetNull);
    referencing(cat, &def.db, &def.name).any(|(_, fk)| acts(fk.on_delete) || acts(fk.on_update))
}

/// Whether some key of `t` (its primary key or an index) starts with the columns `cols`.
pub fn key_starting_with(t: &TableDef, cols: &[usize]) -> Option<IndexRef> {
    let starts = |k: &[usize]| k.len() >= cols.len() && k[..cols.len()] == *cols;
    if starts(&t.primary_key) {
        return Some(IndexRef::Primary);
    }
    t.indexes
        .iter()
        .find(|i| starts(&i.columns))
        .map(|i| IndexRef::Secondary(i.name.clone()))
}

/// The positions of the columns `names` of `t` (None when one is missing).
pub fn positions(t: &TableDef, names: &[String]) -> Option<Vec<usize>> {
    names.iter().map(|n| t.column_index(n)).collect()
}

/// The values of `cols` in `row`; None when one is NULL (the row then references nothing).
pub fn key_of(row: &[Value], cols: &[usize]) -> Option<Vec<Value>> {
    let mut out = Vec::with_capacity(cols.len());
    for &c in cols {
        match row.get(c) {
            None | Some(Value::Null) => return None,
            Some(v) => out.push(v.clone()),
        }
    }
    Some(out)
}

/// What names `row` of `def` to [`Transaction::delete`] / [`Transaction::update`] and in the
/// chain's `deleting` list: its primary key values, or, for a table without primary key, the
/// whole row (such a table's rows are found by full-row match, `store.rs`).
fn pk_values(def: &TableDef, row: &[Value]) -> Vec<Value> {
    if hidden_key(def) {
        return row.to_vec();
    }
    def.primary_key
        .iter()
        .map(|&c| row.get(c).cloned().unwrap_or(Value::Null))
        .collect()
}

/// Where a derivation reads child rows and makes its changes.
trait Rows {
    /// The rows of `child` whose key `ix` starts with `key`, locked in `lock` (where rows are
    /// locked); `first`: at most one is needed.
    fn matching(
        &mut self,
        child: &TableDef,
        ix: &IndexRef,
        key: Vec<Value>,
        lock: LockMode,
        first: bool,
    ) -> Result<Vec<Vec<Value>>, EngineError>;
    /// Deletes `row` of `def` (a cascaded change).
    fn delete(&mut self, def: &TableDef, row: &[Value]) -> Result<(), EngineError>;
    /// Replaces `old` of `def` by `new` (a cascaded change).
    fn update(&mut self, def: &TableDef, old: &[Value], new: Vec<Value>)
        -> Result<(), EngineError>;
}

impl Rows for Transaction {
    fn matching(
        &mut self,
        child: &TableDef,
        ix: &IndexRef,
        key: Vec<Value>,
        lock: LockMode,
        first: bool,
    ) -> Result<Vec<Vec<Value>>, EngineError> {
        let mut out = Vec::new();
        self.scan_with(child.id, ix, &KeyRange::prefix(key), Some(lock), |r| {
            out.push(r.to_vec());
            if first {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        })?;
        Ok(out)
    }

    fn delete(&mut self, def: &TableDef, row: &[Value]) -> Result<(), EngineError> {
        self.set_no_foreign_key_checks(true);
        let r = Transaction::delete(self, def.id, &pk_values(def, row));
        self.set_no_foreign_key_checks(false);
        r.map(|_| ())
    }

    fn update(
        &mut self,
        def: &TableDef,
        old: &[Value],
        new: Vec<Value>,
    ) -> Result<(), EngineError> {
        self.set_no_foreign_key_checks(true);
        let r = Transaction::update(self, def.id, &pk_values(def, old), new);
        self.set_no_foreign_key_checks(false);
        r.map(|_| ())
    }
}

/// A replica's derivation: reads and changes a scratch copy of the latest root, and collects
/// the changes it makes in order.
struct Scratch<'a> {
    root: &'a mut Root,
    out: &'a mut Vec<RowChange>,
}

impl Rows for Scratch<'_> {
    fn matching(
        &mut self,
        child: &TableDef,
        ix: &IndexRef,
        key: Vec<Value>,
        _lock: LockMode,
        first: bool,
    ) -> Result<Vec<Vec<Value>>, EngineError> {
        let index = match ix {
            IndexRef::Primary => None,
            IndexRef::Secondary(n) => child.index(n),
        };
        let cols: &[usize] = index.map_or(&child.primary_key, |i| &i.columns);
        let br = encode_range(child, cols, index.is_some(), &KeyRange::prefix(key))?;
        let mut out = Vec::new();
        crate::txn::visit_in_place(self.root, child.id, index, &[br], |r| {
            out.push(r.to_vec());
            if first {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        })?;
        Ok(out)
    }

    fn delete(&mut self, def: &TableDef, row: &[Value]) -> Result<(), EngineError> {
        let c = RowChange::Delete {
            table: def.id,
            before: Arc::new(row.to_vec()),
        };
        self.apply(c)
    }

    fn update(
        &mut self,
        def: &TableDef,
        old: &[Value],
        new: Vec<Value>,
    ) -> Result<(), EngineError> {
        let c = RowChange::Update {
            table: def.id,
            before: Arc::new(old.to_vec()),
            after: Arc::new(new),
        };
        self.apply(c)
    }
}

impl Scratch<'_> {
    fn apply(&mut self, c: RowChange) -> Result<(), EngineError> {
        self.root
            .apply_row_change(&c)
            .map_err(|reason| EngineError::Apply {
                gtid: None,
                lsn: None,
                reason,
            })?;
        self.out.push(c);
        Ok(())
    }
}

/// One change of the chain being derived: the table and whether it is a delete.
struct Node {
    table: TableId,
    delete: bool,
}

/// A derivation in progress: the chain of changes above the one being derived (the
/// statement's row first), and the rows being deleted in it (table, primary key).
struct Walk<'a, R: Rows> {
    cat: &'a Catalog,
    rows: &'a mut R,
    chain: Vec<Node>,
    deleting: Vec<(TableId, Vec<Value>)>,
}

impl<R: Rows> Walk<'_, R> {
    /// The children of `def`'s row `old` (deleted: `new` None, else updated to `new`) under
    /// every foreign key that references `def`: refused, or changed (and their own children
    /// first).
    fn parent_change(
        &mut self,
        def: &TableDef,
        old: &[Value],
        new: Option<&[Value]>,
    ) -> Result<(), EngineError> {
        let cat = self.cat;
        for (child, fk) in referencing(cat, &def.db, &def.name) {
            let Some(pcols) = positions(def, &fk.parent_columns) else {
                continue;
            };
            if new.is_some_and(|n| pcols.iter().all(|&c| n.get(c) == old.get(c))) {
                continue;
            }
            let (Some(key), Some(cols)) = (key_of(old, &pcols), positions(child, &fk.columns))
            else {
                continue;
            };
            let ix = key_starting_with(child, &cols).ok_or_else(|| EngineError::Apply {
                gtid: None,
                lsn: None,
                reason: format!("foreign key {} lost the index it needs", fk.name),
            })?;
            let action = if new.is_some() {
                fk.on_update
            } else {
                fk.on_delete
            };
            let acts = matches!(action, FkAction::Cascade | FkAction::SetNull);
            if !acts {
                let found = self
                    .rows
                    .matching(child, &ix, key, LockMode::Shared, true)?;
                if !found.is_empty() {
                    return Err(referenced(child, fk));
                }
                continue;
            }
            let found = self
                .rows
                .matching(child, &ix, key, LockMode::Exclusive, false)?;
            let new_key: Option<Vec<Value>> =
                new.map(|n| pcols.iter().map(|&c| n[c].clone()).collect());
            // The rows of `child` being deleted in the chain: each passes over one found row
            // identical to it (a table without primary key may hold identical rows, of which
            // only the ones being deleted are not children to act on).
            let mut skip: Vec<Vec<Value>> = self
                .deleting
                .iter()
                .filter(|(t, _)| *t == child.id)
                .map(|(_, k)| k.clone())
                .collect();
            for row in found {
                let pk = pk_values(child, &row);
                if let Some(i) = skip.iter().position(|k| *k == pk) {
                    skip.swap_remove(i);
                    continue;
                }
                self.act(child, fk, (&cols, new_key.as_deref()), row, action)?;
            }
        }
        Ok(())
    }

    /// The action `action` of `fk` on `child`'s row `row` (`cols`: the constraint's columns
    /// in `child`; `new_key`: the parent's new key, None when it is deleted).
    fn act(
        &mut self,
        child: &TableDef,
        fk: &ForeignKeyDef,
        (cols, new_key): (&[usize], Option<&[Value]>),
        row: Vec<Value>,
        action: FkAction,
    ) -> Result<(), EngineError> {
        let delete = new_key.is_none() && action == FkAction::Cascade;
        if !delete && self.chain.iter().any(|n| n.table == child.id && !n.delete) {
            return Err(referenced(child, fk));
        }
        if self.chain.len() >= MAX_CASCADE_DEPTH {
            return Err(EngineError::CascadeTooDeep {
                detail: constraint_ref(child, fk),
            });
        }
        if delete {
            let pk = pk_values(child, &row);
            self.chain.push(Node {
                table: child.id,
                delete: true,
            });
            self.deleting.push((child.id, pk));
            let r = self.parent_change(child, &row, None);
            self.deleting.pop();
            self.chain.pop();
            r?;
            return self.rows.delete(child, &row);
        }
        let mut new = row.clone();
        for (i, &c) in cols.iter().enumerate() {
            let col = &child.columns[c];
            let v = match (action, new_key) {
                (FkAction::Cascade, Some(k)) => col
                    .ty
                    .coerce(&col.name, k[i].clone())
                    .map_err(|_| referenced(child, fk))?,
                _ => Value::Null,
            };
            if v == Value::Null && !col.nullable {
                return Err(referenced(child, fk));
            }
            new[c] = v;
        }
        if new == row {
            return Ok(());
        }
        self.chain.push(Node {
            table: child.id,
            delete: false,
        });
        let r = self.parent_change(child, &row, Some(&new));
        self.chain.pop();
        r?;
        self.rows.update(child, &row, new)
    }
}

/// The parent side of a row change of `def` made by `txn` (the row `old` deleted: `new` None;
/// or updated to `new`), with foreign key checks on: every child row is refused (1451),
/// or changed by its constraint's action (recursively) before the caller writes the row. Call
/// before the row changes. Children refused are share-locked, children changed are
/// exclusively locked (they are written). Errors: 1451, 1296 (too deep), a lock's 1205/1213,
/// the child change's own (a duplicate key).
pub fn on_parent_change(
    txn: &mut Transaction,
    cat: &Catalog,
    def: &TableDef,
    old: &[Value],
    new: Option<&[Value]>,
) -> Result<(), EngineError> {
    let mut walk = Walk {
        cat,
        rows: txn,
        chain: vec![Node {
            table: def.id,
            delete: new.is_none(),
        }],
        deleting: Vec::new(),
    };
    if new.is_none() {
        walk.deleting.push((def.id, pk_values(def, old)));
    }
    walk.parent_change(def, old, new)
}

/// A replicated row group with the cascades its primary did not log: `changes` in order, each
/// parent Delete/Update whose `checked(i)` (its rows event came without
/// `NO_FOREIGN_KEY_CHECKS_F`) of a table a CASCADE/SET NULL foreign key references preceded by
/// the changes its cascade makes against `root` (the latest data, with the group's earlier
/// changes). A stream from onelog carries its cascades before their parent: the derivation
/// then finds no child left. Returns the group to log and, for each of its changes, the index
/// in `changes` it came from (None: derived). Errors as [`on_parent_change`] (1451: the
/// replica's data differs from its primary's).
#[allow(clippy::type_complexity)]
pub fn derive_replicated(
    root: &Root,
    changes: Vec<RowChange>,
    checked: &dyn Fn(usize) -> bool,
) -> Result<(Vec<RowChange>, Vec<Option<usize>>), EngineError> {
    let mut scratch = root.clone();
    let cat = scratch.catalog.clone();
    let mut out = Vec::with_capacity(changes.len());
    let mut derived = Vec::with_capacity(changes.len());
    for (i, c) in changes.into_iter().enumerate() {
        let parent = match &c {
            RowChange::Delete { table, before } => Some((*table, before.clone(), None)),
            RowChange::Update {
                table,
                before,
                after,
            } => Some((*table, before.clone(), Some(after.clone()))),
            RowChange::Insert { .. } => None,
        };
        if let Some((table, before, after)) = parent.filter(|_| checked(i)) {
            if let Some(def) = cat.table(table).filter(|d| cascades_from(&cat, d)) {
                let start = out.len();
                let mut rows = Scratch {
                    root: &mut scratch,
                    out: &mut out,
                };
                let mut walk = Walk {
                    cat: &cat,
                    rows: &mut rows,
                    chain: vec![Node {
                        table,
                        delete: after.is_none(),
                    }],
                    deleting: if after.is_none() {
                        vec![(table, pk_values(def, &before))]
                    } else {
                        Vec::new()
                    },
                };
                walk.parent_change(def, &before, after.as_deref().map(|v| &v[..]))?;
                debug_assert!(derived.len() == start && start <= out.len());
                derived.resize(out.len(), None);
            }
        }
        scratch
            .apply_row_change(&c)
            .map_err(|reason| EngineError::Apply {
                gtid: None,
                lsn: None,
                reason,
            })?;
        out.push(c);
        derived.push(Some(i));
    }
    debug_assert_eq!(derived.len(), out.len());
    Ok((out, derived))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{CatalogChange, ColumnSpec, IndexSpec, SqlType, TableSpec};

    /// p(id) <- c(id, pid ON DELETE CASCADE ON UPDATE CASCADE) <- g(id, cid ON DELETE SET NULL).
    fn root() -> Root {
        let mut root = Root::empty();
        root.apply_catalog_change(&CatalogChange::CreateDatabase { name: "d".into() })
            .unwrap();
        let fk = |name: &str, col: &str, parent: &str, on_update| ForeignKeyDef {
            name: name.into(),
            columns: vec![col.into()],
            parent_db: "d".into(),
            parent_table: parent.into(),
            parent_columns: vec!["id".into()],
            on_delete: if parent == "p" {
                FkAction::Cascade
            } else {
                FkAction::SetNull
            },
            on_update,
        };
        for (id, name, col, parent) in
            [(1, "p", "", ""), (2, "c", "pid", "p"), (3, "g", "cid", "c")]
        {
            let mut columns =
                vec![ColumnSpec::new("id", SqlType::Int { unsigned: false }).not_null()];
            let mut indexes = Vec::new();
            if !col.is_empty() {
                columns.push(ColumnSpec::new(col, SqlType::Int { unsigned: false }));
                indexes.push(IndexSpec::new(col, &[col], false));
            }
            let spec = TableSpec {
                db: "d".into(),
                name: name.into(),
                columns,
                primary_key: vec!["id".into()],
                indexes,
            };
            let mut table = TableDef::from_spec(id, &spec).unwrap();
            if !col.is_empty() {
                let f = fk(&format!("{name}_ibfk_1"), col, parent, FkAction::Cascade);
                table.options.foreign_keys = vec![f];
            }
            root.apply_catalog_change(&CatalogChange::CreateTable { table })
                .unwrap();
        }
        for (t, rows) in [
            (1, vec![vec![1], vec![2]]),
            (2, vec![vec![10, 1], vec![11, 1], vec![20, 2]]),
            (3, vec![vec![100, 10], vec![200, 20]]),
        ] {
            for r in rows {
                let row = r.into_iter().map(Value::Int).collect();
                root.apply_row_change(&RowChange::Insert {
                    table: t,
                    row: Arc::new(row),
                })
                .unwrap();
            }
        }
        root
    }

    fn del(table: TableId, r: &[i64]) -> RowChange {
        RowChange::Delete {
            table,
            before: Arc::new(r.iter().map(|v| Value::Int(*v)).collect()),
        }
    }

    /// (table, kind, first column) of each change: 'D'elete, 'U'pdate, 'I'nsert.
    fn shape(changes: &[RowChange]) -> Vec<(TableId, char, Value)> {
        changes
            .iter()
            .map(|c| match c {
                RowChange::Delete { table, before } => (*table, 'D', before[0].clone()),
                RowChange::Update { table, after, .. } => (*table, 'U', after[0].clone()),
                RowChange::Insert { table, row } => (*table, 'I', row[0].clone()),
            })
            .collect()
    }

    #[test]
    fn a_checked_parent_delete_gets_its_cascades_before_it_deepest_first() {
        let (out, from) = derive_replicated(&root(), vec![del(1, &[1])], &|_| true).unwrap();
        let i = Value::Int;
        assert_eq!(
            shape(&out),
            vec![
                (3, 'U', i(100)),
                (2, 'D', i(10)),
                (2, 'D', i(11)),
                (1, 'D', i(1))
            ]
        );
        assert_eq!(from, vec![None, None, None, Some(0)]);
        // g's row is set to NULL in its foreign key column.
        let RowChange::Update { after, .. } = &out[0] else {
            panic!("{out:?}")
        };
        assert_eq!(after[1], Value::Null);
    }

    #[test]
    fn a_group_that_carries_its_cascades_or_is_unchecked_gets_none() {
        // As onelog logs it: the children first (unchecked), then the parent.
        let group = vec![
            RowChange::Update {
                table: 3,
                before: Arc::new(vec![Value::Int(100), Value::Int(10)]),
                after: Arc::new(vec![Value::Int(100), Value::Null]),
            },
            del(2, &[10, 1]),
            del(2, &[11, 1]),
            del(1, &[1]),
        ];
        let checked = |i: usize| i == 3;
        let (out, from) = derive_replicated(&root(), group.clone(), &checked).unwrap();
        assert_eq!(out, group);
        assert_eq!(from, vec![Some(0), Some(1), Some(2), Some(3)]);
        // foreign_key_checks=0 on the primary: nothing derived, the children stay.
        let (out, _) = derive_replicated(&root(), vec![del(1, &[1])], &|_| false).unwrap();
        assert_eq!(out.len(), 1);
    }

    #[test]
    fn a_key_update_rewrites_the_children_to_the_new_key() {
        let up = RowChange::Update {
            table: 1,
            before: Arc::new(vec![Value::Int(2)]),
            after: Arc::new(vec![Value::Int(3)]),
        };
        let (out, _) = derive_replicated(&root(), vec![up], &|_| true).unwrap();
        let RowChange::Update {
            table: 2, after, ..
        } = &out[0]
        else {
            panic!("{out:?}")
        };
        assert_eq!(**after, vec![Value::Int(20), Value::Int(3)]);
        assert_eq!(out.len(), 2);
        // g references c ON UPDATE CASCADE: c's key change rewrites g.
        let up = RowChange::Update {
            table: 2,
            before: Arc::new(vec![Value::Int(20), Value::Int(2)]),
            after: Arc::new(vec![Value::Int(21), Value::Int(2)]),
        };
        let (out, _) = derive_replicated(&root(), vec![up], &|_| true).unwrap();
        assert_eq!(shape(&out)[0], (3, 'U', Value::Int(200)));
        let RowChange::Update { after, .. } = &out[0] else {
            panic!("{out:?}")
        };
        assert_eq!(after[1], Value::Int(21));
    }
}
