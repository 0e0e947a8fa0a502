//! `EXPLAIN <statement>` (and `DESCRIBE <statement>`): the plan onelog runs, in MariaDB
//! 10.11's traditional table (id, select_type, table, type, possible_keys, key, key_len, ref,
//! rows, Extra), for SELECT (with its subqueries, derived tables, CTEs, views and set
//! operations), UPDATE and DELETE (single- and multi-table), and INSERT/REPLACE (VALUES or
//! SELECT).
//!
//! Every SELECT of the statement gets an id as MariaDB numbers them: the statement's own
//! SELECT is 1, the others follow in the order they are written (select list, FROM, then the
//! other clauses), a CTE where it is read; a union's parts are consecutive. A SELECT's rows
//! come first, then those of the SELECTs nested in it, the last written first, as MariaDB
//! lists them. select_type says how onelog runs each: `SIMPLE` (nothing nested), `PRIMARY`,
//! `DERIVED` (a derived table, CTE or non-merged view, materialized first), `SUBQUERY` (run
//! once), `MATERIALIZED` (an IN run once into a hash set; when it is a WHERE conjunct, the
//! probe is shown as MariaDB shows a semi-join: a `<subqueryN>` line, `eq_ref` on
//! `distinct_key`), `DEPENDENT SUBQUERY` (run per row), `UNION` / `INTERSECT` / `EXCEPT`
//! and their `... RESULT` line (`<union1,2>`), `RECURSIVE UNION`.
//!
//! `EXPLAIN EXTENDED`, `PARTITIONS`, `FORMAT=JSON` and `ANALYZE` are refused (1235, by
//! the caller).
//!
//! Called by `Session` for `Statement::Explain`; the lines of one SELECT's tables come from
//! [`table`].

mod table;

use std::collections::HashMap;

use sqlparser::ast;

use crate::context::ExecContext;
use crate::error::SqlError;
use crate::expr::{Expr, Subq, SubqKind};
use crate::plan::select::subquery::{SetOp, SetOpPlan};
use crate::plan::select::{Derived, SelectPlan};
use table::{key_part_len, Line, Row, Tables};

/// EXPLAIN of the statement `stmt` as the session would run it.
pub(crate) fn explain(
    cx: &ExecContext,
    stmt: &ast::Statement,
) -> Result<crate::output::Output, SqlError> {
    let mut ex = Explainer {
        cx,
        next: 1,
        work: HashMap::new(),
    };
    let rows = match stmt {
        ast::Statement::Query(q) => {
            let p = crate::plan::select::compile(cx, q, crate::parse::LockClause::None)?;
            ex.unit(&p, Role::Top)
        }
        ast::Statement::Update(u) if !crate::plan::multi_dml::is_multi_update(u) => {
            // A view target may make it a multi-table UPDATE (`plan::view_dml`).
            let p = match crate::plan::dml::compile_update_any(cx, u)? {
                crate::plan::dml::UpdateKind::Single(p) => p,
                crate::plan::dml::UpdateKind::Multi(p) => return Ok(table::render(ex.multi(&p))),
            };
            let mut exprs: Vec<&Expr> = p.assignments.iter().map(|(_, e)| e).collect();
            exprs.extend(p.plan.filter.as_ref());
            ex.dml(
                &p.table,
                &p.plan,
                &p.subqueries,
                &exprs,
                !p.order_by.is_empty(),
            )
        }
        ast::Statement::Delete(d) if !crate::plan::multi_dml::is_multi_delete(d) => {
            let p = crate::plan::dml::compile_delete(cx, d)?;
            let exprs: Vec<&Expr> = p.plan.filter.iter().collect();
            if p.plan.filter.is_none() && p.order_by.is_empty() && p.limit.is_none() {
                ex.delete_all(&p.table)
            } else {
                ex.dml(
                    &p.table,
                    &p.plan,
                    &p.subqueries,
                    &exprs,
                    !p.order_by.is_empty(),
                )
            }
        }
        ast::Statement::Update(u) => {
            let p = crate::plan::multi_dml::compile_multi_update(cx, u)?;
            ex.multi(&p)
        }
        ast::Statement::Delete(d) => {
            let p = crate::plan::multi_dml::compile_multi_delete(cx, d)?;
            ex.multi(&p)
        }
        ast::Statement::Insert(i) => {
            let p = crate::plan::dml::compile_insert(cx, i)?;
            match &p.select {
                Some(sel) => ex.unit(sel, Role::Top),
                None => vec![Row {
                    id: Some(1),
                    select_type: "INSERT".to_string(),
                    line: Line {
                        table: Some(p.table.name.clone()),
                        ty: Some("ALL"),
                        null_extra: true,
                        ..Line::default()
                    },
                }],
            }
        }
        _ => return Err(SqlError::unsupported("EXPLAIN of this statement")),
    };
    Ok(table::render(rows))
}

