//! The core is pure, and so are the reference memory systems the hosts run: outside their tests,
//! no file of theirs names the file system, the network, threads, processes, the environment, the
//! clock or the standard streams. Time and HTTP reach them from the hosts (the core's `Transport`
//! and `Sleep`, the recorder's `Clock`), which is what lets the same code run natively, in the
//! browser and in the tests.

use std::path::Path;

use super::{code_only, read, root, rust_files};

/// The crates' `src` folders that must stay pure.
const PURE: &[&str] = &["src", "crates/testbed/memsys/src"];

/// What only a host may name: each is I/O, a clock or a thread.
const IO: &[&str] = &[
    "std::fs",
    "std::net",
    "std::thread",
    "std::process",
    "std::env",
    "std::io::stdin",
    "std::io::stdout",
    "std::io::stderr",
    "Instant::now",
    "SystemTime",
    "println!",
    "eprintln!",
    "print!",
    "eprint!",
    "dbg!",
];

/// `code` (comments and literals already blanked) with every `#[cfg(test)]` item blanked: from
/// the attribute to the end of the item (its `;`, or the `}` that closes its first `{`).
fn without_tests(code: &str) -> String {
    let mut out = code.to_owned();
    let mut from = 0;
    while let Some(at) = out[from..].find("#[cfg(test)]").map(|n| from + n) {
        let rest = &out[at..];
        let semi = rest.find(';');
        let open = rest.find('{').filter(|o| semi.is_none_or(|s| *o < s));
        let end = match (open, semi) {
            (Some(open), _) => {
                let mut depth = 0usize;
                let mut end = rest.len();
                for (i, c) in rest.char_indices().skip_while(|(i, _)| *i < open) {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = i + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                end
            }
            (_, Some(semi)) => semi + 1,
            (None, None) => rest.len(),
        };
        let blank: String = out[at..at + end]
            .chars()
            .map(|c| if c == '\n' { '\n' } else { ' ' })
            .collect();
        out.replace_range(at..at + end, &blank);
        from = at + end;
    }
    out
}

/// What of [`IO`] the non-test code of `text` names, as `name` each.
fn io_named(text: &str) -> Vec<&'static str> {
    let code = without_tests(&code_only(text));
    IO.iter()
        .copied()
        .filter(|name| {
            code.match_indices(name).any(|(at, _)| {
                // `print!` is not `eprint!` or `println!`'s tail; a word starts at `at`.
                !code[..at]
                    .chars()
                    .next_back()
                    .is_some_and(|c| c.is_alphanumeric() || c == '_')
            })
        })
        .collect()
}

/// A core file that is a test module of its own (`tests.rs`, `*_tests.rs`, `tests/…`).
fn is_test_file(file: &Path) -> bool {
    file.iter().any(|p| p == "tests" || p == "tests.rs")
        || file
            .file_stem()
            .is_some_and(|s| s.to_string_lossy().ends_with("_tests"))
}

#[test]
fn the_core_names_no_io() {
    let mut bad = Vec::new();
    let files: Vec<_> = PURE
        .iter()
        .flat_map(|d| rust_files(&root().join(d)))
        .collect();
    assert!(files.len() > 100, "the pure crates' files are found");
    for f in files {
        if is_test_file(&f) {
            continue;
        }
        for name in io_named(&read(&f)) {
            bad.push(format!("{}: {name}", f.display()));
        }
    }
    assert!(
        bad.is_empty(),
        "the core names I/O, a clock or a thread outside its tests (take it in through a \
         trait the host implements, or move it to a host): {bad:#?}"
    );
}

#[test]
fn io_in_core_code_is_reported_and_test_code_is_not() {
    let text = "use std::fs;\nfn f() { let t = Instant::now(); println!(\"{t:?}\"); }\n\
                // std::net in a comment\nconst S: &str = \"std::thread\";\n\
                #[cfg(test)]\nmod tests { fn g() { std::env::var(\"X\"); eprintln!(\"x\"); } }\n\
                #[cfg(test)]\nuse std::process;\nfn h() {}\n";
    assert_eq!(io_named(text), ["std::fs", "Instant::now", "println!"]);
    assert!(is_test_file(Path::new("src/session/tests.rs")));
    assert!(is_test_file(Path::new("src/text/text_tests.rs")));
    assert!(!is_test_file(Path::new("src/session/open.rs")));
}
