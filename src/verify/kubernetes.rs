//! Every built-in kind of a Kubernetes release (Secret, ServiceAccount,
//! Namespace, Role, Deployment, CronJob, ...) against its strict schema,
//! from the release's bundle in `schemas/compact/` (see
//! [`super::compact::kubernetes_bundle`]). A kind's validator is compiled
//! the first time an object of that kind is checked.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use jsonschema::Validator;
use serde_json::Value;

use super::Problem;
use super::compact::{KUBERNETES_RELEASES, KubernetesRelease};

/// A Kubernetes release whose built-in kinds trainc checks: a place in
/// [`KUBERNETES_RELEASES`]. The default is the newest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Release(usize);

impl Release {
    /// Every release, newest first.
    pub fn all() -> impl Iterator<Item = Release> {
        (0..KUBERNETES_RELEASES.len()).map(Release)
    }

    /// The release numbered `name` (`1.35`), if trainc knows it.
    pub fn named(name: &str) -> Option<Release> {
        KUBERNETES_RELEASES
            .iter()
            .position(|r| r.name == name)
            .map(Release)
    }

    fn files(self) -> &'static KubernetesRelease {
        &KUBERNETES_RELEASES[self.0]
    }

    /// Its number, `1.36`.
    pub fn name(self) -> &'static str {
        self.files().name
    }

    /// Its minor version: 36 of `1.36`.
    pub fn minor(self) -> u32 {
        self.name()
            .split_once('.')
            .and_then(|(_, minor)| minor.parse().ok())
            .expect("a release is named 1.N")
    }

    /// What `--help` says of it, if anything.
    pub fn note(self) -> Option<&'static str> {
        self.files().note
    }

    fn bundle(self) -> &'static Value {
        static BUNDLES: OnceLock<Vec<OnceLock<Value>>> = OnceLock::new();
        let bundles = BUNDLES.get_or_init(|| Release::all().map(|_| OnceLock::new()).collect());
        bundles[self.0].get_or_init(|| {
            let parse = |text: &str| -> Value {
                serde_json::from_str(text).expect("the embedded bundle is JSON")
            };
            let text = parse(&crate::embedded::read_out(self.files().bytes));
            match self {
                Release(0) => text,
                _ => super::compact::kubernetes_patched(Release::default().bundle(), &text),
            }
        })
    }
}

impl std::fmt::Display for Release {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Each release's validators by definition, compiled once.
type Validators = HashMap<(Release, String), Arc<Validator>>;
static VALIDATORS: OnceLock<Mutex<Validators>> = OnceLock::new();

/// The definition of `apiVersion kind`, when `release` serves it.
fn definition(release: Release, api_version: &str, kind: &str) -> Option<&'static str> {
    release.bundle()["kinds"][format!("{api_version} {kind}")].as_str()
}

/// Checks `value` when it is a built-in kind; `false` when it is not one.
pub(super) fn check(
    release: Release,
    id: &str,
    api_version: &str,
    kind: &str,
    value: &Value,
    problems: &mut Vec<Problem>,
) -> bool {
    let Some(name) = definition(release, api_version, kind) else {
        return false;
    };
    let validator = validator(release, name);
    if validator.is_valid(value) {
        return true;
    }
    // Error locations are absolute (`/$defs/<definition>/...`): they are
    // read in the bundle itself, not in a copy made for this kind. Past
    // the problems an object reports (and the one that says there are
    // more), the rest are not looked for: 200,000 bad keys cost what 101 do.
    let start = problems.len();
    for error in validator.iter_errors(value) {
        super::wording::push_error(id, "", &error, release.bundle(), problems);
        if problems.len() - start > super::MAX_PROBLEMS_PER_OBJECT {
            break;
        }
    }
    true
}

/// A schema whose root is the definition `name`, the others beside it.
fn root_of(release: Release, name: &str) -> Value {
    serde_json::json!({
        "$ref": format!("#/$defs/{name}"),
        "$defs": release.bundle()["$defs"],
    })
}

fn validator(release: Release, name: &str) -> Arc<Validator> {
    let cache = VALIDATORS.get_or_init(Mutex::default);
    let key = (release, name.to_owned());
    if let Some(found) = cache.lock().map_or(None, |c| c.get(&key).cloned()) {
        return found;
    }
    let compiled = Arc::new(
        jsonschema::options()
            .with_draft(jsonschema::Draft::Draft7)
            .with_format("byte", crate::syntax::base64::is_standard)
            .should_validate_formats(true)
            .build(&root_of(release, name))
            .expect("the embedded bundle compiles"),
    );
    if let Ok(mut cache) = cache.lock() {
        cache.insert(key, Arc::clone(&compiled));
    }
    compiled
}

/// What Kubernetes serves of `kind` when it does not serve `api_version`'s:
/// the API versions of that kind (`batch/v1` for a `batch/v1beta1`
/// CronJob), or a kind of that API version spelled nearly the same.
pub fn served_instead(release: Release, api_version: &str, kind: &str) -> Option<String> {
    let kinds = release.bundle()["kinds"].as_object()?;
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
pub fn built_in_group(release: Release, api_version: &str) -> bool {
    let wanted = group(api_version);
    release.bundle()["kinds"].as_object().is_some_and(|kinds| {
        kinds
            .keys()
            .filter_map(|key| key.split_once(' '))
            .any(|(v, _)| group(v) == wanted)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every release's bundle is whole once patched: its own number, the
    /// kinds it serves, and each kind's definition within it.
    #[test]
    fn every_release_bundle_names_its_release_and_defines_its_kinds() {
        for release in Release::all() {
            assert_eq!(Release::named(release.name()), Some(release));
            let bundle = release.bundle();
            assert_eq!(bundle["kubernetes"], release.name());
            let kinds = bundle["kinds"].as_object().expect("kinds");
            assert!(kinds.len() > 80, "{release}: {} kinds", kinds.len());
            for definition in kinds.values() {
                let name = definition.as_str().expect("a definition's name");
                assert!(bundle["$defs"][name].is_object(), "{release}: {name}");
            }
        }
        // 1.30 serves no pod-level resources; 1.36 does.
        let pod_spec = |release: Release| {
            release.bundle()["$defs"]["io.k8s.api.core.v1.PodSpec"]["properties"]["resources"]
                .is_object()
        };
        assert!(pod_spec(Release::default()));
        assert_eq!(Release::default().name(), "1.36");
        assert!(!pod_spec(Release::named("1.30").unwrap()));
    }
}
