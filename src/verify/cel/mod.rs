//! A CRD's CEL rules (`x-kubernetes-validations`), evaluated as the API
//! server evaluates them when an object is created (k8s.io/apiextensions-
//! apiserver v0.36.3, `pkg/apiserver/schema/cel/validation.go`): each rule
//! with `self` bound to the value of the field its schema node describes,
//! typed by that schema, for every such value the object holds (every
//! item of a list, every value of a map) but null ones; within the
//! server's cost limits, one call's (`PerCallLimit`) and the object's
//! (`RuntimeCELCostBudget`); a failure worded as the server words it. A
//! rule that reads `oldSelf` compares an update with the object it
//! replaces: offline there is none, so it is left to the server, as the
//! server leaves it on a create.
//!
//! The language is trainc's own reading of cel-go v0.26.0, the version
//! Kubernetes 1.36 builds: [`syntax`] (with [`lexer`]) reads a rule,
//! [`eval`] runs it, [`functions`], [`strings`], [`lists`] and
//! [`library`] are its functions (CONTRIBUTING.md, "Dependencies", says
//! why it is not a crate's).

// reason: CEL converts between int, uint and double as the language
// defines, each conversion checked against its range where CEL checks it;
// sizes and indexes cross between usize and CEL's int.
#![allow(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss,
    clippy::cast_possible_wrap
)]

mod ast;
mod checker;
mod compile;
mod eval;
mod format;
mod functions;
mod lexer;
mod library;
mod lists;
mod macros;
mod net;
mod overloads;
mod quantity;
mod rule;
mod semver;
mod strings;
mod syntax;
mod time;
mod types;
mod url;
mod value;
mod values;

use std::sync::Arc;

use serde_json::Value as Json;

use super::Problem;
pub(crate) use rule::reads_old_self;
use rule::{Failure, Rule};
use values::{Step, each_value, typed};

/// Kubernetes' limits (k8s.io/apiserver v0.36.3 `pkg/apis/cel/config.go`):
/// the cost one evaluation may reach, and all of one object's.
pub(super) const PER_CALL_LIMIT: u64 = 1_000_000;
pub(super) const RUNTIME_BUDGET: i64 = 10_000_000;

/// A schema node with rules, and where its values are.
struct Site {
    path: Vec<Step>,
    /// The node that types its values, as a JSON pointer into the schema:
    /// its own, or for a rule within `allOf`, the node holding the `allOf`
    /// (`validation.go`, `AllOfValidators`).
    node: String,
    /// Whether the node is a resource's root (its `apiVersion`, `kind` and
    /// `metadata` readable).
    root: bool,
    rules: Vec<Rule>,
}

/// Every rule of a schema.
#[derive(Default)]
pub(crate) struct Rules {
    schema: Arc<Json>,
    sites: Vec<Site>,
}

/// A rule that is not checked, and why: at `pointer` in the schema.
pub(crate) struct Unusable {
    pub pointer: String,
    pub message: String,
    pub why: Why,
}

/// Why a rule is not checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Why {
    /// It reads `oldSelf`: it compares an update with the object it
    /// replaces, and offline there is none.
    Transition,
    /// The API server would reject the CRD for it.
    Invalid,
}

/// Schema nodes deeper than this (far deeper than any CRD's) are not read.
pub(super) const MAX_DEPTH: usize = 128;

impl Rules {
    /// The rules of `schema` (a structural schema's root, a resource's),
    /// and those it cannot check, each at its place in the schema.
    pub(crate) fn of(schema: &Json) -> (Rules, Vec<Unusable>) {
        Rules::of_node(schema, true)
    }

    /// The schema the rules type their values by: the one given, without
    /// its descriptions and rules (`values::lean`).
    pub(crate) fn lean_schema(&self) -> Arc<Json> {
        Arc::clone(&self.schema)
    }

    /// The rules of `schema`; `root` when it is a resource's root.
    fn of_node(schema: &Json, root: bool) -> (Rules, Vec<Unusable>) {
        let mut rules = Rules {
            schema: Arc::new(values::lean(schema)),
            sites: Vec::new(),
        };
        let mut unusable = Vec::new();
        let mut path = Vec::new();
        rules.walk(schema, &mut path, "", "", root, &mut unusable, 0);
        (rules, unusable)
    }

