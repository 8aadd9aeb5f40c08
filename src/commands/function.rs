//! The two generator personalities: `trainc fn` (a KRM function: ResourceList
//! on stdin, ResourceList on stdout) and the kustomize legacy exec plugin
//! (`TrainSpec CONFIG-FILE`, objects on stdout). In both the config carries the
//! whole spec: trainc reads no other file but the `[code]` files it lists,
//! and those only inside the working directory (`trainc::bind::Root`).

use std::io::Read;
use std::path::Path;

use super::{Status, report, write_stderr, write_stdout};
use trainc::source::Sources;

/// The name kustomize runs a legacy exec plugin for `kind: TrainSpec` by.
pub(super) const PLUGIN_NAME: &str = "TrainSpec";

/// Reads the ResourceList from stdin, up to the function's size limit (and one
/// byte more, so that an oversized input is recognised).
pub(super) fn read_stdin() -> Result<Vec<u8>, Status> {
    let mut input = Vec::new();
    let limit = trainc::krm::MAX_INPUT_BYTES + 1;
    match std::io::stdin().lock().take(limit).read_to_end(&mut input) {
        Ok(_) => Ok(input),
        Err(error) => {
            write_stderr(&format!(
                "error: cannot read the ResourceList from stdin: {}\n",
                trainc::source::io_reason(&error)
            ));
            Err(Status::Usage)
        }
    }
}

/// `trainc fn`: nothing but the ResourceList ever goes to stdout.
pub(super) fn run_function(input: Vec<u8>) -> Status {
    let output = trainc::krm::run(input);
    report(&output.sources, &output.diagnostics);
    let status = if output.failed {
        Status::Invalid
    } else {
        Status::Ok
    };
    super::written(write_stdout(&output.resource_list), status)
}

/// Invoked as `TrainSpec CONFIG-FILE` by kustomize: the generated objects as YAML.
pub(super) fn run_plugin(args: &[std::ffi::OsString]) -> Status {
    let [config] = args else {
        write_stderr(
            "error: as a kustomize plugin, trainc takes exactly one argument: the generator config file\n",
        );
        return Status::Usage;
    };
    let mut sources = Sources::new();
    let id = match trainc::source::read(&mut sources, Path::new(config)) {
        // kustomize copies the config to a temporary file and runs the plugin
        // in the kustomization's directory: paths in it are relative to that.
        Ok(id) => {
            sources.set_dir(id, None);
            id
        }
        Err(error @ trainc::source::ReadError::Io { .. }) => {
            write_stderr(&format!("error: {error}\n"));
            return Status::Usage;
        }
        Err(trainc::source::ReadError::Invalid(unusable)) => {
            report(&sources, &[unusable.into()]);
            return Status::Invalid;
        }
    };
    let mut built = trainc::build(
        &mut sources,
        &trainc::Input::spec(id),
        &trainc::Options::default(),
    );
    // kustomize hands the plugin a temporary copy of the TrainSpec
    // (`/tmp/kust-plugin-config-NNN`, re-serialised, patches applied): its
    // name and lines lead nowhere, so problems name the TrainSpec and field.
    if let Ok(config) = trainc::parse::parse_yaml_document(id, &sources.get(id).text, 64) {
        trainc::krm::locate_by_field(&mut sources, &config, None, &mut built.diagnostics);
    }
    report(&sources, &built.diagnostics);
    match built.objects {
        Some(mut objects) => {
            trainc::kustomize::annotate_warnings(&mut objects, &built.diagnostics);
            super::written(
                write_stdout(&trainc::emit::stream(&objects, trainc::emit::Format::Yaml)),
                Status::Ok,
            )
        }
        None => Status::Invalid,
    }
}
