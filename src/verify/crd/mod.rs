//! `trainc verify --crd PATH`: CustomResourceDefinitions whose served
//! versions become kinds that are checked rather than counted: against
//! the version's structural schema made strict ([`structural`]), after
//! defaulting, and against its CEL rules ([`super::cel`]).

mod definition;
mod field;
mod listtype;
mod objectmeta;
mod openapi;
mod strfmt;
mod structural;
mod subresources;
#[cfg(test)]
mod upstream;

use std::collections::BTreeMap;

use serde_json::Value as Json;

use super::Problem;
use super::cel::{Rules, Unusable, Why};
use crate::diagnostic::{Diagnostic, codes};
use crate::source::{SourceId, Sources, Span};
use crate::tree::Node;
use subresources::Subresources;

/// Deep enough for any CRD: a schema nests two YAML levels for each of its
/// object's (`properties`, the field), and Trainer's runtimes hold a JobSet
/// that holds a pod template.
pub(super) const MAX_DEPTH: usize = 256;
/// More CRDs than any cluster defines.
const MAX_DOCUMENTS: usize = 10_000;

/// The kinds of the CRDs given, by `apiVersion` and `kind`.
#[derive(Default)]
pub struct Crds {
    kinds: Vec<CustomKind>,
    /// Where each (`apiVersion`, `kind`) was first defined.
    defined: BTreeMap<(String, String), Span>,
}

/// What a refused CRD schema's diagnostic says to do.
const SCHEMA_HELP: &str = "the API server rejects a CRD whose schema is not a structural OpenAPI schema (https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#specifying-a-structural-schema)";

/// One served version of one CRD.
struct CustomKind {
    api_version: String,
    kind: String,
    /// The version's `openAPIV3Schema`, as written but for descriptions
    /// and rules: defaults and nullability.
    written: std::sync::Arc<Json>,
    /// The schema the API server enforces, and its validator, compiled
    /// when an object of the kind is first checked: a stream of thousands
    /// of CRDs, most of whose kinds no object has, builds none.
    strict: Json,
    validator: std::sync::OnceLock<Result<jsonschema::Validator, String>>,
    rules: Rules,
    subresources: Subresources,
}

/// No CRDs: what every caller but `trainc verify --crd` checks with.
pub static NONE: Crds = Crds {
    kinds: Vec::new(),
    defined: BTreeMap::new(),
};

