//! `v1 PersistentVolumeClaim` for each volume with a `size`.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    PersistentVolumeClaim, PersistentVolumeClaimSpec, VolumeResourceRequirements,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use super::{Object, metadata};
use crate::model::{Claim, Model};

pub(super) fn render(model: &Model, claim: &Claim) -> Object {
    let pvc = PersistentVolumeClaim {
        metadata: metadata(model, &claim.name, &model.labels),
        spec: Some(PersistentVolumeClaimSpec {
            access_modes: Some(claim.access_modes.clone()),
            storage_class_name: claim.storage_class.clone(),
            resources: Some(VolumeResourceRequirements {
                requests: Some(BTreeMap::from([(
                    "storage".to_owned(),
                    Quantity(claim.size.clone()),
                )])),
                limits: None,
            }),
            ..Default::default()
        }),
        status: None,
    };
    Object::new("PersistentVolumeClaim", &claim.name, &pvc)
}
