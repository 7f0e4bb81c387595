//! Text helpers for the load path, which touches millions of fields: filling computed fields
//! without allocating when they already hold the value (a file written by smartcomment or
//! memtrace carries them), and case-insensitive matching without a lower-case copy.

/// Sets `dst` to the concatenation of `parts`, reusing its buffer; leaves it untouched (no
/// allocation) when it already holds exactly that.
///
/// # Example
/// ```
/// let mut s = String::from("a@1");
/// memtrace::util::strings::set_joined(&mut s, &["a", "@", "2"]);
/// assert_eq!(s, "a@2");
/// ```
pub fn set_joined(dst: &mut String, parts: &[&str]) {
    let same = dst.len() == parts.iter().map(|p| p.len()).sum::<usize>() && {
        let mut rest = dst.as_str();
        parts.iter().all(|p| match rest.strip_prefix(p) {
            Some(r) => {
                rest = r;
                true
            }
            None => false,
        })
    };
    if !same {
        dst.clear();
        for p in parts {
            dst.push_str(p);
        }
    }
}

/// The decimal digits of `n` (with a `-` when negative), written into `buf`.
///
/// # Example
/// ```
/// let mut buf = [0; 20];
/// assert_eq!(memtrace::util::strings::decimal(-405, &mut buf), "-405");
/// ```
pub fn decimal(n: i64, buf: &mut [u8; 20]) -> &str {
    let mut i = buf.len();
    let mut m = n.unsigned_abs();
    loop {
        i -= 1;
        buf[i] = b'0' + (m % 10) as u8;
        m /= 10;
        if m == 0 {
            break;
        }
    }
    if n < 0 {
        i -= 1;
        buf[i] = b'-';
    }
    std::str::from_utf8(&buf[i..]).unwrap_or_default()
}

/// True when `hay` contains `needle` (ASCII lower case) ignoring ASCII case: the same as
/// `hay.to_ascii_lowercase().contains(needle)`, without the copy.
///
/// # Example
/// ```
/// assert!(memtrace::util::strings::contains_ignore_ascii_case("LLM_Judge", "judge"));
/// ```
pub fn contains_ignore_ascii_case(hay: &str, needle: &str) -> bool {
    let (n, h) = (needle.as_bytes(), hay.as_bytes());
    let Some(&first) = n.first() else {
        return true;
    };
    let (lower, upper) = (first.to_ascii_lowercase(), first.to_ascii_uppercase());
    let Some(last) = h.len().checked_sub(n.len()) else {
        return false;
    };
    // A name is short: a plain scan beats memchr's setup there.
    if h.len() < 64 {
        return (0..=last).any(|at| {
            (h[at] == lower || h[at] == upper) && h[at..at + n.len()].eq_ignore_ascii_case(n)
        });
    }
    // Jump from one place the first byte matches (in either case) to the next, comparing the
    // rest only there.
    let mut from = 0;
    while let Some(k) = h
        .get(from..=last)
        .and_then(|rest| memchr::memchr2(lower, upper, rest))
    {
        let at = from + k;
        if h[at..at + n.len()].eq_ignore_ascii_case(n) {
            return true;
        }
        from = at + 1;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_matches_display_at_the_extremes() {
        let mut buf = [0; 20];
        for n in [0, 7, -1, 10, 1_000_000_007, i64::MAX, i64::MIN] {
            assert_eq!(decimal(n, &mut buf), n.to_string());
        }
    }

    #[test]
    fn contains_ignore_ascii_case_is_lowercase_then_contains() {
        for (hay, needle) in [
            ("QueryText", "query"),
            ("x", "query"),
            ("", ""),
            ("Ünïcode QUESTION", "question"),
            ("quer", "query"),
            ("qqQUERYx", "query"),
            ("a q", "query"),
            ("raw_fact_judge", "_judge"),
            ("Retrieval", "eval"),
        ] {
            assert_eq!(
                contains_ignore_ascii_case(hay, needle),
                hay.to_ascii_lowercase().contains(needle),
                "{hay:?} {needle:?}"
            );
        }
    }

    #[test]
    fn set_joined_replaces_only_a_different_value() {
        let mut s = String::from("ab:12");
        set_joined(&mut s, &["ab", ":", "12"]);
        assert_eq!(s, "ab:12");
        for parts in [&["ab", ":", "1"][..], &["a", "b:", "12", "3"], &[]] {
            set_joined(&mut s, parts);
            assert_eq!(s, parts.concat());
        }
    }
}
