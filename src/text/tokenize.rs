//! Lower-cased ASCII word tokens, with their byte offsets.

/// Which characters make up a word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Word {
    /// `[a-z0-9]+`: `_` separates (conversation text; `user_name` is two words).
    Alnum,
    /// `[a-z0-9_]+`, as `re.findall(r"[a-z0-9_]+", text.lower())` on ASCII text: identifiers
    /// stay whole (search and attribution over trace text).
    AlnumUnderscore,
}

impl Word {
    fn has(self, b: u8) -> bool {
        b.is_ascii_alphanumeric() || (self == Word::AlnumUnderscore && b == b'_')
    }
}

/// The words of `text`, lower-cased, each with its byte offset in `text`. Other characters
/// (including all non-ASCII ones) separate words.
///
/// # Complexity
/// O(len).
///
/// # Example
/// ```
/// use memtrace::text::{tokenize, Word};
/// let t: Vec<_> = tokenize("Hi user_name!", Word::AlnumUnderscore).collect();
/// assert_eq!(t, [(0, "hi".to_owned()), (3, "user_name".to_owned())]);
/// ```
pub fn tokenize(text: &str, word: Word) -> impl Iterator<Item = (usize, String)> + '_ {
    let bytes = text.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < bytes.len() && !word.has(bytes[i]) {
            i += 1;
        }
        if i >= bytes.len() {
            return None;
        }
        let start = i;
        while i < bytes.len() && word.has(bytes[i]) {
            i += 1;
        }
        // Both ends sit next to ASCII bytes, so they are char boundaries.
        text.get(start..i).map(|w| (start, w.to_ascii_lowercase()))
    })
}

/// The words of `text` alone, lower-cased (see [`tokenize`]).
pub fn tokens(text: &str, word: Word) -> impl Iterator<Item = String> + '_ {
    tokenize(text, word).map(|(_, w)| w)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn underscore_joins_only_when_asked() {
        let text = "Über café: user_name ID42, x";
        let words = |w| tokens(text, w).collect::<Vec<_>>();
        assert_eq!(
            words(Word::Alnum),
            ["ber", "caf", "user", "name", "id42", "x"]
        );
        assert_eq!(
            words(Word::AlnumUnderscore),
            ["ber", "caf", "user_name", "id42", "x"]
        );
        let spans: Vec<_> = tokenize(text, Word::AlnumUnderscore).collect();
        assert!(spans
            .iter()
            .all(|(at, w)| text[*at..].to_ascii_lowercase().starts_with(w.as_str())));
    }
}
