//! The tests of Kubernetes' CEL libraries (k8s.io/apiserver
//! `pkg/cel/library`: IP, CIDR, quantity, format, semver, and the cost of
//! every library function), as data (`tests/cel/kubernetes/library.jsonl`,
//! recorded from the real tests by `tests/cluster/cmd/celcases`): each
//! expression compiled and run in the rules' environment and compared with
//! what the test found. A case that disagrees is listed in
//! `tests/cel/kubernetes/library-differences.txt` with how, as
//! [`super::upstream`] does for the validator's cases.
//!
//! Where the tests' environment is not a CRD's, they are run in theirs:
//! literals of unlike items are let be, the estimate sizes every string
//! and bytes as the tests' estimator does, and no constant is folded. A
//! test's environment is at times narrower than a CRD's (`testIP` has the
//! IP and CIDR libraries alone, `testSemver` a semver library of the
//! version asked for), or wider (the `authorizer` variable): an
//! expression that compiles in one and not the other is listed with why.

use serde_json::Value as Json;

use super::PER_CALL_LIMIT;
use super::compile::{self, Compiled};
use super::cost::estimate_range;
use super::eval::Eval;
use super::ranges::Range;
use super::types::Type;
use super::upstream::{agree_or_listed, named, shown};
use super::value::{Error, List, Value};

/// The value a case recorded (`{"type": …, "value": …}`), as trainc's: a
/// value of a Kubernetes library's type made by that library's function
/// from the text Go printed.
fn expected(recorded: &Json) -> Option<Value> {
    let value = &recorded["value"];
    Some(match recorded["type"].as_str()? {
        "bool" => Value::Bool(value.as_bool()?),
        "int" => Value::Int(value.as_i64()?),
        "uint" => Value::Uint(value.as_u64()?),
        "double" => Value::Double(value.as_f64()?),
        "string" => Value::String(value.as_str()?.into()),
        "bytes" => Value::Bytes(value.as_str()?.as_bytes().into()),
        "null_type" => Value::Null,
        "optional_type" => Value::Optional(match value {
            Json::Null => None,
            inner => Some(std::sync::Arc::new(expected(inner)?)),
        }),
        "list" => Value::List(List::plain(
            value
                .as_array()?
                .iter()
                .map(expected)
                .collect::<Option<_>>()?,
        )),
        library => {
            let make = match library {
                "net.IP" => "ip",
                "net.CIDR" => "cidr",
                "kubernetes.Quantity" => "quantity",
                "kubernetes.Semver" => "semver",
                "kubernetes.URL" => "url",
                _ => return None,
            };
            let source = format!("{make}({value})");
            run(&source).ok()?.value.ok()?
        }
    })
}

/// A case's expression compiled, and what running it gave: its value or
/// runtime error, and its cost.
struct Ran {
    compiled: Compiled,
    value: Result<Value, String>,
    cost: u64,
}

/// `source` compiled, then run as the tests run it (no constant made when
/// the program is planned: they do not ask for `cel.OptOptimize`).
fn run(source: &str) -> Result<Ran, String> {
    let compiled = compile::any(source)?;
    let mut ev = Eval::new(PER_CALL_LIMIT);
    ev.folds = false;
    let value = match ev.eval(&compiled.expr) {
        Ok(Value::Error(message)) => Err(message.to_string()),
        Ok(value) => Ok(value),
        Err(Error::Eval(message)) => Err(message),
        Err(Error::Cancelled) => Err("operation cancelled: actual cost limit exceeded".into()),
    };
    Ok(Ran {
        value,
        cost: ev.cost,
        compiled,
    })
}

/// The least and the most `compiled` may cost, estimated with the tests'
/// size estimator (`cost_test.go` `testCostEstimator`), which sizes every
/// string and bytes 0 to 12 and says nothing of another type.
fn estimated(compiled: &Compiled) -> Option<(u64, u64)> {
    let test_sizes = |_: &[String], t: &Type| {
        matches!(t, Type::String | Type::Bytes).then_some(Range { min: 0, max: 12 })
    };
    estimate_range(&compiled.expr, &compiled.checked, &test_sizes).map(|r| (r.min, r.max))
}

/// Go's regexp `pattern` finds a match in `text`.
fn finds(pattern: &str, text: &str) -> bool {
    regex::Regex::new(pattern).is_ok_and(|re| re.is_match(text))
}

/// How trainc disagrees with the case, if it does.
fn difference(case: &Json) -> Option<&'static str> {
    let source = case["expression"].as_str().unwrap_or_default();
    if let Some(patterns) = case["compileErrors"].as_array() {
        return match compile::any(source) {
            Ok(_) => Some("compiles"),
            Err(message) => (!patterns
                .iter()
                .all(|p| finds(p.as_str().unwrap_or_default(), &message)))
            .then_some("compile-message"),
        };
    }
    let Ok(Ran {
        compiled,
        value,
        cost,
    }) = run(source)
    else {
        return Some("refused");
    };
    if let Some(range) = case["estimate"].as_array() {
        let real = (range[0].as_u64(), range[1].as_u64());
        if estimated(&compiled).map(|(min, max)| (Some(min), Some(max))) != Some(real) {
            return Some("estimate");
        }
        if case["cost"].as_u64() != Some(cost) {
            return Some("cost");
        }
        return value.is_err().then_some("runtime-error");
    }
    match (&case["runtimeError"], &case["runtimeErrorPattern"], value) {
        (Json::String(real), _, Err(ours)) => (*real != ours).then_some("runtime-message"),
        (_, Json::String(pattern), Err(ours)) => {
            (!finds(pattern, &ours)).then_some("runtime-message")
        }
        (Json::String(_), _, Ok(_)) | (_, Json::String(_), Ok(_)) => Some("no-runtime-error"),
        (_, _, Err(_)) => Some("runtime-error"),
        (_, _, Ok(ours)) => match expected(&case["result"]) {
            Some(real) if real.equals(&ours) => None,
            _ => Some("result"),
        },
    }
}

/// The subtest's name (`TestIP/parse_ipv4`) and a hash of the case.
fn name(case: &Json, line: &str) -> String {
    let source = case["source"].as_str().unwrap_or_default();
    let test = source
        .split_once(".go:")
        .and_then(|(_, rest)| rest.split_once(" ("))
        .and_then(|(_, test)| test.strip_suffix(')'))
        .unwrap_or(source);
    named(test, line)
}

#[test]
fn kubernetes_library_cases_agree_or_are_listed() {
    agree_or_listed("library.jsonl", "library-differences.txt", difference, name);
}

/// `TRAINC_CEL_SHOW=how cargo test library_show -- --nocapture`: the
/// cases that disagree that way, each with what trainc found.
#[test]
#[allow(clippy::print_stdout)]
fn library_show() {
    for (case, line) in shown("library.jsonl", difference) {
        let source = case["expression"].as_str().unwrap_or_default();
        println!("== {} {source}", name(&case, &line));
        println!("   real {line}");
        match run(source) {
            Ok(ran) => println!(
                "   ours {:?} cost {} estimate {:?}",
                ran.value,
                ran.cost,
                estimated(&ran.compiled)
            ),
            Err(message) => println!("   ours refused: {message}"),
        }
    }
}
