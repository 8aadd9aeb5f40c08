//! The strict schemas as trainc embeds them: `schemas/compact/`, derived from
//! the upstream copies in `schemas/k8s/` by [`compact`] and locked to them by
//! a test (`TRAINC_BLESS=1 cargo test` rewrites them).
//!
//! Descriptions, defaults and `x-kubernetes-*` notes make up nine tenths of an
//! upstream schema and play no part in validation; without them the binary is
//! 2.5 MB smaller and a schema parses in a tenth of the time. The
//! `format: int32` / `int64` of a CRD become the bounds they stand for, which
//! JSON Schema validators do not enforce and the API server does.

use serde_json::{Map, Value, json};

/// Keys that describe rather than constrain.
const NOTES: &[&str] = &["description", "default", "$comment", "example", "examples"];

/// An upstream schema (JSON text) as `schemas/compact/` holds it: minified,
/// without notes, with integer formats as bounds. The group-version-kind the
/// schema names stays, at the top.
pub fn compact(upstream: &str) -> String {
    compact_with(upstream, true)
}

/// One of trainc's own schemas (`schemas/trainspec.schema.json`,
/// `schemas/overlay.schema.json`) as the quick check reads it: minified,
/// without notes. Formats stay notes, as draft 2020-12 has them.
pub fn compact_spec_schema(committed: &str) -> String {
    compact_with(committed, false)
}

fn compact_with(upstream: &str, bound_formats: bool) -> String {
    let mut schema: Value = serde_json::from_str(upstream).expect("upstream schemas are JSON");
    let gvk = schema
        .as_object_mut()
        .and_then(|o| o.remove("x-kubernetes-group-version-kind"));
    let rules = rules_only(&schema, 0);
    strip(&mut schema);
    if bound_formats {
        bound_integer_formats(&mut schema);
        close_empty_objects(&mut schema, true);
    }
    let mut out = Map::new();
    if let Some(gvk) = gvk {
        out.insert("x-kubernetes-group-version-kind".to_owned(), gvk);
    }
    if let Some(rules) = rules {
        out.insert(RULES.to_owned(), rules);
    }
    if let Value::Object(rest) = schema {
        out.extend(rest);
    }
    Value::Object(out).to_string()
}

/// Where a compact CRD schema keeps what the API server checks beyond the
/// schema, second after its group-version-kind: the schema's nodes that hold
/// CEL rules or key a list (and those on the way to them: `properties`,
/// `items`, `additionalProperties`), with their `x-kubernetes-validations` but
/// for transition rules (`oldSelf`), which cannot be checked offline, and
/// each `x-kubernetes-list-type: map` with its keys and their defaults, and
/// each `set`. Read alone, without the schema around it.
pub const RULES: &str = "x-trainc-rules";

/// The skeleton of `schema` that holds its rules, map lists and sets; `None`
/// if it has none.
fn rules_only(schema: &Value, depth: usize) -> Option<Value> {
    if depth > 128 || !schema.is_object() {
        return None;
    }
    let mut out = Map::new();
    if schema["x-kubernetes-list-type"] == "map" {
        let keys = &schema["x-kubernetes-list-map-keys"];
        out.insert("x-kubernetes-list-type".to_owned(), json!("map"));
        out.insert("x-kubernetes-list-map-keys".to_owned(), keys.clone());
        // A key's default stands for it where an item leaves it out.
        let defaults: Map<String, Value> = (keys.as_array().into_iter().flatten())
            .filter_map(|key| {
                let key = key.as_str()?;
                let default = schema["items"]["properties"][key].get("default")?;
                Some((key.to_owned(), json!({ "default": default })))
            })
            .collect();
        if !defaults.is_empty() {
            out.insert(
                "items".to_owned(),
                json!({ "properties": Value::Object(defaults) }),
            );
        }
    } else if schema["x-kubernetes-list-type"] == "set" {
        out.insert("x-kubernetes-list-type".to_owned(), json!("set"));
    }
    let rules: Vec<Value> = schema["x-kubernetes-validations"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|rule| {
            !rule["rule"]
                .as_str()
                .is_some_and(super::cel::reads_old_self)
        })
        .cloned()
        .collect();
    if !rules.is_empty() {
        out.insert("x-kubernetes-validations".to_owned(), Value::Array(rules));
    }
    let properties: Map<String, Value> = (schema["properties"].as_object().into_iter().flatten())
        .filter_map(|(key, child)| Some((key.clone(), rules_only(child, depth + 1)?)))
        .collect();
    if !properties.is_empty() {
        out.insert("properties".to_owned(), Value::Object(properties));
    }
    for keyword in ["items", "additionalProperties"] {
        if let Some(child) = rules_only(&schema[keyword], depth + 1) {
            merge(out.entry(keyword).or_insert_with(|| json!({})), child);
        }
    }
    (!out.is_empty()).then_some(Value::Object(out))
}

