//! The text of a JSON value.

use serde_json::Value;

/// The text of a JSON value: a string as it is, anything else serialized as JSON.
pub fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_as_they_are_the_rest_as_json() {
        assert_eq!(text_of(&Value::from("a \"b\"")), "a \"b\"");
        assert_eq!(
            text_of(&serde_json::json!({"k": [1, null]})),
            r#"{"k":[1,null]}"#
        );
        assert_eq!(text_of(&Value::Null), "null");
    }
}
