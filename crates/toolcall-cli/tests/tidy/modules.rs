//! The module graph of a crate: which module's code names which other module's items, read
//! from its `use` declarations and paths (`crate::…`, `super::…`, `self::…`), with re-exports
//! followed to where an item is defined. Tidy checks that the graph has no circle, so that each
//! module can be read knowing only the modules below it.
//!
//! It reads text, not types: a method call does not name its module, so the few methods that
//! stand for a dependency are listed (`.wire()` is the registry's lookup of a format's `Wire`).
//! Comments and a file's trailing `#[cfg(test)] mod tests` are left out.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Calls that depend on the module defining the method, which no path names.
const METHOD_EDGES: [(&str, &str); 1] = [(".wire()", "provider::registry")];

/// A crate's modules (`""` is the crate root; `provider::gemini` is `provider/gemini/mod.rs`
/// or `provider/gemini.rs`) and the modules each one's code names.
pub struct Graph {
    pub edges: BTreeMap<String, BTreeSet<String>>,
}

struct Module {
    code: String,
    /// Names this module re-exports (`pub use self::a::B;`), with the path they stand for.
    exports: BTreeMap<String, Vec<String>>,
}

impl Graph {
    /// Reads the crate whose `src/` is `src`.
    pub fn of(src: &Path) -> Graph {
        let mut modules = BTreeMap::new();
        read_dir(src, src, &mut modules);
        let names: BTreeSet<String> = modules.keys().cloned().collect();
        let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (name, module) in &modules {
            let out = edges.entry(name.clone()).or_default();
            for path in paths(&module.code, &children(&names, name)) {
                let Some(start) = start_of(name, &path) else {
                    continue;
                };
                let target = resolve(&modules, &names, start, &path[1..], 0);
                if target != *name {
                    if std::env::var("TIDY_EXPLAIN")
                        .is_ok_and(|e| e == format!("{name} -> {target}"))
                    {
                        eprintln!("{name} -> {target}: {}", path.join("::"));
                    }
                    out.insert(target);
                }
            }
            for (method, target) in METHOD_EDGES {
                if module.code.contains(method) && names.contains(target) && name != target {
                    out.insert(target.to_owned());
                }
            }
        }
        Graph { edges }
    }

    /// Every circle, as its modules (strongly connected components of more than one module).
    pub fn circles(&self) -> Vec<Vec<String>> {
        let nodes: Vec<&String> = self.edges.keys().collect();
        let index: BTreeMap<&String, usize> =
            nodes.iter().enumerate().map(|(i, n)| (*n, i)).collect();
        let adjacency: Vec<Vec<usize>> = nodes
            .iter()
            .map(|n| {
                self.edges[*n]
                    .iter()
                    .filter_map(|t| index.get(t).copied())
                    .collect()
            })
            .collect();
        let mut circles = Vec::new();
        for component in tarjan(&adjacency) {
            if component.len() > 1 {
                let mut names: Vec<String> = component.iter().map(|i| nodes[*i].clone()).collect();
                names.sort();
                circles.push(names);
            }
        }
        circles
    }

    /// The graph without the edges `from -> to` listed.
    pub fn without(mut self, allowed: &[(&str, &str)]) -> Graph {
        for (from, to) in allowed {
            if let Some(targets) = self.edges.get_mut(*from) {
                targets.remove(*to);
            }
        }
        self
    }

    /// The edges between the modules of `circle`, as `from -> to`.
    pub fn edges_within(&self, circle: &[String]) -> Vec<String> {
        let mut edges = Vec::new();
        for from in circle {
            for to in self.edges.get(from).into_iter().flatten() {
                if circle.contains(to) {
                    edges.push(format!("{from} -> {to}"));
                }
            }
        }
        edges
    }

    /// The graph without the edges from a module to its parents: a `lib.rs`, `main.rs` or
    /// `mod.rs` defining what its modules share, the usual shape of a small crate.
    pub fn without_parent_items(mut self) -> Graph {
        for (from, targets) in self.edges.iter_mut() {
            targets.retain(|to| !(to.is_empty() || from.starts_with(&format!("{to}::"))));
        }
        self
    }

    /// Whether the edge `from -> to` is there.
    pub fn has(&self, from: &str, to: &str) -> bool {
        self.edges.get(from).is_some_and(|t| t.contains(to))
    }
}

