//! The documentation: README.md, CONTRIBUTING.md and every page of `docs/`.
//!
//! - Every relative link resolves: the file or directory exists, and a
//!   `#fragment` names a heading of the page it points to (GitHub's slugs).
//! - Every fenced block whose info string holds the word `run` runs as
//!   written, with this build's `trainc` first on `PATH`, in a scratch
//!   directory that holds the repository's `examples/`, `overlays/` and
//!   `schemas/`:
//!   - `console run`: each `$ ` line is a command, the lines after it (up to
//!     the next `$ ` line) what it prints, stdout and stderr together; every
//!     command exits 0, or with `status=N` (`console run status=1`) N.
//!   - `sh run`: every line that is not a comment is a command that exits 0.
//! - README.md stays a page a newcomer reads in five minutes: at most 250
//!   lines, opening with its two commands.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{root, temp_dir};

/// The pages, relative to the repository.
fn pages() -> Vec<PathBuf> {
    let mut pages = vec![PathBuf::from("README.md"), PathBuf::from("CONTRIBUTING.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .expect("docs/ exists")
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .map(|path| path.strip_prefix(root()).unwrap().to_path_buf())
        .collect();
    docs.sort();
    assert!(docs.len() >= 8, "docs/ holds the pages: {docs:?}");
    pages.extend(docs);
    pages
}

/// A fenced block: its info string, its first line's number, its text.
struct Block {
    info: String,
    line: usize,
    text: String,
}

/// The page's text outside fenced blocks, and its fenced blocks.
fn split(text: &str) -> (Vec<(usize, &str)>, Vec<Block>) {
    let mut prose = Vec::new();
    let mut blocks = Vec::new();
    let mut open: Option<(String, String, usize)> = None;
    for (n, line) in text.lines().enumerate() {
        match &mut open {
            None if line.trim_start().starts_with("```") => {
                let info = line.trim_start().trim_start_matches('`').trim().to_string();
                open = Some((info, String::new(), n + 1));
            }
            None => prose.push((n + 1, line)),
            Some(_) if line.trim_start().starts_with("```") => {
                let (info, text, start) = open.take().unwrap();
                blocks.push(Block {
                    info,
                    line: start,
                    text,
                });
            }
            Some((_, text, _)) => {
                text.push_str(line);
                text.push('\n');
            }
        }
    }
    if let Some((_, _, start)) = open {
        panic!("the fenced block of line {start} is never closed");
    }
    (prose, blocks)
}

/// GitHub's anchor for a heading: lower case, punctuation but `-` and `_`
/// dropped, spaces as `-`.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

fn anchors(page: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(root().join(page)).unwrap();
    let (prose, _) = split(&text);
    prose
        .iter()
        .filter_map(|(_, line)| {
            let hashes = line.len() - line.trim_start_matches('#').len();
            (hashes > 0 && line[hashes..].starts_with(' ')).then(|| slug(&line[hashes..]))
        })
        .collect()
}

/// The targets of the inline links `[text](target)` of a line.
fn link_targets(line: &str) -> Vec<&str> {
    let mut targets = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let Some(end) = after.find(')') else { break };
        targets.push(&after[..end]);
        rest = &after[end..];
    }
    targets
}

#[test]
fn every_relative_link_resolves() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for page in pages() {
        let text = std::fs::read_to_string(root().join(&page)).unwrap();
        let (prose, _) = split(&text);
        for (n, line) in prose {
            for target in link_targets(line) {
                if target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                checked += 1;
                let (path, fragment) = target.split_once('#').unwrap_or((target, ""));
                let file = if path.is_empty() {
                    page.clone()
                } else {
                    page.parent().unwrap().join(path)
                };
                if !root().join(&file).exists() {
                    broken.push(format!("{}:{n}: `{target}`: no such file", page.display()));
                } else if !fragment.is_empty() && !anchors(&file).iter().any(|a| a == fragment) {
                    broken.push(format!(
                        "{}:{n}: `{target}`: no heading `#{fragment}` in {}",
                        page.display(),
                        file.display()
                    ));
                }
            }
        }
    }
    assert!(checked > 30, "only {checked} relative links found");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_readme_is_read_in_five_minutes() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(
        lines <= 250,
        "README.md has {lines} lines; keep it at most 250 and move the rest to docs/"
    );
    let (_, blocks) = split(&readme);
    let first = &blocks[0];
    assert!(
        first
            .text
            .starts_with("cargo run --release -- build examples/")
            && first.text.contains("&& cargo test"),
        "README.md opens with its two commands: {}",
        first.text
    );
}

