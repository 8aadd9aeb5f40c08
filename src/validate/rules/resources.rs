//! Rules on compute resources and on every quantity in the spec.

use super::Rules;
use crate::diagnostic::{Diagnostic, codes};
use crate::spec::{LIMITED, Origin, PodQuantity, Quantity, Resources};
use crate::syntax::{names, quantity};

/// What a quantity measures, which decides what looks like a mistake.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Measure {
    Cpu,
    Bytes,
}

pub(super) fn check(r: &mut Rules<'_>) {
    let spec = r.spec;
    if let Some(resources) = &spec.resources {
        written(r, "/resources", resources);
    }
    if let Some(resources) = spec.master.as_ref().and_then(|m| m.resources.as_ref()) {
        written(r, "/master/resources", resources);
    }
    let workers = LIMITED.map(|key| {
        let q = spec.resources.as_ref().map(|t| t.quantity(key));
        placed(key, q.unwrap_or_default())
    });
    let shm = spec
        .resources
        .as_ref()
        .and_then(|t| t.shm.as_ref())
        .map(|q| (q, "/resources/shm".to_owned()));
    against(r, &workers, shm.as_ref(), false);
    if let Some(master) = spec.master_role()
        && master.resources.is_some()
    {
        let pod = LIMITED.map(|key| placed(key, master.quantity(spec.resources.as_ref(), key)));
        let own = master.resources.as_ref().and_then(|t| t.shm.as_ref());
        let shm = match own {
            Some(q) => Some((q, "/master/resources/shm".to_owned())),
            None => shm,
        };
        against(r, &pod, shm.as_ref(), true);
    }
}

/// A quantity and the pointer of where it was written.
type At<'a> = (&'a Quantity, String);

/// `key`'s request and limit, each with its pointer in the table it came
/// from.
fn placed<'a>(
    key: &'static str,
    q: PodQuantity<'a>,
) -> (&'static str, Option<At<'a>>, Option<At<'a>>) {
    let at = |written: Option<(&'a Quantity, Origin)>, under: &str| {
        written.map(|(q, origin)| (q, format!("{}{under}/{key}", origin.table())))
    };
    (key, at(q.request, ""), at(q.limit, "/limits"))
}

/// Each quantity of a table of resources on its own: its syntax, and the
/// GPU resource's name.
fn written(r: &mut Rules<'_>, table: &str, resources: &Resources) {
    for (key, value, measure) in [
        ("cpu", &resources.cpu, Measure::Cpu),
        ("memory", &resources.memory, Measure::Bytes),
        ("shm", &resources.shm, Measure::Bytes),
        (
            "ephemeralStorage",
            &resources.ephemeral_storage,
            Measure::Bytes,
        ),
    ] {
        if let Some(q) = value {
            checked(r, &format!("{table}/{key}"), q, measure);
        }
    }
    for key in LIMITED {
        let measure = if key == "cpu" {
            Measure::Cpu
        } else {
            Measure::Bytes
        };
        if let Some(q) = resources
            .limits
            .as_ref()
            .and_then(|l| l.limit(key))
            .filter(|q| !q.is_no_limit())
        {
            checked(r, &format!("{table}/limits/{key}"), q, measure);
        }
    }
    if let Some(name) = &resources.gpu_resource
        && let Some(near) = names::misspelt_device(name)
    {
        r.push(
            Diagnostic::warning(
                codes::GPU_RESOURCE_INVALID,
                r.value(&format!("{table}/gpuResource")),
                format!("no device plugin advertises `{name}`: the pods would wait for a node that has it forever"),
            )
            .with_help(format!("did you mean `{near}`?")),
        );
    }
    if let Some(name) = &resources.gpu_resource
        && let Err(why) = names::extended_resource(name)
    {
        r.push(
            Diagnostic::error(
                codes::GPU_RESOURCE_INVALID,
                r.value(&format!("{table}/gpuResource")),
                format!("`gpuResource` `{name}` is not an extended resource name: {why}"),
            )
            .with_help("common names: `nvidia.com/gpu`, `amd.com/gpu`, `nvidia.com/mig-1g.10gb`"),
        );
    }
}

