//! Validation pass 1: the document against `schemas/trainspec.schema.json`.
//!
//! Every violation is reported, each at the span of the offending key or value
//! (found by following the error's instance path down the tree). jsonschema's
//! messages are rewritten into trainc's voice: the dotted field path, what was
//! expected, what was found, and a fix where one is known (the closest known
//! key for a typo, quoting for a number where a string is expected).
//! This pass checks shape only; value formats are the rules' business.

use std::sync::OnceLock;

mod keys;
mod layout;
mod messages;

use keys::Table;
use messages::{
    ABBREVIATIONS, describe_branch, describe_node, describe_types, is_type_mismatch, value_options,
    with_description,
};

use jsonschema::error::ValidationErrorKind;
use jsonschema::{ValidationError, Validator};
use serde_json::Value as Json;

use crate::diagnostic::suggest;
use crate::diagnostic::{Diagnostic, codes};
use crate::schema_verdict::{self, Draft, SchemaJson, Verdict};
use crate::source::Sources;
use crate::spec::schema_lookup::{description, schema, schema_at};
use crate::tree::field_path;
use crate::tree::{Node, Value, pointer_segment};

fn validator() -> &'static Validator {
    static VALIDATOR: OnceLock<Validator> = OnceLock::new();
    schema_verdict::validator(&VALIDATOR, schema(), Draft::Draft2020)
}

fn overlay_schema() -> &'static Json {
    static OVERLAY: OnceLock<Json> = OnceLock::new();
    schema_verdict::embedded_json(&OVERLAY, crate::spec::OVERLAY_SCHEMA)
}

/// The spec's and the overlay's schemas without their descriptions
/// (`schemas/compact/`): all a valid spec is checked against.
fn quick_schema(overlay: bool) -> &'static SchemaJson<'static> {
    static SPEC: OnceLock<SchemaJson<'static>> = OnceLock::new();
    static OVERLAY: OnceLock<SchemaJson<'static>> = OnceLock::new();
    if overlay {
        schema_verdict::embedded(
            &OVERLAY,
            include_str!("../../../schemas/compact/overlay.schema.json"),
        )
    } else {
        schema_verdict::embedded(
            &SPEC,
            include_str!("../../../schemas/compact/trainspec.schema.json"),
        )
    }
}

fn overlay_validator() -> &'static Validator {
    static VALIDATOR: OnceLock<Validator> = OnceLock::new();
    schema_verdict::validator(&VALIDATOR, overlay_schema(), Draft::Draft2020)
}

/// An overlay on its own, against the overlay schema (the spec's with nothing
/// required, plus `unset`). A value holding a template (`{{ n }}`) is left
/// out: its type is known only once `[vars]` and `--set` fill it in.
pub(crate) fn check_overlay(tree: &Node, instance: &Json, sources: &Sources) -> Vec<Diagnostic> {
    if schema_verdict::verdict(quick_schema(true), instance, Draft::Draft2020) == Verdict::Valid {
        return Vec::new();
    }
    let root = overlay_schema();
    let mut diagnostics =
        check_against(tree, instance, sources, overlay_validator(), root).diagnostics;
    diagnostics.retain(|d| {
        let span = d.primary.span;
        !sources
            .get(span.source)
            .text
            .get(span.start..span.end)
            .is_some_and(|text| text.contains("{{"))
    });
    diagnostics
}

/// What the schema pass found.
pub(crate) struct Outcome {
    /// Every violation, as diagnostics.
    pub diagnostics: Vec<Diagnostic>,
    /// JSON pointers of the values at fault (unknown keys, wrong types), so
    /// the rules can run on the rest.
    pub invalid: Vec<String>,
    /// JSON pointers of the fields the user meant to write but the spec the
    /// rules read does not hold: a value of the wrong type, a required key,
    /// what a misspelt or misplaced key was most likely meant to be
    /// (`resource` → `/resources`, a top-level `gpus` → `/resources/gpus`).
    /// A rule that reads one of them reports nothing (see `super::knock_on`).
    pub meant: Vec<String>,
}

/// All schema violations of `tree`, whose JSON form is `instance`.
pub(crate) fn check(tree: &Node, instance: &Json, sources: &Sources) -> Outcome {
    let mut out = Vec::new();
    let mut invalid = Vec::new();
    let mut meant = Vec::new();
    super::whole_numbers::check(tree, sources, &mut out, &mut invalid);
    if schema_verdict::verdict(quick_schema(false), instance, Draft::Draft2020) != Verdict::Valid {
        let mut outcome = check_against(tree, instance, sources, validator(), schema());
        out.append(&mut outcome.diagnostics);
        invalid.append(&mut outcome.invalid);
        meant.append(&mut outcome.meant);
    }
    meant.extend(invalid.iter().cloned());
    out.dedup();
    // Deepest first, so removing one value never shifts another's pointer.
    invalid.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    invalid.dedup();
    Outcome {
        diagnostics: out,
        invalid,
        meant,
    }
}

