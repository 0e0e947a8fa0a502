//! Expressions: the compiled form ([`Expr`]) of sqlparser expressions, their evaluation with
//! MySQL semantics (three-valued logic, numeric promotion, string/number comparison), the
//! built-in functions, aggregates' slots, result type inference ([`RType`]) and the value
//! conversions shared by INSERT/UPDATE (string -> number, text -> date, ...).
//!
//! Invariants: a compiled [`Expr`] refers to columns by position in the row it is evaluated
//! on and to `?` placeholders by their order of appearance in the statement text (compile in
//! textual order); evaluation never panics on any input; session-dependent values (`NOW()`,
//! `@@var`, `DATABASE()`) are read at evaluation time, so a cached compiled statement stays
//! valid across executions. Numeric results follow MariaDB's overflow rules (1690 with the
//! expression written from its operand values; DECIMAL up to [`DEC_MAX_DIGITS`] digits);
//! conditions raised during evaluation (CAST truncation, division by zero, strings that are
//! not numbers) go to a per-thread list ([`warn`]) that the session drains after each
//! statement ([`take_warnings`]), at most [`MAX_EVAL_WARNINGS`] of them.

use onelog_protocol::errors;
use std::cmp::Ordering;
use std::time::{SystemTime, UNIX_EPOCH};

use onelog_binlog::{ColumnType, Value};
use onelog_engine::{SqlType, TableDef};
use sqlparser::ast;

use crate::admin::sysvars::{get_var, VarScope};
use crate::error::SqlError;
use crate::session::Session;
use crate::wide::Wide;

thread_local! {
    /// Conditions raised while evaluating expressions (CAST truncation, division by zero,
    /// ...), collected per thread: the session takes them after each statement
    /// ([`take_warnings`]). Bounded by [`MAX_EVAL_WARNINGS`] (MariaDB's max_error_count).
    static EVAL_WARNINGS: std::cell::RefCell<Vec<(String, u16, String)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// MariaDB's default `max_error_count`: conditions kept per statement.
pub(crate) const MAX_EVAL_WARNINGS: usize = 64;

/// Raises a condition (`level`: "Note" / "Warning") during evaluation.
pub(crate) fn warn(level: &str, code: u16, msg: String) {
    EVAL_WARNINGS.with(|w| {
        let mut w = w.borrow_mut();
        if w.len() < MAX_EVAL_WARNINGS {
            w.push((level.to_string(), code, msg));
        }
    });
}

/// How many conditions this thread holds (a mark for [`renumber_row_warnings`]).
pub(crate) fn warning_count() -> usize {
    EVAL_WARNINGS.with(|w| w.borrow().len())
}

/// Conditions raised since `from` ([`warning_count`]) that name row 1 name `row` instead
/// (the DML row loop knows the row number; the conversions do not).
pub(crate) fn renumber_row_warnings(from: usize, row: u64) {
    EVAL_WARNINGS.with(|w| {
        for c in w.borrow_mut().iter_mut().skip(from) {
            c.2 = crate::dml::with_row(&c.2, row);
        }
    });
}

/// Whether a condition with `code` was raised on this thread since the last take.
pub(crate) fn has_warning(code: u16) -> bool {
    EVAL_WARNINGS.with(|w| w.borrow().iter().any(|c| c.1 == code))
}

/// Takes the conditions raised on this thread since the last call.
pub(crate) fn take_warnings() -> Vec<(String, u16, String)> {
    EVAL_WARNINGS.with(|w| std::mem::take(&mut *w.borrow_mut()))
}

/// Binary operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    IntDiv,
    Mod,
    Eq,
    NullEq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
    Xor,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
}

/// Built-in scalar functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Func {
    Concat,
    ConcatWs,
    Length,
    CharLength,
    Upper,
    Lower,
    Substring,
    Left,
    Right,
    Trim,
    LTrim,
    RTrim,
    TrimLeading,
    TrimTrailing,
    Replace,
    Repeat,
    Reverse,
    LPad,
    RPad,
    Coalesce,
    IfNull,
    NullIf,
    If,
    Abs,
    Round,
    Truncate,
    Floor,
    Ceil,
    Mod,
    Greatest,
    Least,
    Now,
    CurDate,
    CurTime,
    UnixTimestamp,
    FromUnixtime,
    DateFormat,
    Database,
    User,
    CurrentUser,
    Version,
    ConnectionId,
    LastInsertId,
    FoundRows,
    RowCount,
    IsNull,
    Hex,
    Pow,
    Sqrt,
    Sign,
    Pi,
    Rand,
    Sleep,
    Year,
    Month,
    Day,
    Hour,
    Minute,
    Second,
    Date,
    Ascii,
    Locate,
    Instr,
    Space,
}

/// Target of CAST / CONVERT.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CastTo {
    Signed,
    Unsigned,
    Char,
    Binary,
    Decimal(u8, u8),
    Double,
    Date,
    DateTime,
    Time,
}

/// A compiled expression.
#[derive(Debug, Clone)]
pub(crate) enum Expr {
    Lit(Value),
    Col(usize),
    Param(usize),
    Neg(Box<Expr>),
    Not(Box<Expr>),
    BitNot(Box<Expr>),
    Bin(BinOp, Box<Expr>, Box<Expr>),
    IsNull(Box<Expr>, bool),
    /// `e IS [NOT] TRUE/FALSE`: (expr, truth, negated)
    IsBool(Box<Expr>, bool, bool),
    In(Box<Expr>, Vec<Expr>, bool),
    Between(Box<Expr>, Box<Expr>, Box<Expr>, bool),
    Like(Box<Expr>, Box<Expr>, Option<u8>, bool),
    Case(Option<Box<Expr>>, Vec<(Expr, Expr)>, Option<Box<Expr>>),
    Func(Func, Vec<Expr>),
    Cast(Box<Expr>, CastTo),
    /// Aggregate slot (grouped evaluation).
    Agg(usize),
    SysVar(String, VarScope),
    UserVar(String),
    /// `VALUES(col)` in ON DUPLICATE KEY UPDATE: the column of the row that was to be inserted.
    InsertValue(usize),
}

/// Aggregate functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AggFunc {
    CountStar,
    Count,
    Sum,
    Min,
    Max,
    Avg,
    GroupConcat,
    BitAnd,
    BitOr,
}

#[derive(Debug, Clone)]
pub(crate) struct AggSpec {
    pub func: AggFunc,
    pub distinct: bool,
    pub arg: Option<Expr>,
}

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
}

/// Per-statement evaluation environment.
pub(crate) struct Env<'a> {
    pub session: &'a Session,
    pub params: &'a [Value],
    /// The row INSERT wanted to write (for `VALUES(col)`).
    pub insert_row: Option<&'a [Value]>,
}

