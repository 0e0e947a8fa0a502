//! Key definitions as statements write them (CREATE TABLE's keys, CREATE INDEX, ALTER TABLE
//! ADD KEY / ADD UNIQUE / ADD PRIMARY KEY): their columns and the [`IndexOptions`] MariaDB keeps
//! (`USING BTREE | HASH`, `COMMENT`), and the comment lengths of tables, columns and keys.
//!
//! Invariant: every part of a key definition sqlparser hands over is either kept (in the
//! [`IndexSpec`], the options, or the primary key's options) or refused with MariaDB's error.
//! sqlparser also parses other dialects' key syntax (a partial index's `WHERE`, `INCLUDE`,
//! `NULLS [NOT] DISTINCT`, `CONCURRENTLY`, operator classes, `USING GIN`); MariaDB's grammar
//! has none of it, so each is its 1064 here rather than dropped. What MariaDB takes and onelog
//! cannot keep yet (a prefix length, a descending column) is 1235.

use onelog_engine::{IndexOptions, IndexSpec, IndexUsing};
use onelog_protocol::errors;
use sqlparser::ast;

use crate::context::ExecContext;
use crate::error::SqlError;

/// What a comment belongs to, by name.
#[derive(Clone, Copy)]
pub(super) enum Commented<'a> {
    Table(&'a str),
    Column(&'a str),
    Key(&'a str),
}

impl Commented<'_> {
    /// MariaDB's longest comment, in characters (`TABLE_COMMENT_MAXLEN`,
    /// `COLUMN_COMMENT_MAXLEN`, `INDEX_COMMENT_MAXLEN`), and the error past it.
    fn limit(self) -> (usize, errors::ErrorCode) {
        match self {
            Commented::Table(_) => (2048, errors::ER_TOO_LONG_TABLE_COMMENT),
            Commented::Column(_) => (1024, errors::ER_TOO_LONG_FIELD_COMMENT),
            Commented::Key(_) => (1024, errors::ER_TOO_LONG_INDEX_COMMENT),
        }
    }

    /// As MariaDB's message names it: `table 't'`, `field 'c'`, `index 'k'`.
    fn what(self) -> String {
        match self {
            Commented::Table(n) => format!("table '{n}'"),
            Commented::Column(n) => format!("field '{n}'"),
            Commented::Key(n) => format!("index '{n}'"),
        }
    }
}

/// The columns of a key. A prefix length (`c(10)`) is refused (1235): onelog indexes whole
/// values, and a UNIQUE prefix would accept rows MariaDB refuses; so is a descending column
/// (`c DESC`: onelog's keys are ascending, and MariaDB 10.8+ shows and scans it descending).
/// Other dialects' column clauses (`NULLS FIRST`, an operator class) are MariaDB's 1064.
pub(super) fn columns(cols: &[ast::IndexColumn]) -> Result<Vec<String>, SqlError> {
    cols.iter()
        .map(|c| {
            if let Some(class) = &c.operator_class {
                return Err(SqlError::syntax(&class.to_string()));
            }
            let o = &c.column.options;
            if o.nulls_first.is_some() || c.column.with_fill.is_some() {
                return Err(SqlError::syntax(&c.column.to_string()));
            }
            match &o.sort {
                None | Some(ast::OrderBySort::Asc) => {}
                Some(ast::OrderBySort::Desc) => {
                    return Err(SqlError::unsupported("descending index columns"))
                }
                Some(ast::OrderBySort::Using(op)) => return Err(SqlError::syntax(&op.to_string())),
            }
            match &c.column.expr {
                ast::Expr::Identifier(i) => Ok(i.value.clone()),
                ast::Expr::Function(f) => Err(SqlError::unsupported(&format!(
                    "index prefix lengths ({f})"
                ))),
                other => Ok(other.to_string()),
            }
        })
        .collect()
}

/// A key a table constraint declares (CREATE TABLE, ALTER TABLE ADD ...).
pub(super) struct Declared {
    /// The name written (None: unnamed; `spec.name` is then its first column's).
    pub given: Option<String>,
    /// Unique for UNIQUE and PRIMARY KEY.
    pub spec: IndexSpec,
    pub primary: bool,
}

/// The key constraint `c` declares (PRIMARY KEY, UNIQUE, KEY / INDEX) with its columns and
/// options; None for other constraints. Other dialects' clauses are refused (1064).
pub(super) fn declared(
    cx: &ExecContext,
    c: &ast::TableConstraint,
) -> Result<Option<Declared>, SqlError> {
    let (given, cols, unique, primary, using, opts) = match c {
        ast::TableConstraint::PrimaryKey(pk) => {
            refuse_clauses(&pk.include, &pk.characteristics, None)?;
            let (using, opts) = (pk.index_type.as_ref(), &pk.index_options);
            (None, &pk.columns, true, true, using, opts)
        }
        ast::TableConstraint::Unique(u) => {
            refuse_clauses(&u.include, &u.characteristics, Some(&u.nulls_distinct))?;
            let given = u.index_name.as_ref().or(u.name.as_ref());
            (
                given,
                &u.columns,
                true,
                false,
                u.index_type.as_ref(),
                &u.index_options,
            )
        }
        ast::TableConstraint::Index(ix) => {
            let using = ix.index_type.as_ref();
            (
                ix.name.as_ref(),
                &ix.columns,
                false,
                false,
                using,
                &ix.index_options,
            )
        }
        _ => return Ok(None),
    };
    let columns = columns(cols)?;
    let given = given.map(|i| i.value.clone());
    let name = match (&given, primary) {
        (_, true) => "PRIMARY".to_string(),
        (Some(g), false) => g.clone(),
        (None, false) => columns.first().cloned().unwrap_or_default(),
    };
    let options = options(cx, &name, using, opts)?;
    Ok(Some(Declared {
        given,
        spec: IndexSpec {
            name,
            columns,
            unique,
            options,
        },
        primary,
    }))
}

/// The options of key `key`: its `USING` (before or after the columns; the last written wins,
/// as MariaDB) and its `COMMENT` (the last one; over 1024 characters 1688, or in a non-strict
/// sql_mode a warning and the first 1024). `USING RTREE` (SPATIAL keys, which onelog has not)
/// is 1235; other types are no MariaDB syntax (1064).
pub(super) fn options(
    cx: &ExecContext,
    key: &str,
    using: Option<&ast::IndexType>,
    options: &[ast::IndexOption],
) -> Result<IndexOptions, SqlError> {
    let mut out = IndexOptions::default();
    if let Some(t) = using {
        out.using = Some(algorithm(t)?);
    }
    for o in options {
        match o {
            ast::IndexOption::Using(t) => out.using = Some(algorithm(t)?),
            ast::IndexOption::Comment(c) => {
                out.comment = comment(cx, c, Commented::Key(key))?;
            }
        }
    }
    Ok(out)
}

fn algorithm(t: &ast::IndexType) -> Result<IndexUsing, SqlError> {
    match t {
        ast::IndexType::BTree => Ok(IndexUsing::BTree),
        ast::IndexType::Hash => Ok(IndexUsing::Hash),
        ast::IndexType::Custom(i) if i.value.eq_ignore_ascii_case("RTREE") => {
            Err(SqlError::unsupported("RTREE indexes"))
        }
        other => Err(SqlError::syntax(&other.to_string())),
    }
}

/// The comment `text` of `of` within MariaDB's limit: longer is its 1628 / 1629 / 1688 in a
/// strict sql_mode, else the same as a warning and the comment cut to the limit.
pub(super) fn comment(cx: &ExecContext, text: &str, of: Commented<'_>) -> Result<String, SqlError> {
    let (max, code) = of.limit();
    if text.chars().count() <= max {
        return Ok(text.to_string());
    }
    let msg = format!("Comment for {} is too long (max = {max})", of.what());
    if crate::sysvar::strict_mode(cx) {
        return Err(SqlError::of(code, msg));
    }
    crate::expr::warn("Warning", code.code, msg);
    Ok(text.chars().take(max).collect())
}

/// Refuses the clauses of CREATE INDEX that are other dialects' (1064 near the clause, as
/// MariaDB's parser stops there).
pub(super) fn refuse_foreign_clauses(ci: &ast::CreateIndex) -> Result<(), SqlError> {
    refuse_clauses(&ci.include, &None, None)?;
    let near = if ci.concurrently {
        "CONCURRENTLY".to_string()
    } else if ci.r#async {
        "ASYNC".to_string()
    } else if let Some(d) = ci.nulls_distinct {
        let not = if d { "" } else { "NOT " };
        format!("NULLS {not}DISTINCT")
    } else if let Some(w) = ci.with.first() {
        format!("WITH ({w})")
    } else if let Some(p) = &ci.predicate {
        format!("WHERE {p}")
    } else {
        return Ok(());
    };
    Err(SqlError::syntax(&near))
}

