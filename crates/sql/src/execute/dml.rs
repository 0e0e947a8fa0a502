//! INSERT / REPLACE / INSERT ... ON DUPLICATE KEY UPDATE / INSERT IGNORE / INSERT ... SELECT,
//! UPDATE and DELETE execution over a transaction (plans from `plan::dml`), with MySQL's
//! affected-row counting.
//!
//! Invariants: rows are read with exclusive locks (latest committed versions) before they
//! are changed; values are converted to the column types the way MySQL does before the
//! engine's checks (strict sql_mode: a value that does not fit is MariaDB's error; otherwise
//! it is clipped, cut or zeroed with that code as a warning, `coerce_col`); the session wraps
//! each statement in a savepoint so a failing statement leaves none of its rows.

use crate::context::ExecContext;
use crate::error::{with_row, SqlError};
use crate::execute::{check, fk};
use crate::expr::{convert_for_column, order_collation, sort_cmp_in, Env, Expr};
use crate::plan::access::{fetch, Plan};
use crate::plan::dml::*;
use onelog_binlog::Value;
use onelog_engine::{EngineError, IndexRef, KeyRange, LockMode, TableDef, Transaction};
use onelog_protocol::errors;

/// Outcome of a DML statement.
pub(crate) struct DmlResult {
    pub affected: u64,
    pub last_insert_id: Option<u64>,
    pub info: String,
    pub warnings: Vec<(String, u16, String)>,
    /// `RETURNING`: the projected rows (None without RETURNING).
    pub returned: Option<Vec<Vec<Value>>>,
}

/// One RETURNING row: the plan's projections evaluated on the stored (or removed) `row`.
fn project_returning(
    sp: &crate::plan::select::SelectPlan,
    row: &[Value],
    env: &Env,
) -> Result<Vec<Value>, SqlError> {
    let mut out = Vec::with_capacity(sp.projections.len());
    for x in &sp.projections {
        out.push(x.eval(row, env)?);
    }
    env.cx.guard.charge(crate::guard::row_bytes(&out))?;
    Ok(out)
}

/// The values that name `row` to the engine: its primary key values, or for a table without
/// primary key the whole row (the engine takes the first identical row).
pub(crate) fn pk_of(def: &TableDef, row: &[Value]) -> Vec<Value> {
    if def.primary_key.is_empty() {
        return row.to_vec();
    }
    def.primary_key
        .iter()
        .map(|&c| row.get(c).cloned().unwrap_or(Value::Null))
        .collect()
}

/// A value converted for column `i`, as MariaDB stores it in the session's sql_mode: strict
/// mode (STRICT_TRANS_TABLES / STRICT_ALL_TABLES) answers out-of-range (1264), truncated
/// (1265), wrong (1366) and too long (1406) values with the error; otherwise the value is
/// clipped, cut or zeroed and the condition becomes a warning. `row` is the statement's
/// 1-based row number, which the condition names as MariaDB does ("at row 3").
pub(crate) fn coerce_col(
    def: &TableDef,
    i: usize,
    v: Value,
    env: &Env,
    row: u64,
) -> Result<Value, SqlError> {
    if let Some(zero) = ignored_null(def, i, &v) {
        crate::expr::warn(
            "Warning",
            1048,
            format!("Column '{}' cannot be null", def.columns[i].name),
        );
        return coerce_col(def, i, zero, env, row);
    }
    let before = crate::expr::warning_count();
    let cut_time = def.columns[i].ty == onelog_engine::SqlType::Date && has_time_of_day(&v);
    let r = match coerce_strict(def, i, v.clone()).map_err(|e| qualify_column(def, i, e)) {
        Ok(v) => Ok(v),
        Err(e) if ignoring() || !crate::sysvar::strict_mode(env.cx) => {
            relaxed(def, i, v.clone(), e)
        }
        Err(e) => Err(e),
    }
    .and_then(|v| check_json(def, i, v));
    let rounded = matches!(def.columns[i].ty, onelog_engine::SqlType::Decimal { .. })
        && crate::expr::warning_count() == before
        && r.as_ref().is_ok_and(|out| decimal_rounded(&v, out));
    if (cut_time || rounded) && r.is_ok() {
        crate::expr::warn(
            "Note",
            errors::WARN_DATA_TRUNCATED.code,
            format!(
                "Data truncated for column '{}' at row 1",
                def.columns[i].name
            ),
        );
    }
    // The conversions (here, in expr and in the engine's types) name row 1: the row loop
    // is the one that knows the row.
    if row != 1 {
        crate::expr::renumber_row_warnings(before, row);
    }
    r.map_err(|mut e| {
        e.message = with_row(&e.message, row);
        e
    })
}

/// INSERT IGNORE / UPDATE IGNORE of NULL into a NOT NULL column: the value MariaDB stores
/// instead (with warning 1048): 0 for a number, '' for a string (padded for BINARY). None
/// otherwise (other types keep the engine's 1048; AUTO_INCREMENT generates).
fn ignored_null(def: &TableDef, i: usize, v: &Value) -> Option<Value> {
    let col = &def.columns[i];
    if *v != Value::Null || col.nullable || def.auto_increment == Some(i) || !ignoring() {
        return None;
    }
    if type_limits(&col.ty).is_some() {
        Some(Value::Int(0))
    } else if col.ty.is_string() && col.ty != onelog_engine::SqlType::Json {
        Some(Value::bytes(Vec::new()))
    } else {
        None
    }
}

/// MariaDB names the column of a 1366 as `` `db`.`table`.`column` `` (the conversions name
/// only the column).
fn qualify_column(def: &TableDef, i: usize, mut e: SqlError) -> SqlError {
    if e.code == errors::ER_TRUNCATED_WRONG_VALUE_FOR_FIELD.code {
        let name = &def.columns[i].name;
        e.message = e.message.replace(
            &format!("for column `{name}` at row"),
            &format!("for column `{}`.`{}`.`{name}` at row", def.db, def.name),
        );
    }
    e
}

