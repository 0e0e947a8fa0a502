//! Compiling MariaDB's interval syntax into calendar calls: `d + INTERVAL n unit`,
//! `INTERVAL n unit + d`, `d - INTERVAL n unit`, DATE_ADD / DATE_SUB / ADDDATE / SUBDATE
//! (with an INTERVAL, or ADDDATE/SUBDATE's day count), TIMESTAMPADD(unit, n, d),
//! TIMESTAMPDIFF(unit, a, b) and EXTRACT(unit FROM d).
//!
//! Each becomes a call of a calendar function that only this syntax reaches (no SQL name):
//! `DATE_ADD_UNIT(d, n, unit)`, `TIMESTAMPDIFF_UNIT(unit, a, b)`, `EXTRACT_UNIT(unit, d)`,
//! where `unit` is a literal [`Unit`] code. Units: MICROSECOND, SECOND, MINUTE, HOUR, DAY,
//! WEEK, MONTH, QUARTER, YEAR. MariaDB's compound units (`DAY_HOUR`, `HOUR_MINUTE`, ...) are
//! not parsed by sqlparser (a syntax error), and EXTRACT(WEEK ...) is refused (1235): neither
//! is answered differently.

use onelog_binlog::Value;
use sqlparser::ast;

use super::compile::{object_name_parts, Compiler};
use super::functions::Unit;
use super::ir::{Expr, Func};
use crate::error::SqlError;

impl Unit {
    fn of_field(f: &ast::DateTimeField) -> Option<Unit> {
        use ast::DateTimeField as F;
        Some(match f {
            F::Microsecond => Unit::Microsecond,
            F::Second => Unit::Second,
            F::Minute => Unit::Minute,
            F::Hour => Unit::Hour,
            F::Day => Unit::Day,
            F::Week(None) => Unit::Week,
            F::Month => Unit::Month,
            F::Quarter => Unit::Quarter,
            F::Year => Unit::Year,
            _ => return None,
        })
    }

    /// A unit written as a function argument (TIMESTAMPDIFF(DAY, ...)): an identifier.
    fn of_arg(a: &ast::FunctionArg) -> Option<Unit> {
        let ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(ast::Expr::Identifier(i))) = a
        else {
            return None;
        };
        Some(match i.value.to_ascii_uppercase().as_str() {
            "MICROSECOND" | "FRAC_SECOND" => Unit::Microsecond,
            "SECOND" => Unit::Second,
            "MINUTE" => Unit::Minute,
            "HOUR" => Unit::Hour,
            "DAY" => Unit::Day,
            "WEEK" => Unit::Week,
            "MONTH" => Unit::Month,
            "QUARTER" => Unit::Quarter,
            "YEAR" => Unit::Year,
            _ => return None,
        })
    }

    fn lit(self) -> Expr {
        Expr::Lit(Value::Int(self as i64))
    }
}

fn unit_error(what: &str) -> SqlError {
    SqlError::unsupported(&format!("{what} with this unit"))
}

