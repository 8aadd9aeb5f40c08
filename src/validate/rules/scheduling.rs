//! Rules on scheduling, ports and the run policy's durations.

use super::metadata::label_map;
use super::{Rules, at};
use crate::cluster::{job, pytorchjob, trainjob};
use crate::diagnostic::{Diagnostic, codes};
use crate::spec::{Duration, RestartPolicy, TaintEffect, Target, TolerationOperator};
use crate::syntax::{duration, names};

pub(super) fn check(r: &mut Rules<'_>) {
    scheduling(r);
    ports(r);
    policy(r);
}

fn scheduling(r: &mut Rules<'_>) {
    let Some(s) = &r.spec.scheduling else { return };
    let subdomains = [
        ("priorityClassName", &s.priority_class_name),
        ("schedulerName", &s.scheduler_name),
        ("serviceAccountName", &s.service_account_name),
    ];
    for (key, value) in subdomains {
        if let Some(value) = value
            && let Err(bad) = names::Syntax::Dns1123Subdomain.check(value)
        {
            r.push(super::name_error(
                codes::SCHEDULING_INVALID_NAME,
                r.value(&format!("/scheduling/{key}")),
                format!(
                    "`scheduling.{key}` `{value}` is not a valid name: {}",
                    bad.why
                ),
                &bad,
            ));
        }
    }
    // Kueue's LocalQueue and WorkloadPriorityClass are named in labels on the
    // job: each is an object name that must also be a label value.
    for (key, value, what) in [
        ("queue", &s.queue, "LocalQueue"),
        (
            "workloadPriorityClass",
            &s.workload_priority_class,
            "WorkloadPriorityClass",
        ),
    ] {
        if let Some(value) = value
            && let Err(bad) = names::Syntax::Dns1123Label.check(value)
        {
            let mut d = Diagnostic::error(
                codes::SCHEDULING_INVALID_NAME,
                r.value(&format!("/scheduling/{key}")),
                format!(
                    "`scheduling.{key}` `{value}` is not a valid {what} name: {}",
                    bad.why
                ),
            );
            d = match bad.better {
                Some(better) => d.with_help(format!(
                    "the name becomes a label value (lowercase letters, digits and `-`, at most 63): try `{better}`"
                )),
                None => d.with_help(
                    "the name becomes a label value: lowercase letters, digits and `-`, at most 63",
                ),
            };
            r.push(d);
        }
    }
    volcano_queue(r);
    for (i, secret) in s.image_pull_secrets.iter().flatten().enumerate() {
        if let Err(bad) = names::Syntax::Dns1123Subdomain.check(secret) {
            r.push(super::name_error(
                codes::SCHEDULING_INVALID_NAME,
                r.value(&format!("/scheduling/imagePullSecrets/{i}")),
                format!("`{secret}` is not a valid Secret name: {}", bad.why),
                &bad,
            ));
        }
    }
    if let Some(selector) = &s.node_selector {
        label_map(r, "/scheduling/nodeSelector", selector, "nodeSelector");
    }
    if let Some(key) = &s.exclusive_topology
        && let Err(why) = names::qualified_name(key)
    {
        r.push(
            Diagnostic::error(
                codes::SCHEDULING_INVALID_NAME,
                r.value("/scheduling/exclusiveTopology"),
                format!("`{key}` is not a node label key: {why}"),
            )
            .with_help("a topology is a node label whose values are its domains, e.g. `cloud.google.com/gke-nodepool` or `topology.kubernetes.io/zone`"),
        );
    }
    tolerations(r);
}

