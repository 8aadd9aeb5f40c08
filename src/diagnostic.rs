//! Diagnostics: what every stage reports, and how the command layer renders it.
//!
//! A [`Diagnostic`] is plain data: a severity, a stable code
//! (`trainc::volumes::no_source`), a lowercase message, a primary label on the
//! exact span in the exact file, optional secondary labels and a help line.
//! Stages collect them; nothing here prints. Rendering goes through miette's
//! graphical handler for people and through [`Diagnostic::to_json`] for tools.
//!
//! One struct rather than a derive enum per stage: a diagnostic must carry the
//! file its span points into (a value may come from an overlay) and serialise to
//! JSON, which a derive-per-variant design would repeat for every variant.

use std::fmt;

use miette::{GraphicalReportHandler, GraphicalTheme, LabeledSpan, SourceSpan};

use crate::source::{MAX_SOURCE_BYTES, Sources, Span, Unusable};

pub mod codes;
pub mod sarif;
mod text;
mod yaml_words;

pub use text::{
    escape_controls, escape_for_terminal, escape_lines_for_terminal, listed, quoted_value, suggest,
};
use text::{escape_github_data, escape_github_property, printable};
pub use yaml_words::in_yaml;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Error,
    Warning,
    /// Neither wrong nor suspect: what a command did not do (`trainc
    /// verify`'s kinds it has no schema for).
    Note,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Label {
    pub span: Span,
    pub text: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub code: &'static str,
    pub message: String,
    pub primary: Label,
    pub secondary: Vec<Label>,
    pub help: Option<String>,
    /// The primary span's field (`spec.resources.memory`), where a source is
    /// shown by its alias rather than by line (see [`crate::source::Source::alias`]).
    pub field: Option<String>,
}

/// A file that was read but cannot be used, at its span.
impl From<Unusable> for Diagnostic {
    fn from(unusable: Unusable) -> Self {
        let (span, message) = (unusable.span(), unusable.message());
        match unusable {
            Unusable::TooLarge { limit, .. } => {
                Diagnostic::error(codes::SOURCE_TOO_LARGE, span, message).with_help(
                    if limit > MAX_SOURCE_BYTES {
                        "split the manifests into several files, or pass their directory"
                    } else {
                        "a training spec is a few kilobytes; check that this is the right file"
                    },
                )
            }
            Unusable::NotUtf8 { .. } => Diagnostic::error(codes::SOURCE_NOT_UTF8, span, message)
                .with_label("the first invalid byte is here")
                .with_help("save the file as UTF-8"),
        }
    }
}

impl Diagnostic {
    pub fn error(code: &'static str, span: Span, message: impl Into<String>) -> Self {
        Self::new(Severity::Error, code, span, message)
    }

    pub fn warning(code: &'static str, span: Span, message: impl Into<String>) -> Self {
        Self::new(Severity::Warning, code, span, message)
    }

    pub fn note(code: &'static str, span: Span, message: impl Into<String>) -> Self {
        Self::new(Severity::Note, code, span, message)
    }

    /// Points the spans at renumbered sources (see [`crate::Sources::absorb`]).
    pub fn renumber(&mut self, map: &impl Fn(crate::SourceId) -> crate::SourceId) {
        self.primary.span.source = map(self.primary.span.source);
        for label in &mut self.secondary {
            label.span.source = map(label.span.source);
        }
    }

    fn new(severity: Severity, code: &'static str, span: Span, message: impl Into<String>) -> Self {
        Diagnostic {
            severity,
            code,
            message: escape_controls(message.into()),
            primary: Label { span, text: None },
            secondary: Vec::new(),
            help: None,
            field: None,
        }
    }

    /// Text on the primary label.
    #[must_use]
    pub fn with_label(mut self, text: impl Into<String>) -> Self {
        self.primary.text = Some(escape_controls(text.into()));
        self
    }

