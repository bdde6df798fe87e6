//! `nvtxr record`'s outputs: a write failure keeps the recording, the
//! recording directory is private, outputs go through symlinks and
//! descriptors and keep modes, bad outputs are refused before the program
//! runs.

mod common;

use common::*;
use nvtxr_harness::artifacts;
use std::path::Path;
use std::process::Command;

fn scratch(name: &str) -> common::Scratch {
    scratch_in("record", name)
}

#[test]
fn write_failure_is_reported_and_the_recording_kept() {
    let exe = scenarios();
    // A place that cannot be written is refused before the program runs.
    let never = scratch("never-run").join("ran");
    let out = Command::new(&artifacts().nvtxr)
        .args([
            "record",
            "-q",
            "-o",
            "/nonexistent/dir/trace.json",
            "--",
            "touch",
        ])
        .arg(&never)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert_eq!(
        text(&out),
        "nvtxr: cannot write /nonexistent/dir/trace.json: the directory /nonexistent/dir does not exist\n"
    );
    assert!(!never.exists(), "the program did not run");
    // A write that fails after the run keeps the recording.
    {
        let (target, why) = ("/dev/full", "No space left on device");
        let out = Command::new(&artifacts().nvtxr)
            .args([
                "record",
                "-q",
                "-o",
                target,
                "--",
                exe.to_str().unwrap(),
                "worker",
            ])
            .output()
            .unwrap();
        let msg = text(&out);
        assert_eq!(out.status.code(), Some(1), "{msg}");
        assert!(
            msg.contains(&format!("nvtxr: cannot write {target}: {why}")),
            "{msg}"
        );
        let kept = kept_recording_in(&msg).expect("says where the recording is");
        let dir = scratch("kept");
        let again = Command::new(&artifacts().nvtxr)
            .args(["report", "-q", "-o"])
            .arg(dir.join("trace.json"))
            .arg(kept)
            .output()
            .unwrap();
        assert!(again.status.success(), "{}", text(&again));
        assert_eq!(
            count(
                &events(&load(&dir.join("trace.json"))),
                "X",
                "exec'd worker"
            ),
            50
        );
        std::fs::remove_dir_all(kept).unwrap();
    }
}

#[test]
fn the_recording_directory_is_private_and_never_follows_planted_files() {
    let (out, _, _) = scenario("dir_mode", &[]);
    assert!(text(&out).contains("mode 700"), "{}", text(&out));
    // By hand, a directory that is a symlink or open to others is refused,
    // and nothing is written through it.
    let dir = scratch("planted");
    let victim = dir.join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let target = dir.join("elsewhere");
    std::fs::create_dir(&target).unwrap();
    std::os::unix::fs::symlink(&target, dir.join("link")).unwrap();
    let open = dir.join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    for (raw, why) in [
        (
            dir.join("link"),
            "is not a directory (a symlink is refused)",
        ),
        (open.clone(), "is open to other users (mode 777)"),
    ] {
        let out = Command::new(scenarios())
            .arg("worker")
            .env(nvtxr_harness::INJECTION_PATH_VAR, &artifacts().record_tool)
            .env("NVTXR_RECORD_DIR", &raw)
            .output()
            .unwrap();
        assert!(out.status.success());
        assert!(text(&out).contains(why), "{}", text(&out));
    }
    assert_eq!(std::fs::read_dir(&target).unwrap().count(), 0);
    assert_eq!(std::fs::read_dir(&open).unwrap().count(), 0);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
}

