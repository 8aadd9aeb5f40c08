//! `trainc import` on any bytes (the first byte picks the output format).
//! Properties: no panic; every diagnostic renders, under 64 KiB; every
//! imported spec, written out, parses back as a spec (the writer never
//! writes a file that is not TOML or YAML).
#![no_main]

use libfuzzer_sys::fuzz_target;
use trainc::diagnostic::{Style, render};
use trainc::import::write::{Format, write};
use trainc::source::{self, Sources};

fuzz_target!(|data: &[u8]| {
    let Some((&selector, manifests)) = data.split_first() else {
        return;
    };
    let mut sources = Sources::new();
    let Ok(id) = source::add_bytes(&mut sources, "in.yaml".to_owned(), manifests.to_vec()) else {
        return;
    };
    let imported = trainc::import::import(&sources, id, None);
    for d in &imported.diagnostics {
        let shown = render(d, &sources, Style::PLAIN);
        assert!(shown.len() < 64 * 1024, "a diagnostic of {} bytes", shown.len());
    }
    let (format, name) = match selector % 3 {
        0 => (Format::Toml, "out.toml"),
        1 => (Format::Yaml, "out.yaml"),
        _ => (Format::Krm, "out.yaml"),
    };
    for job in &imported.jobs {
        let text = write(&job.spec, format, "the fuzzer");
        let out = sources.add(name, text.clone());
        if let Err(problems) = trainc::parse::parse(out, sources.get(out)) {
            panic!("an imported spec does not parse: {problems:?}\n{text}");
        }
    }
});
