//! Usage errors said in trainc's terms. clap knows one command at a time: an
//! option of another command gets "a similar argument exists" for whatever is
//! spelt alike (`build --format` → `--force`), or "to pass '-o' as a value,
//! use '-- -o'". Here the whole command tree is read: an option that belongs
//! to other commands names them and this command's own option for the job, a
//! second spec says that the command takes one, a file given as a command
//! says which commands take it; a value refused is said in [`values`]. Every
//! other error is clap's, unchanged.

mod values;

use std::ffi::OsString;

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{ArgAction, Command};

/// Options that do one job under different names in different commands:
/// how the output is written.
const SYNONYMS: &[&[&str]] = &[&["format", "output"]];

/// Options whose setting a spec can carry, for `init` (which writes one).
const SPEC_KEYS: &[(&str, &str)] = &[
    ("api-level", "`[trainjob] apiLevel = \"v2.3\"`"),
    ("runtimes", "`[trainjob] runtimesFile = \"runtimes.yaml\"`"),
];

/// Commands that are not trainc's, and the one that does what they do.
const OTHER_NAMES: &[(&[&str], &str)] = &[
    (&["validate", "lint", "test"], "check"),
    (
        &["compile", "generate", "gen", "render", "template"],
        "build",
    ),
    (&["upgrade"], "migrate"),
    (&["explain", "show", "inspect"], "describe"),
    (&["new", "create", "scaffold"], "init"),
];

/// `error` said again with what the command tree knows, or `error` as it is.
pub(crate) fn reword(mut root: Command, args: &[OsString], error: clap::Error) -> clap::Error {
    root.build();
    let words: Vec<&str> = args
        .iter()
        .skip(1)
        .map(|a| a.to_str().unwrap_or(""))
        .collect();
    let path = command_path(&root, &words);
    let Some(text) = message(&root, &path, &words, &error) else {
        return error;
    };
    // The command as built (its usage says `trainc build`), to lay the text out.
    let mut command = find(&root, &path).clone();
    clap::Error::raw(error.kind(), text).format(&mut command)
}

/// The subcommand names the words choose (`["plugin", "install"]`).
fn command_path(root: &Command, words: &[&str]) -> Vec<String> {
    let mut path = Vec::new();
    let mut command = root;
    let mut i = 0;
    while i < words.len() && command.has_subcommands() {
        let word = words[i];
        i += 1;
        if word == "--color" {
            i += 1;
        } else if !word.starts_with('-') {
            match command.find_subcommand(word) {
                Some(sub) => {
                    path.push(sub.get_name().to_owned());
                    command = sub;
                }
                None => return path,
            }
        }
    }
    path
}

fn find<'c>(root: &'c Command, path: &[String]) -> &'c Command {
    path.iter().fold(root, |command, name| {
        command.find_subcommand(name).unwrap_or(command)
    })
}

fn context(error: &clap::Error, kind: ContextKind) -> Option<&str> {
    match error.get(kind) {
        Some(ContextValue::String(text)) => Some(text),
        _ => None,
    }
}

fn message(root: &Command, path: &[String], words: &[&str], error: &clap::Error) -> Option<String> {
    let command = find(root, path);
    match error.kind() {
        ErrorKind::UnknownArgument => {
            let word = context(error, ContextKind::InvalidArg)?;
            if word.starts_with('-') && word != "-" {
                let suggested = error.get(ContextKind::SuggestedArg).is_some();
                unknown_option(root, path, command, word, words, suggested)
            } else {
                Some(extra_argument(path, command, word, words))
            }
        }
        ErrorKind::InvalidValue => {
            let arg = context(error, ContextKind::InvalidArg)?;
            let value = context(error, ContextKind::InvalidValue)?;
            values::invalid_value(command, arg, value)
        }
        ErrorKind::InvalidSubcommand => {
            let word = context(error, ContextKind::InvalidSubcommand)?;
            unknown_command(
                path,
                command,
                word,
                error.get(ContextKind::SuggestedSubcommand).is_some(),
            )
        }
        _ => None,
    }
}

