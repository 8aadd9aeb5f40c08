//! `trainc convert`: every example spec and overlay, written in every form,
//! builds the same objects as the original, keeps every comment, and reads
//! back to the same text when converted again; what a form cannot say is an
//! error or a warning.

use std::path::{Path, PathBuf};

use crate::support::{root, temp_dir, text, trainc};

const FORMS: [(&str, &str); 3] = [("toml", "toml"), ("yaml", "yaml"), ("trainspec", "yaml")];

/// The example specs: TOML, and the TrainSpecs of the kustomize example.
fn specs() -> Vec<PathBuf> {
    let mut specs: Vec<PathBuf> = std::fs::read_dir(root().join("examples"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    specs.push(root().join("examples/kustomize/spec/trainspec.yaml"));
    specs.sort();
    assert!(specs.len() >= 20, "{specs:?}");
    specs
}

fn overlays() -> Vec<PathBuf> {
    let mut overlays: Vec<PathBuf> = std::fs::read_dir(root().join("overlays"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    overlays.push(root().join("examples/kustomize/gpu-spec/gpu.yaml"));
    overlays.push(root().join("examples/kustomize/cpu-spec/cpu.yaml"));
    overlays.sort();
    overlays
}

/// `trainc COMMAND ARGS`, which must succeed: what it wrote.
fn succeeds(dir: &Path, command: &str, args: &[&str]) -> String {
    let mut all = vec![command];
    all.extend(args);
    let output = trainc(dir, &all);
    assert_eq!(
        output.status.code(),
        Some(0),
        "trainc {}: {}",
        all.join(" "),
        text(&output.stderr)
    );
    text(&output.stdout)
}

fn convert(dir: &Path, args: &[&str]) -> String {
    succeeds(dir, "convert", args)
}

fn build(dir: &Path, args: &[&str]) -> String {
    succeeds(dir, "build", args)
}

/// The comment lines of a file, but a schema line (rewritten per form).
fn comments(file: &str) -> Vec<String> {
    file.lines()
        .filter_map(|l| {
            let t = l.trim();
            let at = if t.starts_with('#') {
                Some(0)
            } else {
                t.find(" #")
            };
            at.map(|i| t[i..].trim().to_owned())
        })
        .filter(|c| !c.starts_with("#:schema") && !c.contains("yaml-language-server"))
        .collect()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let target = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy_dir(&path, &target);
        } else {
            std::fs::copy(&path, &target).unwrap();
        }
    }
}

#[test]
fn every_example_spec_in_every_form_builds_the_same_objects_and_keeps_its_comments() {
    let dir = temp_dir("convert-specs");
    // The examples' own files (`[code]`, runtimes), beside the converted specs.
    for entry in std::fs::read_dir(root().join("examples")).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            copy_dir(&path, &dir.join(path.file_name().unwrap()));
        }
    }
    for spec in specs() {
        let original = std::fs::read_to_string(&spec).unwrap();
        let stem = spec.file_stem().unwrap().to_str().unwrap();
        let copy = dir.join(spec.file_name().unwrap());
        std::fs::write(&copy, &original).unwrap();
        let expected = build(&dir, &[copy.to_str().unwrap()]);
        for (form, extension) in FORMS {
            let written = convert(&dir, &[copy.to_str().unwrap(), "--to", form]);
            let file = dir.join(format!("{stem}.as-{form}.{extension}"));
            std::fs::write(&file, &written).unwrap();
            assert_eq!(
                build(&dir, &[file.to_str().unwrap()]),
                expected,
                "{} as {form} builds other objects:\n{written}",
                spec.display()
            );
            let kept = comments(&written);
            for comment in comments(&original) {
                assert!(
                    kept.contains(&comment),
                    "{} as {form} lost the comment `{comment}`:\n{written}",
                    spec.display()
                );
            }
            // Converted again, the same text: nothing drifts.
            let again = convert(&dir, &[file.to_str().unwrap(), "--to", form]);
            assert_eq!(
                again,
                written,
                "{} as {form}, converted again",
                spec.display()
            );
        }
    }
}

#[test]
fn every_overlay_in_every_form_builds_the_same_objects_over_a_spec() {
    let dir = temp_dir("convert-overlays");
    // Named as the kustomize example's patches name their TrainSpec.
    let spec = root().join("examples/kustomize/spec/trainspec.yaml");
    let spec = spec.to_str().unwrap();
    for overlay in overlays() {
        let stem = overlay.file_stem().unwrap().to_str().unwrap();
        let expected = build(&dir, &[spec, "-O", overlay.to_str().unwrap()]);
        let original = std::fs::read_to_string(&overlay).unwrap();
        for (form, extension) in FORMS {
            let mut args = vec![overlay.to_str().unwrap(), "--as-overlay", "--to", form];
            if form == "trainspec" {
                args.extend(["--name", "resnet"]);
            }
            let written = convert(&dir, &args);
            let file = dir.join(format!("{stem}.as-{form}.{extension}"));
            std::fs::write(&file, &written).unwrap();
            assert_eq!(
                build(&dir, &[spec, "-O", file.to_str().unwrap()]),
                expected,
                "{} as {form} does something else:\n{written}",
                overlay.display()
            );
            let kept = comments(&written);
            for comment in comments(&original) {
                assert!(
                    kept.contains(&comment),
                    "{} as {form} lost `{comment}`:\n{written}",
                    overlay.display()
                );
            }
            let checked = trainc(&dir, &["check", "--as-overlay", file.to_str().unwrap()]);
            assert_eq!(checked.status.code(), Some(0), "{}", text(&checked.stderr));
        }
    }
}

