//! A fixed-size PyTorchJob's Master and Workers, or a JobSet's `master` and
//! `worker` jobs, back into one spec: the spec describes the Workers, and `[master]` what the Master's pod sets
//! apart (its image, resources and `/dev/shm`, processes, restart policy).
//! Anything else that differs between the two templates cannot be said, and
//! is reported; the spec then takes the Master's.

use serde_json::{Map, Value as Json, json};

use super::launch::{self, NProc};
use super::{Job, container, volumes};
use crate::spec::defaults;

/// The Master's and the Workers' replicas (objects whose `template` is
/// the pod template: a PyTorchJob's replica specs, a JobSet's job specs),
/// with where each is in the input.
pub(super) struct Pair<'a> {
    pub master: &'a Json,
    pub master_at: String,
    pub worker: &'a Json,
    pub worker_at: String,
    /// The training container's name.
    pub container: &'a str,
    /// Whether each replica has a restart policy of its own beside its
    /// template (a PyTorchJob's); a JobSet's are in its pods' templates,
    /// where the import of the pod reads them.
    pub restart_policies: bool,
}

/// What the Master's replica says apart from the Workers': everything was
/// imported from the Master; the spec's top level now takes the Workers'
/// and `[master]` the Master's. `nproc` is the Master's count; returns the
/// count of the spec's top level, and the Master's own where it differs.
pub(super) fn split(job: &mut Job<'_>, pair: &Pair<'_>, nproc: NProc) -> (NProc, Option<NProc>) {
    let at = &pair.worker_at;
    let trainer = |replica| trainer(replica, pair.container);
    let (Some(master), Some(worker)) = (trainer(pair.master), trainer(pair.worker)) else {
        return (nproc, None);
    };
    if pair.restart_policies {
        restart(job, pair);
    }
    if master["image"] != worker["image"]
        && let (Some(own), Some(image)) = (master["image"].as_str(), worker["image"].as_str())
    {
        job.set("/image", json!(image));
        job.set("/master/image", json!(own));
    }
    let shm = |replica: &Json, container: &Json| {
        volumes::pod_shm(&replica["template"]["spec"], container).map(|(_, size)| size)
    };
    let (master_shm, worker_shm) = (shm(pair.master, master), shm(pair.worker, worker));
    if master["resources"] != worker["resources"] || master_shm != worker_shm {
        let pointer = |replica: &Json, at: &str| {
            format!(
                "{at}/template/spec/containers/{}/resources",
                index(replica, pair.container)
            )
        };
        let places = [
            pointer(pair.worker, &pair.worker_at),
            pointer(pair.master, &pair.master_at),
        ];
        resources(job, &worker["resources"], &places, worker_shm);
    }
    // Only a torchrun line trainc writes for a `script` or `module` has a
    // count per pod; a `command` is one line for every pod.
    let trainc_line = job.get("/script").is_some() || job.get("/module").is_some();
    let worker_nproc = launch::flag(worker.get("command"), worker.get("args"));
    let (top, own) = match worker_nproc {
        Some(count) if trainc_line && count != nproc => (count, Some(nproc)),
        _ => (nproc, None),
    };
    let ranked = node_ranks_apart(master, worker);
    if let Some((command, args)) = &ranked
        && job.get("/command").is_some()
    {
        job.set("/command", json!(command));
        if args.is_empty() {
            job.take("/args");
        } else {
            job.set("/args", json!(args));
        }
        let place = format!(
            "{}/template/spec/containers/{}/command",
            pair.master_at,
            index(pair.master, pair.container)
        );
        job.note(
            &place,
            "the Master's and the Workers' torchrun lines differ only in the node rank they give; the spec's line gives none, and each pod's torchrun reads its own from `PET_NODE_RANK`, which every target sets",
        );
    }
    compare(job, pair, at, trainc_line, ranked.is_some());
    (top, own)
}

/// The training containers' `command` and `args` without torchrun's node
/// rank, when that is all that tells the Master's from the Workers'
/// (`--node_rank=0` on the Master, another or none on the Workers).
fn node_ranks_apart(master: &Json, worker: &Json) -> Option<(Vec<String>, Vec<String>)> {
    let words = |c: &Json, key: &str| -> Vec<String> {
        (c[key].as_array().into_iter().flatten())
            .map(|w| w.as_str().map_or_else(|| w.to_string(), str::to_owned))
            .collect()
    };
    let stripped = |c: &Json| {
        let (command, args) = (words(c, "command"), words(c, "args"));
        let line: Vec<String> = command.iter().chain(&args).cloned().collect();
        let drop = crate::cluster::torchrun::node_rank_words(&line)?;
        let keep = |offset: usize, list: &[String]| -> Vec<String> {
            (list.iter().enumerate())
                .filter(|(i, _)| !drop.contains(&(offset + i)))
                .map(|(_, w)| w.clone())
                .collect()
        };
        Some((keep(0, &command), keep(command.len(), &args)))
    };
    let same = master["command"] == worker["command"] && master["args"] == worker["args"];
    let (m, w) = (stripped(master)?, stripped(worker)?);
    (!same && m == w).then_some(m)
}

