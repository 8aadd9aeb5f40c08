//! The committed `schemas/trainspec.schema.json` must equal the schema
//! generated from `src/spec.rs`; `TRAINC_BLESS=1` rewrites it.

use crate::support::{compare, root, text, trainc};

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
