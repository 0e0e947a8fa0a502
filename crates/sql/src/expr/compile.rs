//! The compiler: sqlparser expressions to [`Expr`] against a [`Scope`] (columns by position,
//! placeholders by order, aggregates into slots, select-list aliases), literals to values and
//! built-in function names to their definitions.
//!
//! Invariants: a column resolves to a position inside its table's columns; placeholders are
//! numbered in textual order (the compiler visits operands left to right); an aggregate's
//! argument never holds an aggregate; a compiled function call has an argument count within
//! its definition's arity (checked here, asserted at evaluation).
//!
//! Called by the executors (`select`, `dml`, `ddl`) and by `eval_scalar`.

use onelog_binlog::Value;
use onelog_engine::collation::Collation;
use onelog_engine::{ColumnDef, TableDef};
use onelog_protocol::errors;
use sqlparser::ast;

pub(crate) use super::collate::Deriv;
use super::collate::{
    aggregate, check_charset, collation_named, for_comparison, Coercibility, CollRef,
};
use super::functions::{self, aggregate};
use super::hybrid;
use super::ir::{AggFunc, AggSpec, BinOp, CastTo, Expr, Func};
use super::numeric::Dec;
use super::types::RType;
use crate::error::SqlError;
use crate::sysvar::VarScope;

/// The functions whose value is a system constant (MariaDB's DERIVATION_SYSCONST).
const SYSCONST_FUNCTIONS: &[&str] = &[
    "DATABASE",
    "USER",
    "CURRENT_USER",
    "CURRENT_ROLE",
    "VERSION",
];

/// What names resolve to while compiling.
pub(crate) struct Scope<'a> {
    pub table: Option<&'a TableDef>,
    /// The name the table is referred to by (its alias, or its name).
    pub qualifier: &'a str,
    #[allow(dead_code)]
    pub db: &'a str,
    /// Further tables of a join: (definition, qualifier, offset of its first column).
    pub joined: Vec<(&'a TableDef, &'a str, usize)>,
}

/// Compiles sqlparser expressions against a [`Scope`].
pub(crate) struct Compiler<'a> {
    pub scope: Scope<'a>,
    /// Where aggregates go; None: aggregates are not allowed here.
    pub aggs: Option<Vec<AggSpec>>,
    /// Next placeholder number.
    pub params: usize,
    /// Clause name for 1054 messages.
    pub place: &'static str,
    /// `VALUES(col)` allowed (ON DUPLICATE KEY UPDATE).
    pub insert_values: bool,
    /// Select-list aliases (lower-case) usable here (HAVING, ORDER BY), after table columns.
    pub aliases: Vec<(String, Expr)>,
    /// The enclosing query's names, when this compiles a subquery: a name this scope lacks
    /// resolves there, at `width() + its position` in the enclosing row (appended to ours).
    pub outer: Option<&'a dyn OuterNames>,
    /// Compiles subqueries (`plan::select::subquery`); None: a subquery is refused here (1235).
    pub subq: Option<&'a dyn SubqueryHook>,
    /// Set when a name resolved in an enclosing query (this query is correlated).
    pub correlated: std::cell::Cell<bool>,
    /// A window function is allowed here (a select-list item of a SELECT).
    pub windows: bool,
    /// The SELECT's `WINDOW name AS (...)` definitions, by lower-case name.
    pub named_windows: Vec<(String, ast::WindowSpec)>,
    /// Columns a USING or NATURAL join merged (`plan::select::from`): (column, the column
    /// an unqualified name of it reads).
    pub merged: Vec<(usize, usize)>,
    /// The collation of string literals, parameters and the values typed as them: the
    /// connection's, or a fixed one for a stored expression that keeps its own (a CHECK
    /// constraint's literals compare under its table's collation, as MariaDB's).
    pub literals: CollRef,
    /// The first unknown or ambiguous name (1054/1052) of an ON condition, held back:
    /// MariaDB resolves the ON conditions after the select list and the WHERE, so their
    /// errors come first (`plan::select::from`; the SELECT and multi-table planners return it).
    pub deferred_on: Option<SqlError>,
}

/// The names of an enclosing query, for a subquery's outer references.
pub(crate) trait OuterNames {
    /// The reading of the column `parts` names in this scope or one enclosing it, over this
    /// scope's full row (its own columns, then its enclosing row): the column, or the text
    /// reading of an ENUM, SET or BIT column ([`Compiler::column_ref`]); 1054/1052 as a
    /// column.
    fn outer_column(&self, parts: &[&str]) -> Result<Expr, SqlError>;

    /// The collation derivation of position `p` of this scope's full row (a column keeps
    /// its collation, IMPLICIT, inside a subquery that refers to it).
    fn outer_deriv(&self, p: usize) -> Option<Deriv>;
}

impl OuterNames for Compiler<'_> {
    fn outer_column(&self, parts: &[&str]) -> Result<Expr, SqlError> {
        match self.lookup(parts)? {
            e @ Expr::Col(_) => Ok(e),
            Expr::Func(f, args) if matches!(args.first(), Some(Expr::Col(_))) => {
                Ok(Expr::Func(f, args))
            }
            _ => Err(SqlError::unknown_column(&parts.join("."), self.place)),
        }
    }

    fn outer_deriv(&self, p: usize) -> Option<Deriv> {
        self.derive(&Expr::Col(p))
    }
}

/// Compiles a subquery of an expression (implemented by `plan::select::subquery`).
pub(crate) trait SubqueryHook {
    /// Compiles `q` with `outer` as its enclosing scope, its placeholders numbered from
    /// `params`; the plan is kept by the hook under the returned id.
    fn compile_subquery(
        &self,
        q: &ast::Query,
        outer: &dyn OuterNames,
        params: usize,
    ) -> Result<SubqInfo, SqlError>;
}

/// What the enclosing compiler learns of a compiled subquery.
pub(crate) struct SubqInfo {
    pub id: usize,
    /// Its number of result columns.
    pub columns: usize,
    /// The type and collation derivation of its first column.
    pub rtype: RType,
    pub deriv: Option<Deriv>,
    /// The collation derivation of each column.
    pub derivs: Vec<Option<Deriv>>,
    /// It refers to the enclosing row.
    pub correlated: bool,
    /// The next placeholder number after it.
    pub params: usize,
}

pub(super) fn ident_name(i: &ast::Ident) -> &str {
    &i.value
}

pub(crate) fn object_name_parts(n: &ast::ObjectName) -> Vec<String> {
    n.0.iter()
        .map(|p| match p {
            ast::ObjectNamePart::Identifier(i) => i.value.clone(),
            other => other.to_string(),
        })
        .collect()
}

/// An enclosing scope's column reading ([`OuterNames::outer_column`]) moved past this
/// scope's own `width` columns: the column, or the first argument of its text reading (an
/// ENUM/SET/BIT column used to be 1054 in a subquery).
fn shift_outer(e: Expr, width: usize) -> Expr {
    match e {
        Expr::Col(p) => Expr::Col(width + p),
        Expr::Func(f, mut args) => {
            if let Some(Expr::Col(p)) = args.first_mut() {
                *p += width;
            }
            Expr::Func(f, args)
        }
        e => e,
    }
}

impl<'a> Compiler<'a> {
    pub fn new(scope: Scope<'a>, place: &'static str) -> Self {
        Compiler {
            scope,
            aggs: None,
            params: 0,
            place,
            insert_values: false,
            aliases: Vec::new(),
            outer: None,
            subq: None,
            correlated: std::cell::Cell::new(false),
            windows: false,
            named_windows: Vec::new(),
            merged: Vec::new(),
            literals: CollRef::Connection,
            deferred_on: None,
        }
    }

    /// The column an unqualified name of joined-row column `i` reads (a merged one's).
    fn merged_into(&self, i: usize) -> usize {
        self.merged
            .iter()
            .find(|(c, _)| *c == i)
            .map_or(i, |(_, to)| *to)
    }

    /// Merges column `from` (and what was merged into it) into column `to`: an unqualified
    /// name of either reads `to` (a USING or NATURAL join's common column).
    pub(crate) fn merge(&mut self, from: usize, to: usize) {
        debug_assert_eq!(self.merged_into(to), to, "merged into a shown column");
        for m in &mut self.merged {
            if m.1 == from {
                m.1 = to;
            }
        }
        self.merged.push((from, to));
    }

