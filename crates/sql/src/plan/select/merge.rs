//! MariaDB's MERGE for the conditions a view can take: when a SELECT reads one view alone
//! (`SELECT ... FROM v WHERE ...`, no join), the top-level AND terms of its WHERE that name
//! only columns the view passes through unchanged from its one base table are added to the
//! view's own WHERE (rewritten to name the base columns), so the view's SELECT is planned
//! with them: a key on those columns is used instead of computing the whole view. The outer
//! WHERE keeps every term (a pushed term only drops rows the outer WHERE drops anyway).
//!
//! Invariants: a term is pushed only when it means the same on the base row as on the view's
//! row and cannot raise a condition it would not raise outside: it is built from column
//! references (each a view column that is a plain base column, not ENUM, SET or BIT, whose
//! values a derived table reads as text), literals of the column's kind (a number against a
//! numeric column, a string against a text column, NULL), comparisons, BETWEEN, IN lists, IS
//! [NOT] NULL, AND / OR / NOT and parentheses: no function, arithmetic, subquery or
//! placeholder. The view's SELECT takes pushed terms only when it is one plain SELECT of one
//! base table (no DISTINCT, GROUP BY, HAVING, window, ORDER BY, LIMIT or WITH).
//!
//! Called by `plan::select::view` (its caller, `plan::select::subquery::Hook`, hands over the
//! outer WHERE when the view is the SELECT's only table).

use onelog_engine::{SqlType, TableDef};
use sqlparser::ast;

use crate::context::ExecContext;

/// `q` (view `columns`' SELECT, table names already qualified) with the terms of `outer`
/// (the WHERE of a SELECT that reads the view alone under the qualifier `qn`) that can be
/// pushed added to its WHERE; false when nothing was pushed (`q` unchanged).
pub(crate) fn push_where(
    cx: &ExecContext,
    q: &mut ast::Query,
    columns: &[String],
    qn: &str,
    outer: &ast::Expr,
) -> bool {
    let Some((sel, table)) = mergeable(cx, q) else {
        return false;
    };
    let Some(base) = base_columns(sel, &table, columns.len()) else {
        return false;
    };
    let map = Map {
        columns,
        base: &base,
        table: &table,
        qn,
    };
    let mut terms = Vec::new();
    crate::expr::split_and(outer, &mut terms);
    let pushed: Vec<ast::Expr> = terms.into_iter().filter_map(|t| map.rewrite(t)).collect();
    if pushed.is_empty() {
        return false;
    }
    let mut all = sel.selection.take().into_iter().collect::<Vec<_>>();
    all.extend(pushed);
    sel.selection = all
        .into_iter()
        .map(|e| ast::Expr::Nested(Box::new(e)))
        .reduce(|a, b| ast::Expr::BinaryOp {
            left: Box::new(a),
            op: ast::BinaryOperator::And,
            right: Box::new(b),
        });
    true
}

/// The SELECT of `q` and its one base table, when `q` can take pushed terms (module docs).
fn mergeable<'q>(
    cx: &ExecContext,
    q: &'q mut ast::Query,
) -> Option<(&'q mut ast::Select, std::sync::Arc<TableDef>)> {
    let plain_query = q.with.is_none()
        && q.order_by.is_none()
        && q.limit_clause.is_none()
        && q.fetch.is_none()
        && q.locks.is_empty();
    let ast::SetExpr::Select(sel) = &mut *q.body else {
        return None;
    };
    let group_by_empty = matches!(&sel.group_by, ast::GroupByExpr::Expressions(e, m) if e.is_empty() && m.is_empty());
    let plain_select = sel.distinct.is_none()
        && group_by_empty
        && sel.having.is_none()
        && sel.named_window.is_empty()
        && sel.qualify.is_none()
        && sel.into.is_none()
        && sel.prewhere.is_none();
    if !plain_query || !plain_select || sel.from.len() != 1 || !sel.from[0].joins.is_empty() {
        return None;
    }
    let ast::TableFactor::Table {
        name, args: None, ..
    } = &sel.from[0].relation
    else {
        return None;
    };
    let parts = crate::expr::object_name_parts(name);
    let [db, t] = parts.as_slice() else {
        return None;
    };
    let table = cx.server.engine.catalog().table_by_name(db, t).cloned()?;
    Some((sel, table))
}

