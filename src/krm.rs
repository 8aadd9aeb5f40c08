//! The KRM function protocol: a `ResourceList` in, exactly one `ResourceList`
//! out (kpt `fn eval --exec`, kustomize `config.kubernetes.io/function`).
//!
//! The TrainSpec comes from `functionConfig`. The output holds every input item
//! unchanged and in order, then the generated objects. Problems become
//! `results[]` entries (severity, message, the TrainSpec as `resourceRef`, the
//! `field` path and the `file` where known); any error means no objects are
//! added and the function fails. The input is never trusted: a malformed
//! ResourceList still gets a ResourceList back, with an error result.

use std::fmt::Write as _;

use serde_json::{Value as Json, json};

use crate::diagnostic::{Diagnostic, Severity, codes};
use crate::source::{self, Sources, Span};
use crate::tree::Node;
use crate::tree::field_path;
use crate::yaml::{Body, Raw};

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

/// Values (scalars, lists, mappings) a ResourceList may hold, aliases
/// expanded. A 64 MiB package of ordinary manifests holds 3 to 6 million;
/// at the limit trainc fn peaks at about 1.2 GB.
pub const MAX_VALUES: usize = 12_000_000;
/// Of those, values aliases may repeat: packages rarely use aliases, and a
/// bomb stops here at about 60 MB.
pub const MAX_ALIASED: usize = 500_000;
/// Bytes of text aliases may repeat: one long value repeated a few thousand
/// times is few values but gigabytes, on stdin and again on stdout.
pub const MAX_ALIASED_BYTES: usize = 4 * 1024 * 1024;

/// Runs the function on the bytes of a ResourceList.
pub fn run(input: Vec<u8>) -> Output {
    let (mut sources, id) = match read(input) {
        Ok(read) => read,
        Err(output) => return *output,
    };
    // The tree borrows the text while the build adds sources of its own.
    let text = sources.get(id).text.clone();
    let limits = crate::yaml::Limits {
        depth: MAX_ITEM_DEPTH,
        documents: 1,
        nodes: MAX_VALUES,
        object_nodes: crate::yaml::MAX_OBJECT_VALUES,
        aliased: MAX_ALIASED,
        aliased_bytes: MAX_ALIASED_BYTES,
    };
    let root = match crate::yaml::load(id, &text, limits) {
        Ok(mut documents) if !documents.is_empty() => documents.swap_remove(0),
        Ok(_) => {
            let d = Diagnostic::error(
                codes::PARSE_YAML,
                Span::new(id, 0, 0),
                "the input is empty: a KRM function reads a ResourceList on stdin",
            );
            return failure(sources, API_VERSIONS[0], &[], vec![d]);
        }
        Err(error) => {
            let d = crate::parse::yaml_load_error(id, &text, &error, MAX_ITEM_DEPTH);
            return failure(sources, API_VERSIONS[0], &[], vec![d]);
        }
    };
    let api_version = root
        .get("apiVersion")
        .and_then(Raw::scalar)
        .filter(|v| API_VERSIONS.contains(v))
        .unwrap_or(API_VERSIONS[0])
        .to_owned();
    let items: Vec<Item<'_>> = match root.get("items").map(|i| &i.body) {
        Some(Body::Seq(items)) => items.iter().map(Item::passed).collect(),
        _ => Vec::new(),
    };
    if let Some(problem) = shape_problem(&root) {
        let result = json!({"severity": "error", "message": problem});
        return finish(sources, &api_version, &items, vec![result], Vec::new());
    }
    let Some(config) = root.get("functionConfig") else {
        let message = "the ResourceList has no functionConfig; pass the TrainSpec as the function's config (kpt: --fn-config trainspec.yaml)";
        return finish(
            sources,
            &api_version,
            &items,
            vec![json!({"severity": "error", "message": message})],
            Vec::new(),
        );
    };
    let config = match crate::parse::yaml_to_node(config) {
        Ok(config) => config,
        Err(diagnostics) => return failure(sources, &api_version, &items, diagnostics),
    };
    let context = Context::of(&config);
    let mut built = match crate::parse::spec_from_node(config.clone()) {
        Ok(spec) => crate::build_parsed(&mut sources, spec, &crate::Options::default()),
        Err(diagnostics) => crate::Built {
            objects: None,
            diagnostics,
            trainjob: None,
        },
    };
    if let Some(warning) = context.applied_spec(&items, &config) {
        built.diagnostics.push(warning);
    }
    locate_by_field(
        &mut sources,
        &config,
        context.file.as_deref(),
        &mut built.diagnostics,
    );
    let results: Vec<Json> = built
        .diagnostics
        .iter()
        .map(|d| context.result(d, &config))
        .collect();
    let out_items = match (built.objects, &context.resource_ref) {
        (Some(objects), Some(generator)) => {
            let generated = objects.into_iter().map(|o| o.value).collect();
            regenerate(items, generated, generator, context.file.as_deref())
        }
        // Any error: the package stays as it came in.
        _ => items,
    };
    finish(
        sources,
        &api_version,
        &out_items,
        results,
        built.diagnostics,
    )
}