    /// `l = r` of two joined-row columns, compiled as `ON l = r` is (a USING or NATURAL
    /// join's equality).
    pub(crate) fn column_equality(&self, l: usize, r: usize) -> Result<Expr, SqlError> {
        let l = self.column_ref(Expr::Col(l), l);
        let r = self.column_ref(Expr::Col(r), r);
        let (l, r) = numeric_operands(BinOp::Eq, l, r);
        let ds = [self.derive(&l), self.derive(&r)];
        self.collated(Expr::Bin(BinOp::Eq, Box::new(l), Box::new(r)), &ds, "=")
    }

    /// The width of this scope's own row (its tables' columns; the enclosing row follows).
    pub fn width(&self) -> usize {
        self.scope.table.map_or(0, |t| t.columns.len())
            + self
                .scope
                .joined
                .iter()
                .map(|(d, _, _)| d.columns.len())
                .sum::<usize>()
    }

    /// A column of this scope or, when it has none of that name, of the enclosing query
    /// (inner scope first, as MariaDB); the error is this scope's.
    pub(super) fn lookup(&self, parts: &[&str]) -> Result<Expr, SqlError> {
        match self.column(parts) {
            Err(e) if e.code == errors::ER_BAD_FIELD_ERROR.code => {
                let Some(outer) = self.outer else {
                    return Err(e);
                };
                match outer.outer_column(parts) {
                    Ok(e) => {
                        self.correlated.set(true);
                        Ok(shift_outer(e, self.width()))
                    }
                    Err(o) if o.code == errors::ER_BAD_FIELD_ERROR.code => Err(e),
                    Err(o) => Err(o),
                }
            }
            r => r,
        }
    }

    /// The definition of the column at row position `i` (across a join's tables).
    pub(super) fn column_def(&self, i: usize) -> Option<&ColumnDef> {
        let t = self.scope.table?;
        if i < t.columns.len() {
            return t.columns.get(i);
        }
        self.scope
            .joined
            .iter()
            .find(|(d, _, off)| (*off..off + d.columns.len()).contains(&i))
            .and_then(|(d, _, off)| d.columns.get(i - off))
    }

    /// The expression reading column `i` (its stored value `inner`): an ENUM or SET column
    /// reads as its text (`members`), a BIT(M) as its bytes, any other as itself. Whoever
    /// makes a column reference (SELECT *, a derived table's columns) goes through here.
    pub(crate) fn column_ref(&self, inner: Expr, i: usize) -> Expr {
        match self.column_def(i) {
            Some(d) if matches!(d.ty, onelog_engine::SqlType::Bit(_)) => {
                let m = match d.ty {
                    onelog_engine::SqlType::Bit(m) => i64::from(m),
                    _ => 64,
                };
                Expr::Func(
                    const { Func::named("BIT_TEXT") },
                    vec![inner, Expr::Lit(Value::Int(m))],
                )
            }
            Some(d) if d.ty.member_count() > 0 => {
                let f = if matches!(d.ty, onelog_engine::SqlType::Set(_)) {
                    const { Func::named("SET_TEXT") }
                } else {
                    const { Func::named("ENUM_TEXT") }
                };
                Expr::Func(
                    f,
                    vec![
                        inner,
                        Expr::Lit(Value::Bytes(
                            super::members::encode_members(&d.members).into(),
                        )),
                    ],
                )
            }
            _ => inner,
        }
    }

    /// The collation derivation of a compiled expression (None: not a string).
    pub fn derive(&self, e: &Expr) -> Option<Deriv> {
        use Coercibility as C;
        let conn = |co| Some(Deriv::new(self.literals, co));
        match e {
            Expr::Lit(Value::Bytes(_)) | Expr::Param(_) | Expr::UserVar(_) => conn(C::Coercible),
            Expr::SysVar(..) => conn(C::SysConst),
            Expr::Col(c) if *c >= self.width() && self.outer.is_some() => {
                self.outer?.outer_deriv(c - self.width())
            }
            Expr::Col(c) | Expr::InsertValue(c) => {
                let d = self.column_def(*c)?;
                // An ENUM or SET column's text has the column's collation (tables written
                // before it was kept: the default).
                let coll = d.string_collation().or_else(|| {
                    (d.ty.member_count() > 0).then(|| d.collation.unwrap_or(Collation::DEFAULT))
                })?;
                Some(Deriv::new(CollRef::Fixed(coll), C::Implicit))
            }
            Expr::Collate(_, c) => Some(Deriv::new(CollRef::Fixed(*c), C::Explicit)),
            Expr::Introduced(_, c) => Some(Deriv::new(CollRef::Fixed(*c), C::Coercible)),
            // A function run under its arguments' collation is typed as the call.
            Expr::Collated(_, inner) if matches!(**inner, Expr::Func(..)) => self.derive(inner),
            Expr::Collated(..) => None,
            Expr::Subq(s) if matches!(s.kind, super::ir::SubqKind::Scalar) => s.deriv,
            Expr::Cast(_, CastTo::Char) => conn(C::Implicit),
            Expr::Cast(_, CastTo::Binary) => {
                Some(Deriv::new(CollRef::Fixed(Collation::Binary), C::Implicit))
            }
            Expr::Agg(i) => {
                let a = self.aggs.as_ref()?.get(*i)?;
                match a.func {
                    AggFunc::Min | AggFunc::Max | AggFunc::GroupConcat => {
                        self.derive(a.arg.as_ref()?)
                    }
                    _ => None,
                }
            }
            Expr::Case(_, whens, el) => {
                let results = whens.iter().map(|(_, r)| r).chain(el.as_deref());
                results.filter_map(|r| self.derive(r)).reduce(aggregate)
            }
            // A BIT column's bytes: a binary string, as MariaDB's BIT (charset 63).
            Expr::Func(f, _) if *f == const { Func::named("BIT_TEXT") } => {
                Some(Deriv::new(CollRef::Fixed(Collation::Binary), C::Implicit))
            }
            // The session's and server's names are SYSCONST in MariaDB.
            Expr::Func(f, _) if SYSCONST_FUNCTIONS.contains(&f.def().name) => conn(C::SysConst),
            Expr::Func(_, args) => {
                let r = e.rtype(self.scope.table, self.aggs.as_deref().unwrap_or(&[]));
                let string = match r {
                    RType::Str(_) | RType::Dyn => true,
                    RType::Column(c) => self.column_def(c).is_some_and(|d| d.ty.is_string()),
                    _ => false,
                };
                if !string {
                    return None;
                }
                args.iter()
                    .filter_map(|a| self.derive(a))
                    .reduce(aggregate)
                    .or_else(|| conn(C::Coercible))
            }
            _ => None,
        }
    }

    /// `CHARSET(x)`, `COLLATION(x)`, `COERCIBILITY(x)` (`name`): a call on x's description
    /// (`functions::information`): a string's derivation ([`Self::derive`]; a SYSCONST
    /// one in the system character set, as MariaDB's), `binary` NUMERIC (5) for numbers and
    /// temporal values, IMPLICIT (2) for a BIT column, IGNORABLE (6) for NULL. A variable or
    /// placeholder is described at evaluation, from its value. Measured on MariaDB 10.11.
    fn collation_call(&mut self, f: &ast::Function, name: &str) -> Result<Expr, SqlError> {
        use Coercibility as C;
        let (args, star, _) = self.args(f)?;
        let func = match name {
            "CHARSET" => const { Func::named("CHARSET") },
            "COLLATION" => const { Func::named("COLLATION") },
            _ => const { Func::named("COERCIBILITY") },
        };
        let x = match <[Expr; 1]>::try_from(args) {
            Ok([x]) if !star => x,
            // CHARSET is a keyword of MariaDB's grammar: any other count is a syntax error
            // (near the second argument), the others' 1582 names the function as written.
            _ if name == "CHARSET" => {
                let text = f.to_string();
                let near = match text.split_once(',') {
                    Some((_, rest)) => rest.trim_start().to_string(),
                    None => ")".to_string(),
                };
                return Err(SqlError::syntax(&near));
            }
            _ => return Err(SqlError::param_count(&object_name_parts(&f.name).join("."))),
        };
        let at_evaluation = match &x {
            Expr::UserVar(_) => Some(C::Implicit),
            Expr::SysVar(..) => Some(C::SysConst),
            Expr::Param(_) => Some(C::Coercible),
            _ => None,
        };
        if let Some(co) = at_evaluation {
            return Ok(Expr::Func(
                func,
                vec![x, Expr::Lit(Value::Int(-(co as i64)))],
            ));
        }
        let name_of = |n: &str| Value::bytes(n.as_bytes());
        let (coll, co) = match self.derive(&x) {
            Some(d) if d.co == C::SysConst => (name_of(functions::SYSTEM_COLLATION), d.co),
            Some(Deriv {
                coll: CollRef::Connection,
                co,
            }) => (Value::Null, co),
            Some(Deriv {
                coll: CollRef::Fixed(c),
                co,
            }) => (name_of(c.name()), co),
            None => {
                let aggs = self.aggs.as_deref().unwrap_or(&[]);
                let co = match x.rtype(self.scope.table, aggs) {
                    RType::Null => 6,
                    _ => 5,
                };
                let co = Expr::Lit(Value::Int(co));
                return Ok(Expr::Func(func, vec![Expr::Lit(name_of("binary")), co]));
            }
        };
        Ok(Expr::Func(
            func,
            vec![Expr::Lit(coll), Expr::Lit(Value::Int(co as i64))],
        ))
    }