/// How a unit (one SELECT, or a set operation's SELECTs) is read by the query holding it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    /// The statement's own query.
    Top,
    /// A derived table, CTE or view, materialized before the query runs.
    Derived,
    /// A subquery run once.
    Subquery,
    /// An IN subquery run once into a hash set.
    Materialized,
    /// A subquery run per row of the query holding it.
    Dependent,
}

impl Role {
    /// The select_type of the unit's first SELECT (`nested`: other SELECTs are nested in it).
    fn first(self, nested: bool) -> &'static str {
        match self {
            Role::Top if nested => "PRIMARY",
            Role::Top => "SIMPLE",
            Role::Derived => "DERIVED",
            Role::Subquery => "SUBQUERY",
            Role::Materialized => "MATERIALIZED",
            Role::Dependent => "DEPENDENT SUBQUERY",
        }
    }

    /// The select_type of a set operation's later SELECTs.
    fn later(self, op: SetOp) -> &'static str {
        match (self, op) {
            (Role::Dependent, SetOp::Union) => "DEPENDENT UNION",
            (Role::Dependent, SetOp::Intersect) => "DEPENDENT INTERSECT",
            (Role::Dependent, SetOp::Except) => "DEPENDENT EXCEPT",
            (_, SetOp::Union) => "UNION",
            (_, SetOp::Intersect) => "INTERSECT",
            (_, SetOp::Except) => "EXCEPT",
        }
    }
}

/// Something nested in a SELECT, in the order MariaDB numbers them.
#[derive(Clone, Copy)]
enum Nested {
    /// Its subquery with this id.
    Subquery(usize),
    /// The derived table at this FROM position.
    Derived(usize),
}

struct Explainer<'a> {
    cx: &'a ExecContext,
    /// The next SELECT id.
    next: u64,
    /// Per recursive CTE's slot: the id of its anchor (what its self-references show).
    work: HashMap<u64, u64>,
}

