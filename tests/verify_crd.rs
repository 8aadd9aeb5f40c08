//! `trainc verify --crd`: a CRD's kinds checked by its own schema, made as
//! strict as the API server, and by its CEL rules; Kubeflow Trainer's own
//! CEL rules on the embedded TrainJob and runtime CRDs.

use std::path::Path;

use crate::support::{root, temp_dir, trainc};

/// `line:col severity code message` of each JSON diagnostic.
fn said(output: &std::process::Output) -> Vec<String> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| {
            let d: serde_json::Value = serde_json::from_str(line).unwrap();
            format!(
                "{}:{}:{} {} {} {}",
                Path::new(d["file"].as_str().unwrap())
                    .file_name()
                    .unwrap()
                    .to_string_lossy(),
                d["line"],
                d["col"],
                d["severity"].as_str().unwrap(),
                d["code"]
                    .as_str()
                    .unwrap()
                    .trim_start_matches("trainc::verify::"),
                d["message"].as_str().unwrap()
            )
        })
        .collect()
}

#[test]
fn a_crds_kinds_are_checked_by_its_schema_and_its_cel_rules() {
    let dir = root().join("tests/verify-crd");
    let output = trainc(
        &dir,
        &[
            "verify",
            "--format",
            "json",
            "--crd",
            "site-crds",
            "manifests",
        ],
    );
    assert_eq!(output.status.code(), Some(1));
    let found = said(&output);
    let expected = [
        // One note for the CRD's transition rule, at it.
        "datasetcache.yaml:92:23 note crd document 1: CustomResourceDefinition/datasetcaches.data.example.com: 1 transition rule (reading `oldSelf`) not checked",
        // A prefix, a range, an optional field (`has`) against a defaulted
        // one, `all` over a list with a messageExpression, fieldPath and
        // reason, a regex on every item and on every value of a map.
        "caches.yaml:19:3 error rule document 2, DatasetCache/bad, `spec.source`: Invalid value: \"http://bucket/imagenet\": source must be an s3:// or gs:// URI",
        "caches.yaml:20:3 error rule document 2, DatasetCache/bad, `spec.sizeGi`: Invalid value: 5000: sizeGi must be between 1 and 4096",
        "caches.yaml:21:3 error rule document 2, DatasetCache/bad, `spec.ttlHours`: Invalid value: ttlHours must not exceed retainHours",
        "caches.yaml:22:3 error rule document 2, DatasetCache/bad, `spec.readers`: Forbidden: readers must be teams (team-...), not alice",
        "caches.yaml:22:33 error rule document 2, DatasetCache/bad, `spec.readers[2]`: Invalid value: \"Bob\": a reader is a DNS label",
        // The structural schema, strict: unknown fields.
        "caches.yaml:23:3 error schema document 2, DatasetCache/bad, `spec.colour`: unknown field \"spec.colour\"",
        "caches.yaml:25:5 error rule document 2, DatasetCache/bad, `spec.labels.app`: Invalid value: \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\": a label value has at most 63 characters",
        // A list keyed by `name` (`x-kubernetes-list-type: map`).
        "caches.yaml:29:7 error schema document 2, DatasetCache/bad, `spec.mounts[2]`: Duplicate value: {\"name\":\"data\"} (item 0 has it too)",
        // Int-or-string, an embedded resource's identity: errors of the
        // kind that stop the server from running any rule (its `source`
        // fails one, unsaid), as it says.
        "caches.yaml:33:1 error rule document 3, DatasetCache/broken: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
        "caches.yaml:40:3 error schema document 3, DatasetCache/broken, `spec.port`: Invalid value: \"array\": spec.port in body must be of type integer,string: \"array\"",
        "caches.yaml:41:3 error schema document 3, DatasetCache/broken, `spec.template.apiVersion`: Required value",
        "caches.yaml:41:3 error schema document 3, DatasetCache/broken, `spec.template.kind`: Required value",
        "caches.yaml:47:1 error rule document 4, DatasetCache/whole-floats: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
        "caches.yaml:52:3 error schema document 4, DatasetCache/whole-floats, `spec.source`: Invalid value: \"integer\": spec.source in body must be of type string: \"integer\"",
    ];
    assert_eq!(found, expected, "{found:#?}");
    // `good` passes: its absent `retainHours` defaulted to 24 before the
    // rule read it, its null `note` pruned, its null `owner` nullable.
    assert!(!found.iter().any(|f| f.contains("DatasetCache/good")));
    let human = trainc(&dir, &["verify", "--crd", "site-crds", "manifests"]);
    let summary = format!(
        "{}{}",
        String::from_utf8_lossy(&human.stdout),
        String::from_utf8_lossy(&human.stderr)
    );
    assert!(
        summary.contains(
            "verified 4 objects in 1 file against Kubernetes 1.36: 14 errors, 0 warnings"
        ),
        "{summary}"
    );
}

