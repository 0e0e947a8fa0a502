//! Window calls inside expressions (`ROW_NUMBER() OVER w + 1`, `CASE WHEN RANK() OVER (...) =
//! 1 ...`, `SUM(a) OVER () / COUNT(*) OVER ()`) and directly in ORDER BY: the SELECT is
//! rewritten so that every window call is a whole select-list item of an inner query, whose
//! rows an outer query reads as a derived table and computes the expressions over:
//!
//! `SELECT f(W1, c) AS x FROM t WHERE ... GROUP BY ... HAVING ... ORDER BY W2 LIMIT n` becomes
//! `SELECT f(__win.__w0, __win.__s0) AS x FROM (SELECT W1 AS __w0, c AS __s0, W2 AS __w1
//! FROM t WHERE ... GROUP BY ... HAVING ... WINDOW ...) AS __win ORDER BY __win.__w1 LIMIT n`.
//!
//! Every part of an item or ORDER BY expression that holds no window call (a column, an
//! aggregate, a subquery; literals stay) moves to the inner query whole, so it is computed
//! where it was (after WHERE, GROUP BY and HAVING, as the windows); DISTINCT, ORDER BY and
//! LIMIT stay outside, after the windows, as MariaDB orders them. An unaliased item keeps the
//! name it had. ORDER BY naming an item's alias or position stays as written.
//!
//! Invariants: the rewrite is applied only when a window call is not a whole select-list item
//! (otherwise the SELECT compiles as written); the inner query has no window call nested in an
//! expression, so it is never rewritten again. A `*` item with such an expression, and
//! `SELECT ... INTO`, are refused (1235).
//!
//! Called by `plan::select::compile_in` before it compiles a SELECT.

use std::ops::ControlFlow;

use sqlparser::ast::{self, Visit, VisitMut, Visitor, VisitorMut};

use crate::error::SqlError;

/// The name the inner query is read under.
pub(crate) const WINDOWED: &str = "__win";

/// A rewritten query, and per select-list item its position in the inner query when it was
/// moved there whole.
pub(crate) type Lifted = (ast::Query, Vec<Option<usize>>);

