use serde_json::json;

use super::*;
use values::field_pointer;

/// The problems of `object` under a schema holding `rules` at its root
/// (a resource's root), whose fields are `fields` (name and type, a
/// list's items strings), lists and strings bounded so that the rules'
/// estimated cost is within the server's limit.
fn failures(
    fields: &[(&str, &str)],
    rules: &serde_json::Value,
    object: &serde_json::Value,
) -> Vec<String> {
    let properties: serde_json::Map<String, serde_json::Value> = fields
        .iter()
        .map(|(name, kind)| {
            let schema = match *kind {
                "array" => json!({"type": "array", "maxItems": 64,
                    "items": {"type": "string", "maxLength": 64}}),
                "string" => json!({"type": "string", "maxLength": 256}),
                kind => json!({"type": kind}),
            };
            ((*name).to_owned(), schema)
        })
        .collect();
    let schema =
        json!({"type": "object", "properties": properties, "x-kubernetes-validations": rules});
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
    let n = [("n", "integer")];
    assert!(failures(&n, &rules, &json!({"n": 4})).is_empty());
    assert_eq!(
        failures(&n, &rules, &json!({"n": 9})),
        ["|Invalid value: n is 1 to 8"]
    );
}

#[test]
fn an_int_or_string_rule_holds_for_either_side_of_an_or() {
    // Trainer v2.0.0's numProcPerNode: `"auto" > 0` is an error that the
    // other side of `||` absorbs, as in cel-go.
    let rules = json!([{"rule": "self.p > 0 || self.p in ['auto', 'cpu', 'gpu']"}]);
    let schema = json!({"type": "object", "properties": {"p": {"x-kubernetes-int-or-string": true}}, "x-kubernetes-validations": rules});
    let (rules, unusable) = Rules::of(&schema);
    assert!(unusable.is_empty());
    let failures = |object: serde_json::Value| {
        let mut problems = Vec::new();
        rules.check("X/x", &object, &mut problems);
        problems
            .into_iter()
            .map(|p| format!("{}|{}", p.path, p.message))
            .collect::<Vec<_>>()
    };
    assert!(failures(json!({"p": "auto"})).is_empty());
    assert!(failures(json!({"p": 2})).is_empty());
    assert_eq!(
        failures(json!({"p": 0})),
        ["|Invalid value: failed rule: self.p > 0 || self.p in ['auto', 'cpu', 'gpu']"]
    );
}

#[test]
fn message_expression_field_path_and_reason_word_the_failure() {
    let rules = json!([{
        "rule": "self.readers.all(r, r.startsWith('team-'))",
        // (`join` of a filtered list is of no size the server can bound:
        // it refuses such a messageExpression for its estimated cost.)
        "messageExpression": "'not a team: ' + self.readers.filter(r, !r.startsWith('team-'))[0]",
        "message": "readers are teams",
        "fieldPath": ".readers",
        "reason": "FieldValueForbidden",
    }]);
    let readers = [("readers", "array")];
    assert_eq!(
        failures(
            &readers,
            &rules,
            &json!({"readers": ["team-a", "bob", "eve"]})
        ),
        ["/readers|Forbidden: not a team: bob"]
    );
    // A messageExpression that fails gives the message.
    let rules =
        json!([{"rule": "false", "messageExpression": "self.readers[5]", "message": "plain"}]);
    assert_eq!(
        failures(&readers, &rules, &json!({"readers": []})),
        ["|Invalid value: plain"]
    );
}

#[test]
fn has_guards_an_optional_field_and_reading_an_absent_one_is_an_error() {
    let ttl = [("ttl", "integer")];
    let guarded = json!([{"rule": "!has(self.ttl) || self.ttl <= 10"}]);
    assert!(failures(&ttl, &guarded, &json!({})).is_empty());
    assert_eq!(failures(&ttl, &guarded, &json!({"ttl": 11})).len(), 1);
    let unguarded = json!([{"rule": "self.ttl <= 10"}]);
    let failed = failures(&ttl, &unguarded, &json!({}));
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
    let fields = ["u", "url", "name", "mem", "v", "ip"].map(|name| (name, "string"));
    assert!(
        failures(
            &fields,
            &rules,
            &json!({"u": "ab42c", "url": "https://example.com/x", "name": "ABC",
                "mem": "512Mi", "v": "v1.2.3", "ip": "10.1.2.3"})
        )
        .is_empty()
    );
}

