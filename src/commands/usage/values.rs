//! A value an option refuses, said in trainc's terms where clap's "a similar
//! value exists" misleads: a Trainer release this trainc does not know
//! (`--api-level v2.4` is no typo of `v2.0`), a file given to `-o`, which
//! names a format (kubectl's `-o yaml`; an overlay is `-O`, a file is `>`).

use clap::Command;

use super::{listed, option, said, split_flag};

/// Other tools' spellings of "fail on warnings" (clippy's, gcc's, linters').
const STRICT: &[&str] = &[
    "--strict",
    "--warnings-as-errors",
    "--deny-warnings",
    "--fail-on-warnings",
    "--werror",
    "--Werror",
    "-W",
];

/// A slip whose meaning is plain, said with the command meant: `check
/// --strict` (warnings as errors: the spec's `warnings = "error"`), `-o
/// overlay.toml` where `-O` was meant.
/// `owners` are the commands that have `flag`.
pub(super) fn meant(
    name: &str,
    command: &Command,
    flag: &str,
    words: &[&str],
    owners: &[&str],
) -> Option<String> {
    let merges = option(command, "-O").is_some();
    if STRICT.contains(&flag) && merges {
        let mut tips = vec![format!(
            "to hold every spec to it without editing them, merge a one-line overlay: `echo 'warnings = \"error\"' > strict.toml`, then `trainc {name} -O strict.toml SPEC`"
        )];
        if let Some(owner) = owners.first() {
            tips.push(format!(
                "`{flag}` is an option of `{owner}`: `trainc {owner} {flag} …`"
            ));
        }
        return Some(said(
            format!(
                "`{name}` has no option `{flag}`: a warning fails `{name}` when the spec says `warnings = \"error\"`"
            ),
            &tips,
        ));
    }
    // A flag no command has: another tool's, or a value written as one.
    if owners.is_empty()
        && let Some(text) = value_as_flag(name, command, flag).or_else(|| kubectl_flag(name, flag))
    {
        return Some(text);
    }
    let given = words
        .iter()
        .enumerate()
        .find_map(|(at, w)| match split_flag(w) {
            (f, Some(value)) if f == flag => Some(value),
            (f, None) if f == flag => words.get(at + 1).copied(),
            _ => None,
        })?;
    let spec_file = [".toml", ".yaml", ".yml"]
        .iter()
        .any(|ext| given.ends_with(ext));
    (flag == "-o" && merges && spec_file).then(|| {
        said(
            format!("`{name}` has no option `-o`; an overlay is given with `-O` (a capital O)"),
            &[format!("`trainc {name} -O {given} SPEC`")],
        )
    })
}

/// `--json`, `--sarif`, `--trainjob`: a value of one of the command's
/// options written as a flag of its own.
fn value_as_flag(name: &str, command: &Command, flag: &str) -> Option<String> {
    let bare = flag.strip_prefix("--")?;
    let (option, value) = command.get_arguments().find_map(|a| {
        let value = a
            .get_possible_values()
            .into_iter()
            .find(|v| v.get_name().eq_ignore_ascii_case(bare))?;
        Some((a.get_long()?, value.get_name().to_owned()))
    })?;
    Some(said(
        format!("`{name}` has no option `{flag}`: `{value}` is a value of `--{option}`"),
        &[format!("`trainc {name} --{option} {value} …`")],
    ))
}

/// kubectl's `-f FILE` and `--dry-run`, which trainc has no need of.
fn kubectl_flag(name: &str, flag: &str) -> Option<String> {
    match flag {
        "-f" | "--filename" => Some(said(
            format!("`{name}` has no option `{flag}`: the file is given as it is, without kubectl's `-f`"),
            &[format!("`trainc {name} SPEC`")],
        )),
        "--dry-run" => Some(said(
            format!("`{name}` has no option `--dry-run`: trainc never reaches a cluster, so every run is one"),
            &[
                "`trainc build SPEC` prints the objects; `trainc build --verify SPEC` also checks them as the API server and the operators would; `kubectl apply --dry-run=server -f -` asks the cluster itself".to_owned(),
            ],
        )),
        _ => None,
    }
}

/// The message for `value`, refused by the option `arg` (`--api-level
/// <LEVEL>`, as clap names it) of `command`, or `None` for clap's own.
pub(super) fn invalid_value(command: &Command, arg: &str, value: &str) -> Option<String> {
    let long = arg.split_whitespace().next()?.trim_start_matches('-');
    let option = command
        .get_arguments()
        .find(|a| a.get_long() == Some(long))?;
    let known: Vec<String> = option
        .get_possible_values()
        .iter()
        .map(|v| format!("`{}`", v.get_name()))
        .collect();
    let name = command.get_name();
    match long {
        "api-level" => Some(api_level(value, &known)),
        "output" if looks_like_file(value) => Some(output_file(name, value, &known)),
        _ => None,
    }
}

/// `v2.4`, `2.3`: a level this trainc does not know, or one written without its `v`.
fn api_level(value: &str, known: &[String]) -> String {
    let bare = value.trim_start_matches(['v', 'V']);
    let is_version = !bare.is_empty() && bare.split('.').all(|p| p.parse::<u32>().is_ok());
    if is_version && known.contains(&format!("`v{bare}`")) {
        return said(
            format!("`--api-level` takes the level with its `v`: `v{bare}`, not `{value}`"),
            &[format!("`--api-level v{bare}`")],
        );
    }
    if !is_version {
        return said(
            format!(
                "`{value}` is not a Trainer API level: this trainc knows {}",
                listed(known)
            ),
            &[
                "a level is the Trainer release the cluster runs, such as `--api-level v2.3`"
                    .to_owned(),
            ],
        );
    }
    let newest = known.first().cloned().unwrap_or_default();
    said(
        format!(
            "no Trainer v{bare} is known to this trainc: it builds for {}",
            listed(known)
        ),
        &[
            format!(
                "for a newer Trainer, `--api-level {}` writes the newest API this trainc knows; `trainc verify --crd` with the cluster's TrainJob CRD checks the result against it",
                newest.trim_matches('`')
            ),
            "a newer trainc may know the release: `trainc --version` lists the levels this one builds for".to_owned(),
        ],
    )
}

fn looks_like_file(value: &str) -> bool {
    value.contains(['.', '/']) || std::path::Path::new(value).exists()
}

/// `-o out.yaml`, `-o overlay.toml`: a file where a format goes.
fn output_file(name: &str, value: &str, known: &[String]) -> String {
    let mut tips = vec![format!(
        "to write the objects to a file: `trainc {name} SPEC > {value}`; one file per object: `--output-dir DIR`"
    )];
    let overlay = [".toml", ".yaml", ".yml", ".json"]
        .iter()
        .any(|ext| value.ends_with(ext));
    if overlay {
        tips.push(format!(
            "to merge `{value}` over the spec as an overlay: `-O {value}` (a capital O)"
        ));
    }
    said(
        format!(
            "`-o` (`--output`) names the output's format, {}, not a file: `{value}` was given",
            listed(known).replace(" and ", " or ")
        ),
        &tips,
    )
}
