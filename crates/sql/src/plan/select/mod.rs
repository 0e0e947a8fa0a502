//! SELECT, planned: [`compile`] has the FROM tables bound (`bind::tables`, with their
//! privileges), binds every name of the query to a column or an alias, compiles the expressions
//! (projection, WHERE, GROUP BY / aggregates / HAVING, ORDER BY, LIMIT/OFFSET), chooses the
//! access path (`plan::access`) and the result column metadata, into a [`SelectPlan`] that
//! `execute::select` runs and prepared statements cache.
//!
//! Invariants: placeholders are numbered in textual order (projection, WHERE, GROUP BY,
//! HAVING, ORDER BY, LIMIT); a plan's `columns` and `rtypes` have one entry per projection.
//!
//! A query's nested queries compile through its child modules, `subquery` (subqueries, derived
//! tables, CTEs) and `setop` (UNION / INTERSECT / EXCEPT, recursive CTEs), which compile their
//! parts with [`compile_in`] again: one mutual recursion, kept inside this module tree.

pub(crate) mod from;
pub(crate) mod merge;
pub(crate) mod setop;
pub(crate) mod subquery;
pub(crate) mod view;
pub(crate) mod winexpr;

use crate::bind::tables::{from_tables, From, FromNode};
use crate::context::ExecContext;
use crate::error::SqlError;
use onelog_engine::collation::Collation;

use crate::expr::{rtype_column, AggFunc, AggSpec, CollRef, Compiler, Expr, RType, Scope};
use crate::output::Column;
use crate::plan::access::Plan;
use crate::plan::join::{plan_joins, JoinPlan};
use onelog_binlog::{ColumnType, Value};
use onelog_engine::{LockMode, SqlType, TableDef};
use onelog_protocol::errors;
use sqlparser::ast;
use std::collections::HashMap;
use std::sync::Arc;
pub(crate) use subquery::{Ctx, Derived, Hook, SubPlan};

/// A compiled SELECT.
#[derive(Debug, Clone)]
pub(crate) struct SelectPlan {
    pub table: Option<Arc<TableDef>>,
    /// How the FROM tables join (None: one table or none).
    pub join: Option<JoinPlan>,
    pub plan: Option<Plan>,
    pub projections: Vec<Expr>,
    pub rtypes: Vec<RType>,
    pub columns: Vec<Column>,
    pub aggs: Vec<AggSpec>,
    pub grouped: bool,
    pub group_by: Vec<Expr>,
    pub having: Option<Expr>,
    pub order_by: Vec<(Expr, bool)>,
    /// The collations strings sort, group and compare under (`Colls`).
    pub colls: Colls,
    pub distinct: bool,
    pub limit: Option<Expr>,
    pub offset: Option<Expr>,
    pub lock: Option<LockMode>,
    pub params: usize,
    /// `SELECT ... INTO @a, @b`: the user variables (lower case) the single row is assigned
    /// to instead of being sent (as many as the projections).
    pub into: Vec<String>,
    /// `SQL_CALC_FOUND_ROWS`: FOUND_ROWS() is every row LIMIT would have kept; otherwise it
    /// is OFFSET + the rows sent, as MariaDB.
    pub calc_found_rows: bool,
    /// `NOWAIT` (zero) / `WAIT n` of a locking read: its row lock wait timeout instead of the
    /// session's `innodb_lock_wait_timeout`.
    pub lock_wait: Option<std::time::Duration>,
    /// `SKIP LOCKED` of a locking read.
    pub skip_locked: bool,
    /// The subqueries of its expressions (`Expr::Subq` ids index this).
    pub subqueries: Vec<SubPlan>,
    /// Per FROM position (`table`, then `joins`): the derived table read there, if any.
    pub derived: Vec<Option<Derived>>,
    /// A projection is a window function call (`execute::window`).
    pub windowed: bool,
    /// Per FROM position: the name the query gives the table (alias, else name), as EXPLAIN
    /// shows it.
    pub aliases: Vec<String>,
}

const NOT_NULL: u16 = 1;

const PRI_KEY: u16 = 2;

const UNIQUE_KEY: u16 = 4;

const MULTIPLE_KEY: u16 = 8;

const BLOB: u16 = 16;