/// A YAML spec with what TOML writes otherwise: quoted words, a block
/// string, keys with dots, comments on list items and after values, a
/// `null`; each written back where it was.
#[test]
fn yaml_to_toml_keeps_values_their_type_and_comments_their_place() {
    let dir = temp_dir("convert-yaml");
    std::fs::write(
        dir.join("job.yaml"),
        "# The job.\n\nname: yjob  # its name\nimage: ghcr.io/acme/x:1.0\nscript: /app/train.py\nargs:\n  # the flag\n  - --fast\n  - \"yes\"\n  - \"1e3\"\nenv:\n  NOTE: |\n    two\n    lines\n  ON: \"on\"\nlabels:\n  acme.com/team: ml\nresources:\n  gpus: ~\n",
    )
    .unwrap();
    let output = trainc(&dir, &["convert", "job.yaml", "--to", "toml"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let toml = text(&output.stdout);
    assert_eq!(
        toml,
        "# The job.\n\nname = \"yjob\"  # its name\nimage = \"ghcr.io/acme/x:1.0\"\nscript = \"/app/train.py\"\nargs = [\n  # the flag\n  \"--fast\",\n  \"yes\",\n  \"1e3\",\n]\nresources = {}\n\n[env]\nNOTE = \"\"\"\ntwo\nlines\n\"\"\"\nON = \"on\"\n\n[labels]\n\"acme.com/team\" = \"ml\"\n"
    );
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("`gpus` is `null`, which TOML cannot write")
            && stderr.contains("job.yaml:19:3"),
        "{stderr}"
    );
    std::fs::write(dir.join("job.toml"), &toml).unwrap();
    let yaml = std::fs::read_to_string(dir.join("job.yaml")).unwrap();
    std::fs::write(
        dir.join("valid.yaml"),
        yaml.replace("resources:\n  gpus: ~\n", ""),
    )
    .unwrap();
    assert_eq!(build(&dir, &["job.toml"]), build(&dir, &["valid.yaml"]));
    assert_eq!(
        convert(&dir, &["job.toml", "--to", "yaml"]),
        "# The job.\n\nname: yjob  # its name\nimage: ghcr.io/acme/x:1.0\nscript: /app/train.py\nargs:\n# the flag\n- --fast\n- \"yes\"\n- \"1e3\"\nresources: {}\nenv:\n  NOTE: |\n    two\n    lines\n  \"ON\": \"on\"\nlabels:\n  acme.com/team: ml\n"
    );
}

/// What a form cannot say is an error that says what to do, and nothing is
/// written; a file that is no spec is said to be none.
#[test]
fn what_a_form_cannot_say_is_an_error() {
    let dir = temp_dir("convert-errors");
    let cases: [(&str, &str, &[&str], i32, &str); 6] = [
        (
            "renames.toml",
            "name = \"{{ name }}-gpu\"\nreplicas = 2\n",
            &["--as-overlay", "--to", "trainspec", "--name", "demo"],
            1,
            "nameSuffix",
        ),
        (
            "unnamed.toml",
            "unset = [\"resources.gpus\"]\n",
            &["--as-overlay", "--to", "trainspec"],
            1,
            "--name NAME",
        ),
        (
            "nameless.toml",
            "image = \"x:1\"\nscript = \"/t.py\"\n",
            &["--to", "trainspec"],
            1,
            "--as-overlay",
        ),
        (
            "job.yaml",
            "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata:\n  name: x\n",
            &["--to", "toml"],
            1,
            "trainc import",
        ),
        (
            "replaced.toml",
            "unset = [\"env\"]\n[env]\nA = \"1\"\n",
            &["--as-overlay", "--to", "trainspec", "--name", "demo"],
            1,
            "kustomize merges",
        ),
        (
            "broken.toml",
            "name = \n",
            &["--to", "yaml"],
            1,
            "broken.toml:1",
        ),
    ];
    for (file, content, args, status, said) in cases {
        std::fs::write(dir.join(file), content).unwrap();
        let mut all = vec!["convert", file];
        all.extend(args);
        let output = trainc(&dir, &all);
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(status), "{file}: {stderr}");
        assert!(
            output.stdout.is_empty(),
            "{file}: wrote {}",
            text(&output.stdout)
        );
        assert!(stderr.contains(said), "{file}: `{said}` not in\n{stderr}");
    }
    let output = trainc(&dir, &["convert", "missing.toml", "--to", "yaml"]);
    assert_eq!(output.status.code(), Some(2));
    let output = trainc(&dir, &["convert", "renames.toml", "--to", "json"]);
    assert_eq!(output.status.code(), Some(2));
}
