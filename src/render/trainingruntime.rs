//! The `trainer.kubeflow.org/v1alpha1 TrainingRuntime` trainc writes for a
//! TrainJob with `[trainjob] writeRuntime`: the base runtime the spec names
//! (Kubeflow's, or the runtimes file's), with the pod the spec describes
//! merged into its `node` job's pod template, named after the job and in its
//! namespace, as Kubeflow's own v2.3.0 example `05-multi-step.yaml` pairs a
//! TrainingRuntime with its TrainJob.
//!
//! The trainer's own fields (command, args, env, resources) stay on the
//! TrainJob's `trainer` (the image is on both), which Trainer applies to the
//! `node` container, replacing the base's image and command
//! (kubeflow/trainer v2.0.0–v2.3.0,
//! `pkg/runtime/framework/plugins/jobset/builder.go` `Trainer`, and
//! `plugins/torch/torch.go` for the env); everything else about the pod is here, so the
//! TrainJob needs no patch at any API level.

use serde_json::{Value, json};

use super::pod::{self, PodShape};
use super::{Object, merge, metadata};
use crate::cluster::trainjob::{API_VERSION, NODE};
use crate::model::Model;
use crate::trainer::{PodGroup, VOLCANO_SCHEDULER, written_pod_group};

pub const KIND: &str = "TrainingRuntime";
/// The label Kubeflow's runtimes say their framework with; kept from the base.
const FRAMEWORK_LABEL: &str = "trainer.kubeflow.org/framework";
/// Names the base runtime (`<kind>/<name>`), so `trainc import` can say
/// `writeRuntime` again.
pub const BASE_ANNOTATION: &str = "trainc.dev/base-runtime";
/// Fields of the `node` container the TrainJob's `trainer` sets. The image
/// stays too: the runtime then names the image its job runs, whatever its
/// base's.
const TRAINER_FIELDS: [&str; 4] = ["command", "args", "env", "resources"];

/// The runtime, when the spec asks trainc to write one.
pub(super) fn render(model: &Model) -> Option<Object> {
    if !model.trainjob.write_runtime {
        return None;
    }
    // Validation refuses to write from a runtime trainc does not know.
    let base = model.trainjob.bound.as_ref()?.runtime()?;
    let shape = PodShape {
        container: NODE,
        fixed_ports: &[],
        job_selector: super::own_pods(model),
    };
    let mut pod = serde_json::to_value(pod::template(model, &shape))
        .expect("a pod template serialises to JSON");
    if let Some(node) = pod
        .pointer_mut("/spec/containers/0")
        .and_then(Value::as_object_mut)
    {
        for field in TRAINER_FIELDS {
            node.remove(field);
        }
    }
    if let Some(fragment) = &model.pod_template {
        merge::merge(&mut pod, &merge::for_target(fragment, NODE));
    }
    // The policy JobSet applies: the pods' restart policy (JobSet defaults
    // it to `OnFailure`), the node Job's retries, the JobSet's lifetime.
    let policy = &model.policy;
    if policy.restart_policy == "Never" {
        pod["spec"]["restartPolicy"] = json!("Never");
    }
    // Gang scheduling: the PodGroup plugin, and the scheduler that honours
    // its PodGroup (validation made sure there is one).
    let s = &model.scheduling;
    let group = written_pod_group(
        model.trainjob.api_level.release(),
        s.gang,
        s.volcano_queue.is_some(),
        s.scheduler_name.as_deref(),
    );
    if group == Some(PodGroup::Volcano) && s.scheduler_name.is_none() {
        pod["spec"]["schedulerName"] = json!(VOLCANO_SCHEDULER);
    }
    let mut spec = base.object["spec"].clone();
    match group {
        Some(PodGroup::Volcano) => spec["podGroupPolicy"] = json!({ "volcano": {} }),
        Some(PodGroup::Coscheduling) => spec["podGroupPolicy"] = json!({ "coscheduling": {} }),
        None => {}
    }
    if let Some(queue) = &s.volcano_queue {
        spec["template"]["metadata"]["annotations"][crate::trainer::VOLCANO_QUEUE] = json!(queue);
    }
    if let Some(seconds) = policy.ttl_seconds_after_finished {
        spec["template"]["spec"]["ttlSecondsAfterFinished"] = json!(seconds);
    }
    let jobs = spec
        .pointer_mut("/template/spec/replicatedJobs")
        .and_then(Value::as_array_mut);
    for job in jobs.into_iter().flatten().filter(|j| j["name"] == NODE) {
        if let Some(limit) = policy.backoff_limit {
            job["template"]["spec"]["backoffLimit"] = json!(limit);
        }
        let template = &mut job["template"]["spec"]["template"];
        // The image's own entrypoint runs only where the `node` container
        // has no command: the written runtime leaves out the base's
        // (kubeflow/trainer v2.0.0 ships `torch-distributed` with one).
        if model.container.verbatim && model.container.command.is_empty() {
            let node = template["spec"]["containers"]
                .as_array_mut()
                .and_then(|c| c.iter_mut().find(|c| c["name"] == NODE))
                .and_then(Value::as_object_mut);
            if let Some(container) = node {
                container.remove("command");
                container.remove("args");
            }
        }
        merge::merge(template, &pod);
        merge::sort_keys(template, None);
    }
    let mut labels = model.job_labels.clone();
    if let Some(framework) = base.object["metadata"]["labels"][FRAMEWORK_LABEL].as_str() {
        labels.insert(FRAMEWORK_LABEL.to_owned(), framework.to_owned());
    }
    let mut meta = metadata(model, &model.trainjob.runtime, &labels);
    meta.annotations.get_or_insert_default().insert(
        BASE_ANNOTATION.to_owned(),
        format!("{}/{}", base.kind.as_str(), base.name),
    );
    let runtime = json!({
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": meta,
        "spec": spec,
    });
    Some(Object::new(KIND, &model.trainjob.runtime, &runtime))
}