fn ident_name(i: &ast::Ident) -> &str {
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

impl<'a> Compiler<'a> {
    pub fn new(scope: Scope<'a>, place: &'static str) -> Self {
        Compiler {
            scope,
            aggs: None,
            params: 0,
            place,
            insert_values: false,
            aliases: Vec::new(),
        }
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
                if let Some(i) = def.column_index(name) {
                    if found.is_some() {
                        return Err(SqlError::ambiguous_column(&full, self.place));
                    }
                    found = Some(off + i);
                }
            }
            return found
                .map(Expr::Col)
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
        t.column_index(name)
            .map(Expr::Col)
            .ok_or_else(|| SqlError::unknown_column(&full, self.place))
    }

    pub fn compile(&mut self, e: &ast::Expr) -> Result<Expr, SqlError> {
        use ast::Expr as A;
        Ok(match e {
            A::Identifier(i) => {
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
                    return Ok(Expr::Lit(Value::Bytes(n.as_bytes().to_vec())));
                }
                match self.column(&[n]) {
                    Ok(c) => c,
                    Err(e) => {
                        let l = n.to_ascii_lowercase();
                        match self.aliases.iter().find(|(a, _)| *a == l) {
                            Some((_, x)) => x.clone(),
                            None => return Err(e),
                        }
                    }
                }
            }
            A::CompoundIdentifier(parts) => {
                let names: Vec<&str> = parts.iter().map(ident_name).collect();
                if let Some(first) = names.first() {
                    if let Some(scope) = first.strip_prefix("@@") {
                        return Ok(sys_var(&names[1..].join("."), Some(scope)));
                    }
                }
                self.column(&names)?
            }
            A::Value(v) => match &v.value {
                ast::Value::Placeholder(_) => {
                    let n = self.params;
                    self.params += 1;
                    Expr::Param(n)
                }
                other => Expr::Lit(literal(other)?),
            },
            // _binary'..', _utf8mb4'..': onelog's strings are UTF-8 text or bytes already.
            A::Prefixed { prefix, value }
                if matches!(
                    prefix.value.to_ascii_lowercase().as_str(),
                    "_binary" | "_utf8mb4" | "_utf8" | "_utf8mb3"
                ) && matches!(**value, A::Value(_)) =>
            {
                self.compile(value)?
            }
            A::TypedString(ts) => {
                let s = match &ts.value.value {
                    ast::Value::SingleQuotedString(s) | ast::Value::DoubleQuotedString(s) => {
                        s.clone()
                    }
                    other => other.to_string(),
                };
                let to = match ts.data_type {
                    ast::DataType::Date => CastTo::Date,
                    ast::DataType::Time(..) => CastTo::Time,
                    _ => CastTo::DateTime,
                };
                Expr::Cast(Box::new(Expr::Lit(Value::Bytes(s.into_bytes()))), to)
            }
            A::Nested(inner) => self.compile(inner)?,
            A::UnaryOp { op, expr } => {
                let x = self.compile(expr)?;
                match op {
                    ast::UnaryOperator::Minus => match x {
                        // -(-9223372036854775808) is 9223372036854775808, not a wrap.
                        Expr::Lit(Value::Int(i)) if i != i64::MIN => Expr::Lit(Value::Int(-i)),
                        Expr::Lit(Value::UInt(u)) if u == 1u64 << 63 => {
                            Expr::Lit(Value::Int(i64::MIN))
                        }
                        // Past -2^63 a negated literal is a DECIMAL, as in MariaDB.
                        Expr::Lit(Value::UInt(u)) if u > 1u64 << 63 => {
                            Expr::Lit(Value::Decimal(format!("-{u}")))
                        }
                        Expr::Lit(Value::Decimal(d)) if !d.starts_with('-') => {
                            Expr::Lit(Value::Decimal(format!("-{d}")))
                        }
                        x => Expr::Neg(Box::new(x)),
                    },
                    ast::UnaryOperator::Plus => x,
                    ast::UnaryOperator::Not | ast::UnaryOperator::BangNot => Expr::Not(Box::new(x)),
                    ast::UnaryOperator::BitwiseNot => Expr::BitNot(Box::new(x)),
                    other => return Err(SqlError::unsupported(&format!("operator {other}"))),
                }
            }
            A::BinaryOp { left, op, right } => {
                use ast::BinaryOperator as B;
                let op = match op {
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
                };
                let l = self.compile(left)?;
                let r = self.compile(right)?;
                Expr::Bin(op, Box::new(l), Box::new(r))
            }
            A::IsNull(x) => Expr::IsNull(Box::new(self.compile(x)?), false),
            A::IsNotNull(x) => Expr::IsNull(Box::new(self.compile(x)?), true),
            A::IsTrue(x) => Expr::IsBool(Box::new(self.compile(x)?), true, false),
            A::IsNotTrue(x) => Expr::IsBool(Box::new(self.compile(x)?), true, true),
            A::IsFalse(x) => Expr::IsBool(Box::new(self.compile(x)?), false, false),
            A::IsNotFalse(x) => Expr::IsBool(Box::new(self.compile(x)?), false, true),
            A::IsNotDistinctFrom(a, b) => Expr::Bin(
                BinOp::NullEq,
                Box::new(self.compile(a)?),
                Box::new(self.compile(b)?),
            ),
            A::IsDistinctFrom(a, b) => Expr::Not(Box::new(Expr::Bin(
                BinOp::NullEq,
                Box::new(self.compile(a)?),
                Box::new(self.compile(b)?),
            ))),
            A::InList {
                expr,
                list,
                negated,
            } => {
                let x = self.compile(expr)?;
                let mut items = Vec::with_capacity(list.len());
                for i in list {
                    items.push(self.compile(i)?);
                }
                Expr::In(Box::new(x), items, *negated)
            }
            A::Between {
                expr,
                negated,
                low,
                high,
            } => {
                let x = self.compile(expr)?;
                let lo = self.compile(low)?;
                let hi = self.compile(high)?;
                Expr::Between(Box::new(x), Box::new(lo), Box::new(hi), *negated)
            }
            A::Like {
                negated,
                expr,
                pattern,
                escape_char,
                any: false,
            } => {
                let x = self.compile(expr)?;
                let p = self.compile(pattern)?;
                let esc = match escape_char.as_deref() {
                    None => Some(b'\\'),
                    Some(A::Value(v)) => match &v.value {
                        ast::Value::SingleQuotedString(s) => s.bytes().next(),
                        _ => return Err(SqlError::wrong_arguments("ESCAPE")),
                    },
                    Some(_) => return Err(SqlError::wrong_arguments("ESCAPE")),
                };
                Expr::Like(Box::new(x), Box::new(p), esc, *negated)
            }
            A::Case {
                operand,
                conditions,
                else_result,
                ..
            } => {
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
                let el = match else_result {
                    Some(e) => Some(Box::new(self.compile(e)?)),
                    None => None,
                };
                Expr::Case(op, whens, el)
            }
            A::Substring {
                expr,
                substring_from,
                substring_for,
                ..
            } => {
                let mut args = vec![self.compile(expr)?];
                if let Some(f) = substring_from {
                    args.push(self.compile(f)?);
                } else {
                    args.push(Expr::Lit(Value::Int(1)));
                }
                if let Some(f) = substring_for {
                    args.push(self.compile(f)?);
                }
                Expr::Func(Func::Substring, args)
            }
            A::Trim {
                trim_where,
                trim_what,
                expr,
                ..
            } => {
                let x = self.compile(expr)?;
                let what = match trim_what {
                    Some(w) => self.compile(w)?,
                    None => Expr::Lit(Value::Bytes(b" ".to_vec())),
                };
                let f = match trim_where {
                    Some(ast::TrimWhereField::Leading) => Func::TrimLeading,
                    Some(ast::TrimWhereField::Trailing) => Func::TrimTrailing,
                    _ => Func::Trim,
                };
                Expr::Func(f, vec![x, what])
            }
            A::Ceil { expr, .. } => Expr::Func(Func::Ceil, vec![self.compile(expr)?]),
            A::Floor { expr, .. } => Expr::Func(Func::Floor, vec![self.compile(expr)?]),
            A::Position { expr, r#in } => {
                let a = self.compile(expr)?;
                let b = self.compile(r#in)?;
                Expr::Func(Func::Locate, vec![a, b])
            }
            A::Cast {
                expr, data_type, ..
            } => {
                let x = self.compile(expr)?;
                Expr::Cast(Box::new(x), cast_target(data_type)?)
            }
            A::Convert {
                expr,
                data_type: Some(dt),
                ..
            } => {
                let x = self.compile(expr)?;
                Expr::Cast(Box::new(x), cast_target(dt)?)
            }
            A::Convert {
                expr,
                data_type: None,
                ..
            } => self.compile(expr)?,
            A::Collate { expr, .. } => self.compile(expr)?,
            A::Function(f) => self.function(f)?,
            A::Tuple(_) => {
                return Err(SqlError::of(
                    errors::ER_OPERAND_COLUMNS,
                    "Operand should contain 1 column(s)",
                ))
            }
            A::Subquery(_) | A::InSubquery { .. } | A::Exists { .. } => {
                return Err(SqlError::unsupported("subqueries"))
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

    fn args(&mut self, f: &ast::Function) -> Result<(Vec<Expr>, bool, bool), SqlError> {
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
        if f.over.is_some() {
            return Err(SqlError::unsupported("window functions"));
        }
        // Aggregates.
        let agg = match name.as_str() {
            "COUNT" => Some(AggFunc::Count),
            "SUM" => Some(AggFunc::Sum),
            "MIN" => Some(AggFunc::Min),
            "MAX" => Some(AggFunc::Max),
            "AVG" => Some(AggFunc::Avg),
            "GROUP_CONCAT" => Some(AggFunc::GroupConcat),
            "BIT_AND" => Some(AggFunc::BitAnd),
            "BIT_OR" => Some(AggFunc::BitOr),
            _ => None,
        };
        if let Some(mut func) = agg {
            if self.aggs.is_none() {
                return Err(SqlError::invalid_group_use());
            }
            // Aggregate arguments may not nest aggregates.
            let saved = self.aggs.take();
            let r = self.args(f);
            self.aggs = saved;
            let (mut args, star, distinct) = r?;
            if star {
                if func != AggFunc::Count || !args.is_empty() {
                    return Err(SqlError::syntax(&f.to_string()));
                }
                func = AggFunc::CountStar;
            } else if args.len() != 1 {
                if func == AggFunc::GroupConcat && !args.is_empty() {
                    args = vec![Expr::Func(Func::Concat, args)];
                } else {
                    return Err(SqlError::param_count(&name));
                }
            }
            let aggs = self.aggs.as_mut().ok_or_else(SqlError::invalid_group_use)?;
            aggs.push(AggSpec {
                func,
                distinct,
                arg: args.pop(),
            });
            return Ok(Expr::Agg(aggs.len() - 1));
        }
        if name == "VALUES" || name == "VALUE" {
            if !self.insert_values {
                return Ok(Expr::Lit(Value::Null));
            }
            let (args, _, _) = self.args(f)?;
            return match args.as_slice() {
                [Expr::Col(c)] => Ok(Expr::InsertValue(*c)),
                _ => Err(SqlError::wrong_arguments("VALUES")),
            };
        }
        let (args, star, _) = self.args(f)?;
        if star {
            return Err(SqlError::syntax(&f.to_string()));
        }
        let n = args.len();
        let (func, ok) = match name.as_str() {
            "CONCAT" => (Func::Concat, n >= 1),
            "CONCAT_WS" => (Func::ConcatWs, n >= 2),
            "LENGTH" | "OCTET_LENGTH" | "LENGTHB" => (Func::Length, n == 1),
            "CHAR_LENGTH" | "CHARACTER_LENGTH" => (Func::CharLength, n == 1),
            "UPPER" | "UCASE" => (Func::Upper, n == 1),
            "LOWER" | "LCASE" => (Func::Lower, n == 1),
            "SUBSTRING" | "SUBSTR" | "MID" => (Func::Substring, n == 2 || n == 3),
            "LEFT" => (Func::Left, n == 2),
            "RIGHT" => (Func::Right, n == 2),
            "TRIM" => (Func::Trim, n == 1),
            "LTRIM" => (Func::LTrim, n == 1),
            "RTRIM" => (Func::RTrim, n == 1),
            "REPLACE" => (Func::Replace, n == 3),
            "REPEAT" => (Func::Repeat, n == 2),
            "REVERSE" => (Func::Reverse, n == 1),
            "LPAD" => (Func::LPad, n == 3),
            "RPAD" => (Func::RPad, n == 3),
            "COALESCE" => (Func::Coalesce, n >= 1),
            "IFNULL" | "NVL" => (Func::IfNull, n == 2),
            "NULLIF" => (Func::NullIf, n == 2),
            "IF" => (Func::If, n == 3),
            "ABS" => (Func::Abs, n == 1),
            "ROUND" => (Func::Round, n == 1 || n == 2),
            "TRUNCATE" => (Func::Truncate, n == 2),
            "FLOOR" => (Func::Floor, n == 1),
            "CEIL" | "CEILING" => (Func::Ceil, n == 1),
            "MOD" => (Func::Mod, n == 2),
            "GREATEST" => (Func::Greatest, n >= 2),
            "LEAST" => (Func::Least, n >= 2),
            "NOW" | "CURRENT_TIMESTAMP" | "LOCALTIME" | "LOCALTIMESTAMP" | "SYSDATE" => {
                (Func::Now, n <= 1)
            }
            "CURDATE" | "CURRENT_DATE" => (Func::CurDate, n == 0),
            "CURTIME" | "CURRENT_TIME" => (Func::CurTime, n <= 1),
            "UNIX_TIMESTAMP" => (Func::UnixTimestamp, n <= 1),
            "FROM_UNIXTIME" => (Func::FromUnixtime, n == 1),
            "DATE_FORMAT" => (Func::DateFormat, n == 2),
            "DATABASE" | "SCHEMA" => (Func::Database, n == 0),
            "USER" | "SESSION_USER" | "SYSTEM_USER" => (Func::User, n == 0),
            "CURRENT_USER" => (Func::CurrentUser, n == 0),
            "VERSION" => (Func::Version, n == 0),
            "CONNECTION_ID" => (Func::ConnectionId, n == 0),
            "LAST_INSERT_ID" => (Func::LastInsertId, n <= 1),
            "FOUND_ROWS" => (Func::FoundRows, n == 0),
            "ROW_COUNT" => (Func::RowCount, n == 0),
            "ISNULL" => (Func::IsNull, n == 1),
            "HEX" => (Func::Hex, n == 1),
            "POW" | "POWER" => (Func::Pow, n == 2),
            "SQRT" => (Func::Sqrt, n == 1),
            "SIGN" => (Func::Sign, n == 1),
            "PI" => (Func::Pi, n == 0),
            "RAND" => (Func::Rand, n <= 1),
            "SLEEP" => (Func::Sleep, n == 1),
            "YEAR" => (Func::Year, n == 1),
            "MONTH" => (Func::Month, n == 1),
            "DAY" | "DAYOFMONTH" => (Func::Day, n == 1),
            "HOUR" => (Func::Hour, n == 1),
            "MINUTE" => (Func::Minute, n == 1),
            "SECOND" => (Func::Second, n == 1),
            "DATE" => (Func::Date, n == 1),
            "ASCII" => (Func::Ascii, n == 1),
            "LOCATE" => (Func::Locate, n == 2),
            "INSTR" => (Func::Instr, n == 2),
            "SPACE" => (Func::Space, n == 1),
            _ => return Err(SqlError::unknown_function(&name)),
        };
        if !ok {
            return Err(SqlError::param_count(&name));
        }
        Ok(Expr::Func(func, args))
    }
}

fn truncate_text(s: &str) -> String {
    s.chars().take(60).collect()
}

fn sys_var(name: &str, scope: Option<&str>) -> Expr {
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

fn cast_target(dt: &ast::DataType) -> Result<CastTo, SqlError> {
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
        | V::EscapedStringLiteral(s) => Value::Bytes(s.as_bytes().to_vec()),
        V::HexStringLiteral(h) => Value::Bytes(hex_decode(h)?),
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

fn hex_decode(h: &str) -> Result<Vec<u8>, SqlError> {
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

fn number_literal(s: &str) -> Result<Value, SqlError> {
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        return Ok(Value::Bytes(hex_decode(h)?));
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

// ---------------------------------------------------------------------------------------
// Decimal arithmetic (a [`Wide`] mantissa: up to 81 digits, as MariaDB's decimal_t).

/// The most digits a decimal value holds (MariaDB's DECIMAL_MAX_POSSIBLE_PRECISION: nine
/// words of nine digits); a result with more is an overflow (1690 "DECIMAL value is out of
/// range").
pub(crate) const DEC_MAX_DIGITS: usize = 81;

/// A fixed-point decimal: `m / 10^s`. Invariant: `m` has at most [`DEC_MAX_DIGITS`] digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Dec {
    pub m: Wide,
    pub s: u32,
}

/// 10^n as a mantissa (None past the capacity).
pub(crate) fn pow10(n: u32) -> Option<Wide> {
    Wide::pow10(n)
}

impl Dec {
    pub fn from_int(i: i128) -> Dec {
        Dec {
            m: Wide::from_i128(i),
            s: 0,
        }
    }

    /// `m` checked against the digit limit.
    fn checked(m: Wide, s: u32) -> Option<Dec> {
        (m.num_digits() <= DEC_MAX_DIGITS).then_some(Dec { m, s })
    }

    pub fn parse(text: &str) -> Option<Dec> {
        let t = text.trim();
        let (neg, body) = match t.as_bytes().first() {
            Some(b'-') => (true, &t[1..]),
            Some(b'+') => (false, &t[1..]),
            _ => (false, t),
        };
        let (ip, fp) = match body.find('.') {
            Some(i) => (&body[..i], &body[i + 1..]),
            None => (body, ""),
        };
        if (ip.is_empty() && fp.is_empty())
            || !ip.bytes().all(|b| b.is_ascii_digit())
            || !fp.bytes().all(|b| b.is_ascii_digit())
        {
            return None;
        }
        let ip = ip.trim_start_matches('0');
        if ip.len() + fp.len() > DEC_MAX_DIGITS {
            return None;
        }
        let m = Wide::parse_digits(&format!("{ip}{fp}"), neg)?;
        Dec::checked(m, fp.len() as u32)
    }

    pub fn rescale(self, s: u32) -> Option<Dec> {
        if s >= self.s {
            let f = pow10(s - self.s)?;
            Dec::checked(self.m.checked_mul(f)?, s)
        } else {
            // Round half away from zero.
            let Some(f) = pow10(self.s - s) else {
                return Some(Dec { m: Wide::ZERO, s });
            };
            let (q, r) = self.m.div_rem(f)?;
            let twice = r.abs().checked_add(r.abs())?;
            let q = if twice >= f {
                let one = Wide::from_i128(if self.m.is_negative() { -1 } else { 1 });
                q.checked_add(one)?
            } else {
                q
            };
            Dec::checked(q, s)
        }
    }

    pub fn add(self, o: Dec) -> Option<Dec> {
        let s = self.s.max(o.s);
        Dec::checked(self.rescale(s)?.m.checked_add(o.rescale(s)?.m)?, s)
    }

    pub fn neg(self) -> Dec {
        Dec {
            m: self.m.neg(),
            s: self.s,
        }
    }

    pub fn mul(self, o: Dec) -> Option<Dec> {
        let d = Dec::checked(self.m.checked_mul(o.m)?, self.s + o.s)?;
        // MariaDB keeps at most 38 fraction digits (decimal_mul then rounds).
        if d.s > 38 {
            d.rescale(38)
        } else {
            Some(d)
        }
    }

    /// Division with `self.s + 4` fraction digits (div_precision_increment); None on / 0
    /// and on overflow.
    pub fn div(self, o: Dec) -> Option<Dec> {
        if o.m.is_zero() {
            return None;
        }
        let s = (self.s + 4).min(38);
        // self.m / 10^self.s / (o.m / 10^o.s) = self.m * 10^(o.s + s - self.s + 1) / o.m / 10^(s + 1)
        let num = self
            .m
            .checked_mul(pow10((o.s + s + 1).checked_sub(self.s)?)?)?;
        let (q, _) = num.div_rem(o.m)?;
        Dec { m: q, s: s + 1 }.rescale(s)
    }

    pub fn cmp(self, o: Dec) -> Ordering {
        let s = self.s.max(o.s);
        match (self.rescale(s), o.rescale(s)) {
            (Some(a), Some(b)) => a.m.cmp(&b.m),
            _ => self.to_f64().total_cmp(&o.to_f64()),
        }
    }

    pub fn to_f64(self) -> f64 {
        self.to_string().parse().unwrap_or(0.0)
    }

    /// Rounded to an integer (half away from zero); None when it does not fit an i128.
    pub fn round_int(self) -> Option<i128> {
        self.rescale(0).and_then(|d| d.m.to_i128())
    }

    /// Truncated (`floor`: towards minus infinity) to an integer mantissa at scale 0.
    pub fn floor_or_trunc(self, floor: bool) -> Option<Wide> {
        let (q, r) = self.m.div_rem(pow10(self.s)?)?;
        if floor && r.is_negative() {
            q.checked_sub(Wide::from_i128(1))
        } else {
            Some(q)
        }
    }
}

impl std::fmt::Display for Dec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let neg = self.m.is_negative();
        let digits = self.m.digits();
        let s = self.s as usize;
        let (ip, fp) = if digits.len() > s {
            let (a, b) = digits.split_at(digits.len() - s);
            (a.to_string(), b.to_string())
        } else {
            ("0".to_string(), format!("{:0>width$}", digits, width = s))
        };
        if neg {
            write!(f, "-")?;
        }
        write!(f, "{ip}")?;
        if s > 0 {
            write!(f, ".{fp}")?;
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------
// Value helpers.

/// Numeric view of a value.
#[derive(Debug, Clone, Copy)]
enum Num {
    Int(i128),
    Dec(Dec),
    Dbl(f64),
}

/// Leading numeric prefix of a string as MySQL converts it (`'12abc'` -> 12).
pub(crate) fn parse_num_prefix(b: &[u8]) -> Num2 {
    let s = String::from_utf8_lossy(b);
    let t = s.trim_start();
    let bytes = t.as_bytes();
    let mut i = 0;
    if i < bytes.len() && (bytes[i] == b'-' || bytes[i] == b'+') {
        i += 1;
    }
    let ds = i;
    while i < bytes.len() && bytes[i].is_ascii_digit() {
        i += 1;
    }
    let mut is_int = true;
    if i < bytes.len() && bytes[i] == b'.' {
        is_int = false;
        i += 1;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
    }
    if i > ds && i < bytes.len() && (bytes[i] == b'e' || bytes[i] == b'E') {
        let mut j = i + 1;
        if j < bytes.len() && (bytes[j] == b'-' || bytes[j] == b'+') {
            j += 1;
        }
        if j < bytes.len() && bytes[j].is_ascii_digit() {
            while j < bytes.len() && bytes[j].is_ascii_digit() {
                j += 1;
            }
            is_int = false;
            i = j;
        }
    }
    let p = &t[..i];
    if is_int {
        if let Ok(v) = p.parse::<i128>() {
            return Num2::Int(v);
        }
    }
    Num2::Dbl(p.parse::<f64>().unwrap_or(0.0))
}

/// Result of [`parse_num_prefix`].
#[derive(Debug, Clone, Copy)]
pub(crate) enum Num2 {
    Int(i128),
    Dbl(f64),
}

/// Numeric view of a value; a string that is not entirely a number raises MariaDB's 1292
/// "Truncated incorrect DOUBLE value" (as in arithmetic and comparisons with numbers).
fn num_of(v: &Value) -> Option<Num> {
    if let Value::Bytes(b) = v {
        let (_, bad) = number_prefix(b, false);
        let trailing_space = b.last().is_some_and(u8::is_ascii_whitespace);
        if bad || trailing_space {
            warn(
                "Warning",
                1292,
                format!(
                    "Truncated incorrect DOUBLE value: '{}'",
                    String::from_utf8_lossy(b)
                ),
            );
        }
    }
    num_of_quiet(v)
}

/// [`num_of`] without the warning (conversions that report their own condition).
fn num_of_quiet(v: &Value) -> Option<Num> {
    Some(match v {
        Value::Null => return None,
        Value::Int(i) => Num::Int(i128::from(*i)),
        Value::UInt(u) => Num::Int(i128::from(*u)),
        Value::Float(f) => Num::Dbl(f64::from(*f)),
        Value::Double(d) => Num::Dbl(*d),
        Value::Decimal(s) => match Dec::parse(s) {
            Some(d) => Num::Dec(d),
            None => Num::Dbl(s.parse().unwrap_or(0.0)),
        },
        Value::Bytes(b) => match parse_num_prefix(b) {
            Num2::Int(i) => Num::Dbl(i as f64),
            Num2::Dbl(d) => Num::Dbl(d),
        },
        Value::Year(y) => Num::Int(i128::from(*y)),
        Value::Date { year, month, day } => {
            Num::Int(i128::from(*year) * 10000 + i128::from(*month) * 100 + i128::from(*day))
        }
        Value::DateTime {
            year,
            month,
            day,
            hour,
            minute,
            second,
            ..
        } => Num::Int(
            ((i128::from(*year) * 100 + i128::from(*month)) * 100 + i128::from(*day)) * 1_000_000
                + i128::from(*hour) * 10000
                + i128::from(*minute) * 100
                + i128::from(*second),
        ),
        Value::Time {
            negative,
            hours,
            minutes,
            seconds,
            ..
        } => {
            let n = i128::from(*hours) * 10000 + i128::from(*minutes) * 100 + i128::from(*seconds);
            Num::Int(if *negative { -n } else { n })
        }
        Value::Timestamp { .. } => {
            let dt = timestamp_to_datetime(v);
            return num_of_quiet(&dt);
        }
    })
}

fn num_f64(n: Num) -> f64 {
    match n {
        Num::Int(i) => i as f64,
        Num::Dec(d) => d.to_f64(),
        Num::Dbl(d) => d,
    }
}

fn num_dec(n: Num) -> Option<Dec> {
    match n {
        Num::Int(i) => Some(Dec::from_int(i)),
        Num::Dec(d) => Some(d),
        Num::Dbl(_) => None,
    }
}

/// f64 view (NULL -> None).
pub(crate) fn to_f64(v: &Value) -> Option<f64> {
    num_of(v).map(num_f64)
}

/// [`to_f64`] without the 1292 warning for strings.
pub(crate) fn to_f64_quiet(v: &Value) -> Option<f64> {
    num_of_quiet(v).map(num_f64)
}

/// Integer view, rounding (NULL -> None).
pub(crate) fn to_i128(v: &Value) -> Option<i128> {
    num_of(v).map(num_i128)
}

fn num_i128(n: Num) -> i128 {
    match n {
        Num::Int(i) => i,
        Num::Dec(d) => d.round_int().unwrap_or(if d.m.is_negative() {
            i128::MIN
        } else {
            i128::MAX
        }),
        Num::Dbl(d) => d.round() as i128,
    }
}

/// Truth of a value (NULL -> None).
pub(crate) fn truth(v: &Value) -> Option<bool> {
    match v {
        Value::Null => None,
        Value::Int(i) => Some(*i != 0),
        Value::UInt(u) => Some(*u != 0),
        other => num_of(other).map(|n| match n {
            Num::Int(i) => i != 0,
            Num::Dec(d) => !d.m.is_zero(),
            Num::Dbl(d) => d != 0.0,
        }),
    }
}

fn int_value(i: i128) -> Result<Value, SqlError> {
    if let Ok(v) = i64::try_from(i) {
        Ok(Value::Int(v))
    } else if let Ok(u) = u64::try_from(i) {
        Ok(Value::UInt(u))
    } else {
        Err(SqlError::of(
            errors::ER_DATA_OUT_OF_RANGE,
            "BIGINT value is out of range",
        ))
    }
}

/// An integer mantissa as a SQL value: BIGINT (signed or unsigned) when it fits, else a
/// DECIMAL (as MariaDB answers FLOOR/ROUND past the BIGINT range).
fn wide_int_value(w: Wide) -> Value {
    match w.to_i128().map(int_value) {
        Some(Ok(v)) => v,
        _ => Value::Decimal(Dec { m: w, s: 0 }.to_string()),
    }
}

/// ROUND (`round`) or TRUNCATE of a decimal to `places` fraction digits (negative: tens,
/// hundreds, ...); None on overflow.
fn round_dec(d: Dec, places: i64, round: bool) -> Option<Dec> {
    if places >= 0 {
        let s = places as u32;
        if round {
            return d.rescale(s);
        }
        let cut = d.s.saturating_sub(s);
        let (q, _) = d.m.div_rem(pow10(cut)?)?;
        return Some(Dec { m: q, s: d.s - cut });
    }
    let k = (-places) as u32;
    let Some(f10) = pow10(k) else {
        return Some(Dec::from_int(0));
    };
    let shifted = Dec { m: d.m, s: d.s + k };
    let q = if round {
        shifted.rescale(0)?.m
    } else {
        shifted.floor_or_trunc(false)?
    };
    Some(Dec {
        m: q.checked_mul(f10)?,
        s: 0,
    })
}

/// 1690 "<type> value is out of range in '<expr>'" (MariaDB names the expression).
pub(crate) fn out_of_range(ty: &str, expr: &str) -> SqlError {
    SqlError::of(
        errors::ER_DATA_OUT_OF_RANGE,
        format!("{ty} value is out of range in '{expr}'"),
    )
}

/// A value written as SQL text, the way MariaDB prints a constant inside an error message.
pub(crate) fn sql_text(v: &Value) -> String {
    match v {
        Value::Null => "NULL".to_string(),
        Value::Bytes(b) => format!("'{}'", String::from_utf8_lossy(b)),
        Value::Double(d) => render_double(*d),
        other => String::from_utf8_lossy(&text_of(other)).into_owned(),
    }
}

/// A DOUBLE the way MariaDB prints it in an expression (`1e300`, `1.5`).
fn render_double(d: f64) -> String {
    if d != 0.0 && (d.abs() >= 1e15 || d.abs() < 1e-4) {
        format!("{d:e}")
    } else {
        format!("{d}")
    }
}

fn bool_value(b: Option<bool>) -> Value {
    match b {
        None => Value::Null,
        Some(b) => Value::Int(b as i64),
    }
}

/// The text form of a value (CONCAT, LIKE, string functions); DATETIME fractions shown only
/// when non-zero.
pub(crate) fn text_of(v: &Value) -> Vec<u8> {
    match v {
        Value::Null => Vec::new(),
        Value::Bytes(b) => b.clone(),
        other => crate::render::text_plain(other),
    }
}

fn temporal_rank(v: &Value) -> bool {
    matches!(
        v,
        Value::Date { .. } | Value::DateTime { .. } | Value::Timestamp { .. } | Value::Time { .. }
    )
}

/// (days, micros of day) of a date-like value, for comparisons.
fn temporal_key(v: &Value) -> Option<(i64, i64)> {
    match v {
        Value::Date { year, month, day } => Some((
            days_from_civil(i64::from(*year), u32::from(*month), u32::from(*day)),
            0,
        )),
        Value::DateTime {
            year,
            month,
            day,
            hour,
            minute,
            second,
            micros,
        } => Some((
            days_from_civil(i64::from(*year), u32::from(*month), u32::from(*day)),
            ((i64::from(*hour) * 60 + i64::from(*minute)) * 60 + i64::from(*second)) * 1_000_000
                + i64::from(*micros),
        )),
        Value::Timestamp { .. } => temporal_key(&timestamp_to_datetime(v)),
        Value::Time { .. } => Some((0, v.time_micros()?)),
        Value::Bytes(b) => {
            parse_datetime(std::str::from_utf8(b).ok()?).and_then(|d| temporal_key(&d))
        }
        _ => None,
    }
}

/// MySQL comparison of two non-NULL values (None when either is NULL).
pub(crate) fn compare(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Null, _) | (_, Value::Null) => None,
        (Value::Bytes(x), Value::Bytes(y)) => Some(x.cmp(y)),
        (Value::Int(x), Value::Int(y)) => Some(x.cmp(y)),
        (Value::UInt(x), Value::UInt(y)) => Some(x.cmp(y)),
        _ if temporal_rank(a) || temporal_rank(b) => match (temporal_key(a), temporal_key(b)) {
            (Some(x), Some(y)) => Some(x.cmp(&y)),
            _ => Some(text_of(a).cmp(&text_of(b))),
        },
        _ => {
            let (x, y) = (num_of(a)?, num_of(b)?);
            Some(match (x, y) {
                (Num::Int(i), Num::Int(j)) => i.cmp(&j),
                (Num::Dbl(_), _) | (_, Num::Dbl(_)) => num_f64(x).total_cmp(&num_f64(y)),
                _ => match (num_dec(x), num_dec(y)) {
                    (Some(p), Some(q)) => p.cmp(q),
                    _ => num_f64(x).total_cmp(&num_f64(y)),
                },
            })
        }
    }
}

/// Total order for sorting: NULL first, then [`compare`].
pub(crate) fn sort_cmp(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Null, Value::Null) => Ordering::Equal,
        (Value::Null, _) => Ordering::Less,
        (_, Value::Null) => Ordering::Greater,
        _ => compare(a, b).unwrap_or(Ordering::Equal),
    }
}

/// Appends a canonical, type-tagged encoding of `v` (GROUP BY / DISTINCT keys): equal
/// values of one type encode equally.
pub(crate) fn key_bytes(v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Null => out.push(0),
        Value::Int(_) | Value::UInt(_) | Value::Year(_) => {
            out.push(1);
            out.extend_from_slice(&to_i128(v).unwrap_or(0).to_be_bytes());
        }
        Value::Decimal(s) => {
            out.push(2);
            match Dec::parse(s) {
                Some(d) => {
                    // Normalise trailing zeros.
                    let mut d = d;
                    let ten = Wide::from_i128(10);
                    while let Some((q, r)) =
                        d.m.div_rem(ten).filter(|(_, r)| d.s > 0 && r.is_zero())
                    {
                        debug_assert!(r.is_zero());
                        d = Dec { m: q, s: d.s - 1 };
                    }
                    match d.m.to_i128() {
                        Some(i) => out.extend_from_slice(&i.to_be_bytes()),
                        None => {
                            out.push(u8::from(!d.m.is_negative()));
                            out.extend_from_slice(d.m.digits().as_bytes());
                        }
                    }
                    out.extend_from_slice(&d.s.to_be_bytes());
                }
                None => out.extend_from_slice(s.as_bytes()),
            }
        }
        Value::Float(_) | Value::Double(_) => {
            out.push(3);
            out.extend_from_slice(&to_f64(v).unwrap_or(0.0).to_bits().to_be_bytes());
        }
        Value::Bytes(b) => {
            out.push(4);
            out.extend_from_slice(&(b.len() as u64).to_be_bytes());
            out.extend_from_slice(b);
        }
        other => {
            out.push(5);
            let (d, t) = temporal_key(other).unwrap_or((0, 0));
            out.extend_from_slice(&d.to_be_bytes());
            out.extend_from_slice(&t.to_be_bytes());
        }
    }
}

// ---------------------------------------------------------------------------------------
// Dates.

pub(crate) use onelog_binlog::value::{civil_from_days, days_from_civil};

/// DATETIME of a Unix time (UTC).
pub(crate) fn datetime_from_unix(secs: i64, micros: u32) -> Value {
    let days = secs.div_euclid(86400);
    let rem = secs.rem_euclid(86400);
    let (y, m, d) = civil_from_days(days);
    Value::DateTime {
        year: y.clamp(0, 9999) as u16,
        month: m as u8,
        day: d as u8,
        hour: (rem / 3600) as u8,
        minute: (rem / 60 % 60) as u8,
        second: (rem % 60) as u8,
        micros,
    }
}

pub(crate) fn timestamp_to_datetime(v: &Value) -> Value {
    match v {
        Value::Timestamp { secs, micros } => datetime_from_unix(i64::from(*secs), *micros),
        other => other.clone(),
    }
}

/// Unix seconds of a DATE/DATETIME (UTC).
pub(crate) fn unix_of(v: &Value) -> Option<(i64, u32)> {
    match v {
        Value::Timestamp { secs, micros } => Some((i64::from(*secs), *micros)),
        Value::Date { .. } | Value::DateTime { .. } => {
            let (d, t) = temporal_key(v)?;
            Some((d * 86400 + t / 1_000_000, (t % 1_000_000) as u32))
        }
        Value::Bytes(b) => unix_of(&parse_datetime(std::str::from_utf8(b).ok()?)?),
        _ => None,
    }
}

/// Current time: (unix seconds, micros).
pub(crate) fn now_unix() -> (i64, u32) {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    (d.as_secs() as i64, d.subsec_micros())
}

/// Parses `YYYY-MM-DD[ HH:MM:SS[.ffffff]]` (also `T` separator, `YYYYMMDD[HHMMSS]`).
pub(crate) fn parse_datetime(s: &str) -> Option<Value> {
    let s = s.trim();
    let (date, time) = match s.find([' ', 'T']) {
        Some(i) => (&s[..i], Some(s[i + 1..].trim())),
        None => (s, None),
    };
    let (y, m, d) = if date.contains('-') || date.contains('/') {
        let mut it = date.split(['-', '/']);
        let y: u16 = it.next()?.parse().ok()?;
        let m: u8 = it.next()?.parse().ok()?;
        let d: u8 = it.next()?.parse().ok()?;
        if it.next().is_some() {
            return None;
        }
        (y, m, d)
    } else if date.len() == 8 && date.bytes().all(|b| b.is_ascii_digit()) && time.is_none() {
        (
            date[..4].parse().ok()?,
            date[4..6].parse().ok()?,
            date[6..8].parse().ok()?,
        )
    } else if date.len() == 14 && date.bytes().all(|b| b.is_ascii_digit()) && time.is_none() {
        return Some(Value::DateTime {
            year: date[..4].parse().ok()?,
            month: date[4..6].parse().ok()?,
            day: date[6..8].parse().ok()?,
            hour: date[8..10].parse().ok()?,
            minute: date[10..12].parse().ok()?,
            second: date[12..14].parse().ok()?,
            micros: 0,
        });
    } else {
        return None;
    };
    if m > 12 || d > 31 {
        return None;
    }
    match time {
        None => Some(Value::Date {
            year: y,
            month: m,
            day: d,
        }),
        Some(t) => {
            let Value::Time {
                negative: false,
                hours,
                minutes,
                seconds,
                micros,
            } = parse_time(t)?
            else {
                return None;
            };
            if hours > 23 {
                return None;
            }
            Some(Value::DateTime {
                year: y,
                month: m,
                day: d,
                hour: hours as u8,
                minute: minutes,
                second: seconds,
                micros,
            })
        }
    }
}

/// Parses `[-]HH:MM[:SS[.ffffff]]` or `HHMMSS`.
pub(crate) fn parse_time(s: &str) -> Option<Value> {
    let s = s.trim();
    let (negative, s) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s),
    };
    let (main, frac) = match s.find('.') {
        Some(i) => (&s[..i], &s[i + 1..]),
        None => (s, ""),
    };
    let (h, mi, se): (u16, u8, u8) = if main.contains(':') {
        let mut it = main.split(':');
        let h = it.next()?.parse().ok()?;
        let m = it.next()?.parse().ok()?;
        let s = match it.next() {
            Some(x) => x.parse().ok()?,
            None => 0,
        };
        (h, m, s)
    } else if main.bytes().all(|b| b.is_ascii_digit()) && !main.is_empty() {
        let n: u32 = main.parse().ok()?;
        ((n / 10000) as u16, (n / 100 % 100) as u8, (n % 100) as u8)
    } else {
        return None;
    };
    if mi > 59 || se > 59 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut micros: u32 = 0;
    for (i, b) in frac.bytes().take(6).enumerate() {
        micros += u32::from(b - b'0') * 10u32.pow(5 - i as u32);
    }
    Some(Value::Time {
        negative,
        hours: h,
        minutes: mi,
        seconds: se,
        micros,
    })
}

fn date_parts(v: &Value) -> Option<(i64, u32, u32, u32, u32, u32, u32)> {
    match timestamp_to_datetime(v) {
        Value::Date { year, month, day } => Some((
            i64::from(year),
            u32::from(month),
            u32::from(day),
            0,
            0,
            0,
            0,
        )),
        Value::DateTime {
            year,
            month,
            day,
            hour,
            minute,
            second,
            micros,
        } => Some((
            i64::from(year),
            u32::from(month),
            u32::from(day),
            u32::from(hour),
            u32::from(minute),
            u32::from(second),
            micros,
        )),
        Value::Bytes(b) => date_parts(&parse_datetime(std::str::from_utf8(&b).ok()?)?),
        _ => None,
    }
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const WEEKDAYS: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];

fn date_format(v: &Value, fmt: &[u8]) -> Option<Vec<u8>> {
    let (y, m, d, h, mi, s, us) = date_parts(v)?;
    let mut out = Vec::new();
    let mut it = fmt.iter();
    while let Some(&c) = it.next() {
        if c != b'%' {
            out.push(c);
            continue;
        }
        let Some(&f) = it.next() else { break };
        let wd = (days_from_civil(y, m.max(1), d.max(1)) + 3).rem_euclid(7) as usize;
        let piece = match f {
            b'Y' => format!("{y:04}"),
            b'y' => format!("{:02}", y % 100),
            b'm' => format!("{m:02}"),
            b'c' => format!("{m}"),
            b'd' => format!("{d:02}"),
            b'e' => format!("{d}"),
            b'H' => format!("{h:02}"),
            b'k' => format!("{h}"),
            b'h' | b'I' => format!("{:02}", if h % 12 == 0 { 12 } else { h % 12 }),
            b'l' => format!("{}", if h % 12 == 0 { 12 } else { h % 12 }),
            b'i' => format!("{mi:02}"),
            b's' | b'S' => format!("{s:02}"),
            b'f' => format!("{us:06}"),
            b'p' => (if h < 12 { "AM" } else { "PM" }).to_string(),
            b'T' => format!("{h:02}:{mi:02}:{s:02}"),
            b'r' => format!(
                "{:02}:{mi:02}:{s:02} {}",
                if h % 12 == 0 { 12 } else { h % 12 },
                if h < 12 { "AM" } else { "PM" }
            ),
            b'M' => MONTHS
                .get((m as usize).wrapping_sub(1))
                .unwrap_or(&"")
                .to_string(),
            b'b' => MONTHS
                .get((m as usize).wrapping_sub(1))
                .map_or(String::new(), |s| s[..3].to_string()),
            b'W' => WEEKDAYS[wd].to_string(),
            b'a' => WEEKDAYS[wd][..3].to_string(),
            b'j' => format!(
                "{:03}",
                days_from_civil(y, m.max(1), d.max(1)) - days_from_civil(y, 1, 1) + 1
            ),
            b'%' => "%".to_string(),
            other => (other as char).to_string(),
        };
        out.extend_from_slice(piece.as_bytes());
    }
    Some(out)
}

// ---------------------------------------------------------------------------------------
// LIKE.

fn like_match(s: &[u8], p: &[u8], esc: Option<u8>) -> bool {
    // Iterative matcher with backtracking over the last `%` (chars are matched as bytes,
    // `_` as one UTF-8 character).
    let (mut si, mut pi) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    let char_len = |b: u8| -> usize {
        match b {
            0xF0..=0xFF => 4,
            0xE0..=0xEF => 3,
            0xC0..=0xDF => 2,
            _ => 1,
        }
    };
    while si < s.len() {
        if pi < p.len() {
            let c = p[pi];
            if Some(c) == esc && pi + 1 < p.len() {
                if p[pi + 1] == s[si] {
                    si += 1;
                    pi += 2;
                    continue;
                }
            } else if c == b'%' {
                star = Some((pi, si));
                pi += 1;
                continue;
            } else if c == b'_' {
                si += char_len(s[si]).min(s.len() - si);
                pi += 1;
                continue;
            } else if c == s[si] {
                si += 1;
                pi += 1;
                continue;
            }
        }
        match star {
            Some((sp, ss)) => {
                let ns = ss + char_len(s[ss]).min(s.len() - ss);
                star = Some((sp, ns));
                pi = sp + 1;
                si = ns;
            }
            None => return false,
        }
    }
    while pi < p.len() && p[pi] == b'%' {
        pi += 1;
    }
    pi == p.len()
}

// ---------------------------------------------------------------------------------------
// Evaluation.

impl Expr {
    pub fn eval(&self, row: &[Value], env: &Env) -> Result<Value, SqlError> {
        self.eval_with(row, &[], env)
    }

    /// True when the expression holds (NULL and false are not).
    pub fn test(&self, row: &[Value], aggs: &[Value], env: &Env) -> Result<bool, SqlError> {
        Ok(truth(&self.eval_with(row, aggs, env)?) == Some(true))
    }

    pub fn eval_with(&self, row: &[Value], aggs: &[Value], env: &Env) -> Result<Value, SqlError> {
        Ok(match self {
            Expr::Lit(v) => v.clone(),
            Expr::Col(i) => row.get(*i).cloned().unwrap_or(Value::Null),
            Expr::Param(i) => env.params.get(*i).cloned().unwrap_or(Value::Null),
            Expr::Agg(i) => aggs.get(*i).cloned().unwrap_or(Value::Null),
            Expr::InsertValue(i) => env
                .insert_row
                .and_then(|r| r.get(*i))
                .cloned()
                .unwrap_or(Value::Null),
            Expr::Neg(x) => {
                let v = x.eval_with(row, aggs, env)?;
                match num_of(&v) {
                    None => Value::Null,
                    Some(Num::Int(i)) => {
                        int_value(-i).unwrap_or_else(|_| Value::Decimal((-i).to_string()))
                    }
                    Some(Num::Dec(d)) => Value::Decimal(d.neg().to_string()),
                    Some(Num::Dbl(d)) => Value::Double(-d),
                }
            }
            Expr::Not(x) => bool_value(truth(&x.eval_with(row, aggs, env)?).map(|b| !b)),
            Expr::BitNot(x) => match to_i128(&x.eval_with(row, aggs, env)?) {
                None => Value::Null,
                Some(i) => Value::UInt(!(i as u64)),
            },
            Expr::Bin(op, l, r) => return self.binary(*op, l, r, row, aggs, env),
            Expr::IsNull(x, neg) => {
                let n = x.eval_with(row, aggs, env)? == Value::Null;
                Value::Int((n != *neg) as i64)
            }
            Expr::IsBool(x, want, neg) => {
                let t = truth(&x.eval_with(row, aggs, env)?);
                Value::Int(((t == Some(*want)) != *neg) as i64)
            }
            Expr::In(x, list, neg) => {
                let v = x.eval_with(row, aggs, env)?;
                if v == Value::Null {
                    return Ok(Value::Null);
                }
                let mut saw_null = false;
                for item in list {
                    let w = item.eval_with(row, aggs, env)?;
                    match compare(&v, &w) {
                        Some(Ordering::Equal) => return Ok(Value::Int(!*neg as i64)),
                        None => saw_null = true,
                        _ => {}
                    }
                }
                if saw_null {
                    Value::Null
                } else {
                    Value::Int(*neg as i64)
                }
            }
            Expr::Between(x, lo, hi, neg) => {
                let v = x.eval_with(row, aggs, env)?;
                let a = lo.eval_with(row, aggs, env)?;
                let b = hi.eval_with(row, aggs, env)?;
                let ge = compare(&v, &a).map(|o| o != Ordering::Less);
                let le = compare(&v, &b).map(|o| o != Ordering::Greater);
                let r = match (ge, le) {
                    (Some(false), _) | (_, Some(false)) => Some(false),
                    (Some(true), Some(true)) => Some(true),
                    _ => None,
                };
                bool_value(r.map(|b| b != *neg))
            }
            Expr::Like(x, p, esc, neg) => {
                let v = x.eval_with(row, aggs, env)?;
                let pv = p.eval_with(row, aggs, env)?;
                if v == Value::Null || pv == Value::Null {
                    return Ok(Value::Null);
                }
                let m = like_match(&text_of(&v), &text_of(&pv), *esc);
                Value::Int((m != *neg) as i64)
            }
            Expr::Case(op, whens, el) => {
                let base = match op {
                    Some(o) => Some(o.eval_with(row, aggs, env)?),
                    None => None,
                };
                for (c, r) in whens {
                    let cv = c.eval_with(row, aggs, env)?;
                    let hit = match &base {
                        Some(b) => compare(b, &cv) == Some(Ordering::Equal),
                        None => truth(&cv) == Some(true),
                    };
                    if hit {
                        return r.eval_with(row, aggs, env);
                    }
                }
                match el {
                    Some(e) => e.eval_with(row, aggs, env)?,
                    None => Value::Null,
                }
            }
            Expr::Cast(x, to) => cast(x.eval_with(row, aggs, env)?, *to)?,
            Expr::SysVar(name, scope) => get_var(env.session, name, *scope)?,
            Expr::UserVar(name) => env
                .session
                .user_vars
                .get(name)
                .cloned()
                .unwrap_or(Value::Null),
            Expr::Func(f, args) => return self.func(*f, args, row, aggs, env),
        })
    }

    fn binary(
        &self,
        op: BinOp,
        l: &Expr,
        r: &Expr,
        row: &[Value],
        aggs: &[Value],
        env: &Env,
    ) -> Result<Value, SqlError> {
        match op {
            BinOp::And => {
                let a = truth(&l.eval_with(row, aggs, env)?);
                if a == Some(false) {
                    return Ok(Value::Int(0));
                }
                let b = truth(&r.eval_with(row, aggs, env)?);
                return Ok(match (a, b) {
                    (_, Some(false)) => Value::Int(0),
                    (Some(true), Some(true)) => Value::Int(1),
                    _ => Value::Null,
                });
            }
            BinOp::Or => {
                let a = truth(&l.eval_with(row, aggs, env)?);
                if a == Some(true) {
                    return Ok(Value::Int(1));
                }
                let b = truth(&r.eval_with(row, aggs, env)?);
                return Ok(match (a, b) {
                    (_, Some(true)) => Value::Int(1),
                    (Some(false), Some(false)) => Value::Int(0),
                    _ => Value::Null,
                });
            }
            _ => {}
        }
        let a = l.eval_with(row, aggs, env)?;
        let b = r.eval_with(row, aggs, env)?;
        binary_values(op, &a, &b)
    }

    fn func(
        &self,
        f: Func,
        args: &[Expr],
        row: &[Value],
        aggs: &[Value],
        env: &Env,
    ) -> Result<Value, SqlError> {
        // Lazy-argument functions first.
        match f {
            Func::Coalesce => {
                for a in args {
                    let v = a.eval_with(row, aggs, env)?;
                    if v != Value::Null {
                        return Ok(v);
                    }
                }
                return Ok(Value::Null);
            }
            Func::IfNull => {
                let v = args[0].eval_with(row, aggs, env)?;
                return if v == Value::Null {
                    args[1].eval_with(row, aggs, env)
                } else {
                    Ok(v)
                };
            }
            Func::If => {
                let c = truth(&args[0].eval_with(row, aggs, env)?);
                return if c == Some(true) {
                    args[1].eval_with(row, aggs, env)
                } else {
                    args[2].eval_with(row, aggs, env)
                };
            }
            _ => {}
        }
        let mut vals = Vec::with_capacity(args.len());
        for a in args {
            vals.push(a.eval_with(row, aggs, env)?);
        }
        call(f, vals, env)
    }
}

/// Arithmetic and comparison on two values.
pub(crate) fn binary_values(op: BinOp, a: &Value, b: &Value) -> Result<Value, SqlError> {
    let cmp = |want: fn(Ordering) -> bool| -> Value { bool_value(compare(a, b).map(want)) };
    Ok(match op {
        BinOp::Eq => cmp(|o| o == Ordering::Equal),
        BinOp::Ne => cmp(|o| o != Ordering::Equal),
        BinOp::Lt => cmp(|o| o == Ordering::Less),
        BinOp::Le => cmp(|o| o != Ordering::Greater),
        BinOp::Gt => cmp(|o| o == Ordering::Greater),
        BinOp::Ge => cmp(|o| o != Ordering::Less),
        BinOp::NullEq => Value::Int(match (a, b) {
            (Value::Null, Value::Null) => 1,
            (Value::Null, _) | (_, Value::Null) => 0,
            _ => (compare(a, b) == Some(Ordering::Equal)) as i64,
        }),
        BinOp::Xor => match (truth(a), truth(b)) {
            (Some(x), Some(y)) => Value::Int((x != y) as i64),
            _ => Value::Null,
        },
        BinOp::And | BinOp::Or => {
            let (x, y) = (truth(a), truth(b));
            if op == BinOp::And {
                match (x, y) {
                    (Some(false), _) | (_, Some(false)) => Value::Int(0),
                    (Some(true), Some(true)) => Value::Int(1),
                    _ => Value::Null,
                }
            } else {
                match (x, y) {
                    (Some(true), _) | (_, Some(true)) => Value::Int(1),
                    (Some(false), Some(false)) => Value::Int(0),
                    _ => Value::Null,
                }
            }
        }
        BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor | BinOp::Shl | BinOp::Shr => {
            let (Some(x), Some(y)) = (to_i128(a), to_i128(b)) else {
                return Ok(Value::Null);
            };
            let (x, y) = (x as u64, y as u64);
            Value::UInt(match op {
                BinOp::BitAnd => x & y,
                BinOp::BitOr => x | y,
                BinOp::BitXor => x ^ y,
                BinOp::Shl => x.checked_shl(y as u32).unwrap_or(0),
                _ => x.checked_shr(y as u32).unwrap_or(0),
            })
        }
        BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::IntDiv | BinOp::Mod => {
            let (Some(x), Some(y)) = (num_of(a), num_of(b)) else {
                return Ok(Value::Null);
            };
            arith(op, x, y, a, b)?
        }
    })
}

/// How MariaDB prints an arithmetic operator in an error message.
fn op_text(op: BinOp) -> &'static str {
    match op {
        BinOp::Add => "+",
        BinOp::Sub => "-",
        BinOp::Mul => "*",
        BinOp::Div => "/",
        BinOp::IntDiv => "DIV",
        _ => "%",
    }
}