/// `from`'s keys put into `into`, objects merged key by key.
fn merge(into: &mut Value, from: Value) {
    match (into, from) {
        (Value::Object(into), Value::Object(from)) => {
            for (key, value) in from {
                merge(into.entry(key).or_insert(Value::Null), value);
            }
        }
        (into, from) => *into = from,
    }
}

/// `{ podTemplate: PodTemplateSpec }` from the compact Job schema, for a
/// spec's `[podTemplate]` (`schemas/compact/podtemplate-fragment.json`). A
/// fragment needs no `containers` (PodSpec requires them), and its metadata
/// holds labels and annotations only: the operator names the pods.
pub fn pod_template_fragment(compact_job: &str) -> String {
    let mut job: Value = serde_json::from_str(compact_job).expect("compact schemas are JSON");
    let mut template = job["properties"]["spec"]["properties"]["template"].take();
    template["additionalProperties"] = json!(false);
    if let Some(spec) = template
        .pointer_mut("/properties/spec")
        .and_then(Value::as_object_mut)
    {
        spec.remove("required");
    }
    let metadata = &mut template["properties"]["metadata"];
    let keep = |key: &str| metadata["properties"][key].clone();
    *metadata = json!({
        "type": "object",
        "properties": { "labels": keep("labels"), "annotations": keep("annotations") },
        "additionalProperties": false,
    });
    json!({
        "$schema": job["$schema"],
        "type": "object",
        "properties": { "podTemplate": template },
    })
    .to_string()
}

