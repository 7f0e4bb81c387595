//! Text cut to a length and put on one line, for labels, previews, transcripts and reasons.

/// `s` cut to its first `max` characters with `…` after the cut, or `s` whole when it is not
/// longer. The `…` is not counted: a cut text has `max + 1` characters (see [`fit`] for a hard
/// budget). Characters, not bytes: a cut never splits one.
pub fn shorten(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((at, _)) => {
            let mut out = String::with_capacity(at + '…'.len_utf8());
            out.push_str(&s[..at]);
            out.push('…');
            out
        }
        None => s.to_owned(),
    }
}

/// `s` in at most `budget` characters, `…` included: `s` whole when it fits, else [`shorten`]
/// to `budget - 1`.
pub fn fit(s: &str, budget: usize) -> String {
    if s.chars().nth(budget).is_none() {
        s.to_owned()
    } else {
        shorten(s, budget.saturating_sub(1))
    }
}

/// Collapses runs of whitespace into one space, trimmed (for one-line snippets).
pub fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shorten_keeps_max_chars_and_adds_an_ellipsis() {
        assert_eq!(shorten("abc", 3), "abc");
        assert_eq!(shorten("abcd", 3), "abc…");
        assert_eq!(shorten("aé→bc", 3), "aé→…");
        assert_eq!(shorten("ab", 0), "…");
        assert_eq!(shorten("", 0), "");
    }

    #[test]
    fn fit_counts_the_ellipsis() {
        assert_eq!(fit("abc", 3), "abc");
        assert_eq!(fit("abcd", 3), "ab…");
        assert_eq!(fit("abcdefghijkl", 5).chars().count(), 5);
        assert_eq!(fit("ab", 0), "…");
    }

    #[test]
    fn one_line_collapses_whitespace() {
        assert_eq!(one_line(" a \n\t b "), "a b");
        assert_eq!(one_line("a  b\nc"), "a b c");
    }
}
