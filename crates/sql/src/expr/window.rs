//! Window functions, compiled: a `f(...) OVER (PARTITION BY ... ORDER BY ... [frame])` of a
//! select list becomes an [`Expr::Win`] holding a [`WinCall`]; `execute::window` computes
//! its value for every output row once the rows are collected (after WHERE, GROUP BY and
//! HAVING; before the final ORDER BY, DISTINCT and LIMIT, as MariaDB).
//!
//! Invariants: a window call is a whole select-list item (`plan::select::winexpr` rewrites
//! a SELECT with one nested in an expression or in ORDER BY; WHERE/GROUP BY/HAVING are
//! 4015); `colls` has one collation per partition key then per order key; a RANGE frame with
//! an offset bound has one numeric ORDER BY key and its offsets in `range` (non-negative
//! numbers); a window referencing a named one is merged with it ([`extend`]) before it is
//! compiled.
//! Called by `expr::compile` (`Compiler::function` on a call with OVER).

use super::collate::CollRef;
use super::compile::Compiler;
use super::ir::{AggFunc, AggSpec, Expr};
use super::types::RType;
use crate::error::SqlError;
use onelog_binlog::Value;
use onelog_engine::SqlType;
use sqlparser::ast;

/// The function a window computes.
#[derive(Debug, Clone)]
pub(crate) enum WinFunc {
    RowNumber,
    Rank,
    DenseRank,
    /// An aggregate over the frame (its argument as compiled, over the output row).
    Agg(AggSpec),
    /// `LAG(x, n)` / `LEAD(x, n)`: `x` (`args[0]`) of the row n before / after in the
    /// partition (NULL past its ends); the frame is ignored, as MariaDB.
    Lag(i64),
    Lead(i64),
    /// `FIRST_VALUE(x)` / `LAST_VALUE(x)`: `x` of the frame's first / last row.
    FirstValue,
    LastValue,
    /// `NTILE(n)`: the bucket (1..n) of the row; the first `rows % n` buckets get one row more.
    Ntile(i64),
    /// `PERCENT_RANK()`: (rank - 1) / (partition rows - 1), 0 in a one-row partition.
    PercentRank,
    /// `CUME_DIST()`: the rows up to the row's last peer / the partition's rows.
    CumeDist,
    /// `NTH_VALUE(x, n)`: `x` (`args[0]`) of the frame's n-th row (`args[1]`, evaluated per
    /// row, rounded; NULL reads as 1, as in MariaDB); NULL when the frame is shorter or n is
    /// below 1.
    NthValue,
}

/// A window's frame: `ROWS` (offsets from the row) or `RANGE` (peers: only 0, CURRENT ROW);
/// None: UNBOUNDED; negative: PRECEDING.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Frame {
    pub rows: bool,
    pub start: Option<i64>,
    pub end: Option<i64>,
}

/// One window function call.
#[derive(Debug, Clone)]
pub(crate) struct WinCall {
    pub func: WinFunc,
    pub partition: Vec<Expr>,
    /// ORDER BY of the window: (expression, descending).
    pub order: Vec<(Expr, bool)>,
    /// The collation of each partition key, then of each order key.
    pub colls: Vec<CollRef>,
    /// The collation an aggregate's argument compares under (MIN, MAX).
    pub arg_coll: CollRef,
    /// The value argument of LAG, LEAD, FIRST_VALUE, LAST_VALUE, NTH_VALUE (then also its
    /// `n`; empty for the others).
    pub args: Vec<Expr>,
    pub frame: Frame,
    /// A RANGE frame's offset bounds (start, end): the offset (a non-negative number) and
    /// whether it is PRECEDING; None for an UNBOUNDED or CURRENT ROW bound and ROWS frames.
    pub range: [Option<(Value, bool)>; 2],
    /// Its position in the select list (an ORDER BY naming it sorts on that column).
    pub slot: usize,
}