    /// Wraps a comparison node in the collation its string operands (`ds`) aggregate to;
    /// 1267/1270/1271 for an illegal mix.
    fn collated(&self, node: Expr, ds: &[Option<Deriv>], op: &str) -> Result<Expr, SqlError> {
        let is_cmp = !matches!(&node, Expr::Bin(o, ..) if comparison_name(*o).is_empty());
        // The first operand is compared with each other one: when it is not a string, no
        // comparison is of two strings (IN, BETWEEN, CASE over a number).
        if !is_cmp || ds.first().is_some_and(|d| d.is_none()) {
            return Ok(node);
        }
        Ok(match for_comparison(ds, op)? {
            Some(c) => Expr::Collated(c, Box::new(node)),
            None => node,
        })
    }

    /// The binary operator `op` on two compiled operands (a comparison under the collation
    /// their derivations give).
    pub(super) fn comparison(&self, op: BinOp, l: Expr, r: Expr) -> Result<Expr, SqlError> {
        let (l, r) = numeric_operands(op, l, r);
        let (l, r) = self.hybrid_operands(op, l, r);
        let name = comparison_name(op);
        let ds = [self.derive(&l), self.derive(&r)];
        let strings = !name.is_empty() && ds.iter().all(Option::is_some);
        let (l, r) = functions::json::string_comparands(l, r, strings);
        self.collated(Expr::Bin(op, Box::new(l), Box::new(r)), &ds, name)
    }

    /// The operands of `l op r` where a hybrid (`0x41`, `b'01'`) reads as its number: both of
    /// a logical operator; one compared with a number or a BIT column, as in MariaDB (two
    /// hybrids, or a hybrid and a string, compare as strings). Arithmetic and bit operators
    /// read every operand as a number already (`numeric_operands`).
    fn hybrid_operands(&self, op: BinOp, l: Expr, r: Expr) -> (Expr, Expr) {
        use BinOp::*;
        match op {
            And | Or | Xor => (hybrid::as_number(l), hybrid::as_number(r)),
            Eq | NullEq | Ne | Lt | Le | Gt | Ge
                if hybrid::is_hybrid(&l) && self.reads_as_number(&r)
                    || hybrid::is_hybrid(&r) && self.reads_as_number(&l) =>
            {
                (numeric_view(l), numeric_view(r))
            }
            _ => (l, r),
        }
    }

    /// True when `e`, compared with a hybrid, makes it read as its number: an expression of
    /// a numeric type or a BIT column; not a string, a temporal value or another hybrid.
    fn reads_as_number(&self, e: &Expr) -> bool {
        if matches!(e, Expr::Func(f, _) if *f == const { Func::named("BIT_TEXT") }) {
            return true;
        }
        if hybrid::is_hybrid(e) || self.derive(e).is_some() {
            return false;
        }
        match e.rtype(self.scope.table, self.aggs.as_deref().unwrap_or(&[])) {
            RType::Int
            | RType::UInt
            | RType::Decimal(..)
            | RType::Double
            | RType::DoubleDec(_)
            | RType::Year => true,
            RType::Column(c) => self
                .column_def(c)
                .is_some_and(|d| hybrid::stores_number(&d.ty)),
            _ => false,
        }
    }

    /// The arguments of the built-in `name` with its numeric arguments read as numbers
    /// (`numeric_view`: `ABS(0x41)` is 65, `LEFT(s, enum_col)` takes the ENUM's index, as
    /// MariaDB reads those arguments with `val_int` or `val_real`); GREATEST and LEAST
    /// compare theirs, so a hybrid reads as its number when every other argument is a number.
    fn numeric_arguments(&self, name: &str, args: Vec<Expr>) -> Vec<Expr> {
        if matches!(name, "GREATEST" | "LEAST") {
            if !args.iter().any(hybrid::is_hybrid) {
                return args;
            }
            let numbers = args
                .iter()
                .all(|a| hybrid::is_hybrid(a) || self.reads_as_number(a));
            if !numbers || args.iter().all(hybrid::is_hybrid) {
                return args;
            }
            return args.into_iter().map(hybrid::as_number).collect();
        }
        let Some(numeric) = hybrid::numeric_arguments(name) else {
            return args;
        };
        args.into_iter()
            .enumerate()
            .map(|(i, a)| {
                if numeric.contains(&i) {
                    numeric_view(a)
                } else {
                    a
                }
            })
            .collect()
    }

    /// `x IS [NOT] TRUE / FALSE`: `x` a truth value (a hybrid its number).
    fn is_bool(&mut self, x: &ast::Expr, truth: bool, negated: bool) -> Result<Expr, SqlError> {
        let x = hybrid::as_number(self.compile(x)?);
        Ok(Expr::IsBool(Box::new(x), truth, negated))
    }

    /// `a <=> b`.
    fn null_eq(&mut self, a: &ast::Expr, b: &ast::Expr) -> Result<Expr, SqlError> {
        let l = self.compile(a)?;
        let r = self.compile(b)?;
        let (l, r) = self.hybrid_operands(BinOp::NullEq, l, r);
        let ds = [self.derive(&l), self.derive(&r)];
        let (l, r) = functions::json::string_comparands(l, r, ds.iter().all(Option::is_some));
        self.collated(
            Expr::Bin(BinOp::NullEq, Box::new(l), Box::new(r)),
            &ds,
            "<=>",
        )
    }

    fn column(&self, parts: &[&str]) -> Result<Expr, SqlError> {
        let full = parts.join(".");
        let Some(t) = self.scope.table else {
            return Err(SqlError::unknown_column(&full, self.place));
        };
        if !self.scope.joined.is_empty() {
            let (db, qual, name) = match parts {
                [c] => (None, None, *c),
                [q, c] => (None, Some(*q), *c),
                [d, q, c] => (Some(*d), Some(*q), *c),
                _ => return Err(SqlError::unknown_column(&full, self.place)),
            };
            let mut found = None;
            let all = std::iter::once((t, self.scope.qualifier, 0usize))
                .chain(self.scope.joined.iter().copied());
            for (def, q, off) in all {
                if qual.is_some_and(|x| x != q) || db.is_some_and(|d| d != def.db) {
                    continue;
                }
                if let Some(i) = column_named(def, name) {
                    debug_assert!(i < def.columns.len());
                    // An unqualified name of a USING column reads the merged one.
                    let at = match qual {
                        None => self.merged_into(off + i),
                        Some(_) => off + i,
                    };
                    if found.is_some_and(|f| f != at) {
                        return Err(SqlError::ambiguous_column(&full, self.place));
                    }
                    found = Some(at);
                }
            }
            return found
                .map(|i| self.column_ref(Expr::Col(i), i))
                .ok_or_else(|| SqlError::unknown_column(&full, self.place));
        }
        let (qual, name) = match parts {
            [c] => (None, *c),
            [q, c] => (Some(*q), *c),
            [d, q, c] => {
                if *d != t.db {
                    return Err(SqlError::unknown_column(&full, self.place));
                }
                (Some(*q), *c)
            }
            _ => return Err(SqlError::unknown_column(&full, self.place)),
        };
        if let Some(q) = qual {
            if q != self.scope.qualifier {
                return Err(SqlError::unknown_column(&full, self.place));
            }
        }
        column_named(t, name)
            .inspect(|&i| debug_assert!(i < t.columns.len(), "column {i} of {}", t.columns.len()))
            .map(|i| self.column_ref(Expr::Col(i), i))
            .ok_or_else(|| SqlError::unknown_column(&full, self.place))
    }

