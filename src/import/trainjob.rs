//! A `trainer.kubeflow.org/v1alpha1 TrainJob` back into a spec, at the
//! Trainer API its pod patch is written for: `runtimePatches` (v2.2 and
//! later), `podTemplateOverrides` (v2.1) or `podSpecOverrides` (v2.0)
//! (kubeflow/trainer v2.0.0, v2.1.0, v2.3.0,
//! `pkg/apis/trainer/v1alpha1/trainjob_types.go`).
//!
//! A field left out means the runtime's value: the torch-distributed
//! runtime has one node and `auto` processes per node (v2.1.0
//! `manifests/base/runtimes/torch_distributed.yaml`; from v2.2.0 the field is
//! an integer that "defaults to `auto`").

use serde_json::{Map, Value as Json, json};

use super::launch::{self, NProc};
use super::{Job, Others, Pod, pod};
use crate::cluster::trainjob::{
    LABEL_COMPLETION_INDEX, LABEL_JOB_INDEX, LABEL_JOBSET_NAME, LABEL_REPLICATED_JOB, NODE,
};
use crate::render::trainingruntime::BASE_ANNOTATION;
use crate::spec::ApiLevel;
use crate::spec::defaults;
use crate::trainer::runtime::Runtime;
use crate::trainer::torch::Procs;

pub(super) const API_VERSION: &str = crate::cluster::trainjob::API_VERSION;

const SPEC_FIELDS: &[&str] = &[
    "runtimeRef",
    "initializer",
    "trainer",
    "labels",
    "annotations",
    "suspend",
    "activeDeadlineSeconds",
    "runtimePatches",
    "podTemplateOverrides",
    "podSpecOverrides",
];

pub(super) fn import<'a>(
    job: &mut Job<'a>,
    object: &Json,
    others: &mut Others<'_, 'a>,
    requested: Option<ApiLevel>,
) {
    let spec = &object["spec"];
    job.unknown_keys(
        spec,
        "/spec",
        SPEC_FIELDS,
        "not a field of a TrainJob the spec carries",
    );
    job.set("/target", json!("trainjob"));
    let trainer = &spec["trainer"];
    let level = level(job, spec, requested);
    if level != crate::spec::defaults::TRAINJOB_API_LEVEL {
        job.set("/trainjob/apiLevel", json!(level.as_str()));
    }
    let written = written_runtime(job, &spec["runtimeRef"], others);
    if written.is_none() {
        runtime(job, &spec["runtimeRef"]);
    }
    initializers(job, &spec["initializer"]);
    if spec["suspend"] == true {
        job.set("/policy/suspend", json!(true));
    }
    if let Some(seconds) = spec.get("activeDeadlineSeconds").and_then(Json::as_u64) {
        job.set("/policy/activeDeadline", super::duration(seconds));
    }
    let nodes = trainer.get("numNodes").and_then(Json::as_u64).unwrap_or(1);
    if nodes != 1 {
        job.set("/replicas", json!(nodes));
    }
    // The pod: in the runtime trainc wrote, else in the TrainJob's patch.
    let (patch, patch_pointer) = match &written {
        Some(w) => (w.template.clone(), w.pointer.clone()),
        None => pod_patch(job, spec, level),
    };
    let pod_metadata = if level == ApiLevel::V2_0 && written.is_none() {
        let labels = json!({"labels": spec["labels"], "annotations": spec["annotations"]});
        Some((labels, "/spec".to_owned()))
    } else {
        for key in ["labels", "annotations"] {
            if spec.get(key).is_some() {
                job.warn(&format!("/spec/{key}"), format!("`spec.{key}` is not imported: trainc gives the pods the spec's {key} through the pod patch"), "");
            }
        }
        patch
            .get("metadata")
            .map(|m| (m.clone(), format!("{patch_pointer}/metadata")))
    };
    super::metadata::import(
        job,
        &object["metadata"],
        pod_metadata.as_ref().map(|(m, p)| (m, p.as_str())),
    );
    trainer_fields(job, trainer, level, shipped(&spec["runtimeRef"], level));
    let own = if level == ApiLevel::V2_0 && written.is_none() {
        Map::from_iter([(LABEL_JOBSET_NAME.to_owned(), json!(job.name.clone()))])
    } else {
        pod::own_labels(&job.name)
    };
    let empty = json!({});
    let pod = Pod {
        spec: patch.get("spec").unwrap_or(&empty),
        base: format!("{patch_pointer}/spec"),
        trainer: NODE,
        max_nodes: nodes,
        own_labels: vec![
            own.clone(),
            Map::from_iter([(LABEL_JOBSET_NAME.to_owned(), json!(job.name.clone()))]),
        ],
    };
    let own_node = written.as_ref().map(|w| job.locate_in(w.node));
    if let Some((container, pointer)) = pod::import(job, others, &pod) {
        if written.is_some() {
            super::container::rest(job, container, &pointer);
        } else {
            node_container(job, container, &pointer);
        }
    }
    if let Some(node) = own_node {
        job.locate_in(node);
    }
    let mut rank0 = patch["metadata"]["labels"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    rank0.extend(own);
    for (key, value) in [
        (LABEL_JOBSET_NAME, job.name.clone()),
        (LABEL_REPLICATED_JOB, NODE.to_owned()),
        (LABEL_JOB_INDEX, "0".to_owned()),
        (LABEL_COMPLETION_INDEX, "0".to_owned()),
    ] {
        rank0.insert(key.to_owned(), json!(value));
    }
    super::ports::import(job, others, &rank0, &[]);
}

/// A TrainingRuntime trainc wrote for the TrainJob (`[trainjob]
/// writeRuntime`): its `node` pod template, where it is, and the runtime's
/// node to locate problems in.
struct Written<'a> {
    template: Json,
    pointer: String,
    node: &'a crate::tree::Node,
}

