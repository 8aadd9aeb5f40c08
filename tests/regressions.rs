//! The disagreements the control-plane suites found between `trainc verify`
//! and the real API server, once mended (`tests/cluster/regressions/`):
//! each file is a case the differential suite made, with the server's
//! verdict in its header (`# the server: refused FIELD, …` or
//! `# the server: admitted`) for the document it mutated (`document N`).
//! `trainc verify` must give that verdict, and for a refusal name a field
//! the server names (or one inside or around it), without a cluster.

use serde_json::Value;

use crate::support::{field_of, root, text, trainc};

/// trainc's errors about what follows admission, not the server's verdict.
const AFTER_ADMISSION: [&str; 2] = ["trainc::verify::operator", "trainc::verify::admitted"];

/// A field as both sides name it: map keys as fields, each part's first
/// letter lowercase, no quotes or leading dot.
fn normal(field: &str) -> String {
    let mut out = String::new();
    let mut rest = field.trim_start_matches('.').replace(['"', '\''], "");
    // `pytorchReplicaSpecs[Worker]` is `pytorchReplicaSpecs.Worker`.
    while let Some(open) = rest.find('[') {
        let close = rest[open..].find(']').map_or(rest.len(), |c| open + c);
        let key = &rest[open + 1..close];
        let part = if key.starts_with(|c: char| c.is_ascii_alphabetic()) {
            format!(".{key}")
        } else {
            format!("[{key}]")
        };
        out.push_str(&rest[..open]);
        out.push_str(&part);
        rest = rest[(close + 1).min(rest.len())..].to_owned();
    }
    out.push_str(&rest);
    out.split('.')
        .map(|part| {
            let mut chars = part.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_ascii_lowercase().to_string() + chars.as_str()
            })
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// One field is the other, or inside it.
fn near(a: &str, b: &str) -> bool {
    let (a, b) = (normal(a), normal(b));
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    long == short
        || (long.starts_with(&short) && matches!(long.as_bytes()[short.len()], b'.' | b'['))
}

#[test]
fn verify_gives_the_servers_verdict_on_every_mended_disagreement() {
    let dir = root().join("tests/cluster/regressions");
    let mut checked = 0;
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml") && !p.ends_with("known.yaml"))
        .collect();
    files.sort();
    for file in files {
        let source = std::fs::read_to_string(&file).unwrap();
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let document: usize = source
            .lines()
            .next()
            .and_then(|l| l.split_once(", document "))
            .and_then(|(_, rest)| rest.split_once(':'))
            .and_then(|(n, _)| n.parse().ok())
            .unwrap_or_else(|| panic!("{name}: no `document N` in its first line"));
        let server = source
            .lines()
            .find_map(|l| l.strip_prefix("# the server: "))
            .unwrap_or_else(|| panic!("{name}: no `# the server:` line"));
        let (verdict, fields) = server.split_once(' ').unwrap_or((server, ""));
        let fields: Vec<&str> = fields.split(", ").filter(|f| !f.is_empty()).collect();
        let output = trainc(&dir, &["verify", "--format", "json", &name]);
        let prefix = format!("document {document}, ");
        let errors: Vec<Value> = text(&output.stdout)
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|d| d["severity"] == "error")
            .filter(|d| !AFTER_ADMISSION.contains(&d["code"].as_str().unwrap_or_default()))
            .filter(|d| {
                d["message"]
                    .as_str()
                    .is_some_and(|m| m.starts_with(&prefix))
            })
            .collect();
        let said: Vec<&str> = errors
            .iter()
            .filter_map(|d| d["message"].as_str())
            .collect();
        match verdict {
            "admitted" => assert!(
                errors.is_empty(),
                "{name}: the server admits it; trainc: {said:?}"
            ),
            "refused" => {
                assert!(
                    !errors.is_empty(),
                    "{name}: the server refuses it at {fields:?}; trainc admits it"
                );
                let named: Vec<&str> = said.iter().filter_map(|m| field_of(m)).collect();
                assert!(
                    fields.is_empty() || named.iter().any(|a| fields.iter().any(|b| near(a, b))),
                    "{name}: the server refuses it at {fields:?}; trainc at {named:?}"
                );
            }
            other => panic!("{name}: verdict `{other}`"),
        }
        checked += 1;
    }
    assert!(checked >= 30, "{checked} cases");
}

#[test]
fn fields_are_compared_as_both_sides_spell_them() {
    assert!(near(
        "spec.pytorchReplicaSpecs[Worker].replicas",
        "spec.pytorchReplicaSpecs.Worker.replicas"
    ));
    assert!(near(".spec.RuntimeRef", "spec.runtimeRef.name"));
    assert!(near(
        "spec.template.spec.containers[0].resources.requests",
        "spec.template.spec.containers[0].resources.requests.cpu"
    ));
    assert!(!near("spec.replicatedJobs", "spec.replicas"));
    assert!(!near("spec.ports[0].port", "spec.ports[1].port"));
}
