//! `trainc check` on every spec in `tests/check/`: the exit status and the
//! whole rendering are pinned in `<case>.expected` next to the spec.
//!
//! Adding a case means adding files: `tests/check/<area>-<what>.toml` (or
//! `.yaml`), optionally `<case>.args` with extra arguments (`-O`, `--set`), and
//! its expectation, written by `TRAINC_BLESS=1 cargo test` and then read line
//! by line before committing.

use std::collections::BTreeSet;
use std::path::PathBuf;

use crate::support::{compare, root, text, trainc};

fn cases() -> Vec<PathBuf> {
    let dir = root().join("tests/check");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/check exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| {
            p.extension()
                .is_some_and(|e| e == "toml" || e == "yaml" || e == "yml")
        })
        .collect();
    cases.sort();
    cases
}

/// `trainc check FLAGS [ARGS] CASE`, where ARGS come from `<case>.args`
/// (one per line; overlays live in `tests/check/overlays/`).
fn check(case: &std::path::Path, flags: &[&str]) -> std::process::Output {
    let name = case.file_name().unwrap().to_str().unwrap();
    let extra = std::fs::read_to_string(case.with_extension("args")).unwrap_or_default();
    let mut args: Vec<&str> = vec!["check"];
    args.extend(flags);
    args.extend(extra.lines().map(str::trim).filter(|l| !l.is_empty()));
    args.push(name);
    trainc(case.parent().unwrap(), &args)
}

/// [`check`] of `case`, rendered: its exit status and what it printed.
fn render(case: &std::path::Path) -> String {
    let name = case.file_name().unwrap().to_str().unwrap();
    let output = check(case, &[]);
    let status = output
        .status
        .code()
        .expect("trainc exits normally, not by a signal");
    assert!(
        output.stdout.is_empty(),
        "{name}: human format prints nothing on stdout"
    );
    format!("exit: {status}\n{}", text(&output.stderr))
}