/// The runtime the TrainJob names, when the input holds it and trainc wrote
/// it (it names its base, [`BASE_ANNOTATION`]): the spec says
/// `writeRuntime` and the base again. The trainer's fields in its `node`
/// container are the base's (the TrainJob's `trainer` sets its own).
fn written_runtime<'a>(
    job: &mut Job<'a>,
    reference: &Json,
    others: &mut Others<'_, 'a>,
) -> Option<Written<'a>> {
    let kind = reference["kind"]
        .as_str()
        .unwrap_or("ClusterTrainingRuntime");
    let name = reference["name"].as_str()?;
    let namespace = job.namespace.clone();
    let (runtime, node) = others.training_runtime(kind, name, namespace.as_deref())?;
    let Some(base) = runtime["metadata"]["annotations"][BASE_ANNOTATION].as_str() else {
        // The user's own (or the cluster's): it goes to a runtimes file
        // beside the spec.
        job.runtimes.push(runtime);
        return None;
    };
    let (kind, base_name) = base.split_once('/')?;
    job.set("/trainjob/writeRuntime", json!(true));
    if base_name != defaults::TRAINJOB_RUNTIME {
        job.set("/trainjob/runtime", json!(base_name));
    }
    if kind != "ClusterTrainingRuntime" {
        job.set("/trainjob/runtimeKind", json!(kind));
    }
    let jobs = runtime
        .pointer("/spec/template/spec/replicatedJobs")?
        .as_array()?;
    let i = jobs.iter().position(|j| j["name"] == NODE)?;
    let mut template = jobs[i].pointer("/template/spec/template")?.clone();
    // Gang scheduling trainc wrote there: the PodGroup plugin, Volcano's queue.
    if runtime
        .pointer("/spec/podGroupPolicy")
        .is_some_and(Json::is_object)
    {
        job.set("/scheduling/gang", json!(true));
    }
    if let Some(queue) = runtime
        .pointer("/spec/template/metadata/annotations")
        .and_then(|a| a.get(crate::trainer::VOLCANO_QUEUE))
    {
        job.set("/scheduling/volcanoQueue", queue.clone());
    }
    // The policy trainc wrote there (`render::trainingruntime`).
    if let Some(restart) = template["spec"]
        .as_object_mut()
        .and_then(|pod| pod.remove("restartPolicy"))
    {
        job.set("/policy/restartPolicy", restart);
    }
    if let Some(limit) = jobs[i].pointer("/template/spec/backoffLimit") {
        job.set("/policy/backoffLimit", limit.clone());
    }
    if let Some(seconds) = runtime
        .pointer("/spec/template/spec/ttlSecondsAfterFinished")
        .and_then(Json::as_u64)
    {
        job.set("/policy/ttlAfterFinished", super::duration(seconds));
    }
    if let Some(containers) = template
        .pointer_mut("/spec/containers")
        .and_then(Json::as_array_mut)
    {
        for container in containers.iter_mut().filter(|c| c["name"] == NODE) {
            if let Some(fields) = container.as_object_mut() {
                for field in ["image", "command", "args"] {
                    fields.remove(field);
                }
            }
        }
    }
    Some(Written {
        template,
        pointer: format!("/spec/template/spec/replicatedJobs/{i}/template/spec/template"),
        node,
    })
}