/// Per view column: the base column it passes through unchanged (its position in `table`),
/// None for a computed one; None as a whole when the SELECT's columns are not `n`.
fn base_columns(sel: &ast::Select, table: &TableDef, n: usize) -> Option<Vec<Option<usize>>> {
    let qualifier = match &sel.from[0].relation {
        ast::TableFactor::Table { alias: Some(a), .. } => a.name.value.clone(),
        _ => table.name.clone(),
    };
    let mut out = Vec::with_capacity(n);
    for item in &sel.projection {
        match item {
            ast::SelectItem::Wildcard(_) => out.extend((0..table.columns.len()).map(Some)),
            ast::SelectItem::QualifiedWildcard(..) => return None,
            ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => {
                let col = match e {
                    ast::Expr::Identifier(c) => Some(c.value.as_str()),
                    ast::Expr::CompoundIdentifier(p) if p.len() == 2 && p[0].value == qualifier => {
                        Some(p[1].value.as_str())
                    }
                    _ => None,
                };
                out.push(col.and_then(|c| table.column_index(c)));
            }
            _ => return None,
        }
    }
    (out.len() == n).then_some(out)
}

/// What a term's column references mean: view columns to base columns.
struct Map<'a> {
    columns: &'a [String],
    base: &'a [Option<usize>],
    table: &'a TableDef,
    qn: &'a str,
}

/// The kind of value a pushed operand has (literals must match their column's).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Number,
    Text,
    Null,
    /// A column of another type (temporal, ...): only compared with columns of that type.
    Other,
}

impl Map<'_> {
    /// `term` rewritten over the base table, when it can be pushed (module docs).
    fn rewrite(&self, term: &ast::Expr) -> Option<ast::Expr> {
        let mut t = term.clone();
        self.check(&mut t)?;
        Some(t)
    }

    /// Rewrites the column references of a boolean term in place; None when it cannot be
    /// pushed.
    fn check(&self, e: &mut ast::Expr) -> Option<()> {
        use ast::BinaryOperator as B;
        match e {
            ast::Expr::Nested(x) => self.check(x),
            ast::Expr::UnaryOp {
                op: ast::UnaryOperator::Not,
                expr,
            } => self.check(expr),
            ast::Expr::BinaryOp { left, op, right } => match op {
                B::And | B::Or => {
                    self.check(left)?;
                    self.check(right)
                }
                B::Eq | B::NotEq | B::Lt | B::LtEq | B::Gt | B::GtEq | B::Spaceship => {
                    let (a, b) = (self.operand(left)?, self.operand(right)?);
                    compatible(&[a, b])
                }
                _ => None,
            },
            ast::Expr::IsNull(x) | ast::Expr::IsNotNull(x) => self.operand(x).map(|_| ()),
            ast::Expr::Between {
                expr, low, high, ..
            } => {
                let k = [self.operand(expr)?, self.operand(low)?, self.operand(high)?];
                compatible(&k)
            }
            ast::Expr::InList { expr, list, .. } => {
                let mut k = vec![self.operand(expr)?];
                for x in list.iter_mut() {
                    k.push(self.operand(x)?);
                }
                compatible(&k)
            }
            _ => None,
        }
    }

    /// An operand: a view column (rewritten to its base column) or a literal; its kind.
    fn operand(&self, e: &mut ast::Expr) -> Option<Kind> {
        match e {
            ast::Expr::Nested(x) => self.operand(x),
            ast::Expr::Value(v) => match &v.value {
                ast::Value::Number(..) => Some(Kind::Number),
                ast::Value::SingleQuotedString(_) | ast::Value::DoubleQuotedString(_) => {
                    Some(Kind::Text)
                }
                ast::Value::Null => Some(Kind::Null),
                _ => None,
            },
            ast::Expr::Identifier(c) => self.column(&c.value).map(|(k, col)| {
                *e = col;
                k
            }),
            ast::Expr::CompoundIdentifier(p) if p.len() == 2 && p[0].value == self.qn => {
                let name = p[1].value.clone();
                self.column(&name).map(|(k, col)| {
                    *e = col;
                    k
                })
            }
            _ => None,
        }
    }

    /// The base column behind view column `name`: its kind and a reference to it.
    fn column(&self, name: &str) -> Option<(Kind, ast::Expr)> {
        let i = self
            .columns
            .iter()
            .position(|c| c.eq_ignore_ascii_case(name))?;
        let j = (*self.base.get(i)?)?;
        let def = self.table.columns.get(j)?;
        let kind = match def.ty {
            SqlType::Enum(_) | SqlType::Set(_) | SqlType::Bit(_) | SqlType::Json => return None,
            ref t if t.is_integer() => Kind::Number,
            SqlType::Decimal { .. } | SqlType::Float | SqlType::Double => Kind::Number,
            ref t if t.is_text() => Kind::Text,
            _ => Kind::Other,
        };
        let mut id = ast::Ident::new(def.name.clone());
        id.quote_style = Some('`');
        Some((kind, ast::Expr::Identifier(id)))
    }
}

