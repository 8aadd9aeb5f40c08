//! Validation pass 1: the document against `schemas/trainspec.schema.json`.
//!
//! Every violation is reported, each at the span of the offending key or value
//! (found by following the error's instance path down the tree). jsonschema's
//! messages are rewritten into trainc's voice: the dotted field path, what was
//! expected, what was found, and a fix where one is known (the closest known
//! key for a typo, quoting for a number where a string is expected).
//! This pass checks shape only; value formats are the rules' business.

use std::sync::OnceLock;

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{JsonType, ValidationError, Validator};
use serde_json::Value as Json;

use super::{field_path, suggest};
use crate::diagnostic::{Diagnostic, codes};
use crate::source::Sources;
use crate::tree::{Node, pointer_segment};

fn schema() -> &'static Json {
    static SCHEMA: OnceLock<Json> = OnceLock::new();
    SCHEMA.get_or_init(crate::spec::json_schema)
}

fn validator() -> &'static Validator {
    static VALIDATOR: OnceLock<Validator> = OnceLock::new();
    VALIDATOR
        .get_or_init(|| jsonschema::draft202012::new(schema()).expect("the spec schema is valid"))
}

/// What the schema pass found.
pub struct Outcome {
    /// Every violation, as diagnostics.
    pub diagnostics: Vec<Diagnostic>,
    /// JSON pointers of the values at fault (unknown keys, wrong types), so
    /// the rules can run on the rest.
    pub invalid: Vec<String>,
}

/// All schema violations of `tree`.
pub fn check(tree: &Node, sources: &Sources) -> Outcome {
    let instance = tree.to_json();
    let mut out = Vec::new();
    let mut invalid = Vec::new();
    let context = Context { tree, sources };
    for error in validator().iter_errors(&instance) {
        context.report(&error, None, &mut out);
        match error.kind() {
            ValidationErrorKind::AdditionalProperties { unexpected } => {
                invalid.extend(
                    unexpected
                        .iter()
                        .map(|key| join_pointer(error.instance_path().as_str(), key)),
                );
            }
            ValidationErrorKind::Required { .. } => {}
            _ => invalid.push(error.instance_path().as_str().to_owned()),
        }
    }
    out.dedup();
    // Deepest first, so removing one value never shifts another's pointer.
    invalid.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    invalid.dedup();
    Outcome {
        diagnostics: out,
        invalid,
    }
}

struct Context<'a> {
    tree: &'a Node,
    sources: &'a Sources,
}

