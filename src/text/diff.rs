//! Text diffs (the `similar` crate): a unified line diff, as a prompt version stores its change
//! from its parent.

/// A unified line diff of two values of `name`, headed `name (old)` and `name (new)`.
pub fn unified(name: &str, old: &str, new: &str) -> String {
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .header(&format!("{name} (old)"), &format!("{name} (new)"))
        .to_string()
}