/// Each toleration's key, operator, value and effect.
fn tolerations(r: &mut Rules<'_>) {
    let Some(s) = &r.spec.scheduling else { return };
    for (i, t) in s.tolerations.iter().flatten().enumerate() {
        let pointer = format!("/scheduling/tolerations/{i}");
        let exists = t.operator == Some(TolerationOperator::Exists);
        let problem = if exists && t.value.as_deref().is_some_and(|v| !v.is_empty()) {
            Some((
                "value",
                "a toleration with `operator = \"Exists\"` matches any value; `value` must be empty",
                "remove `value`, or use `operator = \"Equal\"`",
            ))
        } else if !exists && t.key.as_deref().is_none_or(str::is_empty) {
            Some((
                "key",
                "a toleration without `key` must use `operator = \"Exists\"`",
                "add `key`, or set `operator = \"Exists\"` to tolerate every taint",
            ))
        } else if t.toleration_seconds.is_some() && t.effect != Some(TaintEffect::NoExecute) {
            Some((
                "tolerationSeconds",
                "`tolerationSeconds` applies only to `effect = \"NoExecute\"`",
                "remove `tolerationSeconds`, or set `effect = \"NoExecute\"`",
            ))
        } else {
            None
        };
        if let Some((key, message, help)) = problem {
            let span = if r.tree_has(&at(&pointer, key)) {
                r.key(&at(&pointer, key))
            } else {
                r.value(&pointer)
            };
            r.push(
                Diagnostic::error(codes::SCHEDULING_TOLERATION, span, message.to_owned())
                    .with_help(help),
            );
        }
        if let Some(key) = t.key.as_deref().filter(|k| !k.is_empty())
            && let Err(why) = names::qualified_name(key)
        {
            r.push(Diagnostic::error(
                codes::SCHEDULING_TOLERATION,
                r.value(&at(&pointer, "key")),
                format!("toleration key `{key}` is invalid: {why}"),
            ));
        }
        // The API server checks a toleration's value as a label value
        // (kubernetes/kubernetes v1.33.0, pkg/apis/core/validation/
        // validation.go `validateTolerations`: `IsValidLabelValue`).
        if let Some(value) = t.value.as_deref().filter(|v| !v.is_empty())
            && let Err(why) = names::label_value(value)
        {
            r.push(
                Diagnostic::error(
                    codes::SCHEDULING_TOLERATION,
                    r.value(&at(&pointer, "value")),
                    format!(
                        "toleration value `{}` is invalid: {why}",
                        crate::diagnostic::escape_for_terminal(value)
                    ),
                )
                .with_help("a toleration's value is a label value: at most 63 letters, digits, `-`, `_` and `.`, starting and ending with a letter or digit"),
            );
        }
    }
}

/// A Volcano Queue is a cluster-scoped object; the Training Operator hands it
/// to Volcano through the PodGroup, and Volcano schedules only pods whose
/// `schedulerName` is `volcano` (the operator sets it on pods with none).
fn volcano_queue(r: &mut Rules<'_>) {
    let Some(s) = &r.spec.scheduling else { return };
    let Some(queue) = &s.volcano_queue else {
        return;
    };
    if let Err(bad) = names::Syntax::Dns1123Subdomain.check(queue) {
        r.push(super::name_error(
            codes::SCHEDULING_INVALID_NAME,
            r.value("/scheduling/volcanoQueue"),
            format!(
                "`scheduling.volcanoQueue` `{queue}` is not a valid Volcano Queue name: {}",
                bad.why
            ),
            &bad,
        ));
    }
    if let Some(scheduler) = s.scheduler_name.as_deref().filter(|n| *n != "volcano") {
        r.push(
            Diagnostic::warning(
                codes::SCHEDULING_VOLCANO_QUEUE,
                r.value("/scheduling/volcanoQueue"),
                format!("a Volcano queue has no effect on pods scheduled by `{scheduler}`"),
            )
            .with_secondary(r.value("/scheduling/schedulerName"), "not Volcano")
            .with_help("set `schedulerName = \"volcano\"`, or remove `volcanoQueue`"),
        );
    }
}

fn ports(r: &mut Rules<'_>) {
    let Some(ports) = &r.spec.ports else { return };
    let (reserved_port, reserved_name, owner) = match r.target() {
        Target::Pytorchjob => (
            pytorchjob::PORT,
            pytorchjob::PORT_NAME,
            "the Training Operator's rendezvous port",
        ),
        Target::Job | Target::Jobset => (
            crate::spec::defaults::JOB_RENDEZVOUS_PORT,
            job::PORT_NAME,
            "the rendezvous port at pod 0 (torchrun's `--master_port`)",
        ),
        // The runtime declares its port without a name.
        Target::Trainjob => (
            trainjob::TRAINER_PORT,
            "",
            "the Trainer torch runtime's rendezvous port (`PET_MASTER_PORT`)",
        ),
    };
    // The first name each number was exposed under.
    let mut seen: std::collections::HashMap<u16, &str> = std::collections::HashMap::new();
    for (name, port) in ports {
        let pointer = at("/ports", name);
        if let Err(why) = names::port_name(name) {
            r.push(
                Diagnostic::error(codes::PORT_INVALID, r.key(&pointer), format!("port name `{name}` is invalid: {why}"))
                    .with_help("port names are at most 15 lowercase letters, digits and `-`, e.g. `tensorboard`"),
            );
        }
        if *port == 0 {
            r.push(
                Diagnostic::error(
                    codes::PORT_INVALID,
                    r.value(&pointer),
                    format!("port `{name}` must be between 1 and 65535, found 0"),
                )
                .with_help("give the port the container listens on, e.g. `6006` for TensorBoard"),
            );
        }
        if *port == reserved_port || name == reserved_name {
            let message = if *port == reserved_port {
                format!("port {reserved_port} (`{name}`) is {owner}")
            } else {
                format!("the port name `{name}` is taken by {owner}")
            };
            r.push(
                Diagnostic::error(codes::PORT_RESERVED, r.entry(&pointer), message)
                    .with_help("choose another port number and name"),
            );
        }
        if let Some(first) = seen.get(port) {
            r.push(
                Diagnostic::error(
                    codes::PORT_DUPLICATE,
                    r.value(&pointer),
                    format!("port {port} is exposed twice, as `{first}` and `{name}`"),
                )
                .with_secondary(r.value(&at("/ports", first)), format!("`{first}`"))
                .with_help("each port number once"),
            );
        } else {
            seen.insert(*port, name);
        }
    }
}

