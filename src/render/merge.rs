//! `[podTemplate]` merged into a rendered pod template, with the semantics of
//! Kubernetes' strategic merge patch: maps merge key by key, scalars replace,
//! and the lists that Kubernetes merges by a key (`patchMergeKey` in
//! k8s.io/api `core/v1/types.go`) merge item by item on that key; every
//! other list replaces.

use serde_json::Value as Json;

/// The merge key of each list that merges by key; the rest replace.
fn merge_key(field: &str) -> Option<&'static str> {
    Some(match field {
        "containers"
        | "initContainers"
        | "ephemeralContainers"
        | "volumes"
        | "env"
        | "imagePullSecrets"
        | "resourceClaims"
        | "schedulingGates" => "name",
        "volumeMounts" | "volumeDevices" => "mountPath",
        "ports" => "containerPort",
        "hostAliases" => "ip",
        "topologySpreadConstraints" => "topologyKey",
        _ => return None,
    })
}

/// Merges `patch` into `base`.
pub(super) fn merge(base: &mut Json, patch: &Json) {
    match (base, patch) {
        (Json::Object(base), Json::Object(patch)) => {
            for (key, value) in patch {
                match (base.get_mut(key), merge_key(key), value) {
                    (Some(Json::Array(items)), Some(by), Json::Array(new)) => {
                        merge_list(items, new, by);
                    }
                    (Some(existing @ Json::Object(_)), _, Json::Object(_)) => {
                        merge(existing, value);
                    }
                    _ => {
                        base.insert(key.clone(), value.clone());
                    }
                }
            }
        }
        (base, patch) => *base = patch.clone(),
    }
}

/// Items with the same key merge; new ones are appended in the patch's order.
fn merge_list(items: &mut Vec<Json>, new: &[Json], by: &str) {
    for item in new {
        match items
            .iter_mut()
            .find(|old| old.get(by).is_some() && old.get(by) == item.get(by))
        {
            Some(old) => merge(old, item),
            None => items.push(item.clone()),
        }
    }
}

/// Every object's keys in alphabetical order, as k8s-openapi writes the
/// typed objects, so a merged template reads like one rendered whole.
/// `keep_first` stays at the front of the top level (`targetJobs`).
pub(super) fn sort_keys(value: &mut Json, keep_first: Option<&str>) {
    match value {
        Json::Object(map) => {
            map.sort_keys();
            if let Some(first) = keep_first
                && let Some(front) = map.shift_remove(first)
            {
                let rest = std::mem::take(map);
                map.insert(first.to_owned(), front);
                map.extend(rest);
            }
            map.values_mut().for_each(|v| sort_keys(v, None));
        }
        Json::Array(items) => items.iter_mut().for_each(|v| sort_keys(v, None)),
        _ => {}
    }
}

/// The fragment with the training container renamed from the name users
/// write (`trainer`) to the target's.
pub(super) fn for_target(fragment: &Json, container: &str) -> Json {
    let mut fragment = fragment.clone();
    if let Some(containers) = fragment
        .pointer_mut("/spec/containers")
        .and_then(Json::as_array_mut)
    {
        for c in containers {
            if c.get("name").and_then(Json::as_str)
                == Some(crate::spec::defaults::TRAINER_CONTAINER)
            {
                c["name"] = Json::from(container);
            }
        }
    }
    fragment
}

#[cfg(test)]
mod tests {
    use super::merge;
    use serde_json::json;

    #[test]
    fn named_lists_merge_by_name_and_others_replace() {
        let mut base = json!({
            "metadata": {"labels": {"a": "1"}},
            "spec": {
                "containers": [{"name": "pytorch", "image": "i", "env": [{"name": "A", "value": "1"}]}],
                "volumes": [{"name": "data", "emptyDir": {}}],
                "tolerations": [{"key": "x"}],
            }
        });
        merge(
            &mut base,
            &json!({
                "metadata": {"labels": {"b": "2"}},
                "spec": {
                    "containers": [
                        {"name": "pytorch", "env": [{"name": "B", "value": "2"}], "livenessProbe": {"periodSeconds": 5}},
                        {"name": "sidecar", "image": "s"},
                    ],
                    "volumes": [{"name": "extra", "emptyDir": {}}],
                    "tolerations": [{"key": "y"}],
                }
            }),
        );
        assert_eq!(
            base,
            json!({
                "metadata": {"labels": {"a": "1", "b": "2"}},
                "spec": {
                    "containers": [
                        {"name": "pytorch", "image": "i", "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}], "livenessProbe": {"periodSeconds": 5}},
                        {"name": "sidecar", "image": "s"},
                    ],
                    "volumes": [{"name": "data", "emptyDir": {}}, {"name": "extra", "emptyDir": {}}],
                    "tolerations": [{"key": "y"}],
                }
            })
        );
    }
}
