//! The committed `schemas/trainspec.schema.json` must equal the schema
//! generated from `src/spec.rs`; `TRAINC_BLESS=1` rewrites it.

use crate::support::{blessing, compare, root, text, trainc};

#[test]
fn committed_schema_matches_the_types() {
    let generated = trainc::spec::json_schema_text();
    let path = root().join("schemas/trainspec.schema.json");
    if let Some(diff) = compare(&path, &generated) {
        panic!(
            "schemas/trainspec.schema.json is stale; run `TRAINC_BLESS=1 cargo test` and commit it\n{diff}"
        );
    }
}

#[test]
fn committed_overlay_schema_matches_the_types() {
    let generated = trainc::spec::schema_text(&trainc::spec::overlay_schema());
    if let Some(diff) = compare(&root().join("schemas/overlay.schema.json"), &generated) {
        panic!(
            "schemas/overlay.schema.json is stale; run `TRAINC_BLESS=1 cargo test` and commit it\n{diff}"
        );
    }
    let output = trainc(&root(), &["schema", "--overlay"]);
    assert_eq!(text(&output.stdout), generated);
}

#[test]
fn schema_command_prints_the_committed_schema() {
    let output = trainc(&root(), &["schema"]);
    assert!(output.status.success());
    let committed = std::fs::read_to_string(root().join("schemas/trainspec.schema.json")).unwrap();
    assert_eq!(text(&output.stdout), committed);
}

#[test]
fn every_field_is_documented() {
    let schema = trainc::spec::json_schema();
    let mut undocumented = Vec::new();
    let mut visit = vec![(String::new(), &schema)];
    visit.extend(
        schema["$defs"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (format!("$defs/{k}"), v)),
    );
    for (path, node) in visit {
        for (key, property) in node
            .get("properties")
            .and_then(|p| p.as_object())
            .into_iter()
            .flatten()
        {
            if property.get("description").is_none() {
                undocumented.push(format!("{path}/{key}"));
            }
        }
    }
    assert!(
        undocumented.is_empty(),
        "fields without a doc comment: {undocumented:?}"
    );
}

#[test]
fn shipped_overlays_follow_the_overlay_schema() {
    let schema = trainc::spec::overlay_schema();
    let validator = jsonschema::validator_for(&schema).unwrap();
    for name in ["cpu", "gpu"] {
        let mut sources = trainc::Sources::new();
        let id = trainc::source::read(&mut sources, &root().join(format!("overlays/{name}.toml")))
            .unwrap();
        let tree = trainc::parse::parse(id, sources.get(id)).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&tree.to_json())
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "overlays/{name}.toml: {errors:?}");
        // And a mistake is caught, so the check above means something.
        let bad = serde_json::json!({"resources": {"gpu": 1}});
        assert!(!validator.is_valid(&bad));
    }
}

#[test]
fn committed_krm_schemas_match_the_types() {
    for (file, args, generated) in [
        (
            "trainspec-krm",
            vec!["schema", "--krm"],
            trainc::spec::krm_schema(),
        ),
        (
            "trainspec-patch",
            vec!["schema", "--krm", "--overlay"],
            trainc::spec::krm_patch_schema(),
        ),
    ] {
        let generated = trainc::spec::schema_text(&generated);
        if let Some(diff) = compare(
            &root().join(format!("schemas/{file}.schema.json")),
            &generated,
        ) {
            panic!(
                "schemas/{file}.schema.json is stale; run `TRAINC_BLESS=1 cargo test` and commit it\n{diff}"
            );
        }
        let output = trainc(&root(), &args);
        assert_eq!(text(&output.stdout), generated);
    }
}

/// Every YAML example names the schema of its form in its modeline, and
/// passes it: the KRM form, a kustomize patch, or the bare form.
#[test]
fn every_yaml_example_names_and_passes_the_schema_of_its_form() {
    let mut files = Vec::new();
    let mut dirs = vec![root().join("examples"), root().join("tests/check")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "yaml")
                && std::fs::read_to_string(&path)
                    .unwrap()
                    .contains("kind: TrainSpec")
            {
                files.push(path);
            }
        }
    }
    assert!(files.len() >= 6, "{files:?}");
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let in_examples = path.starts_with(root().join("examples"));
        let patch = path.starts_with(root().join("examples/kustomize"))
            && path
                .parent()
                .and_then(|p| p.file_name())
                .is_some_and(|d| d.to_string_lossy().ends_with("-spec"));
        let (file, schema) = if patch {
            ("trainspec-patch", trainc::spec::krm_patch_schema())
        } else {
            ("trainspec-krm", trainc::spec::krm_schema())
        };
        if in_examples {
            let modeline = text.lines().next().unwrap_or_default();
            assert!(
                modeline.starts_with("# yaml-language-server: $schema=")
                    && modeline.ends_with(&format!("schemas/{file}.schema.json")),
                "{}: `{modeline}` should name {file}.schema.json",
                path.display()
            );
        }
        if path.to_string_lossy().contains("-fail") {
            continue;
        }
        let document: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
        let validator = jsonschema::validator_for(&schema).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&document)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{}: {errors:?}", path.display());
    }
}