/// A SELECT's `WINDOW name AS (spec)` definitions, by lower-case name, each one referencing
/// an earlier one (`w2 AS (w1 ORDER BY ...)`) merged with it ([`extend`]). A name defined
/// twice is 4010; `w2 AS w1` is a syntax error (1064), as in MariaDB.
pub(crate) fn named_windows(sel: &ast::Select) -> Result<Vec<(String, ast::WindowSpec)>, SqlError> {
    let mut out: Vec<(String, ast::WindowSpec)> = Vec::with_capacity(sel.named_window.len());
    for ast::NamedWindowDefinition(name, def) in &sel.named_window {
        let key = name.value.to_ascii_lowercase();
        if out.iter().any(|(n, _)| *n == key) {
            return Err(SqlError::new(
                4010,
                "HY000",
                format!(
                    "Multiple window specifications with the same name '{}'",
                    name.value
                ),
            ));
        }
        let spec = match def {
            ast::NamedWindowExpr::WindowSpec(s) => extend(&out, s)?,
            ast::NamedWindowExpr::NamedWindow(id) => return Err(SqlError::syntax(&id.value)),
        };
        out.push((key, spec));
    }
    Ok(out)
}

/// `spec` with the named window it references (`(w ORDER BY ...)`) merged in: the named
/// window's PARTITION BY and ORDER BY, `spec`'s ORDER BY (when the named one has none) and
/// frame. MariaDB's errors: an undefined name 4009, a PARTITION BY in `spec` 4011, ORDER BY in
/// both 4012, a frame in the named window 4013.
pub(crate) fn extend(
    named: &[(String, ast::WindowSpec)],
    spec: &ast::WindowSpec,
) -> Result<ast::WindowSpec, SqlError> {
    let Some(id) = &spec.window_name else {
        return Ok(spec.clone());
    };
    let key = id.value.to_ascii_lowercase();
    let Some((_, base)) = named.iter().find(|(n, _)| *n == key) else {
        return Err(undefined(&id.value));
    };
    let err = |code: u16, text: String| Err(SqlError::new(code, "HY000", text));
    if !spec.partition_by.is_empty() {
        return err(
            4011,
            format!(
                "Window specification referencing another one '{}' cannot contain partition list",
                id.value
            ),
        );
    }
    if !spec.order_by.is_empty() && !base.order_by.is_empty() {
        return err(
            4012,
            format!(
                "Referenced window specification '{}' already contains order list",
                id.value
            ),
        );
    }
    if base.window_frame.is_some() {
        return err(
            4013,
            format!(
                "Referenced window specification '{}' cannot contain window frame",
                id.value
            ),
        );
    }
    let mut out = base.clone();
    if !spec.order_by.is_empty() {
        out.order_by = spec.order_by.clone();
    }
    out.window_frame = spec.window_frame.clone();
    debug_assert!(out.window_name.is_none(), "named windows are stored merged");
    Ok(out)
}

/// 4009: a window name no WINDOW clause defines.
fn undefined(name: &str) -> SqlError {
    SqlError::new(
        4009,
        "HY000",
        format!("Window specification with name '{name}' is not defined"),
    )
}

/// 4015: a window function outside the select list.
pub(crate) fn misplaced() -> SqlError {
    SqlError::new(
        4015,
        "HY000",
        "Window function is allowed only in SELECT list and ORDER BY clause",
    )
}

