//! Helpers shared by the integration tests.

use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// Set to re-bless expectation files instead of comparing. CI never sets it.
pub(crate) const BLESS_VAR: &str = "TRAINC_BLESS";

pub(crate) fn blessing() -> bool {
    std::env::var_os(BLESS_VAR).is_some_and(|v| !v.is_empty())
}

pub(crate) fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `trainc ARGS` in `dir`, with a plain, deterministic rendering.
pub(crate) fn trainc(dir: &Path, args: &[&str]) -> Output {
    let output = Command::new(env!("CARGO_BIN_EXE_trainc"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("COLUMNS")
        .output()
        .expect("trainc runs");
    assert_plain(&format!("trainc {}", args.join(" ")), &output.stderr);
    output
}

pub(crate) fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).expect("trainc prints UTF-8")
}

/// Compares `actual` with the file at `path`, or writes it when blessing.
/// Returns a description of the mismatch, if any.
pub(crate) fn compare(path: &Path, actual: &str) -> Option<String> {
    if blessing() {
        std::fs::write(path, actual).expect("write expectation");
        return None;
    }
    let expected = std::fs::read_to_string(path).unwrap_or_default();
    (expected != actual).then(|| {
        let mut diff = format!("--- {} (expected)\n+++ actual\n", path.display());
        let (e, a): (Vec<_>, Vec<_>) = (expected.lines().collect(), actual.lines().collect());
        for i in 0..e.len().max(a.len()) {
            match (e.get(i), a.get(i)) {
                (Some(x), Some(y)) if x == y => {}
                (x, y) => {
                    if let Some(x) = x {
                        let _ = writeln!(diff, "-{x}");
                    }
                    if let Some(y) = y {
                        let _ = writeln!(diff, "+{y}");
                    }
                }
            }
        }
        diff
    })
}

/// A fresh, empty directory for one test (`<tmp>/trainc-<name>-<pid>`).
/// A fresh directory `NAME` under this test run's own directory,
/// `$TMPDIR/trainc-tests-PID`. The first call removes the directories of
/// earlier runs whose process is gone, so runs do not pile up in `/tmp`.
pub(crate) fn temp_dir(name: &str) -> PathBuf {
    static SWEPT: std::sync::Once = std::sync::Once::new();
    SWEPT.call_once(|| {
        if !Path::new("/proc/self").exists() {
            return; // no way to tell a finished run from a running one
        }
        for entry in std::fs::read_dir(std::env::temp_dir())
            .into_iter()
            .flatten()
            .flatten()
        {
            let file_name = entry.file_name();
            let Some(pid) = file_name
                .to_str()
                .and_then(|n| n.strip_prefix("trainc-tests-"))
            else {
                continue;
            };
            if !Path::new("/proc").join(pid).exists() {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    });
    let dir = std::env::temp_dir()
        .join(format!("trainc-tests-{}", std::process::id()))
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create a temporary directory");
    dir
}

/// `program ARGS` with `stdin` written to its standard input.
pub(crate) fn run_with_stdin(program: &Path, args: &[&str], stdin: &[u8]) -> Output {
    run_with_stdin_in(Path::new("."), program, args, stdin)
}

/// [`run_with_stdin`] in the directory `dir`.
pub(crate) fn run_with_stdin_in(dir: &Path, program: &Path, args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(program)
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let bytes = stdin.to_vec();
    // Write on a thread: a large input must not deadlock against a full stdout pipe.
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&bytes);
    });
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap();
    if program == Path::new(env!("CARGO_BIN_EXE_trainc")) {
        assert_plain(&format!("trainc {}", args.join(" ")), &output.stderr);
    }
    output
}

/// A tool to test with, or `None` (after saying so) when it is not installed
/// and not required.
pub(crate) fn tool(name: &str) -> Option<PathBuf> {
    let on_path = |program: &str| {
        std::env::var_os("PATH")
            .into_iter()
            .flat_map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>())
            .map(|dir| dir.join(program))
            .find(|p| p.is_file())
    };
    let found = match name {
        "kpt" => on_path("kubectl")
            .and_then(|k| std::fs::canonicalize(k).ok())
            .and_then(|k| k.parent().map(|d| d.join("kpt")))
            .filter(|p| p.is_file())
            .or_else(|| on_path("kpt")),
        _ => on_path(name),
    };
    if found.is_none() {
        let required = std::env::var_os("TRAINC_REQUIRE_TOOLS").is_some_and(|v| v == "1");
        assert!(
            !required,
            "{name} is required (TRAINC_REQUIRE_TOOLS=1) but not installed"
        );
        eprintln!("note: {name} is not installed; this test checks nothing here");
    }
    found
}

/// Files the dynamic loader and Rust's runtime open before `main`, and
/// the null and full devices the harness hands over.
pub(crate) fn runtime_file(path: &str) -> bool {
    [
        "/etc/ld.so.cache",
        "/lib/",
        "/usr/lib/",
        "/lib64/",
        "/proc/self/maps",
        "/sys/devices/system/cpu/",
        "/sys/fs/cgroup/",
        "/proc/self/cgroup",
        "/proc/self/mountinfo",
        "/proc/sys/kernel/",
        // glibc's malloc, when a thread's arena grows past its first heap.
        "/proc/sys/vm/overcommit_memory",
        "/dev/null",
        "/dev/full",
    ]
    .iter()
    .any(|prefix| path.starts_with(prefix))
}

/// Whether `tool` (strace, valgrind) answers `version`; where `.ci/run`
/// installs it (`TRAINC_REQUIRE_<TOOL>`), its absence fails the test
/// instead of skipping `what`.
pub(crate) fn tool_available(tool: &str, version: &str, what: &str) -> bool {
    let installed = Command::new(tool)
        .arg(version)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok();
    if !installed {
        let require = format!("TRAINC_REQUIRE_{}", tool.to_ascii_uppercase());
        assert!(
            std::env::var_os(&require).is_none(),
            "{tool} is not installed"
        );
        eprintln!("{tool} is not installed: {what} did not run");
    }
    installed
}

/// What only a program's internals say, never a message to a user: an I/O
/// error's errno, Rust's `Option`/`Result` debug forms, a regular
/// expression, a JSON Schema validator's wording. The first found, if any.
pub(crate) fn internals(text: &str) -> Option<&'static str> {
    const LEAKS: &[&str] = &[
        "os error",
        "Some(",
        "None)",
        "Ok(",
        "Err(",
        "Error {",
        "Os { code",
        "Custom { kind",
        "^[",
        "]*$",
        "]+$",
        "(?:",
        "\\d",
        "\\w",
        "is not of type",
        "is not valid under any of the given schemas",
        "Additional properties are not allowed",
        "does not match '",
        "panicked",
        "RUST_BACKTRACE",
    ];
    LEAKS.iter().copied().find(|leak| text.contains(leak))
}

/// Panics when trainc's diagnostics (`stderr`) say something of its internals.
pub(crate) fn assert_plain(what: &str, stderr: &[u8]) {
    let text = String::from_utf8_lossy(stderr);
    if let Some(leak) = internals(&text) {
        panic!("{what}: a diagnostic shows an internal form `{leak}`:\n{text}");
    }
}

/// The field a `verify` message names: `PyTorchJob/test, `spec.x`: …`.
pub(crate) fn field_of(message: &str) -> Option<&str> {
    let (_, rest) = message.split_once(", `")?;
    let (field, after) = rest.split_once('`')?;
    after.starts_with(':').then_some(field)
}
