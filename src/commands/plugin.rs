//! `trainc plugin install`: link this binary where kustomize looks for the
//! exec plugin of `kind: TrainSpec`.

use std::path::{Path, PathBuf};

use super::{Status, write_stderr};

/// Where below the plugin root kustomize looks for it: `<group>/<version>/<lowercase kind>/<Kind>`.
const PLUGIN_PATH: &str = "trainc.dev/v1alpha1/trainspec/TrainSpec";

/// A symlink named `TrainSpec` to this binary. A binary inside a cargo build
/// directory is refused unless `dev` says the link is meant to follow the
/// build: `cargo clean` would delete it and leave kustomize a dangling link.
pub(super) fn install(dir: Option<PathBuf>, dev: bool) -> Status {
    let Some(root) = dir.or_else(default_plugin_root) else {
        write_stderr(
            "error: neither XDG_CONFIG_HOME nor HOME is set to an absolute path (a relative one is ignored); pass --dir\n",
        );
        return Status::Usage;
    };
    let link = root.join(PLUGIN_PATH);
    let target = match std::env::current_exe().and_then(std::fs::canonicalize) {
        Ok(path) => path,
        Err(error) => {
            write_stderr(&format!(
                "error: cannot find trainc's own path: {}\n",
                trainc::source::io_reason(&error)
            ));
            return Status::Usage;
        }
    };
    if let Some(build_dir) = (!dev).then(|| cargo_build_dir(&target)).flatten() {
        write_stderr(&format!(
            "error: this trainc is a build in cargo's directory `{}`, which `cargo clean` \
             and every rebuild replace; kustomize would be left with a broken link\n  \
             help: install trainc first, then link the installed binary:\n      \
             cargo install --locked --path .   # in the trainc repository\n      \
             trainc plugin install\n  \
             (to link this build on purpose while working on trainc, pass --dev)\n",
            build_dir.display()
        ));
        return Status::Usage;
    }
    let parent = link.parent().expect("the plugin path has a parent");
    let result = std::fs::create_dir_all(parent).and_then(|()| {
        match std::fs::symlink_metadata(&link) {
            Ok(meta) if meta.file_type().is_symlink() => std::fs::remove_file(&link)?,
            Ok(_) => {
                return Err(std::io::Error::other(
                    "a file that is not a symlink is in the way; remove it first",
                ));
            }
            Err(_) => {}
        }
        symlink(&target, &link)
    });
    match result {
        Ok(()) => {
            write_stderr(&format!(
                "installed {} -> {}\nuse it with: kubectl kustomize --enable-alpha-plugins DIR\n",
                link.display(),
                target.display()
            ));
            Status::Ok
        }
        Err(error) => {
            write_stderr(&format!(
                "error: cannot install `{}`: {}\n",
                link.display(),
                trainc::source::io_reason(&error)
            ));
            Status::Usage
        }
    }
}

/// The cargo target directory `exe` was built into, if any: the nearest
/// ancestor holding the cache-directory tag cargo writes there.
fn cargo_build_dir(exe: &Path) -> Option<&Path> {
    exe.ancestors().skip(1).find(|dir| {
        std::fs::read_to_string(dir.join("CACHEDIR.TAG"))
            .is_ok_and(|tag| tag.contains("created by cargo"))
    })
}

/// `$XDG_CONFIG_HOME/kustomize/plugin`, else `$HOME/.config/kustomize/plugin`.
/// A relative `XDG_CONFIG_HOME` is ignored, as the XDG Base Directory
/// Specification says ("If an implementation encounters a relative path in
/// any of these variables it should consider the path invalid and ignore
/// it"), and so is a relative `HOME`: neither may put the plugin under the
/// current directory.
fn default_plugin_root() -> Option<PathBuf> {
    plugin_root(
        std::env::var_os("XDG_CONFIG_HOME"),
        std::env::var_os("HOME"),
    )
}

fn plugin_root(
    xdg: Option<std::ffi::OsString>,
    home: Option<std::ffi::OsString>,
) -> Option<PathBuf> {
    let absolute =
        |value: Option<std::ffi::OsString>| value.map(PathBuf::from).filter(|p| p.is_absolute());
    let config = absolute(xdg).or_else(|| absolute(home).map(|home| home.join(".config")))?;
    Some(config.join("kustomize").join("plugin"))
}

#[cfg(unix)]
fn symlink(target: &Path, link: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

#[cfg(not(unix))]
fn symlink(target: &Path, link: &Path) -> std::io::Result<()> {
    std::fs::copy(target, link).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::{cargo_build_dir, plugin_root};
    use std::path::PathBuf;

    #[test]
    fn a_relative_config_home_is_ignored() {
        let some = |s: &str| Some(std::ffi::OsString::from(s));
        let root = |xdg, home| plugin_root(xdg, home);
        assert_eq!(
            root(some("/x"), some("/home/u")),
            Some(PathBuf::from("/x/kustomize/plugin"))
        );
        assert_eq!(
            root(some("cfg"), some("/home/u")),
            Some(PathBuf::from("/home/u/.config/kustomize/plugin"))
        );
        assert_eq!(
            root(some(""), some("/home/u")),
            Some(PathBuf::from("/home/u/.config/kustomize/plugin"))
        );
        assert_eq!(root(some("cfg"), some("home")), None);
        assert_eq!(root(None, None), None);
    }

    #[test]
    fn a_binary_below_a_cargo_tagged_directory_is_a_build() {
        let root = std::env::temp_dir().join(format!("trainc-builddir-{}", std::process::id()));
        let bin = root.join("target/release");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::create_dir_all(root.join("installed/bin")).unwrap();
        let exe = bin.join("trainc");
        assert_eq!(cargo_build_dir(&exe), None, "no tag, no build directory");
        std::fs::write(
            root.join("target/CACHEDIR.TAG"),
            "Signature: 8a477f597d28d172789f06886806bc55\n\
             # This file is a cache directory tag created by cargo.\n",
        )
        .unwrap();
        assert_eq!(cargo_build_dir(&exe), Some(root.join("target").as_path()));
        assert_eq!(cargo_build_dir(&root.join("installed/bin/trainc")), None);
        std::fs::remove_dir_all(&root).unwrap();
    }
}