#[test]
fn two_runs_writing_one_output_leave_a_valid_trace() {
    let dir = scratch("same-output");
    let runs: Vec<_> = (0..2)
        .map(|_| {
            record_command(&dir, &["-q"], &[scenarios().to_str().unwrap(), "many"])
                .spawn()
                .unwrap()
        })
        .collect();
    for mut run in runs {
        assert!(run.wait().unwrap().success());
    }
    let ev = events(&load(&dir.join("trace.json")));
    assert_eq!(count(&ev, "i", "tick"), 80000, "one run's whole trace");
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(".nvtxr-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn outputs_go_through_symlinks_and_descriptors_never_over_them() {
    let dir = scratch("links");
    let exe = scenarios();
    let worker = [exe.to_str().unwrap(), "worker"];
    // A symlink to a file: the file gets the trace, the link stays a link.
    std::fs::create_dir(dir.join("real")).unwrap();
    std::os::unix::fs::symlink("real/trace.json", dir.join("link.json")).unwrap();
    let link = dir.join("link.json");
    let out = nvtxr(
        &[
            &["record", "-q", "-o", link.to_str().unwrap(), "--"][..],
            &worker,
        ]
        .concat(),
        &[],
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(
        count(
            &events(&load(&dir.join("real/trace.json"))),
            "X",
            "exec'd worker"
        ),
        50
    );
    // A symlink to this process's standard output (as /dev/stdout is):
    // the trace goes where the shell sent it; the summary goes to stderr.
    let stdout_link = dir.join("stdout.json");
    std::os::unix::fs::symlink("/proc/self/fd/1", &stdout_link).unwrap();
    let sent = dir.join("sent.json");
    let out = Command::new(&artifacts().nvtxr)
        .args(["record", "-o", stdout_link.to_str().unwrap(), "--"])
        .args(worker)
        .stdout(std::fs::File::create(&sent).unwrap())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(std::fs::symlink_metadata(&stdout_link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(count(&events(&load(&sent)), "X", "exec'd worker"), 50);
    assert!(
        text(&out).contains("NVTX range summary"),
        "the summary, on stderr"
    );
    // Not a regular file: written in place, never replaced.
    let out = nvtxr(
        &[&["record", "-q", "-o", "/dev/null", "--"][..], &worker].concat(),
        &[],
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(std::fs::metadata("/dev/null")
        .unwrap()
        .file_type()
        .is_char_device());
    let left: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".nvtxr-"))
        .collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");
}

use std::os::unix::fs::FileTypeExt;

#[test]
fn outputs_honour_the_umask_and_keep_an_existing_files_mode() {
    let dir = scratch("modes");
    let exe = scenarios();
    let run = |umask: &str, output: &Path| {
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "umask {umask} && exec \"$0\" record -q -o \"$1\" -- \"$2\" worker"
            ))
            .arg(&artifacts().nvtxr)
            .arg(output)
            .arg(&exe)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out));
    };
    run("077", &dir.join("private.json"));
    assert_eq!(mode(&dir.join("private.json")), 0o600);
    run("022", &dir.join("shared.json"));
    assert_eq!(mode(&dir.join("shared.json")), 0o644);
    let existing = dir.join("existing.json");
    std::fs::write(&existing, "old").unwrap();
    std::fs::set_permissions(
        &existing,
        std::os::unix::fs::PermissionsExt::from_mode(0o640),
    )
    .unwrap();
    run("022", &existing);
    assert_eq!(mode(&existing), 0o640, "an existing file keeps its mode");
    assert_eq!(count(&events(&load(&existing)), "X", "exec'd worker"), 50);
}

