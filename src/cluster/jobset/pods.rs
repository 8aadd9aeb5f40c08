//! The pods JobSet and the Job controller make of a JobSet (defaulted):
//! each replicated job's copies, each copy's Indexed Job, each pod's
//! template as JobSet writes it (claims of its claim templates, subdomain,
//! restart policy, labels and annotations), and the order `dependsOn` puts
//! them in (kubernetes-sigs/jobset v0.8.0–v0.12.0,
//! `pkg/controllers/jobset_controller.go` `constructJob`,
//! `labelAndAnnotateObject`, `volume_claim_policy.go`, `depends_on.go`).

use serde_json::Value as Json;

use super::{
    EXCLUSIVE_TOPOLOGY, LABEL_GLOBAL_REPLICAS, LABEL_JOB_GLOBAL_INDEX, LABEL_JOB_INDEX,
    LABEL_JOBSET_NAME, LABEL_REPLICATED_JOB, LABEL_REPLICATED_JOB_REPLICAS, LABEL_RESTART_ATTEMPT,
    job_name, pod_domain,
};

/// A JobSet's pods, how many there are, and its headless Service.
pub(in crate::cluster) struct Made {
    pub(in crate::cluster) pods: Vec<crate::cluster::Pod>,
    pub(in crate::cluster) total: u64,
    pub(in crate::cluster) services: Vec<crate::cluster::Service>,
}

/// The pods JobSet and the Job controller make of the JobSet `name`
/// (defaulted: [`defaulted`]).
pub(in crate::cluster) fn pods(name: &str, namespace: &str, jobset: &Json) -> Result<Made, String> {
    let spec = &jobset["spec"];
    let replicated: &[Json] = spec["replicatedJobs"].as_array().map_or(&[], Vec::as_slice);
    if replicated.is_empty() {
        return Err(format!("JobSet/{name} has no replicated jobs"));
    }
    let stages = stages(replicated)?;
    let mut total = 0u64;
    let mut global_replicas = 0u64;
    for rjob in replicated {
        let copies = crate::cluster::count(rjob, "/replicas", 1)?;
        let count = crate::cluster::count(&rjob["template"], "/spec/completions", 1)?;
        total = total.saturating_add(copies.saturating_mul(count));
        global_replicas = global_replicas.saturating_add(copies);
    }
    let domain = pod_domain(name, spec);
    let claims = claim_templates(spec);
    let placement = JobSetWide {
        name,
        domain: domain.as_deref(),
        claims: &claims,
        global_replicas,
        exclusive: jobset["metadata"]["annotations"][EXCLUSIVE_TOPOLOGY].as_str(),
    };
    let mut pods = Vec::new();
    let (mut base, mut jobs_before) = (0u64, 0u64);
    for (rjob, stage) in replicated.iter().zip(stages) {
        let rname = rjob["name"].as_str().unwrap_or_default();
        let copies = crate::cluster::count(rjob, "/replicas", 1)?;
        let job_template = &rjob["template"];
        let count = crate::cluster::count(job_template, "/spec/completions", 1)?;
        let retries = crate::cluster::job::retries(&job_template["spec"])?;
        let all = copies.saturating_mul(count);
        for at in crate::cluster::made(base, all, total) {
            let (copy, index) = (at / count, at % count);
            let job_name = job_name(name, rname, copy);
            let template = placement.pod_template(
                job_template,
                rname,
                copies,
                copy,
                jobs_before.saturating_add(copy),
            );
            let mut pod =
                crate::cluster::job::pod(&job_name, namespace, &template, index, stage, retries);
            pod.role = format!("{rname} job {copy}, index {index}");
            pods.push(pod);
        }
        base = base.saturating_add(all);
        jobs_before = jobs_before.saturating_add(copies);
    }
    let services = domain
        .into_iter()
        .map(|domain| crate::cluster::Service {
            name: domain,
            namespace: namespace.to_owned(),
            selector: vec![(LABEL_JOBSET_NAME.to_owned(), name.to_owned())],
            headless: true,
        })
        .collect();
    Ok(Made {
        pods,
        total,
        services,
    })
}

/// The names of the JobSet's claim templates
/// (`volumeClaimPolicies[].templates[].metadata.name`, v0.11 and later).
fn claim_templates(spec: &Json) -> Vec<&str> {
    spec["volumeClaimPolicies"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|p| p["templates"].as_array().into_iter().flatten())
        .filter_map(|t| t["metadata"]["name"].as_str())
        .collect()
}

/// What JobSet writes into every job's pod template alike.
struct JobSetWide<'a> {
    name: &'a str,
    domain: Option<&'a str>,
    claims: &'a [&'a str],
    global_replicas: u64,
    exclusive: Option<&'a str>,
}

