//! The one integration test binary (`autotests = false`): every module here
//! runs the real `trainc` executable or the public library API.

mod adversarial;
mod build;
mod check_cases;
mod cli;
mod code;
mod compose;
mod convert;
mod corpus;
mod describe;
mod docs;
mod every_field;
mod fidelity;
mod formats;
mod golden;
mod import;
mod integrations;
mod kpt;
mod kubernetes_names;
mod kustomize;
mod layering;
mod linear;
mod migrate;
mod properties;
mod purity;
mod regressions;
mod run;
mod schema_lock;
mod schema_verdict;
mod story;
mod support;
mod upstream;
mod usage;
mod verify;
mod verify_crd;
mod watch;
