//! A CRD version's schema as the API server validates the CRD when it is
//! created (apiextensions-apiserver v0.36.3): the keywords a CRD's schema
//! may not use and the Kubernetes extensions' own rules ([`keywords`]),
//! then, where the schema can be made structural, what makes it
//! structural ([`structure`]). Each error is at its place in the schema,
//! in the server's words.
//!
//! Once it is structural, its defaults ([`defaults`]). Left to other
//! checks: the rules (`x-kubernetes-validations`, compiled by
//! [`crate::verify::cel`]). Not checked yet: the fields a root schema may
//! hold when the status subresource is enabled.

mod defaults;
mod keywords;
mod structure;

use serde_json::Value as Json;

use super::field::{ErrorType, FieldError};

/// Deeper than any schema the API server takes.
const MAX_DEPTH: usize = 128;

/// A place in the schema: its JSON pointer and its path as the server
/// writes it (`.properties[spec].items`).
#[derive(Clone, Default)]
struct At {
    pointer: String,
    field: String,
}

impl At {
    /// `field.Path`'s `Child`.
    fn child(&self, name: &str) -> At {
        At {
            pointer: format!("{}/{}", self.pointer, crate::tree::pointer_segment(name)),
            field: format!("{}.{name}", self.field),
        }
    }

    /// `field.Path`'s `Key` (a map's key: `properties[spec]`).
    fn key(&self, key: &str) -> At {
        At {
            pointer: format!("{}/{}", self.pointer, crate::tree::pointer_segment(key)),
            field: format!("{}[{key}]", self.field),
        }
    }

    /// `field.Path`'s `Index`.
    fn index(&self, n: usize) -> At {
        At {
            pointer: format!("{}/{n}", self.pointer),
            field: format!("{}[{n}]", self.field),
        }
    }
}

/// The errors found, each with its pointer into the schema.
struct Errors<'p> {
    /// The server's path to the schema (`spec.validation.openAPIV3Schema`).
    prefix: &'p str,
    out: Vec<(String, FieldError)>,
    /// Whether `NewStructural` can make the schema structural.
    convertible: bool,
}

impl Errors<'_> {
    fn push(&mut self, at: &At, kind: ErrorType, value: Option<&Json>, detail: impl Into<String>) {
        let field = self.name(at);
        let error = FieldError::new(kind, Some(field), value, detail.into());
        self.out.push((at.pointer.clone(), error));
    }

    fn forbidden(&mut self, at: &At, detail: impl Into<String>) {
        self.push(at, ErrorType::Forbidden, None, detail);
    }

    fn required(&mut self, at: &At, detail: impl Into<String>) {
        self.push(at, ErrorType::Required, None, detail);
    }

    fn invalid(&mut self, at: &At, value: &Json, detail: impl Into<String>) {
        self.push(at, ErrorType::Invalid, Some(value), detail);
    }

    /// `type` required as `what` where none is given, else invalid.
    fn type_must_be(&mut self, ty: &str, what: &str, at: &At) {
        if ty.is_empty() {
            self.required(&at.child("type"), format!("must be {what}"));
        } else {
            self.invalid(
                &at.child("type"),
                &Json::from(ty),
                format!("must be {what}"),
            );
        }
    }

    /// The server's path to `at`, as an error or a detail names it.
    fn name(&self, at: &At) -> String {
        format!("{}{}", self.prefix, at.field)
    }
}

/// Whether `node` sets the boolean `name`.
fn flag(node: &Json, name: &str) -> bool {
    node[name] == true
}

