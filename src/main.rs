//! The `trainc` binary: the command line (`cli`, clap's types) and the
//! commands (`commands`), which read the inputs, call the library, print
//! what it returns and decide the exit status. The library (`lib.rs`) never
//! sees the command line and never prints.

use std::process::ExitCode;

mod cli;
mod commands;

fn main() -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // trainc inside a container's namespaces, building its root
    // (`trainc run`): not a command of the command line.
    #[cfg(target_os = "linux")]
    if args
        .get(1)
        .is_some_and(|a| a == trainc::run::sandbox::HELPER_ARG)
    {
        return ExitCode::from(trainc::run::sandbox::helper());
    }
    commands::main(&args).into()
}
