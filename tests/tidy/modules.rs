//! One crate's module tree and which of its files each file imports: every `use` item and
//! qualified path resolved to the file that defines what it names, through the re-exports on
//! the way (`pub(crate) use infer::first_producer;` in `roles/mod.rs` sends an import of
//! `roles::first_producer` on to `roles/infer.rs`): a module's door is not its room. Only a
//! module's re-export of its own parts is followed; a name a file takes from a peer
//! (`smartcomment::Parts`, itself re-exported from `parts`) is an import of that peer, as a
//! reader sees it. A pure re-export is no import of the file that writes it. A module and its own parts (`roles/mod.rs` and
//! `roles/infer.rs`, `lib.rs` and every file) are a tree, not peers: a part uses what its
//! module declares and the module calls its parts, so imports between a file and the files
//! of its own submodules are not counted; imports between any two other files of the crate
//! are, across folders too.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::imports::{read_imports, FileImports, Import};

/// How many re-exports a path is followed through before it is taken as where it stands.
const MAX_HOPS: usize = 16;

/// A crate: its files (relative to the workspace), each with its module path (`a::b`, `""`
/// for the root) and what it imports.
pub struct Crate {
    files: BTreeMap<PathBuf, (Vec<String>, FileImports)>,
    modules: BTreeMap<Vec<String>, Vec<PathBuf>>,
}

