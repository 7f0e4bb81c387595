//! The text of a variable as search, windows and renders see it, and char/byte offset helpers.

use crate::model::{pyrepr, NodeRecord};

/// The value as a person reads it: a Python string literal without quotes and escapes,
/// anything else (JSON, lists, dicts) as written.
pub fn var_text(rec: &NodeRecord) -> String {
    pyrepr::display(&rec.value)
}

/// The byte offset of char number `chars` in `s` (or `s.len()` past the end).
pub fn byte_at_char(s: &str, chars: usize) -> usize {
    s.char_indices().nth(chars).map_or(s.len(), |(b, _)| b)
}

/// The char number of byte offset `byte` in `s` (`byte` must be a char boundary or past the end).
pub fn char_at_byte(s: &str, byte: usize) -> usize {
    s.get(..byte.min(s.len())).map_or(0, |p| p.chars().count())
}

/// Up to `max_chars` chars of `s` starting at char `start`.
pub fn char_window(s: &str, start: usize, max_chars: usize) -> &str {
    let a = byte_at_char(s, start);
    let rest = &s[a..];
    let b = byte_at_char(rest, max_chars);
    &rest[..b]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::xml_escape;

    #[test]
    fn offsets_round_trip_on_multibyte_text() {
        let s = "aé→b";
        assert_eq!(byte_at_char(s, 2), 3);
        assert_eq!(char_at_byte(s, 3), 2);
        assert_eq!(char_window(s, 1, 2), "é→");
        assert_eq!(byte_at_char(s, 99), s.len());
    }

    #[test]
    fn escapes_markup() {
        assert_eq!(xml_escape("a<b & \"c\">"), "a&lt;b &amp; &quot;c&quot;&gt;");
    }
}
