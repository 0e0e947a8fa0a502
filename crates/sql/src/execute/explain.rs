//! `EXPLAIN SELECT ...` (and `DESCRIBE SELECT`): the plan onelog runs, in MariaDB 10.11's
//! traditional table (id, select_type, table, type, possible_keys, key, key_len, ref, rows,
//! Extra), one row per table in the order the loops nest.
//!
//! The access types are MariaDB's words for what onelog does: `const` (a primary or unique
//! key point), `eq_ref` (a join's lookup of a whole primary or unique key), `ref` (a lookup of
//! a key prefix), `range`, `ALL` (a scan, or a join's loop over the table's rows, with `Using
//! join buffer (flat, BNL join)`), `hash_ALL` with key `#hash#$hj` and `Using join buffer
//! (flat, BNLH join)` (a hash join). `key_len` is MariaDB's byte length of the key parts used.
//!
//! `rows` is 1 for `const` and `eq_ref`, else the table's row count: onelog keeps no index
//! statistics, so a `ref` or `range` shows the count of the table it reads from (an upper
//! bound). Statements with subqueries, derived tables or UNION are refused (1235) rather than
//! shown with a plan that leaves them out.

use onelog_binlog::Value;
use onelog_engine::{SqlType, TableDef};
use sqlparser::ast;

use crate::context::ExecContext;
use crate::error::SqlError;
use crate::expr::{Expr, RType};
use crate::output::{Column, Output};
use crate::plan::access::Access;
use crate::plan::join::{JoinAccess, JoinPlan};
use crate::plan::select::{expr_column, SelectPlan};

/// One line of the table.
#[derive(Default)]
struct Line {
    table: Option<String>,
    ty: Option<&'static str>,
    possible: Option<String>,
    key: Option<String>,
    key_len: Option<String>,
    refs: Option<String>,
    rows: Option<u64>,
    extra: Vec<&'static str>,
}

/// EXPLAIN of the query `q` as the session would run it.
pub(crate) fn explain_query(cx: &ExecContext, q: &ast::Query) -> Result<Output, SqlError> {
    let p = crate::plan::select::compile(cx, q, crate::parse::LockClause::None)?;
    if !p.subqueries.is_empty() || p.derived.iter().any(|d| d.is_some()) {
        return Err(SqlError::unsupported(
            "EXPLAIN of a statement with subqueries or derived tables",
        ));
    }
    let names = from_names(q)?;
    let mut lines = match (&p.table, &p.join) {
        (None, _) => vec![Line {
            extra: vec!["No tables used"],
            ..Line::default()
        }],
        (Some(t), None) => vec![single(cx, t, &p, &names)],
        (Some(_), Some(jp)) => joined(cx, jp, &p, &names),
    };
    if let Some(first) = lines.first_mut() {
        if p.grouped && !p.group_by.is_empty() {
            first.extra.push("Using temporary");
        }
        if !p.order_by.is_empty() || (p.grouped && !p.group_by.is_empty()) {
            first.extra.push("Using filesort");
        }
    }
    Ok(render(lines))
}

/// The FROM tables' names as EXPLAIN shows them (alias, else name), in FROM order.
fn from_names(q: &ast::Query) -> Result<Vec<String>, SqlError> {
    let ast::SetExpr::Select(sel) = &*q.body else {
        return Err(SqlError::unsupported("EXPLAIN of this statement"));
    };
    let mut out = Vec::new();
    let mut name = |tf: &ast::TableFactor| match tf {
        ast::TableFactor::Table { name, alias, .. } => {
            out.push(match alias {
                Some(a) => a.name.value.clone(),
                None => crate::expr::object_name_parts(name)
                    .pop()
                    .unwrap_or_default(),
            });
            Ok(())
        }
        _ => Err(SqlError::unsupported("EXPLAIN of this FROM clause")),
    };
    for twj in &sel.from {
        name(&twj.relation)?;
        for j in &twj.joins {
            name(&j.relation)?;
        }
    }
    Ok(out)
}

/// The number of rows of `t` in the newest committed state.
fn table_rows(cx: &ExecContext, t: &TableDef) -> u64 {
    let snap = cx.server.engine.snapshot();
    snap.root().table(t.id).map_or(0, |d| d.rows.len() as u64)
}

