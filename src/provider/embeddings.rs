//! OpenAI-compatible embeddings (`POST {base}/embeddings`), for dense retrieval start points.

use serde_json::{json, Value};

use super::config::ProviderConfig;
use super::http::HttpRequest;
use super::{ProviderError, Usage};

/// One vector per input, in input order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Embeddings {
    pub vectors: Vec<Vec<f32>>,
    pub usage: Usage,
    pub model: String,
}

/// Builds the request embedding `inputs` with the configured model.
pub fn build_embed(cfg: &ProviderConfig, inputs: &[String]) -> HttpRequest {
    super::openai::post_json(
        cfg,
        "embeddings",
        &json!({"model": cfg.model, "input": inputs}),
    )
}

/// Parses a 2xx reply; vectors are put back in input order by their `index`.
///
/// # Errors
/// [`ProviderError::BadResponse`] when the body is not an embeddings list, or the number of
/// vectors differs from `expected`.
#[allow(clippy::cast_possible_truncation)] // f64 → f32 is the point: vectors are stored as f32
pub fn parse_embed(body: &str, expected: usize) -> Result<Embeddings, ProviderError> {
    let bad = |m: String| ProviderError::BadResponse(m);
    let v: Value = serde_json::from_str(body)
        .map_err(|e| bad(format!("embeddings reply is not JSON: {e}")))?;
    let data = v
        .get("data")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("no `data` array in the embeddings reply".into()))?;
    let mut rows: Vec<(u64, Vec<f32>)> = Vec::with_capacity(data.len());
    for (i, d) in data.iter().enumerate() {
        let vector = d
            .get("embedding")
            .and_then(Value::as_array)
            .ok_or_else(|| bad(format!("`data[{i}].embedding` is not an array")))?
            .iter()
            .map(|x| x.as_f64().map(|f| f as f32))
            .collect::<Option<Vec<f32>>>()
            .ok_or_else(|| bad(format!("`data[{i}].embedding` holds a non-number")))?;
        let index = d.get("index").and_then(Value::as_u64).unwrap_or(i as u64);
        rows.push((index, vector));
    }
    if rows.len() != expected {
        return Err(bad(format!(
            "asked for {expected} embeddings, got {}",
            rows.len()
        )));
    }
    rows.sort_by_key(|(i, _)| *i);
    let usage = Usage {
        input_tokens: v
            .pointer("/usage/prompt_tokens")
            .and_then(Value::as_u64)
            .unwrap_or(0),
        output_tokens: 0,
    };
    let model = v
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    Ok(Embeddings {
        vectors: rows.into_iter().map(|(_, v)| v).collect(),
        usage,
        model,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::config::ApiKind;

    #[test]
    fn builds_and_parses_in_input_order() {
        let cfg = ProviderConfig::new(ApiKind::OpenAi, "emb", None);
        let req = build_embed(&cfg, &["a".to_owned(), "b".to_owned()]);
        assert_eq!(req.url, "https://api.openai.com/v1/embeddings");
        assert!(req.header("authorization").is_none());
        let body: Value = serde_json::from_str(&req.body).unwrap();
        assert_eq!(body, json!({"model": "emb", "input": ["a", "b"]}));
        let reply = r#"{"model":"emb","data":[{"index":1,"embedding":[0.5,1]},{"index":0,"embedding":[2,3]}],
                        "usage":{"prompt_tokens":4}}"#;
        let e = parse_embed(reply, 2).unwrap();
        assert_eq!(e.vectors, vec![vec![2.0, 3.0], vec![0.5, 1.0]]);
        assert_eq!(e.usage.input_tokens, 4);
        assert!(
            matches!(parse_embed(reply, 3), Err(ProviderError::BadResponse(m)) if m.contains("asked for 3"))
        );
    }
}