#[test]
fn every_case_renders_as_expected() {
    let mut failures = Vec::new();
    for case in cases() {
        let actual = render(&case);
        if let Some(diff) = compare(&case.with_extension("expected"), &actual) {
            failures.push(diff);
        }
    }
    assert!(
        failures.is_empty(),
        "{} case(s) differ; rerun with TRAINC_BLESS=1 after reading the diff\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Cases named `*-fail*` must fail, `*-pass*` and `*-warn*` must pass.
#[test]
fn case_names_match_their_outcome() {
    for case in cases() {
        let name = case.file_stem().unwrap().to_str().unwrap().to_owned();
        let exit = render(&case).lines().next().unwrap().to_owned();
        if name.contains("-fail") {
            assert_eq!(exit, "exit: 1", "{name} must fail");
        } else {
            assert_eq!(exit, "exit: 0", "{name} must pass");
        }
    }
}

/// Every code trainc can emit is shown by at least one case, except the few
/// that need inputs too large or too odd for a file in the repository; those
/// are covered by the named CLI tests.
#[test]
fn every_code_has_a_failing_case() {
    let covered_elsewhere = [
        "trainc::source::too_large", // cli::limits_reject_huge_binary_and_deep_input_without_crashing
        "trainc::source::not_utf8",  // the same
        "trainc::source::unreadable", // cli::an_unreadable_file_is_exit_2_and_the_others_are_still_checked
        "trainc::metadata::too_large", // cli::annotations_over_256_kib_are_rejected
        "trainc::code::too_large", // code::more_than_a_configmap_holds_is_an_error_that_says_to_build_an_image
        "trainc::krm::local_config", // integrations::a_previous_run_is_replaced_and_an_applied_spec_is_a_warning
        "trainc::schema::other",     // only when the schema and the types disagree: a bug
        "trainc::verify::schema",    // verify::tests (unit): trainc's own output never fails them
        "trainc::verify::webhook",   // the same
        "trainc::verify::operator",  // the same
        "trainc::verify::admitted", // verify::the_pytorchjob_webhook_rules_are_the_operators, verify::runtimes_are_checked_by_the_webhook_of_their_release
        "trainc::verify::apiserver", // the same; and tests/adversarial (run-* cases)
        "trainc::run::invalid",     // tests/adversarial (run-* cases): `run` has no check case
        "trainc::run::cannot_start", // the same; run::a_port_another_process_holds_is_named_before_the_run_starts
        "trainc::run::usage",        // run::each_class_of_error_has_its_code_and_exit_status
        "trainc::run::io",           // the same
        "trainc::run::missing",      // the same
        "trainc::verify::duplicate", // verify::the_same_object_twice_is_a_warning
        "trainc::verify::unchecked", // verify::a_rendered_repository_verifies_with_its_other_kinds_listed
        "trainc::verify::rule", // verify_crd::a_crds_kinds_are_checked_by_its_schema_and_its_cel_rules, verify_crd::trainjobs_meet_trainers_own_cel_rules
        "trainc::verify::crd",  // verify_crd::a_crd_that_cannot_be_used_says_why_at_its_line
        "trainc::verify::unserved", // verify::tests (unit): built_in_kinds_are_checked_and_other_kinds_are_not_checked
        "trainc::import::invalid", // import::what_cannot_become_a_spec_is_an_error_and_nothing_is_written
        "trainc::import::dropped", // import::hand_written_manifests_import_to_the_expected_specs
        "trainc::convert::left_out", // convert::yaml_to_toml_keeps_values_their_type_and_comments_their_place: `convert` has no check case
        "trainc::convert::no_form",  // convert::what_a_form_cannot_say_is_an_error
    ];
    let mut seen = BTreeSet::new();
    // `trainc migrate`'s cases say theirs in `tests/migrate/*.stderr`.
    let migrate_cases = std::fs::read_dir(root().join("tests/migrate"))
        .unwrap()
        .map(|e| e.unwrap().path().with_extension("expected"))
        .filter(|p| p.with_extension("stderr").exists());
    for case in cases().into_iter().chain(migrate_cases) {
        let expected = std::fs::read_to_string(case.with_extension("expected"))
            .or_else(|_| std::fs::read_to_string(case.with_extension("stderr")))
            .unwrap_or_default();
        for line in expected.lines() {
            if let Some(code) = line
                .trim()
                .strip_prefix("trainc::")
                .filter(|c| !c.contains(' '))
            {
                seen.insert(format!("trainc::{code}"));
            }
        }
    }
    let missing: Vec<&str> = trainc::diagnostic::codes::ALL
        .iter()
        .copied()
        .filter(|code| !seen.contains(*code) && !covered_elsewhere.contains(code))
        .collect();
    assert!(
        missing.is_empty(),
        "codes without a case in tests/check: {missing:?}"
    );
}

/// Every rule's passing side: each `*-pass*` case must print no diagnostic at all.
#[test]
fn passing_cases_are_clean() {
    for case in cases() {
        let name = case.file_stem().unwrap().to_str().unwrap().to_owned();
        if name.contains("-pass") {
            let rendered = render(&case);
            assert!(
                rendered.ends_with("checked 1 file: 0 errors, 0 warnings\n"),
                "{name}:\n{rendered}"
            );
        }
    }
}

/// Every diagnostic pinned anywhere in the test corpus speaks to a user: no
/// errno, no `Some(..)`, no regular expression (see `support::internals`).
/// `support::trainc` holds every other run of trainc to the same rule.
#[test]
fn no_expectation_shows_internals() {
    fn walk(dir: &std::path::Path, found: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir)
            .expect("readable directory")
            .flatten()
        {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, found);
            } else if path
                .extension()
                .is_some_and(|e| e == "expected" || e == "stderr" || e == "txt")
            {
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                if let Some(leak) = crate::support::internals(&text) {
                    found.push(format!("{}: `{leak}`", path.display()));
                }
            }
        }
    }
    let mut found = Vec::new();
    walk(&root().join("tests"), &mut found);
    walk(&root().join("golden"), &mut found);
    assert!(
        found.is_empty(),
        "internal forms in expectations:\n{}",
        found.join("\n")
    );
}

