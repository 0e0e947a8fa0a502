//! SELECT: compilation of a single-table (or table-less) query into a [`SelectPlan`] and its
//! execution: access path (`plan.rs`), WHERE filter, GROUP BY / aggregates / HAVING,
//! projections, ORDER BY, DISTINCT, LIMIT/OFFSET; plus the result column metadata.
//!
//! Execution streams: the access path's rows are visited borrowed (`plan::visit`) and only
//! what the query keeps is copied (projected values, a group's first row); joins are nested
//! loops over the joined tables' rows (read once) that hand each joined row to the same sink,
//! so the join is never materialised; LIMIT stops the scan (and the loops) when nothing after
//! it reorders or removes rows.
//!
//! Limits (`guard.rs`): every source row, joined row, sort comparison and DISTINCT row passes
//! the session's statement guard check (KILL, max_statement_time, client gone), and every
//! row, key, group or GROUP_CONCAT byte kept is charged to its memory budget (1290).
//!
//! Invariants: placeholders are numbered in textual order (projection, WHERE, GROUP BY,
//! HAVING, ORDER BY, LIMIT); result values conform to their column's declared type.

use onelog_protocol::errors;
use std::collections::{HashMap, HashSet};
use std::ops::ControlFlow;
use std::sync::Arc;

use onelog_binlog::{ColumnType, Value};
use onelog_engine::{LockMode, SqlType, TableDef, Transaction};
use sqlparser::ast;

use crate::context::ExecContext;
use crate::error::SqlError;
use crate::expr::{
    binary_values, compare, conform, key_bytes, rtype_column, sort_cmp, AggFunc, AggSpec, BinOp,
    Compiler, Env, Expr, RType, Scope,
};
use crate::output::Column;
use crate::plan::access::{plan, resolve, visit, Plan};

/// A compiled SELECT.
#[derive(Debug, Clone)]
pub(crate) struct SelectPlan {
    pub table: Option<Arc<TableDef>>,
    /// Tables joined to `table`, in order.
    pub joins: Vec<JoinStep>,
    pub plan: Option<Plan>,
    pub projections: Vec<Expr>,
    pub rtypes: Vec<RType>,
    pub columns: Vec<Column>,
    pub aggs: Vec<AggSpec>,
    pub grouped: bool,
    pub group_by: Vec<Expr>,
    pub having: Option<Expr>,
    pub order_by: Vec<(Expr, bool)>,
    pub distinct: bool,
    pub limit: Option<Expr>,
    pub offset: Option<Expr>,
    pub lock: Option<LockMode>,
    pub params: usize,
}

/// One joined table: nested loop over its rows, `on` tested on the joined row.
#[derive(Debug, Clone)]
pub(crate) struct JoinStep {
    pub table: Arc<TableDef>,
    pub on: Option<Expr>,
    /// LEFT JOIN: a left row without a match gets NULLs.
    pub left: bool,
}

const NOT_NULL: u16 = 1;
const PRI_KEY: u16 = 2;
const UNIQUE_KEY: u16 = 4;
const MULTIPLE_KEY: u16 = 8;
const BLOB: u16 = 16;
const UNSIGNED: u16 = 32;
const BINARY: u16 = 128;
const AUTO_INCREMENT: u16 = 512;
const NUM: u16 = 32768;

