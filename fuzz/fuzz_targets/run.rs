//! `trainc run --manifests` on any bytes, up to the point where processes
//! would start: the manifests read and verified (what `run` refuses), the
//! pods made, the run planned, and each container's sandbox operations
//! made against an empty machine (the first byte picks the Trainer release
//! and whether the run is namespaced). Properties: no panic; every error
//! renders, under 64 KiB; every name the plan makes a path of is one path
//! component, every mount target and every path the sandbox makes is
//! absolute and clean, and the pods' `/etc/hosts` has one line per pod and
//! no control character.
#![no_main]

use std::path::{Path, PathBuf};

use libfuzzer_sys::fuzz_target;
use trainc::diagnostic::{Style, render};
use trainc::run::plan::{From, Options, plan};
use trainc::run::sandbox::{Host, Kind, Op, ops};
use trainc::run::workdir::LocalMount;
use trainc::source::{self, Sources};
use trainc::spec::ApiLevel;

/// A machine with nothing on it.
struct Empty;

impl Host for Empty {
    fn entries(&self, _: &Path) -> Vec<String> {
        Vec::new()
    }
    fn kind(&self, _: &Path) -> Option<Kind> {
        None
    }
    fn is_dir(&self, path: &Path) -> bool {
        path.starts_with("/run-dir")
    }
    fn link(&self, _: &Path) -> Option<PathBuf> {
        None
    }
}

fn component(name: &str) -> bool {
    !name.is_empty() && name != "." && name != ".." && !name.contains('/') && !name.contains('\0')
}

fn clean_absolute(path: &str) -> bool {
    path.starts_with('/') && path[1..].split('/').all(component)
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, manifests)) = data.split_first() else {
        return;
    };
    let mut sources = Sources::new();
    let Ok(id) = source::add_bytes(&mut sources, "m.yaml".to_owned(), manifests.to_vec()) else {
        return;
    };
    // What `run` refuses before anything: every error `verify` finds.
    let level = [ApiLevel::V2_3, ApiLevel::V2_1, ApiLevel::V2_0][usize::from(selector % 3)];
    let verified = trainc::verify::manifests::verify_file(&sources, id, level, &[], Default::default());
    for d in &verified.diagnostics {
        let shown = render(d, &sources, Style::PLAIN);
        assert!(shown.len() < 64 * 1024, "a diagnostic of {} bytes", shown.len());
    }
    if verified.diagnostics.iter().any(trainc::Diagnostic::is_error) {
        return;
    }
    let text = sources.get(id).text.clone();
    let max_depth = trainc::verify::manifests::MAX_DEPTH;
    let Ok(documents) = trainc::parse::parse_yaml_stream(id, &text, max_depth, 1000) else {
        return;
    };
    let (found, _) = trainc::parse::stream_objects(&documents);
    let objects: Vec<serde_json::Value> = found.iter().map(|o| o.node.to_json()).collect();
    let Ok(workload) = trainc::cluster::workload(&objects, &[], level.release()) else {
        return;
    };
    let options = Options {
        python: PathBuf::from("/opt/python/bin/python3"),
        maps: vec![("/app".to_owned(), PathBuf::from("/run-dir/app"))],
        claims: Vec::new(),
        configmaps: Vec::new(),
        secrets: Vec::new(),
        entrypoint: vec!["python3".to_owned()],
        isolate: selector & 0x80 != 0,
    };
    let planned = match plan(&objects, &workload, &options) {
        Ok(planned) => planned,
        Err(error) => {
            let shown = error.render();
            assert!(shown.len() < 64 * 1024, "an error of {} bytes", shown.len());
            return;
        }
    };
    assert!(planned.pods.len() <= trainc::run::MAX_PODS);
    assert_eq!(planned.hosts.lines().count(), planned.pods.len() + 2, "{}", planned.hosts);
    assert!(
        !planned.hosts.chars().any(|c| c.is_control() && c != '\n' && c != '\t'),
        "{:?}",
        planned.hosts
    );
    for pod in &planned.pods {
        assert!(component(&pod.name), "pod `{}`", pod.name);
        for volume in &pod.volumes {
            assert!(component(&volume.name), "volume `{}`", volume.name);
            for file in &volume.files {
                assert!(file.path.split('/').all(component), "file `{}`", file.path);
                assert!(file.mode <= 0o777);
            }
        }
        for container in pod.init.iter().chain(&pod.containers) {
            assert!(component(&container.name), "container `{}`", container.name);
            assert!(!container.argv.is_empty());
            let mut mounts = Vec::new();
            for mount in &container.mounts {
                assert!(clean_absolute(&mount.target) , "mount at `{}`", mount.target);
                if let Some(sub) = &mount.sub_path {
                    assert!(!sub.starts_with('/') && !sub.split('/').any(|p| p == ".."), "subPath `{sub}`");
                }
                let source = match &mount.from {
                    From::Volume(name) => {
                        assert!(pod.volumes.iter().any(|v| &v.name == name), "volume `{name}`");
                        PathBuf::from("/run-dir/volumes").join(name)
                    }
                    From::Local(dir) => dir.clone(),
                };
                mounts.push(LocalMount {
                    target: mount.target.clone(),
                    source,
                    read_only: mount.read_only,
                });
            }
            if let Ok(made) = ops(&mounts, Path::new("/run-dir/hosts"), &Empty) {
                for op in &made {
                    assert!(clean_absolute(op.at()) || op.at() == "/", "{op:?}");
                    if let Op::Bind { source, .. } = op {
                        assert!(source.starts_with("/run-dir"), "{op:?}");
                    }
                }
            }
        }
    }
});
