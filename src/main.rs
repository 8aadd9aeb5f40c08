use std::process::ExitCode;

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
    trainc::commands::main(args).into()
}