/// Every command that takes options of its own, with its path.
fn leaves(root: &Command) -> Vec<(String, &Command)> {
    fn walk<'c>(command: &'c Command, prefix: &str, out: &mut Vec<(String, &'c Command)>) {
        // clap's `help` subcommand mirrors the tree; it is no command of trainc's.
        for sub in command.get_subcommands().filter(|s| s.get_name() != "help") {
            let name = format!("{prefix}{}", sub.get_name());
            if sub.has_subcommands() {
                walk(sub, &format!("{name} "), out);
            } else {
                out.push((name, sub));
            }
        }
    }
    let mut out = Vec::new();
    walk(root, "", &mut out);
    out
}

/// The option `flag` (`--format`, `-o`) names in `command`, if any.
fn option<'c>(command: &'c Command, flag: &str) -> Option<&'c clap::Arg> {
    command
        .get_arguments()
        .filter(|a| !a.is_positional())
        .find(|arg| {
            if let Some(long) = flag.strip_prefix("--") {
                arg.get_long() == Some(long)
                    || arg.get_all_aliases().unwrap_or_default().contains(&long)
            } else {
                let short = flag.strip_prefix('-').and_then(|s| s.chars().next());
                short.is_some()
                    && (arg.get_short() == short
                        || arg
                            .get_all_short_aliases()
                            .unwrap_or_default()
                            .contains(&short.unwrap_or(' ')))
            }
        })
}

/// `--output` (`-o`), as help writes an option.
fn spelled(arg: &clap::Arg) -> String {
    match (arg.get_long(), arg.get_short()) {
        (Some(long), Some(short)) => format!("`-{short}`/`--{long}`"),
        (Some(long), None) => format!("`--{long}`"),
        (None, Some(short)) => format!("`-{short}`"),
        (None, None) => format!("`{}`", arg.get_id()),
    }
}

fn takes_value(arg: &clap::Arg) -> bool {
    matches!(arg.get_action(), ArgAction::Set | ArgAction::Append)
}

fn values(arg: &clap::Arg) -> Vec<String> {
    arg.get_possible_values()
        .iter()
        .map(|v| v.get_name().to_owned())
        .collect()
}

