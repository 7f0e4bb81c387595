//! `--max-bytes SIZE`: the largest trace file a command reads. Below the file's size every
//! command that loads a trace refuses it before parsing, naming the sizes and the flag; at or
//! above it the file loads; a bad size is refused by the argument parser.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

fn fixture() -> (String, u64) {
    let p = common::repo_root().join("tests/fixtures/smartcomment/mem0_commented.json");
    let size = std::fs::metadata(&p).unwrap().len();
    (p.display().to_string(), size)
}

/// Runs `memtrace ARGS` with `stdin` on standard input: (exit code, stdout, stderr).
fn run(args: &[&str], stdin: &[u8]) -> (i32, String, String) {
    let out = common::memtrace_with_stdin(args, stdin);
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (
        out.status.code().unwrap_or(-1),
        text(&out.stdout),
        text(&out.stderr),
    )
}

#[test]
fn every_command_that_reads_a_trace_refuses_it_under_the_limit_and_names_the_flag() {
    let (file, size) = fixture();
    let below = (size - 1).to_string();
    for command in [
        &["info", &file][..],
        &["attribute", &file],
        &["story", &file],
        &["roles", &file],
        &["report", &file, "--out", "/nonexistent-memtrace-report"],
        &["start-points", &file],
        &["search", &file, "coffee"],
        &[
            "convert",
            &file,
            "--output",
            "/nonexistent-memtrace-out.json",
        ],
    ] {
        let mut args = command.to_vec();
        args.extend(["--max-bytes", &below]);
        let (code, _, err) = run(&args, b"");
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(
            err.contains(&format!("({size} bytes); the limit is")),
            "{args:?}: {err}"
        );
        assert!(
            err.contains("Raise the limit with --max-bytes 100M, or split the trace"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn the_limit_raised_to_the_file_loads_it_and_standard_input_is_bounded_too() {
    let (file, size) = fixture();
    let (code, out, err) = run(&["info", &file, "--max-bytes", &size.to_string()], b"");
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("operations"), "{out}");
    let (code, _, err) = run(&["attribute", &file, "--max-bytes", "1G"], b"");
    assert_eq!(code, 0, "{err}");
    let bytes = std::fs::read(&file).unwrap();
    let (code, _, err) = run(
        &["info", "-", "--max-bytes", &(size - 1).to_string()],
        &bytes,
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("the limit is"), "{err}");
    let (code, _, err) = run(&["info", "-", "--max-bytes", &size.to_string()], &bytes);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn a_bad_size_is_refused_with_what_is_accepted() {
    let (file, _) = fixture();
    for (bad, says) in [
        ("abc", "not a size"),
        ("2X", "not a size"),
        ("-5", "not a size"),
        ("0", "at least 1 byte"),
    ] {
        let (code, _, err) = run(&["info", &file, &format!("--max-bytes={bad}")], b"");
        assert_eq!(code, 2, "{bad}: {err}");
        assert!(
            err.contains(says) && err.contains("--max-bytes"),
            "{bad}: {err}"
        );
    }
}
