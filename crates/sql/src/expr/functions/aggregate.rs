//! The aggregate functions: each one's SQL name and result type. Their accumulation is the
//! grouped executor's (`select.rs`); compiling puts their arguments in [`AggSpec`] slots.
//!
//! Invariants: every [`AggFunc`] has exactly one entry (other names are `ALIASES`); `COUNT(*)` ([`AggFunc::CountStar`])
//! has no name of its own (the compiler makes it from `COUNT` with a `*`).
//!
//! [`AggSpec`]: crate::expr::ir::AggSpec

use crate::expr::ir::{AggFunc, Expr};
use crate::expr::types::{RType, TypeCx};

/// One aggregate function.
pub(crate) struct AggregateDef {
    /// The SQL name (upper case); empty for COUNT(*).
    pub name: &'static str,
    pub func: AggFunc,
    /// The result type, from the argument (None for COUNT(*)).
    pub return_type: fn(Option<&Expr>, &TypeCx) -> RType,
}

const AGGREGATES: &[AggregateDef] = &[
    agg("COUNT", AggFunc::Count, |_, _| RType::Int),
    agg("", AggFunc::CountStar, |_, _| RType::Int),
    agg("SUM", AggFunc::Sum, |arg, cx| {
        match arg.map(|e| cx.numeric(cx.of(e))) {
            Some(RType::Double) => RType::Double,
            Some(RType::Decimal(p, s)) => RType::Decimal(p.saturating_add(22).min(65), s),
            _ => RType::Decimal(33, 0),
        }
    }),
    agg("AVG", AggFunc::Avg, |arg, cx| {
        match arg.map(|e| cx.numeric(cx.of(e))) {
            Some(RType::Double) => RType::Double,
            Some(RType::Decimal(p, s)) => {
                let (p, s) = crate::expr::quotient_digits(p, s);
                RType::Decimal(p, s)
            }
            _ => {
                let (p, s) = crate::expr::quotient_digits(10, 0);
                RType::Decimal(p, s)
            }
        }
    }),
    agg("MIN", AggFunc::Min, arg_type),
    agg("MAX", AggFunc::Max, arg_type),
    agg("GROUP_CONCAT", AggFunc::GroupConcat, |_, _| {
        RType::Str(1024)
    }),
    agg("JSON_ARRAYAGG", AggFunc::JsonArrayAgg, |_, _| {
        RType::Str(1024)
    }),
    agg("JSON_OBJECTAGG", AggFunc::JsonObjectAgg, |_, _| {
        RType::Str(1024)
    }),
    agg("BIT_AND", AggFunc::BitAnd, |_, _| RType::UInt),
    agg("BIT_OR", AggFunc::BitOr, |_, _| RType::UInt),
    agg("BIT_XOR", AggFunc::BitXor, |_, _| RType::UInt),
    agg("STDDEV_POP", AggFunc::StdPop, rt_moment),
    agg("STDDEV_SAMP", AggFunc::StdSamp, rt_moment),
    agg("VAR_POP", AggFunc::VarPop, rt_moment),
    agg("VAR_SAMP", AggFunc::VarSamp, rt_moment),
];

/// Other names SQL calls an aggregate by.
const ALIASES: &[(&str, &str)] = &[
    ("STD", "STDDEV_POP"),
    ("STDDEV", "STDDEV_POP"),
    ("VARIANCE", "VAR_POP"),
];

/// STD / VARIANCE: a DOUBLE, shown with the argument's scale + 4 decimals when it is an exact
/// number (MariaDB's), with all its digits otherwise.
fn rt_moment(arg: Option<&Expr>, cx: &TypeCx) -> RType {
    match arg.map(|e| cx.numeric(cx.of(e))) {
        Some(RType::Int | RType::UInt) => RType::DoubleDec(4),
        Some(RType::Decimal(_, s)) => RType::DoubleDec(s.saturating_add(4).min(30)),
        _ => RType::Double,
    }
}

const fn agg(
    name: &'static str,
    func: AggFunc,
    return_type: fn(Option<&Expr>, &TypeCx) -> RType,
) -> AggregateDef {
    AggregateDef {
        name,
        func,
        return_type,
    }
}

/// MIN / MAX: the argument's type.
fn arg_type(arg: Option<&Expr>, cx: &TypeCx) -> RType {
    arg.map_or(RType::Null, |e| cx.of(e))
}

/// The aggregate SQL calls `name` (upper case), if any.
pub(in crate::expr) fn lookup(name: &str) -> Option<AggFunc> {
    if name.is_empty() {
        return None;
    }
    let name = ALIASES
        .iter()
        .find(|(alias, _)| *alias == name)
        .map_or(name, |(_, to)| to);
    AGGREGATES.iter().find(|a| a.name == name).map(|a| a.func)
}

/// The result type of aggregate `func` over `arg`.
pub(in crate::expr) fn return_type(func: AggFunc, arg: Option<&Expr>, cx: &TypeCx) -> RType {
    let def = AGGREGATES.iter().find(|a| a.func == func);
    debug_assert!(def.is_some(), "{func:?} has no declaration");
    def.map_or(RType::Null, |d| (d.return_type)(arg, cx))
}

