//! What JobSet does when one of its jobs fails (kubernetes-sigs/jobset
//! v0.8.0–v0.12.0, `pkg/controllers/failure_policy.go`
//! `executeFailurePolicy`, `findFirstFailedPolicyRuleAndJob`,
//! `ruleIsApplicable` and the action appliers):
//!
//! - no `failurePolicy`: the first failed job fails the JobSet;
//! - else the first rule (in order) that applies to the failed job decides:
//!   its `onJobFailureReasons` hold the job's failure reason (or are empty),
//!   one of its `onJobFailureMessagePatterns` (v0.10 and later) matches the
//!   job's failure message (or there are none), and its
//!   `targetReplicatedJobs` hold the job's replicated job (or are empty);
//!   no rule applies: `RestartJobSet`;
//! - `FailJobSet` fails the JobSet; `RestartJobSet` deletes and recreates
//!   every job, unless the restarts that count have reached `maxRestarts`,
//!   when it fails the JobSet; `RestartJobSetAndIgnoreMaxRestarts` recreates
//!   every job without counting. `RestartJob` and
//!   `RestartJobAndIgnoreMaxRestarts` (v0.12, behind the `RestartJob`
//!   feature gate, off by default) recreate the failed job alone.
//!
//! A job's failure reason and message are the Job controller's (kubernetes
//! `pkg/controller/job/job_controller.go`, `pod_failure_policy.go`
//! `matchPodFailurePolicy`): a pod failure policy rule `FailJob` that
//! matches the container's exit code fails it with `PodFailurePolicy`,
//! "Container C for pod NS/P failed with exit code N matching FailJob rule
//! at index I"; failed pods past `backoffLimit` with
//! `BackoffLimitExceeded`, "Job has reached the specified backoff limit";
//! `activeDeadlineSeconds` with `DeadlineExceeded`, "Job was active longer
//! than specified deadline".

use serde_json::Value as Json;

/// A JobSet's `failurePolicy`.
#[derive(Debug, Clone, PartialEq)]
pub struct FailurePolicy {
    pub max_restarts: u64,
    rules: Vec<Rule>,
}

#[derive(Debug, Clone, PartialEq)]
struct Rule {
    name: String,
    action: String,
    reasons: Vec<String>,
    patterns: Vec<Pattern>,
    targets: Vec<String>,
}

/// One of a rule's `onJobFailureMessagePatterns`, compiled the first time
/// a failure is matched against it and kept: a pattern that does not
/// compile (or whose program would pass [`MAX_PATTERN_BYTES`]) is
/// remembered as matching nothing, as JobSet logs and skips a pattern
/// `regexp` refuses, instead of being compiled again at every failure.
#[derive(Debug, Clone)]
struct Pattern {
    written: String,
    compiled: std::sync::OnceLock<Option<regex::Regex>>,
}

impl PartialEq for Pattern {
    fn eq(&self, other: &Pattern) -> bool {
        self.written == other.written
    }
}

/// The most a pattern's compiled program may take: a real message pattern
/// (`exit code 137`, `.*OOMKilled.*`) takes a few kilobytes, and one of
/// repetitions written to take gigabytes is refused in a millisecond or two.
const MAX_PATTERN_BYTES: usize = 256 * 1024;

impl Pattern {
    fn new(written: String) -> Pattern {
        Pattern {
            written,
            compiled: std::sync::OnceLock::new(),
        }
    }

    fn is_match(&self, message: &str) -> bool {
        let compiled = self.compiled.get_or_init(|| {
            regex::RegexBuilder::new(&self.written)
                .size_limit(MAX_PATTERN_BYTES)
                .dfa_size_limit(MAX_PATTERN_BYTES)
                .nest_limit(100)
                .build()
                .ok()
        });
        compiled.as_ref().is_some_and(|re| re.is_match(message))
    }
}

