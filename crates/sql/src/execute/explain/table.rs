//! The lines of one SELECT's tables in EXPLAIN's traditional table, in the order the loops
//! nest, with MariaDB 10.11's words for what onelog does: `const` (a primary or unique key
//! point), `eq_ref` (a join's lookup of a whole primary or unique key), `ref` (a lookup of a
//! key prefix), `range`, `ALL` (a scan, or a join's loop over the table's rows, with `Using
//! join buffer (flat, BNL join)`), `hash_ALL` with key `#hash#$hj` and `Using join buffer
//! (flat, BNLH join)` (a hash join). `key_len` is MariaDB's byte length of the key parts used.
//!
//! `rows` is 1 for `const` and `eq_ref`, else the table's row count (a derived table's:
//! the estimate its caller gives): onelog keeps no index statistics, so a `ref` or `range`
//! shows the count of the table it reads from (an upper bound).
//!
//! Called by `execute::explain` (its parent) for each SELECT of a statement.

use onelog_binlog::Value;
use onelog_engine::{SqlType, TableDef};

use crate::context::ExecContext;
use crate::expr::{Expr, RType};
use crate::output::{Column, Output};
use crate::plan::access::{Access, Plan};
use crate::plan::join::{JoinAccess, JoinPlan, JoinStep};
use crate::plan::select::expr_column;

/// One line of the table.
#[derive(Default)]
pub(super) struct Line {
    pub table: Option<String>,
    pub ty: Option<&'static str>,
    pub possible: Option<String>,
    pub key: Option<String>,
    pub key_len: Option<String>,
    pub refs: Option<String>,
    pub rows: Option<u64>,
    pub extra: Vec<&'static str>,
    /// Extra is NULL (INSERT ... VALUES), not empty.
    pub null_extra: bool,
}

/// What the lines of one SELECT need beyond its plan: the name and row count shown per FROM
/// position, and the WHERE conjuncts EXPLAIN shows as a semi-join line instead of a filter.
pub(super) struct Tables<'a> {
    pub cx: &'a ExecContext,
    pub names: Vec<String>,
    /// Per FROM position: a derived table's estimated rows (None: a stored table's count).
    pub est: Vec<Option<u64>>,
    pub semi: &'a dyn Fn(&Expr) -> bool,
}

impl Tables<'_> {
    fn rows(&self, pos: usize, t: &TableDef) -> u64 {
        match self.est.get(pos) {
            Some(Some(n)) => *n,
            _ => table_rows(self.cx, t),
        }
    }

    /// Whether `filter` keeps a conjunct that is not shown as a semi-join.
    fn filters(&self, filter: Option<&Expr>) -> bool {
        let Some(f) = filter else { return false };
        let mut conds = Vec::new();
        crate::plan::access::conjuncts(f, &mut conds);
        conds.iter().any(|c| !(self.semi)(c))
    }

    /// The line of a SELECT reading one table through `plan` (`dml`: an UPDATE or DELETE,
    /// whose key reads MariaDB calls `range`).
    pub fn single(&self, t: &TableDef, plan: Option<&Plan>, dml: bool) -> Line {
        let mut l = Line {
            table: self.names.first().cloned(),
            rows: Some(self.rows(0, t)),
            ..Line::default()
        };
        let Some(plan) = plan else {
            l.ty = Some("ALL");
            return l;
        };
        driver_access(t, &plan.access, &mut l);
        if dml && l.ty != Some("ALL") {
            // MariaDB's single-table UPDATE and DELETE read a key as a range.
            l.ty = Some("range");
            l.refs = None;
            if plan.filter.is_some() && !l.extra.contains(&"Using where") {
                l.extra.push("Using where");
            }
        }
        if self.filters(plan.residual.as_ref()) && !l.extra.contains(&"Using where") {
            l.extra.push("Using where");
        }
        l
    }

    /// The lines of a join: the driving table's (read through `plan` when it is the first
    /// FROM table), then each step's.
    pub fn joined(&self, jp: &JoinPlan, plan: Option<&Plan>) -> Vec<Line> {
        let mut first = Line {
            table: self.names.get(jp.driver).cloned(),
            rows: Some(self.rows(jp.driver, &jp.driver_table)),
            ..Line::default()
        };
        match (plan, jp.driver) {
            (Some(plan), 0) => driver_access(&jp.driver_table, &plan.access, &mut first),
            _ => first.ty = Some("ALL"),
        }
        if self.filters(jp.driver_filter.as_ref()) && !first.extra.contains(&"Using where") {
            first.extra.push("Using where");
        }
        let mut lines = vec![first];
        for s in &jp.steps {
            lines.push(self.step(jp, s));
        }
        // What is left of the WHERE is tested once the last table joined.
        if self.filters(jp.filter.as_ref()) {
            if let Some(last) = lines.last_mut() {
                if !last.extra.contains(&"Using where") {
                    last.extra.insert(0, "Using where");
                }
            }
        }
        lines
    }

    fn step(&self, jp: &JoinPlan, s: &JoinStep) -> Line {
        let t = &s.table;
        let mut l = Line {
            table: self.names.get(s.position).cloned(),
            rows: Some(self.rows(s.position, t)),
            ..Line::default()
        };
        let mut conds = Vec::new();
        if let Some(on) = &s.on {
            crate::plan::access::conjuncts(on, &mut conds);
        }
        conds.retain(|c| !(self.semi)(c));
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
                let refs: Vec<String> = keys.iter().map(|k| ref_of(k, jp)).collect();
                l.refs = Some(refs.join(","));
                l.extra.push("Using where");
                l.extra.push("Using join buffer (flat, BNLH join)");
            }
            JoinAccess::Loop => {
                l.ty = Some("ALL");
                if !conds.is_empty() {
                    l.extra.push("Using where");
                }
                l.extra.push("Using join buffer (flat, BNL join)");
            }
        }
        l
    }
}

/// The number of rows of `t` in the newest committed state.
pub(super) fn table_rows(cx: &ExecContext, t: &TableDef) -> u64 {
    let snap = cx.server.engine.snapshot();
    snap.root().row_count(t.id)
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
pub(super) fn key_part_len(ty: &SqlType, nullable: bool) -> u32 {
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
            let col = &t.columns[c - off].name;
            // A derived table's column has no database.
            return match t.db.is_empty() {
                true => format!("{}.{col}", t.name),
                false => format!("{}.{}.{col}", t.db, t.name),
            };
        }
    }
    "func".to_string()
}

/// One row of the EXPLAIN table: the SELECT it belongs to (None: a UNION RESULT) and its
/// select_type, and the line.
pub(super) struct Row {
    pub id: Option<u64>,
    pub select_type: String,
    pub line: Line,
}

/// The traditional table of `rows`.
pub(super) fn render(rows: Vec<Row>) -> Output {
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
    let s = |v: Option<String>| v.map_or(Value::Null, |x| Value::bytes(x.into_bytes()));
    let rows = rows
        .into_iter()
        .map(|r| {
            let l = r.line;
            let extra = (!l.null_extra).then(|| l.extra.join("; "));
            vec![
                r.id.map_or(Value::Null, |i| Value::Int(i as i64)),
                Value::bytes(r.select_type.into_bytes()),
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