/// `[master] nProcPerNode`, unless what the spec already says gives the
/// Master that count: `"gpu"` (or nothing) is one per GPU of the Master.
pub(super) fn set_nproc(job: &mut Job<'_>, own: &NProc) {
    let gpus = |table: &str| job.get(&format!("{table}/gpus")).and_then(Json::as_u64);
    let master_gpus = gpus("/master/resources")
        .or_else(|| gpus("/resources"))
        .unwrap_or(0);
    let per_gpu = match job.get("/nProcPerNode") {
        None => true,
        Some(value) => value == "gpu",
    };
    let default = if per_gpu {
        NProc::Count(u32::try_from(master_gpus.max(1)).unwrap_or(u32::MAX))
    } else {
        match launch::NProc::parse(job.get("/nProcPerNode").unwrap_or(&Json::Null)) {
            Some(n) => n,
            None => return,
        }
    };
    if *own == default {
        return;
    }
    match own {
        NProc::Count(n) if master_gpus > 0 && u64::from(*n) == master_gpus => {
            job.set("/master/nProcPerNode", json!("gpu"));
        }
        NProc::Count(n) => job.set("/master/nProcPerNode", json!(n)),
        NProc::Keyword(word) => job.set("/master/nProcPerNode", json!(word)),
    }
}

/// The training container of a replica.
fn trainer<'a>(replica: &'a Json, name: &str) -> Option<&'a Json> {
    replica["template"]["spec"]["containers"]
        .as_array()?
        .iter()
        .find(|c| c["name"] == name)
}

fn index(replica: &Json, name: &str) -> usize {
    replica["template"]["spec"]["containers"]
        .as_array()
        .and_then(|list| list.iter().position(|c| c["name"] == name))
        .unwrap_or(0)
}

/// The Workers' restart policy is the spec's; the Master's its own.
fn restart(job: &mut Job<'_>, pair: &Pair<'_>) {
    let restart = replica_restart;
    let (own, workers) = (restart(pair.master), restart(pair.worker));
    if own == workers {
        return;
    }
    job.take("/policy/restartPolicy");
    if workers != defaults::RESTART_POLICY {
        job.set("/policy/restartPolicy", json!(workers));
    }
    if job
        .get("/policy")
        .is_some_and(|p| p.as_object().is_some_and(Map::is_empty))
    {
        job.take("/policy");
    }
    job.set("/master/restartPolicy", json!(own));
}

/// `[resources]` from the Workers' container (and `/dev/shm`), and
/// `[master.resources]` with what the Master's, imported before, says
/// otherwise.
/// `places` are the Workers' and the Master's `resources` in the input.
fn resources(job: &mut Job<'_>, workers: &Json, places: &[String; 2], shm: Option<String>) {
    let [pointer, master_at] = places;
    let master = job.take("/resources").unwrap_or(Json::Null);
    if !workers.is_null() {
        container::resources(job, workers, pointer);
    }
    if let Some(shm) = shm {
        job.set("/resources/shm", json!(shm));
    }
    let workers = job.get("/resources").cloned().unwrap_or(Json::Null);
    let own = |table: &Json, key: &str| table.get(key).cloned();
    let limit = |table: &Json, key: &str| table.get("limits").and_then(|l| l.get(key)).cloned();
    for key in ["cpu", "memory", "ephemeralStorage"] {
        let (request, limit_of) = (own(&master, key), limit(&master, key));
        if (&request, &limit_of) == (&own(&workers, key), &limit(&workers, key)) {
            continue;
        }
        let Some(request) = request else {
            job.warn(master_at, format!("the Master requests no {key} while the Workers do; the spec gives the Master the Workers'"), "a `[master.resources]` table can change a request, not leave one out: request it on the Master too");
            continue;
        };
        job.set(&format!("/master/resources/{key}"), request);
        if let Some(limit) = limit_of {
            job.set(&format!("/master/resources/limits/{key}"), limit);
        }
    }
    if own(&master, "gpus") != own(&workers, "gpus") {
        job.set(
            "/master/resources/gpus",
            own(&master, "gpus").unwrap_or(json!(0)),
        );
    }
    let gpu_resource =
        |table: &Json| own(table, "gpuResource").unwrap_or_else(|| json!(defaults::GPU_RESOURCE));
    if master.get("gpus").is_some() && gpu_resource(&master) != gpu_resource(&workers) {
        job.set("/master/resources/gpuResource", gpu_resource(&master));
    }
    if own(&master, "extended") != own(&workers, "extended") {
        job.set(
            "/master/resources/extended",
            own(&master, "extended").unwrap_or(json!({})),
        );
    }
    match (own(&master, "shm"), own(&workers, "shm")) {
        (a, b) if a == b => {}
        (Some(shm), _) => job.set("/master/resources/shm", shm),
        (None, _) => job.warn(
            master_at,
            "the Master has no /dev/shm volume while the Workers have one; the spec gives the Master the Workers'",
            "",
        ),
    }
}