/// Division by zero: NULL and warning 1365, as MariaDB answers in a SELECT.
fn div_by_zero() -> Result<Value, SqlError> {
    warn("Warning", 1365, "Division by 0".to_string());
    Ok(Value::Null)
}

/// Arithmetic with MariaDB's overflow rules: an integer result is BIGINT UNSIGNED when an
/// operand is unsigned, else BIGINT, and out of that range is error 1690; a DECIMAL result
/// past [`DEC_MAX_DIGITS`] and a DOUBLE result that is not finite are 1690 too.
fn arith(op: BinOp, x: Num, y: Num, a: &Value, b: &Value) -> Result<Value, SqlError> {
    let text = || format!("{} {} {}", sql_text(a), op_text(op), sql_text(b));
    let unsigned = matches!(a, Value::UInt(_)) || matches!(b, Value::UInt(_));
    let int_result = |r: Option<i128>| -> Result<Value, SqlError> {
        match r {
            Some(r) if unsigned && (0..=i128::from(u64::MAX)).contains(&r) => {
                Ok(Value::UInt(r as u64))
            }
            Some(r) if !unsigned && i64::try_from(r).is_ok() => Ok(Value::Int(r as i64)),
            _ if unsigned => Err(out_of_range("BIGINT UNSIGNED", &text())),
            _ => Err(out_of_range("BIGINT", &text())),
        }
    };
    if let (Num::Int(i), Num::Int(j)) = (x, y) {
        return match op {
            BinOp::Add => int_result(i.checked_add(j)),
            BinOp::Sub => int_result(i.checked_sub(j)),
            BinOp::Mul => int_result(i.checked_mul(j)),
            BinOp::IntDiv if j == 0 => div_by_zero(),
            BinOp::IntDiv => int_result(Some(i / j)),
            BinOp::Mod if j == 0 => div_by_zero(),
            BinOp::Mod => int_value(i % j),
            _ if j == 0 => div_by_zero(),
            _ => match Dec::from_int(i).div(Dec::from_int(j)) {
                Some(d) => Ok(Value::Decimal(d.to_string())),
                None => Err(out_of_range("DECIMAL", &text())),
            },
        };
    }
    if let (Some(p), Some(q)) = (num_dec(x), num_dec(y)) {
        if matches!(op, BinOp::Div | BinOp::IntDiv | BinOp::Mod) && q.m.is_zero() {
            return div_by_zero();
        }
        let s = p.s.max(q.s);
        let r = match op {
            BinOp::Add => p.add(q),
            BinOp::Sub => p.add(q.neg()),
            BinOp::Mul => p.mul(q),
            BinOp::Div => p.div(q),
            BinOp::IntDiv => {
                let quot = p
                    .rescale(s)
                    .zip(q.rescale(s))
                    .and_then(|(a, b)| a.m.div_rem(b.m));
                return int_result(quot.and_then(|(q, _)| q.to_i128()));
            }
            _ => p
                .rescale(s)
                .zip(q.rescale(s))
                .and_then(|(a, b)| a.m.div_rem(b.m))
                .map(|(_, r)| Dec { m: r, s }),
        };
        return match r {
            Some(d) => Ok(Value::Decimal(d.to_string())),
            None => Err(out_of_range("DECIMAL", &text())),
        };
    }
    let (fa, fb) = (num_f64(x), num_f64(y));
    if matches!(op, BinOp::Div | BinOp::Mod | BinOp::IntDiv) && fb == 0.0 {
        return div_by_zero();
    }
    if op == BinOp::IntDiv {
        let q = (fa / fb).trunc();
        return int_result((q.abs() < 1.8e19).then_some(q as i128));
    }
    let r = arith_f(op, fa, fb);
    if !r.is_finite() {
        return Err(out_of_range("DOUBLE", &text()));
    }
    Ok(Value::Double(r))
}