/// The requests and limits of one pod against each other: a limit below
/// its request, a limit of `"none"` with nothing requested, /dev/shm
/// beyond the memory limit. For the Master (`master`), only where
/// `[master.resources]` wrote one of them: the rest is the Workers'.
fn against(
    r: &mut Rules<'_>,
    pod: &[(&str, Option<At<'_>>, Option<At<'_>>); 3],
    shm: Option<&At<'_>>,
    master: bool,
) {
    let report = |pointers: &[&str]| !master || pointers.iter().any(|p| p.starts_with("/master"));
    let value = |q: &Quantity| {
        quantity::parse(&q.text())
            .ok()
            .map(|q| q.value)
            .filter(|v| *v > 0.0)
    };
    let mut memory_limit = None;
    for (key, request, limit) in pod {
        let memory = *key == "memory";
        match (request, limit) {
            // `"none"` with nothing requested: nothing bounds the pod.
            (None, Some((q, at))) if q.is_no_limit() && report(&[at]) => {
                no_limit(r, key, at);
            }
            (Some((rq, rat)), Some((lq, lat))) => {
                if let (Some(request), Some(limit)) = (value(rq), value(lq)) {
                    if memory {
                        memory_limit = Some((limit, lat.clone()));
                    }
                    if limit < request && report(&[rat, lat]) {
                        r.push(
                            Diagnostic::error(
                                codes::LIMIT_BELOW_REQUEST,
                                r.value(lat),
                                format!("the {key} limit `{}` is below the request `{}`", lq.text(), rq.text()),
                            )
                            .with_secondary(r.value(rat), "the request")
                            .with_help(if lat.starts_with("/master") == rat.starts_with("/master") {
                                "Kubernetes rejects a limit below its request; raise the limit or lower the request".to_owned()
                            } else {
                                format!("the Master takes its {key} request from `[resources]` and its limit from `[master.resources.limits]`: Kubernetes rejects a limit below its request; raise that limit, or give the Master its own request (`[master.resources] {key}`)")
                            }),
                        );
                    }
                }
            }
            (Some((q, at)), None) | (None, Some((q, at))) if memory => {
                memory_limit = value(q).map(|v| (v, at.clone()));
            }
            _ => {}
        }
    }
    if let (Some((shm_q, shm_at)), Some((limit, limit_at))) = (shm, memory_limit)
        && value(shm_q).is_some_and(|shm| shm > limit)
        && report(&[shm_at, &limit_at])
    {
        let (pod, fix) = if master {
            (
                "the Master's",
                "; give the Master its own in `[master.resources]`",
            )
        } else {
            ("the pod's", "")
        };
        r.push(
            Diagnostic::warning(codes::SHM_EXCEEDS_MEMORY, r.value(shm_at), format!("`shm` is larger than {pod} memory limit"))
                .with_secondary(r.value(&limit_at), "memory")
                .with_help(format!("/dev/shm is memory-backed and counts against the memory limit; the pod is killed before shm fills up{fix}")),
        );
    }
}

/// `"none"`: the limit is left out, so the pod may use more than it
/// requests (Burstable QoS). Without a request there is nothing to bound
/// either: the container would have neither, and take what the node has.
fn no_limit(r: &mut Rules<'_>, key: &str, pointer: &str) {
    let table = if pointer.starts_with("/master") {
        "master.resources"
    } else {
        "resources"
    };
    r.push(
        Diagnostic::error(
            codes::LIMIT_WITHOUT_REQUEST,
            r.value(pointer),
            format!("`{table}.limits.{key} = \"none\"` leaves out a limit, but the pod requests no {key} either"),
        )
        .with_help(format!(
            "set the request, e.g. `[{table}] {key} = {}`; a limit of `\"none\"` lets the pod use more than it",
            if key == "cpu" { "\"4\"" } else { "\"16Gi\"" }
        )),
    );
}

/// Checks one quantity at `pointer`; returns its value when it is valid.
pub(super) fn checked(
    r: &mut Rules<'_>,
    pointer: &str,
    q: &Quantity,
    measure: Measure,
) -> Option<f64> {
    let value = q.text();
    // A number as the user wrote it (`1e3`, not `1000.0`), where it reads
    // as the same number (a template's text does not).
    let written = r.written(pointer).trim().to_owned();
    let same_number = matches!(
        (written.parse::<f64>(), value.parse::<f64>()),
        (Ok(a), Ok(b)) if a.to_bits() == b.to_bits()
    );
    let text = if same_number { written } else { value.clone() };
    // Spelled out only for a diagnostic.
    let field = || crate::tree::field_path(pointer);
    match quantity::parse(&value) {
        Err(error) => {
            r.push(
                Diagnostic::error(
                    codes::QUANTITY_INVALID,
                    r.value(pointer),
                    format!(
                        "`{}` is not a Kubernetes quantity: {}",
                        field(),
                        error.reason
                    ),
                )
                .with_help(if pointer.starts_with("/resources/limits/") {
                    format!("{}; or `\"none\"` for no limit", error.help)
                } else {
                    error.help
                }),
            );
            None
        }
        Ok(parsed) if parsed.value <= 0.0 => {
            let example = if measure == Measure::Bytes {
                "`4Gi`"
            } else {
                "`1` or `500m`"
            };
            r.push(
                Diagnostic::error(
                    codes::QUANTITY_NOT_POSITIVE,
                    r.value(pointer),
                    format!("`{}` must be more than zero, found `{text}`", field()),
                )
                .with_help(format!(
                    "give an amount such as {example}, or remove the key"
                )),
            );
            None
        }
        Ok(parsed) => {
            if measure == Measure::Bytes && parsed.value < 1024.0 * 1024.0 {
                // The number as written with its unit, or a bare number of
                // bytes (`1e3`, `1000.0`) as a whole number where it is one.
                let number = if parsed.suffix.is_empty() && parsed.value.fract() == 0.0 {
                    format!("{:.0}", parsed.value)
                } else {
                    text.trim_end_matches(|c: char| c.is_ascii_alphabetic())
                        .to_owned()
                };
                let why = if parsed.suffix == "m" {
                    format!("`{text}` means {} bytes (`m` is milli)", parsed.value)
                } else {
                    format!("`{text}` is only {} bytes", parsed.value)
                };
                // No Python process starts in less than a megabyte of
                // memory, and NCCL or a DataLoader cannot share tensors
                // through a /dev/shm that small: the job cannot run.
                r.push(
                    Diagnostic::error(
                        codes::QUANTITY_SUSPICIOUS,
                        r.value(pointer),
                        format!("`{}` is less than a megabyte, in which no training process runs: {why}", field()),
                    )
                    .with_help(format!("did you mean `{number}Mi` or `{number}Gi`?")),
                );
            }
            Some(parsed.value)
        }
    }
}