/// Refuses a key constraint's clauses from other dialects: `INCLUDE`, `DEFERRABLE` and the
/// like, `NULLS [NOT] DISTINCT` (1064).
fn refuse_clauses(
    include: &[ast::Ident],
    characteristics: &Option<ast::ConstraintCharacteristics>,
    nulls: Option<&ast::NullsDistinctOption>,
) -> Result<(), SqlError> {
    if !include.is_empty() {
        return Err(SqlError::syntax(&format!("INCLUDE ({})", names(include))));
    }
    if let Some(ch) = characteristics {
        return Err(SqlError::syntax(&ch.to_string()));
    }
    match nulls {
        Some(n) if *n != ast::NullsDistinctOption::None => Err(SqlError::syntax(&n.to_string())),
        _ => Ok(()),
    }
}

fn names(ids: &[ast::Ident]) -> String {
    ids.iter()
        .map(|i| i.value.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The text SHOW CREATE TABLE prints after a key's columns: ` USING HASH COMMENT '...'`.
pub(crate) fn show_options(o: &IndexOptions) -> String {
    let mut s = String::new();
    if let Some(u) = o.using {
        s.push_str(" USING ");
        s.push_str(u.sql());
    }
    if !o.comment.is_empty() {
        s.push_str(" COMMENT ");
        s.push_str(&crate::execute::admin::accounts::quote(&o.comment));
    }
    s
}
