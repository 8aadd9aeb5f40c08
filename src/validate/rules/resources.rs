//! Rules on compute resources and on every quantity in the spec.

use super::Rules;
use crate::diagnostic::{Diagnostic, codes};
use crate::spec::Quantity;
use crate::syntax::{names, quantity};

/// What a quantity measures, which decides what looks like a mistake.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Measure {
    Cpu,
    Bytes,
}

pub(super) fn check(r: &mut Rules<'_>) {
    let Some(resources) = &r.spec.resources else {
        return;
    };
    let requests = [
        ("cpu", &resources.cpu, Measure::Cpu),
        ("memory", &resources.memory, Measure::Bytes),
        ("shm", &resources.shm, Measure::Bytes),
        (
            "ephemeralStorage",
            &resources.ephemeral_storage,
            Measure::Bytes,
        ),
    ];
    // Each valid request and limit, parsed once: (value, as written).
    let mut values = std::collections::HashMap::new();
    for (key, value, measure) in requests {
        if let Some(q) = value
            && let Some(v) = checked(r, &format!("/resources/{key}"), q, measure)
        {
            values.insert(key, (v, q));
        }
    }
    let mut limit_values = std::collections::HashMap::new();
    // Keys whose limit is left out (`"none"`).
    let mut unlimited = Vec::new();
    if let Some(limits) = &resources.limits {
        for (key, value, measure) in [
            ("cpu", &limits.cpu, Measure::Cpu),
            ("memory", &limits.memory, Measure::Bytes),
            (
                "ephemeralStorage",
                &limits.ephemeral_storage,
                Measure::Bytes,
            ),
        ] {
            let Some(q) = value else { continue };
            let pointer = format!("/resources/limits/{key}");
            if q.is_no_limit() {
                no_limit(r, key, &pointer, values.contains_key(key));
                unlimited.push(key);
                continue;
            }
            let Some(limit) = checked(r, &pointer, q, measure) else {
                continue;
            };
            limit_values.insert(key, limit);
            let Some((request, request_q)) = values.get(key) else {
                continue;
            };
            if limit < *request {
                r.push(
                    Diagnostic::error(
                        codes::LIMIT_BELOW_REQUEST,
                        r.value(&pointer),
                        format!("the {key} limit `{}` is below the request `{}`", q.text(), request_q.text()),
                    )
                    .with_secondary(r.value(&format!("/resources/{key}")), "the request")
                    .with_help("Kubernetes rejects a limit below its request; raise the limit or lower the request"),
                );
            }
        }
    }
    if let (Some((shm, _)), Some((memory, _))) = (values.get("shm"), values.get("memory"))
        && !unlimited.contains(&"memory")
    {
        let limit = limit_values.get("memory").unwrap_or(memory);
        if shm > limit {
            r.push(
                Diagnostic::warning(codes::SHM_EXCEEDS_MEMORY, r.value("/resources/shm"), "`shm` is larger than the pod's memory limit")
                    .with_secondary(r.value("/resources/memory"), "memory")
                    .with_help("/dev/shm is memory-backed and counts against the memory limit; the pod is killed before shm fills up"),
            );
        }
    }
    if let Some(name) = &resources.gpu_resource
        && let Err(why) = names::extended_resource(name)
    {
        r.push(
            Diagnostic::error(
                codes::GPU_RESOURCE_INVALID,
                r.value("/resources/gpuResource"),
                format!("`gpuResource` `{name}` is not an extended resource name: {why}"),
            )
            .with_help("common names: `nvidia.com/gpu`, `amd.com/gpu`, `nvidia.com/mig-1g.10gb`"),
        );
    }
}

/// `"none"`: the limit is left out, so the pod may use more than it
/// requests (Burstable QoS). Without a request there is nothing to bound
/// either: the container would have neither, and take what the node has.
fn no_limit(r: &mut Rules<'_>, key: &str, pointer: &str, requested: bool) {
    if requested {
        return;
    }
    r.push(
        Diagnostic::error(
            codes::LIMIT_WITHOUT_REQUEST,
            r.value(pointer),
            format!("`limits.{key} = \"none\"` leaves out a limit, but `resources.{key}` requests nothing either"),
        )
        .with_help(format!(
            "set the request, e.g. `[resources] {key} = {}`; a limit of `\"none\"` lets the pod use more than it",
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
    let text = q.text();
    // Spelled out only for a diagnostic.
    let field = || crate::validate::field_path(pointer);
    match quantity::parse(&text) {
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
