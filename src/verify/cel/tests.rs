use serde_json::json;

use super::*;
use values::field_pointer;

/// The problems of `object` under a schema holding `rules` at its root
/// (a resource's root, which keeps the fields it does not declare).
fn failures(rules: &serde_json::Value, object: &serde_json::Value) -> Vec<String> {
    let schema = json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true, "x-kubernetes-validations": rules});
    let (rules, unusable) = Rules::of(&schema);
    assert!(
        unusable.is_empty(),
        "{:?}",
        unusable.iter().map(|u| &u.message).collect::<Vec<_>>()
    );
    let mut problems = Vec::new();
    rules.check("X/x", object, &mut problems);
    problems
        .into_iter()
        .map(|p| format!("{}|{}", p.path, p.message))
        .collect()
}

#[test]
fn a_rule_that_holds_is_silent_and_one_that_fails_says_its_message() {
    let rules = json!([{"rule": "self.n >= 1 && self.n <= 8", "message": "n is 1 to 8"}]);
    assert!(failures(&rules, &json!({"n": 4})).is_empty());
    assert_eq!(
        failures(&rules, &json!({"n": 9})),
        ["|Invalid value: n is 1 to 8"]
    );
}

#[test]
fn an_int_or_string_rule_holds_for_either_side_of_an_or() {
    // Trainer v2.0.0's numProcPerNode: `"auto" > 0` is an error that the
    // other side of `||` absorbs, as in cel-go.
    let rules = json!([{"rule": "self.p > 0 || self.p in ['auto', 'cpu', 'gpu']"}]);
    assert!(failures(&rules, &json!({"p": "auto"})).is_empty());
    assert!(failures(&rules, &json!({"p": 2})).is_empty());
    assert_eq!(
        failures(&rules, &json!({"p": 0})),
        ["|Invalid value: failed rule: self.p > 0 || self.p in ['auto', 'cpu', 'gpu']"]
    );
}

#[test]
fn message_expression_field_path_and_reason_word_the_failure() {
    let rules = json!([{
        "rule": "self.readers.all(r, r.startsWith('team-'))",
        "messageExpression": "'not teams: ' + self.readers.filter(r, !r.startsWith('team-')).join(', ')",
        "message": "readers are teams",
        "fieldPath": ".readers",
        "reason": "FieldValueForbidden",
    }]);
    assert_eq!(
        failures(&rules, &json!({"readers": ["team-a", "bob", "eve"]})),
        ["/readers|Forbidden: not teams: bob, eve"]
    );
    // A messageExpression that fails gives the message.
    let rules = json!([{"rule": "false", "messageExpression": "self.missing", "message": "plain"}]);
    assert_eq!(failures(&rules, &json!({})), ["|Invalid value: plain"]);
}

#[test]
fn has_guards_an_optional_field_and_reading_an_absent_one_is_an_error() {
    let guarded = json!([{"rule": "!has(self.ttl) || self.ttl <= 10"}]);
    assert!(failures(&guarded, &json!({})).is_empty());
    assert_eq!(failures(&guarded, &json!({"ttl": 11})).len(), 1);
    let unguarded = json!([{"rule": "self.ttl <= 10"}]);
    let failed = failures(&unguarded, &json!({}));
    assert_eq!(
        failed,
        ["|Invalid value: \"object\": no such key: ttl evaluating rule: self.ttl <= 10"]
    );
}

#[test]
fn kubernetes_library_functions_evaluate() {
    let rules = json!([
        {"rule": "self.u.find('[0-9]+') == '42'"},
        {"rule": "self.u.findAll('[a-z]').size() == 3"},
        {"rule": "isURL(self.url) && !isURL('not a url')"},
        {"rule": "self.name.lowerAscii() == 'abc'"},
        {"rule": "quantity(self.mem).isLessThan(quantity('1Gi')) && quantity('1500m').asApproximateFloat() == 1.5"},
        {"rule": "semver(self.v, true).isGreaterThan(semver('1.2.3-rc.1')) && cidr('10.0.0.0/8').containsIP(self.ip)"},
    ]);
    assert!(
        failures(
            &rules,
            &json!({"u": "ab42c", "url": "https://example.com/x", "name": "ABC",
                "mem": "512Mi", "v": "v1.2.3", "ip": "10.1.2.3"})
        )
        .is_empty()
    );
}

#[test]
fn transition_rules_and_rules_the_server_refuses_say_why() {
    let schema = json!({"type": "object", "x-kubernetes-validations": [
        {"rule": "self == oldSelf"},
        {"rule": "authorizer.group('apps').check('get').allowed()"},
        {"rule": "self.("},
        {"rule": "true", "fieldPath": "spec"},
        {"rule": "true", "reason": "Wrong"},
        {"rule": "!format.dns1123Label().validate(self.q).hasValue()"},
    ]});
    let (rules, unusable) = Rules::of(&schema);
    let why: Vec<Why> = unusable.iter().map(|u| u.why).collect();
    assert_eq!(
        why,
        [
            Why::Transition,
            Why::Invalid,
            Why::Invalid,
            Why::Invalid,
            Why::Invalid
        ]
    );
    // A CRD's rules have no `authorizer`: the server refuses the CRD.
    assert!(
        unusable[1]
            .message
            .contains("undeclared reference to 'authorizer'"),
        "{}",
        unusable[1].message
    );
    assert_eq!(unusable[1].pointer, "/x-kubernetes-validations/1");
    // The transition rule is kept for an update; the format rule is checked.
    assert_eq!(rules.sites[0].rules.len(), 2);
}

#[test]
fn rules_reach_every_item_and_map_value() {
    let schema = json!({"type": "object", "properties": {
        "list": {"type": "array", "items": {"type": "string",
            "x-kubernetes-validations": [{"rule": "size(self) < 3", "message": "short"}]}},
        "map": {"type": "object", "additionalProperties": {"type": "integer",
            "x-kubernetes-validations": [{"rule": "self >= 0", "message": "positive"}]}},
    }});
    let (rules, _) = Rules::of(&schema);
    let mut problems = Vec::new();
    rules.check(
        "X/x",
        &json!({"list": ["a", "long"], "map": {"a/b": -1, "c": 1}}),
        &mut problems,
    );
    let paths: Vec<&str> = problems.iter().map(|p| p.path.as_str()).collect();
    assert_eq!(paths, ["/list/1", "/map/a~1b"]);
}

#[test]
fn field_paths_read_as_pointers() {
    assert_eq!(field_pointer(".spec.replicas").unwrap(), "/spec/replicas");
    assert_eq!(
        field_pointer(".labels['app/name']").unwrap(),
        "/labels/app~1name"
    );
    assert_eq!(field_pointer(".items[2].name").unwrap(), "/items/2/name");
    assert!(field_pointer("spec").is_err());
    assert!(field_pointer(".a[x]").is_err());
}
