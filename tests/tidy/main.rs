//! Style checks of the whole workspace, run as a test (in the manner of rust-analyzer's tidy):
//! layering across crates, no import circles inside a folder, the 600-line file bound, the
//! 150-line function bound, no `#[path]` naming a module against its file, and one definition
//! per concept name. The allow-lists name what was already there; they may only shrink
//! (a listed item that is fixed fails the test until it is taken off the list). Native only:
//! it reads the source tree. `cargo test --workspace` (scripts/test) runs it.

#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail by panicking

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

mod code;

use code::{code_only, defined_items, long_functions, misnamed_path_modules};

const MAX_FILE_LINES: usize = 600;
const MAX_FN_LINES: usize = 150;

/// Files over [`MAX_FILE_LINES`] when the check was written.
const LONG_FILES: &[&str] = &[];

/// Functions (`file:name`) over [`MAX_FN_LINES`] when the check was written.
const LONG_FNS: &[&str] = &[
    "crates/memtrace-cli/tests/optimize_cli.rs:the_loop_runs_resumes_and_exports_with_every_request_checked",
    "crates/memtrace-memsys/src/amem/mod.rs:construct",
    "crates/memtrace-memsys/src/evaluate.rs:evaluate",
    "crates/memtrace-memsys/src/evermemos/mod.rs:segment",
    "crates/memtrace-memsys/src/evermemos/profile.rs:update_profiles",
    "crates/memtrace-memsys/src/pipeline.rs:step",
    "crates/memtrace-memsys/src/random_shape/run.rs:construct",
    "crates/memtrace-web/src/app.rs:app",
    "crates/memtrace-web/src/components/draw.rs:draw",
    "crates/memtrace-web/src/components/graph.rs:graph",
    "crates/memtrace-web/src/components/llm_run.rs:run_panel",
    "crates/memtrace-web/src/components/optimize.rs:optimize_view",
    "crates/memtrace-web/src/components/provider.rs:provider_form",
    "src/attribution/infoflow/follow.rs:follow",
    "src/format/validate.rs:validate",
    "src/layout/mod.rs:layout",
    "tests/algo_checks/graphs.rs:memory",
];

/// Import circles among the files of one folder when the check was written (sorted members).
const CIRCLES: &[&str] = &[];

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
    // The reference memory systems sit above the core and the recorder, below every host (pure,
    // so no transport either).
    ("memtrace_memsys", "crates/memtrace-memsys/src", &[HOSTS]),
    (
        "memtrace_web",
        "crates/memtrace-web/src",
        &[&[
            "memtrace_cli",
            "memtrace_wasm",
            "memtrace_py",
            "memtrace_native",
        ]],
    ),
    (
        "memtrace_cli",
        "crates/memtrace-cli/src",
        &[&["memtrace_web", "memtrace_wasm", "memtrace_py"]],
    ),
    (
        "memtrace_wasm",
        "crates/memtrace-wasm/src",
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
        "crates/memtrace-native/src",
        &[&[
            "memtrace_web",
            "memtrace_cli",
            "memtrace_wasm",
            "memtrace_py",
        ]],
    ),
    (
        "memtrace_py",
        "crates/memtrace-py/src",
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

/// Every source file of the workspace's crates (not generated, fuzz or vendored code).
fn all_files() -> Vec<PathBuf> {
    let mut out = rust_files(&root().join("src"));
    out.extend(rust_files(&root().join("tests")));
    let Ok(crates) = fs::read_dir(root().join("crates")) else {
        return out;
    };
    let mut dirs: Vec<PathBuf> = crates.flatten().map(|e| e.path()).collect();
    dirs.sort();
    for c in dirs {
        out.extend(rust_files(&c.join("src")));
        out.extend(rust_files(&c.join("tests")));
    }
    out
}

fn read(p: &Path) -> String {
    fs::read_to_string(root().join(p)).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The sibling modules (files of the same folder) that `file` imports.
fn sibling_imports(file: &Path, code: &str, siblings: &BTreeSet<String>) -> BTreeSet<String> {
    let module = module_path(file);
    let parent = module.rsplit_once("::").map_or("", |(p, _)| p).to_owned();
    let own = module.rsplit("::").next().unwrap_or_default().to_owned();
    let mut out = BTreeSet::new();
    let words: Vec<&str> = code
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
        .collect();
    for w in words {
        let path = if let Some(rest) = w.strip_prefix("super::") {
            // `super` of a mod.rs file is the folder's parent; of a sibling file, the folder.
            if file.ends_with("mod.rs") || file.ends_with("lib.rs") {
                continue;
            }
            rest.to_owned()
        } else if let Some(rest) = w.strip_prefix("crate::") {
            match rest.strip_prefix(&format!("{parent}::")) {
                Some(r) if !parent.is_empty() => r.to_owned(),
                _ if parent.is_empty() => rest.to_owned(),
                _ => continue,
            }
        } else {
            continue;
        };
        let first = path.split("::").next().unwrap_or_default();
        if first != own && siblings.contains(first) {
            out.insert(first.to_owned());
        }
    }
    out
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

/// The import circles among the files of each folder of each crate's `src`: strongly
/// connected groups of more than one file, as `folder: a, b, c`.
fn circles() -> Vec<String> {
    let mut folders: BTreeMap<PathBuf, Vec<PathBuf>> = BTreeMap::new();
    for f in all_files() {
        if f.iter().any(|p| p == "src") {
            folders
                .entry(f.parent().unwrap_or(Path::new("")).to_path_buf())
                .or_default()
                .push(f);
        }
    }
    let mut out = Vec::new();
    for (dir, files) in folders {
        let name_of = |f: &Path| {
            module_path(f)
                .rsplit("::")
                .next()
                .unwrap_or_default()
                .to_owned()
        };
        // A folder's own mod.rs is its parent module, not a sibling.
        let members: Vec<&PathBuf> = files
            .iter()
            .filter(|f| !f.ends_with("mod.rs") && !f.ends_with("lib.rs") && !f.ends_with("main.rs"))
            .collect();
        let names: BTreeSet<String> = members.iter().map(|f| name_of(f)).collect();
        let edges: BTreeMap<String, BTreeSet<String>> = members
            .iter()
            .map(|f| (name_of(f), sibling_imports(f, &code_only(&read(f)), &names)))
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
fn no_import_circles_inside_a_folder() {
    against(
        &circles(),
        CIRCLES,
        "import circles among the files of a folder",
    );
}

#[test]
fn crates_use_only_the_layers_below_them() {
    let mut bad = Vec::new();
    for (krate, dir, banned) in LAYERS {
        for f in rust_files(&root().join(dir)) {
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
