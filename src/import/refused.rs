//! The PyTorchJobs `trainc import` refuses as written: those with a
//! misspelt field, said in `trainc verify`'s words (the field with its
//! did-you-mean), since what import would make of one reads the
//! misspelling as missing.

use super::Object;
use crate::cluster::pytorchjob;
use crate::diagnostic::{Diagnostic, codes};
use crate::source::{SourceId, Sources};

/// The PyTorchJobs with a misspelt field (one their schema, `trainc
/// verify`'s, does not have and names the right one for), by where each
/// starts, with those errors.
pub(super) fn schema_refused(
    sources: &Sources,
    id: SourceId,
    objects: &[Object<'_>],
) -> Vec<(usize, Vec<Diagnostic>)> {
    let jobs: Vec<std::ops::Range<usize>> = objects
        .iter()
        .filter(|o| o.kind() == "PyTorchJob" && o.json["apiVersion"] == pytorchjob::API_VERSION)
        .map(|o| o.node.span.start..o.node.span.end.max(o.node.span.start + 1))
        .collect();
    if jobs.is_empty() {
        return Vec::new();
    }
    let errors = crate::verify::manifests::errors(sources, id);
    // A misspelt field (and the required one it leaves missing); import
    // takes what else the schema is stricter about (numbers for strings).
    // The jobs are in the input's order: each error's job found by place.
    let mut by_job: std::collections::BTreeMap<usize, Vec<Diagnostic>> =
        std::collections::BTreeMap::new();
    for d in errors {
        let misspelt = d.message.contains(": unknown field `")
            || d.message.contains(": missing required field `");
        if d.code != codes::VERIFY_SCHEMA || !d.is_error() || !misspelt {
            continue;
        }
        if let Some(job) = crate::source::range_holding(&jobs, d.primary.span.start) {
            by_job.entry(jobs[job].start).or_default().push(d);
        }
    }
    let mut out: Vec<(usize, Vec<Diagnostic>)> = by_job.into_iter().collect();
    // The field a misspelling leaves missing is said by its did-you-mean.
    for (_, errors) in &mut out {
        let meant: Vec<String> = errors
            .iter()
            .filter_map(|d| d.message.split("(did you mean `").nth(1))
            .filter_map(|rest| rest.split('`').next())
            .map(str::to_owned)
            .collect();
        errors.retain(|d| {
            !meant
                .iter()
                .any(|m| d.message.contains(&format!("missing required field `{m}`")))
        });
    }
    // Refused for a misspelling only (an unknown field verify can name the
    // right one for); other unknown fields (`x-common:` holding a YAML
    // anchor) and a missing field alone are import's to say.
    out.retain(|(_, errors)| {
        errors
            .iter()
            .any(|d| d.message.contains(": unknown field `") && d.message.contains("(did you mean"))
    });
    out
}
