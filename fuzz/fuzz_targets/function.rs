//! `trainc fn` on any bytes. Properties: no panic; the output is one
//! ResourceList that reads as YAML; every input item comes back with the
//! same value (where serde-saphyr, an independent reader, can read the
//! input); on failure nothing is added.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use trainc::source::SourceId;
use trainc::yaml::{Limits, load};

fuzz_target!(|data: &[u8]| {
    let output = trainc::krm::run(data.to_vec());
    let limits = Limits {
        depth: 1000,
        documents: 1,
        nodes: 100_000_000,
        object_nodes: 100_000_000,
        aliased: 100_000_000,
        aliased_bytes: usize::MAX,
    };
    let documents = load(SourceId(0), &output.resource_list, limits)
        .unwrap_or_else(|e| panic!("the output is not YAML: {e:?}\n{}", output.resource_list));
    assert_eq!(documents.len(), 1, "one ResourceList");
    assert_eq!(
        documents[0].get("kind").and_then(|k| k.scalar()),
        Some("ResourceList")
    );
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // Items as an independent reader sees them, when it can read the input
    // (it cannot read mappings keyed by null, for one).
    let Ok(input) = serde_saphyr::from_str::<Value>(text) else {
        return;
    };
    let Some(items) = input.get("items").and_then(Value::as_array) else {
        return;
    };
    if !items.iter().all(Value::is_object) || input["kind"] != "ResourceList" {
        return;
    }
    let list: Value = serde_saphyr::from_str(&output.resource_list)
        .unwrap_or_else(|e| panic!("the output does not read as the input did: {e}\n{}", output.resource_list));
    let out_items = list["items"].as_array().expect("items is a list");
    for item in items {
        let made_here = item
            .pointer("/metadata/annotations/config.kubernetes.io~1origin")
            .is_some();
        assert!(
            made_here || out_items.contains(item),
            "an input item is missing or changed: {item}\n{}",
            output.resource_list
        );
    }
    if output.failed {
        assert!(out_items.len() <= items.len(), "objects added despite an error");
    }
});
