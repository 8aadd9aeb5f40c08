//! The KRM function protocol: a `ResourceList` in, exactly one `ResourceList`
//! out (kpt `fn eval --exec`, kustomize `config.kubernetes.io/function`).
//!
//! The TrainSpec comes from `functionConfig`. The output holds every input item
//! unchanged and in order, then the generated objects. Problems become
//! `results[]` entries (severity, message, the TrainSpec as `resourceRef`, the
//! `field` path and the `file` where known); any error means no objects are
//! added and the function fails. The input is never trusted: a malformed
//! ResourceList still gets a ResourceList back, with an error result.

use serde_json::{Value as Json, json};

use crate::diagnostic::{Diagnostic, Severity};
use crate::source::{self, Sources};
use crate::tree::Node;
use crate::validate::field_path;

pub const API_VERSIONS: [&str; 2] = ["config.kubernetes.io/v1", "config.kubernetes.io/v1beta1"];
pub const KIND: &str = "ResourceList";

/// A ResourceList may hold a whole package; far more than a spec.
pub const MAX_INPUT_BYTES: u64 = 64 * 1024 * 1024;
/// Items are arbitrary resources (CRDs nest deeply); the spec inside is still
/// held to the spec's own limit.
const MAX_ITEM_DEPTH: usize = 200;

/// What the function writes and how it ends.
pub struct Output {
    /// The ResourceList, as YAML: the only thing that goes to stdout.
    pub resource_list: String,
    /// Any error result: the exit status is 1.
    pub failed: bool,
    /// The same problems, for people (stderr), with their sources.
    pub diagnostics: Vec<Diagnostic>,
    pub sources: Sources,
}

/// Runs the function on the bytes of a ResourceList.
pub fn run(input: Vec<u8>) -> Output {
    let mut sources = Sources::new();
    let id =
        match source::add_bytes_limited(&mut sources, "<stdin>".to_owned(), input, MAX_INPUT_BYTES)
        {
            Ok(id) => id,
            Err(source::ReadError::Invalid(d)) => {
                return failure(sources, API_VERSIONS[0], vec![*d]);
            }
            Err(source::ReadError::Io { error, .. }) => {
                let message = format!("cannot read the ResourceList: {error}");
                return finish(
                    sources,
                    API_VERSIONS[0],
                    Vec::new(),
                    vec![json!({"severity": "error", "message": message})],
                    Vec::new(),
                );
            }
        };
    let root = match crate::parse::parse_yaml_document(id, &sources.get(id).text, MAX_ITEM_DEPTH) {
        Ok(root) => root,
        Err(diagnostics) => return failure(sources, API_VERSIONS[0], diagnostics),
    };
    let list = root.to_json();
    let api_version = list
        .get("apiVersion")
        .and_then(Json::as_str)
        .filter(|v| API_VERSIONS.contains(v))
        .unwrap_or(API_VERSIONS[0])
        .to_owned();
    if let Some(problem) = shape_problem(&list) {
        let result = json!({"severity": "error", "message": problem});
        return finish(
            sources,
            &api_version,
            items_of(&list),
            vec![result],
            Vec::new(),
        );
    }
    let items = items_of(&list);
    let Some(config) = root.get("functionConfig").map(|e| e.value.clone()) else {
        let message = "the ResourceList has no functionConfig; pass the TrainSpec as the function's config (kpt: --fn-config trainspec.yaml)";
        return finish(
            sources,
            &api_version,
            items,
            vec![json!({"severity": "error", "message": message})],
            Vec::new(),
        );
    };
    let context = Context::of(&config);
    let built = match crate::parse::spec_from_node(config.clone()) {
        Ok(spec) => crate::build_parsed(&mut sources, spec, &crate::Options::default()),
        Err(diagnostics) => crate::Built {
            objects: None,
            diagnostics,
        },
    };
    let results: Vec<Json> = built
        .diagnostics
        .iter()
        .map(|d| context.result(d, &config))
        .collect();
    let mut out_items = items;
    if let Some(objects) = built.objects {
        out_items.extend(objects.into_iter().map(|o| o.value));
    }
    finish(sources, &api_version, out_items, results, built.diagnostics)
}