impl Compiler<'_> {
    /// `f(...) OVER (...)` as a select-list item (`self.windows` set by the SELECT planner).
    pub(crate) fn window_call(
        &mut self,
        f: &ast::Function,
        name: &str,
        over: &ast::WindowType,
    ) -> Result<Expr, SqlError> {
        if !self.windows {
            return Err(if self.place == "ORDER BY" || self.place == "SELECT" {
                SqlError::unsupported("window function inside an expression or ORDER BY")
            } else {
                misplaced()
            });
        }
        let spec = match over {
            ast::WindowType::WindowSpec(s) => extend(&self.named_windows, s)?,
            ast::WindowType::NamedWindow(id) => {
                let key = id.value.to_ascii_lowercase();
                let found = self.named_windows.iter().find(|(n, _)| *n == key);
                match found {
                    Some((_, s)) => s.clone(),
                    None => return Err(undefined(&id.value)),
                }
            }
        };
        let spec = &spec;
        // The arguments, keys and order are ordinary expressions (no nested windows).
        self.windows = false;
        let r = self.window_parts(f, name, spec);
        self.windows = true;
        r
    }

    fn window_parts(
        &mut self,
        f: &ast::Function,
        name: &str,
        spec: &ast::WindowSpec,
    ) -> Result<Expr, SqlError> {
        let mut args = Vec::new();
        let func = match name {
            "ROW_NUMBER" | "RANK" | "DENSE_RANK" | "PERCENT_RANK" | "CUME_DIST" => {
                let (args, star, _) = self.args(f)?;
                if !args.is_empty() || star {
                    return Err(SqlError::syntax(&f.to_string()));
                }
                if spec.window_frame.is_some() {
                    return Err(SqlError::new(
                        4017,
                        "HY000",
                        format!(
                            "Window frame is not allowed with '{}'",
                            name.to_ascii_lowercase()
                        ),
                    ));
                }
                if name != "ROW_NUMBER" && spec.order_by.is_empty() {
                    return Err(SqlError::new(
                        4018,
                        "HY000",
                        format!(
                            "No order list in window specification for '{}'",
                            name.to_ascii_lowercase()
                        ),
                    ));
                }
                match name {
                    "ROW_NUMBER" => WinFunc::RowNumber,
                    "RANK" => WinFunc::Rank,
                    "PERCENT_RANK" => WinFunc::PercentRank,
                    "CUME_DIST" => WinFunc::CumeDist,
                    _ => WinFunc::DenseRank,
                }
            }
            "LAG" | "LEAD" | "FIRST_VALUE" | "LAST_VALUE" | "NTILE" | "NTH_VALUE" => {
                let (got, star, distinct) = self.args(f)?;
                if star || distinct {
                    return Err(SqlError::syntax(&f.to_string()));
                }
                let (func, value) = self.value_function(f, name, spec, got)?;
                args = value;
                func
            }
            _ => match super::functions::aggregate::lookup(name) {
                // MariaDB's aggregates as window functions. GROUP_CONCAT is not one (1235 there
                // too); MariaDB answers the STD / VARIANCE family unevenly over frames (a NULL
                // argument or a partition without ORDER BY gives wrong values): refused.
                Some(AggFunc::GroupConcat) => {
                    return Err(SqlError::unsupported(&format!(
                        "{name}() aggregate as window function"
                    )))
                }
                Some(AggFunc::StdPop | AggFunc::StdSamp | AggFunc::VarPop | AggFunc::VarSamp) => {
                    return Err(SqlError::unsupported(&format!(
                        "{name}() as a window function"
                    )))
                }
                Some(a) => WinFunc::Agg(self.window_aggregate(f, a, name)?),
                _ => {
                    return Err(SqlError::unsupported(&format!(
                        "{name}() as a window function"
                    )))
                }
            },
        };
        let mut partition = Vec::with_capacity(spec.partition_by.len());
        for e in &spec.partition_by {
            partition.push(super::compile::numeric_view(
                self.compile_in("GROUP BY", e)?,
            ));
        }
        let mut order = Vec::with_capacity(spec.order_by.len());
        for o in &spec.order_by {
            let x = super::compile::numeric_view(self.compile_in("ORDER BY", &o.expr)?);
            order.push((x, matches!(o.options.sort, Some(ast::OrderBySort::Desc))));
        }
        let of = |c: &Compiler, e: &Expr| c.derive(e).map_or(CollRef::Connection, |d| d.coll);
        let mut colls: Vec<CollRef> = partition.iter().map(|e| of(self, e)).collect();
        colls.extend(order.iter().map(|(e, _)| of(self, e)));
        let arg_coll = match &func {
            WinFunc::Agg(a) => a.arg.as_ref().map_or(CollRef::Connection, |e| of(self, e)),
            _ => CollRef::Connection,
        };
        let frame = frame(spec.window_frame.as_ref())?;
        let range = match spec.window_frame.as_ref() {
            Some(f) if !frame.rows => self.range_offsets(f, &order)?,
            _ => [None, None],
        };
        Ok(Expr::Win(Box::new(WinCall {
            range,
            func,
            partition,
            order,
            colls,
            arg_coll,
            args,
            frame,
            slot: 0,
        })))
    }

    /// LAG/LEAD(x[, n]), FIRST_VALUE(x), LAST_VALUE(x), NTILE(n), NTH_VALUE(x, n): the
    /// function and its value arguments; LAG/LEAD's and NTILE's `n` must be a literal integer
    /// (others: 1235), NTILE's above 0 (4024); NTH_VALUE's is any expression of the row.
    fn value_function(
        &mut self,
        f: &ast::Function,
        name: &str,
        spec: &ast::WindowSpec,
        mut got: Vec<Expr>,
    ) -> Result<(WinFunc, Vec<Expr>), SqlError> {
        let lower = name.to_ascii_lowercase();
        let need_order = matches!(name, "LAG" | "LEAD");
        if need_order && spec.order_by.is_empty() {
            return Err(SqlError::new(
                4018,
                "HY000",
                format!("No order list in window specification for '{lower}'"),
            ));
        }
        if name == "NTILE" && spec.window_frame.is_some() {
            return Err(SqlError::new(
                4017,
                "HY000",
                format!("Window frame is not allowed with '{lower}'"),
            ));
        }
        let literal = |e: &Expr| -> Result<i64, SqlError> {
            match e {
                Expr::Lit(onelog_binlog::Value::Int(n)) if *n >= 0 => Ok(*n),
                Expr::Lit(onelog_binlog::Value::UInt(n)) => {
                    i64::try_from(*n).map_err(|_| SqlError::unsupported("this window offset"))
                }
                _ => Err(SqlError::unsupported(&format!(
                    "a non-literal or negative argument of {name}"
                ))),
            }
        };
        let (min, max) = match name {
            "LAG" | "LEAD" => (1, 2),
            "NTH_VALUE" => (2, 2),
            _ => (1, 1),
        };
        if got.len() < min || got.len() > max {
            return Err(SqlError::syntax(&f.to_string()));
        }
        Ok(match name {
            "NTILE" => {
                let n = literal(&got[0])?;
                if n == 0 {
                    return Err(SqlError::new(
                        4024,
                        "HY000",
                        "Argument of NTILE must be greater than 0",
                    ));
                }
                (WinFunc::Ntile(n), Vec::new())
            }
            "LAG" | "LEAD" => {
                let n = match got.get(1) {
                    Some(e) => literal(e)?,
                    None => 1,
                };
                got.truncate(1);
                let func = if name == "LAG" {
                    WinFunc::Lag(n)
                } else {
                    WinFunc::Lead(n)
                };
                (func, got)
            }
            "FIRST_VALUE" => (WinFunc::FirstValue, got),
            "NTH_VALUE" => (WinFunc::NthValue, got),
            _ => (WinFunc::LastValue, got),
        })
    }

    /// A RANGE frame's offset bounds: MariaDB's rules, one ORDER BY key (4019) of a numeric
    /// type (4021); each offset a non-negative number literal (else 1235, as an INTERVAL).
    fn range_offsets(
        &mut self,
        f: &ast::WindowFrame,
        order: &[(Expr, bool)],
    ) -> Result<[Option<(Value, bool)>; 2], SqlError> {
        use ast::WindowFrameBound as B;
        let bounds = [Some(&f.start_bound), f.end_bound.as_ref()];
        fn offset(b: Option<&B>) -> Option<(&ast::Expr, bool)> {
            match b {
                Some(B::Preceding(Some(e))) => Some((e, true)),
                Some(B::Following(Some(e))) => Some((e, false)),
                _ => None,
            }
        }
        if bounds.iter().all(|b| offset(*b).is_none()) {
            return Ok([None, None]);
        }
        if order.len() != 1 {
            return Err(SqlError::new(
                4019,
                "HY000",
                "RANGE-type frame requires ORDER BY clause with single sort key",
            ));
        }
        let r = order[0]
            .0
            .rtype(self.scope.table, self.aggs.as_deref().unwrap_or(&[]));
        let numeric = match r {
            RType::Int | RType::UInt | RType::Decimal(..) | RType::Double | RType::DoubleDec(_) => {
                true
            }
            RType::Column(c) => self.column_def(c).is_some_and(|d| {
                d.ty.is_integer()
                    || matches!(
                        d.ty,
                        SqlType::Decimal { .. } | SqlType::Float | SqlType::Double
                    )
            }),
            _ => false,
        };
        if !numeric {
            return Err(SqlError::new(
                4021,
                "HY000",
                "Numeric datatype is required for RANGE-type frame",
            ));
        }
        let mut out = [None, None];
        for (slot, b) in out.iter_mut().zip(bounds) {
            let Some((e, preceding)) = offset(b) else {
                continue;
            };
            match self.compile(e)? {
                Expr::Lit(v @ (Value::Int(0..) | Value::UInt(_) | Value::Decimal(_))) if !matches!(&v, Value::Decimal(d) if d.starts_with('-')) => {
                    *slot = Some((v, preceding))
                }
                _ => return Err(SqlError::unsupported("this RANGE frame bound")),
            }
        }
        Ok(out)
    }

    /// SUM/COUNT/AVG/MIN/MAX and BIT_AND/OR/XOR as a window function: its argument is an expression of the
    /// output row (it may hold the query's own aggregates: `SUM(SUM(a)) OVER (...)`);
    /// DISTINCT is refused, as in MariaDB.
    fn window_aggregate(
        &mut self,
        f: &ast::Function,
        func: AggFunc,
        name: &str,
    ) -> Result<AggSpec, SqlError> {
        let (mut args, star, distinct) = self.args(f)?;
        if distinct {
            return Err(SqlError::unsupported(&format!(
                "{name}(DISTINCT) aggregate as window function"
            )));
        }
        let func = match (star, args.len()) {
            (true, 0) if func == AggFunc::Count => AggFunc::CountStar,
            (false, 1) => func,
            (true, _) => return Err(SqlError::syntax(&f.to_string())),
            _ => return Err(SqlError::param_count(name)),
        };
        // SUM and AVG read an ENUM or SET as its number, as their aggregates do.
        let arg = args.pop().map(|a| {
            if matches!(func, AggFunc::Sum | AggFunc::Avg) {
                super::compile::numeric_view(a)
            } else {
                a
            }
        });
        Ok(AggSpec {
            func,
            distinct: false,
            arg,
            order_by: Vec::new(),
            separator: b",".to_vec(),
        })
    }
}

