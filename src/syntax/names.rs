//! Kubernetes name syntaxes: DNS labels and subdomains, label keys and values,
//! port names, environment variable names.

/// The longest DNS label Kubernetes accepts (object names, label values, hostnames).
pub const MAX_LABEL: usize = 63;

/// A DNS-1035 label: lowercase letters, digits and `-`, starting with a letter,
/// ending with a letter or digit, at most 63 characters. `Err` says what is wrong.
pub fn dns1035_label(name: &str) -> Result<(), String> {
    dns_label(name, true)
}

/// A DNS-1123 label: as DNS-1035, but it may start with a digit.
pub fn dns1123_label(name: &str) -> Result<(), String> {
    dns_label(name, false)
}

fn dns_label(name: &str, letter_first: bool) -> Result<(), String> {
    label_syntax(name, letter_first)?;
    if name.len() > MAX_LABEL {
        return Err(format!(
            "it is {} characters long; the limit is {MAX_LABEL}",
            name.len()
        ));
    }
    Ok(())
}

/// Whether `name` has a DNS label's characters and ends, whatever its
/// length (`[a-z0-9]([-a-z0-9]*[a-z0-9])?`, or `[a-z]…` with `letter_first`).
pub fn is_label_shaped(name: &str, letter_first: bool) -> bool {
    label_syntax(name, letter_first).is_ok()
}

/// Whether `text` has a label key's name part's characters and ends,
/// whatever its length (`([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`).
pub fn is_key_shaped(text: &str) -> bool {
    !text.is_empty() && key_syntax(text).is_ok()
}

/// A DNS label's characters and ends, whatever its length.
fn label_syntax(name: &str, letter_first: bool) -> Result<(), String> {
    if name.is_empty() {
        return Err("it is empty".to_owned());
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-'))
    {
        return Err(if c.is_ascii_uppercase() {
            "it has uppercase letters".to_owned()
        } else {
            format!("`{c}` is not allowed (only lowercase letters, digits and `-`)")
        });
    }
    if letter_first && !name.starts_with(|c: char| c.is_ascii_lowercase()) {
        return Err("it must start with a letter".to_owned());
    }
    if name.starts_with('-') {
        return Err("it must start with a letter or digit".to_owned());
    }
    if name.ends_with('-') {
        return Err("it must end with a letter or digit".to_owned());
    }
    Ok(())
}

/// A DNS-1123 subdomain: dot-separated DNS-1123 labels, at most 253
/// characters. Kubernetes holds the whole to 253 and each part to a label's
/// characters, but not to a label's 63 (apimachinery
/// `pkg/util/validation/validation.go` `IsDNS1123Subdomain`: the real
/// server admits a claim named with 64 letters).
pub fn dns1123_subdomain(name: &str) -> Result<(), String> {
    if name.len() > 253 {
        return Err(format!(
            "it is {} characters long; the limit is 253",
            name.len()
        ));
    }
    for part in name.split('.') {
        label_syntax(part, false).map_err(|why| {
            if part.is_empty() {
                "it has an empty part between dots".to_owned()
            } else {
                why
            }
        })?;
    }
    Ok(())
}

/// A domain-prefixed path, `acme.io/foo`: a DNS-1123 subdomain, `/`, and a
/// path of URL characters (kubernetes apimachinery
/// `pkg/util/validation/validation.go` `IsDomainPrefixedPath`).
pub fn domain_prefixed_path(text: &str) -> bool {
    let Some((domain, path)) = text.split_once('/') else {
        return false;
    };
    let url = |c: char| c.is_ascii_alphanumeric() || "/-._~%!$&'()*+,;=:".contains(c);
    dns1123_subdomain(domain).is_ok() && !path.is_empty() && path.chars().all(url)
}

/// The name syntaxes of Kubernetes objects.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    /// [`dns1035_label`]: Services, trainc's job names.
    Dns1035,
    /// [`dns1123_label`]: namespaces, volumes, Kueue's queues.
    Dns1123Label,
    /// [`dns1123_subdomain`]: most objects (Secrets, ConfigMaps, claims, classes).
    Dns1123Subdomain,
}