impl Crds {
    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty()
    }

    /// How many kinds (served versions) the CRDs define.
    pub fn len(&self) -> usize {
        self.kinds.len()
    }

    fn find(&self, api_version: &str, kind: &str) -> Option<&CustomKind> {
        self.kinds
            .iter()
            .find(|k| k.kind == kind && k.api_version == api_version)
    }

    /// The CRDs of `id` (a YAML stream; objects of other kinds are passed
    /// over) added; what is wrong with them, or cannot be checked.
    pub fn read(&mut self, sources: &Sources, id: SourceId) -> Vec<Diagnostic> {
        let text = &sources.get(id).text;
        let mut diagnostics = Vec::new();
        let mut found = 0;
        // Each document read, added and let go before the next is made: a
        // stream of 10,000 CRDs is never a tree of 10,000 documents. What a
        // file added is taken back if a document of it cannot be read.
        let (kinds, defined) = (self.kinds.len(), self.defined.clone());
        let read = crate::parse::each_yaml_document(
            id,
            text,
            MAX_DEPTH,
            MAX_DOCUMENTS,
            &mut |document, node| {
                let (objects, _) = crate::parse::stream_objects(std::slice::from_ref(&node));
                for object in objects {
                    let json = object.node.to_sent_json();
                    if json["kind"] != "CustomResourceDefinition" {
                        continue;
                    }
                    found += 1;
                    let at = |pointer: &str| span_of(object.node, pointer);
                    if json["apiVersion"] != "apiextensions.k8s.io/v1" {
                        diagnostics.push(
                            Diagnostic::error(
                                codes::VERIFY_CRD,
                                at("/apiVersion"),
                                format!(
                                    "document {document}: a `{}` CustomResourceDefinition: Kubernetes serves CRDs as `apiextensions.k8s.io/v1` only since 1.22",
                                    json["apiVersion"].as_str().unwrap_or("")
                                ),
                            )
                            .with_help("give the CRD as the cluster serves it: `kubectl get crd NAME -o yaml`"),
                        );
                        continue;
                    }
                    diagnostics.extend(self.add(&json, document, &at));
                }
            },
        );
        if let Err(problems) = read {
            self.kinds.truncate(kinds);
            self.defined = defined;
            return problems;
        }
        if found == 0 {
            diagnostics.push(
                Diagnostic::error(
                    codes::VERIFY_CRD,
                    Span::new(id, 0, 0),
                    format!(
                        "`{}` holds no CustomResourceDefinition",
                        sources.get(id).name
                    ),
                )
                .with_help("`--crd` takes files of CustomResourceDefinitions, e.g. `kubectl get crd NAME -o yaml`, or a directory of them"),
            );
        }
        diagnostics
    }

    /// What the API server refuses in `crd`, a CustomResourceDefinition
    /// given among the objects (document `document`, read from `node`) as
    /// `--crd` would read it: its schema's and its rules' errors, in the
    /// server's words at the server's fields.
    pub(in crate::verify) fn refusals(node: &Node, crd: &Json, document: usize) -> Vec<Diagnostic> {
        let at = |pointer: &str| span_of(node, pointer);
        let mut crds = Crds::default();
        let mut found = crds.add(crd, document, &at);
        found.retain(Diagnostic::is_error);
        found
    }

    /// The served versions of one CRD (document `document`) added.
    fn add(&mut self, crd: &Json, document: usize, at: &dyn Fn(&str) -> Span) -> Vec<Diagnostic> {
        let mut diagnostics = Vec::new();
        let name = crd["metadata"]["name"].as_str().unwrap_or("?");
        let group = crd["spec"]["group"].as_str().unwrap_or("");
        let Some(kind) = crd["spec"]["names"]["kind"]
            .as_str()
            .filter(|k| !k.is_empty())
        else {
            diagnostics.push(
                Diagnostic::error(
                    codes::VERIFY_CRD,
                    at("/spec/names"),
                    format!("document {document}: CustomResourceDefinition/{name} names no `spec.names.kind`"),
                )
                .with_help("the API server rejects a CRD without the kind it defines"),
            );
            return diagnostics;
        };
        let versions = crd["spec"]["versions"]
            .as_array()
            .map_or(&[][..], Vec::as_slice);
        let mut transitions: Vec<Span> = Vec::new();
        for (n, version) in versions.iter().enumerate() {
            if version["served"] != true {
                continue;
            }
            let version_name = version["name"].as_str().unwrap_or("");
            let api_version = format!("{group}/{version_name}");
            let pointer = format!("/spec/versions/{n}/schema/openAPIV3Schema");
            let Some(schema) = version
                .pointer("/schema/openAPIV3Schema")
                .filter(|s| s.is_object())
            else {
                let span = at(&format!("/spec/versions/{n}"));
                diagnostics.push(no_schema(span, document, name, version_name));
                continue;
            };
            let key = (api_version.clone(), kind.to_owned());
            if let Some(first) = self.defined.get(&key) {
                let span = at(&format!("/spec/versions/{n}"));
                diagnostics.push(again(span, *first, document, &api_version, kind));
                continue;
            }
            // What the server refuses in the schema itself; it then
            // compiles none of its rules (no CEL context).
            let broken = schema_refused(schema, &server_field(versions, n, ""), &|place, said| {
                Diagnostic::error(
                    codes::VERIFY_CRD,
                    at(&format!("{pointer}{place}")),
                    format!("document {document}, CustomResourceDefinition/{name}, {said}"),
                )
            });
            if !broken.is_empty() {
                diagnostics.extend(broken);
                continue;
            }
            let (rules, unusable) = Rules::of(schema);
            for rule in unusable {
                let span = at(&format!("{pointer}{}", rule.pointer));
                if rule.why == Why::Transition {
                    transitions.push(span);
                } else {
                    let field = server_field(versions, n, &rule.pointer);
                    let said =
                        format!("document {document}, CustomResourceDefinition/{name}, `{field}`");
                    diagnostics.push(refused(&rule, span, &said));
                }
            }
            // Descriptions and rules are most of a large schema; the
            // schema checks need neither (the rules keep the lean copy).
            let lean = rules.lean_schema();
            let strict = structural::strict(&lean);
            if let Err(error) = jsonschema::draft7::meta::validate(&strict) {
                // What the checks above do not word: a keyword's value
                // the server cannot decode.
                let place = error.instance_path().to_string();
                diagnostics.push(
                    Diagnostic::error(
                        codes::VERIFY_CRD,
                        at(&format!("{pointer}{place}")),
                        format!(
                            "document {document}, CustomResourceDefinition/{name}, `{}`: the schema of version `{version_name}` is not a schema: {error}",
                            server_field(versions, n, &place)
                        ),
                    )
                    .with_help(SCHEMA_HELP),
                );
                continue;
            }
            self.defined.insert(key, at(&format!("/spec/versions/{n}")));
            self.kinds.push(CustomKind {
                api_version,
                kind: kind.to_owned(),
                written: lean,
                strict,
                validator: std::sync::OnceLock::new(),
                rules,
                subresources: Subresources::of(version),
            });
        }
        diagnostics.extend(transition_note(&transitions, document, name));
        diagnostics
    }
}

