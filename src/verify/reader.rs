//! The one reader of a manifest stream, which `verify` and `migrate` share:
//! its documents found by their markers ([`crate::yaml::parts`]), parsed
//! [`PARTS_PER_WINDOW`] at a time on every core, each window handed to the
//! caller and then dropped, so that what is held is a window's trees. Where
//! the parts of a window do not read as predicted (a syntax error, a
//! directive, a part that holds another number of documents than its text
//! shows), the rest of the stream is read as one part, exactly as a reader
//! of the whole reads it, its documents before that window passed over.

use std::ops::Range;

use crate::diagnostic::Diagnostic;
use crate::parse::ManifestStream;
use crate::source::SourceId;

/// Deep enough for any Kubernetes object (a PyTorchJob's container fields sit
/// about 12 levels down; CRDs with embedded templates go further).
pub const MAX_DEPTH: usize = 64;
/// More documents than a large repository's whole rendered output holds
/// (the benchmark verifies 10,000 in one stream).
pub const MAX_DOCUMENTS: usize = 200_000;
/// Parts parsed at a time (on every core): what a window holds is their
/// trees.
const PARTS_PER_WINDOW: usize = 2048;

/// A part parsed: its index among the stream's parts, its first document's
/// number and what it holds.
pub(crate) struct Parsed {
    /// Its index among the stream's parts.
    pub index: usize,
    /// 1-based, among the stream's non-empty documents.
    pub first: usize,
    pub stream: ManifestStream,
}

/// The documents of the manifest stream `text`, read a window of parts at a
/// time on every core and handed to `visit` in order, then dropped: the one
/// reader of a stream that `verify` and `migrate` share. The bytes of every
/// part read, in order; the stream's parse errors if it is not YAML (after
/// the windows before the error were visited).
pub(crate) fn windows(
    text: &str,
    id: SourceId,
    visit: &mut dyn FnMut(&[Parsed]),
) -> Result<Vec<Range<usize>>, Vec<Diagnostic>> {
    let mut ranges = Vec::new();
    let parts = crate::yaml::parts(text)
        .filter(|parts| parts.len() > 1 && parts.len() <= MAX_DOCUMENTS)
        .unwrap_or_default();
    // Each part's first document number, from the documents before it.
    let mut documents = 1;
    let mut rest = (0, 1);
    for window in parts.chunks(PARTS_PER_WINDOW) {
        let mut first = Vec::with_capacity(window.len());
        for part in window {
            first.push(documents);
            documents += usize::from(!part.empty);
        }
        let offset = ranges.len();
        let parsed = super::in_order(window, |start, chunk| {
            let mut parsed = Vec::with_capacity(chunk.len());
            for (i, part) in chunk.iter().enumerate() {
                let stream = crate::parse::parse_manifest_part(
                    id,
                    text,
                    part.range.clone(),
                    MAX_DEPTH,
                    MAX_DOCUMENTS,
                )
                .ok()
                .filter(|s| s.documents.len() == usize::from(!part.empty))?;
                parsed.push(Parsed {
                    index: offset + start + i,
                    first: first[start + i],
                    stream,
                });
            }
            Some(parsed)
        });
        let Some(parsed) = parsed
            .into_iter()
            .collect::<Option<Vec<Vec<Parsed>>>>()
            .map(|chunks| chunks.into_iter().flatten().collect::<Vec<_>>())
        else {
            // Read as a whole from this window's first part on, as a reader
            // of the whole stream reads it.
            rest = (window[0].range.start, first[0]);
            break;
        };
        ranges.extend(window.iter().map(|p| p.range.clone()));
        visit(&parsed);
        rest = (text.len(), documents);
    }
    let (start, first) = rest;
    if start < text.len() || ranges.is_empty() {
        let range = start..text.len();
        let stream =
            crate::parse::parse_manifest_part(id, text, range.clone(), MAX_DEPTH, MAX_DOCUMENTS)?;
        let index = ranges.len();
        ranges.push(range);
        visit(&[Parsed {
            index,
            first,
            stream,
        }]);
    }
    Ok(ranges)
}
