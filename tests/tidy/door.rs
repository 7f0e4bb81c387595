//! What a host crate takes from the core (`memtrace::…`): each core module it reaches, by the
//! module that defines what it names (`memtrace::Trace`, re-exported at the root, is `model`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::imports::read_imports;
use super::modules::Crate;
use super::{code_only, crates_in, read, root, rust_files, FIXTURES};

/// The door into the core: the one module of `memtrace` a host should import.
const DOOR: &str = "session";

/// The core modules each host imports besides the door (space-separated) when the check was
/// written (by the module that defines what it names). The lists must shrink toward [`DOOR`]
/// alone: a host translates events into calls of `memtrace::session` and its results into
/// pixels, text or objects. A module a host no longer imports fails the test until it is taken
/// off its list.
const HOST_IMPORTS: &[(&str, &str)] = &[
    (
        "crates/hosts/cli/src",
        "algo attribution format model optimize provider report story text",
    ),
    // The Python package goes through the door alone: `session::Handle` (load, info, roles,
    // story, exports), `session::VerdictRow`, the session's method and provider options.
    ("crates/hosts/py/src", ""),
    (
        "crates/hosts/wasm/src",
        "algo attribution format model optimize provider",
    ),
    (
        "crates/hosts/web/src",
        "algo attribution format layout model optimize provider story text",
    ),
];

/// The core's name in the hosts' code.
const CORE: &str = "memtrace";

/// The core's top-level modules `files` (path, code with comments and literals blanked) import,
/// each with the files that import it; `(root)` for what the core's `lib.rs` defines itself.
pub fn core_modules(
    files: &[(PathBuf, String)],
    core: &Crate,
) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (file, code) in files {
        let info = read_imports(code);
        // `use memtrace as m;` names the core `m` too.
        let mut names = BTreeSet::from([CORE.to_owned()]);
        names.extend(
            info.imports
                .iter()
                .filter(|i| i.path == [CORE])
                .filter_map(|i| i.name.clone()),
        );
        let written = info
            .imports
            .iter()
            .map(|i| &i.path)
            .chain(info.paths.iter().map(|(_, p)| p));
        for path in written {
            let path = path.strip_prefix(&["::".to_owned()]).unwrap_or(path);
            let Some((first, rest)) = path.split_first() else {
                continue;
            };
            if rest.is_empty() || !names.contains(first) {
                continue;
            }
            let module = core
                .module_of(rest)
                .and_then(|m| m.first().cloned())
                .unwrap_or_else(|| "(root)".to_owned());
            out.entry(module)
                .or_default()
                .insert(file.display().to_string());
        }
    }
    out
}

/// What the host crate in `dir` (its `src`) imports from the core: the modules beyond
/// `allowed` (as `dir: memtrace::module (files)`), the modules of `allowed` it no longer
/// imports, and every module it imports.
fn door_breaches(dir: &Path, allowed: &[&str], core: &Crate) -> [Vec<String>; 3] {
    let files: Vec<(PathBuf, String)> = rust_files(&root().join(dir))
        .into_iter()
        .map(|file| {
            let blanked = code_only(&read(&file));
            (file, blanked)
        })
        .collect();
    let found = core_modules(&files, core);
    let breaches = found
        .iter()
        .filter(|(m, _)| *m != DOOR && !allowed.contains(&m.as_str()))
        .map(|(m, files)| {
            let files: Vec<&str> = files.iter().map(String::as_str).collect();
            format!("{}: memtrace::{m} ({})", dir.display(), files.join(", "))
        })
        .collect();
    let stale = allowed
        .iter()
        .filter(|m| !found.contains_key(**m))
        .map(|m| format!("{}: memtrace::{m}", dir.display()))
        .collect();
    [breaches, stale, found.into_keys().collect()]
}

fn core() -> Crate {
    crates_in(Path::new("src"))
        .into_iter()
        .find(|(d, _)| d == Path::new("src"))
        .map(|(_, c)| c)
        .expect("the core's src")
}

#[test]
fn hosts_import_only_the_door() {
    let core = core();
    let (mut breaches, mut stale) = (Vec::new(), Vec::new());
    println!("core modules each host imports (the door: memtrace::{DOOR}):");
    for (dir, allowed) in HOST_IMPORTS {
        let allowed: Vec<&str> = allowed.split_whitespace().collect();
        let [b, s, found] = door_breaches(Path::new(dir), &allowed, &core);
        println!("  {dir}: {} ({})", found.len(), found.join(", "));
        breaches.extend(b);
        stale.extend(s);
    }
    assert!(
        breaches.is_empty(),
        "a host imports a core module beyond its list (call it through memtrace::{DOOR}): \
         {breaches:#?}"
    );
    assert!(
        stale.is_empty(),
        "a host no longer imports a module on its list (take it off HOST_IMPORTS): {stale:#?}"
    );
}

#[test]
fn a_host_importing_past_the_door_is_reported() {
    let [breaches, ..] = door_breaches(
        Path::new(FIXTURES).join("bad_host/src").as_path(),
        &[],
        &core(),
    );
    assert_eq!(
        breaches,
        [format!(
            "{FIXTURES}/bad_host/src: memtrace::attribution ({FIXTURES}/bad_host/src/lib.rs)"
        )]
    );
}

#[test]
fn a_door_that_re_exports_a_room_is_no_door() {
    let file = |path: &str, module: &str, code: &str| {
        (PathBuf::from(path), module.to_owned(), code.to_owned())
    };
    let core = Crate::new(vec![
        file("src/lib.rs", "", "pub mod model;\npub mod session;\n"),
        file("src/model.rs", "model", "pub struct Trace;\n"),
        file(
            "src/session.rs",
            "session",
            "pub use crate::model::Trace;\npub struct Project;\n",
        ),
    ]);
    let host = vec![(
        PathBuf::from("host/src/lib.rs"),
        "use memtrace::session::{Project, Trace};\n".to_owned(),
    )];
    let found: Vec<String> = core_modules(&host, &core).into_keys().collect();
    assert_eq!(found, ["model", "session"]);
}