fn arith_f(op: BinOp, a: f64, b: f64) -> f64 {
    match op {
        BinOp::Add => a + b,
        BinOp::Sub => a - b,
        BinOp::Mul => a * b,
        BinOp::Div => a / b,
        _ => a % b,
    }
}

fn str_val(v: Vec<u8>) -> Value {
    Value::Bytes(v)
}

fn lossy(v: &Value) -> String {
    String::from_utf8_lossy(&text_of(v)).into_owned()
}

fn call(f: Func, mut v: Vec<Value>, env: &Env) -> Result<Value, SqlError> {
    let any_null = v.contains(&Value::Null);
    let null_in = |fs: &[Func]| fs.contains(&f) && any_null;
    if null_in(&[
        Func::Concat,
        Func::Length,
        Func::CharLength,
        Func::Upper,
        Func::Lower,
        Func::Substring,
        Func::Left,
        Func::Right,
        Func::Trim,
        Func::LTrim,
        Func::RTrim,
        Func::TrimLeading,
        Func::TrimTrailing,
        Func::Replace,
        Func::Repeat,
        Func::Reverse,
        Func::LPad,
        Func::RPad,
        Func::Abs,
        Func::Round,
        Func::Truncate,
        Func::Floor,
        Func::Ceil,
        Func::Mod,
        Func::Greatest,
        Func::Least,
        Func::DateFormat,
        Func::Hex,
        Func::Pow,
        Func::Sqrt,
        Func::Sign,
        Func::Year,
        Func::Month,
        Func::Day,
        Func::Hour,
        Func::Minute,
        Func::Second,
        Func::Date,
        Func::Ascii,
        Func::Locate,
        Func::Instr,
        Func::Space,
        Func::FromUnixtime,
    ]) {
        return Ok(Value::Null);
    }
    let int = |x: &Value| to_i128(x).unwrap_or(0);
    Ok(match f {
        Func::Concat => {
            let parts: Vec<Vec<u8>> = v.iter().map(text_of).collect();
            let len: u64 = parts.iter().map(|p| p.len() as u64).sum();
            if !env.session.guard.string_fits("concat", len) {
                return Ok(Value::Null);
            }
            str_val(parts.concat())
        }
        Func::ConcatWs => {
            if v[0] == Value::Null {
                return Ok(Value::Null);
            }
            let sep = text_of(&v[0]);
            let parts: Vec<Vec<u8>> = v[1..]
                .iter()
                .filter(|x| **x != Value::Null)
                .map(text_of)
                .collect();
            let len: u64 = parts.iter().map(|p| p.len() as u64).sum::<u64>()
                + (sep.len() as u64).saturating_mul(parts.len().saturating_sub(1) as u64);
            if !env.session.guard.string_fits("concat_ws", len) {
                return Ok(Value::Null);
            }
            str_val(parts.join(&sep[..]))
        }
        Func::Length => Value::Int(text_of(&v[0]).len() as i64),
        Func::CharLength => Value::Int(lossy(&v[0]).chars().count() as i64),
        Func::Upper => str_val(lossy(&v[0]).to_uppercase().into_bytes()),
        Func::Lower => str_val(lossy(&v[0]).to_lowercase().into_bytes()),
        Func::Substring => {
            let s: Vec<char> = lossy(&v[0]).chars().collect();
            let n = s.len() as i128;
            let pos = int(&v[1]);
            let start = if pos > 0 {
                pos - 1
            } else if pos < 0 {
                n + pos
            } else {
                return Ok(str_val(Vec::new()));
            };
            if start < 0 || start >= n {
                return Ok(str_val(Vec::new()));
            }
            let len = if v.len() > 2 { int(&v[2]).max(0) } else { n };
            let end = (start + len).min(n);
            str_val(
                s[start as usize..end as usize]
                    .iter()
                    .collect::<String>()
                    .into_bytes(),
            )
        }
        Func::Left | Func::Right => {
            let s: Vec<char> = lossy(&v[0]).chars().collect();
            let k = (int(&v[1]).max(0) as usize).min(s.len());
            let part: String = if f == Func::Left {
                s[..k].iter().collect()
            } else {
                s[s.len() - k..].iter().collect()
            };
            str_val(part.into_bytes())
        }
        Func::Trim | Func::LTrim | Func::RTrim | Func::TrimLeading | Func::TrimTrailing => {
            let s = text_of(&v[0]);
            let what = if v.len() > 1 {
                text_of(&v[1])
            } else {
                b" ".to_vec()
            };
            let mut a = 0;
            let mut b = s.len();
            let lead = matches!(f, Func::Trim | Func::LTrim | Func::TrimLeading);
            let trail = matches!(f, Func::Trim | Func::RTrim | Func::TrimTrailing);
            if !what.is_empty() {
                if lead {
                    while b - a >= what.len() && s[a..].starts_with(&what) {
                        a += what.len();
                    }
                }
                if trail {
                    while b - a >= what.len() && s[..b].ends_with(&what) {
                        b -= what.len();
                    }
                }
            }
            str_val(s[a..b].to_vec())
        }
        Func::Replace => {
            let s = lossy(&v[0]);
            let from = lossy(&v[1]);
            let to = lossy(&v[2]);
            if from.is_empty() {
                str_val(s.into_bytes())
            } else {
                let hits = s.matches(from.as_str()).count() as u64;
                let len = (s.len() as u64 - hits * from.len() as u64)
                    .saturating_add(hits.saturating_mul(to.len() as u64));
                if !env.session.guard.string_fits("replace", len) {
                    return Ok(Value::Null);
                }
                str_val(s.replace(&from, &to).into_bytes())
            }
        }
        Func::Repeat => {
            let n = int(&v[1]).clamp(0, i128::from(u32::MAX)) as u64;
            let s = text_of(&v[0]);
            if s.is_empty() || n == 0 {
                return Ok(str_val(Vec::new()));
            }
            if !env
                .session
                .guard
                .string_fits("repeat", (s.len() as u64).saturating_mul(n))
            {
                return Ok(Value::Null);
            }
            str_val(s.repeat(n as usize))
        }
        Func::Reverse => str_val(lossy(&v[0]).chars().rev().collect::<String>().into_bytes()),
        Func::LPad | Func::RPad => {
            let s: Vec<char> = lossy(&v[0]).chars().collect();
            let n = int(&v[1]);
            if n < 0 {
                return Ok(Value::Null);
            }
            let name = if f == Func::LPad { "lpad" } else { "rpad" };
            // At least one byte per character: a count past the cap cannot fit.
            if !env
                .session
                .guard
                .string_fits(name, n.min(i128::from(u64::MAX)) as u64)
            {
                return Ok(Value::Null);
            }
            let n = n as usize;
            let pad: Vec<char> = lossy(&v[2]).chars().collect();
            if s.len() >= n {
                return Ok(str_val(s[..n].iter().collect::<String>().into_bytes()));
            }
            if pad.is_empty() {
                return Ok(Value::Null);
            }
            let fill: String = pad.iter().cycle().take(n - s.len()).collect();
            let body: String = s.iter().collect();
            if !env
                .session
                .guard
                .string_fits(name, (fill.len() + body.len()) as u64)
            {
                return Ok(Value::Null);
            }
            str_val(
                if f == Func::LPad {
                    fill + &body
                } else {
                    body + &fill
                }
                .into_bytes(),
            )
        }
        Func::NullIf => {
            if compare(&v[0], &v[1]) == Some(Ordering::Equal) {
                Value::Null
            } else {
                v.swap_remove(0)
            }
        }
        Func::Abs => match num_of(&v[0]) {
            Some(Num::Int(i)) if i == i128::from(i64::MIN) && matches!(v[0], Value::Int(_)) => {
                return Err(out_of_range("BIGINT", &format!("abs({})", sql_text(&v[0]))))
            }
            Some(Num::Int(i)) => int_value(i.abs())?,
            Some(Num::Dec(d)) => Value::Decimal(
                Dec {
                    m: d.m.abs(),
                    s: d.s,
                }
                .to_string(),
            ),
            Some(Num::Dbl(d)) => Value::Double(d.abs()),
            None => Value::Null,
        },
        Func::Round | Func::Truncate => {
            let places = if v.len() > 1 { int(&v[1]) } else { 0 }.clamp(-81, 30);
            match num_of(&v[0]) {
                Some(Num::Dbl(d)) => {
                    let p = 10f64.powi(places as i32);
                    let x = d * p;
                    Value::Double(
                        if f == Func::Round {
                            x.round()
                        } else {
                            x.trunc()
                        } / p,
                    )
                }
                Some(n) => {
                    let d = num_dec(n).unwrap_or(Dec::from_int(0));
                    let r = round_dec(d, places as i64, f == Func::Round).unwrap_or(d);
                    if matches!(n, Num::Int(_)) {
                        wide_int_value(r.rescale(0).map_or(Wide::ZERO, |x| x.m))
                    } else {
                        Value::Decimal(r.to_string())
                    }
                }
                None => Value::Null,
            }
        }
        Func::Floor | Func::Ceil => match num_of(&v[0]) {
            Some(Num::Int(i)) => int_value(i)?,
            Some(Num::Dec(d)) => {
                let floor = d.floor_or_trunc(true).unwrap_or(Wide::ZERO);
                let exact = Dec { m: floor, s: 0 }.cmp(d) == Ordering::Equal;
                wide_int_value(if f == Func::Floor || exact {
                    floor
                } else {
                    floor.checked_add(Wide::from_i128(1)).unwrap_or(floor)
                })
            }
            Some(Num::Dbl(d)) => Value::Double(if f == Func::Floor {
                d.floor()
            } else {
                d.ceil()
            }),
            None => Value::Null,
        },
        Func::Mod => binary_values(BinOp::Mod, &v[0], &v[1])?,
        Func::Greatest | Func::Least => {
            let mut best = v[0].clone();
            for x in &v[1..] {
                let o = compare(x, &best).unwrap_or(Ordering::Equal);
                if (f == Func::Greatest && o == Ordering::Greater)
                    || (f == Func::Least && o == Ordering::Less)
                {
                    best = x.clone();
                }
            }
            best
        }
        Func::Now => {
            let (s, us) = env.session.statement_time();
            let fsp = v.first().map_or(0, |x| int(x).clamp(0, 6) as u32);
            let unit = 10u32.pow(6 - fsp);
            datetime_from_unix(s, us - us % unit)
        }
        Func::CurDate => {
            let (s, _) = env.session.statement_time();
            let (y, m, d) = civil_from_days(s.div_euclid(86400));
            Value::Date {
                year: y as u16,
                month: m as u8,
                day: d as u8,
            }
        }
        Func::CurTime => {
            let (s, _) = env.session.statement_time();
            let r = s.rem_euclid(86400);
            Value::Time {
                negative: false,
                hours: (r / 3600) as u16,
                minutes: (r / 60 % 60) as u8,
                seconds: (r % 60) as u8,
                micros: 0,
            }
        }
        Func::UnixTimestamp => match v.first() {
            None => Value::Int(env.session.statement_time().0),
            Some(Value::Null) => Value::Null,
            Some(x) => match unix_of(x) {
                Some((s, 0)) => Value::Int(s),
                Some((s, us)) => Value::Decimal(
                    Dec {
                        m: Wide::from_i128(i128::from(s) * 1_000_000 + i128::from(us)),
                        s: 6,
                    }
                    .to_string(),
                ),
                None => Value::Int(0),
            },
        },
        Func::FromUnixtime => datetime_from_unix(int(&v[0]) as i64, 0),
        Func::DateFormat => match date_format(&v[0], &text_of(&v[1])) {
            Some(b) => str_val(b),
            None => Value::Null,
        },
        Func::Database => match &env.session.current_db {
            Some(d) => str_val(d.as_bytes().to_vec()),
            None => Value::Null,
        },
        Func::User | Func::CurrentUser => {
            str_val(format!("{}@{}", env.session.user, env.session.host).into_bytes())
        }
        Func::Version => str_val(env.session.server.config.version.as_bytes().to_vec()),
        Func::ConnectionId => Value::UInt(u64::from(env.session.connection_id)),
        Func::LastInsertId => match v.first() {
            Some(x) => x.clone(),
            None => Value::UInt(env.session.last_insert_id),
        },
        Func::FoundRows => Value::UInt(env.session.found_rows),
        Func::RowCount => Value::Int(env.session.row_count),
        Func::IsNull => Value::Int((v[0] == Value::Null) as i64),
        Func::Hex => match &v[0] {
            Value::Bytes(b) => str_val(
                b.iter()
                    .map(|x| format!("{x:02X}"))
                    .collect::<String>()
                    .into_bytes(),
            ),
            other => str_val(format!("{:X}", int(other) as u64).into_bytes()),
        },
        Func::Pow => {
            let r = to_f64(&v[0])
                .unwrap_or(0.0)
                .powf(to_f64(&v[1]).unwrap_or(0.0));
            if r.is_finite() {
                Value::Double(r)
            } else {
                Value::Null
            }
        }
        Func::Sqrt => {
            let x = to_f64(&v[0]).unwrap_or(0.0);
            if x < 0.0 {
                Value::Null
            } else {
                Value::Double(x.sqrt())
            }
        }
        Func::Sign => Value::Int(match to_f64(&v[0]) {
            Some(x) if x > 0.0 => 1,
            Some(x) if x < 0.0 => -1,
            _ => 0,
        }),
        Func::Pi => Value::Double(std::f64::consts::PI),
        Func::Rand => {
            let (s, us) = now_unix();
            let mut x = (s as u64) ^ (u64::from(us) << 20) ^ 0x9E37_79B9_7F4A_7C15;
            x ^= x >> 33;
            x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
            x ^= x >> 33;
            Value::Double((x >> 11) as f64 / (1u64 << 53) as f64)
        }
        Func::Sleep => {
            // Interruptible: KILL, max_statement_time and a client disconnect end it.
            let secs = to_f64(&v[0]).unwrap_or(0.0).clamp(0.0, 3600.0);
            let guard = &env.session.guard;
            guard.set_state("User sleep");
            guard.sleep(std::time::Duration::from_secs_f64(secs))?;
            guard.set_state("Sending data");
            Value::Int(0)
        }
        Func::Year | Func::Month | Func::Day | Func::Hour | Func::Minute | Func::Second => {
            if let (
                Func::Hour | Func::Minute | Func::Second,
                Value::Time {
                    hours,
                    minutes,
                    seconds,
                    ..
                },
            ) = (f, &v[0])
            {
                return Ok(Value::Int(match f {
                    Func::Hour => i64::from(*hours),
                    Func::Minute => i64::from(*minutes),
                    _ => i64::from(*seconds),
                }));
            }
            match date_parts(&v[0]) {
                Some((y, m, d, h, mi, s, _)) => Value::Int(match f {
                    Func::Year => y,
                    Func::Month => i64::from(m),
                    Func::Day => i64::from(d),
                    Func::Hour => i64::from(h),
                    Func::Minute => i64::from(mi),
                    _ => i64::from(s),
                }),
                None => Value::Null,
            }
        }
        Func::Date => match date_parts(&v[0]) {
            Some((y, m, d, ..)) => Value::Date {
                year: y as u16,
                month: m as u8,
                day: d as u8,
            },
            None => Value::Null,
        },
        Func::Ascii => Value::Int(i64::from(text_of(&v[0]).first().copied().unwrap_or(0))),
        Func::Locate | Func::Instr => {
            let (needle, hay) = if f == Func::Locate {
                (lossy(&v[0]), lossy(&v[1]))
            } else {
                (lossy(&v[1]), lossy(&v[0]))
            };
            Value::Int(match hay.find(&needle) {
                Some(i) => hay[..i].chars().count() as i64 + 1,
                None => 0,
            })
        }
        Func::Space => {
            let n = int(&v[0]).clamp(0, i128::from(u64::MAX)) as u64;
            if !env.session.guard.string_fits("space", n) {
                return Ok(Value::Null);
            }
            str_val(vec![b' '; n as usize])
        }
        Func::Coalesce | Func::IfNull | Func::If => Value::Null,
    })
}