#[cfg(test)]
mod tests {
    use crate::expr::functions::check_against_mariadb_after;

    #[test]
    fn aggregates_match_mariadb() {
        // Expected values: what MariaDB 10.11.19 returned for `SELECT <expr>` (mariadb -N -B)
        // after the same three statements.
        check_against_mariadb_after(
            &[
                "CREATE DATABASE t",
                "CREATE TABLE t.a (id INT PRIMARY KEY, g INT, x INT, d DECIMAL(5,2), s VARCHAR(10))",
                "INSERT INTO t.a VALUES (1,1,1,1.50,'a'),(2,1,2,NULL,'b'),(3,2,NULL,2.25,NULL),\
                 (4,2,4,3.00,'c')",
            ],
            &[
                ("COUNT(*) FROM t.a", "4"),
                ("COUNT(x) FROM t.a", "3"),
                ("COUNT(x) FROM t.a WHERE g = 3", "0"),
                ("SUM(x) FROM t.a", "7"),
                ("SUM(d) FROM t.a", "6.75"),
                ("SUM(x) FROM t.a WHERE g = 3", "NULL"),
                ("AVG(x) FROM t.a", "2.3333"),
                ("AVG(d) FROM t.a", "2.250000"),
                ("MIN(s) FROM t.a", "a"),
                ("MAX(d) FROM t.a", "3.00"),
                ("MAX(x) FROM t.a WHERE g = 3", "NULL"),
                ("GROUP_CONCAT(s) FROM t.a", "a,b,c"),
                ("GROUP_CONCAT(s, x) FROM t.a", "a1,b2,c4"),
                ("GROUP_CONCAT(s ORDER BY s DESC) FROM t.a", "c,b,a"),
                ("GROUP_CONCAT(x ORDER BY x DESC SEPARATOR ';') FROM t.a", "4;2;1"),
                ("GROUP_CONCAT(s SEPARATOR '') FROM t.a", "abc"),
                ("GROUP_CONCAT(s ORDER BY 1 DESC) FROM t.a", "c,b,a"),
                ("GROUP_CONCAT(s, x ORDER BY d DESC, id) FROM t.a WHERE g = 1", "a1,b2"),
                ("GROUP_CONCAT(DISTINCT g ORDER BY g DESC) FROM t.a", "2,1"),
                ("BIT_AND(x) FROM t.a", "0"),
                ("BIT_OR(x) FROM t.a", "7"),
                ("COUNT(DISTINCT g) FROM t.a", "2"),
                ("SUM(x) FROM t.a GROUP BY g ORDER BY g LIMIT 1", "3"),
            ],
        );
    }

    #[test]
    fn moments_and_bit_xor_match_mariadb() {
        // Expected values: what MariaDB 10.11.19 returned for `SELECT <expr>` (mariadb -N -B)
        // after the same three statements.
        check_against_mariadb_after(
            &[
                "CREATE DATABASE t",
                "CREATE TABLE t.a (id INT PRIMARY KEY, g INT, x INT, d DECIMAL(5,2), s VARCHAR(10))",
                "INSERT INTO t.a VALUES (1,1,1,1.50,'3'),(2,1,2,2.25,'x'),(3,1,3,NULL,'4'),\
                 (4,1,4,4.00,NULL),(5,2,10,1.00,'1')",
            ],
            &[
                ("STD(x) FROM t.a WHERE g = 1", "1.1180"),
                ("STDDEV(x) FROM t.a WHERE g = 1", "1.1180"),
                ("STDDEV_POP(x) FROM t.a WHERE g = 1", "1.1180"),
                ("STDDEV_SAMP(x) FROM t.a WHERE g = 1", "1.2910"),
                ("VARIANCE(x) FROM t.a WHERE g = 1", "1.2500"),
                ("VAR_POP(x) FROM t.a WHERE g = 1", "1.2500"),
                ("VAR_SAMP(x) FROM t.a WHERE g = 1", "1.6667"),
                ("BIT_XOR(x) FROM t.a WHERE g = 1", "4"),
                ("STD(d) FROM t.a WHERE g = 1", "1.047484"),
                ("VAR_SAMP(d) FROM t.a WHERE g = 1", "1.645833"),
                ("VAR_POP(s) FROM t.a WHERE g = 1", "2.888888888888889"),
                ("STD(x) FROM t.a WHERE g = 2", "0.0000"),
                ("STDDEV_SAMP(x) FROM t.a WHERE g = 2", "NULL"),
                ("VAR_SAMP(d) FROM t.a WHERE g = 2", "NULL"),
                ("STD(x) FROM t.a WHERE id > 100", "NULL"),
                ("BIT_XOR(x) FROM t.a WHERE id > 100", "0"),
                ("VAR_SAMP(DISTINCT g) FROM t.a", "ERROR 1064"),
            ],
        );
    }

