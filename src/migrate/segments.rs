//! A manifest file as the segments between its `---` lines, so that what
//! `trainc migrate` does not replace leaves it byte for byte, comments
//! included.

/// One stretch of the input between two `---` lines (the first and last
/// may have none): `start..end` of the text, the marker line not included.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Segment {
    pub(super) start: usize,
    pub(super) end: usize,
}

/// The segments of `text`. A line that starts with `---` followed by
/// nothing, a space or a tab is a document marker (YAML 1.2 §9.1: at the
/// start of a line it ends any block scalar too).
pub(super) fn split(text: &str) -> Vec<Segment> {
    let mut segments = Vec::new();
    let mut start = 0;
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let content = line.trim_end_matches(['\n', '\r']);
        let marker = content
            .strip_prefix("---")
            .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t']));
        if marker {
            segments.push(Segment { start, end: at });
            start = at + line.len();
        }
        at += line.len();
    }
    segments.push(Segment {
        start,
        end: text.len(),
    });
    segments
}

/// The index of the segment holding byte `offset`.
pub(super) fn holding(segments: &[Segment], offset: usize) -> Option<usize> {
    segments
        .iter()
        .position(|s| s.start <= offset && offset < s.end.max(s.start + 1))
}

/// The segments' texts again as one stream, each non-blank one a document;
/// comment-only segments kept where they were.
pub(super) fn join(parts: &[String]) -> String {
    let mut out = String::new();
    let mut first = true;
    for part in parts.iter().filter(|p| !p.is_empty()) {
        if !first && !crate::parse::is_blank(part) {
            out.push_str("---\n");
        }
        out.push_str(part);
        if !part.ends_with('\n') {
            out.push('\n');
        }
        first = first && crate::parse::is_blank(part);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_split_and_block_scalars_do_not() {
        let text = "# head\napiVersion: v1\n--- # two\nkind: A\ndata: |\n  ---x\n---\nkind: B\n";
        let s = split(text);
        assert_eq!(s.len(), 3);
        assert_eq!(&text[s[0].start..s[0].end], "# head\napiVersion: v1\n");
        assert_eq!(&text[s[1].start..s[1].end], "kind: A\ndata: |\n  ---x\n");
        assert_eq!(&text[s[2].start..s[2].end], "kind: B\n");
        assert_eq!(holding(&s, text.find("kind: B").unwrap()), Some(2));
    }

    #[test]
    fn a_leading_marker_makes_no_document() {
        let text = "---\na: 1\n";
        let s = split(text);
        assert_eq!(s.len(), 2);
        assert!(crate::parse::is_blank(&text[s[0].start..s[0].end]));
        let parts: Vec<String> = s.iter().map(|s| text[s.start..s.end].to_owned()).collect();
        assert_eq!(join(&parts), "a: 1\n");
        let parts = ["# c\n".to_owned(), "a: 1\n".to_owned(), "b: 2".to_owned()];
        assert_eq!(join(&parts), "# c\na: 1\n---\nb: 2\n");
    }
}