fn segments(module: &str) -> Vec<String> {
    module
        .split("::")
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

impl Crate {
    /// A crate of `files`: (file, module path, code with comments and literals blanked).
    pub fn new(files: Vec<(PathBuf, String, String)>) -> Self {
        let mut out = Crate {
            files: BTreeMap::new(),
            modules: BTreeMap::new(),
        };
        for (file, module, code) in files {
            let module = segments(&module);
            out.modules
                .entry(module.clone())
                .or_default()
                .push(file.clone());
            out.files.insert(file, (module, read_imports(&code)));
        }
        out
    }

    /// The files of the crate each file imports (not itself).
    pub fn edges(&self) -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
        let mut out = BTreeMap::new();
        for (file, (_, info)) in &self.files {
            let mut to = BTreeSet::new();
            for imp in &info.imports {
                let re_export = imp.public
                    && imp.scope.is_empty()
                    && imp
                        .name
                        .as_ref()
                        .is_none_or(|n| !info.words.contains_key(n));
                if re_export {
                    continue;
                }
                let Some(path) = self.absolute(file, &imp.scope, &imp.path, 0) else {
                    continue;
                };
                // A module named by its binding is imported where the code uses it
                // (`m::f()`, read as a qualified path); a glob takes the module whole.
                let whole_module = self.modules.contains_key(&path);
                if whole_module && imp.name.is_some() {
                    continue;
                }
                to.extend(self.resolve(&path, 0));
            }
            for (scope, path) in &info.paths {
                if let Some(path) = self.absolute(file, scope, path, 0) {
                    to.extend(self.resolve(&path, 0));
                }
            }
            to.remove(file);
            let own = &self.files[file].0;
            to.retain(|t| {
                let other = &self.files[t].0;
                !(other.starts_with(own) || own.starts_with(other))
            });
            out.insert(file.clone(), to);
        }
        out
    }

    /// `path` as written in `file` (inside the inline modules `scope`), from the crate's root;
    /// `None` for a path outside the crate (`std::…`, `serde::…`) or a local item's
    /// (`Self::new`, an enum's variant).
    fn absolute(
        &self,
        file: &Path,
        scope: &[String],
        path: &[String],
        hops: usize,
    ) -> Option<Vec<String>> {
        let (module, info) = self.files.get(file)?;
        let mut here: Vec<String> = module.iter().chain(scope).cloned().collect();
        let (first, rest) = path.split_first()?;
        match first.as_str() {
            "crate" => Some(rest.to_vec()),
            "self" => {
                here.extend_from_slice(rest);
                Some(here)
            }
            "super" => {
                let mut rest = path;
                while rest.first().is_some_and(|s| s == "super") {
                    here.pop()?;
                    rest = &rest[1..];
                }
                if rest.first().is_some_and(|s| s == "self") {
                    rest = &rest[1..];
                }
                here.extend_from_slice(rest);
                Some(here)
            }
            name => {
                let mut child = here.clone();
                child.push(name.to_owned());
                if self.modules.contains_key(&child) {
                    child.extend_from_slice(rest);
                    return Some(child);
                }
                if hops > MAX_HOPS {
                    return None;
                }
                let bound = info.imports.iter().find(|i| {
                    i.scope == scope && i.name.as_deref() == Some(name) && i.path != path
                })?;
                let mut out = self.absolute(file, &bound.scope, &bound.path, hops + 1)?;
                out.extend_from_slice(rest);
                Some(out)
            }
        }
    }

    /// The file that defines what the crate-rooted `path` names (a module: its file).
    fn resolve(&self, path: &[String], hops: usize) -> Option<PathBuf> {
        self.resolve_with(path, hops, false)
    }

    /// [`Crate::resolve`]; with `across`, a re-export of another module's item is followed to
    /// that module too (what the door check needs: a door that re-exports a room is no door).
    fn resolve_with(&self, path: &[String], hops: usize, across: bool) -> Option<PathBuf> {
        let k = (0..=path.len())
            .rev()
            .find(|k| self.modules.contains_key(&path[..*k]))?;
        let files = &self.modules[&path[..k]];
        let Some(name) = path.get(k) else {
            return files.first().cloned();
        };
        let rest = &path[k + 1..];
        if hops < MAX_HOPS {
            for f in files {
                let info = &self.files[f].1;
                if info.defined.contains(name) {
                    return Some(f.clone());
                }
                let top = |i: &&Import| i.scope.is_empty();
                if let Some(bound) = info
                    .imports
                    .iter()
                    .filter(top)
                    .find(|i| i.name.as_ref() == Some(name))
                {
                    // Re-exported (or imported and seen from below): where it comes from,
                    // when that is a part of this module.
                    let mut to = self.absolute(f, &[], &bound.path, 0)?;
                    if !across && !to.starts_with(&path[..k]) {
                        return Some(f.clone());
                    }
                    to.extend_from_slice(rest);
                    return self.resolve_with(&to, hops + 1, across);
                }
                for glob in info.imports.iter().filter(top).filter(|i| i.name.is_none()) {
                    let Some(mut to) = self.absolute(f, &[], &glob.path, 0) else {
                        continue;
                    };
                    if !across && !to.starts_with(&path[..k]) {
                        continue;
                    }
                    if self.names(&to, name) {
                        to.push(name.clone());
                        to.extend_from_slice(rest);
                        return self.resolve_with(&to, hops + 1, across);
                    }
                }
            }
        }
        files
            .iter()
            .find(|f| self.files[*f].1.defined.contains(name))
            .or(files.first())
            .cloned()
    }

    /// Whether `module` defines or imports `name` (for a glob).
    fn names(&self, module: &[String], name: &str) -> bool {
        let mut child = module.to_vec();
        child.push(name.to_owned());
        self.modules.contains_key(&child)
            || self.modules.get(module).into_iter().flatten().any(|f| {
                let info = &self.files[f].1;
                info.defined.contains(name)
                    || info
                        .imports
                        .iter()
                        .any(|i| i.scope.is_empty() && i.name.as_deref() == Some(name))
            })
    }
}

impl Crate {
    /// The module path of the file that defines what the crate-rooted `path` names (`["model"]`
    /// for `model::Trace`, also when the root or another module re-exports it as `Trace`);
    /// `None` outside the crate.
    pub fn module_of(&self, path: &[String]) -> Option<Vec<String>> {
        let file = self.resolve_with(path, 0, true)?;
        Some(self.files[&file].0.clone())
    }
}
