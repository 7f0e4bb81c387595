//! A light suffix-stripping stemmer, enough for a paraphrase that only changes a word's ending.

/// Stems a lower-cased token: `painting`, `painted`, `paints` → `paint`; `parties` → `party`.
/// Short words and `-ss` words stay as they are.
pub fn stem(token: &str) -> String {
    let t = token;
    for (suffix, min) in [
        ("ies", 5),
        ("ing", 6),
        ("ed", 5),
        ("es", 5),
        ("ly", 5),
        ("s", 4),
    ] {
        if t.len() >= min && t.ends_with(suffix) && !t.ends_with("ss") {
            let base = &t[..t.len() - suffix.len()];
            return if suffix == "ies" {
                format!("{base}y")
            } else {
                base.to_owned()
            };
        }
    }
    t.to_owned()
}

#[cfg(test)]
mod tests {
    use super::stem;

    #[test]
    fn endings_meet() {
        for w in ["painting", "painted", "paints", "paint"] {
            assert_eq!(stem(w), "paint", "{w}");
        }
        assert_eq!(stem("parties"), "party");
        assert_eq!(stem("class"), "class");
        assert_eq!(stem("is"), "is");
    }
}