    /// Adds `text` to the primary label (after what it says, in parentheses).
    pub fn add_to_label(&mut self, text: &str) {
        let text = escape_controls(text.to_owned());
        self.primary.text = Some(match self.primary.text.take() {
            Some(label) => format!("{label} ({text})"),
            None => text,
        });
    }

    /// Another labelled span; shown when it is in the same file as the primary one.
    #[must_use]
    pub fn with_secondary(mut self, span: Span, text: impl Into<String>) -> Self {
        self.secondary.push(Label {
            span,
            text: Some(escape_controls(text.into())),
        });
        self
    }

    #[must_use]
    pub fn with_help(mut self, text: impl Into<String>) -> Self {
        self.help = Some(escape_controls(text.into()));
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// File name, 1-based line and column of the primary span.
    pub fn location<'a>(&self, sources: &'a Sources) -> (&'a str, usize, usize) {
        let source = sources.get(self.primary.span.source);
        let (line, col) = source.line_col(self.primary.span.start);
        (&source.name, line, col)
    }

    /// One JSON object: file, line, col, severity, code, message, help.
    pub fn to_json(&self, sources: &Sources) -> serde_json::Value {
        let (file, line, col) = self.location(sources);
        serde_json::json!({
            "file": file,
            "line": line,
            "col": col,
            "severity": self.severity.as_str(),
            "code": self.code,
            "message": self.message,
            "help": self.help,
        })
    }

    /// A GitHub Actions workflow command, which the runner turns into an annotation.
    pub fn to_github(&self, sources: &Sources) -> String {
        let (file, line, col) = self.location(sources);
        let mut message = self.message.clone();
        if let Some(help) = &self.help {
            message.push_str("\nhelp: ");
            message.push_str(help);
        }
        // Line breaks become `%0A` (one annotation, one line: a file named
        // `x\n::error ...` starts no command); other controls are escaped.
        format!(
            "::{} file={},line={line},col={col},title={}::{}",
            match self.severity {
                Severity::Note => "notice",
                other => other.as_str(),
            },
            escape_for_terminal(&escape_github_property(file)),
            escape_github_property(self.code),
            escape_for_terminal(&escape_github_data(&message)),
        )
    }
}

/// Sorts diagnostics into reading order: by file, then position, errors first.
pub fn sort(diagnostics: &mut [Diagnostic]) {
    diagnostics.sort_by(|a, b| {
        (a.primary.span.source, a.primary.span.start, a.severity).cmp(&(
            b.primary.span.source,
            b.primary.span.start,
            b.severity,
        ))
    });
}

/// How human-readable diagnostics look.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    pub color: bool,
    pub width: usize,
}

impl Style {
    /// No colour, fixed width: the same bytes on every machine (pipes, tests, CI).
    pub const PLAIN: Style = Style {
        color: false,
        width: 100,
    };
}

/// Lines longer than this are not shown in snippets.
const MAX_SNIPPET_LINE: usize = 1000;

/// A header or help longer than this (in characters) is cut: whatever a
/// message quotes of the input, a diagnostic stays a few lines long.
const MAX_TEXT: usize = 4000;

/// `text` escaped for the terminal and cut to [`MAX_TEXT`] characters.
fn shown(text: &str) -> String {
    let text = escape_for_terminal(text);
    match text.char_indices().nth(MAX_TEXT) {
        Some((at, _)) => {
            let rest = text[at..].chars().count();
            format!("{}… ({rest} more characters)", &text[..at])
        }
        None => text,
    }
}

