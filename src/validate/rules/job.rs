//! Rules on the job as a whole: its name, what it runs, how many pods.

use super::Rules;
use crate::diagnostic::{Diagnostic, codes};
use crate::spec::{RdzvBackend, Replicas};
use crate::syntax::names;

pub(super) fn check(r: &mut Rules<'_>) {
    name(r);
    entrypoint(r);
    module_path(r);
    replicas(r);
}

fn name(r: &mut Rules<'_>) {
    let spec = r.spec;
    if let Err(bad) = names::Syntax::Dns1035.check(&spec.name) {
        r.push(
            super::name_error(
                codes::NAME_INVALID,
                r.value("/name"),
                format!("`name` must be a DNS-1035 label: {}", bad.why),
                &bad,
            )
            .with_label("lowercase letters, digits and `-`, starting with a letter"),
        );
    }
    if let Some(namespace) = &spec.namespace
        && let Err(bad) = names::Syntax::Dns1123Label.check(namespace)
    {
        r.push(super::name_error(
            codes::NAMESPACE_INVALID,
            r.value("/namespace"),
            format!("`namespace` must be a DNS-1123 label: {}", bad.why),
            &bad,
        ));
    }
    if let Some(dir) = &spec.working_dir
        && !dir.starts_with('/')
    {
        r.push(
            Diagnostic::error(
                codes::WORKING_DIR_RELATIVE,
                r.value("/workingDir"),
                format!("`workingDir` must be an absolute path, found `{dir}`"),
            )
            .with_help(format!("write `/{}`", dir.trim_start_matches("./"))),
        );
    }
}

fn entrypoint(r: &mut Rules<'_>) {
    let spec = r.spec;
    let mut set: Vec<&str> = [
        ("script", spec.script.is_some()),
        ("module", spec.module.is_some()),
        ("command", spec.command.is_some()),
        ("code", spec.code.is_some()),
        ("imageEntrypoint", spec.image_entrypoint == Some(true)),
    ]
    .into_iter()
    .filter_map(|(key, present)| present.then_some(key))
    .collect();
    set.sort_by_key(|key| r.key(&format!("/{key}")).start); // as written
    // One written with the wrong type has its own error; it still says
    // what to run.
    let mistyped = ["script", "module", "command", "code"]
        .iter()
        .any(|key| r.tree_has(&format!("/{key}")))
        || (spec.image_entrypoint.is_none() && r.tree_has("/imageEntrypoint"));
    match set.as_slice() {
        [] if mistyped => {}
        [] => {
            // `imageEntrypoint = false` says what does not run: point there.
            let at = if r.tree_has("/imageEntrypoint") {
                r.value("/imageEntrypoint")
            } else {
                r.start()
            };
            r.push(
                Diagnostic::error(codes::ENTRYPOINT_MISSING, at, "the spec does not say what to run")
                    .with_help("add one of `script = \"/app/train.py\"`, `module = \"acme.train\"`, `command = [\"python\", \"train.py\"]`, `[code] files = [\"train.py\"]`, or `imageEntrypoint = true` to run the image's own entrypoint"),
            );
            if spec.args.is_some() {
                r.push(
                    Diagnostic::error(
                        codes::ARGS_WITHOUT_ENTRYPOINT,
                        r.key("/args"),
                        "`args` needs a `script`, `module`, `command`, `[code]` or `imageEntrypoint = true` to pass them to",
                    )
                    .with_help("add the entry point the arguments belong to"),
                );
            }
        }
        [first, rest @ ..] => {
            for other in rest {
                r.push(
                    Diagnostic::error(
                        codes::ENTRYPOINT_CONFLICT,
                        r.key(&format!("/{other}")),
                        format!("`{other}` and `{first}` are both set; a spec runs exactly one"),
                    )
                    .with_secondary(r.key(&format!("/{first}")), format!("`{first}` is set here"))
                    .with_help("keep one of `script` (torchrun SCRIPT), `module` (torchrun -m MODULE), `command` (run verbatim), `[code]` (local files, run under torchrun) or `imageEntrypoint` (the image's own, run verbatim)"),
                );
            }
        }
    }
    let empty = |text: &Option<String>| text.as_ref().is_some_and(|t| t.trim().is_empty());
    for (key, is_empty) in [
        ("script", empty(&spec.script)),
        ("module", empty(&spec.module)),
        (
            "command",
            spec.command
                .as_ref()
                .is_some_and(|c| c.first().is_none_or(|p| p.trim().is_empty())),
        ),
    ] {
        if is_empty {
            let example = match key {
                "script" => "the path of the training script in the image, e.g. `/app/train.py`",
                "module" => "a Python module to run as `python -m`, e.g. `acme.train`",
                _ => "the program and its arguments, e.g. `[\"python\", \"/app/train.py\"]`",
            };
            r.push(
                Diagnostic::error(
                    codes::ENTRYPOINT_EMPTY,
                    r.value(&format!("/{key}")),
                    format!("`{key}` is empty"),
                )
                .with_help(format!("give {example}")),
            );
        }
    }
}

/// `module` as `python -m` takes it: a dotted name (`acme.train`), not the
/// file's path (`acme/train.py`), which torchrun fails on in every pod.
fn module_path(r: &mut Rules<'_>) {
    let Some(module) = r.spec.module.as_deref().map(str::trim) else {
        return;
    };
    let py = std::path::Path::new(module)
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("py"));
    if module.is_empty() || !(py || module.contains(['/', '\\'])) {
        return;
    }
    let stem = if py {
        &module[..module.len() - 3]
    } else {
        module
    };
    let dotted = stem.trim_start_matches("./").replace(['/', '\\'], ".");
    r.push(
        Diagnostic::error(
            codes::ENTRYPOINT_MODULE,
            r.value("/module"),
            format!("`module` is a Python module's dotted name, and `{module}` is a file's path: `python -m {module}` fails in every pod"),
        )
        .with_help(format!(
            "write `module = \"{dotted}\"` to run it as a module, or `script = \"{module}\"` to run the file"
        )),
    );
}

