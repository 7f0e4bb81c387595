//! The gold answer a judge was given, found by the shape of its input rather than by a word
//! like "gold": a judge reads the question, the answer and one more item, and that item is the
//! gold answer. Items are the fields of a prompt written as `Label: value` (on lines or in one
//! paragraph) or the string values of a JSON object.

use serde_json::Value;

/// The one item of `text` that is neither the question nor the prediction, when `text` holds
/// both as items of its own and exactly one item more.
pub(super) fn third_item(text: &str, query: &str, prediction: &str) -> Option<String> {
    let (query, prediction) = (query.trim(), prediction.trim());
    if query.is_empty() || prediction.is_empty() || query == prediction {
        return None;
    }
    let items = match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(o)) => o
            .values()
            .filter_map(|v| v.as_str().map(|s| s.trim().to_owned()))
            .collect(),
        _ => fields(text),
    };
    let is = |item: &str, what: &str| item == what || item.trim_end_matches('.') == what;
    let holds = |what: &str| items.iter().filter(|i| is(i, what)).count() == 1;
    if !holds(query) || !holds(prediction) {
        return None;
    }
    let mut rest = items
        .iter()
        .filter(|i| !is(i, query) && !is(i, prediction) && !i.is_empty());
    let gold = rest.next()?;
    rest.next().is_none().then(|| {
        gold.strip_suffix('.')
            .filter(|g| !g.contains(['.', '?', '!']))
            .unwrap_or(gold)
            .to_owned()
    })
}

/// The values of `Label: value` fields: a label of one to four words starts the text, a line
/// or a sentence, and its value runs to the next label. Text before the first label (the
/// judge's instructions) is no field.
fn fields(text: &str) -> Vec<String> {
    let starts: Vec<(usize, usize)> = label_starts(text);
    starts
        .iter()
        .enumerate()
        .map(|(k, &(_, value))| {
            let end = starts.get(k + 1).map_or(text.len(), |&(label, _)| label);
            text[value..end].trim().to_owned()
        })
        .collect()
}

/// (label start, value start) of each field label in `text`.
fn label_starts(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for (colon, _) in text.match_indices(": ") {
        let before = &text[..colon];
        // The label runs back to the start, a line break or a sentence's end.
        let start = before
            .char_indices()
            .rev()
            .find(|&(i, c)| c == '\n' || (c == ' ' && before[..i].ends_with(['.', '?', '!'])))
            .map_or(0, |(i, c)| i + c.len_utf8());
        let label = before[start..].trim();
        let words = label.split_whitespace().count();
        let plain = label
            .chars()
            .all(|c| c.is_alphanumeric() || c == ' ' || c == '_' || c == '-');
        if (1..=4).contains(&words) && plain && out.last().is_none_or(|&(_, v)| v <= start) {
            out.push((start, colon + 2));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::third_item;

    const Q: &str = "What is the name of my cat?";
    const P: &str = "Your cat is named Mochi.";

    #[test]
    fn the_item_beside_question_and_answer_is_the_gold() {
        let one_line = format!("Grade the answer. Question: {Q} Gold: Miso. Answer: {P}");
        assert_eq!(third_item(&one_line, Q, P).as_deref(), Some("Miso"));
        let lines = format!("Question: {Q}\nReference answer: Miso\nGenerated answer: {P}");
        assert_eq!(third_item(&lines, Q, P).as_deref(), Some("Miso"));
        let json = serde_json::json!({"q": Q, "ref": "Miso", "a": P}).to_string();
        assert_eq!(third_item(&json, Q, P).as_deref(), Some("Miso"));
    }

    #[test]
    fn no_gold_without_exactly_one_more_item() {
        let two = format!("Question: {Q}\nHint: pets\nExpected: Miso\nAnswer: {P}");
        assert_eq!(third_item(&two, Q, P), None);
        let none = format!("Question: {Q}\nAnswer: {P}");
        assert_eq!(third_item(&none, Q, P), None);
        let no_answer = format!("Question: {Q}\nGold: Miso");
        assert_eq!(third_item(&no_answer, Q, P), None);
    }
}