/// What the API server refuses in `schema`, a CRD version's
/// `openAPIV3Schema` that the server names `prefix`
/// (`validateCustomResourceDefinitionValidation`): each error's pointer
/// below the schema, and the error. The structural errors come first,
/// sorted by their text as `ValidateStructural` sorts them.
pub(in crate::verify) fn refusals(schema: &Json, prefix: &str) -> Vec<(String, FieldError)> {
    let errors = || Errors {
        prefix,
        out: Vec::new(),
        convertible: true,
    };
    let mut all = errors();
    if flag(schema, "nullable") {
        all.forbidden(
            &At::default().child("nullable"),
            "nullable cannot be true at the root",
        );
    }
    let mut keyword = errors();
    keywords::check(schema, &mut keyword);
    if keyword.convertible {
        let mut structural = errors();
        structure::check(schema, &mut structural);
        let text = |(_, e): &(String, FieldError)| {
            format!("{}: {}", e.field.as_deref().unwrap_or(""), e.body())
        };
        structural.out.sort_by_cached_key(text);
        if structural.out.is_empty() {
            defaults::check(schema, &mut structural);
        }
        all.out.extend(structural.out);
    }
    all.out.extend(keyword.out);
    all.out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Each refusal as `field: body`, below `spec.validation.openAPIV3Schema`.
    fn said(schema: &Json) -> Vec<String> {
        (refusals(schema, "spec.validation.openAPIV3Schema").iter())
            .map(|(_, e)| format!("{}: {}", e.field.as_deref().unwrap_or(""), e.body()))
            .collect()
    }

    fn spec(spec: Json) -> Json {
        let mut schema = json!({"type": "object", "properties": {}});
        schema["properties"]["spec"] = spec;
        schema
    }

    /// The words the real Kubernetes 1.36.3 API server gave for each CRD
    /// (`kubectl create --dry-run=server`).
    #[test]
    fn schemas_are_refused_as_the_server_refuses_them() {
        let at = "spec.validation.openAPIV3Schema.properties[spec]";
        for (schema, expected) in [
            (
                spec(json!({"type": "object", "properties": {"key": {"type": "string"}}, "additionalProperties": {"type": "string"}})),
                format!("{at}.additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive"),
            ),
            (
                spec(json!({"type": "object", "properties": {"key": {"type": "string"}}, "allOf": [{"properties": {"key": {"type": "string"}}}]})),
                format!("{at}.allOf[0].properties[key].type: Forbidden: must be empty to be structural"),
            ),
            (
                spec(json!({"type": "object", "properties": {"key": {"type": "string"}}, "allOf": [{"properties": {"key": {"x-kubernetes-validations": [{"rule": "self.size() == 5"}]}}}]})),
                format!("{at}.allOf[0].properties[key].x-kubernetes-validations: Forbidden: must be empty to be structural"),
            ),
            (
                spec(json!({"type": "object", "properties": {"inner": {"type": "object", "x-kubernetes-embedded-resource": true}}})),
                format!("{at}.properties[inner].properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields"),
            ),
            (
                spec(json!({"properties": {"key": {"type": "string"}}})),
                format!("{at}.type: Required value: must not be empty for specified object fields"),
            ),
            (
                json!({"type": "object", "properties": {"metadata": {"type": "object", "properties": {"labels": {"type": "object"}}}}}),
                "spec.validation.openAPIV3Schema.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified".to_owned(),
            ),
            (spec(json!({"type": "array"})), format!("{at}.items: Required value: must be specified")),
            (
                spec(json!({"type": "string", "pattern": "a(b"})),
                format!("{at}.pattern: Invalid value: \"a(b\": must be a valid regular expression, but isn't: error parsing regexp: missing closing ): `a(b`"),
            ),
            (
                spec(json!({"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"], "items": {"type": "object", "properties": {"name": {"type": "string"}}}})),
                format!("{at}.items.properties[name].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property"),
            ),
            (
                spec(json!({"type": "array", "x-kubernetes-list-map-keys": ["name"], "items": {"type": "object", "properties": {"name": {"type": "string"}}}})),
                format!("{at}.x-kubernetes-list-type: Required value: must be map if x-kubernetes-list-map-keys is non-empty"),
            ),
            (
                json!({"type": "object", "nullable": true, "properties": {"spec": {"type": "string"}}}),
                "spec.validation.openAPIV3Schema.nullable: Forbidden: nullable cannot be true at the root".to_owned(),
            ),
            (spec(json!({"$ref": "#/definitions/x"})), format!("{at}.$ref: Forbidden: $ref is not supported")),
            (
                spec(json!({"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "object"}})),
                format!("{at}.items.x-kubernetes-map-type: Invalid value: null: must be atomic as item of a list with x-kubernetes-list-type=set"),
            ),
            (
                json!({"type": "object", "properties": {"kind": {"type": "integer"}}}),
                "spec.validation.openAPIV3Schema.properties[kind].type: Invalid value: \"integer\": must be string".to_owned(),
            ),
            (
                json!({"type": "object", "properties": {"metadata": {"type": "object", "default": {}}}}),
                "spec.validation.openAPIV3Schema.properties[metadata].default: Forbidden: must not be set in top-level metadata".to_owned(),
            ),
            (
                spec(json!({"type": "array", "uniqueItems": true, "items": {"type": "string"}})),
                format!("{at}.uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic"),
            ),
        ] {
            assert_eq!(said(&schema), [expected], "{schema}");
        }
    }

    /// A default its schema refuses, in the schema validator's words below
    /// `default` (the real 1.36.3 server's words).
    #[test]
    fn defaults_are_held_to_their_schemas() {
        let at = "spec.validation.openAPIV3Schema.properties[spec]";
        for (schema, expected) in [
            (
                spec(
                    json!({"type": "object", "properties": {"n": {"type": "integer", "default": "x"}}}),
                ),
                format!(
                    "{at}.properties[n].default: Invalid value: \"string\":  in body must be of type integer: \"string\""
                ),
            ),
            (
                spec(
                    json!({"type": "object", "default": {"a": 1, "b": 2}, "properties": {"a": {"type": "integer"}}}),
                ),
                format!(
                    "{at}.default: Invalid value: {{\"a\":1,\"b\":2}}: must not have unknown fields"
                ),
            ),
            (
                spec(
                    json!({"type": "object", "default": {"a": "x"}, "properties": {"a": {"type": "integer"}}}),
                ),
                format!(
                    "{at}.default.a: Invalid value: \"string\": a in body must be of type integer: \"string\""
                ),
            ),
            (
                spec(
                    json!({"type": "array", "items": {"type": "object", "properties": {"p": {"type": "integer", "minimum": 5, "default": 1}}}}),
                ),
                format!(
                    "{at}.items.properties[p].default: Invalid value: 1:  in body should be greater than or equal to 5"
                ),
            ),
        ] {
            assert_eq!(said(&schema), [expected], "{schema}");
        }
        let kept = spec(
            json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true, "default": {"z": 1}, "properties": {"a": {"type": "integer"}}}),
        );
        assert!(said(&kept).is_empty());
    }

    /// What the real server admits: `additionalProperties: false` alone,
    /// the int-or-string `anyOf`, and a value validation under a field's
    /// `allOf` naming a property the structure lacks (completeness is
    /// checked from the root's value validations only).
    #[test]
    fn schemas_the_server_admits_are_admitted() {
        for schema in [
            spec(json!({"type": "object", "additionalProperties": false})),
            spec(
                json!({"type": "object", "properties": {"key": {"type": "string"}}, "allOf": [{"properties": {"other": {"minLength": 1}}}]}),
            ),
            spec(
                json!({"type": "object", "properties": {"port": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]}}}),
            ),
            json!({"type": "object", "properties": {"metadata": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 8}}}}}),
        ] {
            assert!(said(&schema).is_empty(), "{schema}: {:?}", said(&schema));
        }
        // From the root, a property the structure lacks is refused.
        assert_eq!(
            said(
                &json!({"type": "object", "properties": {"a": {"type": "string"}}, "allOf": [{"properties": {"b": {"minLength": 1}}}]})
            ),
            [
                "spec.validation.openAPIV3Schema.properties[b]: Required value: because it is defined in spec.validation.openAPIV3Schema.allOf[0].properties[b]"
            ]
        );
    }
}
