//! What a container's shell script reads from its environment: a command
//! line `sh -c 'torchrun --node_rank=$RANK …'` (or `bash`, `/bin/sh`,
//! `-lc`, `-ec`) is a script the shell expands at start, so a variable it
//! names is read even though no `$(VAR)` of the kubelet's is written.
//!
//! The reading is the POSIX shell's parameter expansion (`$NAME`,
//! `${NAME}`, `${NAME:-default}` and the other `${NAME…}` forms), outside
//! single quotes and after a `\` escape; `$1`, `$@` and the other special
//! parameters are the script's own, not the environment's.

/// The script a command line hands a shell with `-c`: the word after the
/// first option that holds `c`, when the program is a shell.
pub fn script(argv: &[String]) -> Option<&str> {
    script_at(argv).map(|at| argv[at].as_str())
}

/// Where in `argv` [`script`] is.
pub fn script_at(argv: &[String]) -> Option<usize> {
    let program = argv.first()?;
    let name = program.rsplit('/').next().unwrap_or(program);
    if !matches!(name, "sh" | "bash" | "dash" | "zsh" | "ash" | "ksh") {
        return None;
    }
    for (at, word) in argv.iter().enumerate().skip(1) {
        let flags = word.strip_prefix('-')?;
        if !flags.starts_with('-') && flags.contains('c') {
            return (at + 1 < argv.len()).then_some(at + 1);
        }
    }
    None
}

/// A variable a container's command line reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Read {
    pub name: String,
    /// `command` or `args`, and the word's index in it.
    pub field: &'static str,
    pub index: usize,
    /// Read by a `sh -c` script (`$NAME`), not the kubelet's `$(NAME)`.
    pub shell: bool,
}

/// The variables `command` and `args` read: each `$(NAME)` the kubelet
/// expands, then what a `sh -c` script among them reads; each name once,
/// where it is first read.
pub fn command_line_reads(command: &[String], args: &[String]) -> Vec<Read> {
    let place = |at: usize| {
        if at < command.len() {
            ("command", at)
        } else {
            ("args", at - command.len())
        }
    };
    let line: Vec<String> = command.iter().chain(args).cloned().collect();
    let mut found: Vec<Read> = Vec::new();
    let mut add = |name: &str, at: usize, shell: bool| {
        if !found.iter().any(|r| r.name == name) {
            let (field, index) = place(at);
            found.push(Read {
                name: name.to_owned(),
                field,
                index,
                shell,
            });
        }
    };
    for (at, word) in line.iter().enumerate() {
        super::kubelet::scan(word, |piece| {
            if let super::kubelet::Piece::Reference(name) = piece {
                add(name, at, false);
            }
        });
    }
    if let Some(at) = script_at(&line) {
        for name in reads(&line[at]) {
            add(&name, at, true);
        }
    }
    found
}

/// The variables `script` reads, in the order first read, each once.
pub fn reads(script: &str) -> Vec<String> {
    let bytes = script.as_bytes();
    let mut found: Vec<String> = Vec::new();
    let mut quoted = false;
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'\'' => quoted = !quoted,
            b'\\' if !quoted => at += 1,
            b'$' if !quoted => {
                let braced = bytes.get(at + 1) == Some(&b'{');
                let start = at + 1 + usize::from(braced);
                let end = bytes[start..]
                    .iter()
                    .position(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
                    .map_or(bytes.len(), |n| start + n);
                let name = &script[start..end];
                if !name.is_empty()
                    && !name.starts_with(|c: char| c.is_ascii_digit())
                    && !found.iter().any(|f| f == name)
                {
                    found.push(name.to_owned());
                }
                at = end;
                continue;
            }
            _ => {}
        }
        at += 1;
    }
    found
}

#[cfg(test)]
mod tests {
    use super::{reads, script};

    fn words(w: &[&str]) -> Vec<String> {
        w.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn finds_the_script_of_a_shell() {
        let argv = words(&["/bin/bash", "-lc", "torchrun --node_rank=$RANK x.py"]);
        assert_eq!(script(&argv), Some("torchrun --node_rank=$RANK x.py"));
        assert_eq!(script(&words(&["sh", "-e", "-c", "echo"])), Some("echo"));
        assert_eq!(script(&words(&["python", "-c", "print(1)"])), None);
        assert_eq!(script(&words(&["sh", "run.sh"])), None);
    }

    #[test]
    fn reads_what_the_shell_expands() {
        let read = reads(
            r#"torchrun --node_rank=${RANK} --master_addr=$MASTER_ADDR:${MASTER_PORT:-29500} '$NOT' \$ALSO_NOT "$WORLD_SIZE" $1 $@ $RANK"#,
        );
        assert_eq!(read, ["RANK", "MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE"]);
    }
}