/// The input as a source, or the ResourceList that says why it is not one.
fn read(input: Vec<u8>) -> Result<(Sources, source::SourceId), Box<Output>> {
    let mut sources = Sources::new();
    match source::add_bytes_limited(&mut sources, "<stdin>".to_owned(), input, MAX_INPUT_BYTES) {
        Ok(id) => Ok((sources, id)),
        Err(source::ReadError::Invalid(unusable)) => Err(Box::new(failure(
            sources,
            API_VERSIONS[0],
            &[],
            vec![unusable.into()],
        ))),
        Err(source::ReadError::Io { error, .. }) => {
            let message = format!(
                "cannot read the ResourceList: {}",
                source::io_reason(&error)
            );
            Err(Box::new(finish(
                sources,
                API_VERSIONS[0],
                &[],
                vec![json!({"severity": "error", "message": message})],
                Vec::new(),
            )))
        }
    }
}

/// An item of the output: one passed through as it came in, or one made here.
struct Item<'a> {
    /// `apiVersion`, `kind` and `metadata` name, namespace and annotations,
    /// as text: what the function matches items by.
    header: Json,
    body: ItemBody<'a>,
}

enum ItemBody<'a> {
    Passed(&'a Raw<'a>),
    Generated(Json),
}

impl<'a> Item<'a> {
    fn passed(raw: &'a Raw<'a>) -> Self {
        Item {
            header: header(raw),
            body: ItemBody::Passed(raw),
        }
    }
}

/// The parts of a resource the function reads, as JSON text values.
fn header(raw: &Raw<'_>) -> Json {
    let text = |node: Option<&Raw<'_>>| match node {
        Some(node) if !matches!(node.body, Body::Scalar(..)) => Json::Bool(false),
        Some(node) if node.is_empty_null() => Json::Null,
        Some(node) => node
            .scalar()
            .map_or(Json::Null, |s| Json::String(s.to_owned())),
        None => Json::Null,
    };
    let mut out = serde_json::Map::new();
    if !matches!(raw.body, Body::Map(_)) {
        return Json::Null;
    }
    for key in ["apiVersion", "kind"] {
        if let Some(value) = raw.get(key) {
            out.insert(key.to_owned(), text(Some(value)));
        }
    }
    if let Some(metadata) = raw.get("metadata") {
        let mut m = serde_json::Map::new();
        for key in ["name", "namespace"] {
            if let Some(value) = metadata.get(key) {
                m.insert(key.to_owned(), text(Some(value)));
            }
        }
        if let Some(Body::Map(annotations)) = metadata.get("annotations").map(|a| &a.body) {
            let annotations = annotations
                .iter()
                .filter_map(|(k, v)| Some((k.scalar()?.to_owned(), text(Some(v)))))
                .collect();
            m.insert("annotations".to_owned(), Json::Object(annotations));
        }
        out.insert("metadata".to_owned(), Json::Object(m));
    }
    Json::Object(out)
}