    /// Compiles `e` as part of the clause MariaDB names `place` in 1054/1052 (a window's
    /// PARTITION BY is 'GROUP BY', the left operand of IN/ANY/ALL (SELECT ...) 'IN/ALL/ANY'),
    /// then goes back to the clause it was in.
    pub(crate) fn compile_in(
        &mut self,
        place: &'static str,
        e: &ast::Expr,
    ) -> Result<Expr, SqlError> {
        let saved = std::mem::replace(&mut self.place, place);
        let r = self.compile(e);
        self.place = saved;
        r
    }

    pub fn compile(&mut self, e: &ast::Expr) -> Result<Expr, SqlError> {
        use ast::Expr as A;
        Ok(match e {
            A::Identifier(i) => self.identifier(i)?,
            A::CompoundIdentifier(parts) => {
                let names: Vec<&str> = parts.iter().map(ident_name).collect();
                if let Some(first) = names.first() {
                    if let Some(scope) = first.strip_prefix("@@") {
                        return Ok(sys_var(&names[1..].join("."), Some(scope)));
                    }
                }
                self.lookup(&names)?
            }
            A::Value(v) => match &v.value {
                ast::Value::Placeholder(_) => {
                    let n = self.params;
                    self.params += 1;
                    Expr::Param(n)
                }
                // `0x41` and `b'01'` are hex hybrids; `X'41'` is a binary string
                // (`parse::hex_literals` tells `0x41` from `X'41'`).
                ast::Value::Number(n, _) if n.starts_with("0x") => {
                    hybrid::literal(&hex_decode(&n[2..])?)
                }
                ast::Value::SingleQuotedByteStringLiteral(b)
                | ast::Value::DoubleQuotedByteStringLiteral(b) => {
                    hybrid::literal(&hybrid::bit_bytes(b)?)
                }
                ast::Value::HexStringLiteral(_) => {
                    Expr::Introduced(Box::new(Expr::Lit(literal(&v.value)?)), Collation::Binary)
                }
                other => Expr::Lit(literal(other)?),
            },
            // _binary'..': a binary string (COERCIBLE).
            A::Prefixed { prefix, value }
                if prefix.value.eq_ignore_ascii_case("_binary")
                    && matches!(**value, A::Value(_)) =>
            {
                let v = hybrid::as_string(self.compile(value)?);
                Expr::Introduced(Box::new(v), Collation::Binary)
            }
            // _utf8mb4'..': onelog's strings are UTF-8 text already.
            A::Prefixed { prefix, value }
                if matches!(
                    prefix.value.to_ascii_lowercase().as_str(),
                    "_binary" | "_utf8mb4" | "_utf8" | "_utf8mb3"
                ) && matches!(**value, A::Value(_)) =>
            {
                hybrid::as_string(self.compile(value)?)
            }
            A::TypedString(ts) => typed_string(ts),
            A::Nested(inner) => self.compile(inner)?,
            A::UnaryOp { op, expr } => self.unary(op, expr)?,
            A::BinaryOp { left, op, right } => {
                if let Some(e) = self.interval_arith(left, op, right)? {
                    return Ok(e);
                }
                let op = bin_op(op)?;
                if let Some(e) = self.row_comparison(left, op, right)? {
                    return Ok(e);
                }
                let (l, r) = (self.compile(left)?, self.compile(right)?);
                self.comparison(op, l, r)?
            }
            A::IsNull(x) => Expr::IsNull(Box::new(self.compile(x)?), false),
            A::IsNotNull(x) => Expr::IsNull(Box::new(self.compile(x)?), true),
            A::IsTrue(x) => self.is_bool(x, true, false)?,
            A::IsNotTrue(x) => self.is_bool(x, true, true)?,
            A::IsFalse(x) => self.is_bool(x, false, false)?,
            A::IsNotFalse(x) => self.is_bool(x, false, true)?,
            A::IsNotDistinctFrom(a, b) => self.null_eq(a, b)?,
            A::IsDistinctFrom(a, b) => Expr::Not(Box::new(self.null_eq(a, b)?)),
            A::InList {
                expr,
                list,
                negated,
            } => self.in_list(expr, list, *negated)?,
            A::Between {
                expr,
                negated,
                low,
                high,
            } => self.between(expr, low, high, *negated)?,
            A::Like {
                negated,
                expr,
                pattern,
                escape_char,
                any: false,
            } => self.like(expr, pattern, escape_char.as_deref(), *negated)?,
            A::Case {
                operand,
                conditions,
                else_result,
                ..
            } => self.case(operand.as_deref(), conditions, else_result.as_deref())?,
            A::Substring { .. }
            | A::Trim { .. }
            | A::Ceil { .. }
            | A::Floor { .. }
            | A::Position { .. }
            | A::Cast { .. }
            | A::Convert { .. }
            | A::Collate { .. } => self.special_form(e)?,
            A::Function(f) => self.function(f)?,
            A::Tuple(_) => {
                return Err(SqlError::of(
                    errors::ER_OPERAND_COLUMNS,
                    "Operand should contain 1 column(s)",
                ))
            }
            A::Subquery(_)
            | A::InSubquery { .. }
            | A::Exists { .. }
            | A::AnyOp { .. }
            | A::AllOp { .. } => self.subquery(e)?,
            A::Extract { field, expr, .. } => self.extract(field, expr)?,
            A::RLike {
                negated,
                expr,
                pattern,
                ..
            } => {
                let x = self.compile(expr)?;
                let p = self.compile(pattern)?;
                let ds = [self.derive(&x), self.derive(&p)];
                let node = Expr::Func(const { Func::named("REGEXP_MATCH") }, vec![x, p]);
                let m = self.collated(node, &ds, "regexp")?;
                if *negated {
                    Expr::Not(Box::new(m))
                } else {
                    m
                }
            }
            A::Interval(_) => return Err(SqlError::unsupported("INTERVAL expressions")),
            other => {
                return Err(SqlError::unsupported(&format!(
                    "expression {}",
                    truncate_text(&other.to_string())
                )))
            }
        })
    }

