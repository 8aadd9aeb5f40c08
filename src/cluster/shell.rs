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
    let program = argv.first()?;
    let name = program.rsplit('/').next().unwrap_or(program);
    if !matches!(name, "sh" | "bash" | "dash" | "zsh" | "ash" | "ksh") {
        return None;
    }
    let mut words = argv[1..].iter();
    for word in words.by_ref() {
        let flags = word.strip_prefix('-')?;
        if flags.starts_with('-') {
            continue;
        }
        if flags.contains('c') {
            break;
        }
    }
    words.next().map(String::as_str)
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