/// `restartPolicy = "Always"` on a PyTorchJob's pods (at `at`).
pub(super) fn restart_always(r: &mut Rules<'_>, at: &str) {
    r.push(
        Diagnostic::warning(
            codes::POLICY_RESTART_ALWAYS,
            r.value(at),
            "`restartPolicy = \"Always\"` restarts pods that finished successfully too: the Master never completes, the job never succeeds, and training runs again",
        )
        .with_help("use `OnFailure` to restart failed pods, or `ExitCode` to restart only on retryable exit codes (128 to 255)"),
    );
}

/// With `restartPolicy = "Never"`, a Worker whose `init-pytorch` container
/// gives up on the Master ([`pytorchjob::MASTER_LOOKUPS`]) fails, and a
/// failed replica under `Never` fails the job (kubeflow/trainer
/// v1.7.0–v1.9.4, `pytorchjob_controller.go` `UpdateJobStatus`). Under
/// `OnFailure` the kubelet retries the init container until the Master is up.
fn master_wait(r: &mut Rules<'_>) {
    let never = r.spec.policy.as_ref().and_then(|p| p.restart_policy) == Some(RestartPolicy::Never);
    if !never || r.target() != Target::Pytorchjob || r.is_elastic() || r.max_replicas() < 2 {
        return;
    }
    let seconds = pytorchjob::MASTER_LOOKUPS * pytorchjob::MASTER_LOOKUP_INTERVAL_SECONDS;
    r.push(
        Diagnostic::warning(
            codes::POLICY_MASTER_WAIT,
            r.value("/policy/restartPolicy"),
            format!(
                "with `restartPolicy = \"Never\"` the job fails when its Master is not Ready within about {seconds} s: the Training Operator gives every Worker an init container that looks the Master up {} times, {} s apart, and the Master's name resolves only once it is Ready (a large image pulled on a new node, or a Master waiting for a GPU, takes longer)",
                pytorchjob::MASTER_LOOKUPS,
                pytorchjob::MASTER_LOOKUP_INTERVAL_SECONDS,
            ),
        )
        .with_help("use `restartPolicy = \"OnFailure\"` (or `\"ExitCode\"`): the kubelet then retries the init container until the Master is up, and `policy.joinTimeout` bounds the wait; keep `Never` only where the Master is sure to be Ready within minutes"),
    );
}

