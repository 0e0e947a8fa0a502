//! JSON documents and JSON paths, as MariaDB 10.11's `json_lib` reads and writes them: the
//! parser ([`parse`]), the two output forms MariaDB's functions use ([`Json::write`]:
//! `{"a": 1, "b": [1, 2]}`, [`Json::write_compact`]: `{"a":1,"b":[1,2]}`), string escaping
//! ([`quote`], [`unescape`]), the path language ([`parse_path`]: `$`, `.key`, `."key"`, `.*`,
//! `[n]`, `[last]`, `[last-n]`, `[-n]`, `[n to m]`, `[*]`, `**`) and the two ways functions
//! use a path: selecting values in document order ([`select`]) and finding the one place a
//! wildcard-free path names ([`locate_mut`]).
//!
//! Numbers and strings keep the text they were written with (MariaDB prints `1.50e0` and
//! `"\u00e9"` back as written); object members keep their order and duplicates (the first
//! of duplicate keys is the one a path finds). MariaDB's number syntax is lenient (`1.`,
//! `-` and `1e` are accepted, a leading `0` followed by a digit is not) and so is its string
//! escape syntax (`\q` is accepted): this parser accepts the same texts.
//!
//! Error positions are MariaDB's: one past the offending byte, except where a member's `:`
//! or a literal's next letter was expected (the offending byte's own offset).
//!
//! Invariants: parsing never recurses deeper than [`DEPTH_LIMIT`] (MariaDB's limit, error
//! 4040), so no input can exhaust the stack; nothing here panics on any input.
//!
//! Called by the JSON functions (`functions/json.rs`).

/// MariaDB's limit on nested arrays and objects (`JSON_DEPTH_LIMIT`).
pub(crate) const DEPTH_LIMIT: usize = 32;

/// A parsed JSON value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Json {
    Null,
    Bool(bool),
    /// A number, as written.
    Num(String),
    /// A string: the escaped text between its quotes, as written.
    Str(String),
    Arr(Vec<Json>),
    /// Members in document order; keys are escaped text as written.
    Obj(Vec<(String, Json)>),
}

/// Why a text is not JSON (MariaDB's conditions 4037, 4038, 4040).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TextError {
    /// The text ended inside a value (4037).
    End,
    /// A syntax error at this position (4038).
    Syntax(usize),
    /// Nesting deeper than [`DEPTH_LIMIT`] at this position (4040).
    Depth(usize),
}

/// Parses a whole JSON text (surrounding whitespace allowed).
pub(crate) fn parse(text: &[u8]) -> Result<Json, TextError> {
    let mut p = Parser { s: text, i: 0 };
    p.ws();
    let v = p.value(0)?;
    p.ws();
    if p.i < p.s.len() {
        return Err(TextError::Syntax(p.i + 1));
    }
    Ok(v)
}

