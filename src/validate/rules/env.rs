//! Rules on environment variables: names, what the target reserves, secrets
//! written as literals, and value sources.

use crate::tree::field_path;

use super::injected::{RENDEZVOUS_HELP, pytorchjob_sets};
use super::{Rules, at};
use crate::cluster::trainjob;
use crate::diagnostic::{Diagnostic, codes};
use crate::spec::{EnvSource, EnvValue, Target};
use crate::syntax::names;

pub(super) fn check(r: &mut Rules<'_>) {
    secrets_on_command_lines(r);
    if r.target() == Target::Trainjob {
        unset_references(r);
    }
    if let Some(initializers) = r
        .spec
        .trainjob
        .as_ref()
        .and_then(|t| t.initializer.as_ref())
    {
        for (key, init) in [
            ("dataset", &initializers.dataset),
            ("model", &initializers.model),
        ] {
            let base = format!("/trainjob/initializer/{key}/env");
            for (name, value) in init.iter().flat_map(|i| i.env.iter().flatten()) {
                let pointer = at(&base, name);
                valid_name(r, name, &pointer);
                match value {
                    EnvValue::Literal(literal) => literal_secret(r, name, literal, &pointer),
                    EnvValue::Source(source) => env_source(r, name, source, &pointer),
                }
            }
        }
    }
    let Some(env) = &r.spec.env else { return };
    super::env_refs::lengths(r, env);
    let target = r.target();
    for (name, value) in env {
        let pointer = at("/env", name);
        valid_name(r, name, &pointer);
        reserved(r, target, name, &pointer);
        if target == Target::Pytorchjob {
            overwritten(r, name, &pointer);
        }
        rendezvous(r, name, &pointer);
        if let EnvValue::Literal(literal) = value {
            super::env_refs::check(r, env, name, literal, &pointer);
        }
        match value {
            EnvValue::Literal(literal) => literal_secret(r, name, literal, &pointer),
            EnvValue::Source(source) => env_source(r, name, source, &pointer),
        }
    }
}

/// A variable the target sets itself and does not let a spec set: the
/// Trainer torch runtime's on a TrainJob, the topology on a Job (trainc's and
/// the Job controller's). A PyTorchJob's are overwritten instead
/// ([`overwritten`]).
fn reserved(r: &mut Rules<'_>, target: Target, name: &str, pointer: &str) {
    let (names, message, help): (&[&str], String, &str) = match target {
        Target::Trainjob => (
            trainjob::RESERVED_ENV,
            format!("`{name}` is set by the Trainer torch runtime; a TrainJob may not set it"),
            "remove it: the runtime derives it from `replicas` and `nProcPerNode`",
        ),
        Target::Job | Target::Jobset => (
            crate::cluster::job::RESERVED_ENV,
            format!(
                "`{name}` is part of the topology trainc and the Job controller give each pod on target `{}`; a spec may not set it",
                target.as_str()
            ),
            "remove it: trainc derives it from `name`, `replicas`, `nProcPerNode` and the pod's completion index",
        ),
        Target::Pytorchjob => return,
    };
    let jobset = target == Target::Jobset && crate::cluster::jobset::RESERVED_ENV.contains(&name);
    if names.contains(&name) || jobset {
        r.push(Diagnostic::error(codes::ENV_RESERVED, r.key(pointer), message).with_help(help));
    }
}

fn valid_name(r: &mut Rules<'_>, name: &str, pointer: &str) {
    if names::env_name(name).is_ok() && name.contains(['-', '.']) {
        let portable = name.replace(['-', '.'], "_");
        r.push(
            Diagnostic::warning(
                codes::ENV_NOT_PORTABLE,
                r.key(pointer),
                format!("`{name}` is set in the container, but a shell cannot read it (`${name}` is no variable name with `-` or `.` in it), and some shells drop it from the environment of what they start"),
            )
            .with_help(format!("name it `{portable}`; only a program that reads its environment itself (Python's `os.environ`) sees `{name}`")),
        );
    }
    if let Err(why) = names::env_name(name) {
        r.push(
            Diagnostic::error(
                codes::ENV_INVALID_NAME,
                r.key(pointer),
                format!("`{name}` is not a valid environment variable name: {why}"),
            )
            .with_help("use letters, digits and `_`, e.g. `NCCL_DEBUG`"),
        );
    }
}

/// A variable the Training Operator sets in this job's situation.
fn overwritten(r: &mut Rules<'_>, name: &str, pointer: &str) {
    let Some((situation, help)) = pytorchjob_sets(r, name) else {
        return;
    };
    r.push(
        Diagnostic::warning(
            codes::ENV_OVERWRITTEN,
            r.key(pointer),
            format!(
                "the Training Operator sets `{name}` on {situation}; this value is overwritten"
            ),
        )
        .with_help(help),
    );
}

