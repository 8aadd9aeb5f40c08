//! Schema errors in trainc's words: the field, the value (shortened), what
//! the field takes, and never `jsonschema`'s own text, which quotes whole
//! values, prints regular expressions and speaks of `oneOf` branches.

use jsonschema::ValidationError;
use jsonschema::error::{TypeKind, ValidationErrorKind as Kind};
use serde_json::Value;

use super::Problem;

/// Characters of a value quoted in a message.
const QUOTED: usize = 60;
/// Allowed values listed before "and N more".
const LISTED: usize = 8;

/// One validation error as problems, in words a manifest's author acts on:
/// each unknown field at its own key, a missing one by name. `root` is the
/// document the error's schema location is in (`jsonschema` gives it with
/// every `$ref` resolved), for the fields an object does take.
pub(super) fn push_error(
    id: &str,
    prefix: &str,
    error: &ValidationError<'_>,
    root: &Value,
    problems: &mut Vec<Problem>,
) {
    let path = format!("{prefix}{}", error.instance_path());
    let instance = error.instance().as_ref();
    let message = match error.kind() {
        Kind::AdditionalProperties { .. } => {
            for (pointer, key, hint) in unknown_keys(prefix, error, root) {
                problems.push(Problem::schema(
                    id,
                    &pointer,
                    format!("unknown field `{}`{hint}", shortened(key)),
                ));
            }
            return;
        }
        Kind::OneOfNotValid { context } | Kind::AnyOf { context } => {
            // The branch written for this kind of value says what is wrong
            // (a quantity's text that is not a quantity); with none, say
            // which kinds of value the field takes.
            let fitting: Vec<&Vec<ValidationError<'static>>> = context
                .iter()
                .filter(|errors| !errors.iter().any(|e| is_type_error_at(e, error)))
                .collect();
            if let [errors] = fitting.as_slice() {
                for inner in *errors {
                    push_error(id, prefix, inner, root, problems);
                }
                return;
            }
            let mut types: Vec<String> = context
                .iter()
                .flatten()
                .filter_map(|e| match e.kind() {
                    Kind::Type { kind } => Some(type_names(kind)),
                    _ => None,
                })
                .flatten()
                .collect();
            types.dedup();
            if types.is_empty() {
                "matches none of the forms this field takes".to_owned()
            } else {
                format!("must be {}, found {}", or_list(&types), found(instance))
            }
        }
        kind => message(kind, instance),
    };
    problems.push(Problem::schema(id, &path, message));
}

/// The keys an `additionalProperties: false` error refuses (none for
/// another error): each with its pointer (after `prefix`) and, where a
/// field the object takes there is near it, ` (did you mean `that`?)`.
/// `root` is the document the error's schema location is in.
pub(super) fn unknown_keys<'e>(
    prefix: &str,
    error: &'e ValidationError<'_>,
    root: &Value,
) -> Vec<(String, &'e str, String)> {
    let Kind::AdditionalProperties { unexpected } = error.kind() else {
        return Vec::new();
    };
    let path = format!("{prefix}{}", error.instance_path());
    let known: Vec<&str> = (error.schema_path().as_str().rsplit_once('/'))
        .and_then(|(object, _)| root.pointer(object))
        .and_then(|object| object["properties"].as_object())
        .map(|properties| properties.keys().map(String::as_str).collect())
        .unwrap_or_default();
    unexpected
        .iter()
        .map(|key| {
            let pointer = format!("{path}/{}", crate::tree::pointer_segment(key));
            let hint = crate::diagnostic::suggest(key, known.iter().copied())
                .map_or_else(String::new, |near| format!(" (did you mean `{near}`?)"));
            (pointer, key.as_str(), hint)
        })
        .collect()
}

/// What a value breaks, for every kind of error that is about the value
/// alone.
fn message(kind: &Kind, instance: &Value) -> String {
    match kind {
        Kind::Required { property } => format!(
            "missing required field `{}`",
            property
                .as_str()
                .map_or_else(|| property.to_string(), shortened)
        ),
        // Worded from the kind alone: jsonschema's words quote the whole
        // value first, which for a long list costs its size in time.
        Kind::Type { kind } => format!(
            "must be {}, found {}",
            or_list(&type_names(kind)),
            found(instance)
        ),
        Kind::Enum { options } => {
            let options: Vec<String> = options
                .as_array()
                .into_iter()
                .flatten()
                .map(quoted)
                .collect();
            let shown = if options.len() > LISTED {
                format!(
                    "{}, and {} more",
                    options[..LISTED].join(", "),
                    options.len() - LISTED
                )
            } else {
                or_list(&options)
            };
            format!("must be {shown}, found {}", quoted(instance))
        }
        Kind::Constant { expected_value } => {
            format!(
                "must be {}, found {}",
                quoted(expected_value),
                quoted(instance)
            )
        }
        Kind::Pattern { pattern } => {
            format!("{} is not {}", quoted(instance), pattern_in_words(pattern))
        }
        Kind::Format { format } => format_in_words(format, instance),
        Kind::Minimum { limit } => format!("must be at least {limit}, found {}", quoted(instance)),
        Kind::Maximum { limit } => format!("must be at most {limit}, found {}", quoted(instance)),
        Kind::ExclusiveMinimum { limit } => {
            format!("must be more than {limit}, found {}", quoted(instance))
        }
        Kind::ExclusiveMaximum { limit } => {
            format!("must be less than {limit}, found {}", quoted(instance))
        }
        Kind::MinLength { limit } => {
            format!("must be at least {limit} character{} long", plural(*limit))
        }
        Kind::MaxLength { limit } => format!(
            "must be at most {limit} characters long, found {}",
            instance.as_str().map_or(0, |s| s.chars().count())
        ),
        Kind::MinItems { limit } => {
            format!("must hold at least {limit} item{}", plural(*limit))
        }
        Kind::MaxItems { limit } => format!(
            "must hold at most {limit} item{}, found {}",
            plural(*limit),
            instance.as_array().map_or(0, Vec::len)
        ),
        Kind::MinProperties { limit } => {
            format!(
                "must hold at least {limit} entr{}",
                if *limit == 1 { "y" } else { "ies" }
            )
        }
        Kind::MaxProperties { limit } => {
            format!(
                "must hold at most {limit} entr{}",
                if *limit == 1 { "y" } else { "ies" }
            )
        }
        Kind::UniqueItems => "must not hold the same item twice".to_owned(),
        Kind::FalseSchema => "is not allowed here".to_owned(),
        Kind::OneOfMultipleValid { .. } => {
            "matches more than one of the forms this field takes; write it as one".to_owned()
        }
        Kind::Not { .. } => "takes no value of this form".to_owned(),
        Kind::MultipleOf { multiple_of } => {
            format!(
                "must be a multiple of {multiple_of}, found {}",
                quoted(instance)
            )
        }
        _ => "is not valid for this field".to_owned(),
    }
}