    /// The SQL forms sqlparser parses as their own syntax (SUBSTRING(x FROM a FOR b),
    /// TRIM(LEADING y FROM x), CAST, CONVERT, ...): built-in function calls and casts.
    fn special_form(&mut self, e: &ast::Expr) -> Result<Expr, SqlError> {
        use ast::Expr as A;
        Ok(match e {
            A::Substring {
                expr,
                substring_from,
                substring_for,
                ..
            } => self.substring(expr, substring_from.as_deref(), substring_for.as_deref())?,
            A::Trim {
                trim_where,
                trim_what,
                expr,
                ..
            } => self.trim(expr, trim_where.as_ref(), trim_what.as_deref())?,
            A::Ceil { expr, .. } => Expr::Func(
                const { Func::named("CEIL") },
                vec![numeric_view(self.compile(expr)?)],
            ),
            A::Floor { expr, .. } => Expr::Func(
                const { Func::named("FLOOR") },
                vec![numeric_view(self.compile(expr)?)],
            ),
            A::Position { expr, r#in } => {
                let a = self.compile(expr)?;
                let b = self.compile(r#in)?;
                let ds = [self.derive(&a), self.derive(&b)];
                let node = Expr::Func(const { Func::named("LOCATE") }, vec![a, b]);
                self.collated(node, &ds, "locate")?
            }
            A::Cast {
                expr, data_type, ..
            } => {
                let x = self.compile(expr)?;
                cast_of(x, cast_target(data_type)?)
            }
            A::Convert {
                expr,
                data_type: Some(dt),
                ..
            } => {
                let x = self.compile(expr)?;
                cast_of(x, cast_target(dt)?)
            }
            // CONVERT(x USING cs): a binary string (`binary`) or text (IMPLICIT, as a cast);
            // 1235 for a character set onelog does not store.
            A::Convert {
                expr,
                data_type: None,
                charset,
                ..
            } => {
                let x = self.compile(expr)?;
                match charset {
                    Some(cs) => {
                        let c = super::collate::charset_named(&object_name_parts(cs).join("."))?;
                        let to = if c == Collation::Binary {
                            CastTo::Binary
                        } else {
                            CastTo::Char
                        };
                        cast_of(x, to)
                    }
                    None => x,
                }
            }
            A::Collate { expr, collation } => {
                let x = self.compile(expr)?;
                let name = object_name_parts(collation).join(".");
                let c = collation_named(&name)?;
                if let Some(d) = self.derive(&x) {
                    let have = d.coll.resolve(Collation::DEFAULT);
                    if have.charset() != c.charset() {
                        return Err(check_charset(c, have).unwrap_err());
                    }
                }
                Expr::Collate(Box::new(x), c)
            }
            other => {
                return Err(SqlError::unsupported(&format!(
                    "expression {}",
                    truncate_text(&other.to_string())
                )))
            }
        })
    }

    fn in_list(
        &mut self,
        expr: &ast::Expr,
        list: &[ast::Expr],
        negated: bool,
    ) -> Result<Expr, SqlError> {
        if let Some(x) = self.row_in_list(expr, list, negated)? {
            return Ok(x);
        }
        let x = self.compile(expr)?;
        let mut items = Vec::with_capacity(list.len());
        for i in list {
            items.push(self.compile(i)?);
        }
        // `int_col IN (0x41)`: a hybrid compared with a number reads as its number.
        if items.iter().any(hybrid::is_hybrid) && self.reads_as_number(&x) {
            items = items.into_iter().map(hybrid::as_number).collect();
        }
        // `e IN (1, 2)`: an ENUM or SET compared with numbers reads as its number.
        let x = if items.iter().all(is_number)
            || hybrid::is_hybrid(&x) && items.iter().all(|i| self.reads_as_number(i))
        {
            numeric_view(x)
        } else {
            x
        };
        let mut ds = vec![self.derive(&x)];
        ds.extend(items.iter().map(|i| self.derive(i)));
        let name = if items.len() == 1 { "=" } else { "in" };
        // `x IN (y)` is `x = y` in MariaDB, also for a JSON_EXTRACT operand.
        let (x, items) = match <[Expr; 1]>::try_from(items) {
            Ok([y]) => {
                let strings = ds.iter().all(Option::is_some);
                let (x, y) = functions::json::string_comparands(x, y, strings);
                (x, vec![y])
            }
            Err(items) => (x, items),
        };
        self.collated(Expr::In(Box::new(x), items, negated), &ds, name)
    }

    fn between(
        &mut self,
        expr: &ast::Expr,
        low: &ast::Expr,
        high: &ast::Expr,
        negated: bool,
    ) -> Result<Expr, SqlError> {
        let x = self.compile(expr)?;
        let (mut lo, mut hi) = (self.compile(low)?, self.compile(high)?);
        // `5 BETWEEN 0x01 AND 0x10`: hybrids compared with a number read as their numbers.
        if (hybrid::is_hybrid(&lo) || hybrid::is_hybrid(&hi)) && self.reads_as_number(&x) {
            (lo, hi) = (hybrid::as_number(lo), hybrid::as_number(hi));
        }
        // `e BETWEEN 1 AND 2`: an ENUM, SET or BIT between numbers reads as its number.
        let x = if is_number(&lo) && is_number(&hi)
            || hybrid::is_hybrid(&x) && self.reads_as_number(&lo) && self.reads_as_number(&hi)
        {
            numeric_view(x)
        } else {
            x
        };
        let ds = [self.derive(&x), self.derive(&lo), self.derive(&hi)];
        self.collated(
            Expr::Between(Box::new(x), Box::new(lo), Box::new(hi), negated),
            &ds,
            "between",
        )
    }

    fn identifier(&mut self, i: &ast::Ident) -> Result<Expr, SqlError> {
        let n = ident_name(i);
        if i.quote_style.is_none() {
            if let Some(v) = n.strip_prefix("@@") {
                return Ok(sys_var(v, None));
            }
            if let Some(v) = n.strip_prefix('@') {
                return Ok(Expr::UserVar(v.trim_matches('`').to_ascii_lowercase()));
            }
        }
        if i.quote_style == Some('"') {
            // ANSI_QUOTES is off: "x" is a string.
            return Ok(Expr::Lit(Value::bytes(n.as_bytes())));
        }
        Ok(match self.lookup(&[n]) {
            Ok(c) => c,
            Err(e) => {
                let l = n.to_ascii_lowercase();
                let mut hits = self.aliases.iter().filter(|(a, _)| *a == l);
                match (hits.next(), hits.next()) {
                    (Some((_, x)), None) => x.clone(),
                    // Two select items of different values carry the alias (MariaDB: 1052).
                    (Some(_), Some(_)) => return Err(SqlError::ambiguous_column(n, self.place)),
                    (None, _) => return Err(e),
                }
            }
        })
    }

    fn unary(&mut self, op: &ast::UnaryOperator, expr: &ast::Expr) -> Result<Expr, SqlError> {
        let x = self.compile(expr)?;
        let x = match op {
            ast::UnaryOperator::Minus | ast::UnaryOperator::BitwiseNot => numeric_view(x),
            ast::UnaryOperator::Not | ast::UnaryOperator::BangNot => hybrid::as_number(x),
            _ => x,
        };
        Ok(match op {
            ast::UnaryOperator::Minus => match x {
                Expr::Lit(v) => match negate_literal(v) {
                    Ok(n) => Expr::Lit(n),
                    Err(v) => Expr::Neg(Box::new(Expr::Lit(v))),
                },
                x => Expr::Neg(Box::new(x)),
            },
            ast::UnaryOperator::Plus => x,
            ast::UnaryOperator::Not | ast::UnaryOperator::BangNot => Expr::Not(Box::new(x)),
            ast::UnaryOperator::BitwiseNot => Expr::BitNot(Box::new(x)),
            other => return Err(SqlError::unsupported(&format!("operator {other}"))),
        })
    }

    fn like(
        &mut self,
        expr: &ast::Expr,
        pattern: &ast::Expr,
        escape_char: Option<&ast::Expr>,
        negated: bool,
    ) -> Result<Expr, SqlError> {
        let x = self.compile(expr)?;
        let p = self.compile(pattern)?;
        let esc = match escape_char {
            None => Some(b'\\'),
            Some(ast::Expr::Value(v)) => match &v.value {
                ast::Value::SingleQuotedString(s) => s.bytes().next(),
                _ => return Err(SqlError::wrong_arguments("ESCAPE")),
            },
            Some(_) => return Err(SqlError::wrong_arguments("ESCAPE")),
        };
        let ds = [self.derive(&x), self.derive(&p)];
        self.collated(
            Expr::Like(Box::new(x), Box::new(p), esc, negated),
            &ds,
            "like",
        )
    }

    fn case(
        &mut self,
        operand: Option<&ast::Expr>,
        conditions: &[ast::CaseWhen],
        else_result: Option<&ast::Expr>,
    ) -> Result<Expr, SqlError> {
        let op = match operand {
            Some(o) => Some(Box::new(self.compile(o)?)),
            None => None,
        };
        let mut whens = Vec::with_capacity(conditions.len());
        for w in conditions {
            let c = self.compile(&w.condition)?;
            let r = self.compile(&w.result)?;
            whens.push((c, r));
        }
        // The WHEN values read as numbers: a searched CASE's conditions (truth values), or
        // hybrids compared with a numeric operand (`CASE int_col WHEN 0x41 ...`).
        let numeric_whens = match &op {
            None => true,
            Some(o) => whens.iter().any(|(c, _)| hybrid::is_hybrid(c)) && self.reads_as_number(o),
        };
        if numeric_whens {
            whens = whens
                .into_iter()
                .map(|(c, r)| (hybrid::as_number(c), r))
                .collect();
        }
        // `CASE 0x41 WHEN 65 ...`: a hybrid operand compared with numbers reads as its number.
        let op = match op {
            Some(o)
                if hybrid::is_hybrid(&o) && whens.iter().all(|(c, _)| self.reads_as_number(c)) =>
            {
                Some(Box::new(numeric_view(*o)))
            }
            other => other,
        };
        let el = match else_result {
            Some(e) => Some(Box::new(self.compile(e)?)),
            None => None,
        };
        let Some(o) = &op else {
            return Ok(Expr::Case(op, whens, el));
        };
        let mut ds = vec![self.derive(o)];
        ds.extend(whens.iter().map(|(c, _)| self.derive(c)));
        self.collated(Expr::Case(op, whens, el), &ds, "case")
    }

    fn substring(
        &mut self,
        expr: &ast::Expr,
        from: Option<&ast::Expr>,
        len: Option<&ast::Expr>,
    ) -> Result<Expr, SqlError> {
        let mut args = vec![self.compile(expr)?];
        if let Some(f) = from {
            args.push(self.compile(f)?);
        } else {
            args.push(Expr::Lit(Value::Int(1)));
        }
        if let Some(f) = len {
            args.push(self.compile(f)?);
        }
        let args = self.numeric_arguments("SUBSTRING", args);
        Ok(self.call(const { Func::named("SUBSTRING") }, args))
    }

    fn trim(
        &mut self,
        expr: &ast::Expr,
        trim_where: Option<&ast::TrimWhereField>,
        trim_what: Option<&ast::Expr>,
    ) -> Result<Expr, SqlError> {
        let x = self.compile(expr)?;
        let what = match trim_what {
            Some(w) => self.compile(w)?,
            None => Expr::Lit(Value::bytes(b" ")),
        };
        let f = match trim_where {
            Some(ast::TrimWhereField::Leading) => const { Func::named("TRIM_LEADING") },
            Some(ast::TrimWhereField::Trailing) => const { Func::named("TRIM_TRAILING") },
            _ => const { Func::named("TRIM_BOTH") },
        };
        Ok(self.call(f, vec![x, what]))
    }

    pub(super) fn args(&mut self, f: &ast::Function) -> Result<(Vec<Expr>, bool, bool), SqlError> {
        // (args, star, distinct)
        match &f.args {
            ast::FunctionArguments::None => Ok((Vec::new(), false, false)),
            ast::FunctionArguments::Subquery(_) => Err(SqlError::unsupported("subqueries")),
            ast::FunctionArguments::List(l) => {
                let distinct = matches!(
                    l.duplicate_treatment,
                    Some(ast::DuplicateTreatment::Distinct)
                );
                let mut out = Vec::with_capacity(l.args.len());
                let mut star = false;
                for a in &l.args {
                    match a {
                        ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => {
                            out.push(self.compile(e)?)
                        }
                        ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Wildcard) => star = true,
                        _ => return Err(SqlError::unsupported("named function arguments")),
                    }
                }
                Ok((out, star, distinct))
            }
        }
    }

