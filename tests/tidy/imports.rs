//! Reading a file's imports as a reader does: every `use` item with its groups, nested paths,
//! `self`, `super::super`, aliases and globs, and every qualified path in the code
//! (`crate::a::f()`, `super::b::C`, `m::g()` for a module `m` in scope), each with the inline
//! module it stands in. Reads code with comments and literals blanked ([`super::code_only`]).

/// A token of code: a word (identifier, keyword, number), `::`, or one other character.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Token {
    Word(String),
    Sym(char),
    Path,
}

fn tokens(code: &str) -> Vec<Token> {
    let b: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < b.len() && (b[i].is_alphanumeric() || b[i] == '_') {
                i += 1;
            }
            let word: String = b[start..i].iter().collect();
            // `r#type` is the word `type`.
            if word == "r"
                && b.get(i) == Some(&'#')
                && b.get(i + 1).is_some_and(|c| c.is_alphabetic())
            {
                i += 1;
                continue;
            }
            out.push(Token::Word(word));
        } else if c == ':' && b.get(i + 1) == Some(&':') {
            out.push(Token::Path);
            i += 2;
        } else {
            if !c.is_whitespace() {
                out.push(Token::Sym(c));
            }
            i += 1;
        }
    }
    out
}

fn word(t: Option<&Token>) -> Option<&str> {
    match t {
        Some(Token::Word(w)) => Some(w),
        _ => None,
    }
}

/// One name a `use` item brings in: the path as written (`["super", "judged", "answers_of"]`),
/// the name it binds (`None` for a glob, `Some("_")` for `as _`), whether the item is visible
/// outside its module (`pub`, `pub(crate)`, …: a re-export), and the inline modules it stands in
/// (`["tests"]` inside `mod tests { … }`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Import {
    pub scope: Vec<String>,
    pub path: Vec<String>,
    pub name: Option<String>,
    pub public: bool,
}

/// What a file says about other modules: its imports, its qualified paths in code (scope,
/// path), and how often each word appears outside `use` items (to tell a re-export from an
/// import the file's own code uses).
#[derive(Debug, Default)]
pub struct FileImports {
    pub imports: Vec<Import>,
    pub paths: Vec<(Vec<String>, Vec<String>)>,
    pub words: std::collections::BTreeMap<String, usize>,
    pub defined: std::collections::BTreeSet<String>,
}

/// The keywords that define a named item.
const ITEM_KINDS: [&str; 9] = [
    "struct",
    "enum",
    "union",
    "trait",
    "type",
    "fn",
    "const",
    "static",
    "macro_rules",
];

