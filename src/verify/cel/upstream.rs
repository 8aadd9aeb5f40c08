//! Kubernetes' own test cases of CRD validation rules, as data
//! (`tests/cel/kubernetes/`, recorded from the real validator by
//! `tests/cluster/cmd/celcases`), each judged here and compared with the
//! real verdict: the rule compiles or not, the errors (type, field,
//! detail), the cost. A case that disagrees is listed in
//! `tests/cel/kubernetes/differences.txt` with how; a listed case that
//! agrees fails the test too, so the list only shrinks
//! (`TRAINC_BLESS=1 cargo test upstream` rewrites it: read the diff).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use serde_json::Value as Json;

use super::{Rules, Why};

pub(super) fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/cel/kubernetes")
}

/// An error as the API server gives it: its type, the field's path as
/// segments (`root.a[0][k]` is `root a 0 k`), the detail.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Said {
    kind: String,
    field: Vec<String>,
    detail: String,
}

/// What a case's validation gave.
#[derive(Debug, Default)]
struct Verdict {
    /// A rule that does not compile (the CRD is refused): its error.
    refused: Vec<String>,
    errors: Vec<Said>,
    /// The runtime cost spent.
    cost: Option<i64>,
}

/// `root.a[0][k]` as segments; a bracketed key may hold dots.
fn segments(path: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = path;
    while !rest.is_empty() {
        if let Some(inner) = rest.strip_prefix('[') {
            let end = inner.find(']').unwrap_or(inner.len());
            out.push(inner[..end].to_owned());
            rest = inner.get(end + 1..).unwrap_or("");
        } else {
            let rest_ = rest.strip_prefix('.').unwrap_or(rest);
            let end = rest_.find(['.', '[']).unwrap_or(rest_.len());
            out.push(rest_[..end].to_owned());
            rest = &rest_[end..];
        }
    }
    out
}

/// The server's verdict as recorded.
fn recorded(case: &Json) -> Verdict {
    let mut verdict = Verdict::default();
    for compiled in case["compiled"].as_array().into_iter().flatten() {
        if let Some(error) = compiled["error"].as_str() {
            verdict.refused.push(error.to_owned());
        }
        // The CRD is refused at creation for a messageExpression that does
        // not compile (apiextensions-apiserver v0.36.3 `pkg/apis/
        // apiextensions/validation/validation.go`), though the validator
        // alone falls back to the rule's message.
        if let Some(error) = compiled["messageExpressionError"].as_str() {
            verdict.refused.push(error.to_owned());
        }
    }
    for error in case["errors"].as_array().into_iter().flatten() {
        verdict.errors.push(Said {
            kind: error["type"].as_str().unwrap_or_default().to_owned(),
            field: segments(error["field"].as_str().unwrap_or_default()),
            detail: error["detail"].as_str().unwrap_or_default().to_owned(),
        });
    }
    verdict.errors.sort();
    verdict
}

/// trainc's verdict on the case.
fn judged(case: &Json) -> Verdict {
    let mut verdict = Verdict::default();
    let root = case["root"].as_bool().unwrap_or(false);
    let (rules, unusable) = Rules::of_node(&case["schema"], root);
    for u in unusable {
        if u.why == Why::Invalid {
            verdict.refused.push(u.message);
        }
    }
    if !verdict.refused.is_empty() {
        return verdict;
    }
    let old = case.get("oldObject");
    let budget = case["budget"].as_i64().unwrap_or(super::RUNTIME_BUDGET);
    // A test's validator made with a per-call limit of its own records it.
    let per_call = case["perCallLimit"]
        .as_u64()
        .unwrap_or(super::PER_CALL_LIMIT);
    let (failures, spent) = rules.validate(&case["object"], old, budget, per_call);
    verdict.cost = Some(spent);
    let root = segments(case["field"].as_str().unwrap_or("root"));
    for failure in failures {
        let mut field = root.clone();
        field.extend(
            failure
                .pointer
                .split('/')
                .skip(1)
                .map(|s| s.replace("~1", "/").replace("~0", "~")),
        );
        verdict.errors.push(Said {
            kind: failure.reason.kind().to_owned(),
            field,
            detail: failure.detail,
        });
    }
    verdict.errors.sort();
    verdict
}

