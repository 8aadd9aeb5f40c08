use super::*;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("trainc-atomic-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn count(dir: &Path) -> usize {
    std::fs::read_dir(dir).unwrap().count()
}

fn file(name: &str) -> PathBuf {
    PathBuf::from(name)
}

#[test]
fn a_failure_leaves_nothing_and_symlinks_are_not_followed() {
    let dir = scratch("all");
    // The second file cannot be written (a file is in the way of its
    // directory): the first must not appear either.
    std::fs::write(dir.join("blocker"), "").unwrap();
    let files = [
        (file("a.yaml"), "a: 1\n"),
        (file("blocker/b.yaml"), "b: 1\n"),
    ];
    assert!(write_all(&dir, &files, Existing::Replace).is_err());
    assert_eq!(count(&dir), 1, "nothing left behind but the blocker");
    std::fs::remove_file(dir.join("blocker")).unwrap();
    // A symlink at the target is replaced, not written through.
    let outside = dir.join("outside.txt");
    std::fs::write(&outside, "keep").unwrap();
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(&outside, dir.join("c.yaml")).unwrap();
        write_all(&dir, &[(file("c.yaml"), "c: 1\n")], Existing::Replace).unwrap();
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep");
        assert_eq!(
            std::fs::read_to_string(dir.join("c.yaml")).unwrap(),
            "c: 1\n"
        );
    }
    // A rename that fails halfway (the second target is a directory)
    // leaves the first file as it was, and nothing else behind.
    std::fs::write(dir.join("d.yaml"), "old\n").unwrap();
    std::fs::create_dir(dir.join("e.yaml")).unwrap();
    let before = count(&dir);
    let failed = write_all(
        &dir,
        &[(file("d.yaml"), "new\n"), (file("e.yaml"), "e\n")],
        Existing::Replace,
    );
    assert!(failed.is_err());
    assert_eq!(
        std::fs::read_to_string(dir.join("d.yaml")).unwrap(),
        "old\n"
    );
    assert_eq!(count(&dir), before, "no temporary or backup left");
    // Placing fails at the second file (it exists): the first, placed
    // already, is taken back.
    let failed = write_all(
        &dir,
        &[(file("f.yaml"), "f\n"), (file("d.yaml"), "d\n")],
        Existing::Keep,
    );
    assert_eq!(
        failed.unwrap_err().1.kind(),
        std::io::ErrorKind::AlreadyExists
    );
    assert!(!dir.join("f.yaml").exists());
    assert_eq!(count(&dir), before);
    let kept = write_all(&dir, &[(file("outside.txt"), "x")], Existing::Keep).unwrap_err();
    assert_eq!(kept.1.kind(), std::io::ErrorKind::AlreadyExists);
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn directories_inside_are_made_and_never_followed() {
    let dir = scratch("inside");
    let out = dir.join("out");
    let elsewhere = dir.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    // Made where missing, the output directory too.
    write_all(
        &out,
        &[(file("a/b/c.yaml"), "c\n"), (file("d.yaml"), "d\n")],
        Existing::Keep,
    )
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(out.join("a/b/c.yaml")).unwrap(),
        "c\n"
    );
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(&elsewhere, out.join("team")).unwrap();
        let (path, error) = write_all(
            &out,
            &[(file("x.yaml"), "x\n"), (file("team/job.yaml"), "job\n")],
            Existing::Replace,
        )
        .unwrap_err();
        assert_eq!(path, out.join("team/job.yaml"));
        assert!(error.to_string().contains("is a symbolic link"), "{error}");
        assert_eq!(count(&elsewhere), 0, "nothing written through the link");
        assert!(!out.join("x.yaml").exists(), "all or nothing");
        // Deeper: a link below a directory made on the way.
        std::os::unix::fs::symlink(&elsewhere, out.join("a/b/deep")).unwrap();
        let failed = write_all(
            &out,
            &[
                (file("n/new.yaml"), "n\n"),
                (file("a/b/deep/x.yaml"), "x\n"),
            ],
            Existing::Keep,
        );
        assert!(failed.is_err());
        assert_eq!(count(&elsewhere), 0);
        assert!(
            !out.join("n").exists(),
            "the directory made is removed again"
        );
    }
    // Paths that leave the directory are refused before anything happens.
    for bad in ["../x.yaml", "/etc/x.yaml", "a/../../x.yaml", ""] {
        assert!(
            write_all(&out, &[(file(bad), "x")], Existing::Replace).is_err(),
            "{bad}"
        );
    }
    assert!(!dir.join("x.yaml").exists());
    // A failure in an output directory made for it leaves no directory.
    let fresh = dir.join("fresh");
    std::fs::write(dir.join("blocker"), "").unwrap();
    let failed = write_all(
        &fresh,
        &[(file("a.yaml"), "a\n"), (file("a.yaml/b.yaml"), "b\n")],
        Existing::Keep,
    );
    assert!(failed.is_err());
    assert!(!fresh.exists());
    let _ = std::fs::remove_dir_all(&dir);
}