impl Explainer<'_> {
    fn take_id(&mut self) -> u64 {
        let id = self.next;
        self.next += 1;
        id
    }

    /// The rows of a query read as `role`: one SELECT, or the set operation a query with
    /// ORDER BY / LIMIT over a union is compiled as (`SELECT * FROM (union) AS __union`).
    fn unit(&mut self, p: &SelectPlan, role: Role) -> Vec<Row> {
        if let Some(inner) = union_inside(p) {
            return self.derived_unit(inner, role, !p.order_by.is_empty());
        }
        let id = self.take_id();
        self.select(p, id, role, None)
    }

    /// The rows of a derived table's query.
    fn derived_unit(&mut self, d: &Derived, role: Role, sorted: bool) -> Vec<Row> {
        match d {
            Derived::Select(p) => self.unit(p, role),
            Derived::SetOp(s) => self.set_unit(s, role, sorted),
            Derived::Recursive(r) => {
                let anchor_id = self.next;
                self.work.insert(r.slot, anchor_id);
                let mut rows = self.derived_unit(&r.anchor, role, false);
                let mut ids = vec![anchor_id];
                for step in &r.steps {
                    ids.push(self.next);
                    let id = self.take_id();
                    if let Derived::Select(p) = step {
                        rows.extend(self.select(p, id, role, Some("RECURSIVE UNION")));
                    }
                }
                rows.push(result_row("UNION", &ids, false));
                rows
            }
            Derived::Info(_) | Derived::Mysql(_) | Derived::WorkTable(_) => Vec::new(),
        }
    }

    /// The rows of a set operation: each SELECT's, then the result line (none for UNION ALL
    /// alone, which MariaDB streams).
    fn set_unit(&mut self, s: &SetOpPlan, role: Role, sorted: bool) -> Vec<Row> {
        let mut parts = Vec::new();
        flatten(s, &mut parts);
        let mut rows = Vec::new();
        let mut ids = Vec::new();
        for (i, (part, op)) in parts.iter().enumerate() {
            ids.push(self.next);
            let word = match (i, role) {
                (0, Role::Top) => Some("PRIMARY"),
                (0, _) => None,
                _ => Some(role.later(*op)),
            };
            match part {
                Derived::Select(p) => {
                    let id = self.take_id();
                    rows.extend(self.select(p, id, role, word));
                }
                other => rows.extend(self.derived_unit(other, role, false)),
            }
        }
        let streamed = s.all && s.op == SetOp::Union && all_union_all(s);
        if !streamed || sorted {
            let word = match s.op {
                SetOp::Union => "UNION",
                SetOp::Intersect => "INTERSECT",
                SetOp::Except => "EXCEPT",
            };
            rows.push(result_row(word, &ids, sorted));
        }
        rows
    }

    /// The rows of one SELECT numbered `id`: its tables' lines (with a semi-join line per IN
    /// conjunct run as a hash set), then the SELECTs nested in it, the last numbered first.
    /// `word`: its select_type when not the role's (a union's later SELECT).
    fn select(&mut self, p: &SelectPlan, id: u64, role: Role, word: Option<&str>) -> Vec<Row> {
        let refs = subquery_refs(p);
        let semi = semi_joins(p, &refs);
        let mut nested_rows: Vec<Vec<Row>> = Vec::new();
        let mut derived_ids: HashMap<usize, u64> = HashMap::new();
        let mut sub_ids: HashMap<usize, u64> = HashMap::new();
        for n in nested_order(p) {
            let first = self.next;
            let rows = match n {
                Nested::Subquery(i) => {
                    sub_ids.insert(i, first);
                    let sp = &p.subqueries[i];
                    self.unit(
                        &sp.plan,
                        subquery_role(sp.correlated, refs.get(&i).copied()),
                    )
                }
                Nested::Derived(k) => {
                    derived_ids.insert(k, first);
                    match p.derived.get(k) {
                        Some(Some(d)) => self.derived_unit(d, Role::Derived, false),
                        _ => Vec::new(),
                    }
                }
            };
            nested_rows.push(rows);
        }
        let select_type = word
            .unwrap_or_else(|| role.first(!nested_rows.is_empty()))
            .to_string();
        let lines = self.lines(p, &derived_ids, &semi);
        let mut rows: Vec<Row> = lines
            .into_iter()
            .map(|line| Row {
                id: Some(id),
                select_type: select_type.clone(),
                line,
            })
            .collect();
        for i in semi {
            rows.push(Row {
                id: Some(id),
                select_type: select_type.clone(),
                line: semi_line(&p.subqueries[i].plan, sub_ids.get(&i).copied()),
            });
        }
        for r in nested_rows.into_iter().rev() {
            rows.extend(r);
        }
        rows
    }

    /// The lines of `p`'s own tables, with the Extra words of its grouping and sorting.
    fn lines(
        &self,
        p: &SelectPlan,
        derived_ids: &HashMap<usize, u64>,
        semi: &[usize],
    ) -> Vec<Line> {
        let mut names = p.aliases.clone();
        let mut est = vec![None; names.len()];
        for (k, d) in p.derived.iter().enumerate() {
            let Some(d) = d else { continue };
            let id = match d {
                Derived::WorkTable(slot) => self.work.get(slot),
                Derived::Info(_) | Derived::Mysql(_) => None,
                _ => derived_ids.get(&k),
            };
            if let (Some(id), Some(n)) = (id, names.get_mut(k)) {
                *n = format!("<derived{id}>");
            }
            if let Some(e) = est.get_mut(k) {
                *e = Some(self.estimate(d));
            }
        }
        let is_semi = |e: &Expr| semi_of(e).is_some_and(|i| semi.contains(&i));
        let tables = Tables {
            cx: self.cx,
            names,
            est,
            semi: &is_semi,
        };
        let mut lines = match (&p.table, &p.join) {
            (None, _) => vec![Line {
                extra: vec!["No tables used"],
                ..Line::default()
            }],
            (Some(t), None) => vec![tables.single(t, p.plan.as_ref(), false)],
            (Some(_), Some(jp)) => tables.joined(jp, p.plan.as_ref()),
        };
        if let Some(first) = lines.first_mut() {
            let grouped = p.grouped && !p.group_by.is_empty();
            if grouped || p.windowed {
                first.extra.push("Using temporary");
            }
            if !p.order_by.is_empty() || grouped {
                first.extra.push("Using filesort");
            }
        }
        lines
    }

    /// A derived table's estimated rows: its SELECT's largest table (1 for an aggregate
    /// without GROUP BY), a set operation's parts added.
    fn estimate(&self, d: &Derived) -> u64 {
        match d {
            Derived::Select(p) if p.grouped && p.group_by.is_empty() => 1,
            Derived::Select(p) => {
                if let Some(inner) = union_inside(p) {
                    return self.estimate(inner);
                }
                let mut n = p
                    .table
                    .as_ref()
                    .map_or(1, |t| table::table_rows(self.cx, t));
                if let Some(jp) = &p.join {
                    for s in &jp.steps {
                        n = n.max(table::table_rows(self.cx, &s.table));
                    }
                }
                n
            }
            Derived::SetOp(s) => self.estimate(&s.left) + self.estimate(&s.right),
            Derived::Recursive(r) => self.estimate(&r.anchor),
            Derived::Info(_) | Derived::Mysql(_) | Derived::WorkTable(_) => 1,
        }
    }

    /// A single-table UPDATE or DELETE: its table's line, then its subqueries'.
    fn dml(
        &mut self,
        t: &onelog_engine::TableDef,
        plan: &crate::plan::access::Plan,
        subqueries: &[crate::plan::select::SubPlan],
        exprs: &[&Expr],
        sorted: bool,
    ) -> Vec<Row> {
        let id = self.take_id();
        let mut refs = HashMap::new();
        for e in exprs {
            each_subq(e, &mut |s| {
                refs.entry(s.id).or_insert(s);
            });
        }
        let mut nested = Vec::new();
        for (i, sp) in subqueries.iter().enumerate() {
            let role = subquery_role(sp.correlated, refs.get(&i).copied());
            nested.push(self.unit(&sp.plan, role));
        }
        let no_semi = |_: &Expr| false;
        let tables = Tables {
            cx: self.cx,
            names: vec![t.name.clone()],
            est: Vec::new(),
            semi: &no_semi,
        };
        let mut line = tables.single(t, Some(plan), true);
        if sorted {
            line.extra.push("Using filesort");
        }
        let select_type = Role::Top.first(!nested.is_empty()).to_string();
        let mut rows = vec![Row {
            id: Some(id),
            select_type,
            line,
        }];
        for r in nested.into_iter().rev() {
            rows.extend(r);
        }
        rows
    }

    /// A multi-table UPDATE or DELETE: its join's lines.
    fn multi(&mut self, p: &crate::plan::multi_dml::MultiPlan) -> Vec<Row> {
        let id = self.take_id();
        let no_semi = |_: &Expr| false;
        let tables = Tables {
            cx: self.cx,
            names: p.aliases.clone(),
            est: Vec::new(),
            semi: &no_semi,
        };
        let mut lines = tables.joined(&p.join, Some(&p.first));
        if let Some(first) = lines.first_mut() {
            if !p.order_by.is_empty() {
                first.extra.push("Using temporary");
                first.extra.push("Using filesort");
            }
        }
        lines
            .into_iter()
            .map(|line| Row {
                id: Some(id),
                select_type: "SIMPLE".to_string(),
                line,
            })
            .collect()
    }

    /// `DELETE FROM t` with no condition: MariaDB's "Deleting all rows".
    fn delete_all(&mut self, t: &onelog_engine::TableDef) -> Vec<Row> {
        vec![Row {
            id: Some(self.take_id()),
            select_type: "SIMPLE".to_string(),
            line: Line {
                rows: Some(table::table_rows(self.cx, t)),
                extra: vec!["Deleting all rows"],
                ..Line::default()
            },
        }]
    }
}

