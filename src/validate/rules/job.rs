//! Rules on the job as a whole: its name, what it runs, how many pods and
//! processes.

use super::Rules;
use crate::diagnostic::{Diagnostic, codes};
use crate::spec::{NProcKeyword, NProcPerNode, Replicas};
use crate::syntax::names;

pub(super) fn check(r: &mut Rules<'_>) {
    name(r);
    entrypoint(r);
    replicas(r);
    n_proc_per_node(r);
}

fn name(r: &mut Rules<'_>) {
    let spec = r.spec;
    if let Err(why) = names::dns1035_label(&spec.name) {
        let mut d = Diagnostic::error(
            codes::NAME_INVALID,
            r.value("/name"),
            format!("`name` must be a DNS-1035 label: {why}"),
        )
        .with_label("lowercase letters, digits and `-`, starting with a letter");
        if let Some(better) = names::suggest_dns1035(&spec.name) {
            d = d.with_help(format!("try `{better}`"));
        }
        r.push(d);
    }
    if let Some(namespace) = &spec.namespace
        && let Err(why) = names::dns1123_label(namespace)
    {
        r.push(Diagnostic::error(
            codes::NAMESPACE_INVALID,
            r.value("/namespace"),
            format!("`namespace` must be a DNS-1123 label: {why}"),
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
    ]
    .into_iter()
    .filter_map(|(key, present)| present.then_some(key))
    .collect();
    set.sort_by_key(|key| r.key(&format!("/{key}")).start); // as written
    match set.as_slice() {
        [] => {
            r.push(
                Diagnostic::error(codes::ENTRYPOINT_MISSING, r.start(), "the spec does not say what to run")
                    .with_help("add one of `script = \"/app/train.py\"`, `module = \"acme.train\"` or `command = [\"python\", \"train.py\"]`"),
            );
            if spec.args.is_some() {
                r.push(
                    Diagnostic::error(
                        codes::ARGS_WITHOUT_ENTRYPOINT,
                        r.key("/args"),
                        "`args` needs a `script`, `module` or `command` to pass them to",
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
                    .with_help("keep one of `script` (torchrun SCRIPT), `module` (torchrun -m MODULE) or `command` (run verbatim)"),
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
            r.push(Diagnostic::error(
                codes::ENTRYPOINT_EMPTY,
                r.value(&format!("/{key}")),
                format!("`{key}` is empty"),
            ));
        }
    }
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
                    Ok(n) if i32::try_from(n).is_ok() => Diagnostic::error(codes::REPLICAS_SYNTAX, r.value("/replicas"), format!("`replicas` is the string `\"{text}\"`; a fixed count is a number"))
                        .with_help(format!("drop the quotes: `replicas = {n}`")),
                    _ => Diagnostic::error(codes::REPLICAS_SYNTAX, r.value("/replicas"), format!("`replicas` is invalid: {why}"))
                        .with_help("write a number of pods (`replicas = 2`) or an elastic range (`replicas = \"2:4\"`)"),
                };
                r.push(d);
                true
            }
        },
        _ => false,
    };
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

fn n_proc_per_node(r: &mut Rules<'_>) {
    let gpus = r.gpus();
    let Some(nproc) = &r.spec.n_proc_per_node else {
        return;
    };
    let span = r.value("/nProcPerNode");
    let diagnostic = match nproc {
        NProcPerNode::Keyword(NProcKeyword::Gpu) if gpus == 0 => Some(
            Diagnostic::error(codes::NPROC_GPU_WITHOUT_GPUS, span, "`nProcPerNode = \"gpu\"` needs GPUs, but `resources.gpus` is not set")
                .with_label("one process per GPU")
                .with_help("set `resources.gpus`, or give an explicit number of processes"),
        ),
        NProcPerNode::Count(n) if gpus > 0 && *n > gpus => Some(
            Diagnostic::warning(codes::NPROC_EXCEEDS_GPUS, span, format!("{n} processes per pod share {gpus} GPU{}", plural(gpus)))
                .with_help("use `nProcPerNode = \"gpu\"` for one process per GPU, unless sharing is intended"),
        ),
        NProcPerNode::Count(n) if gpus > 0 && *n < gpus => Some(
            Diagnostic::warning(codes::NPROC_IDLE_GPUS, span, format!("{n} process{} per pod for {gpus} GPUs: {} GPU{} may sit idle", if *n == 1 { "" } else { "es" }, gpus - n, plural(gpus - n)))
                .with_help("use `nProcPerNode = \"gpu\"` for one process per GPU, unless each process drives several GPUs"),
        ),
        NProcPerNode::Keyword(keyword @ (NProcKeyword::Auto | NProcKeyword::Cpu)) if gpus == 0 => {
            let word = if *keyword == NProcKeyword::Auto { "auto" } else { "cpu" };
            Some(
                Diagnostic::warning(codes::NPROC_AUTO_ON_CPU, span, format!("`nProcPerNode = \"{word}\"` on CPU pods starts one process per host CPU, not per requested CPU"))
                    .with_help("on a large node this starts far more processes than the pod's CPU request allows; set an explicit number"),
            )
        }
        _ => None,
    };
    if let Some(d) = diagnostic {
        r.push(d);
    }
}

pub(super) fn plural(n: u32) -> &'static str {
    if n == 1 { "" } else { "s" }
}
