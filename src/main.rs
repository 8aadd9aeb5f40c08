use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = trainc::cli::Cli::parse();
    trainc::commands::run(cli).into()
}