/// The set operation (or parenthesised query) a query with ORDER BY / LIMIT over it is
/// compiled around.
fn union_inside(p: &SelectPlan) -> Option<&Derived> {
    let whole = crate::plan::select::setop::WHOLE;
    if p.aliases.len() != 1 || p.aliases[0] != whole || !p.subqueries.is_empty() {
        return None;
    }
    match p.derived.first() {
        Some(Some(d @ (Derived::SetOp(_) | Derived::Select(_)))) => Some(d),
        _ => None,
    }
}

/// The parts of a chain of set operations, each with the operation joining it to those
/// before (the first's is the chain's).
fn flatten<'p>(s: &'p SetOpPlan, out: &mut Vec<(&'p Derived, SetOp)>) {
    for side in [&s.left, &s.right] {
        match side {
            Derived::SetOp(inner) => {
                let start = out.len();
                flatten(inner, out);
                if start > 0 {
                    out[start].1 = s.op;
                }
            }
            d => out.push((d, s.op)),
        }
    }
}

/// True when every operation of the chain is UNION ALL.
fn all_union_all(s: &SetOpPlan) -> bool {
    s.all
        && s.op == SetOp::Union
        && [&s.left, &s.right].iter().all(|d| match d {
            Derived::SetOp(inner) => all_union_all(inner),
            _ => true,
        })
}