impl JobSetWide<'_> {
    /// The pod template of copy `copy` (of `copies`) of replicated job
    /// `rname`, as JobSet makes it: the claims of its claim templates, the
    /// subdomain, the restart policy its webhook defaults, its labels and
    /// annotations.
    fn pod_template(
        &self,
        job_template: &Json,
        rname: &str,
        copies: u64,
        copy: u64,
        global: u64,
    ) -> Json {
        let rjob_annotations = &job_template["metadata"]["annotations"];
        let mut template = job_template["spec"]["template"].clone();
        self.add_claims(&mut template);
        if let Some(domain) = self.domain {
            template["spec"]["subdomain"] = Json::String(domain.to_owned());
        }
        if template["spec"]["restartPolicy"]
            .as_str()
            .is_none_or(str::is_empty)
        {
            template["spec"]["restartPolicy"] = Json::from("OnFailure");
        }
        let entries = [
            (LABEL_JOBSET_NAME, self.name.to_owned()),
            (LABEL_REPLICATED_JOB, rname.to_owned()),
            (LABEL_RESTART_ATTEMPT, "0".to_owned()),
            (LABEL_REPLICATED_JOB_REPLICAS, copies.to_string()),
            (LABEL_GLOBAL_REPLICAS, self.global_replicas.to_string()),
            (LABEL_JOB_INDEX, copy.to_string()),
            (LABEL_JOB_GLOBAL_INDEX, global.to_string()),
        ];
        for field in ["labels", "annotations"] {
            let mut map = crate::cluster::meta_map(&template, field);
            crate::cluster::add_meta(&mut map, &entries);
            // The replicated job's own annotation (on its job template) wins
            // over the JobSet's.
            let exclusive = rjob_annotations[EXCLUSIVE_TOPOLOGY]
                .as_str()
                .or(self.exclusive);
            if field == "annotations"
                && let Some(key) = exclusive
            {
                crate::cluster::add_meta(&mut map, &[(EXCLUSIVE_TOPOLOGY, key.to_owned())]);
            }
            template["metadata"][field] = Json::Object(map);
        }
        template
    }

    /// `volumeClaimPolicies` (`volume_claim_policy.go` `addVolumes`): a pod
    /// that mounts a template's name gets the claim `<template>-<jobset>`
    /// under it.
    fn add_claims(&self, template: &mut Json) {
        let mounted = |volume: &str| {
            ["containers", "initContainers"].iter().any(|list| {
                template["spec"][*list]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|c| {
                        c["volumeMounts"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .any(|m| m["name"] == volume)
                    })
            })
        };
        let added: Vec<Json> = self
            .claims
            .iter()
            .filter(|claim| mounted(claim))
            .map(|claim| {
                serde_json::json!({
                    "name": claim,
                    "persistentVolumeClaim": { "claimName": format!("{claim}-{}", self.name) }
                })
            })
            .collect();
        if added.is_empty() {
            return;
        }
        let volumes = &mut template["spec"]["volumes"];
        if !volumes.is_array() {
            *volumes = Json::Array(Vec::new());
        }
        if let Some(list) = volumes.as_array_mut() {
            list.extend(added);
        }
    }
}

/// Each replicated job's stage: after the jobs it waits to complete, with
/// the jobs it waits to be ready for. Each job is settled once, when every
/// job it depends on is (time linear in the jobs and their `dependsOn`).
fn stages(replicated: &[Json]) -> Result<Vec<u32>, String> {
    let index: std::collections::HashMap<&Json, usize> = replicated
        .iter()
        .enumerate()
        .rev()
        .map(|(i, r)| (&r["name"], i))
        .collect();
    // For each job, the (job, ready) pairs it waits on; for each job, those
    // that wait on it.
    let mut waits: Vec<Vec<(usize, bool)>> = Vec::with_capacity(replicated.len());
    let mut waited_by: Vec<Vec<usize>> = vec![Vec::new(); replicated.len()];
    for (i, rjob) in replicated.iter().enumerate() {
        let mut on = Vec::new();
        for dep in rjob["dependsOn"].as_array().into_iter().flatten() {
            let Some(&j) = index.get(&dep["name"]) else {
                return Err(format!(
                    "the replicated job `{}` depends on `{}`, which the JobSet does not have",
                    rjob["name"].as_str().unwrap_or("?"),
                    dep["name"].as_str().unwrap_or("?")
                ));
            };
            on.push((j, dep["status"] == "Ready"));
            waited_by[j].push(i);
        }
        waits.push(on);
    }
    let mut unsettled: Vec<usize> = waits.iter().map(Vec::len).collect();
    let mut stage: Vec<Option<u32>> = vec![None; replicated.len()];
    let mut ready: Vec<usize> = (0..replicated.len())
        .filter(|&i| unsettled[i] == 0)
        .collect();
    while let Some(i) = ready.pop() {
        let at = waits[i]
            .iter()
            .map(|&(j, ready)| {
                let s = stage[j].expect("settled first");
                if ready { s } else { s.saturating_add(1) }
            })
            .max()
            .unwrap_or(0);
        stage[i] = Some(at);
        for &k in &waited_by[i] {
            unsettled[k] -= 1;
            if unsettled[k] == 0 {
                ready.push(k);
            }
        }
    }
    stage
        .into_iter()
        .map(|s| s.ok_or_else(|| "the replicated jobs depend on each other in a cycle".to_owned()))
        .collect()
}