/// The rewritten query when `sel` (the body of `q`) has a window call inside an expression
/// or in ORDER BY, with, per select-list item moved to the inner query whole, its position
/// there (its column metadata is the inner column's); None when it has none.
pub(crate) fn lift(q: &ast::Query, sel: &ast::Select) -> Result<Option<Lifted>, SqlError> {
    let order: Vec<&ast::OrderByExpr> = match q.order_by.as_ref().map(|o| &o.kind) {
        Some(ast::OrderByKind::Expressions(v)) => v.iter().collect(),
        _ => Vec::new(),
    };
    let nested_item = sel.projection.iter().any(|item| match item {
        ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => {
            !is_window(e) && has_window(e)
        }
        _ => false,
    });
    if !nested_item && !order.iter().any(|o| has_window(&o.expr)) {
        return Ok(None);
    }
    if sel.into.is_some() {
        return Err(SqlError::unsupported(
            "SELECT ... INTO with a window function inside an expression",
        ));
    }
    let mut lifter = Lifter::default();
    let mut items = Vec::with_capacity(sel.projection.len());
    for item in &sel.projection {
        items.push(match item {
            ast::SelectItem::UnnamedExpr(e) => (e, super::item_name(e), false),
            ast::SelectItem::ExprWithAlias { expr, alias } => (expr, alias.value.clone(), true),
            _ => {
                return Err(SqlError::unsupported(
                    "* with a window function inside an expression",
                ))
            }
        });
    }
    let aliases: Vec<String> = items.iter().map(|i| i.1.to_ascii_lowercase()).collect();
    // GROUP BY or HAVING naming an item that holds a window call: 4015, as MariaDB.
    let windowed: Vec<String> = items
        .iter()
        .zip(&aliases)
        .filter(|((e, ..), _)| has_window(e))
        .map(|(_, a)| a.clone())
        .collect();
    let group: Vec<&ast::Expr> = match &sel.group_by {
        ast::GroupByExpr::Expressions(v, _) => v.iter().collect(),
        ast::GroupByExpr::All(_) => Vec::new(),
    };
    if group
        .into_iter()
        .chain(sel.having.as_ref())
        .any(|e| names_any(e, &windowed))
    {
        return Err(crate::expr::misplaced_window());
    }
    let mut whole = Vec::with_capacity(items.len());
    let mut outer_items = Vec::with_capacity(items.len());
    for (k, (e, name, aliased)) in items.into_iter().enumerate() {
        let mut x = e.clone();
        // A window-free item keeps its alias inside (GROUP BY and HAVING may name it) when
        // no other item has the same name.
        let unique = aliases.iter().filter(|a| **a == aliases[k]).count() == 1;
        if has_window(e) || !aliased || !unique || name.starts_with("__") {
            whole.push((is_window(e) || !has_window(e)).then_some(lifter.inner.len()));
            lifter.lift(&mut x);
        } else {
            whole.push(Some(lifter.inner.len()));
            lifter.take(&mut x, name.clone());
        }
        outer_items.push(ast::SelectItem::ExprWithAlias {
            expr: x,
            alias: ast::Ident::with_quote('`', name),
        });
    }
    let mut outer_order = q.order_by.clone();
    if let Some(ast::OrderByKind::Expressions(v)) = outer_order.as_mut().map(|o| &mut o.kind) {
        for o in v {
            if !names_item(&o.expr, &aliases) {
                lifter.lift(&mut o.expr);
            }
        }
    }
    let q = rewritten(q, sel, lifter.inner, outer_items, outer_order);
    Ok(Some((q, whole)))
}

/// The result columns of the rewritten query: an item moved whole keeps the inner column's
/// metadata (a table column's table and name), under its own name; the others are
/// expressions (no table).
pub(crate) fn restore_columns(p: &mut super::SelectPlan, whole: &[Option<usize>]) {
    let inner = match p.derived.first() {
        Some(Some(super::Derived::Select(inner))) => inner.columns.clone(),
        _ => Vec::new(),
    };
    debug_assert_eq!(p.columns.len(), whole.len(), "one column per item");
    for (c, w) in p.columns.iter_mut().zip(whole) {
        match w.and_then(|j| inner.get(j)) {
            Some(from) => {
                let name = std::mem::take(&mut c.name);
                *c = from.clone();
                c.name = name;
            }
            None => {
                c.table.clear();
                c.org_table.clear();
                c.db.clear();
                c.org_name.clear();
            }
        }
    }
}

/// The outer query over the inner one (`inner` its select list).
fn rewritten(
    q: &ast::Query,
    sel: &ast::Select,
    inner: Vec<ast::SelectItem>,
    outer_items: Vec<ast::SelectItem>,
    outer_order: Option<ast::OrderBy>,
) -> ast::Query {
    let mut in_sel = sel.clone();
    in_sel.projection = inner;
    in_sel.distinct = None;
    in_sel.select_modifiers = None;
    in_sel.top = None;
    let mut in_q = q.clone();
    in_q.body = Box::new(ast::SetExpr::Select(Box::new(in_sel)));
    in_q.order_by = None;
    in_q.limit_clause = None;
    in_q.locks = Vec::new();
    let mut out_sel = sel.clone();
    out_sel.projection = outer_items;
    out_sel.from = vec![ast::TableWithJoins {
        relation: ast::TableFactor::Derived {
            lateral: false,
            subquery: Box::new(in_q),
            alias: Some(ast::TableAlias {
                explicit: true,
                name: ast::Ident::new(WINDOWED),
                columns: Vec::new(),
                at: None,
            }),
            sample: None,
        },
        joins: Vec::new(),
    }];
    out_sel.selection = None;
    out_sel.group_by = ast::GroupByExpr::Expressions(Vec::new(), Vec::new());
    out_sel.having = None;
    out_sel.named_window = Vec::new();
    let mut out_q = q.clone();
    out_q.body = Box::new(ast::SetExpr::Select(Box::new(out_sel)));
    out_q.order_by = outer_order;
    out_q
}

