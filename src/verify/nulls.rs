//! Nulls in a custom resource: the API server prunes a field set to `null`
//! (one its schema does not mark `nullable`) before it defaults and
//! validates the object (kubernetes v1.30 and later,
//! `apiextensions-apiserver/pkg/apiserver/schema/pruning`,
//! `structuraldefaulting.PruneNonNullableNullsWithoutDefaults`), so
//! `nvidia.com/gpu:` written with no value is admitted as no GPU at all.
//! The object is checked as the server stores it, and each null said: for
//! the operators' kinds, whose CRDs mark no field `nullable`.

use serde_json::Value;

use super::Problem;

/// `value` as the API server stores it, when it is a custom resource with
/// nulls: without them (`import` reads what the cluster would run).
pub fn stored(value: &Value) -> Option<Value> {
    stored_with_paths(value).map(|(value, _)| value)
}

/// [`stored`], and where each null was.
fn stored_with_paths(value: &Value) -> Option<(Value, Vec<String>)> {
    // The operators' kinds, whose CRDs mark no field `nullable`
    // (kubeflow/trainer v1.7.0–v2.3.0 and kubernetes-sigs/jobset
    // v0.8.0–v0.12.0, `manifests/base/crds`): a user's CRD (`--crd`) may
    // keep a null, and its own schema says so.
    let operators = [
        (
            crate::cluster::pytorchjob::API_VERSION,
            crate::cluster::pytorchjob::KIND,
        ),
        (
            crate::cluster::trainjob::API_VERSION,
            crate::cluster::trainjob::KIND,
        ),
        (crate::cluster::trainjob::API_VERSION, "TrainingRuntime"),
        (
            crate::cluster::trainjob::API_VERSION,
            "ClusterTrainingRuntime",
        ),
        (
            crate::cluster::jobset::API_VERSION,
            crate::cluster::jobset::KIND,
        ),
    ];
    let of = |(v, k): &(&str, &str)| value["apiVersion"] == *v && value["kind"] == *k;
    // A built-in kind's null is no value too: the API server decodes it
    // into its Go type (encoding/json leaves a field given `null` unset),
    // as the real server showed (tests/cluster's differential suite: a
    // Service port's `targetPort: null` is admitted and defaulted).
    // (By the group's shape, not the bundle of built-in schemas, which
    // costs a parse of its own.)
    let built_in = value["apiVersion"].as_str().is_some_and(|v| {
        super::apiserver::kubernetes_group(v.rsplit_once('/').map_or("", |(group, _)| group))
    });
    if !(built_in || operators.iter().any(of)) || !has_null(value, 0) {
        return None;
    }
    let mut value = value.clone();
    let mut found = Vec::new();
    prune(&mut value, "", 0, &mut found);
    if built_in {
        // A null amount is a key of a Go map, kept with the zero quantity
        // (the real server refuses a request over a `cpu: null` limit as
        // over a limit of 0).
        for path in &found {
            if path.contains("/resources/limits/") || path.contains("/resources/requests/") {
                insert(&mut value, path, Value::from("0"));
            }
        }
    }
    Some((value, found))
}

/// Sets the field at the JSON pointer `path` (whose parent exists) to `new`.
fn insert(value: &mut Value, path: &str, new: Value) {
    let Some((parent, key)) = path.rsplit_once('/') else {
        return;
    };
    if let Some(Value::Object(map)) = value.pointer_mut(parent) {
        map.insert(key.replace("~1", "/").replace("~0", "~"), new);
    }
}

/// `value` without its nulls, when it is a custom resource that has some,
/// with a warning at each.
pub(super) fn pruned(id: &str, value: &Value, problems: &mut Vec<Problem>) -> Option<Value> {
    let (value, found) = stored_with_paths(value)?;
    for path in found {
        problems.push(Problem::admitted(id, &path, said(&path)));
    }
    Some(value)
}

/// Each null the API server prunes from `value` (a custom resource): where
/// it is, and what that means.
pub fn said_of(value: &Value) -> Vec<(String, String)> {
    stored_with_paths(value)
        .map(|(_, found)| {
            found
                .into_iter()
                .map(|p| {
                    let said = said(&p);
                    (p, said)
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A field the schema does not have is refused even when it is null:
/// strict field validation reads the keys as written, before nulls are
/// pruned (the real server refuses `podTemplateOverrides: null` in a v2.3
/// TrainJob). `problems[start..]` are the nulls [`pruned`] said;
/// each one the schema does not know becomes its unknown-field error.
pub(super) fn unknown(
    id: &str,
    value: &Value,
    releases: (crate::spec::ApiLevel, super::kubernetes::Release),
    crds: &super::crd::Crds,
    start: usize,
    problems: &mut Vec<Problem>,
) {
    let nulls: Vec<String> = problems[start..].iter().map(|p| p.path.clone()).collect();
    let mut raw = Vec::new();
    super::schema::check(id, value, releases, crds, &mut raw);
    let unknown: Vec<Problem> = raw
        .into_iter()
        .filter(|p| p.message.starts_with("unknown field") && nulls.contains(&p.path))
        .collect();
    if unknown.is_empty() {
        return;
    }
    // The null's own warning (admitted without it) is not so: it goes.
    let said = problems.split_off(start);
    problems.extend(
        said.into_iter()
            .filter(|p| !unknown.iter().any(|u| u.path == p.path)),
    );
    problems.extend(unknown);
}

/// What a null at `path` means.
fn said(path: &str) -> String {
    let field = path
        .rsplit('/')
        .next()
        .unwrap_or_default()
        .replace("~1", "/")
        .replace("~0", "~");
    let resource = path.contains("/resources/limits/") || path.contains("/resources/requests/");
    let effect = if resource {
        format!(" with no `{field}` in it: a container that asks for none")
    } else {
        " without it".to_owned()
    };
    format!(
        "`{field}` has no value (null): the API server reads a null as a field not given (it prunes one from a custom resource before it validates it), so the object is admitted{effect}"
    )
}

/// Deeper than this, an object is not looked into (the reader bounds depth
/// already).
const DEPTH: usize = 256;

fn has_null(value: &Value, depth: usize) -> bool {
    if depth > DEPTH {
        return false;
    }
    match value {
        Value::Null => true,
        Value::Object(map) => map.values().any(|v| has_null(v, depth + 1)),
        Value::Array(items) => items.iter().any(|v| has_null(v, depth + 1)),
        _ => false,
    }
}

/// Removes the nulls of objects' fields (a list's null items stay: the
/// schema says what they are), each one's pointer into `found`.
fn prune(value: &mut Value, at: &str, depth: usize, found: &mut Vec<String>) {
    if depth > DEPTH {
        return;
    }
    match value {
        Value::Object(map) => {
            map.retain(|key, v| {
                let null = v.is_null();
                if null {
                    found.push(format!("{at}/{}", crate::tree::pointer_segment(key)));
                }
                !null
            });
            for (key, v) in map.iter_mut() {
                let inner = format!("{at}/{}", crate::tree::pointer_segment(key));
                prune(v, &inner, depth + 1, found);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter_mut().enumerate() {
                prune(v, &format!("{at}/{i}"), depth + 1, found);
            }
        }
        _ => {}
    }
}