/// Whether `text` is a JSON document (a JSON column's check).
pub(crate) fn valid(text: &[u8]) -> bool {
    parse(text).is_ok()
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self
            .s
            .get(self.i)
            .is_some_and(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\r'))
        {
            self.i += 1;
        }
    }

    fn peek(&self) -> Result<u8, TextError> {
        self.s.get(self.i).copied().ok_or(TextError::End)
    }

    fn value(&mut self, depth: usize) -> Result<Json, TextError> {
        match self.peek()? {
            b'{' | b'[' if depth >= DEPTH_LIMIT => Err(TextError::Depth(self.i + 1)),
            b'{' => self.object(depth),
            b'[' => self.array(depth),
            b'"' => Ok(Json::Str(self.string()?)),
            b't' => self.literal(b"true", Json::Bool(true)),
            b'f' => self.literal(b"false", Json::Bool(false)),
            b'n' => self.literal(b"null", Json::Null),
            b'-' | b'0'..=b'9' => self.number(),
            _ => Err(TextError::Syntax(self.i + 1)),
        }
    }

    /// After a scalar: the next byte must end it.
    fn delimited(&self) -> Result<(), TextError> {
        match self.s.get(self.i) {
            None | Some(b' ' | b'\t' | b'\n' | b'\r' | b',' | b']' | b'}') => Ok(()),
            Some(_) => Err(TextError::Syntax(self.i + 1)),
        }
    }

    fn literal(&mut self, word: &[u8], v: Json) -> Result<Json, TextError> {
        for &w in word {
            match self.s.get(self.i) {
                None => return Err(TextError::End),
                Some(&c) if c == w => self.i += 1,
                Some(_) => return Err(TextError::Syntax(self.i)),
            }
        }
        self.delimited()?;
        Ok(v)
    }

    fn digits(&mut self) {
        while self.s.get(self.i).is_some_and(u8::is_ascii_digit) {
            self.i += 1;
        }
    }

    fn number(&mut self) -> Result<Json, TextError> {
        let start = self.i;
        if self.s[self.i] == b'-' {
            self.i += 1;
        }
        if self.s.get(self.i) == Some(&b'0') {
            self.i += 1;
            if self.s.get(self.i).is_some_and(u8::is_ascii_digit) {
                return Err(TextError::Syntax(self.i + 1));
            }
        } else {
            self.digits();
        }
        if self.s.get(self.i) == Some(&b'.') {
            self.i += 1;
            self.digits();
        }
        if matches!(self.s.get(self.i), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.s.get(self.i), Some(b'+' | b'-')) {
                self.i += 1;
            }
            self.digits();
        }
        self.delimited()?;
        Ok(Json::Num(
            String::from_utf8_lossy(&self.s[start..self.i]).into_owned(),
        ))
    }

    /// A string at `"`: its escaped text.
    fn string(&mut self) -> Result<String, TextError> {
        debug_assert_eq!(self.s.get(self.i), Some(&b'"'));
        self.i += 1;
        let start = self.i;
        loop {
            match self.peek()? {
                b'"' => break,
                b'\\' => self.i += 2,
                _ => self.i += 1,
            }
        }
        let text = String::from_utf8_lossy(&self.s[start..self.i]).into_owned();
        self.i += 1;
        Ok(text)
    }

    fn array(&mut self, depth: usize) -> Result<Json, TextError> {
        self.i += 1;
        self.ws();
        let mut items = Vec::new();
        if self.peek()? == b']' {
            self.i += 1;
            return Ok(Json::Arr(items));
        }
        loop {
            self.ws();
            items.push(self.value(depth + 1)?);
            self.ws();
            match self.peek()? {
                b',' => self.i += 1,
                b']' => {
                    self.i += 1;
                    return Ok(Json::Arr(items));
                }
                _ => return Err(TextError::Syntax(self.i + 1)),
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<Json, TextError> {
        self.i += 1;
        self.ws();
        let mut members = Vec::new();
        if self.peek()? == b'}' {
            self.i += 1;
            return Ok(Json::Obj(members));
        }
        loop {
            self.ws();
            if self.peek()? != b'"' {
                return Err(TextError::Syntax(self.i + 1));
            }
            let key = self.string()?;
            self.ws();
            if self.peek()? != b':' {
                return Err(TextError::Syntax(self.i));
            }
            self.i += 1;
            self.ws();
            members.push((key, self.value(depth + 1)?));
            self.ws();
            match self.peek()? {
                b',' => self.i += 1,
                b'}' => {
                    self.i += 1;
                    return Ok(Json::Obj(members));
                }
                _ => return Err(TextError::Syntax(self.i + 1)),
            }
        }
    }
}

impl Json {
    /// MariaDB's output form: `{"a": 1, "b": [1, 2]}`.
    pub(crate) fn write(&self, out: &mut String) {
        self.write_with(out, ", ", ": ");
    }

    /// JSON_COMPACT's form: `{"a":1,"b":[1,2]}`.
    pub(crate) fn write_compact(&self, out: &mut String) {
        self.write_with(out, ",", ":");
    }

    fn write_with(&self, out: &mut String, comma: &str, colon: &str) {
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Num(n) => out.push_str(n),
            Json::Str(s) => {
                out.push('"');
                out.push_str(s);
                out.push('"');
            }
            Json::Arr(items) => {
                out.push('[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(comma);
                    }
                    v.write_with(out, comma, colon);
                }
                out.push(']');
            }
            Json::Obj(members) => {
                out.push('{');
                for (i, (k, v)) in members.iter().enumerate() {
                    if i > 0 {
                        out.push_str(comma);
                    }
                    out.push('"');
                    out.push_str(k);
                    out.push('"');
                    out.push_str(colon);
                    v.write_with(out, comma, colon);
                }
                out.push('}');
            }
        }
    }

    /// [`write`](Self::write) into a new string.
    pub(crate) fn text(&self) -> String {
        let mut s = String::new();
        self.write(&mut s);
        s
    }

    /// JSON_TYPE's name of the value.
    pub(crate) fn type_name(&self) -> &'static str {
        match self {
            Json::Null => "NULL",
            Json::Bool(_) => "BOOLEAN",
            Json::Num(n) if n.contains(['.', 'e', 'E']) => "DOUBLE",
            Json::Num(_) => "INTEGER",
            Json::Str(_) => "STRING",
            Json::Arr(_) => "ARRAY",
            Json::Obj(_) => "OBJECT",
        }
    }

    /// JSON_DEPTH: 1 for a scalar or an empty array or object.
    pub(crate) fn depth(&self) -> usize {
        let children: Box<dyn Iterator<Item = &Json>> = match self {
            Json::Arr(items) => Box::new(items.iter()),
            Json::Obj(members) => Box::new(members.iter().map(|(_, v)| v)),
            _ => return 1,
        };
        1 + children.map(Json::depth).max().unwrap_or(0)
    }

    /// The value of the first member called `key` (unescaped), if an object has one.
    pub(crate) fn member(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Obj(m) => m.iter().find(|(k, _)| unescape(k) == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Scalars equal as JSON_CONTAINS compares them: numbers by value, strings by their
    /// unescaped text; arrays and objects never equal here.
    pub(crate) fn scalar_eq(&self, other: &Json) -> bool {
        match (self, other) {
            (Json::Null, Json::Null) => true,
            (Json::Bool(a), Json::Bool(b)) => a == b,
            (Json::Num(a), Json::Num(b)) => {
                a == b || matches!((a.parse::<f64>(), b.parse::<f64>()), (Ok(x), Ok(y)) if x == y)
            }
            (Json::Str(a), Json::Str(b)) => a == b || unescape(a) == unescape(b),
            _ => false,
        }
    }
}

/// A string as a JSON string's escaped text (JSON_QUOTE without its quotes).
pub(crate) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// A JSON string's escaped text, unescaped (`\u` escapes, surrogate pairs joined; an
/// unknown escape stands for the byte after the backslash, as MariaDB reads it).
pub(crate) fn unescape(s: &str) -> String {
    if !s.contains('\\') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('t') => out.push('\t'),
            Some('b') => out.push('\u{8}'),
            Some('f') => out.push('\u{c}'),
            Some('u') => {
                let mut code = hex4(&mut chars);
                if (0xD800..0xDC00).contains(&code) {
                    let mut look = chars.clone();
                    if look.next() == Some('\\') && look.next() == Some('u') {
                        let low = hex4(&mut look);
                        if (0xDC00..0xE000).contains(&low) {
                            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
                            chars = look;
                        }
                    }
                }
                out.push(char::from_u32(code).unwrap_or('\u{FFFD}'));
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

fn hex4(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> u32 {
    let mut code = 0;
    for _ in 0..4 {
        match chars.peek().and_then(|c| c.to_digit(16)) {
            Some(d) => {
                code = code * 16 + d;
                chars.next();
            }
            None => break,
        }
    }
    code
}

/// `s` as a JSON string literal (JSON_QUOTE).
pub(crate) fn quote(s: &str) -> String {
    format!("\"{}\"", escape(s))
}

/// An array position of a path step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum At {
    /// `[n]`: from the start.
    From(u32),
    /// `[last - n]` or `[-(n+1)]`: from the end.
    Last(u32),
}

impl At {
    /// The position in an array of `len` elements (None before its start).
    pub(crate) fn resolve(self, len: usize) -> Option<usize> {
        match self {
            At::From(n) => Some(n as usize),
            At::Last(n) => len.checked_sub(1 + n as usize),
        }
    }
}

/// One step of a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Step {
    /// `.key` (unescaped).
    Key(String),
    /// `.*`
    AnyKey,
    /// `[n]`
    Index(At),
    /// `[*]`
    AnyIndex,
    /// `[n to m]`
    Range(At, At),
    /// `**`: any number of steps, none included.
    AnyDepth,
}

/// A parsed path: `$` and its steps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Path {
    pub steps: Vec<Step>,
}

impl Path {
    /// True when the path can name more than one place (MariaDB's functions that change a
    /// document refuse such paths, 4044).
    pub(crate) fn has_wildcard(&self) -> bool {
        self.steps.iter().any(|s| {
            matches!(
                s,
                Step::AnyKey | Step::AnyIndex | Step::Range(..) | Step::AnyDepth
            )
        })
    }
}

/// Why a path does not parse (4041, 4042).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PathError {
    End,
    Syntax(usize),
}