#[test]
fn without_the_crd_its_objects_are_counted_as_not_checked() {
    let dir = root().join("tests/verify-crd");
    let output = trainc(&dir, &["verify", "--format", "json", "manifests"]);
    assert_eq!(output.status.code(), Some(0));
    let found = said(&output);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(found[0].contains("note unchecked") && found[0].contains("DatasetCache/good"));
}

/// A CRD stream is read document by document; a document that cannot be
/// read takes back the CRDs its file gave before it, as a file that does not
/// parse gives none.
#[test]
fn a_crd_file_with_a_document_that_cannot_be_read_gives_no_crd() {
    let dir = temp_dir("crd-unreadable");
    let crd = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: hs.example.com}\nspec:\n  group: example.com\n  names: {kind: H, plural: hs}\n  scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n        properties:\n          spec:\n            type: object\n            x-kubernetes-validations:\n            - rule: self.n >= 0\n            properties: {n: {type: integer}}\n";
    std::fs::write(dir.join("crd.yaml"), format!("{crd}---\nkind: !!int abc\n")).unwrap();
    let object = "apiVersion: example.com/v1\nkind: H\nmetadata: {name: h}\nspec: {n: -1}\n";
    std::fs::write(dir.join("h.yaml"), object).unwrap();
    let output = trainc(
        &dir,
        &["verify", "--format", "json", "--crd", "crd.yaml", "h.yaml"],
    );
    assert_eq!(output.status.code(), Some(1));
    let found = said(&output);
    assert!(
        found.iter().any(|f| f.starts_with("crd.yaml:22:13 error")),
        "{found:#?}"
    );
    assert!(
        found
            .iter()
            .any(|f| f.contains("note unchecked") && f.contains("H/h")),
        "{found:#?}"
    );
    assert!(
        !found.iter().any(|f| f.contains("failed rule")),
        "{found:#?}"
    );
    // Without the bad document, the CRD is read and its rule holds H to it.
    std::fs::write(dir.join("crd.yaml"), crd).unwrap();
    let output = trainc(
        &dir,
        &["verify", "--format", "json", "--crd", "crd.yaml", "h.yaml"],
    );
    let found = said(&output);
    assert!(
        found.iter().any(|f| f.contains("failed rule: self.n >= 0")),
        "{found:#?}"
    );
}