/// What is wrong with the ResourceList itself, if anything.
fn shape_problem(list: &Json) -> Option<String> {
    let Some(object) = list.as_object() else {
        return Some("the input is not a ResourceList (not a mapping)".to_owned());
    };
    let api_version = object
        .get("apiVersion")
        .and_then(Json::as_str)
        .unwrap_or("");
    let kind = object.get("kind").and_then(Json::as_str).unwrap_or("");
    if kind != KIND || !API_VERSIONS.contains(&api_version) {
        return Some(format!(
            "the input is not a ResourceList: expected apiVersion {} and kind {KIND}, found `{api_version}` `{kind}`",
            API_VERSIONS.join(" or ")
        ));
    }
    match object.get("items") {
        None | Some(Json::Null) => None,
        Some(Json::Array(items)) => items
            .iter()
            .position(|item| !item.is_object())
            .map(|i| format!("items[{i}] is not a resource (not a mapping)")),
        Some(_) => Some("`items` of the ResourceList is not a list".to_owned()),
    }
}

fn items_of(list: &Json) -> Vec<Json> {
    list.get("items")
        .and_then(Json::as_array)
        .cloned()
        .unwrap_or_default()
}

/// Where the TrainSpec came from, for `resourceRef` and `file` of results.
struct Context {
    resource_ref: Option<Json>,
    file: Option<String>,
}

impl Context {
    fn of(config: &Node) -> Context {
        let json = config.to_json();
        let text = |pointer: &str| {
            json.pointer(pointer)
                .and_then(Json::as_str)
                .map(str::to_owned)
        };
        let resource_ref = match (text("/apiVersion"), text("/kind"), text("/metadata/name")) {
            (Some(api_version), Some(kind), Some(name)) => {
                let mut reference = json!({"apiVersion": api_version, "kind": kind, "name": name});
                if let Some(namespace) = text("/metadata/namespace") {
                    reference["namespace"] = json!(namespace);
                }
                Some(reference)
            }
            _ => None,
        };
        let annotation = |key: &str| {
            json.pointer(&format!("/metadata/annotations/{}", key.replace('/', "~1")))
                .and_then(Json::as_str)
                .map(str::to_owned)
        };
        let file = annotation("config.kubernetes.io/path")
            .or_else(|| annotation("internal.config.kubernetes.io/path"));
        Context { resource_ref, file }
    }

    fn result(&self, d: &Diagnostic, config: &Node) -> Json {
        let mut message = d.message.clone();
        if let Some(help) = &d.help {
            message = format!("{message} (help: {help})");
        }
        let severity = match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        let mut result =
            json!({"message": message, "severity": severity, "tags": {"code": d.code}});
        if let Some(reference) = &self.resource_ref {
            result["resourceRef"] = reference.clone();
        }
        if let Some(pointer) = config.pointer_of(d.primary.span).filter(|p| !p.is_empty()) {
            result["field"] = json!({"path": field_path(&pointer)});
        }
        if let Some(file) = &self.file {
            result["file"] = json!({"path": file});
        }
        result
    }
}

fn failure(sources: Sources, api_version: &str, diagnostics: Vec<Diagnostic>) -> Output {
    let results = diagnostics
        .iter()
        .map(|d| json!({"message": d.message, "severity": "error", "tags": {"code": d.code}}))
        .collect();
    finish(sources, api_version, Vec::new(), results, diagnostics)
}

fn finish(
    sources: Sources,
    api_version: &str,
    items: Vec<Json>,
    results: Vec<Json>,
    diagnostics: Vec<Diagnostic>,
) -> Output {
    let failed = results.iter().any(|r| r["severity"] == "error");
    let mut list = json!({"apiVersion": api_version, "kind": KIND});
    list["items"] = Json::Array(items);
    if !results.is_empty() {
        list["results"] = Json::Array(results);
    }
    let resource_list =
        serde_saphyr::to_string(&list).expect("a JSON value always serialises to YAML");
    Output {
        resource_list,
        failed,
        diagnostics,
        sources,
    }
}
