use std::process::ExitCode;

fn main() -> ExitCode {
    trainc::commands::main(std::env::args_os().collect()).into()
}