/// torchrun settings that replace the rendezvous the operator or the Trainer
/// runtime sets up, without being overwritten: `PET_STANDALONE` gives each pod
/// a rendezvous of its own, so with several nodes each waits for peers that
/// never come; `PET_RDZV_BACKEND` and `PET_RDZV_ENDPOINT` move a job off the
/// static rendezvous at rank 0 (`PET_MASTER_ADDR`) that a fixed-size job uses.
fn rendezvous(r: &mut Rules<'_>, name: &str, pointer: &str) {
    let elastic = r.is_elastic();
    let nodes = r.max_replicas();
    let (why, help) = match name {
        "PET_STANDALONE" if nodes > 1 || elastic => (
            format!(
                "`PET_STANDALONE` makes torchrun on each pod run a rendezvous of its own: with up to {nodes} pods, each waits for peers that never join"
            ),
            RENDEZVOUS_HELP,
        ),
        "PET_RDZV_BACKEND" | "PET_RDZV_ENDPOINT" if !elastic => (
            format!(
                "`{name}` moves torchrun off the static rendezvous at rank 0 (`PET_MASTER_ADDR`) that the {} sets up for a fixed-size job",
                match r.target() {
                    Target::Pytorchjob => "Training Operator",
                    Target::Trainjob => "Trainer runtime",
                    Target::Job | Target::Jobset => "torchrun command trainc writes",
                }
            ),
            "remove it; for a c10d rendezvous that pods can join and leave, use an elastic `replicas = \"min:max\"` on a PyTorchJob",
        ),
        _ => return,
    };
    r.push(Diagnostic::warning(codes::ENV_RENDEZVOUS, r.key(pointer), why).with_help(help));
}

fn literal_secret(r: &mut Rules<'_>, name: &str, literal: &str, pointer: &str) {
    if crate::syntax::names::looks_secret(name) && !literal.is_empty() {
        let secret = name.to_ascii_lowercase().replace('_', "-");
        r.push(
            Diagnostic::warning(codes::ENV_LITERAL_SECRET, r.value(pointer), format!("`{name}` looks like a secret but is written as a literal value"))
                .with_label("anyone who can read the job can read this")
                .with_help(format!("store it in a Secret and write `{name} = {{ secret = \"{secret}\", key = \"value\" }}`")),
        );
    }
}

fn env_source(r: &mut Rules<'_>, name: &str, source: &EnvSource, pointer: &str) {
    let kinds: Vec<&str> = [
        ("secret", source.secret.is_some()),
        ("configMap", source.config_map.is_some()),
        ("field", source.field.is_some()),
    ]
    .into_iter()
    .filter_map(|(k, set)| set.then_some(k))
    .collect();
    let error =
        |r: &Rules<'_>, span, message: String| source_error(r, name, pointer, span, message);
    match kinds.as_slice() {
        [] => {
            let d = error(
                r,
                r.value(pointer),
                format!(
                    "`{}` has no source: it needs `secret`, `configMap` or `field`",
                    field_path(pointer)
                ),
            );
            r.push(d);
        }
        [_] => {}
        [first, second, ..] => {
            let d = error(
                r,
                r.key(&at(pointer, second)),
                format!(
                    "`{}` has both `{first}` and `{second}`; it takes one source",
                    field_path(pointer)
                ),
            );
            r.push(d);
        }
    }
    reference(r, name, source, pointer);
    field(r, source, pointer);
}

/// An `ENV_SOURCE` error with the forms a source may take as help.
fn source_error(
    r: &Rules<'_>,
    name: &str,
    pointer: &str,
    span: crate::source::Span,
    message: String,
) -> Diagnostic {
    Diagnostic::error(codes::ENV_SOURCE, span, message)
        .with_help(format!("write `{name} = {{ secret = \"s\", key = \"k\" }}`, `{{ configMap = \"c\", key = \"k\" }}` or `{{ field = \"metadata.name\" }}`"))
        .with_secondary(r.key(pointer), "this variable")
}