/// Result-set metadata of a table column.
pub(crate) fn table_column(def: &TableDef, i: usize, table_alias: &str, name: &str) -> Column {
    use SqlType as T;
    let c = &def.columns[i];
    let mut flags = 0u16;
    if !c.nullable {
        flags |= NOT_NULL;
    }
    if def.primary_key.contains(&i) {
        flags |= PRI_KEY;
    }
    if def.auto_increment == Some(i) {
        flags |= AUTO_INCREMENT;
    }
    for ix in &def.indexes {
        if ix.columns.first() == Some(&i) {
            flags |= if ix.unique && ix.columns.len() == 1 {
                UNIQUE_KEY
            } else {
                MULTIPLE_KEY
            };
        }
    }
    let unsigned = matches!(
        c.ty,
        T::TinyInt { unsigned: true }
            | T::SmallInt { unsigned: true }
            | T::MediumInt { unsigned: true }
            | T::Int { unsigned: true }
            | T::BigInt { unsigned: true }
    );
    if unsigned {
        flags |= UNSIGNED;
    }
    let (ty, len, dec, charset, extra) = match c.ty {
        T::TinyInt { unsigned } => (ColumnType::Tiny, if unsigned { 3 } else { 4 }, 0, 63, NUM),
        T::SmallInt { unsigned } => (ColumnType::Short, if unsigned { 5 } else { 6 }, 0, 63, NUM),
        T::MediumInt { unsigned } => (ColumnType::Int24, if unsigned { 8 } else { 9 }, 0, 63, NUM),
        T::Int { unsigned } => (ColumnType::Long, if unsigned { 10 } else { 11 }, 0, 63, NUM),
        T::BigInt { .. } => (ColumnType::LongLong, 20, 0, 63, NUM),
        T::Float => (ColumnType::Float, 12, 31, 63, NUM),
        T::Double => (ColumnType::Double, 22, 31, 63, NUM),
        T::Decimal { precision, scale } => (
            ColumnType::NewDecimal,
            u32::from(precision) + 1 + u32::from(scale > 0),
            scale,
            63,
            NUM,
        ),
        T::Char(n) => (ColumnType::String, n * 4, 0, 45, 0),
        T::VarChar(n) => (ColumnType::VarString, n * 4, 0, 45, 0),
        T::Binary(n) => (ColumnType::String, n, 0, 63, BINARY),
        T::VarBinary(n) => (ColumnType::VarString, n, 0, 63, BINARY),
        T::TinyText => (ColumnType::Blob, 255 * 4, 0, 45, BLOB),
        T::Text => (ColumnType::Blob, 65535 * 4, 0, 45, BLOB),
        T::MediumText => (ColumnType::Blob, 16_777_215 * 4, 0, 45, BLOB),
        T::LongText => (ColumnType::Blob, u32::MAX, 0, 45, BLOB),
        T::TinyBlob => (ColumnType::Blob, 255, 0, 63, BLOB | BINARY),
        T::Blob => (ColumnType::Blob, 65535, 0, 63, BLOB | BINARY),
        T::MediumBlob => (ColumnType::Blob, 16_777_215, 0, 63, BLOB | BINARY),
        T::LongBlob => (ColumnType::Blob, u32::MAX, 0, 63, BLOB | BINARY),
        T::Date => (ColumnType::Date, 10, 0, 63, BINARY),
        T::DateTime(f) => (
            ColumnType::DateTime,
            19 + if f > 0 { u32::from(f) + 1 } else { 0 },
            f,
            63,
            BINARY,
        ),
        T::Timestamp(f) => (
            ColumnType::Timestamp,
            19 + if f > 0 { u32::from(f) + 1 } else { 0 },
            f,
            63,
            BINARY,
        ),
        T::Time(f) => (
            ColumnType::Time,
            10 + if f > 0 { u32::from(f) + 1 } else { 0 },
            f,
            63,
            BINARY,
        ),
        T::Year => (ColumnType::Year, 4, 0, 63, NUM | UNSIGNED),
        T::Null => (ColumnType::Null, 0, 0, 63, BINARY),
    };
    Column {
        name: name.to_string(),
        org_name: c.name.clone(),
        table: table_alias.to_string(),
        org_table: def.name.clone(),
        db: def.db.clone(),
        column_type: ty,
        flags: flags | extra,
        length: len,
        decimals: dec,
        charset,
    }
}

/// The result type of a value of a column type (for expressions yielding a column's value).
pub(crate) fn concrete(ty: &SqlType) -> RType {
    use SqlType as T;
    match *ty {
        T::TinyInt { unsigned: true }
        | T::SmallInt { unsigned: true }
        | T::MediumInt { unsigned: true }
        | T::Int { unsigned: true }
        | T::BigInt { unsigned: true } => RType::UInt,
        T::TinyInt { .. }
        | T::SmallInt { .. }
        | T::MediumInt { .. }
        | T::Int { .. }
        | T::BigInt { .. } => RType::Int,
        T::Float | T::Double => RType::Double,
        T::Decimal { precision, scale } => RType::Decimal(precision, scale),
        T::Date => RType::Date,
        T::DateTime(f) | T::Timestamp(f) => RType::DateTime(f),
        T::Time(_) => RType::Time,
        T::Year => RType::Year,
        T::Null => RType::Null,
        T::Char(n) | T::VarChar(n) | T::Binary(n) | T::VarBinary(n) => RType::Str(n),
        _ => RType::Str(65535),
    }
}

/// Metadata of an expression column.
pub(crate) fn expr_column(name: &str, r: RType, nullable: bool) -> Column {
    let (ty, flags, length, decimals, charset) = rtype_column(r);
    Column {
        name: name.to_string(),
        org_name: String::new(),
        table: String::new(),
        org_table: String::new(),
        db: String::new(),
        column_type: ty,
        flags: flags | if nullable { 0 } else { NOT_NULL },
        length,
        decimals,
        charset,
    }
}

/// Resolves `db.table` against the session's current database, after checking that the
/// session holds the privileges `need` on it (1142 before 1146, as in MariaDB).
pub(crate) fn resolve_table(
    cx: &ExecContext,
    name: &ast::ObjectName,
    need: u64,
) -> Result<Arc<TableDef>, SqlError> {
    let parts = crate::expr::object_name_parts(name);
    let (db, table) = match parts.as_slice() {
        [t] => (
            cx.current_db.clone().ok_or_else(SqlError::no_database)?,
            t.clone(),
        ),
        [d, t] => (d.clone(), t.clone()),
        _ => return Err(SqlError::syntax(&name.to_string())),
    };
    cx.check_table_privilege(&db, &table, need)?;
    let cat = cx.server.engine.catalog();
    match cat.table_by_name(&db, &table) {
        Some(t) => Ok(t.clone()),
        None => Err(SqlError::no_such_table(&db, &table)),
    }
}

fn is_dual(name: &ast::ObjectName) -> bool {
    let p = crate::expr::object_name_parts(name);
    p.len() == 1 && p[0].eq_ignore_ascii_case("dual")
}

