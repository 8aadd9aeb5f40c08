//! A runtimes file (`--runtimes`, `[trainjob] runtimesFile`) of any bytes,
//! and a TrainJob checked against each runtime in it (the first byte picks
//! the Trainer release). Properties: no panic; every diagnostic renders,
//! under 64 KiB.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::json;
use trainc::diagnostic::{Style, render};
use trainc::source::{self, Sources};
use trainc::spec::ApiLevel;
use trainc::trainer::{Release, bind, torch};

fuzz_target!(|data: &[u8]| {
    let Some((&selector, text)) = data.split_first() else {
        return;
    };
    let level = [ApiLevel::V2_3, ApiLevel::V2_2, ApiLevel::V2_1, ApiLevel::V2_0]
        [usize::from(selector % 4)];
    let release: Release = level.release();
    let mut sources = Sources::new();
    let id = match source::add_bytes(&mut sources, "runtimes.yaml".to_owned(), text.to_vec()) {
        Ok(id) => id,
        Err(_) => return,
    };
    let (runtimes, problems) = trainc::trainer::file::read(&sources, id);
    for d in &problems {
        let shown = render(d, &sources, Style::PLAIN);
        assert!(shown.len() < 64 * 1024, "a diagnostic of {} bytes", shown.len());
    }
    let trainer = json!({"numProcPerNode": "auto", "resourcesPerNode": {"requests": {"cpu": "3500m"}}});
    for runtime in &runtimes {
        let bound = bind::bind(runtime.kind, &runtime.name, None, release, Some(&runtimes));
        let _ = (bound.describe(), bound.image());
        for kind in ["dataset", "model"] {
            if let Some(gap) = runtime.initializer_gap(release, kind) {
                let _ = gap.message(kind, "the runtime");
            }
            let _ = runtime.kubeflow_initializer(kind, release);
        }
        let _ = torch::procs_per_node(release, &trainer, Some(runtime));
        let job = json!({
            "apiVersion": "trainer.kubeflow.org/v1alpha1",
            "kind": "TrainJob",
            "metadata": {"name": "j"},
            "spec": {
                "runtimeRef": {"name": runtime.name, "kind": runtime.kind.as_str()},
                "initializer": {"dataset": {"storageUri": "s3://b/d"}},
                "trainer": {"command": ["torchrun", "t.py"]},
                "runtimePatches": [{"manager": "a.b/c", "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": [{"name": "node", "template": {"spec": {"template": {"spec": {"containers": [{"name": "sidecar"}]}}}}}]}}}}],
            }
        });
        let _ = trainc::verify::verify_with_runtimes(&[&job], level, &runtimes);
    }
});