/// A JobSet's failure policy and its jobs, for `trainc run`.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    pub policy: FailurePolicy,
    /// Each replicated job's name and Job spec.
    jobs: Vec<(String, Json)>,
}

impl Group {
    /// The group of a JobSet (defaulted) with a failure policy.
    pub fn of(spec: &Json) -> Option<Group> {
        let policy = FailurePolicy::of(spec)?;
        let jobs = spec["replicatedJobs"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|rjob| {
                let name = rjob["name"].as_str().unwrap_or_default().to_owned();
                (name, rjob["template"]["spec"].clone())
            })
            .collect();
        Some(Group { policy, jobs })
    }

    /// How the Job of `pod` fails when its container `container` exits
    /// with `code` ([`job_failure`]).
    pub fn failure(
        &self,
        pod: &crate::cluster::Pod,
        container: &str,
        code: Option<i32>,
    ) -> JobFailure {
        let rjob = pod.labels[super::LABEL_REPLICATED_JOB]
            .as_str()
            .unwrap_or_default();
        let spec = self
            .jobs
            .iter()
            .find(|(name, _)| name == rjob)
            .map_or(&Json::Null, |(_, spec)| spec);
        job_failure(spec, rjob, (&pod.namespace, &pod.name), container, code)
    }
}

/// How a job failed: its replicated job, and its Job's failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobFailure {
    pub replicated_job: String,
    /// The Job's `Failed` condition: its reason and message.
    pub reason: &'static str,
    pub message: String,
}

/// What JobSet does after a job failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The JobSet fails, for the reason given.
    Fail(String),
    /// Every job is deleted and made again; `counted`: the restart counts
    /// towards `maxRestarts`. The words say why.
    Restart { counted: bool, why: String },
}

impl FailurePolicy {
    /// The JobSet's failure policy (defaulted: [`super::defaulted`] names
    /// its rules); `None` without one.
    pub fn of(spec: &Json) -> Option<FailurePolicy> {
        let policy = spec.get("failurePolicy").filter(|p| p.is_object())?;
        let strings = |rule: &Json, key: &str| -> Vec<String> {
            rule[key]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Json::as_str)
                .map(str::to_owned)
                .collect()
        };
        let rules = policy["rules"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|rule| Rule {
                name: rule["name"].as_str().unwrap_or_default().to_owned(),
                action: rule["action"].as_str().unwrap_or_default().to_owned(),
                reasons: strings(rule, "onJobFailureReasons"),
                patterns: strings(rule, "onJobFailureMessagePatterns")
                    .into_iter()
                    .map(Pattern::new)
                    .collect(),
                targets: strings(rule, "targetReplicatedJobs"),
            })
            .collect();
        Some(FailurePolicy {
            max_restarts: policy["maxRestarts"].as_u64().unwrap_or(0),
            rules,
        })
    }

    /// What JobSet does after `failure`, `counted` restarts that count
    /// towards `maxRestarts` made already; `None` when `deadline` passes
    /// while the rules are matched (thousands of patterns take seconds).
    pub fn decide(
        &self,
        failure: &JobFailure,
        counted: u64,
        deadline: Option<std::time::Instant>,
    ) -> Option<Verdict> {
        let mut rule = None;
        for candidate in &self.rules {
            if candidate.applies(failure, deadline)? {
                rule = Some(candidate);
                break;
            }
        }
        Some(self.verdict(rule, failure, counted))
    }

    fn verdict(&self, rule: Option<&Rule>, failure: &JobFailure, counted: u64) -> Verdict {
        let by = match rule {
            Some(rule) => format!(
                "failure policy rule `{}` matches the Job's failure ({}): {}",
                rule.name, failure.reason, rule.action
            ),
            None if self.rules.is_empty() => "the failure policy: RestartJobSet".to_owned(),
            None => format!(
                "no failure policy rule matches the Job's failure ({}), so RestartJobSet",
                failure.reason
            ),
        };
        match rule.map_or("RestartJobSet", |r| r.action.as_str()) {
            "FailJobSet" => Verdict::Fail(by),
            "RestartJobSetAndIgnoreMaxRestarts" | "RestartJobAndIgnoreMaxRestarts" => {
                Verdict::Restart {
                    counted: false,
                    why: format!("{by}, a restart that does not count towards maxRestarts"),
                }
            }
            _ if counted >= self.max_restarts => Verdict::Fail(format!(
                "{by}, but failurePolicy.maxRestarts ({}) is reached",
                self.max_restarts
            )),
            _ => Verdict::Restart {
                counted: true,
                why: format!(
                    "{by}, restart {} of {} (failurePolicy.maxRestarts)",
                    counted + 1,
                    self.max_restarts
                ),
            },
        }
    }

    /// What of the policy `trainc run` does otherwise than JobSet: a
    /// `RestartJob` action recreates the failed job alone there, every pod
    /// here (the others' rendezvous has closed in any case).
    pub fn notes(&self) -> Vec<String> {
        self.rules
            .iter()
            .filter(|rule| rule.action.starts_with("RestartJob") && !rule.action.starts_with("RestartJobSet"))
            .map(|rule| format!("failure policy rule `{}` ({}) recreates the failed job alone on the cluster; trainc run makes every pod again", rule.name, rule.action))
            .collect()
    }
}

