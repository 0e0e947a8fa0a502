//! `CREATE TABLE t [(column definitions, keys)] [AS] SELECT ...`, as MariaDB 10.11 does it.
//!
//! Owns [`create_table_select`], called by `execute::ddl::create_table` with the table spec
//! its explicit part declared. Runs the SELECT (a snapshot read), derives a column per result
//! column ([`derive`]), merges the explicit definitions, converts the rows to the columns as
//! an INSERT would (strict mode: the first failure is the statement's error, naming the row),
//! and hands definition and rows to the engine (`Engine::create_table_select`), which logs
//! them as one event group (the generated CREATE TABLE Query event, then the rows) and
//! publishes the table with its rows at once. An error leaves no table and logs nothing.
//!
//! Column derivation (MariaDB's `SHOW CREATE TABLE` of the result, checked statement by
//! statement): a plain column reference copies the column (type, NOT NULL, DEFAULT; not
//! AUTO_INCREMENT nor the keys); MIN/MAX of a column take its type (nullable, as every
//! aggregate but COUNT); an integer literal of up to 9 characters is INT, a longer one,
//! `+ - *` of integers (NOT NULL when every operand is) and COUNT (`bigint(21)`) are BIGINT;
//! a DECIMAL literal, DOUBLE, dates and times keep their result type; a string literal of up
//! to 512 characters is VARCHAR(n) (CHAR(0) for `''`), a longer one TEXT; NULL is BINARY(0);
//! SUM and AVG of an integer or DECIMAL column are MariaDB's DECIMAL ([`sum_or_avg_type`]);
//! CONCAT / UPPER / LOWER of literals, CHAR/VARCHAR and integer columns a nullable VARCHAR of
//! MariaDB's length ([`char_length`]);
//! other expressions are NOT NULL where the result column is. Refused (1235) rather than
//! guessed, unless an explicit column definition names the column: what onelog's result
//! types do not size as MariaDB does (other integer, DECIMAL and string expressions:
//! `amt * 2`, SUBSTRING), a value of unknown type (placeholders, variables), an expression over an
//! ENUM/SET/BIT column.
//!
//! `IGNORE` skips a row whose primary or unique key an earlier row has (warning 1062 each),
//! `REPLACE` lets it replace that row; without either such a row fails the statement (1062).
//!
//! Explicit columns come first, in their order, then the result columns they do not name; a
//! result column named like an explicit column fills it (MariaDB's merge).

use onelog_binlog::Value;
use onelog_engine::{
    ColumnDef, ColumnSpec, Duplicates, SqlType, TableDef, TableOptions, TableSpec,
};
use sqlparser::ast;

use crate::context::ExecContext;
use crate::error::SqlError;
use crate::expr::{AggFunc, BinOp, Env, Expr, RType};
use crate::output::Output;
use crate::plan::select::Compiled;

/// The longest string result MariaDB makes a VARCHAR (`CONVERT_IF_BIGGER_TO_BLOB`).
const MAX_VARCHAR_CHARS: u32 = 512;
/// The most characters of a derived TEXT column (65535 bytes of utf8mb4); beyond, MariaDB
/// makes a MEDIUMTEXT, which onelog does not derive.
const MAX_TEXT_CHARS: u32 = 16383;