/// Compiles a SELECT query.
pub(crate) fn compile(
    cx: &ExecContext,
    q: &ast::Query,
    lock: crate::parse::LockClause,
) -> Result<SelectPlan, SqlError> {
    if q.with.is_some() {
        return Err(SqlError::unsupported("WITH"));
    }
    let sel = match &*q.body {
        ast::SetExpr::Select(s) => s,
        ast::SetExpr::Query(inner) if q.order_by.is_none() && q.limit_clause.is_none() => {
            return compile(cx, inner, lock)
        }
        ast::SetExpr::SetOperation { .. } => return Err(SqlError::unsupported("UNION")),
        other => {
            return Err(SqlError::unsupported(
                &other.to_string().chars().take(40).collect::<String>(),
            ))
        }
    };
    // FROM: tables in order (comma joins and JOIN ... ON), each with its qualifier.
    let mut froms: Vec<(Arc<TableDef>, String)> = Vec::new();
    // For each table after the first: (ON condition, LEFT join).
    let mut join_kinds: Vec<(Option<&ast::Expr>, bool)> = Vec::new();
    let table_of = |tf: &ast::TableFactor| -> Result<Option<(Arc<TableDef>, String)>, SqlError> {
        match tf {
            ast::TableFactor::Table { name, alias, .. } if is_dual(name) && alias.is_none() => {
                Ok(None)
            }
            ast::TableFactor::Table { name, alias, .. } => {
                let t = resolve_table(cx, name, crate::privilege::SELECT)?;
                let qn = match alias {
                    Some(a) => a.name.value.clone(),
                    None => t.name.clone(),
                };
                Ok(Some((t, qn)))
            }
            _ => Err(SqlError::unsupported("derived tables")),
        }
    };
    for (n, twj) in sel.from.iter().enumerate() {
        match table_of(&twj.relation)? {
            Some(t) => {
                if n > 0 {
                    join_kinds.push((None, false));
                }
                froms.push(t);
            }
            None if sel.from.len() == 1 && twj.joins.is_empty() => {}
            None => return Err(SqlError::unsupported("DUAL in a join")),
        }
        for j in &twj.joins {
            let (constraint, left) = match &j.join_operator {
                ast::JoinOperator::Join(c) | ast::JoinOperator::Inner(c) => (c, false),
                ast::JoinOperator::CrossJoin(c) => (c, false),
                ast::JoinOperator::Left(c) | ast::JoinOperator::LeftOuter(c) => (c, true),
                _ => return Err(SqlError::unsupported("this kind of JOIN")),
            };
            let on = match constraint {
                ast::JoinConstraint::On(e) => Some(e),
                ast::JoinConstraint::None => None,
                _ => return Err(SqlError::unsupported("JOIN ... USING/NATURAL")),
            };
            match table_of(&j.relation)? {
                Some(t) => froms.push(t),
                None => return Err(SqlError::unsupported("DUAL in a join")),
            }
            join_kinds.push((on, left));
        }
    }
    let (table, qualifier) = match froms.first() {
        Some((t, q)) => (Some(t.clone()), q.clone()),
        None => (None, String::new()),
    };
    let mut offsets = Vec::with_capacity(froms.len());
    let mut off = 0;
    for (t, _) in &froms {
        offsets.push(off);
        off += t.columns.len();
    }
    let db = cx.current_db.clone().unwrap_or_default();
    let joined: Vec<(&TableDef, &str, usize)> = froms
        .iter()
        .zip(&offsets)
        .skip(1)
        .map(|((t, q), o)| (&**t, q.as_str(), *o))
        .collect();
    // A synthetic definition of the joined row (for result types).
    let combined: Option<Arc<TableDef>> = if froms.len() > 1 {
        let mut d = (*froms[0].0).clone();
        d.indexes.clear();
        for (t, _) in &froms[1..] {
            d.columns.extend(t.columns.iter().cloned());
        }
        Some(Arc::new(d))
    } else {
        None
    };
    let mut c = Compiler::new(
        Scope {
            table: table.as_deref(),
            qualifier: &qualifier,
            db: &db,
            joined,
        },
        "field list",
    );
    // Owner of a combined column position: (table index, column within it).
    let owner = |i: usize| -> (usize, usize) {
        let k = offsets.iter().rposition(|&o| o <= i).unwrap_or(0);
        (k, i - offsets[k])
    };
    let mut joins = Vec::new();
    for (k, (on, left)) in join_kinds.iter().enumerate() {
        c.place = "on clause";
        let cond = match on {
            Some(e) => Some(c.compile(e)?),
            None => None,
        };
        joins.push(JoinStep {
            table: froms[k + 1].0.clone(),
            on: cond,
            left: *left,
        });
    }
    c.place = "field list";
    c.aggs = Some(Vec::new());
    let mut projections = Vec::new();
    let mut names: Vec<(String, Option<usize>)> = Vec::new();
    let mut aliases: HashMap<String, usize> = HashMap::new();
    for item in &sel.projection {
        match item {
            ast::SelectItem::Wildcard(_) | ast::SelectItem::QualifiedWildcard(..) => {
                if froms.is_empty() {
                    return Err(SqlError::of(errors::ER_NO_TABLES_USED, "No tables used"));
                }
                let only: Option<String> = match item {
                    ast::SelectItem::QualifiedWildcard(
                        ast::SelectItemQualifiedWildcardKind::ObjectName(n),
                        _,
                    ) => crate::expr::object_name_parts(n).last().cloned(),
                    ast::SelectItem::QualifiedWildcard(..) => {
                        return Err(SqlError::unsupported("this wildcard"))
                    }
                    _ => None,
                };
                let mut any = false;
                for ((t, q), &o) in froms.iter().zip(&offsets) {
                    if only.as_ref().is_some_and(|w| w != q) {
                        continue;
                    }
                    any = true;
                    for (i, col) in t.columns.iter().enumerate() {
                        projections.push(Expr::Col(o + i));
                        names.push((col.name.clone(), Some(o + i)));
                    }
                }
                if !any {
                    return Err(SqlError::of(
                        errors::ER_BAD_TABLE_ERROR,
                        format!("Unknown table '{}'", only.unwrap_or_default()),
                    ));
                }
            }
            ast::SelectItem::UnnamedExpr(e) => {
                let x = c.compile(e)?;
                let name = match e {
                    ast::Expr::Identifier(i) => i.value.clone(),
                    ast::Expr::CompoundIdentifier(p) => {
                        p.last().map(|i| i.value.clone()).unwrap_or_default()
                    }
                    ast::Expr::Value(v) => match &v.value {
                        ast::Value::SingleQuotedString(s) | ast::Value::DoubleQuotedString(s) => {
                            s.clone()
                        }
                        other => other.to_string(),
                    },
                    other => other.to_string(),
                };
                let col = match x {
                    Expr::Col(i) => Some(i),
                    _ => None,
                };
                projections.push(x);
                names.push((name, col));
            }
            ast::SelectItem::ExprWithAlias { expr, alias } => {
                let x = c.compile(expr)?;
                aliases.insert(alias.value.to_ascii_lowercase(), projections.len());
                let col = match x {
                    Expr::Col(i) => Some(i),
                    _ => None,
                };
                projections.push(x);
                names.push((alias.value.clone(), col));
            }
            _ => return Err(SqlError::unsupported("this select item")),
        }
    }
    // WHERE (no aggregates).
    let saved = c.aggs.take();
    c.place = "where clause";
    let where_ = match &sel.selection {
        Some(w) => Some(c.compile(w)?),
        None => None,
    };
    c.aggs = saved;
    c.place = "group statement";
    let mut group_by = Vec::new();
    if let ast::GroupByExpr::Expressions(exprs, _) = &sel.group_by {
        for e in exprs {
            group_by.push(resolve_order_expr(&mut c, e, &aliases, &projections)?);
        }
    } else {
        return Err(SqlError::unsupported("GROUP BY ALL"));
    }
    c.aliases = aliases
        .iter()
        .map(|(k, &i)| (k.clone(), projections[i].clone()))
        .collect();
    c.place = "having clause";
    let having = match &sel.having {
        Some(h) => Some(resolve_order_expr(&mut c, h, &aliases, &projections)?),
        None => None,
    };
    c.place = "order clause";
    let mut order_by = Vec::new();
    if let Some(ob) = &q.order_by {
        match &ob.kind {
            ast::OrderByKind::Expressions(list) => {
                for o in list {
                    let x = resolve_order_expr(&mut c, &o.expr, &aliases, &projections)?;
                    let desc = matches!(o.options.sort, Some(ast::OrderBySort::Desc));
                    order_by.push((x, desc));
                }
            }
            ast::OrderByKind::All(_) => return Err(SqlError::unsupported("ORDER BY ALL")),
        }
    }
    let (limit, offset) = match &q.limit_clause {
        None => (None, None),
        Some(ast::LimitClause::LimitOffset { limit, offset, .. }) => {
            let l = match limit {
                Some(e) => Some(c.compile(e)?),
                None => None,
            };
            let o = match offset {
                Some(o) => Some(c.compile(&o.value)?),
                None => None,
            };
            (l, o)
        }
        Some(ast::LimitClause::OffsetCommaLimit { offset, limit }) => {
            let o = c.compile(offset)?;
            let l = c.compile(limit)?;
            (Some(l), Some(o))
        }
    };
    let aggs = c.aggs.take().unwrap_or_default();
    let params = c.params;
    let grouped = !aggs.is_empty() || !group_by.is_empty();
    if !grouped && having.is_some() {
        // HAVING without grouping acts as a filter on the result.
    }
    let distinct = matches!(sel.distinct, Some(ast::Distinct::Distinct));
    let mut rtypes = Vec::with_capacity(projections.len());
    let mut columns = Vec::with_capacity(projections.len());
    for (x, (name, col)) in projections.iter().zip(&names) {
        let tdef = combined.as_deref().or(table.as_deref());
        let r = x.rtype(tdef, &aggs);
        rtypes.push(match (x, r, tdef) {
            (Expr::Col(_), _, _) | (_, _, None) => r,
            (_, RType::Column(i), Some(t)) => concrete(&t.columns[i].ty),
            _ => r,
        });
        columns.push(match (col, table.as_deref(), r) {
            (Some(i), Some(_), _) => {
                let (k, j) = owner(*i);
                table_column(&froms[k].0, j, &froms[k].1, name)
            }
            (_, Some(_), RType::Column(i)) => {
                let (k, j) = owner(i);
                let mut col = table_column(&froms[k].0, j, "", name);
                col.org_name.clear();
                col.org_table.clear();
                col.db.clear();
                col.flags &= !(PRI_KEY | UNIQUE_KEY | MULTIPLE_KEY | AUTO_INCREMENT);
                col
            }
            _ => {
                let nullable = !matches!(x, Expr::Lit(v) if *v != Value::Null)
                    && !matches!(x, Expr::Agg(i) if matches!(aggs[*i].func, AggFunc::Count | AggFunc::CountStar));
                expr_column(name, r, nullable)
            }
        });
    }
    let plan = table.as_deref().map(|t| plan(t, where_.as_ref()));
    let plan = match (plan, table.is_none(), where_) {
        (Some(p), _, _) => Some(p),
        (None, true, Some(w)) => Some(Plan {
            access: crate::plan::access::Access::Full,
            residual: Some(w.clone()),
            filter: Some(w),
        }),
        (None, _, _) => None,
    };
    let lock = match lock {
        crate::parse::LockClause::None => None,
        crate::parse::LockClause::Shared => Some(LockMode::Shared),
        crate::parse::LockClause::Exclusive => Some(LockMode::Exclusive),
    };
    Ok(SelectPlan {
        table,
        joins,
        plan,
        projections,
        rtypes,
        columns,
        aggs,
        grouped,
        group_by,
        having,
        order_by,
        distinct,
        limit,
        offset,
        lock,
        params,
    })
}