impl Rule {
    /// Whether the rule applies to `failure`; `None` when `deadline`
    /// passes before its patterns are matched.
    fn applies(&self, failure: &JobFailure, deadline: Option<std::time::Instant>) -> Option<bool> {
        let listed =
            |list: &[String], value: &str| list.is_empty() || list.iter().any(|v| v == value);
        if !listed(&self.reasons, failure.reason) || !listed(&self.targets, &failure.replicated_job)
        {
            return Some(false);
        }
        if self.patterns.is_empty() {
            return Some(true);
        }
        // An invalid pattern matches nothing, as JobSet logs and skips it.
        for pattern in &self.patterns {
            if deadline.is_some_and(|d| std::time::Instant::now() >= d) {
                return None;
            }
            if pattern.is_match(&failure.message) {
                return Some(true);
            }
        }
        Some(false)
    }
}

/// How the Job controller fails the Job `job_spec` of a pod `namespace/pod`
/// whose container `container` exited with `code`: by its pod failure
/// policy's first rule that matches (`FailJob`: `PodFailurePolicy`), else
/// by its backoff limit (`trainc run` makes no second attempt of a pod).
fn job_failure(
    job_spec: &Json,
    replicated_job: &str,
    pod: (&str, &str),
    container: &str,
    code: Option<i32>,
) -> JobFailure {
    let rules = job_spec["podFailurePolicy"]["rules"].as_array();
    let matched = code.and_then(|code| {
        rules.into_iter().flatten().enumerate().find(|(_, rule)| {
            let on = &rule["onExitCodes"];
            let named = on["containerName"]
                .as_str()
                .is_none_or(|name| name == container);
            let listed = on["values"]
                .as_array()
                .is_some_and(|values| values.iter().any(|v| v.as_i64() == Some(i64::from(code))));
            named
                && match on["operator"].as_str() {
                    Some("In") => listed,
                    Some("NotIn") => !listed,
                    _ => false,
                }
        })
    });
    match (matched, code) {
        (Some((index, rule)), Some(code)) if rule["action"] == "FailJob" => JobFailure {
            replicated_job: replicated_job.to_owned(),
            reason: "PodFailurePolicy",
            message: format!(
                "Container {container} for pod {}/{} failed with exit code {code} matching FailJob rule at index {index}",
                pod.0, pod.1
            ),
        },
        _ => JobFailure {
            replicated_job: replicated_job.to_owned(),
            reason: "BackoffLimitExceeded",
            message: "Job has reached the specified backoff limit".to_owned(),
        },
    }
}