const UNSIGNED: u16 = 32;

const BINARY: u16 = 128;

/// `ENUM_FLAG`
const ENUM_FLAG: u16 = 256;
const AUTO_INCREMENT: u16 = 512;
/// `SET_FLAG`
const SET_FLAG: u16 = 2048;

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
    let (ty, len, dec, charset, extra) = match (c.ty, c.extras.float_digits) {
        // FLOAT(M,D) / DOUBLE(M,D): M long, shown with D decimals.
        (T::Float, Some((m, d))) => (ColumnType::Float, u32::from(m), d, 63, NUM),
        (T::Double, Some((m, d))) => (ColumnType::Double, u32::from(m), d, 63, NUM),
        _ => match c.ty {
            T::TinyInt { unsigned } => (ColumnType::Tiny, if unsigned { 3 } else { 4 }, 0, 63, NUM),
            T::SmallInt { unsigned } => {
                (ColumnType::Short, if unsigned { 5 } else { 6 }, 0, 63, NUM)
            }
            T::MediumInt { unsigned } => {
                (ColumnType::Int24, if unsigned { 8 } else { 9 }, 0, 63, NUM)
            }
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
            T::LongText | T::Json => (ColumnType::Blob, u32::MAX, 0, 45, BLOB),
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
            T::Bit(m) => (ColumnType::Bit, u32::from(m), 0, 63, UNSIGNED),
            // MariaDB's ENUM/SET columns: a STRING of the longest text, flagged ENUM / SET.
            T::Enum(_) => {
                let longest = c
                    .members
                    .iter()
                    .map(|m| m.chars().count())
                    .max()
                    .unwrap_or(0);
                (ColumnType::String, longest as u32 * 4, 0, 45, ENUM_FLAG)
            }
            T::Set(_) => {
                let all: usize = c.members.iter().map(|m| m.chars().count() + 1).sum();
                (
                    ColumnType::String,
                    all.saturating_sub(1) as u32 * 4,
                    0,
                    45,
                    SET_FLAG,
                )
            }
        },
    };
    // A text column under a binary-order collation (utf8mb4_bin) is flagged BINARY, as
    // MariaDB does; its character set stays the connection's.
    let extra = if c.collation == Some(Collation::Utf8mb4Bin) {
        extra | BINARY
    } else {
        extra
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

/// Compiles a SELECT query.
/// `INTO @a, @b`: the variables' names; 1222 when their number differs from the columns', as
/// MariaDB; only user variables (`INTO OUTFILE`/`DUMPFILE` and local variables: 1235).
fn into_vars(sel: &ast::Select, ncols: usize) -> Result<Vec<String>, SqlError> {
    let Some(into) = &sel.into else {
        return Ok(Vec::new());
    };
    let mut out = Vec::with_capacity(into.targets.len());
    for t in &into.targets {
        let text = t.to_string();
        match text.strip_prefix('@') {
            Some(v) if !v.starts_with('@') && !v.is_empty() => {
                out.push(v.trim_matches('`').to_ascii_lowercase())
            }
            _ => return Err(SqlError::unsupported(&format!("SELECT ... INTO {text}"))),
        }
    }
    if out.len() != ncols {
        return Err(SqlError::of(
            errors::ER_WRONG_NUMBER_OF_COLUMNS_IN_SELECT,
            "The used SELECT statements have a different number of columns",
        ));
    }
    Ok(out)
}

pub(crate) fn compile(
    cx: &ExecContext,
    q: &ast::Query,
    lock: crate::parse::LockClause,
) -> Result<SelectPlan, SqlError> {
    Ok(compile_in(cx, q, lock, Ctx::default())?.plan)
}

/// A SELECT compiled in a scope (`plan::select::subquery`): the plan, and what an enclosing query
/// or a derived table reads of it.
pub(crate) struct Compiled {
    pub plan: SelectPlan,
    /// It refers to the enclosing query's row.
    pub correlated: bool,
    /// The collation derivation of its first column.
    pub deriv: Option<crate::expr::Deriv>,
    /// The collation derivation of each column.
    pub derivs: Vec<Option<crate::expr::Deriv>>,
    /// A column definition per result column (a derived table's columns).
    pub defs: Vec<onelog_engine::ColumnDef>,
    /// Per result column, the whole definition of the table column it is (a plain column
    /// reference: type, NOT NULL, default), as `CREATE TABLE ... SELECT` copies it.
    pub sources: Vec<Option<onelog_engine::ColumnDef>>,
}

// Long: the SELECT's stages in order, each a call; the plan literal takes the rest.
pub(crate) fn compile_in(
    cx: &ExecContext,
    q: &ast::Query,
    lock: crate::parse::LockClause,
    ctx: Ctx<'_>,
) -> Result<Compiled, SqlError> {
    if let Some(out) = subquery::compile_query(cx, q, lock, ctx)? {
        return Ok(out);
    }
    let sel = match select_body(q)? {
        Body::Select(s) => s,
        Body::Nested(inner) => return compile_in(cx, inner, lock, ctx),
    };
    if let Some((lifted, whole)) = winexpr::lift(q, sel)? {
        let mut out = compile_in(cx, &lifted, lock, ctx)?;
        winexpr::restore_columns(&mut out.plan, &whole);
        return Ok(out);
    }
    let moved = subquery::on_subqueries_to_where(sel);
    let sel = moved.as_ref().unwrap_or(sel);
    let hook = Hook::for_select(cx, ctx, sel);
    let mut derived_list = Vec::new();
    let (froms, tree) = from_tables(cx, sel, &mut |tf| hook.derived_table(tf, &mut derived_list))?;
    let derived = subquery::derived_at(&froms, derived_list);
    let aliases = froms.iter().map(|(_, q)| q.clone()).collect();
    let from = From::new(froms);
    let db = cx.current_db.clone().unwrap_or_default();
    let (table, qualifier) = match from.tables.first() {
        Some((t, q)) => (Some(t.clone()), q.clone()),
        None => (None, String::new()),
    };
    let mut c = Compiler::new(
        Scope {
            table: table.as_deref(),
            qualifier: &qualifier,
            db: &db,
            joined: from.joined(),
        },
        "SELECT",
    );
    c.outer = ctx.outer;
    c.subq = Some(&hook);
    c.params = ctx.params;
    let joins = compile_joins(&mut c, tree.as_ref(), &from)?;
    c.place = "SELECT";
    c.aggs = Some(Vec::new());
    c.named_windows = crate::expr::named_windows(sel)?;
    let items = compile_projection(&mut c, sel, &from, joins.as_ref().map(|j| &j.star[..]))?;
    let clauses = compile_clauses(&mut c, q, sel, &items)?;
    let colls = Colls::derive(&c, &items.projections, &clauses);
    let aggs = c.aggs.take().unwrap_or_default();
    let params = c.params;
    let grouped = !aggs.is_empty() || !clauses.group_by.is_empty();
    let distinct = matches!(sel.distinct, Some(ast::Distinct::Distinct));
    let outer: &[usize] = joins.as_ref().map_or(&[], |j| &j.nullable);
    let (rtypes, columns) = result_metadata(&items, &from, &aggs, outer);
    let in_memory: Vec<bool> = derived.iter().map(|d| d.is_some()).collect();
    let join = joins
        .filter(|_| from.tables.len() > 1)
        .map(|j| plan_joins(&from, j.specs, clauses.where_.as_ref(), &in_memory));
    let plan = access_plan(table.as_deref(), clauses.where_, c.width());
    use crate::parse::{LockClause, LockWait};
    let (lock, wait) = match lock {
        LockClause::None => (None, LockWait::Default),
        LockClause::Shared(w) => (Some(LockMode::Shared), w),
        LockClause::Exclusive(w) => (Some(LockMode::Exclusive), w),
    };
    let lock_wait = match wait {
        LockWait::Default | LockWait::SkipLocked => None,
        LockWait::NoWait => Some(std::time::Duration::ZERO),
        LockWait::Seconds(n) => Some(std::time::Duration::from_secs(n)),
    };
    debug_assert_eq!(rtypes.len(), items.projections.len());
    debug_assert_eq!(columns.len(), items.projections.len());
    let into = into_vars(sel, items.projections.len())?;
    let correlated = c.correlated.get();
    let derivs: Vec<_> = items.projections.iter().map(|x| c.derive(x)).collect();
    let deriv = derivs.first().copied().flatten();
    let defs = subquery::result_defs(&columns, &rtypes, (&items.projections, &colls.proj), &from);
    let sources = subquery::direct_sources(&items.projections, &from);
    drop(c);
    let windowed = items.projections.iter().any(|x| matches!(x, Expr::Win(_)));
    let plan = SelectPlan {
        aliases,
        windowed,
        table,
        join,
        plan,
        projections: items.projections,
        rtypes,
        columns,
        aggs,
        grouped,
        group_by: clauses.group_by,
        having: clauses.having,
        order_by: clauses.order_by,
        colls,
        distinct,
        limit: clauses.limit,
        offset: clauses.offset,
        lock,
        params,
        into,
        calc_found_rows: sel
            .select_modifiers
            .as_ref()
            .is_some_and(|m| m.sql_calc_found_rows),
        lock_wait,
        skip_locked: wait == LockWait::SkipLocked,
        subqueries: hook.plans.take(),
        derived,
    };
    subquery::check_plan(&plan)?;
    Ok(Compiled {
        plan,
        correlated,
        deriv,
        derivs,
        defs,
        sources,
    })
}

/// The collation of each ORDER BY item, GROUP BY item, projection (DISTINCT) and aggregate
/// argument (MIN, MAX, DISTINCT aggregates): their derivations' (the connection's when none).
#[derive(Debug, Clone, Default)]
pub(crate) struct Colls {
    pub order: Vec<CollRef>,
    pub group: Vec<CollRef>,
    pub proj: Vec<CollRef>,
    pub aggs: Vec<CollRef>,
}

impl Colls {
    fn derive(c: &Compiler<'_>, projections: &[Expr], clauses: &Clauses) -> Colls {
        let of = |e: &Expr| c.derive(e).map_or(CollRef::Connection, |d| d.coll);
        let aggs = c.aggs.as_deref().unwrap_or(&[]);
        Colls {
            order: clauses.order_by.iter().map(|(e, _)| of(e)).collect(),
            group: clauses.group_by.iter().map(of).collect(),
            proj: projections.iter().map(of).collect(),
            aggs: aggs
                .iter()
                .map(|a| a.arg.as_ref().map_or(CollRef::Connection, of))
                .collect(),
        }
    }
}

/// What a query's body is: one SELECT, or a parenthesised query to compile instead.
enum Body<'q> {
    Select(&'q ast::Select),
    Nested(&'q ast::Query),
}

fn select_body(q: &ast::Query) -> Result<Body<'_>, SqlError> {
    if q.with.is_some() {
        return Err(SqlError::unsupported("WITH"));
    }
    match &*q.body {
        ast::SetExpr::Select(s) => Ok(Body::Select(s)),
        ast::SetExpr::Query(inner) if q.order_by.is_none() && q.limit_clause.is_none() => {
            Ok(Body::Nested(inner))
        }
        ast::SetExpr::SetOperation { .. } => Err(SqlError::unsupported("UNION")),
        other => Err(SqlError::unsupported(
            &other.to_string().chars().take(40).collect::<String>(),
        )),
    }
}

/// The FROM tree compiled (`from`): the flattened join, `SELECT *`'s columns and the
/// nullable tables; None without tables. Multi-table UPDATE and DELETE compile their joins
/// here too.
pub(crate) fn compile_joins(
    c: &mut Compiler,
    tree: Option<&FromNode<'_>>,
    from: &From,
) -> Result<Option<from::Joins>, SqlError> {
    tree.map(|t| from::compile_from(c, t, from)).transpose()
}

/// The select list compiled: one expression per result column, its name and source column
/// (when it is a plain column), and the aliases by lower-case name.
struct Projection {
    projections: Vec<Expr>,
    names: Vec<(String, Option<usize>)>,
    /// Explicit aliases (lower-case) to their item; [`AMBIGUOUS`] for a name two items of
    /// different values carry.
    aliases: HashMap<String, usize>,
}

/// The position [`Projection::aliases`] gives an alias two different items carry: naming it
/// in GROUP BY, HAVING or ORDER BY is 1052, as MariaDB 10.11.14 (`a AS z, b AS z ... ORDER
/// BY z`); the same column twice (`a AS z, a AS z`) is not ambiguous.
const AMBIGUOUS: usize = usize::MAX;

fn compile_projection(
    c: &mut Compiler,
    sel: &ast::Select,
    from: &From,
    star: Option<&[usize]>,
) -> Result<Projection, SqlError> {
    let froms = &from.tables;
    let offsets = &from.offsets;
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
                if let (None, Some(star)) = (&only, star) {
                    // `*` of a join: USING columns once, in MariaDB's order.
                    for &i in star {
                        let (k, col) = from.owner(i);
                        projections.push(c.column_ref(Expr::Col(i), i));
                        names.push((froms[k].0.columns[col].name.clone(), Some(i)));
                    }
                    continue;
                }
                let mut any = false;
                for ((t, q), &o) in froms.iter().zip(offsets) {
                    if only.as_ref().is_some_and(|w| w != q) {
                        continue;
                    }
                    any = true;
                    for (i, col) in t.columns.iter().enumerate() {
                        projections.push(c.column_ref(Expr::Col(o + i), o + i));
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
                let x = compile_item(c, e, projections.len())?;
                let mut name = item_name(e);
                crate::parse::item_names::clip_name(&mut name);
                let col = match x {
                    Expr::Col(i) => Some(i),
                    _ => None,
                };
                projections.push(x);
                names.push((name, col));
            }
            ast::SelectItem::ExprWithAlias { expr, alias } => {
                let x = compile_item(c, expr, projections.len())?;
                let key = alias.value.to_ascii_lowercase();
                let at = match aliases.get(&key) {
                    None => projections.len(),
                    Some(&p) => match (projections.get(p), &x) {
                        (Some(Expr::Col(a)), Expr::Col(b)) if a == b => p,
                        _ => AMBIGUOUS,
                    },
                };
                aliases.insert(key, at);
                let col = match x {
                    Expr::Col(i) => Some(i),
                    _ => None,
                };
                projections.push(x);
                let mut name = alias.value.clone();
                crate::parse::item_names::clip_name(&mut name);
                names.push((name, col));
            }
            _ => return Err(SqlError::unsupported("this select item")),
        }
    }
    Ok(Projection {
        projections,
        names,
        aliases,
    })
}

