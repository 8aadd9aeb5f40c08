//! The spec pipeline on any bytes: read, parse (TOML, YAML, or KRM by the
//! first byte's choice of file name), compose, templates, validate, build,
//! verify, emit, and every diagnostic rendered. Properties: no panic; a
//! build either fails with an error or emits YAML that parses back, with as
//! many documents as objects; rendering a diagnostic never fails.
#![no_main]

use libfuzzer_sys::fuzz_target;
use trainc::diagnostic::{Style, render};
use trainc::source::{self, Sources};

fuzz_target!(|data: &[u8]| {
    let Some((&selector, spec)) = data.split_first() else {
        return;
    };
    let name = ["spec.toml", "spec.yaml", "spec"][usize::from(selector % 3)];
    let mut sources = Sources::new();
    let id = match source::add_bytes(&mut sources, name.to_owned(), spec.to_vec()) {
        Ok(id) => id,
        Err(source::ReadError::Invalid(d)) => {
            render(&trainc::Diagnostic::from(d), &sources, Style::PLAIN);
            return;
        }
        Err(source::ReadError::Io { .. }) => return,
    };
    let options = trainc::Options {
        verify: selector & 0x80 != 0,
        ..trainc::Options::default()
    };
    let built = trainc::build(&mut sources, &trainc::Input::spec(id), &options);
    for d in &built.diagnostics {
        let shown = render(d, &sources, Style::PLAIN);
        assert!(shown.len() < 64 * 1024, "a diagnostic of {} bytes", shown.len());
    }
    let has_error = built.diagnostics.iter().any(trainc::Diagnostic::is_error);
    match built.objects {
        Some(objects) => {
            assert!(!has_error, "objects despite an error");
            let yaml = trainc::emit::stream(&objects, trainc::emit::Format::Yaml);
            let documents: Vec<serde_json::Value> = serde_saphyr::from_multiple(&yaml)
                .unwrap_or_else(|e| panic!("emitted YAML does not parse: {e}\n{yaml}"));
            assert_eq!(documents.len(), objects.len());
        }
        None => assert!(has_error, "no objects and no error"),
    }
});
