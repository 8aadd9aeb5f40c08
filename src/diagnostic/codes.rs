//! Every diagnostic code trainc can emit, in one list.
//!
//! Codes are part of the interface (`--format json`, editor integrations): they
//! never change meaning. The integration tests check that each code in [`ALL`]
//! is produced by at least one test case.

macro_rules! codes {
    ($($(#[$doc:meta])* $name:ident = $code:literal $what:literal;)*) => {
        $($(#[$doc])* #[doc = $what] pub const $name: &str = $code;)*
        /// All codes, in declaration order.
        pub const ALL: &[&str] = &[$($code),*];
        /// What each code reports, one sentence (SARIF rule descriptions).
        pub const DESCRIPTIONS: &[(&str, &str)] = &[$(($code, $what)),*];
    };
}

/// What `code` reports, in one sentence.
pub fn describe(code: &str) -> &'static str {
    DESCRIPTIONS
        .iter()
        .find(|(c, _)| *c == code)
        .map_or("", |(_, what)| what)
}

codes! {
    // read
    SOURCE_TOO_LARGE = "trainc::source::too_large"
        "The file is larger than trainc reads.";
    SOURCE_NOT_UTF8 = "trainc::source::not_utf8"
        "The file is not UTF-8 text.";
    SOURCE_UNREADABLE = "trainc::source::unreadable"
        "The file cannot be read (missing, a directory, or no permission).";
    // parse
    PARSE_TOML = "trainc::parse::toml"
        "The file is not valid TOML.";
    PARSE_YAML = "trainc::parse::yaml"
        "The file is not valid YAML, holds more than one document, or exceeds the YAML limits.";
    PARSE_EMPTY = "trainc::parse::empty"
        "A spec with nothing in it (an empty file, or an empty standard input when the command before the pipe failed).";
    PARSE_TOO_DEEP = "trainc::parse::too_deep"
        "The document nests deeper than trainc accepts.";
    PARSE_NOT_A_TABLE = "trainc::parse::not_a_table"
        "The document is not a table (mapping) of keys.";
    PARSE_OTHER_FORMAT = "trainc::parse::other_format"
        "The file is written in the other format than its name says: TOML in a `.yaml` file, or YAML in a `.toml` file.";
    PARSE_UNSUPPORTED_VALUE = "trainc::parse::unsupported_value"
        "A value of a kind a spec cannot hold (a date, a non-finite number, a YAML tag).";
    KRM_API_VERSION = "trainc::krm::api_version"
        "A TrainSpec with an apiVersion other than trainc.dev/v1alpha1.";
    KRM_KIND = "trainc::krm::kind"
        "A KRM document whose kind is not TrainSpec.";
    KRM_NAME_CONFLICT = "trainc::krm::name_conflict"
        "A TrainSpec whose `spec.name` or `spec.namespace` differs from its `metadata`, which names the job.";
    KRM_METADATA_CONFLICT = "trainc::krm::metadata_conflict"
        "A label or annotation given two values, in a TrainSpec's `metadata` and in its `spec`.";
    KRM_LOCAL_CONFIG = "trainc::krm::local_config"
        "A TrainSpec in a package without the local-config annotation, so it would be applied to the cluster.";
    KRM_EXEC_FUNCTION = "trainc::krm::exec_function"
        "A TrainSpec annotated as an exec function, which kubectl kustomize skips without a word.";
    // compose and templates
    OVERLAY_UNSET = "trainc::overlay::unset"
        "An overlay's `unset` names a key that is not there or cannot be removed.";
    CONVERT_LEFT_OUT = "trainc::convert::left_out"
        "`trainc convert` leaves out what the target form has no place for (a spec's `null` in TOML, a TrainSpec's `status`).";
    CONVERT_NO_FORM = "trainc::convert::no_form"
        "What a document says has no form in the target (an overlay's `name` as a kustomize patch); nothing is written.";
    OVERLAY_AS_SPEC = "trainc::overlay::as_spec"
        "An overlay given where the spec goes, or a spec and its overlay given the other way round.";
    OVERLAY_UNSET_NOTHING = "trainc::overlay::unset_nothing"
        "An overlay's `unset` entry names a field the spec under it does not set: it removes nothing.";
    OVERLAY_EMPTY_VARIABLE = "trainc::overlay::empty_variable"
        "An overlay sets a variable of the spec to the empty string, which does not remove it.";
    OVERLAY_LIST_REPLACED = "trainc::overlay::list_replaced"
        "An overlay's list replaces the spec's and drops some of its entries.";
    TEMPLATE_UNDEFINED = "trainc::template::undefined"
        "A template uses a variable that is neither in `[vars]` nor given with --set.";
    TEMPLATE_FUEL = "trainc::template::fuel"
        "A template does more work, or makes a longer value, than trainc allows.";
    TEMPLATE_UNSUPPORTED = "trainc::template::unsupported"
        "A template uses a construct spec templates leave out (`set`, `filter` blocks, string repetition, very long expressions).";
    TEMPLATE_SYNTAX = "trainc::template::syntax"
        "A template does not parse.";
    TEMPLATE_ERROR = "trainc::template::error"
        "A template fails while rendering, or renders a value of the wrong type.";
    TEMPLATE_SINGLE_BRACES = "trainc::template::single_braces"
        "`{ name }` naming a template variable: trainc's templates are written `{{ name }}`.";
    TEMPLATE_UNUSED_SET = "trainc::template::unused_set"
        "A --set variable that no template uses.";
    TEXT_CONTROL = "trainc::text::control"
        "A value holds a NUL or another control character that the container runtime or Kubernetes would reject or misread.";
    // validate, JSON Schema pass
    SCHEMA_UNKNOWN_KEY = "trainc::schema::unknown_key"
        "A key the spec language does not have (often a misspelling).";
    SCHEMA_MISSING_KEY = "trainc::schema::missing_key"
        "A required key is missing.";
    SCHEMA_TYPE = "trainc::schema::type"
        "A value of the wrong type (a string where a number belongs, ...).";
    SCHEMA_ENUM = "trainc::schema::enum"
        "A value that is not one of the allowed values.";
    SCHEMA_RANGE = "trainc::schema::range"
        "A number or list outside its allowed range or length.";
    SCHEMA_OTHER = "trainc::schema::other"
        "A value the spec's schema rejects for another reason.";
    // validate, semantic rules
    NAME_INVALID = "trainc::name::invalid"
        "The job's name is not a DNS-1035 label.";
    NAME_TOO_LONG = "trainc::name::too_long"
        "The job's name is too long once the operator adds its suffixes to pod and Service names.";
    NAMESPACE_INVALID = "trainc::namespace::invalid"
        "The namespace is not a DNS-1123 label.";
    ENTRYPOINT_MISSING = "trainc::entrypoint::missing"
        "The spec says neither `script`, `module` nor `command`.";
    ENTRYPOINT_CONFLICT = "trainc::entrypoint::conflict"
        "More than one of `script`, `module` and `command`.";
    ENTRYPOINT_EMPTY = "trainc::entrypoint::empty"
        "An empty `script`, `module` or `command`.";
    ENTRYPOINT_MODULE = "trainc::entrypoint::module"
        "A `module` that is a file's path, not a Python module's dotted name.";
    CODE_FILE = "trainc::code::file"
        "A `[code]` file that cannot be read or named.";
    CODE_TOO_LARGE = "trainc::code::too_large"
        "`[code]` files larger than a ConfigMap holds.";
    CODE_INVALID = "trainc::code::invalid"
        "A `[code]` setting that cannot work (a mount path, a key, an entrypoint outside the code).";
    RESOURCE_EXTENDED = "trainc::resources::extended"
        "An extended resource with an invalid name or amount.";
    SECURITY_CONTEXT = "trainc::security_context::invalid"
        "A `[securityContext]` setting that is invalid or conflicts with the job.";
    ENV_FROM = "trainc::env_from::invalid"
        "An `envFrom` entry that is invalid.";
    DNS_POLICY = "trainc::network::dns_policy"
        "A DNS policy that does not fit the pod's network settings.";
    TRAINJOB_INITIALIZER = "trainc::trainjob::initializer"
        "A `[trainjob.initializer]` setting the target or API level cannot express.";
    POD_TEMPLATE = "trainc::pod_template::conflict"
        "A `[podTemplate]` entry that conflicts with what trainc generates.";
    POD_TEMPLATE_SIDECAR = "trainc::pod_template::sidecar"
        "A container beside the training container in `podTemplate.spec.containers`: the pod completes only when it exits too.";
    POD_TEMPLATE_INVALID = "trainc::pod_template::invalid"
        "A `[podTemplate]` name or path the API server rejects: a volume or container name, an empty or repeated mount path, a `subPath` that leaves its volume, a hostname, an item path.";
    ARGS_WITHOUT_ENTRYPOINT = "trainc::args::no_entrypoint"
        "`args` without an entrypoint to pass them to.";
    WORKING_DIR_RELATIVE = "trainc::working_dir::relative"
        "A `workingDir` that is not an absolute path.";
    REPLICAS_SYNTAX = "trainc::replicas::syntax"
        "`replicas` that is neither a number nor a `min:max` range.";
    REPLICAS_RANGE = "trainc::replicas::range"
        "`replicas` out of range, or a range whose minimum exceeds its maximum.";
    ELASTIC_NOT_ELASTIC = "trainc::elastic::not_elastic"
        "An elastic setting on a job whose replicas are fixed.";
    ELASTIC_RDZV_ENDPOINT = "trainc::elastic::rdzv_endpoint"
        "A rendezvous endpoint that an elastic job cannot use.";
    NPROC_GPU_WITHOUT_GPUS = "trainc::nproc::gpu_without_gpus"
        "`nProcPerNode = \"gpu\"` on pods that request no GPUs.";
    NPROC_EXCEEDS_GPUS = "trainc::nproc::exceeds_gpus"
        "More processes per node than GPUs per pod.";
    NPROC_IDLE_GPUS = "trainc::nproc::idle_gpus"
        "Fewer processes per node than GPUs per pod: some GPUs would sit idle.";
    NPROC_AUTO_ON_CPU = "trainc::nproc::auto_on_cpu"
        "`nProcPerNode = \"auto\"` on CPU pods, where it means one process per CPU core.";
    NPROC_TRAINER_CPU = "trainc::nproc::trainer_cpu"
        "A CPU TrainJob whose process count the Trainer would set from the CPU limit.";
    NPROC_ELASTIC_COMMAND = "trainc::nproc::elastic_command"
        "A process count that a `command` entrypoint on an elastic job cannot apply.";
    NPROC_UNSAID = "trainc::nproc::unsaid"
        "A job that starts its own processes on several GPUs, with no `nProcPerNode` to say how many.";
    QUANTITY_INVALID = "trainc::quantity::invalid"
        "A value that is not a Kubernetes quantity.";
    QUANTITY_NOT_POSITIVE = "trainc::quantity::not_positive"
        "A quantity that must be more than zero.";
    QUANTITY_SUSPICIOUS = "trainc::quantity::suspicious"
        "A quantity that is valid but almost certainly a mistake (`64m` of memory: 0.064 bytes, in which nothing runs).";
    LIMIT_WITHOUT_REQUEST = "trainc::resources::limit_without_request"
        "`[resources.limits]` leaves out a limit of a resource the spec does not request.";
    LIMIT_BELOW_REQUEST = "trainc::resources::limit_below_request"
        "A resource limit below its request.";
    SHM_EXCEEDS_MEMORY = "trainc::resources::shm_exceeds_memory"
        "A /dev/shm size larger than the pod's memory.";
    GPU_RESOURCE_INVALID = "trainc::resources::gpu_resource"
        "A GPU resource name that is not an extended resource name.";
    DURATION_INVALID = "trainc::duration::invalid"
        "A value that is not a duration (`90m`, `2h`, `1d`).";
    POLICY_RESTART_ALWAYS = "trainc::policy::restart_always"
        "`restartPolicy = \"Always\"`, which restarts finished training forever.";
    POLICY_JOIN_TIMEOUT = "trainc::policy::join_timeout"
        "A join timeout for a rendezvous trainc does not launch (an elastic job, a `command`).";
    POLICY_MASTER_WAIT = "trainc::policy::master_wait"
        "`restartPolicy = \"Never\"` on a PyTorchJob with Workers: a Master not Ready within the init container's lookups fails the job.";
    POLICY_BACKOFF_WITHOUT_RESTARTS = "trainc::policy::backoff_without_restarts"
        "A backoff limit on a job that never restarts pods.";
    ENV_INVALID_NAME = "trainc::env::invalid_name"
        "An environment variable name Kubernetes rejects.";
    ENV_NOT_PORTABLE = "trainc::env::not_portable"
        "An environment variable name Kubernetes accepts but a shell cannot read (`-` or `.` in it).";
    ENV_RESERVED = "trainc::env::reserved"
        "An environment variable the operator sets (it would be overwritten or rejected).";
    ENV_OVERWRITTEN = "trainc::env::overwritten"
        "An environment variable set twice; the later one wins.";
    ENV_RENDEZVOUS = "trainc::env::rendezvous"
        "An environment variable that changes the rendezvous the operator configures.";
    ENV_TOO_LONG = "trainc::env::too_long"
        "An `[env]` value whose `$(…)` references expand it past what Linux starts a program with (128 KiB for one variable, 2 MiB in all): the container cannot start.";
    ENV_NOT_EXPANDED = "trainc::env::not_expanded"
        "A `$(VAR)` in an env value that Kubernetes leaves as written: the variable is declared later, or not at all.";
    ENV_SECRET_ON_COMMAND_LINE = "trainc::env::secret_on_command_line"
        "A `$(VAR)` in `command` or `args` of a variable read from a Secret: the kubelet writes its value into the process's command line, which every user of the node can read.";
    ENV_UNSET_REFERENCE = "trainc::env::unset_reference"
        "A TrainJob's command line reads a variable nothing sets in its training container (`$(RANK)`, `$MASTER_ADDR` in a `sh -c` script): the kubelet leaves `$(RANK)` as written, the shell expands `$RANK` to nothing.";
    ENV_LITERAL_SECRET = "trainc::env::literal_secret"
        "A secret-looking value written literally instead of read from a Secret.";
    ENV_SOURCE = "trainc::env::source"
        "An environment variable with no value source, or more than one.";
    VOLUME_INVALID_NAME = "trainc::volumes::invalid_name"
        "A volume name that is not a DNS-1123 label.";
    VOLUME_NO_SOURCE = "trainc::volumes::no_source"
        "A volume with no source (`size`, `claim`, `secret`, `configMap`, ...).";
    VOLUME_MANY_SOURCES = "trainc::volumes::many_sources"
        "A volume with more than one source.";
    VOLUME_RELATIVE_MOUNT = "trainc::volumes::relative_mount"
        "A mount path that is not absolute.";
    VOLUME_HIDES_SCRIPT = "trainc::volumes::hides_script"
        "A volume mounted over the directory that holds `script`, which then comes from the volume, not the image.";
    VOLUME_DUPLICATE_MOUNT = "trainc::volumes::duplicate_mount"
        "Two volumes mounted at the same path.";
    VOLUME_SHM_CONFLICT = "trainc::volumes::shm_conflict"
        "A volume at /dev/shm while trainc also mounts shared memory there.";
    VOLUME_RWO_SHARED = "trainc::volumes::rwo_shared"
        "A ReadWriteOnce claim shared by pods that may run on different nodes.";
    VOLUME_READ_ONLY_NEW_CLAIM = "trainc::volumes::read_only_new_claim"
        "A new, empty claim mounted read-only.";
    VOLUME_RWX_DEFAULT_CLASS = "trainc::volumes::rwx_default_class"
        "A ReadWriteMany claim on the default storage class, which often cannot provide it.";
    VOLUME_OPTION_WITHOUT_SIZE = "trainc::volumes::option_without_size"
        "A claim option on a volume that trainc does not create.";
    VOLUME_INVALID_REFERENCE = "trainc::volumes::invalid_reference"
        "A claim, Secret or ConfigMap name that Kubernetes rejects.";
    METADATA_INVALID_KEY = "trainc::metadata::invalid_key"
        "A label or annotation key Kubernetes rejects.";
    METADATA_INVALID_VALUE = "trainc::metadata::invalid_value"
        "A label value Kubernetes rejects.";
    METADATA_RESERVED = "trainc::metadata::reserved"
        "A label or annotation that trainc or the operator sets.";
    METADATA_TOO_LARGE = "trainc::metadata::too_large"
        "Annotations larger than Kubernetes accepts.";
    IMAGE_INVALID = "trainc::image::invalid"
        "An image reference that is not valid.";
    IMAGE_UNPINNED = "trainc::image::unpinned"
        "An image without a tag or digest, or with `latest`.";
    WARNINGS_AS_ERRORS = "trainc::warnings::as_errors"
        "Warnings in a spec that says `warnings = \"error\"`, which makes them fail the check and the build.";
    WARNINGS_UNKNOWN_CODE = "trainc::warnings::unknown_code"
        "An `allowWarnings` entry that is not a code trainc emits.";
    TARGET_UNSUPPORTED = "trainc::target::unsupported"
        "A setting the chosen target or API level cannot express.";
    MASTER_ELASTIC = "trainc::master::elastic"
        "`[master]` on an elastic job, which has no Master.";
    MASTER_NPROC = "trainc::master::nproc"
        "A Master with its own process count on a job that starts its own processes, which every pod is told alike.";
    MASTER_ALONE = "trainc::master::alone"
        "`[master]` on a job of one pod: the Master alone, which the spec's own settings for the Workers do not reach.";
    MASTER_GPUS = "trainc::master::gpus"
        "A Master without GPUs in a GPU job under torchrun, or with GPUs where the Workers have none.";
    TRAINJOB_WRONG_TARGET = "trainc::trainjob::wrong_target"
        "`[trainjob]` settings on a spec that does not build a TrainJob.";
    TRAINJOB_WORLD_VARIABLES = "trainc::trainjob::world_variables"
        "A TrainJob that starts its own processes without torchrun, which Trainer gives no `MASTER_ADDR`, `WORLD_SIZE` or `RANK`.";
    TRAINJOB_RUNTIME = "trainc::trainjob::runtime"
        "A TrainJob runtime reference that is invalid or does not fit the job.";
    TRAINJOB_RUNTIME_UNKNOWN = "trainc::trainjob::runtime_unknown"
        "A TrainJob runtime trainc does not know, so the checks against it were skipped.";
    TRAINJOB_TORCHTUNE = "trainc::trainjob::torchtune"
        "A `tune run` TrainJob that Trainer's torch plugin refuses: a model it does not support, or nodes, devices or args its torchtune recipes cannot run.";
    TRAINJOB_POD_METADATA = "trainc::trainjob::pod_metadata"
        "Pod labels or annotations a TrainJob at this API level cannot carry.";
    PORT_INVALID = "trainc::ports::invalid"
        "A port number or name Kubernetes rejects.";
    PORT_RESERVED = "trainc::ports::reserved"
        "A port the operator or the rendezvous uses.";
    PORT_DUPLICATE = "trainc::ports::duplicate"
        "Two ports with the same number or name.";
    SCHEDULING_INVALID_NAME = "trainc::scheduling::invalid_name"
        "A scheduler, priority class, queue or node-selector name Kubernetes rejects.";
    SCHEDULING_TOLERATION = "trainc::scheduling::toleration"
        "A toleration Kubernetes rejects.";
    SCHEDULING_KUEUE_TOLERATIONS = "trainc::scheduling::kueue_tolerations"
        "Tolerations on a TrainJob that Kueue's admission patch replaces when the admitting ResourceFlavor has tolerations.";
    SCHEDULING_KUEUE_ADMISSION = "trainc::scheduling::kueue_admission"
        "A queued TrainJob that the Kueue of its Trainer release would never start.";
    SCHEDULING_KUEUE_INTEGRATION = "trainc::scheduling::kueue_integration"
        "A queued PyTorchJob, which Kueue v0.19 and later leave alone unless the cluster turns their Training Operator integration on: it runs at once, outside the queue.";
    SCHEDULING_GANG_WAITS = "trainc::scheduling::gang_waits"
        "Gang scheduling on a runtime whose jobs wait for each other (`dependsOn`): its PodGroup can never fill.";
    SCHEDULING_VOLCANO_QUEUE = "trainc::scheduling::volcano_queue"
        "A Volcano queue on a job that Volcano does not schedule.";
    // verify
    VERIFY_SCHEMA = "trainc::verify::schema"
        "An object fails its kind's strict schema (Kubernetes 1.36 or the `--kubernetes-version` given, or its operator's CRD).";
    VERIFY_RULE = "trainc::verify::rule"
        "An object fails a CEL rule (`x-kubernetes-validations`) of its kind's CRD, which the API server evaluates when the object is created.";
    VERIFY_CRD = "trainc::verify::crd"
        "A `--crd` file trainc cannot use (no CustomResourceDefinition, a schema or rule the API server would reject), or rules of it that cannot be checked offline.";
    VERIFY_APISERVER = "trainc::verify::apiserver"
        "A name or path the API server rejects (an object's name or namespace; a pod's volume, container or mount, its hostname, an item path), in an object or in the pods an operator makes from its template.";
    VERIFY_DUPLICATE = "trainc::verify::duplicate"
        "The same object (kind, namespace and name) twice in one manifest file: applied, the later replaces the earlier.";
    VERIFY_UNCHECKED = "trainc::verify::unchecked"
        "An object of a kind trainc has no schema for (a CRD other than Kubeflow's): not checked, and an error under `--require-schemas`.";
    VERIFY_UNSERVED = "trainc::verify::unserved"
        "An object of a built-in API group whose kind or version the Kubernetes release checked (1.36 by default) does not serve (a removed `batch/v1beta1` CronJob, a misspelt kind).";
    VERIFY_WEBHOOK = "trainc::verify::webhook"
        "A generated object fails a rule of the operator's admission webhook.";
    VERIFY_ADMITTED = "trainc::verify::admitted"
        "Admitted by the API server and the webhooks, but it will not run as written (or the webhook warns).";
    VERIFY_OPERATOR = "trainc::verify::operator"
        "Generated objects that the operators would treat differently from the spec.";
    // run
    RUN_USAGE = "trainc::run::usage"
        "A `trainc run` flag whose value cannot be used (`--map`, `--timeout`, `--python`, `--configmap`, `--secret`, `--claim`).";
    RUN_INVALID = "trainc::run::invalid"
        "Objects `trainc run` cannot run as written: a name or path the API server rejects, a pod without a container, more pods or processes than a run starts.";
    RUN_MISSING = "trainc::run::missing"
        "Something only the cluster or the image has (a claim's data, a Secret, a script in the image) that no flag of `trainc run` gave.";
    RUN_IO = "trainc::run::io"
        "This machine refused a read or a write of `trainc run` (its private directory, a stand-in's files).";
    RUN_CANNOT_START = "trainc::run::cannot_start"
        "A container whose setup failed before its command started (a mount, a port another run holds): on the cluster, a pod that cannot start.";
    // import
    IMPORT = "trainc::import::invalid"
        "A manifest `trainc import` cannot turn into a spec (no job, no command, an unsupported API version).";
    IMPORT_DROPPED = "trainc::import::dropped"
        "A field or object of the imported manifest that the spec does not carry, or carries differently.";
    // migrate
    MIGRATE = "trainc::migrate::refused"
        "A PyTorchJob that cannot be a TrainJob (elastic, a Master unlike its Workers, a setting no TrainJob or runtime carries): the build's errors of the spec made of it say why.";
    MIGRATE_PASSED = "trainc::migrate::passed"
        "An input with no PyTorchJob: its objects pass through as they are.";
    MIGRATE_DROPPED = "trainc::migrate::dropped"
        "A PyTorchJob setting with no TrainJob equivalent, left out.";
    MIGRATE_RUNTIME = "trainc::migrate::runtime"
        "A TrainingRuntime written beside the TrainJob, for what its patches cannot carry.";
    MIGRATE_POD_NAMES = "trainc::migrate::pod_names"
        "The pods' names and rank 0's address change (`<job>-master-0` to `<job>-node-0-0`).";
    MIGRATE_WORLD = "trainc::migrate::world"
        "torchrun's nodes or processes per node differ between the PyTorchJob and the TrainJob.";
    MIGRATE_ENV = "trainc::migrate::env"
        "Variables the Training Operator set in the pods that Trainer does not (`MASTER_ADDR`, `WORLD_SIZE`, `RANK`).";
    MIGRATE_SUCCESS = "trainc::migrate::success"
        "The job's success changes: the Master's, then every node's.";
    MIGRATE_COMMAND = "trainc::migrate::command"
        "The training container's command line starts differently: a `$(VAR)` or a `sh -c` script's `$VAR` that the Training Operator's variables filled and the TrainJob's do not.";
    MIGRATE_LABELS = "trainc::migrate::labels"
        "A label or annotation the PyTorchJob's pods had that the TrainJob's do not, or a selector that reads the Training Operator's labels.";
    MIGRATE_POD = "trainc::migrate::pod"
        "A field of the pod spec (scheduling, volumes, another container) that differs between the PyTorchJob's pods and the TrainJob's.";
    MIGRATE_RESTARTS = "trainc::migrate::restarts"
        "The restart and failure story changes: the restart policy, the failures tolerated before the job fails, the deadline.";
    MIGRATE_WRAPPED = "trainc::migrate::wrapped"
        "A PyTorchJob inside another object (Kueue's AppWrapper, a Katib trial template), which is not migrated.";
    MIGRATE_SERVICE = "trainc::migrate::service"
        "A Service that selected the job's pods by the Training Operator's labels: rewritten to the TrainJob's pods, or left selecting none.";
}