/// Violations of `instance` against another schema (`root`, compiled as
/// `validator`), reported in the same voice and at the same spans: the
/// `[podTemplate]` fragment against Kubernetes' PodTemplateSpec.
pub(super) fn check_against(
    tree: &Node,
    instance: &Json,
    sources: &Sources,
    validator: &Validator,
    root: &Json,
) -> Outcome {
    let mut out = Vec::new();
    let mut invalid = Vec::new();
    let mut meant = Vec::new();
    let context = Context {
        tables: std::cell::RefCell::default(),
        tree,
        sources,
        root,
    };
    let errors: Vec<ValidationError<'_>> = validator.iter_errors(instance).collect();
    // One mistake, one error: `mount_path` is reported as a misspelling of
    // `mountPath`, not also as a missing `mountPath`.
    let misspelled: std::collections::HashSet<(String, String)> = errors
        .iter()
        .filter_map(|error| match error.kind() {
            ValidationErrorKind::AdditionalProperties { unexpected } => {
                let pointer = error.instance_path().as_str().to_owned();
                Some((pointer, unexpected.clone()))
            }
            _ => None,
        })
        .flat_map(|(pointer, unexpected)| {
            let known: Vec<String> = schema_at(root, &pointer)
                .and_then(|s| s.get("properties"))
                .and_then(Json::as_object)
                .map(|p| p.keys().cloned().collect())
                .unwrap_or_default();
            let context = &context;
            unexpected
                .into_iter()
                .take(MAX_UNKNOWN_KEYS)
                .flat_map(|key| {
                    // The nearest key, and the one the error's help names
                    // (`path` for `mountPath`).
                    let near = suggest(&key, known.iter().map(String::as_str)).map(str::to_owned);
                    let named = context
                        .unknown_key(&pointer, &key)
                        .1
                        .and_then(|m| m.strip_prefix(&format!("{pointer}/")).map(str::to_owned))
                        .filter(|m| !m.contains('/'));
                    near.into_iter().chain(named)
                })
                .map(|best| (pointer.clone(), best))
                .collect::<Vec<_>>()
        })
        .collect();
    for error in errors {
        if let ValidationErrorKind::Required { property } = error.kind()
            && misspelled.contains(&(
                error.instance_path().as_str().to_owned(),
                property.as_str().unwrap_or_default().to_owned(),
            ))
        {
            continue;
        }
        context.report(&error, &mut out, &mut meant);
        let pointer = error.instance_path().as_str();
        match error.kind() {
            ValidationErrorKind::AdditionalProperties { unexpected } => {
                invalid.extend(unexpected.iter().map(|key| join_pointer(pointer, key)));
            }
            ValidationErrorKind::Required { property } => {
                meant.push(join_pointer(pointer, property.as_str().unwrap_or_default()));
            }
            _ => invalid.push(pointer.to_owned()),
        }
    }
    meant.extend(invalid.iter().cloned());
    Outcome {
        diagnostics: out,
        invalid,
        meant,
    }
}

struct Context<'a> {
    tree: &'a Node,
    sources: &'a Sources,
    /// The schema the errors come from, for the keys a table may have.
    root: &'a Json,
    /// Per table with unknown keys, what the reports about them share:
    /// worked out once, so that thousands of unknown keys in one table take
    /// time in proportion to their number.
    tables: std::cell::RefCell<std::collections::HashMap<String, std::rc::Rc<Table>>>,
}

/// Unknown keys of one table reported one by one; past them, one
/// diagnostic counts the rest. A spec has a few dozen keys per table.
const MAX_UNKNOWN_KEYS: usize = 1000;

