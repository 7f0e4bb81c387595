//! Escaping text for HTML and XML (content and attribute values).

/// Escapes `&`, `<`, `>`, `"` and `'` (as `&#39;`, valid in both HTML and XML), so any text is
/// safe in element content and in single- or double-quoted attributes.
///
/// # Example
/// ```
/// assert_eq!(memtrace::text::escape_markup("a<b & 'c'"), "a&lt;b &amp; &#39;c&#39;");
/// ```
pub fn escape_markup(s: &str) -> String {
    escape(s, true)
}

/// Escapes `&`, `<`, `>` and `"` for XML text and double-quoted attributes (`'` stays as it is,
/// as the agents' XML views have always shown it).
///
/// # Example
/// ```
/// assert_eq!(memtrace::text::xml_escape("a<b & 'c'"), "a&lt;b &amp; 'c'");
/// ```
pub fn xml_escape(s: &str) -> String {
    escape(s, false)
}

fn escape(s: &str, apostrophe: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' if apostrophe => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}