/// Runs `CREATE TABLE ... SELECT` (module docs): `explicit` is the table the statement's own
/// column definitions and keys declare (no columns when it has none). The log gets the
/// generated CREATE TABLE, not the statement (as MariaDB logs it in ROW format).
pub(crate) fn create_table_select(
    cx: &ExecContext,
    ct: &ast::CreateTable,
    q: &ast::Query,
    (explicit, options): (TableSpec, TableOptions),
    sql: &str,
) -> Result<Output, SqlError> {
    let duplicates = match crate::parse::ctas_duplicates(sql) {
        Some((_, true)) => Duplicates::Replace,
        Some((_, false)) => Duplicates::Ignore,
        None => Duplicates::Error,
    };
    if !options.foreign_keys.is_empty() || !options.checks.is_empty() {
        return Err(SqlError::unsupported(
            "CREATE TABLE ... SELECT with FOREIGN KEY or CHECK",
        ));
    }
    let engine = &cx.server.engine;
    if ct.if_not_exists
        && engine
            .catalog()
            .table_by_name(&explicit.db, &explicit.name)
            .is_some()
    {
        crate::expr::warn(
            "Note",
            1050,
            format!("Table '{}' already exists", explicit.name),
        );
        return Ok(Output::ok());
    }
    let compiled =
        crate::plan::select::compile_in(cx, q, crate::parse::LockClause::None, Default::default())?;
    if compiled.plan.params > 0 {
        return Err(SqlError::unsupported(
            "CREATE TABLE ... SELECT with placeholders",
        ));
    }
    let derived = derive(&compiled);
    let env = Env {
        cx,
        params: &[],
        insert_row: None,
        coll: crate::expr::connection_collation(cx),
        subq: None,
    };
    let mut txn = engine.begin();
    let result = crate::execute::subquery::execute(&compiled.plan, &mut txn, &env);
    txn.rollback();
    let rows = result?.0;
    let (spec, from) = merge(explicit, derived)?;
    let def = TableDef::from_spec(0, &spec)?;
    let mut full = Vec::with_capacity(rows.len());
    for (n, row) in (1u64..).zip(rows) {
        cx.guard.check()?;
        full.push(table_row(&def, &from, row, &env, n)?);
    }
    let mut logged = def.clone();
    logged.options = options.clone();
    let next = logged.options.auto_increment.max(1);
    let text = crate::execute::admin::show::create_table_sql(&logged, next);
    let out = crate::execute::fk::logged_with_checks(cx, || {
        engine.create_table_select((spec, options), full, duplicates, ct.if_not_exists, &text)
    })?;
    let Some(o) = out else {
        crate::expr::warn("Note", 1050, format!("Table '{}' already exists", def.name));
        return Ok(Output::ok());
    };
    let skipped = o.skipped.len();
    for w in o.skipped {
        crate::expr::warn("Warning", 1062, w);
    }
    // MariaDB's OK: the rows inserted, `Records: n  Duplicates: d  Warnings: w`.
    Ok(Output::Ok {
        affected_rows: o.rows,
        last_insert_id: 0,
        warnings: 0,
        info: format!(
            "Records: {}  Duplicates: {}  Warnings: {skipped}",
            o.rows + o.duplicates,
            o.duplicates
        ),
    })
}

/// One table row from one result row: each column's value from its result column (`from`),
/// else its default (AUTO_INCREMENT: numbered by the engine), converted as INSERT converts.
fn table_row(
    def: &TableDef,
    from: &[Option<usize>],
    mut row: Vec<Value>,
    env: &Env,
    n: u64,
) -> Result<Vec<Value>, SqlError> {
    let mut out = Vec::with_capacity(def.columns.len());
    for (i, (col, src)) in def.columns.iter().zip(from).enumerate() {
        let v = match src {
            Some(k) => std::mem::replace(&mut row[*k], Value::Null),
            None => col.default.clone().unwrap_or(Value::Null),
        };
        let v = if col.auto_increment && v == Value::Null {
            v
        } else {
            crate::execute::dml::coerce_col(def, i, v, env, n)?
        };
        out.push(v);
    }
    Ok(out)
}

/// The table's spec: the explicit columns, then the derived ones they do not name; and per
/// table column the result column that fills it. A result column an explicit column names
/// needs no derived type (its derivation error, if any, is not raised).
fn merge(
    explicit: TableSpec,
    derived: Vec<(String, Result<ColumnDef, SqlError>)>,
) -> Result<(TableSpec, Vec<Option<usize>>), SqlError> {
    let mut spec = explicit;
    let mut from: Vec<Option<usize>> = vec![None; spec.columns.len()];
    for (k, (name, d)) in derived.into_iter().enumerate() {
        match spec
            .columns
            .iter()
            .position(|c| c.name.eq_ignore_ascii_case(&name))
        {
            Some(i) => from[i] = Some(k),
            None => {
                let d = d?;
                spec.columns.push(ColumnSpec {
                    name,
                    ty: d.ty,
                    nullable: d.nullable,
                    default: d.default,
                    auto_increment: false,
                    extras: d.extras,
                    collation: d.collation,
                    members: d.members,
                });
                from.push(Some(k));
            }
        }
    }
    debug_assert_eq!(from.len(), spec.columns.len());
    Ok((spec, from))
}

/// Per result column of `c`, its name and its column definition (module docs), or why it has
/// none.
fn derive(c: &Compiled) -> Vec<(String, Result<ColumnDef, SqlError>)> {
    let p = &c.plan;
    let mut out = Vec::with_capacity(p.columns.len());
    for (i, col) in p.columns.iter().enumerate() {
        let d = match c.sources.get(i).cloned().flatten() {
            Some(mut d) => {
                d.auto_increment = false;
                d.extras.comment.clear();
                // The NULLs of an outer join's other side.
                d.nullable |= col.flags & 1 == 0;
                Ok(d)
            }
            None => expression_def(c, i),
        };
        out.push((
            col.name.clone(),
            d.map(|mut d| {
                d.name = col.name.clone();
                d
            }),
        ));
    }
    out
}