/// Parses a path (`$.a[0]`).
pub(crate) fn parse_path(text: &[u8]) -> Result<Path, PathError> {
    let mut p = Parser { s: text, i: 0 };
    p.ws();
    match p.s.get(p.i) {
        None => return Err(PathError::End),
        Some(b'$') => p.i += 1,
        Some(_) => return Err(PathError::Syntax(p.i + 1)),
    }
    let mut steps = Vec::new();
    loop {
        p.ws();
        let Some(&c) = p.s.get(p.i) else { break };
        p.i += 1;
        let step = match c {
            b'.' => path_key(&mut p)?,
            b'[' => path_index(&mut p)?,
            b'*' if p.s.get(p.i) == Some(&b'*') => {
                p.i += 1;
                Step::AnyDepth
            }
            _ => return Err(PathError::Syntax(p.i)),
        };
        steps.push(step);
    }
    if steps.last() == Some(&Step::AnyDepth) {
        return Err(PathError::End);
    }
    Ok(Path { steps })
}

fn path_key(p: &mut Parser<'_>) -> Result<Step, PathError> {
    match p.s.get(p.i) {
        None => Err(PathError::End),
        Some(b'*') => {
            p.i += 1;
            Ok(Step::AnyKey)
        }
        Some(b'"') => {
            let key = p.string().map_err(|_| PathError::End)?;
            Ok(Step::Key(unescape(&key)))
        }
        Some(_) => {
            let start = p.i;
            while p
                .s
                .get(p.i)
                .is_some_and(|c| !matches!(c, b'.' | b'[' | b' ' | b'\t' | b'*'))
            {
                p.i += 1;
            }
            if p.i == start {
                return Err(PathError::Syntax(p.i + 1));
            }
            Ok(Step::Key(
                String::from_utf8_lossy(&p.s[start..p.i]).into_owned(),
            ))
        }
    }
}

