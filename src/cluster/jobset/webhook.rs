//! What JobSet's validating webhook refuses when a JobSet is created
//! (kubernetes-sigs/jobset v0.8.0–v0.12.0, `pkg/webhooks/jobset_webhook.go`
//! `ValidateCreate`, `validateFailurePolicy`, `validateCoordinator`), read
//! on the JobSet as its mutating webhook defaults it ([`super::defaulted`]).
//! The same rules at every release but where a line says otherwise; the
//! feature-gated ones are refused as a default installation refuses them
//! (`pkg/features/features.go`: `InPlaceRestart` and `RestartJob` alpha,
//! off).

use serde_json::Value as Json;

use super::pod_name;
use crate::syntax::names;

/// One refusal: where in the JobSet, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// A JSON pointer into the JobSet.
    pub pointer: String,
    pub message: String,
}

/// The five characters the API server adds to a pod's name
/// (`generateName`), as the webhook adds `-abcde` to check the longest.
const POD_SUFFIX: &str = "-abcde";

/// The reasons a failure policy rule may match (`validOnJobFailureReasons`:
/// Kubernetes' Job failure reasons).
const JOB_FAILURE_REASONS: [&str; 5] = [
    "BackoffLimitExceeded",
    "DeadlineExceeded",
    "FailedIndexes",
    "MaxFailedIndexesExceeded",
    "PodFailurePolicy",
];

/// Every refusal of the JobSet `jobset` (defaulted).
pub fn refusals(jobset: &Json) -> Vec<Refusal> {
    let mut found = Vec::new();
    let mut refuse = |pointer: String, message: String| found.push(Refusal { pointer, message });
    let name = jobset["metadata"]["name"].as_str().unwrap_or("");
    let spec = &jobset["spec"];
    let replicated: &[Json] = spec["replicatedJobs"].as_array().map_or(&[], Vec::as_slice);
    if replicated
        .first()
        .is_some_and(|r| !r["dependsOn"].is_null())
    {
        refuse(
            "/spec/replicatedJobs/0/dependsOn".to_owned(),
            "the first replicated job cannot have `dependsOn` (JobSet's rule: it has no job before it to wait for)".to_owned(),
        );
    }
    // The mutating webhook answers with the JobSet as its Go types write it
    // out, a pod template with `containers: null` where none was given; the
    // API server then finds the CRD's required `containers` missing (the
    // real v0.12.0 control plane refuses a replicated job with no pod spec).
    for (i, rjob) in replicated.iter().enumerate() {
        if rjob["template"]["spec"]["template"]["spec"]["containers"].is_null() {
            let job = rjob["name"].as_str().unwrap_or("");
            refuse(
                format!("/spec/replicatedJobs/{i}/template/spec/template/spec/containers"),
                format!(
                    "the replicated job `{job}` has no pod spec with `containers`: its pods would run nothing"
                ),
            );
        }
    }
    if let Some(subdomain) = spec["network"]["subdomain"]
        .as_str()
        .filter(|s| !s.is_empty())
        && let Err(why) = names::dns1035_label(subdomain)
    {
        refuse(
            "/spec/network/subdomain".to_owned(),
            format!(
                "the subdomain `{subdomain}` names the headless Service, so it must be a DNS-1035 label: {why}"
            ),
        );
    }
    if let Some(manager) = spec["managedBy"].as_str() {
        if !names::domain_prefixed_path(manager) {
            refuse(
                "/spec/managedBy".to_owned(),
                format!(
                    "`managedBy` `{manager}` is not a domain-prefixed path (`example.com/controller`)"
                ),
            );
        }
        if manager.len() > names::MAX_LABEL {
            refuse(
                "/spec/managedBy".to_owned(),
                format!(
                    "`managedBy` is {} characters long; the limit is {}",
                    manager.len(),
                    names::MAX_LABEL
                ),
            );
        }
    }
    let mut before: Vec<&str> = Vec::new();
    for (i, rjob) in replicated.iter().enumerate() {
        replicated_job(name, i, rjob, &before, &mut refuse);
        before.push(rjob["name"].as_str().unwrap_or(""));
    }
    let known = |target: &Json| before.iter().any(|n| target == *n);
    unknown_targets(
        &spec["successPolicy"],
        "/spec/successPolicy",
        "the success policy",
        &known,
        &mut refuse,
    );
    failure_policy(&spec["failurePolicy"], &known, &mut refuse);
    coordinator(name, spec, &mut refuse);
    claim_policies(name, spec, &mut refuse);
    found
}