/// Whether operands of these kinds compare without a conversion: all of one kind besides
/// NULLs, and a literal never against a column of another type.
fn compatible(kinds: &[Kind]) -> Option<()> {
    let mut seen = None;
    for &k in kinds.iter().filter(|k| **k != Kind::Null) {
        match seen {
            None => seen = Some(k),
            Some(s) if s == k => {}
            Some(_) => return None,
        }
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crate::plan::access::Access;
    use crate::plan::select::subquery::Derived;
    use crate::server::{Server, ServerConfig};
    use crate::session::Session;

    struct Db(Arc<Server>, std::path::PathBuf);

    impl Drop for Db {
        fn drop(&mut self) {
            let _ = self.0.shutdown();
            let _ = std::fs::remove_dir_all(&self.1);
        }
    }

    /// The access path of the view's SELECT when `sql` reads it.
    fn inner_access(s: &Session, sql: &str) -> Access {
        let Ok(crate::parse::Parsed::Sql(stmt, _)) = crate::parse::parse_statement(sql) else {
            panic!("{sql}");
        };
        let sqlparser::ast::Statement::Query(q) = *stmt else {
            panic!("{sql}");
        };
        let plan = super::super::compile(s, &q, crate::parse::LockClause::None).unwrap();
        match plan.derived.first() {
            Some(Some(Derived::Select(p))) => p.plan.as_ref().unwrap().access.clone(),
            other => panic!("{sql}: {other:?}"),
        }
    }

    #[test]
    fn terms_on_passed_through_columns_reach_the_views_key() {
        let dir = std::env::temp_dir().join(format!("onelog-merge-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let db = Db(Server::open(ServerConfig::new(&dir)).unwrap().0, dir);
        let mut s = Session::new(db.0.clone(), 1, "root", "localhost");
        for sql in [
            "CREATE DATABASE d",
            "USE d",
            "CREATE TABLE t (a INT PRIMARY KEY, b VARCHAR(10), e ENUM('x','y'), KEY (b))",
            "INSERT INTO t VALUES (1,'p','x'),(2,'q','y')",
            "CREATE VIEW v AS SELECT a AS k, b, e, a + 1 AS n FROM t WHERE b <> 'zz'",
            "CREATE VIEW g AS SELECT a, count(*) AS c FROM t GROUP BY a",
        ] {
            s.query(sql).pop().unwrap().unwrap();
        }
        let point = |a: &Access| matches!(a, Access::PkPoint(_));
        assert!(point(&inner_access(&s, "SELECT * FROM v WHERE k = 2")));
        assert!(point(&inner_access(
            &s,
            "SELECT b FROM v AS w WHERE w.k = 2 AND n > 0"
        )));
        assert!(matches!(
            inner_access(&s, "SELECT * FROM v WHERE b = 'q'"),
            Access::Ranges { index: Some(_), .. }
        ));
        // Not pushed: a computed column, an ENUM, a literal of another kind, a function, a
        // view that groups.
        for sql in [
            "SELECT * FROM v WHERE n = 3",
            "SELECT * FROM v WHERE e = 1",
            "SELECT * FROM v WHERE k = '2'",
            "SELECT * FROM v WHERE abs(k) = 2",
            "SELECT * FROM g WHERE a = 2",
        ] {
            assert!(matches!(inner_access(&s, sql), Access::Full), "{sql}");
        }
        // The rows are the view's either way.
        let rows = |s: &mut Session, sql: &str| match s.query(sql).pop().unwrap().unwrap() {
            crate::output::Output::Rows { rows, .. } => rows.len(),
            _ => panic!("{sql}"),
        };
        assert_eq!(rows(&mut s, "SELECT * FROM v WHERE k = 2 OR k IS NULL"), 1);
        assert_eq!(
            rows(
                &mut s,
                "SELECT * FROM v WHERE k BETWEEN 1 AND 2 AND e = 'y'"
            ),
            1
        );
        assert_eq!(rows(&mut s, "SELECT * FROM v WHERE NOT (k IN (1, 2))"), 0);
    }
}
