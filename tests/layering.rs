//! The library's shape, read from its source: which file imports which,
//! by the code's own `crate::`, `super::` and `self::` paths (comments and
//! unit tests left out), must have no circle, so each file can be read and
//! changed knowing only what lies below it. A module and its own parent or
//! child do not count as a circle: a `mod.rs` declares its children, and they
//! use what it defines (CONTRIBUTING.md, "Which module may import which").
//! And no source file outside its unit tests passes 600 lines.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::support::root;

/// Every source file under `src/` by its module path (`["import", "pod"]`),
/// with its text up to its unit tests and without comments. Files that are
/// unit tests themselves (`tests.rs`) are left out.
fn modules() -> BTreeMap<Vec<String>, String> {
    let src = root().join("src");
    let mut modules = BTreeMap::new();
    for file in files_under(&src)
        .into_iter()
        .filter(|f| f.extension().is_some_and(|e| e == "rs"))
    {
        let relative = file.strip_prefix(&src).unwrap().with_extension("");
        let mut path: Vec<String> = relative
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if path == ["main"] {
            continue; // the binary: a crate of its own, which imports `trainc::`
        }
        if matches!(path.last().map(String::as_str), Some("mod" | "lib")) {
            path.pop();
        }
        if path.last().is_some_and(|last| last == "tests") {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        modules.insert(path, code(&text));
    }
    modules
}

/// Every file under `dir`, at any depth.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(files_under(&path));
        } else {
            files.push(path);
        }
    }
    files
}

/// The text before its inline unit tests (`#[cfg(test)] mod tests {`),
/// with each line's `//` comment removed (a `//` inside a string is kept).
fn code(text: &str) -> String {
    let text = text
        .split("\n#[cfg(test)]\nmod tests {")
        .next()
        .unwrap_or_default();
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let mut in_string = false;
        let mut escaped = false;
        let mut end = line.len();
        for (i, c) in line.char_indices() {
            match c {
                _ if escaped => escaped = false,
                '\\' if in_string => escaped = true,
                '"' => in_string = !in_string,
                '/' if !in_string && line[i..].starts_with("//") => {
                    end = i;
                    break;
                }
                _ => {}
            }
        }
        out.push_str(&line[..end]);
        out.push('\n');
    }
    out
}

/// Every path the code names after `crate::`, `super::` or `self::`, made
/// absolute, with `{a, b::c}` groups expanded.
fn paths(module: &[String], text: &str) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let bytes = text.as_bytes();
    for keyword in ["crate::", "super::", "self::"] {
        let mut from = 0;
        while let Some(at) = text[from..].find(keyword) {
            let start = from + at;
            from = start + keyword.len();
            // A whole word: not the end of `my_crate::`.
            if start > 0 && (bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'_') {
                continue;
            }
            let mut base: Vec<String> = match keyword {
                "crate::" => Vec::new(),
                "self::" => module.to_vec(),
                _ => module[..module.len().saturating_sub(1)].to_vec(),
            };
            let mut rest = &text[from..];
            while let Some(more) = rest.strip_prefix("super::") {
                base.pop();
                rest = more;
            }
            expand(&base, rest, &mut found);
        }
    }
    found
}

/// The paths of `text` (what follows a `::`) under `base`: one path, or a
/// `{...}` group of them.
fn expand(base: &[String], text: &str, out: &mut Vec<Vec<String>>) {
    let mut path = base.to_vec();
    let mut rest = text;
    loop {
        let word: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if word.is_empty() {
            if let Some(group) = rest.strip_prefix('{') {
                for item in top_level_items(group) {
                    expand(&path, item.trim(), out);
                }
                return;
            }
            break;
        }
        rest = &rest[word.len()..];
        path.push(word);
        match rest.strip_prefix("::") {
            Some(more) => rest = more,
            None => break,
        }
    }
    out.push(path);
}

/// The comma-separated items of a `{...}` group, up to its closing brace.
fn top_level_items(group: &str) -> Vec<&str> {
    let mut items = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                items.push(&group[start..i]);
                return items;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&group[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items
}

/// Which file imports which: the module each path lands in (its longest
/// prefix that is a file), leaving out a module's own parents and children.
fn imports(
    modules: &BTreeMap<Vec<String>, String>,
) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let mut graph = BTreeMap::new();
    for (module, text) in modules {
        let mut targets = BTreeSet::new();
        for path in paths(module, text) {
            let Some(target) = (0..=path.len())
                .rev()
                .map(|n| path[..n].to_vec())
                .find(|prefix| modules.contains_key(prefix))
            else {
                continue;
            };
            let related = target.starts_with(module) || module.starts_with(&target);
            if !related {
                targets.insert(target);
            }
        }
        graph.insert(module.clone(), targets);
    }
    graph
}