/// Removes notes from a schema, leaving property names (which may be
/// `description` or `default`) and the values of `enum`, `const` and
/// `required` alone.
fn strip(schema: &mut Value) {
    match schema {
        Value::Object(keywords) => {
            keywords.retain(|key, _| !NOTES.contains(&key.as_str()) && !key.starts_with("x-"));
            for (key, value) in keywords.iter_mut() {
                match key.as_str() {
                    "properties" | "patternProperties" | "definitions" | "$defs" => {
                        if let Value::Object(named) = value {
                            named.values_mut().for_each(strip);
                        }
                    }
                    "enum" | "const" | "required" => {}
                    _ => strip(value),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(strip),
        _ => {}
    }
}

/// JSON Schema validators treat `format` as a note on strings, so an int32
/// field of a CRD (`replicas`, `backoffLimit`, `numNodes`, ...) would accept
/// any integer; the API server rejects what does not fit. This turns every
/// `format: int32` / `int64` into the bounds it stands for, keeping any
/// tighter bound the schema already has.
/// A CRD's object with no `properties` (Trainer's `mlPolicy.xgboost: {}`)
/// takes no fields: the API server prunes what a structural schema does not
/// name, and strict field validation refuses it as unknown (the real v2.3.0
/// control plane refuses `xgboost: {unknownField: x}`). JSON Schema would
/// take any, so such a node gets `additionalProperties: false`. The root's
/// `metadata` is ObjectMeta's, checked on its own.
fn close_empty_objects(schema: &mut Value, root: bool) {
    match schema {
        Value::Object(node) => {
            let open = [
                "properties",
                "additionalProperties",
                "patternProperties",
                "$ref",
            ]
            .iter()
            .any(|k| node.contains_key(*k))
                || node.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true));
            if node.get("type") == Some(&json!("object")) && !open {
                node.insert("properties".to_owned(), json!({}));
                node.insert("additionalProperties".to_owned(), Value::Bool(false));
            }
            for (key, child) in node.iter_mut() {
                if key == "properties" && root {
                    if let Value::Object(fields) = child {
                        fields
                            .iter_mut()
                            .filter(|(name, _)| name.as_str() != "metadata")
                            .for_each(|(_, field)| close_empty_objects(field, false));
                    }
                } else {
                    close_empty_objects(child, false);
                }
            }
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|item| close_empty_objects(item, false)),
        _ => {}
    }
}

pub(crate) fn bound_integer_formats(schema: &mut Value) {
    match schema {
        Value::Object(node) => {
            let bounds = match node.get("format").and_then(Value::as_str) {
                Some("int32") => Some((i64::from(i32::MIN), i64::from(i32::MAX))),
                Some("int64") => Some((i64::MIN, i64::MAX)),
                _ => None,
            };
            if let Some((min, max)) = bounds {
                let tighter = |key: &str, bound: i64, keep: fn(i64, i64) -> i64| {
                    node.get(key)
                        .and_then(Value::as_i64)
                        .map_or(bound, |own| keep(own, bound))
                };
                let (min, max) = (
                    tighter("minimum", min, i64::max),
                    tighter("maximum", max, i64::min),
                );
                node.insert("minimum".to_owned(), Value::from(min));
                node.insert("maximum".to_owned(), Value::from(max));
            }
            node.values_mut().for_each(bound_integer_formats);
        }
        Value::Array(items) => items.iter_mut().for_each(bound_integer_formats),
        _ => {}
    }
}

/// One Kubernetes release whose built-in kinds `trainc verify` checks
/// (`--kubernetes-version`): its number, its definitions under
/// `schemas/k8s/`, its file under `schemas/compact/`, embedded, and what
/// `--help` says of it.
pub struct KubernetesRelease {
    pub name: &'static str,
    pub definitions: &'static str,
    pub file: &'static str,
    /// The file, compressed ([`crate::embedded`]).
    pub bytes: &'static [u8],
    pub note: Option<&'static str>,
}

/// Each release named once: its files' names are made from its number.
macro_rules! kubernetes_releases {
    (@note) => { None };
    (@note $note:literal) => { Some($note) };
    ($newest:literal ($newest_note:literal), $($older:literal $(($note:literal))?),* $(,)?) => {
        &[
            KubernetesRelease {
                name: $newest,
                definitions: concat!("kubernetes-v", $newest, ".0-definitions.json"),
                file: concat!("kubernetes-v", $newest, ".0.json"),
                bytes: include_bytes!(concat!("../../schemas/compact/kubernetes-v", $newest, ".0.json.lz4")),
                note: Some($newest_note),
            },
            $(KubernetesRelease {
                name: $older,
                definitions: concat!("kubernetes-v", $older, ".0-definitions.json"),
                file: concat!("kubernetes-v", $older, ".0-patch.json"),
                bytes: include_bytes!(concat!("../../schemas/compact/kubernetes-v", $older, ".0-patch.json.lz4")),
                note: kubernetes_releases!(@note $($note)?),
            },)*
        ]
    };
}

/// The Kubernetes releases whose built-in kinds `trainc verify` checks,
/// newest first, the first the default: the one the control-plane suite
/// runs (k8s.io/kubernetes v1.36.3, tests/cluster), down to 1.30, the
/// oldest that trainc's output targets. The definitions are
/// `_definitions.json` of `vX.Y.0-local-strict` in PyPI
/// `kubernetes-validate` 1.37.0, generated from that release's OpenAPI with
/// every object closed. The first release's file is its bundle
/// ([`kubernetes_bundle`]); each other's is what its bundle changes of the
/// first's ([`kubernetes_patch`]): 35 to 90 KB where a bundle is 330 KB.
pub static KUBERNETES_RELEASES: &[KubernetesRelease] = kubernetes_releases!(
    "1.36"("the release the control-plane suite runs"),
    "1.35",
    "1.34",
    "1.33",
    "1.32",
    "1.31",
    "1.30"("the oldest trainc's output targets"),
);

/// The `apiVersion` and `kind` an `x-kubernetes-group-version-kind` entry
/// names (`batch/v1`, or `v1` for the core group).
pub fn api_version_and_kind(gvk: &Value) -> (String, String) {
    let group = gvk["group"].as_str().unwrap_or("");
    let version = gvk["version"].as_str().unwrap_or("");
    let api_version = if group.is_empty() {
        version.to_owned()
    } else {
        format!("{group}/{version}")
    };
    (api_version, gvk["kind"].as_str().unwrap_or("").to_owned())
}

/// A resource quantity's text, as the Kubeflow CRDs (from
/// `k8s.io/apimachinery`'s `resource.Quantity` markers) write it.
const QUANTITY: &str = r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$";

/// The upstream definitions of every Kubernetes kind as one bundle:
/// `kinds` maps `"<apiVersion> <kind>"` to its definition, and `$defs` holds
/// the definitions once each, compacted as [`compact`] does (a Deployment,
/// a CronJob and a Pod share one PodSpec).
pub fn kubernetes_bundle(release: &str, upstream: &str) -> String {
    let mut all: Value = serde_json::from_str(upstream).expect("upstream schemas are JSON");
    let mut definitions = all["$defs"].take();
    let mut kinds = std::collections::BTreeMap::new();
    for (name, definition) in definitions.as_object().into_iter().flatten() {
        // DeleteOptions, Status and WatchEvent name every group: they are
        // what the API sends and takes, not objects a manifest holds.
        let Some([gvk]) = definition["x-kubernetes-group-version-kind"]
            .as_array()
            .map(Vec::as_slice)
        else {
            continue;
        };
        let (api_version, kind) = api_version_and_kind(gvk);
        kinds.insert(format!("{api_version} {kind}"), name.clone());
    }
    strip(&mut definitions);
    bound_integer_formats(&mut definitions);
    // The OpenAPI says only "a string or a number"; the API server parses
    // the text and rejects `8GB` or `2 cores`. The CRDs of the Kubeflow
    // operators spell what it takes as this pattern.
    if let Some(quantity) = definitions.get_mut("io.k8s.apimachinery.pkg.api.resource.Quantity") {
        *quantity = json!({ "oneOf": [
            { "type": ["string", "null"], "pattern": QUANTITY },
            { "type": ["number", "null"] },
        ]});
    }
    json!({ "kubernetes": release, "kinds": kinds, "$defs": definitions }).to_string()
}

/// What `bundle` (a [`kubernetes_bundle`]) changes of `base`'s: its
/// release, its kinds, and each definition that is not `base`'s as it is.
/// A definition `base` has and `bundle` lacks is kept: no kind of the
/// release names it.
pub fn kubernetes_patch(bundle: &str, base: &str) -> String {
    let bundle: Value = serde_json::from_str(bundle).expect("a bundle is JSON");
    let base: Value = serde_json::from_str(base).expect("a bundle is JSON");
    let changed: serde_json::Map<String, Value> = (bundle["$defs"].as_object().into_iter())
        .flatten()
        .filter(|(name, definition)| base["$defs"].get(name.as_str()) != Some(definition))
        .map(|(name, definition)| (name.clone(), definition.clone()))
        .collect();
    json!({
        "kubernetes": bundle["kubernetes"],
        "kinds": bundle["kinds"],
        "$defs": changed,
    })
    .to_string()
}

/// `base` (a bundle) with `patch` ([`kubernetes_patch`]) applied: the
/// bundle of the patch's release.
pub fn kubernetes_patched(base: &Value, patch: &Value) -> Value {
    let mut bundle = base.clone();
    bundle["kubernetes"] = patch["kubernetes"].clone();
    bundle["kinds"] = patch["kinds"].clone();
    if let (Some(definitions), Some(changed)) =
        (bundle["$defs"].as_object_mut(), patch["$defs"].as_object())
    {
        for (name, definition) in changed {
            definitions.insert(name.clone(), definition.clone());
        }
    }
    bundle
}

/// The upstream schemas trainc embeds, as paths under `schemas/k8s/`; each is
/// `schemas/compact/` + its file name.
pub const EMBEDDED: &[&str] = &[
    "pytorchjob-kubeflow-v1.json",
    "service-v1.json",
    "persistentvolumeclaim-v1.json",
    "configmap-v1.json",
    "job-batch-v1.json",
    "jobset-jobset-v1alpha2.json",
    "objectmeta-meta-v1.json",
    "trainjob-trainer-v1alpha1.json",
    "variants/trainjob-trainer-v1alpha1-v2.1.0.json",
    "variants/trainjob-trainer-v1alpha1-v2.0.0.json",
    "trainingruntime-trainer-v1alpha1.json",
    "variants/trainingruntime-trainer-v1alpha1-v2.1.0.json",
    "variants/trainingruntime-trainer-v1alpha1-v2.0.0.json",
    "clustertrainingruntime-trainer-v1alpha1.json",
    "variants/clustertrainingruntime-trainer-v1alpha1-v2.1.0.json",
    "variants/clustertrainingruntime-trainer-v1alpha1-v2.0.0.json",
];

/// The file under `schemas/compact/` of an [`EMBEDDED`] upstream path.
pub fn compact_name(upstream: &str) -> &str {
    upstream.rsplit('/').next().unwrap_or(upstream)
}
