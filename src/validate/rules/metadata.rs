//! Rules on labels, annotations and the image reference.

use std::collections::BTreeMap;

use super::{Rules, at};
use crate::diagnostic::{Diagnostic, codes};
use crate::syntax::{image, names};

/// Label keys trainc or the operators set; a user value would be overwritten or
/// would break how the objects find each other.
const RESERVED_LABELS: &[(&str, &str)] = &[
    ("app.kubernetes.io/managed-by", "trainc sets it to `trainc`"),
    (
        "app.kubernetes.io/name",
        "trainc sets it to the job's name, and the job's Services find its pods by it",
    ),
    (
        "kueue.x-k8s.io/queue-name",
        "set `scheduling.queue` instead",
    ),
    (
        "kueue.x-k8s.io/priority-class",
        "set `scheduling.workloadPriorityClass` instead",
    ),
];
const RESERVED_PREFIXES: &[&str] = &crate::cluster::CONTROLLER_LABEL_PREFIXES;

/// The API server's limit on all annotations of one object.
const MAX_ANNOTATION_BYTES: usize = 256 * 1024;

pub(super) fn check(r: &mut Rules<'_>) {
    let spec = r.spec;
    if let Some(labels) = &spec.labels {
        label_map(r, "/labels", labels, "label");
        for key in labels.keys() {
            if let Some(why) = reserved_label(key) {
                let d = reserved(r, &at("/labels", key), key, &why);
                r.push(d);
            }
        }
    }
    if let Some(annotations) = &spec.annotations {
        if annotations.contains_key(crate::spec::defaults::WARNINGS_ANNOTATION) {
            let pointer = at("/annotations", crate::spec::defaults::WARNINGS_ANNOTATION);
            r.push(
                Diagnostic::error(
                    codes::METADATA_RESERVED,
                    r.key(&pointer),
                    format!("annotation `{}` is trainc's: as a kustomize plugin it writes there the warnings of the build", crate::spec::defaults::WARNINGS_ANNOTATION),
                )
                .with_help("remove it; to make warnings fail the build, set `warnings = \"error\"`"),
            );
        }
        for key in annotations.keys() {
            if let Err(why) = names::qualified_name(key) {
                r.push(invalid_key(
                    r,
                    &at("/annotations", key),
                    "annotation",
                    key,
                    &why,
                ));
            }
        }
        // The pods carry trainc's own annotations too (the API server counts
        // keys and values: kubernetes/kubernetes v1.33.0, staging/src/
        // k8s.io/apimachinery/pkg/api/validation/objectmeta.go
        // `TotalAnnotationSizeLimitB`).
        let size: usize = annotations.iter().map(|(k, v)| k.len() + v.len()).sum();
        let added: usize = crate::spec::defaults::POD_ANNOTATIONS
            .iter()
            .filter(|(k, _)| !annotations.contains_key(*k))
            .map(|(k, v)| k.len() + v.len())
            .sum();
        if size + added > MAX_ANNOTATION_BYTES {
            let with = if size > MAX_ANNOTATION_BYTES {
                String::new()
            } else {
                format!(
                    ", and the pods {} with the {added} bytes trainc adds",
                    size + added
                )
            };
            r.push(
                Diagnostic::error(
                    codes::METADATA_TOO_LARGE,
                    r.key("/annotations"),
                    format!(
                        "annotations total {size} bytes{with}; Kubernetes allows 262144 per object"
                    ),
                )
                .with_help("keep large data in a ConfigMap and mount it as a volume"),
            );
        }
    }
    image_reference(r);
}

/// Why a label key is not the user's to set, if it is not: trainc selects
/// pods by it (`app.kubernetes.io/name`: the Job target's headless Service,
/// the `<name>-ports` Service) or an operator writes it.
pub(super) fn reserved_label(key: &str) -> Option<String> {
    RESERVED_LABELS
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, why)| (*why).to_owned())
        .or_else(|| {
            RESERVED_PREFIXES
                .iter()
                .find(|p| key.starts_with(*p))
                .map(|p| {
                    format!(
                        "the `{}` prefix belongs to the operator",
                        p.trim_end_matches('/')
                    )
                })
        })
}

