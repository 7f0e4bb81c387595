//! Placeholders in a prompt template: `{name}` (Python `str.format`, Mem0) and `$name`
//! (`string.Template`, MemBase). An update that drops one breaks the system that fills them,
//! so the optimizer rejects it and asks again.

use std::collections::BTreeSet;
use std::sync::OnceLock;

use regex::Regex;

fn pattern() -> Option<&'static Regex> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"\{([A-Za-z_][A-Za-z0-9_]*)\}|\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?").ok()
    })
    .as_ref()
}

/// The placeholders of `template`, written as they appear (`{question}`, `$context`).
/// JSON examples such as `{"facts": []}` are not placeholders.
///
/// # Complexity
/// O(length of the template).
pub fn placeholders(template: &str) -> BTreeSet<String> {
    let Some(re) = pattern() else {
        return BTreeSet::new();
    };
    re.captures_iter(template)
        .filter_map(|c| c.get(0).map(|m| m.as_str().to_owned()))
        .collect()
}

/// The placeholders of `old` that `new` lacks, sorted.
pub fn dropped(old: &str, new: &str) -> Vec<String> {
    let kept = placeholders(new);
    placeholders(old)
        .into_iter()
        .filter(|p| !kept.contains(p))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_both_styles_and_skips_json() {
        let t = "Q: {question}\nMemories: $context\nReturn {\"facts\": []} ${user}";
        let got: Vec<String> = placeholders(t).into_iter().collect();
        assert_eq!(got, ["$context", "${user}", "{question}"]);
    }

    #[test]
    fn dropped_lists_what_is_missing() {
        assert_eq!(
            dropped("a {question} $context", "a {question}"),
            ["$context"]
        );
        assert!(dropped("a {question}", "b {question} {extra}").is_empty());
    }
}