fn path_index(p: &mut Parser<'_>) -> Result<Step, PathError> {
    p.ws();
    if p.s.get(p.i) == Some(&b'*') {
        p.i += 1;
        p.ws();
        return close_bracket(p).map(|_| Step::AnyIndex);
    }
    let from = path_at(p)?;
    p.ws();
    if p.s[p.i..].starts_with(b"to") {
        p.i += 2;
        p.ws();
        let to = path_at(p)?;
        p.ws();
        close_bracket(p)?;
        return Ok(Step::Range(from, to));
    }
    close_bracket(p)?;
    Ok(Step::Index(from))
}

fn close_bracket(p: &mut Parser<'_>) -> Result<(), PathError> {
    match p.s.get(p.i) {
        None => Err(PathError::End),
        Some(b']') => {
            p.i += 1;
            Ok(())
        }
        Some(_) => Err(PathError::Syntax(p.i + 1)),
    }
}

/// `n`, `-n`, `last` or `last - n`.
fn path_at(p: &mut Parser<'_>) -> Result<At, PathError> {
    let number = |p: &mut Parser<'_>| -> Result<u32, PathError> {
        let start = p.i;
        p.digits();
        if p.i == start {
            return match p.s.get(p.i) {
                None => Err(PathError::End),
                Some(_) => Err(PathError::Syntax(p.i + 1)),
            };
        }
        std::str::from_utf8(&p.s[start..p.i])
            .ok()
            .and_then(|t| t.parse().ok())
            .ok_or(PathError::Syntax(p.i))
    };
    if p.s[p.i..].starts_with(b"last") {
        p.i += 4;
        p.ws();
        if p.s.get(p.i) == Some(&b'-') {
            p.i += 1;
            p.ws();
            return Ok(At::Last(number(p)?));
        }
        return Ok(At::Last(0));
    }
    if p.s.get(p.i) == Some(&b'-') {
        p.i += 1;
        let n = number(p)?;
        return match n.checked_sub(1) {
            Some(k) => Ok(At::Last(k)),
            None => Err(PathError::Syntax(p.i)),
        };
    }
    Ok(At::From(number(p)?))
}

