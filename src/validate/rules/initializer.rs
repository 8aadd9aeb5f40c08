//! `[trainjob.initializer]`: only a TrainJob has initializers; the runtime
//! must have the jobs that run them, and from Trainer v2.3 mount the shared
//! `initializer` volume in them; the URI must be one.

use super::Rules;
use crate::diagnostic::{Diagnostic, codes};
use crate::spec::{Initializer, Target};
use crate::trainer::bind::Bound;
use crate::trainer::runtime::{INITIALIZER_VOLUME, InitializerGap};
use crate::trainer::{Release, catalogue};

/// `[trainjob.initializer]`, when the spec has it.
fn initializers<'s>(r: &Rules<'s>) -> Option<&'s crate::spec::Initializers> {
    r.spec.trainjob.as_ref()?.initializer.as_ref()
}

pub(super) fn check(r: &mut Rules<'_>) {
    let Some(initializers) = initializers(r) else {
        return;
    };
    let present = [
        ("dataset", initializers.dataset.as_ref()),
        ("model", initializers.model.as_ref()),
    ];
    if r.target() != Target::Trainjob {
        for (key, _) in present.iter().filter(|(_, init)| init.is_some()) {
            r.push(
                Diagnostic::error(
                    codes::TARGET_UNSUPPORTED,
                    r.key(&format!("/trainjob/initializer/{key}")),
                    format!("target `{}` has no {key} initializer", r.target().as_str()),
                )
                .with_help("use `target = \"trainjob\"`, or download in an init container: `[[podTemplate.spec.initContainers]]`"),
            );
        }
        return;
    }
    for (key, init) in present {
        if let Some(init) = init {
            storage_uri(r, init, &format!("/trainjob/initializer/{key}"));
        }
    }
}

/// The initializers against the runtime the TrainJob runs on: the jobs and
/// containers that run them, and the schemes the initializer image reads.
pub(super) fn against(r: &mut Rules<'_>, bound: &Bound) {
    let Some(initializers) = initializers(r) else {
        return;
    };
    let Some(runtime) = bound.runtime() else {
        return;
    };
    let release = r.api_level().release();
    for (key, init) in [
        ("dataset", initializers.dataset.as_ref()),
        ("model", initializers.model.as_ref()),
    ] {
        let Some(init) = init else { continue };
        let pointer = format!("/trainjob/initializer/{key}");
        if let Some(gap) = runtime.initializer_gap(release, key) {
            cannot_run(r, bound, gap, release, key, &pointer);
            continue;
        }
        if uri_ok(&init.storage_uri)
            && let Some(image_release) = runtime.kubeflow_initializer(key, release)
        {
            scheme(r, init, image_release, key, &pointer);
        }
    }
}

/// An initializer the runtime cannot run ([`Runtime::initializer_gap`]) is
/// rejected by the Trainer's TrainJob webhook: an error at the initializer,
/// naming the runtimes of that release that can run it.
fn cannot_run(
    r: &mut Rules<'_>,
    bound: &Bound,
    gap: InitializerGap,
    release: Release,
    key: &str,
    pointer: &str,
) {
    let job_name = format!("{key}-initializer");
    let named = bound.describe();
    let message = gap.message(key, &named);
    let with = catalogue::shipped(release)
        .iter()
        .filter(|other| other.initializer_gap(release, key).is_none())
        .map(|other| format!("`{}`", other.name))
        .collect::<Vec<_>>();
    let help = if with.is_empty() {
        format!(
            "use your own TrainingRuntime with a `{job_name}` job (`runtimeKind = \"TrainingRuntime\"`)"
        )
    } else {
        format!(
            "use a runtime that has it ({}), or your own TrainingRuntime with a `{job_name}` job that mounts `{INITIALIZER_VOLUME}`",
            with.join(", ")
        )
    };
    let mut d =
        Diagnostic::error(codes::TRAINJOB_INITIALIZER, r.key(pointer), message).with_help(help);
    if r.spec
        .trainjob
        .as_ref()
        .is_some_and(|t| t.runtime.is_some())
    {
        d = d.with_secondary(r.value("/trainjob/runtime"), "the runtime");
    }
    r.push(d);
}

/// On a runtime Kubeflow ships, the initializer is Kubeflow's image, which
/// reads only some schemes (see [`crate::trainer::initializer_schemes`]).
fn scheme(r: &mut Rules<'_>, init: &Initializer, release: Release, key: &str, pointer: &str) {
    let Some(list) = crate::trainer::scheme_refused(release, key, &init.storage_uri) else {
        return;
    };
    let written = init.storage_uri.split_once("://").map_or("", |(s, _)| s);
    r.push(
        Diagnostic::error(
            codes::TRAINJOB_INITIALIZER,
            r.value(&format!("{pointer}/storageUri")),
            format!(
                "the {key} initializer of Trainer {} downloads from {list} only; `{written}://` fails its Job, and no training runs",
                release.tag()
            ),
        )
        .with_help(if release == Release::V2_0 {
            "use an `hf://` URI; the initializers of Trainer v2.1 and later also read `s3://` (and `cache://` for datasets)"
        } else {
            "use one of those schemes, or a runtime of your own whose initializer reads this one"
        }),
    );
}

/// `storageUri` is `scheme://path` of at most 2048 characters: the CRD's rule
/// from Trainer v2.3.0, `^[A-Za-z][A-Za-z0-9+.-]*://.+$`.
fn uri_ok(uri: &str) -> bool {
    let scheme_ok = uri.split_once("://").is_some_and(|(scheme, rest)| {
        scheme
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '.' | '-'))
            && !rest.is_empty()
    });
    scheme_ok && uri.len() <= 2048
}

fn storage_uri(r: &mut Rules<'_>, init: &Initializer, pointer: &str) {
    let uri = &init.storage_uri;
    if !uri_ok(uri) {
        r.push(
            Diagnostic::error(
                codes::TRAINJOB_INITIALIZER,
                r.value(&format!("{pointer}/storageUri")),
                format!("`{uri}` is not a storage URI `scheme://path` of at most 2048 characters"),
            )
            .with_help("e.g. `hf://meta-llama/Llama-3.2-1B-Instruct` or `s3://bucket/path`"),
        );
    }
    if let Some(secret) = &init.secret
        && let Err(bad) = crate::syntax::names::Syntax::Dns1123Subdomain.check(secret)
    {
        r.push(super::name_error(
            codes::TRAINJOB_INITIALIZER,
            r.value(&format!("{pointer}/secret")),
            format!("`{secret}` is not a valid Secret name: {}", bad.why),
            &bad,
        ));
    }
}
