//! The API server's limits on a CRD's rules by their estimated cost, held
//! when the CRD is created (k8s.io/apiextensions-apiserver v0.36.3
//! `pkg/apis/apiextensions/validation/validation.go` and
//! `cel_validation.go`): each rule's cost ([`super::cost`]) times the most
//! times it may run for one object, each messageExpression's, and their
//! total for the CRD; a refusal worded as the server words it.

use serde_json::Value as Json;

use super::compile;
use super::rule::Rule;
use super::sizes::Sizes;
use super::{Unusable, Why};

/// The most one rule, and all of a CRD's, may be estimated to cost
/// (apiextensions-apiserver v0.36.3 `pkg/apis/apiextensions/validation/
/// validation.go`, `StaticEstimatedCostLimit`, `StaticEstimatedCRDCostLimit`).
const RULE_COST_LIMIT: u64 = 10_000_000;
const CRD_COST_LIMIT: u64 = 100_000_000;

/// How many times the values of a schema node may occur in one object, as
/// the server bounds it at CRD creation (`CELSchemaContext`): at most so
/// many (the product of the `maxItems` and `maxProperties` above), no
/// bound written, or not estimated at all (a rule within `allOf`).
#[derive(Clone, Copy)]
pub(super) enum Cardinality {
    AtMost(u64),
    Unbounded,
    NotEstimated,
}

/// The estimated costs of a CRD's rules so far (`TotalCost`): their sum
/// and those of at least 1% of the limit, each at its place.
#[derive(Default)]
pub(super) struct Total {
    sum: u64,
    /// Where, what (the rule, or its messageExpression), how much.
    expensive: Vec<(String, String, u64)>,
}

/// How many times the values of `node`'s children may occur in one
/// object, its own occurring `cardinality` times (`childContext`,
/// `extractMaxElements`): an object's properties once each, a list's
/// items or a map's values its `maxItems` or `maxProperties` times.
pub(super) fn children_cardinality(node: &Json, cardinality: Cardinality) -> Cardinality {
    let bound = |keyword: &str| node[keyword].as_i64().map(|n| n.max(0) as u64);
    let times = match node["type"].as_str() {
        Some("array") => bound("maxItems"),
        // (`additionalProperties: false` is trainc's strict schemas' own,
        // never a CRD's.)
        Some("object")
            if node["additionalProperties"].is_object()
                || node["additionalProperties"] == Json::Bool(true) =>
        {
            bound("maxProperties")
        }
        _ => Some(1),
    };
    match (cardinality, times) {
        (Cardinality::AtMost(n), Some(m)) => Cardinality::AtMost(n.saturating_mul(m)),
        (Cardinality::NotEstimated, _) => Cardinality::NotEstimated,
        _ => Cardinality::Unbounded,
    }
}

/// A rule's estimated costs held against the limits, as the server holds
/// them at CRD creation (`validation.go`): the rule's times the most
/// times it may run, and its messageExpression's, each within
/// [`RULE_COST_LIMIT`], and both added to the CRD's total.
pub(super) fn rule_costs(
    rule: &Rule,
    at: &dyn Fn() -> String,
    cardinality: Cardinality,
    sizes: &Sizes<'_>,
    unusable: &mut Vec<Unusable>,
    total: &mut Total,
) {
    let times = match cardinality {
        Cardinality::AtMost(n) => n,
        Cardinality::Unbounded => sizes.max_cardinality(),
        Cardinality::NotEstimated => return,
    };
    // `multiplyWithOverflowGuard`: stopped at the largest.
    let rule_cost = rule.max_cost.map(|cost| cost.saturating_mul(times));
    for (cost, field, estimated) in [
        (rule_cost, "rule", "estimated rule cost"),
        (
            rule.message_max_cost,
            "messageExpression",
            "estimated messageExpression cost",
        ),
    ] {
        let Some(cost) = cost else { continue };
        total.sum = total.sum.saturating_add(cost);
        // Only a cost of 1% of the CRD's limit or more is ever reported
        // (and one past a rule's limit is): the words are made for those
        // alone, where a CRD may hold a hundred thousand cheap rules.
        if cost < CRD_COST_LIMIT / 100 {
            continue;
        }
        let source = compile::quoted(rule.source());
        let what = match field {
            "rule" => format!("the rule {source}"),
            _ => format!("the messageExpression of rule {source}"),
        };
        let pointer = format!("{}/{field}", at());
        if cost > RULE_COST_LIMIT {
            let words = cost_words(estimated, cost, RULE_COST_LIMIT);
            unusable.push(Unusable {
                pointer: pointer.clone(),
                message: format!("Forbidden: {words} ({what})"),
                why: Why::Cost,
            });
        }
        total.expensive.push((pointer, what, cost));
    }
}

impl Total {
    /// The server's refusal of a CRD whose rules together cost past its
    /// limit: each rule of 1% of it or more, most costly first, then the
    /// total at the schema.
    pub(super) fn refuse_past_limit(mut self, unusable: &mut Vec<Unusable>) {
        if self.sum <= CRD_COST_LIMIT {
            return;
        }
        self.expensive
            .sort_by_key(|(_, _, cost)| std::cmp::Reverse(*cost));
        for (pointer, what, _) in self.expensive {
            unusable.push(Unusable {
                pointer,
                message: format!("Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema ({what})"),
                why: Why::Cost,
            });
        }
        let words = cost_words(
            "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema",
            self.sum,
            CRD_COST_LIMIT,
        );
        unusable.push(Unusable {
            pointer: String::new(),
            message: format!("Forbidden: {words}"),
            why: Why::Cost,
        });
    }
}

/// The server's words for a cost past its limit (`getCostErrorMessage`).
fn cost_words(what: &str, cost: u64, limit: u64) -> String {
    let factor = cost as f64 / limit as f64;
    let factor = if factor > 100.0 {
        "more than 100x".to_owned()
    } else if factor < 1.5 {
        format!("{factor:.6}x")
    } else {
        format!("{factor:.1}x")
    };
    format!(
        "{what} exceeds budget by factor of {factor} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
    )
}