/// The values `paths` name in `doc`, each once, in document order (as JSON_EXTRACT lists
/// them). `$[0]` of a value that is not an array is the value itself.
pub(crate) fn select<'a>(doc: &'a Json, paths: &[Path]) -> Vec<&'a Json> {
    let states: Vec<(usize, usize)> = (0..paths.len()).map(|p| (p, 0)).collect();
    let mut out = Vec::new();
    walk(doc, states, paths, &mut out);
    out
}

/// One node of [`select`]'s walk: `states` are (path, next step) pairs reaching `node`.
fn walk<'a>(
    node: &'a Json,
    mut states: Vec<(usize, usize)>,
    paths: &[Path],
    out: &mut Vec<&'a Json>,
) {
    // Close over the steps that may match without moving: `**` (none) and `[0]`/`[last]` of
    // a value that is not an array (the value itself).
    let mut k = 0;
    while k < states.len() {
        let (p, s) = states[k];
        let step = paths[p].steps.get(s);
        let stays = match step {
            Some(Step::AnyDepth) => true,
            Some(Step::Index(At::From(0) | At::Last(0))) => !matches!(node, Json::Arr(_)),
            _ => false,
        };
        if stays && !states.contains(&(p, s + 1)) {
            states.push((p, s + 1));
        }
        k += 1;
    }
    if states.iter().any(|&(p, s)| s == paths[p].steps.len()) {
        out.push(node);
    }
    let next = |matches: &dyn Fn(&Step) -> bool| -> Vec<(usize, usize)> {
        let mut n = Vec::new();
        for &(p, s) in &states {
            match paths[p].steps.get(s) {
                Some(Step::AnyDepth) => n.push((p, s)),
                Some(step) if matches(step) => n.push((p, s + 1)),
                _ => {}
            }
        }
        n
    };
    match node {
        Json::Arr(items) => {
            let len = items.len();
            for (i, v) in items.iter().enumerate() {
                let n = next(&|step| match step {
                    Step::Index(a) => a.resolve(len) == Some(i),
                    Step::AnyIndex => true,
                    Step::Range(a, b) => {
                        a.resolve(len).is_some_and(|a| a <= i)
                            && b.resolve(len).is_some_and(|b| i <= b)
                    }
                    _ => false,
                });
                if !n.is_empty() {
                    walk(v, n, paths, out);
                }
            }
        }
        Json::Obj(members) => {
            for (key, v) in members {
                let plain = unescape(key);
                let n = next(&|step| match step {
                    Step::Key(k) => *k == plain,
                    Step::AnyKey => true,
                    _ => false,
                });
                if !n.is_empty() {
                    walk(v, n, paths, out);
                }
            }
        }
        _ => {}
    }
}

/// The one place a wildcard-free path names in `doc`, if it exists.
pub(crate) fn locate_mut<'a>(doc: &'a mut Json, steps: &[Step]) -> Option<&'a mut Json> {
    let Some((step, rest)) = steps.split_first() else {
        return Some(doc);
    };
    let child = match (step, doc) {
        (Step::Key(k), Json::Obj(members)) => members
            .iter_mut()
            .find(|(key, _)| unescape(key) == *k)
            .map(|(_, v)| v)?,
        (Step::Index(a), Json::Arr(items)) => {
            let i = a.resolve(items.len())?;
            items.get_mut(i)?
        }
        (Step::Index(At::From(0) | At::Last(0)), other) => other,
        _ => return None,
    };
    locate_mut(child, rest)
}