    fn function(&mut self, f: &ast::Function) -> Result<Expr, SqlError> {
        let parts = object_name_parts(&f.name);
        let name = parts.join(".").to_ascii_uppercase();
        if let Some(over) = &f.over {
            return self.window_call(f, &name, over);
        }
        if let Some(func) = aggregate::lookup(&name) {
            return self.aggregate(f, func, &name);
        }
        if let Some(e) = self.interval_call(f)? {
            return Ok(e);
        }
        if name == "VALUES" || name == "VALUE" {
            if !self.insert_values {
                return Ok(Expr::Lit(Value::Null));
            }
            let (args, _, _) = self.args(f)?;
            let args: Vec<Expr> = args.into_iter().map(numeric_view).collect();
            return match args.as_slice() {
                [Expr::Col(c)] => Ok(self.column_ref(Expr::InsertValue(*c), *c)),
                _ => Err(SqlError::wrong_arguments("VALUES")),
            };
        }
        if matches!(name.as_str(), "CHARSET" | "COLLATION" | "COERCIBILITY") {
            return self.collation_call(f, &name);
        }
        let (args, star, _) = self.args(f)?;
        if star {
            return Err(SqlError::syntax(&f.to_string()));
        }
        let func = functions::lookup(&name).ok_or_else(|| SqlError::unknown_function(&name))?;
        // HEX of a BIT column is the hex of its number (`5` for b'101'), as in MariaDB.
        let args: Vec<Expr> = if name == "HEX" {
            args.into_iter()
                .map(|a| match a {
                    Expr::Func(g, _) if g == const { Func::named("BIT_TEXT") } => numeric_view(a),
                    other => other,
                })
                .collect()
        } else {
            args
        };
        let def = func.def();
        if args.len() < def.min_args
            || args.len() > def.max_args
            || !functions::json::count_ok(func, args.len())
        {
            return Err(SqlError::param_count(&name));
        }
        let mut args = self.numeric_arguments(def.name, args);
        if functions::json::takes_values(func) {
            let hints = self.json_value_hints(f, &args);
            args.push(functions::json::value_kinds(&args, &hints));
        }
        if def.collated {
            // Compared as a comparison's operands are: under the collation they derive to.
            let ds: Vec<_> = args.iter().map(|a| self.derive(a)).collect();
            return self.collated(Expr::Func(func, args), &ds, &name.to_ascii_lowercase());
        }
        Ok(self.call(func, args))
    }

    /// A call of `func`: a character function (`functions::counts_characters`) runs under
    /// its string arguments' collation when they have a fixed one (bytes for a binary column
    /// under any connection, a text column's characters under `SET NAMES binary`); a
    /// literal's is the connection's, read at evaluation.
    fn call(&self, func: Func, args: Vec<Expr>) -> Expr {
        if functions::counts_characters(func.def().name) {
            let d = args.iter().filter_map(|a| self.derive(a)).reduce(aggregate);
            if let Some(Deriv {
                coll: c @ CollRef::Fixed(_),
                ..
            }) = d
            {
                return Expr::Collated(c, Box::new(Expr::Func(func, args)));
            }
        }
        Expr::Func(func, args)
    }