/// kustomize's annotation naming the generator of an object
/// (kubernetes-sigs/kustomize kustomize/v5.5.0, api/internal/utils/annotations.go
/// `OriginAnnotationKey`; its value is api/resource/origin.go `Origin`:
/// `configuredIn`, the generator's file, and `configuredBy`, its reference).
/// kustomize removes it from its output unless `buildMetadata:
/// [originAnnotations]` (api/krusty/kustomizer.go); kpt writes it into the
/// package, so that the next run knows which items this TrainSpec made.
pub const ORIGIN: &str = "config.kubernetes.io/origin";

/// The items with this generator's earlier output replaced by `generated`: a
/// second run gives the same package, and an object the spec no longer makes
/// is gone. A regenerated object keeps the file and position kpt gave its
/// predecessor (the `config.kubernetes.io/` and `internal.config.kubernetes.io/`
/// annotations kpt and kyaml track resources by).
fn regenerate<'a>(
    items: Vec<Item<'a>>,
    generated: Vec<Json>,
    generator: &Json,
    file: Option<&str>,
) -> Vec<Item<'a>> {
    let (previous, mut out): (Vec<Item<'a>>, Vec<Item<'a>>) = items
        .into_iter()
        .partition(|item| made_by(&item.header, generator));
    let mut origin = String::new();
    if let Some(file) = file {
        let _ = writeln!(origin, "configuredIn: {}", yaml_scalar(file));
    }
    origin.push_str("configuredBy:\n");
    for key in ["apiVersion", "kind", "name", "namespace"] {
        if let Some(value) = generator.get(key).and_then(Json::as_str) {
            let _ = writeln!(origin, "  {key}: {}", yaml_scalar(value));
        }
    }
    for mut object in generated {
        let before = previous.iter().find(|p| same_object(&p.header, &object));
        let annotations = object["metadata"]
            .as_object_mut()
            .map(|m| m.entry("annotations").or_insert_with(|| json!({})));
        if let Some(Json::Object(annotations)) = annotations {
            for (key, value) in before
                .and_then(|b| b.header.pointer("/metadata/annotations"))
                .and_then(Json::as_object)
                .into_iter()
                .flatten()
                .filter(|(key, value)| {
                    value.is_string()
                        && *key != ORIGIN
                        && (key.starts_with("config.kubernetes.io/")
                            || key.starts_with("internal.config.kubernetes.io/"))
                })
            {
                annotations.insert(key.clone(), value.clone());
            }
            annotations.insert(ORIGIN.to_owned(), Json::String(origin.clone()));
        }
        out.push(Item {
            header: Json::Null,
            body: ItemBody::Generated(object),
        });
    }
    out
}

/// The origin annotation's YAML (`configuredBy: {apiVersion, kind, name}`),
/// read with limits for what it is, a few small mappings: text in an item
/// of a package trainc did not write.
fn origin_annotation(text: &str) -> Option<Json> {
    let limits = crate::yaml::Limits {
        depth: 8,
        documents: 1,
        nodes: 1000,
        object_nodes: 1000,
        aliased: 100,
        aliased_bytes: 16 * 1024,
    };
    let id = crate::source::SourceId(0);
    let documents = crate::yaml::load(id, text, limits).ok()?;
    let node = crate::parse::yaml_to_node(documents.first()?).ok()?;
    Some(node.to_json())
}

/// Whether `item` carries the origin annotation of `generator`.
fn made_by(item: &Json, generator: &Json) -> bool {
    let Some(origin) = item
        .pointer(&format!(
            "/metadata/annotations/{}",
            crate::tree::pointer_segment(ORIGIN)
        ))
        .and_then(Json::as_str)
    else {
        return false;
    };
    let Some(origin) = origin_annotation(origin) else {
        return false;
    };
    let by = &origin["configuredBy"];
    api_group(&by["apiVersion"]) == api_group(&generator["apiVersion"])
        && ["kind", "name", "namespace"]
            .iter()
            .all(|key| by.get(key) == generator.get(key))
}