/// `a`, `a and b`, `a, b and c`.
fn listed(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// A message and its tips, as clap lays them out.
fn said(error: String, tips: &[String]) -> String {
    tips.iter()
        .fold(error, |text, tip| text + "\n\n  tip: " + tip)
}

fn unknown_option(
    root: &Command,
    path: &[String],
    command: &Command,
    word: &str,
    words: &[&str],
    suggested: bool,
) -> Option<String> {
    let (flag, _) = split_flag(word);
    let name = path.join(" ");
    let owners: Vec<(String, &clap::Arg)> = leaves(root)
        .into_iter()
        .filter(|(leaf, _)| *leaf != name)
        .filter_map(|(leaf, c)| option(c, flag).map(|arg| (leaf, arg)))
        .collect();
    let owned: Vec<&str> = owners.iter().map(|(leaf, _)| leaf.as_str()).collect();
    if let Some(text) = values::meant(&name, command, flag, words, &owned) {
        return Some(text);
    }
    if owners.is_empty() {
        // Spelt like one of this command's: clap's "a similar argument exists" is the help.
        return (!suggested).then(|| no_owner(&name, command, flag, word));
    }
    // The value the user gave it, for an option that takes one: `--format=json`,
    // `-ojson`, or the next word.
    let given = if owners.iter().any(|(_, arg)| takes_value(arg)) {
        words
            .iter()
            .enumerate()
            .find_map(|(at, w)| match split_flag(w) {
                (f, Some(value)) if f == flag => Some(value),
                (f, None) if f == flag => {
                    words.get(at + 1).copied().filter(|w| !w.starts_with('-'))
                }
                _ => None,
            })
    } else {
        None
    };
    let owner_names: Vec<String> = owners.iter().map(|(leaf, _)| format!("`{leaf}`")).collect();
    let owner_long = owners[0].1.get_long().unwrap_or("");
    let long_form = if !flag.starts_with("--")
        && owners.iter().all(|(_, a)| a.get_long() == Some(owner_long))
    {
        format!(" (`--{owner_long}`)")
    } else {
        String::new()
    };
    let value = given.map(|v| format!(" {v}")).unwrap_or_default();
    if name.is_empty() {
        let first = &owners[0].0;
        return Some(format!(
            "`{flag}`{long_form} is an option of {}: write it after the command, as in `trainc {first} {flag}{value}`",
            listed(&owner_names)
        ));
    }
    let error = format!(
        "`{name}` has no option `{flag}`: `{flag}`{long_form} belongs to {}",
        listed(&owner_names)
    );
    // This command's own option for the job, taking the value given.
    let by_value = given.and_then(|value| {
        let arg = command
            .get_arguments()
            .filter(|a| !a.is_positional())
            .find(|a| values(a).iter().any(|v| v == value))?;
        Some(format!(
            "`{name}` takes it as `--{} {value}`",
            arg.get_long()?
        ))
    });
    if let Some(tip) = by_value {
        return Some(said(error, &[tip]));
    }
    let mut tips = Vec::new();
    // One of the same kind (`--format` and `--output`).
    let group = SYNONYMS.iter().find(|g| g.contains(&owner_long));
    let same_kind = command.get_arguments().find(|a| {
        a.get_long()
            .is_some_and(|l| l != owner_long && group.is_some_and(|g| g.contains(&l)))
    });
    if let Some(arg) = same_kind {
        let choices = values(arg);
        let listed = if choices.is_empty() {
            String::new()
        } else {
            format!(": {}", choices.join(", "))
        };
        tips.push(format!("`{name}` has {} for this{listed}", spelled(arg)));
    }
    if name == "init"
        && let Some((_, key)) = SPEC_KEYS.iter().find(|(long, _)| *long == owner_long)
    {
        tips.push(format!("the spec `init` writes can say it: {key}"));
    }
    // The first command that takes the value given, else the first that has the option.
    let fits = |arg: &clap::Arg| {
        given.is_some_and(|v| values(arg).is_empty() || values(arg).iter().any(|x| x == v))
    };
    tips.push(match owners.iter().find(|(_, arg)| fits(arg)) {
        Some((leaf, _)) => format!("`trainc {leaf} {flag}{value} …` uses it"),
        None => format!("`trainc {} {flag} …` uses it", owners[0].0),
    });
    Some(said(error, &tips))
}

/// An option no command has: this command's options.
fn no_owner(name: &str, command: &Command, flag: &str, word: &str) -> String {
    let error = if name.is_empty() {
        format!("trainc has no option `{flag}`")
    } else {
        format!("`{name}` has no option `{flag}`")
    };
    let own: Vec<String> = command
        .get_arguments()
        .filter(|a| !a.is_positional() && !a.is_hide_set())
        .filter(|a| {
            !matches!(
                a.get_action(),
                ArgAction::Help | ArgAction::HelpLong | ArgAction::HelpShort | ArgAction::Version
            )
        })
        .map(spelled)
        .collect();
    let mut tips = Vec::new();
    if !own.is_empty() {
        tips.push(format!("its options: {}", own.join(", ")));
    }
    if command.get_positionals().next().is_some() {
        tips.push(format!(
            "a file whose name starts with `-` is written `./{word}`"
        ));
    }
    said(error, &tips)
}

/// `--format=json` → (`--format`, `json`); `-ojson` → (`-o`, `json`).
fn split_flag(word: &str) -> (&str, Option<&str>) {
    if word.starts_with("--") {
        match word.split_once('=') {
            Some((flag, value)) => (flag, Some(value)),
            None => (word, None),
        }
    } else {
        match word.char_indices().nth(2) {
            Some((at, _)) => (&word[..at], Some(word[at..].trim_start_matches('='))),
            None => (word, None),
        }
    }
}

/// A word after the command's last positional argument.
fn extra_argument(path: &[String], command: &Command, word: &str, words: &[&str]) -> String {
    let name = path.join(" ");
    let Some(first) = command.get_positionals().next() else {
        return format!("`{name}` takes no arguments, and `{word}` was given");
    };
    let what = first
        .get_value_names()
        .and_then(|v| v.first())
        .map_or("FILE".to_owned(), ToString::to_string);
    // A switch written with a value (`--verify true`): the value was read as the spec.
    for pair in words.windows(2) {
        let (flag, value) = (pair[0], pair[1]);
        let switch =
            flag.starts_with('-') && option(command, flag).is_some_and(|a| !takes_value(a));
        if switch && ["true", "false", "yes", "no", "on", "off", "1", "0"].contains(&value) {
            return said(
                format!(
                    "`{flag}` is a switch and takes no value: `{value}` was read as the {what}"
                ),
                &[format!(
                    "write `{flag}` alone to turn it on, and leave it out to leave it off"
                )],
            );
        }
    }
    let mut tips = Vec::new();
    if option(command, "--overlay").is_some() {
        tips.push(format!(
            "to merge `{word}` over the spec as an overlay, give it with `-O {word}`"
        ));
    }
    if what == "SPEC" {
        tips.push(format!(
            "run `trainc {name}` once per spec; `trainc check` takes several at once"
        ));
    }
    said(
        format!("`{name}` takes one {what}, and `{word}` is a second"),
        &tips,
    )
}

/// A first word that is no command.
fn unknown_command(
    path: &[String],
    command: &Command,
    word: &str,
    suggested: bool,
) -> Option<String> {
    if !path.is_empty() {
        return None;
    }
    let looks_like_file = [".toml", ".yaml", ".yml", ".json"]
        .iter()
        .any(|ext| word.ends_with(ext))
        || std::path::Path::new(word).exists();
    if looks_like_file {
        return Some(said(
            format!("`{word}` is a file, not a command: give the command first"),
            &[format!(
                "`trainc check {word}` checks a spec, `trainc build {word}` builds it, `trainc verify {word}` checks manifests"
            )],
        ));
    }
    if let Some((_, ours)) = OTHER_NAMES.iter().find(|(names, _)| names.contains(&word)) {
        let about = command
            .find_subcommand(ours)
            .and_then(|c| c.get_about())
            .map(ToString::to_string)
            .unwrap_or_default();
        return Some(said(
            format!("trainc has no command `{word}`"),
            &[format!("`trainc {ours}`: {}", about.trim_end_matches('.'))],
        ));
    }
    if suggested {
        return None;
    }
    if ["apply", "submit", "deploy"].contains(&word) {
        return Some(said(
            format!("trainc has no command `{word}`: it writes the objects, kubectl applies them"),
            &["`trainc build SPEC | kubectl apply -f -`".to_owned()],
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> Command {
        <crate::cli::Cli as clap::CommandFactory>::command()
    }

    /// What trainc prints for `trainc WORDS...`.
    fn said(words: &[&str]) -> String {
        let args: Vec<OsString> = std::iter::once("trainc")
            .chain(words.iter().copied())
            .map(OsString::from)
            .collect();
        match root().try_get_matches_from(&args) {
            Ok(_) => panic!("`trainc {}` parsed", words.join(" ")),
            Err(error) => reword(root(), &args, error).to_string(),
        }
    }

    /// Every long and short option of every command, given to each command
    /// that lacks it, names the commands it belongs to and nothing else.
    #[test]
    fn every_option_of_every_command_given_to_another_names_its_commands() {
        let mut root = root();
        root.build();
        let leaves = leaves(&root);
        let mut tried = 0;
        for (name, command) in &leaves {
            for (_, other) in &leaves {
                for arg in other.get_arguments().filter(|a| !a.is_positional()) {
                    let flags = [
                        arg.get_long().map(|l| format!("--{l}")),
                        arg.get_short().map(|s| format!("-{s}")),
                    ];
                    for flag in flags.into_iter().flatten() {
                        if option(command, &flag).is_some() {
                            continue;
                        }
                        let owners: Vec<&String> = leaves
                            .iter()
                            .filter(|(_, c)| option(c, &flag).is_some())
                            .map(|(n, _)| n)
                            .collect();
                        let mut words: Vec<&str> = name.split(' ').collect();
                        words.push(&flag);
                        if takes_value(arg) {
                            words.push("x");
                        }
                        let text = said(&words);
                        assert!(
                            text.contains(&format!("`{name}` has no option `{flag}`")),
                            "{words:?}: {text}"
                        );
                        for owner in owners {
                            assert!(
                                text.contains(&format!("`{owner}`")),
                                "{words:?} does not name {owner}: {text}"
                            );
                        }
                        assert!(!text.contains("use '--"), "{words:?}: {text}");
                        assert!(!text.contains("similar argument"), "{words:?}: {text}");
                        tried += 1;
                    }
                }
            }
        }
        assert!(tried > 200, "only {tried} tried");
    }

    #[test]
    fn the_option_of_this_command_for_the_same_job_is_named() {
        let text = said(&["build", "--format", "github", "s.toml"]);
        assert!(
            text.contains("belongs to `check`, `verify`, `import` and `describe`"),
            "{text}"
        );
        assert!(
            text.contains("`build` has `-o`/`--output` for this: yaml, json"),
            "{text}"
        );
        assert!(text.contains("`trainc check --format github …`"), "{text}");
        assert!(
            said(&["check", "-o", "json", "s.toml"])
                .contains("`check` takes it as `--format json`")
        );
        assert!(
            said(&["check", "-ojson", "s.toml"]).contains("`check` takes it as `--format json`")
        );
        assert!(
            said(&["build", "--format=json", "s.toml"])
                .contains("`build` takes it as `--output json`")
        );
        assert!(
            said(&["import", "-o", "yaml", "x"]).contains("`import` takes it as `--format yaml`")
        );
        let text = said(&["init", "--api-level", "v2.3"]);
        assert!(text.contains("`[trainjob] apiLevel = \"v2.3\"`"), "{text}");
        let text = said(&["--format", "json", "check", "s.toml"]);
        assert!(
            text.contains("write it after the command, as in `trainc check --format json`"),
            "{text}"
        );
    }

    #[test]
    fn an_option_no_command_has_lists_this_commands_options() {
        let text = said(&["build", "--frobnicate", "s.toml"]);
        assert!(
            text.contains("`build` has no option `--frobnicate`"),
            "{text}"
        );
        assert!(text.contains("`-o`/`--output`, `--output-dir`"), "{text}");
        assert!(!text.contains("--help`"), "{text}");
        // Spelt like one of this command's: clap's suggestion stands.
        assert!(
            said(&["build", "--output-dr", "d", "s.toml"])
                .contains("a similar argument exists: '--output-dir'")
        );
    }

    #[test]
    fn a_second_argument_says_the_command_takes_one() {
        let text = said(&["build", "a.toml", "b.toml"]);
        assert!(
            text.contains("`build` takes one SPEC, and `b.toml` is a second"),
            "{text}"
        );
        assert!(text.contains("`-O b.toml`"), "{text}");
        assert!(text.contains("`trainc check` takes several"), "{text}");
        let text = said(&["build", "--verify", "true", "a.toml"]);
        assert!(
            text.contains("`--verify` is a switch and takes no value: `true` was read as the SPEC"),
            "{text}"
        );
        assert!(said(&["schema", "x"]).contains("`schema` takes no arguments"));
        assert!(said(&["init", "a.toml", "b.toml"]).contains("`init` takes one FILE"));
    }

    #[test]
    fn a_file_or_another_tools_verb_as_the_command_says_which_command() {
        assert!(
            said(&["spec.train.toml"]).contains("`trainc check spec.train.toml` checks a spec")
        );
        assert!(said(&["validate", "s.toml"]).contains("`trainc check`: Validate specs"));
        assert!(said(&["upgrade", "x.yaml"]).contains("`trainc migrate`"));
        assert!(said(&["apply", "s.toml"]).contains("kubectl apply -f -"));
        assert!(said(&["biuld", "s.toml"]).contains("a similar subcommand exists: 'build'"));
    }
}