impl Context<'_> {
    /// `also` names what else an `anyOf` accepted, when we chose one branch to report.
    fn report(&self, error: &ValidationError<'_>, also: Option<&str>, out: &mut Vec<Diagnostic>) {
        let pointer = error.instance_path().as_str();
        let path = field_path(pointer);
        let tree = self.tree;
        let mut diagnostic = match error.kind() {
            ValidationErrorKind::AdditionalProperties { unexpected } => {
                for key in unexpected {
                    out.push(self.unknown_key(pointer, key));
                }
                return;
            }
            ValidationErrorKind::Required { property } => {
                let key = property.as_str().unwrap_or_default();
                let full = join_pointer(pointer, key);
                let what = schema_at(schema(), &full)
                    .and_then(|s| s.get("description"))
                    .and_then(Json::as_str)
                    .map(|d| format!(": {}", first_sentence(d)))
                    .unwrap_or_default();
                let (span, place) = if pointer.is_empty() {
                    (tree.span_at("").with_len_at_most(0), "the spec".to_owned())
                } else {
                    (tree.key_span_at(pointer), format!("`{path}`"))
                };
                Diagnostic::error(
                    codes::SCHEMA_MISSING_KEY,
                    span,
                    format!("{place} is missing the required key `{key}`"),
                )
                .with_help(format!("add `{key}`{what}"))
            }
            ValidationErrorKind::Type { kind } => {
                let expected = describe_types(kind);
                self.type_error(pointer, &expected, also)
            }
            ValidationErrorKind::Enum { options } => {
                let options: Vec<&str> = options
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Json::as_str)
                    .collect();
                let found = error
                    .instance()
                    .as_str()
                    .map_or_else(|| self.source_text(pointer), str::to_owned);
                let list = options
                    .iter()
                    .map(|o| format!("`{o}`"))
                    .collect::<Vec<_>>()
                    .join(", ");
                let mut d = Diagnostic::error(
                    codes::SCHEMA_ENUM,
                    tree.span_at(pointer),
                    format!("`{path}` must be one of {list}, found `{found}`"),
                );
                if let Some(best) = suggest(&found, options.iter().copied()) {
                    d = d.with_help(format!("did you mean `{best}`?"));
                } else if let Some(also) = also {
                    d = d.with_help(format!("`{path}` also accepts {also}"));
                }
                d
            }
            ValidationErrorKind::Minimum { limit } => {
                self.range(pointer, &format!("at least {limit}"))
            }
            ValidationErrorKind::Maximum { limit } => {
                self.range(pointer, &format!("at most {limit}"))
            }
            ValidationErrorKind::ExclusiveMinimum { limit } => {
                self.range(pointer, &format!("greater than {limit}"))
            }
            ValidationErrorKind::ExclusiveMaximum { limit } => {
                self.range(pointer, &format!("less than {limit}"))
            }
            ValidationErrorKind::AnyOf { context }
            | ValidationErrorKind::OneOfNotValid { context } => {
                self.any_of(pointer, context, out);
                return;
            }
            _ => Diagnostic::error(
                codes::SCHEMA_OTHER,
                tree.span_at(pointer),
                format!("`{path}` is invalid: {}", error.masked()),
            ),
        };
        if diagnostic.help.is_none()
            && let Some(also) = also
        {
            diagnostic = diagnostic.with_help(format!("`{path}` also accepts {also}"));
        }
        out.push(diagnostic);
    }

    /// An `anyOf` failed. If exactly the branches of the value's type failed
    /// deeper down, report that branch's errors; otherwise say what is accepted.
    fn any_of(
        &self,
        pointer: &str,
        branches: &[Vec<ValidationError<'static>>],
        out: &mut Vec<Diagnostic>,
    ) {
        let fits_type = |errors: &Vec<ValidationError<'static>>| {
            !errors.iter().any(|e| {
                e.instance_path().as_str() == pointer
                    && (matches!(e.kind(), ValidationErrorKind::Type { .. })
                        || matches!(e.kind(), ValidationErrorKind::AnyOf { context } if context.iter().all(|b| b.iter().any(|e| matches!(e.kind(), ValidationErrorKind::Type { .. })))))
            })
        };
        let describe = |errors: &Vec<ValidationError<'static>>| -> Option<String> {
            errors
                .iter()
                .filter(|e| e.instance_path().as_str() == pointer)
                .find_map(|e| describe_expectation(e))
        };
        let fitting: Vec<_> = branches.iter().filter(|b| fits_type(b)).collect();
        if let Some(best) = fitting.iter().min_by_key(|b| b.len()) {
            let others: Vec<String> = branches
                .iter()
                .filter(|b| !fits_type(b))
                .filter_map(describe)
                .collect();
            let also = (!others.is_empty()).then(|| others.join(" or "));
            for error in *best {
                self.report(error, also.as_deref(), out);
            }
            return;
        }
        let mut expected: Vec<String> = branches.iter().filter_map(describe).collect();
        expected.dedup();
        out.push(self.type_error(pointer, &expected.join(" or "), None));
    }

    fn type_error(&self, pointer: &str, expected: &str, also: Option<&str>) -> Diagnostic {
        let path = field_path(pointer);
        let found = self
            .tree
            .pointer(pointer)
            .map_or("nothing", |(node, _)| describe_node(node));
        let mut d = Diagnostic::error(
            codes::SCHEMA_TYPE,
            self.tree.span_at(pointer),
            format!("`{path}` must be {expected}, found {found}"),
        );
        let scalar = self.tree.pointer(pointer).is_some_and(|(node, _)| {
            matches!(
                node.value,
                crate::tree::Value::Integer(_)
                    | crate::tree::Value::Float(_)
                    | crate::tree::Value::Bool(_)
            )
        });
        if expected.contains("a string") && scalar {
            d = d.with_help(format!(
                "quote the value: `\"{}\"`",
                self.source_text(pointer)
            ));
        } else if let Some(also) = also {
            d = d.with_help(format!("`{path}` also accepts {also}"));
        }
        d
    }

    fn range(&self, pointer: &str, bound: &str) -> Diagnostic {
        let path = field_path(pointer);
        Diagnostic::error(
            codes::SCHEMA_RANGE,
            self.tree.span_at(pointer),
            format!(
                "`{path}` must be {bound}, found `{}`",
                self.source_text(pointer)
            ),
        )
    }

    fn unknown_key(&self, pointer: &str, key: &str) -> Diagnostic {
        let full = join_pointer(pointer, key);
        let place = if pointer.is_empty() {
            "the spec".to_owned()
        } else {
            format!("`{}`", field_path(pointer))
        };
        let known: Vec<&str> = schema_at(schema(), pointer)
            .and_then(|s| s.get("properties"))
            .and_then(Json::as_object)
            .map(|p| p.keys().map(String::as_str).collect())
            .unwrap_or_default();
        let d = Diagnostic::error(
            codes::SCHEMA_UNKNOWN_KEY,
            self.tree.key_span_at(&full),
            format!("unknown key `{key}` in {place}"),
        );
        if let Some(best) = suggest(key, known.iter().copied()) {
            return d
                .with_label(format!("did you mean `{best}`?"))
                .with_help(format!("rename `{key}` to `{best}`"));
        }
        // A field written one table too high, like `gpus` at the top level.
        for table in &known {
            let inner = join_pointer(pointer, table);
            let belongs = schema_at(schema(), &inner)
                .and_then(|s| s.get("properties"))
                .and_then(Json::as_object)
                .is_some_and(|p| p.contains_key(key));
            if belongs {
                return d.with_help(format!(
                    "`{key}` belongs in `{}`: move it there",
                    field_path(&inner)
                ));
            }
        }
        let list = known
            .iter()
            .map(|k| format!("`{k}`"))
            .collect::<Vec<_>>()
            .join(", ");
        d.with_help(format!("known keys here: {list}"))
    }

    /// What the user wrote at `pointer`, as written (without TOML/YAML quotes).
    fn source_text(&self, pointer: &str) -> String {
        let span = self.tree.span_at(pointer);
        let text = &self.sources.get(span.source).text;
        text.get(span.start..span.end)
            .unwrap_or("")
            .trim_matches(|c| c == '"' || c == '\'')
            .to_owned()
    }
}