/// Every error a check case pins says how to fix it: a `help:` line. An error
/// that only restates the rule leaves a newcomer guessing.
#[test]
fn every_error_has_a_help() {
    let mut bare = Vec::new();
    for case in cases() {
        let expected = std::fs::read_to_string(case.with_extension("expected")).unwrap_or_default();
        for block in expected.split("\ntrainc::").skip(1) {
            let head = block.lines().find(|l| l.contains('×')).unwrap_or("");
            if head.contains(": error: ") && !block.contains("\n  help: ") {
                bare.push(format!("{}: {}", case.display(), head.trim()));
            }
        }
    }
    assert!(
        bare.is_empty(),
        "errors without a help:\n{}",
        bare.join("\n")
    );
}

/// No case's diagnostics hold a knock-on: a rule's diagnostic that names a
/// field (`resources.gpus`) the schema found at fault (a type error there),
/// or that a misspelt or misplaced key was meant to be (`gpu` in
/// `[resources]`, a top-level `gpus`), says something false (that the field
/// is unset) ahead of or beside the real error. Read from what `check
/// --format json` prints, not from how trainc decides.
#[test]
fn no_case_reports_a_knock_on_of_a_key_or_type_error() {
    let mut found = Vec::new();
    let mut with_schema_errors = 0;
    for case in cases() {
        let name = case.file_name().unwrap().to_str().unwrap();
        let output = check(&case, &["--format", "json"]);
        let diagnostics: Vec<serde_json::Value> = text(&output.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        let field = |d: &serde_json::Value, key: &str| d[key].as_str().unwrap_or("").to_owned();
        let (schema, rules): (Vec<_>, Vec<_>) = diagnostics
            .iter()
            .partition(|d| field(d, "code").starts_with("trainc::schema::"));
        let at_fault: Vec<String> = schema
            .iter()
            .filter_map(|d| faulty_field(&field(d, "message"), &field(d, "help")))
            .collect();
        if !at_fault.is_empty() {
            with_schema_errors += 1;
        }
        for d in rules {
            let said = format!("{} {}", field(d, "message"), field(d, "help"));
            for path in &at_fault {
                let forms = [
                    format!("`{path}`"),
                    format!("`{path} "),
                    format!("`{path}."),
                    format!("`[{path}]"),
                ];
                if forms.iter().any(|f| said.contains(f.as_str())) {
                    found.push(format!(
                        "{name}: {} names `{path}`: {said}",
                        field(d, "code")
                    ));
                }
            }
        }
    }
    assert!(
        with_schema_errors > 20,
        "only {with_schema_errors} cases have key or type errors"
    );
    assert!(found.is_empty(), "knock-ons:\n{}", found.join("\n"));
}

/// The field a schema error is about, as its message and help name it.
fn faulty_field(message: &str, help: &str) -> Option<String> {
    let quoted = |text: &str, n: usize| text.split('`').nth(2 * n + 1).map(str::to_owned);
    if let Some(rest) = message.strip_prefix("unknown key ") {
        let table = if rest.ends_with("in the spec") {
            None
        } else {
            quoted(rest, 1)
        };
        let within = |key: String| table.as_ref().map_or(key.clone(), |t| format!("{t}.{key}"));
        if help.starts_with("rename ") {
            return quoted(help, 1).map(within);
        }
        if help.contains("belongs in") {
            return Some(format!("{}.{}", quoted(help, 1)?, quoted(help, 0)?));
        }
        // A Kubernetes name: "the spec's key is `KEY`", "the spec's key for
        // `NAME` is `KEY`", "… spec keys: `KEY` (…".
        if let Some(at) = help
            .find("the spec's key")
            .or_else(|| help.find("spec keys: "))
        {
            let said = &help[at..];
            let after = said.find(" is `").map_or(said, |i| &said[i..]);
            return quoted(after, 0);
        }
        return table;
    }
    if message.contains(" is missing the required key ") {
        // "`TABLE` is missing the required key `KEY`", or "the spec is missing ...".
        let in_table = message.starts_with('`');
        let key = quoted(message, usize::from(in_table))?;
        return Some(if in_table {
            format!("{}.{key}", quoted(message, 0)?)
        } else {
            key
        });
    }
    message
        .starts_with('`')
        .then(|| quoted(message, 0))
        .flatten()
}
