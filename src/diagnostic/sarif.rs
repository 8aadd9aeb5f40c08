//! `--format sarif`: one SARIF 2.1.0 log (OASIS, `sarif-schema-2.1.0.json`)
//! for GitHub code scanning and other SARIF viewers.
//!
//! One run, tool `trainc`; a rule per diagnostic code that occurs (its `id` is
//! the code); a result per diagnostic with its level, its message (and help),
//! the primary span as a region and each secondary label as a related
//! location. Columns count Unicode code points, as everywhere in trainc, and
//! the run says so (`columnKind`). Paths are written as relative URI
//! references, which GitHub resolves against the checkout; absolute paths
//! become `file://` URIs.

use std::fmt::Write as _;

use serde_json::{Value, json};

use super::{Diagnostic, Label, Severity};
use crate::source::Sources;

const SCHEMA: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

/// The log written a result at a time ([`Log::head`], then
/// [`Log::result`] for each diagnostic, then [`Log::tail`]): however many
/// results there are, what is held is one. The run's `results` come before
/// its `tool`, whose rules are those the results used, in the order first
/// used (JSON objects have no order; SARIF readers find `tool` anywhere).
#[derive(Debug, Default)]
pub struct Log {
    rules: Vec<&'static str>,
    results: usize,
}

/// Indentation of a result, and of the `tool`, in the log.
const RESULT_INDENT: usize = 8;
const TOOL_INDENT: usize = 6;

impl Log {
    /// The log up to its first result.
    pub fn head() -> String {
        format!(
            "{{\n  \"$schema\": \"{SCHEMA}\",\n  \"version\": \"2.1.0\",\n  \"runs\": [\n    {{\n      \"columnKind\": \"unicodeCodePoints\",\n      \"results\": ["
        )
    }

    /// The text of `d`'s result, with the comma before it.
    pub fn result(&mut self, d: &Diagnostic, sources: &Sources) -> String {
        let index = self
            .rules
            .iter()
            .position(|r| *r == d.code)
            .unwrap_or_else(|| {
                self.rules.push(d.code);
                self.rules.len() - 1
            });
        let separator = if self.results == 0 { "\n" } else { ",\n" };
        self.results += 1;
        format!(
            "{separator}{}",
            indented(&result(d, index, sources), RESULT_INDENT)
        )
    }

    /// The log after its last result.
    pub fn tail(&self) -> String {
        let rules: Vec<Value> = self.rules.iter().map(|code| rule(code)).collect();
        let tool = json!({
            "driver": {
                "name": "trainc",
                "semanticVersion": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }
        });
        let close = if self.results == 0 { "]" } else { "\n      ]" };
        format!(
            "{close},\n      \"tool\": {}\n    }}\n  ]\n}}\n",
            indented(&tool, TOOL_INDENT).trim_start()
        )
    }
}

/// `value` pretty-printed, every line indented by `by` spaces.
fn indented(value: &Value, by: usize) -> String {
    let text = serde_json::to_string_pretty(value).expect("JSON values serialise");
    let pad = " ".repeat(by);
    let mut out = String::with_capacity(text.len() + by * 8);
    for (i, line) in text.lines().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&pad);
        out.push_str(line);
    }
    out
}

/// A rule: the code is its id; its name is the code in words
/// (`NprocIdleGpus`); its descriptions say what it reports, its help how to
/// see the full diagnostic.
fn rule(code: &'static str) -> Value {
    let name: String = code
        .trim_start_matches("trainc::")
        .split(['_', ':'])
        .filter(|word| !word.is_empty())
        .map(|word| {
            let mut chars = word.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_ascii_uppercase().to_string() + chars.as_str()
            })
        })
        .collect();
    let what = super::codes::describe(code);
    json!({
        "id": code,
        "name": name,
        "shortDescription": { "text": what },
        "fullDescription": { "text": what },
        "help": {
            "text": format!(
                "{what} Each result's message says how to fix it; `trainc check FILE` shows it \
                 with the source lines."
            )
        },
    })
}

fn result(d: &Diagnostic, rule_index: usize, sources: &Sources) -> Value {
    let mut text = d.message.clone();
    if let Some(help) = &d.help {
        text.push_str("\nhelp: ");
        text.push_str(help);
    }
    let mut result = json!({
        "ruleId": d.code,
        "ruleIndex": rule_index,
        "level": match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        },
        "message": { "text": text },
        "locations": [location(&d.primary, sources)],
    });
    let related: Vec<Value> = d
        .secondary
        .iter()
        .enumerate()
        .map(|(i, label)| {
            let mut related = location(label, sources);
            related["id"] = json!(i);
            related
        })
        .collect();
    if !related.is_empty() {
        result["relatedLocations"] = Value::Array(related);
    }
    result
}

fn location(label: &Label, sources: &Sources) -> Value {
    let source = sources.get(label.span.source);
    let (start_line, start_column) = source.line_col(label.span.start);
    let (end_line, end_column) = source.line_col(label.span.end.max(label.span.start));
    let mut region = json!({
        "startLine": start_line,
        "startColumn": start_column,
        "endLine": end_line,
        "endColumn": end_column,
    });
    // An empty span (a missing key) marks a point: SARIF wants endColumn past startColumn.
    if (end_line, end_column) == (start_line, start_column) {
        region["endColumn"] = json!(start_column + 1);
    }
    let mut location = json!({
        "physicalLocation": {
            "artifactLocation": { "uri": uri(&source.name) },
            "region": region,
        }
    });
    if let Some(text) = &label.text {
        location["message"] = json!({ "text": text });
    }
    location
}

/// A file name as a URI reference: relative paths stay relative (with `/`),
/// absolute ones become `file://` URIs; everything outside RFC 3986's
/// unreserved characters and `/` is percent-encoded.
fn uri(name: &str) -> String {
    let path = name.replace('\\', "/");
    let path = path.strip_prefix("./").unwrap_or(&path);
    let mut out = String::with_capacity(path.len());
    if path.starts_with('/') {
        out.push_str("file://");
    }
    for byte in path.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(char::from(byte));
        } else {
            let _ = write!(out, "%{byte:02X}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::uri;

    #[test]
    fn file_names_become_uri_references() {
        assert_eq!(uri("specs/a.train.toml"), "specs/a.train.toml");
        assert_eq!(uri("./a b.toml"), "a%20b.toml");
        assert_eq!(uri("/abs/x#1.toml"), "file:///abs/x%231.toml");
        assert_eq!(uri("<stdin>"), "%3Cstdin%3E");
        assert_eq!(uri("ç.toml"), "%C3%A7.toml");
    }
}