/// Each compiled rule's estimated cost and most runs, as the server
/// recorded them, sorted.
fn estimates(case: &Json) -> Vec<(String, Option<u64>, u64)> {
    let mut out: Vec<_> = (case["compiled"].as_array().into_iter().flatten())
        .filter(|c| c["error"].is_null() && c["rule"].is_string())
        .map(|c| {
            (
                c["rule"].as_str().unwrap_or_default().to_owned(),
                c["maxCost"].as_u64(),
                c["maxCardinality"].as_u64().unwrap_or_default(),
            )
        })
        .collect();
    out.sort();
    out
}

/// trainc's estimates of the case's rules, sorted.
fn ours_estimated(case: &Json) -> Vec<(String, Option<u64>, u64)> {
    let root = case["root"].as_bool().unwrap_or(false);
    let (rules, _) = Rules::of_node(&case["schema"], root);
    let mut out = rules.estimates();
    out.sort();
    out
}

/// How a case disagrees, the first way found, or `None`.
fn difference(case: &Json) -> Option<&'static str> {
    let real = recorded(case);
    let ours = judged(case);
    if real.refused.is_empty() != ours.refused.is_empty() {
        return Some("compiles");
    }
    if !real.refused.is_empty() {
        // The server's report (`compilation failed: ERROR: <input>:1:4:
        // undefined field 'z'` and the caret) is in trainc's message but
        // for its caret lines (trainc may say more after it).
        let said = super::compile::first_line;
        let agree = real
            .refused
            .iter()
            .any(|r| ours.refused.iter().any(|o| o.contains(said(r))));
        return (!agree).then_some("message");
    }
    if estimates(case) != ours_estimated(case) {
        return Some("estimate");
    }
    if case["compileOnly"].as_bool() == Some(true) {
        // A compilation alone: it compiles and costs as the server's.
        return None;
    }
    if real.errors.is_empty() != ours.errors.is_empty() {
        return Some("verdict");
    }
    let kinds = |v: &Verdict| -> Vec<(String, Vec<String>)> {
        v.errors
            .iter()
            .map(|e| (e.kind.clone(), e.field.clone()))
            .collect()
    };
    if kinds(&real) != kinds(&ours) {
        return Some("field");
    }
    if real.errors != ours.errors {
        return Some("message");
    }
    // A cost Go's map order decides is not recorded (null).
    if !case["cost"].is_null() && case["cost"].as_i64() != ours.cost {
        return Some("cost");
    }
    None
}

/// A case's name: where it is in Kubernetes' tests and a hash of it.
fn name(case: &Json, line: &str) -> String {
    let source = case["source"].as_str().unwrap_or_default();
    let at = source
        .rsplit('/')
        .next()
        .and_then(|s| s.split_whitespace().next())
        .unwrap_or(source);
    named(at, line)
}

/// `label` and a hash of the case's line, which tells apart cases that
/// share a label.
pub(super) fn named(label: &str, line: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in line.bytes() {
        hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
    }
    format!("{label} {hash:016x}")
}

#[test]
fn kubernetes_own_rule_cases_agree_or_are_listed() {
    agree_or_listed("schema-cel.jsonl", "differences.txt", difference, name);
}