/// `volumeClaimPolicies` (v0.11 and later, `validateVolumeClaimPolicies`):
/// each template's name unique, a DNS-1123 subdomain, short enough that
/// the claim `<template>-<jobset>` has at most 63 characters, mounted by
/// some container, and no pod volume of the same name. (Whether a claim of
/// that name already exists, and matches, is the cluster's to say.)
fn claim_policies(jobset: &str, spec: &Json, refuse: &mut impl FnMut(String, String)) {
    let policies = spec["volumeClaimPolicies"].as_array().into_iter().flatten();
    let rjobs: &[Json] = spec["replicatedJobs"].as_array().map_or(&[], Vec::as_slice);
    let mut seen: Vec<&str> = Vec::new();
    for (p, policy) in policies.enumerate() {
        let templates = policy["templates"].as_array().into_iter().flatten();
        for (t, template) in templates.enumerate() {
            let at = format!("/spec/volumeClaimPolicies/{p}/templates/{t}/metadata/name");
            let name = template["metadata"]["name"].as_str().unwrap_or("");
            if seen.contains(&name) {
                refuse(
                    at.clone(),
                    format!(
                        "a second claim template is named `{name}`: their names must be unique"
                    ),
                );
            }
            seen.push(name);
            if let Err(why) = names::dns1123_subdomain(name) {
                refuse(
                    at.clone(),
                    format!("the claim template name `{name}` must be a DNS-1123 subdomain: {why}"),
                );
            }
            let claim = format!("{name}-{jobset}");
            if claim.len() > names::MAX_LABEL {
                refuse(
                    at.clone(),
                    format!(
                        "JobSet names the claim `{claim}`, {} characters; the limit is {}",
                        claim.len(),
                        names::MAX_LABEL
                    ),
                );
            }
            claim_uses(name, &at, rjobs, refuse);
        }
    }
}

/// The replicated jobs' use of the claim template `name`: some container
/// mounts it, and no pod has a volume of its own by that name.
fn claim_uses(name: &str, at: &str, rjobs: &[Json], refuse: &mut impl FnMut(String, String)) {
    let mut mounted = false;
    for (i, rjob) in rjobs.iter().enumerate() {
        let pod = &rjob["template"]["spec"]["template"]["spec"];
        let volumes = pod["volumes"].as_array().into_iter().flatten();
        for (v, volume) in volumes.enumerate() {
            if volume["name"] == name {
                refuse(
                    format!(
                        "/spec/replicatedJobs/{i}/template/spec/template/spec/volumes/{v}/name"
                    ),
                    format!(
                        "the volume `{name}` has the name of a claim template, whose volume JobSet adds"
                    ),
                );
            }
        }
        mounted |= ["initContainers", "containers"].iter().any(|list| {
            pod[*list].as_array().into_iter().flatten().any(|c| {
                c["volumeMounts"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|m| m["name"] == name)
            })
        });
    }
    if !mounted {
        refuse(
            at.to_owned(),
            format!("no container of the replicated jobs mounts the claim template `{name}`"),
        );
    }
}

