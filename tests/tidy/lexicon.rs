//! One lexicon: the English word lists the core reads text with live in `src/text/lexicon`, each
//! with what it is for. Attribution may name a single word (a key, a category) but holds no list
//! of them: two or more lowercase word literals side by side (`"not" | "never"`, `["day",
//! "days"]`) outside its tests is a list, and fails here unless it names the protocol of our own
//! agents (their tool names) or the model's own categories.

use super::{read, root, rust_files};

/// Lists attribution may hold, by file and first word: not English read from a trace, but names
/// memtrace itself defines.
const ALLOWED: &[&str] = &[
    // The graph-walking agent's own tools.
    "src/attribution/graphtrace/mod.rs: initialize",
    "src/attribution/agent.rs: finish_exploration",
    // memtrace's own method names.
    "src/attribution/methods.rs: infoflow",
    // The trace model's own categories for values that carry no information.
    "src/attribution/values.rs: status",
];

/// The string literals of `code` with the text before each and where each starts.
fn literals(code: &str) -> Vec<(usize, usize, String)> {
    let b: Vec<char> = code.chars().collect();
    let (mut out, mut i, mut after_last) = (Vec::new(), 0, 0);
    while i < b.len() {
        if b[i] == '/' && b.get(i + 1) == Some(&'/') {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
            continue;
        }
        if b[i] == '\'' && b.get(i + 2) == Some(&'\'') {
            i += 3;
            continue;
        }
        if b[i] != '"' {
            i += 1;
            continue;
        }
        let start = i;
        let mut s = String::new();
        i += 1;
        while i < b.len() && b[i] != '"' {
            if b[i] == '\\' {
                i += 1;
            }
            s.extend(b.get(i));
            i += 1;
        }
        out.push((after_last, start, s));
        i += 1;
        after_last = i;
    }
    out
}

/// Word lists in `code`: `(line, first word)` of each run of two or more lowercase word
/// literals joined by `|` or `,`.
pub fn word_lists(code: &str) -> Vec<(usize, String)> {
    let chars: Vec<char> = code.chars().collect();
    let is_word = |s: &str| {
        s.len() >= 2
            && s.chars()
                .all(|c| c.is_ascii_lowercase() || c == '_' || c == '-')
    };
    let lits = literals(code);
    let mut out: Vec<(usize, String)> = Vec::new();
    let mut last_line = 0;
    for pair in lits.windows(2) {
        let ((_, at, a), (gap_from, _, b)) = (&pair[0], &pair[1]);
        let between: String = chars[*gap_from..pair[1].1].iter().collect();
        let joined = matches!(between.trim(), "|" | ",");
        // JSON in a `json!` (`"type": "object", "required": [..]`) is keys and values, no list.
        let before = chars[..*at].iter().rev().find(|c| !c.is_whitespace());
        let after = chars[pair[1].1 + b.chars().count() + 2..]
            .iter()
            .find(|c| !c.is_whitespace());
        let json = before == Some(&':') || after == Some(&':');
        // Commas join a list only in brackets, not in a tuple's fields (`("mode", "string")`).
        let comma_in_tuple = between.trim() == "," && innermost_open(&chars[..*at]) != Some('[');
        if joined && !json && !comma_in_tuple && is_word(a) && is_word(b) {
            let line = chars[..*at].iter().filter(|&&c| c == '\n').count() + 1;
            if out.is_empty() || line > last_line + 1 {
                out.push((line, a.clone()));
            }
            last_line = line;
        }
    }
    out
}

/// The bracket `(` or `[` left open at the end of `code`.
fn innermost_open(code: &[char]) -> Option<char> {
    let mut depth = 0i32;
    for &c in code.iter().rev() {
        match c {
            ')' | ']' | '}' => depth += 1,
            '(' | '[' | '{' if depth > 0 => depth -= 1,
            '(' | '[' | '{' => return Some(c),
            _ => {}
        }
    }
    None
}

/// Word lists in attribution's files outside their tests, as `file: first word`.
fn attribution_lists() -> Vec<String> {
    let dir = root().join("src/attribution");
    let mut found = Vec::new();
    for f in rust_files(&dir) {
        if f.file_name().is_some_and(|n| n == "tests.rs") {
            continue;
        }
        let text = read(&f);
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        let rel = f.strip_prefix(root()).unwrap_or(&f).display().to_string();
        for (line, first) in word_lists(code) {
            let key = format!("{rel}: {first}");
            if !ALLOWED.contains(&key.as_str()) {
                found.push(format!("{key} (line {line})"));
            }
        }
    }
    found
}

#[test]
fn attribution_holds_no_word_list() {
    let found = attribution_lists();
    assert!(
        found.is_empty(),
        "word lists outside src/text/lexicon (move them there, with what they are for): {found:#?}"
    );
}

#[test]
fn the_lexicon_check_sees_a_list() {
    let code = "fn f(w: &str) -> bool {\n    // \"not\" | \"no\" in a comment\n    matches!(w, \"not\" | \"never\")\n}\nconst K: [&str; 2] = [\n    \"day\",\n    \"days\",\n];\nlet s = \"Hello\" | \"World\";\nlet k = m[\"id\"];\n";
    assert_eq!(
        word_lists(code),
        vec![(3, "not".to_owned()), (6, "day".to_owned())]
    );
}
