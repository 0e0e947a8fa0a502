//! SQL-level prepared statements: `PREPARE name FROM 'text' | @var`, `EXECUTE name [USING
//! expr, ...]`, `{DEALLOCATE | DROP} PREPARE name`, as MariaDB 10.11 runs them.
//!
//! They use the session's COM_STMT_PREPARE machinery (`Session::prepare_inner` /
//! `execute_inner`): a name maps to a statement id of the session's prepared map. Names are
//! case insensitive; PREPARE of a name in use replaces its statement; USING takes any
//! expressions (evaluated as one SELECT list, `@vars` included); errors as MariaDB's: 1243 for
//! an unknown name, 1210 for a wrong argument count, 1064 for a NULL text or more than one
//! statement.
//!
//! Invariant: every name in `Session::sql_names` maps to a live id of `Session::prepared`
//! (DEALLOCATE and a replacing PREPARE remove the id with the name; a session reset clears
//! both).

use onelog_binlog::Value;

use super::Session;
use crate::error::SqlError;
use crate::output::Output;

/// One of the three statements.
enum SqlPrepare<'a> {
    Prepare {
        name: String,
        text: Source<'a>,
    },
    Execute {
        name: String,
        using: Option<&'a str>,
    },
    Deallocate {
        name: String,
    },
}

/// Where PREPARE's text comes from.
enum Source<'a> {
    Literal(String),
    Var(&'a str),
}

/// The first word, upper case, and the rest of `sql`.
fn word(sql: &str) -> (String, &str) {
    let s = sql.trim_start();
    let end = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
        .unwrap_or(s.len());
    (s[..end].to_ascii_uppercase(), &s[end..])
}

/// A statement name (plain or back-quoted), lower case, and the rest.
fn name(sql: &str) -> Result<(String, &str), SqlError> {
    let s = sql.trim_start();
    if let Some(q) = s.strip_prefix('`') {
        let end = q.find('`').ok_or_else(|| SqlError::syntax(s))?;
        return Ok((q[..end].to_lowercase(), &q[end + 1..]));
    }
    let end = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
        .unwrap_or(s.len());
    if end == 0 {
        return Err(SqlError::syntax(s));
    }
    Ok((s[..end].to_lowercase(), &s[end..]))
}

/// A quoted string with MySQL's escapes (`\n`, `\t`, `\0`, `\\`, `\'`, a doubled quote).
fn quoted(s: &str) -> Option<(String, &str)> {
    let quote = s.chars().next().filter(|c| *c == '\'' || *c == '"')?;
    let mut out = String::new();
    let mut it = s[1..].char_indices();
    while let Some((i, c)) = it.next() {
        match c {
            '\\' => match it.next()?.1 {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'r' => out.push('\r'),
                '0' => out.push('\0'),
                'Z' => out.push('\u{1a}'),
                other => out.push(other),
            },
            c if c == quote => {
                let rest = &s[1 + i + 1..];
                if rest.starts_with(quote) {
                    out.push(quote);
                    it.next();
                } else {
                    return Some((out, rest));
                }
            }
            c => out.push(c),
        }
    }
    None
}

fn end_of_statement(rest: &str) -> Result<(), SqlError> {
    let r = rest.trim();
    if r.is_empty() || r == ";" {
        Ok(())
    } else {
        Err(SqlError::syntax(r))
    }
}

/// Parses one of the three statements; None when `sql` is none of them.
fn parse(sql: &str) -> Option<Result<SqlPrepare<'_>, SqlError>> {
    let (first, rest) = word(sql);
    let r = match first.as_str() {
        "PREPARE" => (|| {
            let (name, rest) = name(rest)?;
            let (from, rest) = word(rest);
            if from != "FROM" {
                return Err(SqlError::syntax(rest));
            }
            let rest = rest.trim_start();
            let (text, tail) = match rest.strip_prefix('@') {
                Some(v) => {
                    let end = v
                        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$' || c == '.'))
                        .unwrap_or(v.len());
                    (Source::Var(&v[..end]), &v[end..])
                }
                None => {
                    let (t, tail) = quoted(rest).ok_or_else(|| SqlError::syntax(rest))?;
                    (Source::Literal(t), tail)
                }
            };
            end_of_statement(tail)?;
            Ok(SqlPrepare::Prepare { name, text })
        })(),
        "EXECUTE" => (|| {
            let (name, rest) = name(rest)?;
            let (using, tail) = word(rest);
            match using.as_str() {
                "" => {
                    end_of_statement(rest)?;
                    Ok(SqlPrepare::Execute { name, using: None })
                }
                "USING" => Ok(SqlPrepare::Execute {
                    name,
                    using: Some(tail.trim().trim_end_matches(';')),
                }),
                _ => Err(SqlError::syntax(rest)),
            }
        })(),
        "DEALLOCATE" | "DROP" => {
            let (prepare, rest) = word(rest);
            if prepare != "PREPARE" {
                return None;
            }
            (|| {
                let (name, rest) = name(rest)?;
                end_of_statement(rest)?;
                Ok(SqlPrepare::Deallocate { name })
            })()
        }
        _ => return None,
    };
    Some(r)
}