/// The rules on one replicated job: its names, the names of its jobs and
/// pods, its order.
fn replicated_job(
    jobset: &str,
    i: usize,
    rjob: &Json,
    before: &[&str],
    refuse: &mut impl FnMut(String, String),
) {
    let at = format!("/spec/replicatedJobs/{i}");
    let rname = rjob["name"].as_str().unwrap_or("");
    let job = &rjob["template"]["spec"];
    // As the webhook multiplies them, as int64s: two negative counts too.
    let signed = |value: &Json| value.as_i64().map_or(1, i128::from);
    let (replicas, parallelism) = (signed(&rjob["replicas"]), signed(&job["parallelism"]));
    if replicas * parallelism > i128::from(i32::MAX) {
        refuse(
            format!("{at}/replicas"),
            format!(
                "`replicas` {replicas} × `parallelism` {parallelism} is {}, more than the {} pods a replicated job may run",
                replicas * parallelism,
                i32::MAX
            ),
        );
    }
    // `groupName` (v0.9 and later; the CRD defaults it to `default`).
    if let Some(group) = rjob["groupName"].as_str()
        && let Err(why) = names::dns1035_label(group)
    {
        refuse(
            format!("{at}/groupName"),
            format!("the group name `{group}` must be a DNS-1035 label: {why}"),
        );
    }
    let replicas = rjob["replicas"].as_u64().unwrap_or(1);
    let last_job = super::job_name(jobset, rname, replicas.saturating_sub(1));
    if let Err(why) = names::dns1035_label(&last_job) {
        refuse(
            format!("{at}/name"),
            format!(
                "JobSet names this replicated job's last job `{last_job}`, which must be a DNS-1035 label: {why}"
            ),
        );
    } else if job["completionMode"] == "Indexed"
        && let Some(completions) = job["completions"].as_u64()
    {
        let last_pod = pod_name(
            jobset,
            rname,
            replicas.saturating_sub(1),
            completions.saturating_sub(1),
        ) + POD_SUFFIX;
        if let Err(why) = names::dns1035_label(&last_pod) {
            refuse(
                format!("{at}/name"),
                format!(
                    "the last pod of this replicated job would be named like `{last_pod}` (a random suffix last), which must be a DNS-1035 label: {why}"
                ),
            );
        }
    }
    for (d, dep) in rjob["dependsOn"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let wanted = dep["name"].as_str().unwrap_or("");
        if !before.contains(&wanted) {
            refuse(
                format!("{at}/dependsOn/{d}/name"),
                format!("`{rname}` depends on `{wanted}`, which is not a replicated job before it"),
            );
        }
    }
}

/// The failure policy's rules: names, targets, reasons, and the actions a
/// default installation refuses.
fn failure_policy(
    policy: &Json,
    known: &impl Fn(&Json) -> bool,
    refuse: &mut impl FnMut(String, String),
) {
    if policy["restartStrategy"] == "InPlaceRestart" {
        refuse(
            "/spec/failurePolicy/restartStrategy".to_owned(),
            "`InPlaceRestart` needs JobSet v0.11 or later with its `InPlaceRestart` feature gate on, which is off by default".to_owned(),
        );
    }
    let rules: &[Json] = policy["rules"].as_array().map_or(&[], Vec::as_slice);
    for (i, rule) in rules.iter().enumerate() {
        let at = format!("/spec/failurePolicy/rules/{i}");
        let name = rule["name"].as_str().unwrap_or("");
        if !rule_name(name) {
            refuse(
                format!("{at}/name"),
                format!(
                    "the rule name `{name}` must be 1 to 128 characters, start with a letter, hold only letters, digits and `_,:`, and end with a letter, digit or `_`"
                ),
            );
        }
        if let Some(first) = rules[..i].iter().position(|r| r["name"] == name) {
            refuse(
                format!("{at}/name"),
                format!("rule {first} already has the name `{name}`"),
            );
        }
        unknown_targets(rule, &at, "the rule", known, refuse);
        for (r, reason) in rule["onJobFailureReasons"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            if !JOB_FAILURE_REASONS.iter().any(|known| reason == *known) {
                refuse(
                    format!("{at}/onJobFailureReasons/{r}"),
                    format!(
                        "`{}` is not a reason a Job fails for: {}",
                        reason.as_str().unwrap_or("?"),
                        JOB_FAILURE_REASONS.map(|r| format!("`{r}`")).join(", ")
                    ),
                );
            }
        }
        let action = rule["action"].as_str().unwrap_or("");
        if action.starts_with("RestartJob") && !action.starts_with("RestartJobSet") {
            refuse(
                format!("{at}/action"),
                format!(
                    "`{action}` needs JobSet v0.12 or later with its `RestartJob` feature gate on, which is off by default"
                ),
            );
        }
    }
}