/// The column name of an unaliased select-list item (`parse::item_names`).
pub(crate) fn item_name(e: &ast::Expr) -> String {
    crate::parse::item_names::item_name(e)
}

/// A select-list item: a window function call is allowed as the whole item.
/// `slot`: its position in the select list.
fn compile_item(c: &mut Compiler, e: &ast::Expr, slot: usize) -> Result<Expr, SqlError> {
    let window = matches!(e, ast::Expr::Function(f) if f.over.is_some());
    c.windows = window;
    let r = c.compile(e);
    c.windows = false;
    match r? {
        Expr::Win(mut w) => {
            w.slot = slot;
            Ok(Expr::Win(w))
        }
        x => Ok(x),
    }
}

/// WHERE, GROUP BY, HAVING, ORDER BY and LIMIT / OFFSET, compiled.
struct Clauses {
    where_: Option<Expr>,
    group_by: Vec<Expr>,
    having: Option<Expr>,
    order_by: Vec<(Expr, bool)>,
    limit: Option<Expr>,
    offset: Option<Expr>,
}

fn compile_clauses(
    c: &mut Compiler,
    q: &ast::Query,
    sel: &ast::Select,
    items: &Projection,
) -> Result<Clauses, SqlError> {
    let (aliases, projections) = (&items.aliases, &items.projections);
    // WHERE (no aggregates).
    let saved = c.aggs.take();
    c.place = "WHERE";
    let where_ = match &sel.selection {
        Some(w) => Some(c.compile(w)?),
        None => None,
    };
    c.aggs = saved;
    // An ON condition's bad name, held back until after the select list and the WHERE.
    if let Some(e) = c.deferred_on.take() {
        return Err(e);
    }
    // MariaDB resolves ORDER BY before GROUP BY and HAVING: their bad names wait for it.
    let mut held: Option<SqlError> = None;
    c.place = "GROUP BY";
    let mut group_by = Vec::new();
    if let ast::GroupByExpr::Expressions(exprs, _) = &sel.group_by {
        for e in exprs {
            match resolve_order_expr(c, e, items) {
                Ok(x) => group_by.push(x),
                Err(err) if err.is_name_error() => {
                    held.get_or_insert(err);
                    break;
                }
                Err(err) => return Err(err),
            }
        }
    } else {
        return Err(SqlError::unsupported("GROUP BY ALL"));
    }
    // An ambiguous alias appears twice (the compiler answers 1052 for it).
    let explicit: Vec<(String, Expr)> = aliases
        .iter()
        .flat_map(|(k, &i)| match projections.get(i) {
            Some(x) => vec![(k.clone(), x.clone())],
            None => vec![(k.clone(), Expr::Lit(Value::Null)); 2],
        })
        .collect();
    // HAVING also reads an unaliased column item by its name where the FROM has the name
    // twice (MariaDB: `SELECT t.a FROM t, u HAVING a + 1 > 0` runs).
    c.aliases = explicit.clone();
    for (name, col) in &items.names {
        let (Some(i), l) = (col, name.to_ascii_lowercase()) else {
            continue;
        };
        let taken = c
            .aliases
            .iter()
            .any(|(k, x)| *k == l && matches!(x, Expr::Col(j) if j == i));
        if !aliases.contains_key(&l) && !taken {
            c.aliases.push((l, Expr::Col(*i)));
        }
    }
    c.place = "HAVING";
    let having = match sel.having.as_ref().map(|h| resolve_order_expr(c, h, items)) {
        Some(Err(err)) if err.is_name_error() => {
            held.get_or_insert(err);
            None
        }
        h => h.transpose()?,
    };
    c.aliases = explicit;
    c.place = "ORDER BY";
    let mut order_by = Vec::new();
    if let Some(ob) = &q.order_by {
        match &ob.kind {
            ast::OrderByKind::Expressions(list) => {
                for o in list {
                    // ENUM and SET sort by their index / bit set, as in MariaDB.
                    let x = crate::expr::numeric_view(resolve_order_expr(c, &o.expr, items)?);
                    let desc = matches!(o.options.sort, Some(ast::OrderBySort::Desc));
                    order_by.push((x, desc));
                }
            }
            ast::OrderByKind::All(_) => return Err(SqlError::unsupported("ORDER BY ALL")),
        }
    }
    if let Some(e) = held {
        return Err(e);
    }
    let (limit, offset) = match &q.limit_clause {
        None => (None, None),
        Some(ast::LimitClause::LimitOffset { limit, offset, .. }) => {
            let l = match limit {
                Some(e) => Some(crate::plan::limit_operand(c, e)?),
                None => None,
            };
            let o = match offset {
                Some(o) => Some(crate::plan::limit_operand(c, &o.value)?),
                None => None,
            };
            (l, o)
        }
        Some(ast::LimitClause::OffsetCommaLimit { offset, limit }) => {
            let o = crate::plan::limit_operand(c, offset)?;
            let l = crate::plan::limit_operand(c, limit)?;
            (Some(l), Some(o))
        }
    };
    Ok(Clauses {
        where_,
        group_by,
        having,
        order_by,
        limit,
        offset,
    })
}

