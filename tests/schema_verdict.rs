//! The quick schema check (`trainc::schema_verdict`) against `jsonschema`, the
//! validator whose errors trainc reports: wherever the quick check answers
//! `Valid` or `Invalid`, `jsonschema` must agree, on every spec in the
//! repository, every object the examples build, and thousands of mutations
//! of both. And a valid spec compiles no validator at all.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use trainc::schema_verdict::{Draft, SchemaJson, Verdict, verdict};

use crate::support::root;

/// A reproducible stream of choices (xorshift64*).
struct Choices(u64);

impl Choices {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_f491_4f6c_dd1d);
        usize::try_from(x >> 33).unwrap() % n
    }
}

/// Values of every JSON type, and strings that patterns and enums care about.
fn replacements() -> Vec<Value> {
    vec![
        json!(null),
        json!(true),
        json!(0),
        json!(-1),
        json!(3),
        json!(2.0),
        json!(0.5),
        json!(4_294_967_296_u64),
        json!(""),
        json!("x"),
        json!("gpu"),
        json!("auto"),
        json!("1Gi"),
        json!("100m"),
        json!("1.5e3"),
        json!("Never"),
        json!("OnFailure"),
        json!("a b"),
        json!("é"),
        json!([]),
        json!(["x"]),
        json!([1]),
        json!({}),
        json!({"name": "x"}),
        json!({"unknownField": 1}),
    ]
}