/// The names of `t`'s keys: PRIMARY, then its indexes.
fn key_name(t: &TableDef, index: Option<usize>) -> String {
    match index {
        None => "PRIMARY".to_string(),
        Some(i) => t.indexes[i].name.clone(),
    }
}

/// The keys whose first column a condition of the statement names (MariaDB's possible_keys,
/// approximated by the key chosen).
fn possible(t: &TableDef, index: Option<usize>) -> String {
    key_name(t, index)
}

fn single(cx: &ExecContext, t: &TableDef, p: &SelectPlan, names: &[String]) -> Line {
    let mut l = Line {
        table: names.first().cloned(),
        rows: Some(table_rows(cx, t)),
        ..Line::default()
    };
    let Some(plan) = &p.plan else {
        l.ty = Some("ALL");
        return l;
    };
    driver_access(t, &plan.access, &mut l);
    if plan.residual.is_some() && !l.extra.contains(&"Using where") {
        l.extra.push("Using where");
    }
    l
}

/// The driving table's line from its access path.
fn driver_access(t: &TableDef, access: &Access, l: &mut Line) {
    match access {
        Access::Full => l.ty = Some("ALL"),
        Access::PkPoint(keys) => {
            l.ty = Some("const");
            set_key(
                l,
                t,
                None,
                keys.len(),
                vec!["const".to_string(); keys.len()],
            );
            l.rows = Some(1);
        }
        Access::Ranges {
            index,
            prefix,
            ranges,
        } => {
            let unique = index.is_some_and(|i| t.indexes[i].unique);
            let cols = key_columns(t, *index);
            if ranges.is_empty() && unique && prefix.len() == cols.len() {
                l.ty = Some("const");
                l.rows = Some(1);
            } else if ranges.is_empty() {
                l.ty = Some("ref");
            } else {
                l.ty = Some("range");
                l.extra.push("Using where");
            }
            let used = prefix.len() + usize::from(!ranges.is_empty());
            let refs = if ranges.is_empty() {
                vec!["const".to_string(); prefix.len()]
            } else {
                Vec::new()
            };
            set_key(l, t, *index, used, refs);
        }
    }
}

fn key_columns(t: &TableDef, index: Option<usize>) -> &[usize] {
    match index {
        None => &t.primary_key,
        Some(i) => &t.indexes[i].columns,
    }
}

fn set_key(l: &mut Line, t: &TableDef, index: Option<usize>, used: usize, refs: Vec<String>) {
    l.possible = Some(possible(t, index));
    l.key = Some(key_name(t, index));
    let len: u32 = key_columns(t, index)
        .iter()
        .take(used)
        .map(|&c| key_part_len(&t.columns[c].ty, t.columns[c].nullable))
        .sum();
    l.key_len = Some(len.to_string());
    if !refs.is_empty() {
        l.refs = Some(refs.join(","));
    }
}

/// MariaDB's key_len of one key part.
fn key_part_len(ty: &SqlType, nullable: bool) -> u32 {
    use SqlType as T;
    let dec = |d: u32| (d / 9) * 4 + [0, 1, 1, 2, 2, 3, 3, 4, 4, 4][(d % 9) as usize];
    let frac = |f: u8| u32::from(f).div_ceil(2);
    let n = match *ty {
        T::TinyInt { .. } | T::Year => 1,
        T::SmallInt { .. } => 2,
        T::MediumInt { .. } | T::Date => 3,
        T::Int { .. } | T::Float => 4,
        T::BigInt { .. } | T::Double => 8,
        T::Decimal { precision, scale } => {
            dec(u32::from(precision - scale)) + dec(u32::from(scale))
        }
        T::DateTime(f) => 5 + frac(f),
        T::Timestamp(f) => 4 + frac(f),
        T::Time(f) => 3 + frac(f),
        T::Char(n) => n * 4,
        T::VarChar(n) => n * 4 + 2,
        T::Binary(n) => n,
        T::VarBinary(n) => n + 2,
        T::Enum(m) => 1 + u32::from(m > 255),
        T::Set(m) => u32::from(m).div_ceil(8).max(1),
        T::Bit(m) => u32::from(m).div_ceil(8),
        _ => 0,
    };
    n + u32::from(nullable)
}