/// Whether `inner`, an error of one branch, is that branch refusing the
/// value's kind (a number where the branch takes text) at the value itself.
fn is_type_error_at(inner: &ValidationError<'_>, outer: &ValidationError<'_>) -> bool {
    matches!(inner.kind(), Kind::Type { .. })
        && inner.instance_path().as_str() == outer.instance_path().as_str()
}

fn type_names(kind: &TypeKind) -> Vec<String> {
    let name = |t: &jsonschema::JsonType| match t.to_string().as_str() {
        "string" => "a string".to_owned(),
        "integer" => "an integer".to_owned(),
        "number" => "a number".to_owned(),
        "boolean" => "a boolean".to_owned(),
        "array" => "a list".to_owned(),
        "object" => "a mapping".to_owned(),
        "null" => "null".to_owned(),
        other => format!("`{other}`"),
    };
    let mut names: Vec<String> = match kind {
        TypeKind::Single(t) => vec![name(t)],
        TypeKind::Multiple(set) => set.iter().map(|t| name(&t)).collect(),
    };
    // `null` beside a type is how the schemas say "may be left out".
    if names.len() > 1 {
        names.retain(|n| n != "null");
    }
    names
}

fn found(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => format!("a boolean (`{b}`)"),
        Value::Number(n) => format!("a number (`{n}`)"),
        Value::String(_) => format!("a string ({})", quoted(value)),
        Value::Array(_) => "a list".to_owned(),
        Value::Object(_) => "a mapping".to_owned(),
    }
}

/// A value as a message quotes it: short, in backticks.
fn quoted(value: &Value) -> String {
    let text = match value {
        Value::String(s) => format!("\"{s}\""),
        Value::Array(_) => "a list".to_owned(),
        Value::Object(_) => "a mapping".to_owned(),
        other => other.to_string(),
    };
    if matches!(value, Value::Array(_) | Value::Object(_)) {
        return text;
    }
    format!("`{}`", shortened(&text))
}

/// A value's text as a message quotes it: escaped, at most [`QUOTED`]
/// characters and `…`.
fn shortened(text: &str) -> String {
    crate::diagnostic::quoted_value(text, QUOTED)
}

fn or_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// What the patterns of the embedded schemas ask for, in words. A pattern
/// not known here is not shown: a regular expression is not an answer.
fn pattern_in_words(pattern: &str) -> &'static str {
    match pattern {
        p if p.contains("[KMGTPE]i") => {
            "a quantity: a number with an optional suffix, such as `500m`, `2`, `1.5`, `8Gi` or `1e3`"
        }
        "^[-._a-zA-Z0-9]+$" => "a valid key: letters, digits, `-`, `_` and `.` only",
        "^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$" => {
            "a valid name: a letter first, then letters, digits, `_`, `,` and `:`, ending in a letter, digit or `_`"
        }
        p if p.contains("[-A-Za-z0-9_.]") => {
            "a qualified name: an optional DNS prefix and `/`, then letters, digits, `-`, `_` and `.`, starting and ending with a letter or digit"
        }
        _ => "in the form this field takes (`kubectl explain` describes it)",
    }
}

fn format_in_words(format: &str, value: &Value) -> String {
    match format {
        "byte" => format!(
            "{} is not base64: the API server decodes this field as base64 and rejects other text (a Secret takes plain text under `stringData`)",
            quoted(value)
        ),
        "date-time" => format!(
            "{} is not an RFC 3339 time such as `2024-01-02T15:04:05Z`",
            quoted(value)
        ),
        other => format!("{} is not a valid `{other}`", quoted(value)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_message_shows_a_regex_or_a_whole_value() {
        let long = Value::String("x".repeat(10_000));
        assert!(quoted(&long).chars().count() < QUOTED + 5);
        assert!(!pattern_in_words("^[a-z]+$").contains('^'));
    }
}