/// A served version of CRD `name` without a schema.
fn no_schema(span: Span, document: usize, name: &str, version: &str) -> Diagnostic {
    Diagnostic::error(
        codes::VERIFY_CRD,
        span,
        format!("document {document}: CustomResourceDefinition/{name}: version `{version}` has no `schema.openAPIV3Schema`"),
    )
    .with_help("an `apiextensions.k8s.io/v1` CRD gives every version a structural schema")
}

/// A kind and version defined again (at `span`; `first` where first).
fn again(span: Span, first: Span, document: usize, api_version: &str, kind: &str) -> Diagnostic {
    Diagnostic::warning(
        codes::VERIFY_CRD,
        span,
        format!("document {document}: `{api_version}` `{kind}` is defined again; the first definition is used"),
    )
    .with_secondary(first, "first defined here")
    .with_help("give each CRD once to `--crd`")
}

/// One note for the transition rules of CRD `name` (at each of `rules`), at the first.
fn transition_note(rules: &[Span], document: usize, name: &str) -> Option<Diagnostic> {
    let &first = rules.first()?;
    let count = rules.len();
    let noun = if count == 1 { "rule" } else { "rules" };
    Some(
        Diagnostic::note(
            codes::VERIFY_CRD,
            first,
            format!("document {document}: CustomResourceDefinition/{name}: {count} transition {noun} (reading `oldSelf`) not checked"),
        )
        .with_help("a transition rule compares an update with the object it replaces; offline there is none, so only the API server can evaluate it"),
    )
}

/// Where `pointer` is in `node`: the key of a field that is there, else
/// the nearest place.
fn span_of(node: &Node, pointer: &str) -> Span {
    match node.pointer(pointer) {
        Some((_, Some(key))) => key,
        _ => node.span_at(pointer),
    }
}

/// Where the API server names a place (`pointer`) in the schema of
/// version `n`: below `spec.validation` when every version's schema is
/// the same (its internal version keeps one for all), else below the
/// version's own (`properties[spec].x-kubernetes-validations[0].rule`).
fn server_field(versions: &[Json], n: usize, pointer: &str) -> String {
    use std::fmt::Write as _;
    let shared = versions
        .iter()
        .all(|v| v["schema"] == versions[0]["schema"]);
    let mut out = if shared {
        "spec.validation.openAPIV3Schema".to_owned()
    } else {
        format!("spec.versions[{n}].schema.openAPIV3Schema")
    };
    let mut segments = pointer
        .split('/')
        .skip(1)
        .map(|s| s.replace("~1", "/").replace("~0", "~"));
    while let Some(segment) = segments.next() {
        let keyed = matches!(
            segment.as_str(),
            "properties"
                | "patternProperties"
                | "definitions"
                | "allOf"
                | "anyOf"
                | "oneOf"
                | "x-kubernetes-validations"
        );
        match keyed.then(|| segments.next()).flatten() {
            Some(key) => {
                let _ = write!(out, ".{segment}[{key}]");
            }
            None => {
                let _ = write!(out, ".{segment}");
            }
        }
    }
    out
}

/// What the API server refuses in a version's schema (named `prefix`),
/// each made a diagnostic by `error` from its place in the schema and
/// what it says.
fn schema_refused(
    schema: &Json,
    prefix: &str,
    error: &dyn Fn(&str, String) -> Diagnostic,
) -> Vec<Diagnostic> {
    definition::refusals(schema, prefix)
        .into_iter()
        .map(|(place, refused)| {
            let field = refused.field.as_deref().unwrap_or("");
            error(&place, format!("`{field}`: {}", refused.body())).with_help(SCHEMA_HELP)
        })
        .collect()
}

/// A rule of a CRD the API server refuses; `said` names the CRD and the
/// field as the server does.
fn refused(rule: &Unusable, span: Span, said: &str) -> Diagnostic {
    let help = if rule.why == Why::Cost {
        "the API server rejects a CRD whose rules it estimates to cost too much for the largest object the schema allows: bound the lists, maps and strings they read with maxItems, maxProperties and maxLength"
    } else {
        "the API server rejects a CRD whose rule it cannot compile"
    };
    Diagnostic::error(codes::VERIFY_CRD, span, format!("{said}: {}", rule.message)).with_help(help)
}