/// ORDER BY / GROUP BY / HAVING item: a position, a select alias, or an expression.
fn resolve_order_expr(
    c: &mut Compiler,
    e: &ast::Expr,
    aliases: &HashMap<String, usize>,
    projections: &[Expr],
) -> Result<Expr, SqlError> {
    if let ast::Expr::Value(v) = e {
        if let ast::Value::Number(n, _) = &v.value {
            if let Ok(pos) = n.parse::<usize>() {
                if pos >= 1 && pos <= projections.len() {
                    return Ok(projections[pos - 1].clone());
                }
                return Err(SqlError::unknown_column(n, c.place));
            }
        }
    }
    if let ast::Expr::Identifier(i) = e {
        if let Some(&p) = aliases.get(&i.value.to_ascii_lowercase()) {
            let is_col = c
                .scope
                .table
                .is_some_and(|t| t.column_index(&i.value).is_some());
            if !is_col || c.place != "group statement" {
                return Ok(projections[p].clone());
            }
        }
    }
    c.compile(e)
}

fn limit_value(e: &Option<Expr>, env: &Env) -> Result<Option<u64>, SqlError> {
    match e {
        None => Ok(None),
        Some(x) => {
            let v = x.eval(&[], env)?;
            match crate::expr::to_i128(&v) {
                Some(n) if n >= 0 => Ok(Some(n.min(u64::MAX as i128) as u64)),
                _ => Err(SqlError::wrong_arguments("LIMIT")),
            }
        }
    }
}