/// The circles of `graph`: its strongly connected parts of more than one
/// module (Tarjan's algorithm, iterative).
fn circles(graph: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Vec<Vec<String>> {
    let names: Vec<&Vec<String>> = graph.keys().collect();
    let index_of: BTreeMap<&Vec<String>, usize> =
        names.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let edges: Vec<Vec<usize>> = names
        .iter()
        .map(|n| {
            graph[*n]
                .iter()
                .filter_map(|t| index_of.get(t).copied())
                .collect()
        })
        .collect();
    let n = names.len();
    let (mut index, mut low, mut on_stack) = (vec![usize::MAX; n], vec![0; n], vec![false; n]);
    let (mut stack, mut next, mut found) = (Vec::new(), 0, Vec::new());
    for root in 0..n {
        if index[root] != usize::MAX {
            continue;
        }
        let mut work = vec![(root, 0usize)];
        while let Some((v, edge)) = work.pop() {
            if edge == 0 {
                index[v] = next;
                low[v] = next;
                next += 1;
                stack.push(v);
                on_stack[v] = true;
            }
            if let Some(&w) = edges[v].get(edge) {
                work.push((v, edge + 1));
                if index[w] == usize::MAX {
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            if low[v] == index[v] {
                let mut part = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    part.push(names[w].join("/"));
                    if w == v {
                        break;
                    }
                }
                if part.len() > 1 {
                    part.sort();
                    found.push(part);
                }
            }
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[v]);
            }
        }
    }
    found
}

#[test]
fn no_source_file_imports_a_file_that_imports_it_back() {
    let modules = modules();
    assert!(modules.len() > 100, "{} source files", modules.len());
    let graph = imports(&modules);
    let edges: usize = graph.values().map(BTreeSet::len).sum();
    assert!(
        edges > 300,
        "only {edges} imports found: the reading is broken"
    );
    let found = circles(&graph);
    let described: Vec<String> = found
        .iter()
        .map(|part| {
            let inside: Vec<String> = part
                .iter()
                .map(|m| {
                    let key: Vec<String> = m.split('/').map(str::to_owned).collect();
                    let to: Vec<String> = graph[&key]
                        .iter()
                        .map(|t| t.join("/"))
                        .filter(|t| part.contains(t))
                        .collect();
                    format!("  {m} -> {}", to.join(", "))
                })
                .collect();
            inside.join("\n")
        })
        .collect();
    assert!(
        found.is_empty(),
        "files that import each other (move the shared piece down, or turn the import around):\n{}",
        described.join("\n\n")
    );
}

/// The reading finds what it must: a circle written into a copy of the
/// graph is reported, and a known import is seen.
#[test]
fn the_circle_check_sees_a_circle() {
    let modules = modules();
    let mut graph = imports(&modules);
    let key = |s: &str| s.split('/').map(str::to_owned).collect::<Vec<String>>();
    assert!(
        graph[&key("import/pod")].contains(&key("import/volumes")),
        "import/pod calls import/volumes: {:?}",
        graph[&key("import/pod")]
    );
    assert!(graph[&key("render/pod")].contains(&key("code")));
    graph
        .get_mut(&key("code"))
        .unwrap()
        .insert(key("render/pod"));
    let found = circles(&graph);
    assert!(
        found.iter().any(
            |part| part.contains(&"code".to_owned()) && part.contains(&"render/pod".to_owned())
        ),
        "{found:?}"
    );
}

#[test]
fn no_source_file_passes_600_lines_outside_its_unit_tests() {
    let mut long = Vec::new();
    for (module, text) in modules() {
        let lines = text.lines().count();
        if lines > 600 {
            long.push(format!("src/{}: {lines} lines", module.join("/")));
        }
    }
    assert!(
        long.is_empty(),
        "split these along a seam that has a name:\n{}",
        long.join("\n")
    );
}

/// The paths CONTRIBUTING.md's repository map names in its first column: a
/// full path, or a bare file name after one (`src/describe/mod.rs`,
/// `pods.rs`) in the same directory; a name ending in `/` is a directory.
fn mapped() -> (BTreeSet<String>, BTreeSet<String>) {
    let text = std::fs::read_to_string(root().join("CONTRIBUTING.md")).unwrap();
    let (mut files, mut dirs) = (BTreeSet::new(), BTreeSet::new());
    for line in text.lines().filter(|l| l.starts_with("| `")) {
        let cell = line.split('|').nth(1).unwrap_or_default();
        let mut dir = String::new();
        for name in cell.split('`').skip(1).step_by(2) {
            let full = if name.contains('/') {
                name.to_owned()
            } else {
                format!("{dir}{name}")
            };
            dir.clear();
            if let Some(slash) = full.rfind('/') {
                dir.push_str(&full[..=slash]);
            }
            if full.ends_with('/') {
                dirs.insert(full);
            } else {
                files.insert(full);
            }
        }
    }
    (files, dirs)
}

