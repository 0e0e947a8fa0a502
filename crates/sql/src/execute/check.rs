//! CHECK constraints as MariaDB 10.11 enforces them: table constraints (`CONSTRAINT x CHECK
//! (...)`, unnamed ones named `CONSTRAINT_<n>`) and column constraints (`c INT CHECK (...)`,
//! named after the column), kept as their expression's text, compiled per statement against
//! the table, and tested on every row INSERT, REPLACE, ON DUPLICATE KEY UPDATE and UPDATE
//! write: a row for which one is FALSE is refused with 4025 "CONSTRAINT `x` failed for
//! `db`.`t`" (NULL passes, as in SQL). Column constraints are tested first, then the table's,
//! each in declaration order. With the session's `check_constraint_checks` at 0 no row is
//! tested (writes and `ALTER TABLE ... ADD CHECK` go through), as in MariaDB.
//!
//! Invariant: a stored expression compiled against its table when the table was created, so
//! it parses and compiles again (a failure then is an error, never a skipped check).
//!
//! Callers: `ddl.rs` (CREATE TABLE), `dml.rs` (row writes), `show.rs` (SHOW CREATE TABLE).

use std::ops::ControlFlow;

use onelog_binlog::Value;
use onelog_engine::{CheckDef, TableDef};
use onelog_protocol::errors;
use sqlparser::ast;
use sqlparser::parser::Parser;

use crate::context::ExecContext;
use crate::error::SqlError;
use crate::expr::{Compiler, Env, Expr, Scope};

/// Words MariaDB prints in lower case in an expression (besides function names).
const LOWER_WORDS: &[&str] = &[
    "AND", "OR", "XOR", "NOT", "IS", "NULL", "LIKE", "IN", "BETWEEN", "TRUE", "FALSE", "DIV",
    "MOD", "REGEXP", "RLIKE", "ESCAPE",
];

