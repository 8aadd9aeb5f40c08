//! An imported spec as text: TOML as people write specs (top-level fields,
//! then a `[section]` per table, small tables inline), bare YAML, or the KRM
//! `TrainSpec` for kustomize and kpt.

use std::fmt::Write as _;

use serde_json::{Map, Value as Json};

use crate::spec::Spec;

/// How `trainc import` writes a spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Toml,
    Yaml,
    Krm,
}

impl Format {
    pub fn extension(self) -> &'static str {
        match self {
            Format::Toml => "toml",
            Format::Yaml | Format::Krm => "yaml",
        }
    }
}

/// `spec` in `format`, after a comment saying where it came from.
pub fn write(spec: &Spec, format: Format, origin: &str) -> String {
    write_as(
        spec,
        format,
        &format!("Imported by `trainc import` from {origin}."),
    )
}

/// `spec` in `format`, after the comment `header`.
pub fn write_as(spec: &Spec, format: Format, header: &str) -> String {
    let value = serde_json::to_value(spec).expect("a spec always serialises");
    let mut out = format!("# {header}\n");
    match format {
        Format::Toml => {
            let _ = writeln!(
                out,
                "# Check it: trainc check FILE; build it: trainc build FILE\n"
            );
            out.push_str(&toml(&value));
        }
        Format::Yaml => {
            out.push('\n');
            out.push_str(&yaml(&value));
        }
        Format::Krm => {
            out.push('\n');
            let mut spec = value.as_object().cloned().unwrap_or_default();
            let mut metadata = Map::new();
            for key in ["name", "namespace"] {
                if let Some(v) = spec.remove(key) {
                    metadata.insert(key.to_owned(), v);
                }
            }
            let krm = serde_json::json!({
                "apiVersion": crate::parse::KRM_API_VERSION,
                "kind": crate::parse::KRM_KIND,
                "metadata": metadata,
                "spec": spec,
            });
            out.push_str(&yaml(&krm));
        }
    }
    out
}

fn yaml(value: &Json) -> String {
    serde_saphyr::to_string(value).expect("a JSON value always serialises to YAML")
}

/// Longest inline table or list kept on one line; longer ones get a section.
const INLINE_WIDTH: usize = 88;

/// A JSON object as TOML: scalars and small values first, then sections.
pub fn toml(value: &Json) -> String {
    let mut out = String::new();
    if let Json::Object(map) = value {
        table(&mut out, &[], map, false);
    }
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}

fn table(out: &mut String, path: &[String], map: &Map<String, Json>, array_item: bool) {
    let header = !path.is_empty();
    let mut nested = Vec::new();
    let mut lines = Vec::new();
    for (key, value) in map {
        match value {
            Json::Null => {}
            // Top-level tables are sections, as people write specs.
            Json::Object(inner) if (!header || !fits_inline(value)) && !inner.is_empty() => {
                nested.push((key, value));
            }
            Json::Array(items)
                if !fits_inline(value)
                    && !items.is_empty()
                    && items.iter().all(Json::is_object) =>
            {
                nested.push((key, value));
            }
            _ => lines.push(format!("{} = {}", bare_or_quoted(key), inline(value))),
        }
    }
    if header && (!lines.is_empty() || array_item || nested.is_empty()) {
        let name: Vec<String> = path.iter().map(|k| bare_or_quoted(k)).collect();
        let (open, close) = if array_item { ("[[", "]]") } else { ("[", "]") };
        let _ = writeln!(out, "{open}{}{close}", name.join("."));
    }
    for line in &lines {
        out.push_str(line);
        out.push('\n');
    }
    if !lines.is_empty() || (header && array_item) {
        out.push('\n');
    }
    for (key, value) in nested {
        let mut sub = path.to_vec();
        sub.push(key.clone());
        match value {
            Json::Object(inner) => table(out, &sub, inner, false),
            Json::Array(items) => {
                for item in items {
                    if let Json::Object(inner) = item {
                        table(out, &sub, inner, true);
                    }
                }
            }
            _ => {}
        }
    }
}

fn fits_inline(value: &Json) -> bool {
    let text = inline(value);
    text.len() <= INLINE_WIDTH && !text.contains('\n')
}

/// A value on one line: strings quoted, tables as `{ k = v }`.
fn inline(value: &Json) -> String {
    match value {
        Json::Null => "\"\"".to_owned(),
        Json::Bool(b) => b.to_string(),
        Json::Number(n) => n.to_string(),
        Json::String(s) => quoted(s),
        Json::Array(items) => {
            let items: Vec<String> = items.iter().map(inline).collect();
            format!("[{}]", items.join(", "))
        }
        Json::Object(map) => {
            if map.is_empty() {
                return "{}".to_owned();
            }
            let entries: Vec<String> = map
                .iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| format!("{} = {}", bare_or_quoted(k), inline(v)))
                .collect();
            format!("{{ {} }}", entries.join(", "))
        }
    }
}

fn bare_or_quoted(key: &str) -> String {
    let bare = !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if bare { key.to_owned() } else { quoted(key) }
}

/// A TOML basic string: JSON's escapes are TOML's, except that TOML has no
/// `\/` (serde_json never writes it) and wants `\u` for control characters,
/// which JSON writes the same way.
fn quoted(text: &str) -> String {
    Json::String(text.to_owned())
        .to_string()
        .replace('\u{7f}', "\\u007F")
}