/// Judges each case of `tests/cel/kubernetes/<cases>` (how it differs,
/// if it does, and its name) and holds those that disagree to the list in
/// `<listed>` beside it: a case found and not listed fails, and so does
/// one listed and no longer found. `TRAINC_BLESS=1` rewrites the list,
/// keeping each case's reason (after `  # `).
pub(super) fn agree_or_listed(
    cases: &str,
    listed: &str,
    difference: fn(&Json) -> Option<&'static str>,
    name: fn(&Json, &str) -> String,
) {
    let text = std::fs::read_to_string(dir().join(cases)).unwrap();
    let mut found = BTreeMap::new();
    let mut total = 0;
    for line in text.lines() {
        let case: Json = serde_json::from_str(line).unwrap();
        total += 1;
        if let Some(how) = difference(&case) {
            found.insert(name(&case, line), how);
        }
    }
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    counts.insert("agree", total - found.len());
    for how in found.values() {
        *counts.entry(*how).or_default() += 1;
    }
    let mut listing = format!("# {total} cases:");
    for (how, n) in counts.iter().filter(|(_, n)| **n > 0) {
        let _ = write!(listing, " {how} {n},");
    }
    listing.pop();
    listing.push('\n');
    for (name, how) in &found {
        let _ = writeln!(listing, "{name} {how}");
    }
    let listed_path = dir().join(listed);
    let written = std::fs::read_to_string(&listed_path).unwrap_or_default();
    // A listed case may say why after `  # `; the reason stays with it.
    let reasons: BTreeMap<&str, &str> = written
        .lines()
        .filter_map(|l| l.split_once("  # "))
        .collect();
    if std::env::var_os("TRAINC_BLESS").is_some() {
        let kept: String = listing
            .lines()
            .map(|l| match reasons.get(l) {
                Some(reason) => format!("{l}  # {reason}\n"),
                None => format!("{l}\n"),
            })
            .collect();
        std::fs::write(&listed_path, kept).unwrap();
        return;
    }
    let listed_cases: Vec<&str> = written
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split_once("  # ").map_or(l, |(case, _)| case))
        .collect();
    let now: Vec<&str> = listing.lines().filter(|l| !l.starts_with('#')).collect();
    let new: Vec<_> = now.iter().filter(|l| !listed_cases.contains(l)).collect();
    let gone: Vec<_> = listed_cases.iter().filter(|l| !now.contains(l)).collect();
    assert!(
        new.is_empty() && gone.is_empty(),
        "{} case(s) disagree and are not listed: {new:#?}\n{} listed case(s) now agree or differ otherwise: {gone:#?}\n(TRAINC_BLESS=1 cargo test upstream rewrites tests/cel/kubernetes/{listed})",
        new.len(),
        gone.len()
    );
}

/// The cases of `tests/cel/kubernetes/<cases>` that disagree as
/// `TRAINC_CEL_SHOW` asks (`TRAINC_CEL_SHOW=how cargo test upstream_show
/// -- --nocapture`, or `library_show`), the first 40, each with its line;
/// none when it is not set.
pub(super) fn shown(
    cases: &str,
    difference: fn(&Json) -> Option<&'static str>,
) -> Vec<(Json, String)> {
    let Ok(how) = std::env::var("TRAINC_CEL_SHOW") else {
        return Vec::new();
    };
    let text = std::fs::read_to_string(dir().join(cases)).unwrap();
    (text.lines())
        .map(|line| (serde_json::from_str::<Json>(line).unwrap(), line.to_owned()))
        .filter(|(case, _)| difference(case) == Some(how.as_str()))
        .take(40)
        .collect()
}

/// The schema-cel cases `TRAINC_CEL_SHOW` asks for, each with both
/// verdicts.
#[test]
#[allow(clippy::print_stdout)]
fn upstream_show() {
    for (case, line) in shown("schema-cel.jsonl", difference) {
        let rules: Vec<&str> = case["compiled"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["rule"].as_str())
            .collect();
        println!("== {} {rules:?}", name(&case, &line));
        println!(
            "   object {}",
            case["object"]
                .to_string()
                .chars()
                .take(300)
                .collect::<String>()
        );
        println!(
            "   real  cost {} {:?} {:?}",
            case["cost"],
            recorded(&case).refused,
            recorded(&case).errors
        );
        let ours = judged(&case);
        println!(
            "   ours  cost {:?} {:?} {:?}",
            ours.cost, ours.refused, ours.errors
        );
        if estimates(&case) != ours_estimated(&case) {
            println!("   real  estimates {:?}", estimates(&case));
            println!("   ours  estimates {:?}", ours_estimated(&case));
            println!("   schema {}", case["schema"]);
        }
    }
}