/// The paths (as JSON_SEARCH writes them: `$.a[0]`) of the string scalars in `doc` that
/// `matches`, in document order.
pub(crate) fn find_strings(doc: &Json, matches: &dyn Fn(&str) -> bool) -> Vec<String> {
    fn go(v: &Json, at: &mut String, matches: &dyn Fn(&str) -> bool, out: &mut Vec<String>) {
        let len = at.len();
        match v {
            Json::Str(s) if matches(&unescape(s)) => out.push(at.clone()),
            Json::Arr(items) => {
                for (i, item) in items.iter().enumerate() {
                    at.push_str(&format!("[{i}]"));
                    go(item, at, matches, out);
                    at.truncate(len);
                }
            }
            Json::Obj(members) => {
                for (k, item) in members {
                    at.push('.');
                    at.push_str(k);
                    go(item, at, matches, out);
                    at.truncate(len);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    go(doc, &mut "$".to_string(), matches, &mut out);
    out
}

/// JSON_CONTAINS: whether `target` contains `candidate` (MySQL's rules: a scalar contains
/// an equal scalar; an array contains an array whose every element it contains, and any
/// value one of its elements contains; an object contains an object whose every member it
/// has with a value containing the candidate's).
pub(crate) fn contains(target: &Json, candidate: &Json) -> bool {
    match (target, candidate) {
        (Json::Arr(t), Json::Arr(c)) => c.iter().all(|x| t.iter().any(|y| contains(y, x))),
        (Json::Arr(t), c) => t.iter().any(|y| contains(y, c)),
        (Json::Obj(_), Json::Obj(c)) => c.iter().all(|(k, cv)| {
            target
                .member(&unescape(k))
                .is_some_and(|tv| contains(tv, cv))
        }),
        (Json::Obj(_), _) | (_, Json::Arr(_) | Json::Obj(_)) => false,
        (t, c) => t.scalar_eq(c),
    }
}

/// JSON_MERGE_PATCH of two documents (RFC 7396).
pub(crate) fn merge_patch(target: Json, patch: Json) -> Json {
    let Json::Obj(patch_members) = patch else {
        return patch;
    };
    let mut members = match target {
        Json::Obj(m) => m,
        _ => Vec::new(),
    };
    for (k, pv) in patch_members {
        let plain = unescape(&k);
        let at = members.iter().position(|(mk, _)| unescape(mk) == plain);
        match (pv, at) {
            (Json::Null, Some(i)) => {
                members.remove(i);
            }
            (Json::Null, None) => {}
            (pv, Some(i)) => {
                let old = std::mem::replace(&mut members[i].1, Json::Null);
                members[i].1 = merge_patch(old, pv);
            }
            (pv, None) => members.push((k, merge_patch(Json::Null, pv))),
        }
    }
    Json::Obj(members)
}

/// JSON_MERGE_PRESERVE (JSON_MERGE) of two documents: objects merge member by member
/// (a key in both merges its two values), arrays concatenate, and anything else makes an
/// array of both sides' elements.
pub(crate) fn merge_preserve(a: Json, b: Json) -> Json {
    match (a, b) {
        (Json::Obj(mut members), Json::Obj(more)) => {
            for (k, v) in more {
                let plain = unescape(&k);
                match members.iter().position(|(mk, _)| unescape(mk) == plain) {
                    Some(i) => {
                        let old = std::mem::replace(&mut members[i].1, Json::Null);
                        members[i].1 = merge_preserve(old, v);
                    }
                    None => members.push((k, v)),
                }
            }
            Json::Obj(members)
        }
        (a, b) => {
            let mut items = match a {
                Json::Arr(items) => items,
                other => vec![other],
            };
            match b {
                Json::Arr(more) => items.extend(more),
                other => items.push(other),
            }
            Json::Arr(items)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(t: &str) -> String {
        parse(t.as_bytes())
            .map(|j| j.text())
            .unwrap_or_else(|e| format!("{e:?}"))
    }

    #[test]
    fn parses_and_writes_as_mariadb() {
        assert_eq!(
            round(r#"{"a":1, "b" : [ 1 , 2 ]}"#),
            r#"{"a": 1, "b": [1, 2]}"#
        );
        assert_eq!(
            round(r#"[1.50e0, "\u00e9x", true, null]"#),
            r#"[1.50e0, "\u00e9x", true, null]"#
        );
        assert_eq!(round("[1.]"), "[1.]");
        assert_eq!(round("[-]"), "[-]");
        assert_eq!(round("{}"), "{}");
        let mut c = String::new();
        parse(br#"{"a" : 1, "b":[1, 2]}"#)
            .unwrap()
            .write_compact(&mut c);
        assert_eq!(c, r#"{"a":1,"b":[1,2]}"#);
    }

    #[test]
    fn error_positions_are_mariadbs() {
        for (text, want) in [
            (r#"{"a"1}"#, TextError::Syntax(4)),
            (r#"{"a" 1}"#, TextError::Syntax(5)),
            ("[1 2]", TextError::Syntax(4)),
            ("[1,,2]", TextError::Syntax(4)),
            ("[1,  ,2]", TextError::Syntax(6)),
            ("x", TextError::Syntax(1)),
            ("  x", TextError::Syntax(3)),
            ("[tru]", TextError::Syntax(4)),
            ("[truex]", TextError::Syntax(6)),
            ("\"ab", TextError::End),
            ("[1] x", TextError::Syntax(5)),
            (r#"{"a":01}"#, TextError::Syntax(7)),
            ("{1:2}", TextError::Syntax(2)),
            ("[1,]", TextError::Syntax(4)),
            ("[1", TextError::End),
        ] {
            assert_eq!(parse(text.as_bytes()), Err(want), "{text}");
        }
        let deep = "[".repeat(40);
        assert_eq!(parse(deep.as_bytes()), Err(TextError::Depth(33)));
    }

    #[test]
    fn select_lists_matches_in_document_order() {
        let doc = parse(br#"{"a":{"b":[10,20]},"c":{"b":2}}"#).unwrap();
        let p = |t: &str| parse_path(t.as_bytes()).unwrap();
        let got = |paths: &[Path]| {
            select(&doc, paths)
                .iter()
                .map(|j| j.text())
                .collect::<Vec<_>>()
                .join(" ")
        };
        assert_eq!(got(&[p("$.a.b[1]"), p("$.a.b[0]")]), "10 20");
        assert_eq!(got(&[p("$**.b")]), "[10, 20] 2");
        assert_eq!(got(&[p("$.a.b[last]")]), "20");
        assert_eq!(got(&[p("$.a.b[-2]")]), "10");
        assert_eq!(got(&[p("$.a.b[0 to 1]")]), "10 20");
        assert_eq!(got(&[p("$.*.b")]), "[10, 20] 2");
        assert_eq!(got(&[p("$[0].c")]), "{\"b\": 2}");
        let nested = parse(b"[1,[2,[3]]]").unwrap();
        let all: Vec<String> = select(&nested, &[p("$**[0]")])
            .iter()
            .map(|j| j.text())
            .collect();
        assert_eq!(all, ["1", "2", "3"]);
        assert_eq!(parse_path(b"a"), Err(PathError::Syntax(1)));
        assert_eq!(parse_path(b"$[0"), Err(PathError::End));
    }

    #[test]
    fn escapes_round_trip() {
        assert_eq!(quote("a\"b\\c\n\u{1}"), r#""a\"b\\c\n\u0001""#);
        assert_eq!(unescape(r#"a\tb\u00e9\ud83d\ude00\q"#), "a\tbé😀q");
    }

    #[test]
    fn contains_and_merge_patch_follow_the_rules() {
        let j = |t: &str| parse(t.as_bytes()).unwrap();
        assert!(contains(&j("[1,2,3]"), &j("2")));
        assert!(contains(&j(r#"{"a":1,"b":2}"#), &j(r#"{"a":1}"#)));
        assert!(contains(&j("[1,2]"), &j("1.0")));
        assert!(!contains(&j("[1,2]"), &j("[1,3]")));
        assert!(!contains(&j(r#"{"a":1}"#), &j("1")));
        assert!(contains(&j(r#"[{"a":1,"b":2}]"#), &j(r#"{"a":1}"#)));
        let m = merge_patch(j(r#"{"a":1,"b":2}"#), j(r#"{"b":null,"c":3}"#));
        assert_eq!(m.text(), r#"{"a": 1, "c": 3}"#);
        let m = merge_patch(j(r#"{"a":{"b":1}}"#), j(r#"{"a":{"c":2}}"#));
        assert_eq!(m.text(), r#"{"a": {"b": 1, "c": 2}}"#);
    }
}