/// 1235 for a result column whose type onelog does not derive as MariaDB does.
fn underived(what: &str) -> SqlError {
    SqlError::unsupported(&format!(
        "CREATE TABLE ... SELECT of {what} without a column definition naming its type"
    ))
}

/// The column of result column `i`, an expression (module docs).
fn expression_def(c: &Compiled, i: usize) -> Result<ColumnDef, SqlError> {
    let p = &c.plan;
    let r = p.rtypes.get(i).copied().unwrap_or(RType::Dyn);
    let x = p.projections.get(i);
    let mut d = c
        .defs
        .get(i)
        .cloned()
        .ok_or_else(|| underived("this column"))?;
    let not_null = p.columns.get(i).is_some_and(|c| c.flags & 1 != 0);
    d.nullable = !not_null && !x.is_some_and(|x| never_null(c, x));
    // An aggregate but COUNT is NULL over no rows (MariaDB: nullable whatever its argument).
    if let Some(Expr::Agg(k)) = x {
        d.nullable |= p
            .aggs
            .get(*k)
            .is_some_and(|a| !matches!(a.func, AggFunc::CountStar | AggFunc::Count));
    }
    d.default = None;
    d.auto_increment = false;
    if let Some(ty) = x.and_then(|x| sum_or_avg_type(c, x)) {
        d.ty = ty?;
        d.extras.display_width = None;
        return Ok(d);
    }
    let literal = matches!(x, Some(Expr::Lit(_)));
    match r {
        RType::Dyn => return Err(underived("a value whose type is known only when it runs")),
        RType::Column(_) if d.ty.member_count() > 0 || matches!(d.ty, SqlType::Bit(_)) => {
            return Err(underived("an expression over an ENUM, SET or BIT column"))
        }
        RType::Int | RType::UInt => {
            let unsigned = r == RType::UInt;
            // A literal's width is its length (`1`: int(1), `12345678901`: bigint(11)); sums,
            // differences, products and counts are BIGINT as in MariaDB.
            let len = match x {
                Some(Expr::Lit(v)) => Some(crate::render::text_plain(v).len()),
                _ => None,
            };
            let count = matches!(x, Some(Expr::Agg(k)) if p
                .aggs
                .get(*k)
                .is_some_and(|a| matches!(a.func, AggFunc::CountStar | AggFunc::Count)));
            let wide = count
                || matches!(x, Some(Expr::Neg(_)))
                || matches!(x, Some(Expr::Bin(BinOp::Add | BinOp::Sub | BinOp::Mul, ..)));
            d.ty = match len {
                Some(l) if l <= 9 => SqlType::Int { unsigned },
                Some(_) => SqlType::BigInt { unsigned },
                None if wide => SqlType::BigInt { unsigned },
                None => return Err(underived("this integer expression")),
            };
            // COUNT shows as bigint(21), as MariaDB.
            d.extras.display_width = len
                .and_then(|l| u16::try_from(l).ok())
                .or(count.then_some(21));
        }
        RType::Decimal(..) if !literal => {
            return Err(underived("a DECIMAL expression"));
        }
        // MIN/MAX of a string: the argument's length.
        RType::Str(n)
            if literal
                || matches!(x, Some(Expr::Agg(k)) if p.aggs.get(*k).is_some_and(|a| matches!(a.func, AggFunc::Min | AggFunc::Max))) =>
        {
            if n == 0 {
                d.ty = SqlType::Char(0);
            } else if n > MAX_VARCHAR_CHARS {
                d.ty = SqlType::Text;
            }
        }
        RType::Str(_) => {
            let n = x.and_then(|x| char_length(c, x));
            let n = n.ok_or_else(|| underived("a string expression"))?;
            // CONCAT, UPPER and LOWER are nullable whatever their arguments, as in MariaDB.
            d.nullable = true;
            return string_type(d, n);
        }
        _ => {}
    }
    Ok(d)
}