/// Per-group aggregate state.
struct AggState {
    vals: Vec<Value>,
    counts: Vec<i64>,
    seen: Vec<Option<HashSet<Vec<u8>>>>,
    /// GROUP_CONCAT values cut at `group_concat_max_len`.
    cut: Vec<bool>,
}

impl AggState {
    fn new(aggs: &[AggSpec]) -> Self {
        AggState {
            vals: aggs
                .iter()
                .map(|a| match a.func {
                    AggFunc::Count | AggFunc::CountStar => Value::Int(0),
                    _ => Value::Null,
                })
                .collect(),
            counts: vec![0; aggs.len()],
            seen: aggs.iter().map(|a| a.distinct.then(HashSet::new)).collect(),
            cut: vec![false; aggs.len()],
        }
    }

    fn add(&mut self, aggs: &[AggSpec], row: &[Value], env: &Env) -> Result<(), SqlError> {
        for (i, a) in aggs.iter().enumerate() {
            if a.func == AggFunc::CountStar {
                self.counts[i] += 1;
                continue;
            }
            let v = match &a.arg {
                Some(e) => e.eval(row, env)?,
                None => Value::Null,
            };
            if v == Value::Null {
                continue;
            }
            if let Some(seen) = &mut self.seen[i] {
                let mut k = Vec::new();
                key_bytes(&v, &mut k);
                if !seen.insert(k) {
                    continue;
                }
            }
            self.counts[i] += 1;
            let cur = &mut self.vals[i];
            match a.func {
                AggFunc::Count | AggFunc::CountStar => {}
                AggFunc::Sum | AggFunc::Avg => {
                    *cur = if *cur == Value::Null {
                        match v {
                            Value::Bytes(_) => {
                                Value::Double(crate::expr::to_f64(&v).unwrap_or(0.0))
                            }
                            other => other,
                        }
                    } else {
                        binary_values(BinOp::Add, cur, &v)?
                    };
                }
                AggFunc::Min | AggFunc::Max => {
                    let replace = *cur == Value::Null
                        || match compare(&v, cur) {
                            Some(std::cmp::Ordering::Less) => a.func == AggFunc::Min,
                            Some(std::cmp::Ordering::Greater) => a.func == AggFunc::Max,
                            _ => false,
                        };
                    if replace {
                        *cur = v;
                    }
                }
                AggFunc::GroupConcat => {
                    // Cut at group_concat_max_len with warning 1260, as MariaDB (the row
                    // number is the value's position in its group); a cut value stays.
                    if self.cut[i] {
                        continue;
                    }
                    let guard = &env.cx.guard;
                    let max = guard.group_concat_max().min(usize::MAX as u64) as usize;
                    let t = crate::expr::text_of(&v);
                    guard.charge(t.len() as u64 + 1)?;
                    let mut b = match std::mem::replace(cur, Value::Null) {
                        Value::Bytes(mut b) => {
                            b.push(b',');
                            b
                        }
                        _ => Vec::new(),
                    };
                    b.extend_from_slice(&t);
                    if b.len() > max {
                        // On a character boundary (a UTF-8 sequence is never split).
                        let mut m = max;
                        while m > 0 && b[m] & 0xC0 == 0x80 {
                            m -= 1;
                        }
                        b.truncate(m);
                        self.cut[i] = true;
                        guard.warn(
                            1260,
                            format!("Row {} was cut by GROUP_CONCAT()", self.counts[i]),
                        );
                    }
                    *cur = Value::Bytes(b);
                }
                AggFunc::BitAnd | AggFunc::BitOr => {
                    *cur = if *cur == Value::Null {
                        Value::UInt(crate::expr::to_i128(&v).unwrap_or(0) as u64)
                    } else {
                        binary_values(
                            if a.func == AggFunc::BitAnd {
                                BinOp::BitAnd
                            } else {
                                BinOp::BitOr
                            },
                            cur,
                            &v,
                        )?
                    };
                }
            }
        }
        Ok(())
    }