/// CAST(v AS to).
pub(crate) fn cast(v: Value, to: CastTo) -> Result<Value, SqlError> {
    if v == Value::Null {
        return Ok(v);
    }
    Ok(match to {
        CastTo::Signed => cast_int(&v, false),
        CastTo::Unsigned => cast_int(&v, true),
        CastTo::Char | CastTo::Binary => Value::Bytes(text_of(&v)),
        CastTo::Double => Value::Double(to_f64(&v).unwrap_or(0.0)),
        CastTo::Decimal(p, s) => cast_decimal(&v, p, s),
        CastTo::Date => match date_parts(&v) {
            Some((y, m, d, ..)) => Value::Date {
                year: y as u16,
                month: m as u8,
                day: d as u8,
            },
            None => Value::Null,
        },
        CastTo::DateTime => match date_parts(&v) {
            Some((y, m, d, h, mi, s, us)) => Value::DateTime {
                year: y as u16,
                month: m as u8,
                day: d as u8,
                hour: h as u8,
                minute: mi as u8,
                second: s as u8,
                micros: us,
            },
            None => Value::Null,
        },
        CastTo::Time => match &v {
            Value::Time { .. } => v,
            Value::Bytes(b) => std::str::from_utf8(b)
                .ok()
                .and_then(parse_time)
                .unwrap_or(Value::Null),
            other => match date_parts(other) {
                Some((_, _, _, h, mi, s, us)) => Value::Time {
                    negative: false,
                    hours: h as u16,
                    minutes: mi as u8,
                    seconds: s as u8,
                    micros: us,
                },
                None => Value::Null,
            },
        },
    })
}