/// Renders one diagnostic as miette's graphical report, with the source snippet.
pub fn render(diagnostic: &Diagnostic, sources: &Sources, style: Style) -> String {
    let theme = if style.color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let handler = GraphicalReportHandler::new_themed(theme)
        .with_width(style.width)
        .with_context_lines(1)
        // Break lines at spaces only: a path, a hyphenated name or a `code`
        // span stays whole, so it can be copied from the terminal.
        .with_word_separator(textwrap::WordSeparator::AsciiSpace)
        .with_word_splitter(textwrap::WordSplitter::NoHyphenation)
        .with_break_words(false)
        .without_syntax_highlighting()
        .with_links(false);
    let source = sources.get(diagnostic.primary.span.source);
    let (_, line, col) = diagnostic.location(sources);
    let window = Window::around(diagnostic, source);
    let report = Report {
        diagnostic,
        labels: window
            .as_ref()
            .map(|w| w.labels.clone())
            .unwrap_or_default(),
        // Everything shown is escaped here, whatever its origin: a file
        // name, a TrainSpec's name, a field path or a message can hold a
        // control character that must not reach the terminal.
        header: shown(&format!(
            "{}: {}: {}",
            match (&source.alias, &diagnostic.field) {
                (Some(alias), Some(field)) => format!("{alias}, {field}"),
                (Some(alias), None) => alias.clone(),
                (None, _) => format!("{}:{line}:{col}", source.name),
            },
            diagnostic.severity.as_str(),
            diagnostic.message
        )),
        help: diagnostic.help.as_deref().map(shown),
        window,
    };
    let mut out = String::new();
    handler
        .render_report(&mut out, &report)
        .expect("rendering into a String cannot fail");
    out
}

/// Adapter that shows a [`Diagnostic`] to miette.
struct Report<'a> {
    diagnostic: &'a Diagnostic,
    /// The labels to draw, primary first; empty without a snippet.
    labels: Vec<(Label, bool)>,
    header: String,
    help: Option<String>,
    window: Option<Window>,
}

/// Labels spanning more lines than this are drawn on their first line only:
/// an error about a whole table or file must not print the whole file.
const MAX_LABEL_LINES: usize = 4;

/// The lines of a source a snippet shows, copied once: rendering costs the
/// size of the snippets, not of the file. Line numbers stay the file's.
struct Window {
    name: String,
    /// Runs of lines around the labels, in order, none overlapping.
    segments: Vec<Segment>,
    labels: Vec<(Label, bool)>,
}

struct Segment {
    /// Byte offset and 0-based line of `text` in the source.
    offset: usize,
    first_line: usize,
    text: String,
}

impl Window {
    fn around(diagnostic: &Diagnostic, source: &crate::source::Source) -> Option<Window> {
        if source.text.is_empty() {
            return None;
        }
        let clip = |label: &Label| {
            let start = label.span.start.min(source.text.len());
            let first = source.line_of(start);
            let end = label.span.end.min(source.text.len()).max(start);
            let end = if source.line_of(end) >= first + MAX_LABEL_LINES {
                source.line_range(first).end.max(start)
            } else {
                end
            };
            Label {
                span: Span::new(label.span.source, start, end),
                text: label.text.clone(),
            }
        };
        let short = |label: &Label| {
            source.line_range(source.line_of(label.span.start)).len() <= MAX_SNIPPET_LINE
        };
        let primary = clip(&diagnostic.primary);
        // A snippet of a megabyte-long line helps nobody: show the location only.
        if !short(&primary) {
            return None;
        }
        let mut labels = vec![(primary, true)];
        labels.extend(
            diagnostic
                .secondary
                .iter()
                .filter(|l| l.span.source == diagnostic.primary.span.source)
                .map(clip)
                .filter(short)
                .take(MAX_SECONDARY)
                .map(|label| (label, false)),
        );
        // Up to two lines either side: miette picks its line of context from
        // them. A long line is no context: the run stops before it.
        let short_line = |line: usize| source.line_range(line).len() <= MAX_SNIPPET_LINE;
        let last_line = source.line_of(source.text.len());
        let mut runs: Vec<(usize, usize)> = labels
            .iter()
            .map(|(l, _)| {
                let (first, last) = (source.line_of(l.span.start), source.line_of(l.span.end));
                let before = (1..=2)
                    .take_while(|&n| first >= n && short_line(first - n))
                    .count();
                let after = (1..=2)
                    .take_while(|&n| last + n <= last_line && short_line(last + n))
                    .count();
                (first - before, last + after)
            })
            .collect();
        runs.sort_unstable();
        let mut merged: Vec<(usize, usize)> = Vec::new();
        for (first, last) in runs {
            match merged.last_mut() {
                Some(run) if first <= run.1 + 1 => run.1 = run.1.max(last),
                _ => merged.push((first, last)),
            }
        }
        let segments = merged
            .into_iter()
            .map(|(first, last)| {
                let offset = source.line_range(first).start;
                let end = source.line_range(last).end;
                Segment {
                    offset,
                    first_line: first,
                    text: printable(&source.text[offset..end]),
                }
            })
            .collect();
        Some(Window {
            name: escape_for_terminal(&source.alias.as_ref().map_or_else(
                || source.name.clone(),
                |alias| format!("{alias}, as kustomize passed it"),
            )),
            segments,
            labels,
        })
    }
}

