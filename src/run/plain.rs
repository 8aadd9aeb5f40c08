//! One container as a plain process, where user namespaces are not
//! available: mount paths in its command, args, environment and working
//! directory are rewritten to the local directories, and the pods' DNS
//! names to 127.0.0.1 ([`Rewrite`]). Its environment is its own (passed as
//! an environment, never on a command line).

use std::process::Command;

use super::plan::ContainerPlan;
use super::workdir::LocalMount;

/// Rewrites for a run without namespaces: each mount path to its local
/// directory, each DNS name to 127.0.0.1. Longest first, so that
/// `/trainc/code` is not taken for `/trainc`.
pub struct Rewrite {
    pairs: Vec<(String, String)>,
}

impl Rewrite {
    pub fn new(mounts: &[LocalMount], names: &[String]) -> Rewrite {
        let mut pairs: Vec<(String, String)> = mounts
            .iter()
            .map(|m| (m.target.clone(), m.source.display().to_string()))
            .chain(names.iter().map(|n| (n.clone(), "127.0.0.1".to_owned())))
            .collect();
        pairs.sort_by_key(|(from, _)| std::cmp::Reverse(from.len()));
        Rewrite { pairs }
    }

    /// `text` with every mount path and name replaced.
    pub fn apply(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        'scan: while !rest.is_empty() {
            for (from, to) in &self.pairs {
                if let Some(after) = rest.strip_prefix(from.as_str()) {
                    let ends = after.chars().next().is_none_or(|c| {
                        !c.is_ascii_alphanumeric() && c != '-' && c != '.' && c != '_' || c == '/'
                    });
                    let starts = out.chars().last().is_none_or(|c| {
                        !c.is_ascii_alphanumeric() && c != '-' && c != '.' && c != '_'
                    });
                    if ends && starts {
                        out.push_str(to);
                        rest = after;
                        continue 'scan;
                    }
                }
            }
            let c = rest.chars().next().expect("not empty");
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
        out
    }
}

/// The command that runs `container` as a plain process, its paths and
/// names rewritten.
pub fn command(container: &ContainerPlan, mounts: &[LocalMount], names: &[String]) -> Command {
    let rewrite = Rewrite::new(mounts, names);
    let argv: Vec<String> = container.argv.iter().map(|w| rewrite.apply(w)).collect();
    let mut command = Command::new(&argv[0]);
    command.args(&argv[1..]).env_clear();
    for (name, value) in &container.env {
        command.env(name, rewrite.apply(value));
    }
    command.current_dir(rewrite.apply(&container.working_dir));
    command
}

#[cfg(test)]
mod tests {
    use super::Rewrite;
    use crate::run::workdir::LocalMount;

    #[test]
    fn rewrite_takes_whole_paths_and_names() {
        let mounts = [LocalMount {
            target: "/trainc/code".into(),
            source: "/tmp/x/code".into(),
            read_only: true,
        }];
        let names = ["job-0.job".to_owned(), "job-0".to_owned()];
        let r = Rewrite::new(&mounts, &names);
        assert_eq!(r.apply("/trainc/code/train.py"), "/tmp/x/code/train.py");
        assert_eq!(r.apply("/trainc/codex"), "/trainc/codex");
        assert_eq!(
            r.apply("--master_addr=job-0.job"),
            "--master_addr=127.0.0.1"
        );
        assert_eq!(r.apply("job-0.jobs"), "job-0.jobs");
        assert_eq!(r.apply("xjob-0"), "xjob-0");
    }
}
