//! The tests of Kubernetes' CEL libraries (k8s.io/apiserver
//! `pkg/cel/library`: IP, CIDR, quantity, format, semver, and the cost of
//! every library function), as data (`tests/cel/kubernetes/library.jsonl`,
//! recorded from the real tests by `tests/cluster/cmd/celcases`): each
//! expression compiled and run in the rules' environment and compared with
//! what the test found. A case that disagrees is listed in
//! `tests/cel/kubernetes/library-differences.txt` with how, as
//! [`super::upstream`] does for the validator's cases.
//!
//! A test's environment is at times narrower than a CRD's (`testIP` has
//! the IP and CIDR libraries alone, `testSemver` a semver library of the
//! version asked for): an expression it refuses for a function its
//! environment lacks compiles in a CRD's, and is listed with why.

use serde_json::Value as Json;

use super::compile;
use super::cost;
use super::eval::Eval;
use super::upstream::{agree_or_listed, dir, named};
use super::value::{Error, List, Value};
use super::{PER_CALL_LIMIT, cost::estimate_range};

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
            run(&source).ok()?.0.ok()?
        }
    })
}

/// `source` compiled, then run as the tests run it (no constant made when
/// the program is planned: they do not ask for `cel.OptOptimize`): its
/// value or runtime error, and its cost.
fn run(source: &str) -> Result<(Result<Value, String>, u64), String> {
    let compiled = compile::any(source)?;
    let mut ev = Eval::new(PER_CALL_LIMIT);
    ev.folds = false;
    let value = match ev.eval(&compiled.expr) {
        Ok(Value::Error(message)) => Err(message.to_string()),
        Ok(value) => Ok(value),
        Err(Error::Eval(message)) => Err(message),
        Err(Error::Cancelled) => Err("operation cancelled: actual cost limit exceeded".into()),
    };
    Ok((value, ev.cost))
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
    let Ok((value, cost)) = run(source) else {
        return Some("refused");
    };
    if let Some(range) = case["estimate"].as_array() {
        let compiled = compile::any(source).ok()?;
        let ours = estimate_range(&compiled.expr, &compiled.checked, &|_| None);
        let real = (range[0].as_u64(), range[1].as_u64());
        if ours.map(|r| (Some(r.min), Some(r.max))) != Some(real) {
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
    let Ok(how) = std::env::var("TRAINC_CEL_SHOW") else {
        return;
    };
    let text = std::fs::read_to_string(dir().join("library.jsonl")).unwrap();
    for line in text.lines() {
        let case: Json = serde_json::from_str(line).unwrap();
        if difference(&case) != Some(how.as_str()) {
            continue;
        }
        let source = case["expression"].as_str().unwrap_or_default();
        println!("== {} {source}", name(&case, line));
        println!("   real {line}");
        match run(source) {
            Ok((value, cost)) => {
                let estimate = compile::any(source).ok().and_then(|c| {
                    cost::estimate_range(&c.expr, &c.checked, &|_| None).map(|r| (r.min, r.max))
                });
                println!("   ours {value:?} cost {cost} estimate {estimate:?}");
            }
            Err(message) => println!("   ours refused: {message}"),
        }
    }
}
