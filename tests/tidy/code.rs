//! Reading source text for the checks: code with comments and literals blanked, the long
//! functions and the items it defines, and the `#[path]` attributes of a file.

use std::path::Path;

use super::MAX_FN_LINES;

/// `text` with comments, string and char literals blanked (lines kept), so braces and `use`
/// paths are read from code only.
pub fn code_only(text: &str) -> String {
    let b: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let keep_newlines = |s: &[char], out: &mut String| {
        for &c in s {
            out.push(if c == '\n' { '\n' } else { ' ' });
        }
    };
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            let end = b[i..]
                .iter()
                .position(|&c| c == '\n')
                .map_or(b.len(), |n| i + n);
            keep_newlines(&b[i..end], &mut out);
            i = end;
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            let mut j = i;
            while j < b.len() {
                if b[j] == '/' && b.get(j + 1) == Some(&'*') {
                    depth += 1;
                    j += 2;
                } else if b[j] == '*' && b.get(j + 1) == Some(&'/') {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            keep_newlines(&b[i..j.min(b.len())], &mut out);
            i = j;
        } else if c == 'r'
            && (next == Some('#') || next == Some('"'))
            && !ident(b.get(i.wrapping_sub(1)))
        {
            let hashes = b[i + 1..].iter().take_while(|&&c| c == '#').count();
            if b.get(i + 1 + hashes) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            let close: String = std::iter::once('"')
                .chain(std::iter::repeat_n('#', hashes))
                .collect();
            let body_start = i + 2 + hashes;
            let rest: String = b[body_start..].iter().collect();
            let end = rest.find(&close).map_or(b.len(), |n| {
                body_start + rest[..n].chars().count() + close.len()
            });
            keep_newlines(&b[i..end], &mut out);
            i = end;
        } else if c == '"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != '"' {
                j += if b[j] == '\\' { 2 } else { 1 };
            }
            keep_newlines(&b[i..(j + 1).min(b.len())], &mut out);
            i = j + 1;
        } else if c == '\'' {
            // A char literal ('x', '\n', '\u{..}'), else a lifetime.
            let lit = if next == Some('\\') {
                b[i + 2..]
                    .iter()
                    .position(|&c| c == '\'')
                    .map(|n| i + 3 + n)
            } else if b.get(i + 2) == Some(&'\'') {
                Some(i + 3)
            } else {
                None
            };
            if let Some(end) = lit {
                keep_newlines(&b[i..end], &mut out);
                i = end;
            } else {
                out.push(c);
                i += 1;
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn ident(c: Option<&char>) -> bool {
    c.is_some_and(|c| c.is_alphanumeric() || *c == '_')
}

/// The functions of `code` longer than [`MAX_FN_LINES`]: (name, lines).
pub fn long_functions(code: &str) -> Vec<(String, usize)> {
    let lines: Vec<&str> = code.lines().collect();
    let mut out = Vec::new();
    for (n, line) in lines.iter().enumerate() {
        let Some(at) = line.find("fn ") else {
            continue;
        };
        if at > 0 && ident(line[..at].chars().last().as_ref()) {
            continue;
        }
        let name: String = line[at + 3..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() {
            continue;
        }
        // The body: from the first `{` after the signature (a `;` first means no body).
        let (mut depth, mut opened, mut end) = (0i32, false, None);
        'scan: for (m, l) in lines.iter().enumerate().skip(n) {
            let from = if m == n { at } else { 0 };
            for c in l[from..].chars() {
                match c {
                    ';' if !opened && depth == 0 => break 'scan,
                    '{' => {
                        depth += 1;
                        opened = true;
                    }
                    '}' => {
                        depth -= 1;
                        if opened && depth == 0 {
                            end = Some(m);
                            break 'scan;
                        }
                    }
                    _ => {}
                }
            }
        }
        if let Some(end) = end {
            let len = end - n + 1;
            if len > MAX_FN_LINES {
                out.push((name, len));
            }
        }
    }
    out
}

/// The `#[path = "…"]` attributes of `text` whose file stem is not the name of the module they
/// name: (path, module). Attributes between the two (`#[cfg(test)]`) and a visibility are
/// skipped; `r#` is dropped from the module's name.
pub fn misnamed_path_modules(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut lines = text.lines().map(str::trim);
    while let Some(line) = lines.next() {
        let Some(rest) = line.strip_prefix("#[path") else {
            continue;
        };
        let path: String = rest
            .trim_start_matches([' ', '='])
            .trim_start_matches('"')
            .chars()
            .take_while(|&c| c != '"')
            .collect();
        let Some(decl) = lines.by_ref().find(|l| !l.starts_with("#[")) else {
            break;
        };
        let decl = decl.strip_prefix("pub").map_or(decl, |d| {
            d.trim_start()
                .strip_prefix('(')
                .and_then(|d| d.split_once(')'))
                .map_or(d, |(_, d)| d)
                .trim_start()
        });
        let Some(name) = decl.strip_prefix("mod ") else {
            continue;
        };
        let name: String = name
            .trim()
            .trim_start_matches("r#")
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let stem = Path::new(&path)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        if stem != name {
            out.push((path, name));
        }
    }
    out
}

/// The items `code` defines: (kind, name) for each `struct`, `enum`, `union`, `trait`, `type`
/// and `fn` keyword followed by a name.
pub fn defined_items(code: &str) -> Vec<(String, String)> {
    const KINDS: [&str; 6] = ["struct", "enum", "union", "trait", "type", "fn"];
    let words: Vec<&str> = code
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    words
        .windows(2)
        .filter(|w| KINDS.contains(&w[0]))
        .map(|w| (w[0].to_owned(), w[1].to_owned()))
        .collect()
}