/// Whether `crds` define the kind of `value`; if so its problems are added,
/// in the API server's words: its unknown fields (strict field
/// validation), then on the object as the server creates it (defaults
/// applied, `status` dropped where a status subresource sets it) what the
/// custom resource strategy's `Validate` finds (apiextensions-apiserver
/// v0.36.3 `pkg/registry/customresource/strategy.go`): the schema's
/// errors, the scale subresource's, the embedded resources', the list
/// types', and the CEL rules' unless one of those errors is of a kind that
/// stops them (`hasBlockingErr`).
pub(super) fn check(crds: &Crds, id: &str, value: &Json, problems: &mut Vec<Problem>) -> bool {
    let api_version = value["apiVersion"].as_str().unwrap_or("");
    let kind = value["kind"].as_str().unwrap_or("");
    let Some(custom) = crds.find(api_version, kind) else {
        return false;
    };
    let mut defaulted = value.clone();
    structural::apply(&mut defaulted, &custom.written, 0);
    let validator = custom.validator.get_or_init(|| {
        jsonschema::options()
            .with_draft(jsonschema::Draft::Draft7)
            .should_validate_formats(false)
            .build(&custom.strict)
            .map_err(|e| e.to_string())
    });
    match validator {
        Ok(validator) => {
            for error in validator.iter_errors(&defaulted) {
                unknown_fields(id, &error, &custom.strict, problems);
            }
        }
        Err(error) => problems.push(Problem::schema(
            id,
            "",
            format!("the CRD's schema of `{api_version}` `{kind}` cannot be used: {error}"),
        )),
    }
    custom.subresources.prepare_for_create(&mut defaulted);
    let mut errors = openapi::validate(&custom.written, &defaulted);
    errors.extend(custom.subresources.validate(&defaulted));
    errors.extend(objectmeta::validate(&custom.written, &defaulted, false));
    errors.extend(listtype::validate(&custom.written, &defaulted, ""));
    let blocking = errors.iter().any(|e| {
        use field::ErrorType as T;
        matches!(
            e.kind,
            T::NotSupported | T::Required | T::TooLong | T::TooMany | T::TypeInvalid
        )
    });
    for error in &errors {
        let pointer = field::error_pointer(error, &defaulted);
        problems.push(Problem::schema(id, &pointer, error.body()));
    }
    if !blocking {
        custom.rules.check(id, &defaulted, problems);
    } else if custom.rules.declared() {
        // Said only where the server has rules to run (`NewValidator`).
        problems.push(Problem::new(
            super::Contract::Rule,
            id,
            "",
            "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation".to_owned(),
        ));
    }
    true
}

/// The fields the strict schema does not name, as the API server's strict
/// field validation refuses them (`unknown field "spec.colour"`), with
/// the name nearest to each among the fields the object takes there.
fn unknown_fields(
    id: &str,
    error: &jsonschema::ValidationError<'_>,
    strict: &Json,
    problems: &mut Vec<Problem>,
) {
    use jsonschema::error::ValidationErrorKind as Kind;
    match error.kind() {
        Kind::AdditionalProperties { .. } => {
            for (pointer, _, hint) in super::wording::unknown_keys("", error, strict) {
                let field = crate::tree::field_path(&pointer);
                problems.push(Problem::schema(
                    id,
                    &pointer,
                    format!(
                        "unknown field {}{hint}",
                        crate::verify::gofmt::go_quoted(&field)
                    ),
                ));
            }
        }
        Kind::AnyOf { context } | Kind::OneOfNotValid { context } => {
            for inner in context.iter().flatten() {
                unknown_fields(id, inner, strict, problems);
            }
        }
        _ => {}
    }
}

/// Each item of a map list or set of `schema` (the skeleton of an
/// operator's CRD: its rules, its lists' types and their keys' defaults)
/// that repeats an earlier item, as the list-type check finds it: the API
/// server refuses a custom resource with one (apiextensions-apiserver
/// v0.36.3 `pkg/apiserver/schema/listtype/validation.go`, called from the
/// custom resource strategy's `Validate`).
pub(in crate::verify) fn duplicates(
    id: &str,
    value: &Json,
    schema: &Json,
    problems: &mut Vec<Problem>,
) {
    for error in listtype::validate(schema, value, "") {
        let pointer = field::error_pointer(&error, value);
        problems.push(Problem::schema(id, &pointer, error.body()));
    }
}