/// Each result column's type and its column definition: a table column keeps its table's
/// metadata; an expression of one column keeps the column's type but not its origin.
/// Result column metadata; `outer`: the FROM tables an outer join may null-extend (their
/// columns are nullable in the result, as MariaDB reports them).
fn result_metadata(
    items: &Projection,
    from: &From,
    aggs: &[AggSpec],
    outer: &[usize],
) -> (Vec<RType>, Vec<Column>) {
    let froms = &from.tables;
    let (combined, table) = (&from.combined, froms.first().map(|(t, _)| &**t));
    let owner = |i: usize| from.owner(i);
    let (projections, names) = (&items.projections, &items.names);
    let mut rtypes = Vec::with_capacity(projections.len());
    let mut columns = Vec::with_capacity(projections.len());
    let width = combined.as_deref().or(table).map_or(0, |t| t.columns.len());
    for (x, (name, col)) in projections.iter().zip(names) {
        let tdef = combined.as_deref().or(table);
        // A column of an enclosing query (a correlated subquery's) is typed by its values.
        let col = &col.filter(|i| *i < width);
        let r = match x.rtype(tdef, aggs) {
            RType::Column(i) if i >= width => RType::Dyn,
            r => r,
        };
        rtypes.push(match (x, r, tdef) {
            (Expr::Col(_), _, _) | (_, _, None) => r,
            (_, RType::Column(i), Some(t)) => concrete(&t.columns[i].ty),
            _ => r,
        });
        columns.push(match (col, table, r) {
            (Some(i), Some(_), _) => {
                let (k, j) = owner(*i);
                let mut col = table_column(&froms[k].0, j, &froms[k].1, name);
                if outer.contains(&k) {
                    col.flags &= !NOT_NULL;
                }
                col
            }
            (_, Some(_), RType::Column(i)) => {
                let (k, j) = owner(i);
                let mut col = table_column(&froms[k].0, j, "", name);
                if outer.contains(&k) {
                    col.flags &= !NOT_NULL;
                }
                col.org_name.clear();
                col.org_table.clear();
                col.db.clear();
                col.flags &= !(PRI_KEY | UNIQUE_KEY | MULTIPLE_KEY | AUTO_INCREMENT);
                col
            }
            _ => {
                let nullable = !matches!(x, Expr::Lit(v) if *v != Value::Null)
                    && !matches!(x, Expr::Agg(i) if matches!(aggs[*i].func, AggFunc::Count | AggFunc::CountStar))
                    && !window_not_null(x);
                expr_column(name, r, nullable)
            }
        });
    }
    (rtypes, columns)
}

