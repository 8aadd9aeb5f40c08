//! `cargo bench`: each pipeline stage on each example, in process.
//!
//! These measure the work per spec once the process is warm (schemas read,
//! patterns compiled); what a whole run costs, start-up included, is
//! `bench/compare.sh`'s business.

use std::path::{Path, PathBuf};

use divan::{Bencher, black_box};
use trainc::emit::Format;
use trainc::render::Object;
use trainc::spec::ApiLevel;
use trainc::{Input, Options, Sources};

fn main() {
    divan::main();
}

const EXAMPLES: &[&str] = &[
    "cpu-minimal",
    "gpu-multinode",
    "elastic",
    "llm-finetune",
    "local-code",
    "rdma",
    "trainjob",
    "volumes-secrets",
];

fn path(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(relative)
}

/// An example read into fresh sources, with `overlays/gpu.toml` beside it.
fn read(example: &str) -> (Sources, Input) {
    let mut sources = Sources::new();
    let spec = trainc::source::read(&mut sources, &path(&format!("examples/{example}.toml")))
        .expect("examples are readable");
    let overlay = trainc::source::read(&mut sources, &path("overlays/gpu.toml"))
        .expect("overlays are readable");
    (
        sources,
        Input {
            spec,
            overlays: vec![overlay],
            runtimes: None,
        },
    )
}

fn tree(sources: &Sources, id: trainc::SourceId) -> trainc::tree::Node {
    trainc::parse::parse(id, sources.get(id)).expect("examples parse")
}

/// The example's objects, built as `trainc build` builds them.
fn objects(example: &str) -> (Vec<Object>, ApiLevel) {
    let (mut sources, input) = read(example);
    let input = Input::spec(input.spec);
    let checked = trainc::check_input(&mut sources, &input, &Options::default());
    let spec = checked.spec.expect("examples are valid");
    let model = trainc::resolve::resolve(
        &spec,
        &checked.bindings.code,
        checked.bindings.runtime.as_ref(),
    );
    let level = model.trainjob.api_level;
    (trainc::render::render(&model), level)
}

#[divan::bench(args = EXAMPLES)]
fn parse(bencher: Bencher<'_, '_>, example: &str) {
    let (sources, input) = read(example);
    bencher.bench(|| tree(&sources, black_box(input.spec)));
}

/// The GPU overlay merged over the spec, then templates rendered.
#[divan::bench(args = EXAMPLES)]
fn compose(bencher: Bencher<'_, '_>, example: &str) {
    let (sources, input) = read(example);
    let base = tree(&sources, input.spec);
    let overlay = tree(&sources, input.overlays[0]);
    bencher
        .with_inputs(|| (base.clone(), overlay.clone()))
        .bench_values(|(mut base, overlay)| {
            let mut problems = trainc::compose::merge_overlay(&mut base, overlay);
            problems.extend(trainc::template::render(&mut base, &[]).problems);
            (base, problems)
        });
}

#[divan::bench(args = EXAMPLES)]
fn validate(bencher: Bencher<'_, '_>, example: &str) {
    let (sources, input) = read(example);
    let base = tree(&sources, input.spec);
    bencher.bench(|| trainc::validate::validate(black_box(&base), &sources));
}

#[divan::bench(args = EXAMPLES)]
fn resolve(bencher: Bencher<'_, '_>, example: &str) {
    let (mut sources, input) = read(example);
    let checked = trainc::check_input(&mut sources, &Input::spec(input.spec), &Options::default());
    let spec = checked.spec.expect("examples are valid");
    bencher.bench(|| {
        trainc::resolve::resolve(
            black_box(&spec),
            &checked.bindings.code,
            checked.bindings.runtime.as_ref(),
        )
    });
}

#[divan::bench(args = EXAMPLES)]
fn render(bencher: Bencher<'_, '_>, example: &str) {
    let (mut sources, input) = read(example);
    let checked = trainc::check_input(&mut sources, &Input::spec(input.spec), &Options::default());
    let model = trainc::resolve::resolve(
        &checked.spec.expect("examples are valid"),
        &checked.bindings.code,
        checked.bindings.runtime.as_ref(),
    );
    bencher.bench(|| trainc::render::render(black_box(&model)));
}

#[divan::bench(args = EXAMPLES)]
fn emit(bencher: Bencher<'_, '_>, example: &str) {
    let (objects, _) = objects(example);
    bencher.bench(|| trainc::emit::stream(black_box(&objects), Format::Yaml));
}

#[divan::bench(args = EXAMPLES)]
fn verify(bencher: Bencher<'_, '_>, example: &str) {
    let (objects, level) = objects(example);
    bencher.bench(|| trainc::verify::verify(black_box(&objects), level, &[]));
}

/// All of it, as `trainc build --verify` runs it, minus reading the file.
#[divan::bench(args = EXAMPLES)]
fn build_verify(bencher: Bencher<'_, '_>, example: &str) {
    let (sources, input) = read(example);
    let input = Input::spec(input.spec);
    let options = Options {
        verify: true,
        ..Options::default()
    };
    bencher
        .with_inputs(|| sources.clone())
        .bench_values(|mut sources| {
            let built = trainc::build(&mut sources, &input, &options);
            trainc::emit::stream(&built.objects.expect("examples build"), Format::Yaml)
        });
}