/// True when `e` is an item's alias (or a position): ORDER BY keeps it.
fn names_item(e: &ast::Expr, aliases: &[String]) -> bool {
    match e {
        ast::Expr::Identifier(i) => aliases.contains(&i.value.to_ascii_lowercase()),
        ast::Expr::Value(_) => true,
        _ => false,
    }
}

/// True when `e` names one of `names` (lower case) outside any subquery.
fn names_any(e: &ast::Expr, names: &[String]) -> bool {
    let mut f = FindName { names, depth: 0 };
    e.visit(&mut f).is_break()
}

struct FindName<'a> {
    names: &'a [String],
    depth: usize,
}

impl Visitor for FindName<'_> {
    type Break = ();

    fn pre_visit_query(&mut self, _: &ast::Query) -> ControlFlow<()> {
        self.depth += 1;
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _: &ast::Query) -> ControlFlow<()> {
        self.depth -= 1;
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, e: &ast::Expr) -> ControlFlow<()> {
        match e {
            ast::Expr::Identifier(i)
                if self.depth == 0 && self.names.contains(&i.value.to_ascii_lowercase()) =>
            {
                ControlFlow::Break(())
            }
            _ => ControlFlow::Continue(()),
        }
    }
}

/// True when `e` is a window function call.
fn is_window(e: &ast::Expr) -> bool {
    matches!(e, ast::Expr::Function(f) if f.over.is_some())
}

/// True when `e` holds a window call outside any subquery.
fn has_window(e: &ast::Expr) -> bool {
    let mut f = FindWindow::default();
    e.visit(&mut f).is_break()
}

#[derive(Default)]
struct FindWindow {
    depth: usize,
}

impl Visitor for FindWindow {
    type Break = ();

    fn pre_visit_query(&mut self, _: &ast::Query) -> ControlFlow<()> {
        self.depth += 1;
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _: &ast::Query) -> ControlFlow<()> {
        self.depth -= 1;
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, e: &ast::Expr) -> ControlFlow<()> {
        if self.depth == 0 && is_window(e) {
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    }
}

/// Moves window calls and window-free parts of expressions to the inner select list,
/// leaving references to them.
#[derive(Default)]
struct Lifter {
    inner: Vec<ast::SelectItem>,
    windows: usize,
    others: usize,
}

impl Lifter {
    fn lift(&mut self, e: &mut ast::Expr) {
        let _ = e.visit(self);
    }

    /// `e` moved to the inner list as `name`; `e` becomes `__win.name`.
    fn take(&mut self, e: &mut ast::Expr, name: String) {
        let reference =
            ast::Expr::CompoundIdentifier(vec![ast::Ident::new(WINDOWED), ast::Ident::new(&name)]);
        let expr = std::mem::replace(e, reference);
        self.inner.push(ast::SelectItem::ExprWithAlias {
            expr,
            alias: ast::Ident::new(name),
        });
    }
}

impl VisitorMut for Lifter {
    type Break = ();

    /// Top-down: a window call or a window-free part is replaced (its children are then
    /// those of the reference: none); other nodes are descended into.
    fn pre_visit_expr(&mut self, e: &mut ast::Expr) -> ControlFlow<()> {
        if is_window(e) {
            let name = format!("__w{}", self.windows);
            self.windows += 1;
            self.take(e, name);
        } else if !has_window(e) && !matches!(e, ast::Expr::Value(_)) {
            let name = format!("__s{}", self.others);
            self.others += 1;
            self.take(e, name);
        }
        ControlFlow::Continue(())
    }
}