/// A set operation's result line: `<union1,2>` read whole.
fn result_row(word: &str, ids: &[u64], sorted: bool) -> Row {
    let list: Vec<String> = ids.iter().map(u64::to_string).collect();
    Row {
        id: None,
        select_type: format!("{word} RESULT"),
        line: Line {
            table: Some(format!("<{}{}>", word.to_ascii_lowercase(), list.join(","))),
            ty: Some("ALL"),
            extra: if sorted {
                vec!["Using filesort"]
            } else {
                Vec::new()
            },
            ..Line::default()
        },
    }
}

/// How a subquery is run: per row when correlated, an IN once into a hash set, else once.
fn subquery_role(correlated: bool, r: Option<&Subq>) -> Role {
    if correlated || r.is_some_and(|s| s.correlated) {
        return Role::Dependent;
    }
    match r.map(|s| &s.kind) {
        Some(SubqKind::In(..) | SubqKind::ExistsIn(..)) => Role::Materialized,
        _ => Role::Subquery,
    }
}

/// The first reference to each of `p`'s subqueries in its expressions.
fn subquery_refs(p: &SelectPlan) -> HashMap<usize, &Subq> {
    let mut out = HashMap::new();
    for e in plan_exprs(p) {
        each_subq(e, &mut |s| {
            out.entry(s.id).or_insert(s);
        });
    }
    out
}

/// Every expression of `p` that may hold a subquery.
fn plan_exprs(p: &SelectPlan) -> Vec<&Expr> {
    let mut v: Vec<&Expr> = p.projections.iter().collect();
    v.extend(where_parts(p));
    v.extend(p.group_by.iter());
    v.extend(p.having.iter());
    v.extend(p.order_by.iter().map(|(e, _)| e));
    for a in &p.aggs {
        v.extend(a.arg.iter());
        v.extend(a.order_by.iter().map(|(e, _)| e));
    }
    v
}

/// The expressions the WHERE (and inner joins' ON conditions) are tested as.
fn where_parts(p: &SelectPlan) -> Vec<&Expr> {
    let mut v = Vec::new();
    if let Some(jp) = &p.join {
        v.extend(jp.driver_filter.iter());
        // Steps of an outer join's nest test their ON as part of the join, not the WHERE.
        let nested = |k: usize| jp.nests.iter().any(|n| (n.first..=n.last).contains(&k));
        v.extend(
            jp.steps
                .iter()
                .enumerate()
                .filter(|(k, _)| !nested(*k))
                .filter_map(|(_, s)| s.on.as_ref()),
        );
        v.extend(jp.filter.iter());
    } else if let Some(plan) = &p.plan {
        v.extend(plan.filter.iter());
    }
    v
}