/// A window call that is never NULL: a ranking or a COUNT (MariaDB flags them NOT NULL).
fn window_not_null(x: &Expr) -> bool {
    use crate::expr::WinFunc;
    matches!(x, Expr::Win(w) if match &w.func {
        WinFunc::Agg(a) => matches!(a.func, AggFunc::Count | AggFunc::CountStar),
        WinFunc::RowNumber | WinFunc::Rank | WinFunc::DenseRank | WinFunc::Ntile(_) => true,
        _ => false,
    })
}

/// The access path of the FROM table; a table-less SELECT with a WHERE filters its one row.
/// `width`: the FROM tables' columns (a correlated subquery's enclosing row follows them).
fn access_plan(table: Option<&TableDef>, where_: Option<Expr>, width: usize) -> Option<Plan> {
    match table {
        Some(t) => Some(crate::plan::access::plan_in(t, where_.as_ref(), width)),
        None => where_.map(|w| Plan {
            access: crate::plan::access::Access::Full,
            residual: Some(w.clone()),
            filter: Some(w),
        }),
    }
}

/// ORDER BY / GROUP BY / HAVING item: a position, a select alias, or an expression; a bare
/// name the FROM has twice reads the one column select item of that name (MariaDB 10.11.14:
/// `SELECT t.a FROM t, u ORDER BY a` runs; `t.a, u.a ... ORDER BY a` is 1052).
fn resolve_order_expr(
    c: &mut Compiler,
    e: &ast::Expr,
    items: &Projection,
) -> Result<Expr, SqlError> {
    let (aliases, projections) = (&items.aliases, &items.projections);
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
            if p == AMBIGUOUS {
                return Err(SqlError::ambiguous_column(&i.value, c.place));
            }
            let is_col = c
                .scope
                .table
                .is_some_and(|t| t.column_index(&i.value).is_some());
            if !is_col || c.place != "GROUP BY" {
                return Ok(projections[p].clone());
            }
        }
        return c.compile(e).or_else(|err| {
            let mut cols = items.names.iter().enumerate().filter_map(|(p, (n, col))| {
                let same = n.eq_ignore_ascii_case(&i.value)
                    && !aliases.contains_key(&n.to_ascii_lowercase());
                col.filter(|_| same).map(|c| (p, c))
            });
            let Some((p, first)) = cols.next() else {
                return Err(err);
            };
            match err.code == errors::ER_NON_UNIQ_ERROR.code && cols.all(|(_, c)| c == first) {
                true => Ok(projections[p].clone()),
                false => Err(err),
            }
        });
    }
    c.compile(e)
}
