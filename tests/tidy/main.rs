//! Style checks of the whole workspace, run as a test (in the manner of rust-analyzer's tidy):
//! layering across crates, hosts entering the core by its door (`door.rs`), no import circles
//! in a crate, a core that names no I/O (`pure.rs`), the 600-line file bound, the 150-line
//! function bound, no `#[path]` naming a module against its file, and one definition per
//! concept name. The allow-lists name what was already there; they may only shrink (a listed
//! item that is fixed fails the test until it is taken off the list). Native only: it reads the
//! source tree. `cargo test --workspace` (scripts/test) runs it.

#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

mod code;
mod door;
mod imports;
mod lexicon;
mod modules;
mod pure;

use code::{code_only, defined_items, long_functions, misnamed_path_modules};
use modules::Crate;

const MAX_FILE_LINES: usize = 600;
const MAX_FN_LINES: usize = 150;

/// Files over [`MAX_FILE_LINES`] when the check was written.
const LONG_FILES: &[&str] = &[];

/// Functions (`file:name`) over [`MAX_FN_LINES`] when the check was written.
const LONG_FNS: &[&str] = &[
    "crates/hosts/cli/tests/optimize_cli.rs:the_loop_runs_resumes_and_exports_with_every_request_checked",
    "crates/hosts/web/src/app.rs:app",
    "crates/hosts/web/src/components/draw.rs:draw",
    "crates/hosts/web/src/components/graph.rs:graph",
    "crates/hosts/web/src/components/llm_run.rs:run_panel",
    "crates/hosts/web/src/components/optimize.rs:optimize_view",
    "crates/hosts/web/src/components/provider.rs:provider_form",
    "crates/testbed/memsys/src/amem/mod.rs:construct",
    "crates/testbed/memsys/src/evaluate.rs:evaluate",
    "crates/testbed/memsys/src/evermemos/mod.rs:segment",
    "crates/testbed/memsys/src/evermemos/profile.rs:update_profiles",
    "crates/testbed/memsys/src/pipeline.rs:step",
    "crates/testbed/memsys/src/random_shape/run.rs:construct",
    "src/attribution/infoflow/follow.rs:follow",
    "src/format/validate.rs:validate",
    "src/layout/mod.rs:layout",
    "tests/algo_checks/graphs.rs:memory",
];

/// Names of one concept each: defined (struct, enum, union, trait, type, fn) once in the
/// workspace's `src` folders, whatever the visibility (re-exports are not definitions).
const UNIQUE_NAMES: &[&str] = &["Verdict", "NodeRef", "shorten"];

/// The hosts and what only hosts use (transports, provider options): no crate below them may
/// use them.
const HOSTS: &[&str] = &[
    "memtrace_web",
    "memtrace_cli",
    "memtrace_wasm",
    "memtrace_py",
    "memtrace_native",
    "memtrace_fetch",
];

/// Crates of the workspace by their Rust name, and the crates each may not use.
const LAYERS: &[(&str, &str, &[&[&str]])] = &[
    // The core is what a user embeds: the recorder and the reference memory systems are not in it.
    (
        "memtrace",
        "src",
        &[&["memtrace_record", "memtrace_memsys"], HOSTS],
    ),
    // The recorder sits on the core (its calendar), below the reference memory systems.
    (
        "memtrace_record",
        "crates/record/src",
        &[&["memtrace_memsys"], HOSTS],
    ),
    // The reference memory systems sit above the core and the recorder, below every host (pure,
    // so no transport either).
    ("memtrace_memsys", "crates/testbed/memsys/src", &[HOSTS]),
    (
        "memtrace_web",
        "crates/hosts/web/src",
        &[&[
            "memtrace_cli",
            "memtrace_wasm",
            "memtrace_py",
            "memtrace_native",
        ]],
    ),
    (
        "memtrace_cli",
        "crates/hosts/cli/src",
        &[&["memtrace_web", "memtrace_wasm", "memtrace_py"]],
    ),
    (
        "memtrace_wasm",
        "crates/hosts/wasm/src",
        &[&[
            "memtrace_web",
            "memtrace_cli",
            "memtrace_py",
            "memtrace_native",
        ]],
    ),
    // The native side (HTTP transport, provider options) is shared by the CLI and the Python
    // package; it uses no host.
    (
        "memtrace_native",
        "crates/io/native/src",
        &[&[
            "memtrace_web",
            "memtrace_cli",
            "memtrace_wasm",
            "memtrace_py",
        ]],
    ),
    (
        "memtrace_py",
        "crates/hosts/py/src",
        &[&["memtrace_web", "memtrace_cli", "memtrace_wasm"]],
    ),
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The `.rs` files under `dir`, relative to the workspace root, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p.strip_prefix(root()).unwrap_or(&p).to_path_buf());
            }
        }
    }
    out.sort();
    out
}