fn replicas(r: &mut Rules<'_>) {
    let spec = r.spec;
    let elastic = match &spec.replicas {
        Some(Replicas::Elastic(text)) => match Replicas::parse_elastic(text) {
            Ok((min, max)) if min >= 1 && min <= max => true,
            Ok((min, max)) => {
                let why = if min < 1 {
                    "the minimum must be at least 1".to_owned()
                } else {
                    format!("the minimum {min} is larger than the maximum {max}")
                };
                r.push(
                    Diagnostic::error(
                        codes::REPLICAS_RANGE,
                        r.value("/replicas"),
                        format!("elastic `replicas = \"{text}\"` is not a range: {why}"),
                    )
                    .with_help("write `\"min:max\"` with 1 <= min <= max, e.g. `\"2:4\"`"),
                );
                true
            }
            Err(why) => {
                let d = match text.trim().parse::<u32>() {
                    Ok(n) if i32::try_from(n).is_ok() => Diagnostic::error(
                        codes::REPLICAS_SYNTAX,
                        r.value("/replicas"),
                        format!("`replicas` is the string `\"{text}\"`; a fixed count is a number"),
                    )
                    .with_help(format!(
                        "drop the quotes: `{}`",
                        r.line("/replicas", "replicas", &n.to_string())
                    )),
                    _ => Diagnostic::error(
                        codes::REPLICAS_SYNTAX,
                        r.value("/replicas"),
                        format!("`replicas` is invalid: {why}"),
                    )
                    .with_help(format!(
                        "write a number of pods (`{}`) or an elastic range (`{}`)",
                        r.line("/replicas", "replicas", "2"),
                        r.line("/replicas", "replicas", "\"2:4\"")
                    )),
                };
                r.push(d);
                true
            }
        },
        _ => false,
    };
    rendezvous(r);
    start_replicas(r);
    if spec.elastic.is_some() && !elastic {
        r.push(
            Diagnostic::error(
                codes::ELASTIC_NOT_ELASTIC,
                r.key("/elastic"),
                "`[elastic]` settings need an elastic `replicas = \"min:max\"`",
            )
            .with_help("set `replicas = \"2:4\"` (for example), or remove `[elastic]`"),
        );
    }
}

/// The Worker pods an elastic job starts with lie within its range: the
/// rendezvous never admits more than the maximum, and a job that starts
/// below the minimum waits for pods that nothing creates.
fn start_replicas(r: &mut Rules<'_>) {
    let Some(start) = r.spec.elastic.as_ref().and_then(|e| e.start_replicas) else {
        return;
    };
    let Some(Replicas::Elastic(text)) = &r.spec.replicas else {
        return; // `[elastic]` without a range is an error of its own
    };
    let Ok((min, max)) = Replicas::parse_elastic(text) else {
        return;
    };
    if start < min || start > max {
        r.push(
            Diagnostic::error(
                codes::REPLICAS_RANGE,
                r.value("/elastic/startReplicas"),
                format!("`elastic.startReplicas` is {start}, outside `replicas = \"{min}:{max}\"`"),
            )
            .with_secondary(r.value("/replicas"), "the range")
            .with_help(format!(
                "start between {min} and {max} pods, or remove it to start {max}"
            )),
        );
    }
}

/// Where an elastic job's pods meet. Without `rdzvEndpoint` the Training
/// Operator points `PET_RDZV_ENDPOINT` at the first worker (kubeflow/trainer
/// v1.7.0–v1.9.4, `pkg/controller.v1/pytorch/elastic.go`), which hosts a c10d
/// rendezvous itself but runs no etcd server.
fn rendezvous(r: &mut Rules<'_>) {
    let Some(elastic) = &r.spec.elastic else {
        return;
    };
    if let Some(endpoint) = &elastic.rdzv_endpoint {
        let host_ok = |host: &str| {
            host.parse::<std::net::Ipv4Addr>().is_ok() || names::dns1123_subdomain(host).is_ok()
        };
        match crate::spec::Elastic::parse_endpoint(endpoint) {
            Some((host, _)) if host_ok(&host) => {}
            _ => r.push(
                Diagnostic::error(
                    codes::ELASTIC_RDZV_ENDPOINT,
                    r.value("/elastic/rdzvEndpoint"),
                    format!("`elastic.rdzvEndpoint` must be `host:port`, found `{endpoint}`"),
                )
                .with_help("write the rendezvous server's Service name (or IP) and port, such as `etcd.infra:2379`"),
            ),
        }
    }
    if let Some(backend @ (RdzvBackend::Etcd | RdzvBackend::EtcdV2)) = elastic.rdzv_backend
        && elastic.rdzv_endpoint.is_none()
    {
        let name = if backend == RdzvBackend::Etcd {
            "etcd"
        } else {
            "etcd-v2"
        };
        r.push(
            Diagnostic::error(
                codes::ELASTIC_RDZV_ENDPOINT,
                r.value("/elastic/rdzvBackend"),
                format!("the `{name}` rendezvous needs an etcd server, but without `elastic.rdzvEndpoint` the Training Operator points torchrun at the first worker, where none runs"),
            )
            .with_help("set `rdzvEndpoint = \"etcd.NAMESPACE:2379\"` (your etcd Service), or use `rdzvBackend = \"c10d\"`, which the first worker hosts"),
        );
    }
}
