//! The ClusterTrainingRuntimes a Kubeflow Trainer install creates, per
//! release: `schemas/runtimes/trainer-<tag>.yaml`, rendered from the
//! manifests at each tag (see the README there), embedded and read once.

use std::sync::OnceLock;

use super::Release;
use super::runtime::Runtime;

const FILES: [(Release, &str); 4] = [
    (
        Release::V2_0,
        include_str!("../../schemas/runtimes/trainer-v2.0.0.yaml"),
    ),
    (
        Release::V2_1,
        include_str!("../../schemas/runtimes/trainer-v2.1.0.yaml"),
    ),
    (
        Release::V2_2,
        include_str!("../../schemas/runtimes/trainer-v2.2.0.yaml"),
    ),
    (
        Release::V2_3,
        include_str!("../../schemas/runtimes/trainer-v2.3.0.yaml"),
    ),
];

/// The runtimes `release` ships, in the order of its manifests.
pub fn shipped(release: Release) -> &'static [Runtime] {
    static PARSED: OnceLock<Vec<Vec<Runtime>>> = OnceLock::new();
    let all = PARSED.get_or_init(|| FILES.iter().map(|(_, text)| parse(text)).collect());
    let index = FILES
        .iter()
        .position(|(r, _)| *r == release)
        .expect("every release has a file");
    &all[index]
}

/// The runtime named `name` that `release` ships.
pub fn find(release: Release, name: &str) -> Option<&'static Runtime> {
    shipped(release).iter().find(|r| r.name == name)
}

/// The runtimes of an embedded file; a file that does not read is a bug
/// that the tests catch.
fn parse(text: &str) -> Vec<Runtime> {
    let mut sources = crate::source::Sources::new();
    let id = sources.add("catalogue", text);
    let documents = crate::parse::parse_yaml_stream(id, text, 64, 100)
        .unwrap_or_else(|_| panic!("an embedded runtimes file does not parse"));
    documents
        .iter()
        .map(|d| Runtime::from_json(&d.to_json()).expect("an embedded runtime reads"))
        .collect()
}
