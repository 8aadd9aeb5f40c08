//! `v1 ConfigMap` carrying `[code]`: its name holds a hash of its data (see
//! [`crate::code`]), so it is immutable: a change makes a new ConfigMap and a
//! job that mounts it, never an edit under a running job.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Serialize;

use super::{Object, metadata};
use crate::code::Code;
use crate::model::Model;

/// Our own struct rather than k8s-openapi's, whose field order would put
/// `data` before `metadata`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ConfigMap<'a> {
    api_version: &'static str,
    kind: &'static str,
    metadata: ObjectMeta,
    immutable: bool,
    data: &'a BTreeMap<String, String>,
}

pub(super) fn render(model: &Model, code: &Code) -> Object {
    let config_map = ConfigMap {
        api_version: "v1",
        kind: "ConfigMap",
        metadata: metadata(model, &code.config_map, &model.labels),
        immutable: true,
        data: &code.files,
    };
    Object::new("ConfigMap", &code.config_map, &config_map)
}