    /// JSON_ARRAYAGG keeps NULLs (`null`), embeds JSON and booleans as JSON, lists DISTINCT
    /// values in their order; JSON_OBJECTAGG skips NULL keys; both are NULL for no rows.
    #[test]
    fn json_aggregates_match_mariadb() {
        // Expected values: what MariaDB 10.11.19 returned for `SELECT <expr>` (mariadb -N -B)
        // after the same statements.
        check_against_mariadb_after(
            &[
                "CREATE DATABASE t",
                "CREATE TABLE t.a (id INT PRIMARY KEY, g INT, s VARCHAR(10), n DECIMAL(5,2), j JSON)",
                "INSERT INTO t.a VALUES (1,1,'a',1.50,'{\"x\": 1}'),(2,1,'b\"q',NULL,'[1,2]'),\
                 (3,2,NULL,2.00,NULL),(4,2,'a',3,'\"s\"'),(5,1,'a',1.50,'true')",
            ],
            &[
            ("JSON_ARRAYAGG(s) FROM t.a", "[\"a\",\"b\\\"q\",null,\"a\",\"a\"]"),
            ("JSON_ARRAYAGG(n) FROM t.a WHERE g = 1", "[1.50,null,1.50]"),
            ("JSON_ARRAYAGG(j) FROM t.a", "[{\"x\": 1},[1,2],null,\"s\",true]"),
            ("JSON_ARRAYAGG(id) FROM t.a GROUP BY g ORDER BY g LIMIT 1", "[1,2,5]"),
            ("JSON_ARRAYAGG(DISTINCT s) FROM t.a", "[null,\"a\",\"b\\\"q\"]"),
            ("JSON_ARRAYAGG(DISTINCT id % 3) FROM t.a", "[0,1,2]"),
            ("JSON_ARRAYAGG(DISTINCT n) FROM t.a", "[null,1.50,2.00,3.00]"),
            ("JSON_ARRAYAGG(s ORDER BY s DESC) FROM t.a", "[\"b\\\"q\",\"a\",\"a\",\"a\",null]"),
            ("JSON_ARRAYAGG(s ORDER BY id DESC) FROM t.a", "[\"a\",\"a\",null,\"b\\\"q\",\"a\"]"),
            ("JSON_ARRAYAGG(JSON_OBJECT('k', s)) FROM t.a", "[{\"k\": \"a\"},{\"k\": \"b\\\"q\"},{\"k\": null},{\"k\": \"a\"},{\"k\": \"a\"}]"),
            ("JSON_ARRAYAGG(s = 'a') FROM t.a", "[true,false,null,true,true]"),
            ("JSON_ARRAYAGG(TRUE) FROM t.a", "[true,true,true,true,true]"),
            ("JSON_ARRAYAGG(s) FROM t.a WHERE id > 10", "NULL"),
            ("JSON_OBJECTAGG(s, id) FROM t.a", "{\"a\":1, \"b\\\"q\":2, \"a\":4, \"a\":5}"),
            ("JSON_OBJECTAGG(id, j) FROM t.a", "{\"1\":{\"x\": 1}, \"2\":[1,2], \"3\":null, \"4\":\"s\", \"5\":true}"),
            ("JSON_OBJECTAGG(id, s) FROM t.a", "{\"1\":\"a\", \"2\":\"b\\\"q\", \"3\":null, \"4\":\"a\", \"5\":\"a\"}"),
            ("JSON_OBJECTAGG(s, id) FROM t.a WHERE id > 10", "NULL"),
            ("JSON_ARRAYAGG(s, id) FROM t.a", "ERROR 1582"),
            ("JSON_OBJECTAGG(s) FROM t.a", "ERROR 1064"),
            ("JSON_OBJECTAGG(id, n) FROM t.a GROUP BY g ORDER BY g DESC LIMIT 1", "{\"3\":2.00, \"4\":3.00}"),
            ],
        );
    }

    /// JSON_ARRAYAGG is cut at group_concat_max_len keeping a closing quote, JSON_OBJECTAGG is
    /// never cut.
    #[test]
    fn json_aggregates_cut_as_mariadb() {
        check_against_mariadb_after(
            &[
                "CREATE DATABASE t",
                "CREATE TABLE t.a (id INT PRIMARY KEY, g INT, s VARCHAR(10), n DECIMAL(5,2), j JSON)",
                "INSERT INTO t.a VALUES (1,1,'a',1.50,'{\"x\": 1}'),(2,1,'b\"q',NULL,'[1,2]'),\
                 (3,2,NULL,2.00,NULL),(4,2,'a',3,'\"s\"'),(5,1,'a',1.50,'true')",
                "SET group_concat_max_len = 8",
            ],
            &[
            ("JSON_ARRAYAGG(s) FROM t.a", "[\"a\",\"b\\\"]"),
            ("JSON_ARRAYAGG(id) FROM t.a", "[1,2,3,4,]"),
            ("JSON_OBJECTAGG(id, s) FROM t.a", "{\"1\":\"a\", \"2\":\"b\\\"q\", \"3\":null, \"4\":\"a\", \"5\":\"a\"}"),
            ("GROUP_CONCAT(s) FROM t.a", "a,b\"q,a,"),
            ],
        );
    }
}