/// The digits of a string's leading number (sign, digits, fraction, exponent), and whether
/// anything but spaces follows it.
pub(crate) fn number_prefix(b: &[u8], int_only: bool) -> (String, bool) {
    let t = String::from_utf8_lossy(b);
    let t = t.trim_start_matches([' ', '\t', '\n', '\r']);
    let bytes = t.as_bytes();
    let mut i = 0;
    if matches!(bytes.first(), Some(b'-' | b'+')) {
        i = 1;
    }
    let digits = |mut j: usize| {
        while j < bytes.len() && bytes[j].is_ascii_digit() {
            j += 1;
        }
        j
    };
    let int_end = digits(i);
    let mut end = int_end;
    if !int_only && bytes.get(end) == Some(&b'.') {
        end = digits(end + 1);
    }
    if !int_only && end > i && matches!(bytes.get(end), Some(b'e' | b'E')) {
        let mut j = end + 1;
        if matches!(bytes.get(j), Some(b'-' | b'+')) {
            j += 1;
        }
        if bytes.get(j).is_some_and(u8::is_ascii_digit) {
            end = digits(j);
        }
    }
    let rest = &t[end..];
    (t[..end].to_string(), end == i || !rest.trim().is_empty())
}

/// Warning 1292 "Truncated incorrect <what> value" when a string is not entirely a number.
fn truncated_check(b: &[u8], what: &str) -> bool {
    let (_, bad) = number_prefix(b, what == "INTEGER");
    let spaces = !bad && b.last().is_some_and(|c| c.is_ascii_whitespace());
    if bad || spaces {
        warn(
            if bad { "Warning" } else { "Note" },
            1292,
            format!(
                "Truncated incorrect {what} value: '{}'",
                String::from_utf8_lossy(b)
            ),
        );
    }
    bad
}

