//! The command line as a user meets it: output formats, exit statuses, limits.

use std::path::{Path, PathBuf};

use crate::support::{root, run_with_stdin, temp_dir, text, trainc};

const GOOD: &str =
    "name = \"demo\"\nimage = \"ghcr.io/acme/train:1.4\"\nscript = \"/app/train.py\"\n";

fn write(dir: &Path, name: &str, bytes: impl AsRef<[u8]>) {
    std::fs::write(dir.join(name), bytes).unwrap();
}

#[test]
fn json_format_is_one_object_per_diagnostic_on_stdout() {
    let dir = root().join("tests/check");
    let output = trainc(
        &dir,
        &["check", "--format", "json", "many-problems-fail.toml"],
    );
    assert_eq!(output.status.code(), Some(1));
    assert!(
        output.stderr.is_empty(),
        "json mode keeps stderr clean: {}",
        text(&output.stderr)
    );
    let lines: Vec<serde_json::Value> = text(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    // 7 errors and a warning: `nProcPerNode = "gpu"` does not also say
    // `resources.gpus` is unset, which is `gpu` misspelt.
    assert_eq!(lines.len(), 8);
    let first = &lines[0];
    assert_eq!(first["file"], "many-problems-fail.toml");
    assert_eq!(
        (first["line"].as_u64(), first["col"].as_u64()),
        (Some(1), Some(8))
    );
    assert_eq!(first["severity"], "error");
    assert_eq!(first["code"], "trainc::name::invalid");
    assert_eq!(first["help"], "try `mnist-ddp`");
    for line in &lines {
        let keys: Vec<&str> = line
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            ["file", "line", "col", "severity", "code", "message", "help"]
        );
    }
    assert!(
        lines
            .iter()
            .any(|l| l["severity"] == "warning" && l["code"] == "trainc::env::literal_secret")
    );
}

#[test]
fn github_format_writes_workflow_annotations() {
    let dir = root().join("tests/check");
    let output = trainc(
        &dir,
        &[
            "check",
            "--format",
            "github",
            "image-warn-unpinned.toml",
            "name-fail-invalid.toml",
        ],
    );
    assert_eq!(output.status.code(), Some(1));
    let out = text(&output.stdout);
    assert!(out.contains("::warning file=image-warn-unpinned.toml,line=2,col=9,title=trainc%3A%3Aimage%3A%3Aunpinned::`image` is not pinned: without a tag it means `latest`, which moves%0Ahelp: "), "{out}");
    assert!(
        out.contains("::error file=name-fail-invalid.toml,line=1,col=8,"),
        "{out}"
    );
}

#[test]
fn warnings_alone_exit_zero() {
    let output = trainc(
        &root().join("tests/check"),
        &["check", "image-warn-unpinned.toml"],
    );
    assert_eq!(output.status.code(), Some(0));
    assert!(text(&output.stderr).contains("warning: `image` is not pinned"));
}

#[test]
fn every_file_is_checked_and_reported() {
    let dir = root().join("tests/check");
    let output = trainc(
        &dir,
        &[
            "check",
            "name-fail-invalid.toml",
            "env-pass.toml",
            "ports-fail-reserved.toml",
        ],
    );
    assert_eq!(output.status.code(), Some(1));
    let err = text(&output.stderr);
    assert!(err.contains("name-fail-invalid.toml:1:8: error"), "{err}");
    assert!(err.contains("ports-fail-reserved.toml:6:1: error"), "{err}");
    assert!(
        err.ends_with("checked 3 files: 2 errors, 0 warnings\n"),
        "{err}"
    );
}