    /// What the JSON functions that take values must know of each argument that the
    /// compiled tree does not say: a TRUE/FALSE literal (`KIND_BOOL`) and a JSON column
    /// (`KIND_COLUMN`).
    fn json_value_hints(&self, f: &ast::Function, args: &[Expr]) -> Vec<u8> {
        let ast_args: &[ast::FunctionArg] = match &f.args {
            ast::FunctionArguments::List(l) => &l.args,
            _ => &[],
        };
        args.iter()
            .enumerate()
            .map(|(i, a)| {
                if let Expr::Col(c) = a {
                    if self
                        .column_def(*c)
                        .is_some_and(|d| d.ty == onelog_engine::SqlType::Json)
                    {
                        return functions::json::KIND_COLUMN;
                    }
                }
                let Some(ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(first))) =
                    ast_args.get(i)
                else {
                    return 0;
                };
                let mut e = first;
                while let ast::Expr::Nested(inner) = e {
                    e = inner;
                }
                match e {
                    ast::Expr::Value(v) if matches!(v.value, ast::Value::Boolean(_)) => {
                        functions::json::KIND_BOOL
                    }
                    _ => 0,
                }
            })
            .collect()
    }

    /// An aggregate call: its argument goes to a new [`AggSpec`] slot.
    fn aggregate(
        &mut self,
        f: &ast::Function,
        mut func: AggFunc,
        name: &str,
    ) -> Result<Expr, SqlError> {
        if self.aggs.is_none() {
            return Err(SqlError::invalid_group_use());
        }
        // Aggregate arguments may not nest aggregates.
        let saved = self.aggs.take();
        let before = saved.as_ref().map(Vec::len);
        let r = self.args(f);
        self.aggs = saved;
        debug_assert_eq!(
            self.aggs.as_ref().map(Vec::len),
            before,
            "an aggregate's argument holds an aggregate"
        );
        let (mut args, star, distinct) = r?;
        let counts_distinct = matches!(
            func,
            AggFunc::Count
                | AggFunc::Sum
                | AggFunc::Avg
                | AggFunc::Min
                | AggFunc::Max
                | AggFunc::GroupConcat
                | AggFunc::JsonArrayAgg
        );
        if distinct && !counts_distinct {
            // MariaDB's grammar has no DISTINCT for the bit and statistics aggregates.
            return Err(SqlError::syntax(&f.to_string()));
        }
        let (mut order_by, mut separator) = self.concat_clauses(f, func, &args)?;
        if matches!(func, AggFunc::JsonArrayAgg | AggFunc::JsonObjectAgg) && !star {
            (args, separator) = self.json_aggregate(f, func, args, distinct, &mut order_by)?;
        }
        if star {
            if func != AggFunc::Count || !args.is_empty() {
                return Err(SqlError::syntax(&f.to_string()));
            }
            func = AggFunc::CountStar;
        } else if args.len() != 1 {
            if func == AggFunc::GroupConcat && !args.is_empty() {
                args = vec![Expr::Func(const { Func::named("CONCAT") }, args)];
            } else {
                return Err(SqlError::param_count(name));
            }
        }
        // The numeric aggregates read an ENUM or SET as its number (MIN/MAX/COUNT/
        // GROUP_CONCAT as its text), as MariaDB does.
        let numeric = !matches!(
            func,
            AggFunc::Min
                | AggFunc::Max
                | AggFunc::Count
                | AggFunc::CountStar
                | AggFunc::GroupConcat
                | AggFunc::JsonArrayAgg
                | AggFunc::JsonObjectAgg
        );
        let arg = args
            .pop()
            .map(|a| if numeric { numeric_view(a) } else { a });
        if let (AggFunc::Min | AggFunc::Max, Some(a)) = (func, &arg) {
            // MIN/MAX compare their values: a failed collation mix (NONE) is MariaDB's 1267,
            // with the operation named `min(` / `max(`.
            let d = self.derive(a);
            let op = if func == AggFunc::Min { "min(" } else { "max(" };
            for_comparison(&[d, d], op)?;
        }
        let aggs = self.aggs.as_mut().ok_or_else(SqlError::invalid_group_use)?;
        aggs.push(AggSpec {
            func,
            distinct,
            arg,
            order_by,
            separator,
        });
        Ok(Expr::Agg(aggs.len() - 1))
    }

    /// JSON_ARRAYAGG's (one value) or JSON_OBJECTAGG's (key, value) arguments as the one
    /// argument the aggregate collects (their JSON text, `functions::json::aggregate_value`)
    /// and its separator; DISTINCT without ORDER BY lists the values in their order, as
    /// MariaDB's tree of distinct values does.
    fn json_aggregate(
        &self,
        f: &ast::Function,
        func: AggFunc,
        args: Vec<Expr>,
        distinct: bool,
        order_by: &mut Vec<(Expr, bool)>,
    ) -> Result<(Vec<Expr>, Vec<u8>), SqlError> {
        let pair = func == AggFunc::JsonObjectAgg;
        match args.len() {
            2 if pair => {}
            1 if !pair => {}
            // MariaDB's grammar takes JSON_OBJECTAGG's two arguments only.
            _ if pair => return Err(SqlError::syntax(&f.to_string())),
            _ => return Err(SqlError::param_count("JSON_ARRAYAGG")),
        }
        if distinct && order_by.is_empty() {
            order_by.push((args[0].clone(), false));
        }
        let hints = self.json_value_hints(f, &args);
        let arg = functions::json::aggregate_value(args, &hints, pair);
        let separator = if pair { b", ".to_vec() } else { b",".to_vec() };
        Ok((vec![arg], separator))
    }

    /// GROUP_CONCAT's `ORDER BY` (a number is an argument's position, as MariaDB) and
    /// `SEPARATOR`; any clause on another aggregate, or LIMIT, is refused.
    #[allow(clippy::type_complexity)]
    fn concat_clauses(
        &mut self,
        f: &ast::Function,
        func: AggFunc,
        args: &[Expr],
    ) -> Result<(Vec<(Expr, bool)>, Vec<u8>), SqlError> {
        let (mut order_by, mut separator) = (Vec::new(), b",".to_vec());
        let ast::FunctionArguments::List(l) = &f.args else {
            return Ok((order_by, separator));
        };
        for c in &l.clauses {
            match c {
                ast::FunctionArgumentClause::OrderBy(items)
                    if matches!(func, AggFunc::GroupConcat | AggFunc::JsonArrayAgg) =>
                {
                    // ORDER BY keys are not aggregates either.
                    let saved = self.aggs.take();
                    for o in items {
                        let desc = matches!(o.options.sort, Some(ast::OrderBySort::Desc));
                        let pos = match &o.expr {
                            ast::Expr::Value(v) => v.value.to_string().parse::<usize>().ok(),
                            _ => None,
                        };
                        let x = match pos {
                            Some(n) if n >= 1 && n <= args.len() => Ok(args[n - 1].clone()),
                            Some(_) => Err(SqlError::of(
                                onelog_protocol::errors::ER_BAD_FIELD_ERROR,
                                format!("Unknown column '{}' in 'ORDER BY'", o.expr),
                            )),
                            None => self.compile(&o.expr),
                        };
                        match x {
                            Ok(x) => order_by.push((x, desc)),
                            Err(e) => {
                                self.aggs = saved;
                                return Err(e);
                            }
                        }
                    }
                    self.aggs = saved;
                }
                ast::FunctionArgumentClause::Separator(v) if func == AggFunc::GroupConcat => {
                    separator = match &v.value {
                        ast::Value::SingleQuotedString(s) | ast::Value::DoubleQuotedString(s) => {
                            s.clone().into_bytes()
                        }
                        other => return Err(SqlError::syntax(&other.to_string())),
                    };
                }
                other => return Err(SqlError::unsupported(&format!("{other} in {}", f.name))),
            }
        }
        Ok((order_by, separator))
    }
}

/// The position of the column `name` names in `t`: its column of that name or, for `_rowid`
/// (any case) when it has none, its primary key when that is one integer column, as MariaDB
/// (a table without PRIMARY KEY has its first UNIQUE key over NOT NULL columns as primary
/// key here, as in MariaDB).
fn column_named(t: &onelog_engine::TableDef, name: &str) -> Option<usize> {
    t.column_index(name)
        .or_else(|| match t.primary_key.as_slice() {
            [c] if name.eq_ignore_ascii_case("_rowid")
                && t.columns.get(*c).is_some_and(|d| d.ty.is_integer()) =>
            {
                Some(*c)
            }
            _ => None,
        })
}

/// `DATE '...'`, `TIME '...'`, `TIMESTAMP '...'`: a CAST of the string.
fn typed_string(ts: &ast::TypedString) -> Expr {
    let s = match &ts.value.value {
        ast::Value::SingleQuotedString(s) | ast::Value::DoubleQuotedString(s) => s.clone(),
        other => other.to_string(),
    };
    let to = match ts.data_type {
        ast::DataType::Date => CastTo::Date,
        ast::DataType::Time(..) => CastTo::Time,
        _ => CastTo::DateTime,
    };
    Expr::Cast(Box::new(Expr::Lit(Value::bytes(s.into_bytes()))), to)
}

/// `CAST(x AS to)`: an ENUM or SET cast to a number is its index / bit set, as in MariaDB.
fn cast_of(x: Expr, to: CastTo) -> Expr {
    let x = match to {
        CastTo::Signed | CastTo::Unsigned | CastTo::Decimal(..) | CastTo::Double => numeric_view(x),
        _ => x,
    };
    Expr::Cast(Box::new(x), to)
}

/// `e` where MariaDB reads an ENUM or SET column as its number (arithmetic, a comparison
/// with a number, SUM/AVG..., ORDER BY): the stored index / bit set rather than the text
/// that reading the column gives (`column_ref`).
pub(crate) fn numeric_view(e: Expr) -> Expr {
    match e {
        Expr::Func(f, mut args)
            if args.len() == 2
                && (f == const { Func::named("SET_TEXT") }
                    || f == const { Func::named("ENUM_TEXT") }
                    || f == const { Func::named("BIT_TEXT") }) =>
        {
            args.swap_remove(0)
        }
        other => hybrid::as_number(other),
    }
}

/// A number literal (MariaDB compares an ENUM or SET with one by its number).
fn is_number(e: &Expr) -> bool {
    match e {
        Expr::Lit(v) => matches!(
            v,
            Value::Int(_) | Value::UInt(_) | Value::Double(_) | Value::Decimal(_)
        ),
        Expr::Neg(x) => matches!(**x, Expr::Lit(_)),
        _ => false,
    }
}

/// The operands of `l op r` where ENUM/SET columns read as numbers: both for arithmetic,
/// one compared with a number literal.
fn numeric_operands(op: BinOp, l: Expr, r: Expr) -> (Expr, Expr) {
    use BinOp::*;
    let number = is_number;
    match op {
        Add | Sub | Mul | Div | IntDiv | Mod | BitAnd | BitOr | BitXor | Shl | Shr => {
            (numeric_view(l), numeric_view(r))
        }
        Eq | NullEq | Ne | Lt | Le | Gt | Ge if number(&r) => (numeric_view(l), r),
        Eq | NullEq | Ne | Lt | Le | Gt | Ge if number(&l) => (l, numeric_view(r)),
        _ => (l, r),
    }
}

