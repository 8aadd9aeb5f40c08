//! `trainc convert FILE --to FORM`: a spec or an overlay in another form, on stdout.

use super::{Status, read_source, report, write_stdout};
use crate::cli::{ConvertArgs, ConvertForm};
use trainc::convert::{Form, Request};
use trainc::source::Sources;

pub(super) fn run(args: &ConvertArgs) -> Status {
    let mut sources = Sources::new();
    let mut diagnostics = Vec::new();
    let id = match read_source(
        &mut sources,
        &args.file,
        trainc::source::MAX_SOURCE_BYTES,
        &mut diagnostics,
    ) {
        Ok(Some(id)) => id,
        Ok(None) => {
            report(&sources, &diagnostics);
            return Status::Invalid;
        }
        Err(status) => {
            report(&sources, &diagnostics);
            return status;
        }
    };
    let request = Request {
        to: match args.to {
            ConvertForm::Toml => Form::Toml,
            ConvertForm::Yaml => Form::Yaml,
            ConvertForm::Trainspec => Form::TrainSpec,
        },
        overlay: args.as_overlay,
        name: args.name.clone(),
        namespace: args.namespace.clone(),
    };
    match trainc::convert::convert(&sources, id, &request) {
        Ok(converted) => {
            report(&sources, &converted.notes);
            super::written(write_stdout(&converted.text), Status::Ok)
        }
        Err(problems) => {
            report(&sources, &problems);
            Status::Invalid
        }
    }
}