/// Everything else of the two pods must be alike: the spec has one
/// template for both. What `[master]` carries is left out of the
/// comparison.
fn compare(job: &mut Job<'_>, pair: &Pair<'_>, at: &str, trainc_line: bool, ranked: bool) {
    let normal = |replica: &Json| {
        let mut template = replica["template"].clone();
        let shm_volume = trainer(replica, pair.container)
            .and_then(|c| volumes::pod_shm(&template["spec"], c))
            .map(|(name, _)| name.clone());
        // A JobSet's pods' restart policies are imported with the pod.
        if !pair.restart_policies
            && let Some(spec) = template.get_mut("spec").and_then(Json::as_object_mut)
        {
            spec.remove("restartPolicy");
        }
        // Masked where they are, so that what differs is still found at
        // its place in the input.
        if let Some(name) = &shm_volume
            && let Some(list) = template["spec"]["volumes"].as_array_mut()
        {
            for volume in list.iter_mut().filter(|v| v["name"] == *name) {
                *volume = Json::Null;
            }
        }
        let containers = template["spec"]["containers"].as_array_mut();
        if let Some(c) = containers
            .into_iter()
            .flatten()
            .find(|c| c["name"] == pair.container)
            && let Some(fields) = c.as_object_mut()
        {
            fields.remove("image");
            fields.remove("resources");
            // Told apart by their node ranks alone: said above.
            if ranked {
                fields.remove("command");
                fields.remove("args");
            }
            if let Some(name) = &shm_volume
                && let Some(mounts) = fields.get_mut("volumeMounts").and_then(Json::as_array_mut)
            {
                for mount in mounts.iter_mut().filter(|m| m["name"] == *name) {
                    *mount = Json::Null;
                }
            }
            if trainc_line {
                for key in ["command", "args"] {
                    if let Some(words) = fields.get_mut(key) {
                        *words = launch::masked_flag(words);
                    }
                }
            }
        }
        template
    };
    compare_templates(
        job,
        &normal(pair.master),
        &normal(pair.worker),
        &format!("{at}/template"),
    );
}

/// A replica's restart policy, the operator's default where it has none.
pub(super) fn replica_restart(replica: &Json) -> &str {
    replica["restartPolicy"]
        .as_str()
        .unwrap_or(defaults::RESTART_POLICY)
}

/// Where the Worker's pod template says something other than the Master's:
/// the spec has one template for both.
pub(super) fn compare_templates(job: &mut Job<'_>, master: &Json, worker: &Json, pointer: &str) {
    let mut differences = Vec::new();
    differ(master, worker, pointer, &mut differences);
    for at in differences.into_iter().take(10) {
        job.warn(
            &at,
            "the Worker's pod template differs from the Master's here; the spec describes every pod alike but for what `[master]` sets (image, resources, /dev/shm, processes, restart policy), and takes the Master's",
            "if the Workers need it, set it in the spec; it then applies to the Master too",
        );
    }
}

fn differ(a: &Json, b: &Json, pointer: &str, out: &mut Vec<String>) {
    match (a, b) {
        (Json::Object(a), Json::Object(b)) => {
            for (key, value) in b {
                let at = format!("{pointer}/{}", crate::tree::pointer_segment(key));
                match a.get(key) {
                    Some(other) => differ(other, value, &at, out),
                    None => out.push(at),
                }
            }
            if a.keys().any(|k| !b.contains_key(k)) {
                out.push(pointer.to_owned());
            }
        }
        (Json::Array(a), Json::Array(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                differ(x, y, &format!("{pointer}/{i}"), out);
            }
        }
        _ if a != b => out.push(pointer.to_owned()),
        _ => {}
    }
}
