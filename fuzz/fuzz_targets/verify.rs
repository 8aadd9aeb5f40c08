//! `trainc verify` on any bytes (the first byte picks the Trainer API
//! level). Properties: no panic; every diagnostic renders, under 64 KiB.
#![no_main]

use libfuzzer_sys::fuzz_target;
use trainc::diagnostic::{Style, render};
use trainc::source::{self, Sources};
use trainc::spec::ApiLevel;

fuzz_target!(|data: &[u8]| {
    let Some((&selector, manifests)) = data.split_first() else {
        return;
    };
    let level = [ApiLevel::V2_2, ApiLevel::V2_1, ApiLevel::V2_0][usize::from(selector % 3)];
    let mut sources = Sources::new();
    let id = match source::add_bytes(&mut sources, "m.yaml".to_owned(), manifests.to_vec()) {
        Ok(id) => id,
        Err(source::ReadError::Invalid(d)) => {
            render(&trainc::Diagnostic::from(d), &sources, Style::PLAIN);
            return;
        }
        Err(source::ReadError::Io { .. }) => return,
    };
    let verified = trainc::verify::manifests::verify_file(&sources, id, level, &[], Default::default());
    for d in &verified.diagnostics {
        let shown = render(d, &sources, Style::PLAIN);
        assert!(shown.len() < 64 * 1024, "a diagnostic of {} bytes", shown.len());
    }
});