trait SpanExt {
    fn with_len_at_most(self, len: usize) -> Self;
}

impl SpanExt for crate::source::Span {
    fn with_len_at_most(self, len: usize) -> Self {
        crate::source::Span::new(self.source, self.start, self.end.min(self.start + len))
    }
}

fn join_pointer(pointer: &str, key: &str) -> String {
    format!("{pointer}/{}", pointer_segment(key))
}

fn first_sentence(text: &str) -> &str {
    text.split(". ")
        .next()
        .unwrap_or(text)
        .trim_end_matches('.')
}

fn describe_expectation(error: &ValidationError<'_>) -> Option<String> {
    match error.kind() {
        ValidationErrorKind::Type { kind } => Some(describe_types(kind)),
        ValidationErrorKind::Enum { options } => {
            let list: Vec<String> = options
                .as_array()?
                .iter()
                .filter_map(Json::as_str)
                .map(|o| format!("`{o}`"))
                .collect();
            Some(format!("one of {}", list.join(", ")))
        }
        ValidationErrorKind::AnyOf { context } => {
            let parts: Vec<String> = context
                .iter()
                .filter_map(|b| b.iter().find_map(|e| describe_expectation(e)))
                .collect();
            Some(parts.join(" or "))
        }
        _ => None,
    }
}

fn describe_types(kind: &TypeKind) -> String {
    let one = |t: JsonType| match t {
        JsonType::Null => "null",
        JsonType::Boolean => "`true` or `false`",
        JsonType::Integer => "an integer",
        JsonType::Number => "a number",
        JsonType::String => "a string",
        JsonType::Array => "an array",
        JsonType::Object => "a table",
    };
    match kind {
        TypeKind::Single(t) => one(*t).to_owned(),
        TypeKind::Multiple(set) => set.iter().map(one).collect::<Vec<_>>().join(" or "),
    }
}

fn describe_node(node: &Node) -> &'static str {
    use crate::tree::Value;
    match node.value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Integer(_) => "an integer",
        Value::Float(_) => "a decimal number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Table(_) => "a table",
    }
}

/// The object schema that describes the value at `pointer`, following `$ref`,
/// `properties`, `additionalProperties`, `items` and object branches of `anyOf`.
fn schema_at<'a>(root: &'a Json, pointer: &str) -> Option<&'a Json> {
    let resolve = |mut node: &'a Json| -> Option<&'a Json> {
        for _ in 0..16 {
            if let Some(reference) = node.get("$ref").and_then(Json::as_str) {
                let name = reference.strip_prefix("#/$defs/")?;
                node = root.get("$defs")?.get(name)?;
            } else if let Some(branches) = node.get("anyOf").and_then(Json::as_array) {
                node = branches
                    .iter()
                    .find(|b| b.get("$ref").is_some() || b.get("properties").is_some())?;
            } else {
                return Some(node);
            }
        }
        None
    };
    let mut node = resolve(root)?;
    for segment in pointer.split('/').skip(1) {
        let segment = segment.replace("~1", "/").replace("~0", "~");
        let next = node
            .get("properties")
            .and_then(|p| p.get(&segment))
            .or_else(|| node.get("additionalProperties").filter(|a| a.is_object()))
            .or_else(|| node.get("items"))?;
        node = resolve(next)?;
    }
    Some(node)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_at_follows_refs_and_maps() {
        let root = schema();
        assert!(
            schema_at(root, "/volumes/data").unwrap()["properties"]
                .get("mountPath")
                .is_some()
        );
        assert!(
            schema_at(root, "/scheduling/tolerations/0").unwrap()["properties"]
                .get("effect")
                .is_some()
        );
        assert!(
            schema_at(root, "/env/X").unwrap()["properties"]
                .get("secret")
                .is_some()
        );
    }
}