#[test]
fn transition_rules_and_rules_the_server_refuses_say_why() {
    let schema = json!({"type": "object", "properties": {"q": {"type": "string", "maxLength": 63}}, "x-kubernetes-validations": [
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
    // At the rule's field, as the server names it.
    assert_eq!(unusable[1].pointer, "/x-kubernetes-validations/1/rule");
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

/// What the server says refusing `rule` at a node of `schema` when it
/// compiles it (its cost aside), or `None`.
fn refusal(schema: serde_json::Value, rule: &str) -> Option<String> {
    let mut schema = schema;
    schema["x-kubernetes-validations"] = json!([{ "rule": rule }]);
    let (_, unusable) = Rules::of_node(&schema, false);
    (unusable.into_iter())
        .find(|u| u.why == Why::Invalid)
        .map(|u| u.message)
}

#[test]
fn rules_are_type_checked_against_the_schema_as_the_server_checks_them() {
    let spec = json!({"type": "object", "properties": {
        "n": {"type": "integer"},
        "s": {"type": "string"},
        "l": {"type": "array", "items": {"type": "string"}},
        "m": {"type": "object", "additionalProperties": {"type": "integer"}},
        "t": {"type": "string", "format": "date-time"},
        "io": {"x-kubernetes-int-or-string": true},
        "if": {"type": "string"},
        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
    }});
    for holds in [
        "self.n > 1 && self.s.startsWith('a')",
        "self.l.all(x, x.size() < 3) && self.m.exists(k, self.m[k] > 0)",
        "self.t < timestamp('2030-01-01T00:00:00Z')",
        "self.io == 1 || self.io == 'x'",
        "self.l == [] && self.m == {}",
        "self.if == 'x'",
        "'%d %s'.format([1, 'a']) != ''",
        "self.?s.orValue('') == ''",
        "has(self.n) && 1 < 1.5",
        "self.l.map(x, [x]).filter(y, y.size() > 0).size() >= 0",
    ] {
        assert_eq!(refusal(spec.clone(), holds), None, "{holds}");
    }
    for (refused, says) in [
        (
            "self.n == 'a'",
            "1:8: found no matching overload for '_==_' applied to '(int, string)'",
        ),
        ("self.x == 1", "1:5: undefined field 'x'"),
        ("has(self.free.x)", "1:4: undefined field 'x'"),
        (
            "size(self.n) == 1",
            "1:5: found no matching overload for 'size' applied to '(int)'",
        ),
        (
            "self.l.sum() == 1",
            "1:11: found no matching overload for 'sum' applied to 'list(string).()'",
        ),
        (
            "self.s.x == 1",
            "1:7: type 'string' does not support field selection",
        ),
        (
            "[1, 'a'].size() == 2",
            "1:5: expected type 'int' but found 'string'",
        ),
        (
            "self.n.all(x, true)",
            "1:5: expression of type 'int' cannot be range of a comprehension",
        ),
        (
            "self.s == null",
            "found no matching overload for '_==_' applied to '(string, null)'",
        ),
        ("self.n + 1", "cel expression must evaluate to a bool"),
        ("self.io", "cel expression must evaluate to a bool"),
        (
            "sign(quantity('1')) == 1 && quantity('1').sign() == 1",
            "found no matching overload for 'sign'",
        ),
        ("nope(1)", "undeclared reference to 'nope'"),
    ] {
        let message = refusal(spec.clone(), refused).unwrap_or_default();
        assert!(message.contains(says), "{refused}: {message}");
    }
}

#[test]
fn every_rule_of_the_bundled_kubeflow_and_jobset_schemas_compiles_within_the_cost_limits() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas/k8s");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .chain(std::fs::read_dir(dir.join("variants")).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .filter(|p| !p.to_string_lossy().contains("kubernetes-v"))
        .collect();
    files.sort();
    let mut rules_seen = 0;
    for file in files {
        let schema: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        let (rules, unusable) = Rules::of(&schema);
        rules_seen += rules.sites.iter().map(|s| s.rules.len()).sum::<usize>();
        // The API server admits these CRDs: types and estimated costs.
        let refused: Vec<_> = unusable
            .iter()
            .filter(|u| u.why != Why::Transition)
            .map(|u| format!("{}: {}", u.pointer, u.message))
            .collect();
        assert!(refused.is_empty(), "{}: {refused:#?}", file.display());
    }
    assert!(rules_seen > 50, "{rules_seen}");
}

#[test]
fn a_rule_the_server_estimates_too_costly_is_refused_in_its_words() {
    let costs = |names: serde_json::Value, rules: serde_json::Value| {
        let schema = json!({"type": "object", "properties": {"names": names},
            "x-kubernetes-validations": rules});
        let (_, unusable) = Rules::of(&schema);
        (unusable.into_iter())
            .map(|u| (u.why, u.pointer, u.message))
            .collect::<Vec<_>>()
    };
    let rule = json!([{"rule": "self.names.all(n, n.matches('^[a-z]+$'))"}]);
    // A list of any length of strings of any length: as many as fit in a
    // request, each as long.
    let refused = costs(
        json!({"type": "array", "items": {"type": "string"}}),
        rule.clone(),
    );
    assert_eq!(refused.len(), 3, "{refused:?}");
    assert_eq!(refused[0].0, Why::Cost);
    assert_eq!(refused[0].1, "/x-kubernetes-validations/0/rule");
    assert!(
        refused[0].2.starts_with("Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"),
        "{refused:?}"
    );
    // Bounded as the message says, the same rule is admitted.
    let bounded = json!({"type": "array", "maxItems": 100,
        "items": {"type": "string", "maxLength": 63}});
    assert!(costs(bounded.clone(), rule).is_empty());
    // Each rule within its limit, but together past the CRD's: each rule
    // of 1% of it or more is named, and the total.
    let big = json!({"type": "array", "maxItems": 10000,
        "items": {"type": "string", "maxLength": 250}});
    let many: Vec<_> = (0..100)
        .map(|n| json!({"rule": format!("self.names.all(x, x.contains('{n:02}'))")}))
        .collect();
    let refused = costs(big, json!(many));
    assert_eq!(refused.len(), 101);
    assert!(
        refused[..100]
            .iter()
            .all(|(why, pointer, message)| *why == Why::Cost
                && pointer.ends_with("/rule")
                && message.starts_with(
                    "Forbidden: contributed to estimated rule cost total exceeding cost limit"
                ))
    );
    assert_eq!(refused[100].1, "");
    assert!(refused[100].2.contains(
        "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of 1.0"
    ));
}

#[test]
fn addresses_and_quantities_fail_in_the_servers_words() {
    // Each as the API server said it (Kubernetes 1.36 built with Go 1.26,
    // the control-plane suite's differential cases).
    for (text, said) in [
        (
            "10.0.0.0/8/9",
            r#"ParseAddr("10.0.0.0/8"): unexpected character (at "/8")"#,
        ),
        (
            " 10.0.0.0/8",
            r#"ParseAddr(" 10.0.0.0"): unexpected character (at " 10.0.0.0")"#,
        ),
        ("10.0.0.0/33", "prefix length out of range"),
        ("1.2.3/8", r#"ParseAddr("1.2.3"): IPv4 address too short"#),
        (
            "256.1.1.1/8",
            r#"ParseAddr("256.1.1.1"): IPv4 field has value >255"#,
        ),
        (
            "01.2.3.4/8",
            r#"ParseAddr("01.2.3.4"): IPv4 field has octet with leading zero"#,
        ),
        (
            "1..2.3/8",
            r#"ParseAddr("1..2.3"): IPv4 field must have at least one digit (at ".2.3")"#,
        ),
        (
            ":::/8",
            r#"ParseAddr(":::"): each colon-separated field must have at least one digit (at ":")"#,
        ),
        (
            "::g/8",
            r#"ParseAddr("::g"): each colon-separated field must have at least one digit (at "g")"#,
        ),
        (
            "1:2:3:4:5:6:7:8::/8",
            r#"ParseAddr("1:2:3:4:5:6:7:8::"): the :: must expand to at least one field of zeros"#,
        ),
        (
            "1:2:3:4:5:6:7::1.2.3.4/8",
            r#"too many hex fields to fit an embedded IPv4 at the end of the address (at "1.2.3.4")"#,
        ),
        ("10.0.0.0/08", r#"bad bits after slash: "08""#),
        ("10.0.0.0", "no '/'"),
    ] {
        let error = net::cidr(text).unwrap_err();
        assert!(
            error.starts_with("network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix(")
                && error.ends_with(said),
            "{text}: {error}"
        );
    }
    assert!(net::cidr("10.0.0.0/8").is_ok() && net::cidr("::ffff:1.2.3.4/104").is_err());
    let format = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
    let suffix = "unable to parse quantity's suffix";
    for (text, said) in [
        ("1.0.0", Some(format)),
        ("12.5.6", Some(format)),
        ("", Some(format)),
        ("500m12", Some(suffix)),
        ("--1", Some(suffix)),
        ("1e", Some(suffix)),
        // A sign alone, a point alone: 0, as Go reads them.
        ("+", None),
        (".", None),
        (".Ki", None),
        ("5e-3", None),
    ] {
        let parsed = quantity::Quantity::parse(text);
        assert_eq!(parsed.as_ref().err().map(String::as_str), said, "{text:?}");
    }
}

#[test]
fn a_qualification_costs_what_the_servers_validator_charges() {
    // Each cost as k8s.io/apiextensions-apiserver v0.36.3's validator
    // charged it, for this schema and object: a name or a qualification 1;
    // a field or index of a value that is not a name 1 more (cel-go's
    // relative attribute); an optional one that finds nothing 0, and
    // those after it; `orValue` and `optional.none()` as the checker plans
    // them.
    let schema = json!({"type": "object", "properties": {
        "absentObj": {"type": "object", "properties": {"absentStr": {"type": "string"}}},
        "presentObj": {"type": "object", "properties": {"presentStr": {"type": "string"}}},
        "l": {"type": "array", "items": {"type": "string"}},
        "m": {"type": "object", "additionalProperties": {"type": "string"}}}});
    let object = json!({"presentObj": {"presentStr": "value"}, "l": ["a"], "m": {"k": "v"}});
    for (rule, cost) in [
        ("self.?absentObj.?absentStr == optional.none()", 3),
        ("self.presentObj.?presentStr == optional.of('value')", 5),
        ("self.l[?1] == optional.none()", 4),
        ("self.l[?1].orValue('nope') == 'nope'", 3),
        ("self.l[?1] == self.l[?1]", 5),
        ("self.l.map(x, x)[?3].orValue('') == ''", 17),
        ("[1,2][0] == 1", 3),
        ("{'a': 1}.a == 1", 3),
        ("{'a': 1}.?b.orValue(0) == 0", 2),
        ("[[1]][?0][?0].orValue(0) == 1", 4),
        ("[self.presentObj][0].presentStr == 'value'", 16),
        ("self.m[?'k'].orValue('') == 'v'", 4),
    ] {
        let mut schema = schema.clone();
        schema["x-kubernetes-validations"] = json!([{ "rule": rule }]);
        let (rules, _) = Rules::of_node(&schema, false);
        let (failures, spent) = rules.validate(&object, None, RUNTIME_BUDGET, PER_CALL_LIMIT);
        assert!(failures.is_empty(), "{rule}: {failures:?}");
        assert_eq!(spent, cost, "{rule}");
    }
}

/// A macro's step reads its accumulator once on each way through it, so
/// that evaluation may take the accumulator rather than copy it; a step
/// that could read it twice keeps it.
#[test]
fn a_macros_step_reads_its_accumulator_once() {
    use ast::{ACCUMULATOR, Kind, reads};
    let step_reads = |source: &str| {
        let expr = syntax::parse(source).expect("parses");
        let Kind::Comprehension(c) = &expr.kind else {
            panic!("{source} is no comprehension");
        };
        reads(&c.step, ACCUMULATOR)
    };
    for once in [
        "[1, 2].map(x, x * 2)",
        "[1, 2].filter(x, x > 1)",
        "[1, 2].map(x, x > 1, x)",
        "[1, 2].exists_one(x, x > 1)",
        "[1, 2].map(x, [3].map(y, y + x))",
        "[1, 2].all(x, x > 0)",
    ] {
        assert_eq!(step_reads(once), 1, "{once}");
    }
    // Joined lists come out the same, the accumulator taken or not.
    let joined = failures(
        &[("l", "array")],
        &json!([{"rule": "self.l.map(x, x + '!').filter(y, y != 'b!') == ['a!', 'c!']"}]),
        &json!({"l": ["a", "b", "c"]}),
    );
    assert!(joined.is_empty(), "{joined:?}");
}

#[test]
fn a_quantitys_exponent_at_the_ends_of_int32_is_an_error_not_an_overflow() {
    // `1e-2147483648` once overflowed the scale (a panic where overflow is
    // checked); a power of ten past what 128 bits multiply out stays a
    // scale, and `isInteger()` is false, as the server has it.
    for text in [
        "1e-2147483648",
        "1.5e-2147483648",
        "1e2147483647",
        "9e-2147483647",
    ] {
        assert!(quantity::Quantity::parse(text).is_err(), "{text}");
    }
    let big = quantity::Quantity::parse("9999999999999999999999999999999999999G").unwrap();
    assert_eq!(big.as_int(), None);
    assert!(big.compare(quantity::Quantity::from_int(1)).is_gt());
    assert_eq!(
        quantity::Quantity::parse("1.5k").unwrap().as_int(),
        Some(1500)
    );
}

/// An unterminated string is reported as ANTLR's lexer reports it: the
/// text it read, to the end or through the line break (cel-go v0.26.0; the
/// real server's `"abc` message is a case of `schema-cel.jsonl`).
#[test]
fn an_unterminated_string_shows_the_text_read() {
    let object = json!({"type": "object"});
    for (rule, read) in [
        ("self.a == \"abc", "'\"abc'"),
        ("self.a == 'ab\ncd' ", "''ab\\n'"),
        ("'x' == \"\"\"abc", "'\"abc'"),
    ] {
        let said = refusal(object.clone(), rule).unwrap_or_default();
        assert!(
            said.contains(&format!("Syntax error: token recognition error at: {read}")),
            "{rule}: {said}"
        );
    }
}