fn read_dir(src: &Path, dir: &Path, modules: &mut BTreeMap<String, Module>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            read_dir(src, &path, modules);
            continue;
        }
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let relative = path.strip_prefix(src).expect("under src");
        let mut parts: Vec<String> = relative
            .with_extension("")
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        if matches!(
            parts.last().map(String::as_str),
            Some("mod" | "lib" | "main")
        ) {
            parts.pop();
        }
        let text = std::fs::read_to_string(&path).expect("readable");
        let code = code_of(&text);
        let exports = exports_of(&code);
        modules.insert(parts.join("::"), Module { code, exports });
    }
}

/// The text without comments and without a trailing `#[cfg(test)] mod tests`.
fn code_of(text: &str) -> String {
    let mut code = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        if trimmed == "#[cfg(test)]"
            && lines.peek().is_some_and(|l| {
                l.trim_start().starts_with("mod ") || l.trim_start().starts_with("#[")
            })
        {
            break;
        }
        let line = match line.find("//") {
            // `//` inside a string (a URL, say) is rare in code that names modules.
            Some(at) if !line[..at].contains('"') => &line[..at],
            _ => line,
        };
        code.push_str(line);
        code.push('\n');
    }
    code
}

/// The `use` trees of `code` that are re-exports, by the name they export.
fn exports_of(code: &str) -> BTreeMap<String, Vec<String>> {
    let mut exports = BTreeMap::new();
    for (public, tree) in use_trees(code) {
        if public {
            for path in expand(&tree) {
                if let Some(last) = path.last() {
                    let (name, path) = match path.iter().position(|s| s == "as") {
                        Some(i) => (path[i + 1].clone(), path[..i].to_vec()),
                        None => (last.clone(), path.clone()),
                    };
                    exports.insert(name, path);
                }
            }
        }
    }
    exports
}

/// Every `use` declaration's tree, and whether it is a re-export (`pub…`).
fn use_trees(code: &str) -> Vec<(bool, String)> {
    let mut trees = Vec::new();
    let mut rest = code;
    while let Some(at) = find_word(rest, "use") {
        let before = rest[..at].trim_end();
        let public = before.ends_with("pub") || before.ends_with(')') && before.contains("pub(");
        let after = &rest[at + 3..];
        let Some(end) = after.find(';') else { break };
        trees.push((public, after[..end].trim().to_owned()));
        rest = &after[end..];
    }
    trees
}

/// The paths a `use` tree stands for (`a::{b, c::d}` is `a::b` and `a::c::d`).
fn expand(tree: &str) -> Vec<Vec<String>> {
    let tree: String = tree.split_whitespace().collect::<Vec<_>>().join(" ");
    let Some(open) = tree.find('{') else {
        let path: Vec<String> = tree
            .replace(" as ", "::as::")
            .split("::")
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
            .collect();
        return vec![path];
    };
    let close = tree.rfind('}').unwrap_or(tree.len());
    let prefix: Vec<String> = tree[..open]
        .split("::")
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .collect();
    let mut paths = Vec::new();
    let inner = &tree[open + 1..close];
    let mut depth = 0;
    let mut start = 0;
    let mut items = Vec::new();
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&inner[start..]);
    for item in items.into_iter().map(str::trim).filter(|i| !i.is_empty()) {
        for tail in expand(item) {
            let mut path = prefix.clone();
            if tail.first().is_some_and(|s| s == "self") {
                path.extend(tail.into_iter().skip(1));
            } else {
                path.extend(tail);
            }
            paths.push(path);
        }
    }
    paths
}

/// The names of `module`'s child modules.
fn children(names: &BTreeSet<String>, module: &str) -> Vec<String> {
    names
        .iter()
        .filter_map(|n| {
            let rest = if module.is_empty() {
                n.as_str()
            } else {
                n.strip_prefix(module)?.strip_prefix("::")?
            };
            (!rest.is_empty() && !rest.contains("::")).then(|| rest.to_owned())
        })
        .collect()
}