/// The error for a reserved label key at `pointer`.
pub(super) fn reserved(r: &Rules<'_>, pointer: &str, key: &str, why: &str) -> Diagnostic {
    Diagnostic::error(
        codes::METADATA_RESERVED,
        r.key(pointer),
        format!("label `{key}` is reserved: {why}"),
    )
    .with_help("remove it, or use a key of your own such as `team` or `acme.com/project`")
}

/// Keys and values of a label-like map (`labels`, `nodeSelector`).
pub(super) fn label_map(
    r: &mut Rules<'_>,
    pointer: &str,
    map: &BTreeMap<String, String>,
    what: &str,
) {
    for (key, value) in map {
        let entry = at(pointer, key);
        if let Err(why) = names::qualified_name(key) {
            r.push(invalid_key(r, &entry, what, key, &why));
        }
        if let Err(why) = names::label_value(value) {
            r.push(
                Diagnostic::error(codes::METADATA_INVALID_VALUE, r.value(&entry), format!("{what} value of `{key}` is invalid: {why}"))
                    .with_help("label values have at most 63 letters, digits, `-`, `_` and `.`, starting and ending with a letter or digit"),
            );
        }
    }
}

fn invalid_key(r: &Rules<'_>, pointer: &str, what: &str, key: &str, why: &str) -> Diagnostic {
    Diagnostic::error(codes::METADATA_INVALID_KEY, r.key(pointer), format!("{what} key `{key}` is invalid: {why}"))
        .with_help("keys are `name` or `prefix/name`: the prefix a DNS subdomain, the name up to 63 letters, digits, `-`, `_`, `.`")
}

fn image_reference(r: &mut Rules<'_>) {
    let Some(reference) = &r.spec.image else {
        if r.target() != crate::spec::Target::Trainjob {
            r.push(
                Diagnostic::error(
                    codes::SCHEMA_MISSING_KEY,
                    r.start(),
                    format!(
                        "the spec is missing the required key `image`: target `{}` has no runtime to take one from",
                        r.target().as_str()
                    ),
                )
                .with_help("add `image`: the container image that runs the training code, e.g. `ghcr.io/acme/train:1.4` (only a TrainJob may run its runtime's image)"),
            );
        }
        return;
    };
    reference_at(r, reference, "/image");
}

/// The image reference `reference`, written at `at`: valid, and pinned.
pub(super) fn reference_at(r: &mut Rules<'_>, reference: &str, at: &str) {
    let field = crate::tree::field_path(at);
    match image::parse(reference) {
        Err(why) => {
            let mut d = Diagnostic::error(
                codes::IMAGE_INVALID,
                r.value(at),
                format!("`{field}` is not a valid image reference: {why}"),
            );
            d = d.with_help(
                if reference.contains('{') {
                    "a template takes two braces: `{{ vars.tag }}` (with `tag` in `[vars]`, or `--set tag=...`)".to_owned()
                } else if reference.chars().any(|c| c.is_ascii_uppercase()) && !reference.contains(':') {
                    format!(
                        "image repositories are lowercase: `{}`",
                        reference.to_ascii_lowercase()
                    )
                } else {
                    "write `registry/repository:tag`, e.g. `ghcr.io/acme/train:1.4`".to_owned()
                },
            );
            r.push(d);
        }
        Ok(parsed) if parsed.digest.is_none() && parsed.tag.is_none_or(|t| t == "latest") => {
            let what = if parsed.tag.is_some() {
                "the `latest` tag moves"
            } else {
                "without a tag it means `latest`, which moves"
            };
            r.push(
                Diagnostic::warning(codes::IMAGE_UNPINNED, r.value(at), format!("`{field}` is not pinned: {what}"))
                    .with_help("pin a version tag (`:1.4`) or a digest (`@sha256:...`) so every pod and every rerun gets the same code"),
            );
        }
        Ok(_) => {}
    }
}