#[test]
fn bad_outputs_and_settings_are_refused_before_the_program_runs() {
    let dir = scratch("up-front");
    let ran = dir.join("ran");
    let touch = ["--", "touch", ran.to_str().unwrap()];
    let record_args = |extra: &[&str]| -> Vec<String> {
        [&["record", "-q"][..], extra, &touch]
            .concat()
            .into_iter()
            .map(String::from)
            .collect()
    };
    let d = dir.to_str().unwrap().to_string();
    let same = format!("{d}/same.json");
    /// Options, environment, what nvtxr says.
    type Case<'a> = (Vec<&'a str>, Vec<(&'a str, &'a str)>, String);
    let cases: Vec<Case> = vec![
        (vec!["-o", &d], vec![], format!("{d} is a directory")),
        (
            vec!["-o", &same, "--json", &same],
            vec![],
            "are the same file".into(),
        ),
        (
            vec!["-o", "t.json"],
            vec![("NVTXR_RECORD_TOOL", "/nonexistent/libtool.so")],
            "NVTXR_RECORD_TOOL=/nonexistent/libtool.so: No such file or directory".into(),
        ),
        (
            vec!["-o", "t.json"],
            vec![("NVTXR_RECORD_TOOL", "/etc/passwd")],
            "NVTXR_RECORD_TOOL=/etc/passwd: not a shared library".into(),
        ),
        (
            vec!["-o", "t.json"],
            vec![("NVTXR_RECORD_CLOCK", "fast")],
            "NVTXR_RECORD_CLOCK=fast: unknown clock (use auto or monotonic)".into(),
        ),
    ];
    for (extra, env, says) in cases {
        let args = record_args(&extra);
        let out = nvtxr(&args.iter().map(String::as_str).collect::<Vec<_>>(), &env);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {}", text(&out));
        assert!(text(&out).contains(&says), "{extra:?}: {}", text(&out));
        assert!(!ran.exists(), "{extra:?}: the program ran");
    }
    // An unknown option before the command is not taken for the command.
    let out = nvtxr(
        &["record", "--bogus", "--", "touch", ran.to_str().unwrap()],
        &[],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("unexpected argument '--bogus'"),
        "{}",
        text(&out)
    );
    assert!(!ran.exists());
    // --keep: another user's open directory is refused, and left as it was.
    let theirs = dir.join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    std::fs::set_permissions(&theirs, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
    let args = record_args(&["--keep", theirs.to_str().unwrap()]);
    let out = nvtxr(&args.iter().map(String::as_str).collect::<Vec<_>>(), &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("belongs to another user"),
        "{}",
        text(&out)
    );
    assert_eq!(mode(&theirs), 0o777, "not chmod'ed");
    assert!(!ran.exists());
    // --keep in a folder that does not exist: the error names it.
    let nowhere = dir.join("no/such/rec");
    let args = record_args(&["--keep", nowhere.to_str().unwrap()]);
    let out = nvtxr(&args.iter().map(String::as_str).collect::<Vec<_>>(), &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let says = format!("{}: No such file or directory", nowhere.display());
    assert!(text(&out).contains(&says), "{}", text(&out));
    assert!(!ran.exists());
}

#[test]
fn a_write_past_the_file_size_limit_is_reported_and_the_recording_kept() {
    // 1100 threads: 64 KiB chunks (under the limit), a trace over 128 KiB.
    let dir = scratch("fsize");
    let out = Command::new("sh")
        .arg("-c")
        .arg("ulimit -f 128 && exec \"$0\" record -q -o \"$1\" -- \"$2\" many_threads")
        .arg(&artifacts().nvtxr)
        .arg(dir.join("trace.json"))
        .arg(scenarios())
        .env("TMPDIR", &dir)
        .output()
        .unwrap();
    let msg = text(&out);
    assert_eq!(out.status.code(), Some(1), "not killed by SIGXFSZ: {msg}");
    assert!(msg.contains("File too large"), "{msg}");
    let kept = kept_recording_in(&msg).expect("says where the recording is");
    assert!(Path::new(kept).starts_with(&dir), "kept in $TMPDIR: {kept}");
    assert!(!dir.join("trace.json").exists(), "no partial trace");
    let again = nvtxr(
        &[
            "report",
            "-q",
            "-o",
            dir.join("again.json").to_str().unwrap(),
            kept,
        ],
        &[],
    );
    assert!(again.status.success(), "{}", text(&again));
    assert_eq!(
        count(&events(&load(&dir.join("again.json"))), "X", "thread"),
        1100
    );
}
