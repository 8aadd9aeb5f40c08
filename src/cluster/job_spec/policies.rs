//! A Job's failure and success policies, as the API server validates them
//! (kubernetes v1.36.3, `pkg/apis/batch/validation/validation.go`
//! `validatePodFailurePolicy`, `validateSuccessPolicy`,
//! `validateIndexesFormat`).

use serde_json::Value as Json;

use super::Defaulted;
use crate::syntax::names;

const MAX_FAILURE_RULES: usize = 20;
const MAX_EXIT_CODES: usize = 255;
const MAX_CONDITION_PATTERNS: usize = 20;
const MAX_SUCCESS_RULES: usize = 20;
const MAX_SUCCEEDED_INDEXES: usize = 64 * 1024;

/// `podFailurePolicy`'s rules.
pub(super) fn failure_policy(spec: &Json, refuse: &mut impl FnMut(&str, String)) {
    let rules = spec["podFailurePolicy"]["rules"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    if rules.len() > MAX_FAILURE_RULES {
        refuse(
            "/podFailurePolicy/rules",
            format!(
                "Too many: {}: must have at most {MAX_FAILURE_RULES} items",
                rules.len()
            ),
        );
    }
    let pod = &spec["template"]["spec"];
    let names: Vec<&str> = ["containers", "initContainers"]
        .iter()
        .flat_map(|list| pod[*list].as_array().into_iter().flatten())
        .filter_map(|c| c["name"].as_str())
        .collect();
    for (i, rule) in rules.iter().enumerate() {
        let at = format!("/podFailurePolicy/rules/{i}");
        match rule["action"].as_str().unwrap_or("") {
            "" => refuse(
                &format!("{at}/action"),
                "Required value: valid values: [\"Count\" \"FailIndex\" \"FailJob\" \"Ignore\"]"
                    .to_owned(),
            ),
            "FailIndex" if spec["backoffLimitPerIndex"].is_null() => refuse(
                &format!("{at}/action"),
                "Invalid value: \"FailIndex\": requires the backoffLimitPerIndex to be set"
                    .to_owned(),
            ),
            "Count" | "FailIndex" | "FailJob" | "Ignore" => {}
            other => refuse(
                &format!("{at}/action"),
                format!(
                    "Unsupported value: \"{other}\": supported values: \"Count\", \"FailIndex\", \"FailJob\", \"Ignore\""
                ),
            ),
        }
        let exit_codes = &rule["onExitCodes"];
        let conditions = rule["onPodConditions"]
            .as_array()
            .map_or(&[][..], Vec::as_slice);
        if !exit_codes.is_null() {
            on_exit_codes(exit_codes, &format!("{at}/onExitCodes"), &names, refuse);
        }
        on_conditions(conditions, &format!("{at}/onPodConditions"), refuse);
        match (exit_codes.is_null(), conditions.is_empty()) {
            (false, false) => refuse(
                &at,
                "Invalid value: specifying both OnExitCodes and OnPodConditions is not supported"
                    .to_owned(),
            ),
            (true, true) => refuse(
                &at,
                "Invalid value: specifying one of OnExitCodes and OnPodConditions is required"
                    .to_owned(),
            ),
            _ => {}
        }
    }
}

fn on_exit_codes(
    requirement: &Json,
    at: &str,
    names: &[&str],
    refuse: &mut impl FnMut(&str, String),
) {
    let operator = requirement["operator"].as_str().unwrap_or("");
    match operator {
        "" => refuse(
            &format!("{at}/operator"),
            "Required value: valid values: [\"In\" \"NotIn\"]".to_owned(),
        ),
        "In" | "NotIn" => {}
        other => refuse(
            &format!("{at}/operator"),
            format!("Unsupported value: \"{other}\": supported values: \"In\", \"NotIn\""),
        ),
    }
    if let Some(name) = requirement["containerName"].as_str()
        && !names.contains(&name)
    {
        refuse(
            &format!("{at}/containerName"),
            format!(
                "Invalid value: \"{name}\": must be one of the container or initContainer names in the pod template"
            ),
        );
    }
    let values: Vec<i64> = (requirement["values"].as_array().into_iter().flatten())
        .filter_map(Json::as_i64)
        .collect();
    // A list's value is worded as its JSON (`field.Error.ErrorBody`,
    // k8s.io/apimachinery v0.36.3): `[3,1]`, `null` where it is not given.
    let written = match &requirement["values"] {
        Json::Null => "null".to_owned(),
        list => list.to_string(),
    };
    if values.is_empty() {
        refuse(
            &format!("{at}/values"),
            format!("Invalid value: {written}: at least one value is required"),
        );
    } else if values.len() > MAX_EXIT_CODES {
        refuse(
            &format!("{at}/values"),
            format!(
                "Too many: {}: must have at most {MAX_EXIT_CODES} items",
                values.len()
            ),
        );
    }
    for (j, value) in values.iter().enumerate() {
        if operator == "In" && *value == 0 {
            refuse(
                &format!("{at}/values/{j}"),
                "Invalid value: 0: must not be 0 for the In operator".to_owned(),
            );
        }
        if values[..j].contains(value) {
            refuse(
                &format!("{at}/values/{j}"),
                format!("Duplicate value: {value}"),
            );
        }
    }
    if values.windows(2).any(|w| w[0] > w[1]) {
        refuse(
            &format!("{at}/values"),
            format!("Invalid value: {written}: must be ordered"),
        );
    }
}

/// A condition pattern's `status` is defaulted to `True` before validation.
fn on_conditions(patterns: &[Json], at: &str, refuse: &mut impl FnMut(&str, String)) {
    if patterns.len() > MAX_CONDITION_PATTERNS {
        refuse(
            at,
            format!(
                "Too many: {}: must have at most {MAX_CONDITION_PATTERNS} items",
                patterns.len()
            ),
        );
    }
    for (j, pattern) in patterns.iter().enumerate() {
        let kind = pattern["type"].as_str().unwrap_or("");
        if let Err(why) = names::qualified_name(kind) {
            refuse(
                &format!("{at}/{j}/type"),
                format!("Invalid value: \"{kind}\": {why}"),
            );
        }
        match pattern["status"].as_str().unwrap_or("True") {
            "True" | "False" | "Unknown" => {}
            other => refuse(
                &format!("{at}/{j}/status"),
                format!(
                    "Unsupported value: \"{other}\": supported values: \"False\", \"True\", \"Unknown\""
                ),
            ),
        }
    }
}

/// An Indexed Job's `successPolicy`.
pub(super) fn success_policy(job: &Defaulted<'_>, refuse: &mut impl FnMut(&str, String)) {
    let rules = job.spec["successPolicy"]["rules"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    if rules.is_empty() {
        refuse(
            "/successPolicy/rules",
            "Required value: at least one rules must be specified when the successPolicy is specified".to_owned(),
        );
    }
    if rules.len() > MAX_SUCCESS_RULES {
        refuse(
            "/successPolicy/rules",
            format!(
                "Too many: {}: must have at most {MAX_SUCCESS_RULES} items",
                rules.len()
            ),
        );
    }
    let completions = job.completions.unwrap_or(0);
    for (i, rule) in rules.iter().enumerate() {
        let at = format!("/successPolicy/rules/{i}");
        let indexes = rule["succeededIndexes"].as_str();
        let count = rule["succeededCount"].as_i64();
        if indexes.is_none() && count.is_none() {
            refuse(
                &at,
                "Required value: at least one of succeededCount or succeededIndexes must be specified".to_owned(),
            );
        }
        let mut total = 0;
        if let Some(indexes) = indexes {
            if indexes.len() > MAX_SUCCEEDED_INDEXES {
                refuse(
                    &format!("{at}/succeededIndexes"),
                    format!("Too long: may not be more than {MAX_SUCCEEDED_INDEXES} bytes"),
                );
            }
            match index_count(indexes, completions) {
                Ok(n) => total = n,
                Err(why) => refuse(
                    &format!("{at}/succeededIndexes"),
                    format!("Invalid value: \"{indexes}\": error parsing succeededIndexes: {why}"),
                ),
            }
        }
        if let Some(count) = count {
            let at = format!("{at}/succeededCount");
            if count < 0 {
                refuse(
                    &at,
                    format!("Invalid value: {count}: must be greater than or equal to 0"),
                );
            }
            if count > completions {
                refuse(
                    &at,
                    format!(
                        "Invalid value: {count}: must be less than or equal to {completions} (the number of specified completions)"
                    ),
                );
            }
            if indexes.is_some() && count > total {
                refuse(
                    &at,
                    format!(
                        "Invalid value: {count}: must be less than or equal to {total} (the number of indexes in the specified succeededIndexes field)"
                    ),
                );
            }
        }
    }
}

/// How many indexes `1,3-5` names, each below `completions`, in
/// increasing order (`validateIndexesFormat`).
pub(super) fn index_count(indexes: &str, completions: i64) -> Result<i64, String> {
    if indexes.is_empty() {
        return Ok(0);
    }
    let number = |text: &str| {
        text.parse::<i64>()
            .map_err(|_| format!("cannot convert string to integer for index: \"{text}\""))
            .and_then(|n| {
                if n >= completions {
                    Err(format!("too large index: \"{text}\""))
                } else {
                    Ok(n)
                }
            })
    };
    let mut last: Option<i64> = None;
    let mut total = 0;
    for interval in indexes.split(',') {
        let parts: Vec<&str> = interval.split('-').collect();
        let (x, y) = match parts[..] {
            [one] => (number(one)?, number(one)?),
            [from, to] => {
                let (x, y) = (number(from)?, number(to)?);
                if x >= y {
                    return Err(format!("non-increasing order, previous: {x}, current: {y}"));
                }
                (x, y)
            }
            _ => {
                return Err(format!(
                    "the fragment \"{interval}\" violates the requirement that an index interval can have at most two parts separated by '-'"
                ));
            }
        };
        if let Some(last) = last
            && last >= x
        {
            return Err(format!(
                "non-increasing order, previous: {last}, current: {x}"
            ));
        }
        total += y - x + 1;
        last = Some(y);
    }
    Ok(total)
}