/// The subquery a WHERE conjunct runs as a semi-join (an uncorrelated `x IN (SELECT ...)`
/// or an EXISTS turned into one), if it is one.
fn semi_of(e: &Expr) -> Option<usize> {
    match e {
        Expr::Subq(s) if !s.correlated => match &s.kind {
            SubqKind::In(_, false, _) | SubqKind::ExistsIn(_, false, _) => Some(s.id),
            _ => None,
        },
        _ => None,
    }
}

/// The subqueries of `p` run as semi-joins: the WHERE conjuncts [`semi_of`] finds.
fn semi_joins(p: &SelectPlan, refs: &HashMap<usize, &Subq>) -> Vec<usize> {
    let mut out = Vec::new();
    for e in where_parts(p) {
        let mut conds = Vec::new();
        crate::plan::access::conjuncts(e, &mut conds);
        for c in &conds {
            if let Some(i) = semi_of(c) {
                let uncorrelated = p.subqueries.get(i).is_some_and(|s| !s.correlated);
                if uncorrelated && refs.contains_key(&i) && !out.contains(&i) {
                    out.push(i);
                }
            }
        }
    }
    out.sort_unstable();
    out
}

/// The semi-join line of the IN subquery numbered `id`: a lookup of its hash set.
fn semi_line(sub: &SelectPlan, id: Option<u64>) -> Line {
    let len = sub.rtypes.first().map_or(0, |r| result_len(sub, r));
    Line {
        table: Some(format!("<subquery{}>", id.unwrap_or(0))),
        ty: Some("eq_ref"),
        possible: Some("distinct_key".to_string()),
        key: Some("distinct_key".to_string()),
        key_len: Some(len.to_string()),
        refs: Some("func".to_string()),
        rows: Some(1),
        ..Line::default()
    }
}

/// The key length of a result column (NULL is never in the set).
fn result_len(p: &SelectPlan, r: &crate::expr::RType) -> u32 {
    use crate::expr::RType as R;
    match r {
        R::Column(c) => {
            let mut tables = Vec::new();
            if let Some(jp) = &p.join {
                tables.push((&jp.driver_table, jp.driver_offset));
                tables.extend(jp.steps.iter().map(|s| (&s.table, s.offset)));
            } else if let Some(t) = &p.table {
                tables.push((t, 0));
            }
            tables
                .into_iter()
                .find(|(t, off)| (*off..off + t.columns.len()).contains(c))
                .map_or(8, |(t, off)| key_part_len(&t.columns[c - off].ty, false))
        }
        R::Int | R::UInt | R::Double | R::DoubleDec(_) => 8,
        R::Decimal(pr, sc) => key_part_len(
            &onelog_engine::SqlType::Decimal {
                precision: *pr,
                scale: *sc,
            },
            false,
        ),
        R::Str(n) => n * 4 + 2,
        R::Date => 3,
        R::DateTime(_) => 5,
        R::Time => 3,
        R::Year => 1,
        R::Null | R::Dyn => 0,
    }
}

/// The SELECTs nested in `p` in the order they are written (as MariaDB numbers them): the
/// subqueries of the select list, the derived tables in FROM order, then the other
/// subqueries (ON, WHERE, GROUP BY, HAVING, ORDER BY) in the order they were compiled.
fn nested_order(p: &SelectPlan) -> Vec<Nested> {
    let mut first: Vec<usize> = Vec::new();
    for e in &p.projections {
        each_subq(e, &mut |s| {
            if !first.contains(&s.id) {
                first.push(s.id);
            }
        });
    }
    first.sort_unstable();
    let mut out: Vec<Nested> = first.iter().map(|&i| Nested::Subquery(i)).collect();
    for (k, d) in p.derived.iter().enumerate() {
        if matches!(
            d,
            Some(Derived::Select(_) | Derived::SetOp(_) | Derived::Recursive(_))
        ) {
            out.push(Nested::Derived(k));
        }
    }
    for i in 0..p.subqueries.len() {
        if !first.contains(&i) {
            out.push(Nested::Subquery(i));
        }
    }
    out
}

/// Calls `f` on each subquery reference in `e` (not inside the subqueries themselves).
fn each_subq<'e>(e: &'e Expr, f: &mut dyn FnMut(&'e Subq)) {
    if let Expr::Subq(s) = e {
        f(s);
    }
    e.for_each_child(&mut |c| each_subq(c, f));
}