    fn finish(mut self, aggs: &[AggSpec]) -> Result<Vec<Value>, SqlError> {
        for (i, a) in aggs.iter().enumerate() {
            match a.func {
                AggFunc::Count | AggFunc::CountStar => self.vals[i] = Value::Int(self.counts[i]),
                AggFunc::Avg if self.vals[i] != Value::Null => {
                    self.vals[i] =
                        binary_values(BinOp::Div, &self.vals[i], &Value::Int(self.counts[i]))?;
                }
                AggFunc::BitAnd if self.vals[i] == Value::Null => {
                    self.vals[i] = Value::UInt(u64::MAX)
                }
                AggFunc::BitOr if self.vals[i] == Value::Null => self.vals[i] = Value::UInt(0),
                _ => {}
            }
        }
        Ok(self.vals)
    }
}

/// Result columns of an execution: the compiled ones, with `Dyn` columns typed by their
/// first non-NULL value.
pub(crate) fn result_columns(p: &SelectPlan, rows: &[Vec<Value>]) -> Vec<Column> {
    let mut cols = p.columns.clone();
    for (i, r) in p.rtypes.iter().enumerate() {
        if *r != RType::Dyn {
            continue;
        }
        let v = rows
            .iter()
            .filter_map(|row| row.get(i))
            .find(|v| **v != Value::Null);
        let rt = v.map_or(RType::Null, crate::expr::value_rtype);
        let rt = match rt {
            RType::Str(_) => RType::Str(255),
            other => other,
        };
        cols[i] = expr_column(&cols[i].name, rt, true);
    }
    cols
}