/// A CRD's subresources as the API server creates an object
/// (apiextensions-apiserver v0.36.3 `pkg/registry/customresource`): with
/// `status`, the object's status is dropped; with `scale`, the replicas
/// at its paths are non-negative int32s (the words the real 1.36 server
/// gave). A CRD without rules says nothing of rules left unchecked.
#[test]
fn a_crds_subresources_are_held_as_the_server_creates_an_object() {
    let dir = temp_dir("crd-subresources");
    let crd = |kind: &str, status: &str| {
        format!(
            "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {{name: {kind}s.example.com}}\nspec:\n  group: example.com\n  names: {{kind: {kind}, plural: {kind}s}}\n  scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    subresources:\n{status}      scale: {{specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas}}\n    schema:\n      openAPIV3Schema:\n        type: object\n        properties:\n          spec: {{type: object, properties: {{replicas: {{type: integer}}}}}}\n          status: {{type: object, properties: {{replicas: {{type: integer}}}}}}\n---\n"
        )
    };
    let crds = format!("{}{}", crd("W", ""), crd("G", "      status: {}\n"));
    std::fs::write(dir.join("crds.yaml"), crds).unwrap();
    let object = |kind: &str, name: &str, rest: &str| {
        format!("apiVersion: example.com/v1\nkind: {kind}\nmetadata: {{name: {name}}}\n{rest}---\n")
    };
    let objects = [
        object("W", "negative", "spec: {replicas: -3}\n"),
        object(
            "W",
            "large",
            "spec: {replicas: 3000000000}\nstatus: {replicas: -1}\n",
        ),
        object(
            "G",
            "status",
            "spec: {replicas: 2}\nstatus: {replicas: -1}\n",
        ),
        object("G", "half", "spec: {replicas: 1.5}\n"),
    ];
    std::fs::write(dir.join("objects.yaml"), objects.concat()).unwrap();
    let output = trainc(
        &dir,
        &[
            "verify",
            "--format",
            "json",
            "--crd",
            "crds.yaml",
            "objects.yaml",
        ],
    );
    assert_eq!(output.status.code(), Some(1));
    let found = said(&output);
    for expected in [
        "objects.yaml:4:8 error schema document 1, W/negative, `spec.replicas`: Invalid value: -3: should be a non-negative integer",
        "objects.yaml:9:8 error schema document 2, W/large, `spec.replicas`: Invalid value: 3000000000: should be less than or equal to 2147483647",
        "objects.yaml:10:10 error schema document 2, W/large, `status.replicas`: Invalid value: -1: should be a non-negative integer",
        "objects.yaml:21:8 error schema document 4, G/half, `spec.replicas`: Invalid value: 0: .spec.replicas accessor error: 1.5 is of the type float64, expected int64",
    ] {
        assert!(
            found.iter().any(|f| f.starts_with(expected)),
            "{expected}\n{found:#?}"
        );
    }
    assert!(!found.iter().any(|f| f.contains("G/status")), "{found:#?}");
    assert!(
        !found.iter().any(|f| f.contains("rules were not checked")),
        "{found:#?}"
    );
}

#[test]
fn a_crd_that_cannot_be_used_says_why_at_its_line() {
    let dir = root().join("tests/verify-crd");
    let output = trainc(
        &dir,
        &[
            "verify",
            "--format",
            "json",
            "--crd",
            "broken-crds.yaml",
            "--crd",
            "not-a-crd.yaml",
            "manifests",
        ],
    );
    assert_eq!(output.status.code(), Some(1));
    let found = said(&output);
    let starts = [
        "broken-crds.yaml:2:1 error crd document 1: a `apiextensions.k8s.io/v1beta1` CustomResourceDefinition: Kubernetes serves CRDs as `apiextensions.k8s.io/v1` only since 1.22",
        // A rule over every item of a list of any length, each string of
        // any length: the server's estimate of its cost refuses it, and
        // the CRD's total with it; the quotas CRD's versions' schemas
        // differ (v1alpha1 has none), so the server names v1's own.
        "broken-crds.yaml:24:9 error crd document 2, CustomResourceDefinition/quotas.data.example.com, `spec.versions[0].schema.openAPIV3Schema`: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x",
        // Each refusal at the field the server names, in its words.
        "broken-crds.yaml:30:19 error crd document 2, CustomResourceDefinition/quotas.data.example.com, `spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule`: the rule `self.gpus <` does not compile:",
        "broken-crds.yaml:31:19 error crd document 2, CustomResourceDefinition/quotas.data.example.com, `spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[1].rule`: the rule `authorizer.group('apps').check('get').allowed()` does not compile: ERROR: <input>:1:1: undeclared reference to 'authorizer' (in container '')",
        "broken-crds.yaml:32:19 error crd document 2, CustomResourceDefinition/quotas.data.example.com, `spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[2].rule`: Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)",
        "broken-crds.yaml:32:19 error crd document 2, CustomResourceDefinition/quotas.data.example.com, `spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[2].rule`: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema (the rule `self.tags.all(t, t.matches('^[a-z]+$'))`)",
        "broken-crds.yaml:65:15 error crd document 3, CustomResourceDefinition/registries.data.example.com, `spec.validation.openAPIV3Schema.properties[spec].type`: Unsupported value: \"dictionary\": supported values: \"array\", \"boolean\", \"integer\", \"number\", \"object\", \"string\"",
        "not-a-crd.yaml:1:1 error crd `not-a-crd.yaml` holds no CustomResourceDefinition",
        "caches.yaml:2:1 note unchecked document 1, DatasetCache/good, `kind`: not checked",
    ];
    assert_eq!(found.len(), starts.len(), "{found:#?}");
    for (found, start) in found.iter().zip(starts) {
        assert!(
            found.starts_with(start),
            "{found}\n  does not start with\n{start}"
        );
    }
}