/// The `node` container of the patch: mounts (imported with the volumes),
/// the security context, and the rest for `[podTemplate]`.
fn node_container(job: &mut Job<'_>, container: &Json, pointer: &str) {
    for (key, value) in container.as_object().into_iter().flatten() {
        match key.as_str() {
            "name" | "volumeMounts" => {}
            "securityContext" => super::container::security(job, value),
            "env" => job.warn(&format!("{pointer}/env"), "env patched into the `node` container is not imported: the Trainer webhook rejects it", "put the variables in `trainer.env` (the spec's `[env]`)"),
            _ => {
                job.trainer_rest.insert(key.clone(), value.clone());
            }
        }
    }
}

/// The Trainer API the TrainJob is written for: `requested` (`--api-level`)
/// when its patch field allows it, else what the patch field says.
fn level(job: &mut Job<'_>, spec: &Json, requested: Option<ApiLevel>) -> ApiLevel {
    let written = written_level(spec);
    let Some(requested) = requested else {
        return written;
    };
    let field = ["runtimePatches", "podTemplateOverrides", "podSpecOverrides"]
        .into_iter()
        .find(|f| spec.get(*f).is_some());
    // v2.2 and v2.3 share `runtimePatches`; v2.1 and v2.0 each have their own field.
    let fits =
        requested == written || (requested.has_runtime_patches() && written.has_runtime_patches());
    match field {
        Some(field) if !fits => {
            job.error(
                &format!("/spec/{field}"),
                format!(
                    "the TrainJob has `{field}`, which Trainer {} does not have",
                    requested.as_str()
                ),
                "import with the `--api-level` of the cluster the TrainJob was written for",
            );
            written
        }
        _ => requested,
    }
}

/// The Trainer API a TrainJob's patch field is written for (or, without
/// one, a `numProcPerNode` only v2.0 and v2.1 take); `trainc run` reads a
/// manifest's TrainJob by it too.
pub fn written_level(spec: &Json) -> ApiLevel {
    // runtimePatches: v2.2 or later, imported as the default (v2.3).
    if spec.get("runtimePatches").is_some() {
        ApiLevel::V2_3
    } else if spec.get("podTemplateOverrides").is_some() {
        ApiLevel::V2_1
    } else if spec.get("podSpecOverrides").is_some() {
        ApiLevel::V2_0
    } else if spec
        .pointer("/trainer/numProcPerNode")
        .is_some_and(Json::is_string)
    {
        ApiLevel::V2_1
    } else {
        ApiLevel::V2_3
    }
}

fn runtime(job: &mut Job<'_>, reference: &Json) {
    job.unknown_keys(
        reference,
        "/spec/runtimeRef",
        &["name", "apiGroup", "kind"],
        "a runtime reference has a name and a kind",
    );
    match reference.get("name").and_then(Json::as_str) {
        Some(name) if name == defaults::TRAINJOB_RUNTIME => {}
        Some(name) => job.set("/trainjob/runtime", json!(name)),
        None => job.error(
            "/spec/runtimeRef",
            "the TrainJob names no runtime (`runtimeRef.name`)",
            "name the training runtime, e.g. `torch-distributed`",
        ),
    }
    if let Some(kind) = reference.get("kind").and_then(Json::as_str)
        && kind != "ClusterTrainingRuntime"
    {
        job.set("/trainjob/runtimeKind", json!(kind));
    }
}

