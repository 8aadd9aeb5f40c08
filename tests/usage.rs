//! Usage errors, one test per command: an option of another command, an
//! option of none, a second argument. Each exits 2 with nothing on stdout and
//! says what to write instead. (Every option against every command is
//! checked in the binary's unit tests, over clap's command tree.)

use crate::support::{root, text, trainc};

/// Runs `trainc ARGS`, asserts a usage error, returns stderr.
fn usage(args: &[&str]) -> String {
    let output = trainc(&root(), args);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(output.stdout.is_empty(), "{args:?}");
    assert!(!stderr.contains("use '--"), "{args:?}: {stderr}");
    stderr
}

fn says(args: &[&str], expected: &[&str]) {
    let stderr = usage(args);
    for line in expected {
        assert!(
            stderr.contains(line),
            "{args:?} does not say {line:?}:\n{stderr}"
        );
    }
}

#[test]
fn check() {
    says(
        &["check", "-o", "json", "s.toml"],
        &[
            "`-o` (`--output`) belongs to `build`",
            "`check` takes it as `--format json`",
        ],
    );
    says(
        &["check", "--force", "s.toml"],
        &[
            "`check` has no option `--force`",
            "`trainc build --force …`",
        ],
    );
    says(
        &["check", "--nope", "s.toml"],
        &["`check` has no option `--nope`", "its options: `--format`"],
    );
}

#[test]
fn build() {
    says(
        &["build", "--format", "github", "s.toml"],
        &[
            "`--format` belongs to `check`, `verify`, `import` and `describe`",
            "`build` has `-o`/`--output` for this: yaml, json",
        ],
    );
    says(
        &["build", "a.toml", "b.toml"],
        &[
            "`build` takes one SPEC, and `b.toml` is a second",
            "-O b.toml",
        ],
    );
    says(
        &["build", "--verify", "yes", "a.toml"],
        &["`--verify` is a switch and takes no value"],
    );
    says(
        &["build", "--set", "trainer.image=x", "a.toml"],
        &["not a spec field such as `trainer.image`", "-O FILE"],
    );
}

#[test]
fn verify() {
    says(
        &["verify", "--set", "tag=1", "x.yaml"],
        &[
            "`verify` has no option `--set`",
            "belongs to `check`, `build`, `describe` and `run`",
        ],
    );
    says(
        &["verify", "-o", "json", "x.yaml"],
        &["`verify` takes it as `--format json`"],
    );
}

#[test]
fn import() {
    says(
        &["import", "-o", "yaml", "x.yaml"],
        &["`import` takes it as `--format yaml`"],
    );
    says(
        &["import", "--target", "job", "x.yaml"],
        &[
            "`import` has no option `--target`",
            "`trainc check --target job …`",
        ],
    );
}

#[test]
fn migrate() {
    says(
        &["migrate", "--strict", "x.yaml"],
        &["`--strict` belongs to `import`"],
    );
    says(
        &["migrate", "--format", "yaml", "x.yaml"],
        &["`migrate` has no option `--format`"],
    );
}

#[test]
fn describe() {
    says(
        &["describe", "--format", "github", "s.toml"],
        &[
            "invalid value 'github' for '--format <FORMAT>'",
            "text, json",
        ],
    );
    says(
        &["describe", "a.toml", "b.toml"],
        &["`describe` takes one SPEC", "`trainc check` takes several"],
    );
}

#[test]
fn run() {
    says(
        &["run", "--pods", "s.toml"],
        &["`run` has no option `--pods`", "belongs to `describe`"],
    );
    says(
        &["run", "--no-namespace", "s.toml"],
        &["a similar argument exists: '--no-namespaces'"],
    );
}

#[test]
fn init() {
    says(
        &["init", "--api-level", "v2.3"],
        &[
            "`init` has no option `--api-level`",
            "`[trainjob] apiLevel = \"v2.3\"`",
        ],
    );
    says(
        &["init", "a.toml", "b.toml"],
        &["`init` takes one FILE, and `b.toml` is a second"],
    );
}

#[test]
fn the_other_commands() {
    says(
        &["fn", "--format", "json"],
        &["`fn` has no option `--format`"],
    );
    says(
        &["plugin", "install", "--force"],
        &["`plugin install` has no option `--force`"],
    );
    says(
        &["plugin", "config", "--dir", "d"],
        &[
            "`plugin config` has no option `--dir`",
            "belongs to `plugin install`",
        ],
    );
    says(
        &["schema", "--target", "job"],
        &["`schema` has no option `--target`"],
    );
    says(
        &["man", "--krm"],
        &[
            "`man` has no option `--krm`",
            "belongs to `init` and `schema`",
        ],
    );
    says(
        &["completions", "bash", "zsh"],
        &["`completions` takes one SHELL, and `zsh` is a second"],
    );
    says(
        &["spec.toml"],
        &[
            "`spec.toml` is a file, not a command",
            "`trainc check spec.toml`",
        ],
    );
    says(
        &["lint", "spec.toml"],
        &["trainc has no command `lint`", "`trainc check`"],
    );
}

/// Other tools' habits and a newer release than trainc knows: the command
/// meant, not clap's nearest spelling.
#[test]
fn slips_get_the_command_meant() {
    says(
        &["check", "--strict", "s.toml"],
        &[
            "a warning fails `check` when the spec says `warnings = \"error\"`",
            "trainc check -O strict.toml SPEC",
        ],
    );
    // A value written as a flag of its own, read from the command's options.
    says(
        &["check", "s.toml", "--json"],
        &[
            "`check` has no option `--json`: `json` is a value of `--format`",
            "`trainc check --format json …`",
        ],
    );
    says(
        &["build", "s.toml", "--trainjob"],
        &["`trainc build --target trainjob …`"],
    );
    // kubectl's habits.
    says(
        &["build", "-f", "s.toml"],
        &["without kubectl's `-f`", "`trainc build SPEC`"],
    );
    says(
        &["build", "s.toml", "--dry-run"],
        &[
            "trainc never reaches a cluster",
            "`trainc build --verify SPEC`",
        ],
    );
    says(
        &["check", "-o", "gpu.toml", "s.toml"],
        &[
            "an overlay is given with `-O`",
            "`trainc check -O gpu.toml SPEC`",
        ],
    );
    says(
        &["build", "s.toml", "-o", "out.yaml"],
        &[
            "`-o` (`--output`) names the output's format, `yaml` or `json`, not a file",
            "`trainc build SPEC > out.yaml`",
            "`-O out.yaml` (a capital O)",
        ],
    );
    let stderr = usage(&["build", "s.toml", "--api-level", "v2.4"]);
    assert!(
        stderr.contains("no Trainer v2.4 is known to this trainc: it builds for `v2.3`, `v2.2`, `v2.1` and `v2.0`"),
        "{stderr}"
    );
    assert!(!stderr.contains("similar value"), "{stderr}");
    says(
        &["check", "--api-level", "2.3", "s.toml"],
        &["`--api-level` takes the level with its `v`: `v2.3`"],
    );
}