/// The IR operator of a sqlparser binary operator.
pub(super) fn bin_op(op: &ast::BinaryOperator) -> Result<BinOp, SqlError> {
    use ast::BinaryOperator as B;
    Ok(match op {
        B::Plus => BinOp::Add,
        B::Minus => BinOp::Sub,
        B::Multiply => BinOp::Mul,
        B::Divide => BinOp::Div,
        B::MyIntegerDivide | B::DuckIntegerDivide => BinOp::IntDiv,
        B::Modulo => BinOp::Mod,
        B::Eq => BinOp::Eq,
        B::Spaceship => BinOp::NullEq,
        B::NotEq => BinOp::Ne,
        B::Lt => BinOp::Lt,
        B::LtEq => BinOp::Le,
        B::Gt => BinOp::Gt,
        B::GtEq => BinOp::Ge,
        B::And => BinOp::And,
        B::Or => BinOp::Or,
        B::Xor => BinOp::Xor,
        B::BitwiseAnd => BinOp::BitAnd,
        B::BitwiseOr => BinOp::BitOr,
        B::BitwiseXor | B::PGBitwiseXor => BinOp::BitXor,
        B::PGBitwiseShiftLeft => BinOp::Shl,
        B::PGBitwiseShiftRight => BinOp::Shr,
        B::StringConcat => BinOp::Or,
        other => return Err(SqlError::unsupported(&format!("operator {other}"))),
    })
}

pub(super) fn truncate_text(s: &str) -> String {
    s.chars().take(60).collect()
}

pub(super) fn sys_var(name: &str, scope: Option<&str>) -> Expr {
    let (scope, name) = match scope {
        Some(s) if s.eq_ignore_ascii_case("global") => (VarScope::Global, name),
        Some(s) if s.eq_ignore_ascii_case("session") || s.eq_ignore_ascii_case("local") => {
            (VarScope::Session, name)
        }
        Some(s) => (VarScope::Default, if name.is_empty() { s } else { name }),
        None => {
            let lower = name.to_ascii_lowercase();
            if let Some(n) = lower.strip_prefix("global.") {
                return Expr::SysVar(n.to_string(), VarScope::Global);
            }
            if let Some(n) = lower
                .strip_prefix("session.")
                .or_else(|| lower.strip_prefix("local."))
            {
                return Expr::SysVar(n.to_string(), VarScope::Session);
            }
            (VarScope::Default, name)
        }
    };
    Expr::SysVar(name.trim_matches('`').to_ascii_lowercase(), scope)
}

/// How MariaDB names a comparison operator in 1267; empty for other operators.
pub(super) fn comparison_name(op: BinOp) -> &'static str {
    match op {
        BinOp::Eq => "=",
        BinOp::NullEq => "<=>",
        BinOp::Ne => "<>",
        BinOp::Lt => "<",
        BinOp::Le => "<=",
        BinOp::Gt => ">",
        BinOp::Ge => ">=",
        _ => "",
    }
}

pub(super) fn cast_target(dt: &ast::DataType) -> Result<CastTo, SqlError> {
    use ast::DataType as D;
    let s = dt.to_string().to_ascii_uppercase();
    Ok(match dt {
        D::Date => CastTo::Date,
        D::Datetime(_) | D::Timestamp(..) => CastTo::DateTime,
        D::Time(..) => CastTo::Time,
        D::Char(_) | D::Varchar(_) | D::Text | D::String(_) | D::Nvarchar(_) => CastTo::Char,
        D::Binary(_) | D::Varbinary(_) | D::Blob(_) => CastTo::Binary,
        D::Double(_) | D::DoublePrecision | D::Float(_) | D::Real => CastTo::Double,
        D::Decimal(info) | D::Numeric(info) => {
            let (p, s) = match info {
                ast::ExactNumberInfo::None => (10, 0),
                ast::ExactNumberInfo::Precision(p) => (*p, 0),
                ast::ExactNumberInfo::PrecisionAndScale(p, s) => (*p, *s as u64),
            };
            check_decimal_size(p, s, "")?;
            CastTo::Decimal((p as u8).max(1), s as u8)
        }
        _ if s.starts_with("UNSIGNED") => CastTo::Unsigned,
        _ if s.starts_with("SIGNED") || s.starts_with("INT") || s.starts_with("BIGINT") => {
            CastTo::Signed
        }
        _ => return Err(SqlError::unsupported(&format!("CAST to {s}"))),
    })
}

/// MariaDB's checks of DECIMAL(M,D) (a column's, or CAST's with `column` empty): 1426 for
/// M > 65, 1425 for D > 38, 1427 for M < D.
pub(crate) fn check_decimal_size(p: u64, s: u64, column: &str) -> Result<(), SqlError> {
    if s > 38 {
        return Err(SqlError::of(
            errors::ER_TOO_BIG_SCALE,
            format!("Too big scale specified for '{column}'. Maximum is 38"),
        ));
    }
    if p > 65 {
        return Err(SqlError::of(
            errors::ER_TOO_BIG_PRECISION,
            format!("Too big precision specified for '{column}'. Maximum is 65"),
        ));
    }
    if p < s {
        return Err(SqlError::of(
            errors::ER_M_BIGGER_THAN_D,
            format!(
                "For float(M,D), double(M,D) or decimal(M,D), M must be >= D (column '{column}')"
            ),
        ));
    }
    Ok(())
}

/// A literal value.
pub(crate) fn literal(v: &ast::Value) -> Result<Value, SqlError> {
    use ast::Value as V;
    Ok(match v {
        V::Number(s, _) => number_literal(s)?,
        V::SingleQuotedString(s)
        | V::DoubleQuotedString(s)
        | V::NationalStringLiteral(s)
        | V::TripleSingleQuotedString(s)
        | V::TripleDoubleQuotedString(s)
        | V::EscapedStringLiteral(s) => Value::bytes(s.as_bytes()),
        V::HexStringLiteral(h) => Value::bytes(hex_decode(h)?),
        V::Boolean(b) => Value::Int(*b as i64),
        V::Null => Value::Null,
        V::SingleQuotedByteStringLiteral(s) | V::DoubleQuotedByteStringLiteral(s) => {
            // b'0101'
            let mut n: u64 = 0;
            for c in s.bytes() {
                n = (n << 1) | u64::from(c == b'1');
            }
            Value::UInt(n)
        }
        other => return Err(SqlError::unsupported(&format!("literal {other}"))),
    })
}

pub(super) fn hex_decode(h: &str) -> Result<Vec<u8>, SqlError> {
    let digits: Vec<u8> = h.bytes().collect();
    let padded: Vec<u8> = if digits.len() % 2 == 1 {
        std::iter::once(b'0')
            .chain(digits.iter().copied())
            .collect()
    } else {
        digits
    };
    let val = |c: u8| -> Result<u8, SqlError> {
        (c as char)
            .to_digit(16)
            .map(|d| d as u8)
            .ok_or_else(|| SqlError::syntax(h))
    };
    padded
        .chunks(2)
        .map(|p| Ok(val(p[0])? << 4 | val(p[1])?))
        .collect()
}

/// `-v` folded into one literal, as the compiler folds a minus before a number literal; `Err`
/// gives `v` back where it is not folded (evaluated as a negation instead). Shared with the
/// bulk INSERT fast path (`crate::parse::fast_insert`), which must fold exactly the same way.
pub(crate) fn negate_literal(v: Value) -> Result<Value, Value> {
    Ok(match v {
        // -(-9223372036854775808) is 9223372036854775808, not a wrap.
        Value::Int(i) if i != i64::MIN => Value::Int(-i),
        Value::UInt(u) if u == 1u64 << 63 => Value::Int(i64::MIN),
        // Past -2^63 a negated literal is a DECIMAL, as in MariaDB.
        Value::UInt(u) if u > 1u64 << 63 => Value::Decimal(format!("-{u}")),
        Value::Decimal(d) if !d.starts_with('-') => Value::Decimal(format!("-{d}")),
        v => return Err(v),
    })
}

/// The value of a number literal's text (sqlparser's `Value::Number`).
pub(crate) fn number_literal(s: &str) -> Result<Value, SqlError> {
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        return Ok(Value::bytes(hex_decode(h)?));
    }
    if s.bytes().all(|b| b.is_ascii_digit()) {
        if let Ok(i) = s.parse::<i64>() {
            return Ok(Value::Int(i));
        }
        if let Ok(u) = s.parse::<u64>() {
            return Ok(Value::UInt(u));
        }
        return Ok(Value::Decimal(s.to_string()));
    }
    if s.contains(['e', 'E']) {
        return s
            .parse::<f64>()
            .map(Value::Double)
            .map_err(|_| SqlError::syntax(s));
    }
    match Dec::parse(s) {
        Some(d) => Ok(Value::Decimal(d.to_string())),
        None => Err(SqlError::syntax(s)),
    }
}