/// The tidy test's own fixtures: code written to break the rules, read only by the tests that
/// show a check fails on it.
const FIXTURES: &str = "tests/tidy/fixtures";

/// Every source file of the workspace's crates (not generated, fuzz or vendored code).
fn all_files() -> Vec<PathBuf> {
    let mut out = rust_files(&root().join("src"));
    let tests = rust_files(&root().join("tests"));
    out.extend(tests.into_iter().filter(|f| !f.starts_with(FIXTURES)));
    for c in crate_dirs() {
        out.extend(rust_files(&root().join(&c).join("src")));
        out.extend(rust_files(&root().join(&c).join("tests")));
    }
    out
}

/// The folders under `crates/` that hold a crate (a `Cargo.toml`), grouped by role
/// (`crates/hosts/cli`, `crates/record`, …), relative to the workspace root, sorted.
fn crate_dirs() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::from("crates")];
    while let Some(d) = stack.pop() {
        if root().join(&d).join("Cargo.toml").is_file() {
            out.push(d);
            continue;
        }
        let Ok(entries) = fs::read_dir(root().join(&d)) else {
            continue;
        };
        stack.extend(
            entries
                .flatten()
                .filter(|e| e.path().is_dir())
                .map(|e| d.join(e.file_name())),
        );
    }
    out.sort();
    out
}

