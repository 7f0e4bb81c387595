//! Token usage and cost: a per-model price table the user can edit (JSON), and a ledger that
//! adds up usage per model.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::Usage;

/// The price of one model, in US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Price {
    pub input_usd_per_mtok: f64,
    pub output_usd_per_mtok: f64,
}

/// Prices by model name. Edit it as JSON: `{"gpt-4o-mini": {"input_usd_per_mtok": 0.15, …}}`.
/// A model is looked up by exact name, then by the longest listed prefix (so
/// `gpt-4o-mini-2024-07-18` finds `gpt-4o-mini`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct PriceTable(pub BTreeMap<String, Price>);

impl PriceTable {
    /// A starting table with a few public list prices (USD per million tokens, late 2025).
    /// They go stale: the user edits the table; local models cost nothing and are absent.
    pub fn builtin() -> Self {
        let rows: [(&str, f64, f64); 6] = [
            ("gpt-4o", 2.5, 10.0),
            ("gpt-4o-mini", 0.15, 0.6),
            ("gpt-4.1-mini", 0.4, 1.6),
            ("claude-3-5-haiku", 0.8, 4.0),
            ("claude-sonnet-4", 3.0, 15.0),
            ("gemini-2.0-flash", 0.1, 0.4),
        ];
        Self(
            rows.into_iter()
                .map(|(m, i, o)| {
                    (
                        m.to_owned(),
                        Price {
                            input_usd_per_mtok: i,
                            output_usd_per_mtok: o,
                        },
                    )
                })
                .collect(),
        )
    }

    /// Reads a table from JSON.
    ///
    /// # Errors
    /// The JSON path and reason when the text is not a `{model: {input_usd_per_mtok,
    /// output_usd_per_mtok}}` object.
    pub fn from_json(text: &str) -> Result<Self, String> {
        let de = &mut serde_json::Deserializer::from_str(text);
        serde_path_to_error::deserialize(de)
            .map_err(|e| format!("price table at `{}`: {}", e.path(), e.inner()))
    }

    /// The price of a model: exact name, else the longest listed prefix.
    ///
    /// # Complexity
    /// O(m) string comparisons for m listed models.
    pub fn price(&self, model: &str) -> Option<Price> {
        if let Some(p) = self.0.get(model) {
            return Some(*p);
        }
        self.0
            .iter()
            .filter(|(name, _)| model.starts_with(name.as_str()))
            .max_by_key(|(name, _)| name.len())
            .map(|(_, p)| *p)
    }

    /// The cost of some usage of one model; `None` when the model has no price.
    pub fn cost_usd(&self, model: &str, usage: Usage) -> Option<f64> {
        let p = self.price(model)?;
        Some(
            (usage.input_tokens as f64 * p.input_usd_per_mtok
                + usage.output_tokens as f64 * p.output_usd_per_mtok)
                / 1e6,
        )
    }
}

/// Usage added up per model.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct UsageLedger {
    pub by_model: BTreeMap<String, Usage>,
}

impl UsageLedger {
    /// Adds one reply's usage.
    pub fn add(&mut self, model: &str, usage: Usage) {
        *self.by_model.entry(model.to_owned()).or_default() += usage;
    }

    /// All models together.
    pub fn total(&self) -> Usage {
        let mut t = Usage::default();
        for u in self.by_model.values() {
            t += *u;
        }
        t
    }

    /// The priced cost and the models that have no price (their tokens are not in the sum).
    pub fn cost_usd(&self, prices: &PriceTable) -> (f64, Vec<String>) {
        let mut sum = 0.0;
        let mut unpriced = Vec::new();
        for (model, usage) in &self.by_model {
            match prices.cost_usd(model, *usage) {
                Some(c) => sum += c,
                None => unpriced.push(model.clone()),
            }
        }
        (sum, unpriced)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prices_by_exact_then_longest_prefix() {
        let t = PriceTable::builtin();
        let mini = t.price("gpt-4o-mini-2024-07-18").unwrap();
        assert!((mini.input_usd_per_mtok - 0.15).abs() < 1e-12);
        assert!((t.price("gpt-4o-2024").unwrap().input_usd_per_mtok - 2.5).abs() < 1e-12);
        assert!(t.price("llama3").is_none());
    }

    #[test]
    fn ledger_costs_and_lists_unpriced() {
        let t = PriceTable::from_json(
            r#"{"m": {"input_usd_per_mtok": 2.0, "output_usd_per_mtok": 10.0}}"#,
        )
        .unwrap();
        let mut l = UsageLedger::default();
        l.add(
            "m",
            Usage {
                input_tokens: 1_000_000,
                output_tokens: 0,
            },
        );
        l.add(
            "m",
            Usage {
                input_tokens: 500_000,
                output_tokens: 100_000,
            },
        );
        l.add(
            "local",
            Usage {
                input_tokens: 9,
                output_tokens: 9,
            },
        );
        let (cost, unpriced) = l.cost_usd(&t);
        assert!((cost - 4.0).abs() < 1e-9, "{cost}");
        assert_eq!(unpriced, vec!["local".to_owned()]);
        assert_eq!(
            l.total(),
            Usage {
                input_tokens: 1_500_009,
                output_tokens: 100_009
            }
        );
    }

    #[test]
    fn bad_table_names_the_path() {
        let err = PriceTable::from_json(r#"{"m": {"input_usd_per_mtok": "x"}}"#).unwrap_err();
        assert!(err.contains("m.input_usd_per_mtok"), "{err}");
    }
}
