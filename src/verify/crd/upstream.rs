//! Kubernetes' own test cases of the schema checks beside CEL
//! (`tests/cel/kubernetes/validation.jsonl`, `schema-listtype.jsonl`,
//! `schema-objectmeta.jsonl`, recorded from the real code by
//! `tests/cluster/cmd/celcases`), each judged here and compared with the
//! real errors: type, field and detail. Every case agrees.

use std::path::PathBuf;

use serde_json::Value as Json;

use super::field::FieldError;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/cel/kubernetes")
}

type Said = (String, String, String);

fn recorded(case: &Json) -> Vec<Said> {
    let mut out: Vec<Said> = (case["errors"].as_array().into_iter().flatten())
        .map(|e| {
            let text = |k: &str| e[k].as_str().unwrap_or_default().to_owned();
            (text("type"), text("field"), text("detail"))
        })
        .collect();
    out.sort();
    out
}

fn ours(errors: Vec<FieldError>) -> Vec<Said> {
    let mut out: Vec<Said> = errors
        .into_iter()
        .map(|e| {
            (
                e.kind.name().to_owned(),
                e.field_text().to_owned(),
                e.detail,
            )
        })
        .collect();
    out.sort();
    out
}

/// trainc's errors on a case of `file`.
fn judged(file: &str, case: &Json) -> Vec<Said> {
    match file {
        "validation" => ours(super::openapi::validate(&case["schema"], &case["object"])),
        "schema-listtype" => ours(super::listtype::validate(
            &case["schema"],
            &case["object"],
            case["field"].as_str().unwrap_or_default(),
        )),
        _ => ours(super::objectmeta::validate(
            &case["schema"],
            &case["object"],
            case["root"] == true,
        )),
    }
}

#[test]
fn kubernetes_own_schema_cases_agree() {
    let mut disagree = Vec::new();
    for file in ["validation", "schema-listtype", "schema-objectmeta"] {
        let text = std::fs::read_to_string(dir().join(format!("{file}.jsonl"))).unwrap();
        for line in text.lines() {
            let case: Json = serde_json::from_str(line).unwrap();
            let (real, ours) = (recorded(&case), judged(file, &case));
            if real != ours {
                disagree.push(format!(
                    "{file}: {}\n  object {}\n  real {real:?}\n  ours {ours:?}",
                    case["source"], case["object"]
                ));
            }
        }
    }
    assert!(
        disagree.is_empty(),
        "{} case(s) disagree:\n{}",
        disagree.len(),
        disagree.join("\n")
    );
}