/// CAST(v AS SIGNED / UNSIGNED) with MariaDB's clipping, wrapping and conditions (1292 for
/// strings that are not integers or past the 64-bit range, 1916 for DECIMAL/DOUBLE
/// overflow, note 1105 for a sign change).
fn cast_int(v: &Value, unsigned: bool) -> Value {
    let target = if unsigned { "UNSIGNED" } else { "SIGNED" };
    let overflow = |what: &str, level: &str| {
        warn(
            level,
            1916,
            format!(
                "Got overflow when converting '{}' to {what}. Value truncated",
                String::from_utf8_lossy(&text_of(v))
            ),
        )
    };
    let wrap = |i: i128| -> Value {
        if unsigned {
            if i < 0 {
                warn(
                    "Note",
                    1105,
                    "Cast to unsigned converted negative integer to it's positive complement"
                        .into(),
                );
            }
            Value::UInt(i as u64)
        } else {
            if i > i128::from(i64::MAX) {
                warn("Note", 1105, "Cast to signed converted positive out-of-range integer to it's negative complement".into());
            }
            Value::Int(i as u64 as i64)
        }
    };
    match v {
        Value::Null => Value::Null,
        Value::Int(i) => wrap(i128::from(*i)),
        Value::UInt(u) if !unsigned => Value::Int(*u as i64),
        Value::UInt(u) => Value::UInt(*u),
        Value::Bytes(b) => {
            let bad = truncated_check(b, "INTEGER");
            let (p, _) = number_prefix(b, true);
            let neg = p.starts_with('-');
            let digits = p.trim_start_matches(['-', '+']);
            let i = match digits.parse::<i128>() {
                Ok(i) if i <= i128::from(u64::MAX) => Some(if neg { -i } else { i }),
                Err(_) if digits.is_empty() => Some(0),
                _ => None,
            };
            let i = match i {
                Some(i) if i >= i128::from(i64::MIN) => i,
                _ => {
                    if !bad {
                        truncated_warning(b);
                    }
                    let clip = if neg {
                        i128::from(i64::MIN)
                    } else {
                        i128::from(u64::MAX)
                    };
                    return if unsigned {
                        Value::UInt(clip as u64)
                    } else {
                        Value::Int(clip as i64)
                    };
                }
            };
            if neg && i == 0 && unsigned {
                warn(
                    "Note",
                    1105,
                    "Cast to unsigned converted negative integer to it's positive complement"
                        .into(),
                );
            }
            wrap(i)
        }
        Value::Decimal(_) => {
            let n = to_i128(v).unwrap_or(0);
            let (lo, hi, what) = if unsigned {
                (0, i128::from(u64::MAX), "UNSIGNED INT")
            } else {
                (i128::from(i64::MIN), i128::from(i64::MAX), "INT")
            };
            if n < lo || n > hi {
                // MariaDB rounds first: -0.4 is 0, no overflow.
                overflow(what, "Warning");
            }
            let c = n.clamp(lo, hi);
            if unsigned {
                Value::UInt(c as u64)
            } else {
                Value::Int(c as i64)
            }
        }
        Value::Float(_) | Value::Double(_) => {
            let d = to_f64(v).unwrap_or(0.0).round_ties_even();
            let (lo, hi) = if unsigned {
                (0.0, 1.8446744073709552e19)
            } else {
                (-9.223372036854776e18, 9.223372036854776e18)
            };
            if d < lo || d >= hi {
                overflow(&format!("{target} BIGINT"), "Note");
                return match (unsigned, d < lo) {
                    (true, true) => Value::UInt(0),
                    (true, false) => Value::UInt(u64::MAX),
                    (false, true) => Value::Int(i64::MIN),
                    (false, false) => Value::Int(i64::MAX),
                };
            }
            if unsigned {
                Value::UInt(d as u64)
            } else {
                Value::Int(d as i64)
            }
        }
        other => wrap(to_i128(other).unwrap_or(0)),
    }
}

fn truncated_warning(b: &[u8]) {
    warn(
        "Warning",
        1292,
        format!(
            "Truncated incorrect INTEGER value: '{}'",
            String::from_utf8_lossy(b)
        ),
    );
}

/// CAST(v AS DECIMAL(p,s)): rounded to `s` digits, clipped to the largest value of the type
/// with warning 1264 (named as MariaDB does, by the CAST's text), 1292 for a string that is
/// not a number.
fn cast_decimal(v: &Value, p: u8, s: u8) -> Value {
    let d = match v {
        Value::Bytes(b) => {
            truncated_check(b, "DECIMAL");
            let (t, _) = number_prefix(b, false);
            Dec::parse(&t).or_else(|| {
                let x: f64 = t.parse().unwrap_or(0.0);
                Dec::parse(&format!("{x:.*}", usize::from(s) + 1))
            })
        }
        other => match num_of(other) {
            Some(Num::Dbl(x)) if x.is_finite() && x.abs() < 1e80 => {
                Dec::parse(&format!("{x:.*}", usize::from(s) + 1))
            }
            Some(Num::Dbl(x)) => Some(
                Dec::from_int(if x < 0.0 { -1 } else { 1 })
                    .mul(Dec {
                        m: pow10(80).unwrap_or(Wide::ZERO),
                        s: 0,
                    })
                    .unwrap_or(Dec::from_int(0)),
            ),
            Some(n) => num_dec(n),
            None => None,
        },
    };
    let d = d.unwrap_or(Dec::from_int(0));
    let s32 = u32::from(s);
    let max = Dec {
        m: pow10(u32::from(p))
            .unwrap_or(Wide::ZERO)
            .checked_sub(Wide::from_i128(1))
            .unwrap_or(Wide::ZERO),
        s: s32,
    };
    let r = d.rescale(s32).filter(|r| r.m.abs() <= max.m);
    let r = match r {
        Some(r) => r,
        None => {
            warn(
                "Warning",
                1264,
                format!(
                    "Out of range value for column 'CAST({} AS DECIMAL({p},{s}))' at row 1",
                    sql_text(v)
                ),
            );
            if d.m.is_negative() {
                max.neg()
            } else {
                max
            }
        }
    };
    Value::Decimal(r.to_string())
}

/// Converts a value to what a column of type `ty` stores, the way MySQL converts on
/// INSERT/UPDATE (strings to numbers and dates, numbers to strings, rounding); range and
/// length checks are the engine's (`SqlType::coerce`). Returns the value unchanged when no
/// conversion applies (the engine then reports the error).
pub(crate) fn convert_for_column(v: Value, ty: &SqlType, column: &str) -> Result<Value, SqlError> {
    use SqlType as T;
    if v == Value::Null {
        return Ok(v);
    }
    let bad = |v: &Value| {
        SqlError::of(
            errors::ER_TRUNCATED_WRONG_VALUE_FOR_FIELD,
            format!(
                "Incorrect {} value: '{}' for column `{column}` at row 1",
                type_word(ty),
                String::from_utf8_lossy(&text_of(v))
            ),
        )
    };
    Ok(match ty {
        T::TinyInt { .. }
        | T::SmallInt { .. }
        | T::MediumInt { .. }
        | T::Int { .. }
        | T::BigInt { .. } => match &v {
            Value::Int(_) | Value::UInt(_) => v,
            Value::Bytes(b) => {
                let s = String::from_utf8_lossy(b);
                let t = s.trim();
                if let Ok(i) = t.parse::<i64>() {
                    Value::Int(i)
                } else if let Ok(u) = t.parse::<u64>() {
                    Value::UInt(u)
                } else if let Ok(d) = t.parse::<f64>() {
                    float_to_int(d)
                } else {
                    return Err(bad(&v));
                }
            }
            Value::Double(d) => float_to_int(*d),
            Value::Float(d) => float_to_int(f64::from(*d)),
            Value::Decimal(_) => match to_i128(&v) {
                Some(i) => int_value(i).unwrap_or(Value::Double(i as f64)),
                None => return Err(bad(&v)),
            },
            Value::Year(y) => Value::Int(i64::from(*y)),
            _ => match to_i128(&v) {
                Some(i) => int_value(i).unwrap_or(Value::Double(i as f64)),
                None => return Err(bad(&v)),
            },
        },
        T::Float | T::Double => match &v {
            Value::Float(_) | Value::Double(_) | Value::Int(_) | Value::UInt(_) => v,
            Value::Bytes(b) => match String::from_utf8_lossy(b).trim().parse::<f64>() {
                Ok(d) => Value::Double(d),
                Err(_) => return Err(bad(&v)),
            },
            other => Value::Double(to_f64(other).unwrap_or(0.0)),
        },
        T::Decimal { .. } => match &v {
            Value::Decimal(_) | Value::Int(_) | Value::UInt(_) => v,
            Value::Double(d) => Value::Decimal(format!("{d}")),
            Value::Float(d) => Value::Decimal(format!("{d}")),
            Value::Bytes(b) => {
                let s = String::from_utf8_lossy(b).trim().to_string();
                if Dec::parse(&s).is_some() {
                    Value::Decimal(s)
                } else if let Ok(d) = s.parse::<f64>() {
                    Value::Decimal(format!("{d}"))
                } else {
                    return Err(bad(&v));
                }
            }
            other => match to_i128(other) {
                Some(i) => Value::Decimal(i.to_string()),
                None => return Err(bad(&v)),
            },
        },
        T::Char(_)
        | T::VarChar(_)
        | T::Binary(_)
        | T::VarBinary(_)
        | T::TinyText
        | T::Text
        | T::MediumText
        | T::LongText
        | T::TinyBlob
        | T::Blob
        | T::MediumBlob
        | T::LongBlob => match v {
            Value::Bytes(_) => v,
            other => Value::Bytes(text_of(&other)),
        },
        T::Date => match &v {
            Value::Date { .. } => v,
            Value::DateTime {
                year, month, day, ..
            } => Value::Date {
                year: *year,
                month: *month,
                day: *day,
            },
            Value::Bytes(b) => match std::str::from_utf8(b).ok().and_then(parse_datetime) {
                Some(Value::DateTime {
                    year, month, day, ..
                })
                | Some(Value::Date { year, month, day }) => Value::Date { year, month, day },
                _ => return Err(bad(&v)),
            },
            Value::Int(_) | Value::UInt(_) => {
                match parse_datetime(&to_i128(&v).unwrap_or(0).to_string()) {
                    Some(d) => cast(d, CastTo::Date)?,
                    None => return Err(bad(&v)),
                }
            }
            other => cast(other.clone(), CastTo::Date)?,
        },
        T::DateTime(_) => match &v {
            Value::DateTime { .. } | Value::Date { .. } => v,
            Value::Bytes(b) => match std::str::from_utf8(b).ok().and_then(parse_datetime) {
                Some(d) => d,
                None => return Err(bad(&v)),
            },
            Value::Int(_) | Value::UInt(_) => {
                match parse_datetime(&to_i128(&v).unwrap_or(0).to_string()) {
                    Some(d) => d,
                    None => return Err(bad(&v)),
                }
            }
            other => cast(other.clone(), CastTo::DateTime)?,
        },
        T::Timestamp(_) => match &v {
            Value::Timestamp { .. } => v,
            other => {
                let dt = match other {
                    Value::Bytes(b) => std::str::from_utf8(b).ok().and_then(parse_datetime),
                    Value::Date { .. } | Value::DateTime { .. } => Some(other.clone()),
                    _ => parse_datetime(&to_i128(other).unwrap_or(0).to_string()),
                };
                match dt.as_ref().and_then(unix_of) {
                    Some((s, us)) if (0..=u32::MAX as i64).contains(&s) => Value::Timestamp {
                        secs: s as u32,
                        micros: us,
                    },
                    _ => return Err(bad(other)),
                }
            }
        },
        T::Time(_) => match &v {
            Value::Time { .. } => v,
            Value::Bytes(b) => match std::str::from_utf8(b).ok().and_then(parse_time) {
                Some(t) => t,
                None => return Err(bad(&v)),
            },
            Value::Int(_) | Value::UInt(_) => {
                match parse_time(&to_i128(&v).unwrap_or(0).to_string()) {
                    Some(t) => t,
                    None => return Err(bad(&v)),
                }
            }
            other => cast(other.clone(), CastTo::Time)?,
        },
        T::Year => match &v {
            Value::Year(_) | Value::Int(_) | Value::UInt(_) => v,
            Value::Bytes(b) => match String::from_utf8_lossy(b).trim().parse::<u64>() {
                Ok(y) => Value::UInt(y),
                Err(_) => return Err(bad(&v)),
            },
            other => match to_i128(other) {
                Some(i) => int_value(i)?,
                None => return Err(bad(other)),
            },
        },
        T::Null => v,
    })
}

fn type_word(ty: &SqlType) -> &'static str {
    if ty.is_integer() {
        "integer"
    } else if ty.is_string() {
        "string"
    } else {
        match ty {
            SqlType::Date => "date",
            SqlType::DateTime(_) | SqlType::Timestamp(_) => "datetime",
            SqlType::Time(_) => "time",
            _ => "decimal",
        }
    }
}

fn float_to_int(d: f64) -> Value {
    let r = d.round();
    if r >= i64::MIN as f64 && r < i64::MAX as f64 {
        Value::Int(r as i64)
    } else if r >= 0.0 && r < u64::MAX as f64 {
        Value::UInt(r as u64)
    } else {
        Value::Double(d)
    }
}

#[allow(dead_code)]
/// `SET @x = expr` and other constant contexts: evaluates an expression with no table.
pub(crate) fn eval_scalar(session: &mut Session, expr: &ast::Expr) -> Result<Value, SqlError> {
    session.begin_statement_time();
    let db = session.current_db.clone().unwrap_or_default();
    let mut c = Compiler::new(
        Scope {
            table: None,
            qualifier: "",
            db: &db,
            joined: Vec::new(),
        },
        "field list",
    );
    let e = c.compile(expr)?;
    let env = Env {
        session,
        params: &[],
        insert_row: None,
    };
    e.eval(&[], &env)
}

