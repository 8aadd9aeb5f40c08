//! Stage 4, validate: the composed tree against the JSON Schema, then the
//! semantic rules on the typed spec.
//!
//! Pass 1 ([`schema`]) checks shape: keys, types, enums, integer bounds. Only
//! when it finds no error is the tree deserialised into a [`Spec`] and pass 2
//! ([`rules`]) run: value formats, cross-field and target-specific rules, each
//! reported at the span the user wrote. Warnings never stop the pipeline.

use crate::diagnostic::{Diagnostic, codes};
use crate::source::Sources;
use crate::spec::Spec;
use crate::tree::Node;

pub mod rules;
pub mod schema;

/// The outcome of validation: the typed spec when there were no errors, and
/// every diagnostic (errors and warnings) found on the way.
#[derive(Debug)]
pub struct Validated {
    pub spec: Option<Spec>,
    pub diagnostics: Vec<Diagnostic>,
}

/// Runs both passes over one composed document.
pub fn validate(tree: &Node, sources: &Sources) -> Validated {
    let diagnostics = schema::check(tree, sources);
    if diagnostics.iter().any(Diagnostic::is_error) {
        return Validated { spec: None, diagnostics };
    }
    let spec = match serde_json::from_value::<Spec>(tree.to_json()) {
        Ok(spec) => spec,
        Err(error) => {
            // The schema is generated from the same types, so this means the two
            // disagree: report it rather than crash.
            let diagnostic = Diagnostic::error(codes::SCHEMA_OTHER, tree.span, format!("invalid spec: {error}"));
            return Validated { spec: None, diagnostics: vec![diagnostic] };
        }
    };
    let mut diagnostics = diagnostics;
    diagnostics.extend(rules::check(&spec, tree, sources));
    let spec = (!diagnostics.iter().any(Diagnostic::is_error)).then_some(spec);
    Validated { spec, diagnostics }
}

/// A JSON pointer as users write the field: `/scheduling/tolerations/0/key` →
/// `scheduling.tolerations[0].key`; keys that are not identifiers are quoted.
pub fn field_path(pointer: &str) -> String {
    let mut out = String::new();
    for segment in pointer.split('/').skip(1) {
        let segment = segment.replace("~1", "/").replace("~0", "~");
        if !segment.is_empty() && segment.bytes().all(|b| b.is_ascii_digit()) {
            out.push_str(&format!("[{segment}]"));
            continue;
        }
        if !out.is_empty() {
            out.push('.');
        }
        if !segment.is_empty() && segment.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
            out.push_str(&segment);
        } else {
            out.push_str(&format!("{segment:?}"));
        }
    }
    if out.is_empty() { "the spec".to_owned() } else { out }
}

/// The candidate closest to `word`, if one is close enough to be a likely typo:
/// same letters ignoring case, `_` and `-` (`n_proc_per_node` → `nProcPerNode`),
/// or a small edit distance.
pub fn suggest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let normal = |s: &str| s.chars().filter(|c| *c != '_' && *c != '-').flat_map(char::to_lowercase).collect::<String>();
    let word_normal = normal(word);
    let mut best: Option<(usize, &str)> = None;
    for candidate in candidates {
        if normal(candidate) == word_normal {
            return Some(candidate);
        }
        let distance = strsim::damerau_levenshtein(&word_normal, &normal(candidate));
        let allowed = (word_normal.chars().count().max(candidate.len()) / 3).clamp(1, 3);
        if distance <= allowed && best.is_none_or(|(d, _)| distance < d) {
            best = Some((distance, candidate));
        }
    }
    best.map(|(_, candidate)| candidate)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_paths_read_like_the_spec() {
        assert_eq!(field_path("/scheduling/tolerations/0/key"), "scheduling.tolerations[0].key");
        assert_eq!(field_path("/labels/app.kubernetes.io~1name"), "labels.\"app.kubernetes.io/name\"");
        assert_eq!(field_path(""), "the spec");
    }

    #[test]
    fn suggestions_catch_typos_and_case() {
        let keys = ["replicas", "resources", "nProcPerNode", "image"];
        assert_eq!(suggest("replica", keys), Some("replicas"));
        assert_eq!(suggest("n_proc_per_node", keys), Some("nProcPerNode"));
        assert_eq!(suggest("imgae", keys), Some("image"));
        assert_eq!(suggest("zzz", keys), None);
    }
}