/// Runs a compiled SELECT; returns (rows, rows found before LIMIT).
///
/// Single-table queries stream: each row the access path yields is filtered, projected (only
/// the projected values are copied) or folded into its group without being materialised;
/// without ORDER BY / DISTINCT / grouping the scan stops once LIMIT + OFFSET rows are out.
pub(crate) fn execute(
    p: &SelectPlan,
    txn: &mut Transaction,
    env: &Env,
) -> Result<(Vec<Vec<Value>>, u64), SqlError> {
    let limit = limit_value(&p.limit, env)?;
    let offset = limit_value(&p.offset, env)?.unwrap_or(0);
    let sorted = !p.order_by.is_empty();
    // ORDER BY items that are a projected column are compared on the projected value (not
    // copied again): `Some(projection position)`; the others (`None`) get a key slot of their
    // own, in order.
    let order_src: Vec<Option<usize>> = p
        .order_by
        .iter()
        .map(|(x, _)| match x {
            Expr::Col(c) if !p.grouped => p
                .projections
                .iter()
                .position(|y| matches!(y, Expr::Col(d) if d == c)),
            _ => None,
        })
        .collect();
    let stop_at = if !sorted && !p.distinct && !p.grouped {
        limit.map(|l| l.saturating_add(offset))
    } else {
        None
    };
    let mut sink = Sink {
        p,
        env,
        filter: None,
        order_src: &order_src,
        stop_at,
        out: Vec::with_capacity(16),
        groups: Vec::new(),
        group_index: HashMap::new(),
        key: Vec::new(),
    };
    match (&p.table, &p.plan) {
        (Some(t), Some(pl)) if p.joins.is_empty() => {
            let (src, filter) = resolve(t, pl, env)?;
            sink.filter = filter;
            visit(txn, t, &src, p.lock, &mut |row| sink.row(row))?;
        }
        (Some(t), Some(pl)) => {
            // The access path only narrows the first table: the whole WHERE runs on the
            // joined rows, which stream into the sink (LIMIT stops the loops).
            let rights = join_tables(p, txn, env)?;
            let (src, _) = resolve(t, pl, env)?;
            sink.filter = pl.filter.as_ref();
            let mut buf = Vec::new();
            visit(txn, t, &src, p.lock, &mut |row| {
                buf.clear();
                buf.extend_from_slice(row);
                join_rows(p, &rights, env, &mut buf, 0, &mut sink)
            })?;
        }
        (_, pl) => {
            sink.filter = pl.as_ref().and_then(|x| x.residual.as_ref());
            let _ = sink.row(&[])?;
        }
    }
    let mut out = sink.finish()?;
    let guard = &env.cx.guard;
    if sorted {
        // The comparator cannot fail: once the guard stops the statement every comparison
        // answers Equal (the sort ends quickly) and the error is returned after it.
        let mut stop: Option<SqlError> = None;
        out.sort_by(|a, b| {
            if stop.is_some() {
                return std::cmp::Ordering::Equal;
            }
            if let Err(e) = guard.check() {
                stop = Some(e);
                return std::cmp::Ordering::Equal;
            }
            let mut slot = 0;
            for ((_, desc), src) in p.order_by.iter().zip(&order_src) {
                let o = match src {
                    Some(j) => sort_cmp(&a.1[*j], &b.1[*j]),
                    None => {
                        slot += 1;
                        sort_cmp(&a.0[slot - 1], &b.0[slot - 1])
                    }
                };
                let o = if *desc { o.reverse() } else { o };
                if o != std::cmp::Ordering::Equal {
                    return o;
                }
            }
            std::cmp::Ordering::Equal
        });
        if let Some(e) = stop {
            return Err(e);
        }
    }
    let mut rows: Vec<Vec<Value>> = out.into_iter().map(|(_, r)| r).collect();
    if p.distinct && sorted && (0..p.projections.len()).all(|j| order_src.contains(&Some(j))) {
        // Every projected column is a sort key (all are table columns, whose values of one
        // type compare equal exactly when their DISTINCT keys are equal): duplicates are
        // adjacent, and the first of each run is the one a set would keep.
        let (mut prev, mut cur) = (Vec::new(), Vec::new());
        let mut first = true;
        rows.retain(|r| {
            cur.clear();
            for v in r {
                key_bytes(v, &mut cur);
            }
            let keep = first || cur != prev;
            first = false;
            std::mem::swap(&mut prev, &mut cur);
            keep
        });
    } else if p.distinct {
        let mut seen: HashSet<Vec<u8>> = HashSet::new();
        let mut k = Vec::new();
        let mut stop: Result<(), SqlError> = Ok(());
        rows.retain(|r| {
            if stop.is_err() {
                return false;
            }
            k.clear();
            for v in r {
                key_bytes(v, &mut k);
            }
            if seen.contains(&k) {
                false
            } else {
                stop = guard
                    .check()
                    .and_then(|_| guard.charge(k.len() as u64 + 32));
                seen.insert(k.clone());
                true
            }
        });
        stop?;
    }
    let found = rows.len() as u64;
    if offset > 0 {
        let n = (offset as usize).min(rows.len());
        rows.drain(..n);
    }
    if let Some(l) = limit {
        rows.truncate(l.min(usize::MAX as u64) as usize);
    }
    Ok((rows, found))
}

/// The rows of each joined table (read once, kept for the nested loops; charged to the
/// statement's memory budget).
fn join_tables(
    p: &SelectPlan,
    txn: &mut Transaction,
    env: &Env,
) -> Result<Vec<Vec<Vec<Value>>>, SqlError> {
    let guard = &env.cx.guard;
    let mut out = Vec::with_capacity(p.joins.len());
    for j in &p.joins {
        let mut rows = Vec::new();
        let src = crate::plan::access::Source::Full;
        visit(txn, &j.table, &src, p.lock, &mut |row| {
            guard.check()?;
            guard.charge(crate::guard::row_bytes(row))?;
            rows.push(row.to_vec());
            Ok(ControlFlow::Continue(()))
        })?;
        out.push(rows);
    }
    Ok(out)
}

