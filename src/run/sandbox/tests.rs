//! The operations that build a container's root, against a fake machine.
use super::{Host, Kind, Op, ops};
use crate::run::workdir::LocalMount;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A machine of a few paths: `/bin` a link, `/etc` with `passwd`, `/tmp`.
struct Fake(BTreeMap<&'static str, Kind>);

impl Fake {
    fn new() -> Fake {
        Fake(BTreeMap::from([
            ("/bin", Kind::Link),
            ("/etc", Kind::Dir),
            ("/etc/passwd", Kind::File),
            ("/tmp", Kind::Dir),
            ("/run/v", Kind::Dir),
            ("/run/hosts", Kind::File),
            ("/run/f", Kind::File),
        ]))
    }
}

impl Host for Fake {
    fn entries(&self, dir: &Path) -> Vec<String> {
        let dir = dir.to_str().unwrap();
        self.0
            .keys()
            .filter_map(|p| {
                let rest = if dir == "/" {
                    p.strip_prefix('/')
                } else {
                    p.strip_prefix(dir)?.strip_prefix('/')
                }?;
                (!rest.contains('/') && !p.starts_with("/run")).then(|| rest.to_owned())
            })
            .collect()
    }
    fn kind(&self, path: &Path) -> Option<Kind> {
        self.0.get(path.to_str().unwrap()).copied()
    }
    fn is_dir(&self, path: &Path) -> bool {
        self.kind(path) == Some(Kind::Dir)
    }
    fn link(&self, _: &Path) -> Option<PathBuf> {
        Some(PathBuf::from("usr/bin"))
    }
}

fn mount(target: &str, source: &str) -> LocalMount {
    LocalMount {
        target: target.to_owned(),
        source: source.into(),
        read_only: true,
    }
}

fn shown(ops: &[Op]) -> Vec<String> {
    ops.iter()
        .map(|op| match op {
            Op::Tmpfs { at } => format!("tmpfs {at}"),
            Op::Dir { at } => format!("dir {at}"),
            Op::File { at } => format!("file {at}"),
            Op::Link { at, to } => format!("link {at} -> {to}"),
            Op::Bind {
                source,
                at,
                recursive,
                read_only,
            } => format!(
                "bind {} {at}{}{}",
                source.display(),
                if *recursive { " recursive" } else { "" },
                if *read_only { " ro" } else { "" }
            ),
        })
        .collect()
}

#[test]
fn a_new_mount_path_is_made_in_a_tmpfs_never_on_the_machine() {
    let fake = Fake::new();
    let made = ops(
        &[
            mount("/data", "/run/v"),
            mount("/etc/train/config.yaml", "/run/f"),
        ],
        Path::new("/run/hosts"),
        &fake,
    )
    .unwrap();
    assert_eq!(
        shown(&made),
        [
            "tmpfs /",
            "link /bin -> usr/bin",
            "dir /etc",
            "bind /etc /etc recursive",
            "dir /tmp",
            "bind /tmp /tmp recursive",
            "dir /data",
            "bind /run/v /data ro",
            // /etc is the machine's: it becomes a tmpfs before anything is made in it.
            "tmpfs /etc",
            "file /etc/passwd",
            "bind /etc/passwd /etc/passwd",
            "dir /etc/train",
            "file /etc/train/config.yaml",
            "bind /run/f /etc/train/config.yaml ro",
            // Not on the fake machine: made in the tmpfs /etc.
            "file /etc/hosts",
            "bind /run/hosts /etc/hosts ro",
        ]
    );
}

/// A file bound over the machine's makes nothing; when its directory
/// becomes a tmpfs later (for `/etc/hosts`, which this machine lacks),
/// the bind is made again on the tmpfs, not hidden by it.
#[test]
fn a_file_bound_over_the_machines_stays_bound_when_its_directory_becomes_a_tmpfs() {
    let fake = Fake::new();
    let made = ops(
        &[mount("/etc/passwd", "/run/f")],
        Path::new("/run/hosts"),
        &fake,
    )
    .unwrap();
    let shown = shown(&made);
    let bound = shown
        .iter()
        .position(|s| s == "bind /run/f /etc/passwd ro")
        .unwrap();
    assert!(
        !shown[..bound].iter().any(|s| s == "file /etc/passwd"),
        "{shown:?}"
    );
    let last = made.iter().rev().find(|op| op.at() == "/etc/passwd");
    assert_eq!(
        last,
        Some(&Op::Bind {
            source: "/run/f".into(),
            at: "/etc/passwd".to_owned(),
            recursive: false,
            read_only: true,
        }),
        "{shown:?}"
    );
}

/// `/bin` is a link to `usr/bin`: a mount at `/bin/tool` is made at
/// `/usr/bin/tool`, in the root's tmpfs, as runc follows the link in
/// the container's root; never through the link onto the machine.
#[test]
fn a_mount_path_through_a_link_is_followed_inside_the_root() {
    let fake = Fake::new();
    let made = ops(
        &[mount("/bin/tool", "/run/v")],
        Path::new("/run/hosts"),
        &fake,
    )
    .unwrap();
    let shown = shown(&made);
    let at = shown.iter().position(|s| s == "dir /usr").unwrap();
    assert_eq!(
        shown[at..at + 4],
        [
            "dir /usr",
            "dir /usr/bin",
            "dir /usr/bin/tool",
            "bind /run/v /usr/bin/tool ro"
        ],
        "{shown:?}"
    );
}