/// A Secret or ConfigMap source: a valid object name and a key.
fn reference(r: &mut Rules<'_>, name: &str, source: &EnvSource, pointer: &str) {
    let reference = source
        .secret
        .as_ref()
        .map(|s| ("secret", s))
        .or(source.config_map.as_ref().map(|c| ("configMap", c)));
    if let Some((kind, object)) = reference {
        if source.key.is_none() {
            let d = source_error(
                r,
                name,
                pointer,
                r.value(pointer),
                format!(
                    "`{}` reads a {kind} but names no `key`",
                    field_path(pointer)
                ),
            );
            r.push(d);
        }
        if let Err(bad) = names::Syntax::Dns1123Subdomain.check(object) {
            r.push(super::name_error(
                codes::ENV_SOURCE,
                r.value(&at(pointer, kind)),
                format!("`{object}` is not a valid {kind} name: {}", bad.why),
                &bad,
            ));
        }
    }
    if let Some(key) = &source.key {
        let valid = !key.is_empty()
            && key.len() <= 253
            && key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
        if !valid {
            r.push(Diagnostic::error(
                codes::ENV_SOURCE,
                r.value(&at(pointer, "key")),
                format!("`{key}` is not a valid key: use letters, digits, `-`, `_` and `.`"),
            ));
        }
    }
}

