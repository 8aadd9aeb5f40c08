//! Properties over generated specs: whatever `check` accepts, `build
//! --verify` builds, with no error, into objects the strict upstream
//! schemas and the operators' webhook rules accept; and the same spec
//! always gives the same bytes.

use std::fmt::Write as _;

use proptest::prelude::*;

use trainc::source::Sources;

/// A spec drawn from the fields users combine, right and wrong: names that
/// may be too long or invalid, elastic ranges, GPU counts with and without
/// `nProcPerNode`, volumes, env, scheduling and both targets.
fn spec() -> impl Strategy<Value = String> {
    let name = prop_oneof![
        Just("demo".to_owned()),
        Just("a".repeat(40)),
        Just("bad_name".to_owned()),
        "[a-z][a-z0-9-]{0,20}[a-z0-9]",
    ];
    let entry = prop_oneof![
        Just("script = \"/app/train.py\"".to_owned()),
        Just("module = \"trainer.main\"".to_owned()),
        Just("command = [\"python\", \"-m\", \"x\"]".to_owned()),
        Just(String::new()),
    ];
    let replicas = prop_oneof![
        (1u32..9).prop_map(|n| format!("replicas = {n}")),
        (1u32..4, 4u32..9).prop_map(|(a, b)| format!("replicas = \"{a}:{b}\"")),
        Just("replicas = 0".to_owned()),
        Just(String::new()),
    ];
    let resources =
        (0u32..9, prop::option::of(1u32..65), any::<bool>()).prop_map(|(gpus, cpu, memory)| {
            let mut s = "[resources]\n".to_owned();
            if gpus > 0 {
                let _ = writeln!(s, "gpus = {gpus}");
            }
            if let Some(cpu) = cpu {
                let _ = writeln!(s, "cpu = {cpu}");
            }
            if memory {
                s.push_str("memory = \"16Gi\"\n");
            }
            s
        });
    let nproc = prop_oneof![
        Just(String::new()),
        Just("nProcPerNode = \"gpu\"".to_owned()),
        Just("nProcPerNode = \"auto\"".to_owned()),
        (1u32..9).prop_map(|n| format!("nProcPerNode = {n}")),
    ];
    let target = prop_oneof![
        Just(String::new()),
        Just("target = \"trainjob\"".to_owned()),
        Just("target = \"pytorchjob\"".to_owned()),
    ];
    let extra = prop::collection::vec(
        prop_oneof![
            Just("env = { LR = \"0.1\", MODE = \"fast\" }".to_owned()),
            Just("args = [\"--epochs\", \"{{ replicas }}\"]".to_owned()),
            Just("labels = { team = \"vision\" }".to_owned()),
            Just("[volumes.data]\nmountPath = \"/data\"\nsize = \"100Gi\"".to_owned()),
            Just("[volumes.cache]\nmountPath = \"/cache\"\nemptyDir = true".to_owned()),
            Just("[scheduling]\nnodeSelector = { pool = \"gpu\" }".to_owned()),
            Just("[policy]\nbackoffLimit = 3\nsuspend = true".to_owned()),
            Just("[kueue]\nqueue = \"team-a\"".to_owned()),
            Just("[ports]\nmetrics = 9090".to_owned()),
        ],
        0..4,
    );
    (name, entry, replicas, nproc, target, resources, extra).prop_map(
        |(name, entry, replicas, nproc, target, resources, extra)| {
            let mut top = vec![
                format!("name = \"{name}\""),
                "image = \"ghcr.io/acme/train:1.4\"".to_owned(),
                entry,
                replicas,
                nproc,
                target,
            ];
            let (tables, lines): (Vec<String>, Vec<String>) =
                extra.into_iter().partition(|e| e.starts_with('['));
            top.extend(lines);
            let mut text: String = top
                .into_iter()
                .filter(|l| !l.is_empty())
                .map(|l| l + "\n")
                .collect();
            text.push_str(&resources);
            let mut seen = std::collections::BTreeSet::new();
            for table in tables {
                let head = table.lines().next().unwrap_or_default().to_owned();
                // A table may appear once.
                if seen.insert(head) {
                    text.push_str(&table);
                    text.push('\n');
                }
            }
            text
        },
    )
}

/// The property for one spec: `None` when `check` rejects it.
fn check_then_build(text: &str) -> Result<bool, TestCaseError> {
    let mut sources = Sources::new();
    let id = sources.add("spec.toml", text.to_owned());
    let checked = trainc::check(&sources, id);
    if checked.diagnostics.iter().any(trainc::Diagnostic::is_error) {
        return Ok(false);
    }
    let options = trainc::Options {
        verify: true,
        ..trainc::Options::default()
    };
    let built = trainc::build(&mut sources, &trainc::Input::spec(id), &options);
    let errors: Vec<String> = built
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| format!("{}: {}", d.code, d.message))
        .collect();
    prop_assert!(
        errors.is_empty(),
        "check passed, build --verify failed:\n{}\n{}",
        errors.join("\n"),
        text
    );
    let objects = built.objects.expect("objects without errors");
    let yaml = trainc::emit::stream(&objects, trainc::emit::Format::Yaml);
    // Same input, same bytes.
    let mut again = Sources::new();
    let id = again.add("spec.toml", text.to_owned());
    let rebuilt = trainc::build(&mut again, &trainc::Input::spec(id), &options);
    let yaml_again = trainc::emit::stream(
        &rebuilt.objects.expect("objects"),
        trainc::emit::Format::Yaml,
    );
    prop_assert_eq!(yaml, yaml_again);
    Ok(true)
}

#[test]
fn what_check_accepts_builds_and_verifies() {
    let config = ProptestConfig {
        cases: 640,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    let mut runner = proptest::test_runner::TestRunner::new_with_rng(
        config,
        // A fixed seed: the same cases on every run and every machine.
        proptest::test_runner::TestRng::deterministic_rng(
            proptest::test_runner::RngAlgorithm::ChaCha,
        ),
    );
    let accepted = std::cell::Cell::new(0);
    let result = runner.run(&spec(), |text| {
        if check_then_build(&text)? {
            accepted.set(accepted.get() + 1);
        }
        Ok(())
    });
    if let Err(error) = result {
        panic!("{error}");
    }
    // The property means something only if many generated specs pass `check`.
    assert!(
        accepted.get() >= 100,
        "only {} of 640 generated specs passed check",
        accepted.get()
    );
}
