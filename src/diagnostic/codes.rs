//! Every diagnostic code trainc can emit, in one list.
//!
//! Codes are part of the interface (`--format json`, editor integrations): they
//! never change meaning. The integration tests check that each code in [`ALL`]
//! is produced by at least one test case.

macro_rules! codes {
    ($($(#[$doc:meta])* $name:ident = $code:literal;)*) => {
        $($(#[$doc])* pub const $name: &str = $code;)*
        /// All codes, in declaration order.
        pub const ALL: &[&str] = &[$($code),*];
    };
}

codes! {
    // read
    SOURCE_TOO_LARGE = "trainc::source::too_large";
    SOURCE_NOT_UTF8 = "trainc::source::not_utf8";
    SOURCE_UNREADABLE = "trainc::source::unreadable";
    // parse
    PARSE_TOML = "trainc::parse::toml";
    PARSE_YAML = "trainc::parse::yaml";
    PARSE_TOO_DEEP = "trainc::parse::too_deep";
    PARSE_NOT_A_TABLE = "trainc::parse::not_a_table";
    PARSE_UNSUPPORTED_VALUE = "trainc::parse::unsupported_value";
    KRM_API_VERSION = "trainc::krm::api_version";
    KRM_KIND = "trainc::krm::kind";
    KRM_NAME_CONFLICT = "trainc::krm::name_conflict";
    KRM_LOCAL_CONFIG = "trainc::krm::local_config";
    KRM_EXEC_FUNCTION = "trainc::krm::exec_function";
    // compose and templates
    OVERLAY_UNSET = "trainc::overlay::unset";
    TEMPLATE_UNDEFINED = "trainc::template::undefined";
    TEMPLATE_FUEL = "trainc::template::fuel";
    TEMPLATE_SYNTAX = "trainc::template::syntax";
    TEMPLATE_ERROR = "trainc::template::error";
    TEMPLATE_UNUSED_SET = "trainc::template::unused_set";
    // validate, JSON Schema pass
    SCHEMA_UNKNOWN_KEY = "trainc::schema::unknown_key";
    SCHEMA_MISSING_KEY = "trainc::schema::missing_key";
    SCHEMA_TYPE = "trainc::schema::type";
    SCHEMA_ENUM = "trainc::schema::enum";
    SCHEMA_RANGE = "trainc::schema::range";
    SCHEMA_OTHER = "trainc::schema::other";
    // validate, semantic rules
    NAME_INVALID = "trainc::name::invalid";
    NAME_TOO_LONG = "trainc::name::too_long";
    NAMESPACE_INVALID = "trainc::namespace::invalid";
    ENTRYPOINT_MISSING = "trainc::entrypoint::missing";
    ENTRYPOINT_CONFLICT = "trainc::entrypoint::conflict";
    ENTRYPOINT_EMPTY = "trainc::entrypoint::empty";
    CODE_FILE = "trainc::code::file";
    CODE_TOO_LARGE = "trainc::code::too_large";
    CODE_INVALID = "trainc::code::invalid";
    RESOURCE_EXTENDED = "trainc::resources::extended";
    SECURITY_CONTEXT = "trainc::security_context::invalid";
    ENV_FROM = "trainc::env_from::invalid";
    DNS_POLICY = "trainc::network::dns_policy";
    TRAINJOB_INITIALIZER = "trainc::trainjob::initializer";
    POD_TEMPLATE = "trainc::pod_template::conflict";
    ARGS_WITHOUT_ENTRYPOINT = "trainc::args::no_entrypoint";
    WORKING_DIR_RELATIVE = "trainc::working_dir::relative";
    REPLICAS_SYNTAX = "trainc::replicas::syntax";
    REPLICAS_RANGE = "trainc::replicas::range";
    ELASTIC_NOT_ELASTIC = "trainc::elastic::not_elastic";
    ELASTIC_RDZV_ENDPOINT = "trainc::elastic::rdzv_endpoint";
    NPROC_GPU_WITHOUT_GPUS = "trainc::nproc::gpu_without_gpus";
    NPROC_EXCEEDS_GPUS = "trainc::nproc::exceeds_gpus";
    NPROC_IDLE_GPUS = "trainc::nproc::idle_gpus";
    NPROC_AUTO_ON_CPU = "trainc::nproc::auto_on_cpu";
    NPROC_TRAINER_CPU = "trainc::nproc::trainer_cpu";
    NPROC_ELASTIC_COMMAND = "trainc::nproc::elastic_command";
    QUANTITY_INVALID = "trainc::quantity::invalid";
    QUANTITY_NOT_POSITIVE = "trainc::quantity::not_positive";
    QUANTITY_SUSPICIOUS = "trainc::quantity::suspicious";
    LIMIT_BELOW_REQUEST = "trainc::resources::limit_below_request";
    SHM_EXCEEDS_MEMORY = "trainc::resources::shm_exceeds_memory";
    GPU_RESOURCE_INVALID = "trainc::resources::gpu_resource";
    DURATION_INVALID = "trainc::duration::invalid";
    POLICY_RESTART_ALWAYS = "trainc::policy::restart_always";
    POLICY_BACKOFF_WITHOUT_RESTARTS = "trainc::policy::backoff_without_restarts";
    ENV_INVALID_NAME = "trainc::env::invalid_name";
    ENV_RESERVED = "trainc::env::reserved";
    ENV_OVERWRITTEN = "trainc::env::overwritten";
    ENV_RENDEZVOUS = "trainc::env::rendezvous";
    ENV_LITERAL_SECRET = "trainc::env::literal_secret";
    ENV_SOURCE = "trainc::env::source";
    VOLUME_INVALID_NAME = "trainc::volumes::invalid_name";
    VOLUME_NO_SOURCE = "trainc::volumes::no_source";
    VOLUME_MANY_SOURCES = "trainc::volumes::many_sources";
    VOLUME_RELATIVE_MOUNT = "trainc::volumes::relative_mount";
    VOLUME_DUPLICATE_MOUNT = "trainc::volumes::duplicate_mount";
    VOLUME_SHM_CONFLICT = "trainc::volumes::shm_conflict";
    VOLUME_RWO_SHARED = "trainc::volumes::rwo_shared";
    VOLUME_READ_ONLY_NEW_CLAIM = "trainc::volumes::read_only_new_claim";
    VOLUME_RWX_DEFAULT_CLASS = "trainc::volumes::rwx_default_class";
    VOLUME_OPTION_WITHOUT_SIZE = "trainc::volumes::option_without_size";
    VOLUME_INVALID_REFERENCE = "trainc::volumes::invalid_reference";
    METADATA_INVALID_KEY = "trainc::metadata::invalid_key";
    METADATA_INVALID_VALUE = "trainc::metadata::invalid_value";
    METADATA_RESERVED = "trainc::metadata::reserved";
    METADATA_TOO_LARGE = "trainc::metadata::too_large";
    IMAGE_INVALID = "trainc::image::invalid";
    IMAGE_UNPINNED = "trainc::image::unpinned";
    TARGET_UNSUPPORTED = "trainc::target::unsupported";
    TRAINJOB_WRONG_TARGET = "trainc::trainjob::wrong_target";
    TRAINJOB_RUNTIME = "trainc::trainjob::runtime";
    TRAINJOB_POD_METADATA = "trainc::trainjob::pod_metadata";
    PORT_INVALID = "trainc::ports::invalid";
    PORT_RESERVED = "trainc::ports::reserved";
    PORT_DUPLICATE = "trainc::ports::duplicate";
    SCHEDULING_INVALID_NAME = "trainc::scheduling::invalid_name";
    SCHEDULING_TOLERATION = "trainc::scheduling::toleration";
    SCHEDULING_VOLCANO_QUEUE = "trainc::scheduling::volcano_queue";
    // verify
    VERIFY_SCHEMA = "trainc::verify::schema";
    VERIFY_WEBHOOK = "trainc::verify::webhook";
    VERIFY_OPERATOR = "trainc::verify::operator";
}
