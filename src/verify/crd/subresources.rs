//! A custom resource's subresources, as the API server creates one
//! (apiextensions-apiserver v0.36.3 `pkg/registry/customresource/`): with
//! a `status` subresource, the object's `status` is dropped before it is
//! validated (`strategy.go` `PrepareForCreate`: create cannot set
//! status); with a `scale` subresource, the replicas at its paths are
//! integers from 0 to an int32's most, and the label selector a string
//! (`validator.go` `ValidateScaleSpec`, `ValidateScaleStatus`, reading the
//! paths as `unstructured.NestedInt64` and `NestedString` do).

use serde_json::Value as Json;

use super::field::{ErrorType, FieldError};
use crate::verify::gofmt::{go_type, go_v};

/// A served version's subresources.
#[derive(Debug, Default)]
pub(super) struct Subresources {
    status: bool,
    scale: Option<Scale>,
}

/// The paths of a `scale` subresource, as written (`.spec.replicas`).
#[derive(Debug)]
struct Scale {
    spec_replicas: String,
    status_replicas: String,
    label_selector: Option<String>,
}

impl Subresources {
    /// The subresources of a CRD's version (`spec.versions[n]`).
    pub(super) fn of(version: &Json) -> Subresources {
        let subresources = &version["subresources"];
        let path = |name: &str| subresources["scale"][name].as_str().map(str::to_owned);
        Subresources {
            status: subresources["status"].is_object(),
            scale: subresources["scale"].is_object().then(|| Scale {
                spec_replicas: path("specReplicasPath").unwrap_or_default(),
                status_replicas: path("statusReplicasPath").unwrap_or_default(),
                label_selector: path("labelSelectorPath"),
            }),
        }
    }

    /// The object as it is created: without its `status` where the
    /// status subresource sets it.
    pub(super) fn prepare_for_create(&self, value: &mut Json) {
        if self.status
            && let Json::Object(fields) = value
        {
            fields.remove("status");
        }
    }

    /// The scale subresource's errors in `value`, in the server's order.
    pub(super) fn validate(&self, value: &Json) -> Vec<FieldError> {
        let Some(scale) = &self.scale else {
            return Vec::new();
        };
        let mut errors = Vec::new();
        for path in [&scale.spec_replicas, &scale.status_replicas] {
            let invalid = |shown: i64, detail: String| {
                FieldError::new(
                    ErrorType::Invalid,
                    Some(path.clone()),
                    Some(&Json::from(shown)),
                    detail,
                )
            };
            match nested(value, path, Want::Int64) {
                Err(accessor) => errors.push(invalid(0, accessor)),
                Ok(Some(Json::Number(n))) => {
                    let replicas = n.as_i64().unwrap_or(0);
                    if replicas < 0 {
                        errors.push(invalid(
                            replicas,
                            "should be a non-negative integer".to_owned(),
                        ));
                    } else if replicas > i64::from(i32::MAX) {
                        errors.push(invalid(
                            replicas,
                            format!("should be less than or equal to {}", i32::MAX),
                        ));
                    }
                }
                Ok(_) => {}
            }
        }
        if let Some(path) = &scale.label_selector
            && let Err(accessor) = nested(value, path, Want::String)
        {
            errors.push(FieldError::new(
                ErrorType::Invalid,
                Some(path.clone()),
                Some(&Json::from("")),
                accessor,
            ));
        }
        errors
    }
}

/// The Go type a nested field must have.
#[derive(Clone, Copy)]
enum Want {
    Int64,
    String,
}

/// The field at `path` (`.spec.replicas`: a leading period ignored, the
/// rest split at each period), as `unstructured.NestedFieldNoCopy` and
/// `NestedInt64` / `NestedString` find it: `None` where a map on the way
/// lacks it or a value on the way is null; an accessor error where a value
/// on the way is not a map, or the field is not of the type wanted.
fn nested<'v>(value: &'v Json, path: &str, want: Want) -> Result<Option<&'v Json>, String> {
    let fields: Vec<&str> = path.strip_prefix('.').unwrap_or(path).split('.').collect();
    let json_path = |fields: &[&str]| format!(".{}", fields.join("."));
    let mut at = value;
    for (n, field) in fields.iter().enumerate() {
        match at {
            Json::Null => return Ok(None),
            Json::Object(map) => match map.get(*field) {
                Some(next) => at = next,
                None => return Ok(None),
            },
            other => {
                return Err(format!(
                    "{} accessor error: {} is of the type {}, expected map[string]interface{{}}",
                    json_path(&fields[..=n]),
                    go_v(other),
                    go_type(other)
                ));
            }
        }
    }
    let (fits, expected) = match want {
        Want::Int64 => (at.is_i64(), "int64"),
        Want::String => (at.is_string(), "string"),
    };
    if fits {
        return Ok(Some(at));
    }
    Err(format!(
        "{} accessor error: {} is of the type {}, expected {expected}",
        json_path(&fields),
        go_v(at),
        go_type(at)
    ))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn scale() -> Subresources {
        Subresources::of(&json!({"subresources": {"status": {}, "scale": {
            "specReplicasPath": ".spec.replicas",
            "statusReplicasPath": ".status.replicas",
            "labelSelectorPath": ".status.selector",
        }}}))
    }

    fn said(value: &Json) -> Vec<String> {
        (scale().validate(value).iter())
            .map(|e| format!("{}: {}", e.field.as_deref().unwrap_or(""), e.body()))
            .collect()
    }

    /// The words are `validator.go`'s, the accessor errors
    /// `unstructured`'s (k8s.io/apimachinery v0.36.3 `helpers.go`).
    #[test]
    fn scale_paths_are_read_as_the_server_reads_them() {
        assert!(said(&json!({"spec": {"replicas": 3}})).is_empty());
        assert!(said(&json!({"spec": {}})).is_empty());
        assert_eq!(
            said(&json!({"spec": {"replicas": -3}})),
            [".spec.replicas: Invalid value: -3: should be a non-negative integer"]
        );
        assert_eq!(
            said(&json!({"spec": {"replicas": 2_147_483_648_i64}})),
            [
                ".spec.replicas: Invalid value: 2147483648: should be less than or equal to 2147483647"
            ]
        );
        assert_eq!(
            said(&json!({"spec": {"replicas": 1.5}})),
            [
                ".spec.replicas: Invalid value: 0: .spec.replicas accessor error: 1.5 is of the type float64, expected int64"
            ]
        );
        assert_eq!(
            said(&json!({"spec": "x", "status": {"selector": 1}})),
            [
                ".spec.replicas: Invalid value: 0: .spec.replicas accessor error: x is of the type string, expected map[string]interface{}",
                ".status.selector: Invalid value: \"\": .status.selector accessor error: 1 is of the type int64, expected string"
            ]
        );
    }

    #[test]
    fn a_status_subresource_drops_the_status_on_create() {
        let mut value = json!({"spec": {}, "status": {"replicas": -1}});
        scale().prepare_for_create(&mut value);
        assert_eq!(value, json!({"spec": {}}));
        let mut kept = json!({"status": {"replicas": -1}});
        Subresources::default().prepare_for_create(&mut kept);
        assert_eq!(kept["status"]["replicas"], -1);
    }
}