fn read(p: &Path) -> String {
    fs::read_to_string(root().join(p)).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// `a::b` for `src/a/b.rs` or `src/a/b/mod.rs` (relative to the crate's `src`).
fn module_path(file: &Path) -> String {
    let parts: Vec<String> = file
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .skip_while(|p| p != "src")
        .skip(1)
        .collect();
    let mut parts = parts;
    if let Some(last) = parts.last_mut() {
        *last = last.trim_end_matches(".rs").to_owned();
    }
    if parts
        .last()
        .is_some_and(|l| l == "mod" || l == "lib" || l == "main")
    {
        parts.pop();
    }
    parts.join("::")
}

/// The crates of the workspace: each crate's `src` (its `src/bin/*.rs` each a crate of its own),
/// as (folder, crate).
fn crates() -> Vec<(PathBuf, Crate)> {
    let mut dirs = vec![PathBuf::from("src")];
    dirs.extend(
        crate_dirs()
            .into_iter()
            .map(|c| c.join("src"))
            .filter(|d| root().join(d).is_dir()),
    );
    dirs.iter().flat_map(|d| crates_in(d)).collect()
}

/// The crates of one `src` folder: the library and main binary, and each `bin/` binary.
fn crates_in(dir: &Path) -> Vec<(PathBuf, Crate)> {
    let mut groups: BTreeMap<PathBuf, Vec<(PathBuf, String, String)>> = BTreeMap::new();
    for f in rust_files(&root().join(dir)) {
        let module = module_path(&f);
        let (group, module) = match module.strip_prefix("bin::") {
            Some(bin) => {
                let (name, inner) = bin.split_once("::").unwrap_or((bin, ""));
                (dir.join("bin").join(name), inner.to_owned())
            }
            None => (dir.to_path_buf(), module),
        };
        let code = code_only(&read(&f));
        groups.entry(group).or_default().push((f, module, code));
    }
    groups
        .into_iter()
        .map(|(dir, files)| (dir, Crate::new(files)))
        .collect()
}

/// The import circles of each crate: strongly connected groups of more than one file, as
/// `crate folder: a.rs, b/c.rs`.
fn circles() -> Vec<String> {
    let mut out = Vec::new();
    for (dir, krate) in crates() {
        let name = |f: &PathBuf| f.strip_prefix(&dir).unwrap_or(f).display().to_string();
        let edges: BTreeMap<String, BTreeSet<String>> = krate
            .edges()
            .iter()
            .map(|(f, to)| (name(f), to.iter().map(name).collect()))
            .collect();
        for group in strongly_connected(&edges) {
            if group.len() > 1 {
                out.push(format!("{}: {}", dir.display(), group.join(", ")));
            }
        }
    }
    out
}

/// Strongly connected groups of `edges` (each sorted), by repeated reachability: fine for the
/// few files of a folder.
fn strongly_connected(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let reach = |from: &str| {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.to_owned()];
        while let Some(n) = stack.pop() {
            for m in edges.get(&n).into_iter().flatten() {
                if seen.insert(m.clone()) {
                    stack.push(m.clone());
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<&String, BTreeSet<String>> =
        edges.keys().map(|k| (k, reach(k))).collect();
    let mut done = BTreeSet::new();
    let mut out = Vec::new();
    for k in edges.keys() {
        if done.contains(k) {
            continue;
        }
        let group: Vec<String> = edges
            .keys()
            .filter(|m| *m == k || (reaches[k].contains(*m) && reaches[*m].contains(k)))
            .cloned()
            .collect();
        done.extend(group.iter().cloned());
        out.push(group);
    }
    out
}

/// The files of the workspace's crates' `src` folders (not tests).
fn src_files() -> Vec<PathBuf> {
    all_files()
        .into_iter()
        .filter(|f| f.iter().any(|p| p == "src"))
        .collect()
}

/// Fails with what is new and what was fixed but is still listed.
fn against(found: &[String], allowed: &[&str], what: &str) {
    let found: BTreeSet<&str> = found.iter().map(String::as_str).collect();
    let allowed: BTreeSet<&str> = allowed.iter().copied().collect();
    let new: Vec<&&str> = found.difference(&allowed).collect();
    let fixed: Vec<&&str> = allowed.difference(&found).collect();
    assert!(
        new.is_empty() && fixed.is_empty(),
        "{what}:\n  new (fix them): {new:#?}\n  fixed (take them off the list): {fixed:#?}"
    );
}

#[test]
fn files_stay_under_the_line_bound() {
    let long: Vec<String> = all_files()
        .into_iter()
        .filter(|f| read(f).lines().count() > MAX_FILE_LINES)
        .map(|f| f.display().to_string())
        .collect();
    against(&long, LONG_FILES, "files over 600 lines");
}

#[test]
fn functions_stay_under_the_line_bound() {
    let mut long = Vec::new();
    for f in all_files() {
        for (name, _) in long_functions(&code_only(&read(&f))) {
            long.push(format!("{}:{name}", f.display()));
        }
    }
    long.sort();
    long.dedup();
    against(&long, LONG_FNS, "functions over 150 lines");
}

#[test]
fn no_import_circles_in_a_crate() {
    let found = circles();
    println!("import circles: {}", found.len());
    for c in &found {
        println!("  {c}");
    }
    assert!(
        found.is_empty(),
        "import circles among the files of a crate (move what both sides use to a module \
         both import, or to the lower one): {found:#?}"
    );
}

#[test]
fn crates_use_only_the_layers_below_them() {
    let mut bad = Vec::new();
    for (krate, dir, banned) in LAYERS {
        let files = rust_files(&root().join(dir));
        assert!(
            !files.is_empty(),
            "{dir} ({krate}) holds no Rust file: moved?"
        );
        for f in files {
            let code = code_only(&read(&f));
            for b in banned.iter().copied().flatten() {
                if code.contains(&format!("{b}::")) || code.contains(&format!("use {b}")) {
                    bad.push(format!("{} ({krate}) uses {b}", f.display()));
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "a crate uses a crate above it or a sibling host: {bad:#?}"
    );
}

#[test]
fn path_attributes_name_modules_after_their_files() {
    let mut bad = Vec::new();
    for f in all_files() {
        for (path, module) in misnamed_path_modules(&read(&f)) {
            bad.push(format!("{}: #[path = {path:?}] mod {module}", f.display()));
        }
    }
    assert!(
        bad.is_empty(),
        "a #[path] names a module against its file (move the file where Rust looks for the \
         module, or name the module after the file): {bad:#?}"
    );
}

#[test]
fn concept_names_are_defined_once() {
    let mut seen: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for f in src_files() {
        for (kind, name) in defined_items(&code_only(&read(&f))) {
            if let Some(n) = UNIQUE_NAMES.iter().find(|n| **n == name) {
                seen.entry(n)
                    .or_default()
                    .push(format!("{}: {kind} {name}", f.display()));
            }
        }
    }
    let twice: Vec<&Vec<String>> = seen.values().filter(|d| d.len() > 1).collect();
    assert!(
        twice.is_empty(),
        "a concept name is defined more than once (rename what is not that concept): {twice:#?}"
    );
}

#[test]
fn the_checks_see_what_they_check() {
    assert!(all_files().len() > 100, "the workspace's files are found");
    let code = code_only("fn a() {\n let s = \"}\"; // }\n let c = '}';\n}\n");
    assert!(
        !code.contains('}') || code.matches('}').count() == 1,
        "{code}"
    );
    let long = format!("fn big() {{\n{}}}\n", "x;\n".repeat(MAX_FN_LINES));
    assert_eq!(
        long_functions(&long),
        vec![("big".to_owned(), MAX_FN_LINES + 2)]
    );
    let edges = BTreeMap::from([
        ("a".to_owned(), BTreeSet::from(["b".to_owned()])),
        ("b".to_owned(), BTreeSet::from(["a".to_owned()])),
        ("c".to_owned(), BTreeSet::from(["a".to_owned()])),
    ]);
    assert_eq!(
        strongly_connected(&edges),
        vec![vec!["a".to_owned(), "b".to_owned()], vec!["c".to_owned()]]
    );
    // A circle through a folder's door (`a/mod.rs` re-exports `b`'s item) and across folders;
    // the module and its parts are no circle.
    let krate = Crate::new(
        [
            (
                "lib.rs",
                "",
                "mod a; mod c; pub struct Root; fn f() { a::go(); }",
            ),
            (
                "a/mod.rs",
                "a",
                "mod b; pub(crate) use b::{B, go};\nuse crate::Root;",
            ),
            (
                "a/b.rs",
                "a::b",
                "use crate::{c::{self}, Root};\nfn g() { c::C::new(); }",
            ),
            ("c.rs", "c", "use super::a::B as Bee; pub struct C;"),
        ]
        .map(|(f, m, c)| (PathBuf::from(f), m.to_owned(), c.to_owned()))
        .to_vec(),
    );
    let edges = krate.edges();
    let to = |f: &str| {
        edges[Path::new(f)]
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(to("a/b.rs"), ["c.rs"]);
    assert_eq!(to("c.rs"), ["a/b.rs"]);
    assert!(to("lib.rs").is_empty() && to("a/mod.rs").is_empty());
    let paths = "#[cfg(test)]\n#[path = \"text_tests.rs\"]\nmod tests;\n\
                 #[path = \"common/formats.rs\"]\nmod formats;\n\
                 #[path = \"loop.rs\"]\npub(crate) mod closed_loop;\n";
    assert_eq!(
        misnamed_path_modules(paths),
        [
            ("text_tests.rs".to_owned(), "tests".to_owned()),
            ("loop.rs".to_owned(), "closed_loop".to_owned())
        ]
    );
    let code =
        code_only("pub struct Verdict;\npub(crate) fn shorten() {}\nlet s = \"fn NodeRef\";\n");
    assert_eq!(
        defined_items(&code),
        [
            ("struct".to_owned(), "Verdict".to_owned()),
            ("fn".to_owned(), "shorten".to_owned())
        ]
    );
}