/// Secondary labels drawn at most.
const MAX_SECONDARY: usize = 8;

impl miette::SourceCode for Window {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        before: usize,
        after: usize,
    ) -> Result<Box<dyn miette::SpanContents<'a> + 'a>, miette::MietteError> {
        let segment = self
            .segments
            .iter()
            .rev()
            .find(|s| s.offset <= span.offset())
            .or(self.segments.first())
            .ok_or(miette::MietteError::OutOfBounds)?;
        let start = span
            .offset()
            .saturating_sub(segment.offset)
            .min(segment.text.len());
        let len = span.len().min(segment.text.len() - start);
        let local = SourceSpan::from(start..start + len);
        let contents = segment.text.as_str().read_span(&local, before, after)?;
        let at = contents.span().offset() + segment.offset;
        Ok(Box::new(miette::MietteSpanContents::new_named(
            self.name.clone(),
            contents.data(),
            SourceSpan::from(at..at + contents.span().len()),
            contents.line() + segment.first_line,
            // miette counts the column in bytes; the header counts characters.
            match segment.text.get(..start) {
                Some(head) if before == 0 => head.chars().rev().take_while(|&c| c != '\n').count(),
                _ => contents.column(),
            },
            contents.line_count(),
        )))
    }
}

impl fmt::Debug for Report<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.header)
    }
}

impl fmt::Display for Report<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.header)
    }
}

impl std::error::Error for Report<'_> {}

impl miette::Diagnostic for Report<'_> {
    fn code<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        Some(Box::new(self.diagnostic.code))
    }

    fn severity(&self) -> Option<miette::Severity> {
        Some(match self.diagnostic.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
            Severity::Note => miette::Severity::Advice,
        })
    }

    fn help<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        self.help
            .as_ref()
            .map(|h| Box::new(h) as Box<dyn fmt::Display>)
    }

    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        self.window.as_ref().map(|w| w as &dyn miette::SourceCode)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        if self.labels.is_empty() {
            return None;
        }
        Some(Box::new(self.labels.iter().map(|(label, primary)| {
            let span = SourceSpan::from(label.span.start..label.span.end);
            let text = label.text.as_deref().map(escape_for_terminal);
            if *primary {
                LabeledSpan::new_primary_with_span(text, span)
            } else {
                LabeledSpan::new_with_span(text, span)
            }
        })))
    }
}

/// A one-line tally such as `2 errors, 1 warning`.
pub fn summary(diagnostics: &[Diagnostic]) -> String {
    let errors = diagnostics.iter().filter(|d| d.is_error()).count();
    let warnings = diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Warning)
        .count();
    tally(errors, warnings)
}

/// `N errors, M warnings`: [`summary`] of diagnostics already counted.
pub fn tally(errors: usize, warnings: usize) -> String {
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    format!(
        "{}, {}",
        plural(errors, "error"),
        plural(warnings, "warning")
    )
}