/// A name that is not of its [`Syntax`]: why, and the nearest valid name.
pub struct Invalid {
    pub why: String,
    pub better: Option<String>,
}

impl Syntax {
    /// The syntax's name with its article: "a DNS-1035 label".
    pub fn described(self) -> &'static str {
        match self {
            Syntax::Dns1035 => "a DNS-1035 label",
            Syntax::Dns1123Label => "a DNS-1123 label",
            Syntax::Dns1123Subdomain => "a DNS-1123 subdomain",
        }
    }

    /// Checks `name` against this syntax; when it fails, why and the
    /// nearest valid name.
    pub fn check(self, name: &str) -> Result<(), Invalid> {
        let checked = match self {
            Syntax::Dns1035 => dns1035_label(name),
            Syntax::Dns1123Label => dns1123_label(name),
            Syntax::Dns1123Subdomain => dns1123_subdomain(name),
        };
        checked.map_err(|why| Invalid {
            why,
            better: suggest(name, self),
        })
    }
}

/// A name of `syntax` close to `name` (lowercased, each run of other
/// characters one `-`), to offer in a help line; `None` when nothing close
/// is valid or `name` is already it.
fn suggest(name: &str, syntax: Syntax) -> Option<String> {
    let label = |part: &str, letter_first: bool| {
        let mut out = String::new();
        for c in part.chars() {
            match c {
                'a'..='z' | '0'..='9' => out.push(c),
                'A'..='Z' => out.push(c.to_ascii_lowercase()),
                _ if !out.ends_with('-') => out.push('-'),
                _ => {}
            }
        }
        let out = out
            .trim_start_matches(|c: char| c == '-' || (letter_first && c.is_ascii_digit()))
            .trim_end_matches('-');
        let out: String = out.chars().take(MAX_LABEL).collect();
        out.trim_end_matches('-').to_owned()
    };
    let out = match syntax {
        Syntax::Dns1035 => label(name, true),
        Syntax::Dns1123Label => label(name, false),
        Syntax::Dns1123Subdomain => {
            let parts: Vec<String> = name
                .split('.')
                .map(|part| label(part, false))
                .filter(|part| !part.is_empty())
                .collect();
            let joined = parts.join(".");
            if joined.len() > 253 {
                return None;
            }
            joined
        }
    };
    (!out.is_empty() && out != name).then_some(out)
}

/// A label key or annotation key: `[prefix/]name`, the prefix a DNS subdomain,
/// the name at most 63 characters of alphanumerics, `-`, `_`, `.`, starting and
/// ending with an alphanumeric.
pub fn qualified_name(key: &str) -> Result<(), String> {
    let (prefix, name) = match key.split_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, key),
    };
    if let Some(prefix) = prefix {
        if prefix.is_empty() {
            return Err("the prefix before `/` is empty".to_owned());
        }
        dns1123_subdomain(prefix)
            .map_err(|why| format!("the prefix `{prefix}` is not a DNS subdomain: {why}"))?;
    }
    if name.is_empty() {
        return Err("the name part is empty".to_owned());
    }
    label_text(name).map_err(|why| format!("the name part `{name}` {why}"))
}

/// An extended resource name (`nvidia.com/gpu`, `rdma/rdma_shared_device_a`):
/// a [`qualified_name`] with a domain prefix outside `kubernetes.io`, which is
/// reserved for native resources (k8s.io/kubernetes `pkg/apis/core/helper`,
/// `IsExtendedResourceName`).
pub fn extended_resource(name: &str) -> Result<(), String> {
    match name.split_once('/') {
        None => Err("an extended resource needs a domain prefix, e.g. `nvidia.com/gpu`".to_owned()),
        Some((domain, _)) if domain == "kubernetes.io" || domain.ends_with(".kubernetes.io") => {
            Err("the `kubernetes.io` domain is reserved for native resources".to_owned())
        }
        Some(_) => qualified_name(name),
    }
}