fn initializers(job: &mut Job<'_>, initializer: &Json) {
    job.unknown_keys(
        initializer,
        "/spec/initializer",
        &["dataset", "model"],
        "a TrainJob initializes a dataset and a model",
    );
    for which in ["dataset", "model"] {
        let Some(init) = initializer.get(which).filter(|i| i.is_object()) else {
            continue;
        };
        let pointer = format!("/spec/initializer/{which}");
        job.unknown_keys(
            init,
            &pointer,
            &["storageUri", "env", "secretRef"],
            "an initializer has a storage URI, env and a Secret",
        );
        let mut out = Map::new();
        if let Some(uri) = init.get("storageUri") {
            out.insert("storageUri".into(), uri.clone());
        }
        if let Some(list) = init.get("env").and_then(Json::as_array) {
            match pod::env(list) {
                Ok(env) if !env.is_empty() => {
                    out.insert("env".into(), Json::Object(env));
                }
                Ok(_) => {}
                Err(()) => job.warn(&format!("{pointer}/env"), "the initializer's env is not imported: `env` takes values, Secret and ConfigMap keys and pod fields, each name once", ""),
            }
        }
        if let Some(secret) = init.pointer("/secretRef/name") {
            out.insert("secret".into(), secret.clone());
        }
        job.set(&format!("/trainjob/initializer/{which}"), Json::Object(out));
    }
}

/// `trainer`: image, command, env, processes per node and resources.
/// The ClusterTrainingRuntime `reference` names, when the release of
/// `level` ships it.
fn shipped(reference: &Json, level: ApiLevel) -> Option<&'static Runtime> {
    let kind = reference["kind"]
        .as_str()
        .unwrap_or("ClusterTrainingRuntime");
    let name = reference["name"].as_str()?;
    (kind == "ClusterTrainingRuntime")
        .then(|| crate::trainer::catalogue::find(level.release(), name))
        .flatten()
}

fn trainer_fields(
    job: &mut Job<'_>,
    trainer: &Json,
    level: ApiLevel,
    runtime: Option<&'static Runtime>,
) {
    job.unknown_keys(
        trainer,
        "/spec/trainer",
        &[
            "image",
            "command",
            "args",
            "env",
            "numNodes",
            "numProcPerNode",
            "resourcesPerNode",
        ],
        "the spec carries the trainer's image, command, env, nodes, processes and resources",
    );
    // Without one, the trainer runs the runtime's image, and so does the
    // spec without `image`.
    if let Some(image) = trainer.get("image").and_then(Json::as_str) {
        job.set("/image", json!(image));
    }
    if let Some(list) = trainer.get("env").and_then(Json::as_array) {
        super::container::env(job, list, "/spec/trainer/env", false);
    }
    if let Some(resources) = trainer.get("resourcesPerNode") {
        super::container::resources(job, resources, "/spec/trainer/resourcesPerNode");
    }
    // Without a command of its own the trainer runs its runtime's, which
    // the spec cannot name; a runtime without one runs the image's.
    let runtime_command = runtime
        .and_then(Runtime::trainer_container)
        .map(|c| c.command.join(" "))
        .filter(|c| !c.is_empty());
    if let Some(command) = runtime_command
        && trainer.get("command").is_none()
    {
        job.error(
            "/spec/trainer",
            format!("the trainer has no `command`, so it runs its runtime's (`{command}`), which a spec does not name"),
            "add that command to the TrainJob's `trainer.command` and import again",
        );
    }
    let flag = launch::import(job, trainer.get("command"), trainer.get("args"), false);
    let written = trainer.get("numProcPerNode");
    let nproc = match (flag, written) {
        (Some(flag), _) => flag,
        (None, Some(value)) => NProc::parse(value).unwrap_or(NProc::Keyword("auto".into())),
        (None, None) if level.has_runtime_patches() => {
            // Trainer resolves what the TrainJob leaves out; the spec says
            // what it resolves to (see `trainer::torch`).
            if runtime.is_none() && trainer.get("resourcesPerNode").is_none() {
                job.warn(
                    "/spec/trainer",
                    "the TrainJob leaves `numProcPerNode` to Trainer, which counts the CPUs or GPUs of the runtime's `node` container; trainc does not know this runtime and writes 1 per node",
                    "set `nProcPerNode` in the spec if that is not the count you mean",
                );
            }
            match crate::trainer::torch::procs_per_node(level.release(), trainer, runtime) {
                Procs::Count(n) => NProc::Count(u32::try_from(n).unwrap_or(u32::MAX)),
                Procs::Word(_) => NProc::Keyword("gpu".into()),
            }
        }
        (None, None) => NProc::Keyword("auto".into()),
    };
    launch::set_nproc(job, &nproc, "/spec/trainer/numProcPerNode");
}

