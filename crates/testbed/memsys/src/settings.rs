//! The optimizable settings ([`memtrace::optimize::settings`]) on the reference memory system:
//! their values in a [`Config`], and a [`Config`] with new values applied.

use std::collections::BTreeMap;

use memtrace::optimize::settings::{spec, SettingKind, SIMILAR_K, SPECS, TOP_K};

use crate::Config;

/// The current value of each setting in `names` (unknown names are left out).
pub fn values(cfg: &Config, names: &[String]) -> BTreeMap<String, i64> {
    names
        .iter()
        .filter_map(|n| get(cfg, n).map(|v| (n.clone(), v)))
        .collect()
}

fn get(cfg: &Config, name: &str) -> Option<i64> {
    let v = match name {
        TOP_K => cfg.top_k,
        SIMILAR_K => cfg.similar_k,
        _ => return None,
    };
    i64::try_from(v).ok()
}

/// `cfg` with `values` applied, each clamped to its kind's range.
///
/// # Errors
/// A name no setting has.
pub fn apply(cfg: &Config, values: &BTreeMap<String, i64>) -> Result<Config, String> {
    let mut out = cfg.clone();
    for (name, &v) in values {
        let Some(spec) = spec(name) else {
            return Err(format!(
                "`{name}` is no setting of the memory system (known: {})",
                SPECS.map(|s| s.name).join(", ")
            ));
        };
        let SettingKind::Integer { min, max } = spec.kind;
        let v = usize::try_from(v.clamp(min, max)).unwrap_or(1);
        match spec.name {
            TOP_K => out.top_k = v,
            SIMILAR_K => out.similar_k = v,
            _ => {}
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apply_clamps_and_refuses_unknown_names() {
        let cfg = Config::default();
        let out = apply(&cfg, &BTreeMap::from([(TOP_K.to_owned(), 99)])).unwrap();
        assert_eq!(out.top_k, 50);
        assert_eq!(values(&out, &[TOP_K.into(), "nope".into()]).len(), 1);
        assert!(apply(&cfg, &BTreeMap::from([("nope".to_owned(), 1)]))
            .unwrap_err()
            .contains("top_k"));
    }
}
