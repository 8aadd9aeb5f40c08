//! Diagnostics printed as they come, in the format asked for: `--format
//! json` and `github` a line each, `sarif` a result each inside the log's
//! frame ([`trainc::diagnostic::sarif::Log`]), all through one buffer on
//! stdout; the human form, on stderr, keeps of each file the first
//! [`MAX_SHOWN_PER_FILE`] by place (what it shows) and counts the rest. So
//! a file of hundreds of thousands of problems costs its printing, not
//! their sum in memory.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write as _;

use super::Status;
use crate::cli::Format;
use trainc::diagnostic::{self, Diagnostic, Severity};
use trainc::source::{SourceId, Sources};

/// Diagnostics shown per file for people: past this, one file with
/// thousands of problems would bury the others (and the first few are the
/// ones to fix first).
pub(super) const MAX_SHOWN_PER_FILE: usize = 50;

/// Says, for a file (`name`) of `count` diagnostics, how many of them are
/// not shown to people, if any.
pub(super) fn not_shown(out: &mut String, count: usize, name: &str) {
    if count > MAX_SHOWN_PER_FILE {
        let _ = writeln!(
            out,
            "{} more problems in {} are not shown; `--format json` lists them all\n",
            count - MAX_SHOWN_PER_FILE,
            diagnostic::escape_for_terminal(name),
        );
    }
}

/// Of one file, for people: its first diagnostics by place (and arrival),
/// and how many it had.
type Shown = (BTreeMap<(usize, Severity, usize), Diagnostic>, usize);

pub(super) struct Printer {
    format: Format,
    out: std::io::BufWriter<std::io::Stdout>,
    /// Why stdout could not be written, once it could not.
    failed: Option<std::io::Error>,
    /// stdout was closed (`| head`): not an error, nothing more written.
    closed: bool,
    errors: usize,
    warnings: usize,
    /// The diagnostic printed last, to print a repeat of it once.
    last: Option<Diagnostic>,
    /// Human: each file's first diagnostics by place (and their arrival,
    /// so that equal places keep their order), and how many it had.
    shown: BTreeMap<SourceId, Shown>,
    arrived: usize,
    sarif: diagnostic::sarif::Log,
}

impl Printer {
    pub(super) fn new(format: Format) -> Printer {
        let mut printer = Printer {
            format,
            out: std::io::BufWriter::with_capacity(64 * 1024, std::io::stdout()),
            failed: None,
            closed: false,
            errors: 0,
            warnings: 0,
            last: None,
            shown: BTreeMap::new(),
            arrived: 0,
            sarif: diagnostic::sarif::Log::default(),
        };
        if format == Format::Sarif {
            printer.write(&diagnostic::sarif::Log::head());
        }
        printer
    }

    /// Prints `d` (or keeps it, for people), once however often it comes
    /// in a row.
    pub(super) fn add(&mut self, sources: &Sources, d: Diagnostic) {
        if self.last.as_ref() == Some(&d) {
            return;
        }
        match d.severity {
            Severity::Error => self.errors += 1,
            Severity::Warning => self.warnings += 1,
            Severity::Note => {}
        }
        match self.format {
            Format::Human => {
                let (kept, count) = self.shown.entry(d.primary.span.source).or_default();
                *count += 1;
                self.arrived += 1;
                kept.insert((d.primary.span.start, d.severity, self.arrived), d.clone());
                if kept.len() > MAX_SHOWN_PER_FILE {
                    kept.pop_last();
                }
            }
            Format::Json => {
                let line = format!("{}\n", d.to_json(sources));
                self.write(&line);
            }
            Format::Github => {
                let line = format!("{}\n", d.to_github(sources));
                self.write(&line);
            }
            Format::Sarif => {
                let result = self.sarif.result(&d, sources);
                self.write(&result);
            }
        }
        self.last = Some(d);
    }

    pub(super) fn has_errors(&self) -> bool {
        self.errors > 0
    }

    /// Ends the output (the human form with `what` and the tally); the
    /// exit status, at least 1 when any diagnostic was an error, 2 when
    /// stdout could not be written.
    pub(super) fn finish(mut self, sources: &Sources, what: &str, status: Status) -> Status {
        match self.format {
            Format::Human => {
                let style = super::stderr_style();
                let mut out = String::new();
                let shown = std::mem::take(&mut self.shown);
                for kept in shown.values() {
                    for d in kept.0.values() {
                        out.push_str(&diagnostic::render(d, sources, style));
                        out.push('\n');
                    }
                }
                for (id, (_, count)) in &shown {
                    not_shown(&mut out, *count, &sources.get(*id).name);
                }
                let _ = writeln!(
                    out,
                    "{what}: {}",
                    diagnostic::tally(self.errors, self.warnings)
                );
                super::write_rendered(&out);
            }
            Format::Sarif => {
                let tail = self.sarif.tail();
                self.write(&tail);
            }
            Format::Json | Format::Github => {}
        }
        if !self.closed && self.failed.is_none() {
            self.record(std::io::Write::flush);
        }
        let status = if self.errors > 0 {
            status.max(Status::Invalid)
        } else {
            status
        };
        match self.failed {
            Some(error) => {
                super::write_stderr(&format!(
                    "error: cannot write to stdout: {}\n",
                    trainc::source::io_reason(&error)
                ));
                status.max(Status::Usage)
            }
            None => status,
        }
    }

    fn write(&mut self, text: &str) {
        if !self.closed && self.failed.is_none() {
            self.record(|out| out.write_all(text.as_bytes()));
        }
    }

    /// The outcome of a write: a closed pipe ends the output quietly, any
    /// other failure is said at the end.
    fn record(
        &mut self,
        write: impl FnOnce(&mut std::io::BufWriter<std::io::Stdout>) -> std::io::Result<()>,
    ) {
        match write(&mut self.out) {
            Ok(()) => {}
            Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => self.closed = true,
            Err(error) => self.failed = Some(error),
        }
    }
}