impl Session {
    /// Runs `sql` when it is PREPARE, EXECUTE or DEALLOCATE/DROP PREPARE.
    pub(super) fn sql_prepared(&mut self, sql: &str) -> Option<Result<Output, SqlError>> {
        let stmt = match parse(sql)? {
            Ok(s) => s,
            Err(e) => return Some(Err(e)),
        };
        Some(match stmt {
            SqlPrepare::Prepare { name, text } => self.sql_prepare(name, text),
            SqlPrepare::Execute { name, using } => self.sql_execute(&name, using),
            SqlPrepare::Deallocate { name } => match self.sql_names.remove(&name) {
                Some(id) => {
                    self.prepared.remove(&id);
                    Ok(ok(""))
                }
                None => Err(unknown(&name, "DEALLOCATE PREPARE")),
            },
        })
    }

    fn sql_prepare(&mut self, name: String, text: Source<'_>) -> Result<Output, SqlError> {
        let text = match text {
            Source::Literal(t) => t,
            Source::Var(v) => match self.cx.user_vars.get(&v.to_lowercase()) {
                None | Some(Value::Null) => return Err(SqlError::syntax("NULL")),
                Some(x) => String::from_utf8_lossy(&crate::expr::text_of(x)).into_owned(),
            },
        };
        // A PREPARE of a name in use drops the old statement first, even when this one fails.
        if let Some(old) = self.sql_names.remove(&name) {
            self.prepared.remove(&old);
        }
        let info = self.prepare_inner(&text)?;
        // MariaDB's general log shows the prepared text after the PREPARE itself.
        self.log_general("Prepare", crate::querylog::trim_query(&text));
        self.sql_names.insert(name, info.stmt_id);
        Ok(ok("Statement prepared"))
    }

    fn sql_execute(&mut self, name: &str, using: Option<&str>) -> Result<Output, SqlError> {
        let Some(&id) = self.sql_names.get(name) else {
            return Err(unknown(name, "EXECUTE"));
        };
        let params: Vec<Value> = match using {
            None => Vec::new(),
            Some(list) => match self.run_text(&format!("SELECT {list}"))? {
                Output::Rows { mut rows, .. } if rows.len() == 1 => rows.swap_remove(0),
                _ => return Err(SqlError::syntax(list)),
            },
        };
        let want = self.prepared.get(&id).map_or(0, |p| p.params);
        if params.len() != want {
            return Err(SqlError::wrong_arguments("EXECUTE"));
        }
        let r = self.execute_inner(id, &params)?;
        // Logged as MariaDB logs it: the statement with its parameters written in, as a
        // general log `Execute` line and in the slow log in the EXECUTE's place.
        let logs = &self.cx.server.query_logs;
        if logs.general_on() || logs.slow_on() {
            let text = self.expanded_statement(id, &params).unwrap_or_default();
            self.log_general("Execute", &text);
            self.expanded = Some(text);
        }
        Ok(r)
    }
}

fn ok(info: &str) -> Output {
    Output::Ok {
        affected_rows: 0,
        last_insert_id: 0,
        warnings: 0,
        info: info.to_string(),
    }
}

fn unknown(name: &str, what: &str) -> SqlError {
    SqlError::of(
        onelog_protocol::errors::ER_UNKNOWN_STMT_HANDLER,
        format!("Unknown prepared statement handler ({name}) given to {what}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_three_statements_parse_and_others_do_not() {
        assert!(matches!(
            parse("PREPARE S1 FROM 'SELECT ''a'', ?'"),
            Some(Ok(SqlPrepare::Prepare { name, text: Source::Literal(t) }))
                if name == "s1" && t == "SELECT 'a', ?"
        ));
        assert!(matches!(
            parse("prepare `x y` from @Q"),
            Some(Ok(SqlPrepare::Prepare { name, text: Source::Var("Q") })) if name == "x y"
        ));
        assert!(matches!(
            parse("EXECUTE s USING @a, 5"),
            Some(Ok(SqlPrepare::Execute {
                using: Some("@a, 5"),
                ..
            }))
        ));
        assert!(matches!(
            parse("DROP PREPARE s"),
            Some(Ok(SqlPrepare::Deallocate { .. }))
        ));
        assert!(parse("DROP TABLE s").is_none());
        assert!(parse("SELECT 1").is_none());
        assert!(matches!(parse("PREPARE s FROM 'x' junk"), Some(Err(_))));
    }
}
