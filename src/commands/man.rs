//! `trainc man`: the manual page on stdout, or with `--dir` one page per
//! command (`trainc.1`, `trainc-build.1`, `trainc-plugin-install.1`, ...)
//! written all or nothing into a directory made as needed, so that every
//! page the main page lists exists.

use std::path::{Path, PathBuf};

use super::{Status, atomic, write_stderr, write_stdout, written};
use crate::cli::Cli;

/// Every command as it is documented: `help` is a flag on each, not a page
/// of its own (the main page lists only pages `--dir` writes).
fn documented() -> clap::Command {
    let mut command = <Cli as clap::CommandFactory>::command().disable_help_subcommand(true);
    command.build();
    command
}

/// Each page's file name and roff text: the command, then its subcommands
/// depth first, hidden ones left out.
fn pages(command: clap::Command, out: &mut Vec<(String, String)>) {
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        pages(sub.clone(), out);
    }
    let man = clap_mangen::Man::new(command);
    let mut page = Vec::new();
    man.render(&mut page).expect("writing to a Vec cannot fail");
    out.push((
        man.get_filename(),
        String::from_utf8_lossy(&page).into_owned(),
    ));
}

pub(super) fn man(dir: Option<&Path>) -> Status {
    let mut all = Vec::new();
    pages(documented(), &mut all);
    let Some(dir) = dir else {
        // The main page is the last one made.
        let main = all.pop().map(|(_, page)| page).unwrap_or_default();
        return written(write_stdout(&main), Status::Ok);
    };
    let files: Vec<(PathBuf, &str)> = all
        .iter()
        .map(|(name, page)| (PathBuf::from(name), page.as_str()))
        .collect();
    match atomic::write_all(dir, &files, atomic::Existing::Replace) {
        Ok(()) => {
            write_stderr(&format!(
                "wrote {} manual pages to {}: `man trainc`, `man trainc-build`, ... (man finds them where MANPATH, or a PATH directory's ../share/man, says)\n",
                files.len(),
                dir.display()
            ));
            Status::Ok
        }
        Err((path, error)) => {
            write_stderr(&format!(
                "error: cannot write {}: {}; no page was written\n",
                path.display(),
                trainc::source::io_reason(&error)
            ));
            Status::Usage
        }
    }
}