    #[allow(clippy::too_many_arguments)] // reason: one recursion's state, each part read at each node
    fn walk(
        &mut self,
        node: &Json,
        path: &mut Vec<Step>,
        pointer: &str,
        typing: &str,
        root: bool,
        unusable: &mut Vec<Unusable>,
        depth: usize,
    ) {
        if depth > MAX_DEPTH {
            return;
        }
        let written = &node["x-kubernetes-validations"];
        if !written.is_null() && !written.is_array() {
            unusable.push(Unusable {
                pointer: format!("{pointer}/x-kubernetes-validations"),
                message: "`x-kubernetes-validations` is not a list of rules: json: cannot unmarshal object into Go struct field JSONSchemaProps.x-kubernetes-validations of type v1.ValidationRules".to_owned(),
                why: Why::Invalid,
            });
        }
        let mut rules = Vec::new();
        let written = written.as_array().map_or(&[][..], Vec::as_slice);
        // The type `self` has (`SchemaDeclType`), named as the server
        // names it less its random suffix.
        let self_type = (!written.is_empty())
            .then(|| self.schema.pointer(typing))
            .flatten()
            .and_then(|node| types::of_schema(node, root, "selfType"));
        for (n, written) in written.iter().enumerate() {
            let at = format!("{pointer}/x-kubernetes-validations/{n}");
            match Rule::compile(written, self_type.as_ref()) {
                Ok(rule) => {
                    if rule.uses_old_self() {
                        unusable.push(Unusable {
                            pointer: at,
                            message: format!(
                                "the transition rule `{}` reads `oldSelf`",
                                rule.source()
                            ),
                            why: Why::Transition,
                        });
                    }
                    rules.push(rule);
                }
                Err((why, message)) => unusable.push(Unusable {
                    pointer: at,
                    message,
                    why,
                }),
            }
        }
        if !rules.is_empty() {
            self.sites.push(Site {
                path: path.clone(),
                node: typing.to_owned(),
                root,
                rules,
            });
        }
        if let Some(properties) = node["properties"].as_object() {
            for (key, child) in properties {
                path.push(Step::Key(key.clone()));
                let at = format!("{pointer}/properties/{}", crate::tree::pointer_segment(key));
                self.walk(child, path, &at, &at, false, unusable, depth + 1);
                path.pop();
            }
        }
        for (keyword, child) in [
            ("items", &node["items"]),
            ("additionalProperties", &node["additionalProperties"]),
        ] {
            if child.is_object() {
                path.push(Step::Each);
                let at = format!("{pointer}/{keyword}");
                self.walk(child, path, &at, &at, false, unusable, depth + 1);
                path.pop();
            }
        }
        for (n, child) in node["allOf"].as_array().into_iter().flatten().enumerate() {
            let at = format!("{pointer}/allOf/{n}");
            self.walk(child, path, &at, typing, root, unusable, depth + 1);
        }
    }

    /// Every rule's failure in `object` (whose `Kind/name` is `id`), as
    /// problems at the fields the rules are attached to.
    pub(crate) fn check(&self, id: &str, object: &Json, problems: &mut Vec<Problem>) {
        let (failures, _) = self.validate(object, None, RUNTIME_BUDGET);
        for failure in failures {
            problems.push(Problem::new(
                super::Contract::Rule,
                id,
                &failure.pointer,
                failure.words(),
            ));
        }
    }

    /// The failures of `object` (and of its change from `old`), within
    /// `budget`; and the cost spent.
    fn validate(&self, object: &Json, old: Option<&Json>, budget: i64) -> (Vec<Failure>, i64) {
        let mut failures = Vec::new();
        let mut remaining = budget;
        'sites: for site in &self.sites {
            let Some(schema) = self.schema.pointer(&site.node) else {
                continue;
            };
            let mut values = Vec::new();
            each_value(
                object,
                &site.path,
                &mut String::new(),
                &mut |pointer, value| {
                    values.push((pointer.to_owned(), value));
                },
            );
            for (pointer, value) in values {
                if value.is_null() {
                    continue;
                }
                // A null old value is none (`validateExpressions` guards
                // a nil inside an interface).
                let old_value = old
                    .and_then(|old| old.pointer(&pointer))
                    .filter(|v| !v.is_null());
                let this = typed(value, schema, site.root);
                let previous = old_value.map(|v| typed(v, schema, site.root));
                // The schema's type, which errors show; a compact schema
                // keeps none, and the value says it.
                let kind = schema["type"].as_str().unwrap_or(match value {
                    Json::Object(_) => "object",
                    Json::Array(_) => "array",
                    Json::String(_) => "string",
                    Json::Bool(_) => "boolean",
                    Json::Number(n) if n.is_f64() => "number",
                    _ => "integer",
                });
                let scalar = !matches!(kind, "object" | "array");
                let stop = rule::run_all(
                    &site.rules,
                    &rule::Bound {
                        pointer: &pointer,
                        value: scalar.then_some(value),
                        kind,
                        this: &this,
                        old: previous.as_ref(),
                    },
                    &mut remaining,
                    &mut failures,
                );
                if stop {
                    break 'sites;
                }
            }
        }
        (failures, budget.saturating_sub(remaining))
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod upstream;