/// The frame of a window: the default (RANGE UNBOUNDED PRECEDING .. CURRENT ROW) or an
/// explicit ROWS / RANGE frame; RANGE offsets and GROUPS are refused (1235).
fn frame(f: Option<&ast::WindowFrame>) -> Result<Frame, SqlError> {
    let Some(f) = f else {
        return Ok(Frame {
            rows: false,
            start: None,
            end: Some(0),
        });
    };
    let rows = match f.units {
        ast::WindowFrameUnits::Rows => true,
        ast::WindowFrameUnits::Range => false,
        ast::WindowFrameUnits::Groups => return Err(SqlError::unsupported("GROUPS frames")),
    };
    let start = bound(&f.start_bound)?;
    let end = match &f.end_bound {
        Some(b) => bound(b)?,
        None => Some(0),
    };
    // MariaDB's check of the bounds' combination (4014).
    use ast::WindowFrameBound as B;
    let bad = matches!(
        (
            &f.start_bound,
            f.end_bound.as_ref().unwrap_or(&B::CurrentRow)
        ),
        (B::Following(None), _)
            | (_, B::Preceding(None))
            | (B::CurrentRow, B::Preceding(_))
            | (B::Following(_), B::CurrentRow)
    );
    if bad {
        return Err(SqlError::new(
            4014,
            "HY000",
            "Unacceptable combination of window frame bound specifications",
        ));
    }
    if let (Some(s), Some(e)) = (start, end) {
        if s > e {
            // MariaDB answers a frame that ends before it starts unevenly (not always empty).
            return Err(SqlError::unsupported(
                "a window frame that ends before it starts",
            ));
        }
    }
    Ok(Frame { rows, start, end })
}

/// A bound as a row offset (a RANGE offset that is not an integer: its sign, the value is
/// read by `range_offsets`).
fn bound(b: &ast::WindowFrameBound) -> Result<Option<i64>, SqlError> {
    let n = |e: &ast::Expr| -> Result<i64, SqlError> {
        match e {
            ast::Expr::Value(v) => match &v.value {
                ast::Value::Number(n, _) => match n.parse::<i64>() {
                    Ok(i) => Ok(i),
                    Err(_) if n.parse::<f64>().is_ok_and(|f| f > 0.0) => Ok(1),
                    Err(_) if n.parse::<f64>().is_ok() => Ok(0),
                    Err(_) => Err(SqlError::unsupported("this frame bound")),
                },
                _ => Err(SqlError::unsupported("this frame bound")),
            },
            _ => Err(SqlError::unsupported("this frame bound")),
        }
    };
    Ok(match b {
        ast::WindowFrameBound::CurrentRow => Some(0),
        ast::WindowFrameBound::Preceding(None) | ast::WindowFrameBound::Following(None) => None,
        ast::WindowFrameBound::Preceding(Some(e)) => Some(-n(e)?),
        ast::WindowFrameBound::Following(Some(e)) => Some(n(e)?),
    })
}