/// The column of `SUM(col)` / `AVG(col)` over an integer or DECIMAL column of the single
/// table read, as MariaDB sizes it from the column's precision `p` (the digits of its type:
/// TINYINT 3, SMALLINT 5, MEDIUMINT 8, INT 10, BIGINT 19, BIGINT UNSIGNED 20) and scale `s`:
/// SUM `DECIMAL(p + 22, s)`, AVG `DECIMAL(p + i, s + i)` with `i` the div_precision_increment
/// (precision at most 65; a scale over 30 is refused as onelog's DECIMAL columns are). None for any other expression.
fn sum_or_avg_type(c: &Compiled, x: &Expr) -> Option<Result<SqlType, SqlError>> {
    let Expr::Agg(k) = x else { return None };
    let a = c.plan.aggs.get(*k)?;
    if !matches!(a.func, AggFunc::Sum | AggFunc::Avg) || c.plan.join.is_some() {
        return None;
    }
    let Some(Expr::Col(i)) = &a.arg else {
        return None;
    };
    let col = c.plan.table.as_ref()?.columns.get(*i)?;
    let (p, s): (u8, u8) = match col.ty {
        SqlType::TinyInt { .. } => (3, 0),
        SqlType::SmallInt { .. } => (5, 0),
        SqlType::MediumInt { .. } => (8, 0),
        SqlType::Int { .. } => (10, 0),
        SqlType::BigInt { unsigned } => (19 + u8::from(unsigned), 0),
        SqlType::Decimal { precision, scale } => (precision, scale),
        _ => return None,
    };
    let (p, s) = if a.func == AggFunc::Sum {
        (p.saturating_add(22), s)
    } else {
        crate::expr::quotient_digits(p, s)
    };
    if s > 30 {
        return Some(Err(underived("an average with more than 30 decimals")));
    }
    Some(Ok(SqlType::Decimal {
        precision: p.min(65),
        scale: s,
    }))
}

/// A string column of `n` characters: CHAR(0), VARCHAR(n) up to 512, TEXT up to 16383.
fn string_type(mut d: ColumnDef, n: u32) -> Result<ColumnDef, SqlError> {
    d.ty = match n {
        0 => SqlType::Char(0),
        n if n <= MAX_VARCHAR_CHARS => SqlType::VarChar(n),
        n if n <= MAX_TEXT_CHARS => SqlType::Text,
        _ => return Err(underived("a string expression")),
    };
    Ok(d)
}

/// The most characters MariaDB gives a string expression onelog sizes ([`char_length`]):
/// CONCAT, UPPER / LCASE ... of string literals, integer literals, CHAR / VARCHAR columns and
/// integer columns (their display length, sign included: INT 11, INT UNSIGNED 10, TINYINT
/// 4, ...), nested. None for anything else (refused).
fn char_length(c: &Compiled, x: &Expr) -> Option<u32> {
    match x {
        Expr::Lit(Value::Bytes(b)) => {
            u32::try_from(String::from_utf8_lossy(b).chars().count()).ok()
        }
        Expr::Lit(v @ (Value::Int(_) | Value::UInt(_))) => {
            u32::try_from(crate::render::text_plain(v).len()).ok()
        }
        Expr::Col(i) if c.plan.join.is_none() => {
            let col = c.plan.table.as_ref()?.columns.get(*i)?;
            Some(match col.ty {
                SqlType::Char(n) | SqlType::VarChar(n) => n,
                SqlType::TinyInt { unsigned } => 4 - u32::from(unsigned),
                SqlType::SmallInt { unsigned } => 6 - u32::from(unsigned),
                SqlType::MediumInt { unsigned } => 9 - u32::from(unsigned),
                SqlType::Int { unsigned } => 11 - u32::from(unsigned),
                SqlType::BigInt { .. } => 20,
                _ => return None,
            })
        }
        Expr::Func(f, args) => match f.def().name {
            "CONCAT" => args
                .iter()
                .try_fold(0u32, |n, a| n.checked_add(char_length(c, a)?)),
            "UPPER" | "LOWER" => char_length(c, args.first()?),
            _ => None,
        },
        // A character function run under its arguments' collation.
        Expr::Collated(_, inner) => char_length(c, inner),
        _ => None,
    }
}

/// Whether `x` is never NULL as MariaDB derives it for `+ - *` and negation: every operand a
/// non-NULL literal or a NOT NULL column of the single table read (a join's columns: not
/// known here, so nullable).
fn never_null(c: &Compiled, x: &Expr) -> bool {
    match x {
        Expr::Lit(v) => *v != Value::Null,
        Expr::Col(i) => c
            .plan
            .table
            .as_ref()
            .filter(|_| c.plan.join.is_none())
            .and_then(|t| t.columns.get(*i))
            .is_some_and(|col| !col.nullable),
        Expr::Neg(a) => never_null(c, a),
        Expr::Bin(BinOp::Add | BinOp::Sub | BinOp::Mul, a, b) => {
            never_null(c, a) && never_null(c, b)
        }
        _ => false,
    }
}
