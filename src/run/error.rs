//! What stops a run before its job ends, and the exit status each gives: an
//! object or a flag that cannot run here is 1 (or 2 for a flag), this
//! machine's refusal (an I/O error) is 2, a container that could not be set
//! up is 1. A job that runs and fails is not an error here but the run's
//! outcome ([`super::supervise::Outcome`], exit 3).

use std::path::Path;

use crate::diagnostic::codes;

/// Why a run stopped, in words, with the code that names the class.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunError {
    pub kind: Kind,
    pub message: String,
    pub help: Option<String>,
}

/// The class of a [`RunError`]; it decides the code and the exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A flag's value (`--map`, `--timeout`, `--python`): exit 2.
    Usage,
    /// The objects cannot run as written: a name or path the API server
    /// rejects, more pods or processes than a run starts: exit 1.
    Invalid,
    /// What only the cluster or the image has, and no flag gave: exit 1.
    Missing,
    /// This machine refused a read or a write: exit 2.
    Io,
    /// A container's setup failed before its command started (a mount, a
    /// port another run holds): exit 1.
    CannotStart,
}

impl RunError {
    pub fn new(kind: Kind, message: impl Into<String>) -> RunError {
        RunError {
            kind,
            message: message.into(),
            help: None,
        }
    }

    pub fn invalid(message: impl Into<String>) -> RunError {
        RunError::new(Kind::Invalid, message)
    }

    pub fn missing(message: impl Into<String>) -> RunError {
        RunError::new(Kind::Missing, message)
    }

    pub fn cannot_start(message: impl Into<String>) -> RunError {
        RunError::new(Kind::CannotStart, message)
    }

    pub fn usage(message: impl Into<String>) -> RunError {
        RunError::new(Kind::Usage, message)
    }

    /// An I/O error on `path`, in words (no "os error" numbers).
    pub fn io(path: &Path, error: &std::io::Error) -> RunError {
        RunError::new(
            Kind::Io,
            format!("{}: {}", path.display(), crate::source::io_reason(error)),
        )
    }

    #[must_use]
    pub fn with_help(mut self, help: impl Into<String>) -> RunError {
        self.help = Some(help.into());
        self
    }

    /// The same error, its message after `context: `.
    #[must_use]
    pub fn within(mut self, context: &str) -> RunError {
        self.message = format!("{context}: {}", self.message);
        self
    }

    pub fn code(&self) -> &'static str {
        match self.kind {
            Kind::Usage => codes::RUN_USAGE,
            Kind::Invalid => codes::RUN_INVALID,
            Kind::Missing => codes::RUN_MISSING,
            Kind::Io => codes::RUN_IO,
            Kind::CannotStart => codes::RUN_CANNOT_START,
        }
    }

    /// The exit status: 2 for a flag or this machine, 1 otherwise.
    pub fn exit_status(&self) -> u8 {
        match self.kind {
            Kind::Usage | Kind::Io => 2,
            Kind::Invalid | Kind::Missing | Kind::CannotStart => 1,
        }
    }

    /// As trainc shows a diagnostic without a place in a file: its code,
    /// then the message and its help, each escaped for a terminal (a line
    /// break in a name cannot start a line of its own).
    pub fn render(&self) -> String {
        let shown = crate::diagnostic::escape_for_terminal;
        let mut out = format!("{}\n\n  × error: {}\n", self.code(), shown(&self.message));
        if let Some(help) = &self.help {
            out.push_str("  help: ");
            out.push_str(&shown(help));
            out.push('\n');
        }
        out
    }
}

impl From<String> for RunError {
    /// A message of the cluster model (a pod it cannot make, a key a
    /// container reads that is not there): the objects, as written.
    fn from(message: String) -> RunError {
        RunError::invalid(message)
    }
}

#[cfg(test)]
mod tests {
    use super::{Kind, RunError};

    #[test]
    fn the_kind_decides_the_code_and_the_exit_status() {
        let e = RunError::invalid("pod a: container name `b/c` is not a DNS-1123 label")
            .with_help("try `b-c`");
        assert_eq!(e.exit_status(), 1);
        assert_eq!(
            e.render(),
            "trainc::run::invalid\n\n  × error: pod a: container name `b/c` is not a DNS-1123 label\n  help: try `b-c`\n"
        );
        assert_eq!(RunError::new(Kind::Io, "x").exit_status(), 2);
        assert_eq!(RunError::usage("x").exit_status(), 2);
        assert_eq!(
            RunError::cannot_start("x").code(),
            "trainc::run::cannot_start"
        );
        // A name with a line break cannot start a line of its own.
        let forged = RunError::invalid("pod a\n::error file=x::forged").render();
        assert!(!forged.lines().any(|l| l.starts_with("::")), "{forged}");
    }
}