/// The group of an `apiVersion` (`kubeflow.org` of `kubeflow.org/v1`); the
/// core group (`v1`), or none at all, is `""`.
fn api_group(api_version: &Json) -> &str {
    api_version
        .as_str()
        .and_then(|v| v.split_once('/'))
        .map_or("", |(group, _)| group)
}

/// Same group, kind, namespace and name.
fn same_object(a: &Json, b: &Json) -> bool {
    api_group(&a["apiVersion"]) == api_group(&b["apiVersion"])
        && a["kind"] == b["kind"]
        && a["metadata"]["name"] == b["metadata"]["name"]
        && a["metadata"].get("namespace") == b["metadata"].get("namespace")
}

/// `text` as a YAML scalar: plain when it can only read as this string,
/// otherwise double-quoted (JSON's string syntax is YAML's).
fn yaml_scalar(text: &str) -> String {
    let plain = text.starts_with(|c: char| c.is_ascii_alphabetic())
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._/-".contains(c))
        && !["true", "false", "null", "yes", "no", "on", "off", "y", "n"]
            .iter()
            .any(|word| text.eq_ignore_ascii_case(word));
    if plain {
        text.to_owned()
    } else {
        Json::String(text.to_owned()).to_string()
    }
}

/// What is wrong with the ResourceList itself, if anything.
fn shape_problem(root: &Raw<'_>) -> Option<String> {
    if !matches!(root.body, Body::Map(_)) {
        return Some("the input is not a ResourceList (not a mapping)".to_owned());
    }
    let text = |key: &str| root.get(key).and_then(Raw::scalar).unwrap_or("");
    let (api_version, kind) = (text("apiVersion"), text("kind"));
    if kind != KIND || !API_VERSIONS.contains(&api_version) {
        return Some(format!(
            "the input is not a ResourceList: expected apiVersion {} and kind {KIND}, found `{}` `{}`",
            API_VERSIONS.join(" or "),
            crate::diagnostic::quoted_value(api_version, 60),
            crate::diagnostic::quoted_value(kind, 60),
        ));
    }
    match root.get("items") {
        None => None,
        Some(items) if items.is_empty_null() => None,
        Some(Raw {
            body: Body::Seq(items),
            ..
        }) => items
            .iter()
            .position(|item| !matches!(item.body, Body::Map(_)))
            .map(|i| format!("items[{i}] is not a resource (not a mapping)")),
        Some(_) => Some("`items` of the ResourceList is not a list".to_owned()),
    }
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
            json.pointer(&format!(
                "/metadata/annotations/{}",
                crate::tree::pointer_segment(key)
            ))
            .and_then(Json::as_str)
            .map(str::to_owned)
        };
        let file = annotation("config.kubernetes.io/path")
            .or_else(|| annotation("internal.config.kubernetes.io/path"));
        Context { resource_ref, file }
    }

    /// A warning when the TrainSpec is itself an item of the package without
    /// `config.kubernetes.io/local-config: "true"`: `kpt live apply` and
    /// `kubectl apply -f` would send it to a cluster that has no such kind
    /// (kptdev/kpt v1.0.0-beta.56, pkg/live/rgpath.go: local-config objects are
    /// not applied; kustomize drops them from its output too).
    fn applied_spec(&self, items: &[Item<'_>], config: &Node) -> Option<Diagnostic> {
        let reference = self.resource_ref.as_ref()?;
        let spec = items.iter().map(|item| &item.header).find(|item| {
            item["kind"] == reference["kind"]
                && item["metadata"]["name"] == reference["name"]
                && item["metadata"].get("namespace") == reference.get("namespace")
        })?;
        let local = spec
            .pointer("/metadata/annotations/config.kubernetes.io~1local-config")
            .and_then(Json::as_str)
            == Some("true");
        (!local).then(|| {
            Diagnostic::warning(
                codes::KRM_LOCAL_CONFIG,
                config.key_span_at("/metadata"),
                "the TrainSpec is part of the package and would be applied to the cluster with it",
            )
            .with_help(
                "add `config.kubernetes.io/local-config: \"true\"` to its `metadata.annotations`",
            )
        })
    }

    fn result(&self, d: &Diagnostic, config: &Node) -> Json {
        let mut message = d.message.clone();
        if let Some(help) = &d.help {
            message = format!("{message} (help: {help})");
        }
        let severity = match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "info",
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

/// The items back as they came, and `diagnostics` as error results.
fn failure(
    sources: Sources,
    api_version: &str,
    items: &[Item<'_>],
    diagnostics: Vec<Diagnostic>,
) -> Output {
    let results = diagnostics
        .iter()
        .map(|d| json!({"message": d.message, "severity": "error", "tags": {"code": d.code}}))
        .collect();
    finish(sources, api_version, items, results, diagnostics)
}

/// The ResourceList as YAML: items passed through are written back with
/// every scalar as it came in ([`crate::yaml::emit`]); generated objects and
/// results are written like `trainc build` writes objects.
fn finish(
    sources: Sources,
    api_version: &str,
    items: &[Item<'_>],
    results: Vec<Json>,
    diagnostics: Vec<Diagnostic>,
) -> Output {
    let failed = results.iter().any(|r| r["severity"] == "error");
    let mut out = format!("apiVersion: {}\nkind: {KIND}\n", yaml_scalar(api_version));
    if items.is_empty() {
        out.push_str("items: []\n");
    } else {
        out.push_str("items:\n");
    }
    for item in items {
        match &item.body {
            ItemBody::Passed(raw) => crate::yaml::emit::write_entry(&mut out, raw, 0),
            ItemBody::Generated(object) => out.push_str(
                &serde_saphyr::to_string(&[object])
                    .expect("a JSON value always serialises to YAML"),
            ),
        }
    }
    if !results.is_empty() {
        out.push_str(
            &serde_saphyr::to_string(&Json::Object(
                [("results".to_owned(), Json::Array(results))]
                    .into_iter()
                    .collect(),
            ))
            .expect("a JSON value always serialises to YAML"),
        );
    }
    Output {
        resource_list: out,
        failed,
        diagnostics,
        sources,
    }
}

/// Names the TrainSpec `config` and each problem's field in `diagnostics`,
/// for a source whose own name and lines mean nothing to the user: a
/// ResourceList on stdin, or kustomize's temporary copy of a generator
/// config. `TrainSpec resnet (trainspec.yaml), spec.replicas` is found in
/// the user's own file.
pub fn locate_by_field(
    sources: &mut Sources,
    config: &Node,
    file: Option<&str>,
    diagnostics: &mut [Diagnostic],
) {
    let json = config.to_json();
    let text = |pointer: &str| json.pointer(pointer).and_then(Json::as_str);
    let kind = text("/kind").unwrap_or("TrainSpec");
    let mut alias = match text("/metadata/name") {
        Some(name) => format!("{kind} {name}"),
        None => format!("{kind} without metadata.name"),
    };
    match (text("/metadata/namespace"), file) {
        (Some(namespace), Some(file)) => {
            let _ = write!(alias, " (namespace {namespace}, {file})");
        }
        (Some(namespace), None) => {
            let _ = write!(alias, " (namespace {namespace})");
        }
        (None, Some(file)) => {
            let _ = write!(alias, " ({file})");
        }
        (None, None) => {}
    }
    let id = config.span.source;
    sources.set_alias(id, alias);
    for diagnostic in diagnostics
        .iter_mut()
        .filter(|d| d.primary.span.source == id)
    {
        diagnostic.field = config
            .pointer_of(diagnostic.primary.span)
            .filter(|p| !p.is_empty())
            .map(|p| field_path(&p));
    }
}