impl Compiler<'_> {
    /// `(n, unit)` of an INTERVAL expression.
    fn interval(&mut self, iv: &ast::Interval) -> Result<(Expr, Unit), SqlError> {
        // MariaDB has no `unit(precision)` or `unit TO unit` forms (1064 there).
        if iv.leading_precision.is_some()
            || iv.fractional_seconds_precision.is_some()
            || iv.last_field.is_some()
        {
            return Err(SqlError::syntax(&iv.to_string()));
        }
        let unit = iv
            .leading_field
            .as_ref()
            .and_then(Unit::of_field)
            .ok_or_else(|| unit_error("INTERVAL"))?;
        // `INTERVAL 0x02 DAY`: the count is a number (`expr::hybrid`).
        Ok((super::hybrid::as_number(self.compile(&iv.value)?), unit))
    }

    fn date_add(&self, d: Expr, n: Expr, unit: Unit, subtract: bool) -> Expr {
        let n = if subtract { Expr::Neg(Box::new(n)) } else { n };
        Expr::Func(
            const { Func::named("DATE_ADD_UNIT") },
            vec![d, n, unit.lit()],
        )
    }

    /// `d + INTERVAL ...`, `INTERVAL ... + d`, `d - INTERVAL ...`; None for other operations.
    pub(super) fn interval_arith(
        &mut self,
        left: &ast::Expr,
        op: &ast::BinaryOperator,
        right: &ast::Expr,
    ) -> Result<Option<Expr>, SqlError> {
        use ast::BinaryOperator as B;
        let (d, iv, subtract) = match (left, op, right) {
            (d, B::Plus, ast::Expr::Interval(iv)) => (d, iv, false),
            (ast::Expr::Interval(iv), B::Plus, d) => (d, iv, false),
            (d, B::Minus, ast::Expr::Interval(iv)) => (d, iv, true),
            _ => return Ok(None),
        };
        let (n, unit) = self.interval(iv)?;
        let d = self.compile(d)?;
        Ok(Some(self.date_add(d, n, unit, subtract)))
    }

    /// DATE_ADD, DATE_SUB, ADDDATE, SUBDATE, TIMESTAMPADD and TIMESTAMPDIFF; None for other
    /// functions.
    pub(super) fn interval_call(&mut self, f: &ast::Function) -> Result<Option<Expr>, SqlError> {
        let name = object_name_parts(&f.name).join(".").to_ascii_uppercase();
        let subtract = match name.as_str() {
            "DATE_ADD" | "ADDDATE" | "TIMESTAMPADD" | "TIMESTAMPDIFF" => false,
            "DATE_SUB" | "SUBDATE" => true,
            _ => return Ok(None),
        };
        let args: &[ast::FunctionArg] = match &f.args {
            ast::FunctionArguments::List(l) if l.duplicate_treatment.is_none() => &l.args,
            _ => return Err(SqlError::param_count(&name)),
        };
        let expr = |a: &ast::FunctionArg| match a {
            ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => Some(e.clone()),
            _ => None,
        };
        let [a, b, rest @ ..] = args else {
            return Err(SqlError::param_count(&name));
        };
        match (name.as_str(), rest) {
            ("TIMESTAMPADD" | "TIMESTAMPDIFF", [c]) => {
                let unit = Unit::of_arg(a).ok_or_else(|| SqlError::syntax(&f.to_string()))?;
                let (x, y) = match (expr(b), expr(c)) {
                    (Some(x), Some(y)) => (self.compile(&x)?, self.compile(&y)?),
                    _ => return Err(SqlError::syntax(&f.to_string())),
                };
                Ok(Some(if name == "TIMESTAMPADD" {
                    self.date_add(y, x, unit, false)
                } else {
                    Expr::Func(
                        const { Func::named("TIMESTAMPDIFF_UNIT") },
                        vec![unit.lit(), x, y],
                    )
                }))
            }
            ("TIMESTAMPADD" | "TIMESTAMPDIFF", _) | (_, [_, ..]) => {
                Err(SqlError::param_count(&name))
            }
            (_, []) => {
                let (Some(d), Some(n)) = (expr(a), expr(b)) else {
                    return Err(SqlError::syntax(&f.to_string()));
                };
                let d = self.compile(&d)?;
                let (n, unit) = match &n {
                    ast::Expr::Interval(iv) => self.interval(iv)?,
                    // ADDDATE(d, n) / SUBDATE(d, n): n days.
                    n if name.ends_with("DATE") => (self.compile(n)?, Unit::Day),
                    _ => return Err(SqlError::syntax(&f.to_string())),
                };
                Ok(Some(self.date_add(d, n, unit, subtract)))
            }
        }
    }

    /// EXTRACT(unit FROM d).
    pub(super) fn extract(
        &mut self,
        field: &ast::DateTimeField,
        d: &ast::Expr,
    ) -> Result<Expr, SqlError> {
        let unit = Unit::of_field(field)
            .filter(|u| *u != Unit::Week)
            .ok_or_else(|| unit_error("EXTRACT"))?;
        let d = self.compile(d)?;
        Ok(Expr::Func(
            const { Func::named("EXTRACT_UNIT") },
            vec![unit.lit(), d],
        ))
    }
}
