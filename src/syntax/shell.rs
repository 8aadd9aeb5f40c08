//! POSIX shell quoting, for the one command trainc runs through `sh -c`
//! (installing `[code] packages` before torchrun). Every word put into that
//! script goes through [`quote`]; nothing is concatenated unquoted.

/// `word` as one POSIX shell word: unchanged when it has only characters no
/// shell treats specially (`=` too, unless what comes before it could be read
/// as an assignment `NAME=`), else in single quotes, with each `'` written `'\''`.
pub fn quote(word: &str) -> String {
    let assignment = word.split_once('=').is_some_and(|(name, _)| {
        name.bytes().next().is_some_and(|b| !b.is_ascii_digit())
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
    });
    let plain = !word.is_empty()
        && !assignment
        && word.bytes().all(|b| {
            b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'_' | b'-' | b'.' | b'/' | b':' | b',' | b'+' | b'@' | b'%' | b'='
                )
        });
    if plain {
        return word.to_owned();
    }
    let mut out = String::with_capacity(word.len() + 2);
    out.push('\'');
    for c in word.chars() {
        if c == '\'' {
            out.push_str("'\\''");
        } else {
            out.push(c);
        }
    }
    out.push('\'');
    out
}

/// Words joined into one command line, each quoted.
pub fn join<'a>(words: impl IntoIterator<Item = &'a str>) -> String {
    words.into_iter().map(quote).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::{join, quote};

    #[test]
    fn plain_words_stay_as_they_are() {
        assert_eq!(quote("torchvision"), "torchvision");
        assert_eq!(quote("/trainc/code/train.py"), "/trainc/code/train.py");
        assert_eq!(
            quote("https://pypi.example.com/simple"),
            "https://pypi.example.com/simple"
        );
    }

    #[test]
    fn everything_a_shell_reads_is_quoted() {
        assert_eq!(quote("torchvision==0.19.1"), "'torchvision==0.19.1'");
        assert_eq!(quote("--nproc_per_node=8"), "--nproc_per_node=8");
        assert_eq!(quote("A=1"), "'A=1'");
        assert_eq!(quote("numpy>=1.26,<2"), "'numpy>=1.26,<2'");
        assert_eq!(quote(""), "''");
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("$(rm -rf /)"), "'$(rm -rf /)'");
        assert_eq!(quote("`id`"), "'`id`'");
        assert_eq!(quote("it's"), "'it'\\''s'");
        assert_eq!(quote("x;y&z|w"), "'x;y&z|w'");
        assert_eq!(quote("~/x"), "'~/x'");
        assert_eq!(quote("*.py"), "'*.py'");
        assert_eq!(quote("line\nbreak"), "'line\nbreak'");
    }

    #[test]
    fn a_quoted_line_reads_back_as_the_same_words() {
        // The shell itself is the judge: `sh -c 'printf "%s\0" "$@"' sh WORDS`.
        let words = [
            "plain",
            "torch==2.4; python_version>'3.8'",
            "it's",
            "$HOME",
            "a\\b",
            "",
            " lead",
            "\"dq\"",
            "!bang",
        ];
        let script = format!("printf '%s\\0' {}", join(words));
        let Ok(output) = std::process::Command::new("sh")
            .args(["-c", &script])
            .output()
        else {
            return; // no shell on this machine: the unit tests above still hold
        };
        let printed = String::from_utf8(output.stdout).unwrap();
        let read_back: Vec<&str> = printed.split('\0').collect();
        assert_eq!(&read_back[..words.len()], &words[..]);
    }
}