/// A label value: empty, or as the name part of a [`qualified_name`].
pub fn label_value(value: &str) -> Result<(), String> {
    if value.is_empty() {
        Ok(())
    } else {
        label_text(value).map_err(|why| format!("`{value}` {why}"))
    }
}

fn label_text(text: &str) -> Result<(), String> {
    if text.len() > MAX_LABEL {
        return Err(format!(
            "is {} characters long; the limit is {MAX_LABEL}",
            text.len()
        ));
    }
    key_syntax(text)
}

/// A label key's name part's characters and ends, whatever its length.
fn key_syntax(text: &str) -> Result<(), String> {
    if let Some(c) = text
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
    {
        return Err(format!(
            "contains `{c}`; only letters, digits, `-`, `_` and `.` are allowed"
        ));
    }
    if !text.starts_with(|c: char| c.is_ascii_alphanumeric())
        || !text.ends_with(|c: char| c.is_ascii_alphanumeric())
    {
        return Err("must start and end with a letter or digit".to_owned());
    }
    Ok(())
}

/// A ConfigMap or Secret key (`IsConfigMapKey`): letters, digits, `-`, `_`
/// and `.`, at most 253 characters, not `.` or `..` and not starting with
/// `..`, so that each key is a file name in its volume.
pub fn config_map_key(key: &str) -> Result<(), String> {
    if key.is_empty() {
        return Err("it is empty".to_owned());
    }
    if key.len() > 253 {
        return Err(format!(
            "it is {} characters long; the limit is 253",
            key.len()
        ));
    }
    if let Some(c) = key
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
    {
        return Err(format!(
            "`{c}` is not allowed (only letters, digits, `-`, `_` and `.`)"
        ));
    }
    match key {
        "." | ".." => Err(format!("it is `{key}`")),
        _ if key.starts_with("..") => Err("it starts with `..`".to_owned()),
        _ => Ok(()),
    }
}

/// A container port name (IANA service name): at most 15 lowercase
/// alphanumerics and `-`, with at least one letter, no `--`, not starting or
/// ending with `-`.
pub fn port_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > 15 {
        return Err(format!(
            "it is {} characters long; port names have 1 to 15",
            name.len()
        ));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-'))
    {
        return Err(format!(
            "`{c}` is not allowed (only lowercase letters, digits and `-`)"
        ));
    }
    if name.starts_with('-') || name.ends_with('-') || name.contains("--") {
        return Err("`-` may not start or end it, or appear twice in a row".to_owned());
    }
    if !name.chars().any(|c| c.is_ascii_lowercase()) {
        return Err("it needs at least one letter".to_owned());
    }
    Ok(())
}

/// An environment variable name as Kubernetes validates it: letters, digits,
/// `_`, `-`, `.`, not starting with a digit.
pub fn env_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("it is empty".to_owned());
    }
    if name.starts_with(|c: char| c.is_ascii_digit()) {
        return Err("it starts with a digit".to_owned());
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
    {
        return Err(format!(
            "`{c}` is not allowed (only letters, digits, `_`, `-` and `.`)"
        ));
    }
    Ok(())
}

/// Whether an environment variable's name says it holds a secret
/// (`HF_TOKEN`, `DB_PASSWORD`, `API_KEY`): `check` warns when its value is
/// written in the spec, and `describe` does not print the value.
pub fn looks_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    ["_TOKEN", "_PASSWORD", "_SECRET", "_KEY"]
        .iter()
        .any(|s| upper.ends_with(s))
        || ["TOKEN", "PASSWORD", "SECRET"].contains(&upper.as_str())
}