/// Kubeflow Trainer's own CEL rules, from its CRDs as trainc embeds them
/// (kubeflow/trainer v2.3.0, `manifests/base/crds/trainer.kubeflow.org_trainjobs.yaml`).
#[test]
fn trainjobs_meet_trainers_own_cel_rules() {
    let dir = temp_dir("verify-trainjob-cel");
    let job = |name: &str, managed_by: &str, dataset: &str| {
        format!(
            "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata:\n  name: {name}\nspec:\n  runtimeRef: {{name: torch-distributed}}\n  managedBy: {managed_by}\n  initializer:\n    dataset: {{storageUri: {dataset:?}}}\n---\n"
        )
    };
    let long = format!("a{}", "b".repeat(63));
    let stream = [
        job("fine", "kueue.x-k8s.io/multikueue", "hf://tatsu-lab/alpaca"),
        job("empty-uri", "trainer.kubeflow.org/trainjob-controller", ""),
        job(
            "Upper",
            "trainer.kubeflow.org/trainjob-controller",
            "s3://b",
        ),
        job(&long, "trainer.kubeflow.org/trainjob-controller", "s3://b"),
        job("uri", "example.com/mine", "imagenet"),
    ]
    .concat();
    std::fs::write(dir.join("jobs.yaml"), stream).unwrap();
    let output = trainc(
        &dir,
        &[
            "verify",
            "--format",
            "json",
            "--runtimes",
            "/dev/null",
            "jobs.yaml",
        ],
    );
    let rules: Vec<String> = said(&output)
        .into_iter()
        .filter(|f| f.contains(" error rule "))
        .collect();
    let expected = [
        "jobs.yaml:21:1 error rule document 3, TrainJob/Upper: Invalid value: metadata.name must match RFC 1035 DNS label format (`Upper`: it has uppercase letters)".to_owned(),
        format!("jobs.yaml:31:1 error rule document 4, TrainJob/{long}: Invalid value: metadata.name must be no more than 63 characters (`{long}`: it is 64 characters long; the limit is 63)"),
        "jobs.yaml:47:3 error rule document 5, TrainJob/uri, `spec.managedBy`: Invalid value: \"example.com/mine\": ManagedBy must be trainer.kubeflow.org/trainjob-controller or kueue.x-k8s.io/multikueue if set".to_owned(),
        "jobs.yaml:49:15 error rule document 5, TrainJob/uri, `spec.initializer.dataset.storageUri`: Invalid value: \"imagenet\": storageUri may be empty, or it must be a valid URI (scheme://...)".to_owned(),
    ];
    assert_eq!(rules, expected, "{rules:#?}");
    // v2.0.0 had no such name rules: its webhook checked the name.
    let output = trainc(
        &dir,
        &[
            "verify",
            "--format",
            "json",
            "--api-level",
            "v2.0",
            "jobs.yaml",
        ],
    );
    let found = said(&output);
    assert!(
        !found.iter().any(|f| f.contains("metadata.name must")),
        "{found:#?}"
    );
    assert!(
        found
            .iter()
            .any(|f| f
                .contains("TrainJob/Upper, `metadata.name`: the job name is not a DNS-1035 label")),
        "{found:#?}"
    );
}