/// A `field` source: a pod field a variable can read, and nothing else.
fn field(r: &mut Rules<'_>, source: &EnvSource, pointer: &str) {
    if let Some(field) = &source.field {
        if source.key.is_some() || source.optional.is_some() {
            let which = if source.key.is_some() {
                "key"
            } else {
                "optional"
            };
            r.push(
                Diagnostic::error(
                    codes::ENV_SOURCE,
                    r.key(&at(pointer, which)),
                    format!("`{which}` does not apply to a `field` source"),
                )
                .with_help(format!("remove `{which}`")),
            );
        }
        if !crate::syntax::pod::env_field_path(field) {
            let mut d = Diagnostic::error(
                codes::ENV_SOURCE,
                r.value(&at(pointer, "field")),
                format!("`{field}` is not a pod field a variable can read"),
            );
            d = match crate::diagnostic::suggest(
                field,
                crate::syntax::pod::ENV_FIELD_PATHS.iter().copied(),
            ) {
                Some(best) => d.with_help(format!("did you mean `{best}`?")),
                None => d.with_help(format!(
                    "readable fields: {}, `metadata.labels['KEY']`, `metadata.annotations['KEY']`",
                    crate::syntax::pod::ENV_FIELD_PATHS
                        .iter()
                        .map(|f| format!("`{f}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            };
            r.push(d);
        }
    }
}

/// A Secret's value expanded into a command line (`$(HF_TOKEN)` in `args`):
/// of the training container, its variables from `[env]`; of each container
/// of `[podTemplate]`, from its own `env`.
fn secrets_on_command_lines(r: &mut Rules<'_>) {
    let env: Vec<serde_json::Value> = r
        .spec
        .env
        .iter()
        .flatten()
        .map(|(name, value)| match value {
            EnvValue::Source(EnvSource {
                secret: Some(secret),
                key,
                ..
            }) => serde_json::json!({
                "name": name,
                "valueFrom": { "secretKeyRef": { "name": secret, "key": key } },
            }),
            _ => serde_json::json!({ "name": name }),
        })
        .collect();
    let env_from: Vec<serde_json::Value> = r
        .spec
        .env_from
        .iter()
        .flatten()
        .map(|source| {
            let mut reference = match (&source.secret, &source.config_map) {
                (Some(secret), _) => serde_json::json!({ "secretRef": { "name": secret } }),
                (None, Some(config_map)) => {
                    serde_json::json!({ "configMapRef": { "name": config_map } })
                }
                (None, None) => serde_json::json!({}),
            };
            if let Some(prefix) = &source.prefix {
                reference["prefix"] = serde_json::Value::from(prefix.clone());
            }
            reference
        })
        .collect();
    let training = serde_json::json!({
        "command": r.spec.command,
        "args": r.spec.args,
        "env": env,
        "envFrom": env_from,
    });
    // What the target sets itself (the rank, the rendezvous) comes from no
    // Secret, whatever `envFrom` holds.
    let mut found: Vec<(String, crate::cluster::kubelet::SecretOnCommandLine)> =
        crate::cluster::kubelet::secrets_on_command_line(&training)
            .into_iter()
            .filter(|f| !f.every_key || !set_by_target(r, &f.variable))
            .map(|f| (format!("/{}/{}", f.field, f.index), f))
            .collect();
    let containers = r
        .spec
        .pod_template
        .as_ref()
        .and_then(|t| t.spec.as_ref())
        .into_iter()
        .flat_map(|spec| {
            ["initContainers", "containers"]
                .into_iter()
                .flat_map(move |list| {
                    spec.get(list)
                        .and_then(serde_json::Value::as_array)
                        .into_iter()
                        .flatten()
                        .enumerate()
                        .map(move |(i, c)| (format!("/podTemplate/spec/{list}/{i}"), c))
                })
        });
    for (at, container) in containers {
        found.extend(
            crate::cluster::kubelet::secrets_on_command_line(container)
                .into_iter()
                .map(|f| (format!("{at}/{}/{}", f.field, f.index), f)),
        );
    }
    for (pointer, f) in found {
        r.push(
            Diagnostic::warning(
                codes::ENV_SECRET_ON_COMMAND_LINE,
                r.value(&pointer),
                format!(
                    "`$({})` puts {} into the process's command line, which every user of the node can read (`ps`, `/proc/PID/cmdline`); so can every user of this machine under `trainc run`",
                    f.variable,
                    f.source()
                ),
            )
            .with_help(f.help()),
        );
    }
}

/// What Trainer sets in place of a variable the Training Operator set.
const TRAINER_NAMES: [(&str, &str); 4] = [
    ("RANK", "PET_NODE_RANK"),
    ("NODE_RANK", "PET_NODE_RANK"),
    ("MASTER_ADDR", "PET_MASTER_ADDR"),
    ("MASTER_PORT", "PET_MASTER_PORT"),
];

/// A TrainJob's command line that reads a variable nothing sets in its
/// training container: not `[env]`, not Trainer (its `PET_*`,
/// kubeflow/trainer v2.0.0–v2.3.0 `plugins/torch` `EnforceMLPolicy`), not
/// the Job controller (`JOB_COMPLETION_INDEX`). The kubelet leaves
/// `$(RANK)` as written; a `sh -c` script's shell expands `$RANK` to an
/// empty string. A spec with `envFrom` may set anything, and is left be.
fn unset_references(r: &mut Rules<'_>) {
    if r.spec.env_from.as_ref().is_some_and(|e| !e.is_empty()) {
        return;
    }
    let set = |name: &str| {
        r.spec
            .env
            .as_ref()
            .is_some_and(|env| env.contains_key(name))
            || trainjob::RESERVED_ENV.contains(&name)
            || name == crate::cluster::job::COMPLETION_INDEX_ENV
    };
    let reads = crate::cluster::shell::command_line_reads(
        r.spec.command.as_deref().unwrap_or_default(),
        r.spec.args.as_deref().unwrap_or_default(),
    );
    // Of a script, only the variables a training job's launcher reads: a
    // script's own (`$HOME`, its loop variables) are its business.
    let distributed = |name: &str| {
        TRAINER_NAMES.iter().any(|(n, _)| *n == name)
            || ["WORLD_SIZE", "LOCAL_RANK", "GROUP_RANK"].contains(&name)
    };
    let unset: Vec<(String, String, bool)> = reads
        .into_iter()
        .filter(|read| !set(&read.name) && (!read.shell || distributed(&read.name)))
        .map(|read| {
            (
                read.name,
                format!("/{}/{}", read.field, read.index),
                read.shell,
            )
        })
        .collect();
    for (name, pointer, shell) in unset {
        let instead = TRAINER_NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, t)| *t);
        let (written, becomes) = if shell {
            (
                format!("`${name}`"),
                "the shell expands it to an empty string",
            )
        } else {
            (format!("`$({name})`"), "the kubelet leaves it as written")
        };
        let help = match instead {
            Some(trainer) => format!(
                "read `{trainer}` instead, which Trainer sets for torchrun (or torchrun reads it itself: drop the flag), or set `{name}` in `[env]`"
            ),
            None if name == "WORLD_SIZE" => "Trainer sets no `WORLD_SIZE` in the pod: torchrun sets it for each process it starts; drop the flag, or set `WORLD_SIZE` in `[env]`".to_owned(),
            None => format!("set `{name}` in `[env]`"),
        };
        r.push(
            Diagnostic::warning(
                codes::ENV_UNSET_REFERENCE,
                r.value(&pointer),
                format!(
                    "{written} reads `{name}`, which nothing sets in a TrainJob's training container: {becomes}"
                ),
            )
            .with_help(help),
        );
    }
}

/// Whether the target (trainc, an operator, a controller) sets `name` in
/// the training container on some target: the topology, the rendezvous.
fn set_by_target(r: &Rules<'_>, name: &str) -> bool {
    name.starts_with("PET_")
        || name == crate::cluster::job::COMPLETION_INDEX_ENV
        || crate::cluster::job::RESERVED_ENV.contains(&name)
        || crate::cluster::jobset::RESERVED_ENV.contains(&name)
        || trainjob::RESERVED_ENV.contains(&name)
        || pytorchjob_sets(r, name).is_some()
}