/// The accelerator resources the common device plugins advertise
/// (NVIDIA's and AMD's `k8s-device-plugin`, Intel's
/// `intel-device-plugins-for-kubernetes`, Habana's, AWS Neuron's, GKE's
/// TPUs): a name one letter from one of these is a typo no node has.
pub const DEVICE_RESOURCES: [&str; 8] = [
    "nvidia.com/gpu",
    "amd.com/gpu",
    "gpu.intel.com/i915",
    "gpu.intel.com/xe",
    "habana.ai/gaudi",
    "aws.amazon.com/neuron",
    "aws.amazon.com/neuroncore",
    "google.com/tpu",
];

/// The device plugin resource `name` looks like a misspelling of, when it
/// is none itself (`nvidia.com/gpus` for `nvidia.com/gpu`); MIG profiles
/// (`nvidia.com/mig-…`) and other names are taken as they are.
pub fn misspelt_device(name: &str) -> Option<&'static str> {
    // Kubernetes' own resources (`cpu`, `memory`) have no domain, so none
    // is a device plugin's misspelt: no distance to work out for each.
    if !name.contains('/') || DEVICE_RESOURCES.contains(&name) || name.contains("/mig-") {
        return None;
    }
    let near = crate::diagnostic::suggest(name, DEVICE_RESOURCES)?;
    // Only the same domain: `example.com/gpu` is somebody's own plugin.
    let domain = |n: &str| n.split_once('/').map(|(d, _)| d.to_owned());
    (domain(name) == domain(near)).then_some(near)
}

/// Whether `name` is a device plugin's GPU resource: `nvidia.com/gpu`,
/// `amd.com/gpu`, `nvidia.com/mig-1g.10gb`, `gpu.intel.com/i915`.
pub fn is_gpu_resource(name: &str) -> bool {
    let (domain, resource) = name.split_once('/').unwrap_or(("", name));
    resource == "gpu" || resource.starts_with("mig-") || domain.starts_with("gpu.")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dns_labels() {
        assert!(dns1035_label("mnist-ddp").is_ok());
        assert!(dns1035_label("1mnist").is_err());
        assert!(dns1123_label("1mnist").is_ok());
        assert!(dns1035_label("Mnist").unwrap_err().contains("uppercase"));
        assert!(dns1035_label("a_b").unwrap_err().contains("`_`"));
        assert!(dns1035_label("ab-").is_err());
        assert!(dns1035_label(&"a".repeat(64)).is_err());
        assert!(dns1123_subdomain("nvidia.com").is_ok());
        assert!(dns1123_subdomain("a..b").is_err());
        let bad = Syntax::Dns1035.check("My_Job").unwrap_err();
        assert_eq!(bad.better.as_deref(), Some("my-job"));
        let bad = Syntax::Dns1123Subdomain
            .check("Team_A.Example")
            .unwrap_err();
        assert_eq!(bad.better.as_deref(), Some("team-a.example"));
    }

    #[test]
    fn label_syntax() {
        assert!(qualified_name("app.kubernetes.io/name").is_ok());
        assert!(qualified_name("team").is_ok());
        assert!(qualified_name("Bad Key").is_err());
        assert!(qualified_name("/x").is_err());
        assert!(qualified_name("UPPER.io/x").is_err());
        assert!(label_value("").is_ok());
        assert!(label_value("v1.2_x").is_ok());
        assert!(label_value("a b").is_err());
        assert!(label_value("-a").is_err());
    }

    #[test]
    fn port_and_env_names() {
        assert!(port_name("tensorboard").is_ok());
        assert!(port_name("tensorboard-port").is_err());
        assert!(port_name("1234").is_err());
        assert!(port_name("a--b").is_err());
        assert!(env_name("NCCL_DEBUG").is_ok());
        assert!(env_name("1X").is_err());
        assert!(env_name("A B").is_err());
    }
}