thread_local! {
    /// Whether the statement running on this thread is an `INSERT IGNORE` / `UPDATE IGNORE`:
    /// its conversion errors are warnings and the adjusted value is stored, as in
    /// non-strict mode (MariaDB's IGNORE downgrades 1264, 1265, 1366, 1406 in every mode).
    static IGNORE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn ignoring() -> bool {
    IGNORE.with(|c| c.get())
}

/// While alive, [`coerce_col`] treats conversion errors as IGNORE does (`on`); dropping it
/// restores the previous setting (so an error path cannot leave it set).
pub(crate) struct IgnoreConversions(bool);

impl IgnoreConversions {
    pub(crate) fn set(on: bool) -> Self {
        IgnoreConversions(IGNORE.with(|c| c.replace(on)))
    }
}

impl Drop for IgnoreConversions {
    fn drop(&mut self) {
        IGNORE.with(|c| c.set(self.0));
    }
}

/// Whether storing `input` into a DECIMAL column as `out` lost digits (MariaDB's note 1265,
/// in every sql_mode): a decimal or a plain decimal string compared digit by digit, anything
/// else that reads as a number (a double, a string with an exponent) compared as a double.
fn decimal_rounded(input: &Value, out: &Value) -> bool {
    let Value::Decimal(stored) = out else {
        return false;
    };
    let text = match input {
        Value::Decimal(s) => s.as_str(),
        Value::Bytes(b) => match std::str::from_utf8(b) {
            Ok(s) => s.trim(),
            Err(_) => return false,
        },
        Value::Double(d) => return stored.parse::<f64>().is_ok_and(|x| x != *d),
        Value::Float(f) => return stored.parse::<f64>().is_ok_and(|x| x != f64::from(*f)),
        _ => return false,
    };
    match plain_decimal(text) {
        Some(digits) => plain_decimal(stored).is_some_and(|kept| kept != digits),
        None => matches!(
            (text.parse::<f64>(), stored.parse::<f64>()),
            (Ok(a), Ok(b)) if a.is_finite() && a != b
        ),
    }
}

/// A plain decimal (`[+-]digits[.digits]`) in one canonical form: no leading zeros in the
/// integer part, no trailing zeros in the fraction, no sign on zero. None for other text.
fn plain_decimal(s: &str) -> Option<String> {
    let (neg, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    let digits = |x: &str| x.bytes().all(|c| c.is_ascii_digit());
    if (int.is_empty() && frac.is_empty()) || !digits(int) || !digits(frac) {
        return None;
    }
    let int = int.trim_start_matches('0');
    let frac = frac.trim_end_matches('0');
    let int = if int.is_empty() { "0" } else { int };
    let body = if frac.is_empty() {
        int.to_string()
    } else {
        format!("{int}.{frac}")
    };
    Some(if neg && body != "0" {
        format!("-{body}")
    } else {
        body
    })
}

/// Whether `v`, read as a DATETIME, has a time of day other than midnight: stored into a
/// DATE column it loses it, which MariaDB reports with note 1265.
fn has_time_of_day(v: &Value) -> bool {
    let dt = match v {
        Value::Bytes(b) => std::str::from_utf8(b)
            .ok()
            .and_then(|s| crate::expr::temporal::parse_datetime(s.trim())),
        Value::Timestamp { .. } => Some(crate::expr::temporal::timestamp_to_datetime(v)),
        other => Some(other.clone()),
    };
    matches!(
        dt,
        Some(Value::DateTime { hour, minute, second, micros, .. })
            if (hour, minute, second, micros) != (0, 0, 0, 0)
    )
}

/// A JSON column's automatic `CHECK (json_valid(col))`: a value that is not JSON is 4025
/// in every sql_mode, as in MariaDB (NULL passes).
fn check_json(def: &TableDef, i: usize, v: Value) -> Result<Value, SqlError> {
    let col = &def.columns[i];
    match &v {
        Value::Bytes(b)
            if col.ty == onelog_engine::SqlType::Json && !crate::expr::json_valid(b) =>
        {
            Err(SqlError::of(
                errors::ER_CONSTRAINT_FAILED,
                format!(
                    "CONSTRAINT `{}.{}` failed for `{}`.`{}`",
                    def.name, col.name, def.db, def.name
                ),
            ))
        }
        _ => Ok(v),
    }
}

/// The largest magnitude of a numeric column type, as a value of its kind.
fn type_limits(ty: &onelog_engine::SqlType) -> Option<(Value, Value)> {
    use onelog_engine::SqlType as T;
    let signed = |bits: u32| {
        let hi = (1i64 << (bits - 1)) - 1;
        Some((Value::Int(-hi - 1), Value::Int(hi)))
    };
    let unsigned = |bits: u32| {
        let hi = if bits == 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        };
        Some((Value::UInt(0), Value::UInt(hi)))
    };
    match *ty {
        T::TinyInt { unsigned: false } => signed(8),
        T::SmallInt { unsigned: false } => signed(16),
        T::MediumInt { unsigned: false } => signed(24),
        T::Int { unsigned: false } => signed(32),
        T::BigInt { unsigned: false } => Some((Value::Int(i64::MIN), Value::Int(i64::MAX))),
        T::TinyInt { .. } => unsigned(8),
        T::SmallInt { .. } => unsigned(16),
        T::MediumInt { .. } => unsigned(24),
        T::Int { .. } => unsigned(32),
        T::BigInt { .. } => unsigned(64),
        T::Float => Some((Value::Float(-f32::MAX), Value::Float(f32::MAX))),
        T::Double => Some((Value::Double(-f64::MAX), Value::Double(f64::MAX))),
        T::Decimal { precision, scale } => {
            let (p, s) = (usize::from(precision), usize::from(scale));
            let mut max = "9".repeat(p - s);
            if s > 0 {
                max.push('.');
                max.push_str(&"9".repeat(s));
            }
            Some((Value::Decimal(format!("-{max}")), Value::Decimal(max)))
        }
        _ => None,
    }
}

/// Non-strict mode: the value MariaDB stores instead of failing, with the warning.
fn relaxed(def: &TableDef, i: usize, v: Value, e: SqlError) -> Result<Value, SqlError> {
    let col = &def.columns[i];
    let fixed = match e.code {
        1406 if matches!(col.ty, onelog_engine::SqlType::Bit(_)) => {
            // A BIT too long is clipped to all ones, with MariaDB's 1264.
            let m = match col.ty {
                onelog_engine::SqlType::Bit(m) => u32::from(m),
                _ => 64,
            };
            crate::expr::warn(
                "Warning",
                1264,
                format!("Out of range value for column '{}' at row 1", col.name),
            );
            return Ok(col
                .ty
                .coerce(&col.name, Value::UInt(u64::MAX >> (64 - m)))?);
        }
        1265 if col.ty.member_count() > 0 => {
            // ENUM: '' (0); SET: the members the value did name.
            let set = matches!(col.ty, onelog_engine::SqlType::Set(_));
            let (Ok(x) | Err(x)) = crate::expr::member_value(&col.members, set, &v);
            crate::expr::warn("Warning", e.code, e.message.clone());
            return Ok(col.ty.coerce(&col.name, x)?);
        }
        // FLOAT(M,D) past M digits: the largest value of M digits, with the number's sign.
        1264 if col.extras.float_digits.is_some() => {
            let md = col.extras.float_digits.unwrap_or_default();
            match crate::expr::to_f64_quiet(&v).map(|x| crate::expr::float_digits(x, md)) {
                Some(Ok(x) | Err(x)) => Value::Double(x),
                None => return Err(e),
            }
        }
        1264 => {
            let Some((lo, hi)) = type_limits(&col.ty) else {
                return Err(e);
            };
            let neg = crate::expr::to_f64_quiet(&v).is_some_and(|f| f < 0.0);
            if neg {
                lo
            } else {
                hi
            }
        }
        1265 | 1366 if col.ty.is_integer() || type_limits(&col.ty).is_some() => {
            let n = match &v {
                Value::Bytes(b) => match crate::expr::parse_num_prefix(b) {
                    crate::expr::Num2::Int(i) => Value::Decimal(i.to_string()),
                    crate::expr::Num2::Dbl(d) => Value::Double(d),
                },
                _ => Value::Int(0),
            };
            match coerce_strict(def, i, n) {
                Ok(x) => x,
                // The prefix itself is out of range: clipped as well.
                Err(e2) if e2.code == 1264 => return relaxed(def, i, v, e2),
                Err(_) => return Err(e),
            }
        }
        1366 if col.ty.is_text() => match &v {
            Value::Bytes(b) => Value::bytes(replace_bad_utf8(b)),
            _ => return Err(e),
        },
        1406 => match v {
            Value::Bytes(b) => {
                let max = match col.ty {
                    onelog_engine::SqlType::Binary(n) | onelog_engine::SqlType::VarBinary(n) => {
                        n as usize
                    }
                    onelog_engine::SqlType::Char(n) | onelog_engine::SqlType::VarChar(n) => {
                        String::from_utf8_lossy(&b)
                            .char_indices()
                            .nth(n as usize)
                            .map_or(b.len(), |(at, _)| at)
                    }
                    _ => return Err(e),
                };
                let b = b[..max.min(b.len())].to_vec();
                crate::expr::warn(
                    "Warning",
                    1265,
                    format!("Data truncated for column '{}' at row 1", col.name),
                );
                return coerce_strict(def, i, Value::bytes(b)).map_err(|_| e);
            }
            _ => return Err(e),
        },
        _ => return Err(e),
    };
    crate::expr::warn("Warning", e.code, e.message.clone());
    coerce_strict(def, i, fixed).map_err(|_| e)
}

/// How MariaDB shows bytes that are not UTF-8 in error 1366: from the first bad byte, six
/// bytes at most, `\xHH` for each non-ASCII one, `...` when more follow.
fn bad_bytes_text(b: &[u8]) -> String {
    let mut s = String::new();
    for &c in b.iter().take(6) {
        if c.is_ascii_graphic() || c == b' ' {
            s.push(c as char);
        } else {
            s.push_str(&format!("\\x{c:02X}"));
        }
    }
    if b.len() > 6 {
        s.push_str("...");
    }
    s
}

/// Non-strict mode: each byte sequence that is not UTF-8 becomes `?` (as MariaDB stores it).
fn replace_bad_utf8(b: &[u8]) -> Vec<u8> {
    String::from_utf8_lossy(b)
        .replace('\u{FFFD}', "?")
        .into_bytes()
}

/// Strict-mode conversion: the value, or MariaDB's error for it.
fn coerce_strict(def: &TableDef, i: usize, v: Value) -> Result<Value, SqlError> {
    let col = &def.columns[i];
    let truncated = || {
        SqlError::of(
            errors::WARN_DATA_TRUNCATED,
            format!("Data truncated for column '{}' at row 1", col.name),
        )
    };
    if col.ty.member_count() > 0 {
        let set = matches!(col.ty, onelog_engine::SqlType::Set(_));
        return match crate::expr::member_value(&col.members, set, &v) {
            Ok(x) => Ok(col.ty.coerce(&col.name, x)?),
            Err(_) => Err(truncated()),
        };
    }
    // '12abc' into a number: MariaDB's "Data truncated" (a number prefix), not 1366.
    if let (true, Value::Bytes(b)) = (type_limits(&col.ty).is_some(), &v) {
        let (prefix, bad) = crate::expr::number_prefix(b, false);
        if bad && prefix.bytes().any(|c| c.is_ascii_digit()) {
            return Err(truncated());
        }
    }
    // Bytes that are not UTF-8 into a utf8mb4 column: MariaDB's 1366 naming them.
    if let (true, Value::Bytes(b)) = (col.ty.is_text(), &v) {
        if let Err(e) = std::str::from_utf8(b) {
            return Err(SqlError::of(
                errors::ER_TRUNCATED_WRONG_VALUE_FOR_FIELD,
                format!(
                    "Incorrect string value: '{}' for column `{}`.`{}`.`{}` at row 1",
                    bad_bytes_text(&b[e.valid_up_to()..]),
                    def.db,
                    def.name,
                    col.name
                ),
            ));
        }
    }
    // A number past the 64-bit range into an integer column (a DECIMAL into a BIT column
    // too; MariaDB calls a DOUBLE there too long): out of range, not 1366.
    let bit = matches!(col.ty, onelog_engine::SqlType::Bit(_));
    if col.ty.is_integer() || bit && matches!(v, Value::Decimal(_)) {
        if let Some(f) = crate::expr::to_f64_quiet(&v) {
            // 2^64 and the decimals that round to it are past the range too: their DOUBLE
            // is the range's f64 end, so a DECIMAL is checked by its rounded integer.
            let past = match &v {
                Value::Int(_) | Value::UInt(_) => false,
                Value::Decimal(_) => crate::expr::to_i128(&v)
                    .is_none_or(|i| !(i128::from(i64::MIN)..=i128::from(u64::MAX)).contains(&i)),
                _ => !(-9.223372036854776e18..1.8446744073709552e19).contains(&f),
            };
            if past {
                return Err(SqlError::of(
                    errors::ER_WARN_DATA_OUT_OF_RANGE,
                    format!("Out of range value for column '{}' at row 1", col.name),
                ));
            }
        }
    }
    let mut v = convert_for_column(v, &col.ty, &col.name)?;
    if let (onelog_engine::SqlType::Char(_), Value::Bytes(b)) = (&col.ty, &v) {
        // CHAR drops trailing spaces (PAD_CHAR_TO_FULL_LENGTH off).
        let kept = b.len() - b.iter().rev().take_while(|&&c| c == b' ').count();
        if kept < b.len() {
            v = Value::bytes(&b[..kept]);
        }
    }
    let v = col.ty.coerce(&col.name, v)?;
    match (col.extras.float_digits, crate::expr::to_f64_quiet(&v)) {
        // FLOAT(M,D): rounded to D decimals; past M digits out of range (1264).
        (Some(md), Some(x)) => match crate::expr::float_digits(x, md) {
            Ok(r) => Ok(col.ty.coerce(&col.name, Value::Double(r))?),
            Err(_) => Err(SqlError::of(
                errors::ER_WARN_DATA_OUT_OF_RANGE,
                format!("Out of range value for column '{}' at row 1", col.name),
            )),
        },
        _ => Ok(v),
    }
}

/// The rows of `def` that conflict with `row` on the primary key or a unique index.
fn conflicting(
    txn: &mut Transaction,
    def: &TableDef,
    row: &[Value],
) -> Result<Vec<Vec<Value>>, SqlError> {
    let auto_pk = def.auto_increment.is_some_and(|a| {
        def.primary_key.contains(&a)
            && matches!(row[a], Value::Null | Value::Int(0) | Value::UInt(0))
    });
    let keyed = !def.primary_key.is_empty();
    if keyed && !auto_pk && def.primary_key.iter().all(|&c| row[c] != Value::Null) {
        if let Some(r) = txn.get_for_update(def.id, &pk_of(def, row))? {
            return Ok(vec![r]);
        }
    }
    for ix in def.indexes.iter().filter(|i| i.unique) {
        let vals: Vec<Value> = ix.columns.iter().map(|&c| row[c].clone()).collect();
        if vals.contains(&Value::Null) {
            continue;
        }
        let found = txn.scan(
            def.id,
            IndexRef::Secondary(ix.name.clone()),
            KeyRange::prefix(vals),
            Some(LockMode::Exclusive),
        )?;
        if !found.is_empty() {
            return Ok(found);
        }
    }
    Ok(Vec::new())
}

fn dup_warning(e: &EngineError) -> (String, u16, String) {
    ("Warning".to_string(), 1062, e.to_string())
}

/// An INSERT's source rows: one value per target column (None: the column's default).
fn insert_source(
    p: &InsertPlan,
    txn: &mut Transaction,
    env: &Env,
) -> Result<Vec<Vec<Option<Value>>>, SqlError> {
    if let Some(sp) = &p.select {
        return Ok(crate::execute::subquery::execute(sp, txn, env)?
            .0
            .into_iter()
            .map(|r| r.into_iter().map(Some).collect())
            .collect());
    }
    if !p.subqueries.is_empty() {
        // Evaluated row by row as each is inserted (`values_row`).
        return Ok(vec![Vec::new(); p.rows.len()]);
    }
    let mut out = Vec::with_capacity(p.rows.len());
    for r in &p.rows {
        out.push(values_row(r, env)?);
    }
    Ok(out)
}

/// The values of one VALUES row (None: DEFAULT).
fn values_row(r: &[Option<Expr>], env: &Env) -> Result<Vec<Option<Value>>, SqlError> {
    let mut vals = Vec::with_capacity(r.len());
    for e in r {
        vals.push(match e {
            Some(e) => Some(e.eval(&[], env)?),
            None => None,
        });
    }
    Ok(vals)
}

pub(crate) fn execute_insert(
    p: &InsertPlan,
    txn: &mut Transaction,
    env: &Env,
) -> Result<DmlResult, SqlError> {
    let def = &*p.table;
    let _ignore = IgnoreConversions::set(p.ignore);
    let eval_before = crate::expr::warning_count();
    let source = insert_source(p, txn, env)?;
    let mut affected = 0u64;
    let mut first_id: Option<u64> = None;
    let mut warnings = Vec::new();
    let mut dups = 0u64;
    // Rows INSERT IGNORE leaves out before their write (CHECK): not among the `Records`.
    let mut refused = 0usize;
    let nrows = source.len();
    let defaults = default_row(def);
    let has_now = def.columns.iter().any(|c| c.extras.default_now.is_some());
    txn.set_no_auto_value_on_zero(crate::sysvar::no_auto_value_on_zero(env.cx));
    let mut returned = p.returning.as_ref().map(|_| Vec::new());
    let fks = fk::involved(env.cx, txn, def);
    let checks = check::compile(env.cx, def)?;
    // With subqueries, a VALUES row is evaluated when it is inserted: its subqueries see
    // the rows inserted before it, as in MariaDB.
    let subs = (!p.subqueries.is_empty())
        .then(|| crate::execute::subquery::StmtSubqueries::new(&p.subqueries, env))
        .transpose()?;
    for (row_no, vals) in (1u64..).zip(source) {
        env.cx.guard.check()?;
        let vals = match (&subs, p.select.is_none(), p.rows.get(row_no as usize - 1)) {
            (Some(subs), true, Some(r)) => subs.with(txn, env, |env| values_row(r, env))?,
            _ => vals,
        };
        let row = full_row(def, &p.columns, &defaults, vals, has_now, env, row_no);
        let Some(mut row) = through_view(p, row, env, nrows, &mut warnings)? else {
            continue;
        };
        let checked = fks || checks.is_some();
        // InnoDB finds a duplicate key before it checks the row's foreign keys (those are
        // checked index by index, after the primary key's insert): a row that conflicts goes
        // to its duplicate handling first; REPLACE checks them before its final insert.
        let dup = fks && !conflicting(txn, def, &row)?.is_empty();
        if checked {
            let admitted = row_admitted(
                env,
                txn,
                (def, checks.as_ref(), fks && !dup),
                &row,
                p.ignore,
                &mut warnings,
            )?;
            match admitted {
                Admitted::Yes => {}
                // MariaDB counts a row its CHECK refuses in neither `Records` nor
                // `Duplicates`, and one without its parent in both (InnoDB refuses it in
                // the write, which IGNORE counts as a duplicate): measured on 10.11.14.
                Admitted::NoCheck => {
                    refused += 1;
                    continue;
                }
                Admitted::NoParent => {
                    dups += 1;
                    continue;
                }
            }
        }
        // The row is needed again after a duplicate key to find the conflicting rows
        // (REPLACE, ON DUPLICATE KEY UPDATE), and after the insert for RETURNING; otherwise it
        // moves into the engine uncopied.
        let keep = p.replace || !p.on_dup.is_empty() || p.returning.is_some();
        loop {
            let given = if keep {
                row.clone()
            } else {
                std::mem::take(&mut row)
            };
            match txn.insert(def.id, given) {
                Ok(o) => {
                    affected += 1;
                    if let Some(id) = o.auto_increment {
                        first_id.get_or_insert(id);
                    }
                    if let (Some(out), Some(sp)) = (returned.as_mut(), p.returning.as_deref()) {
                        if let (Some(id), Some(a)) = (o.auto_increment, def.auto_increment) {
                            let c = &def.columns[a];
                            row[a] = c.ty.coerce(&c.name, Value::UInt(id))?;
                        }
                        out.push(project_returning(sp, &row, env)?);
                    }
                    break;
                }
                Err(e @ EngineError::DuplicateKey { .. }) => {
                    if p.replace {
                        let old = conflicting(txn, def, &row)?;
                        if old.is_empty() {
                            return Err(e.into());
                        }
                        if replaced_in_place(env.cx, def, &old, &row) {
                            affected += 1;
                            break;
                        }
                        dups += old.len() as u64;
                        affected += old.len() as u64;
                        replace_delete(env, txn, (def, fks, dup), old, &row)?;
                        continue;
                    }
                    if !p.on_dup.is_empty() {
                        let old = conflicting(txn, def, &row)?;
                        let Some(old) = old.into_iter().next() else {
                            return Err(e.into());
                        };
                        let new = on_dup_row(p, (&old, &row), subs.as_ref(), txn, env, row_no)?;
                        // RETURNING: the row as it stands, changed or not (MariaDB).
                        if let (Some(out), Some(sp)) = (returned.as_mut(), p.returning.as_deref()) {
                            out.push(project_returning(sp, &new, env)?);
                        }
                        if new != old {
                            check_changed(p.view.as_deref(), checks.as_ref(), def, &new, env)?;
                            if fks {
                                fk::check_parent_row(env.cx, txn, def, &old, Some(&new))?;
                                fk::check_child_row(env.cx, txn, def, &new, Some(&old))?;
                                txn.update(def.id, &pk_of(def, &old), new.clone())?;
                            } else {
                                txn.update(def.id, &pk_of(def, &old), new)?;
                            }
                            affected += 2;
                            dups += 1;
                        }
                        break;
                    }
                    if p.ignore {
                        warnings.push(dup_warning(&e));
                        dups += 1;
                        break;
                    }
                    return Err(e.into());
                }
                Err(e) => return Err(e.into()),
            }
        }
    }
    let counts = (nrows, refused, dups, warnings.len());
    Ok(DmlResult {
        affected,
        last_insert_id: first_id,
        info: insert_info(p, env, counts, eval_before),
        warnings,
        returned,
    })
}

/// INSERT's OK info text from its `(rows, rows left out before their write, duplicates,
/// warnings)`: `Records: ..  Duplicates: ..  Warnings: ..` for several rows or a SELECT, and
/// with `sql_warnings=1` for a one-row INSERT whose values were cut or clipped (MariaDB's
/// `cuted_fields`: 1048, 1264, 1265, 1292, not 1366); empty otherwise.
fn insert_info(
    p: &InsertPlan,
    env: &Env,
    (nrows, refused, dups, warnings): (usize, usize, u64, usize),
    eval_before: usize,
) -> String {
    let cut = || {
        crate::sysvar::sql_warnings(env.cx)
            && crate::expr::has_code_since(eval_before, &[1048, 1264, 1265, 1292])
    };
    if nrows > 1 || p.select.is_some() || cut() {
        format!(
            "Records: {}  Duplicates: {dups}  Warnings: {}",
            nrows - refused,
            warnings + crate::expr::warning_count().saturating_sub(eval_before)
        )
    } else {
        String::new()
    }
}

/// ON DUPLICATE KEY UPDATE's new version of the row `old` that the row `row` (its values
/// read by `VALUES(c)`) conflicts with; its subqueries run in `txn` through `subs`.
fn on_dup_row(
    p: &InsertPlan,
    (old, row): (&[Value], &[Value]),
    subs: Option<&crate::execute::subquery::StmtSubqueries>,
    txn: &mut Transaction,
    env: &Env,
    row_no: u64,
) -> Result<Vec<Value>, SqlError> {
    let def = &*p.table;
    let ienv = Env {
        cx: env.cx,
        params: env.params,
        insert_row: Some(row),
        coll: env.coll,
        subq: None,
    };
    let mut new = old.to_vec();
    let mut set = |env: &Env| -> Result<(), SqlError> {
        for (c, x) in &p.on_dup {
            let v = x.eval(&new, env)?;
            new[*c] = coerce_col(def, *c, v, env, row_no)?;
        }
        Ok(())
    };
    match subs {
        Some(subs) => subs.with(txn, &ienv, set)?,
        None => set(&ienv)?,
    }
    if new != old {
        let set = |c: usize| p.on_dup.iter().any(|(a, _)| *a == c);
        touch_on_update(def, set, &mut new, env, row_no)?;
    }
    Ok(new)
}

/// An INSERT's full `row` (or the error building it) as the view it is written through takes
/// it: 1423 for a column without default the view does not write; the CHECK OPTION's 1369,
/// or None (the row skipped, a warning) for INSERT IGNORE of several rows (a single row's
/// failure stays an error, as in MariaDB). An AUTO_INCREMENT column still without its value
/// reads as 0 to the check, as in MariaDB (which checks before the value is generated).
fn through_view(
    p: &InsertPlan,
    row: Result<Vec<Value>, SqlError>,
    env: &Env,
    nrows: usize,
    warnings: &mut Vec<(String, u16, String)>,
) -> Result<Option<Vec<Value>>, SqlError> {
    let Some(vt) = &p.view else {
        return row.map(Some);
    };
    let row = row.map_err(|e| vt.map_error(e))?;
    let admitted = match p.table.auto_increment {
        Some(a) if row[a] == Value::Null => {
            let mut r = row.clone();
            r[a] = Value::Int(0);
            vt.admits(&r, env)?
        }
        _ => vt.admits(&row, env)?,
    };
    if admitted {
        return Ok(Some(row));
    }
    if p.ignore && nrows > 1 {
        let e = vt.check_failed();
        warnings.push(("Warning".to_string(), e.code, e.message));
        return Ok(None);
    }
    Err(vt.check_failed())
}

/// The checks of a row an ON DUPLICATE KEY UPDATE changed: the CHECK OPTION of the view
/// written through (1369), then the table's CHECK constraints.
fn check_changed(
    view: Option<&crate::plan::view_dml::ViewTarget>,
    checks: Option<&check::Compiled>,
    def: &TableDef,
    new: &[Value],
    env: &Env,
) -> Result<(), SqlError> {
    if let Some(vt) = view {
        if !vt.admits(new, env)? {
            return Err(vt.check_failed());
        }
    }
    match checks {
        Some(c) => check::check_row(c, def, new, env),
        None => Ok(()),
    }
}

/// REPLACE's delete of the rows `row` conflicts with (checked as parents when `fks`), then,
/// when `dup` put them off, the foreign keys of `row` itself before its insert.
fn replace_delete(
    env: &Env,
    txn: &mut Transaction,
    (def, fks, dup): (&TableDef, bool, bool),
    old: Vec<Vec<Value>>,
    row: &[Value],
) -> Result<(), SqlError> {
    for o in old {
        if fks {
            fk::check_parent_row(env.cx, txn, def, &o, None)?;
        }
        txn.delete(def.id, &pk_of(def, &o))?;
    }
    if dup {
        fk::check_child_row(env.cx, txn, def, row, None)?;
    }
    Ok(())
}

/// Whether REPLACE leaves `row` alone because the one row it conflicts with is identical, as
/// MariaDB does when the conflict is on the table's last unique key (the primary key when no
/// UNIQUE index follows it) and no foreign key references the table: MariaDB then updates the
/// old row in place (`write_record`'s `last_uniq_key` path), and an identical row counts one
/// affected row and no duplicate, where the delete-and-insert path counts two.
fn replaced_in_place(cx: &ExecContext, def: &TableDef, old: &[Vec<Value>], row: &[Value]) -> bool {
    old.len() == 1
        && old[0] == row
        && !def.indexes.iter().any(|i| i.unique)
        && !fk::is_referenced(cx, def)
}

/// Whether [`row_admitted`] lets a row be written, or why INSERT IGNORE leaves it out.
enum Admitted {
    Yes,
    /// A CHECK constraint refused it (4025).
    NoCheck,
    /// A foreign key found no parent row (1452).
    NoParent,
}

/// The CHECK constraints and foreign keys of a row about to be inserted (before the write):
/// INSERT IGNORE leaves a refused row out, its 4025 or 1452 then a warning, as MariaDB.
fn row_admitted(
    env: &Env,
    txn: &mut Transaction,
    (def, checks, fks): (&TableDef, Option<&check::Compiled>, bool),
    row: &[Value],
    ignore: bool,
    warnings: &mut Vec<(String, u16, String)>,
) -> Result<Admitted, SqlError> {
    let r = match checks {
        Some(c) => check::check_row(c, def, row, env),
        None => Ok(()),
    };
    let r = match r {
        Ok(()) if fks => fk::check_child_row(env.cx, txn, def, row, None),
        r => r,
    };
    let ignorable = [
        errors::ER_NO_REFERENCED_ROW_2.code,
        errors::ER_CONSTRAINT_FAILED.code,
    ];
    match r {
        Ok(()) => Ok(Admitted::Yes),
        Err(e) if ignore && ignorable.contains(&e.code) => {
            let why = match e.code == errors::ER_CONSTRAINT_FAILED.code {
                true => Admitted::NoCheck,
                false => Admitted::NoParent,
            };
            warnings.push(("Warning".to_string(), e.code, e.message));
            Ok(why)
        }
        Err(e) => Err(e),
    }
}

/// The row an INSERT starts from: each column's constant default, NULL where there is none
/// (and for `DEFAULT CURRENT_TIMESTAMP` columns, which [`fill_default_now`] fills). Shared by
/// every insert path (VALUES, SELECT, REPLACE, ON DUPLICATE KEY UPDATE).
pub(crate) fn default_row(def: &TableDef) -> Vec<Value> {
    def.columns
        .iter()
        .map(|c| match (&c.default, c.ty) {
            (Some(v), _) => v.clone(),
            // A NOT NULL ENUM without a default takes its first member, as in MariaDB.
            (None, onelog_engine::SqlType::Enum(_)) if !c.nullable => Value::UInt(1),
            (None, _) => Value::Null,
        })
        .collect()
}

/// `DEFAULT CURRENT_TIMESTAMP(n)`: each such column that takes its default (`defaulted`: not
/// given, or given as DEFAULT) gets the statement's time converted for the column (a
/// conversion condition names row `row_no`), as MariaDB evaluates an expression default only
/// when it is used.
pub(crate) fn fill_default_now(
    def: &TableDef,
    defaulted: &[bool],
    row: &mut [Value],
    env: &Env,
    row_no: u64,
) -> Result<(), SqlError> {
    for (i, c) in def.columns.iter().enumerate() {
        if let (Some(fsp), true) = (c.extras.default_now, defaulted[i]) {
            row[i] = coerce_col(def, i, crate::expr::statement_now(env, fsp), env, row_no)?;
        }
    }
    Ok(())
}

/// `ON UPDATE CURRENT_TIMESTAMP(n)`: a row an UPDATE (or ON DUPLICATE KEY UPDATE) really
/// changes gets the statement's time in each such column it did not assign (`set(c)`), as
/// MariaDB does; call only when the new row differs from the old one.
pub(crate) fn touch_on_update(
    def: &TableDef,
    set: impl Fn(usize) -> bool,
    new: &mut [Value],
    env: &Env,
    row_no: u64,
) -> Result<(), SqlError> {
    for (i, c) in def.columns.iter().enumerate() {
        if let Some(fsp) = c.extras.on_update_now {
            if !set(i) {
                new[i] = coerce_col(def, i, crate::expr::statement_now(env, fsp), env, row_no)?;
            }
        }
    }
    Ok(())
}

/// The full row of one INSERT source row: the defaults, then the given columns converted
/// (`vals[k]` for `columns[k]`; None: DEFAULT), then the `DEFAULT CURRENT_TIMESTAMP` columns
/// that take their default (`has_now`: the table has some); 1364 for a NOT NULL column
/// without a default that is not given.
fn full_row(
    def: &TableDef,
    columns: &[usize],
    defaults: &[Value],
    vals: Vec<Option<Value>>,
    has_now: bool,
    env: &Env,
    row_no: u64,
) -> Result<Vec<Value>, SqlError> {
    let mut row = defaults.to_vec();
    let mut given = vec![false; row.len()];
    // Columns that take their default: not given, or given as DEFAULT.
    let mut defaulted = vec![true; row.len()];
    for (&c, v) in columns.iter().zip(vals) {
        if let Some(v) = v {
            row[c] = coerce_col(def, c, v, env, row_no)?;
            defaulted[c] = false;
        }
        given[c] = true;
    }
    if has_now {
        fill_default_now(def, &defaulted, &mut row, env, row_no)?;
    }
    for (i, c) in def.columns.iter().enumerate() {
        if !given[i]
            && !c.nullable
            && c.default.is_none()
            && !matches!(c.ty, onelog_engine::SqlType::Enum(_))
            && c.extras.default_now.is_none()
            && def.auto_increment != Some(i)
        {
            return Err(SqlError::of(
                errors::ER_NO_DEFAULT_FOR_FIELD,
                format!("Field '{}' doesn't have a default value", c.name),
            ));
        }
    }
    Ok(row)
}

/// An UPDATE's or DELETE's `LIMIT n`: a non-negative integer (1210 otherwise).
pub(crate) fn limit_of(limit: &Option<Expr>, env: &Env) -> Result<Option<u64>, SqlError> {
    match limit {
        Some(e) => match crate::expr::to_i128(&e.eval(&[], env)?) {
            Some(n) if n >= 0 => Ok(Some(n as u64)),
            _ => Err(SqlError::wrong_arguments("LIMIT")),
        },
        None => Ok(None),
    }
}

fn select_rows(
    txn: &mut Transaction,
    def: &TableDef,
    plan: &Plan,
    order_by: &[(Expr, bool)],
    limit: &Option<Expr>,
    env: &Env,
    subqueries: &[crate::plan::select::subquery::SubPlan],
) -> Result<Vec<Vec<Value>>, SqlError> {
    let limit = limit_of(limit, env)?.map(|n| n as usize);
    let (rows, filter) = fetch(txn, def, plan, env, Some(LockMode::Exclusive))?;
    // Correlated subqueries in WHERE run in the transaction: the filter is applied there.
    let (rows, filter) = if subqueries.iter().any(|s| s.correlated) {
        let kept = crate::execute::subquery::filter_rows(subqueries, rows, filter, txn, env)?;
        (kept, None)
    } else {
        (rows, filter)
    };
    let guard = &env.cx.guard;
    let mut keep = Vec::with_capacity(rows.len());
    for r in rows {
        guard.check()?;
        if let Some(f) = filter {
            if !f.test(&r, &[], env)? {
                continue;
            }
        }
        // The rows an UPDATE/DELETE changes are held until it has read them all.
        guard.charge(crate::guard::row_bytes(&r))?;
        keep.push(r);
    }
    if !order_by.is_empty() {
        // A correlated subquery among the keys runs in the transaction, per row.
        let subs = match subqueries.iter().any(|s| s.correlated) {
            true => Some(crate::execute::subquery::StmtSubqueries::new(
                subqueries, env,
            )?),
            false => None,
        };
        let mut keyed = Vec::with_capacity(keep.len());
        for r in keep {
            guard.check()?;
            let mut k = Vec::with_capacity(order_by.len());
            for (e, _) in order_by {
                k.push(match &subs {
                    Some(subs) => subs.with(txn, env, |env| e.eval(&r, env))?,
                    None => e.eval(&r, env)?,
                });
            }
            guard.charge(crate::guard::row_bytes(&k))?;
            keyed.push((k, r));
        }
        let colls: Vec<_> = order_by
            .iter()
            .map(|(e, _)| order_collation(e, def, env.coll))
            .collect();
        keyed.sort_by(|a, b| {
            for (i, (_, desc)) in order_by.iter().enumerate() {
                let o = sort_cmp_in(colls[i], &a.0[i], &b.0[i]);
                let o = if *desc { o.reverse() } else { o };
                if o != std::cmp::Ordering::Equal {
                    return o;
                }
            }
            std::cmp::Ordering::Equal
        });
        keep = keyed.into_iter().map(|(_, r)| r).collect();
    }
    if let Some(l) = limit {
        keep.truncate(l);
    }
    Ok(keep)
}

pub(crate) fn execute_update(
    p: &UpdatePlan,
    txn: &mut Transaction,
    env: &Env,
) -> Result<DmlResult, SqlError> {
    if !p.subqueries.is_empty() && env.subq.is_none() {
        return crate::execute::subquery::with_uncorrelated(&p.subqueries, txn, env, |t, e| {
            execute_update(p, t, e)
        });
    }
    let def = &*p.table;
    let _ignore = IgnoreConversions::set(p.ignore);
    let before = crate::expr::warning_count();
    let rows = select_rows(txn, def, &p.plan, &p.order_by, &p.limit, env, &p.subqueries)?;
    let mut matched = rows.len() as u64;
    let staged = p.subqueries.iter().any(|s| s.correlated)
        && p.assignments
            .iter()
            .any(|(_, e)| crate::plan::select::subquery::subq_correlated(e));
    if staged {
        return update_staged(p, txn, env, rows, before);
    }
    let mut changed = 0u64;
    let fks = fk::involved(env.cx, txn, def);
    let checks = check::compile(env.cx, def)?;
    // Each fetched row becomes its new version in place (no copy of the row): the original
    // values of the columns assigned are kept aside to tell whether anything changed.
    let mut saved: Vec<(usize, Value)> = Vec::with_capacity(p.assignments.len());
    for (row_no, mut row) in (1u64..).zip(rows) {
        env.cx.guard.check()?;
        let pk = pk_of(def, &row);
        assign(p, &mut row, &mut saved, env, row_no)?;
        match write_updated(p, txn, env, (&checks, fks), (pk, row, &saved), row_no)? {
            Written::Changed => changed += 1,
            Written::Unchanged => {}
            Written::Skipped => matched -= 1,
        }
    }
    Ok(update_result(matched, changed, before))
}

/// The SET list applied to `row` in place (each item sees the values the items before it
/// gave); the previous values of the columns assigned go to `saved`.
fn assign(
    p: &UpdatePlan,
    row: &mut [Value],
    saved: &mut Vec<(usize, Value)>,
    env: &Env,
    row_no: u64,
) -> Result<(), SqlError> {
    saved.clear();
    for (c, e) in &p.assignments {
        let v = e.eval(row, env)?;
        let v = coerce_col(&p.table, *c, v, env, row_no)?;
        let old = std::mem::replace(&mut row[*c], v);
        if !saved.iter().any(|(s, _)| s == c) {
            saved.push((*c, old));
        }
    }
    Ok(())
}

/// An UPDATE whose SET has correlated subqueries: every row's new values are computed
/// first, with the table as it was before the statement (as MariaDB reads it), then written.
fn update_staged(
    p: &UpdatePlan,
    txn: &mut Transaction,
    env: &Env,
    rows: Vec<Vec<Value>>,
    before: usize,
) -> Result<DmlResult, SqlError> {
    let mut matched = rows.len() as u64;
    let subs = crate::execute::subquery::StmtSubqueries::new(&p.subqueries, env)?;
    let mut staged = Vec::with_capacity(rows.len());
    for (row_no, mut row) in (1u64..).zip(rows) {
        env.cx.guard.check()?;
        let pk = pk_of(&p.table, &row);
        let mut saved = Vec::with_capacity(p.assignments.len());
        subs.with(txn, env, |env| assign(p, &mut row, &mut saved, env, row_no))?;
        env.cx.guard.charge(crate::guard::row_bytes(&pk))?;
        staged.push((pk, row, saved));
    }
    let fks = fk::involved(env.cx, txn, &p.table);
    let checks = check::compile(env.cx, &p.table)?;
    let mut changed = 0u64;
    for (row_no, (pk, row, saved)) in (1u64..).zip(staged) {
        env.cx.guard.check()?;
        match write_updated(p, txn, env, (&checks, fks), (pk, row, &saved), row_no)? {
            Written::Changed => changed += 1,
            Written::Unchanged => {}
            Written::Skipped => matched -= 1,
        }
    }
    Ok(update_result(matched, changed, before))
}

/// What [`write_updated`] did with a row.
enum Written {
    Changed,
    /// No value changed, or UPDATE IGNORE left a row whose new key is taken (MariaDB
    /// still counts it as matched).
    Unchanged,
    /// UPDATE IGNORE left a row its CHECK constraint refuses (MariaDB does not count it as
    /// matched: `Rows matched: 0  Changed: 0  Warnings: 1`).
    Skipped,
}

/// Writes an updated row when a value changed (ON UPDATE columns, CHECK constraints and
/// foreign keys applied), or leaves it (UPDATE IGNORE).
fn write_updated(
    p: &UpdatePlan,
    txn: &mut Transaction,
    env: &Env,
    (checks, fks): (&Option<check::Compiled>, bool),
    (pk, mut row, saved): (Vec<Value>, Vec<Value>, &[(usize, Value)]),
    row_no: u64,
) -> Result<Written, SqlError> {
    let def = &*p.table;
    if !saved.iter().any(|(c, old)| row[*c] != *old) {
        return Ok(Written::Unchanged);
    }
    let set = |c: usize| p.assignments.iter().any(|(a, _)| *a == c);
    touch_on_update(def, set, &mut row, env, row_no)?;
    if let Some(vt) = &p.view {
        if !vt.admits(&row, env)? {
            return Err(vt.check_failed());
        }
    }
    if let Some(c) = checks {
        match check::check_row(c, def, &row, env) {
            Ok(()) => {}
            // UPDATE IGNORE: the row keeps its values, the 4025 a warning (MariaDB).
            Err(e) if p.ignore && e.code == errors::ER_CONSTRAINT_FAILED.code => {
                crate::expr::warn("Warning", e.code, e.message);
                return Ok(Written::Skipped);
            }
            Err(e) => return Err(e),
        }
    }
    let written = if fks {
        // With foreign keys the parent side is handled before the write: UPDATE IGNORE
        // looks for the duplicate first, so a skipped row changes nothing.
        if p.ignore
            && conflicting(txn, def, &row)?
                .iter()
                .any(|other| pk_of(def, other) != pk)
        {
            return Ok(Written::Unchanged);
        }
        if p.ignore {
            return ignoring_fk_failure(txn, |txn| {
                // The new parent first, so a row without one costs no undo.
                fk::check_child_row(env.cx, txn, def, &row, Some(&old_of(&row, saved)))?;
                update_checked(env, txn, def, &pk, row, saved)
            });
        }
        update_checked(env, txn, def, &pk, row, saved)
    } else {
        txn.update(def.id, &pk, row)
            .map(|_| ())
            .map_err(SqlError::from)
    };
    match written {
        Ok(()) => Ok(Written::Changed),
        // UPDATE IGNORE: the duplicate is found before anything is written; the row keeps
        // its old values, without a warning (as MariaDB 10.11).
        Err(e) if p.ignore && e.code == errors::ER_DUP_ENTRY.code => Ok(Written::Unchanged),
        Err(e) => Err(e),
    }
}

/// The savepoint an IGNORE statement sets before each row's foreign key work, to undo that
/// row alone (its cascades included) when a foreign key refuses it. No user savepoint can
/// have this name (it holds a NUL).
const ROW_SAVEPOINT: &str = "\0onelog-ignore-row";

/// UPDATE IGNORE's write of one row with foreign keys: a row a foreign key refuses (1452, no
/// parent for its new value; 1451, a RESTRICT child of its old key, also one its cascades
/// reach) is left as it was, with what its cascades wrote undone, and counts as matched but
/// not changed, without a warning (MariaDB 10.11.14: `UPDATE IGNORE c SET pid = 5` answers
/// `Rows matched: 1  Changed: 0  Warnings: 0`).
fn ignoring_fk_failure(
    txn: &mut Transaction,
    write: impl FnOnce(&mut Transaction) -> Result<(), SqlError>,
) -> Result<Written, SqlError> {
    match fk_savepoint(txn, write)? {
        Ok(()) => Ok(Written::Changed),
        Err(_) => Ok(Written::Unchanged),
    }
}

/// Runs `write` under [`ROW_SAVEPOINT`]: Ok(Err(e)) when a foreign key refused the row (1451,
/// 1452), whose changes are then undone; any other error is the statement's.
pub(crate) fn fk_savepoint(
    txn: &mut Transaction,
    write: impl FnOnce(&mut Transaction) -> Result<(), SqlError>,
) -> Result<Result<(), SqlError>, SqlError> {
    txn.savepoint(ROW_SAVEPOINT);
    let r = write(txn);
    let refused = [
        errors::ER_NO_REFERENCED_ROW_2.code,
        errors::ER_ROW_IS_REFERENCED_2.code,
    ];
    match r {
        Err(e) if refused.contains(&e.code) => {
            txn.rollback_to_savepoint(ROW_SAVEPOINT)?;
            txn.release_savepoint(ROW_SAVEPOINT)?;
            Ok(Err(e))
        }
        r => {
            txn.release_savepoint(ROW_SAVEPOINT)?;
            r.map(Ok)
        }
    }
}

/// An UPDATE's OK: its counts, and the conditions raised since `before`
/// ([`crate::expr::warning_count`]) in its info text, as MariaDB counts them.
fn update_result(matched: u64, changed: u64, before: usize) -> DmlResult {
    let warns = crate::expr::warning_count().saturating_sub(before);
    DmlResult {
        affected: changed,
        last_insert_id: None,
        info: format!("Rows matched: {matched}  Changed: {changed}  Warnings: {warns}"),
        warnings: Vec::new(),
        returned: None,
    }
}

/// The previous version of an updated `row`, whose assigned columns held `saved`.
fn old_of(row: &[Value], saved: &[(usize, Value)]) -> Vec<Value> {
    let mut old = row.to_vec();
    for (c, v) in saved {
        old[*c] = v.clone();
    }
    old
}

/// An UPDATE's row write with its foreign key checks: `saved` holds the previous values of
/// the columns assigned (the rest of `row` is unchanged). The parent side is checked before
/// the write (children of the old key), the child side after it (the row may reference
/// itself).
fn update_checked(
    env: &Env,
    txn: &mut Transaction,
    def: &TableDef,
    pk: &[Value],
    row: Vec<Value>,
    saved: &[(usize, Value)],
) -> Result<(), SqlError> {
    let old = old_of(&row, saved);
    fk::check_parent_row(env.cx, txn, def, &old, Some(&row))?;
    // The row's own foreign keys after its unique keys, as InnoDB checks them (on the foreign
    // key's index, after the primary key's and the unique indexes' inserts): a duplicate key
    // is 1062 before a missing parent is 1452. A failure undoes the statement.
    txn.update(def.id, pk, row.clone())?;
    fk::check_child_row(env.cx, txn, def, &row, Some(&old))?;
    Ok(())
}

pub(crate) fn execute_delete(
    p: &DeletePlan,
    txn: &mut Transaction,
    env: &Env,
) -> Result<DmlResult, SqlError> {
    if !p.subqueries.is_empty() && env.subq.is_none() {
        return crate::execute::subquery::with_uncorrelated(&p.subqueries, txn, env, |t, e| {
            execute_delete(p, t, e)
        });
    }
    let def = &*p.table;
    let rows = select_rows(txn, def, &p.plan, &p.order_by, &p.limit, env, &p.subqueries)?;
    let mut n = 0;
    let mut returned = p.returning.as_ref().map(|_| Vec::new());
    let fks = fk::involved(env.cx, txn, def);
    for r in rows {
        env.cx.guard.check()?;
        let gone = if fks && p.ignore {
            // DELETE IGNORE: a row a foreign key holds stays (what its cascades did undone),
            // its 1451 a warning (MariaDB 10.11.14).
            let mut gone = false;
            let held = fk_savepoint(txn, |txn| {
                fk::check_parent_row(env.cx, txn, def, &r, None)?;
                gone = txn.delete(def.id, &pk_of(def, &r))?;
                Ok(())
            })?;
            if let Err(e) = held {
                crate::expr::warn("Warning", e.code, e.message);
            }
            gone
        } else {
            if fks {
                fk::check_parent_row(env.cx, txn, def, &r, None)?;
            }
            txn.delete(def.id, &pk_of(def, &r))?
        };
        if gone {
            n += 1;
            if let (Some(out), Some(sp)) = (returned.as_mut(), p.returning.as_deref()) {
                out.push(project_returning(sp, &r, env)?);
            }
        }
    }
    Ok(DmlResult {
        affected: n,
        last_insert_id: None,
        info: String::new(),
        warnings: Vec::new(),
        returned,
    })
}