/// The pod patch for the `node` job and its pointer; every other patch is
/// reported.
fn pod_patch(job: &mut Job<'_>, spec: &Json, level: ApiLevel) -> (Json, String) {
    let (field, inner) = match level {
        ApiLevel::V2_2 | ApiLevel::V2_3 => (
            "runtimePatches",
            "/trainingRuntimeSpec/template/spec/replicatedJobs",
        ),
        ApiLevel::V2_1 => ("podTemplateOverrides", ""),
        ApiLevel::V2_0 => ("podSpecOverrides", ""),
    };
    let mut found: Option<(Json, String)> = None;
    for (i, patch) in spec[field].as_array().into_iter().flatten().enumerate() {
        let pointer = format!("/spec/{field}/{i}");
        let candidate = if level.has_runtime_patches() {
            runtime_patch(job, patch, &pointer, inner)
        } else {
            {
                let targets_node = patch["targetJobs"]
                    .as_array()
                    .is_some_and(|t| t.len() == 1 && t[0]["name"] == NODE);
                if targets_node {
                    if level == ApiLevel::V2_0 {
                        let mut spec = patch.as_object().cloned().unwrap_or_default();
                        spec.remove("targetJobs");
                        Some((json!({"spec": spec}), pointer.clone()))
                    } else {
                        job.unknown_keys(
                            patch,
                            &pointer,
                            &["targetJobs", "metadata", "spec"],
                            "an override has target jobs, pod metadata and a pod spec",
                        );
                        Some((patch.clone(), pointer.clone()))
                    }
                } else {
                    None
                }
            }
        };
        match candidate {
            Some((template, at)) if found.is_none() => found = Some((template, at)),
            _ => job.warn(&pointer, format!("this {field} entry is not imported: the spec patches the `{NODE}` job's pods, once"), "put it in a TrainingRuntime of your own (`runtimeKind = \"TrainingRuntime\"`)"),
        }
    }
    found.unwrap_or_else(|| (json!({}), format!("/spec/{field}")))
}

/// The `node` replicated job's pod template of one runtime patch.
fn runtime_patch(
    job: &mut Job<'_>,
    patch: &Json,
    pointer: &str,
    inner: &str,
) -> Option<(Json, String)> {
    job.unknown_keys(
        patch,
        pointer,
        &["manager", "trainingRuntimeSpec", "time"],
        "a runtime patch names its manager and patches the runtime",
    );
    // What the spec carries of a patch is the `node` job's pod template:
    // the JobSet's and the Jobs' own metadata and settings are reported.
    let what = "the spec patches the `node` job's pod template only";
    let runtime_spec = &patch["trainingRuntimeSpec"];
    let runtime_pointer = format!("{pointer}/trainingRuntimeSpec");
    job.unknown_keys(runtime_spec, &runtime_pointer, &["template"], what);
    job.unknown_keys(
        &runtime_spec["template"],
        &format!("{runtime_pointer}/template"),
        &["spec"],
        what,
    );
    job.unknown_keys(
        &runtime_spec["template"]["spec"],
        &format!("{runtime_pointer}/template/spec"),
        &["replicatedJobs"],
        what,
    );
    let jobs = patch.pointer(inner)?.as_array()?;
    let i = jobs.iter().position(|j| j["name"] == NODE)?;
    let node = format!("{pointer}{inner}/{i}");
    job.unknown_keys(&jobs[i], &node, &["name", "template"], what);
    job.unknown_keys(
        &jobs[i]["template"],
        &format!("{node}/template"),
        &["spec"],
        what,
    );
    job.unknown_keys(
        &jobs[i]["template"]["spec"],
        &format!("{node}/template/spec"),
        &["template"],
        what,
    );
    for (k, other) in jobs.iter().enumerate() {
        if k != i {
            job.warn(&format!("{pointer}{inner}/{k}"), format!("the patch of replicated job `{}` is not imported: the spec patches `{NODE}` only", other["name"].as_str().unwrap_or("?")), "");
        }
    }
    let at = format!("{pointer}{inner}/{i}/template/spec/template");
    Some((jobs[i].pointer("/template/spec/template")?.clone(), at))
}