fn policy(r: &mut Rules<'_>) {
    let Some(policy) = &r.spec.policy else { return };
    join_timeout(r);
    // The Training Operator copies the replica's restartPolicy to its pods
    // (kubeflow/trainer v1.9.4, pkg/core/pod.go `SetRestartPolicy`), and with
    // `Always` the kubelet restarts a container that exited 0 as well.
    if policy.restart_policy == Some(RestartPolicy::Always) && r.target() == Target::Pytorchjob {
        restart_always(r, "/policy/restartPolicy");
    }
    // The operator counts restarts of running containers against backoffLimit
    // only under OnFailure, Always or ExitCode (v1.9.4, pkg/core/job.go
    // `PastBackoffLimit`); under Never a failed pod is not restarted at all.
    if policy.restart_policy == Some(RestartPolicy::Never)
        && policy.backoff_limit.is_some()
        && r.target() == Target::Pytorchjob
    {
        r.push(
            Diagnostic::warning(
                codes::POLICY_BACKOFF_WITHOUT_RESTARTS,
                r.value("/policy/backoffLimit"),
                "`backoffLimit` has no effect with `restartPolicy = \"Never\"`: no pod is restarted, so the first failure fails the job",
            )
            .with_secondary(r.value("/policy/restartPolicy"), "no restarts")
            .with_help("for retries, use `restartPolicy = \"OnFailure\"` or `\"ExitCode\"`; otherwise remove `backoffLimit`"),
        );
    }
    master_wait(r);
    // runPolicy.ttlSecondsAfterFinished is an int32 and activeDeadlineSeconds an
    // int64, in the PyTorchJob CRD (kubeflow/trainer v1.9.4,
    // manifests/base/crds/kubeflow.org_pytorchjobs.yaml) as in the TrainJob's
    // (v2.3.0, trainer.kubeflow.org_trainjobs.yaml). The deadline is tighter
    // than its type: every controller multiplies it by `time.Second`, an
    // int64 of nanoseconds, which wraps negative above 9,223,372,036 s and
    // fails the job at once (kubeflow/trainer v1.7.0–v1.9.4 pkg/core/job.go
    // `PastActiveDeadline`; v2.2.0–v2.3.0 pkg/controller/
    // trainjob_controller.go `reconcileDeadline`; kubernetes/kubernetes
    // pkg/controller/job/job_controller.go `pastActiveDeadline`).
    for (key, value, positive, limit) in [
        (
            "ttlAfterFinished",
            &policy.ttl_after_finished,
            false,
            u64::from(i32::MAX.unsigned_abs()),
        ),
        (
            "activeDeadline",
            &policy.active_deadline,
            true,
            MAX_DEADLINE_SECONDS,
        ),
        // torchrun turns it into a `timedelta` and the store's milliseconds.
        (
            "joinTimeout",
            &policy.join_timeout,
            true,
            MAX_DEADLINE_SECONDS,
        ),
    ] {
        let pointer = format!("/policy/{key}");
        let seconds = match value {
            None => continue,
            Some(Duration::Seconds(s)) => Ok(*s),
            Some(Duration::Text(text)) => duration::parse_seconds(text),
        };
        match seconds {
            Err(why) => r.push(
                Diagnostic::error(
                    codes::DURATION_INVALID,
                    r.value(&pointer),
                    format!("`policy.{key}` is not a duration: {why}"),
                )
                .with_help(duration::HELP),
            ),
            Ok(0) if positive => r.push(
                Diagnostic::error(
                    codes::DURATION_INVALID,
                    r.value(&pointer),
                    format!("`policy.{key}` must be longer than zero"),
                )
                .with_help(if key == "joinTimeout" {
                    "remove it for the default (30m on target `job`, torchrun's 10m elsewhere)"
                } else {
                    "remove it for no deadline"
                }),
            ),
            Ok(s) if s > limit => {
                r.push(
                    Diagnostic::error(
                        codes::DURATION_INVALID,
                        r.value(&pointer),
                        format!(
                            "`policy.{key}` is {s} seconds; the limit is {limit} seconds ({})",
                            duration::approximate(limit)
                        ),
                    )
                    .with_help(format!(
                        "write at most {limit} seconds, or remove `policy.{key}`"
                    )),
                );
            }
            Ok(_) => {}
        }
    }
}

/// `policy.joinTimeout` is the timeout of the static rendezvous of a torchrun
/// that trainc launches (see `resolve::join_timeout`).
fn join_timeout(r: &mut Rules<'_>) {
    if !r.tree_has("/policy/joinTimeout") {
        return;
    }
    let (why, help) = if r.is_elastic() {
        (
            "an elastic job's pods meet at a c10d rendezvous, which waits for `min` pods by its own `join_timeout`",
            "set `elastic.rdzvConf = { join_timeout = \"1800\" }` (seconds) instead",
        )
    } else if r.spec.runs_as_written() {
        (
            "a `command` runs as written: trainc launches no torchrun to give it to",
            "pass `--rdzv_conf=timeout=SECONDS` to the torchrun in your command, or use `script` or `module`",
        )
    } else {
        return;
    };
    r.push(
        Diagnostic::error(
            codes::POLICY_JOIN_TIMEOUT,
            r.key("/policy/joinTimeout"),
            format!("`policy.joinTimeout` has no effect here: {why}"),
        )
        .with_help(help),
    );
}

/// The longest deadline a Go `time.Duration` holds, in whole seconds.
const MAX_DEADLINE_SECONDS: u64 = i64::MAX.unsigned_abs() / 1_000_000_000;
