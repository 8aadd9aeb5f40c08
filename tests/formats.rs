//! Every `check --format` on the same broken spec, pinned byte for byte: the
//! formats are an interface CI systems and editors parse (README, "Output
//! formats"). `tests/formats/broken.toml` holds an error with help, an error
//! with a second location, warnings and a non-ASCII value.

use crate::support::{compare, root, text, trainc};

/// Which stream each format writes to, and the file that pins it.
const FORMATS: &[(&str, Stream, &str)] = &[
    ("human", Stream::Stderr, "broken.human.txt"),
    ("json", Stream::Stdout, "broken.jsonl"),
    ("github", Stream::Stdout, "broken.github.txt"),
    ("sarif", Stream::Stdout, "broken.sarif"),
];

#[derive(Clone, Copy, PartialEq)]
enum Stream {
    Stdout,
    Stderr,
}

#[test]
fn each_format_is_pinned_on_the_same_broken_spec() {
    let dir = root().join("tests/formats");
    let mut failures = Vec::new();
    for &(format, stream, expected) in FORMATS {
        let output = trainc(&dir, &["check", "--format", format, "broken.toml"]);
        assert_eq!(output.status.code(), Some(1), "{format}: exit 1 on errors");
        let (written, other) = match stream {
            Stream::Stdout => (&output.stdout, &output.stderr),
            Stream::Stderr => (&output.stderr, &output.stdout),
        };
        assert!(
            other.is_empty(),
            "{format} writes one stream only: {}",
            text(other)
        );
        if let Some(diff) = compare(&dir.join(expected), &text(written)) {
            failures.push(diff);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The same five diagnostics in every machine format, in the same order, at
/// the same places.
#[test]
fn machine_formats_agree_with_each_other() {
    let dir = root().join("tests/formats");
    let run =
        |format: &str| text(&trainc(&dir, &["check", "--format", format, "broken.toml"]).stdout);
    let json: Vec<serde_json::Value> = run("json")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let github: Vec<String> = run("github").lines().map(str::to_owned).collect();
    let sarif: serde_json::Value = serde_json::from_str(&run("sarif")).unwrap();
    let run0 = &sarif["runs"][0];
    let results = run0["results"].as_array().unwrap();
    assert_eq!(json.len(), 5);
    assert_eq!((github.len(), results.len()), (json.len(), json.len()));
    for ((j, g), s) in json.iter().zip(&github).zip(results) {
        let (line, col) = (&j["line"], &j["col"]);
        assert!(
            g.starts_with(&format!(
                "::{} file=broken.toml,line={line},col={col},",
                j["severity"].as_str().unwrap()
            )),
            "{g}"
        );
        assert_eq!(s["ruleId"], j["code"]);
        assert_eq!(s["level"], j["severity"]);
        let region = &s["locations"][0]["physicalLocation"]["region"];
        assert_eq!((&region["startLine"], &region["startColumn"]), (line, col));
        let rule = &run0["tool"]["driver"]["rules"]
            [usize::try_from(s["ruleIndex"].as_u64().unwrap()).unwrap()];
        assert_eq!(rule["id"], j["code"]);
        assert!(!rule["fullDescription"]["text"].as_str().unwrap().is_empty());
        let message = s["message"]["text"].as_str().unwrap();
        assert!(message.starts_with(j["message"].as_str().unwrap()));
        if let Some(help) = j["help"].as_str() {
            assert!(message.ends_with(&format!("\nhelp: {help}")));
        }
    }
}

/// No diagnostics: an empty JSON and GitHub stream, and a SARIF log with an
/// empty `results` (code scanning then closes earlier alerts).
#[test]
fn a_clean_spec_gives_empty_machine_output() {
    let dir = root().join("examples");
    for format in ["json", "github"] {
        let output = trainc(&dir, &["check", "--format", format, "cpu-minimal.toml"]);
        assert_eq!(output.status.code(), Some(0));
        assert!(output.stdout.is_empty() && output.stderr.is_empty());
    }
    let output = trainc(&dir, &["check", "--format", "sarif", "cpu-minimal.toml"]);
    assert_eq!(output.status.code(), Some(0));
    let sarif: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(sarif["version"], "2.1.0");
    assert_eq!(sarif["runs"][0]["results"], serde_json::json!([]));
}
