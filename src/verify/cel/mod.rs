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
mod cost;
mod cost_calls;
mod eval;
mod format;
mod functions;
mod lexer;
mod library;
mod limits;
mod lists;
mod macros;
mod net;
mod overloads;
mod quantity;
mod ranges;
mod rule;
mod semver;
mod sizes;
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
pub(crate) use library::go_match;
use limits::{Cardinality, Total, children_cardinality, rule_costs};
pub(crate) use rule::reads_old_self;
use rule::{Failure, Rule};
use values::{Step, each_value, typed};

/// Whether `text` is a `format: duration` string as the API server's
/// schema validation reads one (kube-openapi's `strfmt`).
pub(crate) fn is_openapi_duration(text: &str) -> bool {
    time::Duration::parse_openapi(text).is_ok()
}

/// Whether Go's `url.ParseRequestURI` takes `text` (a `format: uri`).
pub(crate) fn is_request_uri(text: &str) -> bool {
    url::is_request_uri(text)
}

/// The errors of `text` in one of the API machinery's named formats
/// (`qualifiedName`, `labelValue`, `dns1123Label`, `dns1035Label` …), in
/// its words; none where it is valid.
pub(crate) fn named_format_errors(name: &str, text: &str) -> Vec<String> {
    format::validate(name, text)
}

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

/// Where the walk of a schema is.
struct At<'p> {
    pointer: &'p str,
    /// The node that types `self`.
    typing: &'p str,
    root: bool,
    cardinality: Cardinality,
    depth: usize,
}

/// Every rule of a schema.
#[derive(Default)]
pub(crate) struct Rules {
    schema: Arc<Json>,
    sites: Vec<Site>,
    /// Whether the schema holds any rule, checked or not
    /// (`hasXValidations`): the API server builds a CEL validator only
    /// then.
    declared: bool,
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
    /// The API server would reject the CRD for its estimated cost (held
    /// against the limits when a CRD is created, not when its rules are
    /// compiled to validate objects).
    Cost,
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

    /// Whether the schema holds any rule, checked or not: without one the
    /// API server runs no CEL validator, and says nothing of rules left
    /// unchecked (apiextensions-apiserver v0.36.3 `pkg/apiserver/schema/
    /// cel/validation.go` `NewValidator`).
    pub(crate) fn declared(&self) -> bool {
        self.declared
    }

    /// The rules of `schema`; `root` when it is a resource's root.
    fn of_node(schema: &Json, root: bool) -> (Rules, Vec<Unusable>) {
        let mut rules = Rules {
            schema: Arc::new(values::lean(schema)),
            sites: Vec::new(),
            declared: false,
        };
        let mut unusable = Vec::new();
        let mut path = Vec::new();
        let mut total = Total::default();
        let at = At {
            pointer: "",
            typing: "",
            root,
            cardinality: Cardinality::AtMost(1),
            depth: 0,
        };
        rules.walk(schema, &mut path, &at, &mut unusable, &mut total);
        total.refuse_past_limit(&mut unusable);
        (rules, unusable)
    }

    fn walk(
        &mut self,
        node: &Json,
        path: &mut Vec<Step>,
        at: &At<'_>,
        unusable: &mut Vec<Unusable>,
        total: &mut Total,
    ) {
        if at.depth > MAX_DEPTH {
            return;
        }
        let pointer = at.pointer;
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
        self.declared |= !written.is_empty();
        let schema = Arc::clone(&self.schema);
        let typing = schema.pointer(at.typing).filter(|_| !written.is_empty());
        // The type `self` has (`SchemaDeclType`), named as the server
        // names it less its random suffix; and its values' sizes.
        let self_type = typing.and_then(|node| types::of_schema(node, at.root, "selfType"));
        let sizes = sizes::Sizes::new(typing.unwrap_or(&Json::Null), at.root);
        for (n, written) in written.iter().enumerate() {
            // Made where a problem is reported: most rules have none.
            let here = || format!("{pointer}/x-kubernetes-validations/{n}");
            match Rule::compile(written, self_type.as_ref(), &sizes) {
                Ok(rule) => {
                    if rule.uses_old_self() {
                        unusable.push(Unusable {
                            pointer: here(),
                            message: format!(
                                "the transition rule `{}` reads `oldSelf`",
                                rule.source()
                            ),
                            why: Why::Transition,
                        });
                    }
                    rule_costs(&rule, &here, at.cardinality, &sizes, unusable, total);
                    rules.push(rule);
                }
                Err((why, field, message)) => unusable.push(Unusable {
                    pointer: format!("{}/{field}", here()),
                    message,
                    why,
                }),
            }
        }
        if !rules.is_empty() {
            self.sites.push(Site {
                path: path.clone(),
                node: at.typing.to_owned(),
                root: at.root,
                rules,
            });
        }
        let cardinality = children_cardinality(node, at.cardinality);
        // A child's values are typed by the structural schema's node, the
        // same node as this one's but within `allOf`; a child the
        // structural schema lacks has no rules run (`validator`).
        let mut children = Vec::new();
        for (key, child) in node["properties"].as_object().into_iter().flatten() {
            let segment = format!("/properties/{}", crate::tree::pointer_segment(key));
            children.push((Step::Key(key.clone()), segment, child));
        }
        for keyword in ["items", "additionalProperties"] {
            if node[keyword].is_object() {
                children.push((Step::Each, format!("/{keyword}"), &node[keyword]));
            }
        }
        for (step, segment, child) in children {
            let typing = format!("{}{segment}", at.typing);
            let Some(typed_by) = schema.pointer(&typing) else {
                continue;
            };
            let here = format!("{pointer}{segment}");
            let next = At {
                pointer: &here,
                typing: &typing,
                root: types::embedded(typed_by),
                cardinality,
                depth: at.depth + 1,
            };
            path.push(step);
            self.walk(child, path, &next, unusable, total);
            path.pop();
        }
        for (n, child) in node["allOf"].as_array().into_iter().flatten().enumerate() {
            let here = format!("{pointer}/allOf/{n}");
            let next = At {
                pointer: &here,
                cardinality: Cardinality::NotEstimated,
                depth: at.depth + 1,
                ..*at
            };
            self.walk(child, path, &next, unusable, total);
        }
    }

    /// Each rule's source, estimated cost and most runs per object, as
    /// the server records them when it compiles a schema's rules.
    #[cfg(test)]
    fn estimates(&self) -> Vec<(String, Option<u64>, u64)> {
        let mut out = Vec::new();
        for site in &self.sites {
            let node = self.schema.pointer(&site.node).unwrap_or(&Json::Null);
            let max_cardinality = sizes::Sizes::new(node, site.root).max_cardinality();
            for rule in &site.rules {
                out.push((rule.source().to_owned(), rule.max_cost, max_cardinality));
            }
        }
        out
    }

    /// Every rule's failure in `object` (whose `Kind/name` is `id`), as
    /// problems at the fields the rules are attached to.
    pub(crate) fn check(&self, id: &str, object: &Json, problems: &mut Vec<Problem>) {
        let (failures, _) = self.validate(object, None, RUNTIME_BUDGET, PER_CALL_LIMIT);
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
    /// `budget` and `per_call` a call; and the cost spent.
    fn validate(
        &self,
        object: &Json,
        old: Option<&Json>,
        budget: i64,
        per_call: u64,
    ) -> (Vec<Failure>, i64) {
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
                        per_call,
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
#[cfg(test)]
mod upstream_library;