impl Context<'_> {
    fn report(
        &self,
        error: &ValidationError<'_>,
        out: &mut Vec<Diagnostic>,
        meant: &mut Vec<String>,
    ) {
        let pointer = error.instance_path().as_str();
        let path = field_path(pointer);
        let tree = self.tree;
        let diagnostic = match error.kind() {
            ValidationErrorKind::AdditionalProperties { unexpected } => {
                for key in unexpected.iter().take(MAX_UNKNOWN_KEYS) {
                    let (diagnostic, field) = self.unknown_key(pointer, key);
                    out.push(diagnostic);
                    meant.extend(field);
                }
                if let Some(next) = unexpected.get(MAX_UNKNOWN_KEYS) {
                    let more = unexpected.len() - MAX_UNKNOWN_KEYS;
                    let place = if pointer.is_empty() {
                        "the spec".to_owned()
                    } else {
                        format!("`{path}`")
                    };
                    out.push(
                        Diagnostic::error(
                            codes::SCHEMA_UNKNOWN_KEY,
                            self.tree.key_span_at(&join_pointer(pointer, next)),
                            format!("{more} more unknown keys in {place}, from here on"),
                        )
                        .with_help(
                            "no spec has this many keys; check that this file is a training spec",
                        ),
                    );
                }
                return;
            }
            ValidationErrorKind::Required { property } => {
                let key = property.as_str().unwrap_or_default();
                let what = description(&join_pointer(pointer, key))
                    .map(|d| format!(": {d}"))
                    .unwrap_or_default();
                let (span, place) = if pointer.is_empty() {
                    (self.start(), "the spec".to_owned())
                } else {
                    (tree.key_span_at(pointer), format!("`{path}`"))
                };
                // A spec without a name and without anything to run reads as an
                // overlay given where the spec goes.
                let partial = pointer.is_empty()
                    && key == "name"
                    && crate::spec::WHOLE_SPEC_KEYS
                        .iter()
                        .all(|k| tree.get(k).is_none());
                let overlay = if partial {
                    format!(
                        "; or, if this file is an overlay, check it with `trainc check --as-overlay {0}`, or over its spec with `trainc check SPEC -O {0}`",
                        self.sources.get(span.source).name
                    )
                } else {
                    String::new()
                };
                Diagnostic::error(
                    codes::SCHEMA_MISSING_KEY,
                    span,
                    format!("{place} is missing the required key `{key}`"),
                )
                .with_help(format!("add `{key}`{what}{overlay}"))
            }
            ValidationErrorKind::Type { kind } => self.type_error(pointer, &describe_types(kind)),
            ValidationErrorKind::Enum { .. } | ValidationErrorKind::Constant { .. } => self
                .enum_error(
                    pointer,
                    &value_options(std::slice::from_ref(error), pointer).unwrap_or_default(),
                    None,
                ),
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
                self.any_of(pointer, context, out, meant);
                return;
            }
            _ => Diagnostic::error(
                codes::SCHEMA_OTHER,
                tree.span_at(pointer),
                format!("`{path}` is invalid: {}", error.masked()),
            ),
        };
        out.push(diagnostic);
    }

    /// An `anyOf` failed. When the value's type fits exactly the branches that
    /// list allowed values (`"gpu"`, `"auto"`, ...), say which values; when it
    /// fits a branch that failed deeper down, report that branch; otherwise say
    /// which types are accepted.
    fn any_of(
        &self,
        pointer: &str,
        branches: &[Vec<ValidationError<'static>>],
        out: &mut Vec<Diagnostic>,
        meant: &mut Vec<String>,
    ) {
        let fits_type = |errors: &Vec<ValidationError<'static>>| {
            !errors.iter().any(|e| is_type_mismatch(e, pointer))
        };
        let fitting: Vec<&Vec<ValidationError<'static>>> =
            branches.iter().filter(|b| fits_type(b)).collect();
        if fitting.is_empty() {
            let mut expected: Vec<String> = branches
                .iter()
                .filter_map(|b| describe_branch(b, pointer))
                .collect();
            expected.dedup();
            out.push(self.type_error(pointer, &expected.join(" or ")));
            return;
        }
        let options: Option<Vec<String>> = fitting
            .iter()
            .map(|b| value_options(b, pointer))
            .collect::<Option<Vec<_>>>()
            .map(|v| v.concat());
        if let Some(options) = options {
            let others: Vec<String> = branches
                .iter()
                .filter(|b| !fits_type(b))
                .filter_map(|b| describe_branch(b, pointer))
                .collect();
            out.push(self.enum_error(
                pointer,
                &options,
                (!others.is_empty()).then(|| others.join(" or ")).as_deref(),
            ));
            return;
        }
        let best = fitting
            .iter()
            .min_by_key(|b| b.len())
            .expect("at least one fitting branch");
        for error in *best {
            self.report(error, out, meant);
        }
    }

    fn enum_error(
        &self,
        pointer: &str,
        options: &[String],
        other_types: Option<&str>,
    ) -> Diagnostic {
        let path = field_path(pointer);
        let found = self.source_text(pointer);
        let mut list = options
            .iter()
            .map(|o| format!("`{o}`"))
            .collect::<Vec<_>>()
            .join(", ");
        if let Some(other) = other_types {
            list = format!("{other} or one of {list}");
        } else {
            list = format!("one of {list}");
        }
        let d = Diagnostic::error(
            codes::SCHEMA_ENUM,
            self.tree.span_at(pointer),
            format!("`{path}` must be {list}, found `{found}`"),
        );
        let version = |v: &str| {
            let bare = v.strip_prefix('v').unwrap_or("");
            !bare.is_empty() && bare.split('.').all(|p| p.parse::<u32>().is_ok())
        };
        if version(&found) && options.iter().all(|o| version(o)) {
            // A release newer (or older) than those known: no typo of one.
            let parts = |v: &str| -> Vec<u32> {
                v[1..].split('.').filter_map(|p| p.parse().ok()).collect()
            };
            let newest = options
                .iter()
                .max_by_key(|o| parts(o))
                .map_or("", String::as_str);
            return d.with_help(format!(
                "this trainc knows no release `{found}`; for a newer one write `\"{newest}\"`, the newest it knows, and check the objects against the cluster's CRD with `trainc verify --crd`"
            ));
        }
        let abbreviated = ABBREVIATIONS
            .iter()
            .find(|(short, long)| {
                short.eq_ignore_ascii_case(&found) && options.iter().any(|o| o == long)
            })
            .map(|(_, long)| *long);
        match abbreviated.or_else(|| suggest(&found, options.iter().map(String::as_str))) {
            Some(best) => d.with_help(format!("did you mean `{best}`?")),
            None => with_description(d, pointer),
        }
    }

    fn type_error(&self, pointer: &str, expected: &str) -> Diagnostic {
        let path = field_path(pointer);
        let found = self
            .tree
            .pointer(pointer)
            .map_or("nothing", |(node, _)| describe_node(node));
        let d = Diagnostic::error(
            codes::SCHEMA_TYPE,
            self.tree.span_at(pointer),
            format!("`{path}` must be {expected}, found {found}"),
        );
        let scalar = self.tree.pointer(pointer).is_some_and(|(node, _)| {
            matches!(
                node.value,
                Value::Integer(_) | Value::Float(_) | Value::Bool(_)
            )
        });
        if let Some(help) = self
            .kubernetes_form(pointer, expected)
            .or_else(|| self.unindented(pointer))
            .or_else(|| self.dotted_key(pointer))
        {
            return d.with_help(help);
        }
        let takes_numbers = expected.contains("an integer") || expected.contains("a number");
        let string = self
            .tree
            .pointer(pointer)
            .and_then(|(node, _)| node.as_str());
        if expected.contains("a string") && scalar && !takes_numbers {
            d.with_help(format!(
                "quote the value: `\"{}\"`",
                self.source_text(pointer)
            ))
        } else if let (true, Some(number)) = (
            takes_numbers,
            string.filter(|t| t.trim().parse::<f64>().is_ok_and(f64::is_finite)),
        ) {
            d.with_help(format!("remove the quotes: `{}`", number.trim()))
        } else if let (true, Some(word)) = (expected.contains("`true` or `false`"), string) {
            // YAML 1.1 booleans, which trainc reads (as YAML 1.2 does) as text.
            let meant = match word.trim().to_ascii_lowercase().as_str() {
                "yes" | "y" | "on" | "true" => Some("true"),
                "no" | "n" | "off" | "false" => Some("false"),
                _ => None,
            };
            match meant {
                Some(meant) => d.with_help(format!(
                    "write `{meant}`: `{}` is text here, not a boolean",
                    word.trim()
                )),
                None => with_description(d, pointer),
            }
        } else if let (true, Some(text)) = (expected == "an array", string) {
            let items: Vec<String> = text.split_whitespace().map(|w| format!("{w:?}")).collect();
            d.with_help(format!(
                "write a list, one item per element: `[{}]`",
                items.join(", ")
            ))
        } else {
            with_description(d, pointer)
        }
    }

    fn range(&self, pointer: &str, bound: &str) -> Diagnostic {
        let path = field_path(pointer);
        let found = self.source_text(pointer);
        let d = Diagnostic::error(
            codes::SCHEMA_RANGE,
            self.tree.span_at(pointer),
            format!("`{path}` must be {bound}, found `{found}`"),
        );
        match description(pointer) {
            Some(_) => with_description(d, pointer),
            // An entry of a map (`resources.extended`): the count of one thing.
            None if found.trim() == "0" && bound == "at least 1" => d.with_help(format!(
                "0 asks for none: remove `{path}`, or give 1 or more"
            )),
            None => d.with_help(format!("give a value {bound}")),
        }
    }

    fn start(&self) -> crate::source::Span {
        let span = self.tree.span;
        crate::source::Span::new(span.source, span.start, span.start)
    }

    fn format(&self, span: crate::source::Span) -> crate::parse::Format {
        crate::parse::Format::detect(self.sources.get(span.source))
    }

    /// What the user wrote at `pointer`, as written (without TOML/YAML quotes).
    /// A rendered template is what it rendered to.
    fn source_text(&self, pointer: &str) -> String {
        super::written(self.tree, self.sources, pointer)
    }
}

pub(super) fn join_pointer(pointer: &str, key: &str) -> String {
    format!("{pointer}/{}", pointer_segment(key))
}