/// Nested-loop join of the partial row `row` (tables `0..=k` of the FROM list) with joined
/// table `k` onwards; every complete row goes to `sink` as it is made, so nothing but the
/// sink's own output is materialised, and the sink's Break (LIMIT reached) stops every loop.
fn join_rows(
    p: &SelectPlan,
    rights: &[Vec<Vec<Value>>],
    env: &Env,
    row: &mut Vec<Value>,
    k: usize,
    sink: &mut Sink,
) -> crate::plan::access::Visit {
    let Some(j) = p.joins.get(k) else {
        return sink.row(row);
    };
    let base = row.len();
    let mut matched = false;
    for r in &rights[k] {
        env.cx.guard.check()?;
        row.truncate(base);
        row.extend_from_slice(r);
        if let Some(on) = &j.on {
            if !on.test(row, &[], env)? {
                continue;
            }
        }
        matched = true;
        if join_rows(p, rights, env, row, k + 1, sink)?.is_break() {
            return Ok(ControlFlow::Break(()));
        }
    }
    if !matched && j.left {
        row.truncate(base);
        row.resize(base + j.table.columns.len(), Value::Null);
        if join_rows(p, rights, env, row, k + 1, sink)?.is_break() {
            return Ok(ControlFlow::Break(()));
        }
    }
    row.truncate(base);
    Ok(ControlFlow::Continue(()))
}

/// Where the source rows of one execution go: filter, then groups or projected output rows.
struct Sink<'a> {
    p: &'a SelectPlan,
    env: &'a Env<'a>,
    filter: Option<&'a Expr>,
    order_src: &'a [Option<usize>],
    /// Stop the scan once this many output rows exist (LIMIT + OFFSET, when nothing later
    /// reorders or removes rows).
    stop_at: Option<u64>,
    /// Output rows: (values of the ORDER BY items without a projection source, projected row).
    out: Vec<(Vec<Value>, Vec<Value>)>,
    /// Grouped queries: (first row of the group, aggregate state).
    groups: Vec<(Vec<Value>, AggState)>,
    group_index: HashMap<Vec<u8>, usize>,
    key: Vec<u8>,
}

impl Sink<'_> {
    fn row(&mut self, row: &[Value]) -> crate::plan::access::Visit {
        let p = self.p;
        let env = self.env;
        let guard = &env.cx.guard;
        guard.check()?;
        if let Some(f) = self.filter {
            if !f.test(row, &[], env)? {
                return Ok(ControlFlow::Continue(()));
            }
        }
        if p.grouped {
            let gi = if p.group_by.is_empty() {
                if self.groups.is_empty() {
                    self.groups.push((row.to_vec(), AggState::new(&p.aggs)));
                }
                0
            } else {
                self.key.clear();
                for g in &p.group_by {
                    key_bytes(&g.eval(row, env)?, &mut self.key);
                }
                match self.group_index.get(&self.key) {
                    Some(&i) => i,
                    None => {
                        guard.charge(
                            crate::guard::row_bytes(row)
                                + 2 * self.key.len() as u64
                                + 64 * p.aggs.len() as u64,
                        )?;
                        self.group_index.insert(self.key.clone(), self.groups.len());
                        self.groups.push((row.to_vec(), AggState::new(&p.aggs)));
                        self.groups.len() - 1
                    }
                }
            };
            self.groups[gi].1.add(&p.aggs, row, env)?;
            return Ok(ControlFlow::Continue(()));
        }
        if let Some(h) = &p.having {
            if !h.test(row, &[], env)? {
                return Ok(ControlFlow::Continue(()));
            }
        }
        let mut proj = Vec::with_capacity(p.projections.len());
        for (x, r) in p.projections.iter().zip(&p.rtypes) {
            let v = match x {
                Expr::Col(i) => row.get(*i).cloned().unwrap_or(Value::Null),
                other => conform(other.eval(row, env)?, *r),
            };
            proj.push(v);
        }
        let mut keys = Vec::new();
        for ((x, _), src) in p.order_by.iter().zip(self.order_src) {
            if src.is_none() {
                keys.push(x.eval(row, env)?);
            }
        }
        guard.charge(crate::guard::row_bytes(&keys) + crate::guard::row_bytes(&proj))?;
        self.out.push((keys, proj));
        if let Some(s) = self.stop_at {
            if self.out.len() as u64 >= s {
                return Ok(ControlFlow::Break(()));
            }
        }
        Ok(ControlFlow::Continue(()))
    }

    /// The output rows (unsorted); grouped queries get their groups finished and HAVING
    /// applied here.
    #[allow(clippy::type_complexity)]
    fn finish(self) -> Result<Vec<(Vec<Value>, Vec<Value>)>, SqlError> {
        let p = self.p;
        let env = self.env;
        if !p.grouped {
            return Ok(self.out);
        }
        let mut groups = self.groups;
        if groups.is_empty() && p.group_by.is_empty() {
            groups.push((Vec::new(), AggState::new(&p.aggs)));
        }
        let mut out = Vec::with_capacity(groups.len());
        for (rep, st) in groups {
            let aggs = st.finish(&p.aggs)?;
            if let Some(h) = &p.having {
                if !h.test(&rep, &aggs, env)? {
                    continue;
                }
            }
            let mut proj = Vec::with_capacity(p.projections.len());
            for (x, r) in p.projections.iter().zip(&p.rtypes) {
                proj.push(conform(x.eval_with(&rep, &aggs, env)?, *r));
            }
            let mut keys = Vec::with_capacity(p.order_by.len());
            for (x, _) in &p.order_by {
                keys.push(x.eval_with(&rep, &aggs, env)?);
            }
            out.push((keys, proj));
        }
        Ok(out)
    }
}