/// `text` with the operator words of [`LOWER_WORDS`] and function names in lower case, as
/// MariaDB prints an expression; quoted strings and names are left alone.
fn lower_keywords(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if matches!(c, b'\'' | b'`' | b'"') {
            let mut j = i + 1;
            while j < b.len() && b[j] != c {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            let end = (j + 1).min(b.len());
            out.push_str(&text[i..end]);
            i = end;
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let mut j = i;
            while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                j += 1;
            }
            let w = &text[i..j];
            let call = b.get(j) == Some(&b'(');
            if call || LOWER_WORDS.iter().any(|k| k.eq_ignore_ascii_case(w)) {
                out.push_str(&w.to_ascii_lowercase());
            } else {
                out.push_str(w);
            }
            i = j;
        } else {
            let ch = text[i..].chars().next().unwrap_or(' ');
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

/// The text a check's expression is kept and shown as: sqlparser's rendering with every
/// column name in backquotes and operator words and function names in lower case
/// (`` `c` <> 'x' or `a` = 1 ``, as MariaDB prints it).
fn expr_text(e: &ast::Expr) -> String {
    let mut e = e.clone();
    let _ = ast::visit_expressions_mut(&mut e, |x| {
        match x {
            ast::Expr::Identifier(i) => i.quote_style = Some('`'),
            ast::Expr::CompoundIdentifier(v) => {
                v.iter_mut().for_each(|i| i.quote_style = Some('`'))
            }
            _ => {}
        }
        ControlFlow::<()>::Continue(())
    });
    lower_keywords(&e.to_string())
}

/// A table constraint `CHECK (...)` (`name` given or None) as the definition kept.
pub(crate) fn table_check(c: &ast::CheckConstraint, unnamed: &mut usize) -> CheckDef {
    let name = match &c.name {
        Some(n) => n.value.clone(),
        None => {
            *unnamed += 1;
            format!("CONSTRAINT_{unnamed}")
        }
    };
    CheckDef {
        name,
        column: None,
        expr: expr_text(&c.expr),
    }
}

/// A column's `CHECK (...)`.
pub(crate) fn column_check(column: &str, c: &ast::CheckConstraint) -> CheckDef {
    CheckDef {
        name: column.to_string(),
        column: Some(column.to_string()),
        expr: expr_text(&c.expr),
    }
}

fn parse(text: &str) -> Result<ast::Expr, SqlError> {
    let dialect = crate::parse::dialect::OnelogDialect::default();
    crate::parse::depth::check_lexical(text)?;
    let mut e = Parser::new(&dialect)
        .with_recursion_limit(crate::parse::depth::PARSER_RECURSION_LIMIT)
        .try_with_sql(text)
        .and_then(|mut p| p.parse_expr())
        .map_err(|_| SqlError::syntax(text))?;
    crate::parse::depth::guard_expr(&mut e)?;
    crate::parse::hex_literals::mark_hybrids(&mut e, text);
    Ok(e)
}

/// A table's checks compiled for one statement: (name as 4025 prints it, expression).
pub(crate) struct Compiled(Vec<(String, Expr)>);

/// Compiles `t`'s checks (None when it has none: no cost for other tables). At CREATE TABLE
/// this is the validation: an unknown column is 1054 "Unknown column 'x' in 'CHECK'".
pub(crate) fn compile(cx: &ExecContext, t: &TableDef) -> Result<Option<Compiled>, SqlError> {
    let checks = &t.options.checks;
    if checks.is_empty() {
        return Ok(None);
    }
    let db = cx.current_db.clone().unwrap_or_default();
    let ordered = checks
        .iter()
        .filter(|c| c.column.is_some())
        .chain(checks.iter().filter(|c| c.column.is_none()));
    let mut out = Vec::with_capacity(checks.len());
    for c in ordered {
        let scope = Scope {
            table: Some(t),
            qualifier: &t.name,
            db: &db,
            joined: Vec::new(),
        };
        let mut comp = Compiler::new(scope, "CHECK");
        // Literals compare under the table's collation, whoever writes the row (MariaDB
        // 10.11: `CHECK ('b' = 'B')` holds in a utf8mb4_general_ci table under any SET NAMES).
        comp.literals = crate::expr::CollRef::Fixed(crate::expr::table_collation(t));
        let e = comp.compile(&parse(&c.expr)?)?;
        let shown = match &c.column {
            Some(col) => format!("{}.{col}", t.name),
            None => c.name.clone(),
        };
        out.push((shown, e));
    }
    Ok(Some(Compiled(out)))
}

/// 4025 for the first check `row` fails (FALSE; NULL passes); none are tested while the
/// session's `check_constraint_checks` is 0 (as MariaDB, for INSERT, UPDATE and ALTER TABLE).
pub(crate) fn check_row(
    c: &Compiled,
    t: &TableDef,
    row: &[Value],
    env: &Env,
) -> Result<(), SqlError> {
    if !crate::sysvar::check_constraint_checks(env.cx) {
        return Ok(());
    }
    for (name, e) in &c.0 {
        let v = e.eval(row, env)?;
        if crate::expr::truth(&v) == Some(false) {
            return Err(SqlError::of(
                errors::ER_CONSTRAINT_FAILED,
                format!("CONSTRAINT `{name}` failed for `{}`.`{}`", t.db, t.name),
            ));
        }
    }
    Ok(())
}

/// The column's ` CHECK (...)` suffix in SHOW CREATE TABLE ("" for none).
pub(crate) fn show_column(t: &TableDef, column: &str) -> String {
    t.options
        .checks
        .iter()
        .filter(|c| c.column.as_deref() == Some(column))
        .map(|c| format!(" CHECK ({})", c.expr))
        .collect()
}

/// The table constraints' lines of SHOW CREATE TABLE.
pub(crate) fn show_lines(t: &TableDef) -> impl Iterator<Item = String> + '_ {
    t.options
        .checks
        .iter()
        .filter(|c| c.column.is_none())
        .map(|c| {
            format!(
                "  CONSTRAINT `{}` CHECK ({})",
                c.name.replace('`', "``"),
                c.expr
            )
        })
}

/// Whether a check of `t` names column `col` (DROP COLUMN is then refused).
pub(crate) fn uses_column(t: &TableDef, col: &str) -> bool {
    let quoted = format!("`{}`", col.to_ascii_lowercase());
    t.options
        .checks
        .iter()
        .any(|c| c.expr.to_ascii_lowercase().contains(&quoted))
}

/// `ALTER TABLE t ADD [CONSTRAINT x] CHECK (...)`: compiled against the table and tested on
/// every existing row (4025 for the first that fails), as MariaDB.
pub(crate) fn alter_add(
    cx: &ExecContext,
    (db, table): (&str, &str),
    c: &ast::CheckConstraint,
    sql: &str,
) -> Result<(), SqlError> {
    if c.enforced == Some(false) || c.no_inherit {
        return Err(SqlError::unsupported("CHECK ... NOT ENFORCED"));
    }
    let engine = &cx.server.engine;
    let cat = engine.catalog();
    let Some(t) = cat.table_by_name(db, table) else {
        return Err(SqlError::of(
            errors::ER_NO_SUCH_TABLE,
            format!("Table '{db}.{table}' doesn't exist"),
        ));
    };
    let taken = |n: &str| {
        t.options
            .checks
            .iter()
            .any(|k| k.column.is_none() && k.name.eq_ignore_ascii_case(n))
    };
    let mut unnamed = 0;
    let mut def = table_check(c, &mut unnamed);
    while c.name.is_none() && taken(&def.name) {
        unnamed += 1;
        def.name = format!("CONSTRAINT_{unnamed}");
    }
    if c.name.is_some() && taken(&def.name) {
        return Err(SqlError::of(
            errors::ER_DUP_CONSTRAINT_NAME,
            format!("Duplicate CHECK constraint name '{}'", def.name),
        ));
    }
    let mut only = (**t).clone();
    only.options.checks = vec![def.clone()];
    // Not on a column a foreign key's action changes (1901).
    crate::execute::fk::check_free_columns(&only)?;
    let Some(compiled) = compile(cx, &only)? else {
        return Ok(());
    };
    let env = Env {
        cx,
        params: &[],
        insert_row: None,
        coll: crate::expr::connection_collation(cx),
        subq: None,
    };
    let mut txn = engine.begin();
    let rows = txn.scan(
        t.id,
        onelog_engine::IndexRef::Primary,
        onelog_engine::KeyRange::all(),
        None,
    );
    txn.rollback();
    for row in rows? {
        cx.guard.check()?;
        check_row(&compiled, t, &row, &env)?;
    }
    let mut checks = t.options.checks.clone();
    checks.push(def);
    let constraints = (t.options.foreign_keys.clone(), checks);
    engine.alter_constraints((db, table), constraints, None, sql)?;
    Ok(())
}
