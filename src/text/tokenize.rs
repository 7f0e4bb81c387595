//! Lower-cased word tokens by Unicode rules, with their byte offsets: letters and digits of any
//! script make words; Chinese and Japanese text, written without spaces, gives character bigrams.

/// Which characters make up a word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Word {
    /// Letters and digits: `_` separates (conversation text; `user_name` is two words).
    Alnum,
    /// Letters, digits and `_`, as `re.findall(r"\w+", text.lower())`: identifiers stay whole
    /// (search and attribution over trace text).
    AlnumUnderscore,
}

/// What a character is to the tokenizer.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Gap,
    /// A letter or digit of a script that separates words by spaces (Latin, Cyrillic, Hangul, …).
    Letter,
    /// Han, Hiragana or Katakana: no spaces between words, so runs become bigrams.
    Ideograph,
}

impl Word {
    fn class(self, c: char) -> Class {
        if c.is_ascii() {
            return if c.is_ascii_alphanumeric() || (self == Word::AlnumUnderscore && c == '_') {
                Class::Letter
            } else {
                Class::Gap
            };
        }
        if is_ideograph(c) {
            Class::Ideograph
        } else if c.is_alphanumeric() {
            Class::Letter
        } else {
            Class::Gap
        }
    }
}

/// Han ideographs (with extensions and compatibility forms), Hiragana and Katakana.
fn is_ideograph(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF | 0x31F0..=0x31FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF
        | 0xF900..=0xFAFF | 0xFF66..=0xFF9F | 0x20000..=0x3134F)
}

/// The words of `text`, lower-cased, each with its byte offset in `text`. A word is a run of
/// letters and digits of any script (`München` is one word, lower-cased `münchen`); a run of
/// Chinese or Japanese characters gives its overlapping character bigrams (`記憶体` → `記憶`,
/// `憶体`; one character alone is its own token). Other characters separate words.
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
    let mut chars = text.char_indices().peekable();
    let ideograph =
        move |c: Option<(usize, char)>| c.is_some_and(|(_, c)| word.class(c) == Class::Ideograph);
    std::iter::from_fn(move || loop {
        let (at, c) = chars.next()?;
        match word.class(c) {
            Class::Gap => {}
            Class::Ideograph => {
                let Some(&(_, n)) = chars.peek().filter(|&&n| ideograph(Some(n))) else {
                    // A lone character (the end of a run was taken by the bigram before it).
                    return Some((at, c.to_string()));
                };
                // The second character starts the next bigram, or ends the run here.
                if !ideograph(chars.clone().nth(1)) {
                    chars.next();
                }
                return Some((at, [c, n].iter().collect()));
            }
            Class::Letter => {
                let mut end = at + c.len_utf8();
                while let Some(&(i, ch)) = chars.peek() {
                    if word.class(ch) != Class::Letter {
                        break;
                    }
                    end = i + ch.len_utf8();
                    chars.next();
                }
                return Some((at, lower(&text[at..end])));
            }
        }
    })
}

fn lower(w: &str) -> String {
    if w.is_ascii() {
        w.to_ascii_lowercase()
    } else {
        w.to_lowercase()
    }
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
            ["über", "café", "user", "name", "id42", "x"]
        );
        assert_eq!(
            words(Word::AlnumUnderscore),
            ["über", "café", "user_name", "id42", "x"]
        );
        let spans: Vec<_> = tokenize(text, Word::AlnumUnderscore).collect();
        assert!(spans
            .iter()
            .all(|(at, w)| text[*at..].to_lowercase().starts_with(w.as_str())));
    }

    #[test]
    fn german_words_stay_whole() {
        let t: Vec<_> = tokens("Sie zog nach MÜNCHEN, in die Straße.", Word::Alnum).collect();
        assert_eq!(t, ["sie", "zog", "nach", "münchen", "in", "die", "straße"]);
    }

    #[test]
    fn chinese_and_japanese_give_bigrams() {
        let t: Vec<_> = tokenize("她去了北京。猫", Word::Alnum).collect();
        let words: Vec<&str> = t.iter().map(|(_, w)| w.as_str()).collect();
        assert_eq!(words, ["她去", "去了", "了北", "北京", "猫"]);
        assert!(t
            .iter()
            .all(|(at, w)| "她去了北京。猫"[*at..].starts_with(w.as_str())));
        let jp: Vec<_> = tokens("東京へ行きました", Word::Alnum).collect();
        assert_eq!(jp.first().map(String::as_str), Some("東京"));
        assert_eq!(jp.len(), 7);
        // Mixed: Latin words and a bigram run, and Korean (spaced) words whole.
        let mixed: Vec<_> = tokens("Mem0 记忆 test 서울에 갔다", Word::Alnum).collect();
        assert_eq!(mixed, ["mem0", "记忆", "test", "서울에", "갔다"]);
    }
}