/// Reads `code` (comments and literals blanked).
pub fn read_imports(code: &str) -> FileImports {
    let toks = tokens(code);
    let mut out = FileImports::default();
    // Inline modules open: (name, the brace depth inside them).
    let mut scope: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < toks.len() {
        match &toks[i] {
            Token::Sym('{') => {
                depth += 1;
                i += 1;
            }
            Token::Sym('}') => {
                if scope.last().is_some_and(|(_, d)| *d == depth) {
                    scope.pop();
                }
                depth = depth.saturating_sub(1);
                i += 1;
            }
            Token::Word(w) if w == "mod" => {
                if let (Some(name), Some(Token::Sym('{'))) =
                    (word(toks.get(i + 1)), toks.get(i + 2))
                {
                    scope.push((name.to_owned(), depth + 1));
                    depth += 1;
                    i += 3;
                } else {
                    i += 1;
                }
            }
            Token::Word(w) if w == "use" && toks.get(i + 1) != Some(&Token::Sym('<')) => {
                let public = is_public(&toks[..i]);
                let names: Vec<String> = scope.iter().map(|(n, _)| n.clone()).collect();
                let mut found = Vec::new();
                i = use_tree(&toks, i + 1, &[], &mut found);
                for (path, name) in found {
                    out.imports.push(Import {
                        scope: names.clone(),
                        path,
                        name,
                        public,
                    });
                }
                while i < toks.len() && toks[i] != Token::Sym(';') {
                    i += 1;
                }
            }
            Token::Word(w) => {
                if scope.is_empty() && ITEM_KINDS.contains(&w.as_str()) {
                    // `macro_rules! name`
                    let at = if toks.get(i + 1) == Some(&Token::Sym('!')) {
                        i + 2
                    } else {
                        i + 1
                    };
                    if let Some(name) = word(toks.get(at)) {
                        out.defined.insert(name.to_owned());
                    }
                }
                *out.words.entry(w.clone()).or_default() += 1;
                let starts = i == 0 || !matches!(toks[i - 1], Token::Path | Token::Sym('.'));
                if starts && toks.get(i + 1) == Some(&Token::Path) {
                    let mut path = vec![w.clone()];
                    let mut j = i + 1;
                    while toks.get(j) == Some(&Token::Path) {
                        let Some(next) = word(toks.get(j + 1)) else {
                            break;
                        };
                        path.push(next.to_owned());
                        j += 2;
                    }
                    if path.len() > 1 {
                        out.paths
                            .push((scope.iter().map(|(n, _)| n.clone()).collect(), path));
                    }
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    out
}

/// Whether the tokens before a `use` make it visible outside its module: `pub`, `pub(crate)`,
/// `pub(super)`, `pub(in a::b)`.
fn is_public(before: &[Token]) -> bool {
    match before.last() {
        Some(Token::Word(w)) => w == "pub",
        Some(Token::Sym(')')) => {
            let open = before.iter().rposition(|t| *t == Token::Sym('('));
            open.is_some_and(|o| o > 0 && word(before.get(o - 1)) == Some("pub"))
        }
        _ => false,
    }
}

/// Reads one use tree from `toks[i..]` below `prefix` into `out` as (path, bound name); returns
/// where it stopped.
fn use_tree(
    toks: &[Token],
    mut i: usize,
    prefix: &[String],
    out: &mut Vec<(Vec<String>, Option<String>)>,
) -> usize {
    let mut path = prefix.to_vec();
    if toks.get(i) == Some(&Token::Path) {
        // `::std::x`: an extern crate, written as such.
        path.push("::".to_owned());
        i += 1;
    }
    loop {
        match toks.get(i) {
            Some(Token::Word(w)) => {
                path.push(w.clone());
                i += 1;
                if toks.get(i) == Some(&Token::Path) {
                    i += 1;
                    continue;
                }
                if path.last().is_some_and(|l| l == "self") {
                    path.pop();
                }
                let mut name = path.last().cloned();
                if word(toks.get(i)) == Some("as") {
                    name = word(toks.get(i + 1)).map(str::to_owned);
                    i += 2;
                }
                out.push((path, name));
                return i;
            }
            Some(Token::Sym('*')) => {
                out.push((path, None));
                return i + 1;
            }
            Some(Token::Sym('{')) => {
                i += 1;
                while i < toks.len() && toks[i] != Token::Sym('}') {
                    let before = i;
                    i = use_tree(toks, i, &path, out);
                    // Past the comma, or past what could not be read.
                    if toks.get(i) == Some(&Token::Sym(',')) || i == before {
                        i += 1;
                    }
                }
                return i + 1;
            }
            _ => return i,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn imports(code: &str) -> Vec<(String, Option<String>, bool)> {
        read_imports(code)
            .imports
            .into_iter()
            .map(|i| {
                let scope: String = i.scope.iter().map(|s| s.clone() + "/").collect();
                (scope + &i.path.join("::"), i.name, i.public)
            })
            .collect()
    }

    #[test]
    fn groups_nested_paths_aliases_and_globs_are_read() {
        let code = "use super::{a, b::{self, c as d}};\n\
                    pub(crate) use crate::{x::{y, z::*}, w};\n\
                    use super::super::q;\n\
                    pub use self::m::N as _;\n\
                    use super::{\n    e,\n    f,\n};\n\
                    #[cfg(test)]\nmod tests {\n    use super::*;\n}\n\
                    use ::std::fmt;\n";
        let s =
            |p: &str, n: Option<&str>, public: bool| (p.to_owned(), n.map(str::to_owned), public);
        assert_eq!(
            imports(code),
            [
                s("super::a", Some("a"), false),
                s("super::b", Some("b"), false),
                s("super::b::c", Some("d"), false),
                s("crate::x::y", Some("y"), true),
                s("crate::x::z", None, true),
                s("crate::w", Some("w"), true),
                s("super::super::q", Some("q"), false),
                s("self::m::N", Some("_"), true),
                s("super::e", Some("e"), false),
                s("super::f", Some("f"), false),
                s("tests/super", None, false),
                s("::::std::fmt", Some("fmt"), false),
            ]
        );
    }

    #[test]
    fn qualified_paths_in_code_are_read_with_their_scope() {
        let code = "fn f() { crate::a::b(x); v.iter().map(Vec::<u8>::new); }\n\
                    mod tests { fn g() { super::super::c::D::new(); } }\n";
        let f = read_imports(code);
        let p = |scope: &[&str], path: &[&str]| {
            let own = |s: &[&str]| s.iter().map(|w| (*w).to_owned()).collect::<Vec<_>>();
            (own(scope), own(path))
        };
        assert_eq!(
            f.paths,
            [
                p(&[], &["crate", "a", "b"]),
                p(&["tests"], &["super", "super", "c", "D", "new"]),
            ]
        );
    }
}