#[test]
fn the_repository_map_names_every_source_file_and_no_other() {
    let (files, dirs) = mapped();
    let sources: Vec<String> = files_under(&root().join("src"))
        .iter()
        .map(|path| path.strip_prefix(root()).unwrap().display().to_string())
        .collect();
    let unnamed: Vec<&String> = sources
        .iter()
        .filter(|s| !s.ends_with("/tests.rs"))
        .filter(|s| !files.contains(*s) && !dirs.iter().any(|d| s.starts_with(d.as_str())))
        .collect();
    let gone: Vec<&String> = files
        .iter()
        .chain(&dirs)
        .filter(|n| n.starts_with("src/") && !root().join(n).exists())
        .collect();
    assert!(
        unnamed.is_empty() && gone.is_empty(),
        "CONTRIBUTING.md's repository map: add a row for {unnamed:?}; remove or rename {gone:?}"
    );
    assert!(files.len() > 100, "{} files named", files.len());
}

/// The binary's modules: a crate of their own, which imports `trainc::`.
const BINARY: [&str; 2] = ["cli", "commands"];

/// Which library file imports which (the binary's modules left out).
fn library_imports() -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    imports(&modules())
        .into_iter()
        .filter(|(m, _)| m.first().is_none_or(|top| !BINARY.contains(&top.as_str())))
        .collect()
}

/// CONTRIBUTING.md's table of layers, lowest first: each row's modules (the
/// top-level modules of `src/`), by the row's index.
fn layers() -> BTreeMap<String, (usize, String)> {
    let text = std::fs::read_to_string(root().join("CONTRIBUTING.md")).unwrap();
    let section = text
        .split("\n## Which module may import which\n")
        .nth(1)
        .expect("CONTRIBUTING.md has a section \"Which module may import which\"");
    let section = section.split("\n## ").next().unwrap_or_default();
    let mut layers = BTreeMap::new();
    let rows = section
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| layer"));
    for (rank, row) in rows.enumerate() {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let (name, modules) = (cells[1], cells[2]);
        for module in modules.split('`').skip(1).step_by(2) {
            let earlier = layers.insert(module.to_owned(), (rank, name.to_owned()));
            assert!(earlier.is_none(), "`{module}` is in two layers");
        }
    }
    assert!(layers.len() > 20, "{} modules in the layers", layers.len());
    layers
}

/// The imports that go up: from a module to one of a higher layer, as
/// `from -> to` with the layers' names.
fn imports_up(
    graph: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
    layers: &BTreeMap<String, (usize, String)>,
) -> Vec<String> {
    let mut up = Vec::new();
    for (module, targets) in graph {
        let Some(top) = module.first() else { continue }; // lib.rs chains them all
        let (from, from_name) = &layers[top];
        for target in targets {
            let Some(to_top) = target.first() else {
                continue;
            };
            let (to, to_name) = &layers[to_top];
            if to > from {
                up.push(format!(
                    "src/{} ({from_name}) imports src/{} ({to_name})",
                    module.join("/"),
                    target.join("/")
                ));
            }
        }
    }
    up
}

#[test]
fn every_module_imports_only_its_own_layer_and_those_below() {
    let layers = layers();
    let modules = modules();
    let unplaced: BTreeSet<&String> = modules
        .keys()
        .filter_map(|m| m.first())
        .filter(|top| !layers.contains_key(*top) && !BINARY.contains(&top.as_str()))
        .collect();
    assert!(
        unplaced.is_empty(),
        "CONTRIBUTING.md's layers leave out {unplaced:?}: put each in the row of what it imports"
    );
    let gone: Vec<&String> = layers
        .keys()
        .filter(|m| !modules.contains_key(&vec![(*m).clone()]))
        .collect();
    assert!(
        gone.is_empty(),
        "CONTRIBUTING.md's layers name {gone:?}, which are no module"
    );
    let up = imports_up(&library_imports(), &layers);
    assert!(
        up.is_empty(),
        "imports that go up a layer (move the piece down to where both can import it):\n{}",
        up.join("\n")
    );
}

/// The layer check sees an import that goes up.
#[test]
fn the_layer_check_sees_an_import_up() {
    let layers = layers();
    let mut graph = library_imports();
    let key = |s: &str| s.split('/').map(str::to_owned).collect::<Vec<String>>();
    graph
        .get_mut(&key("validate/rules/env"))
        .unwrap()
        .insert(key("render/pod"));
    assert_eq!(
        imports_up(&graph, &layers),
        ["src/validate/rules/env (validate) imports src/render/pod (render)"]
    );
}
