//! The compiled form of an expression: [`Expr`] and the operator, function, cast and
//! aggregate identifiers its nodes carry. Built by `compile`, evaluated by `eval`, typed by
//! `infer`; read by the planner (`plan.rs`) and the executors.
//!
//! Invariants: [`Expr::Col`] holds the position of a column in the row the expression is
//! evaluated on, [`Expr::Param`] the order of a `?` in the statement text, [`Expr::Agg`] an
//! index into the compiling [`AggSpec`] list; nothing in the tree refers to the session, so a
//! compiled statement may be cached and run again. (Asserted where the tree is read:
//! `eval.rs` checks column positions and argument order.)

use onelog_binlog::Value;
use onelog_engine::collation::Collation;

use super::collate::CollRef;

use crate::sysvar::VarScope;

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

/// A built-in scalar function: a (family, index) handle into the registry of `functions`,
/// where its names, arity, NULL behaviour, result type and evaluation are declared
/// (`Func::def`). Made only by `functions` (`Func::named`, `functions::lookup`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Func {
    pub(super) family: u8,
    pub(super) index: u8,
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
    /// `e COLLATE c`: the value of `e`, with an explicit collation (for derivations).
    Collate(Box<Expr>, Collation),
    /// A literal with a character set: `_binary'..'`, `X'..'`, `0x..` (binary, COERCIBLE).
    Introduced(Box<Expr>, Collation),
    /// A comparison node (`Bin` comparison, `In`, `Between`, `Like`, simple `Case`) whose
    /// strings compare under this collation; a bare one compares under the connection's.
    Collated(CollRef, Box<Expr>),
    /// A subquery (`plan::select::subquery`): its kind and the index of its plan in the compiling
    /// SELECT's subquery list.
    Subq(Box<Subq>),
    /// A window function call of the select list (`expr::window`); its value is computed
    /// over the collected output rows (`execute::window`).
    Win(Box<super::window::WinCall>),
}

impl Expr {
    /// Calls `f` on each expression directly inside `self`: operands, arguments, a
    /// subquery's outer operands (not the subquery's own plan) and a window call's parts.
    /// Exhaustive, so a new variant must say what it holds.
    pub(crate) fn for_each_child<'e>(&'e self, f: &mut dyn FnMut(&'e Expr)) {
        match self {
            Expr::Lit(_)
            | Expr::Col(_)
            | Expr::Param(_)
            | Expr::Agg(_)
            | Expr::SysVar(..)
            | Expr::UserVar(_)
            | Expr::InsertValue(_) => {}
            Expr::Neg(x)
            | Expr::Not(x)
            | Expr::BitNot(x)
            | Expr::IsNull(x, _)
            | Expr::IsBool(x, ..)
            | Expr::Cast(x, _)
            | Expr::Collate(x, _)
            | Expr::Introduced(x, _)
            | Expr::Collated(_, x) => f(x),
            Expr::Bin(_, l, r) | Expr::Like(l, r, ..) => {
                f(l);
                f(r);
            }
            Expr::Between(a, b, c, _) => {
                f(a);
                f(b);
                f(c);
            }
            Expr::In(x, list, _) => {
                f(x);
                list.iter().for_each(f);
            }
            Expr::Case(op, whens, el) => {
                op.iter().for_each(|x| f(x));
                for (a, b) in whens {
                    f(a);
                    f(b);
                }
                el.iter().for_each(|x| f(x));
            }
            Expr::Func(_, args) => args.iter().for_each(f),
            Expr::Subq(s) => match &s.kind {
                SubqKind::In(x, ..) | SubqKind::Quantified(x, ..) | SubqKind::ExistsIn(x, ..) => {
                    f(x)
                }
                SubqKind::RowIn(xs, ..) | SubqKind::RowCmp(xs, ..) => xs.iter().for_each(f),
                SubqKind::Scalar | SubqKind::Exists(_) => {}
            },
            Expr::Win(w) => {
                w.partition.iter().for_each(&mut *f);
                w.args.iter().for_each(&mut *f);
                w.order.iter().for_each(|(x, _)| f(x));
                if let super::window::WinFunc::Agg(a) = &w.func {
                    a.arg.iter().for_each(f);
                }
            }
        }
    }
}

/// A compiled subquery reference: which of the statement's subqueries, how its rows are read.
#[derive(Debug, Clone)]
pub(crate) struct Subq {
    /// Index into the enclosing plan's subquery list.
    pub id: usize,
    pub kind: SubqKind,
    /// It reads columns of the enclosing row (evaluated per row, never cached).
    pub correlated: bool,
    /// The type of its (first) column.
    pub rtype: super::types::RType,
    /// The collation derivation of its (first) column (None: not a string).
    pub deriv: Option<super::collate::Deriv>,
}

/// How a subquery's rows make a value.
#[derive(Debug, Clone)]
pub(crate) enum SubqKind {
    /// `(SELECT ...)`: its one value (NULL when empty; 1242 for more than one row).
    Scalar,
    /// `[NOT] EXISTS (SELECT ...)`.
    Exists(bool),
    /// `x [NOT] IN (SELECT ...)`, compared under a collation (`CollRef`).
    In(Box<Expr>, bool, CollRef),
    /// `x op ANY|ALL (SELECT ...)`: (x, comparison, ALL, collation).
    Quantified(Box<Expr>, BinOp, bool, CollRef),
    /// `[NOT] EXISTS (SELECT ... FROM t WHERE t.c = x AND ...)` run as a semi-join: true
    /// (false when negated) when `x` is among the values of the uncorrelated subquery
    /// `SELECT t.c FROM t WHERE ...`; a NULL `x` or NULL values never match (`expr::subq`).
    ExistsIn(Box<Expr>, bool, CollRef),
    /// `(a, b) [NOT] IN (SELECT x, y ...)` (also `= ANY`, `<> ALL`): the row's items, NOT,
    /// the collation of each pair (`expr::row`).
    RowIn(Vec<Expr>, bool, Vec<CollRef>),
    /// `(a, b) op (SELECT x, y ...)`: the row's items, the comparison (the row on its left),
    /// the collation of each pair; NULL when the subquery is empty, 1242 for two rows.
    RowCmp(Vec<Expr>, BinOp, Vec<CollRef>),
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
    /// JSON_ARRAYAGG: GROUP_CONCAT of its argument's JSON texts (the argument is compiled
    /// to `JSON_AGG_VALUE`, never NULL) with `,`, in `[...]`.
    JsonArrayAgg,
    /// JSON_OBJECTAGG: GROUP_CONCAT of `"key":value` pairs (the argument is compiled to
    /// `JSON_AGG_PAIR`, NULL for a NULL key) with `, `, in `{...}`, never cut.
    JsonObjectAgg,
    BitAnd,
    BitOr,
    BitXor,
    /// STD / STDDEV / STDDEV_POP.
    StdPop,
    StdSamp,
    /// VARIANCE / VAR_POP.
    VarPop,
    VarSamp,
}

#[derive(Debug, Clone)]
pub(crate) struct AggSpec {
    pub func: AggFunc,
    pub distinct: bool,
    pub arg: Option<Expr>,
    /// GROUP_CONCAT's and JSON_ARRAYAGG's `ORDER BY` (expression over the row, descending).
    pub order_by: Vec<(Expr, bool)>,
    /// GROUP_CONCAT's `SEPARATOR` (`,` by default; JSON_ARRAYAGG's `,`, JSON_OBJECTAGG's `, `).
    pub separator: Vec<u8>,
}