/// A scratch directory with what the documented commands read.
fn scratch(name: &str) -> PathBuf {
    let dir = temp_dir(name);
    for entry in ["examples", "overlays", "schemas"] {
        std::os::unix::fs::symlink(root().join(entry), dir.join(entry)).unwrap();
    }
    dir
}

/// Runs `command` with bash in `dir`; its status and what it printed.
fn shell(dir: &Path, command: &str) -> (Option<i32>, String) {
    let trainc = Path::new(env!("CARGO_BIN_EXE_trainc"));
    let path = format!(
        "{}:{}",
        trainc.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let output = Command::new("bash")
        .arg("-c")
        .arg(format!("exec 2>&1\n{command}"))
        .current_dir(dir)
        .env("PATH", path)
        .env("NO_COLOR", "1")
        .env_remove("COLUMNS")
        .output()
        .expect("bash runs");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

/// The problems of one runnable block.
fn run_block(page: &Path, block: &Block, dir: &Path) -> Vec<String> {
    let words: Vec<&str> = block.info.split_whitespace().collect();
    let status = words
        .iter()
        .find_map(|w| w.strip_prefix("status="))
        .map_or(0, |s| s.parse().expect("status=N"));
    let at = format!("{}:{}", page.display(), block.line);
    let mut commands: Vec<(String, Option<String>)> = Vec::new();
    match words[0] {
        "console" => {
            for line in block.text.lines() {
                if let Some(command) = line.strip_prefix("$ ") {
                    commands.push((command.to_string(), Some(String::new())));
                } else if let Some((_, Some(expected))) = commands.last_mut() {
                    expected.push_str(line);
                    expected.push('\n');
                } else {
                    return vec![format!("{at}: output before any `$ ` command")];
                }
            }
        }
        "sh" => {
            for line in block.text.lines() {
                let line = line.trim();
                if !line.is_empty() && !line.starts_with('#') {
                    commands.push((line.to_string(), None));
                }
            }
        }
        other => {
            return vec![format!(
                "{at}: `{other} run`: only console and sh blocks run"
            )];
        }
    }
    let mut problems = Vec::new();
    for (command, expected) in commands {
        let (code, printed) = shell(dir, &command);
        if code != Some(status) {
            problems.push(format!(
                "{at}: `{command}` exited {code:?}, not {status}:\n{printed}"
            ));
        }
        if let Some(expected) = expected.filter(|e| !e.is_empty())
            && printed.trim_end() != expected.trim_end()
        {
            problems.push(format!(
                "{at}: `{command}` printed\n{printed}\nwhere the page shows\n{expected}"
            ));
        }
    }
    problems
}

#[test]
fn every_runnable_block_runs_as_written() {
    let mut ran = 0;
    let mut problems = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(root().join(&page)).unwrap();
        let (_, blocks) = split(&text);
        let runnable: Vec<&Block> = blocks
            .iter()
            .filter(|b| b.info.split_whitespace().skip(1).any(|w| w == "run"))
            .collect();
        if runnable.is_empty() {
            continue;
        }
        // One scratch directory a page: its blocks run in order, so a later
        // one may read what an earlier one wrote.
        let name = page.to_string_lossy().replace(['/', '.'], "-");
        let dir = scratch(&format!("docs-{name}"));
        for block in runnable {
            ran += 1;
            problems.extend(run_block(&page, block, &dir));
        }
    }
    assert!(ran >= 10, "only {ran} runnable blocks");
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

/// The spec reference's list of fields, made from the spec's JSON Schema
/// (`schemas/trainspec.schema.json`, itself made from the spec's types).
mod fields {
    use std::fmt::Write as _;

    use serde_json::Value;

    pub(super) const BEGIN: &str = "<!-- fields: made from schemas/trainspec.schema.json by tests/docs.rs; TRAINC_BLESS=1 cargo test docs rewrites it -->";
    pub(super) const END: &str = "<!-- fields: end -->";

    /// What a schema resolves to through `$ref`, and the definition's name.
    fn resolve<'a>(schema: &'a Value, defs: &'a Value) -> (&'a Value, Option<&'a str>) {
        match schema["$ref"].as_str() {
            Some(reference) => {
                let name = reference.rsplit('/').next().unwrap();
                (&defs[name], Some(name))
            }
            None => (schema, None),
        }
    }

    /// The kind of value a schema takes, in words.
    fn kind(schema: &Value, defs: &Value) -> String {
        let (schema, name) = resolve(schema, defs);
        match name {
            Some("Quantity") => return "quantity".into(),
            Some("Duration") => return "duration".into(),
            _ => {}
        }
        if let Some(value) = schema.get("const") {
            return format!("`{value}`");
        }
        if let Some(values) = schema["enum"].as_array() {
            return values
                .iter()
                .map(|v| format!("`{v}`"))
                .collect::<Vec<_>>()
                .join(" \\| ");
        }
        if let Some(branches) = schema["oneOf"].as_array().or(schema["anyOf"].as_array()) {
            let mut kinds: Vec<String> = Vec::new();
            for branch in branches {
                let k = kind(branch, defs);
                if !kinds.contains(&k) {
                    kinds.push(k);
                }
            }
            return kinds.join(" \\| ");
        }
        match schema["type"].as_str() {
            Some("array") => format!("list of {}", kind(&schema["items"], defs)),
            Some("object") if schema.get("properties").is_some() => "table".into(),
            Some("object") => match &schema["additionalProperties"] {
                Value::Object(_) => format!(
                    "table of names to {}",
                    kind(&schema["additionalProperties"], defs)
                ),
                _ => "table".into(),
            },
            Some(other) => other.into(),
            None => "any".into(),
        }
    }

    /// The object schemas a value may be, with the path segment they add.
    fn tables<'a>(schema: &'a Value, defs: &'a Value) -> Vec<(&'static str, &'a Value)> {
        let (schema, _) = resolve(schema, defs);
        let mut found = Vec::new();
        if schema.get("properties").is_some() {
            found.push(("", schema));
        }
        for branch in schema["oneOf"]
            .as_array()
            .or(schema["anyOf"].as_array())
            .into_iter()
            .flatten()
        {
            found.extend(tables(branch, defs));
        }
        if schema["type"] == "array" {
            found.extend(
                tables(&schema["items"], defs)
                    .into_iter()
                    .map(|(_, t)| ("[]", t)),
            );
        }
        if let Value::Object(_) = &schema["additionalProperties"] {
            found.extend(
                tables(&schema["additionalProperties"], defs)
                    .into_iter()
                    .map(|(_, t)| (".<name>", t)),
            );
        }
        found
    }

    fn one_line(text: &str) -> String {
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    fn walk(table: &Value, prefix: &str, defs: &Value, out: &mut String) {
        let required: Vec<&str> = table["required"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        for (key, schema) in table["properties"].as_object().unwrap() {
            let path = format!("{prefix}{key}");
            let (resolved, _) = resolve(schema, defs);
            let description = schema["description"]
                .as_str()
                .or(resolved["description"].as_str())
                .unwrap_or_default();
            let required = if required.contains(&key.as_str()) {
                ", required"
            } else {
                ""
            };
            let _ = writeln!(
                out,
                "- `{path}` ({}{required}): {}",
                kind(schema, defs),
                one_line(description)
            );
            for (segment, inner) in tables(schema, defs) {
                walk(inner, &format!("{path}{segment}."), defs, out);
            }
        }
    }

    /// The list, one line a field, in the schema's order.
    pub(super) fn list(schema: &Value) -> String {
        let mut out = String::new();
        walk(schema, "", &schema["$defs"], &mut out);
        out
    }
}

#[test]
fn the_spec_reference_lists_every_field_of_the_schema() {
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("schemas/trainspec.schema.json")).unwrap(),
    )
    .unwrap();
    let list = fields::list(&schema);
    let path = root().join("docs/spec.md");
    let page = std::fs::read_to_string(&path).unwrap();
    let (Some(begin), Some(end)) = (page.find(fields::BEGIN), page.find(fields::END)) else {
        panic!(
            "docs/spec.md has no field list between `{}` and `{}`",
            fields::BEGIN,
            fields::END
        );
    };
    let current = &page[begin + fields::BEGIN.len()..end];
    let wanted = format!("\n\n{list}\n");
    if crate::support::blessing() {
        let page = format!(
            "{}{wanted}{}",
            &page[..begin + fields::BEGIN.len()],
            &page[end..]
        );
        std::fs::write(&path, page).unwrap();
    } else {
        assert!(
            current == wanted,
            "docs/spec.md's field list differs from the schema's fields; run TRAINC_BLESS=1 cargo test docs and read the diff"
        );
    }
    assert!(list.lines().count() > 100, "{list}");
}
