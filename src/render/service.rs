//! `v1 Service` `<job>-ports`, exposing `[ports]` of the rank-0 pod. It is
//! never named after the job alone: that name belongs to the headless Service
//! JobSet creates for a TrainJob (see [`crate::derived`]).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Service, ServicePort, ServiceSpec};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::{Object, metadata};
use crate::model::Model;

/// `selector` picks the rank-0 pod by the labels its operator puts on it.
pub(super) fn render(model: &Model, selector: &BTreeMap<String, String>) -> Object {
    let service = Service {
        metadata: metadata(model, &model.ports_service, &model.labels),
        spec: Some(ServiceSpec {
            selector: Some(selector.clone()),
            ports: Some(
                model
                    .ports
                    .iter()
                    .map(|p| ServicePort {
                        name: Some(p.name.clone()),
                        port: i32::from(p.port),
                        // By number: a TrainJob's container cannot declare named ports.
                        target_port: Some(IntOrString::Int(i32::from(p.port))),
                        protocol: Some("TCP".to_owned()),
                        ..Default::default()
                    })
                    .collect(),
            ),
            ..Default::default()
        }),
        status: None,
    };
    Object::new("Service", &model.ports_service, &service)
}