/// Every path in `code` that starts at a module (`crate`, `super`, `self`, or one of the
/// module's `children` named bare, as `mod.rs` names them), from `use` trees and from the code
/// itself, as its segments; a bare child path is given as `self::child::…`.
fn paths(code: &str, children: &[String]) -> Vec<Vec<String>> {
    let mut paths: Vec<Vec<String>> = use_trees(code)
        .into_iter()
        .flat_map(|(_, tree)| expand(&tree))
        .collect();
    let bytes = code.as_bytes();
    for start_word in ["crate::", "super::", "self::"] {
        let mut from = 0;
        while let Some(found) = code[from..].find(start_word) {
            let at = from + found;
            from = at + start_word.len();
            if at > 0
                && (bytes[at - 1].is_ascii_alphanumeric()
                    || bytes[at - 1] == b'_'
                    || bytes[at - 1] == b':')
            {
                continue;
            }
            let end = code[at..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
                .map_or(code.len(), |e| at + e);
            if code[end..].starts_with('{') {
                // A `use` tree's group, read whole by `use_trees`.
                continue;
            }
            if code[end..].starts_with('$') {
                // A path a macro completes (`super::$module::WIRE`): its module is the macro's.
                continue;
            }
            let path: Vec<String> = code[at..end]
                .split("::")
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect();
            paths.push(path);
        }
    }
    for child in children {
        let word = format!("{child}::");
        let mut from = 0;
        while let Some(found) = code[from..].find(&word) {
            let at = from + found;
            from = at + word.len();
            let joined = at > 0
                && (bytes[at - 1].is_ascii_alphanumeric()
                    || bytes[at - 1] == b'_'
                    || bytes[at - 1] == b':');
            if !joined {
                paths.push(vec!["self".to_owned(), child.clone()]);
            }
        }
    }
    paths
        .into_iter()
        .map(|p| match p.first() {
            Some(first) if children.contains(first) => {
                std::iter::once("self".to_owned()).chain(p).collect()
            }
            _ => p,
        })
        .filter(|p| {
            matches!(
                p.first().map(String::as_str),
                Some("crate" | "super" | "self")
            )
        })
        .collect()
}

/// The module a path starts from, seen from `module`.
fn start_of(module: &str, path: &[String]) -> Option<String> {
    let mut base: Vec<&str> = if module.is_empty() {
        Vec::new()
    } else {
        module.split("::").collect()
    };
    match path.first()?.as_str() {
        "crate" => Some(String::new()),
        "self" => Some(module.to_owned()),
        "super" => {
            for _ in path.iter().take_while(|s| *s == "super") {
                base.pop();
            }
            Some(base.join("::"))
        }
        _ => None,
    }
}

/// The module that defines what `rest` names from `start`: down through child modules, across
/// re-exports to their source.
fn resolve(
    modules: &BTreeMap<String, Module>,
    names: &BTreeSet<String>,
    start: String,
    rest: &[String],
    depth: usize,
) -> String {
    let mut current = start;
    let mut rest: Vec<String> = rest.iter().filter(|s| *s != "super").cloned().collect();
    // `super::super::x` was taken care of by `start_of`.
    while let Some(segment) = rest.first().cloned() {
        let child = if current.is_empty() {
            segment.clone()
        } else {
            format!("{current}::{segment}")
        };
        if names.contains(&child) {
            current = child;
            rest.remove(0);
            continue;
        }
        if depth < 8 {
            if let Some(export) = modules.get(&current).and_then(|m| m.exports.get(&segment)) {
                if let Some(from) = start_of(&current, export) {
                    let mut tail = export[1..].to_vec();
                    tail.extend(rest.into_iter().skip(1));
                    return resolve(modules, names, from, &tail, depth + 1);
                }
                // A re-export of a sibling or child named without `self::` (`pub use
                // stream::Framing;`).
                let mut tail = export.clone();
                tail.extend(rest.into_iter().skip(1));
                return resolve(modules, names, current, &tail, depth + 1);
            }
        }
        break;
    }
    current
}

fn find_word(text: &str, word: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(found) = text[from..].find(word) {
        let at = from + found;
        let before_ok =
            at == 0 || !(bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_');
        let after = at + word.len();
        let after_ok = after < bytes.len() && bytes[after] == b' ';
        if before_ok && after_ok {
            return Some(at);
        }
        from = after;
    }
    None
}

/// Tarjan's strongly connected components, iteratively (a deep module chain cannot overflow).
fn tarjan(adjacency: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let n = adjacency.len();
    let mut index = vec![usize::MAX; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut components = Vec::new();
    let mut next = 0;
    for root in 0..n {
        if index[root] != usize::MAX {
            continue;
        }
        let mut work = vec![(root, 0usize)];
        while let Some(&mut (v, ref mut child)) = work.last_mut() {
            if *child == 0 && index[v] == usize::MAX {
                index[v] = next;
                low[v] = next;
                next += 1;
                stack.push(v);
                on_stack[v] = true;
            }
            if let Some(&w) = adjacency[v].get(*child) {
                *child += 1;
                if index[w] == usize::MAX {
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                let mut component = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                components.push(component);
            }
        }
    }
    components
}