// ---------------------------------------------------------------------------------------
// Result types.

/// The SQL type of an expression's result, for column metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RType {
    Int,
    UInt,
    Decimal(u8, u8),
    Double,
    Str(u32),
    Date,
    DateTime(u8),
    Time,
    Year,
    Null,
    /// A table column (its type drives the metadata).
    Column(usize),
    /// Known only at execution (placeholders, variables): metadata from the first value.
    Dyn,
}

impl Expr {
    /// Result type; `cols` gives table columns' types.
    pub fn rtype(&self, t: Option<&TableDef>, aggs: &[AggSpec]) -> RType {
        let sub = |e: &Expr| e.rtype(t, aggs);
        let numeric = |r: RType| -> RType {
            match r {
                RType::Column(c) => match t.map(|t| t.columns[c].ty) {
                    Some(ty) if ty.is_integer() => {
                        if matches!(
                            ty,
                            SqlType::BigInt { unsigned: true }
                                | SqlType::Int { unsigned: true }
                                | SqlType::SmallInt { unsigned: true }
                                | SqlType::TinyInt { unsigned: true }
                                | SqlType::MediumInt { unsigned: true }
                        ) {
                            RType::UInt
                        } else {
                            RType::Int
                        }
                    }
                    Some(SqlType::Decimal { precision, scale }) => RType::Decimal(precision, scale),
                    Some(SqlType::Year) => RType::Int,
                    Some(SqlType::Float | SqlType::Double) => RType::Double,
                    _ => RType::Double,
                },
                RType::Str(_) => RType::Double,
                RType::Dyn => RType::Dyn,
                RType::Year => RType::Int,
                other => other,
            }
        };
        match self {
            Expr::Lit(v) => value_rtype(v),
            Expr::Col(c) => RType::Column(*c),
            Expr::Param(_) => RType::Dyn,
            Expr::Neg(x) => numeric(sub(x)),
            Expr::Not(_)
            | Expr::IsNull(..)
            | Expr::IsBool(..)
            | Expr::In(..)
            | Expr::Between(..)
            | Expr::Like(..) => RType::Int,
            Expr::BitNot(_) => RType::UInt,
            Expr::Bin(op, l, r) => match op {
                BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Mod => {
                    let (a, b) = (numeric(sub(l)), numeric(sub(r)));
                    match (a, b) {
                        (RType::Double, _) | (_, RType::Double) => RType::Double,
                        (RType::Dyn, _) | (_, RType::Dyn) => RType::Dyn,
                        (RType::Decimal(p, s), RType::Decimal(q, u)) => {
                            if *op == BinOp::Mul {
                                RType::Decimal(
                                    p.saturating_add(q).min(65),
                                    s.saturating_add(u).min(30),
                                )
                            } else {
                                RType::Decimal(p.max(q).saturating_add(1).min(65), s.max(u))
                            }
                        }
                        (RType::Decimal(p, s), _) | (_, RType::Decimal(p, s)) => {
                            RType::Decimal(p.saturating_add(20).min(65), s)
                        }
                        (RType::UInt, RType::UInt) => RType::UInt,
                        _ => RType::Int,
                    }
                }
                BinOp::Div => match (numeric(sub(l)), numeric(sub(r))) {
                    (RType::Double, _) | (_, RType::Double) => RType::Double,
                    (RType::Dyn, _) | (_, RType::Dyn) => RType::Dyn,
                    (RType::Decimal(p, s), _) => {
                        RType::Decimal(p.saturating_add(4).min(65), s.saturating_add(4).min(30))
                    }
                    _ => RType::Decimal(24, 4),
                },
                BinOp::IntDiv => RType::Int,
                BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor | BinOp::Shl | BinOp::Shr => {
                    RType::UInt
                }
                _ => RType::Int,
            },
            Expr::Case(_, whens, el) => {
                let mut r = whens.first().map_or(RType::Null, |(_, r)| sub(r));
                if r == RType::Null {
                    if let Some(e) = el {
                        r = sub(e);
                    }
                }
                r
            }
            Expr::Cast(_, to) => match to {
                CastTo::Signed => RType::Int,
                CastTo::Unsigned => RType::UInt,
                CastTo::Char | CastTo::Binary => RType::Str(255),
                CastTo::Decimal(p, s) => RType::Decimal(*p, *s),
                CastTo::Double => RType::Double,
                CastTo::Date => RType::Date,
                CastTo::DateTime => RType::DateTime(0),
                CastTo::Time => RType::Time,
            },
            Expr::Agg(i) => match aggs.get(*i) {
                Some(a) => match a.func {
                    AggFunc::CountStar | AggFunc::Count => RType::Int,
                    AggFunc::BitAnd | AggFunc::BitOr => RType::UInt,
                    AggFunc::Sum => match a.arg.as_ref().map(|e| numeric(e.rtype(t, aggs))) {
                        Some(RType::Double) => RType::Double,
                        Some(RType::Decimal(p, s)) => {
                            RType::Decimal(p.saturating_add(22).min(65), s)
                        }
                        _ => RType::Decimal(33, 0),
                    },
                    AggFunc::Avg => match a.arg.as_ref().map(|e| numeric(e.rtype(t, aggs))) {
                        Some(RType::Double) => RType::Double,
                        Some(RType::Decimal(p, s)) => {
                            RType::Decimal(p.saturating_add(4).min(65), s.saturating_add(4).min(30))
                        }
                        _ => RType::Decimal(14, 4),
                    },
                    AggFunc::Min | AggFunc::Max => {
                        a.arg.as_ref().map_or(RType::Null, |e| e.rtype(t, aggs))
                    }
                    AggFunc::GroupConcat => RType::Str(1024),
                },
                None => RType::Null,
            },
            Expr::SysVar(..) | Expr::UserVar(_) => RType::Dyn,
            Expr::InsertValue(c) => RType::Column(*c),
            Expr::Func(f, args) => match f {
                Func::Length
                | Func::CharLength
                | Func::Sign
                | Func::Ascii
                | Func::Locate
                | Func::Instr
                | Func::IsNull
                | Func::Year
                | Func::Month
                | Func::Day
                | Func::Hour
                | Func::Minute
                | Func::Second
                | Func::Sleep
                | Func::RowCount => RType::Int,
                Func::ConnectionId | Func::LastInsertId | Func::FoundRows => RType::UInt,
                Func::UnixTimestamp => {
                    if args.is_empty() {
                        RType::Int
                    } else {
                        RType::Decimal(17, 6)
                    }
                }
                Func::Abs | Func::Mod => numeric(args.first().map_or(RType::Int, sub)),
                Func::Floor | Func::Ceil => match numeric(args.first().map_or(RType::Int, sub)) {
                    RType::Double => RType::Double,
                    _ => RType::Int,
                },
                Func::Round | Func::Truncate => match numeric(args.first().map_or(RType::Int, sub))
                {
                    RType::Decimal(p, _) => {
                        let s = match args.get(1) {
                            Some(Expr::Lit(v)) => to_i128(v).unwrap_or(0).clamp(0, 30) as u8,
                            _ => 0,
                        };
                        if s == 0 {
                            RType::Int
                        } else {
                            RType::Decimal(p, s)
                        }
                    }
                    other => other,
                },
                Func::Pow | Func::Sqrt | Func::Pi | Func::Rand => RType::Double,
                Func::Now => RType::DateTime(match args.first() {
                    Some(Expr::Lit(v)) => to_i128(v).unwrap_or(0).clamp(0, 6) as u8,
                    _ => 0,
                }),
                Func::FromUnixtime => RType::DateTime(0),
                Func::CurDate | Func::Date => RType::Date,
                Func::CurTime => RType::Time,
                Func::Coalesce | Func::IfNull | Func::Greatest | Func::Least | Func::NullIf => {
                    let mut r = RType::Null;
                    for a in args {
                        let x = sub(a);
                        if x != RType::Null {
                            r = x;
                            break;
                        }
                    }
                    r
                }
                Func::If => {
                    let x = args.get(1).map_or(RType::Null, sub);
                    if x == RType::Null {
                        args.get(2).map_or(RType::Null, sub)
                    } else {
                        x
                    }
                }
                _ => RType::Str(255),
            },
        }
    }
}

/// Type of a literal value.
pub(crate) fn value_rtype(v: &Value) -> RType {
    match v {
        Value::Null => RType::Null,
        Value::Int(_) => RType::Int,
        Value::UInt(_) => RType::UInt,
        Value::Float(_) | Value::Double(_) => RType::Double,
        Value::Decimal(s) => {
            let d = Dec::parse(s).unwrap_or(Dec::from_int(0));
            let digits = d.m.num_digits() as u8;
            RType::Decimal(digits.max(d.s as u8 + 1).min(65), (d.s as u8).min(30))
        }
        Value::Bytes(b) => RType::Str(b.len() as u32),
        Value::Date { .. } => RType::Date,
        Value::DateTime { .. } | Value::Timestamp { .. } => RType::DateTime(0),
        Value::Time { .. } => RType::Time,
        Value::Year(_) => RType::Year,
    }
}

/// Column-definition type code and flags of an [`RType`] that is not a table column.
pub(crate) fn rtype_column(r: RType) -> (ColumnType, u16, u32, u8, u16) {
    // (type, flags, length, decimals, charset)
    const BIN: u16 = 128;
    const NUM: u16 = 32768;
    match r {
        RType::Int => (ColumnType::LongLong, BIN | NUM, 21, 0, 63),
        RType::UInt => (ColumnType::LongLong, BIN | NUM | 32, 21, 0, 63),
        RType::Decimal(p, s) => (
            ColumnType::NewDecimal,
            BIN | NUM,
            u32::from(p) + 1 + u32::from(s > 0),
            s,
            63,
        ),
        RType::Double => (ColumnType::Double, BIN | NUM, 22, 31, 63),
        RType::Str(n) => (ColumnType::VarString, 0, n.max(1).saturating_mul(4), 39, 45),
        RType::Date => (ColumnType::Date, BIN, 10, 0, 63),
        RType::DateTime(f) => (
            ColumnType::DateTime,
            BIN,
            19 + if f > 0 { u32::from(f) + 1 } else { 0 },
            f,
            63,
        ),
        RType::Time => (ColumnType::Time, BIN, 10, 0, 63),
        RType::Year => (ColumnType::Year, BIN | NUM | 32, 4, 0, 63),
        RType::Null | RType::Column(_) => (ColumnType::Null, BIN, 0, 0, 63),
        RType::Dyn => (ColumnType::VarString, 0, 1024, 39, 45),
    }
}

/// Converts an evaluated value to the variant its declared [`RType`] calls for, so result
/// rows agree with their column metadata (binary protocol).
pub(crate) fn conform(v: Value, r: RType) -> Value {
    match (r, &v) {
        (_, Value::Null) => v,
        (RType::Int, Value::Int(_)) | (RType::UInt, Value::UInt(_)) => v,
        (RType::Int, _) => match num_of_quiet(&v).map(num_i128) {
            Some(i) => int_value(i).unwrap_or(v),
            None => v,
        },
        (RType::UInt, _) => match num_of_quiet(&v).map(num_i128) {
            Some(i) if (0..=i128::from(u64::MAX)).contains(&i) => Value::UInt(i as u64),
            Some(i) if i64::try_from(i).is_ok() => Value::Int(i as i64),
            _ => v,
        },
        (RType::Decimal(_, s), Value::Decimal(_))
        | (RType::Decimal(_, s), Value::Int(_) | Value::UInt(_)) => {
            match num_of_quiet(&v)
                .and_then(num_dec)
                .and_then(|d| d.rescale(u32::from(s)))
            {
                Some(d) => Value::Decimal(d.to_string()),
                None => v,
            }
        }
        (RType::Decimal(..), _) => match to_f64_quiet(&v) {
            Some(d) => Value::Double(d),
            None => v,
        },
        (RType::Double, Value::Double(_)) => v,
        (RType::Double, _) => match to_f64_quiet(&v) {
            Some(d) => Value::Double(d),
            None => v,
        },
        (RType::Str(_), Value::Bytes(_)) => v,
        (RType::Str(_), _) => Value::Bytes(text_of(&v)),
        _ => v,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_arithmetic_rounds_like_mysql() {
        let a = Dec::parse("1.25").unwrap();
        assert_eq!(a.rescale(1).unwrap().to_string(), "1.3");
        assert_eq!(a.neg().rescale(1).unwrap().to_string(), "-1.3");
        assert_eq!(
            Dec::from_int(1).div(Dec::from_int(3)).unwrap().to_string(),
            "0.3333"
        );
        assert_eq!(Dec::parse("0.05").unwrap().to_string(), "0.05");
        assert_eq!(
            a.add(Dec::parse("-3").unwrap()).unwrap().to_string(),
            "-1.75"
        );
    }

    #[test]
    fn like_patterns() {
        assert!(like_match(b"abc", b"a%", Some(b'\\')));
        assert!(like_match(b"abc", b"_b_", Some(b'\\')));
        assert!(!like_match(b"abc", b"a_", Some(b'\\')));
        assert!(like_match(b"a%c", b"a\\%c", Some(b'\\')));
        assert!(!like_match(b"abc", b"a\\%c", Some(b'\\')));
        assert!(like_match(b"", b"%", Some(b'\\')));
        assert!(like_match(b"xaybzc", b"%a%b%c", Some(b'\\')));
    }

    #[test]
    fn civil_round_trip() {
        for d in [-1000i64, 0, 1, 59, 365, 11016, 20000, 2932896] {
            let (y, m, dd) = civil_from_days(d);
            assert_eq!(days_from_civil(y, m, dd), d);
        }
        assert_eq!(days_from_civil(2000, 3, 1), 11017);
    }

    #[test]
    fn comparisons_promote() {
        assert_eq!(
            compare(&Value::Bytes(b"5".to_vec()), &Value::Int(5)),
            Some(Ordering::Equal)
        );
        assert_eq!(
            compare(&Value::Decimal("1.50".into()), &Value::Int(1)),
            Some(Ordering::Greater)
        );
        assert_eq!(compare(&Value::Null, &Value::Int(1)), None);
    }
}