/// The `targetReplicatedJobs` of a policy (at `at`) that name no replicated
/// job.
fn unknown_targets(
    policy: &Json,
    at: &str,
    what: &str,
    known: &impl Fn(&Json) -> bool,
    refuse: &mut impl FnMut(String, String),
) {
    let targets = policy["targetReplicatedJobs"]
        .as_array()
        .into_iter()
        .flatten();
    for (i, target) in targets.enumerate() {
        if !known(target) {
            refuse(
                format!("{at}/targetReplicatedJobs/{i}"),
                format!(
                    "{what} names `{}`, which is not one of the replicated jobs",
                    target.as_str().unwrap_or("?")
                ),
            );
        }
    }
}

/// A rule name: `^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`, 1 to 128 long.
fn rule_name(name: &str) -> bool {
    let ok_inner = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | ',' | ':');
    (1..=128).contains(&name.len())
        && name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name.chars().all(ok_inner)
        && name.ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
}

/// `spec.coordinator`: a pod that exists, and an address that fits the
/// label JobSet writes it into (checked by the webhook from v0.11; before,
/// the jobs' creation fails on the label).
fn coordinator(jobset: &str, spec: &Json, refuse: &mut impl FnMut(String, String)) {
    let coordinator = &spec["coordinator"];
    if !coordinator.is_object() {
        return;
    }
    let rname = coordinator["replicatedJob"].as_str().unwrap_or("");
    let Some(rjob) = spec["replicatedJobs"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["name"] == rname)
    else {
        refuse(
            "/spec/coordinator/replicatedJob".to_owned(),
            format!("the coordinator's replicated job `{rname}` is not one of the replicated jobs"),
        );
        return;
    };
    let job_index = coordinator["jobIndex"].as_i64().unwrap_or(0);
    let pod_index = coordinator["podIndex"].as_i64().unwrap_or(0);
    if job_index < 0 || job_index >= rjob["replicas"].as_i64().unwrap_or(1) {
        refuse(
            "/spec/coordinator/jobIndex".to_owned(),
            format!("`{rname}` has no job {job_index}"),
        );
    }
    let job = &rjob["template"]["spec"];
    let Some(completions) = job["completions"]
        .as_i64()
        .filter(|_| job["completionMode"] == "Indexed")
    else {
        refuse(
            "/spec/coordinator/replicatedJob".to_owned(),
            format!(
                "the coordinator's job must be Indexed with `completions` set, and `{rname}`'s is not"
            ),
        );
        return;
    };
    if pod_index < 0 || pod_index >= completions {
        refuse(
            "/spec/coordinator/podIndex".to_owned(),
            format!("`{rname}`'s jobs have no pod {pod_index}"),
        );
    }
    // `CoordinatorEndpoint`: the subdomain (else the JobSet's name) even
    // where DNS hostnames are off.
    let domain = spec["network"]["subdomain"]
        .as_str()
        .filter(|s| !s.is_empty())
        .unwrap_or(jobset);
    let address = format!(
        "{}.{domain}",
        pod_name(
            jobset,
            rname,
            job_index.unsigned_abs(),
            pod_index.unsigned_abs()
        )
    );
    if let Err(why) = names::label_value(&address) {
        refuse(
            "/spec/coordinator".to_owned(),
            format!(
                "JobSet writes the coordinator's address `{address}` into a label on every pod, and it is no label value: {why}"
            ),
        );
    }
}
