//! What a value is, read from its shape: text, or a vector, a number or an id that carries no
//! text. An op whose outputs are all textless (an embedding call, a scorer) cannot lose the
//! answer's words: it is never blamed for it.

use crate::model::{pyrepr, OpIx, Trace, VarIx};

/// True when a value carries no text a person would read: a number, a boolean, an id or a code
/// name (one token: [`is_token`]), a structure holding only those, or a vector (many numbers
/// beside a few short labels such as a model's name). An empty value or an empty list is not
/// textless: it is text an op could have written and did not.
pub fn is_textless(value: &str) -> bool {
    let raw = value.trim();
    if raw.is_empty() || raw == "null" || raw == "None" {
        return false;
    }
    let json = pyrepr::to_json(value);
    let (mut numbers, mut text) = (0usize, 0usize);
    count(&json, &mut numbers, &mut text);
    match &json {
        serde_json::Value::String(s) => is_token(s),
        serde_json::Value::Number(_) | serde_json::Value::Bool(_) => true,
        serde_json::Value::Null => false,
        _ => (numbers >= 8 && text <= 200) || (text == 0 && numbers > 0),
    }
}

/// One token that is no word: a number, an id or hash (digits among letters), a code name
/// (`extract_updates`, a router's next step). A plain word ("DELETE", "vegetarian") is text.
fn is_token(s: &str) -> bool {
    let s = s.trim();
    !s.is_empty() && s.parse::<f64>().is_ok()
        || (!s.is_empty()
            && !s.contains(char::is_whitespace)
            && s.contains(|c: char| c.is_ascii_digit() || c == '_' || c == '-'))
}

/// Numbers and ids, and the characters of strings that are words, in a JSON value.
fn count(v: &serde_json::Value, numbers: &mut usize, text: &mut usize) {
    match v {
        serde_json::Value::Number(_) => *numbers += 1,
        serde_json::Value::String(s) if is_token(s) => *numbers += 1,
        serde_json::Value::String(s) => *text += s.len(),
        serde_json::Value::Array(xs) => xs.iter().for_each(|x| count(x, numbers, text)),
        serde_json::Value::Object(m) => m.values().for_each(|x| count(x, numbers, text)),
        _ => {}
    }
}

/// An op that hands on no words to lose: it produced something, all of it textless or only the
/// marker a reader puts where a span captured no output (its status, a sentinel), and so did
/// every op of its name (an embedding call always returns vectors; a writer that returned only
/// an id once, having dropped the text, is still a writer of text).
pub fn hands_no_text(t: &Trace, op: OpIx) -> bool {
    let textless = |o: OpIx| {
        let mut out = t.flow.op_produced(o).peekable();
        out.peek().is_some()
            && out.all(|v| {
                let rec = t.var(v);
                matches!(rec.category.as_str(), "status" | "sentinel") || is_textless(&rec.value)
            })
    };
    let name = &t.op(op).op_name;
    textless(op)
        && (0..t.ops.len() as u32)
            .map(OpIx)
            .filter(|&o| &t.op(o).op_name == name)
            .all(textless)
}

/// True when a value holds prose: a string of two words or more (not a name, label or id).
pub fn is_prose(value: &str) -> bool {
    fn any(v: &serde_json::Value) -> bool {
        match v {
            serde_json::Value::String(s) => s.split_whitespace().nth(1).is_some(),
            serde_json::Value::Array(xs) => xs.iter().any(any),
            serde_json::Value::Object(m) => m.values().any(any),
            _ => false,
        }
    }
    any(&pyrepr::to_json(value))
}

/// An op that may have dropped a fact from what it read: it wrote prose of its own
/// ([`is_prose`]), or nothing at all where it could have (an empty list of facts). An entity
/// extractor writing names, a router writing its next step, an embedding call, a framework step
/// handing its state on ([`copies_inputs`]) did not author text.
pub fn may_author(t: &Trace, op: OpIx) -> bool {
    t.flow.op_produced(op).any(|v| {
        let rec = t.var(v);
        !matches!(rec.category.as_str(), "status" | "sentinel")
            && ((is_prose(&rec.value) && !copies_inputs(t, op, v))
                || (!is_textless(&rec.value) && !has_words(&rec.value)))
    })
}

/// True when some string of the value holds a letter.
fn has_words(value: &str) -> bool {
    fn any(v: &serde_json::Value) -> bool {
        match v {
            serde_json::Value::String(s) => s.contains(char::is_alphabetic),
            serde_json::Value::Array(xs) => xs.iter().any(any),
            serde_json::Value::Object(m) => m.values().any(any),
            _ => false,
        }
    }
    any(&pyrepr::to_json(value))
}

/// True when `out` is most of what `op` read, copied: nine in ten of its word shingles are in
/// the inputs, and it is at least four fifths as long as the longest input (a framework's state
/// handed on, not an extractor quoting sentences of its prompt).
pub fn copies_inputs(t: &Trace, op: OpIx, out: VarIx) -> bool {
    let inputs = &t.flow.op_inputs[op.get()];
    let longest = inputs
        .iter()
        .map(|&v| t.var(v).value.len())
        .max()
        .unwrap_or(0);
    if t.var(out).value.len() * 5 < longest * 4 {
        return false;
    }
    let read: std::collections::HashSet<u64> = inputs
        .iter()
        .flat_map(|&v| shingles(&t.var(v).value))
        .collect();
    let written = shingles(&t.var(out).value);
    let kept = written.iter().filter(|s| read.contains(s)).count();
    !written.is_empty() && kept * 10 >= written.len() * 9
}

/// The lower-cased words of a text.
pub fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Hashes of a text's runs of four words: a stretch copied from one value to another keeps them.
pub fn shingles(text: &str) -> Vec<u64> {
    use std::hash::{Hash, Hasher};
    words(text)
        .windows(4)
        .map(|s| {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            s.hash(&mut h);
            h.finish()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_numbers_and_ids_carry_no_text() {
        let embedding = format!(
            r#"{{"data":[{{"embedding":[{}],"object":"embedding"}}],"model":"text-embedding-3-small"}}"#,
            ["0.1"; 64].join(",")
        );
        for textless in [
            embedding.as_str(),
            "[0.25, -0.5, 0.125, 1.0, 0.0, 0.3, 0.2, 0.1]",
            "0.87",
            "42",
            "\"3f2c9a8e-77b1-4c1e-9d2a-0b6f1e2d3c4b\"",
            "extract_updates",
            r#"{"id": "70af3a07", "score": 0.82}"#,
        ] {
            assert!(is_textless(textless), "{textless}");
        }
        for text in [
            "Caroline went to a LGBTQ support group on 7 May 2023.",
            r#"{"memory": [{"id": "0", "text": "Adopted three dogs in 2020"}]}"#,
            r#"{"scores": [0.9, 0.1], "text": "a long answer with words in it"}"#,
            "Is vegetarian",
            "vegetarian",
            r#"{"event": "DELETE", "id": "3"}"#,
            r#"{"facts": []}"#,
            "",
        ] {
            assert!(!is_textless(text), "{text}");
        }
        assert!(is_prose(r#"{"memory": [{"text": "Adopted three dogs"}]}"#));
        assert!(!is_prose(
            r#"{"entities": [{"name": "Caroline"}, {"name": "Mel"}]}"#
        ));
    }
}