/// `schemas/compact/` holds the upstream schemas of `schemas/k8s/` as trainc
/// embeds them (see `trainc::verify::compact`), and the `[podTemplate]`
/// fragment cut from the Job's.
#[test]
fn compact_schemas_match_the_upstream_copies() {
    use trainc::verify::compact::{
        EMBEDDED, compact, compact_name, compact_spec_schema, pod_template_fragment,
    };
    let upstream =
        |file: &str| std::fs::read_to_string(root().join("schemas/k8s").join(file)).unwrap();
    let mut expected: Vec<(String, String)> = EMBEDDED
        .iter()
        .map(|from| {
            (
                compact_name(from).to_owned(),
                compact(&upstream(from)) + "\n",
            )
        })
        .collect();
    let job = compact(&upstream("job-batch-v1.json"));
    expected.push((
        "podtemplate-fragment.json".to_owned(),
        pod_template_fragment(&job) + "\n",
    ));
    // The newest release's bundle, and what each other's changes of it.
    let releases = trainc::verify::compact::KUBERNETES_RELEASES;
    let bundle = |release: &trainc::verify::compact::KubernetesRelease| {
        trainc::verify::compact::kubernetes_bundle(release.name, &upstream(release.definitions))
    };
    let newest = bundle(&releases[0]);
    expected.push((releases[0].file.to_owned(), newest.clone() + "\n"));
    for release in &releases[1..] {
        let own = bundle(release);
        let patch = trainc::verify::compact::kubernetes_patch(&own, &newest);
        // Applied, it gives the release's bundle: its kinds, and every
        // definition as its own.
        let parse = |text: &str| serde_json::from_str::<serde_json::Value>(text).unwrap();
        let patched = trainc::verify::compact::kubernetes_patched(&parse(&newest), &parse(&patch));
        let own = parse(&own);
        assert_eq!(patched["kinds"], own["kinds"], "{}", release.name);
        for (name, definition) in own["$defs"].as_object().unwrap() {
            assert_eq!(
                &patched["$defs"][name], definition,
                "{} {name}",
                release.name
            );
        }
        expected.push((release.file.to_owned(), patch + "\n"));
    }
    for own in ["trainspec.schema.json", "overlay.schema.json"] {
        let committed = std::fs::read_to_string(root().join("schemas").join(own)).unwrap();
        expected.push((own.to_owned(), compact_spec_schema(&committed) + "\n"));
    }
    // What the binary embeds: every one compressed beside it
    // (`trainc::embedded`), but the spec's own two, which every run reads.
    let plain = ["trainspec.schema.json", "overlay.schema.json"];
    let compressed: Vec<(String, Vec<u8>)> = expected
        .iter()
        .filter(|(file, _)| !plain.contains(&file.as_str()))
        .map(|(file, text)| {
            (
                format!("{file}.lz4"),
                lz4_flex::compress_prepend_size(text.as_bytes()),
            )
        })
        .collect();
    let mut stale = Vec::new();
    for (file, text) in &expected {
        let path = root().join("schemas/compact").join(file);
        if blessing() {
            std::fs::write(&path, text).unwrap();
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            stale.push(file.clone());
        }
    }
    for (file, bytes) in &compressed {
        let path = root().join("schemas/compact").join(file);
        let text = &expected
            .iter()
            .find(|(json, _)| format!("{json}.lz4") == *file)
            .unwrap()
            .1;
        if blessing() {
            std::fs::write(&path, bytes).unwrap();
        } else if std::fs::read(&path)
            .ok()
            .map(|b| trainc::embedded::read_out(&b))
            .as_ref()
            != Some(text)
        {
            stale.push(file.clone());
        }
    }
    assert!(
        stale.is_empty(),
        "stale in schemas/compact/: {stale:?}; run `TRAINC_BLESS=1 cargo test` and commit them"
    );
    let mut shipped: Vec<String> = std::fs::read_dir(root().join("schemas/compact"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    shipped.sort();
    let mut names: Vec<String> = expected.into_iter().map(|(file, _)| file).collect();
    names.extend(compressed.into_iter().map(|(file, _)| file));
    names.sort();
    assert_eq!(
        shipped, names,
        "schemas/compact/ holds exactly the derived schemas"
    );
}
