//! The text helpers every stage's messages use: user values escaped so that
//! no control character reaches a terminal or a CI log, values quoted and
//! cut, and the did-you-mean among known words.

/// The source as shown in a snippet: control characters other than line
/// breaks and tabs (a carriage return outside CRLF, C1 controls, bidi
/// overrides) become one visible character of the same length in bytes
/// (`?`, `¿` or `�`), so every span still fits and every column still
/// counts one character for one.
pub(super) fn printable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let keep = match c {
            '\n' | '\t' => true,
            '\r' => chars.peek() == Some(&'\n'),
            c => !unsafe_for_terminal(c),
        };
        if keep {
            out.push(c);
        } else {
            match c.len_utf8() {
                2 => out.push('\u{bf}'),
                3 => out.push('\u{fffd}'),
                n => out.extend(std::iter::repeat_n('?', n)),
            }
        }
    }
    out
}

/// Characters a terminal acts on rather than shows: controls (C0, DEL,
/// C1, line breaks), bidi embeddings, overrides and isolates, and the
/// separators and marks that reorder or hide text.
fn unsafe_for_terminal(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2060}'..='\u{2069}' | '\u{061c}' | '\u{feff}'
        )
}

/// `text` with every character a terminal would act on written as an escape
/// (`\n`, `\u{1b}`, `\u{202e}`): user values end up in messages, and a
/// newline must not forge a diagnostic line nor an escape sequence reach the
/// terminal raw.
pub fn escape_for_terminal(text: &str) -> String {
    if !text.chars().any(unsafe_for_terminal) {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if unsafe_for_terminal(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// `text` with every line escaped as [`escape_for_terminal`] does, its line
/// breaks kept: for whole texts for people, such as `describe`.
pub fn escape_lines_for_terminal(text: &str) -> String {
    text.split_inclusive('\n')
        .map(|line| match line.strip_suffix('\n') {
            Some(line) => escape_for_terminal(line) + "\n",
            None => escape_for_terminal(line),
        })
        .collect()
}

/// A value from the input as a message quotes it: escaped as
/// [`escape_for_terminal`] does, and cut to `chars` characters with `…`.
pub fn quoted_value(text: &str, chars: usize) -> String {
    let text = escape_for_terminal(text);
    match text.char_indices().nth(chars) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}

/// [`escape_for_terminal`] on an owned text, which comes back as it was
/// when nothing needs escaping.
pub fn escape_controls(text: String) -> String {
    if text.chars().any(unsafe_for_terminal) {
        escape_for_terminal(&text)
    } else {
        text
    }
}

pub(super) fn escape_github_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

pub(super) fn escape_github_property(text: &str) -> String {
    escape_github_data(text)
        .replace(':', "%3A")
        .replace(',', "%2C")
}

/// Items as a sentence lists them: `a`, `a and b`, `a, b and c`.
pub fn listed(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// The candidate closest to `word`, if one is close enough to be a likely typo:
/// same letters ignoring case, `_` and `-` (`n_proc_per_node` → `nProcPerNode`),
/// or a small edit distance.
pub fn suggest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let normal = |s: &str| {
        s.chars()
            .filter(|c| *c != '_' && *c != '-')
            .flat_map(char::to_lowercase)
            .collect::<String>()
    };
    let word_normal = normal(word);
    let word_len = word_normal.chars().count();
    let mut best: Option<((usize, usize), &str)> = None;
    for candidate in candidates {
        // The distance is at least the difference in length: most candidates
        // are ruled out before anything is computed.
        let allowed = (word_len.max(candidate.len()) / 3).clamp(1, 3);
        let candidate_len = candidate.chars().filter(|c| *c != '_' && *c != '-').count();
        if word_len.abs_diff(candidate_len) > allowed {
            continue;
        }
        let candidate_normal = normal(candidate);
        if candidate_normal == word_normal {
            return Some(candidate);
        }
        let distance = strsim::damerau_levenshtein(&word_normal, &candidate_normal);
        // Rank by distance, then by shared prefix (`gpu` is closer to `gpus` than to `cpu`).
        let score = (
            distance,
            usize::MAX - common_prefix(&word_normal, &candidate_normal),
        );
        if distance <= allowed && best.is_none_or(|(s, _)| score < s) {
            best = Some((score, candidate));
        }
    }
    best.map(|(_, candidate)| candidate)
}

fn common_prefix(a: &str, b: &str) -> usize {
    a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions_catch_typos_and_case() {
        let keys = ["replicas", "resources", "nProcPerNode", "image"];
        assert_eq!(suggest("replica", keys), Some("replicas"));
        assert_eq!(suggest("n_proc_per_node", keys), Some("nProcPerNode"));
        assert_eq!(suggest("imgae", keys), Some("image"));
        assert_eq!(suggest("zzz", keys), None);
        assert_eq!(suggest("gpu", ["cpu", "memory", "gpus"]), Some("gpus"));
    }
}