#[test]
fn an_unreadable_file_is_exit_2_and_the_others_are_still_checked() {
    let dir = root().join("tests/check");
    let output = trainc(
        &dir,
        &["check", "no-such-file.toml", "name-fail-invalid.toml"],
    );
    assert_eq!(output.status.code(), Some(2));
    let err = text(&output.stderr);
    assert!(
        err.contains("no-such-file.toml:1:1: error: cannot read `no-such-file.toml`: no such file"),
        "{err}"
    );
    assert!(err.contains("name-fail-invalid.toml:1:8: error"), "{err}");
    assert!(
        err.ends_with("checked 2 files: 2 errors, 0 warnings\n"),
        "counted: {err}"
    );
    let output = trainc(&dir, &["check", "."]);
    assert_eq!(output.status.code(), Some(2), "a directory is not a spec");
    assert!(text(&output.stderr).contains("is a directory"));
    // And in JSON, one line each, like any other problem.
    let output = trainc(
        &dir,
        &["check", "--format", "json", "no-such-file.toml", "."],
    );
    assert_eq!(output.status.code(), Some(2));
    let lines: Vec<serde_json::Value> = text(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert!(
        lines
            .iter()
            .all(|l| l["code"] == "trainc::source::unreadable")
    );
}

/// `check` takes what `build` takes, and finds what `build` would refuse:
/// `--target`, `--api-level`, `--verify`, overlays and `--set`.
#[test]
fn check_checks_what_build_builds() {
    let dir = root().join("tests/check");
    let plain = trainc(&dir, &["check", "trainjob-pass.toml"]);
    assert_eq!(plain.status.code(), Some(0), "{}", text(&plain.stderr));
    for extra in [
        &["--target", "pytorchjob", "--verify"][..],
        &["--api-level", "v2.1", "--verify"],
        &["--api-level", "v2.0", "--verify"],
        &["--verify"],
    ] {
        let mut args = vec!["check", "trainjob-pass.toml"];
        args.extend_from_slice(extra);
        let checked = trainc(&dir, &args);
        let mut build_args = vec!["build", "trainjob-pass.toml"];
        build_args.extend_from_slice(extra);
        let built = trainc(&dir, &build_args);
        assert_eq!(
            checked.status.code(),
            built.status.code(),
            "{extra:?}: {}",
            text(&checked.stderr)
        );
    }
    let cpu_variant = |set: &str| {
        trainc(
            &root(),
            &[
                "check",
                "examples/gpu-multinode.toml",
                "-O",
                "overlays/cpu.toml",
                "--set",
                set,
            ],
        )
    };
    let cpu = cpu_variant("ompThreads=8");
    assert_eq!(cpu.status.code(), Some(0), "{}", text(&cpu.stderr));
    let typo = cpu_variant("ompThread=8");
    assert_eq!(typo.status.code(), Some(1));
    assert!(
        text(&typo.stderr).contains("did you mean `--set ompThreads=...`?"),
        "{}",
        text(&typo.stderr)
    );
}

#[test]
fn usage_errors_exit_2() {
    for args in [
        &["check"][..],
        &["frobnicate"],
        &["check", "--format", "xml", "a.toml"],
    ] {
        let output = trainc(&root(), args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(output.stdout.is_empty());
    }
}

#[test]
fn standard_input_is_read_for_dash() {
    for (input, expected) in [
        (GOOD, 0),
        ("name: demo\nimage: ghcr.io/acme/train:1.4\n", 1),
    ] {
        let output = run_with_stdin(
            Path::new(env!("CARGO_BIN_EXE_trainc")),
            &["check", "-"],
            input.as_bytes(),
        );
        assert_eq!(
            output.status.code(),
            Some(expected),
            "{}",
            text(&output.stderr)
        );
        if expected == 1 {
            assert!(
                text(&output.stderr)
                    .contains("<stdin>:1:1: error: the spec does not say what to run")
            );
        }
    }
}

/// A spec given to the commands that read manifests says it is a spec, and
/// names `check` for it.
#[test]
fn a_spec_given_where_manifests_are_read_says_to_check_it() {
    let dir = temp_dir("cli-spec-not-manifest");
    std::fs::write(dir.join("train.toml"), GOOD).unwrap();
    std::fs::write(
        dir.join("train.yaml"),
        "name: demo\nimage: ghcr.io/acme/train:1.4\nscript: /app/train.py\n",
    )
    .unwrap();
    for command in ["verify", "import", "migrate"] {
        for file in ["train.toml", "train.yaml"] {
            let output = trainc(&dir, &[command, file]);
            assert_eq!(output.status.code(), Some(1), "{command} {file}");
            assert!(output.stdout.is_empty(), "{command} {file}");
            let stderr = text(&output.stderr);
            assert!(
                stderr.contains(&format!("`{file}` is a trainc spec"))
                    && stderr.contains(&format!("trainc check {file}")),
                "{command} {file}: {stderr}"
            );
        }
    }
}

/// An empty standard input (the command before the pipe failed) is said
/// as that, not as a spec missing `name`.
#[test]
fn an_empty_standard_input_says_so() {
    for command in ["check", "build", "describe"] {
        let output = run_with_stdin(
            Path::new(env!("CARGO_BIN_EXE_trainc")),
            &[command, "-"],
            b"",
        );
        assert_eq!(output.status.code(), Some(1), "{command}");
        assert!(output.stdout.is_empty(), "{command}");
        let stderr = text(&output.stderr);
        assert!(
            stderr.contains("the standard input is empty") && stderr.contains("pipefail"),
            "{command}: {stderr}"
        );
        assert!(!stderr.contains("`name`"), "{command}: {stderr}");
    }
}

#[test]
fn limits_reject_huge_binary_and_deep_input_without_crashing() {
    let dir = temp_dir("cli-limits");
    let mut big = GOOD.to_owned();
    big.push_str("# ");
    big.push_str(&"x".repeat(4 * 1024 * 1024));
    write(&dir, "big.toml", big);
    write(
        &dir,
        "binary.toml",
        b"name = \"demo\"\nimage = \"\xff\xfe\"\n",
    );
    write(
        &dir,
        "deep.toml",
        format!("a = {}{}", "[".repeat(1_000_000), "]".repeat(1_000_000)),
    );
    write(
        &dir,
        "deep.yaml",
        format!("a: {}{}", "[".repeat(1_000_000), "]".repeat(1_000_000)),
    );
    write(
        &dir,
        "deep-block.yaml",
        (0..500)
            .flat_map(|i| [" ".repeat(i), format!("k{i}:\n")])
            .collect::<String>(),
    );
    let cases = [
        (
            "big.toml",
            "trainc::source::too_large",
            "big.toml:1:1: error: `big.toml` is larger than 4 MiB",
        ),
        (
            "binary.toml",
            "trainc::source::not_utf8",
            "binary.toml:2:10: error: `binary.toml` is not valid UTF-8",
        ),
        ("deep.toml", "trainc::parse::too_deep", "deep.toml:1:"),
        ("deep.yaml", "trainc::parse::too_deep", "deep.yaml:1:"),
        (
            "deep-block.yaml",
            "trainc::parse::too_deep",
            "deep-block.yaml:",
        ),
    ];
    for (file, code, header) in cases {
        let output = trainc(&dir, &["check", file]);
        let err = text(&output.stderr);
        let shown: String = err.chars().take(2000).collect();
        assert_eq!(output.status.code(), Some(1), "{file}: {shown}");
        assert!(
            err.contains(code) && err.contains(header),
            "{file}: {shown}"
        );
        assert!(
            !err.contains("panicked") && err.len() < 2000,
            "{file}: {shown}"
        );
    }
}

#[test]
fn annotations_over_256_kib_are_rejected() {
    let dir = temp_dir("cli-annotations");
    write(
        &dir,
        "spec.toml",
        format!(
            "{GOOD}\n[annotations]\nnotes = \"{}\"\n",
            "n".repeat(300 * 1024)
        ),
    );
    let output = trainc(&dir, &["check", "spec.toml"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(text(&output.stderr).contains("trainc::metadata::too_large"));
}

#[test]
fn junk_input_gets_a_diagnostic_never_a_panic() {
    let dir = temp_dir("cli-junk");
    let junk: [(&str, &[u8]); 12] = [
        ("empty.toml", b""),
        ("comments.yaml", b"# nothing here\n"),
        ("scalar.yaml", b"just a string\n"),
        ("null.yaml", b"~\n"),
        ("anchors.yaml", b"a: &x [*x]\n"),
        ("bomb.yaml", b"a: &a [x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c]\ne: [*d,*d,*d,*d,*d,*d,*d,*d]\n"),
        ("tags.yaml", b"name: !!binary aGVsbG8=\nimage: !custom x\n"),
        ("nul.toml", b"name = \"a\x00b\x1b[31m\"\n"),
        ("huge-int.toml", b"name = \"demo\"\nreplicas = 99999999999999999999\n"),
        ("nan.toml", b"name = \"demo\"\nimage = \"x:1\"\nscript = \"a\"\nreplicas = nan\n"),
        ("weird-keys.yaml", b"? [a, b]\n: c\n"),
        ("crlf.toml", b"name = \"demo\"\r\nimage = \"ghcr.io/acme/train:1.4\"\r\nscript = 3\r\n"),
    ];
    for (name, bytes) in junk {
        write(&dir, name, bytes);
        let output = trainc(&dir, &["check", name]);
        let err = text(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{name}: {err}");
        assert!(
            !err.contains("panicked") && err.contains(&format!("{name}:")),
            "{name}: {err}"
        );
        assert!(
            !err.contains(['\0', '\x1b']),
            "{name}: control characters reach the terminal: {err:?}"
        );
    }
}

#[test]
fn output_is_byte_identical_across_runs() {
    let dir = root().join("tests/check");
    let a = trainc(&dir, &["check", "many-problems-fail.toml"]);
    let b = trainc(&dir, &["check", "many-problems-fail.toml"]);
    assert_eq!(a.stderr, b.stderr);
}

#[test]
fn every_example_is_clean_and_declares_its_schema() {
    let dir = root().join("examples");
    let mut examples: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml" || e == "yaml"))
        .collect();
    examples.sort();
    assert!(!examples.is_empty());
    for example in examples {
        let name = example.file_name().unwrap().to_str().unwrap();
        let first = std::fs::read_to_string(&example)
            .unwrap()
            .lines()
            .next()
            .unwrap_or("")
            .to_owned();
        let content = std::fs::read_to_string(&example).unwrap();
        let schema_line = if example.extension().is_some_and(|e| e == "toml") {
            "#:schema ../schemas/trainspec.schema.json"
        } else if content.contains("kind: TrainSpec") {
            "# yaml-language-server: $schema=../schemas/trainspec-krm.schema.json"
        } else {
            "# yaml-language-server: $schema=../schemas/trainspec.schema.json"
        };
        assert_eq!(first, schema_line, "{name} must start with its schema line");
        let output = trainc(&dir, &["check", name]);
        assert_eq!(
            text(&output.stderr),
            "checked 1 file: 0 errors, 0 warnings\n",
            "{name}"
        );
        assert_eq!(output.status.code(), Some(0));
    }
}

/// The check step of `examples/ci/trainc.yml`, run as GitHub would run it
/// (bash, in a checkout, trainc on PATH): annotations for the bad spec and
/// the bad overlay, none for the good ones, a SARIF log, and a failed step.
#[test]
fn the_example_workflow_annotates_bad_specs_and_overlays() {
    let workflow: serde_json::Value = serde_saphyr::from_str(
        &std::fs::read_to_string(root().join("examples/ci/trainc.yml")).unwrap(),
    )
    .unwrap();
    let step = workflow["jobs"]["check"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "Check specs and overlays")
        .expect("the check step");
    assert_eq!(step["shell"], "bash");
    let script = step["run"].as_str().unwrap();

    let dir = temp_dir("ci-workflow");
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(&dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {}", text(&out.stderr));
    };
    git(&["init", "-q"]);
    for sub in ["specs", "overlays", "team/overlays"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
    }
    write(&dir, "specs/good.train.toml", GOOD);
    write(&dir, "specs/bad.train.toml", GOOD.replace("demo", "Demo"));
    write(&dir, "overlays/gpu.toml", "[resources]\ngpus = 1\n");
    write(&dir, "team/overlays/typo.toml", "replica = 3\n");
    git(&["add", "-A"]);

    let bin = Path::new(env!("CARGO_BIN_EXE_trainc")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let output = std::process::Command::new("bash")
        .args(["-e", "-c", script])
        .current_dir(&dir)
        .env("PATH", path)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let stdout = text(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(1),
        "{stdout}{}",
        text(&output.stderr)
    );
    let annotations: Vec<&str> = stdout.lines().filter(|l| l.starts_with("::")).collect();
    assert_eq!(annotations.len(), 2, "{stdout}");
    assert!(annotations[0].starts_with("::error file=specs/bad.train.toml,line=1,col=8,"));
    assert!(annotations[1].starts_with("::error file=team/overlays/typo.toml,line=1,col=1,"));
    let sarif: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("trainc.sarif")).unwrap()).unwrap();
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 1);
    assert_eq!(
        results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "specs/bad.train.toml"
    );
}

#[test]
fn completions_and_the_man_page_cover_every_command() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let output = trainc(&root(), &["completions", shell]);
        assert_eq!(output.status.code(), Some(0), "{shell}");
        let script = text(&output.stdout);
        for command in ["check", "build", "describe", "verify", "completions"] {
            assert!(
                script.contains(command),
                "{shell} completion lacks {command}"
            );
        }
    }
    let bash = trainc(&root(), &["completions", "bash"]);
    let dir = temp_dir("completions");
    write(&dir, "trainc.bash", &bash.stdout);
    let syntax = std::process::Command::new("bash")
        .args(["-n", "trainc.bash"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(syntax.status.success(), "{}", text(&syntax.stderr));
    let man = text(&trainc(&root(), &["man"]).stdout);
    assert!(man.contains(".TH trainc 1"), "{man}");
    assert!(man.contains("verify") && man.contains("describe"));
}

/// The install page's commands for completions and manual pages, run as
/// written on a fresh home directory: every folder they need is made, every
/// page the main page lists is written, and `man` finds them beside the
/// binary.
#[test]
fn the_install_pages_commands_work_on_a_fresh_home() {
    let page = std::fs::read_to_string(root().join("docs/install.md")).unwrap();
    let block = page
        .split("as needed (each line")
        .nth(1)
        .and_then(|rest| rest.split("```sh\n").nth(1))
        .and_then(|rest| rest.split("```").next())
        .expect("docs/install.md's block of commands");
    let home = temp_dir("fresh-home");
    let bin = home.join(".cargo/bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_trainc"), bin.join("trainc")).unwrap();
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let mut ran = 0;
    for line in block.lines() {
        if line.starts_with("trainc plugin") {
            continue; // kustomize's plugin: tests/kustomize.rs
        }
        let output = std::process::Command::new("bash")
            .args(["-c", line])
            .env("HOME", &home)
            .env("PATH", &path)
            .current_dir(&home)
            .output()
            .unwrap();
        assert!(output.status.success(), "{line}: {}", text(&output.stderr));
        ran += 1;
    }
    assert!(ran >= 5, "{block}");
    for file in [
        ".local/share/bash-completion/completions/trainc",
        ".zfunc/_trainc",
        ".config/fish/completions/trainc.fish",
        ".cargo/share/man/man1/trainc.1",
    ] {
        let written = std::fs::read_to_string(home.join(file)).unwrap_or_default();
        assert!(written.contains("verify"), "{file}");
    }
    // Every page a page lists is there.
    let pages = home.join(".cargo/share/man/man1");
    let mut listed_pages = 0;
    for entry in std::fs::read_dir(&pages).unwrap() {
        let page = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        for listed in page.split("trainc\\-").skip(1) {
            let end = listed
                .find(|c: char| !(c.is_ascii_lowercase() || c == '-' || c == '\\'))
                .unwrap_or(listed.len());
            if !listed[end..].starts_with("(1)") {
                continue; // a name, not a reference to a page
            }
            let name = listed[..end].replace("\\-", "-");
            listed_pages += 1;
            assert!(
                pages.join(format!("trainc-{name}.1")).exists(),
                "trainc-{name}(1) is listed but not written"
            );
        }
    }
    assert!(listed_pages >= 12, "{listed_pages} pages listed");
    if std::process::Command::new("man")
        .arg("--version")
        .output()
        .is_ok()
    {
        let found = std::process::Command::new("man")
            .args(["-w", "trainc-build"])
            .env("HOME", &home)
            .env("PATH", &path)
            .env_remove("MANPATH")
            .output()
            .unwrap();
        assert!(
            text(&found.stdout).contains(".cargo/share/man/man1/trainc-build.1"),
            "man -w trainc-build: {}{}",
            text(&found.stdout),
            text(&found.stderr)
        );
    }
}

#[test]
fn version_names_the_operator_apis() {
    let output = trainc(&root(), &["--version"]);
    assert_eq!(output.status.code(), Some(0));
    let version = text(&output.stdout);
    assert!(version.starts_with(&format!("trainc {}\n", env!("CARGO_PKG_VERSION"))));
    for api in [
        "kubeflow.org/v1 PyTorchJob",
        "trainer.kubeflow.org/v1alpha1 TrainJob",
        "v2.0, v2.1, v2.2, v2.3",
        "jobset.x-k8s.io/v1alpha2 JobSet",
        "batch/v1 Job",
    ] {
        assert!(version.contains(api), "{version}");
    }
    // Every target `--target` takes has its line.
    let help = text(&trainc(&root(), &["build", "--help"]).stdout);
    let targets: Vec<&str> = help
        .split("--target <TARGET>")
        .nth(1)
        .and_then(|after| after.split("Possible values:").nth(1))
        .map(|values| {
            values
                .lines()
                .map(str::trim)
                .skip_while(|line| line.is_empty())
                .take_while(|line| line.starts_with("- "))
                .filter_map(|line| line[2..].split(':').next())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(targets.len(), 4, "{help}");
    for target in targets {
        assert!(
            version
                .lines()
                .any(|l| l.starts_with(&format!("  {target} "))),
            "`{target}` is not named:\n{version}"
        );
    }
}

/// `--color always` colours a pipe even with NO_COLOR set; `never` and the
/// default for a pipe do not.
#[test]
fn color_follows_the_flag_then_no_color() {
    let dir = temp_dir("color");
    write(&dir, "bad.toml", "name = \"Bad\"\n");
    let escape = |args: &[&str]| trainc(&dir, args).stderr.contains(&0x1b);
    assert!(escape(&["check", "--color", "always", "bad.toml"]));
    assert!(escape(&["--color=always", "check", "bad.toml"]));
    assert!(!escape(&["check", "--color", "never", "bad.toml"]));
    assert!(!escape(&["check", "bad.toml"]));
    let help = trainc(&dir, &["--color", "never", "check", "--help"]);
    assert!(!help.stdout.contains(&0x1b));
}

/// A long list of files is checked on several threads; what is printed is
/// what checking the files in two short runs prints, in the same order, with
/// the same exit status.
#[test]
fn many_files_check_as_few_do() {
    let mut cases: Vec<PathBuf> = std::fs::read_dir(root().join("tests/check"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    cases.sort();
    cases.truncate(79);
    assert_eq!(cases.len(), 79);
    let mut files: Vec<String> = cases.iter().map(|p| p.display().to_string()).collect();
    files.insert(
        40,
        root()
            .join("tests/check/no-such-file.toml")
            .display()
            .to_string(),
    );
    let run = |files: &[String]| {
        let mut args = vec!["check", "--format", "json"];
        args.extend(files.iter().map(String::as_str));
        trainc(&root(), &args)
    };
    let all = run(&files);
    let (first, second) = (run(&files[..40]), run(&files[40..]));
    let joined = format!("{}{}", text(&first.stdout), text(&second.stdout));
    assert_eq!(text(&all.stdout), joined);
    assert!(text(&all.stdout).lines().count() > 79);
    assert_eq!(all.status.code(), Some(2));
    let human = trainc(
        &root(),
        &[
            &["check"],
            &files.iter().map(String::as_str).collect::<Vec<_>>()[..],
        ]
        .concat(),
    );
    assert!(text(&human.stderr).contains("checked 80 files"));
}

/// `-n NAMESPACE`, as kubectl takes it: the namespace of every object over
/// the spec's, checked as the spec's is, and kept in `describe`'s command.
#[test]
fn dash_n_sets_the_namespace_as_kubectl_does() {
    let example = root().join("examples/gpu-multinode.toml");
    let spec = example.to_str().unwrap();
    let built = trainc(&root(), &["build", "-n", "research", spec]);
    assert!(built.status.success(), "{}", text(&built.stderr));
    let objects = text(&built.stdout);
    assert!(objects.contains("namespace: research"), "{objects}");
    assert!(!objects.contains("namespace: ml"), "{objects}");
    let bad = trainc(&root(), &["check", "--namespace", "Research", spec]);
    assert_eq!(bad.status.code(), Some(1));
    let said = text(&bad.stderr);
    assert!(said.contains("<command line>:1:13"), "{said}");
    assert!(said.contains("try `research`"), "{said}");
    let described = trainc(&root(), &["describe", "-n", "research", spec]);
    assert!(text(&described.stdout).contains("-n research"));
}

/// A YAML overlay's `null` removes its key under `-O`, and `check
/// --as-overlay` (the pre-commit hook) holds it to the same rule: a field's
/// key set to null passes, a key that is no field is the same error both ways.
#[test]
fn a_yaml_null_is_one_rule_for_as_overlay_and_dash_o() {
    let dir = root().join("tests/check");
    let removes = trainc(&dir, &["check", "--as-overlay", "overlays/yaml-null.yaml"]);
    assert!(removes.status.success(), "{}", text(&removes.stderr));
    let alone = trainc(
        &dir,
        &["check", "--as-overlay", "overlays/null-unknown.yaml"],
    );
    let merged = trainc(
        &dir,
        &[
            "check",
            "overlay-fail-null-unknown.toml",
            "-O",
            "overlays/null-unknown.yaml",
        ],
    );
    for output in [&alone, &merged] {
        assert_eq!(output.status.code(), Some(1));
        let said = text(&output.stderr);
        assert!(
            said.contains("`resources.gpuz: null` removes a key"),
            "{said}"
        );
        assert!(!said.contains("found null"), "{said}");
    }
}
