//! my.cnf parsing: the `--defaults-file=PATH` of `onelog serve`.
//!
//! Owns [`read_defaults_file`] and [`parse_defaults`], which turn an option file into the list
//! of `--name=value` / `--flag` arguments that the command line parser (`cli.rs`) then treats
//! exactly like options typed on the command line, placed before them (so the command line
//! wins, as in mariadbd).
//!
//! Format (MariaDB's option files): `[group]` headers; inside the groups we read
//! (`[mysqld]`, `[server]`, `[mariadbd]`, `[mariadb]`, `[onelog]`) each line is `name=value`,
//! `name = value` or a bare `name` (a flag); blank lines and lines starting with `#` or `;`
//! are ignored, as is a trailing ` #comment` after a value; values may be quoted with `'` or
//! `"`. Lines of other groups (`[client]`, `[mysqldump]`, …) are skipped without looking at
//! them, so one file can serve the clients too. `!include` and `!includedir` are refused with
//! a clear error (we do not follow other files). Invariant: every returned argument starts
//! with `--`, and its name has no leading/trailing blanks.

use std::fmt;
use std::path::{Path, PathBuf};

/// Groups of an option file that `onelog serve` reads, in MariaDB's spirit: the server's own
/// groups plus `[onelog]` for options meant only for onelog.
pub const SERVER_GROUPS: &[&str] = &["mysqld", "server", "mariadbd", "mariadb", "onelog"];

/// An option file that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub path: PathBuf,
    /// 1-based line number (0: the file as a whole).
    pub line: usize,
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.path.display(), self.message)
        } else {
            write!(
                f,
                "{} line {}: {}",
                self.path.display(),
                self.line,
                self.message
            )
        }
    }
}

impl std::error::Error for ConfigError {}

/// Reads `path` and returns its server options as command line arguments (`--name=value`).
pub fn read_defaults_file(path: &Path) -> Result<Vec<String>, ConfigError> {
    let text = std::fs::read(path).map_err(|e| ConfigError {
        path: path.to_path_buf(),
        line: 0,
        message: format!("cannot read the defaults file: {e}"),
    })?;
    let text = String::from_utf8(text).map_err(|e| ConfigError {
        path: path.to_path_buf(),
        line: 0,
        message: format!("not valid UTF-8 (byte {})", e.utf8_error().valid_up_to()),
    })?;
    parse_defaults(path, &text)
}

/// Parses option file text (see the module docs); `path` only names the file in errors.
pub fn parse_defaults(path: &Path, text: &str) -> Result<Vec<String>, ConfigError> {
    let err = |line: usize, message: String| ConfigError {
        path: path.to_path_buf(),
        line,
        message,
    };
    let mut out = Vec::new();
    let mut in_server_group = false;
    for (i, raw) in text.lines().enumerate() {
        let lineno = i + 1;
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if line.starts_with('!') {
            let directive = line.split_whitespace().next().unwrap_or(line);
            return Err(err(
                lineno,
                format!(
                    "'{directive}' is not supported by onelog: put every option in this one file"
                ),
            ));
        }
        if let Some(rest) = line.strip_prefix('[') {
            let Some(name) = rest.strip_suffix(']') else {
                return Err(err(lineno, format!("malformed group header '{line}'")));
            };
            let name = name.trim().to_ascii_lowercase();
            in_server_group = SERVER_GROUPS.contains(&name.as_str());
            continue;
        }
        if !in_server_group {
            continue;
        }
        let (name, value) = match line.split_once('=') {
            Some((n, v)) => (n.trim(), Some(parse_value(v).map_err(|m| err(lineno, m))?)),
            None => (strip_trailing_comment(line).trim(), None),
        };
        if name.is_empty() {
            return Err(err(lineno, format!("option without a name: '{line}'")));
        }
        // `--  name` (blanks after the dashes) names `name`, as the invariant wants.
        let name = name.strip_prefix("--").map_or(name, str::trim_start);
        debug_assert_eq!(name, name.trim(), "an option name with blanks around it");
        let arg = match value {
            Some(v) => format!("--{name}={v}"),
            None => format!("--{name}"),
        };
        debug_assert!(arg.starts_with("--"));
        out.push(arg);
    }
    Ok(out)
}

/// A value: unquoted (trailing ` #comment` removed, blanks trimmed) or quoted with `'`/`"`
/// (backslash escapes `\\`, `\'`, `\"`, `\n`, `\t` inside).
fn parse_value(v: &str) -> Result<String, String> {
    let v = v.trim();
    let Some(quote) = v.chars().next().filter(|c| *c == '\'' || *c == '"') else {
        return Ok(strip_trailing_comment(v).trim_end().to_string());
    };
    let mut out = String::new();
    let mut chars = v[1..].chars();
    loop {
        match chars.next() {
            None => return Err(format!("unterminated quoted value {v}")),
            Some('\\') => match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some(c) => out.push(c),
                None => return Err(format!("unterminated quoted value {v}")),
            },
            Some(c) if c == quote => break,
            Some(c) => out.push(c),
        }
    }
    let rest = chars.as_str().trim();
    if !(rest.is_empty() || rest.starts_with('#') || rest.starts_with(';')) {
        return Err(format!("unexpected text after the quoted value: '{rest}'"));
    }
    Ok(out)
}

/// `value  # comment` → `value  `. A `#` glued to the value (`a#b`) is kept, as in MariaDB.
fn strip_trailing_comment(v: &str) -> &str {
    let bytes = v.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        if *b == b'#' && (i == 0 || bytes[i - 1].is_ascii_whitespace()) {
            return &v[..i];
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Vec<String>, ConfigError> {
        parse_defaults(Path::new("my.cnf"), text)
    }

    #[test]
    fn server_groups_are_read_and_other_groups_skipped() {
        let text = "\
# a comment
[client]
port=1111
user=somebody

[mysqld]
port = 3307
datadir=/var/lib/onelog   # trailing comment
; another comment
skip-name-resolve
[mariadbd]
server_id=7
[onelog]
max-binlog-size = 64M
[mysqldump]
quick
";
        assert_eq!(
            parse(text).unwrap(),
            vec![
                "--port=3307",
                "--datadir=/var/lib/onelog",
                "--skip-name-resolve",
                "--server_id=7",
                "--max-binlog-size=64M",
            ]
        );
    }

    #[test]
    fn quoted_values_keep_blanks_and_hashes() {
        let text = "[server]\nsocket = \"/tmp/my sock#1\"\nbind-address='127.0.0.1' # c\n";
        assert_eq!(
            parse(text).unwrap(),
            vec!["--socket=/tmp/my sock#1", "--bind-address=127.0.0.1"]
        );
    }

    #[test]
    fn include_directives_are_refused_with_the_line() {
        let e = parse("[mysqld]\nport=1\n!includedir /etc/mysql/conf.d/\n").unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.message.contains("!includedir"), "{e}");
    }

    #[test]
    fn malformed_lines_are_errors() {
        assert_eq!(parse("[mysqld\n").unwrap_err().line, 1);
        assert_eq!(parse("[mysqld]\n= 3\n").unwrap_err().line, 2);
        assert_eq!(parse("[mysqld]\nsocket='abc\n").unwrap_err().line, 2);
    }

    #[test]
    fn options_before_any_group_are_ignored() {
        assert_eq!(
            parse("port=5\n[mysqld]\nport=6\n").unwrap(),
            vec!["--port=6"]
        );
    }
}
