//! Every built-in kind of Kubernetes [`KUBERNETES`] (Secret, ServiceAccount,
//! Namespace, Role, Deployment, CronJob, ...) against its strict schema,
//! from the one bundle `schemas/compact/` holds (see
//! [`super::compact::kubernetes_bundle`]). A kind's validator is compiled
//! the first time an object of that kind is checked.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use jsonschema::Validator;
use serde_json::Value;

use super::Problem;
pub use super::compact::KUBERNETES;

static TEXT: &str = include_str!("../../schemas/compact/kubernetes-v1.30.0.json");
static BUNDLE: OnceLock<Value> = OnceLock::new();
static VALIDATORS: OnceLock<Mutex<HashMap<String, Arc<Validator>>>> = OnceLock::new();

fn bundle() -> &'static Value {
    BUNDLE.get_or_init(|| serde_json::from_str(TEXT).expect("the embedded bundle is JSON"))
}

/// The definition of `apiVersion kind`, when Kubernetes serves it.
fn definition(api_version: &str, kind: &str) -> Option<&'static str> {
    bundle()["kinds"][format!("{api_version} {kind}")].as_str()
}

/// Checks `value` when it is a built-in kind; `false` when it is not one.
pub(super) fn check(
    id: &str,
    api_version: &str,
    kind: &str,
    value: &Value,
    problems: &mut Vec<Problem>,
) -> bool {
    let Some(name) = definition(api_version, kind) else {
        return false;
    };
    let validator = validator(name);
    if validator.is_valid(value) {
        return true;
    }
    // Error locations are absolute (`/$defs/<definition>/...`): they are
    // read in the bundle itself, not in a copy made for this kind. Past
    // the problems an object reports (and the one that says there are
    // more), the rest are not looked for: 200,000 bad keys cost what 101 do.
    let start = problems.len();
    for error in validator.iter_errors(value) {
        super::wording::push_error(id, "", &error, bundle(), problems);
        if problems.len() - start > super::MAX_PROBLEMS_PER_OBJECT {
            break;
        }
    }
    true
}

/// A schema whose root is the definition `name`, the others beside it.
fn root_of(name: &str) -> Value {
    serde_json::json!({
        "$ref": format!("#/$defs/{name}"),
        "$defs": bundle()["$defs"],
    })
}

fn validator(name: &str) -> Arc<Validator> {
    let cache = VALIDATORS.get_or_init(Mutex::default);
    if let Some(found) = cache.lock().map_or(None, |c| c.get(name).cloned()) {
        return found;
    }
    let compiled = Arc::new(
        jsonschema::options()
            .with_draft(jsonschema::Draft::Draft7)
            .with_format("byte", crate::syntax::base64::is_standard)
            .should_validate_formats(true)
            .build(&root_of(name))
            .expect("the embedded bundle compiles"),
    );
    if let Ok(mut cache) = cache.lock() {
        cache.insert(name.to_owned(), Arc::clone(&compiled));
    }
    compiled
}

/// What Kubernetes serves of `kind` when it does not serve `api_version`'s:
/// the API versions of that kind (`batch/v1` for a `batch/v1beta1`
/// CronJob), or a kind of that API version spelled nearly the same.
pub fn served_instead(api_version: &str, kind: &str) -> Option<String> {
    let kinds = bundle()["kinds"].as_object()?;
    let versions: Vec<&str> = kinds
        .keys()
        .filter_map(|key| key.split_once(' '))
        .filter(|(_, k)| *k == kind)
        .map(|(v, _)| v)
        .collect();
    if !versions.is_empty() {
        let same_group: Vec<&str> = versions
            .iter()
            .copied()
            .filter(|v| group(v) == group(api_version))
            .collect();
        let shown = if same_group.is_empty() {
            &versions
        } else {
            &same_group
        };
        return Some(format!("it serves {kind} as `{}`", shown.join("`, `")));
    }
    let in_version = kinds
        .keys()
        .filter_map(|key| key.split_once(' '))
        .filter(|(v, _)| *v == api_version)
        .map(|(_, k)| k);
    let near = crate::diagnostic::suggest(kind, in_version)?;
    Some(format!("did you mean `{near}`?"))
}

/// The API group of an `apiVersion`: `batch` of `batch/v1`, `` of `v1`.
fn group(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(group, _)| group)
}

/// Whether `api_version`'s group is one of Kubernetes' own (`v1`,
/// `apps/v1`, `batch/v1`, `rbac.authorization.k8s.io/v1`, ...), whatever
/// its version.
pub fn built_in_group(api_version: &str) -> bool {
    let wanted = group(api_version);
    bundle()["kinds"].as_object().is_some_and(|kinds| {
        kinds
            .keys()
            .filter_map(|key| key.split_once(' '))
            .any(|(v, _)| group(v) == wanted)
    })
}