/// Every place in `value`, as JSON pointers.
fn pointers(value: &Value, here: &str, out: &mut Vec<String>) {
    out.push(here.to_owned());
    match value {
        Value::Object(fields) => {
            for (key, field) in fields {
                let segment = key.replace('~', "~0").replace('/', "~1");
                pointers(field, &format!("{here}/{segment}"), out);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                pointers(item, &format!("{here}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// `value` with one change at a random place: a replaced value, a removed
/// member, an added one.
fn mutate(value: &Value, choices: &mut Choices) -> Value {
    let mut out = value.clone();
    let mut places = Vec::new();
    pointers(&out, "", &mut places);
    let place = &places[choices.below(places.len())];
    let options = replacements();
    let (parent, last) = place.rsplit_once('/').unwrap_or(("", ""));
    match choices.below(4) {
        0 if !place.is_empty() => match out.pointer_mut(parent) {
            Some(Value::Object(fields)) => {
                fields.shift_remove(&last.replace("~1", "/").replace("~0", "~"));
            }
            Some(Value::Array(items)) => {
                items.remove(last.parse::<usize>().unwrap());
            }
            _ => {}
        },
        1 => {
            if let Some(Value::Object(fields)) = out.pointer_mut(place) {
                let keys = ["name", "image", "extra", "cpu", "value", "key"];
                let key = keys[choices.below(keys.len())];
                fields.insert(
                    key.to_owned(),
                    options[choices.below(options.len())].clone(),
                );
            }
        }
        _ => {
            if let Some(slot) = out.pointer_mut(place) {
                *slot = options[choices.below(options.len())].clone();
            }
        }
    }
    out
}

#[derive(Default)]
struct Tally {
    decided: usize,
    unknown: usize,
}

impl Tally {
    /// The comparison means something only if the quick check decides
    /// nearly every case.
    fn assert_mostly_decided(&self) {
        assert!(
            self.unknown * 20 < self.decided,
            "decided {}, unknown {}",
            self.decided,
            self.unknown
        );
    }
}

/// Checks the quick verdict on `instance` against `validator`.
fn agree(
    quick: &SchemaJson<'_>,
    draft: Draft,
    validator: &jsonschema::Validator,
    instance: &Value,
    what: &str,
    tally: &mut Tally,
) {
    let valid = validator.is_valid(instance);
    match verdict(quick, instance, draft) {
        Verdict::Valid => assert!(
            valid,
            "{what}: quick check says valid, jsonschema not:\n{instance:#}"
        ),
        Verdict::Invalid => assert!(
            !valid,
            "{what}: quick check says invalid, jsonschema not:\n{instance:#}"
        ),
        Verdict::Unknown => {
            tally.unknown += 1;
            return;
        }
    }
    tally.decided += 1;
}

fn files_under(dir: &Path, extensions: &[&str], out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files_under(&path, extensions, out);
        } else if path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| extensions.iter().any(|x| e.eq_ignore_ascii_case(x)))
        {
            out.push(path);
        }
    }
}

/// Every spec in examples/ and tests/check/, as the schema pass sees it.
fn specs() -> Vec<(String, Value)> {
    let mut paths = Vec::new();
    files_under(&root().join("examples"), &["toml"], &mut paths);
    files_under(&root().join("tests/check"), &["toml", "yaml"], &mut paths);
    paths.sort();
    let mut out = Vec::new();
    for path in paths {
        let mut sources = trainc::Sources::new();
        let Ok(id) = trainc::source::read(&mut sources, &path) else {
            continue;
        };
        if let Ok(tree) = trainc::parse::parse(id, sources.get(id)) {
            out.push((path.display().to_string(), tree.to_json()));
        }
    }
    out
}

fn schema_text(name: &str) -> String {
    std::fs::read_to_string(root().join("schemas/compact").join(name)).unwrap()
}

#[test]
fn quick_check_agrees_with_jsonschema_on_specs() {
    let full: Value = serde_json::from_str(trainc::spec::SPEC_SCHEMA).unwrap();
    let validator = jsonschema::draft202012::new(&full).unwrap();
    let text = schema_text("trainspec.schema.json");
    let quick = SchemaJson::parse(&text).unwrap();
    let specs = specs();
    assert!(specs.len() > 150, "{}", specs.len());
    let mut tally = Tally::default();
    let mut choices = Choices(0x9e37_79b9_7f4a_7c15);
    for (what, spec) in &specs {
        agree(&quick, Draft::Draft2020, &validator, spec, what, &mut tally);
        for _ in 0..40 {
            let mutated = mutate(spec, &mut choices);
            agree(
                &quick,
                Draft::Draft2020,
                &validator,
                &mutated,
                what,
                &mut tally,
            );
        }
    }
    tally.assert_mostly_decided();
}

#[test]
fn quick_check_agrees_with_jsonschema_on_built_objects() {
    let mut schemas = Vec::new();
    for upstream in trainc::verify::compact::EMBEDDED {
        let text = schema_text(trainc::verify::compact::compact_name(upstream));
        let json: Value = serde_json::from_str(&text).unwrap();
        let gvk = &json["x-kubernetes-group-version-kind"][0];
        if gvk.is_null() {
            // ObjectMeta: checked against every object's metadata.
            let validator = jsonschema::draft7::new(&json).unwrap();
            schemas.push((String::new(), None, text, validator));
            continue;
        }
        let api_version = match gvk["group"].as_str().unwrap() {
            "" => gvk["version"].as_str().unwrap().to_owned(),
            group => format!("{group}/{}", gvk["version"].as_str().unwrap()),
        };
        let kind = gvk["kind"].as_str().map(str::to_owned);
        let validator = jsonschema::draft7::new(&json).unwrap();
        schemas.push((api_version, kind, text, validator));
    }
    let mut objects = Vec::new();
    let mut paths = Vec::new();
    files_under(&root().join("golden"), &["yaml"], &mut paths);
    for path in paths {
        let text = std::fs::read_to_string(&path).unwrap();
        for document in text.split("\n---\n") {
            let value: Value = serde_saphyr::from_str(document).unwrap();
            objects.push((path.display().to_string(), value));
        }
    }
    assert!(objects.len() > 30, "{}", objects.len());
    let mut tally = Tally::default();
    let mut choices = Choices(0x2545_f491_4f6c_dd1d);
    for (what, object) in &objects {
        let matching: Vec<_> = schemas
            .iter()
            .filter(|(api_version, kind, _, _)| {
                object["apiVersion"] == api_version.as_str()
                    && object["kind"].as_str() == kind.as_deref()
            })
            .collect();
        assert!(!matching.is_empty(), "{what}: no schema");
        let meta = schemas.iter().filter(|(_, kind, _, _)| kind.is_none());
        // A TrainJob, against the schema of every Trainer API level.
        for (_, kind, text, validator) in matching.into_iter().chain(meta) {
            let quick = SchemaJson::parse(text).unwrap();
            let instance = if kind.is_some() {
                object
            } else {
                &object["metadata"]
            };
            agree(&quick, Draft::Draft7, validator, instance, what, &mut tally);
            for _ in 0..60 {
                let mutated = mutate(instance, &mut choices);
                agree(&quick, Draft::Draft7, validator, &mutated, what, &mut tally);
            }
        }
    }
    tally.assert_mostly_decided();
}

/// A valid spec is checked, built and verified without a compiled
/// validator: this thread's count of fallbacks stays where it was. And an
/// invalid one does fall back, so the count means something.
#[test]
fn valid_specs_need_no_compiled_validator() {
    use trainc::schema_verdict::fallbacks;
    let before = fallbacks();
    let mut paths = Vec::new();
    files_under(&root().join("examples"), &["toml"], &mut paths);
    for path in paths {
        let mut sources = trainc::Sources::new();
        let id = trainc::source::read(&mut sources, &path).unwrap();
        let options = trainc::Options {
            verify: true,
            ..trainc::Options::default()
        };
        let built = trainc::build(&mut sources, &trainc::Input::spec(id), &options);
        assert!(
            built.objects.is_some(),
            "{}: {:?}",
            path.display(),
            built.diagnostics
        );
    }
    assert_eq!(fallbacks(), before, "a valid spec fell back to jsonschema");
    let mut sources = trainc::Sources::new();
    let id = sources.add(
        "typo.toml",
        "name = \"x\"\nimage = \"i\"\nscript = \"t.py\"\nreplicaz = 2\n",
    );
    assert!(
        trainc::check(&sources, id)
            .diagnostics
            .iter()
            .any(trainc::Diagnostic::is_error)
    );
    assert!(fallbacks() > before);
}