/// A join key's `ref`: `db.table.column` for a column of another table, else `func`.
fn ref_of(e: &Expr, jp: &JoinPlan) -> String {
    let Expr::Col(c) = crate::expr::numeric_view(e.clone()) else {
        return if crate::plan::access::is_const_in(e, jp.width) {
            "const".to_string()
        } else {
            "func".to_string()
        };
    };
    let mut tables = vec![(&jp.driver_table, jp.driver_offset)];
    tables.extend(jp.steps.iter().map(|s| (&s.table, s.offset)));
    for (t, off) in tables {
        if (off..off + t.columns.len()).contains(&c) {
            return format!("{}.{}.{}", t.db, t.name, t.columns[c - off].name);
        }
    }
    "func".to_string()
}

fn joined(cx: &ExecContext, jp: &JoinPlan, p: &SelectPlan, names: &[String]) -> Vec<Line> {
    let mut first = Line {
        table: names.get(jp.driver).cloned(),
        rows: Some(table_rows(cx, &jp.driver_table)),
        ..Line::default()
    };
    match (&p.plan, jp.driver) {
        (Some(plan), 0) => driver_access(&jp.driver_table, &plan.access, &mut first),
        _ => first.ty = Some("ALL"),
    }
    if jp.driver_filter.is_some() && !first.extra.contains(&"Using where") {
        first.extra.push("Using where");
    }
    let mut lines = vec![first];
    for s in &jp.steps {
        let t = &s.table;
        let mut l = Line {
            table: names.get(s.position).cloned(),
            rows: Some(table_rows(cx, t)),
            ..Line::default()
        };
        match &s.access {
            JoinAccess::Lookup { index, keys } => {
                let cols = key_columns(t, *index);
                let whole = keys.len() == cols.len();
                let unique = index.is_none_or(|i| t.indexes[i].unique);
                l.ty = Some(if whole && unique { "eq_ref" } else { "ref" });
                if whole && unique {
                    l.rows = Some(1);
                }
                let refs = keys.iter().map(|k| ref_of(k, jp)).collect();
                set_key(&mut l, t, *index, keys.len(), refs);
                // Conditions beyond the key's equalities are tested on the rows found.
                let mut conds = Vec::new();
                if let Some(on) = &s.on {
                    crate::plan::access::conjuncts(on, &mut conds);
                }
                if conds.len() > keys.len() {
                    l.extra.push("Using where");
                }
            }
            JoinAccess::Hash { cols, keys } => {
                l.ty = Some("hash_ALL");
                l.key = Some("#hash#$hj".to_string());
                let len: u32 = cols
                    .iter()
                    .map(|&c| key_part_len(&t.columns[c].ty, t.columns[c].nullable))
                    .sum();
                l.key_len = Some(len.to_string());
                l.refs = Some(
                    keys.iter()
                        .map(|k| ref_of(k, jp))
                        .collect::<Vec<_>>()
                        .join(","),
                );
                l.extra.push("Using where");
                l.extra.push("Using join buffer (flat, BNLH join)");
            }
            JoinAccess::Loop => {
                l.ty = Some("ALL");
                if s.on.is_some() {
                    l.extra.push("Using where");
                }
                l.extra.push("Using join buffer (flat, BNL join)");
            }
        }
        lines.push(l);
    }
    lines
}

fn render(lines: Vec<Line>) -> Output {
    let text = |n: &str| expr_column(n, RType::Str(64), true);
    let columns: Vec<Column> = vec![
        expr_column("id", RType::Int, true),
        text("select_type"),
        text("table"),
        text("type"),
        text("possible_keys"),
        text("key"),
        text("key_len"),
        text("ref"),
        text("rows"),
        text("Extra"),
    ];
    let s = |v: Option<String>| v.map_or(Value::Null, |x| Value::Bytes(x.into_bytes()));
    let rows = lines
        .into_iter()
        .map(|l| {
            let extra = Some(l.extra.join("; "));
            vec![
                Value::Int(1),
                Value::Bytes(b"SIMPLE".to_vec()),
                s(l.table),
                s(l.ty.map(str::to_string)),
                s(l.possible),
                s(l.key),
                s(l.key_len),
                s(l.refs),
                s(l.rows.map(|r| r.to_string())),
                s(extra),
            ]
        })
        .collect();
    Output::rows(columns, rows)
}
