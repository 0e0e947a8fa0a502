//! The codebase's shape, checked on every test run (docs/ARCHITECTURE.md): no module of a
//! crate imports another in a circle, and no function in `crates/*/src` runs over 150 lines
//! unless a comment right above it says why (`// Long:` ...). Both read the sources as text:
//! `use crate::a::b` / `crate::a::b::item` paths outside comments and test modules name the
//! module they depend on; a function is its signature line to its closing brace at the same
//! indentation.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

const MAX_FN_LINES: usize = 150;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn crate_srcs() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = fs::read_dir(workspace().join("crates"))
        .expect("crates/")
        .map(|e| e.expect("crates/ entry").path().join("src"))
        .filter(|p| p.is_dir())
        .collect();
    out.sort();
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in fs::read_dir(dir).expect("source dir") {
        let p = e.expect("dir entry").path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The module path of a source file (`a/b.rs` and `a/b/mod.rs` are `a::b`; `lib.rs` is "").
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).expect("file under src");
    let mut parts: Vec<String> = rel
        .iter()
        .map(|c| c.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts.join("::")
}

/// The code of a file before its test module, without comment lines.
fn code(text: &str) -> String {
    let body = text.split("#[cfg(test)]").next().unwrap_or("");
    body.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The modules of `modules` that `code` names through `crate::` paths (the longest known
/// prefix of each path, brace groups expanded one level).
fn deps(code: &str, me: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
    let resolve = |path: &str| -> Option<String> {
        let parts: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
        (0..=parts.len())
            .rev()
            .map(|n| parts[..n].join("::"))
            .find(|m| modules.contains(m))
            .filter(|m| m != me)
    };
    let mut out = BTreeSet::new();
    for (i, _) in code.match_indices("crate::") {
        let rest = &code[i + "crate::".len()..];
        let path: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
            .collect();
        let path = path.trim_end_matches(':');
        if let Some(m) = resolve(path) {
            out.insert(m);
        }
        let after = &rest[path.len()..];
        let group = after
            .strip_prefix("::{")
            .or_else(|| after.strip_prefix('{').filter(|_| path.is_empty()));
        if let Some(group) = group {
            let inner = group.split('}').next().unwrap_or("");
            for item in inner.split(',') {
                let item = item.trim().split("::").next().unwrap_or("").trim();
                if !item.is_empty() && item != "self" {
                    if let Some(m) = resolve(&format!("{path}::{item}")) {
                        out.insert(m);
                    }
                }
            }
        }
    }
    out
}

/// The import circles (strongly connected components of more than one module).
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    // Two modules are in one circle when each reaches the other.
    let reach = |from: &str| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.to_string()];
        while let Some(m) = stack.pop() {
            for d in graph.get(&m).into_iter().flatten() {
                if seen.insert(d.clone()) {
                    stack.push(d.clone());
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<&String, BTreeSet<String>> =
        graph.keys().map(|m| (m, reach(m))).collect();
    let mut done = BTreeSet::new();
    let mut out = Vec::new();
    for m in graph.keys() {
        if done.contains(m) {
            continue;
        }
        let circle: Vec<String> = graph
            .keys()
            .filter(|o| *o == m || (reaches[m].contains(*o) && reaches[o].contains(m)))
            .cloned()
            .collect();
        if circle.len() > 1 {
            done.extend(circle.iter().cloned());
            out.push(circle);
        }
    }
    out
}

#[test]
fn no_crate_has_an_import_circle_between_its_modules() {
    let mut found = Vec::new();
    for src in crate_srcs() {
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        let modules: BTreeSet<String> = files.iter().map(|f| module_of(&src, f)).collect();
        let mut graph = BTreeMap::new();
        for f in &files {
            let me = module_of(&src, f);
            let text = fs::read_to_string(f).expect("read source");
            graph.insert(me.clone(), deps(&code(&text), &me, &modules));
        }
        assert!(graph.len() > 1 || files.len() <= 1, "{}", src.display());
        for c in circles(&graph) {
            found.push(format!("{}: {}", src.display(), c.join(" <-> ")));
        }
    }
    assert!(found.is_empty(), "import circles:\n{}", found.join("\n"));
}

#[test]
fn no_function_runs_over_150_lines_without_saying_why() {
    let mut long = Vec::new();
    for src in crate_srcs() {
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        for f in files {
            let text = fs::read_to_string(&f).expect("read source");
            let body = text.split("#[cfg(test)]").next().unwrap_or("");
            let lines: Vec<&str> = body.lines().collect();
            for (i, l) in lines.iter().enumerate() {
                let t = l.trim_start();
                let is_fn = [
                    "fn ",
                    "pub fn ",
                    "pub(crate) fn ",
                    "pub(super) fn ",
                    "const fn ",
                ]
                .iter()
                .any(|p| t.starts_with(p));
                if !is_fn || t.ends_with(';') {
                    continue;
                }
                let indent = l.len() - t.len();
                let close = " ".repeat(indent) + "}";
                let Some(end) = lines[i..].iter().position(|x| *x == close) else {
                    continue;
                };
                let reason = lines[i.saturating_sub(3)..i]
                    .iter()
                    .any(|x| x.trim_start().starts_with("// Long:"));
                if end + 1 > MAX_FN_LINES && !reason {
                    long.push(format!("{}:{} ({} lines)", f.display(), i + 1, end + 1));
                }
            }
        }
    }
    assert!(
        long.is_empty(),
        "functions over {MAX_FN_LINES} lines:\n{}",
        long.join("\n")
    );
}

#[test]
fn the_circle_check_sees_a_circle() {
    // The checks above would pass vacuously if the parsing found nothing: feed them a circle.
    let modules: BTreeSet<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
    let mut graph = BTreeMap::new();
    graph.insert("a".to_string(), deps("use crate::b::Thing;", "a", &modules));
    graph.insert(
        "b".to_string(),
        deps("use crate::{c, a::X};", "b", &modules),
    );
    graph.insert("c".to_string(), deps("", "c", &modules));
    assert_eq!(
        graph["b"],
        ["a", "c"].iter().map(|s| s.to_string()).collect()
    );
    assert_eq!(
        circles(&graph),
        vec![vec!["a".to_string(), "b".to_string()]]
    );
}
