//! The JobSet releases trainc knows, and what each one's API lacks or
//! refuses that v0.12.0's, the schema `verify` embeds, has or takes: read
//! in the CRDs of kubernetes-sigs/jobset at v0.8.0, v0.9.1, v0.10.1,
//! v0.11.1 and v0.12.0 (`config/components/crd/bases/jobset.x-k8s.io_
//! jobsets.yaml`) and the webhook at each tag (`pkg/webhooks/
//! jobset_webhook.go`). The pod template follows each release's Kubernetes
//! (v0.8 is built on k8s.io/api v0.32); trainc's own JobSets use nothing past
//! Kubernetes 1.30 there, and `verify` checks it against 1.30's fields.

use serde_json::Value as Json;

use super::webhook::Refusal;

/// A JobSet release: its API as the CRD and the webhook of its tag give it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum Release {
    V0_8,
    V0_9,
    V0_10,
    V0_11,
    #[default]
    V0_12,
}

impl Release {
    /// The tag its CRD and webhook were read at.
    pub fn tag(self) -> &'static str {
        match self {
            Release::V0_8 => "v0.8.0",
            Release::V0_9 => "v0.9.1",
            Release::V0_10 => "v0.10.1",
            Release::V0_11 => "v0.11.1",
            Release::V0_12 => "v0.12.0",
        }
    }

    /// As a person names it: `v0.8`.
    pub fn name(self) -> &'static str {
        match self {
            Release::V0_8 => "v0.8",
            Release::V0_9 => "v0.9",
            Release::V0_10 => "v0.10",
            Release::V0_11 => "v0.11",
            Release::V0_12 => "v0.12",
        }
    }
}

/// Fields of a JobSet's spec, by the release that added them: an object
/// that sets one is refused by an older release's API server under
/// `kubectl apply`'s strict field validation (and silently pruned without
/// it). `[]` stands for every item of a list.
const ADDED: &[(&str, Release)] = &[
    ("/spec/replicatedJobs/[]/groupName", Release::V0_9),
    (
        "/spec/failurePolicy/rules/[]/onJobFailureMessagePatterns",
        Release::V0_10,
    ),
    ("/spec/volumeClaimPolicies", Release::V0_11),
];

/// What `release` refuses in `jobset` that v0.12.0 takes.
pub fn refusals(jobset: &Json, release: Release) -> Vec<Refusal> {
    let mut found = Vec::new();
    let too_new = |since: Release| {
        format!(
            "JobSet {} has no such field (it came with {}): the API server refuses it under `kubectl apply`'s strict field validation, and drops it otherwise",
            release.name(),
            since.name()
        )
    };
    for (path, since) in ADDED.iter().filter(|(_, since)| release < *since) {
        for pointer in present(jobset, path) {
            found.push(Refusal {
                pointer,
                message: too_new(*since),
            });
        }
    }
    let rjobs = jobset["spec"]["replicatedJobs"]
        .as_array()
        .into_iter()
        .flatten();
    for (i, rjob) in rjobs.enumerate() {
        let depends: &[Json] = rjob["dependsOn"].as_array().map_or(&[], Vec::as_slice);
        // v0.8.0's CRD: `maxItems: 1`; v0.9 and later, 5.
        if release == Release::V0_8 && depends.len() > 1 {
            found.push(Refusal {
                pointer: format!("/spec/replicatedJobs/{i}/dependsOn"),
                message: "JobSet v0.8 takes one `dependsOn` item per replicated job (v0.9 and later take 5)".to_owned(),
            });
        }
        // Before v0.12.0 the CRD requires `status`.
        if release < Release::V0_12 {
            for (d, dep) in depends.iter().enumerate() {
                if dep["status"].is_null() {
                    found.push(Refusal {
                        pointer: format!("/spec/replicatedJobs/{i}/dependsOn/{d}"),
                        message: format!(
                            "JobSet {} requires `status` (`Ready` or `Complete`) in every `dependsOn` item",
                            release.name()
                        ),
                    });
                }
            }
        }
    }
    // The values v0.11 and v0.12 added (`InPlaceRestart`, the `RestartJob`
    // actions) are behind feature gates that are off at every release:
    // the webhook's rules say so ([`super::webhook`]).
    found
}

/// The pointers of `path` in `value`, every item of a list at `[]`.
fn present(value: &Json, path: &str) -> Vec<String> {
    let mut at = vec![(value, String::new())];
    for segment in path.split('/').skip(1) {
        let mut next = Vec::new();
        for (node, pointer) in at {
            if segment == "[]" {
                for (i, item) in node.as_array().into_iter().flatten().enumerate() {
                    next.push((item, format!("{pointer}/{i}")));
                }
            } else if let Some(child) = node.get(segment).filter(|c| !c.is_null()) {
                next.push((child, format!("{pointer}/{segment}")));
            }
        }
        at = next;
    }
    at.into_iter().map(|(_, pointer)| pointer).collect()
}
